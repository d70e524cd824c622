/*
 * test_crashpoints.c -- crash tests of kind (b) (docs/testing.md): every crash
 * point, enumerated.  For each sync mode, each kind of call that changes
 * the disk (pwrite, fdatasync, fsync, ftruncate, fallocate, rename, link,
 * unlink, open), each way of dying there (before the call, in the middle of
 * a pwrite, right after a sync; with --slow right after every kind), and
 * every k from 1 until the workload finishes without reaching its k-th
 * call of that kind: a child runs the workload with a table that _exits at
 * that point.  Then a second child resumes and is itself stopped at a
 * point of the recovery path (the torn tail's ftruncate, the settling
 * fdatasync, the first appends), and a last life finishes the run.
 *
 * After each death: the journal opens (LIL_E_CORRUPT is a failure: a
 * process death loses nothing that was written), every acknowledged step
 * is there with its exact bytes, and no step function ran for a step the
 * journal held when its attempt began.  At the end the run is complete and
 * a replay runs nothing.
 *
 * `test_crashpoints --slow` (label slow): 64 steps, every "after" point,
 * and two crashes in each recovery.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"
#include "t.h"
#include "workload.h"

static int nsteps = 16;
static int slow;

static const lil_sync modes[3] = {LIL_SYNC_FULL, LIL_SYNC_NORMAL, LIL_SYNC_OFF};
static const char *const mode_names[3] = {"full", "normal", "off"};

struct point {
    enum t_kind kind;
    enum t_action act;
    int slow_only; /* the same disk state as another point: --slow only */
};

/* Dying right after a call that is not a sync leaves the disk as dying
 * right before the next call does (a point of its own), so those "after"
 * points run only in the long campaign. */
static const struct point points[] = {
    {T_K_PWRITE, T_ACT_CRASH, 0},          {T_K_PWRITE, T_ACT_CRASH_TORN, 0},
    {T_K_PWRITE, T_ACT_CRASH_AFTER, 1},    {T_K_FDATASYNC, T_ACT_CRASH, 0},
    {T_K_FDATASYNC, T_ACT_CRASH_AFTER, 0}, {T_K_FSYNC, T_ACT_CRASH, 0},
    {T_K_FSYNC, T_ACT_CRASH_AFTER, 0},     {T_K_FTRUNCATE, T_ACT_CRASH, 0},
    {T_K_FTRUNCATE, T_ACT_CRASH_AFTER, 1}, {T_K_FALLOCATE, T_ACT_CRASH, 0},
    {T_K_FALLOCATE, T_ACT_CRASH_AFTER, 1}, {T_K_RENAME, T_ACT_CRASH, 0},
    {T_K_RENAME, T_ACT_CRASH_AFTER, 1},    {T_K_LINK, T_ACT_CRASH, 0},
    {T_K_LINK, T_ACT_CRASH_AFTER, 1},      {T_K_UNLINK, T_ACT_CRASH, 0},
    {T_K_UNLINK, T_ACT_CRASH_AFTER, 1},    {T_K_OPEN, T_ACT_CRASH, 0},
    {T_K_OPEN, T_ACT_CRASH_AFTER, 1},
};

/* The recovery's crash points: the first calls a resuming process makes. */
static const enum t_kind recovery_kinds[3] = {T_K_FTRUNCATE, T_K_FDATASYNC, T_K_PWRITE};

struct stats {
    long points, recovery_crashes, torn, per_kind[T_K_COUNT];
};

/* A phase that died: the journal must open, the model must hold. */
static int after_death(const struct t_plan *p, struct t_model *m, const char *store,
                       struct stats *st)
{
    struct t_seen s;
    int errors = 0;

    t_inspect(p, store, "run", NULL, &s);
    if (s.open_rc != LIL_OK && !(s.open_rc == LIL_E_NOTFOUND && !m->opened)) {
        fprintf(stderr,
                "  VIOLATION [%s]: journal does not open after a crash: %s %s\n",
                m->ctx, lil_status_name(s.open_rc), s.msg);
        errors++;
    }
    if (s.open_rc == LIL_OK &&
        (s.check_rc != LIL_OK || !(s.rep.intact || s.rep.torn_tail))) {
        fprintf(stderr, "  VIOLATION [%s]: check: %s: %s\n", m->ctx,
                lil_status_name(s.check_rc), s.rep.message);
        errors++;
    }
    st->torn += s.rep.torn_tail;
    t_model_end(m, T_END_PROCESS, &s);
    t_model_begin(m, &s);
    return errors;
}

static int phase(struct t_wl *w, const struct t_fault *f, struct t_evlog *log,
                 struct t_model *m, struct t_child_res *res)
{
    struct t_child c = {f, NULL, -1};

    t_evlog_clear(log);
    if (t_child_run(w, &c, log, res) != 0)
        return -1;
    t_model_feed(m, log);
    if (res->crashed)
        return 1;
    if (!res->exited || res->code != 0) {
        fprintf(stderr, "  [%s] attempt %d: workload failed: exit %d signal %d\n",
                m->ctx, w->attempt, res->code, res->sig);
        return -1;
    }
    return 0;
}

/* Crash at point (pt, k); resume with a crash in recovery; finish.
 * Returns 1 if the point was reached, 0 if the workload ended before it,
 * -1 on a failure. */
static int one_point(const struct t_plan *p, int mi, const struct point *pt,
                     unsigned long k, struct stats *st)
{
    const char *store = t_path("store");
    struct t_fault f = {pt->kind, k, pt->act, 0, 0, k * 2654435761u + 1};
    struct t_evlog log = {0};
    struct t_model m;
    struct t_child_res res;
    struct t_wl w;
    char ctx[160];
    int reached, rc, errors = 0;

    snprintf(ctx, sizeof(ctx), "crashpoint sync=%s %s #%lu %s", mode_names[mi],
             t_kind_name(pt->kind), k, t_action_name(pt->act));
    t_rmtree(store);
    t_model_init(&m, p, modes[mi], ctx);
    t_model_begin(&m, NULL);
    t_wl_init(&w, p, store, "run", modes[mi], NULL);
    reached = phase(&w, &f, &log, &m, &res);
    if (reached < 0) {
        errors++;
        goto out;
    }
    if (reached) {
        st->points++;
        st->per_kind[pt->kind]++;
        errors += after_death(p, &m, store, st);
        /* A crash inside the recovery too: after every second point (after
         * every point, twice, with --slow). */
        for (int r = 0; r < (slow ? 2 : (int)(k & 1)); r++) {
            struct t_fault f2 = {recovery_kinds[(k + (unsigned)r) % 3],
                                 1 + (k * 7 + (unsigned)r) % 4,
                                 T_ACT_CRASH,
                                 0,
                                 0,
                                 k};
            w.attempt++;
            rc = phase(&w, &f2, &log, &m, &res);
            if (rc < 0) {
                errors++;
                goto out;
            }
            if (rc == 1) {
                st->recovery_crashes++;
                errors += after_death(p, &m, store, st);
            } else {
                struct t_seen s;
                t_inspect(p, store, "run", NULL, &s);
                t_model_end(&m, T_END_CLEAN, &s);
                t_model_begin(&m, &s);
            }
        }
        /* The last life runs here: it is not killed, and a fork costs. */
        w.attempt++;
        t_evlog_clear(&log);
        w.log = &log;
        if (t_wl_run(&w) != 0 || !w.completed) {
            fprintf(stderr, "  [%s] the last attempt failed: %s\n", ctx,
                    lil_status_name(w.first_err));
            errors++;
        }
        t_model_feed(&m, &log);
    }
    errors += t_verify_final(p, store, "run", modes[mi], ctx);
out:
    t_evlog_free(&log);
    errors += m.errors;
    return errors ? -1 : reached;
}

static void enumerate(int mi, struct stats *st)
{
    struct t_plan plan;

    t_plan_init(&plan, nsteps, 70000);
    for (size_t pi = 0; pi < sizeof(points) / sizeof(points[0]); pi++) {
        unsigned long k;
        if (points[pi].slow_only && !slow)
            continue;
        for (k = 1; k < 100000; k++) {
            int r = one_point(&plan, mi, &points[pi], k, st);
            T_REQUIRE(r >= 0);
            if (r == 0)
                break;
        }
    }
}

static void report(const char *name, const struct stats *st)
{
    printf("crashpoints %s: %ld points (", name, st->points);
    for (int k = 0; k < T_K_COUNT; k++)
        if (st->per_kind[k])
            printf(" %s=%ld", t_kind_name((enum t_kind)k), st->per_kind[k]);
    printf(" ), %ld more crashes inside recovery, %ld torn tails seen\n",
           st->recovery_crashes, st->torn);
}

T_TEST(crashpoints_full)
{
    struct stats st = {0};

    enumerate(0, &st);
    report("full", &st);
    T_CHECK(st.per_kind[T_K_PWRITE] > 0 && st.per_kind[T_K_FDATASYNC] > 0);
    T_CHECK(st.per_kind[T_K_LINK] > 0 && st.per_kind[T_K_FALLOCATE] > 0);
}

T_TEST(crashpoints_normal)
{
    struct stats st = {0};

    enumerate(1, &st);
    report("normal", &st);
    T_CHECK(st.per_kind[T_K_PWRITE] > 0 && st.per_kind[T_K_FDATASYNC] > 0);
}

T_TEST(crashpoints_off)
{
    struct stats st = {0};

    enumerate(2, &st);
    report("off", &st);
    T_CHECK(st.per_kind[T_K_PWRITE] > 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--slow") == 0) {
        slow = 1;
        nsteps = 64;
        return t_main(argc - 1, argv + 1);
    }
    return t_main(argc, argv);
}
