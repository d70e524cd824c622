/*
 * caps.h -- the loop's meters and caps (docs/loopspec.md, "Caps"): what
 * the runner counts, when a cap trips, what approving a cap-breakpoint
 * rebases, and how a resumed run gets back exactly the meters it had.
 * Pure logic: no I/O, no clock (the caller passes the time,
 * epoch milliseconds), no allocation except for the summary and the JSON
 * form.
 *
 * The meters (struct lil_loop_meters):
 *   - iteration: the next iteration to run (= committed iterations); the
 *     max_iterations cap counts iteration - iteration_base;
 *   - tokens and usd: sums of the agent calls' usage, and of the
 *     reservations written off (below); the budgets count what is spent,
 *     tokens + reserved_tokens - tokens_base (usd likewise);
 *   - reserved_tokens and reserved_usd: the reservations of agent calls
 *     that started (their intent is journaled) and have no outcome yet --
 *     in flight, or uncertain after a crash;
 *   - wallclock: now - wallclock_base, the base being the run's first
 *     record (downtime and parked time included) until an approval moves it;
 *   - no progress: after each snapshot, a fingerprint equal to the last one
 *     adds 1 to `repeats`, another one sets repeats to 0 and becomes the
 *     last one, none (NULL: the spec has no no_progress) changes nothing
 *     (an undefined guard is a fingerprint, state.h); only snapshots of
 *     iterations >= fp_reset_at count.  The last fingerprint is kept as its
 *     SHA-256 (no allocation; equal texts, equal digests);
 *   - pending: a cap whose action was breakpoint, awaiting approval;
 *     ended: a cap whose action (fail, exit-clean) ended the run.
 *
 * The caps, all comparisons >=, each tripping only when the
 * spec sets it (spent = total + reserved - base):
 *   max_iterations     iteration - iteration_base >= max_iterations
 *   token-budget       spent tokens               >= budget.tokens
 *   usd-budget         spent usd                  >= budget.usd
 *   wallclock-budget   now - wallclock_base       >= budget.wallclock
 *   no_progress        repeats                    >= max_repeats
 * At an iteration's start they are checked in that order, the first one
 * wins (lil__meters_check_start); after a fresh agent call only the three
 * budgets, in that order (lil__meters_check_budgets).  So with max_repeats
 * 2, three identical fingerprints stop the run at the start of iteration 3.
 * lil also offers lil__meters_check_budgets at any effect boundary: the
 * runner chooses where to call it.
 *
 * Reservations (docs/loops.md, "Budgets"): before an agent call starts,
 * the runner asks lil__meters_check_reserve whether its worst case r fits
 * what is left of each budget -- it does not when spent + r > budget
 * (strictly: a call may spend the budget exactly), and *never is set when
 * r alone is more than the whole budget (no approval can make it fit).
 * A call that fits is reserved (lil__meters_reserve: reserved += r) once
 * its intent is journaled, and settled by its outcome
 * (lil__meters_settle: reserved -= r, then its real usage added to the
 * totals); an outcome that tells no usage settles at the reservation
 * itself (the call counts in full).  So spent never passes a budget by
 * what a call may cost unseen: a call in flight or uncertain counts at its
 * reservation until an outcome says otherwise.  A call of unknown price
 * (r.usd_rest) reserves what the usd budget has left and fits while
 * something is left.  The reserved sums go back to exactly 0 when the last
 * reservation is settled (no rounding left behind).
 *
 * Reasons and actions are spelled as the reference spells them (its cap
 * records carry them): max_iterations, token-budget, usd-budget,
 * wallclock-budget, no_progress; fail, exit-clean, breakpoint (the default,
 * which normalization already fills in: loopspec/normalize.c).
 *
 * Approval rebases only the cap that tripped, from the iteration and the
 * time the runner journals in its cap_cleared record (the same time live
 * and on reload, unlike the reference): max_iterations -> a fresh
 * window from here; no_progress -> streak reset, only snapshots from here
 * count; token-budget and usd-budget -> base = current totals, the
 * reservations included (what is spent starts again from 0);
 * wallclock-budget -> base = that time.
 *
 * What the runner calls, and what it journals first (the journal is the
 * truth: a meter changes only after its record is durable):
 *   fresh run       lil__meters_init (start = the first record's time)
 *   iteration start trip = lil__meters_check_start; tripped: journal
 *                   cap{reason, action}, then lil__meters_trip
 *   agent call      lil__meters_check_reserve (tripped: as above, and the
 *                   call does not start); journal the reservation and the
 *                   intent, lil__meters_reserve; journal the outcome,
 *                   lil__meters_settle (or lil__meters_add_usage when
 *                   nothing was reserved), then lil__meters_check_budgets
 *                   (tripped: as above)
 *   snapshot        journal it, then lil__meters_note_snapshot
 *   approval        journal cap_cleared{reason, at_iteration = iteration,
 *                   time}, then lil__meters_clear (or lil__meters_approve)
 *   reload          lil__meters_init with the first record's time, then
 *                   lil__meters_fold of each such record, in journal order:
 *                   the result equals the live meters (lil__meters_equal).
 * The live calls refuse what cannot happen (a snapshot of another
 * iteration, a clearance of a cap that is not pending, negative usage, a
 * cap after the run ended) with LIL_E_INVAL and leave the meters as they
 * were; lil__meters_fold reports the same as LIL_E_CORRUPT (the journal
 * says something the runner never writes).
 *
 * Ownership and threads: a struct lil_loop_meters is a plain value (no
 * pointers), owned by its runner, copied freely; one thread at a time.
 */
#ifndef LIL_LOOP_CAPS_H
#define LIL_LOOP_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/hash.h"
#include "json/json.h"
#include "loopspec/ir/ir.h"

/* The caps, in the order they are checked at an iteration's start. */
enum lil_cap {
    LIL_CAP_NONE = 0,
    LIL_CAP_MAX_ITERATIONS,
    LIL_CAP_TOKENS,
    LIL_CAP_USD,
    LIL_CAP_WALLCLOCK,
    LIL_CAP_NO_PROGRESS
};

/* What the spec's caps allow (copied from the IR).  A value counts only
 * when its has_* flag is set (false: the spec sets no such cap). */
struct lil_cap_limits {
    int64_t max_iterations; /* >= 1 */
    int64_t max_repeats;    /* no_progress: >= 1 */
    int64_t tokens;         /* >= 1 */
    double usd;             /* > 0 */
    int64_t wallclock_ms;   /* >= 0, rounded up to whole milliseconds */
    enum lil_ir_cap_action action;
    bool has_no_progress;
    bool has_tokens;
    bool has_usd;
    bool has_wallclock;
};

/* What a loop's records may hold: counts, meters and epoch milliseconds
 * are integers in [0, LIL_LOOP_NUM_MAX] (2^53 - 1, which every JSON reader
 * holds exactly), money is in [0, LIL_LOOP_USD_MAX].  A record that holds
 * anything else is damage (LIL_E_CORRUPT), so that no sum or product of
 * two such numbers later overflows. */
#define LIL_LOOP_NUM_MAX INT64_C(9007199254740991)
#define LIL_LOOP_USD_MAX 1e15

struct lil_loop_meters {
    struct lil_cap_limits lim;
    int64_t iteration;      /* the next iteration to run */
    int64_t iteration_base; /* max_iterations counts from here */
    int64_t tokens, tokens_base;
    double usd, usd_base;
    int64_t reserved_tokens; /* calls started, without an outcome */
    double reserved_usd;
    int64_t wallclock_base_ms; /* epoch ms */
    int64_t fp_reset_at;       /* snapshots of iterations >= this count */
    int64_t repeats;           /* identical fingerprints after the first */
    bool has_fp;               /* fp holds the last defined fingerprint */
    uint8_t fp[LIL_SHA256_LEN];
    enum lil_cap pending; /* breakpoint awaiting approval, or NONE */
    enum lil_cap ended;   /* the cap that ended the run, or NONE */
    enum lil_ir_cap_action ended_action;
};

/* The most an agent call may cost, reserved before it starts. */
struct lil_reserve {
    int64_t tokens; /* >= 0 */
    double usd;     /* >= 0, finite */
    bool usd_rest;  /* no price is known: usd is what the usd budget had left */
};

/* A check's answer.  cap NONE: nothing tripped (reason ""). */
struct lil_cap_trip {
    enum lil_cap cap;
    enum lil_ir_cap_action action; /* the spec's on_cap_exceeded */
    const char *reason;            /* static: "token-budget", ... */
};

/* ---- names ------------------------------------------------------------------ */

/* "max_iterations", "token-budget", "usd-budget", "wallclock-budget",
 * "no_progress"; "" for LIL_CAP_NONE or a value out of range. */
const char *lil__cap_reason(enum lil_cap cap);

/* "fail", "exit-clean", "breakpoint"; "?" out of range. */
const char *lil__cap_action_name(enum lil_ir_cap_action a);

/* The cap / action spelled s (len bytes); false when s is none of them. */
bool lil__cap_from_reason(const char *s, size_t len, enum lil_cap *out);
bool lil__cap_action_from_name(const char *s, size_t len, enum lil_ir_cap_action *out);

/* ---- set-up ----------------------------------------------------------------- */

/* The limits of a normalized IR's caps.  LIL_E_INVAL (message in err) when
 * they are out of range (max_iterations < 1, an unparsed wallclock, ...):
 * the validator refuses such specs first. */
lil_status lil__cap_limits_from_ir(const struct lil_ir_spec *ir, struct lil_err *err,
                                   struct lil_cap_limits *out);

/* The limits as the loop's start record journals them (docs/loops.md,
 * "Records"), a new object (inside a json scope; NULL when out of memory):
 *   {"max_iterations", "on_cap_exceeded", "tokens"?, "usd"?,
 *    "wallclock_ms"?, "max_repeats"?} */
json_t *lil__cap_limits_json(const struct lil_cap_limits *lim);

/* The limits of such an object, read back exactly (the same numbers as the
 * IR gave).  A key left out sets no cap; a missing max_iterations is no
 * limit (INT64_MAX), a missing on_cap_exceeded the default, breakpoint.
 * LIL_E_CORRUPT (message in err) for a member of the wrong type or out of
 * range: the runner never writes it. */
lil_status lil__cap_limits_from_json(const json_t *caps, struct lil_err *err,
                                     struct lil_cap_limits *out);

/* Fresh meters: everything 0, wallclock base start_ms.  LIL_E_INVAL for
 * limits out of range.  On failure *m is zeroed. */
lil_status lil__meters_init_limits(struct lil_loop_meters *m, struct lil_err *err,
                                   const struct lil_cap_limits *lim, int64_t start_ms);

/* The same from the IR (lil__cap_limits_from_ir). */
lil_status lil__meters_init(struct lil_loop_meters *m, struct lil_err *err,
                            const struct lil_ir_spec *ir, int64_t start_ms);

/* ---- checks (no change to the meters) ------------------------------------- */

/* At an iteration's start: the first tripped of max_iterations, tokens,
 * usd, wallclock, no_progress. */
struct lil_cap_trip lil__meters_check_start(const struct lil_loop_meters *m,
                                            int64_t now_ms);

/* After a fresh agent call (or at any effect boundary): the first tripped
 * of tokens, usd, wallclock. */
struct lil_cap_trip lil__meters_check_budgets(const struct lil_loop_meters *m,
                                              int64_t now_ms);

/* Before an agent call whose worst case is r: the first of token-budget,
 * usd-budget that r would pass (spent + r > budget; for r->usd_rest, the
 * usd budget is spent).  *never (may be NULL) is set when r alone passes
 * the whole budget of the cap returned. */
struct lil_cap_trip lil__meters_check_reserve(const struct lil_loop_meters *m,
                                              const struct lil_reserve *r, bool *never);

/* What the usd budget has left (budget - spent, at least 0); 0 without a
 * usd budget. */
double lil__meters_usd_left(const struct lil_loop_meters *m);

/* What the budgets count: total + reserved - base. */
int64_t lil__meters_spent_tokens(const struct lil_loop_meters *m);
double lil__meters_spent_usd(const struct lil_loop_meters *m);

/* ---- changes (each after its record is journaled) ------------------------------ */

/* Add an agent call's usage (0 and 0.0 when it reported none).  tokens
 * >= 0, usd finite and >= 0, else LIL_E_INVAL; the token sum saturates at
 * INT64_MAX, a usd sum that is not finite is LIL_E_INVAL. */
lil_status lil__meters_add_usage(struct lil_loop_meters *m, struct lil_err *err,
                                 int64_t tokens, double usd);

/* An agent call started (its intent is journaled): reserved += r.
 * LIL_E_INVAL for r->tokens < 1 (a call's worst case holds at least its
 * token limit), a usd that is negative or not finite, or a sum that
 * overflows. */
lil_status lil__meters_reserve(struct lil_loop_meters *m, struct lil_err *err,
                               const struct lil_reserve *r);

/* The call reserved with r has its outcome: reserved -= r, then its usage
 * (tokens, usd) added as lil__meters_add_usage does.  LIL_E_INVAL when
 * r->tokens is more than is reserved, or for bad usage (nothing changes
 * then). */
lil_status lil__meters_settle(struct lil_loop_meters *m, struct lil_err *err,
                              const struct lil_reserve *r, int64_t tokens, double usd);

/* The snapshot of iteration `iteration` (which must be m->iteration) with
 * fingerprint fp (fp_len bytes; NULL: none, ignored): the streak rule,
 * then iteration + 1. */
lil_status lil__meters_note_snapshot(struct lil_loop_meters *m, struct lil_err *err,
                                     int64_t iteration, const void *fp, size_t fp_len);

/* Cap `cap` tripped and `action` was journaled with it: breakpoint makes it
 * pending, fail and exit-clean end the run.  LIL_E_INVAL when cap is NONE,
 * a cap is pending or the run has ended. */
lil_status lil__meters_trip(struct lil_loop_meters *m, struct lil_err *err,
                            enum lil_cap cap, enum lil_ir_cap_action action);

/* A run that a cap ended (fail) goes on: retried by an operator once the
 * cap allows progress (retried.N; the runner checks it first).  No cap has
 * ended the run any more; nothing else changes. */
void lil__meters_reopen(struct lil_loop_meters *m);

/* The pending cap `cap` was approved at iteration at_iteration (which must
 * be m->iteration), at time ts_ms: no cap pending any more, and only cap's
 * meter rebased.  LIL_E_INVAL when cap is not the pending one. */
lil_status lil__meters_clear(struct lil_loop_meters *m, struct lil_err *err,
                             enum lil_cap cap, int64_t at_iteration, int64_t ts_ms);

/* lil__meters_clear of the pending cap at m->iteration and now_ms; *cleared
 * (may be NULL) says which (to journal it).  LIL_E_INVAL when none is
 * pending. */
lil_status lil__meters_approve(struct lil_loop_meters *m, struct lil_err *err,
                               int64_t now_ms, struct lil_cap_trip *cleared);

/* ---- rebuilding from the journal ---------------------------------------------- */

enum lil_meter_ev_kind {
    LIL_METER_EV_SNAPSHOT,    /* iteration, fp, fp_len */
    LIL_METER_EV_USAGE,       /* tokens, usd (an agent effect's done record) */
    LIL_METER_EV_CAP,         /* cap, action */
    LIL_METER_EV_CAP_CLEARED, /* cap, iteration (atIteration), ts_ms */
    LIL_METER_EV_RESERVE,     /* res (an agent call's intent) */
    LIL_METER_EV_SETTLE       /* res, tokens, usd (its outcome) */
};

/* One journaled record, as the meters see it (borrowed pointers). */
struct lil_meter_event {
    enum lil_meter_ev_kind kind;
    int64_t iteration;
    const void *fp; /* NULL: no fingerprint */
    size_t fp_len;
    int64_t tokens;
    double usd;
    enum lil_cap cap;
    enum lil_ir_cap_action action;
    int64_t ts_ms;
    struct lil_reserve res;
};

/* Apply one record, as the live call did.  LIL_E_CORRUPT (message in err)
 * for a record the runner never writes at that point; the meters are then
 * unchanged. */
lil_status lil__meters_fold(struct lil_loop_meters *m, struct lil_err *err,
                            const struct lil_meter_event *ev);

/* Same meters (every field; fingerprints by digest)? */
bool lil__meters_equal(const struct lil_loop_meters *a,
                       const struct lil_loop_meters *b);

/* ---- showing them --------------------------------------------------------------- */

/* Append one line for progress and `lil inspect` to out, e.g.
 *   iteration 3/10, no progress 1/2, wallclock 12s/1h, tokens 0/1000,
 *   usd 0.00/1.00
 * Each part is what its cap compares against its limit (so after an
 * approval, tokens counts from the new base); a part appears only when the
 * spec sets its cap, except tokens and usd, which appear without a limit
 * once an agent reported some ("tokens 120"); what calls without an
 * outcome hold is added as "(2170 reserved)".  A rebased iteration window
 * reads "iteration 5 (3/10 since 2)".  Then "; paused on <reason>" while a
 * cap is pending, or "; ended by <reason> (<action>)".  Durations: whole
 * units d h m s ("1h30m"; the elapsed time cut to the second, a limit
 * exact: "1.5s"), ms below one second, "0s" for none.
 * LIL_E_NOMEM, LIL_E_TOOBIG past out's cap (out keeps what it had). */
lil_status lil__meters_summary(const struct lil_loop_meters *m, int64_t now_ms,
                               struct lil_buf *out);

/* The same as a JSON object (a new reference in *out):
 *   {"iteration", "iteration_base", "max_iterations",
 *    "no_progress": {"repeats", "max_repeats", "reset_at"}   (when set),
 *    "tokens": {"used", "base", "reserved", "budget"} (budget only when set),
 *    "usd": {"used", "base", "reserved", "budget"},
 *    "wallclock": {"elapsed_ms", "base_ms", "budget_ms"},
 *    "on_cap_exceeded", "pending": reason or null,
 *    "ended": reason or null (with "ended_action" when not null)}
 * "used" and "elapsed_ms" are what the caps compare (spent, value -
 * base); "reserved" is the part of "used" that calls without an outcome
 * hold.
 * LIL_E_NOMEM. */
lil_status lil__meters_json(const struct lil_env *env, struct lil_err *err,
                            const struct lil_loop_meters *m, int64_t now_ms,
                            json_t **out);

#endif
