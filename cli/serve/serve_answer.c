/*
 * serve_answer.c -- what a handler of `lil serve` answers (serve.h):
 * a JSON document, or a status with {"error": message}.
 */
#include <stdarg.h>
#include <stdio.h>

#include "serve.h"

void serve_fail(struct serve_answer *a, unsigned status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    json_decref(a->json);
    a->status = status;
    a->json = json_pack("{s:s}", "error", msg);
}

void serve_ok(struct serve_answer *a, json_t *doc)
{
    json_decref(a->json);
    a->json = doc;
    a->status = doc ? 200 : 500;
    if (!doc)
        a->json = json_pack("{s:s}", "error", "out of memory");
}
