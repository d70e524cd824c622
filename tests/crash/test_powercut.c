/*
 * test_powercut.c -- crash tests of kind (c) (docs/testing.md): simulated power
 * cuts.  The children run the workload through the fault table with
 * change tracking on (faults.h): every write, size change and new name is
 * logged with what it replaced, and a sync marks what it covers durable.
 * After a child dies the parent "cuts the power": each change no sync
 * covered is kept, dropped, torn or garbled (seeded), sizes may fall back,
 * unsynced names may vanish.  This is what exercises the checksums, the
 * torn-tail rule and the SETTLED flag; SIGKILL alone never loses a byte.
 *
 * After every cut:
 *   - the journal opens, or refuses with LIL_E_CORRUPT where the recovery
 *     rule says so: sync=off for any damage (it never promised to survive a
 *     power cut), full and normal only when intact records that were never
 *     synced follow a torn one (a power cut that made a later write durable
 *     but not an earlier one looks like damage; dropping them silently is
 *     not lil's call).  Then the message must name the offset, `lil_run_check`
 *     must count those records, and `check --repair` must make it open
 *     again, with every durable step still there;
 *   - every DURABLE step is there with its exact bytes (workload.h: with
 *     full, every acknowledgement; with normal, what was acknowledged before
 *     the last lil_run_sync, effect, complete or close; with off, before the
 *     last lil_run_sync), and nothing in the journal has wrong bytes;
 *   - no step function ran for a step the journal held when its attempt
 *     began; the run can be finished and a replay then runs nothing.
 *
 * powercut_points: every crash point of pwrite (before, torn), fdatasync
 * (before, after), fsync, ftruncate, fallocate, link, for each sync mode,
 * one seed each.  powercut_random: seeds 1..300, each a run of one to three
 * lives that end by a crash point or a SIGKILL at a random time, most of
 * them followed by a power cut.  Both start from a store directory that
 * exists durably; three fixed scenarios check the directory entries lil
 * makes itself: powercut_creator_died_before_dir_fsync,
 * powercut_new_dirs_are_durable, powercut_marker_found_before_dir_fsync. `test_powercut
 * --slow` (label slow): 10000 seeds and three seeds per crash point.  LIL_PC_SEEDS and
 * LIL_PC_SEED0 override the seeds of powercut_random.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "t.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/env.h"
#include "faults.h"
#include "workload.h"

#define NSTEPS   24
#define BIG_SIZE 70000

static long nseeds = 300;
static uint64_t seed0 = 1;
static int seeds_per_point = 1;

static const lil_sync modes[3] = {LIL_SYNC_FULL, LIL_SYNC_NORMAL, LIL_SYNC_OFF};
static const char *const mode_names[3] = {"full", "normal", "off"};

struct stats {
    struct t_pc_stats pc;
    long cuts, deaths, kills, points, torn, refused[3], repaired, lost_unsynced;
};

static void add_pc(struct t_pc_stats *a, const struct t_pc_stats *b)
{
    a->entries += b->entries;
    a->unsynced += b->unsynced;
    a->kept += b->kept;
    a->dropped += b->dropped;
    a->torn += b->torn;
    a->garbled += b->garbled;
    a->size_undone += b->size_undone;
    a->names_undone += b->names_undone;
}

static int64_t mono_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Calls of each kind and time of one whole workload, per mode (in this
 * process, through the counting table). */
static unsigned long counts[3][T_K_COUNT];
static int64_t dur[3];

static void calibrate(const struct t_plan *p)
{
    for (int mi = 0; mi < 3; mi++) {
        struct t_wl w;
        const char *store = t_path("calib");
        lil_env *env = t_env_faulty();
        int64_t t0;
        t_rmtree(store);
        t_faults_reset();
        t_wl_init(&w, p, store, "run", modes[mi], NULL);
        w.env = env;
        t0 = mono_us();
        T_EQ_I64(t_wl_run(&w), 0);
        dur[mi] = mono_us() - t0;
        for (int k = 0; k < T_K_COUNT; k++)
            counts[mi][k] = t_faults_count((enum t_kind)k);
        lil_env_free(env);
    }
}

/* Whether an open may refuse the journal after a power cut (see the top). */
static bool may_refuse(const struct t_model *m, const struct t_seen *s)
{
    return m->sync == LIL_SYNC_OFF || strstr(s->msg, "never synced") != NULL;
}

/* The open refused the journal after a cut: the message names the offset,
 * check reports the same damage and counts what lies after it, and repair
 * truncates there. */
static int refused(struct t_model *m, const char *store, const struct t_seen *s,
                   struct stats *st)
{
    lil_check_report rep;
    lil_store *sto = NULL;
    int errors = 0;

    st->refused[m->sync - LIL_SYNC_FULL]++;
    memset(&rep, 0, sizeof(rep));
    rep.struct_size = sizeof(rep);
    if (!strstr(s->msg, "offset")) {
        fprintf(stderr, "  VIOLATION [%s]: LIL_E_CORRUPT names no offset: %s\n", m->ctx,
                s->msg);
        errors++;
    }
    if (lil_store_open(NULL, store, &sto) != LIL_OK)
        return errors + 1;
    if (lil_run_check(sto, "run", 0, &rep) != LIL_OK || rep.intact ||
        (m->sync != LIL_SYNC_OFF && rep.records_after_damage == 0)) {
        fprintf(stderr, "  VIOLATION [%s]: the open refused, check says: %s\n", m->ctx,
                rep.message);
        errors++;
    }
    if (lil_run_check(sto, "run", LIL_CHECK_REPAIR, &rep) == LIL_OK && rep.repaired)
        st->repaired++;
    lil_store_close(sto);
    return errors;
}

/* After a life ended (power: with a cut): check and move the model on. */
static int after(const struct t_plan *p, struct t_model *m, const char *store,
                 const char *pclog, uint64_t seed, bool power, struct stats *st)
{
    struct t_pc_stats ps;
    struct t_seen s;
    int errors = 0;

    if (power) {
        if (t_pc_apply(pclog, seed, T_PC_RANDOM, &ps) != 0) {
            fprintf(stderr, "  [%s] cannot read the power-cut log\n", m->ctx);
            return 1;
        }
        add_pc(&st->pc, &ps);
        st->cuts++;
    } else {
        st->deaths++;
    }
    t_inspect(p, store, "run", NULL, &s);
    if (s.open_rc == LIL_E_CORRUPT && power && may_refuse(m, &s)) {
        errors += refused(m, store, &s, st);
        t_inspect(p, store, "run", NULL, &s);
    }
    if (s.open_rc != LIL_OK && !(s.open_rc == LIL_E_NOTFOUND && !m->opened)) {
        fprintf(stderr, "  VIOLATION [%s]: journal does not open after a %s: %s %s\n",
                m->ctx, power ? "power cut" : "crash", lil_status_name(s.open_rc),
                s.msg);
        errors++;
    }
    if (s.open_rc == LIL_OK &&
        (s.check_rc != LIL_OK || !(s.rep.intact || s.rep.torn_tail))) {
        fprintf(stderr, "  VIOLATION [%s]: opens, but check says: %s: %s\n", m->ctx,
                lil_status_name(s.check_rc), s.rep.message);
        errors++;
    }
    st->torn += s.rep.torn_tail;
    for (int i = 0; i < p->n; i++)
        if (m->acked[i] && !m->durable[i] && !(s.open_rc == LIL_OK && s.has[i]))
            st->lost_unsynced++;
    t_model_end(m, power ? T_END_POWER : T_END_PROCESS, &s);
    t_model_begin(m, &s);
    return errors;
}

/* One life of the run.  1: died, 0: finished, -1: failed. */
static int life(struct t_wl *w, const struct t_child *c, struct t_evlog *log,
                struct t_model *m, struct stats *st)
{
    struct t_child_res res;

    t_evlog_clear(log);
    if (t_child_run(w, c, log, &res) != 0)
        return -1;
    t_model_feed(m, log);
    if (res.crashed)
        return 1;
    if (res.signaled && res.sig == SIGKILL) {
        st->kills++;
        return 1;
    }
    if (!res.exited || res.code != 0) {
        fprintf(stderr, "  [%s] attempt %d: workload failed: exit %d signal %d\n",
                m->ctx, w->attempt, res.code, res.sig);
        return -1;
    }
    return 0;
}

/* The last life, in this process (no power cut follows it): no fault, the
 * run must complete; then the final check. */
static int finish(const struct t_plan *p, struct t_wl *w, struct t_evlog *log,
                  struct t_model *m)
{
    struct t_seen s;
    int errors = 0;

    w->attempt++;
    w->env = NULL;
    w->log = log;
    t_evlog_clear(log);
    if (t_wl_run(w) != 0 || !w->completed) {
        fprintf(stderr, "  [%s] the last attempt failed: %s\n", m->ctx,
                lil_status_name(w->first_err));
        errors++;
    }
    t_model_feed(m, log);
    t_inspect(p, w->store, "run", NULL, &s);
    t_model_end(m, T_END_CLEAN, &s);
    errors += t_verify_final(p, w->store, "run", w->sync, m->ctx);
    return errors;
}

struct point {
    enum t_kind kind;
    enum t_action act;
};

static const struct point points[] = {
    {T_K_PWRITE, T_ACT_CRASH},          {T_K_PWRITE, T_ACT_CRASH_TORN},
    {T_K_FDATASYNC, T_ACT_CRASH},       {T_K_FDATASYNC, T_ACT_CRASH_AFTER},
    {T_K_FSYNC, T_ACT_CRASH},           {T_K_FTRUNCATE, T_ACT_CRASH},
    {T_K_FALLOCATE, T_ACT_CRASH_AFTER}, {T_K_LINK, T_ACT_CRASH_AFTER},
};

static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

    return t_rand(&x);
}

/* Crash at (pt, k) with a power cut chosen by seed, then finish. */
static int cut_at(const struct t_plan *p, int mi, const struct point *pt,
                  unsigned long k, uint64_t seed, struct stats *st)
{
    const char *store = t_path("store"), *pclog = t_path("pc.log");
    struct t_fault f = {pt->kind, k, pt->act, 0, 0, seed};
    struct t_child c = {&f, pclog, -1};
    struct t_evlog log = {0};
    struct t_model m;
    struct t_wl w;
    char ctx[200];
    int r, errors = 0;

    snprintf(ctx, sizeof(ctx), "powercut sync=%s %s #%lu %s seed=%#llx", mode_names[mi],
             t_kind_name(pt->kind), k, t_action_name(pt->act),
             (unsigned long long)seed);
    t_rmtree(store);
    t_store_prepare(store);
    t_pc_forget(pclog);
    t_model_init(&m, p, modes[mi], ctx);
    t_model_begin(&m, NULL);
    t_wl_init(&w, p, store, "run", modes[mi], NULL);
    r = life(&w, &c, &log, &m, st);
    if (r == 1) {
        st->points++;
        errors += after(p, &m, store, pclog, seed, true, st);
        errors += finish(p, &w, &log, &m);
    } else if (r < 0) {
        errors++;
    }
    t_evlog_free(&log);
    errors += m.errors;
    return errors ? -1 : r;
}

static void report(const char *name, const struct stats *st)
{
    printf("powercut %s: %ld cuts (%ld at enumerated points), %ld plain deaths, "
           "%ld SIGKILLs; writes kept %lu dropped %lu torn %lu garbled %lu, "
           "sizes undone %lu, names undone %lu, of %lu unsynced changes; "
           "%ld torn tails seen, %ld unsynced acknowledgements lost (allowed), "
           "refused with intact records after a torn one: full %ld, normal %ld, "
           "off %ld (repaired %ld)\n",
           name, st->cuts, st->points, st->deaths, st->kills, st->pc.kept,
           st->pc.dropped, st->pc.torn, st->pc.garbled, st->pc.size_undone,
           st->pc.names_undone, st->pc.unsynced, st->torn, st->lost_unsynced,
           st->refused[0], st->refused[1], st->refused[2], st->repaired);
}

T_TEST(powercut_points)
{
    struct t_plan plan;
    struct stats st;

    memset(&st, 0, sizeof(st));
    t_plan_init(&plan, NSTEPS, BIG_SIZE);
    calibrate(&plan);
    for (int mi = 0; mi < 3; mi++)
        for (size_t pi = 0; pi < sizeof(points) / sizeof(points[0]); pi++)
            for (unsigned long k = 1; k <= counts[mi][points[pi].kind]; k++)
                for (int j = 0; j < seeds_per_point; j++) {
                    uint64_t seed = mix(mix((uint64_t)mi * 100 + pi, k), (uint64_t)j);
                    int r = cut_at(&plan, mi, &points[pi], k, seed, &st);
                    T_REQUIRE(r >= 0);
                    T_CHECK(r == 1); /* every counted call is reached */
                }
    report("points", &st);
    T_CHECK(st.points > 0);
    T_CHECK(st.pc.dropped > 0 && st.pc.torn > 0 && st.pc.garbled > 0);
}

/* A process dies after linking a new journal into place and before the
 * directory fsync that makes the name durable; the next process opens the
 * journal it finds with the given sync mode and completes the run; then the
 * power fails and every change no sync covered is lost.  *log receives the
 * second life's events; *s what the store holds after the cut. */
static void creator_dies_then_power_fails(lil_sync sync, struct t_plan *plan,
                                          struct t_evlog *log, struct t_seen *s)
{
    const char *store = t_path("store"), *pclog = t_path("pc.log");
    /* the first fsync: the directory's, after the link (opening the store
     * syncs nothing: the store's name is synced with the run's open) */
    struct t_fault f = {T_K_FSYNC, 1, T_ACT_CRASH, 0, 0, 1};
    struct t_child c1 = {&f, pclog, -1}, c2 = {NULL, pclog, -1};
    struct t_child_res res;
    struct t_wl w;

    t_plan_init(plan, 2, 0); /* no marker: its mkdir would fsync the store */
    t_store_prepare(store);
    t_pc_forget(pclog);
    t_wl_init(&w, plan, store, "run", sync, NULL);
    T_REQUIRE(t_child_run(&w, &c1, log, &res) == 0);
    T_CHECK(res.crashed);                     /* died at the directory fsync */
    T_EQ_I64(t_evlog_count(log, 'O', -1), 0); /* before lil_run_open returned */
    t_evlog_clear(log);
    w.attempt = 2;
    T_REQUIRE(t_child_run(&w, &c2, log, &res) == 0);
    T_EQ_I64(res.code, 0);
    T_EQ_I64(t_evlog_count(log, 'O', -1), 1);
    T_EQ_I64(t_pc_apply(pclog, 1, T_PC_DROP_ALL, NULL), 0);
    t_inspect(plan, store, "run", NULL, s);
}

/* With sync=full every step was acknowledged as durable, so the journal
 * must still be there, whole: the opener cannot know whether its creator
 * finished the directory fsync, so it has to make the name durable itself. */
T_TEST(powercut_creator_died_before_dir_fsync)
{
    struct t_evlog log = {0};
    struct t_plan plan;
    struct t_seen s;

    creator_dies_then_power_fails(LIL_SYNC_FULL, &plan, &log, &s);
    T_EQ_I64(t_evlog_count(&log, 'A', -1) + t_evlog_count(&log, 'F', -1), plan.n);
    T_EQ_I64(t_evlog_count(&log, 'C', -1), 1);
    T_EQ_STR(lil_status_name(s.open_rc), "LIL_OK");
    T_EQ_I64(s.state, LIL_RUN_COMPLETED);
    for (int i = 0; i < plan.n; i++)
        T_EQ_I64(s.has[i], 1);
    t_evlog_free(&log);
}

/* The same at sync=off, found by powercut_random: steps may be lost at
 * sync=off, but the run itself must not vanish: it was opened. */
T_TEST(powercut_creator_died_before_dir_fsync_sync_off)
{
    struct t_evlog log = {0};
    struct t_plan plan;
    struct t_seen s;

    creator_dies_then_power_fails(LIL_SYNC_OFF, &plan, &log, &s);
    T_EQ_STR(lil_status_name(s.open_rc), "LIL_OK");
    t_evlog_free(&log);
}

/* lil_store_open creates the store directory and lil_marker creates
 * <store>/markers.  A run in a new store completes with sync=full and its
 * marker is taken; then the power fails and every change no sync covered is
 * lost.  The journal and the marker must still be there, so the entries of
 * the directories lil made must have been made durable (an fsync of the
 * parent directory after the mkdir). */
T_TEST(powercut_new_dirs_are_durable)
{
    const char *store = t_path("new/store"), *pclog = t_path("pc.log");
    struct t_child c = {NULL, pclog, -1};
    struct t_evlog log = {0};
    struct t_child_res res;
    struct t_plan plan;
    struct t_seen s;
    struct t_wl w;

    t_plan_init(&plan, 6, 0);
    t_store_prepare(t_path("new")); /* the parent exists durably, not store */
    t_pc_forget(pclog);
    t_wl_init(&w, &plan, store, "run", LIL_SYNC_FULL, NULL);
    T_REQUIRE(t_child_run(&w, &c, &log, &res) == 0);
    T_EQ_I64(res.code, 0);
    T_EQ_I64(t_evlog_count(&log, 'C', -1), 1);
    T_EQ_I64(t_evlog_count(&log, 'K', -1), 1);
    T_EQ_I64(t_pc_apply(pclog, 1, T_PC_DROP_ALL, NULL), 0);
    t_inspect(&plan, store, "run", NULL, &s);
    T_EQ_STR(lil_status_name(s.open_rc), "LIL_OK");
    T_EQ_I64(s.state, LIL_RUN_COMPLETED);
    T_EQ_I64(s.marker_done, 1);
    t_evlog_free(&log);
}

/* The store keys its runs by default, and keeps a rollback record of each
 * (<store>/<run id>.head) written at lil_run_sync (the workload syncs every
 * eight steps) and at close, never synced itself.  A run completes in each
 * sync mode; then the power fails and every change no sync covered is lost
 * -- the last records of the journal (off, normal) and the record's latest
 * renames alike.  The record may lag the journal, never lead it: the run
 * opens (no LIL_E_ROLLBACK). */
T_TEST(powercut_rollback_record_never_leads)
{
    static const lil_sync modes_here[] = {LIL_SYNC_FULL, LIL_SYNC_NORMAL, LIL_SYNC_OFF};

    for (size_t i = 0; i < 3; i++) {
        const char *store = t_path("keyed"), *pclog = t_path("pc.log");
        struct t_child c = {NULL, pclog, -1};
        struct t_evlog log = {0};
        struct t_child_res res;
        struct t_plan plan;
        struct t_seen s;
        struct t_wl w;
        char head[4200];

        t_rmtree(store);
        t_plan_init(&plan, NSTEPS, 0);
        t_store_prepare(store);
        t_pc_forget(pclog);
        t_wl_init(&w, &plan, store, "run", modes_here[i], NULL);
        T_REQUIRE(t_child_run(&w, &c, &log, &res) == 0);
        T_EQ_I64(res.code, 0);
        snprintf(head, sizeof(head), "%s/run.head", store);
        T_CHECK(access(head, F_OK) == 0); /* a record was written */
        T_EQ_I64(t_pc_apply(pclog, 1 + i, T_PC_DROP_ALL, NULL), 0);
        t_inspect(&plan, store, "run", NULL, &s);
        T_EQ_STR(lil_status_name(s.open_rc), "LIL_OK");
        t_evlog_free(&log);
    }
}

/* A process dies inside lil_marker after the marker's result file was
 * renamed into place and before the directory fsync that makes it durable.
 * The next process calls lil_marker, finds the result and returns it
 * (LIL_OK) without running the function.  Then the power fails.  The
 * marker must still be published: a caller acted on that result, and the
 * function must not run again.  The finder cannot know whether the
 * publisher finished its directory fsync, so it has to make it durable. */
T_TEST(powercut_marker_found_before_dir_fsync)
{
    const char *store = t_path("store"), *pclog = t_path("pc.log");
    struct t_evlog log = {0};
    struct t_child_res res;
    struct t_plan plan;
    struct t_seen s;
    struct t_wl w;
    unsigned long k;
    bool found = false;

    t_plan_init(&plan, 6, 0);
    /* Find the fsync after which the marker's .done is visible: the one
     * that would have made it durable. */
    for (k = 1; k < 20 && !found; k++) {
        struct t_fault f = {T_K_FSYNC, k, T_ACT_CRASH, 0, 0, 1};
        struct t_child c = {&f, pclog, -1};
        t_rmtree(store);
        t_store_prepare(store);
        t_pc_forget(pclog);
        t_evlog_clear(&log);
        t_wl_init(&w, &plan, store, "run", LIL_SYNC_FULL, NULL);
        T_REQUIRE(t_child_run(&w, &c, &log, &res) == 0);
        if (!res.crashed)
            break;
        t_inspect(&plan, store, "run", NULL, &s);
        found = s.marker_done && t_evlog_count(&log, 'm', -1) == 1 &&
                t_evlog_count(&log, 'K', -1) == 0;
    }
    T_REQUIRE(found);
    {
        struct t_child c = {NULL, pclog, -1};
        t_evlog_clear(&log);
        w.attempt = 2;
        T_REQUIRE(t_child_run(&w, &c, &log, &res) == 0);
        T_EQ_I64(res.code, 0);
        T_EQ_I64(t_evlog_count(&log, 'm', -1), 0); /* found, not run */
        T_EQ_I64(t_evlog_count(&log, 'K', -1), 1); /* and acknowledged */
    }
    T_EQ_I64(t_pc_apply(pclog, 1, T_PC_DROP_ALL, NULL), 0);
    t_inspect(&plan, store, "run", NULL, &s);
    T_EQ_I64(s.marker_done, 1);
    t_evlog_free(&log);
}

static const enum t_kind random_kinds[6] = {T_K_PWRITE,    T_K_FDATASYNC, T_K_FTRUNCATE,
                                            T_K_FALLOCATE, T_K_LINK,      T_K_FSYNC};

static const enum t_action random_acts[3] = {T_ACT_CRASH, T_ACT_CRASH_AFTER,
                                             T_ACT_CRASH_TORN};

static int one_seed(const struct t_plan *p, uint64_t seed, struct stats *st)
{
    const char *store = t_path("store"), *pclog = t_path("pc.log");
    uint64_t rng = mix(seed, 0x70c);
    int mi = (int)(seed % 3), lives = 1 + (int)t_rand_below(&rng, 3), errors = 0;
    struct t_evlog log = {0};
    struct t_model m;
    struct t_wl w;
    char ctx[200];

    snprintf(ctx, sizeof(ctx), "powercut-random seed=%llu sync=%s",
             (unsigned long long)seed, mode_names[mi]);
    t_rmtree(store);
    t_store_prepare(store);
    t_pc_forget(pclog);
    t_model_init(&m, p, modes[mi], ctx);
    t_model_begin(&m, NULL);
    t_wl_init(&w, p, store, "run", modes[mi], NULL);
    w.attempt = 0;
    for (int l = 0; l < lives && errors == 0; l++) {
        struct t_fault f = {0};
        struct t_child c = {NULL, pclog, -1};
        bool power = l == lives - 1 || t_rand_below(&rng, 4) != 0;
        int r;
        if (t_rand_below(&rng, 2) == 0) {
            f.kind = random_kinds[t_rand_below(&rng, 6)];
            f.action = random_acts[t_rand_below(&rng, f.kind == T_K_PWRITE ? 3 : 2)];
            f.nth = 1 + t_rand_below(&rng, counts[mi][f.kind] + 1);
            f.seed = t_rand(&rng);
            c.fault = &f;
        } else {
            c.kill_after_us =
                (long)t_rand_below(&rng, (uint64_t)(dur[mi] * 5 / 4 + 300));
        }
        w.attempt++;
        r = life(&w, &c, &log, &m, st);
        if (getenv("LIL_PC_TRACE"))
            fprintf(stderr, "life %d: %s %s #%lu %s, kill after %ld us -> %s; %s\n",
                    w.attempt, ctx, c.fault ? t_kind_name(f.kind) : "-",
                    c.fault ? f.nth : 0, c.fault ? t_action_name(f.action) : "-",
                    c.kill_after_us,
                    r == 1   ? "died"
                    : r == 0 ? "finished"
                             : "failed",
                    r >= 0 && (r == 1 || power) ? (power ? "power cut" : "no cut")
                                                : "no cut");
        if (r < 0)
            errors++;
        else if (r == 1 || power)
            errors += after(p, &m, store, pclog, t_rand(&rng), power, st);
        else {
            struct t_seen s;
            t_inspect(p, store, "run", NULL, &s);
            t_model_end(&m, T_END_CLEAN, &s);
            t_model_begin(&m, &s);
        }
    }
    if (errors == 0 && m.errors == 0)
        errors += finish(p, &w, &log, &m);
    t_evlog_free(&log);
    return errors + m.errors;
}

T_TEST(powercut_random)
{
    struct t_plan plan;
    struct stats st;
    int errors = 0;
    long done = 0;

    if (getenv("LIL_PC_SEEDS"))
        nseeds = atol(getenv("LIL_PC_SEEDS"));
    if (getenv("LIL_PC_SEED0"))
        seed0 = strtoull(getenv("LIL_PC_SEED0"), NULL, 0);
    memset(&st, 0, sizeof(st));
    t_plan_init(&plan, NSTEPS, BIG_SIZE);
    calibrate(&plan);
    for (long k = 0; k < nseeds && errors == 0; k++, done++)
        errors += one_seed(&plan, seed0 + (uint64_t)k, &st);
    T_EQ_I64(errors, 0);
    printf("powercut random: seeds %llu..%llu (%ld)\n", (unsigned long long)seed0,
           (unsigned long long)(seed0 + (uint64_t)done - 1), done);
    report("random", &st);
    T_CHECK(st.pc.dropped > 0 && st.pc.torn > 0 && st.pc.garbled > 0);
    T_CHECK(st.pc.size_undone > 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--slow") == 0) {
        nseeds = 10000;
        seeds_per_point = 3;
        return t_main(argc - 1, argv + 1);
    }
    return t_main(argc, argv);
}
