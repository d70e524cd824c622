/*
 * fmt.c -- text formatting for human output: times (ISO-8601 UTC, "3m
 * ago", "+1.234s"), durations, and bytes made safe for a terminal; the
 * parts of an intent's payload (request hash, note).
 *
 * Every function writes a NUL-terminated string into a caller's buffer and
 * truncates rather than overflows.  Integer arithmetic only, so that no
 * rounding differs between machines.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define NS_PER_S  INT64_C(1000000000)
#define NS_PER_MS INT64_C(1000000)

int64_t cli_now_ns(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

void cli_fmt_iso(int64_t ns, bool with_ns, char *buf, size_t cap)
{
    int64_t sec = ns / NS_PER_S, frac = ns % NS_PER_S;
    struct tm tm;
    time_t t;

    if (frac < 0) {
        frac += NS_PER_S;
        sec -= 1;
    }
    t = (time_t)sec;
    if (!gmtime_r(&t, &tm)) {
        snprintf(buf, cap, "?");
        return;
    }
    if (with_ns)
        snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%09" PRId64 "Z",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                 tm.tm_sec, frac);
    else
        snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* "12s", "3m", "5h", "2d" for a non-negative number of seconds. */
static void fmt_span(int64_t s, char *buf, size_t cap)
{
    if (s < 60)
        snprintf(buf, cap, "%" PRId64 "s", s);
    else if (s < 3600)
        snprintf(buf, cap, "%" PRId64 "m", s / 60);
    else if (s < 86400)
        snprintf(buf, cap, "%" PRId64 "h", s / 3600);
    else
        snprintf(buf, cap, "%" PRId64 "d", s / 86400);
}

void cli_fmt_ago(int64_t ns, int64_t now_ns, char *buf, size_t cap)
{
    char span[32];
    int64_t delta;

    if (__builtin_sub_overflow(now_ns, ns, &delta)) {
        snprintf(buf, cap, "?");
        return;
    }
    if (delta >= 0) {
        fmt_span(delta / NS_PER_S, span, sizeof(span));
        snprintf(buf, cap, "%s ago", span);
    } else {
        fmt_span(-(delta / NS_PER_S), span, sizeof(span));
        snprintf(buf, cap, "in %s", span);
    }
}

void cli_fmt_rel(int64_t delta_ns, char *buf, size_t cap)
{
    const char *sign = delta_ns < 0 ? "-" : "+";
    uint64_t mag = delta_ns < 0 ? 0u - (uint64_t)delta_ns : (uint64_t)delta_ns;
    uint64_t ms = mag / (uint64_t)NS_PER_MS;

    snprintf(buf, cap, "%s%" PRIu64 ".%03" PRIu64 "s", sign, ms / 1000, ms % 1000);
}

int64_t cli_ms_to_ns(int64_t ms)
{
    if (ms > INT64_MAX / NS_PER_MS)
        return INT64_MAX;
    if (ms < INT64_MIN / NS_PER_MS)
        return INT64_MIN;
    return ms * NS_PER_MS;
}

void cli_fmt_dur(uint64_t us, char *buf, size_t cap)
{
    if (us == 0)
        snprintf(buf, cap, "-");
    else if (us < 1000)
        snprintf(buf, cap, "%" PRIu64 "us", us);
    else if (us < 1000000)
        snprintf(buf, cap, "%" PRIu64 ".%" PRIu64 "ms", us / 1000, us % 1000 / 100);
    else if (us < 60000000)
        snprintf(buf, cap, "%" PRIu64 ".%02" PRIu64 "s", us / 1000000,
                 us % 1000000 / 10000);
    else if (us < UINT64_C(3600000000))
        snprintf(buf, cap, "%" PRIu64 "m%02" PRIu64 "s", us / 60000000,
                 us / 1000000 % 60);
    else
        snprintf(buf, cap, "%" PRIu64 "h%02" PRIu64 "m", us / UINT64_C(3600000000),
                 us / 60000000 % 60);
}

const char *cli_c_escape(uint32_t c)
{
    switch (c) {
    case '\n':
        return "\\n";
    case '\t':
        return "\\t";
    case '\r':
        return "\\r";
    case '\\':
        return "\\\\";
    default:
        return NULL;
    }
}

/* The escape for byte c, or NULL when c prints as itself. */
static const char *escape_of(unsigned char c, char tmp[5])
{
    const char *esc = cli_c_escape(c);

    if (esc)
        return esc;
    if (c >= 0x20 && c < 0x7f)
        return NULL;
    snprintf(tmp, 5, "\\x%02x", c);
    return tmp;
}

bool cli_is_control_cp(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200e ||
           cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

size_t cli_utf8_decode(const unsigned char *p, size_t n, uint32_t *cp)
{
    size_t k;
    uint32_t v;

    if (n == 0)
        return 0;
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    k = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
    v = p[0] & (0x7fu >> k);
    if (p[0] < 0xc2 || p[0] > 0xf4 || k > n)
        return 0;
    for (size_t i = 1; i < k; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (p[i] & 0x3fu);
    }
    if ((k == 3 && v < 0x800) || (k == 4 && v < 0x10000) || v > 0x10ffff ||
        (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return k;
}

/* Length of the valid UTF-8 sequence of 2 to 4 bytes at p (n bytes
 * left), or 0.  Invalid sequences and C1 controls give 0. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    uint32_t cp;
    size_t k = cli_utf8_decode(p, n, &cp);

    return k >= 2 && cp >= 0xa0 ? k : 0;
}

/* The text for the bytes at p: a UTF-8 sequence as is, else one byte,
 * escaped when needed.  *used receives the bytes of input consumed. */
static const char *piece_of(const unsigned char *p, size_t n, char tmp[5], size_t *used,
                            size_t *len)
{
    const char *esc;

    *used = utf8_seq(p, n);
    if (*used) {
        *len = *used;
        return (const char *)p;
    }
    *used = 1;
    esc = escape_of(p[0], tmp);
    *len = esc ? strlen(esc) : 1;
    return esc ? esc : (const char *)p;
}

void cli_fmt_printable(const void *data, size_t len, size_t max, char *buf, size_t cap)
{
    const unsigned char *p = data;
    size_t n = len < max ? len : max, at = 0, i = 0, used, plen;
    char tmp[5];

    if (cap < 8) {
        if (cap)
            buf[0] = '\0';
        return;
    }
    while (i < n) {
        const char *piece = piece_of(p + i, n - i, tmp, &used, &plen);
        if (at + plen + 4 > cap) /* keep room for "..." and the NUL */
            break;
        memcpy(buf + at, piece, plen);
        at += plen;
        i += used;
    }
    if (i < len) {
        memcpy(buf + at, "...", 3);
        at += 3;
    }
    buf[at] = '\0';
}

/* True when every byte of data belongs to ASCII or a valid UTF-8 sequence. */
static bool is_text(const unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len;) {
        size_t k = p[i] < 0x80 ? 1 : utf8_seq(p + i, len - i);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}

void cli_fmt_hex(const void *data, size_t len, char *buf, size_t cap)
{
    const unsigned char *p = data;
    size_t at = 0;

    if (cap == 0)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < len && at + 3 <= cap; i++, at += 2)
        snprintf(buf + at, cap - at, "%02x", p[i]);
}

/* An intent flagged LIL_RECF_REQUEST: the request's hash, the note's hash,
 * the note's length (8 bytes, little-endian), then the note's first bytes. */
#define APART_HEAD (2 * CLI_INTENT_HASH_LEN + 8)

bool cli_intent_note_cut(const lil_record *rec, uint64_t *full_len)
{
    const unsigned char *p = rec->payload;

    *full_len = 0;
    if (rec->type != LIL_REC_INTENT || !(rec->flags & LIL_RECF_REQUEST) ||
        rec->payload_len < APART_HEAD)
        return false;
    for (int i = 7; i >= 0; i--)
        *full_len = (*full_len << 8) | p[2 * CLI_INTENT_HASH_LEN + i];
    return true;
}

bool cli_intent_note(const lil_record *rec, const char **note, size_t *len)
{
    uint64_t full;
    size_t at = cli_intent_note_cut(rec, &full) ? APART_HEAD : CLI_INTENT_HASH_LEN;

    *note = NULL;
    *len = 0;
    if (rec->type != LIL_REC_INTENT || rec->payload_len <= at)
        return false;
    *note = (const char *)rec->payload + at;
    *len = rec->payload_len - at;
    return true;
}

void cli_fmt_payload(const void *data, size_t len, size_t max, char *buf, size_t cap)
{
    const unsigned char *p = data;
    size_t at, i;

    if (is_text(p, len)) {
        cli_fmt_printable(data, len, max, buf, cap);
        return;
    }
    if (cap < 8) {
        if (cap)
            buf[0] = '\0';
        return;
    }
    memcpy(buf, "0x", 2);
    at = 2;
    for (i = 0; i < len && i < max && at + 2 + 4 <= cap; i++, at += 2)
        snprintf(buf + at, cap - at, "%02x", p[i]);
    if (i < len) {
        memcpy(buf + at, "...", 3);
        at += 3;
    }
    buf[at] = '\0';
}

const char *cli_failure_word(lil_status rc)
{
    switch (rc) {
    case LIL_E_LOCKED:
        return "locked";
    case LIL_E_CORRUPT:
        return "damaged";
    case LIL_E_KEY:
        return "key?";
    case LIL_E_VERSION:
        return "version?";
    case LIL_E_NOTFOUND: /* listed, but no complete record: a creation cut short */
        return "unborn";
    default:
        return "error";
    }
}

const char *cli_queue_word(const json_t *q)
{
    static const char *const words[][2] = {{"queued", "queued"},
                                           {"running", "claimed"},
                                           {"parked", "parked"},
                                           {"error", "error"}};
    const char *state = json_string_value(json_object_get(q, "state"));

    for (size_t i = 0; state && i < sizeof(words) / sizeof(words[0]); i++)
        if (strcmp(state, words[i][0]) == 0)
            return words[i][1];
    return NULL;
}
