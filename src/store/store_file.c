/*
 * store_file.c -- the file store: a directory, one journal file per run.
 */
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "os/os.h"

lil_status lil__run_id_check(struct lil_err *err, const char *run_id)
{
    size_t n;

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
    return LIL_OK;
}

lil_status lil__store_open(struct lil_env *env, struct lil_err *err, const char *dir,
                           struct lil_store **out)
{
    struct lil_store *st;
    lil_status rc;

    *out = NULL;
    if (!dir)
        dir = getenv("LIL_DIR");
    if (!dir || !*dir)
        dir = ".lil";
    rc = lil__os_mkdir(env, err, dir, false); /* its name: lil__store_sync_parent */
    if (rc != LIL_OK)
        return rc;
    st = lil__calloc(env, 1, sizeof(*st));
    if (!st || !(st->dir = lil__strdup(env, dir))) {
        lil__free(env, st);
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    st->magic = LIL_STORE_MAGIC;
    st->env = env;
    pthread_mutex_init(&st->mu, NULL);
    *out = st;
    return LIL_OK;
}

bool lil__store_parent_pending(const struct lil_store *st)
{
    return !__atomic_load_n(&st->parent_synced, __ATOMIC_ACQUIRE);
}

void lil__store_parent_done(struct lil_store *st)
{
    __atomic_store_n(&st->parent_synced, true, __ATOMIC_RELEASE);
}

lil_status lil__store_sync_parent(struct lil_store *st, struct lil_err *err)
{
    lil_status rc;

    if (!lil__store_parent_pending(st))
        return LIL_OK;
    rc = lil__os_fsync_parent(st->env, err, st->dir);
    if (rc == LIL_OK)
        lil__store_parent_done(st);
    return rc;
}

void lil__store_close(struct lil_store *st)
{
    st->magic = 0;
    pthread_mutex_destroy(&st->mu);
    lil__free(st->env, st->dir);
    lil__free(st->env, st);
}

char *lil__store_run_path(const struct lil_store *st, const char *run_id)
{
    size_t n = strlen(st->dir) + 1 + strlen(run_id) + sizeof(LIL_JOURNAL_EXT);
    char *p = lil__malloc(st->env, n);

    if (p)
        snprintf(p, n, "%s/%s%s", st->dir, run_id, LIL_JOURNAL_EXT);
    return p;
}

static int run_name_of(const char *file, char *id, size_t cap)
{
    size_t n = strlen(file), ext = sizeof(LIL_JOURNAL_EXT) - 1;

    if (n <= ext || strcmp(file + n - ext, LIL_JOURNAL_EXT) != 0 || n - ext >= cap)
        return -1;
    memcpy(id, file, n - ext);
    id[n - ext] = '\0';
    return lil__run_id_check(NULL, id) == LIL_OK ? 0 : -1;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

lil_status lil__store_foreach(struct lil_store *st, struct lil_err *err,
                              lil_run_id_fn fn, void *ud)
{
    struct dirent **names = NULL;
    char id[LIL_RUN_ID_MAX + 1];
    int n = scandir(st->dir, &names, NULL, by_name);
    int stop = 0;

    if (n < 0)
        return lil__seterr(err, LIL_E_IO, errno, "scan %s: %s", st->dir,
                           strerror(errno));
    for (int i = 0; i < n; i++) {
        if (!stop && run_name_of(names[i]->d_name, id, sizeof(id)) == 0)
            stop = fn(ud, id);
        free(names[i]);
    }
    free(names);
    return LIL_OK;
}
