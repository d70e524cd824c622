/*
 * marker.c -- a local side effect done exactly once across processes.
 *
 * The store keeps each marker in one of three states (store.h): none,
 * pending (a caller is or was inside) or done (with its result), and lets
 * one caller in at a time.  Protocol: enter (waiting for a caller inside)
 * -> done: return its result -> pending: the holder died inside fn (we are
 * inside now, so it is gone): apply the policy -> mark pending -> fn ->
 * mark done with fn's result -> leave.  Each transition is durable before
 * the store returns, so a crash at any point leaves a state this protocol
 * reads correctly.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "engine/call.h"
#include "engine/run.h"

/* Scope of marker idempotency keys: a run id cannot hold a control
 * character, so no step of any run shares a key with a marker. */
#define MARKER_SCOPE "\x01marker"

struct marker {
    struct lil_store *st;
    const struct lil_store_ops *ops;
    const char *name;
    struct lil_smarker *sm;
};

static lil_status run_marker_fn(struct marker *m, struct lil_err *err, unsigned attempt,
                                lil_fn fn, void *ud, lil_bytes *out)
{
    const struct lil_env *env = m->st->env;
    struct lil_call call;
    char owner[64];
    int n = snprintf(owner, sizeof(owner), "{\"pid\":%ld}", (long)getpid());
    lil_status rc = m->ops->marker_begin(m->sm, err, owner, (size_t)n);

    if (rc != LIL_OK)
        return rc;
    lil__call_init(&call, env, MARKER_SCOPE, m->name, attempt, LIL_DEFAULT_MAX_RECORD);
    if (fn(&call, ud) != 0 || call.failed) {
        m->ops->marker_abandon(m->sm, NULL);
        rc = lil__seterr(err, LIL_E_FAILED, 0, "marker '%s' failed: %s", m->name,
                         call.reason.len ? (const char *)call.reason.data
                                         : "the function returned an error");
    } else {
        rc = m->ops->marker_finish(m->sm, err, call.result.data, call.result.len);
        if (rc == LIL_OK && out && lil__buf_export(&call.result, out) != LIL_OK)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    lil__call_free(&call);
    return rc;
}

static lil_status in_doubt(struct marker *m, struct lil_err *err, int policy, lil_fn fn,
                           void *ud, lil_bytes *out)
{
    if (policy == LIL_MARKER_RAISE)
        return lil__seterr(err, LIL_E_UNCERTAIN, 0,
                           "marker '%s': a previous holder died inside it; its outcome "
                           "is unknown (lil_marker_reset runs it again)",
                           m->name);
    if (policy == LIL_MARKER_ASSUME_DONE) {
        lil_status rc = m->ops->marker_finish(m->sm, err, "", 0);
        if (rc == LIL_OK && out) {
            out->data = lil__export_alloc(m->st->env, 0);
            if (!out->data)
                return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
        }
        return rc;
    }
    return run_marker_fn(m, err, 2, fn, ud, out);
}

static lil_status marker_inside(struct marker *m, struct lil_err *err, int policy,
                                lil_fn fn, void *ud, lil_bytes *out)
{
    enum lil_smarker_state state;
    lil_status rc = m->ops->marker_state(m->sm, err, &state, out);

    if (rc != LIL_OK || state == LIL_SMARKER_DONE)
        return rc;
    if (state == LIL_SMARKER_PENDING)
        return in_doubt(m, err, policy, fn, ud, out);
    return run_marker_fn(m, err, 1, fn, ud, out);
}

static lil_status marker_enter(struct marker *m, struct lil_err *err,
                               struct lil_store *st, const char *name)
{
    lil_status rc = lil__step_name_check(err, name);

    m->st = st;
    m->ops = st->ops;
    m->name = name;
    m->sm = NULL;
    if (rc != LIL_OK)
        return rc;
    return m->ops->marker_enter(st, err, name, &m->sm);
}

lil_status lil__marker(struct lil_store *st, struct lil_err *err, const char *name,
                       int policy, lil_fn fn, void *ud, lil_bytes *out)
{
    struct marker m = {0};
    lil_status rc = lil__step_name_check(err, name);

    if (rc == LIL_OK && (policy < LIL_MARKER_RETRY || policy > LIL_MARKER_RAISE))
        rc = lil__seterr(err, LIL_E_INVAL, 0, "unknown marker policy %d", policy);
    if (rc == LIL_OK)
        rc = marker_enter(&m, err, st, name);
    if (rc == LIL_OK)
        rc = marker_inside(&m, err, policy, fn, ud, out);
    if (m.sm)
        m.ops->marker_leave(m.sm);
    return rc;
}

lil_status lil__marker_reset(struct lil_store *st, struct lil_err *err,
                             const char *name)
{
    struct marker m;
    lil_status rc = marker_enter(&m, err, st, name);

    if (rc == LIL_OK)
        rc = m.ops->marker_clear(m.sm, err);
    if (m.sm)
        m.ops->marker_leave(m.sm);
    return rc;
}
