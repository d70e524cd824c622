/*
 * test_state.c -- the state of a running loop and its inputs
 * (src/loop/state.h), on specs built from YAML text: the initial state;
 * every conversion of a NAME=VALUE input and every input error; the
 * comparison of input sets; save with hits and misses; each on_done
 * operation with JavaScript's edge cases (undefined + 1, "3" + 1, a typed
 * "${expr}" against a template, append to a non-array) and the roots an
 * expression reads; all-or-nothing application; snapshot bytes and
 * restore; the fingerprint; and an allocation-failure sweep over every
 * call (LIL_E_NOMEM or the fault-free result, the state unchanged after a
 * failure, nothing leaked).
 */
#include <stdlib.h>
#include <string.h>

#include "faults.h"
#include "loop/state.h"
#include "loopspec/diag.h"
#include "loopspec/node.h"
#include "t.h"

static lil_env *env(void)
{
    static lil_env *e;

    if (!e && lil_env_new(&e) != LIL_OK)
        abort();
    return e;
}

/* ---- specs ---------------------------------------------------------------- */

/* The IR of a spec text; NULL (test failed) on any structural error. */
static struct lil_ir_spec *ir_of(const char *yaml)
{
    struct lil_json_scope sc;
    struct lil_diags d;
    struct lil_doc doc;
    struct lil_ir_spec *ir = NULL;
    lil_status rc;

    memset(&doc, 0, sizeof(doc));
    lil__diags_init(&d, env(), "t.yaml");
    lil__json_begin(&sc, env());
    rc = lil__doc_parse(&doc, env(), "t.yaml", yaml, strlen(yaml), NULL, &d);
    if (rc == LIL_OK && doc.root)
        rc = lil__ir_build_text(env(), doc.root, yaml, strlen(yaml), &d, &ir);
    lil__doc_free(&doc);
    T_CHECK(lil__json_end(&sc) == LIL_OK);
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, "  %s: %s\n", d.v[i].pub.code, d.v[i].pub.message);
    if (rc != LIL_OK || d.nerrors || !ir) {
        fprintf(stderr, "spec does not build:\n%s\n", yaml);
        t_fail();
        lil__ir_free(env(), ir);
        ir = NULL;
    }
    lil__diags_free(&d);
    return ir;
}

/* A spec with these state vars, inputs, one shell step `s1` (its save and
 * on_done), and a fingerprint (NULL: no no_progress). */
static struct lil_ir_spec *spec(const char *vars, const char *inputs, const char *step,
                                const char *fingerprint)
{
    char text[4096], np[512] = "";

    if (fingerprint)
        snprintf(np, sizeof(np), ", no_progress: {fingerprint: '%s', max_repeats: 2}",
                 fingerprint);
    snprintf(text, sizeof(text),
             "loopspec: '0.1'\n"
             "id: t\n"
             "pattern: react\n"
             "meta: {name: tester}\n"
             "inputs: {%s}\n"
             "state: {vars: {%s}}\n"
             "body:\n"
             "  - {id: s1, kind: shell, cmd: 'true'%s%s}\n"
             "terminate: {signal: state-predicate, until: '${iteration > 2}'}\n"
             "caps: {max_iterations: 5%s}\n",
             inputs ? inputs : "", vars ? vars : "", step ? ", " : "", step ? step : "",
             np);
    return ir_of(text);
}

static json_t *parse(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &je);

    if (!v)
        fprintf(stderr, "bad test JSON %s: %s\n", text, je.text);
    return v;
}

/* The canonical text of v (malloc; "" for NULL). */
static char *canon(lil_env *e, json_t *v)
{
    struct lil_buf b;
    struct lil_err err;
    char *s;

    if (!v)
        return strdup("");
    lil__buf_init(&b, e, 1 << 20);
    T_OK(lil__json_canon(e, &err, v, &b));
    s = strdup(b.data ? (const char *)b.data : "");
    lil__buf_free(&b);
    return s;
}

static char *snap(const struct lil_loop_state *st)
{
    struct lil_buf b;
    struct lil_err err;
    char *s;

    lil__buf_init(&b, st->env, 1 << 20);
    T_OK(lil__state_snapshot(st, &err, &b));
    s = strdup(b.data ? (const char *)b.data : "");
    lil__buf_free(&b);
    return s;
}

static void expect_snap(const struct lil_loop_state *st, const char *want)
{
    char *got = snap(st);

    T_EQ_STR(got, want);
    free(got);
}

/* What expressions read besides the state: inputs {who: world}, env
 * {HOME: /home/u}, meta of the spec, iteration 4, alias item = 7. */
struct ctx {
    struct lil_state_ctx cx;
    struct lil_alias alias;
};

static void ctx_init(struct ctx *c, const struct lil_ir_spec *ir)
{
    struct lil_err err;

    memset(c, 0, sizeof(*c));
    c->cx.inputs = parse("{\"who\":\"world\"}");
    c->cx.environ = parse("{\"HOME\":\"/home/u\"}");
    T_OK(lil__state_meta(env(), &err, ir, &c->cx.meta));
    c->cx.iteration = 4;
    c->alias.name = "item";
    c->alias.val.t = LIL_V_NUM;
    c->alias.val.n = 7;
    c->cx.aliases = &c->alias;
    c->cx.naliases = 1;
}

static void ctx_free(struct ctx *c)
{
    json_decref(c->cx.inputs);
    json_decref(c->cx.environ);
    json_decref(c->cx.meta);
}

/* Build a spec with vars and step s1, apply result (JSON text, NULL:
 * undefined) to the initial state, and check the status, the snapshot
 * after (on failure: the initial one, unchanged) and that the message
 * contains msg (when not NULL). */
static void check_step(const char *vars, const char *step, const char *result,
                       lil_status want_rc, const char *want, const char *msg)
{
    struct lil_ir_spec *ir = spec(vars, NULL, step, NULL);
    struct lil_loop_state st;
    struct lil_err err = {0};
    json_t *res = result ? parse(result) : NULL;
    struct ctx c;
    lil_status rc;

    T_REQUIRE(ir);
    ctx_init(&c, ir);
    T_OK(lil__state_init(&st, env(), ir, &err));
    rc = lil__state_apply(&st, &err, &c.cx, &ir->body[0], res);
    if (rc != want_rc)
        fprintf(stderr, "  step {%s}: %s (%s)\n", step, lil_status_name(rc), err.msg);
    T_EQ_I64(rc, want_rc);
    expect_snap(&st, want);
    if (msg)
        T_CONTAINS(err.msg, msg);
    json_decref(res);
    lil__state_free(&st);
    ctx_free(&c);
    lil__ir_free(env(), ir);
}

/* ---- initial state -------------------------------------------------------- */

T_TEST(initial_state)
{
    struct lil_ir_spec *ir = spec(
        "n: {type: int, init: 0}, x: {type: number, init: 2.0},"
        " acc: {type: list, init: []}, cfg: {type: json, init: {b: [1, {c: d}], a: 1}},"
        " z: {type: json, init: null}, u: {type: string},"
        " phase: {type: 'enum[a,b]', init: a}",
        NULL, "on_done: {append: {acc: 1}}", NULL);
    struct lil_loop_state a, b;
    struct lil_err err;
    struct ctx c;

    T_REQUIRE(ir);
    ctx_init(&c, ir);
    T_OK(lil__state_init(&a, env(), ir, &err));
    /* u has no init: undefined, no key; 2.0 is the number 2. */
    expect_snap(&a, "{\"acc\":[],\"cfg\":{\"a\":1,\"b\":[1,{\"c\":\"d\"}]},\"n\":0,"
                    "\"phase\":\"a\",\"x\":2,\"z\":null}");
    T_CHECK(lil__state_get(&a, "u") == NULL);
    T_CHECK(json_is_null(lil__state_get(&a, "z")));
    /* Deep copies: changing one state changes neither the spec nor another. */
    T_OK(lil__state_apply(&a, &err, &c.cx, &ir->body[0], NULL));
    T_OK(lil__state_apply(&a, &err, &c.cx, &ir->body[0], NULL));
    T_OK(lil__state_init(&b, env(), ir, &err));
    T_EQ_I64(json_array_size(lil__state_get(&a, "acc")), 2);
    T_EQ_I64(json_array_size(lil__state_get(&b, "acc")), 0);
    T_EQ_I64(json_array_size(ir->state.vars[2].init), 0);
    lil__state_free(&a);
    lil__state_free(&b);
    lil__state_free(&b); /* twice: harmless */
    ctx_free(&c);
    lil__ir_free(env(), ir);

    ir = spec(NULL, NULL, NULL, NULL); /* no state block */
    T_REQUIRE(ir);
    T_OK(lil__state_init(&a, env(), ir, &err));
    expect_snap(&a, "{}");
    lil__state_free(&a);
    lil__ir_free(env(), ir);
}

/* ---- inputs --------------------------------------------------------------- */

/* Resolve inputs against decls: given object (JSON text or NULL) and
 * pairs; the canonical result or the error message. */
static char *resolve(const char *decls, const char *given, const char *const *pairs,
                     size_t npairs, lil_status *rc)
{
    struct lil_ir_spec *ir = spec(NULL, decls, NULL, NULL);
    struct lil_err err = {0};
    json_t *g = given ? parse(given) : NULL, *out = (json_t *)1;
    char *s;

    if (!ir) {
        json_decref(g);
        *rc = LIL_E_SPEC;
        return strdup("(spec)");
    }
    *rc = lil__inputs_resolve(env(), &err, ir, g, pairs, npairs, &out);
    if (*rc == LIL_OK) {
        s = canon(env(), out);
    } else {
        T_CHECK(out == NULL);
        s = strdup(err.msg);
    }
    json_decref(out);
    json_decref(g);
    lil__ir_free(env(), ir);
    return s;
}

/* One NAME=VALUE for an input x of type `type`: the value stored, or an
 * error whose message contains each of the words of `want` after "!". */
static void convert(const char *type, const char *text, const char *want)
{
    char decl[128], pair[256];
    const char *pairs[1] = {pair};
    lil_status rc;
    char *got;

    snprintf(decl, sizeof(decl), "x: {type: '%s'}", type);
    snprintf(pair, sizeof(pair), "x=%s", text);
    got = resolve(decl, NULL, pairs, 1, &rc);
    if (want[0] != '!') {
        char obj[300];
        snprintf(obj, sizeof(obj), "{\"x\":%s}", want);
        if (rc != LIL_OK || strcmp(got, obj) != 0)
            fprintf(stderr, "  %s '%s'\n", type, text);
        T_EQ_I64(rc, LIL_OK);
        T_EQ_STR(got, obj);
    } else {
        if (rc != LIL_E_INVAL)
            fprintf(stderr, "  %s '%s' -> %s\n", type, text, got);
        T_EQ_I64(rc, LIL_E_INVAL);
        T_CONTAINS(got, "input 'x' (type ");
        T_CONTAINS(got, type);
        T_CONTAINS(got, want + 1);
    }
    free(got);
}

T_TEST(input_conversions)
{
    convert("int", "5", "5");
    convert("int", "-3", "-3");
    convert("int", "5.0", "5");
    convert("int", "1e3", "1000");
    convert("int", " 7 ", "7");
    convert("int", "null", "null"); /* null matches every type */
    convert("int", "5.5", "!the value '5.5' is not an integer");
    convert("int", "five", "!the value 'five' is not an integer");
    convert("int", "", "!the value '' is not an integer");
    convert("int", "true", "!'true' is not an integer");
    convert("int", "\"5\"", "!'\"5\"' is not an integer");
    convert("number", "2.5", "2.5");
    convert("number", "-1", "-1");
    convert("number", "4.0", "4");
    convert("number", "1e2", "100");
    convert("number", "NaN", "!'NaN' is not a number");
    convert("number", "0x10", "!'0x10' is not a number");
    convert("boolean", "true", "true");
    convert("boolean", "false", "false");
    convert("boolean", "yes", "!the value 'yes' is not true or false");
    convert("boolean", "1", "!'1' is not true or false");
    convert("boolean", "True", "!'True' is not true or false");
    convert("string", "hello", "\"hello\"");
    convert("string", "", "\"\"");
    convert("string", "5", "\"5\"");
    convert("string", "a=b", "\"a=b\""); /* the first '=' splits */
    convert("string", "null", "\"null\"");
    convert("list", "[1, \"a\"]", "[1,\"a\"]");
    convert("list", "[]", "[]");
    convert("list", "{}", "!'{}' is not a JSON array");
    convert("list", "1,2", "!'1,2' is not a JSON array");
    convert("json", "{\"b\":1,\"a\":[2.0]}", "{\"a\":[2],\"b\":1}");
    convert("json", "\"text\"", "\"text\"");
    convert("json", "3", "3");
    convert("json", "text", "!'text' is not JSON text");
    convert("enum[a, b|c]", "b", "\"b\"");
    convert("enum[a, b|c]", "c", "\"c\"");
    convert("enum[a, b|c]", "d", "!the value 'd' is not one of its members");
    convert("enum[1,2]", "1", "\"1\"");
    /* Control characters are shown escaped in the message. */
    convert("int", "1\n2", "!'1\\n2' is not an integer");
}

T_TEST(input_defaults_and_sources)
{
    const char *decls =
        "who: {type: string, default: world}, n: {type: int, default: 1},"
        " opt: {type: json}, req: {type: boolean, required: true},"
        " both: {type: int, required: true, default: 9}";
    const char *pairs[] = {"req=true", "n=7"};
    lil_status rc;
    char *got;

    /* Defaults; an optional input without default is absent; a required
     * one with a default takes it. */
    got = resolve(decls, NULL, pairs, 1, &rc);
    T_EQ_I64(rc, LIL_OK);
    T_EQ_STR(got, "{\"both\":9,\"n\":1,\"req\":true,\"who\":\"world\"}");
    free(got);
    /* The object wins over the defaults; NAME=VALUE wins over the object. */
    got = resolve(decls, "{\"n\":3,\"opt\":{\"k\":[1]},\"who\":\"you\",\"req\":false}",
                  pairs, 2, &rc);
    T_EQ_I64(rc, LIL_OK);
    T_EQ_STR(got,
             "{\"both\":9,\"n\":7,\"opt\":{\"k\":[1]},\"req\":true,\"who\":\"you\"}");
    free(got);
    /* null in the object is a value, kept as null. */
    got = resolve(decls, "{\"n\":null,\"req\":true}", NULL, 0, &rc);
    T_EQ_I64(rc, LIL_OK);
    T_EQ_STR(got, "{\"both\":9,\"n\":null,\"req\":true,\"who\":\"world\"}");
    free(got);
    /* No inputs at all. */
    got = resolve(NULL, NULL, NULL, 0, &rc);
    T_EQ_I64(rc, LIL_OK);
    T_EQ_STR(got, "{}");
    free(got);
}

static void input_error(const char *decls, const char *given, const char *const *pairs,
                        size_t npairs, lil_status want, const char *msg)
{
    lil_status rc;
    char *got = resolve(decls, given, pairs, npairs, &rc);

    T_EQ_I64(rc, want);
    T_CONTAINS(got, msg);
    free(got);
}

T_TEST(input_errors)
{
    const char *decls = "who: {type: string, default: world}, n: {type: int},"
                        " req: {type: boolean, required: true}";
    const char *unknown[] = {"req=true", "nmae=x"};
    const char *noeq[] = {"req"};
    const char *noname[] = {"=5"};
    const char *twice[] = {"n=1", "req=true", "n=2"};
    const char *bad_utf8[] = {"req=true", "who=a\xff"};
    const char *bad_int[] = {"req=true", "n=1\xc3"};
    const char *bad_name[] = {"\xfe\xc3\xa9=1"};
    const char *null_pair[] = {NULL};

    input_error(decls, NULL, NULL, 0, LIL_E_INVAL,
                "input 'req' (type boolean) is required: it has no default and no "
                "value was given");
    input_error(decls, NULL, unknown, 2, LIL_E_INVAL,
                "unknown input 'nmae' (value x): the spec declares who, n, req");
    input_error(NULL, NULL, unknown, 1, LIL_E_INVAL,
                "unknown input 'req' (value true): the spec declares no inputs");
    input_error(decls, "{\"req\":true,\"extra\":[1]}", NULL, 0, LIL_E_INVAL,
                "unknown input 'extra' (value [1])");
    input_error(decls, NULL, noeq, 1, LIL_E_INVAL, "input 'req' is not NAME=VALUE");
    input_error(decls, NULL, noname, 1, LIL_E_INVAL, "input '=5' is not NAME=VALUE");
    input_error(decls, NULL, null_pair, 1, LIL_E_INVAL,
                "input '(null)' is not NAME=VALUE");
    input_error(decls, NULL, twice, 3, LIL_E_INVAL, "input 'n' is given twice");
    input_error(decls, NULL, bad_utf8, 2, LIL_E_INVAL,
                "input 'who': the value is not valid UTF-8 (byte 0xff at offset 1)");
    /* Bytes that are not UTF-8 are shown as \xNN. */
    input_error(decls, NULL, bad_int, 2, LIL_E_INVAL,
                "input 'n' (type int): the value '1\\xc3' is not an integer");
    input_error(decls, NULL, bad_name, 1, LIL_E_INVAL, "unknown input '\\xfe\xc3\xa9'");
    input_error(decls, "[1]", NULL, 0, LIL_E_INVAL,
                "the inputs are a JSON object of input names, not [1]");
    /* Values of the object are taken as they are: "5" is not an int. */
    input_error(decls, "{\"req\":true,\"n\":\"5\"}", NULL, 0, LIL_E_INVAL,
                "input 'n' (type int): the value \"5\" in the inputs object is not an "
                "integer");
    input_error(decls, "{\"req\":\"yes\"}", NULL, 0, LIL_E_INVAL,
                "input 'req' (type boolean): the value \"yes\" in the inputs object is "
                "not true or false");
    input_error("l: {type: list, default: 5}", NULL, NULL, 0, LIL_E_INVAL,
                "input 'l' (type list): the value 5 (its default) is not a JSON array");
    input_error("w: {type: weird}", NULL, NULL, 0, LIL_E_SPEC,
                "input 'w' has an invalid type 'weird'");
}

T_TEST(input_compare)
{
    json_t *a = parse("{\"n\":5,\"who\":\"x\",\"l\":[1,2]}");
    json_t *same = parse("{\"l\":[1,2],\"who\":\"x\",\"n\":5}");
    json_t *changed = parse("{\"l\":[1,2],\"who\":\"y\",\"n\":6}");
    json_t *fewer = parse("{\"n\":5,\"who\":\"x\"}");
    json_t *more = parse("{\"n\":5,\"who\":\"x\",\"l\":[1,2],\"a\":true}");
    struct lil_err err = {0};
    const char *name = "?";

    T_OK(lil__inputs_compare(env(), &err, a, same, &name));
    T_CHECK(name == NULL);
    /* The first difference by name: n before who. */
    T_EQ_I64(lil__inputs_compare(env(), &err, a, changed, &name), LIL_E_INVAL);
    T_EQ_STR(name, "n");
    T_EQ_STR(err.msg, "input 'n' changed since the run started: it was 5, now 6");
    T_EQ_I64(lil__inputs_compare(env(), &err, a, fewer, &name), LIL_E_INVAL);
    T_EQ_STR(name, "l");
    T_EQ_STR(err.msg, "input 'l' changed since the run started: it was [1,2], now not "
                      "given");
    T_EQ_I64(lil__inputs_compare(env(), &err, a, more, NULL), LIL_E_INVAL);
    T_EQ_STR(err.msg, "input 'a' changed since the run started: it was not given, now "
                      "true");
    json_decref(a);
    json_decref(same);
    json_decref(changed);
    json_decref(fewer);
    json_decref(more);
}

/* The journaled bytes read back compare equal with a fresh resolution. */
T_TEST(input_journal_round_trip)
{
    struct lil_ir_spec *ir = spec(
        NULL, "n: {type: number}, cfg: {type: json}, who: {type: string}", NULL, NULL);
    const char *pairs[] = {"n=2.0", "cfg={\"z\":1,\"a\":[0.5]}",
                           "who=\xc3\xa9t\xc3\xa9"};
    struct lil_err err;
    struct lil_buf b;
    json_t *first = NULL, *again = NULL, *back = NULL;

    T_REQUIRE(ir);
    T_OK(lil__inputs_resolve(env(), &err, ir, NULL, pairs, 3, &first));
    lil__buf_init(&b, env(), 1 << 16);
    T_OK(lil__json_canon(env(), &err, first, &b));
    T_EQ_STR((const char *)b.data,
             "{\"cfg\":{\"a\":[0.5],\"z\":1},\"n\":2,\"who\":\"été\"}");
    T_OK(lil__json_parse(env(), &err, LIL_E_CORRUPT, (const char *)b.data, b.len,
                         LIL_JSON_CANON_PARSE, NULL, &back));
    T_OK(lil__inputs_resolve(env(), &err, ir, NULL, pairs, 3, &again));
    T_OK(lil__inputs_compare(env(), &err, back, again, NULL));
    lil__buf_free(&b);
    json_decref(first);
    json_decref(again);
    json_decref(back);
    lil__ir_free(env(), ir);
}

/* ---- save ----------------------------------------------------------------- */

T_TEST(save)
{
    const char *vars = "a: {type: json}, b: {type: json, init: old}, c: {type: json},"
                       " d: {type: json, init: 1}";
    const char *res =
        "{\"x\":{\"y\":[10,{\"z\":\"w\"}]},\"n\":null,\"f\":false,\"r\":2.0}";

    /* Hits, and misses overwriting: b and d become undefined. */
    check_step(vars, "save: {a: '$.x.y[1].z', b: '$.missing.deep', c: '$.f', d: '$.n'}",
               res, LIL_OK, "{\"a\":\"w\",\"c\":false}", NULL);
    check_step(
        vars, "save: {a: '$', c: '$.x.y', d: '$.r'}", res, LIL_OK,
        "{\"a\":{\"f\":false,\"n\":null,\"r\":2,\"x\":{\"y\":[10,{\"z\":\"w\"}]}},"
        "\"b\":\"old\",\"c\":[10,{\"z\":\"w\"}],\"d\":2}",
        NULL);
    check_step(vars, "save: {a: '$.x.y.length', c: 'x.y[0]', d: '$.x.y[*]'}", res,
               LIL_OK, "{\"a\":2,\"b\":\"old\",\"c\":10}", NULL);
    /* An undefined result: every path misses. */
    check_step(vars, "save: {b: '$', d: '$.x'}", NULL, LIL_OK, "{}", NULL);
    /* A scalar result. */
    check_step(vars, "save: {a: '$'}", "\"text\"", LIL_OK,
               "{\"a\":\"text\",\"b\":\"old\",\"d\":1}", NULL);
    /* save comes before on_done: incr sees the saved value. */
    check_step(vars, "save: {d: '$.r'}, on_done: {incr: d}", res, LIL_OK,
               "{\"b\":\"old\",\"d\":3}", NULL);
    /* An undeclared var (the validator's bad-binding) is refused here too. */
    check_step(vars, "save: {nope: '$'}", res, LIL_E_SPEC, "{\"b\":\"old\",\"d\":1}",
               "step 's1': save writes undeclared state var 'nope'");
}

/* The state keeps its own copy of a saved value. */
T_TEST(save_copies)
{
    struct lil_ir_spec *ir = spec("a: {type: json}", NULL, "save: {a: '$.o'}", NULL);
    json_t *res = parse("{\"o\":{\"k\":[1]}}");
    struct lil_loop_state st;
    struct lil_err err;

    T_REQUIRE(ir);
    T_OK(lil__state_init(&st, env(), ir, &err));
    T_OK(lil__state_apply(&st, &err, NULL, &ir->body[0], res));
    json_array_append_new(json_object_get(json_object_get(res, "o"), "k"),
                          json_integer(2));
    json_decref(res);
    expect_snap(&st, "{\"a\":{\"k\":[1]}}");
    lil__state_free(&st);
    lil__ir_free(env(), ir);
}

/* ---- on_done -------------------------------------------------------------- */

/* incr of a var that holds `init` (NULL: undefined) gives `want`. */
static void incr(const char *init, const char *want)
{
    char vars[256], snapshot[256];

    if (init)
        snprintf(vars, sizeof(vars), "v: {type: json, init: %s}", init);
    else
        snprintf(vars, sizeof(vars), "v: {type: json}");
    snprintf(snapshot, sizeof(snapshot), "{\"v\":%s}", want);
    check_step(vars, "on_done: {incr: v}", NULL, LIL_OK, snapshot, NULL);
}

T_TEST(incr_js_semantics)
{
    incr(NULL, "null"); /* undefined + 1 = NaN, stored as null */
    incr("null", "1");  /* null + 1 = 1 */
    incr("1", "2");
    incr("-1", "0");
    incr("1.5", "2.5");
    incr("'3'", "\"31\""); /* "3" + 1 concatenates */
    incr("''", "\"1\"");
    incr("true", "2");
    incr("false", "1");
    incr("[1, 2]", "\"1,21\"");
    incr("[]", "\"1\"");
    incr("{a: 1}", "\"[object Object]1\"");
    incr("9007199254740992", "9007199254740992"); /* 2^53 + 1 rounds back */
    /* A second incr after NaN: null + 1 = 1, as a resumed run would see. */
    {
        struct lil_ir_spec *ir =
            spec("v: {type: number}", NULL, "on_done: {incr: v}", NULL);
        struct lil_loop_state st;
        struct lil_err err;

        T_REQUIRE(ir);
        T_OK(lil__state_init(&st, env(), ir, &err));
        T_OK(lil__state_apply(&st, &err, NULL, &ir->body[0], NULL));
        expect_snap(&st, "{\"v\":null}");
        T_OK(lil__state_apply(&st, &err, NULL, &ir->body[0], NULL));
        expect_snap(&st, "{\"v\":1}");
        lil__state_free(&st);
        lil__ir_free(env(), ir);
    }
    check_step("v: {type: int}", "on_done: {incr: nope}", NULL, LIL_E_SPEC, "{}",
               "step 's1': on_done.incr writes undeclared state var 'nope'");
}

T_TEST(set_typed_and_templates)
{
    const char *vars = "n: {type: int, init: 2}, v: {type: json}, w: {type: json},"
                       " l: {type: list, init: [1, [2, 3]]}";

    /* A whole "${expr}" keeps the expression's type (docs/loopspec.md); a template with
     * text around is a string. */
    check_step(vars, "on_done: {set: {v: '${1 > 2}', w: 'is ${1 > 2}'}}", NULL, LIL_OK,
               "{\"l\":[1,[2,3]],\"n\":2,\"v\":false,\"w\":\"is false\"}", NULL);
    check_step(vars, "on_done: {set: {v: '${state.n + 1}', w: '${state.n}${state.n}'}}",
               NULL, LIL_OK, "{\"l\":[1,[2,3]],\"n\":2,\"v\":3,\"w\":\"22\"}", NULL);
    check_step(vars, "on_done: {set: {v: ' ${state.n}', w: '${state.l}'}}", NULL,
               LIL_OK, "{\"l\":[1,[2,3]],\"n\":2,\"v\":\" 2\",\"w\":[1,[2,3]]}", NULL);
    /* undefined, NaN and the infinities are stored as null. */
    check_step(
        vars, "on_done: {set: {v: '${state.nope}', w: '${0 / 0}', n: '${1 / 0}'}}",
        NULL, LIL_OK, "{\"l\":[1,[2,3]],\"n\":null,\"v\":null,\"w\":null}", NULL);
    check_step(vars, "on_done: {set: {v: 'x ${state.nope} ${0/0} ${-1/0}'}}", NULL,
               LIL_OK, "{\"l\":[1,[2,3]],\"n\":2,\"v\":\"x undefined NaN -Infinity\"}",
               NULL);
    /* Non-string values are stored as written, strings inside not rendered. */
    check_step(
        vars, "on_done: {set: {v: {k: '${state.n}', a: [1.0, true]}, w: 5, n: null}}",
        NULL, LIL_OK,
        "{\"l\":[1,[2,3]],\"n\":null,\"v\":{\"a\":[1,true],\"k\":\"${state.n}\"},"
        "\"w\":5}",
        NULL);
    /* Entries apply in order, each seeing the ones before; incr comes first. */
    check_step(vars, "on_done: {incr: n, set: {v: '${state.n}', w: '${state.v * 10}'}}",
               NULL, LIL_OK, "{\"l\":[1,[2,3]],\"n\":3,\"v\":3,\"w\":30}", NULL);
    /* The roots: inputs, env, meta, iteration, a reduce alias. */
    check_step(
        vars,
        "on_done: {set: {v: '${inputs.who}/${env.HOME}/${meta.name}/${meta.version}"
        "/${iteration}/${item}', w: '${item + iteration}'}}",
        NULL, LIL_OK,
        "{\"l\":[1,[2,3]],\"n\":2,\"v\":\"world//home/u/tester/0.1.0/4/7\",\"w\":11}",
        NULL);
    /* No `result` root: a result reaches the state only through save. */
    check_step(vars, "on_done: {set: {v: '${result}'}}", "{\"a\":1}", LIL_OK,
               "{\"l\":[1,[2,3]],\"n\":2,\"v\":null}", NULL);
    check_step(vars, "on_done: {set: {nope: 1}}", NULL, LIL_E_SPEC,
               "{\"l\":[1,[2,3]],\"n\":2}",
               "step 's1': on_done.set writes undeclared state var 'nope'");
    check_step(vars, "on_done: {set: {v: '${foo(}'}}", NULL, LIL_E_SPEC,
               "{\"l\":[1,[2,3]],\"n\":2}",
               "step 's1': on_done.set.v: the template did not parse: ");
}

T_TEST(append)
{
    const char *vars = "acc: {type: list, init: [0]}, n: {type: int, init: 2},"
                       " s: {type: string, init: abc}, o: {type: json, init: {}},"
                       " u: {type: list}, z: {type: list, init: null}";

    check_step(vars, "on_done: {append: {acc: '${state.n}'}}", NULL, LIL_OK,
               "{\"acc\":[0,2],\"n\":2,\"o\":{},\"s\":\"abc\",\"z\":null}", NULL);
    check_step(vars, "on_done: {append: {acc: 'n=${state.n}'}}", NULL, LIL_OK,
               "{\"acc\":[0,\"n=2\"],\"n\":2,\"o\":{},\"s\":\"abc\",\"z\":null}", NULL);
    check_step(vars, "on_done: {append: {acc: {k: [1, '${x}']}}}", NULL, LIL_OK,
               "{\"acc\":[0,{\"k\":[1,\"${x}\"]}],\"n\":2,\"o\":{},\"s\":\"abc\","
               "\"z\":null}",
               NULL);
    /* incr, then set, then append. */
    check_step(vars,
               "on_done: {append: {acc: '${state.n}'}, set: {n: '${state.n * 10}'},"
               " incr: n}",
               NULL, LIL_OK,
               "{\"acc\":[0,30],\"n\":30,\"o\":{},\"s\":\"abc\",\"z\":null}", NULL);
    /* Appending the array to itself pushes a copy, not the array. */
    check_step(vars, "on_done: {append: {acc: '${state.acc}'}}", NULL, LIL_OK,
               "{\"acc\":[0,[0]],\"n\":2,\"o\":{},\"s\":\"abc\",\"z\":null}", NULL);
    /* Not an array: an error naming the step and the var; nothing changes,
     * not even what the entries before it did. */
    check_step(
        vars,
        "save: {n: '$.v'}, on_done: {incr: n, set: {s: x}, append: {acc: 1, u: 2}}",
        "{\"v\":40}", LIL_E_SPEC,
        "{\"acc\":[0],\"n\":2,\"o\":{},\"s\":\"abc\",\"z\":null}",
        "step 's1': on_done.append: state var 'u' is undefined, not an array");
    check_step(vars, "on_done: {append: {s: 1}}", NULL, LIL_E_SPEC,
               "{\"acc\":[0],\"n\":2,\"o\":{},\"s\":\"abc\",\"z\":null}",
               "state var 's' is a string, not an array");
    check_step(vars, "on_done: {append: {o: 1}}", NULL, LIL_E_SPEC,
               "{\"acc\":[0],\"n\":2,\"o\":{},\"s\":\"abc\",\"z\":null}",
               "state var 'o' is an object, not an array");
    check_step(vars, "on_done: {append: {z: 1}}", NULL, LIL_E_SPEC,
               "{\"acc\":[0],\"n\":2,\"o\":{},\"s\":\"abc\",\"z\":null}",
               "state var 'z' is null, not an array");
    check_step(vars, "on_done: {append: {nope: 1}}", NULL, LIL_E_SPEC,
               "{\"acc\":[0],\"n\":2,\"o\":{},\"s\":\"abc\",\"z\":null}",
               "step 's1': on_done.append writes undeclared state var 'nope'");
}

/* A set of "${state.l}" copies the list: appending to one leaves the other. */
T_TEST(values_not_shared)
{
    struct lil_ir_spec *ir =
        spec("l: {type: list, init: [1]}, m: {type: list}", NULL,
             "on_done: {set: {m: '${state.l}'}, append: {m: 2}}", NULL);
    struct lil_loop_state st;
    struct lil_err err;

    T_REQUIRE(ir);
    T_OK(lil__state_init(&st, env(), ir, &err));
    T_OK(lil__state_apply(&st, &err, NULL, &ir->body[0], NULL));
    expect_snap(&st, "{\"l\":[1],\"m\":[1,2]}");
    lil__state_free(&st);
    lil__ir_free(env(), ir);
}

/* A failed step leaves arrays that an earlier append grew in the same step
 * as they were, also when they are shared with the previous state. */
T_TEST(apply_all_or_nothing)
{
    struct lil_ir_spec *ir = spec(
        "a: {type: list, init: [1]}, b: {type: list, init: [2]}, s: {type: string}",
        NULL, "on_done: {append: {a: 10, b: 20, s: 30}}", NULL);
    struct lil_loop_state st;
    struct lil_err err;
    json_t *a;

    T_REQUIRE(ir);
    T_OK(lil__state_init(&st, env(), ir, &err));
    a = lil__state_get(&st, "a");
    T_EQ_I64(lil__state_apply(&st, &err, NULL, &ir->body[0], NULL), LIL_E_SPEC);
    T_CHECK(lil__state_get(&st, "a") == a);
    expect_snap(&st, "{\"a\":[1],\"b\":[2]}");
    lil__state_free(&st);
    lil__ir_free(env(), ir);
}

/* ---- snapshot and restore ------------------------------------------------- */

T_TEST(snapshot_and_restore)
{
    struct lil_ir_spec *ir =
        spec("n: {type: int, init: 1}, s: {type: string, init: \"é\\\"\\n\"},"
             " o: {type: json, init: {b: 0.5, a: [true, null]}},"
             " u: {type: json}",
             NULL, "on_done: {incr: n}", NULL);
    const char *want =
        "{\"n\":1,\"o\":{\"a\":[true,null],\"b\":0.5},\"s\":\"é\\\"\\n\"}";
    struct lil_loop_state st;
    struct lil_err err = {0};
    char *bytes;

    T_REQUIRE(ir);
    T_OK(lil__state_init(&st, env(), ir, &err));
    bytes = snap(&st);
    T_EQ_STR(bytes, want);
    /* Restore: the same state, and the same bytes again. */
    T_OK(lil__state_apply(&st, &err, NULL, &ir->body[0], NULL));
    expect_snap(&st,
                "{\"n\":2,\"o\":{\"a\":[true,null],\"b\":0.5},\"s\":\"é\\\"\\n\"}");
    T_OK(lil__state_restore(&st, &err, bytes, strlen(bytes)));
    expect_snap(&st, want);
    T_OK(lil__state_apply(&st, &err, NULL, &ir->body[0], NULL));
    T_EQ_I64(json_integer_value(lil__state_get(&st, "n")), 2);
    /* Restore normalizes numbers; any key order. */
    T_OK(lil__state_restore(&st, &err, "{\"x\": [1.0, -0.0], \"a\": 1e2}", 28));
    expect_snap(&st, "{\"a\":100,\"x\":[1,0]}");
    /* Not an object, not JSON: LIL_E_INVAL, the state unchanged. */
    T_EQ_I64(lil__state_restore(&st, &err, "[1]", 3), LIL_E_INVAL);
    T_CONTAINS(err.msg, "a state snapshot is a JSON object, not an array");
    T_EQ_I64(lil__state_restore(&st, &err, "{\"a\":", 5), LIL_E_INVAL);
    T_CONTAINS(err.msg, "invalid JSON");
    T_EQ_I64(lil__state_restore(&st, &err, "{\"a\":1,\"a\":2}", 13), LIL_E_INVAL);
    expect_snap(&st, "{\"a\":100,\"x\":[1,0]}");
    free(bytes);
    lil__state_free(&st);
    lil__ir_free(env(), ir);
}

/* ---- fingerprint ---------------------------------------------------------- */

/* The fingerprint of `expr` over a state with these vars ("-": none). */
static void fingerprint(const char *expr, const char *want)
{
    struct lil_ir_spec *ir =
        spec("n: {type: int, init: 3}, o: {type: json, init: {b: [1, 2], a: x}},"
             " s: {type: string, init: hi}, u: {type: json}",
             NULL, NULL, expr);
    struct lil_loop_state st;
    struct lil_err err;
    struct lil_buf b;
    struct ctx c;
    bool has = true;

    T_REQUIRE(ir);
    ctx_init(&c, ir);
    T_OK(lil__state_init(&st, env(), ir, &err));
    lil__buf_init(&b, env(), 1 << 16);
    T_OK(lil__buf_add(&b, "<", 1));
    T_OK(lil__state_fingerprint(&st, &err, &c.cx, &b, &has));
    if (strcmp(want, "-") == 0) {
        T_CHECK(!has);
        T_EQ_I64(b.len, 1);
    } else {
        T_CHECK(has);
        T_EQ_STR((const char *)b.data + 1, want);
    }
    lil__buf_free(&b);
    lil__state_free(&st);
    ctx_free(&c);
    lil__ir_free(env(), ir);
}

T_TEST(fingerprints)
{
    fingerprint(NULL, "-"); /* no caps.no_progress */
    fingerprint("${state.n}", "3");
    fingerprint("state.n * 2", "6");
    fingerprint("${state.s}", "\"hi\"");
    fingerprint("${state.n > 1}", "true");
    /* An object's content counts, in canonical form. */
    fingerprint("${state.o}", "{\"a\":\"x\",\"b\":[1,2]}");
    fingerprint("${state.o.b}", "[1,2]");
    /* undefined is a value of its own: equal misses are no progress */
    fingerprint("${state.u}", "undefined");
    fingerprint("${state.o.zz.y}", "undefined");
    fingerprint("\"undefined\"", "\"undefined\""); /* the string is another */
    fingerprint("${0 / 0}", "NaN");
    fingerprint("${1 / 0}", "Infinity");
    fingerprint("${-1 / 0}", "-Infinity");
    fingerprint("${null}", "null");
    fingerprint("${0.1 + 0.2}", "0.30000000000000004");
    fingerprint("${iteration + item}", "11");
    fingerprint("${state.s + inputs.who}", "\"hiworld\"");
}

T_TEST(fingerprint_unparsed)
{
    struct lil_ir_spec *ir = spec(NULL, NULL, NULL, "${state.x +}");
    struct lil_loop_state st;
    struct lil_err err;
    struct lil_buf b;
    bool has = true;

    T_REQUIRE(ir);
    T_OK(lil__state_init(&st, env(), ir, &err));
    lil__buf_init(&b, env(), 1 << 16);
    T_EQ_I64(lil__state_fingerprint(&st, &err, NULL, &b, &has), LIL_E_SPEC);
    T_CHECK(!has);
    T_CONTAINS(err.msg, "caps.no_progress.fingerprint did not parse: Unexpected token");
    lil__buf_free(&b);
    lil__state_free(&st);
    lil__ir_free(env(), ir);
}

T_TEST(meta)
{
    struct lil_ir_spec *ir =
        ir_of("loopspec: '0.1'\nid: m\npattern: react\n"
              "meta: {description: d}\n"
              "body: [{id: a, kind: shell, cmd: x}]\n"
              "terminate: {signal: oracle, until: '${iteration > 1}'}\n");
    struct lil_err err;
    json_t *m = NULL;
    char *s;

    T_REQUIRE(ir);
    T_OK(lil__state_meta(env(), &err, ir, &m));
    s = canon(env(), m);
    T_EQ_STR(s, "{\"description\":\"d\",\"name\":\"m\",\"version\":\"0.1.0\"}");
    free(s);
    json_decref(m);
    lil__ir_free(env(), ir);
}

/* The runner's guards read the same roots (lil__state_eval_init). */
T_TEST(eval_init)
{
    struct lil_ir_spec *ir = spec("n: {type: int, init: 3}", NULL, NULL, NULL);
    struct lil_loop_state st;
    struct lil_expr_err perr;
    struct lil_expr *e = NULL;
    struct lil_eval ev;
    struct lil_err err;
    struct lil_val v;
    struct ctx c;
    const char *src = "state.n + iteration + item == 14 && inputs.who == 'world'";

    T_REQUIRE(ir);
    ctx_init(&c, ir);
    T_OK(lil__state_init(&st, env(), ir, &err));
    T_OK(lil__expr_parse(env(), src, strlen(src), &e, &perr));
    lil__state_eval_init(&st, &c.cx, &ev);
    T_OK(lil__expr_eval(e, &ev, &v));
    T_CHECK(v.t == LIL_V_BOOL && v.b);
    lil__eval_free(&ev);
    lil__expr_free(env(), e);
    lil__state_free(&st);
    ctx_free(&c);
    lil__ir_free(env(), ir);
}

/* ---- allocation failures -------------------------------------------------- */

/* One call of the module under env e; its status and what it made (a
 * snapshot, a fingerprint, an object) as text in *out.  Each op does its
 * set-up first and arms the allocator (arm) just before the call. */
typedef lil_status (*op_fn)(lil_env *e, const struct lil_ir_spec *ir,
                            struct lil_err *err, char **out);

static struct t_alloc *sweep_alloc; /* the env's allocator */
static unsigned long sweep_k;       /* the allocation that fails; 0: none */

static void arm(void)
{
    if (sweep_k)
        sweep_alloc->fail_at = sweep_alloc->calls + sweep_k;
}

static void disarm(void)
{
    sweep_alloc->fail_at = 0;
}

static const char *const SWEEP_PAIRS[] = {"n=5", "cfg={\"a\":[1,{\"b\":2.0}]}",
                                          "mode=b"};
#define SWEEP_VARS                                                               \
    "n: {type: int, init: 1}, acc: {type: list, init: [{a: 1}]},"                \
    " o: {type: json, init: {k: [1, 2, {x: y}]}}, s: {type: string, init: '3'}," \
    " r: {type: json}, t: {type: json}"
#define SWEEP_INPUTS                                                          \
    "n: {type: int}, cfg: {type: json}, who: {type: string, default: world}," \
    " mode: {type: 'enum[a,b]'}, flag: {type: boolean, default: false}"
#define SWEEP_STEP                                                          \
    "save: {r: '$.out.list', t: '$.none'}, on_done: {incr: s,"              \
    " set: {t: 'n=${state.n}', o: '${state.o}', n: {deep: [1, {x: [2]}]}}," \
    " append: {acc: '${state.r}', r: 'x ${state.n}'}}"

static lil_status op_init(lil_env *e, const struct lil_ir_spec *ir, struct lil_err *err,
                          char **out)
{
    struct lil_loop_state st;
    lil_status rc;

    arm();
    rc = lil__state_init(&st, e, ir, err);
    disarm();
    if (rc == LIL_OK) {
        *out = snap(&st);
        lil__state_free(&st);
    }
    return rc;
}

static lil_status op_inputs(lil_env *e, const struct lil_ir_spec *ir,
                            struct lil_err *err, char **out)
{
    json_t *given = parse("{\"who\":\"me\",\"flag\":true,\"cfg\":[1]}");
    json_t *v = NULL;
    lil_status rc;

    arm();
    rc = lil__inputs_resolve(e, err, ir, given, SWEEP_PAIRS, 3, &v);
    disarm();
    if (rc == LIL_OK)
        *out = canon(e, v);
    json_decref(v);
    json_decref(given);
    return rc;
}

static lil_status op_input_error(lil_env *e, const struct lil_ir_spec *ir,
                                 struct lil_err *err, char **out)
{
    json_t *given = parse("{\"n\":{\"a\":[1,2,3]}}");
    json_t *v = NULL;
    lil_status rc;

    arm();
    rc = lil__inputs_resolve(e, err, ir, given, NULL, 0, &v);
    disarm();
    *out = strdup(err->msg);
    json_decref(v);
    json_decref(given);
    return rc;
}

static lil_status op_compare(lil_env *e, const struct lil_ir_spec *ir,
                             struct lil_err *err, char **out)
{
    json_t *a = parse("{\"n\":{\"a\":[1]},\"m\":1}"), *b = parse("{\"n\":{\"a\":[2]}}");
    lil_status rc;

    (void)ir;
    arm();
    rc = lil__inputs_compare(e, err, a, b, NULL);
    disarm();
    *out = strdup(err->msg);
    json_decref(a);
    json_decref(b);
    return rc;
}

/* Apply step s1 to a fresh state: the snapshot after, which is the one
 * before when the call fails. */
static lil_status apply_with(lil_env *e, const struct lil_ir_spec *ir,
                             struct lil_err *err, char **out, const char *result)
{
    json_t *res = parse(result);
    struct lil_loop_state st;
    lil_status rc;
    char *before;

    T_OK(lil__state_init(&st, e, ir, err));
    before = snap(&st);
    arm();
    rc = lil__state_apply(&st, err, NULL, &ir->body[0], res);
    disarm();
    *out = snap(&st);
    if (rc != LIL_OK)
        T_EQ_STR(*out, before);
    if (rc != LIL_OK && rc != LIL_E_NOMEM) {
        free(*out);
        *out = strdup(err->msg);
    }
    free(before);
    lil__state_free(&st);
    json_decref(res);
    return rc;
}

static lil_status op_apply(lil_env *e, const struct lil_ir_spec *ir,
                           struct lil_err *err, char **out)
{
    return apply_with(e, ir, err, out, "{\"out\":{\"list\":[1,\"two\",{\"3\":[4]}]}}");
}

static lil_status op_restore(lil_env *e, const struct lil_ir_spec *ir,
                             struct lil_err *err, char **out)
{
    const char *text = "{\"b\":[1,{\"c\":[2.5,\"x\"]}],\"a\":\"y\"}";
    struct lil_loop_state st;
    lil_status rc;
    char *before;

    T_OK(lil__state_init(&st, e, ir, err));
    before = snap(&st);
    arm();
    rc = lil__state_restore(&st, err, text, strlen(text));
    disarm();
    *out = snap(&st);
    if (rc != LIL_OK)
        T_EQ_STR(*out, before);
    free(before);
    lil__state_free(&st);
    return rc;
}

static lil_status op_fingerprint(lil_env *e, const struct lil_ir_spec *ir,
                                 struct lil_err *err, char **out)
{
    struct lil_loop_state st;
    struct lil_buf b;
    bool has = false;
    lil_status rc;

    T_OK(lil__state_init(&st, e, ir, err));
    lil__buf_init(&b, e, 1 << 16);
    arm();
    rc = lil__state_fingerprint(&st, err, NULL, &b, &has);
    disarm();
    if (rc == LIL_OK)
        *out = strdup(has && b.data ? (const char *)b.data : "(none)");
    else
        T_EQ_I64(b.len, 0);
    lil__buf_free(&b);
    lil__state_free(&st);
    return rc;
}

static lil_status op_snapshot(lil_env *e, const struct lil_ir_spec *ir,
                              struct lil_err *err, char **out)
{
    struct lil_loop_state st;
    struct lil_buf b;
    lil_status rc;

    T_OK(lil__state_init(&st, e, ir, err));
    lil__buf_init(&b, e, 1 << 16);
    arm();
    rc = lil__state_snapshot(&st, err, &b);
    disarm();
    if (rc == LIL_OK)
        *out = strdup(b.data ? (const char *)b.data : "");
    else
        T_EQ_I64(b.len, 0);
    lil__buf_free(&b);
    lil__state_free(&st);
    return rc;
}

static lil_status op_meta(lil_env *e, const struct lil_ir_spec *ir, struct lil_err *err,
                          char **out)
{
    json_t *m = NULL;
    lil_status rc;

    arm();
    rc = lil__state_meta(e, err, ir, &m);
    disarm();
    if (rc == LIL_OK)
        *out = canon(e, m);
    json_decref(m);
    return rc;
}

/* Run op with allocation k failing, for every k: LIL_E_NOMEM when one
 * failed, else the fault-free status and output; nothing live after.  The
 * op makes at least `least` allocations (printing JSON makes one: the
 * text's buffer). */
static void sweep(const char *what, const struct lil_ir_spec *ir, op_fn op,
                  unsigned long least)
{
    struct lil_err err = {0};
    char *want = NULL;
    lil_status want_rc = LIL_OK;
    unsigned long k;

    for (k = 0; k < 100000; k++) {
        struct t_alloc a = {0};
        lil_env *e = NULL;
        char *got = NULL;
        lil_status rc;

        T_REQUIRE(lil_env_new(&e) == LIL_OK && t_alloc_install(e, &a) == LIL_OK);
        sweep_alloc = &a;
        sweep_k = k;
        rc = op(e, ir, &err, &got);
        if (k == 0) {
            want_rc = rc, want = got, got = NULL;
        } else if (rc != (a.failed ? LIL_E_NOMEM : want_rc)) {
            fprintf(stderr, "  %s: allocation %lu: %s (%s)\n", what, k,
                    lil_status_name(rc), err.msg);
            t_fail();
        } else if (rc == LIL_E_NOMEM) {
            T_CONTAINS(err.msg, "out of memory");
        } else {
            T_EQ_STR(got, want);
        }
        free(got);
        lil_env_free(e);
        T_EQ_I64(a.live, 0);
        if (k && !a.failed)
            break;
    }
    free(want);
    printf("  %s: allocations 1..%lu failed in turn\n", what, k - 1);
    T_CHECK(k > least);
}

T_TEST(allocation_failures)
{
    struct lil_ir_spec *ir = spec(SWEEP_VARS, SWEEP_INPUTS, SWEEP_STEP, "${state.o}");
    struct lil_ir_spec *bad = spec(SWEEP_VARS, SWEEP_INPUTS,
                                   "save: {acc: '$.out'}, on_done: {incr: n, set: {s: "
                                   "'${state.o}'}, append: {acc: 1}}",
                                   NULL);

    T_REQUIRE(ir && bad);
    sweep("init", ir, op_init, 2);
    sweep("inputs", ir, op_inputs, 2);
    sweep("inputs error", ir, op_input_error, 2);
    sweep("inputs compare", ir, op_compare, 1);
    sweep("apply", ir, op_apply, 2);
    sweep("apply fails", bad, op_apply, 2);
    sweep("snapshot", ir, op_snapshot, 1);
    sweep("restore", ir, op_restore, 2);
    sweep("fingerprint", ir, op_fingerprint, 1);
    sweep("meta", ir, op_meta, 2);
    lil__ir_free(env(), ir);
    lil__ir_free(env(), bad);
}

T_MAIN()
