/*
 * serve_http.h -- what the core files of `lil serve` share (serve.h):
 * serve_http.c (the daemon, its loop, the headers every answer carries),
 * serve_request.c (one request), serve_stream.c (event streams),
 * serve_assets.c (the page's files) and serve_auth.c (the login).
 *
 * One thread: libmicrohttpd runs in external polling mode; its callbacks
 * are called from MHD_run in the loop of serve_http.c.  A request is a
 * struct serve_req from its first byte (libmicrohttpd's URI log callback,
 * which also keeps the raw query) to its end (the completed callback).
 */
#ifndef LIL_CLI_SERVE_HTTP_H
#define LIL_CLI_SERVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "serve.h"

#define SERVE_TOO_LARGE      413 /* its name changed between libmicrohttpd releases */
#define SERVE_ARG_MAX        256 /* bytes of the path's {id} segment */
#define SERVE_SESSION_COOKIE "lil_session"

struct serve_stream;

/* One request being answered (libmicrohttpd's per-request pointer). */
struct serve_req {
    struct serve *srv;
    struct MHD_Connection *conn;
    int64_t start_ns; /* its first byte (monotonic) */
    char *raw_query;  /* the query string as sent (after '?'), or NULL */
    bool started;     /* the access handler has seen it */
    bool answered;    /* an answer is queued */
    bool is_post;     /* the body is collected */
    const struct serve_route *route;
    char arg[SERVE_ARG_MAX + 1];
    struct serve_query query; /* the query string, parsed */
    char set_cookie[160];     /* a Set-Cookie the answer carries, or "" */
    char allow[32];           /* an Allow the answer carries (405), or "" */
    bool retry_later;         /* the answer carries Retry-After: 1 (503) */
    char *body;               /* a POST's body as it comes */
    size_t body_len, body_cap;
    bool too_big;                /* the body went over SERVE_BODY_MAX: dropped */
    struct serve_stream *stream; /* an event stream's (serve_stream.c) */
    struct serve_req *prev, *next;
};

/* What serve_http.c keeps. */
struct serve_http {
    struct MHD_Daemon *d;
    unsigned port;          /* the port bound */
    char bind_host[80];     /* the address bound, as a URL prints it */
    char listen_host[256];  /* the host of --listen, as given */
    bool wildcard;          /* bound to 0.0.0.0 or :: */
    bool run_again;         /* a connection was resumed: MHD_run soon */
    struct serve_req *reqs; /* every request in flight */
};

/* ---- serve_http.c ------------------------------------------------------ */

int64_t serve_now_ns(void);
/* A request header's value, or NULL. */
const char *serve_header(const struct serve_req *req, const char *name);
/* The Host header names this server: a loopback name or address, the
 * --listen host or the address bound, with the port bound (or an IP
 * address with the port when bound to every address). */
bool serve_host_ok(const struct serve_req *req);
/* Add the headers every answer carries (CSP, nosniff, no referrer, no
 * frames, Server-Timing; Cache-Control: no-store when api) and queue resp
 * (destroyed).  MHD_NO when it could not be queued. */
enum MHD_Result serve_queue(struct serve_req *req, unsigned status,
                            struct MHD_Response *resp, bool api);
/* Queue len bytes of body (copied) of content_type. */
enum MHD_Result serve_reply(struct serve_req *req, unsigned status,
                            const char *content_type, const void *body, size_t len,
                            bool api);
/* Queue a JSON document (doc borrowed). */
enum MHD_Result serve_reply_json(struct serve_req *req, unsigned status, json_t *doc);
/* Queue JSON text made already (t borrowed: the answer holds a reference
 * of its own until libmicrohttpd has sent it; its bytes are not copied). */
enum MHD_Result serve_reply_text(struct serve_req *req, unsigned status,
                                 struct serve_text *t);
/* Queue {"error": message} with status. */
enum MHD_Result serve_reply_error(struct serve_req *req, unsigned status,
                                  const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- serve_route.c ------------------------------------------------------ */

/* The methods path is served with ("GET, POST"), into out. */
void serve_route_methods(const char *path, char *out, size_t len);

/* ---- serve_request.c ---------------------------------------------------- */

void *serve_on_uri(void *cls, const char *uri, struct MHD_Connection *conn);
enum MHD_Result serve_on_request(void *cls, struct MHD_Connection *conn,
                                 const char *url, const char *method,
                                 const char *version, const char *upload_data,
                                 size_t *upload_data_size, void **con_cls);
void serve_on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                        enum MHD_RequestTerminationCode toe);
/* Queue the page's file name (GET /, GET /<file>); 404 when there is
 * none. */
enum MHD_Result serve_asset_reply(struct serve_req *req, const char *name);
/* The media type of a Content-Type is want (parameters and case aside). */
bool serve_media_is(const char *type, const char *want);

/* ---- serve_auth.c --------------------------------------------------------- */

/* GET /login and POST /login (the body parsed as a form or JSON). */
enum MHD_Result serve_login_get(struct serve_req *req, const struct serve_query *q);
enum MHD_Result serve_login_post(struct serve_req *req);
/* The session a request's Cookie names (its last use noted), or NULL. */
struct serve_session *serve_auth_request(struct serve_req *req);
/* A user name is acceptable: 1 to SERVE_USER_MAX bytes of UTF-8, no
 * control character. */
bool serve_user_ok(const char *user);
/* Bytes of random lower-case hex: SERVE_SECRET_HEX of them and a NUL.
 * 0, or -1 (no random bytes). */
int serve_random_hex(char out[SERVE_SECRET_HEX + 1]);

/* ---- serve_stream.c ------------------------------------------------------- */

/* Answer GET /api/stream for req's session (503 when full). */
enum MHD_Result serve_stream_open(struct serve_req *req, const struct serve_query *q);
/* The request ended: forget its stream. */
void serve_stream_gone(struct serve_req *req);
/* Close the streams of sess (it ended), or every stream (sess NULL). */
void serve_streams_close(struct serve *srv, const struct serve_session *sess);
/* Keep-alives on quiet streams; the ms until the next is due (-1: none). */
int64_t serve_streams_keepalive(struct serve *srv, int64_t now_ms);
void serve_streams_free(struct serve *srv);

/* ---- serve_assets.c ------------------------------------------------------- */

struct serve_asset {
    const char *name; /* "app.js" */
    const unsigned char *data;
    size_t len;
};

/* The asset named name ("index.html"), or NULL. */
const struct serve_asset *serve_asset_find(const char *name);
/* Its Content-Type, by the name's extension. */
const char *serve_asset_type(const char *name);

#endif
