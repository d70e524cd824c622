/*
 * env.c -- the public calls of the environment (lil_env_*): a new env with
 * the defaults, its allocator and logger.  An env's allocator may change
 * only while no store is open with it.
 */
#include "base/env.h"

#include <stdlib.h>

#include "api/entry.h"
#include "json/json.h"
#include "os/os.h"

lil_status lil_env_new(lil_env **out)
{
    struct lil_env *env;

    if (!out)
        return lil__api_fail(LIL_E_INVAL, "lil_env_new: out is NULL");
    *out = NULL;
    env = malloc(sizeof(*env));
    if (!env)
        return lil__api_fail(LIL_E_NOMEM, "out of memory");
    lil__os_env_init(env);
    *out = env;
    return LIL_OK;
}

void lil_env_free(lil_env *env)
{
    if (!lil__api_env_ok(env))
        return;
    env->magic = 0;
    free(env);
}

lil_status lil_env_set_allocator(lil_env *env, lil_malloc_fn malloc_fn,
                                 lil_realloc_fn realloc_fn, lil_free_fn free_fn,
                                 void *ud)
{
    if (!lil__api_env_ok(env))
        return lil__api_bad_handle("env");
    if (!malloc_fn || !realloc_fn || !free_fn)
        return lil__api_fail(LIL_E_INVAL,
                             "lil_env_set_allocator needs all three functions");
    if (__atomic_load_n(&env->stores_open, __ATOMIC_SEQ_CST) > 0)
        return lil__api_fail(LIL_E_INVAL,
                             "lil_env_set_allocator: a store is open with this env");
    env->malloc_fn = malloc_fn;
    env->realloc_fn = realloc_fn;
    env->free_fn = free_fn;
    env->alloc_ud = ud;
    return LIL_OK;
}

lil_status lil_env_set_log(lil_env *env, lil_log_fn fn, void *ud, int min_level)
{
    if (!lil__api_env_ok(env))
        return lil__api_bad_handle("env");
    env->log_fn = fn;
    env->log_ud = ud;
    env->log_level = min_level;
    return LIL_OK;
}
