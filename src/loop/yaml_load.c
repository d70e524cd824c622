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
 * lines and byte columns, with lines cut at LF exactly as
 * lil__diags_attach_source does.  A cursor walks the text forward from one
 * mark to the next (event marks never go back), so the conversion is
 * linear too.  Reader errors (invalid UTF-8, control characters) come with
 * a byte offset instead.
 *
 * Duplicate keys: a linear scan while a mapping has few keys; from
 * KEYSET_MIN keys on, a jansson object (seeded hash) holds its keys, so a
 * mapping of many keys costs O(n) and colliding keys cannot make it
 * quadratic.
 *
 * JSON (name ending in ".json"): libyaml accepts things JSON does not
 * (comments, single quotes, plain strings, trailing commas) and misreads a
 * few valid JSON texts (a surrogate pair escape "\ud83d\ude00", a newline
 * between a key and its colon, a tab before the first token, keys over 1024
 * characters, C1 control characters).  So jansson decides what is valid
 * JSON (diagnostic code "json", duplicates refused) and what it means, and
 * libyaml only gives the positions: surrogate escapes are first rewritten
 * to private-use escapes of the same length (\uD83D -> \uE83D) so that
 * libyaml reads the text and positions stay right; then libyaml's tree must
 * match jansson's value node for node, and strings are taken from jansson.
 * When libyaml fails or its tree differs, the tree is built from jansson's
 * value with no positions (0:0).  JSON integers beyond 64 bits are refused
 * (jansson: "too big integer").
 *
 * Reals that JSON cannot hold (.inf, .nan, 1e400) keep their text as a
 * string value (node->quoted stays false), so a consumer that wants a
 * number reports a type error.
 */
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <yaml.h>

#include "base/alloc.h"
#include "base/env.h"
#include "loop/node.h"

#define ARENA_ALIGN     16u
#define BYTE_CHUNK_MIN  4096u
#define BYTE_CHUNK_MAX  (256u << 10)
#define NODE_CHUNK_MIN  32u
#define NODE_CHUNK_MAX  4096u
#define KEYSET_MIN      8u    /* keys in a mapping before a hash set is used */
#define DEPTH_CAP       1000u /* max_depth is clamped to this (node.c recurses) */
#define MSG_TEXT_MAX    48u   /* bytes of a key or scalar quoted in a message */
#define CORE_TAG_PREFIX "tag:yaml.org,2002:"

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

static void *arena_alloc(const struct lil_env *env, struct lil_doc_arena *a,
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

static char *arena_strndup(const struct lil_env *env, struct lil_doc_arena *a,
                           const char *s, size_t n)
{
    char *p = arena_alloc(env, a, n + 1);

    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static struct lil_node *arena_node(const struct lil_env *env, struct lil_doc_arena *a)
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

/* An open collection. */
struct frame {
    struct lil_node *node;
    size_t base;  /* index in pend of its first child */
    json_t *keys; /* MAP with KEYSET_MIN keys or more: the keys seen */
};

/* Where libyaml's character index `chars` is in bytes and lines. */
struct cursor {
    size_t chars, bytes;
    size_t line;       /* 0-based */
    size_t line_start; /* byte offset of the line's first byte */
};

struct loader {
    const struct lil_env *env;
    struct lil_diags *diags;
    const char *text; /* what libyaml reads (JSON: maybe a rewritten copy) */
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
    json_t *jv;        /* JSON mode: jansson's value (nodes keep their own refs) */
};

static struct lil_pos pos_of(const struct cursor *c)
{
    struct lil_pos p;
    size_t col = c->bytes - c->line_start + 1;

    p.line = c->line + 1 > UINT_MAX ? UINT_MAX : (unsigned)(c->line + 1);
    p.col = col > UINT_MAX ? UINT_MAX : (unsigned)col;
    return p;
}

/* Advance c by one character of text (a UTF-8 sequence, or one stray byte). */
static void cursor_step(struct cursor *c, const char *text, size_t len)
{
    unsigned char b = (unsigned char)text[c->bytes];
    size_t w = b < 0xc0 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;

    if (b == '\n') {
        c->line++;
        c->line_start = c->bytes + 1;
    }
    c->bytes = len - c->bytes < w ? len : c->bytes + w;
    c->chars++;
}

/* The position of byte offset off (cursor from the start: used for errors). */
static struct lil_pos pos_at_byte(const char *text, size_t len, size_t off)
{
    struct cursor c = {0, 0, 0, 0};
    const char *nl;

    if (off > len)
        off = len;
    while ((nl = memchr(text + c.bytes, '\n', off - c.bytes)) != NULL) {
        c.line++;
        c.bytes = (size_t)(nl - text) + 1;
        c.line_start = c.bytes;
    }
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
static lil_status fail_at(struct loader *ld, const char *code, struct lil_pos pos,
                          const char *fmt, ...) LIL_PRINTF(4, 5);

static lil_status fail_at(struct loader *ld, const char *code, struct lil_pos pos,
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
static const char *msg_text(const char *s, size_t n, char out[MSG_TEXT_MAX + 4])
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
/* Scalars: the YAML 1.2 core schema                                        */

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

static enum tag tag_of(const unsigned char *utag)
{
    static const struct {
        const char *name;
        enum tag tag;
    } core[] = {{"str", TAG_STR},   {"int", TAG_INT},   {"float", TAG_FLOAT},
                {"bool", TAG_BOOL}, {"null", TAG_NULL}, {"seq", TAG_SEQ},
                {"map", TAG_MAP}};

    const char *tag = (const char *)utag;
    size_t plen = sizeof(CORE_TAG_PREFIX) - 1;

    if (!tag)
        return TAG_NONE;
    if (strcmp(tag, "!") == 0)
        return TAG_NONSPECIFIC;
    if (strncmp(tag, CORE_TAG_PREFIX, plen) != 0)
        return TAG_OTHER;
    for (size_t i = 0; i < sizeof(core) / sizeof(core[0]); i++)
        if (strcmp(tag + plen, core[i].name) == 0)
            return core[i].tag;
    return TAG_OTHER;
}

static bool text_is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

static bool text_is_any(const char *s, size_t n, const char *const *words)
{
    for (; *words; words++)
        if (text_is(s, n, *words))
            return true;
    return false;
}

static bool is_null_text(const char *s, size_t n)
{
    static const char *const words[] = {"~", "null", "Null", "NULL", NULL};

    return n == 0 || text_is_any(s, n, words);
}

/* 1 true, 0 false, -1 neither. */
static int bool_text(const char *s, size_t n)
{
    static const char *const yes[] = {"true", "True", "TRUE", NULL};
    static const char *const no[] = {"false", "False", "FALSE", NULL};

    return text_is_any(s, n, yes) ? 1 : text_is_any(s, n, no) ? 0 : -1;
}

static size_t count_digits(const char *s, size_t n, unsigned base)
{
    size_t i = 0;

    for (; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool ok = base == 16 ? (c >= '0' && c <= '9') ||
                                   ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
                             : c >= '0' && c < '0' + base;
        if (!ok)
            break;
    }
    return i;
}

/* The base of an integer text ([-+]?[0-9]+, 0o[0-7]+, 0x[0-9a-fA-F]+), or 0. */
static unsigned int_base(const char *s, size_t n)
{
    size_t sign = n > 0 && (s[0] == '-' || s[0] == '+');

    if (n > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
        unsigned base = s[1] == 'o' ? 8 : 16;

        if (count_digits(s + 2, n - 2, base) == n - 2)
            return base;
    }
    return n > sign && count_digits(s + sign, n - sign, 10) == n - sign ? 10 : 0;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool is_float_text(const char *s, size_t n)
{
    size_t i = n > 0 && (s[0] == '-' || s[0] == '+');
    size_t ip = count_digits(s + i, n - i, 10), fp = 0;

    i += ip;
    if (i < n && s[i] == '.') {
        i++;
        fp = count_digits(s + i, n - i, 10);
        i += fp;
    }
    if (ip == 0 && fp == 0)
        return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t ed;

        i++;
        i += i < n && (s[i] == '-' || s[i] == '+');
        ed = count_digits(s + i, n - i, 10);
        if (ed == 0)
            return false;
        i += ed;
    }
    return i == n;
}

static bool is_special_float(const char *s, size_t n)
{
    static const char *const inf[] = {".inf", ".Inf", ".INF", NULL};
    static const char *const nan[] = {".nan", ".NaN", ".NAN", NULL};
    size_t sign = n > 0 && (s[0] == '-' || s[0] == '+');

    return text_is_any(s + sign, n - sign, inf) || text_is_any(s, n, nan);
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?: TAG_INT, TAG_FLOAT or 0. */
static enum tag json_number(const char *s, size_t n)
{
    size_t i = n > 0 && s[0] == '-';
    size_t ip = count_digits(s + i, n - i, 10);
    size_t dot, frac;

    if (ip == 0 || (ip > 1 && s[i] == '0'))
        return TAG_NONE;
    i += ip;
    if (i == n)
        return TAG_INT;
    dot = i;
    if (s[i] == '.') {
        frac = count_digits(s + i + 1, n - i - 1, 10);
        if (frac == 0)
            return TAG_NONE;
        i += 1 + frac;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1 + (i + 1 < n && (s[i + 1] == '-' || s[i + 1] == '+'));
        size_t ed = count_digits(s + j, n - j, 10);

        if (ed == 0)
            return TAG_NONE;
        i = j + ed;
    }
    return i == n && i > dot ? TAG_FLOAT : TAG_NONE;
}

/* What a plain, untagged scalar is. */
static enum tag resolve_plain(const char *s, size_t n, bool json)
{
    if (json) {
        if (text_is(s, n, "null"))
            return TAG_NULL;
        if (text_is(s, n, "true") || text_is(s, n, "false"))
            return TAG_BOOL;
        return json_number(s, n); /* TAG_NONE: not a JSON literal */
    }
    if (is_null_text(s, n))
        return TAG_NULL;
    if (bool_text(s, n) >= 0)
        return TAG_BOOL;
    if (int_base(s, n))
        return TAG_INT;
    if (is_float_text(s, n) || is_special_float(s, n))
        return TAG_FLOAT;
    return TAG_STR;
}

static lil_status c_locale(struct loader *ld, locale_t *out)
{
    if (!ld->c_locale)
        ld->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    *out = ld->c_locale;
    return ld->c_locale ? LIL_OK : LIL_E_NOMEM;
}

/* The value of a float text (s is NUL-terminated at n); non-finite results
 * (.inf, .nan, overflow) keep the text as a string. */
static lil_status make_real(struct loader *ld, const char *s, size_t n, json_t **out)
{
    locale_t loc;
    double d;
    lil_status rc;

    *out = NULL;
    if (is_special_float(s, n)) {
        *out = json_stringn_nocheck(s, n);
        return *out ? LIL_OK : LIL_E_NOMEM;
    }
    rc = c_locale(ld, &loc);
    if (rc != LIL_OK)
        return rc;
    d = strtod_l(s, NULL, loc);
    *out = isfinite(d) ? json_real(d) : json_stringn_nocheck(s, n);
    return *out ? LIL_OK : LIL_E_NOMEM;
}

/* The value of an integer text of that base; a real when it does not fit
 * in 64 bits. */
static lil_status make_int(struct loader *ld, const char *s, size_t n, unsigned base,
                           json_t **out)
{
    bool neg = s[0] == '-';
    size_t i = base == 10 ? (s[0] == '-' || s[0] == '+') : 2;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    double d = 0.0;
    bool big = false;

    for (; i < n; i++) {
        unsigned c = (unsigned char)s[i];
        unsigned digit = c <= '9' ? c - '0' : (c | 0x20u) - 'a' + 10;

        d = d * base + digit;
        if (!big && v > (lim - digit) / base)
            big = true;
        v = v * base + digit;
    }
    if (big && base == 10)
        return make_real(ld, s, n, out);
    if (big)
        *out = isfinite(d) ? json_real(d) : json_stringn_nocheck(s, n);
    else
        *out = json_integer(neg ? (json_int_t)(0 - v) : (json_int_t)v);
    return *out ? LIL_OK : LIL_E_NOMEM;
}

/* !!float 0x1F: the integer's value as a real. */
static lil_status int_as_real(struct loader *ld, const char *s, size_t n, unsigned base,
                              json_t **out)
{
    lil_status rc = make_int(ld, s, n, base, out);

    if (rc == LIL_OK && json_is_integer(*out)) {
        json_t *r = json_real((double)json_integer_value(*out));

        json_decref(*out);
        *out = r;
        rc = r ? LIL_OK : LIL_E_NOMEM;
    }
    return rc;
}

static lil_status bad_tagged(struct loader *ld, struct lil_pos pos, const char *tag,
                             const char *s, size_t n)
{
    char t[MSG_TEXT_MAX + 4];

    return fail_at(ld, "yaml", pos, "'%s' is not a valid %s", msg_text(s, n, t), tag);
}

/* The json value of a scalar whose type t is known (s NUL-terminated). */
static lil_status scalar_value(struct loader *ld, enum tag t, struct lil_pos pos,
                               const char *s, size_t n, json_t **out)
{
    unsigned base;
    int b;

    *out = NULL;
    switch (t) {
    case TAG_NULL:
        if (!is_null_text(s, n))
            return bad_tagged(ld, pos, "!!null", s, n);
        *out = json_null();
        return LIL_OK;
    case TAG_BOOL:
        b = bool_text(s, n);
        if (b < 0)
            return bad_tagged(ld, pos, "!!bool", s, n);
        *out = json_boolean(b);
        return LIL_OK;
    case TAG_INT:
        base = int_base(s, n);
        return base ? make_int(ld, s, n, base, out)
                    : bad_tagged(ld, pos, "!!int", s, n);
    case TAG_FLOAT:
        base = int_base(s, n);
        if (base == 8 || base == 16)
            return int_as_real(ld, s, n, base, out);
        if (base == 0 && !is_float_text(s, n) && !is_special_float(s, n))
            return bad_tagged(ld, pos, "!!float", s, n);
        return make_real(ld, s, n, out);
    default:
        *out = json_stringn_nocheck(s, n);
        return *out ? LIL_OK : LIL_E_NOMEM;
    }
}

static lil_status bad_tag(struct loader *ld, struct lil_pos pos,
                          const unsigned char *tag, const char *what)
{
    char t[MSG_TEXT_MAX + 4];
    const char *s = (const char *)tag;
    size_t plen = sizeof(CORE_TAG_PREFIX) - 1;
    bool core = strncmp(s, CORE_TAG_PREFIX, plen) == 0; /* shown as !!name */

    if (core)
        s += plen;
    return fail_at(ld, "yaml", pos,
                   "tag '%s%s' is not supported on %s (only !!str, !!int, !!float, "
                   "!!bool, !!null, !!seq and !!map)",
                   core ? "!!" : "", msg_text(s, strlen(s), t), what);
}

/* JSON mode: libyaml's reading of a text differs from jansson's (which is
 * right); the tree will be built from jansson's value. */
static lil_status trees_differ(struct loader *ld)
{
    ld->yaml_failed = true;
    return LIL_E_SPEC;
}

/* Fill a scalar node from its event. */
static lil_status resolve_scalar(struct loader *ld, struct lil_node *nd,
                                 const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    enum tag t = tag_of(ev->data.scalar.tag);
    lil_status rc;

    nd->quoted = !plain;
    if (t == TAG_OTHER || t == TAG_SEQ || t == TAG_MAP)
        return bad_tag(ld, nd->pos, ev->data.scalar.tag, "a scalar");
    if (t == TAG_NONE && plain)
        t = resolve_plain(s, n, ld->json);
    else if (t == TAG_NONE || t == TAG_NONSPECIFIC)
        t = TAG_STR;
    if (t == TAG_NONE) /* JSON: jansson accepted the text, libyaml misread it */
        return trees_differ(ld);
    rc = scalar_value(ld, t, nd->pos, s, n, &nd->value);
    if (rc != LIL_OK)
        return rc;
    if (json_is_string(nd->value)) {
        nd->str = json_string_value(nd->value);
        nd->str_len = json_string_length(nd->value);
        return LIL_OK;
    }
    nd->str = arena_strndup(ld->env, ld->arena, s, n);
    nd->str_len = n;
    return nd->str ? LIL_OK : LIL_E_NOMEM;
}

/* ------------------------------------------------------------------------ */
/* Building the tree                                                        */

static struct frame *top(struct loader *ld)
{
    return ld->depth ? &ld->frames[ld->depth - 1] : NULL;
}

static lil_status push_pending(struct loader *ld, struct lil_node *nd)
{
    if (ld->npend == ld->pend_cap) {
        size_t cap = ld->pend_cap ? ld->pend_cap * 2 : 64;
        struct lil_node **p = lil__realloc(ld->env, ld->pend, cap * sizeof(*p));

        if (!p)
            return LIL_E_NOMEM;
        ld->pend = p;
        ld->pend_cap = cap;
    }
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
        return fail_at(ld, "yaml", nd->pos, "a mapping key must be a scalar, not %s",
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

        rc = fail_at(ld, "yaml", nd->pos, "duplicate key '%s' (first at line %u)",
                     msg_text(nd->str, nd->str_len, t), dup->pos.line);
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
    return fail_at(ld, "yaml", pos_of_mark(ld, &ev->start_mark),
                   "anchors and aliases are not supported");
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
        return fail_at(ld, "yaml", pos,
                       "a scalar of %zu bytes is longer than the limit of %zu bytes", n,
                       ld->lim.max_scalar);
    if (memchr(ev->data.scalar.value, '\0', n))
        return fail_at(ld, "yaml", pos, "a NUL character is not allowed in a scalar");
    nd = arena_node(ld->env, ld->arena);
    if (!nd)
        return LIL_E_NOMEM;
    nd->kind = LIL_NODE_SCALAR;
    nd->pos = pos;
    rc = resolve_scalar(ld, nd, ev);
    return rc == LIL_OK ? add_child(ld, nd) : rc;
}

static lil_status push_frame(struct loader *ld, struct lil_node *nd)
{
    if (ld->depth == ld->frames_cap) {
        size_t cap = ld->frames_cap ? ld->frames_cap * 2 : 16;
        struct frame *f = lil__realloc(ld->env, ld->frames, cap * sizeof(*f));

        if (!f)
            return LIL_E_NOMEM;
        ld->frames = f;
        ld->frames_cap = cap;
    }
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
    enum tag t = tag_of(utag);
    struct lil_pos pos = pos_of_mark(ld, &ev->start_mark);
    struct lil_node *nd;
    lil_status rc;

    if (anchor)
        return no_anchor(ld, ev);
    if (t != TAG_NONE && t != TAG_NONSPECIFIC && t != (seq ? TAG_SEQ : TAG_MAP))
        return bad_tag(ld, pos, utag, seq ? "a list" : "a mapping");
    if (ld->depth >= ld->lim.max_depth)
        return fail_at(ld, "yaml", pos, "nesting deeper than %u levels",
                       ld->lim.max_depth);
    nd = arena_node(ld->env, ld->arena);
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
        nd->items = arena_alloc(ld->env, ld->arena, n * sizeof(*nd->items));
        if (!nd->items)
            return LIL_E_NOMEM;
        memcpy(nd->items, kids, n * sizeof(*nd->items));
        nd->n = n;
    } else if (n) {
        nd->pairs = arena_alloc(ld->env, ld->arena, n / 2 * sizeof(*nd->pairs));
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
        return fail_at(ld, "yaml", pos_of_mark(ld, &ev->start_mark),
                       "a second document is not allowed (one spec per file)");
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

/* libyaml stopped: turn its error into a diagnostic. */
static lil_status parser_error(struct loader *ld, const yaml_parser_t *p)
{
    const char *problem = p->problem ? p->problem : "cannot parse the text";
    struct lil_pos pos;

    if (p->error == YAML_MEMORY_ERROR)
        return LIL_E_NOMEM;
    if (ld->json) {
        ld->yaml_failed = true; /* valid JSON (jansson said so): no positions */
        return LIL_E_SPEC;
    }
    if (p->error == YAML_READER_ERROR) {
        pos = pos_at_byte(ld->text, ld->len, ld->bom + p->problem_offset);
        if (p->problem_value < 0)
            return fail_at(ld, "yaml", pos, "%s", problem);
        return fail_at(ld, "yaml", pos,
                       strstr(problem, "UTF-8") ? "%s (byte 0x%02X)"
                                                : "%s (character U+%04X)",
                       problem, (unsigned)p->problem_value);
    }
    pos = pos_of_mark(ld, &p->problem_mark);
    if (p->context) {
        struct lil_pos at = pos_of_mark(ld, &p->context_mark);

        return fail_at(ld, "yaml", pos, "%s (%s at line %u, column %u)", problem,
                       p->context, at.line, at.col);
    }
    return fail_at(ld, "yaml", pos, "%s", problem);
}

static lil_status run_parser(struct loader *ld)
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
            rc = parser_error(ld, &p);
            break;
        }
        end = ev.type == YAML_STREAM_END_EVENT;
        rc = on_event(ld, &ev);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* JSON mode                                                                */

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
    return pos_at_byte(ld->text, ld->len, off);
}

static bool hex4_surrogate(const char *s)
{
    /* D800-DFFF: high and low halves */
    return (s[0] == 'd' || s[0] == 'D') && s[1] && strchr("89abcdefABCDEF", s[1]) &&
           count_digits(s + 2, 2, 16) == 2;
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

static bool same_error(const json_error_t *a, const json_error_t *b)
{
    return a->position == b->position && strcmp(a->text, b->text) == 0;
}

/* jansson's verdict on the text.  Its lexer reports some failed
 * allocations as syntax errors, so an error counts only if a second try
 * gives the same one (a failing allocator fails the second try too, the
 * same way or not: anything else is LIL_E_NOMEM). */
static lil_status json_check(struct loader *ld)
{
    const size_t flags = JSON_DECODE_ANY | JSON_REJECT_DUPLICATES;
    json_error_t e, again;

    ld->jv = json_loadb(ld->text, ld->len, flags, &e);
    if (ld->jv)
        return LIL_OK;
    if (json_error_code(&e) == json_error_out_of_memory)
        return LIL_E_NOMEM;
    ld->jv = json_loadb(ld->text, ld->len, flags, &again);
    if (ld->jv)
        return LIL_OK;
    if (json_error_code(&again) == json_error_out_of_memory || !same_error(&e, &again))
        return LIL_E_NOMEM;
    return fail_at(ld, "json", json_error_pos(ld, &e), "%s", e.text);
}

static struct lil_node *new_node(struct loader *ld, enum lil_node_kind kind)
{
    struct lil_node *nd = arena_node(ld->env, ld->arena);

    if (nd)
        nd->kind = kind;
    return nd; /* pos 0:0 */
}

static lil_status from_json(struct loader *ld, json_t *v, size_t depth,
                            struct lil_node **out);

static lil_status scalar_from_json(struct loader *ld, json_t *v, struct lil_node *nd)
{
    json_malloc_t jmalloc;
    json_free_t jfree;
    char *s;

    nd->value = json_incref(v);
    nd->quoted = json_is_string(v);
    if (json_is_string(v)) {
        nd->str = json_string_value(v);
        nd->str_len = json_string_length(v);
        if (nd->str_len <= ld->lim.max_scalar)
            return LIL_OK;
        return fail_at(ld, "yaml", nd->pos,
                       "a scalar of %zu bytes is longer than the limit of %zu bytes",
                       nd->str_len, ld->lim.max_scalar);
    }
    s = json_dumps(v, JSON_ENCODE_ANY); /* the text of a number or literal */
    if (!s)
        return LIL_E_NOMEM;
    nd->str_len = strlen(s);
    nd->str = arena_strndup(ld->env, ld->arena, s, nd->str_len);
    json_get_alloc_funcs(&jmalloc, &jfree); /* the host may have set them */
    jfree(s);
    return nd->str ? LIL_OK : LIL_E_NOMEM;
}

static lil_status pairs_from_json(struct loader *ld, json_t *v, size_t depth,
                                  struct lil_node *nd)
{
    size_t i = 0;
    void *it;

    nd->pairs =
        arena_alloc(ld->env, ld->arena, json_object_size(v) * sizeof(*nd->pairs));
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
        return fail_at(ld, "yaml", nd->pos, "nesting deeper than %u levels",
                       ld->lim.max_depth);
    if (json_is_object(v))
        return pairs_from_json(ld, v, depth, nd);
    if (!json_is_array(v))
        return scalar_from_json(ld, v, nd);
    nd->items =
        arena_alloc(ld->env, ld->arena, json_array_size(v) * sizeof(*nd->items));
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

/* Walk the tree libyaml built and jansson's value together: they must
 * agree (else yaml_failed is set), and strings are taken from jansson (the
 * text libyaml read may have had its surrogate escapes rewritten). */
static lil_status match_json(struct loader *ld, struct lil_node *nd, json_t *v)
{
    lil_status rc = LIL_OK;
    void *it;

    if (nd->kind == LIL_NODE_SCALAR) {
        if (json_is_string(v) != json_is_string(nd->value) ||
            (!json_is_string(v) && !json_equal(v, nd->value)))
            return trees_differ(ld);
        return json_is_string(v)
                   ? take_string(nd, json_string_value(v), json_string_length(v))
                   : LIL_OK;
    }
    if (nd->kind == LIL_NODE_SEQ) {
        if (!json_is_array(v) || json_array_size(v) != nd->n)
            return trees_differ(ld);
        for (size_t i = 0; rc == LIL_OK && i < nd->n; i++)
            rc = match_json(ld, nd->items[i], json_array_get(v, i));
        return rc;
    }
    if (!json_is_object(v) || json_object_size(v) != nd->n)
        return trees_differ(ld);
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
static lil_status parse_json(struct loader *ld)
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
    rc = run_parser(ld);
    if (rc == LIL_OK && !ld->root)
        rc = trees_differ(ld); /* jansson found a value: libyaml must too */
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
        return fail_at(ld, "yaml", pos_at_byte(ld->text, ld->len, ld->lim.max_bytes),
                       "the file is %zu bytes, larger than the limit of %zu bytes",
                       ld->len, ld->lim.max_bytes);
    nul = memchr(ld->text, '\0', ld->len);
    if (nul)
        return fail_at(ld, "yaml",
                       pos_at_byte(ld->text, ld->len, (size_t)(nul - ld->text)),
                       "a NUL byte is not allowed in the text");
    return LIL_OK;
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

lil_status lil__doc_parse(struct lil_doc *doc, const struct lil_env *env,
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
    rc = ld.json ? parse_json(&ld) : run_parser(&ld);
    loader_free(&ld);
    if (rc != LIL_OK) {
        arena_free(env, ld.arena);
        return rc == LIL_E_SPEC ? LIL_OK : rc;
    }
    doc->arena = ld.arena;
    doc->root = ld.root;
    return LIL_OK;
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
