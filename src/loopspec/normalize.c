/*
 * normalize.c -- defaults and caps injection (docs/loopspec.md, "Structure
 * and normalization").
 *
 *   loopspec ""          -> "0.1"
 *   meta                 -> {name: id, version: "0.1.0", description as given}
 *   target               -> {runtime: standalone, emit: [cli, skill, doctor]}
 *   state.store          -> journal (when state is present)
 *   schedule             -> {mode: manual}
 *   artifacts            -> exclude [], max_files 1000, max_bytes 50000000
 *   observe.trace        -> journal
 *   caps (present)       -> on_cap_exceeded: breakpoint
 *   caps (absent)        -> per pattern: max_iterations (288 when
 *                           long-lived), budget {tokens 200000, usd 5,
 *                           wallclock 24h if long-lived else 1h},
 *                           on_cap_exceeded breakpoint, no no_progress;
 *                           caps.injected = true
 *   reduce.as            -> "item"
 *   on_exit agent        -> harness "llm"
 *
 * Long-lived: pattern poll-until, or schedule.mode forever or watch.
 */
#include <string.h>

#include "base/alloc.h"
#include "loopspec/ir/ir.h"
#include "loopspec/values/duration.h"

#define LONG_LIVED_MAX_ITERATIONS 288

long long lil__ir_injected_max_iterations(enum lil_ir_pattern p, bool long_lived)
{
    if (long_lived)
        return LONG_LIVED_MAX_ITERATIONS;
    switch (p) {
    case LIL_PAT_LOOP_UNTIL_DRY:
        return 50;
    case LIL_PAT_MAP_REDUCE:
    case LIL_PAT_CRON:
        return 100;
    case LIL_PAT_POLL_UNTIL:
        return LONG_LIVED_MAX_ITERATIONS;
    case LIL_PAT_REACT:
    case LIL_PAT_PLAN_EXECUTE_REFLECT:
    case LIL_PAT_EVALUATOR_OPTIMIZER:
        break;
    }
    return 25;
}

/* Give an absent string a default value (position 0:0: not in the file). */
static lil_status default_str(const struct lil_env *env, struct lil_ir_str *s,
                              const char *v)
{
    if (s->s)
        return LIL_OK;
    s->s = lil__strdup(env, v);
    s->pos.line = s->pos.col = 0;
    return s->s ? LIL_OK : LIL_E_NOMEM;
}

static lil_status inject_caps(struct lil_ir_spec *ir)
{
    const char *wall = ir->caps.long_lived ? "24h" : "1h";

    ir->caps.max_iterations =
        lil__ir_injected_max_iterations(ir->pattern, ir->caps.long_lived);
    ir->caps.budget.present = true;
    ir->caps.budget.has_tokens = true;
    ir->caps.budget.tokens = 200000;
    ir->caps.budget.has_usd = true;
    ir->caps.budget.usd = 5.0;
    ir->caps.budget.wallclock.text.s = lil__strdup(ir->env, wall);
    if (!ir->caps.budget.wallclock.text.s)
        return LIL_E_NOMEM;
    ir->caps.budget.wallclock.ok =
        lil__duration_parse(wall, strlen(wall), &ir->caps.budget.wallclock.ms) ==
        LIL_DURATION_OK;
    ir->caps.on_cap_exceeded = LIL_CAPACT_BREAKPOINT;
    return LIL_OK;
}

static lil_status normalize_steps(const struct lil_env *env, struct lil_ir_step *v,
                                  size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].kind != LIL_STEP_REDUCE)
            continue;
        if (default_str(env, &v[i].reduce.as, "item") != LIL_OK)
            return LIL_E_NOMEM;
        if (normalize_steps(env, v[i].reduce.body, v[i].reduce.nbody) != LIL_OK)
            return LIL_E_NOMEM;
    }
    return LIL_OK;
}

static lil_status normalize_strings(struct lil_ir_spec *ir)
{
    const struct lil_env *env = ir->env;

    if (ir->loopspec.s && !*ir->loopspec.s) {
        lil__free(env, ir->loopspec.s);
        ir->loopspec.s = NULL;
    }
    if (default_str(env, &ir->loopspec, "0.1") != LIL_OK ||
        default_str(env, &ir->meta.name, ir->id.s ? ir->id.s : "") != LIL_OK ||
        default_str(env, &ir->meta.version, "0.1.0") != LIL_OK)
        return LIL_E_NOMEM;
    if (ir->terminate.on_exit.present && ir->terminate.on_exit.kind == LIL_ACT_AGENT &&
        default_str(env, &ir->terminate.on_exit.harness, "llm") != LIL_OK)
        return LIL_E_NOMEM;
    return normalize_steps(env, ir->body, ir->nbody);
}

lil_status lil__ir_normalize(struct lil_ir_spec *ir)
{
    if (!ir->target.emit_given) {
        ir->target.emit[0] = LIL_EMIT_CLI;
        ir->target.emit[1] = LIL_EMIT_SKILL;
        ir->target.emit[2] = LIL_EMIT_DOCTOR;
        ir->target.nemit = 3;
    }
    if (ir->artifacts.present) {
        if (!ir->artifacts.exclude.present)
            ir->artifacts.exclude.pos = ir->artifacts.pos;
        ir->artifacts.exclude.present = true;
        if (!ir->artifacts.max_files)
            ir->artifacts.max_files = 1000;
        if (!ir->artifacts.max_bytes)
            ir->artifacts.max_bytes = 50000000;
    }
    ir->caps.long_lived =
        ir->pattern == LIL_PAT_POLL_UNTIL ||
        (ir->schedule.given && (ir->schedule.mode == LIL_SCHED_FOREVER ||
                                ir->schedule.mode == LIL_SCHED_WATCH));
    if (ir->caps.injected && inject_caps(ir) != LIL_OK)
        return LIL_E_NOMEM;
    return normalize_strings(ir);
}
