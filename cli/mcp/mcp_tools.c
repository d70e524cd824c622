/*
 * mcp_tools.c -- the tools of `lil mcp`: tools/list, tools/call and the
 * shapes of their answers (mcp.h).
 *
 * Which tools a session sees depends on the server's flags: the read tools
 * always, the steering tools unless --read-only, start_run and submit_run
 * only with --allow-run.  A tool not offered is unknown to tools/call.
 * Before a handler runs, its arguments are checked against its input
 * schema -- required keys, each key's "type" and "enum", no unknown key
 * when "additionalProperties" is false -- and refused with -32602 naming
 * the field, so handlers read arguments without checking their types.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"

static bool offered(const struct mcp_server *srv, const struct mcp_tool *t)
{
    switch (t->cls) {
    case MCP_TOOL_READ:
        return true;
    case MCP_TOOL_STEER:
        return !srv->opts.read_only;
    case MCP_TOOL_START:
        return !srv->opts.read_only && srv->opts.allow_run;
    }
    return false;
}

static const struct mcp_tool *const tables[] = {mcp_tools_read, mcp_tools_steer};

static const struct mcp_tool *find_tool(const struct mcp_server *srv, const char *name)
{
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
        for (const struct mcp_tool *t = tables[i]; t->name; t++)
            if (strcmp(t->name, name) == 0 && offered(srv, t))
                return t;
    return NULL;
}

static json_t *tool_json(const struct mcp_tool *t)
{
    json_t *in = json_loads(t->input_schema, 0, NULL);
    json_t *out = t->output_schema ? json_loads(t->output_schema, 0, NULL) : NULL;
    json_t *tool =
        json_pack("{s:s, s:s, s:s, s:o, s:{s:s, s:b, s:b, s:b, s:b}}", "name", t->name,
                  "title", t->title, "description", t->description, "inputSchema",
                  in ? in : json_pack("{s:s}", "type", "object"), "annotations",
                  "title", t->title, "readOnlyHint", t->cls == MCP_TOOL_READ,
                  "destructiveHint", t->destructive, "idempotentHint", t->idempotent,
                  "openWorldHint", t->open_world);

    if (tool && out)
        json_object_set_new(tool, "outputSchema", out);
    else
        json_decref(out);
    return tool;
}

void mcp_tools_list(struct mcp_req *r, json_t *params)
{
    json_t *tools = json_array();

    (void)params;
    for (size_t i = 0; tools && i < sizeof(tables) / sizeof(tables[0]); i++)
        for (const struct mcp_tool *t = tables[i]; t->name; t++)
            if (offered(r->srv, t))
                json_array_append_new(tools, tool_json(t));
    mcp_req_result(r, json_pack("{s:o}", "tools", tools ? tools : json_array()));
}

/* ---- arguments ------------------------------------------------------------ */

static bool type_is(json_t *v, const char *type)
{
    if (strcmp(type, "string") == 0)
        return json_is_string(v);
    if (strcmp(type, "integer") == 0)
        return json_is_integer(v);
    if (strcmp(type, "number") == 0)
        return json_is_number(v);
    if (strcmp(type, "boolean") == 0)
        return json_is_boolean(v);
    if (strcmp(type, "object") == 0)
        return json_is_object(v);
    if (strcmp(type, "array") == 0)
        return json_is_array(v);
    if (strcmp(type, "null") == 0)
        return json_is_null(v);
    return true;
}

static bool type_ok(json_t *v, json_t *type)
{
    json_t *t;
    size_t i;

    if (json_is_string(type))
        return type_is(v, json_string_value(type));
    if (!json_is_array(type))
        return true;
    json_array_foreach(type, i, t)
    {
        if (json_is_string(t) && type_is(v, json_string_value(t)))
            return true;
    }
    return false;
}

static bool in_enum(json_t *v, json_t *values)
{
    json_t *e;
    size_t i;

    if (!json_is_array(values))
        return true;
    json_array_foreach(values, i, e)
    {
        if (json_equal(e, v))
            return true;
    }
    return false;
}

/* Check args against schema: NULL, or what is wrong, naming the field. */
static const char *bad_arg(json_t *schema, json_t *args, char *why, size_t len)
{
    json_t *props = json_object_get(schema, "properties"), *req, *v, *p;
    const char *key;
    size_t i;

    json_array_foreach(json_object_get(schema, "required"), i, req)
    {
        key = json_string_value(req);
        if (key && !json_object_get(args, key))
            return snprintf(why, len, "\"%s\" is required", key), why;
    }
    json_object_foreach(args, key, v)
    {
        p = json_object_get(props, key);
        if (!p) {
            if (json_is_false(json_object_get(schema, "additionalProperties")))
                return snprintf(why, len, "\"%.100s\" is not an argument of this tool",
                                key),
                       why;
            continue;
        }
        if (!type_ok(v, json_object_get(p, "type")))
            return snprintf(why, len, "\"%s\" must be of type %s", key,
                            json_is_string(json_object_get(p, "type"))
                                ? json_string_value(json_object_get(p, "type"))
                                : "as the schema says"),
                   why;
        if (!in_enum(v, json_object_get(p, "enum")))
            return snprintf(why, len, "\"%s\" is not one of the values it may take",
                            key),
                   why;
    }
    return NULL;
}

void mcp_tools_call(struct mcp_req *r, json_t *params)
{
    const char *name = json_string_value(json_object_get(params, "name"));
    json_t *args = json_object_get(params, "arguments"), *schema;
    const struct mcp_tool *t;
    char why[256];
    const char *bad;

    if (!name) {
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: \"name\" must be a string");
        return;
    }
    t = find_tool(r->srv, name);
    if (!t) {
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL, "Unknown tool: %.200s", name);
        return;
    }
    if (args && !json_is_object(args)) {
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: \"arguments\" must be an object");
        return;
    }
    args = args ? json_incref(args) : json_object();
    schema = json_loads(t->input_schema, 0, NULL);
    bad = bad_arg(schema, args, why, sizeof(why));
    json_decref(schema);
    if (bad)
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL, "Invalid params: %s: %s", name, bad);
    else
        t->fn(r, args);
    json_decref(args);
}

/* ---- answers -------------------------------------------------------------- */

void mcp_req_tool(struct mcp_req *r, json_t *structured)
{
    char *text = structured ? json_dumps(structured, JSON_COMPACT) : NULL;

    if (!structured || !text) {
        json_decref(structured);
        free(text);
        mcp_req_error(r, MCP_INTERNAL_ERROR, NULL, "out of memory");
        return;
    }
    mcp_req_result(r, json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text",
                                "text", text, "structuredContent", structured,
                                "isError", 0));
    free(text);
}

void mcp_req_tool_error(struct mcp_req *r, const char *code, const char *fmt, ...)
{
    char msg[4096];
    json_t *result;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    result = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", msg,
                       "isError", 1);
    if (result && code)
        json_object_set_new(result, "_meta", json_pack("{s:s}", "lil/code", code));
    mcp_req_result(r, result);
}

void mcp_req_tool_fail(struct mcp_req *r, json_t *structured, const char *text)
{
    mcp_req_result(r, json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text",
                                "text", text, "structuredContent", structured,
                                "isError", 1));
}

const char *mcp_arg_str(json_t *args, const char *key, const char *dflt)
{
    json_t *v = json_object_get(args, key);

    return json_is_string(v) ? json_string_value(v) : dflt;
}

int64_t mcp_arg_int(json_t *args, const char *key, int64_t dflt)
{
    json_t *v = json_object_get(args, key);

    return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

bool mcp_arg_bool(json_t *args, const char *key, bool dflt)
{
    json_t *v = json_object_get(args, key);

    return json_is_boolean(v) ? json_is_true(v) : dflt;
}
