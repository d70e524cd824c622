/*
 * err.c -- error codes plus messages; the calling thread's message slot.
 */
#include "base/err.h"

#include <stdio.h>
#include <string.h>

static _Thread_local struct lil_err thread_err;

lil_status lil__seterr(struct lil_err *err, lil_status code, int sys_errno,
                       const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return code;
    err->code = code;
    err->sys_errno = sys_errno;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return code;
}

void lil__clearerr(struct lil_err *err)
{
    err->code = LIL_OK;
    err->sys_errno = 0;
    err->msg[0] = '\0';
}

void lil__copyerr(struct lil_err *dst, const struct lil_err *src)
{
    if (dst == src)
        return;
    dst->code = src->code;
    dst->sys_errno = src->sys_errno;
    memcpy(dst->msg, src->msg, sizeof(dst->msg));
}

void lil__publish_err(const struct lil_err *err)
{
    lil__copyerr(&thread_err, err);
}

const char *lil_errmsg(void)
{
    return thread_err.msg;
}

const char *lil__errstr(int e)
{
    static _Thread_local char buf[128];

    /* the GNU strerror_r: it returns the text, in buf or a static string */
    return strerror_r(e, buf, sizeof(buf));
}
