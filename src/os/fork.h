/*
 * fork.h -- a child tied to this process: forked, in a process group of its
 * own, sent a signal when the forking thread dies, and either returned to
 * the caller (a copy of this process) or exec'd (another program).
 *
 * This is how the supervisor (src/supervise/) starts its children.  Other
 * programs lil runs go through proc.h (posix_spawnp), which cannot set what
 * a supervisor needs in the child before the exec: the parent-death signal
 * (prctl PR_SET_PDEATHSIG), so that no child outlives a supervisor killed
 * with SIGKILL.
 *
 * What lil__fork promises:
 *
 * - Signals are blocked in the calling thread around the fork, so that no
 *   handler of the parent runs in the child before in_child has put the
 *   child's own dispositions back; the child then gets the mask the options
 *   give (NULL: empty).  The parent's mask is restored before returning.
 *
 * - With new_group, the child leads a new process group; the parent sets
 *   it too (setpgid on both sides: whichever runs first wins the race), so
 *   the group exists when lil__fork returns.
 *
 * - With death_signal, the child gets that signal when the thread that
 *   called lil__fork ends (the process's death included).  A parent that
 *   died before the child could ask for it is noticed (getppid) and the
 *   signal is raised at once.
 *
 * - Without argv the call returns in both processes: *pid is 0 in the
 *   child.  With argv the child never returns: every descriptor above 2 is
 *   closed on exec (close_range, or one by one where it is missing), then
 *   execvpe(argv[0], argv, envp) (a PATH search when argv[0] has no '/';
 *   envp NULL: this process's environment).  An exec that fails is reported
 *   to the parent through a close-on-exec pipe: lil__fork reaps the child
 *   and fails with LIL_E_CHILD, the errno in err->sys_errno and a message
 *   naming the program ("exec nosuch: No such file or directory").  On
 *   success the exec has happened when lil__fork returns.
 *
 * In the child only async-signal-safe calls are made between the fork and
 * the exec (or the return), in_child included: it must be too.
 *
 * System calls through the env's table: fork, pipe2, read, close, waitid.
 * Errors: LIL_E_INVAL (no options), LIL_E_IO (pipe2, fork; errno kept),
 * LIL_E_CHILD (the exec failed).
 */
#ifndef LIL_OS_FORK_H
#define LIL_OS_FORK_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "base/env.h"

struct lil_fork_opts {
    const char *const *argv;    /* NULL: return in the child */
    const char *const *envp;    /* with argv; NULL: this process's environment */
    bool new_group;             /* the child leads a process group of its own */
    int death_signal;           /* 0: none */
    const sigset_t *child_mask; /* the child's signal mask; NULL: empty */
    void (*in_child)(void *ud); /* first thing in the child (async-signal-safe) */
    void *ud;
};

/* Fork (and exec) as above.  *pid: the child's pid in the parent, 0 in a
 * returning child.  In the parent, on an error, no child is left. */
lil_status lil__fork(const struct lil_env *env, struct lil_err *err,
                     const struct lil_fork_opts *o, pid_t *pid);

#endif
