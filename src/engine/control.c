/*
 * control.c -- what an operator leaves for a run outside its journal, as
 * the layers above the engine read it: a pending stop request, the run's
 * place in the store's queue, whether the store has a journal key, and
 * making what a run appended durable now.
 * The store keeps them (store.h: stop_*, queue_state, run_sync); these
 * calls are the engine's door to them, so the runner never reaches into
 * the store.
 */
#include <stdio.h>
#include <unistd.h>

#include "base/alloc.h"
#include "engine/run.h"

lil_status lil__run_sync(struct lil_run *run, struct lil_err *err)
{
    return run->st->ops->run_sync(run->sr, err);
}

/* The run goes on in a new segment that starts with recs (store.h,
 * run_rotate) and an OPEN record naming this process, so that readers of
 * the new segment alone still see who holds the run.  *done false: the
 * store keeps runs in one piece (nothing is written). */
lil_status lil__run_rotate(struct lil_run *run, struct lil_err *err,
                           const struct lil_rec *recs, size_t n, bool *done)
{
    struct lil_rec *all;
    char text[32];
    lil_status rc;

    *done = false;
    if (!run->st->ops->run_rotate)
        return LIL_OK;
    all = lil__calloc(run->env, n + 1, sizeof(*all));
    if (!all)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    all[0].type = LIL_REC_OPEN;
    all[0].payload_len =
        (size_t)snprintf(text, sizeof(text), "{\"pid\":%ld}", (long)getpid());
    all[0].payload = (const uint8_t *)text;
    for (size_t i = 0; i < n; i++)
        all[i + 1] = recs[i];
    rc = run->st->ops->run_rotate(run->sr, err, all, n + 1);
    lil__free(run->env, all);
    *done = rc == LIL_OK;
    return rc;
}

lil_status lil__stop_read(struct lil_store *st, struct lil_err *err, const char *run_id,
                          lil_bytes *out)
{
    return st->ops->stop_read(st, err, run_id, out);
}

lil_status lil__stop_clear(struct lil_store *st, struct lil_err *err,
                           const char *run_id)
{
    return st->ops->stop_clear(st, err, run_id);
}

lil_status lil__queue_state(struct lil_store *st, struct lil_err *err,
                            const char *run_id, enum lil_sq_state *state)
{
    if (!st->ops->queue_state)
        return lil__seterr(err, LIL_E_NOTFOUND, 0, "run %s is not queued", run_id);
    return st->ops->queue_state(st, err, run_id, state);
}

bool lil__store_keyed(struct lil_store *st)
{
    bool keyed;

    (void)pthread_mutex_lock(&st->mu);
    keyed = st->set.key != NULL;
    (void)pthread_mutex_unlock(&st->mu);
    return keyed;
}
