/*
 * bench_resume.c -- resume latency: the time from starting a process to
 * having its next step durable, when its run already holds many completed
 * steps.  Measured as fork + exec + wait of bench_resume_child (open the
 * run, replay every completed step, run one new step with sync=full,
 * close), beside fork + exec + wait of bench_noop (a C program that does
 * nothing).  The difference is what lil adds to a restart.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* fork + execv + waitpid, µs.  The child must exit 0. */
static double spawn_us(char *const argv[])
{
    int status;
    uint64_t t0 = bench_now_ns();
    pid_t pid = fork();
    if (pid < 0)
        bench_die_errno("fork");
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    if (waitpid(pid, &status, 0) != pid)
        bench_die_errno("waitpid");
    double us = (double)(bench_now_ns() - t0) / 1e3;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "lil_bench: %s failed (status 0x%x)\n", argv[0], status);
        exit(1);
    }
    return us;
}

static void make_resume_run(const struct bench_cfg *cfg, lil_store *st)
{
    struct bench_payload p = {bench_payload_bytes(cfg->payload_len), cfg->payload_len,
                              0};
    lil_run *run = bench_open_run(st, "resume", LIL_SYNC_OFF);
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

void bench_resume(const struct bench_cfg *cfg, lil_store *st)
{
    char child[4096], noop[4096], store[4096], id[] = "resume", done[32], plen[32];
    char buf[160], what[96];
    size_t n = cfg->resume_reps;
    double *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));

    if (!a || !b)
        bench_die_errno("malloc");
    snprintf(child, sizeof(child), "%s/bench_resume_child", cfg->bin_dir);
    snprintf(noop, sizeof(noop), "%s/bench_noop", cfg->bin_dir);
    snprintf(store, sizeof(store), "%s", lil_store_path(st));
    make_resume_run(cfg, st);

    char *noop_argv[] = {noop, NULL};
    spawn_us(noop_argv); /* warm the page cache for both programs */
    for (size_t i = 0; i < n; i++) {
        /* Each child replays every step done so far and adds one. */
        snprintf(done, sizeof(done), "%zu", cfg->resume_steps + i);
        snprintf(plen, sizeof(plen), "%zu", cfg->payload_len);
        char *child_argv[] = {child, store, id, done, plen, NULL};
        b[i] = spawn_us(noop_argv);
        a[i] = spawn_us(child_argv);
    }
    struct bench_stats sa = bench_stats_of(a, n), sb = bench_stats_of(b, n);
    free(a);
    free(b);

    bench_section("resume latency (fork + exec + wait, sync=full)");
    snprintf(what, sizeof(what), "resume: replay %zu steps + 1 new step", cfg->resume_steps);
    snprintf(buf, sizeof(buf), "p50 %.2f ms, mean %.2f ms (%zu runs)", sa.p50 / 1e3,
             sa.mean / 1e3, n);
    bench_row(what, buf, "", -1);
    snprintf(buf, sizeof(buf), "p50 %.2f ms, mean %.2f ms", sb.p50 / 1e3, sb.mean / 1e3);
    bench_row("bare C program (does nothing)", buf, "", -1);
    double diff = (sa.p50 - sb.p50) / 1e3;
    snprintf(buf, sizeof(buf), "%.2f ms (p50), %.2f ms (mean)", diff,
             (sa.mean - sb.mean) / 1e3);
    bench_row("difference", buf, "< 5 ms (p50)", diff < 5.0);
}
