/*
 * child.h -- the pieces every parent of a child process needs, by pid:
 * wait for it (seen only, or reaped), read how it ended, signal its group.
 *
 * proc.h (a program run for a loop) and the supervisor's loop
 * (src/supervise/, whose children fork.h starts) are built on these, so a
 * death is observed, decoded and reaped the same way everywhere:
 *
 * - A wait retries EINTR and nothing else.  Seen only (WNOWAIT), an exited
 *   child stays a zombie: its pid, which is also its process group's id,
 *   cannot be reused while the caller may still signal that group.  The
 *   reap comes last; after it nothing is sent to that pid again.
 * - A status says the exit code, or the signal that ended the child (code
 *   -1) and whether it dumped core.
 * - A signal to a child that leads a group goes to the group (whatever it
 *   started that stayed there); to the child alone when the group is gone
 *   (the child moved itself out of it).
 *
 * System calls through the env's table (waitid, kill).  No allocation, no
 * state: any thread may call them for a child it owns.
 */
#ifndef LIL_OS_CHILD_H
#define LIL_OS_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "base/env.h"

/* waitid(P_PID, pid, info, WEXITED | options), EINTR retried; info zeroed
 * first (WNOHANG: info->si_pid stays 0 while the child runs).  0, or -1
 * with errno (ECHILD: not a child of this process, or already reaped). */
int lil__child_waitid(const struct lil_env *env, pid_t pid, int options,
                      siginfo_t *info);

/* How a child ended, from a waitid's info: *code the exit code, or -1 with
 * *signal the signal that ended it (and *core when it dumped core). */
void lil__child_how(const siginfo_t *info, int *code, int *signal, bool *core);

/* sig to pid's process group; to pid alone when the group is gone (ESRCH).
 * 0, or -1 with errno (ESRCH: nobody left). */
int lil__child_signal_group(const struct lil_env *env, pid_t pid, int sig);

#endif
