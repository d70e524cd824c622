/*
 * store.h -- the store interface: where runs and markers live.
 *
 * The engine (src/engine/) keeps runs, steps, effects and markers; a store
 * keeps their records.  The engine sees a store only through the table of
 * operations below, so that another backend can sit beside the file store
 * (store_file.c: one journal file per run, src/journal/) without a change
 * to the engine.  Nothing here names a file, an offset or a descriptor.
 *
 * What every backend must give
 *
 *   Runs.  A run is an ordered list of records (struct lil_rec) with
 *   sequence numbers 1, 2, 3, ...  The first record is BEGIN, keyed by the
 *   run id.  A record is immutable once appended; records are never
 *   reordered.  Opening a run hands every record to the caller's scan
 *   function, in order, before run_open returns; the run is then held by
 *   this handle alone (another holder: LIL_E_LOCKED naming it) until
 *   run_close.  A readonly open takes no hold and writes nothing.
 *
 *   Durability.  A durable record survives a crash of the machine, and so
 *   does every record before it.  run_append returns with its record
 *   durable as its enum lil_append_sync says (below): BY_MODE in sync mode
 *   full only, SYNC in full and normal, LAZY never, and none in off; yet
 *   every appended record survives a crash of the process, whatever the
 *   mode.  run_sync makes every record appended so far durable, whatever
 *   the mode.  Concurrent appends of one process may share one sync (group
 *   commit).  After a failed write or sync the run is poisoned: every later
 *   call fails with LIL_E_POISONED until the run is opened again.
 *
 *   Integrity.  Records are chained (SHA-256, or HMAC-SHA-256 with the
 *   journal key); check_run verifies the whole run and says where damage
 *   starts.  A torn last record (and the OPEN or CLOSE records that follow
 *   it) is dropped at open; any other damage refuses the open
 *   (LIL_E_CORRUPT) until an operator repairs the run.  A run whose
 *   creation was cut short (no complete record) does not exist for readers
 *   (LIL_E_NOTFOUND); a writer starts it afresh with its BEGIN.
 *
 *   Records are struct lil_rec (base/record.h).  Its off orders the records
 *   of a run and is stable for the run's life: the file store gives the
 *   record's byte offset in the journal (lil_record.offset), another store
 *   its own position.  len is the record's stored size in bytes, as the
 *   backend counts it.
 *
 *   Stop requests.  One per run at a time, published atomically and
 *   durably by any process (no hold needed), never overwritten by a second
 *   one; read and cleared by the holder.
 *
 *   Markers.  marker_enter serializes callers of one marker name across
 *   processes (it waits for the one inside); the marker then has one of
 *   three states, read with marker_state: none, pending (a caller was
 *   inside and may have died there) or done (with a result).  Every
 *   transition is durable when the call returns.
 *
 *   Moving runs.  Every backend gives a run as the bytes of its journal
 *   file (journal/format.h: header and records, whatever keeps them) and
 *   makes a new run from such bytes (run_image, run_import), so that `lil
 *   export` and `lil import` move runs between stores (move.c).
 *
 *   What a backend may give besides (NULL operations otherwise): a hold
 *   that can run out, checked before an effect starts (run_lease_check),
 *   and a queue of runs for workers (queue_*: the PostgreSQL store's
 *   store_pg_queue.c).  The queue knows nothing of loops: a queued run
 *   carries an opaque payload and a state (enum lil_sq_state); what the
 *   payload holds (a loop's spec, its digest, its inputs) is the queue
 *   layer's (queue/queue.c encodes it, queue/worker.c reads it).  A claimed
 *   run's hold is the claim's until the claiming process opens the run,
 *   which goes on with it; recording a claimed run's state is checked
 *   against the claim, so a claimant that lost the run records nothing.
 *
 * Thread rules: a store handle may be shared by threads; a run handle too
 * (appends and syncs of one run from many threads are the backend's to
 * serialize).  Scan and walk callbacks run on the calling thread.
 *
 * Lifetimes: key and payload pointers given to a scan callback, and those
 * run_next_scanned fills in, stay valid until run_close; those given to a
 * walk callback only during the call.
 *
 * Backends, side by side: store/file/ (a directory of journal files),
 * store/pg/ (PostgreSQL), store/mem/ (runs in this process's memory,
 * "mem:NAME", for the life of the process; no queue).  Their appends share
 * one group commit (os/group.h: the journal's fdatasync and PostgreSQL's
 * commit are the flush behind the same leader/follower barrier; it sits in
 * os/ because the journal, below the store, uses it too).
 *
 * Adding a backend: fill a struct lil_store_ops (version
 * LIL_STORE_OPS_VERSION), embed struct lil_srun first in the backend's run
 * handle, and add a line to store.c's table of backends: a predicate of
 * the location, open and schema (lil__store_open and lil__store_schema
 * consult the table, the file store last, taking any location).
 */
#ifndef LIL_STORE_STORE_H
#define LIL_STORE_STORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/env.h"
#include "base/record.h"

#define LIL_STORE_OPS_VERSION                      \
    9 /* 2: run_append takes enum lil_append_sync; \
         3: run_image, run_import;                 \
         4: run_lease_check, the queue (queue_*);  \
         5: the queue's payload and states;        \
         6: run_remove;                            \
         7: queue_list, worker_join, worker_leave, \
            worker_list;                           \
         8: run_last_seq;                          \
         9: runs_stamp */

/* Record flags as the engine sees them (the public LIL_RECF_* bits). */
#define LIL_SREC_EFFECT  LIL_RECF_EFFECT
#define LIL_SREC_REQUEST LIL_RECF_REQUEST
/* A later segment's copy of an earlier record (run_rotate). */
#define LIL_SREC_COPY 0x04u

/* Longest record key any backend must hold (a step identity, a run id). */
#define LIL_SREC_KEY_MAX 65535u

/* Called for each record while a run opens; non-OK aborts the open with
 * that status (the callback fills err). */
typedef lil_status (*lil_rec_scan_fn)(void *ud, const struct lil_rec *rec,
                                      struct lil_err *err);
/* Called for each record of a walk; non-zero stops it. */
typedef int (*lil_rec_walk_fn)(void *ud, const struct lil_rec *rec);

/* What an open asks of a run. */
struct lil_srun_opts {
    lil_sync sync;      /* FULL, NORMAL or OFF (DEFAULT resolved above) */
    bool readonly;      /* no hold, no create, no write */
    bool create;        /* create the run when missing (else LIL_E_NOTFOUND) */
    bool verify_chain;  /* verify the chain at open (keyed runs: always) */
    bool live_only;     /* readonly: walk the live segment only (run_walk) */
    size_t max_record;  /* largest payload accepted, on read and write */
    const uint8_t *key; /* journal key or NULL */
    size_t key_len;
};

/* Facts about an open run. */
struct lil_srun_info {
    uint64_t records;   /* records in the run */
    uint64_t bytes;     /* stored size of its valid records */
    int64_t created_ns; /* time of its first record */
    int64_t last_ns;    /* time of its last record */
    lil_sync sync;
    bool keyed;            /* the chain is an HMAC */
    uint64_t torn_pos;     /* where a torn tail the open dropped began, or 0 */
    uint64_t torn_records; /* intact records (OPEN, CLOSE) dropped with it */
};

/* What is kept of a run in segments (run_segments). */
struct lil_sseg_info {
    uint32_t live;      /* the live segment's number (0: never compacted) */
    uint32_t first;     /* the oldest kept; > 0: the ones before were dropped */
    uint64_t first_seq; /* seq of the first record kept (1: nothing dropped) */
};

/* What every backend's run handle starts with. */
struct lil_srun {
    const struct lil_store_ops *ops;
    const char *where; /* names the run in messages (the journal's path) */
};

struct lil_store;
struct lil_smarker; /* one caller inside one marker */

/* When run_append makes its record durable.  In every case the record is
 * in the store when run_append returns, so a crash of the process keeps
 * it; these decide whether a crash of the machine does too. */
enum lil_append_sync {
    LIL_APPEND_BY_MODE, /* durable on return in sync mode full (a step's
                           outcome) */
    LIL_APPEND_SYNC,    /* durable on return in full and normal (an intent,
                           the run's outcome); never in off */
    LIL_APPEND_LAZY,    /* durable in no mode on return: the run's next sync
                           (a commit that syncs, run_sync, close) covers it */
};

enum lil_smarker_state { LIL_SMARKER_NONE, LIL_SMARKER_PENDING, LIL_SMARKER_DONE };

/* The queue (store_pg_queue.c; a store without one leaves the queue_*
 * operations NULL).  A queued run is a run the store can hand to one
 * claimant at a time, with a payload (bytes the store keeps and returns,
 * never reads: the queue layer's, src/queue/) and a state.  The store gives
 * meaning to three states: QUEUED is claimable, PARKED claimable once its
 * wake time has come, RUNNING claimable again once its claimant's hold is
 * gone; the others are labels the claimant records, not claimable. */
enum lil_sq_state {
    LIL_SQ_QUEUED,
    LIL_SQ_RUNNING,
    LIL_SQ_PARKED,
    LIL_SQ_PAUSED,
    LIL_SQ_UNCERTAIN,
    LIL_SQ_STOPPED,
    LIL_SQ_COMPLETED,
    LIL_SQ_FAILED,
    LIL_SQ_ERROR,
    LIL_SQ_STATES /* how many */
};

/* A set of states (queue_set's from): bits LIL_SQ_BIT(state); LIL_SQ_ANY
 * (no bit) stands for every state. */
#define LIL_SQ_BIT(s) (1u << (unsigned)(s))
#define LIL_SQ_ANY    0u

/* The state's name as stores keep it and people read it ("queued", ...). */
const char *lil__sq_state_name(enum lil_sq_state s);
/* The state named name; false when there is none. */
bool lil__sq_state_parse(const char *name, size_t len, enum lil_sq_state *out);

/* A run to queue. */
struct lil_squeue_job {
    const char *run_id;
    const void *payload; /* payload_len bytes, kept as they are */
    size_t payload_len;
    lil_sync sync;      /* FULL, NORMAL or OFF */
    const uint8_t *key; /* journal key or NULL */
    size_t key_len;
};

/* A claimed run: its lease taken by this process (epoch), its payload
 * (owned by the claim, until queue_release). */
struct lil_sclaim {
    char run_id[LIL_RUN_ID_MAX + 1];
    int64_t epoch;
    int attempts;          /* claims so far, this one included */
    enum lil_sq_state was; /* QUEUED, PARKED, or RUNNING: a takeover */
    uint8_t *payload;
    size_t payload_len;
    lil_sync sync;
};

/* A queued run as operators see it (queue_list): pointers valid during the
 * callback only. */
struct lil_squeue_row {
    const char *run_id;
    enum lil_sq_state state;
    int64_t wake_at_ms; /* not to be claimed before (epoch ms); 0: none */
    int attempts;       /* claims so far */
    const char *worker; /* the worker that claimed it last, or "" */
    const char *owner;  /* its lease's holder ("pid P on HOST since T"), or "" */
    bool held;          /* that lease is live and its holder connected */
    const char *error;  /* the last error a worker met, or "" */
};

typedef int (*lil_squeue_row_fn)(void *ud, const struct lil_squeue_row *row);

/* A worker process of the store's registry (worker_list): pointers valid
 * during the callback only.  Times are the server's, epoch ms. */
struct lil_sworker {
    const char *owner; /* "pid P on HOST since T": its runs' lease owner */
    const char *name;  /* its name in the queue (claimed_by) */
    const char *host;
    int pid;
    int threads;      /* its workers (lil_worker handles) */
    int64_t lease_ms; /* its lease: a heartbeat older than this is lost */
    int64_t started_ms, heartbeat_ms, now_ms;
    const char *const *runs; /* the runs it claimed and holds, by id */
    size_t n_runs;
};

typedef int (*lil_sworker_fn)(void *ud, const struct lil_sworker *w);

/* Where a queued run stands now. */
struct lil_squeue_end {
    enum lil_sq_state state;
    int64_t wake_at_ms; /* QUEUED or PARKED: not to be claimed before (epoch
                           ms); 0: at once */
    const char *error;  /* the claimant's error (last_error), or NULL */
};

struct lil_store_ops {
    int version; /* LIL_STORE_OPS_VERSION */
    const char *name;

    void (*close)(struct lil_store *st);
    /* Run ids of the store, sorted, to fn (non-zero stops). */
    lil_status (*foreach_run)(struct lil_store *st, struct lil_err *err,
                              lil_run_id_fn fn, void *ud);
    /* Verify (and with repair, cut at the first damage) one run. */
    lil_status (*check_run)(struct lil_store *st, struct lil_err *err,
                            const char *run_id, const uint8_t *key, size_t key_len,
                            bool repair, lil_check_report *report);

    /* Open (and create) a run, scanning every record to scan. */
    lil_status (*run_open)(struct lil_store *st, struct lil_err *err,
                           const char *run_id, const struct lil_srun_opts *opts,
                           lil_rec_scan_fn scan, void *ud, struct lil_srun **out);
    /* Sync what is pending, release the hold, free.  ended: nothing will be
     * appended again (the backend may give back space it kept). */
    lil_status (*run_close)(struct lil_srun *r, struct lil_err *err, bool ended);
    /* Append one record, durable on return as how says (see enum
     * lil_append_sync). */
    lil_status (*run_append)(struct lil_srun *r, struct lil_err *err,
                             const struct lil_rec *rec, enum lil_append_sync how);
    /* Append a record that other processes must see at once (they read the
     * holder's pid from it), without syncing it. */
    lil_status (*run_announce)(struct lil_srun *r, struct lil_err *err,
                               const struct lil_rec *rec);
    /* Make everything appended so far durable, whatever the mode. */
    lil_status (*run_sync)(struct lil_srun *r, struct lil_err *err);
    /* Walk every record, those this handle appended too. */
    lil_status (*run_walk)(struct lil_srun *r, struct lil_err *err, lil_rec_walk_fn fn,
                           void *ud);
    /* The records the open scanned, one per call: *cursor starts at 0.
     * False at the end.  No locking: scanned records never change. */
    bool (*run_next_scanned)(const struct lil_srun *r, uint64_t *cursor,
                             struct lil_rec *rec);
    void (*run_info)(const struct lil_srun *r, struct lil_srun_info *info);
    /* For a readonly handle, who holds the run: 0 nobody, pid (the last
     * opener, as the caller read it from the OPEN records) when that
     * process still holds it, -1 another process the store cannot name. */
    int (*run_holder)(const struct lil_srun *r, int last_opener);

    /* Stop requests: any process publishes one beside a run without
     * holding it (a loop is asked to stop while another process runs it);
     * the holder reads and clears it at a safe point.  A second request
     * leaves the first in place and sets *already. */
    lil_status (*stop_request)(struct lil_store *st, struct lil_err *err,
                               const char *run_id, const void *req, size_t len,
                               bool *already);
    /* The pending request into *out (lil_free); LIL_E_NOTFOUND if none. */
    lil_status (*stop_read)(struct lil_store *st, struct lil_err *err,
                            const char *run_id, lil_bytes *out);
    /* Remove the pending request; LIL_E_NOTFOUND if none. */
    lil_status (*stop_clear)(struct lil_store *st, struct lil_err *err,
                             const char *run_id);

    /* Enter the marker name (waiting for a caller inside). */
    lil_status (*marker_enter)(struct lil_store *st, struct lil_err *err,
                               const char *name, struct lil_smarker **out);
    /* Its state; for DONE, *result gets a copy (lil_free) when result is
     * not NULL. */
    lil_status (*marker_state)(struct lil_smarker *m, struct lil_err *err,
                               enum lil_smarker_state *state, lil_bytes *result);
    /* NONE or DONE -> PENDING, noting who is inside (owner). */
    lil_status (*marker_begin)(struct lil_smarker *m, struct lil_err *err,
                               const void *owner, size_t owner_len);
    /* PENDING (or NONE) -> DONE with result. */
    lil_status (*marker_finish)(struct lil_smarker *m, struct lil_err *err,
                                const void *result, size_t len);
    /* PENDING -> NONE: the function failed. */
    lil_status (*marker_abandon)(struct lil_smarker *m, struct lil_err *err);
    /* Anything -> NONE; LIL_E_NOTFOUND when it was NONE. */
    lil_status (*marker_clear)(struct lil_smarker *m, struct lil_err *err);
    /* Leave the marker (the next caller enters); frees m. */
    void (*marker_leave)(struct lil_smarker *m);

    /* When run_id last changed, ns since the epoch, without opening it (the
     * file store: the journal's modification time, which the kernel keeps
     * with a coarse clock: a few ms early at worst).  May be NULL: the
     * caller then opens the run.  LIL_E_NOTFOUND when there is no such run.
     * (The supervisor's first look at which run a child wrote.) */
    lil_status (*run_changed)(struct lil_store *st, struct lil_err *err,
                              const char *run_id, int64_t *ns);
    /* Moving runs (move.c checks what goes in and out).  The run as a
     * journal file's bytes, into out (lil__free its data), as stored: the
     * caller finds the valid end.  Without the run's hold.  LIL_E_NOTFOUND
     * when there is no such run. */
    lil_status (*run_image)(struct lil_store *st, struct lil_err *err,
                            const char *run_id, struct lil_buf *out);
    /* A new run from a verified journal image (header and records, nothing
     * after them), durable on return; LIL_E_INVAL when run_id exists. */
    lil_status (*run_import)(struct lil_store *st, struct lil_err *err,
                             const char *run_id, const uint8_t *image, size_t len);

    /* May an effect start now?  A backend whose hold can run out (a
     * lease) says no once this handle cannot be sure it still holds the
     * run (its process was paused past the lease, its renewals failed):
     * the run is poisoned, and the effect never starts.  NULL: always. */
    lil_status (*run_lease_check)(struct lil_srun *r, struct lil_err *err);

    /* The queue (see enum lil_sq_state above); NULL: no queue.
     * queue_submit: create run job->run_id (its BEGIN) QUEUED with its
     * payload, in one durable commit; LIL_E_INVAL when the run exists. */
    lil_status (*queue_submit)(struct lil_store *st, struct lil_err *err,
                               const struct lil_squeue_job *job);
    /* Claim the next claimable run for worker, its lease taken with a new
     * epoch, its state RUNNING; the next writable open of that run in this
     * process goes on with that lease.  LIL_E_NOTFOUND: none. */
    lil_status (*queue_claim)(struct lil_store *st, struct lil_err *err,
                              const char *worker, struct lil_sclaim **out);
    /* Record where the claimed run stands, if the claim's epoch is still
     * the run's (else LIL_E_LOCKED, "fenced", and nothing is written). */
    lil_status (*queue_finish)(struct lil_store *st, struct lil_err *err,
                               struct lil_sclaim *c, const struct lil_squeue_end *end);
    /* Free c; its lease is released unless a run open took it over. */
    void (*queue_release)(struct lil_store *st, struct lil_sclaim *c);
    /* Set a queued run's state (an operator's approve, recover, resume,
     * stop), when it is in one of the states of from (LIL_SQ_BIT set;
     * LIL_SQ_ANY: any).  *changed: whether it was. */
    lil_status (*queue_set)(struct lil_store *st, struct lil_err *err,
                            const char *run_id, unsigned from,
                            const struct lil_squeue_end *to, bool *changed);
    /* The queue state of run_id; LIL_E_NOTFOUND when the run is not queued
     * (or does not exist). */
    lil_status (*queue_state)(struct lil_store *st, struct lil_err *err,
                              const char *run_id, enum lil_sq_state *state);

    /* The queued runs (state set), in run id order, to fn until it
     * returns non-zero. */
    lil_status (*queue_list)(struct lil_store *st, struct lil_err *err,
                             lil_squeue_row_fn fn, void *ud);
    /* The registry of workers: worker_join counts one more worker of this
     * process under name (NULL: the lease owner) -- the first one registers
     * the process, whose heartbeat the store keeps from then on;
     * worker_leave counts one less, and the last one removes the row.
     * worker_list: every registered process, by name, to fn until it
     * returns non-zero.  NULL: no queue. */
    lil_status (*worker_join)(struct lil_store *st, struct lil_err *err,
                              const char *name);
    void (*worker_leave)(struct lil_store *st);
    lil_status (*worker_list)(struct lil_store *st, struct lil_err *err,
                              lil_sworker_fn fn, void *ud);

    /* Schedules (src/queue/schedule.h): documents by id (run-id rule),
     * each with the last slot it fired (its mark, epoch ms); NULL: the
     * store keeps none.  sched_put: doc's bytes, kept as they are; an
     * existing schedule is LIL_E_INVAL unless replace (its mark is kept).
     * sched_get: the doc (lil_free) and the mark (0: none), or
     * LIL_E_NOTFOUND.  sched_del: the doc and the mark, or LIL_E_NOTFOUND.
     * sched_list: fn for each id in id order until it returns non-zero.
     * sched_mark: the mark becomes slot_ms when that is later (never
     * earlier), atomically against other processes. */
    lil_status (*sched_put)(struct lil_store *st, struct lil_err *err, const char *id,
                            const void *doc, size_t len, bool replace);
    lil_status (*sched_get)(struct lil_store *st, struct lil_err *err, const char *id,
                            lil_bytes *doc, int64_t *mark_ms);
    lil_status (*sched_del)(struct lil_store *st, struct lil_err *err, const char *id);
    lil_status (*sched_list)(struct lil_store *st, struct lil_err *err,
                             lil_run_id_fn fn, void *ud);
    lil_status (*sched_mark)(struct lil_store *st, struct lil_err *err, const char *id,
                             int64_t slot_ms);
    /* Segments (compaction, docs/format.md "Segments"); NULL: the store
     * keeps each run in one piece.  run_rotate: everything appended so far
     * made durable, the run goes on in a new segment whose first records
     * (after its link) are recs, in order (copies of earlier records carry
     * LIL_SREC_COPY); a crash leaves the old segment or the whole new one.
     * From then on a writable handle's walk and a new open's scan see the
     * new segment only; a readonly handle's walk gives every segment kept,
     * in order, without the copies and links of the later ones.
     * run_drop_segments: remove the segments of run_id older than the
     * newest keep (the live one counts; keep >= 1), into *dropped.
     * run_segments: the live segment's number and the oldest kept (NULL:
     * the run is in one piece). */
    lil_status (*run_rotate)(struct lil_srun *r, struct lil_err *err,
                             const struct lil_rec *recs, size_t n);
    lil_status (*run_drop_segments)(struct lil_store *st, struct lil_err *err,
                                    const char *run_id, unsigned keep,
                                    unsigned *dropped);
    lil_status (*run_segments)(struct lil_store *st, struct lil_err *err,
                               const char *run_id, struct lil_sseg_info *out);
    /* Remove run_id and everything the store keeps for it (its records, its
     * rollback record, its stop request, its place in the queue), durable
     * on return, unless a live process holds it (LIL_E_LOCKED, nothing
     * removed).  LIL_E_NOTFOUND when there is no such run.  A crash in the
     * middle leaves the run whole or gone, or its journal without the
     * side files (which a run does without). */
    lil_status (*run_remove)(struct lil_store *st, struct lil_err *err,
                             const char *run_id);
    /* The seq of run_id's last record (0: none yet) without opening the run
     * (PostgreSQL: one indexed query).  May be NULL: the caller then opens
     * the run.  LIL_E_NOTFOUND when there is no such run.  (lil_run_poll
     * and lil_run_wait, on a store without run_changed.) */
    lil_status (*run_last_seq)(struct lil_store *st, struct lil_err *err,
                               const char *run_id, uint64_t *seq);
    /* A value that changes when a run is created or removed, without
     * listing the runs: the store directory's modification time (*coarse
     * set: the kernel's coarse clock may leave it unchanged by a later
     * change in the same tick), PostgreSQL's count of runs and newest
     * creation.  May be NULL: the caller then lists the runs.
     * (lil_store_poll.) */
    lil_status (*runs_stamp)(struct lil_store *st, struct lil_err *err, int64_t *stamp,
                             bool *coarse);
};

/* Settings a store reads once, at open (the environment's LIL_SYNC and
 * LIL_JOURNAL_KEY); the caller may replace the key (lil_store_set_key). */
struct lil_store_settings {
    lil_sync sync;     /* default of runs opened with LIL_SYNC_DEFAULT */
    char bad_sync[32]; /* an unreadable LIL_SYNC, reported at run open */
    uint8_t *key;      /* journal key, or NULL */
    size_t key_len;
};

/* The handle every backend's store starts with. */
struct lil_store {
    uint32_t magic;
    const struct lil_store_ops *ops;
    struct lil_env *env;
    bool own_env;
    char *where;        /* the location the store was opened with */
    pthread_mutex_t mu; /* guards err and the key: threads may share a store */
    struct lil_err err;
    struct lil_store_settings set;
    /* The store's own key (the file store's key file, store/file/key_file.c),
     * while the store has no key and has not decided it has none: called
     * under mu to find the key (create false) or also to make one (create
     * true); sets set.key and clears own_key once decided.  NULL: no own
     * key (other backends, a key given, or decided). */
    lil_status (*own_key)(struct lil_store *st, struct lil_err *err, bool create);
    bool key_given;   /* LIL_JOURNAL_KEY or lil_store_set_key (even "none") */
    bool own_key_off; /* LIL_STORE_KEY=off or lil_store_set_own_key(st, 0) */
    bool no_heads;    /* keep no rollback records (benchmarks compare) */
};

/* Open the store at where: a PostgreSQL URI (postgresql://, postgres://:
 * store_pg.c), "mem:NAME" (store/mem/), else a directory (the file store,
 * created when missing; one another user owns or may write in is refused
 * unless flags has LIL_STORE_SHARED or LIL_SHARED_STORE is on: store_file.c).
 * where NULL: $LIL_DIR, or ".lil".  Reads the settings. */
lil_status lil__store_open(struct lil_env *env, struct lil_err *err, const char *where,
                           unsigned flags, struct lil_store **out);
void lil__store_close(struct lil_store *st);

/* Make the store's own key now if it is to have one and has none yet (a
 * run, a marker or an import is about to be written). */
lil_status lil__store_key_ensure(struct lil_store *st, struct lil_err *err);

/* Whether the store makes a key of its own (lil_store_set_own_key). */
void lil__store_own_key_set(struct lil_store *st, bool on);

/* Replace the journal key (NULL: none) for runs opened from now on. */
lil_status lil__store_set_key(struct lil_store *st, struct lil_err *err,
                              const void *key, size_t len);

/* A copy of the journal key for one open or check (the key may be replaced
 * meanwhile); *key NULL when there is none.  Free with lil__store_key_free,
 * which wipes it. */
lil_status lil__store_key_copy(struct lil_store *st, struct lil_err *err, uint8_t **key,
                               size_t *len);
void lil__store_key_free(struct lil_store *st, uint8_t *key, size_t len);
void lil__store_key_free_env(const struct lil_env *env, uint8_t *key, size_t len);

/* Fill the parts of st every backend shares; free them. */
lil_status lil__store_init(struct lil_store *st, struct lil_env *env,
                           struct lil_err *err, const struct lil_store_ops *ops,
                           const char *where);
void lil__store_fini(struct lil_store *st);

/* The run-id rule of lil.h. */
lil_status lil__run_id_check(struct lil_err *err, const char *run_id);

/* where, or $LIL_DIR, or ".lil" (lil_store_open's rule). */
const char *lil__store_where(const char *where);

/* lil_store_schema (lil.h) for the store at where. */
lil_status lil__store_schema(struct lil_env *env, struct lil_err *err,
                             const char *where, int action, lil_schema_info *info);

/* lil_run_export and lil_run_import (move.c). */
lil_status lil__store_export(struct lil_store *st, struct lil_err *err,
                             const char *run_id, lil_write_fn fn, void *ud);

/* The key an imported journal was written with (NULL key: the
 * destination's). */
struct lil_import_key {
    const uint8_t *key;
    size_t key_len;
};

lil_status lil__store_import(struct lil_store *st, struct lil_err *err,
                             const uint8_t *data, size_t len, const char *run_id,
                             const struct lil_import_key *src, char **imported_id);

/* The run as a journal image into image (lil__buf_init'd by the caller),
 * verified under the store's key: *valid is the end of its last valid
 * record (a torn tail past it).  LIL_E_NOTFOUND, LIL_E_CORRUPT, LIL_E_KEY
 * and the backend's errors. */
lil_status lil__store_image(struct lil_store *st, struct lil_err *err,
                            const char *run_id, struct lil_buf *image, uint64_t *valid);

/* A fork (lil_run_fork): a new run new_id made of the first len bytes of
 * a verified image (its header and whole records), sealed under this
 * store's key, with provenance added after BEGIN as record 2 (the records
 * after it one seq higher).  LIL_E_INVAL when new_id exists. */
lil_status lil__store_fork_in(struct lil_store *st, struct lil_err *err,
                              const uint8_t *image, size_t len, const char *new_id,
                              const struct lil_rec *provenance);

/* Backends (store.c's table: a predicate of the location, open, schema). */
lil_status lil__store_file_open(struct lil_env *env, struct lil_err *err,
                                const char *dir, unsigned flags,
                                struct lil_store **out);
lil_status lil__store_file_schema(struct lil_env *env, struct lil_err *err,
                                  const char *dir, int action, lil_schema_info *info);
bool lil__store_mem_location(const char *where);
lil_status lil__store_mem_open(struct lil_env *env, struct lil_err *err,
                               const char *where, unsigned flags,
                               struct lil_store **out);
lil_status lil__store_mem_schema(struct lil_env *env, struct lil_err *err,
                                 const char *where, int action, lil_schema_info *info);
bool lil__store_pg_location(const char *where);
lil_status lil__store_pg_open(struct lil_env *env, struct lil_err *err,
                              const char *where, unsigned flags,
                              struct lil_store **out);
lil_status lil__store_pg_schema(struct lil_env *env, struct lil_err *err,
                                const char *where, int action, lil_schema_info *info);

#endif
