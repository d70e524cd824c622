/*
 * utf8.c -- UTF-8 decoding (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF).
 */
#include "base/utf8.h"

size_t lil__utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
    uint32_t c = s[0], min;
    size_t n;

    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2, c &= 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3, c &= 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4, c &= 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3Fu);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return n;
}

size_t lil__utf8_invalid_at(const char *s, size_t len)
{
    uint32_t cp;
    size_t n;

    for (size_t i = 0; i < len; i += n) {
        n = lil__utf8_decode((const unsigned char *)s + i, len - i, &cp);
        if (n == 0)
            return i;
    }
    return len;
}

int lil__utf8_is_control(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200e ||
           cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}
