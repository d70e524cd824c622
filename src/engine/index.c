/*
 * index.c -- open addressing with linear probing over (hash, index) slots,
 * FNV-1a hashes, load factor at most 1/2; entries in a dense array.
 * Entries are never removed (a run's history only grows).
 */
#include "engine/index.h"

#include <string.h>

#include "base/alloc.h"

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

void lil__imap_init(struct imap *m, const struct lil_env *env)
{
    memset(m, 0, sizeof(*m));
    m->env = env;
}

void lil__imap_free(struct imap *m)
{
    lil__free(m->env, m->slots);
    lil__free(m->env, m->entries);
    m->slots = NULL;
    m->entries = NULL;
    m->cap = m->n = m->n_alloc = 0;
}

/* The slot holding key, or the empty slot where it would go. */
static struct islot *probe(const struct imap *m, const void *key, size_t len,
                           uint32_t h)
{
    size_t i = h & (m->cap - 1);

    for (;;) {
        struct islot *s = &m->slots[i];
        if (!s->idx1)
            return s;
        if (s->hash == h) {
            const struct ientry *e = &m->entries[s->idx1 - 1];
            if (e->key_len == len && memcmp(e->key, key, len) == 0)
                return s;
        }
        i = (i + 1) & (m->cap - 1);
    }
}

struct ientry *lil__imap_find(const struct imap *m, const void *key, size_t len)
{
    struct islot *s;

    if (!m->cap)
        return NULL;
    s = probe(m, key, len, fnv1a(key, len));
    return s->idx1 ? &m->entries[s->idx1 - 1] : NULL;
}

static int grow_slots(struct imap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    struct islot *slots = lil__calloc(m->env, cap, sizeof(*slots));

    if (!slots)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        struct islot s = m->slots[i];
        if (s.idx1) {
            size_t j = s.hash & (cap - 1);
            while (slots[j].idx1)
                j = (j + 1) & (cap - 1);
            slots[j] = s;
        }
    }
    lil__free(m->env, m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

static int grow_entries(struct imap *m)
{
    size_t n = m->n_alloc ? m->n_alloc * 2 : 64;
    struct ientry *p;

    if (n > UINT32_MAX - 1)
        return -1;
    p = lil__realloc(m->env, m->entries, n * sizeof(*p));
    if (!p)
        return -1;
    m->entries = p;
    m->n_alloc = n;
    return 0;
}

struct ientry *lil__imap_upsert(struct imap *m, const void *key, size_t len)
{
    return lil__imap_upsert_keep(m, key, len, NULL, NULL);
}

struct ientry *lil__imap_upsert_keep(struct imap *m, const void *key, size_t len,
                                     imap_keep_fn keep, void *ud)
{
    uint32_t h = fnv1a(key, len);
    struct islot *s;
    struct ientry *e;

    if ((m->n + 1) * 2 > m->cap && grow_slots(m) != 0)
        return NULL;
    s = probe(m, key, len, h);
    if (s->idx1)
        return &m->entries[s->idx1 - 1];
    if (m->n == m->n_alloc && grow_entries(m) != 0)
        return NULL;
    if (keep && !(key = keep(ud, key, len)))
        return NULL;
    e = &m->entries[m->n];
    memset(e, 0, sizeof(*e));
    e->key = key;
    e->key_len = (uint32_t)len;
    e->hash = h;
    s->hash = h;
    s->idx1 = (uint32_t)++m->n;
    return e;
}
