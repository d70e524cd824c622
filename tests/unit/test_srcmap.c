/*
 * test_srcmap.c -- offset maps of scalars (spec/srcmap.h): for each scalar
 * style (plain over several lines, single- and double-quoted with every
 * kind of escape and folded or escaped line breaks, literal and folded
 * block scalars with chomping and indentation indicators, JSON strings
 * with surrogate pairs) the word TARGET of the value maps to the TARGET of
 * the file, and for every byte of every mapped scalar the position is
 * consistent: line and column (characters) are those of its byte offset,
 * and a verbatim byte is the file's byte.
 */
#include <stdio.h>
#include <string.h>

#include "base/env.h"
#include "loopspec/diag.h"
#include "loopspec/node.h"
#include "loopspec/srcmap.h"
#include "t.h"

struct loaded {
    struct lil_env env;
    struct lil_diags d;
    struct lil_doc doc;
    const char *text;
    size_t len;
};

static void load(struct loaded *l, const char *name, const char *text)
{
    l->text = text;
    l->len = strlen(text);
    lil__env_init(&l->env);
    lil__diags_init(&l->d, &l->env, name);
    T_EQ_I64(lil__doc_parse(&l->doc, &l->env, name, text, l->len, NULL, &l->d), LIL_OK);
    T_EQ_I64(l->d.n, 0);
    if (l->d.n)
        fprintf(stderr, "  %s: %u:%u %s\n", text, l->d.v[0].pub.line,
                l->d.v[0].pub.column, l->d.v[0].pub.message);
}

static void unload(struct loaded *l)
{
    lil__doc_free(&l->doc);
    lil__diags_free(&l->d);
}

/* The position of byte offset off of the text, counted here. */
static struct lil_pos pos_of_offset(const char *t, size_t off)
{
    struct lil_pos p = {1, 1, off};
    size_t start = 0;

    for (size_t i = 0; i < off; i++) {
        if (t[i] == '\n') {
            p.line++;
            start = i + 1;
        }
    }
    p.col = 1 + (unsigned)lil__srcmap_chars(t + start, off - start);
    return p;
}

/* Every offset of a mapped scalar is consistent with the file. */
static void check_scalar(const struct loaded *l, const struct lil_node *n)
{
    for (size_t off = 0; n->map && off <= n->str_len; off++) {
        struct lil_pos p = lil__srcmap_pos(n->map, n->nmap, n->str, off);
        struct lil_pos q = pos_of_offset(l->text, p.offset);

        T_CHECK(p.offset <= l->len);
        if (p.line != q.line || p.col != q.col) {
            fprintf(stderr, "  %s: byte %zu at %u:%u, offset %zu is %u:%u\n", l->text,
                    off, p.line, p.col, p.offset, q.line, q.col);
            T_CHECK(false);
            return;
        }
    }
    for (size_t i = 0; n->map && i + 1 < n->nmap; i++) {
        const struct lil_srcspan *s = &n->map[i];

        T_CHECK(s->val < n->map[i + 1].val);
        if (s->verbatim)
            T_EQ_MEM(n->str + s->val, n->map[i + 1].val - s->val,
                     l->text + s->pos.offset, n->map[i + 1].val - s->val);
    }
}

static void check_tree(const struct loaded *l, const struct lil_node *n)
{
    if (!n)
        return;
    if (n->kind == LIL_NODE_SCALAR)
        check_scalar(l, n);
    for (size_t i = 0; n->kind == LIL_NODE_SEQ && i < n->n; i++)
        check_tree(l, n->items[i]);
    for (size_t i = 0; n->kind == LIL_NODE_MAP && i < n->n; i++) {
        check_tree(l, n->pairs[i].key);
        check_tree(l, n->pairs[i].value);
    }
}

/* The scalar whose text holds TARGET. */
static const struct lil_node *find_target(const struct lil_node *n)
{
    const struct lil_node *hit = NULL;

    if (!n)
        return NULL;
    if (n->kind == LIL_NODE_SCALAR)
        return n->str && strstr(n->str, "TARGET") ? n : NULL;
    for (size_t i = 0; !hit && n->kind == LIL_NODE_SEQ && i < n->n; i++)
        hit = find_target(n->items[i]);
    for (size_t i = 0; !hit && n->kind == LIL_NODE_MAP && i < n->n; i++)
        hit = find_target(n->pairs[i].value);
    return hit;
}

/* value (the scalar's expected text) loads from text, and its TARGET maps
 * to the file's TARGET (the last one in the text). */
static void target_case(const char *name, const char *text, const char *value)
{
    struct loaded l;
    const struct lil_node *n;
    const char *in_file = text, *next;

    while ((next = strstr(in_file + 1, "TARGET")) != NULL)
        in_file = next;
    load(&l, name, text);
    n = find_target(l.doc.root);
    T_REQUIRE(n != NULL);
    T_EQ_STR(n->str, value);
    T_CHECK(n->map != NULL);
    if (n->map) {
        size_t off = (size_t)(strstr(n->str, "TARGET") - n->str);
        struct lil_pos p = lil__srcmap_pos(n->map, n->nmap, n->str, off);
        struct lil_pos q = pos_of_offset(text, (size_t)(in_file - text));

        if (p.offset != q.offset)
            fprintf(stderr, "  %s: TARGET at %u:%u (%zu), expected %u:%u (%zu)\n", text,
                    p.line, p.col, p.offset, q.line, q.col, q.offset);
        T_EQ_I64(p.offset, q.offset);
        T_EQ_I64(p.line, q.line);
        T_EQ_I64(p.col, q.col);
    }
    check_tree(&l, l.doc.root);
    unload(&l);
}

static void yaml(const char *text, const char *value)
{
    target_case("t.yaml", text, value);
}

/* The position just after the value (its last character) is pos. */
static void end_at(const char *text, unsigned line, unsigned col)
{
    struct loaded l;
    const struct lil_node *n;

    load(&l, "t.yaml", text);
    n = find_target(l.doc.root);
    T_REQUIRE(n && n->map);
    if (n && n->map) {
        struct lil_pos p = lil__srcmap_pos(n->map, n->nmap, n->str, n->str_len);

        T_EQ_I64(p.line, line);
        T_EQ_I64(p.col, col);
    }
    unload(&l);
}

T_TEST(plain)
{
    yaml("v: one TARGET\n", "one TARGET");
    yaml("v: first part\n  and ${TARGET} here\n", "first part and ${TARGET} here");
    yaml("v: a   b\n\n  c\t \n\n\n     TARGET  # c\n", "a   b\nc\n\nTARGET");
    yaml("s:\n  - x\n    y TARGET\n", "x y TARGET");
    yaml("v: !!str tagged TARGET\n", "tagged TARGET");
    yaml("m: {k: a b, v: flow\n  TARGET}\n", "flow TARGET");
}

T_TEST(single_quoted)
{
    yaml("v: 'it''s TARGET'\n", "it's TARGET");
    yaml("v: 'it''s a\n  multi ''x''\n\n   ''TARGET'''\n",
         "it's a multi 'x'\n'TARGET'");
    yaml("v: '  lead  \n   trail  TARGET  '\n", "  lead trail  TARGET  ");
}

T_TEST(double_quoted)
{
    yaml("v: \"a\\tb\\n\\\"q\\\" \\\\ \\/ \\a\\e\\_\\N\\L\\P TARGET\"\n",
         "a\tb\n\"q\" \\ / \a\x1b\xc2\xa0\xc2\x85\xe2\x80\xa8\xe2\x80\xa9 TARGET");
    yaml("v: \"\\u00e9\\x41\\U0001F600\\u20ac TARGET\"\n",
         "\xc3\xa9"
         "A\xf0\x9f\x98\x80\xe2\x82\xac TARGET");
    yaml("v: \"abc \\\n    def\\\n\n   TARGET\"\n", "abc def\nTARGET");
    yaml("v: \"abc\n   def\n\n   TARGET\"\n", "abc def\nTARGET");
    yaml("v: \"a\\\tb\\ c TARGET\"\n", "a\tb c TARGET");
    yaml("v: \"tab\there TARGET\"\n", "tab\there TARGET");
    yaml("m: {v: \"x\\ty ${TARGET}\"}\n", "x\ty ${TARGET}");
    yaml("v: \"a\r\n  TARGET\"\r\n", "a TARGET");
}

T_TEST(literal_block)
{
    yaml("v: |\n  line one\n\n  TARGET\n", "line one\n\nTARGET\n");
    yaml("v: |-\n  x\n  TARGET\n\n", "x\nTARGET");
    yaml("v: |+\n  x TARGET\n\n\n", "x TARGET\n\n\n");
    yaml("v: |2 # a comment\n  \tTARGET\n", "\tTARGET\n");
    yaml("v: |2\n    indented\n  TARGET\n", "  indented\nTARGET\n");
    yaml("s:\n  - |1\n     x\n    TARGET\n", "  x\n TARGET\n");
    yaml("k:\n  key2: |2-\n      x TARGET\n", "  x TARGET");
    yaml("v: |-2\n   a\n  TARGET\n", " a\nTARGET");
    yaml("v: !!str |\n  TARGET\n", "TARGET\n");
    yaml("v: |\n\n  \n  first\n  TARGET\n", "\n\nfirst\nTARGET\n");
}

T_TEST(folded_block)
{
    yaml("v: >\n  a\n  b\n\n  c\n    more\n  TARGET\n", "a b\nc\n  more\nTARGET\n");
    yaml("v: >-\n  first line\n  d\xc3\xa9j\xc3\xa0 vu ${state.TARGET}\n",
         "first line d\xc3\xa9j\xc3\xa0 vu ${state.TARGET}");
    yaml("v: >+\n  x\n  TARGET\n\n", "x TARGET\n\n");
    yaml("- >2\n   lead\n  TARGET\n", " lead\nTARGET\n");
}

T_TEST(positions_count_characters)
{
    /* the BOM and the é are one character each; offsets are bytes */
    yaml("\xef\xbb\xbfv: \"\xc3\xa9\\t TARGET\"\n", "\xc3\xa9\t TARGET");
    yaml("\xe2\x82\xac: >-\n  \xe2\x82\xac\xe2\x82\xac\n  TARGET\n",
         "\xe2\x82\xac\xe2\x82\xac TARGET");
}

T_TEST(json_strings)
{
    target_case("t.json", "{\"v\": \"a\\u00e9\\ud83d\\ude00\\n\\/ TARGET\"}",
                "a\xc3\xa9\xf0\x9f\x98\x80\n/ TARGET");
    target_case("t.json", "{\n  \"k\": [1, \"x\"],\n  \"v\": \"\\\"TARGET\\\"\"\n}",
                "\"TARGET\"");
}

/* Just after the value: after its last character, before a chomped or
 * folded line break or a closing quote. */
T_TEST(end_of_value)
{
    end_at("v: \"abc TARGET\"\n", 1, 15);
    end_at("v: |\n  TARGET\n\n", 2, 9);
    end_at("v: >-\n  x\n  TARGET\n", 3, 9);
    end_at("v: TARGET   # c\n", 1, 10);
    end_at("v: \"TARGET\\t\"\n", 1, 13);
}

T_MAIN()
