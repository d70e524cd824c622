/*
 * runs.c -- the public calls of a run handle: open and close, its id,
 * error, state and sync, uncertain effects and their resolution, the
 * run's outcome (complete, fail, result), and inspection (records, info,
 * the names of states and record types), and removing a run from its
 * store.  A run handle is refused in a process other than the one that
 * opened it (entry.h).
 */
#include <string.h>

#include "api/entry.h"
#include "engine/run.h"
#include "history/history.h"
#include "json/json.h"
#include "loop/runner.h"

lil_status lil_run_open(lil_store *st, const char *run_id, const lil_run_opts *opts,
                        lil_run **out)
{
    struct lil_err e;
    lil_status rc;

    if (!out)
        return lil__api_fail(LIL_E_INVAL, "lil_run_open: out is NULL");
    *out = NULL;
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    if (opts && opts->struct_size < offsetof(lil_run_opts, max_record))
        return lil__api_fail(LIL_E_INVAL,
                             "lil_run_open: opts->struct_size is too small");
    if (opts && (opts->flags & LIL__OPEN_LIVE_SEGMENT)) /* the library's own */
        rc = lil__seterr(&e, LIL_E_INVAL, 0, "unknown flags 0x%x in lil_run_opts",
                         opts->flags & ~LIL_OPEN_PUBLIC_FLAGS);
    else
        rc = lil__run_open(st, &e, run_id, opts, out);
    rc = lil__api_to_store(st, &e, rc);
    if (rc == LIL_OK)
        __atomic_fetch_add(&st->env->runs_open, 1, __ATOMIC_SEQ_CST);
    return rc;
}

lil_status lil_run_close(lil_run *run)
{
    struct lil_env *env;
    struct lil_err e;
    lil_status rc;

    if (!run)
        return LIL_OK;
    if (run->magic != LIL_RUN_MAGIC)
        return lil__api_bad_run(run);
    env = run->st->env;
    if (!lil__api_run_ok(run)) { /* a forked child: free its copy, write nothing */
        rc = lil__api_bad_run(run);
        lil__run_close(run, NULL);
    } else {
        rc = lil__api_to_thread(&e, lil__run_close(run, &e));
    }
    __atomic_fetch_sub(&env->runs_open, 1, __ATOMIC_SEQ_CST);
    return rc;
}

const char *lil_run_id(const lil_run *run)
{
    return lil__api_run_ok(run) ? run->id : NULL;
}

const char *lil_run_errmsg(const lil_run *run)
{
    return lil__api_run_ok(run) ? run->err.msg : "invalid or closed run handle";
}

int lil_run_errno(const lil_run *run)
{
    return lil__api_run_ok(run) && run->err.code == LIL_E_IO ? run->err.sys_errno : 0;
}

lil_run_state lil_run_status(const lil_run *run)
{
    return lil__api_run_ok(run) ? lil__run_status(run) : (lil_run_state)0;
}

const char *lil_run_state_name(lil_run_state state)
{
    return lil__run_state_name(state);
}

lil_status lil_run_sync(lil_run *run)
{
    struct lil_err e;

    if (!lil__api_run_ok(run))
        return lil__api_bad_run(run);
    return lil__api_to_run(run, &e, run->st->ops->run_sync(run->sr, &e));
}

/* ---- uncertain effects and outcome ------------------------------------------- */

size_t lil_run_uncertain_count(const lil_run *run)
{
    return lil__api_run_ok(run) ? run->n_uncertain : 0;
}

const char *lil_run_uncertain_at(const lil_run *run, size_t i)
{
    return lil__api_run_ok(run) ? lil__run_uncertain_at(run, i) : NULL;
}

/* The arguments of lil_run_resolve, in the order they are checked. */
static lil_status resolve_args(struct lil_err *e, const char *identity,
                               lil_resolution how, const void *result,
                               size_t result_len, const char *actor, const char *reason)
{
    lil_status rc = lil__api_check_text(e, "identity", identity, 255);

    if (rc == LIL_OK)
        rc = lil__api_check_text(e, "actor", actor, 200);
    if (rc == LIL_OK)
        rc = lil__api_check_text(e, "reason", reason, 1000);
    if (rc == LIL_OK && (how < LIL_RESOLVE_RETRY || how > LIL_RESOLVE_ABORT))
        rc = lil__seterr(e, LIL_E_INVAL, 0, "unknown resolution %d", (int)how);
    if (rc == LIL_OK && how != LIL_RESOLVE_ASSUME_DONE && (result || result_len))
        rc = lil__seterr(e, LIL_E_INVAL, 0, "only assume-done takes a result");
    if (rc == LIL_OK && !result && result_len)
        rc = lil__seterr(e, LIL_E_INVAL, 0, "result is NULL with a length");
    return rc;
}

lil_status lil_run_resolve(lil_run *run, const char *identity, lil_resolution how,
                           const void *result, size_t result_len, const char *actor,
                           const char *reason)
{
    struct lil_err e;
    lil_status rc;

    if (!lil__api_run_ok(run))
        return lil__api_bad_run(run);
    rc = resolve_args(&e, identity, how, result, result_len, actor, reason);
    if (rc == LIL_OK)
        rc =
            lil__run_resolve(run, &e, identity, how, result, result_len, actor, reason);
    return lil__api_to_run(run, &e, rc);
}

lil_status lil_run_complete(lil_run *run, const void *result, size_t len)
{
    struct lil_err e;

    if (!lil__api_run_ok(run))
        return lil__api_bad_run(run);
    if (!result && len)
        return lil__api_to_run(
            run, &e, lil__seterr(&e, LIL_E_INVAL, 0, "result is NULL with a length"));
    return lil__api_to_run(run, &e, lil__run_end(run, &e, true, result, len));
}

lil_status lil_run_fail(lil_run *run, const char *reason)
{
    struct lil_err e;

    if (!lil__api_run_ok(run))
        return lil__api_bad_run(run);
    if (lil__api_check_text(&e, "reason", reason, 1000) != LIL_OK)
        return lil__api_to_run(run, &e, e.code);
    return lil__api_to_run(run, &e,
                           lil__run_end(run, &e, false, reason, strlen(reason)));
}

lil_status lil_run_result(lil_run *run, lil_bytes *out)
{
    struct lil_err e;

    if (!out)
        return lil__api_fail(LIL_E_INVAL, "lil_run_result: out is NULL");
    lil__api_clear_bytes(out);
    if (!lil__api_run_ok(run))
        return lil__api_bad_run(run);
    return lil__api_to_run(run, &e, lil__run_result(run, &e, out));
}

/* ---- inspection ------------------------------------------------------------------ */

const char *lil_record_type_name(int type)
{
    return lil__record_type_name(type);
}

lil_status lil_run_foreach(lil_run *run, lil_record_fn fn, void *ud)
{
    struct lil_err e;

    if (!lil__api_run_ok(run))
        return lil__api_bad_run(run);
    if (!fn)
        return lil__api_to_run(run, &e, lil__seterr(&e, LIL_E_INVAL, 0, "fn is NULL"));
    return lil__api_to_run(run, &e, lil__run_foreach(run, &e, fn, ud));
}

lil_status lil_run_get_info(lil_run *run, lil_run_info *info)
{
    struct lil_err e;

    if (!lil__api_run_ok(run))
        return lil__api_bad_run(run);
    if (!info || info->struct_size < offsetof(lil_run_info, keyed))
        return lil__api_to_run(run, &e,
                               lil__seterr(&e, LIL_E_INVAL, 0,
                                           "info is NULL or its struct_size is unset"));
    return lil__api_to_run(run, &e, lil__run_info(run, &e, info));
}

/* ---- removing runs --------------------------------------------------------------- */

/* Whether the facts' status is one a run ends in. */
static bool status_ended(const char *status)
{
    return status && (strcmp(status, "completed") == 0 ||
                      strcmp(status, "failed") == 0 || strcmp(status, "stopped") == 0);
}

/* The run must have ended (its facts, read as lil_run_facts reads them). */
static lil_status check_ended(lil_store *st, struct lil_err *e, const char *run_id)
{
    struct lil_json_scope sc;
    json_t *doc = NULL;
    const char *status;
    lil_status rc;

    lil__api_scope_begin(&sc, st->env);
    rc = lil__history_facts(st, e, run_id, lil__loop_now_ms(), &doc);
    status = rc == LIL_OK ? json_string_value(json_object_get(doc, "status")) : NULL;
    if (rc == LIL_OK && json_is_object(json_object_get(doc, "holder")))
        rc = lil__seterr(e, LIL_E_LOCKED, 0,
                         "run %s is held by pid %lld: it is not removed", run_id,
                         (long long)json_integer_value(
                             json_object_get(json_object_get(doc, "holder"), "pid")));
    else if (rc == LIL_OK && !status_ended(status))
        rc = lil__seterr(e, LIL_E_INVAL, 0,
                         "run %s is %s, not ended (completed, failed or stopped): it "
                         "is not removed (force it to remove it all the same)",
                         run_id, status ? status : "of no known status");
    json_decref(doc);
    return lil__api_scope_end(&sc, e, rc);
}

lil_status lil_run_remove(lil_store *st, const char *run_id, unsigned flags)
{
    struct lil_err e;
    lil_status rc;

    lil__clearerr(&e);
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    rc = lil__run_id_check(&e, run_id);
    if (rc == LIL_OK && (flags & ~(unsigned)LIL_REMOVE_FORCE))
        rc = lil__seterr(&e, LIL_E_INVAL, 0, "lil_run_remove: unknown flags 0x%x",
                         flags);
    if (rc == LIL_OK && !(flags & LIL_REMOVE_FORCE))
        rc = check_ended(st, &e, run_id);
    if (rc == LIL_OK && !st->ops->run_remove)
        rc = lil__seterr(&e, LIL_E_INVAL, 0, "the %s store cannot remove runs",
                         st->ops->name);
    else if (rc == LIL_OK)
        rc = st->ops->run_remove(st, &e, run_id);
    return lil__api_to_store(st, &e, rc);
}
