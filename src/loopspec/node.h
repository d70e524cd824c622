/*
 * node.h -- the document tree of a loop spec file, with positions.
 *
 * yaml_load.c builds it from YAML (libyaml) or JSON; everything above works
 * on this tree and never sees libyaml.  A node is a scalar, a sequence or a
 * mapping; each remembers where it starts.  Scalars are already resolved to
 * JSON values by the YAML 1.2 core schema:
 *
 *   plain  null, Null, NULL, ~, (empty)           -> null
 *   plain  true True TRUE false False FALSE        -> boolean
 *   plain  [-+]?[0-9]+, 0o[0-7]+, 0x[0-9a-fA-F]+   -> integer (real if it
 *          does not fit in 64 bits)
 *   plain  [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?,
 *          [-+]?(\.inf|\.Inf|\.INF), .nan .NaN .NAN  -> real
 *   anything else, and every quoted or block scalar -> string
 *
 * so `yes`, `no`, `on`, `off`, `y`, `n` stay strings.  A real that JSON
 * cannot hold (.inf, .nan, 1e400) keeps its text as a string value with
 * `quoted` false, so the layer above reports a type error.  Keys are always
 * strings (`1:` and `"1":` are the same key).  Explicit tags (`!!str 5`) are
 * honoured for the core tags str, int, float, bool, null, seq, map and the
 * non-specific `!`; other tags are refused.
 *
 * A JSON file (name ending in .json) is checked by jansson (its errors have
 * code `json`); libyaml then only supplies positions.  Should libyaml read
 * the same text differently, the tree is built from jansson alone and every
 * position is 0:0.
 *
 * Lines are counted at LF; columns count characters (diag.h; a UTF-8 BOM
 * is one character of line 1); every position also has its byte offset.
 * A scalar also knows where each byte of its text came from (`map`,
 * srcmap.h), through folding, chomping and escapes, so a diagnostic about
 * a guard or template lands on the offending character; map is NULL where
 * the loader could not follow the scalar, and in JSON mode for keys and
 * non-strings (then positions inside it are the scalar's start).  max_depth is capped
 * at 1000 (lil__node_json recurses).
 *
 * Refused with a diagnostic (code `yaml`) naming line and column: syntax
 * errors, anchors and aliases (no billion laughs), duplicate keys in one
 * mapping, non-scalar keys, more than one document, input larger than
 * max_bytes, nesting deeper than max_depth, a scalar longer than
 * max_scalar, invalid UTF-8, NUL bytes.
 *
 * The tree owns its memory (one arena per document); json values handed out
 * by lil__node_json are new references the caller releases.
 */
#ifndef LIL_SPEC_NODE_H
#define LIL_SPEC_NODE_H

#include <stdbool.h>
#include <stddef.h>

#include "json/json.h"
#include "loopspec/diag.h"
#include "loopspec/srcmap.h"

enum lil_node_kind { LIL_NODE_SCALAR, LIL_NODE_SEQ, LIL_NODE_MAP };

struct lil_node;

struct lil_node_pair {
    struct lil_node *key; /* always a scalar whose value is a string */
    struct lil_node *value;
};

struct lil_node {
    enum lil_node_kind kind;
    struct lil_pos pos;
    /* SCALAR */
    json_t *value;   /* resolved value (string, integer, real, true, false, null) */
    const char *str; /* the scalar's text as written (after YAML unescaping) */
    size_t str_len;
    bool quoted;                   /* quoted or block scalar: value is a string */
    size_t end;                    /* byte offset just past the scalar in the file */
    const struct lil_srcspan *map; /* where str's bytes came from, or NULL */
    size_t nmap;                   /* spans in map (the sentinel included) */
    /* SEQ and MAP */
    size_t n;                    /* items or pairs */
    struct lil_node **items;     /* SEQ */
    struct lil_node_pair *pairs; /* MAP, in source order, keys unique */
};

struct lil_doc_limits {
    size_t max_bytes;   /* default 1 MiB */
    unsigned max_depth; /* default 64 */
    size_t max_scalar;  /* default 256 KiB */
};

#define LIL_DOC_MAX_BYTES  (1u << 20)
#define LIL_DOC_MAX_DEPTH  64u
#define LIL_DOC_MAX_SCALAR (256u << 10)

struct lil_doc_arena; /* private to yaml_load.c */

struct lil_doc {
    const struct lil_env *env;
    struct lil_node *root; /* NULL: empty document, or parsing failed */
    struct lil_doc_arena *arena;
};

/* Parse text (len bytes, need not be NUL-terminated) into doc.  name is used
 * for diagnostics only; a name ending in ".json" selects JSON rules.  lim
 * may be NULL (defaults).  Problems go to diags (code "yaml"; the position
 * of the offending token); the return value is LIL_OK, or LIL_E_NOMEM.  On
 * a YAML error doc->root is NULL.  Free with lil__doc_free in every case. */
lil_status lil__doc_parse(struct lil_doc *doc, const struct lil_env *env,
                          const char *name, const char *text, size_t len,
                          const struct lil_doc_limits *lim, struct lil_diags *diags);
void lil__doc_free(struct lil_doc *doc);

/* The `yaml` error of a text of size bytes over the limit, at line 1 with
 * the real size, the limit and how to raise it (yaml_errors.c; spec.c
 * calls it for a file it read only up to the limit). */
void lil__doc_too_big(struct lil_diags *diags, size_t size, size_t limit);

/* The value of key in a mapping node, or NULL (also if map is not a map). */
const struct lil_node *lil__node_get(const struct lil_node *map, const char *key);

/* The pair whose key is `key` (for the key's position), or NULL. */
const struct lil_node_pair *lil__node_pair(const struct lil_node *map, const char *key);

/* The subtree as a JSON value (new reference; NULL only on allocation
 * failure).  Mappings become objects in source order. */
json_t *lil__node_json(const struct lil_node *n);

/* Name of a node's kind for messages: "a string", "a number", "a boolean",
 * "null", "a list", "a mapping". */
const char *lil__node_kind_name(const struct lil_node *n);

#endif
