/*
 * bench_serve.c -- `lil serve` on a store of 10,000 runs: a page of runs,
 * the delay of a write to its event, and what 50 browsers cost a loop that
 * runs beside them.
 *
 * A store of RUNS program runs (RUN_STEPS steps each, sync off) is made,
 * and one `lil serve --listen 127.0.0.1:0 --user bench` started on it; the
 * bench logs in with the URL it prints (one session, its cookie) and talks
 * HTTP/1.1 over plain sockets.
 *
 * Rows:
 *   page     GET /api/runs (the default page, 50 rows, last activity
 *            first) and a page of 500 in id order from the middle: the
 *            server's time (Server-Timing) and the wall time of the
 *            request, p50 and p99; beside the floor, what the page costs
 *            without an index: lil_run_facts of the 50 runs it shows, and
 *            (info) of all of them, a rescan.  Target: < 200 ms server
 *            time (p50 and p99).
 *   sse      a program run written here (lil.h) and closed, to the "runs"
 *            event that carries it read from an open event stream; the
 *            writes are spread over the 250 ms of the server's tick.
 *            Target: < 1 s (p99).
 *   clients  a loop of shell steps (`cmd: "true"`, LOOP_ITERS iterations,
 *            the default sync) run by `lil run` on the same store, with no
 *            browser, then with CLIENTS browsers (a child process: each an
 *            event stream, half of them watching the loop's run, and a
 *            GET of the default page every 250 ms), in pairs (each order in
 *            turn, so that what else the machine does weighs on both), 9
 *            pairs; an iteration's time is the run's wall time over its
 *            iterations.  Target: the median of the pairs' ratios < 1.05.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "bench.h"

#define RUNS             10000
#define RUNS_QUICK       2000
#define RUN_STEPS        3
#define PAGE_ROWS        50
#define CLIENTS          50
#define CLIENT_PERIOD_MS 250
#define LOOP_ITERS       600
#define TARGET_PAGE_MS   200.0
#define TARGET_SSE_MS    1000.0
#define TARGET_SLOWDOWN  1.05
#define REPLY_MAX        (16u << 20)

/* ---- the store ----------------------------------------------------------- */

/* n program runs in dir, each made in a staging store that holds only it
 * and the key, then renamed into dir (a writable open lists its store's
 * directory: 10,000 made in place would read n^2 entries); the key is
 * copied last. */
static void make_runs(const char *dir, int n)
{
    struct bench_payload p = {bench_payload_bytes(BENCH_PAYLOAD), BENCH_PAYLOAD, 0};
    char staging[4200], from[4300], to[4300];
    lil_store *st = NULL;
    lil_status rc;

    snprintf(staging, sizeof(staging), "%s.staging", dir);
    if (mkdir(dir, 0700) != 0)
        bench_die_errno(dir);
    if ((rc = lil_store_open(NULL, staging, &st)) != LIL_OK)
        bench_die("lil_store_open", rc, lil_errmsg());
    for (int i = 0; i < n; i++) {
        char id[32];
        lil_run *run;

        snprintf(id, sizeof(id), "run-%05d", i);
        run = bench_open_run(st, id, LIL_SYNC_OFF);
        for (int s = 0; s < RUN_STEPS; s++)
            if ((rc = lil_step(run, "s", bench_fill_fn, &p, NULL)) != LIL_OK)
                bench_die("lil_step", rc, lil_run_errmsg(run));
        if (i % 3 == 0 && (rc = lil_run_complete(run, "ok", 2)) != LIL_OK)
            bench_die("lil_run_complete", rc, lil_run_errmsg(run));
        lil_run_close(run);
        snprintf(from, sizeof(from), "%s/%s.lil", staging, id);
        snprintf(to, sizeof(to), "%s/%s.lil", dir, id);
        if (rename(from, to) != 0)
            bench_die_errno(from);
        snprintf(from, sizeof(from), "%s/%s.head", staging, id);
        snprintf(to, sizeof(to), "%s/%s.head", dir, id);
        if (rename(from, to) != 0 && errno != ENOENT)
            bench_die_errno(from);
    }
    lil_store_close(st);
    snprintf(from, sizeof(from), "%s/journal.key", staging);
    snprintf(to, sizeof(to), "%s/journal.key", dir);
    if (rename(from, to) != 0 || rmdir(staging) != 0)
        bench_die_errno(staging);
}

/* ---- HTTP over a socket -------------------------------------------------- */
static int connect_to(unsigned port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
        bench_die_errno("connect to lil serve");
    return fd;
}

static void send_all(int fd, const char *text)
{
    size_t len = strlen(text), off = 0;

    while (off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n <= 0)
            bench_die_errno("write to lil serve");
        off += (size_t)n;
    }
}

struct reply {
    int status;
    double server_ms; /* Server-Timing app;dur, or -1 */
    double wall_ms;
    char *text; /* headers and body, NUL-terminated */
    size_t len;
};

/* The value of header name in r (its first), or NULL; cut at its line's end
 * into buf. */
static const char *header(const struct reply *r, const char *name, char *buf,
                          size_t cap)
{
    size_t n = strlen(name);

    for (const char *p = strstr(r->text, "\r\n"); p && p[2] != '\r';
         p = strstr(p + 2, "\r\n"))
        if (strncasecmp(p + 2, name, n) == 0 && p[2 + n] == ':') {
            const char *v = p + 3 + n, *end = strstr(v, "\r\n");
            while (*v == ' ')
                v++;
            snprintf(buf, cap, "%.*s", (int)(end ? end - v : (long)strlen(v)), v);
            return buf;
        }
    return NULL;
}

/* A connection kept open between requests, as a browser keeps one. */
struct conn {
    int fd; /* -1: none yet */
};

/* Is the answer in r->text whole (its headers, and Content-Length bytes of
 * body)? */
static bool answer_whole(const struct reply *r)
{
    const char *end = strstr(r->text, "\r\n\r\n");
    char buf[64];

    if (!end)
        return false;
    if (!header(r, "Content-Length", buf, sizeof(buf)))
        return false; /* read until the server closes */
    return r->len >= (size_t)(end + 4 - r->text) + strtoul(buf, NULL, 10);
}

/* Read the answer into r until it is whole (or, without Content-Length,
 * until the server closes): false when the connection ended first. */
static bool read_answer(int fd, struct reply *r)
{
    size_t cap = 1 << 16;
    ssize_t n;

    r->text = malloc(cap);
    if (!r->text)
        bench_die_errno("malloc");
    r->text[0] = '\0';
    while ((n = read(fd, r->text + r->len, cap - r->len - 1)) > 0) {
        r->len += (size_t)n;
        r->text[r->len] = '\0';
        if (answer_whole(r))
            return true;
        if (r->len + 1 == cap) {
            char *grown = cap < REPLY_MAX ? realloc(r->text, cap * 2) : NULL;
            if (!grown)
                bench_die("lil serve", LIL_E_TOOBIG, "an answer over 16 MiB");
            r->text = grown;
            cap *= 2;
        }
    }
    return n == 0 && r->len > 0 && !strstr(r->text, "Content-Length");
}

/* GET path with the cookie (may be ""), on c (kept open; NULL: a
 * connection of its own, closed after): the whole answer. */
static void http_get_on(struct conn *c, unsigned port, const char *cookie,
                        const char *path, struct reply *r)
{
    char req[2048], buf[256];
    uint64_t t0 = bench_now_ns();
    int fd = c && c->fd >= 0 ? c->fd : connect_to(port);

    snprintf(req, sizeof(req),
             "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nCookie: %s\r\n%s\r\n", path,
             port, cookie, c ? "" : "Connection: close\r\n");
    send_all(fd, req);
    memset(r, 0, sizeof(*r));
    if (!read_answer(fd, r) || !c || strstr(r->text, "Connection: close")) {
        close(fd);
        fd = -1;
    }
    if (c)
        c->fd = fd;
    r->wall_ms = (double)(bench_now_ns() - t0) / 1e6;
    if (sscanf(r->text, "HTTP/1.%*d %d", &r->status) != 1)
        bench_die("lil serve", LIL_E_CHILD, "an answer that is not HTTP");
    r->server_ms =
        header(r, "Server-Timing", buf, sizeof(buf)) && strncmp(buf, "app;dur=", 8) == 0
            ? atof(buf + 8)
            : -1;
}

static void http_get(unsigned port, const char *cookie, const char *path,
                     struct reply *r)
{
    http_get_on(NULL, port, cookie, path, r);
}

/* The body of r as JSON (a new reference), or exit. */
static json_t *body_json(const struct reply *r, const char *what)
{
    const char *body = strstr(r->text, "\r\n\r\n");
    json_t *v = body ? json_loads(body + 4, 0, NULL) : NULL;

    if (r->status != 200 || !v)
        bench_die(what, LIL_E_CHILD, r->text);
    return v;
}

/* ---- the server ---------------------------------------------------------- */
struct server {
    pid_t pid;
    int err; /* its stderr */
    unsigned port;
    char cookie[200]; /* "lil_session=..." */
};

/* Read the server's stderr until a line holds "login?token=": its token. */
static void read_login(struct server *s, char *token, size_t cap)
{
    char buf[8192];
    size_t len = 0;
    const char *at;

    for (;;) {
        struct pollfd p = {.fd = s->err, .events = POLLIN};
        ssize_t n;

        if (poll(&p, 1, 120000) <= 0 || len + 1 >= sizeof(buf) ||
            (n = read(s->err, buf + len, sizeof(buf) - 1 - len)) <= 0)
            bench_die("lil serve", LIL_E_CHILD, "no login URL on its stderr");
        len += (size_t)n;
        buf[len] = '\0';
        if ((at = strstr(buf, "login?token=")) && strchr(at, '\n'))
            break;
    }
    if (sscanf(buf, "lil serve: listening on http://127.0.0.1:%u", &s->port) != 1)
        bench_die("lil serve", LIL_E_CHILD, buf);
    snprintf(token, cap, "%.*s", (int)strcspn(at + 12, "\r\n"), at + 12);
}

static void server_start(const struct bench_cfg *cfg, const char *store,
                         struct server *s)
{
    const char *argv[] = {cfg->lil_path, "--dir",  store,   "serve", "--listen",
                          "127.0.0.1:0", "--user", "bench", NULL};
    posix_spawn_file_actions_t fa;
    char token[256], path[400], buf[400];
    struct reply r;
    int pipefd[2], e;

    if (pipe2(pipefd, O_CLOEXEC) != 0)
        bench_die_errno("pipe2");
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    e = posix_spawn(&s->pid, cfg->lil_path, &fa, NULL, (char *const *)(uintptr_t)argv,
                    environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e)
        bench_die("posix_spawn lil serve", LIL_E_CHILD, strerror(e));
    close(pipefd[1]);
    s->err = pipefd[0];
    read_login(s, token, sizeof(token));
    snprintf(path, sizeof(path), "/login?token=%s", token);
    http_get(s->port, "", path, &r);
    if (r.status != 303 || !header(&r, "Set-Cookie", buf, sizeof(buf)))
        bench_die("lil serve login", LIL_E_CHILD, r.text);
    snprintf(s->cookie, sizeof(s->cookie), "%.*s", (int)strcspn(buf, ";"), buf);
    free(r.text);
}

static void server_stop(struct server *s)
{
    int st;

    kill(s->pid, SIGTERM);
    if (waitpid(s->pid, &st, 0) != s->pid)
        bench_die_errno("waitpid lil serve");
    close(s->err);
}

/* Wait until every run of the store is read (the page's "indexing"). */
static void wait_indexed(const struct server *s, int runs)
{
    for (int tries = 0; tries < 1200; tries++) {
        struct reply r;
        json_t *doc, *ix;

        http_get(s->port, s->cookie, "/api/runs?limit=1", &r);
        doc = body_json(&r, "GET /api/runs");
        ix = json_object_get(doc, "indexing");
        free(r.text);
        if (json_integer_value(json_object_get(ix, "done")) >= runs &&
            json_integer_value(json_object_get(ix, "done")) ==
                json_integer_value(json_object_get(ix, "total"))) {
            json_decref(doc);
            return;
        }
        json_decref(doc);
        usleep(100000);
    }
    bench_die("lil serve", LIL_E_CHILD, "the index was not full after 2 minutes");
}

/* ---- event streams ------------------------------------------------------- */
struct stream {
    int fd;
    char *buf;
    size_t len, cap;
};

static void stream_open(const struct server *s, const char *query, struct stream *st)
{
    char req[1024];

    st->fd = connect_to(s->port);
    snprintf(req, sizeof(req),
             "GET /api/stream%s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nCookie: %s\r\n"
             "Accept: text/event-stream\r\n\r\n",
             query, s->port, s->cookie);
    send_all(st->fd, req);
    st->cap = 1 << 16;
    st->len = 0;
    st->buf = malloc(st->cap);
    if (!st->buf)
        bench_die_errno("malloc");
}

/* Read what is there (waiting at most ms); false when the stream ended. */
static bool stream_read(struct stream *st, int ms)
{
    struct pollfd p = {.fd = st->fd, .events = POLLIN};
    ssize_t n;

    if (poll(&p, 1, ms) <= 0)
        return true;
    if (st->len + 4096 >= st->cap) { /* keep the last half */
        memmove(st->buf, st->buf + st->cap / 2, st->len - st->cap / 2);
        st->len -= st->cap / 2;
    }
    n = read(st->fd, st->buf + st->len, st->cap - 1 - st->len);
    if (n <= 0)
        return false;
    st->len += (size_t)n;
    st->buf[st->len] = '\0';
    return true;
}

/* Wait at most ms for needle on the stream; what came before it is dropped. */
static bool stream_wait(struct stream *st, const char *needle, int ms)
{
    uint64_t end = bench_now_ns() + (uint64_t)ms * 1000000u;
    char *at;

    while (!(at = st->len ? strstr(st->buf, needle) : NULL)) {
        uint64_t now = bench_now_ns();
        if (now >= end || !stream_read(st, (int)((end - now) / 1000000u) + 1))
            return false;
    }
    st->len -= (size_t)(at + strlen(needle) - st->buf);
    memmove(st->buf, at + strlen(needle), st->len + 1);
    return true;
}

static void stream_close(struct stream *st)
{
    close(st->fd);
    free(st->buf);
}

/* ---- page ---------------------------------------------------------------- */
static void page_rows(const char *what, double *server, double *wall, size_t n)
{
    struct bench_stats s = bench_stats_of(server, n), w = bench_stats_of(wall, n);
    char name[200], buf[200];

    snprintf(name, sizeof(name), "%s: server time (Server-Timing)", what);
    snprintf(buf, sizeof(buf), "p50 %.2f ms, p99 %.2f ms (%zu)", s.p50, s.p99, n);
    bench_row(name, buf, "< 200 ms (p99)", s.p99 < TARGET_PAGE_MS);
    snprintf(name, sizeof(name), "%s: wall, request to last byte (info)", what);
    snprintf(buf, sizeof(buf), "p50 %.2f ms, p99 %.2f ms", w.p50, w.p99);
    bench_row(name, buf, "", -1);
}

/* The floor: lil_run_facts of the default page's runs; ms. */
static double facts_of_page(lil_store *st, const json_t *page)
{
    uint64_t t0 = bench_now_ns();
    size_t i;
    json_t *row;

    json_array_foreach(json_object_get(page, "runs"), i, row)
    {
        lil_bytes b = {NULL, 0};
        lil_status rc =
            lil_run_facts(st, json_string_value(json_object_get(row, "run")), &b);
        if (rc != LIL_OK)
            bench_die("lil_run_facts", rc, lil_store_errmsg(st));
        lil_free(b.data);
    }
    return (double)(bench_now_ns() - t0) / 1e6;
}

static int rescan_one(void *ud, const char *id)
{
    lil_bytes b = {NULL, 0};

    if (lil_run_facts(ud, id, &b) != LIL_OK)
        return 1;
    lil_free(b.data);
    return 0;
}

static void bench_page(const struct server *s, lil_store *st, size_t reps, int runs)
{
    double *server = calloc(reps, sizeof(double)), *wall = calloc(reps, sizeof(double));
    double *flr = calloc(reps, sizeof(double));
    char path[200], buf[200];
    uint64_t t0;

    if (!server || !wall || !flr)
        bench_die_errno("calloc");
    for (size_t i = 0; i < reps; i++) {
        struct reply r;
        json_t *page;

        http_get(s->port, s->cookie, "/api/runs", &r);
        page = body_json(&r, "GET /api/runs");
        if (json_array_size(json_object_get(page, "runs")) != PAGE_ROWS)
            bench_die("GET /api/runs", LIL_E_CHILD, "a page without 50 runs");
        server[i] = r.server_ms;
        wall[i] = r.wall_ms;
        flr[i] = facts_of_page(st, page);
        json_decref(page);
        free(r.text);
    }
    snprintf(buf, sizeof(buf), "a page of %d runs (50, last activity first)", runs);
    page_rows(buf, server, wall, reps);
    struct bench_stats f = bench_stats_of(flr, reps);
    snprintf(buf, sizeof(buf), "p50 %.2f ms, p99 %.2f ms", f.p50, f.p99);
    bench_row("the floor: lil_run_facts of the page's 50 runs (info)", buf, "", -1);
    for (size_t i = 0; i < reps; i++) {
        struct reply r;

        snprintf(path, sizeof(path), "/api/runs?sort=id&limit=500&offset=%d",
                 (int)((i * 7919u) % (unsigned)(runs - 500)));
        http_get(s->port, s->cookie, path, &r);
        json_decref(body_json(&r, "GET /api/runs?sort=id"));
        server[i] = r.server_ms;
        wall[i] = r.wall_ms;
        free(r.text);
    }
    snprintf(buf, sizeof(buf), "a page of 500 of %d runs (id order, mid-store)", runs);
    page_rows(buf, server, wall, reps);
    t0 = bench_now_ns();
    if (lil_store_foreach_run(st, rescan_one, st) != LIL_OK)
        bench_die("lil_store_foreach_run", LIL_E_IO, lil_store_errmsg(st));
    snprintf(buf, sizeof(buf), "%.0f ms", (double)(bench_now_ns() - t0) / 1e6);
    bench_row("a rescan: lil_run_facts of every run (info)", buf, "", -1);
    free(server);
    free(wall);
    free(flr);
}

/* ---- sse ----------------------------------------------------------------- */
static void bench_sse(const struct server *s, lil_store *st, size_t reps)
{
    struct bench_payload p = {bench_payload_bytes(BENCH_PAYLOAD), BENCH_PAYLOAD, 0};
    double *ms = calloc(reps, sizeof(double));
    struct stream es;
    char id[32], needle[48], buf[200];

    if (!ms)
        bench_die_errno("calloc");
    stream_open(s, "", &es);
    if (!stream_wait(&es, "event: hello", 5000))
        bench_die("lil serve", LIL_E_CHILD, "no hello on the event stream");
    for (size_t i = 0; i < reps; i++) {
        lil_run *run;
        lil_status rc;
        uint64_t t0;

        usleep((useconds_t)((i * 37u) % 250u) * 1000u); /* spread over the tick */
        snprintf(id, sizeof(id), "sse-%zu", i);
        run = bench_open_run(st, id, LIL_SYNC_OFF);
        if ((rc = lil_step(run, "s", bench_fill_fn, &p, NULL)) != LIL_OK)
            bench_die("lil_step", rc, lil_run_errmsg(run));
        lil_run_close(run);
        t0 = bench_now_ns();
        snprintf(needle, sizeof(needle), "\"run\":\"%s\"", id);
        if (!stream_wait(&es, needle, 10000))
            bench_die("lil serve", LIL_E_CHILD, "no runs event of a new run in 10 s");
        ms[i] = (double)(bench_now_ns() - t0) / 1e6;
    }
    stream_close(&es);
    struct bench_stats x = bench_stats_of(ms, reps);
    snprintf(buf, sizeof(buf), "p50 %.0f ms, p99 %.0f ms (%zu)", x.p50, x.p99, reps);
    bench_row("a new run to its \"runs\" event", buf, "< 1 s (p99)",
              x.p99 < TARGET_SSE_MS);
    free(ms);
}

/* ---- clients beside a loop ----------------------------------------------- */
static volatile sig_atomic_t clients_stop;

static void on_term(int sig)
{
    (void)sig;
    clients_stop = 1;
}

/* Read what the streams have (waiting at most ms for any): false when one
 * ended. */
static bool streams_read(struct stream *es, int n, int ms)
{
    struct pollfd p[CLIENTS];
    char sink[8192];

    for (int i = 0; i < n; i++)
        p[i] = (struct pollfd){.fd = es[i].fd, .events = POLLIN};
    if (poll(p, (nfds_t)n, ms) <= 0)
        return true;
    for (int i = 0; i < n; i++)
        if (p[i].revents && read(es[i].fd, sink, sizeof(sink)) <= 0)
            return false;
    return true;
}

/* The child: CLIENTS event streams (half watching run), a page GET by each
 * every CLIENT_PERIOD_MS, until SIGTERM. */
static void clients_run(const struct server *s, const char *run)
{
    struct stream es[CLIENTS];
    struct conn page[CLIENTS];
    uint64_t next[CLIENTS], period = (uint64_t)CLIENT_PERIOD_MS * 1000000u;
    char query[300];

    signal(SIGTERM, on_term);
    for (int i = 0; i < CLIENTS; i++) {
        page[i].fd = -1;
        snprintf(query, sizeof(query), i % 2 ? "?run=%s" : "", run);
        stream_open(s, query, &es[i]);
        next[i] = bench_now_ns() + (uint64_t)i * (period / CLIENTS);
    }
    while (!clients_stop) {
        uint64_t now = bench_now_ns(), soonest = now + period;

        for (int i = 0; i < CLIENTS; i++) {
            struct reply r;
            if (next[i] <= now) {
                http_get_on(&page[i], s->port, s->cookie, "/api/runs", &r);
                if (r.status != 200)
                    _exit(1);
                free(r.text);
                next[i] += period;
            }
            if (next[i] < soonest)
                soonest = next[i];
        }
        now = bench_now_ns();
        if (!streams_read(es, CLIENTS,
                          soonest > now ? (int)((soonest - now) / 1000000u) : 0))
            _exit(1);
    }
    _exit(0);
}

/* CPU time (user + system) of process pid so far, ms (/proc/PID/stat). */
static double cpu_ms_of(pid_t pid)
{
    char path[64], buf[1024], *p;
    unsigned long long ut = 0, stime = 0;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r")))
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')'); /* the name may hold spaces */
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
                     &ut, &stime) != 2)
        return 0;
    return (double)(ut + stime) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

/* `lil run SPEC --run-id ID` on the store: the wall ms of an iteration. */
static double loop_iteration_ms(const struct bench_cfg *cfg, const char *store,
                                const char *spec, const char *id)
{
    const char *argv[] = {cfg->lil_path, "--dir",    store, "run",
                          spec,          "--run-id", id,    NULL};
    uint64_t t0 = bench_now_ns();
    pid_t pid = fork();
    int st;

    if (pid < 0)
        bench_die_errno("fork");
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(126);
        execv(argv[0], (char *const *)(uintptr_t)argv);
        _exit(127);
    }
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        bench_die("lil run", LIL_E_CHILD, "the loop did not complete");
    return (double)(bench_now_ns() - t0) / 1e6 / LOOP_ITERS;
}

static void write_spec(const char *path)
{
    FILE *f = fopen(path, "w");

    if (!f)
        bench_die_errno(path);
    fprintf(
        f,
        "loopspec: \"0.1\"\nid: beside\npattern: react\n"
        "state: { vars: { n: { type: int, init: 0 } } }\n"
        "body:\n  - { id: tick, kind: shell, cmd: \"true\", on_done: { incr: n } }\n"
        "terminate: { signal: state-predicate, until: \"${state.n >= %d}\" }\n"
        "caps: { max_iterations: %d, on_cap_exceeded: fail }\n",
        LOOP_ITERS, LOOP_ITERS + 1);
    if (fclose(f) != 0)
        bench_die_errno(path);
}

/* One round with the browsers: the loop's iteration (ms).  Added to cpu:
 * [0] the server's CPU time while the loop ran, [1] the loop's wall time,
 * [2] the browsers' CPU time, [3] their wall time (all ms). */
static double busy_round(const struct bench_cfg *cfg, const struct server *s,
                         const char *store, const char *spec, const char *id,
                         double cpu[4])
{
    struct rusage ru;
    uint64_t t0, born = bench_now_ns();
    double srv0, ms;
    int st;
    pid_t kid = fork();

    if (kid < 0)
        bench_die_errno("fork");
    if (kid == 0) {
        /* the browsers stand for other machines: what they cost this one
           should weigh on the loop as little as it can */
        if (nice(19) == -1 && errno != 0)
            _exit(1);
        clients_run(s, id);
    }
    usleep(500000); /* every client connected, pages under way */
    srv0 = cpu_ms_of(s->pid);
    t0 = bench_now_ns();
    ms = loop_iteration_ms(cfg, store, spec, id);
    cpu[1] += (double)(bench_now_ns() - t0) / 1e6;
    cpu[0] += cpu_ms_of(s->pid) - srv0;
    kill(kid, SIGTERM);
    if (wait4(kid, &st, 0, &ru) != kid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        bench_die("the browsers", LIL_E_CHILD, "a request failed");
    cpu[2] += (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
              (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    cpu[3] += (double)(bench_now_ns() - born) / 1e6;
    return ms;
}

static void bench_clients(const struct bench_cfg *cfg, const struct server *s,
                          const char *store, size_t rounds)
{
    double *none = calloc(rounds, sizeof(double)),
           *busy = calloc(rounds, sizeof(double)),
           *ratio = calloc(rounds, sizeof(double));
    double cpu[4] = {0, 0, 0, 0}, n, b, q;
    struct bench_stats rs;
    char spec[4200], id[64], id2[64], buf[200];

    if (!none || !busy || !ratio)
        bench_die_errno("calloc");
    snprintf(spec, sizeof(spec), "%s/serve-beside.yaml", cfg->dir);
    write_spec(spec);
    for (size_t r = 0; r < rounds; r++) { /* in pairs, each order in turn */
        snprintf(id, sizeof(id), "beside-clients-%zu", r);
        if (r % 2)
            busy[r] = busy_round(cfg, s, store, spec, id, cpu);
        snprintf(id2, sizeof(id2), "beside-none-%zu", r);
        none[r] = loop_iteration_ms(cfg, store, spec, id2);
        if (r % 2 == 0)
            busy[r] = busy_round(cfg, s, store, spec, id, cpu);
        ratio[r] = busy[r] / none[r];
    }
    n = bench_stats_of(none, rounds).p50;
    b = bench_stats_of(busy, rounds).p50;
    rs = bench_stats_of(ratio, rounds);
    q = rs.p50;
    snprintf(buf, sizeof(buf), "%.3f ms, no browser (info)", n);
    bench_row("a loop's iteration (shell step `true`, sync full)", buf, "", -1);
    snprintf(buf, sizeof(buf),
             "%.3f ms with %d browsers: ratio %.3f (pairs %.2f to %.2f), %s", b,
             CLIENTS, q, rs.min, rs.max, q < TARGET_SLOWDOWN ? "PASS" : "FAIL");
    bench_row("the same beside 50 browsers (stream + a page every 250 ms)", buf,
              "< 1.05x", q < TARGET_SLOWDOWN);
    snprintf(buf, sizeof(buf), "lil serve %.0f%%, the browsers %.0f%% of a core",
             100 * cpu[0] / cpu[1], 100 * cpu[2] / cpu[3]);
    bench_row("CPU meanwhile (info)", buf, "", -1);
    free(none);
    free(busy);
    free(ratio);
}

void bench_serve(const struct bench_cfg *cfg)
{
    char store[4096];
    int runs = cfg->quick ? RUNS_QUICK : RUNS;
    struct server s = {0};
    lil_store *st = NULL;
    lil_status rc;
    uint64_t t0 = bench_now_ns();

    snprintf(store, sizeof(store), "%s/serve-runs", cfg->dir);
    make_runs(store, runs);
    fprintf(stderr, "lil serve: %d runs made in %.1f s\n", runs,
            (double)(bench_now_ns() - t0) / 1e9);
    t0 = bench_now_ns();
    server_start(cfg, store, &s);
    wait_indexed(&s, runs);
    fprintf(stderr, "lil serve: started and every run read in %.1f s\n",
            (double)(bench_now_ns() - t0) / 1e9);
    if ((rc = lil_store_open(NULL, store, &st)) != LIL_OK)
        bench_die("lil_store_open", rc, lil_errmsg());
    bench_section("lil serve: pages, events, and browsers beside a loop");
    bench_page(&s, st, cfg->quick ? 20 : 100, runs);
    bench_sse(&s, st, cfg->quick ? 10 : 40);
    lil_store_close(st);
    bench_clients(cfg, &s, store, cfg->quick ? 2 : 9);
    server_stop(&s);
}
