/*
 * serve_stream.c -- the server-sent events of `lil serve` (serve.h,
 * serve_http.h): GET /api/stream[?run=ID].
 *
 * A stream is a response of unknown length whose bytes come from its
 * buffer: first `event: hello` ({"server_ms"}: the server's clock, ms
 * since the epoch), then each event broadcast to it (`event: TYPE`,
 * `data: JSON`, a blank line), and a comment `: keepalive` when it was
 * quiet for SERVE_KEEPALIVE_MS.  An event broadcast is turned into text
 * once, whatever the number of streams.  When the buffer is empty the reader
 * suspends the connection; what appends to the buffer resumes it.  A
 * stream ends when its session ends (logout), when the server stops, or
 * when its client reads too slowly (more than STREAM_BUFFER_MAX bytes
 * waiting); a client gone is seen when a write fails.  At most
 * SERVE_STREAMS_MAX streams at once: past it, 503, and a write to every
 * stream, so the slots of clients gone are free for the next try.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve_http.h"

#define STREAM_BUFFER_MAX (8u << 20) /* bytes a slow reader may leave waiting */

struct serve_stream {
    struct serve_req *req;
    const struct serve_session *sess; /* NULL once it ended */
    char run[LIL_RUN_ID_MAX + 1];     /* the run watched, or "" */
    char *buf;
    size_t off, len, cap;
    bool closed;    /* nothing more will come: end after what is buffered */
    bool suspended; /* the connection waits for something to send */
    int64_t last_write_ms;
    struct serve_stream *prev, *next;
};

struct serve_streams {
    struct serve_stream *list;
    size_t n;
    int64_t due_ms; /* no keep-alive is due before this (a write only puts a
                       stream's next one later): the list is walked then */
};

/* ---- the buffer ------------------------------------------------------------- */

static void wake(struct serve *srv, struct serve_stream *st)
{
    if (st->suspended) {
        st->suspended = false;
        MHD_resume_connection(st->req->conn);
        if (srv->http)
            srv->http->run_again = true;
    }
}

static bool append(struct serve_stream *st, const char *text, size_t len)
{
    size_t cap = st->cap;

    if (st->off > 0 && st->off == st->len)
        st->off = st->len = 0;
    if (st->len - st->off + len > STREAM_BUFFER_MAX) {
        st->closed = true; /* too slow a reader: it reconnects */
        return false;
    }
    if (st->off > 0 && st->len + len > st->cap) {
        memmove(st->buf, st->buf + st->off, st->len - st->off);
        st->len -= st->off;
        st->off = 0;
    }
    while (cap < st->len + len)
        cap = cap ? cap * 2 : 4096;
    if (cap != st->cap) {
        char *grown = realloc(st->buf, cap);
        if (!grown)
            return false;
        st->buf = grown;
        st->cap = cap;
    }
    memcpy(st->buf + st->len, text, len);
    st->len += len;
    return true;
}

/* Append one event whose data is text (JSON, one line). */
static void send_text(struct serve *srv, struct serve_stream *st, const char *type,
                      const struct serve_text *text)
{
    char head[96];
    int n;

    if (st->closed)
        return;
    n = snprintf(head, sizeof(head), "event: %.64s\ndata: ", type);
    if (append(st, head, (size_t)n) && append(st, text->data, text->len))
        (void)append(st, "\n\n", 2);
    st->last_write_ms = serve_now_ms();
    wake(srv, st);
}

/* Append one event (doc borrowed). */
static void send_event(struct serve *srv, struct serve_stream *st, const char *type,
                       const json_t *doc)
{
    struct serve_text *text = st->closed ? NULL : serve_text_of(doc);

    if (text)
        send_text(srv, st, type, text);
    serve_text_unref(text);
}

/* ---- the response ------------------------------------------------------------ */

static ssize_t read_stream(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct serve_stream *st = cls;
    size_t n = st->len - st->off;

    (void)pos;
    if (n > 0) {
        if (n > max)
            n = max;
        memcpy(buf, st->buf + st->off, n);
        st->off += n;
        return (ssize_t)n;
    }
    if (st->closed)
        return MHD_CONTENT_READER_END_OF_STREAM;
    st->suspended = true;
    MHD_suspend_connection(st->req->conn);
    return 0;
}

/* Write to every stream now: a client gone is seen at once rather than
 * at its next keep-alive (a suspended connection is not watched). */
static void probe(struct serve *srv)
{
    static const char comment[] = ": probe\n\n";

    for (struct serve_stream *st = srv->streams->list; st; st = st->next)
        if (!st->closed && append(st, comment, sizeof(comment) - 1))
            wake(srv, st);
}

static struct serve_streams *streams_of(struct serve *srv)
{
    if (!srv->streams)
        srv->streams = calloc(1, sizeof(*srv->streams));
    return srv->streams;
}

static json_t *hello_doc(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return json_pack("{s:I}", "server_ms",
                     (json_int_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* A new stream of req, on the list: NULL when out of memory. */
static struct serve_stream *stream_new(struct serve_req *req, const char *run)
{
    struct serve_streams *all = streams_of(req->srv);
    struct serve_stream *st = all ? calloc(1, sizeof(*st)) : NULL;

    if (!st)
        return NULL;
    st->req = req;
    st->sess = serve_auth_request(req);
    snprintf(st->run, sizeof(st->run), "%s", run ? run : "");
    st->last_write_ms = serve_now_ms();
    st->next = all->list;
    if (all->list)
        all->list->prev = st;
    all->list = st;
    all->n++;
    req->stream = st;
    return st;
}

enum MHD_Result serve_stream_open(struct serve_req *req, const struct serve_query *q)
{
    const char *run = serve_query_get(q, "run");
    struct serve_streams *all = streams_of(req->srv);
    struct serve_stream *st;
    struct MHD_Response *resp;
    json_t *hello;

    if (run && lil_run_id_check(run) != LIL_OK)
        return serve_reply_error(req, 400, "Bad Request: run: invalid run id");
    if (all && all->n >= SERVE_STREAMS_MAX) {
        probe(req->srv); /* frees the slots of clients gone, for a retry */
        req->retry_later = true;
        return serve_reply_error(req, 503,
                                 "Service Unavailable: too many event streams (at "
                                 "most %d); try again",
                                 SERVE_STREAMS_MAX);
    }
    st = stream_new(req, run);
    if (!st)
        return serve_reply_error(req, 500, "out of memory");
    hello = hello_doc();
    send_event(req->srv, st, "hello", hello);
    json_decref(hello);
    resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, read_stream, st,
                                             NULL);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    return serve_queue(req, 200, resp, true);
}

void serve_stream_gone(struct serve_req *req)
{
    struct serve_streams *all = req->srv->streams;
    struct serve_stream *st = req->stream;

    req->stream = NULL;
    if (!st || !all)
        return;
    if (st->prev)
        st->prev->next = st->next;
    else
        all->list = st->next;
    if (st->next)
        st->next->prev = st->prev;
    all->n--;
    free(st->buf);
    free(st);
}

/* ---- what the others call ---------------------------------------------------- */

void serve_broadcast(struct serve *srv, const char *type, const char *run_id,
                     json_t *doc)
{
    struct serve_text *text = NULL; /* made once, for the first stream */

    if (!srv->streams)
        return;
    for (struct serve_stream *st = srv->streams->list; st; st = st->next) {
        if (st->closed || (run_id && strcmp(st->run, run_id) != 0))
            continue;
        if (!text && !(text = serve_text_of(doc)))
            return;
        send_text(srv, st, type, text);
    }
    serve_text_unref(text);
}

void serve_streams_watched(struct serve *srv, void (*fn)(const char *run_id, void *ud),
                           void *ud)
{
    if (!srv->streams)
        return;
    for (struct serve_stream *st = srv->streams->list; st; st = st->next) {
        bool seen = !st->run[0] || st->closed;
        for (struct serve_stream *o = srv->streams->list; o != st && !seen; o = o->next)
            seen = !o->closed && strcmp(o->run, st->run) == 0;
        if (!seen)
            fn(st->run, ud);
    }
}

void serve_streams_close(struct serve *srv, const struct serve_session *sess)
{
    if (!srv->streams)
        return;
    for (struct serve_stream *st = srv->streams->list; st; st = st->next)
        if (!sess || st->sess == sess) {
            st->closed = true;
            st->sess = NULL;
            wake(srv, st);
        }
}

int64_t serve_streams_keepalive(struct serve *srv, int64_t now_ms)
{
    static const char comment[] = ": keepalive\n\n";
    int64_t next = -1;

    if (!srv->streams || !srv->streams->list)
        return -1;
    if (srv->streams->due_ms > now_ms) /* called after every run of the daemon */
        return srv->streams->due_ms - now_ms;
    for (struct serve_stream *st = srv->streams->list; st; st = st->next) {
        int64_t due = st->last_write_ms + SERVE_KEEPALIVE_MS;
        if (st->closed)
            continue;
        if (now_ms >= due) {
            (void)append(st, comment, sizeof(comment) - 1);
            st->last_write_ms = now_ms;
            wake(srv, st);
            due = now_ms + SERVE_KEEPALIVE_MS;
        }
        if (next < 0 || due - now_ms < next)
            next = due - now_ms;
    }
    srv->streams->due_ms = next < 0 ? now_ms + SERVE_KEEPALIVE_MS : now_ms + next;
    return next;
}

void serve_streams_free(struct serve *srv)
{
    if (!srv->streams)
        return;
    while (srv->streams->list) {
        struct serve_stream *st = srv->streams->list;
        srv->streams->list = st->next;
        if (st->req)
            st->req->stream = NULL;
        free(st->buf);
        free(st);
    }
    free(srv->streams);
    srv->streams = NULL;
}
