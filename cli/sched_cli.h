/*
 * sched_cli.h -- what `lil tick` and `lil schedule` share: firing the due
 * slots of the store's schedules (sched_cli.c), one pass of tick
 * (cmd_tick.c), the signal that ends both, and times given as --now.
 */
#ifndef LIL_CLI_SCHED_CLI_H
#define LIL_CLI_SCHED_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "cli.h"

/* At most this many slots of one schedule fire in one tick (catch-up all:
 * the rest on the next tick). */
#define CLI_SCHED_MAX_SLOTS 100

/* Fire the due slots of every schedule of st at now_ms (docs/loops.md,
 * "Schedules"): text lines on stdout, or one entry per slot appended to
 * runs (--json) when it is not NULL.  *failed is set when a slot could not
 * fire or its run ended failed.  Stops early when cli_tick_stopping(). */
void cli_sched_fire(const struct cli_ctx *ctx, lil_store *st, int64_t now_ms,
                    json_t *runs, bool *failed);

/* The first slot of any schedule of st after now_ms, or 0 when none fires
 * (or the store has no schedules). */
int64_t cli_sched_next(lil_store *st, int64_t now_ms);

/* One pass of `lil tick` (cmd_tick.c): resume the due parked runs, then
 * fire the due slots; runs as in cli_sched_fire.  false when something
 * failed (reported on stderr). */
bool cli_tick_pass(const struct cli_ctx *ctx, lil_store *st, int64_t now_ms,
                   json_t *runs, bool accept_spec);

/* The handler of SIGINT and SIGTERM for tick and `schedule run`: the loop
 * run in progress stops at its next effect boundary, and nothing more
 * starts. */
void cli_tick_signal(int sig);
bool cli_tick_stopping(void);
/* The loop run in progress, for cli_tick_signal (NULL: none). */
void cli_tick_current(lil_loop *lp);

/* TIME of --now: epoch milliseconds, or YYYY-MM-DDTHH:MM[:SS]Z; false
 * when it is neither. */
bool cli_sched_parse_now(const char *text, int64_t *out);

/* A slot as a run id's suffix: "2026-12-02T14:05Z", with ":SS" when the
 * slot's second is not 0. */
void cli_sched_slot_text(int64_t slot_ms, char *buf, size_t cap);

#endif
