/*
 * runner_api.c -- the public lil_loop_* calls (lil.h): handle and
 * argument checks, one json scope per call bound to the store's env, and
 * errors published on the loop (or the store, or the run for
 * lil_loop_facts) and the calling thread.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "loop/runner.h"
#include "os/os.h"
#include "queue/queue.h"
#include "replay/cassette.h"
#include "store/store.h"

static lil_status publish(struct lil_err *dst, pthread_mutex_t *mu,
                          const struct lil_err *e, lil_status rc)
{
    if (rc != LIL_OK) {
        if (mu)
            pthread_mutex_lock(mu);
        lil__copyerr(dst, e);
        if (mu)
            pthread_mutex_unlock(mu);
        lil__publish_err(e);
    }
    return rc;
}

static lil_status bad(const char *what)
{
    struct lil_err e;

    lil__seterr(&e, LIL_E_INVAL, 0, "%s", what);
    lil__publish_err(&e);
    return LIL_E_INVAL;
}

static bool loop_ok(const lil_loop *lp)
{
    return lp && lp->magic == LIL_LOOP_MAGIC;
}

static bool text_ok(const char *s, size_t max)
{
    size_t n = s ? strlen(s) : 0;

    if (n == 0 || n > max)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n')
            return true;
    return false;
}

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
        return bad("lil_loop_open: out is NULL");
    *out = NULL;
    if (!st || st->magic != LIL_STORE_MAGIC)
        return bad("invalid or closed store handle");
    lil__clearerr(&e);
    lil__json_begin(&sc, st->env);
    rc = lil__loop_open(st, &e, spec, opts, out);
    if (rc == LIL_OK && (rc = attach(*out, opts, &e)) != LIL_OK)
        *out = NULL; /* attach closed it */
    if (lil__json_end(&sc) != LIL_OK && rc == LIL_OK) {
        lil__loop_close(*out);
        *out = NULL;
        rc = lil__seterr(&e, LIL_E_NOMEM, 0, "out of memory");
    }
    return publish(&st->err, &st->mu, &e, rc);
}

/* Run call(lp, ...) in a scope; fill res->json; publish errors. */
#define LOOP_CALL(lp, res, expr)                                            \
    do {                                                                    \
        struct lil_json_scope sc_;                                          \
        lil_status rc_;                                                     \
        if (!loop_ok(lp))                                                   \
            return bad("invalid or closed loop handle");                    \
        if (!(res))                                                         \
            return bad("the result is NULL");                               \
        memset((res), 0, sizeof(*(res)));                                   \
        lil__clearerr(&(lp)->err);                                          \
        (lp)->requeued = false;                                             \
        lil__json_begin(&sc_, (lp)->env);                                   \
        rc_ = (expr);                                                       \
        if (rc_ == LIL_OK)                                                  \
            rc_ = lil__loop_result_json((lp), (res));                       \
        if (lil__json_end(&sc_) != LIL_OK && rc_ == LIL_OK)                 \
            rc_ = lil__seterr(&(lp)->err, LIL_E_NOMEM, 0, "out of memory"); \
        if (rc_ != LIL_OK) {                                                \
            lil_loop_result_free(res);                                      \
            lil__publish_err(&(lp)->err);                                   \
        }                                                                   \
        return rc_;                                                         \
    } while (0)

lil_status lil_loop_run(lil_loop *lp, lil_loop_result *res)
{
    LOOP_CALL(lp, res, lil__loop_run(lp, false, res));
}

lil_status lil_loop_step(lil_loop *lp, lil_loop_result *res)
{
    LOOP_CALL(lp, res, lil__loop_run(lp, true, res));
}

lil_status lil_loop_resume(lil_loop *lp, lil_loop_result *res)
{
    LOOP_CALL(lp, res, lil__loop_resume(lp, res));
}

lil_status lil_loop_current(lil_loop *lp, lil_loop_result *res)
{
    LOOP_CALL(lp, res, lil__loop_status(lp, res));
}

lil_status lil_loop_approve(lil_loop *lp, const char *actor, const char *reason,
                            lil_loop_result *res)
{
    if (!text_ok(actor, 200) || !text_ok(reason, 1000))
        return bad("an approval needs an actor (1-200 bytes) and a reason (1-1000 "
                   "bytes)");
    LOOP_CALL(lp, res, lil__loop_approve(lp, actor, reason, res));
}

lil_status lil_loop_recover(lil_loop *lp, lil_resolution how, const char *result_json,
                            const char *actor, const char *reason, lil_loop_result *res)
{
    if (!text_ok(actor, 200) || !text_ok(reason, 1000))
        return bad(
            "a recovery needs an actor (1-200 bytes) and a reason (1-1000 bytes)");
    if (how < LIL_RESOLVE_RETRY || how > LIL_RESOLVE_ABORT)
        return bad("unknown resolution");
    LOOP_CALL(lp, res, lil__loop_recover(lp, how, result_json, actor, reason, res));
}

static lil_status request_stop(struct lil_store *st, struct lil_err *e,
                               const char *run_id, const char *actor,
                               const char *reason)
{
    lil_run_opts ro = {sizeof(ro), LIL_SYNC_DEFAULT,
                       LIL_OPEN_READONLY | LIL_OPEN_EXISTING, 0};
    struct lil_run *run = NULL;
    struct lil_buf text;
    bool already = false;
    json_t *req;
    lil_status rc = lil__run_open(st, e, run_id, &ro, &run);
    lil_run_state state;

    if (rc != LIL_OK)
        return rc;
    state = run->state;
    lil__run_close(run, NULL);
    if (state != LIL_RUN_RUNNING && state != LIL_RUN_UNCERTAIN)
        return lil__seterr(e, LIL_E_DONE, 0,
                           "run %s has ended (%s): there is nothing to stop", run_id,
                           lil_run_state_name(state));
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

lil_status lil_loop_request_stop(lil_store *st, const char *run_id, const char *actor,
                                 const char *reason)
{
    struct lil_json_scope sc;
    struct lil_err e;
    lil_status rc;

    if (!st || st->magic != LIL_STORE_MAGIC)
        return bad("invalid or closed store handle");
    if (!run_id || lil_run_id_check(run_id) != LIL_OK)
        return bad("invalid run id");
    if (!text_ok(reason, 1000))
        return bad("stop requires a non-empty reason");
    lil__clearerr(&e);
    lil__json_begin(&sc, st->env);
    rc = request_stop(st, &e, run_id, text_ok(actor, 200) ? actor : "unknown", reason);
    if (lil__json_end(&sc) != LIL_OK && rc == LIL_OK)
        rc = lil__seterr(&e, LIL_E_NOMEM, 0, "out of memory");
    return publish(&st->err, &st->mu, &e, rc);
}

lil_status lil_loop_submit(lil_store *st, const lil_spec *spec,
                           const lil_loop_opts *opts, char **run_id)
{
    struct lil_json_scope sc;
    struct lil_err e;
    lil_status rc;

    if (run_id)
        *run_id = NULL;
    if (!st || st->magic != LIL_STORE_MAGIC)
        return bad("invalid or closed store handle");
    lil__clearerr(&e);
    lil__json_begin(&sc, st->env);
    rc = lil__loop_submit(st, &e, spec, opts, run_id);
    if (lil__json_end(&sc) != LIL_OK && rc == LIL_OK) {
        lil_free(run_id ? *run_id : NULL);
        if (run_id)
            *run_id = NULL;
        rc = lil__seterr(&e, LIL_E_NOMEM, 0, "out of memory");
    }
    return publish(&st->err, &st->mu, &e, rc);
}

/* A run handle that is open and belongs to this process (lil_run_open). */
static bool run_ok(const lil_run *run)
{
    return run && run->magic == LIL_RUN_MAGIC && run->pid == lil__os_self_pid();
}

lil_status lil_loop_facts(lil_run *run, lil_bytes *json)
{
    struct lil_json_scope sc;
    struct lil_buf text;
    struct lil_err e;
    json_t *doc = NULL;
    lil_status rc;

    if (!json)
        return bad("lil_loop_facts: json is NULL");
    json->data = NULL;
    json->len = 0;
    if (!run_ok(run))
        return bad("invalid or closed run handle (or one of another process)");
    lil__clearerr(&e);
    lil__buf_init(&text, run->env, SIZE_MAX);
    lil__json_begin(&sc, run->env);
    rc = lil__loop_facts(run, &e, lil__loop_now_ms(), &doc);
    if (rc == LIL_OK)
        rc = lil__json_dump(run->env, &e, doc, JSON_COMPACT, &text);
    json_decref(doc);
    if (lil__json_end(&sc) != LIL_OK && rc == LIL_OK)
        rc = lil__seterr(&e, LIL_E_NOMEM, 0, "out of memory");
    if (rc == LIL_OK && lil__buf_export(&text, json) != LIL_OK)
        rc = lil__seterr(&e, LIL_E_NOMEM, 0, "out of memory");
    lil__buf_free(&text);
    return publish(&run->err, &run->mu, &e, rc);
}

void lil_loop_interrupt(lil_loop *lp, int how)
{
    int pgid;

    if (!lp || lp->magic != LIL_LOOP_MAGIC ||
        (how != LIL_LOOP_INTERRUPT_STOP && how != LIL_LOOP_INTERRUPT_KILL))
        return;
    __atomic_store_n(&lp->interrupted, how, __ATOMIC_RELEASE);
    pgid = __atomic_load_n(&lp->child_pgid, __ATOMIC_ACQUIRE);
    if (how == LIL_LOOP_INTERRUPT_KILL && pgid > 0)
        lp->env->os->kill(-(pid_t)pgid, SIGKILL);
}

const char *lil_loop_run_id(const lil_loop *lp)
{
    return loop_ok(lp) ? lp->run_id : NULL;
}

const char *lil_loop_errmsg(const lil_loop *lp)
{
    return loop_ok(lp) ? lp->err.msg : "invalid loop handle";
}

lil_status lil_loop_close(lil_loop *lp)
{
    struct lil_json_scope sc;
    lil_status rc;

    if (!lp)
        return LIL_OK;
    if (!loop_ok(lp))
        return bad("invalid or closed loop handle");
    lil__json_begin(&sc, lp->env);
    rc = lil__loop_close(lp);
    (void)lil__json_end(&sc);
    return rc;
}
