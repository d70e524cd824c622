/*
 * expr_eval.c -- evaluation of a parsed expression (docs/loopspec.md), with
 * JavaScript's semantics: strict == / !=, && and || returning an operand,
 * relational operators comparing strings by UTF-16 code units and
 * everything else as numbers, + concatenating as soon as one side is a
 * string (arrays and objects count as their String() form), `in` on
 * arrays (SameValueZero), strings (substring) and objects (keys).
 *
 * References: the root is looked up among the aliases first (innermost,
 * i.e. last, first), then state / inputs / env / meta / iteration; any
 * other root is undefined.  Member access is null-safe; `.length` gives
 * the size of an array and the UTF-16 length of a string; any other member
 * of a non-object is undefined.  A bare root whose object is NULL in the
 * context is undefined (not an empty object).
 *
 * Object.prototype names: lil deliberately accepts identifiers and members
 * named constructor, toString, __proto__, ... as ordinary names; they read
 * as missing keys (undefined) unless the JSON really has such a key.  The
 * reference fails to parse them, a difference lil chooses.  The
 * one place where JavaScript's prototype is visible is `in` on an object:
 * `'toString' in {}` is true (tests/data/expr/vectors.test, 55), so `in` also answers
 * true for the twelve Object.prototype property names.
 *
 * Memory: nothing is allocated except strings, which go to ev->scratch (a
 * capped buffer; LIL_E_TOOBIG beyond).  Because appending may move the
 * buffer, a binary operator remembers a scratch-resident left operand by
 * offset while it evaluates the right one; a node whose result is not a
 * string gives back the scratch its operands used.  The recursion depth is
 * the AST's height, which the parser bounds.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lang/expr_ast.h"

#define SCRATCH_CAP ((size_t)16 << 20)

static const struct lil_val undef_val = {LIL_V_UNDEF, false, 0, NULL, 0, NULL};

static struct lil_val v_num(double n)
{
    struct lil_val v = undef_val;

    v.t = LIL_V_NUM;
    v.n = n;
    return v;
}

static struct lil_val v_bool(bool b)
{
    struct lil_val v = undef_val;

    v.t = LIL_V_BOOL;
    v.b = b;
    return v;
}

static struct lil_val v_str(const char *s, size_t len)
{
    struct lil_val v = undef_val;

    v.t = LIL_V_STR;
    v.s = s ? s : "";
    v.len = len;
    return v;
}

/* ------------------------------------------------------------------------ */
/* Scratch                                                                   */

void lil__eval_init(struct lil_eval *ev, const struct lil_env *env)
{
    memset(ev, 0, sizeof(*ev));
    ev->env = env;
    lil__buf_init(&ev->scratch, env, SCRATCH_CAP);
}

void lil__eval_free(struct lil_eval *ev)
{
    lil__buf_free(&ev->scratch);
}

void lil__eval_reset(struct lil_eval *ev)
{
    lil__buf_reset(&ev->scratch);
}

void lil__eval_truncate(struct lil_eval *ev, size_t mark)
{
    if (mark < ev->scratch.len) {
        ev->scratch.len = mark;
        ev->scratch.data[mark] = '\0';
    }
}

/* 1 + the offset of v's bytes in scratch, or 0 if v is not there. */
static size_t pin(const struct lil_eval *ev, const struct lil_val *v)
{
    uintptr_t p = (uintptr_t)v->s, d = (uintptr_t)ev->scratch.data;

    if (v->t != LIL_V_STR || !ev->scratch.data || p < d || p >= d + ev->scratch.alloc)
        return 0;
    return (size_t)(p - d) + 1;
}

static void unpin(const struct lil_eval *ev, struct lil_val *v, size_t pinned)
{
    if (pinned)
        v->s = (const char *)ev->scratch.data + pinned - 1;
}

/* The string scratch holds from mark to its end. */
static struct lil_val scratch_str(const struct lil_eval *ev, size_t mark)
{
    if (!ev->scratch.data)
        return v_str("", 0);
    return v_str((const char *)ev->scratch.data + mark, ev->scratch.len - mark);
}

/* v as a string value: itself if it is one, else String(v) appended to
 * scratch; `other` (an operand that may live in scratch) stays valid. */
static lil_status to_string(struct lil_eval *ev, struct lil_val *v,
                            struct lil_val *other)
{
    size_t mark = ev->scratch.len, pinned;
    lil_status rc;

    if (v->t == LIL_V_STR)
        return LIL_OK;
    pinned = pin(ev, other);
    rc = lil__val_string(v, &ev->scratch);
    unpin(ev, other, pinned);
    if (rc == LIL_OK)
        *v = scratch_str(ev, mark);
    return rc;
}

/* JavaScript's ToPrimitive: arrays and objects become their String(). */
static lil_status to_primitive(struct lil_eval *ev, struct lil_val *v,
                               struct lil_val *other)
{
    return v->t == LIL_V_JSON ? to_string(ev, v, other) : LIL_OK;
}

/* ------------------------------------------------------------------------ */
/* References                                                                */

static struct lil_val root_value(const struct lil_expr *e, const struct expr_node *n,
                                 const struct lil_eval *ev)
{
    for (size_t k = ev->naliases; k-- > 0;) {
        if (strcmp(ev->aliases[k].name, e->pool + e->names[n->a].off) == 0)
            return ev->aliases[k].val;
    }
    switch (n->root) {
    case R_STATE:
        return lil__val_from_json(ev->state);
    case R_INPUTS:
        return lil__val_from_json(ev->inputs);
    case R_ENV:
        return lil__val_from_json(ev->environ);
    case R_META:
        return lil__val_from_json(ev->meta);
    case R_ITERATION:
        return v_num(ev->iteration);
    default:
        return undef_val;
    }
}

static struct lil_val member(const struct lil_val *v, const char *name, size_t len)
{
    if (v->t == LIL_V_JSON && json_is_object(v->j))
        return lil__val_from_json(json_object_getn(v->j, name, len));
    if (len != 6 || memcmp(name, "length", 6) != 0)
        return undef_val;
    if (v->t == LIL_V_JSON)
        return v_num((double)json_array_size(v->j));
    if (v->t == LIL_V_STR)
        return v_num((double)lil__utf16_len(v->s, v->len));
    return undef_val;
}

static struct lil_val eval_ref(const struct lil_expr *e, const struct expr_node *n,
                               const struct lil_eval *ev)
{
    struct lil_val cur = root_value(e, n, ev);

    for (uint32_t k = 1; k < n->b && cur.t != LIL_V_UNDEF; k++) {
        const struct expr_name *m = &e->names[n->a + k];
        cur = member(&cur, e->pool + m->off, m->len);
    }
    return cur;
}

/* ------------------------------------------------------------------------ */
/* Operators                                                                 */

static lil_status relational(struct lil_eval *ev, uint8_t op, struct lil_val *l,
                             struct lil_val *r, struct lil_val *out)
{
    lil_status rc = to_primitive(ev, l, r);
    double a, b;

    if (rc == LIL_OK)
        rc = to_primitive(ev, r, l);
    if (rc != LIL_OK)
        return rc;
    if (l->t == LIL_V_STR && r->t == LIL_V_STR) {
        int c = lil__utf16_cmp(l->s, l->len, r->s, r->len);
        a = c, b = 0;
    } else {
        a = lil__val_number(l), b = lil__val_number(r);
    }
    switch (op) { /* NaN makes each of them false */
    case N_LT:
        *out = v_bool(a < b);
        break;
    case N_LE:
        *out = v_bool(a <= b);
        break;
    case N_GT:
        *out = v_bool(a > b);
        break;
    default:
        *out = v_bool(a >= b);
        break;
    }
    return LIL_OK;
}

static bool same_value_zero(const struct lil_val *a, const struct lil_val *b)
{
    if (a->t == LIL_V_NUM && b->t == LIL_V_NUM && isnan(a->n) && isnan(b->n))
        return true;
    return lil__val_strict_eq(a, b);
}

static bool proto_name(const char *s, size_t len)
{
    static const char *const names[] = {
        "constructor",      "toString",         "valueOf",
        "hasOwnProperty",   "isPrototypeOf",    "propertyIsEnumerable",
        "toLocaleString",   "__proto__",        "__defineGetter__",
        "__defineSetter__", "__lookupGetter__", "__lookupSetter__"};

    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        if (strlen(names[k]) == len && memcmp(names[k], s, len) == 0)
            return true;
    }
    return false;
}

static bool array_has(json_t *a, const struct lil_val *l)
{
    size_t i;
    json_t *x;

    json_array_foreach(a, i, x)
    {
        struct lil_val xv = lil__val_from_json(x);
        if (same_value_zero(l, &xv))
            return true;
    }
    return false;
}

static lil_status eval_in(struct lil_eval *ev, struct lil_val *l, struct lil_val *r,
                          struct lil_val *out)
{
    lil_status rc = LIL_OK;

    *out = v_bool(false);
    if (r->t == LIL_V_JSON && json_is_array(r->j)) {
        *out = v_bool(array_has(r->j, l));
    } else if (r->t == LIL_V_STR) {
        rc = to_string(ev, l, r);
        if (rc == LIL_OK)
            *out = v_bool(l->len == 0 || memmem(r->s, r->len, l->s, l->len) != NULL);
    } else if (r->t == LIL_V_JSON && l->t != LIL_V_UNDEF && l->t != LIL_V_NULL) {
        rc = to_string(ev, l, r);
        if (rc == LIL_OK)
            *out = v_bool(json_object_getn(r->j, l->s, l->len) != NULL ||
                          proto_name(l->s, l->len));
    }
    return rc;
}

/* String(l) + String(r) at the end of scratch (in place when l is already
 * the last string there). */
static lil_status concat(struct lil_eval *ev, struct lil_val *l, struct lil_val *r,
                         struct lil_val *out)
{
    struct lil_buf *sc = &ev->scratch;
    size_t start = sc->len, lp = pin(ev, l);
    lil_status rc = LIL_OK;

    if (lp && lp - 1 + l->len == sc->len) {
        start = lp - 1;
    } else {
        size_t rp = pin(ev, r);
        rc = lil__val_string(l, sc);
        unpin(ev, r, rp);
    }
    if (rc == LIL_OK)
        rc = lil__val_string(r, sc);
    if (rc == LIL_OK)
        *out = scratch_str(ev, start);
    return rc;
}

static lil_status eval_add(struct lil_eval *ev, struct lil_val *l, struct lil_val *r,
                           struct lil_val *out)
{
    if (l->t == LIL_V_STR || l->t == LIL_V_JSON || r->t == LIL_V_STR ||
        r->t == LIL_V_JSON)
        return concat(ev, l, r, out);
    *out = v_num(lil__val_number(l) + lil__val_number(r));
    return LIL_OK;
}

/* JavaScript's a % b, which is C's fmod: the remainder of a truncated
 * division, with the sign of a (so -4 % 2 is -0). */
static double js_remainder(double a, double b)
{
    return fmod(a, b);
}

static lil_status arith(uint8_t op, double a, double b, struct lil_val *out)
{
    switch (op) {
    case N_SUB:
        *out = v_num(a - b);
        return LIL_OK;
    case N_MUL:
        *out = v_num(a * b);
        return LIL_OK;
    case N_DIV:
        *out = v_num(a / b);
        return LIL_OK;
    default:
        *out = v_num(js_remainder(a, b));
        return LIL_OK;
    }
}

static lil_status apply(struct lil_eval *ev, uint8_t op, struct lil_val *l,
                        struct lil_val *r, struct lil_val *out)
{
    switch (op) {
    case N_EQ:
        *out = v_bool(lil__val_strict_eq(l, r));
        return LIL_OK;
    case N_NE:
        *out = v_bool(!lil__val_strict_eq(l, r));
        return LIL_OK;
    case N_LT:
    case N_LE:
    case N_GT:
    case N_GE:
        if (l->t == LIL_V_NUM && r->t == LIL_V_NUM) {
            *out = v_bool(op == N_LT   ? l->n < r->n
                          : op == N_LE ? l->n <= r->n
                          : op == N_GT ? l->n > r->n
                                       : l->n >= r->n);
            return LIL_OK;
        }
        return relational(ev, op, l, r, out);
    case N_IN:
        return eval_in(ev, l, r, out);
    case N_ADD:
        return eval_add(ev, l, r, out);
    default:
        return arith(op, lil__val_number(l), lil__val_number(r), out);
    }
}

/* Leaves (literals and references) without a call: the common operands
 * of a guard.  False if n is an operator. */
static inline bool eval_leaf(const struct lil_expr *e, const struct expr_node *n,
                             const struct lil_eval *ev, struct lil_val *out)
{
    switch (n->op) {
    case N_REF:
        *out = eval_ref(e, n, ev);
        return true;
    case N_NUM:
        *out = v_num(n->num);
        return true;
    case N_STR:
        *out = v_str(e->pool + n->a, n->b);
        return true;
    case N_TRUE:
    case N_FALSE:
        *out = v_bool(n->op == N_TRUE);
        return true;
    case N_NULL:
        *out = undef_val;
        out->t = LIL_V_NULL;
        return true;
    default:
        return false;
    }
}

static lil_status eval_op(const struct lil_expr *e, const struct expr_node *n,
                          struct lil_eval *ev, struct lil_val *out);

static inline lil_status eval(const struct lil_expr *e, uint32_t i, struct lil_eval *ev,
                              struct lil_val *out)
{
    const struct expr_node *n = &e->nodes[i];

    return eval_leaf(e, n, ev, out) ? LIL_OK : eval_op(e, n, ev, out);
}

static lil_status eval_binary(const struct lil_expr *e, const struct expr_node *n,
                              struct lil_eval *ev, struct lil_val *out)
{
    size_t mark = ev->scratch.len, lp;
    struct lil_val l, r;
    lil_status rc = eval(e, n->a, ev, &l);

    if (rc != LIL_OK)
        return rc;
    lp = pin(ev, &l);
    rc = eval(e, n->b, ev, &r);
    if (rc != LIL_OK)
        return rc;
    unpin(ev, &l, lp);
    rc = apply(ev, n->op, &l, &r, out);
    if (rc == LIL_OK && out->t != LIL_V_STR)
        lil__eval_truncate(ev, mark);
    return rc;
}

/* shq(a): String(a) between single quotes, each ' in it written '\'' --
 * one word for /bin/sh whatever it holds.  Built at the end of scratch,
 * then moved down to where a's own string began. */
static lil_status eval_shq(const struct lil_expr *e, const struct expr_node *n,
                           struct lil_eval *ev, struct lil_val *out)
{
    size_t mark = ev->scratch.len, vp, start, from = 0;
    struct lil_val v, none = undef_val;
    lil_status rc = eval(e, n->a, ev, &v);

    if (rc == LIL_OK)
        rc = to_string(ev, &v, &none);
    if (rc != LIL_OK)
        return rc;
    vp = pin(ev, &v);
    start = ev->scratch.len;
    rc = lil__buf_add(&ev->scratch, "'", 1);
    for (size_t i = 0; rc == LIL_OK && i <= v.len; i++) {
        unpin(ev, &v, vp); /* scratch may have moved */
        if (i < v.len && v.s[i] != '\'')
            continue;
        rc = lil__buf_add(&ev->scratch, v.s + from, i - from);
        unpin(ev, &v, vp);
        if (rc == LIL_OK)
            rc = lil__buf_add(&ev->scratch, i < v.len ? "'\\''" : "'",
                              i < v.len ? 4 : 1);
        from = i + 1;
    }
    if (rc != LIL_OK)
        return rc;
    memmove(ev->scratch.data + mark, ev->scratch.data + start, ev->scratch.len - start);
    lil__eval_truncate(ev, mark + (ev->scratch.len - start));
    *out = scratch_str(ev, mark);
    return LIL_OK;
}

/* An operator node (the parser guarantees the recursion depth). */
static lil_status eval_op(const struct lil_expr *e, const struct expr_node *n,
                          struct lil_eval *ev, struct lil_val *out)
{
    lil_status rc;

    switch (n->op) {
    case N_NOT:
    case N_NEG:
        rc = eval(e, n->a, ev, out);
        if (rc == LIL_OK)
            *out = n->op == N_NOT ? v_bool(!lil__val_truthy(out))
                                  : v_num(-lil__val_number(out));
        return rc;
    case N_SHQ:
        return eval_shq(e, n, ev, out);
    case N_AND:
    case N_OR:
        rc = eval(e, n->a, ev, out);
        if (rc != LIL_OK || lil__val_truthy(out) == (n->op == N_OR))
            return rc;
        return eval(e, n->b, ev, out);
    default:
        return eval_binary(e, n, ev, out);
    }
}

lil_status lil__expr_eval(const struct lil_expr *e, struct lil_eval *ev,
                          struct lil_val *out)
{
    lil_status rc = eval(e, e->top, ev, out);

    if (rc != LIL_OK)
        *out = undef_val;
    return rc;
}
