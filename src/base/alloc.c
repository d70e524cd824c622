/*
 * alloc.c -- allocation through the env's allocator.
 *
 * Exported blocks carry a 32-byte header in front of the caller's bytes:
 * the free function and its ud, so lil_free() needs no env.  32 bytes keep
 * the caller's data aligned for any type.
 */
#include "base/alloc.h"

#include <stdint.h>
#include <string.h>

#include "base/env.h"

struct export_header {
    lil_free_fn free_fn;
    void *ud;
    uint64_t magic;
    uint64_t pad;
};

#define EXPORT_MAGIC 0x6c696c4578706f72ull /* "lilExpor" */

void *lil__malloc(const struct lil_env *env, size_t n)
{
    return env->malloc_fn(env->alloc_ud, n ? n : 1);
}

void *lil__calloc(const struct lil_env *env, size_t count, size_t size)
{
    void *p;

    if (size && count > SIZE_MAX / size)
        return NULL;
    p = lil__malloc(env, count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void *lil__realloc(const struct lil_env *env, void *p, size_t n)
{
    return env->realloc_fn(env->alloc_ud, p, n ? n : 1);
}

void lil__free(const struct lil_env *env, void *p)
{
    if (p)
        env->free_fn(env->alloc_ud, p);
}

char *lil__strndup(const struct lil_env *env, const char *s, size_t n)
{
    char *p = lil__malloc(env, n + 1);

    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

void *lil__grow(const struct lil_env *env, void *p, size_t *cap, size_t n, size_t size,
                size_t first)
{
    size_t want;
    void *q;

    if (n < *cap)
        return p;
    want = *cap ? *cap * 2 : first;
    if (want < *cap || size == 0 || want > SIZE_MAX / size)
        return NULL;
    q = lil__realloc(env, p, want * size);
    if (q)
        *cap = want;
    return q;
}

char *lil__strdup(const struct lil_env *env, const char *s)
{
    return lil__strndup(env, s, strlen(s));
}

void *lil__export_alloc(const struct lil_env *env, size_t len)
{
    struct export_header *h;

    if (len > SIZE_MAX - sizeof(*h) - 1)
        return NULL;
    h = lil__malloc(env, sizeof(*h) + len + 1);
    if (!h)
        return NULL;
    h->free_fn = env->free_fn;
    h->ud = env->alloc_ud;
    h->magic = EXPORT_MAGIC;
    h->pad = 0;
    ((char *)(h + 1))[len] = '\0';
    return h + 1;
}

void *lil__export_copy(const struct lil_env *env, const void *data, size_t len)
{
    void *p = lil__export_alloc(env, len);

    if (p && len)
        memcpy(p, data, len);
    return p;
}

void lil__export_free(void *p)
{
    struct export_header *h;

    if (!p)
        return;
    h = (struct export_header *)p - 1;
    if (h->magic != EXPORT_MAGIC)
        return; /* not ours: leaking beats corrupting the heap */
    h->magic = 0;
    h->free_fn(h->ud, h);
}
