/*
 * ir_field.c -- reading one typed value of a mapping for the IR build:
 * strings, integers, numbers, booleans, enumeration values, string lists,
 * JSON copies, durations, and guards and templates (parsed here, with
 * the offset map of their scalar: lil__ir_src_pos).  Each reader reports a
 * missing required key or a wrong value (see ir_build.c) and returns false.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/alloc.h"
#include "loopspec/ir/ir_build.h"
#include "loopspec/values/duration.h"

/* ------------------------------------------------------------------------ */
/* Scalars                                                                  */

bool lil__irb_is_string(const struct lil_node *n)
{
    return n->kind == LIL_NODE_SCALAR && json_is_string(n->value);
}

/* The value of key when it is a string of at least min_len bytes; NULL
 * (with a diagnostic when it is there but is not) otherwise. */
static const struct lil_node *string_field(struct build *b, const struct obj *o,
                                           const char *key, bool required,
                                           size_t min_len)
{
    const struct lil_node *v = lil__irb_field(b, o, key, required);

    if (v && (!lil__irb_is_string(v) || v->str_len < min_len)) {
        lil__irb_field_error(b, v, o, key, min_len ? "a non-empty string" : "a string");
        return NULL;
    }
    return v;
}

/* A string value (min_len 0 or 1); false if absent or wrong. */
bool lil__irb_get_str(struct build *b, const struct obj *o, const char *key,
                      bool required, size_t min_len, struct lil_ir_str *out)
{
    const struct lil_node *v = string_field(b, o, key, required, min_len);

    if (!v)
        return false;
    out->pos = v->pos;
    out->s = lil__irb_dup_node_str(b, v);
    return out->s != NULL;
}

/* An integer in [lo, hi] (JSON integers, or reals with an integral value). */
static bool int_value(const struct lil_node *n, long long lo, long long hi,
                      long long *out)
{
    double x;

    if (n->kind != LIL_NODE_SCALAR)
        return false;
    if (json_is_integer(n->value)) {
        json_int_t i = json_integer_value(n->value);

        if (i < lo || i > hi)
            return false;
        *out = (long long)i;
        return true;
    }
    if (!json_is_real(n->value))
        return false;
    x = json_real_value(n->value);
    if (!isfinite(x) || x < (double)lo || x > (double)hi || x != (double)(long long)x)
        return false; /* range first: the cast is defined only in range */
    *out = (long long)x;
    return true;
}

bool lil__irb_get_int(struct build *b, const struct obj *o, const char *key,
                      bool required, long long lo, long long hi, const char *what,
                      long long *out, struct lil_pos *pos)
{
    const struct lil_node *v = lil__irb_field(b, o, key, required);

    if (!v)
        return false;
    if (!int_value(v, lo, hi, out)) {
        lil__irb_field_error(b, v, o, key, what);
        return false;
    }
    if (pos)
        *pos = v->pos;
    return true;
}

bool lil__irb_get_posnum(struct build *b, const struct obj *o, const char *key,
                         double *out)
{
    const struct lil_node *v = lil__irb_field(b, o, key, false);
    double x;

    if (!v)
        return false;
    x = v->kind == LIL_NODE_SCALAR && json_is_number(v->value)
            ? json_number_value(v->value)
            : -1.0;
    if (!(x > 0) || !isfinite(x)) {
        lil__irb_field_error(b, v, o, key, "a positive number");
        return false;
    }
    *out = x;
    return true;
}

bool lil__irb_get_bool(struct build *b, const struct obj *o, const char *key, bool *out)
{
    const struct lil_node *v = lil__irb_field(b, o, key, false);

    if (!v)
        return false;
    if (v->kind != LIL_NODE_SCALAR || !json_is_boolean(v->value)) {
        lil__irb_field_error(b, v, o, key, "true or false");
        return false;
    }
    *out = json_is_true(v->value);
    return true;
}

/* One of the spellings of enumeration e. */
bool lil__irb_enum_value(struct build *b, const struct lil_node *v, const char *path,
                         enum lil_ir_enum e, int *out)
{
    size_t n;
    const char *const *vals = lil__ir_enum_values(e, &n);
    char list[256] = "", gbuf[128], hint[96] = "";
    const char *s;

    if (lil__irb_is_string(v)) {
        for (size_t i = 0; i < n; i++) {
            if (strcmp(v->str, vals[i]) == 0) {
                *out = (int)i;
                return true;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(list);

        snprintf(list + l, sizeof(list) - l, "%s%s", i ? ", " : "", vals[i]);
    }
    s = lil__irb_is_string(v) ? lil__suggest(v->str, vals, n) : NULL;
    for (size_t i = 0; !s && lil__irb_is_string(v) && i < n; i++) {
        if (strcasecmp(v->str, vals[i]) == 0)
            s = vals[i];
    }
    if (s)
        snprintf(hint, sizeof(hint), " (did you mean '%s'?)", s);
    lil__diag(b->d, LIL_SEV_ERROR, "schema", v->pos, path,
              "%s: expected one of %s, got %s%s", path, list,
              lil__irb_got(v, gbuf, sizeof(gbuf)), hint);
    return false;
}

bool lil__irb_get_enum(struct build *b, const struct obj *o, const char *key,
                       bool required, enum lil_ir_enum e, int *out, struct lil_pos *pos)
{
    char path[PATH_MAX_LEN];
    const struct lil_node *v = lil__irb_field(b, o, key, required);

    if (!v)
        return false;
    if (pos)
        *pos = v->pos;
    if (lil__irb_is_string(v)) {
        size_t n;
        const char *const *vals = lil__ir_enum_values(e, &n);

        for (size_t i = 0; i < n; i++) {
            if (strcmp(v->str, vals[i]) == 0) {
                *out = (int)i;
                return true;
            }
        }
    }
    lil__irb_child_path(path, sizeof(path), o->path, key);
    return lil__irb_enum_value(b, v, path, e, out);
}

/* A list of strings: at least min_items, at most max_items, each at least
 * min_len bytes. */
bool lil__irb_get_strlist(struct build *b, const struct obj *o, const char *key,
                          bool required, size_t min_items, size_t max_items,
                          size_t min_len, struct lil_ir_strlist *out)
{
    char path[PATH_MAX_LEN], ipath[PATH_MAX_LEN + 24];
    const struct lil_node *v = lil__irb_field(b, o, key, required);
    bool ok = true;

    if (!v)
        return false;
    lil__irb_child_path(path, sizeof(path), o->path, key);
    if (v->kind != LIL_NODE_SEQ) {
        lil__irb_type_error(b, v, path, "a list of strings");
        return false;
    }
    if (v->n < min_items || v->n > max_items) {
        lil__diag(b->d, LIL_SEV_ERROR, "schema", v->pos, path,
                  v->n < min_items ? "%s: expected at least %zu item(s), got %zu"
                                   : "%s: expected at most %zu items, got %zu",
                  path, v->n < min_items ? min_items : max_items, v->n);
        return false;
    }
    out->present = true;
    out->pos = v->pos;
    out->v = lil__calloc(b->env, v->n ? v->n : 1, sizeof(*out->v));
    if (!out->v)
        return lil__irb_oom(b);
    for (size_t i = 0; i < v->n; i++) {
        const struct lil_node *it = v->items[i];

        if (!lil__irb_is_string(it) || it->str_len < min_len) {
            snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
            lil__irb_type_error(b, it, ipath,
                                min_len ? "a non-empty string" : "a string");
            ok = false;
            continue;
        }
        out->v[out->n].pos = it->pos;
        out->v[out->n].s = lil__irb_dup_node_str(b, it);
        if (!out->v[out->n].s)
            return false;
        out->n++;
    }
    return ok;
}

/* A JSON copy of a node (NULL on failure, noted). */
json_t *lil__irb_node_json(struct build *b, const struct lil_node *n)
{
    json_t *j = lil__node_json(n);

    if (!j)
        lil__irb_oom(b);
    return j;
}

/* ------------------------------------------------------------------------ */
/* Guards and templates                                                     */

/* Where byte offset of src's text is in the file (ir.h). */
struct lil_pos lil__ir_src_pos(const struct lil_ir_src *src, size_t offset)
{
    if (!src->map || !src->nmap)
        return src->pos;
    if (offset > src->len)
        offset = src->len;
    return lil__srcmap_pos(src->map, src->nmap, src->s, offset);
}

/* Copy a string node into src (its text, position and offset map). */
static bool take_src(struct build *b, const struct lil_node *v, struct lil_ir_src *src)
{
    src->s = lil__irb_dup_node_str(b, v);
    if (!src->s)
        return false;
    src->len = v->str_len;
    src->pos = v->pos;
    src->map = NULL;
    src->nmap = 0;
    if (!v->map || !v->nmap)
        return true;
    src->map = lil__malloc(b->env, v->nmap * sizeof(*v->map));
    if (!src->map)
        return lil__irb_oom(b);
    memcpy(src->map, v->map, v->nmap * sizeof(*v->map));
    src->nmap = v->nmap;
    return true;
}

static bool keep_err(struct build *b, const struct lil_expr_err *e, char **msg,
                     size_t *off)
{
    *msg = lil__strdup(b->env, e->msg);
    *off = e->offset;
    if (!*msg)
        return lil__irb_oom(b);
    return true;
}

static bool parse_guard_node(struct build *b, const struct lil_node *v,
                             struct lil_ir_guard *g)
{
    struct lil_expr_err e;
    lil_status rc;

    if (!take_src(b, v, &g->src))
        return false;
    memset(&e, 0, sizeof(e));
    rc = lil__guard_parse(b->env, g->src.s, g->src.len, &g->expr, &e);
    if (rc == LIL_E_NOMEM)
        return lil__irb_oom(b);
    if (rc != LIL_OK)
        return keep_err(b, &e, &g->err, &g->err_offset);
    return true;
}

bool lil__irb_parse_tmpl_node(struct build *b, const struct lil_node *v,
                              struct lil_ir_tmpl *t)
{
    struct lil_expr_err e;
    lil_status rc;

    if (!take_src(b, v, &t->src))
        return false;
    memset(&e, 0, sizeof(e));
    rc = lil__tmpl_parse(b->env, t->src.s, t->src.len, &t->tmpl, &e);
    if (rc == LIL_E_NOMEM)
        return lil__irb_oom(b);
    if (rc != LIL_OK)
        return keep_err(b, &e, &t->err, &t->err_offset);
    return true;
}

/* A string value parsed as a guard / template. */
bool lil__irb_get_guard(struct build *b, const struct obj *o, const char *key,
                        bool required, size_t min_len, struct lil_ir_guard *out)
{
    const struct lil_node *v = string_field(b, o, key, required, min_len);

    return v && parse_guard_node(b, v, out);
}

bool lil__irb_get_tmpl(struct build *b, const struct obj *o, const char *key,
                       bool required, size_t min_len, struct lil_ir_tmpl *out)
{
    const struct lil_node *v = string_field(b, o, key, required, min_len);

    return v && lil__irb_parse_tmpl_node(b, v, out);
}

void lil__irb_get_duration(struct build *b, const struct obj *o, const char *key,
                           struct lil_ir_duration *out)
{
    if (!lil__irb_get_str(b, o, key, false, 0, &out->text))
        return;
    out->ok = lil__duration_parse(out->text.s, strlen(out->text.s), &out->ms) ==
              LIL_DURATION_OK;
}
