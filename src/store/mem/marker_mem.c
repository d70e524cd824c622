/*
 * marker_mem.c -- markers and stop requests of the in-memory store
 * (store_mem.h).  A marker is an entry of its space: a caller enters it by
 * waiting until no other caller is inside (the space's condition), then
 * reads and changes its state under the space's mutex.  A stop request is
 * kept beside its run id's entry, which it makes when the run does not
 * exist yet (as a request file waits beside a missing journal).
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "store/mem/store_mem.h"

struct lil_smarker {
    struct mem_store *ms;
    struct mem_marker *m;
};

static lil_status nomem(struct lil_err *err)
{
    return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
}

lil_status lil__mem_marker_enter(struct lil_store *st, struct lil_err *err,
                                 const char *name, struct lil_smarker **out)
{
    struct mem_store *ms = (struct mem_store *)st;
    struct lil_smarker *h = lil__calloc(st->env, 1, sizeof(*h));
    struct mem_space *sp = ms->sp;

    *out = NULL;
    if (!h)
        return nomem(err);
    pthread_mutex_lock(&sp->mu);
    h->m = lil__mem_marker(sp, name);
    while (h->m && h->m->inside)
        pthread_cond_wait(&sp->left, &sp->mu);
    if (h->m)
        h->m->inside = true;
    pthread_mutex_unlock(&sp->mu);
    if (!h->m) {
        lil__free(st->env, h);
        return nomem(err);
    }
    h->ms = ms;
    *out = h;
    return LIL_OK;
}

lil_status lil__mem_marker_state(struct lil_smarker *h, struct lil_err *err,
                                 enum lil_smarker_state *state, lil_bytes *result)
{
    struct mem_space *sp = h->ms->sp;
    lil_status rc = LIL_OK;

    pthread_mutex_lock(&sp->mu);
    *state = h->m->state;
    if (*state == LIL_SMARKER_DONE && result) {
        result->len = h->m->result.len;
        result->data =
            lil__export_copy(h->ms->base.env, h->m->result.data, result->len);
        if (!result->data)
            rc = nomem(err);
    }
    pthread_mutex_unlock(&sp->mu);
    return rc;
}

/* Set the marker's state (and its result, when DONE). */
static lil_status set(struct lil_smarker *h, struct lil_err *err,
                      enum lil_smarker_state state, const void *result, size_t len)
{
    struct mem_space *sp = h->ms->sp;
    lil_status rc = LIL_OK;

    pthread_mutex_lock(&sp->mu);
    if (state == LIL_SMARKER_DONE &&
        lil__mem_bytes_set(&h->m->result, result, len) != 0)
        rc = nomem(err);
    else
        h->m->state = state;
    pthread_mutex_unlock(&sp->mu);
    return rc;
}

lil_status lil__mem_marker_begin(struct lil_smarker *h, struct lil_err *err,
                                 const void *owner, size_t owner_len)
{
    (void)owner;
    (void)owner_len;
    return set(h, err, LIL_SMARKER_PENDING, NULL, 0);
}

lil_status lil__mem_marker_finish(struct lil_smarker *h, struct lil_err *err,
                                  const void *result, size_t len)
{
    return set(h, err, LIL_SMARKER_DONE, result, len);
}

lil_status lil__mem_marker_abandon(struct lil_smarker *h, struct lil_err *err)
{
    return set(h, err, LIL_SMARKER_NONE, NULL, 0);
}

lil_status lil__mem_marker_clear(struct lil_smarker *h, struct lil_err *err)
{
    struct mem_space *sp = h->ms->sp;
    bool was_none;

    pthread_mutex_lock(&sp->mu);
    was_none = h->m->state == LIL_SMARKER_NONE;
    h->m->state = LIL_SMARKER_NONE;
    pthread_mutex_unlock(&sp->mu);
    if (was_none)
        return lil__seterr(err, LIL_E_NOTFOUND, 0, "marker %s is not set", h->m->name);
    return LIL_OK;
}

void lil__mem_marker_leave(struct lil_smarker *h)
{
    struct mem_space *sp;

    if (!h)
        return;
    sp = h->ms->sp;
    pthread_mutex_lock(&sp->mu);
    h->m->inside = false;
    pthread_cond_broadcast(&sp->left);
    pthread_mutex_unlock(&sp->mu);
    lil__free(h->ms->base.env, h);
}

/* ---- stop requests --------------------------------------------------------------- */

lil_status lil__mem_stop_request(struct lil_store *st, struct lil_err *err,
                                 const char *run_id, const void *req, size_t len,
                                 bool *already)
{
    struct mem_space *sp = ((struct mem_store *)st)->sp;
    lil_status rc = lil__run_id_check(err, run_id);
    struct mem_run *r;

    *already = false;
    if (rc != LIL_OK)
        return rc;
    pthread_mutex_lock(&sp->mu);
    r = lil__mem_run(sp, run_id, true);
    if (!r || (!r->stop && lil__mem_bytes_set(&r->stop_req, req, len) != 0))
        rc = nomem(err);
    else if (r->stop)
        *already = true;
    else
        r->stop = true;
    pthread_mutex_unlock(&sp->mu);
    return rc;
}

lil_status lil__mem_stop_read(struct lil_store *st, struct lil_err *err,
                              const char *run_id, lil_bytes *out)
{
    struct mem_space *sp = ((struct mem_store *)st)->sp;
    lil_status rc = LIL_OK;
    struct mem_run *r;

    pthread_mutex_lock(&sp->mu);
    r = lil__mem_run(sp, run_id, false);
    if (!r || !r->stop) {
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "no stop request for run %s", run_id);
    } else {
        out->len = r->stop_req.len;
        out->data = lil__export_copy(st->env, r->stop_req.data, out->len);
        if (!out->data)
            rc = nomem(err);
    }
    pthread_mutex_unlock(&sp->mu);
    return rc;
}

lil_status lil__mem_stop_clear(struct lil_store *st, struct lil_err *err,
                               const char *run_id)
{
    struct mem_space *sp = ((struct mem_store *)st)->sp;
    lil_status rc = LIL_OK;
    struct mem_run *r;

    pthread_mutex_lock(&sp->mu);
    r = lil__mem_run(sp, run_id, false);
    if (!r || !r->stop)
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "no stop request for run %s", run_id);
    else
        r->stop = false;
    pthread_mutex_unlock(&sp->mu);
    return rc;
}
