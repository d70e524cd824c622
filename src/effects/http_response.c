/*
 * http_response.c -- the result of an http effect from a response: the
 * body as text (the WHATWG UTF-8 decoder), JSON as JSON.parse reads it,
 * and the two shapes of its result (effect_http.h has the rules).
 */
#include <stdint.h>
#include <string.h>

#include "base/utf8.h"
#include "effects/effect_http.h"
#include "effects/http_int.h"
#include "effects/text.h"

/* ------------------------------------------------------------------------ */
/* Text                                                                     */

static bool has_bom(const unsigned char *s, size_t len)
{
    return len >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF;
}

/* TextDecoder: the decoding of effects/text.h, without a leading BOM. */
lil_status lil__http_decode_text(struct lil_buf *out, const unsigned char *s,
                                 size_t len)
{
    size_t skip = has_bom(s, len) ? 3 : 0;

    if (len == 0)
        return LIL_OK; /* s may be NULL */
    return lil__text_from_utf8(out, s + skip, len - skip);
}

lil_status lil__http_latin1(struct lil_buf *out, const unsigned char *s, size_t len)
{
    lil_status rc = lil__buf_reserve(out, len * 2);

    for (size_t i = 0; i < len && rc == LIL_OK; i++) {
        unsigned char two[2] = {(unsigned char)(0xC0 | (s[i] >> 6)),
                                (unsigned char)(0x80 | (s[i] & 0x3F))};

        rc = s[i] < 0x80 ? lil__buf_add(out, s + i, 1) : lil__buf_add(out, two, 2);
    }
    return rc;
}

/* ------------------------------------------------------------------------ */
/* JSON as JSON.parse reads it                                              */

/* An integral real within 2^53 (JavaScript makes no difference between 1.0
 * and 1) as an integer: a new value, or NULL when v stays as it is. */
static json_t *as_integer(const json_t *v)
{
    double d;

    if (!json_is_real(v))
        return NULL;
    d = json_real_value(v);
    if (d < -9007199254740992.0 || d > 9007199254740992.0 || d != (double)(json_int_t)d)
        return NULL;
    return json_integer((json_int_t)d);
}

/* Replace integral reals inside v (in a json scope: a failed allocation
 * is the scope's to report). */
static void integers_inside(json_t *v, int depth)
{
    json_t *n;

    if (depth > LIL_HTTP_MAX_DEPTH) /* cannot happen: jansson parses 2048 */
        return;
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            if ((n = as_integer(json_array_get(v, i))) != NULL)
                json_array_set_new(v, i, n);
            else
                integers_inside(json_array_get(v, i), depth + 1);
    } else if (json_is_object(v)) {
        for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it))
            if ((n = as_integer(json_object_iter_value(it))) != NULL)
                json_object_iter_set_new(v, it, n);
            else
                integers_inside(json_object_iter_value(it), depth + 1);
    }
}

static lil_status integers(const struct lil_env *env, json_t **v)
{
    struct lil_json_scope sc;
    json_t *n;

    lil__json_begin(&sc, env);
    n = as_integer(*v);
    if (n) {
        json_decref(*v);
        *v = n;
    } else {
        integers_inside(*v, 0);
    }
    return lil__json_end(&sc);
}

/* The JSON value of text, or NULL in *out when it is not JSON. */
static lil_status parse(const struct lil_env *env, struct lil_err *err,
                        const char *text, size_t len, json_t **out)
{
    const size_t flags = JSON_DECODE_ANY | JSON_ALLOW_NUL;
    struct lil_err scratch; /* "invalid JSON" is no error here */
    json_error_t je;
    lil_status rc;

    rc = lil__json_parse(env, &scratch, LIL_E_INVAL, text, len, flags, &je, out);
    if (rc == LIL_E_INVAL && json_error_code(&je) == json_error_numeric_overflow)
        rc = lil__json_parse(env, &scratch, LIL_E_INVAL, text, len,
                             flags | JSON_DECODE_INT_AS_REAL, &je, out);
    if (rc == LIL_E_INVAL)
        return LIL_OK; /* *out is NULL */
    if (rc == LIL_OK)
        rc = integers(env, out);
    if (rc == LIL_OK)
        return LIL_OK;
    json_decref(*out);
    *out = NULL;
    return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory reading an http response");
}

/* ------------------------------------------------------------------------ */
/* The result                                                               */

/* {status, raw} or {status, ok, headers, body}; in a scope.  Steals body. */
static json_t *shape(long status, json_t *headers, json_t *body, bool envelope)
{
    json_t *r = json_object();

    json_object_set_new(r, "status", json_integer(status));
    if (!envelope) {
        json_object_set_new(r, "raw", body);
        return r;
    }
    json_object_set_new(r, "ok", json_boolean(status >= 200 && status <= 299));
    json_object_set_new(r, "headers", headers ? json_incref(headers) : json_object());
    json_object_set_new(r, "body", body);
    return r;
}

static lil_status build(const struct lil_env *env, struct lil_err *err, long status,
                        const struct lil_buf *text, json_t *parsed, json_t *headers,
                        bool envelope, json_t **out)
{
    struct lil_json_scope sc;
    json_t *body;

    lil__json_begin(&sc, env);
    body = parsed ? json_incref(parsed)
                  : json_stringn((const char *)text->data, text->len);
    *out = shape(status, headers, body, envelope);
    if (lil__json_end(&sc) == LIL_OK && *out)
        return LIL_OK;
    json_decref(*out);
    *out = NULL;
    return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory building an http result");
}

lil_status lil__http_result(const struct lil_env *env, struct lil_err *err, long status,
                            const unsigned char *body, size_t len, json_t *headers,
                            bool envelope, json_t **out)
{
    struct lil_buf text;
    json_t *parsed = NULL;
    lil_status rc;

    *out = NULL;
    lil__buf_init(&text, env, SIZE_MAX / 4);
    rc = lil__buf_reserve(&text, 0); /* text.data is never NULL below */
    if (rc == LIL_OK)
        rc = lil__http_decode_text(&text, body, len);
    if (rc != LIL_OK) {
        lil__buf_free(&text);
        return lil__seterr(err, LIL_E_NOMEM, 0,
                           "out of memory reading an http response");
    }
    rc = parse(env, err, (const char *)text.data, text.len, &parsed);
    if (rc == LIL_OK && parsed && !envelope) {
        *out = parsed; /* default mode: the parsed value itself */
        parsed = NULL;
    } else if (rc == LIL_OK) {
        rc = build(env, err, status, &text, parsed, headers, envelope, out);
    }
    json_decref(parsed);
    lil__buf_free(&text);
    return rc;
}
