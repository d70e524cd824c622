/*
 * store_pg_run.c -- runs of the PostgreSQL store: open (create, take the
 * lease, read and scan the journal image), close, walk, facts, who holds a
 * run, and the cut of `lil check --repair`.  Appends are in
 * store_pg_append.c; the design is in store_pg.h.
 *
 * A writable open is one transaction on the connection the run keeps:
 * create the run when asked (its header and BEGIN, made as the journal
 * makes them), take the lease (or find it held: LIL_E_LOCKED), read the
 * records, scan them with the journal's scan (the caller's callback sees
 * each one), and commit (synchronously: whatever the run held is durable
 * from then on, like a file store's open that fdatasyncs what it found).
 * When the scan refuses the run (damage, a wrong key), the transaction is
 * rolled back: nothing was created and the lease was not taken.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/settings/sync_mode.h"
#include "journal/format.h"
#include "journal/journal.h"
#include "journal/scan.h"
#include "os/os.h"
#include "store/image.h"
#include "store/pg/store_pg.h"

/* ---- reading ------------------------------------------------------------------- */

static lil_status read_header(struct pg_store *ps, struct pg_conn *c,
                              struct lil_err *err, const char *run_id,
                              struct lil_buf *out)
{
    struct pg_params p = {0};
    PGresult *res;
    lil_status rc;

    lil__pg_param_text(&p, run_id);
    rc = lil__pg_query(ps, c, err, "reading a run",
                       "SELECT header FROM @.runs WHERE run_id = $1", &p, true, &res);
    if (rc != LIL_OK)
        return rc;
    if (ps->pq->ntuples(res) == 0)
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "no run %s in %s", run_id,
                         ps->base.where);
    else if (lil__buf_add(out, ps->pq->getvalue(res, 0, 0),
                          (size_t)ps->pq->getlength(res, 0, 0)) != LIL_OK)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory reading run %s", run_id);
    ps->pq->clear(res);
    return rc;
}

/* Up to PG_READ_CHUNK frames after seq *after into out; *after moves to the
 * last one read, *more tells whether there may be others. */
static lil_status read_chunk(struct pg_store *ps, struct pg_conn *c,
                             struct lil_err *err, const char *run_id, int64_t *after,
                             bool *more, struct lil_buf *out)
{
    struct pg_params p = {0};
    PGresult *res;
    lil_status rc;
    int n;

    lil__pg_param_text(&p, run_id);
    lil__pg_param_int8(&p, *after);
    lil__pg_param_int8(&p, PG_READ_CHUNK);
    rc = lil__pg_query(ps, c, err, "reading records",
                       "SELECT seq, frame FROM @.records WHERE run_id = $1 "
                       "AND seq > $2 ORDER BY seq LIMIT $3",
                       &p, true, &res);
    if (rc != LIL_OK)
        return rc;
    n = ps->pq->ntuples(res);
    for (int i = 0; rc == LIL_OK && i < n; i++) {
        *after = lil__pg_get_int8(ps->pq, res, i, 0);
        if (lil__buf_add(out, ps->pq->getvalue(res, i, 1),
                         (size_t)ps->pq->getlength(res, i, 1)) != LIL_OK)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory reading run %s",
                             run_id);
    }
    *more = n == PG_READ_CHUNK;
    ps->pq->clear(res);
    return rc;
}

lil_status lil__pg_read_image(struct pg_store *ps, struct pg_conn *c,
                              struct lil_err *err, const char *run_id,
                              uint64_t after_seq, struct lil_buf *out)
{
    int64_t after = (int64_t)after_seq;
    bool more = true;
    lil_status rc = LIL_OK;

    if (after_seq == 0)
        rc = read_header(ps, c, err, run_id, out);
    while (rc == LIL_OK && more)
        rc = read_chunk(ps, c, err, run_id, &after, &more, out);
    return rc;
}

/* ---- taking and creating a run ------------------------------------------------- */

static const char take_sql[] =
    "UPDATE @.runs SET lease_epoch = lease_epoch + 1, lease_owner = $2, "
    "lease_until = now() + $3 * interval '1 millisecond', "
    "holder_backend_pid = pg_backend_pid(), holder_pid = $4 "
    "WHERE run_id = $1 AND (lease_until IS NULL OR lease_until < now() "
    "OR holder_backend_pid IS NULL OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a "
    "WHERE a.pid = runs.holder_backend_pid)) RETURNING lease_epoch";

/* lease_owner for this process: "pid P on HOST since T" (T: when it
 * started, so that a pid used again by another process is told apart). */
void lil__pg_owner(const struct pg_store *ps, char *buf, size_t cap)
{
    int pid = lil__os_self_pid();
    uint64_t start = 0;
    bool gone;

    if (lil__os_proc_start(ps->base.env, pid, &start, &gone) != 0)
        start = 0;
    snprintf(buf, cap, "pid %d on %s since %llu", pid, ps->host,
             (unsigned long long)start);
}

/* Whether the holder named by owner is a process of this machine that is
 * gone: dead (perhaps not reaped yet), or its pid now another process's. */
static bool holder_gone(const struct pg_store *ps, int pid, const char *owner)
{
    const char *on = strstr(owner, " on "), *since = strstr(owner, " since ");
    size_t host_len = on && since > on ? (size_t)(since - on - 4) : 0;
    uint64_t start = 0;
    bool gone = false;

    if (!host_len || host_len != strlen(ps->host) ||
        strncmp(on + 4, ps->host, host_len) != 0 || pid <= 0)
        return false; /* another machine's: its lease or its backend decides */
    if (lil__os_proc_start(ps->base.env, pid, &start, &gone) != 0)
        return true;
    return gone || start != strtoull(since + 7, NULL, 10);
}

/* Take the lease of run_id on c (in the caller's transaction): *epoch, or 0
 * when the run is missing or held. */
static lil_status take(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                       const char *run_id, int64_t *epoch)
{
    struct pg_params p = {0};
    char owner[PG_OWNER_MAX];
    PGresult *res;
    lil_status rc;

    *epoch = 0;
    lil__pg_owner(ps, owner, sizeof(owner));
    lil__pg_param_text(&p, run_id);
    lil__pg_param_text(&p, owner);
    lil__pg_param_int8(&p, ps->lease_ms);
    lil__pg_param_int4(&p, lil__os_self_pid());
    rc = lil__pg_query(ps, c, err, "taking a run", take_sql, &p, true, &res);
    if (rc != LIL_OK)
        return rc;
    if (ps->pq->ntuples(res) == 1)
        *epoch = lil__pg_get_int8(ps->pq, res, 0, 0);
    ps->pq->clear(res);
    return LIL_OK;
}

/* LIL_E_LOCKED naming the holder as the file store does ("run R is held by
 * pid P"), and its host and lease when it is another machine. */
static lil_status held_err(const struct pg_store *ps, struct lil_err *err,
                           const char *run_id, const char *pid, const char *owner,
                           const char *lease_s, bool *gone)
{
    const char *on = strstr(owner, " on ");
    size_t host_len = on ? strcspn(on + 4, " ") : 0;

    /* a process of this machine that is gone: its backend is about to see
     * its connection closed, and to leave pg_stat_activity */
    *gone = holder_gone(ps, (int)strtol(pid, NULL, 10), owner);
    if (on && host_len == strlen(ps->host) && strncmp(on + 4, ps->host, host_len) == 0)
        return lil__seterr(err, LIL_E_LOCKED, 0, "run %s is held by pid %s", run_id,
                           pid);
    return lil__seterr(err, LIL_E_LOCKED, 0,
                       "run %s is held by pid %s on %.*s (its lease runs %s s more)",
                       run_id, pid, (int)host_len, on ? on + 4 : "?", lease_s);
}

/* Why take found no run to take: LIL_E_NOTFOUND or LIL_E_LOCKED naming the
 * holder (read after the rollback). */
static lil_status not_taken(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                            const char *run_id, bool *gone)
{
    struct pg_params p = {0};
    PGresult *res;
    lil_status rc;

    lil__pg_param_text(&p, run_id);
    rc = lil__pg_query(ps, c, err, "reading who holds a run",
                       "SELECT coalesce(holder_pid, 0), coalesce(lease_owner, "
                       "'?'), greatest(0, extract(epoch FROM lease_until - "
                       "now()))::int FROM @.runs WHERE run_id = $1",
                       &p, false, &res);
    if (rc != LIL_OK)
        return rc;
    if (ps->pq->ntuples(res) == 0)
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "no run %s in %s", run_id,
                         ps->base.where);
    else
        rc = held_err(ps, err, run_id, ps->pq->getvalue(res, 0, 0),
                      ps->pq->getvalue(res, 0, 1), ps->pq->getvalue(res, 0, 2), gone);
    ps->pq->clear(res);
    return rc;
}

/* Create the run unless it exists (in the caller's transaction). */
static lil_status create(struct pg_run *pr, struct lil_err *err,
                         const struct lil_srun_opts *o)
{
    struct pg_store *ps = pr->ps;
    struct lil_buf first; /* the header, then BEGIN */
    struct pg_params p = {0};
    PGresult *res = NULL;
    lil_status rc;

    lil__buf_init(&first, pr->env, (size_t)-1);
    rc = lil__image_first(pr->env, err, pr->run_id, o->key, o->key_len, &first);
    lil__pg_param_text(&p, pr->run_id);
    lil__pg_param_bytea(&p, first.data, LIL_JF_HEADER_LEN);
    lil__pg_param_bool(&p, o->key != NULL);
    lil__pg_param_text(&p, lil__sync_name(o->sync));
    if (rc == LIL_OK)
        rc = lil__pg_query(ps, pr->conn, err, "creating a run",
                           "INSERT INTO @.runs (run_id, header, keyed, sync) "
                           "VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO "
                           "NOTHING",
                           &p, false, &res);
    if (rc == LIL_OK && lil__pg_changed(ps->pq, res) == 1)
        rc = lil__pg_insert_frames(ps, pr->conn, err, pr->run_id,
                                   first.data + LIL_JF_HEADER_LEN,
                                   first.len - LIL_JF_HEADER_LEN, LIL_JF_HEADER_LEN);
    if (res)
        ps->pq->clear(res);
    lil__buf_free(&first);
    return rc;
}

/* ---- the scan ------------------------------------------------------------------- */

/* Scan the image with the journal's scan; a torn tail is damage here (the
 * server commits records whole). */
static lil_status scan_image(struct pg_run *pr, struct lil_err *err,
                             const struct lil_srun_opts *o, lil_rec_scan_fn scan,
                             void *ud)
{
    struct scan_result res;
    lil_status rc = lil__image_scan(pr->env, err, pr->where, pr->image.data,
                                    pr->image.len, o, scan, ud, &pr->mac, &res);

    if (rc != LIL_OK)
        return rc;
    memcpy(pr->chain, res.chain, LIL_SHA256_LEN);
    pr->seq = res.seq;
    pr->end = pr->scanned_end = res.end;
    lil__group_settled(&pr->group, res.end);
    pr->records = pr->scanned_records = res.records;
    pr->created_ns = res.created_ns;
    pr->last_ns = res.last_ns;
    pr->keyed = lil__mac_keyed(pr->mac) != 0;
    return LIL_OK;
}

/* ---- open ----------------------------------------------------------------------- */

static void run_free(struct pg_run *pr)
{
    lil__mac_free(pr->env, pr->mac);
    lil__buf_free(&pr->image);
    lil__buf_free(&pr->pending);
    lil__buf_free(&pr->sending);
    lil__group_fini(&pr->group);
    pthread_mutex_destroy(&pr->mu);
    lil__free(pr->env, pr->run_id);
    lil__free(pr->env, pr->where);
    lil__free(pr->env, pr);
}

static struct pg_run *run_new(struct pg_store *ps, const char *run_id,
                              const struct lil_srun_opts *o)
{
    struct pg_run *pr = lil__calloc(ps->base.env, 1, sizeof(*pr));
    size_t n = strlen(ps->base.where) + strlen(run_id) + 16;

    if (!pr)
        return NULL;
    pr->ps = ps;
    pr->env = ps->base.env;
    pr->base.ops = ps->base.ops;
    pr->readonly = o->readonly;
    pr->sync = o->sync;
    pr->max_record = o->max_record;
    pr->pid = lil__os_self_pid();
    pthread_mutex_init(&pr->mu, NULL);
    lil__pg_group_init(pr);
    lil__buf_init(&pr->image, pr->env, (size_t)-1);
    lil__buf_init(&pr->pending, pr->env, (size_t)-1);
    lil__buf_init(&pr->sending, pr->env, (size_t)-1);
    pr->run_id = lil__strdup(pr->env, run_id);
    pr->where = lil__malloc(pr->env, n);
    if (!pr->run_id || !pr->where) {
        run_free(pr);
        return NULL;
    }
    snprintf(pr->where, n, "%s: run %s", ps->base.where, run_id);
    pr->base.where = pr->where;
    return pr;
}

struct open_ctx {
    struct pg_run *pr;
    const struct lil_srun_opts *o;
    lil_rec_scan_fn scan;
    void *ud;
    bool holder_gone;       /* LIL_E_LOCKED by a process of this machine that is gone */
    struct pg_claim *claim; /* this process claimed the run: its lease goes on */
};

/* Go on with the lease of a claim (store_pg_queue.c) on its connection, in
 * the caller's transaction: *epoch, or 0 when the claim was lost (the run
 * was claimed again since: this process was paused past the lease). */
static lil_status adopt(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                        const struct pg_claim *claim, int64_t *epoch)
{
    struct pg_params p = {0};
    char owner[PG_OWNER_MAX];
    PGresult *res;
    lil_status rc;

    *epoch = 0;
    lil__pg_owner(ps, owner, sizeof(owner));
    lil__pg_param_text(&p, claim->pub.run_id);
    lil__pg_param_text(&p, owner);
    lil__pg_param_int8(&p, ps->lease_ms);
    lil__pg_param_int4(&p, lil__os_self_pid());
    lil__pg_param_int8(&p, claim->pub.epoch);
    rc = lil__pg_query(ps, c, err, "taking a claimed run",
                       "UPDATE @.runs SET lease_owner = $2, lease_until = "
                       "now() + $3 * interval '1 millisecond', holder_pid = "
                       "$4 WHERE run_id = $1 AND lease_epoch = $5 AND "
                       "holder_backend_pid = pg_backend_pid() RETURNING "
                       "lease_epoch",
                       &p, true, &res);
    if (rc != LIL_OK)
        return rc;
    if (ps->pq->ntuples(res) == 1)
        *epoch = lil__pg_get_int8(ps->pq, res, 0, 0);
    ps->pq->clear(res);
    return LIL_OK;
}

static lil_status claim_lost(struct pg_run *pr, struct lil_err *err,
                             const struct pg_claim *claim)
{
    return lil__seterr(err, LIL_E_LOCKED, 0,
                       "fenced: run %s was claimed again since this process claimed "
                       "it (epoch %lld): another worker has it",
                       pr->run_id, (long long)claim->pub.epoch);
}

static lil_status read_only(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                            void *ud)
{
    struct open_ctx *x = ud;

    lil__buf_reset(&x->pr->image);
    return lil__pg_read_image(ps, c, err, x->pr->run_id, 0, &x->pr->image);
}

/* The writable open's transaction (see the top). */
static lil_status open_tx(struct pg_run *pr, struct lil_err *err, struct open_ctx *x)
{
    struct pg_store *ps = pr->ps;
    lil_status rc = lil__pg_simple(ps, pr->conn, err, "BEGIN", "opening a run");

    if (rc == LIL_OK && x->o->create)
        rc = create(pr, err, x->o);
    if (rc == LIL_OK && x->claim)
        rc = adopt(ps, pr->conn, err, x->claim, &pr->epoch);
    else if (rc == LIL_OK)
        rc = take(ps, pr->conn, err, pr->run_id, &pr->epoch);
    if (rc == LIL_OK && pr->epoch == 0) {
        rc = lil__pg_simple(ps, pr->conn, err, "ROLLBACK", "opening a run");
        if (rc == LIL_OK && x->claim)
            return claim_lost(pr, err, x->claim);
        return rc == LIL_OK ? not_taken(ps, pr->conn, err, pr->run_id, &x->holder_gone)
                            : rc;
    }
    if (rc == LIL_OK)
        rc = lil__pg_read_image(ps, pr->conn, err, pr->run_id, 0, &pr->image);
    if (rc == LIL_OK)
        rc = scan_image(pr, err, x->o, x->scan, x->ud);
    if (rc == LIL_OK)
        return lil__pg_simple(ps, pr->conn, err, "COMMIT", "opening a run");
    if (lil__pg_conn_ok(ps, pr->conn))
        lil__pg_simple(ps, pr->conn, NULL, "ROLLBACK", "opening a run");
    return rc;
}

/* A writable open, once more on a new connection when the first was found
 * dead (a restarted server): the transaction is atomic, and a lease taken
 * by a commit whose answer was lost names a backend that is gone. */
static int64_t lease_end(const struct pg_store *ps, int64_t t0)
{
    return t0 + ps->lease_ms * 1000000;
}

static lil_status open_once(struct pg_run *pr, struct lil_err *err, struct open_ctx *x)
{
    for (int attempt = 0;; attempt++) {
        lil_status rc = lil__pg_conn_get(pr->ps, err, &pr->conn);
        int64_t t0 = lil__mono_ns();
        bool lost;

        if (rc != LIL_OK)
            return rc;
        lil__buf_reset(&pr->image);
        rc = open_tx(pr, err, x);
        if (rc == LIL_OK)
            return lil__pg_hold(pr->ps, err, pr->run_id, pr->epoch,
                                lease_end(pr->ps, t0), &pr->held);
        lost = !lil__pg_conn_ok(pr->ps, pr->conn);
        lil__pg_conn_put(pr->ps, pr->conn);
        pr->conn = NULL;
        if (!lost || attempt == 1)
            return rc;
        lil__pg_pool_drain(pr->ps);
    }
}

/* The open; when the holder is a process of this machine that has died,
 * again for a while (GONE_WAIT_MS): the server ends its backend as soon as it
 * sees the connection closed, a moment later (a file store's lock is free
 * the moment its process dies). */
#define GONE_WAIT_MS 3000
#define GONE_STEP_MS 20

/* A writable open of a run this process claimed: on the claim's
 * connection, its lease (and the renewer's entry) going on. */
static lil_status open_claimed(struct pg_run *pr, struct lil_err *err,
                               struct open_ctx *x)
{
    struct pg_claim *c = x->claim;
    int64_t t0 = lil__mono_ns();
    lil_status rc;

    pr->conn = c->conn;
    c->conn = NULL;
    rc = open_tx(pr, err, x);
    if (rc != LIL_OK) {
        /* the claim keeps its connection: its release lets the lease go */
        if (lil__pg_conn_ok(pr->ps, pr->conn))
            lil__pg_claim_return(pr->ps, c, pr->conn);
        else
            lil__pg_disconnect(pr->ps, pr->conn);
        pr->conn = NULL;
        return rc;
    }
    pr->held = c->held;
    c->held = NULL;
    __atomic_store_n(&pr->held->valid_until_ns, lease_end(pr->ps, t0),
                     __ATOMIC_RELAXED);
    return LIL_OK;
}

static lil_status open_writable(struct pg_run *pr, struct lil_err *err,
                                struct open_ctx *x)
{
    const struct timespec step = {0, GONE_STEP_MS * 1000000L};

    x->claim = lil__pg_claim_adopt(pr->ps, pr->run_id);
    if (x->claim)
        return open_claimed(pr, err, x);

    for (int waited = 0;; waited += GONE_STEP_MS) {
        lil_status rc;

        x->holder_gone = false;
        rc = open_once(pr, err, x);
        if (rc != LIL_E_LOCKED || !x->holder_gone || waited >= GONE_WAIT_MS)
            return rc;
        nanosleep(&step, NULL);
    }
}

lil_status lil__pg_run_open(struct lil_store *st, struct lil_err *err,
                            const char *run_id, const struct lil_srun_opts *o,
                            lil_rec_scan_fn scan, void *ud, struct lil_srun **out)
{
    struct pg_store *ps = (struct pg_store *)st;
    struct pg_run *pr = run_new(ps, run_id, o);
    struct open_ctx x = {pr, o, scan, ud, false, NULL};
    lil_status rc;

    *out = NULL;
    if (!pr)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (o->readonly) {
        rc = lil__pg_with_conn(ps, err, read_only, &x);
        if (rc == LIL_OK)
            rc = scan_image(pr, err, o, scan, ud);
    } else {
        rc = open_writable(pr, err, &x);
    }
    if (rc != LIL_OK) {
        run_free(pr);
        return rc;
    }
    *out = &pr->base;
    return LIL_OK;
}

/* ---- close ---------------------------------------------------------------------- */

lil_status lil__pg_run_close(struct lil_srun *r, struct lil_err *err, bool ended)
{
    struct pg_run *pr = (struct pg_run *)r;
    struct lil_err local;
    lil_status rc = LIL_OK;

    (void)ended;
    if (!err)
        err = &local;
    if (pr->conn && pr->pid == lil__os_self_pid())
        rc = lil__pg_run_release(pr, err);
    if (pr->held)
        lil__pg_unhold(pr->ps, pr->held);
    if (pr->conn && rc == LIL_OK && pr->pid == lil__os_self_pid())
        lil__pg_conn_put(pr->ps, pr->conn);
    else
        lil__pg_disconnect(pr->ps, pr->conn); /* a child's copy: only forgotten */
    run_free(pr);
    return rc;
}

/* ---- walking and facts ------------------------------------------------------------
 */

/* The records appended since the open, read back (the connection taken). */
static lil_status read_appended(struct pg_run *pr, struct lil_err *err,
                                struct lil_buf *out)
{
    uint64_t after;
    lil_status rc;

    pthread_mutex_lock(&pr->mu);
    lil__pg_run_take_conn(pr);
    after = pr->scanned_records; /* the seq of the last record scanned */
    pthread_mutex_unlock(&pr->mu);
    rc = pr->poisoned
             ? lil__pg_poisoned_err(pr, err)
             : lil__pg_read_image(pr->ps, pr->conn, err, pr->run_id, after, out);
    pthread_mutex_lock(&pr->mu);
    lil__pg_run_give_conn(pr);
    pthread_mutex_unlock(&pr->mu);
    return rc;
}

lil_status lil__pg_run_walk(struct lil_srun *r, struct lil_err *err, lil_rec_walk_fn fn,
                            void *ud)
{
    struct pg_run *pr = (struct pg_run *)r;
    size_t head = LIL_JF_HEADER_LEN;
    struct lil_buf more;
    bool appended;
    lil_status rc = LIL_OK;

    if (lil__image_walk(pr->image.data + head, pr->scanned_end - head, head, fn, ud))
        return LIL_OK;
    pthread_mutex_lock(&pr->mu);
    appended = pr->group.committed > pr->scanned_end;
    pthread_mutex_unlock(&pr->mu);
    if (!appended || pr->readonly)
        return LIL_OK;
    lil__buf_init(&more, pr->env, (size_t)-1);
    rc = read_appended(pr, err, &more);
    if (rc == LIL_OK)
        lil__image_walk(more.data, more.len, pr->scanned_end, fn, ud);
    lil__buf_free(&more);
    return rc;
}

bool lil__pg_run_next_scanned(const struct lil_srun *r, uint64_t *cursor,
                              struct lil_rec *rec)
{
    const struct pg_run *pr = (const struct pg_run *)r;

    return lil__image_next(pr->image.data, pr->scanned_end, cursor, rec);
}

void lil__pg_run_info(const struct lil_srun *r, struct lil_srun_info *info)
{
    const struct pg_run *pr = (const struct pg_run *)r;

    /* written under mu by appends (encode), read here without it */
    info->records = __atomic_load_n(&pr->records, __ATOMIC_RELAXED);
    info->bytes = __atomic_load_n(&pr->end, __ATOMIC_RELAXED);
    info->last_ns = __atomic_load_n(&pr->last_ns, __ATOMIC_RELAXED);
    info->created_ns = pr->created_ns;
    info->sync = pr->sync;
    info->keyed = pr->keyed;
    info->torn_pos = 0;
    info->torn_records = 0;
}

struct holder_ctx {
    const char *run_id;
    int pid;
};

static lil_status read_holder(struct pg_store *ps, struct pg_conn *c,
                              struct lil_err *err, void *ud)
{
    struct holder_ctx *x = ud;
    struct pg_params p = {0};
    PGresult *res;
    lil_status rc;

    lil__pg_param_text(&p, x->run_id);
    rc = lil__pg_query(ps, c, err, "reading who holds a run",
                       "SELECT coalesce(holder_pid, -1) FROM @.runs WHERE "
                       "run_id = $1 AND lease_until > now() AND EXISTS "
                       "(SELECT 1 FROM pg_stat_activity a WHERE a.pid = "
                       "runs.holder_backend_pid)",
                       &p, false, &res);
    if (rc != LIL_OK)
        return rc;
    x->pid =
        ps->pq->ntuples(res) ? (int)strtol(ps->pq->getvalue(res, 0, 0), NULL, 10) : 0;
    ps->pq->clear(res);
    return LIL_OK;
}

int lil__pg_run_holder(const struct lil_srun *r, int last_opener)
{
    const struct pg_run *pr = (const struct pg_run *)r;
    struct holder_ctx x = {pr->run_id, 0};
    struct lil_err err;

    (void)last_opener;
    if (lil__pg_claim_pending(pr->ps, pr->run_id))
        return 0; /* this process claimed it: the open that follows takes it */
    if (lil__pg_with_conn(pr->ps, &err, read_holder, &x) != LIL_OK)
        return -1; /* cannot tell */
    return x.pid;
}

/* ---- repair ---------------------------------------------------------------------- */

struct repair_ctx {
    const char *run_id;
    const uint8_t *key;
    size_t key_len;
    lil_check_report *report;
};

/* In the transaction, holding the run: check it, and cut it at the damage. */
static lil_status check_and_cut(struct pg_store *ps, struct pg_conn *c,
                                struct lil_err *err, const struct repair_ctx *x)
{
    lil_check_report *rep = x->report;
    struct pg_params p = {0};
    struct lil_buf image;
    lil_status rc;

    lil__buf_init(&image, ps->base.env, (size_t)-1);
    rc = lil__pg_read_image(ps, c, err, x->run_id, 0, &image);
    rep->file_bytes = image.len;
    if (rc == LIL_OK)
        rc = lil__journal_check_image(ps->base.env, err, ps->base.where, image.data,
                                      image.len, x->key, x->key_len, rep);
    lil__buf_free(&image);
    if (rc != LIL_OK || (rep->intact && !rep->torn_tail))
        return rc;
    if (rep->damage_offset < LIL_JF_HEADER_LEN)
        return lil__seterr(err, LIL_E_CORRUPT, 0,
                           "run %s: its journal header is damaged; nothing to keep",
                           x->run_id);
    lil__pg_param_text(&p, x->run_id);
    lil__pg_param_int8(&p, (int64_t)rep->damage_offset);
    rc = lil__pg_query(ps, c, err, "repairing a run",
                       "DELETE FROM @.records WHERE run_id = $1 AND off >= $2", &p,
                       false, NULL);
    if (rc == LIL_OK)
        rep->repaired = 1;
    return rc;
}

static lil_status repair_tx(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                            const struct repair_ctx *x)
{
    struct pg_params p = {0};
    int64_t epoch = 0;
    lil_status rc = lil__pg_simple(ps, c, err, "BEGIN", "repairing a run");

    if (rc == LIL_OK)
        rc = take(ps, c, err, x->run_id, &epoch);
    if (rc == LIL_OK && epoch == 0) {
        bool gone;
        lil__pg_simple(ps, c, err, "ROLLBACK", "repairing a run");
        return not_taken(ps, c, err, x->run_id, &gone);
    }
    if (rc == LIL_OK)
        rc = check_and_cut(ps, c, err, x);
    lil__pg_param_text(&p, x->run_id);
    if (rc == LIL_OK)
        rc = lil__pg_query(ps, c, err, "repairing a run",
                           "UPDATE @.runs SET lease_until = NULL, lease_owner "
                           "= NULL, holder_backend_pid = NULL, holder_pid = "
                           "NULL WHERE run_id = $1",
                           &p, false, NULL);
    if (rc == LIL_OK)
        return lil__pg_simple(ps, c, err, "COMMIT", "repairing a run");
    if (lil__pg_conn_ok(ps, c))
        lil__pg_simple(ps, c, NULL, "ROLLBACK", "repairing a run");
    return rc;
}

lil_status lil__pg_run_repair(struct pg_store *ps, struct lil_err *err,
                              const char *run_id, const uint8_t *key, size_t key_len,
                              lil_check_report *report)
{
    struct repair_ctx x = {run_id, key, key_len, report};
    struct pg_conn *c = NULL;
    lil_status rc = lil__pg_conn_get(ps, err, &c);

    if (rc == LIL_OK)
        rc = repair_tx(ps, c, err, &x);
    lil__pg_conn_put(ps, c);
    return rc;
}
