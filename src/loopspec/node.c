/*
 * node.c -- reading the document tree of node.h: key lookup, conversion to
 * JSON, kind names for messages.
 *
 * Lookups are linear scans: spec mappings are small, and a scan keeps the
 * tree free of any index.  lil__node_json recurses, but never deeper than
 * the loader let the tree grow (max_depth, clamped to 1000 by yaml_load.c);
 * NODE_JSON_DEPTH is a second guard.
 */
#include "loopspec/node.h"

#include <string.h>

#define NODE_JSON_DEPTH 4096u

const struct lil_node_pair *lil__node_pair(const struct lil_node *map, const char *key)
{
    size_t klen;

    if (!map || map->kind != LIL_NODE_MAP || !key)
        return NULL;
    klen = strlen(key);
    for (size_t i = 0; i < map->n; i++) {
        const struct lil_node *k = map->pairs[i].key;

        if (k->str_len == klen && memcmp(k->str, key, klen) == 0)
            return &map->pairs[i];
    }
    return NULL;
}

const struct lil_node *lil__node_get(const struct lil_node *map, const char *key)
{
    const struct lil_node_pair *p = lil__node_pair(map, key);

    return p ? p->value : NULL;
}

static json_t *node_json(const struct lil_node *n, unsigned depth);

static json_t *seq_json(const struct lil_node *n, unsigned depth)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < n->n; i++) {
        if (json_array_append_new(a, node_json(n->items[i], depth + 1)) != 0) {
            json_decref(a);
            a = NULL;
        }
    }
    return a;
}

static json_t *map_json(const struct lil_node *n, unsigned depth)
{
    json_t *o = json_object();

    for (size_t i = 0; o && i < n->n; i++) {
        const struct lil_node *k = n->pairs[i].key;

        /* setn_new releases the value when it fails (also a NULL one). */
        if (json_object_setn_new_nocheck(
                o, k->str, k->str_len, node_json(n->pairs[i].value, depth + 1)) != 0) {
            json_decref(o);
            o = NULL;
        }
    }
    return o;
}

static json_t *node_json(const struct lil_node *n, unsigned depth)
{
    if (!n || depth > NODE_JSON_DEPTH)
        return NULL;
    switch (n->kind) {
    case LIL_NODE_SEQ:
        return seq_json(n, depth);
    case LIL_NODE_MAP:
        return map_json(n, depth);
    default:
        return json_incref(n->value);
    }
}

json_t *lil__node_json(const struct lil_node *n)
{
    return node_json(n, 0);
}

const char *lil__node_kind_name(const struct lil_node *n)
{
    if (!n)
        return "nothing";
    if (n->kind == LIL_NODE_SEQ)
        return "a list";
    if (n->kind == LIL_NODE_MAP)
        return "a mapping";
    switch (json_typeof(n->value)) {
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}
