/*
 * mcp_paths.c -- spec paths of `lil mcp`, held under --spec-root.
 */
#include <stdio.h>

#include "mcp.h"

char *mcp_spec_path(const struct mcp_server *srv, const char *spec, char *msg,
                    size_t msg_len)
{
    (void)srv;
    snprintf(msg, msg_len, "spec %s is outside --spec-root", spec);
    return NULL;
}
