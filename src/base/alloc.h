/*
 * alloc.h -- allocation through the env's allocator.
 *
 * lil__malloc & co. never abort: they return NULL and the caller returns
 * LIL_E_NOMEM.  Memory handed to the host (lil_bytes.data and returned
 * strings) comes from lil__export_alloc, which puts a small header in front
 * of the block naming the allocator, so that lil_free() needs no env.
 */
#ifndef LIL_BASE_ALLOC_H
#define LIL_BASE_ALLOC_H

#include <stddef.h>

struct lil_env;

void *lil__malloc(const struct lil_env *env, size_t n);
void *lil__calloc(const struct lil_env *env, size_t count, size_t size);
void *lil__realloc(const struct lil_env *env, void *p, size_t n);
void lil__free(const struct lil_env *env, void *p);
char *lil__strdup(const struct lil_env *env, const char *s);
char *lil__strndup(const struct lil_env *env, const char *s, size_t n);

/* Room for one more element in an array of *cap elements of size bytes
 * that holds n: when n == *cap, the array is reallocated to twice as many
 * (first when it has none) and *cap updated.  Returns the array (p itself
 * when there was room), or NULL on failure or overflow (p and *cap are
 * then unchanged, and p is still the caller's to free). */
void *lil__grow(const struct lil_env *env, void *p, size_t *cap, size_t n, size_t size,
                size_t first);

/* A block of len+1 bytes for the host, released with lil_free(); the byte at
 * [len] is set to NUL.  NULL on failure (or if len overflows). */
void *lil__export_alloc(const struct lil_env *env, size_t len);

/* Release a block of lil__export_alloc (lil_free); NULL and blocks not
 * made by it are ignored. */
void lil__export_free(void *p);

/* Copy len bytes into a new exported block (NUL-terminated). */
void *lil__export_copy(const struct lil_env *env, const void *data, size_t len);

#endif
