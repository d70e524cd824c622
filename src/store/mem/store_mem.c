/*
 * store_mem.c -- the in-memory store (store_mem.h has its design): the
 * location "mem:NAME", the store handle on its space, the table of
 * operations, and what works on a run without opening it: listing,
 * checking (and repairing), when it changed, its image, an import.
 */
#include "store/mem/store_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/handles.h"
#include "journal/format.h"
#include "journal/journal.h"

#define MEM_PREFIX "mem:"

bool lil__store_mem_location(const char *where)
{
    return strncmp(where, MEM_PREFIX, strlen(MEM_PREFIX)) == 0;
}

static void mem_close(struct lil_store *st)
{
    lil__store_fini(st);
    lil__free(st->env, st);
}

/* ---- listing --------------------------------------------------------------------- */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Under sp->mu: the ids of the runs that exist, sorted, copied. */
static char **run_ids(struct lil_store *st, struct mem_space *sp, size_t *n)
{
    size_t count = 0, i = 0;
    char **ids;

    for (struct mem_run *r = sp->runs; r; r = r->next)
        count += r->image.len > 0;
    ids = lil__calloc(st->env, count + 1, sizeof(*ids));
    for (struct mem_run *r = sp->runs; ids && r; r = r->next)
        if (r->image.len > 0 && !(ids[i++] = lil__strdup(st->env, r->id)))
            count = i - 1; /* out of memory: what was copied */
    if (ids)
        qsort(ids, count, sizeof(*ids), by_name);
    *n = ids ? count : 0;
    return ids;
}

static lil_status mem_foreach_run(struct lil_store *st, struct lil_err *err,
                                  lil_run_id_fn fn, void *ud)
{
    struct mem_space *sp = ((struct mem_store *)st)->sp;
    size_t n, i;
    char **ids;

    pthread_mutex_lock(&sp->mu);
    ids = run_ids(st, sp, &n);
    pthread_mutex_unlock(&sp->mu);
    if (!ids)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    for (i = 0; i < n && fn(ud, ids[i]) == 0; i++)
        ;
    for (i = 0; i < n; i++)
        lil__free(st->env, ids[i]);
    lil__free(st->env, ids);
    return LIL_OK;
}

/* ---- a run without opening it ---------------------------------------------------- */

/* Under sp->mu: the run run_id names, when it has an image (else
 * LIL_E_NOTFOUND). */
static lil_status existing(struct lil_store *st, struct lil_err *err,
                           const char *run_id, struct mem_run **out)
{
    *out = lil__mem_run(((struct mem_store *)st)->sp, run_id, false);
    if (!*out || !(*out)->image.len)
        return lil__seterr(err, LIL_E_NOTFOUND, 0, "no run %s in %s", run_id,
                           st->where);
    return LIL_OK;
}

/* A copy of run_id's image into out (LIL_E_NOTFOUND: no such run). */
static lil_status image_of(struct lil_store *st, struct lil_err *err,
                           const char *run_id, struct lil_buf *out)
{
    struct mem_space *sp = ((struct mem_store *)st)->sp;
    struct mem_run *r;
    lil_status rc;

    pthread_mutex_lock(&sp->mu);
    rc = existing(st, err, run_id, &r);
    if (rc == LIL_OK && lil__buf_add(out, r->image.data, r->image.len) != LIL_OK)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    pthread_mutex_unlock(&sp->mu);
    return rc;
}

/* Cut run_id's image at off (a repair), unless a handle holds the run. */
static lil_status cut(struct lil_store *st, struct lil_err *err, const char *run_id,
                      uint64_t off)
{
    struct mem_space *sp = ((struct mem_store *)st)->sp;
    lil_status rc = LIL_OK;
    struct mem_run *r;

    pthread_mutex_lock(&sp->mu);
    r = lil__mem_run(sp, run_id, false);
    if (r && r->held)
        rc = lil__seterr(err, LIL_E_LOCKED, 0, "run %s is held: close it to repair it",
                         run_id);
    else if (r && off < r->image.len)
        r->image.len = (size_t)off;
    pthread_mutex_unlock(&sp->mu);
    return rc;
}

static lil_status mem_check_run(struct lil_store *st, struct lil_err *err,
                                const char *run_id, const uint8_t *key, size_t key_len,
                                bool repair, lil_check_report *rep)
{
    struct lil_buf image;
    lil_status rc;

    lil__buf_init(&image, st->env, (size_t)-1);
    rc = image_of(st, err, run_id, &image);
    rep->file_bytes = image.len;
    if (rc == LIL_OK)
        rc = lil__journal_check_image(st->env, err, st->where, image.data, image.len,
                                      key, key_len, rep);
    lil__buf_free(&image);
    if (rc != LIL_OK || !repair || (rep->intact && !rep->torn_tail))
        return rc;
    if (rep->damage_offset < LIL_JF_HEADER_LEN)
        return lil__seterr(err, LIL_E_CORRUPT, 0,
                           "run %s: its journal header is damaged; nothing to keep",
                           run_id);
    rc = cut(st, err, run_id, rep->damage_offset);
    if (rc == LIL_OK)
        rep->repaired = 1;
    return rc;
}

static lil_status mem_run_changed(struct lil_store *st, struct lil_err *err,
                                  const char *run_id, int64_t *ns)
{
    struct mem_space *sp = ((struct mem_store *)st)->sp;
    struct mem_run *r;
    lil_status rc;

    pthread_mutex_lock(&sp->mu);
    rc = existing(st, err, run_id, &r);
    if (rc == LIL_OK)
        *ns = r->changed_ns;
    pthread_mutex_unlock(&sp->mu);
    return rc;
}

static lil_status mem_run_import(struct lil_store *st, struct lil_err *err,
                                 const char *run_id, const uint8_t *image, size_t len)
{
    struct mem_space *sp = ((struct mem_store *)st)->sp;
    lil_status rc = lil__run_id_check(err, run_id);
    struct mem_run *r;

    if (rc != LIL_OK)
        return rc;
    pthread_mutex_lock(&sp->mu);
    r = lil__mem_run(sp, run_id, true);
    if (r && r->image.len)
        rc = lil__seterr(err, LIL_E_INVAL, 0, "run %s exists in %s", run_id, st->where);
    else if (!r || lil__mem_bytes_set(&r->image, image, len) != 0)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    else
        r->changed_ns = lil__wall_ns();
    pthread_mutex_unlock(&sp->mu);
    return rc;
}

/* Remove run_id: its image and stop request emptied (the entry stays, as
 * for a run that has not started), unless a handle holds it. */
static lil_status mem_run_remove(struct lil_store *st, struct lil_err *err,
                                 const char *run_id)
{
    struct mem_space *sp = ((struct mem_store *)st)->sp;
    lil_status rc = lil__run_id_check(err, run_id);
    struct mem_run *r = NULL;

    if (rc != LIL_OK)
        return rc;
    pthread_mutex_lock(&sp->mu);
    rc = existing(st, err, run_id, &r);
    if (rc == LIL_OK && r->held)
        rc = lil__seterr(err, LIL_E_LOCKED, 0,
                         "run %s is held by an open handle: it is not removed", run_id);
    if (rc == LIL_OK) {
        free(r->image.data);
        free(r->stop_req.data);
        r->image = (struct mem_bytes){0};
        r->stop_req = (struct mem_bytes){0};
        r->stop = false;
    }
    pthread_mutex_unlock(&sp->mu);
    return rc;
}

/* ---- the store ------------------------------------------------------------------- */

const struct lil_store_ops lil__mem_ops = {
    .version = LIL_STORE_OPS_VERSION,
    .name = "mem",
    .close = mem_close,
    .foreach_run = mem_foreach_run,
    .check_run = mem_check_run,
    .run_open = lil__mem_run_open,
    .run_close = lil__mem_run_close,
    .run_append = lil__mem_run_append,
    .run_announce = lil__mem_run_announce,
    .run_sync = lil__mem_run_sync,
    .run_walk = lil__mem_run_walk,
    .run_next_scanned = lil__mem_run_next_scanned,
    .run_info = lil__mem_run_info,
    .run_holder = lil__mem_run_holder,
    .stop_request = lil__mem_stop_request,
    .stop_read = lil__mem_stop_read,
    .stop_clear = lil__mem_stop_clear,
    .marker_enter = lil__mem_marker_enter,
    .marker_state = lil__mem_marker_state,
    .marker_begin = lil__mem_marker_begin,
    .marker_finish = lil__mem_marker_finish,
    .marker_abandon = lil__mem_marker_abandon,
    .marker_clear = lil__mem_marker_clear,
    .marker_leave = lil__mem_marker_leave,
    .run_changed = mem_run_changed,
    .run_image = image_of,
    .run_import = mem_run_import,
    .run_remove = mem_run_remove,
};

lil_status lil__store_mem_open(struct lil_env *env, struct lil_err *err,
                               const char *where, unsigned flags,
                               struct lil_store **out)
{
    struct mem_store *ms;
    lil_status rc;

    (void)flags; /* this process's memory: nobody else's */
    *out = NULL;
    ms = lil__calloc(env, 1, sizeof(*ms));
    if (!ms)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    rc = lil__store_init(&ms->base, env, err, &lil__mem_ops, where);
    ms->sp = rc == LIL_OK ? lil__mem_space(where + strlen(MEM_PREFIX)) : NULL;
    if (rc == LIL_OK && !ms->sp)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (rc != LIL_OK) {
        mem_close(&ms->base);
        return rc;
    }
    ms->base.magic = LIL_STORE_MAGIC;
    *out = &ms->base;
    return LIL_OK;
}

/* A store in memory has no schema: nothing to create or migrate. */
lil_status lil__store_mem_schema(struct lil_env *env, struct lil_err *err,
                                 const char *where, int action, lil_schema_info *info)
{
    (void)env;
    (void)err;
    (void)action;
    snprintf(info->backend, sizeof(info->backend), "mem");
    info->latest = info->version = (int)LIL_JF_VERSION;
    snprintf(info->message, sizeof(info->message),
             "in-memory store '%s': kept by this process, nothing to migrate", where);
    return LIL_OK;
}
