/*
 * workers.c -- the public lil_worker_* calls: a worker over a store with a
 * queue, the next queued run claimed and run, draining, the worker's
 * error.  The worker itself is queue/worker.c.
 */
#include "api/entry.h"
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
