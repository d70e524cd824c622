/*
 * bench_append.c -- the cost of running a new step (one journal append) in
 * each sync mode, the journal bytes a step takes, and whether an append
 * stays as cheap when the journal already holds a million records.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Run n new steps named name on run, timing each one (µs into us). */
static void timed_steps(lil_run *run, const char *name, size_t n, size_t payload_len,
                        double *us)
{
    struct bench_payload p = {bench_payload_bytes(payload_len), payload_len, 0};
    for (size_t i = 0; i < n; i++) {
        lil_bytes out;
        uint64_t t0 = bench_now_ns();
        lil_status rc = lil_step(run, name, bench_fill_fn, &p, &out);
        if (rc != LIL_OK)
            bench_die("lil_step", rc, lil_run_errmsg(run));
        lil_free(out.data);
        if (us)
            us[i] = (double)(bench_now_ns() - t0) / 1e3;
    }
    if (p.calls != n) {
        fprintf(stderr, "lil_bench: %zu new steps ran %llu functions\n", n,
                (unsigned long long)p.calls);
        exit(1);
    }
}

#define BATCHES 8

struct mode_result {
    struct bench_stats s;
    double batch_mean; /* µs, median of the batch means */
};

static struct mode_result mode_loop(const struct bench_cfg *cfg, lil_store *st,
                                    const char *id, lil_sync sync, size_t n)
{
    struct mode_result r;
    double *us = malloc(n * sizeof(*us));
    if (!us)
        bench_die_errno("malloc");
    lil_run *run = bench_open_run(st, id, sync);
    timed_steps(run, "s", n, cfg->payload_len, us);
    lil_status rc = lil_run_close(run);
    if (rc != LIL_OK)
        bench_die("lil_run_close", rc, "");
    r.batch_mean = bench_batch_mean(us, n, BATCHES);
    r.s = bench_stats_of(us, n);
    free(us);
    return r;
}

static void mode_row(const char *what, const struct mode_result *r, const char *target,
                     int verdict)
{
    char buf[160];
    snprintf(buf, sizeof(buf), "%.2f µs/step (p50 %.2f, p99 %.2f, plain mean %.2f)",
             r->batch_mean, r->s.p50, r->s.p99, r->s.mean);
    bench_row(what, buf, target, verdict);
}

/* The floor for sync=off: one pwrite of the same bytes per step into
 * space fallocated 1 MiB at a time, no fdatasync (what survives a process
 * crash needs at least the bytes in the kernel's page cache). */
static struct mode_result raw_nosync(const struct bench_cfg *cfg, size_t n)
{
    struct mode_result r;
    char path[4200];
    unsigned char *rec = calloc(1, BENCH_REC_OVERHEAD + 256 + cfg->payload_len);
    double *us = malloc(n * sizeof(*us));
    off_t off = 64, alloc = 64;

    snprintf(path, sizeof(path), "%s/raw-nosync.bin", cfg->dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || !rec || !us)
        bench_die_errno(path);
    memcpy(rec + 64, bench_payload_bytes(cfg->payload_len), cfg->payload_len);
    for (size_t i = 1; i <= n; i++) {
        size_t len = BENCH_REC_OVERHEAD + bench_identity_len("s", i) + cfg->payload_len;
        uint64_t t0 = bench_now_ns();
        if (off + (off_t)len > alloc) {
            if (fallocate(fd, 0, alloc, 1 << 20))
                bench_die_errno("fallocate");
            alloc += 1 << 20;
        }
        if (pwrite(fd, rec, len, off) != (ssize_t)len)
            bench_die_errno("pwrite");
        us[i - 1] = (double)(bench_now_ns() - t0) / 1e3;
        off += (off_t)len;
    }
    close(fd);
    unlink(path);
    r.batch_mean = bench_batch_mean(us, n, BATCHES);
    r.s = bench_stats_of(us, n);
    free(us);
    free(rec);
    return r;
}

void bench_sync_modes(const struct bench_cfg *cfg, lil_store *st)
{
    char what[96], buf[160];
    struct mode_result r, raw;

    r = mode_loop(cfg, st, "mode-normal", LIL_SYNC_NORMAL, cfg->fast_steps);
    snprintf(what, sizeof(what), "sync=normal (%zu steps)", cfg->fast_steps);
    mode_row(what, &r, "", -1);
    r = mode_loop(cfg, st, "mode-off", LIL_SYNC_OFF, cfg->fast_steps);
    snprintf(what, sizeof(what), "sync=off (%zu steps)", cfg->fast_steps);
    mode_row(what, &r, "≤ 3 µs/step", r.batch_mean <= 3.0);
    raw = raw_nosync(cfg, cfg->fast_steps);
    mode_row("raw pwrite, no fdatasync (info: floor for off)", &raw, "", -1);
    snprintf(buf, sizeof(buf), "%.2f× (%.2f µs above the floor)",
             r.batch_mean / raw.batch_mean, r.batch_mean - raw.batch_mean);
    bench_row("sync=off vs raw pwrite", buf, "", -1);
}

static uint64_t journal_bytes(lil_run *run)
{
    lil_run_info info = {.struct_size = sizeof(info)};
    lil_status rc = lil_run_get_info(run, &info);
    if (rc != LIL_OK)
        bench_die("lil_run_get_info", rc, lil_run_errmsg(run));
    return info.journal_bytes;
}

void bench_bytes(const struct bench_cfg *cfg, lil_store *st)
{
    size_t n = cfg->fast_steps / 4;
    lil_run *run = bench_open_run(st, "bytes", LIL_SYNC_OFF);
    uint64_t before = journal_bytes(run);
    double names = 0;
    char buf[160], target[48];

    timed_steps(run, "s", n, cfg->payload_len, NULL);
    uint64_t after = journal_bytes(run);
    lil_status rc = lil_run_close(run);
    if (rc != LIL_OK)
        bench_die("lil_run_close", rc, "");
    for (size_t i = 1; i <= n; i++)
        names += (double)bench_identity_len("s", i);
    names /= (double)n;

    double base = (double)cfg->payload_len + names;
    double total = (double)after / (double)n;
    double marginal = (double)(after - before) / (double)n;
    bench_section("journal size");
    snprintf(buf, sizeof(buf),
             "%.1f B/step marginal (%.1f with header and open records, %zu steps); "
             "payload+name %.1f",
             marginal, total, n, base);
    snprintf(target, sizeof(target), "≤ %.1f B (payload+name+64)", base + 64);
    bench_row("journal bytes per step", buf, target, marginal <= base + 64 + 1e-9);
}

/* ---- flat append and replay over one big journal ----------------------- */

struct flat_point {
    size_t at;    /* records already in the journal */
    double mean;  /* µs per append, median of the batch means */
    double p50;
};

static void flat_measure(const struct bench_cfg *cfg, lil_run *run, struct flat_point *pt)
{
    size_t n = cfg->flat_window;
    double *us = malloc(n * sizeof(*us));
    if (!us)
        bench_die_errno("malloc");
    /* Another name, so that the "s" sequence replayed below stays whole. */
    timed_steps(run, "m", n, cfg->payload_len, us);
    pt->mean = bench_batch_mean(us, n, BATCHES);
    pt->p50 = bench_stats_of(us, n).p50;
    free(us);
}

static uint64_t records_of(lil_run *run)
{
    lil_run_info info = {.struct_size = sizeof(info)};
    lil_status rc = lil_run_get_info(run, &info);
    if (rc != LIL_OK)
        bench_die("lil_run_get_info", rc, lil_run_errmsg(run));
    return info.records;
}

static void flat_rows(const struct bench_cfg *cfg, const struct flat_point *pts, size_t n)
{
    char buf[160], what[96];
    double lo = pts[0].mean, hi = pts[0].mean;

    bench_section("append cost (sync=off) vs records already in the journal");
    for (size_t i = 0; i < n; i++) {
        snprintf(what, sizeof(what), "append at %zu records", pts[i].at);
        snprintf(buf, sizeof(buf), "mean %.2f µs, p50 %.2f µs (%zu appends)", pts[i].mean,
                 pts[i].p50, cfg->flat_window);
        bench_row(what, buf, "", -1);
        lo = pts[i].mean < lo ? pts[i].mean : lo;
        hi = pts[i].mean > hi ? pts[i].mean : hi;
    }
    snprintf(buf, sizeof(buf), "max/min of the means: %.2f×", hi / lo);
    bench_row("flatness", buf, "flat (≤ 1.5×)", hi / lo <= 1.5);
}

static void replay_rows(const struct bench_cfg *cfg, size_t n, double open_s,
                        double replay_s)
{
    char buf[160], what[96], target[48];
    double rate = (double)n / replay_s;
    double scale = 1e6 / (double)n;

    bench_section("replay (reopen the run, replay every completed step)");
    snprintf(buf, sizeof(buf), "%.2f M steps/s (%zu steps in %.3f s; median of %zu)",
             rate / 1e6, n, replay_s, cfg->replay_reps);
    bench_row("replay speed", buf, "≥ 2 M steps/s", rate >= 2e6);
    snprintf(what, sizeof(what), "open + replay of %zu steps", n);
    snprintf(buf, sizeof(buf), "%.3f s (open %.3f s + replay %.3f s)%s",
             open_s + replay_s, open_s, replay_s, scale > 1.0 ? ", quick: scaled" : "");
    snprintf(target, sizeof(target), "< %.3g s", 1.0 / scale);
    bench_row(what, buf, target, (open_s + replay_s) * scale < 1.0);
}

/* Reopen run "big" and replay its n "s" steps; seconds in *open_s, *replay_s. */
static void replay_once(const struct bench_cfg *cfg, lil_store *st, size_t n,
                        double *open_s, double *replay_s)
{
    struct bench_payload p = {bench_payload_bytes(cfg->payload_len), cfg->payload_len,
                              0};
    lil_run_opts opts = {.struct_size = sizeof(opts), .sync = LIL_SYNC_OFF};
    lil_run *run = NULL;

    uint64_t t0 = bench_now_ns();
    lil_status rc = lil_run_open(st, "big", &opts, &run);
    if (rc != LIL_OK)
        bench_die("lil_run_open", rc, lil_store_errmsg(st));
    uint64_t t1 = bench_now_ns();
    for (size_t i = 0; i < n; i++) {
        lil_bytes out;
        rc = lil_step(run, "s", bench_fill_fn, &p, &out);
        if (rc != LIL_OK)
            bench_die("lil_step (replay)", rc, lil_run_errmsg(run));
        lil_free(out.data);
    }
    uint64_t t2 = bench_now_ns();
    if (p.calls != 0) {
        fprintf(stderr, "lil_bench: replay ran %llu step functions\n",
                (unsigned long long)p.calls);
        exit(1);
    }
    lil_run_close(run);
    *open_s = (double)(t1 - t0) / 1e9;
    *replay_s = (double)(t2 - t1) / 1e9;
}

/* Open + replay cfg->replay_reps times; the repetition with the median total
 * is reported. */
static void replay_big(const struct bench_cfg *cfg, lil_store *st, size_t n)
{
    double open_s[16], replay_s[16], total[16];
    size_t reps = cfg->replay_reps < 16 ? cfg->replay_reps : 16, best = 0;

    for (size_t i = 0; i < reps; i++) {
        replay_once(cfg, st, n, &open_s[i], &replay_s[i]);
        total[i] = open_s[i] + replay_s[i];
    }
    /* The median: the rep with as many totals below it as above. */
    for (size_t i = 0; i < reps; i++) {
        size_t below = 0;
        for (size_t k = 0; k < reps; k++)
            below += total[k] < total[i] || (total[k] == total[i] && k < i);
        if (below == reps / 2)
            best = i;
    }
    replay_rows(cfg, n, open_s[best], replay_s[best]);
}

void bench_flat_and_replay(const struct bench_cfg *cfg, lil_store *st)
{
    struct flat_point pts[3];
    size_t at[3] = {1000, cfg->big_steps / 10, cfg->big_steps};
    size_t done = 0;
    lil_run *run = bench_open_run(st, "big", LIL_SYNC_OFF);

    for (size_t i = 0; i < 3; i++) {
        /* Grow the "s" sequence to at[i] steps, then time appends there. */
        timed_steps(run, "s", at[i] - done, cfg->payload_len, NULL);
        done = at[i];
        pts[i].at = (size_t)records_of(run);
        flat_measure(cfg, run, &pts[i]);
    }
    lil_status rc = lil_run_close(run);
    if (rc != LIL_OK)
        bench_die("lil_run_close", rc, "");
    flat_rows(cfg, pts, 3);
    replay_big(cfg, st, done);
}
