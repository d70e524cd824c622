/*
 * handles.h -- the magic numbers of lil's handles, in one place.
 *
 * Every handle the library gives out starts with a uint32_t magic that the
 * public layer checks before touching it, and that close clears, so that a
 * closed handle, a foreign pointer or a handle of another type passed to a
 * call is refused with LIL_E_INVAL instead of being used.  Each type has its
 * own number (all start with "lil"); tests/api/test_handles.c passes every
 * handle to every other type's calls.
 */
#ifndef LIL_BASE_HANDLES_H
#define LIL_BASE_HANDLES_H

#define LIL_ENV_MAGIC    0x6c696c45u /* "lilE": lil_env */
#define LIL_STORE_MAGIC  0x6c696c53u /* "lilS": lil_store */
#define LIL_RUN_MAGIC    0x6c696c52u /* "lilR": lil_run */
#define LIL_CALL_MAGIC   0x6c696c43u /* "lilC": lil_call (inside a step) */
#define LIL_SPEC_MAGIC   0x6c696c50u /* "lilP": lil_spec (a parsed loop spec) */
#define LIL_PROC_MAGIC   0x6c696c4bu /* "lilK": a child process (os/proc.h) */
#define LIL_WORKER_MAGIC 0x6c696c57u /* "lilW": lil_worker (queue/worker.c) */
#define LIL_LOOP_MAGIC   0x6c696c4cu /* "lilL": lil_loop (loop/runner.h) */

/* Never called: two equal magics make two equal case labels, which do not
 * compile. */
static inline int lil__handle_magics_differ(unsigned m)
{
    switch (m) {
    case LIL_ENV_MAGIC:
    case LIL_STORE_MAGIC:
    case LIL_RUN_MAGIC:
    case LIL_CALL_MAGIC:
    case LIL_SPEC_MAGIC:
    case LIL_PROC_MAGIC:
    case LIL_WORKER_MAGIC:
    case LIL_LOOP_MAGIC:
        return 1;
    default:
        return 0;
    }
}

#endif
