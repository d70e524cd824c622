/*
 * queue.h -- loop runs in the store's queue: submitting them (queue.c),
 * the queue state of a loop result, what the runner does for a queued run
 * after an operator's decision, and the worker that claims and runs them
 * (worker.c).  The queue itself is the store's (store.h, queue_*; the
 * PostgreSQL store's store_pg_queue.c), and knows nothing of loops: what a
 * queued loop run carries is its payload (payload.h); docs/postgres.md,
 * "Workers", is the same for users.
 *
 * Calls that take a struct lil_loop run on its thread, inside the json
 * scope of the public call (runner_api.c).
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

/* A stop request was published for run_id: when it is queued and waits
 * (parked, paused), queue it now, so that a worker honours the stop. */
void lil__queue_after_stop(struct lil_store *st, const char *run_id);

#endif
