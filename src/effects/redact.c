/*
 * redact.c -- secret values replaced by "[redacted]" (redact.h).
 *
 * The values are kept longest first, with a table of their first bytes so
 * that most positions of a text are passed over with one lookup.
 */
#include "effects/redact.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/utf8.h"

struct secret {
    char *s;
    size_t len;
};

struct lil_redact {
    const struct lil_env *env;
    struct secret *v; /* longest first */
    size_t n, cap;
    bool first[256]; /* bytes a value starts with */
};

static const char *const secret_words[] = {"KEY",      "TOKEN",  "SECRET",
                                           "PASSWORD", "PASSWD", "CREDENTIAL"};

#define NWORDS (sizeof(secret_words) / sizeof(secret_words[0]))

/* Is c the letter w (upper case) in either case? */
static bool same_letter(char c, char w)
{
    return c == w || (c >= 'a' && c <= 'z' && c - 'a' + 'A' == w);
}

/* Does name (len bytes) contain word (upper case), in any case? */
static bool contains_word(const char *name, size_t len, const char *word)
{
    size_t wl = strlen(word);

    for (size_t i = 0; i + wl <= len; i++) {
        size_t k = 0;
        while (k < wl && same_letter(name[i + k], word[k]))
            k++;
        if (k == wl)
            return true;
    }
    return false;
}

bool lil__redact_name_is_secret(const char *name, size_t len)
{
    for (size_t i = 0; i < NWORDS; i++)
        if (contains_word(name, len, secret_words[i]))
            return true;
    return false;
}

static bool known(const struct lil_redact *r, const char *s, size_t len)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].len == len && memcmp(r->v[i].s, s, len) == 0)
            return true;
    return false;
}

/* Longest first; equal lengths in byte order (a stable order). */
static int by_length_desc(const void *a, const void *b)
{
    const struct secret *x = a, *y = b;

    if (x->len != y->len)
        return x->len > y->len ? -1 : 1;
    return memcmp(x->s, y->s, x->len);
}

/* Keep the value s (len bytes) when the rules take it. */
static lil_status keep(struct lil_redact *r, const char *s, size_t len)
{
    struct secret *v;

    if (len < LIL_REDACT_MIN_LEN || lil__utf8_invalid_at(s, len) != len ||
        known(r, s, len))
        return LIL_OK;
    v = lil__grow(r->env, r->v, &r->cap, r->n, sizeof(*v), 8);
    if (!v)
        return LIL_E_NOMEM;
    r->v = v;
    v[r->n].s = lil__strndup(r->env, s, len);
    if (!v[r->n].s)
        return LIL_E_NOMEM;
    v[r->n++].len = len;
    r->first[(unsigned char)s[0]] = true;
    return LIL_OK;
}

/* Keep the value of var if its name is a secret's. */
static lil_status consider(struct lil_redact *r, const char *var)
{
    const char *eq = strchr(var, '=');

    if (!eq || !lil__redact_name_is_secret(var, (size_t)(eq - var)))
        return LIL_OK;
    return keep(r, eq + 1, strlen(eq + 1));
}

lil_status lil__redact_add(struct lil_redact *r, struct lil_err *err, const char *value,
                           size_t len)
{
    if (keep(r, value, len) != LIL_OK)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory collecting secrets");
    if (r->n > 1)
        qsort(r->v, r->n, sizeof(*r->v), by_length_desc);
    return LIL_OK;
}

lil_status lil__redact_new(const struct lil_env *env, struct lil_err *err,
                           const char *const *vars, struct lil_redact **out)
{
    struct lil_redact *r;

    *out = NULL;
    r = lil__calloc(env, 1, sizeof(*r));
    if (!r)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory collecting secrets");
    r->env = env;
    if (!vars)
        vars = (const char *const *)environ;
    for (size_t i = 0; vars[i]; i++)
        if (consider(r, vars[i]) != LIL_OK) {
            lil__redact_free(r);
            return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory collecting secrets");
        }
    if (r->n > 1)
        qsort(r->v, r->n, sizeof(*r->v), by_length_desc);
    *out = r;
    return LIL_OK;
}

void lil__redact_free(struct lil_redact *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        explicit_bzero(r->v[i].s, r->v[i].len); /* not optimized away */
        lil__free(r->env, r->v[i].s);
    }
    lil__free(r->env, r->v);
    lil__free(r->env, r);
}

size_t lil__redact_count(const struct lil_redact *r)
{
    return r ? r->n : 0;
}

/* Length of the longest value at s (left bytes), or 0. */
static size_t match_at(const struct lil_redact *r, const char *s, size_t left)
{
    if (!r->first[(unsigned char)s[0]])
        return 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].len <= left && memcmp(r->v[i].s, s, r->v[i].len) == 0)
            return r->v[i].len;
    return 0;
}

lil_status lil__redact_value(struct lil_err *err, const char *value, size_t vlen,
                             const char *text, size_t len, struct lil_buf *out)
{
    /* read only: the const is dropped, the text never written */
    /* NOLINTNEXTLINE(performance-no-int-to-ptr) */
    struct secret one = {(char *)(uintptr_t)value, vlen};
    struct lil_redact r = {.v = &one, .n = vlen > 0, .cap = 1};

    if (vlen > 0)
        r.first[(unsigned char)value[0]] = true;
    return lil__redact_text(&r, err, text, len, out);
}

lil_status lil__redact_text(const struct lil_redact *r, struct lil_err *err,
                            const char *text, size_t len, struct lil_buf *out)
{
    size_t mark = out->len, i = 0, start = 0, m;
    lil_status rc = LIL_OK;

    while (i < len && rc == LIL_OK) {
        m = r ? match_at(r, text + i, len - i) : 0;
        if (m == 0) {
            i++;
            continue;
        }
        rc = lil__buf_add(out, text + start, i - start);
        if (rc == LIL_OK)
            rc = lil__buf_addstr(out, LIL_REDACTED);
        i += m;
        start = i;
    }
    if (rc == LIL_OK && len > 0) /* text may be NULL when empty */
        rc = lil__buf_add(out, text + start, len - start);
    if (rc == LIL_OK)
        return LIL_OK;
    out->len = mark;
    if (out->data)
        out->data[mark] = '\0';
    return rc == LIL_E_TOOBIG
               ? lil__seterr(err, rc, 0, "redacted text is over the limit of %zu bytes",
                             out->cap)
               : lil__seterr(err, rc, 0, "out of memory redacting a text");
}

/* The redacted copy of s (len bytes) in *out (NULL when s holds no secret). */
static lil_status redacted_copy(const struct lil_redact *r, struct lil_err *err,
                                const char *s, size_t len, struct lil_buf *b,
                                bool *changed)
{
    lil_status rc = len ? lil__redact_text(r, err, s, len, b) : LIL_OK;

    *changed = rc == LIL_OK && len && (b->len != len || memcmp(b->data, s, len) != 0);
    return rc;
}

static lil_status redact_string(const struct lil_redact *r, struct lil_err *err,
                                json_t *v)
{
    struct lil_buf b;
    bool changed = false;
    lil_status rc;

    lil__buf_init(&b, r->env, SIZE_MAX);
    rc = redacted_copy(r, err, json_string_value(v), json_string_length(v), &b,
                       &changed);
    if (rc == LIL_OK && changed &&
        json_string_setn_nocheck(v, (const char *)b.data, b.len) != 0)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory redacting a text");
    lil__buf_free(&b);
    return rc;
}

/* A number whose text holds a secret (a secret of digits, 12345678, read as
 * a JSON number) becomes the string "[redacted]": *out, else NULL. */
static lil_status redact_number(const struct lil_redact *r, struct lil_err *err,
                                json_t *v, json_t **out)
{
    char text[64];
    struct lil_buf b;
    bool changed = false;
    lil_status rc;
    int n = json_is_integer(v)
                ? snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT,
                           json_integer_value(v))
                : snprintf(text, sizeof(text), "%.17g", json_real_value(v));

    *out = NULL;
    if (n <= 0 || (size_t)n >= sizeof(text))
        return LIL_OK;
    lil__buf_init(&b, r->env, SIZE_MAX);
    rc = redacted_copy(r, err, text, (size_t)n, &b, &changed);
    lil__buf_free(&b);
    if (rc == LIL_OK && changed && !(*out = json_string(LIL_REDACTED)))
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory redacting a number");
    return rc;
}

/* A key of obj free for what stands in for a secret key (in b): b itself,
 * else b#2, b#3 ... */
static lil_status free_key(json_t *obj, struct lil_err *err, struct lil_buf *b)
{
    size_t blen = b->len;
    lil_status rc = LIL_OK;

    for (unsigned k = 2;
         rc == LIL_OK && json_object_getn(obj, (const char *)b->data, b->len) != NULL;
         k++) {
        b->len = blen;
        rc = lil__buf_printf(b, "#%u", k);
    }
    return rc == LIL_OK ? LIL_OK
                        : lil__seterr(err, rc, 0, "out of memory redacting a key");
}

/* [old key, new key (in b), value at it]; NULL when out of memory. */
static json_t *rename_of(const char *k, size_t klen, const struct lil_buf *b, void *it)
{
    json_t *a = json_array();

    if (json_array_append_new(a, json_stringn_nocheck(k, klen)) != 0 ||
        json_array_append_new(a, json_stringn_nocheck((const char *)b->data, b->len)) !=
            0 ||
        json_array_append(a, json_object_iter_value(it)) != 0) {
        json_decref(a);
        return NULL;
    }
    return a;
}

/* The keys of obj that hold a secret, as [old key, new key, value] in
 * renames. */
static lil_status find_keys(const struct lil_redact *r, struct lil_err *err,
                            json_t *obj, json_t *renames)
{
    struct lil_buf b;
    lil_status rc = LIL_OK;

    lil__buf_init(&b, r->env, SIZE_MAX);
    for (void *it = json_object_iter(obj); it && rc == LIL_OK;
         it = json_object_iter_next(obj, it)) {
        const char *k = json_object_iter_key(it);
        size_t klen = json_object_iter_key_len(it);
        bool changed = false;

        lil__buf_reset(&b);
        rc = redacted_copy(r, err, k, klen, &b, &changed);
        if (rc == LIL_OK && changed &&
            json_array_append_new(renames, rename_of(k, klen, &b, it)) != 0)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory redacting a key");
    }
    lil__buf_free(&b);
    return rc;
}

/* Rename the keys that hold a secret to their redacted text (made unique
 * with #2, #3 ... where two would meet, in the object's order). */
static lil_status redact_keys(const struct lil_redact *r, struct lil_err *err,
                              json_t *obj)
{
    json_t *renames = json_array(), *one;
    struct lil_buf b;
    size_t i;
    lil_status rc = renames ? find_keys(r, err, obj, renames)
                            : lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");

    json_array_foreach(renames, i, one)
    {
        json_t *old = json_array_get(one, 0);

        json_object_deln(obj, json_string_value(old), json_string_length(old));
    }
    lil__buf_init(&b, r->env, SIZE_MAX);
    for (i = 0; rc == LIL_OK && i < json_array_size(renames); i++) {
        json_t *key = json_array_get(json_array_get(renames, i), 1);

        lil__buf_reset(&b);
        rc = lil__buf_add(&b, json_string_value(key), json_string_length(key));
        rc = rc == LIL_OK ? free_key(obj, err, &b)
                          : lil__seterr(err, rc, 0, "out of memory redacting a key");
        if (rc == LIL_OK && json_object_setn_nocheck(
                                obj, (const char *)b.data, b.len,
                                json_array_get(json_array_get(renames, i), 2)) != 0)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory redacting a key");
    }
    lil__buf_free(&b);
    json_decref(renames);
    return rc;
}

static lil_status redact_value(const struct lil_redact *r, struct lil_err *err,
                               json_t *v, int depth, json_t **out);

static lil_status redact_array(const struct lil_redact *r, struct lil_err *err,
                               json_t *v, int depth)
{
    lil_status rc = LIL_OK;

    for (size_t i = 0; i < json_array_size(v) && rc == LIL_OK; i++) {
        json_t *repl = NULL;

        rc = redact_value(r, err, json_array_get(v, i), depth + 1, &repl);
        if (rc == LIL_OK && repl && json_array_set_new(v, i, repl) != 0)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory redacting a value");
    }
    return rc;
}

/* The values, then the keys. */
static lil_status redact_object(const struct lil_redact *r, struct lil_err *err,
                                json_t *v, int depth)
{
    lil_status rc = LIL_OK;

    for (void *it = json_object_iter(v); it && rc == LIL_OK;
         it = json_object_iter_next(v, it)) {
        json_t *repl = NULL;

        rc = redact_value(r, err, json_object_iter_value(it), depth + 1, &repl);
        if (rc == LIL_OK && repl && json_object_iter_set_new(v, it, repl) != 0)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory redacting a value");
    }
    return rc == LIL_OK ? redact_keys(r, err, v) : rc;
}

/* Redact v in place; a number to be replaced comes back in *out. */
static lil_status redact_value(const struct lil_redact *r, struct lil_err *err,
                               json_t *v, int depth, json_t **out)
{
    *out = NULL;
    if (depth > LIL_REDACT_MAX_DEPTH)
        return lil__seterr(err, LIL_E_TOOBIG, 0, "JSON value nested deeper than %d",
                           LIL_REDACT_MAX_DEPTH);
    if (json_is_string(v))
        return redact_string(r, err, v);
    if (json_is_number(v))
        return redact_number(r, err, v, out);
    if (json_is_array(v))
        return redact_array(r, err, v, depth);
    if (json_is_object(v))
        return redact_object(r, err, v, depth);
    return LIL_OK;
}

lil_status lil__redact_json(const struct lil_redact *r, struct lil_err *err, json_t **v)
{
    struct lil_json_scope sc;
    json_t *top = NULL;
    lil_status rc, end;

    if (!r || r->n == 0 || !*v)
        return LIL_OK;
    lil__json_begin(&sc, r->env);
    rc = redact_value(r, err, *v, 0, &top);
    end = lil__json_end(&sc);
    if (rc == LIL_OK && end != LIL_OK)
        rc = lil__seterr(err, end, 0, "out of memory redacting a JSON value");
    if (top && rc == LIL_OK) { /* a number at the top, replaced */
        json_decref(*v);
        *v = top;
        top = NULL;
    }
    json_decref(top);
    return rc;
}

lil_status lil__redact_env_values(const struct lil_env *env, struct lil_err *err,
                                  const char *const *vars, const char *text, size_t len,
                                  struct lil_buf *out)
{
    struct lil_redact *r = NULL;
    lil_status rc = lil__redact_new(env, err, vars, &r);

    if (rc == LIL_OK)
        rc = lil__redact_text(r, err, text, len, out);
    lil__redact_free(r);
    return rc;
}
