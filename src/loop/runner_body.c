/*
 * runner_body.c -- one pass of a loop's body (docs/loopspec.md, "An
 * iteration", "Sleeps, breakpoints and gates"): steps in order, each
 * guarded by its `when`; after a step (run or skipped) the gates placed
 * `after` it; after the body the gates without `after`.  Effects are
 * runner_effect.c's; here are the steps that touch no outside world: breakpoints,
 * gates, sleeps and reduce.
 *
 * Breakpoints and gates fail closed.  Approved (LIL_LOOP_YES, an
 * `auto_approve_in` holding "nonInteractive", or a journaled approval of
 * this very pause), they take their slot with the approval
 * {"kind":"breakpoint", "step", "ask", "strategy", "digest", "actor",
 * "reason", "result":{"approved":true}}.  Not approved, the run pauses: a
 * pause.N record names the slot and the digest (SHA-256 of the step, the
 * strategy and the rendered question), which lil_loop_approve answers.  A
 * replay whose breakpoint asks something else than the approval it finds
 * is a divergent replay.
 *
 * Sleeps take their slot with {"kind":"sleep", "wakeAt"} the first time;
 * a replay waits for that same wake time.  `sleep.until` evaluates its
 * guard: true takes the slot with {"kind":"sleepUntil","resolved":true},
 * false parks for LIL_LOOP_UNTIL_POLL_MS.
 *
 * A reduce walks its `over` as JavaScript's for...of does: a list's
 * elements, a string's characters (code points); anything else fails.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "base/utf8.h"
#include "lang/value.h"
#include "loop/runner.h"
#include "os/os.h"

/* ---- the iteration's context -------------------------------------------------------
 */

/* The truth of guard g (absent: true). */
static lil_status guard_true(struct iter *it, const struct lil_ir_guard *g, bool *yes)
{
    struct lil_eval ev;
    struct lil_val v;
    lil_status rc;

    *yes = true;
    if (!g->src.s)
        return LIL_OK;
    if (!g->expr)
        return lil__iter_fail(it, LIL_E_SPEC, "guard '%s' did not parse", g->src.s);
    lil__loop_eval(it, &ev);
    rc = lil__expr_eval(g->expr, &ev, &v);
    if (rc == LIL_OK)
        *yes = lil__val_truthy(&v);
    lil__eval_free(&ev);
    return rc == LIL_OK ? rc
                        : lil__iter_fail(it, rc, "evaluating '%s': %s", g->src.s,
                                         lil__status_text(rc));
}

static lil_status render_str(struct iter *it, const struct lil_ir_tmpl *t,
                             struct lil_buf *out)
{
    struct lil_eval ev;
    lil_status rc;

    if (!t->src.s)
        return lil__buf_add(out, "", 1) == LIL_OK ? (out->len--, LIL_OK) : LIL_E_NOMEM;
    if (!t->tmpl)
        return lil__iter_fail(it, LIL_E_SPEC, "template '%s' did not parse", t->src.s);
    lil__loop_eval(it, &ev);
    rc = lil__tmpl_render(t->tmpl, &ev, out);
    if (rc == LIL_OK && (rc = lil__buf_add(out, "", 1)) == LIL_OK)
        out->len--;
    lil__eval_free(&ev);
    return rc == LIL_OK ? rc : lil__iter_fail(it, rc, "rendering '%s'", t->src.s);
}

/* ---- slots without effects
 * ------------------------------------------------------------ */

/* The journaled slot of this seq, checked to be of kind; NULL if none. */
static lil_status own_slot(struct iter *it, const char *name, const char *kind,
                           json_t **outcome)
{
    struct loop_slot *s = lil__loop_slot(it->lp, name);
    const char *was;

    *outcome = NULL;
    if (!s || !s->outcome)
        return LIL_OK;
    was = json_string_value(json_object_get(s->outcome, "kind"));
    if (!was || strcmp(was, kind) != 0)
        return lil__iter_fail(
            it, LIL_E_NONDET,
            "non-deterministic replay at %s: the journal has a %s, the "
            "spec now asks for a %s",
            name, was ? was : "?", kind);
    *outcome = s->outcome;
    return LIL_OK;
}

/* Journal payload (stolen) as slot name and keep it in the slot table. */
static lil_status take_slot(struct iter *it, const char *name, json_t *payload)
{
    struct lil_loop *lp = it->lp;
    json_t *journaled = NULL;
    lil_status rc = lil__loop_plain(lp, name, payload, true, &journaled);

    if (rc == LIL_OK)
        rc = lil__loop_slot_put(lp, name, journaled);
    return rc == LIL_OK ? rc : lil__iter_fail(it, rc, "%s", lp->err.msg);
}

/* ---- breakpoints and gates
 * --------------------------------------------------------------- */

struct ask {
    const char *step; /* step id, or "gate:<after>" */
    const struct lil_ir_tmpl *ask;
    bool has_strategy;
    enum lil_ir_strategy strategy;
    const struct lil_ir_strlist *auto_approve_in;
};

static bool auto_approved(const struct lil_loop *lp, const struct ask *a)
{
    if (lp->opt.flags & LIL_LOOP_YES)
        return true;
    for (size_t i = 0; a->auto_approve_in && i < a->auto_approve_in->n; i++)
        if (a->auto_approve_in->v[i].s &&
            strcmp(a->auto_approve_in->v[i].s, "nonInteractive") == 0)
            return true;
    return false;
}

static void digest_of(const struct lil_env *env, const char *step, const char *strategy,
                      const char *ask, char out[65])
{
    struct lil_buf b;
    uint8_t d[LIL_SHA256_LEN];

    lil__buf_init(&b, env, SIZE_MAX);
    if (lil__buf_add(&b, step, strlen(step) + 1) != LIL_OK ||
        lil__buf_add(&b, strategy, strlen(strategy) + 1) != LIL_OK ||
        lil__buf_addstr(&b, ask) != LIL_OK)
        lil__buf_reset(&b); /* out of memory: a digest of nothing never matches
                               an approval, so the run pauses, never runs on */
    lil__sha256(b.data ? b.data : (const uint8_t *)"", b.len, d);
    lil__buf_free(&b);
    lil__hex(d, LIL_SHA256_LEN, out);
}

static json_t *approval(const struct lil_loop *lp, const char *step, const char *ask,
                        const char *strategy, const char *digest)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s?, s:s, s:{s:b}}", "kind",
                     "breakpoint", "step", step, "ask", ask, "strategy", strategy,
                     "digest", digest, "actor", lp->opt.actor, "osUser",
                     lp->opt.os_user, "reason",
                     lp->opt.reason ? lp->opt.reason : "approved with --yes", "result",
                     "approved", 1);
}

static lil_status pause_at(struct iter *it, int64_t seq, const char *step,
                           const char *ask, const char *strategy, const char *digest)
{
    struct lil_loop *lp = it->lp;
    struct loop_pause *p = &lp->pause;
    struct lil_buf why;
    lil_status rc = LIL_OK;

    if (p->on && p->iteration == it->iteration && p->seq == seq &&
        strcmp(p->digest, digest) == 0)
        return lil__iter_stop(it, WHY_PAUSE); /* already journaled */
    lil__buf_init(&why, lp->env, SIZE_MAX);
    if (lil__buf_printf(&why, "breakpoint awaiting approval [strategy: %s]: %s",
                        strategy, ask) != LIL_OK)
        rc = lil__iter_fail(it, LIL_E_NOMEM, "out of memory");
    if (rc == LIL_OK)
        rc = lil__loop_control(lp, "pause",
                               json_pack("{s:I, s:I, s:s, s:s, s:s, s:s, s:s}",
                                         "iteration", (json_int_t)it->iteration, "seq",
                                         (json_int_t)seq, "step", step, "ask", ask,
                                         "strategy", strategy, "digest", digest, "why",
                                         (const char *)why.data),
                               true);
    if (rc == LIL_OK) {
        lil__free(lp->env, p->step);
        lil__free(lp->env, p->ask);
        lil__free(lp->env, p->reason);
        p->on = true;
        p->ask = lil__strdup(lp->env, ask);
        snprintf(p->strategy, sizeof(p->strategy), "%s", strategy);
        p->iteration = it->iteration;
        p->seq = seq;
        snprintf(p->id, sizeof(p->id), "pause.%llu", (unsigned long long)lp->nctl);
        snprintf(p->digest, sizeof(p->digest), "%s", digest);
        p->step = lil__strdup(lp->env, step);
        p->reason = lil__strdup(lp->env, (const char *)why.data);
        rc = lil__iter_stop(it, WHY_PAUSE);
    } else if (it->why != WHY_FAIL) {
        rc = lil__iter_fail(it, rc, "%s", lp->err.msg);
    }
    lil__buf_free(&why);
    return rc;
}

static lil_status breakpoint(struct iter *it, const struct ask *a)
{
    const char *strategy =
        lil__ir_enum_name(LIL_ENUM_STRATEGY, a->has_strategy ? (int)a->strategy : 0);
    int64_t seq = it->seq++;
    char name[LIL_LOOP_NAME_MAX], digest[65];
    struct lil_buf ask;
    json_t *was;
    lil_status rc;

    lil__loop_slot_name(name, it->iteration, seq);
    lil__buf_init(&ask, it->lp->env, 16u << 20);
    rc = render_str(it, a->ask, &ask);
    if (rc == LIL_OK)
        rc = own_slot(it, name, "breakpoint", &was);
    if (rc != LIL_OK) {
        lil__buf_free(&ask);
        return rc;
    }
    digest_of(it->lp->env, a->step, strategy, (const char *)ask.data, digest);
    if (was) {
        const char *d = json_string_value(json_object_get(was, "digest"));
        if (d && strcmp(d, digest) != 0 && !lil__loop_lenient(it->lp, it->iteration))
            rc = lil__iter_fail(it, LIL_E_NONDET,
                                "non-deterministic replay at %s: the approval in the "
                                "journal answers another question than '%.80s'",
                                name, (const char *)ask.data);
    } else if (auto_approved(it->lp, a)) {
        rc = take_slot(
            it, name,
            approval(it->lp, a->step, (const char *)ask.data, strategy, digest));
    } else {
        rc = pause_at(it, seq, a->step, (const char *)ask.data, strategy, digest);
    }
    lil__buf_free(&ask);
    return rc;
}

static lil_status gate(struct iter *it, const struct lil_ir_gate *g, size_t i)
{
    char step[LIL_LOOP_NAME_MAX + 32];
    struct ask a;
    bool yes;
    lil_status rc = guard_true(it, &g->when, &yes);

    if (rc != LIL_OK || !yes)
        return rc;
    snprintf(step, sizeof(step), "gates[%zu]", i);
    a.step = step;
    a.ask = &g->ask;
    a.has_strategy = g->has_strategy;
    a.strategy = g->strategy;
    a.auto_approve_in = &g->auto_approve_in;
    return breakpoint(it, &a);
}

/* The gates after step id (NULL: the gates without `after`). */
static lil_status gates_after(struct iter *it, const char *id)
{
    const struct lil_ir_spec *ir = it->lp->ir;
    lil_status rc = LIL_OK;

    for (size_t i = 0; rc == LIL_OK && i < ir->ngates; i++) {
        const char *after = ir->gates[i].after.s;

        if (id ? (after && strcmp(after, id) == 0) : !after)
            rc = gate(it, &ir->gates[i], i);
    }
    return rc;
}

/* ---- sleeps
 * ---------------------------------------------------------------------------------- */

static lil_status park(struct iter *it, int64_t wake_at)
{
    it->wake_at = wake_at;
    return lil__iter_stop(it, WHY_PARK);
}

static lil_status sleep_for(struct iter *it, const struct lil_ir_duration *d)
{
    struct lil_loop *lp = it->lp;
    char name[LIL_LOOP_NAME_MAX];
    int64_t now = lil__loop_now(lp), wake, ms;
    json_t *was;
    lil_status rc;

    lil__loop_slot_name(name, it->iteration, it->seq++);
    rc = own_slot(it, name, "sleep", &was);
    if (rc != LIL_OK)
        return rc;
    if (!d->ok)
        return lil__iter_fail(it, LIL_E_SPEC, "sleep duration '%s' is invalid",
                              d->text.s ? d->text.s : "");
    ms = (int64_t)d->ms;
    wake = was ? (int64_t)json_integer_value(json_object_get(was, "wakeAt")) : now + ms;
    if (!was) {
        rc =
            take_slot(it, name,
                      json_pack("{s:s, s:I, s:I, s:I}", "kind", "sleep", "iteration",
                                (json_int_t)it->iteration, "seq",
                                (json_int_t)(it->seq - 1), "wakeAt", (json_int_t)wake));
        if (rc != LIL_OK)
            return rc;
    }
    if (now >= wake)
        return LIL_OK;
    if (wake - now > lp->opt.max_block_ms)
        return park(it, wake);
    lil__loop_sleep(lp, wake - now);
    return lil__loop_interrupted(lp) ? lil__iter_stop(it, WHY_STOP) : LIL_OK;
}

static lil_status sleep_until(struct iter *it, const struct lil_ir_guard *g)
{
    char name[LIL_LOOP_NAME_MAX];
    int64_t seq = it->seq++, wake = lil__loop_now(it->lp) + LIL_LOOP_UNTIL_POLL_MS;
    json_t *was, *rec;
    bool yes;
    lil_status rc;

    lil__loop_slot_name(name, it->iteration, seq);
    rc = own_slot(it, name, "sleepUntil", &was);
    if (rc == LIL_OK)
        rc = guard_true(it, g, &yes);
    if (rc != LIL_OK)
        return rc;
    if (!was) {
        rec = json_pack("{s:s, s:I, s:I}", "kind", "sleepUntil", "iteration",
                        (json_int_t)it->iteration, "seq", (json_int_t)seq);
        if (rec)
            json_object_set_new(rec, yes ? "resolved" : "wakeAt",
                                yes ? json_true() : json_integer(wake));
        rc = take_slot(it, name, rec);
    }
    if (rc != LIL_OK || yes)
        return rc;
    return park(it, wake);
}

/* ---- steps
 * -----------------------------------------------------------------------------------
 */

static lil_status run_steps(struct iter *it, const struct lil_ir_step *steps, size_t n);

static lil_status apply(struct iter *it, const struct lil_ir_step *step, json_t *result)
{
    struct lil_loop *lp = it->lp;
    struct lil_state_ctx cx;
    lil_status rc;

    lil__loop_ctx(it, &cx);
    rc = lil__state_apply(&it->state, &lp->err, &cx, step, result);
    return rc == LIL_OK ? rc : lil__iter_fail(it, rc, "%s", lp->err.msg);
}

/* A string's characters as JavaScript's for...of yields them: one string
 * per code point (an invalid byte, which no JSON string holds, as U+FFFD).
 * NULL when memory ran out. */
static json_t *chars_of(const char *s, size_t len)
{
    json_t *list = json_array();
    uint32_t cp;

    for (size_t at = 0, n; list && at < len; at += n) {
        json_t *c;

        n = lil__utf8_decode((const unsigned char *)s + at, len - at, &cp);
        c = n ? json_stringn(s + at, n) : json_string("\xEF\xBF\xBD");
        if (json_array_append_new(list, c) != 0) {
            json_decref(list);
            list = NULL;
        }
        n = n ? n : 1;
    }
    return list;
}

/* What `over` iterates into *out (a new array): a list's elements or a
 * string's characters; anything else fails the run. */
static lil_status over_items(struct iter *it, const struct lil_ir_step *step,
                             json_t **out)
{
    const struct lil_ir_reduce *r = &step->reduce;
    struct lil_eval ev;
    struct lil_val v;
    bool list;
    lil_status rc;

    *out = NULL;
    if (!r->over.expr)
        return lil__iter_fail(it, LIL_E_SPEC, "reduce '%s': `over` did not parse",
                              step->id);
    lil__loop_eval(it, &ev);
    rc = lil__expr_eval(r->over.expr, &ev, &v);
    list = rc == LIL_OK && v.t == LIL_V_JSON && json_is_array(v.j);
    if (rc == LIL_OK && v.t == LIL_V_STR)
        *out = chars_of(v.s, v.len);
    else if (list)
        *out = json_incref(v.j);
    lil__eval_free(&ev);
    if (rc == LIL_OK && !list && v.t != LIL_V_STR)
        return lil__iter_fail(it, LIL_E_INVAL,
                              "reduce '%s': `over` (%s) is not a list or a string",
                              step->id, r->over.src.s);
    if (rc == LIL_OK && !*out)
        rc = LIL_E_NOMEM;
    return rc == LIL_OK ? rc
                        : lil__iter_fail(it, rc, "reduce '%s': evaluating `over`: %s",
                                         step->id, lil__status_text(rc));
}

static lil_status reduce(struct iter *it, const struct lil_ir_step *step)
{
    const struct lil_ir_reduce *r = &step->reduce;
    json_t *list, *item;
    struct lil_alias *a;
    size_t i;
    lil_status rc = over_items(it, step, &list);

    if (rc != LIL_OK)
        return rc;
    a = lil__grow(it->lp->env, it->aliases, &it->capaliases, it->naliases, sizeof(*a),
                  4);
    if (!a) {
        json_decref(list);
        return lil__iter_fail(it, LIL_E_NOMEM, "out of memory");
    }
    it->aliases = a;
    it->naliases++;
    json_array_foreach(list, i, item)
    {
        it->aliases[it->naliases - 1].name = r->as.s;
        it->aliases[it->naliases - 1].val = lil__val_from_json(item);
        rc = run_steps(it, r->body, r->nbody);
        if (rc != LIL_OK)
            break;
    }
    it->naliases--;
    json_decref(list);
    return rc;
}

static lil_status effect_step(struct iter *it, const struct lil_ir_step *step)
{
    json_t *result = NULL;
    lil_status rc;

    switch (step->kind) {
    case LIL_STEP_SHELL:
        rc = lil__loop_shell(it, step, &result);
        break;
    case LIL_STEP_HTTP:
        rc = lil__loop_http(it, step, &result);
        break;
    default:
        rc = lil__loop_agent(it, step, &result);
        break;
    }
    /* a budget cap after an agent call: the result still counts */
    if (rc == LIL_OK || (rc == LIL_E_DONE && it->why == WHY_CAP)) {
        lil_status applied = apply(it, step, result);
        rc = applied == LIL_OK ? rc : applied;
    }
    json_decref(result);
    return rc;
}

static lil_status run_step(struct iter *it, const struct lil_ir_step *step)
{
    struct ask a;
    bool yes;
    lil_status rc = guard_true(it, &step->when, &yes);

    if (rc != LIL_OK || !yes)
        return rc;
    switch (step->kind) {
    case LIL_STEP_BREAKPOINT:
        a.step = step->id;
        a.ask = &step->breakpoint.ask;
        a.has_strategy = step->breakpoint.has_strategy;
        a.strategy = step->breakpoint.strategy;
        a.auto_approve_in = &step->breakpoint.auto_approve_in;
        return breakpoint(it, &a);
    case LIL_STEP_SLEEP:
        return step->sleep.until.src.s ? sleep_until(it, &step->sleep.until)
                                       : sleep_for(it, &step->sleep.for_);
    case LIL_STEP_REDUCE:
        return reduce(it, step);
    default:
        return effect_step(it, step);
    }
}

static lil_status run_steps(struct iter *it, const struct lil_ir_step *steps, size_t n)
{
    lil_status rc = LIL_OK;

    for (size_t i = 0; rc == LIL_OK && i < n; i++) {
        rc = run_step(it, &steps[i]);
        if (rc == LIL_OK)
            rc = gates_after(it, steps[i].id);
    }
    return rc;
}

lil_status lil__loop_body(struct iter *it)
{
    lil_status rc = run_steps(it, it->lp->ir->body, it->lp->ir->nbody);

    return rc == LIL_OK ? gates_after(it, NULL) : rc;
}

lil_status lil__loop_on_exit(struct iter *it)
{
    json_t *result = NULL;
    lil_status rc = lil__loop_action(it, &it->lp->ir->terminate.on_exit, true, &result);

    json_decref(result);
    return rc;
}
