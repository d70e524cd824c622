/*
 * effect_http.h -- the http effect of the loop runner: perform one rendered
 * request and return the LoopSpec result (docs/loopspec.md, "Effects"), the
 * request's identity, and the redaction of what is journaled or printed
 * (docs/loops.md, "What lil does differently from the reference runtime").
 *
 * The request is a JSON object, the runner's rendered request:
 *     {"method": "GET"|"POST"|"PUT"|"PATCH"|"DELETE",
 *      "url": "http(s)://...",
 *      "headers": {"Name": "value", ...},      optional
 *      "body": <any JSON value>,               optional
 *      "envelope": true|false}                 optional
 * Any other field, another method or type is LIL_E_INVAL
 * (lil__http_check).
 *
 * What is sent (Node's fetch, which the reference runtime uses):
 *   - a string body is sent as it is; any other JSON value (null included)
 *     as JSON.stringify prints it (compact, keys in their order, numbers in
 *     JavaScript's shortest form).  A GET request with a body is
 *     LIL_E_INVAL (fetch refuses it too);
 *   - no JSON content type is ever added.  A request with a body and no
 *     Content-Type header gets "Content-Type: text/plain;charset=UTF-8",
 *     the label fetch gives every string body (and JSON.stringify makes
 *     every body a string); POST and PUT without a body send
 *     "Content-Length: 0";
 *   - the caller's headers, with leading and trailing blanks of values
 *     trimmed (as fetch does), except the framing and hop-by-hop ones
 *     (Content-Length, Transfer-Encoding, Connection, Keep-Alive, Upgrade,
 *     Expect, TE, Trailer: the transport's to set); an Accept header for
 *     any media type (what fetch sends) and "User-Agent: lil/<version>"
 *     unless the caller sets them; responses may come gzip, deflate, br or
 *     zstd encoded (whatever libcurl decodes), as fetch accepts;
 *   - the URL as fetch would send it: surrounding blanks and control
 *     characters dropped, tabs and newlines removed, spaces, quotes, angle
 *     brackets, backquotes and bytes over 0x7e of the path, query and
 *     fragment percent-encoded.  A URL with credentials (user:pass@host) is
 *     LIL_E_INVAL, as in fetch: credentials go in a header;
 *   - redirects are followed as fetch follows them, up to max_redirects
 *     (more is an error): 301 and 302 turn a POST into a GET, 303 turns
 *     anything but GET into a GET, both dropping the body and its
 *     Content-* headers; 307 and 308 keep method and body; a redirect to
 *     another origin (scheme, host or port) drops, for the rest of the
 *     transfer, Host and every header lil classes as a credential
 *     (lil__http_secret_name: Authorization, Proxy-Authorization, Cookie,
 *     X-Api-Key, any name holding KEY, TOKEN, SECRET, PASSWORD, AUTH,
 *     SESSION, SIGNATURE ...); a body is never sent across origins: a 307
 *     or 308 of a request with a body to another origin is LIL_E_INVAL (not
 *     retried), the body not sent; a redirect to a scheme other than http
 *     or https is an error;
 *   - libcurl reads the usual proxy variables (http_proxy, https_proxy,
 *     no_proxy), verifies TLS certificates, keeps no cookies and reads no
 *     .netrc; only http and https are ever spoken.
 *
 * Result, a new JSON value:
 *   - the body is read as UTF-8 text (a leading BOM dropped, each maximal
 *     invalid sequence replaced by U+FFFD, as TextDecoder does) and parsed
 *     as JSON when it parses (any JSON value; numbers as JSON.parse sees
 *     them: an integral real within 2^53 becomes an integer, and in a text
 *     with an integer beyond 64 bits every number is a double, as in
 *     JavaScript).  What jansson cannot read, JSON.parse could: nesting
 *     deeper than 2048, a lone surrogate escape; such a body is text;
 *   - default mode: the parsed value, or {"status": <code>, "raw": <text>}
 *     for a body that is not JSON (an empty one included);
 *   - envelope: {"status", "ok" (200..299), "headers", "body" (parsed value
 *     or text)}; headers of the final response with lower-cased names,
 *     repeated ones joined with ", ", bytes read as Latin-1 (as fetch
 *     does);
 *   - an HTTP error status is a result, never an error.
 *
 * Errors (the function's status, a message in err):
 *   - LIL_E_INVAL: a bad request (lil__http_check);
 *   - LIL_E_HTTP: no response: the timeout (which covers the whole
 *     transfer, redirects and body included), a network or TLS error, too
 *     many redirects, a redirect to another scheme.  The message names the
 *     method and the URL, redacted (lil__http_redact_url), and libcurl's
 *     reason.  These are the errors the runner retries;
 *   - LIL_E_TOOBIG: the response body (after decoding), or its headers,
 *     over max_bytes: the transfer stops there, so memory stays bounded;
 *   - LIL_E_NOMEM; LIL_E_IO when libcurl cannot be loaded (curl_dl.h).
 *
 * Identity and secrets.  The identity of an http effect is the canonical
 * JSON (json.h) of {method, url, headers, body, envelope}, the fields the
 * request has.  It is journaled, so it must not hold credentials, yet a
 * changed credential must still change it (a replay against another
 * account is not the same request).  So the identity holds, in place of
 * each secret (below), a keyed digest of the secret's bytes (a header's
 * value, a query parameter's value, the userinfo of a URL):
 * "hmac-sha256:" and the lowercase hex HMAC-SHA-256 under the run's own
 * random digest key (journaled in its start record, never in a cassette),
 * so that a guessable secret (a password) cannot be found by trying
 * candidates against a shared cassette.  A run started before runs had a
 * digest key keeps plain "sha256:" digests (key NULL), so that its
 * journal replays as it was written.  Whoever reads the journal holds the
 * key: a journal is kept private, and guessable secrets are better sent
 * in a form that carries entropy (a token).  The body is part of the
 * identity as it is: secrets do not belong in a body that is journaled.
 *
 * Secrets (lil__http_secret_name), by name, ASCII case-insensitive:
 * Authorization, Proxy-Authorization, Cookie, Set-Cookie, X-Api-Key, any
 * name a secret environment variable could have (effects/redact.h: containing
 * "key", "token", "secret", "password", "passwd" or "credential"), and any
 * containing "auth", "cookie", "session" or "signature"; query
 * parameters also named "sig", "pwd" or "pass".  What is journaled of a
 * request is its identity (secret values as SHA-256, above); a URL that is
 * printed (lil__http_redact_url) has "[redacted]" in their place, and
 * "https://[redacted]@host" for its userinfo.
 *
 * Memory: the request and other values passed in are borrowed and never
 * changed (they are not const only because jansson's iterators are not);
 * values are built under the env's allocator inside json scopes;
 * libcurl's own allocations (its handle, the headers it keeps) go through
 * libcurl's allocator and are bounded by max_bytes.  Nothing is kept
 * between calls.  Thread rules: any number of calls at once, from any
 * threads (each call has its own libcurl handle).
 */
#ifndef LIL_LOOP_EFFECT_HTTP_H
#define LIL_LOOP_EFFECT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "json/json.h"

struct lil_env;

#define LIL_HTTP_TIMEOUT_MS    300000      /* effectTimeoutMs (docs/loopspec.md) */
#define LIL_HTTP_MAX_BYTES     (16u << 20) /* 16 MiB */
#define LIL_HTTP_MAX_REDIRECTS 20          /* fetch's limit */

struct lil_http_opts {
    int64_t timeout_ms; /* the whole transfer, redirects included; > 0 */
    size_t max_bytes;   /* most bytes of a response body, and of its headers; > 0 */
    int max_redirects;  /* redirects followed; one more is an error; >= 0 */
};

/* The defaults above. */
void lil__http_opts_init(struct lil_http_opts *o);

/* LIL_OK if req is a request this module performs, else LIL_E_INVAL with
 * the reason in err ("http request: ...").  Touches no network: the
 * runner may call it before it journals the effect. */
lil_status lil__http_check(struct lil_err *err, json_t *req);

/* Perform req (borrowed) with opts (NULL: the defaults) and, on LIL_OK,
 * store the result (a new reference) in *out.  Errors: above. */
lil_status lil__http_perform(const struct lil_env *env, struct lil_err *err,
                             json_t *req, const struct lil_http_opts *opts,
                             json_t **out);

/* Append the identity of req (the canonical JSON bytes above, secrets as
 * their keyed digests under key, key_len bytes, at most 64; key NULL: plain
 * SHA-256) to out.  Errors: LIL_E_INVAL (lil__http_check), LIL_E_NOMEM,
 * LIL_E_TOOBIG past out's cap. */
lil_status lil__http_identity(const struct lil_env *env, struct lil_err *err,
                              json_t *req, const uint8_t *key, size_t key_len,
                              struct lil_buf *out);

/* The same identity for a request that is never sent (a dry run's, whose
 * mock answers it): none of lil__http_check's rules but the shape the
 * identity needs -- method and url strings, headers an object -- so a url
 * or header value a real run would refuse still has its identity.  Errors:
 * LIL_E_INVAL (no such shape), LIL_E_NOMEM, LIL_E_TOOBIG. */
lil_status lil__http_identity_unsent(const struct lil_env *env, struct lil_err *err,
                                     json_t *req, const uint8_t *key, size_t key_len,
                                     struct lil_buf *out);

/* Append url with its userinfo and the values of its secret query (and
 * fragment) parameters replaced by "[redacted]" to out.  Errors of the
 * buffer (LIL_E_NOMEM, LIL_E_TOOBIG). */
lil_status lil__http_redact_url(struct lil_buf *out, const char *url);

/* Is a header or query parameter of this name (len bytes) a secret? */
bool lil__http_secret_name(const char *name, size_t len, bool query);

/* Append to the JSON array out every secret value of url, as it is and
 * percent-decoded: its userinfo, the userinfo's password and the Basic
 * credentials a client makes of it (base64 of user:password), the values
 * of its secret query and fragment parameters -- what a server may echo
 * back in an error.  LIL_E_NOMEM (out may then hold some). */
lil_status lil__http_url_secrets(const struct lil_env *env, const char *url,
                                 json_t *out);

#endif
