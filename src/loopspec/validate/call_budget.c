/*
 * call_budget.c -- the warning `call-over-budget` (docs/loopspec.md,
 * "Validation"): an agent step whose worst case can never fit the token
 * budget.  A call's worst case is its prompt plus its token limit,
 * AGENT_MAX_TOKENS as the harnesses read it from the environment
 * (docs/loops.md, "Budgets"); a limit alone more than the whole
 * caps.budget.tokens means the call can never start, so the run stops on
 * the token-budget cap at that step whatever is approved.  The prompt's
 * size is known only when it is rendered, and a price only to the agent
 * harnesses: `lil doctor` adds what they know.  A limit that does not
 * parse warns nothing here (the run reports it before the call).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/settings/settings.h"
#include "loopspec/validate/validate.h"

/* AGENT_MAX_TOKENS in force, and the variable it came from (the LIL_ one
 * when the default is in force); false when it does not parse. */
static bool token_limit(long long *limit, char *var, size_t cap)
{
    struct lil_err err;
    const char *value = NULL, *from = NULL;
    char buf[32];
    char *end = NULL;

    memset(&err, 0, sizeof(err));
    if (lil__setting_value(&err, "LIL_AGENT_MAX_TOKENS", &value, &from, buf,
                           sizeof(buf)) != LIL_OK ||
        !value)
        return false;
    *limit = strtoll(value, &end, 10);
    snprintf(var, cap, "%s", from ? from : "LIL_AGENT_MAX_TOKENS");
    return end != value && *limit > 0;
}

static void warn(struct vctx *v, struct lil_pos pos, const char *path, const char *who,
                 long long limit, const char *var)
{
    lil__diag(v->d, LIL_SEV_WARNING, "call-over-budget", pos, path,
              "%s can never start: its worst case, the prompt plus %s %lld tokens, is "
              "more than the whole token budget (%lld): raise caps.budget.tokens or "
              "lower %s",
              who, var, limit, v->ir->caps.budget.tokens, var);
}

static bool costs(const char *harness)
{
    return harness && strcmp(harness, "internal") != 0;
}

static void check_steps(struct vctx *v, const struct lil_ir_step *s, size_t n,
                        long long limit, const char *var)
{
    char who[VALIDATE_PATH_MAX];

    for (size_t i = 0; i < n; i++) {
        if (s[i].kind == LIL_STEP_REDUCE) {
            check_steps(v, s[i].reduce.body, s[i].reduce.nbody, limit, var);
        } else if (s[i].kind == LIL_STEP_AGENT && costs(s[i].agent.harness.s)) {
            snprintf(who, sizeof(who), "agent step '%s'", s[i].id ? s[i].id : "?");
            warn(v, s[i].pos, s[i].path, who, limit, var);
        }
    }
}

void lil__validate_call_budget(struct vctx *v)
{
    const struct lil_ir_spec *ir = v->ir;
    const struct lil_ir_action *a = &ir->terminate.on_exit;
    long long limit = 0;
    char var[64];

    if (!ir->caps.budget.has_tokens || !token_limit(&limit, var, sizeof(var)) ||
        limit <= ir->caps.budget.tokens)
        return;
    check_steps(v, ir->body, ir->nbody, limit, var);
    if (a->present && a->kind == LIL_ACT_AGENT && costs(a->harness.s))
        warn(v, a->pos, "terminate.on_exit", "the exit action's agent call", limit,
             var);
}
