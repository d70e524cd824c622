/*
 * store_pg.c -- the PostgreSQL store (store_pg.h has its design): the
 * handle, its table of operations, listing and checking runs, stop
 * requests, and runs as journal images for export and import.  Runs are in
 * store_pg_run.c and store_pg_append.c, markers in store_pg_marker.c, the
 * schema in store_pg_schema.c, connections in store_pg_conn.c.
 */
#include "store/pg/store_pg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/settings/settings.h"
#include "journal/format.h"
#include "journal/journal.h"
#include "os/os.h"

static struct pg_store *ps_of(struct lil_store *st)
{
    return (struct pg_store *)st;
}

/* ---- listing and checking runs ------------------------------------------------- */

struct foreach_ctx {
    lil_run_id_fn fn;
    void *ud;
};

static lil_status list_runs(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                            void *ud)
{
    struct foreach_ctx *f = ud;
    PGresult *res;
    lil_status rc =
        lil__pg_query(ps, c, err, "listing runs",
                      "SELECT run_id FROM @.runs ORDER BY run_id", NULL, false, &res);

    if (rc != LIL_OK)
        return rc;
    for (int i = 0; i < ps->pq->ntuples(res); i++)
        if (f->fn(f->ud, ps->pq->getvalue(res, i, 0)) != 0)
            break;
    ps->pq->clear(res);
    return LIL_OK;
}

static lil_status pg_foreach_run(struct lil_store *st, struct lil_err *err,
                                 lil_run_id_fn fn, void *ud)
{
    struct foreach_ctx f = {fn, ud};

    return lil__pg_with_conn(ps_of(st), err, list_runs, &f);
}

struct image_ctx {
    const char *run_id;
    struct lil_buf *out;
};

static lil_status read_image(struct pg_store *ps, struct pg_conn *c,
                             struct lil_err *err, void *ud)
{
    struct image_ctx *x = ud;

    lil__buf_reset(x->out);
    return lil__pg_read_image(ps, c, err, x->run_id, 0, x->out);
}

static lil_status pg_run_image(struct lil_store *st, struct lil_err *err,
                               const char *run_id, struct lil_buf *out)
{
    struct image_ctx x = {run_id, out};

    return lil__pg_with_conn(ps_of(st), err, read_image, &x);
}

static lil_status pg_check_run(struct lil_store *st, struct lil_err *err,
                               const char *run_id, const uint8_t *key, size_t key_len,
                               bool repair, lil_check_report *report)
{
    struct lil_buf image;
    lil_status rc;

    if (repair)
        return lil__pg_run_repair(ps_of(st), err, run_id, key, key_len, report);
    lil__buf_init(&image, st->env, (size_t)-1);
    rc = pg_run_image(st, err, run_id, &image);
    if (rc == LIL_OK) {
        report->file_bytes = image.len;
        rc = lil__journal_check_image(st->env, err, st->where, image.data, image.len,
                                      key, key_len, report);
    }
    lil__buf_free(&image);
    return rc;
}

/* ---- importing a run ----------------------------------------------------------- */

struct import_ctx {
    const char *run_id;
    const uint8_t *image;
    size_t len;
};

static lil_status insert_run(struct pg_store *ps, struct pg_conn *c,
                             struct lil_err *err, const struct import_ctx *x)
{
    bool keyed = (lil__rd32(x->image + LIL_JF_H_INCOMPAT) & LIL_JF_INCOMPAT_KEYED) != 0;
    struct pg_params p = {0};
    int64_t changed;
    lil_status rc;

    lil__pg_param_text(&p, x->run_id);
    lil__pg_param_bytea(&p, x->image, LIL_JF_HEADER_LEN);
    lil__pg_param_bool(&p, keyed);
    rc = lil__pg_command(ps, c, err, "importing a run",
                         "INSERT INTO @.runs (run_id, header, keyed, sync) "
                         "VALUES ($1, $2, $3, 'full') ON CONFLICT (run_id) DO "
                         "NOTHING",
                         &p, &changed);
    if (rc != LIL_OK)
        return rc;
    if (changed == 0)
        rc = lil__seterr(err, LIL_E_INVAL, 0,
                         "run %s already exists in %s (import it under another id: "
                         "--run-id)",
                         x->run_id, ps->base.where);
    return rc;
}

static lil_status import_tx(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                            void *ud)
{
    const struct import_ctx *x = ud;
    lil_status rc = lil__pg_simple(ps, c, err, "BEGIN", "starting an import");

    if (rc == LIL_OK)
        rc = insert_run(ps, c, err, x);
    if (rc == LIL_OK)
        rc = lil__pg_insert_frames(ps, c, err, x->run_id, x->image + LIL_JF_HEADER_LEN,
                                   x->len - LIL_JF_HEADER_LEN, LIL_JF_HEADER_LEN);
    if (rc == LIL_OK)
        return lil__pg_simple(ps, c, err, "COMMIT", "committing an import");
    if (lil__pg_conn_ok(ps, c))
        lil__pg_simple(ps, c, NULL, "ROLLBACK", "rolling back an import");
    return rc;
}

static lil_status pg_run_import(struct lil_store *st, struct lil_err *err,
                                const char *run_id, const uint8_t *image, size_t len)
{
    struct import_ctx x = {run_id, image, len};
    struct pg_conn *c = NULL;
    lil_status rc = lil__pg_conn_get(ps_of(st), err, &c);

    /* not retried on a lost connection: the commit may have happened */
    if (rc == LIL_OK)
        rc = import_tx(ps_of(st), c, err, &x);
    lil__pg_conn_put(ps_of(st), c);
    return rc;
}

/* ---- stop requests ------------------------------------------------------------- */

struct stop_ctx {
    const char *run_id;
    const void *req;
    size_t len;
    bool *already;
    lil_bytes *out;
};

/* fn on a connection, once x's run id is checked. */
static lil_status stop_work(struct lil_store *st, struct lil_err *err, pg_work_fn fn,
                            struct stop_ctx *x)
{
    lil_status rc = lil__run_id_check(err, x->run_id);

    if (rc != LIL_OK)
        return rc;
    return lil__pg_with_conn(ps_of(st), err, fn, x);
}

static lil_status stop_insert(struct pg_store *ps, struct pg_conn *c,
                              struct lil_err *err, void *ud)
{
    struct stop_ctx *x = ud;
    struct pg_params p = {0};
    int64_t changed;
    lil_status rc;

    lil__pg_param_text(&p, x->run_id);
    lil__pg_param_bytea(&p, x->req, x->len);
    rc = lil__pg_command(ps, c, err, "requesting a stop",
                         "INSERT INTO @.stop_requests (run_id, request) VALUES "
                         "($1, $2) ON CONFLICT (run_id) DO NOTHING",
                         &p, &changed);
    if (rc != LIL_OK)
        return rc;
    *x->already = changed == 0;
    return LIL_OK;
}

static lil_status pg_stop_request(struct lil_store *st, struct lil_err *err,
                                  const char *run_id, const void *req, size_t len,
                                  bool *already)
{
    struct stop_ctx x = {run_id, req, len, already, NULL};

    *already = false;
    return stop_work(st, err, stop_insert, &x);
}

static lil_status stop_select(struct pg_store *ps, struct pg_conn *c,
                              struct lil_err *err, void *ud)
{
    struct stop_ctx *x = ud;
    struct pg_params p = {0};
    PGresult *res;
    lil_status rc;

    lil__pg_param_text(&p, x->run_id);
    rc = lil__pg_query(ps, c, err, "reading a stop request",
                       "SELECT request FROM @.stop_requests WHERE run_id = $1", &p,
                       true, &res);
    if (rc != LIL_OK)
        return rc;
    if (ps->pq->ntuples(res) == 0) {
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "no stop request for run %s",
                         x->run_id);
    } else {
        size_t n = (size_t)ps->pq->getlength(res, 0, 0);
        x->out->data = lil__export_copy(ps->base.env, ps->pq->getvalue(res, 0, 0), n);
        x->out->len = n;
        if (!x->out->data)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    ps->pq->clear(res);
    return rc;
}

static lil_status pg_stop_read(struct lil_store *st, struct lil_err *err,
                               const char *run_id, lil_bytes *out)
{
    struct stop_ctx x = {run_id, NULL, 0, NULL, out};

    return stop_work(st, err, stop_select, &x);
}

static lil_status stop_delete(struct pg_store *ps, struct pg_conn *c,
                              struct lil_err *err, void *ud)
{
    struct stop_ctx *x = ud;
    struct pg_params p = {0};
    int64_t changed;
    lil_status rc;

    lil__pg_param_text(&p, x->run_id);
    rc = lil__pg_command(ps, c, err, "clearing a stop request",
                         "DELETE FROM @.stop_requests WHERE run_id = $1", &p, &changed);
    if (rc != LIL_OK)
        return rc;
    if (changed == 0)
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "no stop request for run %s",
                         x->run_id);
    return rc;
}

static lil_status pg_stop_clear(struct lil_store *st, struct lil_err *err,
                                const char *run_id)
{
    struct stop_ctx x = {run_id, NULL, 0, NULL, NULL};

    return stop_work(st, err, stop_delete, &x);
}

/* ---- the last seq of a run ------------------------------------------------------ */

struct last_seq_ctx {
    const char *run_id;
    uint64_t *seq;
};

static lil_status last_seq_select(struct pg_store *ps, struct pg_conn *c,
                                  struct lil_err *err, void *ud)
{
    struct last_seq_ctx *x = ud;
    struct pg_params p = {0};
    PGresult *res;
    lil_status rc;

    lil__pg_param_text(&p, x->run_id);
    rc = lil__pg_query(ps, c, err, "reading a run's last seq",
                       "SELECT (SELECT max(seq) FROM @.records WHERE run_id = $1) "
                       "FROM @.runs WHERE run_id = $1",
                       &p, false, &res);
    if (rc != LIL_OK)
        return rc;
    if (ps->pq->ntuples(res) == 0)
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "no run %s", x->run_id);
    else if (!ps->pq->getisnull(res, 0, 0))
        *x->seq = strtoull(ps->pq->getvalue(res, 0, 0), NULL, 10);
    ps->pq->clear(res);
    return rc;
}

static lil_status pg_run_last_seq(struct lil_store *st, struct lil_err *err,
                                  const char *run_id, uint64_t *seq)
{
    struct last_seq_ctx x = {run_id, seq};
    lil_status rc = lil__run_id_check(err, run_id);

    *seq = 0;
    if (rc != LIL_OK)
        return rc;
    return lil__pg_with_conn(ps_of(st), err, last_seq_select, &x);
}

/* ---- the runs' stamp ----------------------------------------------------------- */

static lil_status stamp_select(struct pg_store *ps, struct pg_conn *c,
                               struct lil_err *err, void *ud)
{
    int64_t *stamp = ud;
    PGresult *res;
    lil_status rc = lil__pg_query(
        ps, c, err, "reading the runs' count",
        "SELECT count(*), coalesce((extract(epoch FROM max(created)) * 1000000)::bigint, 0) "
        "FROM @.runs",
        NULL, false, &res);

    if (rc != LIL_OK)
        return rc;
    if (ps->pq->ntuples(res) == 1) {
        uint64_t n = strtoull(ps->pq->getvalue(res, 0, 0), NULL, 10);
        uint64_t newest = strtoull(ps->pq->getvalue(res, 0, 1), NULL, 10);
        *stamp = (int64_t)((newest * 1000003u) ^ n);
    }
    ps->pq->clear(res);
    return rc;
}

/* runs_stamp: how many runs there are and when the newest was made. */
static lil_status pg_runs_stamp(struct lil_store *st, struct lil_err *err,
                                int64_t *stamp, bool *coarse)
{
    *stamp = 0;
    *coarse = false;
    return lil__pg_with_conn(ps_of(st), err, stamp_select, stamp);
}

/* ---- removing runs ------------------------------------------------------------- */

/* In the transaction: lock run_id's row; LIL_E_NOTFOUND without one,
 * LIL_E_LOCKED when a live session holds its lease. */
static lil_status remove_lock(struct pg_store *ps, struct pg_conn *c,
                              struct lil_err *err, const char *run_id)
{
    struct pg_params p = {0};
    PGresult *res;
    lil_status rc;

    lil__pg_param_text(&p, run_id);
    rc = lil__pg_query(ps, c, err, "removing a run",
                       "SELECT coalesce(lease_until > now() AND EXISTS (SELECT 1 FROM "
                       "pg_stat_activity a WHERE a.pid = runs.holder_backend_pid), "
                       "false) FROM @.runs WHERE run_id = $1 FOR UPDATE",
                       &p, false, &res);
    if (rc != LIL_OK)
        return rc;
    if (ps->pq->ntuples(res) == 0)
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "no run %s in %s", run_id,
                         ps->base.where);
    else if (strcmp(ps->pq->getvalue(res, 0, 0), "t") == 0)
        rc =
            lil__seterr(err, LIL_E_LOCKED, 0,
                        "run %s is held by another process: it is not removed", run_id);
    ps->pq->clear(res);
    return rc;
}

static lil_status remove_tx(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                            void *ud)
{
    static const char *const deletes[] = {
        "DELETE FROM @.records WHERE run_id = $1",
        "DELETE FROM @.stop_requests WHERE run_id = $1",
        "DELETE FROM @.runs WHERE run_id = $1",
    };
    const char *run_id = ud;
    lil_status rc = lil__pg_simple(ps, c, err, "BEGIN", "starting a removal");
    int64_t changed;

    if (rc == LIL_OK)
        rc = remove_lock(ps, c, err, run_id);
    for (size_t i = 0; rc == LIL_OK && i < sizeof(deletes) / sizeof(*deletes); i++) {
        struct pg_params p = {0};

        lil__pg_param_text(&p, run_id);
        rc = lil__pg_command(ps, c, err, "removing a run", deletes[i], &p, &changed);
    }
    if (rc == LIL_OK)
        return lil__pg_simple(ps, c, err, "COMMIT", "committing a removal");
    if (lil__pg_conn_ok(ps, c))
        lil__pg_simple(ps, c, NULL, "ROLLBACK", "rolling back a removal");
    return rc;
}

static lil_status pg_run_remove(struct lil_store *st, struct lil_err *err,
                                const char *run_id)
{
    lil_status rc = lil__run_id_check(err, run_id);

    if (rc != LIL_OK)
        return rc;
    /* retried once on a lost connection: a removal committed before it was
     * lost is then LIL_E_NOTFOUND */
    char id[LIL_RUN_ID_MAX + 1]; /* a copy: the work's ud is not const */

    snprintf(id, sizeof(id), "%s", run_id);
    return lil__pg_with_conn(ps_of(st), err, remove_tx, id);
}

/* ---- the store ----------------------------------------------------------------- */

static void pg_close(struct lil_store *st)
{
    lil__pg_store_free(ps_of(st));
}

static const struct lil_store_ops pg_ops = {
    .version = LIL_STORE_OPS_VERSION,
    .name = "postgresql",
    .close = pg_close,
    .foreach_run = pg_foreach_run,
    .check_run = pg_check_run,
    .run_open = lil__pg_run_open,
    .run_close = lil__pg_run_close,
    .run_append = lil__pg_run_append,
    .run_announce = lil__pg_run_announce,
    .run_sync = lil__pg_run_sync,
    .run_walk = lil__pg_run_walk,
    .run_next_scanned = lil__pg_run_next_scanned,
    .run_info = lil__pg_run_info,
    .run_holder = lil__pg_run_holder,
    .stop_request = pg_stop_request,
    .stop_read = pg_stop_read,
    .stop_clear = pg_stop_clear,
    .marker_enter = lil__pg_marker_enter,
    .marker_state = lil__pg_marker_state,
    .marker_begin = lil__pg_marker_begin,
    .marker_finish = lil__pg_marker_finish,
    .marker_abandon = lil__pg_marker_abandon,
    .marker_clear = lil__pg_marker_clear,
    .marker_leave = lil__pg_marker_leave,
    .run_image = pg_run_image,
    .run_import = pg_run_import,
    .run_remove = pg_run_remove,
    .run_last_seq = pg_run_last_seq,
    .runs_stamp = pg_runs_stamp,
    .run_lease_check = lil__pg_run_lease_check,
    .queue_submit = lil__pg_queue_submit,
    .queue_claim = lil__pg_queue_claim,
    .queue_finish = lil__pg_queue_finish,
    .queue_release = lil__pg_queue_release,
    .queue_set = lil__pg_queue_set,
    .queue_state = lil__pg_queue_state,
    .queue_list = lil__pg_queue_list,
    .worker_join = lil__pg_worker_join,
    .worker_leave = lil__pg_worker_leave,
    .worker_list = lil__pg_worker_list,
    .sched_put = lil__pg_sched_put,
    .sched_get = lil__pg_sched_get,
    .sched_del = lil__pg_sched_del,
    .sched_list = lil__pg_sched_list,
    .sched_mark = lil__pg_sched_mark,
};

_Static_assert(PG_LEASE_MS == LIL_SETTING_PG_LEASE_MS, "one default lease");

static void name_host(struct pg_store *ps)
{
    if (gethostname(ps->host, sizeof(ps->host)) != 0)
        snprintf(ps->host, sizeof(ps->host), "?");
    ps->host[sizeof(ps->host) - 1] = '\0';
}

lil_status lil__pg_store_new(struct lil_env *env, struct lil_err *err,
                             const char *where, struct pg_store **out)
{
    struct pg_store *ps = lil__calloc(env, 1, sizeof(*ps));
    char *display = NULL;
    pthread_condattr_t ca;
    lil_status rc;

    *out = NULL;
    if (!ps)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    pthread_mutex_init(&ps->pool_mu, NULL);
    pthread_mutex_init(&ps->held_mu, NULL);
    pthread_mutex_init(&ps->claims_mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* the renewer's timed waits */
    pthread_cond_init(&ps->held_cv, &ca);
    pthread_condattr_destroy(&ca);
    ps->base.env = env;
    rc = lil__pq_dl_load(err, &ps->pq);
    if (rc == LIL_OK)
        rc = lil__pg_location(env, ps->pq, err, where, &ps->conninfo, ps->schema,
                              &display);
    if (rc == LIL_OK)
        rc = lil__store_init(&ps->base, env, err, &pg_ops, display);
    lil__free(env, display);
    ps->lease_ms = lil__setting_pg_lease_ms();
    name_host(ps);
    if (rc != LIL_OK) {
        lil__pg_store_free(ps);
        return rc;
    }
    *out = ps;
    return LIL_OK;
}

void lil__pg_store_free(struct pg_store *ps)
{
    struct lil_env *env;

    if (!ps)
        return;
    env = ps->base.env;
    if (ps->pq) {
        lil__pg_claims_free(ps);
        lil__pg_renewer_stop(ps);
        lil__pg_pool_drain(ps);
    }
    lil__free(env, ps->conninfo);
    pthread_mutex_destroy(&ps->claims_mu);
    pthread_cond_destroy(&ps->held_cv);
    pthread_mutex_destroy(&ps->held_mu);
    pthread_mutex_destroy(&ps->pool_mu);
    if (ps->base.ops)
        lil__store_fini(&ps->base);
    lil__free(env, ps);
}

static lil_status check_schema(struct pg_store *ps, struct pg_conn *c,
                               struct lil_err *err, void *ud)
{
    (void)ud;
    return lil__pg_schema_check(ps, c, err);
}

lil_status lil__store_pg_open(struct lil_env *env, struct lil_err *err,
                              const char *where, unsigned flags, struct lil_store **out)
{
    struct pg_store *ps = NULL;
    lil_status rc = lil__pg_store_new(env, err, where, &ps);

    (void)flags; /* who may reach the database is the server's to say */
    *out = NULL;
    if (rc != LIL_OK || !ps)
        return rc != LIL_OK ? rc : LIL_E_NOMEM;
    rc = lil__pg_with_conn(ps, err, check_schema, NULL);
    if (rc != LIL_OK) {
        lil__pg_store_free(ps);
        return rc;
    }
    ps->base.magic = LIL_STORE_MAGIC;
    *out = &ps->base;
    return LIL_OK;
}
