/*
 * yaml_load.h -- shared by the loader's files (yaml_load.c: arena, libyaml
 * events -> tree, limits, entry points; yaml_scalar.c: core-schema scalars
 * and tags; json_load.c: JSON mode).  Not used outside them: the loader's
 * interface is lil__doc_parse in node.h.  yaml_errors.c words libyaml's
 * errors.  lil__load_ is "the loader".
 *
 * A struct loader is one parse: the text, the limits, the document's arena,
 * the open collections (frames) with the finished children not yet placed
 * (pend), the position cursor and, in JSON mode, jansson's value.
 */
#ifndef LIL_SPEC_YAML_LOAD_H
#define LIL_SPEC_YAML_LOAD_H

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>

#include <yaml.h>

#include "json/json.h"
#include "loopspec/node.h"

#define KEYSET_MIN   8u  /* keys in a mapping before a hash set is used */
#define MSG_TEXT_MAX 48u /* bytes of a key or scalar quoted in a message */

/* An open collection. */
struct frame {
    struct lil_node *node;
    size_t base;  /* index in pend of its first child */
    json_t *keys; /* MAP with KEYSET_MIN keys or more: the keys seen */
};

/* Where libyaml's character index `chars` is in bytes and lines. */
struct cursor {
    size_t chars, bytes;
    size_t line; /* 0-based */
    size_t col;  /* characters since the line's start, 0-based */
};

struct loader {
    const struct lil_env *env;
    struct lil_diags *diags;
    const char *text; /* what libyaml reads (JSON: maybe a rewritten copy) */
    const char *file; /* the text as given (offset maps are built on it) */
    size_t len;
    size_t bom; /* 3 when text starts with a UTF-8 BOM (libyaml skips it) */
    struct lil_doc_limits lim;
    bool json;        /* JSON rules */
    bool yaml_failed; /* JSON mode: libyaml refused text jansson accepted */
    struct lil_doc_arena *arena;
    struct frame *frames;
    size_t depth, frames_cap;
    struct lil_node **pend;
    size_t npend, pend_cap;
    struct cursor cur;
    struct lil_node *root;
    unsigned docs;
    locale_t c_locale; /* for strtod_l, made on first use */
    /* The last scalar event (yaml_errors.c: a string left open). */
    bool quoted; /* it was single- or double-quoted */
    yaml_mark_t quoted_start, quoted_end;
    json_t *jv; /* JSON mode: jansson's value (nodes keep their own refs) */
};

/* A scalar's or collection's tag, as far as the core schema cares. */
enum tag {
    TAG_NONE,
    TAG_NONSPECIFIC,
    TAG_STR,
    TAG_INT,
    TAG_FLOAT,
    TAG_BOOL,
    TAG_NULL,
    TAG_SEQ,
    TAG_MAP,
    TAG_OTHER
};

/* ------------------------------------------------------------------------ */
/* yaml_load.c: arena, positions, errors, the parser                        */

/* size bytes (ARENA_ALIGN-aligned) / a copy of s NUL-terminated / a zeroed
 * node, in the document's arena; NULL when out of memory. */
void *lil__load_arena_alloc(const struct lil_env *env, struct lil_doc_arena *a,
                            size_t size);
char *lil__load_arena_strndup(const struct lil_env *env, struct lil_doc_arena *a,
                              const char *s, size_t n);
struct lil_node *lil__load_arena_node(const struct lil_env *env,
                                      struct lil_doc_arena *a);
struct lil_pos lil__load_pos_at_byte(const char *text, size_t len, size_t off);
lil_status lil__load_fail_at(struct loader *ld, const char *code, struct lil_pos pos,
                             const char *fmt, ...) LIL_PRINTF(4, 5);
const char *lil__load_msg_text(const char *s, size_t n, char out[MSG_TEXT_MAX + 4]);
/* libyaml's events over ld->text into ld->root. */
lil_status lil__load_run_parser(struct loader *ld);

/* ------------------------------------------------------------------------ */
/* yaml_scalar.c: core-schema scalars and tags                              */

enum tag lil__load_tag_of(const unsigned char *utag);
size_t lil__load_count_digits(const char *s, size_t n, unsigned base);
/* `yaml` error: tag not allowed on what ("a scalar", "a list", ...). */
lil_status lil__load_bad_tag(struct loader *ld, struct lil_pos pos,
                             const unsigned char *tag, const char *what);
lil_status lil__load_resolve_scalar(struct loader *ld, struct lil_node *nd,
                                    const yaml_event_t *ev);
/* nd->map, from the scalar's bytes nd->pos.offset..nd->end of ld->file in
 * that style (parent_indent: srcmap.h); no map when the scan does not give
 * nd->str. */
lil_status lil__load_scalar_map(struct loader *ld, struct lil_node *nd,
                                enum lil_scalar_style style, int parent_indent);

/* ------------------------------------------------------------------------ */
/* yaml_errors.c: errors in plain words                                     */

/* The text is larger than ld->lim.max_bytes: a `yaml` error at line 1. */
lil_status lil__load_too_big(struct loader *ld);
/* A `yaml` error at the first byte that is not UTF-8, if there is one. */
lil_status lil__load_check_utf8(struct loader *ld);
/* Remember what an error may need of the event just parsed. */
void lil__load_note_event(struct loader *ld, const yaml_event_t *ev);
/* libyaml stopped: its error as a diagnostic (LIL_E_SPEC), LIL_E_NOMEM. */
lil_status lil__load_yaml_error(struct loader *ld, const yaml_parser_t *p);

/* ------------------------------------------------------------------------ */
/* json_load.c: JSON mode                                                   */

lil_status lil__load_trees_differ(struct loader *ld);
/* The tree of a JSON text (jansson's checks, libyaml's positions). */
lil_status lil__load_json(struct loader *ld);

#endif
