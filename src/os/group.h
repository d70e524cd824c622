/*
 * group.h -- group commit, written once: a leader/follower barrier that
 * lets the threads appending to one run share a flush (the file store's
 * write + fdatasync, journal/journal.c; the PostgreSQL store's INSERT +
 * COMMIT, store/pg/store_pg_append.c).  The backend says what a flush is
 * (struct lil_group_ops); the barrier says who does it and when.
 *
 * Positions.  A backend appends records at growing positions (offsets)
 * and tells the group of each (lil__group_added).  A flush takes every
 * record appended so far, up to a position end, and makes them committed
 * (the process may crash: they are kept) or also durable (the machine may
 * crash).  A thread waits (lil__group_wait) until committed, or durable,
 * reaches the end of its record.
 *
 * Who flushes.  One flush at a time.  When none is in flight, a waiting
 * thread leads: it takes the batch under the backend's mutex (ops->take),
 * flushes it without the mutex (ops->flush), and settles it under the
 * mutex again (ops->done).  Threads that came while it flushed find their
 * records in the next batch.  A thread whose record is not covered and
 * that does not lead sleeps on a slot of its own (a futex word on its
 * stack, os/futex.h); the leader wakes exactly the threads its flush
 * covered, after letting go of the mutex, so woken threads return without
 * queueing on the mutex one after another -- and wakes one thread still
 * waiting to lead or gather the next flush.
 *
 * Gathering.  Threads released by a flush run their next step and append
 * a moment after a waiting thread could lead the next one; leading at once
 * would cut them into groups that flush in turn.  So when gathering is on
 * (gather_max_ns > 0),
 * a thread leads at once only when as many records are pending as threads
 * took part in the last flush or as it carried, whichever is more (the
 * thread whose record completes the group: it is running already); the
 * first thread to wait while nothing is in flight gathers instead: it
 * sleeps until that many have come (another thread then leads and covers
 * it) or until half of the last flush's time has passed (at most
 * gather_max_ns), and then leads itself.  One thread alone never waits,
 * nor does a handle's first flush, nor a flush with nothing pending.
 *
 * Holding.  A backend whose flush uses a resource that other calls use too
 * (the PostgreSQL run's connection) holds the group for them
 * (lil__group_hold): no flush starts until lil__group_unhold.
 *
 * Failure.  After a failed flush the backend poisons its run (ops->done);
 * *failed, the backend's flag, then makes every waiter return, with the
 * backend's message (ops->failed_err).
 *
 * Thread rules: every call but lil__group_init and lil__group_fini is made
 * with the backend's mutex held; lil__group_wait returns with it released.
 */
#ifndef LIL_OS_GROUP_H
#define LIL_OS_GROUP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"

/* One flush, as the group and the backend share it. */
struct lil_group_flush {
    uint64_t end;   /* take: the position past the last record taken */
    uint64_t count; /* records taken (0: a flush that only makes durable) */
    bool durable;   /* a waiter needs [0, end) durable (take may set it) */
};

struct lil_group_ops {
    /* Under the mutex: take every pending record for this flush; set
     * f->end (and f->durable when every flush makes durable). */
    void (*take)(void *ud, struct lil_group_flush *f);
    /* Without the mutex: the flush itself. */
    lil_status (*flush)(void *ud, struct lil_err *err, const struct lil_group_flush *f);
    /* Under the mutex, after the flush: settle it (on failure, poison). */
    void (*done)(void *ud, lil_status rc, struct lil_err *err,
                 const struct lil_group_flush *f);
    /* Fill err for a waiter of a poisoned run; return its status. */
    lil_status (*failed_err)(void *ud, struct lil_err *err);
};

struct lil_group_slot;

struct lil_group {
    const struct lil_group_ops *ops;
    void *ud;
    const bool *failed;    /* the backend's poisoned flag (under the mutex) */
    pthread_mutex_t *mu;   /* the backend's mutex */
    pthread_cond_t idle;   /* signalled when busy clears */
    int64_t gather_max_ns; /* a gatherer waits no longer (0: no gathering) */

    uint64_t committed;    /* records below this are committed */
    uint64_t durable;      /* and below this durable too */
    uint64_t want_durable; /* the furthest position a thread waits to be durable */
    bool busy;             /* a flush is in flight, or the group is held */
    uint64_t pending;      /* records added since the last take */
    uint64_t in_wait;      /* threads inside lil__group_wait now */
    uint64_t peers;        /* most threads in it at once since the last flush began */
    uint64_t last_batch;   /* records the last flush carried */
    int64_t last_ns;       /* how long the last flush took (0: none yet) */
    struct lil_group_slot *waiters;  /* threads waiting (see group.c) */
    struct lil_group_slot *gatherer; /* the one of them that starts the next */
};

/* Set g up for a backend: its ops and ud, its mutex, its poisoned flag,
 * and how long a gatherer waits at most (0: nobody gathers). */
void lil__group_init(struct lil_group *g, const struct lil_group_ops *ops, void *ud,
                     pthread_mutex_t *mu, const bool *failed, int64_t gather_max_ns);
void lil__group_fini(struct lil_group *g);
/* Under the mutex: positions [0, pos) are committed and durable (an open
 * settled them). */
void lil__group_settled(struct lil_group *g, uint64_t pos);

/* Under the mutex: one record appended (pending for the next flush). */
void lil__group_added(struct lil_group *g);

/* Entered with the mutex held, returns with it released: once [0, end)
 * is committed (and durable when durable) -- leading a flush, or after
 * waiting for one.  The status of the flush this thread led, or of the
 * backend's failed_err when the run is poisoned; LIL_OK otherwise. */
lil_status lil__group_wait(struct lil_group *g, struct lil_err *err, uint64_t end,
                           bool durable);

/* Under the mutex: wait until no flush is in flight. */
void lil__group_wait_idle(struct lil_group *g);
/* Under the mutex: wait until no flush is in flight, then keep the next
 * from starting until lil__group_unhold. */
void lil__group_hold(struct lil_group *g);
void lil__group_unhold(struct lil_group *g);

#endif
