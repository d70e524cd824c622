/*
 * history.c -- the public read API of runs (lil.h, "Reading runs"):
 * lil_run_facts, lil_run_events, lil_run_wait and lil_run_poll.  Argument
 * checks, one json scope per call bound to the store's env, the document
 * dumped to the caller's bytes, errors published on the store and the
 * thread; the folds are src/history/'s.
 */
#include "history/history.h"

#include <string.h>

#include "api/entry.h"
#include "base/alloc.h"
#include "engine/run.h"
#include "json/json.h"
#include "loop/runner.h"

#define WAIT_MAX_MS (24 * 3600 * 1000) /* a day: longer is a mistake */

/* The checks every call on a store makes: the store handle, the run id. */
static lil_status check(lil_store *st, const char *run_id, struct lil_err *e)
{
    lil__clearerr(e);
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    return lil__api_to_store(st, e, lil__run_id_check(e, run_id));
}

/* End the call's json scope: doc (released) dumped into *out on success. */
static lil_status finish(lil_store *st, struct lil_err *e, struct lil_json_scope *sc,
                         lil_status rc, json_t *doc, lil_bytes *out)
{
    if (rc == LIL_OK)
        rc = lil__api_dump_doc(st->env, e, doc, JSON_COMPACT, out);
    else
        json_decref(doc);
    rc = lil__api_scope_end(sc, e, rc);
    if (rc != LIL_OK) {
        lil__export_free(out->data);
        lil__api_clear_bytes(out);
    }
    return lil__api_to_store(st, e, rc);
}

/* The start of a call that answers a document in *json: the checks (json
 * cleared, not NULL; fn names the call), then the call's json scope. */
static lil_status start_doc(lil_store *st, const char *run_id, lil_bytes *json,
                            const char *fn, struct lil_err *e,
                            struct lil_json_scope *sc)
{
    lil_status rc;

    lil__api_clear_bytes(json);
    rc = check(st, run_id, e);
    if (rc != LIL_OK)
        return rc;
    if (!json)
        return lil__api_to_store(
            st, e, lil__seterr(e, LIL_E_INVAL, 0, "%s: json is NULL", fn));
    lil__api_scope_begin(sc, st->env);
    return LIL_OK;
}

lil_status lil_run_facts(lil_store *st, const char *run_id, lil_bytes *json)
{
    struct lil_json_scope sc;
    struct lil_err e;
    json_t *doc = NULL;
    lil_status rc;

    rc = start_doc(st, run_id, json, "lil_run_facts", &e, &sc);
    if (rc != LIL_OK)
        return rc;
    rc = lil__history_facts(st, &e, run_id, lil__loop_now_ms(), &doc);
    return finish(st, &e, &sc, rc, doc, json);
}

/* The options' checks; *q what they ask for. */
static lil_status events_query(struct lil_err *e, const lil_events_opts *opts,
                               struct lil_history_query *q)
{
    memset(q, 0, sizeof(*q));
    if (!opts)
        return LIL_OK;
    if (opts->struct_size < sizeof(*opts))
        return lil__seterr(e, LIL_E_INVAL, 0,
                           "lil_run_events_with: opts->struct_size is too small");
    if (opts->flags & ~(unsigned)(LIL_EVENTS_BRIEF | LIL_EVENTS_STATE))
        return lil__seterr(e, LIL_E_INVAL, 0, "lil_run_events_with: unknown flags");
    if ((opts->flags & LIL_EVENTS_BRIEF) && (opts->flags & LIL_EVENTS_STATE))
        return lil__seterr(e, LIL_E_INVAL, 0,
                           "lil_run_events_with: LIL_EVENTS_BRIEF and LIL_EVENTS_STATE "
                           "together (a brief event holds no state)");
    q->from = opts->from_seq;
    q->max = opts->max;
    q->flags = opts->flags;
    q->types = opts->types && *opts->types ? opts->types : NULL;
    q->last_iterations = opts->last_iterations;
    return LIL_OK;
}

lil_status lil_run_events_with(lil_store *st, const char *run_id,
                               const lil_events_opts *opts, lil_bytes *json)
{
    struct lil_history_query q;
    struct lil_json_scope sc;
    struct lil_err e;
    json_t *doc = NULL;
    lil_status rc;

    rc = start_doc(st, run_id, json, "lil_run_events", &e, &sc);
    if (rc != LIL_OK)
        return rc;
    rc = events_query(&e, opts, &q);
    if (rc == LIL_OK)
        rc = lil__history_events(st, &e, run_id, &q, &doc);
    return finish(st, &e, &sc, rc, doc, json);
}

lil_status lil_run_events(lil_store *st, const char *run_id, uint64_t from_seq,
                          size_t max, lil_bytes *json)
{
    lil_events_opts opts = {
        .struct_size = sizeof(opts), .from_seq = from_seq, .max = max};

    return lil_run_events_with(st, run_id, &opts, json);
}

lil_status lil_run_wait(lil_store *st, const char *run_id, uint64_t after_seq,
                        int timeout_ms, uint64_t *last_seq)
{
    struct lil_err e;
    lil_status rc;

    if (last_seq)
        *last_seq = 0;
    rc = check(st, run_id, &e);
    if (rc != LIL_OK)
        return rc;
    if (!last_seq || timeout_ms < 0 || timeout_ms > WAIT_MAX_MS)
        return lil__api_to_store(st, &e,
                                 lil__seterr(&e, LIL_E_INVAL, 0,
                                             "lil_run_wait: last_seq is NULL or "
                                             "timeout_ms is not 0 to %d",
                                             WAIT_MAX_MS));
    return lil__api_to_store(
        st, &e, lil__history_wait(st, &e, run_id, after_seq, timeout_ms, last_seq));
}

lil_status lil_run_poll(lil_store *st, const char *run_id, lil_run_mark *mark,
                        int *changed)
{
    struct lil_err e;
    bool grew = false;
    lil_status rc;

    if (changed)
        *changed = 0;
    rc = check(st, run_id, &e);
    if (rc != LIL_OK)
        return rc;
    if (!mark || !changed)
        return lil__api_to_store(
            st, &e,
            lil__seterr(&e, LIL_E_INVAL, 0, "lil_run_poll: mark or changed is NULL"));
    rc = lil__history_poll(st, &e, run_id, &mark->last_seq, &mark->stamp, &grew);
    *changed = grew;
    return lil__api_to_store(st, &e, rc);
}

lil_status lil_run_step_failure(lil_run *run, const char *name, char **identity,
                                lil_bytes *reason)
{
    struct lil_err e;

    if (identity)
        *identity = NULL;
    lil__api_clear_bytes(reason);
    lil__clearerr(&e);
    if (!lil__api_run_ok(run))
        return lil__api_bad_run(run);
    if (!identity || !reason || !name || !*name || strlen(name) > LIL_STEP_NAME_MAX)
        return lil__api_to_run(run, &e,
                               lil__seterr(&e, LIL_E_INVAL, 0,
                                           "lil_run_step_failure: identity or reason "
                                           "is NULL, or name is not 1 to %d bytes",
                                           LIL_STEP_NAME_MAX));
    return lil__api_to_run(run, &e,
                           lil__history_step_failure(run, &e, name, identity, reason));
}
