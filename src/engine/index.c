/*
 * index.c -- open addressing with linear probing over (hash, index) slots,
 * FNV-1a hashes, load factor at most 1/2; entries in a dense array.
 * Entries are never removed (a run's history only grows).
 *
 * The open scan builds the whole index at once, so its arrays are mostly
 * fresh memory, and the first write to each page of it is a page fault.
 * Where a fault is dear (12-15 us under the development machine's
 * hypervisor, against about 1 us a page for faulting a range in one
 * madvise), those faults were the larger part of opening a 10,000-step
 * run.  So the arrays are faulted in ahead of use with MADV_POPULATE_WRITE:
 * a new slot array whole (it is all written at once), the entry array
 * one slice at a time as entries reach it, so that pages never used are
 * not faulted in either.
 * The advice changes no byte; where it is unknown (Linux before 5.14) it
 * fails and the pages fault one by one, as before.
 */
#include "engine/index.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/alloc.h"

#define SLICE ((size_t)64 * 1024) /* bytes of array faulted in at once */

/* Fault in the whole pages inside [from, to) with one system call. */
static void prefault(char *from, char *to)
{
#ifdef MADV_POPULATE_WRITE
    size_t page = (size_t)getpagesize();
    char *a = from + (page - (uintptr_t)from % page) % page;
    char *b = to - (uintptr_t)to % page;

    if (b > a)
        (void)madvise(a, (size_t)(b - a), MADV_POPULATE_WRITE);
#else
    (void)from;
    (void)to;
#endif
}

/* Fault in the slice of the entry array that starts at from. */
static void prefault_slice(const struct imap *m, char *from)
{
    char *limit = (char *)(m->entries + m->n_alloc);

    if (from < limit)
        prefault(from, (size_t)(limit - from) > SLICE ? from + SLICE : limit);
}

/* Entries are written in order: when entry e reaches a slice boundary of
 * the address space, fault in the slice after the boundary. */
static void prefault_ahead(const struct imap *m, struct ientry *e)
{
    char *end = (char *)(e + 1);
    char *edge = end - (uintptr_t)end % SLICE;

    if (edge >= (char *)e)
        prefault_slice(m, edge);
}

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

static int resize_slots(struct imap *m, size_t cap)
{
    struct islot *slots = NULL;

    if (cap <= SIZE_MAX / sizeof(*slots))
        slots = lil__malloc(m->env, cap * sizeof(*slots));
    if (!slots)
        return -1;
    if (cap * sizeof(*slots) >= SLICE)
        prefault((char *)slots, (char *)(slots + cap));
    memset(slots, 0, cap * sizeof(*slots));
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

static int grow_slots(struct imap *m)
{
    return resize_slots(m, m->cap ? m->cap * 2 : 64);
}

static int resize_entries(struct imap *m, size_t n)
{
    struct ientry *p;

    if (n > UINT32_MAX - 1 || n > SIZE_MAX / sizeof(*p))
        return -1;
    /* realloc, not malloc + copy: a large block is moved by remapping its
     * pages (mremap), which copies nothing and faults in no new page */
    p = lil__realloc(m->env, m->entries, n * sizeof(*p));
    if (!p)
        return -1;
    m->entries = p;
    m->n_alloc = n;
    if (n * sizeof(*p) >= SLICE) /* the new part, up to where prefault_ahead starts */
        prefault_slice(m, (char *)(p + m->n));
    return 0;
}

static int grow_entries(struct imap *m)
{
    return resize_entries(m, m->n_alloc ? m->n_alloc * 2 : 64);
}

int lil__imap_reserve(struct imap *m, size_t n)
{
    size_t cap = m->cap ? m->cap : 64;

    while (cap / 2 < n) {
        if (cap > SIZE_MAX / 4)
            return -1;
        cap *= 2;
    }
    if (cap > m->cap && resize_slots(m, cap) != 0)
        return -1;
    return n > m->n_alloc ? resize_entries(m, n) : 0;
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
    prefault_ahead(m, e);
    memset(e, 0, sizeof(*e));
    e->key = key;
    e->key_len = (uint32_t)len;
    e->hash = h;
    s->hash = h;
    s->idx1 = (uint32_t)++m->n;
    return e;
}
