/* clock.h -- wall and monotonic time in nanoseconds. */
#ifndef LIL_BASE_CLOCK_H
#define LIL_BASE_CLOCK_H

#include <stdint.h>

int64_t lil__wall_ns(void);
int64_t lil__mono_ns(void);

#endif
