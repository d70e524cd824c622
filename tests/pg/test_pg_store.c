/*
 * test_pg_store.c -- what only the PostgreSQL store has, through lil.h
 * (the suite of both backends covers the rest): its schema (init, migrate,
 * status, a missing, newer or forbidden one), bad connection strings and
 * the password kept out of messages, holding runs (a second holder
 * refused, a crashed holder's runs free at once, a paused holder fenced
 * after its lease ran out, a long step keeping its lease), group commit,
 * a dropped connection, damage made with SQL, and moving runs between a
 * PostgreSQL store and a file store, keyed ones too.
 *
 * The server is the suite's (tests/pg, LIL_TEST_PG); each test's stores are
 * schemas of their own (t_store), and a test that needs a schema lil has
 * not made names one itself.
 */
#include <lil/lil.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api_util.h"
#include "t.h"

#define REC_SETTLED 0x80u /* docs/format.md: the record's flags byte */

static char out[8192];

/* A store location of the server with a schema of the test's own that
 * nothing has made (t_store makes its schemas). */
static const char *fresh_location(const char *name)
{
    static char buf[1024];

    snprintf(buf, sizeof(buf), "%s&schema=%s_%ld_%ld", getenv("LIL_TEST_PG"), name,
             (long)getpid(), (long)time(NULL) % 100000);
    return buf;
}

static lil_schema_info schema_info(void)
{
    lil_schema_info info;

    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    return info;
}

/* Run sql on the server ('@': the schema of store "st"); 0 on success. */
static int sql(const char *q)
{
    int rc = t_store_sql("st", q, out, sizeof(out));

    if (rc != 0)
        fprintf(stderr, "psql: %s\n%s\n", q, out);
    return rc;
}

static int sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    return nanosleep(&ts, NULL);
}

/* ---- the schema ------------------------------------------------------------- */

T_TEST(schema_init_status_migrate)
{
    const char *where = fresh_location("fresh");
    lil_schema_info info = schema_info();
    lil_store *st = NULL;

    T_OK(lil_store_schema(NULL, where, LIL_SCHEMA_STATUS, &info));
    T_EQ_STR(info.backend, "postgresql");
    T_EQ_I64(info.version, 0);
    T_EQ_I64(info.latest, 4);
    T_CONTAINS(info.message, "`lil db init` creates it");
    T_EQ_I64(lil_store_open(NULL, where, &st), LIL_E_PG);
    T_CONTAINS(lil_errmsg(), "run `lil db init`");
    T_EQ_I64(lil_store_schema(NULL, where, LIL_SCHEMA_MIGRATE, &info), LIL_E_PG);
    T_CONTAINS(lil_errmsg(), "run `lil db init`");
    info = schema_info();
    T_OK(lil_store_schema(NULL, where, LIL_SCHEMA_INIT, &info));
    T_EQ_I64(info.changed, 1);
    T_EQ_I64(info.version, 4);
    T_CONTAINS(info.message, "created schema");
    info = schema_info();
    T_OK(lil_store_schema(NULL, where, LIL_SCHEMA_INIT, &info));
    T_EQ_I64(info.changed, 0);
    T_CONTAINS(info.message, "nothing to do");
    info = schema_info();
    T_OK(lil_store_schema(NULL, where, LIL_SCHEMA_MIGRATE, &info));
    T_EQ_I64(info.changed, 0);
    T_OK(lil_store_open(NULL, where, &st));
    lil_store_close(st);
    T_EQ_I64(lil_store_schema(NULL, where, 7, &info), LIL_E_INVAL);
}

/* A store of version 1 (before the queue of `lil worker`) with a run in it:
 * refused until migrated, then the same run, and the queue's columns (of
 * version 3: the queue's payload). */
T_TEST(a_version_1_schema_migrates_keeping_its_runs)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "old");
    lil_schema_info info = schema_info();
    struct fn_ctx c = {.result = "kept", .result_len = 4};
    int never = 0;

    T_REQUIRE(run);
    T_OK(lil_step(run, "a", fn_generic, &c, NULL));
    T_OK(lil_run_close(run));
    lil_store_close(st);
    T_REQUIRE(sql("DROP INDEX @.runs_queue; ALTER TABLE @.runs DROP COLUMN payload, "
                  "DROP COLUMN submitted_at, DROP COLUMN attempts, DROP COLUMN "
                  "claimed_by, DROP COLUMN last_error; DROP TABLE @.workers, "
                  "@.schedules; UPDATE @.lil_meta SET value = '1' WHERE key = "
                  "'schema_version';") == 0);
    T_EQ_I64(lil_store_open(NULL, U_STORE, &st), LIL_E_PG);
    T_CONTAINS(lil_errmsg(), "run `lil db migrate`");
    T_OK(lil_store_schema(NULL, U_STORE, LIL_SCHEMA_MIGRATE, &info));
    T_EQ_I64(info.changed, 1);
    T_EQ_I64(info.version, 4);
    T_CONTAINS(info.message, "from version 1 to 4");
    st = u_store(NULL);
    run = u_run(st, "old");
    T_REQUIRE(run);
    T_OK(lil_step(run, "a", fn_never, &never, NULL)); /* replayed */
    T_EQ_I64(never, 0);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    T_REQUIRE(
        sql("SELECT count(*) FROM @.runs WHERE state IS NULL AND attempts = 0;") == 0);
    T_CONTAINS(out, "1");
}

static int init_fresh(void *ud)
{
    lil_schema_info info = schema_info();

    return lil_store_schema(NULL, ud, LIL_SCHEMA_INIT, &info) == LIL_OK ? info.changed
                                                                        : 9;
}

T_TEST(two_inits_at_once_make_the_schema_once)
{
    char where[1024];
    pid_t a, b;
    int ra, rb;

    snprintf(where, sizeof(where), "%s", fresh_location("race"));
    a = u_fork(init_fresh, where);
    b = u_fork(init_fresh, where);
    ra = u_wait(a);
    rb = u_wait(b);
    T_EQ_I64(ra + rb, 1); /* one made it (1), the other found it (0) */
}

T_TEST(newer_schema_is_refused_naming_the_lil)
{
    lil_store *st = u_store(NULL);
    lil_schema_info info = schema_info();

    lil_store_close(st);
    T_REQUIRE(sql("UPDATE @.lil_meta SET value = CASE key WHEN 'schema_version' THEN "
                  "'99' ELSE '9.9.9' END;") == 0);
    T_EQ_I64(lil_store_open(NULL, U_STORE, &st), LIL_E_VERSION);
    T_CONTAINS(lil_errmsg(), "version 99");
    T_CONTAINS(lil_errmsg(), "lil 9.9.9 migrated it");
    T_EQ_I64(lil_store_schema(NULL, U_STORE, LIL_SCHEMA_INIT, &info), LIL_E_VERSION);
    info = schema_info();
    T_OK(lil_store_schema(NULL, U_STORE, LIL_SCHEMA_STATUS, &info));
    T_EQ_I64(info.version, 99);
    T_CONTAINS(info.message, "newer than this lil");
}

T_TEST(a_role_without_rights_is_told_what_to_do)
{
    char where[1024], mine[1024];
    lil_store *st = u_store(NULL);
    const char *u;

    lil_store_close(st);
    T_REQUIRE(sql("DO $$ BEGIN CREATE ROLE lil_t_noright LOGIN; EXCEPTION WHEN "
                  "duplicate_object THEN NULL; END $$;") == 0);
    snprintf(mine, sizeof(mine), "%s", U_STORE);
    u = strstr(mine, "user=postgres");
    T_REQUIRE(u);
    snprintf(where, sizeof(where), "%.*suser=lil_t_noright%s", (int)(u - mine), mine,
             u + strlen("user=postgres"));
    T_EQ_I64(lil_store_open(NULL, where, &st), LIL_E_PG);
    T_CONTAINS(lil_errmsg(), "permission denied");
    T_CONTAINS(lil_errmsg(), "docs/postgres.md");
}

/* ---- connection strings ------------------------------------------------------- */

T_TEST(bad_connection_strings_say_what_is_wrong)
{
    char where[1024];
    lil_store *st = NULL;

    T_EQ_I64(lil_store_open(NULL, "postgresql://u@%zz/db", &st), LIL_E_INVAL);
    T_CONTAINS(lil_errmsg(), "invalid PostgreSQL connection string");
    T_EQ_I64(lil_store_open(NULL, "postgresql:///db?schema=Bad-Name", &st),
             LIL_E_INVAL);
    T_CONTAINS(lil_errmsg(), "schema name");
    T_EQ_I64(lil_store_open(NULL, "postgresql:///db?host=/nonexistent-lil-dir", &st),
             LIL_E_PG);
    T_CONTAINS(lil_errmsg(), "cannot connect to PostgreSQL");
    T_CONTAINS(lil_errmsg(), "is the server running");
    snprintf(where, sizeof(where), "%s", getenv("LIL_TEST_PG"));
    T_REQUIRE(strncmp(where, "postgresql:///postgres?", 23) == 0);
    snprintf(where, sizeof(where), "postgresql:///lil_no_such_db?%s",
             getenv("LIL_TEST_PG") + 23);
    T_EQ_I64(lil_store_open(NULL, where, &st), LIL_E_PG);
    T_CONTAINS(lil_errmsg(), "lil_no_such_db");
    T_CHECK(st == NULL);
}

T_TEST(the_password_is_never_shown)
{
    char where[1024];
    const char *base = getenv("LIL_TEST_PG") + strlen("postgresql://");
    lil_store *st = NULL;

    /* trust authentication: the server ignores the password */
    snprintf(where, sizeof(where), "postgresql://postgres:s3cr3t-pw@%s&schema=%s", base,
             strstr(U_STORE, "schema=") + 7);
    T_OK(lil_store_open(NULL, where, &st));
    T_CHECK(strstr(lil_store_path(st), "s3cr3t") == NULL);
    T_CONTAINS(lil_store_path(st), "postgres:***@");
    lil_store_close(st);
    snprintf(where, sizeof(where),
             "postgresql://postgres:s3cr3t-pw@/x?host=/nonexistent");
    T_EQ_I64(lil_store_open(NULL, where, &st), LIL_E_PG);
    T_CHECK(strstr(lil_errmsg(), "s3cr3t") == NULL);
    snprintf(where, sizeof(where),
             "postgresql:///x?host=/nonexistent&password=s3cr3t-pw");
    T_EQ_I64(lil_store_open(NULL, where, &st), LIL_E_PG);
    T_CHECK(strstr(lil_errmsg(), "s3cr3t") == NULL);
    T_CONTAINS(lil_errmsg(), "password=***");
}

/* ---- holding runs -------------------------------------------------------------- */

/* A child that opens run id, steps "a", says so, and waits (to be killed,
 * stopped, or told on go to step "b": its status then goes back on told). */
struct holder {
    const char *id;
    struct u_pipe ready, go, told;
    long step_ms; /* "a" takes this long */
    bool effect;  /* "b" is an effect whose function creates "b-ran" */
};

static int effect_b(lil_call *call, void *ud)
{
    (void)ud;
    if (u_write_file("b-ran", "", 0) != 0)
        return 1;
    return lil_call_set_result(call, "B", 1);
}

static int step_sleep(lil_call *call, void *ud)
{
    sleep_ms(*(const long *)ud);
    return lil_call_set_result(call, "slept", 5);
}

static int hold_run(void *ud)
{
    struct holder *h = ud;
    lil_store *st = NULL;
    lil_run *run = NULL;
    char rc;

    if (lil_store_open(NULL, U_STORE, &st) != LIL_OK ||
        lil_run_open(st, h->id, NULL, &run) != LIL_OK)
        return 1;
    if (h->step_ms) {
        u_pipe_signal(&h->ready);
        if (lil_step(run, "a", step_sleep, &h->step_ms, NULL) != LIL_OK)
            return 2;
    } else if (u_step_text(run, "a", "A") != LIL_OK) {
        return 2;
    } else {
        u_pipe_signal(&h->ready);
    }
    if (u_pipe_wait(&h->go, 60) != 0)
        return 3;
    if (h->effect) /* 0 when it was written */
        rc = (char)-lil_effect(run, "b", "req", 3, effect_b, NULL, NULL);
    else
        rc = (char)-u_step_text(run, "b", "B");
    if (write(h->told.fd[1], &rc, 1) != 1)
        return 4;
    for (;;)
        pause();
}

/* The status of the child's step "b", sent on told (99: none in 30 s). */
static int read_told(struct holder *h)
{
    struct pollfd p = {.fd = h->told.fd[0], .events = POLLIN};
    char told = 0;

    if (poll(&p, 1, 30000) != 1 || read(h->told.fd[0], &told, 1) != 1)
        return 99;
    return -told;
}

static pid_t start_holder(struct holder *h, const char *id, long step_ms)
{
    bool effect = h->effect; /* the one field the caller sets */

    memset(h, 0, sizeof(*h));
    h->effect = effect;
    h->id = id;
    h->step_ms = step_ms;
    if (u_pipe_open(&h->ready) || u_pipe_open(&h->go) || u_pipe_open(&h->told))
        return -1;
    return u_fork(hold_run, h);
}

static void end_holder(struct holder *h, pid_t pid)
{
    kill(pid, SIGKILL);
    u_wait(pid);
    u_pipe_close(&h->ready);
    u_pipe_close(&h->go);
    u_pipe_close(&h->told);
}

T_TEST(a_crashed_holder_frees_its_run_at_once)
{
    struct holder h = {0};
    pid_t pid = start_holder(&h, "r", 0);
    lil_store *st = u_store(NULL);
    lil_run *run = NULL;
    lil_run_info info = {.struct_size = sizeof(info)};
    char want[64];
    int tries = 0;

    T_REQUIRE(pid > 0 && st);
    T_REQUIRE(u_pipe_wait(&h.ready, 30) == 0);
    snprintf(want, sizeof(want), "run r is held by pid %d", (int)pid);
    T_EQ_I64(lil_run_open(st, "r", NULL, &run), LIL_E_LOCKED);
    T_EQ_STR(lil_store_errmsg(st), want);
    run = u_run_opts(st, "r", LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0);
    T_REQUIRE(run);
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64(info.holder_pid, pid);
    T_OK(lil_run_close(run));
    kill(pid, SIGKILL);
    u_wait(pid);
    /* its connection closed with it: free well before its lease ends */
    while (lil_run_open(st, "r", NULL, &run) == LIL_E_LOCKED && tries++ < 100)
        sleep_ms(50);
    T_REQUIRE(run);
    T_CHECK(tries < 100);
    T_OK(u_step_text(run, "a", "not run"));
    T_OK(lil_run_close(run));
    end_holder(&h, pid);
    lil_store_close(st);
}

T_TEST(a_paused_holder_is_fenced_after_its_lease)
{
    struct holder h = {0};
    pid_t pid;
    lil_store *st;
    lil_run *run = NULL;
    struct u_recs rs;

    setenv("LIL_PG_LEASE_MS", "400", 1);
    pid = start_holder(&h, "r", 0);
    st = u_store(NULL);
    T_REQUIRE(pid > 0 && st);
    T_REQUIRE(u_pipe_wait(&h.ready, 30) == 0);
    kill(pid, SIGSTOP); /* no renewals now */
    T_EQ_I64(lil_run_open(st, "r", NULL, &run), LIL_E_LOCKED);
    sleep_ms(1000);
    T_OK(lil_run_open(st, "r", NULL, &run)); /* its lease ran out: taken over */
    T_OK(u_step_text(run, "c", "C"));
    kill(pid, SIGCONT);
    u_pipe_signal(&h.go);
    T_EQ_I64(read_told(&h), LIL_E_POISONED); /* fenced: not a byte written */
    T_OK(u_collect(run, &rs));
    T_CHECK(u_find(&rs, LIL_REC_STEP, "a") != NULL);
    T_CHECK(u_find(&rs, LIL_REC_STEP, "b") == NULL);
    T_CHECK(u_find(&rs, LIL_REC_STEP, "c") != NULL);
    u_recs_free(&rs);
    T_OK(lil_run_close(run));
    end_holder(&h, pid);
    lil_store_close(st);
    unsetenv("LIL_PG_LEASE_MS");
}

/* The same with an effect: the paused holder never starts it (its lease ran
 * out: no intent, the function never called), so no effect runs twice. */
T_TEST(a_paused_holders_effect_never_starts)
{
    struct holder h = {0};
    pid_t pid;
    lil_store *st;
    lil_run *run = NULL;
    struct u_recs rs;

    setenv("LIL_PG_LEASE_MS", "400", 1);
    h.effect = true;
    pid = start_holder(&h, "r", 0);
    st = u_store(NULL);
    T_REQUIRE(pid > 0 && st);
    T_REQUIRE(u_pipe_wait(&h.ready, 30) == 0);
    kill(pid, SIGSTOP);
    sleep_ms(1000);
    T_OK(lil_run_open(st, "r", NULL, &run)); /* taken over */
    kill(pid, SIGCONT);
    u_pipe_signal(&h.go);
    T_EQ_I64(read_told(&h), LIL_E_POISONED);
    T_CHECK(access("b-ran", F_OK) != 0); /* the effect never started */
    T_OK(u_collect(run, &rs));
    T_CHECK(u_find(&rs, LIL_REC_INTENT, "b") == NULL);
    u_recs_free(&rs);
    T_OK(lil_run_close(run));
    end_holder(&h, pid);
    lil_store_close(st);
    unsetenv("LIL_PG_LEASE_MS");
}

T_TEST(a_long_step_keeps_its_lease)
{
    struct holder h = {0};
    pid_t pid;
    lil_store *st;
    lil_run *run = NULL;

    setenv("LIL_PG_LEASE_MS", "300", 1);
    pid = start_holder(&h, "r", 1500);
    st = u_store(NULL);
    T_REQUIRE(pid > 0 && st);
    T_REQUIRE(u_pipe_wait(&h.ready, 30) == 0);
    sleep_ms(1000); /* past three leases: renewed meanwhile */
    T_EQ_I64(lil_run_open(st, "r", NULL, &run), LIL_E_LOCKED);
    u_pipe_signal(&h.go);
    T_EQ_I64(read_told(&h), LIL_OK); /* "b" after the long "a": still its run */
    end_holder(&h, pid);
    lil_store_close(st);
    unsetenv("LIL_PG_LEASE_MS");
}

T_TEST(a_dropped_connection_poisons_and_reopen_resumes)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    struct fn_ctx c = {.result = "x", .result_len = 1};
    int never = 0;

    T_REQUIRE(run);
    T_OK(lil_step(run, "a", fn_generic, &c, NULL));
    T_REQUIRE(sql("SELECT pg_terminate_backend(holder_backend_pid) FROM @.runs WHERE "
                  "run_id = 'r';") == 0);
    sleep_ms(100);
    T_CHECK(lil_step(run, "b", fn_generic, &c, NULL) != LIL_OK);
    T_EQ_I64(lil_step(run, "c", fn_generic, &c, NULL), LIL_E_POISONED);
    T_CONTAINS(lil_run_errmsg(run), "reopen");
    T_CHECK(lil_run_close(run) != LIL_OK);
    run = u_run(st, "r"); /* its backend is gone: free at once */
    T_REQUIRE(run);
    T_OK(lil_step(run, "a", fn_never, &never, NULL));
    T_EQ_I64(never, 0);
    T_OK(lil_step(run, "b", fn_generic, &c, NULL)); /* never acknowledged */
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* ---- group commit ---------------------------------------------------------------- */

struct worker {
    lil_run *run;
    int n, k;
    lil_status rc;
};

static void *work(void *ud)
{
    struct worker *w = ud;
    char name[32];

    for (int i = 0; i < w->n && w->rc == LIL_OK; i++) {
        snprintf(name, sizeof(name), "t%d-%d", w->k, i);
        w->rc = u_step_text(w->run, name, name);
    }
    return NULL;
}

/* Threads of one run share commits: a record a leader sent with others
 * after the first is not SETTLED (only the first of a commit follows a
 * durable journal), so some are not. */
T_TEST(threads_share_commits)
{
    enum { THREADS = 8, STEPS = 60 };
    struct worker w[THREADS];
    pthread_t th[THREADS];
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "g");
    unsigned char *b;
    size_t n = 0, off = 64;
    int steps = 0, unsettled = 0;

    T_REQUIRE(run);
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){run, STEPS, i, LIL_OK};
        T_REQUIRE(pthread_create(&th[i], NULL, work, &w[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        T_OK(w[i].rc);
    }
    T_OK(lil_run_close(run));
    b = u_journal_read(NULL, "g", &n);
    T_REQUIRE(b);
    while (off + 64 <= n) {
        uint32_t len = u_rd32(b + off);
        steps += b[off + 30] == LIL_REC_STEP;
        unsettled += b[off + 30] == LIL_REC_STEP && !(b[off + 31] & REC_SETTLED);
        off += len;
    }
    free(b);
    T_EQ_I64(steps, THREADS * STEPS);
    T_CHECK(unsettled > 0);
    lil_store_close(st);
}

/* ---- damage made with SQL -----------------------------------------------------------
 */

T_TEST(a_deleted_record_is_found_and_repair_cuts_there)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    lil_check_report rep = {.struct_size = sizeof(rep)};

    T_REQUIRE(run);
    T_OK(u_step_text(run, "a", "A"));
    T_OK(u_step_text(run, "b", "B"));
    T_OK(u_step_text(run, "c", "C"));
    T_OK(lil_run_close(run));
    T_REQUIRE(sql("DELETE FROM @.records WHERE run_id = 'r' AND seq = 4;") == 0);
    T_EQ_I64(lil_run_open(st, "r", NULL, &run), LIL_E_CORRUPT);
    T_OK(lil_run_check(st, "r", 0, &rep));
    T_EQ_I64(rep.intact, 0);
    T_EQ_I64(rep.records, 3);
    T_OK(lil_run_check(st, "r", LIL_CHECK_REPAIR, &rep));
    T_EQ_I64(rep.repaired, 1);
    run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(u_step_text(run, "b", "B again")); /* a is kept, b and c were cut */
    T_OK(lil_run_close(run));
    memset(&rep, 0, sizeof(rep));
    rep.struct_size = sizeof(rep);
    T_OK(lil_run_check(st, "r", 0, &rep));
    T_EQ_I64(rep.intact, 1);
    lil_store_close(st);
}

T_TEST(an_edited_frame_breaks_the_chain)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    lil_check_report rep = {.struct_size = sizeof(rep)};

    T_REQUIRE(run);
    T_OK(u_step_text(run, "a", "AAAA"));
    T_OK(u_step_text(run, "b", "BBBB"));
    T_OK(lil_run_close(run));
    /* the payload rewritten, its CRC recomputed would still break the chain;
     * here the CRC is off too: the open finds it */
    T_REQUIRE(sql("UPDATE @.records SET frame = overlay(frame placing '\\x5a'::bytea "
                  "from 34 for 1) WHERE run_id = 'r' AND seq = 3;") == 0);
    T_EQ_I64(lil_run_open(st, "r", NULL, &run), LIL_E_CORRUPT);
    T_CONTAINS(lil_store_errmsg(st), "damaged record at offset");
    T_OK(lil_run_check(st, "r", 0, &rep));
    T_EQ_I64(rep.intact, 0);
    lil_store_close(st);
}

/* ---- moving runs ------------------------------------------------------------------
 */

struct bytes {
    unsigned char *data;
    size_t len;
};

static int collect_bytes(void *ud, const void *data, size_t len)
{
    struct bytes *b = ud;
    unsigned char *p = realloc(b->data, b->len + len);

    if (!p)
        return 1;
    memcpy(p + b->len, data, len);
    b->data = p;
    b->len += len;
    return 0;
}

static void make_varied_run(lil_store *st, const char *id)
{
    lil_run *run = u_run(st, id);
    struct fn_ctx ok = {.result = "r", .result_len = 1};
    struct fn_ctx bad = {.fail_msg = "boom"};

    T_REQUIRE(run);
    T_OK(u_step_text(run, "a", "A"));
    T_EQ_I64(lil_step(run, "f", fn_generic, &bad, NULL), LIL_E_FAILED);
    T_OK(lil_effect(run, "charge", "amount=5", 8, fn_generic, &ok, NULL));
    T_OK(lil_run_complete(run, "done", 4));
    T_OK(lil_run_close(run));
}

static void same_records(lil_store *a, const char *ida, lil_store *b, const char *idb)
{
    lil_run *ra = u_run_opts(a, ida, LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0);
    lil_run *rb = u_run_opts(b, idb, LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0);
    struct u_recs x, y;

    T_REQUIRE(ra && rb);
    T_OK(u_collect(ra, &x));
    T_OK(u_collect(rb, &y));
    T_EQ_I64(x.n, y.n);
    for (size_t i = 1; i < x.n && i < y.n; i++) { /* BEGIN names the run */
        T_EQ_I64(x.r[i].type, y.r[i].type);
        T_EQ_I64(x.r[i].ts_ns, y.r[i].ts_ns);
        T_EQ_STR(x.r[i].key, y.r[i].key);
        T_EQ_MEM(x.r[i].payload, x.r[i].payload_len, y.r[i].payload,
                 y.r[i].payload_len);
    }
    u_recs_free(&x);
    u_recs_free(&y);
    T_OK(lil_run_close(ra));
    T_OK(lil_run_close(rb));
}

static void expect_intact(lil_store *st, const char *id)
{
    lil_check_report rep = {.struct_size = sizeof(rep)};

    T_OK(lil_run_check(st, id, 0, &rep));
    T_EQ_I64(rep.intact, 1);
    T_EQ_I64(rep.torn_tail, 0);
}

static void round_trip(void)
{
    lil_store *pg = u_store(NULL), *fs = NULL, *pg2 = u_store("other");
    struct bytes from_pg = {0}, from_fs = {0};
    char *id = NULL;

    T_OK(lil_store_open(NULL, "files", &fs)); /* a file store, whatever the suite */
    T_REQUIRE(pg && fs && pg2);
    /* no key on either side (a PostgreSQL store has none of its own), so the
     * bytes move unchanged; a file store's own key would seal them anew
     * (test_rollback.c, test_cli_move.c) */
    T_OK(lil_store_set_own_key(fs, 0));
    make_varied_run(pg, "r");
    T_OK(lil_run_export(pg, "r", collect_bytes, &from_pg));
    T_OK(lil_run_import(fs, from_pg.data, from_pg.len, NULL, &id));
    T_EQ_STR(id, "r");
    lil_free(id);
    expect_intact(fs, "r");
    same_records(pg, "r", fs, "r");
    T_OK(lil_run_export(fs, "r", collect_bytes, &from_fs));
    T_EQ_MEM(from_fs.data, from_fs.len, from_pg.data, from_pg.len); /* byte for byte */
    T_EQ_I64(lil_run_import(pg, from_fs.data, from_fs.len, NULL, NULL), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(pg), "already exists");
    T_OK(lil_run_import(pg2, from_fs.data, from_fs.len, "copy", &id));
    T_EQ_STR(id, "copy");
    lil_free(id);
    expect_intact(pg2, "copy");
    same_records(pg, "r", pg2, "copy");
    free(from_pg.data);
    free(from_fs.data);
    lil_store_close(pg);
    lil_store_close(fs);
    lil_store_close(pg2);
}

T_TEST(runs_move_between_postgresql_and_files)
{
    round_trip();
}

T_TEST(keyed_runs_move_with_their_key)
{
    struct bytes b = {0};
    lil_store *st;

    setenv("LIL_JOURNAL_KEY", "k-e-y", 1);
    round_trip();
    unsetenv("LIL_JOURNAL_KEY");
    st = u_store(NULL);
    T_EQ_I64(lil_run_export(st, "r", collect_bytes, &b), LIL_E_KEY);
    free(b.data);
    lil_store_close(st);
}

T_TEST(import_refuses_what_is_no_journal)
{
    lil_store *st = u_store(NULL);
    struct bytes b = {0};
    lil_run *run = u_run(st, "r");

    T_REQUIRE(run);
    T_OK(lil_run_close(run));
    T_EQ_I64(lil_run_import(st, "hello", 5, NULL, NULL), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(st), "not a lil journal");
    T_OK(lil_run_export(st, "r", collect_bytes, &b));
    T_REQUIRE(b.len > 100);
    b.data[100] ^= 1; /* in BEGIN (64..128), records after it: damage */
    T_EQ_I64(lil_run_import(st, b.data, b.len, "x", NULL), LIL_E_CORRUPT);
    T_EQ_I64(lil_run_import(st, b.data, 64, "x", NULL), LIL_E_INVAL);
    T_EQ_I64(lil_run_export(st, "nope", collect_bytes, &b), LIL_E_NOTFOUND);
    free(b.data);
    lil_store_close(st);
}

T_MAIN()
