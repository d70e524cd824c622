/*
 * write.c -- the printer behind lil__json_dump for the forms the journal
 * uses: compact text, keys in insertion order or sorted (the canonical
 * form, canon.c), any value at the top.  It prints exactly the bytes
 * jansson 2.14's json_dump_callback prints for those flags, without what
 * makes jansson's printer slow for small records: a hash table of the
 * containers being printed (an snprintf of each container's address, an
 * insert and a delete) and a callback for every piece of text.
 * tests/unit/test_json_write.c compares the two on generated values.
 *
 * The bytes, as jansson prints them with JSON_COMPACT:
 *   - null, true, false; integers in decimal ("%lld");
 *   - reals as jansson 2.14 prints them (built without its dtoa): "%.17g",
 *     the locale's decimal point as '.', ".0" added when the text would
 *     read as an integer, the exponent without '+' or leading zeros;
 *   - strings: '"', the UTF-8 text with \\ \" \b \f \n \r \t and \u00XX
 *     (upper-case hex) for the other characters below U+0020, '"'.  Text
 *     that is not valid UTF-8 cannot be printed (jansson refuses such a
 *     string; a key it prints as broken text, lil refuses it too);
 *   - arrays "[a,b]", objects "{"k":v,...}": keys in insertion order, or
 *     with JSON_SORT_KEYS sorted by their bytes (memcmp over the shorter,
 *     then the shorter first), as jansson's compare_keys.
 *
 * Other flags (indentation, JSON_ENSURE_ASCII, JSON_ESCAPE_SLASH,
 * JSON_EMBED, a real precision) are jansson's alone: lil__json_write_can
 * says no and the caller uses jansson.  A value nested deeper than
 * LIL_JSON_WRITE_DEPTH (or a container inside itself, which only a misuse
 * of jansson's API can make) is left to jansson too: write says so
 * (*too_deep), out keeps its length at the call, and jansson then prints
 * the value or finds the loop.
 *
 * No allocation but out's growth and, for sorted objects of more than
 * LIL_JSON_WRITE_KEYS keys, one array of keys from the env's allocator.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/utf8.h"
#include "json/json.h"

#define LIL_JSON_WRITE_DEPTH 512 /* containers inside containers */
#define LIL_JSON_WRITE_KEYS  32  /* keys sorted on the stack */

#define WRITE_FLAGS (JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)

struct writer {
    const struct lil_env *env;
    struct lil_buf *out;
    size_t flags;
    bool too_deep; /* a container past LIL_JSON_WRITE_DEPTH was met */
};

struct key {
    const char *s;
    size_t len;
};

static lil_status write_value(struct writer *w, const json_t *v, int depth);

/* jansson's iterators take a mutable object; printing changes nothing. */
static json_t *mutable_of(const json_t *v)
{
    json_t *m;

    /* the pointer itself is copied, not what it points to */
    /* NOLINTNEXTLINE(bugprone-sizeof-expression) */
    memcpy(&m, &v, sizeof(json_t *));
    return m;
}

bool lil__json_write_can(size_t flags)
{
    return (flags & JSON_COMPACT) && (flags & ~(size_t)WRITE_FLAGS) == 0;
}

/* Append len bytes; out stays NUL-terminated by lil__json_write's end. */
static lil_status put(struct writer *w, const void *s, size_t len)
{
    struct lil_buf *b = w->out;

    if (b->len + len < b->alloc && b->len + len <= b->cap) { /* room: no call */
        if (len > 16)
            memcpy(b->data + b->len, s, len);
        else /* the usual piece: a key, a short run; no call for it */
            for (size_t i = 0; i < len; i++)
                b->data[b->len + i] = ((const uint8_t *)s)[i];
        b->len += len;
        return LIL_OK;
    }
    return lil__buf_add(b, s, len);
}

/* Append one byte (the punctuation of the text). */
static lil_status put_char(struct writer *w, char c)
{
    struct lil_buf *b = w->out;

    if (b->len + 1 < b->alloc && b->len < b->cap) {
        b->data[b->len++] = (uint8_t)c;
        return LIL_OK;
    }
    return lil__buf_add(b, &c, 1);
}

static lil_status write_integer(struct writer *w, json_int_t n)
{
    char digits[LIL_I64_TEXT_MAX];

    return put(w, digits, lil__i64_text((int64_t)n, digits));
}

/* A number's text as printf gives it may have the locale's decimal point:
 * a JSON number has '.' there (a single byte, as jansson assumes). */
static void point_of_json(char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = text[i];

        if (!(c >= '0' && c <= '9') && c != '-' && c != '+' && c != 'e')
            text[i] = '.';
    }
}

/* jansson's real: "%.17g", ".0" when that reads as an integer, and the
 * exponent without '+' or leading zeros (1e+300 is 1e300, 1e-05 is 1e-5). */
static lil_status write_real(struct writer *w, double d)
{
    char text[40];
    int n = snprintf(text, sizeof(text), "%.17g", d);
    size_t len;
    char *start, *end;

    if (n < 0 || (size_t)n + 3 > sizeof(text))
        return LIL_E_INVAL;
    len = (size_t)n;
    point_of_json(text, len);
    if (!memchr(text, '.', len) && !memchr(text, 'e', len)) {
        text[len++] = '.';
        text[len++] = '0';
    }
    start = memchr(text, 'e', len);
    if (start) {
        end = ++start + 1;
        if (*start == '-')
            start++;
        while (end < text + len && *end == '0')
            end++;
        memmove(start, end, len - (size_t)(end - text));
        len -= (size_t)(end - start);
    }
    return put(w, text, len);
}

/* The escape of byte c (below 0x20, '"' or '\\') into esc; its length. */
static size_t escape_of(unsigned char c, char esc[6])
{
    static const char hex[] = "0123456789ABCDEF";

    esc[0] = '\\';
    switch (c) {
    case '"':
    case '\\':
        esc[1] = (char)c;
        return 2;
    case '\b':
        esc[1] = 'b';
        return 2;
    case '\f':
        esc[1] = 'f';
        return 2;
    case '\n':
        esc[1] = 'n';
        return 2;
    case '\r':
        esc[1] = 'r';
        return 2;
    case '\t':
        esc[1] = 't';
        return 2;
    default:
        esc[1] = 'u';
        esc[2] = '0';
        esc[3] = '0';
        esc[4] = hex[c >> 4];
        esc[5] = hex[c & 0xf];
        return 6;
    }
}

/* Printable ASCII other than '"' and '\\': bytes a string holds as they are. */
static bool plain_ascii(unsigned char c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* The eight bytes at s are all plain ASCII (plain_ascii): word-wide tests
 * for a byte below 0x20, a '"', a '\\' and a high bit. */
static bool plain_word(const char *s)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t x, quote, backslash;

    memcpy(&x, s, sizeof(x));
    quote = x ^ (ones * '"');
    backslash = x ^ (ones * '\\');
    return ((x & highs) | ((x - ones * 0x20) & ~x & highs) |
            ((quote - ones) & ~quote & highs) |
            ((backslash - ones) & ~backslash & highs)) == 0;
}

/* The escapes and the UTF-8 check of s[i..end): where a run ends, its
 * bytes and the escape go out (*run: where the current run began). */
static lil_status write_bytes(struct writer *w, const char *s, size_t len, size_t i,
                              size_t end, size_t *run, bool *checked)
{
    lil_status rc = LIL_OK;

    for (; rc == LIL_OK && i < end; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[6];

        if (plain_ascii(c))
            continue;
        if (c >= 0x80) {
            if (!*checked && lil__utf8_invalid_at(s + i, len - i) != len - i)
                return LIL_E_INVAL;
            *checked = true;
            continue;
        }
        rc = put(w, s + *run, i - *run);
        if (rc == LIL_OK)
            rc = put(w, esc, escape_of(c, esc));
        *run = i + 1;
    }
    return rc;
}

/* One pass: runs of bytes copied as they are (eight at a time where they
 * can be), escapes where needed, and the rest checked as UTF-8 once, at
 * the first byte past ASCII. */
static lil_status write_string(struct writer *w, const char *s, size_t len)
{
    size_t run = 0, i = 0;
    bool checked = false;
    lil_status rc = lil__buf_reserve(w->out, len + 2);

    if (rc == LIL_OK)
        rc = put_char(w, '"');
    while (rc == LIL_OK && i < len) {
        size_t end = len - i < 8 ? len : i + 8;

        if (end - i == 8 && plain_word(s + i))
            i = end;
        else
            rc = write_bytes(w, s, len, i, end, &run, &checked), i = end;
    }
    if (rc == LIL_OK)
        rc = put(w, s + run, len - run);
    return rc == LIL_OK ? put_char(w, '"') : rc;
}

static lil_status write_array(struct writer *w, const json_t *v, int depth)
{
    size_t n = json_array_size(v);
    lil_status rc = put_char(w, '[');

    for (size_t i = 0; rc == LIL_OK && i < n; i++) {
        if (i)
            rc = put_char(w, ',');
        if (rc == LIL_OK)
            rc = write_value(w, json_array_get(v, i), depth + 1);
    }
    return rc == LIL_OK ? put_char(w, ']') : rc;
}

static lil_status write_member(struct writer *w, const char *key, size_t len,
                               const json_t *value, bool first, int depth)
{
    lil_status rc = first ? LIL_OK : put_char(w, ',');

    if (rc == LIL_OK)
        rc = write_string(w, key, len);
    if (rc == LIL_OK)
        rc = put_char(w, ':');
    return rc == LIL_OK ? write_value(w, value, depth + 1) : rc;
}

static int compare_keys(const void *a, const void *b)
{
    const struct key *k1 = a, *k2 = b;
    int res = memcmp(k1->s, k2->s, k1->len < k2->len ? k1->len : k2->len);

    if (res)
        return res;
    return k1->len < k2->len ? -1 : k1->len > k2->len;
}

static lil_status write_sorted(struct writer *w, const json_t *v, int depth)
{
    struct key stack[LIL_JSON_WRITE_KEYS], *keys = stack;
    size_t n = json_object_size(v), i = 0;
    lil_status rc = LIL_OK;

    if (n > LIL_JSON_WRITE_KEYS) {
        keys = lil__malloc(w->env, n * sizeof(*keys));
        if (!keys)
            return LIL_E_NOMEM;
    }
    json_t *obj = mutable_of(v);

    for (void *it = json_object_iter(obj); it && i < n;
         it = json_object_iter_next(obj, it), i++) {
        keys[i].s = json_object_iter_key(it);
        keys[i].len = json_object_iter_key_len(it);
    }
    qsort(keys, i, sizeof(*keys), compare_keys);
    for (size_t k = 0; rc == LIL_OK && k < i; k++)
        rc = write_member(w, keys[k].s, keys[k].len,
                          json_object_getn(v, keys[k].s, keys[k].len), k == 0, depth);
    if (keys != stack)
        lil__free(w->env, keys);
    return rc;
}

static lil_status write_object(struct writer *w, const json_t *v, int depth)
{
    json_t *obj = mutable_of(v);
    lil_status rc = put_char(w, '{');

    if (rc == LIL_OK && (w->flags & JSON_SORT_KEYS)) {
        rc = write_sorted(w, v, depth);
    } else {
        void *first = json_object_iter(obj);

        for (void *it = first; rc == LIL_OK && it; it = json_object_iter_next(obj, it))
            rc = write_member(w, json_object_iter_key(it), json_object_iter_key_len(it),
                              json_object_iter_value(it), it == first, depth);
    }
    return rc == LIL_OK ? put_char(w, '}') : rc;
}

static lil_status deeper(struct writer *w)
{
    w->too_deep = true;
    return LIL_E_INVAL;
}

static lil_status write_value(struct writer *w, const json_t *v, int depth)
{
    if (!v)
        return LIL_E_INVAL;
    switch (json_typeof(v)) {
    case JSON_NULL:
        return put(w, "null", 4);
    case JSON_TRUE:
        return put(w, "true", 4);
    case JSON_FALSE:
        return put(w, "false", 5);
    case JSON_INTEGER:
        return write_integer(w, json_integer_value(v));
    case JSON_REAL:
        return write_real(w, json_real_value(v));
    case JSON_STRING:
        return write_string(w, json_string_value(v), json_string_length(v));
    case JSON_ARRAY:
        return depth >= LIL_JSON_WRITE_DEPTH ? deeper(w) : write_array(w, v, depth);
    case JSON_OBJECT:
        return depth >= LIL_JSON_WRITE_DEPTH ? deeper(w) : write_object(w, v, depth);
    }
    return LIL_E_INVAL;
}

lil_status lil__json_write(const struct lil_env *env, const json_t *v, size_t flags,
                           struct lil_buf *out, bool *too_deep)
{
    struct writer w = {env, out, flags, false};
    size_t mark = out->len;
    lil_status rc = LIL_E_INVAL;

    if (v && ((flags & JSON_ENCODE_ANY) || json_is_object(v) || json_is_array(v)))
        rc = write_value(&w, v, 0);
    *too_deep = w.too_deep;
    if (rc != LIL_OK)
        out->len = mark;
    if (out->data)
        out->data[out->len] = '\0';
    return rc;
}
