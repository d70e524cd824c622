/*
 * record_name.h -- the names of a loop run's records (docs/loops.md,
 * "Records"), decoded in one place: the runner's fold (runner_load.c),
 * cassettes (replay/) and the read API (history/) all read a record's name
 * here, so that none of them holds its own copy of the rules.
 *
 *   "loop"      the start record (a step; its payload has a "loopId")
 *   "I.S"       slot S of iteration I: an effect (intent, outcome, failure,
 *               resolve), a sleep or an approval; "exit.S" for on_exit
 *               (iteration -1)
 *   "I.snap"    the snapshot that commits iteration I
 *   "<kind>.N"  the N-th control record, kind of [a-z_] ("pause", "cap",
 *               "reserve", "stop_requested", ...)
 *
 * Numbers are 1 to 19 decimal digits (a value past INT64_MAX saturates).
 * The decoder looks at the name only: which record types carry which names
 * (a slot is any step-like record, the others are steps) is the caller's
 * rule, and so is whether the run is a loop run at all (an ordinary run may
 * name a step "cap.1").  Pure functions, no allocation, any thread.
 */
#ifndef LIL_LOOP_RECORD_NAME_H
#define LIL_LOOP_RECORD_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum lil_loop_name_kind {
    LIL_LOOP_NAME_NONE = 0, /* no loop name */
    LIL_LOOP_NAME_START,    /* "loop" */
    LIL_LOOP_NAME_SLOT,     /* "I.S", "exit.S" */
    LIL_LOOP_NAME_SNAP,     /* "I.snap" */
    LIL_LOOP_NAME_CONTROL,  /* "<kind>.N" */
};

#define LIL_LOOP_CONTROL_MAX 48 /* a control kind's bytes, NUL included */

struct lil_loop_name {
    enum lil_loop_name_kind kind;
    int64_t iteration;                  /* slot, snapshot; -1 for "exit.S" */
    int64_t seq;                        /* slot: its place in the iteration */
    uint64_t n;                         /* control: its number in the run (1, 2, ...) */
    char control[LIL_LOOP_CONTROL_MAX]; /* control: "pause", "cap", ... */
};

/* Is k (n bytes) a slot name ("I.S", "exit.S")? */
bool lil__loop_name_is_slot(const char *k, size_t n);

/* Decode k (n bytes): a slot first, then the start, a snapshot, a control
 * record.  False (kind NONE) for any other name. */
bool lil__loop_name_parse(const char *k, size_t n, struct lil_loop_name *out);

/* The kind name of a control record "<kind>.N": its length, or 0 when k is
 * no control name. */
size_t lil__loop_name_control(const char *k, size_t n);

#endif
