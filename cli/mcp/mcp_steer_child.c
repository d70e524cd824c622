/*
 * mcp_steer_child.c -- the loop verbs that steering tools of `lil mcp` run
 * in a child (mcp_steer.h): `lil VERB SPEC --run-id ID --json --progress
 * json --actor mcp:<client> --reason R ...`.
 *
 * The child's stderr lines that are progress events (docs/cli.md,
 * "Progress of the loop verbs") become notifications/progress of the
 * request while it is open.  A request that does not wait is answered
 * {"run_id", "status": "running", "pid"} at the child's first event other
 * than its end (the loop is open: the run's start, an approval or a
 * recovery is journaled, and the loop runs on), and the child goes on
 * detached.  Otherwise the answer is the child's end: exit 0-5 with a loop
 * result on stdout is the result (a failed run is a result, not an error);
 * anything else is a tool error carrying the CLI's words from stderr.  An
 * inputs file is removed once the child has read it (its first event, or
 * its end), also when the request went away before that.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp_steer.h"

#define ARGV_MAX  32
#define WORDS_MAX 3500 /* bytes of the child's stderr put in a tool error */

struct steer_call {
    struct mcp_req *r; /* NULL once answered or dropped */
    struct cli_job *job;
    char *run_id;
    char *inputs_file; /* removed once the child has read it */
    bool wait;
    double events; /* progress events told so far */
};

static void call_free(struct steer_call *c)
{
    free(c->run_id);
    free(c->inputs_file);
    free(c);
}

static void inputs_read(struct steer_call *c)
{
    if (c->inputs_file) {
        (void)unlink(c->inputs_file);
        free(c->inputs_file);
        c->inputs_file = NULL;
    }
}

/* The request is gone: the child goes on without the call. */
static void call_let_go(struct steer_call *c)
{
    inputs_read(c);
    cli_job_detach(c->job);
    call_free(c);
}

/* ---- answers ------------------------------------------------------------------ */

static json_t *answer_doc(const struct steer_call *c, const char *status,
                          json_t *exit_code, json_t *result)
{
    return json_pack("{s:s, s:s, s:o, s:I, s:o}", "run_id", c->run_id, "status", status,
                     "exit_code", exit_code ? exit_code : json_null(), "pid",
                     (json_int_t)cli_job_pid(c->job), "result",
                     result ? result : json_null());
}

static void answer_running(struct steer_call *c)
{
    struct mcp_req *r = c->r;

    c->r = NULL;
    r->on_drop = NULL;
    mcp_req_tool(r, answer_doc(c, "running", NULL, NULL));
}

/* Is line a progress event of the child ({"event": ...}) -- its value, or
 * NULL (a message of the CLI). */
static json_t *event_of(const char *line)
{
    json_t *o = line[0] == '{' ? json_loads(line, 0, NULL) : NULL;

    if (json_is_string(json_object_get(o, "event")))
        return o;
    json_decref(o);
    return NULL;
}

/* The child's stderr without its progress events, trimmed, into words. */
static void cli_words(const char *err, char *words, size_t cap)
{
    size_t n = 0;

    words[0] = '\0';
    for (const char *p = err; *p && n + 1 < cap;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *line = strndup(p, len);
        json_t *ev = line ? event_of(line) : NULL;

        if (line && !ev && len > 0)
            n += (size_t)snprintf(words + n, cap - n, "%s%s", n ? "\n" : "", line);
        json_decref(ev);
        free(line);
        p += len + (nl ? 1 : 0);
    }
    if (n >= cap)
        n = cap - 1;
    while (n > 0 && (words[n - 1] == '\n' || words[n - 1] == ' '))
        words[--n] = '\0';
}

static void answer_end(struct steer_call *c, const struct cli_job_end *end)
{
    struct mcp_req *r = c->r;
    json_t *result = end->exit_code >= 0 && end->exit_code <= 5
                         ? json_loads(end->out, JSON_DISABLE_EOF_CHECK, NULL)
                         : NULL;
    const char *status = json_string_value(json_object_get(result, "status"));
    char code[32], words[WORDS_MAX];

    c->r = NULL;
    r->on_drop = NULL;
    if (json_is_object(result) && status) {
        mcp_req_tool(r, answer_doc(c, status, json_integer(end->exit_code), result));
        return;
    }
    json_decref(result);
    snprintf(code, sizeof(code), "exit %d", end->exit_code);
    cli_words(end->err, words, sizeof(words));
    if (!words[0] && end->exit_code > 128)
        snprintf(words, sizeof(words), "the child lil was killed by signal %d",
                 end->exit_code - 128);
    else if (!words[0])
        snprintf(words, sizeof(words), "the child lil exited with status %d",
                 end->exit_code);
    mcp_req_tool_error(r, code, "%s", words);
}

/* ---- progress ------------------------------------------------------------------- */

static const char *field(json_t *ev, const char *key)
{
    const char *v = json_string_value(json_object_get(ev, key));

    return v ? v : "";
}

static long long number(json_t *ev, const char *key)
{
    return (long long)json_integer_value(json_object_get(ev, key));
}

/* A short line for event ev: "iteration 3: shell build done after 812ms". */
static void event_text(json_t *ev, char *buf, size_t cap)
{
    const char *kind = field(ev, "event"), *step = field(ev, "step");
    const char *note = field(ev, "note"), *why = field(ev, "reason");
    char what[300];
    int n;

    snprintf(what, sizeof(what), "%s %s", field(ev, "effect"),
             *step ? step : "(on_exit)");
    n = snprintf(buf, cap, "iteration %lld: ", number(ev, "iteration"));
    if (n < 0 || (size_t)n >= cap)
        return;
    buf += n, cap -= (size_t)n;
    if (strcmp(kind, "iteration_start") == 0)
        snprintf(buf, cap, "starts");
    else if (strcmp(kind, "effect_start") == 0)
        snprintf(buf, cap, "%s starts", what);
    else if (strcmp(kind, "effect_end") == 0)
        snprintf(buf, cap, "%s done after %lldms%s%s", what, number(ev, "dur_ms"),
                 *note ? ": " : "", note);
    else if (strcmp(kind, "tokens") == 0)
        snprintf(buf, cap, "%s streaming: %lld tokens so far", what,
                 number(ev, "call_tokens"));
    else if (strcmp(kind, "sleep") == 0)
        snprintf(buf, cap, "sleeping %lldms", number(ev, "ms"));
    else if (strcmp(kind, "pause") == 0 || strcmp(kind, "cap") == 0)
        snprintf(buf, cap, "%s: %s", kind[0] == 'p' ? "paused" : "cap tripped", why);
    else if (strcmp(kind, "end") == 0)
        snprintf(buf, cap, "end: %s%s%s", field(ev, "status"), *why ? ": " : "", why);
    else
        snprintf(buf, cap, "%s", kind);
}

/* ---- the child's callbacks ---------------------------------------------------- */

static void on_line(struct cli_job *job, const char *line, void *ud)
{
    struct steer_call *c = ud;
    json_t *ev = event_of(line);
    char text[600];
    bool end;

    (void)job;
    if (!ev)
        return; /* the CLI's words: the end reads them from stderr */
    end = strcmp(field(ev, "event"), "end") == 0;
    inputs_read(c); /* an event comes once the loop is open */
    if (c->r) {
        event_text(ev, text, sizeof(text));
        mcp_req_progress(c->r, ++c->events, -1, text);
        if (!c->wait && !end)
            answer_running(c);
    }
    json_decref(ev);
    if (!c->r)
        call_let_go(c);
}

static void on_end(struct cli_job *job, const struct cli_job_end *end, void *ud)
{
    struct steer_call *c = ud;

    (void)job;
    inputs_read(c);
    if (c->r)
        answer_end(c, end);
    call_free(c);
}

/* The request was cancelled or its session ended: the child goes on; the
 * call stays only until the child has read its inputs file. */
static void on_drop(struct mcp_req *r)
{
    struct steer_call *c = r->ud;

    c->r = NULL;
    if (!c->inputs_file)
        call_let_go(c);
}

/* ---- starting -------------------------------------------------------------------- */

static size_t child_argv(struct mcp_req *r, const struct steer_child *sc,
                         const char **argv, char *actor, size_t actor_len)
{
    const char *env_allow = r->srv->opts.env_allow;
    size_t n = 0;

    argv[n++] = sc->verb;
    argv[n++] = sc->spec;
    argv[n++] = "--run-id";
    argv[n++] = sc->run_id;
    argv[n++] = "--json";
    argv[n++] = "--progress";
    argv[n++] = "json";
    argv[n++] = "--actor";
    argv[n++] = mcp_session_actor(r->s, actor, actor_len);
    argv[n++] = "--reason";
    argv[n++] = sc->reason;
    for (size_t i = 0; sc->extra && sc->extra[i] && n < ARGV_MAX - 5; i++)
        argv[n++] = sc->extra[i];
    if (sc->env_allow && env_allow && *env_allow) {
        argv[n++] = "--env-allow";
        argv[n++] = env_allow;
    }
    if (sc->inputs_file) {
        argv[n++] = "--inputs";
        argv[n++] = sc->inputs_file;
    }
    argv[n] = NULL;
    return n;
}

void steer_child_start(struct mcp_req *r, struct steer_child *sc)
{
    struct steer_call *c = calloc(1, sizeof(*c));
    const char *argv[ARGV_MAX];
    char actor[300], msg[512];

    if (c)
        c->run_id = strdup(sc->run_id);
    if (!c || !c->run_id) {
        free(c);
        if (sc->inputs_file)
            (void)unlink(sc->inputs_file);
        free(sc->inputs_file);
        sc->inputs_file = NULL;
        mcp_req_error(r, MCP_INTERNAL_ERROR, NULL, "out of memory");
        return;
    }
    child_argv(r, sc, argv, actor, sizeof(actor));
    c->inputs_file = sc->inputs_file;
    sc->inputs_file = NULL;
    c->wait = sc->wait;
    if (cli_job_start(&r->srv->jobs, argv, on_line, on_end, c, &c->job, msg,
                      sizeof(msg)) != 0) {
        inputs_read(c);
        call_free(c);
        mcp_req_tool_error(r, NULL, "%s", msg);
        return;
    }
    c->r = r;
    r->ud = c;
    r->on_drop = on_drop;
}
