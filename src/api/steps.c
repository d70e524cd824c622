/*
 * steps.c -- the public calls of steps, effects and markers: in one call
 * (lil_step, lil_effect, lil_marker) or in two (the *_begin calls, then
 * lil_call_end or lil_call_cancel), what a step function sets on its call
 * (lil_call_*), and lil_marker_reset.  An error goes to the run or the
 * store the call belongs to, and to the thread.
 */
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "api/entry.h"
#include "engine/call.h"
#include "engine/run.h"

/* ---- calls ------------------------------------------------------------------ */

/* A call keeps no error: what goes wrong goes to the thread only. */
lil_status lil_call_set_result(lil_call *call, const void *data, size_t len)
{
    struct lil_err e;

    if (!lil__api_call_ok(call) || (!data && len))
        return lil__api_fail(LIL_E_INVAL, "lil_call_set_result: bad call or data");
    return lil__api_to_thread(&e, lil__call_set_result(call, &e, data, len));
}

lil_status lil_call_set_json(lil_call *call, const char *json)
{
    struct lil_err e;

    if (!lil__api_call_ok(call) || !json)
        return lil__api_fail(LIL_E_INVAL, "lil_call_set_json: bad call or NULL json");
    return lil__api_to_thread(&e, lil__call_set_json(call, &e, json));
}

lil_status lil_call_set_jsonf(lil_call *call, const char *fmt, ...)
{
    struct lil_err e;
    va_list ap;
    lil_status rc;

    if (!lil__api_call_ok(call) || !fmt)
        return lil__api_fail(LIL_E_INVAL,
                             "lil_call_set_jsonf: bad call or NULL format");
    va_start(ap, fmt);
    rc = lil__call_set_jsonv(call, &e, fmt, ap);
    va_end(ap);
    return lil__api_to_thread(&e, rc);
}

lil_status lil_call_fail(lil_call *call, const char *fmt, ...)
{
    struct lil_err e;
    va_list ap;
    lil_status rc;

    if (!lil__api_call_ok(call) || !fmt)
        return lil__api_fail(LIL_E_INVAL, "lil_call_fail: bad call or NULL format");
    va_start(ap, fmt);
    rc = lil__call_failv(call, &e, fmt, ap);
    va_end(ap);
    return lil__api_to_thread(&e, rc);
}

const char *lil_call_identity(const lil_call *call)
{
    return lil__api_call_ok(call) ? call->identity : NULL;
}

const char *lil_call_idempotency_key(const lil_call *call)
{
    return lil__api_call_ok(call)
               ? lil__call_idempotency_key((lil_call *)(uintptr_t)call)
               : NULL;
}

unsigned lil_call_attempt(const lil_call *call)
{
    return lil__api_call_ok(call) ? call->attempt : 0;
}

/* ---- steps in one call ------------------------------------------------------- */

static lil_status step_common(lil_run *run, const char *name, bool effect,
                              const void *request, size_t request_len, lil_fn fn,
                              void *ud, lil_bytes *out)
{
    struct lil_err e;

    lil__api_clear_bytes(out);
    if (!lil__api_run_ok(run))
        return lil__api_bad_run(run);
    if (!fn || (!request && request_len))
        return lil__api_to_run(run, &e,
                               lil__seterr(&e, LIL_E_INVAL, 0,
                                           "lil_step/lil_effect: fn is NULL or "
                                           "request is NULL with a length"));
    return lil__api_to_run(
        run, &e,
        lil__run_step(run, &e, name, effect, request, request_len, fn, ud, out));
}

lil_status lil_step(lil_run *run, const char *name, lil_fn fn, void *ud, lil_bytes *out)
{
    return step_common(run, name, false, NULL, 0, fn, ud, out);
}

lil_status lil_effect(lil_run *run, const char *name, const void *request,
                      size_t request_len, lil_fn fn, void *ud, lil_bytes *out)
{
    return step_common(run, name, true, request, request_len, fn, ud, out);
}

/* ---- steps and markers in two calls -------------------------------------------- */

static lil_status begin_common(lil_run *run, const char *name, bool effect,
                               const void *request, size_t request_len, lil_call **call,
                               lil_bytes *out)
{
    struct lil_step_req req = {0};
    struct lil_err e;

    lil__api_clear_bytes(out);
    if (!call)
        return lil__api_fail(LIL_E_INVAL,
                             "lil_step_begin/lil_effect_begin: call is NULL");
    *call = NULL;
    if (!lil__api_run_ok(run))
        return lil__api_bad_run(run);
    if (!request && request_len)
        return lil__api_to_run(
            run, &e,
            lil__seterr(&e, LIL_E_INVAL, 0,
                        "lil_effect_begin: request is NULL with a length"));
    req.effect = effect;
    req.request = effect ? request : NULL;
    req.request_len = effect && request ? request_len : 0;
    return lil__api_to_run(run, &e, lil__step_begin(run, &e, name, &req, call, out));
}

lil_status lil_step_begin(lil_run *run, const char *name, lil_call **call,
                          lil_bytes *out)
{
    return begin_common(run, name, false, NULL, 0, call, out);
}

lil_status lil_effect_begin(lil_run *run, const char *name, const void *request,
                            size_t request_len, lil_call **call, lil_bytes *out)
{
    return begin_common(run, name, true, request, request_len, call, out);
}

lil_status lil_marker_begin(lil_store *st, const char *name, int policy,
                            lil_call **call, lil_bytes *out)
{
    struct lil_err e;

    lil__api_clear_bytes(out);
    if (!call)
        return lil__api_fail(LIL_E_INVAL, "lil_marker_begin: call is NULL");
    *call = NULL;
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    return lil__api_to_store(st, &e,
                             lil__marker_begin(st, &e, name, policy, call, out));
}

/* A call begun in two calls (not one inside a step function). */
static bool begun_ok(const lil_call *call)
{
    return lil__api_call_ok(call) &&
           (call->kind == LIL_CALL_STEP || call->kind == LIL_CALL_MARKER);
}

static lil_status not_begun(const char *what)
{
    return lil__api_fail(LIL_E_INVAL,
                         "%s: not a call begun with lil_step_begin, "
                         "lil_effect_begin or lil_marker_begin",
                         what);
}

/* The end and the cancel free the call: its run or store is taken first. */
lil_status lil_call_end(lil_call *call, lil_bytes *out)
{
    struct lil_store *st;
    struct lil_run *run;
    struct lil_err e;

    lil__api_clear_bytes(out);
    if (!begun_ok(call))
        return not_begun("lil_call_end");
    if (call->kind == LIL_CALL_MARKER) {
        st = lil__marker_call_store(call);
        return lil__api_to_store(st, &e, lil__marker_end(call, &e, out));
    }
    run = lil__step_call_run(call);
    return lil__api_to_run(run, &e, lil__step_end(call, &e, out));
}

lil_status lil_call_cancel(lil_call *call)
{
    struct lil_store *st;
    struct lil_run *run;
    struct lil_err e;

    if (!begun_ok(call))
        return not_begun("lil_call_cancel");
    if (call->kind == LIL_CALL_MARKER) {
        st = lil__marker_call_store(call);
        return lil__api_to_store(st, &e, lil__marker_cancel(call, &e));
    }
    run = lil__step_call_run(call);
    return lil__api_to_run(run, &e, lil__step_cancel(call, &e));
}

/* ---- markers in one call ------------------------------------------------------- */

lil_status lil_marker(lil_store *st, const char *name, int policy, lil_fn fn, void *ud,
                      lil_bytes *out)
{
    struct lil_err e;

    lil__api_clear_bytes(out);
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    if (!fn)
        return lil__api_to_store(
            st, &e, lil__seterr(&e, LIL_E_INVAL, 0, "lil_marker: fn is NULL"));
    return lil__api_to_store(st, &e, lil__marker(st, &e, name, policy, fn, ud, out));
}

lil_status lil_marker_reset(lil_store *st, const char *name)
{
    struct lil_err e;

    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    return lil__api_to_store(st, &e, lil__marker_reset(st, &e, name));
}
