/*
 * expr_lex.c -- the tokenizer of the expression language (docs/loopspec.md)
 * and the text of parse-error messages.
 *
 * The whole text is tokenized before parsing, as the reference does, so a
 * lexical error anywhere wins over a syntax error earlier in the text.
 * Whitespace is space, TAB, CR, LF.  `(` `)` `.` are tested before
 * numbers (so `.5` is a dot).  A number is a digit followed by digits and
 * dots, converted with JavaScript's Number() (`1.` is 1, `00012` is 12,
 * `1.2.3` is "Invalid number").  Strings take '...' or "..." with \n \t \r
 * and \X -> X.  Identifiers are [A-Za-z_][A-Za-z0-9_]*; `true false null`
 * are literal tokens (still usable as member names: their text is kept),
 * `and or not in` are operators everywhere.  Names of Object.prototype
 * members (constructor, __proto__, ...) are ordinary identifiers here.
 *
 * Messages quote the source text: valid UTF-8 is kept, invalid bytes are
 * shown as \xNN and control characters as \n \t \r or \xNN, so a message
 * is always one printable line; a text too long for the 256-byte message
 * is cut at a character boundary and ends with "...".
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "lang/expr_ast.h"

struct lexer {
    const struct lil_env *env;
    const char *text;
    size_t start, end, i;
    struct expr_lexed *out;
    size_t cap; /* tokens allocated */
    struct lil_expr_err *err;
};

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */

/* The printable form of the character at s into out[8]; *used is the
 * number of bytes of s it stands for.  Returns the length written. */
static size_t printable(const char *s, size_t len, char out[8], size_t *used)
{
    unsigned char c = (unsigned char)s[0];
    uint32_t cp;
    size_t n;

    *used = 1;
    if (c == '\n' || c == '\t' || c == '\r') {
        out[0] = '\\';
        out[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
        return 2;
    }
    if (c >= 0x20 && c < 0x7F) {
        out[0] = (char)c;
        return 1;
    }
    n = c >= 0x80 ? lil__utf8_decode((const unsigned char *)s, len, &cp) : 0;
    if (n) {
        memcpy(out, s, n);
        *used = n;
        return n;
    }
    snprintf(out, 8, "\\x%02X", c);
    return 4;
}

static size_t printable_len(const char *src, size_t len)
{
    char tmp[8];
    size_t total = 0, used;

    for (size_t i = 0; i < len; i += used)
        total += printable(src + i, len - i, tmp, &used);
    return total;
}

void lil__expr_seterr(struct lil_expr_err *err, size_t off, const char *head,
                      const char *src, size_t len)
{
    const size_t cap = sizeof(err->msg) - 1;
    size_t o = strlen(head), used;
    char tmp[8];
    bool all;

    if (o > cap)
        o = cap;
    memcpy(err->msg, head, o);
    err->offset = off;
    all = o + printable_len(src, len) <= cap;
    for (size_t i = 0; i < len; i += used) {
        size_t n = printable(src + i, len - i, tmp, &used);
        if (!all && o + n > cap - 3)
            break;
        memcpy(err->msg + o, tmp, n);
        o += n;
    }
    if (!all && o + 3 <= cap) {
        memcpy(err->msg + o, "...", 3);
        o += 3;
    }
    err->msg[o] = '\0';
}

/* "<head>" + the expression text being lexed. */
static lil_status lex_fail(struct lexer *lx, size_t off, const char *head)
{
    lil__expr_seterr(lx->err, off, head, lx->text + lx->start, lx->end - lx->start);
    return LIL_E_SPEC;
}

/* ------------------------------------------------------------------------ */
/* Tokens                                                                    */

static lil_status push(struct lexer *lx, uint8_t kind, size_t off,
                       struct expr_tok **out)
{
    struct expr_lexed *o = lx->out;

    struct expr_tok *t = lil__grow(lx->env, o->toks, &lx->cap, o->ntok, sizeof(*t), 16);

    if (!t)
        return LIL_E_NOMEM;
    o->toks = t;
    *out = &o->toks[o->ntok++];
    memset(*out, 0, sizeof(**out));
    (*out)->kind = kind;
    (*out)->off = (uint32_t)off;
    return LIL_OK;
}

static bool is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident_char(char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9');
}

static uint8_t keyword(const char *s, size_t n)
{
    static const struct {
        const char *name;
        uint8_t kind;
    } kw[] = {{"true", TK_TRUE}, {"false", TK_FALSE}, {"null", TK_NULL},
              {"and", TK_AND},   {"or", TK_OR},       {"not", TK_NOT},
              {"in", TK_IN}};

    for (size_t k = 0; k < sizeof(kw) / sizeof(kw[0]); k++) {
        if (strlen(kw[k].name) == n && memcmp(kw[k].name, s, n) == 0)
            return kw[k].kind;
    }
    return TK_IDENT;
}

static lil_status lex_ident(struct lexer *lx)
{
    size_t s = lx->i;
    struct expr_tok *t;
    lil_status rc;

    while (lx->i < lx->end && is_ident_char(lx->text[lx->i]))
        lx->i++;
    rc = push(lx, keyword(lx->text + s, lx->i - s), s, &t);
    if (rc != LIL_OK)
        return rc;
    t->str = (uint32_t)lx->out->pool_len;
    t->len = (uint32_t)(lx->i - s);
    memcpy(lx->out->pool + lx->out->pool_len, lx->text + s, t->len);
    lx->out->pool_len += t->len;
    lx->out->pool[lx->out->pool_len++] = '\0';
    return LIL_OK;
}

static lil_status lex_number(struct lexer *lx)
{
    size_t s = lx->i;
    struct expr_tok *t;
    double v;
    lil_status rc;

    while (lx->i < lx->end && ((lx->text[lx->i] >= '0' && lx->text[lx->i] <= '9') ||
                               lx->text[lx->i] == '.'))
        lx->i++;
    v = lil__js_str_to_num(lx->text + s, lx->i - s);
    if (isnan(v)) {
        lil__expr_seterr(lx->err, s, "Invalid number: ", lx->text + s, lx->i - s);
        return LIL_E_SPEC;
    }
    rc = push(lx, TK_NUM, s, &t);
    if (rc == LIL_OK)
        t->num = v;
    return rc;
}

static char unescape(char c)
{
    return c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
}

static lil_status lex_string(struct lexer *lx)
{
    size_t s = lx->i, p = lx->out->pool_len;
    char q = lx->text[lx->i++], *pool = lx->out->pool;
    struct expr_tok *t;
    lil_status rc;

    for (;;) {
        char c;
        if (lx->i >= lx->end)
            return lex_fail(lx, s, "Unterminated string in expression: ");
        c = lx->text[lx->i++];
        if (c == q)
            break;
        if (c == '\\') {
            if (lx->i >= lx->end)
                return lex_fail(lx, s, "Unterminated string in expression: ");
            c = unescape(lx->text[lx->i++]);
        }
        pool[p++] = c;
    }
    rc = push(lx, TK_STR, s, &t);
    if (rc != LIL_OK)
        return rc;
    t->str = (uint32_t)lx->out->pool_len;
    t->len = (uint32_t)(p - lx->out->pool_len);
    pool[p++] = '\0';
    lx->out->pool_len = p;
    return LIL_OK;
}

/* `==` `!=` `<=` `>=` `&&` `||`, then `<` `>` `+` `-` `*` `/` `%` `!`;
 * TK_END if the text at i is no operator. */
static uint8_t operator_at(const char *s, size_t avail, size_t *n)
{
    static const char two[][3] = {"==", "!=", "<=", ">=", "&&", "||"};
    static const uint8_t two_k[] = {TK_EQ, TK_NE, TK_LE, TK_GE, TK_AND, TK_OR};
    static const char one[] = "<>+-*/%!";
    static const uint8_t one_k[] = {TK_LT,  TK_GT,  TK_ADD, TK_SUB,
                                    TK_MUL, TK_DIV, TK_MOD, TK_NOT};
    const char *p;

    for (size_t k = 0; avail >= 2 && k < sizeof(two_k); k++) {
        if (s[0] == two[k][0] && s[1] == two[k][1]) {
            *n = 2;
            return two_k[k];
        }
    }
    p = s[0] ? strchr(one, s[0]) : NULL;
    *n = 1;
    return p ? one_k[p - one] : TK_END;
}

static lil_status lex_other(struct lexer *lx)
{
    char c = lx->text[lx->i], shown[8], head[64];
    struct expr_tok *t;
    size_t n, used;
    uint8_t k;

    if (c == '(' || c == ')' || c == '.') {
        k = c == '(' ? TK_LPAREN : c == ')' ? TK_RPAREN : TK_DOT;
        lx->i++;
        return push(lx, k, lx->i - 1, &t);
    }
    k = operator_at(lx->text + lx->i, lx->end - lx->i, &n);
    if (k != TK_END) {
        lx->i += n;
        return push(lx, k, lx->i - n, &t);
    }
    n = printable(lx->text + lx->i, lx->end - lx->i, shown, &used);
    snprintf(head, sizeof(head), "Unexpected character '%.*s' in expression: ", (int)n,
             shown);
    return lex_fail(lx, lx->i, head);
}

static lil_status lex_token(struct lexer *lx)
{
    char c = lx->text[lx->i];

    if (c >= '0' && c <= '9')
        return lex_number(lx);
    if (c == '\'' || c == '"')
        return lex_string(lx);
    if (is_ident_start(c))
        return lex_ident(lx);
    return lex_other(lx);
}

void lil__expr_lexed_free(const struct lil_env *env, struct expr_lexed *lx)
{
    lil__free(env, lx->toks);
    lil__free(env, lx->pool);
    memset(lx, 0, sizeof(*lx));
}

lil_status lil__expr_lex(const struct lil_env *env, const char *text, size_t start,
                         size_t end, struct expr_lexed *out, struct lil_expr_err *err)
{
    struct lexer lx = {env, text, start, end, start, out, 0, err};
    struct expr_tok *t;
    lil_status rc = LIL_OK;

    memset(out, 0, sizeof(*out));
    /* Every string or name is at most its source bytes plus a NUL. */
    out->pool = lil__malloc(env, 2 * (end - start) + 1);
    if (!out->pool)
        return LIL_E_NOMEM;
    for (;;) {
        while (lx.i < end && (text[lx.i] == ' ' || text[lx.i] == '\t' ||
                              text[lx.i] == '\r' || text[lx.i] == '\n'))
            lx.i++;
        if (lx.i >= end)
            break;
        rc = lex_token(&lx);
        if (rc != LIL_OK)
            break;
    }
    if (rc == LIL_OK)
        rc = push(&lx, TK_END, end, &t);
    if (rc != LIL_OK)
        lil__expr_lexed_free(env, out);
    return rc;
}
