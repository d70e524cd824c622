/*
 * test_supervise.c -- lil_supervise through lil.h: a forked "host" process
 * calls it, the call returns in each child, which runs durable steps and
 * kills itself where the test says; the test reads the host's exit status,
 * the events its on_event wrote to a file, and the steps' own log.
 *
 * What it proves: the call returns in a new child after each death and
 * the work resumes from the journal (each step done once); what comes
 * before the call runs once; the child gets the caller's signal state
 * back, its own process group and LIL_ATTEMPT; invalid options come back
 * as LIL_E_INVAL before anything is forked or installed; the supervisor
 * ends the process with the final status; argv runs a program instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <lil/lil.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sv_util.h"
#include "t.h"

/* ---- the host ------------------------------------------------------------ */

static void append(const char *path, const char *line)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

    if (fd >= 0) {
        if (write(fd, line, strlen(line)) < 0) {
            /* the test sees the line missing */
        }
        close(fd);
    }
}

/* on_event: one line per event, "kind attempt=A pid=P code=C sig=S
 * run=R step=S started=B restarts=N". */
static void write_event(void *ud, const lil_supervise_event *ev)
{
    char line[1024];

    snprintf(line, sizeof(line),
             "%s attempt=%u pid=%d code=%d sig=%d run=%s step=%s "
             "started=%d restarts=%u msg=%s\n",
             ev->kind, ev->attempt, ev->pid, ev->exit_code, ev->signal,
             ev->run_id ? ev->run_id : "-", ev->step ? ev->step : "-", ev->step_started,
             ev->restarts, ev->message);
    append(ud, line);
}

struct plan {
    int kill_at[8]; /* attempt a dies in step kill_at[a - 1] (0: none) */
    int steps;
    int exit_code; /* the child's exit after its steps */
};

static int attempt_now(void)
{
    const char *a = getenv("LIL_ATTEMPT");

    return a ? atoi(a) : 0;
}

struct step_ctx {
    const struct plan *p;
    int k;
};

static int step_fn(lil_call *call, void *ud)
{
    const struct step_ctx *c = ud;
    char line[64];
    int a = attempt_now();

    snprintf(line, sizeof(line), "start %d attempt %d\n", c->k, a);
    append("steps.log", line);
    if (a >= 1 && a <= 8 && c->p->kill_at[a - 1] == c->k)
        raise(SIGKILL);
    snprintf(line, sizeof(line), "done %d\n", c->k);
    append("steps.log", line);
    return lil_call_set_result(call, line, strlen(line)) == LIL_OK ? 0 : 1;
}

/* The child's work: the run "api" of p->steps steps. */
static int child_work(const struct plan *p)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    struct step_ctx c = {p, 0};
    lil_status rc = lil_store_open(NULL, "store", &st);
    char line[64];

    snprintf(line, sizeof(line), "after attempt %d\n", attempt_now());
    append("host.log", line);
    if (rc == LIL_OK)
        rc = lil_run_open(st, "api", NULL, &run);
    for (c.k = 1; rc == LIL_OK && c.k <= p->steps; c.k++) {
        lil_bytes out = {0};
        rc = lil_step(run, "s", step_fn, &c, &out);
        lil_free(out.data);
    }
    lil_run_close(run);
    lil_store_close(st);
    return rc == LIL_OK ? p->exit_code : 99;
}

static char events_path[4096];

/* Fork a host that logs "before", calls lil_supervise(o) and, in each
 * child, does the plan's work.  Returns the host's pid. */
static pid_t start_host(lil_supervise_options *o, const struct plan *p)
{
    pid_t pid;

    snprintf(events_path, sizeof(events_path), "%s", t_path("events.log"));
    fflush(NULL);
    pid = fork();
    if (pid != 0)
        return pid;
    append("host.log", "before\n");
    o->on_event = write_event;
    o->ud = events_path;
    if (lil_supervise(o) != LIL_OK) {
        append("host.log", lil_errmsg());
        _exit(98);
    }
    exit(child_work(p));
}

static lil_supervise_options opts(void)
{
    lil_supervise_options o = {.struct_size = sizeof(o)};

    o.backoff_s = LIL_SUPERVISE_NONE;
    o.jitter = LIL_SUPERVISE_NONE;
    return o;
}

/* ---- tests --------------------------------------------------------------- */

/* Killed in steps 2, 4 and 5: the call returns three more times, the work
 * resumes from the journal, every step is done once; "before" runs once. */
T_TEST(returns_in_each_child_and_resumes)
{
    lil_supervise_options o = opts();
    struct plan p = {{2, 4, 5}, 6, 0};
    const char *events, *steps;
    char line[64];
    pid_t host;

    o.dir = "store";
    host = start_host(&o, &p);
    T_EQ_I64(sv_wait(host, 30000), 0);
    T_EQ_I64(sv_count_lines(sv_slurp("host.log"), "before"), 1);
    for (int a = 1; a <= 4; a++) {
        snprintf(line, sizeof(line), "after attempt %d", a);
        T_EQ_I64(sv_count_lines(sv_slurp("host.log"), line), 1);
    }
    steps = sv_slurp("steps.log");
    for (int k = 1; k <= 6; k++) {
        snprintf(line, sizeof(line), "done %d", k);
        T_EQ_I64(sv_count_lines(steps, line), 1);
    }
    events = sv_slurp(t_path("events.log"));
    T_CONTAINS(events, "death attempt=1 pid=");
    T_CONTAINS(events,
               "code=-1 sig=9 run=api step=s started=0 restarts=0 msg=attempt 1: pid ");
    T_CONTAINS(events, "sig=9 run=api step=s#3 started=0 restarts=1");
    T_CONTAINS(events, "backoff attempt=3 ");
    T_CONTAINS(events, "done attempt=4 "); /* exit 0: not a death */
    T_CHECK(!strstr(events, "death attempt=4 "));
    T_CONTAINS(events, "code=0 sig=0 run=api step=s#6 started=0 restarts=3");
    T_CONTAINS(events, "exit attempt=4 ");
    T_CONTAINS(events, "msg=exiting with 0 (the child exited with 0)\n");
}

/* The child: its own process group, the caller's pid as parent, the
 * caller's dispositions and mask back, its descriptors kept, and
 * LIL_SUPERVISED / LIL_ATTEMPT set. */
T_TEST(child_gets_caller_state)
{
    pid_t host;

    fflush(NULL);
    host = fork();
    if (host == 0) {
        lil_supervise_options o = opts();
        struct sigaction sa, chld;
        sigset_t mask, now;
        char line[256];
        int fd = open("/dev/null", O_RDONLY); /* no O_CLOEXEC: the child keeps it */
        pid_t me = getpid();
        signal(SIGUSR1, SIG_IGN);
        sigemptyset(&mask);
        sigaddset(&mask, SIGUSR2);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        if (lil_supervise(&o) != LIL_OK)
            _exit(98);
        sigaction(SIGUSR1, NULL, &sa);
        sigaction(SIGCHLD, NULL, &chld);
        sigprocmask(SIG_BLOCK, NULL, &now);
        snprintf(line, sizeof(line),
                 "usr1_ign=%d usr2_blocked=%d int_blocked=%d chld_dfl=%d own_group=%d "
                 "parent=%d fd=%d sup=%s attempt=%s\n",
                 sa.sa_handler == SIG_IGN, sigismember(&now, SIGUSR2),
                 sigismember(&now, SIGINT), chld.sa_handler == SIG_DFL,
                 getpgrp() == getpid(), getppid() == me, fcntl(fd, F_GETFD) >= 0,
                 getenv("LIL_SUPERVISED"), getenv("LIL_ATTEMPT"));
        append("child.txt", line);
        exit(0);
    }
    T_EQ_I64(sv_wait(host, 10000), 0);
    T_EQ_STR(sv_slurp("child.txt"),
             "usr1_ign=1 usr2_blocked=1 int_blocked=0 chld_dfl=1 "
             "own_group=1 parent=1 fd=1 sup=1 attempt=1\n");
}

/* Invalid options: LIL_E_INVAL with a message, nothing forked, no handler
 * left behind. */
T_TEST(invalid_options)
{
    const char *const empty_argv[] = {NULL};
    const int bad_code[] = {-1};

    struct {
        const char *msg;
        lil_supervise_options o;
    } cases[] = {
        {"struct_size", {.struct_size = 0}},
        {"restart policy",
         {.struct_size = sizeof(lil_supervise_options), .restart = 7}},
        {"jitter", {.struct_size = sizeof(lil_supervise_options), .jitter = 1.5}},
        {"backoff_s", {.struct_size = sizeof(lil_supervise_options), .backoff_s = -3}},
        {"backoff_s",
         {.struct_size = sizeof(lil_supervise_options), .backoff_s = (double)NAN}},
        {"max_backoff_s",
         {.struct_size = sizeof(lil_supervise_options), .max_backoff_s = 1e9}},
        {"healthy_s", {.struct_size = sizeof(lil_supervise_options), .healthy_s = -1}},
        {"crash_loop_t_s needs crash_loop_k",
         {.struct_size = sizeof(lil_supervise_options), .crash_loop_t_s = 3}},
        {"no_restart_codes[0] is -1",
         {.struct_size = sizeof(lil_supervise_options),
          .no_restart_codes = bad_code,
          .no_restart_count = 1}},
        {"no_restart_codes is NULL",
         {.struct_size = sizeof(lil_supervise_options), .no_restart_count = 1}},
        {"same_step needs dir",
         {.struct_size = sizeof(lil_supervise_options), .same_step = 2}},
        {"argv holds no program",
         {.struct_size = sizeof(lil_supervise_options), .argv = empty_argv}},
    };
    struct sigaction sa;

    T_EQ_I64(lil_supervise(NULL), LIL_E_INVAL);
    T_CONTAINS(lil_errmsg(), "opts is NULL");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        T_EQ_I64(lil_supervise(&cases[i].o), LIL_E_INVAL);
        T_CONTAINS(lil_errmsg(), cases[i].msg);
    }
    errno = 0;
    T_CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
    sigaction(SIGINT, NULL, &sa);
    T_CHECK(sa.sa_handler == SIG_DFL);
    sigaction(SIGCHLD, NULL, &sa);
    T_CHECK(sa.sa_handler == SIG_DFL);
}

/* With an env whose runs are open, the call refuses (a forked child would
 * share the runs' locks). */
T_TEST(runs_open_refused)
{
    lil_supervise_options o = opts();
    lil_env *env = NULL;
    lil_store *st = NULL;
    lil_run *run = NULL;

    T_OK(lil_env_new(&env));
    T_OK(lil_store_open(env, "store", &st));
    T_OK(lil_run_open(st, "held", NULL, &run));
    o.env = env;
    T_EQ_I64(lil_supervise(&o), LIL_E_INVAL);
    T_CONTAINS(lil_errmsg(), "runs are open with this env");
    lil_run_close(run);
    lil_store_close(st);
    lil_env_free(env);
}

/* argv: each child runs that program; on-crash ends with its exit code;
 * a program not found ends with 127 after one giveup. */
T_TEST(argv_runs_a_program)
{
    const char *const sh[] = {"sh", "-c", "echo $LIL_ATTEMPT >> att.txt; exit 3", NULL};
    const char *const none[] = {"no-such-program-lil", NULL};
    lil_supervise_options o = opts();
    struct plan p = {{0}, 0, 0};

    o.argv = sh;
    o.restart = LIL_RESTART_ON_CRASH;
    T_EQ_I64(sv_wait(start_host(&o, &p), 10000), 3);
    T_EQ_STR(sv_slurp("att.txt"), "1\n");
    T_CONTAINS(sv_slurp(t_path("events.log")), "exit attempt=1 ");

    o.argv = none;
    unlink(t_path("events.log"));
    T_EQ_I64(sv_wait(start_host(&o, &p), 10000), 127);
    T_EQ_I64(sv_count_lines(sv_slurp("host.log"), "before"), 2);
    T_CONTAINS(
        sv_slurp(t_path("events.log")),
        "giveup attempt=1 pid=0 code=127 sig=0 run=- step=- started=0 restarts=0 "
        "msg=giving up: cannot run no-such-program-lil: No such file or directory");
}

/* Quick failures trip the crash-loop breaker: the supervisor ends with 81. */
T_TEST(crash_loop_in_fork_mode)
{
    lil_supervise_options o = opts();
    struct plan p = {{0}, 1, 1}; /* one step, then exit 1 */

    o.crash_loop_k = 3;
    o.crash_loop_t_s = 10;
    T_EQ_I64(sv_wait(start_host(&o, &p), 10000), LIL_SUPERVISE_EXIT_CRASH_LOOP);
    T_EQ_I64(sv_count_lines(sv_slurp("steps.log"), "done 1"), 1);
    T_CONTAINS(sv_slurp(t_path("events.log")), "giveup attempt=3 ");
    T_CONTAINS(sv_slurp(t_path("events.log")), "code=81 ");
}

/* The same step three times: 82, and the step named. */
T_TEST(same_step_in_fork_mode)
{
    lil_supervise_options o = opts();
    struct plan p = {{3, 3, 3, 3}, 4, 0};

    o.dir = "store";
    o.same_step = 3;
    T_EQ_I64(sv_wait(start_host(&o, &p), 10000), LIL_SUPERVISE_EXIT_SAME_STEP);
    T_CONTAINS(
        sv_slurp(t_path("events.log")),
        "msg=giving up: the child died 3 times in a row in run api after step s#2");
}

/* The supervisor killed (SIGKILL): its child gets SIGTERM and ends. */
T_TEST(supervisor_killed_child_terminated)
{
    const char *const sleeper[] = {"sleep", "300", NULL};
    lil_supervise_options o = opts();
    struct plan p = {{0}, 0, 0};
    pid_t host, child = -1;
    const char *ev;

    o.argv = sleeper;
    host = start_host(&o, &p);
    T_REQUIRE(sv_wait_file(t_path("events.log"), "start attempt=1", 10000));
    ev = strstr(sv_slurp(t_path("events.log")), "pid=");
    child = ev ? (pid_t)atoi(ev + 4) : -1;
    T_REQUIRE(child > 0);
    kill(host, SIGKILL);
    T_EQ_I64(sv_wait(host, 10000), 137);
    for (int i = 0; i < 500 && sv_state(child) && sv_state(child) != 'Z'; i++)
        usleep(10000);
    T_CHECK(sv_state(child) == 0 || sv_state(child) == 'Z');
}

T_MAIN()
