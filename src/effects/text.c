/*
 * text.c -- Node's UTF-8 decoding (text.h).  Where a sequence is not valid
 * (base/utf8.c says RFC 3629), the ill-formed subpart is measured with the
 * WHATWG decoder's rules: the lead byte says how many continuation bytes
 * follow and the range of the first one (E0: A0..BF, ED: 80..9F, F0:
 * 90..BF, F4: 80..8F, otherwise 80..BF); the subpart ends before the first
 * byte outside its range, or at the end of the input.
 */
#include "effects/text.h"

#include <stdbool.h>
#include <stdint.h>

#include "base/utf8.h"

#define REPLACEMENT     "\xEF\xBF\xBD" /* U+FFFD */
#define REPLACEMENT_LEN 3

/* Continuation bytes a lead byte asks for (0: not a lead byte) and the
 * range of the first of them. */
static size_t lead_needs(uint8_t b, uint8_t *lo, uint8_t *hi)
{
    *lo = 0x80;
    *hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF)
        return 1;
    if (b >= 0xE0 && b <= 0xEF) {
        if (b == 0xE0)
            *lo = 0xA0;
        else if (b == 0xED)
            *hi = 0x9F;
        return 2;
    }
    if (b >= 0xF0 && b <= 0xF4) {
        if (b == 0xF0)
            *lo = 0x90;
        else if (b == 0xF4)
            *hi = 0x8F;
        return 3;
    }
    return 0;
}

/* Bytes at s that are a prefix of a valid sequence (1 to 4; a whole valid
 * sequence included). */
static size_t valid_prefix(const uint8_t *s, size_t len)
{
    uint8_t lo, hi;
    size_t need = lead_needs(s[0], &lo, &hi), i = 1;

    while (i <= need && i < len && s[i] >= lo && s[i] <= hi) {
        lo = 0x80;
        hi = 0xBF;
        i++;
    }
    return i;
}

lil_status lil__text_from_utf8(struct lil_buf *out, const void *data, size_t len)
{
    const uint8_t *s = data;
    size_t mark = out->len, i = 0, run = 0;
    lil_status rc = LIL_OK;
    uint32_t cp;

    if (len == 0)
        return LIL_OK; /* data may be NULL */
    while (i + run < len && rc == LIL_OK) {
        size_t n = lil__utf8_decode(s + i + run, len - i - run, &cp);
        if (n) {
            run += n; /* valid: copied in one piece below */
            continue;
        }
        rc = lil__buf_add(out, s + i, run);
        if (rc == LIL_OK)
            rc = lil__buf_add(out, REPLACEMENT, REPLACEMENT_LEN);
        i += run + valid_prefix(s + i + run, len - i - run);
        run = 0;
    }
    if (rc == LIL_OK)
        rc = lil__buf_add(out, s + i, run);
    if (rc != LIL_OK) {
        out->len = mark;
        if (out->data)
            out->data[mark] = '\0';
    }
    return rc;
}

size_t lil__text_cut_partial(const void *data, size_t len)
{
    const uint8_t *s = data;

    /* The last lead byte within reach of the end. */
    for (size_t back = 1; back <= 3 && back <= len; back++) {
        size_t at = len - back;
        uint8_t lo, hi;
        if ((s[at] & 0xC0) == 0x80)
            continue; /* a continuation byte: look further back */
        if (lead_needs(s[at], &lo, &hi) < back)
            return len; /* ASCII, an invalid byte, or a complete sequence */
        /* Too short to be complete: cut it if it is a valid start. */
        return valid_prefix(s + at, back) == back ? at : len;
    }
    return len;
}
