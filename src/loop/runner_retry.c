/*
 * runner_retry.c -- the retry of a failed run (docs/loops.md, "Retrying a
 * failed run"; lil_loop_retry_failed, `lil resume --retry-failed`).
 *
 * A run that failed -- an effect's error, an error of its iteration, a cap
 * whose on_cap_exceeded is fail -- ended with the journal's run-failed
 * record.  The retry re-opens it from the iteration it failed in:
 *   1. refused, nothing written, unless the run failed and, when a cap
 *      failed it, no cap stops it at the iteration's start any more (the
 *      meters' limits are the spec's: one raised, the change accepted);
 *   2. the run is running again in its handle (lil__run_reopen), and each
 *      effect of the failed iteration whose outcome is a failure gets the
 *      resolve record of a retry (lil__run_retry_failed): its next call
 *      runs it with a new intent;
 *   3. retried.N {"actor", "osUser", "reason", "at", "iteration",
 *      "failure", "cap"?, "slots"}: who and why, the iteration in flight,
 *      the failure it lifts, the cap that made it (when one did) and the
 *      slots that run again;
 *   4. a change of spec accepted for the retry (spec_changed.N);
 *   5. the run goes on (lil__loop_decided): the failed iteration again from
 *      its last snapshot, the effects it completed replayed, not run.
 * The resolve records come first: a crash between the records leaves a
 * failed run (no retried.N yet: it is retried again) or one that goes on.
 *
 * The fold (runner_load.c) reads retried.N twice: as it comes, where it
 * lifts the failure of the run-failed record before it, and in journal
 * order with the slots and the meters, where it forgets the cap that
 * ended the run and the notes of the slots that failed (they run again,
 * maybe with the request of a changed spec).
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "loop/runner.h"

#define DEFAULT_REASON "retry of the failed run"

/* ---- the fold ----------------------------------------------------------------------
 */

void lil__loop_retried_fold(struct lil_loop *lp)
{
    lp->end = LOOP_LIVE;
    lil__free(lp->env, lp->end_reason);
    lp->end_reason = NULL;
    lp->retried = true;
}

void lil__loop_retried_replay(struct lil_loop *lp)
{
    lil__meters_reopen(&lp->meters);
    (void)lil__loop_cap_detail(lp, LIL_CAP_NONE, NULL); /* frees only */
    for (size_t i = 0; i < lp->nslots; i++) {
        struct loop_slot *s = &lp->slots[i];

        if (!s->failed)
            continue;
        lil__free(lp->env, s->note);
        s->note = NULL;
        s->note_cut = false;
        s->failed = false;
    }
}

lil_status lil__loop_retried_settle(struct lil_loop *lp)
{
    if (!lp->retried || lp->end != LOOP_LIVE ||
        lil__run_status(lp->run) != LIL_RUN_FAILED)
        return LIL_OK;
    return lil__run_reopen(lp->run, &lp->err);
}

/* ---- refusals ----------------------------------------------------------------------
 */

static lil_status not_failed(struct lil_loop *lp)
{
    return lil__seterr(&lp->err, LIL_E_INVAL, 0,
                       "cannot retry run %s: it has not failed (it is %s); nothing was "
                       "written",
                       lp->run_id, lil__loop_status_word(lp));
}

/* What cap t counts and allows, as the spec names it, into buf. */
static void cap_figures(const struct lil_loop_meters *m, struct lil_cap_trip t,
                        int64_t now, char *buf, size_t cap)
{
    const struct lil_cap_limits *l = &m->lim;

    switch (t.cap) {
    case LIL_CAP_MAX_ITERATIONS:
        snprintf(buf, cap, "%lld iterations counted, caps.max_iterations %lld",
                 (long long)(m->iteration - m->iteration_base),
                 (long long)l->max_iterations);
        break;
    case LIL_CAP_TOKENS:
        snprintf(buf, cap, "%lld tokens spent, caps.budget.tokens %lld",
                 (long long)lil__meters_spent_tokens(m), (long long)l->tokens);
        break;
    case LIL_CAP_USD:
        snprintf(buf, cap, "$%.6g spent, caps.budget.usd $%g", lil__meters_spent_usd(m),
                 l->usd);
        break;
    case LIL_CAP_WALLCLOCK:
        snprintf(buf, cap, "%lld ms elapsed, caps.budget.wallclock %lld ms",
                 (long long)(now - m->wallclock_base_ms), (long long)l->wallclock_ms);
        break;
    default:
        snprintf(buf, cap, "%lld repeats, caps.no_progress.max_repeats %lld",
                 (long long)m->repeats, (long long)l->max_repeats);
        break;
    }
}

/* A run that a cap failed: does a cap still stop it at the iteration's
 * start, with the limits in force (the spec's)? */
static lil_status cap_allows(struct lil_loop *lp)
{
    struct lil_loop_meters m = lp->meters;
    int64_t now = lil__loop_now(lp);
    struct lil_cap_trip t;
    char figures[160];

    if (m.ended == LIL_CAP_NONE)
        return LIL_OK;
    lil__meters_reopen(&m);
    t = lil__meters_check_start(&m, now);
    if (t.cap == LIL_CAP_NONE)
        return LIL_OK;
    cap_figures(&m, t, now, figures, sizeof(figures));
    return lil__seterr(&lp->err, LIL_E_INVAL, 0,
                       "cannot retry run %s: the %s cap still stops it (%s): raise it "
                       "in the spec and retry with --accept-spec-change; nothing was "
                       "written",
                       lp->run_id, t.reason, figures);
}

/* The checks, on what the journal says now. */
static lil_status retry_allowed(struct lil_loop *lp)
{
    if (lp->end != LOOP_FAILED)
        return not_failed(lp);
    return cap_allows(lp);
}

/* ---- the records -------------------------------------------------------------------
 */

/* The resolve record of a retry for each failed slot, listed in slots. */
static lil_status retry_slots(struct lil_loop *lp, const char *actor,
                              const char *reason, json_t *slots)
{
    for (size_t i = 0; i < lp->nslots; i++) {
        const struct loop_slot *s = &lp->slots[i];
        lil_status rc;

        if (!s->failed)
            continue;
        rc = lil__run_retry_failed(lp->run, &lp->err, s->name, actor, reason);
        if (rc == LIL_E_NOTFOUND) /* retried already: the last retry's record */
            lil__clearerr(&lp->err);
        else if (rc != LIL_OK)
            return rc;
        if (json_array_append_new(slots, json_string(s->name)) != 0)
            return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    }
    return LIL_OK;
}

static lil_status journal_retried(struct lil_loop *lp, const char *actor,
                                  const char *reason, json_t *slots)
{
    json_t *p = json_pack("{s:s, s:s?, s:s, s:I, s:I, s:s, s:O}", "actor", actor,
                          "osUser", lp->opt.os_user, "reason", reason, "at",
                          (json_int_t)lil__loop_now(lp), "iteration",
                          (json_int_t)lp->meters.iteration, "failure",
                          lp->end_reason ? lp->end_reason : "", "slots", slots);

    if (p && lp->meters.ended != LIL_CAP_NONE)
        json_object_set_new(p, "cap", json_string(lil__cap_reason(lp->meters.ended)));
    return lil__loop_control(lp, "retried", p, false);
}

/* Make the run writable and its facts the journal's (folded again even
 * when it was writable: this process may have failed it). */
static lil_status hold_and_check(struct lil_loop *lp)
{
    bool refolded = true, folded = false;
    lil_status rc = LIL_OK;

    while (rc == LIL_OK && refolded) {
        rc = retry_allowed(lp);
        if (rc == LIL_OK)
            rc = lil__loop_writable(lp, &refolded);
        folded = folded || refolded;
    }
    if (rc != LIL_OK || folded)
        return rc;
    lil__loop_forget(lp);
    rc = lil__loop_load(lp);
    return rc == LIL_OK ? retry_allowed(lp) : rc;
}

lil_status lil__loop_retry_failed(struct lil_loop *lp, const char *actor,
                                  const char *reason, lil_loop_result *res)
{
    json_t *slots = NULL;
    lil_status rc = hold_and_check(lp);

    if (!actor)
        actor = lp->opt.actor;
    if (!reason)
        reason = lp->opt.reason && *lp->opt.reason ? lp->opt.reason : DEFAULT_REASON;
    if (rc == LIL_OK)
        rc = lil__run_reopen(lp->run, &lp->err);
    if (rc == LIL_OK && !(slots = json_array()))
        rc = lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    if (rc == LIL_OK)
        rc = retry_slots(lp, actor, reason, slots);
    if (rc == LIL_OK)
        rc = journal_retried(lp, actor, reason, slots);
    json_decref(slots);
    if (rc != LIL_OK)
        return rc;
    lil__loop_retried_fold(lp);
    lil__loop_retried_replay(lp);
    rc = lil__loop_bind_respec(lp);
    return rc == LIL_OK ? lil__loop_decided(lp, res) : rc;
}
