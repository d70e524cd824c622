/*
 * test_mcp_resources.c -- the resources and prompts of `lil mcp`, driven
 * over stdio as a client drives them: the binary spawned, JSON-RPC on its
 * stdin and stdout one message a line, program runs made and grown through
 * lil.h beside it, loop runs by `lil run`.
 *
 * What it proves: resources/list pages run ids 100 at a time in order,
 * every run once; the templates name both uris; resources/read gives a
 * run's facts (lil_run_facts' document) and its events as JSON lines
 * (?from=SEQ reads on; a history past 10000 events is read in parts, the
 * content's _meta naming the next); a bad uri, a bad id and a missing run
 * are -32002 with the uri in data; a subscribed run's facts and events
 * uris get notifications/resources/updated within 2 s of a step appended
 * to the run, and nothing once unsubscribed; a new run brings
 * notifications/resources/list_changed; the prompts are listed, and built
 * from the facts of uncertain runs (a program's step and request digest, a
 * loop's slot and rendered request; the three recoveries), a paused loop
 * run (its pause id and digest, approve_run) and a run that is neither
 * (said so); a missing run_id or an unknown prompt is -32602.
 */
#include <errno.h>
#include <fcntl.h>
#include <lil/lil.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "t.h"

#define STORE_DIR "st"

/* ---- the server --------------------------------------------------------------- */

struct server {
    pid_t pid;
    int to, from;      /* its stdin, its stdout */
    char buf[1 << 22]; /* what it wrote and was not taken yet */
    size_t len;
    json_t *notes; /* notifications read while waiting for an answer */
    int next_id;
};

static struct server srv;

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void start_server(void)
{
    int in[2], out[2];

    T_REQUIRE(pipe(in) == 0 && pipe(out) == 0);
    srv.pid = fork();
    T_REQUIRE(srv.pid >= 0);
    if (srv.pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execl(t_lil_bin(), "lil", "mcp", "--dir", t_store(STORE_DIR), (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    srv.to = in[1];
    srv.from = out[0];
    srv.len = 0;
    srv.notes = json_array();
    srv.next_id = 0;
}

static void stop_server(void)
{
    int status = -1;

    close(srv.to);
    T_EQ_I64(waitpid(srv.pid, &status, 0), srv.pid);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(srv.from);
    json_decref(srv.notes);
}

static void send_line(const char *fmt, ...)
{
    char line[8192];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    T_REQUIRE(n > 0 && n < (int)sizeof(line) - 1);
    line[n++] = '\n';
    T_REQUIRE(write(srv.to, line, (size_t)n) == n);
}

/* The next message the server writes, or NULL after timeout_ms. */
static json_t *next_message(int timeout_ms)
{
    int64_t deadline = mono_ms() + timeout_ms;

    for (;;) {
        char *nl = memchr(srv.buf, '\n', srv.len);
        struct pollfd pfd = {srv.from, POLLIN, 0};
        int64_t left = deadline - mono_ms();
        ssize_t n;

        if (nl) {
            json_t *msg = json_loadb(srv.buf, (size_t)(nl - srv.buf), 0, NULL);

            srv.len -= (size_t)(nl + 1 - srv.buf);
            memmove(srv.buf, nl + 1, srv.len);
            T_CHECK(msg != NULL);
            return msg;
        }
        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
            return NULL;
        n = read(srv.from, srv.buf + srv.len, sizeof(srv.buf) - srv.len);
        if (n <= 0)
            return NULL;
        srv.len += (size_t)n;
    }
}

/* Send method with params (JSON text, or NULL) and return the answer (the
 * whole response); notifications on the way are kept in srv.notes. */
static json_t *request(const char *method, const char *params)
{
    int id = ++srv.next_id;
    json_t *msg;

    send_line("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\"%s%s}", id, method,
              params ? ",\"params\":" : "", params ? params : "");
    /* A guard against a hang, not a measure of speed: a long history read
     * under a sanitizer on a loaded machine takes seconds. */
    while ((msg = next_message(60000)) != NULL) {
        if (json_integer_value(json_object_get(msg, "id")) == id)
            return msg;
        json_array_append_new(srv.notes, msg);
    }
    fprintf(stderr, "no answer to %s\n", method);
    return NULL;
}

static json_t *result_of(json_t *answer)
{
    json_t *r = json_object_get(answer, "result");

    if (!r) {
        char *text = json_dumps(answer, JSON_COMPACT);

        fprintf(stderr, "not a result: %s\n", text ? text : "(none)");
        free(text);
        t_fail();
    }
    return r;
}

static int error_code(json_t *answer)
{
    return (int)json_integer_value(
        json_object_get(json_object_get(answer, "error"), "code"));
}

/* Is there (or does there come within timeout_ms) a notification method,
 * for uri when uri is not NULL?  It is taken. */
static bool notified(const char *method, const char *uri, int timeout_ms)
{
    int64_t deadline = mono_ms() + timeout_ms;
    json_t *msg;

    for (;;) {
        size_t i;

        json_array_foreach(srv.notes, i, msg)
        {
            const char *m = json_string_value(json_object_get(msg, "method"));
            const char *u = json_string_value(
                json_object_get(json_object_get(msg, "params"), "uri"));

            if (m && strcmp(m, method) == 0 && (!uri || (u && strcmp(u, uri) == 0))) {
                json_array_remove(srv.notes, i);
                return true;
            }
        }
        if (mono_ms() >= deadline)
            return false;
        msg = next_message((int)(deadline - mono_ms()));
        if (msg)
            json_array_append_new(srv.notes, msg);
    }
}

static void initialize(void)
{
    json_t *a =
        request("initialize", "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                              "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}");

    T_CHECK(json_is_true(json_object_get(
        json_object_get(json_object_get(result_of(a), "capabilities"), "resources"),
        "subscribe")));
    json_decref(a);
    send_line("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

/* ---- runs ------------------------------------------------------------------------ */

static int fn_text(lil_call *call, void *ud)
{
    (void)ud;
    return lil_call_set_result(call, "ok", 2) == LIL_OK ? 0 : 1;
}

/* Open program run id, take steps (names "s", "s#2", ...), close it. */
static void program_run(const char *id, int steps, bool complete)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_bytes out = {NULL, 0};

    T_REQUIRE(lil_store_open(NULL, t_store(STORE_DIR), &st) == LIL_OK);
    T_REQUIRE(lil_run_open(st, id, NULL, &run) == LIL_OK);
    for (int i = 0; i < steps; i++) {
        T_OK(lil_step(run, "s", fn_text, NULL, &out));
        lil_free(out.data);
    }
    if (complete)
        T_OK(lil_run_complete(run, "done", 4));
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* Program run id with n steps, written without syncs (a long history made
 * quickly). */
static void long_run(const char *id, int n)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_run_opts o;
    lil_bytes out = {NULL, 0};

    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.sync = LIL_SYNC_OFF;
    T_REQUIRE(lil_store_open(NULL, t_store(STORE_DIR), &st) == LIL_OK);
    T_REQUIRE(lil_run_open(st, id, &o, &run) == LIL_OK);
    for (int i = 0; i < n; i++) {
        T_OK(lil_step(run, "s", fn_text, NULL, &out));
        lil_free(out.data);
    }
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* A run whose process died inside effect "charge": uncertain. */
static void uncertain_run(const char *id)
{
    int status = -1;
    pid_t pid = fork();

    if (pid == 0) {
        lil_store *st = NULL;
        lil_run *run = NULL;
        lil_call *call = NULL;
        lil_bytes out = {NULL, 0};
        static const char req[] = "{\"amount\":5}";

        if (lil_store_open(NULL, t_store(STORE_DIR), &st) != LIL_OK ||
            lil_run_open(st, id, NULL, &run) != LIL_OK ||
            lil_effect_begin(run, "charge", req, sizeof(req) - 1, &call, &out) !=
                LIL_OK)
            _exit(1);
        _exit(0); /* dies inside the effect */
    }
    T_REQUIRE(pid > 0);
    T_EQ_I64(waitpid(pid, &status, 0), pid);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static const char breakpoint_spec[] =
    "loopspec: \"0.1\"\n"
    "id: bp\n"
    "pattern: react\n"
    "state: { vars: { n: { type: int, init: 0 } } }\n"
    "body:\n"
    "  - { id: work, kind: shell, cmd: \"echo hi\", "
    "on_done: { incr: n } }\n"
    "  - { id: ask, kind: breakpoint, ask: \"ship it?\" }\n"
    "terminate: { signal: state-predicate, until: "
    "\"${state.n >= 2}\" }\n"
    "caps: { max_iterations: 5 }\n";

/* A loop run paused at its breakpoint (`lil run` exits 3). */
static void paused_run(const char *id)
{
    char cmd[4096], out[8192];
    FILE *f = fopen(t_path("bp.yaml"), "w");

    T_REQUIRE(f != NULL);
    fputs(breakpoint_spec, f);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "'%s' --dir '%s' run '%s' --run-id %s --progress off",
             t_lil_bin(), t_store(STORE_DIR), t_path("bp.yaml"), id);
    T_EQ_I64(t_run(cmd, out, sizeof(out), 1), 3);
}

/* A loop run whose process its own shell step killed (SIGKILL) inside the
 * effect: uncertain. */
static void killed_loop_run(const char *id)
{
    char cmd[4096], out[8192];
    FILE *f = fopen(t_path("k.yaml"), "w");

    T_REQUIRE(f != NULL);
    fputs(
        "loopspec: \"0.1\"\n"
        "id: k\n"
        "pattern: react\n"
        "state: { vars: { n: { type: int, init: 0 } } }\n"
        "body:\n"
        "  - { id: charge, kind: shell, cmd: \"kill -9 $PPID\", on_done: { incr: n } }\n"
        "terminate: { signal: state-predicate, until: \"${state.n >= 1}\" }\n"
        "caps: { max_iterations: 5 }\n",
        f);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "'%s' --dir '%s' run '%s' --run-id %s --progress off",
             t_lil_bin(), t_store(STORE_DIR), t_path("k.yaml"), id);
    T_EQ_I64(t_run(cmd, out, sizeof(out), 1), 128 + SIGKILL);
}

/* ---- helpers on answers ------------------------------------------------------- */

/* resources/read of uri: its one content's text (a new string), or NULL. */
static char *read_text(const char *uri, const char **mime)
{
    char params[1024];
    json_t *a, *c;
    char *text = NULL;

    snprintf(params, sizeof(params), "{\"uri\":\"%s\"}", uri);
    a = request("resources/read", params);
    c = json_array_get(json_object_get(result_of(a), "contents"), 0);
    T_EQ_STR(json_string_value(json_object_get(c, "uri")), uri);
    if (json_string_value(json_object_get(c, "text")))
        text = strdup(json_string_value(json_object_get(c, "text")));
    if (mime)
        *mime = json_string_value(json_object_get(c, "mimeType")) &&
                        strcmp(json_string_value(json_object_get(c, "mimeType")),
                               "application/x-ndjson") == 0
                    ? "application/x-ndjson"
                    : "application/json";
    json_decref(a);
    return text;
}

static void expect_not_found(const char *method, const char *uri_json)
{
    char params[1024];
    json_t *a, *data;

    snprintf(params, sizeof(params), "{\"uri\":%s}", uri_json);
    a = request(method, params);
    T_EQ_I64(error_code(a), -32002);
    data = json_object_get(json_object_get(a, "error"), "data");
    T_CHECK(json_is_string(json_object_get(data, "uri")));
    json_decref(a);
}

/* ---- the tests ------------------------------------------------------------------ */

T_TEST(list_pages_every_run_once_in_order)
{
    char id[32], params[256], *cursor = NULL, prev[64] = "";
    size_t total = 0, pages = 0;

    for (int i = 0; i < 205; i++) {
        snprintf(id, sizeof(id), "r%03d", i);
        program_run(id, 0, false);
    }
    start_server();
    initialize();
    do {
        json_t *a, *res, *list, *next;
        size_t i;

        if (cursor)
            snprintf(params, sizeof(params), "{\"cursor\":\"%s\"}", cursor);
        a = request("resources/list", cursor ? params : "{}");
        res = result_of(a);
        list = json_object_get(res, "resources");
        T_CHECK(json_array_size(list) <= 100);
        json_array_foreach(list, i, next)
        {
            const char *name = json_string_value(json_object_get(next, "name"));
            char uri[128];

            T_REQUIRE(name != NULL);
            T_CHECK(strcmp(prev, name) < 0);
            snprintf(prev, sizeof(prev), "%s", name);
            snprintf(uri, sizeof(uri), "lil://runs/%s", name);
            T_EQ_STR(json_string_value(json_object_get(next, "uri")), uri);
            T_EQ_STR(json_string_value(json_object_get(next, "mimeType")),
                     "application/json");
            total++;
        }
        free(cursor);
        next = json_object_get(res, "nextCursor");
        cursor = json_is_string(next) ? strdup(json_string_value(next)) : NULL;
        pages++;
        json_decref(a);
    } while (cursor && pages < 10);
    T_EQ_I64(total, 205);
    T_EQ_I64(pages, 3);
    {
        json_t *a = request("resources/list", "{\"cursor\":\"no/such\"}");

        T_EQ_I64(error_code(a), -32602);
        json_decref(a);
    }
    stop_server();
}

T_TEST(templates_and_reads)
{
    json_t *a, *t;
    const char *mime = NULL;
    char *text;
    json_t *facts;
    int lines = 0;

    program_run("p1", 2, true);
    start_server();
    initialize();
    a = request("resources/templates/list", NULL);
    t = json_object_get(result_of(a), "resourceTemplates");
    T_EQ_I64(json_array_size(t), 2);
    T_EQ_STR(json_string_value(json_object_get(json_array_get(t, 0), "uriTemplate")),
             "lil://runs/{id}");
    T_EQ_STR(json_string_value(json_object_get(json_array_get(t, 1), "uriTemplate")),
             "lil://runs/{id}/events");
    T_EQ_STR(json_string_value(json_object_get(json_array_get(t, 1), "mimeType")),
             "application/x-ndjson");
    json_decref(a);

    text = read_text("lil://runs/p1", &mime);
    T_REQUIRE(text != NULL);
    T_EQ_STR(mime, "application/json");
    facts = json_loads(text, 0, NULL);
    T_EQ_STR(json_string_value(json_object_get(facts, "run")), "p1");
    T_EQ_STR(json_string_value(json_object_get(facts, "status")), "completed");
    json_decref(facts);
    free(text);

    text = read_text("lil://runs/p1/events", &mime);
    T_REQUIRE(text != NULL);
    T_EQ_STR(mime, "application/x-ndjson");
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *ev = json_loads(line, 0, NULL);

        T_CHECK(json_integer_value(json_object_get(ev, "seq")) > 0);
        T_CHECK(json_is_string(json_object_get(ev, "type")));
        json_decref(ev);
        lines++;
    }
    T_CHECK(lines >= 5); /* begin, open, two steps, the end, close */
    free(text);
    text = read_text("lil://runs/p1/events?from=4", NULL);
    T_REQUIRE(text != NULL);
    T_CONTAINS(text, "{\"seq\":4,");
    T_CHECK(strstr(text, "{\"seq\":3,") == NULL);
    free(text);
    text = read_text("lil://runs/p%31", NULL); /* percent-decoded: p1 */
    T_CONTAINS(text, "\"run\":\"p1\"");
    free(text);

    expect_not_found("resources/read", "\"lil://runs/nosuch\"");
    expect_not_found("resources/read", "\"lil://runs/nosuch/events\"");
    expect_not_found("resources/read", "\"lil://runs/a%2Fb\"");
    expect_not_found("resources/read", "\"lil://runs/p1/other\"");
    expect_not_found("resources/read", "\"file:///etc/passwd\"");
    expect_not_found("resources/read", "\"lil://runs/p%00\"");
    expect_not_found("resources/subscribe", "\"lil://runs/nosuch\"");
    a = request("resources/read", "{}");
    T_EQ_I64(error_code(a), -32602);
    json_decref(a);
    stop_server();
}

/* Count the lines of text; the seq of the last one into *last. */
static size_t count_lines(const char *text, json_int_t *last)
{
    size_t n = 0;

    T_CHECK(text != NULL);
    for (const char *p = text ? text : ""; *p; n++) {
        const char *nl = strchr(p, '\n');
        json_t *ev = json_loadb(p, nl ? (size_t)(nl - p) : strlen(p), 0, NULL);

        T_CHECK(ev != NULL);
        *last = json_integer_value(json_object_get(ev, "seq"));
        json_decref(ev);
        p = nl ? nl + 1 : p + strlen(p);
    }
    return n;
}

/* A read of events stops at 10000, its _meta saying where to read on;
 * reading on from there gives the rest, nothing twice. */
T_TEST(a_long_history_is_read_in_parts)
{
    json_t *a, *c, *meta;
    json_int_t last = 0, next;
    size_t first;
    char uri[128], params[256];

    long_run("long", 10500);
    start_server();
    initialize();
    a = request("resources/read", "{\"uri\":\"lil://runs/long/events\"}");
    c = json_array_get(json_object_get(result_of(a), "contents"), 0);
    meta = json_object_get(c, "_meta");
    first = count_lines(json_string_value(json_object_get(c, "text")), &last);
    T_CHECK(first >= 10000 && first < 10010);
    T_CHECK(json_is_true(json_object_get(meta, "lil/more")));
    next = json_integer_value(json_object_get(meta, "lil/next"));
    T_EQ_I64(next, last + 1);
    snprintf(uri, sizeof(uri), "lil://runs/long/events?from=%lld", (long long)next);
    T_EQ_STR(json_string_value(json_object_get(meta, "lil/nextUri")), uri);
    json_decref(a);

    snprintf(params, sizeof(params), "{\"uri\":\"%s\"}", uri);
    a = request("resources/read", params);
    c = json_array_get(json_object_get(result_of(a), "contents"), 0);
    meta = json_object_get(c, "_meta");
    T_CHECK(count_lines(json_string_value(json_object_get(c, "text")), &last) > 400);
    T_CHECK(json_is_false(json_object_get(meta, "lil/more")));
    T_CHECK(json_object_get(meta, "lil/nextUri") == NULL);
    T_EQ_I64(json_integer_value(json_object_get(meta, "lil/next")), last + 1);
    json_decref(a);
    stop_server();
}

T_TEST(subscribed_runs_are_told_of_changes)
{
    json_t *a;

    program_run("w", 1, false);
    start_server();
    initialize();
    a = request("resources/subscribe", "{\"uri\":\"lil://runs/w\"}");
    T_CHECK(json_is_object(result_of(a)));
    json_decref(a);
    a = request("resources/subscribe", "{\"uri\":\"lil://runs/w/events\"}");
    T_CHECK(json_is_object(result_of(a)));
    json_decref(a);
    T_CHECK(!notified("notifications/resources/updated", NULL, 400)); /* nothing yet */

    program_run("w", 2, false); /* its second and third steps */
    T_CHECK(notified("notifications/resources/updated", "lil://runs/w", 2000));
    T_CHECK(notified("notifications/resources/updated", "lil://runs/w/events", 2000));

    a = request("resources/unsubscribe", "{\"uri\":\"lil://runs/w\"}");
    T_CHECK(json_is_object(result_of(a)));
    json_decref(a);
    program_run("w", 3, false);
    T_CHECK(notified("notifications/resources/updated", "lil://runs/w/events", 2000));
    T_CHECK(!notified("notifications/resources/updated", "lil://runs/w", 1000));
    stop_server();
}

T_TEST(a_new_run_changes_the_list)
{
    program_run("old", 1, true);
    start_server();
    initialize();
    json_decref(request("ping", NULL));
    T_CHECK(!notified("notifications/resources/list_changed", NULL, 1500));
    program_run("new", 1, true);
    T_CHECK(notified("notifications/resources/list_changed", NULL, 3000));
    stop_server();
}

/* prompts/get name for run id: the text of its first message (a new
 * string); the second message embeds the run's facts. */
static char *prompt_text(const char *name, const char *id)
{
    char params[512], uri[128];
    json_t *a, *msgs, *res;
    char *text;

    snprintf(params, sizeof(params),
             "{\"name\":\"%s\",\"arguments\":{\"run_id\":\"%s\"}}", name, id);
    a = request("prompts/get", params);
    msgs = json_object_get(result_of(a), "messages");
    T_EQ_I64(json_array_size(msgs), 2);
    T_EQ_STR(json_string_value(json_object_get(json_array_get(msgs, 0), "role")),
             "user");
    res = json_object_get(json_object_get(json_array_get(msgs, 1), "content"),
                          "resource");
    snprintf(uri, sizeof(uri), "lil://runs/%s", id);
    T_EQ_STR(json_string_value(json_object_get(res, "uri")), uri);
    T_CONTAINS(json_string_value(json_object_get(res, "text")), "\"run\":");
    text = strdup(json_string_value(
        json_object_get(json_object_get(json_array_get(msgs, 0), "content"), "text")));
    json_decref(a);
    return text;
}

T_TEST(prompts_walk_through_the_decision)
{
    json_t *a, *list;
    char *text;

    uncertain_run("u");
    paused_run("bp");
    killed_loop_run("k");
    program_run("done", 1, true);
    start_server();
    initialize();
    a = request("prompts/list", NULL);
    list = json_object_get(result_of(a), "prompts");
    T_EQ_I64(json_array_size(list), 2);
    T_EQ_STR(json_string_value(json_object_get(json_array_get(list, 0), "name")),
             "triage-uncertain");
    T_EQ_STR(json_string_value(json_object_get(json_array_get(list, 1), "name")),
             "review-pause");
    T_CHECK(json_is_true(json_object_get(
        json_array_get(json_object_get(json_array_get(list, 0), "arguments"), 0),
        "required")));
    json_decref(a);

    text = prompt_text("triage-uncertain", "u");
    T_CONTAINS(text, "is uncertain");
    T_CONTAINS(text, "step charge");
    T_CONTAINS(text, "its request's sha256: ");
    T_CONTAINS(text, "retry");
    T_CONTAINS(text, "assume_done");
    T_CONTAINS(text, "abort");
    T_CONTAINS(text, "recover_run");
    free(text);
    text = prompt_text("triage-uncertain", "k");
    T_CONTAINS(text, "slot 0.0 (iteration 0), kind shell");
    T_CONTAINS(text, "kill -9 $PPID");
    free(text);
    text = prompt_text("review-pause", "bp");
    T_CONTAINS(text, "pause.1");
    T_CONTAINS(text, "digest ");
    T_CONTAINS(text, "ship it?");
    T_CONTAINS(text, "approve_run");
    T_CONTAINS(text, "stop_run");
    T_CONTAINS(text, "Budget");
    free(text);
    text = prompt_text("review-pause", "done");
    T_CONTAINS(text, "is not paused (its status: completed)");
    free(text);
    text = prompt_text("triage-uncertain", "bp");
    T_CONTAINS(text, "is not uncertain (its status: paused)");
    free(text);

    a = request("prompts/get", "{\"name\":\"review-pause\",\"arguments\":{}}");
    T_EQ_I64(error_code(a), -32602);
    T_CONTAINS(
        json_string_value(json_object_get(json_object_get(a, "error"), "message")),
        "run_id");
    json_decref(a);
    a = request("prompts/get", "{\"name\":\"nope\",\"arguments\":{\"run_id\":\"u\"}}");
    T_EQ_I64(error_code(a), -32602);
    json_decref(a);
    a = request("prompts/get",
                "{\"name\":\"review-pause\",\"arguments\":{\"run_id\":\"x\"}}");
    T_EQ_I64(error_code(a), -32602);
    T_CONTAINS(
        json_string_value(json_object_get(json_object_get(a, "error"), "message")),
        "no run x");
    json_decref(a);
    stop_server();
}

T_MAIN()
