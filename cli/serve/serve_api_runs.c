/*
 * serve_api_runs.c -- the read routes of `lil serve` (serve.h)
 */
#include "serve.h"

void serve_get_runs(struct serve_call *c, struct serve_answer *a)
{
    (void)c;
    serve_fail(a, 501, "not built yet");
}

void serve_get_run(struct serve_call *c, struct serve_answer *a)
{
    (void)c;
    serve_fail(a, 501, "not built yet");
}

void serve_get_run_events(struct serve_call *c, struct serve_answer *a)
{
    (void)c;
    serve_fail(a, 501, "not built yet");
}

void serve_get_run_state(struct serve_call *c, struct serve_answer *a)
{
    (void)c;
    serve_fail(a, 501, "not built yet");
}

void serve_get_run_spec(struct serve_call *c, struct serve_answer *a)
{
    (void)c;
    serve_fail(a, 501, "not built yet");
}
