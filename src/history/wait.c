/*
 * wait.c -- waiting for a run to grow (lil_run_wait), and one look at
 * whether it did (lil_run_poll).
 *
 * The run's last seq is read once; then, until it holds a record after
 * after_seq or the time is up, the store is asked cheaply whether the run
 * may have changed, and only then is its last seq read again:
 *
 *   - a store with run_changed (the file store: the journal's modification
 *     time, one open and fstat, no read): a time that moved, or one so
 *     recent that the kernel's coarse clock could hide a later append in
 *     the same tick, means "read again";
 *   - a store without it (PostgreSQL): the last seq is read again every
 *     POLL_SLOW_MS.
 *
 * An append is therefore seen within about POLL_MS (file store) of its
 * commit.  Nothing is written and no hold is taken.  The run's last seq
 * comes from the store's run_last_seq when it has one (PostgreSQL: one
 * indexed query), else from an open of the run.
 *
 * lil__history_poll is one such look, without waiting (lil_run_poll): the
 * caller keeps the modification time and the last seq between looks.
 */
#include <errno.h>
#include <time.h>

#include "base/clock.h"
#include "engine/run.h"
#include "history/history.h"

#define POLL_MS      20
#define POLL_SLOW_MS 200
#define RECENT_NS    100000000 /* 100 ms: the coarse clock's slack, and more */
#define NS_PER_MS    1000000

static lil_status last_seq_of(struct lil_store *st, struct lil_err *err,
                              const char *run_id, uint64_t *out)
{
    struct lil_run *run = NULL;
    lil_run_info info = {.struct_size = sizeof(info)};
    lil_status rc;

    if (st->ops->run_last_seq)
        return st->ops->run_last_seq(st, err, run_id, out);
    rc = lil__history_open(st, err, run_id, &run);

    if (rc == LIL_OK)
        rc = lil__run_info(run, err, &info);
    if (rc == LIL_OK)
        *out = info.records;
    lil__history_close(run);
    return rc;
}

static void nap(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * NS_PER_MS};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* May run_id have changed since *mtime?  *mtime is brought up to date. */
static bool maybe_changed(struct lil_store *st, const char *run_id, int64_t *mtime)
{
    struct lil_err e;
    int64_t ns = 0;

    if (!st->ops->run_changed)
        return true;
    if (st->ops->run_changed(st, &e, run_id, &ns) != LIL_OK)
        return true; /* gone, or unreadable: let the open say */
    if (ns != *mtime || lil__wall_ns() - ns < RECENT_NS) {
        *mtime = ns;
        return true;
    }
    return false;
}

/* One look: *last_seq brought up to date when run_id may have changed
 * since *mtime (left as it is otherwise). */
static lil_status look(struct lil_store *st, struct lil_err *err, const char *run_id,
                       int64_t *mtime, uint64_t *last_seq)
{
    if (!maybe_changed(st, run_id, mtime))
        return LIL_OK;
    return last_seq_of(st, err, run_id, last_seq);
}

lil_status lil__history_poll(struct lil_store *st, struct lil_err *err,
                             const char *run_id, uint64_t *last_seq, int64_t *stamp,
                             bool *changed)
{
    uint64_t seq = *last_seq;
    lil_status rc = look(st, err, run_id, stamp, &seq);

    *changed = rc == LIL_OK && seq != *last_seq;
    if (*changed)
        *last_seq = seq;
    return rc;
}

lil_status lil__history_wait(struct lil_store *st, struct lil_err *err,
                             const char *run_id, uint64_t after_seq, int64_t timeout_ms,
                             uint64_t *last_seq)
{
    int64_t deadline = lil__mono_ns() + timeout_ms * NS_PER_MS, mtime = 0, left;
    int64_t poll = st->ops->run_changed ? POLL_MS : POLL_SLOW_MS;
    lil_status rc;

    *last_seq = 0;
    (void)maybe_changed(st, run_id, &mtime);
    rc = last_seq_of(st, err, run_id, last_seq);
    while (rc == LIL_OK && *last_seq <= after_seq) {
        left = (deadline - lil__mono_ns()) / NS_PER_MS;
        if (left <= 0)
            break;
        nap(left < poll ? left : poll);
        rc = look(st, err, run_id, &mtime, last_seq);
    }
    return rc;
}
