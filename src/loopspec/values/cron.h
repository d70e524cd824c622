/*
 * cron.h -- cron expressions of `schedule.cron`: 5 fields (minute hour day
 * month weekday) or 6 (seconds first), each a comma list of
 * (N | N-M | *)(/STEP)?.  Bounds: second/minute 0-59, hour 0-23, day 1-31,
 * month 1-12, weekday 0-7 (0 and 7 are Sunday).  Names, ?, L, W, # are
 * refused (docs/loopspec.md, "Validation", `bad-cron`).
 *
 * Fire times (lil__cron_next) are counted in UTC, as Vixie cron counts
 * them: a time fires when its second, minute, hour and month are allowed
 * and its day is, where day means the day of the month and the weekday
 * both when either field starts with '*', and either of them otherwise.
 * Times are milliseconds since the Unix epoch.
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
    bool day_star, weekday_star; /* the field's text starts with '*' */
};

/* Parse expr.  On failure return false and say why in why (e.g. "field 2
 * (hour) value 24 is out of range 0-23"). */
bool lil__cron_parse(const char *expr, struct lil_cron *out, char *why, size_t why_len);

/* Latest time lil__cron_next starts from: 9999-12-31T23:59:59.999Z. */
#define LIL_CRON_MAX_MS INT64_C(253402300799999)

/* The first fire time of c strictly after after_ms (0 to LIL_CRON_MAX_MS)
 * into *out_ms.  false when after_ms is out of range or no time fires in
 * the 400 years that follow it (a day such as 30 February). */
bool lil__cron_next(const struct lil_cron *c, int64_t after_ms, int64_t *out_ms);

/* A time of 0 to LIL_CRON_MAX_MS as "2025-01-02T07:00:00Z" (seconds;
 * milliseconds are dropped); cap >= LIL_CRON_ISO_CAP. */
#define LIL_CRON_ISO_CAP 32
void lil__cron_iso(int64_t ms, char *buf, size_t cap);

#endif
