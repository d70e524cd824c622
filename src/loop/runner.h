/*
 * runner.h -- the loop runner: a LoopSpec loop executed as a journaled run
 * (docs/loopspec.md, "How a loop runs"; docs/loops.md for what users see).
 *
 * The pieces:
 *   runner_call.c    one operation as a whole call (json scope, result
 *                    JSON, errors published), for src/api/loops.c, the
 *                    queue's workers and lil verify
 *   runner_open.c    open (options, inputs, the start record) and close
 *   runner_load.c    the fold of the journal into the loop's facts
 *   runner_facts.c   those facts for readers without the spec (lil
 *                    inspect, ls, tick): lil_loop_facts
 *   runner_iter.c    the outer loop: statuses, caps, stops, terminate,
 *                    on_exit and the completion hook
 *   runner_body.c    one pass of the body: when, gates, reduce, save and
 *                    on_done, breakpoints and sleeps
 *   runner_effect.c  shell, http and agent effects through the engine's
 *                    effects: identity, retries, redaction, replay
 *   runner_budget.c  reservations of agent calls: the token and usd
 *                    budgets checked before a call starts
 *   runner_budget_admit.c  that check and its record, the detail of a
 *                    budget cap it trips
 *   runner_record.c  the records of docs/loops.md: names and payloads
 *   runner_result.c  the result (lil_loop_result) and its JSON
 *   runner_slots.c   the slots: records journaled since the last snapshot
 *   runner_ctx.c     an iteration's context, failing and stopping it, the
 *                    clock; beneath every other file (which call down, to
 *                    it and to each other, never in a circle)
 *
 * The journal is the truth.  A fact changes in memory only after its
 * record was appended: the committed state and meters come from the last
 * snapshot record, and an iteration that did not reach its snapshot is run
 * again from there, its journaled effects replayed (never run again).
 *
 * Records are engine steps with exact names (no occurrence numbers: an
 * iteration run twice by one process must find the records of the first
 * pass), so every name is unique by construction: "I.S" for the S-th
 * effect, sleep or breakpoint of iteration I ("exit.S" for on_exit),
 * "I.snap" for the snapshot, "<kind>.N" for the N-th control record.
 *
 * Ownership and threads: a struct lil_loop owns its run handle, its state
 * and every JSON value it holds; one thread runs it at a time, except
 * lil_loop_interrupt (an atomic flag and a kill, async-signal-safe).
 */
#ifndef LIL_LOOP_RUNNER_H
#define LIL_LOOP_RUNNER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/handles.h"
#include "base/hash.h"
#include "effects/redact.h"
#include "engine/run.h"
#include "json/json.h"
#include "loop/caps.h"
#include "loop/retry.h"
#include "loop/state.h"
#include "loopspec/ir/ir.h"

#define LIL_LOOP_MAX_BLOCK_MS  1000   /* sleeps up to this block */
#define LIL_LOOP_UNTIL_POLL_MS 5000   /* sleep.until parks this long */
#define LIL_LOOP_TIMEOUT_MS    300000 /* effectTimeoutMs */
#define LIL_LOOP_NAME_MAX      48     /* "I.S", "I.snap", "kind.N" */
_Static_assert(LIL_LOOP_NAME_MAX > 2 * LIL_I64_TEXT_MAX + 5,
               "names of two numbers fit");
#define LIL_LOOP_STOP_POLL_MS                             \
    20 /* a stop request is looked for at most this often \
          between iterations (runner_iter.c) */
#define LIL_LOOP_KNOWN_FLAGS                                                   \
    (LIL_LOOP_APPROVE_CAPS | LIL_LOOP_YES | LIL_LOOP_WAIT | LIL_LOOP_REQUEUE | \
     LIL_LOOP_ACCEPT_SPEC_CHANGE | LIL_LOOP_UNATTENDED | LIL_LOOP_NEW_RUN |    \
     LIL_LOOP_RETRY_FAILED)

/* How the journal says the run ended (sticky). */
enum loop_end { LOOP_LIVE = 0, LOOP_COMPLETED, LOOP_FAILED, LOOP_STOPPED };

/* A pause at a breakpoint or gate, journaled as pause.N. */
struct loop_pause {
    bool on;
    char id[LIL_LOOP_NAME_MAX]; /* its record's name, "pause.N" */
    int64_t iteration, seq;
    char digest[65]; /* hex SHA-256 of what is asked */
    char *step;      /* step id or "gates[i]" */
    char *ask;       /* the rendered question */
    char strategy[16];
    char *reason; /* "breakpoint awaiting approval [strategy: s]: ask" */
};

/* What a run is bound to, as its journal says (runner_bind.c). */
struct loop_binding {
    char spec[65];             /* hex digest of the spec in force ("" when not known) */
    char *loop_id;             /* its loop id, or NULL */
    char *spec_path;           /* where it was read from, or NULL */
    json_t *parts;             /* {"part": digest} of that spec, or NULL (a start
                                  record written before it carried them) */
    bool lenient;              /* a change of spec was accepted: */
    int64_t lenient_iteration; /* the iteration in flight then, whose
                                  records from before the change replay as
                                  journaled */
    bool imported;             /* imported.N with no adopted.N after it */
    char cap_pause[LIL_LOOP_NAME_MAX]; /* the last cap.N record's name */
};

/* A change of spec accepted for the retry of a failed run
 * (LIL_LOOP_RETRY_FAILED with LIL_LOOP_ACCEPT_SPEC_CHANGE): found at the
 * open, journaled (spec_changed.N) by the retry once it is decided, never
 * when the run is not retried (runner_bind.c). */
struct loop_respec {
    bool on;
    char to[65];     /* the new spec's digest (hex) */
    char *to_id;     /* its loop id */
    json_t *parts;   /* its parts' digests */
    json_t *changed; /* the parts that differ */
};

/* A slot record journaled after the last snapshot ("I.S"). */
struct loop_slot {
    char name[LIL_LOOP_NAME_MAX];
    json_t *outcome; /* parsed outcome payload, or NULL (intent only) */
    char *note;      /* the intent's note "kind identity", or NULL */
    /* note_cut: note is the first bytes of a note over 4 KiB, as its intent
       keeps them (engine/intent.h); note_hash and note_len name the whole */
    bool note_cut;
    uint8_t note_hash[LIL_SHA256_LEN];
    uint64_t note_len;
    /* an agent call's reservations (runner_budget.c) */
    bool failed;                /* its outcome is a failure (the run failed there); a
                                   retry of the failed run runs it again (runner_retry.c) */
    struct lil_reserve pending; /* journaled; its intent is not (yet) */
    struct lil_reserve held;    /* counted: the intent is journaled, no outcome */
    bool has_pending, has_held;
};

/* An option field the caller's struct has (struct_size covers it), or NULL. */
#define LIL_LOOP_OPT(o, field)                                                      \
    ((o) && (o)->struct_size >= offsetof(lil_loop_opts, field) + sizeof((o)->field) \
         ? (o)->field                                                               \
         : NULL)

/* What a layer above the runner does at its turns (the queue of
 * src/queue/: a run handed back to workers).  Each member may be NULL. */
struct lil_loop_hooks {
    /* After an operator's decision (approve, recover, resume): go on with
       the run, or hand it to whoever goes on with it (instead of
       lil__loop_run(lp, false, res)). */
    lil_status (*go_on)(struct lil_loop *lp, lil_loop_result *res);
    /* A decision ended the run: res is its status (to record elsewhere). */
    lil_status (*note_end)(struct lil_loop *lp, const lil_loop_result *res);
};

/* The caller's options, fixed when the loop opens (runner_open.c). */
struct loop_options {
    lil_sync sync;
    unsigned flags;
    char *actor, *reason, *cwd;
    char *os_user; /* the user this process runs as (runner_bind.c) */
    int64_t max_block_ms, effect_timeout_ms;
    lil_loop_progress_fn progress;
    void *progress_ud;
};

/* What effects and expressions read besides the state: the inputs, the
 * environment and metadata, the children's scrubbed environment, the
 * secrets to redact, the retry policy.  Effects (src/effects/) and agents
 * (src/agents/) get only the pieces a call needs, as arguments. */
struct loop_surroundings {
    json_t *inputs, *environ, *meta;
    json_t *given;            /* the inputs this open was given (resolved), or NULL */
    const char **effect_envp; /* scrubbed environment of shell steps */
    char *env_allow[2];       /* --env-allow and LIL_EFFECT_ENV (copies, or
                                 NULL): what agent CLIs may get too */
    struct lil_redact *redact;
    struct lil_retry_policy retry;
};

/* Effects answered instead of run, and outcomes told to a recorder: the
 * hooks of src/replay/ (lil__loop_set_mock, lil__loop_set_recorder). */
struct loop_replay {
    lil_status (*mock)(void *ud, struct lil_err *err, const char *kind, json_t *request,
                       json_t **result, json_t **usage);
    void *mock_ud;
    /* the effect the mock is asked about, set for the call only: its step
       id (NULL for on_exit and the completion hook) and its note "kind
       identity" as journaled (secrets redacted) -- what a cassette matches */
    const char *mock_step, *mock_note;
    /* a dry run's (lil__loop_set_unsent): told each http request the mock
       answers that a real run would refuse to send */
    void (*unsent)(void *ud, const char *step, const char *why);
    void *unsent_ud;

    /* told every effect outcome this process journals and the completion
       hook's result (a cassette being recorded) */
    lil_status (*recorder)(void *ud, struct lil_err *err, json_t *outcome);
    void *recorder_ud;
    struct lil_cassette *cassette; /* opts' record_path / replay_path (owned,
                                      freed by cassette_close at close) */
    void (*cassette_close)(struct lil_loop *lp);
};

/* The clock (lil__loop_set_clock; NULL: the real one). */
struct loop_clock {
    int64_t (*now)(void *ud);
    void (*sleep)(void *ud, int64_t ms);
    void *ud;
};

#define LOOP_NOTES_MAX 8 /* steps a call's result notes (runner_progress.c) */

struct lil_loop {
    uint32_t magic;
    struct lil_store *st;
    const struct lil_env *env;
    const struct lil_ir_spec *ir; /* NULL: a reader's fold (runner_facts.c) */
    const char *spec_path;
    struct lil_run *run; /* read-only until a call must write (lil__loop_writable) */
    char *run_id;
    struct lil_err err;
    struct loop_options opt;
    struct loop_surroundings fx;

    /* the journal's facts (runner_load.c) */
    bool started;                  /* the start record exists */
    int64_t started_ms;            /* wallclock base of a fresh run */
    json_t *committed;             /* state of the last snapshot (or the initial) */
    struct lil_loop_meters meters; /* as of the last record */
    uint64_t nctl;                 /* control records so far */
    enum loop_end end;
    char *end_reason;
    json_t *stop; /* an honoured stop request not yet cleared */
    struct loop_pause pause;
    struct loop_binding bound;  /* what the run is bound to (runner_bind.c) */
    struct loop_respec respec;  /* a change of spec a retry journals */
    bool retried;               /* the fold: a retried.N lifted the failure
                                   (runner_retry.c) */
    char *cap_detail;           /* what the last cap's record says of it beyond
                                   its word (runner_budget_admit.c), until the
                                   cap is cleared; or NULL */
    enum lil_cap cap_detail_of; /* the cap it is the detail of */
    bool terminated, observer_started;
    json_t *notified;  /* the notifications journaled: {"<event key>": {"<channel>":
                          "attempted" | "ok" | "failed"}}, or NULL (runner_notify.c) */
    json_t *artifacts; /* the last artifacts.N record's payload, or NULL
                          (runner_artifacts.c) */
    bool check_config; /* a new run: its agent harnesses checked before it is made */
    bool has_start_caps, parked; /* parked: the last record (open and close
                                    aside) is parked.N (runner_facts.c) */
    bool requeued;               /* this call handed the run back to the queue
                                    (hooks->go_on) */
    struct loop_slot *slots;     /* slot records after the last snapshot */
    size_t nslots, capslots;

    /* more of the journal's facts, for readers without a spec (runner_facts.c) */
    json_t *start;                    /* the start record's payload */
    struct lil_cap_limits start_caps; /* its caps: the meters' limits when
                                         there is no IR (has_start_caps) */
    int64_t wake_at_ms;               /* parked: its wakeAt */

    struct loop_replay replay;
    struct loop_clock clock;

    /* a retry decided with an approval (lil_loop_recover with
       LIL_LOOP_APPROVE_CAPS), for that call only: the slot retried, and who
       approves a budget cap its check trips, and why (borrowed) */
    struct {
        char slot[LIL_LOOP_NAME_MAX]; /* "" when none */
        const char *actor, *reason;
    } recovery;

    /* what the layers above do at the runner's turns (NULL: nothing) */
    const struct lil_loop_hooks *hooks;

    int64_t stop_poll_ns; /* monotonic time of the next look for a stop request
                             between iterations (runner_iter.c) */

    /* what this call's fresh effects said a person must know at once (a
       command not found), one entry per step (runner_progress.c) */
    struct loop_note {
        char step[LIL_LOOP_NAME_MAX];
        char text[160];
        int64_t first, last, count; /* iterations, and how many times */
    } notes[LOOP_NOTES_MAX];

    size_t nnotes;

    /* lil_loop_interrupt */
    int interrupted; /* LIL_LOOP_INTERRUPT_*; atomic (lil__loop_interrupted) */
    int child_pgid;  /* process group of the running shell; atomic */

    /* compaction (runner_compact.c) */
    struct {
        bool read, off;            /* thresholds read; the store cannot */
        int64_t iterations, bytes; /* LIL_COMPACT_ITERATIONS, _BYTES */
        int64_t from_iteration;    /* the live segment's first iteration
                                      (its compacted.N record's, + 1) */
    } compact;
};

/* The run of one iteration (or of on_exit, iteration -1). */
enum iter_why {
    WHY_NONE = 0,
    WHY_PARK,      /* a sleep parked it: wake_at */
    WHY_PAUSE,     /* a breakpoint or gate waits for approval */
    WHY_CAP,       /* a budget tripped after an agent call: cap */
    WHY_UNCERTAIN, /* an effect of this iteration has no outcome */
    WHY_STOP,      /* lil_loop_interrupt asked to stop */
    WHY_FAIL       /* an error: err */
};

struct iter {
    struct lil_loop *lp;
    int64_t iteration;           /* -1: on_exit */
    int64_t seq;                 /* the next slot */
    struct lil_loop_state state; /* the live state */
    enum iter_why why;
    int64_t wake_at;
    struct lil_cap_trip cap;
    struct lil_alias *aliases; /* reduce aliases in scope */
    size_t naliases, capaliases;
};

/* lil_loop_interrupt's request, read from the running thread (lock-free
 * atomics: safe against a signal handler and another thread). */
static inline int lil__loop_interrupted(const struct lil_loop *lp)
{
    return __atomic_load_n(&lp->interrupted, __ATOMIC_ACQUIRE);
}

/* A result under construction (runner_result.c). */
lil_status lil__loop_result(struct lil_loop *lp, lil_loop_status status,
                            const char *reason, lil_loop_result *res);
void lil__loop_result_wake(lil_loop_result *res, int64_t wake_at_ms);
void lil__loop_result_next(lil_loop_result *res, int64_t next);
lil_status lil__loop_result_uncertain(struct lil_loop *lp, lil_loop_result *res);
lil_status lil__loop_result_json(struct lil_loop *lp, lil_loop_result *res);
/* An uncertain effect's object in a result or facts document: "iteration",
 * "seq", "kind" and "identity" -- cut to its first 4 KiB (at a character)
 * when longer, with "identity_len" (its size) and "identity_cut": true;
 * the whole is in lil_loop_result.uncertain_identity and the journal. */
json_t *lil__loop_uncertain_json(const lil_loop_result *res);

/* One operation of a public lil_loop_* call (runner_call.c). */
enum lil_loop_op {
    LIL_LOOP_OP_RUN,
    LIL_LOOP_OP_STEP,
    LIL_LOOP_OP_RESUME,
    LIL_LOOP_OP_CURRENT,
    LIL_LOOP_OP_APPROVE,
    LIL_LOOP_OP_RECOVER,
    LIL_LOOP_OP_RETRY_FAILED
};

struct lil_loop_req {
    enum lil_loop_op op;
    lil_resolution how;      /* recover */
    const char *result_json; /* recover */
    const char *actor;       /* approve, recover, retry (NULL: the open's) */
    const char *reason;      /* approve, recover, retry (NULL: the default) */
    const char *pause_id;    /* approve: the pause it must be, or NULL */
    const char *digest;      /* approve: the pause's digest, or NULL */
};

/* Calls as the public ones make them, on a handle already checked
 * (runner_call.c): lil__loop_call runs req in a json scope bound to lp's
 * env, fills *res (emptied first) with its JSON, and on failure releases
 * *res and publishes lp->err to the calling thread; lil__loop_step_call is
 * one iteration.  lil__loop_open_call opens in a json scope (errors in err,
 * not published), unchecked (lil__loop_open_unchecked); lil__loop_close_call
 * closes in one (NULL: LIL_OK). */
lil_status lil__loop_call(struct lil_loop *lp, const struct lil_loop_req *req,
                          lil_loop_result *res);
lil_status lil__loop_step_call(struct lil_loop *lp, lil_loop_result *res);
lil_status lil__loop_open_call(struct lil_store *st, struct lil_err *err,
                               const lil_spec *spec, const lil_loop_opts *opts,
                               struct lil_loop **out);
lil_status lil__loop_close_call(struct lil_loop *lp);

/* lil_loop_interrupt on a checked handle and how (async-signal-safe: an
 * atomic flag, and for LIL_LOOP_INTERRUPT_KILL a kill of the effect's
 * process group). */
void lil__loop_interrupt(struct lil_loop *lp, int how);

/* lil_loop_facts's document (lil__loop_facts at the current time) as
 * compact JSON appended to text; call inside a json scope. */
lil_status lil__loop_facts_dump(struct lil_run *run, struct lil_err *err,
                                struct lil_buf *text);

/* Release what a result holds and empty it (lil_loop_result_free; NULL:
 * nothing); a status's name ("unknown" for none); the exit code of `lil`
 * for a status (runner_result.c). */
void lil__loop_result_free(lil_loop_result *res);
const char *lil__loop_status_name(lil_loop_status s);
int lil__loop_exit_code(lil_loop_status s);

/* Open and close (runner_open.c). */
lil_status lil__loop_open(struct lil_store *st, struct lil_err *err,
                          const lil_spec *spec, const lil_loop_opts *opts,
                          struct lil_loop **out);
/* lil__loop_open without checking, for a new run, that its agent harnesses
 * can run here (lil__loop_open_call: a dry run mocks every effect, a
 * worker's runs exist already). */
lil_status lil__loop_open_unchecked(struct lil_store *st, struct lil_err *err,
                                    const lil_spec *spec, const lil_loop_opts *opts,
                                    struct lil_loop **out);
lil_status lil__loop_close(struct lil_loop *lp);

/* After an operator's decision: the hooks' go_on, or lil__loop_run. */
lil_status lil__loop_decided(struct lil_loop *lp, lil_loop_result *res);

/* A decision ended the run: the hooks' note_end (LIL_OK without one). */
lil_status lil__loop_decision_ended(struct lil_loop *lp, const lil_loop_result *res);
/* Make lp's run writable: a read-only handle is closed, the run opened for
 * writing (its lock taken) and the journal folded again (*refolded set:
 * the facts may have changed).  A writable handle: nothing. */
lil_status lil__loop_writable(struct lil_loop *lp, bool *refolded);

/* The fold (runner_load.c): read the journal into lp's facts.  The
 * meters' limits are the IR's; without an IR (lp->ir NULL: a reader that
 * has no spec) the start record's caps, or none when it has no caps.
 * Records before the start record (one whose "loopId" is a string) are
 * no loop's and are passed over. */
lil_status lil__loop_load(struct lil_loop *lp);
/* Forget what the fold found (before folding again; runner_open.c). */
void lil__loop_forget(struct lil_loop *lp);
/* The facts of the loop run in run (its journal alone, no spec; a
 * runner's fold with lp->ir NULL), as the JSON document of lil_loop_facts
 * (lil.h, docs/api.md) in *out (a new reference; call inside a json
 * scope).  now_ms: the clock wallclock meters count to while the run can
 * go on.  LIL_E_NOTFOUND (message in err) when run holds no loop start
 * record; what the fold reports otherwise (LIL_E_CORRUPT for a record the
 * runner never writes, LIL_E_IO, LIL_E_NOMEM). */
lil_status lil__loop_facts(struct lil_run *run, struct lil_err *err, int64_t now_ms,
                           json_t **out);
/* The slots (runner_slots.c).  The slot record named name after the last
 * snapshot, or NULL. */
struct loop_slot *lil__loop_slot(struct lil_loop *lp, const char *name);
/* The slot named name, added (empty) when the table has none; NULL when out
 * of memory (lp->err set). */
struct loop_slot *lil__loop_slot_get(struct lil_loop *lp, const char *name);
/* Set slot name's outcome to outcome (stolen; on failure released). */
lil_status lil__loop_slot_put(struct lil_loop *lp, const char *name, json_t *outcome);
void lil__loop_slots_clear(struct lil_loop *lp);
/* A slot's name: "I.S", or "exit.S" for on_exit (iteration < 0). */
void lil__loop_slot_name(char out[LIL_LOOP_NAME_MAX], int64_t iteration, int64_t seq);

/* Caps (runner_iter.c).  Set the detail of cap (a copy of text; NULL
 * clears it). */
lil_status lil__loop_cap_detail(struct lil_loop *lp, enum lil_cap cap,
                                const char *text);
/* Journal that cap t tripped (a breakpoint) and its approval by actor for
 * reason at once: cap.N, cap_cleared.N; the meters rebased. */
lil_status lil__loop_cap_approve_now(struct lil_loop *lp, struct lil_cap_trip t,
                                     const char *actor, const char *reason);

/* What a run is bound to (runner_bind.c). */
/* The digest of spec (hex) and, when parts is not NULL, the digests of its
 * parts ({"part": hex}, a new reference). */
lil_status lil__loop_spec_digest(const lil_spec *spec, struct lil_err *err,
                                 char hex[65], json_t **parts);
/* The fold's part: the start record v, and control records of kind
 * spec_changed, imported, adopted (others: nothing). */
lil_status lil__loop_bind_start(struct lil_loop *lp, json_t *v);
lil_status lil__loop_bind_control(struct lil_loop *lp, const char *kind, size_t klen,
                                  const char *name, json_t *v);
void lil__loop_bind_forget(struct lil_loop *lp);
/* At open, a run that exists: refuse another spec unless the change is
 * accepted (then journal it), refuse what an unattended open must not run,
 * and journal an operator's first open of an imported run. */
lil_status lil__loop_bind_check(struct lil_loop *lp, const lil_spec *spec);
/* Journal the change of spec kept for a retry (lp->respec), if any, and
 * bind the run to it; then forget it. */
lil_status lil__loop_bind_respec(struct lil_loop *lp);
void lil__loop_respec_forget(struct lil_loop *lp);
/* The pause lp waits at: false when none; else its id ("pause.N",
 * "cap.N") and digest (hex) in the buffers. */
bool lil__loop_pause_ident(const struct lil_loop *lp, char id[LIL_LOOP_NAME_MAX],
                           char digest[65]);
/* The digest of breakpoint (or gate) pause id: what an approval names, from
 * what its pause.N record holds (iteration, seq, step, and the digest of
 * what it asks); the history's pause events show the same. */
void lil__loop_breakpoint_digest(const struct lil_env *env, const char *id,
                                 int64_t iteration, int64_t seq, const char *step,
                                 const char *ask_digest, char digest[65]);
/* The pause as the result's "pause" and the facts' "paused" show it:
 * {"kind": "breakpoint", "id", "digest", "iteration", "seq", "step",
 * "ask", "strategy"} or {"kind": "cap", "id", "digest", "cap",
 * "iteration", "detail"?}; null when not paused. */
json_t *lil__loop_pause_json(const struct lil_loop *lp);
/* Refuse (LIL_E_INVAL, nothing written) an approval naming another pause
 * than the current one (either may be NULL). */
lil_status lil__loop_pause_expect(struct lil_loop *lp, const char *id,
                                  const char *digest);
/* Is the slot of iteration `iteration` one journaled before an accepted
 * change of spec (its replay takes what was journaled)? */
bool lil__loop_lenient(const struct lil_loop *lp, int64_t iteration);
/* The OS user of this process (getpwuid_r of the effective uid), a copy
 * (NULL when out of memory). */
char *lil__loop_os_user(const struct lil_env *env);
/* Journal in run_id of st, when it is a loop run that has not ended, that
 * it was imported (imported.N), so that unattended opens refuse it until an
 * operator runs it. */
lil_status lil__loop_mark_imported(struct lil_store *st, struct lil_err *err,
                                   const char *run_id);

/* Records (runner_record.c). */
/* Append control record "<kind>.N" with payload (a JSON object, stolen).
 * lazy: not synced on its own. */
lil_status lil__loop_control(struct lil_loop *lp, const char *kind, json_t *payload,
                             bool lazy);
/* lil__loop_control, synced, also on a run that has ended (the records
 * of its notifications: runner_notify.c). */
lil_status lil__loop_notice(struct lil_loop *lp, const char *kind, json_t *payload);
/* Append a plain record named name with payload (stolen); *replayed set when
 * the journal already held it (then *journaled, if not NULL, receives its
 * payload, a new reference). */
lil_status lil__loop_plain(struct lil_loop *lp, const char *name, json_t *payload,
                           bool lazy, json_t **journaled);
/* After a committed iteration: go on in a new journal segment when the
 * live one is over a threshold and the run is at a quiet boundary
 * (runner_compact.c). */
lil_status lil__loop_compact_maybe(struct lil_loop *lp);

/* Commit iteration it->iteration: the snapshot record, then the meters. */
lil_status lil__loop_snapshot(struct lil_loop *lp, struct iter *it);
/* The clock (runner_ctx.c).  Millisecond clock (epoch). */
int64_t lil__loop_now_ms(void);
/* lp's clock: lil__loop_now_ms, or the one set with lil__loop_set_clock. */
int64_t lil__loop_now(const struct lil_loop *lp);
/* Replace lp's clock (`lil verify`'s synthetic time): now gives epoch ms;
 * sleep (may be NULL: returns at once) stands for every in-process wait
 * (blocking sleeps, retry back-off, --wait).  NULL now: the real clock. */
void lil__loop_set_clock(struct lil_loop *lp, int64_t (*now)(void *ud),
                         void (*sleep)(void *ud, int64_t ms), void *ud);

/* Notifications (runner_notify.c): the fold's part (a notify.N record),
 * and after an operation that produced res, the notifications its event
 * calls for that the journal does not hold as attempted (none with a mock:
 * `lil verify`).  Their failures are journaled, never returned; an error
 * is the journal's (LIL_E_IO, LIL_E_POISONED, LIL_E_NOMEM). */
lil_status lil__loop_notify_fold(struct lil_loop *lp, json_t *v);
lil_status lil__loop_notify(struct lil_loop *lp, const lil_loop_result *res);

/* Artifacts (runner_artifacts.c): journal artifacts.N, the files the
 * spec's artifacts key names in the run's working directory with their
 * sizes and SHA-256 digests, before the run's end record; nothing without
 * the key or when the journal holds one since the last open.  A file that
 * cannot be read is listed with its error, never fails the run. */
lil_status lil__loop_artifacts(struct lil_loop *lp);

/* The outer loop (runner_iter.c). */
lil_status lil__loop_run(struct lil_loop *lp, bool one, lil_loop_result *res);
lil_status lil__loop_resume(struct lil_loop *lp, lil_loop_result *res);
lil_status lil__loop_approve(struct lil_loop *lp, const char *actor, const char *reason,
                             lil_loop_result *res);
/* lil__loop_approve of the pause named by id and/or digest only. */
lil_status lil__loop_approve_pause(struct lil_loop *lp, const char *id,
                                   const char *digest, const char *actor,
                                   const char *reason, lil_loop_result *res);
lil_status lil__loop_recover(struct lil_loop *lp, lil_resolution how,
                             const char *result, const char *actor, const char *reason,
                             lil_loop_result *res);
lil_status lil__loop_status(struct lil_loop *lp, lil_loop_result *res);

/* The retry of a failed run (runner_retry.c, docs/loops.md "Retrying a
 * failed run"): refused (LIL_E_INVAL, nothing written) unless the run
 * failed and no cap still stops it; else its failed effects journaled to
 * run again, retried.N, a change of spec accepted for it, then the run
 * goes on (lil__loop_decided).  actor NULL: the open's; reason NULL:
 * "retry of the failed run". */
lil_status lil__loop_retry_failed(struct lil_loop *lp, const char *actor,
                                  const char *reason, lil_loop_result *res);
/* The fold's part: retried.N read as it comes (the failure lifted), and
 * again in journal order with the slots and the meters (the cap that ended
 * the run forgotten, the failed slots' notes dropped: they run again). */
void lil__loop_retried_fold(struct lil_loop *lp);
void lil__loop_retried_replay(struct lil_loop *lp);
/* After the fold: a retried run is running again in its run handle too. */
lil_status lil__loop_retried_settle(struct lil_loop *lp);
/* The status of lp as a word ("completed", ...) for messages. */
const char *lil__loop_status_word(struct lil_loop *lp);

/* Progress (runner_progress.c): an event of kind for the progress
 * callback, if any (meters and elapsed filled in; text may be NULL). */
void lil__loop_progress(struct lil_loop *lp, lil_loop_event_kind kind,
                        int64_t iteration, const char *step, const char *effect,
                        int64_t value, const char *text);
/* A fresh effect ended after ms: its outcome (NULL: failed with why, or
 * uncertain when why is NULL too) told to the callback, and a shell step's
 * 127 or 126 noted for the result ("step_notes"). */
void lil__loop_effect_end(struct lil_loop *lp, int64_t iteration, const char *step,
                          const char *kind, int64_t ms, const json_t *outcome,
                          const char *why);
/* A streamed agent call of step at iteration has run to tokens so far
 * (agent.h, on_tokens): LIL_LOOP_EV_TOKENS at the first count and then
 * each time it grew by LIL_LOOP_TOKENS_STEP since the last one told
 * (*told: -1 before the first). */
void lil__loop_call_tokens(struct lil_loop *lp, int64_t iteration, const char *step,
                           int64_t tokens, int64_t *told);
/* "step_notes" of the result: [{"step", "note", "first_iteration",
 * "last_iteration", "count"}], or NULL when this call noted nothing. */
json_t *lil__loop_notes_json(const struct lil_loop *lp);

/* One pass of the body, then the gates without `after` (runner_body.c).
 * LIL_OK: the body ran through; LIL_E_DONE: it->why says what stopped it;
 * other codes: an error (it->why WHY_FAIL, message in lp->err). */
lil_status lil__loop_body(struct iter *it);
/* terminate.on_exit as iteration -1. */
lil_status lil__loop_on_exit(struct iter *it);

/* An iteration's context (runner_ctx.c).  Sleep ms in-process, waking
 * early on lil_loop_interrupt. */
void lil__loop_sleep(struct lil_loop *lp, int64_t ms);
/* Fill ev to read it's live state (release with lil__eval_free). */
void lil__loop_eval(struct iter *it, struct lil_eval *ev);
/* The state context (inputs, env, meta, iteration, aliases) of it. */
void lil__loop_ctx(struct iter *it, struct lil_state_ctx *cx);
lil_status lil__iter_init(struct iter *it, struct lil_loop *lp, int64_t iteration);
void lil__iter_free(struct iter *it);

/* Effects (runner_effect.c).  The step's result in *result (new ref). */
lil_status lil__loop_shell(struct iter *it, const struct lil_ir_step *step,
                           json_t **result);
lil_status lil__loop_http(struct iter *it, const struct lil_ir_step *step,
                          json_t **result);
lil_status lil__loop_agent(struct iter *it, const struct lil_ir_step *step,
                           json_t **result);
/* The exit action and the completion hook (iteration -1; hook not
 * journaled as an effect). */
lil_status lil__loop_action(struct iter *it, const struct lil_ir_action *act,
                            bool journaled, json_t **result);

/* Answer every shell, http and agent effect of lp with fn instead of
 * running it (`lil verify`): fn gets the effect's kind and request --
 * shell {"cmd": STRING | {"command", "args"}}, http the rendered request
 * (effect_http.h), agent {"harness", "prompt", "tools"?} -- and returns a
 * new result (and optionally usage {"tokens", "usd"}), or an error with its
 * message in err (retried as the effect's error would be).  Journaled as
 * the effect's outcome like a real one.  NULL fn: real effects again. */
void lil__loop_set_mock(struct lil_loop *lp,
                        lil_status (*fn)(void *ud, struct lil_err *err,
                                         const char *kind, json_t *request,
                                         json_t **result, json_t **usage),
                        void *ud);

/* With a mock set, an http request is never sent, so it is not refused
 * for what only sending needs (lil__http_check: its url, header values, a
 * GET body): fn(ud, step, why) is told -- step NULL for on_exit and the
 * completion hook, why the refusal a real run would fail with -- and the
 * mock answers it (`lil verify`, whose sample inputs are no real URLs).
 * Without fn (NULL), or without a mock, such a request fails the run. */
void lil__loop_set_unsent(struct lil_loop *lp,
                          void (*fn)(void *ud, const char *step, const char *why),
                          void *ud);

/* Tell fn every effect outcome lp journals from now on, as journaled --
 * {"iteration", "seq", "kind", "step"?, "identity", "result", "usage"?},
 * secrets redacted -- and the completion hook's result in the same shape
 * (iteration -1, no seq); replayed outcomes are not told again.  An error
 * of fn fails the iteration with its message.  NULL fn: none. */
void lil__loop_set_recorder(struct lil_loop *lp,
                            lil_status (*fn)(void *ud, struct lil_err *err,
                                             json_t *outcome),
                            void *ud);

/* Reservations of agent calls (runner_budget.c).  folding: the change
 * comes from a journaled record (errors are LIL_E_CORRUPT), else it is the
 * live one made after that record was appended. */
struct lil_agent_call;
/* Do reservations apply to a call of harness (a token or usd budget, a
 * harness that costs, no mock)? */
bool lil__budget_applies(const struct lil_loop *lp, const char *harness);
/* Before a fresh call in slot: check its worst case, journal its
 * reservation (LIL_OK: it may start), or stop the iteration (the cap
 * tripped: WHY_CAP) or fail it (it can never fit). */
lil_status lil__budget_admit(struct iter *it, const char *slot, const char *step_id,
                             const struct lil_agent_call *call);
/* Before attempt `attempt` (>= 2) of the call in slot, inside its intent:
 * LIL_OK (reserved and journaled, synced), or `last` with lp->err saying
 * why no retry fits. */
lil_status lil__budget_retry(struct lil_loop *lp, const char *slot, const char *step_id,
                             const struct lil_agent_call *call, int64_t attempt,
                             lil_status last);
/* The records: a reserve.N for slot (retry: its "retry", 0 for none), an
 * intent of slot, an outcome of slot (NULL: failed; *moved when the meters
 * changed). */
lil_status lil__budget_reserved(struct lil_loop *lp, bool folding, const char *slot,
                                const struct lil_reserve *r, int64_t retry);
lil_status lil__budget_intent(struct lil_loop *lp, bool folding, const char *slot);
lil_status lil__budget_outcome(struct lil_loop *lp, bool folding, const char *slot,
                               json_t *outcome, bool *moved);
/* A reserve.N record (payload v) read back. */
lil_status lil__budget_fold_reserve(struct lil_loop *lp, const char *name, json_t *v);
/* A cap *t tripped at the start of iteration: a token or usd budget's
 * gets its detail when it counts calls without an outcome; the approval
 * given with a retry of this iteration's call is journaled (then *t is
 * what trips after it, NONE for nothing). */
lil_status lil__budget_start_cap(struct lil_loop *lp, int64_t iteration,
                                 struct lil_cap_trip *t);
/* What slot's uncertain agent call counts (its held reservation) and what
 * a retry of it needs, into out; false when it holds none. */
bool lil__budget_uncertain_detail(const struct lil_loop *lp, const char *slot,
                                  char *out, size_t cap);
/* When slot holds a reservation: add "at_reservation": true to a usage
 * that is not the provider's word ("unreported": it counts at the
 * reservation), else "overran": true to one that is more than it. */
void lil__budget_mark_usage(const struct lil_loop *lp, const char *slot, json_t *usage);
/* Before a new run is created: refuse (LIL_E_INVAL, the message naming the
 * budget's key, the budget and what one call reserves) an agent call of
 * harness, at where, that the spec's token or usd budget can never admit
 * -- its worst case with an empty prompt is more than the whole budget. */
lil_status lil__budget_preflight(struct lil_loop *lp, const char *harness,
                                 const char *where);

/* ---- secrets (runner_secrets.c) ---- */
/* The run's digest key (its start record's "digestKey", hex) into key:
 * false when it has none (a run started before digest keys). */
#define LIL_LOOP_DIGEST_KEY_LEN 32
bool lil__loop_digest_key(const struct lil_loop *lp,
                          uint8_t key[LIL_LOOP_DIGEST_KEY_LEN]);
/* A copy of inputs with each secret input's value replaced by its seal
 * under key (what the start record holds); NULL when out of memory. */
json_t *lil__inputs_sealed(const struct lil_loop *lp, json_t *inputs,
                           const uint8_t *key);
/* Replace the seals of lp->fx.inputs (as folded) by the values, from
 * lp->fx.given or the environment, each checked against its seal and
 * added to the values redacted.  LIL_E_INVAL (missing or another value:
 * the message says which input and how to give it), LIL_E_NOMEM. */
lil_status lil__inputs_unseal(struct lil_loop *lp);

/* Errors: set lp->err and it->why = WHY_FAIL. */
lil_status lil__iter_fail(struct iter *it, lil_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Stop the iteration for why (returns LIL_E_DONE). */
lil_status lil__iter_stop(struct iter *it, enum iter_why why);

#endif
