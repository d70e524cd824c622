/*
 * yaml_scalar.c -- a YAML scalar event to its JSON value by the YAML 1.2
 * core schema (the table is in node.h): which tag a plain scalar resolves
 * to, the explicit tags allowed (!!str, !!int, !!float, !!bool, !!null,
 * !!seq, !!map; any other is an error), and the value of each type.  In
 * JSON mode only JSON's literals are resolved.
 *
 * Reals that JSON cannot hold (.inf, .nan, 1e400) keep their text as a
 * string value (node->quoted stays false), so a consumer that wants a
 * number reports a type error.
 *
 * A scalar's offset map (srcmap.h) is built here too, and copied into the
 * document's arena.
 */
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/alloc.h"
#include "json/json.h"
#include "loopspec/node.h"
#include "loopspec/srcmap.h"
#include "loopspec/yaml_load.h"

#define CORE_TAG_PREFIX "tag:yaml.org,2002:"

/* ------------------------------------------------------------------------ */
/* Scalars: the YAML 1.2 core schema                                        */

enum tag lil__load_tag_of(const unsigned char *utag)
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

size_t lil__load_count_digits(const char *s, size_t n, unsigned base)
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

        if (lil__load_count_digits(s + 2, n - 2, base) == n - 2)
            return base;
    }
    return n > sign && lil__load_count_digits(s + sign, n - sign, 10) == n - sign ? 10
                                                                                  : 0;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool is_float_text(const char *s, size_t n)
{
    size_t i = n > 0 && (s[0] == '-' || s[0] == '+');
    size_t ip = lil__load_count_digits(s + i, n - i, 10), fp = 0;

    i += ip;
    if (i < n && s[i] == '.') {
        i++;
        fp = lil__load_count_digits(s + i, n - i, 10);
        i += fp;
    }
    if (ip == 0 && fp == 0)
        return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t ed;

        i++;
        i += i < n && (s[i] == '-' || s[i] == '+');
        ed = lil__load_count_digits(s + i, n - i, 10);
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
    size_t ip = lil__load_count_digits(s + i, n - i, 10);
    size_t dot, frac;

    if (ip == 0 || (ip > 1 && s[i] == '0'))
        return TAG_NONE;
    i += ip;
    if (i == n)
        return TAG_INT;
    dot = i;
    if (s[i] == '.') {
        frac = lil__load_count_digits(s + i + 1, n - i - 1, 10);
        if (frac == 0)
            return TAG_NONE;
        i += 1 + frac;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1 + (i + 1 < n && (s[i + 1] == '-' || s[i + 1] == '+'));
        size_t ed = lil__load_count_digits(s + j, n - j, 10);

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

    return lil__load_fail_at(ld, "yaml", pos, "'%s' is not a valid %s",
                             lil__load_msg_text(s, n, t), tag);
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

lil_status lil__load_bad_tag(struct loader *ld, struct lil_pos pos,
                             const unsigned char *tag, const char *what)
{
    char t[MSG_TEXT_MAX + 4];
    const char *s = (const char *)tag;
    size_t plen = sizeof(CORE_TAG_PREFIX) - 1;
    bool core = strncmp(s, CORE_TAG_PREFIX, plen) == 0; /* shown as !!name */

    if (core)
        s += plen;
    return lil__load_fail_at(
        ld, "yaml", pos,
        "tag '%s%s' is not supported on %s (only !!str, !!int, !!float, "
        "!!bool, !!null, !!seq and !!map)",
        core ? "!!" : "", lil__load_msg_text(s, strlen(s), t), what);
}

/* Fill a scalar node from its event. */
lil_status lil__load_resolve_scalar(struct loader *ld, struct lil_node *nd,
                                    const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    enum tag t = lil__load_tag_of(ev->data.scalar.tag);
    lil_status rc;

    nd->quoted = !plain;
    if (t == TAG_OTHER || t == TAG_SEQ || t == TAG_MAP)
        return lil__load_bad_tag(ld, nd->pos, ev->data.scalar.tag, "a scalar");
    if (t == TAG_NONE && plain)
        t = resolve_plain(s, n, ld->json);
    else if (t == TAG_NONE || t == TAG_NONSPECIFIC)
        t = TAG_STR;
    if (t == TAG_NONE) /* JSON: jansson accepted the text, libyaml misread it */
        return lil__load_trees_differ(ld);
    rc = scalar_value(ld, t, nd->pos, s, n, &nd->value);
    if (rc != LIL_OK)
        return rc;
    if (json_is_string(nd->value)) {
        nd->str = json_string_value(nd->value);
        nd->str_len = json_string_length(nd->value);
        return LIL_OK;
    }
    nd->str = lil__load_arena_strndup(ld->env, ld->arena, s, n);
    nd->str_len = n;
    return nd->str ? LIL_OK : LIL_E_NOMEM;
}

/* ------------------------------------------------------------------------ */
/* Offset maps                                                              */

lil_status lil__load_scalar_map(struct loader *ld, struct lil_node *nd,
                                enum lil_scalar_style style, int parent_indent)
{
    struct lil_srcmap_in in = {ld->file,      ld->len, nd->pos.offset,
                               nd->end,       nd->pos, style,
                               parent_indent, nd->str, nd->str_len};
    struct lil_srcspan *map, *copy;
    size_t n;
    lil_status rc;

    nd->map = NULL;
    nd->nmap = 0;
    if (!nd->str || nd->pos.line == 0)
        return LIL_OK;
    rc = lil__srcmap_build(ld->env, &in, &map, &n);
    if (rc != LIL_OK || !map)
        return rc;
    copy = lil__load_arena_alloc(ld->env, ld->arena, n * sizeof(*map));
    if (copy) {
        memcpy(copy, map, n * sizeof(*map));
        nd->map = copy;
        nd->nmap = n;
    }
    lil__free(ld->env, map);
    return copy ? LIL_OK : LIL_E_NOMEM;
}
