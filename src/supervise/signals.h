/*
 * signals.h -- the supervisor's signals: handlers that count each signal
 * and wake a poll through a pipe (the self-pipe trick), and the caller's
 * dispositions put back in each child.
 *
 * Handled: SIGINT, SIGTERM, SIGHUP, SIGQUIT (the user's stop), SIGUSR1,
 * SIGUSR2, SIGWINCH, SIGCONT, SIGTSTP (forwarded) and SIGCHLD (a child
 * ended).  The handler adds one to the signal's counter and writes a byte
 * to the pipe; it is async-signal-safe and keeps errno.  Whichever thread
 * of the process takes the signal, the supervisor's poll wakes up.
 *
 * Process-wide state: a signal handler can reach nothing else, so the
 * counters and the pipe's write end are globals (mutable, which the
 * library otherwise avoids); there is one supervisor per process, since
 * lil_supervise never returns in it.
 *
 * Lifetimes: install in the supervisor before the first fork; in each
 * child, lil__sv_signals_child_fork (the caller's dispositions back) or
 * lil__sv_signals_child_exec (the same, and SIGPIPE and SIGXFSZ at their
 * default: an exec'd program must not inherit "ignored" for them) runs
 * first (fork.h's in_child), and closes the pipe.
 */
#ifndef LIL_SUPERVISE_SIGNALS_H
#define LIL_SUPERVISE_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

#include "base/env.h"

#define LIL_SV_NSIGNALS 10

struct lil_sv_signals {
    int rd, wr; /* the pipe (both ends O_NONBLOCK, O_CLOEXEC) */
    struct sigaction saved[LIL_SV_NSIGNALS]; /* the caller's, per handled signal */
    sigset_t saved_mask;                     /* the calling thread's mask */
    bool installed;
};

/* Open the pipe, install the handlers, unblock the handled signals in the
 * calling thread.  LIL_E_IO (pipe2, sigaction) with nothing left installed. */
lil_status lil__sv_signals_install(const struct lil_env *env, struct lil_err *err,
                                   struct lil_sv_signals *s);

/* Put the caller's dispositions and mask back and close the pipe. */
void lil__sv_signals_uninstall(const struct lil_env *env, struct lil_sv_signals *s);

/* fork.h's in_child (ud: the struct lil_sv_signals). */
void lil__sv_signals_child_fork(void *ud);
void lil__sv_signals_child_exec(void *ud);

/* Wait up to timeout_ms (-1: no limit) for a signal to arrive, then empty
 * the pipe.  LIL_E_IO when poll fails. */
lil_status lil__sv_signals_wait(const struct lil_env *env, struct lil_err *err,
                                struct lil_sv_signals *s, int timeout_ms);

/* How many times sig arrived since it was last taken (and zero it). */
unsigned lil__sv_signals_take(int sig);

#endif
