/*
 * mcp_dispatch.c -- the methods of `lil mcp` (mcp.h): the lifecycle
 * (initialize, ping), logging/setLevel and completion/complete here; tools,
 * resources and prompts in their files.
 *
 * A session answers only initialize and ping until initialize succeeded
 * (-32600 otherwise, "not initialized").  initialize agrees on the version
 * the client asks for when it is one of mcp_protocol_versions, else offers
 * the newest; a second initialize on a session is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"

#define COMPLETIONS_MAX 100

static const char instructions[] =
    "lil keeps durable runs: loops from LoopSpec YAML files and programs that use "
    "lil's library.  list_runs and inspect_run show what runs exist and where each "
    "stands; run_events reads a run's history.  A paused run waits for approve_run "
    "naming its pause id; an uncertain run waits for recover_run.  Resources "
    "lil://runs/{id} follow a run (subscribe to be told when it changes).";

static const char *const log_levels[] = {
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
};

static const char *agreed_version(const char *asked)
{
    for (size_t i = 0; mcp_protocol_versions[i]; i++)
        if (strcmp(mcp_protocol_versions[i], asked) == 0)
            return mcp_protocol_versions[i];
    return mcp_protocol_versions[0];
}

static json_t *capabilities(void)
{
    return json_pack("{s:{s:b}, s:{s:b, s:b}, s:{s:b}, s:{}, s:{}}", "tools",
                     "listChanged", 0, "resources", "subscribe", 1, "listChanged", 1,
                     "prompts", "listChanged", 0, "logging", "completions");
}

static char *dup_str(json_t *v)
{
    return json_is_string(v) ? strdup(json_string_value(v)) : NULL;
}

static void initialize(struct mcp_req *r, json_t *params)
{
    struct mcp_session *s = r->s;
    json_t *asked = json_object_get(params, "protocolVersion");
    json_t *client = json_object_get(params, "clientInfo");
    const char *version;

    if (s->version[0]) {
        mcp_req_error(r, MCP_INVALID_REQUEST, NULL,
                      "Invalid Request: the session is already initialized");
        return;
    }
    if (!json_is_string(asked)) {
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: \"protocolVersion\" must be a string");
        return;
    }
    if (client && !json_is_object(client)) {
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: \"clientInfo\" must be an object");
        return;
    }
    version = agreed_version(json_string_value(asked));
    snprintf(s->version, sizeof(s->version), "%s", version);
    free(s->client_name);
    free(s->client_version);
    s->client_name = dup_str(json_object_get(client, "name"));
    s->client_version = dup_str(json_object_get(client, "version"));
    mcp_req_result(r, json_pack("{s:s, s:o, s:{s:s, s:s, s:s}, s:s}", "protocolVersion",
                                version, "capabilities", capabilities(), "serverInfo",
                                "name", "lil", "title", "lil: durable runs", "version",
                                lil_version(), "instructions", instructions));
}

static void ping(struct mcp_req *r, json_t *params)
{
    (void)params;
    mcp_req_result(r, json_object());
}

static void set_level(struct mcp_req *r, json_t *params)
{
    const char *level = json_string_value(json_object_get(params, "level"));

    for (int i = 0; level && i < (int)(sizeof(log_levels) / sizeof(log_levels[0]));
         i++) {
        if (strcmp(log_levels[i], level) == 0) {
            r->s->log_level = i;
            mcp_req_result(r, json_object());
            return;
        }
    }
    mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                  "Invalid params: \"level\" must be one of debug, info, notice, "
                  "warning, error, critical, alert, emergency");
}

/* Gather run ids that start with prefix, sorted, into a JSON array. */
struct completion {
    const char *prefix;
    json_t *values;
    size_t total;
};

static int complete_id(void *ud, const char *run_id)
{
    struct completion *c = ud;

    if (strncmp(run_id, c->prefix, strlen(c->prefix)) != 0)
        return 0;
    c->total++;
    if (json_array_size(c->values) < COMPLETIONS_MAX)
        json_array_append_new(c->values, json_string(run_id));
    return 0;
}

/* completion/complete: run ids for the {id} of the resource templates and
 * the run_id of the prompts; nothing for any other argument. */
static void complete(struct mcp_req *r, json_t *params)
{
    json_t *ref = json_object_get(params, "ref");
    json_t *arg = json_object_get(params, "argument");
    const char *name = json_string_value(json_object_get(arg, "name"));
    const char *value = json_string_value(json_object_get(arg, "value"));
    struct completion c = {value ? value : "", json_array(), 0};

    if (!json_is_object(ref) || !json_is_string(json_object_get(ref, "type")) ||
        !name || !value || !c.values) {
        json_decref(c.values);
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: \"ref\" (with its \"type\") and \"argument\" "
                      "(with \"name\" and \"value\") are required");
        return;
    }
    if (strcmp(name, "id") == 0 || strcmp(name, "run_id") == 0)
        (void)lil_store_foreach_run(r->srv->store, complete_id, &c);
    mcp_req_result(r, json_pack("{s:{s:o, s:I, s:b}}", "completion", "values", c.values,
                                "total", (json_int_t)c.total, "hasMore",
                                c.total > json_array_size(c.values)));
}

struct method {
    const char *name;
    void (*fn)(struct mcp_req *r, json_t *params);
};

static const struct method methods[] = {
    {"initialize", initialize},
    {"ping", ping},
    {"logging/setLevel", set_level},
    {"completion/complete", complete},
    {"tools/list", mcp_tools_list},
    {"tools/call", mcp_tools_call},
    {"resources/list", mcp_resources_list},
    {"resources/templates/list", mcp_resources_templates},
    {"resources/read", mcp_resources_read},
    {"resources/subscribe", mcp_resources_subscribe},
    {"resources/unsubscribe", mcp_resources_unsubscribe},
    {"prompts/list", mcp_prompts_list},
    {"prompts/get", mcp_prompts_get},
};

void mcp_dispatch_request(struct mcp_req *r, json_t *params)
{
    const struct method *m = NULL;

    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
        if (strcmp(methods[i].name, r->method) == 0)
            m = &methods[i];
    if (!m) {
        mcp_req_error(r, MCP_METHOD_NOT_FOUND, NULL, "Method not found: %.200s",
                      r->method);
        return;
    }
    if (params && !json_is_object(params)) {
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL, "Invalid params: must be an object");
        return;
    }
    if (!r->s->version[0] && m->fn != initialize && m->fn != ping) {
        mcp_req_error(r, MCP_INVALID_REQUEST, NULL,
                      "Invalid Request: %.200s before initialize", r->method);
        return;
    }
    m->fn(r, params);
}

void mcp_dispatch_notification(struct mcp_server *srv, struct mcp_session *s,
                               const char *method, json_t *params)
{
    if (strcmp(method, "notifications/initialized") == 0)
        s->initialized = true;
    else if (strcmp(method, "notifications/cancelled") == 0)
        mcp_server_cancel(srv, s, json_object_get(params, "requestId"));
    /* any other notification (roots/list_changed, progress) asks nothing */
}
