/*
 * bench_util.c -- clock, statistics, the shared step function, and the
 * result table that lil_bench prints at the end (markdown, so a run can be
 * pasted into docs/performance.md as is).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bench_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

struct bench_stats bench_stats_of(double *samples, size_t n)
{
    struct bench_stats s = {0};
    double sum = 0;

    if (n == 0)
        return s;
    qsort(samples, n, sizeof(*samples), cmp_double);
    for (size_t i = 0; i < n; i++)
        sum += samples[i];
    s.n = n;
    s.mean = sum / (double)n;
    s.p50 = samples[n / 2];
    s.p99 = samples[(size_t)((double)(n - 1) * 0.99)];
    s.min = samples[0];
    s.max = samples[n - 1];
    return s;
}

double bench_batch_mean(const double *samples, size_t n, size_t batches)
{
    double means[64];

    if (batches > 64)
        batches = 64;
    if (batches > n)
        batches = n;
    if (batches == 0)
        return 0;
    for (size_t b = 0; b < batches; b++) {
        size_t lo = n * b / batches, hi = n * (b + 1) / batches;
        double sum = 0;
        for (size_t i = lo; i < hi; i++)
            sum += samples[i];
        means[b] = sum / (double)(hi - lo);
    }
    return bench_stats_of(means, batches).p50;
}

size_t bench_identity_len(const char *name, size_t i)
{
    char buf[256];
    bench_identity(buf, sizeof(buf), name, i);
    return strlen(buf);
}

void bench_identity(char *buf, size_t cap, const char *name, size_t i)
{
    if (i <= 1)
        snprintf(buf, cap, "%s", name);
    else
        snprintf(buf, cap, "%s#%zu", name, i);
}

int bench_fill_fn(lil_call *call, void *ud)
{
    struct bench_payload *p = ud;
    p->calls++;
    return lil_call_set_result(call, p->data, p->len) == LIL_OK ? 0 : 1;
}

const void *bench_payload_bytes(size_t len)
{
    static unsigned char buf[1 << 16];
    static size_t filled;

    if (len > sizeof(buf))
        len = sizeof(buf);
    /* Printable, not all zero, the same in every run. */
    for (; filled < sizeof(buf); filled++)
        buf[filled] = (unsigned char)('a' + (filled * 7) % 26);
    return buf;
}

lil_run *bench_open_run(lil_store *st, const char *id, lil_sync sync)
{
    lil_run_opts opts = {.struct_size = sizeof(opts), .sync = sync};
    lil_run *run = NULL;
    lil_status rc = lil_run_open(st, id, &opts, &run);
    if (rc != LIL_OK)
        bench_die("lil_run_open", rc, lil_store_errmsg(st));
    return run;
}

void bench_die(const char *what, lil_status rc, const char *msg)
{
    fprintf(stderr, "lil_bench: %s: %s (%s): %s\n", what, lil_status_name(rc),
            lil_strerror(rc), msg ? msg : "");
    exit(1);
}

void bench_die_errno(const char *what)
{
    fprintf(stderr, "lil_bench: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* ---- the table -------------------------------------------------------- */

struct row {
    char what[96];
    char result[200];
    char target[48];
    int verdict; /* 1 PASS, 0 MISS, -1 none, -2 section title */
};

/* Every row of the run, in order; the table grows as rows come. */
static struct row *rows;
static size_t nrows, cap_rows;

static void add(const char *what, const char *result, const char *target, int verdict)
{
    struct row *r;

    if (nrows == cap_rows) {
        size_t cap = cap_rows ? 2 * cap_rows : 128;
        struct row *grown = realloc(rows, cap * sizeof(*rows));
        if (!grown)
            bench_die_errno("realloc (the table's rows)");
        rows = grown;
        cap_rows = cap;
    }
    r = &rows[nrows++];
    snprintf(r->what, sizeof(r->what), "%s", what);
    snprintf(r->result, sizeof(r->result), "%s", result ? result : "");
    snprintf(r->target, sizeof(r->target), "%s", target ? target : "");
    r->verdict = verdict;
}

void bench_section(const char *title)
{
    add(title, "", "", -2);
}

void bench_row(const char *what, const char *result, const char *target, int verdict)
{
    add(what, result, target, verdict);
    /* Also as it happens, so a long run shows progress. */
    fprintf(stderr, "  %-48s %s%s%s\n", what, result,
            target && *target ? "  target " : "", target ? target : "");
}

void bench_print_table(void)
{
    int pass = 0, miss = 0;

    printf("| measurement | result | target | |\n");
    printf("|---|---|---|---|\n");
    for (size_t i = 0; i < nrows; i++) {
        const struct row *r = &rows[i];
        if (r->verdict == -2) {
            printf("| **%s** | | | |\n", r->what);
            continue;
        }
        const char *v = r->verdict == 1 ? "PASS" : r->verdict == 0 ? "MISS" : "";
        pass += r->verdict == 1;
        miss += r->verdict == 0;
        printf("| %s | %s | %s | %s |\n", r->what, r->result, r->target, v);
    }
    printf("\n%d targets met, %d missed\n", pass, miss);
}
