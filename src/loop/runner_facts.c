/*
 * runner_facts.c -- what a loop run's journal says, for readers that have
 * no spec (lil_loop_facts: `lil inspect`, `lil ls`, `lil tick`).
 *
 * There is one fold of a loop run's journal: the runner's (runner_load.c).
 * A reader runs that same fold on a struct lil_loop that borrows the
 * caller's run handle and has no IR -- the meters' limits are then the
 * caps its start record journaled, the numbers the IR gave -- and asks the
 * runner's own questions of it: the status is lil__loop_status (the
 * answers that `lil run` gives without running anything), the meters are
 * lil__meters_json's.  So a reader and the runner cannot disagree about
 * what is spent, reserved or left, or about how the run stands.
 *
 * The one thing a reader knows that the runner does not: whether another
 * process holds the run.  An effect without an outcome is then in flight,
 * not uncertain, and a waiting run is being run: both read "running".
 *
 * The document (docs/api.md, "Loop facts"):
 *   {"run", "loop", "spec_path", "spec_sha256", "cwd", "inputs",
 *    "started_at_ms", "status", "ended", "reason", "iteration", "state",
 *    "holder_pid", "wake_at_ms", "uncertain", "paused", "stop", "caps",
 *    "meters", "totals", "reservations", "budget"}
 *
 * Ownership: the reader's struct lil_loop lives on the stack for one call
 * and frees what the fold made; nothing points into the run afterwards.
 * Call inside a json scope bound to the run's env.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "loop/runner.h"

#define NS_PER_MS INT64_C(1000000)

/* ---- the reader -------------------------------------------------------------- */

static void reader_init(struct lil_loop *lp, struct lil_run *run)
{
    memset(lp, 0, sizeof(*lp));
    lp->st = run->st;
    lp->env = run->env;
    lp->run = run; /* borrowed: never closed here */
    lp->run_id = run->id;
    lil__clearerr(&lp->err);
}

static void reader_free(struct lil_loop *lp)
{
    lil__loop_forget(lp);
    lil__free(lp->env, lp->slots);
    json_decref(lp->fx.inputs);
}

/* ---- parts of the document --------------------------------------------------- */

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *member_or_null(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);

    return v ? json_incref(v) : json_null();
}

/* The start record's facts. */
static void add_start(json_t *doc, const struct lil_loop *lp)
{
    const json_t *s = lp->start;
    const struct loop_binding *b = &lp->bound;

    json_object_set_new(doc, "run", json_string(lp->run_id));
    /* the spec in force: the start's, or the last accepted change's */
    json_object_set_new(doc, "loop",
                        b->loop_id ? json_string(b->loop_id)
                                   : member_or_null(s, "loopId"));
    json_object_set_new(doc, "spec_path",
                        b->spec_path ? json_string(b->spec_path)
                                     : member_or_null(s, "specPath"));
    json_object_set_new(doc, "spec_sha256",
                        b->spec[0] ? json_string(b->spec) : member_or_null(s, "spec"));
    json_object_set_new(doc, "imported", json_boolean(b->imported));
    json_object_set_new(doc, "cwd", member_or_null(s, "cwd"));
    json_object_set_new(doc, "inputs",
                        json_is_object(json_object_get(s, "inputs"))
                            ? json_incref(json_object_get(s, "inputs"))
                            : json_object()); /* sealed secrets */
    json_object_set_new(doc, "started_at_ms", json_integer(lp->started_ms));
}

static json_t *uncertain_json(const lil_loop_result *res)
{
    char slot[LIL_LOOP_NAME_MAX];
    json_t *o;

    if (!res->has_uncertain)
        return json_null();
    lil__loop_slot_name(slot, res->uncertain_iteration, res->uncertain_seq);
    o = lil__loop_uncertain_json(res);
    if (o)
        json_object_set_new(o, "slot", json_string(slot));
    return o ? o : json_null();
}

/* What a paused run waits for: a cap to approve, else a breakpoint or gate. */
static json_t *paused_json(const struct lil_loop *lp, lil_loop_status status)
{
    const struct loop_pause *p = &lp->pause;
    json_t *o;

    if (status != LIL_LOOP_PAUSED)
        return json_null();
    o = lil__loop_pause_json(lp); /* kind, id, digest, iteration, ... */
    if (o && lp->meters.pending != LIL_CAP_NONE)
        json_object_set_new(o, "action", json_string("breakpoint"));
    else if (o)
        json_object_set_new(o, "question", str_or_null(p->reason));
    return o;
}

/* The reservations that calls without an outcome hold (counted as spent). */
static json_t *reservations_json(const struct lil_loop *lp)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < lp->nslots; i++) {
        const struct loop_slot *s = &lp->slots[i];
        json_t *o;

        if (!s->has_held)
            continue;
        o = json_pack("{s:s, s:I, s:f}", "slot", s->name, "tokens",
                      (json_int_t)s->held.tokens, "usd", s->held.usd);
        if (o && s->held.usd_rest)
            json_object_set_new(o, "unpriced", json_true());
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *left_of(int64_t limit, int64_t used)
{
    return json_integer(limit > used ? limit - used : 0);
}

/* {"limit", "used", "reserved", "left"} of a budget of limit. */
static json_t *token_budget(int64_t limit, int64_t used, int64_t reserved)
{
    return json_pack("{s:I, s:I, s:I, s:o}", "limit", (json_int_t)limit, "used",
                     (json_int_t)used, "reserved", (json_int_t)reserved, "left",
                     left_of(limit, used));
}

static json_t *usd_budget(double limit, double used, double reserved)
{
    return json_pack("{s:f, s:f, s:f, s:f}", "limit", limit, "used", used, "reserved",
                     reserved, "left", limit > used ? limit - used : 0.0);
}

static json_t *wall_budget(int64_t limit, int64_t used)
{
    return json_pack("{s:I, s:I, s:o}", "limit", (json_int_t)limit, "used",
                     (json_int_t)used, "left", left_of(limit, used));
}

/* What each budget of the run has spent (reservations included), holds
 * reserved and has left, wallclock to at_ms. */
static json_t *budget_json(const struct lil_loop_meters *m, int64_t at_ms)
{
    const struct lil_cap_limits *lim = &m->lim;
    json_t *o = json_object();

    json_object_set_new(
        o, "tokens",
        lim->has_tokens
            ? token_budget(lim->tokens, lil__meters_spent_tokens(m), m->reserved_tokens)
            : json_null());
    json_object_set_new(
        o, "usd",
        lim->has_usd ? usd_budget(lim->usd, lil__meters_spent_usd(m), m->reserved_usd)
                     : json_null());
    json_object_set_new(o, "wallclock_ms",
                        lim->has_wallclock ? wall_budget(lim->wallclock_ms,
                                                         at_ms - m->wallclock_base_ms)
                                           : json_null());
    return o;
}

/* The caps the meters count against, as the start record holds them. */
static json_t *caps_json(const struct lil_loop *lp)
{
    return lp->has_start_caps ? lil__cap_limits_json(&lp->start_caps) : json_null();
}

/* ---- status ------------------------------------------------------------------ */

/* The runner's answer, read by one that sees a holder: an effect in flight
 * and a waiting run are running. */
static const char *status_word(const struct lil_loop *lp, const lil_loop_result *res,
                               bool held)
{
    if (held && lp->end == LOOP_LIVE &&
        (res->status == LIL_LOOP_WAITING || res->status == LIL_LOOP_UNCERTAIN))
        return "running";
    return lil__loop_status_name(res->status);
}

static json_t *reason_json(const lil_loop_result *res, const char *word, int pid)
{
    char text[LIL_ERRMSG_MAX + 64], who[48];

    if (strcmp(word, "running") != 0)
        return str_or_null(res->reason);
    if (!res->has_uncertain)
        return json_null();
    if (pid > 0)
        snprintf(who, sizeof(who), "pid %d", pid);
    else
        snprintf(who, sizeof(who), "another process");
    snprintf(text, sizeof(text),
             "effect seq %lld (%s) of iteration %lld is in flight: %s holds the run",
             (long long)res->uncertain_seq, res->uncertain_kind,
             (long long)res->uncertain_iteration, who);
    return json_string(text);
}

static void add_status(json_t *doc, const struct lil_loop *lp,
                       const lil_loop_result *res, const lil_run_info *info)
{
    bool held = lp->run->readonly && info->holder_pid != 0;
    const char *word = status_word(lp, res, held);

    json_object_set_new(doc, "status", json_string(word));
    json_object_set_new(doc, "ended", json_boolean(lp->end != LOOP_LIVE));
    json_object_set_new(doc, "reason", reason_json(res, word, info->holder_pid));
    json_object_set_new(doc, "iteration", json_integer(res->iteration));
    json_object_set_new(doc, "state",
                        lp->committed ? json_incref(lp->committed) : json_object());
    json_object_set_new(doc, "holder_pid",
                        info->holder_pid ? json_integer(info->holder_pid)
                                         : json_null());
    json_object_set_new(doc, "wake_at_ms",
                        lp->parked && res->status == LIL_LOOP_WAITING
                            ? json_integer(lp->wake_at_ms)
                            : json_null());
    json_object_set_new(doc, "uncertain", uncertain_json(res));
    json_object_set_new(doc, "paused", paused_json(lp, res->status));
    json_object_set_new(doc, "stop", lp->stop ? json_incref(lp->stop) : json_null());
}

/* ---- the document ------------------------------------------------------------ */

static lil_status document(struct lil_loop *lp, const lil_run_info *info,
                           int64_t now_ms, json_t **out)
{
    int64_t at = lp->end != LOOP_LIVE ? info->last_ns / NS_PER_MS : now_ms;
    lil_loop_result res;
    json_t *doc = json_object(), *meters = NULL;
    lil_status rc;

    memset(&res, 0, sizeof(res));
    rc = doc ? lil__loop_status(lp, &res) : LIL_E_NOMEM;
    if (rc == LIL_OK)
        rc = lil__meters_json(lp->env, &lp->err, &lp->meters, at, &meters);
    if (rc == LIL_OK) {
        add_start(doc, lp);
        add_status(doc, lp, &res, info);
        json_object_set_new(doc, "caps", caps_json(lp));
        json_object_set_new(doc, "meters", meters);
        json_object_set_new(doc, "totals",
                            json_pack("{s:I, s:f}", "tokens",
                                      (json_int_t)lp->meters.tokens, "usd",
                                      lp->meters.usd));
        json_object_set_new(doc, "reservations", reservations_json(lp));
        json_object_set_new(doc, "budget", budget_json(&lp->meters, at));
        *out = doc;
        doc = NULL;
    }
    lil__loop_result_free(&res);
    json_decref(doc);
    return rc == LIL_E_NOMEM && !lp->err.msg[0]
               ? lil__seterr(&lp->err, rc, 0, "out of memory")
               : rc;
}

lil_status lil__loop_facts(struct lil_run *run, struct lil_err *err, int64_t now_ms,
                           json_t **out)
{
    struct lil_loop lp;
    lil_run_info info;
    lil_status rc;

    *out = NULL;
    reader_init(&lp, run);
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    rc = lil__run_info(run, &lp.err, &info);
    if (rc == LIL_OK)
        rc = lil__loop_load(&lp);
    if (rc == LIL_OK && !lp.started)
        rc = lil__seterr(&lp.err, LIL_E_NOTFOUND, 0,
                         "run %s has no loop start record: it is not a loop run",
                         run->id);
    if (rc == LIL_OK)
        rc = document(&lp, &info, now_ms, out);
    if (rc != LIL_OK)
        lil__copyerr(err, &lp.err);
    reader_free(&lp);
    return rc;
}
