/*
 * place.c -- where a run is in its steps (place.h): the fold of its
 * records into the effect it is in, or the last step it finished.
 */
#include "engine/place.h"

#include <lil/lil.h>
#include <string.h>

#include "base/alloc.h"

void lil__place_init(struct lil_place_fold *f, const struct lil_env *env)
{
    memset(f, 0, sizeof(*f));
    f->env = env;
}

static bool same(const char *id, const void *key, size_t len)
{
    size_t n = len < LIL_PLACE_STEP_MAX ? len : LIL_PLACE_STEP_MAX;

    return strlen(id) == n && memcmp(id, key, n) == 0;
}

static void close_ident(struct lil_place_fold *f, const void *key, size_t len)
{
    for (size_t i = f->n_open; i-- > 0;) {
        if (same(f->open[i], key, len)) {
            lil__free(f->env, f->open[i]);
            memmove(&f->open[i], &f->open[i + 1],
                    (f->n_open - i - 1) * sizeof(*f->open));
            f->n_open--;
            return;
        }
    }
}

static char *copy_key(const struct lil_env *env, const void *key, size_t len)
{
    return lil__strndup(env, key, len < LIL_PLACE_STEP_MAX ? len : LIL_PLACE_STEP_MAX);
}

static lil_status open_ident(struct lil_place_fold *f, struct lil_err *err,
                             const void *key, size_t len)
{
    char **v;
    char *id;

    close_ident(f, key, len); /* an intent again (a retry): one entry, moved last */
    v = lil__grow(f->env, f->open, &f->cap_open, f->n_open, sizeof(*v), 8);
    if (v)
        f->open = v;
    id = v ? copy_key(f->env, key, len) : NULL;
    if (!id)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    f->open[f->n_open++] = id;
    return LIL_OK;
}

lil_status lil__place_add(struct lil_place_fold *f, struct lil_err *err, int type,
                          const void *key, size_t key_len, int64_t ts_ns)
{
    char *id;

    if (ts_ns > f->last_ns)
        f->last_ns = ts_ns;
    switch (type) {
    case LIL_REC_INTENT:
        return open_ident(f, err, key, key_len);
    case LIL_REC_STEP:
    case LIL_REC_STEP_FAILED:
        id = copy_key(f->env, key, key_len);
        if (!id)
            return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
        lil__free(f->env, f->last_step);
        f->last_step = id;
        close_ident(f, key, key_len);
        return LIL_OK;
    case LIL_REC_RESOLVE:
        close_ident(f, key, key_len);
        return LIL_OK;
    default:
        return LIL_OK;
    }
}

lil_status lil__place_take(struct lil_place_fold *f, struct lil_err *err,
                           struct lil_place *out)
{
    const char *id = f->n_open ? f->open[f->n_open - 1] : f->last_step;

    memset(out, 0, sizeof(*out));
    out->started = f->n_open > 0;
    out->last_ns = f->last_ns;
    if (id && !(out->step = lil__strdup(f->env, id)))
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    return LIL_OK;
}

void lil__place_free(struct lil_place_fold *f)
{
    for (size_t i = 0; i < f->n_open; i++)
        lil__free(f->env, f->open[i]);
    lil__free(f->env, f->open);
    lil__free(f->env, f->last_step);
    memset(f, 0, sizeof(*f));
}

void lil__place_clear(const struct lil_env *env, struct lil_place *p)
{
    lil__free(env, p->step);
    memset(p, 0, sizeof(*p));
}
