/*
 * queue.h -- loop runs in the store's queue: submitting them (queue.c),
 * the queue state of a loop result, what the runner does for a queued run
 * after an operator's decision, stop requests (stop.c), and the worker
 * that claims and runs them (worker.c).  The queue itself is the store's
 * (store.h, queue_*; the PostgreSQL store's store_pg_queue.c), and knows
 * nothing of loops: what a queued loop run carries is its payload
 * (payload.h); docs/postgres.md, "Workers", is the same for users.
 *
 * Calls that take a struct lil_loop run on its thread, inside the json
 * scope of the loop call (loop/runner_call.c).
 */
#ifndef LIL_LOOP_QUEUE_H
#define LIL_LOOP_QUEUE_H

#include <lil/lil.h>
#include <stdint.h>

#include "base/err.h"
#include "base/hash.h"
#include "store/store.h"

struct lil_store;
struct lil_loop;

/* A worker (worker.c; lil_worker_* in lil.h, checked by src/api/workers.c). */
struct lil_worker {
    uint32_t magic; /* LIL_WORKER_MAGIC (base/handles.h) */
    struct lil_store *st;
    char *name, *env_allow, *cwd, *actor;
    int64_t max_block_ms, effect_timeout_ms;
    void (*on_claim)(void *ud, const lil_worker_result *claim);
    void *on_claim_ud;
    bool joined;  /* counted in the store's registry of workers */
    int draining; /* atomic: lil_worker_drain */
    struct lil_err err;
};

/* A worker over st (a store with a queue; else LIL_E_INVAL in err) with
 * opts copied; free releases it (NULL: nothing). */
lil_status lil__worker_new(lil_store *st, struct lil_err *err,
                           const lil_worker_opts *opts, lil_worker **out);
void lil__worker_free(lil_worker *w);

/* Ask w to hand its run back after the current iteration (async-signal-
 * safe: an atomic flag). */
void lil__worker_drain(lil_worker *w);

/* Claim, run, record and release the next run (lil_worker_next): errors
 * in w->err (published to the thread but for LIL_E_NOTFOUND and draining). */
lil_status lil__worker_next(lil_worker *w, lil_worker_result *res);

/* The queue state of a loop result: completed, failed, uncertain, paused,
 * stopped, or for waiting: parked (a wake time after now_ms) or queued. */
enum lil_sq_state lil__queue_state_of(const lil_loop_result *res, int64_t now_ms);

/* Hex SHA-256 of the spec's normalized JSON (the start record's "spec"). */
lil_status lil__queue_spec_digest(const lil_spec *spec, struct lil_err *err,
                                  char hex[2 * LIL_SHA256_LEN + 1]);

/* What a store without a queue is, for messages: "a store directory" (the
 * file store), else "a store in memory". */
const char *lil__queue_less_kind(const struct lil_store *st);

/* lil_loop_submit (lil.h), inside a json scope. */
lil_status lil__loop_submit(struct lil_store *st, struct lil_err *err,
                            const lil_spec *spec, const lil_loop_opts *o,
                            char **run_id);

/* The runner's hooks for a loop opened with LIL_LOOP_REQUEUE (runner.h):
 * after a decision, with a run in the queue, its status in *res and in the
 * queue (queued when a worker can go on), otherwise lil__loop_run; a
 * decision that ended the run records its status in the queue. */
extern const struct lil_loop_hooks lil__queue_hooks;

/* lil_loop_request_stop (lil.h) on checked arguments, inside a json scope
 * (stop.c): LIL_E_DONE for a run that has ended or is already asked to
 * stop. */
lil_status lil__loop_request_stop(struct lil_store *st, struct lil_err *e,
                                  const char *run_id, const char *actor,
                                  const char *reason);

/* A stop request was published for run_id: when it is queued and waits
 * (parked, paused), queue it now, so that a worker honours the stop. */
void lil__queue_after_stop(struct lil_store *st, const char *run_id);

#endif
