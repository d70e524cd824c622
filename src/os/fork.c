/*
 * fork.c -- a child tied to this process (fork.h): fork with every signal
 * blocked, the child's group, parent-death signal and mask, then a return
 * or an exec whose failure comes back through a close-on-exec pipe.
 *
 * The exec's errno travels as one int written to the pipe just before the
 * child's _exit(127); a successful exec closes the pipe (O_CLOEXEC), so the
 * parent reads either four bytes or the end of file.
 */
#include "os/fork.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "os/child.h"
#include "os/os.h"

#define CLOEXEC_LOOP_MAX 65536 /* descriptors marked one by one, at most */

/* posix's prototypes predate const; exec changes neither array.  The cast
 * goes through uintptr_t to say that on purpose. */
static char *const *strv(const char *const *v)
{
    return (char *const *)(uintptr_t)v; /* NOLINT(performance-no-int-to-ptr) */
}

/* Every descriptor above 2 closed by the exec: close_range (Linux 5.11),
 * else FD_CLOEXEC set one by one up to the descriptor limit. */
static void cloexec_above_2(void)
{
    struct rlimit rl;
    rlim_t max = CLOEXEC_LOOP_MAX;

    if (close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) == 0)
        return;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < max)
        max = rl.rlim_cur;
    for (rlim_t fd = 3; fd < max; fd++)
        (void)fcntl((int)fd, F_SETFD, FD_CLOEXEC);
}

/* The child, up to its return or its exec.  Async-signal-safe calls only. */
static void child_side(const struct lil_fork_opts *o, pid_t parent, int err_fd)
{
    sigset_t empty;
    int e;

    if (o->in_child)
        o->in_child(o->ud);
    if (o->new_group)
        (void)setpgid(0, 0);
    if (o->death_signal)
        (void)prctl(PR_SET_PDEATHSIG, (unsigned long)o->death_signal);
    sigemptyset(&empty);
    /* NOLINTNEXTLINE(concurrency-mt-unsafe): the forked child has one thread */
    (void)sigprocmask(SIG_SETMASK, o->child_mask ? o->child_mask : &empty, NULL);
    if (o->death_signal && getppid() != parent)
        (void)raise(o->death_signal); /* died before prctl could see it */
    if (!o->argv)
        return;
    cloexec_above_2();
    execvpe(o->argv[0], strv(o->argv), o->envp ? strv(o->envp) : environ);
    e = errno;
    if (write(err_fd, &e, sizeof(e)) < 0) {
        /* nobody to tell: the parent reads end of file and sees exit 127 */
    }
    _exit(127);
}

/* The exec's errno from the pipe: 0 when the exec happened. */
static int read_exec_errno(const struct lil_env *env, int fd)
{
    int e = 0;
    size_t got = 0;

    while (got < sizeof(e)) {
        ssize_t r = env->os->read(fd, (char *)&e + got, sizeof(e) - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got == sizeof(e) ? (e ? e : ENOEXEC) : 0;
}

static void reap(const struct lil_env *env, pid_t pid)
{
    siginfo_t info;

    (void)lil__child_waitid(env, pid, 0, &info);
}

/* In the parent, after a fork with argv: did the exec happen? */
static lil_status exec_outcome(const struct lil_env *env, struct lil_err *err,
                               const struct lil_fork_opts *o, pid_t pid, int rd)
{
    int e = read_exec_errno(env, rd);

    lil__os_close(env, rd);
    if (!e)
        return LIL_OK;
    reap(env, pid);
    return lil__seterr(err, LIL_E_CHILD, e, "exec %s: %s", o->argv[0], lil__errstr(e));
}

static lil_status fork_error(struct lil_err *err, int e)
{
    return lil__seterr(err, LIL_E_IO, e, "fork: %s", lil__errstr(e));
}

lil_status lil__fork(const struct lil_env *env, struct lil_err *err,
                     const struct lil_fork_opts *o, pid_t *pid)
{
    sigset_t all, old;
    int fds[2] = {-1, -1};
    pid_t parent = getpid(), child;
    int e;

    if (!o || !pid || (o->argv && !o->argv[0]))
        return lil__seterr(err, LIL_E_INVAL, 0, "fork: bad options");
    *pid = -1;
    if (o->argv && env->os->pipe2(fds, O_CLOEXEC) < 0)
        return lil__seterr(err, LIL_E_IO, errno, "pipe2: %s", lil__errstr(errno));
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    child = env->os->fork();
    e = errno;
    if (child == 0) {
        if (fds[0] >= 0)
            close(fds[0]);
        child_side(o, parent, fds[1]);
        *pid = 0;
        return LIL_OK;
    }
    if (child > 0 && o->new_group)
        (void)setpgid(child, child); /* EACCES once it exec'd: it did it itself */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    lil__os_close(env, fds[1]);
    if (child < 0) {
        lil__os_close(env, fds[0]);
        return fork_error(err, e);
    }
    if (o->argv) {
        lil_status rc = exec_outcome(env, err, o, child, fds[0]);
        if (rc != LIL_OK)
            return rc;
    }
    *pid = child;
    return LIL_OK;
}
