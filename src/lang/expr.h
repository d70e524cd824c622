/*
 * expr.h -- the LoopSpec expression language: guards and templates.
 *
 * docs/loopspec.md ("Expressions and templates") describes it.  A guard (`when`,
 * `until`, `over`, fingerprints) is one expression with a typed result; a
 * template (`cmd`, `prompt`, `url`, on_done values, ...) is literal text
 * with `${expr}` segments and renders to a string.  Parsing builds an AST
 * with the byte offset of every node; the validator walks its references,
 * the runner evaluates it.  A parsed expression is immutable and may be
 * evaluated by many threads at once, each with its own struct lil_eval.
 *
 * Parse errors carry the reference's messages ("Unexpected token in
 * expression: <src>", "Unterminated ${...} in: <src>", ...) and the byte
 * offset of the offending character in the text given to the parser.
 * Nesting is bounded (LIL_EXPR_MAX_DEPTH): deeper input is a parse error,
 * so evaluation recursion is bounded too.
 *
 * One deliberate difference from the reference: lil__tmpl_value gives a
 * template that is exactly one `${expr}` the expression's typed value
 * (on_done.set / append); the reference stores its string form.
 */
#ifndef LIL_LANG_EXPR_H
#define LIL_LANG_EXPR_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "json/json.h"
#include "lang/value.h"

struct lil_env;

#define LIL_EXPR_MAX_DEPTH 64
#define LIL_EXPR_MAX_LEN   (64u << 10) /* longest expression or template text */

struct lil_expr; /* a parsed guard or expression */
struct lil_tmpl; /* a parsed template */

struct lil_expr_err {
    size_t offset; /* byte offset in the parsed text */
    char msg[256]; /* the reference's message (source text may be cut) */
};

/* Parse a bare expression (no ${ }).  LIL_E_SPEC with *err filled, or
 * LIL_E_NOMEM. */
lil_status lil__expr_parse(const struct lil_env *env, const char *src, size_t len,
                           struct lil_expr **out, struct lil_expr_err *err);

/* Parse a guard: trim; if the text is `${...}` (first `${` to the last `}`)
 * strip that once; parse the rest.  Offsets stay relative to src. */
lil_status lil__guard_parse(const struct lil_env *env, const char *src, size_t len,
                            struct lil_expr **out, struct lil_expr_err *err);

void lil__expr_free(const struct lil_env *env, struct lil_expr *e);

/* Parse a template into literal and expression segments. */
lil_status lil__tmpl_parse(const struct lil_env *env, const char *src, size_t len,
                           struct lil_tmpl **out, struct lil_expr_err *err);
void lil__tmpl_free(const struct lil_env *env, struct lil_tmpl *t);

/* Number of ${} segments; true if the template is exactly one `${expr}`
 * with no literal text around it. */
size_t lil__tmpl_nexprs(const struct lil_tmpl *t);
bool lil__tmpl_is_single(const struct lil_tmpl *t);

/* ------------------------------------------------------------------------ */
/* References: every `root.member...` path an expression reads.              */

struct lil_expr_ref {
    const char *root;   /* "state", "item", ... (NUL-terminated, owned by the AST) */
    const char *member; /* first member after the root, or NULL for a bare root */
    size_t offset;      /* byte offset of the root in the parsed text */
};

typedef void (*lil_expr_ref_fn)(void *ud, const struct lil_expr_ref *ref);

/* Call fn for every reference, in source order. */
void lil__expr_refs(const struct lil_expr *e, lil_expr_ref_fn fn, void *ud);
void lil__tmpl_refs(const struct lil_tmpl *t, lil_expr_ref_fn fn, void *ud);

/* Call fn for every reference whose value may reach the rendered text as
 * a string outside shq(...): a ${...} part that is a reference, or a +,
 * && or || over one.  A comparison, negation, arithmetic other than + and
 * anything inside shq(...) never does. */
void lil__expr_unquoted_refs(const struct lil_expr *e, lil_expr_ref_fn fn, void *ud);
void lil__tmpl_unquoted_refs(const struct lil_tmpl *t, lil_expr_ref_fn fn, void *ud);

/* ------------------------------------------------------------------------ */
/* Evaluation                                                                */

struct lil_alias {
    const char *name; /* a reduce alias: `item` or its `as` */
    struct lil_val val;
};

/* What an evaluation may read.  Only these roots exist: a reference to
 * anything else is undefined (the validator refuses such references).
 * NULL objects read as empty. */
struct lil_eval {
    const struct lil_env *env;
    json_t *state, *inputs, *environ, *meta; /* objects or NULL */
    double iteration;
    const struct lil_alias *aliases; /* innermost last; searched first */
    size_t naliases;
    struct lil_buf scratch; /* strings made during one evaluation */
};

/* Set up / tear down an evaluation context (scratch capped at 16 MiB). */
void lil__eval_init(struct lil_eval *ev, const struct lil_env *env);
void lil__eval_free(struct lil_eval *ev);

/* Forget the strings of earlier evaluations (values pointing into scratch
 * become invalid). */
void lil__eval_reset(struct lil_eval *ev);

/* Evaluate.  LIL_OK, LIL_E_NOMEM, or LIL_E_TOOBIG when a string result
 * would exceed the scratch cap.  The value may borrow from ev and e. */
lil_status lil__expr_eval(const struct lil_expr *e, struct lil_eval *ev,
                          struct lil_val *out);

/* Render a template to out (appended): each segment through String(). */
lil_status lil__tmpl_render(const struct lil_tmpl *t, struct lil_eval *ev,
                            struct lil_buf *out);

/* A template as a JSON value: the typed value for a single `${expr}`
 * (lil__val_to_json rules; undefined becomes JSON null), else the rendered
 * string.  New reference in *out, allocated under ev->env; LIL_E_NOMEM when
 * any allocation failed. */
lil_status lil__tmpl_value(const struct lil_tmpl *t, struct lil_eval *ev, json_t **out);

#endif
