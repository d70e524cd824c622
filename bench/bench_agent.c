/*
 * bench_agent.c -- what the loop runner costs around an agent call, beside
 * the call itself, measured in the same run (`lil_bench --only agent`):
 *
 *   server   a fake OpenAI-compatible server on 127.0.0.1, a thread of
 *            this process (poll over its connections, keep-alive,
 *            TCP_NODELAY): every POST gets the same prepared reply, a
 *            small chat completion with usage, or a stream of server-sent
 *            events (content deltas of 64 bytes, then the usage, then
 *            [DONE]), with a Content-Length either way.
 *   bare     the same HTTP POST (the body and headers the llm harness
 *            sends for the same prompt) with libcurl directly -- the same
 *            libcurl the harness loads (curl_dl.h, internal) -- on one easy
 *            handle kept between calls (its connection reused), the reply's
 *            bytes counted and dropped.
 *   runner   a loop whose body is one `kind: agent, harness: llm` step
 *            (LIL_LLM_BASE_URL pointing at the server, model gpt-4o-mini),
 *            sync=off, lil_loop_run in-process.  The bare call runs in the
 *            progress callback at the start of every iteration, so the two
 *            alternate and see the same machine; an iteration's time is
 *            from the callback's return to the next callback: the harness's
 *            call and everything the runner does around it (rendering,
 *            intent, outcome, snapshot, usage, meters, the caps).
 *
 * Rows: per iteration and per bare call (p50, mean, the calling thread's
 * CPU), and their difference, the runner's own cost: target <= 100 µs (the
 * p50 difference of wall times).  Then the same with a streamed reply of
 * 1 KiB and of 1 MiB of content: the difference per reply byte, and the
 * most bytes the loop's env held at once during an iteration (a counting
 * allocator) beside the bytes of the stream: the stream is read as it
 * arrives and never held whole (target: peak < stream bytes).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agents/agent_llm_int.h"
#include "bench_loop.h"
#include "effects/curl_dl.h"

#define WARMUP     5
#define MAX_CONNS  16
#define CHUNK      64 /* content bytes per streamed event */
#define CHUNK_FINE 16 /* the same content in more, smaller events */
#define REQ_MAX    (1u << 20)
#define AGENT_STEP "    kind: agent\n    harness: llm\n    prompt: noop\n"
#define API_KEY    "sk-bench-0123456789"

/* ---- a growable text ------------------------------------------------------------ */

struct text {
    char *p;
    size_t len, cap;
};

static void text_add(struct text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + n + 1)
            cap *= 2;
        t->p = realloc(t->p, cap);
        if (!t->p)
            bench_die_errno("realloc");
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

/* n bytes c. */
static void text_fill(struct text *t, char c, size_t n)
{
    char buf[4096];

    memset(buf, c, sizeof(buf));
    for (size_t at = 0; at < n; at += sizeof(buf))
        text_add(t, buf, n - at < sizeof(buf) ? n - at : sizeof(buf));
}

static void text_addf(struct text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void text_addf(struct text *t, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(buf))
        bench_die("text_addf", LIL_E_TOOBIG, fmt);
    text_add(t, buf, (size_t)n);
}

/* ---- the replies ------------------------------------------------------------------
 */

#define USAGE "{\"prompt_tokens\":24,\"completion_tokens\":3,\"total_tokens\":27}"

/* A whole HTTP response: status line, headers, body. */
static void http_response(struct text *out, const char *ctype, const struct text *body)
{
    text_addf(out,
              "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
              "Connection: keep-alive\r\n\r\n",
              ctype, body->len);
    text_add(out, body->p, body->len);
}

/* A chat completion whose content is content_len bytes of 'a' (at
 * least "done"), with usage. */
static void reply_plain(struct text *out, size_t content_len)
{
    struct text body = {0};

    text_addf(&body,
              "{\"id\":\"c1\",\"object\":\"chat.completion\",\"model\":\"gpt-4o-mini\","
              "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
              "\"content\":\"");
    if (content_len == 0)
        text_add(&body, "done", 4);
    text_fill(&body, 'a', content_len);
    text_addf(&body, "\"},\"finish_reason\":\"stop\"}],\"usage\":%s}", USAGE);
    http_response(out, "application/json", &body);
    free(body.p);
}

/* Server-sent events: content_len bytes of 'a' in deltas of chunk bytes
 * (at most CHUNK), the usage, [DONE]. */
static void reply_stream(struct text *out, size_t content_len, size_t chunk)
{
    struct text body = {0};
    char piece[CHUNK + 1];

    memset(piece, 'a', CHUNK);
    piece[CHUNK] = '\0';
    for (size_t at = 0; at < content_len; at += chunk) {
        size_t n = content_len - at < chunk ? content_len - at : chunk;
        text_addf(
            &body,
            "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":"
            "[{\"index\":0,\"delta\":{\"content\":\"%.*s\"}}],\"usage\":null}\n\n",
            (int)n, piece);
    }
    text_addf(&body, "data: {\"id\":\"c1\",\"choices\":[],\"usage\":%s}\n\n", USAGE);
    text_addf(&body, "data: [DONE]\n\n");
    http_response(out, "text/event-stream", &body);
    free(body.p);
}

/* ---- the server -------------------------------------------------------------------
 */

struct conn {
    int fd;
    struct text in;
};

struct server {
    int lfd, port, stop[2];
    pthread_t thread;
    const struct text *_Atomic reply; /* what every request gets */
    atomic_ulong requests;
    struct conn conns[MAX_CONNS];
};

static void conn_close(struct conn *c)
{
    close(c->fd);
    free(c->in.p);
    memset(c, 0, sizeof(*c));
    c->fd = -1;
}

/* The Content-Length of the request whose headers end at hdr_end. */
static size_t content_length(const char *req, const char *hdr_end)
{
    for (const char *p = req; p && p < hdr_end; p = strstr(p, "\r\n")) {
        p += p == req ? 0 : 2;
        if (strncasecmp(p, "content-length:", 15) == 0)
            return (size_t)strtoul(p + 15, NULL, 10);
    }
    return 0;
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* the client went away */
        p += w;
        n -= (size_t)w;
    }
}

/* Answer every complete request in c's buffer; false to close c. */
static bool conn_serve(struct server *s, struct conn *c)
{
    for (;;) {
        char *end = c->in.p ? strstr(c->in.p, "\r\n\r\n") : NULL;
        size_t head, need;
        const struct text *r;

        if (!end)
            return c->in.len < REQ_MAX;
        head = (size_t)(end - c->in.p) + 4;
        need = head + content_length(c->in.p, end);
        if (c->in.len < need)
            return need < REQ_MAX;
        r = atomic_load(&s->reply);
        write_all(c->fd, r->p, r->len);
        atomic_fetch_add(&s->requests, 1);
        memmove(c->in.p, c->in.p + need, c->in.len - need + 1);
        c->in.len -= need;
    }
}

static void conn_read(struct server *s, struct conn *c)
{
    char buf[65536];
    ssize_t n = read(c->fd, buf, sizeof(buf));

    if (n < 0 && errno == EINTR)
        return;
    if (n <= 0) {
        conn_close(c);
        return;
    }
    text_add(&c->in, buf, (size_t)n);
    if (!conn_serve(s, c))
        conn_close(c);
}

static void conn_accept(struct server *s)
{
    int one = 1, fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);

    if (fd < 0)
        return;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    for (int i = 0; i < MAX_CONNS; i++)
        if (s->conns[i].fd < 0) {
            s->conns[i].fd = fd;
            return;
        }
    close(fd); /* too many: the client sees it closed */
}

static void *server_main(void *ud)
{
    struct server *s = ud;
    struct pollfd pfd[MAX_CONNS + 2];

    for (;;) {
        int n = 0;
        pfd[n++] = (struct pollfd){.fd = s->stop[0], .events = POLLIN};
        pfd[n++] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
        for (int i = 0; i < MAX_CONNS; i++)
            pfd[n++] = (struct pollfd){.fd = s->conns[i].fd, .events = POLLIN};
        if (poll(pfd, (nfds_t)n, -1) < 0 && errno != EINTR)
            bench_die_errno("poll");
        if (pfd[0].revents)
            return NULL;
        if (pfd[1].revents & POLLIN)
            conn_accept(s);
        for (int i = 0; i < MAX_CONNS; i++)
            if (s->conns[i].fd >= 0 && pfd[i + 2].revents)
                conn_read(s, &s->conns[i]);
    }
}

static void server_start(struct server *s, const struct text *reply)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);

    memset(s, 0, sizeof(*s));
    for (int i = 0; i < MAX_CONNS; i++)
        s->conns[i].fd = -1;
    atomic_store(&s->reply, reply);
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(s->lfd, 64) != 0 ||
        getsockname(s->lfd, (struct sockaddr *)&a, &alen) != 0 ||
        pipe2(s->stop, O_CLOEXEC) != 0)
        bench_die_errno("the fake LLM server's socket");
    s->port = ntohs(a.sin_port);
    if (pthread_create(&s->thread, NULL, server_main, s) != 0)
        bench_die_errno("pthread_create");
}

static void server_stop(struct server *s)
{
    if (write(s->stop[1], "x", 1) != 1)
        bench_die_errno("write");
    pthread_join(s->thread, NULL);
    for (int i = 0; i < MAX_CONNS; i++)
        if (s->conns[i].fd >= 0)
            conn_close(&s->conns[i]);
    close(s->lfd);
    close(s->stop[0]);
    close(s->stop[1]);
}

/* ---- the bare call ----------------------------------------------------------------
 */

struct bare {
    const struct lil_curl *c;
    CURL *h;
    struct curl_slist *headers;
    char url[96];
    struct text body;
    size_t got; /* bytes of the last reply */
};

static size_t bare_sink(char *data, size_t size, size_t n, void *ud)
{
    (void)data;
    ((struct bare *)ud)->got += size * n;
    return size * n;
}

/* The body the harness sends for the prompt "noop" (agent_llm.c). */
static void bare_body(struct text *b, bool stream)
{
    text_addf(b,
              "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"system\","
              "\"content\":\"%s\"},{\"role\":\"user\",\"content\":\"noop\"}],"
              "\"max_tokens\":2000,\"temperature\":0",
              LIL_LLM_SYSTEM);
    if (stream)
        text_addf(b, ",\"stream\":true,\"stream_options\":{\"include_usage\":true}");
    text_addf(b, "}");
}

static void bare_open(struct bare *b, int port, bool stream)
{
    struct lil_err err = {0};
    const struct lil_curl *c;
    CURLcode cc = CURLE_OK;

    memset(b, 0, sizeof(*b));
    if (lil__curl_dl_load(&err, &b->c) != LIL_OK)
        bench_die("lil__curl_dl_load", err.code, err.msg);
    c = b->c;
    snprintf(b->url, sizeof(b->url), "http://127.0.0.1:%d/v1/chat/completions", port);
    bare_body(&b->body, stream);
    b->headers = c->slist_append(b->headers, "Content-Type: application/json");
    b->headers = c->slist_append(b->headers, "Authorization: Bearer " API_KEY);
    b->headers = c->slist_append(b->headers, "Expect:");
    b->h = c->easy_init();
    if (!b->h || !b->headers)
        bench_die("curl_easy_init", LIL_E_NOMEM, "");
    cc |= c->easy_setopt(b->h, CURLOPT_URL, b->url);
    cc |= c->easy_setopt(b->h, CURLOPT_PROTOCOLS_STR, "http,https");
    cc |= c->easy_setopt(b->h, CURLOPT_NOSIGNAL, 1L);
    cc |= c->easy_setopt(b->h, CURLOPT_TIMEOUT_MS, 120000L);
    cc |= c->easy_setopt(b->h, CURLOPT_ACCEPT_ENCODING, "");
    cc |= c->easy_setopt(b->h, CURLOPT_WRITEFUNCTION, bare_sink);
    cc |= c->easy_setopt(b->h, CURLOPT_WRITEDATA, b);
    cc |= c->easy_setopt(b->h, CURLOPT_HTTPHEADER, b->headers);
    cc |= c->easy_setopt(b->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)b->body.len);
    cc |= c->easy_setopt(b->h, CURLOPT_POSTFIELDS, b->body.p);
    if (cc != CURLE_OK)
        bench_die("curl_easy_setopt", LIL_E_HTTP, "");
}

static void bare_call(struct bare *b)
{
    long status = 0;
    CURLcode cc;

    b->got = 0;
    cc = b->c->easy_perform(b->h);
    b->c->easy_getinfo(b->h, CURLINFO_RESPONSE_CODE, &status);
    if (cc != CURLE_OK || status != 200)
        bench_die("the bare POST", LIL_E_HTTP, b->c->easy_strerror(cc));
}

static void bare_close(struct bare *b)
{
    b->c->easy_cleanup(b->h);
    b->c->slist_free_all(b->headers);
    free(b->body.p);
}

/* ---- the loop's env: an allocator that counts ---------------------------------- */

struct held {
    size_t now, peak;
};

static void *held_malloc(void *ud, size_t n)
{
    struct held *h = ud;
    void *p = malloc(n);

    if (p) {
        h->now += malloc_usable_size(p);
        h->peak = h->now > h->peak ? h->now : h->peak;
    }
    return p;
}

static void *held_realloc(void *ud, void *p, size_t n)
{
    struct held *h = ud;
    size_t before = p ? malloc_usable_size(p) : 0;
    void *q = realloc(p, n);

    if (q || n == 0) {
        h->now -= before;
        h->now += q ? malloc_usable_size(q) : 0;
        h->peak = h->now > h->peak ? h->now : h->peak;
    }
    return q;
}

static void held_free(void *ud, void *p)
{
    struct held *h = ud;

    if (p)
        h->now -= malloc_usable_size(p);
    free(p);
}

/* ---- one measured run ------------------------------------------------------------ */

/* What one run measured: per iteration and per bare call. */
struct agent_run {
    struct bare *bare;
    struct held *held;
    int64_t first, end; /* iterations measured: [first, end) */
    double *run_us, *bare_us;
    size_t nrun, nbare;
    uint64_t run_cpu, bare_cpu;
    size_t
        peak; /* most bytes the env held above what it held at an iteration's start */
    size_t base;
    struct bench_mark left; /* when the callback last returned */
};

/* At the start of iteration i: close the sample of iteration i-1, then
 * time one bare call. */
static void agent_progress(void *ud, const lil_loop_event *ev)
{
    struct agent_run *p = ud;
    struct bench_mark in, out;
    int64_t i = ev->iteration;

    if (ev->kind != LIL_LOOP_EV_ITERATION || i < p->first || i > p->end)
        return;
    in = bench_mark_now();
    if (i > p->first) {
        p->run_us[p->nrun++] = (double)(in.wall_ns - p->left.wall_ns) / 1e3;
        p->run_cpu += in.cpu_ns - p->left.cpu_ns;
        if (p->held->peak - p->base > p->peak)
            p->peak = p->held->peak - p->base;
    }
    if (i < p->end) {
        bare_call(p->bare);
        out = bench_mark_now();
        p->bare_us[p->nbare++] = (double)(out.wall_ns - in.wall_ns) / 1e3;
        p->bare_cpu += out.cpu_ns - in.cpu_ns;
    }
    p->base = p->held->now;
    p->held->peak = p->held->now;
    p->left = bench_mark_now();
}

struct phase {
    const char *name;   /* "plain", "stream 1 KiB", ... */
    size_t content_len; /* of the reply */
    size_t chunk;       /* a stream's content bytes per event; 0: no stream */
    size_t n;           /* measured iterations */
};

struct phase_result {
    struct bench_stats run, bare;
    double run_cpu_us, bare_cpu_us;
    size_t peak, reply_bytes;
};

static void set_llm_env(int port, bool stream)
{
    char url[64];

    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1", port);
    setenv("LIL_LLM_BASE_URL", url, 1);        /* NOLINT(concurrency-mt-unsafe) */
    setenv("LIL_LLM_API_KEY", API_KEY, 1);     /* NOLINT(concurrency-mt-unsafe) */
    setenv("LIL_LLM_MODEL", "gpt-4o-mini", 1); /* NOLINT(concurrency-mt-unsafe) */
    setenv("LIL_LLM_STREAM", stream ? "on" : "off",
           1); /* NOLINT(concurrency-mt-unsafe) */
}

/* The loop of phase ph against the server s (whose reply is set). */
static void phase_loop(lil_store *st, const struct phase *ph, struct agent_run *p,
                       size_t round)
{
    int64_t total = WARMUP + (int64_t)ph->n + 1;
    char id[64];
    lil_spec *spec;

    snprintf(id, sizeof(id), "agent-%s-%zu-%zu-%zu", ph->chunk ? "sse" : "plain",
             ph->content_len, ph->chunk, round);
    spec = bench_loop_spec(id, AGENT_STEP, total);
    p->first = WARMUP;
    p->end = WARMUP + (int64_t)ph->n;
    bench_loop_run_close(bench_loop_open(st, spec, id, LIL_SYNC_OFF, agent_progress, p),
                         total);
    lil_spec_free(spec);
}

/* Run phase ph: the server answers with its reply, the loop and the bare
 * calls alternate. */
static struct phase_result phase_run(lil_store *st, struct server *s, struct held *held,
                                     const struct phase *ph)
{
    struct text reply = {0};
    struct bare bare;
    struct agent_run p = {.bare = &bare, .held = held};
    struct phase_result r = {0};

    if (ph->chunk)
        reply_stream(&reply, ph->content_len, ph->chunk);
    else
        reply_plain(&reply, ph->content_len);
    atomic_store(&s->reply, &reply);
    set_llm_env(s->port, ph->chunk > 0);
    bare_open(&bare, s->port, ph->chunk > 0);
    p.run_us = calloc(ph->n + 1, sizeof(double));
    p.bare_us = calloc(ph->n + 1, sizeof(double));
    if (!p.run_us || !p.bare_us)
        bench_die_errno("calloc");
    fprintf(stderr, "agent: %s, %zu iterations\n", ph->name, ph->n);
    phase_loop(st, ph, &p, 0);
    r.run = bench_stats_of(p.run_us, p.nrun);
    r.bare = bench_stats_of(p.bare_us, p.nbare);
    r.run_cpu_us = (double)p.run_cpu / 1e3 / (double)p.nrun;
    r.bare_cpu_us = (double)p.bare_cpu / 1e3 / (double)p.nbare;
    r.peak = p.peak;
    r.reply_bytes = bare.got;
    bare_close(&bare);
    free(p.run_us);
    free(p.bare_us);
    atomic_store(&s->reply, NULL);
    free(reply.p);
    return r;
}

/* ---- rows -------------------------------------------------------------------------
 */

static void time_row(const char *what, const struct bench_stats *st, double cpu_us)
{
    char buf[160];

    snprintf(buf, sizeof(buf), "p50 %.1f µs, p99 %.1f µs, mean %.1f µs; CPU %.1f µs",
             st->p50, st->p99, st->mean, cpu_us);
    bench_row(what, buf, "", -1);
}

/* The bare call, the iteration and their difference; target: the p50
 * difference <= target_us (0: informational). */
static double phase_rows(const struct phase *ph, const struct phase_result *r,
                         double target_us)
{
    double d50 = r->run.p50 - r->bare.p50;
    char what[120], buf[200], target[48] = "";

    snprintf(what, sizeof(what), "%s: bare POST, libcurl, kept connection (%zu calls)",
             ph->name, r->bare.n);
    time_row(what, &r->bare, r->bare_cpu_us);
    snprintf(what, sizeof(what), "%s: runner, 1 llm agent step/iteration (%zu it.)",
             ph->name, r->run.n);
    time_row(what, &r->run, r->run_cpu_us);
    snprintf(buf, sizeof(buf), "p50 %.1f µs, mean %.1f µs; CPU %.1f µs", d50,
             r->run.mean - r->bare.mean, r->run_cpu_us - r->bare_cpu_us);
    if (target_us > 0)
        snprintf(target, sizeof(target), "≤ %.0f µs (p50)", target_us);
    snprintf(what, sizeof(what), "%s: runner's own cost (iteration − bare call)",
             ph->name);
    bench_row(what, buf, target, target_us > 0 ? d50 <= target_us : -1);
    return d50;
}

static void per_byte_row(const struct phase *small, double d_small,
                         const struct phase *big, double d_big)
{
    char buf[200];
    double bytes = (double)(big->content_len - small->content_len);

    snprintf(buf, sizeof(buf),
             "%.1f ns per content byte (%.2f ms at %zu bytes, %.1f µs at %zu)",
             (d_big - d_small) * 1e3 / bytes, d_big / 1e3, big->content_len, d_small,
             small->content_len);
    bench_row("streamed: runner's own cost per reply byte (marginal)", buf, "", -1);
}

/* The same content streamed in events of two sizes: what the env held at
 * most must not follow the stream's size (a stream held whole would). */
static void memory_row(const struct phase_result *coarse,
                       const struct phase_result *fine,
                       const struct phase_result *plain)
{
    char buf[300];
    double mib = 1048576.0;

    snprintf(buf, sizeof(buf),
             "stream of %.2f MiB: %.2f MiB; stream of %.2f MiB (%d-byte deltas): %.2f "
             "MiB; plain reply of %.2f MiB (info): %.2f MiB",
             (double)coarse->reply_bytes / mib, (double)coarse->peak / mib,
             (double)fine->reply_bytes / mib, CHUNK_FINE, (double)fine->peak / mib,
             (double)plain->reply_bytes / mib, (double)plain->peak / mib);
    bench_row("1 MiB of content: most bytes the loop's env held in an iteration", buf,
              "the same for both streams (≤ 1.1×)",
              (double)fine->peak <= 1.1 * (double)coarse->peak);
}

/* ---- the group --------------------------------------------------------------------
 */

static lil_store *held_store(const struct bench_cfg *cfg, struct held *held,
                             lil_env **env_out)
{
    char dir[4200];
    lil_env *env = NULL;
    lil_store *st = NULL;
    lil_status rc = lil_env_new(&env);

    if (rc == LIL_OK)
        rc = lil_env_set_allocator(env, held_malloc, held_realloc, held_free, held);
    if (rc != LIL_OK)
        bench_die("lil_env_new", rc, "");
    snprintf(dir, sizeof(dir), "%s/store-agent", cfg->dir);
    rc = lil_store_open(env, dir, &st);
    if (rc != LIL_OK)
        bench_die("lil_store_open", rc, lil_errmsg());
    *env_out = env;
    return st;
}

static void no_proxy(void)
{
    static const char *const names[] = {"http_proxy", "HTTP_PROXY", "all_proxy",
                                        "ALL_PROXY"};

    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
        unsetenv(names[i]); /* NOLINT(concurrency-mt-unsafe): before any thread */
}

void bench_agent(const struct bench_cfg *cfg)
{
    size_t n = cfg->agent_iters, nbig = cfg->agent_big_iters;
    const struct phase plain = {"plain", 0, 0, n},
                       sse_small = {"streamed 1 KiB", 1024, CHUNK, n},
                       sse_big = {"streamed 1 MiB", 1048576, CHUNK, nbig},
                       sse_fine = {"streamed 1 MiB, 16-byte deltas (info)", 1048576,
                                   CHUNK_FINE, nbig},
                       plain_big = {"plain 1 MiB (info)", 1048576, 0, nbig};
    struct phase_result r_plain, r_small, r_big, r_fine, r_plain_big;
    struct held held = {0};
    struct server s;
    lil_env *env = NULL;
    lil_store *st;
    double d_small, d_big;

    no_proxy();
    st = held_store(cfg, &held, &env);
    server_start(&s, NULL);
    bench_section("agent call: the runner around one llm call, fake server on "
                  "127.0.0.1, sync=off");
    r_plain = phase_run(st, &s, &held, &plain);
    (void)phase_rows(&plain, &r_plain, 100.0);
    r_small = phase_run(st, &s, &held, &sse_small);
    d_small = phase_rows(&sse_small, &r_small, 0);
    r_big = phase_run(st, &s, &held, &sse_big);
    d_big = phase_rows(&sse_big, &r_big, 0);
    per_byte_row(&sse_small, d_small, &sse_big, d_big);
    r_fine = phase_run(st, &s, &held, &sse_fine);
    r_plain_big = phase_run(st, &s, &held, &plain_big);
    memory_row(&r_big, &r_fine, &r_plain_big);
    server_stop(&s);
    lil_store_close(st);
    lil_env_free(env);
}
