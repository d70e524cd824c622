/*
 * retry.c -- the retry policy of effects (retry.h has the rules).  The
 * random source is base/rng.h's.
 */
#include "loop/retry.h"

/* ------------------------------------------------------------------------ */
/* The policy                                                               */

void lil__retry_policy_from_ir(const struct lil_ir_spec *ir,
                               struct lil_retry_policy *out)
{
    out->retries = 0;
    out->base_ms = LIL_RETRY_DEFAULT_BASE;
    if (ir && ir->retry.present && ir->retry.has_max && ir->retry.max > 0)
        out->retries = (int64_t)ir->retry.max;
    if (ir && ir->retry.present && ir->retry.has_backoff_ms &&
        ir->retry.backoff_ms >= 0)
        out->base_ms = (int64_t)ir->retry.backoff_ms;
    out->ceiling_ms =
        out->base_ms > LIL_RETRY_CEILING_MS ? out->base_ms : LIL_RETRY_CEILING_MS;
}

int64_t lil__retry_attempts(const struct lil_retry_policy *p)
{
    if (p->retries <= 0)
        return 1;
    return p->retries == INT64_MAX ? INT64_MAX : p->retries + 1;
}

bool lil__retry_is_retryable(lil_status s)
{
    return s == LIL_E_HTTP || s == LIL_E_CHILD;
}

bool lil__retry_again(const struct lil_retry_policy *p, int64_t attempts_made,
                      lil_status s)
{
    return lil__retry_is_retryable(s) && attempts_made < lil__retry_attempts(p);
}

int64_t lil__retry_backoff_ms(const struct lil_retry_policy *p, uint64_t k)
{
    int64_t base = p->base_ms, ceiling = p->ceiling_ms;

    if (base <= 0 || ceiling <= 0)
        return 0;
    /* base x 2^k <= ceiling  <=>  base <= floor(ceiling / 2^k) */
    if (k >= 63 || base > (ceiling >> k))
        return ceiling;
    return base << k;
}

int64_t lil__retry_delay_ms(const struct lil_retry_policy *p, uint64_t k,
                            struct lil_rng *rng)
{
    int64_t d = lil__retry_backoff_ms(p, k);

    if (!rng || d == 0)
        return d;
    /* d - U[0, floor(d/2)] = U[ceil(d/2), d] */
    return d - (int64_t)lil__rng_below(rng, (uint64_t)(d / 2) + 1);
}
