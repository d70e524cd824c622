/*
 * api.c -- the public API: argument checks, handle states, and publishing
 * errors (to the handle and to the calling thread).  Everything else is
 * done by the layers below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "engine/call.h"
#include "engine/run.h"
#include "json/json.h"
#include "os/os.h"

/* ---- status codes ------------------------------------------------------ */

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
};

static const struct status_text *status_of(lil_status s)
{
    for (size_t i = 0; i < sizeof(status_texts) / sizeof(status_texts[0]); i++)
        if (status_texts[i].code == s)
            return &status_texts[i];
    return NULL;
}

const char *lil_strerror(lil_status s)
{
    const struct status_text *t = status_of(s);

    return t ? t->text : "unknown status";
}

const char *lil_status_name(lil_status s)
{
    const struct status_text *t = status_of(s);

    return t ? t->name : "LIL_E_UNKNOWN";
}

const char *lil_version(void)
{
    return LIL_VERSION;
}

/* ---- error plumbing ------------------------------------------------------ */

static lil_status fail_plain(lil_status code, const char *msg)
{
    struct lil_err e;

    lil__seterr(&e, code, 0, "%s", msg);
    lil__publish_err(&e);
    return code;
}

static lil_status to_store(struct lil_store *st, const struct lil_err *e, lil_status rc)
{
    if (rc != LIL_OK) {
        pthread_mutex_lock(&st->mu);
        lil__copyerr(&st->err, e);
        pthread_mutex_unlock(&st->mu);
        lil__publish_err(e);
    }
    return rc;
}

static lil_status to_run(struct lil_run *run, const struct lil_err *e, lil_status rc)
{
    if (rc != LIL_OK) {
        pthread_mutex_lock(&run->mu);
        lil__copyerr(&run->err, e);
        pthread_mutex_unlock(&run->mu);
        lil__publish_err(e);
    }
    return rc;
}

static bool env_ok(const lil_env *env)
{
    return env && env->magic == LIL_ENV_MAGIC;
}

static bool store_ok(const lil_store *st)
{
    return st && st->magic == LIL_STORE_MAGIC;
}

/* A run handle is usable only in the process that opened it (lil.h,
 * lil_run_open): in a child forked since, it is refused like a bad one. */
static bool run_ok(const lil_run *run)
{
    return run && run->magic == LIL_RUN_MAGIC && run->pid == lil__os_self_pid();
}

static bool call_ok(const lil_call *call)
{
    return call && call->magic == LIL_CALL_MAGIC;
}

#define BAD_HANDLE(what) fail_plain(LIL_E_INVAL, "invalid or closed " what " handle")

/* The error for a run handle that fails run_ok. */
static lil_status bad_run(const lil_run *run)
{
    struct lil_err e;

    if (!run || run->magic != LIL_RUN_MAGIC)
        return BAD_HANDLE("run");
    lil__seterr(&e, LIL_E_INVAL, 0,
                "run %s belongs to pid %d, which opened it; this process (pid %d) "
                "got the handle through fork and may not use it (lil_run_close "
                "frees its copy only)",
                run->id, run->pid, lil__os_self_pid());
    lil__publish_err(&e);
    return LIL_E_INVAL;
}

/* ---- env ----------------------------------------------------------------- */

lil_status lil_env_new(lil_env **out)
{
    struct lil_env *env;

    if (!out)
        return fail_plain(LIL_E_INVAL, "lil_env_new: out is NULL");
    *out = NULL;
    env = malloc(sizeof(*env));
    if (!env)
        return fail_plain(LIL_E_NOMEM, "out of memory");
    lil__os_env_init(env);
    *out = env;
    return LIL_OK;
}

void lil_env_free(lil_env *env)
{
    if (!env_ok(env))
        return;
    env->magic = 0;
    free(env);
}

lil_status lil_env_set_allocator(lil_env *env, lil_malloc_fn malloc_fn,
                                 lil_realloc_fn realloc_fn, lil_free_fn free_fn,
                                 void *ud)
{
    if (!env_ok(env))
        return BAD_HANDLE("env");
    if (!malloc_fn || !realloc_fn || !free_fn)
        return fail_plain(LIL_E_INVAL,
                          "lil_env_set_allocator needs all three functions");
    if (__atomic_load_n(&env->stores_open, __ATOMIC_SEQ_CST) > 0)
        return fail_plain(LIL_E_INVAL,
                          "lil_env_set_allocator: a store is open with this env");
    env->malloc_fn = malloc_fn;
    env->realloc_fn = realloc_fn;
    env->free_fn = free_fn;
    env->alloc_ud = ud;
    return LIL_OK;
}

lil_status lil_env_set_log(lil_env *env, lil_log_fn fn, void *ud, int min_level)
{
    if (!env_ok(env))
        return BAD_HANDLE("env");
    env->log_fn = fn;
    env->log_ud = ud;
    env->log_level = min_level;
    return LIL_OK;
}

/* ---- store ----------------------------------------------------------------- */

lil_status lil_store_open(lil_env *env, const char *dir, lil_store **out)
{
    struct lil_err e;
    bool own = false;
    lil_status rc;

    if (!out)
        return fail_plain(LIL_E_INVAL, "lil_store_open: out is NULL");
    *out = NULL;
    if (env && !env_ok(env))
        return BAD_HANDLE("env");
    if (!env) {
        rc = lil_env_new(&env);
        if (rc != LIL_OK)
            return rc;
        own = true;
    }
    rc = lil__store_open(env, &e, dir, out);
    if (rc != LIL_OK) {
        lil__copyerr(&env->err, &e);
        lil__publish_err(&e);
        if (own)
            lil_env_free(env);
        return rc;
    }
    (*out)->own_env = own;
    __atomic_fetch_add(&env->stores_open, 1, __ATOMIC_SEQ_CST);
    return LIL_OK;
}

void lil_store_close(lil_store *st)
{
    struct lil_env *env;
    bool own;

    if (!store_ok(st))
        return;
    env = st->env;
    own = st->own_env;
    lil__store_close(st);
    __atomic_fetch_sub(&env->stores_open, 1, __ATOMIC_SEQ_CST);
    if (own)
        lil_env_free(env);
}

const char *lil_store_path(const lil_store *st)
{
    return store_ok(st) ? st->where : NULL;
}

const char *lil_store_errmsg(const lil_store *st)
{
    return store_ok(st) ? st->err.msg : "invalid or closed store handle";
}

lil_status lil_store_set_key(lil_store *st, const void *key, size_t len)
{
    struct lil_err e;

    if (!store_ok(st))
        return BAD_HANDLE("store");
    return to_store(st, &e,
                    lil__store_set_key(st, &e, len ? key : NULL, key ? len : 0));
}

lil_status lil_store_foreach_run(lil_store *st, lil_run_id_fn fn, void *ud)
{
    struct lil_err e;

    if (!store_ok(st))
        return BAD_HANDLE("store");
    if (!fn)
        return fail_plain(LIL_E_INVAL, "lil_store_foreach_run: fn is NULL");
    return to_store(st, &e, st->ops->foreach_run(st, &e, fn, ud));
}

lil_status lil_run_id_check(const char *run_id)
{
    struct lil_err e;
    lil_status rc = lil__run_id_check(&e, run_id);

    if (rc != LIL_OK)
        lil__publish_err(&e);
    return rc;
}

/* ---- runs ------------------------------------------------------------------- */

lil_status lil_run_open(lil_store *st, const char *run_id, const lil_run_opts *opts,
                        lil_run **out)
{
    struct lil_err e;
    lil_status rc;

    if (!out)
        return fail_plain(LIL_E_INVAL, "lil_run_open: out is NULL");
    *out = NULL;
    if (!store_ok(st))
        return BAD_HANDLE("store");
    if (opts && opts->struct_size < offsetof(lil_run_opts, max_record))
        return fail_plain(LIL_E_INVAL, "lil_run_open: opts->struct_size is too small");
    rc = to_store(st, &e, lil__run_open(st, &e, run_id, opts, out));
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
        return bad_run(run);
    env = run->st->env;
    if (!run_ok(run)) { /* a forked child: free its copy, write nothing */
        rc = bad_run(run);
        lil__run_close(run, NULL);
    } else if ((rc = lil__run_close(run, &e)) != LIL_OK) {
        lil__publish_err(&e);
    }
    __atomic_fetch_sub(&env->runs_open, 1, __ATOMIC_SEQ_CST);
    return rc;
}

const char *lil_run_id(const lil_run *run)
{
    return run_ok(run) ? run->id : NULL;
}

const char *lil_run_errmsg(const lil_run *run)
{
    return run_ok(run) ? run->err.msg : "invalid or closed run handle";
}

int lil_run_errno(const lil_run *run)
{
    return run_ok(run) && run->err.code == LIL_E_IO ? run->err.sys_errno : 0;
}

lil_run_state lil_run_status(const lil_run *run)
{
    lil_run_state s;

    if (!run_ok(run))
        return (lil_run_state)0;
    pthread_mutex_lock((pthread_mutex_t *)(uintptr_t)&run->mu);
    s = run->state;
    pthread_mutex_unlock((pthread_mutex_t *)(uintptr_t)&run->mu);
    return s;
}

const char *lil_run_state_name(lil_run_state state)
{
    switch (state) {
    case LIL_RUN_RUNNING:
        return "running";
    case LIL_RUN_COMPLETED:
        return "completed";
    case LIL_RUN_FAILED:
        return "failed";
    case LIL_RUN_UNCERTAIN:
        return "uncertain";
    case LIL_RUN_STOPPED:
        return "stopped";
    default:
        return "unknown";
    }
}

lil_status lil_run_sync(lil_run *run)
{
    struct lil_err e;

    if (!run_ok(run))
        return bad_run(run);
    return to_run(run, &e, run->st->ops->run_sync(run->sr, &e));
}

/* ---- calls ------------------------------------------------------------------ */

lil_status lil_call_set_result(lil_call *call, const void *data, size_t len)
{
    lil_status rc;

    if (!call_ok(call) || (!data && len))
        return fail_plain(LIL_E_INVAL, "lil_call_set_result: bad call or data");
    lil__buf_reset(&call->result);
    rc = lil__buf_add(&call->result, data, len);
    if (rc == LIL_E_TOOBIG)
        return fail_plain(rc, "step result is over the run's max_record");
    return rc == LIL_OK ? rc : fail_plain(rc, "out of memory");
}

/* A canonical JSON result made in text (cap: the run's max_record) replaces
 * the step's result; on failure the result is left as it was. */
static lil_status set_json_result(lil_call *call, struct lil_buf *text,
                                  struct lil_err *e, lil_status rc)
{
    if (rc == LIL_OK) {
        lil__buf_free(&call->result);
        call->result = *text;
        return LIL_OK;
    }
    lil__buf_free(text);
    if (rc == LIL_E_TOOBIG)
        lil__seterr(e, rc, 0, "step result is over the run's max_record");
    lil__publish_err(e);
    return rc;
}

lil_status lil_call_set_json(lil_call *call, const char *json)
{
    struct lil_buf text;
    struct lil_err e;
    lil_status rc;

    if (!call_ok(call) || !json)
        return fail_plain(LIL_E_INVAL, "lil_call_set_json: bad call or NULL json");
    lil__buf_init(&text, call->result.env, call->result.cap);
    rc = lil__json_canon_text(call->env, &e, json, strlen(json), &text);
    return set_json_result(call, &text, &e, rc);
}

lil_status lil_call_set_jsonf(lil_call *call, const char *fmt, ...)
{
    struct lil_buf text;
    va_list ap;
    lil_status rc;
    struct lil_err e;

    if (!call_ok(call) || !fmt)
        return fail_plain(LIL_E_INVAL, "lil_call_set_jsonf: bad call or NULL format");
    lil__buf_init(&text, call->result.env, call->result.cap);
    va_start(ap, fmt);
    rc = lil__json_canon_vpack(call->env, &e, &text, fmt, ap);
    va_end(ap);
    return set_json_result(call, &text, &e, rc);
}

lil_status lil_call_fail(lil_call *call, const char *fmt, ...)
{
    char msg[1000];
    va_list ap;

    if (!call_ok(call) || !fmt)
        return fail_plain(LIL_E_INVAL, "lil_call_fail: bad call or NULL format");
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    call->failed = true;
    lil__buf_reset(&call->reason);
    if (lil__buf_addstr(&call->reason, msg) != LIL_OK)
        return fail_plain(LIL_E_NOMEM, "out of memory recording a step's failure");
    return LIL_OK;
}

const char *lil_call_identity(const lil_call *call)
{
    return call_ok(call) ? call->identity : NULL;
}

const char *lil_call_idempotency_key(const lil_call *call)
{
    return call_ok(call) ? lil__call_idempotency_key((lil_call *)(uintptr_t)call)
                         : NULL;
}

unsigned lil_call_attempt(const lil_call *call)
{
    return call_ok(call) ? call->attempt : 0;
}

/* ---- steps -------------------------------------------------------------------- */

static lil_status step_common(lil_run *run, const char *name, bool effect,
                              const void *request, size_t request_len, lil_fn fn,
                              void *ud, lil_bytes *out)
{
    struct lil_err e;

    if (out) {
        out->data = NULL;
        out->len = 0;
    }
    if (!run_ok(run))
        return bad_run(run);
    if (!fn || (!request && request_len))
        return to_run(run, &e,
                      lil__seterr(&e, LIL_E_INVAL, 0,
                                  "lil_step/lil_effect: fn is NULL or request "
                                  "is NULL with a length"));
    return to_run(
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

    if (out) {
        out->data = NULL;
        out->len = 0;
    }
    if (!call)
        return fail_plain(LIL_E_INVAL, "lil_step_begin/lil_effect_begin: call is NULL");
    *call = NULL;
    if (!run_ok(run))
        return bad_run(run);
    if (!request && request_len)
        return to_run(run, &e,
                      lil__seterr(&e, LIL_E_INVAL, 0,
                                  "lil_effect_begin: request is NULL with a length"));
    req.effect = effect;
    req.request = effect ? request : NULL;
    req.request_len = effect && request ? request_len : 0;
    return to_run(run, &e, lil__step_begin(run, &e, name, &req, call, out));
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

    if (out) {
        out->data = NULL;
        out->len = 0;
    }
    if (!call)
        return fail_plain(LIL_E_INVAL, "lil_marker_begin: call is NULL");
    *call = NULL;
    if (!store_ok(st))
        return BAD_HANDLE("store");
    return to_store(st, &e, lil__marker_begin(st, &e, name, policy, call, out));
}

/* A call begun in two calls (not one inside a step function). */
static bool begun_ok(const lil_call *call)
{
    return call_ok(call) &&
           (call->kind == LIL_CALL_STEP || call->kind == LIL_CALL_MARKER);
}

#define NOT_BEGUN(what)                                                     \
    fail_plain(LIL_E_INVAL, what ": not a call begun with lil_step_begin, " \
                                 "lil_effect_begin or lil_marker_begin")

/* The end and the cancel free the call: its run or store is taken first. */
lil_status lil_call_end(lil_call *call, lil_bytes *out)
{
    struct lil_store *st;
    struct lil_run *run;
    struct lil_err e;

    if (out) {
        out->data = NULL;
        out->len = 0;
    }
    if (!begun_ok(call))
        return NOT_BEGUN("lil_call_end");
    if (call->kind == LIL_CALL_MARKER) {
        st = lil__marker_call_store(call);
        return to_store(st, &e, lil__marker_end(call, &e, out));
    }
    run = lil__step_call_run(call);
    return to_run(run, &e, lil__step_end(call, &e, out));
}

lil_status lil_call_cancel(lil_call *call)
{
    struct lil_store *st;
    struct lil_run *run;
    struct lil_err e;

    if (!begun_ok(call))
        return NOT_BEGUN("lil_call_cancel");
    if (call->kind == LIL_CALL_MARKER) {
        st = lil__marker_call_store(call);
        return to_store(st, &e, lil__marker_cancel(call, &e));
    }
    run = lil__step_call_run(call);
    return to_run(run, &e, lil__step_cancel(call, &e));
}

/* ---- uncertain effects and outcome ------------------------------------------- */

size_t lil_run_uncertain_count(const lil_run *run)
{
    return run_ok(run) ? run->n_uncertain : 0;
}

const char *lil_run_uncertain_at(const lil_run *run, size_t i)
{
    lil_run *r = (lil_run *)(uintptr_t)run;
    size_t n;

    if (!run_ok(run) || i >= run->n_uncertain)
        return NULL;
    n = r->index.entries[r->uncertain[i]].key_len;
    if (n >= sizeof(r->scratch))
        n = sizeof(r->scratch) - 1;
    memcpy(r->scratch, r->index.entries[r->uncertain[i]].key, n);
    r->scratch[n] = '\0';
    return r->scratch;
}

static lil_status check_text(struct lil_err *e, const char *what, const char *s,
                             size_t max)
{
    if (!s || !*s)
        return lil__seterr(e, LIL_E_INVAL, 0, "%s is required", what);
    if (strlen(s) > max)
        return lil__seterr(e, LIL_E_INVAL, 0, "%s is longer than %zu bytes", what, max);
    return LIL_OK;
}

lil_status lil_run_resolve(lil_run *run, const char *identity, lil_resolution how,
                           const void *result, size_t result_len, const char *actor,
                           const char *reason)
{
    struct lil_err e;
    lil_status rc;

    if (!run_ok(run))
        return bad_run(run);
    rc = check_text(&e, "identity", identity, 255);
    if (rc == LIL_OK)
        rc = check_text(&e, "actor", actor, 200);
    if (rc == LIL_OK)
        rc = check_text(&e, "reason", reason, 1000);
    if (rc == LIL_OK && (how < LIL_RESOLVE_RETRY || how > LIL_RESOLVE_ABORT))
        rc = lil__seterr(&e, LIL_E_INVAL, 0, "unknown resolution %d", (int)how);
    if (rc == LIL_OK && how != LIL_RESOLVE_ASSUME_DONE && (result || result_len))
        rc = lil__seterr(&e, LIL_E_INVAL, 0, "only assume-done takes a result");
    if (rc == LIL_OK && !result && result_len)
        rc = lil__seterr(&e, LIL_E_INVAL, 0, "result is NULL with a length");
    if (rc == LIL_OK)
        rc =
            lil__run_resolve(run, &e, identity, how, result, result_len, actor, reason);
    return to_run(run, &e, rc);
}

lil_status lil_run_complete(lil_run *run, const void *result, size_t len)
{
    struct lil_err e;

    if (!run_ok(run))
        return bad_run(run);
    if (!result && len)
        return to_run(run, &e,
                      lil__seterr(&e, LIL_E_INVAL, 0, "result is NULL with a length"));
    return to_run(run, &e, lil__run_end(run, &e, true, result, len));
}

lil_status lil_run_fail(lil_run *run, const char *reason)
{
    struct lil_err e;

    if (!run_ok(run))
        return bad_run(run);
    if (check_text(&e, "reason", reason, 1000) != LIL_OK)
        return to_run(run, &e, e.code);
    return to_run(run, &e, lil__run_end(run, &e, false, reason, strlen(reason)));
}

lil_status lil_run_result(lil_run *run, lil_bytes *out)
{
    struct lil_err e;

    if (!out)
        return fail_plain(LIL_E_INVAL, "lil_run_result: out is NULL");
    out->data = NULL;
    out->len = 0;
    if (!run_ok(run))
        return bad_run(run);
    return to_run(run, &e, lil__run_result(run, &e, out));
}

/* ---- markers -------------------------------------------------------------------- */

lil_status lil_marker(lil_store *st, const char *name, int policy, lil_fn fn, void *ud,
                      lil_bytes *out)
{
    struct lil_err e;

    if (out) {
        out->data = NULL;
        out->len = 0;
    }
    if (!store_ok(st))
        return BAD_HANDLE("store");
    if (!fn)
        return to_store(st, &e,
                        lil__seterr(&e, LIL_E_INVAL, 0, "lil_marker: fn is NULL"));
    return to_store(st, &e, lil__marker(st, &e, name, policy, fn, ud, out));
}

lil_status lil_marker_reset(lil_store *st, const char *name)
{
    struct lil_err e;

    if (!store_ok(st))
        return BAD_HANDLE("store");
    return to_store(st, &e, lil__marker_reset(st, &e, name));
}

/* ---- inspection ------------------------------------------------------------------ */

const char *lil_record_type_name(int type)
{
    static const char *const names[] = {
        "unknown", "begin",   "open",     "step",       "step-failed",
        "intent",  "resolve", "run-done", "run-failed", "close",
    };

    if (type < 0 || (size_t)type >= sizeof(names) / sizeof(names[0]))
        return "unknown";
    return names[type];
}

lil_status lil_run_foreach(lil_run *run, lil_record_fn fn, void *ud)
{
    struct lil_err e;

    if (!run_ok(run))
        return bad_run(run);
    if (!fn)
        return to_run(run, &e, lil__seterr(&e, LIL_E_INVAL, 0, "fn is NULL"));
    return to_run(run, &e, lil__run_foreach(run, &e, fn, ud));
}

lil_status lil_run_get_info(lil_run *run, lil_run_info *info)
{
    struct lil_err e;

    if (!run_ok(run))
        return bad_run(run);
    if (!info || info->struct_size < offsetof(lil_run_info, keyed))
        return to_run(run, &e,
                      lil__seterr(&e, LIL_E_INVAL, 0,
                                  "info is NULL or its struct_size is unset"));
    return to_run(run, &e, lil__run_info(run, &e, info));
}

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

    if (!store_ok(st))
        return BAD_HANDLE("store");
    if (!report || report->struct_size < offsetof(lil_check_report, message))
        return to_store(st, &e,
                        lil__seterr(&e, LIL_E_INVAL, 0,
                                    "report is NULL or its struct_size is unset"));
    if (flags & ~(unsigned)LIL_CHECK_REPAIR)
        return to_store(st, &e,
                        lil__seterr(&e, LIL_E_INVAL, 0,
                                    "unknown flags 0x%x for lil_run_check",
                                    flags & ~(unsigned)LIL_CHECK_REPAIR));
    rc = lil__run_id_check(&e, run_id);
    if (rc != LIL_OK)
        return to_store(st, &e, rc);
    memset(&full, 0, sizeof(full));
    full.struct_size = report->struct_size;
    rc = check_with_key(st, &e, run_id, (flags & LIL_CHECK_REPAIR) != 0, &full);
    memcpy(report, &full,
           report->struct_size < sizeof(full) ? report->struct_size : sizeof(full));
    return to_store(st, &e, rc);
}

/* ---- stores: schemas, moving runs ------------------------------------------- */

lil_status lil_store_schema(lil_env *env, const char *where, int action,
                            lil_schema_info *info)
{
    lil_schema_info full;
    struct lil_err e;
    bool own = false;
    lil_status rc;

    if (!info || info->struct_size < offsetof(lil_schema_info, message))
        return fail_plain(LIL_E_INVAL,
                          "lil_store_schema: info is NULL or its struct_size is unset");
    if (env && !env_ok(env))
        return BAD_HANDLE("env");
    if (!env) {
        rc = lil_env_new(&env);
        if (rc != LIL_OK)
            return rc;
        own = true;
    }
    memset(&full, 0, sizeof(full));
    full.struct_size = info->struct_size;
    rc = lil__store_schema(env, &e, where, action, &full);
    memcpy(info, &full,
           info->struct_size < sizeof(full) ? info->struct_size : sizeof(full));
    if (rc != LIL_OK)
        lil__publish_err(&e);
    if (own)
        lil_env_free(env);
    return rc;
}

lil_status lil_run_export(lil_store *st, const char *run_id, lil_write_fn fn, void *ud)
{
    struct lil_err e;

    if (!store_ok(st))
        return BAD_HANDLE("store");
    if (!fn)
        return to_store(st, &e,
                        lil__seterr(&e, LIL_E_INVAL, 0, "lil_run_export: fn is NULL"));
    return to_store(st, &e, lil__store_export(st, &e, run_id, fn, ud));
}

lil_status lil_run_import(lil_store *st, const void *journal, size_t len,
                          const char *run_id, char **imported_id)
{
    struct lil_err e;

    if (imported_id)
        *imported_id = NULL;
    if (!store_ok(st))
        return BAD_HANDLE("store");
    if (!journal && len)
        return to_store(
            st, &e, lil__seterr(&e, LIL_E_INVAL, 0, "lil_run_import: journal is NULL"));
    return to_store(st, &e,
                    lil__store_import(st, &e, journal, len, run_id, imported_id));
}
