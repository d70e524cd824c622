/*
 * proc.c -- child processes (proc.h): posix_spawnp, pipes, a pidfd, and one
 * poll loop that feeds stdin, drains stdout and stderr and notices the exit.
 *
 * Life of a child: spawn sets up the descriptors the child gets (all of
 * them O_CLOEXEC and moved above 2, so that the dup2s onto 0, 1 and 2
 * cannot overwrite one another even when the host has closed its own
 * standard descriptors), starts it, and opens a pidfd.  The exit is first
 * only observed (waitid with WNOWAIT): the child stays a zombie, which
 * keeps its pid -- the id of its process group -- from being reused while
 * lil may still signal the group.  Reaping comes last; after it, nothing
 * is ever sent to that pid again.
 */
#include "os/proc.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/handles.h"
#include "os/child.h"
#include "os/os.h"

#define CHUNK        65536 /* bytes per read or write: a default pipe */
#define TICK_MIN_MS  1     /* without a pidfd: first sleep between looks */
#define TICK_MAX_MS  32    /* ... doubling up to this */
#define DRAIN_ROUNDS 1024  /* reads after the exit: bounded, see drain() */

struct stream {
    int fd;       /* read end; -1 when not captured or at end of file */
    size_t cap;   /* most bytes kept */
    size_t alloc; /* bytes allocated at o.data */
    struct lil_proc_output o;
};

struct lil_proc {
    uint32_t magic;
    const struct lil_env *env;
    pid_t pid;      /* 0 until started */
    bool own_group; /* the child leads a process group (pgid == pid) */
    bool end_group; /* SIGKILL to the group once the child has exited */
    int pidfd;      /* -1: look with waitid(WNOHANG) every tick */
    int tick_ms;
    int in_fd; /* write end of stdin; -1 once all is written or not a pipe */
    uint8_t *in_data;
    size_t in_len, in_off;
    struct stream s[2]; /* stdout, stderr */
    bool exited;        /* seen exiting; a zombie until reaped */
    bool reaped;
    struct lil_proc_status st;
    uint8_t scratch[CHUNK];
};

/* What spawn prepares for the child, released once it is started. */
struct setup {
    int child[3]; /* becomes the child's 0, 1, 2; -1: inherited */
    int devnull;  /* may appear several times in child[] */
    int cwd_fd;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    bool fa_ok, attr_ok;
};

static bool proc_ok(const struct lil_proc *p)
{
    return p && p->magic == LIL_PROC_MAGIC;
}

static void close_fd(const struct lil_env *env, int *fd)
{
    lil__os_close(env, *fd);
    *fd = -1;
}

/* ---- status ---------------------------------------------------------------- */

static void set_status(struct lil_proc *p, const siginfo_t *info)
{
    memset(&p->st, 0, sizeof(p->st));
    p->st.ended = true;
    lil__child_how(info, &p->st.code, &p->st.signal, &p->st.core_dumped);
}

static lil_status wait_error(struct lil_proc *p, struct lil_err *err)
{
    int e = errno;

    if (e != ECHILD)
        return lil__seterr(err, LIL_E_IO, e, "waitid child %d: %s", (int)p->pid,
                           lil__errstr(e));
    /* Gone without us: its pid may be reused, so it is never signalled
     * again.  It ended, how is unknown. */
    p->exited = p->reaped = true;
    memset(&p->st, 0, sizeof(p->st));
    p->st.ended = true;
    p->st.code = -1;
    return lil__seterr(err, LIL_E_CHILD, e,
                       "child %d was reaped by someone else (is SIGCHLD ignored?)",
                       (int)p->pid);
}

/* waitid on the child: with WNOWAIT only notes that it exited; otherwise
 * reaps it (blocking unless WNOHANG is in options). */
static lil_status look(struct lil_proc *p, struct lil_err *err, int options)
{
    siginfo_t info;

    if (lil__child_waitid(p->env, p->pid, options, &info) < 0)
        return wait_error(p, err);
    if (info.si_pid != p->pid)
        return LIL_OK; /* WNOHANG: still running */
    p->exited = true;
    if (!(options & WNOWAIT)) {
        p->reaped = true;
        set_status(p, &info);
        close_fd(p->env, &p->pidfd);
    }
    return LIL_OK;
}

static lil_status peek_exit(struct lil_proc *p, struct lil_err *err)
{
    return look(p, err, WNOHANG | WNOWAIT);
}

static lil_status reap(struct lil_proc *p, struct lil_err *err, bool block)
{
    return look(p, err, block ? 0 : WNOHANG);
}

/* ---- signals --------------------------------------------------------------- */

static lil_status send_kill(struct lil_proc *p, struct lil_err *err, pid_t to, int sig)
{
    /* ESRCH: nobody left in the group (the child moved out of it). */
    if (p->env->os->kill(to, sig) < 0 && errno != ESRCH)
        return lil__seterr(err, LIL_E_IO, errno, "kill %s %d with %s: %s",
                           to < 0 ? "process group" : "child", (int)(to < 0 ? -to : to),
                           sig == SIGKILL ? "SIGKILL" : "SIGTERM", lil__errstr(errno));
    return LIL_OK;
}

/* sig to the child's group (or to the child alone in the caller's group).
 * SIGKILL also goes to the child by pid, so that the reap that follows
 * cannot hang even if the child moved itself to another group. */
static lil_status signal_child(struct lil_proc *p, struct lil_err *err, int sig)
{
    lil_status rc = LIL_OK;

    if (p->pid <= 0 || p->reaped) /* never kill(0) or (-1), nor a reused pid */
        return LIL_OK;
    if (p->own_group)
        rc = send_kill(p, err, -p->pid, sig);
    if (!p->own_group || sig == SIGKILL) {
        lil_status r = send_kill(p, rc == LIL_OK ? err : NULL, p->pid, sig);
        rc = rc != LIL_OK ? rc : r;
    }
    return rc;
}

/* ---- I/O ------------------------------------------------------------------- */

static lil_status keep(struct lil_proc *p, struct lil_err *err, struct stream *s,
                       size_t n)
{
    size_t take = s->cap - s->o.len;

    s->o.total += n;
    if (take > n)
        take = n;
    if (take < n)
        s->o.truncated = true;
    if (take == 0)
        return LIL_OK;
    if (s->o.len + take + 1 > s->alloc) {
        size_t need = s->o.len + take + 1;
        size_t want = s->alloc && s->alloc <= SIZE_MAX / 2 ? s->alloc * 2 : 4096;
        char *d;
        if (want < need)
            want = need;
        if (s->cap < SIZE_MAX && want > s->cap + 1)
            want = s->cap + 1; /* never more than the cap needs */
        d = lil__realloc(p->env, s->o.data, want);
        if (!d) {
            s->o.truncated = true;
            return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory keeping output");
        }
        s->o.data = d;
        s->alloc = want;
    }
    memcpy(s->o.data + s->o.len, p->scratch, take);
    s->o.len += take;
    s->o.data[s->o.len] = '\0';
    return LIL_OK;
}

static lil_status read_stream(struct lil_proc *p, struct lil_err *err, struct stream *s)
{
    ssize_t r = p->env->os->read(s->fd, p->scratch, sizeof(p->scratch));

    if (r > 0)
        return keep(p, err, s, (size_t)r);
    if (r == 0) {
        close_fd(p->env, &s->fd);
        return LIL_OK;
    }
    if (errno == EINTR || errno == EAGAIN)
        return LIL_OK;
    return lil__seterr(err, LIL_E_IO, errno, "read output of child %d: %s", (int)p->pid,
                       lil__errstr(errno));
}

/* write() with SIGPIPE blocked in this thread; the SIGPIPE that a closed
 * pipe raised is consumed before the mask is restored (libpq's
 * pq_block_sigpipe).  A host whose SIGPIPE has its default action would
 * otherwise die when a child stops reading its stdin. */
static ssize_t write_nosigpipe(const struct lil_env *env, int fd, const void *buf,
                               size_t n)
{
    static const struct timespec zero = {0, 0};
    sigset_t pipe_set, old, pending;
    bool was_pending;
    ssize_t r;
    int e;

    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigemptyset(&pending);
    sigpending(&pending);
    was_pending = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    r = env->os->write(fd, buf, n);
    e = errno;
    if (r < 0 && e == EPIPE && !was_pending)
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
            ;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return r;
}

static lil_status feed_stdin(struct lil_proc *p, struct lil_err *err)
{
    size_t n = p->in_len - p->in_off;
    ssize_t r;

    if (n > CHUNK)
        n = CHUNK;
    r = n ? write_nosigpipe(p->env, p->in_fd, p->in_data + p->in_off, n) : 0;
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return LIL_OK;
    if (r < 0 && errno != EPIPE)
        return lil__seterr(err, LIL_E_IO, errno, "write stdin of child %d: %s",
                           (int)p->pid, lil__errstr(errno));
    if (r > 0)
        p->in_off += (size_t)r;
    /* All written, or the child closed its stdin (EPIPE: its choice). */
    if (r < 0 || p->in_off == p->in_len)
        close_fd(p->env, &p->in_fd);
    return LIL_OK;
}

/* ---- the loop -------------------------------------------------------------- */

static int64_t deadline_after(int timeout_ms)
{
    return timeout_ms < 0 ? -1 : lil__mono_ns() + (int64_t)timeout_ms * 1000000;
}

/* poll's timeout: what is left until the deadline, and without a pidfd at
 * most the current tick, which doubles up to TICK_MAX_MS. */
static int poll_timeout(struct lil_proc *p, int64_t deadline)
{
    int ms = -1;

    if (deadline >= 0) {
        int64_t left = deadline - lil__mono_ns();
        left = left <= 0 ? 0 : (left + 999999) / 1000000;
        ms = left > INT_MAX ? INT_MAX : (int)left;
    }
    if (p->pidfd < 0) {
        if (ms < 0 || ms > p->tick_ms)
            ms = p->tick_ms;
        if (p->tick_ms < TICK_MAX_MS)
            p->tick_ms *= 2;
    }
    return ms;
}

static void watch(struct pollfd *fds, int *what, nfds_t *n, int fd, short events,
                  int tag)
{
    fds[*n] = (struct pollfd){.fd = fd, .events = events, .revents = 0};
    what[(*n)++] = tag;
}

/* One poll over the pidfd and the pipes, the I/O it allows, and a look at
 * whether the child has exited (every time when there is no pidfd). */
static lil_status pump(struct lil_proc *p, struct lil_err *err, int timeout_ms)
{
    struct pollfd fds[4];
    int what[4]; /* -1: the pidfd, 0: stdin, 1 and 2: stdout, stderr */
    nfds_t n = 0;
    bool exit_ready = p->pidfd < 0;
    lil_status rc = LIL_OK;

    if (p->pidfd >= 0)
        watch(fds, what, &n, p->pidfd, POLLIN, -1);
    if (p->in_fd >= 0)
        watch(fds, what, &n, p->in_fd, POLLOUT, 0);
    for (int i = 0; i < 2; i++)
        if (p->s[i].fd >= 0)
            watch(fds, what, &n, p->s[i].fd, POLLIN, i + 1);
    if (p->env->os->poll(fds, n, timeout_ms) < 0)
        return errno == EINTR
                   ? LIL_OK
                   : lil__seterr(err, LIL_E_IO, errno, "poll: %s", lil__errstr(errno));
    for (nfds_t i = 0; i < n && rc == LIL_OK; i++) {
        if (!fds[i].revents)
            continue;
        if (what[i] < 0)
            exit_ready = true;
        else if (what[i] == 0)
            rc = feed_stdin(p, err);
        else
            rc = read_stream(p, err, &p->s[what[i] - 1]);
    }
    return rc == LIL_OK && exit_ready ? peek_exit(p, err) : rc;
}

/* Pump until the child has exited (not reaped) or the deadline (-1: none)
 * has passed. */
static lil_status wait_exit(struct lil_proc *p, struct lil_err *err, int64_t deadline)
{
    while (!p->exited) {
        bool last = deadline >= 0 && lil__mono_ns() >= deadline;
        lil_status rc = pump(p, err, last ? 0 : poll_timeout(p, deadline));
        if (rc != LIL_OK || last)
            return rc;
    }
    return LIL_OK;
}

/* After the exit: read what is already in the pipes (the child's last
 * output) without waiting for descendants that may still hold them open,
 * then close them.  The rounds are bounded because such a descendant may
 * keep writing. */
static lil_status drain(struct lil_proc *p, struct lil_err *err)
{
    lil_status rc = LIL_OK;

    close_fd(p->env, &p->in_fd);
    for (int round = 0; round < DRAIN_ROUNDS && rc == LIL_OK; round++) {
        struct pollfd fds[2];
        int what[2];
        nfds_t n = 0;
        int r;
        for (int i = 0; i < 2; i++)
            if (p->s[i].fd >= 0)
                watch(fds, what, &n, p->s[i].fd, POLLIN, i);
        r = n ? p->env->os->poll(fds, n, 0) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            rc = lil__seterr(err, LIL_E_IO, errno, "poll: %s", lil__errstr(errno));
        if (r <= 0)
            break;
        for (nfds_t i = 0; i < n && rc == LIL_OK; i++)
            if (fds[i].revents)
                rc = read_stream(p, err, &p->s[what[i]]);
    }
    close_fd(p->env, &p->s[0].fd);
    close_fd(p->env, &p->s[1].fd);
    return rc;
}

/* The child has exited or been sent SIGKILL: with end_group, what is left
 * of its group is killed while the child, a zombie, still holds the group's
 * id; then reap it, and keep the rest of its output. */
static lil_status finish(struct lil_proc *p, struct lil_err *err)
{
    lil_status rc;

    if (p->end_group && p->exited && !p->reaped)
        (void)send_kill(p, NULL, -p->pid, SIGKILL); /* ESRCH: nobody left */
    rc = reap(p, err, true);

    if (rc != LIL_OK)
        return rc;
    return drain(p, err);
}

/* ---- spawn ----------------------------------------------------------------- */

static lil_status check_opts(struct lil_err *err, const struct lil_proc_opts *o)
{
    if (!o || !o->argv || !o->argv[0])
        return lil__seterr(err, LIL_E_INVAL, 0, "spawn: no program (argv is empty)");
    if ((unsigned)o->in > LIL_PROC_INHERIT || (unsigned)o->out > LIL_PROC_INHERIT ||
        (unsigned)o->err > LIL_PROC_INHERIT || (unsigned)o->group > LIL_PROC_SAME_GROUP)
        return lil__seterr(err, LIL_E_INVAL, 0, "spawn %s: bad option", o->argv[0]);
    if (o->in == LIL_PROC_PIPE && o->stdin_len && !o->stdin_data)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "spawn %s: stdin_len without stdin_data", o->argv[0]);
    return LIL_OK;
}

static lil_status proc_new(const struct lil_env *env, struct lil_err *err,
                           const struct lil_proc_opts *o, struct lil_proc **out)
{
    struct lil_proc *p = lil__calloc(env, 1, sizeof(*p));

    *out = NULL;
    if (!p) {
        lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
        return LIL_E_NOMEM; /* said outright: p is set whenever this is OK */
    }
    p->magic = LIL_PROC_MAGIC;
    p->env = env;
    p->pidfd = p->in_fd = p->s[0].fd = p->s[1].fd = -1;
    p->tick_ms = TICK_MIN_MS;
    p->s[0].cap = o->out_cap ? o->out_cap : LIL_PROC_CAP_DEFAULT;
    p->s[1].cap = o->err_cap ? o->err_cap : LIL_PROC_CAP_DEFAULT;
    *out = p;
    if (o->in != LIL_PROC_PIPE || !o->stdin_len)
        return LIL_OK;
    p->in_data = lil__malloc(env, o->stdin_len);
    if (!p->in_data)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory copying stdin");
    memcpy(p->in_data, o->stdin_data, o->stdin_len);
    p->in_len = o->stdin_len;
    return LIL_OK;
}

/* Move fd above 2 (F_DUPFD_CLOEXEC), so that no dup2 onto 0, 1, 2 in the
 * child can overwrite it before it is used. */
static lil_status raise_fd(const struct lil_env *env, struct lil_err *err, int *fd)
{
    int n;

    if (*fd > 2)
        return LIL_OK;
    n = env->os->fcntl_int(*fd, F_DUPFD_CLOEXEC, 3);
    if (n < 0)
        return lil__seterr(err, LIL_E_IO, errno, "fcntl F_DUPFD_CLOEXEC: %s",
                           lil__errstr(errno));
    close_fd(env, fd);
    *fd = n;
    return LIL_OK;
}

static lil_status child_devnull(const struct lil_env *env, struct lil_err *err,
                                struct setup *su, int i)
{
    lil_status rc = LIL_OK;

    if (su->devnull < 0) {
        rc = lil__os_open(env, err, "/dev/null", O_RDWR | O_CLOEXEC, 0, &su->devnull);
        if (rc == LIL_OK)
            rc = raise_fd(env, err, &su->devnull);
    }
    if (rc == LIL_OK)
        su->child[i] = su->devnull;
    return rc;
}

/* A pipe for the child's descriptor i: the child gets the read end for
 * stdin, the write end for stdout and stderr; *parent the other. */
static lil_status child_pipe(const struct lil_env *env, struct lil_err *err,
                             struct setup *su, int i, int *parent)
{
    int fds[2];

    if (env->os->pipe2(fds, O_CLOEXEC) < 0)
        return lil__seterr(err, LIL_E_IO, errno, "pipe2: %s", lil__errstr(errno));
    su->child[i] = fds[i == 0 ? 0 : 1];
    *parent = fds[i == 0 ? 1 : 0];
    return raise_fd(env, err, &su->child[i]);
}

/* The parent's end of stdin never blocks: poll says when it can write. */
static lil_status set_nonblock(const struct lil_env *env, struct lil_err *err, int fd)
{
    int fl = env->os->fcntl_int(fd, F_GETFL, 0);

    if (fl < 0 || env->os->fcntl_int(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return lil__seterr(err, LIL_E_IO, errno, "fcntl O_NONBLOCK: %s",
                           lil__errstr(errno));
    return LIL_OK;
}

static lil_status setup_stdio(struct lil_proc *p, struct lil_err *err, struct setup *su,
                              const struct lil_proc_opts *o)
{
    const enum lil_proc_io mode[3] = {o->in, o->out, o->err};

    lil_status rc = LIL_OK;

    for (int i = 0; i < 3 && rc == LIL_OK; i++) {
        if (mode[i] == LIL_PROC_NULL)
            rc = child_devnull(p->env, err, su, i);
        else if (mode[i] == LIL_PROC_PIPE && i == 0)
            rc = child_pipe(p->env, err, su, 0, &p->in_fd);
        else if (mode[i] == LIL_PROC_PIPE)
            rc = child_pipe(p->env, err, su, i, &p->s[i - 1].fd);
    }
    if (rc == LIL_OK && p->in_fd >= 0)
        rc = set_nonblock(p->env, err, p->in_fd);
    return rc;
}

/* Opened here so that a bad directory is reported as such; O_PATH needs
 * only the search permission that chdir needs. */
static lil_status setup_cwd(const struct lil_env *env, struct lil_err *err,
                            struct setup *su, const char *cwd)
{
    int fd;

    if (!cwd)
        return LIL_OK;
    do
        fd = env->os->open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return lil__seterr(err, LIL_E_CHILD, errno, "working directory %s: %s", cwd,
                           lil__errstr(errno));
    su->cwd_fd = fd;
    return LIL_OK;
}

static lil_status spawn_setup_error(struct lil_err *err, int e, const char *what)
{
    if (e == ENOMEM)
        return lil__seterr(err, LIL_E_NOMEM, e, "%s: out of memory", what);
    return lil__seterr(err, LIL_E_IO, e, "%s: %s", what, lil__errstr(e));
}

/* In the child, in order: chdir, the three dup2s, close everything else
 * (descriptors the host opened without O_CLOEXEC included). */
static lil_status build_actions(struct lil_err *err, struct setup *su)
{
    int e = posix_spawn_file_actions_init(&su->fa);

    if (e)
        return spawn_setup_error(err, e, "posix_spawn_file_actions_init");
    su->fa_ok = true;
    if (su->cwd_fd >= 0)
        e = posix_spawn_file_actions_addfchdir_np(&su->fa, su->cwd_fd);
    for (int i = 0; i < 3 && !e; i++)
        if (su->child[i] >= 0)
            e = posix_spawn_file_actions_adddup2(&su->fa, su->child[i], i);
    if (!e)
        e = posix_spawn_file_actions_addclosefrom_np(&su->fa, 3);
    return e ? spawn_setup_error(err, e, "posix_spawn_file_actions") : LIL_OK;
}

/* An empty signal mask, SIGPIPE and SIGXFSZ at their default action (a
 * host that ignores them must not pass that on), and the process group. */
static lil_status build_attr(struct lil_err *err, struct setup *su,
                             enum lil_proc_group group)
{
    sigset_t mask, dfl;
    int flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    int e = posix_spawnattr_init(&su->attr);

    if (e)
        return spawn_setup_error(err, e, "posix_spawnattr_init");
    su->attr_ok = true;
    sigemptyset(&mask);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGPIPE);
    sigaddset(&dfl, SIGXFSZ);
    if (group == LIL_PROC_NEW_GROUP)
        flags |= POSIX_SPAWN_SETPGROUP; /* pgroup 0: the child's own pid */
    else if (group == LIL_PROC_NEW_SESSION)
        flags |= POSIX_SPAWN_SETSID;
    e = posix_spawnattr_setsigmask(&su->attr, &mask);
    if (!e)
        e = posix_spawnattr_setsigdefault(&su->attr, &dfl);
    if (!e)
        e = posix_spawnattr_setpgroup(&su->attr, 0);
    if (!e)
        e = posix_spawnattr_setflags(&su->attr, (short)flags);
    return e ? spawn_setup_error(err, e, "posix_spawnattr") : LIL_OK;
}

/* posix_spawn's prototype predates const; it changes neither array.  The
 * cast goes through uintptr_t to say that on purpose. */
static char *const *strv(const char *const *v)
{
    return (char *const *)(uintptr_t)v; /* NOLINT(performance-no-int-to-ptr) */
}

static lil_status start(struct lil_proc *p, struct lil_err *err, struct setup *su,
                        const struct lil_proc_opts *o)
{
    pid_t pid = 0;
    int e = p->env->os->spawn(&pid, o->argv[0], &su->fa, &su->attr, strv(o->argv),
                              o->envp ? strv(o->envp) : environ);

    if (e)
        return lil__seterr(err, LIL_E_CHILD, e, "exec %s: %s", o->argv[0],
                           lil__errstr(e));
    p->pid = pid;
    p->own_group = o->group != LIL_PROC_SAME_GROUP;
    p->end_group = o->end_group && p->own_group;
    /* Any failure leaves the waitid polling: the pidfd is only quicker. */
    p->pidfd = p->env->os->pidfd_open(pid, 0);
    if (p->pidfd < 0)
        p->pidfd = -1;
    if (p->in_fd >= 0 && p->in_len == 0)
        close_fd(p->env, &p->in_fd); /* empty stdin: EOF at once */
    return LIL_OK;
}

static void setup_release(const struct lil_env *env, struct setup *su)
{
    for (int i = 0; i < 3; i++)
        if (su->child[i] != su->devnull)
            lil__os_close(env, su->child[i]);
    lil__os_close(env, su->devnull);
    lil__os_close(env, su->cwd_fd);
    if (su->fa_ok)
        posix_spawn_file_actions_destroy(&su->fa);
    if (su->attr_ok)
        posix_spawnattr_destroy(&su->attr);
}

lil_status lil__proc_spawn(const struct lil_env *env, struct lil_err *err,
                           const struct lil_proc_opts *opts, struct lil_proc **out)
{
    struct setup su = {.child = {-1, -1, -1}, .devnull = -1, .cwd_fd = -1};
    struct lil_proc *p = NULL;
    lil_status rc;

    if (!out)
        return lil__seterr(err, LIL_E_INVAL, 0, "spawn: out is NULL");
    *out = NULL;
    rc = check_opts(err, opts);
    if (rc == LIL_OK)
        rc = proc_new(env, err, opts, &p);
    if (rc == LIL_OK)
        rc = setup_stdio(p, err, &su, opts);
    if (rc == LIL_OK)
        rc = setup_cwd(env, err, &su, opts->cwd);
    if (rc == LIL_OK)
        rc = build_actions(err, &su);
    if (rc == LIL_OK)
        rc = build_attr(err, &su, opts->group);
    if (rc == LIL_OK)
        rc = start(p, err, &su, opts);
    setup_release(env, &su);
    if (rc != LIL_OK) {
        lil__proc_free(p);
        return rc;
    }
    *out = p;
    return LIL_OK;
}

/* ---- the rest of the API ----------------------------------------------------- */

pid_t lil__proc_pid(const struct lil_proc *p)
{
    return proc_ok(p) ? p->pid : -1;
}

lil_status lil__proc_wait(struct lil_proc *p, struct lil_err *err, int timeout_ms,
                          struct lil_proc_status *st)
{
    lil_status rc;

    if (!proc_ok(p) || !st)
        return lil__seterr(err, LIL_E_INVAL, 0, "wait: invalid child handle");
    memset(st, 0, sizeof(*st));
    st->code = -1;
    if (!p->reaped) {
        rc = wait_exit(p, err, deadline_after(timeout_ms));
        if (rc != LIL_OK)
            return rc;
        if (!p->exited) {
            st->timed_out = true;
            return LIL_OK;
        }
        rc = finish(p, err);
        if (rc != LIL_OK)
            return rc;
    }
    *st = p->st;
    return LIL_OK;
}

/* SIGTERM, the grace period, SIGKILL, reap; the first error is kept (later
 * calls get a NULL err, which lil__seterr accepts). */
static lil_status terminate(struct lil_proc *p, struct lil_err *err, int grace_ms)
{
    lil_status rc = LIL_OK, r;

    if (!p->exited) {
        rc = signal_child(p, err, SIGTERM);
        if (rc == LIL_OK)
            rc = wait_exit(p, err, deadline_after(grace_ms));
    }
    /* Also for a child that exited: its group may outlive it. */
    r = signal_child(p, rc == LIL_OK ? err : NULL, SIGKILL);
    if (r != LIL_OK && !p->exited)
        return rc != LIL_OK ? rc : r; /* still running: a reap would hang */
    rc = rc != LIL_OK ? rc : r;
    r = finish(p, rc == LIL_OK ? err : NULL);
    return rc != LIL_OK ? rc : r;
}

lil_status lil__proc_kill(struct lil_proc *p, struct lil_err *err, int grace_ms,
                          struct lil_proc_status *st)
{
    lil_status rc = LIL_OK;

    if (!proc_ok(p) || !st)
        return lil__seterr(err, LIL_E_INVAL, 0, "kill: invalid child handle");
    if (!p->reaped)
        rc = terminate(p, err, grace_ms);
    *st = p->st;
    if (!p->reaped) {
        memset(st, 0, sizeof(*st));
        st->code = -1;
    }
    return rc;
}

const struct lil_proc_output *lil__proc_output(const struct lil_proc *p, int fd)
{
    if (!proc_ok(p) || (fd != 1 && fd != 2))
        return NULL;
    return &p->s[fd - 1].o;
}

void lil__proc_take_output(struct lil_proc *p, int fd, struct lil_proc_output *out)
{
    memset(out, 0, sizeof(*out));
    if (!proc_ok(p) || (fd != 1 && fd != 2))
        return;
    *out = p->s[fd - 1].o;
    memset(&p->s[fd - 1].o, 0, sizeof(p->s[fd - 1].o));
    p->s[fd - 1].alloc = 0;
}

void lil__proc_output_free(const struct lil_env *env, struct lil_proc_output *o)
{
    if (!o)
        return;
    lil__free(env, o->data);
    memset(o, 0, sizeof(*o));
}

void lil__proc_free(struct lil_proc *p)
{
    const struct lil_env *env;

    if (!proc_ok(p))
        return;
    env = p->env;
    if (p->pid > 0 && !p->reaped) {
        /* Block in the reap only when the child is sure to end. */
        bool ends = signal_child(p, NULL, SIGKILL) == LIL_OK || p->exited;
        reap(p, NULL, ends);
    }
    close_fd(env, &p->pidfd);
    close_fd(env, &p->in_fd);
    for (int i = 0; i < 2; i++) {
        close_fd(env, &p->s[i].fd);
        lil__free(env, p->s[i].o.data);
    }
    lil__free(env, p->in_data);
    p->magic = 0;
    lil__free(env, p);
}
