/*
 * mcp_jobs.c -- the children of `lil mcp`: loops run by the `lil` binary.
 */
#include <stdio.h>

#include "mcp.h"

int mcp_job_start(struct mcp_server *srv, const char *const *argv, mcp_job_line_fn on_line,
                  mcp_job_end_fn on_end, void *ud, struct mcp_job **out, char *msg,
                  size_t msg_len)
{
    (void)srv, (void)argv, (void)on_line, (void)on_end, (void)ud;
    *out = NULL;
    snprintf(msg, msg_len, "cannot start children yet");
    return -1;
}

pid_t mcp_job_pid(const struct mcp_job *job)
{
    (void)job;
    return 0;
}

void mcp_job_detach(struct mcp_job *job)
{
    (void)job;
}

void mcp_jobs_tick(struct mcp_server *srv)
{
    (void)srv;
}

void mcp_jobs_free(struct mcp_server *srv)
{
    (void)srv;
}

bool mcp_jobs_attached(const struct mcp_server *srv)
{
    (void)srv;
    return false;
}
