/*
 * retry.h -- the retry policy of effects (docs/loopspec.md, "Retry", with
 * the jitter and ceiling the reference lacks): how many
 * attempts, how long to wait before each retry, and which errors are worth
 * another attempt.  Pure logic: no clock, no sleeping, no I/O; the runner
 * waits and journals.
 *
 * Attempts.  1 + retries, retries = spec `retry.max` (default 0).
 *
 * Delay before retry k (k = 0 for the wait after the first attempt failed,
 * 1 after the second, ...).  The reference waits base x 2^k (base = spec
 * `retry.backoff_ms`, default 1000: 100, 200, 400, ...) with no jitter and
 * no ceiling.  lil takes d = min(base x 2^k, ceiling) and draws the delay
 * with "equal jitter", uniformly in [ceil(d/2), d]:
 *   - the jitter spreads runs that failed together (one server down for
 *     all) so that they do not all come back at the same instant;
 *   - unlike "full jitter" ([0, d]) a retry never comes at once: at least
 *     half the reference's wait always passes, so a struggling server gets
 *     the back-off the spec asked for, halved at worst;
 *   - the ceiling is LIL_RETRY_CEILING_MS (60 s: the spec has no field for
 *     one), or the base itself when the spec's base is longer (the ceiling
 *     never shortens what the spec asked for the first retry).
 * base x 2^k is computed without overflow for any k (it is the ceiling as
 * soon as it would pass it).
 *
 * Randomness.  The delay's random source is passed in (struct lil_rng of
 * base/rng.h, splitmix64: a 64-bit state, no global).  The runner seeds it from the
 * run id and the effect's attempt (lil__rng_key), so a test, and a replay
 * of a run, draw the same delays; the values are not secret and need not
 * be.
 *
 * Which errors are retried.  As in the reference, only errors: an effect
 * that gave a result (a shell command's exit status, its timeout, an HTTP
 * error status) is never retried, whatever the result says.  Among
 * lil_status codes:
 *   - LIL_E_HTTP: no response (a network or TLS error, the timeout, a bad
 *     redirect: effects/effect_http.h) -- the reference's fetch throws these;
 *   - LIL_E_CHILD: a child process that could not be started or waited
 *     for for a passing reason of lil's (EAGAIN, EMFILE: effects/effect_shell.h),
 *     and an agent harness's failure (harnesses report their errors as
 *     LIL_E_CHILD, or LIL_E_HTTP for the llm harness's requests);
 * and nothing else: not lil's own problems, which another attempt would
 * not cure or which must stop the run at once (LIL_E_INVAL, LIL_E_NOMEM,
 * LIL_E_IO -- a journal that failed a write is poisoned, never retried --,
 * LIL_E_TOOBIG, a journal or replay problem, ...), and not LIL_OK.
 *
 * Ownership and threads: plain values, no allocation; a struct lil_rng is
 * used by one thread at a time.
 */
#ifndef LIL_LOOP_RETRY_H
#define LIL_LOOP_RETRY_H

#include <lil/lil.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/rng.h"
#include "loopspec/ir/ir.h"

#define LIL_RETRY_CEILING_MS   60000
#define LIL_RETRY_DEFAULT_BASE 1000 /* ms: the reference's effectRetryBackoffMs */

struct lil_retry_policy {
    int64_t retries;    /* >= 0: attempts after the first */
    int64_t base_ms;    /* >= 0: the wait before retry 0, before jitter */
    int64_t ceiling_ms; /* >= 0: no wait is longer */
};

/* The policy of a normalized IR: retries = retry.max (0), base =
 * retry.backoff_ms (1000), ceiling = max(LIL_RETRY_CEILING_MS, base). */
void lil__retry_policy_from_ir(const struct lil_ir_spec *ir,
                               struct lil_retry_policy *out);

/* 1 + retries (saturating at INT64_MAX; at least 1). */
int64_t lil__retry_attempts(const struct lil_retry_policy *p);

/* Is an effect that failed with s worth another attempt? (see above) */
bool lil__retry_is_retryable(lil_status s);

/* After `attempts_made` attempts (>= 1), the last failing with s: is there
 * another one?  Retryable s and attempts_made < lil__retry_attempts(p). */
bool lil__retry_again(const struct lil_retry_policy *p, int64_t attempts_made,
                      lil_status s);

/* min(base x 2^k, ceiling), no jitter: the longest wait before retry k. */
int64_t lil__retry_backoff_ms(const struct lil_retry_policy *p, uint64_t k);

/* The wait before retry k: uniform in [ceil(d/2), d] with d =
 * lil__retry_backoff_ms(p, k), drawn from rng (NULL: d itself). */
int64_t lil__retry_delay_ms(const struct lil_retry_policy *p, uint64_t k,
                            struct lil_rng *rng);

#endif
