/*
 * mcp_http.h -- the pieces of the Streamable HTTP transport of `lil mcp`
 * (mcp.h): what mcp_http.c (the daemon, its loop, the sessions),
 * mcp_http_check.c (what each request must show), mcp_http_req.c (each
 * request: POST, GET, DELETE) and mcp_http_sse.c (responses and event
 * streams) share.
 *
 * One thread: libmicrohttpd runs in external polling mode, its callbacks
 * are called from MHD_run in the loop of mcp_http.c, as is everything the
 * server core does.  An event stream that has nothing to send suspends its
 * connection; a message or a keep-alive for it resumes the connection.
 */
#ifndef LIL_CLI_MCP_HTTP_H
#define LIL_CLI_MCP_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "mcp.h"

#define HTTP_PATH            "/mcp"
#define HTTP_KEEPALIVE_MS    15000   /* a comment on a quiet event stream */
#define HTTP_SESSION_IDLE_MS 3600000 /* a session unused this long ends */
#define HTTP_TOO_LARGE       413 /* its name changed between libmicrohttpd releases */
#define HTTP_TOKEN_MAX       256 /* bytes of a token from the environment */

struct http_sess;

/* One HTTP request being answered (libmicrohttpd's per-request pointer). */
struct http_req {
    struct mcp_out out; /* first: a POST's answers (the core calls it) */
    struct http_srv *h;
    struct MHD_Connection *conn;
    struct http_sess *sess; /* its session, or NULL (none, or it ended) */
    const char *origin;     /* its Origin once allowed (libmicrohttpd's), or NULL */
    char method;            /* 'P'OST, 'G'ET or 'D'ELETE */
    /* POST: the body as it comes */
    char *body;
    size_t body_len, body_cap;
    bool too_big;     /* the body went over MCP_MESSAGE_MAX: dropped */
    bool received;    /* handed to mcp_receive */
    bool in_receive;  /* mcp_receive is running: answers are gathered */
    bool out_done;    /* the core called done */
    json_t *gathered; /* the answers given while in_receive */
    /* an event stream (the answer of a POST, or a session's GET stream) */
    bool streaming;
    bool is_get;    /* the session's standalone stream */
    bool closed;    /* nothing more will come: end after what is buffered */
    bool suspended; /* the connection waits for something to send */
    char *sse;      /* bytes not yet handed to libmicrohttpd */
    size_t sse_off, sse_len, sse_cap;
    int64_t last_write_ms;
    struct http_req *prev, *next; /* every request of the daemon */
};

/* What the transport keeps of one session (mcp_session.transport). */
struct http_sess {
    struct mcp_session *s;
    struct http_req *get_stream; /* its standalone stream, or NULL */
    int64_t last_ms;             /* when a request last named it */
};

struct http_srv {
    struct mcp_server *srv;
    struct MHD_Daemon *d;
    unsigned port;      /* the port bound */
    char bind_host[64]; /* the address bound, as printed: 127.0.0.1, [::1] */
    char token[HTTP_TOKEN_MAX + 1];
    bool need_token; /* not --no-token */
    struct http_req *reqs;
    uint64_t event_id; /* the last event's id */
    bool run_again;    /* a connection was resumed: MHD_run soon */
};

/* ---- mcp_http.c ------------------------------------------------------------ */

int64_t http_now_ms(void);
/* A new session with its transport record, or NULL (the server is full of
 * busy sessions, or out of memory).  An idle session may be ended to make
 * room (the least recently used). */
struct http_sess *http_sess_new(struct http_srv *h);
/* End a session: its streams close, its requests lose their session. */
void http_sess_end(struct http_srv *h, struct http_sess *hs);

/* ---- mcp_http_req.c -------------------------------------------------------- */

/* libmicrohttpd's access handler and request-completed callback. */
enum MHD_Result http_on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                const char *method, const char *version,
                                const char *upload_data, size_t *upload_data_size,
                                void **con_cls);
void http_on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                       enum MHD_RequestTerminationCode toe);

/* ---- mcp_http_check.c ------------------------------------------------------ */

/* A request header's value, or NULL. */
const char *http_header(struct http_req *req, const char *name);
/* The Accept header allows type ("text/event-stream"): it lists it, its
 * family ("text/ *") or anything. */
bool http_accepts(const char *accept, const char *type);
/* Host, Origin, token, path, method: MHD_YES and *refused false, or the
 * refusal queued (403, 401, 404, 405). */
enum MHD_Result http_check_common(struct http_req *req, const char *url,
                                  const char *method, bool *refused);
/* A POST's Content-Type, Accept and Content-Length (415, 406, 413). */
enum MHD_Result http_check_post(struct http_req *req, bool *refused);
/* A MCP-Protocol-Version header, when given, is one served; else the
 * refusal (400). */
bool http_version_ok(struct http_req *req);
enum MHD_Result http_bad_version(struct http_req *req);

/* ---- mcp_http_sse.c -------------------------------------------------------- */

/* Queue a JSON-RPC error answer {"jsonrpc","id":null,"error":{code,
 * message}} with an HTTP status (401 with WWW-Authenticate: Bearer, 405
 * with Allow: GET, POST, DELETE). */
enum MHD_Result http_reply_error(struct http_req *req, unsigned status, int code,
                                 const char *message);
/* Queue a response: len bytes of body (len 0: none) of content_type (may
 * be NULL).  Every response names the request's session (Mcp-Session-Id)
 * when it has one, and carries CORS headers when the request came with an
 * Origin allowed. */
enum MHD_Result http_reply(struct http_req *req, unsigned status,
                           const char *content_type, const char *body, size_t len);
/* Queue 204 with what a browser's preflight asks (methods, headers). */
enum MHD_Result http_reply_preflight(struct http_req *req);
/* Queue a 200 event stream for req; what is buffered goes first. */
enum MHD_Result http_stream_start(struct http_req *req);
/* Append one message as an event (`event: message`, `id:`, `data:`). */
void http_stream_event(struct http_req *req, json_t *msg);
/* Append a keep-alive comment when the stream was quiet long enough;
 * returns the ms until the next one is due. */
int64_t http_stream_keepalive(struct http_req *req, int64_t now);
/* End the stream after what is buffered. */
void http_stream_close(struct http_req *req);

#endif
