/*
 * mcp_prompts.c -- the prompts of `lil mcp`: triage-uncertain and
 * review-pause.
 */
#include "mcp.h"

void mcp_prompts_list(struct mcp_req *r, json_t *params)
{
    (void)params;
    mcp_req_result(r, json_pack("{s:[]}", "prompts"));
}

void mcp_prompts_get(struct mcp_req *r, json_t *params)
{
    (void)params;
    mcp_req_error(r, MCP_INVALID_PARAMS, NULL, "no such prompt");
}
