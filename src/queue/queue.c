/*
 * queue.c -- loop runs in the store's queue (lil.h, "Queued loop runs and
 * workers"; docs/postgres.md, "Workers"): lil_loop_submit, and what the
 * runner does for a queued run after an operator's decision.
 *
 * Submit resolves and checks the inputs now (what lil_loop_open would
 * journal with the start record), takes the digest of the normalized spec
 * (the start record's "spec"), and hands the spec's text, its name, the
 * digest and the inputs as the run's payload (payload.h), with the sync
 * mode, to the store's queue_submit, which creates the run queued.  The start record is
 * journaled by the worker that first claims the run: its startedAt is when the run
 * started, its cwd the worker's.
 *
 * After a decision of lil_loop_approve, lil_loop_recover or lil_loop_resume
 * with LIL_LOOP_REQUEUE, lil__loop_go_on records the run's status in the
 * queue -- queued for a worker when it can go on -- instead of running it
 * here; a run that is not queued (the store has no queue, or the run was
 * never submitted) runs.  A stop request for a queued run that waits
 * (parked, paused) queues it at once, so that a worker honours the stop now
 * rather than at its wake time.
 */
#include "queue/queue.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "loop/runner.h"
#include "loopspec/spec.h"
#include "queue/payload.h"

enum lil_sq_state lil__queue_state_of(const lil_loop_result *res, int64_t now_ms)
{
    switch (res->status) {
    case LIL_LOOP_COMPLETED:
        return LIL_SQ_COMPLETED;
    case LIL_LOOP_FAILED:
        return LIL_SQ_FAILED;
    case LIL_LOOP_UNCERTAIN:
        return LIL_SQ_UNCERTAIN;
    case LIL_LOOP_PAUSED:
        return LIL_SQ_PAUSED;
    case LIL_LOOP_STOPPED:
        return LIL_SQ_STOPPED;
    default:
        return res->wake_at_ms > now_ms ? LIL_SQ_PARKED : LIL_SQ_QUEUED;
    }
}

lil_status lil__queue_spec_digest(const lil_spec *spec, struct lil_err *err,
                                  char hex[2 * LIL_SHA256_LEN + 1])
{
    uint8_t d[LIL_SHA256_LEN];
    lil_bytes text = {0};
    struct lil_err e;
    lil_status rc = lil__spec_json(spec, &e, &text);

    if (rc != LIL_OK)
        return lil__seterr(err, rc, 0, "the spec cannot be normalized: %s", e.msg);
    lil__sha256(text.data, text.len, d);
    lil__hex(d, LIL_SHA256_LEN, hex);
    lil__export_free(text.data);
    return LIL_OK;
}

/* ---- submit ---------------------------------------------------------------------- */

static lil_status submit_opts_check(struct lil_err *err, const lil_loop_opts *o)
{
    if (!o)
        return LIL_OK;
    if (o->struct_size < offsetof(lil_loop_opts, progress_ud) + sizeof(void *))
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "lil_loop_submit: opts->struct_size is too small");
    if (o->flags || o->env_allow || o->cwd || o->actor || o->reason || o->progress ||
        o->max_block_ms || o->effect_timeout_ms)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "lil_loop_submit: only run_id, sync and inputs are a "
                           "submitted run's; the rest is its worker's");
    if (o->struct_size >= sizeof(lil_loop_opts) && (o->record_path || o->replay_path))
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "lil_loop_submit: cassettes are not for queued runs");
    if (o->n_input_pairs && !o->input_pairs)
        return lil__seterr(err, LIL_E_INVAL, 0, "lil_loop_submit: input_pairs is NULL");
    return LIL_OK;
}

/* The resolved inputs of o, into *out (a new reference). */
static lil_status resolve_inputs(struct lil_store *st, struct lil_err *err,
                                 const struct lil_ir_spec *ir, const lil_loop_opts *o,
                                 json_t **out)
{
    json_t *given = NULL, *inputs = NULL;
    lil_status rc = LIL_OK;

    if (o && o->inputs_json) {
        rc = lil__json_parse(st->env, err, LIL_E_INVAL, o->inputs_json,
                             strlen(o->inputs_json), JSON_DECODE_ANY, NULL, &given);
        if (rc == LIL_OK && !json_is_object(given))
            rc = lil__seterr(err, LIL_E_INVAL, 0, "the inputs are not a JSON object");
    }
    if (rc == LIL_OK)
        rc = lil__inputs_resolve(st->env, err, ir, given, o ? o->input_pairs : NULL,
                                 o ? o->n_input_pairs : 0, &inputs);
    json_decref(given);
    if (rc == LIL_OK)
        *out = inputs;
    else
        json_decref(inputs);
    return rc;
}

static lil_sync sync_of(const struct lil_store *st, const lil_loop_opts *o)
{
    return o && o->sync != LIL_SYNC_DEFAULT ? o->sync : st->set.sync;
}

const char *lil__queue_less_kind(const struct lil_store *st)
{
    return strcmp(st->ops->name, "file") == 0 ? "a store directory"
                                              : "a store in memory";
}

/* What makes a spec unfit to queue in st, before any work. */
static lil_status submit_check(struct lil_store *st, struct lil_err *err,
                               const lil_spec *spec, const lil_loop_opts *o)
{
    lil_status rc = submit_opts_check(err, o);

    if (rc != LIL_OK)
        return rc;
    if (!st->ops->queue_submit)
        return lil__seterr(
            err, LIL_E_INVAL, 0,
            "%s is %s: it keeps no queue (a directory "
            "serves one machine: run the loop with lil_loop_run); queued "
            "runs and workers need a PostgreSQL store, postgresql://...",
            st->where, lil__queue_less_kind(st));
    if (!lil__spec_ir(spec) || !lil__spec_ok(spec))
        return lil__seterr(err, LIL_E_SPEC, 0,
                           "the spec has errors: it cannot be queued");
    return LIL_OK;
}

/* The run's payload (payload.h) into out: the spec, its digest, the
 * resolved inputs. */
static lil_status payload_of(struct lil_store *st, struct lil_err *err,
                             const lil_spec *spec, const lil_loop_opts *o,
                             struct lil_buf *out)
{
    char digest[2 * LIL_SHA256_LEN + 1];
    json_t *inputs = NULL;
    const char *text;
    size_t len;
    lil_status rc = lil__queue_spec_digest(spec, err, digest);

    if (rc == LIL_OK)
        rc = resolve_inputs(st, err, lil__spec_ir(spec), o, &inputs);
    text = lil__spec_text(spec, &len);
    if (rc == LIL_OK)
        rc = lil__queue_payload_encode(st->env, err, lil__spec_name(spec), text, len,
                                       digest, inputs, out);
    json_decref(inputs);
    return rc;
}

lil_status lil__loop_submit(struct lil_store *st, struct lil_err *err,
                            const lil_spec *spec, const lil_loop_opts *o, char **run_id)
{
    struct lil_squeue_job job;
    struct lil_buf payload;
    uint8_t *key = NULL;
    size_t key_len = 0;
    lil_status rc = submit_check(st, err, spec, o);

    if (rc != LIL_OK)
        return rc;
    memset(&job, 0, sizeof(job));
    job.run_id = o && o->run_id ? o->run_id : lil__spec_ir(spec)->id.s;
    if (!job.run_id || lil__run_id_check(NULL, job.run_id) != LIL_OK)
        return lil__seterr(err, LIL_E_INVAL, 0, "invalid run id '%s'",
                           job.run_id ? job.run_id : "");
    job.sync = sync_of(st, o);
    if (job.sync == LIL_SYNC_DEFAULT)
        job.sync = LIL_SYNC_FULL;
    lil__buf_init(&payload, st->env, SIZE_MAX);
    rc = payload_of(st, err, spec, o, &payload);
    if (rc == LIL_OK)
        rc = lil__store_key_copy(st, err, &key, &key_len);
    job.payload = payload.data;
    job.payload_len = payload.len;
    job.key = key;
    job.key_len = key_len;
    if (rc == LIL_OK)
        rc = st->ops->queue_submit(st, err, &job);
    lil__store_key_free(st, key, key_len);
    lil__buf_free(&payload);
    if (rc == LIL_OK && run_id) {
        *run_id = lil__export_copy(st->env, job.run_id, strlen(job.run_id));
        if (!*run_id)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    return rc;
}

/* ---- after a decision ------------------------------------------------------------ */

static lil_status go_on(struct lil_loop *lp, lil_loop_result *res)
{
    struct lil_squeue_end to = {LIL_SQ_QUEUED, 0, NULL};
    bool queued = false;
    lil_status rc;

    if (!(lp->opt.flags & LIL_LOOP_REQUEUE) || !lp->st->ops->queue_set)
        return lil__loop_run(lp, false, res);
    rc = lil__loop_status(lp, res);
    if (rc == LIL_OK && res->status == LIL_LOOP_WAITING && lp->parked)
        lil__loop_result_wake(res, lp->wake_at_ms);
    if (rc != LIL_OK)
        return rc;
    to.state = lil__queue_state_of(res, lil__loop_now(lp));
    to.wake_at_ms = to.state == LIL_SQ_PARKED ? res->wake_at_ms : 0;
    rc = lp->st->ops->queue_set(lp->st, &lp->err, lp->run_id, LIL_SQ_ANY, &to, &queued);
    if (rc != LIL_OK)
        return rc;
    if (queued) {
        lp->requeued = true;
        return LIL_OK;
    }
    lil__loop_result_free(res);
    return lil__loop_run(lp, false, res);
}

static lil_status note_end(struct lil_loop *lp, const lil_loop_result *res)
{
    struct lil_squeue_end to = {LIL_SQ_QUEUED, 0, NULL};
    bool queued = false;

    if (!(lp->opt.flags & LIL_LOOP_REQUEUE) || !lp->st->ops->queue_set)
        return LIL_OK;
    to.state = lil__queue_state_of(res, lil__loop_now(lp));
    return lp->st->ops->queue_set(lp->st, &lp->err, lp->run_id, LIL_SQ_ANY, &to,
                                  &queued);
}

const struct lil_loop_hooks lil__queue_hooks = {go_on, note_end};

void lil__queue_after_stop(struct lil_store *st, const char *run_id)
{
    struct lil_squeue_end to = {LIL_SQ_QUEUED, 0, NULL};
    unsigned waiting = LIL_SQ_BIT(LIL_SQ_PARKED) | LIL_SQ_BIT(LIL_SQ_PAUSED);
    struct lil_err ignored;
    bool changed;

    if (st->ops->queue_set &&
        st->ops->queue_set(st, &ignored, run_id, waiting, &to, &changed) != LIL_OK)
        lil__log(st->env, LIL_LOG_WARN,
                 "event=requeue run=%s error=\"%s\" (the stop request waits for the "
                 "run's wake time)",
                 run_id, ignored.msg);
}
