/*
 * mcp_tools_read.c -- the read-only tools of `lil mcp`: list_runs,
 * inspect_run, run_events, validate_spec, explain_spec, doctor.
 */
#include "mcp.h"

const struct mcp_tool mcp_tools_read[] = {
    {NULL, NULL, NULL, NULL, NULL, MCP_TOOL_READ, false, false, false, NULL},
};
