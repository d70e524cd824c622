/*
 * test_proc_faults.c -- every system call of src/os/proc.c failed in turn,
 * and every allocation (curl torture), over two workloads:
 *   pipes:   cat with 300 KB on stdin, stdout captured, stderr to
 *            /dev/null, a working directory (run to completion);
 *   timeout: sh -c 'sleep 100 & sleep 100' waited for 100 ms, then killed
 *            with a grace period and freed (spawn, wait, kill, free).
 * For each kind (pipe2, fcntl, open, spawn, pidfd_open, poll, read, write,
 * waitid, kill), a realistic errno, and every k until the workload no
 * longer reaches the k-th call:
 *   - the status is LIL_OK or an error with a message (LIL_E_IO,
 *     LIL_E_CHILD, LIL_E_NOMEM); EINTR is never an error, and a failed
 *     pidfd_open is not one either (waitid polling takes over);
 *   - on LIL_OK the result is exactly right (cat's output is its input;
 *     the timed-out child ended by SIGTERM);
 *   - nothing is left: no allocation, no descriptor, no child (zombie or
 *     not), no live member of the child's process group.
 * T_TRACE=1 prints every run's status and message.  Everything runs in this process, so
 * the asan preset's LeakSanitizer sees every error path too.  env_tables checks that
 * every env gets the POSIX table from os/ (base installs none) and that tests can
 * replace it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "faults.h"
#include "os/os.h"
#include "os/proc.h"
#include "proc_util.h"
#include "t.h"

#define STDIN_LEN 300000

struct kcase {
    enum t_kind kind;
    int err;
    bool must_pass; /* the fault is absorbed: LIL_OK and a right result */
};

static const struct kcase kcases[] = {
    {T_K_PIPE2, EMFILE, false},     {T_K_FCNTL, EMFILE, false},
    {T_K_OPEN, EMFILE, false},      {T_K_SPAWN, EAGAIN, false},
    {T_K_PIDFD_OPEN, ENOSYS, true}, {T_K_PIDFD_OPEN, EMFILE, true},
    {T_K_POLL, ENOMEM, false},      {T_K_POLL, EINTR, true},
    {T_K_READ, EIO, false},         {T_K_READ, EINTR, true},
    {T_K_WRITE, EIO, false},        {T_K_WRITE, EINTR, true},
    {T_K_WAITID, EINVAL, false},    {T_K_WAITID, EINTR, true},
    {T_K_KILL, EPERM, false},
};

struct outcome {
    lil_status rc;
    bool right; /* on LIL_OK: the result is what it must be */
    pid_t group;
};

static struct lil_err E;
static uint8_t *input;

/* ---- workloads ------------------------------------------------------------------ */

static void wl_pipes(lil_env *env, struct outcome *oc)
{
    const char *cat[] = {"cat", NULL};
    struct lil_proc_opts o = {0};
    struct lil_proc_result r;

    o.argv = cat;
    o.cwd = t_tmpdir();
    o.in = LIL_PROC_PIPE;
    o.stdin_data = input;
    o.stdin_len = STDIN_LEN;
    o.out = LIL_PROC_PIPE;
    oc->rc = lil__proc_run(env, &E, &o, 60000, 1000, &r);
    oc->right = r.status.ended && r.status.code == 0 && r.out.len == STDIN_LEN &&
                memcmp(r.out.data, input, STDIN_LEN) == 0;
    oc->group = 0;
    lil__proc_result_free(env, &r);
}

static void wl_timeout(lil_env *env, struct outcome *oc)
{
    const char *argv[] = {"/bin/sh", "-c", "sleep 100 & sleep 100", NULL};
    struct lil_proc_opts o = {0};
    struct lil_proc_status st = {0};
    struct lil_proc *p = NULL;

    o.argv = argv;
    o.out = LIL_PROC_PIPE;
    o.err = LIL_PROC_PIPE;
    oc->right = false;
    oc->group = 0;
    oc->rc = lil__proc_spawn(env, &E, &o, &p);
    if (oc->rc != LIL_OK)
        return;
    oc->group = lil__proc_pid(p);
    oc->rc = lil__proc_wait(p, &E, 100, &st);
    if (oc->rc == LIL_OK && st.timed_out)
        oc->rc = lil__proc_kill(p, &E, 5000, &st);
    oc->right = st.ended && st.signal == SIGTERM;
    lil__proc_free(p);
}

typedef void (*workload_fn)(lil_env *env, struct outcome *oc);

/* ---- checks ---------------------------------------------------------------------- */

static int complain(const char *ctx, const char *fmt, ...) LIL_PRINTF(2, 3);

static int complain(const char *ctx, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "  [%s] ", ctx);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return 1;
}

static int check(const char *ctx, const struct outcome *oc, bool must_pass,
                 const struct t_alloc *a, int fds)
{
    const char *name = lil_status_name(oc->rc);
    int bad = 0;

    if (oc->rc == LIL_OK && !oc->right)
        bad += complain(ctx, "LIL_OK with a wrong result");
    if (must_pass && oc->rc != LIL_OK)
        bad += complain(ctx, "the fault should be absorbed, got %s", name);
    if (oc->rc != LIL_OK && oc->rc != LIL_E_IO && oc->rc != LIL_E_CHILD &&
        oc->rc != LIL_E_NOMEM)
        bad += complain(ctx, "unexpected %s", name);
    if (oc->rc != LIL_OK && (E.code != oc->rc || !E.msg[0]))
        bad += complain(ctx, "%s without its message", name);
    if (a->live != 0)
        bad += complain(ctx, "%ld allocation(s) leaked", a->live);
    if (tp_fd_count() != fds)
        bad += complain(ctx, "%d descriptor(s) leaked", tp_fd_count() - fds);
    if (!tp_no_children())
        bad += complain(ctx, "a child is left");
    if (oc->group > 0 && !tp_group_dead(oc->group))
        bad += complain(ctx, "process group %d still alive", (int)oc->group);
    return bad;
}

/* One run of wl with fault f armed (f may be NULL) and the allocator
 * failing at fail_at (0: never).  Returns the violations; *fired says
 * whether the fault (or the allocator) acted. */
static int one(workload_fn wl, const struct t_fault *f, unsigned long fail_at,
               bool must_pass, const char *ctx, bool *fired)
{
    struct t_alloc a = {0};
    struct outcome oc;
    lil_env *env = t_env_faulty();
    int fds, bad;

    if (!env || t_alloc_install(env, &a) != LIL_OK)
        return 1;
    a.fail_at = fail_at;
    fds = tp_fd_count();
    memset(&E, 0, sizeof(E));
    if (f)
        t_faults_arm(f);
    wl(env, &oc);
    *fired = f ? t_faults_fired() > 0 : a.failed > 0;
    t_faults_reset();
    lil_env_free(env);
    bad = check(ctx, &oc, must_pass && *fired, &a, fds);
    if (bad || getenv("T_TRACE"))
        fprintf(stderr, "  [%s] %s%s %s\n", ctx, *fired ? "" : "(not reached) ",
                lil_status_name(oc.rc), E.msg);
    return bad;
}

static void each_fault(workload_fn wl, const char *name)
{
    long runs = 0, fired_runs = 0;

    for (size_t i = 0; i < sizeof(kcases) / sizeof(kcases[0]); i++) {
        const struct kcase *kc = &kcases[i];
        for (unsigned long k = 1; k < 5000; k++) {
            struct t_fault f = {kc->kind, k, T_ACT_ERR, kc->err, 0, k};
            char ctx[160];
            bool fired;
            snprintf(ctx, sizeof(ctx), "%s: %s #%lu fails with %s", name,
                     t_kind_name(kc->kind), k, strerror(kc->err));
            T_CHECK(one(wl, &f, 0, kc->must_pass, ctx, &fired) == 0);
            runs++;
            if (!fired)
                break;
            fired_runs++;
        }
    }
    printf("%s: %ld runs, %ld with the fault acting\n", name, runs, fired_runs);
    T_CHECK(fired_runs > 0);
}

static void each_allocation(workload_fn wl, const char *name)
{
    unsigned long k;

    for (k = 1; k < 1000; k++) {
        char ctx[120];
        bool fired;
        snprintf(ctx, sizeof(ctx), "%s: allocation #%lu fails", name, k);
        T_CHECK(one(wl, NULL, k, false, ctx, &fired) == 0);
        if (!fired)
            break;
    }
    printf("%s: %lu allocations failed in turn\n", name, k - 1);
    T_CHECK(k > 1);
}

/* ---- tests ----------------------------------------------------------------------- */

T_TEST(pipes_every_call_fails)
{
    each_fault(wl_pipes, "pipes");
}

T_TEST(timeout_every_call_fails)
{
    each_fault(wl_timeout, "timeout");
}

T_TEST(every_allocation_fails)
{
    each_allocation(wl_pipes, "pipes");
    each_allocation(wl_timeout, "timeout");
}

T_TEST(env_tables)
{
    struct lil_env local;
    lil_env *env = NULL;

    T_REQUIRE(lil_env_new(&env) == LIL_OK);
    T_CHECK(env->os == &lil__os_posix);
    lil__env_set_os(env, t_faults_os());
    T_CHECK(env->os == t_faults_os());
    lil__env_set_os(env, NULL);
    T_CHECK(env->os == &lil__os_posix);
    lil_env_free(env);
    lil__env_init(&local);
    T_CHECK(local.os == NULL); /* base installs no table */
    lil__os_env_init(&local);
    T_CHECK(local.os == &lil__os_posix);
}

int main(int argc, char **argv)
{
    uint64_t s = 7;
    int rc;

    input = malloc(STDIN_LEN);
    if (!input)
        return 1;
    for (size_t i = 0; i < STDIN_LEN; i++)
        input[i] = (uint8_t)t_rand(&s);
    signal(SIGPIPE, SIG_DFL); /* a SIGPIPE that escaped would end the test */
    rc = t_main(argc, argv);
    free(input);
    return rc;
}
