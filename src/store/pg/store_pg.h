/*
 * store_pg.h -- inside the PostgreSQL store: its handle, its connections,
 * its runs, and what the store_pg*.c files share.  Only src/store/ includes
 * this header.  docs/postgres.md says the same for users.
 *
 * A location postgresql://... (or postgres://...) opens this store.  lil
 * reads one parameter of its own from the URI's query and removes it before
 * libpq sees the rest: schema=NAME, the schema of lil's tables (default
 * "lil"; lower-case letters, digits and '_', at most 63 bytes).  The store
 * names itself (lil_store_path, messages) with the location as given but for
 * a password, which reads "***".
 *
 * SCHEMA (version 4; store_pg_schema.c creates and migrates it)
 *
 *   lil_meta(key PK, value)        schema_version, lil_version (the lil that
 *                                  last migrated it)
 *   runs(run_id PK, created, header bytea, keyed, sync,
 *        lease_epoch, lease_owner, lease_until, holder_backend_pid,
 *        holder_pid,
 *        state, wake_at, payload bytea,
 *        submitted_at, attempts, claimed_by, last_error)   the queue (2, 3)
 *   index runs_queue (coalesce(wake_at, submitted_at)) of the claimable
 *   records(run_id, seq, off, frame bytea, PK (run_id, seq))
 *   stop_requests(run_id PK, request bytea, created)
 *   markers(name PK, state 'pending'|'done', owner bytea, result bytea,
 *           updated)
 *   workers(owner PK, name, host, pid, threads, lease_ms, started,
 *           heartbeat)                                     workers (4)
 *   schedules(id PK, doc bytea, mark_ms, updated)          schedules (4)
 *
 * A run's records keep the journal's bytes: runs.header is the 64-byte
 * file header a journal of the run would start with, and each frame is
 * the record exactly as the file store writes it (journal/format.h), with
 * the same chain, at the byte offset off it would have in the file.  So
 * header || frames, in seq order, is the run's journal file: the open scans
 * it with the journal's own scan (journal/scan.h), `lil check` verifies it
 * with the journal's check, and `lil export` writes it out byte for byte.
 *
 * HOLDING A RUN: a lease with an epoch (a fencing token)
 *
 * A writable open takes the run in one transaction: when its lease has run
 * out (lease_until past) or the backend that holds it is gone from
 * pg_stat_activity (a crashed process's connection is closed, so its runs
 * are free at once), lease_epoch + 1, lease_owner ("pid P on HOST since T",
 * T the process's start time: a pid used again is told apart), lease_until = now() +
 * the lease (LIL_PG_LEASE_MS, default 30 s), holder_backend_pid =
 * pg_backend_pid() of the connection that holds it, holder_pid = this
 * process; otherwise LIL_E_LOCKED naming the holder.  Every append checks
 * the epoch in its own transaction (the runs row read FOR SHARE, so a
 * takeover waits for the append, or the append for the takeover and then
 * finds the epoch changed): a holder whose run was taken over writes not a
 * single record more (the run is poisoned, "fenced").  A thread of the
 * store renews the leases of the runs it holds every lease/3 on a
 * connection of its own (store_pg_lease.c), so long steps keep their runs;
 * a process that stops (or is paused) stops renewing.  A read-only open
 * takes no lease.  Close appends CLOSE (as the file store does) and
 * releases the lease in one synchronous transaction.  Before an effect
 * starts, a handle whose last lease renewal began a lease ago or more
 * (the process was paused or cut off) poisons its run instead
 * (run_lease_check).
 *
 * QUEUE (store_pg_queue.c): a claim takes a queued run's lease in the
 * claiming statement (epoch + 1) on a connection it keeps; this process's
 * next writable open of the run adopts that lease on that connection (the
 * epoch unchanged) instead of taking it: struct pg_claim, ps->claims.
 *
 * DURABILITY AND GROUP COMMIT (store_pg_append.c)
 *
 * Every append is committed before run_append returns, so a crash of the
 * process keeps it, in every mode.  A commit that must make it durable (the
 * enum lil_append_sync and the run's sync mode say when, as for the file
 * store) runs with synchronous_commit on, and returns after the server has
 * flushed its WAL; the others with synchronous_commit off (SET LOCAL, inside
 * the appending statement).  The WAL is one sequence, so a synchronous
 * commit makes every earlier commit durable too: run_sync commits a tiny
 * write with synchronous_commit on.  Appends of one run from many threads
 * share commits: one thread (the leader) sends every record appended so
 * far in one statement (one transaction), while the others wait; the run's
 * next leader takes what was appended meanwhile.  After a failed commit the
 * run is poisoned; when the connection was lost, the commit's outcome is
 * unknown and the run must be opened again, which reads what the server
 * kept.
 *
 * CONNECTIONS
 *
 * A libpq connection is used by one thread at a time.  Each writable run
 * holds one (its lease names that connection's backend) until it closes;
 * the store keeps a small pool of idle ones for everything else (reads,
 * stop requests, markers: a marker's advisory lock lives on the connection
 * that took it, for as long as the caller is inside).  A connection
 * belongs to the process that made it: a child forked since never uses,
 * pools or closes it (PQfinish would end the parent's session).
 */
#ifndef LIL_STORE_STORE_PG_H
#define LIL_STORE_STORE_PG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/hash.h"
#include "os/group.h"
#include "store/pg/pq_dl.h"
#include "store/store.h"

#define PG_SCHEMA_MAX     63
#define PG_SCHEMA_VERSION 4     /* the schema this lil creates and reads */
#define PG_LEASE_MS       30000 /* default lease (LIL_PG_LEASE_MS) */
#define PG_BATCH_MAX      32    /* records in one append statement */
#define PG_POOL_MAX       8     /* idle connections a store keeps */
#define PG_READ_CHUNK     2048  /* records read per statement */
#define PG_PARAMS_MAX     (3 + 3 * PG_BATCH_MAX)
#define PG_OWNER_MAX      160
#define SQL_MAX           8192 /* a statement's text, '@' replaced (lil__pg_sql) */

/* PostgreSQL type OIDs (pg_type.h) of the parameters lil sends. */
#define PG_OID_BOOL  16u
#define PG_OID_BYTEA 17u
#define PG_OID_INT8  20u
#define PG_OID_INT4  23u
#define PG_OID_TEXT  25u

/* One libpq connection. */
struct pg_conn {
    PGconn *pc;
    int pid;              /* the process that made it */
    int backend_pid;      /* its server process */
    uint64_t prepared;    /* bit n-1: the append statement of n records is
                             prepared on it; bit 63: the touch statement */
    struct pg_conn *next; /* in the idle pool */
};

/* The runs a store holds, for the renewing thread. */
struct pg_held {
    struct pg_held *next;
    int64_t epoch;
    int pid; /* the process holding it (a forked child renews none of these) */
    /* monotonic ns until which the lease is surely ours: the start of the
     * last commit that set lease_until, plus the lease (atomic) */
    int64_t valid_until_ns;
    char run_id[LIL_RUN_ID_MAX + 1];
};

/* A run claimed from the queue (store_pg_queue.c), until queue_release. */
struct pg_claim {
    struct lil_sclaim pub;
    struct pg_claim *next; /* in the store's claims */
    int pid;               /* the process that claimed it */
    struct pg_conn *conn;  /* the connection the lease names; NULL once a
                              writable open of the run took it (adopted) */
    struct pg_held *held;  /* the renewer's entry: goes with conn */
    bool adopted;
};

struct pg_store {
    struct lil_store base;
    const struct lil_pq *pq;
    char *conninfo;                 /* what libpq gets (schema= removed) */
    char schema[PG_SCHEMA_MAX + 1]; /* validated: no quoting needed */
    int64_t lease_ms;               /* LIL_PG_LEASE_MS, read at open */
    char host[64];                  /* this machine, as lease_owner names it */

    pthread_mutex_t pool_mu; /* guards idle and n_idle */
    struct pg_conn *idle;
    unsigned n_idle;

    pthread_mutex_t held_mu; /* guards what follows */
    pthread_cond_t held_cv;  /* wakes the renewer (stop) */
    struct pg_held *held;
    bool renewer_on;      /* a renewer thread runs in renewer_pid */
    unsigned renewer_gen; /* a renewer runs while this is the one it began with */
    int renewer_pid;
    pthread_t renewer;

    int workers;     /* under held_mu: worker_join's of workers_pid not left */
    int workers_pid; /* the process registered (workers table) */

    pthread_mutex_t claims_mu; /* guards claims */
    struct pg_claim *claims;   /* runs claimed from the queue (store_pg_queue.c) */
};

/* A parameter list for lil__pg_exec (binary integers, text, bytea). */
struct pg_params {
    int n;
    unsigned types[PG_PARAMS_MAX];
    const char *vals[PG_PARAMS_MAX];
    int lens[PG_PARAMS_MAX];
    int fmts[PG_PARAMS_MAX];
    uint8_t ints[PG_PARAMS_MAX][8];
};

void lil__pg_param_text(struct pg_params *p, const char *s);
void lil__pg_param_int8(struct pg_params *p, int64_t v);
void lil__pg_param_int4(struct pg_params *p, int32_t v);
void lil__pg_param_bool(struct pg_params *p, bool v);
void lil__pg_param_bytea(struct pg_params *p, const void *data, size_t len);

/* Integers of binary results (network order). */
int64_t lil__pg_get_int8(const struct lil_pq *pq, const PGresult *res, int row,
                         int col);

/* ---- the location and connections (store_pg_conn.c) ---------------------- */

/* Split where into what libpq gets (*conninfo, lil__free) and the schema;
 * *display (lil__free) is where with its password replaced.  LIL_E_INVAL for
 * a bad schema name or what libpq cannot parse (pq may be NULL: no parse). */
lil_status lil__pg_location(const struct lil_env *env, const struct lil_pq *pq,
                            struct lil_err *err, const char *where, char **conninfo,
                            char *schema, char **display);

/* A new connection (LIL_E_PG naming the location and libpq's reason). */
lil_status lil__pg_connect(struct pg_store *ps, struct lil_err *err,
                           struct pg_conn **out);
/* Close c (NULL-safe); a connection of another process is only forgotten. */
void lil__pg_disconnect(struct pg_store *ps, struct pg_conn *c);
/* An idle connection of the pool, or a new one. */
lil_status lil__pg_conn_get(struct pg_store *ps, struct lil_err *err,
                            struct pg_conn **out);
/* Give c back to the pool (or close it when it is not reusable). */
void lil__pg_conn_put(struct pg_store *ps, struct pg_conn *c);
/* Close every idle connection (after one of them was found dead). */
void lil__pg_pool_drain(struct pg_store *ps);
/* Whether c is still connected (libpq's view). */
bool lil__pg_conn_ok(const struct pg_store *ps, const struct pg_conn *c);

/* Run sql with params p (NULL: none) on c.  Results in binary when binary.
 * LIL_OK with *out (PQclear it; NULL out: cleared here) when the statement
 * succeeded, else the error (lil__pg_fail) with *out NULL.  what names the
 * work in the message ("reading run r1"). */
lil_status lil__pg_exec(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                        const char *what, const char *sql, const struct pg_params *p,
                        bool binary, PGresult **out);
/* lil__pg_exec of the statement tmpl, its '@'s replaced (lil__pg_sql). */
lil_status lil__pg_query(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                         const char *what, const char *tmpl, const struct pg_params *p,
                         bool binary, PGresult **out);
/* Run the command tmpl (as lil__pg_query); *changed gets the rows it
 * changed (lil__pg_changed), set only on success. */
lil_status lil__pg_command(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                           const char *what, const char *tmpl,
                           const struct pg_params *p, int64_t *changed);
/* The same with a statement prepared on c under name (prepared on first use,
 * bit in c->prepared). */
lil_status lil__pg_exec_prepared(struct pg_store *ps, struct pg_conn *c,
                                 struct lil_err *err, const char *what, int bit,
                                 const char *name, const char *sql,
                                 const struct pg_params *p, bool binary,
                                 PGresult **out);
/* Run fn on a connection of the pool; when it fails because the connection
 * was lost (a restarted server closes every idle connection), once more on a
 * new one (the pool drained first).  fn must be safe to run twice. */
typedef lil_status (*pg_work_fn)(struct pg_store *ps, struct pg_conn *c,
                                 struct lil_err *err, void *ud);
lil_status lil__pg_with_conn(struct pg_store *ps, struct lil_err *err, pg_work_fn fn,
                             void *ud);

/* Rows a command changed (PQcmdTuples), 0 if none is given. */
int64_t lil__pg_changed(const struct lil_pq *pq, PGresult *res);

/* The error of a failed statement (res may be NULL) as a lil_err: LIL_E_PG
 * naming the server's message and SQLSTATE and what to do (a missing schema:
 * run `lil db init`; a permission: grant it).  *lost is set when the
 * connection is gone (the outcome of a commit in flight is unknown). */
lil_status lil__pg_fail(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                        const PGresult *res, const char *what, bool *lost);

/* "begin", "commit", "rollback" (a failed rollback leaves c unusable: the
 * caller disconnects it). */
lil_status lil__pg_simple(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                          const char *sql, const char *what);

/* SQL text: tmpl with each '@' replaced by the quoted schema name, in buf
 * (cap bytes, which every statement of the store fits). */
const char *lil__pg_sql(const struct pg_store *ps, const char *tmpl, char *buf,
                        size_t cap);

/* The store's handle without a connection (the location parsed, libpq
 * loaded, the settings read), and its end (closing every connection). */
lil_status lil__pg_store_new(struct lil_env *env, struct lil_err *err,
                             const char *where, struct pg_store **out);
void lil__pg_store_free(struct pg_store *ps);

/* ---- the schema (store_pg_schema.c) ---------------------------------------- */

/* Check that the schema exists at this lil's version (on c).  LIL_E_PG "no
 * lil schema ... run `lil db init`", LIL_E_VERSION for a newer one, LIL_E_PG
 * "... run `lil db migrate`" for an older one. */
lil_status lil__pg_schema_check(struct pg_store *ps, struct pg_conn *c,
                                struct lil_err *err);

/* ---- runs (store_pg_run.c, store_pg_append.c) ------------------------------- */

struct pg_run {
    struct lil_srun base;
    struct pg_store *ps;
    const struct lil_env *env;
    char *run_id;
    char *where; /* "<location>: run <id>" for messages */
    bool readonly;
    lil_sync sync;
    size_t max_record;
    int pid; /* the process that opened it */
    struct lil_mac *mac;
    struct lil_buf image; /* header and the frames the open read */
    uint64_t scanned_end; /* offset past the last of them */
    uint64_t scanned_records;
    int64_t created_ns;
    bool keyed;
    struct pg_conn *conn; /* writable: the connection the lease names */
    int64_t epoch;        /* of our lease */
    struct pg_held *held; /* our entry in the store's held list */

    pthread_mutex_t mu; /* guards what follows */
    /* group commit (os/group.h): group.committed, group.durable: offsets
     * past the last committed, durably committed record; held (busy) while
     * a thread uses conn (a leader, a walk, a close) */
    struct lil_group group;
    uint8_t chain[LIL_SHA256_LEN];
    uint64_t seq; /* of the last record appended */
    uint64_t end; /* offset past the last record appended */
    uint64_t records;
    int64_t last_ns;
    struct lil_buf pending; /* frames appended, not yet sent */
    struct lil_buf sending; /* frames the leader is sending */
    uint64_t send_off;      /* where the first of them goes */
    bool poisoned;
    struct lil_err poison;
};

lil_status lil__pg_run_open(struct lil_store *st, struct lil_err *err,
                            const char *run_id, const struct lil_srun_opts *o,
                            lil_rec_scan_fn scan, void *ud, struct lil_srun **out);
lil_status lil__pg_run_close(struct lil_srun *r, struct lil_err *err, bool ended);
lil_status lil__pg_run_walk(struct lil_srun *r, struct lil_err *err, lil_rec_walk_fn fn,
                            void *ud);
bool lil__pg_run_next_scanned(const struct lil_srun *r, uint64_t *cursor,
                              struct lil_rec *rec);
void lil__pg_run_info(const struct lil_srun *r, struct lil_srun_info *info);
int lil__pg_run_holder(const struct lil_srun *r, int last_opener);

/* The run's journal image (header and frames, in order) into out, read on c
 * (in the caller's transaction, if any).  LIL_E_NOTFOUND when no such run. */
lil_status lil__pg_read_image(struct pg_store *ps, struct pg_conn *c,
                              struct lil_err *err, const char *run_id,
                              uint64_t after_seq, struct lil_buf *out);

/* Insert the frames (back to back, seqs from their bytes, offsets from
 * first_off on) of run_id on c, PG_BATCH_MAX per statement (imports). */
lil_status lil__pg_insert_frames(struct pg_store *ps, struct pg_conn *c,
                                 struct lil_err *err, const char *run_id,
                                 const uint8_t *frames, size_t len, uint64_t first_off);

/* `lil check --repair`: holding the run for the time (LIL_E_LOCKED when
 * another holds it), check it into report and delete its records from the
 * first damage on. */
lil_status lil__pg_run_repair(struct pg_store *ps, struct lil_err *err,
                              const char *run_id, const uint8_t *key, size_t key_len,
                              lil_check_report *report);

/* Appends and syncs (store_pg_append.c). */
lil_status lil__pg_run_append(struct lil_srun *r, struct lil_err *err,
                              const struct lil_rec *rec, enum lil_append_sync how);
lil_status lil__pg_run_announce(struct lil_srun *r, struct lil_err *err,
                                const struct lil_rec *rec);
lil_status lil__pg_run_sync(struct lil_srun *r, struct lil_err *err);
/* At close: wait for the appends in flight, then in one transaction append
 * CLOSE (sync modes full and normal, a run not poisoned) and release the
 * lease, synchronously.  A poisoned run only releases its lease, if its
 * connection is still there, and returns the poisoned error. */
lil_status lil__pg_run_release(struct pg_run *pr, struct lil_err *err);
/* Wait until no thread uses the run's connection, and take it (mu held on
 * entry and return). */
void lil__pg_run_take_conn(struct pg_run *pr);
void lil__pg_run_give_conn(struct pg_run *pr);
/* Set up the run's group commit (store_pg_append.c). */
void lil__pg_group_init(struct pg_run *pr);
/* The error of a poisoned run. */
lil_status lil__pg_poisoned_err(struct pg_run *pr, struct lil_err *err);
/* Poison the run with err (the first failure is the one kept). */
void lil__pg_poison(struct pg_run *pr, const struct lil_err *err);

/* Leases (store_pg_lease.c): note a run as held (starting the renewing
 * thread when none runs in this process), its lease surely ours until
 * valid_until_ns (monotonic), forget it. */
lil_status lil__pg_hold(struct pg_store *ps, struct lil_err *err, const char *run_id,
                        int64_t epoch, int64_t valid_until_ns, struct pg_held **out);
void lil__pg_unhold(struct pg_store *ps, struct pg_held *h);
/* Stop the renewing thread (store close; it also stops once this process
 * holds no run of the store). */
void lil__pg_renewer_stop(struct pg_store *ps);
/* run_lease_check: poisons the run once its lease may have run out. */
lil_status lil__pg_run_lease_check(struct lil_srun *r, struct lil_err *err);

/* lease_owner of this process: "pid P on HOST since T". */
void lil__pg_owner(const struct pg_store *ps, char *buf, size_t cap);

/* The queue (store_pg_queue.c; store.h has the operations). */
lil_status lil__pg_queue_submit(struct lil_store *st, struct lil_err *err,
                                const struct lil_squeue_job *job);
lil_status lil__pg_queue_claim(struct lil_store *st, struct lil_err *err,
                               const char *worker, struct lil_sclaim **out);
lil_status lil__pg_queue_finish(struct lil_store *st, struct lil_err *err,
                                struct lil_sclaim *c, const struct lil_squeue_end *end);
void lil__pg_queue_release(struct lil_store *st, struct lil_sclaim *c);
lil_status lil__pg_queue_set(struct lil_store *st, struct lil_err *err,
                             const char *run_id, unsigned from,
                             const struct lil_squeue_end *to, bool *changed);
lil_status lil__pg_queue_state(struct lil_store *st, struct lil_err *err,
                               const char *run_id, enum lil_sq_state *state);
/* For a writable open of run_id: this process's claim of it that no open
 * took yet, now marked taken (the caller takes its conn and held); NULL:
 * none.  Call with claims_mu free. */
struct pg_claim *lil__pg_claim_adopt(struct pg_store *ps, const char *run_id);
/* An open that took claim c failed: c gets its connection back. */
void lil__pg_claim_return(struct pg_store *ps, struct pg_claim *c,
                          struct pg_conn *conn);
/* Whether this process holds a claim of run_id that no open took yet. */
bool lil__pg_claim_pending(struct pg_store *ps, const char *run_id);
/* Free every claim left (store close). */
void lil__pg_claims_free(struct pg_store *ps);

/* The registry of workers and what operators list (store_pg_workers.c;
 * store.h has the operations). */
lil_status lil__pg_worker_join(struct lil_store *st, struct lil_err *err,
                               const char *name);
void lil__pg_worker_leave(struct lil_store *st);
lil_status lil__pg_worker_list(struct lil_store *st, struct lil_err *err,
                               lil_sworker_fn fn, void *ud);
lil_status lil__pg_queue_list(struct lil_store *st, struct lil_err *err,
                              lil_squeue_row_fn fn, void *ud);
/* The renewer's heartbeat of this process's row, on c (its connection). */
lil_status lil__pg_worker_beat(struct pg_store *ps, struct pg_conn *c);
/* Under held_mu: whether this process has a worker registered. */
bool lil__pg_has_workers(const struct pg_store *ps);
/* Under held_mu: start the renewer of this process unless it runs
 * (store_pg_lease.c). */
lil_status lil__pg_renewer_ensure(struct pg_store *ps, struct lil_err *err);
/* Stop this process's renewer when it has nothing left to renew (held_mu
 * free on entry). */
void lil__pg_renewer_idle(struct pg_store *ps);

/* Schedules (store_pg_sched.c; store.h has the operations). */
lil_status lil__pg_sched_put(struct lil_store *st, struct lil_err *err, const char *id,
                             const void *doc, size_t len, bool replace);
lil_status lil__pg_sched_get(struct lil_store *st, struct lil_err *err, const char *id,
                             lil_bytes *doc, int64_t *mark_ms);
lil_status lil__pg_sched_del(struct lil_store *st, struct lil_err *err, const char *id);
lil_status lil__pg_sched_list(struct lil_store *st, struct lil_err *err,
                              lil_run_id_fn fn, void *ud);
lil_status lil__pg_sched_mark(struct lil_store *st, struct lil_err *err, const char *id,
                              int64_t slot_ms);

/* Markers (store_pg_marker.c). */
lil_status lil__pg_marker_enter(struct lil_store *st, struct lil_err *err,
                                const char *name, struct lil_smarker **out);
lil_status lil__pg_marker_state(struct lil_smarker *m, struct lil_err *err,
                                enum lil_smarker_state *state, lil_bytes *result);
lil_status lil__pg_marker_begin(struct lil_smarker *m, struct lil_err *err,
                                const void *owner, size_t owner_len);
lil_status lil__pg_marker_finish(struct lil_smarker *m, struct lil_err *err,
                                 const void *result, size_t len);
lil_status lil__pg_marker_abandon(struct lil_smarker *m, struct lil_err *err);
lil_status lil__pg_marker_clear(struct lil_smarker *m, struct lil_err *err);
void lil__pg_marker_leave(struct lil_smarker *m);

#endif
