/*
 * test_expr.c -- the expression language: every block of the .test files
 * in tests/data/expr (their format is described at the top of each
 * file: expression, guard or template, context, expected value / string /
 * rendering / error message and offset / segments / references), plus the
 * internals that data files cannot reach: number formatting and parsing
 * tables, the JSON mapping, nesting and length limits, messages with
 * invalid UTF-8 and long sources, the scratch cap, scratch reallocation
 * under live operands, allocation failures, and concurrent evaluation.
 */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/env.h"
#include "json/json.h"
#include "lang/expr.h"
#include "lang/expr_ast.h"
#include "lang/value.h"
#include "t.h"

#ifndef T_DATA_DIR
#error "T_DATA_DIR must name tests/data"
#endif

/* ------------------------------------------------------------------------ */
/* Data files                                                                */

#define MAX_KV 16

struct text {
    char *s; /* owned, NUL-terminated */
    size_t len;
};

struct kv {
    char key[24]; /* without a "-json" suffix */
    struct text val;
};

struct block {
    const char *file;
    int line;
    struct kv kv[MAX_KV];
    int n;
};

static int g_blocks; /* blocks checked, over all files */

static void block_fail(const struct block *b, const char *fmt, const char *a,
                       const char *c)
{
    fprintf(stderr, "%s:%d: ", b->file, b->line);
    fprintf(stderr, fmt, a ? a : "(null)", c ? c : "(null)");
    fprintf(stderr, "\n");
    t_fail();
}

static const struct text *get(const struct block *b, const char *key)
{
    for (int i = 0; i < b->n; i++) {
        if (strcmp(b->kv[i].key, key) == 0)
            return &b->kv[i].val;
    }
    return NULL;
}

/* "key: value" or "key-json: \"...\"" into b; false on a malformed line. */
static bool add_line(struct block *b, const char *line)
{
    const char *colon = strstr(line, ": ");
    size_t klen;
    struct kv *kv;

    if (!colon || b->n == MAX_KV)
        return false;
    kv = &b->kv[b->n++];
    klen = (size_t)(colon - line);
    if (klen >= sizeof(kv->key))
        return false;
    memcpy(kv->key, line, klen);
    kv->key[klen] = '\0';
    if (klen > 5 && strcmp(kv->key + klen - 5, "-json") == 0) {
        json_t *j = json_loads(colon + 2, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        if (!json_is_string(j)) {
            json_decref(j);
            return false;
        }
        kv->key[klen - 5] = '\0';
        kv->val.len = json_string_length(j);
        kv->val.s = malloc(kv->val.len + 1);
        memcpy(kv->val.s, json_string_value(j), kv->val.len + 1);
        json_decref(j);
    } else {
        kv->val.s = strdup(colon + 2);
        kv->val.len = strlen(kv->val.s);
    }
    return true;
}

static void block_clear(struct block *b)
{
    for (int i = 0; i < b->n; i++)
        free(b->kv[i].val.s);
    b->n = 0;
}

/* The value described by "result:" (JSON, undefined, NaN, ...) equals v? */
static bool val_matches(const struct lil_val *v, const char *want)
{
    json_t *j;
    bool ok = false;

    if (strcmp(want, "undefined") == 0)
        return v->t == LIL_V_UNDEF;
    if (strcmp(want, "NaN") == 0)
        return v->t == LIL_V_NUM && isnan(v->n);
    if (strcmp(want, "Infinity") == 0 || strcmp(want, "-Infinity") == 0)
        return v->t == LIL_V_NUM && isinf(v->n) && (v->n < 0) == (want[0] == '-');
    if (strcmp(want, "-0") == 0)
        return v->t == LIL_V_NUM && v->n == 0 && signbit(v->n);
    j = json_loads(want, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (!j)
        return false;
    switch (json_typeof(j)) {
    case JSON_NULL:
        ok = v->t == LIL_V_NULL;
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        ok = v->t == LIL_V_BOOL && v->b == json_is_true(j);
        break;
    case JSON_INTEGER:
    case JSON_REAL:
        ok = v->t == LIL_V_NUM && v->n == json_number_value(j) &&
             !signbit(v->n) == !signbit(json_number_value(j));
        break;
    case JSON_STRING:
        ok = v->t == LIL_V_STR && v->len == json_string_length(j) &&
             memcmp(v->s, json_string_value(j), v->len) == 0;
        break;
    default:
        ok = v->t == LIL_V_JSON && json_equal(v->j, j);
        break;
    }
    json_decref(j);
    return ok;
}

/* A printable description of v ("str:abc", "num:1", ...) in buf. */
static const char *describe(const struct lil_val *v, char *buf, size_t cap)
{
    static const char *const names[] = {"undefined", "null", "bool",
                                        "num",       "str",  "json"};
    struct lil_env env;
    struct lil_buf b;

    lil__env_init(&env);
    lil__buf_init(&b, &env, 1 << 20);
    lil__val_string(v, &b);
    snprintf(buf, cap, "%s:%s", names[v->t], b.data ? (const char *)b.data : "");
    lil__buf_free(&b);
    return buf;
}

struct ctx {
    json_t *root;
    struct lil_alias aliases[8];
};

static void ctx_load(const struct block *b, struct ctx *c, struct lil_eval *ev)
{
    const struct text *t = get(b, "ctx");
    json_t *al, *pair;
    size_t i;

    c->root = t ? json_loads(t->s, JSON_ALLOW_NUL, NULL) : json_object();
    if (!c->root) {
        block_fail(b, "bad ctx %s%s", t ? t->s : "", "");
        c->root = json_object();
    }
    ev->state = json_object_get(c->root, "state");
    ev->inputs = json_object_get(c->root, "inputs");
    ev->environ = json_object_get(c->root, "env");
    ev->meta = json_object_get(c->root, "meta");
    ev->iteration = json_number_value(json_object_get(c->root, "iteration"));
    al = json_object_get(c->root, "aliases");
    json_array_foreach(al, i, pair)
    {
        if (i >= 8)
            break;
        c->aliases[i].name = json_string_value(json_array_get(pair, 0));
        c->aliases[i].val = lil__val_from_json(json_array_get(pair, 1));
        ev->naliases = i + 1;
    }
    ev->aliases = c->aliases;
}

struct parsed {
    struct lil_expr *e;
    struct lil_tmpl *t;
};

static void collect_ref(void *ud, const struct lil_expr_ref *ref)
{
    json_t *arr = ud;
    char buf[256];

    if (ref->member)
        snprintf(buf, sizeof(buf), "%s.%s@%zu", ref->root, ref->member, ref->offset);
    else
        snprintf(buf, sizeof(buf), "%s@%zu", ref->root, ref->offset);
    json_array_append_new(arr, json_string(buf));
}

static void check_json_list(const struct block *b, const char *what, json_t *got)
{
    const struct text *t = get(b, what);
    json_t *want = json_loads(t->s, 0, NULL);
    char *g = json_dumps(got, JSON_COMPACT | JSON_ENSURE_ASCII);

    if (!want || !json_equal(want, got))
        block_fail(b, "wrong list: got %s, want %s", g, t->s);
    lil__json_free(g);
    json_decref(want);
}

static void check_segments(const struct block *b, const struct lil_tmpl *t)
{
    json_t *got = json_array();

    for (size_t i = 0; i < t->nsegs; i++) {
        const struct tmpl_seg *s = &t->segs[i];
        char *x = malloc(s->len + 6);
        memcpy(x, s->e ? "expr:" : "lit:", s->e ? 5 : 4);
        memcpy(x + (s->e ? 5 : 4), t->text + s->off, s->len);
        x[(s->e ? 5 : 4) + s->len] = '\0';
        json_array_append_new(got, json_string(x));
        free(x);
    }
    check_json_list(b, "segments", got);
    json_decref(got);
}

static void check_refs(const struct block *b, const struct parsed *p)
{
    json_t *got = json_array();

    if (p->e)
        lil__expr_refs(p->e, collect_ref, got);
    else
        lil__tmpl_refs(p->t, collect_ref, got);
    check_json_list(b, "refs", got);
    json_decref(got);
}

static void check_error(const struct block *b, lil_status rc,
                        const struct lil_expr_err *err)
{
    const struct text *want = get(b, "error"), *exact = get(b, "message");
    const struct text *off = get(b, "offset");
    char num[32];

    if (rc != LIL_E_SPEC) {
        block_fail(b, "parse should fail (%s%s)", exact ? exact->s : want->s, "");
        return;
    }
    if (want && !strstr(err->msg, want->s))
        block_fail(b, "message \"%s\" lacks \"%s\"", err->msg, want->s);
    if (exact && strcmp(err->msg, exact->s) != 0)
        block_fail(b, "message \"%s\" != \"%s\"", err->msg, exact->s);
    snprintf(num, sizeof(num), "%zu", err->offset);
    if (off && strcmp(num, off->s) != 0)
        block_fail(b, "offset %s != %s", num, off->s);
}

static void check_template(const struct block *b, const struct lil_tmpl *t,
                           struct lil_eval *ev)
{
    const struct text *render = get(b, "render"), *result = get(b, "result");

    if (render) {
        struct lil_buf out;
        lil__buf_init(&out, ev->env, 1 << 20);
        if (lil__tmpl_render(t, ev, &out) != LIL_OK)
            block_fail(b, "render failed%s%s", "", "");
        else if (out.len != render->len ||
                 (out.len && memcmp(out.data, render->s, out.len)))
            block_fail(b, "rendered \"%s\", want \"%s\"", (const char *)out.data,
                       render->s);
        lil__buf_free(&out);
    }
    if (result) {
        json_t *got = NULL, *want = json_loads(result->s, JSON_DECODE_ANY, NULL);
        char *g;
        if (lil__tmpl_value(t, ev, &got) != LIL_OK)
            block_fail(b, "tmpl_value failed%s%s", "", "");
        g = got ? json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
        if (!got || !want || !json_equal(got, want) ||
            json_typeof(got) != json_typeof(want))
            block_fail(b, "value %s, want %s", g, result->s);
        lil__json_free(g);
        json_decref(got);
        json_decref(want);
    }
}

static void check_expr(const struct block *b, const struct lil_expr *e,
                       struct lil_eval *ev)
{
    const struct text *result = get(b, "result"), *str = get(b, "string");
    struct lil_val v;
    char d[512];

    if (!result && !str)
        return;
    if (lil__expr_eval(e, ev, &v) != LIL_OK) {
        block_fail(b, "evaluation failed%s%s", "", "");
        return;
    }
    if (result && !val_matches(&v, result->s))
        block_fail(b, "got %s, want %s", describe(&v, d, sizeof(d)), result->s);
    if (str) {
        struct lil_buf out;
        lil__buf_init(&out, ev->env, 1 << 20);
        lil__val_string(&v, &out);
        if (out.len != str->len || (out.len && memcmp(out.data, str->s, out.len)))
            block_fail(b, "String() is \"%s\", want \"%s\"", (const char *)out.data,
                       str->s);
        lil__buf_free(&out);
    }
}

static bool known_keys(const struct block *b)
{
    static const char *const keys[] = {"expr",    "guard",  "template", "ctx",
                                       "result",  "string", "render",   "error",
                                       "message", "offset", "segments", "refs"};

    for (int i = 0; i < b->n; i++) {
        size_t k = 0;
        while (k < sizeof(keys) / sizeof(keys[0]) && strcmp(keys[k], b->kv[i].key) != 0)
            k++;
        if (k == sizeof(keys) / sizeof(keys[0])) {
            block_fail(b, "unknown key %s%s", b->kv[i].key, "");
            return false;
        }
    }
    return true;
}

static void run_block(const struct block *b, const struct lil_env *env)
{
    const struct text *ex = get(b, "expr"), *gu = get(b, "guard"),
                      *tp = get(b, "template");
    struct lil_expr_err err;
    struct parsed p = {NULL, NULL};
    struct lil_eval ev;
    struct ctx c;
    lil_status rc;

    if (!known_keys(b))
        return;
    if (!ex && !gu && !tp) {
        block_fail(b, "no expr/guard/template%s%s", "", "");
        return;
    }
    g_blocks++;
    if (ex)
        rc = lil__expr_parse(env, ex->s, ex->len, &p.e, &err);
    else if (gu)
        rc = lil__guard_parse(env, gu->s, gu->len, &p.e, &err);
    else
        rc = lil__tmpl_parse(env, tp->s, tp->len, &p.t, &err);
    if (get(b, "error") || get(b, "message")) {
        check_error(b, rc, &err);
        return;
    }
    if (rc != LIL_OK) {
        block_fail(b, "parse failed: %s%s", err.msg, "");
        return;
    }
    lil__eval_init(&ev, env);
    memset(&c, 0, sizeof(c));
    ctx_load(b, &c, &ev);
    if (get(b, "segments") && p.t)
        check_segments(b, p.t);
    if (get(b, "refs"))
        check_refs(b, &p);
    if (p.t)
        check_template(b, p.t, &ev);
    else
        check_expr(b, p.e, &ev);
    lil__eval_free(&ev);
    json_decref(c.root);
    lil__expr_free(env, p.e);
    lil__tmpl_free(env, p.t);
}

static void run_file(const char *path, const char *name, const struct lil_env *env)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lineno = 0;
    struct block b;

    T_REQUIRE(f != NULL);
    memset(&b, 0, sizeof(b));
    b.file = name;
    while ((n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (n > 0 && line[n - 1] == '\n')
            line[--n] = '\0';
        if (n == 0) {
            if (b.n)
                run_block(&b, env);
            block_clear(&b);
            continue;
        }
        if (line[0] == '#')
            continue;
        if (b.n == 0)
            b.line = lineno;
        if (!add_line(&b, line)) {
            b.line = lineno;
            block_fail(&b, "malformed line: %s%s", line, "");
        }
    }
    if (b.n)
        run_block(&b, env);
    block_clear(&b);
    free(line);
    fclose(f);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

T_TEST(data_files)
{
    const char *dir = T_DATA_DIR "/expr";
    struct lil_env env;
    DIR *d = opendir(dir);
    struct dirent *de;
    char *names[64];
    size_t n = 0;

    lil__env_init(&env);
    T_REQUIRE(d != NULL);
    while ((de = readdir(d)) != NULL && n < 64) {
        size_t len = strlen(de->d_name);
        if (len > 5 && strcmp(de->d_name + len - 5, ".test") == 0)
            names[n++] = strdup(de->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof(names[0]), cmp_names);
    T_CHECK(n >= 4);
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        run_file(path, names[i], &env);
        free(names[i]);
    }
    fprintf(stderr, "%d data blocks\n", g_blocks);
    T_CHECK(g_blocks > 500);
}

/* ------------------------------------------------------------------------ */
/* Helpers for the C tests                                                   */

/* Parse src as an expression and evaluate it against ctx (JSON, may be
 * NULL); String() of the result into out.  Returns the eval status, or
 * -100 if the parse failed. */
static int eval_str(const char *src, const char *ctx, char *out, size_t cap)
{
    struct lil_env env;
    struct lil_expr *e = NULL;
    struct lil_expr_err err;
    struct lil_eval ev;
    struct lil_val v;
    struct lil_buf b;
    json_t *root = ctx ? json_loads(ctx, 0, NULL) : json_object();
    int rc;

    lil__env_init(&env);
    out[0] = '\0';
    if (lil__expr_parse(&env, src, strlen(src), &e, &err) != LIL_OK) {
        snprintf(out, cap, "%s", err.msg);
        json_decref(root);
        return -100;
    }
    lil__eval_init(&ev, &env);
    ev.state = json_object_get(root, "state");
    rc = lil__expr_eval(e, &ev, &v);
    if (rc == LIL_OK) {
        lil__buf_init(&b, &env, 64 << 20);
        rc = lil__val_string(&v, &b);
        snprintf(out, cap, "%s", b.data ? (const char *)b.data : "");
        lil__buf_free(&b);
    }
    lil__eval_free(&ev);
    lil__expr_free(&env, e);
    json_decref(root);
    return rc;
}

static lil_status parse_err(const char *src, size_t len, int kind,
                            struct lil_expr_err *err)
{
    struct lil_env env;
    struct lil_expr *e = NULL;
    struct lil_tmpl *t = NULL;
    lil_status rc;

    lil__env_init(&env);
    if (kind == 0)
        rc = lil__expr_parse(&env, src, len, &e, err);
    else if (kind == 1)
        rc = lil__guard_parse(&env, src, len, &e, err);
    else
        rc = lil__tmpl_parse(&env, src, len, &t, err);
    lil__expr_free(&env, e);
    lil__tmpl_free(&env, t);
    return rc;
}

static char *repeat(const char *unit, size_t n, const char *mid, const char *tail)
{
    size_t ul = strlen(unit), ml = strlen(mid), tl = strlen(tail);
    char *s = malloc(ul * n * 2 + ml + 1);
    size_t o = 0;

    for (size_t i = 0; i < n; i++, o += ul)
        memcpy(s + o, unit, ul);
    memcpy(s + o, mid, ml);
    o += ml;
    for (size_t i = 0; i < n; i++, o += tl)
        memcpy(s + o, tail, tl);
    s[o] = '\0';
    return s;
}

/* ------------------------------------------------------------------------ */
/* Numbers                                                                   */

T_TEST(num_format_table)
{
    static const struct {
        double x;
        const char *s;
    } v[] = {{1e21, "1e+21"},
             {1e-7, "1e-7"},
             {123456789012345680000.0, "123456789012345680000"},
             {0.000001, "0.000001"},
             {-0.0, "0"},
             {9007199254740992.0, "9007199254740992"},
             {9007199254740994.0, "9007199254740994"},
             {-9007199254740992.0, "-9007199254740992"},
             {0.1, "0.1"},
             {1.0 / 3, "0.3333333333333333"},
             {5e-324, "5e-324"},
             {1.7976931348623157e308, "1.7976931348623157e+308"},
             {1e300, "1e+300"},
             {1.5e-7, "1.5e-7"},
             {1.2e-6, "0.0000012"},
             {100, "100"},
             {1e20, "100000000000000000000"},
             {-1.5, "-1.5"},
             {0.5, "0.5"},
             {123e-20, "1.23e-18"},
             {4.35, "4.35"},
             {1.2345e21, "1.2345e+21"},
             {18446744073709551616.0, "18446744073709552000"},
             {2.2250738585072014e-308, "2.2250738585072014e-308"}};

    char buf[32];

    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        size_t n = lil__num_format(v[i].x, buf);
        T_EQ_STR(buf, v[i].s);
        T_EQ_I64(n, strlen(v[i].s));
    }
    T_EQ_STR((lil__num_format((double)NAN, buf), buf), "NaN");
    T_EQ_STR((lil__num_format((double)INFINITY, buf), buf), "Infinity");
    T_EQ_STR((lil__num_format(-(double)INFINITY, buf), buf), "-Infinity");
}

/* Random doubles: the text reads back as the same double, and no shorter
 * digit string would (checked against printf with one digit less). */
T_TEST(num_format_round_trips)
{
    unsigned long long r = 88172645463325252ull;
    char buf[32];

    for (int i = 0; i < 20000; i++) {
        double x;
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        memcpy(&x, &r, sizeof(x));
        if (!isfinite(x))
            continue;
        lil__num_format(x, buf);
        if (strtod(buf, NULL) != x) {
            fprintf(stderr, "%.17g formatted as %s\n", x, buf);
            T_CHECK(0);
            break;
        }
    }
}

T_TEST(string_to_number_table)
{
    static const struct {
        const char *s;
        double n;
    } v[] = {{"  12  ", 12},
             {"0x10", 16},
             {"0X1f", 31},
             {"0o17", 15},
             {"0b101", 5},
             {"", 0},
             {" \n\t", 0},
             {"1e3", 1000},
             {".5", 0.5},
             {"5.", 5},
             {"+.5e1", 5},
             {"00012", 12},
             {"-00.5e-1", -0.05},
             {"9007199254740993", 9007199254740992.0},
             {"0x20000000000001", 9007199254740992.0},
             {"0x20000000000003", 9007199254740996.0},
             {"0b11111111", 255},
             {"1.e1", 10},
             {"\xC2\xA0 7 \xE3\x80\x80", 7},
             {"\xEF\xBB\xBF"
              "8\xE2\x80\xA8",
              8}};

    static const char *const nan[] = {".",
                                      "-0x10",
                                      "infinity",
                                      "1_000",
                                      "0x",
                                      "1e",
                                      "e1",
                                      "1e+",
                                      "--1",
                                      "0b2",
                                      "0o8",
                                      "0xg",
                                      "1 2",
                                      "12px",
                                      "NaN",
                                      "true",
                                      ("\xE1\xA0\x8E"
                                       "5")};

    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        double n = lil__js_str_to_num(v[i].s, strlen(v[i].s));
        if (n != v[i].n) {
            fprintf(stderr, "Number(\"%s\") = %.17g, want %.17g\n", v[i].s, n, v[i].n);
            T_CHECK(0);
        }
    }
    for (size_t i = 0; i < sizeof(nan) / sizeof(nan[0]); i++) {
        if (!isnan(lil__js_str_to_num(nan[i], strlen(nan[i])))) {
            fprintf(stderr, "Number(\"%s\") should be NaN\n", nan[i]);
            T_CHECK(0);
        }
    }
    T_CHECK(signbit(lil__js_str_to_num("-0", 2)) && lil__js_str_to_num("-0", 2) == 0);
    T_CHECK(lil__js_str_to_num("Infinity", 8) == (double)INFINITY);
    T_CHECK(lil__js_str_to_num("-Infinity", 9) == -(double)INFINITY);
    T_CHECK(lil__js_str_to_num("1e400", 5) == (double)INFINITY);
    T_CHECK(lil__js_str_to_num("1e-400", 6) == 0);
}

T_TEST(string_to_number_long_digits)
{
    /* 2^53 + 1 is a tie that rounds to even (2^53); any non-zero digit far
     * beyond the 800 kept ones must push it up to 2^53 + 2. */
    char *s = repeat("0", 900, "", "");
    char buf[2000];
    char *hex;

    snprintf(buf, sizeof(buf), "9007199254740993%se-900", s);
    T_CHECK(lil__js_str_to_num(buf, strlen(buf)) == 9007199254740992.0);
    snprintf(buf, sizeof(buf), "9007199254740993%s1e-901", s);
    T_CHECK(lil__js_str_to_num(buf, strlen(buf)) == 9007199254740994.0);
    snprintf(buf, sizeof(buf), "0.%s1e901", s);
    T_CHECK(lil__js_str_to_num(buf, strlen(buf)) == 1.0);
    free(s);
    hex = repeat("f", 300, "", "");
    snprintf(buf, sizeof(buf), "0x%s", hex);
    T_CHECK(lil__js_str_to_num(buf, strlen(buf)) == (double)INFINITY);
    snprintf(buf, sizeof(buf), "0x%.64s", hex); /* 2^256 - 1 -> 2^256 */
    T_CHECK(lil__js_str_to_num(buf, strlen(buf)) == ldexp(1, 256));
    free(hex);
}

T_TEST(to_json_mapping)
{
    struct lil_val v = {LIL_V_UNDEF, false, 0, NULL, 0, NULL};
    bool undef = false;
    json_t *j;

    T_CHECK(lil__val_to_json(&v, &undef) == NULL && undef);
    v.t = LIL_V_NUM;
    v.n = (double)NAN;
    j = lil__val_to_json(&v, &undef);
    T_CHECK(json_is_null(j) && !undef);
    json_decref(j);
    v.n = -0.0;
    j = lil__val_to_json(&v, &undef);
    T_CHECK(json_is_integer(j) && json_integer_value(j) == 0);
    json_decref(j);
    v.n = 9007199254740992.0;
    j = lil__val_to_json(&v, &undef);
    T_CHECK(json_is_integer(j) && json_integer_value(j) == 9007199254740992LL);
    json_decref(j);
    v.n = 18014398509481984.0 * 2;
    j = lil__val_to_json(&v, &undef);
    T_CHECK(json_is_real(j));
    json_decref(j);
    v.n = 0.5;
    j = lil__val_to_json(&v, &undef);
    T_CHECK(json_is_real(j) && json_real_value(j) == 0.5);
    json_decref(j);
    v.t = LIL_V_STR; /* invalid UTF-8 becomes U+FFFD */
    v.s = "a\xff"
          "b";
    v.len = 3;
    j = lil__val_to_json(&v, &undef);
    T_REQUIRE(json_is_string(j));
    T_EQ_STR(json_string_value(j), "a\xEF\xBF\xBD"
                                   "b");
    json_decref(j);
}

/* ------------------------------------------------------------------------ */
/* Limits and messages                                                       */

T_TEST(nesting_limits)
{
    struct lil_expr_err err;
    char *s;

    s = repeat("(", LIL_EXPR_MAX_DEPTH, "1", ")");
    T_EQ_I64(parse_err(s, strlen(s), 0, &err), LIL_OK);
    free(s);
    s = repeat("(", LIL_EXPR_MAX_DEPTH + 1, "1", ")");
    T_EQ_I64(parse_err(s, strlen(s), 0, &err), LIL_E_SPEC);
    T_CONTAINS(err.msg, "Expression too deeply nested in expression: ((((");
    T_EQ_I64(err.offset, LIL_EXPR_MAX_DEPTH);
    free(s);
    s = repeat("!", LIL_EXPR_MAX_DEPTH - 1, "1", "");
    T_EQ_I64(parse_err(s, strlen(s), 0, &err), LIL_OK);
    free(s);
    s = repeat("-", LIL_EXPR_MAX_DEPTH, "1", "");
    T_EQ_I64(parse_err(s, strlen(s), 0, &err), LIL_E_SPEC);
    T_CONTAINS(err.msg, "too deeply nested");
    free(s);
    s = repeat("1+", LIL_EXPR_MAX_DEPTH - 1, "1", ""); /* height 64 */
    T_EQ_I64(parse_err(s, strlen(s), 0, &err), LIL_OK);
    free(s);
    s = repeat("1+", LIL_EXPR_MAX_DEPTH, "1", "");
    T_EQ_I64(parse_err(s, strlen(s), 0, &err), LIL_E_SPEC);
    T_CONTAINS(err.msg, "too deeply nested");
    free(s);
    /* Far beyond the limit: a clean error, no deep recursion. */
    s = repeat("(", 30000, "1", ")");
    T_EQ_I64(parse_err(s, strlen(s), 0, &err), LIL_E_SPEC);
    free(s);
    s = repeat("not ", 15000, "1", "");
    T_EQ_I64(parse_err(s, strlen(s), 1, &err), LIL_E_SPEC);
    free(s);
}

T_TEST(length_limits)
{
    struct lil_expr_err err;
    char *body = repeat("a", LIL_EXPR_MAX_LEN - 2, "", "");
    char *s = malloc(LIL_EXPR_MAX_LEN + 8), out[64];
    int rc;

    /* A string literal filling the limit exactly parses and evaluates. */
    snprintf(s, LIL_EXPR_MAX_LEN + 8, "'%s'", body);
    T_EQ_I64(strlen(s), LIL_EXPR_MAX_LEN);
    T_EQ_I64(parse_err(s, strlen(s), 0, &err), LIL_OK);
    T_EQ_I64(parse_err(s, strlen(s), 2, &err), LIL_OK);
    snprintf(s, LIL_EXPR_MAX_LEN + 8, "'%s' ", body);
    T_EQ_I64(parse_err(s, strlen(s), 0, &err), LIL_E_SPEC);
    T_CONTAINS(err.msg, "Expression too long (65537 bytes, limit 65536)");
    T_EQ_I64(parse_err(s, strlen(s), 2, &err), LIL_E_SPEC);
    T_CONTAINS(err.msg, "Template too long");
    free(s);
    /* A template of 5000 segments parses. */
    s = repeat("${state.s}.", 5000, "", "");
    T_EQ_I64(parse_err(s, strlen(s), 2, &err), LIL_OK);
    free(s);
    rc = eval_str("state.s.length + state.s",
                  "{\"state\":{\"s\":\"\xF0\x9F\x98\x80\"}}", out, sizeof(out));
    T_EQ_I64(rc, LIL_OK);
    T_EQ_STR(out, "2\xF0\x9F\x98\x80");
    free(body);
}

T_TEST(message_cut_and_escaped)
{
    struct lil_expr_err err;
    char *s = repeat("a", 400, " +", "");

    T_EQ_I64(parse_err(s, strlen(s), 0, &err), LIL_E_SPEC);
    T_CHECK(strlen(err.msg) <= 255);
    T_CHECK(strncmp(err.msg, "Unexpected token in expression: aaaa", 36) == 0);
    T_CHECK(strcmp(err.msg + strlen(err.msg) - 3, "...") == 0);
    T_EQ_I64(err.offset, 402);
    free(s);
    /* Multi-byte characters are never cut in half. */
    s = repeat("\xC3\xA9", 300, "", "");
    T_EQ_I64(parse_err(s, strlen(s), 0, &err), LIL_E_SPEC);
    T_CHECK(strlen(err.msg) <= 255);
    T_CONTAINS(err.msg,
               "Unexpected character '\xC3\xA9' in expression: \xC3\xA9\xC3\xA9");
    T_CHECK(strcmp(err.msg + strlen(err.msg) - 5, "\xC3\xA9...") == 0);
    free(s);
    /* Invalid UTF-8 bytes show as \xNN, in the character and the source. */
    T_EQ_I64(parse_err("1 + \xff\xfe", 6, 0, &err), LIL_E_SPEC);
    T_EQ_STR(err.msg, "Unexpected character '\\xFF' in expression: 1 + \\xFF\\xFE");
    T_EQ_I64(err.offset, 4);
    T_EQ_I64(parse_err("\xC3", 1, 0, &err), LIL_E_SPEC); /* truncated sequence */
    T_EQ_STR(err.msg, "Unexpected character '\\xC3' in expression: \\xC3");
    T_EQ_I64(parse_err("\xED\xA0\x80", 3, 0, &err), LIL_E_SPEC); /* a surrogate */
    T_EQ_STR(err.msg, "Unexpected character '\\xED' in expression: \\xED\\xA0\\x80");
    /* An embedded NUL does not end the text. */
    T_EQ_I64(parse_err("1 \0 2", 5, 0, &err), LIL_E_SPEC);
    T_EQ_STR(err.msg, "Unexpected character '\\x00' in expression: 1 \\x00 2");
    /* Strings may hold anything. */
    T_EQ_I64(parse_err("'\xff\0'", 4, 0, &err), LIL_OK);
    /* The template's whole text is quoted for an unterminated ${. */
    T_EQ_I64(parse_err("x ${'\xff", 6, 2, &err), LIL_E_SPEC);
    T_EQ_STR(err.msg, "Unterminated ${...} in: x ${'\\xFF");
    T_EQ_I64(err.offset, 2);
}

/* ------------------------------------------------------------------------ */
/* Evaluation internals                                                      */

T_TEST(scratch_moves_under_live_operands)
{
    /* Strings long enough that every concatenation reallocates scratch
     * while the left operand lives in it. */
    char *a = repeat("a", 5000, "", ""), *b = repeat("b", 7000, "", "");
    char ctx[20000], *out = malloc(200000), *want = malloc(200000);
    int rc;

    snprintf(ctx, sizeof(ctx), "{\"state\":{\"a\":\"%s\",\"b\":\"%s\",\"l\":[\"%s\"]}}",
             a, b, b);
    rc = eval_str("(state.a + 1) + (state.b + (state.a + state.b)) + state.l", ctx, out,
                  200000);
    T_EQ_I64(rc, LIL_OK);
    snprintf(want, 200000, "%s1%s%s%s%s", a, b, a, b, b);
    T_CHECK(strcmp(out, want) == 0);
    rc = eval_str("(state.a + state.b) < (state.a + state.l + 'c')", ctx, out, 200000);
    T_EQ_I64(rc, LIL_OK);
    T_EQ_STR(out, "true");
    rc = eval_str("(state.a + 'x') in (state.b + state.a + 'xy')", ctx, out, 200000);
    T_EQ_I64(rc, LIL_OK);
    T_EQ_STR(out, "true");
    rc = eval_str("state.l in (state.a + state.b)", ctx, out, 200000);
    T_EQ_I64(rc, LIL_OK);
    T_EQ_STR(out, "true");
    free(a);
    free(b);
    free(out);
    free(want);
}

T_TEST(scratch_cap_is_toobig)
{
    char *big = repeat("x", 1 << 20, "", "");
    char *ctx = malloc((1 << 20) + 64), out[64];
    char *expr = repeat("state.s + ", 20, "''", "");

    snprintf(ctx, (1 << 20) + 64, "{\"state\":{\"s\":\"%s\"}}", big);
    T_EQ_I64(eval_str(expr, ctx, out, sizeof(out)), LIL_E_TOOBIG);
    free(expr);
    expr = repeat("state.s + ", 10, "''", "");
    T_EQ_I64(eval_str(expr, ctx, out, sizeof(out)), LIL_OK);
    free(expr);
    free(big);
    free(ctx);
}

/* A guard's scratch use stays flat: non-string results give it back. */
T_TEST(scratch_given_back)
{
    struct lil_env env;
    struct lil_expr *e = NULL;
    struct lil_expr_err err;
    struct lil_eval ev;
    struct lil_val v;
    json_t *state = json_pack("{s:[i,i],s:s}", "l", 1, 2, "s", "abc");
    const char *src = "state.l + 'x' == '1,2x' && (state.s + 1) in state.l";

    lil__env_init(&env);
    T_REQUIRE(lil__expr_parse(&env, src, strlen(src), &e, &err) == LIL_OK);
    lil__eval_init(&ev, &env);
    ev.state = state;
    T_EQ_I64(lil__expr_eval(e, &ev, &v), LIL_OK);
    T_CHECK(v.t == LIL_V_BOOL && !v.b);
    T_EQ_I64(ev.scratch.len, 0);
    lil__eval_free(&ev);
    lil__expr_free(&env, e);
    json_decref(state);
}

T_TEST(null_roots_and_aliases)
{
    struct lil_env env;
    struct lil_expr *e = NULL;
    struct lil_expr_err err;
    struct lil_eval ev;
    struct lil_val v;
    struct lil_alias al[2];
    const char *src = "item";

    lil__env_init(&env);
    lil__eval_init(&ev, &env); /* every object NULL */
    T_REQUIRE(lil__expr_parse(&env, "state.x == state.y", 18, &e, &err) == LIL_OK);
    T_EQ_I64(lil__expr_eval(e, &ev, &v), LIL_OK);
    T_CHECK(v.t == LIL_V_BOOL && v.b);
    lil__expr_free(&env, e);
    T_REQUIRE(lil__expr_parse(&env, src, strlen(src), &e, &err) == LIL_OK);
    T_EQ_I64(lil__expr_eval(e, &ev, &v), LIL_OK);
    T_CHECK(v.t == LIL_V_UNDEF);
    al[0].name = "item";
    al[0].val.t = LIL_V_NUM;
    al[0].val.n = 1;
    al[1].name = "other";
    al[1].val.t = LIL_V_NULL;
    ev.aliases = al;
    ev.naliases = 2;
    T_EQ_I64(lil__expr_eval(e, &ev, &v), LIL_OK);
    T_CHECK(v.t == LIL_V_NUM && v.n == 1);
    lil__expr_free(&env, e);
    lil__eval_free(&ev);
}

T_TEST(template_accessors)
{
    struct lil_env env;
    struct lil_tmpl *t = NULL;
    struct lil_expr_err err;

    lil__env_init(&env);
    T_REQUIRE(lil__tmpl_parse(&env, "${a}", 4, &t, &err) == LIL_OK);
    T_CHECK(lil__tmpl_is_single(t));
    T_EQ_I64(lil__tmpl_nexprs(t), 1);
    lil__tmpl_free(&env, t);
    T_REQUIRE(lil__tmpl_parse(&env, "${a}${b} ", 9, &t, &err) == LIL_OK);
    T_CHECK(!lil__tmpl_is_single(t));
    T_EQ_I64(lil__tmpl_nexprs(t), 2);
    lil__tmpl_free(&env, t);
    T_REQUIRE(lil__tmpl_parse(&env, "plain", 5, &t, &err) == LIL_OK);
    T_CHECK(!lil__tmpl_is_single(t));
    T_EQ_I64(lil__tmpl_nexprs(t), 0);
    lil__tmpl_free(&env, t);
    lil__tmpl_free(&env, NULL);
    lil__expr_free(&env, NULL);
}

/* The result of one evaluation stays valid while other evaluations only
 * append (until lil__eval_reset). */
T_TEST(render_keeps_callers_values)
{
    struct lil_env env;
    struct lil_expr *e = NULL;
    struct lil_tmpl *t = NULL;
    struct lil_expr_err err;
    struct lil_eval ev;
    struct lil_val v;
    struct lil_buf out;
    json_t *state = json_pack("{s:s}", "s", "abc");

    lil__env_init(&env);
    lil__buf_init(&out, &env, 1 << 20);
    T_REQUIRE(lil__expr_parse(&env, "state.s + 1", 11, &e, &err) == LIL_OK);
    T_REQUIRE(lil__tmpl_parse(&env, "${state.s + 2}/${state.s + 3}", 29, &t, &err) ==
              LIL_OK);
    lil__eval_init(&ev, &env);
    ev.state = state;
    T_EQ_I64(lil__expr_eval(e, &ev, &v), LIL_OK);
    T_EQ_I64(lil__tmpl_render(t, &ev, &out), LIL_OK);
    T_EQ_STR((const char *)out.data, "abc2/abc3");
    T_CHECK(v.t == LIL_V_STR && v.len == 4 && memcmp(v.s, "abc1", 4) == 0);
    lil__eval_reset(&ev);
    T_EQ_I64(ev.scratch.len, 0);
    lil__buf_free(&out);
    lil__eval_free(&ev);
    lil__expr_free(&env, e);
    lil__tmpl_free(&env, t);
    json_decref(state);
}

/* ------------------------------------------------------------------------ */
/* Allocation failures                                                       */

struct failing {
    long left; /* allocations before the first failure; < 0 never */
    bool fired;
};

static void *fail_malloc(void *ud, size_t n)
{
    struct failing *f = ud;
    if (f->left == 0) {
        f->fired = true;
        return NULL;
    }
    f->left--;
    return malloc(n);
}

static void *fail_realloc(void *ud, void *p, size_t n)
{
    struct failing *f = ud;
    if (f->left == 0) {
        f->fired = true;
        return NULL;
    }
    f->left--;
    return realloc(p, n);
}

static void fail_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}

static lil_status oom_workload(const struct lil_env *env, json_t *state)
{
    const char *src = "x ${state.a + state.b + 1} ${'q' in state.l} ${state.l} y";
    struct lil_tmpl *t = NULL;
    struct lil_expr *g = NULL;
    struct lil_expr_err err;
    struct lil_eval ev;
    struct lil_buf out;
    json_t *val = NULL;
    lil_status rc;

    lil__eval_init(&ev, env);
    lil__buf_init(&out, env, 1 << 20);
    ev.state = state;
    rc = lil__tmpl_parse(env, src, strlen(src), &t, &err);
    if (rc == LIL_OK)
        rc = lil__guard_parse(env, "${state.a + state.b < 'z'}", 26, &g, &err);
    if (rc == LIL_OK)
        rc = lil__tmpl_render(t, &ev, &out);
    if (rc == LIL_OK)
        rc = lil__tmpl_value(t, &ev, &val);
    if (rc == LIL_OK && strcmp((const char *)out.data, "x ab1 true 1,2,q y") != 0) {
        fprintf(stderr, "rendered \"%s\"\n", (const char *)out.data);
        rc = LIL_E_INVAL;
    }
    json_decref(val);
    lil__buf_free(&out);
    lil__eval_free(&ev);
    lil__tmpl_free(env, t);
    lil__expr_free(env, g);
    return rc;
}

T_TEST(allocation_failures)
{
    json_t *state =
        json_pack("{s:s,s:s,s:[i,i,s]}", "a", "a", "b", "b", "l", 1, 2, "q");
    int k;

    for (k = 0; k < 1000; k++) {
        struct failing f = {k, false};
        struct lil_env env;
        lil_status rc;
        lil__env_init(&env);
        env.malloc_fn = fail_malloc;
        env.realloc_fn = fail_realloc;
        env.free_fn = fail_free;
        env.alloc_ud = &f;
        rc = oom_workload(&env, state);
        if (!(rc == LIL_OK || (f.fired && rc == LIL_E_NOMEM)))
            fprintf(stderr, "allocation %d: status %d\n", k, (int)rc);
        T_CHECK(rc == LIL_OK || (f.fired && rc == LIL_E_NOMEM));
        if (!f.fired)
            break;
    }
    T_CHECK(k > 5 && k < 1000);
    json_decref(state);
}

/* ------------------------------------------------------------------------ */
/* One parsed expression, many threads                                       */

struct worker {
    const struct lil_expr *e;
    json_t *state;
    int ok;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct lil_env env;
    struct lil_eval ev;
    struct lil_val v;

    lil__env_init(&env);
    lil__eval_init(&ev, &env);
    ev.state = w->state;
    for (int i = 0; i < 20000; i++) {
        lil__eval_reset(&ev);
        if (lil__expr_eval(w->e, &ev, &v) == LIL_OK && v.t == LIL_V_STR && v.len == 7 &&
            memcmp(v.s, "red-10x", 7) == 0)
            w->ok++;
    }
    lil__eval_free(&ev);
    return NULL;
}

T_TEST(concurrent_evaluation)
{
    struct lil_env env;
    struct lil_expr *e = NULL;
    struct lil_expr_err err;
    const char *src = "state.n < 10 || state.status + '-' + state.n + 'x'";
    json_t *state = json_pack("{s:i,s:s}", "n", 10, "status", "red");
    struct worker w[4];
    pthread_t th[4];

    lil__env_init(&env);
    T_REQUIRE(lil__expr_parse(&env, src, strlen(src), &e, &err) == LIL_OK);
    for (int i = 0; i < 4; i++) {
        w[i].e = e;
        w[i].state = state;
        w[i].ok = 0;
        pthread_create(&th[i], NULL, worker_main, &w[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        T_EQ_I64(w[i].ok, 20000);
    }
    lil__expr_free(&env, e);
    json_decref(state);
}

T_MAIN()
