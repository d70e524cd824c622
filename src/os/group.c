/*
 * group.c -- group commit (group.h has the design): the slots threads
 * sleep on, the choice of who leads, gathering, and the leader's flush.
 *
 * A slot's futex word says how its thread was woken: DONE (its record is
 * covered, or the run is poisoned: rc says which) or NEXT (to lead or
 * gather the next flush).  A sleeping gatherer that finds WAIT after its
 * deadline has timed out.  The waker stores the word with release order
 * and wakes after it has let go of the mutex; the slot may be gone by then
 * (its thread returned), and only its address is used.
 */
#include "os/group.h"

#include <time.h>

#include "base/clock.h"
#include "os/futex.h"

enum slot_state { SLOT_WAIT, SLOT_DONE, SLOT_NEXT };

struct lil_group_slot {
    uint32_t state;              /* enum slot_state; atomic: the futex word */
    lil_status rc;               /* for SLOT_DONE: LIL_OK, or poisoned */
    uint64_t end;                /* under mu: the end of the waiter's record */
    bool durable;                /* under mu: it waits for durable */
    struct lil_group_slot *next; /* under mu: in g->waiters */
};

/* What wait_turn tells its caller. */
enum turn { TURN_DONE, TURN_LEAD, TURN_AGAIN };

void lil__group_init(struct lil_group *g, const struct lil_group_ops *ops, void *ud,
                     pthread_mutex_t *mu, const bool *failed, int64_t gather_max_ns)
{
    *g = (struct lil_group){0};
    g->ops = ops;
    g->ud = ud;
    g->mu = mu;
    g->failed = failed;
    g->gather_max_ns = gather_max_ns;
    pthread_cond_init(&g->idle, NULL);
}

void lil__group_fini(struct lil_group *g)
{
    pthread_cond_destroy(&g->idle);
}

void lil__group_settled(struct lil_group *g, uint64_t pos)
{
    g->committed = g->durable = pos;
}

void lil__group_added(struct lil_group *g)
{
    g->pending++;
}

/* ---- slots ----------------------------------------------------------------------- */

static void slot_wake(struct lil_group_slot *s, enum slot_state state)
{
    uint32_t *word = &s->state;

    __atomic_store_n(word, (uint32_t)state, __ATOMIC_RELEASE);
    lil__futex_wake(word); /* s may be gone already: only its address is used */
}

/* Wake a list of slots linked by next (each next is read before its wake). */
static void slot_wake_all(struct lil_group_slot *s)
{
    while (s) {
        struct lil_group_slot *next = s->next;
        slot_wake(s, SLOT_DONE);
        s = next;
    }
}

/* Sleep until s is woken, or until *until passes if until is not NULL;
 * SLOT_WAIT means that the time ran out. */
static enum slot_state slot_sleep(struct lil_group_slot *s,
                                  const struct timespec *until)
{
    uint32_t state;

    while ((state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE)) == SLOT_WAIT)
        if (!lil__futex_wait(&s->state, SLOT_WAIT, until))
            return (enum slot_state)__atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
    return (enum slot_state)state;
}

static void unlink_slot(struct lil_group *g, struct lil_group_slot *s)
{
    struct lil_group_slot **p = &g->waiters;

    while (*p && *p != s)
        p = &(*p)->next;
    if (*p)
        *p = s->next;
}

static bool covered(const struct lil_group *g, uint64_t end, bool durable)
{
    return durable ? g->durable >= end : g->committed >= end;
}

/* Under mu, after a flush ended, the group was let go, or the run was
 * poisoned: unlink the slots whose records are covered (every slot when
 * poisoned), set their answers and return them.  *next receives one slot
 * still waiting, unlinked too, whose thread is to start the next flush,
 * unless a gatherer is there to do it. */
static struct lil_group_slot *take_covered(struct lil_group *g,
                                           struct lil_group_slot **next)
{
    struct lil_group_slot *done = NULL, **p = &g->waiters;
    bool failed = *g->failed;

    while (*p) {
        struct lil_group_slot *s = *p;
        if (failed || covered(g, s->end, s->durable)) {
            *p = s->next;
            s->next = done;
            s->rc = failed ? LIL_E_POISONED : LIL_OK;
            done = s;
            g->in_wait--;
            if (g->gatherer == s)
                g->gatherer = NULL;
        } else {
            p = &s->next;
        }
    }
    *next = NULL;
    if (g->waiters && !g->gatherer) {
        *next = g->waiters;
        g->waiters = g->waiters->next;
    }
    return done;
}

/* ---- who leads ------------------------------------------------------------------- */

/* Whether a flush should start now rather than wait for more records. */
static bool enough_pending(const struct lil_group *g)
{
    uint64_t want = g->last_batch > g->peers ? g->last_batch : g->peers;

    return g->gather_max_ns <= 0 || g->last_ns <= 0 || g->pending == 0 ||
           g->pending >= want;
}

/* How long a gatherer waits for the others: half of the last flush, never
 * more than gather_max_ns. */
static void gather_deadline(const struct lil_group *g, struct timespec *until)
{
    int64_t wait = g->last_ns / 2;

    if (wait > g->gather_max_ns)
        wait = g->gather_max_ns;
    clock_gettime(CLOCK_MONOTONIC, until);
    until->tv_nsec += (long)wait;
    if (until->tv_nsec >= 1000000000L) {
        until->tv_sec++;
        until->tv_nsec -= 1000000000L;
    }
}

/* Called with mu held and no flush in flight; returns with mu released.
 * Take the batch, flush it outside the lock, settle it, then wake the one
 * thread that is to start the next flush, if any, and the threads this
 * one covered. */
static lil_status lead(struct lil_group *g, struct lil_err *err)
{
    struct lil_group_flush f = {0, g->pending, g->want_durable > g->durable};
    struct lil_group_slot *done, *next;
    int64_t t0;
    lil_status rc;

    g->busy = true;
    g->gatherer = NULL;    /* its record is in this batch */
    g->peers = g->in_wait; /* counts anew for the flush starting now */
    g->last_batch = g->pending;
    g->pending = 0;
    g->ops->take(g->ud, &f);
    pthread_mutex_unlock(g->mu);

    t0 = lil__mono_ns();
    rc = g->ops->flush(g->ud, err, &f);

    pthread_mutex_lock(g->mu);
    g->last_ns = lil__mono_ns() - t0;
    g->busy = false;
    pthread_cond_broadcast(&g->idle);
    if (rc == LIL_OK && f.end > g->committed)
        g->committed = f.end;
    if (rc == LIL_OK && f.durable && f.end > g->durable)
        g->durable = f.end;
    g->ops->done(g->ud, rc, err, &f);
    g->in_wait--;
    done = take_covered(g, &next);
    pthread_mutex_unlock(g->mu);
    if (next)
        slot_wake(next, SLOT_NEXT); /* first: the flush waits for it */
    slot_wake_all(done);
    return rc;
}

/* Leave (mu held, released here): covered, or poisoned, and then every
 * waiter is told so too. */
static lil_status leave(struct lil_group *g, struct lil_err *err)
{
    struct lil_group_slot *all = NULL, *next;
    bool failed = *g->failed;

    g->in_wait--;
    if (failed)
        all = take_covered(g, &next); /* every slot; next is NULL */
    pthread_mutex_unlock(g->mu);
    slot_wake_all(all);
    return failed ? g->ops->failed_err(g->ud, err) : LIL_OK;
}

/* Wait in s for a flush that covers end; mu is held, and held again on
 * return unless the answer is TURN_DONE (s->rc tells how it went).  The
 * first thread to wait while no flush is in flight gathers (group.h).
 * TURN_AGAIN: woken to start the next flush, if it still should. */
static enum turn wait_turn(struct lil_group *g, struct lil_group_slot *s, uint64_t end,
                           bool durable)
{
    struct timespec until;
    bool gather = !g->busy && !g->gatherer;
    enum slot_state state;

    __atomic_store_n(&s->state, SLOT_WAIT, __ATOMIC_RELAXED);
    s->end = end;
    s->durable = durable;
    s->next = g->waiters;
    g->waiters = s;
    if (gather) {
        g->gatherer = s;
        gather_deadline(g, &until);
    }
    pthread_mutex_unlock(g->mu);
    state = slot_sleep(s, gather ? &until : NULL);
    if (state == SLOT_WAIT) { /* the gatherer's time ran out */
        pthread_mutex_lock(g->mu);
        if (g->gatherer == s) {
            g->gatherer = NULL;
            unlink_slot(g, s);
            return TURN_LEAD;
        }
        pthread_mutex_unlock(g->mu); /* another thread leads, and covers s */
        state = slot_sleep(s, NULL);
    }
    if (state == SLOT_DONE)
        return TURN_DONE;
    pthread_mutex_lock(g->mu);
    return TURN_AGAIN;
}

lil_status lil__group_wait(struct lil_group *g, struct lil_err *err, uint64_t end,
                           bool durable)
{
    struct lil_group_slot s;
    enum turn turn = TURN_AGAIN;

    if (durable && end > g->want_durable)
        g->want_durable = end;
    if (++g->in_wait > g->peers)
        g->peers = g->in_wait;
    for (;;) {
        if (*g->failed || covered(g, end, durable))
            return leave(g, err);
        if (!g->busy && (turn == TURN_LEAD || enough_pending(g)))
            return lead(g, err);
        turn = wait_turn(g, &s, end, durable);
        if (turn == TURN_DONE)
            return s.rc == LIL_OK ? LIL_OK : g->ops->failed_err(g->ud, err);
    }
}

/* ---- holding --------------------------------------------------------------------- */

void lil__group_wait_idle(struct lil_group *g)
{
    while (g->busy && !*g->failed)
        pthread_cond_wait(&g->idle, g->mu);
}

void lil__group_hold(struct lil_group *g)
{
    while (g->busy)
        pthread_cond_wait(&g->idle, g->mu);
    g->busy = true;
}

/* Let go: a thread still waiting leads or gathers the next flush.  Called
 * with mu held; the wake happens under it (the slot's thread takes mu
 * before it looks). */
void lil__group_unhold(struct lil_group *g)
{
    struct lil_group_slot *next = NULL;

    g->busy = false;
    pthread_cond_broadcast(&g->idle);
    if (g->waiters && !g->gatherer) {
        next = g->waiters;
        g->waiters = g->waiters->next;
    }
    if (next)
        slot_wake(next, SLOT_NEXT);
}
