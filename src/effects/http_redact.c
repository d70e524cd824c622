/*
 * http_redact.c -- secrets of http requests: which names are secret, URLs
 * and headers with secrets redacted (for the journal and messages) or
 * hashed (for the identity).  The rules are in effect_http.h.
 *
 * One walk serves both uses: it copies a URL or a headers object and hands
 * each secret to a function that writes what stands in for it,
 * "[redacted]", or "hmac-sha256:<hex>" under the run's digest key
 * ("sha256:<hex>" for a run started without one).
 */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "base/hash.h"
#include "effects/effect_http.h"
#include "effects/http_int.h"
#include "effects/redact.h"

/* ------------------------------------------------------------------------ */
/* Secret names                                                             */

static bool equals_ci(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && strncasecmp(s, word, len) == 0;
}

static bool contains_ci(const char *s, size_t len, const char *part)
{
    size_t n = strlen(part);

    for (size_t i = 0; n <= len && i <= len - n; i++)
        if (strncasecmp(s + i, part, n) == 0)
            return true;
    return false;
}

bool lil__http_secret_name(const char *name, size_t len, bool query)
{
    static const char *const names[] = {"authorization", "proxy-authorization",
                                        "cookie", "set-cookie", "x-api-key"};
    /* beside the words of every secret name (effects/redact.h) */
    static const char *const parts[] = {"auth", "cookie", "session", "signature"};
    static const char *const query_names[] = {"sig", "pwd", "pass"};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (equals_ci(name, len, names[i]))
            return true;
    if (lil__redact_name_is_secret(name, len))
        return true;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        if (contains_ci(name, len, parts[i]))
            return true;
    for (size_t i = 0; query && i < sizeof(query_names) / sizeof(query_names[0]); i++)
        if (equals_ci(name, len, query_names[i]))
            return true;
    return false;
}

/* ------------------------------------------------------------------------ */
/* What stands in for a secret                                              */

/* What writes a stand-in, and the digest key it uses (put_hash). */
struct stand {
    lil_status (*put)(const struct stand *st, struct lil_buf *out, const char *s,
                      size_t len);
    const uint8_t *key; /* NULL: plain SHA-256 (runs started before keys) */
    size_t key_len;
};

static lil_status put_redacted(const struct stand *st, struct lil_buf *out,
                               const char *s, size_t len)
{
    (void)st;
    (void)s;
    (void)len;
    return lil__buf_addstr(out, LIL_REDACTED);
}

static lil_status put_hash(const struct stand *st, struct lil_buf *out, const char *s,
                           size_t len)
{
    uint8_t md[LIL_SHA256_LEN];
    char hex[2 * LIL_SHA256_LEN + 1];

    if (st->key)
        lil__hmac_sha256(st->key, st->key_len, s, len, md);
    else
        lil__sha256(s, len, md);
    lil__hex(md, sizeof(md), hex);
    return lil__buf_printf(out, "%s:%s", st->key ? "hmac-sha256" : "sha256", hex);
}

static const struct stand redacted = {put_redacted, NULL, 0};

/* ------------------------------------------------------------------------ */
/* URLs                                                                     */

static size_t find(const char *s, size_t from, size_t to, char c)
{
    const char *p = memchr(s + from, c, to - from);

    return p ? (size_t)(p - s) : to;
}

/* Copy the parameters s[from, to) ("a=1&b=2"), the values of secret names
 * through fn. */
static lil_status params(struct lil_buf *out, const char *s, size_t from, size_t to,
                         const struct stand *fn)
{
    lil_status rc = LIL_OK;

    for (size_t i = from; i < to && rc == LIL_OK;) {
        size_t end = find(s, i, to, '&'), eq = find(s, i, end, '=');

        if (eq < end && lil__http_secret_name(s + i, eq - i, true)) {
            rc = lil__buf_add(out, s + i, eq + 1 - i);
            if (rc == LIL_OK)
                rc = fn->put(fn, out, s + eq + 1, end - eq - 1);
        } else {
            rc = lil__buf_add(out, s + i, end - i);
        }
        if (rc == LIL_OK && end < to)
            rc = lil__buf_add(out, "&", 1);
        i = end + 1;
    }
    return rc;
}

static lil_status rewrite_trimmed(struct lil_buf *out, const char *url, size_t len,
                                  const struct stand *fn)
{
    struct lil_http_url u;
    size_t query_end, start = 0;
    lil_status rc = LIL_OK;

    lil__http_url_split(url, len, &u);
    if (u.at != SIZE_MAX) {
        rc = lil__buf_add(out, url, u.auth);
        if (rc == LIL_OK)
            rc = fn->put(fn, out, url + u.auth, u.at - u.auth);
        start = u.at;
    }
    query_end = u.fragment == SIZE_MAX ? u.len : u.fragment;
    if (rc == LIL_OK)
        rc = lil__buf_add(out, url + start,
                          (u.query == SIZE_MAX ? query_end : u.query + 1) - start);
    if (rc == LIL_OK && u.query != SIZE_MAX)
        rc = params(out, url, u.query + 1, query_end, fn);
    if (rc == LIL_OK && u.fragment != SIZE_MAX)
        rc = lil__buf_add(out, "#", 1);
    if (rc == LIL_OK && u.fragment != SIZE_MAX)
        rc = params(out, url, u.fragment + 1, u.len, fn);
    return rc;
}

/* Copy url, secrets through fn (blanks around it copied as they are). */
static lil_status rewrite_url(struct lil_buf *out, const char *url,
                              const struct stand *fn)
{
    size_t lead = 0, end = strlen(url);
    lil_status rc;

    lil__http_url_trim(url, &lead, &end);
    rc = lil__buf_add(out, url, lead);
    if (rc == LIL_OK)
        rc = rewrite_trimmed(out, url + lead, end - lead, fn);
    return rc == LIL_OK ? lil__buf_addstr(out, url + end) : rc;
}

lil_status lil__http_redact_url(struct lil_buf *out, const char *url)
{
    return rewrite_url(out, url, &redacted);
}

/* ------------------------------------------------------------------------ */
/* The secret values of a URL                                               */

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* s (len bytes) with %XX sequences decoded, into out. */
static lil_status percent_decoded(struct lil_buf *out, const char *s, size_t len)
{
    lil_status rc = LIL_OK;

    for (size_t i = 0; i < len && rc == LIL_OK; i++) {
        int hi = s[i] == '%' && i + 2 < len ? hex_value(s[i + 1]) : -1;
        int lo = hi >= 0 ? hex_value(s[i + 2]) : -1;
        unsigned char c = lo >= 0 ? (unsigned char)(hi * 16 + lo) : (unsigned char)s[i];

        rc = lil__buf_add(out, &c, 1);
        i += lo >= 0 ? 2 : 0;
    }
    return rc;
}

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Base64 of s (len bytes), with padding, into out. */
static lil_status base64(struct lil_buf *out, const unsigned char *s, size_t len)
{
    lil_status rc = LIL_OK;

    for (size_t i = 0; i < len && rc == LIL_OK; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16;
        char q[4];

        v |= i + 1 < len ? (uint32_t)s[i + 1] << 8 : 0;
        v |= i + 2 < len ? (uint32_t)s[i + 2] : 0;
        q[0] = b64[(v >> 18) & 63];
        q[1] = b64[(v >> 12) & 63];
        q[2] = b64[(v >> 6) & 63];
        q[3] = b64[v & 63];
        if (i + 1 >= len)
            q[2] = '=';
        if (i + 2 >= len)
            q[3] = '=';
        rc = lil__buf_add(out, q, 4);
    }
    return rc;
}

/* Add s (len bytes) to the array out, and its percent-decoded form when
 * that differs. */
static lil_status add_secret(const struct lil_env *env, json_t *out, const char *s,
                             size_t len, bool decode)
{
    struct lil_buf d;
    lil_status rc = LIL_OK;

    if (len == 0)
        return LIL_OK;
    if (json_array_append_new(out, json_stringn_nocheck(s, len)) != 0)
        return LIL_E_NOMEM;
    lil__buf_init(&d, env, SIZE_MAX / 4);
    if (decode)
        rc = percent_decoded(&d, s, len);
    if (rc == LIL_OK && decode && (d.len != len || memcmp(d.data, s, len) != 0) &&
        json_array_append_new(out, json_stringn_nocheck((const char *)d.data, d.len)) !=
            0)
        rc = LIL_E_NOMEM;
    lil__buf_free(&d);
    return rc;
}

/* The userinfo u (len bytes): itself, its password, and the Basic
 * credentials an http client makes of it (base64 of the decoded
 * user:password). */
static lil_status userinfo_secrets(const struct lil_env *env, json_t *out,
                                   const char *u, size_t len)
{
    const char *colon = memchr(u, ':', len);
    struct lil_buf plain, token;
    lil_status rc = add_secret(env, out, u, len, true);

    if (rc == LIL_OK && colon)
        rc = add_secret(env, out, colon + 1, len - (size_t)(colon + 1 - u), true);
    lil__buf_init(&plain, env, SIZE_MAX / 4);
    lil__buf_init(&token, env, SIZE_MAX / 4);
    if (rc == LIL_OK)
        rc = percent_decoded(&plain, u, len);
    if (rc == LIL_OK && plain.len > 0)
        rc = base64(&token, plain.data, plain.len);
    if (rc == LIL_OK && token.len > 0)
        rc = add_secret(env, out, (const char *)token.data, token.len, false);
    lil__buf_free(&plain);
    lil__buf_free(&token);
    return rc;
}

/* The values of the secret parameters in s[from, to). */
static lil_status param_secrets(const struct lil_env *env, json_t *out, const char *s,
                                size_t from, size_t to)
{
    lil_status rc = LIL_OK;

    for (size_t i = from; i < to && rc == LIL_OK;) {
        size_t end = find(s, i, to, '&'), eq = find(s, i, end, '=');

        if (eq < end && lil__http_secret_name(s + i, eq - i, true))
            rc = add_secret(env, out, s + eq + 1, end - eq - 1, true);
        i = end + 1;
    }
    return rc;
}

lil_status lil__http_url_secrets(const struct lil_env *env, const char *url,
                                 json_t *out)
{
    struct lil_json_scope sc;
    struct lil_http_url u;
    size_t lead = 0, end = strlen(url), query_end;
    lil_status rc = LIL_OK;

    lil__http_url_trim(url, &lead, &end);
    url += lead;
    lil__http_url_split(url, end - lead, &u);
    query_end = u.fragment == SIZE_MAX ? u.len : u.fragment;
    lil__json_begin(&sc, env);
    if (u.at != SIZE_MAX)
        rc = userinfo_secrets(env, out, url + u.auth, u.at - u.auth);
    if (rc == LIL_OK && u.query != SIZE_MAX)
        rc = param_secrets(env, out, url, u.query + 1, query_end);
    if (rc == LIL_OK && u.fragment != SIZE_MAX)
        rc = param_secrets(env, out, url, u.fragment + 1, u.len);
    if (lil__json_end(&sc) != LIL_OK)
        rc = LIL_E_NOMEM;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Headers and requests (in a json scope)                                   */

/* A new string of what stands in for s; NULL on failure. */
static json_t *stand_in(const struct lil_env *env, const char *s, size_t len,
                        const struct stand *fn)
{
    struct lil_buf b;
    json_t *v = NULL;

    lil__buf_init(&b, env, SIZE_MAX / 4);
    if (fn->put(fn, &b, s, len) == LIL_OK)
        v = json_stringn((const char *)b.data, b.len);
    lil__buf_free(&b);
    return v;
}

static json_t *copy_headers(const struct lil_env *env, json_t *headers,
                            const struct stand *fn)
{
    json_t *copy = json_object();

    for (void *it = json_object_iter(headers); it && copy;
         it = json_object_iter_next(headers, it)) {
        const char *k = json_object_iter_key(it);
        size_t klen = json_object_iter_key_len(it);
        json_t *v = json_object_iter_value(it);

        if (json_is_string(v) && lil__http_secret_name(k, klen, false))
            v = stand_in(env, json_string_value(v), json_string_length(v), fn);
        else
            v = json_incref(v);
        if (json_object_setn_new(copy, k, klen, v) != 0) {
            json_decref(copy);
            copy = NULL;
        }
    }
    return copy;
}

static json_t *copy_url(const struct lil_env *env, const char *url,
                        const struct stand *fn)
{
    struct lil_buf b;
    json_t *v = NULL;

    lil__buf_init(&b, env, SIZE_MAX / 4);
    if (rewrite_url(&b, url, fn) == LIL_OK)
        v = json_stringn(b.data ? (const char *)b.data : "", b.len);
    lil__buf_free(&b);
    return v;
}

/* A copy of the checked request req with its secrets through fn; NULL
 * when an allocation failed (a jansson one is also the scope's to see). */
static json_t *copy_request(const struct lil_env *env, json_t *req,
                            const struct stand *fn)
{
    json_t *headers = json_object_get(req, "headers");
    json_t *body = json_object_get(req, "body");
    json_t *envelope = json_object_get(req, "envelope");
    json_t *copy = json_object();
    json_t *url = copy_url(env, json_string_value(json_object_get(req, "url")), fn);
    json_t *hcopy = headers ? copy_headers(env, headers, fn) : NULL;

    if (!copy || !url || (headers && !hcopy)) {
        json_decref(copy);
        json_decref(url);
        json_decref(hcopy);
        return NULL;
    }
    json_object_set(copy, "method", json_object_get(req, "method"));
    json_object_set_new(copy, "url", url);
    if (hcopy)
        json_object_set_new(copy, "headers", hcopy);
    if (body)
        json_object_set(copy, "body", body);
    if (envelope)
        json_object_set(copy, "envelope", envelope);
    return copy;
}

static lil_status nomem(struct lil_err *err, const char *what)
{
    return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory %s", what);
}

/* The identity of req, whose method and url are strings and headers (if
 * any) an object, its secrets as digests under key (NULL: plain SHA-256). */
static lil_status identity_of(const struct lil_env *env, struct lil_err *err,
                              json_t *req, const uint8_t *key, size_t key_len,
                              struct lil_buf *out)
{
    struct stand hashed = {put_hash, key, key_len};
    struct lil_json_scope sc;
    json_t *id;
    lil_status rc;

    lil__json_begin(&sc, env);
    id = copy_request(env, req, &hashed);
    rc = lil__json_end(&sc);
    if (rc == LIL_OK && id)
        rc = lil__json_canon(env, err, id, out);
    else
        rc = nomem(err, "building an http identity");
    json_decref(id);
    return rc;
}

lil_status lil__http_identity(const struct lil_env *env, struct lil_err *err,
                              json_t *req, const uint8_t *key, size_t key_len,
                              struct lil_buf *out)
{
    lil_status rc = lil__http_check(err, req);

    return rc == LIL_OK ? identity_of(env, err, req, key, key_len, out) : rc;
}

lil_status lil__http_identity_unsent(const struct lil_env *env, struct lil_err *err,
                                     json_t *req, const uint8_t *key, size_t key_len,
                                     struct lil_buf *out)
{
    json_t *headers = json_object_get(req, "headers");
    lil_status rc;

    if (json_is_string(json_object_get(req, "method")) &&
        json_is_string(json_object_get(req, "url")) &&
        (!headers || json_is_object(headers)))
        return identity_of(env, err, req, key, key_len, out);
    rc = lil__http_check(err, req); /* fails on such a request: it says why */
    return rc != LIL_OK ? rc
                        : lil__seterr(err, LIL_E_INVAL, 0, "http request: malformed");
}
