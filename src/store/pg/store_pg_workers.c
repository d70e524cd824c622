/*
 * store_pg_workers.c -- the registry of `lil worker` processes in the
 * PostgreSQL store, and what operators list of the queue (store.h: the
 * operations; docs/postgres.md, "Workers" and "The schema").
 *
 * The registry is the table workers (schema version 4), one row per
 * process that runs workers through a store handle:
 *
 *   owner      PK: "pid P on HOST since T", the lease owner its claims
 *              write into runs.lease_owner (so its runs are found by it)
 *   name       its name in the queue (claimed_by): the worker's --name,
 *              else the owner
 *   host, pid  where it runs
 *   threads    its workers (lil_worker handles, `--concurrency`)
 *   lease_ms   its lease (LIL_PG_LEASE_MS): a heartbeat older than that
 *              means the process is gone or cut off
 *   started    when it registered (the server's clock)
 *   heartbeat  its last sign of life (the server's clock)
 *
 * The first worker_join of a process inserts the row (or takes over a
 * row of the same owner) and starts the store's renewer thread, which sets
 * heartbeat = now() at every round (lease/3) beside the leases it renews
 * (store_pg_lease.c); the last worker_leave deletes the row.  A process
 * that dies leaves its row behind: listed as lost once its heartbeat is a
 * lease old, and deleted by the next registration once an hour old.
 *
 * Listing reads only (a role with SELECT may list): the workers with the
 * runs each holds (state running, lease_owner its owner), and the queued
 * runs with their state, claimant and whether their lease is live.  Times
 * are the server's (one clock for every machine).
 *
 * In the SQL below '@' stands for the quoted schema name (lil__pg_sql).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "os/os.h"
#include "store/pg/store_pg.h"

#define EXPIRE_S 3600 /* rows silent this long are deleted at registration */

static struct pg_store *ps_of(struct lil_store *st)
{
    return (struct pg_store *)st;
}

bool lil__pg_has_workers(const struct pg_store *ps)
{
    return ps->workers > 0 && ps->workers_pid == lil__os_self_pid();
}

/* ---- joining and leaving ------------------------------------------------------ */

struct join_ctx {
    const char *name;
    const char *owner;
    int threads;
};

static lil_status join_on(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                          void *ud)
{
    const struct join_ctx *x = ud;
    struct pg_params p = {0};
    lil_status rc;

    lil__pg_param_int8(&p, EXPIRE_S);
    rc = lil__pg_query(ps, c, err, "expiring silent workers",
                       "DELETE FROM @.workers WHERE heartbeat < now() - $1 * "
                       "interval '1 second'",
                       &p, false, NULL);
    if (rc != LIL_OK)
        return rc;
    memset(&p, 0, sizeof(p));
    lil__pg_param_text(&p, x->owner);
    lil__pg_param_text(&p, x->name ? x->name : x->owner);
    lil__pg_param_text(&p, ps->host);
    lil__pg_param_int4(&p, lil__os_self_pid());
    lil__pg_param_int4(&p, x->threads);
    lil__pg_param_int8(&p, ps->lease_ms);
    return lil__pg_query(ps, c, err, "registering a worker",
                         "INSERT INTO @.workers (owner, name, host, pid, threads, "
                         "lease_ms) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT "
                         "(owner) DO UPDATE SET name = EXCLUDED.name, threads = "
                         "EXCLUDED.threads, lease_ms = EXCLUDED.lease_ms, "
                         "heartbeat = now()",
                         &p, false, NULL);
}

static lil_status count_on(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                           void *ud)
{
    const struct join_ctx *x = ud;
    struct pg_params p = {0};

    lil__pg_param_text(&p, x->owner);
    lil__pg_param_int4(&p, x->threads);
    return lil__pg_query(ps, c, err, "counting a worker",
                         "UPDATE @.workers SET threads = $2, heartbeat = now() "
                         "WHERE owner = $1",
                         &p, false, NULL);
}

lil_status lil__pg_worker_join(struct lil_store *st, struct lil_err *err,
                               const char *name)
{
    struct pg_store *ps = ps_of(st);
    char owner[PG_OWNER_MAX];
    struct join_ctx x = {name, owner, 0};
    int pid = lil__os_self_pid();
    lil_status rc;

    lil__pg_owner(ps, owner, sizeof(owner));
    pthread_mutex_lock(&ps->held_mu);
    if (ps->workers_pid != pid) /* a forked child registers itself */
        ps->workers = 0;
    ps->workers_pid = pid;
    x.threads = ++ps->workers;
    pthread_mutex_unlock(&ps->held_mu);
    rc = lil__pg_with_conn(ps, err, x.threads == 1 ? join_on : count_on, &x);
    pthread_mutex_lock(&ps->held_mu);
    if (rc == LIL_OK)
        rc = lil__pg_renewer_ensure(ps, err);
    if (rc != LIL_OK)
        ps->workers--;
    pthread_mutex_unlock(&ps->held_mu);
    if (rc != LIL_OK)
        lil__pg_renewer_idle(ps);
    return rc;
}

static lil_status leave_on(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                           void *ud)
{
    const struct join_ctx *x = ud;
    struct pg_params p = {0};

    lil__pg_param_text(&p, x->owner);
    if (x->threads > 0)
        return count_on(ps, c, err, ud);
    return lil__pg_query(ps, c, err, "unregistering a worker",
                         "DELETE FROM @.workers WHERE owner = $1", &p, false, NULL);
}

void lil__pg_worker_leave(struct lil_store *st)
{
    struct pg_store *ps = ps_of(st);
    char owner[PG_OWNER_MAX];
    struct join_ctx x = {NULL, owner, 0};
    struct lil_err err;
    bool mine;

    lil__pg_owner(ps, owner, sizeof(owner));
    pthread_mutex_lock(&ps->held_mu);
    mine = lil__pg_has_workers(ps);
    if (mine)
        x.threads = --ps->workers;
    pthread_mutex_unlock(&ps->held_mu);
    if (!mine)
        return;
    /* a row left behind (the server away) is listed as lost, then expires */
    (void)lil__pg_with_conn(ps, &err, leave_on, &x);
    lil__pg_renewer_idle(ps);
}

lil_status lil__pg_worker_beat(struct pg_store *ps, struct pg_conn *c)
{
    char owner[PG_OWNER_MAX];
    struct pg_params p = {0};
    struct lil_err err;
    lil_status rc;

    lil__pg_owner(ps, owner, sizeof(owner));
    lil__pg_param_text(&p, owner);
    rc = lil__pg_query(ps, c, &err, "a worker's heartbeat",
                       "UPDATE @.workers SET heartbeat = now() WHERE owner = $1", &p,
                       false, NULL);
    if (rc != LIL_OK)
        lil__log(ps->base.env, LIL_LOG_WARN, "event=worker_heartbeat error=\"%s\"",
                 err.msg);
    return rc;
}

/* ---- listing the workers ------------------------------------------------------ */

static int64_t num(const struct lil_pq *pq, const PGresult *res, int row, int col)
{
    return (int64_t)strtoll(pq->getvalue(res, row, col), NULL, 10);
}

/* The runs of res (owner, run_id rows, by owner) whose owner is owner,
 * from *at on: their ids into ids (cap), their number returned. */
static size_t runs_of(const struct lil_pq *pq, const PGresult *res, int *at,
                      const char *owner, const char **ids, size_t cap)
{
    size_t n = 0;
    int rows = pq->ntuples(res);

    while (*at < rows && strcmp(pq->getvalue(res, *at, 0), owner) < 0)
        (*at)++;
    for (int i = *at; i < rows && strcmp(pq->getvalue(res, i, 0), owner) == 0; i++)
        if (n < cap)
            ids[n++] = pq->getvalue(res, i, 1);
    return n;
}

struct list_ctx {
    lil_sworker_fn fn;
    void *ud;
};

static int give_worker(struct pg_store *ps, const PGresult *w, int i,
                       const PGresult *runs, const struct list_ctx *x)
{
    const struct lil_pq *pq = ps->pq;
    struct lil_sworker sw;
    const char **ids = NULL;
    int at = 0, stop;
    size_t cap = (size_t)pq->ntuples(runs);

    memset(&sw, 0, sizeof(sw));
    sw.owner = pq->getvalue(w, i, 0);
    sw.name = pq->getvalue(w, i, 1);
    sw.host = pq->getvalue(w, i, 2);
    sw.pid = (int)num(pq, w, i, 3);
    sw.threads = (int)num(pq, w, i, 4);
    sw.lease_ms = num(pq, w, i, 5);
    sw.started_ms = num(pq, w, i, 6);
    sw.heartbeat_ms = num(pq, w, i, 7);
    sw.now_ms = num(pq, w, i, 8);
    if (cap && !(ids = lil__calloc(ps->base.env, cap, sizeof(*ids))))
        return -1;
    sw.n_runs = ids ? runs_of(pq, runs, &at, sw.owner, ids, cap) : 0;
    sw.runs = ids;
    stop = x->fn(x->ud, &sw);
    lil__free(ps->base.env, ids);
    return stop ? 1 : 0;
}

static lil_status list_on(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                          void *ud)
{
    const struct list_ctx *x = ud;
    PGresult *w = NULL, *runs = NULL;
    lil_status rc;

    rc = lil__pg_query(ps, c, err, "listing the workers",
                       "SELECT owner, name, host, pid, threads, lease_ms, "
                       "(extract(epoch FROM started) * 1000)::bigint, "
                       "(extract(epoch FROM heartbeat) * 1000)::bigint, "
                       "(extract(epoch FROM now()) * 1000)::bigint "
                       "FROM @.workers ORDER BY name, owner",
                       NULL, false, &w);
    if (rc == LIL_OK)
        rc = lil__pg_query(ps, c, err, "listing the workers' runs",
                           "SELECT r.lease_owner, r.run_id FROM @.runs r JOIN "
                           "@.workers w ON w.owner = r.lease_owner WHERE r.state = "
                           "'running' ORDER BY r.lease_owner COLLATE \"C\", r.run_id",
                           NULL, false, &runs);
    for (int i = 0; rc == LIL_OK && i < ps->pq->ntuples(w); i++) {
        int stop = give_worker(ps, w, i, runs, x);

        if (stop < 0)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
        if (stop)
            break;
    }
    if (w)
        ps->pq->clear(w);
    if (runs)
        ps->pq->clear(runs);
    return rc;
}

lil_status lil__pg_worker_list(struct lil_store *st, struct lil_err *err,
                               lil_sworker_fn fn, void *ud)
{
    struct list_ctx x = {fn, ud};

    return lil__pg_with_conn(ps_of(st), err, list_on, &x);
}

/* ---- listing the queue -------------------------------------------------------- */

struct queue_ctx {
    lil_squeue_row_fn fn;
    void *ud;
};

static lil_status queue_on(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                           void *ud)
{
    const struct queue_ctx *x = ud;
    const struct lil_pq *pq = ps->pq;
    PGresult *res;
    lil_status rc;

    rc = lil__pg_query(
        ps, c, err, "listing the queue",
        "SELECT r.run_id, r.state, coalesce((extract(epoch FROM r.wake_at) * "
        "1000)::bigint, 0), r.attempts, coalesce(r.claimed_by, ''), "
        "coalesce(r.lease_owner, ''), coalesce(r.lease_until > now() AND EXISTS "
        "(SELECT 1 FROM pg_stat_activity a WHERE a.pid = r.holder_backend_pid), "
        "false), coalesce(r.last_error, '') FROM @.runs r WHERE r.state IS NOT NULL "
        "ORDER BY r.run_id",
        NULL, false, &res);
    if (rc != LIL_OK)
        return rc;
    for (int i = 0; i < pq->ntuples(res); i++) {
        struct lil_squeue_row row;
        const char *state = pq->getvalue(res, i, 1);

        memset(&row, 0, sizeof(row));
        if (!lil__sq_state_parse(state, strlen(state), &row.state))
            continue; /* a state of a newer lil: not listed */
        row.run_id = pq->getvalue(res, i, 0);
        row.wake_at_ms = num(pq, res, i, 2);
        row.attempts = (int)num(pq, res, i, 3);
        row.worker = pq->getvalue(res, i, 4);
        row.owner = pq->getvalue(res, i, 5);
        row.held = strcmp(pq->getvalue(res, i, 6), "t") == 0;
        row.error = pq->getvalue(res, i, 7);
        if (x->fn(x->ud, &row))
            break;
    }
    pq->clear(res);
    return LIL_OK;
}

lil_status lil__pg_queue_list(struct lil_store *st, struct lil_err *err,
                              lil_squeue_row_fn fn, void *ud)
{
    struct queue_ctx x = {fn, ud};

    return lil__pg_with_conn(ps_of(st), err, queue_on, &x);
}
