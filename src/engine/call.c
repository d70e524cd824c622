/*
 * call.c -- what a step function sets on its call (lil_call_set_result,
 * lil_call_set_json, lil_call_set_jsonf, lil_call_fail): the result bytes,
 * capped by the run's max_record, or the failure's reason.  On an error the
 * call keeps the result it had.
 */
#include "engine/call.h"

#include <stdio.h>
#include <string.h>

#include "engine/run.h"
#include "json/json.h"

#define TOOBIG_MSG "step result is over the run's max_record"

lil_status lil__call_set_result(struct lil_call *call, struct lil_err *err,
                                const void *data, size_t len)
{
    lil_status rc;

    lil__buf_reset(&call->result);
    rc = lil__buf_add(&call->result, data, len);
    if (rc == LIL_E_TOOBIG)
        return lil__seterr(err, rc, 0, TOOBIG_MSG);
    return rc == LIL_OK ? rc : lil__seterr(err, rc, 0, "out of memory");
}

/* A canonical JSON result made in text (cap: the run's max_record) replaces
 * the step's result; on failure the result is left as it was. */
static lil_status set_json_result(struct lil_call *call, struct lil_buf *text,
                                  struct lil_err *err, lil_status rc)
{
    if (rc == LIL_OK) {
        lil__buf_free(&call->result);
        call->result = *text;
        return LIL_OK;
    }
    lil__buf_free(text);
    if (rc == LIL_E_TOOBIG)
        lil__seterr(err, rc, 0, TOOBIG_MSG);
    return rc;
}

lil_status lil__call_set_json(struct lil_call *call, struct lil_err *err,
                              const char *json)
{
    struct lil_buf text;
    lil_status rc;

    lil__buf_init(&text, call->result.env, call->result.cap);
    rc = lil__json_canon_text(call->env, err, json, strlen(json), &text);
    return set_json_result(call, &text, err, rc);
}

lil_status lil__call_set_jsonv(struct lil_call *call, struct lil_err *err,
                               const char *fmt, va_list ap)
{
    struct lil_buf text;
    lil_status rc;

    lil__buf_init(&text, call->result.env, call->result.cap);
    rc = lil__json_canon_vpack(call->env, err, &text, fmt, ap);
    return set_json_result(call, &text, err, rc);
}

lil_status lil__call_failv(struct lil_call *call, struct lil_err *err, const char *fmt,
                           va_list ap)
{
    char msg[1000];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    call->failed = true;
    lil__buf_reset(&call->reason);
    if (lil__buf_addstr(&call->reason, msg) != LIL_OK)
        return lil__seterr(err, LIL_E_NOMEM, 0,
                           "out of memory recording a step's failure");
    return LIL_OK;
}

lil_status lil__call_fail(struct lil_call *call, struct lil_err *err, const char *fmt,
                          ...)
{
    va_list ap;
    lil_status rc;

    va_start(ap, fmt);
    rc = lil__call_failv(call, err, fmt, ap);
    va_end(ap);
    return rc;
}
