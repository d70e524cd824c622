/*
 * store.c -- what every store shares: choosing the backend, the settings
 * read from the environment (once, here), the run-id rule, the schema
 * calls (lil_store_schema) of both backends.
 */
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/sync_mode.h"
#include "base/utf8.h"
#include "journal/format.h"
#include "os/os.h"

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
    return LIL_OK;
}

/* LIL_SYNC as a mode; an unreadable value is kept to be reported by the
 * first run that uses the default (lil_run_open's LIL_E_INVAL). */
static void read_sync(struct lil_store_settings *set)
{
    const char *e = getenv("LIL_SYNC");

    set->sync = LIL_SYNC_FULL;
    set->bad_sync[0] = '\0';
    if (!e || !*e)
        return;
    if (!lil__sync_parse(e, &set->sync))
        snprintf(set->bad_sync, sizeof(set->bad_sync), "%s", e);
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
    pthread_mutex_unlock(&st->mu);
    lil__store_key_free(st, old, old_len);
    return LIL_OK;
}

lil_status lil__store_init(struct lil_store *st, struct lil_env *env,
                           struct lil_err *err, const struct lil_store_ops *ops,
                           const char *where)
{
    const char *key = getenv("LIL_JOURNAL_KEY");

    st->ops = ops;
    st->env = env;
    pthread_mutex_init(&st->mu, NULL);
    read_sync(&st->set);
    st->where = lil__strdup(env, where);
    if (!st->where)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    return lil__store_set_key(st, err, key, key ? strlen(key) : 0);
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
    if (!where)
        where = getenv("LIL_DIR");
    if (!where || !*where)
        where = ".lil";
    return where;
}

lil_status lil__store_open(struct lil_env *env, struct lil_err *err, const char *where,
                           struct lil_store **out)
{
    *out = NULL;
    where = lil__store_where(where);
    if (lil__store_pg_location(where))
        return lil__store_pg_open(env, err, where, out);
    return lil__store_file_open(env, err, where, out);
}

/* A file store has no schema: its journals carry their format version. */
static lil_status file_schema(struct lil_env *env, struct lil_err *err, const char *dir,
                              int action, lil_schema_info *info)
{
    struct stat sb;
    bool there = stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode);
    lil_status rc = LIL_OK;

    snprintf(info->backend, sizeof(info->backend), "file");
    info->latest = (int)LIL_JF_VERSION;
    if (!there && action == LIL_SCHEMA_INIT) {
        rc = lil__os_mkdir(env, err, dir, true);
        there = rc == LIL_OK;
        info->changed = there;
    }
    info->version = there ? (int)LIL_JF_VERSION : 0;
    if (rc != LIL_OK)
        return rc;
    if (!there && action == LIL_SCHEMA_MIGRATE)
        return lil__seterr(err, LIL_E_NOTFOUND, 0,
                           "no store at '%s' (`lil db init` creates it)", dir);
    snprintf(info->message, sizeof(info->message),
             !there          ? "no store at '%s' yet (`lil db init` creates it)"
             : info->changed ? "created the store directory '%s'"
                             : "file store '%s': journals of format 1, nothing to "
                               "migrate",
             dir);
    return LIL_OK;
}

lil_status lil__store_schema(struct lil_env *env, struct lil_err *err,
                             const char *where, int action, lil_schema_info *info)
{
    if (action < LIL_SCHEMA_STATUS || action > LIL_SCHEMA_MIGRATE)
        return lil__seterr(err, LIL_E_INVAL, 0, "unknown schema action %d", action);
    where = lil__store_where(where);
    if (lil__store_pg_location(where))
        return lil__store_pg_schema(env, err, where, action, info);
    return file_schema(env, err, where, action, info);
}

void lil__store_close(struct lil_store *st)
{
    st->ops->close(st);
}

lil_status lil__store_key_copy(struct lil_store *st, struct lil_err *err, uint8_t **key,
                               size_t *len)
{
    lil_status rc = LIL_OK;

    pthread_mutex_lock(&st->mu);
    *len = st->set.key_len;
    *key = *len ? lil__malloc(st->env, *len) : NULL;
    if (*len && !*key)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    else if (*len)
        memcpy(*key, st->set.key, *len);
    pthread_mutex_unlock(&st->mu);
    return rc;
}

void lil__store_key_free(struct lil_store *st, uint8_t *key, size_t len)
{
    if (!key)
        return;
    explicit_bzero(key, len); /* not optimized away */
    lil__free(st->env, key);
}
