/*
 * bench_shell.c -- the shell effect (src/effects/effect_shell.h) beside the
 * cheapest way to run a program: posix_spawn of /bin/true + waitpid.
 *
 * Four ways to run /bin/true, interleaved (one of each per iteration, in
 * a rotating order, so that all four see the same machine), each given the
 * same environment -- the scrubbed one the runner passes
 * (lil__effect_env_build, built once):
 *
 *   raw          posix_spawn, no file actions, waitpid: the floor.
 *   raw capture  (info) the same with stdout and stderr on pipes read to
 *                end of file: what any effect that captures output pays.
 *   lil          lil__shell_run of {command: /bin/true}, no shell, default
 *                options (stdin /dev/null, both streams captured, a new
 *                session, every other descriptor closed, the result built).
 *   lil sh       (info) lil__shell_run of the script "true": /bin/sh -c
 *                true, a shell on top.
 *
 * Each row gives the wall time per run (p50, p99, mean) and the CPU time
 * of the calling thread per run: the child's own time (the exec, the
 * dynamic loader) is not in it, so the difference between two rows' CPU
 * is what the caller does differently.
 *
 * Target (docs/performance.md): lil ≤ 1.3 × raw (p50).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "base/env.h"
#include "bench.h"
#include "effects/effect_env.h"
#include "effects/effect_shell.h"
#include "os/os.h"

#define WARMUP 5

static char bin_true[] = "/bin/true";
static char *const true_argv[] = {bin_true, NULL};

enum way { RAW, RAW_CAPTURE, LIL, LIL_SH, NWAYS };

struct shell_bench {
    struct lil_env env;
    const char **envp;      /* scrubbed, built once */
    double *us[NWAYS];      /* wall µs per call */
    uint64_t cpu_ns[NWAYS]; /* CPU of the calling thread, all calls */
};

static void wait_true(pid_t pid)
{
    int status;
    pid_t r;

    do
        r = waitpid(pid, &status, 0);
    while (r < 0 && errno == EINTR);
    if (r != pid)
        bench_die_errno("waitpid");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "lil_bench: /bin/true failed (status 0x%x)\n", status);
        exit(1);
    }
}

/* posix_spawn's prototype predates const; it changes nothing it is given. */
static char *const *strv(const char *const *v)
{
    return (char *const *)(uintptr_t)v; /* NOLINT(performance-no-int-to-ptr) */
}

/* posix_spawn + waitpid, nothing else. */
static void raw_once(const struct shell_bench *b)
{
    pid_t pid;
    int e = posix_spawn(&pid, bin_true, NULL, NULL, true_argv, strv(b->envp));

    if (e) {
        errno = e;
        bench_die_errno("posix_spawn /bin/true");
    }
    wait_true(pid);
}

/* Read both pipes to end of file (poll, so that neither can block the
 * child), then close them. */
static void read_to_eof(int fds[2])
{
    char buf[4096];

    while (fds[0] >= 0 || fds[1] >= 0) {
        struct pollfd p[2] = {{.fd = fds[0], .events = POLLIN},
                              {.fd = fds[1], .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            bench_die_errno("poll");
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i] < 0 || !p[i].revents)
                continue;
            ssize_t r = read(fds[i], buf, sizeof(buf));
            if (r < 0 && errno != EINTR && errno != EAGAIN)
                bench_die_errno("read");
            if (r == 0) {
                close(fds[i]);
                fds[i] = -1; /* poll ignores a negative fd */
            }
        }
    }
}

/* posix_spawn with stdout and stderr on pipes read to end of file. */
static void raw_capture_once(const struct shell_bench *b)
{
    posix_spawn_file_actions_t fa;
    int out[2], err[2], parent[2];
    pid_t pid;
    int e;

    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
        bench_die_errno("pipe2");
    e = posix_spawn_file_actions_init(&fa);
    if (!e)
        e = posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    if (!e)
        e = posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    if (e) {
        errno = e;
        bench_die_errno("posix_spawn_file_actions");
    }
    e = posix_spawn(&pid, bin_true, &fa, NULL, true_argv, strv(b->envp));
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(err[1]);
    if (e) {
        errno = e;
        bench_die_errno("posix_spawn /bin/true");
    }
    parent[0] = out[0];
    parent[1] = err[0];
    read_to_eof(parent);
    wait_true(pid);
}

/* lil__shell_run of cmd; the result must be a success. */
static void lil_once(const struct shell_bench *b, const struct lil_shell_cmd *cmd)
{
    struct lil_shell_opts opts = {.envp = b->envp};
    struct lil_shell_info info;
    struct lil_err err = {0};
    json_t *res = NULL;
    lil_status rc = lil__shell_run(&b->env, &err, cmd, &opts, &info, &res);

    if (rc != LIL_OK)
        bench_die("lil__shell_run", rc, err.msg);
    if (info.exit_code != 0 || !json_is_object(res)) {
        fprintf(stderr, "lil_bench: lil__shell_run of /bin/true: exit %d\n",
                info.exit_code);
        exit(1);
    }
    json_decref(res);
}

static void run_way(const struct shell_bench *b, enum way w)
{
    static const struct lil_shell_cmd direct = {.command = "/bin/true"};
    static const struct lil_shell_cmd script = {.script = "true"};

    switch (w) {
    case RAW:
        raw_once(b);
        break;
    case RAW_CAPTURE:
        raw_capture_once(b);
        break;
    case LIL:
        lil_once(b, &direct);
        break;
    default:
        lil_once(b, &script);
        break;
    }
}

/* p50, p99 and mean of the wall time; the calling thread's CPU per call. */
static void time_row(const char *what, const struct bench_stats *s, uint64_t cpu_ns,
                     size_t n)
{
    char buf[160];

    snprintf(buf, sizeof(buf),
             "p50 %.1f µs, p99 %.1f µs, mean %.1f µs; caller CPU %.1f µs", s->p50,
             s->p99, s->mean, (double)cpu_ns / 1e3 / (double)n);
    bench_row(what, buf, "", -1);
}

static void shell_rows(struct shell_bench *b, size_t n)
{
    struct bench_stats s[NWAYS];
    char buf[160], what[96];

    for (int w = 0; w < NWAYS; w++)
        s[w] = bench_stats_of(b->us[w], n);
    bench_section("shell effect: lil__shell_run beside posix_spawn + waitpid");
    snprintf(what, sizeof(what), "raw posix_spawn + waitpid of /bin/true (%zu runs)",
             n);
    time_row(what, &s[RAW], b->cpu_ns[RAW], n);
    time_row("raw, stdout + stderr piped, read to EOF (info)", &s[RAW_CAPTURE],
             b->cpu_ns[RAW_CAPTURE], n);
    time_row("lil__shell_run {command: /bin/true}", &s[LIL], b->cpu_ns[LIL], n);
    snprintf(buf, sizeof(buf), "%.2f× (p50), %.2f× (mean)", s[LIL].p50 / s[RAW].p50,
             s[LIL].mean / s[RAW].mean);
    bench_row("lil vs raw", buf, "≤ 1.3× (p50)", s[LIL].p50 <= 1.3 * s[RAW].p50);
    snprintf(buf, sizeof(buf), "%.2f× (p50), %.2f× (mean)",
             s[LIL].p50 / s[RAW_CAPTURE].p50, s[LIL].mean / s[RAW_CAPTURE].mean);
    bench_row("lil vs raw with capture (info)", buf, "", -1);
    time_row("lil__shell_run `/bin/sh -c true` (info)", &s[LIL_SH], b->cpu_ns[LIL_SH],
             n);
    snprintf(buf, sizeof(buf), "%.2f× (p50), %.2f× (mean)", s[LIL_SH].p50 / s[RAW].p50,
             s[LIL_SH].mean / s[RAW].mean);
    bench_row("lil `/bin/sh -c true` vs raw (info)", buf, "", -1);
}

void bench_shell(const struct bench_cfg *cfg)
{
    struct shell_bench b;
    struct lil_err err = {0};
    size_t n = cfg->shell_reps;

    lil__os_env_init(&b.env);
    if (lil__effect_env_build(&b.env, &err, NULL, NULL, 0, &b.envp) != LIL_OK)
        bench_die("lil__effect_env_build", err.code, err.msg);
    for (int w = 0; w < NWAYS; w++) {
        b.cpu_ns[w] = 0;
        if (!(b.us[w] = malloc(n * sizeof(double))))
            bench_die_errno("malloc");
    }
    fprintf(stderr, "shell effect: %zu runs of /bin/true each way\n", n);
    for (int i = 0; i < WARMUP; i++)
        for (int w = 0; w < NWAYS; w++)
            run_way(&b, (enum way)w);
    /* Each iteration runs the four once, starting one further along each
     * time, so that none always follows the same one. */
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < NWAYS; k++) {
            int w = (int)((i + (size_t)k) % NWAYS);
            uint64_t c0 = bench_cpu_ns(), t0 = bench_now_ns();
            run_way(&b, (enum way)w);
            b.us[w][i] = (double)(bench_now_ns() - t0) / 1e3;
            b.cpu_ns[w] += bench_cpu_ns() - c0;
        }
    }
    shell_rows(&b, n);
    for (int w = 0; w < NWAYS; w++)
        free(b.us[w]);
    lil__effect_env_free(&b.env, b.envp);
}
