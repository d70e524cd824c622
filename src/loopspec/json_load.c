/*
 * json_load.c -- the loader's JSON mode (a file name ending in ".json").
 *
 * libyaml accepts things JSON does not (comments, single quotes, plain
 * strings, trailing commas) and misreads a few valid JSON texts (a
 * surrogate pair escape "\ud83d\ude00", a newline between a key and its
 * colon, a tab before the first token, keys over 1024 characters, C1
 * control characters).  So jansson decides what is valid
 * JSON (diagnostic code "json", duplicates refused) and what it means, and
 * libyaml only gives the positions: surrogate escapes are first rewritten
 * to private-use escapes of the same length (\uD83D -> \uE83D) so that
 * libyaml reads the text and positions stay right; then libyaml's tree must
 * match jansson's value node for node, and strings are taken from jansson.
 * When libyaml fails or its tree differs, the tree is built from jansson's
 * value with no positions (0:0).  JSON integers beyond 64 bits are refused
 * (jansson: "too big integer").  A string value's offset map (srcmap.h) is
 * built on the file as written, against jansson's string (so a surrogate
 * pair's escapes map to their first backslash).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "json/json.h"
#include "loopspec/node.h"
#include "loopspec/yaml_load.h"

/* ------------------------------------------------------------------------ */
/* JSON mode                                                                */

/* JSON mode: libyaml's reading of a text differs from jansson's (which is
 * right); the tree will be built from jansson's value. */
lil_status lil__load_trees_differ(struct loader *ld)
{
    ld->yaml_failed = true;
    return LIL_E_SPEC;
}

/* Where jansson's error is: the start of the token it names ("near 'x'"),
 * else its position (the byte after what it read). */
static struct lil_pos json_error_pos(const struct loader *ld, const json_error_t *e)
{
    size_t off = e->position > 0 ? (size_t)e->position : 0;
    const char *near = strstr(e->text, " near '");

    if (strncmp(e->text, "unable to decode byte", 21) == 0)
        near = NULL; /* position is the offending byte */
    if (near) {
        const char *tok = near + 7, *close = strrchr(tok, '\'');
        size_t tlen = close && close > tok ? (size_t)(close - tok) : 0;

        if (tlen && tlen <= off && off <= ld->len &&
            memcmp(ld->text + off - tlen, tok, tlen) == 0)
            off -= tlen;
    }
    return lil__load_pos_at_byte(ld->text, ld->len, off);
}

static bool hex4_surrogate(const char *s)
{
    /* D800-DFFF: high and low halves */
    return (s[0] == 'd' || s[0] == 'D') && s[1] && strchr("89abcdefABCDEF", s[1]) &&
           lil__load_count_digits(s + 2, 2, 16) == 2;
}

/* A copy of text with every surrogate escape \uDxxx made \uExxx (same
 * length, so libyaml's positions stay right), or NULL when there is none
 * (*nomem tells an allocation failure). */
static char *without_surrogates(struct loader *ld, const char *text, size_t len,
                                bool *nomem)
{
    char *copy = NULL;

    *nomem = false;
    for (size_t i = 0; i + 1 < len; i++) {
        if (text[i] != '\\')
            continue;
        if (text[i + 1] == 'u' && len - i >= 6 && hex4_surrogate(text + i + 2)) {
            if (!copy) {
                copy = lil__malloc(ld->env, len);
                if (!copy) {
                    *nomem = true;
                    return NULL;
                }
                memcpy(copy, text, len);
            }
            copy[i + 2] = (char)(text[i + 2] + 1); /* d -> e, D -> E */
        }
        i++; /* skip the escaped character */
    }
    return copy;
}

/* jansson's verdict on the text (a failed allocation is LIL_E_NOMEM, even
 * where jansson's lexer calls it a syntax error: json.h). */
static lil_status json_check(struct loader *ld)
{
    const size_t flags = JSON_DECODE_ANY | JSON_REJECT_DUPLICATES;
    struct lil_err err;
    json_error_t e;
    lil_status rc = lil__json_parse(ld->env, &err, LIL_E_SPEC, ld->text, ld->len, flags,
                                    &e, &ld->jv);

    if (rc != LIL_E_SPEC)
        return rc;
    return lil__load_fail_at(ld, "json", json_error_pos(ld, &e), "%s", e.text);
}

static struct lil_node *new_node(struct loader *ld, enum lil_node_kind kind)
{
    struct lil_node *nd = lil__load_arena_node(ld->env, ld->arena);

    if (nd)
        nd->kind = kind;
    return nd; /* pos 0:0 */
}

static lil_status from_json(struct loader *ld, json_t *v, size_t depth,
                            struct lil_node **out);

static lil_status scalar_from_json(struct loader *ld, json_t *v, struct lil_node *nd)
{
    struct lil_err err;
    struct lil_buf s;
    lil_status rc;

    nd->value = json_incref(v);
    nd->quoted = json_is_string(v);
    if (json_is_string(v)) {
        nd->str = json_string_value(v);
        nd->str_len = json_string_length(v);
        if (nd->str_len <= ld->lim.max_scalar)
            return LIL_OK;
        return lil__load_fail_at(
            ld, "yaml", nd->pos,
            "a scalar of %zu bytes is longer than the limit of %zu bytes", nd->str_len,
            ld->lim.max_scalar);
    }
    lil__buf_init(&s, ld->env, SIZE_MAX);
    rc = lil__json_dump(ld->env, &err, v, JSON_ENCODE_ANY, &s); /* number, literal */
    if (rc == LIL_OK) {
        nd->str_len = s.len;
        nd->str =
            lil__load_arena_strndup(ld->env, ld->arena, (const char *)s.data, s.len);
        rc = nd->str ? LIL_OK : LIL_E_NOMEM;
    }
    lil__buf_free(&s);
    return rc;
}

static lil_status pairs_from_json(struct loader *ld, json_t *v, size_t depth,
                                  struct lil_node *nd)
{
    size_t i = 0;
    void *it;

    nd->pairs = lil__load_arena_alloc(ld->env, ld->arena,
                                      json_object_size(v) * sizeof(*nd->pairs));
    if (!nd->pairs)
        return LIL_E_NOMEM;
    for (it = json_object_iter(v); it; it = json_object_iter_next(v, it), i++) {
        const char *k = json_object_iter_key(it);
        size_t klen = json_object_iter_key_len(it);
        struct lil_node *key = new_node(ld, LIL_NODE_SCALAR);
        lil_status rc;

        if (!key)
            return LIL_E_NOMEM;
        key->quoted = true;
        key->value = json_stringn_nocheck(k, klen);
        if (!key->value)
            return LIL_E_NOMEM;
        key->str = json_string_value(key->value);
        key->str_len = klen;
        nd->pairs[i].key = key;
        rc = from_json(ld, json_object_iter_value(it), depth + 1, &nd->pairs[i].value);
        if (rc != LIL_OK)
            return rc;
        nd->n = i + 1;
    }
    return LIL_OK;
}

/* The tree of a JSON value, without positions (libyaml could not read the
 * text).  Recursion is bounded by max_depth. */
static lil_status from_json(struct loader *ld, json_t *v, size_t depth,
                            struct lil_node **out)
{
    bool coll = json_is_array(v) || json_is_object(v);
    struct lil_node *nd = new_node(ld, json_is_array(v)    ? LIL_NODE_SEQ
                                       : json_is_object(v) ? LIL_NODE_MAP
                                                           : LIL_NODE_SCALAR);

    *out = nd;
    if (!nd)
        return LIL_E_NOMEM;
    if (coll && depth >= ld->lim.max_depth)
        return lil__load_fail_at(ld, "yaml", nd->pos, "nesting deeper than %u levels",
                                 ld->lim.max_depth);
    if (json_is_object(v))
        return pairs_from_json(ld, v, depth, nd);
    if (!json_is_array(v))
        return scalar_from_json(ld, v, nd);
    nd->items = lil__load_arena_alloc(ld->env, ld->arena,
                                      json_array_size(v) * sizeof(*nd->items));
    if (!nd->items)
        return LIL_E_NOMEM;
    for (size_t i = 0; i < json_array_size(v); i++) {
        lil_status rc = from_json(ld, json_array_get(v, i), depth + 1, &nd->items[i]);

        if (rc != LIL_OK)
            return rc;
        nd->n = i + 1;
    }
    return LIL_OK;
}

/* Give a string node jansson's string (the text libyaml read had its
 * surrogate escapes rewritten). */
static lil_status take_string(struct lil_node *nd, const char *s, size_t n)
{
    json_t *v;

    if (nd->str_len == n && memcmp(nd->str, s, n) == 0)
        return LIL_OK;
    v = json_stringn_nocheck(s, n);
    if (!v)
        return LIL_E_NOMEM;
    json_decref(nd->value);
    nd->value = v;
    nd->str = json_string_value(v);
    nd->str_len = n;
    return LIL_OK;
}

/* A scalar of libyaml's tree against jansson's value: a string is taken
 * from jansson, with its offset map. */
static lil_status match_scalar(struct loader *ld, struct lil_node *nd, json_t *v)
{
    lil_status rc;

    if (json_is_string(v) != json_is_string(nd->value) ||
        (!json_is_string(v) && !json_equal(v, nd->value)))
        return lil__load_trees_differ(ld);
    if (!json_is_string(v))
        return LIL_OK;
    rc = take_string(nd, json_string_value(v), json_string_length(v));
    return rc == LIL_OK ? lil__load_scalar_map(ld, nd, LIL_SCALAR_DOUBLE, -1) : rc;
}

/* Walk the tree libyaml built and jansson's value together: they must
 * agree (else yaml_failed is set), and strings are taken from jansson (the
 * text libyaml read may have had its surrogate escapes rewritten). */
static lil_status match_json(struct loader *ld, struct lil_node *nd, json_t *v)
{
    lil_status rc = LIL_OK;
    void *it;

    if (nd->kind == LIL_NODE_SCALAR)
        return match_scalar(ld, nd, v);
    if (nd->kind == LIL_NODE_SEQ) {
        if (!json_is_array(v) || json_array_size(v) != nd->n)
            return lil__load_trees_differ(ld);
        for (size_t i = 0; rc == LIL_OK && i < nd->n; i++)
            rc = match_json(ld, nd->items[i], json_array_get(v, i));
        return rc;
    }
    if (!json_is_object(v) || json_object_size(v) != nd->n)
        return lil__load_trees_differ(ld);
    it = json_object_iter(v);
    for (size_t i = 0; rc == LIL_OK && i < nd->n;
         i++, it = json_object_iter_next(v, it)) {
        rc = take_string(nd->pairs[i].key, json_object_iter_key(it),
                         json_object_iter_key_len(it));
        if (rc == LIL_OK)
            rc = match_json(ld, nd->pairs[i].value, json_object_iter_value(it));
    }
    return rc;
}

/* JSON: jansson checks, libyaml positions (on a rewritten copy if needed). */
lil_status lil__load_json(struct loader *ld)
{
    const char *orig = ld->text;
    bool nomem;
    char *copy;
    lil_status rc = json_check(ld);

    if (rc != LIL_OK)
        return rc;
    copy = without_surrogates(ld, ld->text, ld->len, &nomem);
    if (nomem)
        return LIL_E_NOMEM;
    if (copy)
        ld->text = copy;
    rc = lil__load_run_parser(ld);
    if (rc == LIL_OK && !ld->root)
        rc = lil__load_trees_differ(ld); /* jansson found a value: libyaml must too */
    if (rc == LIL_OK)
        rc = match_json(ld, ld->root, ld->jv);
    ld->text = orig;
    lil__free(ld->env, copy);
    if (ld->yaml_failed) {
        ld->root = NULL;
        rc = from_json(ld, ld->jv, 0, &ld->root);
    }
    return rc;
}
