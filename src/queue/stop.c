/*
 * stop.c -- a stop request for a loop run (lil_loop_request_stop, whose
 * checks are src/api/loops.c): refused for a run that has ended or one
 * already asked to stop; else the request (version, runId, requestedAt,
 * actor, reason) published in the store for the run's holder to honour
 * between iterations, and a queued run that waits queued again so that a
 * worker honours it now.  A run that does not exist yet needs nothing but
 * the request: the store keeps it by run id (a file beside where the
 * journal will be, a row of the PostgreSQL store), and the run's first
 * call takes it before any iteration, so the run starts stopped.
 */
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "engine/run.h"
#include "json/json.h"
#include "loop/runner.h"
#include "queue/queue.h"
#include "store/store.h"

/* The run's state, read from a read-only open of its journal. */
static lil_status run_state(struct lil_store *st, struct lil_err *err,
                            const char *run_id, lil_run_state *state)
{
    lil_run_opts ro = {sizeof(ro), LIL_SYNC_DEFAULT,
                       LIL_OPEN_READONLY | LIL_OPEN_EXISTING, 0};
    struct lil_run *run = NULL;
    lil_status rc = lil__run_open(st, err, run_id, &ro, &run);

    if (rc != LIL_OK)
        return rc;
    *state = run->state;
    lil__run_close(run, NULL);
    return LIL_OK;
}

lil_status lil__loop_request_stop(struct lil_store *st, struct lil_err *e,
                                  const char *run_id, const char *actor,
                                  const char *reason)
{
    struct lil_buf text;
    bool already = false;
    json_t *req;
    lil_run_state state;
    lil_status rc = run_state(st, e, run_id, &state);

    if (rc == LIL_E_NOTFOUND) { /* not started: its first call honours it */
        lil__clearerr(e);
        rc = LIL_OK;
        state = LIL_RUN_RUNNING;
    }
    if (rc != LIL_OK)
        return rc;
    if (state != LIL_RUN_RUNNING && state != LIL_RUN_UNCERTAIN)
        return lil__seterr(e, LIL_E_DONE, 0,
                           "run %s has ended (%s): there is nothing to stop", run_id,
                           lil__run_state_name(state));
    req = json_pack("{s:i, s:s, s:I, s:s, s:s}", "version", 1, "runId", run_id,
                    "requestedAt", (json_int_t)lil__loop_now_ms(), "actor", actor,
                    "reason", reason);
    lil__buf_init(&text, st->env, SIZE_MAX);
    rc = req ? lil__json_dump(st->env, e, req, JSON_INDENT(2), &text) : LIL_E_NOMEM;
    json_decref(req);
    if (rc == LIL_OK)
        rc = st->ops->stop_request(st, e, run_id, text.data, text.len, &already);
    lil__buf_free(&text);
    if (rc == LIL_OK && already)
        rc = lil__seterr(e, LIL_E_DONE, 0, "a stop is already requested for run '%s'",
                         run_id);
    if (rc == LIL_OK) /* a queued run that waits: a worker honours it now */
        lil__queue_after_stop(st, run_id);
    return rc == LIL_E_NOMEM ? lil__seterr(e, rc, 0, "out of memory") : rc;
}
