/*
 * runner_iter.c -- the outer loop of a loop run (docs/loopspec.md, "An
 * iteration", "Stop", "Uncertain effects"): what a run, a step, a resume,
 * an approval and a recovery do, in this order:
 *
 *   ended (completed, failed, stopped for good)  -> that result, no write
 *   uncertain effect                             -> uncertain, no write
 *   stop request (published, or honoured and not cleared) -> stopped
 *   cap that ended the run, its end not journaled (the process died
 *   between the two records) -> that end, journaled now
 *   cap awaiting approval -> approved (LIL_LOOP_APPROVE_CAPS) or paused
 *   iterations: terminate? -> on_exit, terminated, the completion hook,
 *               completed;  cap? -> its action;  body -> snapshot ->
 *               stop request? -> stopped
 *
 * A body interrupted by a sleep parks the run (parked.N; with
 * LIL_LOOP_WAIT the runner sleeps and runs the iteration again), by a
 * breakpoint pauses it, by a budget after an agent call trips the cap, by
 * lil_loop_interrupt stops it (a stop_requested record, as `lil stop`
 * would).  An error ends the run failed (the journal's run-failed record).
 * The result's state is always the committed one.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "loop/runner.h"

/* ---- endings
 * ------------------------------------------------------------------------- */

/* A stop request published for a run that has now ended has nothing left to
 * stop: remove it, so that it does not stand in the way of nothing. */
static void drop_stop_request(struct lil_loop *lp)
{
    if (lil__stop_clear(lp->st, &lp->err, lp->run_id) != LIL_OK)
        lil__clearerr(&lp->err);
}

static lil_status ended(struct lil_loop *lp, lil_loop_result *res)
{
    switch (lp->end) {
    case LOOP_COMPLETED:
        return lil__loop_result(lp, LIL_LOOP_COMPLETED, NULL, res);
    case LOOP_FAILED:
        return lil__loop_result(lp, LIL_LOOP_FAILED, lp->end_reason, res);
    default:
        return lil__loop_result(lp, LIL_LOOP_STOPPED, lp->end_reason, res);
    }
}

static lil_status fail_run(struct lil_loop *lp, const char *why, lil_loop_result *res)
{
    char reason[LIL_ERRMSG_MAX];
    struct lil_buf clean;
    lil_status rc;

    /* a message may quote a rendered command or URL: no secret in it */
    lil__buf_init(&clean, lp->env, SIZE_MAX);
    if (lil__redact_text(lp->fx.redact, &lp->err, why, strlen(why), &clean) == LIL_OK)
        snprintf(reason, sizeof(reason), "%.*s", (int)clean.len,
                 (const char *)clean.data);
    else
        snprintf(reason, sizeof(reason), "the run failed (out of memory)");
    lil__buf_free(&clean);
    rc = lil__loop_artifacts(lp);
    if (rc == LIL_OK)
        rc = lil__run_end(lp->run, &lp->err, false, reason, strlen(reason));
    if (rc != LIL_OK)
        return rc;
    lp->end = LOOP_FAILED;
    lil__free(lp->env, lp->end_reason);
    lp->end_reason = lil__strdup(lp->env, reason);
    drop_stop_request(lp);
    return lil__loop_result(lp, LIL_LOOP_FAILED, reason, res);
}

static lil_status end_run(struct lil_loop *lp, enum loop_end end, const char *reason,
                          lil_loop_result *res)
{
    json_t *o = json_pack("{s:s, s:I}", "status",
                          end == LOOP_COMPLETED ? "completed" : "stopped", "iteration",
                          (json_int_t)lp->meters.iteration);
    struct lil_buf text;
    lil_status rc;

    if (o && reason)
        json_object_set_new(o, "reason", json_string(reason));
    lil__buf_init(&text, lp->env, SIZE_MAX);
    rc = o ? lil__json_canon(lp->env, &lp->err, o, &text) : LIL_E_NOMEM;
    json_decref(o);
    if (rc == LIL_OK)
        rc = lil__loop_artifacts(lp);
    if (rc == LIL_OK)
        rc = lil__run_end(lp->run, &lp->err, true, text.data, text.len);
    lil__buf_free(&text);
    if (rc != LIL_OK)
        return rc;
    lp->end = end;
    lil__free(lp->env, lp->end_reason);
    lp->end_reason = reason ? lil__strdup(lp->env, reason) : NULL;
    drop_stop_request(lp);
    return ended(lp, res);
}

/* ---- caps
 * ------------------------------------------------------------------------------ */

/* What a journaled cap does: fail or end the run, or pause it. */
static lil_status cap_action(struct lil_loop *lp, enum lil_cap cap,
                             enum lil_ir_cap_action action, lil_loop_result *res)
{
    const char *reason = lil__cap_reason(cap);

    if (action == LIL_CAPACT_FAIL)
        return fail_run(lp, reason, res);
    if (action == LIL_CAPACT_EXIT_CLEAN)
        return end_run(lp, LOOP_STOPPED, reason, res);
    return lil__loop_result(lp, LIL_LOOP_PAUSED, reason, res);
}

lil_status lil__loop_cap_detail(struct lil_loop *lp, enum lil_cap cap, const char *text)
{
    char *copy = text ? lil__strdup(lp->env, text) : NULL;

    if (text && !copy)
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    lil__free(lp->env, lp->cap_detail);
    lp->cap_detail = copy;
    lp->cap_detail_of = text ? cap : LIL_CAP_NONE;
    return LIL_OK;
}

/* Journal that trip tripped: cap.N (with its detail, when it has one) and
 * the meters. */
static lil_status journal_cap(struct lil_loop *lp, struct lil_cap_trip trip)
{
    json_t *p = json_pack("{s:s, s:s, s:I}", "reason", trip.reason, "action",
                          lil__cap_action_name(trip.action), "iteration",
                          (json_int_t)lp->meters.iteration);
    lil_status rc = LIL_OK;

    if (lp->cap_detail && lp->cap_detail_of == trip.cap) {
        if (p)
            json_object_set_new(p, "detail", json_string(lp->cap_detail));
    } else {
        rc = lil__loop_cap_detail(lp, LIL_CAP_NONE, NULL); /* another cap's */
    }
    if (rc == LIL_OK)
        rc = lil__loop_control(lp, "cap", p, false);
    else
        json_decref(p);
    if (rc != LIL_OK)
        return rc;
    snprintf(lp->bound.cap_pause, sizeof(lp->bound.cap_pause), "cap.%llu",
             (unsigned long long)lp->nctl);
    return lil__meters_trip(&lp->meters, &lp->err, trip.cap, trip.action);
}

static lil_status cap_hit(struct lil_loop *lp, struct lil_cap_trip trip,
                          lil_loop_result *res)
{
    lil_status rc = journal_cap(lp, trip);

    if (rc != LIL_OK)
        return rc;
    lil__loop_progress(lp, LIL_LOOP_EV_CAP, lp->meters.iteration, NULL, NULL, 0,
                       lil__cap_reason(trip.cap));
    return cap_action(lp, trip.cap, trip.action, res);
}

static lil_status clear_cap(struct lil_loop *lp, const char *actor, const char *why)
{
    struct lil_loop_meters next = lp->meters;
    struct lil_cap_trip cleared;
    int64_t now = lil__loop_now(lp);
    lil_status rc = lil__meters_approve(&next, &lp->err, now, &cleared);

    if (rc != LIL_OK)
        return rc;
    rc = lil__loop_control(
        lp, "cap_cleared",
        json_pack("{s:s, s:I, s:I, s:s, s:s?, s:s}", "reason", cleared.reason,
                  "atIteration", (json_int_t)lp->meters.iteration, "at",
                  (json_int_t)now, "actor", actor, "osUser", lp->opt.os_user, "why",
                  why ? why : "approved with --approve"),
        false);
    if (rc == LIL_OK)
        lp->meters = next;
    return rc == LIL_OK ? lil__loop_cap_detail(lp, LIL_CAP_NONE, NULL) : rc;
}

lil_status lil__loop_cap_approve_now(struct lil_loop *lp, struct lil_cap_trip t,
                                     const char *actor, const char *reason)
{
    lil_status rc = journal_cap(lp, t);

    return rc == LIL_OK ? clear_cap(lp, actor, reason) : rc;
}

/* ---- stops
 * ----------------------------------------------------------------------------- */

static lil_status bad_request(struct lil_loop *lp, json_t *req)
{
    json_decref(req);
    return lil__seterr(&lp->err, LIL_E_INVAL, 0, "invalid stop request for run '%s'",
                       lp->run_id);
}

/* Honour a published stop request: journal it, remove it.  *found. */
static lil_status take_stop_request(struct lil_loop *lp, bool *found)
{
    lil_bytes b = {0};
    json_t *req = NULL;
    const char *reason, *run_id;
    lil_status rc = lil__stop_read(lp->st, &lp->err, lp->run_id, &b);

    *found = false;
    if (rc == LIL_E_NOTFOUND)
        return LIL_OK;
    if (rc == LIL_OK)
        rc = lil__json_parse(lp->env, &lp->err, LIL_E_INVAL, b.data, b.len, 0, NULL,
                             &req);
    lil__export_free(b.data);
    if (rc != LIL_OK)
        return rc == LIL_E_INVAL ? bad_request(lp, NULL) : rc;
    reason = json_string_value(json_object_get(req, "reason"));
    run_id = json_string_value(json_object_get(req, "runId"));
    if (json_integer_value(json_object_get(req, "version")) != 1 || !reason ||
        !*reason || !run_id || strcmp(run_id, lp->run_id) != 0)
        return bad_request(lp, req);
    rc = lil__loop_control(lp, "stop_requested", json_pack("{s:O}", "request", req),
                           false);
    if (rc == LIL_OK)
        rc = lil__stop_clear(lp->st, &lp->err, lp->run_id);
    if (rc == LIL_E_NOTFOUND)
        rc = LIL_OK;
    if (rc == LIL_OK) {
        json_decref(lp->stop);
        lp->stop = json_incref(req);
        *found = true;
    }
    json_decref(req);
    return rc;
}

/* A stop from lil_loop_interrupt, journaled like a request. */
static lil_status interrupt_stop(struct lil_loop *lp)
{
    json_t *req =
        json_pack("{s:i, s:s, s:I, s:s, s:s}", "version", 1, "runId", lp->run_id,
                  "requestedAt", (json_int_t)lil__loop_now(lp), "actor", lp->opt.actor,
                  "reason", "interrupted by a signal");
    lil_status rc = lil__loop_control(lp, "stop_requested",
                                      json_pack("{s:O}", "request", req), false);

    __atomic_store_n(&lp->interrupted, 0, __ATOMIC_RELEASE);
    if (rc == LIL_OK) {
        json_decref(lp->stop);
        lp->stop = json_incref(req);
    }
    json_decref(req);
    return rc;
}

static const char *stop_reason(struct lil_loop *lp)
{
    return json_string_value(json_object_get(lp->stop, "reason"));
}

/* At a boundary: a stop to honour?  *stopped.  Between iterations
 * (throttled) the store is asked at most every LIL_LOOP_STOP_POLL_MS: a
 * loop of fast iterations then costs no file lookup per iteration, and a
 * request still stops it within that time. */
static lil_status stop_check(struct lil_loop *lp, bool throttled, bool *stopped)
{
    lil_status rc = LIL_OK;
    bool found = false;
    int64_t now;

    *stopped = lp->stop != NULL;
    if (*stopped)
        return LIL_OK;
    if (lil__loop_interrupted(lp)) {
        rc = interrupt_stop(lp);
        *stopped = rc == LIL_OK;
        return rc;
    }
    now = lil__mono_ns();
    if (throttled && now < lp->stop_poll_ns)
        return LIL_OK;
    lp->stop_poll_ns = now + (int64_t)LIL_LOOP_STOP_POLL_MS * 1000000;
    rc = take_stop_request(lp, &found);
    *stopped = found;
    return rc;
}

/* ---- terminate
 * ------------------------------------------------------------------------- */

static lil_status interrupted(struct lil_loop *lp, struct iter *it,
                              lil_loop_result *res);

static lil_status observe_completed(struct lil_loop *lp, struct iter *it)
{
    json_t *result = NULL;
    lil_status rc, hook;

    if (!lp->ir->observe.completed.present || lp->observer_started)
        return LIL_OK;
    rc = lil__loop_control(
        lp, "observer",
        json_pack("{s:s, s:s}", "event", "completed", "status", "started"), false);
    if (rc == LIL_OK)
        rc = lil__run_sync(lp->run, &lp->err); /* at most once, also past a power cut */
    if (rc != LIL_OK)
        return rc;
    lp->observer_started = true;
    hook = lil__loop_action(it, &lp->ir->observe.completed, false, &result);
    json_decref(result);
    if (hook == LIL_OK)
        return lil__loop_control(
            lp, "observer",
            json_pack("{s:s, s:s}", "event", "completed", "status", "done"), false);
    return lil__loop_control(lp, "observer",
                             json_pack("{s:s, s:s, s:s#}", "event", "completed",
                                       "status", "failed", "error", lp->err.msg,
                                       (int)strnlen(lp->err.msg, 500)),
                             false);
}

static lil_status complete(struct lil_loop *lp, struct iter *it, lil_loop_result *res)
{
    struct iter ex;
    lil_status rc;

    if (lp->ir->terminate.on_exit.present && !lp->terminated) {
        rc = lil__iter_init(&ex, lp, -1);
        if (rc == LIL_OK)
            rc = lil__loop_on_exit(&ex);
        if (rc != LIL_OK) {
            if (rc == LIL_E_NOMEM && ex.why != WHY_FAIL)
                ex.why = WHY_FAIL;
            ex.iteration = lp->meters.iteration;
            rc = interrupted(lp, &ex, res);
            lil__iter_free(&ex);
            return rc;
        }
        lil__iter_free(&ex);
    }
    if (!lp->terminated) {
        rc = lil__loop_control(
            lp, "terminated",
            json_pack("{s:I}", "iteration", (json_int_t)lp->meters.iteration), false);
        if (rc != LIL_OK)
            return rc;
        lp->terminated = true;
    }
    rc = observe_completed(lp, it);
    return rc == LIL_OK ? end_run(lp, LOOP_COMPLETED, NULL, res) : rc;
}

/* ---- one iteration
 * ------------------------------------------------------------------------ */

static lil_status park(struct lil_loop *lp, struct iter *it, lil_loop_result *res)
{
    lil_status rc = lil__loop_control(lp, "parked",
                                      json_pack("{s:I, s:I}", "iteration",
                                                (json_int_t)it->iteration, "wakeAt",
                                                (json_int_t)it->wake_at),
                                      false);

    if (rc == LIL_OK)
        rc = lil__loop_result(lp, LIL_LOOP_WAITING, NULL, res);
    if (rc == LIL_OK)
        lil__loop_result_wake(res, it->wake_at);
    return rc;
}

/* The iteration stopped early: say why in *res. */
static lil_status interrupted(struct lil_loop *lp, struct iter *it,
                              lil_loop_result *res)
{
    bool stopped;
    lil_status rc;

    switch (it->why) {
    case WHY_PARK:
        return park(lp, it, res);
    case WHY_PAUSE:
        lil__loop_progress(lp, LIL_LOOP_EV_PAUSE, it->iteration, NULL, NULL, 0,
                           lp->pause.reason);
        return lil__loop_result(lp, LIL_LOOP_PAUSED, lp->pause.reason, res);
    case WHY_CAP:
        return cap_hit(lp, it->cap, res);
    case WHY_UNCERTAIN:
        return lil__loop_result_uncertain(lp, res);
    case WHY_STOP:
        rc = stop_check(lp, false, &stopped);
        return rc == LIL_OK
                   ? lil__loop_result(lp, LIL_LOOP_STOPPED, stop_reason(lp), res)
                   : rc;
    default:
        if (lp->err.code == LIL_E_IO || lp->err.code == LIL_E_POISONED)
            return lp->err.code; /* the journal cannot take the failure either */
        return fail_run(lp, lp->err.msg, res);
    }
}

static void announce(struct lil_loop *lp, int64_t iteration)
{
    lil_loop_event ev = {0};

    if (!lp->opt.progress)
        return;
    ev.kind = LIL_LOOP_EV_ITERATION;
    ev.iteration = iteration;
    ev.tokens = lp->meters.tokens;
    ev.usd = lp->meters.usd;
    ev.elapsed_ms = lil__loop_now(lp) - lp->meters.wallclock_base_ms;
    lp->opt.progress(lp->opt.progress_ud, &ev);
}

static lil_status terminate_now(struct iter *it, bool *yes)
{
    const struct lil_ir_guard *g = &it->lp->ir->terminate.until;
    struct lil_eval ev;
    struct lil_val v;
    lil_status rc;

    *yes = false;
    if (!g->expr)
        return lil__iter_fail(it, LIL_E_SPEC, "terminate.until did not parse");
    lil__loop_eval(it, &ev);
    rc = lil__expr_eval(g->expr, &ev, &v);
    if (rc == LIL_OK)
        *yes = lil__val_truthy(&v);
    lil__eval_free(&ev);
    return rc == LIL_OK ? rc : lil__iter_fail(it, rc, "evaluating terminate.until");
}

/* Run the body of the current iteration and commit it.  LIL_OK with *done
 * clear: committed, go on; *done set: *res holds the outcome. */
static lil_status body_and_commit(struct lil_loop *lp, struct iter *it,
                                  lil_loop_result *res, bool *done)
{
    bool stopped;
    lil_status rc;

    for (;;) {
        rc = lil__loop_body(it);
        if (rc == LIL_OK || it->why != WHY_PARK || !(lp->opt.flags & LIL_LOOP_WAIT))
            break;
        lil__loop_sleep(lp, it->wake_at - lil__loop_now(lp)); /* --wait */
        lil__iter_free(it);
        rc = lil__iter_init(it, lp, lp->meters.iteration);
        if (rc != LIL_OK)
            return rc;
        if (lil__loop_interrupted(lp)) {
            rc = lil__iter_stop(it, WHY_STOP);
            break;
        }
    }
    if (rc != LIL_OK) {
        *done = true;
        if (it->why == WHY_NONE)
            it->why = WHY_FAIL;
        return interrupted(lp, it, res);
    }
    rc = lil__loop_snapshot(lp, it);
    if (rc == LIL_OK)
        rc = stop_check(lp, true, &stopped);
    if (rc == LIL_OK && stopped) {
        *done = true;
        return lil__loop_result(lp, LIL_LOOP_STOPPED, stop_reason(lp), res);
    }
    if (rc == LIL_OK)
        rc = lil__loop_compact_maybe(lp);
    return rc;
}

/* Does a cap stop iteration it before it starts (*trip)?  A budget's cap
 * gets its detail, or the approval given with a retry (runner_budget_admit.c);
 * *rc: an error of the journal. */
static bool start_capped(struct lil_loop *lp, const struct iter *it,
                         struct lil_cap_trip *trip, lil_status *rc)
{
    *rc = LIL_OK;
    *trip = lil__meters_check_start(&lp->meters, lil__loop_now(lp));
    if (trip->cap == LIL_CAP_NONE)
        return false;
    *rc = lil__budget_start_cap(lp, it->iteration, trip);
    return *rc != LIL_OK || trip->cap != LIL_CAP_NONE;
}

static lil_status one_iteration(struct lil_loop *lp, lil_loop_result *res, bool *done)
{
    struct iter it;
    struct lil_cap_trip trip;
    bool yes = false;
    lil_status rc = lil__iter_init(&it, lp, lp->meters.iteration);

    *done = false;
    if (rc != LIL_OK)
        return rc;
    announce(lp, it.iteration);
    rc = terminate_now(&it, &yes);
    if (rc != LIL_OK) {
        *done = true;
        rc = interrupted(lp, &it, res);
    } else if (yes) {
        *done = true;
        rc = complete(lp, &it, res);
    } else if (start_capped(lp, &it, &trip, &rc)) {
        *done = true;
        rc = rc == LIL_OK ? cap_hit(lp, trip, res) : rc;
    } else if (rc == LIL_OK) {
        rc = body_and_commit(lp, &it, res, done);
    }
    lil__iter_free(&it);
    return rc;
}

/* ---- the calls
 * ------------------------------------------------------------------------------ */

/* The checks before any iteration.  *done when *res is the answer. */
/* Is a stop request published (read, not taken)? */
static bool stop_published(struct lil_loop *lp)
{
    lil_bytes b = {0};
    lil_status rc = lil__stop_read(lp->st, &lp->err, lp->run_id, &b);

    lil__export_free(b.data);
    lil__clearerr(&lp->err);
    return rc != LIL_E_NOTFOUND;
}

/* What the journal answers whatever the call: an ended run, an uncertain
 * one, a stop honoured and not cleared.  true when *res (and *rc) is one. */
static bool journal_answer(struct lil_loop *lp, lil_loop_result *res, lil_status *rc)
{
    if (lp->end != LOOP_LIVE)
        *rc = ended(lp, res);
    else if (lil__run_status(lp->run) == LIL_RUN_UNCERTAIN)
        *rc = lil__loop_result_uncertain(lp, res);
    else if (lp->stop)
        *rc = lil__loop_result(lp, LIL_LOOP_STOPPED, stop_reason(lp), res);
    else
        return false;
    return true;
}

/* The answers that write nothing (the journal's, and a cap awaiting
 * approval).  *done when *res is one. */
static lil_status settled(struct lil_loop *lp, lil_loop_result *res, bool *done)
{
    lil_status rc = LIL_OK;

    *done = true;
    if (journal_answer(lp, res, &rc))
        return rc;
    if (!lil__loop_interrupted(lp) && lp->meters.pending != LIL_CAP_NONE &&
        !(lp->opt.flags & LIL_LOOP_APPROVE_CAPS) && !stop_published(lp))
        return lil__loop_result(lp, LIL_LOOP_PAUSED,
                                lil__cap_reason(lp->meters.pending), res);
    *done = false;
    return LIL_OK;
}

/* The checks before any iteration.  *done when *res is the answer.
 * What writes makes the run writable first; the facts read again then may
 * answer otherwise, so the checks start over. */
static lil_status preamble(struct lil_loop *lp, lil_loop_result *res, bool *done)
{
    bool stopped, refolded = true;
    lil_status rc = LIL_OK;

    while (rc == LIL_OK && refolded) {
        rc = settled(lp, res, done);
        if (rc != LIL_OK || *done)
            return rc;
        rc = lil__loop_writable(lp, &refolded);
    }
    if (rc != LIL_OK)
        return rc;
    *done = true;
    if (lp->meters.ended != LIL_CAP_NONE) /* its cap was journaled, not its end */
        return cap_action(lp, lp->meters.ended, lp->meters.ended_action, res);
    rc = stop_check(lp, false, &stopped);
    if (rc != LIL_OK || stopped)
        return rc == LIL_OK
                   ? lil__loop_result(lp, LIL_LOOP_STOPPED, stop_reason(lp), res)
                   : rc;
    if (lp->meters.pending != LIL_CAP_NONE) {
        if (!(lp->opt.flags & LIL_LOOP_APPROVE_CAPS))
            return lil__loop_result(lp, LIL_LOOP_PAUSED,
                                    lil__cap_reason(lp->meters.pending), res);
        rc = clear_cap(lp, lp->opt.actor, lp->opt.reason);
        if (rc != LIL_OK)
            return rc;
    }
    *done = false;
    return LIL_OK;
}

lil_status lil__loop_run(struct lil_loop *lp, bool one, lil_loop_result *res)
{
    bool done;
    lil_status rc = preamble(lp, res, &done);

    if (rc != LIL_OK || done) {
        if (rc == LIL_OK && one && res->status != LIL_LOOP_PAUSED)
            lil__loop_result_next(res, lp->meters.iteration);
        return rc;
    }
    do {
        rc = one_iteration(lp, res, &done);
    } while (rc == LIL_OK && !done && !one);
    if (rc == LIL_OK && !done) {
        rc = lil__loop_result(lp, LIL_LOOP_WAITING, NULL, res);
        lil__loop_result_next(res, lp->meters.iteration);
    }
    return rc;
}

lil_status lil__loop_status(struct lil_loop *lp, lil_loop_result *res)
{
    lil_status rc = LIL_OK;

    if (journal_answer(lp, res, &rc))
        return rc;
    if (lp->meters.pending != LIL_CAP_NONE)
        return lil__loop_result(lp, LIL_LOOP_PAUSED,
                                lil__cap_reason(lp->meters.pending), res);
    if (lp->pause.on)
        return lil__loop_result(lp, LIL_LOOP_PAUSED, lp->pause.reason, res);
    return lil__loop_result(lp, LIL_LOOP_WAITING, NULL, res);
}

lil_status lil__loop_resume(struct lil_loop *lp, lil_loop_result *res)
{
    bool found, refolded = true;
    lil_status rc = LIL_OK;

    while (rc == LIL_OK && refolded) {
        if (lp->end != LOOP_LIVE)
            return ended(lp, res);
        if (lil__run_status(lp->run) == LIL_RUN_UNCERTAIN)
            return lil__loop_result_uncertain(lp, res);
        rc = lil__loop_writable(lp, &refolded);
    }
    if (rc == LIL_OK)
        rc = take_stop_request(lp, &found);
    if (rc == LIL_OK && lp->stop) {
        rc = lil__loop_control(lp, "stop_cleared",
                               json_pack("{s:O, s:s, s:s}", "request", lp->stop,
                                         "actor", lp->opt.actor, "reason",
                                         lp->opt.reason && *lp->opt.reason
                                             ? lp->opt.reason
                                             : "explicit resume"),
                               false);
        if (rc == LIL_OK) {
            json_decref(lp->stop);
            lp->stop = NULL;
        }
    }
    return rc == LIL_OK ? lil__loop_decided(lp, res) : rc;
}

static lil_status approve_pause(struct lil_loop *lp, const char *actor,
                                const char *reason)
{
    char name[LIL_LOOP_NAME_MAX];
    struct loop_pause *p = &lp->pause;
    json_t *journaled = NULL;
    lil_status rc;

    lil__loop_slot_name(name, p->iteration, p->seq);
    rc = lil__loop_plain(
        lp, name,
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s?, s:s, s:s, s:{s:b}}", "kind",
                  "breakpoint", "step", p->step ? p->step : "", "ask",
                  p->ask ? p->ask : "", "strategy", p->strategy, "digest", p->digest,
                  "actor", actor, "osUser", lp->opt.os_user, "pause", p->id, "reason",
                  reason, "result", "approved", 1),
        false, &journaled);
    if (rc == LIL_OK)
        rc = lil__loop_slot_put(lp, name, journaled);
    if (rc != LIL_OK)
        return rc;
    lil__free(lp->env, p->step);
    lil__free(lp->env, p->ask);
    lil__free(lp->env, p->reason);
    memset(p, 0, sizeof(*p));
    return LIL_OK;
}

const char *lil__loop_status_word(struct lil_loop *lp)
{
    lil_loop_result now = {0};
    lil_loop_status st = LIL_LOOP_WAITING;

    if (lil__loop_status(lp, &now) == LIL_OK)
        st = now.status;
    lil__loop_result_free(&now);
    return lil__loop_status_name(st);
}

static lil_status not_paused(struct lil_loop *lp)
{
    return lil__seterr(&lp->err, LIL_E_INVAL, 0,
                       "run %s is not paused (it is %s): there is nothing to approve",
                       lp->run_id, lil__loop_status_word(lp));
}

lil_status lil__loop_approve(struct lil_loop *lp, const char *actor, const char *reason,
                             lil_loop_result *res)
{
    return lil__loop_approve_pause(lp, NULL, NULL, actor, reason, res);
}

lil_status lil__loop_approve_pause(struct lil_loop *lp, const char *id,
                                   const char *digest, const char *actor,
                                   const char *reason, lil_loop_result *res)
{
    bool refolded = true;
    lil_status rc = LIL_OK;

    while (rc == LIL_OK && refolded) {
        if (lp->end != LOOP_LIVE || lil__run_status(lp->run) == LIL_RUN_UNCERTAIN ||
            lp->stop || (!lp->pause.on && lp->meters.pending == LIL_CAP_NONE))
            return not_paused(lp);
        rc = lil__loop_pause_expect(lp, id, digest);
        if (rc == LIL_OK) /* the pause is checked again once the run is held */
            rc = lil__loop_writable(lp, &refolded);
    }
    if (rc != LIL_OK)
        return rc;
    if (lp->meters.pending != LIL_CAP_NONE)
        rc = clear_cap(lp, actor, reason);
    else
        rc = approve_pause(lp, actor, reason);
    return rc == LIL_OK ? lil__loop_decided(lp, res) : rc;
}

lil_status lil__loop_decided(struct lil_loop *lp, lil_loop_result *res)
{
    if (lp->hooks && lp->hooks->go_on)
        return lp->hooks->go_on(lp, res);
    return lil__loop_run(lp, false, res);
}

lil_status lil__loop_decision_ended(struct lil_loop *lp, const lil_loop_result *res)
{
    if (lp->hooks && lp->hooks->note_end)
        return lp->hooks->note_end(lp, res);
    return LIL_OK;
}
