/*
 * schedule.h -- schedules of cron loops (docs/loops.md, "Schedules"): the
 * store's schedule documents and marks behind lil_schedule_*, and the
 * slots a tick fires by the catch-up policy.
 *
 * A slot is a fire time of the cron expression (cron.h, UTC).  The slots
 * due at now_ms after from_ms (the schedule's last fired slot, or the time
 * it was added) are the fire times t with from_ms < t <= now_ms, and the
 * policy keeps: all -- every one, oldest first, at most cap (the rest on
 * the next tick, since the mark moves on); latest -- the newest only;
 * none -- the one of now's own minute (of now's second for a 6-field
 * expression) only, if it is one.  Pure functions but for the store's.
 */
#ifndef LIL_QUEUE_SCHEDULE_H
#define LIL_QUEUE_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "store/store.h"

enum lil_catch_up { LIL_CATCH_UP_ALL, LIL_CATCH_UP_LATEST, LIL_CATCH_UP_NONE };

/* "all", "latest" or "none"; false for anything else. */
bool lil__catch_up_parse(const char *name, enum lil_catch_up *out);

/* The slots due (see the top) into slots (cap of them), their number into
 * *n.  LIL_E_SPEC for an expression that does not parse (the reason in
 * err), LIL_E_INVAL for times out of 0..LIL_CRON_MAX_MS. */
lil_status lil__sched_due(struct lil_err *err, const char *cron,
                          enum lil_catch_up policy, int64_t from_ms, int64_t now_ms,
                          int64_t *slots, size_t cap, size_t *n);

/* The store's schedule operations, LIL_E_INVAL naming the store when it
 * keeps no schedules (in-memory).  The document must be a JSON object of
 * at most LIL_SCHED_DOC_MAX bytes. */
#define LIL_SCHED_DOC_MAX 65536u
lil_status lil__sched_put(struct lil_store *st, struct lil_err *err, const char *id,
                          const char *doc, bool replace);
lil_status lil__sched_get(struct lil_store *st, struct lil_err *err, const char *id,
                          lil_bytes *doc, int64_t *mark_ms);
lil_status lil__sched_del(struct lil_store *st, struct lil_err *err, const char *id);
lil_status lil__sched_list(struct lil_store *st, struct lil_err *err, lil_run_id_fn fn,
                           void *ud);
lil_status lil__sched_mark(struct lil_store *st, struct lil_err *err, const char *id,
                           int64_t slot_ms);

#endif
