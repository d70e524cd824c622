/*
 * test_proc.c -- child processes (src/os/proc.h), black-box through proc.h
 * with /bin/sh -c fixtures.
 *
 * Most cases run twice: with the POSIX system-call table (exit watched
 * through a pidfd) and with a table whose pidfd_open always fails with
 * ENOSYS (the waitid polling of older kernels).  Each case checks what a
 * caller relies on: exit codes, death by a signal, a timeout that kills
 * the whole process group (grandchildren included) and, when SIGTERM is
 * ignored, SIGKILL after the grace period; output caps (the rest read and
 * dropped, the child not blocked), large stdin, stdin from /dev/null, cwd,
 * env; a program that cannot be started gives LIL_E_CHILD with its errno;
 * the child holds exactly descriptors 0, 1, 2 (it lists /proc/self/fd: the
 * child is this binary run with --list-fds); no zombie is left, no
 * descriptor leaks, the process group or session is what was asked, and
 * the host's closed stdio, ignored SIGPIPE or blocked signals do not leak
 * into the child; a host that reaps children itself gets LIL_E_CHILD.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/env.h"
#include "faults.h"
#include "os/proc.h"
#include "proc_util.h"
#include "t.h"

typedef void (*case_fn)(lil_env *env);

static struct lil_err E;
static char self_exe[PATH_MAX];

#define P_OK(call)                                                            \
    do {                                                                      \
        lil_status p_rc_ = (call);                                            \
        if (p_rc_ != LIL_OK) {                                                \
            fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call, \
                    lil_status_name(p_rc_), E.msg);                           \
            t_fail();                                                         \
        }                                                                     \
    } while (0)

/* Run fn with a plain env, then with pidfd_open failing (ENOSYS). */
static void both(case_fn fn)
{
    struct t_fault no_pidfd = {T_K_PIDFD_OPEN, 1, T_ACT_ERR, ENOSYS, 1, 0};
    lil_env *env = NULL;

    T_REQUIRE(lil_env_new(&env) == LIL_OK);
    fn(env);
    lil_env_free(env);
    fprintf(stderr, "  (again without a pidfd)\n");
    env = t_env_faulty();
    T_REQUIRE(env != NULL);
    t_faults_arm(&no_pidfd);
    fn(env);
    /* A case that waited at all did so without a pidfd. */
    T_CHECK(t_faults_count(T_K_POLL) == 0 || t_faults_count(T_K_PIDFD_OPEN) > 0);
    t_faults_reset();
    lil_env_free(env);
    T_CHECK(tp_no_children());
}

static struct lil_proc_opts capture(void)
{
    struct lil_proc_opts o = {0};

    o.out = LIL_PROC_PIPE;
    o.err = LIL_PROC_PIPE;
    return o;
}

/* /bin/sh -c script with o (NULL: stdout and stderr captured). */
static lil_status sh(lil_env *env, const char *script, struct lil_proc_opts *o,
                     int timeout_ms, int grace_ms, struct lil_proc_result *r)
{
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    struct lil_proc_opts d = capture();
    lil_status rc;

    if (!o)
        o = &d;
    o->argv = argv;
    rc = lil__proc_run(env, &E, o, timeout_ms, grace_ms, r);
    o->argv = NULL;
    return rc;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- exit status ------------------------------------------------------------ */

static void exit_codes(lil_env *env)
{
    struct lil_proc_result r;

    P_OK(sh(env, "exit 0", NULL, -1, 0, &r));
    T_CHECK(r.status.ended && !r.status.timed_out);
    T_EQ_I64(r.status.code, 0);
    T_EQ_I64(r.status.signal, 0);
    lil__proc_result_free(env, &r);
    P_OK(sh(env, "exit 3", NULL, 10000, 0, &r));
    T_CHECK(r.status.ended && !r.status.timed_out);
    T_EQ_I64(r.status.code, 3);
    lil__proc_result_free(env, &r);
}

T_TEST(exit_codes)
{
    both(exit_codes);
}

static void signals(lil_env *env)
{
    struct lil_proc_result r;

    P_OK(sh(env, "kill -KILL $$", NULL, -1, 0, &r));
    T_CHECK(r.status.ended);
    T_EQ_I64(r.status.signal, SIGKILL);
    T_EQ_I64(r.status.code, -1);
    lil__proc_result_free(env, &r);
    P_OK(sh(env, "kill -SEGV $$", NULL, -1, 0, &r));
    T_CHECK(r.status.ended);
    T_EQ_I64(r.status.signal, SIGSEGV);
    T_EQ_I64(r.status.code, -1);
    lil__proc_result_free(env, &r);
}

T_TEST(death_by_signal)
{
    both(signals);
}

/* ---- timeouts and killing the tree -------------------------------------------- */

/* The script prints its background child's pid and its own (the group's
 * id), then blocks; the timeout must end the whole group. */
static void timeout_group(lil_env *env, const char *script, int grace_ms, int sig)
{
    struct lil_proc_result r;
    double t0 = now_s();
    int grandchild = 0, group = 0;

    P_OK(sh(env, script, NULL, 1000, grace_ms, &r));
    T_CHECK(r.status.timed_out && r.status.ended);
    T_EQ_I64(r.status.signal, sig);
    T_CHECK(now_s() - t0 < 20);
    T_REQUIRE(r.out.data != NULL);
    T_REQUIRE(sscanf(r.out.data, "%d %d", &grandchild, &group) == 2);
    T_REQUIRE(grandchild > 0 && group > 0);
    T_CHECK(tp_dead(grandchild));
    T_CHECK(tp_group_dead(group));
    lil__proc_result_free(env, &r);
}

static void timeout_kills_group(lil_env *env)
{
    timeout_group(env, "sleep 100 & echo $! $$; sleep 100", 2000, SIGTERM);
}

T_TEST(timeout_kills_group)
{
    both(timeout_kills_group);
}

static void sigterm_ignored(lil_env *env)
{
    /* The trap is inherited: neither sh nor the background sleep dies of
     * SIGTERM; SIGKILL after the grace period ends both. */
    timeout_group(env, "trap '' TERM; sleep 100 & echo $! $$; sleep 100", 300, SIGKILL);
}

T_TEST(sigkill_after_grace)
{
    both(sigterm_ignored);
}

static void wait_then_kill(lil_env *env)
{
    const char *argv[] = {"sleep", "100", NULL};
    struct lil_proc_opts o = {0};
    struct lil_proc_status st;
    struct lil_proc *p = NULL;
    pid_t pid;

    o.argv = argv;
    P_OK(lil__proc_spawn(env, &E, &o, &p));
    T_REQUIRE(p != NULL);
    pid = lil__proc_pid(p);
    T_EQ_I64(tp_pgid(pid), pid);
    P_OK(lil__proc_wait(p, &E, 50, &st));
    T_CHECK(st.timed_out && !st.ended);
    P_OK(lil__proc_wait(p, &E, 0, &st));
    T_CHECK(st.timed_out && !st.ended);
    P_OK(lil__proc_kill(p, &E, 5000, &st));
    T_CHECK(st.ended && !st.timed_out);
    T_EQ_I64(st.signal, SIGTERM);
    P_OK(lil__proc_wait(p, &E, -1, &st)); /* the same status again */
    T_CHECK(st.ended);
    T_EQ_I64(st.signal, SIGTERM);
    P_OK(lil__proc_kill(p, &E, 0, &st)); /* ended: nothing is sent */
    T_EQ_I64(st.signal, SIGTERM);
    lil__proc_free(p);
    T_CHECK(waitpid(pid, NULL, WNOHANG) == -1 && errno == ECHILD);
}

T_TEST(wait_then_kill)
{
    both(wait_then_kill);
}

/* A background process that keeps stdout open does not hang the wait. */
static void background_holds_pipe(lil_env *env)
{
    struct lil_proc_result r;
    double t0 = now_s();
    pid_t bg;

    P_OK(sh(env, "sleep 100 & echo $!", NULL, 30000, 0, &r));
    T_CHECK(r.status.ended && !r.status.timed_out);
    T_EQ_I64(r.status.code, 0);
    T_CHECK(now_s() - t0 < 20);
    bg = r.out.data ? (pid_t)atol(r.out.data) : 0;
    T_CHECK(bg > 0);
    if (bg > 0 && kill(bg, SIGKILL) == 0)
        T_CHECK(tp_dead(bg));
    lil__proc_result_free(env, &r);
}

T_TEST(background_holds_pipe)
{
    both(background_holds_pipe);
}

/* ---- output ------------------------------------------------------------------ */

static bool all_zero(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static void output_cap(lil_env *env)
{
    struct lil_proc_opts o = capture();
    struct lil_proc_result r;

    o.out_cap = 1000;
    P_OK(sh(env, "head -c 3000000 /dev/zero; echo done >&2", &o, 60000, 0, &r));
    T_CHECK(r.status.ended && !r.status.timed_out);
    T_EQ_I64(r.status.code, 0);
    T_EQ_I64(r.out.len, 1000);
    T_EQ_I64(r.out.total, 3000000);
    T_CHECK(r.out.truncated);
    T_REQUIRE(r.out.data != NULL);
    T_CHECK(all_zero(r.out.data, r.out.len) && r.out.data[1000] == '\0');
    T_EQ_STR(r.err.data, "done\n");
    T_EQ_I64(r.err.total, 5);
    T_CHECK(!r.err.truncated);
    lil__proc_result_free(env, &r);
}

T_TEST(output_over_cap_is_truncated)
{
    both(output_cap);
}

/* stop_at_cap: a stream over its cap ends the run at once (the group
 * killed, over_cap set, not a timeout), long before the time runs out. */
static void output_cap_stops(lil_env *env)
{
    struct lil_proc_opts o = capture();
    struct lil_proc_result r;
    double t0 = now_s();
    int grandchild = 0;

    o.out_cap = 1000;
    o.stop_at_cap = true;
    P_OK(sh(env, "sleep 100 & echo $! >&2; head -c 5000 /dev/zero; sleep 100", &o,
            60000, 0, &r));
    T_CHECK(r.over_cap && r.out.truncated);
    T_CHECK(r.status.ended && !r.status.timed_out);
    T_EQ_I64(r.status.signal, SIGTERM);
    T_EQ_I64(r.out.len, 1000);
    T_CHECK(now_s() - t0 < 20);
    T_REQUIRE(r.err.data != NULL);
    T_REQUIRE(sscanf(r.err.data, "%d", &grandchild) == 1);
    T_CHECK(tp_dead(grandchild));
    lil__proc_result_free(env, &r);
    /* Under the cap, stop_at_cap changes nothing. */
    P_OK(sh(env, "head -c 1000 /dev/zero", &o, 60000, 0, &r));
    T_CHECK(!r.over_cap && !r.out.truncated && r.status.code == 0);
    lil__proc_result_free(env, &r);
}

T_TEST(output_over_cap_stops_the_child)
{
    both(output_cap_stops);
}

/* A thread that waits for the published group id and sends it SIGTERM,
 * as lil_loop_interrupt does. */
static void *interrupter(void *arg)
{
    int *pgid = arg, g = 0;
    double t0 = now_s();

    while ((g = __atomic_load_n(pgid, __ATOMIC_ACQUIRE)) <= 0 && now_s() - t0 < 20)
        usleep(1000);
    if (g > 0)
        kill(-g, SIGTERM);
    return NULL;
}

/* running_pgid: the child's group id while it runs (another thread ends
 * the group through it), 0 once the run is over. */
static void running_pgid(lil_env *env)
{
    struct lil_proc_opts o = capture();
    struct lil_proc_result r;
    int pgid = 0;
    pthread_t th;
    double t0 = now_s();

    o.running_pgid = &pgid;
    T_REQUIRE(pthread_create(&th, NULL, interrupter, &pgid) == 0);
    P_OK(sh(env, "sleep 100", &o, 60000, 0, &r));
    pthread_join(th, NULL);
    T_EQ_I64(pgid, 0);
    T_CHECK(r.status.ended && !r.status.timed_out);
    T_EQ_I64(r.status.signal, SIGTERM);
    T_CHECK(now_s() - t0 < 20);
    lil__proc_result_free(env, &r);
    /* In the caller's group nothing is published (a kill of the group
     * would reach the caller). */
    pgid = -7;
    o.group = LIL_PROC_SAME_GROUP;
    P_OK(sh(env, "true", &o, 60000, 0, &r));
    T_EQ_I64(pgid, -7);
    lil__proc_result_free(env, &r);
}

T_TEST(running_pgid_published)
{
    both(running_pgid);
}

static void output_both_streams(lil_env *env)
{
    struct lil_proc_result r;

    /* Each stream alone fills its pipe many times over. */
    P_OK(sh(env, "head -c 1000000 /dev/zero; head -c 1000000 /dev/zero >&2", NULL,
            60000, 0, &r));
    T_EQ_I64(r.status.code, 0);
    T_EQ_I64(r.out.len, 1000000);
    T_EQ_I64(r.err.len, 1000000);
    T_CHECK(!r.out.truncated && !r.err.truncated);
    lil__proc_result_free(env, &r);
    P_OK(sh(env, "printf 'hello\\n'; printf oops >&2", NULL, -1, 0, &r));
    T_EQ_STR(r.out.data, "hello\n");
    T_EQ_STR(r.err.data, "oops");
    lil__proc_result_free(env, &r);
    P_OK(sh(env, "true", NULL, -1, 0, &r));
    T_CHECK(r.out.data == NULL && r.out.len == 0 && r.out.total == 0);
    lil__proc_result_free(env, &r);
}

T_TEST(output_both_streams)
{
    both(output_both_streams);
}

/* ---- stdin ------------------------------------------------------------------- */

static uint8_t *pattern(size_t n)
{
    uint8_t *b = malloc(n);
    uint64_t s = 42;

    for (size_t i = 0; b && i < n; i++)
        b[i] = (uint8_t)t_rand(&s);
    return b;
}

static void large_stdin(lil_env *env)
{
    const char *cat[] = {"cat", NULL};
    struct lil_proc_opts o = capture();
    struct lil_proc_result r;
    size_t n = 5000000;
    uint8_t *in = pattern(n);

    T_REQUIRE(in != NULL);
    o.argv = cat;
    o.in = LIL_PROC_PIPE;
    o.stdin_data = in;
    o.stdin_len = n;
    o.out_cap = 8u << 20;
    P_OK(lil__proc_run(env, &E, &o, 60000, 0, &r));
    T_EQ_I64(r.status.code, 0);
    T_EQ_MEM(r.out.data, r.out.len, in, n);
    lil__proc_result_free(env, &r);
    P_OK(sh(env, "wc -c", &o, 60000, 0, &r));
    T_EQ_I64(r.out.data ? atol(r.out.data) : 0, 5000000);
    lil__proc_result_free(env, &r);
    free(in);
}

T_TEST(large_stdin)
{
    both(large_stdin);
}

/* A child that does not read all of its stdin: no SIGPIPE reaches this
 * process (whose SIGPIPE has its default action here). */
static void stdin_unread(lil_env *env)
{
    struct lil_proc_opts o = capture();
    struct lil_proc_result r;
    size_t n = 10000000;
    uint8_t *in = pattern(n);

    T_REQUIRE(in != NULL);
    signal(SIGPIPE, SIG_DFL);
    o.in = LIL_PROC_PIPE;
    o.stdin_data = in;
    o.stdin_len = n;
    P_OK(sh(env, "head -c 10 >/dev/null; exit 4", &o, 60000, 0, &r));
    T_EQ_I64(r.status.code, 4);
    lil__proc_result_free(env, &r);
    P_OK(sh(env, "exec 0<&-; exit 5", &o, 60000, 0, &r));
    T_EQ_I64(r.status.code, 5);
    lil__proc_result_free(env, &r);
    free(in);
}

T_TEST(stdin_not_read)
{
    both(stdin_unread);
}

static void stdin_null(lil_env *env)
{
    const char *link[] = {"readlink", "/proc/self/fd/0", NULL};
    const char *cat[] = {"cat", NULL};
    struct lil_proc_opts o = capture();
    struct lil_proc_result r;

    o.argv = link;
    P_OK(lil__proc_run(env, &E, &o, 10000, 0, &r));
    T_EQ_STR(r.out.data, "/dev/null\n");
    lil__proc_result_free(env, &r);
    o.argv = cat; /* EOF at once, no hang */
    P_OK(lil__proc_run(env, &E, &o, 10000, 0, &r));
    T_CHECK(!r.status.timed_out && r.status.code == 0 && r.out.len == 0);
    lil__proc_result_free(env, &r);
    o.in = LIL_PROC_PIPE; /* an empty buffer: EOF at once too */
    P_OK(lil__proc_run(env, &E, &o, 10000, 0, &r));
    T_CHECK(!r.status.timed_out && r.status.code == 0 && r.out.len == 0);
    lil__proc_result_free(env, &r);
}

T_TEST(stdin_dev_null)
{
    both(stdin_null);
}

/* ---- cwd and env --------------------------------------------------------------- */

static void cwd(lil_env *env)
{
    const char *pwd[] = {"pwd", "-P", NULL};
    struct lil_proc_opts o = capture();
    struct lil_proc_result r;
    char want[PATH_MAX + 1];

    mkdir(t_path("sub"), 0700);
    T_REQUIRE(realpath(t_path("sub"), want) != NULL);
    strcat(want, "\n");
    o.argv = pwd;
    o.cwd = t_path("sub");
    P_OK(lil__proc_run(env, &E, &o, 10000, 0, &r));
    T_EQ_STR(r.out.data, want);
    lil__proc_result_free(env, &r);
    o.cwd = t_path("missing");
    T_EQ_I64(lil__proc_run(env, &E, &o, 10000, 0, &r), LIL_E_CHILD);
    T_EQ_I64(E.sys_errno, ENOENT);
    T_CONTAINS(E.msg, "missing");
    T_CHECK(r.out.data == NULL && !r.status.ended);
    lil__proc_result_free(env, &r);
}

T_TEST(cwd)
{
    both(cwd);
}

static void environment(lil_env *env)
{
    const char *envp[] = {"FOO=bar", NULL};
    struct lil_proc_opts o = capture();
    struct lil_proc_result r;

    setenv("LIL_PROC_T", "inherited", 1);
    P_OK(sh(env, "echo \"${FOO-unset} ${LIL_PROC_T-unset}\"", &o, 10000, 0, &r));
    T_EQ_STR(r.out.data, "unset inherited\n");
    lil__proc_result_free(env, &r);
    o.envp = envp;
    P_OK(sh(env, "echo \"${FOO-unset} ${LIL_PROC_T-unset}\"", &o, 10000, 0, &r));
    T_EQ_STR(r.out.data, "bar unset\n");
    lil__proc_result_free(env, &r);
    unsetenv("LIL_PROC_T");
}

T_TEST(environment)
{
    both(environment);
}

/* ---- start failures ------------------------------------------------------------- */

static void expect_start_error(lil_env *env, const char *prog, int err_no)
{
    const char *argv[] = {prog, NULL};
    struct lil_proc_opts o = capture();
    struct lil_proc *p = (struct lil_proc *)(uintptr_t)1; /* must become NULL */
    int fds = tp_fd_count();

    o.argv = argv;
    T_EQ_I64(lil__proc_spawn(env, &E, &o, &p), LIL_E_CHILD);
    T_CHECK(p == NULL);
    T_EQ_I64(E.sys_errno, err_no);
    T_CONTAINS(E.msg, prog);
    T_CONTAINS(E.msg, strerror(err_no));
    T_EQ_I64(tp_fd_count(), fds);
    T_CHECK(tp_no_children());
}

static void start_errors(lil_env *env)
{
    int fd;

    expect_start_error(env, "/nonexistent/prog", ENOENT);
    expect_start_error(env, "lil-no-such-program-anywhere", ENOENT); /* PATH */
    fd = open(t_path("plain"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    T_REQUIRE(fd >= 0);
    T_REQUIRE(write(fd, "echo hi\n", 8) == 8);
    close(fd);
    chmod(t_path("plain"), 0644);                     /* the first round left it 0755 */
    expect_start_error(env, t_path("plain"), EACCES); /* not executable */
    chmod(t_path("plain"), 0755);
    /* No #! line: an exec error, not a silent run under /bin/sh. */
    expect_start_error(env, t_path("plain"), ENOEXEC);
}

T_TEST(start_errors)
{
    both(start_errors);
}

T_TEST(invalid_arguments)
{
    const char *none[] = {NULL};
    const char *sh_argv[] = {"/bin/sh", "-c", "true", NULL};
    struct lil_proc_opts o = {0};
    struct lil_proc_status st;
    struct lil_proc_result r;
    struct lil_proc *p = NULL;
    lil_env *env = NULL;

    T_REQUIRE(lil_env_new(&env) == LIL_OK);
    T_EQ_I64(lil__proc_spawn(env, &E, NULL, &p), LIL_E_INVAL);
    T_EQ_I64(lil__proc_spawn(env, &E, &o, &p), LIL_E_INVAL);
    o.argv = none;
    T_EQ_I64(lil__proc_spawn(env, &E, &o, &p), LIL_E_INVAL);
    o.argv = sh_argv;
    o.in = LIL_PROC_PIPE;
    o.stdin_len = 3;
    T_EQ_I64(lil__proc_spawn(env, &E, &o, &p), LIL_E_INVAL);
    o.in = (enum lil_proc_io)7;
    T_EQ_I64(lil__proc_spawn(env, &E, &o, &p), LIL_E_INVAL);
    o.in = LIL_PROC_NULL;
    T_EQ_I64(lil__proc_spawn(env, &E, &o, NULL), LIL_E_INVAL);
    T_EQ_I64(lil__proc_run(env, &E, &o, -1, 0, NULL), LIL_E_INVAL);
    T_EQ_I64(lil__proc_wait(NULL, &E, 0, &st), LIL_E_INVAL);
    T_EQ_I64(lil__proc_kill(NULL, &E, 0, &st), LIL_E_INVAL);
    T_CHECK(lil__proc_output(NULL, 1) == NULL);
    T_EQ_I64(lil__proc_pid(NULL), -1);
    lil__proc_free(NULL);
    lil__proc_result_free(env, NULL);
    P_OK(lil__proc_run(env, &E, &o, -1, 0, &r));
    T_EQ_I64(r.status.code, 0);
    lil__proc_result_free(env, &r);
    lil_env_free(env);
}

/* ---- descriptors, zombies, groups --------------------------------------------------
 */

/* The child is this binary with --list-fds. */
static void fd_hygiene(lil_env *env)
{
    const char *argv[] = {self_exe, "--list-fds", NULL};
    struct lil_proc_opts o = capture();
    struct lil_proc_result r;
    int careless = open("/dev/null", O_RDONLY); /* a host's fd without O_CLOEXEC */
    int fds = tp_fd_count();

    T_REQUIRE(careless >= 0);
    o.argv = argv;
    o.in = LIL_PROC_PIPE;
    o.stdin_data = "x";
    o.stdin_len = 1;
    P_OK(lil__proc_run(env, &E, &o, 10000, 0, &r));
    T_EQ_STR(r.out.data, "0 1 2\n");
    lil__proc_result_free(env, &r);
    o.in = LIL_PROC_NULL;
    o.err = LIL_PROC_INHERIT;
    P_OK(lil__proc_run(env, &E, &o, 10000, 0, &r));
    T_EQ_STR(r.out.data, "0 1 2\n");
    lil__proc_result_free(env, &r);
    T_EQ_I64(tp_fd_count(), fds);
    close(careless);
}

T_TEST(no_fd_leak)
{
    both(fd_hygiene);
}

static void no_zombie(lil_env *env)
{
    const char *t[] = {"true", NULL}, *s[] = {"sleep", "100", NULL};
    struct lil_proc_opts o = {0};
    struct lil_proc_status st;
    struct lil_proc *p = NULL;
    pid_t pid;

    o.argv = t;
    P_OK(lil__proc_spawn(env, &E, &o, &p));
    pid = lil__proc_pid(p);
    P_OK(lil__proc_wait(p, &E, -1, &st));
    T_CHECK(st.ended && st.code == 0);
    T_CHECK(waitpid(pid, NULL, WNOHANG) == -1 && errno == ECHILD);
    lil__proc_free(p);
    o.argv = s; /* freed while running: killed and reaped */
    P_OK(lil__proc_spawn(env, &E, &o, &p));
    pid = lil__proc_pid(p);
    lil__proc_free(p);
    T_CHECK(waitpid(pid, NULL, WNOHANG) == -1 && errno == ECHILD);
    T_CHECK(tp_state(pid) == 0);
    T_CHECK(tp_no_children());
}

T_TEST(no_zombie)
{
    both(no_zombie);
}

static pid_t spawn_sleep(lil_env *env, enum lil_proc_group g, struct lil_proc **p)
{
    const char *argv[] = {"sleep", "100", NULL};
    struct lil_proc_opts o = {0};

    o.argv = argv;
    o.group = g;
    *p = NULL;
    P_OK(lil__proc_spawn(env, &E, &o, p));
    return lil__proc_pid(*p);
}

static void groups(lil_env *env)
{
    struct lil_proc_status st;
    struct lil_proc *p;
    pid_t pid;

    pid = spawn_sleep(env, LIL_PROC_NEW_GROUP, &p);
    T_EQ_I64(tp_pgid(pid), pid);
    T_EQ_I64(tp_sid(pid), getsid(0));
    lil__proc_free(p);
    pid = spawn_sleep(env, LIL_PROC_NEW_SESSION, &p);
    T_EQ_I64(tp_pgid(pid), pid);
    T_EQ_I64(tp_sid(pid), pid);
    lil__proc_free(p);
    /* In our own group a kill must reach the child only (we survive it). */
    pid = spawn_sleep(env, LIL_PROC_SAME_GROUP, &p);
    T_EQ_I64(tp_pgid(pid), getpgrp());
    P_OK(lil__proc_kill(p, &E, 5000, &st));
    T_EQ_I64(st.signal, SIGTERM);
    lil__proc_free(p);
}

T_TEST(process_groups)
{
    both(groups);
}

/* ---- what the host's state must not pass on ---------------------------------------
 */

static void host_stdio_closed(lil_env *env)
{
    const char *cat[] = {"cat", NULL};
    struct lil_proc_opts o = capture();
    struct lil_proc_result r;
    int saved = fcntl(0, F_DUPFD_CLOEXEC, 3);

    /* With 0 free, the first new descriptor is 0: lil must move it out of
     * the way of the child's dup2s. */
    T_REQUIRE(saved >= 0);
    close(0);
    o.argv = cat;
    o.in = LIL_PROC_PIPE;
    o.stdin_data = "abc";
    o.stdin_len = 3;
    P_OK(lil__proc_run(env, &E, &o, 10000, 0, &r));
    dup2(saved, 0);
    close(saved);
    T_EQ_STR(r.out.data, "abc");
    T_CHECK(r.err.len == 0);
    lil__proc_result_free(env, &r);
}

T_TEST(host_stdio_closed)
{
    both(host_stdio_closed);
}

static void host_signals(lil_env *env)
{
    struct lil_proc_result r;
    struct lil_proc_status st;
    struct lil_proc *p;
    sigset_t term, old;

    /* SIGPIPE ignored here: yes must still die quietly of it. */
    signal(SIGPIPE, SIG_IGN);
    P_OK(sh(env, "yes | head -n 1", NULL, 10000, 0, &r));
    signal(SIGPIPE, SIG_DFL);
    T_EQ_STR(r.out.data, "y\n");
    T_CHECK(r.err.len == 0);
    lil__proc_result_free(env, &r);
    /* SIGTERM blocked here: the child starts with an empty mask. */
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, &old);
    spawn_sleep(env, LIL_PROC_NEW_GROUP, &p);
    sigprocmask(SIG_SETMASK, &old, NULL);
    P_OK(lil__proc_kill(p, &E, 5000, &st));
    T_EQ_I64(st.signal, SIGTERM);
    lil__proc_free(p);
}

T_TEST(host_signal_state_not_inherited)
{
    both(host_signals);
}

/* With SIGCHLD ignored the kernel reaps the child itself: the wait says
 * so (LIL_E_CHILD) instead of hanging, and the pid is never signalled
 * again. */
static void host_reaps(lil_env *env)
{
    struct lil_proc_result r;

    signal(SIGCHLD, SIG_IGN);
    T_EQ_I64(sh(env, "exit 0", NULL, 10000, 0, &r), LIL_E_CHILD);
    signal(SIGCHLD, SIG_DFL);
    T_EQ_I64(E.sys_errno, ECHILD);
    T_CONTAINS(E.msg, "SIGCHLD");
    lil__proc_result_free(env, &r);
}

T_TEST(host_reaps_children)
{
    both(host_reaps);
}

/* ---- the child side of no_fd_leak
 * ----------------------------------------------------- */

static int list_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int fds[64], n = 0;

    if (!d)
        return 100;
    while ((e = readdir(d)) != NULL && n < 64)
        if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
            fds[n++] = atoi(e->d_name);
    closedir(d);
    for (int i = 1; i < n; i++) /* sort: readdir's order is not promised */
        for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
            int x = fds[j];
            fds[j] = fds[j - 1];
            fds[j - 1] = x;
        }
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? " " : "", fds[i]);
    printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
    ssize_t n;

    if (argc == 2 && strcmp(argv[1], "--list-fds") == 0)
        return list_fds();
    n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
    if (n <= 0)
        return 1;
    self_exe[n] = '\0';
    return t_main(argc, argv);
}
