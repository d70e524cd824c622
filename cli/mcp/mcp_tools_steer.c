/*
 * mcp_tools_steer.c -- the tools of `lil mcp` that change runs: start_run,
 * step_run, resume_run, stop_run, approve_run, recover_run, submit_run
 * (docs/mcp.md, "Steering tools").
 *
 * What runs a loop's steps runs in a child, the `lil` binary's own verb
 * (mcp_steer_child.c), so the server never blocks: start_run, step_run,
 * resume_run, approve_run and recover_run.  stop_run and submit_run only
 * write a request or a queued run: they are done here, through lil.h.
 * Every change is journaled with the actor mcp:<client name> and the
 * client's reason.  An existing run's spec is the one its journal names,
 * held under --spec-root like a spec the client names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_steer.h"

/* ---- schemas ------------------------------------------------------------------ */

#define P_RUN_ID "\"run_id\": {\"type\": \"string\", \"description\": \"the run\"}"
#define P_WAIT(dflt)                                                                   \
    "\"wait\": {\"type\": \"boolean\", \"description\": \"true: answer when the loop " \
    "returns (completed, paused, ...); false: as soon as it runs on (default " dflt    \
    ")\"}"
#define P_REASON(what)                                                                         \
    "\"reason\": {\"type\": \"string\", \"description\": \"why, journaled with the actor" what \
    "\"}"
#define P_INPUTS \
    "\"inputs\": {\"type\": \"object\", \"description\": \"the spec's inputs, by name\"}"
#define SCHEMA(props, required)                                                    \
    "{\"type\": \"object\", \"properties\": {" props "}, \"required\": [" required \
    "], "                                                                          \
    "\"additionalProperties\": false}"

#define CHILD_OUTPUT                                                                     \
    "{\"type\": \"object\", \"properties\": {"                                           \
    "\"run_id\": {\"type\": \"string\"}, "                                               \
    "\"status\": {\"type\": \"string\", \"description\": \"completed, failed, "          \
    "uncertain, paused, waiting, stopped, or running (the loop goes on in pid)\"}, "     \
    "\"exit_code\": {\"type\": [\"integer\", \"null\"]}, "                               \
    "\"pid\": {\"type\": [\"integer\", \"null\"]}, "                                     \
    "\"result\": {\"type\": [\"object\", \"null\"], \"description\": \"the loop result " \
    "(lil run --json)\"}}, "                                                             \
    "\"required\": [\"run_id\", \"status\", \"exit_code\", \"pid\", \"result\"]}"

static const char start_in[] = SCHEMA(
    "\"spec\": {\"type\": \"string\", \"description\": \"a LoopSpec file, relative to "
    "--spec-root\"}, " P_INPUTS ", " P_RUN_ID ", \"fresh\": {\"type\": \"boolean\", "
    "\"description\": \"a new run under a new id <spec id>-<8 hex>\"}, " P_WAIT(
        "false") ", " P_REASON(" (default \\\"via MCP\\\")"),
    "\"spec\"");
static const char step_in[] =
    SCHEMA(P_RUN_ID ", " P_WAIT("true") ", " P_REASON(" (default \\\"via MCP\\\")"),
           "\"run_id\"");
static const char resume_in[] = SCHEMA(
    P_RUN_ID ", \"retry_failed\": {\"type\": \"boolean\", \"description\": \"re-open a "
             "failed run from its failed iteration\"}, " P_WAIT("false") ", " P_REASON(
                 " (default \\\"via MCP\\\")"),
    "\"run_id\"");
static const char approve_in[] = SCHEMA(
    P_RUN_ID ", \"pause_id\": {\"type\": \"string\", \"description\": \"the pause "
             "approved (pause.N, cap.N): exactly one of pause_id and digest\"}, "
             "\"digest\": {\"type\": \"string\", \"description\": \"the digest of the "
             "pause approved (8 or more digits)\"}, " P_WAIT("false") ", " P_REASON(""),
    "\"run_id\", \"reason\"");
static const char recover_in[] =
    SCHEMA(P_RUN_ID
           ", \"action\": {\"type\": \"string\", \"enum\": [\"retry\", "
           "\"assume_done\", \"abort\"], \"description\": \"retry runs the uncertain "
           "effect again, assume_done takes result as its result, abort stops the run "
           "for good\"}, \"result\": {\"description\": \"the effect's result (any "
           "JSON), with assume_done\"}, " P_WAIT("false") ", " P_REASON(""),
           "\"run_id\", \"action\", \"reason\"");
static const char stop_in[] =
    SCHEMA(P_RUN_ID ", " P_REASON(""), "\"run_id\", \"reason\"");
static const char stop_out[] =
    "{\"type\": \"object\", \"properties\": {\"run_id\": {\"type\": \"string\"}, "
    "\"requested\": {\"type\": \"boolean\"}, \"status\": {\"type\": \"string\"}}, "
    "\"required\": [\"run_id\", \"requested\", \"status\"]}";
static const char submit_in[] = SCHEMA(
    "\"spec\": {\"type\": \"string\", \"description\": \"a LoopSpec file, relative to "
    "--spec-root\"}, " P_INPUTS ", " P_RUN_ID
    ", " P_REASON(" (not journaled by a queue)"),
    "\"spec\"");
static const char submit_out[] =
    "{\"type\": \"object\", \"properties\": {\"run_id\": {\"type\": \"string\"}, "
    "\"status\": {\"type\": \"string\", \"const\": \"queued\"}}, "
    "\"required\": [\"run_id\", \"status\"]}";

/* ---- the tools that run a child ------------------------------------------------ */

static const char *reason_of(json_t *args)
{
    return mcp_arg_str(args, "reason", STEER_REASON_DEFAULT);
}

static void start_run(struct mcp_req *r, json_t *args)
{
    struct steer_child c = {"run",
                            NULL,
                            NULL,
                            reason_of(args),
                            NULL,
                            true,
                            mcp_arg_bool(args, "wait", false),
                            NULL};
    json_t *inputs = json_object_get(args, "inputs");
    char id[LIL_RUN_ID_MAX + 1], *real = NULL;
    lil_spec *spec;

    if (mcp_arg_bool(args, "fresh", false) && json_object_get(args, "run_id")) {
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: start_run: \"fresh\" names a new run itself: it "
                      "goes without \"run_id\"");
        return;
    }
    spec = steer_load_spec(r, mcp_arg_str(args, "spec", ""), &real);
    if (!spec)
        return;
    if (steer_new_run_id(r, spec, mcp_arg_str(args, "run_id", NULL),
                         mcp_arg_bool(args, "fresh", false), id, sizeof(id)) == 0 &&
        (!inputs || (c.inputs_file = steer_inputs_file(r, inputs)))) {
        c.spec = real;
        c.run_id = id;
        steer_child_start(r, &c);
    }
    lil_spec_free(spec);
    free(real);
}

/* A verb on an existing run: its spec from its journal. */
static void run_verb(struct mcp_req *r, json_t *args, struct steer_child *c)
{
    char *spec;

    c->run_id = mcp_arg_str(args, "run_id", "");
    c->reason = reason_of(args);
    spec = steer_run_spec(r, c->run_id);
    if (!spec)
        return;
    c->spec = spec;
    steer_child_start(r, c);
    free(spec);
}

static void step_run(struct mcp_req *r, json_t *args)
{
    struct steer_child c = {
        "step", NULL, NULL, NULL, NULL, true, mcp_arg_bool(args, "wait", true), NULL};

    run_verb(r, args, &c);
}

static void resume_run(struct mcp_req *r, json_t *args)
{
    static const char *const retry[] = {"--retry-failed", NULL};
    struct steer_child c = {"resume",
                            NULL,
                            NULL,
                            NULL,
                            mcp_arg_bool(args, "retry_failed", false) ? retry : NULL,
                            false,
                            mcp_arg_bool(args, "wait", false),
                            NULL};

    run_verb(r, args, &c);
}

static void approve_run(struct mcp_req *r, json_t *args)
{
    const char *pause = mcp_arg_str(args, "pause_id", NULL);
    const char *digest = mcp_arg_str(args, "digest", NULL);
    const char *extra[] = {pause ? "--pause" : "--digest", pause ? pause : digest,
                           NULL};
    struct steer_child c = {
        "approve", NULL, NULL, NULL, extra, false, mcp_arg_bool(args, "wait", false),
        NULL};

    if (!pause == !digest) {
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: approve_run: exactly one of \"pause_id\" and "
                      "\"digest\" is required");
        return;
    }
    run_verb(r, args, &c);
}

static void recover_run(struct mcp_req *r, json_t *args)
{
    const char *action = mcp_arg_str(args, "action", "");
    json_t *result = json_object_get(args, "result");
    bool assume = strcmp(action, "assume_done") == 0;
    char *result_json =
        result ? json_dumps(result, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    const char *extra[] = {assume                         ? "--assume-done"
                           : strcmp(action, "abort") == 0 ? "--abort"
                                                          : "--retry",
                           assume ? "--result-json" : NULL, result_json, NULL};
    struct steer_child c = {
        "recover", NULL, NULL, NULL, extra, false, mcp_arg_bool(args, "wait", false),
        NULL};

    if (assume != (result != NULL))
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: recover_run: \"result\" %s",
                      assume ? "is required with action assume_done"
                             : "goes only with action assume_done");
    else if (result && !result_json)
        mcp_req_error(r, MCP_INTERNAL_ERROR, NULL, "out of memory");
    else
        run_verb(r, args, &c);
    free(result_json);
}

/* ---- the tools done here --------------------------------------------------------- */

/* The status of run id in its facts ("running", "paused", ...). */
static void facts_status(struct mcp_server *srv, const char *id, char *status,
                         size_t len)
{
    lil_bytes facts = {0};
    json_t *o = NULL;

    if (lil_run_facts(srv->store, id, &facts) == LIL_OK)
        o = json_loadb((const char *)facts.data, facts.len, 0, NULL);
    snprintf(status, len, "%s",
             json_string_value(json_object_get(o, "status"))
                 ? json_string_value(json_object_get(o, "status"))
                 : "unknown");
    json_decref(o);
    lil_free(facts.data);
}

static void stop_run(struct mcp_req *r, json_t *args)
{
    const char *id = mcp_arg_str(args, "run_id", "");
    json_t *loop = steer_loop_facts(r, id); /* a loop run, or r is answered */
    char actor[300], status[32];
    lil_status rc;

    if (!loop)
        return;
    json_decref(loop);
    rc = lil_loop_request_stop(r->srv->store, id,
                               mcp_session_actor(r->s, actor, sizeof(actor)),
                               mcp_arg_str(args, "reason", ""));
    if (rc != LIL_OK) {
        mcp_req_tool_error(r, lil_status_name(rc), "%s",
                           lil_store_errmsg(r->srv->store));
        return;
    }
    facts_status(r->srv, id, status, sizeof(status));
    mcp_req_tool(r, json_pack("{s:s, s:b, s:s}", "run_id", id, "requested", 1, "status",
                              status));
}

static void submit_run(struct mcp_req *r, json_t *args)
{
    json_t *inputs = json_object_get(args, "inputs");
    char *real = NULL, *inputs_json = NULL, *id = NULL;
    lil_loop_opts o;
    lil_spec *spec;
    lil_status rc;

    if (!r->srv->is_pg) {
        mcp_req_tool_error(
            r, NULL,
            "submit_run needs a PostgreSQL store (lil mcp --dir "
            "postgresql://... or LIL_DIR): '%s' is a store directory, which "
            "keeps no queue (on one machine, run loops with start_run)",
            r->srv->opts.store ? r->srv->opts.store : ".lil");
        return;
    }
    spec = steer_load_spec(r, mcp_arg_str(args, "spec", ""), &real);
    if (!spec)
        return;
    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.run_id = mcp_arg_str(args, "run_id", NULL);
    o.inputs_json = inputs_json = inputs ? json_dumps(inputs, JSON_COMPACT) : NULL;
    rc = lil_loop_submit(r->srv->store, spec, &o, &id);
    if (rc != LIL_OK)
        mcp_req_tool_error(r, lil_status_name(rc), "%s",
                           lil_store_errmsg(r->srv->store));
    else
        mcp_req_tool(r, json_pack("{s:s, s:s}", "run_id", id, "status", "queued"));
    lil_free(id);
    free(inputs_json);
    lil_spec_free(spec);
    free(real);
}

/* ---- the table ----------------------------------------------------------------------
 */

const struct mcp_tool mcp_tools_steer[] = {
    {"start_run", "Start a loop run",
     "Start a loop run of a LoopSpec file under --spec-root, in a child process that "
     "goes on when the client goes away.  Answers at once with the run id and "
     "status \"running\" (wait: when the loop returns).  Progress notifications while "
     "the request is open, when the client asked for them.",
     start_in, CHILD_OUTPUT, MCP_TOOL_START, false, false, true, start_run},
    {"step_run", "Run one iteration",
     "Run exactly one iteration of an existing loop run (its spec is the one it was "
     "started from); answers when the iteration ends unless wait is false.",
     step_in, CHILD_OUTPUT, MCP_TOOL_STEER, false, false, true, step_run},
    {"resume_run", "Resume a loop run",
     "Resume a stopped, waiting or (with retry_failed) failed loop run in a child "
     "process; the resume is journaled with the actor and the reason.",
     resume_in, CHILD_OUTPUT, MCP_TOOL_STEER, false, false, true, resume_run},
    {"stop_run", "Stop a loop run",
     "Ask a loop run to stop at its next iteration boundary (journaled with the actor "
     "and the reason); resume_run goes on.  A second request, or one for a run that has "
     "ended, is refused.",
     stop_in, stop_out, MCP_TOOL_STEER, false, false, false, stop_run},
    {"approve_run", "Approve a pause",
     "Approve the breakpoint, gate or cap a paused run waits at, naming it by its pause "
     "id or its digest (inspect_run shows both): another pause is refused.  The run "
     "goes on in a child process.",
     approve_in, CHILD_OUTPUT, MCP_TOOL_STEER, false, false, true, approve_run},
    {"recover_run", "Decide an uncertain effect",
     "Decide the uncertain effect of a loop run: retry runs it again, assume_done takes "
     "result as its result without running it, abort stops the run for good.  The run "
     "goes on in a child process.",
     recover_in, CHILD_OUTPUT, MCP_TOOL_STEER, true, false, true, recover_run},
    {"submit_run", "Queue a loop run",
     "Queue a loop run of a LoopSpec file under --spec-root in a PostgreSQL store, for "
     "`lil worker` to run.",
     submit_in, submit_out, MCP_TOOL_START, false, false, false, submit_run},
    {NULL, NULL, NULL, NULL, NULL, MCP_TOOL_STEER, false, false, false, NULL},
};
