/*
 * bench_loop.c -- the loop runner (lil_loop_run, src/loop/runner.h) beside
 * the core it is built on, measured in the same run:
 *
 *   overhead   one no-op effect per iteration (`kind: agent, harness:
 *              internal`: nothing runs), sync=off: N iterations of
 *              lil_loop_run in-process, per iteration, beside the core's
 *              lil_step (one append) and lil_effect (two appends: intent
 *              and outcome) at sync=off.  An iteration journals three
 *              records (intent, outcome, snapshot), so the core's floor
 *              for it is one lil_effect + one lil_step.  Interleaved
 *              rounds, the median kept.  Target: <= 10 µs per iteration
 *              (CPU time; wall time printed beside it).
 *   syncs      fdatasync calls per effect with sync=full and sync=normal,
 *              for the no-op agent effect and a shell `true`, counted by a
 *              system-call table that wraps the POSIX one in an env of the
 *              benchmark's own (lil__env_set_os: internal; no strace, no
 *              perf, no privileges), in the steady state: from the start
 *              of the second iteration to the start of the last.  Targets:
 *              <= 2 (full), about 1 (normal).
 *   flatness   one run of 100k iterations (sync=off): the cost of
 *              iterations 1-10 and of the 1k iterations before the 1k-th,
 *              10k-th and 100k-th.  Target: flat (last / first <= 1.5×,
 *              CPU time).
 *
 * bench_loop_proc.c adds the rows that start processes (a resume through
 * the `lil` command, the shell effect beside posix_spawn).
 */
#define _GNU_SOURCE
#include "bench_loop.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/env.h"
#include "os/os.h"

#define ROUNDS 3

/* ---- what both files share ----------------------------------------------------------
 */

#define SPEC_FMT                                                               \
    "loopspec: \"0.1\"\nid: %s\npattern: react\n"                              \
    "state:\n  vars:\n    n: {type: int, init: 0}\n"                           \
    "body:\n  - id: s\n%s    on_done:\n      incr: n\n"                        \
    "terminate:\n  signal: state-predicate\n  until: \"${state.n >= %lld}\"\n" \
    "caps:\n  max_iterations: %lld\n"

char *bench_loop_spec_text(const char *id, const char *kind_lines, int64_t until)
{
    long long cap = (long long)until * 2 + 10;
    int len = snprintf(NULL, 0, SPEC_FMT, id, kind_lines, (long long)until, cap);
    char *s = len > 0 ? malloc((size_t)len + 1) : NULL;

    if (!s)
        bench_die_errno("malloc");
    snprintf(s, (size_t)len + 1, SPEC_FMT, id, kind_lines, (long long)until, cap);
    return s;
}

lil_spec *bench_loop_spec(const char *id, const char *kind_lines, int64_t until)
{
    char *text = bench_loop_spec_text(id, kind_lines, until);
    lil_spec *spec = NULL;
    lil_status rc = lil_spec_parse(NULL, "bench.yaml", text, strlen(text), NULL, &spec);

    free(text);
    if (rc != LIL_OK)
        bench_die("lil_spec_parse", rc, lil_errmsg());
    if (!lil_spec_ok(spec)) {
        const lil_diag *d = lil_spec_diag(spec, 0);
        bench_die("the benchmark's loop spec", LIL_E_SPEC, d ? d->message : "");
    }
    return spec;
}

lil_loop *bench_loop_open(lil_store *st, const lil_spec *spec, const char *run_id,
                          lil_sync sync, lil_loop_progress_fn fn, void *ud)
{
    lil_loop_opts opts = {.struct_size = sizeof(opts),
                          .run_id = run_id,
                          .sync = sync,
                          .progress = fn,
                          .progress_ud = ud};
    lil_loop *lp = NULL;
    lil_status rc = lil_loop_open(st, spec, &opts, &lp);

    if (rc != LIL_OK)
        bench_die("lil_loop_open", rc, lil_store_errmsg(st));
    return lp;
}

void bench_loop_run_close(lil_loop *lp, int64_t iterations)
{
    lil_loop_result res = {0};
    lil_status rc = lil_loop_run(lp, &res);

    if (rc != LIL_OK)
        bench_die("lil_loop_run", rc, lil_loop_errmsg(lp));
    if (res.status != LIL_LOOP_COMPLETED || res.iteration != iterations) {
        fprintf(stderr, "lil_bench: loop %s ended %s after %lld iterations: %s\n",
                lil_loop_run_id(lp), lil_loop_status_name(res.status),
                (long long)res.iteration, res.reason ? res.reason : "");
        exit(1);
    }
    lil_loop_result_free(&res);
    rc = lil_loop_close(lp);
    if (rc != LIL_OK)
        bench_die("lil_loop_close", rc, "");
}

struct bench_mark bench_mark_now(void)
{
    struct bench_mark m;

    m.cpu_ns = bench_cpu_ns();
    m.wall_ns = bench_now_ns();
    return m;
}

/* ---- overhead: the runner beside lil_step and lil_effect
 * ----------------------------- */

/* Per unit of work: CPU and wall µs. */
struct cost {
    double cpu_us;
    double wall_us;
};

static struct cost cost_since(struct bench_mark m0, size_t n)
{
    struct bench_mark m1 = bench_mark_now();
    struct cost c = {(double)(m1.cpu_ns - m0.cpu_ns) / 1e3 / (double)n,
                     (double)(m1.wall_ns - m0.wall_ns) / 1e3 / (double)n};
    return c;
}

/* The median round, by CPU time. */
static struct cost median_cost(struct cost *c, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && c[j].cpu_us < c[j - 1].cpu_us; j--) {
            struct cost t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
        }
    return c[n / 2];
}

static struct cost time_loop(lil_store *st, const lil_spec *spec, size_t round,
                             size_t n)
{
    char id[32];
    struct bench_mark m0;
    lil_loop *lp;
    struct cost c;

    snprintf(id, sizeof(id), "loop-ovh-%zu", round);
    lp = bench_loop_open(st, spec, id, LIL_SYNC_OFF, NULL, NULL);
    m0 = bench_mark_now();
    bench_loop_run_close(lp, (int64_t)n);
    c = cost_since(m0, n);
    return c;
}

/* n new core steps (effect: lil_effect with a request the size of the
 * loop's identity) on a fresh run with sync=off. */
static struct cost time_core(const struct bench_cfg *cfg, lil_store *st, size_t round,
                             size_t n, bool effect)
{
    static const char request[] =
        "agent {\"harness\":\"internal\",\"prompt\":\"noop\"}";
    struct bench_payload p = {bench_payload_bytes(cfg->payload_len), cfg->payload_len,
                              0};
    char id[32];
    lil_run *run;
    struct bench_mark m0;
    struct cost c;

    snprintf(id, sizeof(id), "loop-core-%s-%zu", effect ? "e" : "s", round);
    run = bench_open_run(st, id, LIL_SYNC_OFF);
    m0 = bench_mark_now();
    for (size_t i = 0; i < n; i++) {
        lil_status rc = effect ? lil_effect(run, "e", request, sizeof(request) - 1,
                                            bench_fill_fn, &p, NULL)
                               : lil_step(run, "s", bench_fill_fn, &p, NULL);
        if (rc != LIL_OK)
            bench_die(effect ? "lil_effect" : "lil_step", rc, lil_run_errmsg(run));
    }
    c = cost_since(m0, n);
    if (lil_run_close(run) != LIL_OK)
        bench_die("lil_run_close", LIL_E_IO, "");
    return c;
}

static void cost_row(const char *what, struct cost c, const char *target, int verdict)
{
    char buf[160];

    snprintf(buf, sizeof(buf), "CPU %.2f µs, wall %.2f µs", c.cpu_us, c.wall_us);
    bench_row(what, buf, target, verdict);
}

static void overhead(const struct bench_cfg *cfg, lil_store *st)
{
    struct cost lp[ROUNDS], step[ROUNDS], eff[ROUNDS], l, s, e;
    size_t n = cfg->loop_iters;
    lil_spec *spec = bench_loop_spec("loop-ovh", BENCH_LOOP_AGENT, (int64_t)n);
    char what[96], buf[160];

    fprintf(stderr, "loop runner: %d rounds of %zu iterations, steps, effects\n",
            ROUNDS, n);
    for (size_t r = 0; r < ROUNDS; r++) {
        lp[r] = time_loop(st, spec, r, n);
        step[r] = time_core(cfg, st, r, n, false);
        eff[r] = time_core(cfg, st, r, n, true);
    }
    lil_spec_free(spec);
    l = median_cost(lp, ROUNDS);
    s = median_cost(step, ROUNDS);
    e = median_cost(eff, ROUNDS);
    snprintf(what, sizeof(what), "runner: 1 internal agent effect/iteration (%zu it.)",
             n);
    cost_row(what, l, "≤ 10 µs (CPU)", l.cpu_us <= 10.0);
    cost_row("core: lil_step, 1 append (200-byte result)", s, "", -1);
    cost_row("core: lil_effect, 2 appends (intent + outcome)", e, "", -1);
    snprintf(buf, sizeof(buf), "%.2f× (CPU), %.2f× (wall)",
             l.cpu_us / (e.cpu_us + s.cpu_us), l.wall_us / (e.wall_us + s.wall_us));
    bench_row("iteration vs lil_effect + lil_step (its 3 records)", buf, "", -1);
}

/* ---- fdatasync per effect: a counting system-call table
 * -------------------------------- */

static atomic_ulong n_fdatasync, n_fsync, n_pwrite, n_pread;

static int count_fdatasync(int fd)
{
    atomic_fetch_add(&n_fdatasync, 1);
    return lil__os_posix.fdatasync(fd);
}

static int count_fsync(int fd)
{
    atomic_fetch_add(&n_fsync, 1);
    return lil__os_posix.fsync(fd);
}

static ssize_t count_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    atomic_fetch_add(&n_pwrite, 1);
    return lil__os_posix.pwrite(fd, buf, n, off);
}

static ssize_t count_pread(int fd, void *buf, size_t n, off_t off)
{
    atomic_fetch_add(&n_pread, 1);
    return lil__os_posix.pread(fd, buf, n, off);
}

struct counts {
    unsigned long fdatasync, fsync, pwrite, pread;
};

static struct counts counts_now(void)
{
    struct counts c = {atomic_load(&n_fdatasync), atomic_load(&n_fsync),
                       atomic_load(&n_pwrite), atomic_load(&n_pread)};
    return c;
}

/* The counters at the start of iteration `first` and of iteration `last`. */
struct sync_probe {
    int64_t first, last;
    struct counts at_first, at_last;
};

static void sync_progress(void *ud, const lil_loop_event *ev)
{
    struct sync_probe *p = ud;

    if (ev->kind != LIL_LOOP_EV_ITERATION)
        return;
    if (ev->iteration == p->first)
        p->at_first = counts_now();
    if (ev->iteration == p->last)
        p->at_last = counts_now();
}

/* Run n + 1 iterations of kind_lines with sync; the counts of iterations
 * 1 .. n-1 (the steady state: open, the first iteration and the end are
 * left out), divided by their number into *per. */
static void count_syncs(lil_store *st, const char *kind_lines, const char *id,
                        lil_sync sync, size_t n, double per[3])
{
    struct sync_probe p = {.first = 1, .last = (int64_t)n};
    lil_spec *spec = bench_loop_spec(id, kind_lines, (int64_t)n + 1);
    lil_loop *lp = bench_loop_open(st, spec, id, sync, sync_progress, &p);
    double k = (double)(n - 1);

    bench_loop_run_close(lp, (int64_t)n + 1);
    lil_spec_free(spec);
    per[0] = (double)(p.at_last.fdatasync - p.at_first.fdatasync) / k;
    per[1] = (double)(p.at_last.fsync - p.at_first.fsync) / k;
    per[2] = (double)(p.at_last.pwrite - p.at_first.pwrite) / k;
}

/* The store at dir opened with an env whose system-call table counts. */
static lil_store *counting_store(const char *dir, lil_env **env_out)
{
    static struct lil_os table;
    lil_env *env = NULL;
    lil_store *st = NULL;
    lil_status rc = lil_env_new(&env);

    if (rc != LIL_OK)
        bench_die("lil_env_new", rc, "");
    table = lil__os_posix;
    table.fdatasync = count_fdatasync;
    table.fsync = count_fsync;
    table.pwrite = count_pwrite;
    table.pread = count_pread;
    lil__env_set_os(env, &table);
    rc = lil_store_open(env, dir, &st);
    if (rc != LIL_OK)
        bench_die("lil_store_open", rc, lil_errmsg());
    *env_out = env;
    return st;
}

static void sync_row(lil_store *st, lil_sync sync, size_t n)
{
    const char *mode = sync == LIL_SYNC_FULL ? "full" : "normal";
    double a[3], s[3];
    char what[96], buf[160], id[32];
    bool ok;

    snprintf(id, sizeof(id), "loop-syncs-agent-%s", mode);
    count_syncs(st, BENCH_LOOP_AGENT, id, sync, n, a);
    snprintf(id, sizeof(id), "loop-syncs-shell-%s", mode);
    count_syncs(st, BENCH_LOOP_SHELL, id, sync, n, s);
    snprintf(what, sizeof(what), "fdatasync per effect, sync=%s (%zu iterations)", mode,
             n - 1);
    snprintf(buf, sizeof(buf),
             "agent %.2f, shell %.2f (fsync %.2f, %.2f; pwrite %.2f, %.2f)", a[0], s[0],
             a[1], s[1], a[2], s[2]);
    ok = sync == LIL_SYNC_FULL
             ? a[0] <= 2.0 && s[0] <= 2.0
             : a[0] >= 0.9 && a[0] <= 1.1 && s[0] >= 0.9 && s[0] <= 1.1;
    ok = ok && a[1] == 0 && s[1] == 0;
    bench_row(what, buf, sync == LIL_SYNC_FULL ? "≤ 2, no fsync" : "≈ 1, no fsync", ok);
}

static void syncs(const struct bench_cfg *cfg)
{
    char dir[4200];
    lil_env *env = NULL;
    lil_store *st;

    snprintf(dir, sizeof(dir), "%s/store-syncs", cfg->dir);
    st = counting_store(dir, &env);

    fprintf(stderr, "loop runner: system calls per effect, %zu iterations each\n",
            cfg->loop_sync_iters);
    sync_row(st, LIL_SYNC_FULL, cfg->loop_sync_iters);
    sync_row(st, LIL_SYNC_NORMAL, cfg->loop_sync_iters);
    lil_store_close(st);
    lil_env_free(env);
}

/* ---- the open of a long run, in-process
 * ------------------------------------------------ */

#define OPEN_REPS 5

void bench_loop_open_cost(const char *store_dir, const lil_spec *spec,
                          int64_t iterations)
{
    lil_env *env = NULL;
    lil_store *st = counting_store(store_dir, &env);
    struct cost c[OPEN_REPS], med;
    unsigned long preads = 0;
    char buf[160];

    for (size_t r = 0; r < OPEN_REPS; r++) {
        struct counts c0 = counts_now();
        struct bench_mark m0 = bench_mark_now();
        lil_loop *lp = bench_loop_open(st, spec, NULL, LIL_SYNC_OFF, NULL, NULL);

        c[r] = cost_since(m0, 1);
        preads = counts_now().pread - c0.pread;
        if (lil_loop_close(lp) != LIL_OK)
            bench_die("lil_loop_close", LIL_E_IO, "");
    }
    med = median_cost(c, OPEN_REPS);
    snprintf(buf, sizeof(buf),
             "CPU %.2f ms, wall %.2f ms (p50 of %d); %lu pread = %.1f per iteration",
             med.cpu_us / 1e3, med.wall_us / 1e3, OPEN_REPS, preads,
             (double)preads / (double)iterations);
    bench_row("lil_loop_open of that run, in-process (info)", buf, "", -1);
    lil_store_close(st);
    lil_env_free(env);
}

/* ---- flatness: windows of one long run
 * -------------------------------------------------- */

#define NWIN 4

/* Window w is iterations [from[w], to[w]); the clocks at both ends. */
struct flat_probe {
    int64_t from[NWIN], to[NWIN];
    struct bench_mark at_from[NWIN], at_to[NWIN];
};

static void flat_progress(void *ud, const lil_loop_event *ev)
{
    struct flat_probe *p = ud;

    if (ev->kind != LIL_LOOP_EV_ITERATION)
        return;
    for (int w = 0; w < NWIN; w++) {
        if (ev->iteration == p->from[w])
            p->at_from[w] = bench_mark_now();
        if (ev->iteration == p->to[w])
            p->at_to[w] = bench_mark_now();
    }
}

static struct cost window_cost(const struct flat_probe *p, int w)
{
    double n = (double)(p->to[w] - p->from[w]);
    struct cost c = {(double)(p->at_to[w].cpu_ns - p->at_from[w].cpu_ns) / 1e3 / n,
                     (double)(p->at_to[w].wall_ns - p->at_from[w].wall_ns) / 1e3 / n};
    return c;
}

static void flat_rows(const struct flat_probe *p)
{
    struct cost c[NWIN];
    double lo = 0, hi = 0;
    char what[96], buf[160];

    for (int w = 0; w < NWIN; w++) {
        c[w] = window_cost(p, w);
        lo = w == 0 || c[w].cpu_us < lo ? c[w].cpu_us : lo;
        hi = w == 0 || c[w].cpu_us > hi ? c[w].cpu_us : hi;
        snprintf(what, sizeof(what), "iterations %lld-%lld, per iteration",
                 (long long)p->from[w] + 1, (long long)p->to[w]);
        cost_row(what, c[w], "", -1);
    }
    snprintf(
        buf, sizeof(buf), "%.2f× (CPU), %.2f× (wall); max/min of the four %.2f× (CPU)",
        c[NWIN - 1].cpu_us / c[0].cpu_us, c[NWIN - 1].wall_us / c[0].wall_us, hi / lo);
    bench_row("last window / first", buf, "flat: ≤ 1.5× (CPU)",
              c[NWIN - 1].cpu_us <= 1.5 * c[0].cpu_us);
}

static void flatness(const struct bench_cfg *cfg, lil_store *st)
{
    int64_t last = (int64_t)cfg->loop_flat_iters;
    struct flat_probe p = {.from = {0, 0, last / 10 - 1000, last - 1000},
                           .to = {10, 1000, last / 10, last}};
    /* a few iterations past the last window, so that its end is an
     * iteration's start too */
    lil_spec *spec = bench_loop_spec("loop-flat", BENCH_LOOP_AGENT, last + 10);
    lil_loop *lp =
        bench_loop_open(st, spec, "loop-flat", LIL_SYNC_OFF, flat_progress, &p);

    fprintf(stderr, "loop runner: one run of %lld iterations\n", (long long)last + 10);
    bench_loop_run_close(lp, last + 10);
    lil_spec_free(spec);
    flat_rows(&p);
}

/* ---- compaction: resume time of long runs
 * --------------------------------------------- */

/* Thresholds out of reach: the rows above measure an iteration, not the
 * compaction that a long run meets now and then (its rows are below). */
#define COMPACT_NEVER "1000000000000"
#define COMPACT_EVERY 10000 /* LIL_COMPACT_ITERATIONS's default */
#define COMPACT_RUNS  3

/* Stops the run (resumable: it opens again to go on) at an iteration. */
struct stop_at {
    lil_loop *lp;
    int64_t at;
};

static void stop_at_progress(void *ud, const lil_loop_event *ev)
{
    struct stop_at *s = ud;

    if (ev->kind == LIL_LOOP_EV_ITERATION && ev->iteration == s->at && s->lp)
        lil_loop_interrupt(s->lp, LIL_LOOP_INTERRUPT_STOP);
}

/* A run stopped after n iterations (so that an open resumes it), compacting
 * every COMPACT_EVERY; the CPU µs per iteration of making it. */
static double build_compacting(lil_store *st, const lil_spec *spec, const char *id,
                               int64_t n)
{
    struct stop_at stop = {NULL, n};
    lil_loop_result res = {0};
    char every[32];
    struct bench_mark m0;
    lil_status rc;

    snprintf(every, sizeof(every), "%d", COMPACT_EVERY);
    setenv("LIL_COMPACT_ITERATIONS", every, 1);
    stop.lp = bench_loop_open(st, spec, id, LIL_SYNC_OFF, stop_at_progress, &stop);
    m0 = bench_mark_now();
    rc = lil_loop_run(stop.lp, &res);
    if (rc != LIL_OK || res.status != LIL_LOOP_STOPPED)
        bench_die("lil_loop_run (to be stopped)", rc, lil_loop_errmsg(stop.lp));
    lil_loop_result_free(&res);
    if (lil_loop_close(stop.lp) != LIL_OK)
        bench_die("lil_loop_close", LIL_E_IO, "");
    setenv("LIL_COMPACT_ITERATIONS", COMPACT_NEVER, 1);
    return cost_since(m0, (size_t)n).cpu_us;
}

/* The median CPU and wall ms of lil_loop_open + close of run id: the
 * resume of a stopped run, the replay it needs before going on. */
static struct cost reopen_ms(lil_store *st, const lil_spec *spec, const char *id)
{
    struct cost c[OPEN_REPS];

    for (size_t r = 0; r < OPEN_REPS; r++) {
        struct bench_mark m0 = bench_mark_now();
        lil_loop *lp = bench_loop_open(st, spec, id, LIL_SYNC_OFF, NULL, NULL);

        if (lil_loop_close(lp) != LIL_OK)
            bench_die("lil_loop_close", LIL_E_IO, "");
        c[r] = cost_since(m0, 1000);
    }
    return median_cost(c, OPEN_REPS);
}

static void compaction(const struct bench_cfg *cfg, lil_store *st)
{
    int64_t n[COMPACT_RUNS] = {10000, 100000, cfg->quick ? 200000 : 1000000};
    struct cost open[COMPACT_RUNS];
    char what[128], buf[200];

    bench_section(
        "loop runner: compaction every 10,000 iterations, resume of a stopped run");
    for (int i = 0; i < COMPACT_RUNS; i++) {
        int64_t until = n[i];
        lil_spec *spec = bench_loop_spec("loop-compact", BENCH_LOOP_AGENT, 2 * until);
        char id[48];
        double build;

        snprintf(id, sizeof(id), "loop-compact-%lld", (long long)until);
        fprintf(stderr, "loop runner: a run of %lld iterations, compacting\n",
                (long long)until);
        build = build_compacting(st, spec, id, until);
        open[i] = reopen_ms(st, spec, id);
        snprintf(what, sizeof(what),
                 "resume: lil_loop_open of a stopped %lld-iteration run",
                 (long long)until);
        snprintf(
            buf, sizeof(buf),
            "CPU %.2f ms, wall %.2f ms (p50 of %d); made at %.2f µs CPU per iteration, "
            "compactions included",
            open[i].cpu_us, open[i].wall_us, OPEN_REPS, build);
        bench_row(what, buf, "", -1);
        lil_spec_free(spec);
    }
    snprintf(what, sizeof(what), "resume at %lld iterations / at 10,000",
             (long long)n[2]);
    snprintf(buf, sizeof(buf), "%.2f× (CPU), %.2f× (wall)",
             open[2].cpu_us / open[0].cpu_us, open[2].wall_us / open[0].wall_us);
    bench_row(what, buf, "flat (≤ 1.5×, CPU)", open[2].cpu_us <= 1.5 * open[0].cpu_us);
}

void bench_loop(const struct bench_cfg *cfg, lil_store *st)
{
    setenv("LIL_COMPACT_ITERATIONS", COMPACT_NEVER, 1);
    setenv("LIL_COMPACT_BYTES", COMPACT_NEVER, 1);
    bench_section("loop runner: one effect per iteration, beside the core");
    overhead(cfg, st);
    syncs(cfg);
    flatness(cfg, st);
    bench_loop_resume(cfg, st);
    bench_loop_shell(cfg, st);
    bench_loop_big(cfg, st);
    compaction(cfg, st);
    unsetenv("LIL_COMPACT_ITERATIONS");
    unsetenv("LIL_COMPACT_BYTES");
}
