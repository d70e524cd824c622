/*
 * bench_raw.c -- the physical limit beside lil with sync=full: what a
 * careful program that appends the same bytes as lil and fdatasyncs each
 * one can do on this disk, and what lil_step does.
 *
 * Each raw step writes one record of exactly the size lil writes for that
 * step (64 bytes of overhead + identity + payload) at the end of the file
 * and fdatasyncs it.  Three ways:
 *
 *   naive     pwrite at the end; the file grows, so every fdatasync also
 *             commits the new size (a filesystem journal commit on ext4).
 *   prealloc  fallocate the file 1 MiB at a time, then pwrite into that
 *             space (what lil does).  On ext4 fallocated space is
 *             "unwritten": the first write into a block still changes
 *             metadata that the fdatasync must commit.
 *   prezeroed (informational) the space was written with zeros and synced
 *             beforehand, so an fdatasync only flushes data blocks: the
 *             lowest possible cost of a synced append on this disk.
 *
 * A disk shared with other tenants drifts, so the four loops run in
 * interleaved rounds (a slice of each per round) rather than one after the
 * other, and each sees the same conditions.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define CHUNK  (1u << 20)
#define ROUNDS 8

enum raw_mode { RAW_NAIVE, RAW_PREALLOC, RAW_PREZEROED };

struct raw {
    enum raw_mode mode;
    char path[4200];
    int fd;
    off_t off;
    off_t alloc;
    size_t i;   /* steps done */
    double *us; /* one sample per step */
    unsigned char *rec;
};

static void zero_fill(int fd, off_t from, off_t len)
{
    static unsigned char zeros[CHUNK];
    for (off_t done = 0; done < len;) {
        size_t n =
            (size_t)(len - done) < sizeof(zeros) ? (size_t)(len - done) : sizeof(zeros);
        ssize_t w = pwrite(fd, zeros, n, from + done);
        if (w <= 0)
            bench_die_errno("zero fill");
        done += w;
    }
    if (fsync(fd))
        bench_die_errno("fsync");
}

static void raw_open(struct raw *r, const struct bench_cfg *cfg, enum raw_mode mode,
                     const char *name)
{
    static const unsigned char header[64] = {0x89, 'L', 'I', 'L'};
    size_t n = cfg->sync_steps;

    memset(r, 0, sizeof(*r));
    r->mode = mode;
    snprintf(r->path, sizeof(r->path), "%s/%s", cfg->dir, name);
    r->fd = open(r->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (r->fd < 0)
        bench_die_errno(r->path);
    if (pwrite(r->fd, header, sizeof(header), 0) != (ssize_t)sizeof(header) ||
        fsync(r->fd))
        bench_die_errno("raw header");
    r->off = 64;
    r->us = malloc(n * sizeof(*r->us));
    r->rec = calloc(1, BENCH_REC_OVERHEAD + 256 + cfg->payload_len);
    if (!r->us || !r->rec)
        bench_die_errno("malloc");
    if (mode == RAW_PREZEROED) {
        /* Room for every record, written and synced before the clock runs. */
        off_t room = (off_t)((n + 1) * (BENCH_REC_OVERHEAD + 32 + cfg->payload_len));
        zero_fill(r->fd, 64, room);
        r->alloc = 64 + room;
    } else {
        r->alloc = mode == RAW_PREALLOC ? 64 : INT64_MAX;
    }
}

/* Make room for n bytes at the end (timed: part of the append cost, as it
 * is in lil). */
static void ensure_space(struct raw *r, size_t n)
{
    while (r->off + (off_t)n > r->alloc) {
        if (r->mode != RAW_PREALLOC)
            bench_die_errno("raw space exhausted");
        if (fallocate(r->fd, 0, r->alloc, CHUNK))
            bench_die_errno("fallocate");
        r->alloc += CHUNK;
    }
}

static void raw_steps(struct raw *r, const struct bench_cfg *cfg, size_t count)
{
    const unsigned char *payload = bench_payload_bytes(cfg->payload_len);

    for (size_t k = 0; k < count; k++) {
        size_t klen = bench_identity_len("s", ++r->i);
        size_t len = BENCH_REC_OVERHEAD + klen + cfg->payload_len;
        memcpy(r->rec + 32 + klen, payload, cfg->payload_len);
        r->rec[0] = (unsigned char)len;
        uint64_t t0 = bench_now_ns();
        ensure_space(r, len);
        if (pwrite(r->fd, r->rec, len, r->off) != (ssize_t)len)
            bench_die_errno("pwrite");
        if (fdatasync(r->fd))
            bench_die_errno("fdatasync");
        r->us[r->i - 1] = (double)(bench_now_ns() - t0) / 1e3;
        r->off += (off_t)len;
    }
}

static struct bench_stats raw_close(struct raw *r)
{
    close(r->fd);
    unlink(r->path);
    struct bench_stats s = bench_stats_of(r->us, r->i);
    free(r->us);
    free(r->rec);
    return s;
}

/* sync=full steps on run, continuing its sequence. */
static void full_steps(lil_run *run, const struct bench_cfg *cfg, double *us,
                       size_t *done, size_t count)
{
    struct bench_payload p = {bench_payload_bytes(cfg->payload_len), cfg->payload_len,
                              0};
    for (size_t k = 0; k < count; k++) {
        lil_bytes out;
        uint64_t t0 = bench_now_ns();
        lil_status rc = lil_step(run, "s", bench_fill_fn, &p, &out);
        if (rc != LIL_OK)
            bench_die("lil_step", rc, lil_run_errmsg(run));
        lil_free(out.data);
        us[(*done)++] = (double)(bench_now_ns() - t0) / 1e3;
    }
    if (p.calls != count)
        bench_die("lil_step", LIL_E_INVAL, "a new step did not run its function");
}

static void row_stats(const char *what, const struct bench_stats *s)
{
    char buf[160];
    snprintf(buf, sizeof(buf), "p50 %.1f µs, p99 %.1f µs, mean %.1f µs", s->p50, s->p99,
             s->mean);
    bench_row(what, buf, "", -1);
}

static void ratio_row(const char *what, const struct bench_stats *lil,
                      const struct bench_stats *raw)
{
    char buf[160];
    snprintf(buf, sizeof(buf), "%.2f× (p50), %.2f× (mean)", lil->p50 / raw->p50,
             lil->mean / raw->mean);
    bench_row(what, buf, "", -1);
}

void bench_raw_and_full(const struct bench_cfg *cfg, lil_store *st)
{
    struct raw naive, prealloc, prezeroed;
    size_t n = cfg->sync_steps, done = 0;
    double *us = malloc(n * sizeof(*us));
    lil_run *run = bench_open_run(st, "mode-full", LIL_SYNC_FULL);

    if (!us)
        bench_die_errno("malloc");
    raw_open(&naive, cfg, RAW_NAIVE, "raw-naive.bin");
    raw_open(&prealloc, cfg, RAW_PREALLOC, "raw-prealloc.bin");
    raw_open(&prezeroed, cfg, RAW_PREZEROED, "raw-prezeroed.bin");
    for (size_t round = 0; round < ROUNDS; round++) {
        size_t count = n / ROUNDS + (round < n % ROUNDS);
        raw_steps(&naive, cfg, count);
        raw_steps(&prealloc, cfg, count);
        raw_steps(&prezeroed, cfg, count);
        full_steps(run, cfg, us, &done, count);
    }
    lil_status rc = lil_run_close(run);
    if (rc != LIL_OK)
        bench_die("lil_run_close", rc, "");

    struct bench_stats sn = raw_close(&naive), sp = raw_close(&prealloc),
                       sz = raw_close(&prezeroed), sl = bench_stats_of(us, done);
    free(us);

    bench_section("physical limit: raw append + fdatasync of the same bytes");
    row_stats("raw, naive (pwrite at end, file grows)", &sn);
    row_stats("raw, fallocate 1 MiB chunks", &sp);
    row_stats("raw, pre-zeroed space (info: floor)", &sz);
    bench_section("lil_step, new step with a 200-byte result");
    row_stats("sync=full", &sl);
    ratio_row("sync=full vs raw naive", &sl, &sn);
    ratio_row("sync=full vs raw fallocate", &sl, &sp);
    ratio_row("sync=full vs raw pre-zeroed (info)", &sl, &sz);
}
