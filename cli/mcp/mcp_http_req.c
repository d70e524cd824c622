/*
 * mcp_http_req.c -- each request of the Streamable HTTP transport
 * (mcp_http.h): after the checks of mcp_http_check.c, POST (messages in),
 * GET (the session's standalone event stream) and DELETE (the session
 * ends).
 *
 * A request names its session with Mcp-Session-Id: one not known is 404
 * (the client starts a new one); none is 400 unless the POST holds a lone
 * initialize request, which makes the session (503 when the server has no
 * room).  A POST's messages go to mcp_receive with the request's out.
 * When every request in them is answered before mcp_receive returns, the
 * answer is one JSON document (202 without a body when they held none);
 * otherwise the response is an event stream that ends after the last
 * answer.  A GET opens the session's stream for what is not tied to a
 * request (one at a time: 409); DELETE ends the session.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_http.h"

/* The session the request names: 0 and *out (NULL when it names none), or
 * -1 when it names one not known (the answer is queued: 404). */
static int named_session(struct http_req *req, struct http_sess **out,
                         enum MHD_Result *ret)
{
    const char *id = http_header(req, "Mcp-Session-Id");
    struct mcp_session *s;

    *out = NULL;
    if (!id)
        return 0;
    s = mcp_session_find(req->h->srv, id);
    if (!s || !s->id[0]) {
        *ret = http_reply_error(req, MHD_HTTP_NOT_FOUND, -32001,
                                "Session not found: initialize a new session");
        return -1;
    }
    *out = s->transport;
    (*out)->last_ms = http_now_ms();
    req->sess = *out;
    return 0;
}

/* A request with a session (GET, DELETE): 0 and *out, or -1 with the
 * refusal queued in *ret. */
static int need_session(struct http_req *req, struct http_sess **out,
                        enum MHD_Result *ret)
{
    if (named_session(req, out, ret) != 0)
        return -1;
    if (!*out) {
        *ret = http_reply_error(req, MHD_HTTP_BAD_REQUEST, -32000,
                                "Bad Request: missing Mcp-Session-Id header");
        return -1;
    }
    if (!http_version_ok(req)) {
        *ret = http_bad_version(req);
        return -1;
    }
    return 0;
}

/* ---- GET and DELETE ------------------------------------------------------ */

static enum MHD_Result on_get(struct http_req *req)
{
    struct http_sess *hs;
    enum MHD_Result ret = MHD_NO;

    if (!http_accepts(http_header(req, MHD_HTTP_HEADER_ACCEPT), "text/event-stream"))
        return http_reply_error(req, MHD_HTTP_NOT_ACCEPTABLE, -32000,
                                "Not Acceptable: a GET must accept text/event-stream");
    if (need_session(req, &hs, &ret) != 0)
        return ret;
    if (hs->get_stream)
        return http_reply_error(req, MHD_HTTP_CONFLICT, -32000,
                                "Conflict: the session's event stream is already open");
    req->is_get = true;
    hs->get_stream = req;
    return http_stream_start(req);
}

static enum MHD_Result on_delete(struct http_req *req)
{
    struct http_sess *hs;
    enum MHD_Result ret = MHD_NO;

    if (need_session(req, &hs, &ret) != 0)
        return ret;
    http_sess_end(req->h, hs);
    return http_reply(req, MHD_HTTP_OK, NULL, NULL, 0);
}

/* ---- POST ---------------------------------------------------------------- */

static void post_send(struct mcp_out *o, json_t *msg)
{
    struct http_req *req = (struct http_req *)o;

    if (req->in_receive || !req->streaming)
        json_array_append(req->gathered, msg);
    else
        http_stream_event(req, msg);
}

static void post_done(struct mcp_out *o)
{
    struct http_req *req = (struct http_req *)o;

    req->out_done = true;
    if (req->streaming)
        http_stream_close(req);
}

static void post_body(struct http_req *req, const char *data, size_t len)
{
    if (req->method != 'P' || req->too_big)
        return;
    if (req->body_len + len > MCP_MESSAGE_MAX) {
        req->too_big = true;
        return;
    }
    if (!mcp_append(&req->body, &req->body_len, &req->body_cap, data, len))
        req->too_big = true;
}

/* Answer a POST whose answers are all in: one JSON document, several as
 * a finished event stream, none as 202. */
static enum MHD_Result post_answer_now(struct http_req *req)
{
    size_t n = json_array_size(req->gathered);
    char *text;
    enum MHD_Result ret;

    if (n == 0)
        return http_reply(req, MHD_HTTP_ACCEPTED, NULL, NULL, 0);
    if (n > 1) {
        for (size_t i = 0; i < n; i++)
            http_stream_event(req, json_array_get(req->gathered, i));
        req->closed = true;
        return http_stream_start(req);
    }
    text = json_dumps(json_array_get(req->gathered, 0), JSON_COMPACT);
    if (!text)
        return MHD_NO;
    ret = http_reply(req, MHD_HTTP_OK, "application/json", text, strlen(text));
    free(text);
    return ret;
}

/* Answer a POST whose answers are not all in: an event stream, what was
 * gathered first (progress), the rest as it comes. */
static enum MHD_Result post_answer_later(struct http_req *req)
{
    for (size_t i = 0; i < json_array_size(req->gathered); i++)
        http_stream_event(req, json_array_get(req->gathered, i));
    json_array_clear(req->gathered);
    return http_stream_start(req);
}

/* The message is an initialize request (a lone one, not in a batch). */
static bool is_initialize(json_t *msg, enum mcp_kind kind)
{
    const char *method = json_string_value(json_object_get(msg, "method"));

    return kind == MCP_MSG_REQUEST && method && strcmp(method, "initialize") == 0;
}

/* Find or make the session of a POST: 0, or -1 with the refusal queued. */
static int post_session(struct http_req *req, bool init, enum MHD_Result *ret)
{
    struct http_sess *hs;

    if (named_session(req, &hs, ret) != 0)
        return -1;
    if (!hs && !init) {
        *ret = http_reply_error(req, MHD_HTTP_BAD_REQUEST, -32000,
                                "Bad Request: missing Mcp-Session-Id header (only an "
                                "initialize request starts a session)");
        return -1;
    }
    if (hs && !init && !http_version_ok(req)) {
        *ret = http_bad_version(req);
        return -1;
    }
    if (!hs) {
        hs = http_sess_new(req->h);
        if (!hs) {
            *ret = http_reply_error(req, MHD_HTTP_SERVICE_UNAVAILABLE, -32000,
                                    "Service Unavailable: too many sessions");
            return -1;
        }
        req->sess = hs;
    }
    return 0;
}

/* The body is in: hand it to the core and answer. */
static enum MHD_Result post_message(struct http_req *req)
{
    json_t *msg = NULL, *err = NULL;
    enum mcp_kind kind = MCP_MSG_REQUEST;
    enum MHD_Result ret = MHD_NO;
    bool init, made;

    if (req->too_big)
        return http_reply_error(req, HTTP_TOO_LARGE, -32000,
                                "Payload Too Large: a message is at most 4 MiB");
    mcp_rpc_decode(req->body ? req->body : "", req->body_len, &msg, &kind, &err);
    if (err) {
        char *text = json_dumps(err, JSON_COMPACT);
        json_decref(err);
        ret = http_reply(req, MHD_HTTP_BAD_REQUEST, "application/json", text,
                         text ? strlen(text) : 0);
        free(text);
        return ret;
    }
    init = is_initialize(msg, kind);
    json_decref(msg);
    made = !http_header(req, "Mcp-Session-Id");
    if (post_session(req, init, &ret) != 0)
        return ret;
    req->gathered = json_array();
    if (!req->gathered)
        return MHD_NO;
    req->out.send = post_send;
    req->out.done = post_done;
    req->received = req->in_receive = true;
    mcp_receive(req->h->srv, req->sess->s, req->body, req->body_len, &req->out);
    req->in_receive = false;
    if (made && req->out_done && !req->sess->s->version[0]) {
        http_sess_end(req->h, req->sess); /* initialize refused: no session */
        req->sess = NULL;
    }
    if (req->out_done)
        return post_answer_now(req);
    return post_answer_later(req);
}

/* ---- the handler ----------------------------------------------------------- */

static struct http_req *req_new(struct http_srv *h, struct MHD_Connection *conn)
{
    struct http_req *req = calloc(1, sizeof(*req));

    if (!req)
        return NULL;
    req->h = h;
    req->conn = conn;
    req->next = h->reqs;
    if (h->reqs)
        h->reqs->prev = req;
    h->reqs = req;
    return req;
}

static enum MHD_Result first_call(struct http_req *req, const char *url,
                                  const char *method)
{
    bool refused;
    enum MHD_Result ret = http_check_common(req, url, method, &refused);

    if (refused)
        return ret;
    req->method = method[0];
    if (req->method != 'P')
        return MHD_YES; /* answered once the request is in (the connection stays) */
    return http_check_post(req, &refused); /* the body comes next */
}

/* The request is in: answer it. */
static enum MHD_Result last_call(struct http_req *req)
{
    if (req->method == 'G')
        return on_get(req);
    if (req->method == 'D')
        return on_delete(req);
    return post_message(req);
}

enum MHD_Result http_on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                const char *method, const char *version,
                                const char *upload_data, size_t *upload_data_size,
                                void **con_cls)
{
    struct http_req *req = *con_cls;

    (void)version;
    if (!req) {
        req = req_new(cls, conn);
        if (!req)
            return MHD_NO;
        *con_cls = req;
        return first_call(req, url, method);
    }
    if (*upload_data_size > 0) {
        post_body(req, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    return last_call(req);
}

void http_on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                       enum MHD_RequestTerminationCode toe)
{
    struct http_srv *h = cls;
    struct http_req *req = *con_cls;

    (void)conn;
    (void)toe;
    if (!req)
        return;
    *con_cls = NULL;
    if (req->received && !req->out_done)
        mcp_out_abandon(h->srv, &req->out); /* the client went away first */
    if (req->is_get && req->sess && req->sess->get_stream == req)
        req->sess->get_stream = NULL;
    if (req->prev)
        req->prev->next = req->next;
    else
        h->reqs = req->next;
    if (req->next)
        req->next->prev = req->prev;
    json_decref(req->gathered);
    free(req->body);
    free(req->sse);
    free(req);
}
