/*
 * agent_llm.c -- the `llm` harness, an OpenAI-compatible chat completion
 * (agent.h; loopspec-contract.md 6.5).  Not available in this version: a
 * loop whose agent step names it fails before anything is journaled, with a
 * message naming the harness.
 */
#include "loop/agent.h"

lil_status lil__agent_llm_ready(const struct lil_env *env, struct lil_err *err,
                                const struct lil_agent_call *call)
{
    (void)env;
    return lil__seterr(err, LIL_E_INVAL, 0,
                       "agent harness '%s' is not available in this version of lil: "
                       "only 'internal' runs agent steps",
                       call->harness);
}

lil_status lil__agent_llm_call(const struct lil_env *env, struct lil_err *err,
                               const struct lil_agent_call *call, json_t **result,
                               struct lil_agent_usage *usage)
{
    (void)usage;
    *result = NULL;
    return lil__agent_llm_ready(env, err, call);
}
