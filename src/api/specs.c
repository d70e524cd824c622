/*
 * specs.c -- the public lil_spec_* calls: loading a spec (from text or a
 * file), its diagnostics and id, its normalized JSON and explain document,
 * freeing it, and lil_spec_verify (dry runs with mocked effects).  The
 * front end is loopspec/spec.h, the dry runs replay/verify.h.  A spec
 * handle keeps no error: errors go to the calling thread.
 */
#include <string.h>

#include "api/entry.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "loop/runner.h"
#include "loopspec/spec.h"
#include "loopspec/values/cron.h"
#include "replay/verify.h"

lil_status lil_spec_parse(lil_env *env, const char *name, const char *text, size_t len,
                          const lil_spec_limits *lim, lil_spec **out)
{
    struct lil_err e;

    if (!out)
        return lil__api_fail(LIL_E_INVAL, "lil_spec_parse: out is NULL");
    *out = NULL;
    if (!text && len)
        return lil__api_fail(LIL_E_INVAL, "lil_spec_parse: text is NULL");
    if (env && !lil__api_env_ok(env))
        return lil__api_bad_handle("env");
    return lil__api_to_thread(&e, lil__spec_parse(env, &e, name, text, len, lim, out));
}

lil_status lil_spec_load(lil_env *env, const char *path, const lil_spec_limits *lim,
                         lil_spec **out)
{
    struct lil_err e;

    if (!out)
        return lil__api_fail(LIL_E_INVAL, "lil_spec_load: out is NULL");
    *out = NULL;
    if (!path)
        return lil__api_fail(LIL_E_INVAL, "lil_spec_load: path is NULL");
    if (env && !lil__api_env_ok(env))
        return lil__api_bad_handle("env");
    return lil__api_to_thread(&e, lil__spec_load(env, &e, path, lim, out));
}

int lil_spec_ok(const lil_spec *spec)
{
    return lil__spec_ok(spec);
}

size_t lil_spec_diag_count(const lil_spec *spec)
{
    return lil__api_spec_ok(spec) ? lil__spec_diag_count(spec) : 0;
}

const lil_diag *lil_spec_diag(const lil_spec *spec, size_t i)
{
    return lil__api_spec_ok(spec) ? lil__spec_diag(spec, i) : NULL;
}

const char *lil_spec_id(const lil_spec *spec)
{
    return lil__api_spec_ok(spec) ? lil__spec_id(spec) : NULL;
}

lil_status lil_spec_digest(const lil_spec *spec, char out[65])
{
    struct lil_json_scope sc;
    struct lil_err e;
    lil_status rc;

    if (!out)
        return lil__api_fail(LIL_E_INVAL, "out is NULL");
    out[0] = '\0';
    if (!lil__api_spec_ok(spec))
        return lil__api_fail(LIL_E_INVAL, "invalid or freed spec handle");
    lil__clearerr(&e);
    lil__api_scope_begin(&sc, &spec->env);
    rc = lil__loop_spec_digest(spec, &e, out, NULL);
    rc = lil__api_scope_end(&sc, &e, rc);
    return lil__api_to_thread(&e, rc);
}

void lil_spec_free(lil_spec *spec)
{
    if (lil__api_spec_ok(spec))
        lil__spec_free(spec);
}

/* ---- exports: the normalized JSON, the explain document ----------------------- */

/* The checks of an export: out set (and emptied), a live handle. */
static lil_status export_ok(const lil_spec *spec, lil_bytes *out)
{
    if (!out)
        return lil__api_fail(LIL_E_INVAL, "out is NULL");
    lil__api_clear_bytes(out);
    if (!lil__api_spec_ok(spec))
        return lil__api_fail(LIL_E_INVAL, "invalid or freed spec handle");
    return LIL_OK;
}

lil_status lil_spec_json(const lil_spec *spec, lil_bytes *out)
{
    struct lil_err e;
    lil_status rc = export_ok(spec, out);

    return rc != LIL_OK ? rc : lil__api_to_thread(&e, lil__spec_json(spec, &e, out));
}

lil_status lil_spec_explain_at(const lil_spec *spec, int64_t now_ms, lil_bytes *out)
{
    struct lil_err e;
    lil_status rc = export_ok(spec, out);

    if (rc != LIL_OK)
        return rc;
    if (now_ms < 0 || now_ms > LIL_CRON_MAX_MS)
        return lil__api_fail(LIL_E_INVAL,
                             "now_ms is not between 1970 and the end of 9999");
    return lil__api_to_thread(&e, lil__spec_explain_at(spec, &e, now_ms, out));
}

lil_status lil_spec_explain(const lil_spec *spec, lil_bytes *out)
{
    return lil_spec_explain_at(spec, lil__wall_ns() / 1000000, out);
}

/* ---- verify ---------------------------------------------------------------------- */

/* The arguments of lil_spec_verify, in the order they are checked. */
static lil_status verify_args(struct lil_err *e, lil_env *env, const lil_spec *spec,
                              const lil_bytes *report_json)
{
    if (!report_json || !lil__api_spec_ok(spec) || !lil__spec_ir(spec))
        return lil__seterr(e, LIL_E_INVAL, 0,
                           "lil_spec_verify: NULL or invalid argument");
    if (env && !lil__api_env_ok(env))
        return lil__seterr(e, LIL_E_INVAL, 0, "invalid or closed env handle");
    if (!lil__spec_ok(spec))
        return lil__seterr(
            e, LIL_E_SPEC, 0,
            "the spec has errors: `lil validate` shows them; nothing was run");
    return LIL_OK;
}

lil_status lil_spec_verify(lil_env *env, const lil_spec *spec,
                           const char *fixtures_json, lil_bytes *report_json)
{
    struct lil_json_scope sc;
    struct lil_err e;
    lil_env *own = NULL;
    lil_status rc;

    lil__clearerr(&e);
    lil__api_clear_bytes(report_json);
    rc = verify_args(&e, env, spec, report_json);
    if (rc == LIL_OK && !env && (rc = lil_env_new(&own)) != LIL_OK)
        rc = lil__seterr(&e, rc, 0, "out of memory");
    if (rc == LIL_OK) {
        env = env ? env : own;
        lil__api_scope_begin(&sc, env);
        rc = lil__spec_verify(env, &e, spec, fixtures_json, report_json);
        if ((rc = lil__api_scope_end(&sc, &e, rc)) != LIL_OK) {
            lil__export_free(report_json->data);
            lil__api_clear_bytes(report_json);
        }
    }
    lil_env_free(own);
    return lil__api_to_thread(&e, rc);
}
