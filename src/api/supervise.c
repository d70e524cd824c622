/*
 * supervise.c -- the public lil_supervise: its options checked (the
 * policy's rules, then the env handle), then the supervisor
 * (supervise/supervise.h), which returns in each forked child or ends the
 * process.
 */
#include "supervise/supervise.h"

#include "api/entry.h"
#include "supervise/policy.h"

lil_status lil_supervise(const lil_supervise_options *opts)
{
    struct lil_sv_policy pol;
    struct lil_err e;
    lil_status rc = lil__sv_policy_init(&e, opts, &pol);

    if (rc != LIL_OK)
        return lil__api_fail(rc, "%s", e.msg);
    if (opts->env && !lil__api_env_ok(opts->env))
        return lil__api_fail(LIL_E_INVAL, "lil_supervise: invalid env handle");
    return lil__supervise(opts);
}
