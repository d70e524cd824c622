/*
 * err.c -- error codes plus messages; the calling thread's message slot;
 * the text and the name of every status.
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

const char *lil__thread_errmsg(void)
{
    return thread_err.msg;
}

const char *lil__errstr(int e)
{
    static _Thread_local char buf[128];

    /* the GNU strerror_r: it returns the text, in buf or a static string */
    return strerror_r(e, buf, sizeof(buf));
}

/* ---- status texts --------------------------------------------------------- */

struct status_text {
    lil_status code;
    const char *name;
    const char *text;
};

static const struct status_text status_texts[] = {
    {LIL_OK, "LIL_OK", "success"},
    {LIL_E_INVAL, "LIL_E_INVAL", "invalid argument or use"},
    {LIL_E_NOMEM, "LIL_E_NOMEM", "out of memory"},
    {LIL_E_IO, "LIL_E_IO", "input/output error"},
    {LIL_E_CORRUPT, "LIL_E_CORRUPT", "journal is damaged"},
    {LIL_E_LOCKED, "LIL_E_LOCKED", "run is held by another process"},
    {LIL_E_POISONED, "LIL_E_POISONED",
     "run is unusable after a failed write; reopen it"},
    {LIL_E_TOOBIG, "LIL_E_TOOBIG", "a limit was exceeded"},
    {LIL_E_SPEC, "LIL_E_SPEC", "invalid loop specification"},
    {LIL_E_HTTP, "LIL_E_HTTP", "HTTP error"},
    {LIL_E_CHILD, "LIL_E_CHILD", "child process error"},
    {LIL_E_PG, "LIL_E_PG", "PostgreSQL error"},
    {LIL_E_VERSION, "LIL_E_VERSION", "journal format is newer than this library"},
    {LIL_E_FAILED, "LIL_E_FAILED", "step failed"},
    {LIL_E_UNCERTAIN, "LIL_E_UNCERTAIN", "an effect's outcome is unknown"},
    {LIL_E_NONDET, "LIL_E_NONDET", "non-deterministic replay"},
    {LIL_E_KEY, "LIL_E_KEY", "journal key missing or wrong"},
    {LIL_E_NOTFOUND, "LIL_E_NOTFOUND", "not found"},
    {LIL_E_DONE, "LIL_E_DONE", "run has ended"},
    {LIL_E_ROLLBACK, "LIL_E_ROLLBACK", "journal rolled back"},
};

static const struct status_text *status_of(lil_status s)
{
    for (size_t i = 0; i < sizeof(status_texts) / sizeof(status_texts[0]); i++)
        if (status_texts[i].code == s)
            return &status_texts[i];
    return NULL;
}

const char *lil__status_text(lil_status s)
{
    const struct status_text *t = status_of(s);

    return t ? t->text : "unknown status";
}

const char *lil__status_name(lil_status s)
{
    const struct status_text *t = status_of(s);

    return t ? t->name : "LIL_E_UNKNOWN";
}
