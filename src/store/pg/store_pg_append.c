/*
 * store_pg_append.c -- appending to a run of the PostgreSQL store: records
 * encoded as the journal encodes them, committed in groups (store_pg.h has
 * the design), the lease checked in every commit, the run's sync, and the
 * CLOSE and release at close.
 *
 * Group commit, the one of os/group.h that journal.c's fdatasync shares:
 * an append encodes its record (next seq, chained to the last) into the
 * run's pending frames under mu, then waits until a commit covers it.  The
 * leader takes every pending frame, lets go of mu, sends them in one
 * statement (one transaction, so one WAL flush when it must be durable),
 * and wakes the others; threads that appended meanwhile find their records
 * in the next leader's batch.  One thread alone never waits for others.
 * The statement:
 *
 *   WITH l AS (SELECT run_id FROM runs WHERE run_id = $1 AND lease_epoch = $2
 *              FOR SHARE),
 *        c AS (SELECT set_config('synchronous_commit', $3, true))
 *   INSERT INTO records (run_id, seq, off, frame)
 *   SELECT l.run_id, v.seq, v.off, v.frame FROM l, c,
 *          (VALUES ($4, $5, $6), ...) AS v(seq, off, frame)
 *
 * inserts every row or none: none when the lease's epoch has moved on (the
 * run was taken over: fenced) -- the row lock makes a takeover wait for an
 * append in flight, or the append for the takeover.  set_config(..., true)
 * is SET LOCAL: synchronous_commit for this transaction only, "on" when a
 * record of the batch must be durable, else "off".  A batch of more than
 * PG_BATCH_MAX records goes in several such statements, the last one
 * carrying the batch's synchronous_commit (the WAL is one sequence: its
 * flush covers the others).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "journal/format.h"
#include "journal/scan.h"
#include "store/pg/store_pg.h"

#define TOUCH_BIT 63

/* ---- statements ------------------------------------------------------------------ */

/* "($4, $5, $6), ($7, $8, $9)...": n rows of three parameters from first,
 * or of two after a shared $1 when shared_run (imports). */
static void values_rows(char *buf, size_t cap, int n, int first, bool shared_run)
{
    size_t len = strlen(buf);

    for (int i = 0; i < n && len < cap; i++) {
        int a = first + 3 * i;
        int w = shared_run ? snprintf(buf + len, cap - len, "%s($1, $%d, $%d, $%d)",
                                      i ? ", " : "", a, a + 1, a + 2)
                           : snprintf(buf + len, cap - len, "%s($%d, $%d, $%d)",
                                      i ? ", " : "", a, a + 1, a + 2);
        len += w > 0 ? (size_t)w : 0;
    }
}

static const char *append_sql(const struct pg_store *ps, int n, char *buf, size_t cap)
{
    char tmpl[SQL_MAX];

    snprintf(tmpl, sizeof(tmpl),
             "WITH l AS (SELECT run_id FROM @.runs WHERE run_id = $1 AND lease_epoch "
             "= $2 FOR SHARE), c AS (SELECT set_config('synchronous_commit', $3, "
             "true)) INSERT INTO @.records (run_id, seq, off, frame) SELECT l.run_id, "
             "v.seq, v.off, v.frame FROM l, c, (VALUES ");
    values_rows(tmpl, sizeof(tmpl), n, 4, false);
    snprintf(tmpl + strlen(tmpl), sizeof(tmpl) - strlen(tmpl),
             ") AS v(seq, off, frame)");
    return lil__pg_sql(ps, tmpl, buf, cap);
}

/* seq, off and frame of each record of frames (len bytes, from off on). */
static int frame_params(struct pg_params *p, const uint8_t *frames, size_t len,
                        uint64_t off, int max)
{
    size_t at = 0;
    int n = 0;

    while (at + LIL_JF_REC_OVERHEAD <= len && n < max) {
        uint32_t rlen = lil__rd32(frames + at);
        lil__pg_param_int8(p, (int64_t)lil__rd64(frames + at + LIL_JF_R_SEQ));
        lil__pg_param_int8(p, (int64_t)(off + at));
        lil__pg_param_bytea(p, frames + at, rlen);
        at += rlen;
        n++;
    }
    return n;
}

/* Bytes of the first n records of frames. */
static size_t frames_len(const uint8_t *frames, int n)
{
    size_t at = 0;

    for (int i = 0; i < n; i++)
        at += lil__rd32(frames + at);
    return at;
}

lil_status lil__pg_insert_frames(struct pg_store *ps, struct pg_conn *c,
                                 struct lil_err *err, const char *run_id,
                                 const uint8_t *frames, size_t len, uint64_t first_off)
{
    char tmpl[SQL_MAX];
    lil_status rc = LIL_OK;

    while (rc == LIL_OK && len > 0) {
        struct pg_params p = {0};
        int n;
        size_t used;

        lil__pg_param_text(&p, run_id);
        n = frame_params(&p, frames, len, first_off, PG_BATCH_MAX);
        used = frames_len(frames, n);
        /* the shared $1 is the run id: shift each row's three by one */
        snprintf(tmpl, sizeof(tmpl),
                 "INSERT INTO @.records (run_id, seq, off, frame) VALUES ");
        values_rows(tmpl, sizeof(tmpl), n, 2, true);
        rc = lil__pg_query(ps, c, err, "inserting records", tmpl, &p, false, NULL);
        frames += used;
        len -= used;
        first_off += used;
    }
    return rc;
}

/* ---- poisoning ------------------------------------------------------------------- */

lil_status lil__pg_poisoned_err(struct pg_run *pr, struct lil_err *err)
{
    return lil__seterr(err, LIL_E_POISONED, 0,
                       "%s: an earlier commit failed (%s); reopen the run", pr->where,
                       pr->poison.msg);
}

/* Under mu. */
static void poison(struct pg_run *pr, const struct lil_err *err)
{
    if (pr->poisoned)
        return; /* the first failure is the one reported */
    pr->poisoned = true;
    lil__copyerr(&pr->poison, err);
    lil__log(pr->env, LIL_LOG_ERROR, "event=poisoned run=%s reason=\"%s\"", pr->run_id,
             err->msg);
}

void lil__pg_poison(struct pg_run *pr, const struct lil_err *err)
{
    pthread_mutex_lock(&pr->mu);
    poison(pr, err);
    pthread_mutex_unlock(&pr->mu);
}

/* The epoch of the run's lease now, for the fenced message (0: unknown). */
static int64_t current_epoch(struct pg_run *pr)
{
    struct pg_store *ps = pr->ps;
    struct pg_params p = {0};
    struct lil_err e;
    PGresult *res;
    int64_t epoch = 0;

    lil__pg_param_text(&p, pr->run_id);
    if (lil__pg_query(ps, pr->conn, &e, "reading the lease",
                      "SELECT lease_epoch FROM @.runs WHERE run_id = $1", &p, true,
                      &res) != LIL_OK)
        return 0;
    if (ps->pq->ntuples(res) == 1)
        epoch = lil__pg_get_int8(ps->pq, res, 0, 0);
    ps->pq->clear(res);
    return epoch;
}

static lil_status fenced(struct pg_run *pr, struct lil_err *err)
{
    int64_t now = current_epoch(pr);

    return lil__seterr(err, LIL_E_POISONED, 0,
                       "fenced: run %s was taken over (epoch %lld < %lld): this handle "
                       "lost its lease and writes nothing more",
                       pr->run_id, (long long)pr->epoch, (long long)now);
}

/* A failed statement of the run: when the connection was lost, whether the
 * commit happened is unknown. */
static lil_status commit_failed(struct pg_run *pr, struct lil_err *err)
{
    if (lil__pg_conn_ok(pr->ps, pr->conn))
        return err->code;
    return lil__seterr(err, LIL_E_PG, 0,
                       "%.150s; whether the last commit of run %s happened is unknown: "
                       "reopen the run",
                       err->msg, pr->run_id);
}

/* A write under the lease that succeeded (res, cleared here): it changed
 * want rows, or the lease was lost (fenced). */
static lil_status changed_or_fenced(struct pg_run *pr, struct lil_err *err,
                                    PGresult *res, int64_t want)
{
    lil_status rc = lil__pg_changed(pr->ps->pq, res) == want ? LIL_OK : fenced(pr, err);

    pr->ps->pq->clear(res);
    return rc;
}

/* ---- sending --------------------------------------------------------------------- */

/* One statement: the first n records of frames (at off), with the lease
 * checked.  sync: synchronous_commit on. */
static lil_status send_some(struct pg_run *pr, struct lil_err *err,
                            const uint8_t *frames, size_t len, uint64_t off, bool sync,
                            int *sent)
{
    struct pg_store *ps = pr->ps;
    struct pg_params p = {0};
    char sql[SQL_MAX], name[16];
    PGresult *res;
    lil_status rc;
    bool prepared;
    int n;

    lil__pg_param_text(&p, pr->run_id);
    lil__pg_param_int8(&p, pr->epoch);
    lil__pg_param_text(&p, sync ? "on" : "off");
    n = frame_params(&p, frames, len, off, PG_BATCH_MAX);
    if (n < 1) /* the leader sends only what it took: never nothing */
        return lil__seterr(err, LIL_E_INVAL, 0, "no record to append");
    snprintf(name, sizeof(name), "lil_a%d", n);
    /* the text only when the connection has yet to prepare it */
    prepared = (pr->conn->prepared & (UINT64_C(1) << (n - 1))) != 0;
    rc = lil__pg_exec_prepared(ps, pr->conn, err, "appending records", n - 1, name,
                               prepared ? "" : append_sql(ps, n, sql, sizeof(sql)), &p,
                               false, &res);
    if (rc != LIL_OK)
        return commit_failed(pr, err);
    *sent = n;
    return changed_or_fenced(pr, err, res, n);
}

/* The leader's records (pr->sending, count of them, from off on), in
 * statements of PG_BATCH_MAX; the last one commits synchronously when sync. */
static lil_status send_batch(struct pg_run *pr, struct lil_err *err, unsigned count,
                             uint64_t off, bool sync)
{
    const uint8_t *frames = pr->sending.data;
    size_t len = pr->sending.len;
    lil_status rc = LIL_OK;

    while (rc == LIL_OK && count > 0) {
        bool last = count <= PG_BATCH_MAX;
        int n = 0;
        size_t used;

        rc = send_some(pr, err, frames, len, off, sync && last, &n);
        used = frames_len(frames, n);
        frames += used;
        len -= used;
        off += used;
        count -= (unsigned)n;
    }
    return rc;
}

/* No record to send, but a thread waits for durability (run_sync): a tiny
 * write committed synchronously (its WAL flush covers every commit before
 * it), which also checks the lease and extends it. */
static lil_status touch(struct pg_run *pr, struct lil_err *err)
{
    struct pg_store *ps = pr->ps;
    struct pg_params p = {0};
    char sql[SQL_MAX];
    PGresult *res;
    lil_status rc;

    lil__pg_param_text(&p, pr->run_id);
    lil__pg_param_int8(&p, pr->epoch);
    lil__pg_param_int8(&p, ps->lease_ms);
    rc = lil__pg_exec_prepared(
        ps, pr->conn, err, "syncing a run", TOUCH_BIT, "lil_touch",
        lil__pg_sql(ps,
                    "WITH c AS (SELECT set_config('synchronous_commit', 'on', true)) "
                    "UPDATE @.runs SET lease_until = now() + $3 * interval '1 "
                    "millisecond' FROM c WHERE run_id = $1 AND lease_epoch = $2",
                    sql, sizeof(sql)),
        &p, false, &res);
    if (rc != LIL_OK)
        return commit_failed(pr, err);
    return changed_or_fenced(pr, err, res, 1);
}

/* ---- group commit (os/group.h) ---------------------------------------------------
 */

void lil__pg_run_take_conn(struct pg_run *pr)
{
    lil__group_hold(&pr->group);
}

void lil__pg_run_give_conn(struct pg_run *pr)
{
    lil__group_unhold(&pr->group);
}

/* The group's take (under mu): the pending frames become the ones the
 * leader sends; appends go on into an empty buffer. */
static void group_take(void *ud, struct lil_group_flush *f)
{
    struct pg_run *pr = ud;
    struct lil_buf taken = pr->pending;

    f->end = pr->end;
    pr->send_off = pr->group.committed;
    pr->pending = pr->sending;
    pr->sending = taken;
}

/* Send every frame taken (or, with none, the touch); synchronous_commit
 * on when a waiter needs them durable. */
static lil_status group_flush(void *ud, struct lil_err *err,
                              const struct lil_group_flush *f)
{
    struct pg_run *pr = ud;

    return f->count ? send_batch(pr, err, (unsigned)f->count, pr->send_off, f->durable)
                    : touch(pr, err);
}

static void group_done(void *ud, lil_status rc, struct lil_err *err,
                       const struct lil_group_flush *f)
{
    struct pg_run *pr = ud;

    (void)f;
    lil__buf_reset(&pr->sending);
    if (rc != LIL_OK)
        poison(pr, err);
}

static lil_status group_failed(void *ud, struct lil_err *err)
{
    return lil__pg_poisoned_err(ud, err);
}

static const struct lil_group_ops group_ops = {group_take, group_flush, group_done,
                                               group_failed};

/*
 * Gathering (os/group.h) waits for the others no longer than half of the
 * last commit and at most GATHER_MAX_NS: a commit takes longer than an
 * fdatasync of the file store (a round trip besides the WAL flush).
 */
#define GATHER_MAX_NS 1000000

void lil__pg_group_init(struct pg_run *pr)
{
    lil__group_init(&pr->group, &group_ops, pr, &pr->mu, &pr->poisoned, GATHER_MAX_NS);
}

/* Under mu: whether rec may be appended. */
static lil_status check_writable(struct pg_run *pr, struct lil_err *err,
                                 const struct lil_rec *rec)
{
    if (pr->poisoned)
        return lil__pg_poisoned_err(pr, err);
    if (pr->readonly)
        return lil__seterr(err, LIL_E_INVAL, 0, "%s is open read-only", pr->where);
    if (rec && (rec->key_len > LIL_JF_KEY_MAX || rec->payload_len > pr->max_record))
        return lil__seterr(err, LIL_E_TOOBIG, 0,
                           "record of %zu bytes is over the limit of %zu bytes",
                           rec->payload_len, pr->max_record);
    return LIL_OK;
}

/* Under mu: encode rec as the next record, at the end of the pending ones. */
static lil_status encode(struct pg_run *pr, struct lil_err *err,
                         const struct lil_rec *rec)
{
    size_t len = LIL_JF_REC_OVERHEAD + rec->key_len + rec->payload_len;
    uint8_t flags = (uint8_t)(rec->flags & ~LIL_JF_FLAG_SETTLED);
    struct lil_rec r = *rec;
    lil_status rc;

    if (pr->group.durable >= pr->end) /* every byte before it is durable */
        flags |= LIL_JF_FLAG_SETTLED;
    if (!r.ts_ns)
        r.ts_ns = lil__wall_ns();
    rc = lil__buf_reserve(&pr->pending, len);
    if (rc == LIL_OK)
        rc = lil__encode_record(pr->mac, pr->chain, pr->seq + 1, &r, flags,
                                pr->pending.data + pr->pending.len, len);
    if (rc != LIL_OK)
        return lil__seterr(err, rc, 0, "out of memory encoding a record");
    pr->pending.len += len;
    lil__group_added(&pr->group);
    pr->seq++;
    /* run_info reads these three without mu */
    __atomic_store_n(&pr->records, pr->records + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&pr->end, pr->end + len, __ATOMIC_RELAXED);
    __atomic_store_n(&pr->last_ns, r.ts_ns, __ATOMIC_RELAXED);
    return LIL_OK;
}

/* Append rec (NULL: nothing, a sync), and return once it is committed, and
 * durable too when durable. */
static lil_status commit(struct pg_run *pr, struct lil_err *err,
                         const struct lil_rec *rec, bool durable)
{
    lil_status rc;

    pthread_mutex_lock(&pr->mu);
    rc = check_writable(pr, err, rec);
    if (rc == LIL_OK && rec)
        rc = encode(pr, err, rec);
    if (rc != LIL_OK) {
        pthread_mutex_unlock(&pr->mu);
        return rc;
    }
    return lil__group_wait(&pr->group, err, pr->end, durable);
}

/* Whether an append must be durable on return (store.h). */
static bool must_be_durable(lil_sync sync, enum lil_append_sync how)
{
    switch (how) {
    case LIL_APPEND_BY_MODE:
        return sync == LIL_SYNC_FULL;
    case LIL_APPEND_SYNC:
        return sync != LIL_SYNC_OFF;
    case LIL_APPEND_LAZY:
        break;
    }
    return false;
}

lil_status lil__pg_run_append(struct lil_srun *r, struct lil_err *err,
                              const struct lil_rec *rec, enum lil_append_sync how)
{
    struct pg_run *pr = (struct pg_run *)r;

    return commit(pr, err, rec, must_be_durable(pr->sync, how));
}

lil_status lil__pg_run_announce(struct lil_srun *r, struct lil_err *err,
                                const struct lil_rec *rec)
{
    return commit((struct pg_run *)r, err, rec, false);
}

lil_status lil__pg_run_sync(struct lil_srun *r, struct lil_err *err)
{
    struct pg_run *pr = (struct pg_run *)r;

    if (pr->readonly)
        return LIL_OK;
    return commit(pr, err, NULL, true);
}

/* ---- close ------------------------------------------------------------------------
 */

/* In one statement: CLOSE (when close_len) and the lease let go. */
static lil_status release(struct pg_run *pr, struct lil_err *err, const uint8_t *close,
                          size_t close_len, bool sync)
{
    struct pg_store *ps = pr->ps;
    struct pg_params p = {0};
    PGresult *res;
    lil_status rc;

    lil__pg_param_text(&p, pr->run_id);
    lil__pg_param_int8(&p, pr->epoch);
    lil__pg_param_text(&p, sync ? "on" : "off");
    if (close_len)
        frame_params(&p, close, close_len, pr->group.committed, 1);
    rc = lil__pg_query(
        ps, pr->conn, err, "closing a run",
        close_len ? "WITH r AS (UPDATE @.runs SET lease_until = NULL, lease_owner "
                    "= NULL, holder_backend_pid = NULL, holder_pid = NULL WHERE "
                    "run_id = $1 AND lease_epoch = $2 RETURNING run_id), c AS "
                    "(SELECT set_config('synchronous_commit', $3, true)) INSERT "
                    "INTO @.records (run_id, seq, off, frame) SELECT r.run_id, $4, "
                    "$5, $6 FROM r, c"
                  : "WITH c AS (SELECT set_config('synchronous_commit', $3, "
                    "true)) UPDATE @.runs SET lease_until = NULL, lease_owner = "
                    "NULL, holder_backend_pid = NULL, holder_pid = NULL FROM c "
                    "WHERE run_id = $1 AND lease_epoch = $2",
        &p, false, &res);
    if (rc != LIL_OK)
        return commit_failed(pr, err);
    return changed_or_fenced(pr, err, res, 1);
}

lil_status lil__pg_run_release(struct pg_run *pr, struct lil_err *err)
{
    struct lil_rec close = {0};
    bool poisoned, write_close = pr->sync != LIL_SYNC_OFF;
    lil_status rc = LIL_OK;

    pthread_mutex_lock(&pr->mu);
    lil__pg_run_take_conn(pr); /* kept: nothing else uses the run now */
    poisoned = pr->poisoned;
    close.type = LIL_REC_CLOSE;
    if (!poisoned && write_close)
        rc = encode(pr, err, &close);
    pthread_mutex_unlock(&pr->mu);
    if (poisoned) {
        struct lil_err ignored;
        if (lil__pg_conn_ok(pr->ps, pr->conn))
            release(pr, &ignored, NULL, 0, false); /* as a courtesy: may be fenced */
        return lil__pg_poisoned_err(pr, err);
    }
    if (rc == LIL_OK)
        rc = release(pr, err, pr->pending.data, pr->pending.len, write_close);
    return rc;
}
