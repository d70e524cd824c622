/*
 * worker.c -- the workers behind lil_worker_* (lil.h, "Queued loop runs
 * and workers"; their checks are src/api/workers.c): claim the next
 * runnable run of the store's queue, run it through the runner's whole
 * calls (runner_call.c), record where it ended, and give it back.
 *
 * One claim, in order:
 *   1. queue_claim: the run's lease taken with a new epoch (store.h), and
 *      the caller's on_claim told;
 *   2. the spec parsed from the text of the run's payload (payload.h:
 *      the store keeps it unread; lil_spec_parse), its digest compared with the
 * submitted one (another lil that would normalize it otherwise must not run it as if it
 * were the same);
 *   3. lil_loop_open with the queued inputs and sync mode (the run's first
 *      open journals the start record), then lil_loop_step until the run
 *      completes, fails, parks, pauses, stops or is uncertain -- or
 *      lil_worker_drain asks for the run to be handed back, which is
 *      checked between iterations;
 *   4. queue_finish: the queue state (lil__queue_state_of), checked
 *      against the claim's epoch: a worker that lost its run in the
 *      meantime records nothing ("lost"), as its appends were refused;
 *   5. lil_loop_close (the lease let go), queue_release.
 *
 * What can go wrong with a run is the run's, not the worker's: it goes
 * into the result (state and message) and lil_worker_next returns LIL_OK.
 * An error that another try may not meet (the server away, a lost
 * connection, memory) queues the run again a moment later; one that every
 * try would meet (the spec no longer loads, a damaged journal, a wrong key)
 * puts it in state error for an operator.  A fenced handle (its lease lost)
 * is the other worker's to record.
 *
 * A worker is in the store's registry of workers (worker_join) from new
 * to free: its process's row, whose heartbeat the store keeps.
 *
 * Threads: a worker is one thread's; draining is an atomic flag, so a
 * signal handler may set it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/handles.h"
#include "loop/runner.h"
#include "loopspec/spec.h"
#include "queue/payload.h"
#include "queue/queue.h"
#include "store/store.h"

#define RETRY_AFTER_MS 1000 /* a run met a passing error: claimable again then */

static bool draining(const struct lil_worker *w)
{
    return __atomic_load_n(&w->draining, __ATOMIC_ACQUIRE) != 0;
}

/* ---- new and free ---------------------------------------------------------------- */

static char *dup_opt(const struct lil_env *env, const char *s, bool *nomem)
{
    char *d = s ? lil__strdup(env, s) : NULL;

    if (s && !d)
        *nomem = true;
    return d;
}

static lil_status copy_opts(struct lil_worker *w, const lil_worker_opts *o)
{
    const struct lil_env *env = w->st->env;
    bool nomem = false;

    if (!o)
        return LIL_OK;
    if (o->struct_size != offsetof(lil_worker_opts, on_claim) &&
        o->struct_size < sizeof(lil_worker_opts))
        return lil__seterr(&w->err, LIL_E_INVAL, 0,
                           "lil_worker_new: opts->struct_size is too small");
    if (o->struct_size >= sizeof(lil_worker_opts)) {
        w->on_claim = o->on_claim;
        w->on_claim_ud = o->on_claim_ud;
    }
    if (o->max_block_ms < 0 || o->effect_timeout_ms < 0)
        return lil__seterr(
            &w->err, LIL_E_INVAL, 0,
            "lil_worker_new: negative max_block_ms or effect_timeout_ms");
    w->name = dup_opt(env, o->name, &nomem);
    w->env_allow = dup_opt(env, o->env_allow, &nomem);
    w->cwd = dup_opt(env, o->cwd, &nomem);
    w->actor = dup_opt(env, o->actor, &nomem);
    w->max_block_ms = o->max_block_ms;
    w->effect_timeout_ms = o->effect_timeout_ms;
    return nomem ? lil__seterr(&w->err, LIL_E_NOMEM, 0, "out of memory") : LIL_OK;
}

void lil__worker_free(lil_worker *w)
{
    const struct lil_env *env;

    if (!w)
        return;
    env = w->st->env;
    w->magic = 0;
    if (w->joined)
        w->st->ops->worker_leave(w->st);
    lil__free(env, w->name);
    lil__free(env, w->env_allow);
    lil__free(env, w->cwd);
    lil__free(env, w->actor);
    lil__free(env, w);
}

lil_status lil__worker_new(lil_store *st, struct lil_err *err,
                           const lil_worker_opts *opts, lil_worker **out)
{
    struct lil_worker *w;
    lil_status rc;

    *out = NULL;
    if (!st->ops->queue_claim)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "%s is %s: it keeps no queue, so workers have nothing to "
                           "claim (a directory serves one machine: lil run, lil "
                           "tick); workers need a PostgreSQL store, postgresql://...",
                           st->where, lil__queue_less_kind(st));
    w = lil__calloc(st->env, 1, sizeof(*w));
    if (!w)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    w->st = st;
    w->magic = LIL_WORKER_MAGIC;
    rc = copy_opts(w, opts);
    if (rc == LIL_OK && st->ops->worker_join) {
        rc = st->ops->worker_join(st, &w->err, w->name);
        w->joined = rc == LIL_OK;
    }
    if (rc != LIL_OK) {
        lil__copyerr(err, &w->err);
        lil__worker_free(w);
        return rc;
    }
    *out = w;
    return LIL_OK;
}

void lil__worker_drain(lil_worker *w)
{
    __atomic_store_n(&w->draining, 1, __ATOMIC_RELEASE);
}

/* ---- one claimed run ------------------------------------------------------------- */

/* What became of the claimed run, as it goes into the result and the queue. */
struct outcome {
    enum lil_sq_state state;
    int64_t wake_at_ms;
    char message[256];
};

static void outcome_set(struct outcome *out, enum lil_sq_state state, const char *fmt,
                        ...) __attribute__((format(printf, 3, 4)));

static void outcome_set(struct outcome *out, enum lil_sq_state state, const char *fmt,
                        ...)
{
    va_list ap;

    out->state = state;
    out->wake_at_ms = 0;
    va_start(ap, fmt);
    vsnprintf(out->message, sizeof(out->message), fmt, ap);
    va_end(ap);
}

/* An error of the run's open or of an iteration: retried later, or an
 * operator's. */
static void outcome_error(struct outcome *out, lil_status rc, const char *msg)
{
    switch (rc) {
    case LIL_E_PG:
    case LIL_E_IO:
    case LIL_E_NOMEM:
    case LIL_E_POISONED: /* a lost commit, or fenced: finish tells which */
    case LIL_E_LOCKED:   /* a claim lost, or a process that runs it by hand */
        outcome_set(out, LIL_SQ_QUEUED, "%s", msg);
        out->wake_at_ms = lil__loop_now_ms() + RETRY_AFTER_MS;
        break;
    default:
        outcome_set(out, LIL_SQ_ERROR, "%s", msg);
        break;
    }
}

/* The spec of claim c's payload job (its digest checked), or an error
 * outcome. */
static lil_spec *claim_spec(struct lil_worker *w, const struct lil_sclaim *c,
                            struct queue_payload *job, struct outcome *out)
{
    char digest[2 * LIL_SHA256_LEN + 1];
    lil_spec *spec = NULL;
    struct lil_err e;
    const lil_diag *d;

    if (lil__queue_payload_decode(w->st->env, &e, c->payload, c->payload_len, job) !=
        LIL_OK) {
        outcome_error(out, e.code, e.msg);
        return NULL;
    }
    if (lil__spec_parse(w->st->env, &e, job->name, job->spec, job->spec_len, NULL,
                        &spec) != LIL_OK) {
        outcome_error(out, LIL_E_NOMEM, e.msg);
        return NULL;
    }
    d = lil__spec_ok(spec) ? NULL : lil__spec_diag(spec, 0);
    if (!lil__spec_ok(spec)) {
        outcome_set(out, LIL_SQ_ERROR, "the queued spec has errors with this lil: %s",
                    d ? d->message : "?");
    } else if (lil__queue_spec_digest(spec, &e, digest) != LIL_OK) {
        outcome_set(out, LIL_SQ_ERROR, "%s", e.msg);
    } else if (job->sha256[0] && strcmp(digest, job->sha256) != 0) {
        outcome_set(out, LIL_SQ_ERROR,
                    "the queued spec normalizes otherwise with this lil (%.16s...): "
                    "a lil of the version that queued it must run it",
                    digest);
    } else {
        return spec;
    }
    lil__spec_free(spec);
    return NULL;
}

static lil_loop_opts loop_opts(const struct lil_worker *w, const struct lil_sclaim *c,
                               const struct queue_payload *job)
{
    lil_loop_opts o;

    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.run_id = c->run_id;
    o.sync = c->sync;
    o.inputs_json = job->inputs;
    o.env_allow = w->env_allow;
    o.cwd = w->cwd;
    o.actor = w->actor;
    o.max_block_ms = w->max_block_ms;
    o.effect_timeout_ms = w->effect_timeout_ms;
    return o;
}

/* Run lp iteration by iteration; *res is the last result. */
static lil_status step_on(struct lil_worker *w, lil_loop *lp, lil_loop_result *res)
{
    for (;;) {
        lil_status rc = lil__loop_step_call(lp, res);

        if (rc != LIL_OK || res->status != LIL_LOOP_WAITING || !res->has_next ||
            res->wake_at_ms > lil__loop_now_ms() || draining(w))
            return rc;
        lil__loop_result_free(res);
    }
}

static void from_result(struct outcome *out, const lil_loop_result *res,
                        lil_worker_result *wr)
{
    out->state = lil__queue_state_of(res, lil__loop_now_ms());
    out->wake_at_ms = out->state == LIL_SQ_PARKED ? res->wake_at_ms : 0;
    snprintf(out->message, sizeof(out->message), "%s", res->reason ? res->reason : "");
    wr->status = res->status;
    wr->iterations = res->iteration;
}

/* Steps 2 and 3 (see the top): *out says where the run stands; *lp stays
 * open (the caller records the outcome first, then closes it). */
static void run_claim(struct lil_worker *w, const struct lil_sclaim *c,
                      const struct queue_payload *job, lil_spec *spec, lil_loop **lp,
                      struct outcome *out, lil_worker_result *wr)
{
    lil_loop_opts o = loop_opts(w, c, job);
    lil_loop_result res;
    struct lil_err e;
    lil_status rc;

    memset(&res, 0, sizeof(res));
    rc = lil__loop_open_call(w->st, &e, spec, &o, lp);
    if (rc != LIL_OK) {
        outcome_error(out, rc, e.msg);
        return;
    }
    rc = step_on(w, *lp, &res);
    if (rc != LIL_OK)
        outcome_error(out, rc, (*lp)->err.msg);
    else
        from_result(out, &res, wr);
    lil__loop_result_free(&res);
}

/* Step 4: the outcome in the queue and in *wr. */
static void record(struct lil_worker *w, struct lil_sclaim *c,
                   const struct outcome *out, lil_worker_result *wr)
{
    enum lil_sq_state state = out->state;
    bool why = state == LIL_SQ_QUEUED || state == LIL_SQ_ERROR;
    struct lil_squeue_end end = {state, out->wake_at_ms, why ? out->message : NULL};
    struct lil_err e;
    lil_status rc = w->st->ops->queue_finish(w->st, &e, c, &end);

    snprintf(wr->state, sizeof(wr->state), "%s",
             rc == LIL_E_LOCKED ? "lost" : lil__sq_state_name(state));
    wr->wake_at_ms = rc == LIL_E_LOCKED ? 0 : out->wake_at_ms;
    if (rc == LIL_OK)
        snprintf(wr->message, sizeof(wr->message), "%s", out->message);
    else if (rc == LIL_E_LOCKED)
        snprintf(wr->message, sizeof(wr->message), "%s", e.msg);
    else
        snprintf(wr->message, sizeof(wr->message), "%.100s (not recorded: %.100s)",
                 out->message, e.msg);
    lil__log(w->st->env, rc == LIL_OK ? LIL_LOG_INFO : LIL_LOG_WARN,
             "event=worker run=%s epoch=%lld state=%s", c->run_id, (long long)c->epoch,
             wr->state);
}

lil_status lil__worker_next(lil_worker *w, lil_worker_result *res)
{
    struct lil_sclaim *c = NULL;
    struct queue_payload job;
    struct outcome out;
    lil_loop *lp = NULL;
    lil_spec *spec;
    lil_status rc;

    memset(res, 0, sizeof(*res));
    memset(&out, 0, sizeof(out));
    memset(&job, 0, sizeof(job));
    out.state = LIL_SQ_ERROR; /* set on every path */
    lil__clearerr(&w->err);
    if (draining(w))
        return lil__seterr(&w->err, LIL_E_DONE, 0, "the worker is draining");
    rc = w->st->ops->queue_claim(w->st, &w->err, w->name, &c);
    if (rc != LIL_OK) {
        if (rc != LIL_E_NOTFOUND)
            lil__publish_err(&w->err);
        return rc;
    }
    snprintf(res->run_id, sizeof(res->run_id), "%s", c->run_id);
    res->epoch = c->epoch;
    res->attempt = c->attempts;
    res->takeover = c->was == LIL_SQ_RUNNING;
    if (w->on_claim) {
        snprintf(res->state, sizeof(res->state), "claimed");
        w->on_claim(w->on_claim_ud, res);
        res->state[0] = '\0';
    }
    spec = claim_spec(w, c, &job, &out);
    if (spec)
        run_claim(w, c, &job, spec, &lp, &out, res);
    record(w, c, &out, res);
    (void)lil__loop_close_call(lp);
    lil__spec_free(spec);
    lil__queue_payload_free(w->st->env, &job);
    w->st->ops->queue_release(w->st, c);
    return LIL_OK;
}
