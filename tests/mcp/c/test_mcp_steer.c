/*
 * test_mcp_steer.c -- the steering tools of `lil mcp` over stdio: the real
 * binary spawned with --allow-run --spec-root, JSON-RPC lines on its stdin
 * and stdout; what the runs became read through lil.h.
 *
 * A loop with a shell step and a breakpoint is started (the answer comes at
 * once, the loop running in a child), approved by its pause id once
 * paused (a wrong pause id is refused with isError) and completes; a
 * running loop is stopped; a loop whose child is killed during a `sleep`
 * step is uncertain and recover_run retry completes it; specs outside
 * --spec-root and broken ones are refused; --read-only offers none of
 * these tools.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "t.h"

#define CLIENT      "steer-test"
#define WAIT_MS     30000
#define STEER_TOOLS 7

static const char *const steer_tools[STEER_TOOLS] = {
    "start_run",   "step_run",    "resume_run", "stop_run",
    "approve_run", "recover_run", "submit_run",
};

/* ---- the server ------------------------------------------------------------- */

struct srv {
    pid_t pid;
    int in, out; /* its stdin (we write), its stdout (we read) */
    char buf[1 << 20];
    size_t len;
    json_t *notes; /* notifications received */
    int next_id;
};

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    T_CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* `lil --dir store mcp --spec-root specs [FLAG [FLAG2]]` in the test's
 * directory. */
static bool srv_start2(struct srv *s, const char *flag, const char *flag2)
{
    int in[2], out[2];

    memset(s, 0, sizeof(*s));
    if (pipe(in) != 0 || pipe(out) != 0)
        return false;
    s->pid = fork();
    if (s->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        execl(t_lil_bin(), "lil", "--dir", t_store("store"), "mcp", "--spec-root",
              "specs", flag, flag2, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    s->in = in[1];
    s->out = out[0];
    s->notes = json_array();
    s->next_id = 1;
    return s->pid > 0;
}

/* Write msg (stolen) as one line.  (The harness's jansson allocates from
 * lil's hooks: json_dumpb writes into our buffer instead.) */
static bool srv_start(struct srv *s, const char *flag)
{
    return srv_start2(s, flag, NULL);
}

static void srv_send(struct srv *s, json_t *msg)
{
    static char text[1 << 16];
    size_t len = json_dumpb(msg, text, sizeof(text) - 1, JSON_COMPACT);

    T_CHECK(len > 0 && len < sizeof(text) - 1);
    text[len] = '\n';
    T_CHECK(write(s->in, text, len + 1) == (ssize_t)(len + 1));
    json_decref(msg);
}

/* The next message from the server, or NULL after WAIT_MS. */
static json_t *srv_read(struct srv *s)
{
    int64_t until = now_ms() + WAIT_MS;

    for (;;) {
        char *nl = memchr(s->buf, '\n', s->len);
        if (nl) {
            json_t *msg = json_loadb(s->buf, (size_t)(nl - s->buf), 0, NULL);
            s->len -= (size_t)(nl - s->buf) + 1;
            memmove(s->buf, nl + 1, s->len);
            T_CHECK(msg != NULL);
            return msg;
        }
        struct pollfd p = {s->out, POLLIN, 0};
        int left = (int)(until - now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0)
            return NULL;
        ssize_t n = read(s->out, s->buf + s->len, sizeof(s->buf) - s->len);
        if (n <= 0)
            return NULL;
        s->len += (size_t)n;
    }
}

/* The response to request id (notifications kept in s->notes). */
static json_t *srv_wait(struct srv *s, int id)
{
    json_t *msg;

    while ((msg = srv_read(s))) {
        if (json_integer_value(json_object_get(msg, "id")) == id &&
            !json_object_get(msg, "method"))
            return msg;
        if (json_object_get(msg, "method"))
            json_array_append(s->notes, msg);
        json_decref(msg);
    }
    fprintf(stderr, "no answer to request %d\n", id);
    return NULL;
}

static json_t *srv_request(struct srv *s, const char *method, json_t *params)
{
    int id = s->next_id++;

    srv_send(s, json_pack("{s:s, s:i, s:s, s:o}", "jsonrpc", "2.0", "id", id, "method",
                          method, "params", params));
    return srv_wait(s, id);
}

static bool srv_init(struct srv *s)
{
    json_t *res = srv_request(s, "initialize",
                              json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion",
                                        "2025-06-18", "capabilities", "clientInfo",
                                        "name", CLIENT, "version", "1"));
    bool ok = json_object_get(res, "result") != NULL;

    json_decref(res);
    srv_send(s, json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method",
                          "notifications/initialized"));
    return ok;
}

/* tools/call name with args (stolen); the response, with a progress token
 * when progress. */
static json_t *srv_call(struct srv *s, const char *name, json_t *args, bool progress)
{
    json_t *params = json_pack("{s:s, s:o}", "name", name, "arguments", args);

    if (progress)
        json_object_set_new(params, "_meta", json_pack("{s:s}", "progressToken", name));
    return srv_request(s, "tools/call", params);
}

static void srv_end(struct srv *s)
{
    int status = 0;

    if (s->in >= 0)
        close(s->in);
    if (s->pid > 0 && waitpid(s->pid, &status, 0) == s->pid)
        T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(s->out);
    json_decref(s->notes);
}

/* ---- answers ------------------------------------------------------------------- */

static json_t *result_of(json_t *res)
{
    return json_object_get(res, "result");
}

static bool is_error(json_t *res)
{
    return json_is_true(json_object_get(result_of(res), "isError"));
}

static const char *text_of(json_t *res)
{
    json_t *c = json_array_get(json_object_get(result_of(res), "content"), 0);
    const char *t = json_string_value(json_object_get(c, "text"));

    return t ? t : "";
}

static const char *sc_str(json_t *res, const char *key)
{
    json_t *sc = json_object_get(result_of(res), "structuredContent");
    const char *v = json_string_value(json_object_get(sc, key));

    return v ? v : "";
}

static pid_t sc_pid(json_t *res)
{
    json_t *sc = json_object_get(result_of(res), "structuredContent");

    return (pid_t)json_integer_value(json_object_get(sc, "pid"));
}

/* ---- runs, read through lil.h ------------------------------------------------- */

/* The facts of run id (a new reference), or NULL. */
static json_t *facts(const char *id)
{
    lil_store *st = NULL;
    lil_bytes b = {0};
    json_t *o = NULL;

    if (lil_store_open(NULL, t_store("store"), &st) == LIL_OK &&
        lil_run_facts(st, id, &b) == LIL_OK)
        o = json_loadb((const char *)b.data, b.len, 0, NULL);
    lil_free(b.data);
    lil_store_close(st);
    return o;
}

/* Wait until the status of run id is status (and, when in_flight, an
 * effect is in flight); the facts then, or NULL. */
static json_t *wait_status(const char *id, const char *status, bool in_flight)
{
    int64_t until = now_ms() + WAIT_MS;
    json_t *o = NULL;

    while (now_ms() < until) {
        o = facts(id);
        if (strcmp(or_empty(json_string_value(json_object_get(o, "status"))), status) ==
                0 &&
            (!in_flight || json_is_object(json_object_get(o, "in_flight"))))
            return o;
        json_decref(o);
        o = NULL;
        usleep(20000);
    }
    o = facts(id);
    fprintf(stderr, "run %s never %s: ", id, status);
    json_dumpf(o, stderr, JSON_COMPACT);
    fputc('\n', stderr);
    json_decref(o);
    return NULL;
}

/* Whether the events of run id mention text (an actor, a reason). */
static bool events_hold(const char *id, const char *text)
{
    lil_store *st = NULL;
    lil_bytes b = {0};
    bool found = false;

    if (lil_store_open(NULL, t_store("store"), &st) == LIL_OK &&
        lil_run_events(st, id, 0, 0, &b) == LIL_OK)
        found = strstr((const char *)b.data, text) != NULL;
    lil_free(b.data);
    lil_store_close(st);
    return found;
}

static void specs_dir(void)
{
    T_CHECK(mkdir("specs", 0700) == 0);
}

/* ---- tests ---------------------------------------------------------------------- */

static const char breakpoint_spec[] =
    "loopspec: \"0.1\"\n"
    "id: bp\n"
    "pattern: react\n"
    "inputs:\n"
    "  greeting: {type: string}\n"
    "  times: {type: int, default: 1}\n"
    "state:\n"
    "  vars:\n"
    "    n: {type: int, init: 0}\n"
    "body:\n"
    "  - id: work\n"
    "    kind: shell\n"
    "    cmd: \"echo ${inputs.greeting}-${state.n} >> side.txt\"\n"
    "    on_done: {incr: n}\n"
    "  - id: ask\n"
    "    kind: breakpoint\n"
    "    ask: \"deploy ${state.n}?\"\n"
    "terminate: {signal: state-predicate, until: \"${state.n >= inputs.times}\"}\n"
    "caps: {max_iterations: 5}\n";

/* start_run answers at once; the loop pauses at its breakpoint; a wrong
 * pause id is refused; approve_run by the pause id completes it. */
T_TEST(start_pause_approve)
{
    struct srv s;
    json_t *res, *f;
    char pause[64] = "";

    specs_dir();
    write_file("specs/bp.yaml", breakpoint_spec);
    T_REQUIRE(srv_start(&s, "--allow-run") && srv_init(&s));
    res = srv_call(&s, "start_run",
                   json_pack("{s:s, s:{s:s, s:i}}", "spec", "bp.yaml", "inputs",
                             "greeting", "hi", "times", 1),
                   true);
    T_CHECK(!is_error(res));
    T_EQ_STR(sc_str(res, "run_id"), "bp");
    T_EQ_STR(sc_str(res, "status"), "running");
    T_CHECK(sc_pid(res) > 0);
    T_CHECK(json_array_size(s.notes) >= 1); /* a progress notification came first */
    T_EQ_STR(json_string_value(json_object_get(json_array_get(s.notes, 0), "method")),
             "notifications/progress");
    json_decref(res);

    f = wait_status("bp", "paused", false);
    T_REQUIRE(f != NULL);
    snprintf(pause, sizeof(pause), "%s",
             or_empty(json_string_value(json_object_get(
                 json_object_get(json_object_get(f, "loop"), "paused"), "id"))));
    json_decref(f);
    T_EQ_STR(pause, "pause.1");

    res = srv_call(&s, "approve_run",
                   json_pack("{s:s, s:s, s:s}", "run_id", "bp", "pause_id", "pause.7",
                             "reason", "late"),
                   false);
    T_CHECK(is_error(res));
    T_CONTAINS(text_of(res), "pause.7");
    json_decref(res);
    res = srv_call(&s, "approve_run",
                   json_pack("{s:s, s:s}", "run_id", "bp", "reason", "x"), false);
    T_EQ_I64(json_integer_value(json_object_get(json_object_get(res, "error"), "code")),
             -32602);
    json_decref(res);

    res = srv_call(&s, "approve_run",
                   json_pack("{s:s, s:s, s:s, s:b}", "run_id", "bp", "pause_id", pause,
                             "reason", "looks good", "wait", 1),
                   false);
    T_CHECK(!is_error(res));
    T_EQ_STR(sc_str(res, "status"), "completed");
    json_decref(res);
    T_CHECK(events_hold("bp", "mcp:" CLIENT));
    T_CHECK(events_hold("bp", "looks good"));
    srv_end(&s);
}

static const char slow_spec[] =
    "loopspec: \"0.1\"\n"
    "id: slow\n"
    "pattern: react\n"
    "state:\n"
    "  vars:\n"
    "    n: {type: int, init: 0}\n"
    "body:\n"
    "  - id: nap\n"
    "    kind: shell\n"
    "    cmd: \"sleep 1\"\n"
    "    on_done: {incr: n}\n"
    "terminate: {signal: state-predicate, until: \"${state.n "
    ">= 100}\"}\n"
    "caps: {max_iterations: 100}\n";

/* stop_run of a running loop: requested, then the run stops; a second
 * request while the first is pending is refused with the library's words. */
T_TEST(stop_running)
{
    struct srv s;
    json_t *res, *f;

    specs_dir();
    write_file("specs/slow.yaml", slow_spec);
    T_REQUIRE(srv_start(&s, "--allow-run") && srv_init(&s));
    res = srv_call(&s, "start_run", json_pack("{s:s}", "spec", "slow.yaml"), false);
    T_EQ_STR(sc_str(res, "status"), "running");
    json_decref(res);
    json_decref(wait_status("slow", "running", true));
    res =
        srv_call(&s, "stop_run",
                 json_pack("{s:s, s:s}", "run_id", "slow", "reason", "enough"), false);
    T_CHECK(!is_error(res));
    T_CHECK(json_is_true(json_object_get(
        json_object_get(result_of(res), "structuredContent"), "requested")));
    json_decref(res);
    res = srv_call(&s, "stop_run",
                   json_pack("{s:s, s:s}", "run_id", "slow", "reason", "again"), false);
    T_CHECK(is_error(res));
    json_decref(res);
    f = wait_status("slow", "stopped", false);
    T_CHECK(f != NULL);
    json_decref(f);
    T_CHECK(events_hold("slow", "enough"));
    srv_end(&s);
}

static const char sleepy_spec[] =
    "loopspec: \"0.1\"\n"
    "id: sleepy\n"
    "pattern: react\n"
    "state:\n"
    "  vars:\n"
    "    n: {type: int, init: 0}\n"
    "body:\n"
    "  - id: nap\n"
    "    kind: shell\n"
    "    cmd: \"if [ -e again ]; then echo second; else touch again; echo $$ > "
    "effect.pid; exec sleep 30; fi\"\n"
    "    on_done: {incr: n}\n"
    "terminate: {signal: state-predicate, until: \"${state.n >= 1}\"}\n"
    "caps: {max_iterations: 3}\n";

static void kill_pid_file(const char *path)
{
    FILE *f = fopen(path, "r");
    int pid = 0;

    if (f) {
        if (fscanf(f, "%d", &pid) == 1 && pid > 1)
            kill(pid, SIGKILL);
        fclose(f);
    }
}

/* The child killed while its `sleep` step runs leaves the run uncertain;
 * recover_run retry runs the step again and the run completes. */
T_TEST(recover_uncertain)
{
    struct srv s;
    json_t *res, *f;
    pid_t child;

    specs_dir();
    write_file("specs/sleepy.yaml", sleepy_spec);
    T_REQUIRE(srv_start(&s, "--allow-run") && srv_init(&s));
    res = srv_call(&s, "start_run", json_pack("{s:s}", "spec", "sleepy.yaml"), false);
    child = sc_pid(res);
    json_decref(res);
    T_REQUIRE(child > 0);
    json_decref(wait_status("sleepy", "running", true));
    T_CHECK(kill(child, SIGKILL) == 0);
    f = wait_status("sleepy", "uncertain", false);
    kill_pid_file("effect.pid"); /* the orphaned sleep */
    T_REQUIRE(f != NULL);
    json_decref(f);
    res = srv_call(&s, "recover_run",
                   json_pack("{s:s, s:s, s:s}", "run_id", "sleepy", "action",
                             "assume_done", "reason", "no result"),
                   false);
    T_EQ_I64(json_integer_value(json_object_get(json_object_get(res, "error"), "code")),
             -32602); /* assume_done without its result */
    json_decref(res);
    res = srv_call(&s, "recover_run",
                   json_pack("{s:s, s:s, s:s, s:b}", "run_id", "sleepy", "action",
                             "retry", "reason", "the sleep was killed", "wait", 1),
                   false);
    T_CHECK(!is_error(res));
    T_EQ_STR(sc_str(res, "status"), "completed");
    json_decref(res);
    T_CHECK(events_hold("sleepy", "the sleep was killed"));
    srv_end(&s);
}

/* Specs outside --spec-root (named, or named by a run's journal) and
 * broken specs are refused with isError; nothing runs. */
T_TEST(refusals)
{
    struct srv s;
    json_t *res;
    char cmd[1024], out[4096];

    specs_dir();
    write_file("outside.yaml", breakpoint_spec);
    write_file("specs/broken.yaml", "loopspec: \"0.1\"\nid: broken\nbody: 7\n");
    snprintf(
        cmd, sizeof(cmd),
        "'%s' --dir '%s' run outside.yaml --input greeting=x --yes >/dev/null 2>&1",
        t_lil_bin(), t_store("store"));
    T_EQ_I64(t_run(cmd, out, sizeof(out), 0), 0);
    T_REQUIRE(srv_start(&s, "--allow-run") && srv_init(&s));
    res =
        srv_call(&s, "start_run", json_pack("{s:s}", "spec", "../outside.yaml"), false);
    T_CHECK(is_error(res));
    T_CONTAINS(text_of(res), "outside --spec-root");
    json_decref(res);
    res = srv_call(&s, "step_run", json_pack("{s:s}", "run_id", "bp"), false);
    T_CHECK(is_error(res));
    T_CONTAINS(text_of(res), "outside --spec-root");
    json_decref(res);
    res = srv_call(&s, "start_run", json_pack("{s:s}", "spec", "broken.yaml"), false);
    T_CHECK(is_error(res));
    T_CONTAINS(text_of(res), "broken.yaml:");
    T_CONTAINS(text_of(res), "is not a valid loop spec");
    json_decref(res);
    res = srv_call(&s, "resume_run", json_pack("{s:s}", "run_id", "nosuch"), false);
    T_CHECK(is_error(res));
    T_CONTAINS(text_of(res), "no run 'nosuch'");
    json_decref(res);
    res = srv_call(&s, "submit_run", json_pack("{s:s}", "spec", "broken.yaml"), false);
    T_CHECK(is_error(res)); /* a store directory has no queue; a broken spec neither */
    T_CONTAINS(text_of(res), t_store_pg() ? "is not a valid loop spec" : "PostgreSQL");
    json_decref(res);
    srv_end(&s);
}

/* --read-only offers none of the steering tools, and calls them unknown. */
T_TEST(read_only)
{
    struct srv s;
    json_t *res, *tools, *t;
    size_t i;

    specs_dir();
    T_REQUIRE(srv_start(&s, "--read-only") && srv_init(&s));
    res = srv_request(&s, "tools/list", json_object());
    tools = json_object_get(result_of(res), "tools");
    T_CHECK(json_is_array(tools));
    json_array_foreach(tools, i, t)
    {
        for (size_t k = 0; k < STEER_TOOLS; k++)
            T_CHECK(strcmp(or_empty(json_string_value(json_object_get(t, "name"))),
                           steer_tools[k]) != 0);
    }
    json_decref(res);
    res = srv_call(&s, "stop_run",
                   json_pack("{s:s, s:s}", "run_id", "x", "reason", "r"), false);
    T_EQ_I64(json_integer_value(json_object_get(json_object_get(res, "error"), "code")),
             -32602);
    json_decref(res);
    srv_end(&s);
}

/* Without --allow-run the tools that start runs are not offered; the
 * others are. */
T_TEST(offered_without_allow_run)
{
    struct srv s;
    json_t *res, *tools, *t;
    size_t i;
    int seen = 0, starters = 0;

    specs_dir();
    T_REQUIRE(srv_start(&s, NULL) && srv_init(&s));
    res = srv_request(&s, "tools/list", json_object());
    tools = json_object_get(result_of(res), "tools");
    json_array_foreach(tools, i, t)
    {
        const char *name = or_empty(json_string_value(json_object_get(t, "name")));
        for (size_t k = 0; k < STEER_TOOLS; k++)
            if (strcmp(name, steer_tools[k]) == 0) {
                seen++;
                starters +=
                    strcmp(name, "start_run") == 0 || strcmp(name, "submit_run") == 0;
                T_CHECK(json_is_object(json_object_get(t, "outputSchema")));
            }
    }
    T_EQ_I64(seen, STEER_TOOLS - 2);
    T_EQ_I64(starters, 0);
    json_decref(res);
    srv_end(&s);
}

static const char env_spec[] =
    "loopspec: \"0.1\"\n"
    "id: env\n"
    "pattern: react\n"
    "state:\n"
    "  vars:\n"
    "    n: {type: int, init: 0}\n"
    "body:\n"
    "  - id: look\n"
    "    kind: shell\n"
    "    cmd: \"echo allowed=$MCP_T_ALLOWED other=$MCP_T_OTHER > "
    "env.txt; sleep 3\"\n"
    "    on_done: {incr: n}\n"
    "terminate: {signal: state-predicate, until: \"${state.n "
    ">= 1}\"}\n"
    "caps: {max_iterations: 3}\n";

/* Shell steps of runs started through MCP see the scrubbed environment
 * plus --env-allow; a request cancelled while its child runs is dropped
 * and the child goes on (the server leaves at EOF without waiting). */
T_TEST(env_allow_and_cancel)
{
    struct srv s;
    json_t *f, *msg;
    char text[256] = "";
    FILE *in;

    specs_dir();
    write_file("specs/env.yaml", env_spec);
    setenv("MCP_T_ALLOWED", "yes", 1);
    setenv("MCP_T_OTHER", "leak", 1);
    T_REQUIRE(srv_start2(&s, "--allow-run", "--env-allow=MCP_T_ALLOWED") &&
              srv_init(&s));
    unsetenv("MCP_T_ALLOWED");
    unsetenv("MCP_T_OTHER");
    srv_send(&s, json_pack("{s:s, s:i, s:s, s:{s:s, s:{s:s, s:b}}}", "jsonrpc", "2.0",
                           "id", 99, "method", "tools/call", "params", "name",
                           "start_run", "arguments", "spec", "env.yaml", "wait", 1));
    json_decref(wait_status("env", "running", true));
    srv_send(&s, json_pack("{s:s, s:s, s:{s:i, s:s}}", "jsonrpc", "2.0", "method",
                           "notifications/cancelled", "params", "requestId", 99,
                           "reason", "changed my mind"));
    close(s.in); /* EOF: the server leaves without answering request 99 */
    s.in = -1;
    while ((msg = srv_read(&s))) {
        T_CHECK(json_integer_value(json_object_get(msg, "id")) != 99);
        json_decref(msg);
    }
    f = facts("env");
    T_EQ_STR(or_empty(json_string_value(json_object_get(f, "status"))), "running");
    json_decref(f);
    srv_end(&s);
    f = wait_status("env", "completed", false);
    T_CHECK(f != NULL);
    json_decref(f);
    in = fopen("env.txt", "r");
    T_CHECK(in && fgets(text, sizeof(text), in));
    if (in)
        fclose(in);
    T_EQ_STR(text, "allowed=yes other=\n");
}

T_MAIN()
