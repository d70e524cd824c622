/*
 * mcp_http.c -- the Streamable HTTP transport of `lil mcp` (mcp.h,
 * mcp_http.h): the address and the token, libmicrohttpd in external
 * polling mode, the loop, and the sessions.
 *
 * `--http HOST:PORT` binds a loopback address (127.0.0.0/8, ::1,
 * "localhost" as 127.0.0.1) unless --allow-remote, which also refuses
 * --no-token; PORT 0 takes a free port.  The URL and the token
 * ($LIL_MCP_TOKEN, else 32 random bytes in hex) are printed on stderr.
 *
 * One thread polls libmicrohttpd's epoll descriptor and a self-pipe that
 * SIGINT and SIGTERM write to, with the shortest of the daemon's timeout,
 * the one mcp_server_tick asks for and the next keep-alive; then it runs
 * the daemon (whose callbacks hand messages to the core), ticks the
 * server, writes keep-alives and ends sessions unused for an hour.  A
 * signal ends the loop: the streams close, the sessions end, exit 0.
 */
#include "mcp_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
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

int64_t http_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- sessions ------------------------------------------------------------ */

static void session_notify(struct mcp_session *s, json_t *msg)
{
    struct http_sess *hs = s->transport;

    if (hs && hs->get_stream)
        http_stream_event(hs->get_stream, msg);
}

static bool sess_busy(const struct http_srv *h, const struct http_sess *hs)
{
    if (hs->get_stream)
        return true;
    for (const struct http_req *r = h->reqs; r; r = r->next)
        if (r->sess == hs)
            return true;
    return false;
}

void http_sess_end(struct http_srv *h, struct http_sess *hs)
{
    if (hs->get_stream)
        http_stream_close(hs->get_stream);
    hs->get_stream = NULL;
    for (struct http_req *r = h->reqs; r; r = r->next)
        if (r->sess == hs)
            r->sess = NULL;
    mcp_session_free(hs->s); /* its requests in flight close their streams */
    free(hs);
}

/* The least recently used session with no stream and no request. */
static struct http_sess *idlest(struct http_srv *h)
{
    struct http_sess *best = NULL;

    for (size_t i = 0; i < h->srv->n_sessions; i++) {
        struct http_sess *hs = h->srv->sessions[i]->transport;
        if (hs && !sess_busy(h, hs) && (!best || hs->last_ms < best->last_ms))
            best = hs;
    }
    return best;
}

struct http_sess *http_sess_new(struct http_srv *h)
{
    struct http_sess *hs = calloc(1, sizeof(*hs));
    struct mcp_session *s;

    if (!hs)
        return NULL;
    s = mcp_session_new(h->srv);
    if (!s && h->srv->n_sessions >= MCP_SESSIONS_MAX) {
        struct http_sess *old = idlest(h);
        if (old) {
            http_sess_end(h, old);
            s = mcp_session_new(h->srv);
        }
    }
    if (!s) {
        free(hs);
        return NULL;
    }
    s->notify = session_notify;
    s->transport = hs;
    hs->s = s;
    hs->last_ms = http_now_ms();
    return hs;
}

/* End the sessions unused for HTTP_SESSION_IDLE_MS. */
static void end_idle_sessions(struct http_srv *h, int64_t now)
{
    for (size_t i = h->srv->n_sessions; i-- > 0;) {
        struct http_sess *hs = h->srv->sessions[i]->transport;
        if (hs && now - hs->last_ms >= HTTP_SESSION_IDLE_MS && !sess_busy(h, hs))
            http_sess_end(h, hs);
    }
}

/* Keep-alives on quiet streams; the ms until the next is due (-1: none). */
static int64_t keepalives(struct http_srv *h, int64_t now)
{
    int64_t next = -1;

    for (struct http_req *r = h->reqs; r; r = r->next) {
        int64_t due = r->streaming ? http_stream_keepalive(r, now) : -1;
        if (due >= 0 && (next < 0 || due < next))
            next = due;
    }
    return next;
}

/* ---- the address and the token ------------------------------------------ */

/* Resolve the host to bind: 0 and *out (freeaddrinfo), or the exit status
 * with a message printed. */
static int resolve(const struct mcp_opts *o, const char *host, struct addrinfo **out)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    int rc;

    if (strcasecmp(host, "localhost") == 0)
        host = "127.0.0.1";
    else if (!o->allow_remote)
        hints.ai_flags |= AI_NUMERICHOST;
    rc = getaddrinfo(host, "0", &hints, out);
    if (rc != 0) {
        fprintf(stderr, "lil: mcp: --http %s: %s%s\n", o->http, gai_strerror(rc),
                o->allow_remote ? ""
                                : " (a loopback address: 127.0.0.1, ::1, localhost)");
        return o->allow_remote ? 1 : EXIT_USAGE;
    }
    if (!o->allow_remote && !cli_net_is_loopback((*out)->ai_addr)) {
        fprintf(stderr,
                "lil: mcp: --http %s is not a loopback address (127.0.0.1, ::1, "
                "localhost); --allow-remote lets it bind another\n",
                o->http);
        freeaddrinfo(*out);
        return EXIT_USAGE;
    }
    return 0;
}

/* A listening socket on opts.http: the descriptor, or -1 with *status. */
static int listen_on(struct http_srv *h, int *status)
{
    const struct mcp_opts *o = &h->srv->opts;
    struct addrinfo *ai = NULL;
    struct sockaddr_storage ss = {0};
    socklen_t sl = sizeof(ss);
    char host[256];
    unsigned port;
    int fd, one = 1;

    *status = EXIT_USAGE;
    if (cli_net_split(o->http, host, sizeof(host), &port) != 0) {
        fprintf(stderr, "lil: mcp: --http %s: expected HOST:PORT (127.0.0.1:8808)\n",
                o->http);
        return -1;
    }
    if ((*status = resolve(o, host, &ai)) != 0)
        return -1;
    if (ai->ai_family == AF_INET6)
        ((struct sockaddr_in6 *)ai->ai_addr)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)ai->ai_addr)->sin_port = htons((uint16_t)port);
    *status = 1;
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
        fprintf(stderr, "lil: mcp: --http %s: cannot listen: %s\n", o->http,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    cli_net_bound(&ss, h->bind_host, sizeof(h->bind_host), &h->port);
    return fd;
}

/* The token: $LIL_MCP_TOKEN, or 32 random bytes in hex.  0, or -1. */
static int make_token(struct http_srv *h)
{
    char *env = NULL;

    if (lil_setting("LIL_MCP_TOKEN", &env) == LIL_OK && env && *env) {
        bool fits = strlen(env) <= HTTP_TOKEN_MAX;
        if (fits)
            snprintf(h->token, sizeof(h->token), "%s", env);
        lil_free(env);
        if (!fits)
            fprintf(stderr, "lil: mcp: LIL_MCP_TOKEN is longer than %d bytes\n",
                    HTTP_TOKEN_MAX);
        return fits ? 0 : -1;
    }
    lil_free(env);
    if (cli_net_random_hex(h->token, 32) != 0) {
        fprintf(stderr, "lil: mcp: no random bytes for the token: %s\n",
                strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- the loop ------------------------------------------------------------ */

static int min_timeout(int a, int64_t b)
{
    if (b < 0)
        return a;
    if (b > 60000)
        b = 60000;
    return a < 0 || b < a ? (int)b : a;
}

/* How long poll may wait: the daemon's timeout, the tick's, the next
 * keep-alive's. */
static int wait_ms(struct http_srv *h, int tick_ms, int64_t keepalive_ms)
{
    MHD_UNSIGNED_LONG_LONG mhd_ms;
    int t = tick_ms;

    if (h->run_again)
        return 0;
    if (MHD_get_timeout(h->d, &mhd_ms) == MHD_YES)
        t = min_timeout(t, mhd_ms > 60000 ? 60000 : (int64_t)mhd_ms);
    t = min_timeout(t, keepalive_ms);
    return min_timeout(t, h->srv->n_sessions > 0 ? 60000 : -1);
}

static void serve_loop(struct http_srv *h, int epoll_fd)
{
    int tick_ms = 0;
    int64_t keepalive_ms = -1;

    while (!cli_stop_requested()) {
        struct pollfd pfd[2] = {{.fd = epoll_fd, .events = POLLIN},
                                {.fd = cli_stop_pipe_fd(), .events = POLLIN}};
        int n = poll(pfd, 2, wait_ms(h, tick_ms, keepalive_ms));
        int64_t now;

        if (n < 0 && errno != EINTR)
            break;
        if (n > 0 && (pfd[1].revents & POLLIN))
            cli_stop_pipe_drain();
        if (cli_stop_requested())
            break;
        h->run_again = false;
        MHD_run(h->d);
        tick_ms = mcp_server_tick(h->srv);
        now = http_now_ms();
        keepalive_ms = keepalives(h, now);
        end_idle_sessions(h, now);
    }
}

/* Close every stream, end every session, let the daemon send what is
 * buffered (a little while at most), then stop it. */
static void shut_down(struct http_srv *h)
{
    int64_t until = http_now_ms() + 1000;

    while (h->srv->n_sessions > 0) {
        /* each end takes its session out of the array: read it again */
        struct mcp_session *s = h->srv->sessions[h->srv->n_sessions - 1];
        struct http_sess *hs = s->transport;

        if (hs) /* NOLINTNEXTLINE(clang-analyzer-unix.Malloc): hs is s's, read anew */
            http_sess_end(h, hs);
        else
            mcp_session_free(s);
    }
    for (struct http_req *r = h->reqs; r; r = r->next)
        if (r->streaming)
            http_stream_close(r);
    while (h->reqs && http_now_ms() < until) {
        h->run_again = false;
        MHD_run(h->d);
        if (!h->run_again)
            poll(NULL, 0, 10);
    }
    for (struct http_req *r = h->reqs; r; r = r->next) {
        r->closed = true;
        if (r->suspended) {
            r->suspended = false;
            MHD_resume_connection(r->conn);
        }
    }
    MHD_run(h->d);
    MHD_stop_daemon(h->d);
}

static struct MHD_Daemon *start_daemon(struct http_srv *h, int fd, bool v6)
{
    unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | (v6 ? MHD_USE_IPv6 : 0);

    return MHD_start_daemon(flags, (uint16_t)h->port, NULL, NULL, http_on_request, h,
                            MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_NOTIFY_COMPLETED,
                            http_on_completed, h, MHD_OPTION_CONNECTION_TIMEOUT,
                            (unsigned)120, MHD_OPTION_CONNECTION_LIMIT, (unsigned)256,
                            MHD_OPTION_END);
}

static void announce(const struct http_srv *h)
{
    fprintf(stderr, "lil mcp: listening on http://%s:%u%s\n", h->bind_host, h->port,
            HTTP_PATH);
    if (h->need_token)
        fprintf(stderr, "lil mcp: token %s\n", h->token);
    if (h->srv->opts.allow_remote)
        fputs("lil mcp: warning: --allow-remote: clients of other hosts may connect; "
              "use TLS in front and keep the token secret\n",
              stderr);
    (void)fflush(stderr);
}

/* The daemon on its socket, the loop, the end: the exit status. */
static int run_daemon(struct http_srv *h, int fd)
{
    const union MHD_DaemonInfo *info;
    struct cli_stop_pipe stop;

    h->d = start_daemon(h, fd, h->bind_host[0] == '[');
    if (!h->d) {
        fprintf(stderr, "lil: mcp: --http %s: the HTTP daemon did not start\n",
                h->srv->opts.http);
        close(fd);
        return 1;
    }
    info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
    if (!info || cli_stop_pipe_open(&stop) != 0) {
        fputs("lil: mcp: cannot wait for the HTTP daemon\n", stderr);
        MHD_stop_daemon(h->d);
        close(fd);
        return 1;
    }
    announce(h);
    serve_loop(h, info->epoll_fd);
    shut_down(h);
    cli_stop_pipe_close(&stop);
    close(fd);
    return 0;
}

int mcp_http_serve(struct mcp_server *srv)
{
    struct http_srv h = {.srv = srv, .need_token = !srv->opts.no_token};
    int fd, status;

    if (srv->opts.allow_remote && srv->opts.no_token) {
        fputs("lil: mcp: --allow-remote needs the token: --no-token is refused\n",
              stderr);
        return EXIT_USAGE;
    }
    if (h.need_token && make_token(&h) != 0)
        return 1;
    fd = listen_on(&h, &status);
    if (fd < 0)
        return status;
    return run_daemon(&h, fd);
}
