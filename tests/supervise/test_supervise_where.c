/*
 * test_supervise_where.c -- where a child died, read from the journal
 * (supervise/where.h): runs made through lil.h, then lil__sv_where as the
 * supervisor calls it after a death.  And the supervisor's own failures:
 * a fork that fails ends it with 71, a pipe that cannot be made is an
 * error in the caller with nothing left installed.
 */
#include <errno.h>
#include <lil/lil.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "os/os.h"
#include "supervise/where.h"
#include "sv_util.h"
#include "t.h"

static int ok_fn(lil_call *call, void *ud)
{
    (void)ud;
    return lil_call_set_result(call, "ok", 2) == LIL_OK ? 0 : 1;
}

static int die_fn(lil_call *call, void *ud)
{
    (void)call;
    (void)ud;
    _exit(9);
}

/* Run id with n steps "s" (then left open, as a killed program leaves it). */
static void make_run(const char *id, int n)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_bytes out = {0};

    T_OK(lil_store_open(NULL, "store", &st));
    T_OK(lil_run_open(st, id, NULL, &run));
    for (int i = 0; i < n; i++) {
        T_OK(lil_step(run, "s", ok_fn, NULL, &out));
        lil_free(out.data);
    }
    lil_run_close(run);
    lil_store_close(st);
}

/* Run id: step "prep", then a forked child dies inside effect "charge". */
static void make_in_flight(const char *id)
{
    pid_t pid;
    int status;

    make_run(id, 0);
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        lil_store *st = NULL;
        lil_run *run = NULL;
        lil_bytes out = {0};
        if (lil_store_open(NULL, "store", &st) != LIL_OK ||
            lil_run_open(st, id, NULL, &run) != LIL_OK ||
            lil_step(run, "prep", ok_fn, NULL, &out) != LIL_OK)
            _exit(1);
        lil_effect(run, "charge", "10", 2, die_fn, NULL, &out);
        _exit(1);
    }
    waitpid(pid, &status, 0);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 9);
}

static void where(int64_t since, struct lil_sv_where *w)
{
    struct lil_env env;

    lil__os_env_init(&env);
    T_OK(lil__sv_where(&env, NULL, "store", since, w));
}

static void done(struct lil_sv_where *w)
{
    struct lil_env env;

    lil__os_env_init(&env);
    lil__sv_where_free(&env, w);
}

T_TEST(no_store_nothing_created)
{
    struct lil_sv_where w;
    struct stat sb;

    where(0, &w);
    T_CHECK(!w.store && !w.run_id && !w.step);
    T_CHECK(stat("store", &sb) < 0 && errno == ENOENT);
    done(&w);
    mkdir("store", 0700);
    where(0, &w);
    T_CHECK(w.store && !w.run_id);
    done(&w);
}

T_TEST(last_step_finished)
{
    struct lil_sv_where w;
    int64_t t0 = lil__wall_ns();

    make_run("r", 3);
    where(t0, &w);
    T_EQ_STR(w.run_id, "r");
    T_EQ_STR(w.step, "s#3");
    T_CHECK(!w.started);
    done(&w);
    /* nothing written since: no run */
    where(lil__wall_ns() + 1000000, &w);
    T_CHECK(w.store && !w.run_id);
    done(&w);
}

T_TEST(run_without_steps)
{
    struct lil_sv_where w;

    make_run("empty", 0);
    where(0, &w);
    T_EQ_STR(w.run_id, "empty");
    T_CHECK(w.step == NULL && !w.started);
    done(&w);
}

T_TEST(most_recent_run_wins)
{
    struct lil_sv_where w;
    struct timespec ms = {0, 5000000};

    make_run("a", 2);
    nanosleep(&ms, NULL);
    make_run("b", 1);
    where(0, &w);
    T_EQ_STR(w.run_id, "b");
    T_EQ_STR(w.step, "s");
    done(&w);
    nanosleep(&ms, NULL);
    make_run("a", 3); /* replays 2, runs the 3rd */
    where(0, &w);
    T_EQ_STR(w.run_id, "a");
    T_EQ_STR(w.step, "s#3");
    done(&w);
}

T_TEST(effect_in_flight)
{
    struct lil_sv_where w;
    lil_store *st = NULL;
    lil_run *run = NULL;

    make_in_flight("pay");
    where(0, &w);
    T_EQ_STR(w.run_id, "pay");
    T_EQ_STR(w.step, "charge");
    T_CHECK(w.started);
    done(&w);
    /* resolved: no longer in flight; the resolution closes it */
    T_OK(lil_store_open(NULL, "store", &st));
    T_OK(lil_run_open(st, "pay", NULL, &run));
    T_OK(lil_run_resolve(run, "charge", LIL_RESOLVE_ABORT, NULL, 0, "tester", "test"));
    lil_run_close(run);
    lil_store_close(st);
    where(0, &w);
    T_EQ_STR(w.run_id, "pay");
    T_CHECK(!w.started);
    done(&w);
}

T_TEST(keyed_run_needs_its_key)
{
    struct lil_sv_where w;

    setenv("LIL_JOURNAL_KEY", "sekrit", 1);
    make_run("k", 2);
    where(0, &w);
    T_EQ_STR(w.run_id, "k");
    T_EQ_STR(w.step, "s#2");
    done(&w);
    unsetenv("LIL_JOURNAL_KEY");
    where(0, &w); /* unreadable without the key: passed over */
    T_CHECK(w.store && !w.run_id);
    done(&w);
}

/* ---- the supervisor's own failures --------------------------------------- */

static struct lil_os failing;

static pid_t fork_fails(void)
{
    errno = EAGAIN;
    return -1;
}

static int pipe_fails(int fds[2], int flags)
{
    (void)fds;
    (void)flags;
    errno = EMFILE;
    return -1;
}

static void write_event(void *ud, const lil_supervise_event *ev)
{
    FILE *f = fopen(ud, "ae");

    if (f) {
        fprintf(f, "%s %d %s\n", ev->kind, ev->exit_code, ev->message);
        fclose(f);
    }
}

T_TEST(fork_fails_exit_71)
{
    char events[4096];
    pid_t host;

    snprintf(events, sizeof(events), "%s", t_path("events.log"));
    fflush(NULL);
    host = fork();
    if (host == 0) {
        lil_env *env = NULL;
        lil_supervise_options o = {.struct_size = sizeof(o)};
        if (lil_env_new(&env) != LIL_OK)
            _exit(97);
        failing = lil__os_posix;
        failing.fork = fork_fails;
        lil__env_set_os(env, &failing);
        o.env = env;
        o.on_event = write_event;
        o.ud = events;
        lil_supervise(&o);
        _exit(98);
    }
    T_EQ_I64(sv_wait(host, 10000), LIL_SUPERVISE_EXIT_OSERR);
    T_EQ_STR(sv_slurp(events),
             "giveup 71 giving up: cannot start attempt 1: fork: Resource temporarily "
             "unavailable\n"
             "exit 71 exiting with 71 (cannot fork)\n");
}

T_TEST(pipe_fails_error_in_caller)
{
    lil_env *env = NULL;
    lil_supervise_options o = {.struct_size = sizeof(o)};
    struct sigaction sa;

    T_OK(lil_env_new(&env));
    failing = lil__os_posix;
    failing.pipe2 = pipe_fails;
    lil__env_set_os(env, &failing);
    o.env = env;
    T_EQ_I64(lil_supervise(&o), LIL_E_IO);
    T_CONTAINS(lil_errmsg(), "pipe2");
    sigaction(SIGCHLD, NULL, &sa);
    T_CHECK(sa.sa_handler == SIG_DFL);
    errno = 0;
    T_CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
    lil_env_free(env);
}

T_MAIN()
