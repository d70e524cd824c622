/*
 * space.c -- the in-memory store's spaces (store_mem.h): one per name, for
 * the life of the process, found through one list under one mutex; the
 * entries of runs and markers in a space, never freed while the process
 * lives (handles point at them).  The C allocator: spaces outlive envs.
 */
#include <stdlib.h>
#include <string.h>

#include "store/mem/store_mem.h"

static pthread_mutex_t spaces_mu = PTHREAD_MUTEX_INITIALIZER;
static struct mem_space *spaces;

static struct mem_space *space_new(const char *name)
{
    struct mem_space *sp = calloc(1, sizeof(*sp));

    if (!sp)
        return NULL;
    sp->name = strdup(name);
    if (!sp->name) {
        free(sp);
        return NULL;
    }
    pthread_mutex_init(&sp->mu, NULL);
    pthread_cond_init(&sp->left, NULL);
    return sp;
}

struct mem_space *lil__mem_space(const char *name)
{
    struct mem_space *sp;

    pthread_mutex_lock(&spaces_mu);
    for (sp = spaces; sp; sp = sp->next)
        if (strcmp(sp->name, name) == 0)
            break;
    if (!sp) {
        sp = space_new(name);
        if (sp) {
            sp->next = spaces;
            spaces = sp;
        }
    }
    pthread_mutex_unlock(&spaces_mu);
    return sp;
}

struct mem_run *lil__mem_run(struct mem_space *sp, const char *run_id, bool add)
{
    struct mem_run *r;

    for (r = sp->runs; r; r = r->next)
        if (strcmp(r->id, run_id) == 0)
            return r;
    if (!add)
        return NULL;
    r = calloc(1, sizeof(*r));
    if (r)
        r->id = strdup(run_id);
    if (r && !r->id) {
        free(r);
        r = NULL;
    }
    if (r) {
        r->next = sp->runs;
        sp->runs = r;
    }
    return r;
}

struct mem_marker *lil__mem_marker(struct mem_space *sp, const char *name)
{
    struct mem_marker *m;

    for (m = sp->markers; m; m = m->next)
        if (strcmp(m->name, name) == 0)
            return m;
    m = calloc(1, sizeof(*m));
    if (m)
        m->name = strdup(name);
    if (m && !m->name) {
        free(m);
        m = NULL;
    }
    if (m) {
        m->next = sp->markers;
        sp->markers = m;
    }
    return m;
}

static int reserve(struct mem_bytes *b, size_t n) /* capacity for n bytes */
{
    size_t cap = b->cap ? b->cap : 256;
    uint8_t *p;

    if (n <= b->cap)
        return 0;
    while (cap < n)
        cap *= 2;
    p = realloc(b->data, cap);
    if (!p)
        return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

int lil__mem_bytes_set(struct mem_bytes *b, const void *p, size_t n)
{
    if (reserve(b, n) != 0)
        return -1;
    if (n)
        memcpy(b->data, p, n);
    b->len = n;
    return 0;
}

int lil__mem_bytes_add(struct mem_bytes *b, const void *p, size_t n)
{
    if (n > SIZE_MAX - b->len || reserve(b, b->len + n) != 0)
        return -1;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

int lil__mem_bytes_more(struct mem_bytes *b, size_t more)
{
    if (more > SIZE_MAX - b->len)
        return -1;
    return reserve(b, b->len + more);
}
