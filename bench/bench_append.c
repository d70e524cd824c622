/*
 * bench_append.c -- the cost of running a new step (one journal append)
 * with sync=normal and sync=off beside the floor (a raw pwrite of the same
 * bytes), the journal bytes a step takes, whether an append stays as cheap
 * when the journal already holds a million records, and how fast a run
 * reopens and replays; and what the rollback record of a keyed run adds
 * to a reopen, a step and a close (bench_record, through the store's
 * internal switch).
 *
 * These loops are CPU-bound (no fdatasync), so besides wall-clock time they
 * measure the calling thread's CPU time: on a machine where other processes
 * compete for the cores, wall time also counts their time slices, which
 * say nothing about lil.  Verdicts use the CPU time; the wall time is
 * printed beside it (on an idle machine the two agree).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "store/store.h" /* the rollback record's switch (bench_record) */

#define ROUNDS  8
#define BATCHES 8
#define CHUNK   (1 << 20)

/* A timed loop's samples: wall µs per step, CPU ns in total. */
struct series {
    double *us;
    size_t n;
    size_t cap;
    uint64_t cpu_ns;
};

static void series_init(struct series *s, size_t cap)
{
    s->us = malloc(cap * sizeof(*s->us));
    s->n = 0;
    s->cap = cap;
    s->cpu_ns = 0;
    if (!s->us)
        bench_die_errno("malloc");
}

struct result {
    struct bench_stats s;
    double wall_us; /* per step: median of the batch means */
    double cpu_us;  /* per step: CPU time / steps */
};

static struct result series_done(struct series *s)
{
    struct result r;
    r.wall_us = bench_batch_mean(s->us, s->n, BATCHES);
    r.cpu_us = (double)s->cpu_ns / 1e3 / (double)s->n;
    r.s = bench_stats_of(s->us, s->n);
    free(s->us);
    s->us = NULL;
    return r;
}

/* Run count new steps named name on run (into s when not NULL). */
static void timed_steps(lil_run *run, const char *name, size_t count,
                        size_t payload_len, struct series *s)
{
    struct bench_payload p = {bench_payload_bytes(payload_len), payload_len, 0};
    uint64_t c0 = bench_cpu_ns();

    for (size_t i = 0; i < count; i++) {
        lil_bytes out;
        uint64_t t0 = bench_now_ns();
        lil_status rc = lil_step(run, name, bench_fill_fn, &p, &out);
        if (rc != LIL_OK)
            bench_die("lil_step", rc, lil_run_errmsg(run));
        lil_free(out.data);
        if (s && s->n < s->cap)
            s->us[s->n++] = (double)(bench_now_ns() - t0) / 1e3;
    }
    if (s)
        s->cpu_ns += bench_cpu_ns() - c0;
    if (p.calls != count) {
        fprintf(stderr, "lil_bench: %zu new steps ran %llu functions\n", count,
                (unsigned long long)p.calls);
        exit(1);
    }
}

/* ---- sync=normal, sync=off and the raw pwrite floor --------------------- */

/* The floor for sync=off: one pwrite of the same bytes per step into space
 * fallocated 1 MiB at a time, no fdatasync.  What survives a process crash
 * must at least be in the kernel's page cache. */
struct raw_nosync {
    char path[4200];
    int fd;
    off_t off;
    off_t alloc;
    size_t i;
    unsigned char *rec;
};

static void raw_nosync_open(struct raw_nosync *r, const struct bench_cfg *cfg)
{
    snprintf(r->path, sizeof(r->path), "%s/raw-nosync.bin", cfg->dir);
    r->fd = open(r->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    r->rec = calloc(1, BENCH_REC_OVERHEAD + 256 + cfg->payload_len);
    if (r->fd < 0 || !r->rec)
        bench_die_errno(r->path);
    memcpy(r->rec + 64, bench_payload_bytes(cfg->payload_len), cfg->payload_len);
    r->off = r->alloc = 64;
    r->i = 0;
}

static void raw_nosync_steps(struct raw_nosync *r, const struct bench_cfg *cfg,
                             size_t count, struct series *s)
{
    uint64_t c0 = bench_cpu_ns();

    for (size_t k = 0; k < count; k++) {
        size_t len =
            BENCH_REC_OVERHEAD + bench_identity_len("s", ++r->i) + cfg->payload_len;
        uint64_t t0 = bench_now_ns();
        if (r->off + (off_t)len > r->alloc) {
            if (fallocate(r->fd, 0, r->alloc, CHUNK))
                bench_die_errno("fallocate");
            r->alloc += CHUNK;
        }
        if (pwrite(r->fd, r->rec, len, r->off) != (ssize_t)len)
            bench_die_errno("pwrite");
        s->us[s->n++] = (double)(bench_now_ns() - t0) / 1e3;
        r->off += (off_t)len;
    }
    s->cpu_ns += bench_cpu_ns() - c0;
}

static void raw_nosync_close(struct raw_nosync *r)
{
    close(r->fd);
    unlink(r->path);
    free(r->rec);
}

static void mode_row(const char *what, const struct result *r, const char *target,
                     int verdict)
{
    char buf[160];
    snprintf(buf, sizeof(buf), "%.2f µs/step CPU; wall %.2f (p50 %.2f, p99 %.2f)",
             r->cpu_us, r->wall_us, r->s.p50, r->s.p99);
    bench_row(what, buf, target, verdict);
}

void bench_sync_modes(const struct bench_cfg *cfg, lil_store *st)
{
    char what[96], buf[160];
    size_t n = cfg->fast_steps;
    struct series sn, so, sr;
    struct raw_nosync raw;
    lil_run *normal = bench_open_run(st, "mode-normal", LIL_SYNC_NORMAL);
    lil_run *off = bench_open_run(st, "mode-off", LIL_SYNC_OFF);

    series_init(&sn, n);
    series_init(&so, n);
    series_init(&sr, n);
    raw_nosync_open(&raw, cfg);
    /* Interleaved rounds: the three loops see the same machine. */
    for (size_t round = 0; round < ROUNDS; round++) {
        size_t count = n / ROUNDS + (round < n % ROUNDS);
        timed_steps(normal, "s", count, cfg->payload_len, &sn);
        timed_steps(off, "s", count, cfg->payload_len, &so);
        raw_nosync_steps(&raw, cfg, count, &sr);
    }
    raw_nosync_close(&raw);
    if (lil_run_close(normal) != LIL_OK || lil_run_close(off) != LIL_OK)
        bench_die("lil_run_close", LIL_E_IO, "");
    struct result rn = series_done(&sn), ro = series_done(&so), rr = series_done(&sr);

    snprintf(what, sizeof(what), "sync=normal (%zu steps)", n);
    mode_row(what, &rn, "", -1);
    snprintf(what, sizeof(what), "sync=off (%zu steps)", n);
    mode_row(what, &ro, "≤ 3 µs/step", ro.cpu_us <= 3.0);
    mode_row("raw pwrite, no fdatasync (info: floor for off)", &rr, "", -1);
    snprintf(buf, sizeof(buf), "%.2f× CPU (+%.2f µs), %.2f× wall",
             ro.cpu_us / rr.cpu_us, ro.cpu_us - rr.cpu_us, ro.wall_us / rr.wall_us);
    bench_row("sync=off vs raw pwrite", buf, "", -1);
}

/* ---- journal bytes per step --------------------------------------------- */

static void run_info(lil_run *run, lil_run_info *info)
{
    info->struct_size = sizeof(*info);
    lil_status rc = lil_run_get_info(run, info);
    if (rc != LIL_OK)
        bench_die("lil_run_get_info", rc, lil_run_errmsg(run));
}

void bench_bytes(const struct bench_cfg *cfg, lil_store *st)
{
    size_t n = cfg->fast_steps / 4;
    lil_run *run = bench_open_run(st, "bytes", LIL_SYNC_OFF);
    lil_run_info before, after;
    double names = 0;
    char buf[160], target[48];

    run_info(run, &before);
    timed_steps(run, "s", n, cfg->payload_len, NULL);
    run_info(run, &after);
    lil_status rc = lil_run_close(run);
    if (rc != LIL_OK)
        bench_die("lil_run_close", rc, "");
    for (size_t i = 1; i <= n; i++)
        names += (double)bench_identity_len("s", i);
    names /= (double)n;

    double base = (double)cfg->payload_len + names;
    double total = (double)after.journal_bytes / (double)n;
    double marginal = (double)(after.journal_bytes - before.journal_bytes) / (double)n;
    bench_section("journal size");
    snprintf(buf, sizeof(buf),
             "%.1f B/step (%.1f with file header and open records; %zu steps); "
             "payload+name %.1f",
             marginal, total, n, base);
    snprintf(target, sizeof(target), "≤ %.1f B (payload+name+64)", base + 64);
    bench_row("journal bytes per step", buf, target, marginal <= base + 64 + 1e-9);
}

/* ---- flat append and replay over one big journal ----------------------- */

struct flat_point {
    size_t at; /* records already in the journal */
    struct result r;
};

static void flat_rows(const struct bench_cfg *cfg, const struct flat_point *pts,
                      size_t n)
{
    char buf[160], what[96];
    double lo = pts[0].r.cpu_us, hi = lo;

    bench_section("append cost (sync=off) vs records already in the journal");
    for (size_t i = 0; i < n; i++) {
        snprintf(what, sizeof(what), "append at %zu records", pts[i].at);
        snprintf(buf, sizeof(buf), "%.2f µs CPU; wall %.2f (p50 %.2f), %zu appends",
                 pts[i].r.cpu_us, pts[i].r.wall_us, pts[i].r.s.p50, cfg->flat_window);
        bench_row(what, buf, "", -1);
        lo = pts[i].r.cpu_us < lo ? pts[i].r.cpu_us : lo;
        hi = pts[i].r.cpu_us > hi ? pts[i].r.cpu_us : hi;
    }
    snprintf(buf, sizeof(buf), "max/min of the CPU µs per append: %.2f×", hi / lo);
    bench_row("flatness", buf, "flat (≤ 1.5×)", hi / lo <= 1.5);
}

struct replay_time {
    size_t steps;                    /* replayed */
    double open_s, replay_s;         /* wall */
    double open_cpu_s, replay_cpu_s; /* CPU of this thread */
};

/* The journal of run "big": "s" steps up to at[i], then flat_window "m"
 * steps, for i = 0, 1, 2. */
struct big_shape {
    size_t at[3];
    size_t window;
};

static size_t replay_steps(lil_run *run, const char *name, size_t n,
                           struct bench_payload *p)
{
    for (size_t i = 0; i < n; i++) {
        lil_bytes out;
        lil_status rc = lil_step(run, name, bench_fill_fn, p, &out);
        if (rc != LIL_OK)
            bench_die("lil_step (replay)", rc, lil_run_errmsg(run));
        lil_free(out.data);
    }
    return n;
}

/* Reopen run "big" and replay it: every step in journal order (what a
 * resuming program does), or only its "s" steps (a program that leaves
 * the journal's order at its first skipped step: replay builds the index). */
static struct replay_time replay_once(const struct bench_cfg *cfg, lil_store *st,
                                      const struct big_shape *b, bool in_order)
{
    struct bench_payload p = {bench_payload_bytes(cfg->payload_len), cfg->payload_len,
                              0};
    lil_run_opts opts = {.struct_size = sizeof(opts), .sync = LIL_SYNC_OFF};
    lil_run *run = NULL;
    struct replay_time t;
    size_t done = 0;

    t.steps = 0;
    uint64_t t0 = bench_now_ns(), c0 = bench_cpu_ns();
    lil_status rc = lil_run_open(st, "big", &opts, &run);
    if (rc != LIL_OK)
        bench_die("lil_run_open", rc, lil_store_errmsg(st));
    uint64_t t1 = bench_now_ns(), c1 = bench_cpu_ns();
    for (size_t i = 0; i < 3; i++) {
        t.steps += replay_steps(run, "s", b->at[i] - done, &p);
        done = b->at[i];
        if (in_order)
            t.steps += replay_steps(run, "m", b->window, &p);
    }
    uint64_t t2 = bench_now_ns(), c2 = bench_cpu_ns();
    if (p.calls != 0) {
        fprintf(stderr, "lil_bench: replay ran %llu step functions\n",
                (unsigned long long)p.calls);
        exit(1);
    }
    lil_run_close(run);
    t.open_s = (double)(t1 - t0) / 1e9;
    t.replay_s = (double)(t2 - t1) / 1e9;
    t.open_cpu_s = (double)(c1 - c0) / 1e9;
    t.replay_cpu_s = (double)(c2 - c1) / 1e9;
    return t;
}

static void replay_rows(const struct bench_cfg *cfg, const struct replay_time *t,
                        const char *how)
{
    char buf[160], what[96], target[48];
    double scale = 1e6 / (double)t->steps;
    double rate = (double)t->steps / t->replay_cpu_s;
    double total = t->open_cpu_s + t->replay_cpu_s;

    snprintf(what, sizeof(what), "replay speed, %s", how);
    snprintf(buf, sizeof(buf), "%.2f M steps/s CPU; wall %.2f M/s (median of %zu)",
             rate / 1e6, (double)t->steps / t->replay_s / 1e6, cfg->replay_reps);
    bench_row(what, buf, "≥ 2 M steps/s", rate >= 2e6);
    snprintf(what, sizeof(what), "open + replay of %zu steps, %s", t->steps, how);
    snprintf(buf, sizeof(buf),
             "%.3f s CPU (open %.3f + replay %.3f); wall %.3f s (open %.3f)%s", total,
             t->open_cpu_s, t->replay_cpu_s, t->open_s + t->replay_s, t->open_s,
             scale > 1.0 ? "; quick: target scaled" : "");
    snprintf(target, sizeof(target), "< %.3g s", 1.0 / scale);
    bench_row(what, buf, target, total * scale < 1.0);
}

/* Open + replay cfg->replay_reps times; the repetition with the median CPU
 * total is reported. */
static void replay_big(const struct bench_cfg *cfg, lil_store *st,
                       const struct big_shape *b, bool in_order)
{
    struct replay_time t[16];
    size_t reps = cfg->replay_reps < 16 ? cfg->replay_reps : 16, mid = 0;

    for (size_t i = 0; i < reps; i++)
        t[i] = replay_once(cfg, st, b, in_order);
    for (size_t i = 0; i < reps; i++) {
        size_t below = 0;
        double ti = t[i].open_cpu_s + t[i].replay_cpu_s;
        for (size_t k = 0; k < reps; k++) {
            double tk = t[k].open_cpu_s + t[k].replay_cpu_s;
            below += tk < ti || (tk == ti && k < i);
        }
        if (below == reps / 2)
            mid = i;
    }
    replay_rows(cfg, &t[mid],
                in_order ? "in journal order" : "\"s\" steps only (index)");
}

void bench_flat_and_replay(const struct bench_cfg *cfg, lil_store *st)
{
    struct flat_point pts[3];
    size_t at[3] = {1000, cfg->big_steps / 10, cfg->big_steps};
    size_t done = 0;
    lil_run *run = bench_open_run(st, "big", LIL_SYNC_OFF);

    for (size_t i = 0; i < 3; i++) {
        /* Grow the "s" sequence to at[i] steps, then time appends there
         * (named "m": the "s" sequence stays whole, so replay can also call
         * it alone). */
        struct series s;
        lil_run_info info;
        timed_steps(run, "s", at[i] - done, cfg->payload_len, NULL);
        done = at[i];
        run_info(run, &info);
        pts[i].at = (size_t)info.records;
        series_init(&s, cfg->flat_window);
        timed_steps(run, "m", cfg->flat_window, cfg->payload_len, &s);
        pts[i].r = series_done(&s);
    }
    lil_status rc = lil_run_close(run);
    if (rc != LIL_OK)
        bench_die("lil_run_close", rc, "");
    flat_rows(cfg, pts, 3);
    struct big_shape b = {{at[0], at[1], at[2]}, cfg->flat_window};
    bench_section("replay (reopen the run, replay its completed steps)");
    replay_big(cfg, st, &b, true);
    replay_big(cfg, st, &b, false);
}

/* ---- the rollback record ------------------------------------------------------ */

/* Wall µs of one cycle on st: open run r (sync full), one new step, close. */
static double one_cycle_us(const struct bench_payload *p, lil_store *st)
{
    struct bench_payload q = *p;
    uint64_t t0 = bench_now_ns();
    lil_run *run = bench_open_run(st, "r", LIL_SYNC_FULL);
    lil_status rc = lil_step(run, "s", bench_fill_fn, &q, NULL);

    if (rc == LIL_OK)
        rc = lil_run_close(run);
    if (rc != LIL_OK)
        bench_die("open, step, close", rc, lil_store_errmsg(st));
    return (double)(bench_now_ns() - t0) / 1e3;
}

/* A keyed run reopened, stepped once and closed, in a store that keeps its
 * rollback record (<store>/<run id>.head: read at open, written at close)
 * and in one that does not (the store's internal switch: a store always
 * keeps it), the two interleaved cycle by cycle so that both see the same
 * disk and the same neighbours; medians. */
void bench_record(const struct bench_cfg *cfg)
{
    struct bench_payload p = {bench_payload_bytes(cfg->payload_len), cfg->payload_len,
                              0};
    size_t n = cfg->resume_reps * 5;
    lil_store *st[2] = {NULL, NULL};
    struct series s[2];
    char dir[4096], res[160];
    double med[2];

    bench_section("rollback record (keyed run: open + 1 step + close, sync full)");
    for (int i = 0; i < 2; i++) {
        snprintf(dir, sizeof(dir), "%s/record-%s", cfg->dir, i ? "off" : "on");
        lil_status rc = lil_store_open(NULL, dir, &st[i]);
        if (rc != LIL_OK)
            bench_die("lil_store_open", rc, lil_errmsg());
        st[i]->no_heads = i == 1;
        series_init(&s[i], n);
    }
    for (size_t k = 0; k < n; k++)
        for (size_t j = 0; j < 2; j++) { /* the order alternates too */
            size_t i = (j + k) % 2;
            s[i].us[s[i].n++] = one_cycle_us(&p, st[i]);
        }
    for (int i = 0; i < 2; i++) {
        med[i] = series_done(&s[i]).s.p50;
        lil_store_close(st[i]);
    }
    snprintf(res, sizeof(res), "%.0f µs with the record, %.0f µs without (%+.0f µs)",
             med[0], med[1], med[0] - med[1]);
    bench_row("open + step + close, keyed", res, "(no target: the cost shown)", -1);
}
