/*
 * runner_budget.c -- token and usd budgets that an agent call cannot
 * overshoot (docs/loops.md, "Budgets"; the meters' rules are in caps.h,
 * the worst case of a call in agent.h).
 *
 * Before a fresh agent call starts, its worst case r (prompt bound +
 * AGENT_MAX_TOKENS, at the model's prices; a model without a price
 * reserves what the usd budget has left) is checked against what is left
 * of each budget (runner_budget_admit.c).  It does not fit -- r alone may
 * be more than the whole budget -- : the call does not start and the cap
 * trips (token-budget, usd-budget) with the spec's action, its detail
 * saying what did not fit and what to change.  It fits: r is journaled,
 * then the call's intent, and r counts as spent until the call's outcome
 * settles it to the real usage.
 *
 * The record, one per attempt of a call:
 *   reserve.N  {"slot": "I.S", "step"?, "tokens", "usd", "limit",
 *               "model"?, "unpriced"?: true, "retry"?: k}
 * The first attempt's is appended lazily just before the intent (a lazy
 * record is durable with the synced intent after it: one fdatasync for
 * both).  A retry of the spec's `retry` policy inside the same intent
 * (attempt k >= 2) is checked the same way -- the failed attempt stays
 * counted at its reservation, since what it cost is unknown -- and its
 * record (with "retry": k) is synced before the attempt starts; a retry
 * that does not fit is not made (the call fails with the last error).
 *
 * What moves the meters, the same functions live and on reload (so the
 * two agree: lil__meters_equal):
 *   reserve.N          the slot's pending reservation (a retry's: the held
 *                      one written off, the new one held and counted)
 *   intent "I.S"       a reservation the slot still holds is written off (an
 *                      attempt whose outcome will never be known: the
 *                      effect is being retried after a crash), then the
 *                      pending one is held and counted (lil__meters_reserve)
 *   outcome "I.S"      the held reservation is settled at the outcome's
 *                      usage, or at itself when the outcome tells none (a
 *                      failure, an assume-done, an abort) or a usage that
 *                      is not the provider's word ("unreported": none
 *                      reported, or not a usage: agent.h; its usd stays
 *                      the usage's when the reservation's was the rest of
 *                      an unpriced model's budget) or is out of range; an
 *                      outcome with usage and nothing held adds the usage
 *                      (no budget)
 * A reserve record without the intent after it (the process died between
 * the two) reserved nothing: the call never started.
 *
 * Reservations apply when the spec has a token or usd budget, to the llm
 * and CLI harnesses (internal costs nothing), and not to effects answered
 * by a mock (`lil verify`, cassette replays: nothing is spent).
 */
#include <stdio.h>
#include <string.h>

#include "agents/agent.h"
#include "loop/runner.h"

bool lil__budget_applies(const struct lil_loop *lp, const char *harness)
{
    return !lp->replay.mock && (lp->meters.lim.has_tokens || lp->meters.lim.has_usd) &&
           harness && strcmp(harness, "internal") != 0;
}

/* ---- the meters ------------------------------------------------------------- */

/* One change of the meters: live (LIL_E_INVAL on what cannot be), or
 * folded from the journal (LIL_E_CORRUPT). */
static lil_status meter(struct lil_loop *lp, bool folding, enum lil_meter_ev_kind kind,
                        const struct lil_reserve *r, int64_t tokens, double usd)
{
    struct lil_meter_event ev;

    memset(&ev, 0, sizeof(ev));
    ev.kind = kind;
    if (r)
        ev.res = *r;
    ev.tokens = tokens;
    ev.usd = usd;
    if (folding)
        return lil__meters_fold(&lp->meters, &lp->err, &ev);
    if (kind == LIL_METER_EV_RESERVE)
        return lil__meters_reserve(&lp->meters, &lp->err, r);
    if (kind == LIL_METER_EV_SETTLE)
        return lil__meters_settle(&lp->meters, &lp->err, r, tokens, usd);
    return lil__meters_add_usage(&lp->meters, &lp->err, tokens, usd);
}

/* The reservation slot s holds counts in full: its attempt is over and
 * what it cost is unknown. */
static lil_status write_off(struct lil_loop *lp, bool folding, struct loop_slot *s)
{
    lil_status rc;

    if (!s->has_held)
        return LIL_OK;
    rc = meter(lp, folding, LIL_METER_EV_SETTLE, &s->held, s->held.tokens, s->held.usd);
    if (rc == LIL_OK)
        s->has_held = false;
    return rc;
}

/* s holds r from now on. */
static lil_status hold(struct lil_loop *lp, bool folding, struct loop_slot *s,
                       const struct lil_reserve *r)
{
    lil_status rc = meter(lp, folding, LIL_METER_EV_RESERVE, r, 0, 0.0);

    if (rc == LIL_OK) {
        s->held = *r;
        s->has_held = true;
    }
    return rc;
}

lil_status lil__budget_reserved(struct lil_loop *lp, bool folding, const char *slot,
                                const struct lil_reserve *r, int64_t retry)
{
    struct loop_slot *s = lil__loop_slot_get(lp, slot);
    lil_status rc;

    if (!s)
        return lp->err.code;
    if (retry == 0) {
        s->pending = *r;
        s->has_pending = true;
        return LIL_OK;
    }
    rc = write_off(lp, folding, s);
    return rc == LIL_OK ? hold(lp, folding, s, r) : rc;
}

lil_status lil__budget_intent(struct lil_loop *lp, bool folding, const char *slot)
{
    struct loop_slot *s = lil__loop_slot(lp, slot);
    lil_status rc;

    if (!s)
        return LIL_OK;
    rc = write_off(lp, folding, s);
    if (rc != LIL_OK || !s->has_pending)
        return rc;
    s->has_pending = false;
    return hold(lp, folding, s, &s->pending);
}

/* Is usage not the provider's word (its "unreported" says why)? */
static bool unreported(const json_t *usage)
{
    return json_is_string(json_object_get(usage, "unreported"));
}

lil_status lil__budget_outcome(struct lil_loop *lp, bool folding, const char *slot,
                               json_t *outcome, bool *moved)
{
    struct loop_slot *s = lil__loop_slot(lp, slot);
    json_t *u = outcome ? json_object_get(outcome, "usage") : NULL;
    int64_t tokens = 0;
    double usd = 0;
    lil_status rc = LIL_OK;

    *moved = false;
    if (json_is_object(u) &&
        (!lil__json_int_in(u, "tokens", 0, LIL_LOOP_NUM_MAX, &tokens) ||
         !lil__json_num_in(u, "usd", 0, LIL_LOOP_USD_MAX, &usd)))
        u = NULL; /* out of range: counted as a call without usage, at its
                     reservation, live and in the fold alike */
    if (s && s->has_held) {
        if (!json_is_object(u)) {
            tokens = s->held.tokens;
            usd = s->held.usd;
        } else if (unreported(u)) {
            /* at the reservation; an unpriced model's usd is unknown with
               or without a usage: its estimate's, as a reported one's */
            tokens = s->held.tokens;
            usd = s->held.usd_rest ? usd : s->held.usd;
        }
        rc = meter(lp, folding, LIL_METER_EV_SETTLE, &s->held, tokens, usd);
        s->has_held = rc != LIL_OK;
        *moved = rc == LIL_OK;
    } else if (json_is_object(u)) {
        rc = meter(lp, folding, LIL_METER_EV_USAGE, NULL, tokens, usd);
        *moved = rc == LIL_OK;
    }
    if (s && rc == LIL_OK)
        s->has_pending = false;
    return rc;
}

void lil__budget_mark_usage(const struct lil_loop *lp, const char *slot, json_t *usage)
{
    const struct loop_slot *s = NULL;
    int64_t tokens = (int64_t)json_integer_value(json_object_get(usage, "tokens"));
    double usd = json_number_value(json_object_get(usage, "usd"));

    for (size_t i = 0; i < lp->nslots && !s; i++)
        if (strcmp(lp->slots[i].name, slot) == 0)
            s = &lp->slots[i];
    if (!s || !s->has_held || !json_is_object(usage))
        return;
    if (unreported(usage))
        json_object_set_new(usage, "at_reservation", json_true());
    else if (tokens > s->held.tokens || (lp->meters.lim.has_usd && usd > s->held.usd))
        json_object_set_new(usage, "overran", json_true());
}

lil_status lil__budget_fold_reserve(struct lil_loop *lp, const char *name, json_t *v)
{
    const char *slot = json_string_value(json_object_get(v, "slot"));
    json_t *usd = json_object_get(v, "usd");
    struct lil_reserve r;

    memset(&r, 0, sizeof(r));
    r.tokens = (int64_t)json_integer_value(json_object_get(v, "tokens"));
    r.usd = json_number_value(usd);
    r.usd_rest = json_is_true(json_object_get(v, "unpriced"));
    if (!slot || strlen(slot) >= LIL_LOOP_NAME_MAX || !json_is_number(usd))
        return lil__seterr(&lp->err, LIL_E_CORRUPT, 0,
                           "record %s of run %s names no slot or no usd", name,
                           lp->run_id);
    return lil__budget_reserved(
        lp, true, slot, &r, (int64_t)json_integer_value(json_object_get(v, "retry")));
}
