/*
 * runner_budget_admit.c -- the check before an agent call starts and its
 * reserve.N record (the rules and what moves the meters are in
 * runner_budget.c; docs/loops.md, "Budgets").
 *
 * A call whose worst case does not fit what is left of a budget does not
 * start: the cap trips (token-budget, usd-budget) with the spec's
 * on_cap_exceeded, and the cap carries a detail -- journaled in cap.N, the
 * result's "detail" -- saying what did not fit: the worst case, what is
 * left, and what the budget counts of calls whose outcome is unknown.  A
 * worst case more than the whole budget trips the cap the same way; its
 * detail says what to change (an approval alone makes no room: the budget
 * in the spec must be raised first).
 *
 * A retry decided with an approval (`lil recover --retry --approve`:
 * lp->recovery names the slot) whose own check trips a breakpoint cap has
 * that cap journaled and approved at once (cap.N, then cap_cleared.N with
 * the recovery's actor and reason), and is checked again: one decision of
 * the operator, every part of it in the journal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent.h"
#include "loop/runner.h"

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

/* "agent step 'think'", "the retry of agent step 'think'" (the slot holds
 * an earlier attempt's reservation), or the exit action's call. */
static void who(const struct lil_loop *lp, const char *slot, const char *step_id,
                char *out, size_t cap)
{
    const struct loop_slot *s = NULL;

    for (size_t i = 0; i < lp->nslots && !s; i++)
        if (strcmp(lp->slots[i].name, slot) == 0)
            s = &lp->slots[i];
    snprintf(out, cap, "%s%s%s%s", s && s->has_held ? "the retry of " : "",
             step_id ? "agent step '" : "the exit action's agent call",
             step_id ? step_id : "", step_id ? "'" : "");
}

/* r alone is more than the whole budget of t.cap: what to change. */
static void never_text(const struct lil_loop *lp, const char *name,
                       struct lil_cap_trip t, const struct lil_agent_worst *w,
                       char *out, size_t cap)
{
    const struct lil_cap_limits *lim = &lp->meters.lim;

    if (t.cap == LIL_CAP_TOKENS)
        snprintf(
            out, cap,
            "%s cannot start: its worst case, %lld tokens (prompt %lld + %s %lld), "
            "is more than the whole token budget (%lld): raise caps.budget.tokens "
            "or lower %s",
            name, (long long)w->tokens, (long long)w->prompt, w->limit_var,
            (long long)w->limit, (long long)lim->tokens, w->limit_var);
    else
        snprintf(out, cap,
                 "%s cannot start: its worst case, $%.6g (%lld tokens at $%g/M + %s "
                 "%lld at $%g/M, %s), is more than the whole usd budget ($%g): raise "
                 "caps.budget.usd or lower %s",
                 name, w->usd, (long long)w->prompt, w->price_in, w->limit_var,
                 (long long)w->limit, w->price_out,
                 w->model[0] ? w->model : "LLM_PRICE_IN/_OUT", lim->usd, w->limit_var);
}

/* What the budget of t.cap counts of calls without an outcome, as the end
 * of a sentence ("" when nothing is held). */
static void held_text(const struct lil_loop_meters *m, struct lil_cap_trip t, char *out,
                      size_t cap)
{
    out[0] = '\0';
    if (t.cap == LIL_CAP_TOKENS && m->reserved_tokens > 0)
        snprintf(out, cap,
                 "; %lld tokens of what it spent are reservations of calls whose "
                 "outcome is unknown, counted in full",
                 (long long)m->reserved_tokens);
    else if (t.cap == LIL_CAP_USD && m->reserved_usd > 0)
        snprintf(out, cap,
                 "; $%.6g of what it spent is reservations of calls whose outcome is "
                 "unknown, counted in full",
                 m->reserved_usd);
}

/* r does not fit what is left of the budget of t.cap. */
static void left_text(const struct lil_loop *lp, const char *name,
                      struct lil_cap_trip t, const struct lil_reserve *r,
                      const struct lil_agent_worst *w, char *out, size_t cap)
{
    const struct lil_loop_meters *m = &lp->meters;
    char held[160];

    held_text(m, t, held, sizeof(held));
    if (t.cap == LIL_CAP_TOKENS) {
        int64_t left = m->lim.tokens - lil__meters_spent_tokens(m);

        snprintf(out, cap,
                 "%s cannot start: its worst case, %lld tokens, is more than the %lld "
                 "left of the token budget (%lld)%s",
                 name, (long long)r->tokens, (long long)(left > 0 ? left : 0),
                 (long long)m->lim.tokens, held);
    } else if (r->usd_rest) {
        snprintf(
            out, cap,
            "%s cannot start: its model (%s) has no price, so it reserves all that "
            "the usd budget has left, and nothing is left of it ($%g)%s",
            name, w->model[0] ? w->model : "unknown", m->lim.usd, held);
    } else {
        snprintf(out, cap,
                 "%s cannot start: its worst case, $%.6g, is more than the $%.6g left "
                 "of the usd budget ($%g)%s",
                 name, r->usd, lil__meters_usd_left(m), m->lim.usd, held);
    }
}

static lil_status set_detail(struct iter *it, const char *slot, const char *step_id,
                             struct lil_cap_trip t, bool never,
                             const struct lil_reserve *r,
                             const struct lil_agent_worst *w)
{
    char name[LIL_LOOP_NAME_MAX + 80], text[1024];
    lil_status rc;

    who(it->lp, slot, step_id, name, sizeof(name));
    if (never)
        never_text(it->lp, name, t, w, text, sizeof(text));
    else
        left_text(it->lp, name, t, r, w, text, sizeof(text));
    rc = lil__loop_cap_detail(it->lp, t.cap, text);
    return rc == LIL_OK ? rc : lil__iter_fail(it, rc, "%s", it->lp->err.msg);
}

/* The budget of t.cap is spent at the start of iteration: say so when it
 * counts calls without an outcome (else no detail). */
static lil_status start_detail(struct lil_loop *lp, int64_t iteration,
                               struct lil_cap_trip t)
{
    const struct lil_loop_meters *m = &lp->meters;
    char held[160], text[512];

    held_text(m, t, held, sizeof(held));
    if (!held[0])
        return lil__loop_cap_detail(lp, LIL_CAP_NONE, NULL);
    if (t.cap == LIL_CAP_TOKENS)
        snprintf(text, sizeof(text),
                 "the token budget has spent %lld of %lld at the start of iteration "
                 "%lld%s",
                 (long long)lil__meters_spent_tokens(m), (long long)m->lim.tokens,
                 (long long)iteration, held);
    else
        snprintf(
            text, sizeof(text),
            "the usd budget has spent $%.6g of $%g at the start of iteration %lld%s",
            lil__meters_spent_usd(m), m->lim.usd, (long long)iteration, held);
    return lil__loop_cap_detail(lp, t.cap, text);
}

/* Is the retry decided with an approval one of iteration's calls? */
static bool retry_in(const struct lil_loop *lp, int64_t iteration)
{
    const char *s = lp->recovery.slot;
    char *end = NULL;
    long long i = s[0] ? strtoll(s, &end, 10) : -1;

    return s[0] && end && end != s && *end == '.' && i == iteration;
}

static bool is_budget(struct lil_cap_trip t)
{
    return t.cap == LIL_CAP_TOKENS || t.cap == LIL_CAP_USD;
}

lil_status lil__budget_start_cap(struct lil_loop *lp, int64_t iteration,
                                 struct lil_cap_trip *t)
{
    lil_status rc;

    if (!is_budget(*t))
        return LIL_OK;
    rc = start_detail(lp, iteration, *t);
    if (rc != LIL_OK || !retry_in(lp, iteration) || t->action != LIL_CAPACT_BREAKPOINT)
        return rc;
    rc = lil__loop_cap_approve_now(lp, *t, lp->recovery.actor, lp->recovery.reason);
    if (rc != LIL_OK)
        return rc;
    lp->recovery.slot[0] = '\0';
    *t = lil__meters_check_start(&lp->meters, lil__loop_now(lp));
    return is_budget(*t) ? start_detail(lp, iteration, *t) : LIL_OK;
}

/* Is t the cap that the approval given with the retry of slot approves? */
static bool approved_with_retry(const struct lil_loop *lp, const char *slot,
                                struct lil_cap_trip t)
{
    return lp->recovery.slot[0] && strcmp(lp->recovery.slot, slot) == 0 &&
           t.action == LIL_CAPACT_BREAKPOINT;
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
    if (t.cap != LIL_CAP_NONE && !never && approved_with_retry(lp, slot, t)) {
        rc = set_detail(it, slot, step_id, t, never, &r, &w);
        if (rc == LIL_OK)
            rc = lil__loop_cap_approve_now(lp, t, lp->recovery.actor,
                                           lp->recovery.reason);
        if (rc != LIL_OK)
            return lil__iter_fail(it, rc, "%s", lp->err.msg);
        lp->recovery.slot[0] = '\0';
        rc = worst_of(lp, call, &w, &r); /* an unpriced call takes the new rest */
        if (rc != LIL_OK)
            return lil__iter_fail(it, rc, "%s", lp->err.msg);
        t = lil__meters_check_reserve(&lp->meters, &r, &never);
    }
    if (t.cap != LIL_CAP_NONE) {
        rc = set_detail(it, slot, step_id, t, never, &r, &w);
        if (rc != LIL_OK)
            return rc;
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

/* The slot's held reservation, as words: "272 tokens and $0.000089", or
 * "... and all that the usd budget had left ($1: its model has no price)". */
static void held_words(const struct lil_loop *lp, const struct lil_reserve *h,
                       char *out, size_t cap)
{
    if (h->usd_rest)
        snprintf(out, cap,
                 "%lld tokens and all that the usd budget had left ($%.6g: its model "
                 "has no price)",
                 (long long)h->tokens, h->usd);
    else if (lp->meters.lim.has_usd)
        snprintf(out, cap, "%lld tokens and $%.6g", (long long)h->tokens, h->usd);
    else
        snprintf(out, cap, "%lld tokens", (long long)h->tokens);
}

bool lil__budget_uncertain_detail(const struct lil_loop *lp, const char *slot,
                                  char *out, size_t cap)
{
    const struct loop_slot *s = NULL;
    char held[160];

    for (size_t i = 0; i < lp->nslots && !s; i++)
        if (strcmp(lp->slots[i].name, slot) == 0)
            s = &lp->slots[i];
    if (!s || !s->has_held)
        return false;
    held_words(lp, &s->held, held, sizeof(held));
    snprintf(out, cap,
             "the agent call in slot %s is counted at its reservation, %s, whatever "
             "is decided, since what it cost is unknown; a retry reserves again beside "
             "it, and when that does not fit the budget trips: an approval given with "
             "the retry (`lil recover --retry --approve`) lets the retry start at once",
             slot, held);
    return true;
}

/* ---- before the run is created ------------------------------------------------- */

static lil_status never_fits(struct lil_loop *lp, const char *where, const char *key,
                             const char *budget, const char *call)
{
    return lil__seterr(&lp->err, LIL_E_INVAL, 0,
                       "run %s not created, nothing journaled: %s can never start: one "
                       "call reserves %s, more than %s %s: raise it or lower the limit",
                       lp->run_id, where, call, key, budget);
}

lil_status lil__budget_preflight(struct lil_loop *lp, const char *harness,
                                 const char *where)
{
    struct lil_cap_limits limits;
    const struct lil_cap_limits *lim = &limits;
    struct lil_agent_call c;
    struct lil_agent_worst w;
    struct lil_err e;
    char budget[64], call[320];

    lil__clearerr(&e);
    if (!harness || !lil__agent_known(harness) || strcmp(harness, "internal") == 0 ||
        lil__cap_limits_from_ir(lp->ir, &e, &limits) != LIL_OK ||
        (!lim->has_tokens && !lim->has_usd))
        return LIL_OK;
    memset(&c, 0, sizeof(c));
    c.harness = harness;
    c.prompt = "";
    lil__clearerr(&e);
    if (lil__agent_worst_case(&c, &e, &w) != LIL_OK)
        return LIL_OK; /* the call says what is wrong, as ever */
    if (lim->has_tokens && w.tokens > lim->tokens) {
        snprintf(budget, sizeof(budget), "%lld", (long long)lim->tokens);
        snprintf(call, sizeof(call), "%lld tokens before its prompt (%.39s %lld%s)",
                 (long long)w.tokens, w.limit_var, (long long)w.limit,
                 w.tokens > w.limit ? " and the chat framing" : "");
        return never_fits(lp, where, "caps.budget.tokens", budget, call);
    }
    if (lim->has_usd && w.priced && w.usd > lim->usd) {
        snprintf(budget, sizeof(budget), "$%g", lim->usd);
        snprintf(call, sizeof(call),
                 "$%.6g before its prompt (%.39s %lld at $%g per 1M output tokens of "
                 "%.127s)",
                 w.usd, w.limit_var, (long long)w.limit, w.price_out,
                 w.model[0] ? w.model : "its model");
        return never_fits(lp, where, "caps.budget.usd", budget, call);
    }
    return LIL_OK;
}
