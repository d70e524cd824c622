/*
 * serve_lab.c -- the crash lab of `lil serve` (serve.h)
 */
#include "serve.h"

void serve_get_lab(struct serve_call *c, struct serve_answer *a)
{
    (void)c;
    serve_fail(a, 501, "not built yet");
}

void serve_post_lab_start(struct serve_call *c, struct serve_answer *a)
{
    (void)c;
    serve_fail(a, 501, "not built yet");
}

void serve_post_lab_kill(struct serve_call *c, struct serve_answer *a)
{
    (void)c;
    serve_fail(a, 501, "not built yet");
}

void serve_post_lab_resume(struct serve_call *c, struct serve_answer *a)
{
    (void)c;
    serve_fail(a, 501, "not built yet");
}

void serve_post_lab_recover(struct serve_call *c, struct serve_answer *a)
{
    (void)c;
    serve_fail(a, 501, "not built yet");
}

void serve_lab_tick(struct serve *srv)
{
    (void)srv;
}

void serve_lab_free(struct serve *srv)
{
    (void)srv;
}
