/*
 * proc_run.c -- a program run to its end (proc.h, lil__proc_run): spawn,
 * publish the child's group, wait with a deadline and an eye on the output
 * caps, kill the group when either is passed, reap, hand over the output.
 *
 * This is the one routine behind every program lil runs for a loop: the
 * shell effect (and the hooks and exit actions, which are shell effects)
 * and the coding-agent CLIs.  The wait goes in slices of at most
 * LIL_PROC_CAP_SLICE_MS when the caps stop the child, so that a stream
 * over its cap is noticed that soon; otherwise in one wait up to the
 * deadline.
 */
#include <limits.h>
#include <string.h>

#include "base/clock.h"
#include "os/proc.h"

#define NS_PER_MS 1000000

static int64_t deadline_of(int64_t timeout_ms)
{
    if (timeout_ms < 0)
        return -1;
    if (timeout_ms > INT64_MAX / NS_PER_MS / 2)
        timeout_ms = INT64_MAX / NS_PER_MS / 2; /* keeps the sum in range */
    return lil__mono_ns() + timeout_ms * NS_PER_MS;
}

/* Milliseconds to wait next (-1: for ever); 0 when the deadline passed. */
static int next_wait(int64_t deadline, bool slices)
{
    int64_t left;

    if (deadline < 0)
        return slices ? LIL_PROC_CAP_SLICE_MS : -1;
    left = deadline - lil__mono_ns();
    if (left <= 0)
        return 0;
    left = (left + NS_PER_MS - 1) / NS_PER_MS;
    if (slices && left > LIL_PROC_CAP_SLICE_MS)
        return LIL_PROC_CAP_SLICE_MS;
    return left > INT_MAX ? INT_MAX : (int)left;
}

static bool over_cap(const struct lil_proc *p)
{
    return lil__proc_output(p, 1)->truncated || lil__proc_output(p, 2)->truncated;
}

/* Wait for the exit; kill the group when the time runs out or (with
 * stop_at_cap) a stream passes its cap.  The child is reaped on LIL_OK. */
static lil_status wait_end(struct lil_proc *p, struct lil_err *err,
                           const struct lil_proc_opts *o, int64_t timeout_ms,
                           int grace_ms, struct lil_proc_result *res)
{
    int64_t deadline = deadline_of(timeout_ms);
    bool timed_out = false;
    lil_status rc;

    for (bool first = true;; first = false) {
        int ms = next_wait(deadline, o->stop_at_cap);
        if (ms == 0 && !first) { /* a first look even with no time at all */
            timed_out = true;
            break;
        }
        rc = lil__proc_wait(p, err, ms, &res->status);
        if (rc != LIL_OK || res->status.ended)
            return rc;
        if (o->stop_at_cap && over_cap(p)) {
            res->over_cap = true;
            break;
        }
    }
    rc = lil__proc_kill(p, err, grace_ms, &res->status);
    res->status.timed_out = timed_out;
    return rc;
}

static void publish(const struct lil_proc_opts *o, pid_t pgid)
{
    if (o->running_pgid && o->group != LIL_PROC_SAME_GROUP)
        __atomic_store_n(o->running_pgid, (int)pgid, __ATOMIC_RELEASE);
}

lil_status lil__proc_run(const struct lil_env *env, struct lil_err *err,
                         const struct lil_proc_opts *opts, int64_t timeout_ms,
                         int grace_ms, struct lil_proc_result *res)
{
    struct lil_proc *p = NULL;
    lil_status rc;

    if (!res)
        return lil__seterr(err, LIL_E_INVAL, 0, "run: res is NULL");
    memset(res, 0, sizeof(*res));
    rc = lil__proc_spawn(env, err, opts, &p);
    if (rc != LIL_OK)
        return rc;
    publish(opts, lil__proc_pid(p)); /* it leads its group */
    rc = wait_end(p, err, opts, timeout_ms, grace_ms, res);
    publish(opts, 0);
    if (rc == LIL_OK) {
        lil__proc_take_output(p, 1, &res->out);
        lil__proc_take_output(p, 2, &res->err);
    } else {
        memset(res, 0, sizeof(*res));
    }
    lil__proc_free(p);
    return rc;
}

void lil__proc_result_free(const struct lil_env *env, struct lil_proc_result *res)
{
    if (!res)
        return;
    lil__proc_output_free(env, &res->out);
    lil__proc_output_free(env, &res->err);
}
