/*
 * mcp_http.c -- the Streamable HTTP transport of `lil mcp`.
 */
#include <stdio.h>

#include "mcp.h"

int mcp_http_serve(struct mcp_server *srv)
{
    (void)srv;
    fputs("lil: mcp: --http is not served yet\n", stderr);
    return 1;
}
