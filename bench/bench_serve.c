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
 *   clients  a loop of shell steps (`cmd: "true"`, sync off: an iteration
 *            is a process started and two records, no disk wait, so what
 *            takes CPU from it shows most) run by `lil run` on the same
 *            store, timed in windows without browsers and with CLIENTS of
 *            them, alternating: LOOP_RUNS runs of the loop, along each
 *            PAIRS_PER_RUN pairs of windows (WINDOW_MS each, after
 *            SETTLE_MS for the browsers to connect or leave), the order
 *            turned from pair to pair and from run to run.  The browsers
 *            are a child process (SCHED_IDLE: they stand for other
 *            machines, and take only a core nothing else wants) that, when
 *            on, holds CLIENTS event streams, half of them watching the
 *            loop's run, and a kept-alive connection each on which it asks
 *            for the default page every 250 ms; when off, no connection.
 *            An iteration's time in a window is the spacing of the
 *            iteration_end records that fall in it (the journal's times).
 *            Target: the median of the pairs' ratios (with, without) <
 *            1.05, the browsers given at least 90 % of the pages they ask
 *            for.  Beside it: the median's 95 % interval (bootstrap), the
 *            ratios' spread, the server's CPU time per second of window
 *            without and with browsers (/proc/PID/stat), the pages a second
 *            and event bytes the browsers got, their own CPU time.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "bench.h"

#define RUNS             10000
#define RUNS_QUICK       2000
#define RUN_STEPS        3
#define PAGE_ROWS        50
#define CLIENTS          50
#define CLIENT_PERIOD_MS 250
#define LOOP_ITERS_MAX   10000000 /* the loop beside: stopped long before */
#define LOOP_RUNS        6        /* loop runs beside the browsers, or not */
#define LOOP_RUNS_QUICK  1
#define PAIRS_PER_RUN    8    /* pairs of windows (without, with) in each */
#define BOOTSTRAP        2000 /* resamples for the median's interval */
#define WINDOW_MS        500  /* a window the loop's iterations are timed in */
#define WINDOW_MS_QUICK  400
#define SETTLE_MS        300 /* before a window: browsers connected, or gone */
#define LOOP_SETTLE_MS   700 /* before the first: the loop's run made and listed */
#define TARGET_PAGE_MS   200.0
#define TARGET_SSE_MS    1000.0
#define TARGET_SLOWDOWN  1.05
#define REPLY_MAX        (16u << 20)
#define IDLE_MS          5000 /* the idle server's CPU, measured so long (in ticks of 10 ms) */
#define PG_SCHEMA        "serve_bench"
#define PG_MAKERS        4 /* processes making the PostgreSQL runs */

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
    snprintf(name, sizeof(name), "%s: wall to last byte (info)", what);
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

/* The pages of the store st that server s serves; on: "" (the file store)
 * or "PostgreSQL: ", which starts the rows' names (the rescan only for the
 * file store). */
static void bench_page(const struct server *s, lil_store *st, size_t reps, int runs,
                       const char *on)
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
    snprintf(buf, sizeof(buf), "%sa page of %d runs (50, last activity first)", on,
             runs);
    page_rows(buf, server, wall, reps);
    struct bench_stats f = bench_stats_of(flr, reps);
    snprintf(buf, sizeof(buf), "p50 %.2f ms, p99 %.2f ms", f.p50, f.p99);
    snprintf(path, sizeof(path),
             "%sthe floor: lil_run_facts of the page's 50 runs (info)", on);
    bench_row(path, buf, "", -1);
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
    snprintf(buf, sizeof(buf), "%sa page of 500 of %d runs (id order, mid-store)", on,
             runs);
    page_rows(buf, server, wall, reps);
    if (!*on) {
        t0 = bench_now_ns();
        if (lil_store_foreach_run(st, rescan_one, st) != LIL_OK)
            bench_die("lil_store_foreach_run", LIL_E_IO, lil_store_errmsg(st));
        snprintf(buf, sizeof(buf), "%.0f ms", (double)(bench_now_ns() - t0) / 1e6);
        bench_row("a rescan: lil_run_facts of every run (info)", buf, "", -1);
    }
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

/* ---- browsers beside a loop ---------------------------------------------- */
/* What the bench tells the browsers' process (one write: atomic). */
struct browsers_cmd {
    char what;        /* 'o' on, 'f' off, 'q' quit */
    char run[64 - 1]; /* on: the run half of them watch */
};

/* What the browsers' process tells when it quits. */
struct browsers_done {
    uint64_t pages;        /* pages answered (200) */
    uint64_t stream_bytes; /* bytes their event streams brought */
    double on_ms;          /* the time they were on */
};

/* The browsers while on: their event streams, their kept-alive page
 * connections, when each asks next; one epoll set holds the command pipe
 * and the streams (a browser on another machine costs this one nothing:
 * theirs should cost it little). */
struct browsers_on {
    struct stream es[CLIENTS];
    struct conn page[CLIENTS];
    uint64_t next[CLIENTS], since;
    int ep;
};

static void browsers_connect(const struct server *s, const char *run,
                             struct browsers_on *b)
{
    uint64_t period = (uint64_t)CLIENT_PERIOD_MS * 1000000u;
    char query[300];

    b->since = bench_now_ns();
    for (int i = 0; i < CLIENTS; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i + 1};
        b->page[i].fd = -1;
        snprintf(query, sizeof(query), i % 2 ? "?run=%s" : "", run);
        stream_open(s, query, &b->es[i]);
        if (epoll_ctl(b->ep, EPOLL_CTL_ADD, b->es[i].fd, &ev) != 0)
            _exit(1);
        b->next[i] = b->since + (uint64_t)i * (period / CLIENTS);
    }
}

static void browsers_close(struct browsers_on *b, struct browsers_done *done)
{
    for (int i = 0; i < CLIENTS; i++) {
        (void)epoll_ctl(b->ep, EPOLL_CTL_DEL, b->es[i].fd, NULL);
        stream_close(&b->es[i]);
        if (b->page[i].fd >= 0)
            close(b->page[i].fd);
    }
    done->on_ms += (double)(bench_now_ns() - b->since) / 1e6;
}

/* Each browser whose time has come asks for the page: when the next is
 * due (monotonic ns). */
static uint64_t browsers_ask(const struct server *s, struct browsers_on *b,
                             struct browsers_done *done)
{
    uint64_t period = (uint64_t)CLIENT_PERIOD_MS * 1000000u;
    uint64_t now = bench_now_ns(), soonest = now + period;

    for (int i = 0; i < CLIENTS; i++) {
        struct reply r;
        if (b->next[i] <= now) {
            http_get_on(&b->page[i], s->port, s->cookie, "/api/runs", &r);
            if (r.status != 200)
                _exit(1);
            done->pages++;
            free(r.text);
            b->next[i] += period;
        }
        if (b->next[i] < soonest)
            soonest = b->next[i];
    }
    return soonest;
}

/* Wait until the command pipe speaks or ms pass, reading what the streams
 * bring meanwhile: true when a command came. */
static bool browsers_wait(struct browsers_on *b, int ms, struct browsers_done *done)
{
    struct epoll_event ev[CLIENTS + 1];
    char sink[16384];
    bool cmd = false;
    int n = epoll_wait(b->ep, ev, CLIENTS + 1, ms);

    for (int k = 0; k < n; k++) {
        uint32_t i = ev[k].data.u32;
        ssize_t r;

        if (i == 0) {
            cmd = true;
            continue;
        }
        r = read(b->es[i - 1].fd, sink, sizeof(sink));
        if (r <= 0)
            _exit(1); /* a stream ended */
        done->stream_bytes += (uint64_t)r;
    }
    return cmd;
}

/* The browsers' process: off until told; on, CLIENTS event streams (half
 * watching the run named) and a page GET by each every CLIENT_PERIOD_MS on
 * its own kept-alive connection; off again, every connection closed.  At
 * 'q', what they got is written to out. */
static void browsers_run(const struct server *s, int cmd, int out)
{
    struct browsers_on *b = calloc(1, sizeof(*b));
    struct browsers_done done = {0, 0, 0};
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 0};
    struct browsers_cmd c;
    bool on = false;

    if (!b || (b->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
        epoll_ctl(b->ep, EPOLL_CTL_ADD, cmd, &ev) != 0)
        _exit(1);
    for (;;) {
        uint64_t soonest = on ? browsers_ask(s, b, &done) : 0, now = bench_now_ns();
        int ms = !on             ? -1
                 : soonest > now ? (int)((soonest - now + 999999u) / 1000000u)
                                 : 0;

        if (!browsers_wait(b, ms, &done))
            continue;
        if (read(cmd, &c, sizeof(c)) != (ssize_t)sizeof(c))
            _exit(1);
        if (on && c.what != 'o')
            browsers_close(b, &done);
        if (!on && c.what == 'o') {
            c.run[sizeof(c.run) - 1] = '\0';
            browsers_connect(s, c.run, b);
        }
        on = c.what == 'o';
        if (c.what == 'q')
            _exit(write(out, &done, sizeof(done)) == (ssize_t)sizeof(done) ? 0 : 1);
    }
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

static int64_t wall_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* What the windows add up: their time, the server's CPU time in them
 * (without browsers [0], with [1]); what the browsers got and their CPU
 * time. */
struct tally {
    double window_ms[2], server_ms[2];
    struct browsers_done got;
    double browser_cpu_ms;
};

struct browsers {
    pid_t pid;
    int cmd, out; /* what the bench tells them, what they tell at the end */
};

static void browsers_start(const struct server *s, struct browsers *b)
{
    struct sched_param sp = {0};
    int cmd[2], out[2];

    if (pipe2(cmd, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
        bench_die_errno("pipe2");
    b->pid = fork();
    if (b->pid < 0)
        bench_die_errno("fork");
    if (b->pid == 0) {
        /* the browsers stand for other machines: their own process (the
           requests they make, what they read) runs only on a core nothing
           else wants (SCHED_IDLE); the pages they get are counted, so a
           process starved of them shows */
        close(cmd[1]);
        close(out[0]);
        if (sched_setscheduler(0, SCHED_IDLE, &sp) != 0)
            _exit(1);
        browsers_run(s, cmd[0], out[1]);
    }
    close(cmd[0]);
    close(out[1]);
    b->cmd = cmd[1];
    b->out = out[0];
}

static void browsers_tell(const struct browsers *b, char what, const char *run)
{
    struct browsers_cmd c;

    memset(&c, 0, sizeof(c));
    c.what = what;
    snprintf(c.run, sizeof(c.run), "%s", run ? run : "");
    if (write(b->cmd, &c, sizeof(c)) != (ssize_t)sizeof(c))
        bench_die_errno("write to the browsers");
}

static void browsers_quit(const struct browsers *b, struct tally *t)
{
    struct rusage ru;
    int st;

    browsers_tell(b, 'q', NULL);
    if (read(b->out, &t->got, sizeof(t->got)) != (ssize_t)sizeof(t->got))
        bench_die("the browsers", LIL_E_CHILD, "a request or a stream failed");
    close(b->cmd);
    close(b->out);
    if (wait4(b->pid, &st, 0, &ru) != b->pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        bench_die("the browsers", LIL_E_CHILD, "they did not end well");
    t->browser_cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
                        (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* `lil run SPEC --run-id ID` on the store, in the background. */
static pid_t loop_start(const struct bench_cfg *cfg, const char *store,
                        const char *spec, const char *id)
{
    const char *argv[] = {cfg->lil_path, "--dir", store,    "run", spec,
                          "--run-id",    id,      "--sync", "off", NULL};
    pid_t pid = fork();

    if (pid < 0)
        bench_die_errno("fork");
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(126);
        execv(argv[0], (char *const *)(uintptr_t)argv);
        _exit(127);
    }
    return pid;
}

/* Stop the loop (SIGTERM: it stops at its next iteration's boundary). */
static void loop_stop(pid_t pid)
{
    int st;

    kill(pid, SIGTERM);
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) >= 126)
        bench_die("lil run", LIL_E_CHILD, "the loop did not run or did not stop");
}

/* A window of the loop: wall times (CLOCK_REALTIME, as the journal's). */
struct window {
    int64_t t0, t1;
};

/* Let ms pass as a window (busy: with browsers): the server's CPU time in
 * it and its length added to t. */
static void window_take(const struct server *s, int ms, int busy, struct window *w,
                        struct tally *t)
{
    double cpu0 = cpu_ms_of(s->pid);

    w->t0 = wall_ns();
    usleep((useconds_t)ms * 1000u);
    w->t1 = wall_ns();
    t->server_ms[busy] += cpu_ms_of(s->pid) - cpu0;
    t->window_ms[busy] += (double)(w->t1 - w->t0) / 1e6;
}

/* The iterations of run id that ended in each of the nw windows (its
 * iteration_end events): the mean time of one (the spacing of their ends),
 * ms, into ms[k]. */
static void iterations_in(lil_store *st, const char *id, const struct window *w,
                          size_t nw, double *ms)
{
    lil_events_opts o = {
        .struct_size = sizeof(o), .from_seq = 1, .max = 5000, .types = "iteration_end"};
    int64_t first[2 * PAIRS_PER_RUN], last[2 * PAIRS_PER_RUN];
    size_t n[2 * PAIRS_PER_RUN] = {0};
    bool more = true;

    while (more) {
        lil_bytes b = {NULL, 0};
        lil_status rc = lil_run_events_with(st, id, &o, &b);
        json_t *doc = rc == LIL_OK ? json_loadb(b.data, b.len, 0, NULL) : NULL, *ev;
        size_t i;

        lil_free(b.data);
        if (!doc)
            bench_die("lil_run_events", rc, lil_store_errmsg(st));
        json_array_foreach(json_object_get(doc, "events"), i, ev)
        {
            int64_t ts = (int64_t)json_integer_value(json_object_get(ev, "ts_ns"));
            for (size_t k = 0; k < nw; k++)
                if (ts >= w[k].t0 && ts <= w[k].t1) {
                    if (n[k]++ == 0)
                        first[k] = ts;
                    last[k] = ts;
                }
        }
        more = json_is_true(json_object_get(doc, "more"));
        o.from_seq = (uint64_t)json_integer_value(json_object_get(doc, "next"));
        json_decref(doc);
    }
    for (size_t k = 0; k < nw; k++) {
        if (n[k] < 3)
            bench_die("lil run", LIL_E_CHILD, "fewer than 3 iterations in a window");
        ms[k] = (double)(last[k] - first[k]) / 1e6 / (double)(n[k] - 1);
    }
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
        LOOP_ITERS_MAX, LOOP_ITERS_MAX + 1);
    if (fclose(f) != 0)
        bench_die_errno(path);
}

struct beside {
    const struct bench_cfg *cfg;
    const struct server *s;
    const struct browsers *b;
    lil_store *st;
    const char *store, *spec;
    double *none, *busy; /* each pair's iteration, ms */
    size_t pairs;        /* done so far */
    struct tally t;
};

/* One loop run (the run-th) and PAIRS_PER_RUN pairs of windows along it:
 * one without browsers and one with, the order alternating from pair to
 * pair and the first window's kind from run to run. */
static void run_pairs(struct beside *x, const char *id, size_t run)
{
    int window = x->cfg->quick ? WINDOW_MS_QUICK : WINDOW_MS;
    struct window w[2 * PAIRS_PER_RUN];
    double ms[2 * PAIRS_PER_RUN];
    int busy[2 * PAIRS_PER_RUN];
    pid_t loop = loop_start(x->cfg, x->store, x->spec, id);

    usleep(LOOP_SETTLE_MS * 1000u); /* the run made, the server's list read again */
    for (int k = 0; k < 2 * PAIRS_PER_RUN; k++) {
        busy[k] = (int)(((size_t)k + (size_t)k / 2 + run) % 2); /* off on, on off.. */
        browsers_tell(x->b, busy[k] ? 'o' : 'f', id);
        usleep(SETTLE_MS * 1000u); /* browsers connected and asking, or gone */
        window_take(x->s, window, busy[k], &w[k], &x->t);
    }
    browsers_tell(x->b, 'f', NULL);
    loop_stop(loop);
    iterations_in(x->st, id, w, 2 * PAIRS_PER_RUN, ms);
    for (int p = 0; p < PAIRS_PER_RUN; p++) {
        int with = busy[2 * p] ? 2 * p : 2 * p + 1;
        x->busy[x->pairs] = ms[with];
        x->none[x->pairs] = ms[with == 2 * p ? 2 * p + 1 : 2 * p];
        x->pairs++;
    }
}

/* The 95 % interval of the median of x (n of them): the 2.5th and 97.5th
 * percentiles of the medians of BOOTSTRAP resamples (a fixed seed: the
 * same figures give the same interval). */
static void median_interval(const double *x, size_t n, double *lo, double *hi)
{
    double *med = calloc(BOOTSTRAP, sizeof(double)), *r = calloc(n, sizeof(double));
    uint64_t seed = 0x9e3779b97f4a7c15u;

    if (!med || !r)
        bench_die_errno("calloc");
    for (size_t b = 0; b < BOOTSTRAP; b++) {
        for (size_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            r[i] = x[(seed >> 33) % n];
        }
        med[b] = bench_stats_of(r, n).p50;
    }
    bench_stats_of(med, BOOTSTRAP);
    *lo = med[BOOTSTRAP / 40];
    *hi = med[BOOTSTRAP - 1 - BOOTSTRAP / 40];
    free(med);
    free(r);
}

static void clients_rows(const struct beside *x, double *ratio)
{
    const struct tally *t = &x->t;
    double lo, hi, n = bench_stats_of(x->none, x->pairs).p50;
    double b = bench_stats_of(x->busy, x->pairs).p50;
    double rate = (double)t->got.pages / (t->got.on_ms / 1e3);
    bool fed = rate >= 0.9 * CLIENTS * 1000.0 / CLIENT_PERIOD_MS;
    struct bench_stats rs;
    bool pass;
    char buf[400];

    median_interval(ratio, x->pairs, &lo, &hi);
    rs = bench_stats_of(ratio, x->pairs);
    pass = rs.p50 < TARGET_SLOWDOWN && fed;
    snprintf(buf, sizeof(buf), "%.3f ms; lil serve %.1f%% of a core", n,
             100 * t->server_ms[0] / t->window_ms[0]);
    bench_row("a loop's iteration (shell step `true`, sync off), no browser (info)",
              buf, "", -1);
    snprintf(buf, sizeof(buf),
             "%.3f ms; ratio %.3f (median of %zu pairs, 95%% interval %.3f to %.3f); "
             "lil serve %.1f%% of a core; %s",
             b, rs.p50, x->pairs, lo, hi, 100 * t->server_ms[1] / t->window_ms[1],
             pass ? "PASS" : "FAIL");
    bench_row("the same beside 50 browsers (stream + a page every 250 ms)", buf,
              "< 1.05x", pass);
    snprintf(buf, sizeof(buf), "middle half %.3f to %.3f, all %.2f to %.2f",
             ratio[x->pairs / 4], ratio[(3 * x->pairs) / 4], rs.min, rs.max);
    bench_row("the pairs' ratios (info)", buf, "", -1);
    snprintf(buf, sizeof(buf),
             "%.0f pages/s of %d asked%s, %.1f KB/s of events; their process %.1f%% "
             "of a core (SCHED_IDLE)",
             rate, CLIENTS * 1000 / CLIENT_PERIOD_MS, fed ? "" : " (too few: FAIL)",
             (double)t->got.stream_bytes / 1e3 / (t->got.on_ms / 1e3),
             100 * t->browser_cpu_ms / t->got.on_ms);
    bench_row("the browsers, while on (info)", buf, "", -1);
}

static void bench_clients(const struct bench_cfg *cfg, const struct server *s,
                          const char *store)
{
    size_t runs = cfg->quick ? LOOP_RUNS_QUICK : LOOP_RUNS;
    struct browsers b = {0, -1, -1};
    struct beside x = {cfg,  s,    &b,   NULL, store,
                       NULL, NULL, NULL, 0,    {{0, 0}, {0, 0}, {0, 0, 0}, 0}};
    double *ratio = calloc(runs * PAIRS_PER_RUN, sizeof(double));
    char spec[4200], id[64];
    lil_status rc;

    x.none = calloc(runs * PAIRS_PER_RUN, sizeof(double));
    x.busy = calloc(runs * PAIRS_PER_RUN, sizeof(double));
    if (!x.none || !x.busy || !ratio)
        bench_die_errno("calloc");
    if ((rc = lil_store_open(NULL, store, &x.st)) != LIL_OK)
        bench_die("lil_store_open", rc, lil_errmsg());
    snprintf(spec, sizeof(spec), "%s/serve-beside.yaml", cfg->dir);
    write_spec(spec);
    x.spec = spec;
    browsers_start(s, &b);
    for (size_t r = 0; r < runs; r++) {
        snprintf(id, sizeof(id), "beside-%zu", r);
        run_pairs(&x, id, r);
    }
    browsers_quit(&b, &x.t);
    lil_store_close(x.st);
    for (size_t p = 0; p < x.pairs; p++)
        ratio[p] = x.busy[p] / x.none[p];
    clients_rows(&x, ratio);
    free(x.none);
    free(x.busy);
    free(ratio);
}

/* ---- starting, idling ---------------------------------------------------- */

/* Start the server on store (runs of them) and wait until every run is
 * read: a row with both times. */
static void start_timed(const struct bench_cfg *cfg, const char *store, int runs,
                        const char *on, struct server *s)
{
    uint64_t t0 = bench_now_ns();
    double listening;
    char name[200], buf[200];

    server_start(cfg, store, s);
    listening = (double)(bench_now_ns() - t0) / 1e9;
    wait_indexed(s, runs);
    snprintf(name, sizeof(name), "%slil serve started on %d runs (info)", on, runs);
    snprintf(buf, sizeof(buf), "listening after %.1f s, every run read after %.1f s",
             listening, (double)(bench_now_ns() - t0) / 1e9);
    bench_row(name, buf, "", -1);
}

/* CPU time of the processes (pids, n of them) so far, ms. */
static double cpu_ms_of_all(const pid_t *pids, size_t n)
{
    double ms = 0;

    for (size_t i = 0; i < n; i++)
        ms += cpu_ms_of(pids[i]);
    return ms;
}

/* What the server costs while nobody asks anything: its CPU time (and that
 * of the PostgreSQL backends its connections have, backends[nb]) over
 * IDLE_MS. */
static void bench_idle(const struct server *s, const pid_t *backends, size_t nb,
                       int runs, const char *on)
{
    double srv0, pg0, srv, pg;
    char name[200], buf[200];

    /* every run looked at once by the sweep since it was read (300 a tick,
       docs/serve.md): a quiet run's look is then one fstat or query */
    usleep((useconds_t)(runs / 300 + 4) * 250000u);
    srv0 = cpu_ms_of(s->pid);
    pg0 = cpu_ms_of_all(backends, nb);
    usleep(IDLE_MS * 1000u);
    srv = cpu_ms_of(s->pid) - srv0;
    pg = cpu_ms_of_all(backends, nb) - pg0;
    snprintf(name, sizeof(name), "%sidle: %d runs, no browser, nothing moving (info)",
             on, runs);
    if (nb)
        snprintf(buf, sizeof(buf),
                 "lil serve %.1f%% of a core, its PostgreSQL backend %.1f%%",
                 100 * srv / IDLE_MS, 100 * pg / IDLE_MS);
    else
        snprintf(buf, sizeof(buf), "lil serve %.1f%% of a core", 100 * srv / IDLE_MS);
    bench_row(name, buf, "", -1);
}

/* ---- PostgreSQL ------------------------------------------------------------ */

/* The benchmark's store on the server url: schema PG_SCHEMA, the server's
 * connections named app (application_name) when app is not NULL. */
static void pg_where(const char *url, const char *app, char *out, size_t cap)
{
    snprintf(out, cap, "%s%sschema=" PG_SCHEMA "%s%s", url,
             strchr(url, '?') ? "&" : "?", app ? "&application_name=" : "",
             app ? app : "");
}

static void pg_exec(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);

    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
        bench_die(sql, LIL_E_PG, PQerrorMessage(c));
    PQclear(r);
}

/* n runs in the store where, made by PG_MAKERS processes at once: run-<k>,
 * RUN_STEPS steps each, every third completed (as the file store's). */
static void make_pg_runs(const char *where, int n)
{
    pid_t kids[PG_MAKERS];
    int st;

    for (int m = 0; m < PG_MAKERS; m++) {
        kids[m] = fork();
        if (kids[m] < 0)
            bench_die_errno("fork");
        if (kids[m] == 0) {
            struct bench_payload p = {bench_payload_bytes(BENCH_PAYLOAD), BENCH_PAYLOAD,
                                      0};
            lil_store *store = NULL;
            bool bad = lil_store_open(NULL, where, &store) != LIL_OK;

            for (int i = m; !bad && i < n; i += PG_MAKERS) {
                char id[32];
                lil_run *run;

                snprintf(id, sizeof(id), "run-%05d", i);
                run = bench_open_run(store, id, LIL_SYNC_OFF);
                for (int k = 0; !bad && k < RUN_STEPS; k++)
                    bad = lil_step(run, "s", bench_fill_fn, &p, NULL) != LIL_OK;
                bad = bad || (i % 3 == 0 && lil_run_complete(run, "ok", 2) != LIL_OK);
                bad = lil_run_close(run) != LIL_OK || bad;
            }
            lil_store_close(store);
            _exit(bad);
        }
    }
    for (int m = 0; m < PG_MAKERS; m++)
        if (waitpid(kids[m], &st, 0) != kids[m] || !WIFEXITED(st) ||
            WEXITSTATUS(st) != 0)
            bench_die("making the PostgreSQL runs", LIL_E_PG, "a maker failed");
}

/* The backends of the server's connections (application_name app): their
 * pids into pids (cap at most); how many. */
static size_t pg_backends(PGconn *c, const char *app, pid_t *pids, size_t cap)
{
    const char *params[] = {app};
    PGresult *r = PQexecParams(c,
                               "SELECT pid FROM pg_stat_activity WHERE "
                               "application_name = $1",
                               1, NULL, params, NULL, NULL, 0);
    size_t n = 0;

    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        bench_die("pg_stat_activity", LIL_E_PG, PQerrorMessage(c));
    for (int i = 0; i < PQntuples(r) && n < cap; i++)
        pids[n++] = (pid_t)atoi(PQgetvalue(r, i, 0));
    PQclear(r);
    return n;
}

/* The same pages on a PostgreSQL store of as many runs: how long the
 * server takes to start and read them, a page's server time, its idle
 * cost. */
static void bench_serve_pg(const struct bench_cfg *cfg, int runs)
{
    static const char app[] = "lil-serve-bench";
    char where[2048], served[2048];
    lil_schema_info info = {.struct_size = sizeof(info)};
    struct server s = {0};
    pid_t backends[8];
    lil_store *st = NULL;
    PGconn *c;
    lil_status rc;
    uint64_t t0;

    if (!cfg->pg) {
        bench_row("PostgreSQL: lil serve",
                  "not run: no server (lil_bench --pg URL; bench/run.sh starts one "
                  "when PostgreSQL is installed)",
                  "", -1);
        return;
    }
    c = PQconnectdb(cfg->pg);
    if (PQstatus(c) != CONNECTION_OK)
        bench_die("PQconnectdb", LIL_E_PG, PQerrorMessage(c));
    pg_exec(c, "DROP SCHEMA IF EXISTS " PG_SCHEMA " CASCADE");
    pg_where(cfg->pg, NULL, where, sizeof(where));
    pg_where(cfg->pg, app, served, sizeof(served));
    if ((rc = lil_store_schema(NULL, where, LIL_SCHEMA_INIT, &info)) != LIL_OK)
        bench_die("lil_store_schema (PostgreSQL)", rc, lil_errmsg());
    t0 = bench_now_ns();
    make_pg_runs(where, runs);
    fprintf(stderr, "lil serve: %d PostgreSQL runs made in %.1f s\n", runs,
            (double)(bench_now_ns() - t0) / 1e9);
    start_timed(cfg, served, runs, "PostgreSQL: ", &s);
    if ((rc = lil_store_open(NULL, where, &st)) != LIL_OK)
        bench_die("lil_store_open (PostgreSQL)", rc, lil_errmsg());
    bench_page(&s, st, cfg->quick ? 20 : 100, runs, "PostgreSQL: ");
    lil_store_close(st);
    bench_idle(&s, backends, pg_backends(c, app, backends, 8), runs, "PostgreSQL: ");
    server_stop(&s);
    pg_exec(c, "DROP SCHEMA IF EXISTS " PG_SCHEMA " CASCADE");
    PQfinish(c);
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
    bench_section("lil serve: pages, events, and browsers beside a loop");
    start_timed(cfg, store, runs, "", &s);
    if ((rc = lil_store_open(NULL, store, &st)) != LIL_OK)
        bench_die("lil_store_open", rc, lil_errmsg());
    bench_page(&s, st, cfg->quick ? 20 : 100, runs, "");
    bench_sse(&s, st, cfg->quick ? 10 : 40);
    bench_idle(&s, NULL, 0, runs, "");
    lil_store_close(st);
    bench_clients(cfg, &s, store);
    server_stop(&s);
    bench_serve_pg(cfg, runs);
}
