/*
 * env.c -- the environment: defaults, allocator and log hooks.
 */
#include "base/env.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/alloc.h"

static void *default_malloc(void *ud, size_t n)
{
    (void)ud;
    return malloc(n);
}

static void *default_realloc(void *ud, void *p, size_t n)
{
    (void)ud;
    return realloc(p, n);
}

static void default_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}

void lil__env_init(struct lil_env *env)
{
    env->magic = LIL_ENV_MAGIC;
    env->malloc_fn = default_malloc;
    env->realloc_fn = default_realloc;
    env->free_fn = default_free;
    env->alloc_ud = NULL;
    env->log_fn = NULL;
    env->log_ud = NULL;
    env->log_level = LIL_LOG_INFO;
    env->os = NULL;
    env->stores_open = 0;
    env->runs_open = 0;
    lil__clearerr(&env->err);
}

void lil__env_store_opened(struct lil_env *env)
{
    __atomic_fetch_add(&env->stores_open, 1, __ATOMIC_SEQ_CST);
}

void lil__env_store_closed(struct lil_env *env)
{
    __atomic_fetch_sub(&env->stores_open, 1, __ATOMIC_SEQ_CST);
}

void lil__log(const struct lil_env *env, int level, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    if (!env->log_fn || level < env->log_level)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    env->log_fn(env->log_ud, level, line);
}
