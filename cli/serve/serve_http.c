/*
 * serve_http.c -- the daemon of `lil serve` (serve.h, serve_http.h): the
 * address, libmicrohttpd in external polling mode, the loop and its tick,
 * the signals that end it, and the headers every answer carries.
 *
 * `--listen HOST:PORT` (default 127.0.0.1:8420; "[::1]:8420" too; PORT 0
 * takes a free port) binds a socket; a host that is not loopback is
 * bound (it was asked for with --listen) with a warning.  The lines
 * `lil serve: listening on http://HOST:PORT/` and `lil serve: log in at
 * http://HOST:PORT/login?token=TOKEN` go to stderr once the daemon runs.
 *
 * One thread polls libmicrohttpd's epoll descriptor and a self-pipe that
 * SIGINT and SIGTERM write to, with the shortest of the daemon's timeout,
 * the next tick (SERVE_TICK_MS; while the index has rows unread, its own
 * tick every SERVE_FILL_TICK_MS too) and the next keep-alive; then it runs
 * the daemon and, when due, serve_tick.  A signal ends the loop: the streams
 * close, what is buffered is sent (a second at most), exit 0.
 */
#include "serve_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../cli.h"
#include "../net.h"

#define EXIT_USAGE 64 /* the CLI's usage status (cli.h) */
#define EXIT_FAIL  1

int64_t serve_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t serve_now_ms(void)
{
    return serve_now_ns() / 1000000;
}

/* ---- the address ---------------------------------------------------------- */

/* Resolve host: 0 and *out (freeaddrinfo), or -1 with a message. */
static int resolve(const char *listen, const char *host, struct addrinfo **out)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    int rc;

    if (strcasecmp(host, "localhost") == 0)
        host = "127.0.0.1";
    rc = getaddrinfo(host, "0", &hints, out);
    if (rc != 0) {
        fprintf(stderr, "lil: serve: --listen %s: %s\n", listen, gai_strerror(rc));
        return -1;
    }
    return 0;
}

/* Bind and listen on ai (port set): the descriptor, or -1 with errno. */
static int bind_socket(const struct addrinfo *ai, struct sockaddr_storage *ss)
{
    socklen_t sl = sizeof(*ss);
    int one = 1;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

    if (fd < 0)
        return -1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)ss, &sl) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* A listening socket on --listen: the descriptor, or -1 with *status (64:
 * not an address; 1: it cannot be bound). */
static int listen_on(struct serve *srv, struct serve_http *h, int *status)
{
    const char *listen = srv->opts.listen;
    struct addrinfo *ai = NULL;
    struct sockaddr_storage ss = {0};
    char host[256];
    unsigned port;
    int fd;

    *status = EXIT_USAGE;
    if (cli_net_split(listen, host, sizeof(host), &port) != 0) {
        fprintf(stderr,
                "lil: serve: --listen %s: expected HOST:PORT (127.0.0.1:8420)\n",
                listen);
        return -1;
    }
    if (resolve(listen, host, &ai) != 0)
        return -1;
    snprintf(h->listen_host, sizeof(h->listen_host), strchr(host, ':') ? "[%s]" : "%s",
             host);
    if (ai->ai_family == AF_INET6)
        ((struct sockaddr_in6 *)ai->ai_addr)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)ai->ai_addr)->sin_port = htons((uint16_t)port);
    *status = EXIT_FAIL;
    fd = bind_socket(ai, &ss);
    if (fd < 0)
        fprintf(stderr, "lil: serve: --listen %s: cannot listen: %s\n", listen,
                strerror(errno));
    else if (!cli_net_is_loopback(ai->ai_addr))
        fprintf(stderr,
                "lil serve: warning: listening on a non-loopback address (%s): "
                "other hosts may connect; the traffic is not encrypted\n",
                listen);
    h->wildcard = cli_net_is_wildcard(ai->ai_addr);
    freeaddrinfo(ai);
    if (fd >= 0)
        cli_net_bound(&ss, h->bind_host, sizeof(h->bind_host), &h->port);
    return fd;
}

/* ---- Host ------------------------------------------------------------------ */

/* host (no port) is an IP address literal: "10.0.0.2", "[fe80::1]". */
static bool is_ip_literal(const char *host, size_t n)
{
    char text[INET6_ADDRSTRLEN + 2];
    unsigned char addr[sizeof(struct in6_addr)];

    if (n < 2 || n >= sizeof(text))
        return false;
    if (host[0] == '[' && host[n - 1] == ']') {
        memcpy(text, host + 1, n - 2);
        text[n - 2] = '\0';
        return inet_pton(AF_INET6, text, addr) == 1;
    }
    memcpy(text, host, n);
    text[n] = '\0';
    return inet_pton(AF_INET, text, addr) == 1;
}

bool serve_host_ok(const struct serve_req *req)
{
    const struct serve_http *h = req->srv->http;
    const char *host = serve_header(req, MHD_HTTP_HEADER_HOST);
    const char *names[] = {"127.0.0.1", "localhost", "[::1]", h->bind_host,
                           h->listen_host};
    const char *colon = host ? strrchr(host, ':') : NULL;
    char port[16];
    size_t n;

    snprintf(port, sizeof(port), ":%u", h->port);
    if (!colon || strcmp(colon, port) != 0 || strchr(colon, ']'))
        return false;
    n = (size_t)(colon - host);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) == n && strncasecmp(host, names[i], n) == 0)
            return true;
    return h->wildcard && is_ip_literal(host, n);
}

/* ---- answers --------------------------------------------------------------- */

const char *serve_header(const struct serve_req *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

static const char csp[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

enum MHD_Result serve_queue(struct serve_req *req, unsigned status,
                            struct MHD_Response *resp, bool api)
{
    char timing[64];
    enum MHD_Result ret;

    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Security-Policy", csp);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
                            api ? "no-store" : "no-cache");
    snprintf(timing, sizeof(timing), "app;dur=%.3f",
             (double)(serve_now_ns() - req->start_ns) / 1e6);
    MHD_add_response_header(resp, "Server-Timing", timing);
    if (req->set_cookie[0])
        MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, req->set_cookie);
    if (req->allow[0])
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, req->allow);
    if (req->retry_later)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    req->answered = true;
    ret = MHD_queue_response(req->conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

enum MHD_Result serve_reply(struct serve_req *req, unsigned status,
                            const char *content_type, const void *body, size_t len,
                            bool api)
{
    char *copy = len > 0 ? malloc(len) : NULL;
    struct MHD_Response *resp;

    if (len > 0 && !copy)
        return MHD_NO;
    if (copy)
        memcpy(copy, body, len);
    resp = MHD_create_response_from_buffer(len, copy, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(copy);
        return MHD_NO;
    }
    if (content_type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    return serve_queue(req, status, resp, api);
}

enum MHD_Result serve_reply_json(struct serve_req *req, unsigned status, json_t *doc)
{
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    struct MHD_Response *resp;

    if (!text) {
        static const char oom[] = "{\"error\":\"out of memory\"}";
        return serve_reply(req, 500, "application/json", oom, sizeof(oom) - 1, true);
    }
    resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    return serve_queue(req, status, resp, true);
}

/* libmicrohttpd is done with a text's bytes: its reference goes. */
static void text_sent(void *data)
{
    char *bytes = data;

    serve_text_unref(
        (struct serve_text *)(void *)(bytes - offsetof(struct serve_text, data)));
}

enum MHD_Result serve_reply_text(struct serve_req *req, unsigned status,
                                 struct serve_text *t)
{
    struct MHD_Response *resp;

    if (!t)
        return serve_reply_json(req, status, NULL);
    resp =
        MHD_create_response_from_buffer_with_free_callback(t->len, t->data, text_sent);
    if (!resp)
        return MHD_NO;
    serve_text_ref(t); /* text_sent's */
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    return serve_queue(req, status, resp, true);
}

enum MHD_Result serve_reply_error(struct serve_req *req, unsigned status,
                                  const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    json_t *doc;
    enum MHD_Result ret;

    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above */
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    doc = json_pack("{s:s}", "error", msg);
    ret = serve_reply_json(req, status, doc);
    json_decref(doc);
    return ret;
}

/* ---- the loop ------------------------------------------------------------ */

void serve_tick(struct serve *srv)
{
    serve_index_tick(srv);
    serve_actions_tick(srv);
    serve_lab_tick(srv);
}

/* How long poll may wait: the daemon's timeout, the next tick (or index
 * tick while the index fills), the next keep-alive. */
static int wait_ms(const struct serve_http *h, int64_t now, int64_t next_tick,
                   int64_t keepalive_ms)
{
    MHD_UNSIGNED_LONG_LONG mhd_ms;
    int64_t t = next_tick > now ? next_tick - now : 0;

    if (h->run_again)
        return 0;
    if (MHD_get_timeout(h->d, &mhd_ms) == MHD_YES && (int64_t)mhd_ms < t)
        t = (int64_t)mhd_ms;
    if (keepalive_ms >= 0 && keepalive_ms < t)
        t = keepalive_ms;
    return (int)t;
}

/* The next time a tick is due: the regular one, or sooner an index tick
 * while rows are unread. */
static int64_t next_due(const struct serve *srv, int64_t next_tick, int64_t next_fill)
{
    return serve_index_filling(srv) && next_fill < next_tick ? next_fill : next_tick;
}

static void serve_loop(struct serve *srv, int epoll_fd)
{
    struct serve_http *h = srv->http;
    int64_t next_tick = serve_now_ms() + SERVE_TICK_MS, keepalive_ms = -1;
    int64_t next_fill = serve_now_ms() + SERVE_FILL_TICK_MS;

    while (!cli_stop_requested()) {
        struct pollfd pfd[2] = {{.fd = epoll_fd, .events = POLLIN},
                                {.fd = cli_stop_pipe_fd(), .events = POLLIN}};
        int n = poll(pfd, 2,
                     wait_ms(h, serve_now_ms(), next_due(srv, next_tick, next_fill),
                             keepalive_ms));
        int64_t now;

        if (n < 0 && errno != EINTR)
            break;
        if (n > 0 && (pfd[1].revents & POLLIN))
            cli_stop_pipe_drain();
        if (cli_stop_requested())
            break;
        h->run_again = false;
        MHD_run(h->d);
        now = serve_now_ms();
        if (now >= next_tick) {
            serve_tick(srv);
            next_tick = now + SERVE_TICK_MS;
            next_fill = now + SERVE_FILL_TICK_MS;
        } else if (now >= next_fill && serve_index_filling(srv)) {
            serve_index_tick(srv);
            next_fill = now + SERVE_FILL_TICK_MS;
        }
        keepalive_ms = serve_streams_keepalive(srv, serve_now_ms());
    }
}

/* Close every stream, let the daemon send what is buffered (a second at
 * most), then stop it. */
static void shut_down(struct serve *srv)
{
    struct serve_http *h = srv->http;
    int64_t until = serve_now_ms() + 1000;

    serve_streams_close(srv, NULL);
    while (h->reqs && serve_now_ms() < until) {
        h->run_again = false;
        MHD_run(h->d);
        if (!h->run_again)
            poll(NULL, 0, 10);
    }
    MHD_stop_daemon(h->d);
    h->d = NULL;
}

static struct MHD_Daemon *start_daemon(struct serve *srv, int fd)
{
    struct serve_http *h = srv->http;
    unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     (h->bind_host[0] == '[' ? MHD_USE_IPv6 : 0);

    return MHD_start_daemon(flags, (uint16_t)h->port, NULL, NULL, serve_on_request, srv,
                            MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_URI_LOG_CALLBACK,
                            serve_on_uri, srv, MHD_OPTION_NOTIFY_COMPLETED,
                            serve_on_completed, srv, MHD_OPTION_CONNECTION_TIMEOUT,
                            (unsigned)120, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)(SERVE_STREAMS_MAX + 256), MHD_OPTION_END);
}

static void announce(const struct serve *srv)
{
    fprintf(stderr, "lil serve: listening on %s/\n", srv->origin);
    fprintf(stderr, "lil serve: log in at %s/login?token=%s\n", srv->origin,
            srv->login_token);
    (void)fflush(stderr);
}

/* The daemon on its socket (which it closes), the loop, the end: the exit
 * status. */
static int run_daemon(struct serve *srv, int fd)
{
    struct serve_http *h = srv->http;
    const union MHD_DaemonInfo *info;
    struct cli_stop_pipe stop;

    h->d = start_daemon(srv, fd);
    if (!h->d) {
        fprintf(stderr, "lil: serve: --listen %s: the HTTP daemon did not start\n",
                srv->opts.listen);
        close(fd);
        return EXIT_FAIL;
    }
    info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
    if (!info || cli_stop_pipe_open(&stop) != 0) {
        fputs("lil: serve: cannot wait for the HTTP daemon\n", stderr);
        MHD_stop_daemon(h->d);
        return EXIT_FAIL;
    }
    announce(srv);
    serve_loop(srv, info->epoll_fd);
    shut_down(srv);
    cli_stop_pipe_close(&stop);
    return 0;
}

int serve_run(struct serve *srv)
{
    struct serve_http h = {0};
    char err[512] = "";
    int fd, status;

    srv->http = &h;
    fd = listen_on(srv, &h, &status);
    if (fd < 0)
        goto out;
    snprintf(srv->origin, sizeof(srv->origin), "http://%s:%u", h.bind_host, h.port);
    status = EXIT_FAIL;
    if (serve_auth_new_token(srv) != 0)
        fputs("lil: serve: no random bytes for the login token\n", stderr);
    else if (serve_index_open(srv, err, sizeof(err)) != 0)
        fprintf(stderr, "lil: serve: cannot read the runs: %s\n", err);
    else {
        status = run_daemon(srv, fd); /* fd is the daemon's now */
        fd = -1;
    }
    if (fd >= 0)
        close(fd);
out:
    serve_streams_free(srv);
    srv->http = NULL;
    return status;
}
