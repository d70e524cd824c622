/*
 * validate_top.c -- docs/loopspec.md, "Validation", steps 3 and 4: terminate
 * (presence, guard, weak signal, reachability, grounding, liveness,
 * on_exit), caps, schedule.cron, gates, artifacts, notify, observe; plus
 * lil's own diagnostics: `unmetered-budget` (a token/usd budget that no
 * agent harness can trip) and `unknown-harness` on on_exit.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "loopspec/validate/validate.h"
#include "loopspec/values/artifact.h"

#define SHOW 96

/* ------------------------------------------------------------------------ */
/* terminate                                                                */

/* "[a, b]" of the exit vars into buf. */
static const char *var_list(const struct vctx *v, const struct lil_ir_exit *x,
                            bool only_written, char *buf, size_t cap)
{
    size_t l = 1;

    snprintf(buf, cap, "[");
    for (size_t i = 0, k = 0; i < x->nreads && l + 1 < cap; i++) {
        size_t var = x->reads[i];

        if (only_written && !x->written[var])
            continue;
        snprintf(buf + l, cap - l, "%s%s", k++ ? ", " : "",
                 v->ir->state.vars[var].name);
        l = strlen(buf);
    }
    if (l + 1 < cap)
        snprintf(buf + l, cap - l, "]");
    return buf;
}

static void check_weak_signal(struct vctx *v)
{
    const struct lil_ir_spec *ir = v->ir;
    enum lil_ir_signal sig = ir->terminate.signal;
    const char *name = lil__ir_enum_name(LIL_ENUM_SIGNAL, (int)sig);
    struct lil_pos pos = ir->terminate.signal_pos;

    if (sig != LIL_SIG_SELF_ASSESS && sig != LIL_SIG_LLM_JUDGE)
        return;
    if (ir->caps.injected)
        lil__diag(
            v->d, LIL_SEV_ERROR, "weak-signal", pos, "terminate.signal",
            "terminate.signal '%s' needs explicit caps: the loop may never stop on its "
            "own, so set caps with max_iterations and a budget",
            name);
    else if (sig == LIL_SIG_SELF_ASSESS)
        lil__diag(v->d, LIL_SEV_WARNING, "weak-signal", pos, "terminate.signal",
                  "terminate.signal 'self-assess' is the weakest exit signal: the "
                  "agent grades "
                  "its own work");
    else
        lil__diag(v->d, LIL_SEV_WARNING, "weak-signal", pos, "terminate.signal",
                  "terminate.signal 'llm-judge' can loop on an unsatisfiable rubric: "
                  "keep caps "
                  "tight");
}

static void check_reachability(struct vctx *v, const struct lil_ir_exit *x)
{
    struct lil_pos pos = v->ir->terminate.until.src.pos;
    char list[256];

    if (!x->reads_state && !x->uses_iteration) {
        lil__diag(v->d, LIL_SEV_ERROR, "unreachable-exit", pos, "terminate.until",
                  "terminate.until references no mutable signal (no state var, no "
                  "iteration): "
                  "only a cap can end the loop");
        return;
    }
    /* Only undeclared vars read: bad-ref already says so. */
    if (x->reads_state && !x->any_written && !x->uses_iteration && x->nreads > 0)
        lil__diag(v->d, LIL_SEV_ERROR, "unreachable-exit", pos, "terminate.until",
                  "terminate.until reads state var(s) %s that no step ever writes "
                  "(save, incr, "
                  "set or append)",
                  var_list(v, x, false, list, sizeof(list)));
}

static void check_grounding(struct vctx *v, const struct lil_ir_exit *x)
{
    const struct lil_ir_spec *ir = v->ir;
    struct lil_pos pos = ir->terminate.until.src.pos;
    char list[256];

    if (ir->terminate.signal == LIL_SIG_ORACLE ||
        ir->terminate.signal == LIL_SIG_STATE_PREDICATE) {
        if (x->grounding == LIL_GROUND_AGENT)
            lil__diag(
                v->d, LIL_SEV_WARNING, "ungrounded-exit", pos, "terminate.until",
                "terminate.until is grounded only in agent output (%s): an agent can "
                "claim success; check the result with a shell or http step",
                var_list(v, x, true, list, sizeof(list)));
        else if (x->grounding == LIL_GROUND_MIXED)
            lil__diag(
                v->d, LIL_SEV_INFO, "partially-grounded-exit", pos, "terminate.until",
                "terminate.until is only partly grounded: %s mix agent output with "
                "shell/http results",
                var_list(v, x, true, list, sizeof(list)));
    }
    if (x->reads_state && x->any_written && !x->uses_iteration && !x->any_live)
        lil__diag(
            v->d, LIL_SEV_WARNING, "cap-only-termination", pos, "terminate.until",
            "terminate.until: every top-level writer of %s is guarded by a condition "
            "that nothing makes true, so the loop may only stop on a cap",
            var_list(v, x, true, list, sizeof(list)));
}

static void check_exit_action(struct vctx *v)
{
    const struct lil_ir_action *a = &v->ir->terminate.on_exit;
    const char *need = NULL;

    if (!a->present)
        return;
    if (a->kind == LIL_ACT_HTTP && !a->request.present)
        need = "request";
    else if (a->kind == LIL_ACT_SHELL && !a->cmd.src.s)
        need = "cmd";
    else if (a->kind == LIL_ACT_AGENT && !a->prompt.src.s)
        need = "prompt";
    if (need)
        lil__diag(v->d, LIL_SEV_ERROR, "exit-action", a->pos, "terminate.on_exit",
                  "terminate.on_exit of kind %s requires '%s'",
                  lil__ir_enum_name(LIL_ENUM_ACTION_KIND, (int)a->kind), need);
    lil__validate_tmpl(v, &a->cmd, "terminate.on_exit.cmd");
    lil__validate_cmd_quoting(v, &a->cmd, "terminate.on_exit.cmd");
    lil__validate_http(v, &a->request, "terminate.on_exit.request");
    lil__validate_tmpl(v, &a->prompt, "terminate.on_exit.prompt");
    if (a->kind == LIL_ACT_AGENT && a->harness_given)
        lil__validate_harness(v, &a->harness, "terminate.on_exit.harness");
}

static void check_terminate(struct vctx *v)
{
    const struct lil_ir_spec *ir = v->ir;
    struct lil_ir_exit x;

    if (!ir->terminate.present) {
        lil__diag(
            v->d, LIL_SEV_ERROR, "no-terminate", ir->pos, "terminate",
            "termination predicate required: add terminate with a signal and an until "
            "guard");
        return;
    }
    lil__validate_guard(v, &ir->terminate.until, "terminate.until");
    check_weak_signal(v);
    if (lil__ir_exit_analyse(ir, &x) != LIL_OK) {
        lil__ir_exit_free(ir->env, &x);
        v->nomem = true;
        return;
    }
    if (x.parsed) {
        check_reachability(v, &x);
        check_grounding(v, &x);
    }
    lil__ir_exit_free(ir->env, &x);
    check_exit_action(v);
}

/* ------------------------------------------------------------------------ */
/* caps                                                                     */

static bool meters_usage(const char *harness)
{
    return strcmp(harness, "llm") == 0 || strcmp(harness, "claude-code") == 0 ||
           strcmp(harness, "pi") == 0;
}

/* Count agent steps and those whose harness reports usage. */
static void count_agents(const struct lil_ir_step *s, size_t n, size_t *agents,
                         size_t *metered)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i].kind == LIL_STEP_AGENT && s[i].agent.harness.s) {
            (*agents)++;
            *metered += meters_usage(s[i].agent.harness.s);
        } else if (s[i].kind == LIL_STEP_REDUCE) {
            count_agents(s[i].reduce.body, s[i].reduce.nbody, agents, metered);
        }
    }
}

static void check_unmetered(struct vctx *v)
{
    const struct lil_ir_spec *ir = v->ir;
    size_t agents = 0, metered = 0;
    struct lil_pos pos = ir->caps.injected ? ir->pattern_pos : ir->caps.budget.pos;

    if (!ir->caps.budget.has_tokens && !ir->caps.budget.has_usd)
        return;
    count_agents(ir->body, ir->nbody, &agents, &metered);
    if (agents && !metered)
        lil__diag(v->d, LIL_SEV_INFO, "unmetered-budget", pos, "caps.budget",
                  "caps.budget limits tokens/usd but no agent step uses a harness that "
                  "reports "
                  "usage (llm, claude-code, pi): only max_iterations and wallclock can "
                  "stop it");
}

static void check_caps(struct vctx *v)
{
    const struct lil_ir_spec *ir = v->ir;
    const struct lil_ir_duration *w = &ir->caps.budget.wallclock;
    enum lil_ir_pattern p = ir->pattern;
    const char *pname = lil__ir_enum_name(LIL_ENUM_PATTERN, (int)p);
    char tbuf[SHOW];

    lil__validate_guard(v, &ir->caps.no_progress.fingerprint,
                        "caps.no_progress.fingerprint");
    if (w->text.s && !w->ok)
        lil__diag(
            v->d, LIL_SEV_ERROR, "bad-duration", w->text.pos, "caps.budget.wallclock",
            "caps.budget.wallclock is not a valid duration: '%s' (a number and a unit "
            "ms, s, m, h or d, at most 36500d)",
            lil__ir_show(w->text.s, strlen(w->text.s), tbuf, sizeof(tbuf)));
    if (ir->caps.injected)
        lil__diag(
            v->d, LIL_SEV_INFO, "caps-injected", ir->pattern_pos, "caps",
            "no caps given: injected max_iterations %lld, budget 200000 tokens, $5, "
            "wallclock %s for pattern %s%s",
            ir->caps.max_iterations, w->text.s ? w->text.s : "?", pname,
            ir->caps.long_lived ? " (long-lived)" : "");
    if (!ir->caps.no_progress.present &&
        (p == LIL_PAT_LOOP_UNTIL_DRY || p == LIL_PAT_POLL_UNTIL))
        lil__diag(v->d, LIL_SEV_WARNING, "no-fingerprint",
                  ir->caps.injected ? ir->pattern_pos : ir->caps.pos, "caps",
                  "pattern %s should set caps.no_progress (a fingerprint and "
                  "max_repeats) so a "
                  "loop that stops changing is stopped",
                  pname);
    if (!ir->caps.budget.present)
        lil__diag(v->d, LIL_SEV_WARNING, "no-budget", ir->caps.pos, "caps",
                  "caps has no budget: set caps.budget (tokens, usd, wallclock)");
    check_unmetered(v);
    lil__validate_call_budget(v);
}

/* ------------------------------------------------------------------------ */
/* schedule, gates                                                          */

/* schedule.catch_up, lil's own key (docs/loopspec.md, "Schedules"): what
 * `lil tick` fires for the slots it missed. */
static void check_catch_up(struct vctx *v)
{
    const char *c = v->ir->schedule.catch_up.s;
    char cbuf[SHOW];

    if (c && strcmp(c, "all") != 0 && strcmp(c, "latest") != 0 &&
        strcmp(c, "none") != 0)
        lil__diag(v->d, LIL_SEV_ERROR, "bad-catch-up", v->ir->schedule.catch_up.pos,
                  "schedule.catch_up",
                  "schedule.catch_up '%s' is not all, latest or none",
                  lil__ir_show(c, strlen(c), cbuf, sizeof(cbuf)));
}

static void check_schedule(struct vctx *v)
{
    const struct lil_ir_spec *ir = v->ir;
    char cbuf[SHOW];

    if (ir->schedule.given && ir->schedule.mode == LIL_SCHED_CRON &&
        !ir->schedule.cron.s)
        lil__diag(v->d, LIL_SEV_ERROR, "cron-missing", ir->schedule.pos, "schedule",
                  "schedule.mode is cron but schedule.cron is missing");
    if (ir->schedule.cron.s && !ir->schedule.cron_ok)
        lil__diag(v->d, LIL_SEV_ERROR, "bad-cron", ir->schedule.cron.pos,
                  "schedule.cron",
                  "schedule.cron '%s' is not a valid cron expression: %s",
                  lil__ir_show(ir->schedule.cron.s, strlen(ir->schedule.cron.s), cbuf,
                               sizeof(cbuf)),
                  ir->schedule.cron_why);
    check_catch_up(v);
}

static void check_gates(struct vctx *v)
{
    const struct lil_ir_spec *ir = v->ir;
    char path[64], sub[80], abuf[SHOW];

    for (size_t i = 0; i < ir->ngates; i++) {
        const struct lil_ir_gate *g = &ir->gates[i];

        snprintf(path, sizeof(path), "gates[%zu]", i);
        if (g->after.s && !json_object_get(v->ids, g->after.s))
            lil__diag(v->d, LIL_SEV_ERROR, "gate-ref", g->after.pos, path,
                      "%s.after references unknown step '%s'", path,
                      lil__ir_show(g->after.s, strlen(g->after.s), abuf, sizeof(abuf)));
        snprintf(sub, sizeof(sub), "%s.when", path);
        lil__validate_guard(v, &g->when, sub);
        snprintf(sub, sizeof(sub), "%s.ask", path);
        lil__validate_tmpl(v, &g->ask, sub);
    }
}

/* ------------------------------------------------------------------------ */
/* artifacts, notify, observe                                               */

static void check_patterns(struct vctx *v, const struct lil_ir_strlist *l, bool include)
{
    const char *list = include ? "include" : "exclude";
    char path[64], why[160], pbuf[SHOW];
    json_t *seen = json_object();

    if (!seen) {
        v->nomem = true;
        return;
    }
    for (size_t i = 0; i < l->n; i++) {
        const struct lil_ir_str *p = &l->v[i];
        const char *shown = lil__ir_show(p->s, strlen(p->s), pbuf, sizeof(pbuf));

        snprintf(path, sizeof(path), "artifacts.%s[%zu]", list, i);
        why[0] = '\0';
        if (!lil__artifact_pattern_safe(p->s, include, why, sizeof(why)))
            lil__diag(v->d, LIL_SEV_ERROR,
                      include ? "unsafe-artifact-include" : "unsafe-artifact-exclude",
                      p->pos, path, "%s '%s' is unsafe: %s", path, shown, why);
        if (include && json_object_get(seen, p->s))
            lil__diag(v->d, LIL_SEV_ERROR, "duplicate-artifact-include", p->pos, path,
                      "%s repeats the pattern '%s'", path, shown);
        else if (json_object_set_new(seen, p->s, json_true()) != 0)
            v->nomem = true;
    }
    json_decref(seen);
}

static void check_notify(struct vctx *v)
{
    const struct lil_ir_strlist *l = &v->ir->notify.channels;
    char path[64], cbuf[SHOW];
    json_t *seen = json_object();

    if (!seen) {
        v->nomem = true;
        return;
    }
    for (size_t i = 0; i < l->n; i++) {
        const struct lil_ir_str *c = &l->v[i];
        const char *shown = lil__ir_show(c->s, strlen(c->s), cbuf, sizeof(cbuf));

        snprintf(path, sizeof(path), "notify.channels[%zu]", i);
        if (!lil__notify_channel_safe(c->s))
            lil__diag(v->d, LIL_SEV_ERROR, "unsafe-notify-channel", c->pos, path,
                      "%s '%s' is not a channel name "
                      "(^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$): name "
                      "a channel configured by the operator, never a URL or a secret",
                      path, shown);
        if (json_object_get(seen, c->s))
            lil__diag(v->d, LIL_SEV_ERROR, "duplicate-notify-channel", c->pos, path,
                      "%s repeats the channel '%s'", path, shown);
        else if (json_object_set_new(seen, c->s, json_true()) != 0)
            v->nomem = true;
    }
    json_decref(seen);
}

static void check_observe(struct vctx *v)
{
    const struct lil_ir_spec *ir = v->ir;
    const struct lil_ir_action *h = &ir->observe.completed;

    if (ir->observe.trace == LIL_TRACE_NONE)
        lil__diag(v->d, LIL_SEV_WARNING, "no-trace", ir->observe.trace_pos,
                  "observe.trace",
                  "observe.trace is none: lil journals every run anyway (the key is "
                  "not honoured)");
    if (!h->present)
        return;
    /* Hook templates go through the same reference checks as the rest. */
    lil__validate_tmpl(v, &h->cmd, "observe.hooks.completed.cmd");
    lil__validate_cmd_quoting(v, &h->cmd, "observe.hooks.completed.cmd");
    lil__validate_http(v, &h->request, "observe.hooks.completed.request");
}

void lil__validate_top(struct vctx *v)
{
    v->naliases = 0;
    check_terminate(v);
    if (v->nomem)
        return;
    check_caps(v);
    check_schedule(v);
    check_gates(v);
    if (v->ir->artifacts.present) {
        check_patterns(v, &v->ir->artifacts.include, true);
        check_patterns(v, &v->ir->artifacts.exclude, false);
    }
    if (v->ir->notify.present)
        check_notify(v);
    check_observe(v);
}
