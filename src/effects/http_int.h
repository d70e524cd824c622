/*
 * http_int.h -- what the files of the http effect share and nothing else
 * uses (effect_http.h is the module's interface and has the rules):
 * URLs (http_request.c), the request body (http_request.c), the result
 * (http_response.c).
 */
#ifndef LIL_LOOP_HTTP_INT_H
#define LIL_LOOP_HTTP_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "json/json.h"

struct lil_env;

/* How deep a request body may nest (JSON.stringify), and the depth the
 * number walk of a parsed response stops at (jansson parses at most 2048). */
#define LIL_HTTP_MAX_DEPTH 2048

/* ---- URLs (http_request.c) ----------------------------------------------- */

/* Where the parts of a URL are, as offsets into it (WHATWG's special
 * schemes: "scheme://[userinfo@]host[:port][/path][?query][#fragment]").
 * A URL without "scheme://" has no authority: all of it up to '?' or '#'
 * is its path. */
struct lil_http_url {
    size_t len;
    size_t scheme_len; /* bytes of the scheme, 0 when there is none */
    size_t auth;       /* start of the authority (after "://") */
    size_t at;         /* the '@' ending the userinfo, or SIZE_MAX */
    size_t host;       /* start of host[:port]: after the '@', or auth */
    size_t path;       /* end of the authority: start of the path, query, ... */
    size_t query;      /* the '?', or SIZE_MAX */
    size_t fragment;   /* the '#', or SIZE_MAX */
};

/* Narrow [*start, *end) of url to drop the blanks and control characters
 * around it (the WHATWG URL parser does). */
void lil__http_url_trim(const char *url, size_t *start, size_t *end);

/* Split url (len bytes). */
void lil__http_url_split(const char *url, size_t len, struct lil_http_url *u);

/* Is url an http: or https: URL (scheme case-insensitive) with a host? */
bool lil__http_url_is_http(const char *url, const struct lil_http_url *u);

/* Do a and b (absolute http(s) URLs) have the same origin: scheme, host
 * (ASCII case-insensitive) and port (the scheme's default when absent)? */
bool lil__http_same_origin(const char *a, const char *b);

/* Append url as fetch sends it (effect_http.h) to out. */
lil_status lil__http_url_prepare(struct lil_buf *out, const char *url);

/* ---- the request body (http_request.c) ------------------------------------- */

/* Append JSON.stringify(v) to out: compact; object keys that are array
 * indices ("0".."4294967294") first in ascending order, then the others in
 * their order (JavaScript's property order); numbers as Number::toString
 * prints them (integers beyond 2^53 rounded to a double, as JavaScript
 * holds them); strings with JSON.stringify's escapes.  LIL_E_TOOBIG deeper
 * than LIL_HTTP_MAX_DEPTH or past out's cap; LIL_E_NOMEM. */
lil_status lil__http_stringify(const struct lil_env *env, struct lil_err *err,
                               json_t *v, struct lil_buf *out);

/* ---- the response (http_response.c) ---------------------------------------- */

/* Append the UTF-8 text of len bytes to out: a leading BOM dropped, each
 * maximal invalid sequence as U+FFFD (the WHATWG decoder). */
lil_status lil__http_decode_text(struct lil_buf *out, const unsigned char *s,
                                 size_t len);

/* Append len bytes read as Latin-1 (each byte a code point) to out, as
 * UTF-8. */
lil_status lil__http_latin1(struct lil_buf *out, const unsigned char *s, size_t len);

/* The result of a response (effect_http.h): status, body bytes, headers
 * (an object, borrowed; used only with envelope).  A new reference in
 * *out; LIL_E_NOMEM. */
lil_status lil__http_result(const struct lil_env *env, struct lil_err *err, long status,
                            const unsigned char *body, size_t len, json_t *headers,
                            bool envelope, json_t **out);

#endif
