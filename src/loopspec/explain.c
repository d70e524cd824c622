/*
 * explain.c -- the IR as JSON: the normalized spec (lil__ir_to_json, the
 * source of lil_spec_json) and the explain document (lil__ir_explain, the
 * source of `lil explain`).
 *
 * Normalized spec: the spec with every default filled in (docs/loopspec.md,
 * "Structure and normalization") and caps in force, keys in this order
 * (loopspec, id, meta, pattern, provenance, target, inputs, state, body,
 * terminate, caps, schedule, artifacts, notify, retry, gates, observe),
 * then "caps_injected": bool.  Durations are kept as written with a
 * milliseconds sibling: "wallclock": "1h", "wallclock_ms": 3600000;
 * "for": "5m", "for_ms": 300000.  Guards and templates are their text.
 *
 * Explain document:
 *
 *   {
 *     "id": "test-green", "name": "test-green", "pattern": "react",
 *     "long_lived": false,            pattern poll-until or schedule forever/watch
 *     "caps": {
 *       "max_iterations": 12,
 *       "no_progress": {"fingerprint": "${state.x}", "max_repeats": 6},  (if set)
 *       "budget": {"tokens": 400000|null, "usd": 8.0|null,
 *                  "wallclock": "2h"|null, "wallclock_ms": 7200000|null},
 *       "on_cap_exceeded": "breakpoint",
 *       "injected": false,
 *       "source": "spec" | "injected for pattern <p>"
 *     },
 *     "exit": {                       null when the spec has no terminate
 *       "signal": "oracle", "until": "${state.exit_code == 0}",
 *       "reads": ["exit_code"],       declared state vars the predicate reads
 *       "uses_iteration": false,
 *       "grounding": "none"|"agent"|"external"|"mixed"|"structural"
 *       "writers": {"exit_code": [{"step": "run-tests", "how": "save"|"incr"|
 *                   "set"|"append", "kind": "shell", "guarded": false}]},
 *       "live": true,                 iteration is read, or a written exit var
 *                                     has a live writer
 *       "on_exit": {"kind": "shell", "cmd": "..."}   (if set; http: method, url;
 *                                                      agent: harness, prompt)
 *     },
 *     "steps": [{"id": "fix", "kind": "agent", "path": "body[1]:fix",
 *                "when": "${...}" (if set),
 *                "writes": [{"var": "attempt", "how": "incr"}],
 *                what it runs, full text:
 *                "cmd": "...", "args": [...] (if set)               (a shell's),
 *                "harness": "cli", "prompt": "..."                  (an agent's),
 *                "method": "GET", "url": "..."                      (an http's),
 *                "ask": "...", "strategy": "single", "auto_approve_in": [...]
 *                (if set), "auto_approved": false                   (a breakpoint's),
 *                "for": "5m", "for_ms": 300000, "until": "${...}"  (a sleep's),
 *                "over": "${state.items}", "as": "item"             (a reduce's),
 *                "body": [ ...the same for a reduce's steps... ]}],
 *     "schedule": {"mode": "cron", "cron": "0 7 * * *",  (cron if set)
 *                  mode cron only: "timezone": "UTC",
 *                  "from": "2025-01-01T12:00:00Z", "from_ms": 1735732800000,
 *                  "next": [{"iso": "2025-01-02T07:00:00Z",
 *                            "epoch_ms": 1735801200000}, ...]}  (up to 3)
 *     "gates": [{"gate": "gates[0]", "after": "fix"|null, "when": (if set),
 *                "ask", "strategy", "auto_approve_in" (if set), "auto_approved"}],
 *     "hooks": {"completed": null | {"kind": "shell", "cmd"} |
 *                                   {"kind": "http", "method", "url"}},
 *     "warnings": [{"severity": "warning"|"info", "code", "message",
 *                   "path", "line", "column"}],   (null when absent)
 *     "remarks": [{"code", "message"}]
 *   }
 *
 * auto_approved: auto_approve_in holds "nonInteractive", which the runner
 * approves without asking (loop/runner_body.c).  Remarks are explain's own
 * findings: cron-unused (a cron with another mode), cron-never-fires,
 * auto-approved, auto-approve-inert (values lil ignores),
 * strategy-recorded (first-wins and quorum are metadata).  Fire times are
 * in UTC, strictly after now_ms (spec/cron.h).
 *
 * Both functions return a new reference, or NULL when an allocation fails.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "loopspec/ir/ir.h"

/* ------------------------------------------------------------------------ */
/* Building JSON without checking every call: the first failure sticks.     */

struct jb {
    bool failed;
};

static json_t *chk(struct jb *jb, json_t *j)
{
    if (!j)
        jb->failed = true;
    return j;
}

/* json_object_set_new and json_array_append_new take val, also when they
 * fail. */
static void put(struct jb *jb, json_t *obj, const char *key, json_t *val)
{
    if (!obj || !val) {
        json_decref(val);
        jb->failed = true;
    } else if (json_object_set_new(obj, key, val) != 0) {
        jb->failed = true;
    }
}

static void push(struct jb *jb, json_t *arr, json_t *val)
{
    if (!arr || !val) {
        json_decref(val);
        jb->failed = true;
    } else if (json_array_append_new(arr, val) != 0) {
        jb->failed = true;
    }
}

static json_t *str(struct jb *jb, const char *s)
{
    return chk(jb, s ? json_string(s) : json_null());
}

static void put_str(struct jb *jb, json_t *obj, const char *key, const char *s)
{
    if (s)
        put(jb, obj, key, str(jb, s));
}

static json_t *num(struct jb *jb, double x)
{
    if (isfinite(x) && x > -9007199254740992.0 && x < 9007199254740992.0 &&
        x == (double)(json_int_t)x) /* the cast is exact in this range */
        return chk(jb, json_integer((json_int_t)x));
    return chk(jb, json_real(x));
}

static json_t *copy(struct jb *jb, json_t *j)
{
    return chk(jb, json_deep_copy(j));
}

static const char *ename(enum lil_ir_enum e, int v)
{
    return lil__ir_enum_name(e, v);
}

static json_t *strlist(struct jb *jb, const struct lil_ir_strlist *l)
{
    json_t *a = chk(jb, json_array());

    for (size_t i = 0; i < l->n; i++)
        push(jb, a, str(jb, l->v[i].s));
    return a;
}

static void put_duration(struct jb *jb, json_t *obj, const char *key,
                         const struct lil_ir_duration *d)
{
    char ms_key[64];

    if (!d->text.s)
        return;
    put(jb, obj, key, str(jb, d->text.s));
    snprintf(ms_key, sizeof(ms_key), "%s_ms", key);
    put(jb, obj, ms_key, d->ok ? num(jb, d->ms) : chk(jb, json_null()));
}

/* ------------------------------------------------------------------------ */
/* Normalized spec                                                          */

static json_t *http_json(struct jb *jb, const struct lil_ir_http *h)
{
    json_t *o = chk(jb, json_object()), *hd;

    put_str(jb, o, "method", ename(LIL_ENUM_METHOD, (int)h->method));
    put_str(jb, o, "url", h->url.src.s);
    if (h->has_headers) {
        hd = chk(jb, json_object());
        for (size_t i = 0; i < h->nheaders; i++)
            put(jb, hd, h->headers[i].name, str(jb, h->headers[i].value.src.s));
        put(jb, o, "headers", hd);
    }
    if (h->body)
        put(jb, o, "body", copy(jb, h->body));
    return o;
}

static json_t *assigns_json(struct jb *jb, const struct lil_ir_assign *a, size_t n)
{
    json_t *o = chk(jb, json_object());

    for (size_t i = 0; i < n; i++)
        put(jb, o, a[i].var, copy(jb, a[i].value));
    return o;
}

static void effect_json(struct jb *jb, json_t *o, const struct lil_ir_step *s)
{
    json_t *sv, *od;

    if (s->has_save) {
        sv = chk(jb, json_object());
        for (size_t i = 0; i < s->nsave; i++)
            put(jb, sv, s->save[i].var, str(jb, s->save[i].path.s));
        put(jb, o, "save", sv);
    }
    if (!s->on_done.present)
        return;
    od = chk(jb, json_object());
    put_str(jb, od, "incr", s->on_done.incr.s);
    if (s->on_done.has_set)
        put(jb, od, "set", assigns_json(jb, s->on_done.set, s->on_done.nset));
    if (s->on_done.has_append)
        put(jb, od, "append", assigns_json(jb, s->on_done.append, s->on_done.nappend));
    put(jb, o, "on_done", od);
}

static json_t *steps_json(struct jb *jb, const struct lil_ir_step *v, size_t n);

static void kind_json(struct jb *jb, json_t *o, const struct lil_ir_step *s)
{
    json_t *a;

    switch (s->kind) {
    case LIL_STEP_AGENT:
        put_str(jb, o, "harness", s->agent.harness.s);
        put_str(jb, o, "prompt", s->agent.prompt.src.s);
        if (s->agent.allowed_tools.present)
            put(jb, o, "allowed-tools", strlist(jb, &s->agent.allowed_tools));
        break;
    case LIL_STEP_SHELL:
        put_str(jb, o, "cmd", s->shell.cmd.src.s);
        if (s->shell.has_args) {
            a = chk(jb, json_array());
            for (size_t i = 0; i < s->shell.nargs; i++)
                push(jb, a, str(jb, s->shell.args[i].src.s));
            put(jb, o, "args", a);
        }
        break;
    case LIL_STEP_HTTP:
        put(jb, o, "request", http_json(jb, &s->http));
        put(jb, o, "envelope", chk(jb, json_boolean(s->envelope)));
        break;
    case LIL_STEP_BREAKPOINT:
        put_str(jb, o, "ask", s->breakpoint.ask.src.s);
        if (s->breakpoint.has_strategy)
            put_str(jb, o, "strategy",
                    ename(LIL_ENUM_STRATEGY, (int)s->breakpoint.strategy));
        if (s->breakpoint.auto_approve_in.present)
            put(jb, o, "auto_approve_in", strlist(jb, &s->breakpoint.auto_approve_in));
        break;
    case LIL_STEP_SLEEP:
        put_duration(jb, o, "for", &s->sleep.for_);
        put_str(jb, o, "until", s->sleep.until.src.s);
        break;
    case LIL_STEP_REDUCE:
        put_str(jb, o, "over", s->reduce.over.src.s);
        put_str(jb, o, "as", s->reduce.as.s);
        put(jb, o, "body", steps_json(jb, s->reduce.body, s->reduce.nbody));
        break;
    }
}

static json_t *steps_json(struct jb *jb, const struct lil_ir_step *v, size_t n)
{
    json_t *a = chk(jb, json_array());

    for (size_t i = 0; i < n && !jb->failed; i++) {
        json_t *o = chk(jb, json_object());

        put_str(jb, o, "id", v[i].id);
        put_str(jb, o, "kind", ename(LIL_ENUM_STEP_KIND, (int)v[i].kind));
        put_str(jb, o, "when", v[i].when.src.s);
        kind_json(jb, o, &v[i]);
        effect_json(jb, o, &v[i]);
        push(jb, a, o);
    }
    return a;
}

static json_t *meta_target_json(struct jb *jb, const struct lil_ir_spec *ir,
                                bool target)
{
    json_t *o = chk(jb, json_object()), *a;

    if (!target) {
        put_str(jb, o, "name", ir->meta.name.s);
        put_str(jb, o, "version", ir->meta.version.s);
        put_str(jb, o, "description", ir->meta.description.s);
        return o;
    }
    put_str(jb, o, "runtime", ename(LIL_ENUM_RUNTIME, (int)ir->target.runtime));
    a = chk(jb, json_array());
    for (size_t i = 0; i < ir->target.nemit; i++)
        push(jb, a, str(jb, ename(LIL_ENUM_EMIT, (int)ir->target.emit[i])));
    put(jb, o, "emit", a);
    return o;
}

static json_t *inputs_json(struct jb *jb, const struct lil_ir_spec *ir)
{
    json_t *o = chk(jb, json_object());

    for (size_t i = 0; i < ir->ninputs; i++) {
        const struct lil_ir_input *in = &ir->inputs[i];
        json_t *d = chk(jb, json_object());

        put_str(jb, d, "type", in->type_text.s);
        if (in->has_required)
            put(jb, d, "required", chk(jb, json_boolean(in->required)));
        if (in->def)
            put(jb, d, "default", copy(jb, in->def));
        put_str(jb, d, "description", in->description.s);
        put(jb, o, in->name, d);
    }
    return o;
}

static json_t *state_json(struct jb *jb, const struct lil_ir_spec *ir)
{
    json_t *o = chk(jb, json_object()), *vars = chk(jb, json_object());

    put_str(jb, o, "store", ename(LIL_ENUM_STORE, (int)ir->state.store));
    for (size_t i = 0; i < ir->state.nvars; i++) {
        const struct lil_ir_var *v = &ir->state.vars[i];
        json_t *d = chk(jb, json_object());

        put_str(jb, d, "type", v->type_text.s);
        if (v->init)
            put(jb, d, "init", copy(jb, v->init));
        put_str(jb, d, "description", v->description.s);
        put(jb, vars, v->name, d);
    }
    put(jb, o, "vars", vars);
    return o;
}

static json_t *action_json(struct jb *jb, const struct lil_ir_action *a, bool hook)
{
    json_t *o = chk(jb, json_object());

    put_str(jb, o, "kind", ename(LIL_ENUM_ACTION_KIND, (int)a->kind));
    put_str(jb, o, "cmd", a->cmd.src.s);
    if (a->request.present)
        put(jb, o, "request", http_json(jb, &a->request));
    if (hook)
        return o;
    if (a->has_envelope)
        put(jb, o, "envelope", chk(jb, json_boolean(a->envelope)));
    if (a->kind == LIL_ACT_AGENT || a->harness_given)
        put_str(jb, o, "harness", a->harness.s);
    put_str(jb, o, "prompt", a->prompt.src.s);
    return o;
}

static json_t *terminate_json(struct jb *jb, const struct lil_ir_spec *ir)
{
    json_t *o = chk(jb, json_object());

    put_str(jb, o, "signal", ename(LIL_ENUM_SIGNAL, (int)ir->terminate.signal));
    put_str(jb, o, "until", ir->terminate.until.src.s);
    if (ir->terminate.on_exit.present)
        put(jb, o, "on_exit", action_json(jb, &ir->terminate.on_exit, false));
    return o;
}

static json_t *budget_json(struct jb *jb, const struct lil_ir_spec *ir, bool nulls)
{
    json_t *o = chk(jb, json_object());
    const struct lil_ir_duration *w = &ir->caps.budget.wallclock;

    if (ir->caps.budget.has_tokens)
        put(jb, o, "tokens", chk(jb, json_integer((json_int_t)ir->caps.budget.tokens)));
    else if (nulls)
        put(jb, o, "tokens", chk(jb, json_null()));
    if (ir->caps.budget.has_usd)
        put(jb, o, "usd", chk(jb, json_real(ir->caps.budget.usd)));
    else if (nulls)
        put(jb, o, "usd", chk(jb, json_null()));
    if (w->text.s) {
        put_duration(jb, o, "wallclock", w);
    } else if (nulls) {
        put(jb, o, "wallclock", chk(jb, json_null()));
        put(jb, o, "wallclock_ms", chk(jb, json_null()));
    }
    return o;
}

static json_t *caps_json(struct jb *jb, const struct lil_ir_spec *ir, bool explain)
{
    json_t *o = chk(jb, json_object()), *np;

    put(jb, o, "max_iterations",
        chk(jb, json_integer((json_int_t)ir->caps.max_iterations)));
    if (ir->caps.no_progress.present) {
        np = chk(jb, json_object());
        put_str(jb, np, "fingerprint", ir->caps.no_progress.fingerprint.src.s);
        put(jb, np, "max_repeats",
            chk(jb, json_integer((json_int_t)ir->caps.no_progress.max_repeats)));
        put(jb, o, "no_progress", np);
    }
    if (ir->caps.budget.present || explain)
        put(jb, o, "budget", budget_json(jb, ir, explain));
    put_str(jb, o, "on_cap_exceeded",
            ename(LIL_ENUM_CAP_ACTION, (int)ir->caps.on_cap_exceeded));
    return o;
}

static json_t *schedule_json(struct jb *jb, const struct lil_ir_spec *ir)
{
    json_t *o = chk(jb, json_object());

    put_str(jb, o, "mode", ename(LIL_ENUM_SCHED_MODE, (int)ir->schedule.mode));
    put_str(jb, o, "cron", ir->schedule.cron.s);
    put_str(jb, o, "catch_up", ir->schedule.catch_up.s);
    return o;
}

static json_t *ops_json(struct jb *jb, const struct lil_ir_spec *ir, int which)
{
    json_t *o = chk(jb, json_object());

    if (which == 0) {
        put(jb, o, "include", strlist(jb, &ir->artifacts.include));
        put(jb, o, "exclude", strlist(jb, &ir->artifacts.exclude));
        put(jb, o, "max_files",
            chk(jb, json_integer((json_int_t)ir->artifacts.max_files)));
        put(jb, o, "max_bytes",
            chk(jb, json_integer((json_int_t)ir->artifacts.max_bytes)));
    } else if (which == 1) {
        put_str(jb, o, "policy", ename(LIL_ENUM_POLICY, (int)ir->notify.policy));
        put(jb, o, "channels", strlist(jb, &ir->notify.channels));
    } else {
        if (ir->retry.has_max)
            put(jb, o, "max", chk(jb, json_integer((json_int_t)ir->retry.max)));
        if (ir->retry.has_backoff_ms)
            put(jb, o, "backoff_ms",
                chk(jb, json_integer((json_int_t)ir->retry.backoff_ms)));
    }
    return o;
}

static json_t *gates_json(struct jb *jb, const struct lil_ir_spec *ir)
{
    json_t *a = chk(jb, json_array());

    for (size_t i = 0; i < ir->ngates; i++) {
        const struct lil_ir_gate *g = &ir->gates[i];
        json_t *o = chk(jb, json_object());

        put_str(jb, o, "after", g->after.s);
        put_str(jb, o, "when", g->when.src.s);
        put_str(jb, o, "ask", g->ask.src.s);
        if (g->has_strategy)
            put_str(jb, o, "strategy", ename(LIL_ENUM_STRATEGY, (int)g->strategy));
        if (g->auto_approve_in.present)
            put(jb, o, "auto_approve_in", strlist(jb, &g->auto_approve_in));
        push(jb, a, o);
    }
    return a;
}

static json_t *observe_json(struct jb *jb, const struct lil_ir_spec *ir)
{
    json_t *o = chk(jb, json_object()), *h;

    put_str(jb, o, "trace", ename(LIL_ENUM_TRACE, (int)ir->observe.trace));
    if (ir->observe.has_hooks) {
        h = chk(jb, json_object());
        if (ir->observe.completed.present)
            put(jb, h, "completed", action_json(jb, &ir->observe.completed, true));
        put(jb, o, "hooks", h);
    }
    if (ir->observe.notify)
        put(jb, o, "notify", copy(jb, ir->observe.notify));
    return o;
}

static void spec_head(struct jb *jb, json_t *o, const struct lil_ir_spec *ir)
{
    put_str(jb, o, "loopspec", ir->loopspec.s);
    put_str(jb, o, "id", ir->id.s);
    put(jb, o, "meta", meta_target_json(jb, ir, false));
    put_str(jb, o, "pattern", ename(LIL_ENUM_PATTERN, (int)ir->pattern));
    if (ir->provenance)
        put(jb, o, "provenance", copy(jb, ir->provenance));
    put(jb, o, "target", meta_target_json(jb, ir, true));
    if (ir->has_inputs)
        put(jb, o, "inputs", inputs_json(jb, ir));
    if (ir->state.present)
        put(jb, o, "state", state_json(jb, ir));
}

json_t *lil__ir_to_json(const struct lil_ir_spec *ir)
{
    struct jb jb = {false};
    json_t *o = chk(&jb, json_object());

    spec_head(&jb, o, ir);
    put(&jb, o, "body", steps_json(&jb, ir->body, ir->nbody));
    if (ir->terminate.present)
        put(&jb, o, "terminate", terminate_json(&jb, ir));
    put(&jb, o, "caps", caps_json(&jb, ir, false));
    put(&jb, o, "schedule", schedule_json(&jb, ir));
    if (ir->artifacts.present)
        put(&jb, o, "artifacts", ops_json(&jb, ir, 0));
    if (ir->notify.present)
        put(&jb, o, "notify", ops_json(&jb, ir, 1));
    if (ir->retry.present)
        put(&jb, o, "retry", ops_json(&jb, ir, 2));
    if (ir->has_gates)
        put(&jb, o, "gates", gates_json(&jb, ir));
    put(&jb, o, "observe", observe_json(&jb, ir));
    put(&jb, o, "caps_injected", chk(&jb, json_boolean(ir->caps.injected)));
    if (jb.failed) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ------------------------------------------------------------------------ */
/* Explain                                                                  */

static const char *how_name(enum lil_ir_write_how how)
{
    static const char *const NAMES[] = {"save", "incr", "set", "append"};

    return NAMES[how];
}

static void add_write(struct jb *jb, json_t *a, const char *var,
                      enum lil_ir_write_how how)
{
    json_t *w = chk(jb, json_object());

    put_str(jb, w, "var", var);
    put_str(jb, w, "how", how_name(how));
    push(jb, a, w);
}

static json_t *step_writes(struct jb *jb, const struct lil_ir_step *s)
{
    json_t *a = chk(jb, json_array());

    for (size_t i = 0; i < s->nsave; i++)
        add_write(jb, a, s->save[i].var, LIL_WRITE_SAVE);
    if (s->on_done.incr.s)
        add_write(jb, a, s->on_done.incr.s, LIL_WRITE_INCR);
    for (size_t i = 0; i < s->on_done.nset; i++)
        add_write(jb, a, s->on_done.set[i].var, LIL_WRITE_SET);
    for (size_t i = 0; i < s->on_done.nappend; i++)
        add_write(jb, a, s->on_done.append[i].var, LIL_WRITE_APPEND);
    return a;
}

/* ------------------------------------------------------------------------ */
/* Explain: what a step runs, approvals                                     */

/* Does an auto_approve_in list hold the one value lil approves without
 * asking? */
static bool approves_itself(const struct lil_ir_strlist *l)
{
    for (size_t i = 0; l->present && i < l->n; i++)
        if (l->v[i].s && strcmp(l->v[i].s, "nonInteractive") == 0)
            return true;
    return false;
}

/* ask, strategy (default single), auto_approve_in, auto_approved. */
static void approval_json(struct jb *jb, json_t *o, const struct lil_ir_tmpl *ask,
                          bool has_strategy, enum lil_ir_strategy strategy,
                          const struct lil_ir_strlist *auto_in)
{
    put_str(jb, o, "ask", ask->src.s);
    put_str(
        jb, o, "strategy",
        ename(LIL_ENUM_STRATEGY, (int)(has_strategy ? strategy : LIL_STRAT_SINGLE)));
    if (auto_in->present)
        put(jb, o, "auto_approve_in", strlist(jb, auto_in));
    put(jb, o, "auto_approved", chk(jb, json_boolean(approves_itself(auto_in))));
}

/* What a step runs: a command, a prompt, a request or a question (full
 * text; the CLI shortens it). */
static void step_texts(struct jb *jb, json_t *o, const struct lil_ir_step *s)
{
    json_t *a;

    if (s->kind == LIL_STEP_AGENT) {
        put_str(jb, o, "harness", s->agent.harness.s);
        put_str(jb, o, "prompt", s->agent.prompt.src.s);
    } else if (s->kind == LIL_STEP_SHELL) {
        put_str(jb, o, "cmd", s->shell.cmd.src.s);
        if (!s->shell.has_args)
            return;
        a = chk(jb, json_array());
        for (size_t i = 0; i < s->shell.nargs; i++)
            push(jb, a, str(jb, s->shell.args[i].src.s));
        put(jb, o, "args", a);
    } else if (s->kind == LIL_STEP_HTTP) {
        put_str(jb, o, "method", ename(LIL_ENUM_METHOD, (int)s->http.method));
        put_str(jb, o, "url", s->http.url.src.s);
    } else if (s->kind == LIL_STEP_BREAKPOINT) {
        approval_json(jb, o, &s->breakpoint.ask, s->breakpoint.has_strategy,
                      s->breakpoint.strategy, &s->breakpoint.auto_approve_in);
    }
}

static json_t *explain_steps(struct jb *jb, const struct lil_ir_step *v, size_t n)
{
    json_t *a = chk(jb, json_array());

    for (size_t i = 0; i < n && !jb->failed; i++) {
        json_t *o = chk(jb, json_object());

        put_str(jb, o, "id", v[i].id);
        put_str(jb, o, "kind", ename(LIL_ENUM_STEP_KIND, (int)v[i].kind));
        put_str(jb, o, "path", v[i].path);
        put_str(jb, o, "when", v[i].when.src.s);
        put(jb, o, "writes", step_writes(jb, &v[i]));
        step_texts(jb, o, &v[i]);
        if (v[i].kind == LIL_STEP_SLEEP) {
            put_str(jb, o, "for", v[i].sleep.for_.text.s);
            if (v[i].sleep.for_.text.s && v[i].sleep.for_.ok)
                put(jb, o, "for_ms", num(jb, v[i].sleep.for_.ms));
            put_str(jb, o, "until", v[i].sleep.until.src.s);
        }
        if (v[i].kind == LIL_STEP_REDUCE) {
            put_str(jb, o, "over", v[i].reduce.over.src.s);
            put_str(jb, o, "as", v[i].reduce.as.s);
            put(jb, o, "body", explain_steps(jb, v[i].reduce.body, v[i].reduce.nbody));
        }
        push(jb, a, o);
    }
    return a;
}

static json_t *explain_caps(struct jb *jb, const struct lil_ir_spec *ir)
{
    json_t *o = caps_json(jb, ir, true);
    char src[96];

    put(jb, o, "injected", chk(jb, json_boolean(ir->caps.injected)));
    if (ir->caps.injected)
        snprintf(src, sizeof(src), "injected for pattern %s",
                 ename(LIL_ENUM_PATTERN, (int)ir->pattern));
    else
        snprintf(src, sizeof(src), "spec");
    put_str(jb, o, "source", src);
    return o;
}

static json_t *writers_json(struct jb *jb, const struct lil_ir_spec *ir,
                            const struct lil_ir_exit *x)
{
    json_t *o = chk(jb, json_object());

    for (size_t i = 0; i < x->nreads; i++)
        put(jb, o, ir->state.vars[x->reads[i]].name, chk(jb, json_array()));
    for (size_t i = 0; i < x->nwrites && !jb->failed; i++) {
        const struct lil_ir_write *w = &x->writes[i];
        json_t *list = json_object_get(o, ir->state.vars[w->var].name), *e;

        if (!list)
            continue; /* not an exit var */
        e = chk(jb, json_object());
        put_str(jb, e, "step", w->step->id);
        put_str(jb, e, "how", how_name(w->how));
        put_str(jb, e, "kind", ename(LIL_ENUM_STEP_KIND, (int)w->step->kind));
        put(jb, e, "guarded", chk(jb, json_boolean(w->guarded)));
        push(jb, list, e);
    }
    return o;
}

static json_t *on_exit_summary(struct jb *jb, const struct lil_ir_action *a)
{
    json_t *o = chk(jb, json_object());

    put_str(jb, o, "kind", ename(LIL_ENUM_ACTION_KIND, (int)a->kind));
    put_str(jb, o, "cmd", a->cmd.src.s);
    if (a->request.present) {
        put_str(jb, o, "method", ename(LIL_ENUM_METHOD, (int)a->request.method));
        put_str(jb, o, "url", a->request.url.src.s);
    }
    if (a->kind == LIL_ACT_AGENT) {
        put_str(jb, o, "harness", a->harness.s);
        put_str(jb, o, "prompt", a->prompt.src.s);
    }
    return o;
}

static json_t *explain_exit(struct jb *jb, const struct lil_ir_spec *ir,
                            const struct lil_ir_exit *x)
{
    json_t *o, *reads;

    if (!ir->terminate.present)
        return chk(jb, json_null());
    o = chk(jb, json_object());
    reads = chk(jb, json_array());
    put_str(jb, o, "signal", ename(LIL_ENUM_SIGNAL, (int)ir->terminate.signal));
    put_str(jb, o, "until", ir->terminate.until.src.s);
    for (size_t i = 0; i < x->nreads; i++)
        push(jb, reads, str(jb, ir->state.vars[x->reads[i]].name));
    put(jb, o, "reads", reads);
    put(jb, o, "uses_iteration", chk(jb, json_boolean(x->uses_iteration)));
    put_str(jb, o, "grounding", lil__ir_grounding_name(x->grounding));
    put(jb, o, "writers", writers_json(jb, ir, x));
    put(jb, o, "live", chk(jb, json_boolean(x->uses_iteration || x->any_live)));
    if (ir->terminate.on_exit.present)
        put(jb, o, "on_exit", on_exit_summary(jb, &ir->terminate.on_exit));
    return o;
}

/* ------------------------------------------------------------------------ */
/* Explain: gates, hooks, schedule                                          */

static json_t *explain_gates(struct jb *jb, const struct lil_ir_spec *ir)
{
    json_t *a = chk(jb, json_array());
    char name[40];

    for (size_t i = 0; i < ir->ngates && !jb->failed; i++) {
        const struct lil_ir_gate *g = &ir->gates[i];
        json_t *o = chk(jb, json_object());

        snprintf(name, sizeof(name), "gates[%zu]", i);
        put_str(jb, o, "gate", name);
        put(jb, o, "after", str(jb, g->after.s));
        put_str(jb, o, "when", g->when.src.s);
        approval_json(jb, o, &g->ask, g->has_strategy, g->strategy,
                      &g->auto_approve_in);
        push(jb, a, o);
    }
    return a;
}

static json_t *explain_hooks(struct jb *jb, const struct lil_ir_spec *ir)
{
    json_t *o = chk(jb, json_object());
    const struct lil_ir_action *c = &ir->observe.completed;

    put(jb, o, "completed", c->present ? on_exit_summary(jb, c) : chk(jb, json_null()));
    return o;
}

static json_t *time_json(struct jb *jb, int64_t ms)
{
    json_t *o = chk(jb, json_object());
    char iso[LIL_CRON_ISO_CAP];

    lil__cron_iso(ms, iso, sizeof(iso));
    put_str(jb, o, "iso", iso);
    put(jb, o, "epoch_ms", chk(jb, json_integer((json_int_t)ms)));
    return o;
}

/* mode and cron; for mode cron also the time zone, the time counted from
 * and the next (up to) three fire times. */
static json_t *explain_schedule(struct jb *jb, const struct lil_ir_spec *ir,
                                int64_t now_ms)
{
    json_t *o = schedule_json(jb, ir), *next;
    char iso[LIL_CRON_ISO_CAP];
    int64_t t = now_ms;

    if (ir->schedule.mode != LIL_SCHED_CRON || !ir->schedule.cron_ok)
        return o;
    put_str(jb, o, "timezone", "UTC");
    lil__cron_iso(now_ms, iso, sizeof(iso));
    put_str(jb, o, "from", iso);
    put(jb, o, "from_ms", chk(jb, json_integer((json_int_t)now_ms)));
    next = chk(jb, json_array());
    for (int i = 0; i < 3 && lil__cron_next(&ir->schedule.cron_parsed, t, &t); i++)
        push(jb, next, time_json(jb, t));
    put(jb, o, "next", next);
    return o;
}

/* ------------------------------------------------------------------------ */
/* Explain: warnings and remarks                                            */

static json_t *str_or_null(struct jb *jb, const char *s)
{
    return s && *s ? str(jb, s) : chk(jb, json_null());
}

static json_t *count_or_null(struct jb *jb, unsigned v)
{
    return v ? chk(jb, json_integer((json_int_t)v)) : chk(jb, json_null());
}

/* The warnings and notes of validation, in the order of lil_spec_diag. */
static json_t *explain_warnings(struct jb *jb, const struct lil_diags *d)
{
    json_t *a = chk(jb, json_array());

    for (size_t i = 0; d && i < d->n && !jb->failed; i++) {
        const lil_diag *g = &d->v[i].pub;
        json_t *o;

        if (g->severity == LIL_SEV_ERROR)
            continue;
        o = chk(jb, json_object());
        put_str(jb, o, "severity", g->severity == LIL_SEV_WARNING ? "warning" : "info");
        put(jb, o, "code", str_or_null(jb, g->code));
        put(jb, o, "message", str_or_null(jb, g->message));
        put(jb, o, "path", str_or_null(jb, g->path));
        put(jb, o, "line", count_or_null(jb, g->line));
        put(jb, o, "column", count_or_null(jb, g->column));
        push(jb, a, o);
    }
    return a;
}

static void remark(struct jb *jb, json_t *a, const char *code, const char *fmt, ...)
    LIL_PRINTF(4, 5);

static void remark(struct jb *jb, json_t *a, const char *code, const char *fmt, ...)
{
    json_t *o = chk(jb, json_object());
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    put_str(jb, o, "code", code);
    put_str(jb, o, "message", msg);
    push(jb, a, o);
}

/* What lil makes of a breakpoint's or gate's approval settings. */
static void approval_remarks(struct jb *jb, json_t *a, const char *who,
                             bool has_strategy, enum lil_ir_strategy strategy,
                             const struct lil_ir_strlist *auto_in)
{
    if (approves_itself(auto_in))
        remark(jb, a, "auto-approved",
               "%s never pauses: its auto_approve_in holds nonInteractive, which lil "
               "approves without asking",
               who);
    else if (auto_in->present && auto_in->n > 0)
        remark(jb, a, "auto-approve-inert",
               "%s: auto_approve_in has no effect (lil approves without asking only "
               "for nonInteractive, or with --yes); the run pauses until approved",
               who);
    if (has_strategy && strategy != LIL_STRAT_SINGLE)
        remark(jb, a, "strategy-recorded",
               "%s: strategy %s is recorded with the approval; one approval lets the "
               "run go on",
               who, ename(LIL_ENUM_STRATEGY, (int)strategy));
}

static void step_remarks(struct jb *jb, json_t *a, const struct lil_ir_step *v,
                         size_t n)
{
    char who[300];

    for (size_t i = 0; i < n; i++) {
        if (v[i].kind == LIL_STEP_REDUCE)
            step_remarks(jb, a, v[i].reduce.body, v[i].reduce.nbody);
        if (v[i].kind != LIL_STEP_BREAKPOINT)
            continue;
        snprintf(who, sizeof(who), "breakpoint '%.200s'", v[i].id);
        approval_remarks(jb, a, who, v[i].breakpoint.has_strategy,
                         v[i].breakpoint.strategy, &v[i].breakpoint.auto_approve_in);
    }
}

static void schedule_remarks(struct jb *jb, json_t *a, const struct lil_ir_spec *ir,
                             int64_t now_ms)
{
    char show[96], from[LIL_CRON_ISO_CAP];
    const char *cron = ir->schedule.cron.s;
    int64_t t;

    if (!cron || !ir->schedule.cron_ok)
        return;
    lil__ir_show(cron, strlen(cron), show, sizeof(show));
    if (ir->schedule.mode != LIL_SCHED_CRON) {
        remark(jb, a, "cron-unused",
               "schedule.cron '%s' is not used: schedule.mode is %s, not cron", show,
               ename(LIL_ENUM_SCHED_MODE, (int)ir->schedule.mode));
    } else if (!lil__cron_next(&ir->schedule.cron_parsed, now_ms, &t)) {
        lil__cron_iso(now_ms, from, sizeof(from));
        remark(jb, a, "cron-never-fires",
               "schedule.cron '%s' matches no time in the 400 years after %s (a day "
               "such as 30 February?)",
               show, from);
    }
}

static json_t *explain_remarks(struct jb *jb, const struct lil_ir_spec *ir,
                               int64_t now_ms)
{
    json_t *a = chk(jb, json_array());
    char who[40];

    schedule_remarks(jb, a, ir, now_ms);
    step_remarks(jb, a, ir->body, ir->nbody);
    for (size_t i = 0; i < ir->ngates; i++) {
        const struct lil_ir_gate *g = &ir->gates[i];

        snprintf(who, sizeof(who), "gates[%zu]", i);
        approval_remarks(jb, a, who, g->has_strategy, g->strategy, &g->auto_approve_in);
    }
    return a;
}

json_t *lil__ir_explain(const struct lil_ir_spec *ir, const struct lil_diags *d,
                        int64_t now_ms)
{
    struct jb jb = {false};
    struct lil_ir_exit x;
    json_t *o;

    if (lil__ir_exit_analyse(ir, &x) != LIL_OK) {
        lil__ir_exit_free(ir->env, &x);
        return NULL;
    }
    o = chk(&jb, json_object());
    put_str(&jb, o, "id", ir->id.s);
    put_str(&jb, o, "name", ir->meta.name.s);
    put_str(&jb, o, "pattern", ename(LIL_ENUM_PATTERN, (int)ir->pattern));
    put(&jb, o, "long_lived", chk(&jb, json_boolean(ir->caps.long_lived)));
    put(&jb, o, "caps", explain_caps(&jb, ir));
    put(&jb, o, "exit", explain_exit(&jb, ir, &x));
    put(&jb, o, "steps", explain_steps(&jb, ir->body, ir->nbody));
    put(&jb, o, "schedule", explain_schedule(&jb, ir, now_ms));
    put(&jb, o, "gates", explain_gates(&jb, ir));
    put(&jb, o, "hooks", explain_hooks(&jb, ir));
    put(&jb, o, "warnings", explain_warnings(&jb, d));
    put(&jb, o, "remarks", explain_remarks(&jb, ir, now_ms));
    lil__ir_exit_free(ir->env, &x);
    if (jb.failed) {
        json_decref(o);
        return NULL;
    }
    return o;
}
