/*
 * jsonpath.c -- the JSONPath subset of `save` (jsonpath.h;
 * docs/loopspec.md, "JSONPath in `save`"), with the reference's JavaScript
 * semantics:
 *
 *     if (obj == null) return undefined;
 *     for (seg of path.replace(/^\$\.?/, "").split(".")) {
 *         if (!seg) continue;
 *         m = /^([^[]*)(?:\[(\d+)\])?$/.exec(seg);   if (!m) return undefined;
 *         if (m[1]) cur = cur?.[m[1]];
 *         if (m[2] != null) cur = cur?.[Number(m[2])];
 *         if (cur == null) return undefined;
 *     }
 *     return cur;
 *
 * JavaScript property access on JSON values, as implemented here:
 *   - object: its own key (a key named "length" included).  Inherited
 *     Object.prototype members (constructor, toString, __proto__ ...) are
 *     undefined here; in the reference they are functions, which
 *     JSON.stringify drops anyway, or Object.prototype itself for
 *     "__proto__" (stored as {}): lil says undefined.
 *   - array: "length" is its size; a canonical index ("0", "2", not "02",
 *     "+2" or "2.0") below the size is that element.
 *   - string: "length" is its length in UTF-16 code units; a canonical
 *     index is the one-unit string at that position.  The UTF-8 text is
 *     walked by code point: a BMP character is one unit and indexes to
 *     itself; an astral character (4 UTF-8 bytes) is two units, a surrogate
 *     pair in JavaScript, and each half indexes to U+FFFD (a lone surrogate
 *     cannot be written in UTF-8; U+FFFD is what it becomes when printed).
 *     A byte that is not valid UTF-8 (jansson never makes one) counts as one
 *     unit and indexes to U+FFFD as well.
 *   - number, boolean: nothing (their properties are all inherited).
 *   - "[n]" uses Number(n): leading zeros are fine ("[02]" is element 2);
 *     an n of more than 9 digits (after leading zeros) is taken to be beyond
 *     any array or string (10^9 elements or UTF-16 units).  On an object
 *     "[n]" reads the key String(Number(n)), e.g. "[007]" reads key "7"; lil
 *     does this for n up to 15 significant digits and says undefined beyond
 *     (JavaScript would round n to a double there).
 *
 * lil__jsonpath_supported says false, with a reason, when a segment is not
 * KEY or KEY[n] (so the path is undefined for every source: "[*]",
 * "['a']", "[?(...)]", "[-1]", "[1][0]", "[ 0 ]"), and for two forms that
 * read a literal key the author surely did not mean: a key containing '*'
 * (a wildcard that reads the key named "*") and a key with leading or
 * trailing whitespace ("$ .a" reads the key " ").  A ".." is accepted --
 * empty segments are skipped, "$..c" reads "$.c", so it can match -- but
 * `why` then holds a note that it is not recursive descent, for a caller
 * that wants to show it (why is "" for every other supported path).
 */
#include "lang/jsonpath.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define INDEX_DIGITS_MAX 9              /* a longer [n] is beyond any array or string */
#define KEY_DIGITS_MAX   15             /* String(Number(n)) == n up to here */
#define SHOW_MAX         40             /* bytes of a segment quoted in a reason */
#define REPLACEMENT      "\xef\xbf\xbd" /* U+FFFD */

/* One segment split as /^([^[]*)(?:\[(\d+)\])?$/. */
struct seg {
    const char *key;
    size_t klen;
    const char *idx; /* NULL: no index */
    size_t ilen;
};

/* Path without the leading /^\$\.?/. */
static const char *strip_root(const char *path)
{
    if (path[0] != '$')
        return path;
    return path[1] == '.' ? path + 2 : path + 1;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Split s (len bytes) into key and index; false if it does not match. */
static bool split_seg(const char *s, size_t len, struct seg *g)
{
    const char *br = memchr(s, '[', len);
    size_t i;

    g->key = s;
    g->klen = br ? (size_t)(br - s) : len;
    g->idx = NULL;
    g->ilen = 0;
    if (!br)
        return true;
    i = g->klen + 1;
    while (i < len && is_digit(s[i]))
        i++;
    if (i == g->klen + 1 || i + 1 != len || s[i] != ']')
        return false;
    g->idx = br + 1;
    g->ilen = i - g->klen - 1;
    return true;
}

/* The digits d[0..n) as a position, leading zeros skipped (Number(d));
 * false if beyond INDEX_DIGITS_MAX digits. */
static bool digits_value(const char *d, size_t n, size_t *out)
{
    uint64_t v = 0;

    while (n > 1 && *d == '0') {
        d++;
        n--;
    }
    if (n > INDEX_DIGITS_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (uint64_t)(d[i] - '0');
    *out = (size_t)v; /* < 10^9: fits */
    return true;
}

/* Is key a canonical array index ("0", "12"; not "012", "", "1a")? */
static bool canonical_index(const char *key, size_t len, size_t *out)
{
    for (size_t i = 0; i < len; i++)
        if (!is_digit(key[i]))
            return false;
    if (len == 0 || (len > 1 && key[0] == '0'))
        return false;
    return digits_value(key, len, out);
}

/* Length in bytes and in UTF-16 units (1 or 2) of the character at s; an
 * invalid byte is one byte and one unit (*bad set). */
static size_t utf8_char(const unsigned char *s, size_t len, unsigned *units, bool *bad)
{
    size_t n = s[0] < 0x80                    ? 1
               : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
               : s[0] >= 0xe0                 ? 3
               : s[0] >= 0xc2                 ? 2
                                              : 0;

    *units = n == 4 ? 2 : 1;
    *bad = n == 0 || n > len;
    for (size_t i = 1; !*bad && i < n; i++)
        *bad = (s[i] & 0xc0) != 0x80;
    if (*bad) {
        *units = 1;
        return 1;
    }
    return n;
}

/* The string's length in UTF-16 code units. */
static json_t *string_length(json_t *str)
{
    const unsigned char *s = (const unsigned char *)json_string_value(str);
    size_t len = json_string_length(str), i = 0, units = 0;

    while (i < len) {
        unsigned u;
        bool bad;
        i += utf8_char(s + i, len - i, &u, &bad);
        units += u;
    }
    return json_integer((json_int_t)units);
}

/* The one-unit string at UTF-16 position pos, or NULL past the end. */
static json_t *string_unit(json_t *str, size_t pos)
{
    const unsigned char *s = (const unsigned char *)json_string_value(str);
    size_t len = json_string_length(str), i = 0, at = 0;

    while (i < len) {
        unsigned u;
        bool bad;
        size_t n = utf8_char(s + i, len - i, &u, &bad);
        if (pos < at + u) {
            if (u == 2 || bad)
                return json_string(REPLACEMENT);
            return json_stringn((const char *)s + i, n);
        }
        at += u;
        i += n;
    }
    return NULL;
}

static bool is_length(const char *key, size_t len)
{
    return len == 6 && memcmp(key, "length", 6) == 0;
}

/* cur?.[key] for a key from a dotted segment: a new reference or NULL. */
static json_t *get_key(json_t *cur, const char *key, size_t len)
{
    size_t pos;

    if (json_is_object(cur))
        return json_incref(json_object_getn(cur, key, len));
    if (json_is_array(cur)) {
        if (is_length(key, len))
            return json_integer((json_int_t)json_array_size(cur));
        return canonical_index(key, len, &pos) ? json_incref(json_array_get(cur, pos))
                                               : NULL;
    }
    if (json_is_string(cur)) {
        if (is_length(key, len))
            return string_length(cur);
        return canonical_index(key, len, &pos) ? string_unit(cur, pos) : NULL;
    }
    return NULL;
}

/* cur?.[Number(digits)]: a new reference or NULL. */
static json_t *get_index(json_t *cur, const char *d, size_t n)
{
    size_t pos;

    if (json_is_object(cur)) {
        while (n > 1 && *d == '0') {
            d++;
            n--;
        }
        return n <= KEY_DIGITS_MAX ? json_incref(json_object_getn(cur, d, n)) : NULL;
    }
    if (!digits_value(d, n, &pos))
        return NULL;
    if (json_is_array(cur))
        return json_incref(json_array_get(cur, pos));
    if (json_is_string(cur))
        return string_unit(cur, pos);
    return NULL;
}

/* One segment from cur (a reference, consumed); the new current value or
 * NULL for undefined. */
static json_t *step(json_t *cur, const char *s, size_t len)
{
    struct seg g;
    json_t *next;

    if (!split_seg(s, len, &g)) {
        json_decref(cur);
        return NULL;
    }
    if (g.klen > 0) {
        next = get_key(cur, g.key, g.klen);
        json_decref(cur);
        cur = next;
    }
    if (g.idx && cur) {
        next = get_index(cur, g.idx, g.ilen);
        json_decref(cur);
        cur = next;
    }
    if (json_is_null(cur)) {
        json_decref(cur);
        return NULL;
    }
    return cur;
}

json_t *lil__jsonpath_get(json_t *src, const char *path)
{
    const char *p;
    json_t *cur;

    if (!src || json_is_null(src) || !path)
        return NULL;
    p = strip_root(path);
    cur = json_incref(src);
    while (cur) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (len > 0)
            cur = step(cur, p, len);
        if (!dot)
            break;
        p = dot + 1;
    }
    return cur;
}

/* ---- lil__jsonpath_supported ---------------------------------------------- */

static bool say(char *why, size_t why_len, bool rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Write the reason into why (if any) and return rc. */
static bool say(char *why, size_t why_len, bool rc, const char *fmt, ...)
{
    va_list ap;

    if (!why || why_len == 0)
        return rc;
    va_start(ap, fmt);
    (void)vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
    return rc;
}

static bool is_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Why the bracket part of s (from the first '[') is not one [n]. */
static bool bad_bracket(const char *s, size_t len, char *why, size_t why_len)
{
    const char *br = memchr(s, '[', len);
    size_t rest = len - (size_t)(br - s), i = 1;
    int show = (int)(len > SHOW_MAX ? SHOW_MAX : len);

    while (i < rest && is_digit(br[i]))
        i++;
    if (rest > 1 && br[1] == '*')
        return say(why, why_len, false,
                   "'[*]' is not supported: only one [n] index per segment");
    if (rest > 1 && br[1] == '?')
        return say(why, why_len, false, "filters '[?(...)]' are not supported");
    if (rest > 1 && (br[1] == '\'' || br[1] == '"'))
        return say(why, why_len, false,
                   "quoted keys like ['a'] are not supported: use .a");
    if (rest > 1 && br[1] == '-')
        return say(why, why_len, false, "negative indices like [-1] are not supported");
    if (i > 1 && i + 1 < rest && br[i] == ']' && br[i + 1] == '[')
        return say(why, why_len, false,
                   "only one [n] index per segment: '%.*s' is always undefined", show,
                   s);
    for (size_t k = 1; k < rest; k++)
        if (is_space(br[k]))
            return say(why, why_len, false,
                       "spaces inside [] are not supported in '%.*s'", show, s);
    return say(why, why_len, false,
               "segment '%.*s' is not KEY or KEY[n] (n a whole number)", show, s);
}

/* A key that reads a literal key the author did not mean. */
static bool odd_key(const char *key, size_t len, char *why, size_t why_len)
{
    int show = (int)(len > SHOW_MAX ? SHOW_MAX : len);

    if (len > 0 && memchr(key, '*', len))
        return say(why, why_len, false,
                   "wildcards are not supported: '%.*s' reads a key with a '*' in it",
                   show, key);
    if (len > 0 && (is_space(key[0]) || is_space(key[len - 1])))
        return say(why, why_len, false,
                   "key '%.*s' has leading or trailing spaces (a space in the path?)",
                   show, key);
    return true;
}

bool lil__jsonpath_supported(const char *path, char *why, size_t why_len)
{
    const char *p;

    say(why, why_len, true, "%s", "");
    if (!path)
        return say(why, why_len, false, "no path");
    for (p = strip_root(path);;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        struct seg g = {0};
        if (len > 0 && !split_seg(p, len, &g))
            return bad_bracket(p, len, why, why_len);
        if (!odd_key(g.key, g.klen, why, why_len))
            return false;
        if (!dot)
            break;
        p = dot + 1;
    }
    if (strstr(path, ".."))
        return say(
            why, why_len, true,
            "'..' is not recursive descent: empty segments are skipped, so '$..c' "
            "reads '$.c'");
    return true;
}
