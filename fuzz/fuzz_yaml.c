/*
 * fuzz_yaml.c -- libFuzzer target: arbitrary bytes through the loop spec
 * loader (yaml_load.c, lil__doc_parse) and the tree readers (node.c).
 *
 * The first byte chooses the mode: bit 0 JSON (name "f.json") or YAML
 * ("f.yaml"), bit 1 tight limits (depth 4, scalars of 16 bytes, 512 bytes
 * of text) instead of the defaults.  The rest is the text.
 *
 * Oracle (__builtin_trap on violation, after a message on stderr):
 * - the status is LIL_OK (the env's allocator never fails);
 * - an error is exactly one diagnostic (code yaml or json) and no tree; its
 *   position lies inside the text (or 0:0 for a JSON tree without
 *   positions);
 * - a tree respects the limits: depth <= max_depth, scalars <= max_scalar,
 *   no NUL in a scalar, str NUL-terminated, keys are unique strings, a
 *   string's value equals its str, every position lies inside the text and
 *   the positions of siblings never go back;
 * - a scalar's offset map (srcmap.h) covers its text, its spans go forward,
 *   a verbatim span's bytes are the file's bytes at its offset, and (texts
 *   up to 4 KiB) every span's line and column are those of its offset;
 * - round trip: lil__node_json of the tree dumps as JSON (so every string
 *   is valid UTF-8), and that JSON loads back in JSON mode, without a
 *   diagnostic, to an equal value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/env.h"
#include "fuzz_common.h"
#include "loopspec/diag.h"
#include "loopspec/node.h"
#include "loopspec/srcmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The shared fuzzing env: its allocator traps on any huge request. */
static const struct lil_env *env(void)
{
    return fuzz_env();
}

#define bad fuzz_fail

/* Lines of the text (LF-separated) and the length of the longest. */
struct shape {
    size_t lines;
    size_t longest;
};

static struct shape shape_of(const char *text, size_t len)
{
    struct shape s = {1, 0};
    size_t start = 0;

    for (size_t i = 0; i <= len; i++) {
        if (i == len || text[i] == '\n') {
            if (i - start > s.longest)
                s.longest = i - start;
            if (i < len)
                s.lines++;
            start = i + 1;
        }
    }
    return s;
}

static void check_pos(struct lil_pos p, const struct shape *sh, bool may_be_zero,
                      const char *what)
{
    if (p.line == 0 && p.col == 0 && may_be_zero)
        return;
    if (p.line < 1 || p.line > sh->lines || p.col < 1 || p.col > sh->longest + 1)
        bad("%s at %u:%u outside the text (%zu lines, longest %zu)", what, p.line,
            p.col, sh->lines, sh->longest);
}

static bool before(struct lil_pos a, struct lil_pos b)
{
    return a.line < b.line || (a.line == b.line && a.col < b.col);
}

struct walk {
    const struct lil_doc_limits *lim;
    const struct shape *sh;
    bool json; /* positions may be 0:0 (a tree built from jansson's value) */
    const char *text;
    size_t len;
};

/* Line and column of byte offset off, counted from the start. */
static struct lil_pos pos_at(const char *text, size_t off)
{
    struct lil_pos p = {1, 1, off};
    size_t start = 0;

    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            p.line++;
            start = i + 1;
        }
    }
    p.col = 1 + (unsigned)lil__srcmap_chars(text + start, off - start);
    return p;
}

static void check_offset_map(const struct lil_node *n, const struct walk *w)
{
    if (!n->map)
        return;
    if (n->nmap == 0 || n->map[0].val != 0 || n->map[n->nmap - 1].val != n->str_len)
        bad("offset map does not cover the scalar's text");
    for (size_t i = 0; i < n->nmap; i++) {
        const struct lil_srcspan *sp = &n->map[i];
        size_t k = i + 1 < n->nmap ? n->map[i + 1].val - sp->val : 0;

        if (i + 1 < n->nmap && n->map[i + 1].val <= sp->val)
            bad("offset map goes back");
        if (sp->pos.offset > w->len || (sp->verbatim && k > w->len - sp->pos.offset))
            bad("offset map points past the text");
        if (sp->verbatim && memcmp(n->str + sp->val, w->text + sp->pos.offset, k) != 0)
            bad("verbatim span differs from the text");
        if (w->len <= 4096) {
            struct lil_pos q = pos_at(w->text, sp->pos.offset);

            if (q.line != sp->pos.line || q.col != sp->pos.col)
                bad("span at %u:%u, its offset is %u:%u", sp->pos.line, sp->pos.col,
                    q.line, q.col);
        }
    }
}

static void check_scalar(const struct lil_node *n, const struct walk *w)
{
    if (!n->value || !n->str)
        bad("scalar without value or text");
    if (n->str[n->str_len] != '\0' || memchr(n->str, '\0', n->str_len))
        bad("scalar text not NUL-terminated or with a NUL inside");
    if (json_is_string(n->value)) {
        if (json_string_length(n->value) != n->str_len ||
            memcmp(json_string_value(n->value), n->str, n->str_len) != 0)
            bad("string value differs from its text");
        if (n->str_len > w->lim->max_scalar && !w->json)
            bad("scalar of %zu bytes past max_scalar", n->str_len);
    }
    check_offset_map(n, w);
}

static void check_node(const struct lil_node *n, unsigned depth, const struct walk *w);

static void check_map(const struct lil_node *n, unsigned depth, const struct walk *w)
{
    json_t *seen = json_object();

    for (size_t i = 0; i < n->n; i++) {
        const struct lil_node *k = n->pairs[i].key;

        if (!k || k->kind != LIL_NODE_SCALAR || !json_is_string(k->value))
            bad("key %zu is not a string scalar", i);
        check_scalar(k, w);
        if (json_object_getn(seen, k->str, k->str_len))
            bad("duplicate key '%s' in a tree", k->str);
        json_object_setn_new_nocheck(seen, k->str, k->str_len, json_null());
        if (before(n->pairs[i].value->pos, k->pos))
            bad("value before its key");
        if (i && before(k->pos, n->pairs[i - 1].key->pos))
            bad("keys out of order");
        check_node(n->pairs[i].value, depth, w);
    }
    json_decref(seen);
}

static void check_node(const struct lil_node *n, unsigned depth, const struct walk *w)
{
    if (!n)
        bad("NULL node");
    check_pos(n->pos, w->sh, w->json, "node");
    if (n->kind == LIL_NODE_SCALAR) {
        check_scalar(n, w);
        return;
    }
    if (depth + 1 > w->lim->max_depth)
        bad("depth %u past max_depth %u", depth + 1, w->lim->max_depth);
    if (n->kind == LIL_NODE_MAP) {
        check_map(n, depth + 1, w);
        return;
    }
    for (size_t i = 0; i < n->n; i++) {
        if (i && before(n->items[i]->pos, n->items[i - 1]->pos))
            bad("items out of order");
        check_node(n->items[i], depth + 1, w);
    }
}

static void check_error(const struct lil_diags *d, const struct lil_doc *doc,
                        const struct shape *sh, bool json)
{
    const lil_diag *g;

    if (doc->root || d->n != 1 || d->nerrors != 1)
        bad("an error must be one diagnostic and no tree (%zu diagnostics)", d->n);
    g = &d->v[0].pub;
    if (strcmp(g->code, "yaml") != 0 && strcmp(g->code, "json") != 0)
        bad("diagnostic code %s", g->code);
    if (!g->message[0])
        bad("empty message");
    check_pos((struct lil_pos){g->line, g->column, g->offset}, sh, json, "diagnostic");
}

/* lil__node_json dumps, and its JSON reloads (JSON mode) to an equal value. */
static void round_trip(const struct lil_node *root)
{
    struct lil_doc_limits big = {(size_t)64 << 20, 1000, (size_t)64 << 20};
    json_t *j = lil__node_json(root), *back;
    struct lil_diags d;
    struct lil_doc doc;
    json_malloc_t jm;
    json_free_t jf;
    char *s;

    if (!j)
        bad("lil__node_json failed");
    s = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
    if (!s)
        bad("json_dumps failed: invalid UTF-8 in a string?");
    lil__diags_init(&d, env(), "rt.json");
    if (lil__doc_parse(&doc, env(), "rt.json", s, strlen(s), &big, &d) != LIL_OK ||
        d.n || !doc.root)
        bad("the tree's JSON does not load back: %s", d.n ? d.v[0].pub.message : "");
    back = lil__node_json(doc.root);
    if (!json_equal(j, back))
        bad("round trip changed the value");
    json_decref(back);
    lil__doc_free(&doc);
    lil__diags_free(&d);
    json_get_alloc_funcs(&jm, &jf);
    jf(s);
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct lil_doc_limits tight = {512, 4, 16};
    static const struct lil_doc_limits normal = {LIL_DOC_MAX_BYTES, LIL_DOC_MAX_DEPTH,
                                                 LIL_DOC_MAX_SCALAR};
    bool json = size && (data[0] & 1);
    const struct lil_doc_limits *lim = size && (data[0] & 2) ? &tight : &normal;
    const char *name = json ? "f.json" : "f.yaml";
    const char *text = size ? (const char *)data + 1 : "";
    size_t len = size ? size - 1 : 0;
    struct shape sh = shape_of(text, len);
    struct lil_diags d;
    struct lil_doc doc;
    lil_status rc;

    lil__diags_init(&d, env(), name);
    rc = lil__doc_parse(&doc, env(), name, text, len, lim, &d);
    if (rc != LIL_OK)
        bad("status %d", (int)rc);
    if (d.nerrors) {
        check_error(&d, &doc, &sh, json);
    } else if (d.n) {
        bad("a diagnostic that is not an error");
    } else if (doc.root) {
        struct walk w = {lim, &sh, json, text, len};

        check_node(doc.root, 0, &w);
        round_trip(doc.root);
    }
    lil__doc_free(&doc);
    lil__diags_free(&d);
    return 0;
}
