/*
 * yaml_load.c -- a loop spec's text to the document tree of node.h.
 *
 * YAML goes through libyaml's event API (yaml_parser_parse); the tree is
 * built without recursion: an array of open collections (frames, at most
 * max_depth of them) and one stack of finished children (`pend`) shared by
 * all frames.  When a collection ends, its children are the top of `pend`;
 * they are copied into an exact-size array in the arena and popped.  Work
 * and memory are linear in the input.
 *
 * Memory: nodes live in node chunks and every other byte (text of non-string
 * scalars, item and pair arrays) in byte chunks of the document's arena, so
 * lil__doc_free is one walk over the chunks (dropping each scalar's json
 * value) and no per-node free.  A string scalar's `str` is the json string's
 * own buffer (no copy).
 *
 * Positions: libyaml's marks count characters; diagnostics want 1-based
 * lines and character columns, with lines cut at LF exactly as
 * lil__diags_attach_source does, and byte offsets.  A cursor walks the text
 * forward from one mark to the next (event marks never go back), so the
 * conversion is linear too; a scalar's end is found with a copy of the
 * cursor, and its offset map (srcmap.h) is built by yaml_scalar.c.  Reader
 * errors (control characters) come with a byte offset instead.  Errors are
 * worded by yaml_errors.c (invalid UTF-8 is found there before libyaml
 * runs).
 *
 * Duplicate keys: a linear scan while a mapping has few keys; from
 * KEYSET_MIN keys on, a jansson object (seeded hash) holds its keys, so a
 * mapping of many keys costs O(n) and colliding keys cannot make it
 * quadratic.
 *
 * JSON (name ending in ".json") is read by json_load.c; scalars are
 * resolved by yaml_scalar.c (YAML 1.2 core schema and tags).  yaml_load.h
 * holds what the three files share.
 */
#include "loopspec/yaml_load.h"

#include <limits.h>
#include <locale.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/alloc.h"
#include "base/env.h"
#include "json/json.h"
#include "loopspec/node.h"
#include "loopspec/srcmap.h"

#define ARENA_ALIGN    16u
#define BYTE_CHUNK_MIN 4096u
#define BYTE_CHUNK_MAX (256u << 10)
#define NODE_CHUNK_MIN 32u
#define NODE_CHUNK_MAX 4096u
#define DEPTH_CAP      1000u /* max_depth is clamped to this (node.c recurses) */

/* ------------------------------------------------------------------------ */
/* Arena                                                                    */

struct byte_chunk {
    struct byte_chunk *next;
    size_t used, cap;
    /* cppcheck-suppress unusedStructMember ; the header is 32 bytes: data stays 16-aligned */
    size_t pad;
};

struct node_chunk {
    struct node_chunk *next;
    size_t n, cap;
    struct lil_node nodes[];
};

struct lil_doc_arena {
    struct byte_chunk *bytes;
    struct node_chunk *nodes;
    size_t next_bytes; /* size of the next byte chunk */
    size_t next_nodes; /* nodes in the next node chunk */
};

void *lil__load_arena_alloc(const struct lil_env *env, struct lil_doc_arena *a,
                            size_t size)
{
    struct byte_chunk *c = a->bytes;
    size_t cap;

    if (size > SIZE_MAX / 2)
        return NULL;
    size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (c && c->cap - c->used >= size) {
        c->used += size;
        return (unsigned char *)(c + 1) + c->used - size;
    }
    cap = size > a->next_bytes ? size : a->next_bytes;
    c = lil__malloc(env, sizeof(*c) + cap);
    if (!c)
        return NULL;
    c->cap = cap;
    c->used = size;
    if (size > a->next_bytes && a->bytes) {
        /* A big block: keep the current chunk in front, it still has room. */
        c->next = a->bytes->next;
        a->bytes->next = c;
    } else {
        c->next = a->bytes;
        a->bytes = c;
        if (a->next_bytes < BYTE_CHUNK_MAX)
            a->next_bytes *= 2;
    }
    return c + 1;
}

char *lil__load_arena_strndup(const struct lil_env *env, struct lil_doc_arena *a,
                              const char *s, size_t n)
{
    char *p = lil__load_arena_alloc(env, a, n + 1);

    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

struct lil_node *lil__load_arena_node(const struct lil_env *env,
                                      struct lil_doc_arena *a)
{
    struct node_chunk *c = a->nodes;
    struct lil_node *nd;

    if (!c || c->n == c->cap) {
        c = lil__malloc(env, sizeof(*c) + a->next_nodes * sizeof(struct lil_node));
        if (!c)
            return NULL;
        c->n = 0;
        c->cap = a->next_nodes;
        c->next = a->nodes;
        a->nodes = c;
        if (a->next_nodes < NODE_CHUNK_MAX)
            a->next_nodes *= 2;
    }
    nd = &c->nodes[c->n++];
    memset(nd, 0, sizeof(*nd));
    return nd;
}

static void arena_free(const struct lil_env *env, struct lil_doc_arena *a)
{
    if (!a)
        return;
    while (a->nodes) {
        struct node_chunk *c = a->nodes;

        for (size_t i = 0; i < c->n; i++)
            json_decref(c->nodes[i].value);
        a->nodes = c->next;
        lil__free(env, c);
    }
    while (a->bytes) {
        struct byte_chunk *c = a->bytes;

        a->bytes = c->next;
        lil__free(env, c);
    }
    lil__free(env, a);
}

/* ------------------------------------------------------------------------ */
/* The loader                                                               */

static struct lil_pos pos_of(const struct cursor *c)
{
    struct lil_pos p;

    p.line = c->line + 1 > UINT_MAX ? UINT_MAX : (unsigned)(c->line + 1);
    p.col = c->col + 1 > UINT_MAX ? UINT_MAX : (unsigned)(c->col + 1);
    p.offset = c->bytes;
    return p;
}

/* Advance c by one character of text (a UTF-8 sequence, or one stray byte). */
static void cursor_step(struct cursor *c, const char *text, size_t len)
{
    unsigned char b = (unsigned char)text[c->bytes];
    size_t w = b < 0xc0 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;

    if (b == '\n') {
        c->line++;
        c->col = 0;
    } else {
        c->col++;
    }
    c->bytes = len - c->bytes < w ? len : c->bytes + w;
    c->chars++;
}

/* The position of byte offset off (cursor from the start: used for errors). */
struct lil_pos lil__load_pos_at_byte(const char *text, size_t len, size_t off)
{
    struct cursor c = {0, 0, 0, 0};
    const char *nl;

    if (off > len)
        off = len;
    while ((nl = memchr(text + c.bytes, '\n', off - c.bytes)) != NULL) {
        c.line++;
        c.bytes = (size_t)(nl - text) + 1;
    }
    c.col = lil__srcmap_chars(text + c.bytes, off - c.bytes);
    c.bytes = off;
    return pos_of(&c);
}

static struct lil_pos pos_of_mark(struct loader *ld, const yaml_mark_t *m)
{
    struct cursor *c = &ld->cur;

    if (m->index < c->chars || c->bytes < ld->bom) {
        /* the start, or a mark of an error that goes back */
        memset(c, 0, sizeof(*c));
        c->bytes = ld->bom;
        c->col = ld->bom ? 1 : 0; /* the BOM is a character of line 1 */
    }
    while (c->chars < m->index && c->bytes < ld->len)
        cursor_step(c, ld->text, ld->len);
    return pos_of(c);
}

static bool diags_nomem(const struct loader *ld)
{
    return ld->diags->nomem;
}

/* Report an error and stop: LIL_E_SPEC (LIL_E_NOMEM if it could not be
 * recorded). */
lil_status lil__load_fail_at(struct loader *ld, const char *code, struct lil_pos pos,
                             const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    lil__diag(ld->diags, LIL_SEV_ERROR, code, pos, NULL, "%s", msg);
    return diags_nomem(ld) ? LIL_E_NOMEM : LIL_E_SPEC;
}

/* s (n bytes) for a message: at most MSG_TEXT_MAX bytes, cut at a character
 * boundary, control characters as '?', "..." when cut. */
const char *lil__load_msg_text(const char *s, size_t n, char out[MSG_TEXT_MAX + 4])
{
    size_t i = 0, k = 0;

    while (i < n && k < MSG_TEXT_MAX) {
        unsigned char b = (unsigned char)s[i];
        size_t w = b < 0xc0 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;

        if (w > n - i || k + w > MSG_TEXT_MAX)
            break;
        if (b < 0x20 || b == 0x7f) {
            out[k++] = '?';
            i++;
            continue;
        }
        memcpy(out + k, s + i, w);
        k += w;
        i += w;
    }
    if (i < n) {
        memcpy(out + k, "...", 3);
        k += 3;
    }
    out[k] = '\0';
    return out;
}

/* ------------------------------------------------------------------------ */
/* Building the tree                                                        */

static struct frame *top(struct loader *ld)
{
    return ld->depth ? &ld->frames[ld->depth - 1] : NULL;
}

static lil_status push_pending(struct loader *ld, struct lil_node *nd)
{
    size_t size = sizeof(struct lil_node *);
    struct lil_node **p =
        lil__grow(ld->env, ld->pend, &ld->pend_cap, ld->npend, size, 64);

    if (!p)
        return LIL_E_NOMEM;
    ld->pend = p;
    ld->pend[ld->npend++] = nd;
    return LIL_OK;
}

/* The key in f (a mapping) equal to key, or NULL.  Linear for small
 * mappings, then through the frame's hash set. */
static lil_status find_key(struct loader *ld, struct frame *f,
                           const struct lil_node *key, const struct lil_node **dup)
{
    size_t nkeys = (ld->npend - f->base) / 2;

    *dup = NULL;
    if (nkeys >= KEYSET_MIN && !f->keys) {
        f->keys = json_object();
        if (!f->keys)
            return LIL_E_NOMEM;
        for (size_t i = 0; i < nkeys; i++) {
            const struct lil_node *k = ld->pend[f->base + 2 * i];

            if (json_object_setn_new_nocheck(f->keys, k->str, k->str_len, json_null()))
                return LIL_E_NOMEM;
        }
    }
    if (f->keys && !json_object_getn(f->keys, key->str, key->str_len))
        return json_object_setn_new_nocheck(f->keys, key->str, key->str_len,
                                            json_null())
                   ? LIL_E_NOMEM
                   : LIL_OK;
    for (size_t i = 0; i < nkeys; i++) {
        const struct lil_node *k = ld->pend[f->base + 2 * i];

        if (k->str_len == key->str_len && memcmp(k->str, key->str, k->str_len) == 0) {
            *dup = k;
            break;
        }
    }
    return LIL_OK;
}

/* nd is about to become a key of f: a scalar, as a string, not seen yet. */
static lil_status check_key(struct loader *ld, struct frame *f, struct lil_node *nd)
{
    const struct lil_node *dup = NULL;
    lil_status rc;

    if (nd->kind != LIL_NODE_SCALAR)
        return lil__load_fail_at(ld, "yaml", nd->pos,
                                 "a mapping key must be a scalar, not %s",
                                 nd->kind == LIL_NODE_SEQ ? "a list" : "a mapping");
    if (!json_is_string(nd->value)) {
        json_t *s = json_stringn_nocheck(nd->str, nd->str_len);

        if (!s)
            return LIL_E_NOMEM;
        json_decref(nd->value);
        nd->value = s;
        nd->str = json_string_value(s);
    }
    if (ld->json)
        return LIL_OK; /* jansson refused duplicates already */
    rc = find_key(ld, f, nd, &dup);
    if (rc == LIL_OK && dup) {
        char t[MSG_TEXT_MAX + 4];

        rc = lil__load_fail_at(
            ld, "yaml", nd->pos,
            "duplicate key '%s' (first at line %u): a key appears once in a "
            "mapping; keep one of the two",
            lil__load_msg_text(nd->str, nd->str_len, t), dup->pos.line);
    }
    return rc;
}

/* Attach a new node (a scalar, or a collection that just started) to the
 * open collection, or make it the root. */
static lil_status add_child(struct loader *ld, struct lil_node *nd)
{
    struct frame *f = top(ld);

    if (!f) {
        ld->root = nd;
        return LIL_OK;
    }
    if (f->node->kind == LIL_NODE_MAP && (ld->npend - f->base) % 2 == 0) {
        lil_status rc = check_key(ld, f, nd);

        if (rc != LIL_OK)
            return rc;
    }
    return push_pending(ld, nd);
}

static lil_status no_anchor(struct loader *ld, const yaml_event_t *ev)
{
    return lil__load_fail_at(ld, "yaml", pos_of_mark(ld, &ev->start_mark),
                             "anchors and aliases are not supported (&name, *name): "
                             "write the value out in full where it is used");
}

/* The byte offset of a mark at or after the cursor (the cursor stays). */
static size_t offset_of_mark(const struct loader *ld, const yaml_mark_t *m)
{
    struct cursor c = ld->cur;

    while (c.chars < m->index && c.bytes < ld->len)
        cursor_step(&c, ld->text, ld->len);
    return c.bytes;
}

static enum lil_scalar_style style_of(yaml_scalar_style_t s)
{
    switch (s) {
    case YAML_SINGLE_QUOTED_SCALAR_STYLE:
        return LIL_SCALAR_SINGLE;
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE:
        return LIL_SCALAR_DOUBLE;
    case YAML_LITERAL_SCALAR_STYLE:
        return LIL_SCALAR_LITERAL;
    case YAML_FOLDED_SCALAR_STYLE:
        return LIL_SCALAR_FOLDED;
    default:
        return LIL_SCALAR_PLAIN;
    }
}

/* The column (0-based) of the innermost open collection, -1 at the root. */
static int parent_indent(struct loader *ld)
{
    const struct frame *f = top(ld);

    return f && f->node->pos.col > 0 && f->node->pos.col <= INT_MAX
               ? (int)f->node->pos.col - 1
               : -1;
}

static lil_status on_scalar(struct loader *ld, const yaml_event_t *ev)
{
    struct lil_pos pos = pos_of_mark(ld, &ev->start_mark);
    size_t n = ev->data.scalar.length;
    struct lil_node *nd;
    lil_status rc;

    if (ev->data.scalar.anchor)
        return no_anchor(ld, ev);
    if (n > ld->lim.max_scalar)
        return lil__load_fail_at(
            ld, "yaml", pos,
            "a scalar of %zu bytes is longer than the limit of %zu bytes", n,
            ld->lim.max_scalar);
    if (memchr(ev->data.scalar.value, '\0', n))
        return lil__load_fail_at(ld, "yaml", pos,
                                 "a NUL character is not allowed in a scalar");
    nd = lil__load_arena_node(ld->env, ld->arena);
    if (!nd)
        return LIL_E_NOMEM;
    nd->kind = LIL_NODE_SCALAR;
    nd->pos = pos;
    nd->end = offset_of_mark(ld, &ev->end_mark);
    rc = lil__load_resolve_scalar(ld, nd, ev);
    if (rc == LIL_OK && !ld->json) /* JSON: json_load.c, on jansson's strings */
        rc = lil__load_scalar_map(ld, nd, style_of(ev->data.scalar.style),
                                  parent_indent(ld));
    return rc == LIL_OK ? add_child(ld, nd) : rc;
}

static lil_status push_frame(struct loader *ld, struct lil_node *nd)
{
    struct frame *f =
        lil__grow(ld->env, ld->frames, &ld->frames_cap, ld->depth, sizeof(*f), 16);

    if (!f)
        return LIL_E_NOMEM;
    ld->frames = f;
    ld->frames[ld->depth].node = nd;
    ld->frames[ld->depth].base = ld->npend;
    ld->frames[ld->depth].keys = NULL;
    ld->depth++;
    return LIL_OK;
}

static lil_status on_start(struct loader *ld, const yaml_event_t *ev,
                           enum lil_node_kind kind)
{
    bool seq = kind == LIL_NODE_SEQ;
    const unsigned char *anchor =
        seq ? ev->data.sequence_start.anchor : ev->data.mapping_start.anchor;
    const unsigned char *utag =
        seq ? ev->data.sequence_start.tag : ev->data.mapping_start.tag;
    enum tag t = lil__load_tag_of(utag);
    struct lil_pos pos = pos_of_mark(ld, &ev->start_mark);
    struct lil_node *nd;
    lil_status rc;

    if (anchor)
        return no_anchor(ld, ev);
    if (t != TAG_NONE && t != TAG_NONSPECIFIC && t != (seq ? TAG_SEQ : TAG_MAP))
        return lil__load_bad_tag(ld, pos, utag, seq ? "a list" : "a mapping");
    if (ld->depth >= ld->lim.max_depth)
        return lil__load_fail_at(ld, "yaml", pos, "nesting deeper than %u levels",
                                 ld->lim.max_depth);
    nd = lil__load_arena_node(ld->env, ld->arena);
    if (!nd)
        return LIL_E_NOMEM;
    nd->kind = kind;
    nd->pos = pos;
    rc = add_child(ld, nd);
    return rc == LIL_OK ? push_frame(ld, nd) : rc;
}

/* Close the innermost collection: its children move into the arena. */
static lil_status on_end(struct loader *ld)
{
    struct frame *f = top(ld);
    struct lil_node *nd;
    struct lil_node **kids;
    size_t n;

    if (!f)
        return LIL_OK; /* libyaml's events are balanced: cannot happen */
    nd = f->node;
    n = ld->npend - f->base;
    kids = n ? ld->pend + f->base : NULL; /* pend may still be NULL */
    if (nd->kind == LIL_NODE_SEQ && n) {
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
        nd->items = lil__load_arena_alloc(ld->env, ld->arena, n * sizeof(*nd->items));
        if (!nd->items)
            return LIL_E_NOMEM;
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
        memcpy(nd->items, kids, n * sizeof(*nd->items));
        nd->n = n;
    } else if (n) {
        nd->pairs =
            lil__load_arena_alloc(ld->env, ld->arena, n / 2 * sizeof(*nd->pairs));
        if (!nd->pairs)
            return LIL_E_NOMEM;
        for (size_t i = 0; i < n / 2; i++) {
            nd->pairs[i].key = kids[2 * i];
            nd->pairs[i].value = kids[2 * i + 1];
        }
        nd->n = n / 2;
    }
    json_decref(f->keys);
    f->keys = NULL;
    ld->npend = f->base;
    ld->depth--;
    return LIL_OK;
}

static lil_status on_event(struct loader *ld, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (ld->docs++ == 0)
            return LIL_OK;
        return lil__load_fail_at(
            ld, "yaml", pos_of_mark(ld, &ev->start_mark),
            "a second document is not allowed (one spec per file): remove the "
            "'---' line and what follows, or put it in a file of its own");
    case YAML_ALIAS_EVENT:
        return no_anchor(ld, ev);
    case YAML_SCALAR_EVENT:
        return on_scalar(ld, ev);
    case YAML_SEQUENCE_START_EVENT:
        return on_start(ld, ev, LIL_NODE_SEQ);
    case YAML_MAPPING_START_EVENT:
        return on_start(ld, ev, LIL_NODE_MAP);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return on_end(ld);
    default:
        return LIL_OK;
    }
}

lil_status lil__load_run_parser(struct loader *ld)
{
    yaml_parser_t p;
    yaml_event_t ev;
    lil_status rc = LIL_OK;
    bool end = false;

    if (!yaml_parser_initialize(&p))
        return LIL_E_NOMEM;
    /* UTF-8 only (no guessing UTF-16 from a BOM); libyaml then mishandles
     * a UTF-8 BOM, so it does not see it. */
    yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
    ld->bom = ld->len >= 3 && memcmp(ld->text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
    memset(&ld->cur, 0, sizeof(ld->cur));
    yaml_parser_set_input_string(&p, (const unsigned char *)ld->text + ld->bom,
                                 ld->len - ld->bom);
    while (rc == LIL_OK && !end) {
        if (!yaml_parser_parse(&p, &ev)) {
            rc = lil__load_yaml_error(ld, &p);
            break;
        }
        lil__load_note_event(ld, &ev);
        end = ev.type == YAML_STREAM_END_EVENT;
        rc = on_event(ld, &ev);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                             */

static struct lil_doc_limits limits(const struct lil_doc_limits *lim)
{
    struct lil_doc_limits l = {LIL_DOC_MAX_BYTES, LIL_DOC_MAX_DEPTH,
                               LIL_DOC_MAX_SCALAR};

    if (lim && lim->max_bytes)
        l.max_bytes = lim->max_bytes;
    if (lim && lim->max_depth)
        l.max_depth = lim->max_depth < DEPTH_CAP ? lim->max_depth : DEPTH_CAP;
    if (lim && lim->max_scalar)
        l.max_scalar = lim->max_scalar;
    return l;
}

static bool is_json_name(const char *name)
{
    size_t n = name ? strlen(name) : 0;

    return n >= 5 && strcmp(name + n - 5, ".json") == 0;
}

/* Checks on the raw bytes, before any parsing. */
static lil_status precheck(struct loader *ld)
{
    const char *nul;

    if (ld->len > ld->lim.max_bytes)
        return lil__load_too_big(ld);
    nul = memchr(ld->text, '\0', ld->len);
    if (nul)
        return lil__load_fail_at(
            ld, "yaml",
            lil__load_pos_at_byte(ld->text, ld->len, (size_t)(nul - ld->text)),
            "a NUL byte is not allowed in the text");
    return ld->json ? LIL_OK : lil__load_check_utf8(ld); /* JSON: jansson's `json` */
}

static void loader_free(struct loader *ld)
{
    for (size_t i = 0; i < ld->depth; i++)
        json_decref(ld->frames[i].keys);
    lil__free(ld->env, ld->frames);
    lil__free(ld->env, ld->pend);
    json_decref(ld->jv);
    if (ld->c_locale)
        freelocale(ld->c_locale);
}

static lil_status doc_parse(struct lil_doc *doc, const struct lil_env *env,
                            const char *name, const char *text, size_t len,
                            const struct lil_doc_limits *lim, struct lil_diags *diags)
{
    struct loader ld;
    lil_status rc;

    doc->env = env;
    doc->root = NULL;
    doc->arena = NULL;
    memset(&ld, 0, sizeof(ld));
    ld.env = env;
    ld.diags = diags;
    ld.text = text ? text : "";
    ld.file = ld.text;
    ld.len = text ? len : 0;
    ld.lim = limits(lim);
    ld.json = is_json_name(name);
    rc = precheck(&ld);
    if (rc != LIL_OK)
        return rc == LIL_E_SPEC ? LIL_OK : rc;
    ld.arena = lil__calloc(env, 1, sizeof(*ld.arena));
    if (!ld.arena)
        return LIL_E_NOMEM;
    ld.arena->next_bytes = BYTE_CHUNK_MIN;
    ld.arena->next_nodes = NODE_CHUNK_MIN;
    rc = ld.json ? lil__load_json(&ld) : lil__load_run_parser(&ld);
    loader_free(&ld);
    if (rc != LIL_OK) {
        arena_free(env, ld.arena);
        return rc == LIL_E_SPEC ? LIL_OK : rc;
    }
    doc->arena = ld.arena;
    doc->root = ld.root;
    return LIL_OK;
}

/* The tree's jansson values are allocated under env (json.h); an allocation
 * that failed is LIL_E_NOMEM even if the loader got past it. */
lil_status lil__doc_parse(struct lil_doc *doc, const struct lil_env *env,
                          const char *name, const char *text, size_t len,
                          const struct lil_doc_limits *lim, struct lil_diags *diags)
{
    struct lil_json_scope sc;
    lil_status rc;

    lil__json_begin(&sc, env);
    rc = doc_parse(doc, env, name, text, len, lim, diags);
    if (lil__json_end(&sc) != LIL_OK && rc == LIL_OK) {
        lil__doc_free(doc);
        rc = LIL_E_NOMEM;
    }
    return rc;
}

void lil__doc_free(struct lil_doc *doc)
{
    if (!doc)
        return;
    if (doc->arena)
        arena_free(doc->env, doc->arena);
    doc->arena = NULL;
    doc->root = NULL;
}
