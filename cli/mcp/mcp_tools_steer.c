/*
 * mcp_tools_steer.c -- the tools of `lil mcp` that change runs: start_run,
 * step_run, resume_run, stop_run, approve_run, recover_run, submit_run.
 */
#include "mcp.h"

const struct mcp_tool mcp_tools_steer[] = {
    {NULL, NULL, NULL, NULL, NULL, MCP_TOOL_STEER, false, false, false, NULL},
};
