/*
 * entry.c -- the entry checks of the public functions (entry.h): handle
 * magics, the run's process, out-parameters, texts, errors published to
 * the handle and the thread, the json scope.  Written once; every file of
 * src/api/ uses them instead of a preamble of its own.
 */
#include "api/entry.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/env.h"
#include "base/handles.h"
#include "engine/call.h"
#include "engine/run.h"
#include "loop/runner.h"
#include "loopspec/spec.h"
#include "os/os.h"
#include "queue/queue.h"
#include "store/store.h"

/* ---- handles ------------------------------------------------------------- */

bool lil__api_env_ok(const lil_env *env)
{
    return env && env->magic == LIL_ENV_MAGIC;
}

bool lil__api_store_ok(const lil_store *st)
{
    return st && st->magic == LIL_STORE_MAGIC;
}

bool lil__api_call_ok(const lil_call *call)
{
    return call && call->magic == LIL_CALL_MAGIC;
}

bool lil__api_loop_ok(const lil_loop *lp)
{
    return lp && lp->magic == LIL_LOOP_MAGIC;
}

bool lil__api_spec_ok(const lil_spec *spec)
{
    return spec && spec->magic == LIL_SPEC_MAGIC;
}

bool lil__api_worker_ok(const lil_worker *w)
{
    return w && w->magic == LIL_WORKER_MAGIC;
}

bool lil__api_run_ok(const lil_run *run)
{
    return run && run->magic == LIL_RUN_MAGIC && run->pid == lil__os_self_pid();
}

/* ---- errors -------------------------------------------------------------- */

lil_status lil__api_fail(lil_status code, const char *fmt, ...)
{
    struct lil_err e;
    va_list ap;

    e.code = code;
    e.sys_errno = 0;
    va_start(ap, fmt);
    vsnprintf(e.msg, sizeof(e.msg), fmt, ap);
    va_end(ap);
    lil__publish_err(&e);
    return code;
}

lil_status lil__api_bad_handle(const char *what)
{
    return lil__api_fail(LIL_E_INVAL, "invalid or closed %s handle", what);
}

lil_status lil__api_bad_run(const lil_run *run)
{
    if (!run || run->magic != LIL_RUN_MAGIC)
        return lil__api_bad_handle("run");
    return lil__api_fail(LIL_E_INVAL,
                         "run %s belongs to pid %d, which opened it; this process "
                         "(pid %d) got the handle through fork and may not use it "
                         "(lil_run_close frees its copy only)",
                         run->id, run->pid, lil__os_self_pid());
}

lil_status lil__api_publish(struct lil_err *dst, pthread_mutex_t *mu,
                            const struct lil_err *e, lil_status rc)
{
    if (rc == LIL_OK)
        return rc;
    if (mu)
        pthread_mutex_lock(mu);
    lil__copyerr(dst, e);
    if (mu)
        pthread_mutex_unlock(mu);
    lil__publish_err(e);
    return rc;
}

lil_status lil__api_to_thread(const struct lil_err *e, lil_status rc)
{
    if (rc != LIL_OK)
        lil__publish_err(e);
    return rc;
}

lil_status lil__api_to_store(lil_store *st, const struct lil_err *e, lil_status rc)
{
    return lil__api_publish(&st->err, &st->mu, e, rc);
}

lil_status lil__api_to_run(lil_run *run, const struct lil_err *e, lil_status rc)
{
    return lil__api_publish(&run->err, &run->mu, e, rc);
}

/* ---- out-parameters and texts ---------------------------------------------- */

void lil__api_clear_bytes(lil_bytes *out)
{
    if (out) {
        out->data = NULL;
        out->len = 0;
    }
}

lil_status lil__api_check_text(struct lil_err *e, const char *what, const char *s,
                               size_t max)
{
    if (!s || !*s)
        return lil__seterr(e, LIL_E_INVAL, 0, "%s is required", what);
    if (strlen(s) > max)
        return lil__seterr(e, LIL_E_INVAL, 0, "%s is longer than %zu bytes", what, max);
    return LIL_OK;
}

bool lil__api_text_ok(const char *s, size_t max)
{
    size_t n = s ? strlen(s) : 0;

    if (n == 0 || n > max)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n')
            return true;
    return false;
}

/* ---- json scope -------------------------------------------------------------- */

void lil__api_scope_begin(struct lil_json_scope *sc, const struct lil_env *env)
{
    lil__json_begin(sc, env);
}

lil_status lil__api_scope_end(struct lil_json_scope *sc, struct lil_err *e,
                              lil_status rc)
{
    if (lil__json_end(sc) != LIL_OK && rc == LIL_OK)
        return lil__seterr(e, LIL_E_NOMEM, 0, "out of memory");
    return rc;
}

lil_status lil__api_dump_doc(const struct lil_env *env, struct lil_err *e, json_t *doc,
                             size_t flags, lil_bytes *out)
{
    struct lil_buf text;
    lil_status rc;

    if (!doc)
        return lil__seterr(e, LIL_E_NOMEM, 0, "out of memory");
    lil__buf_init(&text, env, SIZE_MAX);
    rc = lil__json_dump(env, e, doc, flags, &text);
    json_decref(doc);
    if (rc == LIL_OK && lil__buf_export(&text, out) != LIL_OK)
        rc = lil__seterr(e, LIL_E_NOMEM, 0, "out of memory");
    lil__buf_free(&text);
    return rc;
}
