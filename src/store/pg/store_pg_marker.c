/*
 * store_pg_marker.c -- markers of the PostgreSQL store.
 *
 * One caller inside a marker at a time, across processes and machines: a
 * session advisory lock (pg_advisory_lock on the first 8 bytes of
 * SHA-256("<schema>\0<name>")), taken on a connection the caller keeps
 * until it leaves.  A caller that dies loses its session, and the lock with
 * it, as a file store's OFD lock dies with its process.  The states are rows
 * of markers, one per name: none (no row), pending (state 'pending', with
 * the owner's note) or done (state 'done', with the result).  Each
 * transition is one statement committed synchronously (the connection's
 * synchronous_commit is on).  The protocol over them is the engine's
 * (src/engine/marker.c).
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "store/pg/store_pg.h"

struct lil_smarker {
    struct pg_store *ps;
    struct pg_conn *c;
    bool locked;
    int64_t lock_key;
    char name[LIL_STEP_NAME_MAX + 1];
};

static int64_t lock_key(const struct pg_store *ps, const char *name)
{
    uint8_t digest[LIL_SHA256_LEN], in[PG_SCHEMA_MAX + 2 + LIL_STEP_NAME_MAX];
    size_t s = strlen(ps->schema), n = strlen(name);
    uint64_t k = 0;

    memcpy(in, ps->schema, s);
    in[s] = '\0';
    memcpy(in + s + 1, name, n);
    lil__sha256(in, s + 1 + n, digest);
    for (int i = 0; i < 8; i++)
        k = k << 8 | digest[i];
    return (int64_t)k;
}

/* One statement on the marker's connection: name as $1, then extra. */
static lil_status marker_exec(struct lil_smarker *m, struct lil_err *err,
                              const char *what, const char *tmpl, const void *bytes,
                              size_t len, bool with_bytes, PGresult **out)
{
    struct pg_params p = {0};

    lil__pg_param_text(&p, m->name);
    if (with_bytes)
        lil__pg_param_bytea(&p, bytes, len);
    return lil__pg_query(m->ps, m->c, err, what, tmpl, &p, true, out);
}

lil_status lil__pg_marker_enter(struct lil_store *st, struct lil_err *err,
                                const char *name, struct lil_smarker **out)
{
    struct pg_store *ps = (struct pg_store *)st;
    struct lil_smarker *m = lil__calloc(st->env, 1, sizeof(*m));
    struct pg_params p = {0};
    lil_status rc;

    *out = NULL;
    if (!m)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    m->ps = ps;
    snprintf(m->name, sizeof(m->name), "%s", name);
    m->lock_key = lock_key(ps, name);
    lil__pg_param_int8(&p, m->lock_key);
    rc = lil__pg_conn_get(ps, err, &m->c);
    if (rc == LIL_OK)
        rc = lil__pg_exec(ps, m->c, err, "entering a marker",
                          "SELECT pg_advisory_lock($1)", &p, false, NULL);
    if (rc != LIL_OK) {
        lil__pg_marker_leave(m);
        return rc;
    }
    m->locked = true;
    *out = m;
    return LIL_OK;
}

void lil__pg_marker_leave(struct lil_smarker *m)
{
    struct pg_params p = {0};
    struct lil_err err;

    if (!m)
        return;
    lil__pg_param_int8(&p, m->lock_key);
    if (m->locked && lil__pg_conn_ok(m->ps, m->c) &&
        lil__pg_exec(m->ps, m->c, &err, "leaving a marker",
                     "SELECT pg_advisory_unlock($1)", &p, false, NULL) == LIL_OK)
        lil__pg_conn_put(m->ps, m->c);
    else
        lil__pg_disconnect(m->ps, m->c); /* ends the session: the lock goes too */
    lil__free(m->ps->base.env, m);
}

lil_status lil__pg_marker_state(struct lil_smarker *m, struct lil_err *err,
                                enum lil_smarker_state *state, lil_bytes *result)
{
    const struct lil_pq *pq = m->ps->pq;
    PGresult *res;
    lil_status rc = marker_exec(m, err, "reading a marker",
                                "SELECT state, result FROM @.markers WHERE name = $1",
                                NULL, 0, false, &res);

    *state = LIL_SMARKER_NONE;
    if (rc != LIL_OK)
        return rc;
    if (pq->ntuples(res) == 1 && strcmp(pq->getvalue(res, 0, 0), "done") == 0) {
        *state = LIL_SMARKER_DONE;
        if (result) {
            size_t n = (size_t)pq->getlength(res, 0, 1);
            result->data =
                lil__export_copy(m->ps->base.env, pq->getvalue(res, 0, 1), n);
            result->len = n;
            if (!result->data)
                rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
        }
    } else if (pq->ntuples(res) == 1) {
        *state = LIL_SMARKER_PENDING;
    }
    pq->clear(res);
    return rc;
}

lil_status lil__pg_marker_begin(struct lil_smarker *m, struct lil_err *err,
                                const void *owner, size_t owner_len)
{
    return marker_exec(
        m, err, "marking a marker pending",
        "INSERT INTO @.markers (name, state, owner) VALUES ($1, "
        "'pending', $2) ON CONFLICT (name) DO UPDATE SET state = "
        "'pending', owner = EXCLUDED.owner, result = NULL, updated = now()",
        owner, owner_len, true, NULL);
}

lil_status lil__pg_marker_finish(struct lil_smarker *m, struct lil_err *err,
                                 const void *result, size_t len)
{
    return marker_exec(
        m, err, "marking a marker done",
        "INSERT INTO @.markers (name, state, result) VALUES ($1, 'done', "
        "$2) ON CONFLICT (name) DO UPDATE SET state = 'done', result = "
        "EXCLUDED.result, updated = now()",
        result, len, true, NULL);
}

lil_status lil__pg_marker_abandon(struct lil_smarker *m, struct lil_err *err)
{
    return marker_exec(m, err, "abandoning a marker",
                       "DELETE FROM @.markers WHERE name = $1 AND state = 'pending'",
                       NULL, 0, false, NULL);
}

lil_status lil__pg_marker_clear(struct lil_smarker *m, struct lil_err *err)
{
    PGresult *res;
    lil_status rc =
        marker_exec(m, err, "clearing a marker",
                    "DELETE FROM @.markers WHERE name = $1", NULL, 0, false, &res);

    if (rc != LIL_OK)
        return rc;
    if (lil__pg_changed(m->ps->pq, res) == 0)
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "marker '%s' is not set", m->name);
    m->ps->pq->clear(res);
    return rc;
}
