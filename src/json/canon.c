/*
 * canon.c -- canonical JSON: the bytes lil stores for a JSON step result
 * (lil_call_set_json, lil_call_set_jsonf) and writes as the payload of a
 * RESOLVE record.  Equal values give equal bytes, so results and records
 * can be compared and hashed as bytes.  The rules (jansson 2.14 with
 * LIL_JSON_CANON_PARSE and LIL_JSON_CANON_DUMP):
 *
 *   - any value may be at the top (a string, a number, ...), not only an
 *     object or an array;
 *   - a duplicate key in an object is an error, never "the last one wins";
 *   - no whitespace at all: {"a":[1,2],"b":null};
 *   - object keys in ascending byte order (strcmp) at every level; arrays
 *     keep their order;
 *   - strings are UTF-8 as given (invalid UTF-8 is refused), with only
 *     \" \\ \b \f \n \r \t and \u00XX for the other characters below
 *     U+0020 escaped: '/', U+007F and every non-ASCII character stay as
 *     they are;
 *   - integers in decimal (64-bit; a larger one is refused when parsing);
 *     reals as jansson prints them: "%.17g", ".0" added when that would
 *     read as an integer, the exponent without '+' or leading zeros: 0.1
 *     is 0.10000000000000001, 1E+2 is 100.0, 1e300 is
 *     1.0000000000000001e300, -0.0 stays -0.0 (a real stays a real: 1.0
 *     and 1 are different values).
 *
 * A change to any rule changes the stored bytes of new records: records
 * already in journals are replayed as written, never printed again, so it
 * would not break a journal, but it would break comparing old and new bytes.
 */
#include "json/json.h"

lil_status lil__json_canon(const struct lil_env *env, struct lil_err *err,
                           const json_t *v, struct lil_buf *out)
{
    return lil__json_dump(env, err, v, LIL_JSON_CANON_DUMP, out);
}

lil_status lil__json_canon_text(const struct lil_env *env, struct lil_err *err,
                                const char *text, size_t len, struct lil_buf *out)
{
    json_t *v = NULL;
    lil_status rc;

    rc = lil__json_parse(env, err, LIL_E_INVAL, text, len, LIL_JSON_CANON_PARSE, NULL,
                         &v);
    if (rc == LIL_OK)
        rc = lil__json_canon(env, err, v, out);
    json_decref(v);
    return rc;
}

lil_status lil__json_canon_vpack(const struct lil_env *env, struct lil_err *err,
                                 struct lil_buf *out, const char *fmt, va_list ap)
{
    json_t *v = NULL;
    lil_status rc;

    rc = lil__json_vpack(env, err, fmt, ap, &v);
    if (rc == LIL_OK)
        rc = lil__json_canon(env, err, v, out);
    json_decref(v);
    return rc;
}

lil_status lil__json_canon_pack(const struct lil_env *env, struct lil_err *err,
                                struct lil_buf *out, const char *fmt, ...)
{
    va_list ap;
    lil_status rc;

    va_start(ap, fmt);
    rc = lil__json_canon_vpack(env, err, out, fmt, ap);
    va_end(ap);
    return rc;
}
