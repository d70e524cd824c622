/*
 * bench_mcp.c -- `lil mcp`'s read tools, answered over stdio, beside the
 * same reads through the library in this process (the floor).
 *
 * Two stores are made with sync off: one of 10,000 program runs (3 steps
 * each) and one holding a single program run of 100,000 steps (100,000
 * events and a few more).  One `lil mcp --read-only` is spawned on each,
 * initialized once, and sent JSON lines on its stdin; each answer is timed
 * from the request's write to the answer's whole line read from its stdout
 * (so what a client waits for: the tool, the JSON of its answer twice --
 * structuredContent and its text -- and the pipe).
 *
 * Rows (p50 and p99 of each; ratio = the MCP p50 over the floor's):
 *   list_runs, the default page (100 runs) of 10,000 runs -- floor: the
 *     run ids (lil_store_foreach_run, in order) and lil_run_facts of the
 *     first 100;
 *   run_events, a page of 500 from a seq spread over the run -- floor:
 *     lil_run_events of the same page;
 *   run_events, the whole run in pages of 10,000 (the largest) -- floor:
 *     lil_run_events paged the same way.
 * Target (issue: "answer in milliseconds"): a page answers in < 100 ms (p50).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "bench.h"

#define RUNS        10000
#define RUN_STEPS   3
#define BIG_EVENTS  100000
#define BIG_RUN     "big"
#define PAGE        500
#define WHOLE_PAGE  10000
#define LIST_PAGE   100
#define TARGET_MS   100.0
#define BENCH_LINES (64u << 20) /* the largest answer read */

/* ---- the stores ------------------------------------------------------------ */

/* Copy file from into to (the store's key). */
static void copy_file(const char *from, const char *to)
{
    char buf[4096];
    int in = open(from, O_RDONLY | O_CLOEXEC), out;
    ssize_t n;

    if (in < 0)
        bench_die_errno(from);
    out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0)
        bench_die_errno(to);
    while ((n = read(in, buf, sizeof(buf))) > 0)
        if (write(out, buf, (size_t)n) != n)
            bench_die_errno(to);
    close(in);
    close(out);
}

/* RUNS program runs of RUN_STEPS steps in the store dir.  A writable
 * lil_run_open lists the store's directory (it sweeps what an interrupted
 * rotation left), so 10,000 runs made in place would cost n^2 directory
 * entries read: each is made in a staging store that holds only it and the
 * key, and renamed into dir (the same file under the same name); the key
 * is copied last. */
static void make_runs(const char *dir)
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
    for (int i = 0; i < RUNS; i++) {
        char id[32];
        lil_run *run;
        snprintf(id, sizeof(id), "run-%05d", i);
        run = bench_open_run(st, id, LIL_SYNC_OFF);
        for (int s = 0; s < RUN_STEPS; s++)
            if ((rc = lil_step(run, "s", bench_fill_fn, &p, NULL)) != LIL_OK)
                bench_die("lil_step", rc, lil_run_errmsg(run));
        lil_run_close(run);
        snprintf(from, sizeof(from), "%s/%s.lil", staging, id);
        snprintf(to, sizeof(to), "%s/%s.lil", dir, id);
        if (rename(from, to) != 0)
            bench_die_errno(from);
    }
    lil_store_close(st);
    snprintf(from, sizeof(from), "%s/journal.key", staging);
    snprintf(to, sizeof(to), "%s/journal.key", dir);
    copy_file(from, to);
    if (unlink(from) != 0 || rmdir(staging) != 0)
        bench_die_errno(staging);
}

static void make_big_run(const char *dir)
{
    struct bench_payload p = {bench_payload_bytes(BENCH_PAYLOAD), BENCH_PAYLOAD, 0};
    lil_store *st = NULL;
    lil_status rc = lil_store_open(NULL, dir, &st);
    lil_run *run;

    if (rc != LIL_OK)
        bench_die("lil_store_open", rc, lil_errmsg());
    run = bench_open_run(st, BIG_RUN, LIL_SYNC_OFF);
    for (int s = 0; s < BIG_EVENTS; s++)
        if ((rc = lil_step(run, "s", bench_fill_fn, &p, NULL)) != LIL_OK)
            bench_die("lil_step", rc, lil_run_errmsg(run));
    lil_run_close(run);
    lil_store_close(st);
}

/* ---- `lil mcp` over pipes ---------------------------------------------------- */

struct server {
    pid_t pid;
    int in, out;     /* its stdin (we write), its stdout (we read) */
    char *buf;       /* bytes read, not yet taken */
    size_t len, cap; /* valid bytes, allocated */
    long long next_id;
};

static void spawn_server(const struct bench_cfg *cfg, const char *store,
                         struct server *s)
{
    const char *argv[] = {cfg->lil_path, "--dir", store, "mcp", "--read-only", NULL};
    posix_spawn_file_actions_t fa;
    int to[2], from[2], e;

    if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC))
        bench_die_errno("pipe2");
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, to[0], 0);
    posix_spawn_file_actions_adddup2(&fa, from[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    e = posix_spawn(&s->pid, cfg->lil_path, &fa, NULL, (char *const *)(uintptr_t)argv,
                    environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e)
        bench_die("posix_spawn lil mcp", LIL_E_CHILD, strerror(e));
    close(to[0]);
    close(from[1]);
    s->in = to[1];
    s->out = from[0];
    s->cap = 1 << 20;
    s->buf = malloc(s->cap);
    if (!s->buf)
        bench_die_errno("malloc");
}

static void send_line(struct server *s, const char *text)
{
    size_t len = strlen(text), off = 0;

    while (off < len) {
        ssize_t n = write(s->in, text + off, len - off);
        if (n <= 0)
            bench_die_errno("write to lil mcp");
        off += (size_t)n;
    }
    if (write(s->in, "\n", 1) != 1)
        bench_die_errno("write to lil mcp");
}

/* The next line of the server's stdout, NUL-terminated at *len in s->buf
 * (drop it with drop_line). */
static char *read_line(struct server *s, size_t *len)
{
    char *nl;

    while (!(nl = memchr(s->buf, '\n', s->len))) {
        ssize_t n;
        if (s->len + 65536 > s->cap) {
            char *grown;
            if (s->cap >= BENCH_LINES)
                bench_die("lil mcp", LIL_E_TOOBIG, "an answer over 64 MiB");
            grown = realloc(s->buf, s->cap * 2);
            if (!grown)
                bench_die_errno("realloc");
            s->buf = grown;
            s->cap *= 2;
        }
        n = read(s->out, s->buf + s->len, s->cap - s->len);
        if (n <= 0)
            bench_die("lil mcp", LIL_E_CHILD, "its stdout ended before an answer");
        s->len += (size_t)n;
    }
    *nl = '\0';
    *len = (size_t)(nl - s->buf);
    return s->buf;
}

static void drop_line(struct server *s, size_t len)
{
    s->len -= len + 1;
    memmove(s->buf, s->buf + len + 1, s->len);
}

/* Free what json_dumps gave: lil_bench routes jansson's allocations
 * through its own allocator (bench_main.c). */
static void free_json_text(char *text)
{
    json_free_t free_fn = NULL;

    json_get_alloc_funcs(NULL, &free_fn);
    if (free_fn)
        free_fn(text);
}

/* Send one request, time its answer (ms); the answer's result (a new
 * reference) in *result, or exit when it is an error or a tool error. */
static double call(struct server *s, const char *method, json_t *params,
                   json_t **result)
{
    json_t *req =
        json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id",
                  (json_int_t)++s->next_id, "method", method, "params", params);
    char *text = json_dumps(req, JSON_COMPACT);
    size_t len;
    uint64_t t0;
    double ms;
    json_t *answer;
    char *line;

    if (!text)
        bench_die("json_dumps", LIL_E_NOMEM, "request");
    t0 = bench_now_ns();
    send_line(s, text);
    line = read_line(s, &len);
    ms = (double)(bench_now_ns() - t0) / 1e6;
    answer = json_loadb(line, len, 0, NULL);
    if (!answer || !json_is_object(json_object_get(answer, "result")) ||
        json_is_true(json_object_get(json_object_get(answer, "result"), "isError")))
        bench_die("lil mcp", LIL_E_CHILD, len < 400 ? line : "an error (long)");
    drop_line(s, len);
    *result = json_incref(json_object_get(answer, "result"));
    json_decref(answer);
    json_decref(req);
    free_json_text(text);
    return ms;
}

static void start_session(struct server *s)
{
    json_t *r;

    call(s, "initialize",
         json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion", "2025-11-25",
                   "capabilities", "clientInfo", "name", "lil_bench", "version", "1"),
         &r);
    json_decref(r);
    send_line(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

static double call_tool(struct server *s, const char *name, json_t *args,
                        json_t **structured)
{
    json_t *result;
    double ms = call(s, "tools/call",
                     json_pack("{s:s, s:o}", "name", name, "arguments", args), &result);

    *structured = json_incref(json_object_get(result, "structuredContent"));
    json_decref(result);
    if (!*structured)
        bench_die("lil mcp", LIL_E_CHILD, "an answer without structuredContent");
    return ms;
}

static void stop_server(struct server *s)
{
    int st;

    close(s->in); /* EOF: the server ends */
    if (waitpid(s->pid, &st, 0) != s->pid)
        bench_die_errno("waitpid lil mcp");
    close(s->out);
    free(s->buf);
}

/* ---- the floors --------------------------------------------------------------- */

struct ids {
    char **v;
    size_t n, cap;
};

static int collect_id(void *ud, const char *id)
{
    struct ids *ids = ud;

    if (ids->n == ids->cap) {
        size_t cap = ids->cap ? ids->cap * 2 : 1024;
        char **grown = realloc(ids->v, cap * sizeof(*grown));
        if (!grown)
            return -1;
        ids->v = grown;
        ids->cap = cap;
    }
    ids->v[ids->n] = strdup(id);
    return ids->v[ids->n++] ? 0 : -1;
}

/* The floor of list_runs: the ids (in order) and the facts of the first page. */
static double floor_list(lil_store *st)
{
    struct ids ids = {0};
    uint64_t t0 = bench_now_ns();
    lil_status rc = lil_store_foreach_run(st, collect_id, &ids);

    if (rc != LIL_OK)
        bench_die("lil_store_foreach_run", rc, lil_store_errmsg(st));
    for (size_t i = 0; i < ids.n && i < LIST_PAGE; i++) {
        lil_bytes facts;
        if ((rc = lil_run_facts(st, ids.v[i], &facts)) != LIL_OK)
            bench_die("lil_run_facts", rc, lil_store_errmsg(st));
        lil_free(facts.data);
    }
    double ms = (double)(bench_now_ns() - t0) / 1e6;
    for (size_t i = 0; i < ids.n; i++)
        free(ids.v[i]);
    free(ids.v);
    return ms;
}

/* lil_run_events from seq, max events; the next seq (0: no more). */
static uint64_t floor_page(lil_store *st, uint64_t from, size_t max)
{
    lil_bytes page;
    lil_status rc = lil_run_events(st, BIG_RUN, from, max, &page);
    json_t *doc;
    uint64_t next = 0;

    if (rc != LIL_OK)
        bench_die("lil_run_events", rc, lil_store_errmsg(st));
    doc = json_loadb(page.data, page.len, 0, NULL);
    if (doc && json_is_true(json_object_get(doc, "more")))
        next = (uint64_t)json_integer_value(json_object_get(doc, "next"));
    json_decref(doc);
    lil_free(page.data);
    return next;
}

/* ---- rows ---------------------------------------------------------------------- */

/* Two rows: the floor (info) and lil mcp, with the ratio of the medians;
 * target: lil mcp's p50 under TARGET_MS (or none). */
static void row(const char *what, double *mcp, double *flr, size_t n, bool target)
{
    struct bench_stats m = bench_stats_of(mcp, n), f = bench_stats_of(flr, n);
    char buf[200], name[200];

    snprintf(name, sizeof(name), "%s: through the library (floor, info)", what);
    snprintf(buf, sizeof(buf), "p50 %.2f ms, p99 %.2f ms (%zu)", f.p50, f.p99, n);
    bench_row(name, buf, "", -1);
    snprintf(name, sizeof(name), "%s: lil mcp over stdio%s", what,
             target ? "" : " (info)");
    snprintf(buf, sizeof(buf), "p50 %.2f ms, p99 %.2f ms, %.2fx the floor", m.p50,
             m.p99, f.p50 > 0 ? m.p50 / f.p50 : 0.0);
    bench_row(name, buf, target ? "< 100 ms (p50)" : "",
              target ? m.p50 < TARGET_MS : -1);
}

static void bench_list(const struct bench_cfg *cfg, const char *dir, size_t reps)
{
    double *mcp = calloc(reps, sizeof(double)), *flr = calloc(reps, sizeof(double));
    struct server s = {0};
    lil_store *st = NULL;
    lil_status rc = lil_store_open(NULL, dir, &st);

    if (!mcp || !flr)
        bench_die_errno("calloc");
    if (rc != LIL_OK)
        bench_die("lil_store_open", rc, lil_errmsg());
    spawn_server(cfg, dir, &s);
    start_session(&s);
    for (size_t i = 0; i < reps; i++) {
        json_t *page;
        mcp[i] = call_tool(&s, "list_runs", json_object(), &page);
        if (json_array_size(json_object_get(page, "runs")) != LIST_PAGE)
            bench_die("list_runs", LIL_E_CHILD, "a page without 100 runs");
        json_decref(page);
        flr[i] = floor_list(st);
    }
    stop_server(&s);
    lil_store_close(st);
    row("list_runs, default page of 10,000 runs", mcp, flr, reps, true);
    free(mcp);
    free(flr);
}

static double mcp_events(struct server *s, uint64_t from, size_t limit, uint64_t *next)
{
    json_t *page;
    double ms = call_tool(s, "run_events",
                          json_pack("{s:s, s:I, s:I}", "run_id", BIG_RUN, "from_seq",
                                    (json_int_t)from, "limit", (json_int_t)limit),
                          &page);

    *next = json_is_true(json_object_get(page, "more"))
                ? (uint64_t)json_integer_value(json_object_get(page, "next"))
                : 0;
    json_decref(page);
    return ms;
}

static void bench_events(const struct bench_cfg *cfg, const char *dir, size_t reps,
                         size_t whole_reps)
{
    double *mcp = calloc(reps, sizeof(double)), *flr = calloc(reps, sizeof(double));
    struct server s = {0};
    lil_store *st = NULL;
    lil_status rc = lil_store_open(NULL, dir, &st);
    uint64_t next;

    if (!mcp || !flr)
        bench_die_errno("calloc");
    if (rc != LIL_OK)
        bench_die("lil_store_open", rc, lil_errmsg());
    spawn_server(cfg, dir, &s);
    start_session(&s);
    for (size_t i = 0; i < reps; i++) {
        uint64_t from = 1 + (i * 7919u) % (BIG_EVENTS - PAGE); /* spread over the run */
        uint64_t t0;
        mcp[i] = mcp_events(&s, from, PAGE, &next);
        t0 = bench_now_ns();
        floor_page(st, from, PAGE);
        flr[i] = (double)(bench_now_ns() - t0) / 1e6;
    }
    row("run_events, a page of 500 of a 100,000-event run", mcp, flr, reps, true);
    for (size_t i = 0; i < whole_reps; i++) {
        uint64_t t0;
        mcp[i] = 0;
        for (uint64_t from = 1; from; from = next)
            mcp[i] += mcp_events(&s, from, WHOLE_PAGE, &next);
        t0 = bench_now_ns();
        for (uint64_t from = 1; from;)
            from = floor_page(st, from, WHOLE_PAGE);
        flr[i] = (double)(bench_now_ns() - t0) / 1e6;
    }
    row("run_events, the whole 100,000-event run in pages of 10,000", mcp, flr,
        whole_reps, false);
    stop_server(&s);
    lil_store_close(st);
    free(mcp);
    free(flr);
}

void bench_mcp(const struct bench_cfg *cfg)
{
    char runs[4096], big[4096];
    uint64_t t0 = bench_now_ns();

    snprintf(runs, sizeof(runs), "%s/mcp-runs", cfg->dir);
    snprintf(big, sizeof(big), "%s/mcp-big", cfg->dir);
    make_runs(runs);
    fprintf(stderr, "lil mcp: %d runs made in %.1f s\n", RUNS,
            (double)(bench_now_ns() - t0) / 1e9);
    t0 = bench_now_ns();
    make_big_run(big);
    fprintf(stderr, "lil mcp: a run of %d steps made in %.1f s\n", BIG_EVENTS,
            (double)(bench_now_ns() - t0) / 1e9);
    bench_section("lil mcp: read tools over stdio beside the library");
    bench_list(cfg, runs, cfg->quick ? 10 : 50);
    bench_events(cfg, big, cfg->quick ? 30 : 200, cfg->quick ? 2 : 5);
}
