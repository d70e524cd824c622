/*
 * loop_view.h -- what the journal of a loop run says (docs/loops.md,
 * "Records"), read through lil_run_foreach for `lil ls`, `lil inspect` and
 * `lil log`.  The command has no access to the runner: this file reads the
 * records as the runner's own fold does (src/loop/runner_load.c) and
 * derives the same status.
 *
 * Two levels:
 *  - one record: loop_view_name classifies a record by its name (the start
 *    "loop", an effect slot "I.S" or "exit.S", a snapshot "I.snap", a
 *    control record "<kind>.N"); loop_view_summary writes a line for a
 *    person, loop_view_name_json the "loop" object of `lil log --jsonl`.
 *    A name says what a record is only in a loop run, after its start
 *    record (loop_view_is_start): an ordinary run may name a step "cap.1".
 *  - the whole run: loop_view_load walks the records once and fills a
 *    struct loop_view: status and reason, committed iterations, the last
 *    snapshot, the meters, the run's agent calls (how many reported
 *    usage, were estimated, had no price), what the run waits for, and
 *    the slots of the last `tail` iterations (an agent call's tokens, usd,
 *    model, estimate).  loop_view_iter_usage sums an iteration's calls,
 *    loop_view_budget says what is left of each budget; the fmt functions
 *    write them for a person ("~" before estimated tokens), the json ones
 *    as docs/cli.md documents.
 *
 * The status, in the runner's order (lil__loop_status): a run-done record
 * (completed, or stopped by an exit-clean cap), run-failed (failed), an
 * abort recovery (the engine's state stopped), an uncertain effect, an
 * honoured stop request not cleared (stopped), a pending cap-breakpoint or
 * a pause not yet approved (paused), else waiting (with wake_at_ms when a
 * parked record is current).  While a process holds the run (a live
 * holder pid), waiting and uncertain read "running": its effect is in
 * flight, not lost.
 *
 * Payloads are the runner's; a payload that is not the JSON object it
 * should be is passed over (a damaged or foreign journal never makes these
 * calls fail): only the walk itself (lil_run_foreach) and memory can.
 *
 * Ownership: a struct loop_view owns every string and JSON value it points
 * to; loop_view_free releases them (and is harmless on a zeroed view).
 * Nothing points into the run, which may be closed after the load.  The
 * command is single-threaded; jansson uses its default allocator here.
 */
#ifndef LIL_CLI_LOOP_VIEW_H
#define LIL_CLI_LOOP_VIEW_H

#include <lil/lil.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* ---- one record ---------------------------------------------------------- */

enum loop_view_kind {
    LOOP_VIEW_NONE = 0, /* not a loop record (begin, open, run-done, ...) */
    LOOP_VIEW_START,    /* "loop": the run's start */
    LOOP_VIEW_EFFECT,   /* "I.S" / "exit.S": effect, sleep or approval slot */
    LOOP_VIEW_SNAPSHOT, /* "I.snap" */
    LOOP_VIEW_CONTROL,  /* "<kind>.N" */
};

#define LOOP_VIEW_CONTROL_MAX 24 /* "stop_requested" and the like, NUL included */
#define LOOP_VIEW_SLOT_MAX    48 /* "I.S", as the runner's names */

struct loop_view_name {
    enum loop_view_kind kind;
    int64_t iteration; /* effect, snapshot; -1 for terminate.on_exit's slots */
    int64_t seq;       /* effect: the slot within its iteration */
    uint64_t n;        /* control: its number in the run (1, 2, ...) */
    char control[LOOP_VIEW_CONTROL_MAX]; /* control: "pause", "cap", ... */
};

/* Classify rec by its name and type: an effect slot is any record type
 * (intent, step, step-failed, resolve); the others are steps.  False (and
 * kind NONE) for anything else. */
bool loop_view_name(const lil_record *rec, struct loop_view_name *out);

/* True when rec is the start record of a loop run: the step "loop" whose
 * payload is a JSON object with a "loopId" string. */
bool loop_view_is_start(const lil_record *rec);

/* {"kind": "start"|"effect"|"snapshot"|"control", "iteration"?, "seq"?,
 * "control"?, "n"?}; NULL for LOOP_VIEW_NONE or out of memory. */
json_t *loop_view_name_json(const struct loop_view_name *nm);

/* A line for a person about a record of a loop run (nm from
 * loop_view_name, or kind NONE for its run-done and run-failed records):
 * "shell bump  {\"code\":0,...}", "iteration 2 committed  state {...}",
 * "paused at ok: ...".  Terminal-safe (escaped), at most about max bytes
 * of text; the raw payload when it is not what the runner writes. */
void loop_view_summary(const lil_record *rec, const struct loop_view_name *nm,
                       size_t max, char *buf, size_t cap);

/* ---- the whole run ---------------------------------------------------------- */

/* One slot of an iteration: an effect, a sleep or an approval. */
struct loop_view_slot {
    char name[LOOP_VIEW_SLOT_MAX]; /* "3.0", "exit.1" */
    int64_t seq;
    char *kind;         /* "shell", "http", "agent", "sleep", "sleepUntil",
                           "breakpoint"; NULL when unknown */
    char *step;         /* the step's id, or NULL */
    const char *status; /* static: "done", "failed", "uncertain", "running",
                           "approved", "assumed-done", "aborted", "retry" */
    uint32_t dur_us;    /* the outcome's duration (0: none) */
    bool has_usage;     /* an agent's usage: */
    int64_t tokens;
    bool has_usd; /* false: unpriced (usd 0) */
    double usd;
    bool estimated;     /* tokens estimated from sizes (no usage reported) */
    char *model;        /* the model that answered, or NULL */
    int64_t wake_at_ms; /* a sleep's wake time, else 0 */
};

/* The usage of some agent calls: an iteration's (loop_view_iter_usage), or
 * the whole run's (struct loop_view's usage: calls counted over every
 * outcome record, tokens and usd from the meters). */
struct loop_view_usage {
    int64_t calls;     /* calls that reported (or estimated) usage */
    int64_t estimated; /* of them, with estimated tokens */
    int64_t unpriced;  /* of them, without usd */
    int64_t tokens;
    double usd; /* of the priced calls */
};

/* What is left of the budgets the run started with (its start record's
 * caps), as the runner counts them: tokens and usd from the bases an
 * approval set, wallclock from the wallclock base (to now while the run
 * can go on).  left is 0 once a budget is spent. */
struct loop_view_budget {
    bool has_tokens, has_usd, has_wallclock;
    int64_t tokens_limit, tokens_used, tokens_left;
    double usd_limit, usd_used, usd_left;
    int64_t wallclock_limit_ms, wallclock_used_ms, wallclock_left_ms;
};

struct loop_view_iter {
    int64_t iteration; /* -1: terminate.on_exit */
    struct loop_view_slot *slots;
    size_t n, cap;
};

/* The meters as of the last snapshot (the initial ones before any), with
 * the usage journaled after it added to tokens and usd. */
struct loop_view_meters {
    int64_t iteration_base;
    int64_t tokens, tokens_base;
    double usd, usd_base;
    int64_t repeats;
    int64_t wallclock_base_ms; /* epoch ms */
};

struct loop_view {
    bool is_loop;       /* the run has a start record; nothing else is set
                           when false */
    json_t *start;      /* the start record's payload */
    const char *status; /* static: "completed", "failed", "uncertain",
                           "paused", "waiting", "stopped", "running" */
    char *reason;       /* why it stopped, paused, failed, is uncertain */
    int64_t iterations; /* committed (the last snapshot's iteration + 1) */
    json_t *state;      /* the committed state (last snapshot, else the
                           start's baseState); may be NULL */
    struct loop_view_meters meters;
    struct loop_view_usage usage; /* the run's agent calls */
    int64_t wake_at_ms;           /* parked: when it wakes; else 0 */
    json_t *stop;                 /* the honoured stop request not cleared, or NULL */
    json_t *pause;                /* the pause record waiting for approval, or NULL */
    json_t *cap;                  /* the cap record waiting for approval, or NULL */
    char *uncertain_slot;         /* the effect whose outcome is unknown ("1.0"), */
    char *uncertain_note;         /* its intent's note "kind identity" (or NULL) */
    bool ended;                   /* completed, failed or stopped for good */
    int64_t last_ms;              /* the last record's time */
    /* the slots of the last `tail` iterations that have records, oldest
     * first, and how many earlier ones were left out */
    struct loop_view_iter *iters;
    size_t niters, capiters;
    int64_t iters_omitted;
};

/* Walk run (opened read-only; info from lil_run_get_info) and fill *v,
 * keeping the slots of the last tail iterations (0: none, as `ls` needs).
 * LIL_OK also for a run that is no loop run (v->is_loop false); a walk
 * error (lil_run_errmsg has the message) or LIL_E_NOMEM otherwise, *v
 * then released.  *v must be zeroed or released before. */
lil_status loop_view_load(lil_run *run, const lil_run_info *info, size_t tail,
                          struct loop_view *v);

/* Release what *v holds and zero it. */
void loop_view_free(struct loop_view *v);

/* The view as the "loop" object of `lil inspect --json` (docs/cli.md):
 * elapsed counts to now_ms while the run can go on, to its last record
 * once it ended.  NULL when out of memory. */
json_t *loop_view_json(const struct loop_view *v, int64_t now_ms);

/* Elapsed wallclock (the meter): now_ms or the last record's time, as
 * above, minus the wallclock base. */
int64_t loop_view_elapsed_ms(const struct loop_view *v, int64_t now_ms);

/* The usage of iteration it's slots (its agent calls). */
void loop_view_iter_usage(const struct loop_view_iter *it, struct loop_view_usage *out);

/* What is left of each budget, now_ms as loop_view_elapsed_ms takes it. */
void loop_view_budget(const struct loop_view *v, int64_t now_ms,
                      struct loop_view_budget *out);

/* For a person: one call's usage, "100 tokens, $0.2500 (gpt-4o-mini)",
 * "~250 tokens (estimated), unpriced"; of several calls, "~150 tokens
 * (estimated in part), $0.2500 + unpriced (1 of 2 calls)"; compact (`lil
 * ls`), "~150 tok $0.2500+?" ("-" for no call).  Terminal-safe. */
void loop_view_fmt_call(const struct loop_view_slot *s, char *buf, size_t cap);
void loop_view_fmt_usage(const struct loop_view_usage *u, char *buf, size_t cap);
void loop_view_fmt_usage_compact(const struct loop_view_usage *u, char *buf,
                                 size_t cap);

/* {"calls", "tokens", "usd", "estimated", "estimated_calls",
 * "unpriced_calls"}; {"tokens", "usd", "wallclock_ms"}, each null or
 * {"limit", "used", "left"} (docs/cli.md).  NULL when out of memory. */
json_t *loop_view_usage_json(const struct loop_view_usage *u);
json_t *loop_view_budget_json(const struct loop_view_budget *b);

/* The uncertain effect's kind and identity, split from its note (kind
 * "?" and identity "" when it has none).  Pointers into v. */
void loop_view_uncertain(const struct loop_view *v, char *kind, size_t kind_cap,
                         const char **identity);

/* v as compact JSON for a person: at most max bytes of it ("..." marks a
 * cut), made safe for a terminal (cli_fmt_printable); "-" for NULL. */
void loop_view_fmt_json(const json_t *v, size_t max, char *buf, size_t cap);

/* The string member key of object o, or dflt (o may be NULL). */
const char *loop_view_str(const json_t *o, const char *key, const char *dflt);

/* Spec path of the start record, or "SPEC" (for the hints). */
const char *loop_view_spec_path(const struct loop_view *v);

#endif
