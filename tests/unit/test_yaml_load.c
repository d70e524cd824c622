/*
 * test_yaml_load.c -- the loader of loop spec text (yaml_load.c) and the
 * tree readers (node.c): core-schema scalars, positions, every refusal with
 * its message and position, JSON mode, linear work on 1 MiB inputs, and
 * allocation failures at every allocation (env and jansson) without leaks.
 *
 * LIL_YAML_TIMING=1 prints the load times of the large inputs.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/env.h"
#include "json/json.h"
#include "loopspec/diag.h"
#include "loopspec/node.h"
#include "t.h"

/* ---- helpers ------------------------------------------------------------ */

struct loaded {
    struct lil_env env;
    struct lil_diags d;
    struct lil_doc doc;
    lil_status rc;
};

static void load_lim(struct loaded *l, const char *name, const char *text, size_t len,
                     const struct lil_doc_limits *lim)
{
    lil__env_init(&l->env);
    lil__diags_init(&l->d, &l->env, name);
    l->rc = lil__doc_parse(&l->doc, &l->env, name, text, len, lim, &l->d);
}

static void load(struct loaded *l, const char *text)
{
    load_lim(l, "t.yaml", text, strlen(text), NULL);
}

/* A literal with its exact length (it may hold NUL bytes). */
#define LOADB(l, name, lit) load_lim((l), (name), (lit), sizeof(lit) - 1, NULL)

static void load_json(struct loaded *l, const char *text)
{
    load_lim(l, "t.json", text, strlen(text), NULL);
}

static void unload(struct loaded *l)
{
    lil__doc_free(&l->doc);
    lil__diags_free(&l->d);
}

/* The subtree as compact JSON text (static buffer). */
static const char *dump(const struct lil_node *n)
{
    static char buf[4096];
    json_t *j = lil__node_json(n);
    char *s = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    json_malloc_t jm;
    json_free_t jf;

    snprintf(buf, sizeof(buf), "%s", s ? s : "(null)");
    json_get_alloc_funcs(&jm, &jf);
    jf(s);
    json_decref(j);
    return buf;
}

/* The value of `v:` in a one-key document. */
static const struct lil_node *v_of(const struct loaded *l)
{
    return lil__node_get(l->doc.root, "v");
}

/* The text loads with exactly one error diagnostic (code, message part,
 * line, column) and no tree. */
static void expect_error(struct loaded *l, const char *code, const char *msg,
                         unsigned line, unsigned col)
{
    T_EQ_I64(l->rc, LIL_OK);
    T_CHECK(l->doc.root == NULL);
    T_EQ_I64(l->d.n, 1);
    T_EQ_I64(l->d.nerrors, 1);
    if (l->d.n != 1)
        return;
    T_EQ_STR(l->d.v[0].pub.code, code);
    T_CONTAINS(l->d.v[0].pub.message, msg);
    T_EQ_I64(l->d.v[0].pub.line, line);
    T_EQ_I64(l->d.v[0].pub.column, col);
}

static void yaml_error(const char *text, const char *msg, unsigned line, unsigned col)
{
    struct loaded l;

    load(&l, text);
    expect_error(&l, "yaml", msg, line, col);
    unload(&l);
}

static void json_error(const char *text, const char *code, const char *msg,
                       unsigned line, unsigned col)
{
    struct loaded l;

    load_json(&l, text);
    expect_error(&l, code, msg, line, col);
    unload(&l);
}

static void at(const struct lil_node *n, unsigned line, unsigned col)
{
    T_CHECK(n != NULL);
    if (!n)
        return;
    if (n->pos.line != line || n->pos.col != col)
        fprintf(stderr, "  node %s at %u:%u, expected %u:%u\n", lil__node_kind_name(n),
                n->pos.line, n->pos.col, line, col);
    T_EQ_I64(n->pos.line, line);
    T_EQ_I64(n->pos.col, col);
}

/* ---- scalars ------------------------------------------------------------ */

struct scalar_case {
    const char *yaml; /* the value after "v: " */
    const char *json; /* lil__node_json of it, compact */
    json_type type;
    const char *str; /* node->str (NULL: same as yaml) */
    int quoted;
};

T_TEST(core_schema_scalars)
{
    static const struct scalar_case cases[] = {
        {"12", "12", JSON_INTEGER, NULL, 0},
        {"-12", "-12", JSON_INTEGER, NULL, 0},
        {"+12", "12", JSON_INTEGER, NULL, 0},
        {"007", "7", JSON_INTEGER, NULL, 0},
        {"0o17", "15", JSON_INTEGER, NULL, 0},
        {"0x1F", "31", JSON_INTEGER, NULL, 0},
        {"0x", "\"0x\"", JSON_STRING, NULL, 0},
        {"-0x1F", "\"-0x1F\"", JSON_STRING, NULL, 0},
        {"9223372036854775807", "9223372036854775807", JSON_INTEGER, NULL, 0},
        {"-9223372036854775808", "-9223372036854775808", JSON_INTEGER, NULL, 0},
        {"9223372036854775808", "9.2233720368547758e18", JSON_REAL, NULL, 0},
        {"0x10000000000000000", "1.8446744073709552e19", JSON_REAL, NULL, 0},
        {"0.1", "0.10000000000000001", JSON_REAL, NULL, 0},
        {".5", "0.5", JSON_REAL, NULL, 0},
        {"1.", "1.0", JSON_REAL, NULL, 0},
        {"-1.5e3", "-1500.0", JSON_REAL, NULL, 0},
        {"1e3", "1000.0", JSON_REAL, NULL, 0},
        {"1e400", "\"1e400\"", JSON_STRING, NULL, 0},
        {".inf", "\".inf\"", JSON_STRING, NULL, 0},
        {"-.Inf", "\"-.Inf\"", JSON_STRING, NULL, 0},
        {".NaN", "\".NaN\"", JSON_STRING, NULL, 0},
        {"1_000", "\"1_000\"", JSON_STRING, NULL, 0},
        {"1.2.3", "\"1.2.3\"", JSON_STRING, NULL, 0},
        {"true", "true", JSON_TRUE, NULL, 0},
        {"True", "true", JSON_TRUE, NULL, 0},
        {"FALSE", "false", JSON_FALSE, NULL, 0},
        {"tRue", "\"tRue\"", JSON_STRING, NULL, 0},
        {"yes", "\"yes\"", JSON_STRING, NULL, 0},
        {"no", "\"no\"", JSON_STRING, NULL, 0},
        {"on", "\"on\"", JSON_STRING, NULL, 0},
        {"off", "\"off\"", JSON_STRING, NULL, 0},
        {"y", "\"y\"", JSON_STRING, NULL, 0},
        {"n", "\"n\"", JSON_STRING, NULL, 0},
        {"~", "null", JSON_NULL, NULL, 0},
        {"null", "null", JSON_NULL, NULL, 0},
        {"Null", "null", JSON_NULL, NULL, 0},
        {"NULL", "null", JSON_NULL, NULL, 0},
        {"", "null", JSON_NULL, "", 0},
        {"\"0.1\"", "\"0.1\"", JSON_STRING, "0.1", 1},
        {"'12'", "\"12\"", JSON_STRING, "12", 1},
        {"\"true\"", "\"true\"", JSON_STRING, "true", 1},
        {"\"\"", "\"\"", JSON_STRING, "", 1},
        {"\"a\\tb\\u00e9\"", "\"a\\tb\xc3\xa9\"", JSON_STRING, "a\tb\xc3\xa9", 1},
        {"|\n  12\n", "\"12\\n\"", JSON_STRING, "12\n", 1},
        {">-\n  a\n  b\n", "\"a b\"", JSON_STRING, "a b", 1},
        {"enum[a,b]", "\"enum[a,b]\"", JSON_STRING, NULL, 0},
        {"hello world", "\"hello world\"", JSON_STRING, NULL, 0},
        {"!!str 5", "\"5\"", JSON_STRING, "5", 0},
        {"!!str", "\"\"", JSON_STRING, "", 0},
        {"!!int \"12\"", "12", JSON_INTEGER, "12", 1},
        {"!!int 0x10", "16", JSON_INTEGER, "0x10", 0},
        {"!!float 1", "1.0", JSON_REAL, "1", 0},
        {"!!float 0x10", "16.0", JSON_REAL, "0x10", 0},
        {"!!bool 'true'", "true", JSON_TRUE, "true", 1},
        {"!!null ''", "null", JSON_NULL, "", 1},
        {"!<tag:yaml.org,2002:int> 3", "3", JSON_INTEGER, "3", 0},
        {"! 12", "\"12\"", JSON_STRING, "12", 0},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct scalar_case *c = &cases[i];
        char text[256];
        struct loaded l;
        const struct lil_node *v;

        snprintf(text, sizeof(text), "v: %s", c->yaml);
        load(&l, text);
        v = v_of(&l);
        T_EQ_I64(l.rc, LIL_OK);
        T_EQ_I64(l.d.n, 0);
        T_REQUIRE(v != NULL);
        T_EQ_I64(v->kind, LIL_NODE_SCALAR);
        if (strcmp(dump(v), c->json) != 0 || json_typeof(v->value) != c->type)
            fprintf(stderr, "  case %zu: v: %s\n", i, c->yaml);
        T_EQ_STR(dump(v), c->json);
        T_EQ_I64(json_typeof(v->value), c->type);
        T_EQ_STR(v->str, c->str ? c->str : c->yaml);
        T_EQ_I64(v->str_len, strlen(v->str));
        T_EQ_I64(v->quoted, c->quoted);
        unload(&l);
    }
}

T_TEST(kind_names_get_and_pair)
{
    struct loaded l;
    const struct lil_node *r;

    load(&l, "s: x\ni: 1\nf: 1.5\nb: false\nz: ~\nl: [1]\nm: {a: 1}\n");
    r = l.doc.root;
    T_REQUIRE(r != NULL);
    T_EQ_I64(r->n, 7);
    T_EQ_STR(lil__node_kind_name(lil__node_get(r, "s")), "a string");
    T_EQ_STR(lil__node_kind_name(lil__node_get(r, "i")), "a number");
    T_EQ_STR(lil__node_kind_name(lil__node_get(r, "f")), "a number");
    T_EQ_STR(lil__node_kind_name(lil__node_get(r, "b")), "a boolean");
    T_EQ_STR(lil__node_kind_name(lil__node_get(r, "z")), "null");
    T_EQ_STR(lil__node_kind_name(lil__node_get(r, "l")), "a list");
    T_EQ_STR(lil__node_kind_name(lil__node_get(r, "m")), "a mapping");
    T_EQ_STR(lil__node_kind_name(NULL), "nothing");
    T_CHECK(lil__node_get(r, "nope") == NULL);
    T_CHECK(lil__node_get(r, "") == NULL);
    T_CHECK(lil__node_get(lil__node_get(r, "l"), "a") == NULL); /* not a map */
    T_CHECK(lil__node_get(NULL, "a") == NULL);
    T_CHECK(lil__node_pair(r, "b") == &r->pairs[3]);
    at(lil__node_pair(r, "b")->key, 4, 1);
    at(lil__node_pair(r, "b")->value, 4, 4);
    T_EQ_STR(dump(lil__node_get(lil__node_get(r, "m"), "a")), "1");
    unload(&l);
}

T_TEST(keys_are_strings_and_json_keeps_order)
{
    struct loaded l;
    json_t *j;

    load(&l, "z: 1\n1: int key\nnull: k\ntrue: b\na: [x, 2, 2.5, ~]\n");
    T_REQUIRE(l.doc.root != NULL);
    for (size_t i = 0; i < l.doc.root->n; i++)
        T_CHECK(json_is_string(l.doc.root->pairs[i].key->value));
    T_EQ_STR(l.doc.root->pairs[1].key->str, "1");
    T_EQ_STR(dump(l.doc.root),
             "{\"z\":1,\"1\":\"int "
             "key\",\"null\":\"k\",\"true\":\"b\",\"a\":[\"x\",2,2.5,null]}");
    j = lil__node_json(l.doc.root);
    T_CHECK(json_is_integer(json_object_get(j, "z")));
    T_CHECK(json_is_real(json_array_get(json_object_get(j, "a"), 2)));
    json_decref(j);
    unload(&l);
}

T_TEST(empty_documents)
{
    static const char *const texts[] = {"", "# only a comment\n", "\n\n  \n", "---\n"};

    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        struct loaded l;

        load(&l, texts[i]);
        T_EQ_I64(l.rc, LIL_OK);
        T_EQ_I64(l.d.n, 0);
        if (l.doc.root) /* "---" alone: an empty (null) document */
            T_EQ_STR(dump(l.doc.root), "null");
        else
            T_CHECK(i != 3);
        unload(&l);
    }
    {
        struct loaded l;

        load_lim(&l, "t.yaml", NULL, 0, NULL);
        T_EQ_I64(l.rc, LIL_OK);
        T_CHECK(l.doc.root == NULL);
        unload(&l);
    }
    {
        struct loaded l;

        load(&l, "--- # one explicit document\na: 1\n...\n");
        T_EQ_I64(l.d.n, 0);
        T_EQ_STR(dump(l.doc.root), "{\"a\":1}");
        unload(&l);
    }
}

/* ---- positions ---------------------------------------------------------- */

T_TEST(positions)
{
    static const char text[] = "loopspec: \"0.1\"\n"            /* 1 */
                               "id: t\n"                        /* 2 */
                               "meta:\n"                        /* 3 */
                               "  name: h\xc3\xa9llo\n"         /* 4 */
                               "  tags: [a, \"b\", {c: 1}]\n"   /* 5 */
                               "body:\n"                        /* 6 */
                               "  - id: s1\n"                   /* 7 */
                               "    cmd: |\n"                   /* 8 */
                               "      echo hi\n"                /* 9 */
                               "  - x\n"                        /* 10 */
                               "empty:\n"                       /* 11 */
                               "\xc3\xa9: \xc3\xbc, \xc3\xa9\n" /* 12 */
                               "? k\n"                          /* 13 */
                               ": !!str v\n";                   /* 14 */
    struct loaded l;
    const struct lil_node *r, *meta, *tags, *body, *fm;

    load(&l, text);
    T_EQ_I64(l.d.n, 0);
    r = l.doc.root;
    T_REQUIRE(r != NULL && r->kind == LIL_NODE_MAP);
    at(r, 1, 1);
    at(r->pairs[0].key, 1, 1);
    at(r->pairs[0].value, 1, 11);
    at(lil__node_get(r, "id"), 2, 5);
    meta = lil__node_get(r, "meta");
    at(meta, 4, 3);
    at(lil__node_pair(meta, "name")->key, 4, 3);
    at(lil__node_get(meta, "name"), 4, 9);
    tags = lil__node_get(meta, "tags");
    T_REQUIRE(tags && tags->kind == LIL_NODE_SEQ && tags->n == 3);
    at(tags, 5, 9);
    at(tags->items[0], 5, 10);
    at(tags->items[1], 5, 13);
    fm = tags->items[2];
    at(fm, 5, 18);
    at(fm->pairs[0].key, 5, 19);
    at(fm->pairs[0].value, 5, 22);
    body = lil__node_get(r, "body");
    T_REQUIRE(body && body->kind == LIL_NODE_SEQ && body->n == 2);
    at(body, 7, 3);
    at(body->items[0], 7, 5);
    at(lil__node_get(body->items[0], "cmd"), 8, 10);
    T_EQ_STR(lil__node_get(body->items[0], "cmd")->str, "echo hi\n");
    at(body->items[1], 10, 5);
    at(lil__node_get(r, "empty"), 11, 7); /* the empty value: just after the colon */
    T_CHECK(json_is_null(lil__node_get(r, "empty")->value));
    at(lil__node_pair(r, "\xc3\xa9")->key, 12, 1);
    at(lil__node_get(r, "\xc3\xa9"), 12, 4);                 /* characters, not bytes */
    T_EQ_I64(lil__node_get(r, "\xc3\xa9")->pos.offset, 127); /* bytes */
    T_EQ_STR(lil__node_get(r, "\xc3\xa9")->str, "\xc3\xbc, \xc3\xa9");
    at(lil__node_pair(r, "k")->key, 13, 3);
    at(lil__node_get(r, "k"), 14, 3); /* a tagged node starts at its tag */
    unload(&l);
}

T_TEST(positions_crlf_bom_tabs)
{
    struct loaded l;

    load(&l, "a: 1\r\nb:\r\n  - x\r\n  - \"y\"\r\n");
    T_EQ_I64(l.d.n, 0);
    T_REQUIRE(l.doc.root != NULL);
    at(lil__node_get(l.doc.root, "a"), 1, 4);
    at(lil__node_get(l.doc.root, "b"), 3, 3);
    at(lil__node_get(l.doc.root, "b")->items[1], 4, 5);
    T_EQ_STR(lil__node_get(l.doc.root, "b")->items[1]->str, "y");
    unload(&l);

    load(&l, "\xef\xbb\xbf"
             "a: 1\nb: 2\n");
    T_EQ_I64(l.d.n, 0);
    T_REQUIRE(l.doc.root != NULL);
    at(lil__node_pair(l.doc.root, "a")->key, 1, 2); /* the BOM is one character */
    T_EQ_I64(lil__node_pair(l.doc.root, "a")->key->pos.offset, 3);
    at(lil__node_get(l.doc.root, "b"), 2, 4);
    unload(&l);

    load(&l, "a:\t1\nb: [x,\tyy]\n");
    T_EQ_I64(l.d.n, 0);
    T_REQUIRE(l.doc.root != NULL);
    at(lil__node_get(l.doc.root, "a"), 1, 4);
    at(lil__node_get(l.doc.root, "b")->items[1], 2, 8);
    unload(&l);
}

/* ---- refusals ----------------------------------------------------------- */

T_TEST(syntax_errors)
{
    /* libyaml's errors in plain words, at the mistake (yaml_errors.c) */
    yaml_error("a: 1\n  b: 2\n", "the key 'b' (column 3) is indented differently", 2,
               3);
    yaml_error("a: x: y\n", "': ' inside a value that is not quoted", 1, 5);
    yaml_error("a: [1, 2\nb: 3\n", "this list is not closed: add ']'", 1, 4);
    yaml_error("a: {k: 1\n", "this mapping is not closed: add '}'", 1, 4);
    yaml_error("a: [1, 2}\n", "expected ',' or ']' here", 1, 9);
    yaml_error("a: [1, 2]]\n", "this ']' closes nothing", 1, 10);
    yaml_error("a: \"unterminated\n", "this string is not closed: no \" closes", 1, 4);
    yaml_error("a: 'x\nb: 'y'\n", "the ' here runs on to the ' at line 2, column 4", 1,
               4);
    yaml_error("a: \"x\n---\n", "runs on into a '---'", 1, 4);
    yaml_error("a: 1\n- b\n", "does not continue the mapping that starts at line 1", 2,
               1);
    yaml_error("a:\n  - 1\n  x: 2\n", "does not continue the list", 3, 3);
    yaml_error("key: \t\n\t- x\n", "a tab in the indentation", 2, 1);
    yaml_error("a:\n  b: 1\n  \tc: 2\n", "a tab in the indentation", 3, 3);
    yaml_error("a: '\\x'\nb: \"\\q\"\n", "unknown escape '\\q'", 2, 5);
    yaml_error("a: - b\n", "a list item ('- ') cannot start on the line of its key", 1,
               4);
    yaml_error("a: @b\n", "'@' is reserved", 1, 4);
    yaml_error("%YAML 2.0\n---\na: 1\n", "found incompatible YAML document", 1, 1);
}

T_TEST(anchors_aliases_tags)
{
    yaml_error("a: &x 1\nb: 2\n", "anchors and aliases are not supported", 1, 4);
    yaml_error("a: 1\nb: *x\n", "anchors and aliases are not supported", 2, 4);
    yaml_error("base: &b {k: 1}\n", "anchors and aliases are not supported", 1, 7);
    yaml_error("l: &l\n  - 1\n", "anchors and aliases are not supported", 1, 4);
    yaml_error("a: !foo 1\n", "tag '!foo' is not supported on a scalar", 1, 4);
    yaml_error("a: !!binary aGk=\n", "tag '!!binary' is not supported on a scalar", 1,
               4);
    yaml_error("a: !!str {k: 1}\n", "is not supported on a mapping", 1, 4);
    yaml_error("a: !!map [1]\n", "is not supported on a list", 1, 4);
    yaml_error("a: !!set {k}\n", "tag '!!set' is not supported on a mapping", 1, 4);
    yaml_error("%TAG !! tag:example.com,2000:\n---\na: !!str 1\n",
               "tag:example.com,2000:str", 3, 4);
    yaml_error("a: !!int abc\n", "'abc' is not a valid !!int", 1, 4);
    yaml_error("a: !!int 1.5\n", "'1.5' is not a valid !!int", 1, 4);
    yaml_error("a: !!float x\n", "'x' is not a valid !!float", 1, 4);
    yaml_error("a: !!bool yes\n", "'yes' is not a valid !!bool", 1, 4);
    yaml_error("a: !!null 0\n", "'0' is not a valid !!null", 1, 4);
}

T_TEST(duplicate_and_complex_keys)
{
    yaml_error("x: 1\ny: 2\nx: 3\n", "duplicate key 'x' (first at line 1)", 3, 1);
    yaml_error("m:\n  a: 1\n  'a': 2\n", "duplicate key 'a' (first at line 2)", 3, 3);
    yaml_error("m: {a: 1, b: 2, \"a\": 3}\n", "duplicate key 'a' (first at line 1)", 1,
               17);
    yaml_error("1: a\n\"1\": b\n", "duplicate key '1' (first at line 1)", 2, 1);
    yaml_error("? [a]\n: b\n", "a mapping key must be a scalar, not a list", 1, 3);
    yaml_error("? {a: 1}\n: b\n", "a mapping key must be a scalar, not a mapping", 1,
               3);
    yaml_error("{[a]: b}\n", "a mapping key must be a scalar, not a list", 1, 2);
    /* the same key in different mappings is fine */
    {
        struct loaded l;

        load(&l, "a: {x: 1}\nb: {x: 2}\nc: [{x: 1}, {x: 2}]\n");
        T_EQ_I64(l.d.n, 0);
        unload(&l);
    }
}

T_TEST(duplicate_key_in_a_large_mapping)
{
    /* past KEYSET_MIN keys the hash set is used: first, middle and last */
    static char text[64 * 1024];
    size_t n = 0;

    for (int i = 0; i < 2000; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "key%d: %d\n", i, i);
    {
        struct loaded l;

        load(&l, text);
        T_EQ_I64(l.d.n, 0);
        T_EQ_I64(l.doc.root->n, 2000);
        T_EQ_STR(lil__node_get(l.doc.root, "key1999")->str, "1999");
        unload(&l);
    }
    snprintf(text + n, sizeof(text) - n, "key1000: again\n");
    yaml_error(text, "duplicate key 'key1000' (first at line 1001)", 2001, 1);
    snprintf(text + n, sizeof(text) - n, "key9: again\n");
    yaml_error(text, "duplicate key 'key9' (first at line 10)", 2001, 1);
    snprintf(text + n, sizeof(text) - n, "key1999: again\n");
    yaml_error(text, "duplicate key 'key1999' (first at line 2000)", 2001, 1);
}

T_TEST(second_document)
{
    yaml_error("a: 1\n---\nb: 2\n", "a second document is not allowed", 2, 1);
    yaml_error("---\na: 1\n...\n---\n", "a second document is not allowed", 4, 1);
}

T_TEST(limits)
{
    struct lil_doc_limits lim = {0, 0, 8};
    struct loaded l;
    char deep[200];

    /* max_scalar */
    load_lim(&l, "t.yaml", "a: 12345678\nb: 123456789\n", 25, &lim);
    expect_error(&l, "yaml", "a scalar of 9 bytes is longer than the limit of 8 bytes",
                 2, 4);
    unload(&l);
    load_lim(&l, "t.yaml", "a: \"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\"\n", 36, &lim);
    expect_error(&l, "yaml", "a scalar of 10 bytes", 1, 4); /* decoded length */
    unload(&l);

    /* max_bytes: refused before parsing, at line 1 */
    lim = (struct lil_doc_limits){8, 0, 0};
    load_lim(&l, "t.yaml", "a: 1\nb: 2345\n", 13, &lim);
    expect_error(&l, "yaml", "the spec is 13 bytes, more than the limit of 8 bytes", 1,
                 1);
    unload(&l);
    load_lim(&l, "t.yaml", "a: [1\n", 6, &lim); /* within the limit: the syntax error */
    expect_error(&l, "yaml", "this list is not closed", 1, 4);
    unload(&l);

    /* max_depth: the default is 64 collections */
    for (int depth = 63; depth <= 66; depth++) {
        memset(deep, '[', (size_t)depth);
        memset(deep + depth, ']', (size_t)depth);
        deep[2 * depth] = '\0';
        load(&l, deep);
        if (depth <= 64) {
            T_EQ_I64(l.d.n, 0);
            T_CHECK(l.doc.root != NULL);
        } else {
            expect_error(&l, "yaml", "nesting deeper than 64 levels", 1, 65);
        }
        unload(&l);
    }
    lim = (struct lil_doc_limits){0, 2, 0};
    load_lim(&l, "t.yaml", "a:\n  b: [1]\n", 12, &lim);
    expect_error(&l, "yaml", "nesting deeper than 2 levels", 2, 6);
    unload(&l);
    load_lim(&l, "t.yaml", "a:\n  b: 1\n", 10, &lim);
    T_EQ_I64(l.d.n, 0);
    unload(&l);
}

T_TEST(bad_bytes)
{
    struct loaded l;

    /* invalid UTF-8, after a 2-byte character on the same line */
    LOADB(&l, "t.yaml", "a: 1\nb: \xc3\xa9\xff\n");
    expect_error(&l, "yaml", "byte 0xFF is not valid UTF-8", 2, 5);
    T_EQ_I64(l.d.v[0].pub.offset, 10);
    unload(&l);
    LOADB(&l, "t.yaml", "a: \xe2\x82\n"); /* cut short: the byte that starts it */
    expect_error(&l, "yaml", "byte 0xE2 is not valid UTF-8", 1, 4);
    unload(&l);
    LOADB(&l, "t.yaml", "a: \xc3"); /* truncated at the end */
    expect_error(&l, "yaml", "byte 0xC3 is not valid UTF-8", 1, 4);
    unload(&l);
    LOADB(&l, "t.yaml", "a: \xed\xa0\x80\n"); /* an encoded surrogate */
    expect_error(&l, "yaml", "byte 0xED is not valid UTF-8", 1, 4);
    unload(&l);
    /* control characters, raw */
    LOADB(&l, "t.yaml", "a: 1\nb: x\x01y\n");
    expect_error(&l, "yaml", "character U+0001 is a control character", 2, 5);
    unload(&l);
    /* a NUL byte: refused before parsing, at its position */
    LOADB(&l, "t.yaml", "a: 1\nb: x\0y\n");
    expect_error(&l, "yaml", "a NUL byte is not allowed", 2, 5);
    unload(&l);
    /* a NUL character from an escape */
    yaml_error("a: \"x\\0y\"\n", "a NUL character is not allowed in a scalar", 1, 4);
    yaml_error("a: \"\\u0000\"\n", "a NUL character is not allowed in a scalar", 1, 4);
    /* a UTF-16 BOM is not a way to switch encodings: bytes are UTF-8 */
    LOADB(&l, "t.yaml",
          "\xff\xfe"
          "a\0:\0");
    T_CHECK(l.doc.root == NULL);
    T_EQ_I64(l.d.nerrors, 1);
    unload(&l);
}

T_TEST(messages_quote_long_and_odd_keys)
{
    char text[400];
    struct loaded l;

    snprintf(text, sizeof(text), "%s: 1\n%s: 2\n",
             "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk",
             "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk");
    load(&l, text);
    expect_error(&l, "yaml",
                 "duplicate key 'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...'",
                 2, 1);
    unload(&l);
    yaml_error("\"a\\tb\": 1\n\"a\\tb\": 2\n", "duplicate key 'a?b'", 2, 1);
}

/* ---- JSON --------------------------------------------------------------- */

T_TEST(json_mode)
{
    struct loaded l;
    const struct lil_node *r;

    load_json(&l, "{\"a\":1,\"b\":[true,null,2.5,\"s\"],\n\t\"c\":\t{\"d\":\"x\"}}");
    T_EQ_I64(l.d.n, 0);
    r = l.doc.root;
    T_REQUIRE(r != NULL);
    T_EQ_STR(dump(r), "{\"a\":1,\"b\":[true,null,2.5,\"s\"],\"c\":{\"d\":\"x\"}}");
    at(r, 1, 1);
    at(lil__node_pair(r, "a")->key, 1, 2);
    at(lil__node_get(r, "a"), 1, 6);
    at(lil__node_get(r, "b"), 1, 12);
    at(lil__node_get(r, "b")->items[3], 1, 27);
    at(lil__node_pair(r, "c")->key, 2, 2);
    at(lil__node_get(r, "c"), 2, 7);
    T_CHECK(lil__node_get(r, "b")->items[3]->quoted);
    T_CHECK(!lil__node_get(r, "a")->quoted);
    T_EQ_STR(lil__node_get(r, "a")->str, "1");
    unload(&l);

    /* "-0", exponents, a top-level scalar */
    load_json(&l, "[-0, 1E2, -1.5e-1, 0]");
    T_EQ_STR(dump(l.doc.root), "[0,100.0,-0.14999999999999999,0]");
    T_CHECK(json_is_integer(l.doc.root->items[0]->value));
    unload(&l);
    load_json(&l, "\"just a string\"");
    T_EQ_STR(dump(l.doc.root), "\"just a string\"");
    unload(&l);
}

T_TEST(json_refusals)
{
    json_error("{\"a\": yes}", "json", "invalid token near 'yes'", 1, 7);
    json_error("{\"a\": 1, # comment\n\"b\": 2}", "json", "", 1, 10);
    json_error("{'a': 1}", "json", "", 1, 2);
    json_error("[1, 2,]", "json", "unexpected token near ']'", 1, 7);
    json_error("{\"a\": 1,\n \"a\": 2}", "json", "duplicate object key", 2, 2);
    json_error("a: 1\n", "json", "", 1, 1);
    json_error("", "json", "end of file", 1, 1);
    json_error("{\"a\": 1} {}", "json", "end of file expected", 1, 10);
    json_error("{\"a\": 12345678901234567890}", "json", "too big integer", 1, 7);
    json_error("{\"a\": \"\\u0000\"}", "json", "\\u0000 is not allowed", 1, 7);
    json_error("{\"a\": \"x\xff\"}", "json", "unable to decode byte 0xff", 1, 9);
    {
        struct lil_doc_limits lim = {0, 2, 0};
        struct loaded l;

        load_lim(&l, "t.json", "{\"a\": {\"b\": [1]}}", 17, &lim);
        expect_error(&l, "yaml", "nesting deeper than 2 levels", 1, 13);
        unload(&l);
    }
    {
        struct lil_doc_limits lim = {0, 0, 3};
        struct loaded l;

        load_lim(&l, "t.json", "{\"a\": \"abc\", \"b\": \"abcd\"}", 25, &lim);
        expect_error(&l, "yaml",
                     "a scalar of 4 bytes is longer than the limit of 3 bytes", 1, 19);
        unload(&l);
    }
}

T_TEST(json_surrogate_pairs_keep_positions)
{
    struct loaded l;
    const struct lil_node *r;

    load_json(
        &l,
        "{\"e\": \"\\ud83d\\ude00!\", \"\\uD83D\\uDE01\": 1, \"n\": \"\\\\ud800\"}");
    T_EQ_I64(l.d.n, 0);
    r = l.doc.root;
    T_REQUIRE(r != NULL && r->n == 3);
    T_EQ_STR(lil__node_get(r, "e")->str, "\xf0\x9f\x98\x80!");
    T_EQ_I64(lil__node_get(r, "e")->str_len, 5);
    T_EQ_STR(r->pairs[1].key->str, "\xf0\x9f\x98\x81");
    T_EQ_STR(json_string_value(r->pairs[1].key->value), "\xf0\x9f\x98\x81");
    T_EQ_STR(lil__node_get(r, "n")->str, "\\ud800"); /* an escaped backslash */
    at(lil__node_get(r, "e"), 1, 7);
    at(r->pairs[1].key, 1, 24);
    at(lil__node_get(r, "n"), 1, 48);
    T_EQ_STR(
        dump(r),
        "{\"e\":\"\xf0\x9f\x98\x80!\",\"\xf0\x9f\x98\x81\":1,\"n\":\"\\\\ud800\"}");
    unload(&l);
}

T_TEST(json_that_libyaml_refuses_loads_without_positions)
{
    static const char *const texts[] = {
        "{\"a\"\n: 1, \"b\": [true, {\"c\": 2.5}]}",
        "\t{\"a\": 1, \"b\": [true, {\"c\": 2.5}]}",
        "{\"a\": 1, \"b\": [true, {\"c\": 2.5}]}\t",
        "{\"a\": 1, \"b\": [true, {\"c\": 2.5}]}\n",
    };

    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        struct loaded l;
        const struct lil_node *r;

        load_json(&l, texts[i]);
        T_EQ_I64(l.d.n, 0);
        r = l.doc.root;
        T_REQUIRE(r != NULL);
        T_EQ_STR(dump(r), "{\"a\":1,\"b\":[true,{\"c\":2.5}]}");
        T_EQ_STR(lil__node_get(r, "a")->str, "1");
        T_CHECK(lil__node_pair(r, "b")->key->quoted);
        if (i < 2) {
            at(r, 0, 0);
            at(lil__node_get(r, "b")->items[1], 0, 0);
        } else {
            at(r, 1, 1);
            at(lil__node_get(r, "b")->items[1], 1, 22);
        }
        unload(&l);
    }
    {
        struct lil_doc_limits lim = {0, 1, 0};
        struct loaded l;

        load_lim(&l, "t.json", "\t[[1]]", 6, &lim);
        expect_error(&l, "yaml", "nesting deeper than 1 levels", 0, 0);
        unload(&l);
    }
}

/* ---- the reference examples ---------------------------------------------- */

T_TEST(reference_examples_load_cleanly)
{
    char dir[1024], path[2048];
    DIR *d;
    struct dirent *e;
    int count = 0;

    snprintf(dir, sizeof(dir), "%s/reference-examples", T_DATA_DIR);
    d = opendir(dir);
    T_REQUIRE(d != NULL);
    while ((e = readdir(d)) != NULL) {
        static char text[64 * 1024];
        struct loaded l;
        size_t n;
        FILE *f;

        if (!strstr(e->d_name, ".yaml"))
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        f = fopen(path, "rb");
        T_REQUIRE(f != NULL);
        n = fread(text, 1, sizeof(text), f);
        fclose(f);
        load_lim(&l, e->d_name, text, n, NULL);
        if (l.d.n)
            fprintf(stderr, "  %s:%u:%u: %s\n", e->d_name, l.d.v[0].pub.line,
                    l.d.v[0].pub.column, l.d.v[0].pub.message);
        T_EQ_I64(l.d.n, 0);
        T_REQUIRE(l.doc.root != NULL);
        T_EQ_STR(lil__node_get(l.doc.root, "loopspec")->str, "0.1");
        T_CHECK(lil__node_get(l.doc.root, "body")->kind == LIL_NODE_SEQ);
        unload(&l);
        count++;
    }
    closedir(d);
    T_CHECK(count >= 10);
}

/* ---- bounded work --------------------------------------------------------- */

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Load text and return the milliseconds it took (with LIL_YAML_TIMING set:
 * the best of 3, printed). */
static double timed(const char *what, const char *name, const char *text, size_t len,
                    struct loaded *keep)
{
    int runs = getenv("LIL_YAML_TIMING") ? 3 : 1;
    double best = 1e9;

    for (int i = 0; i < runs; i++) {
        double t0 = now_ms(), ms;

        load_lim(keep, name, text, len, NULL);
        ms = now_ms() - t0;
        best = ms < best ? ms : best;
        if (i < runs - 1)
            unload(keep);
    }
    if (getenv("LIL_YAML_TIMING"))
        fprintf(stderr, "timing: %-40s %8zu bytes %8.2f ms\n", what, len, best);
    return best;
}

/* Work must be linear: a quadratic loader takes minutes on these (the
 * cursor that turns marks into byte columns on a line of 256 KiB, the
 * duplicate check on 25000 keys, ...).  The bound is loose for debug and
 * sanitizer builds on a busy machine; LIL_YAML_TIMING=1 prints the times. */
#define SLOW_MS 5000.0
#define QUARTER ((size_t)256 << 10)

T_TEST(large_inputs_are_linear)
{
    size_t cap = LIL_DOC_MAX_BYTES, n = 0;
    char *text = malloc(cap + 64);
    struct loaded l;

    T_REQUIRE(text != NULL);
    /* 1 MiB of "- a" lines */
    while (n + 4 <= cap) {
        memcpy(text + n, "- a\n", 4);
        n += 4;
    }
    T_CHECK(timed("1 MiB of '- a' lines", "t.yaml", text, n, &l) < SLOW_MS);
    T_EQ_I64(l.d.n, 0);
    T_EQ_I64(l.doc.root->n, cap / 4);
    at(l.doc.root->items[cap / 4 - 1], (unsigned)(cap / 4), 3);
    unload(&l);

    /* one mapping of ~25k distinct keys */
    n = 0;
    for (int i = 0; n + 16 < QUARTER; i++)
        n += (size_t)snprintf(text + n, cap - n, "k%07d: %d\n", i, i & 7);
    T_CHECK(timed("256 KiB mapping of distinct keys", "t.yaml", text, n, &l) < SLOW_MS);
    T_EQ_I64(l.d.n, 0);
    unload(&l);

    /* one line: a flow sequence of 256 KiB (columns up to 262144) */
    n = 0;
    text[n++] = '[';
    while (n + 3 < QUARTER) {
        memcpy(text + n, "ab,", 3);
        n += 3;
    }
    text[n - 1] = ']';
    T_CHECK(timed("256 KiB flow sequence on one line", "t.yaml", text, n, &l) <
            SLOW_MS);
    T_EQ_I64(l.d.n, 0);
    at(l.doc.root->items[l.doc.root->n - 1], 1, (unsigned)(n - 2));
    unload(&l);

    /* the same as JSON */
    for (size_t i = 1; i + 3 <= n; i += 3)
        memcpy(text + i, "\"\",", 3);
    text[n - 1] = ']';
    T_CHECK(timed("256 KiB JSON array on one line", "t.json", text, n, &l) < SLOW_MS);
    T_EQ_I64(l.d.n, 0);
    at(l.doc.root->items[l.doc.root->n - 1], 1, (unsigned)(n - 2));
    unload(&l);

    /* 1 MiB of '[': stops at depth 65 */
    memset(text, '[', cap);
    T_CHECK(timed("1 MiB of '['", "t.yaml", text, cap, &l) < SLOW_MS);
    expect_error(&l, "yaml", "nesting deeper than 64 levels", 1, 65);
    unload(&l);

    /* one scalar of 1 MiB: refused by max_scalar */
    memcpy(text, "a: ", 3);
    memset(text + 3, 'x', cap - 3);
    T_CHECK(timed("1 MiB scalar", "t.yaml", text, cap, &l) < SLOW_MS);
    expect_error(&l, "yaml", "longer than the limit", 1, 4);
    unload(&l);
    free(text);
}

/* A spec of 1000 shell steps, as a loop spec would be written. */
T_TEST(thousand_step_spec)
{
    size_t cap = 256 * 1024, n = 0;
    char *text = malloc(cap);
    struct loaded l;

    T_REQUIRE(text != NULL);
    n +=
        (size_t)snprintf(text + n, cap - n,
                         "loopspec: \"0.1\"\nid: big\npattern: react\nstate:\n  vars:\n"
                         "    done: { type: bool, init: false }\nbody:\n");
    for (int i = 0; i < 1000; i++)
        n += (size_t)snprintf(
            text + n, cap - n,
            "  - id: step-%d\n    kind: shell\n    cmd: \"echo ${state.done} "
            "%d\"\n    when: \"${!state.done}\"\n    save: { done: \"$.ok\" }\n",
            i, i);
    n += (size_t)snprintf(text + n, cap - n,
                          "terminate:\n  signal: oracle\n  until: \"${state.done}\"\n");
    T_CHECK(timed("1000-step spec", "t.yaml", text, n, &l) < SLOW_MS);
    T_EQ_I64(l.d.n, 0);
    T_EQ_I64(lil__node_get(l.doc.root, "body")->n, 1000);
    unload(&l);
    free(text);
}

/* ---- allocation failures -------------------------------------------------- */

struct counter {
    unsigned long calls;
    unsigned long fail_at; /* 0: never */
    int fired;
    long live;
};

static struct counter ctr;

static void *c_malloc(void *ud, size_t n)
{
    void *p;

    (void)ud;
    if (++ctr.calls == ctr.fail_at) {
        ctr.fired = 1;
        return NULL;
    }
    p = malloc(n);
    ctr.live += p != NULL;
    return p;
}

static void *c_realloc(void *ud, void *p, size_t n)
{
    void *q;

    (void)ud;
    if (++ctr.calls == ctr.fail_at) {
        ctr.fired = 1;
        return NULL;
    }
    q = realloc(p, n);
    ctr.live += q != NULL && p == NULL;
    return q;
}

static void c_free(void *ud, void *p)
{
    (void)ud;
    ctr.live -= p != NULL;
    free(p);
}

/* The outcome of one load, to compare runs: rc, diagnostics, the tree. */
static void outcome(const char *name, const char *text, struct lil_env *env, char *out,
                    size_t cap, lil_status *rc, int json_torture)
{
    struct lil_diags d;
    struct lil_doc doc;
    unsigned long fail_at = ctr.fail_at;

    lil__diags_init(&d, env, name);
    *rc = lil__doc_parse(&doc, env, name, text, strlen(text), NULL, &d);
    ctr.fail_at = 0; /* describing the result must not fail */
    snprintf(out, cap, "%zu %s %u:%u %s", d.n, d.n ? d.v[0].pub.message : "",
             d.n ? d.v[0].pub.line : 0, d.n ? d.v[0].pub.column : 0, dump(doc.root));
    if (doc.root && json_torture) /* lil__node_json under failure: NULL, no leak */
        for (unsigned long i = 1; i < 100000; i++) {
            struct lil_json_scope sc;
            json_t *j;

            ctr.fail_at = ctr.calls + i;
            ctr.fired = 0;
            lil__json_begin(&sc, env); /* jansson allocates from env */
            j = lil__node_json(doc.root);
            T_EQ_I64(lil__json_end(&sc), ctr.fired ? LIL_E_NOMEM : LIL_OK);
            T_CHECK(ctr.fired ? j == NULL : j != NULL);
            json_decref(j);
            if (!ctr.fired)
                break;
        }
    ctr.fail_at = fail_at;
    lil__doc_free(&doc);
    lil__diags_free(&d);
}

static void torture(const char *name, const char *text)
{
    struct lil_env env;
    char want[4096], got[4096];
    lil_status rc;
    unsigned long k;

    lil__env_init(&env);
    env.malloc_fn = c_malloc;
    env.realloc_fn = c_realloc;
    env.free_fn = c_free;
    memset(&ctr, 0, sizeof(ctr));
    outcome(name, text, &env, want, sizeof(want), &rc, 1);
    T_EQ_I64(rc, LIL_OK);
    T_EQ_I64(ctr.live, 0);
    for (k = 1;; k++) {
        memset(&ctr, 0, sizeof(ctr));
        ctr.fail_at = k;
        outcome(name, text, &env, got, sizeof(got), &rc, 0);
        if (ctr.live != 0 ||
            !(rc == LIL_E_NOMEM || (rc == LIL_OK && strcmp(got, want) == 0)))
            fprintf(stderr,
                    "  %s: allocation %lu failed: rc %d, live %ld\n    %s\n    %s\n",
                    name, k, (int)rc, ctr.live, got, want);
        T_EQ_I64(ctr.live, 0);
        T_CHECK(rc == LIL_E_NOMEM || (rc == LIL_OK && strcmp(got, want) == 0));
        if (!ctr.fired || k > 100000)
            break; /* went past the last allocation */
    }
    T_CHECK(k > 5);
}

T_TEST(allocation_failures)
{
    static char big_map[4096];
    size_t n = 0;

    for (int i = 0; i < 40; i++)
        n += (size_t)snprintf(big_map + n, sizeof(big_map) - n,
                              "k%d: [%d, x%d, %d.5]\n", i, i, i, i);
    torture("a.yaml", big_map);
    torture("b.yaml", "a: 1\nb: {c: [x, \"y\", 2.5, ~, 0x10, 99999999999999999999]}\n");
    torture("c.yaml", "a: 1\nb: 2\na: 3\n"); /* a diagnostic */
    torture("d.yaml", "a: [1, 2\n");         /* a libyaml error */
    torture("e.json", "{\"a\": [1, \"\\ud83d\\ude00\"], \"b\": {\"c\": null}}");
    torture("f.json", "{\"a\"\n: [1, \"x\"], \"b\": {\"c\": 1.5}}"); /* no positions */
    torture("g.json", "{\"a\": x}");
}

T_MAIN()
