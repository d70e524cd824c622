/*
 * cron.h -- cron expressions of `schedule.cron`: 5 fields (minute hour day
 * month weekday) or 6 (seconds first), each a comma list of
 * (N | N-M | *)(/STEP)?.  Bounds: second/minute 0-59, hour 0-23, day 1-31,
 * month 1-12, weekday 0-7 (0 and 7 are Sunday).  Names, ?, L, W, # are
 * refused (loopspec-contract.md section 4.2, `bad-cron`).
 */
#ifndef LIL_SPEC_CRON_H
#define LIL_SPEC_CRON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lil_cron {
    uint64_t second, minute; /* bit i set: value i allowed */
    uint32_t hour, day, month;
    uint8_t weekday; /* bits 0-6; 7 is folded into 0 */
    bool has_seconds;
};

/* Parse expr.  On failure return false and say why in why (e.g. "field 2
 * (hour) value 24 is out of range 0-23"). */
bool lil__cron_parse(const char *expr, struct lil_cron *out, char *why, size_t why_len);

#endif
