/*
 * bench_resume.c -- resume latency: the time from starting a process to
 * having its next step durable, when its run already holds many completed
 * steps.  Measured as fork + exec + wait of bench_resume_child (open the
 * run, replay every completed step, run one new step with sync=full,
 * close), beside fork + exec + wait of bench_noop (a C program that does
 * nothing).  The difference is what lil adds to a restart.  Two runs: one
 * whose processes close it (a clean restart: the open finds a CLOSE record
 * and has nothing to sync), one whose processes die once their step is
 * durable (a restart after a crash: the open syncs what it found).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* fork + execv + wait4, wall µs; the child's CPU µs (user + system) into
 * *cpu_us.  The child must exit 0. */
static double spawn_us(char *const argv[], double *cpu_us)
{
    int status;
    struct rusage ru;
    uint64_t t0 = bench_now_ns();
    pid_t pid = fork();
    if (pid < 0)
        bench_die_errno("fork");
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    if (wait4(pid, &status, 0, &ru) != pid)
        bench_die_errno("wait4");
    double us = (double)(bench_now_ns() - t0) / 1e3;
    *cpu_us = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
              (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "lil_bench: %s failed (status 0x%x)\n", argv[0], status);
        exit(1);
    }
    return us;
}

static void make_resume_run(const struct bench_cfg *cfg, lil_store *st, const char *id)
{
    struct bench_payload p = {bench_payload_bytes(cfg->payload_len), cfg->payload_len,
                              0};
    lil_run *run = bench_open_run(st, id, LIL_SYNC_OFF);
    for (size_t i = 0; i < cfg->resume_steps; i++) {
        lil_status rc = lil_step(run, "s", bench_fill_fn, &p, NULL);
        if (rc != LIL_OK)
            bench_die("lil_step", rc, lil_run_errmsg(run));
    }
    lil_status rc = lil_run_sync(run);
    if (rc == LIL_OK)
        rc = lil_run_close(run);
    else
        lil_run_close(run);
    if (rc != LIL_OK)
        bench_die("lil_run_close", rc, "");
}

/* Where a resume's time goes inside the child: reps more children, each
 * writing its phases (resume_child.c) to a file; the medians, one row. */
#define PHASES 5

static void phase_row(const char *what, char *const child_argv[], char *done,
                      size_t first, size_t reps)
{
    static const char *names[PHASES] = {"store open", "run open", "replay", "new step",
                                        "close"};
    char path[4200], buf[256], cell[48];
    double *v[PHASES], unused;
    size_t got = 0;
    FILE *f;

    snprintf(path, sizeof(path), "%s/phases.txt", child_argv[1]);
    unlink(path);
    setenv("LIL_BENCH_PHASES", path, 1);
    for (size_t i = 0; i < reps; i++) {
        snprintf(done, 32, "%zu", first + i);
        spawn_us(child_argv, &unused);
    }
    unsetenv("LIL_BENCH_PHASES");
    for (int k = 0; k < PHASES; k++)
        if (!(v[k] = calloc(reps, sizeof(double))))
            bench_die_errno("calloc");
    if ((f = fopen(path, "r")) != NULL) {
        while (got < reps && fscanf(f, "%lf %lf %lf %lf %lf", &v[0][got], &v[1][got],
                                    &v[2][got], &v[3][got], &v[4][got]) == PHASES)
            got++;
        fclose(f);
    }
    buf[0] = '\0';
    for (int k = 0; k < PHASES && got; k++) {
        snprintf(cell, sizeof(cell), "%s%s %.2f", k ? ", " : "", names[k],
                 bench_stats_of(v[k], got).p50);
        strncat(buf, cell, sizeof(buf) - strlen(buf) - 1);
    }
    for (int k = 0; k < PHASES; k++)
        free(v[k]);
    bench_row(what, got ? buf : "no phases written", "", -1);
}

/* The rows of one variant: its p50 and mean beside the bare program's, and
 * the difference against the target. */
static void variant_rows(const char *what, const char *diff_what, double *a, double *ca,
                         const struct bench_stats *sb, const struct bench_stats *scb,
                         size_t n)
{
    struct bench_stats sa = bench_stats_of(a, n), sca = bench_stats_of(ca, n);
    char buf[160];
    double diff = (sa.p50 - sb->p50) / 1e3;

    snprintf(buf, sizeof(buf),
             "p50 %.2f ms, mean %.2f ms; child CPU p50 %.2f ms (%zu runs)",
             sa.p50 / 1e3, sa.mean / 1e3, sca.p50 / 1e3, n);
    bench_row(what, buf, "", -1);
    snprintf(buf, sizeof(buf), "%.2f ms (p50), %.2f ms (mean); CPU %.2f ms", diff,
             (sa.mean - sb->mean) / 1e3, (sca.p50 - scb->p50) / 1e3);
    bench_row(diff_what, buf, "< 5 ms (p50)", diff < 5.0);
}

void bench_resume(const struct bench_cfg *cfg, lil_store *st)
{
    char child[4096], noop[4096], store[4096], clean_id[] = "resume",
                                               died_id[] = "resume-died";
    char done[32], plen[32], die[] = "die", buf[160], what[96];
    size_t n = cfg->resume_reps;
    double *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b)),
           *d = malloc(n * sizeof(*d));
    double *ca = malloc(n * sizeof(*ca)), *cb = malloc(n * sizeof(*cb));
    double *cd = malloc(n * sizeof(*cd)), unused;

    if (!a || !b || !d || !ca || !cb || !cd)
        bench_die_errno("malloc");
    snprintf(child, sizeof(child), "%s/bench_resume_child", cfg->bin_dir);
    snprintf(noop, sizeof(noop), "%s/bench_noop", cfg->bin_dir);
    snprintf(store, sizeof(store), "%s", lil_store_path(st));
    snprintf(plen, sizeof(plen), "%zu", cfg->payload_len);
    make_resume_run(cfg, st, clean_id);
    make_resume_run(cfg, st, died_id);

    char *noop_argv[] = {noop, NULL};
    char *clean_argv[] = {child, store, clean_id, done, plen, NULL};
    char *died_argv[] = {child, store, died_id, done, plen, die, NULL};
    spawn_us(noop_argv, &unused); /* warm the page cache for both programs */
    for (size_t i = 0; i < n; i++) {
        /* Each child replays every step done so far and adds one (both runs
         * have as many). */
        snprintf(done, sizeof(done), "%zu", cfg->resume_steps + i);
        b[i] = spawn_us(noop_argv, &cb[i]);
        a[i] = spawn_us(clean_argv, &ca[i]);
        d[i] = spawn_us(died_argv, &cd[i]);
    }
    struct bench_stats sb = bench_stats_of(b, n), scb = bench_stats_of(cb, n);

    bench_section("resume latency (fork + exec + wait, sync=full)");
    snprintf(buf, sizeof(buf), "p50 %.2f ms, mean %.2f ms; child CPU p50 %.2f ms",
             sb.p50 / 1e3, sb.mean / 1e3, scb.p50 / 1e3);
    bench_row("bare C program (does nothing)", buf, "", -1);
    snprintf(what, sizeof(what), "resume: replay %zu steps + 1 new step, after a close",
             cfg->resume_steps);
    variant_rows(what, "difference, after a close", a, ca, &sb, &scb, n);
    snprintf(what, sizeof(what), "the same after a crash (the last process died)");
    variant_rows(what, "difference, after a crash", d, cd, &sb, &scb, n);
    free(a);
    free(b);
    free(d);
    free(ca);
    free(cb);
    free(cd);
    size_t reps = n / 2 ? n / 2 : 1;
    phase_row("inside the child after a close, ms (p50)", clean_argv, done,
              cfg->resume_steps + n, reps);
    phase_row("inside the child after a crash, ms (p50)", died_argv, done,
              cfg->resume_steps + n, reps);
}
