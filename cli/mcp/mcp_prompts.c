/*
 * mcp_prompts.c -- the prompts of `lil mcp`: triage-uncertain and
 * review-pause (docs/mcp.md, "Prompts").
 *
 * Each takes a run_id and is built from the run's facts (lil_run_facts):
 * a user message that walks an assistant through the decision -- how to
 * recover an uncertain effect, whether to approve a pause -- and which tool
 * makes it (recover_run, approve_run, stop_run), then the facts themselves
 * as an embedded resource (lil://runs/{id}).  A run that is not uncertain
 * (not paused) gets a prompt that says so.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"

/* A text being written (NULL s: out of memory). */
struct text {
    char *s;
    size_t len;
};

static void add(struct text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add(struct text *t, const char *fmt, ...)
{
    va_list ap;
    int n;
    char *grown;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    grown = t->s && n >= 0 ? realloc(t->s, t->len + (size_t)n + 1) : NULL;
    if (!grown) {
        free(t->s);
        t->s = NULL;
        return;
    }
    t->s = grown;
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

/* v as compact JSON text into t. */
static void add_json(struct text *t, json_t *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

    add(t, "%s", s ? s : "null");
    free(s);
}

static const char *str(json_t *o, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : dflt;
}

/* ---- triage-uncertain ---------------------------------------------------- */

/* The request_sha256 of the last start of effect step among run id's last
 * records (a program run journals the request's digest, and its note), or
 * NULL; a new string. */
static char *request_digest(lil_store *st, const char *id, json_t *facts,
                            const char *step)
{
    json_int_t last = json_integer_value(json_object_get(facts, "last_seq"));
    lil_events_opts o = {.struct_size = sizeof(o),
                         .from_seq = last > 64 ? (uint64_t)(last - 64) : 0,
                         .types = "effect_start"};
    lil_bytes b = {NULL, 0};
    json_t *page, *ev;
    char *digest = NULL;
    size_t i;

    if (lil_run_events_with(st, id, &o, &b) != LIL_OK)
        return NULL;
    page = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    json_array_foreach(json_object_get(page, "events"), i, ev)
    {
        const char *sha = str(ev, "request_sha256", NULL);

        if (sha && strcmp(str(ev, "step", ""), step) == 0) {
            free(digest);
            digest = strdup(sha);
        }
    }
    json_decref(page);
    return digest;
}

/* The uncertain effect: a loop's own account of it (slot, iteration, kind,
 * rendered request), else the facts' "uncertain" entries. */
static void add_uncertain_effect(struct text *t, lil_store *st, const char *id,
                                 json_t *facts)
{
    json_t *loop_u = json_object_get(json_object_get(facts, "loop"), "uncertain");
    json_t *u;
    size_t i;

    add(t, "The effect without an outcome:\n");
    if (json_is_object(loop_u)) {
        add(t, "- slot %s (iteration %lld), kind %s\n", str(loop_u, "slot", "?"),
            (long long)json_integer_value(json_object_get(loop_u, "iteration")),
            str(loop_u, "kind", "?"));
        add(t, "- its rendered request (identity): %s\n", str(loop_u, "identity", "?"));
        return;
    }
    json_array_foreach(json_object_get(facts, "uncertain"), i, u)
    {
        char *digest = request_digest(st, id, facts, str(u, "step", ""));

        add(t, "- step %s", str(u, "step", "?"));
        if (json_object_get(u, "request"))
            add(t, ", its request's note: %s", str(u, "request", "?"));
        if (digest)
            add(t, ", its request's sha256: %s", digest);
        add(t, "\n");
        free(digest);
    }
}

static void add_recovery_actions(struct text *t, const char *id)
{
    add(t,
        "\nlil will not guess whether it happened: the run waits for a decision. "
        "recover_run (run_id \"%s\", action, and a reason saying why you chose) "
        "offers three actions:\n"
        "- retry: runs the effect again.  Safe only if the effect is idempotent "
        "(doing it twice does no harm: a GET, a write of the same file, a request "
        "carrying an idempotency key) or you have made sure it did not happen.\n"
        "- assume_done, with result: journals that result as the effect's "
        "outcome without running it.  Choose it when the effect did happen.  "
        "Check first, where the effect acts: the file it writes, the record or "
        "message it creates, the charge it makes, the command's own log.  Give "
        "the result the step would have returned (JSON).\n"
        "- abort: ends the run for good, failed.  Choose it when neither is safe "
        "or the work is no longer wanted.\n\n"
        "The run's events (resource lil://runs/%s/events) show what came before "
        "the effect.  When the evidence does not settle it, ask the user rather "
        "than retry an effect that may not be repeated.  Then call recover_run "
        "and say what you decided and why.\n",
        id, id);
}

static void triage_text(struct text *t, lil_store *st, const char *id, json_t *facts)
{
    const char *status = str(facts, "status", "unknown");

    if (strcmp(status, "uncertain") != 0) {
        add(t,
            "Run %s is not uncertain (its status: %s): no effect waits for a "
            "recovery, and recover_run would refuse it.%s\n",
            id, status,
            json_is_object(json_object_get(facts, "in_flight"))
                ? "  An effect is in flight in the process that holds the run: "
                  "wait for it."
                : "");
        return;
    }
    add(t,
        "Run %s (a %s run) is uncertain: an effect started and its outcome was "
        "never journaled (its process died or was killed in the middle), so "
        "nobody knows whether it happened.\n",
        id, str(facts, "kind", "?"));
    if (json_object_get(facts, "reason"))
        add(t, "The run says: %s\n", str(facts, "reason", ""));
    add(t, "\n");
    add_uncertain_effect(t, st, id, facts);
    add_recovery_actions(t, id);
}

/* ---- review-pause ------------------------------------------------------------ */

static void add_pause(struct text *t, json_t *paused)
{
    const char *kind = str(paused, "kind", "?");

    add(t, "The pause: id %s, digest %s, kind %s.\n", str(paused, "id", "?"),
        str(paused, "digest", "?"), kind);
    if (strcmp(kind, "cap") == 0) {
        add(t, "A cap tripped: %s", str(paused, "cap", "?"));
        if (json_object_get(paused, "detail")) {
            add(t, " (");
            add_json(t, json_object_get(paused, "detail"));
            add(t, ")");
        }
        add(t, ".  Approving lets the run go past the cap.\n");
        return;
    }
    add(t, "Step %s asks: %s (strategy %s).  Approving lets the run go on past it.\n",
        str(paused, "step", "?"), str(paused, "ask", "?"),
        str(paused, "strategy", "?"));
}

static void add_meters(struct text *t, json_t *facts)
{
    json_t *loop = json_object_get(facts, "loop");
    json_t *pending = json_object_get(json_object_get(facts, "meters"), "pending");

    if (json_is_object(pending) || json_is_array(pending)) {
        add(t, "Pending (what approving releases): ");
        add_json(t, pending);
        add(t, "\n");
    }
    add(t, "State: ");
    add_json(t, json_object_get(loop, "state"));
    add(t, "\nMeters: ");
    add_json(t, json_object_get(facts, "meters"));
    add(t, "\nBudget (each null, or its limit, used, reserved, left): ");
    add_json(t, json_object_get(facts, "budget"));
    add(t, "\n");
}

static void review_text(struct text *t, lil_store *st, const char *id, json_t *facts)
{
    json_t *paused = json_object_get(facts, "paused");
    const char *pause_id = str(paused, "id", "?");

    (void)st;
    if (!json_is_object(paused)) {
        add(t,
            "Run %s is not paused (its status: %s): no pause waits for an approval, "
            "and approve_run would refuse it.\n",
            id, str(facts, "status", "unknown"));
        return;
    }
    add(t, "Run %s (loop %s) is paused at iteration %lld, waiting for an approval.\n",
        id, str(json_object_get(facts, "loop"), "loop", "?"),
        (long long)json_integer_value(json_object_get(facts, "iteration")));
    add_pause(t, paused);
    add_meters(t, facts);
    add(t,
        "\nDecide from the question, the state and what the budget has left.  To "
        "approve, call approve_run with run_id \"%s\", pause_id \"%s\" (or, "
        "instead, digest \"%s\") and a reason: naming the pause means the "
        "approval cannot let another pause through.  Not to approve: leave it (the "
        "run keeps waiting) and tell the user why, or call stop_run with a reason "
        "to stop the run.  "
        "When the question is the user's to answer, ask them.\n",
        id, pause_id, str(paused, "digest", "?"));
}

/* ---- the table ------------------------------------------------------------ */

struct prompt {
    const char *name, *title, *description, *arg_description;
    void (*build)(struct text *t, lil_store *st, const char *id, json_t *facts);
};

static const struct prompt prompts[] = {
    {"triage-uncertain", "Recover an uncertain run",
     "Walks through deciding how to recover a run whose effect has no known outcome: "
     "retry, assume it done with its result, or abort (recover_run).",
     "the id of the uncertain run", triage_text},
    {"review-pause", "Review a paused run",
     "Walks through deciding whether to approve a paused loop run: its pause id and "
     "digest, what it asks, its meters and budget (approve_run or stop_run).",
     "the id of the paused run", review_text},
};

#define N_PROMPTS (sizeof(prompts) / sizeof(prompts[0]))

void mcp_prompts_list(struct mcp_req *r, json_t *params)
{
    json_t *list = json_array();

    (void)params;
    for (size_t i = 0; i < N_PROMPTS; i++)
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:s, s:[{s:s, s:s, s:b}]}", "name",
                            prompts[i].name, "title", prompts[i].title, "description",
                            prompts[i].description, "arguments", "name", "run_id",
                            "description", prompts[i].arg_description, "required", 1));
    mcp_req_result(r, json_pack("{s:o}", "prompts", list));
}

static const struct prompt *find_prompt(const char *name)
{
    for (size_t i = 0; name && i < N_PROMPTS; i++)
        if (strcmp(prompts[i].name, name) == 0)
            return &prompts[i];
    return NULL;
}

/* lil://runs/<id, percent-encoded> into uri (as mcp_resources.c lists it). */
static void run_uri(const char *id, char *uri, size_t cap)
{
    size_t n = (size_t)snprintf(uri, cap, "lil://runs/");

    for (const unsigned char *c = (const unsigned char *)id; *c && n + 4 < cap; c++) {
        bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                     (*c >= '0' && *c <= '9') || strchr("-._~", *c);

        n += (size_t)snprintf(uri + n, cap - n, plain ? "%c" : "%%%02X", *c);
    }
}

/* The messages: the text, then the facts as an embedded resource. */
static json_t *prompt_result(const struct prompt *p, const char *id, const char *text,
                             const lil_bytes *facts)
{
    char uri[LIL_RUN_ID_MAX * 3 + 16];

    run_uri(id, uri, sizeof(uri));
    return json_pack(
        "{s:s, s:[{s:s, s:{s:s, s:s}}, {s:s, s:{s:s, s:{s:s, s:s, s:s%}}}]}",
        "description", p->title, "messages", "role", "user", "content", "type", "text",
        "text", text, "role", "user", "content", "type", "resource", "resource", "uri",
        uri, "mimeType", "application/json", "text", facts->data, facts->len);
}

/* The run_id argument of params, or NULL (r answered). */
static const char *run_id_arg(struct mcp_req *r, json_t *params)
{
    json_t *args = json_object_get(params, "arguments");
    const char *id = json_string_value(json_object_get(args, "run_id"));

    if (!id)
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: \"arguments\" must hold \"run_id\", a string");
    else if (lil_run_id_check(id) != LIL_OK)
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: \"run_id\" %.300s is not a run id", id);
    else
        return id;
    return NULL;
}

/* Answer r with prompt p of run id, built from its facts (JSON text). */
static void answer_prompt(struct mcp_req *r, const struct prompt *p, const char *id,
                          const lil_bytes *b)
{
    json_t *facts = json_loadb(b->data, b->len, 0, NULL);
    struct text t = {calloc(1, 1), 0};

    if (facts && t.s)
        p->build(&t, r->srv->store, id, facts);
    if (facts && t.s)
        mcp_req_result(r, prompt_result(p, id, t.s, b));
    else
        mcp_req_error(r, MCP_INTERNAL_ERROR, NULL, "the facts of run %.300s: %s", id,
                      facts ? "out of memory" : "not JSON");
    json_decref(facts);
    free(t.s);
}

void mcp_prompts_get(struct mcp_req *r, json_t *params)
{
    const struct prompt *p =
        find_prompt(json_string_value(json_object_get(params, "name")));
    lil_bytes b = {NULL, 0};
    const char *id;
    lil_status rc;

    if (!p) {
        mcp_req_error(
            r, MCP_INVALID_PARAMS, NULL,
            "Invalid params: \"name\" must name a prompt: triage-uncertain or "
            "review-pause");
        return;
    }
    id = run_id_arg(r, params);
    if (!id)
        return;
    rc = lil_run_facts(r->srv->store, id, &b);
    if (rc == LIL_E_NOTFOUND)
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: \"run_id\": no run %.300s", id);
    else if (rc != LIL_OK)
        mcp_req_error(r, MCP_INTERNAL_ERROR, NULL, "reading run %.300s: %.500s", id,
                      lil_store_errmsg(r->srv->store));
    else
        answer_prompt(r, p, id, &b);
    lil_free(b.data);
}
