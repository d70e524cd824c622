/*
 * bench_workers.c -- `lil worker` processes sharing the queued loop runs
 * of a PostgreSQL store, beside the commit rate of the same server in the
 * same run (docs/performance.md, "Workers").
 *
 *   workers   K runs are queued (lil_loop_submit), then W `lil worker
 *             --idle-exit 0` processes are started and timed until the
 *             last one exits (the queue empty): runs/s for W = 1, 2, 4.
 *             A run is a loop of two iterations whose step is an agent
 *             step of the `internal` harness: an effect (intent, outcome)
 *             with no process and no network, so a run costs what lil and
 *             the server do -- claim, open, start record, two intents, two
 *             outcomes, two snapshots, the queue state, close -- and the
 *             numbers show the store, not a program.  The server's
 *             transactions per run (pg_stat_database's xact_commit over
 *             the runs) are printed with each point.
 *   raw       W threads, each INSERTing and committing (synchronous_commit
 *             on) on a connection of its own for a fixed time: the commits
 *             per second the server gives W clients, the limit a worker's
 *             synchronous commits meet.
 *
 * The points are interleaved rounds (workers W, raw W) so that the machine's
 * state is the same for both.  Verdict: 4 workers run at least 2x the runs
 * of one, or the server is the limit -- their synchronous commits reach 70%
 * of what 4 raw connections commit.  lil_bench --pg URL names the server
 * (bench/run.sh starts one); without it the rows say so.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "bench.h"

#define SCHEMA  "lil_bench_w"
#define NPOINTS 3
#define ROUNDS  2

static const int worker_counts[NPOINTS] = {1, 2, 4};

static const char spec_text[] = "loopspec: \"0.1\"\n"
                                "id: w\n"
                                "pattern: react\n"
                                "state:\n"
                                "  vars:\n"
                                "    n: {type: int, init: 0}\n"
                                "body:\n"
                                "  - id: think\n"
                                "    kind: agent\n"
                                "    harness: internal\n"
                                "    prompt: \"go on\"\n"
                                "    on_done:\n"
                                "      incr: n\n"
                                "terminate:\n"
                                "  signal: state-predicate\n"
                                "  until: \"${state.n >= 2}\"\n"
                                "caps:\n"
                                "  max_iterations: 5\n";

static PGconn *connect_or_die(const char *url)
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

/* The server's committed transactions so far (its statistics, flushed by
 * the backends that ended). */
static long long commits(PGconn *c)
{
    PGresult *r;
    long long n;

    exec_or_die(c, "SELECT pg_stat_clear_snapshot()");
    r = PQexec(c, "SELECT xact_commit FROM pg_stat_database WHERE datname = "
                  "current_database()");
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        bench_die("pg_stat_database", LIL_E_PG, PQerrorMessage(c));
    n = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return n;
}

/* ---- workers ------------------------------------------------------------------ */

struct ctx {
    const struct bench_cfg *cfg;
    char where[2048]; /* the store: cfg->pg with schema= */
    lil_store *st;
    lil_spec *spec;
    PGconn *stats;
    size_t runs; /* per point */
    unsigned batch;
};

static void submit(struct ctx *x)
{
    for (size_t i = 0; i < x->runs; i++) {
        lil_loop_opts o;
        char id[64];
        lil_status rc;

        snprintf(id, sizeof(id), "b%u-%zu", x->batch, i);
        memset(&o, 0, sizeof(o));
        o.struct_size = sizeof(o);
        o.run_id = id;
        o.sync = LIL_SYNC_FULL;
        rc = lil_loop_submit(x->st, x->spec, &o, NULL);
        if (rc != LIL_OK)
            bench_die("lil_loop_submit", rc, lil_store_errmsg(x->st));
    }
    x->batch++;
}

static pid_t start_worker(const struct ctx *x)
{
    char lil[4200], where[2048], dir[] = "--dir", verb[] = "worker",
                                 idle[] = "--idle-exit", zero[] = "0",
                                 poll[] = "--poll-ms", ten[] = "10";
    char *argv[] = {lil, dir, where, verb, idle, zero, poll, ten, NULL};
    posix_spawn_file_actions_t fa;
    extern char **environ;
    pid_t pid;
    int e;

    snprintf(lil, sizeof(lil), "%s", x->cfg->lil_path);
    snprintf(where, sizeof(where), "%s", x->where);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    e = posix_spawn(&pid, lil, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0)
        bench_die_errno("posix_spawn lil worker");
    return pid;
}

/* Queue x->runs runs, run them with w workers: runs/s; *per_run gets the
 * server's transactions per run. */
static double workers_point(struct ctx *x, int w, double *per_run)
{
    pid_t pids[8];
    long long c0;
    uint64_t t0;
    int status;
    double secs;

    submit(x);
    c0 = commits(x->stats);
    t0 = bench_now_ns();
    for (int i = 0; i < w; i++)
        pids[i] = start_worker(x);
    for (int i = 0; i < w; i++)
        if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            bench_die("lil worker", LIL_E_CHILD, "a worker failed");
    secs = (double)(bench_now_ns() - t0) / 1e9;
    *per_run = (double)(commits(x->stats) - c0) / (double)x->runs;
    return (double)x->runs / secs;
}

/* ---- raw commits -------------------------------------------------------------- */

struct raw {
    pthread_t tid;
    PGconn *c;
    int k;
    uint64_t deadline_ns;
    uint64_t commits;
};

static void *raw_main(void *arg)
{
    struct raw *r = arg;
    char sql[128];

    while (bench_now_ns() < r->deadline_ns) {
        PGresult *res;

        snprintf(sql, sizeof(sql), "INSERT INTO raw_w.t VALUES (%d, %llu)", r->k,
                 (unsigned long long)r->commits);
        res = PQexec(r->c, sql);
        if (PQresultStatus(res) != PGRES_COMMAND_OK)
            bench_die("INSERT", LIL_E_PG, PQerrorMessage(r->c));
        PQclear(res);
        r->commits++;
    }
    return NULL;
}

/* w connections committing for seconds: commits/s. */
static double raw_point(PGconn **conns, int w, double seconds)
{
    struct raw r[8];
    uint64_t t0 = bench_now_ns(), total = 0;

    for (int i = 0; i < w; i++) {
        r[i] = (struct raw){
            .c = conns[i], .k = i, .deadline_ns = t0 + (uint64_t)(seconds * 1e9)};
        if (pthread_create(&r[i].tid, NULL, raw_main, &r[i]))
            bench_die_errno("pthread_create");
    }
    for (int i = 0; i < w; i++) {
        pthread_join(r[i].tid, NULL);
        total += r[i].commits;
    }
    return (double)total / ((double)(bench_now_ns() - t0) / 1e9);
}

/* ---- rows and set-up ---------------------------------------------------------- */

static void rows(const double *rate, const double *per_run, const double *raw)
{
    char what[96], buf[200];
    double sync4 = rate[2] * per_run[2];
    bool scaled = rate[2] >= 2.0 * rate[0], at_limit = sync4 >= 0.7 * raw[2];

    bench_section("Workers: lil worker processes on one PostgreSQL store");
    for (int i = 0; i < NPOINTS; i++) {
        int w = worker_counts[i];
        snprintf(what, sizeof(what), "%d worker%s (runs of 2 effects)", w,
                 w > 1 ? "s" : "");
        snprintf(buf, sizeof(buf), "%.0f runs/s, %.2f× 1 worker; %.1f transactions/run",
                 rate[i], rate[i] / rate[0], per_run[i]);
        bench_row(what, buf, w == 4 ? "≥ 2× 1 worker, or the server's commit rate" : "",
                  w == 4 ? (scaled || at_limit) : -1);
    }
    for (int i = 0; i < NPOINTS; i++) {
        int w = worker_counts[i];
        snprintf(what, sizeof(what), "raw: %d connection%s, INSERT + COMMIT each", w,
                 w > 1 ? "s" : "");
        snprintf(buf, sizeof(buf), "%.0f commits/s", raw[i]);
        bench_row(what, buf, "", -1);
    }
    snprintf(buf, sizeof(buf), "%.0f transactions/s, %.0f%% of 4 raw connections",
             sync4, 100.0 * sync4 / raw[2]);
    bench_row("4 workers: the server's transactions", buf, "", -1);
}

static void setup(struct ctx *x)
{
    lil_schema_info info = {.struct_size = sizeof(info)};
    PGconn *c = connect_or_die(x->cfg->pg);
    lil_status rc;

    exec_or_die(c, "DROP SCHEMA IF EXISTS " SCHEMA " CASCADE");
    exec_or_die(c, "DROP SCHEMA IF EXISTS raw_w CASCADE");
    exec_or_die(c, "CREATE SCHEMA raw_w");
    exec_or_die(c, "CREATE TABLE raw_w.t (k int, v bigint)");
    PQfinish(c);
    snprintf(x->where, sizeof(x->where), "%s%sschema=" SCHEMA, x->cfg->pg,
             strchr(x->cfg->pg, '?') ? "&" : "?");
    rc = lil_store_schema(NULL, x->where, LIL_SCHEMA_INIT, &info);
    if (rc == LIL_OK)
        rc = lil_store_open(NULL, x->where, &x->st);
    if (rc == LIL_OK)
        rc = lil_spec_parse(NULL, "w.yaml", spec_text, strlen(spec_text), NULL,
                            &x->spec);
    if (rc != LIL_OK || !lil_spec_ok(x->spec))
        bench_die("workers: set-up", rc, lil_errmsg());
    x->stats = connect_or_die(x->cfg->pg);
}

void bench_workers(const struct bench_cfg *cfg)
{
    struct ctx x = {.cfg = cfg, .runs = cfg->quick ? 40 : 200};
    double rate[NPOINTS] = {0}, per_run[NPOINTS] = {0}, raw[NPOINTS] = {0};
    double secs = cfg->quick ? 0.5 : 2.0;
    PGconn *conns[4];

    if (!cfg->pg) {
        bench_section("Workers");
        bench_row("Workers", "not run: no server (lil_bench --pg URL)", "", -1);
        return;
    }
    setup(&x);
    for (int i = 0; i < 4; i++) {
        conns[i] = connect_or_die(cfg->pg);
        exec_or_die(conns[i], "SET synchronous_commit TO on");
    }
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < NPOINTS; i++) {
            double pr = 0;
            rate[i] += workers_point(&x, worker_counts[i], &pr) / ROUNDS;
            per_run[i] += pr / ROUNDS;
            raw[i] += raw_point(conns, worker_counts[i], secs) / ROUNDS;
        }
    }
    for (int i = 0; i < 4; i++)
        PQfinish(conns[i]);
    PQfinish(x.stats);
    lil_spec_free(x.spec);
    lil_store_close(x.st);
    rows(rate, per_run, raw);
}
