/*
 * loops.c -- the public lil_loop_* calls: handle and argument checks
 * (entry.h), then the runner's whole calls (loop/runner_call.c) or, for
 * open, stop requests, submit and facts, the runner in a json scope bound
 * to the store's or the run's env; errors published on the loop (or the
 * store, or the run for lil_loop_facts) and the calling thread.
 */
#include <stdint.h>

#include "api/entry.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "loop/runner.h"
#include "queue/queue.h"
#include "replay/cassette.h"
#include "store/store.h"

/* What the layers above the runner add to a loop just opened: the queue's
 * hooks (LIL_LOOP_REQUEUE) and a cassette to record or replay. */
static lil_status attach(struct lil_loop *lp, const lil_loop_opts *o, struct lil_err *e)
{
    lil_status rc;

    if (o && (o->flags & LIL_LOOP_REQUEUE))
        lp->hooks = &lil__queue_hooks;
    rc = lil__cassette_attach(lp, LIL_LOOP_OPT(o, record_path),
                              LIL_LOOP_OPT(o, replay_path));
    if (rc != LIL_OK) {
        lil__copyerr(e, &lp->err);
        if (rc == LIL_E_NOMEM && !e->msg[0])
            lil__seterr(e, rc, 0, "out of memory");
        lil__loop_close(lp);
    }
    return rc;
}

lil_status lil_loop_open(lil_store *st, const lil_spec *spec, const lil_loop_opts *opts,
                         lil_loop **out)
{
    struct lil_json_scope sc;
    struct lil_err e;
    lil_status rc;

    if (!out)
        return lil__api_fail(LIL_E_INVAL, "lil_loop_open: out is NULL");
    *out = NULL;
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    lil__clearerr(&e);
    lil__api_scope_begin(&sc, st->env);
    rc = lil__loop_open(st, &e, spec, opts, out);
    if (rc == LIL_OK && (rc = attach(*out, opts, &e)) != LIL_OK)
        *out = NULL; /* attach closed it */
    rc = lil__api_scope_end(&sc, &e, rc);
    if (rc != LIL_OK && *out) {
        lil__loop_close(*out);
        *out = NULL;
    }
    return lil__api_to_store(st, &e, rc);
}

/* The checks every call on an open loop makes, then the call. */
static lil_status loop_call(lil_loop *lp, const struct lil_loop_req *req,
                            lil_loop_result *res)
{
    if (!lil__api_loop_ok(lp))
        return lil__api_fail(LIL_E_INVAL, "invalid or closed loop handle");
    if (!res)
        return lil__api_fail(LIL_E_INVAL, "the result is NULL");
    return lil__loop_call(lp, req, res);
}

/* A call that asks the loop for op alone. */
static lil_status loop_op(lil_loop *lp, enum lil_loop_op op, lil_loop_result *res)
{
    struct lil_loop_req req = {.op = op};

    return loop_call(lp, &req, res);
}

lil_status lil_loop_run(lil_loop *lp, lil_loop_result *res)
{
    return loop_op(lp, LIL_LOOP_OP_RUN, res);
}

lil_status lil_loop_step(lil_loop *lp, lil_loop_result *res)
{
    return loop_op(lp, LIL_LOOP_OP_STEP, res);
}

lil_status lil_loop_resume(lil_loop *lp, lil_loop_result *res)
{
    return loop_op(lp, LIL_LOOP_OP_RESUME, res);
}

lil_status lil_loop_current(lil_loop *lp, lil_loop_result *res)
{
    return loop_op(lp, LIL_LOOP_OP_CURRENT, res);
}

lil_status lil_loop_approve(lil_loop *lp, const char *actor, const char *reason,
                            lil_loop_result *res)
{
    return lil_loop_approve_pause(lp, NULL, NULL, actor, reason, res);
}

lil_status lil_loop_approve_pause(lil_loop *lp, const char *pause_id,
                                  const char *digest, const char *actor,
                                  const char *reason, lil_loop_result *res)
{
    struct lil_loop_req req = {.op = LIL_LOOP_OP_APPROVE};

    if (!lil__api_text_ok(actor, 200) || !lil__api_text_ok(reason, 1000))
        return lil__api_fail(LIL_E_INVAL, "an approval needs an actor (1-200 bytes) "
                                          "and a reason (1-1000 bytes)");
    if ((pause_id && !lil__api_text_ok(pause_id, LIL_LOOP_NAME_MAX - 1)) ||
        (digest && !lil__api_text_ok(digest, 64)))
        return lil__api_fail(LIL_E_INVAL, "a pause id is 1-47 bytes and a digest 1-64");
    req.actor = actor;
    req.reason = reason;
    req.pause_id = pause_id;
    req.digest = digest;
    return loop_call(lp, &req, res);
}

lil_status lil_loop_recover(lil_loop *lp, lil_resolution how, const char *result_json,
                            const char *actor, const char *reason, lil_loop_result *res)
{
    struct lil_loop_req req = {.op = LIL_LOOP_OP_RECOVER};

    if (!lil__api_text_ok(actor, 200) || !lil__api_text_ok(reason, 1000))
        return lil__api_fail(LIL_E_INVAL, "a recovery needs an actor (1-200 bytes) "
                                          "and a reason (1-1000 bytes)");
    if (how < LIL_RESOLVE_RETRY || how > LIL_RESOLVE_ABORT)
        return lil__api_fail(LIL_E_INVAL, "unknown resolution");
    req.how = how;
    req.result_json = result_json;
    req.actor = actor;
    req.reason = reason;
    return loop_call(lp, &req, res);
}

lil_status lil_loop_retry_failed(lil_loop *lp, const char *actor, const char *reason,
                                 lil_loop_result *res)
{
    struct lil_loop_req req = {.op = LIL_LOOP_OP_RETRY_FAILED};

    if ((actor && !lil__api_text_ok(actor, 200)) ||
        (reason && !lil__api_text_ok(reason, 1000)))
        return lil__api_fail(LIL_E_INVAL, "a retry's actor (1-200 bytes) and reason "
                                          "(1-1000 bytes), when given, are text");
    req.actor = actor;
    req.reason = reason;
    return loop_call(lp, &req, res);
}

/* ---- on the store: stop requests and the queue -------------------------------- */

lil_status lil_loop_request_stop(lil_store *st, const char *run_id, const char *actor,
                                 const char *reason)
{
    struct lil_json_scope sc;
    struct lil_err e;
    lil_status rc;

    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    if (!run_id || lil__run_id_check(&e, run_id) != LIL_OK)
        return lil__api_fail(LIL_E_INVAL, "invalid run id");
    if (!lil__api_text_ok(reason, 1000))
        return lil__api_fail(LIL_E_INVAL, "stop requires a non-empty reason");
    lil__clearerr(&e);
    lil__api_scope_begin(&sc, st->env);
    rc = lil__loop_request_stop(
        st, &e, run_id, lil__api_text_ok(actor, 200) ? actor : "unknown", reason);
    rc = lil__api_scope_end(&sc, &e, rc);
    return lil__api_to_store(st, &e, rc);
}

lil_status lil_loop_stop_pending(lil_store *st, const char *run_id, lil_bytes *json)
{
    struct lil_err e;
    lil_status rc;

    if (json)
        *json = (lil_bytes){NULL, 0};
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    if (!run_id || lil__run_id_check(&e, run_id) != LIL_OK)
        return lil__api_fail(LIL_E_INVAL, "invalid run id");
    if (!json)
        return lil__api_fail(LIL_E_INVAL, "json is NULL");
    lil__clearerr(&e);
    rc = lil__stop_read(st, &e, run_id, json);
    return lil__api_to_store(st, &e, rc);
}

lil_status lil_loop_submit(lil_store *st, const lil_spec *spec,
                           const lil_loop_opts *opts, char **run_id)
{
    struct lil_json_scope sc;
    struct lil_err e;
    bool submitted;
    lil_status rc;

    if (run_id)
        *run_id = NULL;
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    lil__clearerr(&e);
    lil__api_scope_begin(&sc, st->env);
    rc = lil__loop_submit(st, &e, spec, opts, run_id);
    submitted = rc == LIL_OK;
    rc = lil__api_scope_end(&sc, &e, rc);
    if (submitted && rc != LIL_OK && run_id) { /* the scope failed */
        lil__export_free(*run_id);
        *run_id = NULL;
    }
    return lil__api_to_store(st, &e, rc);
}

/* ---- on a run: its facts -----------------------------------------------------------
 */

lil_status lil_loop_facts(lil_run *run, lil_bytes *json)
{
    struct lil_json_scope sc;
    struct lil_buf text;
    struct lil_err e;
    lil_status rc;

    if (!json)
        return lil__api_fail(LIL_E_INVAL, "lil_loop_facts: json is NULL");
    lil__api_clear_bytes(json);
    if (!lil__api_run_ok(run))
        return lil__api_fail(
            LIL_E_INVAL, "invalid or closed run handle (or one of another process)");
    lil__clearerr(&e);
    lil__buf_init(&text, run->env, SIZE_MAX);
    lil__api_scope_begin(&sc, run->env);
    rc = lil__loop_facts_dump(run, &e, &text);
    rc = lil__api_scope_end(&sc, &e, rc);
    if (rc == LIL_OK && lil__buf_export(&text, json) != LIL_OK)
        rc = lil__seterr(&e, LIL_E_NOMEM, 0, "out of memory");
    lil__buf_free(&text);
    return lil__api_to_run(run, &e, rc);
}

/* ---- the handle
 * ----------------------------------------------------------------------- */

void lil_loop_interrupt(lil_loop *lp, int how)
{
    if (!lil__api_loop_ok(lp) ||
        (how != LIL_LOOP_INTERRUPT_STOP && how != LIL_LOOP_INTERRUPT_KILL))
        return;
    lil__loop_interrupt(lp, how);
}

const char *lil_loop_run_id(const lil_loop *lp)
{
    return lil__api_loop_ok(lp) ? lp->run_id : NULL;
}

const char *lil_loop_errmsg(const lil_loop *lp)
{
    return lil__api_loop_ok(lp) ? lp->err.msg : "invalid loop handle";
}

lil_status lil_loop_close(lil_loop *lp)
{
    if (!lp)
        return LIL_OK;
    if (!lil__api_loop_ok(lp))
        return lil__api_fail(LIL_E_INVAL, "invalid or closed loop handle");
    return lil__loop_close_call(lp);
}

/* ---- results and statuses ----------------------------------------------------------
 */

void lil_loop_result_free(lil_loop_result *res)
{
    lil__loop_result_free(res);
}

const char *lil_loop_status_name(lil_loop_status s)
{
    return lil__loop_status_name(s);
}

int lil_loop_exit_code(lil_loop_status s)
{
    return lil__loop_exit_code(s);
}
