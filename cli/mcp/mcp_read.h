/*
 * mcp_read.h -- what the read tools of `lil mcp` share: their handlers
 * (mcp_tools_runs.c: the runs of the store; mcp_tools_specs.c: loop specs),
 * listed with their schemas in mcp_tools_read.c's table.
 */
#ifndef LIL_CLI_MCP_READ_H
#define LIL_CLI_MCP_READ_H

#include "mcp.h"

/* mcp_tools_runs.c */
void mcp_read_list_runs(struct mcp_req *r, json_t *args);
void mcp_read_inspect_run(struct mcp_req *r, json_t *args);
void mcp_read_run_events(struct mcp_req *r, json_t *args);

/* mcp_tools_specs.c */
void mcp_read_validate_spec(struct mcp_req *r, json_t *args);
void mcp_read_explain_spec(struct mcp_req *r, json_t *args);
void mcp_read_doctor(struct mcp_req *r, json_t *args);

#endif
