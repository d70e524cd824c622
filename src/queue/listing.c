/*
 * listing.c -- what operators read of a store's queue (lil_queue_list) and
 * of its workers (lil_workers_list): the store's rows (store.h, queue_list
 * and worker_list) as JSON documents (listing.h).
 *
 * A worker is "live" while its last heartbeat is younger than its lease
 * (the renewer beats every lease/3), else "lost": the process died, was
 * paused or is cut off from the server, and its runs go to the first
 * worker that claims them once their leases run out.  Ages are measured
 * on the server's clock, the one every worker's heartbeat was written
 * with.
 */
#include "queue/listing.h"

#include <string.h>

#include "json/json.h"

/* A string of the store (a name a worker was given, an error text) as
 * JSON; "" is null when empty_null; text that is no UTF-8 is "?". */
static json_t *text(const char *s, bool empty_null)
{
    json_t *v;

    if (!s || (empty_null && !*s))
        return json_null();
    v = json_string(s);
    return v ? v : json_string("?");
}

static int set(json_t *o, const char *key, json_t *v)
{
    return json_object_set_new(o, key, v);
}

/* ---- the queue ---------------------------------------------------------------------
 */

static int add_row(void *ud, const struct lil_squeue_row *r)
{
    json_t *runs = ud, *o = json_object();

    if (!o)
        return 1;
    set(o, "run", text(r->run_id, false));
    set(o, "state", json_string(lil__sq_state_name(r->state)));
    set(o, "wake_at_ms", r->wake_at_ms ? json_integer(r->wake_at_ms) : json_null());
    set(o, "attempts", json_integer(r->attempts));
    set(o, "worker", text(r->worker, true));
    set(o, "owner", text(r->owner, true));
    set(o, "held", json_boolean(r->held));
    set(o, "error", text(r->error, true));
    return json_array_append_new(runs, o) != 0;
}

lil_status lil__queue_list_doc(struct lil_store *st, struct lil_err *err, json_t **out)
{
    json_t *runs = json_array();
    lil_status rc = LIL_OK;

    *out = NULL;
    if (!runs)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (st->ops->queue_list)
        rc = st->ops->queue_list(st, err, add_row, runs);
    if (rc != LIL_OK) {
        json_decref(runs);
        return rc;
    }
    *out = json_pack("{s:b, s:o}", "queue", st->ops->queue_list != NULL, "runs", runs);
    return *out ? LIL_OK : lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
}

/* ---- the workers -------------------------------------------------------------------
 */

struct workers_ctx {
    json_t *workers;
    int64_t now_ms;
};

static json_t *run_ids(const struct lil_sworker *w)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < w->n_runs; i++)
        json_array_append_new(a, text(w->runs[i], false));
    return a;
}

static int add_worker(void *ud, const struct lil_sworker *w)
{
    struct workers_ctx *x = ud;
    json_t *o = json_object();
    int64_t age = w->now_ms - w->heartbeat_ms;

    if (!o)
        return 1;
    x->now_ms = w->now_ms;
    set(o, "name", text(w->name, false));
    set(o, "owner", text(w->owner, false));
    set(o, "host", text(w->host, false));
    set(o, "pid", json_integer(w->pid));
    set(o, "threads", json_integer(w->threads));
    set(o, "state", json_string(age < w->lease_ms ? "live" : "lost"));
    set(o, "started_ms", json_integer(w->started_ms));
    set(o, "heartbeat_ms", json_integer(w->heartbeat_ms));
    set(o, "age_ms", json_integer(age > 0 ? age : 0));
    set(o, "lease_ms", json_integer(w->lease_ms));
    set(o, "runs", run_ids(w));
    return json_array_append_new(x->workers, o) != 0;
}

lil_status lil__workers_doc(struct lil_store *st, struct lil_err *err, int64_t now_ms,
                            json_t **out)
{
    struct workers_ctx x = {NULL, now_ms};
    lil_status rc;

    *out = NULL;
    if (!st->ops->worker_list)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "%s is %s: it keeps no queue, so it has no workers "
                           "(workers need a PostgreSQL store, postgresql://...)",
                           st->where, lil__queue_less_kind(st));
    x.workers = json_array();
    if (!x.workers)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    rc = st->ops->worker_list(st, err, add_worker, &x);
    if (rc != LIL_OK) {
        json_decref(x.workers);
        return rc;
    }
    *out =
        json_pack("{s:I, s:o}", "now_ms", (json_int_t)x.now_ms, "workers", x.workers);
    return *out ? LIL_OK : lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
}
