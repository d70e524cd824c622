/*
 * settings.c -- the public face of the settings table (base/settings/settings.h):
 * lil_store_location (where a store would be) and lil_setting (the value
 * in force of one variable), so that the CLI and the bindings apply the
 * library's rules instead of reading the environment themselves.
 *
 * Both are plain functions of the process's environment: no handle, the
 * error in the calling thread's slot (lil_errmsg), the result exported
 * for lil_free from the process's allocator.
 */
#include "base/settings/settings.h"

#include <string.h>

#include "api/entry.h"
#include "base/alloc.h"
#include "base/env.h"
#include "os/os.h"
#include "store/store.h"

/* A copy of s for lil_free in *out (NULL for NULL). */
static lil_status export_text(struct lil_err *err, const char *s, char **out)
{
    struct lil_env env;

    *out = NULL;
    if (!s)
        return LIL_OK;
    lil__os_env_init(&env);
    *out = lil__export_copy(&env, s, strlen(s));
    if (!*out)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    return LIL_OK;
}

lil_status lil_store_location(const char *dir, char **out, int *is_pg)
{
    struct lil_err err;
    const char *where;

    lil__clearerr(&err);
    if (is_pg)
        *is_pg = 0;
    if (!out)
        return lil__api_fail(LIL_E_INVAL, "lil_store_location: out is NULL");
    where = lil__setting_store_where(dir);
    if (export_text(&err, where, out) != LIL_OK)
        return lil__api_to_thread(&err, err.code);
    if (is_pg)
        *is_pg = lil__store_pg_location(where) ? 1 : 0;
    return LIL_OK;
}

lil_status lil_setting(const char *name, char **value)
{
    struct lil_err err;
    const char *v = NULL, *from = NULL;
    char buf[32];

    lil__clearerr(&err);
    if (value)
        *value = NULL;
    if (!name || !value)
        return lil__api_fail(LIL_E_INVAL, "lil_setting: name or value is NULL");
    if (lil__setting_value(&err, name, &v, &from, buf, sizeof(buf)) != LIL_OK ||
        export_text(&err, v, value) != LIL_OK)
        return lil__api_to_thread(&err, err.code);
    return LIL_OK;
}
