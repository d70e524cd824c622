/*
 * serve_query.c -- query strings and form bodies of `lil serve` (serve.h):
 * "a=1&b=x%20y" (application/x-www-form-urlencoded) decoded into at most
 * SERVE_QUERY_MAX keys and values, and a value read as a bounded integer.
 *
 * Pieces are split at '&' (empty ones skipped), a key from its value at
 * the first '='; '+' is a space and %XX a byte, in keys and values.  A
 * parse fails whole, with the reason: too many parameters, a key or value
 * longer than SERVE_VALUE_MAX bytes, a bad escape, a NUL, an empty key, a
 * key given twice, bytes that are not UTF-8.  The same parser reads the
 * query of every request and the body of POST /login.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "serve.h"

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool valid_utf8(const char *s, size_t len)
{
    uint32_t cp;

    for (size_t i = 0; i < len;) {
        size_t k = cli_utf8_decode((const unsigned char *)s + i, len - i, &cp);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}

/* Decode len bytes at raw into a new string: NULL with the reason in err. */
static char *decode(const char *raw, size_t len, char *err, size_t err_len)
{
    unsigned char *out = malloc(len + 1);
    size_t n = 0;

    if (!out) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < len; i++) {
        int hi, lo;
        if (raw[i] != '%') {
            out[n++] = (unsigned char)(raw[i] == '+' ? ' ' : raw[i]);
            continue;
        }
        hi = i + 2 < len ? hex_digit(raw[i + 1]) : -1;
        lo = i + 2 < len ? hex_digit(raw[i + 2]) : -1;
        if (hi < 0 || lo < 0) {
            snprintf(err, err_len, "a bad escape (%% then two hex digits)");
            free(out);
            return NULL;
        }
        out[n++] = (unsigned char)(hi << 4 | lo);
        i += 2;
    }
    out[n] = '\0';
    if (memchr(out, '\0', n) || !valid_utf8((const char *)out, n)) {
        snprintf(err, err_len, "%s", memchr(out, '\0', n) ? "a NUL byte" : "not UTF-8");
        free(out);
        return NULL;
    }
    return (char *)out;
}

/* Add the piece "key=value" (len bytes) to q: 0, or -1 with err. */
static int add_piece(const char *piece, size_t len, struct serve_query *q, char *err,
                     size_t err_len)
{
    const char *eq = memchr(piece, '=', len);
    size_t klen = eq ? (size_t)(eq - piece) : len;
    size_t vlen = eq ? len - klen - 1 : 0;
    char *key, *value;

    if (q->n >= SERVE_QUERY_MAX) {
        snprintf(err, err_len, "more than %d parameters", SERVE_QUERY_MAX);
        return -1;
    }
    if (klen == 0 || klen > SERVE_VALUE_MAX || vlen > SERVE_VALUE_MAX) {
        snprintf(err, err_len, "%s",
                 klen == 0 ? "a parameter without a name"
                           : "a parameter longer than 4096 bytes");
        return -1;
    }
    key = decode(piece, klen, err, err_len);
    value = key ? decode(eq ? eq + 1 : "", vlen, err, err_len) : NULL;
    if (value && serve_query_get(q, key)) {
        snprintf(err, err_len, "'%.64s' given twice", key);
        free(value);
        value = NULL;
    }
    if (!value) {
        free(key);
        return -1;
    }
    q->kv[q->n].key = key;
    q->kv[q->n].value = value;
    q->n++;
    return 0;
}

int serve_query_parse(const char *raw, size_t len, struct serve_query *q, char *err,
                      size_t err_len)
{
    size_t i = 0;

    q->n = 0;
    while (i < len) {
        const char *amp = memchr(raw + i, '&', len - i);
        size_t n = amp ? (size_t)(amp - (raw + i)) : len - i;

        /* n is 0 between two '&' */
        // cppcheck-suppress knownConditionTrueFalse
        if (n > 0 && add_piece(raw + i, n, q, err, err_len) != 0) {
            serve_query_free(q);
            return -1;
        }
        i += n + 1;
    }
    return 0;
}

void serve_query_free(struct serve_query *q)
{
    for (size_t i = 0; i < q->n; i++) {
        free(q->kv[i].key);
        free(q->kv[i].value);
    }
    q->n = 0;
}

const char *serve_query_get(const struct serve_query *q, const char *key)
{
    for (size_t i = 0; i < q->n; i++)
        if (strcmp(q->kv[i].key, key) == 0)
            return q->kv[i].value;
    return NULL;
}

int serve_query_int(const struct serve_query *q, const char *key, int64_t min,
                    int64_t max, int64_t dflt, int64_t *out, char *err, size_t err_len)
{
    const char *v = serve_query_get(q, key);
    char *end;
    long long n;

    *out = dflt;
    if (!v)
        return 0;
    errno = 0;
    n = strtoll(v, &end, 10);
    if (!((*v >= '0' && *v <= '9') || (*v == '-' && v[1] >= '0' && v[1] <= '9')) ||
        *end || errno == ERANGE || n < min || n > max) {
        snprintf(err, err_len, "%s: an integer from %lld to %lld", key, (long long)min,
                 (long long)max);
        return -1;
    }
    *out = n;
    return 0;
}
