/*
 * run_state.c -- what a run handle tells of itself without the store: its
 * state (read under the run's mutex, as other threads change it), the
 * state's name, and its uncertain effects by position; the names of record
 * types.  The public calls (lil_run_status, lil_run_state_name,
 * lil_run_uncertain_*, lil_record_type_name) and the engine's own messages
 * use these.
 */
#include <stdint.h>
#include <string.h>

#include "engine/run.h"

const char *lil__run_state_name(lil_run_state state)
{
    switch (state) {
    case LIL_RUN_RUNNING:
        return "running";
    case LIL_RUN_COMPLETED:
        return "completed";
    case LIL_RUN_FAILED:
        return "failed";
    case LIL_RUN_UNCERTAIN:
        return "uncertain";
    case LIL_RUN_STOPPED:
        return "stopped";
    default:
        return "unknown";
    }
}

const char *lil__record_type_name(int type)
{
    static const char *const names[] = {
        "unknown", "begin",    "open",       "step",  "step-failed", "intent",
        "resolve", "run-done", "run-failed", "close", "request",     "fork",
    };

    if (type < 0 || (size_t)type >= sizeof(names) / sizeof(names[0]))
        return "unknown";
    return names[type];
}

lil_run_state lil__run_status(const struct lil_run *run)
{
    pthread_mutex_t *mu = (pthread_mutex_t *)(uintptr_t)&run->mu;
    lil_run_state s;

    pthread_mutex_lock(mu);
    s = run->state;
    pthread_mutex_unlock(mu);
    return s;
}

const char *lil__run_uncertain_at(const struct lil_run *run, size_t i)
{
    struct lil_run *r = (struct lil_run *)(uintptr_t)run;
    size_t n;

    if (i >= run->n_uncertain)
        return NULL;
    n = r->index.entries[r->uncertain[i]].key_len;
    if (n >= sizeof(r->scratch))
        n = sizeof(r->scratch) - 1;
    memcpy(r->scratch, r->index.entries[r->uncertain[i]].key, n);
    r->scratch[n] = '\0';
    return r->scratch;
}
