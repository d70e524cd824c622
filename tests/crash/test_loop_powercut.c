/*
 * test_loop_powercut.c -- crash tests of kind (b) and (c) (docs/testing.md) for
 * loop runs: the loop of loopcheck.h runs in a forked child through the
 * fault table with change tracking on (faults.h), with --sync full or
 * normal; the child dies at a crash point (the nth pwrite or fdatasync:
 * before it, torn, or just after it) or by SIGKILL at a random moment, and
 * the parent then cuts the power: every change no sync covered is kept,
 * dropped, torn or garbled (seeded).  The side file the shell steps write
 * is the outside world: it survives.
 *
 * The child reports, through a pipe, each effect it starts (the progress
 * callback, called before the effect's intent is journaled), each
 * iteration, each result and the close.  An effect whose start was
 * followed by any later report had its outcome appended; that append was
 * synced when it returned with sync=full.  With either mode an effect is
 * synced once a later effect of the same life wrote its line (its intent
 * was synced before it started, and an fdatasync covers the whole file),
 * or once the run completed (run-done is synced) or was closed.
 *
 * After every cut, before anything runs again:
 *   - the journal opens; or, with sync normal or full, it is refused as
 *     LIL_E_CORRUPT only because intact records that were never synced
 *     follow a torn one (lil_run_open's recovery rule), and `check
 *     --repair` makes it open;
 *   - no effect ran more often than the journal holds intents for it
 *     (an intent is synced before its effect starts, so it survives);
 *   - every effect acknowledged as synced has its outcome;
 *   - the records come in the only order they may (loopcheck.h).
 * Then the run is resumed (recovered with retry or assume-done, seeded,
 * when it is uncertain), maybe killed and cut again, and finished in this
 * process; at the end every effect has its outcome, the state is the
 * expected one, and no effect whose outcome was in the journal after a cut
 * ran again.
 *
 * loop_powercut_points: every pwrite (crash before it, torn) and every
 * fdatasync (crash before, just after) of an uninterrupted run, for sync
 * full and normal, one seed each.  loop_powercut_random: seeds 1..60, each
 * one or two lives ending by a crash point or a SIGKILL, most followed by a
 * cut.  `test_loop_powercut --slow` (label slow): 3 seeds per point and
 * 2000 random seeds.  LIL_PC_SEEDS and LIL_PC_SEED0 override the random
 * seeds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "t.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/env.h"
#include "faults.h"
#include "loopcheck.h"
#include "workload.h"

#define NIT_POINTS 2 /* iterations of the loop: crash points */
#define NIT_RANDOM 3 /* random lives */
#define MAX_EVENTS 256

static long nseeds = 60;
static uint64_t seed0 = 1;
static int seeds_per_point = 1;

static const lil_sync modes[2] = {LIL_SYNC_FULL, LIL_SYNC_NORMAL};
static const char *const mode_names[2] = {"full", "normal"};

struct stats {
    struct t_pc_stats pc;
    struct t_lj_stats lj;
    long cases, cuts, deaths, kills, refused, repaired, acked, durable_checked;
    long recoveries, points;
};

/* ---- a case: its files --------------------------------------------------------------
 */

struct pcase {
    int n; /* iterations */
    int mode;
    char dir[512], store[600], spec[600], side[600], pclog[600], tok[32];
    char ctx[220];
    int lines_at_cut[T_LOOP_MAX_IT][T_LOOP_SLOTS]; /* -1: no outcome at a cut */
};

static int case_init(struct pcase *c, int n, int mode, const char *what)
{
    memset(c, 0, sizeof(*c));
    c->n = n;
    c->mode = mode;
    snprintf(c->dir, sizeof(c->dir), "%s", t_path("case"));
    snprintf(c->store, sizeof(c->store), "%s/store", c->dir);
    snprintf(c->spec, sizeof(c->spec), "%s/loop.yaml", c->dir);
    snprintf(c->side, sizeof(c->side), "%s/side.txt", c->dir);
    snprintf(c->pclog, sizeof(c->pclog), "%s/pc.log", t_tmpdir());
    snprintf(c->tok, sizeof(c->tok), "pc");
    snprintf(c->ctx, sizeof(c->ctx), "loop powercut sync=%s %s", mode_names[mode],
             what);
    for (int it = 0; it < T_LOOP_MAX_IT; it++)
        for (int s = 0; s < T_LOOP_SLOTS; s++)
            c->lines_at_cut[it][s] = -1;
    t_rmtree(c->dir);
    if (mkdir(c->dir, 0700) != 0 || t_loop_spec_write(c->spec, n) != 0)
        return -1;
    t_store_prepare(c->store);
    t_pc_forget(c->pclog);
    return 0;
}

/* ---- one life of the run (in a child, or in this process to finish)
 * ------------------- */

struct reporter {
    int fd; /* -1: nowhere */
};

static void report(const struct reporter *rp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void report(const struct reporter *rp, const char *fmt, ...)
{
    char line[160];
    va_list ap;
    int n;

    if (rp->fd < 0)
        return;
    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n > 0 && write(rp->fd, line, (size_t)n) != n)
        _exit(4);
}

static void on_progress(void *ud, const lil_loop_event *ev)
{
    const struct reporter *rp = ud;

    if (ev->kind == LIL_LOOP_EV_EFFECT && ev->step)
        report(rp, "E %lld %s\n", (long long)ev->iteration, ev->step);
    else if (ev->kind == LIL_LOOP_EV_ITERATION)
        report(rp, "I %lld\n", (long long)ev->iteration);
}

/* Open, run, recover an uncertain effect (how chosen by seed), close.
 * Returns the last status (0 if none), or -1 when a call failed. */
static int loop_life(const struct pcase *c, lil_env *env, const struct reporter *rp,
                     uint64_t seed)
{
    const char *pairs[1];
    char pair[64];
    lil_loop_opts o;
    lil_loop_result res = {0};
    lil_store *st = NULL;
    lil_spec *spec = NULL;
    lil_loop *lp = NULL;
    lil_status rc;
    int status = -1;

    snprintf(pair, sizeof(pair), "tok=%s", c->tok);
    pairs[0] = pair;
    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.sync = modes[c->mode];
    o.flags = LIL_LOOP_WAIT;
    o.input_pairs = pairs;
    o.n_input_pairs = 1;
    o.cwd = c->dir;
    o.progress = on_progress;
    o.progress_ud = (void *)(uintptr_t)rp;
    rc = lil_store_open(env, c->store, &st);
    if (rc == LIL_OK)
        rc = lil_spec_load(env, c->spec, NULL, &spec);
    if (rc == LIL_OK)
        rc = lil_loop_open(st, spec, &o, &lp);
    if (rc == LIL_OK)
        rc = lil_loop_run(lp, &res);
    for (int k = 0; rc == LIL_OK && res.status == LIL_LOOP_UNCERTAIN && k < 8; k++) {
        lil_resolution how =
            t_rand(&seed) & 1 ? LIL_RESOLVE_RETRY : LIL_RESOLVE_ASSUME_DONE;
        report(rp, "R %s\n", lil_loop_status_name(res.status));
        lil_loop_result_free(&res);
        rc = lil_loop_recover(lp, how, how == LIL_RESOLVE_RETRY ? NULL : T_LOOP_ASSUMED,
                              "crash test", "power cut", &res);
        report(rp, "U %d\n", (int)how);
    }
    if (rc == LIL_OK) {
        status = (int)res.status;
        report(rp, "R %s\n", lil_loop_status_name(res.status));
    } else if (rp->fd < 0) {
        fprintf(stderr, "  [%s] the last life: %s: %s\n", c->ctx, lil_status_name(rc),
                lil_errmsg());
    }
    lil_loop_result_free(&res);
    if (lp && lil_loop_close(lp) == LIL_OK && rc == LIL_OK)
        report(rp, "Z\n");
    lil_spec_free(spec);
    lil_store_close(st);
    return status;
}

/* ---- a life in a child
 * ----------------------------------------------------------------- */

struct ev {
    char tag; /* E I R U Z */
    int it, slot;
    char word[16];
};

struct life_res {
    struct ev ev[MAX_EVENTS];
    int nev;
    int died; /* by a crash point or SIGKILL */
    int killed;
    int code;
};

static void child_main(const struct pcase *c, const struct t_fault *f, int fd,
                       uint64_t seed)
{
    struct reporter rp = {fd};
    lil_env *env = t_env_faulty();
    int status;

    if (!env)
        _exit(2);
    if (f)
        t_faults_arm(f);
    else
        t_faults_reset();
    t_pc_track(c->pclog);
    status = loop_life(c, env, &rp, seed);
    lil_env_free(env);
    _exit(status == LIL_LOOP_COMPLETED ? 0 : 3);
}

static int slot_of_step(const char *step)
{
    for (int s = 0; s < T_LOOP_SLOTS; s++)
        if (t_loop_is_effect(s) && step[0] == t_loop_step_of(s) && !step[1])
            return s;
    return -1;
}

static void parse_events(struct life_res *lr, char *buf)
{
    char *save = NULL;

    for (char *line = strtok_r(buf, "\n", &save); line && lr->nev < MAX_EVENTS;
         line = strtok_r(NULL, "\n", &save)) {
        struct ev *e = &lr->ev[lr->nev];
        char step[16] = "";
        memset(e, 0, sizeof(*e));
        e->tag = line[0];
        e->slot = -1;
        if (e->tag == 'E' && sscanf(line + 1, "%d %15s", &e->it, step) == 2)
            e->slot = slot_of_step(step);
        else if (e->tag == 'I')
            e->it = atoi(line + 1);
        else if (e->tag == 'R' || e->tag == 'U')
            snprintf(e->word, sizeof(e->word), "%s", line + 2);
        lr->nev++;
    }
}

/* Read the child's reports until it ends; SIGKILL it at kill_after_us. */
static void collect(pid_t pid, int rfd, int64_t kill_after_us, struct life_res *lr)
{
    int64_t t0 = t_mono_us();
    static char buf[1 << 16];
    size_t len = 0;
    bool killed = false;

    for (;;) {
        int timeout = -1;
        struct pollfd pfd = {rfd, POLLIN, 0};
        ssize_t r;
        if (kill_after_us >= 0 && !killed) {
            int64_t left = t0 + kill_after_us - t_mono_us();
            if (left <= 0) {
                kill(pid, SIGKILL);
                killed = true;
                continue;
            }
            timeout = (int)((left + 999) / 1000);
        }
        if (poll(&pfd, 1, timeout) <= 0)
            continue;
        r = read(rfd, buf + len, sizeof(buf) - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    parse_events(lr, buf);
}

/* One life in a child.  0, or -1 if it could not be started. */
static int life(const struct pcase *c, const struct t_fault *f, int64_t kill_after_us,
                uint64_t seed, struct life_res *lr)
{
    int fds[2], st = 0;
    pid_t pid;

    memset(lr, 0, sizeof(*lr));
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    fflush(NULL);
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(fds[0]);
        child_main(c, f, fds[1], seed);
    }
    close(fds[1]);
    collect(pid, fds[0], kill_after_us, lr);
    close(fds[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    lr->killed = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
    lr->code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    lr->died = lr->killed || lr->code == T_CRASH_EXIT;
    return 0;
}

/* ---- the checks after a cut
 * ------------------------------------------------------------ */

/* Lines of slot (it, s) in the side file now. */
static void side_lines(const struct pcase *c, int lines[T_LOOP_MAX_IT][T_LOOP_SLOTS])
{
    struct t_lj j;

    t_lj_init(&j, c->n);
    (void)t_side_read(&j, c->side, c->tok, c->ctx);
    for (int it = 0; it < T_LOOP_MAX_IT; it++)
        for (int s = 0; s < T_LOOP_SLOTS; s++)
            lines[it][s] = it < c->n ? j.slot[it][s].lines : 0;
    t_lj_free(&j);
}

/* Which effects of the life are known to be synced (durable[it][s]): those
 * announced before a barrier.  With sync=full every report but the last
 * follows a returned (so synced) append; in both modes a later effect
 * that wrote its line, a completed run and a close are barriers. */
static void synced_effects(const struct pcase *c, const struct life_res *lr,
                           int before[T_LOOP_MAX_IT][T_LOOP_SLOTS],
                           int after[T_LOOP_MAX_IT][T_LOOP_SLOTS],
                           bool durable[T_LOOP_MAX_IT][T_LOOP_SLOTS], long *acked)
{
    int barrier = modes[c->mode] == LIL_SYNC_FULL ? lr->nev - 1 : -1;

    memset(durable, 0, sizeof(bool) * T_LOOP_MAX_IT * T_LOOP_SLOTS);
    for (int i = 0; i < lr->nev; i++) {
        const struct ev *e = &lr->ev[i];
        bool ran = e->tag == 'E' && e->slot >= 0 && e->it < c->n &&
                   after[e->it][e->slot] > before[e->it][e->slot];
        if (e->tag == 'Z' || (e->tag == 'R' && strcmp(e->word, "completed") == 0) ||
            ran)
            barrier = barrier > i ? barrier : i;
    }
    for (int i = 0; i < lr->nev; i++) {
        const struct ev *e = &lr->ev[i];
        if (e->tag != 'E' || e->slot < 0 || e->it >= c->n)
            continue;
        *acked += i + 1 < lr->nev;
        if (i < barrier)
            durable[e->it][e->slot] = true;
    }
}

static int check_durable(const struct pcase *c, const struct t_lj *j,
                         bool durable[T_LOOP_MAX_IT][T_LOOP_SLOTS], struct stats *st)
{
    int errors = 0;

    for (int it = 0; it < c->n; it++)
        for (int s = 0; s < T_LOOP_SLOTS; s++) {
            if (!durable[it][s])
                continue;
            st->durable_checked++;
            if (j->slot[it][s].at != T_SLOT_DONE) {
                fprintf(
                    stderr,
                    "  VIOLATION [%s] effect %d.%d was acknowledged as synced; after "
                    "the cut its outcome is gone (%d intents)\n",
                    c->ctx, it, s, j->slot[it][s].intents);
                errors++;
            }
        }
    return errors;
}

/* The journal after a cut: read it, repair a refusal the rule allows. */
static int read_after_cut(const struct pcase *c, struct t_lj *j, struct stats *st)
{
    lil_check_report rep;
    lil_store *sto = NULL;

    t_lj_read_api(j, c->store, T_LOOP_RUN, c->ctx);
    if (j->open_rc != LIL_E_CORRUPT || !strstr(j->msg, "never synced"))
        return 0;
    st->refused++;
    memset(&rep, 0, sizeof(rep));
    rep.struct_size = sizeof(rep);
    if (lil_store_open(NULL, c->store, &sto) != LIL_OK)
        return 1;
    if (lil_run_check(sto, T_LOOP_RUN, LIL_CHECK_REPAIR, &rep) == LIL_OK &&
        rep.repaired)
        st->repaired++;
    lil_store_close(sto);
    t_lj_free(j);
    t_lj_init(j, c->n);
    t_lj_read_api(j, c->store, T_LOOP_RUN, c->ctx);
    return 0;
}

/* After a life: reap its shells, cut the power (power), check. */
static int after(struct pcase *c, const struct life_res *lr, uint64_t seed, bool power,
                 int before[T_LOOP_MAX_IT][T_LOOP_SLOTS], struct stats *st)
{
    int after_lines[T_LOOP_MAX_IT][T_LOOP_SLOTS];
    bool durable[T_LOOP_MAX_IT][T_LOOP_SLOTS];
    struct t_pc_stats ps;
    struct t_lj j;
    int errors = 0;

    (void)t_orphans_reap(seed & 1);
    side_lines(c, after_lines);
    synced_effects(c, lr, before, after_lines, durable, &st->acked);
    if (power) {
        if (t_pc_apply(c->pclog, seed, T_PC_RANDOM, &ps) != 0)
            return 1;
        st->cuts++;
        st->pc.kept += ps.kept;
        st->pc.dropped += ps.dropped;
        st->pc.torn += ps.torn;
        st->pc.garbled += ps.garbled;
        st->pc.unsynced += ps.unsynced;
    } else {
        t_pc_forget(c->pclog);
        st->deaths++;
    }
    t_lj_init(&j, c->n);
    errors += read_after_cut(c, &j, st);
    if (j.open_rc != LIL_OK && !(j.open_rc == LIL_E_NOTFOUND && lr->nev == 0)) {
        fprintf(stderr,
                "  VIOLATION [%s] the journal does not open after the %s: %s %s\n",
                c->ctx, power ? "cut" : "crash", lil_status_name(j.open_rc), j.msg);
        errors++;
    }
    errors += t_side_read(&j, c->side, c->tok, c->ctx);
    errors += t_lj_check(&j, false, c->ctx);
    errors += check_durable(c, &j, durable, st);
    for (int it = 0; it < c->n; it++)
        for (int s = 0; s < T_LOOP_SLOTS; s++)
            if (j.slot[it][s].at == T_SLOT_DONE && c->lines_at_cut[it][s] < 0)
                c->lines_at_cut[it][s] = j.slot[it][s].lines;
    t_lj_free(&j);
    return errors;
}

/* The last life, in this process, then the final checks. */
static int finish(struct pcase *c, uint64_t seed, struct stats *st)
{
    struct reporter rp = {-1};
    struct t_lj j;
    int errors = 0, status = loop_life(c, NULL, &rp, seed);

    if (status != LIL_LOOP_COMPLETED) {
        fprintf(stderr, "  VIOLATION [%s] the last life ended %s\n", c->ctx,
                status < 0 ? "in an error"
                           : lil_loop_status_name((lil_loop_status)status));
        errors++;
    }
    t_lj_init(&j, c->n);
    t_lj_read_api(&j, c->store, T_LOOP_RUN, c->ctx);
    errors += t_side_read(&j, c->side, c->tok, c->ctx);
    errors += t_lj_check(&j, true, c->ctx);
    if (j.check_rc != LIL_OK || !j.rep.intact) {
        fprintf(stderr, "  VIOLATION [%s] check at the end: %s\n", c->ctx,
                j.rep.message);
        errors++;
    }
    for (int it = 0; it < c->n; it++)
        for (int s = 0; s < T_LOOP_SLOTS; s++)
            if (c->lines_at_cut[it][s] >= 0 &&
                j.slot[it][s].lines != c->lines_at_cut[it][s]) {
                fprintf(
                    stderr,
                    "  VIOLATION [%s] effect %d.%d had its outcome after a cut and ran "
                    "again (%d -> %d lines)\n",
                    c->ctx, it, s, c->lines_at_cut[it][s], j.slot[it][s].lines);
                errors++;
            }
    t_lj_stats_add(&j, &st->lj);
    t_lj_free(&j);
    return errors;
}

/* ---- the cases ----------------------------------------------------------------------
 */

static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

    return t_rand(&x);
}

/* Calls of each kind and the time of one uninterrupted run per mode. */
static unsigned long counts[2][T_K_COUNT];
static int64_t dur[2];

static void calibrate(int n)
{
    for (int mi = 0; mi < 2; mi++) {
        struct reporter rp = {-1};
        struct pcase c;
        lil_env *env = t_env_faulty();
        int64_t t0 = t_mono_us();
        T_REQUIRE(env && case_init(&c, n, mi, "calibration") == 0);
        t_faults_reset();
        T_EQ_I64(loop_life(&c, env, &rp, 1), LIL_LOOP_COMPLETED);
        dur[mi] = t_mono_us() - t0;
        for (int k = 0; k < T_K_COUNT; k++)
            counts[mi][k] = t_faults_count((enum t_kind)k);
        lil_env_free(env);
    }
}

/* A run that dies at fault f (or by SIGKILL at kill_after_us), a cut, the
 * rest.  1: it died there, 0: it finished first, -1: a violation. */
static int one_case(int n, int mi, const struct t_fault *f, int64_t kill_after_us,
                    uint64_t seed, const char *what, struct stats *st)
{
    int before[T_LOOP_MAX_IT][T_LOOP_SLOTS] = {{0}};
    struct life_res lr;
    struct pcase c;
    int errors = 0;

    if (case_init(&c, n, mi, what) != 0 || life(&c, f, kill_after_us, seed, &lr) != 0)
        return -1;
    st->cases++;
    st->kills += lr.killed;
    errors += after(&c, &lr, seed, true, before, st);
    if (errors == 0)
        errors += finish(&c, seed, st);
    return errors ? -1 : lr.died;
}

struct point {
    enum t_kind kind;
    enum t_action act;
};

static const struct point points[] = {
    {T_K_PWRITE, T_ACT_CRASH},
    {T_K_PWRITE, T_ACT_CRASH_TORN},
    {T_K_FDATASYNC, T_ACT_CRASH},
    {T_K_FDATASYNC, T_ACT_CRASH_AFTER},
};

T_TEST(loop_powercut_points)
{
    struct stats st;
    long unreached = 0;

    memset(&st, 0, sizeof(st));
    t_orphans_adopt();
    calibrate(NIT_POINTS);
    for (int mi = 0; mi < 2; mi++)
        for (size_t pi = 0; pi < sizeof(points) / sizeof(points[0]); pi++)
            for (unsigned long k = 1; k <= counts[mi][points[pi].kind]; k++)
                for (int j = 0; j < seeds_per_point; j++) {
                    uint64_t seed = mix(mix((uint64_t)mi * 100 + pi, k), (uint64_t)j);
                    struct t_fault f = {points[pi].kind, k, points[pi].act, 0, 0, seed};
                    char what[120];
                    int r;
                    snprintf(what, sizeof(what), "%s #%lu %s seed=%#llx",
                             t_kind_name(f.kind), k, t_action_name(f.action),
                             (unsigned long long)seed);
                    r = one_case(NIT_POINTS, mi, &f, -1, seed, what, &st);
                    T_REQUIRE(r >= 0);
                    st.points += r == 1;
                    unreached += r == 0;
                }
    printf(
        "loop powercut points: %ld cases (%ld crash points reached, %ld not), "
        "%ld cuts; writes kept %lu dropped %lu torn %lu garbled %lu of %lu unsynced; "
        "%ld acknowledged effects, %ld checked as synced; refused %ld, repaired %ld; "
        "effects retried %ld, assumed done %ld\n",
        st.cases, st.points, unreached, st.cuts, st.pc.kept, st.pc.dropped, st.pc.torn,
        st.pc.garbled, st.pc.unsynced, st.acked, st.durable_checked, st.refused,
        st.repaired, st.lj.retried, st.lj.assumed);
    T_CHECK(st.points > 0 && unreached <= st.points / 10);
    T_CHECK(st.pc.dropped > 0 && st.durable_checked > 0);
}

/* One seed: one or two lives, each ended by a crash point or a SIGKILL,
 * most followed by a cut, then the rest. */
static int one_seed(uint64_t seed, struct stats *st)
{
    int before[T_LOOP_MAX_IT][T_LOOP_SLOTS] = {{0}};
    uint64_t rng = mix(seed, 0x100c);
    int mi = (int)(seed % 2), lives = 1 + (int)t_rand_below(&rng, 2), errors = 0;

    static const enum t_kind kinds[2] = {T_K_PWRITE, T_K_FDATASYNC};

    char what[64];
    struct pcase c;

    snprintf(what, sizeof(what), "random seed=%llu", (unsigned long long)seed);
    if (case_init(&c, NIT_RANDOM, mi, what) != 0)
        return 1;
    for (int l = 0; l < lives && errors == 0; l++) {
        struct t_fault f = {0};
        struct life_res lr;
        bool crash_point = t_rand_below(&rng, 2) == 0;
        bool power = t_rand_below(&rng, 4) != 0;
        int64_t kill_at = -1;
        if (crash_point) {
            f.kind = kinds[t_rand_below(&rng, 2)];
            f.action = t_rand_below(&rng, 2) ? T_ACT_CRASH : T_ACT_CRASH_AFTER;
            if (f.kind == T_K_PWRITE && f.action == T_ACT_CRASH_AFTER)
                f.action = T_ACT_CRASH_TORN;
            f.nth = 1 + t_rand_below(&rng, counts[mi][f.kind] + 1);
            f.seed = t_rand(&rng);
        } else {
            kill_at =
                (int64_t)t_rand_below(&rng, (uint64_t)(dur[mi] + dur[mi] / 4 + 300));
        }
        side_lines(&c, before);
        if (life(&c, crash_point ? &f : NULL, kill_at, t_rand(&rng), &lr) != 0)
            return errors + 1;
        st->cases++;
        st->kills += lr.killed;
        st->recoveries += lr.nev > 0 && lr.ev[lr.nev - 1].tag == 'U';
        errors += after(&c, &lr, t_rand(&rng), power, before, st);
    }
    if (errors == 0)
        errors += finish(&c, t_rand(&rng), st);
    if (errors)
        fprintf(stderr, "  [%s] failed: LIL_PC_SEED0=%llu LIL_PC_SEEDS=1 replays it\n",
                c.ctx, (unsigned long long)seed);
    return errors;
}

T_TEST(loop_powercut_random)
{
    struct stats st;
    int errors = 0;
    long done = 0;

    if (getenv("LIL_PC_SEEDS"))
        nseeds = atol(getenv("LIL_PC_SEEDS"));
    if (getenv("LIL_PC_SEED0"))
        seed0 = strtoull(getenv("LIL_PC_SEED0"), NULL, 0);
    memset(&st, 0, sizeof(st));
    t_orphans_adopt();
    calibrate(NIT_RANDOM);
    for (long k = 0; k < nseeds && errors == 0; k++, done++)
        errors += one_seed(seed0 + (uint64_t)k, &st);
    T_EQ_I64(errors, 0);
    printf(
        "loop powercut random: seeds %llu..%llu: %ld lives, %ld SIGKILLs, %ld cuts, "
        "%ld crashes without a cut; writes kept %lu dropped %lu torn %lu garbled %lu "
        "of %lu unsynced; %ld effects checked as synced; refused %ld, repaired %ld; "
        "effects retried %ld, assumed done %ld\n",
        (unsigned long long)seed0, (unsigned long long)(seed0 + (uint64_t)done - 1),
        st.cases, st.kills, st.cuts, st.deaths, st.pc.kept, st.pc.dropped, st.pc.torn,
        st.pc.garbled, st.pc.unsynced, st.durable_checked, st.refused, st.repaired,
        st.lj.retried, st.lj.assumed);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--slow") == 0) {
        nseeds = 2000;
        seeds_per_point = 3;
        return t_main(argc - 1, argv + 1);
    }
    return t_main(argc, argv);
}
