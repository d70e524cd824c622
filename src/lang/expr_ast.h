/*
 * expr_ast.h -- private to the expression module (value.c, expr_lex.c,
 * expr_parse.c, expr_eval.c, tmpl.c): tokens, the compact AST, the parsed
 * template, and the text helpers they share.
 *
 * A parsed expression is one allocation: the struct lil_expr, then its node
 * array, its name table and its string pool.  Nodes refer to each other by
 * index; children always come before their parent (the parser appends a
 * node when it is complete), so `top` is the last node and the REF nodes
 * appear in source order.  Every string (literal, root, member) lives in
 * the pool, NUL-terminated, and is addressed by offset and length.
 *
 * The AST is never deeper than LIL_EXPR_MAX_DEPTH (a leaf has height 1):
 * the parser refuses deeper input, so the evaluator's recursion is bounded.
 */
#ifndef LIL_LANG_EXPR_AST_H
#define LIL_LANG_EXPR_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/utf8.h"
#include "lang/expr.h"

/* Tokens (expr_lex.c). */
enum expr_tk {
    TK_END,
    TK_NUM,
    TK_STR,
    TK_IDENT,
    TK_TRUE,
    TK_FALSE,
    TK_NULL,
    TK_LPAREN,
    TK_RPAREN,
    TK_DOT,
    TK_OR,
    TK_AND,
    TK_EQ,
    TK_NE,
    TK_LT,
    TK_LE,
    TK_GT,
    TK_GE,
    TK_IN,
    TK_ADD,
    TK_SUB,
    TK_MUL,
    TK_DIV,
    TK_MOD,
    TK_NOT
};

struct expr_tok {
    uint8_t kind; /* enum expr_tk */
    uint32_t off; /* byte offset in the text */
    uint32_t str; /* TK_STR and identifier-like tokens: pool offset */
    uint32_t len; /* ... and length (decoded) */
    double num;   /* TK_NUM */
};

/* The lexer's output: tokens (the last is TK_END) and the string pool. */
struct expr_lexed {
    struct expr_tok *toks;
    size_t ntok;
    char *pool;
    size_t pool_len;
};

/* AST node kinds (expr_parse.c builds, expr_eval.c walks). */
enum expr_op {
    N_NUM,
    N_STR,
    N_TRUE,
    N_FALSE,
    N_NULL,
    N_REF,
    N_NOT,
    N_NEG,
    N_OR,
    N_AND,
    N_EQ,
    N_NE,
    N_LT,
    N_LE,
    N_GT,
    N_GE,
    N_IN,
    N_ADD,
    N_SUB,
    N_MUL,
    N_DIV,
    N_MOD,
    N_SHQ /* shq(a): String(a) quoted as one word of a POSIX shell */
};

/* The root of a reference, classified once at parse time. */
enum expr_root { R_OTHER, R_STATE, R_INPUTS, R_ENV, R_META, R_ITERATION };

struct expr_node {
    uint8_t op;      /* enum expr_op */
    uint8_t root;    /* N_REF: enum expr_root */
    uint16_t height; /* 1 for a leaf */
    uint32_t off;    /* byte offset of its first character (not of a '(' around it) */
    uint32_t a, b;   /* unary: a; binary: a, b; N_STR: pool offset a, length b;
                        N_REF: names[a] is the root, names[a+1 .. a+b) members */
    double num;      /* N_NUM */
};

struct expr_name {
    uint32_t off; /* in the pool (NUL-terminated) */
    uint32_t len;
};

struct lil_expr {
    struct expr_node *nodes;
    uint32_t nnodes;
    uint32_t top; /* the root node */
    struct expr_name *names;
    uint32_t nnames;
    char *pool;
    size_t pool_len;
};

/* A template: literal and expression segments in order. */
struct tmpl_seg {
    struct lil_expr *e; /* NULL for literal text */
    size_t off, len;    /* literal text, or the text between ${ and } */
};

struct lil_tmpl {
    char *text; /* copy of the source (segments point into it) */
    size_t len;
    struct tmpl_seg *segs;
    size_t nsegs;
    size_t nexprs;
};

/* Lex text[start..end) (offsets stay relative to text).  LIL_E_SPEC with
 * err filled, or LIL_E_NOMEM.  lil__expr_lexed_free releases the output. */
lil_status lil__expr_lex(const struct lil_env *env, const char *text, size_t start,
                         size_t end, struct expr_lexed *out, struct lil_expr_err *err);
void lil__expr_lexed_free(const struct lil_env *env, struct expr_lexed *lx);

/* Parse text[start..end) as one expression; offsets relative to text. */
lil_status lil__expr_parse_at(const struct lil_env *env, const char *text, size_t start,
                              size_t end, struct lil_expr **out,
                              struct lil_expr_err *err);

/* Fill err: offset and head followed by src[0..len) made printable (valid
 * UTF-8 kept, invalid bytes and control characters escaped) and cut with
 * "..." to fit the message. */
void lil__expr_seterr(struct lil_expr_err *err, size_t off, const char *head,
                      const char *src, size_t len);

/* JavaScript StringToNumber: Number(s) for a string. */
double lil__js_str_to_num(const char *s, size_t len);

/* Compare as JavaScript compares strings (UTF-16 code units): <0, 0, >0. */
int lil__utf16_cmp(const char *a, size_t alen, const char *b, size_t blen);

/* Length in UTF-16 code units (JavaScript's .length). */
size_t lil__utf16_len(const char *s, size_t len);

/* Drop what was added to ev->scratch after mark (values there die). */
void lil__eval_truncate(struct lil_eval *ev, size_t mark);

/* Append s[0..len) to b; s may point into b itself. */
lil_status lil__buf_add_aliased(struct lil_buf *b, const char *s, size_t len);

#endif
