/*
 * serve_actions.c -- the actions of `lil serve` (serve.h)
 */
#include "serve.h"

void serve_post_stop(struct serve_call *c, struct serve_answer *a)
{
    (void)c;
    serve_fail(a, 501, "not built yet");
}

void serve_post_approve(struct serve_call *c, struct serve_answer *a)
{
    (void)c;
    serve_fail(a, 501, "not built yet");
}

void serve_post_recover(struct serve_call *c, struct serve_answer *a)
{
    (void)c;
    serve_fail(a, 501, "not built yet");
}

void serve_post_resume(struct serve_call *c, struct serve_answer *a)
{
    (void)c;
    serve_fail(a, 501, "not built yet");
}

void serve_get_jobs(struct serve_call *c, struct serve_answer *a)
{
    (void)c;
    serve_fail(a, 501, "not built yet");
}

void serve_actions_tick(struct serve *srv)
{
    (void)srv;
}

void serve_actions_free(struct serve *srv)
{
    (void)srv;
}
