/*
 * duration.c -- LoopSpec durations (docs/loopspec.md, "Durations").
 *
 * The reference matches /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/ on input.trim(),
 * then computes Number(digits) * unit and accepts the result only if it is
 * finite, >= 0 and <= 100 * 365 days.  Here:
 *
 *   - trim is JavaScript's: ASCII TAB LF VT FF CR SPACE and the UTF-8
 *     encodings of U+00A0 U+1680 U+2000-U+200A U+2028 U+2029 U+202F U+205F
 *     U+3000 U+FEFF (NEL U+0085 is not JS whitespace);
 *   - \d is ASCII 0-9 only (no /u flag), units are lower-case;
 *   - Number(digits) is strtod on the matched digits, rewritten as
 *     "<int><frac>e-<fraclen>" so the C locale's decimal point does not
 *     matter.  glibc's strtod rounds correctly, like Number().  Very long
 *     digit strings are bounded: leading zeros of the integer part are
 *     dropped, an integer part of more than 400 significant digits is
 *     >= 1e400 (Infinity, a range error), and fraction digits beyond 1100
 *     are replaced by one sticky '1' digit when any of them is non-zero,
 *     which keeps the rounding exact (a double's halfway points need at most
 *     767 significant digits);
 *   - the product is a double multiplication, as in JavaScript.
 *
 * On LIL_DURATION_SYNTAX *ms is 0; on LIL_DURATION_RANGE it is the computed
 * (too large or infinite) value, so a message can show it.
 */
#include "loopspec/values/duration.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/value.h"

#define INT_DIGITS_MAX  400  /* more significant digits: >= 1e400 */
#define FRAC_DIGITS_MAX 1100 /* kept fraction digits before the sticky one */

/* The matched parts of DIGITS ("." DIGITS)? UNIT. */
struct dur_match {
    const char *ip; /* integer digits */
    size_t ilen;
    const char *fp; /* fraction digits (flen 0: none) */
    size_t flen;
    double unit;
};

static size_t count_digits(const char *s, size_t len)
{
    size_t n = 0;
    while (n < len && s[n] >= '0' && s[n] <= '9')
        n++;
    return n;
}

/* The unit's milliseconds if s (len bytes) is exactly a unit, else 0. */
static double unit_ms(const char *s, size_t len)
{
    if (len == 2 && s[0] == 'm' && s[1] == 's')
        return 1.0;
    if (len != 1)
        return 0.0;
    switch (s[0]) {
    case 's':
        return 1000.0;
    case 'm':
        return 60000.0;
    case 'h':
        return 3600000.0;
    case 'd':
        return 86400000.0;
    default:
        return 0.0;
    }
}

/* Match DIGITS ("." DIGITS)? UNIT on the whole of s. */
static bool match_duration(const char *s, size_t len, struct dur_match *m)
{
    size_t i = count_digits(s, len);

    memset(m, 0, sizeof(*m));
    if (i == 0)
        return false;
    m->ip = s;
    m->ilen = i;
    if (i < len && s[i] == '.') {
        m->fp = s + i + 1;
        m->flen = count_digits(m->fp, len - i - 1);
        if (m->flen == 0)
            return false;
        i += 1 + m->flen;
    }
    m->unit = unit_ms(s + i, len - i);
    return m->unit > 0.0;
}

static bool any_nonzero(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != '0')
            return true;
    return false;
}

/* Number(<int>.<frac>) of a match; HUGE_VAL when the integer part alone is
 * far beyond the double range. */
static double match_number(const struct dur_match *m)
{
    char buf[INT_DIGITS_MAX + FRAC_DIGITS_MAX + 32];
    const char *ip = m->ip;
    size_t ilen = m->ilen, flen = m->flen, n = 0, exp;

    while (ilen > 1 && *ip == '0') {
        ip++;
        ilen--;
    }
    if (ilen > INT_DIGITS_MAX)
        return HUGE_VAL;
    if (flen > FRAC_DIGITS_MAX)
        flen = FRAC_DIGITS_MAX;
    memcpy(buf, ip, ilen);
    n = ilen;
    if (flen)
        memcpy(buf + n, m->fp, flen);
    n += flen;
    exp = flen;
    if (flen < m->flen && any_nonzero(m->fp + flen, m->flen - flen)) {
        buf[n++] = '1'; /* sticky digit: "a bit more than the kept digits" */
        exp++;
    }
    (void)snprintf(buf + n, sizeof(buf) - n, "e-%zu", exp);
    return strtod(buf, NULL);
}

enum lil_duration_rc lil__duration_parse(const char *s, size_t len, double *ms)
{
    struct dur_match m;
    size_t b, e;
    double v;

    *ms = 0.0;
    if (!s)
        return LIL_DURATION_SYNTAX;
    b = 0;
    e = len;
    lil__js_trim(s, &b, &e);
    if (!match_duration(s + b, e - b, &m))
        return LIL_DURATION_SYNTAX;
    v = match_number(&m) * m.unit;
    *ms = v;
    if (!isfinite(v) || v < 0.0 || v > LIL_DURATION_MAX_MS)
        return LIL_DURATION_RANGE;
    return LIL_DURATION_OK;
}
