/*
 * serve_answer.c -- what a handler of `lil serve` answers (serve.h):
 * a JSON document, its text made already, or a status with {"error":
 * message}; and the counted JSON texts that answers and events share.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

/* ---- texts ----------------------------------------------------------------- */

struct serve_text *serve_text_new(size_t cap)
{
    struct serve_text *t;

    if (cap > SIZE_MAX - sizeof(*t) - 1)
        return NULL;
    t = malloc(sizeof(*t) + cap + 1);
    if (!t)
        return NULL;
    t->refs = 1;
    t->len = 0;
    t->cap = cap;
    t->data[0] = '\0';
    return t;
}

int serve_text_add(struct serve_text **t, const char *bytes, size_t len)
{
    struct serve_text *grown;
    size_t cap = (*t)->cap;

    if (len > SIZE_MAX / 2 - (*t)->len) {
        serve_text_unref(*t);
        *t = NULL;
        return -1;
    }
    while (cap < (*t)->len + len)
        cap = cap ? cap * 2 : 4096;
    if (cap != (*t)->cap) {
        grown = realloc(*t, sizeof(**t) + cap + 1);
        if (!grown) {
            serve_text_unref(*t);
            *t = NULL;
            return -1;
        }
        grown->cap = cap;
        *t = grown;
    }
    memcpy((*t)->data + (*t)->len, bytes, len);
    (*t)->len += len;
    (*t)->data[(*t)->len] = '\0';
    return 0;
}

static int add_dumped(const char *bytes, size_t len, void *ud)
{
    return serve_text_add(ud, bytes, len);
}

struct serve_text *serve_text_of(const json_t *doc)
{
    struct serve_text *t = doc ? serve_text_new(1024) : NULL;

    if (t && json_dump_callback(doc, add_dumped, &t, JSON_COMPACT) != 0) {
        serve_text_unref(t);
        return NULL;
    }
    return t;
}

struct serve_text *serve_text_ref(struct serve_text *t)
{
    if (t)
        t->refs++;
    return t;
}

void serve_text_unref(struct serve_text *t)
{
    if (t && --t->refs == 0)
        free(t);
}

/* ---- answers --------------------------------------------------------------- */

void serve_fail(struct serve_answer *a, unsigned status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    json_decref(a->json);
    serve_text_unref(a->text);
    a->text = NULL;
    a->status = status;
    a->json = json_pack("{s:s}", "error", msg);
}

void serve_ok(struct serve_answer *a, json_t *doc)
{
    json_decref(a->json);
    serve_text_unref(a->text);
    a->text = NULL;
    a->json = doc;
    a->status = doc ? 200 : 500;
    if (!doc)
        a->json = json_pack("{s:s}", "error", "out of memory");
}

void serve_ok_text(struct serve_answer *a, struct serve_text *t)
{
    if (!t) {
        serve_ok(a, NULL);
        return;
    }
    json_decref(a->json);
    serve_text_unref(a->text);
    a->json = NULL;
    a->text = t;
    a->status = 200;
}
