/*
 * fork.c -- where a fork may cut a run's journal, and the provenance it
 * records (fork.h has the rules).  One walk over the verified image notes,
 * after each record, whether a cut there is valid and which iteration or
 * step the fork would go on at; the cut asked for is then looked up, and a
 * refused one is answered with the nearest valid cuts on either side.
 */
#include "history/fork.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "loop/record_name.h"
#include "store/image.h"

/* What a cut after one record would keep. */
struct after {
    uint64_t end;       /* the image's bytes up to the record's end */
    uint64_t iteration; /* loop: iterations committed (snapshots) */
    uint64_t steps;     /* ordinary run: outcomes */
    bool ok;            /* a cut after it is valid */
    bool boundary;      /* loop: the start record or a snapshot (--at's cuts) */
};

/* An effect begun and not ended (ordinary runs). */
struct pending {
    const uint8_t *key;
    size_t len;
};

struct walk {
    const struct lil_env *env;
    struct after *rec; /* one per record, [seq - 1] */
    size_t n;
    bool loop, started, open; /* loop run, its start seen, an iteration begun */
    bool boundary;            /* the record just walked: start or snapshot */
    uint64_t iteration, steps, start_seq;
    struct pending *pend;
    size_t npend, cappend;
    bool nomem;
};

static bool is_start(const struct lil_rec *r)
{
    return r->type == LIL_REC_STEP && r->key_len == 4 && memcmp(r->key, "loop", 4) == 0;
}

static bool is_slot_type(int type)
{
    return type == LIL_REC_STEP || type == LIL_REC_STEP_FAILED ||
           type == LIL_REC_INTENT || type == LIL_REC_RESOLVE || type == LIL_REC_REQUEST;
}

/* A loop run's record: the start, a snapshot, a slot. */
static void loop_record(struct walk *w, const struct lil_rec *r)
{
    struct lil_loop_name nm;

    w->boundary = false;
    if (!w->started) {
        if (is_start(r)) {
            w->started = true;
            w->start_seq = r->seq;
            w->boundary = true;
        }
        return;
    }
    if (!lil__loop_name_parse((const char *)r->key, r->key_len, &nm))
        return;
    if (nm.kind == LIL_LOOP_NAME_SNAP && r->type == LIL_REC_STEP) {
        w->open = false;
        w->iteration = (uint64_t)nm.iteration + 1;
        w->boundary = true;
    } else if (nm.kind == LIL_LOOP_NAME_SLOT && is_slot_type(r->type)) {
        w->open = true;
    }
}

static void pending_drop(struct walk *w, const struct lil_rec *r)
{
    for (size_t i = 0; i < w->npend; i++)
        if (w->pend[i].len == r->key_len &&
            memcmp(w->pend[i].key, r->key, r->key_len) == 0) {
            w->pend[i] = w->pend[--w->npend];
            return;
        }
}

static void pending_add(struct walk *w, const struct lil_rec *r)
{
    if (w->npend == w->cappend) {
        size_t cap = w->cappend ? 2 * w->cappend : 16;
        struct pending *p = lil__realloc(w->env, w->pend, cap * sizeof(*p));
        if (!p) {
            w->nomem = true;
            return;
        }
        w->pend = p;
        w->cappend = cap;
    }
    w->pend[w->npend].key = r->key;
    w->pend[w->npend++].len = r->key_len;
}

/* An ordinary run's record: intents and their ends, outcomes counted. */
static void program_record(struct walk *w, const struct lil_rec *r)
{
    if (r->type == LIL_REC_INTENT)
        pending_add(w, r);
    else if (r->type == LIL_REC_RESOLVE)
        pending_drop(w, r);
    if (r->type == LIL_REC_STEP || r->type == LIL_REC_STEP_FAILED) {
        pending_drop(w, r);
        w->steps++;
    }
}

static int each(void *ud, const struct lil_rec *r)
{
    struct walk *w = ud;
    struct after *a;

    if (r->seq != w->n + 1)
        return 1; /* the image was verified: cannot happen */
    if (!w->loop && is_start(r))
        w->loop = true;
    loop_record(w, r);
    program_record(w, r);
    a = &w->rec[w->n++];
    a->end = r->off + r->len;
    a->iteration = w->iteration;
    a->steps = w->steps;
    a->ok = w->loop ? w->started && !w->open : w->npend == 0;
    a->boundary = w->boundary;
    return w->nomem;
}

static int count(void *ud, const struct lil_rec *r)
{
    (void)r;
    ++*(size_t *)ud;
    return 0;
}

static lil_status walk_image(struct walk *w, struct lil_err *err, const uint8_t *image,
                             size_t valid)
{
    size_t n = 0;

    (void)lil__image_records(image, valid, count, &n);
    w->rec = lil__calloc(w->env, n + 1, sizeof(*w->rec));
    if (!w->rec)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    (void)lil__image_records(image, valid, each, w);
    if (w->nomem)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    /* an ordinary-looking prefix of a loop run: the start came later */
    for (size_t i = 0; w->loop && i < w->n; i++)
        w->rec[i].ok = w->rec[i].ok && i + 1 >= w->start_seq;
    return LIL_OK;
}

/* "--at-seq S (--at N)", "(on at iteration N)" or "(step N)" for a valid
 * cut S, into buf. */
static void name_cut(const struct walk *w, uint64_t s, char *buf, size_t cap)
{
    const struct after *a = &w->rec[s - 2];

    if (w->loop && a->boundary)
        snprintf(buf, cap, "--at-seq %" PRIu64 " (--at %" PRIu64 ")", s, a->iteration);
    else if (w->loop)
        snprintf(buf, cap, "--at-seq %" PRIu64 " (on at iteration %" PRIu64 ")", s,
                 a->iteration);
    else
        snprintf(buf, cap, "--at-seq %" PRIu64 " (step %" PRIu64 ")", s, a->steps + 1);
}

/* The refusal of cut s (2 to n + 1), naming the valid cuts around it. */
static lil_status refuse_seq(const struct walk *w, struct lil_err *err,
                             const char *run_id, uint64_t s)
{
    char near[200] = "none";
    uint64_t lo = s - 1, hi = s + 1;
    size_t at = 0;

    while (lo >= 2 && !w->rec[lo - 2].ok)
        lo--;
    while (hi <= w->n + 1 && !w->rec[hi - 2].ok)
        hi++;
    if (lo >= 2) {
        name_cut(w, lo, near, sizeof(near));
        at = strlen(near);
    }
    if (hi <= w->n + 1) {
        if (at)
            at += (size_t)snprintf(near + at, sizeof(near) - at, " and ");
        name_cut(w, hi, near + at, sizeof(near) - at);
    }
    if (w->loop && s <= w->start_seq)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "run %s: a cut at seq %" PRIu64 " comes before the loop's "
                           "start record (seq %" PRIu64 "); the nearest valid cut: %s",
                           run_id, s, w->start_seq, near);
    return lil__seterr(err, LIL_E_INVAL, 0,
                       "run %s: a cut at seq %" PRIu64 " falls inside %s; the nearest "
                       "valid cuts: %s",
                       run_id, s,
                       w->loop ? "an iteration that no snapshot commits"
                               : "an effect whose outcome comes after it",
                       near);
}

static lil_status plan_seq(const struct walk *w, struct lil_err *err,
                           const char *run_id, uint64_t s, struct lil_fork_plan *p)
{
    if (s < 2 || s > w->n + 1)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "run %s has records 1 to %zu: --at-seq takes 2 to %zu",
                           run_id, w->n, w->n + 1);
    if (!w->rec[s - 2].ok)
        return refuse_seq(w, err, run_id, s);
    p->cut_seq = s;
    return LIL_OK;
}

static lil_status plan_iteration(const struct walk *w, struct lil_err *err,
                                 const char *run_id, struct lil_fork_plan *p)
{
    uint64_t done = w->n ? w->rec[w->n - 1].iteration : 0;

    if (!w->loop)
        return lil__seterr(
            err, LIL_E_INVAL, 0,
            "run %s is not a loop run: it has no iterations (cut it with "
            "--at-step or --at-seq)",
            run_id);
    if (p->at > done)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "run %s has committed %" PRIu64
                           " iteration(s): --at takes 0 to %" PRIu64,
                           run_id, done, done);
    if (p->at == 0) {
        p->cut_seq = w->start_seq + 1;
        return LIL_OK;
    }
    for (size_t i = 0; i < w->n; i++)
        if (w->rec[i].iteration == p->at) { /* the snapshot of iteration at - 1 */
            p->cut_seq = i + 2;
            return LIL_OK;
        }
    return lil__seterr(err, LIL_E_INVAL, 0, "run %s: no snapshot of iteration %" PRIu64,
                       run_id, p->at - 1);
}

static lil_status plan_step(const struct walk *w, struct lil_err *err,
                            const char *run_id, struct lil_fork_plan *p)
{
    uint64_t steps = w->n ? w->rec[w->n - 1].steps : 0;

    if (w->loop)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "run %s is a loop run: cut it between iterations (--at N or "
                           "--at-seq)",
                           run_id);
    if (p->at < 1 || p->at > steps + 1)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "run %s has %" PRIu64
                           " step(s): --at-step takes 1 to %" PRIu64,
                           run_id, steps, steps + 1);
    if (p->at == 1)
        return plan_seq(w, err, run_id, 2, p);
    for (size_t i = 0; i < w->n; i++)
        if (w->rec[i].steps == p->at - 1)
            return plan_seq(w, err, run_id, i + 2, p);
    return lil__seterr(err, LIL_E_INVAL, 0, "run %s: no step %" PRIu64, run_id, p->at);
}

static lil_status plan_cut(const struct walk *w, struct lil_err *err,
                           const char *run_id, struct lil_fork_plan *p)
{
    switch (p->kind) {
    case LIL_FORK_AT_ITERATION:
        return plan_iteration(w, err, run_id, p);
    case LIL_FORK_AT_STEP:
        return plan_step(w, err, run_id, p);
    case LIL_FORK_AT_SEQ:
        return plan_seq(w, err, run_id, p->at, p);
    default:
        return lil__seterr(err, LIL_E_INVAL, 0, "lil_run_fork: unknown at_kind %d",
                           p->kind);
    }
}

lil_status lil__fork_plan(const struct lil_env *env, struct lil_err *err,
                          const char *run_id, const uint8_t *image, size_t valid,
                          struct lil_fork_plan *plan)
{
    struct walk w;
    lil_status rc;

    memset(&w, 0, sizeof(w));
    w.env = env;
    rc = walk_image(&w, err, image, valid);
    if (rc == LIL_OK && w.n == 0)
        rc = lil__seterr(err, LIL_E_CORRUPT, 0, "run %s holds no record", run_id);
    if (rc == LIL_OK)
        rc = plan_cut(&w, err, run_id, plan);
    if (rc == LIL_OK) {
        const struct after *kept = &w.rec[plan->cut_seq - 2];
        plan->loop = w.loop;
        plan->cut_len = (size_t)kept->end;
        plan->iteration = kept->iteration;
        plan->step = kept->steps + 1;
        plan->source_last = w.n;
        memcpy(plan->source_head, lil__image_head(image, valid), LIL_SHA256_LEN);
    }
    lil__free(env, w.pend);
    lil__free(env, w.rec);
    return rc;
}

json_t *lil__fork_provenance(const struct lil_fork_plan *plan,
                             const struct lil_fork_who *who)
{
    char head[2 * LIL_SHA256_LEN + 1];
    json_t *cut;

    lil__hex(plan->source_head, LIL_SHA256_LEN, head);
    cut = json_pack("{sI}", "seq", (json_int_t)plan->cut_seq);
    if (cut)
        json_object_set_new(
            cut, plan->loop ? "iteration" : "step",
            json_integer((json_int_t)(plan->loop ? plan->iteration : plan->step)));
    return json_pack("{ss so sI ss ss ss ss sI ss}", "source", who->source, "cut", cut,
                     "sourceRecords", (json_int_t)plan->source_last, "sourceHead", head,
                     "sourceStore", who->source_store, "actor", who->actor, "osUser",
                     who->os_user, "at", (json_int_t)who->at_ms, "reason", who->reason);
}
