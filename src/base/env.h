/*
 * env.h -- the environment: allocator, logger and system-call table.
 *
 * Everything process-wide that a host or a test may replace lives here, so
 * the library keeps no mutable globals.  An env is read-only once a store is
 * opened with it and may then be shared by all threads.
 */
#ifndef LIL_BASE_ENV_H
#define LIL_BASE_ENV_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/handles.h"

struct lil_os;

struct lil_env {
    uint32_t magic;
    lil_malloc_fn malloc_fn;
    lil_realloc_fn realloc_fn;
    lil_free_fn free_fn;
    void *alloc_ud;
    lil_log_fn log_fn;
    void *log_ud;
    int log_level;
    const struct lil_os *os; /* set by os/ (lil__os_env_init); NULL before */
    int stores_open;         /* stores opened with this env, not yet closed */
    int runs_open;           /* runs opened through its stores, not yet closed:
                                a call that forks (a supervisor) must come
                                before any, since a forked child shares the
                                runs' locks (lil.h, lil_run_open) */
    struct lil_err err;      /* last failure of lil_store_open with this env */
};

/* Fill env with base's defaults (malloc, no log).  The system-call table is
 * os/'s to install (base must not depend on os): an env that reaches a system
 * call is made with lil__os_env_init (os/os.h), which calls this first. */
void lil__env_init(struct lil_env *env);

/* Count a store opened with env (lil_store_open), or closed: an env's
 * allocator may change only while none is open. */
void lil__env_store_opened(struct lil_env *env);
void lil__env_store_closed(struct lil_env *env);

/* Log one line at level if the env's logger wants it (printf format). */
void lil__log(const struct lil_env *env, int level, const char *fmt, ...)
    LIL_PRINTF(3, 4);

#endif
