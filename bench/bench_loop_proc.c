/*
 * bench_loop_proc.c -- the loop runner's rows that start processes:
 *
 *   resume  a loop run holding 10k committed iterations (made in-process
 *           with sync=off), then `lil --dir STORE step SPEC` -- process
 *           start, store and run open, the fold of the journal, one
 *           iteration with the default sync (full) -- beside a bare
 *           `lil --version`, each fork + exec + wait, alternating with
 *           (info) `lil step SPEC --sync off`, whose iteration waits for no
 *           disk; the difference of the medians is what the runner adds to
 *           a restart.  Target: < 50 ms.
 *   shell   one shell step per iteration at sync=off, `cmd: "true"` (run
 *           by /bin/sh -c) and (info) `cmd: /bin/true, args: []` (no
 *           shell), beside the bare posix_spawn + waitpid of /bin/true.
 *           The bare spawn runs inside the progress callback at the start
 *           of every iteration, so the two alternate and see the same
 *           machine; an iteration's time is from the callback's return to
 *           the next callback.  Both get the scrubbed environment the
 *           runner gives its children (lil__effect_env_build, internal).
 *           Target: runner ≤ 1.3 × bare (p50).
 *   read    (info) `lil inspect RUN` and `lil log RUN --jsonl` of the
 *           resume row's run (10k+ iterations, about 30k records), each
 *           fork + exec + wait with its output on /dev/null, alternating
 *           with the bare `lil --version` of the resume row.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/env.h"
#include "bench_loop.h"
#include "effects/effect_env.h"
#include "os/os.h"

#define WARMUP       5
#define RESUME_ITERS 10000

/* ---- resume through the command ----------------------------------------------------
 */

/* fork + exec of argv with stdout and stderr on /dev/null, then wait4:
 * wall µs; the child's CPU µs into *cpu_us.  Its exit status must be one
 * of ok0 and ok1. */
static double command_us(char *const argv[], int ok0, int ok1, double *cpu_us)
{
    int status;
    struct rusage ru;
    uint64_t t0 = bench_now_ns();
    pid_t pid = fork();

    if (pid < 0)
        bench_die_errno("fork");
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    if (wait4(pid, &status, 0, &ru) != pid)
        bench_die_errno("wait4");
    double us = (double)(bench_now_ns() - t0) / 1e3;
    *cpu_us = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
              (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    if (!WIFEXITED(status) ||
        (WEXITSTATUS(status) != ok0 && WEXITSTATUS(status) != ok1)) {
        fprintf(stderr, "lil_bench: %s %s failed (status 0x%x)\n", argv[0],
                argv[1] ? argv[1] : "", status);
        exit(1);
    }
    return us;
}

/* The spec file and its run of RESUME_ITERS committed iterations, which
 * goes on (its terminate is far away); the spec as loaded. */
static lil_spec *make_resume_run(const struct bench_cfg *cfg, lil_store *st, char *path,
                                 size_t cap)
{
    char *text = bench_loop_spec_text("loop-resume", BENCH_LOOP_AGENT, 1000000000);
    lil_spec *spec = NULL;
    lil_status rc;
    FILE *f;

    snprintf(path, cap, "%s/loop-resume.yaml", cfg->dir);
    if (!(f = fopen(path, "w")) || fputs(text, f) < 0 || fclose(f))
        bench_die_errno(path);
    free(text);
    rc = lil_spec_load(NULL, path, NULL, &spec);
    if (rc != LIL_OK || !lil_spec_ok(spec))
        bench_die("lil_spec_load", rc ? rc : LIL_E_SPEC, path);
    lil_loop *lp = bench_loop_open(st, spec, NULL, LIL_SYNC_OFF, NULL, NULL);
    for (int i = 0; i < RESUME_ITERS; i++) {
        lil_loop_result res = {0};
        rc = lil_loop_step(lp, &res);
        if (rc != LIL_OK || res.status != LIL_LOOP_WAITING)
            bench_die("lil_loop_step", rc ? rc : LIL_E_INVAL, lil_loop_errmsg(lp));
        lil_loop_result_free(&res);
    }
    if ((rc = lil_loop_close(lp)) != LIL_OK)
        bench_die("lil_loop_close", rc, "");
    return spec;
}

/* Wall time and the child's CPU time of one command's runs. */
struct command_stats {
    struct bench_stats wall, cpu;
};

static void command_row(const char *what, double *us, double *cpu, size_t n,
                        struct command_stats *out)
{
    char buf[160];

    out->wall = bench_stats_of(us, n);
    out->cpu = bench_stats_of(cpu, n);
    snprintf(buf, sizeof(buf), "p50 %.2f ms, mean %.2f ms; child CPU p50 %.2f ms",
             out->wall.p50 / 1e3, out->wall.mean / 1e3, out->cpu.p50 / 1e3);
    bench_row(what, buf, "", -1);
}

static void difference_row(const char *what, const struct command_stats *a,
                           const struct command_stats *bare, const char *target)
{
    char buf[160];
    double diff = (a->wall.p50 - bare->wall.p50) / 1e3;

    snprintf(buf, sizeof(buf), "%.2f ms (p50), %.2f ms (mean); CPU %.2f ms (p50)", diff,
             (a->wall.mean - bare->wall.mean) / 1e3,
             (a->cpu.p50 - bare->cpu.p50) / 1e3);
    bench_row(what, buf, target, *target ? diff < 50.0 : -1);
}

/* The three commands, alternating: wall µs in us[k], the child's CPU in
 * cpu[k], n runs each; `lil step` exits 4 (waiting: more to do). */
enum { BARE, STEP, STEP_OFF, NCMDS };

static void time_commands(char *const *argv[NCMDS], double *us[NCMDS],
                          double *cpu[NCMDS], size_t n)
{
    static const int ok[NCMDS] = {0, 4, 4};
    double unused;

    for (int k = 0; k < NCMDS; k++) /* warm the page cache */
        command_us(argv[k], ok[k], ok[k], &unused);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < NCMDS; k++)
            us[k][i] = command_us(argv[k], ok[k], ok[k], &cpu[k][i]);
}

/* `lil inspect` and `lil log --jsonl` of the resume run, beside the bare
 * start measured with it. */
static void read_rows(char *store, char *lil, size_t n,
                      const struct command_stats *bare)
{
    double *v = calloc((size_t)4 * n, sizeof(double)), unused;
    char dir_opt[] = "--dir", inspect[] = "inspect", logv[] = "log",
         jsonl[] = "--jsonl", run[] = "loop-resume";
    char *insp_argv[] = {lil, dir_opt, store, inspect, run, NULL};
    char *log_argv[] = {lil, dir_opt, store, logv, run, jsonl, NULL};
    struct command_stats s;

    if (!v)
        bench_die_errno("calloc");
    command_us(insp_argv, 0, 0, &unused);
    command_us(log_argv, 0, 0, &unused);
    for (size_t i = 0; i < n; i++) {
        v[i] = command_us(insp_argv, 0, 0, &v[2 * n + i]);
        v[n + i] = command_us(log_argv, 0, 0, &v[3 * n + i]);
    }
    command_row("`lil inspect RUN` of that run (info)", v, v + 2 * n, n, &s);
    difference_row("`lil inspect` − `lil --version` (info)", &s, bare, "");
    command_row("`lil log RUN --jsonl` of that run (info)", v + n, v + 3 * n, n, &s);
    difference_row("`lil log --jsonl` − `lil --version` (info)", &s, bare, "");
    free(v);
}

void bench_loop_resume(const struct bench_cfg *cfg, lil_store *st)
{
    size_t n = cfg->loop_resume_reps;
    double *v = calloc((size_t)2 * NCMDS * n, sizeof(double));
    char spec[4200], store[4200], lil[4200], what[96];
    char dir_opt[] = "--dir", version[] = "--version", step[] = "step",
         sync_opt[] = "--sync", off[] = "off";
    struct command_stats s[NCMDS];

    if (!v)
        bench_die_errno("calloc");
    lil_spec *loaded = make_resume_run(cfg, st, spec, sizeof(spec));
    snprintf(store, sizeof(store), "%s", lil_store_path(st));
    snprintf(lil, sizeof(lil), "%s", cfg->lil_path);
    char *bare_argv[] = {lil, version, NULL};
    char *step_argv[] = {lil, dir_opt, store, step, spec, NULL};
    char *off_argv[] = {lil, dir_opt, store, step, spec, sync_opt, off, NULL};
    char *const *argv[NCMDS] = {bare_argv, step_argv, off_argv};
    double *us[NCMDS] = {v, v + n, v + 2 * n},
           *cpu[NCMDS] = {v + 3 * n, v + 4 * n, v + 5 * n};
    fprintf(stderr,
            "loop runner: %zu runs of `lil --version`, `lil step`, ... --sync off\n",
            n);
    time_commands(argv, us, cpu, n);
    command_row("bare `lil --version` (fork + exec + wait)", us[BARE], cpu[BARE], n,
                &s[BARE]);
    snprintf(what, sizeof(what), "`lil step SPEC`, run at %d+ iterations (sync=full)",
             RESUME_ITERS);
    command_row(what, us[STEP], cpu[STEP], n, &s[STEP]);
    difference_row("`lil step` − `lil --version`", &s[STEP], &s[BARE], "< 50 ms (p50)");
    command_row("`lil step SPEC --sync off` (info)", us[STEP_OFF], cpu[STEP_OFF], n,
                &s[STEP_OFF]);
    difference_row("`lil step --sync off` − `lil --version` (info)", &s[STEP_OFF],
                   &s[BARE], "");
    read_rows(store, lil, n, &s[BARE]);
    /* each `lil step` added one iteration (2 warm-up runs, 2 per round) */
    bench_loop_open_cost(store, loaded, RESUME_ITERS + 2 * ((int64_t)n + 1));
    lil_spec_free(loaded);
    free(v);
    unlink(spec);
}

/* ---- a shell step beside posix_spawn ------------------------------------------------
 */

/* The samples of the bare spawns, shared by the runs that alternate. */
struct raw_series {
    double *us;
    size_t n;
    uint64_t cpu_ns;
    long sleeps; /* voluntary context switches of the calling thread */
};

struct shell_probe {
    char *const *envp;
    int64_t first, end; /* iterations measured in the current run: [first, end) */
    struct raw_series *raw;
    double *run_us; /* one sample per iteration, appended run after run */
    size_t nrun;
    uint64_t run_cpu;
    long run_sleeps;
    struct bench_mark left; /* when the callback last returned */
    long left_sleeps;
};

/* Voluntary context switches of the calling thread so far: how often it
 * slept (each sleep on a busy machine may wait for a CPU to wake on). */
static long sleeps_now(void)
{
    struct rusage ru;

    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nvcsw : 0;
}

static void raw_true(char *const *envp)
{
    static char bin_true[] = "/bin/true";
    static char *const argv[] = {bin_true, NULL};
    int status;
    pid_t pid, r;
    int e = posix_spawn(&pid, bin_true, NULL, NULL, argv, envp);

    if (e) {
        errno = e;
        bench_die_errno("posix_spawn /bin/true");
    }
    do
        r = waitpid(pid, &status, 0);
    while (r < 0 && errno == EINTR);
    if (r != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bench_die_errno("waitpid /bin/true");
}

/* At the start of iteration i: close the sample of iteration i-1, then
 * time one bare spawn. */
static void shell_progress(void *ud, const lil_loop_event *ev)
{
    struct shell_probe *p = ud;
    struct raw_series *raw = p->raw;
    struct bench_mark in;
    long sleeps_in;
    int64_t i = ev->iteration;

    if (ev->kind != LIL_LOOP_EV_ITERATION || i < p->first || i > p->end)
        return;
    in = bench_mark_now();
    sleeps_in = sleeps_now();
    if (i > p->first) {
        p->run_us[p->nrun++] = (double)(in.wall_ns - p->left.wall_ns) / 1e3;
        p->run_cpu += in.cpu_ns - p->left.cpu_ns;
        p->run_sleeps += sleeps_in - p->left_sleeps;
    }
    if (i < p->end) {
        raw_true(p->envp);
        struct bench_mark out = bench_mark_now();
        long sleeps_out = sleeps_now();
        raw->us[raw->n++] = (double)(out.wall_ns - in.wall_ns) / 1e3;
        raw->cpu_ns += out.cpu_ns - in.cpu_ns;
        raw->sleeps += sleeps_out - sleeps_in;
    }
    p->left_sleeps = sleeps_now();
    p->left = bench_mark_now();
}

/* Run `round` of `cmd: "true"` (use_sh) or of `cmd: /bin/true, args: []`:
 * n measured iterations after WARMUP. */
static void shell_run(lil_store *st, bool use_sh, size_t round, struct shell_probe *p,
                      size_t n)
{
    int64_t total = WARMUP + (int64_t)n + 1;
    char id[48];
    lil_spec *spec;

    snprintf(id, sizeof(id), "loop-shell-%s-%zu", use_sh ? "sh" : "argv", round);
    spec =
        bench_loop_spec(id, use_sh ? BENCH_LOOP_SHELL : BENCH_LOOP_SHELL_ARGV, total);
    p->first = WARMUP;
    p->end = WARMUP + (int64_t)n;
    bench_loop_run_close(bench_loop_open(st, spec, id, LIL_SYNC_OFF, shell_progress, p),
                         total);
    lil_spec_free(spec);
}

static void spawn_row(const char *what, double *us, uint64_t cpu_ns, long sleeps,
                      size_t n, struct bench_stats *out)
{
    char buf[160];

    *out = bench_stats_of(us, n);
    snprintf(buf, sizeof(buf),
             "p50 %.1f µs, p99 %.1f µs, mean %.1f µs; caller CPU %.1f µs, %.1f sleeps",
             out->p50, out->p99, out->mean, (double)cpu_ns / 1e3 / (double)n,
             (double)sleeps / (double)n);
    bench_row(what, buf, "", -1);
}

static void ratio_row(const char *what, const struct bench_stats *a,
                      const struct bench_stats *raw, const char *target)
{
    char buf[160];

    snprintf(buf, sizeof(buf), "%.2f× (p50), %.2f× (mean)", a->p50 / raw->p50,
             a->mean / raw->mean);
    bench_row(what, buf, target, *target ? a->p50 <= 1.3 * raw->p50 : -1);
}

static void shell_rows(struct raw_series *raw, struct shell_probe *sh,
                       struct shell_probe *argv)
{
    struct bench_stats r, s_sh, s_argv;
    char what[96];

    snprintf(what, sizeof(what), "raw posix_spawn + waitpid of /bin/true (%zu runs)",
             raw->n);
    spawn_row(what, raw->us, raw->cpu_ns, raw->sleeps, raw->n, &r);
    snprintf(what, sizeof(what), "runner: shell `true` per iteration (%zu it.)",
             sh->nrun);
    spawn_row(what, sh->run_us, sh->run_cpu, sh->run_sleeps, sh->nrun, &s_sh);
    ratio_row("runner shell `true` vs raw", &s_sh, &r, "≤ 1.3× (p50)");
    spawn_row("runner: shell /bin/true, args: [] (info)", argv->run_us, argv->run_cpu,
              argv->run_sleeps, argv->nrun, &s_argv);
    ratio_row("runner shell /bin/true, args: [] vs raw (info)", &s_argv, &r, "");
}

/* SHELL_ROUNDS rounds, each a run of `cmd: "true"` and a run of the argv
 * form in turn (the first of the two alternating), so that both see the
 * same machine as the bare spawns they are compared with. */
#define SHELL_ROUNDS 6

void bench_loop_shell(const struct bench_cfg *cfg, lil_store *st)
{
    struct lil_env env;
    struct lil_err err = {0};
    const char **envp = NULL;
    size_t n = cfg->loop_shell_iters, per = n / SHELL_ROUNDS ? n / SHELL_ROUNDS : 1;
    struct raw_series raw = {.us = calloc(2 * per * SHELL_ROUNDS, sizeof(double))};
    struct shell_probe sh = {.raw = &raw}, argv = {.raw = &raw};

    lil__os_env_init(&env);
    if (lil__effect_env_build(&env, &err, NULL, NULL, 0, &envp) != LIL_OK)
        bench_die("lil__effect_env_build", err.code, err.msg);
    sh.run_us = calloc(per * SHELL_ROUNDS, sizeof(double));
    argv.run_us = calloc(per * SHELL_ROUNDS, sizeof(double));
    if (!raw.us || !sh.run_us || !argv.run_us)
        bench_die_errno("calloc");
    sh.envp = argv.envp = (char *const *)(uintptr_t)envp; /* NOLINT: spawn's old type */
    fprintf(stderr, "loop runner: %d rounds of %zu iterations of a shell step, twice\n",
            SHELL_ROUNDS, per);
    for (size_t r = 0; r < SHELL_ROUNDS; r++) {
        bool sh_first = r % 2 == 0;
        shell_run(st, sh_first, r, sh_first ? &sh : &argv, per);
        shell_run(st, !sh_first, r, sh_first ? &argv : &sh, per);
    }
    shell_rows(&raw, &sh, &argv);
    free(raw.us);
    free(sh.run_us);
    free(argv.run_us);
    lil__effect_env_free(&env, envp);
}
