/* clock.c -- wall and monotonic time in nanoseconds. */
#include "base/clock.h"

#include <time.h>

static int64_t ns_of(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t lil__wall_ns(void)
{
    return ns_of(CLOCK_REALTIME);
}

int64_t lil__mono_ns(void)
{
    return ns_of(CLOCK_MONOTONIC);
}
