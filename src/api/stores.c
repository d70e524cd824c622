/*
 * stores.c -- the public calls of a store: open and close (an env made for
 * a store opened without one, and freed with it), its location, error and
 * journal key, listing runs, the run-id rule, checking a run's journal,
 * schemas, and moving runs (export, import).
 */
#include <stddef.h>
#include <string.h>

#include "api/entry.h"
#include "base/clock.h"
#include "base/env.h"
#include "loop/runner.h"
#include "store/store.h"

/* The env a call that may be given none uses: *env checked, or a new one
 * (*own: the caller frees it). */
static lil_status env_or_own(lil_env **env, bool *own)
{
    lil_status rc;

    if (*env && !lil__api_env_ok(*env))
        return lil__api_bad_handle("env");
    if (*env)
        return LIL_OK;
    rc = lil_env_new(env);
    *own = rc == LIL_OK;
    return rc;
}

static lil_status store_open(lil_env *env, const char *dir, unsigned flags,
                             lil_store **out)
{
    struct lil_err e;
    bool own = false;
    lil_status rc;

    rc = env_or_own(&env, &own);
    if (rc != LIL_OK)
        return rc;
    rc = lil__store_open(env, &e, dir, flags, out);
    if (rc != LIL_OK) {
        lil__api_publish(&env->err, NULL, &e, rc);
        if (own)
            lil_env_free(env);
        return rc;
    }
    (*out)->own_env = own;
    lil__env_store_opened(env);
    return LIL_OK;
}

lil_status lil_store_open(lil_env *env, const char *dir, lil_store **out)
{
    if (!out)
        return lil__api_fail(LIL_E_INVAL, "lil_store_open: out is NULL");
    *out = NULL;
    return store_open(env, dir, 0, out);
}

lil_status lil_store_open_with(lil_env *env, const char *dir,
                               const lil_store_opts *opts, lil_store **out)
{
    if (!out)
        return lil__api_fail(LIL_E_INVAL, "lil_store_open_with: out is NULL");
    *out = NULL;
    if (opts && opts->struct_size < offsetof(lil_store_opts, flags) + sizeof(unsigned))
        return lil__api_fail(LIL_E_INVAL,
                             "lil_store_open_with: opts->struct_size %zu is too small",
                             opts->struct_size);
    if (opts && (opts->flags & ~LIL_STORE_SHARED))
        return lil__api_fail(LIL_E_INVAL, "lil_store_open_with: unknown flags 0x%x",
                             opts->flags & ~LIL_STORE_SHARED);
    return store_open(env, dir, opts ? opts->flags : 0, out);
}

void lil_store_close(lil_store *st)
{
    struct lil_env *env;
    bool own;

    if (!lil__api_store_ok(st))
        return;
    env = st->env;
    own = st->own_env;
    lil__store_close(st);
    lil__env_store_closed(env);
    if (own)
        lil_env_free(env);
}

const char *lil_store_path(const lil_store *st)
{
    return lil__api_store_ok(st) ? st->where : NULL;
}

const char *lil_store_errmsg(const lil_store *st)
{
    return lil__api_store_ok(st) ? st->err.msg : "invalid or closed store handle";
}

lil_status lil_store_set_key(lil_store *st, const void *key, size_t len)
{
    struct lil_err e;

    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    return lil__api_to_store(
        st, &e, lil__store_set_key(st, &e, len ? key : NULL, key ? len : 0));
}

lil_status lil_store_set_own_key(lil_store *st, int on)
{
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    lil__store_own_key_set(st, on != 0);
    return LIL_OK;
}

lil_status lil_store_foreach_run(lil_store *st, lil_run_id_fn fn, void *ud)
{
    struct lil_err e;

    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    if (!fn)
        return lil__api_fail(LIL_E_INVAL, "lil_store_foreach_run: fn is NULL");
    return lil__api_to_store(st, &e, st->ops->foreach_run(st, &e, fn, ud));
}

/* A stamp this recent may hide a later change in the same tick of the
 * kernel's coarse clock: the list is read again. */
#define STAMP_RECENT_NS 100000000

lil_status lil_store_poll(lil_store *st, int64_t *stamp, int *changed)
{
    struct lil_err e;
    int64_t now_stamp = 0;
    bool coarse = false;
    lil_status rc;

    if (changed)
        *changed = 1;
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    if (!stamp || !changed)
        return lil__api_fail(LIL_E_INVAL, "lil_store_poll: stamp or changed is NULL");
    if (!st->ops->runs_stamp)
        return LIL_OK; /* no cheap look: the caller lists the runs */
    lil__clearerr(&e);
    rc = st->ops->runs_stamp(st, &e, &now_stamp, &coarse);
    if (rc != LIL_OK)
        return lil__api_to_store(st, &e, rc);
    *changed =
        now_stamp != *stamp || (coarse && lil__wall_ns() - now_stamp < STAMP_RECENT_NS);
    *stamp = now_stamp;
    return LIL_OK;
}

lil_status lil_run_id_check(const char *run_id)
{
    struct lil_err e;

    return lil__api_to_thread(&e, lil__run_id_check(&e, run_id));
}

/* ---- checking a run's journal ------------------------------------------------ */

/* Check under a copy of the store's key (lil_store_set_key may replace it
 * meanwhile). */
static lil_status check_with_key(struct lil_store *st, struct lil_err *e,
                                 const char *run_id, bool repair, lil_check_report *r)
{
    uint8_t *key = NULL;
    size_t len = 0;
    lil_status rc = lil__store_key_copy(st, e, &key, &len);

    if (rc == LIL_OK)
        rc = st->ops->check_run(st, e, run_id, key, len, repair, r);
    lil__store_key_free(st, key, len);
    return rc;
}

lil_status lil_run_check(lil_store *st, const char *run_id, unsigned flags,
                         lil_check_report *report)
{
    lil_check_report full;
    struct lil_err e;
    lil_status rc;

    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    if (!report || report->struct_size < offsetof(lil_check_report, message))
        return lil__api_to_store(
            st, &e,
            lil__seterr(&e, LIL_E_INVAL, 0,
                        "report is NULL or its struct_size is unset"));
    if (flags & ~(unsigned)LIL_CHECK_REPAIR)
        return lil__api_to_store(st, &e,
                                 lil__seterr(&e, LIL_E_INVAL, 0,
                                             "unknown flags 0x%x for lil_run_check",
                                             flags & ~(unsigned)LIL_CHECK_REPAIR));
    rc = lil__run_id_check(&e, run_id);
    if (rc != LIL_OK)
        return lil__api_to_store(st, &e, rc);
    memset(&full, 0, sizeof(full));
    full.struct_size = report->struct_size;
    rc = check_with_key(st, &e, run_id, (flags & LIL_CHECK_REPAIR) != 0, &full);
    memcpy(report, &full,
           report->struct_size < sizeof(full) ? report->struct_size : sizeof(full));
    return lil__api_to_store(st, &e, rc);
}

/* ---- schemas, moving runs -------------------------------------------------------- */

lil_status lil_store_schema(lil_env *env, const char *where, int action,
                            lil_schema_info *info)
{
    lil_schema_info full;
    struct lil_err e;
    bool own = false;
    lil_status rc;

    if (!info || info->struct_size < offsetof(lil_schema_info, message))
        return lil__api_fail(
            LIL_E_INVAL, "lil_store_schema: info is NULL or its struct_size is unset");
    rc = env_or_own(&env, &own);
    if (rc != LIL_OK)
        return rc;
    memset(&full, 0, sizeof(full));
    full.struct_size = info->struct_size;
    rc = lil__store_schema(env, &e, where, action, &full);
    memcpy(info, &full,
           info->struct_size < sizeof(full) ? info->struct_size : sizeof(full));
    if (own)
        lil_env_free(env);
    return lil__api_to_thread(&e, rc);
}

lil_status lil_run_export(lil_store *st, const char *run_id, lil_write_fn fn, void *ud)
{
    struct lil_err e;

    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    if (!fn)
        return lil__api_to_store(
            st, &e, lil__seterr(&e, LIL_E_INVAL, 0, "lil_run_export: fn is NULL"));
    return lil__api_to_store(st, &e, lil__store_export(st, &e, run_id, fn, ud));
}

/* The import, then the mark that keeps a loop run it brought in from
 * unattended opens until an operator runs it (loop/runner_bind.c). */
static lil_status import_run(lil_store *st, struct lil_err *e, const void *journal,
                             size_t len, const char *run_id,
                             const struct lil_import_key *src, char **imported_id)
{
    struct lil_json_scope sc;
    char *id = NULL;
    lil_status rc = lil__store_import(st, e, journal, len, run_id, src, &id);

    if (rc == LIL_OK) {
        lil__api_scope_begin(&sc, st->env);
        rc = lil__loop_mark_imported(st, e, id);
        rc = lil__api_scope_end(&sc, e, rc);
    }
    if (rc == LIL_OK && imported_id)
        *imported_id = id;
    else
        lil_free(id);
    return rc;
}

lil_status lil_run_import_keyed(lil_store *st, const void *journal, size_t len,
                                const char *run_id, const void *source_key,
                                size_t source_key_len, char **imported_id)
{
    struct lil_import_key src = {source_key_len ? source_key : NULL,
                                 source_key ? source_key_len : 0};
    struct lil_err e;

    if (imported_id)
        *imported_id = NULL;
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    if (!journal && len)
        return lil__api_to_store(
            st, &e, lil__seterr(&e, LIL_E_INVAL, 0, "lil_run_import: journal is NULL"));
    return lil__api_to_store(
        st, &e, import_run(st, &e, journal, len, run_id, &src, imported_id));
}

lil_status lil_run_import(lil_store *st, const void *journal, size_t len,
                          const char *run_id, char **imported_id)
{
    return lil_run_import_keyed(st, journal, len, run_id, NULL, 0, imported_id);
}
