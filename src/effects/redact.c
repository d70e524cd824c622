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

/* Keep the value of var if its name is a secret's. */
static lil_status consider(struct lil_redact *r, const char *var)
{
    const char *eq = strchr(var, '=');
    size_t len;
    struct secret *v;

    if (!eq || !lil__redact_name_is_secret(var, (size_t)(eq - var)))
        return LIL_OK;
    len = strlen(eq + 1);
    if (len < LIL_REDACT_MIN_LEN || lil__utf8_invalid_at(eq + 1, len) != len ||
        known(r, eq + 1, len))
        return LIL_OK;
    v = lil__grow(r->env, r->v, &r->cap, r->n, sizeof(*v), 8);
    if (!v)
        return LIL_E_NOMEM;
    r->v = v;
    v[r->n].s = lil__strndup(r->env, eq + 1, len);
    if (!v[r->n].s)
        return LIL_E_NOMEM;
    v[r->n++].len = len;
    r->first[(unsigned char)eq[1]] = true;
    return LIL_OK;
}

/* Longest first; equal lengths in byte order (a stable order). */
static int by_length_desc(const void *a, const void *b)
{
    const struct secret *x = a, *y = b;

    if (x->len != y->len)
        return x->len > y->len ? -1 : 1;
    return memcmp(x->s, y->s, x->len);
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

static lil_status redact_string(const struct lil_redact *r, struct lil_err *err,
                                json_t *v)
{
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    struct lil_buf b;
    lil_status rc;

    lil__buf_init(&b, r->env, SIZE_MAX);
    rc = len ? lil__redact_text(r, err, s, len, &b) : LIL_OK; /* "" has no secret */
    if (rc == LIL_OK && len && (b.len != len || memcmp(b.data, s, len) != 0) &&
        json_string_setn_nocheck(v, (const char *)b.data, b.len) != 0)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory redacting a text");
    lil__buf_free(&b);
    return rc;
}

static lil_status redact_value(const struct lil_redact *r, struct lil_err *err,
                               json_t *v, int depth)
{
    lil_status rc = LIL_OK;

    if (depth > LIL_REDACT_MAX_DEPTH)
        return lil__seterr(err, LIL_E_TOOBIG, 0, "JSON value nested deeper than %d",
                           LIL_REDACT_MAX_DEPTH);
    if (json_is_string(v))
        return redact_string(r, err, v);
    for (size_t i = 0; json_is_array(v) && i < json_array_size(v) && rc == LIL_OK; i++)
        rc = redact_value(r, err, json_array_get(v, i), depth + 1);
    for (void *it = json_object_iter(v); it && rc == LIL_OK;
         it = json_object_iter_next(v, it))
        rc = redact_value(r, err, json_object_iter_value(it), depth + 1);
    return rc;
}

lil_status lil__redact_json(const struct lil_redact *r, struct lil_err *err, json_t *v)
{
    struct lil_json_scope sc;
    lil_status rc, end;

    if (!r || r->n == 0 || !v)
        return LIL_OK;
    lil__json_begin(&sc, r->env);
    rc = redact_value(r, err, v, 0);
    end = lil__json_end(&sc);
    if (rc == LIL_OK && end != LIL_OK)
        rc = lil__seterr(err, end, 0, "out of memory redacting a JSON value");
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
