/*
 * tmpl.c -- templates (docs/loopspec.md): literal text with ${expr} segments.
 *
 * Scanning: text is literal up to the two characters `${`; the matching
 * `}` is found by counting `{` and `}`, skipping quoted strings ('...' or
 * "...", a backslash skips the next character inside them).  No closing
 * brace is "Unterminated ${...} in: <template>".  The text between is
 * parsed as an expression (its errors propagate, with offsets in the
 * template).  A `$` not followed by `{` is literal; there is no escape for
 * a literal `${`.
 *
 * Rendering converts each segment with String() and concatenates.  A
 * render uses ev->scratch only temporarily: it gives back what each
 * segment used, so values the caller holds stay valid.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "lang/expr_ast.h"

#define TMPL_VALUE_CAP ((size_t)16 << 20)

/* Index of the `}` closing the ${ whose body starts at i, or len. */
static size_t find_close(const char *s, size_t len, size_t i)
{
    int depth = 1;

    for (; i < len; i++) {
        char c = s[i];
        if (c == '\'' || c == '"') {
            for (i++; i < len && s[i] != c; i++) {
                if (s[i] == '\\')
                    i++;
            }
            if (i >= len)
                break;
        } else if (c == '{') {
            depth++;
        } else if (c == '}' && --depth == 0) {
            return i;
        }
    }
    return len;
}

static lil_status add_seg(const struct lil_env *env, struct lil_tmpl *t, size_t *cap,
                          struct lil_expr *e, size_t off, size_t len)
{
    struct tmpl_seg *s = lil__grow(env, t->segs, cap, t->nsegs, sizeof(*s), 4);

    if (!s)
        return LIL_E_NOMEM;
    t->segs = s;
    s = &t->segs[t->nsegs++];
    s->e = e;
    s->off = off;
    s->len = len;
    t->nexprs += e != NULL;
    return LIL_OK;
}

/* One ${...} at i: parse its body, add it (and the literal before it). */
static lil_status scan_expr(const struct lil_env *env, struct lil_tmpl *t, size_t *cap,
                            size_t lit, size_t i, size_t *next,
                            struct lil_expr_err *err)
{
    size_t close = find_close(t->text, t->len, i + 2);
    struct lil_expr *e = NULL;
    lil_status rc;

    if (close >= t->len) {
        lil__expr_seterr(err, i, "Unterminated ${...} in: ", t->text, t->len);
        return LIL_E_SPEC;
    }
    if (i > lit && (rc = add_seg(env, t, cap, NULL, lit, i - lit)) != LIL_OK)
        return rc;
    rc = lil__expr_parse_at(env, t->text, i + 2, close, &e, err);
    if (rc == LIL_OK && (rc = add_seg(env, t, cap, e, i + 2, close - i - 2)) != LIL_OK)
        lil__expr_free(env, e);
    *next = close + 1;
    return rc;
}

static lil_status scan(const struct lil_env *env, struct lil_tmpl *t,
                       struct lil_expr_err *err)
{
    size_t i = 0, lit = 0, cap = 0;
    lil_status rc;

    while (i < t->len) {
        if (t->text[i] != '$' || i + 1 >= t->len || t->text[i + 1] != '{') {
            i++;
            continue;
        }
        rc = scan_expr(env, t, &cap, lit, i, &i, err);
        if (rc != LIL_OK)
            return rc;
        lit = i;
    }
    if (t->len > lit)
        return add_seg(env, t, &cap, NULL, lit, t->len - lit);
    return LIL_OK;
}

lil_status lil__tmpl_parse(const struct lil_env *env, const char *src, size_t len,
                           struct lil_tmpl **out, struct lil_expr_err *err)
{
    struct lil_tmpl *t;
    lil_status rc;

    *out = NULL;
    err->offset = 0;
    err->msg[0] = '\0';
    if (len > LIL_EXPR_MAX_LEN) {
        char head[96];
        snprintf(head, sizeof(head), "Template too long (%zu bytes, limit %u)", len,
                 (unsigned)LIL_EXPR_MAX_LEN);
        lil__expr_seterr(err, LIL_EXPR_MAX_LEN, head, "", 0);
        return LIL_E_SPEC;
    }
    t = lil__calloc(env, 1, sizeof(*t));
    if (!t)
        return LIL_E_NOMEM;
    t->text = lil__strndup(env, src, len);
    t->len = len;
    rc = t->text ? scan(env, t, err) : LIL_E_NOMEM;
    if (rc != LIL_OK) {
        lil__tmpl_free(env, t);
        return rc;
    }
    *out = t;
    return LIL_OK;
}

void lil__tmpl_free(const struct lil_env *env, struct lil_tmpl *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nsegs; i++)
        lil__expr_free(env, t->segs[i].e);
    lil__free(env, t->segs);
    lil__free(env, t->text);
    lil__free(env, t);
}

size_t lil__tmpl_nexprs(const struct lil_tmpl *t)
{
    return t->nexprs;
}

bool lil__tmpl_is_single(const struct lil_tmpl *t)
{
    return t->nsegs == 1 && t->segs[0].e != NULL;
}

void lil__tmpl_refs(const struct lil_tmpl *t, lil_expr_ref_fn fn, void *ud)
{
    for (size_t i = 0; i < t->nsegs; i++) {
        if (t->segs[i].e)
            lil__expr_refs(t->segs[i].e, fn, ud);
    }
}

void lil__tmpl_unquoted_refs(const struct lil_tmpl *t, lil_expr_ref_fn fn, void *ud)
{
    for (size_t i = 0; i < t->nsegs; i++) {
        if (t->segs[i].e)
            lil__expr_unquoted_refs(t->segs[i].e, fn, ud);
    }
}

lil_status lil__tmpl_render(const struct lil_tmpl *t, struct lil_eval *ev,
                            struct lil_buf *out)
{
    lil_status rc = LIL_OK;

    for (size_t i = 0; i < t->nsegs && rc == LIL_OK; i++) {
        const struct tmpl_seg *s = &t->segs[i];
        size_t mark = ev->scratch.len;
        struct lil_val v;
        if (!s->e) {
            rc = lil__buf_add(out, t->text + s->off, s->len);
            continue;
        }
        rc = lil__expr_eval(s->e, ev, &v);
        if (rc == LIL_OK)
            rc = lil__val_string(&v, out);
        lil__eval_truncate(ev, mark);
    }
    return rc;
}

static lil_status single_value(const struct lil_tmpl *t, struct lil_eval *ev,
                               json_t **out)
{
    size_t mark = ev->scratch.len;
    struct lil_val v;
    bool undef;
    lil_status rc = lil__expr_eval(t->segs[0].e, ev, &v);

    if (rc == LIL_OK) {
        *out = lil__val_to_json(&v, &undef);
        if (undef)
            *out = json_null();
        rc = *out ? LIL_OK : LIL_E_NOMEM;
    }
    lil__eval_truncate(ev, mark);
    return rc;
}

static lil_status rendered_value(const struct lil_tmpl *t, struct lil_eval *ev,
                                 json_t **out)
{
    struct lil_buf b;
    struct lil_val v;
    bool undef;
    lil_status rc;

    lil__buf_init(&b, ev->env, TMPL_VALUE_CAP);
    rc = lil__tmpl_render(t, ev, &b);
    if (rc == LIL_OK) {
        memset(&v, 0, sizeof(v));
        v.t = LIL_V_STR;
        v.s = b.data ? (const char *)b.data : "";
        v.len = b.len;
        *out = lil__val_to_json(&v, &undef);
        rc = *out ? LIL_OK : LIL_E_NOMEM;
    }
    lil__buf_free(&b);
    return rc;
}

/* The value is allocated under ev->env (json.h). */
lil_status lil__tmpl_value(const struct lil_tmpl *t, struct lil_eval *ev, json_t **out)
{
    struct lil_json_scope sc;
    lil_status rc;

    *out = NULL;
    lil__json_begin(&sc, ev->env);
    rc = lil__tmpl_is_single(t) ? single_value(t, ev, out) : rendered_value(t, ev, out);
    if (lil__json_end(&sc) != LIL_OK && rc == LIL_OK) {
        json_decref(*out);
        *out = NULL;
        rc = LIL_E_NOMEM;
    }
    return rc;
}
