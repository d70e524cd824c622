/*
 * store_pg_sched.c -- schedules of cron loops in the PostgreSQL store
 * (store.h, sched_*; the queue layer's schedule.h; docs/postgres.md,
 * "Schedules").
 *
 * The table schedules (schema version 4): id (PK, the run-id rule), doc
 * (the schedule's document, bytes kept as they are: the CLI's JSON),
 * mark_ms (the last slot fired, epoch ms; 0: none) and updated.  Each
 * operation is one statement, committed synchronously:
 *
 *   put   INSERT ... ON CONFLICT DO NOTHING (a schedule that exists is
 *         refused), or with replace ON CONFLICT DO UPDATE of doc only (the
 *         mark is kept);
 *   mark  UPDATE ... SET mark_ms = greatest(mark_ms, slot): a mark only
 *         moves forward, whatever order two ticks mark in;
 *   del   DELETE (the runs it fired stay).
 *
 * A slot fires once because its run's id is the schedule's id and the
 * slot's time ("ID@2026-12-02T14:05Z"): the runs table's primary key lets
 * one tick create it, and a tick that races it finds the run (the CLI's
 * sched_cli.c); the mark only spares the next tick the look.
 *
 * In the SQL below '@' stands for the quoted schema name (lil__pg_sql).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "store/pg/store_pg.h"

static struct pg_store *ps_of(struct lil_store *st)
{
    return (struct pg_store *)st;
}

struct sched_ctx {
    const char *id;
    const void *doc;
    size_t len;
    bool replace;
    int64_t slot_ms;
    lil_bytes *out;
    int64_t *mark_ms;
    lil_run_id_fn fn;
    void *ud;
};

static lil_status put_on(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                         void *ud)
{
    const struct sched_ctx *x = ud;
    struct pg_params p = {0};
    int64_t changed = 0;
    lil_status rc;

    lil__pg_param_text(&p, x->id);
    lil__pg_param_bytea(&p, x->doc, x->len);
    rc = lil__pg_command(ps, c, err, "adding a schedule",
                         x->replace ? "INSERT INTO @.schedules (id, doc) VALUES ($1, "
                                      "$2) ON CONFLICT (id) DO UPDATE SET doc = "
                                      "EXCLUDED.doc, updated = now()"
                                    : "INSERT INTO @.schedules (id, doc) VALUES ($1, "
                                      "$2) ON CONFLICT (id) DO NOTHING",
                         &p, &changed);
    if (rc == LIL_OK && changed == 0)
        rc = lil__seterr(err, LIL_E_INVAL, 0, "schedule %s exists already", x->id);
    return rc;
}

lil_status lil__pg_sched_put(struct lil_store *st, struct lil_err *err, const char *id,
                             const void *doc, size_t len, bool replace)
{
    struct sched_ctx x = {.id = id, .doc = doc, .len = len, .replace = replace};

    /* retried once on a lost connection: a put committed before it was lost
     * is then "exists" (without replace), which the schedule does */
    return lil__pg_with_conn(ps_of(st), err, put_on, &x);
}

static lil_status get_on(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                         void *ud)
{
    const struct sched_ctx *x = ud;
    struct pg_params p = {0};
    PGresult *res;
    size_t len;
    lil_status rc;

    lil__pg_param_text(&p, x->id);
    rc = lil__pg_query(ps, c, err, "reading a schedule",
                       "SELECT doc, mark_ms FROM @.schedules WHERE id = $1", &p, true,
                       &res);
    if (rc != LIL_OK)
        return rc;
    if (ps->pq->ntuples(res) != 1) {
        ps->pq->clear(res);
        return lil__seterr(err, LIL_E_NOTFOUND, 0, "no schedule %s", x->id);
    }
    len = (size_t)ps->pq->getlength(res, 0, 0);
    x->out->data = lil__export_copy(ps->base.env, ps->pq->getvalue(res, 0, 0), len);
    if (x->out->data) {
        x->out->len = len;
        *x->mark_ms = lil__pg_get_int8(ps->pq, res, 0, 1);
    }
    ps->pq->clear(res);
    return x->out->data ? LIL_OK : lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
}

lil_status lil__pg_sched_get(struct lil_store *st, struct lil_err *err, const char *id,
                             lil_bytes *doc, int64_t *mark_ms)
{
    struct sched_ctx x = {.id = id, .out = doc, .mark_ms = mark_ms};

    doc->data = NULL;
    doc->len = 0;
    *mark_ms = 0;
    return lil__pg_with_conn(ps_of(st), err, get_on, &x);
}

static lil_status del_on(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                         void *ud)
{
    const struct sched_ctx *x = ud;
    struct pg_params p = {0};
    int64_t changed = 0;
    lil_status rc;

    lil__pg_param_text(&p, x->id);
    rc = lil__pg_command(ps, c, err, "removing a schedule",
                         "DELETE FROM @.schedules WHERE id = $1", &p, &changed);
    if (rc == LIL_OK && changed == 0)
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "no schedule %s", x->id);
    return rc;
}

lil_status lil__pg_sched_del(struct lil_store *st, struct lil_err *err, const char *id)
{
    struct sched_ctx x = {.id = id};

    return lil__pg_with_conn(ps_of(st), err, del_on, &x);
}

static lil_status list_on(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                          void *ud)
{
    const struct sched_ctx *x = ud;
    PGresult *res;
    lil_status rc =
        lil__pg_query(ps, c, err, "listing the schedules",
                      "SELECT id FROM @.schedules ORDER BY id", NULL, false, &res);

    if (rc != LIL_OK)
        return rc;
    for (int i = 0; i < ps->pq->ntuples(res); i++)
        if (x->fn(x->ud, ps->pq->getvalue(res, i, 0)))
            break;
    ps->pq->clear(res);
    return LIL_OK;
}

lil_status lil__pg_sched_list(struct lil_store *st, struct lil_err *err,
                              lil_run_id_fn fn, void *ud)
{
    struct sched_ctx x = {.fn = fn, .ud = ud};

    return lil__pg_with_conn(ps_of(st), err, list_on, &x);
}

static lil_status mark_on(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                          void *ud)
{
    const struct sched_ctx *x = ud;
    struct pg_params p = {0};
    int64_t changed = 0;
    lil_status rc;

    lil__pg_param_text(&p, x->id);
    lil__pg_param_int8(&p, x->slot_ms);
    rc = lil__pg_command(ps, c, err, "marking a schedule's slot",
                         "UPDATE @.schedules SET mark_ms = greatest(mark_ms, $2), "
                         "updated = now() WHERE id = $1",
                         &p, &changed);
    if (rc == LIL_OK && changed == 0)
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "no schedule %s", x->id);
    return rc;
}

lil_status lil__pg_sched_mark(struct lil_store *st, struct lil_err *err, const char *id,
                              int64_t slot_ms)
{
    struct sched_ctx x = {.id = id, .slot_ms = slot_ms};

    return lil__pg_with_conn(ps_of(st), err, mark_on, &x);
}
