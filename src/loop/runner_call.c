/*
 * runner_call.c -- one operation on a loop as a whole call, the same for
 * the public lil_loop_* calls (src/api/loops.c, after their checks) and
 * for the runner's clients inside the library (the queue's workers, lil
 * verify's dry runs): the result emptied, the loop's error cleared, the
 * operation in a json scope bound to the loop's env, the result's JSON,
 * and on failure the result released and the error published to the
 * calling thread.  The handle is the caller's to check.
 */
#include <signal.h>
#include <string.h>

#include "loop/runner.h"
#include "os/os.h"

static lil_status dispatch(struct lil_loop *lp, const struct lil_loop_req *req,
                           lil_loop_result *res)
{
    switch (req->op) {
    case LIL_LOOP_OP_RUN:
        return lil__loop_run(lp, false, res);
    case LIL_LOOP_OP_STEP:
        return lil__loop_run(lp, true, res);
    case LIL_LOOP_OP_RESUME:
        return lil__loop_resume(lp, res);
    case LIL_LOOP_OP_CURRENT:
        return lil__loop_status(lp, res);
    case LIL_LOOP_OP_APPROVE:
        return lil__loop_approve_pause(lp, req->pause_id, req->digest, req->actor,
                                       req->reason, res);
    case LIL_LOOP_OP_RECOVER:
        return lil__loop_recover(lp, req->how, req->result_json, req->actor,
                                 req->reason, res);
    case LIL_LOOP_OP_RETRY_FAILED:
        return lil__loop_retry_failed(lp, req->actor, req->reason, res);
    }
    return lil__seterr(&lp->err, LIL_E_INVAL, 0, "unknown loop operation");
}

lil_status lil__loop_call(struct lil_loop *lp, const struct lil_loop_req *req,
                          lil_loop_result *res)
{
    struct lil_json_scope sc;
    lil_status rc;

    memset(res, 0, sizeof(*res));
    lil__clearerr(&lp->err);
    lp->requeued = false;
    lp->nnotes = 0;
    lil__json_begin(&sc, lp->env);
    rc = dispatch(lp, req, res);
    if (rc == LIL_OK && req->op != LIL_LOOP_OP_CURRENT)
        rc = lil__loop_notify(lp, res); /* after the event is journaled */
    if (rc == LIL_OK)
        rc = lil__loop_result_json(lp, res);
    if (lil__json_end(&sc) != LIL_OK && rc == LIL_OK)
        rc = lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    if (rc != LIL_OK) {
        lil__loop_result_free(res);
        lil__publish_err(&lp->err);
    }
    return rc;
}

lil_status lil__loop_step_call(struct lil_loop *lp, lil_loop_result *res)
{
    struct lil_loop_req req = {.op = LIL_LOOP_OP_STEP};

    return lil__loop_call(lp, &req, res);
}

lil_status lil__loop_open_call(struct lil_store *st, struct lil_err *err,
                               const lil_spec *spec, const lil_loop_opts *opts,
                               struct lil_loop **out)
{
    struct lil_json_scope sc;
    lil_status rc;

    lil__clearerr(err);
    lil__json_begin(&sc, st->env);
    rc = lil__loop_open_unchecked(st, err, spec, opts, out);
    if (lil__json_end(&sc) != LIL_OK && rc == LIL_OK) {
        lil__loop_close(*out);
        *out = NULL;
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    return rc;
}

lil_status lil__loop_close_call(struct lil_loop *lp)
{
    struct lil_json_scope sc;
    lil_status rc;

    if (!lp)
        return LIL_OK;
    lil__json_begin(&sc, lp->env);
    rc = lil__loop_close(lp);
    (void)lil__json_end(&sc);
    return rc;
}

void lil__loop_interrupt(struct lil_loop *lp, int how)
{
    int pgid;

    __atomic_store_n(&lp->interrupted, how, __ATOMIC_RELEASE);
    pgid = __atomic_load_n(&lp->child_pgid, __ATOMIC_ACQUIRE);
    if (how == LIL_LOOP_INTERRUPT_KILL && pgid > 0)
        lp->env->os->kill(-(pid_t)pgid, SIGKILL);
}

lil_status lil__loop_facts_dump(struct lil_run *run, struct lil_err *err,
                                struct lil_buf *text)
{
    json_t *doc = NULL;
    lil_status rc = lil__loop_facts(run, err, lil__loop_now_ms(), &doc);

    if (rc == LIL_OK)
        rc = lil__json_dump(run->env, err, doc, JSON_COMPACT, text);
    json_decref(doc);
    return rc;
}
