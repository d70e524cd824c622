/*
 * fork.h -- forking and comparing runs (lil_run_fork, lil_run_diff; lil
 * fork, lil diff): where a journal may be cut, the provenance a fork
 * carries, and where two journals stop agreeing.
 *
 * Both read a run as its verified journal image (lil__store_image: header
 * and records, checked under the store's key), so they work on any store
 * and on a run that another process holds (what it has committed so far).
 *
 * Where a journal may be cut (docs/cli.md, "lil fork").  A cut keeps the
 * records before seq S (S >= 2: BEGIN is always kept).
 *   - A loop run (it has a start record "loop"): S is after the start
 *     record, and no record of an iteration that no snapshot commits lies
 *     before S -- a slot "I.S" (an effect, a sleep, an approval), its
 *     intent or its request, an on_exit slot.  So a cut sits between
 *     iterations: `--at N` cuts right after "(N-1).snap" (after the start
 *     record for N = 0), dropping iteration N and everything after it,
 *     intents and control records included.
 *   - An ordinary run: no effect's intent before S is left without its
 *     outcome or resolution.  `--at-step N` cuts right after the outcome
 *     of the (N-1)-th step (STEP or STEP_FAILED records, in journal order;
 *     after BEGIN for N = 1).
 * A refused cut names the nearest valid cuts before and after it.
 *
 * Where two journals stop agreeing: records are compared in order by type,
 * effect flag, key and payload; BEGIN (the run's id), OPEN, CLOSE and FORK
 * records (which process held it, and where it came from) and records of
 * types this version does not know are left out.  The steps compared are
 * each identity's last outcome (STEP or STEP_FAILED).
 *
 * Values are made inside the caller's json scope (json/json.h).
 */
#ifndef LIL_HISTORY_FORK_H
#define LIL_HISTORY_FORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/hash.h"
#include "json/json.h"
#include "store/store.h"

/* Where a fork cuts, asked (kind, at) and found (the rest). */
struct lil_fork_plan {
    int kind;    /* LIL_FORK_AT_ITERATION, LIL_FORK_AT_SEQ, LIL_FORK_AT_STEP */
    uint64_t at; /* the iteration, seq or step asked for */

    bool loop;            /* the run is a loop run */
    uint64_t cut_seq;     /* the first record not kept */
    size_t cut_len;       /* bytes of the image kept: header and records */
    uint64_t iteration;   /* loop: the iteration the fork goes on at */
    uint64_t step;        /* ordinary run: the step it goes on at (1, 2, ...) */
    uint64_t source_last; /* the source's last record */
    uint8_t source_head[LIL_SHA256_LEN]; /* the source's last chain value */
};

/* Find where plan asks to cut the verified image (valid bytes) of run_id;
 * LIL_E_INVAL with the reason and the nearest valid cuts in err when the
 * cut is not at a valid point or past the run's end. */
lil_status lil__fork_plan(const struct lil_env *env, struct lil_err *err,
                          const char *run_id, const uint8_t *image, size_t valid,
                          struct lil_fork_plan *plan);

/* What a fork says of itself. */
struct lil_fork_who {
    const char *source;       /* the source run */
    const char *source_store; /* where it is (passwords hidden) */
    const char *actor;        /* who forked it */
    const char *reason;       /* why ("" when not said) */
    const char *os_user;      /* the user lil ran as */
    int64_t at_ms;            /* when */
};

/* The provenance record's payload (a new reference): {"source",
 * "sourceStore", "cut": {"seq", "iteration" | "step"}, "sourceRecords",
 * "sourceHead", "actor", "osUser", "reason", "at"}. */
json_t *lil__fork_provenance(const struct lil_fork_plan *plan,
                             const struct lil_fork_who *who);

/* The document of lil_run_diff for the runs a (in store sa) and b (in sb)
 * (a new reference in *out).  The errors of lil__store_image, named by
 * run. */
lil_status lil__history_diff(struct lil_store *sa, const char *a, struct lil_store *sb,
                             const char *b, struct lil_err *err, json_t **out);

#endif
