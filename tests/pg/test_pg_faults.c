/*
 * test_pg_faults.c -- the PostgreSQL store under server faults: a program
 * runs durable steps while its server is restarted (pg_ctl restart -m fast,
 * and -m immediate: a crash of the server, WAL recovery) and its
 * connections are ended (pg_terminate_backend).  Then, whatever happened:
 *
 *   - 0 double executions: no step function runs again once lil_step has
 *     returned LIL_OK for it (a function whose commit was cut short, never
 *     acknowledged, may run again: that is allowed);
 *   - 0 lost completed steps: every acknowledged step is in the run, with
 *     its result, once, and the run checks intact.
 *
 * The workload is a child process (sync full): for i = 0, 1, ... it runs
 * step "s<i>", whose function appends "R i" to a side file; after LIL_OK it
 * appends "A i".  On any error it closes the run and opens it again (every
 * 50 ms, for up to 60 s: the server may be restarting) and goes on with the
 * same i.  The side file is written with O_APPEND by the one process, so
 * its lines are in the order things happened.  The parent makes the faults,
 * at random moments (seeded), then tells the child to finish.
 *
 * The test starts a server of its own (tests/pg/pgserver.sh, in a directory
 * of its own): restarting the suite's server would break the tests running
 * beside it.  Default: 6 faults, two of each kind; `--slow` (label slow):
 * 60.
 */
#include <errno.h>
#include <fcntl.h>
#include <lil/lil.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api_util.h"
#include "t.h"

#define MAX_STEPS 200000
#define REOPEN_S  60

static int n_faults = 6;
static char server_dir[256];
static char where[1024];

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static int shell(const char *cmd)
{
    char sink[4096];
    int rc = t_run(cmd, sink, sizeof(sink), 1);

    if (rc != 0)
        fprintf(stderr, "%s: %d\n%s\n", cmd, rc, sink);
    return rc;
}

/* pgserver.sh ACTION DIR [MODE] for the test's own server. */
static int server(const char *action, const char *mode)
{
    char cmd[2048];

    snprintf(cmd, sizeof(cmd), "bash '%s' %s '%s' %s >/dev/null",
             getenv("LIL_PGSERVER"), action, server_dir, mode);
    return shell(cmd);
}

/* End every client connection but psql's own. */
static int terminate_all(void)
{
    char cmd[2048];

    snprintf(cmd, sizeof(cmd),
             "psql -X -q -d '%s' -c \"SELECT pg_terminate_backend(pid) FROM "
             "pg_stat_activity WHERE backend_type = 'client backend' AND pid <> "
             "pg_backend_pid()\" >/dev/null",
             where);
    return shell(cmd);
}

/* ---- the workload (child) ------------------------------------------------------ */

static void note(int fd, char what, int i)
{
    char line[32];
    int n = snprintf(line, sizeof(line), "%c %d\n", what, i);

    if (write(fd, line, (size_t)n) != n)
        _exit(20);
}

struct step_ctx {
    int fd, i;
};

static int step_fn(lil_call *call, void *ud)
{
    const struct step_ctx *c = ud;
    char result[32];
    int n = snprintf(result, sizeof(result), "result-%d", c->i);

    note(c->fd, 'R', c->i);
    return lil_call_set_result(call, result, (size_t)n);
}

static lil_run *reopen(lil_store *st)
{
    lil_run *run = NULL;

    for (int k = 0; k < REOPEN_S * 20; k++) {
        if (lil_run_open(st, "w", NULL, &run) == LIL_OK)
            return run;
        sleep_ms(50);
    }
    fprintf(stderr, "workload: cannot reopen: %s\n", lil_errmsg());
    _exit(3);
}

static int workload(void *ud)
{
    int fd = open("side.txt", O_WRONLY | O_CREAT | O_APPEND, 0600);
    lil_store *st = NULL;
    lil_run *run;
    int i = 0;

    (void)ud;
    if (fd < 0 || lil_store_open(NULL, where, &st) != LIL_OK)
        return 2;
    run = reopen(st);
    while (i < MAX_STEPS && access("stop", F_OK) != 0) {
        struct step_ctx c = {fd, i};
        char name[32];
        snprintf(name, sizeof(name), "s%d", i);
        if (lil_step(run, name, step_fn, &c, NULL) == LIL_OK) {
            note(fd, 'A', i++);
            continue;
        }
        lil_run_close(run); /* poisoned, or the server is away */
        run = reopen(st);
    }
    while (lil_run_complete(run, "ok", 2) != LIL_OK) {
        lil_run_close(run);
        run = reopen(st);
    }
    lil_run_close(run);
    lil_store_close(st);
    close(fd);
    return 0;
}

/* ---- the faults (parent) -------------------------------------------------------- */

static void fault(int k)
{
    switch (k % 3) {
    case 0:
        T_EQ_I64(server("restart", "fast"), 0);
        break;
    case 1:
        T_EQ_I64(server("restart", "immediate"), 0);
        break;
    default:
        T_EQ_I64(terminate_all(), 0);
    }
}

/* ---- the checks ------------------------------------------------------------------ */

struct tally {
    int acked[MAX_STEPS]; /* first line number of an A, or 0 */
    int runs[MAX_STEPS];  /* R lines */
    int max_i;
    int doubles; /* R after A */
    int reruns;  /* R again before any A: an unknown commit, allowed */
    int acks;
};

static void read_side(struct tally *t)
{
    FILE *f = fopen("side.txt", "r");
    char what;
    int i, line = 0;

    T_REQUIRE(f);
    while (fscanf(f, " %c %d", &what, &i) == 2 && i >= 0 && i < MAX_STEPS) {
        line++;
        if (i > t->max_i)
            t->max_i = i;
        if (what == 'R') {
            t->doubles += t->acked[i] != 0;
            t->reruns += t->runs[i] > 0 && !t->acked[i];
            t->runs[i]++;
        } else if (!t->acked[i]) {
            t->acked[i] = line;
            t->acks++;
        }
    }
    fclose(f);
}

/* Every acknowledged step is in the run once, with its result. */
static void check_run(const struct tally *t)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_check_report rep = {.struct_size = sizeof(rep)};
    struct u_recs rs;
    static int seen[MAX_STEPS];
    int lost = 0, dup = 0;

    memset(seen, 0, sizeof(seen));
    T_OK(lil_store_open(NULL, where, &st));
    T_OK(lil_run_check(st, "w", 0, &rep));
    T_EQ_I64(rep.intact, 1);
    T_OK(lil_run_open(st, "w", NULL, &run));
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_COMPLETED);
    T_OK(u_collect(run, &rs));
    for (size_t k = 0; k < rs.n; k++) {
        int i;
        char want[32];
        if (rs.r[k].type != LIL_REC_STEP || sscanf(rs.r[k].key, "s%d", &i) != 1 ||
            i < 0 || i >= MAX_STEPS)
            continue;
        dup += seen[i]++ > 0;
        snprintf(want, sizeof(want), "result-%d", i);
        T_EQ_MEM(rs.r[k].payload, rs.r[k].payload_len, want, strlen(want));
    }
    for (int i = 0; i <= t->max_i; i++)
        lost += t->acked[i] && !seen[i];
    T_EQ_I64(lost, 0);
    T_EQ_I64(dup, 0);
    u_recs_free(&rs);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(server_restarts_and_dropped_connections)
{
    static struct tally t;
    lil_schema_info info = {.struct_size = sizeof(info)};
    unsigned seed = (unsigned)time(NULL);
    pid_t child;

    memset(&t, 0, sizeof(t));
    snprintf(server_dir, sizeof(server_dir), "/tmp/lil-pgf-%ld", (long)getpid());
    T_REQUIRE(getenv("LIL_PGSERVER"));
    T_REQUIRE(server("start", "") == 0);
    snprintf(where, sizeof(where), "postgresql:///postgres?host=%s&user=postgres",
             server_dir);
    T_OK(lil_store_schema(NULL, where, LIL_SCHEMA_INIT, &info));
    fprintf(stderr, "seed %u, %d faults\n", seed, n_faults);
    srand(seed);
    child = u_fork(workload, NULL);
    T_REQUIRE(child > 0);
    for (int k = 0; k < n_faults; k++) {
        sleep_ms(150 + rand() % 400);
        fault(k);
    }
    sleep_ms(300);
    T_REQUIRE(u_write_file("stop", "", 0) == 0);
    T_EQ_I64(u_wait(child), 0);
    read_side(&t);
    fprintf(stderr, "%d steps acknowledged, %d run again after an unknown commit\n",
            t.acks, t.reruns);
    T_CHECK(t.acks > n_faults);
    T_EQ_I64(t.doubles, 0);
    check_run(&t);
    server("stop", "");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--slow") == 0) {
        n_faults = 60;
        argc--;
        argv++;
    }
    return t_main(argc, argv);
}
