/*
 * diag.h -- diagnostics of a loop spec: code, severity, message, path and
 * source position.
 *
 * Every stage (YAML loader, structural build, validator) appends to one
 * struct lil_diags and keeps going, so a user sees all problems at once.
 * Positions are 1-based line and column of the node (or, inside a guard or
 * template, of the character) the diagnostic is about, with the byte offset
 * in the file; 0/0 when there is none (a missing top-level key points at the
 * document's first node instead, where possible).  Lines are counted at LF;
 * a column counts characters (a valid UTF-8 sequence, or one byte that does
 * not start one; a tab is one), as an editor shows them.
 *
 * A diagnostics list never fails loudly: when an allocation fails it sets
 * `nomem` and drops the diagnostic; the caller turns that into LIL_E_NOMEM.
 */
#ifndef LIL_SPEC_DIAG_H
#define LIL_SPEC_DIAG_H

#include <lil/lil.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

struct lil_env;

/* A position in the source text. */
struct lil_pos {
    unsigned line; /* 1-based; 0 = unknown */
    unsigned col;  /* 1-based, in characters */
    size_t offset; /* byte offset in the file, 0-based */
};

/* One diagnostic: the public struct of lil.h, whose strings point into the
 * owned copies beside it. */
struct lil_diag_item {
    lil_diag pub;
    char *message;
    char *path;
    char *source_line; /* NULL until lil__diags_attach_source */
    size_t seq;        /* insertion order, for a stable sort */
};

struct lil_diags {
    const struct lil_env *env;
    struct lil_diag_item *v;
    size_t n, alloc;
    size_t nerrors, nwarnings, ninfos;
    bool nomem;
    const char *file; /* file name given to every diagnostic (not owned) */
};

void lil__diags_init(struct lil_diags *d, const struct lil_env *env, const char *file);
void lil__diags_free(struct lil_diags *d);

/* Append one diagnostic.  code is a static string ("bad-ref"); path may be
 * NULL or "" (a dotted spec path such as "body[1]:fix.when"). */
void lil__diag(struct lil_diags *d, lil_severity sev, const char *code,
               struct lil_pos pos, const char *path, const char *fmt, ...)
    LIL_PRINTF(6, 7);

/* Sort (lil__diags_sort) and fill every diagnostic's source_line from the
 * text in one pass (lines end at LF or CR; bytes are kept as they are). */
void lil__diags_attach_source(struct lil_diags *d, const char *text, size_t len);

/* Stable order for output: by line, then column, then insertion. */
void lil__diags_sort(struct lil_diags *d);

#endif
