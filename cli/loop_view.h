/*
 * loop_view.h -- what the journal of a loop run says (docs/loops.md,
 * "Records"), read through lil_run_foreach and lil_loop_facts for `lil
 * ls`, `lil inspect` and `lil log`.
 *
 * Two levels:
 *  - one record: loop_view_name classifies a record by its name (the start
 *    "loop", an effect slot "I.S" or "exit.S", a snapshot "I.snap", a
 *    control record "<kind>.N"); loop_view_summary writes a line for a
 *    person, loop_view_name_json the "loop" object of `lil log --jsonl`.
 *    A name says what a record is only in a loop run, after its start
 *    record (loop_view_is_start): an ordinary run may name a step "cap.1".
 *  - the whole run: loop_view_load fills a struct loop_view.  Its facts --
 *    status and reason, committed iterations and state, the meters, what
 *    is spent, reserved and left of each budget, what the run waits for --
 *    are lil_loop_facts', the runner's own fold of the journal: this file
 *    never adds up a meter or decides a status itself, so `ls`, `inspect`
 *    and `lil run` cannot disagree.  What it reads itself is for display
 *    only: the run's agent calls (how many reported usage, were estimated,
 *    had no price) and the slots of the last `tail` iterations (an agent
 *    call's tokens, usd, model, estimate, "overran" mark, and the
 *    reservations of its attempts from the reserve.N records).
 *    loop_view_iter_usage sums an iteration's calls; the fmt functions
 *    write them for a person ("~" before estimated tokens), the json ones
 *    as docs/cli.md documents.
 *
 * A loop run whose journal holds records the runner never writes (its fold
 * fails: lil_loop_facts says LIL_E_CORRUPT) is shown all the same, with
 * the status "damaged" and the runner's message as the reason, no meters
 * and no budget: the runner could not go on from it either.  Payloads of
 * the records this file reads itself that are not what the runner writes
 * are passed over: only the walks (I/O) and memory make loop_view_load
 * fail.
 *
 * Ownership: a struct loop_view owns every string and JSON value it points
 * to (the fields that point into v->facts live as long as it);
 * loop_view_free releases them (and is harmless on a zeroed view).
 * Nothing points into the run, which may be closed after the load.  The
 * command is single-threaded.
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

/* The name of the record an event (lil_run_events) comes from, as the
 * library decoded it (the event's "loop" object): false (and kind NONE)
 * for a record that is no loop record. */
bool loop_view_event_name(const json_t *ev, struct loop_view_name *out);

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
    bool estimated;          /* tokens estimated from sizes (no usage reported) */
    bool overran;            /* it reported more than it reserved ("overran") */
    bool at_reservation;     /* its usage was not believed: counted at its
                                reservation ("at_reservation") */
    char *unreported;        /* why its usage was not believed, or NULL */
    char *model;             /* the model that answered, or NULL */
    char *note;              /* what a person must know of its outcome
                                ("command not found: NAME"), or NULL */
    int64_t wake_at_ms;      /* a sleep's wake time, else 0 */
    int64_t attempts;        /* an agent call's reserve.N records (0: none) */
    int64_t reserved_tokens; /* what they reserved, summed */
    double reserved_usd;
    int64_t last_reserved_tokens; /* the last attempt's reservation */
    double last_reserved_usd;
    bool reserved_rest; /* one reserved what the usd budget had left */
};

/* The usage of some agent calls: an iteration's (loop_view_iter_usage), or
 * the whole run's (struct loop_view's usage: calls counted over every
 * outcome record, tokens and usd the meters' totals -- which count the
 * attempts that told no usage, failed, aborted or assumed done, at their
 * reservations: the reported_* sums leave those out). */
struct loop_view_usage {
    int64_t calls;          /* calls that reported (or estimated) usage */
    int64_t estimated;      /* of them, with estimated tokens */
    int64_t at_reservation; /* calls whose usage was missing or invalid,
                               counted at their reservations (not in
                               reported_*) */
    int64_t unpriced;       /* of them, without usd */
    int64_t tokens;
    double usd;              /* of the priced calls */
    int64_t reported_tokens; /* what the calls reported */
    double reported_usd;
};

/* What is left of the budgets the run started with (its start record's
 * caps), as the runner counts them (lil_loop_facts' "budget"): used is
 * spent (from the base an approval set, reservations included), reserved
 * the part of it that calls without an outcome hold, left 0 once spent. */
struct loop_view_budget {
    bool has_tokens, has_usd, has_wallclock;
    int64_t tokens_limit, tokens_used, tokens_reserved, tokens_left;
    double usd_limit, usd_used, usd_reserved, usd_left;
    int64_t wallclock_limit_ms, wallclock_used_ms, wallclock_left_ms;
};

struct loop_view_iter {
    int64_t iteration; /* -1: terminate.on_exit */
    struct loop_view_slot *slots;
    size_t n, cap;
};

/* The runner's meters (lil_loop_facts' "meters" and "totals"). */
struct loop_view_meters {
    int64_t iteration_base;
    int64_t tokens, tokens_base, tokens_reserved; /* tokens: the total counted */
    double usd, usd_base, usd_reserved;
    int64_t repeats;
    int64_t wallclock_base_ms; /* epoch ms */
    int64_t elapsed_ms;        /* to now, or to the last record once ended */
};

struct loop_view {
    bool is_loop;       /* the run has a start record; nothing else is set
                           when false */
    json_t *start;      /* the start record's payload */
    json_t *facts;      /* lil_loop_facts' document; NULL when damaged */
    bool damaged;       /* the runner's fold refused the journal */
    const char *status; /* "completed", "failed", "uncertain", "paused",
                           "waiting", "stopped", "running", "damaged" */
    const char *reason; /* why it stopped, paused, failed, is uncertain */
    int64_t iterations; /* committed (the runner's next iteration) */
    json_t *state;      /* the committed state; may be NULL */
    struct loop_view_meters meters;
    struct loop_view_budget budget;
    struct loop_view_usage usage; /* the run's agent calls */
    int64_t wake_at_ms;           /* parked: when it wakes; else 0 */
    json_t *stop;                 /* the honoured stop request not cleared, or NULL */
    json_t *paused;    /* what an approval would release (facts' "paused"), or
                          NULL */
    json_t *uncertain; /* the effect without an outcome (facts' "uncertain":
                          slot, iteration, seq, kind, identity), or NULL */
    bool ended;        /* completed, failed or stopped for good */
    char *damage;      /* damaged: the runner's message */
    /* the slots of the last `tail` iterations that have records, oldest
     * first, and how many earlier ones were left out */
    struct loop_view_iter *iters;
    size_t niters, capiters;
    int64_t iters_omitted;
};

/* Fill *v from run_id's facts (lil_run_facts on st: the runner's facts,
 * the start's fields, the usage of its calls), then, with tail > 0, the
 * slots of its last tail iterations from their events alone
 * (lil_run_events_with: last_iterations, and only the types of slots,
 * snapshots and reservations; up to the last record the handle saw: info
 * from lil_run_get_info; run opened read-only).  A damaged loop run (its
 * facts say "damaged") is read from all its events instead, and its facts
 * asked of lil_loop_facts.  LIL_OK also for a run that is no loop run
 * (v->is_loop false) and for a damaged one; a walk error (lil_errmsg has
 * the message) or LIL_E_NOMEM otherwise, *v then released.  *v must be
 * zeroed or released before. */
lil_status loop_view_load(lil_store *st, lil_run *run, const lil_run_info *info,
                          size_t tail, struct loop_view *v);

/* Release what *v holds and zero it. */
void loop_view_free(struct loop_view *v);

/* The view as the "loop" object of `lil inspect --json` (docs/cli.md).
 * NULL when out of memory. */
json_t *loop_view_json(const struct loop_view *v);

/* The usage of iteration it's slots (its agent calls). */
void loop_view_iter_usage(const struct loop_view_iter *it, struct loop_view_usage *out);

/* What the run's meters count beyond what its calls reported: the
 * attempts counted at their reservations (0 for an iteration's usage). */
int64_t loop_view_reserved_tokens(const struct loop_view_usage *u);
double loop_view_reserved_usd(const struct loop_view_usage *u);

/* For a person: one call's usage, "100 tokens, $0.2500 (gpt-4o-mini)",
 * "~250 tokens (estimated), unpriced", then "; 1 earlier attempt counted
 * at its reservation: 272 tokens" and "; OVERRAN its reservation of 272
 * tokens" where they apply; a call without usage, what its reservations
 * count ("reserved 272 tokens" while uncertain or in flight, "counted at
 * its reservation: 272 tokens" once over); of several calls, "~150 tokens
 * (estimated in part), $0.2500 + unpriced (1 of 2 calls)", and "(272
 * tokens, $0.0001 of it counted at reservations)" when the meters count
 * more than the calls reported; compact (`lil
 * ls`), "~150 tok $0.2500+?" ("-" for no call).  Terminal-safe. */
void loop_view_fmt_call(const struct loop_view_slot *s, char *buf, size_t cap);
void loop_view_fmt_usage(const struct loop_view_usage *u, char *buf, size_t cap);
void loop_view_fmt_usage_compact(const struct loop_view_usage *u, char *buf,
                                 size_t cap);

/* {"calls", "tokens", "usd", "estimated", "estimated_calls",
 * "unpriced_calls"}; {"tokens", "usd"} of what is counted at reservations;
 * {"tokens", "usd", "wallclock_ms"}, each null or
 * {"limit", "used", "reserved" (not wallclock), "left"} (docs/cli.md).
 * NULL when out of memory. */
json_t *loop_view_usage_json(const struct loop_view_usage *u);
json_t *loop_view_reserved_json(const struct loop_view_usage *u);
json_t *loop_view_budget_json(const struct loop_view_budget *b);

/* The uncertain effect's kind and identity (kind "?" and identity ""
 * when there is none).  Pointers into v. */
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
