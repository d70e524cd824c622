/*
 * run_mem.c -- runs of the in-memory store (store_mem.h): a run is a
 * journal image in its space; an open copies the image and scans the copy
 * (its records stay valid until run_close, as run_next_scanned promises),
 * appends encode records as the journal does and add them to the image
 * under the space's mutex, and a clean close appends CLOSE, as the other
 * stores do, and lets the run go.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "journal/format.h"
#include "journal/scan.h"
#include "os/os.h"
#include "store/image.h"
#include "store/mem/store_mem.h"

struct mem_srun {
    struct lil_srun base;
    struct mem_space *sp;
    struct mem_run *run;
    const struct lil_env *env;
    char *where;
    bool readonly;
    lil_sync sync;
    size_t max_record;
    struct lil_mac *mac;
    uint8_t chain[LIL_SHA256_LEN];
    uint64_t seq, scanned_end;
    uint64_t records, end; /* written under sp->mu, read by run_info without */
    int64_t created_ns, last_ns;
    bool keyed;
    uint8_t *scanned; /* the image as the open found it */
};

/* ---- creating a run -------------------------------------------------------------- */

/* The header and BEGIN of a new run, into image (under sp->mu). */
static lil_status first_bytes(const struct lil_env *env, struct lil_err *err,
                              const char *run_id, const struct lil_srun_opts *o,
                              struct mem_bytes *image)
{
    struct lil_buf buf;
    lil_status rc;

    lil__buf_init(&buf, env, (size_t)-1);
    rc = lil__image_first(env, err, run_id, o->key, o->key_len, &buf);
    if (rc == LIL_OK && lil__mem_bytes_set(image, buf.data, buf.len) != 0)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    lil__buf_free(&buf);
    return rc;
}

/* ---- open ------------------------------------------------------------------------ */

static void srun_free(struct mem_srun *mr)
{
    if (!mr)
        return;
    lil__mac_free(mr->env, mr->mac);
    lil__free(mr->env, mr->scanned);
    lil__free(mr->env, mr->where);
    lil__free(mr->env, mr);
}

/* Under sp->mu: find (or create) the run, take its hold, copy its image. */
static lil_status take(struct mem_srun *mr, struct lil_err *err, const char *run_id,
                       const struct lil_srun_opts *o)
{
    struct mem_run *r = lil__mem_run(mr->sp, run_id, o->create && !o->readonly);
    lil_status rc = LIL_OK;

    if (o->create && !o->readonly && !r)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (!r || !r->image.len) {
        if (!o->create || o->readonly)
            return lil__seterr(err, LIL_E_NOTFOUND, 0, "no run %s in %s", run_id,
                               mr->where);
        rc = first_bytes(mr->env, err, run_id, o, &r->image);
        r->changed_ns = lil__wall_ns();
    }
    if (rc == LIL_OK && !o->readonly && r->held)
        rc = lil__seterr(err, LIL_E_LOCKED, 0,
                         "run %s is held by another handle of this process (%s)",
                         run_id, mr->where);
    if (rc != LIL_OK)
        return rc;
    mr->scanned = lil__malloc(mr->env, r->image.len);
    if (!mr->scanned)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    memcpy(mr->scanned, r->image.data, r->image.len);
    mr->scanned_end = r->image.len;
    mr->run = r;
    if (!o->readonly)
        r->held = true;
    return LIL_OK;
}

static lil_status scan(struct mem_srun *mr, struct lil_err *err,
                       const struct lil_srun_opts *o, lil_rec_scan_fn fn, void *ud)
{
    struct scan_result res;
    lil_status rc = lil__image_scan(mr->env, err, mr->where, mr->scanned,
                                    mr->scanned_end, o, fn, ud, &mr->mac, &res);

    if (rc != LIL_OK)
        return rc;
    memcpy(mr->chain, res.chain, LIL_SHA256_LEN);
    mr->seq = res.seq;
    mr->end = res.end;
    mr->records = res.records;
    mr->created_ns = res.created_ns;
    mr->last_ns = res.last_ns;
    mr->keyed = lil__mac_keyed(mr->mac) != 0;
    return LIL_OK;
}

static struct mem_srun *srun_new(struct mem_store *ms, const char *run_id,
                                 const struct lil_srun_opts *o)
{
    struct lil_env *env = ms->base.env;
    struct mem_srun *mr = lil__calloc(env, 1, sizeof(*mr));
    size_t n = strlen(ms->base.where) + strlen(run_id) + 2;

    if (!mr)
        return NULL;
    mr->env = env;
    mr->sp = ms->sp;
    mr->readonly = o->readonly;
    mr->sync = o->sync;
    mr->max_record = o->max_record;
    mr->where = lil__malloc(env, n);
    if (!mr->where) {
        srun_free(mr);
        return NULL;
    }
    snprintf(mr->where, n, "%s/%s", ms->base.where, run_id);
    mr->base.where = mr->where;
    return mr;
}

extern const struct lil_store_ops lil__mem_ops;

lil_status lil__mem_run_open(struct lil_store *st, struct lil_err *err,
                             const char *run_id, const struct lil_srun_opts *opts,
                             lil_rec_scan_fn fn, void *ud, struct lil_srun **out)
{
    struct mem_store *ms = (struct mem_store *)st;
    struct mem_srun *mr;
    lil_status rc = lil__run_id_check(err, run_id);

    *out = NULL;
    if (rc != LIL_OK)
        return rc;
    mr = srun_new(ms, run_id, opts);
    if (!mr)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    mr->base.ops = &lil__mem_ops;
    pthread_mutex_lock(&ms->sp->mu);
    rc = take(mr, err, run_id, opts);
    pthread_mutex_unlock(&ms->sp->mu);
    if (rc == LIL_OK)
        rc = scan(mr, err, opts, fn, ud);
    if (rc != LIL_OK) {
        if (mr->run && !mr->readonly) {
            pthread_mutex_lock(&ms->sp->mu);
            mr->run->held = false;
            pthread_mutex_unlock(&ms->sp->mu);
        }
        srun_free(mr);
        return rc;
    }
    *out = &mr->base;
    return LIL_OK;
}

/* ---- append ---------------------------------------------------------------------- */

/* Under sp->mu: encode rec as the next record at the end of the image. */
static lil_status add(struct mem_srun *mr, struct lil_err *err,
                      const struct lil_rec *rec)
{
    size_t len = LIL_JF_REC_OVERHEAD + rec->key_len + rec->payload_len;
    uint8_t flags = (uint8_t)(rec->flags | LIL_JF_FLAG_SETTLED); /* all durable */
    struct mem_bytes *img = &mr->run->image;
    struct lil_rec r = *rec;

    if (mr->readonly)
        return lil__seterr(err, LIL_E_INVAL, 0, "%s is open read-only", mr->where);
    if (rec->key_len > LIL_JF_KEY_MAX || rec->payload_len > mr->max_record)
        return lil__seterr(err, LIL_E_TOOBIG, 0,
                           "record of %zu bytes is over the limit of %zu bytes",
                           rec->payload_len, mr->max_record);
    if (!r.ts_ns)
        r.ts_ns = lil__wall_ns();
    if (lil__mem_bytes_more(img, len) != 0 ||
        lil__encode_record(mr->mac, mr->chain, mr->seq + 1, &r, flags,
                           img->data + img->len, len) != LIL_OK)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    img->len += len;
    mr->run->changed_ns = r.ts_ns;
    mr->seq++;
    __atomic_store_n(&mr->records, mr->records + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&mr->end, mr->end + len, __ATOMIC_RELAXED);
    __atomic_store_n(&mr->last_ns, r.ts_ns, __ATOMIC_RELAXED);
    return LIL_OK;
}

lil_status lil__mem_run_append(struct lil_srun *r, struct lil_err *err,
                               const struct lil_rec *rec, enum lil_append_sync how)
{
    struct mem_srun *mr = (struct mem_srun *)r;
    lil_status rc;

    (void)how; /* memory: durable on return in every mode */
    pthread_mutex_lock(&mr->sp->mu);
    rc = add(mr, err, rec);
    pthread_mutex_unlock(&mr->sp->mu);
    return rc;
}

lil_status lil__mem_run_announce(struct lil_srun *r, struct lil_err *err,
                                 const struct lil_rec *rec)
{
    return lil__mem_run_append(r, err, rec, LIL_APPEND_LAZY);
}

lil_status lil__mem_run_sync(struct lil_srun *r, struct lil_err *err)
{
    (void)r;
    (void)err;
    return LIL_OK;
}

lil_status lil__mem_run_close(struct lil_srun *r, struct lil_err *err, bool ended)
{
    struct mem_srun *mr = (struct mem_srun *)r;
    struct lil_rec close = {0};
    struct lil_err local;
    lil_status rc = LIL_OK;

    (void)ended;
    if (!err)
        err = &local;
    if (!mr->readonly) {
        close.type = LIL_REC_CLOSE;
        pthread_mutex_lock(&mr->sp->mu);
        if (mr->sync != LIL_SYNC_OFF)
            rc = add(mr, err, &close);
        mr->run->held = false;
        pthread_mutex_unlock(&mr->sp->mu);
    }
    srun_free(mr);
    return rc;
}

/* ---- reading --------------------------------------------------------------------- */

lil_status lil__mem_run_walk(struct lil_srun *r, struct lil_err *err,
                             lil_rec_walk_fn fn, void *ud)
{
    struct mem_srun *mr = (struct mem_srun *)r;
    uint8_t *copy;
    size_t len;

    /* a copy: fn may append to this run (the space's mutex is not held) */
    pthread_mutex_lock(&mr->sp->mu);
    len = mr->run->image.len;
    copy = lil__malloc(mr->env, len ? len : 1);
    if (copy)
        memcpy(copy, mr->run->image.data, len);
    pthread_mutex_unlock(&mr->sp->mu);
    if (!copy)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (len > LIL_JF_HEADER_LEN)
        lil__image_walk(copy + LIL_JF_HEADER_LEN, len - LIL_JF_HEADER_LEN,
                        LIL_JF_HEADER_LEN, fn, ud);
    lil__free(mr->env, copy);
    return LIL_OK;
}

bool lil__mem_run_next_scanned(const struct lil_srun *r, uint64_t *cursor,
                               struct lil_rec *rec)
{
    const struct mem_srun *mr = (const struct mem_srun *)r;

    return lil__image_next(mr->scanned, mr->scanned_end, cursor, rec);
}

void lil__mem_run_info(const struct lil_srun *r, struct lil_srun_info *info)
{
    const struct mem_srun *mr = (const struct mem_srun *)r;

    info->records = __atomic_load_n(&mr->records, __ATOMIC_RELAXED);
    info->bytes = __atomic_load_n(&mr->end, __ATOMIC_RELAXED);
    info->last_ns = __atomic_load_n(&mr->last_ns, __ATOMIC_RELAXED);
    info->created_ns = mr->created_ns;
    info->sync = mr->sync;
    info->keyed = mr->keyed;
    info->torn_pos = 0;
    info->torn_records = 0;
}

int lil__mem_run_holder(const struct lil_srun *r, int last_opener)
{
    const struct mem_srun *mr = (const struct mem_srun *)r;
    bool held;

    pthread_mutex_lock(&mr->sp->mu);
    held = mr->run->held;
    pthread_mutex_unlock(&mr->sp->mu);
    if (!held)
        return 0;
    return last_opener > 0 ? last_opener : lil__os_self_pid();
}
