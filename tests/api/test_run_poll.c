/*
 * test_run_poll.c -- lil_run_poll through lil.h: one look at whether a run
 * changed, without waiting.
 *
 * What it proves: a zeroed mark sees a run with records as changed and
 * takes its last seq; a second look sees nothing; a record appended (by
 * this process or by another) is seen at the next look, and only once; on
 * the file store a look whose journal's modification time has not moved
 * does not read the journal (a journal damaged behind an unchanged time
 * is not noticed, the same journal with a new time is); bad arguments are
 * LIL_E_INVAL and an unknown run LIL_E_NOTFOUND.  lil_store_poll, the
 * look at the list of runs: a run made or removed is seen at the next
 * look; once the list has settled a look sees nothing, also after a run
 * only grew (a memory store has no cheap look: always "changed").  The
 * suite runs against
 * the file store, the memory store (mem_test_run_poll) and PostgreSQL
 * (pg_test_run_poll).
 */
#include <fcntl.h>
#include <lil/lil.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api_util.h"
#include "t.h"

static void append_step(lil_store *st, const char *id, const char *name)
{
    lil_run *run = u_run(st, id);

    T_REQUIRE(run != NULL);
    T_OK(u_step_text(run, name, "x"));
    T_OK(lil_run_close(run));
}

static uint64_t last_seq(lil_store *st, const char *id)
{
    uint64_t last = 0;

    T_OK(lil_run_wait(st, id, 0, 0, &last));
    return last;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

T_TEST(a_look_sees_each_change_once)
{
    lil_store *st = u_store(NULL);
    lil_run_mark mark = {0, 0};
    uint64_t before;
    int changed = -1;

    T_REQUIRE(st != NULL);
    append_step(st, "p", "one");
    T_OK(lil_run_poll(st, "p", &mark, &changed));
    T_EQ_I64(changed, 1);
    T_EQ_I64(mark.last_seq, last_seq(st, "p"));
    before = mark.last_seq;
    T_OK(lil_run_poll(st, "p", &mark, &changed));
    T_EQ_I64(changed, 0);
    T_EQ_I64(mark.last_seq, before);

    append_step(st, "p", "two");
    T_OK(lil_run_poll(st, "p", &mark, &changed));
    T_EQ_I64(changed, 1);
    T_CHECK(mark.last_seq > before);
    T_EQ_I64(mark.last_seq, last_seq(st, "p"));
    nap_ms(150); /* past the coarse clock's slack: looks read nothing */
    for (int i = 0; i < 5; i++) {
        T_OK(lil_run_poll(st, "p", &mark, &changed));
        T_EQ_I64(changed, 0);
    }
    lil_store_close(st);
}

/* A child that appends step "late" to run id after delay_ms, then exits. */
static pid_t child_append(const char *id, int delay_ms)
{
    pid_t pid = fork();

    if (pid == 0) {
        lil_store *st;
        lil_run *run;

        nap_ms(delay_ms);
        st = u_store(NULL);
        run = st ? u_run(st, id) : NULL;
        if (!run || u_step_text(run, "late", "x") != LIL_OK ||
            lil_run_close(run) != LIL_OK)
            _exit(1);
        lil_store_close(st);
        _exit(0);
    }
    return pid;
}

T_TEST(a_look_sees_another_process_append)
{
    lil_store *st;
    lil_run_mark mark = {0, 0};
    int changed = 0, status = -1, looks = 0;
    uint64_t before;
    pid_t pid;

    T_ONE_PROCESS();
    st = u_store(NULL);
    T_REQUIRE(st != NULL);
    append_step(st, "o", "one");
    T_OK(lil_run_poll(st, "o", &mark, &changed));
    before = mark.last_seq;
    pid = child_append("o", 200);
    T_REQUIRE(pid > 0);
    for (changed = 0; !changed && looks < 400; looks++) { /* 20 s at most */
        nap_ms(50);
        T_OK(lil_run_poll(st, "o", &mark, &changed));
    }
    T_EQ_I64(changed, 1);
    T_CHECK(looks >= 3); /* not before the child's append */
    T_CHECK(mark.last_seq > before);
    T_EQ_I64(waitpid(pid, &status, 0), pid);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* the first look may have come between its step and its close */
    T_OK(lil_run_poll(st, "o", &mark, &changed));
    T_EQ_I64(mark.last_seq, last_seq(st, "o"));
    lil_store_close(st);
}

/* Set path's modification time to ns since the epoch. */
static int set_mtime(const char *path, int64_t ns)
{
    struct timespec ts[2] = {{0, UTIME_OMIT}, {ns / 1000000000, ns % 1000000000}};

    return utimensat(AT_FDCWD, path, ts, 0);
}

T_TEST(a_look_at_an_unmoved_journal_reads_nothing)
{
    lil_store *st;
    lil_run_mark mark = {0, 0};
    int changed = 0;
    const char *path;
    int64_t old_ns = (int64_t)(time(NULL) - 60) * 1000000000;

    T_FILE_ONLY();
    st = u_store(NULL);
    T_REQUIRE(st != NULL);
    append_step(st, "f", "one");
    path = u_journal_path(U_STORE_DIR, "f");
    T_REQUIRE(set_mtime(path, old_ns) == 0);
    T_OK(lil_run_poll(st, "f", &mark, &changed)); /* reads: the time moved */
    T_EQ_I64(changed, 1);
    /* the journal's header damaged, its time put back: not read */
    T_REQUIRE(u_write_at(path, 0, "XXXX", 4) == 0);
    T_REQUIRE(set_mtime(path, old_ns) == 0);
    T_OK(lil_run_poll(st, "f", &mark, &changed));
    T_EQ_I64(changed, 0);
    /* the same journal with a new time: read, and the damage found */
    T_REQUIRE(set_mtime(path, old_ns + 1000000000) == 0);
    T_CHECK(lil_run_poll(st, "f", &mark, &changed) != LIL_OK);
    T_EQ_I64(changed, 0);
    lil_store_close(st);
}

T_TEST(bad_arguments_and_unknown_runs)
{
    lil_store *st = u_store(NULL);
    lil_run_mark mark = {0, 0};
    int changed = 7;

    T_REQUIRE(st != NULL);
    append_step(st, "b", "one");
    T_EQ_I64(lil_run_poll(NULL, "b", &mark, &changed), LIL_E_INVAL);
    T_EQ_I64(changed, 0);
    T_EQ_I64(lil_run_poll(st, NULL, &mark, &changed), LIL_E_INVAL);
    T_EQ_I64(lil_run_poll(st, "a/b", &mark, &changed), LIL_E_INVAL);
    T_EQ_I64(lil_run_poll(st, "b", NULL, &changed), LIL_E_INVAL);
    T_EQ_I64(lil_run_poll(st, "b", &mark, NULL), LIL_E_INVAL);
    T_EQ_I64(mark.last_seq, 0);
    changed = 7;
    T_EQ_I64(lil_run_poll(st, "nosuch", &mark, &changed), LIL_E_NOTFOUND);
    T_EQ_I64(changed, 0);
    T_CHECK(strlen(lil_store_errmsg(st)) > 0);
    lil_store_close(st);
}

static void settle(void)
{
    struct timespec ts = {0, 150 * 1000000L}; /* past the coarse clock's slack */

    nanosleep(&ts, NULL);
}

T_TEST(a_look_at_the_list_sees_runs_made_and_removed)
{
    lil_store *st = u_store(NULL);
    int64_t stamp = 0;
    int changed = 0;

    T_REQUIRE(st != NULL);
    append_step(st, "first", "one");
    T_OK(lil_store_poll(st, &stamp, &changed));
    T_EQ_I64(changed, 1); /* the first look */
    settle();
    T_OK(lil_store_poll(st, &stamp, &changed));
    T_OK(lil_store_poll(st, &stamp, &changed));
    T_EQ_I64(changed, t_store_mem() ? 1 : 0);
    append_step(st, "first", "two"); /* grew: not the list */
    settle();
    T_OK(lil_store_poll(st, &stamp, &changed));
    T_EQ_I64(changed, t_store_mem() ? 1 : 0);
    append_step(st, "second", "one");
    T_OK(lil_store_poll(st, &stamp, &changed));
    T_EQ_I64(changed, 1);
    settle();
    T_OK(lil_store_poll(st, &stamp, &changed));
    T_OK(lil_run_remove(st, "second", LIL_REMOVE_FORCE));
    T_OK(lil_store_poll(st, &stamp, &changed));
    T_EQ_I64(changed, 1);
    changed = 0;
    T_EQ_I64(lil_store_poll(NULL, &stamp, &changed), LIL_E_INVAL);
    T_EQ_I64(changed, 1);
    T_EQ_I64(lil_store_poll(st, NULL, &changed), LIL_E_INVAL);
    T_EQ_I64(lil_store_poll(st, &stamp, NULL), LIL_E_INVAL);
    lil_store_close(st);
}

T_MAIN()
