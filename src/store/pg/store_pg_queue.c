/*
 * store_pg_queue.c -- the queue of `lil worker` in the PostgreSQL store
 * (store.h, "the queue"; docs/postgres.md, "Workers").
 *
 * The queue is the runs table (schema version 3): a queued run's row
 * carries its state (the names of enum lil_sq_state: queued, running,
 * parked, paused, uncertain, stopped, completed, failed, error), wake_at,
 * its payload (bytes this store never reads: what the queue layer above
 * needs to run it), submitted_at, the number of claims (attempts), the
 * worker that claimed it last (claimed_by) and the last error a worker
 * met.  A run that was never submitted has no state and is no worker's
 * business.
 *
 * Submit.  One transaction: the row (state queued) and the run's BEGIN,
 * as a writable open would create them, committed synchronously; a run id
 * that exists is refused.
 *
 * Claim.  One statement picks the first runnable row -- queued or parked
 * with its time come (wake_at, else submitted_at, <= now()), or running
 * under a lease that ran out or whose holder's backend is gone (a worker
 * that died or stopped answering) -- whose lease is free, with FOR UPDATE
 * SKIP LOCKED (claimers skip each other's rows instead of waiting), and
 * takes its lease in the same transaction: lease_epoch + 1 (the fencing
 * token), holder_backend_pid = the backend of the claiming connection,
 * state running, attempts + 1.  The claim keeps that connection: the next
 * writable open of the run in this process (lil_loop_open's) goes on with
 * the lease on it (store_pg_run.c, adopt) instead of taking it anew, so the
 * epoch goes up once per claim and the run is never free in between.  The
 * renewer renews the lease from the claim on.
 *
 * Finish.  The worker records where the run stands (state, wake_at,
 * last_error) with the claim's epoch in the WHERE clause: a worker whose
 * claim was taken over writes nothing ("fenced"), as its appends would.
 * It finishes before it closes the run, while it still holds the lease, so
 * no other worker claims a run in between whose row still says running.
 *
 * Release.  A claim that no open took (the run had ended, was uncertain,
 * or its spec failed) lets its lease go on its own connection; one that an
 * open took is let go by the run's close.
 *
 * In the SQL below '@' stands for the quoted schema name (lil__pg_sql).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/settings/sync_mode.h"
#include "journal/format.h"
#include "os/os.h"
#include "store/image.h"
#include "store/pg/store_pg.h"

static lil_sync mode_of(const char *s)
{
    lil_sync m;

    return lil__sync_parse(s, &m) ? m : LIL_SYNC_FULL;
}

/* ---- submit ---------------------------------------------------------------------- */

static lil_status insert_queued(struct pg_store *ps, struct pg_conn *c,
                                struct lil_err *err, const struct lil_squeue_job *job,
                                const uint8_t *header)
{
    struct pg_params p = {0};
    int64_t changed;
    lil_status rc;

    lil__pg_param_text(&p, job->run_id);
    lil__pg_param_bytea(&p, header, LIL_JF_HEADER_LEN);
    lil__pg_param_bool(&p, job->key != NULL);
    lil__pg_param_text(&p, lil__sync_name(job->sync));
    lil__pg_param_bytea(&p, job->payload, job->payload_len);
    rc = lil__pg_command(ps, c, err, "queueing a run",
                         "INSERT INTO @.runs (run_id, header, keyed, sync, "
                         "state, payload, submitted_at) VALUES ($1, $2, $3, "
                         "$4, 'queued', $5, now()) ON CONFLICT (run_id) DO "
                         "NOTHING",
                         &p, &changed);
    if (rc != LIL_OK)
        return rc;
    if (changed == 0)
        rc = lil__seterr(err, LIL_E_INVAL, 0,
                         "run %s exists in %s: submit it under another id (--run-id)",
                         job->run_id, ps->base.where);
    return rc;
}

static lil_status submit_tx(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                            const struct lil_squeue_job *job)
{
    struct lil_buf first; /* the header, then BEGIN */
    lil_status rc;

    lil__buf_init(&first, ps->base.env, (size_t)-1);
    rc = lil__image_first(ps->base.env, err, job->run_id, job->key, job->key_len,
                          &first);
    if (rc == LIL_OK)
        rc = lil__pg_simple(ps, c, err, "BEGIN", "queueing a run");
    if (rc == LIL_OK)
        rc = insert_queued(ps, c, err, job, first.data);
    if (rc == LIL_OK)
        rc = lil__pg_insert_frames(ps, c, err, job->run_id,
                                   first.data + LIL_JF_HEADER_LEN,
                                   first.len - LIL_JF_HEADER_LEN, LIL_JF_HEADER_LEN);
    if (rc == LIL_OK)
        rc = lil__pg_simple(ps, c, err, "COMMIT", "queueing a run");
    else if (lil__pg_conn_ok(ps, c))
        lil__pg_simple(ps, c, NULL, "ROLLBACK", "queueing a run");
    lil__buf_free(&first);
    return rc;
}

lil_status lil__pg_queue_submit(struct lil_store *st, struct lil_err *err,
                                const struct lil_squeue_job *job)
{
    struct pg_store *ps = (struct pg_store *)st;
    struct pg_conn *c = NULL;
    lil_status rc = lil__run_id_check(err, job->run_id);

    /* not retried on a lost connection: the commit may have happened */
    if (rc == LIL_OK)
        rc = lil__pg_conn_get(ps, err, &c);
    if (rc == LIL_OK)
        rc = submit_tx(ps, c, err, job);
    lil__pg_conn_put(ps, c);
    return rc;
}

/* ---- claim ----------------------------------------------------------------------- */

static const char claim_sql[] =
    "WITH c AS (SELECT r.run_id, r.state FROM @.runs r WHERE r.state IN ('queued', "
    "'parked', 'running') AND (r.state = 'running' OR coalesce(r.wake_at, "
    "r.submitted_at) <= now()) AND (r.lease_until IS NULL OR r.lease_until < now() "
    "OR r.holder_backend_pid IS NULL OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a "
    "WHERE a.pid = r.holder_backend_pid)) ORDER BY coalesce(r.wake_at, "
    "r.submitted_at) LIMIT 1 FOR UPDATE OF r SKIP LOCKED) "
    "UPDATE @.runs r SET lease_epoch = r.lease_epoch + 1, lease_owner = $1, "
    "lease_until = now() + $2 * interval '1 millisecond', holder_backend_pid = "
    "pg_backend_pid(), holder_pid = $3, state = 'running', wake_at = NULL, attempts = "
    "r.attempts + 1, claimed_by = $4 FROM c WHERE r.run_id = c.run_id RETURNING "
    "r.run_id, r.lease_epoch, r.attempts::bigint, c.state, r.sync, "
    "coalesce(r.payload, ''::bytea)";

static void claim_free(const struct lil_env *env, struct pg_claim *c)
{
    if (!c)
        return;
    lil__free(env, c->pub.payload);
    lil__free(env, c);
}

static uint8_t *value(struct pg_store *ps, PGresult *res, int col, size_t *len)
{
    size_t n = (size_t)ps->pq->getlength(res, 0, col);
    uint8_t *s = lil__malloc(ps->base.env, n + 1);

    if (s)
        memcpy(s, ps->pq->getvalue(res, 0, col), n);
    *len = n;
    return s;
}

/* The claim of the row res returned (binary results). */
static struct pg_claim *claim_of(struct pg_store *ps, PGresult *res)
{
    struct pg_claim *c = lil__calloc(ps->base.env, 1, sizeof(*c));
    const struct lil_pq *pq = ps->pq;
    char sync[16];
    bool known;

    if (!c)
        return NULL;
    snprintf(c->pub.run_id, sizeof(c->pub.run_id), "%.*s", pq->getlength(res, 0, 0),
             pq->getvalue(res, 0, 0));
    c->pub.epoch = lil__pg_get_int8(pq, res, 0, 1);
    c->pub.attempts = (int)lil__pg_get_int8(pq, res, 0, 2);
    known = lil__sq_state_parse(pq->getvalue(res, 0, 3),
                                (size_t)pq->getlength(res, 0, 3), &c->pub.was);
    if (!known)
        c->pub.was = LIL_SQ_QUEUED;
    snprintf(sync, sizeof(sync), "%.*s", pq->getlength(res, 0, 4),
             pq->getvalue(res, 0, 4));
    c->pub.sync = mode_of(sync);
    c->pub.payload = value(ps, res, 5, &c->pub.payload_len);
    c->pid = lil__os_self_pid();
    if (!c->pub.payload) {
        claim_free(ps->base.env, c);
        return NULL;
    }
    return c;
}

/* The claiming statement on c: *out (NULL: nothing runnable). */
static lil_status claim_on(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                           const char *worker, struct pg_claim **out)
{
    struct pg_params p = {0};
    char owner[PG_OWNER_MAX];
    PGresult *res;
    lil_status rc;

    *out = NULL;
    lil__pg_owner(ps, owner, sizeof(owner));
    lil__pg_param_text(&p, owner);
    lil__pg_param_int8(&p, ps->lease_ms);
    lil__pg_param_int4(&p, lil__os_self_pid());
    lil__pg_param_text(&p, worker ? worker : owner);
    rc = lil__pg_query(ps, c, err, "claiming a queued run", claim_sql, &p, true, &res);
    if (rc != LIL_OK)
        return rc;
    if (ps->pq->ntuples(res) == 1) {
        *out = claim_of(ps, res);
        if (!*out)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    ps->pq->clear(res);
    return rc;
}

/* A claim made: the renewer's entry, the store's list. */
static lil_status keep_claim(struct pg_store *ps, struct lil_err *err,
                             struct pg_claim *cl, struct pg_conn *c, int64_t t0)
{
    lil_status rc = lil__pg_hold(ps, err, cl->pub.run_id, cl->pub.epoch,
                                 t0 + ps->lease_ms * 1000000, &cl->held);

    if (rc != LIL_OK)
        return rc;
    cl->conn = c;
    pthread_mutex_lock(&ps->claims_mu);
    cl->next = ps->claims;
    ps->claims = cl;
    pthread_mutex_unlock(&ps->claims_mu);
    lil__log(ps->base.env, LIL_LOG_INFO,
             "event=claim run=%s epoch=%lld attempt=%d was=%s", cl->pub.run_id,
             (long long)cl->pub.epoch, cl->pub.attempts,
             lil__sq_state_name(cl->pub.was));
    return LIL_OK;
}

lil_status lil__pg_queue_claim(struct lil_store *st, struct lil_err *err,
                               const char *worker, struct lil_sclaim **out)
{
    struct pg_store *ps = (struct pg_store *)st;

    *out = NULL;
    /* once more on a new connection when the first was found dead: a claim
     * whose commit was lost names a backend that is gone, and is claimable */
    for (int attempt = 0;; attempt++) {
        struct pg_conn *c = NULL;
        struct pg_claim *cl = NULL;
        int64_t t0 = lil__mono_ns();
        lil_status rc = lil__pg_conn_get(ps, err, &c);
        bool lost;

        if (rc != LIL_OK)
            return rc;
        rc = claim_on(ps, c, err, worker, &cl);
        if (rc == LIL_OK && cl)
            rc = keep_claim(ps, err, cl, c, t0);
        if (rc == LIL_OK && cl) {
            *out = &cl->pub;
            return LIL_OK;
        }
        claim_free(ps->base.env, cl);
        lost = rc != LIL_OK && !lil__pg_conn_ok(ps, c);
        lil__pg_conn_put(ps, c);
        if (rc == LIL_OK)
            return lil__seterr(err, LIL_E_NOTFOUND, 0, "no queued run is runnable now");
        if (!lost || attempt == 1)
            return rc;
        lil__pg_pool_drain(ps);
    }
}

/* ---- finish and release ---------------------------------------------------------- */

struct finish_ctx {
    const struct lil_sclaim *c;
    const struct lil_squeue_end *end;
    int64_t changed;
};

static lil_status finish_on(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                            void *ud)
{
    struct finish_ctx *x = ud;
    struct pg_params p = {0};
    int64_t changed;
    lil_status rc;

    lil__pg_param_text(&p, x->c->run_id);
    lil__pg_param_int8(&p, x->c->epoch);
    lil__pg_param_text(&p, lil__sq_state_name(x->end->state));
    lil__pg_param_int8(&p, x->end->wake_at_ms);
    lil__pg_param_text(&p, x->end->error ? x->end->error : "");
    rc = lil__pg_command(ps, c, err, "recording a queued run's state",
                         "UPDATE @.runs SET state = $3, wake_at = CASE WHEN $4 "
                         "> 0 THEN to_timestamp($4 / 1000.0) END, last_error = "
                         "NULLIF($5, '') WHERE run_id = $1 AND lease_epoch = $2",
                         &p, &changed);
    if (rc != LIL_OK)
        return rc;
    x->changed = changed;
    return LIL_OK;
}

lil_status lil__pg_queue_finish(struct lil_store *st, struct lil_err *err,
                                struct lil_sclaim *c, const struct lil_squeue_end *end)
{
    struct pg_store *ps = (struct pg_store *)st;
    struct pg_claim *cl = (struct pg_claim *)c;
    struct finish_ctx x = {c, end, 0};
    lil_status rc;

    /* the claim's own connection while it has it: one that renews nothing
     * else, and whose backend the lease names */
    if (cl->conn)
        rc = finish_on(ps, cl->conn, err, &x);
    else
        rc = lil__pg_with_conn(ps, err, finish_on, &x);
    if (rc == LIL_OK && x.changed != 1)
        rc =
            lil__seterr(err, LIL_E_LOCKED, 0,
                        "fenced: run %s was claimed again since this worker claimed it "
                        "(epoch %lld): its state is the other worker's to record",
                        c->run_id, (long long)c->epoch);
    return rc;
}

/* Let the lease of a claim no open took go, on its connection. */
static void let_go(struct pg_store *ps, struct pg_claim *cl)
{
    struct pg_params p = {0};
    struct lil_err err;

    lil__pg_param_text(&p, cl->pub.run_id);
    lil__pg_param_int8(&p, cl->pub.epoch);
    if (lil__pg_query(ps, cl->conn, &err, "releasing a claimed run",
                      "UPDATE @.runs SET lease_until = NULL, lease_owner = "
                      "NULL, holder_backend_pid = NULL, holder_pid = NULL "
                      "WHERE run_id = $1 AND lease_epoch = $2",
                      &p, false, NULL) != LIL_OK) {
        lil__pg_disconnect(ps, cl->conn); /* its backend ends: the lease is free */
        cl->conn = NULL;
    }
}

static void unlink_claim(struct pg_store *ps, struct pg_claim *cl)
{
    pthread_mutex_lock(&ps->claims_mu);
    for (struct pg_claim **p = &ps->claims; *p; p = &(*p)->next)
        if (*p == cl) {
            *p = cl->next;
            break;
        }
    pthread_mutex_unlock(&ps->claims_mu);
}

static void release(struct pg_store *ps, struct pg_claim *cl)
{
    if (cl->conn && cl->pid == lil__os_self_pid())
        let_go(ps, cl);
    if (cl->pid == lil__os_self_pid())
        lil__pg_conn_put(ps, cl->conn);
    else
        lil__pg_disconnect(ps, cl->conn); /* a child's copy: only forgotten */
    if (cl->held)
        lil__pg_unhold(ps, cl->held);
    claim_free(ps->base.env, cl);
}

void lil__pg_queue_release(struct lil_store *st, struct lil_sclaim *c)
{
    struct pg_store *ps = (struct pg_store *)st;
    struct pg_claim *cl = (struct pg_claim *)c;

    if (!cl)
        return;
    unlink_claim(ps, cl);
    release(ps, cl);
}

void lil__pg_claims_free(struct pg_store *ps)
{
    struct pg_claim *cl;

    pthread_mutex_lock(&ps->claims_mu);
    cl = ps->claims;
    ps->claims = NULL;
    pthread_mutex_unlock(&ps->claims_mu);
    while (cl) {
        struct pg_claim *next = cl->next;
        release(ps, cl);
        cl = next;
    }
}

/* ---- claims and opens ------------------------------------------------------------ */

static struct pg_claim *find_pending(struct pg_store *ps, const char *run_id)
{
    int pid = lil__os_self_pid();

    for (struct pg_claim *cl = ps->claims; cl; cl = cl->next)
        if (!cl->adopted && cl->conn && cl->pid == pid &&
            strcmp(cl->pub.run_id, run_id) == 0)
            return cl;
    return NULL;
}

struct pg_claim *lil__pg_claim_adopt(struct pg_store *ps, const char *run_id)
{
    struct pg_claim *cl;

    pthread_mutex_lock(&ps->claims_mu);
    cl = find_pending(ps, run_id);
    if (cl)
        cl->adopted = true;
    pthread_mutex_unlock(&ps->claims_mu);
    return cl;
}

void lil__pg_claim_return(struct pg_store *ps, struct pg_claim *c, struct pg_conn *conn)
{
    pthread_mutex_lock(&ps->claims_mu);
    c->conn = conn;
    c->adopted = false;
    pthread_mutex_unlock(&ps->claims_mu);
}

bool lil__pg_claim_pending(struct pg_store *ps, const char *run_id)
{
    bool found;

    pthread_mutex_lock(&ps->claims_mu);
    found = find_pending(ps, run_id) != NULL;
    pthread_mutex_unlock(&ps->claims_mu);
    return found;
}

/* ---- an operator's change -------------------------------------------------------- */

struct set_ctx {
    const char *run_id;
    char from[128]; /* the names of the states of from, comma-separated */
    const struct lil_squeue_end *to;
    bool *changed;
};

static lil_status set_on(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                         void *ud)
{
    struct set_ctx *x = ud;
    struct pg_params p = {0};
    int64_t changed;
    lil_status rc;

    lil__pg_param_text(&p, x->run_id);
    lil__pg_param_text(&p, lil__sq_state_name(x->to->state));
    lil__pg_param_int8(&p, x->to->wake_at_ms);
    lil__pg_param_text(&p, x->to->error ? x->to->error : "");
    lil__pg_param_text(&p, x->from);
    rc = lil__pg_command(ps, c, err, "changing a queued run's state",
                         "UPDATE @.runs SET state = $2, wake_at = CASE WHEN $3 "
                         "> 0 THEN to_timestamp($3 / 1000.0) END, last_error = "
                         "NULLIF($4, '') WHERE run_id = $1 AND state IS NOT "
                         "NULL AND ($5 = '' OR state = ANY "
                         "(string_to_array($5, ',')))",
                         &p, &changed);
    if (rc != LIL_OK)
        return rc;
    *x->changed = changed == 1;
    return LIL_OK;
}

/* The names of the states of from into out ("": any). */
static void names_of(unsigned from, char *out, size_t cap)
{
    size_t n = 0;

    out[0] = '\0';
    for (int s = 0; s < LIL_SQ_STATES; s++)
        if (from & LIL_SQ_BIT(s)) {
            int w = snprintf(out + n, cap - n, "%s%s", n ? "," : "",
                             lil__sq_state_name((enum lil_sq_state)s));
            n += w > 0 && (size_t)w < cap - n ? (size_t)w : 0;
        }
}

lil_status lil__pg_queue_set(struct lil_store *st, struct lil_err *err,
                             const char *run_id, unsigned from,
                             const struct lil_squeue_end *to, bool *changed)
{
    struct set_ctx x = {run_id, "", to, changed};

    names_of(from, x.from, sizeof(x.from));
    *changed = false;
    return lil__pg_with_conn((struct pg_store *)st, err, set_on, &x);
}

struct state_ctx {
    const char *run_id;
    enum lil_sq_state *state;
};

static lil_status state_on(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                           void *ud)
{
    struct state_ctx *x = ud;
    struct pg_params p = {0};
    PGresult *res;
    lil_status rc;

    lil__pg_param_text(&p, x->run_id);
    rc = lil__pg_query(ps, c, err, "reading a queued run's state",
                       "SELECT state FROM @.runs WHERE run_id = $1 AND "
                       "state IS NOT NULL",
                       &p, false, &res);
    if (rc != LIL_OK)
        return rc;
    if (ps->pq->ntuples(res) == 1 &&
        !lil__sq_state_parse(ps->pq->getvalue(res, 0, 0),
                             (size_t)ps->pq->getlength(res, 0, 0), x->state))
        rc =
            lil__seterr(err, LIL_E_CORRUPT, 0, "run %s has an unknown queue state '%s'",
                        x->run_id, ps->pq->getvalue(res, 0, 0));
    else if (ps->pq->ntuples(res) != 1)
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "run %s is not queued", x->run_id);
    ps->pq->clear(res);
    return rc;
}

lil_status lil__pg_queue_state(struct lil_store *st, struct lil_err *err,
                               const char *run_id, enum lil_sq_state *state)
{
    struct state_ctx x = {run_id, state};

    *state = LIL_SQ_QUEUED;
    return lil__pg_with_conn((struct pg_store *)st, err, state_on, &x);
}
