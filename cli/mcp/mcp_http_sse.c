/*
 * mcp_http_sse.c -- the responses of the Streamable HTTP transport
 * (mcp_http.h): a whole answer at once (JSON, or an error as a JSON-RPC
 * error with id null), and event streams.
 *
 * An event stream is a response of unknown length whose bytes come from
 * the request's buffer: each message an event (`event: message`, `id: N`,
 * `data: JSON`, a blank line), a comment `: keepalive` when it was quiet
 * for HTTP_KEEPALIVE_MS.  When the buffer is empty the reader suspends the
 * connection (libmicrohttpd would otherwise ask again at once); what
 * appends to the buffer resumes it.  A stream closed ends once its buffer
 * is sent.  A client gone is seen when a write fails: at the latest with
 * the next keep-alive.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_http.h"

/* The session's id; for a browser's request from an Origin allowed, the
 * CORS headers that let its page read the answer. */
static void add_headers(struct http_req *req, struct MHD_Response *resp)
{
    if (req->sess && req->sess->s->id[0])
        MHD_add_response_header(resp, "Mcp-Session-Id", req->sess->s->id);
    if (req->origin) {
        MHD_add_response_header(resp, "Access-Control-Allow-Origin", req->origin);
        MHD_add_response_header(resp, "Access-Control-Expose-Headers",
                                "Mcp-Session-Id, WWW-Authenticate");
        MHD_add_response_header(resp, "Vary", "Origin");
    }
}

static enum MHD_Result queue(struct http_req *req, unsigned status,
                             struct MHD_Response *resp)
{
    enum MHD_Result ret;

    if (!resp)
        return MHD_NO;
    add_headers(req, resp);
    ret = MHD_queue_response(req->conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

enum MHD_Result http_reply(struct http_req *req, unsigned status,
                           const char *content_type, const char *body, size_t len)
{
    char *copy = len > 0 ? malloc(len) : NULL;
    struct MHD_Response *resp;

    if (len > 0 && !copy)
        return MHD_NO;
    if (copy)
        memcpy(copy, body, len);
    resp = MHD_create_response_from_buffer(len, copy, MHD_RESPMEM_MUST_FREE);
    if (!resp)
        free(copy);
    if (resp && content_type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    return queue(req, status, resp);
}

enum MHD_Result http_reply_preflight(struct http_req *req)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);

    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Access-Control-Allow-Methods", "GET, POST, DELETE");
    MHD_add_response_header(resp, "Access-Control-Allow-Headers",
                            "Authorization, Content-Type, Accept, Mcp-Session-Id, "
                            "MCP-Protocol-Version, Last-Event-ID");
    MHD_add_response_header(resp, "Access-Control-Max-Age", "600");
    return queue(req, MHD_HTTP_NO_CONTENT, resp);
}

enum MHD_Result http_reply_error(struct http_req *req, unsigned status, int code,
                                 const char *message)
{
    json_t *err = mcp_rpc_error(NULL, code, message, NULL);
    char *text = err ? json_dumps(err, JSON_COMPACT) : NULL;
    struct MHD_Response *resp;

    json_decref(err);
    if (!text)
        return MHD_NO;
    resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    if (status == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, POST, DELETE");
    return queue(req, status, resp);
}

/* ---- event streams ------------------------------------------------------- */

static void wake(struct http_req *req)
{
    if (req->suspended) {
        req->suspended = false;
        MHD_resume_connection(req->conn);
        req->h->run_again = true;
    }
}

static bool buffer(struct http_req *req, const char *text, size_t len)
{
    if (req->sse_off > 0 && req->sse_off == req->sse_len)
        req->sse_off = req->sse_len = 0;
    return mcp_append(&req->sse, &req->sse_len, &req->sse_cap, text, len);
}

void http_stream_event(struct http_req *req, json_t *msg)
{
    char head[64];
    char *text;
    int n;

    if (req->closed)
        return;
    text = json_dumps(msg, JSON_COMPACT);
    if (!text)
        return;
    n = snprintf(head, sizeof(head), "event: message\nid: %llu\ndata: ",
                 (unsigned long long)++req->h->event_id);
    if (buffer(req, head, (size_t)n) && buffer(req, text, strlen(text)))
        (void)buffer(req, "\n\n", 2);
    free(text);
    req->last_write_ms = http_now_ms();
    wake(req);
}

int64_t http_stream_keepalive(struct http_req *req, int64_t now)
{
    static const char comment[] = ": keepalive\n\n";
    int64_t due = req->last_write_ms + HTTP_KEEPALIVE_MS;

    if (req->closed)
        return -1;
    if (now < due)
        return due - now;
    (void)buffer(req, comment, sizeof(comment) - 1);
    req->last_write_ms = now;
    wake(req);
    return HTTP_KEEPALIVE_MS;
}

void http_stream_close(struct http_req *req)
{
    req->closed = true;
    wake(req);
}

static ssize_t read_stream(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct http_req *req = cls;
    size_t n = req->sse_len - req->sse_off;

    (void)pos;
    if (n > 0) {
        if (n > max)
            n = max;
        memcpy(buf, req->sse + req->sse_off, n);
        req->sse_off += n;
        return (ssize_t)n;
    }
    if (req->closed)
        return MHD_CONTENT_READER_END_OF_STREAM;
    req->suspended = true;
    MHD_suspend_connection(req->conn);
    return 0;
}

enum MHD_Result http_stream_start(struct http_req *req)
{
    struct MHD_Response *resp = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, 16384, read_stream, req, NULL);

    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
                            "no-cache, no-transform");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    req->streaming = true;
    req->last_write_ms = http_now_ms();
    return queue(req, MHD_HTTP_OK, resp);
}
