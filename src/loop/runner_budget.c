/*
 * runner_budget.c -- token and usd budgets that an agent call cannot
 * overshoot (docs/loops.md, "Budgets"; the meters' rules are in caps.h,
 * the worst case of a call in agent.h).
 *
 * Before a fresh agent call starts, its worst case r (prompt bound +
 * AGENT_MAX_TOKENS, at the model's prices; a model without a price
 * reserves what the usd budget has left) is checked against what is left
 * of each budget.  It does not fit: the call does not start and the cap
 * trips (token-budget, usd-budget) with the spec's action; r alone is more
 * than the whole budget: the run fails saying what to change.  It fits: r
 * is journaled, then the call's intent, and r counts as spent until the
 * call's outcome settles it to the real usage.
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
 *                      failure, an assume-done, an abort); an outcome with
 *                      usage and nothing held adds the usage (no budget)
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

void lil__budget_mark_overrun(const struct lil_loop *lp, const char *slot,
                              json_t *usage)
{
    const struct loop_slot *s = NULL;
    int64_t tokens = (int64_t)json_integer_value(json_object_get(usage, "tokens"));
    double usd = json_number_value(json_object_get(usage, "usd"));

    for (size_t i = 0; i < lp->nslots && !s; i++)
        if (strcmp(lp->slots[i].name, slot) == 0)
            s = &lp->slots[i];
    if (!s || !s->has_held || !json_is_object(usage))
        return;
    if (tokens > s->held.tokens || (lp->meters.lim.has_usd && usd > s->held.usd))
        json_object_set_new(usage, "overran", json_true());
}

/* ---- the check and the record ----------------------------------------------- */

/* The worst case of call as a reservation. */
static lil_status worst_of(struct lil_loop *lp, const struct lil_agent_call *call,
                           struct lil_agent_worst *w, struct lil_reserve *r)
{
    lil_status rc = lil__agent_worst_case(call, &lp->err, w);

    memset(r, 0, sizeof(*r));
    if (rc != LIL_OK)
        return rc;
    r->tokens = w->tokens;
    r->usd_rest = !w->priced && lp->meters.lim.has_usd;
    r->usd = w->priced ? w->usd : lil__meters_usd_left(&lp->meters);
    return LIL_OK;
}

static lil_status journal_reserve(struct lil_loop *lp, const char *slot,
                                  const char *step_id, const struct lil_reserve *r,
                                  const struct lil_agent_worst *w, int64_t retry)
{
    json_t *p =
        json_pack("{s:s, s:I, s:f, s:I}", "slot", slot, "tokens", (json_int_t)r->tokens,
                  "usd", r->usd, "limit", (json_int_t)w->limit);

    if (p && step_id)
        json_object_set_new(p, "step", json_string(step_id));
    if (p && w->model[0])
        json_object_set_new(p, "model", json_string(w->model));
    if (p && r->usd_rest)
        json_object_set_new(p, "unpriced", json_true());
    if (p && retry)
        json_object_set_new(p, "retry", json_integer((json_int_t)retry));
    return lil__loop_control(lp, "reserve", p, retry == 0);
}

static void who(const char *step_id, char *out, size_t cap)
{
    if (step_id)
        snprintf(out, cap, "agent step '%s'", step_id);
    else
        snprintf(out, cap, "the exit action's agent call");
}

/* r is more than the whole budget of t.cap: no approval can let it start. */
static lil_status never_fits(struct iter *it, const char *step_id,
                             struct lil_cap_trip t, const struct lil_agent_worst *w)
{
    const struct lil_cap_limits *lim = &it->lp->meters.lim;
    char name[LIL_LOOP_NAME_MAX + 64];

    who(step_id, name, sizeof(name));
    if (t.cap == LIL_CAP_TOKENS)
        return lil__iter_fail(
            it, LIL_E_TOOBIG,
            "%s cannot start: its worst case, %lld tokens (prompt %lld "
            "+ %s %lld), is more than the whole token budget (%lld): "
            "raise caps.budget.tokens or lower %s",
            name, (long long)w->tokens, (long long)w->prompt, w->limit_var,
            (long long)w->limit, (long long)lim->tokens, w->limit_var);
    return lil__iter_fail(
        it, LIL_E_TOOBIG,
        "%s cannot start: its worst case, $%.6g (%lld tokens at $%g/M + "
        "%s %lld at $%g/M, %s), is more than the whole usd budget "
        "($%g): raise caps.budget.usd or lower %s",
        name, w->usd, (long long)w->prompt, w->price_in, w->limit_var,
        (long long)w->limit, w->price_out, w->model[0] ? w->model : "LLM_PRICE_IN/_OUT",
        lim->usd, w->limit_var);
}

lil_status lil__budget_admit(struct iter *it, const char *slot, const char *step_id,
                             const struct lil_agent_call *call)
{
    struct lil_loop *lp = it->lp;
    struct lil_agent_worst w;
    struct lil_reserve r;
    struct lil_cap_trip t;
    bool never = false;
    lil_status rc;

    if (!lil__budget_applies(lp, call->harness))
        return LIL_OK;
    rc = worst_of(lp, call, &w, &r);
    if (rc != LIL_OK)
        return lil__iter_fail(it, rc, "%s", lp->err.msg);
    t = lil__meters_check_reserve(&lp->meters, &r, &never);
    if (never)
        return never_fits(it, step_id, t, &w);
    if (t.cap != LIL_CAP_NONE) {
        it->cap = t;
        return lil__iter_stop(it, WHY_CAP);
    }
    rc = journal_reserve(lp, slot, step_id, &r, &w, 0);
    if (rc == LIL_OK)
        rc = lil__budget_reserved(lp, false, slot, &r, 0);
    return rc == LIL_OK ? rc : lil__iter_fail(it, rc, "%s", lp->err.msg);
}

/* Why another attempt of r does not fit (t tripped), into err. */
static lil_status no_retry(struct lil_loop *lp, lil_status last, struct lil_cap_trip t,
                           const struct lil_reserve *r)
{
    char was[LIL_ERRMSG_MAX];
    const struct lil_loop_meters *m = &lp->meters;

    snprintf(was, sizeof(was), "%s", lp->err.msg);
    if (t.cap == LIL_CAP_TOKENS)
        return lil__seterr(
            &lp->err, last, 0,
            "no retry: the token budget has %lld left and another attempt "
            "may cost %lld; the last attempt: %s",
            (long long)(m->lim.tokens - lil__meters_spent_tokens(m)),
            (long long)r->tokens, was);
    return lil__seterr(&lp->err, last, 0,
                       "no retry: the usd budget has $%g left and another attempt may "
                       "cost $%g; the last attempt: %s",
                       lil__meters_usd_left(m), r->usd, was);
}

lil_status lil__budget_retry(struct lil_loop *lp, const char *slot, const char *step_id,
                             const struct lil_agent_call *call, int64_t attempt,
                             lil_status last)
{
    struct loop_slot *s = lil__loop_slot(lp, slot);
    struct lil_agent_worst w;
    struct lil_reserve r;
    struct lil_cap_trip t;
    lil_status rc;

    if (!s || !s->has_held)
        return LIL_OK; /* nothing reserved: no budget to keep */
    rc = worst_of(lp, call, &w, &r);
    if (rc != LIL_OK)
        return rc;
    t = lil__meters_check_reserve(&lp->meters, &r, NULL);
    if (t.cap != LIL_CAP_NONE)
        return no_retry(lp, last, t, &r);
    rc = journal_reserve(lp, slot, step_id, &r, &w, attempt);
    if (rc == LIL_OK) /* durable before the attempt starts, in every mode but off */
        rc = lil__run_sync(lp->run, &lp->err);
    return rc == LIL_OK ? lil__budget_reserved(lp, false, slot, &r, attempt) : rc;
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
