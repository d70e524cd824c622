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
 *
 * lil_marker_begin splits the protocol where fn would run: the marker stays
 * entered (pending, other callers waiting) on the heap until lil_call_end
 * publishes the caller's result or lil_call_cancel abandons it.
 */
#include <stddef.h>
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

/* Mark the marker pending (the caller is inside) and prepare call. */
static lil_status marker_start(struct marker *m, struct lil_err *err, unsigned attempt,
                               struct lil_call *call)
{
    char owner[64];
    int n = snprintf(owner, sizeof(owner), "{\"pid\":%ld}", (long)getpid());
    lil_status rc = m->ops->marker_begin(m->sm, err, owner, (size_t)n);

    if (rc == LIL_OK)
        lil__call_init(call, m->st->env, MARKER_SCOPE, m->name, attempt,
                       LIL_DEFAULT_MAX_RECORD);
    return rc;
}

/* The function's outcome is in call: publish its result, or, failed,
 * nothing.  Frees the call. */
static lil_status marker_settle(struct marker *m, struct lil_err *err,
                                struct lil_call *call, lil_bytes *out)
{
    lil_status rc;

    if (call->failed) {
        m->ops->marker_abandon(m->sm, NULL);
        rc = lil__seterr(err, LIL_E_FAILED, 0, "marker '%s' failed: %s", m->name,
                         call->reason.len ? (const char *)call->reason.data
                                          : "the function returned an error");
    } else {
        rc = m->ops->marker_finish(m->sm, err, call->result.data, call->result.len);
        if (rc == LIL_OK && out && lil__buf_export(&call->result, out) != LIL_OK)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    lil__call_free(call);
    return rc;
}

/* A previous holder died inside the marker: the policy decides.  *attempt
 * is 2 when the function must run again, else 0. */
static lil_status in_doubt(struct marker *m, struct lil_err *err, int policy,
                           unsigned *attempt, lil_bytes *out)
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
    *attempt = 2;
    return LIL_OK;
}

/* Inside the marker: its result into out (done), or *attempt set to the
 * attempt number when the function must run (else 0). */
static lil_status marker_decide(struct marker *m, struct lil_err *err, int policy,
                                unsigned *attempt, lil_bytes *out)
{
    enum lil_smarker_state state;
    lil_status rc = m->ops->marker_state(m->sm, err, &state, out);

    *attempt = 0;
    if (rc != LIL_OK || state == LIL_SMARKER_DONE)
        return rc;
    if (state == LIL_SMARKER_PENDING)
        return in_doubt(m, err, policy, attempt, out);
    *attempt = 1;
    return LIL_OK;
}

static lil_status marker_inside(struct marker *m, struct lil_err *err, int policy,
                                lil_fn fn, void *ud, lil_bytes *out)
{
    struct lil_call call;
    unsigned attempt;
    lil_status rc = marker_decide(m, err, policy, &attempt, out);

    if (rc != LIL_OK || attempt == 0)
        return rc;
    rc = marker_start(m, err, attempt, &call);
    if (rc != LIL_OK)
        return rc;
    if (fn(&call, ud) != 0)
        call.failed = true;
    return marker_settle(m, err, &call, out);
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

/* ---- markers in two calls (lil_marker_begin, lil_call_end) -------------------- */

/* A marker held between lil_marker_begin and lil_call_end: the call, the
 * marker, and its name (copied: the caller's string may not live as long). */
struct marker_slot {
    struct lil_call call;
    struct marker m;
    char name[];
};

static struct marker_slot *marker_slot_of(struct lil_call *call)
{
    return (struct marker_slot *)(void *)((char *)call -
                                          offsetof(struct marker_slot, call));
}

static void marker_slot_free(struct marker_slot *slot)
{
    const struct lil_env *env = slot->m.st->env;

    if (slot->m.sm)
        slot->m.ops->marker_leave(slot->m.sm);
    lil__free(env, slot);
}

lil_status lil__marker_begin(struct lil_store *st, struct lil_err *err,
                             const char *name, int policy, struct lil_call **call,
                             lil_bytes *out)
{
    struct marker_slot *slot;
    unsigned attempt = 0;
    lil_status rc = lil__step_name_check(err, name);

    *call = NULL;
    if (rc == LIL_OK && (policy < LIL_MARKER_RETRY || policy > LIL_MARKER_RAISE))
        rc = lil__seterr(err, LIL_E_INVAL, 0, "unknown marker policy %d", policy);
    if (rc != LIL_OK)
        return rc;
    slot = lil__calloc(st->env, 1, sizeof(*slot) + strlen(name) + 1);
    if (!slot)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    memcpy(slot->name, name, strlen(name) + 1);
    rc = marker_enter(&slot->m, err, st, slot->name);
    if (rc == LIL_OK)
        rc = marker_decide(&slot->m, err, policy, &attempt, out);
    if (rc == LIL_OK && attempt > 0)
        rc = marker_start(&slot->m, err, attempt, &slot->call);
    if (rc != LIL_OK || attempt == 0) {
        marker_slot_free(slot);
        return rc;
    }
    slot->call.kind = LIL_CALL_MARKER;
    *call = &slot->call;
    return LIL_OK;
}

struct lil_store *lil__marker_call_store(struct lil_call *call)
{
    return marker_slot_of(call)->m.st;
}

lil_status lil__marker_end(struct lil_call *call, struct lil_err *err, lil_bytes *out)
{
    struct marker_slot *slot = marker_slot_of(call);
    lil_status rc = marker_settle(&slot->m, err, call, out);

    marker_slot_free(slot);
    return rc;
}

lil_status lil__marker_cancel(struct lil_call *call, struct lil_err *err)
{
    struct marker_slot *slot = marker_slot_of(call);
    lil_status rc = slot->m.ops->marker_abandon(slot->m.sm, err);

    lil__call_free(call);
    marker_slot_free(slot);
    return rc;
}
