/*
 * duration.h -- LoopSpec durations: DIGITS ("." DIGITS)? UNIT, UNIT one of
 * ms s m h d, on the trimmed text (docs/loopspec.md, "Durations").
 */
#ifndef LIL_SPEC_DURATION_H
#define LIL_SPEC_DURATION_H

#include <stddef.h>

#define LIL_DURATION_MAX_MS 3153600000000.0 /* 100 * 365 days */

enum lil_duration_rc {
    LIL_DURATION_OK = 0,
    LIL_DURATION_SYNTAX = -1, /* not DIGITS[.DIGITS]UNIT */
    LIL_DURATION_RANGE = -2   /* not finite, or above LIL_DURATION_MAX_MS */
};

/* Parse s (len bytes) into milliseconds. */
enum lil_duration_rc lil__duration_parse(const char *s, size_t len, double *ms);

#endif
