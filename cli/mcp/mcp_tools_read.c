/*
 * mcp_tools_read.c -- the read-only tools of `lil mcp`: list_runs,
 * inspect_run, run_events, validate_spec, explain_spec, doctor -- their
 * descriptions and their input and output JSON Schemas (docs/mcp.md,
 * "Read tools").  The handlers are in mcp_tools_runs.c and
 * mcp_tools_specs.c.
 *
 * The output schemas are what clients check structuredContent against
 * (the official SDKs do, with AJV or jsonschema): they name the keys every
 * answer has, say "null" wherever a value may be null, and leave the big
 * documents (facts, events, explain) open, so that a field the library
 * adds later never makes an answer invalid.
 */
#include "mcp_read.h"

#define NULLABLE_STR "{\"type\": [\"string\", \"null\"]}"
#define NULLABLE_INT "{\"type\": [\"integer\", \"null\"]}"
#define NULLABLE_OBJ "{\"type\": [\"object\", \"null\"]}"

#define RUN_ID_PROP                                                                     \
    "\"run_id\": {\"type\": \"string\", \"description\": \"the run's id (as list_runs " \
    "gives it)\"}"

static const char list_runs_in[] =
    "{\"type\": \"object\", \"properties\": {"
    "\"status\": {\"type\": \"string\", \"description\": \"only runs with this status, "
    "or one of these (a comma list): running, completed, failed, uncertain, stopped, "
    "paused, waiting, damaged, locked, unborn, key?, version?, error\"}, "
    "\"kind\": {\"type\": \"string\", \"enum\": [\"loop\", \"program\"], "
    "\"description\": \"only loop runs or only program runs\"}, "
    "\"prefix\": {\"type\": \"string\", \"description\": \"only runs whose id starts "
    "with this\"}, "
    "\"cursor\": {\"type\": \"string\", \"description\": \"next_cursor of the previous "
    "page: the page starts after it\"}, "
    "\"limit\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 1000, "
    "\"description\": \"runs in the page, 1 to 1000 (default 100)\"}}, "
    "\"required\": [], \"additionalProperties\": false}";

static const char list_runs_out[] =
    "{\"type\": \"object\", \"required\": [\"runs\", \"next_cursor\", \"total\"], "
    "\"properties\": {"
    "\"runs\": {\"type\": \"array\", \"items\": {\"type\": \"object\", "
    "\"required\": [\"run\", \"status\"], \"properties\": {"
    "\"run\": {\"type\": \"string\"}, \"kind\": " NULLABLE_STR ", "
    "\"status\": {\"type\": \"string\"}, "
    "\"ended\": {\"type\": [\"boolean\", \"null\"]}, \"reason\": " NULLABLE_STR ", "
    "\"iteration\": " NULLABLE_INT ", \"steps\": " NULLABLE_OBJ ", "
    "\"records\": " NULLABLE_INT ", \"last_seq\": " NULLABLE_INT ", "
    "\"created_ns\": " NULLABLE_INT ", \"last_ns\": " NULLABLE_INT ", "
    "\"holder\": " NULLABLE_OBJ ", \"paused\": " NULLABLE_OBJ ", "
    "\"wake_at_ms\": " NULLABLE_INT ", \"in_flight\": " NULLABLE_OBJ ", "
    "\"usage\": " NULLABLE_OBJ ", \"uncertain\": {\"type\": \"integer\"}, "
    "\"stop_requested\": {\"type\": \"boolean\"}, "
    "\"error\": {\"type\": \"object\", \"required\": [\"code\", \"message\"], "
    "\"properties\": {\"code\": {\"type\": \"string\"}, "
    "\"message\": {\"type\": \"string\"}}}}}}, "
    "\"next_cursor\": " NULLABLE_STR ", \"total\": " NULLABLE_INT "}}";

static const char inspect_run_in[] =
    "{\"type\": \"object\", \"properties\": {" RUN_ID_PROP "}, "
    "\"required\": [\"run_id\"], \"additionalProperties\": false}";

static const char inspect_run_out[] =
    "{\"type\": \"object\", \"required\": [\"run\", \"kind\", \"status\", \"hints\"], "
    "\"properties\": {\"run\": {\"type\": \"string\"}, \"kind\": {\"type\": "
    "\"string\"}, \"status\": {\"type\": \"string\"}, "
    "\"paused\": " NULLABLE_OBJ ", \"budget\": " NULLABLE_OBJ ", "
    "\"meters\": " NULLABLE_OBJ ", \"stop_request\": " NULLABLE_OBJ ", "
    "\"uncertain\": {\"type\": \"array\"}, \"loop\": " NULLABLE_OBJ ", "
    "\"hints\": {\"type\": \"array\", \"items\": {\"type\": \"object\", "
    "\"required\": [\"tool\", \"arguments\", \"text\"], \"properties\": {"
    "\"tool\": {\"type\": \"string\"}, \"arguments\": {\"type\": \"object\"}, "
    "\"text\": {\"type\": \"string\"}}}}}}";

static const char run_events_in[] =
    "{\"type\": \"object\", \"properties\": {" RUN_ID_PROP ", "
    "\"from_seq\": {\"type\": \"integer\", \"minimum\": 0, \"description\": \"the "
    "record to start at (0 or 1: the first; a page's next for the rest)\"}, "
    "\"limit\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 10000, "
    "\"description\": \"events in the page, 1 to 10000 (default 500)\"}, "
    "\"types\": {\"type\": \"string\", \"description\": \"only these event types, a "
    "comma list (effect,reserve,approval...)\"}, "
    "\"last_iterations\": {\"type\": \"integer\", \"minimum\": 0, \"description\": "
    "\"a loop run: start at the record that starts its last N iterations\"}, "
    "\"brief\": {\"type\": \"boolean\", \"description\": \"one event per record with "
    "seq and type only\"}}, "
    "\"required\": [\"run_id\"], \"additionalProperties\": false}";

static const char run_events_out[] =
    "{\"type\": \"object\", \"required\": [\"run\", \"kind\", \"events\", \"next\", "
    "\"more\", \"last_seq\"], \"properties\": {\"run\": {\"type\": \"string\"}, "
    "\"kind\": {\"type\": \"string\"}, \"events\": {\"type\": \"array\", \"items\": "
    "{\"type\": \"object\", \"required\": [\"seq\", \"type\"]}}, "
    "\"next\": {\"type\": \"integer\"}, \"more\": {\"type\": \"boolean\"}, "
    "\"last_seq\": {\"type\": \"integer\"}, "
    "\"iterations_before\": {\"type\": \"integer\"}}}";

#define SPEC_IN(what)                                                           \
    "{\"type\": \"object\", \"properties\": {\"spec\": {\"type\": \"string\", " \
    "\"description\": \"" what                                                  \
    " (relative to --spec-root, or absolute under it)\"}}, "                    \
    "\"required\": [\"spec\"], \"additionalProperties\": false}"

static const char validate_spec_out[] =
    "{\"type\": \"object\", \"required\": [\"valid\", \"spec\", \"diagnostics\"], "
    "\"properties\": {\"valid\": {\"type\": \"boolean\"}, \"spec\": " NULLABLE_STR ", "
    "\"file\": {\"type\": \"string\"}, \"ok\": {\"type\": \"boolean\"}, "
    "\"errors\": {\"type\": \"integer\"}, \"warnings\": {\"type\": \"integer\"}, "
    "\"infos\": {\"type\": \"integer\"}, "
    "\"diagnostics\": {\"type\": \"array\", \"items\": {\"type\": \"object\", "
    "\"required\": [\"severity\", \"message\", \"file\", \"line\", \"column\"], "
    "\"properties\": {\"severity\": {\"type\": \"string\"}, \"code\": " NULLABLE_STR
    ", \"message\": " NULLABLE_STR ", \"file\": {\"type\": \"string\"}, "
    "\"path\": " NULLABLE_STR ", \"line\": " NULLABLE_INT ", \"column\": " NULLABLE_INT
    ", \"offset\": " NULLABLE_INT "}}}}}";

static const char explain_spec_out[] = "{\"type\": \"object\"}";

static const char doctor_out[] =
    "{\"type\": \"object\", \"required\": [\"loop\", \"ok\", \"checks\"], "
    "\"properties\": {\"loop\": {\"type\": \"string\"}, \"spec\": {\"type\": "
    "\"string\"}, \"store\": {\"type\": \"string\"}, \"ok\": {\"type\": \"boolean\"}, "
    "\"checks\": {\"type\": \"array\", \"items\": {\"type\": \"object\", "
    "\"required\": [\"check\", \"level\", \"message\"], \"properties\": {"
    "\"check\": {\"type\": \"string\"}, \"level\": {\"type\": \"string\"}, "
    "\"message\": {\"type\": \"string\"}}}}, \"agents\": " NULLABLE_OBJ ", "
    "\"version\": {\"type\": \"string\"}}}";

#define READ_TOOL(name, title, desc, in, out, fn)                         \
    {                                                                     \
        name, title, desc, in, out, MCP_TOOL_READ, false, true, false, fn \
    }

const struct mcp_tool mcp_tools_read[] = {
    READ_TOOL(
        "list_runs", "List runs",
        "The runs of the store, by id, a page at a time: each run's kind, status, "
        "steps, iteration, holder, pause and queue state. Filter by status, kind "
        "and id prefix; pass next_cursor back as cursor for the next page.",
        list_runs_in, list_runs_out, mcp_read_list_runs),
    READ_TOOL("inspect_run", "Inspect a run",
              "What a run is now (its facts): status, steps, meters, budget, the pause "
              "it waits at (id and digest), an effect without an outcome, a pending "
              "stop request, the loop's state; and hints: the tool to call next.",
              inspect_run_in, inspect_run_out, mcp_read_inspect_run),
    READ_TOOL("run_events", "A run's events",
              "A run's history as typed events, a page at a time from a record "
              "(from_seq; the page's next for the rest), optionally only some types "
              "or the last iterations of a loop.",
              run_events_in, run_events_out, mcp_read_run_events),
    READ_TOOL("validate_spec", "Validate a loop spec",
              "Check a loop spec (LoopSpec YAML or JSON) and give every diagnostic "
              "with its file, line and column; a spec with errors is a failed call "
              "whose text reads as `lil validate` prints it.",
              SPEC_IN("the spec to check"), validate_spec_out, mcp_read_validate_spec),
    READ_TOOL("explain_spec", "Explain a loop spec",
              "What a loop will do (`lil explain --json`): caps in force, the exit "
              "predicate and how it is grounded, the steps in order, gates, schedule.",
              SPEC_IN("the spec to explain"), explain_spec_out, mcp_read_explain_spec),
    READ_TOOL("doctor", "Can a loop run here",
              "The environment checks of `lil doctor` for a spec: the store is "
              "writable, budgets, each agent step's harness configured, prices, "
              "limits.",
              SPEC_IN("the spec to check"), doctor_out, mcp_read_doctor),
    {NULL, NULL, NULL, NULL, NULL, MCP_TOOL_READ, false, false, false, NULL},
};
