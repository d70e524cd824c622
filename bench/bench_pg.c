/*
 * bench_pg.c -- the PostgreSQL store beside the physical limit of the same
 * server, in the same run (docs/performance.md, "PostgreSQL store").
 *
 *   raw       one INSERT of the bytes lil appends for a step (the record's
 *             frame: 64 bytes of overhead + identity + payload) into a
 *             table shaped like lil's records, committed with
 *             synchronous_commit on: one round trip, one WAL flush.  The
 *             least a durable append to PostgreSQL costs over a connection.
 *   lil       lil_step of a new step on a run of a PostgreSQL store, sync
 *             full: its record committed (and flushed) before it returns.
 *             The two run in interleaved rounds, each on its own connection
 *             to the same server; the ratio lil / raw (target <= 1.2).
 *   group     T threads of one process on one run, sync full, each running
 *             new steps for a fixed time: steps/s for T = 1, 2, 4, 8; one
 *             commit carries the records of every thread waiting (group
 *             commit), so 8 threads should do >= 4x one thread.
 *   raw, 8 connections (informational): 8 threads each INSERTing and
 *             committing on a connection of its own: what the server gives
 *             without batching in the client.
 *
 * lil_bench --pg URL names the server (bench/run.sh starts one with
 * tests/pg/pgserver.sh in its scratch directory); without it the rows say
 * so.  The raw loops use libpq directly; lil uses it through the store.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "bench.h"

#define ROUNDS   8
#define NTHREADS 4
#define SCHEMA   "lil_bench"

static const int thread_counts[NTHREADS] = {1, 2, 4, 8};

static PGconn *connect_raw(const char *url)
{
    PGconn *c = PQconnectdb(url);

    if (PQstatus(c) != CONNECTION_OK)
        bench_die("PQconnectdb", LIL_E_PG, PQerrorMessage(c));
    return c;
}

static void exec_or_die(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);

    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
        bench_die(sql, LIL_E_PG, PQerrorMessage(c));
    PQclear(r);
}

/* The raw table (records' shape) and its insert, on a new connection. */
static PGconn *raw_open(const char *url)
{
    PGconn *c = connect_raw(url);
    PGresult *r;

    exec_or_die(c, "SET synchronous_commit TO on");
    r = PQprepare(c, "ins",
                  "INSERT INTO raw_bench.records (run_id, seq, off, frame) VALUES ($1, "
                  "$2, $3, $4)",
                  4, (const Oid[]){25, 20, 20, 17});
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        bench_die("PQprepare", LIL_E_PG, PQerrorMessage(c));
    PQclear(r);
    return c;
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int k = 0; k < 8; k++)
        p[k] = (unsigned char)(v >> (56 - 8 * k));
}

/* One raw step: the frame of step seq (its identity's length) committed. */
static void raw_step(PGconn *c, const char *run_id, uint64_t seq, unsigned char *frame,
                     size_t len)
{
    unsigned char s[8], o[8];
    const char *vals[4] = {run_id, (const char *)s, (const char *)o,
                           (const char *)frame};
    int lens[4] = {(int)strlen(run_id), 8, 8, (int)len};
    int fmts[4] = {0, 1, 1, 1};
    PGresult *r;

    put64(s, seq);
    put64(o, seq * 300);
    frame[0] = (unsigned char)seq; /* not all equal */
    r = PQexecPrepared(c, "ins", 4, vals, lens, fmts, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        bench_die("INSERT", LIL_E_PG, PQerrorMessage(c));
    PQclear(r);
}

/* ---- one thread: lil beside the raw INSERT + COMMIT -------------------------- */

struct lat {
    PGconn *raw;
    lil_run *run;
    unsigned char *frame;
    double *raw_us, *lil_us;
    size_t raw_n, lil_n;
    struct bench_payload p;
};

static void lat_slice(const struct bench_cfg *cfg, struct lat *l, size_t count)
{
    for (size_t k = 0; k < count; k++) {
        size_t i = l->raw_n + 1;
        size_t len = BENCH_REC_OVERHEAD + bench_identity_len("s", i) + cfg->payload_len;
        uint64_t t0 = bench_now_ns();
        raw_step(l->raw, "r", i, l->frame, len);
        l->raw_us[l->raw_n++] = (double)(bench_now_ns() - t0) / 1e3;
    }
    for (size_t k = 0; k < count; k++) {
        uint64_t t0 = bench_now_ns();
        lil_status rc = lil_step(l->run, "s", bench_fill_fn, &l->p, NULL);
        if (rc != LIL_OK)
            bench_die("lil_step", rc, lil_run_errmsg(l->run));
        l->lil_us[l->lil_n++] = (double)(bench_now_ns() - t0) / 1e3;
    }
}

static void lat_rows(const struct lat *l)
{
    double raw_mean = bench_batch_mean(l->raw_us, l->raw_n, ROUNDS);
    double lil_mean = bench_batch_mean(l->lil_us, l->lil_n, ROUNDS);
    struct bench_stats r = bench_stats_of(l->raw_us, l->raw_n);
    struct bench_stats s = bench_stats_of(l->lil_us, l->lil_n);
    char buf[200];

    bench_section("PostgreSQL store: a durable step beside one INSERT + COMMIT");
    snprintf(buf, sizeof(buf), "%.1f µs/step (p50 %.1f, p99 %.1f)", raw_mean, r.p50,
             r.p99);
    bench_row("raw: INSERT of the same bytes + COMMIT (synchronous_commit on)", buf, "",
              -1);
    snprintf(buf, sizeof(buf), "%.1f µs/step (p50 %.1f, p99 %.1f)", lil_mean, s.p50,
             s.p99);
    bench_row("lil_step, PostgreSQL store, sync=full", buf, "", -1);
    snprintf(buf, sizeof(buf), "%.2f× (mean), %.2f× (p50)", lil_mean / raw_mean,
             s.p50 / r.p50);
    bench_row("lil / raw", buf, "≤ 1.2×", lil_mean / raw_mean <= 1.2);
}

static void bench_pg_latency(const struct bench_cfg *cfg, lil_store *st)
{
    struct lat l = {0};
    size_t n = cfg->sync_steps;

    l.raw = raw_open(cfg->pg);
    l.run = bench_open_run(st, "pg-full", LIL_SYNC_FULL);
    l.frame = calloc(1, BENCH_REC_OVERHEAD + 16 + cfg->payload_len);
    l.raw_us = malloc(n * sizeof(double));
    l.lil_us = malloc(n * sizeof(double));
    l.p = (struct bench_payload){bench_payload_bytes(cfg->payload_len),
                                 cfg->payload_len, 0};
    if (!l.frame || !l.raw_us || !l.lil_us)
        bench_die_errno("malloc");
    for (size_t round = 0; round < ROUNDS; round++)
        lat_slice(cfg, &l, n / ROUNDS + (round < n % ROUNDS));
    if (lil_run_close(l.run) != LIL_OK)
        bench_die("lil_run_close", LIL_E_PG, lil_errmsg());
    lat_rows(&l);
    PQfinish(l.raw);
    free(l.frame);
    free(l.raw_us);
    free(l.lil_us);
}

/* ---- threads ------------------------------------------------------------------ */

struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;
};

struct worker {
    pthread_t tid;
    struct gate *gate;
    lil_run *run; /* lil: the shared run */
    PGconn *raw;  /* raw: its own connection */
    char name[16];
    const struct bench_cfg *cfg;
    uint64_t deadline_ns;
    uint64_t steps;
    lil_status rc;
};

static void gate_wait(struct gate *g)
{
    pthread_mutex_lock(&g->mu);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct bench_payload p = {bench_payload_bytes(w->cfg->payload_len),
                              w->cfg->payload_len, 0};
    size_t len = BENCH_REC_OVERHEAD + 4 + w->cfg->payload_len;
    unsigned char *frame = calloc(1, len);

    gate_wait(w->gate);
    while (frame && w->rc == LIL_OK && bench_now_ns() < w->deadline_ns) {
        if (w->raw)
            raw_step(w->raw, w->name, ++w->steps, frame, len);
        else if ((w->rc = lil_step(w->run, w->name, bench_fill_fn, &p, NULL)) == LIL_OK)
            w->steps++;
    }
    free(frame);
    return NULL;
}

/* nthreads threads for seconds: steps/s (raw: each its own connection). */
static double slice(const struct bench_cfg *cfg, lil_run *run, PGconn **raw,
                    int nthreads, double seconds)
{
    struct worker w[8];
    struct gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    uint64_t t0, steps = 0;
    static int generation;

    generation++;
    for (int i = 0; i < nthreads; i++) {
        w[i] = (struct worker){.gate = &gate,
                               .run = run,
                               .raw = raw ? raw[i] : NULL,
                               .cfg = cfg,
                               .deadline_ns = UINT64_MAX};
        snprintf(w[i].name, sizeof(w[i].name), "t%d-%d", generation, i);
        if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]))
            bench_die_errno("pthread_create");
    }
    pthread_mutex_lock(&gate.mu);
    t0 = bench_now_ns();
    for (int i = 0; i < nthreads; i++)
        w[i].deadline_ns = t0 + (uint64_t)(seconds * 1e9);
    gate.open = 1;
    pthread_cond_broadcast(&gate.cv);
    pthread_mutex_unlock(&gate.mu);
    for (int i = 0; i < nthreads; i++) {
        pthread_join(w[i].tid, NULL);
        if (w[i].rc != LIL_OK)
            bench_die("lil_step (group)", w[i].rc, lil_errmsg());
        steps += w[i].steps;
    }
    return (double)steps / ((double)(bench_now_ns() - t0) / 1e9);
}

static void group_rows(const double *rate, double raw8)
{
    char what[64], buf[160];

    bench_section("PostgreSQL store: group commit (sync=full, T threads, one run)");
    for (int i = 0; i < NTHREADS; i++) {
        int t = thread_counts[i];
        snprintf(what, sizeof(what), "%d thread%s", t, t > 1 ? "s" : "");
        snprintf(buf, sizeof(buf), "%.0f steps/s, %.2f× 1 thread", rate[i],
                 rate[i] / rate[0]);
        bench_row(what, buf, t == 8 ? "≥ 4× 1 thread" : "",
                  t == 8 ? rate[i] / rate[0] >= 4.0 : -1);
    }
    snprintf(buf, sizeof(buf), "%.0f commits/s, %.2f× 1 lil thread", raw8,
             raw8 / rate[0]);
    bench_row("raw: 8 connections, INSERT + COMMIT each", buf, "", -1);
}

static void bench_pg_group(const struct bench_cfg *cfg, lil_store *st)
{
    double rate[NTHREADS] = {0}, raw8 = 0, secs = cfg->group_seconds / ROUNDS;
    lil_run *runs[NTHREADS];
    PGconn *raw[8];

    for (int i = 0; i < NTHREADS; i++) {
        char id[32];
        snprintf(id, sizeof(id), "pg-group-%d", thread_counts[i]);
        runs[i] = bench_open_run(st, id, LIL_SYNC_FULL);
    }
    for (int i = 0; i < 8; i++)
        raw[i] = raw_open(cfg->pg);
    for (int r = 0; r < ROUNDS; r++) { /* interleaved: the same disk for all */
        for (int i = 0; i < NTHREADS; i++)
            rate[i] += slice(cfg, runs[i], NULL, thread_counts[i], secs) / ROUNDS;
        raw8 += slice(cfg, NULL, raw, 8, secs) / ROUNDS;
    }
    for (int i = 0; i < NTHREADS; i++)
        if (lil_run_close(runs[i]) != LIL_OK)
            bench_die("lil_run_close", LIL_E_PG, lil_errmsg());
    for (int i = 0; i < 8; i++)
        PQfinish(raw[i]);
    group_rows(rate, raw8);
}

/* ---- set-up ------------------------------------------------------------------- */

/* A fresh schema for lil (lil db init) and one for the raw table. */
static lil_store *pg_setup(const struct bench_cfg *cfg)
{
    char where[2048];
    lil_schema_info info = {.struct_size = sizeof(info)};
    lil_store *st = NULL;
    PGconn *c = connect_raw(cfg->pg);
    lil_status rc;

    exec_or_die(c, "DROP SCHEMA IF EXISTS " SCHEMA " CASCADE");
    exec_or_die(c, "DROP SCHEMA IF EXISTS raw_bench CASCADE");
    exec_or_die(c, "CREATE SCHEMA raw_bench");
    exec_or_die(c,
                "CREATE TABLE raw_bench.records (run_id text COLLATE \"C\" NOT NULL, "
                "seq bigint NOT NULL, off bigint NOT NULL, frame bytea NOT NULL, "
                "PRIMARY KEY (run_id, seq))");
    exec_or_die(c, "ALTER TABLE raw_bench.records ALTER COLUMN frame SET STORAGE "
                   "EXTERNAL");
    PQfinish(c);
    snprintf(where, sizeof(where), "%s%sschema=" SCHEMA, cfg->pg,
             strchr(cfg->pg, '?') ? "&" : "?");
    rc = lil_store_schema(NULL, where, LIL_SCHEMA_INIT, &info);
    if (rc == LIL_OK)
        rc = lil_store_open(NULL, where, &st);
    if (rc != LIL_OK)
        bench_die("lil_store_open (PostgreSQL)", rc, lil_errmsg());
    return st;
}

void bench_pg(const struct bench_cfg *cfg)
{
    lil_store *st;

    if (!cfg->pg) {
        bench_section("PostgreSQL store");
        bench_row("PostgreSQL store",
                  "not run: no server (lil_bench --pg URL; "
                  "bench/run.sh starts one when PostgreSQL is installed)",
                  "", -1);
        return;
    }
    st = pg_setup(cfg);
    bench_pg_latency(cfg, st);
    bench_pg_group(cfg, st);
    lil_store_close(st);
}
