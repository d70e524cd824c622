/*
 * cron.c -- parse `schedule.cron` into per-field bitsets (cron.h;
 * docs/loopspec.md, "Validation", `bad-cron`).
 *
 * Grammar, as the reference's CRON_RE and cronOutOfRange: the trimmed text
 * split on runs of JavaScript whitespace (\s: ASCII TAB..CR, SPACE and the
 * Unicode spaces of String.prototype.trim) into 5 or 6 fields; each field a
 * comma list of ELEM; ELEM := (N | N-M | *) ("/" STEP)?, N M STEP ASCII
 * digits (leading zeros allowed: "007" is 7).  Every number must lie in its
 * field's bounds, STEP must be >= 1.  Stricter than the reference, which
 * only checks the endpoints: a reversed range (5-1) is refused.
 *
 * Meaning, as Vixie cron: "*" is the field's whole range, "N/S" is N to the
 * field's maximum every S, "N-M/S" every S from N.  A STEP larger than the
 * span only keeps the start.  Weekday 7 is folded into 0 (Sunday).  A
 * 5-field expression fires at second 0 (second == bit 0, has_seconds false).
 *
 * Errors name the field by its position in the text and by its meaning:
 * "field 2 (hour): 24 is out of range 0-23", "expected 5 or 6 fields, got 3".
 *
 * Fire times: a walk over the days after the start (a day that matches
 * month, day and weekday), and in the first such day the first second of
 * an allowed hour, minute and second.  Calendar arithmetic is proleptic
 * Gregorian on days since the epoch (H. Hinnant's civil_from_days), so no
 * time zone or C library time function is involved.
 */
#include "loopspec/values/cron.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lang/value.h"

#define SHOW_MAX  24         /* bytes of an element quoted in a message */
#define NUM_LIMIT 1000000000 /* numbers saturate here (all bounds are < 60) */

struct cron_field {
    const char *name;
    unsigned lo, hi;
};

static const struct cron_field FIELDS[6] = {
    {"second", 0, 59}, {"minute", 0, 59}, {"hour", 0, 23},
    {"day", 1, 31},    {"month", 1, 12},  {"weekday", 0, 7},
};

/* Where we are, for messages. */
struct cron_ctx {
    const struct cron_field *f;
    int pos; /* 1-based field position in the text */
    char *why;
    size_t why_len;
};

static void say(char *why, size_t why_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(char *why, size_t why_len, const char *fmt, ...)
{
    va_list ap;

    if (!why || why_len == 0)
        return;
    va_start(ap, fmt);
    (void)vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
}

/* "field 2 (hour): " + the formatted rest; always returns false. */
static bool fail(const struct cron_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static bool fail(const struct cron_ctx *c, const char *fmt, ...)
{
    char rest[160];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(rest, sizeof(rest), fmt, ap);
    va_end(ap);
    say(c->why, c->why_len, "field %d (%s): %s", c->pos, c->f->name, rest);
    return false;
}

/* A printable copy of s (non-printable bytes as '?'), cut at SHOW_MAX. */
static const char *show(const char *s, size_t len, char out[SHOW_MAX + 4])
{
    size_t n = len > SHOW_MAX ? SHOW_MAX : len;

    /* cppcheck-suppress knownConditionTrueFalse ; n is len cut at SHOW_MAX */
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= 0x20 && s[i] < 0x7f)
            out[i] = s[i];
        else
            out[i] = '?';
    }
    if (n < len) { /* cppcheck-suppress knownConditionTrueFalse */
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
    return out;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* Digits at s[*i...] as a number saturating at NUM_LIMIT; false if none. */
static bool read_num(const char *s, size_t len, size_t *i, unsigned *out)
{
    size_t start = *i;
    unsigned v = 0;

    while (*i < len && is_digit(s[*i])) {
        v = v >= NUM_LIMIT / 10 ? NUM_LIMIT : v * 10 + (unsigned)(s[*i] - '0');
        (*i)++;
    }
    *out = v;
    return *i > start;
}

/* Why an element with a character outside [0-9*,/-] is refused. */
static bool refuse_char(const struct cron_ctx *c, const char *s, size_t len)
{
    char buf[SHOW_MAX + 4];
    size_t i = 0, a;

    while (i < len && (is_digit(s[i]) || s[i] == '*' || s[i] == '/' || s[i] == '-'))
        i++;
    if (s[i] == '?')
        return fail(c, "'?' is not supported (use *)");
    if (s[i] == '#')
        return fail(c, "'#' (nth weekday) in '%s' is not supported", show(s, len, buf));
    if (!is_alpha(s[i])) {
        char ch[SHOW_MAX + 4];
        return fail(c, "unexpected character '%s' in '%s'", show(s + i, 1, ch),
                    show(s, len, buf));
    }
    for (a = i; a < len && is_alpha(s[a]); a++)
        ;
    if (a - i <= 2 && (s[i] == 'L' || s[i] == 'W') && (a - i == 1 || s[i + 1] == 'W'))
        return fail(c, "'%c' (%s) in '%s' is not supported", s[i],
                    s[i] == 'L' ? "last" : "nearest weekday", show(s, len, buf));
    return fail(c, "'%s' is a name; use numbers %u-%u", show(s, len, buf), c->f->lo,
                c->f->hi);
}

/* One bound N must lie in the field's range. */
static bool check_bound(const struct cron_ctx *c, const char *text, size_t len,
                        unsigned v)
{
    char buf[SHOW_MAX + 4];

    if (v >= c->f->lo && v <= c->f->hi)
        return true;
    return fail(c, "%s is out of range %u-%u", show(text, len, buf), c->f->lo,
                c->f->hi);
}

/* Set bits lo..hi every step into *bits. */
static void set_bits(uint64_t *bits, unsigned lo, unsigned hi, unsigned step)
{
    for (unsigned v = lo; v <= hi && v < 64; v += step)
        *bits |= (uint64_t)1 << v;
}

#define NOT_AN_ELEM "'%s' is not N, N-M or * (with an optional /STEP)"

/* (N | N-M | *) from s[*i]: the values into *lo..*hi; *single for N. */
static bool parse_base(const struct cron_ctx *c, const char *s, size_t len, size_t *i,
                       unsigned *lo, unsigned *hi, bool *single)
{
    char buf[SHOW_MAX + 4];
    size_t b0;

    *single = false;
    *lo = c->f->lo;
    *hi = c->f->hi;
    if (s[0] == '*') {
        *i = 1;
        return true;
    }
    if (!read_num(s, len, i, lo))
        return fail(c, NOT_AN_ELEM, show(s, len, buf));
    if (!check_bound(c, s, *i, *lo))
        return false;
    *hi = *lo;
    *single = *i == len || s[*i] != '-';
    if (*single)
        return true;
    b0 = ++*i;
    if (!read_num(s, len, i, hi))
        return fail(c, "'%s' has a range without an end", show(s, len, buf));
    if (!check_bound(c, s + b0, *i - b0, *hi))
        return false;
    if (*hi < *lo)
        return fail(c, "range '%s' is reversed", show(s, *i, buf));
    return true;
}

/* "/" STEP from s[*i] (which is the '/') into *step. */
static bool parse_step(const struct cron_ctx *c, const char *s, size_t len, size_t *i,
                       unsigned *step)
{
    char buf[SHOW_MAX + 4];
    size_t b0 = ++*i;

    if (!read_num(s, len, i, step))
        return fail(c, "'%s' has a '/' without a step", show(s, len, buf));
    if (*step == 0)
        return fail(c, "step %s must be at least 1", show(s + b0, *i - b0, buf));
    return true;
}

/* ELEM := (N | N-M | *) ("/" STEP)? over s (len bytes, no comma). */
static bool parse_elem(const struct cron_ctx *c, const char *s, size_t len,
                       uint64_t *bits)
{
    char buf[SHOW_MAX + 4];
    size_t i = 0;
    unsigned lo, hi, step = 1;
    bool single;

    if (len == 0)
        return fail(c, "empty list element");
    for (size_t k = 0; k < len; k++)
        if (!is_digit(s[k]) && s[k] != '*' && s[k] != '/' && s[k] != '-')
            return refuse_char(c, s, len);
    if (!parse_base(c, s, len, &i, &lo, &hi, &single))
        return false;
    if (i < len && s[i] == '/') {
        if (!parse_step(c, s, len, &i, &step))
            return false;
        if (single)
            hi = c->f->hi; /* N/S: from N to the maximum */
    }
    if (i != len)
        return fail(c, NOT_AN_ELEM, show(s, len, buf));
    set_bits(bits, lo, hi, step);
    return true;
}

/* A comma list of elements. */
static bool parse_field(const struct cron_ctx *c, const char *s, size_t len,
                        uint64_t *bits)
{
    size_t start = 0;

    *bits = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != ',')
            continue;
        if (!parse_elem(c, s + start, i - start, bits))
            return false;
        start = i + 1;
    }
    return true;
}

/* Split expr into whitespace-separated fields: up to 6 kept in f/flen, the
 * count of all in the return value. */
static int split_fields(const char *expr, const char *f[6], size_t flen[6])
{
    size_t len = strlen(expr), i = 0;
    int n = 0;

    while (i < len) {
        size_t sp = lil__js_space_len(expr + i, len - i), start = i;
        if (sp) {
            i += sp;
            continue;
        }
        while (i < len && !lil__js_space_len(expr + i, len - i))
            i++;
        if (n < 6) {
            f[n] = expr + start;
            flen[n] = i - start;
        }
        n++;
    }
    return n;
}

static void store_field(struct lil_cron *out, const char *name, uint64_t bits)
{
    if (strcmp(name, "second") == 0)
        out->second = bits;
    else if (strcmp(name, "minute") == 0)
        out->minute = bits;
    else if (strcmp(name, "hour") == 0)
        out->hour = (uint32_t)bits;
    else if (strcmp(name, "day") == 0)
        out->day = (uint32_t)bits;
    else if (strcmp(name, "month") == 0)
        out->month = (uint32_t)bits;
    else /* weekday: 7 is Sunday, like 0 */
        out->weekday = (uint8_t)((bits | (bits >> 7)) & 0x7f);
}

bool lil__cron_parse(const char *expr, struct lil_cron *out, char *why, size_t why_len)
{
    const char *f[6];
    size_t flen[6];
    struct lil_cron cron = {0};
    int n;

    say(why, why_len, "%s", "");
    memset(out, 0, sizeof(*out));
    n = expr ? split_fields(expr, f, flen) : 0;
    if (n != 5 && n != 6) {
        say(why, why_len, "expected 5 or 6 fields, got %d", n);
        return false;
    }
    cron.has_seconds = n == 6;
    cron.second = 1; /* 5 fields: at second 0 */
    for (int i = 0; i < n; i++) {
        struct cron_ctx c = {&FIELDS[i + 6 - n], i + 1, why, why_len};
        uint64_t bits;
        if (!parse_field(&c, f[i], flen[i], &bits))
            return false;
        store_field(&cron, c.f->name, bits);
        if (f[i][0] == '*' && strcmp(c.f->name, "day") == 0)
            cron.day_star = true;
        if (f[i][0] == '*' && strcmp(c.f->name, "weekday") == 0)
            cron.weekday_star = true;
    }
    *out = cron;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Fire times                                                               */

#define DAY_S        86400
#define HORIZON_DAYS INT64_C(146097) /* 400 Gregorian years: the calendar repeats */

struct civil {
    int64_t year;
    unsigned month, day; /* 1-12, 1-31 */
};

/* Days since 1970-01-01 (>= 0) as a date (H. Hinnant's civil_from_days). */
static struct civil civil_from_days(int64_t z)
{
    struct civil c;
    int64_t era, yoe, doe, doy, mp;

    z += 719468;
    era = z / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    c.day = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    c.month = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    c.year = yoe + era * 400 + (c.month <= 2);
    return c;
}

static bool has_bit(uint64_t bits, unsigned i)
{
    return ((bits >> i) & 1U) != 0;
}

/* Does the cron allow day number `days` (since the epoch)? */
static bool day_matches(const struct lil_cron *c, int64_t days)
{
    struct civil d = civil_from_days(days);
    unsigned wd = (unsigned)((days + 4) % 7); /* 1970-01-01 was a Thursday */
    bool dom = has_bit(c->day, d.day), dow = has_bit(c->weekday, wd);

    if (!has_bit(c->month, d.month))
        return false;
    return c->day_star || c->weekday_star ? dom && dow : dom || dow;
}

/* The first second of a day at or after second sod that the cron allows,
 * or -1. */
static long first_second(const struct lil_cron *c, long sod)
{
    long t = sod;

    while (t < DAY_S) {
        if (!has_bit(c->hour, (unsigned)(t / 3600)))
            t = (t / 3600 + 1) * 3600;
        else if (!has_bit(c->minute, (unsigned)(t / 60 % 60)))
            t = (t / 60 + 1) * 60;
        else if (!has_bit(c->second, (unsigned)(t % 60)))
            t++;
        else
            return t;
    }
    return -1;
}

bool lil__cron_next(const struct lil_cron *c, int64_t after_ms, int64_t *out_ms)
{
    int64_t start, day;
    long sod;

    if (after_ms < 0 || after_ms > LIL_CRON_MAX_MS)
        return false;
    start = after_ms / 1000 + 1; /* whole seconds, strictly after */
    day = start / DAY_S;
    sod = (long)(start % DAY_S);
    for (int64_t i = 0; i < HORIZON_DAYS; i++, sod = 0) {
        long t;

        if (!day_matches(c, day + i))
            continue;
        t = first_second(c, sod);
        if (t >= 0) {
            *out_ms = ((day + i) * DAY_S + t) * 1000;
            return true;
        }
    }
    return false;
}

void lil__cron_iso(int64_t ms, char *buf, size_t cap)
{
    int64_t s = ms < 0 ? 0 : ms / 1000;
    struct civil d = civil_from_days(s / DAY_S);
    long sod = (long)(s % DAY_S);

    say(buf, cap, "%04lld-%02u-%02uT%02ld:%02ld:%02ldZ", (long long)d.year, d.month,
        d.day, sod / 3600, sod / 60 % 60, sod % 60);
}
