/*
 * expr_parse.c -- the parser of the expression language (docs/loopspec.md):
 * precedence climbing over the token array into the compact AST of
 * expr_ast.h, plus guard parsing and the reference walk.
 *
 *   expr    := unary ( BINOP expr' )*     all binary operators left-assoc.
 *   unary   := ( "!" | "not" | "-" ) unary | primary
 *   primary := NUMBER | STRING | true | false | null
 *            | IDENT ( "." MEMBER )*      MEMBER: identifier or true/false/null
 *            | "(" expr ")"
 *
 * Levels, low to high: || / or; && / and; == !=; < <= > >= in; + -; * / %.
 *
 * Bounds: the AST is at most LIL_EXPR_MAX_DEPTH high and parentheses plus
 * prefix operators nest at most LIL_EXPR_MAX_DEPTH deep; beyond either the
 * parse fails with "Expression too deeply nested".  The parser's own
 * recursion is therefore bounded too (a few frames per nesting level).
 * Text longer than LIL_EXPR_MAX_LEN is refused before lexing.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "lang/expr_ast.h"

struct parser {
    const char *text;
    size_t start, end; /* the expression text, for messages */
    const struct expr_tok *toks;
    size_t pos;
    const char *pool;
    struct lil_expr *e; /* nodes and names are preallocated */
    unsigned depth;
    struct lil_expr_err *err;
};

static lil_status fail(struct parser *p, size_t off, const char *head)
{
    lil__expr_seterr(p->err, off, head, p->text + p->start, p->end - p->start);
    return LIL_E_SPEC;
}

/* The expression is nothing but blanks: say so, at its `${` when it has
 * one (a template's or guard's), instead of an unexpected end. */
static lil_status fail_empty(struct parser *p)
{
    bool braced =
        p->start >= 2 && p->text[p->start - 2] == '$' && p->text[p->start - 1] == '{';

    if (braced)
        lil__expr_seterr(p->err, p->start - 2,
                         "empty expression `${}`: write an expression between the "
                         "braces",
                         "", 0);
    else
        lil__expr_seterr(p->err, p->start, "empty expression: write an expression", "",
                         0);
    return LIL_E_SPEC;
}

static bool is_blank(const struct parser *p)
{
    for (size_t i = p->start; i < p->end; i++) {
        char c = p->text[i];

        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return false;
    }
    return true;
}

static const struct expr_tok *peek(const struct parser *p)
{
    return &p->toks[p->pos];
}

static const struct expr_tok *next(struct parser *p)
{
    const struct expr_tok *t = &p->toks[p->pos];

    if (t->kind != TK_END)
        p->pos++;
    return t;
}

static lil_status too_deep(struct parser *p, size_t off)
{
    return fail(p, off, "Expression too deeply nested in expression: ");
}

/* Append a node; its height comes from its children (a, b when given). */
static lil_status add_node(struct parser *p, uint8_t op, uint32_t off, uint32_t a,
                           uint32_t b, unsigned nkids, uint32_t *out)
{
    struct lil_expr *e = p->e;
    struct expr_node *n = &e->nodes[e->nnodes];
    unsigned h = 0;

    if (nkids >= 1)
        h = e->nodes[a].height;
    if (nkids >= 2 && e->nodes[b].height > h)
        h = e->nodes[b].height;
    if (h + 1 > LIL_EXPR_MAX_DEPTH)
        return too_deep(p, off);
    memset(n, 0, sizeof(*n));
    n->op = op;
    n->off = off;
    n->a = a;
    n->b = b;
    n->height = (uint16_t)(h + 1);
    *out = e->nnodes++;
    return LIL_OK;
}

static uint32_t add_name(struct parser *p, const struct expr_tok *t)
{
    struct expr_name *nm = &p->e->names[p->e->nnames];

    nm->off = t->str;
    nm->len = t->len;
    return p->e->nnames++;
}

static uint8_t classify_root(const char *name)
{
    static const char *const roots[] = {"state", "inputs", "env", "meta", "iteration"};
    static const uint8_t kinds[] = {R_STATE, R_INPUTS, R_ENV, R_META, R_ITERATION};

    for (size_t k = 0; k < sizeof(kinds); k++) {
        if (strcmp(roots[k], name) == 0)
            return kinds[k];
    }
    return R_OTHER;
}

static bool is_member(uint8_t kind)
{
    return kind == TK_IDENT || kind == TK_TRUE || kind == TK_FALSE || kind == TK_NULL;
}

static lil_status parse_ref(struct parser *p, const struct expr_tok *root,
                            uint32_t *out)
{
    uint32_t first = add_name(p, root), count = 1;
    lil_status rc;

    while (peek(p)->kind == TK_DOT) {
        const struct expr_tok *m;
        next(p);
        m = next(p);
        if (!is_member(m->kind))
            return fail(p, m->off, "Expected member name after '.' in: ");
        add_name(p, m);
        count++;
    }
    rc = add_node(p, N_REF, root->off, first, count, 0, out);
    if (rc == LIL_OK)
        p->e->nodes[*out].root = classify_root(p->pool + root->str);
    return rc;
}

static lil_status parse_binary(struct parser *p, int minprec, uint32_t *out);

static lil_status parse_paren(struct parser *p, const struct expr_tok *open,
                              uint32_t *out);

/* Is token t the name of the language's one function, followed by '('? */
static bool is_call(const struct parser *p, const struct expr_tok *t)
{
    return t->len == 3 && memcmp(p->pool + t->str, "shq", 3) == 0 &&
           peek(p)->kind == TK_LPAREN;
}

/* `shq(expr)`, lil's one function.  Any other name before '(' is read as a
 * reference, so the '(' is a trailing token, as in the reference. */
static lil_status parse_call(struct parser *p, const struct expr_tok *name,
                             uint32_t *out)
{
    const struct expr_tok *open = next(p);
    uint32_t arg;
    lil_status rc = parse_paren(p, open, &arg);

    if (rc != LIL_OK)
        return rc;
    return add_node(p, N_SHQ, name->off, arg, 0, 1, out);
}

static lil_status parse_paren(struct parser *p, const struct expr_tok *open,
                              uint32_t *out)
{
    lil_status rc;

    if (++p->depth > LIL_EXPR_MAX_DEPTH)
        return too_deep(p, open->off);
    rc = parse_binary(p, 1, out);
    if (rc != LIL_OK)
        return rc;
    if (peek(p)->kind != TK_RPAREN)
        return fail(p, peek(p)->off, "Expected ) in expression: ");
    next(p);
    p->depth--;
    return LIL_OK;
}

static lil_status parse_primary(struct parser *p, uint32_t *out)
{
    const struct expr_tok *t = next(p);
    lil_status rc;

    switch (t->kind) {
    case TK_NUM:
        rc = add_node(p, N_NUM, t->off, 0, 0, 0, out);
        if (rc == LIL_OK)
            p->e->nodes[*out].num = t->num;
        return rc;
    case TK_STR:
        return add_node(p, N_STR, t->off, t->str, t->len, 0, out);
    case TK_TRUE:
        return add_node(p, N_TRUE, t->off, 0, 0, 0, out);
    case TK_FALSE:
        return add_node(p, N_FALSE, t->off, 0, 0, 0, out);
    case TK_NULL:
        return add_node(p, N_NULL, t->off, 0, 0, 0, out);
    case TK_IDENT:
        if (is_call(p, t))
            return parse_call(p, t, out);
        return parse_ref(p, t, out);
    case TK_LPAREN:
        return parse_paren(p, t, out);
    default:
        if (t->kind == TK_END && is_blank(p))
            return fail_empty(p);
        return fail(p, t->off, "Unexpected token in expression: ");
    }
}

static lil_status parse_unary(struct parser *p, uint32_t *out)
{
    const struct expr_tok *t = peek(p);
    uint32_t kid;
    lil_status rc;

    if (t->kind != TK_NOT && t->kind != TK_SUB)
        return parse_primary(p, out);
    next(p);
    if (++p->depth > LIL_EXPR_MAX_DEPTH)
        return too_deep(p, t->off);
    rc = parse_unary(p, &kid);
    if (rc != LIL_OK)
        return rc;
    p->depth--;
    return add_node(p, t->kind == TK_NOT ? N_NOT : N_NEG, t->off, kid, 0, 1, out);
}

/* Precedence (1 lowest) and node of a binary operator token; 0 if none. */
static int binary_op(uint8_t kind, uint8_t *op)
{
    static const struct {
        uint8_t tk, op;
        int prec;
    } ops[] = {{TK_OR, N_OR, 1},   {TK_AND, N_AND, 2}, {TK_EQ, N_EQ, 3},
               {TK_NE, N_NE, 3},   {TK_LT, N_LT, 4},   {TK_LE, N_LE, 4},
               {TK_GT, N_GT, 4},   {TK_GE, N_GE, 4},   {TK_IN, N_IN, 4},
               {TK_ADD, N_ADD, 5}, {TK_SUB, N_SUB, 5}, {TK_MUL, N_MUL, 6},
               {TK_DIV, N_DIV, 6}, {TK_MOD, N_MOD, 6}};

    for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
        if (ops[k].tk == kind) {
            *op = ops[k].op;
            return ops[k].prec;
        }
    }
    return 0;
}

static lil_status parse_binary(struct parser *p, int minprec, uint32_t *out)
{
    uint32_t left = 0, right = 0; /* parse_unary leaves left unset when it fails */
    lil_status rc = parse_unary(p, &left);

    while (rc == LIL_OK) {
        uint8_t op = 0;
        int prec = binary_op(peek(p)->kind, &op);
        if (prec == 0 || prec < minprec)
            break;
        next(p);
        rc = parse_binary(p, prec + 1, &right);
        if (rc == LIL_OK)
            rc = add_node(p, op, p->e->nodes[left].off, left, right, 2, &left);
    }
    *out = left;
    return rc;
}

/* One block: the struct, nodes[ntok], names[ntok], the pool. */
static struct lil_expr *expr_alloc(const struct lil_env *env, size_t ntok,
                                   size_t pool_len)
{
    size_t nodes_at = (sizeof(struct lil_expr) + 7) & ~(size_t)7;
    size_t names_at = nodes_at + ntok * sizeof(struct expr_node);
    size_t pool_at = names_at + ntok * sizeof(struct expr_name);
    char *block = lil__malloc(env, pool_at + pool_len + 1);
    struct lil_expr *e = (struct lil_expr *)(void *)block;

    if (!e)
        return NULL;
    memset(e, 0, sizeof(*e));
    e->nodes = (struct expr_node *)(void *)(block + nodes_at);
    e->names = (struct expr_name *)(void *)(block + names_at);
    e->pool = block + pool_at;
    e->pool_len = pool_len;
    return e;
}

static lil_status parse_tokens(const struct lil_env *env, const char *text,
                               size_t start, size_t end, const struct expr_lexed *lx,
                               struct lil_expr **out, struct lil_expr_err *err)
{
    struct parser p;
    struct lil_expr *e = expr_alloc(env, lx->ntok, lx->pool_len);
    uint32_t top = 0;
    lil_status rc;

    if (!e)
        return LIL_E_NOMEM;
    memcpy(e->pool, lx->pool, lx->pool_len);
    memset(&p, 0, sizeof(p));
    p.text = text, p.start = start, p.end = end;
    p.toks = lx->toks, p.pool = lx->pool, p.e = e, p.err = err;
    rc = parse_binary(&p, 1, &top);
    if (rc == LIL_OK && peek(&p)->kind != TK_END)
        rc = fail(&p, peek(&p)->off, "Unexpected trailing tokens in expression: ");
    if (rc != LIL_OK) {
        lil__free(env, e);
        return rc;
    }
    e->top = top;
    *out = e;
    return LIL_OK;
}

lil_status lil__expr_parse_at(const struct lil_env *env, const char *text, size_t start,
                              size_t end, struct lil_expr **out,
                              struct lil_expr_err *err)
{
    struct expr_lexed lx = {NULL, 0, NULL, 0};
    lil_status rc;

    *out = NULL;
    err->offset = 0;
    err->msg[0] = '\0';
    if (end - start > LIL_EXPR_MAX_LEN) {
        char head[96];
        snprintf(head, sizeof(head), "Expression too long (%zu bytes, limit %u)",
                 end - start, (unsigned)LIL_EXPR_MAX_LEN);
        lil__expr_seterr(err, start + LIL_EXPR_MAX_LEN, head, "", 0);
        return LIL_E_SPEC;
    }
    rc = lil__expr_lex(env, text, start, end, &lx, err);
    if (rc != LIL_OK)
        return rc;
    rc = parse_tokens(env, text, start, end, &lx, out, err);
    lil__expr_lexed_free(env, &lx);
    return rc;
}

lil_status lil__expr_parse(const struct lil_env *env, const char *src, size_t len,
                           struct lil_expr **out, struct lil_expr_err *err)
{
    return lil__expr_parse_at(env, src, 0, len, out, err);
}

lil_status lil__guard_parse(const struct lil_env *env, const char *src, size_t len,
                            struct lil_expr **out, struct lil_expr_err *err)
{
    size_t start = 0, end = len;

    lil__js_trim(src, &start, &end);
    if (end - start >= 3 && src[start] == '$' && src[start + 1] == '{' &&
        src[end - 1] == '}') {
        start += 2;
        end -= 1;
    }
    return lil__expr_parse_at(env, src, start, end, out, err);
}

void lil__expr_free(const struct lil_env *env, struct lil_expr *e)
{
    lil__free(env, e); /* one block */
}

static void emit_ref(const struct lil_expr *e, const struct expr_node *n,
                     lil_expr_ref_fn fn, void *ud)
{
    struct lil_expr_ref ref;

    ref.root = e->pool + e->names[n->a].off;
    ref.member = n->b > 1 ? e->pool + e->names[n->a + 1].off : NULL;
    ref.offset = n->off;
    fn(ud, &ref);
}

void lil__expr_refs(const struct lil_expr *e, lil_expr_ref_fn fn, void *ud)
{
    for (uint32_t i = 0; i < e->nnodes; i++) {
        const struct expr_node *n = &e->nodes[i];
        if (n->op == N_REF)
            emit_ref(e, n, fn, ud);
    }
}

/* The references under node i that may give it a string value (the
 * recursion is bounded by the node's height, LIL_EXPR_MAX_DEPTH). */
static void unquoted_refs(const struct lil_expr *e, uint32_t i, lil_expr_ref_fn fn,
                          void *ud)
{
    const struct expr_node *n = &e->nodes[i];

    if (n->op == N_REF) {
        emit_ref(e, n, fn, ud);
    } else if (n->op == N_ADD || n->op == N_AND || n->op == N_OR) {
        unquoted_refs(e, n->a, fn, ud);
        unquoted_refs(e, n->b, fn, ud);
    }
}

void lil__expr_unquoted_refs(const struct lil_expr *e, lil_expr_ref_fn fn, void *ud)
{
    if (e->nnodes)
        unquoted_refs(e, e->top, fn, ud);
}
