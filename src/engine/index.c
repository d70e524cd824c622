/*
 * index.c -- open addressing with linear probing, FNV-1a hashes, load
 * factor at most 1/2.  Entries are never removed (a run's history only
 * grows), which keeps probing simple.
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

void lil__imap_init(struct imap *m, const struct lil_env *env, bool owns_keys)
{
    memset(m, 0, sizeof(*m));
    m->env = env;
    m->owns_keys = owns_keys;
}

void lil__imap_free(struct imap *m)
{
    if (m->owns_keys)
        for (size_t i = 0; i < m->cap; i++)
            lil__free(m->env, (void *)(uintptr_t)m->slots[i].key);
    lil__free(m->env, m->slots);
    m->slots = NULL;
    m->cap = m->n = 0;
}

static struct ientry *probe(struct ientry *slots, size_t cap, const void *key,
                            size_t len, uint32_t h)
{
    size_t i = h & (cap - 1);

    for (;;) {
        struct ientry *e = &slots[i];
        if (!e->key ||
            (e->hash == h && e->key_len == len && memcmp(e->key, key, len) == 0))
            return e;
        i = (i + 1) & (cap - 1);
    }
}

struct ientry *lil__imap_find(const struct imap *m, const void *key, size_t len)
{
    struct ientry *e;

    if (!m->cap)
        return NULL;
    e = probe(m->slots, m->cap, key, len, fnv1a(key, len));
    return e->key ? e : NULL;
}

static int grow(struct imap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    struct ientry *slots = lil__calloc(m->env, cap, sizeof(*slots));

    if (!slots)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        struct ientry *e = &m->slots[i];
        if (e->key)
            *probe(slots, cap, e->key, e->key_len, e->hash) = *e;
    }
    lil__free(m->env, m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

struct ientry *lil__imap_upsert(struct imap *m, const void *key, size_t len)
{
    uint32_t h = fnv1a(key, len);
    struct ientry *e;

    if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
        return NULL;
    e = probe(m->slots, m->cap, key, len, h);
    if (e->key)
        return e;
    memset(e, 0, sizeof(*e));
    e->key = key;
    if (m->owns_keys) {
        e->key = (const uint8_t *)lil__strndup(m->env, key, len);
        if (!e->key)
            return NULL;
    }
    e->key_len = (uint32_t)len;
    e->hash = h;
    m->n++;
    return e;
}
