/*
 * history.h -- the read API's folds: what a run is (its facts), what
 * happened in it (its events, typed and decoded), and waiting for it to
 * grow.  The public calls are lil_run_facts, lil_run_events and
 * lil_run_wait (lil.h; docs/api.md has every field); src/api/history.c
 * checks their arguments and calls these.
 *
 * Every reader of a run's journal that is not the runner itself -- the
 * CLI's ls, inspect and log, the supervisor, the bindings, a server --
 * should read it here, so that record names and payloads are decoded in one
 * place: the names by the runner's own decoder (loop/record_name.h), the
 * loop's facts by the runner's own fold (lil__loop_facts).
 *
 * Runs are opened read-only: no hold is taken and nothing is written, so a
 * run held by another process is read all the same, on any store.  Each
 * call opens the run (one scan of its journal) and closes it before it
 * returns.
 *
 * Events (events.c, events_loop.c): one walk over every record, in order.
 * A record gives zero or more events (a loop record may be preceded by a
 * synthesized "iteration_start" or "wake"); every event carries the
 * record's seq as its position, so a page never splits a record's events:
 * "next" is the seq of the first record not returned, and a reader that
 * asks again from "next" misses nothing and sees nothing twice.
 *
 * JSON values are made inside the caller's json scope (json/json.h).
 */
#ifndef LIL_HISTORY_HISTORY_H
#define LIL_HISTORY_HISTORY_H

#include <stdint.h>

#include "base/err.h"
#include "json/json.h"
#include "store/store.h"

/* Most events in one page; a larger max is cut to it. */
#define LIL_HISTORY_PAGE_MAX 10000

/* The facts of run_id as the document of lil_run_facts (a new reference in
 * *out).  now_ms: the clock loop meters count to.  LIL_E_NOTFOUND when
 * there is no such run; the open's errors otherwise. */
lil_status lil__history_facts(struct lil_store *st, struct lil_err *err,
                              const char *run_id, int64_t now_ms, json_t **out);

/* What a page of events holds (lil_events_opts, checked by the caller). */
struct lil_history_query {
    uint64_t from;          /* first record (0 and 1: the first) */
    size_t max;             /* events (0: LIL_HISTORY_PAGE_MAX) */
    unsigned flags;         /* LIL_EVENTS_BRIEF, LIL_EVENTS_STATE */
    const char *types;      /* NULL: every type; else "a,b,c" */
    size_t last_iterations; /* > 0: start at the last N iterations */
};

/* The events of run_id that q asks for, as {"run", "kind", "events",
 * "next", "more", "last_seq"} ("iterations_before" too with
 * last_iterations) (a new reference in *out). */
lil_status lil__history_events(struct lil_store *st, struct lil_err *err,
                               const char *run_id, const struct lil_history_query *q,
                               json_t **out);

/* Wait until run_id holds a record after after_seq, or timeout_ms passes;
 * *last_seq is then the run's last seq (> after_seq: it grew).
 * LIL_E_NOTFOUND when there is no such run. */
lil_status lil__history_wait(struct lil_store *st, struct lil_err *err,
                             const char *run_id, uint64_t after_seq, int64_t timeout_ms,
                             uint64_t *last_seq);

/* One look at run_id without waiting: when it may have changed since
 * *stamp (the store's run_changed; *stamp brought up to date), its last seq
 * is read, and *changed says whether it differs from *last_seq (which then
 * takes it).  *changed false otherwise.  LIL_E_NOTFOUND when there is no
 * such run. */
lil_status lil__history_poll(struct lil_store *st, struct lil_err *err,
                             const char *run_id, uint64_t *last_seq, int64_t *stamp,
                             bool *changed);

struct lil_run;

/* The journaled failure of the latest call of step name in run's
 * execution: its identity and reason, blocks for lil_free (set only on
 * success).  LIL_E_NOTFOUND when name was not called, or that call has not
 * failed. */
lil_status lil__history_step_failure(struct lil_run *run, struct lil_err *err,
                                     const char *name, char **identity,
                                     lil_bytes *reason);

/* ---- shared by the files of history/ ------------------------------------- */

/* Open run_id read-only (no hold, nothing written). */
lil_status lil__history_open(struct lil_store *st, struct lil_err *err,
                             const char *run_id, struct lil_run **out);
/* Close what lil__history_open opened (NULL: nothing). */
void lil__history_close(struct lil_run *run);

#endif
