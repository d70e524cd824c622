/*
 * state_inputs.c -- the inputs of a run (state.h): the spec's declarations
 * and defaults, the inputs object and NAME=VALUE strings resolved into one
 * object, and the comparison a resumed run makes with the inputs it
 * started with.
 *
 * Resolution checks everything given before it takes anything: the inputs
 * object (an object, only declared names), then each NAME=VALUE string (its
 * form, a declared name, not given twice), then each declared input in the
 * spec's order (its value converted or checked, a required one present).
 * The first problem is the error, so the same call always reports the same
 * one.  Messages show names and values through lil__ir_show (control
 * characters escaped, long ones cut), never the value of an input named
 * like a secret (lil__input_is_secret).
 */
#include <stdint.h>
#include <string.h>

#include "base/err.h"
#include "base/utf8.h"
#include "effects/redact.h"
#include "loop/state.h"
#include "loopspec/values/ident.h"

#define SHOW 96 /* a name or a value in a message */

struct resolve {
    const struct lil_env *env;
    struct lil_err *err;
    const struct lil_ir_spec *ir;
    json_t *given;
    const char *const *pairs;
    size_t npairs;
    bool *nomem; /* set when a message could not show a value */
};

static lil_status nomem(struct lil_err *err)
{
    return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
}

/* s made fit for a message (lil__ir_show: a NAME=VALUE comes from argv and
 * may not be UTF-8). */
static const char *show(const char *s, size_t len, char buf[SHOW])
{
    return lil__ir_show(s, len, buf, SHOW);
}

/* The canonical text of v, shown; "(value)" with *nomem set if it cannot
 * be printed (the caller then reports LIL_E_NOMEM). */
static const char *show_json(const struct lil_env *env, json_t *v, char buf[SHOW],
                             bool *nomem)
{
    struct lil_err e;
    struct lil_buf b;

    lil__buf_init(&b, env, 1 << 20);
    if (lil__json_canon(env, &e, v, &b) != LIL_OK) {
        lil__buf_free(&b);
        *nomem = true;
        return "(value)";
    }
    show((const char *)b.data, b.len, buf);
    lil__buf_free(&b);
    return buf;
}

/* ---- names ---------------------------------------------------------------- */

static const struct lil_ir_input *find_input(const struct lil_ir_spec *ir,
                                             const char *name, size_t len)
{
    for (size_t i = 0; i < ir->ninputs; i++) {
        const char *n = ir->inputs[i].name;
        if (strlen(n) == len && memcmp(n, name, len) == 0)
            return &ir->inputs[i];
    }
    return NULL;
}

/* "a, b, c" (cut with "..."), or "no inputs". */
static const char *declared(const struct lil_ir_spec *ir, char *buf, size_t cap)
{
    size_t o = 0;

    if (!ir->ninputs)
        return "no inputs";
    buf[0] = '\0';
    for (size_t i = 0; i < ir->ninputs && o < cap; i++) {
        int n = snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", ir->inputs[i].name);
        o += n > 0 ? (size_t)n : 0;
    }
    if (o >= cap && cap > 4)
        memcpy(buf + cap - 4, "...", 4);
    return buf;
}

static lil_status unknown(const struct resolve *r, const char *name, size_t len,
                          const char *value)
{
    char nbuf[SHOW], list[160];

    if (lil__redact_name_is_secret(name, len))
        value = "not shown: a secret's";
    return lil__seterr(
        r->err, LIL_E_INVAL, 0, "unknown input '%s' (value %s): the spec declares %s",
        show(name, len, nbuf), value, declared(r->ir, list, sizeof(list)));
}

static lil_status check_given(const struct resolve *r)
{
    const char *k;
    json_t *v;
    char vbuf[SHOW];

    if (!r->given)
        return LIL_OK;
    if (!json_is_object(r->given))
        return lil__seterr(r->err, LIL_E_INVAL, 0,
                           "the inputs are a JSON object of input names, not %s",
                           show_json(r->env, r->given, vbuf, r->nomem));
    json_object_foreach(r->given, k, v)
    {
        if (!find_input(r->ir, k, strlen(k)))
            return unknown(r, k, strlen(k), show_json(r->env, v, vbuf, r->nomem));
    }
    return LIL_OK;
}

/* Length of the name of a NAME=VALUE string, or 0 when it is none. */
static size_t pair_name_len(const char *p)
{
    const char *eq = p ? strchr(p, '=') : NULL;

    return eq ? (size_t)(eq - p) : 0;
}

static lil_status check_pair(const struct resolve *r, size_t i)
{
    const char *p = r->pairs[i];
    size_t len = pair_name_len(p);
    char nbuf[SHOW], vbuf[SHOW];

    if (!len)
        return lil__seterr(r->err, LIL_E_INVAL, 0, "input '%s' is not NAME=VALUE",
                           p ? show(p, strlen(p), nbuf) : "(null)");
    if (!find_input(r->ir, p, len))
        return unknown(r, p, len, show(p + len + 1, strlen(p + len + 1), vbuf));
    for (size_t j = 0; j < i; j++) {
        if (pair_name_len(r->pairs[j]) == len && memcmp(r->pairs[j], p, len) == 0)
            return lil__seterr(r->err, LIL_E_INVAL, 0,
                               "input '%s' is given twice as NAME=VALUE",
                               show(p, len, nbuf));
    }
    return LIL_OK;
}

/* The VALUE of the NAME=VALUE string for name, or NULL. */
static const char *pair_value(const struct resolve *r, const char *name)
{
    size_t len = strlen(name);

    for (size_t i = 0; i < r->npairs; i++) {
        if (pair_name_len(r->pairs[i]) == len && memcmp(r->pairs[i], name, len) == 0)
            return r->pairs[i] + len + 1;
    }
    return NULL;
}

/* ---- values --------------------------------------------------------------- */

/* What a value of the type is, for "... is not <it>". */
static const char *type_wants(const struct lil_type *t)
{
    switch (t->kind) {
    case LIL_TYPE_STRING:
        return "a string";
    case LIL_TYPE_INT:
        return "an integer";
    case LIL_TYPE_NUMBER:
        return "a number";
    case LIL_TYPE_BOOLEAN:
        return "true or false";
    case LIL_TYPE_LIST:
        return "a JSON array";
    case LIL_TYPE_ENUM:
        return "one of its members";
    default:
        return "JSON text";
    }
}

/* "input 'n' (type int): the value 'five' is not an integer". */
static lil_status mismatch(const struct resolve *r, const struct lil_ir_input *in,
                           const char *value, const char *where)
{
    char tbuf[SHOW];

    if (lil__input_is_secret(in->name))
        value = "(not shown: a secret's)";
    return lil__seterr(r->err, LIL_E_INVAL, 0,
                       "input '%s' (type %s): the value %s%s is not %s", in->name,
                       show(in->type_text.s, strlen(in->type_text.s), tbuf), value,
                       where, type_wants(&in->type));
}

/* A value of the inputs object or a default: taken as it is if it matches
 * the type (docs/loopspec.md, "Ids, names and types"). */
static lil_status check_value(const struct resolve *r, const struct lil_ir_input *in,
                              json_t *v, const char *where)
{
    char vbuf[SHOW];

    if (lil__type_accepts(&in->type, v))
        return LIL_OK;
    return mismatch(r, in, show_json(r->env, v, vbuf, r->nomem), where);
}

/* The text of a NAME=VALUE string as a value of the declared type. */
static lil_status convert_text(const struct resolve *r, const struct lil_ir_input *in,
                               const char *text, json_t **out)
{
    size_t len = strlen(text);
    char tbuf[SHOW], vbuf[SHOW + 2];
    lil_status rc;

    *out = NULL;
    snprintf(vbuf, sizeof(vbuf), "'%s'", show(text, len, tbuf));
    if (in->type.kind == LIL_TYPE_STRING || in->type.kind == LIL_TYPE_ENUM) {
        size_t bad = lil__utf8_invalid_at(text, len);
        if (bad != len) /* the value is not shown: it is not text */
            return lil__seterr(r->err, LIL_E_INVAL, 0,
                               "input '%s': the value is not valid UTF-8 (byte 0x%02x "
                               "at offset %zu)",
                               in->name, (unsigned char)text[bad], bad);
        *out = json_stringn(text, len);
        if (!*out)
            return nomem(r->err);
    } else {
        rc = lil__json_parse(r->env, r->err, LIL_E_INVAL, text, len, JSON_DECODE_ANY,
                             NULL, out);
        if (rc == LIL_E_NOMEM)
            return rc;
        if (rc != LIL_OK)
            return mismatch(r, in, vbuf, "");
    }
    if (lil__type_accepts(&in->type, *out))
        return LIL_OK;
    json_decref(*out);
    *out = NULL;
    return mismatch(r, in, vbuf, "");
}

static lil_status add_value(const struct resolve *r, const struct lil_ir_input *in,
                            json_t *src, json_t *obj)
{
    json_t *c;
    lil_status rc = lil__state_copy_value(src, &c);

    if (rc == LIL_E_TOOBIG)
        return lil__seterr(r->err, rc, 0, "input '%s': the value is nested too deep",
                           in->name);
    if (rc != LIL_OK || json_object_set_new(obj, in->name, c) != 0)
        return nomem(r->err);
    return LIL_OK;
}

static lil_status resolve_one(const struct resolve *r, const struct lil_ir_input *in,
                              json_t *obj)
{
    const char *text = pair_value(r, in->name);
    json_t *src, *conv = NULL;
    char tbuf[SHOW];
    lil_status rc = LIL_OK;

    if (!in->type_ok)
        return lil__seterr(
            r->err, LIL_E_SPEC, 0, "input '%s' has an invalid type '%s'", in->name,
            in->type_text.s ? show(in->type_text.s, strlen(in->type_text.s), tbuf)
                            : "");
    if (text) {
        rc = convert_text(r, in, text, &conv);
        src = conv;
    } else if ((src = json_object_get(r->given, in->name)) != NULL) {
        rc = check_value(r, in, src, " in the inputs object");
    } else if ((src = in->def) != NULL) {
        rc = check_value(r, in, src, " (its default)");
    } else if (in->has_required && in->required) {
        rc =
            lil__seterr(r->err, LIL_E_INVAL, 0,
                        "input '%s' (type %s) is required: it has no default and no "
                        "value was given",
                        in->name, show(in->type_text.s, strlen(in->type_text.s), tbuf));
    }
    if (rc == LIL_OK && src)
        rc = add_value(r, in, src, obj);
    json_decref(conv);
    return rc;
}

lil_status lil__inputs_convert(const struct lil_env *env, struct lil_err *err,
                               const struct lil_ir_spec *ir, const char *name,
                               const char *text, json_t **out)
{
    bool failed = false;
    struct resolve r = {env, err, ir, NULL, NULL, 0, &failed};
    const struct lil_ir_input *in = find_input(ir, name, strlen(name));
    lil_status rc;

    *out = NULL;
    if (!in || !in->type_ok)
        return lil__seterr(err, LIL_E_INVAL, 0, "no input '%s' of a valid type", name);
    rc = convert_text(&r, in, text, out);
    return failed && rc == LIL_OK ? nomem(err) : rc;
}

bool lil__input_is_secret(const char *name)
{
    return lil__redact_name_is_secret(name, strlen(name));
}

static lil_status resolve(const struct resolve *r, json_t *obj)
{
    lil_status rc = check_given(r);

    for (size_t i = 0; i < r->npairs && rc == LIL_OK; i++)
        rc = check_pair(r, i);
    for (size_t i = 0; i < r->ir->ninputs && rc == LIL_OK; i++)
        rc = resolve_one(r, &r->ir->inputs[i], obj);
    return rc;
}

lil_status lil__inputs_resolve(const struct lil_env *env, struct lil_err *err,
                               const struct lil_ir_spec *ir, json_t *given,
                               const char *const *pairs, size_t npairs, json_t **out)
{
    bool failed = false;
    struct resolve r = {env, err, ir, given, pairs, npairs, &failed};
    struct lil_json_scope sc;
    json_t *obj;
    lil_status rc;

    *out = NULL;
    lil__json_begin(&sc, env);
    obj = json_object();
    rc = obj ? resolve(&r, obj) : nomem(err);
    if (lil__json_end(&sc) != LIL_OK || failed)
        rc = nomem(err);
    if (rc != LIL_OK) {
        json_decref(obj);
        return rc;
    }
    *out = obj;
    return LIL_OK;
}

/* ---- comparison ----------------------------------------------------------- */

static bool same(json_t *a, json_t *b)
{
    return a && b ? json_equal(a, b) != 0 : a == b;
}

/* The smallest name (byte order) whose value differs, or NULL. */
static const char *first_difference(json_t *was, json_t *now)
{
    const char *first = NULL, *k;
    json_t *v;

    json_object_foreach(was, k, v)
    {
        if (!same(v, json_object_get(now, k)) && (!first || strcmp(k, first) < 0))
            first = k;
    }
    json_object_foreach(now, k, v)
    {
        if (!json_object_get(was, k) && (!first || strcmp(k, first) < 0))
            first = k;
    }
    return first;
}

lil_status lil__inputs_compare(const struct lil_env *env, struct lil_err *err,
                               json_t *was, json_t *now, const char **name)
{
    const char *first = first_difference(was, now);
    char nbuf[SHOW], wbuf[SHOW], vbuf[SHOW];
    struct lil_json_scope sc;
    bool failed = false;
    json_t *a, *b;
    lil_status rc;

    if (name)
        *name = first;
    if (!first)
        return LIL_OK;
    a = json_object_get(was, first);
    b = json_object_get(now, first);
    lil__json_begin(&sc, env);
    rc = lil__seterr(err, LIL_E_INVAL, 0,
                     "input '%s' changed since the run started: it was %s, now %s",
                     show(first, strlen(first), nbuf),
                     a ? show_json(env, a, wbuf, &failed) : "not given",
                     b ? show_json(env, b, vbuf, &failed) : "not given");
    if (lil__json_end(&sc) != LIL_OK || failed)
        rc = nomem(err);
    return rc;
}
