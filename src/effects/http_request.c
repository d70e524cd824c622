/*
 * http_request.c -- the request side of the http effect: checking a
 * rendered request, URLs (their parts, origins, the form fetch sends) and
 * the body as JSON.stringify prints it.  The rules are in effect_http.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "effects/effect_http.h"
#include "effects/http_int.h"
#include "lang/value.h"

/* ------------------------------------------------------------------------ */
/* Checking a request                                                       */

static lil_status bad(struct lil_err *err, const char *what, const char *name)
{
    return lil__seterr(err, LIL_E_INVAL, 0, "http request: %s%s%s%s", what,
                       name ? " '" : "", name ? name : "", name ? "'" : "");
}

static bool is_method(const char *m)
{
    static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};

    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
        if (strcmp(m, methods[i]) == 0)
            return true;
    return false;
}

static bool is_field(const char *k)
{
    static const char *const fields[] = {"method", "url", "headers", "body",
                                         "envelope"};

    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (strcmp(k, fields[i]) == 0)
            return true;
    return false;
}

/* RFC 9110 tchar */
static bool is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static bool is_token(const char *s, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!is_tchar((unsigned char)s[i]))
            return false;
    return true;
}

/* A JSON string without NUL bytes (a C string of its full length). */
static bool is_cstring(const json_t *v)
{
    return json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v);
}

void lil__http_url_trim(const char *url, size_t *start, size_t *end)
{
    while (*start < *end && (unsigned char)url[*start] <= 0x20)
        (*start)++;
    while (*end > *start && (unsigned char)url[*end - 1] <= 0x20)
        (*end)--;
}

static lil_status check_url(struct lil_err *err, const json_t *url)
{
    struct lil_http_url u;
    size_t start = 0, end;
    const char *s;

    if (!is_cstring(url))
        return bad(err, "url must be a string", NULL);
    s = json_string_value(url);
    end = strlen(s);
    lil__http_url_trim(s, &start, &end);
    s += start;
    lil__http_url_split(s, end - start, &u);
    if (!lil__http_url_is_http(s, &u))
        return bad(err, "url is not an http: or https: URL with a host", NULL);
    if (u.at != SIZE_MAX)
        return bad(err,
                   "url may not include credentials (user:password@); "
                   "send them in a header",
                   NULL);
    return LIL_OK;
}

static lil_status check_header(struct lil_err *err, const char *name, size_t len,
                               const json_t *value)
{
    const char *s;

    if (!is_token(name, len))
        return bad(err, "header name is not an HTTP token:", name);
    if (!is_cstring(value))
        return bad(err, "value must be a string without NUL of header", name);
    s = json_string_value(value);
    if (strpbrk(s, "\r\n"))
        return bad(err, "value contains CR or LF in header", name);
    return LIL_OK;
}

static lil_status check_headers(struct lil_err *err, json_t *headers)
{
    if (!json_is_object(headers))
        return bad(err, "headers must be an object", NULL);
    for (void *it = json_object_iter(headers); it;
         it = json_object_iter_next(headers, it)) {
        lil_status rc =
            check_header(err, json_object_iter_key(it), json_object_iter_key_len(it),
                         json_object_iter_value(it));

        if (rc != LIL_OK)
            return rc;
    }
    return LIL_OK;
}

lil_status lil__http_check(struct lil_err *err, json_t *req)
{
    json_t *method, *headers, *envelope;
    lil_status rc;

    if (!json_is_object(req))
        return bad(err, "not an object", NULL);
    for (void *it = json_object_iter(req); it; it = json_object_iter_next(req, it))
        if (!is_field(json_object_iter_key(it)))
            return bad(err, "unknown field", json_object_iter_key(it));
    method = json_object_get(req, "method");
    if (!is_cstring(method) || !is_method(json_string_value(method)))
        return bad(err, "method must be GET, POST, PUT, PATCH or DELETE", NULL);
    rc = check_url(err, json_object_get(req, "url"));
    if (rc != LIL_OK)
        return rc;
    headers = json_object_get(req, "headers");
    if (headers && (rc = check_headers(err, headers)) != LIL_OK)
        return rc;
    envelope = json_object_get(req, "envelope");
    if (envelope && !json_is_boolean(envelope))
        return bad(err, "envelope must be true or false", NULL);
    if (json_object_get(req, "body") && strcmp(json_string_value(method), "GET") == 0)
        return bad(err, "a GET request cannot have a body", NULL);
    return LIL_OK;
}

/* ------------------------------------------------------------------------ */
/* URLs                                                                     */

static bool is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_scheme_char(unsigned char c)
{
    return is_alpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}

/* Bytes of "scheme" when url starts with "scheme://", else 0. */
static size_t scheme_len(const char *url, size_t len)
{
    size_t i = 0;

    if (len == 0 || !is_alpha((unsigned char)url[0]))
        return 0;
    while (i < len && is_scheme_char((unsigned char)url[i]))
        i++;
    if (i + 3 > len || memcmp(url + i, "://", 3) != 0)
        return 0;
    return i;
}

static size_t find_byte(const char *s, size_t from, size_t to, const char *set)
{
    for (size_t i = from; i < to; i++)
        if (s[i] != '\0' && strchr(set, s[i]))
            return i;
    return SIZE_MAX;
}

void lil__http_url_split(const char *url, size_t len, struct lil_http_url *u)
{
    size_t end;

    u->len = len;
    u->scheme_len = scheme_len(url, len);
    u->auth = u->scheme_len ? u->scheme_len + 3 : 0;
    u->at = SIZE_MAX;
    u->path = u->auth;
    if (u->scheme_len) {
        end = find_byte(url, u->auth, len, "/?#\\");
        u->path = end == SIZE_MAX ? len : end;
        for (size_t i = u->auth; i < u->path; i++) /* the last '@' */
            if (url[i] == '@')
                u->at = i;
    }
    u->host = u->at == SIZE_MAX ? u->auth : u->at + 1;
    u->fragment = find_byte(url, u->path, len, "#");
    end = u->fragment == SIZE_MAX ? len : u->fragment;
    u->query = find_byte(url, u->path, end, "?");
}

static bool scheme_is(const char *url, const struct lil_http_url *u, const char *s)
{
    return u->scheme_len == strlen(s) && strncasecmp(url, s, u->scheme_len) == 0;
}

bool lil__http_url_is_http(const char *url, const struct lil_http_url *u)
{
    return (scheme_is(url, u, "http") || scheme_is(url, u, "https")) &&
           u->path > u->host;
}

struct origin {
    bool https;
    const char *host;
    size_t host_len;
    long port;
};

static void origin_of(const char *url, struct origin *o)
{
    struct lil_http_url u;
    size_t end, colon = SIZE_MAX;

    lil__http_url_split(url, strlen(url), &u);
    o->https = scheme_is(url, &u, "https");
    o->host = url + u.host;
    end = u.path;
    /* the port's ':' is the last one after a bracketed IPv6 address */
    for (size_t i = u.host; i < end; i++)
        if (url[i] == ':')
            colon = i;
        else if (url[i] == ']')
            colon = SIZE_MAX;
    o->host_len = (colon == SIZE_MAX ? end : colon) - u.host;
    o->port = o->https ? 443 : 80;
    if (colon != SIZE_MAX && colon + 1 < end)
        o->port = strtol(url + colon + 1, NULL, 10);
}

bool lil__http_same_origin(const char *a, const char *b)
{
    struct origin oa, ob;

    origin_of(a, &oa);
    origin_of(b, &ob);
    return oa.https == ob.https && oa.port == ob.port && oa.host_len == ob.host_len &&
           strncasecmp(oa.host, ob.host, oa.host_len) == 0;
}

/* Does fetch percent-encode byte c in this part of a URL?  (WHATWG URL's
 * path, query and fragment percent-encode sets, for special schemes.) */
static bool must_encode(unsigned char c, int part)
{
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>')
        return true;
    if (part == '/')
        return c == '`' || c == '{' || c == '}';
    if (part == '?')
        return c == '\'';
    return c == '`'; /* fragment */
}

lil_status lil__http_url_prepare(struct lil_buf *out, const char *url)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t start = 0, end = strlen(url);
    struct lil_http_url u;
    lil_status rc = LIL_OK;

    lil__http_url_trim(url, &start, &end);
    lil__http_url_split(url + start, end - start, &u);
    for (size_t i = 0; i < u.len && rc == LIL_OK; i++) {
        unsigned char c = (unsigned char)url[start + i];
        int part = i >= u.fragment ? '#' : i >= u.query ? '?' : '/';

        if (c == '\t' || c == '\n' || c == '\r')
            continue;
        if (i >= u.path && must_encode(c, part)) {
            char esc[3] = {'%', hex[c >> 4], hex[c & 15]};

            rc = lil__buf_add(out, esc, sizeof(esc));
        } else {
            rc = lil__buf_add(out, &url[start + i], 1);
        }
    }
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The body: JSON.stringify                                                 */

struct stringify {
    const struct lil_env *env;
    struct lil_buf *out;
};

static lil_status add_str(struct lil_buf *out, const char *s)
{
    return lil__buf_addstr(out, s);
}

/* The escape of c in JSON.stringify's QuoteJSONString, or NULL. */
static const char *escape(unsigned char c)
{
    switch (c) {
    case '"':
        return "\\\"";
    case '\\':
        return "\\\\";
    case '\b':
        return "\\b";
    case '\f':
        return "\\f";
    case '\n':
        return "\\n";
    case '\r':
        return "\\r";
    case '\t':
        return "\\t";
    default:
        return NULL;
    }
}

/* JSON.stringify's QuoteJSONString (the string is valid UTF-8: jansson's). */
static lil_status quote(struct lil_buf *out, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    lil_status rc = add_str(out, "\"");
    size_t run = 0; /* bytes to copy as they are, pending */

    for (size_t i = 0; i < len && rc == LIL_OK; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = escape(c);
        char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], '\0'};

        if (!esc && c >= 0x20) {
            run++;
            continue;
        }
        rc = lil__buf_add(out, s + i - run, run);
        run = 0;
        if (rc == LIL_OK)
            rc = add_str(out, esc ? esc : u);
    }
    if (rc == LIL_OK)
        rc = lil__buf_add(out, s + len - run, run);
    return rc == LIL_OK ? add_str(out, "\"") : rc;
}

static lil_status number(struct lil_buf *out, const json_t *v)
{
    char num[32];
    size_t n;

    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);

        if (i >= -(1LL << 53) && i <= (1LL << 53))
            return lil__buf_printf(out, "%lld", (long long)i);
        n = lil__num_format((double)i, num);
    } else {
        n = lil__num_format(json_real_value(v), num);
    }
    return lil__buf_add(out, num, n);
}

/* An array index key ("0".."4294967294", no leading zero), its value in
 * *idx. */
static bool index_key(const char *k, size_t len, uint32_t *idx)
{
    uint64_t n = 0;

    if (len == 0 || len > 10 || (len > 1 && k[0] == '0'))
        return false;
    for (size_t i = 0; i < len; i++) {
        if (k[i] < '0' || k[i] > '9')
            return false;
        n = n * 10 + (uint64_t)(k[i] - '0');
    }
    if (n >= UINT32_MAX)
        return false;
    *idx = (uint32_t)n;
    return true;
}

static lil_status value(struct stringify *st, json_t *v, int depth);

static lil_status member(struct stringify *st, void *it, bool *first, int depth)
{
    lil_status rc = *first ? LIL_OK : add_str(st->out, ",");

    *first = false;
    if (rc == LIL_OK)
        rc = quote(st->out, json_object_iter_key(it), json_object_iter_key_len(it));
    if (rc == LIL_OK)
        rc = add_str(st->out, ":");
    return rc == LIL_OK ? value(st, json_object_iter_value(it), depth + 1) : rc;
}

struct index_item {
    uint32_t idx;
    void *it;
};

static int by_index(const void *a, const void *b)
{
    uint32_t x = ((const struct index_item *)a)->idx;
    uint32_t y = ((const struct index_item *)b)->idx;

    return (x > y) - (x < y);
}

/* The members with index keys, in ascending order. */
static lil_status index_members(struct stringify *st, json_t *obj, bool *first,
                                int depth)
{
    struct index_item *items = NULL;
    size_t n = 0, cap = 0;
    lil_status rc = LIL_OK;
    uint32_t idx;

    for (void *it = json_object_iter(obj); it; it = json_object_iter_next(obj, it)) {
        struct index_item *grown;

        if (!index_key(json_object_iter_key(it), json_object_iter_key_len(it), &idx))
            continue;
        grown = lil__grow(st->env, items, &cap, n, sizeof(*items), 8);
        if (!grown) {
            lil__free(st->env, items);
            return LIL_E_NOMEM;
        }
        items = grown;
        items[n++] = (struct index_item){idx, it};
    }
    if (n > 1)
        qsort(items, n, sizeof(*items), by_index);
    for (size_t i = 0; i < n && rc == LIL_OK; i++)
        rc = member(st, items[i].it, first, depth);
    lil__free(st->env, items);
    return rc;
}

static lil_status object(struct stringify *st, json_t *obj, int depth)
{
    bool first = true;
    uint32_t idx;
    lil_status rc = add_str(st->out, "{");

    if (rc == LIL_OK)
        rc = index_members(st, obj, &first, depth);
    for (void *it = json_object_iter(obj); it && rc == LIL_OK;
         it = json_object_iter_next(obj, it))
        if (!index_key(json_object_iter_key(it), json_object_iter_key_len(it), &idx))
            rc = member(st, it, &first, depth);
    return rc == LIL_OK ? add_str(st->out, "}") : rc;
}

static lil_status array(struct stringify *st, json_t *arr, int depth)
{
    lil_status rc = add_str(st->out, "[");

    for (size_t i = 0; i < json_array_size(arr) && rc == LIL_OK; i++) {
        if (i > 0)
            rc = add_str(st->out, ",");
        if (rc == LIL_OK)
            rc = value(st, json_array_get(arr, i), depth + 1);
    }
    return rc == LIL_OK ? add_str(st->out, "]") : rc;
}

static lil_status value(struct stringify *st, json_t *v, int depth)
{
    if (depth > LIL_HTTP_MAX_DEPTH)
        return LIL_E_TOOBIG; /* also what a cycle would come to */
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return object(st, v, depth);
    case JSON_ARRAY:
        return array(st, v, depth);
    case JSON_STRING:
        return quote(st->out, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
    case JSON_REAL:
        return number(st->out, v);
    case JSON_TRUE:
        return add_str(st->out, "true");
    case JSON_FALSE:
        return add_str(st->out, "false");
    case JSON_NULL:
        break;
    }
    return add_str(st->out, "null");
}

lil_status lil__http_stringify(const struct lil_env *env, struct lil_err *err,
                               json_t *v, struct lil_buf *out)
{
    struct stringify st = {env, out};
    size_t mark = out->len;
    lil_status rc = value(&st, v, 0);

    if (rc == LIL_OK)
        return LIL_OK;
    out->len = mark;
    if (out->data)
        out->data[mark] = '\0';
    if (rc == LIL_E_NOMEM)
        return lil__seterr(err, rc, 0, "out of memory printing an http request body");
    return lil__seterr(err, rc, 0,
                       "http request body: deeper than %d levels or over %zu bytes",
                       LIL_HTTP_MAX_DEPTH, out->cap);
}
