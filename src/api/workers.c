/*
 * workers.c -- the public lil_worker_* calls: a worker over a store with a
 * queue, the next queued run claimed and run, draining, the worker's
 * error; the listings of the queue and its workers.  The worker itself is
 * queue/worker.c, the listings queue/listing.c.
 */
#include "api/entry.h"
#include "base/alloc.h"
#include "json/json.h"
#include "loop/runner.h"
#include "queue/listing.h"
#include "queue/queue.h"

lil_status lil_worker_new(lil_store *st, const lil_worker_opts *opts, lil_worker **out)
{
    struct lil_err e;

    if (!out)
        return lil__api_fail(LIL_E_INVAL, "lil_worker_new: out is NULL");
    *out = NULL;
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    return lil__api_to_thread(&e, lil__worker_new(st, &e, opts, out));
}

void lil_worker_free(lil_worker *w)
{
    if (lil__api_worker_ok(w))
        lil__worker_free(w);
}

lil_status lil_worker_next(lil_worker *w, lil_worker_result *res)
{
    if (!lil__api_worker_ok(w))
        return lil__api_fail(LIL_E_INVAL, "invalid or freed worker handle");
    if (!res)
        return lil__api_fail(LIL_E_INVAL, "lil_worker_next: res is NULL");
    return lil__worker_next(w, res);
}

void lil_worker_drain(lil_worker *w)
{
    if (lil__api_worker_ok(w))
        lil__worker_drain(w);
}

const char *lil_worker_errmsg(const lil_worker *w)
{
    return lil__api_worker_ok(w) ? w->err.msg : "invalid worker handle";
}

/* ---- listings ---------------------------------------------------------------- */

typedef lil_status (*listing_fn)(struct lil_store *st, struct lil_err *err,
                                 json_t **out);

static lil_status queue_doc(struct lil_store *st, struct lil_err *err, json_t **out)
{
    return lil__queue_list_doc(st, err, out);
}

static lil_status workers_doc(struct lil_store *st, struct lil_err *err, json_t **out)
{
    return lil__workers_doc(st, err, lil__loop_now_ms(), out);
}

static lil_status listing(lil_store *st, lil_bytes *json, const char *fn,
                          listing_fn make)
{
    struct lil_json_scope sc;
    struct lil_err e;
    json_t *doc = NULL;
    lil_status rc;

    lil__api_clear_bytes(json);
    lil__clearerr(&e);
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    if (!json)
        return lil__api_to_store(
            st, &e, lil__seterr(&e, LIL_E_INVAL, 0, "%s: json is NULL", fn));
    lil__api_scope_begin(&sc, st->env);
    rc = make(st, &e, &doc);
    if (rc == LIL_OK)
        rc = lil__api_dump_doc(st->env, &e, doc, JSON_COMPACT, json);
    else
        json_decref(doc);
    rc = lil__api_scope_end(&sc, &e, rc);
    if (rc != LIL_OK) {
        lil__export_free(json->data);
        lil__api_clear_bytes(json);
    }
    return lil__api_to_store(st, &e, rc);
}

lil_status lil_queue_list(lil_store *st, lil_bytes *json)
{
    return listing(st, json, "lil_queue_list", queue_doc);
}

lil_status lil_workers_list(lil_store *st, lil_bytes *json)
{
    return listing(st, json, "lil_workers_list", workers_doc);
}
