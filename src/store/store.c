/*
 * store.c -- what every store shares: the table of backends (a location
 * goes to the first whose predicate accepts it, the file store last), the
 * run-id rule, lil_store_schema through the same table, the names of the
 * queue's states.  The environment is read through base/settings/settings.h.
 */
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/settings/settings.h"
#include "base/utf8.h"

/* A valid UTF-8 run id with a control or bidirectional mark (which would
 * make one id look like another on a terminal) is refused. */
static lil_status run_id_marks(struct lil_err *err, const char *run_id, size_t n)
{
    const unsigned char *p = (const unsigned char *)run_id;

    for (size_t i = 0; i < n;) {
        uint32_t cp = 0;
        size_t k = lil__utf8_decode(p + i, n - i, &cp);

        if (k == 0)
            break;
        if (lil__utf8_is_control(cp))
            return lil__seterr(err, LIL_E_INVAL, 0,
                               "run id has a forbidden character U+%04X at offset %zu "
                               "(control characters and bidirectional marks are not "
                               "allowed)",
                               (unsigned)cp, i);
        i += k;
    }
    return LIL_OK;
}

lil_status lil__run_id_check(struct lil_err *err, const char *run_id)
{
    size_t n, bad;

    if (!run_id || !*run_id)
        return lil__seterr(err, LIL_E_INVAL, 0, "run id is empty");
    n = strlen(run_id);
    if (n > LIL_RUN_ID_MAX)
        return lil__seterr(err, LIL_E_TOOBIG, 0,
                           "run id is %zu bytes long (at most %d)", n, LIL_RUN_ID_MAX);
    if (strcmp(run_id, ".") == 0 || strcmp(run_id, "..") == 0)
        return lil__seterr(err, LIL_E_INVAL, 0, "run id '%s' is not allowed", run_id);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)run_id[i];
        if (c == '/' || c < 0x20 || c == 0x7f)
            return lil__seterr(err, LIL_E_INVAL, 0,
                               "run id has a forbidden byte 0x%02x at offset %zu "
                               "('/' and control characters are not allowed)",
                               c, i);
    }
    bad = lil__utf8_invalid_at(run_id, n);
    if (bad < n)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "run id is not UTF-8: byte 0x%02x at offset %zu",
                           (unsigned char)run_id[bad], bad);
    return run_id_marks(err, run_id, n);
}

/* LIL_SYNC as a mode; an unreadable value is kept to be reported by the
 * first run that uses the default (lil_run_open's LIL_E_INVAL). */
static void read_sync(struct lil_store_settings *set)
{
    int mode;

    lil__setting_sync(&mode, set->bad_sync, sizeof(set->bad_sync));
    set->sync = (lil_sync)mode;
}

lil_status lil__store_set_key(struct lil_store *st, struct lil_err *err,
                              const void *key, size_t len)
{
    uint8_t *copy = NULL, *old;
    size_t old_len;

    if (key && len) {
        copy = lil__malloc(st->env, len);
        if (!copy)
            return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
        memcpy(copy, key, len);
    }
    pthread_mutex_lock(&st->mu);
    old = st->set.key;
    old_len = st->set.key_len;
    st->set.key = copy;
    st->set.key_len = copy ? len : 0;
    st->key_given = true;
    pthread_mutex_unlock(&st->mu);
    lil__store_key_free(st, old, old_len);
    return LIL_OK;
}

lil_status lil__store_init(struct lil_store *st, struct lil_env *env,
                           struct lil_err *err, const struct lil_store_ops *ops,
                           const char *where)
{
    const char *key = lil__setting_raw("LIL_JOURNAL_KEY");

    st->ops = ops;
    st->env = env;
    pthread_mutex_init(&st->mu, NULL);
    read_sync(&st->set);
    st->where = lil__strdup(env, where);
    if (!st->where)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    st->own_key_off = lil__setting_store_key_off();
    if (!key)
        return LIL_OK; /* the backend's own key, if it has one (own_key) */
    return lil__store_set_key(st, err, key, strlen(key));
}

/* Under st->mu: find (or with create make) the store's own key while it has
 * none and no decision. */
static lil_status own_key_locked(struct lil_store *st, struct lil_err *err, bool create)
{
    struct lil_err local;

    if (st->key_given || st->set.key || !st->own_key)
        return LIL_OK;
    return st->own_key(st, err ? err : &local, create && !st->own_key_off);
}

lil_status lil__store_key_ensure(struct lil_store *st, struct lil_err *err)
{
    lil_status rc;

    pthread_mutex_lock(&st->mu);
    rc = own_key_locked(st, err, true);
    pthread_mutex_unlock(&st->mu);
    return rc;
}

void lil__store_own_key_set(struct lil_store *st, bool on)
{
    pthread_mutex_lock(&st->mu);
    st->own_key_off = !on;
    pthread_mutex_unlock(&st->mu);
}

void lil__store_fini(struct lil_store *st)
{
    st->magic = 0;
    pthread_mutex_destroy(&st->mu);
    lil__store_key_free(st, st->set.key, st->set.key_len);
    lil__free(st->env, st->where);
}

const char *lil__store_where(const char *where)
{
    return lil__setting_store_where(where);
}

/* The backends, in the order they are asked: the first whose predicate
 * accepts the location opens it; the last, without one, takes the rest. */
struct backend {
    bool (*accepts)(const char *where); /* NULL: any location */
    /* cppcheck-suppress unusedStructMember ; called through backend_of() */
    lil_status (*open)(struct lil_env *env, struct lil_err *err, const char *where,
                       unsigned flags, struct lil_store **out);
    /* cppcheck-suppress unusedStructMember ; called through backend_of() */
    lil_status (*schema)(struct lil_env *env, struct lil_err *err, const char *where,
                         int action, lil_schema_info *info);
};

static const struct backend backends[] = {
    {lil__store_pg_location, lil__store_pg_open, lil__store_pg_schema},
    {lil__store_mem_location, lil__store_mem_open, lil__store_mem_schema},
    {NULL, lil__store_file_open, lil__store_file_schema},
};

static const struct backend *backend_of(const char *where)
{
    size_t n = sizeof(backends) / sizeof(backends[0]);
    size_t i = 0;

    while (i + 1 < n && !backends[i].accepts(where))
        i++;
    return &backends[i];
}

lil_status lil__store_open(struct lil_env *env, struct lil_err *err, const char *where,
                           unsigned flags, struct lil_store **out)
{
    *out = NULL;
    where = lil__store_where(where);
    return backend_of(where)->open(env, err, where, flags, out);
}

lil_status lil__store_schema(struct lil_env *env, struct lil_err *err,
                             const char *where, int action, lil_schema_info *info)
{
    if (action < LIL_SCHEMA_STATUS || action > LIL_SCHEMA_MIGRATE)
        return lil__seterr(err, LIL_E_INVAL, 0, "unknown schema action %d", action);
    where = lil__store_where(where);
    return backend_of(where)->schema(env, err, where, action, info);
}

void lil__store_close(struct lil_store *st)
{
    st->ops->close(st);
}

lil_status lil__store_key_copy(struct lil_store *st, struct lil_err *err, uint8_t **key,
                               size_t *len)
{
    lil_status rc = LIL_OK;

    *key = NULL;
    *len = 0;
    pthread_mutex_lock(&st->mu);
    rc = own_key_locked(st, err, false);
    *len = rc == LIL_OK ? st->set.key_len : 0;
    *key = *len ? lil__malloc(st->env, *len) : NULL;
    if (rc != LIL_OK)
        ;
    else if (*len && !*key)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    else if (*len)
        memcpy(*key, st->set.key, *len);
    pthread_mutex_unlock(&st->mu);
    return rc;
}

void lil__store_key_free_env(const struct lil_env *env, uint8_t *key, size_t len)
{
    if (!key)
        return;
    explicit_bzero(key, len); /* not optimized away */
    lil__free(env, key);
}

void lil__store_key_free(struct lil_store *st, uint8_t *key, size_t len)
{
    lil__store_key_free_env(st->env, key, len);
}

/* ---- the queue's states ---------------------------------------------------------- */

static const char *const sq_names[LIL_SQ_STATES] = {
    "queued",  "running",   "parked", "paused", "uncertain",
    "stopped", "completed", "failed", "error",
};

const char *lil__sq_state_name(enum lil_sq_state s)
{
    return (unsigned)s < LIL_SQ_STATES ? sq_names[s] : "error";
}

bool lil__sq_state_parse(const char *name, size_t len, enum lil_sq_state *out)
{
    for (int i = 0; i < LIL_SQ_STATES; i++)
        if (strlen(sq_names[i]) == len && memcmp(sq_names[i], name, len) == 0) {
            *out = (enum lil_sq_state)i;
            return true;
        }
    return false;
}
