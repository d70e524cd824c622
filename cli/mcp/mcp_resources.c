/*
 * mcp_resources.c -- runs as MCP resources: lil://runs/{id} and
 * lil://runs/{id}/events, subscriptions and list_changed.
 */
#include "mcp.h"

static void none(struct mcp_req *r, json_t *params)
{
    (void)params;
    mcp_req_error(r, MCP_METHOD_NOT_FOUND, NULL, "resources are not served yet");
}

void mcp_resources_list(struct mcp_req *r, json_t *params)
{
    none(r, params);
}

void mcp_resources_templates(struct mcp_req *r, json_t *params)
{
    none(r, params);
}

void mcp_resources_read(struct mcp_req *r, json_t *params)
{
    none(r, params);
}

void mcp_resources_subscribe(struct mcp_req *r, json_t *params)
{
    none(r, params);
}

void mcp_resources_unsubscribe(struct mcp_req *r, json_t *params)
{
    none(r, params);
}

void mcp_resources_tick(struct mcp_server *srv)
{
    (void)srv;
}
