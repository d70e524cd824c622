/*
 * value.c -- JavaScript values for the expression language (value.h):
 * truthiness, Number(), String(), ===, the mapping to and from JSON, and
 * the two number conversions JavaScript defines by the letter:
 *
 *   Number::toString  shortest digits that read back as the same double
 *                     (printf "%.*e" for 15..17 digits, plus the neighbour
 *                     on the other side of x when the nearest candidate
 *                     does not round-trip), laid out as ECMA-262 says:
 *                     plain up to 1e21, "0.000001" down to 1e-6, else
 *                     "1e+21" / "1.5e-7".
 *   StringToNumber    JS whitespace trimmed, "" -> 0, decimal with
 *                     optional sign, fraction and exponent, "Infinity",
 *                     0x / 0o / 0b integers; anything else NaN.  The digits
 *                     are validated here and the rounding is left to
 *                     strtod (decimal: at most 800 significant digits plus
 *                     a sticky digit, which rounds exactly like the full
 *                     string; radix 2/8/16: as a hex integer).
 *
 * Strings are UTF-8; where JavaScript counts or compares UTF-16 code units
 * (.length, <) the helpers here convert on the fly.  String() of nested
 * arrays stops descending at VAL_MAX_DEPTH levels (deeper parts print as
 * empty), so no input can exhaust the stack.
 */
#include "lang/value.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/expr_ast.h"

#define VAL_MAX_DEPTH  200
#define DEC_MAX_DIGITS 800
#define JS_NAN         ((double)NAN)
#define JS_INF         ((double)INFINITY)

/* ------------------------------------------------------------------------ */
/* JavaScript whitespace                                                  */

static bool js_space_cp(uint32_t c)
{
    if (c < 0x80)
        return c == ' ' || (c >= 0x09 && c <= 0x0D);
    return c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
           c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000 || c == 0xFEFF;
}

size_t lil__js_space_len(const char *s, size_t len)
{
    uint32_t cp;
    size_t n = lil__utf8_decode((const unsigned char *)s, len, &cp);

    return n && js_space_cp(cp) ? n : 0;
}

/* Bytes of the JS whitespace character at s[i], or 0. */
static size_t space_at(const char *s, size_t i, size_t end)
{
    return lil__js_space_len(s + i, end - i);
}

/* Bytes of the JS whitespace character ending at s[end-1], or 0. */
static size_t space_before(const char *s, size_t start, size_t end)
{
    size_t i = end - 1;

    while (i > start && end - i < 4 && ((unsigned char)s[i] & 0xC0) == 0x80)
        i--;
    return space_at(s, i, end) == end - i ? end - i : 0;
}

void lil__js_trim(const char *s, size_t *start, size_t *end)
{
    size_t n;

    while (*start < *end && (n = space_at(s, *start, *end)) != 0)
        *start += n;
    while (*end > *start && (n = space_before(s, *start, *end)) != 0)
        *end -= n;
}

/* UTF-16 code unit order: the first unit of a code point decides. */
static uint32_t first_unit(uint32_t cp)
{
    return cp < 0x10000 ? cp : 0xD800 + ((cp - 0x10000) >> 10);
}

int lil__utf16_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen, i = 0;
    uint32_t ca, cb;
    size_t la, lb;

    while (i < n && a[i] == b[i])
        i++;
    if (i == n)
        return alen < blen ? -1 : alen > blen;
    while (i > 0 && ((unsigned char)a[i] & 0xC0) == 0x80)
        i--; /* back to the start of the character (bytes before i agree) */
    la = lil__utf8_decode((const unsigned char *)a + i, alen - i, &ca);
    lb = lil__utf8_decode((const unsigned char *)b + i, blen - i, &cb);
    if (!la || !lb) /* invalid UTF-8: plain byte order */
        return (unsigned char)a[i] < (unsigned char)b[i] ? -1 : 1;
    if (first_unit(ca) != first_unit(cb))
        return first_unit(ca) < first_unit(cb) ? -1 : 1;
    return ca < cb ? -1 : 1;
}

size_t lil__utf16_len(const char *s, size_t len)
{
    size_t n = 0;

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        n += (c & 0xC0) != 0x80; /* one unit per character ... */
        n += c >= 0xF0;          /* ... two for those beyond U+FFFF */
    }
    return n;
}

lil_status lil__buf_add_aliased(struct lil_buf *b, const char *s, size_t len)
{
    uintptr_t p = (uintptr_t)s, d = (uintptr_t)b->data;

    if (b->data && p >= d && p < d + b->alloc) {
        size_t off = (size_t)(p - d);
        lil_status rc = lil__buf_reserve(b, len);
        if (rc != LIL_OK)
            return rc;
        s = (const char *)b->data + off;
    }
    return lil__buf_add(b, s, len);
}

/* ------------------------------------------------------------------------ */
/* Number::toString                                                          */

/* Does the decimal dig[0..k) x 10^e10 read back as x? */
static bool reads_back(const char *dig, size_t k, int e10, double x)
{
    char buf[48];

    snprintf(buf, sizeof(buf), "%.*se%d", (int)k, dig, e10);
    return strtod(buf, NULL) == x;
}

/* Parse printf's "d.ddde+XX" (any decimal point) into digits and the
 * exponent of the first digit; returns the digit count. */
static size_t split_e(const char *buf, char dig[24], int *e)
{
    size_t k = 0;
    const char *p = buf;

    for (; *p && *p != 'e'; p++) {
        if (*p >= '0' && *p <= '9' && k < 23)
            dig[k++] = *p;
    }
    *e = *p ? atoi(p + 1) : 0;
    dig[k] = '\0';
    return k;
}

/* Step the last of k digits by dir (+1/-1); false if that changes the
 * number of digits (such a value has fewer digits and was tried before). */
static bool step_digits(char *dig, size_t k, int dir)
{
    size_t i = k;

    while (i-- > 0) {
        if (dir > 0 && dig[i] < '9') {
            dig[i]++;
            return true;
        }
        if (dir < 0 && dig[i] > '0') {
            dig[i]--;
            return dig[0] != '0';
        }
        dig[i] = dir > 0 ? '0' : '9';
    }
    return false;
}

/* Shortest digits of x > 0 (finite); *e is the exponent of the first
 * digit.  Returns the digit count.  For normal doubles only 15, 16 and 17
 * digits need trying: the rounding interval of x is within 2^-53 of x
 * relative, less than half a step of the 15-digit grid, so any candidate of
 * 15 digits or fewer that reads back is the correctly rounded 15-digit one
 * with trailing zeros.  Subnormals have fewer bits: all lengths are tried. */
static size_t shortest(double x, char dig[24], int *e)
{
    char buf[48], alt[24];
    size_t k = 0;

    for (int p = x < 2.2250738585072014e-308 ? 1 : 15; p <= 17; p++) {
        snprintf(buf, sizeof(buf), "%.*e", p - 1, x);
        k = split_e(buf, dig, e);
        if (reads_back(dig, k, *e - (int)k + 1, x))
            break;
        memcpy(alt, dig, k + 1);
        if (step_digits(alt, k, strtod(buf, NULL) < x ? 1 : -1) &&
            reads_back(alt, k, *e - (int)k + 1, x)) {
            memcpy(dig, alt, k + 1);
            break;
        }
    }
    while (k > 1 && dig[k - 1] == '0')
        k--;
    return k;
}

static size_t put_zeros(char *out, size_t n)
{
    memset(out, '0', n);
    return n;
}

/* d.ddde+X / d.ddde-X: the exponent form, ex the exponent of the first
 * digit. */
static size_t exp_form(const char *dig, size_t k, int ex, char *out)
{
    size_t o = 0;
    unsigned mag = ex < 0 ? (unsigned)-ex : (unsigned)ex;

    out[o++] = dig[0];
    if (k > 1) {
        out[o++] = '.';
        memcpy(out + o, dig + 1, k - 1);
        o += k - 1;
    }
    out[o++] = 'e';
    out[o++] = ex < 0 ? '-' : '+';
    return o + (size_t)snprintf(out + o, 8, "%u", mag);
}

/* ECMA-262 Number::toString layout of dig[0..k) with decimal exponent n
 * (value = 0.dig x 10^n). */
static size_t layout(const char *dig, size_t k, int n, char *out)
{
    size_t o;

    if ((int)k <= n && n <= 21) {
        memcpy(out, dig, k);
        o = k + put_zeros(out + k, (size_t)n - k);
    } else if (n > 0 && n <= 21) {
        memcpy(out, dig, (size_t)n);
        out[n] = '.';
        memcpy(out + n + 1, dig + n, k - (size_t)n);
        o = k + 1;
    } else if (n > -6 && n <= 0) {
        out[0] = '0', out[1] = '.';
        o = 2 + put_zeros(out + 2, (size_t)-n);
        memcpy(out + o, dig, k);
        o += k;
    } else {
        o = exp_form(dig, k, n - 1, out);
    }
    out[o] = '\0';
    return o;
}

size_t lil__num_format(double x, char out[32])
{
    char dig[24];
    size_t o = 0, k;
    int e;

    if (isnan(x))
        return (size_t)snprintf(out, 32, "NaN");
    if (x == 0)
        return (size_t)snprintf(out, 32, "0");
    if (x < 0) {
        out[o++] = '-';
        x = -x;
    }
    if (isinf(x))
        return o + (size_t)snprintf(out + o, 32 - o, "Infinity");
    if (x <= 9007199254740992.0 && x == (double)(long long)x)
        return o + (size_t)snprintf(out + o, 32 - o, "%llu", (unsigned long long)x);
    k = shortest(x, dig, &e);
    return o + layout(dig, k, e + 1, out + o);
}

/* ------------------------------------------------------------------------ */
/* StringToNumber                                                            */

struct dec {
    char dig[DEC_MAX_DIGITS + 2];
    size_t nd;
    long e10;    /* value = dig x 10^e10 */
    bool sticky; /* a non-zero digit was dropped */
};

static void dec_digit(struct dec *d, char c, bool frac)
{
    if (d->nd == 0 && c == '0') {
        d->e10 -= frac; /* leading zero */
    } else if (d->nd < DEC_MAX_DIGITS) {
        d->dig[d->nd++] = c;
        d->e10 -= frac;
    } else {
        d->e10 += !frac;
        d->sticky |= c != '0';
    }
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* [eE][+-]?digits at s[*i]; false on a malformed exponent. */
static bool dec_exponent(const char *s, size_t len, size_t *i, long *exp)
{
    bool neg = false;
    size_t start;

    if (*i >= len || (s[*i] | 0x20) != 'e')
        return true;
    (*i)++;
    if (*i < len && (s[*i] == '+' || s[*i] == '-'))
        neg = s[(*i)++] == '-';
    start = *i;
    for (; *i < len && is_digit(s[*i]); (*i)++) {
        if (*exp < 10000000)
            *exp = *exp * 10 + (s[*i] - '0');
    }
    if (neg)
        *exp = -*exp;
    return *i > start;
}

static double dec_value(struct dec *d, bool neg, long exp)
{
    char buf[DEC_MAX_DIGITS + 40];
    double v;

    if (d->nd == 0)
        return neg ? -0.0 : 0.0;
    if (d->sticky) {
        d->dig[d->nd++] = '1';
        d->e10--;
    }
    exp += d->e10;
    if (exp > 1000000)
        exp = 1000000;
    if (exp < -1000000)
        exp = -1000000;
    snprintf(buf, sizeof(buf), "%.*se%ld", (int)d->nd, d->dig, exp);
    v = strtod(buf, NULL);
    return neg ? -v : v;
}

static double parse_decimal(const char *s, size_t len)
{
    struct dec d;
    size_t i = 0, ndig = 0;
    bool neg = false;
    long exp = 0;

    if (s[0] == '+' || s[0] == '-')
        neg = s[i++] == '-';
    if (len - i == 8 && memcmp(s + i, "Infinity", 8) == 0)
        return neg ? -JS_INF : JS_INF;
    d.nd = 0, d.e10 = 0, d.sticky = false;
    for (; i < len && is_digit(s[i]); i++, ndig++)
        dec_digit(&d, s[i], false);
    if (i < len && s[i] == '.') {
        for (i++; i < len && is_digit(s[i]); i++, ndig++)
            dec_digit(&d, s[i], true);
    }
    if (ndig == 0 || !dec_exponent(s, len, &i, &exp) || i != len)
        return JS_NAN;
    return dec_value(&d, neg, exp);
}

static int radix_digit(char c, int bits)
{
    int v = is_digit(c)                              ? c - '0'
            : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
                                                     : 99;

    return v < (1 << bits) ? v : -1;
}

/* 0x / 0o / 0b digits (bits per digit 4 / 3 / 1): exact, via a hex
 * integer for strtod. */
static double parse_radix(const char *s, size_t len, int bits)
{
    char hex[300], rev[300];
    size_t n = 0, i;
    unsigned acc = 0, accbits = 0;

    if (len == 0)
        return JS_NAN;
    for (i = 0; i < len; i++) {
        if (radix_digit(s[i], bits) < 0)
            return JS_NAN;
    }
    while (len > 0 && s[0] == '0')
        s++, len--;
    if (len == 0)
        return 0;
    if ((len - 1) * (size_t)bits >= 1024)
        return JS_INF;
    for (i = len; i-- > 0;) {
        acc |= (unsigned)radix_digit(s[i], bits) << accbits;
        for (accbits += (unsigned)bits; accbits >= 4; accbits -= 4, acc >>= 4)
            rev[n++] = "0123456789abcdef"[acc & 15];
    }
    if (accbits)
        rev[n++] = "0123456789abcdef"[acc & 15];
    hex[0] = '0', hex[1] = 'x';
    for (i = 0; i < n; i++)
        hex[2 + i] = rev[n - 1 - i];
    hex[2 + n] = '\0';
    return strtod(hex, NULL);
}

double lil__js_str_to_num(const char *s, size_t len)
{
    size_t start = 0, end = len;

    lil__js_trim(s, &start, &end);
    s += start, len = end - start;
    if (len == 0)
        return 0;
    if (len >= 2 && s[0] == '0') {
        char c = (char)(s[1] | 0x20);
        if (c == 'x' || c == 'o' || c == 'b')
            return parse_radix(s + 2, len - 2, c == 'x' ? 4 : c == 'o' ? 3 : 1);
    }
    return parse_decimal(s, len);
}

/* ------------------------------------------------------------------------ */
/* Conversions                                                               */

struct lil_val lil__val_from_json(json_t *j)
{
    struct lil_val v = {LIL_V_UNDEF, false, 0, NULL, 0, NULL};

    switch (j ? json_typeof(j) : JSON_NULL) {
    case JSON_NULL:
        v.t = j ? LIL_V_NULL : LIL_V_UNDEF;
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        v.t = LIL_V_BOOL;
        v.b = json_is_true(j);
        break;
    case JSON_INTEGER:
    case JSON_REAL:
        v.t = LIL_V_NUM;
        v.n = json_number_value(j);
        break;
    case JSON_STRING:
        v.t = LIL_V_STR;
        v.s = json_string_value(j);
        v.len = json_string_length(j);
        break;
    default:
        v.t = LIL_V_JSON;
        v.j = j;
        break;
    }
    return v;
}

/* A JSON string of s, with invalid UTF-8 bytes replaced by U+FFFD (jansson
 * refuses invalid strings). */
static json_t *json_str(const char *s, size_t len)
{
    json_t *j = json_stringn(s, len);
    char *fixed;
    size_t o = 0;
    uint32_t cp;

    if (j || len > SIZE_MAX / 3)
        return j;
    fixed = lil__json_malloc(len * 3 + 1);
    if (!fixed)
        return NULL;
    for (size_t i = 0, n; i < len; i += n) {
        n = lil__utf8_decode((const unsigned char *)s + i, len - i, &cp);
        if (n) {
            memcpy(fixed + o, s + i, n);
            o += n;
        } else {
            memcpy(fixed + o, "\xEF\xBF\xBD", 3);
            o += 3, n = 1;
        }
    }
    j = json_stringn(fixed, o);
    lil__json_free(fixed);
    return j;
}

json_t *lil__val_to_json(const struct lil_val *v, bool *undef)
{
    *undef = false;
    switch (v->t) {
    case LIL_V_UNDEF:
        *undef = true;
        return NULL;
    case LIL_V_NULL:
        return json_null();
    case LIL_V_BOOL:
        return json_boolean(v->b);
    case LIL_V_NUM:
        if (!isfinite(v->n))
            return json_null();
        if ((v->n < 0 ? -v->n : v->n) <= 9007199254740992.0 &&
            v->n == (double)(long long)v->n)
            return json_integer((json_int_t)v->n);
        return json_real(v->n);
    case LIL_V_STR:
        return json_str(v->s, v->len);
    case LIL_V_JSON:
        return json_incref(v->j);
    }
    return NULL;
}

bool lil__val_truthy(const struct lil_val *v)
{
    switch (v->t) {
    case LIL_V_BOOL:
        return v->b;
    case LIL_V_NUM:
        return v->n != 0 && !isnan(v->n);
    case LIL_V_STR:
        return v->len > 0;
    case LIL_V_JSON:
        return true;
    default:
        return false;
    }
}

/* Number(String(elem)) for the single element of an array, without
 * building the string: [] -> "", [x] -> String(x), more -> has a ",". */
static double array_number(json_t *a, int depth)
{
    json_t *x;

    if (json_array_size(a) == 0)
        return 0;
    if (json_array_size(a) > 1 || depth >= VAL_MAX_DEPTH)
        return depth >= VAL_MAX_DEPTH ? 0 : JS_NAN;
    x = json_array_get(a, 0);
    switch (json_typeof(x)) {
    case JSON_NULL:
        return 0;
    case JSON_TRUE:
    case JSON_FALSE:
    case JSON_OBJECT:
        return JS_NAN;
    case JSON_INTEGER:
    case JSON_REAL: {
        double n = json_number_value(x);
        return n == 0 ? 0 : n; /* String(-0) is "0" */
    }
    case JSON_STRING:
        return lil__js_str_to_num(json_string_value(x), json_string_length(x));
    default:
        return array_number(x, depth + 1);
    }
}

double lil__val_number(const struct lil_val *v)
{
    switch (v->t) {
    case LIL_V_NULL:
        return 0;
    case LIL_V_BOOL:
        return v->b ? 1 : 0;
    case LIL_V_NUM:
        return v->n;
    case LIL_V_STR:
        return lil__js_str_to_num(v->s, v->len);
    case LIL_V_JSON:
        return json_is_array(v->j) ? array_number(v->j, 0) : JS_NAN;
    default:
        return JS_NAN;
    }
}

static lil_status json_string_of(json_t *j, struct lil_buf *out, int depth);

static lil_status array_join(json_t *a, struct lil_buf *out, int depth)
{
    lil_status rc = LIL_OK;
    size_t i;
    json_t *x;

    if (depth >= VAL_MAX_DEPTH)
        return LIL_OK;
    json_array_foreach(a, i, x)
    {
        if (i > 0 && (rc = lil__buf_add(out, ",", 1)) != LIL_OK)
            return rc;
        if (!json_is_null(x) && (rc = json_string_of(x, out, depth + 1)) != LIL_OK)
            return rc;
    }
    return rc;
}

static lil_status json_string_of(json_t *j, struct lil_buf *out, int depth)
{
    struct lil_val v;

    if (json_is_array(j))
        return array_join(j, out, depth);
    if (json_is_object(j))
        return lil__buf_addstr(out, "[object Object]");
    v = lil__val_from_json(j);
    return lil__val_string(&v, out);
}

lil_status lil__val_string(const struct lil_val *v, struct lil_buf *out)
{
    char num[32];

    switch (v->t) {
    case LIL_V_UNDEF:
        return lil__buf_add(out, "undefined", 9);
    case LIL_V_NULL:
        return lil__buf_add(out, "null", 4);
    case LIL_V_BOOL:
        return v->b ? lil__buf_add(out, "true", 4) : lil__buf_add(out, "false", 5);
    case LIL_V_NUM:
        return lil__buf_add(out, num, lil__num_format(v->n, num));
    case LIL_V_STR:
        return lil__buf_add_aliased(out, v->s, v->len);
    case LIL_V_JSON:
        return json_string_of(v->j, out, 0);
    }
    return LIL_OK;
}

bool lil__val_strict_eq(const struct lil_val *a, const struct lil_val *b)
{
    if (a->t != b->t)
        return false;
    switch (a->t) {
    case LIL_V_UNDEF:
    case LIL_V_NULL:
        return true;
    case LIL_V_BOOL:
        return a->b == b->b;
    case LIL_V_NUM:
        return a->n == b->n;
    case LIL_V_STR:
        return a->len == b->len && (a->len == 0 || memcmp(a->s, b->s, a->len) == 0);
    case LIL_V_JSON:
        return a->j == b->j;
    }
    return false;
}
