/*
 * fuzz_expr.c -- libFuzzer target: the expression language (loop/expr.h).
 *
 * The first byte selects what the rest is: 0 a bare expression, 1 a guard,
 * 2 a template (byte % 3).  Every input must parse or fail with
 * LIL_E_SPEC and a clean message; every successful parse is evaluated
 * against a fixed context (state, inputs, env, meta, iteration and two
 * reduce aliases) and checked:
 *
 *   - a parse error has a one-line printable message of < 256 bytes and an
 *     offset inside the text;
 *   - every reference's root is spelled at its offset in the text;
 *   - a template's segments cover its text exactly (literals plus "${",
 *     expression, "}");
 *   - evaluation and rendering give LIL_OK or LIL_E_TOOBIG only;
 *   - lil__val_to_json of a result is undefined or JSON that encodes and
 *     decodes to an equal value; a number's JS text reads back as the same
 *     number; evaluating twice gives the same value;
 *   - a template without ${ renders to its own text.
 *
 * A violation aborts with a message (fuzz_fail) so libFuzzer keeps the
 * input.  Corpus: fuzz/corpus/expr (seeded from tests/data/expr).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "fuzz_common.h"
#include "json/json.h"
#include "lang/expr.h"
#include "lang/expr_ast.h"
#include "lang/value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char ctx_json[] =
    "{\"state\":{\"n\":3,\"status\":\"red\",\"s\":\"h\\u00e9llo "
    "\\ud83d\\ude00\",\"l\":[1,"
    "\"a\",null,[2,[3]],{\"k\":1},true,0.5],\"o\":{\"a\":{\"b\":[1,2]},\"true\":1,\"\":"
    "0,"
    "\"1\":\"one\"},\"z\":0,\"e\":\"\",\"big\":1e300,\"neg\":-7,\"f\":false,\"u\":null}"
    ","
    "\"inputs\":{\"x\":\"a{b}c\",\"n\":\"12\"},\"env\":{\"HOME\":\"/home/u\"},"
    "\"meta\":{\"name\":\"t\",\"runId\":\"r1\"},\"item\":{\"id\":7,\"tags\":[\"x\","
    "\"y\"]},"
    "\"as\":\"q\"}";

static json_t *ctx(void)
{
    static json_t *root;
    if (!root && !(root = json_loads(ctx_json, 0, NULL)))
        fuzz_fail("bad context JSON");
    return root;
}

static void eval_setup(struct lil_eval *ev, struct lil_alias al[2])
{
    json_t *root = ctx();

    lil__eval_init(ev, fuzz_env());
    ev->state = json_object_get(root, "state");
    ev->inputs = json_object_get(root, "inputs");
    ev->environ = json_object_get(root, "env");
    ev->meta = json_object_get(root, "meta");
    ev->iteration = 3;
    al[0].name = "item";
    al[0].val = lil__val_from_json(json_object_get(root, "item"));
    al[1].name = "q";
    al[1].val = lil__val_from_json(json_object_get(root, "as"));
    ev->aliases = al;
    ev->naliases = 2;
}

static void check_error(lil_status rc, const struct lil_expr_err *err, size_t len)
{
    size_t n = strnlen(err->msg, sizeof(err->msg));

    if (rc != LIL_E_SPEC)
        fuzz_fail("parse: unexpected status %s", lil_status_name(rc));
    if (n == 0 || n >= sizeof(err->msg))
        fuzz_fail("parse error without a proper message");
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)err->msg[i] < 0x20 || err->msg[i] == 0x7f)
            fuzz_fail("control character in message: %s", err->msg);
    }
    if (err->offset > len)
        fuzz_fail("error offset %zu past the text (%zu bytes): %s", err->offset, len,
                  err->msg);
}

struct refctx {
    const char *text;
    size_t len;
};

static void check_ref(void *ud, const struct lil_expr_ref *ref)
{
    const struct refctx *rc = ud;
    size_t n = strlen(ref->root);

    if (n == 0 || ref->offset + n > rc->len ||
        memcmp(rc->text + ref->offset, ref->root, n))
        fuzz_fail("reference %s at %zu is not in the text", ref->root, ref->offset);
    if (ref->member && ref->member[0] == '\0')
        fuzz_fail("empty member of %s", ref->root);
}

static void check_value(const struct lil_val *v)
{
    bool undef = false;
    json_t *j = lil__val_to_json(v, &undef), *back;
    char *text, num[32];

    if (!j) {
        if (!undef || v->t != LIL_V_UNDEF)
            fuzz_fail("val_to_json failed for type %d", (int)v->t);
        return;
    }
    text = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
    back = text ? json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL) : NULL;
    if (!back || !json_equal(back, j))
        fuzz_fail("val_to_json gave JSON that does not round-trip: %s",
                  text ? text : "?");
    lil__json_free(text);
    json_decref(back);
    json_decref(j);
    if (v->t == LIL_V_NUM) {
        double x = lil__js_str_to_num(num, lil__num_format(v->n, num));
        if (!(x == v->n || (isnan(x) && isnan(v->n))))
            fuzz_fail("number %.17g formats as %s", v->n, num);
    }
}

/* Evaluate twice: same value (by String() for containers and strings). */
static void check_eval(const struct lil_expr *e, struct lil_eval *ev)
{
    struct lil_val v, w;
    struct lil_buf a, b;
    lil_status rc = lil__expr_eval(e, ev, &v), rc2;

    if (rc == LIL_E_TOOBIG)
        return;
    if (rc != LIL_OK)
        fuzz_fail("eval: status %s", lil_status_name(rc));
    check_value(&v);
    lil__buf_init(&a, fuzz_env(), (size_t)32 << 20);
    lil__buf_init(&b, fuzz_env(), (size_t)32 << 20);
    rc = lil__val_string(&v, &a);
    rc2 = lil__expr_eval(e, ev, &w);
    if (rc2 == LIL_OK)
        rc2 = lil__val_string(&w, &b);
    if (rc == LIL_OK && rc2 == LIL_OK &&
        (v.t != w.t || a.len != b.len || (a.len && memcmp(a.data, b.data, a.len))))
        fuzz_fail("two evaluations differ");
    lil__buf_free(&a);
    lil__buf_free(&b);
}

static void check_segments(const struct lil_tmpl *t)
{
    size_t covered = 0;

    for (size_t i = 0; i < t->nsegs; i++) {
        const struct tmpl_seg *s = &t->segs[i];
        if (s->e && (s->off < 2 || memcmp(t->text + s->off - 2, "${", 2) ||
                     t->text[s->off + s->len] != '}'))
            fuzz_fail("segment %zu is not ${...}", i);
        if (s->off != covered + (s->e ? 2 : 0))
            fuzz_fail("segment %zu does not follow the previous one", i);
        covered = s->off + s->len + (s->e ? 1 : 0);
    }
    if (covered != t->len)
        fuzz_fail("segments cover %zu of %zu bytes", covered, t->len);
}

static void run_template(const char *text, size_t len, struct lil_eval *ev)
{
    struct refctx rc = {text, len};
    struct lil_expr_err err;
    struct lil_tmpl *t = NULL;
    struct lil_buf out;
    json_t *val = NULL;
    lil_status s = lil__tmpl_parse(fuzz_env(), text, len, &t, &err);

    if (s != LIL_OK) {
        check_error(s, &err, len);
        return;
    }
    check_segments(t);
    lil__tmpl_refs(t, check_ref, &rc);
    lil__buf_init(&out, fuzz_env(), (size_t)32 << 20);
    s = lil__tmpl_render(t, ev, &out);
    if (s != LIL_OK && s != LIL_E_TOOBIG)
        fuzz_fail("render: status %s", lil_status_name(s));
    if (s == LIL_OK && lil__tmpl_nexprs(t) == 0 &&
        (out.len != len || (len && memcmp(out.data, text, len))))
        fuzz_fail("a template without ${ does not render to itself");
    s = lil__tmpl_value(t, ev, &val);
    if (s != LIL_OK && s != LIL_E_TOOBIG)
        fuzz_fail("tmpl_value: status %s", lil_status_name(s));
    if (s == LIL_OK && !val)
        fuzz_fail("tmpl_value: no value");
    for (size_t i = 0; i < t->nsegs; i++) {
        if (t->segs[i].e)
            check_eval(t->segs[i].e, ev);
    }
    json_decref(val);
    lil__buf_free(&out);
    lil__tmpl_free(fuzz_env(), t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data + 1;
    size_t len = size ? size - 1 : 0;
    struct lil_alias al[2];
    struct lil_expr_err err;
    struct lil_expr *e = NULL;
    struct lil_eval ev;
    lil_status s;

    if (size == 0)
        return 0;
    eval_setup(&ev, al);
    if (data[0] % 3 == 2) {
        run_template(text, len, &ev);
    } else {
        struct refctx rc = {text, len};
        s = data[0] % 3 == 0 ? lil__expr_parse(fuzz_env(), text, len, &e, &err)
                             : lil__guard_parse(fuzz_env(), text, len, &e, &err);
        if (s != LIL_OK) {
            check_error(s, &err, len);
        } else {
            lil__expr_refs(e, check_ref, &rc);
            check_eval(e, &ev);
            lil__expr_free(fuzz_env(), e);
        }
    }
    lil__eval_free(&ev);
    return 0;
}
