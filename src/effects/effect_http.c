/*
 * effect_http.c -- performing an http effect with libcurl (the rules are
 * in effect_http.h).
 *
 * One call is one transfer: one libcurl easy handle, reset and configured
 * afresh for each hop.  Redirects are followed here, not by libcurl, so
 * that they follow fetch's rules (which method and body go on, which
 * headers are dropped for another origin) and the deadline covers them
 * all: each hop gets what is left of the timeout.  The response body goes
 * into a buffer capped at max_bytes, and the header callback counts the
 * header bytes libcurl keeps: passing either cap stops the transfer.
 */
#include "effects/effect_http.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "effects/curl_dl.h"
#include "effects/curl_opts.h"
#include "effects/http_int.h"

#define BUF_UNCAPPED (SIZE_MAX / 4)
#define MSG_URL_MAX  120 /* bytes of a URL shown in a message */

struct transfer {
    const struct lil_env *env;
    struct lil_err *err;
    const struct lil_curl *c;
    const struct lil_http_opts *opts;
    json_t *req;
    CURL *h;
    int64_t deadline_ns;
    /* the request as it stands at this hop */
    char *url;          /* prepared (http_request.c), owned */
    const char *method; /* static or the request's */
    struct lil_buf body;
    bool has_body;     /* the request has a body and still sends it */
    bool body_dropped; /* a redirect turned it into a GET */
    bool cross_origin; /* a redirect left the first origin */
    /* the response of this hop */
    struct lil_buf resp;
    size_t header_bytes;
    lil_status cb_rc; /* a callback's failure (LIL_E_NOMEM, LIL_E_TOOBIG) */
    bool cb_headers;  /* ... on the headers, not the body */
    char errbuf[CURL_ERROR_SIZE];
};

void lil__http_opts_init(struct lil_http_opts *o)
{
    o->timeout_ms = LIL_HTTP_TIMEOUT_MS;
    o->max_bytes = LIL_HTTP_MAX_BYTES;
    o->max_redirects = LIL_HTTP_MAX_REDIRECTS;
}

/* ------------------------------------------------------------------------ */
/* Messages                                                                 */

/* code, with "http METHOD URL: " (the URL redacted) before the text. */
static lil_status fail(struct transfer *t, lil_status code, const char *fmt, ...)
    LIL_PRINTF(3, 4);

static lil_status fail(struct transfer *t, lil_status code, const char *fmt, ...)
{
    char text[LIL_ERRMSG_MAX];
    struct lil_buf url;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    lil__buf_init(&url, t->env, BUF_UNCAPPED);
    if (lil__http_redact_url(&url, t->url) != LIL_OK || !url.data) {
        lil__buf_free(&url);
        return lil__seterr(t->err, code, 0, "http %s: %s", t->method, text);
    }
    lil__seterr(t->err, code, 0, "http %s %.*s%s: %s", t->method, MSG_URL_MAX,
                (const char *)url.data, url.len > MSG_URL_MAX ? "..." : "", text);
    lil__buf_free(&url);
    return code;
}

/* ------------------------------------------------------------------------ */
/* libcurl's callbacks                                                      */

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    struct transfer *t = ud;
    lil_status rc = lil__buf_add(&t->resp, data, size * n);

    if (rc == LIL_OK)
        return size * n;
    t->cb_rc = rc;
    t->cb_headers = false;
    return 0; /* any other count than size * n stops the transfer */
}

/* NOLINTNEXTLINE(readability-non-const-parameter): libcurl's callback type */
static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
    struct transfer *t = ud;

    (void)data;
    t->header_bytes += size * n;
    if (t->header_bytes <= t->opts->max_bytes)
        return size * n;
    t->cb_rc = LIL_E_TOOBIG;
    t->cb_headers = true;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* One hop: headers, options, the transfer                                  */

static bool name_in(const char *name, size_t len, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(names[i]) == len && strncasecmp(name, names[i], len) == 0)
            return true;
    return false;
}

#define NAME_IN(name, len, list) \
    name_in((name), (len), (list), sizeof(list) / sizeof((list)[0]))

/* Is a header of the caller left out at this hop? */
static bool header_dropped(const struct transfer *t, const char *name, size_t len)
{
    /* framing and hop-by-hop headers are the transport's */
    static const char *const transport[] = {"content-length",
                                            "transfer-encoding",
                                            "connection",
                                            "keep-alive",
                                            "upgrade",
                                            "expect",
                                            "te",
                                            "trailer"};
    static const char *const host[] = {"host"};
    static const char *const body[] = {"content-type", "content-encoding",
                                       "content-language", "content-location"};

    return NAME_IN(name, len, transport) ||
           (t->cross_origin &&
            (lil__http_secret_name(name, len, false) || NAME_IN(name, len, host))) ||
           (t->body_dropped && NAME_IN(name, len, body));
}

static bool has_header(const struct transfer *t, const char *name)
{
    json_t *headers = json_object_get(t->req, "headers");

    for (void *it = json_object_iter(headers); it;
         it = json_object_iter_next(headers, it))
        if (strcasecmp(json_object_iter_key(it), name) == 0 &&
            !header_dropped(t, json_object_iter_key(it), json_object_iter_key_len(it)))
            return true;
    return false;
}

static lil_status add_raw(struct transfer *t, struct curl_slist **list,
                          const char *line)
{
    struct curl_slist *grown = t->c->slist_append(*list, line);

    if (!grown)
        return LIL_E_NOMEM;
    *list = grown;
    return LIL_OK;
}

/* Add the line "name: value" (value trimmed; "name;" sends an empty one). */
static lil_status add_line(struct transfer *t, struct lil_buf *line,
                           struct curl_slist **list, const char *name,
                           const char *value)
{
    size_t start = 0, end = strlen(value);
    lil_status rc;

    while (start < end && (value[start] == ' ' || value[start] == '\t'))
        start++;
    while (end > start && (value[end - 1] == ' ' || value[end - 1] == '\t'))
        end--;
    lil__buf_reset(line);
    if (start == end)
        rc = lil__buf_printf(line, "%s;", name);
    else
        rc = lil__buf_printf(line, "%s: %.*s", name, (int)(end - start), value + start);
    return rc == LIL_OK ? add_raw(t, list, (const char *)line->data) : rc;
}

/* The caller's headers, then what fetch adds, then the headers libcurl
 * would add and must not ("Name:" removes one of libcurl's): a form
 * content type for an empty body, "Expect: 100-continue". */
static lil_status header_lines(struct transfer *t, struct lil_buf *line,
                               struct curl_slist **list)
{
    json_t *headers = json_object_get(t->req, "headers");
    lil_status rc = LIL_OK;

    for (void *it = json_object_iter(headers); it && rc == LIL_OK;
         it = json_object_iter_next(headers, it)) {
        const char *name = json_object_iter_key(it);

        if (!header_dropped(t, name, json_object_iter_key_len(it)))
            rc = add_line(t, line, list, name,
                          json_string_value(json_object_iter_value(it)));
    }
    if (rc == LIL_OK && !has_header(t, "content-type"))
        rc = add_raw(t, list,
                     t->has_body ? "Content-Type: text/plain;charset=UTF-8"
                                 : "Content-Type:");
    if (rc == LIL_OK && !has_header(t, "user-agent"))
        rc = add_raw(t, list, "User-Agent: lil/" LIL_VERSION);
    return rc == LIL_OK ? add_raw(t, list, "Expect:") : rc;
}

static lil_status build_headers(struct transfer *t, struct curl_slist **list)
{
    struct lil_buf line;
    lil_status rc;

    *list = NULL;
    lil__buf_init(&line, t->env, BUF_UNCAPPED);
    rc = header_lines(t, &line, list);
    lil__buf_free(&line);
    if (rc == LIL_OK)
        return LIL_OK;
    t->c->slist_free_all(*list);
    *list = NULL;
    return fail(t, LIL_E_NOMEM, "out of memory building the request headers");
}

/* The method and the body (fetch: POST and PUT without a body send
 * "Content-Length: 0"). */
static CURLcode set_method(const struct transfer *t)
{
    bool is_post = strcmp(t->method, "POST") == 0;
    bool post_like = t->has_body || is_post || strcmp(t->method, "PUT") == 0;
    curl_off_t len = t->has_body ? (curl_off_t)t->body.len : 0;
    CURLcode cc = CURLE_OK;

    if (strcmp(t->method, "GET") == 0)
        return t->c->easy_setopt(t->h, CURLOPT_HTTPGET, 1L);
    if (post_like)
        cc = lil__curl_post_body(t->c, t->h, t->body.data, len);
    if (cc != CURLE_OK || is_post)
        return cc;
    return t->c->easy_setopt(t->h, CURLOPT_CUSTOMREQUEST, t->method);
}

static CURLcode set_options(struct transfer *t, struct curl_slist *headers,
                            long timeout_ms)
{
    struct lil_curl_request r = {
        .url = t->url,
        .timeout_ms = timeout_ms,
        /* a Content-Length over the cap fails at once (0: no such check) */
        .max_file = t->opts->max_bytes > (uint64_t)INT64_MAX
                        ? 0
                        : (curl_off_t)t->opts->max_bytes,
        .on_body = on_body,
        .body_ud = t,
        .on_header = on_header,
        .header_ud = t,
        .errbuf = t->errbuf,
        .headers = headers,
    };
    CURLcode cc = lil__curl_setup(t->c, t->h, &r);

    return cc == CURLE_OK ? set_method(t) : cc;
}

/* The status of what one hop's transfer ended with. */
static lil_status hop_status(struct transfer *t, CURLcode cc)
{
    if (t->cb_rc == LIL_E_NOMEM || cc == CURLE_OUT_OF_MEMORY)
        return fail(t, LIL_E_NOMEM, "out of memory");
    if (t->cb_rc == LIL_E_TOOBIG)
        return fail(t, LIL_E_TOOBIG, "the response %s over the limit of %zu bytes",
                    t->cb_headers ? "headers are" : "body is", t->opts->max_bytes);
    if (cc == CURLE_FILESIZE_EXCEEDED)
        return fail(t, LIL_E_TOOBIG, "the response body is over the limit of %zu bytes",
                    t->opts->max_bytes);
    if (cc == CURLE_OPERATION_TIMEDOUT)
        return fail(t, LIL_E_HTTP, "timed out after %lld ms",
                    (long long)t->opts->timeout_ms);
    if (cc != CURLE_OK)
        return fail(t, LIL_E_HTTP, "%s%s%s", t->c->easy_strerror(cc),
                    t->errbuf[0] ? ": " : "", t->errbuf);
    return LIL_OK;
}

/* Milliseconds left before the deadline (0: none). */
static long time_left(const struct transfer *t)
{
    int64_t left = (t->deadline_ns - lil__mono_ns()) / 1000000;

    return left <= 0 ? 0 : left > LONG_MAX ? LONG_MAX : (long)left;
}

static lil_status one_hop(struct transfer *t)
{
    struct curl_slist *headers = NULL;
    long left = time_left(t);
    CURLcode cc;
    lil_status rc;

    if (left == 0)
        return hop_status(t, CURLE_OPERATION_TIMEDOUT);
    rc = build_headers(t, &headers);
    if (rc != LIL_OK)
        return rc;
    t->c->easy_reset(t->h);
    lil__buf_reset(&t->resp);
    t->header_bytes = 0;
    t->cb_rc = LIL_OK;
    t->errbuf[0] = '\0';
    cc = set_options(t, headers, left);
    if (cc == CURLE_OK)
        cc = t->c->easy_perform(t->h);
    /* headers is used during the transfer only; the handle keeps its
     * pointer until the next reset, but no longer reads it */
    t->c->slist_free_all(headers);
    return hop_status(t, cc);
}

/* ------------------------------------------------------------------------ */
/* Redirects                                                                */

static bool is_redirect(long status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 ||
           status == 308;
}

/* Make next (libcurl's resolved Location) the URL of the next hop, with
 * fetch's changes to method, body and headers. */
static lil_status follow(struct transfer *t, long status, const char *next)
{
    struct lil_http_url u;
    struct lil_buf url;
    char *effective = NULL;
    lil_status rc;

    lil__http_url_split(next, strlen(next), &u);
    if (!lil__http_url_is_http(next, &u))
        return fail(t, LIL_E_HTTP,
                    "redirected (%ld) to a URL that is not http: or https:", status);
    if (t->c->easy_getinfo(t->h, CURLINFO_EFFECTIVE_URL, &effective) != CURLE_OK ||
        !effective || !lil__http_same_origin(effective, next))
        t->cross_origin = true;
    if (((status == 301 || status == 302) && strcmp(t->method, "POST") == 0) ||
        (status == 303 && strcmp(t->method, "GET") != 0)) {
        t->method = "GET";
        t->has_body = false;
        t->body_dropped = true;
    }
    if (t->cross_origin && t->has_body)
        return fail(t, LIL_E_INVAL,
                    "redirected (%ld) to another origin with the request's body: a "
                    "body is never sent across origins (use the final URL)",
                    status);
    lil__buf_init(&url, t->env, BUF_UNCAPPED);
    rc = lil__http_url_prepare(&url, next);
    if (rc == LIL_OK && url.data) {
        lil__free(t->env, t->url);
        t->url = (char *)url.data; /* the buffer's block, NUL-terminated */
        return LIL_OK;
    }
    lil__buf_free(&url);
    return fail(t, LIL_E_NOMEM, "out of memory following a redirect");
}

/* The hops, up to the final response (its status in *status). */
static lil_status transfer(struct transfer *t, long *status)
{
    for (int redirects = 0;; redirects++) {
        char *next = NULL;
        lil_status rc = one_hop(t);

        if (rc != LIL_OK)
            return rc;
        *status = 0;
        t->c->easy_getinfo(t->h, CURLINFO_RESPONSE_CODE, status);
        if (!is_redirect(*status) ||
            t->c->easy_getinfo(t->h, CURLINFO_REDIRECT_URL, &next) != CURLE_OK || !next)
            return LIL_OK; /* a redirect without a Location is the response */
        if (redirects == t->opts->max_redirects)
            return fail(t, LIL_E_HTTP, "more than %d redirects",
                        t->opts->max_redirects);
        rc = follow(t, *status, next);
        if (rc != LIL_OK)
            return rc;
    }
}

/* ------------------------------------------------------------------------ */
/* The result                                                               */

static bool is_http_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Add name: value (bytes read as Latin-1) to the headers object h, the
 * name lower-cased, the value without surrounding blanks (libcurl 7.88
 * leaves a CR in an empty one), after an earlier value with ", ". */
static lil_status add_response_header(const struct transfer *t, json_t *h,
                                      const char *name, const char *value)
{
    size_t len = strlen(value);
    struct lil_buf key, val;
    json_t *old, *v = NULL;
    lil_status rc;

    while (len > 0 && is_http_blank(value[len - 1]))
        len--;
    while (len > 0 && is_http_blank(value[0]))
        value++, len--;

    lil__buf_init(&key, t->env, BUF_UNCAPPED);
    lil__buf_init(&val, t->env, BUF_UNCAPPED);
    rc = lil__http_latin1(&key, (const unsigned char *)name, strlen(name));
    for (size_t i = 0; rc == LIL_OK && i < key.len; i++)
        if (key.data[i] >= 'A' && key.data[i] <= 'Z')
            key.data[i] = (uint8_t)(key.data[i] - 'A' + 'a');
    old = rc == LIL_OK ? json_object_getn(h, (const char *)key.data, key.len) : NULL;
    if (rc == LIL_OK && old)
        rc = lil__buf_add(&val, json_string_value(old), json_string_length(old));
    if (rc == LIL_OK && old)
        rc = lil__buf_add(&val, ", ", 2);
    if (rc == LIL_OK)
        rc = lil__http_latin1(&val, (const unsigned char *)value, len);
    if (rc == LIL_OK)
        v = json_stringn(val.data ? (const char *)val.data : "", val.len);
    if (rc == LIL_OK &&
        (!v || json_object_setn_new(h, (const char *)key.data, key.len, v)))
        rc = LIL_E_NOMEM;
    lil__buf_free(&key);
    lil__buf_free(&val);
    return rc;
}

/* The final response's headers (not those of 1xx responses, trailers or a
 * proxy's CONNECT): a new object in *out. */
static lil_status response_headers(struct transfer *t, json_t **out)
{
    struct lil_json_scope sc;
    struct curl_header *prev = NULL, *hd;
    lil_status rc = LIL_OK;

    lil__json_begin(&sc, t->env);
    *out = json_object();
    while (*out && rc == LIL_OK &&
           (hd = t->c->easy_nextheader(t->h, CURLH_HEADER, -1, prev)) != NULL) {
        rc = add_response_header(t, *out, hd->name, hd->value);
        prev = hd;
    }
    if (lil__json_end(&sc) == LIL_OK && rc == LIL_OK && *out)
        return LIL_OK;
    json_decref(*out);
    *out = NULL;
    return fail(t, LIL_E_NOMEM, "out of memory reading the response headers");
}

static lil_status result(struct transfer *t, long status, json_t **out)
{
    bool envelope = json_is_true(json_object_get(t->req, "envelope"));
    json_t *headers = NULL;
    lil_status rc = LIL_OK;

    if (envelope)
        rc = response_headers(t, &headers);
    if (rc == LIL_OK)
        rc = lil__http_result(t->env, t->err, status,
                              t->resp.data ? t->resp.data : (const uint8_t *)"",
                              t->resp.len, headers, envelope, out);
    json_decref(headers);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The call                                                                 */

static lil_status check_opts(struct lil_err *err, const struct lil_http_opts *o)
{
    if (o->timeout_ms <= 0 || o->max_bytes == 0 || o->max_redirects < 0)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "http options: timeout_ms and max_bytes must be positive, "
                           "max_redirects not negative");
    return LIL_OK;
}

/* The body's bytes and the URL as sent. */
static lil_status prepare(struct transfer *t)
{
    json_t *body = json_object_get(t->req, "body");
    struct lil_buf url;
    lil_status rc = LIL_OK;

    t->method = json_string_value(json_object_get(t->req, "method"));
    t->has_body = body != NULL;
    if (json_is_string(body))
        rc = lil__buf_add(&t->body, json_string_value(body), json_string_length(body));
    else if (body && lil__http_stringify(t->env, t->err, body, &t->body) != LIL_OK)
        return t->err->code;
    lil__buf_init(&url, t->env, BUF_UNCAPPED);
    if (rc == LIL_OK)
        rc = lil__http_url_prepare(&url,
                                   json_string_value(json_object_get(t->req, "url")));
    if (rc == LIL_OK && url.data) {
        t->url = (char *)url.data; /* the buffer's block, NUL-terminated */
        return LIL_OK;
    }
    lil__buf_free(&url);
    return lil__seterr(t->err, LIL_E_NOMEM, 0,
                       "out of memory preparing an http request");
}

lil_status lil__http_perform(const struct lil_env *env, struct lil_err *err,
                             json_t *req, const struct lil_http_opts *opts,
                             json_t **out)
{
    struct lil_http_opts defaults;
    struct transfer t = {.env = env, .err = err, .req = req};
    long status = 0;
    lil_status rc;

    *out = NULL;
    if (!opts) {
        lil__http_opts_init(&defaults);
        opts = &defaults;
    }
    t.opts = opts;
    rc = check_opts(err, opts);
    if (rc == LIL_OK)
        rc = lil__http_check(err, req);
    if (rc == LIL_OK)
        rc = lil__curl_dl_load(err, &t.c);
    if (rc != LIL_OK)
        return rc;
    t.deadline_ns = lil__mono_ns() + (opts->timeout_ms > INT64_MAX / 4000000
                                          ? INT64_MAX / 4
                                          : opts->timeout_ms * 1000000);
    lil__buf_init(&t.body, env, BUF_UNCAPPED);
    lil__buf_init(&t.resp, env, opts->max_bytes);
    rc = prepare(&t);
    if (rc == LIL_OK && !(t.h = t.c->easy_init()))
        rc =
            lil__seterr(err, LIL_E_NOMEM, 0, "out of memory creating a libcurl handle");
    if (rc == LIL_OK)
        rc = transfer(&t, &status);
    if (rc == LIL_OK)
        rc = result(&t, status, out);
    if (t.h)
        t.c->easy_cleanup(t.h);
    lil__free(env, t.url);
    lil__buf_free(&t.body);
    lil__buf_free(&t.resp);
    return rc;
}
