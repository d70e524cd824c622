/*
 * futex.c -- the two futex operations the group commit needs (futex.h).
 * Private futexes: the words live in one process.
 */
#include "os/futex.h"

#include <errno.h>
#include <linux/futex.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

bool lil__futex_wait(uint32_t *word, uint32_t val, const struct timespec *until)
{
    long r = syscall(SYS_futex, word, FUTEX_WAIT_BITSET_PRIVATE, val, until, NULL,
                     FUTEX_BITSET_MATCH_ANY);

    return r == 0 || errno != ETIMEDOUT;
}

void lil__futex_wake(uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
