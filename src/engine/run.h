/*
 * run.h -- a run: its records in the store, the index of its steps (built when replay
 * leaves journal order, or at open when it holds effects), the occurrence
 * counters of this execution, and its outcome.
 *
 * Thread rules: mu guards everything below it.  Step functions run with mu
 * released, so threads run them in parallel; appends and syncs are the
 * store's to serialize (the file store's group commit).
 */
#ifndef LIL_ENGINE_RUN_H
#define LIL_ENGINE_RUN_H

#include <pthread.h>
#include <stdbool.h>

#include "base/buf.h"
#include "base/handles.h"
#include "engine/index.h"
#include "store/store.h"

#define LIL_DEFAULT_MAX_RECORD (64u * 1024u * 1024u)
#define LIL_OPEN_PUBLIC_FLAGS                                    \
    ((unsigned)LIL_OPEN_READONLY | (unsigned)LIL_OPEN_EXISTING | \
     (unsigned)LIL_OPEN_VERIFY_CHAIN)
/* Inside the library only: a readonly handle that walks the live segment of
 * a compacted run, as a writable one does (the loop runner's look before it
 * opens to write: what the run goes on from, not its whole history). */
#define LIL__OPEN_LIVE_SEGMENT (1u << 24)
#define LIL_OPEN_KNOWN_FLAGS   (LIL_OPEN_PUBLIC_FLAGS | LIL__OPEN_LIVE_SEGMENT)

/* Memory kept by the run for bytes the index refers to that are not in
 * the journal's mapping (names of new steps, resolved outcomes): a chain
 * of chunks, freed at close. */
struct kept {
    struct kept *next;
    size_t used;
    size_t cap;
    uint8_t data[];
};

struct lil_run {
    uint32_t magic;
    struct lil_store *st;
    const struct lil_env *env;
    char *id;
    struct lil_srun *sr; /* the run in the store (st->ops) */
    bool readonly;
    int pid; /* the process that opened it: a child forked later may not use
                it (lil.h, lil_run_open; api/entry.c) */
    size_t max_record;

    pthread_mutex_t mu;
    struct lil_err err; /* last failure on this run, any thread */
    struct imap index;  /* identity -> journal facts (once indexed) */
    struct imap names;  /* step name -> calls in this execution */
    bool indexed;       /* index holds every step the open scan found */
    bool need_index;    /* the journal holds effects: index at open */
    uint64_t cursor;    /* not indexed: the store's cursor where replay
                           expects the next step record (step.c) */
    lil_run_state state;
    const uint8_t *outcome; /* result (completed) or reason (failed, stopped) */
    size_t outcome_len;
    uint64_t steps_done;
    uint64_t steps_failed;
    size_t *uncertain; /* index entries of pending effects, in order */
    size_t n_uncertain;
    size_t cap_uncertain;
    struct kept *kept;
    int last_open_pid; /* pid of the last OPEN record the scan saw */
    bool aborted;      /* an effect was resolved with abort: stopped */
    uint64_t intents;  /* intent records the scan saw (0: nothing pending) */
    char scratch[256]; /* NUL-terminated identity for lil_run_uncertain_at */
};

lil_status lil__run_open(struct lil_store *st, struct lil_err *err, const char *run_id,
                         const lil_run_opts *opts, struct lil_run **out);
lil_status lil__run_close(struct lil_run *run, struct lil_err *err);

/* control.c: what an operator leaves for a run outside its journal.
 * Make every record run appended so far durable (whatever the sync mode). */
lil_status lil__run_sync(struct lil_run *run, struct lil_err *err);
/* Go on in a new segment (control.c; store.h, run_rotate). */
lil_status lil__run_rotate(struct lil_run *run, struct lil_err *err,
                           const struct lil_rec *recs, size_t n, bool *done);
/* The pending stop request of run_id into *out (lil_free); LIL_E_NOTFOUND
 * if none. */
lil_status lil__stop_read(struct lil_store *st, struct lil_err *err, const char *run_id,
                          lil_bytes *out);
/* Remove run_id's pending stop request; LIL_E_NOTFOUND if none. */
lil_status lil__stop_clear(struct lil_store *st, struct lil_err *err,
                           const char *run_id);
/* Whether st has a journal key (runs it creates are keyed). */
bool lil__store_keyed(struct lil_store *st);
/* The queue state of run_id; LIL_E_NOTFOUND when the run is not queued or
 * the store has no queue. */
lil_status lil__queue_state(struct lil_store *st, struct lil_err *err,
                            const char *run_id, enum lil_sq_state *state);

/* Keep a copy of bytes for the life of the run (under mu). */
const uint8_t *lil__run_keep(struct lil_run *run, const void *data, size_t len);

/* Build the index from the records the open scan found, unless it is built
 * (under mu).  Until then replay follows the journal in order. */
lil_status lil__run_index(struct lil_run *run, struct lil_err *err);

/* Fill e's outcome from a STEP or STEP_FAILED record. */
void lil__run_entry_of(const struct lil_rec *rec, struct ientry *e);

/* Rebuild run->uncertain from the index and set the state (under mu). */
lil_status lil__run_settle_state(struct lil_run *run, struct lil_err *err);

/* What a step is (lil__run_step_req).  A plain step: effect false, the
 * rest zero, or lazy.  An effect journals an INTENT before fn runs: the
 * SHA-256 of request (replay compares it; NULL/0: no bytes), then the note,
 * text that names the effect to a person (uncertain effects, diverging
 * replays: lil__run_intent_note, `lil log`, `lil inspect`), journaled and
 * never compared.  A note over 4 KiB is journaled whole in a record of its
 * own before the intent (engine/intent.h). */
struct lil_step_req {
    bool effect;         /* an effect: intent first */
    const void *request; /* effects: hashed into the intent (NULL/0 allowed) */
    size_t request_len;
    const void *note; /* effects: journaled with the intent, UTF-8, at most
                         the run's max_record bytes; NULL/0: none */
    size_t note_len;
    bool lazy;      /* plain steps: the outcome is written (a process crash keeps
                       it) but synced in no mode; the run's next sync (an
                       intent, lil_run_sync, close) makes it durable */
    bool exact;     /* the identity is name itself, not counted: the caller
                       makes every name unique (the loop runner's records), so
                       a second call with it, in this process too, replays */
    bool after_end; /* plain steps: allowed on a run that has ended (completed,
                       failed, stopped): the loop runner's notices of its end
                       (notifications) */
};

/* Run or replay one step (lil_step, lil_effect, the loop runner).  A note
 * on a plain step or not UTF-8, and lazy with effect are LIL_E_INVAL, a
 * note over the run's max_record LIL_E_TOOBIG, and then nothing is
 * journaled. */
lil_status lil__run_step_req(struct lil_run *run, struct lil_err *err, const char *name,
                             const struct lil_step_req *req, lil_fn fn, void *ud,
                             lil_bytes *out);
/* lil__run_step_req without note or laziness. */
lil_status lil__run_step(struct lil_run *run, struct lil_err *err, const char *name,
                         bool effect, const void *request, size_t request_len,
                         lil_fn fn, void *ud, lil_bytes *out);

/* The note of the intent of uncertain effect identity (its latest
 * intent), borrowed until lil_run_close: the whole note when it is in the
 * intent, or, for a longer one, its first bytes (cut set) -- unless whole
 * is set and the journal's record of the whole note is found (read from
 * the journal: for showing one effect, not for every record).  False when
 * identity is not uncertain or its intent has no note. */
struct lil_run_note {
    const char *text;
    size_t len;
    uint64_t full_len; /* bytes of the whole note */
    bool cut;          /* text is its first bytes only */
};

bool lil__run_intent_note(struct lil_run *run, const char *identity, bool whole,
                          struct lil_run_note *out);
lil_status lil__run_resolve(struct lil_run *run, struct lil_err *err,
                            const char *identity, lil_resolution how,
                            const void *result, size_t result_len, const char *actor,
                            const char *reason);
/* A layer above journaled that a failed run goes on (the loop runner's
 * retried.N, docs/loops.md): the run is running again in this handle's
 * memory -- no record of the engine's; the journal's run-failed stays,
 * and the next open finds the run failed until that layer reopens it
 * again.  LIL_E_INVAL when the run has not failed. */
lil_status lil__run_reopen(struct lil_run *run, struct lil_err *err);
/* Journal that the failed effect identity runs again (the resolve record
 * of a retry, with actor and reason, synced): its next call runs it, with
 * a new intent, as after the retry of an uncertain effect.  The run must be
 * running (lil__run_reopen).  LIL_E_NOTFOUND when identity is no effect
 * whose outcome is a failure. */
lil_status lil__run_retry_failed(struct lil_run *run, struct lil_err *err,
                                 const char *identity, const char *actor,
                                 const char *reason);
lil_status lil__run_end(struct lil_run *run, struct lil_err *err, bool completed,
                        const void *data, size_t len);
lil_status lil__run_result(struct lil_run *run, struct lil_err *err, lil_bytes *out);
/* The run's state (under its mutex), a state's name ("unknown" for none),
 * the i-th uncertain effect's identity (NULL past the last; valid until
 * the next call on the run): run_state.c. */
lil_run_state lil__run_status(const struct lil_run *run);
const char *lil__run_state_name(lil_run_state state);
const char *lil__run_uncertain_at(const struct lil_run *run, size_t i);
/* A record type's name as lil_record's type reads ("unknown" for none). */
const char *lil__record_type_name(int type);

lil_status lil__run_info(struct lil_run *run, struct lil_err *err, lil_run_info *info);
lil_status lil__run_foreach(struct lil_run *run, struct lil_err *err, lil_record_fn fn,
                            void *ud);

/* Steps in two calls (lil_step_begin, lil_effect_begin): lil__step_begin
 * is lil__run_step_req up to the call of fn; when fn must run, *call is a
 * heap call (kind LIL_CALL_STEP) that lil__step_end (journal the outcome
 * set on it) or lil__step_cancel (journal none: a plain step is as if
 * never run, an effect is left uncertain) frees. */
lil_status lil__step_begin(struct lil_run *run, struct lil_err *err, const char *name,
                           const struct lil_step_req *req, struct lil_call **call,
                           lil_bytes *out);
lil_status lil__step_end(struct lil_call *call, struct lil_err *err, lil_bytes *out);
lil_status lil__step_cancel(struct lil_call *call, struct lil_err *err);
/* The run of a call of kind LIL_CALL_STEP. */
struct lil_run *lil__step_call_run(struct lil_call *call);

lil_status lil__marker(struct lil_store *st, struct lil_err *err, const char *name,
                       int policy, lil_fn fn, void *ud, lil_bytes *out);
/* Markers in two calls (lil_marker_begin): as lil__marker up to the call of
 * fn, the marker held (other callers wait) until lil__marker_end publishes
 * the result set on *call (or, failed, publishes nothing) or
 * lil__marker_cancel publishes nothing; both free the call. */
lil_status lil__marker_begin(struct lil_store *st, struct lil_err *err,
                             const char *name, int policy, struct lil_call **call,
                             lil_bytes *out);
lil_status lil__marker_end(struct lil_call *call, struct lil_err *err, lil_bytes *out);
lil_status lil__marker_cancel(struct lil_call *call, struct lil_err *err);
/* The store of a call of kind LIL_CALL_MARKER. */
struct lil_store *lil__marker_call_store(struct lil_call *call);
lil_status lil__marker_reset(struct lil_store *st, struct lil_err *err,
                             const char *name);

/* Step-name rule of lil.h (also for markers). */
lil_status lil__step_name_check(struct lil_err *err, const char *name);

#endif
