/*
 * diag.c -- the list of diagnostics of a loop spec.
 *
 * Items are kept in insertion order; lil__diags_sort orders them by
 * position (stable).  Every string an item shows through its public struct
 * is an owned copy; a failed allocation drops the item and sets nomem.
 */
#include "loopspec/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

#define DIAG_MSG_MAX 1024

void lil__diags_init(struct lil_diags *d, const struct lil_env *env, const char *file)
{
    memset(d, 0, sizeof(*d));
    d->env = env;
    d->file = file ? file : "";
}

void lil__diags_free(struct lil_diags *d)
{
    for (size_t i = 0; i < d->n; i++) {
        lil__free(d->env, d->v[i].message);
        lil__free(d->env, d->v[i].path);
        lil__free(d->env, d->v[i].source_line);
    }
    lil__free(d->env, d->v);
    d->v = NULL;
    d->n = d->alloc = 0;
}

static bool grow(struct lil_diags *d)
{
    struct lil_diag_item *v = lil__grow(d->env, d->v, &d->alloc, d->n, sizeof(*v), 16);

    if (!v)
        return false;
    d->v = v;
    return true;
}

static void count(struct lil_diags *d, lil_severity sev)
{
    if (sev == LIL_SEV_ERROR)
        d->nerrors++;
    else if (sev == LIL_SEV_WARNING)
        d->nwarnings++;
    else
        d->ninfos++;
}

void lil__diag(struct lil_diags *d, lil_severity sev, const char *code,
               struct lil_pos pos, const char *path, const char *fmt, ...)
{
    char msg[DIAG_MSG_MAX];
    struct lil_diag_item *it;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (!grow(d)) {
        d->nomem = true;
        return;
    }
    it = &d->v[d->n];
    memset(it, 0, sizeof(*it));
    it->message = lil__strdup(d->env, msg);
    it->path = lil__strdup(d->env, path ? path : "");
    if (!it->message || !it->path) {
        lil__free(d->env, it->message);
        lil__free(d->env, it->path);
        d->nomem = true;
        return;
    }
    it->pub.severity = sev;
    it->pub.code = code;
    it->pub.message = it->message;
    it->pub.path = it->path;
    it->pub.file = d->file;
    it->pub.line = pos.line;
    it->pub.column = pos.line ? pos.col : 0;
    it->pub.offset = pos.line ? pos.offset : 0;
    it->pub.source_line = "";
    it->seq = d->n;
    d->n++;
    count(d, sev);
}

/* A forward-only cursor over the lines of a text. */
struct line_cursor {
    const char *text;
    size_t len;
    size_t pos;    /* start of line `line` */
    unsigned line; /* 1-based */
};

/* Move to line `line` (never backwards); false if the text is shorter. */
static bool cursor_seek(struct line_cursor *c, unsigned line)
{
    while (c->line < line) {
        const char *nl = memchr(c->text + c->pos, '\n', c->len - c->pos);

        if (!nl)
            return false;
        c->pos = (size_t)(nl - c->text) + 1;
        c->line++;
    }
    return c->line == line;
}

static size_t line_length(const struct line_cursor *c)
{
    size_t i = c->pos;

    while (i < c->len && c->text[i] != '\n' && c->text[i] != '\r')
        i++;
    return i - c->pos;
}

void lil__diags_attach_source(struct lil_diags *d, const char *text, size_t len)
{
    struct line_cursor c = {text, len, 0, 1};

    lil__diags_sort(d); /* positions ascending: one pass over the text */
    for (size_t i = 0; i < d->n; i++) {
        struct lil_diag_item *it = &d->v[i];

        if (!it->pub.line || it->source_line || !cursor_seek(&c, it->pub.line))
            continue;
        it->source_line = lil__strndup(d->env, text + c.pos, line_length(&c));
        if (!it->source_line) {
            d->nomem = true;
            return;
        }
        it->pub.source_line = it->source_line;
    }
}

static int cmp_item(const void *a, const void *b)
{
    const struct lil_diag_item *x = a, *y = b;
    /* Diagnostics without a position go last. */
    unsigned lx = x->pub.line ? x->pub.line : ~0u;
    unsigned ly = y->pub.line ? y->pub.line : ~0u;

    if (lx != ly)
        return lx < ly ? -1 : 1;
    if (x->pub.column != y->pub.column)
        return x->pub.column < y->pub.column ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void lil__diags_sort(struct lil_diags *d)
{
    if (d->n > 1)
        qsort(d->v, d->n, sizeof(*d->v), cmp_item);
}
