/*
 * store_pg_lease.c -- keeping the leases of the runs a process holds in the
 * PostgreSQL store (store_pg.h, "Holding a run").
 *
 * One thread per store handle and process, started by the first writable
 * open, renews every lease/3 the leases of the runs this process holds
 * through the store: UPDATE runs SET lease_until = now() + lease WHERE
 * run_id = $1 AND lease_epoch = $2, on a connection of its own (with
 * synchronous_commit off: a lost renewal costs nothing, the next one comes).
 * A renewal that finds the epoch moved on means the run was taken over; it
 * is logged, and the run's next append finds it fenced.  The thread stops
 * when the process holds no run of the store any more (so that a process
 * that forks between runs forks with one thread, as it would with the file
 * store) and when the store closes; while a worker of this process is
 * registered (store_pg_workers.c) it also keeps the worker's heartbeat,
 * and runs without a run held.  It blocks every signal (they are the
 * host's), and a child forked since renews nothing of its parent's: it
 * starts a thread of its own for the runs it opens itself.
 *
 * A thread runs while ps->renewer_gen is the number it started with;
 * stopping it is moving the number on (under held_mu) and joining it.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "os/os.h"
#include "store/pg/store_pg.h"

struct lease_copy {
    int64_t epoch;
    char run_id[LIL_RUN_ID_MAX + 1];
};

/* Under held_mu: copies of the leases this process holds (lil__free). */
static struct lease_copy *copy_held(struct pg_store *ps, size_t *n)
{
    const struct pg_held *h;
    struct lease_copy *out;
    size_t count = 0, i = 0;
    int pid = lil__os_self_pid();

    for (h = ps->held; h; h = h->next)
        count += h->pid == pid;
    *n = 0;
    if (count == 0)
        return NULL;
    out = lil__calloc(ps->base.env, count, sizeof(*out));
    if (!out)
        return NULL; /* renewed next time */
    for (h = ps->held; h && i < count; h = h->next) {
        if (h->pid != pid)
            continue;
        out[i].epoch = h->epoch;
        memcpy(out[i].run_id, h->run_id, sizeof(h->run_id));
        i++;
    }
    *n = i;
    return out;
}

/* The lease of l was renewed by a commit that began at t0: the run's
 * entry (if it is still held) knows it is ours until t0 + the lease. */
static void renewed(struct pg_store *ps, const struct lease_copy *l, int64_t t0)
{
    int pid = lil__os_self_pid();

    pthread_mutex_lock(&ps->held_mu);
    for (struct pg_held *h = ps->held; h; h = h->next)
        if (h->pid == pid && h->epoch == l->epoch && strcmp(h->run_id, l->run_id) == 0)
            __atomic_store_n(&h->valid_until_ns, t0 + ps->lease_ms * 1000000,
                             __ATOMIC_RELAXED);
    pthread_mutex_unlock(&ps->held_mu);
}

static lil_status renew_one(struct pg_store *ps, struct pg_conn *c,
                            const struct lease_copy *l)
{
    struct pg_params p = {0};
    struct lil_err err;
    PGresult *res;
    int64_t t0 = lil__mono_ns();
    lil_status rc;

    lil__pg_param_text(&p, l->run_id);
    lil__pg_param_int8(&p, l->epoch);
    lil__pg_param_int8(&p, ps->lease_ms);
    rc = lil__pg_query(ps, c, &err, "renewing a lease",
                       "UPDATE @.runs SET lease_until = now() + $3 * "
                       "interval '1 millisecond' WHERE run_id = $1 AND "
                       "lease_epoch = $2",
                       &p, false, &res);
    if (rc != LIL_OK) {
        lil__log(ps->base.env, LIL_LOG_WARN, "event=lease_renewal run=%s error=\"%s\"",
                 l->run_id, err.msg);
        return rc;
    }
    if (lil__pg_changed(ps->pq, res) == 0)
        lil__log(
            ps->base.env, LIL_LOG_WARN,
            "event=lease_lost run=%s epoch=%lld reason=\"taken over, or released\"",
            l->run_id, (long long)l->epoch);
    else
        renewed(ps, l, t0);
    ps->pq->clear(res);
    return LIL_OK;
}

/* Renew each lease of the copy, and the heartbeat of this process's
 * workers (beat); a lost connection is made anew next time. */
static void renew_all(struct pg_store *ps, struct pg_conn **c,
                      const struct lease_copy *l, size_t n, bool beat)
{
    struct lil_err err;

    if ((n || beat) && !*c && lil__pg_connect(ps, &err, c) == LIL_OK &&
        lil__pg_simple(ps, *c, &err, "SET synchronous_commit TO off", "renewing") !=
            LIL_OK) {
        lil__pg_disconnect(ps, *c);
        *c = NULL;
    }
    for (size_t i = 0; *c && i < n; i++) {
        if (renew_one(ps, *c, &l[i]) != LIL_OK && !lil__pg_conn_ok(ps, *c)) {
            lil__pg_disconnect(ps, *c);
            *c = NULL;
        }
    }
    if (beat && *c && lil__pg_worker_beat(ps, *c) != LIL_OK &&
        !lil__pg_conn_ok(ps, *c)) {
        lil__pg_disconnect(ps, *c);
        *c = NULL;
    }
}

static void deadline_after(struct timespec *t, int64_t ms)
{
    clock_gettime(CLOCK_MONOTONIC, t);
    t->tv_sec += (time_t)(ms / 1000);
    t->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

struct renewer_arg {
    struct pg_store *ps;
    unsigned gen;
};

static void *renewer_main(void *arg)
{
    struct renewer_arg a = *(struct renewer_arg *)arg;
    struct pg_store *ps = a.ps;
    struct pg_conn *c = NULL;
    struct timespec until;

    lil__free(ps->base.env, arg);
    pthread_mutex_lock(&ps->held_mu);
    while (ps->renewer_gen == a.gen) {
        struct lease_copy *l;
        size_t n = 0;
        bool beat;

        deadline_after(&until, ps->lease_ms / 3);
        while (ps->renewer_gen == a.gen &&
               pthread_cond_timedwait(&ps->held_cv, &ps->held_mu, &until) == 0)
            ;
        if (ps->renewer_gen != a.gen)
            break;
        l = copy_held(ps, &n);
        beat = lil__pg_has_workers(ps);
        pthread_mutex_unlock(&ps->held_mu);
        renew_all(ps, &c, l, n, beat);
        lil__free(ps->base.env, l);
        pthread_mutex_lock(&ps->held_mu);
    }
    pthread_mutex_unlock(&ps->held_mu);
    lil__pg_disconnect(ps, c);
    return NULL;
}

/* Under held_mu: start the renewer of this process, with every signal
 * blocked in it. */
static lil_status start_renewer(struct pg_store *ps, struct lil_err *err)
{
    struct renewer_arg *a = lil__malloc(ps->base.env, sizeof(*a));
    sigset_t all, old;
    int e;

    if (!a)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    a->ps = ps;
    a->gen = ++ps->renewer_gen;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    e = pthread_create(&ps->renewer, NULL, renewer_main, a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) {
        lil__free(ps->base.env, a);
        return lil__seterr(err, LIL_E_IO, e, "cannot start the lease renewer: %s",
                           lil__errstr(e));
    }
    ps->renewer_on = true;
    ps->renewer_pid = lil__os_self_pid();
    return LIL_OK;
}

/* Under held_mu: tell this process's renewer to stop; *t receives it to
 * join (after held_mu is let go), and true is returned, when there is one. */
static bool stop_renewer(struct pg_store *ps, pthread_t *t)
{
    bool mine = ps->renewer_on && ps->renewer_pid == lil__os_self_pid();

    ps->renewer_gen++;
    ps->renewer_on = false;
    pthread_cond_broadcast(&ps->held_cv);
    if (mine)
        *t = ps->renewer;
    return mine;
}

/* Under held_mu: whether this process holds a run of the store, or has a
 * worker to keep alive. */
static bool holds_any(const struct pg_store *ps)
{
    int pid = lil__os_self_pid();

    for (const struct pg_held *h = ps->held; h; h = h->next)
        if (h->pid == pid)
            return true;
    return lil__pg_has_workers(ps);
}

lil_status lil__pg_renewer_ensure(struct pg_store *ps, struct lil_err *err)
{
    if (ps->renewer_on && ps->renewer_pid == lil__os_self_pid())
        return LIL_OK;
    return start_renewer(ps, err);
}

void lil__pg_renewer_idle(struct pg_store *ps)
{
    pthread_t t;
    bool join = false;

    pthread_mutex_lock(&ps->held_mu);
    if (!holds_any(ps) && ps->renewer_on && ps->renewer_pid == lil__os_self_pid())
        join = stop_renewer(ps, &t);
    pthread_mutex_unlock(&ps->held_mu);
    if (join)
        pthread_join(t, NULL);
}

lil_status lil__pg_hold(struct pg_store *ps, struct lil_err *err, const char *run_id,
                        int64_t epoch, int64_t valid_until_ns, struct pg_held **out)
{
    struct pg_held *h = lil__calloc(ps->base.env, 1, sizeof(*h));
    lil_status rc = LIL_OK;

    *out = NULL;
    if (!h)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    h->epoch = epoch;
    h->valid_until_ns = valid_until_ns;
    h->pid = lil__os_self_pid();
    snprintf(h->run_id, sizeof(h->run_id), "%s", run_id);
    pthread_mutex_lock(&ps->held_mu);
    rc = lil__pg_renewer_ensure(ps, err);
    if (rc == LIL_OK) {
        h->next = ps->held;
        ps->held = h;
    }
    pthread_mutex_unlock(&ps->held_mu);
    if (rc != LIL_OK) {
        lil__free(ps->base.env, h);
        return rc;
    }
    *out = h;
    return LIL_OK;
}

void lil__pg_unhold(struct pg_store *ps, struct pg_held *h)
{
    struct pg_held **p;
    pthread_t t;
    bool join = false;

    pthread_mutex_lock(&ps->held_mu);
    for (p = &ps->held; *p && *p != h; p = &(*p)->next)
        ;
    if (*p)
        *p = h->next;
    if (!holds_any(ps) && ps->renewer_on && ps->renewer_pid == lil__os_self_pid())
        join = stop_renewer(ps, &t);
    pthread_mutex_unlock(&ps->held_mu);
    if (join)
        pthread_join(t, NULL);
    lil__free(ps->base.env, h);
}

void lil__pg_renewer_stop(struct pg_store *ps)
{
    pthread_t t;
    bool join;

    pthread_mutex_lock(&ps->held_mu);
    join = stop_renewer(ps, &t);
    pthread_mutex_unlock(&ps->held_mu);
    if (join)
        pthread_join(t, NULL);
}

/* A run handle's lease may have run out when this process was paused (or
 * cut off) for longer than the lease since the last commit that renewed it:
 * another process may have taken the run over.  An effect must not start
 * then; the run is poisoned (store_pg_append.c), as a fenced append would
 * have it. */
lil_status lil__pg_run_lease_check(struct lil_srun *r, struct lil_err *err)
{
    struct pg_run *pr = (struct pg_run *)r;
    int64_t until, now = lil__mono_ns();

    if (pr->readonly || !pr->held)
        return LIL_OK;
    until = __atomic_load_n(&pr->held->valid_until_ns, __ATOMIC_RELAXED);
    if (now < until)
        return LIL_OK;
    lil__seterr(err, LIL_E_POISONED, 0,
                "fenced: the lease of run %s ran out %lld ms ago without a renewal "
                "(this process was paused or cut off): another process may hold the "
                "run, so no effect starts here",
                pr->run_id, (long long)((now - until) / 1000000));
    lil__pg_poison(pr, err);
    return LIL_E_POISONED;
}
