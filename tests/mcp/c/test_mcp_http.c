/*
 * test_mcp_http.c -- `lil mcp --http` from the outside: the binary started
 * on 127.0.0.1:0, its port and token read from its stderr, requests made
 * with libcurl.  A session's life (initialize, tools/list, DELETE), every
 * refusal (token, Origin, Host, session, media types, size, method,
 * protocol version), a tool's answer streamed (and lost by a client gone,
 * the run going on), the GET event stream, a full server making room,
 * the token from LIL_MCP_TOKEN, --no-token, the addresses refused, and
 * SIGTERM / SIGINT ending it with status 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "t.h"

#define MESSAGE_MAX (4 * 1024 * 1024)

static const char init_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
    "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}";
static const char list_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";

struct server {
    pid_t pid;
    int err_fd;
    unsigned port;
    char token[300];
    char err[4096]; /* its stderr so far */
};

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read the server's stderr until pattern appears or ms pass. */
static bool read_err_until(struct server *sv, const char *pattern, int ms)
{
    int64_t end = now_ms() + ms;
    size_t len = strlen(sv->err);

    while (!strstr(sv->err, pattern) && now_ms() < end) {
        struct pollfd p = {.fd = sv->err_fd, .events = POLLIN};
        ssize_t n;
        if (poll(&p, 1, 100) <= 0)
            continue;
        n = read(sv->err_fd, sv->err + len, sizeof(sv->err) - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
        sv->err[len] = '\0';
    }
    return strstr(sv->err, pattern) != NULL;
}

/* Run `lil mcp --dir store ARGS...` (argv NULL-terminated) with stderr
 * kept; token_env sets LIL_MCP_TOKEN (NULL: unset). */
static void spawn(struct server *sv, const char *const *args, const char *token_env)
{
    int pipefd[2];

    memset(sv, 0, sizeof(*sv));
    if (pipe(pipefd) != 0)
        return;
    sv->pid = fork();
    if (sv->pid == 0) {
        char *argv[16] = {strdup("lil"), strdup("mcp"), strdup("--dir"),
                          strdup(t_path("store"))};
        size_t n = 4;
        for (size_t i = 0; args[i] && n < 15; i++)
            argv[n++] = strdup(args[i]);
        argv[n] = NULL;
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        if (token_env)
            setenv("LIL_MCP_TOKEN", token_env, 1);
        else
            unsetenv("LIL_MCP_TOKEN");
        execv(t_lil_bin(), argv);
        _exit(127);
    }
    close(pipefd[1]);
    sv->err_fd = pipefd[0];
}

/* Start a server on 127.0.0.1:0 with extra flags; false if it did not say
 * where it listens. */
static bool start3(struct server *sv, const char *const extra[3], const char *token_env)
{
    const char *args[] = {"--http", "127.0.0.1:0", extra[0], extra[1], extra[2], NULL};
    const char *at;

    spawn(sv, args, token_env);
    if (!read_err_until(sv, "/mcp\n", 10000))
        return false;
    at = strstr(sv->err, "lil mcp: listening on http://127.0.0.1:");
    if (!at ||
        sscanf(at, "lil mcp: listening on http://127.0.0.1:%u/mcp", &sv->port) != 1)
        return false;
    if (!extra[0] || strcmp(extra[0], "--no-token") != 0) {
        if (!read_err_until(sv, "lil mcp: token ", 2000) ||
            !read_err_until(sv, "\n", 2000))
            return false;
        at = strstr(sv->err, "lil mcp: token ");
        if (sscanf(at, "lil mcp: token %299s", sv->token) != 1)
            return false;
    }
    return true;
}

static bool start(struct server *sv, const char *extra, const char *extra2,
                  const char *token_env)
{
    const char *const more[3] = {extra, extra2, NULL};

    return start3(sv, more, token_env);
}

/* Send sig and wait (5 s at most): the exit status, or -1. */
static int stop(struct server *sv, int sig)
{
    int64_t end = now_ms() + 5000;
    int status;

    if (sv->pid <= 0)
        return -1;
    kill(sv->pid, sig);
    while (now_ms() < end) {
        pid_t r = waitpid(sv->pid, &status, WNOHANG);
        if (r == sv->pid) {
            close(sv->err_fd);
            sv->pid = 0;
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        usleep(20000);
    }
    kill(sv->pid, SIGKILL);
    waitpid(sv->pid, &status, 0);
    close(sv->err_fd);
    sv->pid = 0;
    return -1;
}

/* The exit status of a server that should refuse to start, and its
 * stderr in sv->err. */
static int refused_start(struct server *sv, const char *const *args)
{
    int status;

    spawn(sv, args, NULL);
    read_err_until(sv, "\x01", 3000); /* until EOF */
    waitpid(sv->pid, &status, 0);
    close(sv->err_fd);
    sv->pid = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- HTTP ---------------------------------------------------------------- */

struct resp {
    long status;
    char head[4096];
    char *body;
    size_t len;
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    struct resp *r = ud;
    char *grown = realloc(r->body, r->len + size * n + 1);

    if (!grown)
        return 0;
    memcpy(grown + r->len, p, size * n);
    r->body = grown;
    r->len += size * n;
    r->body[r->len] = '\0';
    return size * n;
}

static size_t on_head(char *p, size_t size, size_t n, void *ud)
{
    struct resp *r = ud;
    size_t len = strlen(r->head);

    if (len + size * n < sizeof(r->head)) {
        memcpy(r->head + len, p, size * n);
        r->head[len + size * n] = '\0';
    }
    return size * n;
}

/* A response header's value (static buffer), or NULL. */
static const char *head_value(const struct resp *r, const char *name)
{
    static char value[256];
    size_t n = strlen(name);

    for (const char *line = r->head; line && *line; line = strchr(line, '\n')) {
        line += *line == '\n';
        if (strncasecmp(line, name, n) == 0 && line[n] == ':') {
            sscanf(line + n + 1, " %255[^\r\n]", value);
            return value;
        }
    }
    return NULL;
}

/* One request: headers a NULL-terminated list ("Name: value"); the token
 * added unless a header names Authorization or no_auth. */
static CURL *prepare(const struct server *sv, const char *method, const char *path,
                     const char *const *headers, struct curl_slist **list,
                     struct resp *r)
{
    CURL *c = curl_easy_init();
    char url[128], auth[400];
    bool has_auth = false;

    memset(r, 0, sizeof(*r));
    snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", sv->port, path);
    for (size_t i = 0; headers && headers[i]; i++) {
        *list = curl_slist_append(*list, headers[i]);
        has_auth |= strncasecmp(headers[i], "Authorization:", 14) == 0;
    }
    if (!has_auth && sv->token[0]) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", sv->token);
        *list = curl_slist_append(*list, auth);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, *list);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_head);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    return c;
}

static long request(const struct server *sv, const char *method,
                    const char *const *headers, const char *body, size_t len,
                    struct resp *r)
{
    struct curl_slist *list = NULL;
    CURL *c = prepare(sv, method, "/mcp", headers, &list, r);

    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_cleanup(c);
    curl_slist_free_all(list);
    return r->status;
}

/* POST a message with the headers a client sends, and more. */
static long post(const struct server *sv, const char *session, const char *extra,
                 const char *body, struct resp *r)
{
    char sid[160];
    const char *headers[] = {"Content-Type: application/json",
                             "Accept: application/json, text/event-stream", sid, extra,
                             NULL};

    snprintf(sid, sizeof(sid), "Mcp-Session-Id: %s", session ? session : "");
    if (!session) {
        headers[2] = extra;
        headers[3] = NULL;
    }
    return request(sv, "POST", headers, body, strlen(body), r);
}

/* Initialize a session: its id (static buffer), or NULL. */
static const char *initialize(const struct server *sv)
{
    static char id[128];
    struct resp r;
    const char *v;

    if (post(sv, NULL, NULL, init_body, &r) != 200 ||
        !(v = head_value(&r, "Mcp-Session-Id")))
        id[0] = '\0';
    else
        snprintf(id, sizeof(id), "%s", v);
    free(r.body);
    return id[0] ? id : NULL;
}

/* The body is a JSON-RPC error with id null and this code. */
static void check_rpc_error(const struct resp *r, int code)
{
    json_t *doc = r->body ? json_loads(r->body, 0, NULL) : NULL;

    T_CHECK(json_is_null(json_object_get(doc, "id")));
    T_EQ_I64(json_integer_value(json_object_get(json_object_get(doc, "error"), "code")),
             code);
    if (!doc)
        fprintf(stderr, "  body: %s\n", r->body ? r->body : "(none)");
    json_decref(doc);
}

static void expect(long status, int code, struct resp *r, long got)
{
    T_EQ_I64(got, status);
    T_EQ_STR(head_value(r, "Content-Type"), "application/json");
    check_rpc_error(r, code);
    free(r->body);
}

/* ---- tests --------------------------------------------------------------- */

T_TEST(session_lifecycle)
{
    struct server sv;
    struct resp r;
    const char *sid;
    char id[128];
    json_t *doc;

    T_REQUIRE(start(&sv, NULL, NULL, NULL));
    T_EQ_I64(strlen(sv.token), 64);
    sid = initialize(&sv);
    T_REQUIRE(sid != NULL);
    snprintf(id, sizeof(id), "%s", sid);
    T_EQ_I64(post(&sv, id, NULL,
                  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &r),
             202);
    T_EQ_I64(r.len, 0);
    free(r.body);
    T_EQ_I64(post(&sv, id, "MCP-Protocol-Version: 2025-06-18", list_body, &r), 200);
    T_EQ_STR(head_value(&r, "Content-Type"), "application/json");
    T_EQ_STR(head_value(&r, "Mcp-Session-Id"), id);
    doc = json_loads(r.body ? r.body : "", 0, NULL);
    T_EQ_I64(json_integer_value(json_object_get(doc, "id")), 2);
    T_CHECK(json_is_array(json_object_get(json_object_get(doc, "result"), "tools")));
    json_decref(doc);
    free(r.body);
    /* a body that is not JSON: a parse error, 400 */
    expect(400, -32700, &r, post(&sv, id, NULL, "{not json", &r));
    {
        char sid_h[160];
        const char *h[] = {sid_h, NULL};
        snprintf(sid_h, sizeof(sid_h), "Mcp-Session-Id: %s", id);
        T_EQ_I64(request(&sv, "DELETE", h, NULL, 0, &r), 200);
        free(r.body);
        expect(404, -32001, &r, request(&sv, "DELETE", h, NULL, 0, &r));
    }
    expect(404, -32001, &r, post(&sv, id, NULL, list_body, &r));
    T_EQ_I64(stop(&sv, SIGTERM), 0);
}

T_TEST(refusals)
{
    struct server sv;
    struct resp r;
    char host[64], origin[64], *huge;
    const char *sid;
    char id[128];

    T_REQUIRE(start(&sv, NULL, NULL, NULL));
    sid = initialize(&sv);
    T_REQUIRE(sid != NULL);
    snprintf(id, sizeof(id), "%s", sid);
    /* no token, a wrong one */
    expect(401, -32000, &r,
           post(&sv, NULL, "Authorization: Basic eDp5", init_body, &r));
    T_EQ_I64(post(&sv, NULL, "Authorization: Bearer nope", init_body, &r), 401);
    T_EQ_STR(head_value(&r, "WWW-Authenticate"), "Bearer");
    check_rpc_error(&r, -32000);
    free(r.body);
    /* DNS rebinding: a foreign Origin, a foreign Host; the server's own Origin passes
     */
    expect(403, -32000, &r,
           post(&sv, NULL, "Origin: http://evil.example.com", init_body, &r));
    expect(403, -32000, &r, post(&sv, NULL, "Host: evil.example.com", init_body, &r));
    snprintf(host, sizeof(host), "Host: evil.example.com:%u", sv.port);
    expect(403, -32000, &r, post(&sv, NULL, host, init_body, &r));
    snprintf(origin, sizeof(origin), "Origin: http://localhost:%u", sv.port);
    T_EQ_I64(post(&sv, NULL, origin, init_body, &r), 200);
    free(r.body);
    /* sessions: none on a request that is not initialize, one not known */
    expect(400, -32000, &r, post(&sv, NULL, NULL, list_body, &r));
    expect(404, -32001, &r, post(&sv, "0123456789abcdef", NULL, list_body, &r));
    expect(400, -32000, &r,
           post(&sv, id, "MCP-Protocol-Version: 1999-01-01", list_body, &r));
    /* media types, size, method, path */
    {
        const char *text[] = {"Content-Type: text/plain",
                              "Accept: application/json, text/event-stream", NULL};
        const char *json_only[] = {"Content-Type: application/json",
                                   "Accept: application/json", NULL};
        expect(415, -32000, &r,
               request(&sv, "POST", text, init_body, strlen(init_body), &r));
        expect(406, -32000, &r,
               request(&sv, "POST", json_only, init_body, strlen(init_body), &r));
        expect(405, -32000, &r, request(&sv, "PUT", NULL, NULL, 0, &r));
        T_EQ_I64(request(&sv, "PATCH", NULL, NULL, 0, &r), 405);
        T_EQ_STR(head_value(&r, "Allow"), "GET, POST, DELETE");
        free(r.body);
    }
    huge = malloc(MESSAGE_MAX + 2);
    T_REQUIRE(huge != NULL);
    memset(huge, ' ', MESSAGE_MAX + 1);
    huge[0] = '[';
    huge[MESSAGE_MAX] = ']';
    huge[MESSAGE_MAX + 1] = '\0';
    expect(413, -32000, &r, post(&sv, id, NULL, huge, &r));
    /* without a length (chunked): the body is dropped as it comes, then 413 */
    expect(413, -32000, &r, post(&sv, id, "Transfer-Encoding: chunked", huge, &r));
    free(huge);
    {
        struct curl_slist *list = NULL;
        CURL *c = prepare(&sv, "GET", "/other", NULL, &list, &r);
        curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
        curl_easy_cleanup(c);
        curl_slist_free_all(list);
        expect(404, -32000, &r, r.status);
    }
    /* still serving after all that */
    T_EQ_I64(post(&sv, id, NULL, list_body, &r), 200);
    free(r.body);
    T_EQ_I64(stop(&sv, SIGTERM), 0);
}

/* Open the session's GET stream on a multi handle; false if it did not
 * answer 200 with an event stream within 3 s. */
static bool open_stream(const struct server *sv, const char *sid, CURLM *m, CURL **c,
                        struct curl_slist **list, struct resp *r)
{
    char sid_h[160];
    const char *h[] = {"Accept: text/event-stream", sid_h, NULL};
    int64_t end = now_ms() + 3000;
    int running = 1;

    snprintf(sid_h, sizeof(sid_h), "Mcp-Session-Id: %s", sid);
    *c = prepare(sv, "GET", "/mcp", h, list, r);
    curl_easy_setopt(*c, CURLOPT_TIMEOUT_MS, 0L);
    curl_multi_add_handle(m, *c);
    while (running && !strstr(r->head, "\r\n\r\n") && now_ms() < end) {
        curl_multi_perform(m, &running);
        curl_multi_poll(m, NULL, 0, 50, NULL);
    }
    curl_easy_getinfo(*c, CURLINFO_RESPONSE_CODE, &r->status);
    return r->status == 200 && head_value(r, "Content-Type") &&
           strcmp(head_value(r, "Content-Type"), "text/event-stream") == 0;
}

/* Run the multi handle until its transfer ends (ms at most): true if it
 * ended. */
static bool stream_ends(CURLM *m, int ms)
{
    int64_t end = now_ms() + ms;
    int running = 1;

    while (running && now_ms() < end) {
        curl_multi_perform(m, &running);
        if (running)
            curl_multi_poll(m, NULL, 0, 50, NULL);
    }
    return running == 0;
}

T_TEST(get_stream)
{
    struct server sv;
    struct resp r, s;
    struct curl_slist *list = NULL;
    CURLM *m = curl_multi_init();
    CURL *c = NULL;
    char id[128], sid_h[160];
    const char *sid;

    T_REQUIRE(start(&sv, NULL, NULL, NULL));
    sid = initialize(&sv);
    T_REQUIRE(sid != NULL);
    snprintf(id, sizeof(id), "%s", sid);
    snprintf(sid_h, sizeof(sid_h), "Mcp-Session-Id: %s", id);
    T_CHECK(open_stream(&sv, id, m, &c, &list, &s));
    T_EQ_STR(head_value(&s, "Mcp-Session-Id"), id);
    {
        const char *again[] = {"Accept: text/event-stream", sid_h, NULL};
        const char *no_accept[] = {"Accept: application/json", sid_h, NULL};
        const char *no_session[] = {"Accept: text/event-stream", NULL};
        expect(409, -32000, &r, request(&sv, "GET", again, NULL, 0, &r));
        expect(406, -32000, &r, request(&sv, "GET", no_accept, NULL, 0, &r));
        expect(400, -32000, &r, request(&sv, "GET", no_session, NULL, 0, &r));
    }
    T_CHECK(!stream_ends(m, 500)); /* quiet, still open */
    {
        const char *h[] = {sid_h, NULL};
        T_EQ_I64(request(&sv, "DELETE", h, NULL, 0, &r), 200);
        free(r.body);
    }
    T_CHECK(stream_ends(m, 3000)); /* the session ended: so did its stream */
    /* nothing but comments on a stream of a session with nothing to say */
    for (const char *line = s.body; line && *line; line = strchr(line, '\n') + 1) {
        T_CHECK(*line == ':' || *line == '\n');
        if (!strchr(line, '\n'))
            break;
    }
    curl_multi_remove_handle(m, c);
    curl_easy_cleanup(c);
    curl_slist_free_all(list);
    curl_multi_cleanup(m);
    free(s.body);
    T_EQ_I64(stop(&sv, SIGTERM), 0);
}

T_TEST(signal_with_stream_open)
{
    struct server sv;
    struct resp s;
    struct curl_slist *list = NULL;
    CURLM *m = curl_multi_init();
    CURL *c = NULL;
    const char *sid;

    T_REQUIRE(start(&sv, NULL, NULL, NULL));
    sid = initialize(&sv);
    T_REQUIRE(sid != NULL);
    T_CHECK(open_stream(&sv, sid, m, &c, &list, &s));
    T_EQ_I64(stop(&sv, SIGINT), 0);
    T_CHECK(stream_ends(m, 3000));
    curl_multi_remove_handle(m, c);
    curl_easy_cleanup(c);
    curl_slist_free_all(list);
    curl_multi_cleanup(m);
    free(s.body);
}

T_TEST(sessions_full)
{
    struct server sv;
    struct resp r;
    char first[128];
    const char *sid;

    T_REQUIRE(start(&sv, NULL, NULL, NULL));
    sid = initialize(&sv);
    T_REQUIRE(sid != NULL);
    snprintf(first, sizeof(first), "%s", sid);
    /* 64 more: the least recently used idle session ends to make room */
    for (int i = 0; i < 64; i++)
        T_REQUIRE(initialize(&sv) != NULL);
    expect(404, -32001, &r, post(&sv, first, NULL, list_body, &r));
    T_EQ_I64(stop(&sv, SIGTERM), 0);
}

static const char nap_spec[] =
    "loopspec: \"0.1\"\n"
    "id: nap\n"
    "pattern: react\n"
    "state:\n"
    "  vars:\n"
    "    n: {type: int, init: 0}\n"
    "body:\n"
    "  - id: nap\n"
    "    kind: shell\n"
    "    cmd: \"sleep 0.3\"\n"
    "    on_done: {incr: n}\n"
    "terminate: {signal: state-predicate, until: \"${state.n >= 2}\"}\n"
    "caps: {max_iterations: 5}\n";

/* The data of the last event of an event stream, parsed. */
static json_t *last_event(const char *body)
{
    const char *at = NULL;

    for (const char *p = body; p && (p = strstr(p, "\ndata: ")); p++)
        at = p + 7;
    if (!at && body && strncmp(body, "data: ", 6) == 0)
        at = body + 6;
    return at ? json_loadb(at, strcspn(at, "\n"), 0, NULL) : NULL;
}

/* The status inspect_run gives run id, or "" (static buffer). */
static const char *run_status(const struct server *sv, const char *sid, const char *id)
{
    static char status[32];
    char body[256];
    struct resp r;
    json_t *doc;
    const char *v;

    snprintf(body, sizeof(body),
             "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{"
             "\"name\":\"inspect_run\",\"arguments\":{\"run_id\":\"%s\"}}}",
             id);
    status[0] = '\0';
    post(sv, sid, NULL, body, &r);
    doc = json_loads(r.body ? r.body : "", 0, NULL);
    v = json_string_value(json_object_get(
        json_object_get(json_object_get(doc, "result"), "structuredContent"),
        "status"));
    snprintf(status, sizeof(status), "%s", v ? v : "");
    json_decref(doc);
    free(r.body);
    return status;
}

/* A tool that waits for its child answers on an event stream: progress
 * first, the result last, then the stream ends.  A client that goes away
 * mid-call loses the answer, not the run. */
T_TEST(answer_streamed)
{
    const char *const flags[3] = {"--allow-run", "--spec-root", "specs"};
    static const char call[] =
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
        "\"name\":\"start_run\",\"arguments\":{\"spec\":\"nap.yaml\",\"wait\":true},"
        "\"_meta\":{\"progressToken\":\"t1\"}}}";
    static const char call2[] =
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
        "\"name\":\"start_run\",\"arguments\":{\"spec\":\"nap.yaml\",\"run_id\":"
        "\"gone\",\"wait\":true}}}";
    struct server sv;
    struct resp r;
    char id[128];
    const char *sid;
    json_t *last;
    FILE *f;
    int64_t end;

    T_REQUIRE(mkdir("specs", 0700) == 0 && (f = fopen("specs/nap.yaml", "w")) != NULL);
    fputs(nap_spec, f);
    fclose(f);
    T_REQUIRE(start3(&sv, flags, NULL));
    sid = initialize(&sv);
    T_REQUIRE(sid != NULL);
    snprintf(id, sizeof(id), "%s", sid);
    T_EQ_I64(post(&sv, id, NULL, call, &r), 200);
    T_EQ_STR(head_value(&r, "Content-Type"), "text/event-stream");
    T_CONTAINS(r.body, "event: message\nid: ");
    T_CONTAINS(r.body, "\"notifications/progress\"");
    last = last_event(r.body);
    T_EQ_I64(json_integer_value(json_object_get(last, "id")), 3);
    T_EQ_STR(json_string_value(json_object_get(
                 json_object_get(json_object_get(last, "result"), "structuredContent"),
                 "status")),
             "completed");
    json_decref(last);
    free(r.body);
    {
        struct curl_slist *list = NULL;
        char sid_h[160];
        const char *h[] = {"Content-Type: application/json",
                           "Accept: application/json, text/event-stream", sid_h, NULL};
        CURL *c;

        snprintf(sid_h, sizeof(sid_h), "Mcp-Session-Id: %s", id);
        c = prepare(&sv, "POST", "/mcp", h, &list, &r);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, call2);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 200L); /* gone before the answer */
        T_CHECK(curl_easy_perform(c) == CURLE_OPERATION_TIMEDOUT);
        curl_easy_cleanup(c);
        curl_slist_free_all(list);
        free(r.body);
    }
    end = now_ms() + 10000;
    while (strcmp(run_status(&sv, id, "gone"), "completed") != 0 && now_ms() < end)
        usleep(50000);
    T_EQ_STR(run_status(&sv, id, "gone"), "completed");
    T_EQ_I64(stop(&sv, SIGTERM), 0);
}

T_TEST(token_from_environment)
{
    struct server sv;
    struct resp r;

    T_REQUIRE(start(&sv, NULL, NULL, "a-token-of-my-own"));
    T_EQ_STR(sv.token, "a-token-of-my-own");
    T_EQ_I64(post(&sv, NULL, NULL, init_body, &r), 200);
    free(r.body);
    T_EQ_I64(post(&sv, NULL, "Authorization: Bearer a-token-of-my-ow", init_body, &r),
             401);
    free(r.body);
    T_EQ_I64(stop(&sv, SIGTERM), 0);
}

T_TEST(no_token)
{
    struct server sv;
    struct resp r;

    T_REQUIRE(start(&sv, "--no-token", NULL, NULL));
    T_CHECK(strstr(sv.err, "token") == NULL);
    T_EQ_I64(post(&sv, NULL, NULL, init_body, &r), 200);
    free(r.body);
    T_EQ_I64(stop(&sv, SIGTERM), 0);
}

T_TEST(allowed_origin)
{
    struct server sv;
    struct resp r;

    const char *preflight[] = {"Origin: https://app.example",
                               "Authorization:", "Access-Control-Request-Method: POST",
                               NULL};
    const char *other[] = {"Origin: https://other.example", "Authorization:", NULL};

    T_REQUIRE(start(&sv, "--allow-origin", "https://app.example", NULL));
    /* a browser's preflight carries no token */
    T_EQ_I64(request(&sv, "OPTIONS", preflight, NULL, 0, &r), 204);
    T_EQ_STR(head_value(&r, "Access-Control-Allow-Origin"), "https://app.example");
    T_CONTAINS(head_value(&r, "Access-Control-Allow-Headers"), "Mcp-Session-Id");
    free(r.body);
    T_EQ_I64(post(&sv, NULL, "Origin: https://app.example", init_body, &r), 200);
    T_EQ_STR(head_value(&r, "Access-Control-Allow-Origin"), "https://app.example");
    T_CONTAINS(head_value(&r, "Access-Control-Expose-Headers"), "Mcp-Session-Id");
    free(r.body);
    expect(403, -32000, &r,
           post(&sv, NULL, "Origin: https://other.example", init_body, &r));
    expect(403, -32000, &r, request(&sv, "OPTIONS", other, NULL, 0, &r));
    expect(401, -32000, &r, request(&sv, "OPTIONS", preflight + 1, NULL, 0, &r));
    T_EQ_I64(stop(&sv, SIGTERM), 0);
}

T_TEST(addresses_refused)
{
    struct server sv, busy;
    char taken[64];
    const char *remote[] = {"--http", "192.0.2.1:0", NULL};
    const char *no_port[] = {"--http", "127.0.0.1", NULL};
    const char *open_no_token[] = {"--http", "127.0.0.1:0", "--allow-remote",
                                   "--no-token", NULL};
    const char *in_use[] = {"--http", taken, NULL};

    T_EQ_I64(refused_start(&sv, remote), 64);
    T_CONTAINS(sv.err, "not a loopback address");
    T_EQ_I64(refused_start(&sv, no_port), 64);
    T_CONTAINS(sv.err, "HOST:PORT");
    T_EQ_I64(refused_start(&sv, open_no_token), 64);
    T_CONTAINS(sv.err, "--no-token");
    T_REQUIRE(start(&busy, NULL, NULL, NULL));
    snprintf(taken, sizeof(taken), "127.0.0.1:%u", busy.port);
    T_EQ_I64(refused_start(&sv, in_use), 1);
    T_CONTAINS(sv.err, "cannot listen");
    T_EQ_I64(stop(&busy, SIGTERM), 0);
}

T_MAIN()
