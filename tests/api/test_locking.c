/*
 * test_locking.c -- one writer process per run.  A forked child holds a
 * run open; the parent is refused with LIL_E_LOCKED and a message naming
 * the child's pid, may still open the run read-only (which refuses every
 * write), cannot repair it, and gets it as soon as the child is SIGKILLed
 * (the lock dies with its process: no stale lock files).
 */
#include <lil/lil.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api_util.h"
#include "t.h"

/* Child: open run "r", run step "a", tell the parent, wait to be killed. */
static int child_holds(void *ud)
{
    struct u_pipe *ready = ud;
    lil_store *st = NULL;
    lil_run *run = NULL;
    if (lil_store_open(NULL, U_STORE, &st) != LIL_OK)
        return 10;
    if (lil_run_open(st, "r", NULL, &run) != LIL_OK)
        return 11;
    if (u_step_text(run, "a", "A") != LIL_OK)
        return 12;
    u_pipe_signal(ready);
    for (;;)
        pause();
}

static pid_t start_holder(struct u_pipe *ready)
{
    if (u_pipe_open(ready) != 0)
        return -1;
    pid_t pid = u_fork(child_holds, ready);
    if (pid > 0 && u_pipe_wait(ready, 30) != 0) {
        kill(pid, SIGKILL);
        u_wait(pid);
        return -1;
    }
    return pid;
}

static void stop_holder(pid_t pid, struct u_pipe *ready)
{
    kill(pid, SIGKILL);
    T_EQ_I64(u_wait(pid), 128 + SIGKILL);
    u_pipe_close(ready);
}

T_TEST(locked_while_child_holds_then_free_after_kill)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    struct u_pipe ready;
    pid_t pid = start_holder(&ready);
    T_REQUIRE(pid > 0);
    char want[64];
    snprintf(want, sizeof(want), "held by pid %d", (int)pid);

    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    lil_run *run = (lil_run *)st;
    T_EQ_I64(lil_run_open(st, "r", NULL, &run), LIL_E_LOCKED);
    T_CHECK(run == NULL);
    T_CONTAINS(lil_store_errmsg(st), want);
    T_CONTAINS(lil_errmsg(), want);
    lil_run_opts o = {.struct_size = sizeof(o), .flags = LIL_OPEN_EXISTING};
    T_EQ_I64(lil_run_open(st, "r", &o, &run), LIL_E_LOCKED);
    /* another run of the same store is not affected */
    lil_run *other = u_run(st, "other");
    T_CHECK(other != NULL);
    T_OK(lil_run_close(other));

    stop_holder(pid, &ready);
    run = u_run(st, "r");
    T_REQUIRE(run);
    int never = 0;
    lil_bytes out = {0};
    T_OK(lil_step(run, "a", fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "A", 1);
    lil_free(out.data);
    T_EQ_I64(never, 0);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(readonly_while_locked_refuses_writes)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    struct u_pipe ready;
    pid_t pid = start_holder(&ready);
    T_REQUIRE(pid > 0);
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    lil_run *run = u_run_opts(st, "r", LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0);
    T_CHECK(run != NULL);
    if (run) {
        T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
        struct u_recs rs;
        T_OK(u_collect(run, &rs));
        T_CHECK(u_find(&rs, LIL_REC_BEGIN, "r") != NULL);
        T_CHECK(u_find(&rs, LIL_REC_STEP, "a") != NULL);
        u_recs_free(&rs);
        lil_run_info info = {.struct_size = sizeof(info)};
        T_OK(lil_run_get_info(run, &info));
        T_EQ_I64(info.holder_pid, pid);
        int never = 0;
        T_EQ_I64(lil_step(run, "new", fn_never, &never, NULL), LIL_E_INVAL);
        T_EQ_I64(lil_effect(run, "eff", "q", 1, fn_never, &never, NULL), LIL_E_INVAL);
        T_EQ_I64(lil_run_complete(run, "x", 1), LIL_E_INVAL);
        T_EQ_I64(lil_run_fail(run, "x"), LIL_E_INVAL);
        T_EQ_I64(never, 0);
        T_OK(lil_run_close(run));
    }
    stop_holder(pid, &ready);
    /* nothing was written by the read-only handle */
    run = u_run(st, "r");
    T_REQUIRE(run);
    struct u_recs rs;
    T_OK(u_collect(run, &rs));
    T_CHECK(u_find(&rs, LIL_REC_STEP, "new") == NULL);
    T_CHECK(u_find(&rs, LIL_REC_RUN_DONE, "") == NULL);
    T_CHECK(u_find(&rs, LIL_REC_RUN_FAILED, "") == NULL);
    u_recs_free(&rs);
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(check_while_locked)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    struct u_pipe ready;
    pid_t pid = start_holder(&ready);
    T_REQUIRE(pid > 0);
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    lil_check_report rep;
    memset(&rep, 0, sizeof(rep));
    rep.struct_size = sizeof(rep);
    T_EQ_I64(lil_run_check(st, "r", LIL_CHECK_REPAIR, &rep), LIL_E_LOCKED);
    memset(&rep, 0, sizeof(rep));
    rep.struct_size = sizeof(rep);
    T_OK(lil_run_check(st, "r", 0, &rep));
    T_EQ_I64(rep.intact, 1);
    T_EQ_I64(rep.repaired, 0);
    stop_holder(pid, &ready);
    lil_store_close(st);
}

T_TEST(lock_released_on_close)
{
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_CHECK(run != NULL);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(readonly_without_holder_reports_no_pid)
{
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_run_close(run));
    run = u_run_opts(st, "r", LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0);
    T_REQUIRE(run);
    lil_run_info info = {.struct_size = sizeof(info)};
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64(info.holder_pid, 0); /* nobody holds it now */
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* ---- racing creators ------------------------------------------------------ */

static atomic_int a_calls;
static atomic_int go;

static int fn_count_a(lil_call *call, void *ud)
{
    (void)ud;
    atomic_fetch_add(&a_calls, 1);
    return lil_call_set_result(call, "A", 1) != LIL_OK;
}

struct racer {
    lil_store *st;
    const char *id;
    lil_status open_rc;
    lil_status step_rc;
    char msg[256]; /* lil_errmsg() of a failed open */
};

/* Open (creating) the run, run step "a", hold it a moment, close. */
static void race_once(struct racer *r)
{
    lil_run *run = NULL;
    r->open_rc = lil_run_open(r->st, r->id, NULL, &run);
    r->step_rc = LIL_OK;
    if (r->open_rc != LIL_OK) {
        snprintf(r->msg, sizeof(r->msg), "%s", lil_errmsg());
        return;
    }
    r->step_rc = lil_step(run, "a", fn_count_a, NULL, NULL);
    struct timespec ts = {0, 20 * 1000000L};
    nanosleep(&ts, NULL);
    if (lil_run_close(run) != LIL_OK)
        r->step_rc = LIL_E_IO;
}

static void *racer_main(void *ud)
{
    while (!atomic_load(&go))
        ;
    race_once(ud);
    return NULL;
}

static int count_begin(void *ud, const lil_record *rec)
{
    if (rec->type == LIL_REC_BEGIN)
        (*(int *)ud)++;
    return 0;
}

/* The run was created once: one BEGIN, step a journaled once, intact. */
static void check_created_once(lil_store *st, const char *id)
{
    lil_run *run = u_run(st, id);
    T_REQUIRE(run);
    int begins = 0;
    T_OK(lil_run_foreach(run, count_begin, &begins));
    T_EQ_I64(begins, 1);
    int never = 0;
    T_OK(lil_step(run, "a", fn_never, &never, NULL));
    T_EQ_I64(never, 0);
    T_OK(lil_run_close(run));
    lil_check_report rep = {.struct_size = sizeof(rep)};
    T_OK(lil_run_check(st, id, 0, &rep));
    T_EQ_I64(rep.intact, 1);
}

T_TEST(threads_racing_to_create_a_run)
{
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    for (int round = 0; round < 10; round++) {
        char id[16];
        snprintf(id, sizeof(id), "race%d", round);
        pthread_t th[6];
        struct racer r[6];
        atomic_store(&go, 0);
        atomic_store(&a_calls, 0);
        for (int i = 0; i < 6; i++) {
            r[i] = (struct racer){.st = st, .id = id};
            T_EQ_I64(pthread_create(&th[i], NULL, racer_main, &r[i]), 0);
        }
        atomic_store(&go, 1);
        int opened = 0;
        for (int i = 0; i < 6; i++) {
            pthread_join(th[i], NULL);
            if (r[i].open_rc != LIL_OK && r[i].open_rc != LIL_E_LOCKED) {
                fprintf(stderr, "round %d thread %d: lil_run_open: %s: %s\n", round, i,
                        lil_status_name(r[i].open_rc), r[i].msg);
                t_fail();
            }
            T_EQ_I64(r[i].step_rc, LIL_OK);
            opened += r[i].open_rc == LIL_OK;
        }
        T_CHECK(opened >= 1);
        T_EQ_I64(atomic_load(&a_calls), 1);
        check_created_once(st, id);
    }
    lil_store_close(st);
}

struct proc_racer {
    struct u_pipe *go;
    const char *id;
};

/* Child: wait for the start, race; exit 0 (ran or replayed), 3 (locked). */
static int child_race(void *ud)
{
    struct proc_racer *p = ud;
    lil_store *st = NULL;
    if (lil_store_open(NULL, U_STORE, &st) != LIL_OK)
        return 10;
    if (u_pipe_wait(p->go, 30) != 0)
        return 11;
    struct racer r = {.st = st, .id = p->id};
    race_once(&r);
    lil_store_close(st);
    if (r.open_rc == LIL_E_LOCKED)
        return 3;
    if (r.open_rc != LIL_OK || r.step_rc != LIL_OK)
        return 12;
    /* the parent counts calls through the journal: one STEP record */
    return 0;
}

T_TEST(processes_racing_to_create_a_run)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    for (int round = 0; round < 10; round++) {
        char id[16];
        snprintf(id, sizeof(id), "prace%d", round);
        struct u_pipe gp;
        T_REQUIRE(u_pipe_open(&gp) == 0);
        struct proc_racer p = {.go = &gp, .id = id};
        pid_t pids[4];
        for (int i = 0; i < 4; i++) {
            pids[i] = u_fork(child_race, &p);
            T_REQUIRE(pids[i] > 0);
        }
        T_EQ_I64(write(gp.fd[1], "gggg", 4), 4);
        int ok = 0;
        for (int i = 0; i < 4; i++) {
            int st_code = u_wait(pids[i]);
            T_CHECK(st_code == 0 || st_code == 3);
            ok += st_code == 0;
        }
        u_pipe_close(&gp);
        T_CHECK(ok >= 1);
        check_created_once(st, id);
        lil_run *run = u_run(st, id);
        T_REQUIRE(run);
        struct u_recs rs;
        T_OK(u_collect(run, &rs));
        int steps = 0;
        for (size_t k = 0; k < rs.n; k++)
            steps += rs.r[k].type == LIL_REC_STEP;
        T_EQ_I64(steps, 1); /* fn ran once: one outcome journaled */
        u_recs_free(&rs);
        T_OK(lil_run_close(run));
    }
    lil_store_close(st);
}

/* A reader keeps working while the writer truncates a torn tail under it. */
T_TEST(reader_survives_writer_truncating_tail)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(u_step_text(run, "a", "A"));
    lil_run_info info = {.struct_size = sizeof(info)};
    T_OK(lil_run_get_info(run, &info));
    T_OK(lil_run_close(run));
    static char junk[200000];
    memset(junk, 0x5a, sizeof(junk));
    T_EQ_I64(
        u_write_at(u_journal_path(NULL, "r"), info.journal_bytes, junk, sizeof(junk)),
        0);
    lil_run *reader = u_run_opts(st, "r", LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0);
    T_REQUIRE(reader);
    run = u_run(st, "r"); /* truncates the tail before appending */
    T_REQUIRE(run);
    T_OK(u_step_text(run, "b", "B"));
    T_OK(lil_run_close(run));
    struct u_recs rs;
    T_OK(u_collect(reader, &rs));
    T_CHECK(rs.n >= info.records); /* later records may or may not be seen */
    T_CHECK(u_find(&rs, LIL_REC_STEP, "a") != NULL);
    u_recs_free(&rs);
    T_OK(lil_run_close(reader));
    lil_store_close(st);
}

T_MAIN()
