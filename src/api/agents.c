/*
 * agents.c -- the public calls about agent harnesses: whether a harness
 * can run here, and what the harnesses would use (lil doctor).  Both read
 * this process's environment only; the harnesses are agents/agent.h.
 */
#include "agents/agent.h"
#include "api/entry.h"

lil_status lil_agent_harness_check(const char *harness)
{
    struct lil_err e;

    return lil__api_to_thread(&e, lil__agent_harness_check(&e, harness));
}

lil_status lil_agent_settings(lil_bytes *out)
{
    struct lil_err e;

    if (!out)
        return lil__api_fail(LIL_E_INVAL, "lil_agent_settings: out is NULL");
    lil__api_clear_bytes(out);
    return lil__api_to_thread(&e, lil__agent_settings(&e, out));
}
