/*
 * child.c -- wait for a child, decode its end, signal its group (child.h).
 */
#include "os/child.h"

#include <errno.h>
#include <string.h>

#include "os/os.h"

int lil__child_waitid(const struct lil_env *env, pid_t pid, int options,
                      siginfo_t *info)
{
    int r;

    memset(info, 0, sizeof(*info));
    do
        r = env->os->waitid(P_PID, (id_t)pid, info, WEXITED | options);
    while (r < 0 && errno == EINTR);
    return r;
}

void lil__child_how(const siginfo_t *info, int *code, int *signal, bool *core)
{
    *code = -1;
    *signal = 0;
    *core = false;
    if (info->si_code == CLD_EXITED) {
        *code = info->si_status;
    } else {
        *signal = info->si_status;
        *core = info->si_code == CLD_DUMPED;
    }
}

int lil__child_signal_group(const struct lil_env *env, pid_t pid, int sig)
{
    if (pid <= 0) { /* never kill(0) or kill(-1) */
        errno = ESRCH;
        return -1;
    }
    if (env->os->kill(-pid, sig) == 0)
        return 0;
    if (errno != ESRCH)
        return -1;
    return env->os->kill(pid, sig);
}
