/*
 * signals.c -- the supervisor's signal handlers and self-pipe (signals.h).
 */
#include "supervise/signals.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "os/os.h"

static const int handled[LIL_SV_NSIGNALS] = {
    SIGINT,  SIGTERM,  SIGHUP,  SIGQUIT, SIGUSR1,
    SIGUSR2, SIGWINCH, SIGCONT, SIGTSTP, SIGCHLD,
};

#define NCOUNT 65 /* counters by signal number (the handled ones are below 32) */

/* Mutable globals (signals.h): a handler has no other way in. */
static unsigned counts[NCOUNT];
static int wake_fd = -1;

static void on_signal(int sig)
{
    int e = errno;
    char b = (char)sig;

    if (sig > 0 && sig < NCOUNT)
        __atomic_fetch_add(&counts[sig], 1u, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&wake_fd, __ATOMIC_SEQ_CST) >= 0 &&
        write(__atomic_load_n(&wake_fd, __ATOMIC_SEQ_CST), &b, 1) < 0) {
        /* full: a wake-up is pending anyway */
    }
    errno = e;
}

static lil_status open_pipe(const struct lil_env *env, struct lil_err *err,
                            struct lil_sv_signals *s)
{
    int fds[2];

    if (env->os->pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
        return lil__seterr(err, LIL_E_IO, errno, "pipe2: %s", lil__errstr(errno));
    s->rd = fds[0];
    s->wr = fds[1];
    return LIL_OK;
}

/* The caller's dispositions back for the first n handled signals. */
static void restore(const struct lil_sv_signals *s, int n)
{
    for (int i = 0; i < n; i++)
        (void)sigaction(handled[i], &s->saved[i], NULL);
}

lil_status lil__sv_signals_install(const struct lil_env *env, struct lil_err *err,
                                   struct lil_sv_signals *s)
{
    struct sigaction sa;
    sigset_t set;
    lil_status rc;

    memset(s, 0, sizeof(*s));
    s->rd = s->wr = -1;
    rc = open_pipe(env, err, s);
    if (rc != LIL_OK)
        return rc;
    memset(counts, 0, sizeof(counts));
    __atomic_store_n(&wake_fd, s->wr, __ATOMIC_SEQ_CST);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigfillset(&sa.sa_mask);
    sigemptyset(&set);
    for (int i = 0; i < LIL_SV_NSIGNALS; i++) {
        sa.sa_flags = SA_RESTART | (handled[i] == SIGCHLD ? SA_NOCLDSTOP : 0);
        if (sigaction(handled[i], &sa, &s->saved[i]) < 0) {
            int e = errno;
            restore(s, i);
            lil__sv_signals_uninstall(env, s);
            return lil__seterr(err, LIL_E_IO, e, "sigaction: %s", lil__errstr(e));
        }
        sigaddset(&set, handled[i]);
    }
    pthread_sigmask(SIG_UNBLOCK, &set, &s->saved_mask);
    s->installed = true;
    return LIL_OK;
}

void lil__sv_signals_uninstall(const struct lil_env *env, struct lil_sv_signals *s)
{
    if (s->installed) {
        restore(s, LIL_SV_NSIGNALS);
        pthread_sigmask(SIG_SETMASK, &s->saved_mask, NULL);
        s->installed = false;
    }
    __atomic_store_n(&wake_fd, -1, __ATOMIC_SEQ_CST);
    lil__os_close(env, s->rd);
    lil__os_close(env, s->wr);
    s->rd = s->wr = -1;
}

/* In a child: async-signal-safe calls only (fork.h). */
void lil__sv_signals_child_fork(void *ud)
{
    struct lil_sv_signals *s = ud;

    restore(s, LIL_SV_NSIGNALS);
    __atomic_store_n(&wake_fd, -1, __ATOMIC_SEQ_CST);
    close(s->rd);
    close(s->wr);
    s->rd = s->wr = -1;
    s->installed = false;
}

void lil__sv_signals_child_exec(void *ud)
{
    struct sigaction dfl;

    lil__sv_signals_child_fork(ud);
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    (void)sigaction(SIGPIPE, &dfl, NULL);
    (void)sigaction(SIGXFSZ, &dfl, NULL);
}

lil_status lil__sv_signals_wait(const struct lil_env *env, struct lil_err *err,
                                struct lil_sv_signals *s, int timeout_ms)
{
    struct pollfd p = {.fd = s->rd, .events = POLLIN, .revents = 0};
    char buf[64];

    if (env->os->poll(&p, 1, timeout_ms) < 0 && errno != EINTR)
        return lil__seterr(err, LIL_E_IO, errno, "poll: %s", lil__errstr(errno));
    while (env->os->read(s->rd, buf, sizeof(buf)) > 0) {
    }
    return LIL_OK;
}

unsigned lil__sv_signals_take(int sig)
{
    if (sig <= 0 || sig >= NCOUNT)
        return 0;
    return __atomic_exchange_n(&counts[sig], 0u, __ATOMIC_SEQ_CST);
}
