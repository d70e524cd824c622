/*
 * serve_request.c -- one request of `lil serve` (serve.h, serve_http.h):
 * its checks, its body, its route's handler, its answer.
 *
 * When the headers are in: the Host names this server (else 403: a page
 * of another name reached us through DNS rebinding), the route is found
 * (404, 405), the run id of the path is valid and the query parses (400),
 * a route that is not public has a session (401).  A POST shows an Origin
 * equal to its Host's when it shows one, and not `Sec-Fetch-Site:
 * cross-site` (403); a route that changes something the session's
 * X-CSRF-Token (403), a JSON body (415), and no --read-only (403; logout
 * aside); a Content-Length within SERVE_BODY_MAX (413).  Then the body is
 * collected (413 past the cap), parsed as a JSON object (400 naming the
 * line and column; an empty body is {}), the handler called with the
 * session looked up again (a logout may have ended it meanwhile), and its
 * answer sent as JSON: a document turned into text here, or the text the
 * handler had made already (a page many browsers ask for), sent from
 * where it is without a copy.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve_http.h"

bool serve_media_is(const char *type, const char *want)
{
    size_t n;

    if (!type)
        return false;
    while (isspace((unsigned char)*type))
        type++;
    n = strcspn(type, ";");
    while (n > 0 && isspace((unsigned char)type[n - 1]))
        n--;
    return n == strlen(want) && strncasecmp(type, want, n) == 0;
}

/* ---- the request's life ---------------------------------------------------- */

void *serve_on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct serve *srv = cls;
    struct serve_req *req = calloc(1, sizeof(*req));
    const char *q = uri ? strchr(uri, '?') : NULL;

    if (!req)
        return NULL;
    req->srv = srv;
    req->conn = conn;
    req->start_ns = serve_now_ns();
    if (q)
        req->raw_query = strdup(q + 1);
    req->next = srv->http->reqs;
    if (srv->http->reqs)
        srv->http->reqs->prev = req;
    srv->http->reqs = req;
    return req;
}

void serve_on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                        enum MHD_RequestTerminationCode toe)
{
    struct serve *srv = cls;
    struct serve_req *req = *con_cls;

    (void)conn;
    (void)toe;
    if (!req)
        return;
    *con_cls = NULL;
    if (req->stream)
        serve_stream_gone(req);
    if (req->prev)
        req->prev->next = req->next;
    else
        srv->http->reqs = req->next;
    if (req->next)
        req->next->prev = req->prev;
    serve_query_free(&req->query);
    free(req->raw_query);
    free(req->body);
    free(req);
}

/* ---- the checks when the headers are in ------------------------------------ */

/* An Origin, when the request shows one, is the origin of its Host (which
 * names this server), and the browser does not call it cross-site. */
static bool same_origin(const struct serve_req *req)
{
    const char *origin = serve_header(req, "Origin");
    const char *host = serve_header(req, MHD_HTTP_HEADER_HOST);
    const char *site = serve_header(req, "Sec-Fetch-Site");

    if (site && strcasecmp(site, "cross-site") == 0)
        return false;
    if (!origin)
        return true;
    return host && strncasecmp(origin, "http://", 7) == 0 &&
           strcasecmp(origin + 7, host) == 0;
}

static bool is_logout(const struct serve_route *route)
{
    return route->handler == serve_post_logout;
}

/* The checks of a POST's headers: NULL, or the refusal's status and text. */
static unsigned check_post(struct serve_req *req, const char **why)
{
    const struct serve_route *r = req->route;
    const char *type = serve_header(req, MHD_HTTP_HEADER_CONTENT_TYPE);
    const char *length = serve_header(req, MHD_HTTP_HEADER_CONTENT_LENGTH);
    struct serve_session *sess = serve_auth_request(req);
    const char *csrf = serve_header(req, "X-CSRF-Token");

    *why =
        "Forbidden: a request from another origin (the Origin must be this server's)";
    if (!same_origin(req))
        return 403;
    if (r->flags & SERVE_CHANGES) {
        *why =
            "Forbidden: missing or wrong X-CSRF-Token (the csrf of GET /api/session)";
        if (!sess || !csrf || !serve_same_secret(csrf, sess->csrf))
            return 403;
        *why = "Unsupported Media Type: the body must be application/json";
        if (!serve_media_is(type, "application/json"))
            return 415;
        *why = "Forbidden: the server is read-only (--read-only)";
        if (req->srv->opts.read_only && !is_logout(r))
            return 403;
    } else if (!serve_media_is(type, "application/x-www-form-urlencoded") &&
               !serve_media_is(type, "application/json")) {
        *why = "Unsupported Media Type: the body must be "
               "application/x-www-form-urlencoded or application/json";
        return 415;
    }
    *why = "Payload Too Large: a body is at most 1 MiB";
    if (length && strtoull(length, NULL, 10) > SERVE_BODY_MAX)
        return SERVE_TOO_LARGE;
    return 0;
}

/* Route, run id, query, session: 0, or the refusal queued in *ret. */
static int check_route(struct serve_req *req, const char *url, const char *method,
                       enum MHD_Result *ret)
{
    char err[256];
    int rc = serve_route_find(method, url, &req->route, req->arg, sizeof(req->arg));

    if (rc == 405)
        serve_route_methods(url, req->allow, sizeof(req->allow));
    if (rc == 404)
        *ret = serve_reply_error(req, 404, "Not Found: no such path");
    else if (rc == 405)
        *ret = serve_reply_error(req, 405, "Method Not Allowed: not %s (%s)", method,
                                 req->allow);
    else if ((req->route->flags & SERVE_RUN_ARG) &&
             lil_run_id_check(req->arg) != LIL_OK)
        *ret = serve_reply_error(req, 400, "Bad Request: invalid run id");
    else if (serve_query_parse(req->raw_query ? req->raw_query : "",
                               req->raw_query ? strlen(req->raw_query) : 0, &req->query,
                               err, sizeof(err)) != 0)
        *ret = serve_reply_error(req, 400, "Bad Request: query: %s", err);
    else if (!(req->route->flags & SERVE_PUBLIC) && !serve_auth_request(req))
        *ret = serve_reply_error(req, 401,
                                 "Unauthorized: log in first (the login URL "
                                 "lil serve printed)");
    else
        return 0;
    return -1;
}

static enum MHD_Result first_call(struct serve_req *req, const char *url,
                                  const char *method)
{
    enum MHD_Result ret = MHD_NO;
    const char *why;
    unsigned status;

    if (!serve_host_ok(req))
        return serve_reply_error(req, 403,
                                 "Forbidden: the Host header must name this server (a "
                                 "loopback name or the --listen host, with its port): "
                                 "DNS rebinding refused");
    if (check_route(req, url, method, &ret) != 0)
        return ret;
    if (strcmp(method, "POST") != 0)
        return MHD_YES; /* answered once the request is in */
    status = check_post(req, &why);
    if (status != 0)
        return serve_reply_error(req, status, "%s", why);
    req->is_post = true;
    return MHD_YES; /* the body comes next */
}

/* ---- the body and the answer ----------------------------------------------- */

static void collect_body(struct serve_req *req, const char *data, size_t len)
{
    size_t cap = req->body_cap;
    char *grown;

    if (!req->is_post || req->too_big)
        return;
    if (req->body_len + len > SERVE_BODY_MAX) {
        req->too_big = true;
        return;
    }
    while (cap < req->body_len + len + 1)
        cap = cap ? cap * 2 : 4096;
    if (cap != req->body_cap) {
        grown = realloc(req->body, cap);
        if (!grown) {
            req->too_big = true;
            return;
        }
        req->body = grown;
        req->body_cap = cap;
    }
    memcpy(req->body + req->body_len, data, len);
    req->body_len += len;
    req->body[req->body_len] = '\0';
}

/* The body as a JSON object (an empty body: {}): 0 and *out, or -1 with the
 * refusal queued in *ret. */
static int parse_body(struct serve_req *req, json_t **out, enum MHD_Result *ret)
{
    json_error_t e;

    *out = NULL;
    if (req->body_len == 0) {
        *out = json_object();
        return *out ? 0 : -1;
    }
    *out = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &e);
    if (!*out) {
        *ret = serve_reply_error(req, 400,
                                 "Bad Request: the body is not JSON: line %d "
                                 "column %d: %s",
                                 e.line, e.column, e.text);
        return -1;
    }
    if (!json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        *ret =
            serve_reply_error(req, 400, "Bad Request: the body must be a JSON object");
        return -1;
    }
    return 0;
}

/* Call the route's handler and send its answer. */
static enum MHD_Result call_handler(struct serve_req *req, json_t *body)
{
    struct serve_session *sess = serve_auth_request(req);
    struct serve_call c = {req->srv, sess, req->arg, &req->query, body};
    struct serve_answer a = {200, NULL, NULL};
    enum MHD_Result ret;

    if (!sess && !(req->route->flags & SERVE_PUBLIC))
        return serve_reply_error(req, 401, "Unauthorized: the session ended");
    req->route->handler(&c, &a); /* sess may be gone after a logout */
    if (!a.json && !a.text)
        serve_fail(&a, 500, "Internal Server Error: no answer");
    if (a.status == 200 && is_logout(req->route))
        snprintf(req->set_cookie, sizeof(req->set_cookie),
                 SERVE_SESSION_COOKIE
                 "=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0");
    if (a.text)
        ret = serve_reply_text(req, a.status ? a.status : 200, a.text);
    else
        ret = serve_reply_json(req, a.status ? a.status : 200, a.json);
    serve_text_unref(a.text);
    json_decref(a.json);
    return ret;
}

/* Queue the page's file name (404 when there is none). */
enum MHD_Result serve_asset_reply(struct serve_req *req, const char *name)
{
    const struct serve_asset *a = serve_asset_find(name);

    union {
        const unsigned char *bytes;
        void *buf;
    } data; /* libmicrohttpd takes void *; it only reads a persistent buffer */
    struct MHD_Response *resp;

    if (!a)
        return serve_reply_error(req, 404, "Not Found: no such file");
    data.bytes = a->data;
    resp = MHD_create_response_from_buffer(a->len, data.buf, MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, serve_asset_type(name));
    return serve_queue(req, 200, resp, false);
}

/* The routes served here rather than by a handler: the page's files, the
 * login, the event stream. */
static enum MHD_Result answer_special(struct serve_req *req)
{
    const struct serve_route *r = req->route;

    if (r->flags & SERVE_STREAM)
        return serve_stream_open(req, &req->query);
    if (strcmp(r->pattern, "/login") == 0)
        return req->is_post ? serve_login_post(req) : serve_login_get(req, &req->query);
    return serve_asset_reply(req,
                             strcmp(r->pattern, "/") == 0 ? "index.html" : req->arg);
}

/* The request is in: answer it. */
static enum MHD_Result last_call(struct serve_req *req)
{
    enum MHD_Result ret = MHD_NO;
    json_t *body = NULL;

    if (req->too_big)
        return serve_reply_error(req, SERVE_TOO_LARGE,
                                 "Payload Too Large: a body is at most 1 MiB");
    if (!req->route->handler)
        return answer_special(req);
    if (req->is_post && parse_body(req, &body, &ret) != 0)
        return ret;
    ret = call_handler(req, body);
    json_decref(body);
    return ret;
}

enum MHD_Result serve_on_request(void *cls, struct MHD_Connection *conn,
                                 const char *url, const char *method,
                                 const char *version, const char *upload_data,
                                 size_t *upload_data_size, void **con_cls)
{
    struct serve_req *req = *con_cls;

    (void)cls;
    (void)conn;
    (void)version;
    if (!req)
        return MHD_NO; /* no memory when it began */
    if (!req->started) {
        req->started = true;
        return first_call(req, url, method);
    }
    if (*upload_data_size > 0) {
        collect_body(req, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (req->answered)
        return MHD_YES;
    return last_call(req);
}
