/*
 * runner_load.c -- what the journal says about a loop run: one walk over
 * its records (docs/loops.md, "Records").
 *
 * The walk keeps the bytes of the last snapshot and, after it, the records
 * that a resumed iteration needs: its slots (effects, sleeps, approvals)
 * and the records that move the meters (usage of agent effects, cap,
 * cap_cleared, the reservations of agent calls: reserve, then the intent
 * and the outcome of its slot -- runner_budget.c), in journal order.
 * Snapshots before the last one are passed over unparsed, so resuming
 * costs one pass over the journal and the parse of one snapshot, however
 * long the run.  Control records are rare and are applied as they come:
 * stop requests, pauses, parks, the end.
 *
 * The walk starts at the start record ("loop", with a "loopId" string):
 * what comes before it is no loop's.  The meters' limits are the spec's
 * (the IR), or, for a reader without one (runner_facts.c), the caps the
 * start record journaled -- the same numbers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "engine/intent.h"
#include "loop/record_name.h"
#include "loop/runner.h"

/* A record kept after the last snapshot: its name and payload in the
 * arena. */
struct kept_rec {
    int type;
    unsigned flags;
    char name[LIL_LOOP_NAME_MAX];
    size_t off, len;
};

struct walk {
    struct lil_loop *lp;
    struct lil_buf snap; /* payload of the last snapshot */
    bool has_snap;
    struct lil_buf arena; /* payloads of the records after it */
    struct kept_rec *recs;
    size_t nrecs, caprecs;
    lil_status rc;
};

/* ---- names ---------------------------------------------------------------------- */

/* Names are record_name.h's: "I.S" slots, "I.snap", "<kind>.N". */
static bool is_slot_name(const char *k, size_t n)
{
    return lil__loop_name_is_slot(k, n);
}

static bool is_snap_name(const char *k, size_t n)
{
    struct lil_loop_name nm;

    return lil__loop_name_parse(k, n, &nm) && nm.kind == LIL_LOOP_NAME_SNAP;
}

static size_t control_kind(const char *k, size_t n)
{
    return lil__loop_name_control(k, n);
}

static bool kind_is(const char *k, size_t n, const char *kind)
{
    return strlen(kind) == n && memcmp(k, kind, n) == 0;
}

/* ---- keeping records ---------------------------------------------------------- */

static lil_status keep(struct walk *w, const lil_record *rec)
{
    struct kept_rec *r;

    if (rec->key_len >= LIL_LOOP_NAME_MAX)
        return LIL_OK;
    r = lil__grow(w->lp->env, w->recs, &w->caprecs, w->nrecs, sizeof(*r), 64);
    if (!r)
        return lil__seterr(&w->lp->err, LIL_E_NOMEM, 0, "out of memory");
    w->recs = r;
    r = &w->recs[w->nrecs];
    r->type = rec->type;
    r->flags = rec->flags;
    memcpy(r->name, rec->key, rec->key_len);
    r->name[rec->key_len] = '\0';
    r->off = w->arena.len;
    r->len = rec->payload_len;
    if (lil__buf_add(&w->arena, rec->payload, rec->payload_len) != LIL_OK)
        return lil__seterr(&w->lp->err, LIL_E_NOMEM, 0, "out of memory");
    w->nrecs++;
    return LIL_OK;
}

static lil_status new_snapshot(struct walk *w, const lil_record *rec)
{
    w->nrecs = 0;
    w->arena.len = 0;
    w->snap.len = 0;
    w->has_snap = true;
    if (lil__buf_add(&w->snap, rec->payload, rec->payload_len) != LIL_OK)
        return lil__seterr(&w->lp->err, LIL_E_NOMEM, 0, "out of memory");
    return LIL_OK;
}

/* ---- records applied as they come ------------------------------------------------ */

static json_t *parse(struct lil_loop *lp, const void *p, size_t n)
{
    json_t *v = NULL;

    if (lil__json_parse(lp->env, &lp->err, LIL_E_CORRUPT, p, n, 0, NULL, &v) != LIL_OK)
        return NULL;
    if (!json_is_object(v)) {
        json_decref(v);
        lil__seterr(&lp->err, LIL_E_CORRUPT, 0, "loop record is not a JSON object");
        return NULL;
    }
    return v;
}

/* Member key of record v, an integer in [lo, LIL_LOOP_NUM_MAX]. */
static bool num_ok(struct lil_loop *lp, const json_t *v, const char *what,
                   const char *key, int64_t lo, int64_t *out)
{
    if (lil__json_int_in(v, key, lo, LIL_LOOP_NUM_MAX, out))
        return true;
    lil__seterr(&lp->err, LIL_E_CORRUPT, 0,
                "%s of run %s: \"%s\" is not an integer from %lld to %lld", what,
                lp->run_id, key, (long long)lo, (long long)LIL_LOOP_NUM_MAX);
    return false;
}

/* Member key of record v, an amount of money in [0, LIL_LOOP_USD_MAX]. */
static bool usd_ok(struct lil_loop *lp, const json_t *v, const char *what,
                   const char *key, double *out)
{
    if (lil__json_num_in(v, key, 0, LIL_LOOP_USD_MAX, out))
        return true;
    lil__seterr(&lp->err, LIL_E_CORRUPT, 0,
                "%s of run %s: \"%s\" is not a number from 0 to %g", what, lp->run_id,
                key, LIL_LOOP_USD_MAX);
    return false;
}

static char *dup_str(struct lil_loop *lp, const char *s)
{
    return s ? lil__strdup(lp->env, s) : NULL;
}

static void set_end(struct lil_loop *lp, enum loop_end end, const char *reason)
{
    lp->end = end;
    lil__free(lp->env, lp->end_reason);
    lp->end_reason = dup_str(lp, reason);
}

/* The start's caps: the meters' limits of a fold without an IR. */
static lil_status start_caps(struct lil_loop *lp, json_t *v)
{
    json_t *caps = json_object_get(v, "caps");

    lp->has_start_caps = false;
    if (lp->ir || !caps || json_is_null(caps))
        return LIL_OK;
    if (lil__cap_limits_from_json(caps, &lp->err, &lp->start_caps) != LIL_OK)
        return lp->err.code;
    lp->has_start_caps = true;
    return LIL_OK;
}

static lil_status apply_start(struct lil_loop *lp, json_t *v)
{
    if (!json_is_string(json_object_get(v, "loopId")))
        return LIL_OK; /* a step named "loop" of a run that is no loop run */
    lp->started = true;
    json_decref(lp->start);
    lp->start = json_incref(v);
    json_decref(lp->committed);
    lp->committed = json_incref(json_object_get(v, "baseState"));
    if (!json_is_object(lp->committed))
        return lil__seterr(&lp->err, LIL_E_CORRUPT, 0,
                           "the start record of run %s has no baseState", lp->run_id);
    if (!num_ok(lp, v, "the start record", "startedAt", 0, &lp->started_ms))
        return lp->err.code;
    json_decref(lp->fx.inputs);
    lp->fx.inputs = json_incref(json_object_get(v, "inputs"));
    if (lil__loop_bind_start(lp, v) != LIL_OK)
        return lp->err.code;
    return start_caps(lp, v);
}

static void pause_clear(struct lil_loop *lp)
{
    lil__free(lp->env, lp->pause.step);
    lil__free(lp->env, lp->pause.ask);
    lil__free(lp->env, lp->pause.reason);
    memset(&lp->pause, 0, sizeof(lp->pause));
}

static lil_status apply_pause(struct lil_loop *lp, const char *name, json_t *v)
{
    const char *d = json_string_value(json_object_get(v, "digest")), *s;

    pause_clear(lp);
    lp->pause.on = true;
    snprintf(lp->pause.id, sizeof(lp->pause.id), "%s", name);
    if (!num_ok(lp, v, "a pause record", "iteration", 0, &lp->pause.iteration) ||
        !num_ok(lp, v, "a pause record", "seq", -1, &lp->pause.seq))
        return lp->err.code;
    snprintf(lp->pause.digest, sizeof(lp->pause.digest), "%s", d ? d : "");
    lp->pause.step = dup_str(lp, json_string_value(json_object_get(v, "step")));
    lp->pause.ask = dup_str(lp, json_string_value(json_object_get(v, "ask")));
    s = json_string_value(json_object_get(v, "strategy"));
    snprintf(lp->pause.strategy, sizeof(lp->pause.strategy), "%s", s ? s : "single");
    lp->pause.reason = dup_str(lp, json_string_value(json_object_get(v, "why")));
    return LIL_OK;
}

static lil_status apply_control(struct lil_loop *lp, const char *k, size_t n,
                                const char *name, json_t *v)
{
    if (kind_is(k, n, "stop_requested")) {
        json_decref(lp->stop);
        lp->stop = json_incref(json_object_get(v, "request"));
    } else if (kind_is(k, n, "stop_cleared")) {
        json_decref(lp->stop);
        lp->stop = NULL;
    } else if (kind_is(k, n, "pause")) {
        return apply_pause(lp, name, v);
    } else if (kind_is(k, n, "terminated")) {
        lp->terminated = true;
    } else if (kind_is(k, n, "observer")) {
        lp->observer_started = true;
    } else if (kind_is(k, n, "notify")) {
        return lil__loop_notify_fold(lp, v);
    } else if (kind_is(k, n, "artifacts")) {
        json_decref(lp->artifacts);
        lp->artifacts = json_incref(v);
    } else if (kind_is(k, n, "compacted")) { /* runner_compact.c */
        int64_t at = 0;

        if (!num_ok(lp, v, "a compacted record", "iteration", 0, &at))
            return lp->err.code;
        lp->compact.from_iteration = at + 1;
    } else if (kind_is(k, n, "parked")) {
        lp->parked = json_is_integer(json_object_get(v, "wakeAt"));
        if (!num_ok(lp, v, "a parked record", "wakeAt", 0, &lp->wake_at_ms))
            return lp->err.code;
    } else {
        return lil__loop_bind_control(lp, k, n, name, v);
    }
    return LIL_OK;
}

static lil_status control(struct walk *w, const lil_record *rec, size_t klen)
{
    struct lil_loop *lp = w->lp;
    const char *k = rec->key;
    unsigned long long nth = strtoull(k + klen + 1, NULL, 10);
    char name[LIL_LOOP_NAME_MAX];
    lil_status rc;
    json_t *v;

    if (nth > (unsigned long long)LIL_LOOP_NUM_MAX)
        return lil__seterr(&lp->err, LIL_E_CORRUPT, 0,
                           "record %.*s of run %s: its number is out of range",
                           (int)rec->key_len, rec->key, lp->run_id);
    if (nth > lp->nctl)
        lp->nctl = nth;
    if (rec->key_len >= LIL_LOOP_NAME_MAX)
        return LIL_OK; /* no name the runner writes */
    memcpy(name, rec->key, rec->key_len);
    name[rec->key_len] = '\0';
    if (kind_is(k, klen, "cap"))
        (void)lil__loop_bind_control(lp, k, klen, name, NULL);
    if (kind_is(k, klen, "cap") || kind_is(k, klen, "cap_cleared") ||
        kind_is(k, klen, "reserve"))
        return keep(w, rec);           /* the meters, in order, after the walk */
    if (kind_is(k, klen, "retried")) { /* runner_retry.c */
        lil__loop_retried_fold(lp);
        return keep(w, rec); /* and the meters and slots, in order */
    }
    v = parse(lp, rec->payload, rec->payload_len);
    if (!v)
        return lp->err.code;
    rc = apply_control(lp, k, klen, name, v);
    json_decref(v);
    return rc;
}

static lil_status outcome(struct walk *w, const lil_record *rec)
{
    struct lil_loop *lp = w->lp;
    const char *status;
    json_t *v;

    if (rec->type == LIL_REC_RUN_FAILED) {
        char *why = lil__malloc(lp->env, rec->payload_len + 1);

        if (!why)
            return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
        memcpy(why, rec->payload, rec->payload_len);
        why[rec->payload_len] = '\0';
        set_end(lp, LOOP_FAILED, why);
        lil__free(lp->env, why);
        return LIL_OK;
    }
    v = parse(lp, rec->payload, rec->payload_len);
    if (!v)
        return lp->err.code;
    status = json_string_value(json_object_get(v, "status"));

    if (status && strcmp(status, "stopped") == 0)
        set_end(lp, LOOP_STOPPED, json_string_value(json_object_get(v, "reason")));
    else
        set_end(lp, LOOP_COMPLETED, NULL);
    json_decref(v);
    return LIL_OK;
}

static bool is_start_name(const lil_record *rec)
{
    return rec->type == LIL_REC_STEP && rec->key_len == 4 &&
           memcmp(rec->key, "loop", 4) == 0;
}

static lil_status start_from(struct walk *w, const lil_record *rec)
{
    json_t *v = parse(w->lp, rec->payload, rec->payload_len);
    lil_status rc = v ? apply_start(w->lp, v) : w->lp->err.code;

    json_decref(v);
    return rc;
}

/* A record of what the run is bound to (runner_bind.c) that moves
 * nothing: a park stays a park after it. */
static bool binding_only(const lil_record *rec)
{
    size_t klen = rec->type == LIL_REC_STEP ? control_kind(rec->key, rec->key_len) : 0;

    return klen &&
           (kind_is(rec->key, klen, "imported") || kind_is(rec->key, klen, "adopted") ||
            kind_is(rec->key, klen, "spec_changed"));
}

static int each_record(void *ud, const lil_record *rec)
{
    struct walk *w = ud;
    size_t klen;

    bool step_like = rec->type == LIL_REC_STEP || rec->type == LIL_REC_STEP_FAILED ||
                     rec->type == LIL_REC_INTENT;

    if (!w->lp->started) { /* a loop run's records follow its start */
        w->rc = is_start_name(rec) ? start_from(w, rec) : LIL_OK;
        return w->rc != LIL_OK;
    }
    if (rec->type != LIL_REC_BEGIN && rec->type != LIL_REC_OPEN &&
        rec->type != LIL_REC_CLOSE && !binding_only(rec))
        w->lp->parked = false; /* a parked.N record sets it again */
    if (rec->type == LIL_REC_RUN_DONE || rec->type == LIL_REC_RUN_FAILED)
        w->rc = outcome(w, rec);
    else if (step_like && is_slot_name(rec->key, rec->key_len))
        w->rc = keep(w, rec);
    else if (rec->type != LIL_REC_STEP)
        return 0;
    else if (is_snap_name(rec->key, rec->key_len))
        w->rc = new_snapshot(w, rec);
    else if (is_start_name(rec))
        w->rc = start_from(w, rec);
    else if ((klen = control_kind(rec->key, rec->key_len)) != 0)
        w->rc = control(w, rec, klen);
    return w->rc != LIL_OK;
}

/* ---- after the walk ----------------------------------------------------------------
 */

static bool unhex(const char *s, uint8_t *out, size_t n)
{
    if (!s || strlen(s) != 2 * n)
        return false;
    for (size_t i = 0; i < 2 * n; i++) {
        char c = s[i];
        int v = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                       : -1;

        if (v < 0)
            return false;
        out[i / 2] = (uint8_t)(i % 2 ? (out[i / 2] << 4) | v : v);
    }
    return true;
}

/* The meters of a snapshot of iteration `iteration`, each in its range. */
static lil_status meters_from(struct lil_loop *lp, struct lil_loop_meters *m, json_t *j,
                              int64_t iteration)
{
    static const char what[] = "a snapshot's meters";

    m->iteration = iteration + 1;
    if (!num_ok(lp, j, what, "iterationBase", 0, &m->iteration_base) ||
        !num_ok(lp, j, what, "tokens", 0, &m->tokens) ||
        !num_ok(lp, j, what, "tokensBase", 0, &m->tokens_base) ||
        !usd_ok(lp, j, what, "usd", &m->usd) ||
        !usd_ok(lp, j, what, "usdBase", &m->usd_base) ||
        !num_ok(lp, j, what, "wallclockBase", 0, &m->wallclock_base_ms) ||
        !num_ok(lp, j, what, "fpResetAt", 0, &m->fp_reset_at) ||
        !num_ok(lp, j, what, "repeats", 0, &m->repeats) ||
        !num_ok(lp, j, what, "reservedTokens", 0, &m->reserved_tokens) ||
        !usd_ok(lp, j, what, "reservedUsd", &m->reserved_usd))
        return lp->err.code;
    m->has_fp =
        unhex(json_string_value(json_object_get(j, "fpHash")), m->fp, LIL_SHA256_LEN);
    return LIL_OK;
}

static lil_status restore_snapshot(struct lil_loop *lp, struct walk *w)
{
    json_t *v = parse(lp, w->snap.data, w->snap.len);
    json_t *state = v ? json_object_get(v, "state") : NULL;
    int64_t iteration;

    if (!v)
        return lp->err.code;
    if (!json_is_object(state) || !json_is_object(json_object_get(v, "meters"))) {
        json_decref(v);
        return lil__seterr(&lp->err, LIL_E_CORRUPT, 0,
                           "a snapshot of run %s has no state or meters", lp->run_id);
    }
    if (!num_ok(lp, v, "a snapshot", "iteration", 0, &iteration) ||
        meters_from(lp, &lp->meters, json_object_get(v, "meters"), iteration) !=
            LIL_OK) {
        json_decref(v);
        return lp->err.code;
    }
    json_decref(lp->committed);
    lp->committed = json_incref(state);
    json_decref(v);
    return LIL_OK;
}

/* The slot's note from its intent: the note, or the first bytes and the
 * digest of one over 4 KiB (engine/intent.h). */
static lil_status slot_note(struct lil_loop *lp, struct loop_slot *s,
                            const struct kept_rec *r, const uint8_t *payload)
{
    struct lil_intent in;

    lil__free(lp->env, s->note);
    s->note = NULL;
    lil__intent_decode(payload, r->len, r->flags, &in);
    s->note_cut = in.apart;
    s->note_len = in.full_len;
    if (in.apart)
        memcpy(s->note_hash, in.note_hash, LIL_SHA256_LEN);
    if (in.note_len == 0)
        return LIL_OK;
    s->note = lil__strndup(lp->env, in.note, in.note_len);
    return s->note ? LIL_OK : lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
}

static lil_status add_slot(struct lil_loop *lp, const struct kept_rec *r,
                           const uint8_t *payload)
{
    struct loop_slot *s = lil__loop_slot_get(lp, r->name);

    if (!s)
        return lp->err.code;
    s->failed = r->type == LIL_REC_STEP_FAILED; /* a retry runs it again */
    if (r->type == LIL_REC_INTENT)
        return slot_note(lp, s, r, payload);
    if (r->type == LIL_REC_STEP_FAILED)
        return LIL_OK;
    json_decref(s->outcome);
    s->outcome = parse(lp, payload, r->len);
    return s->outcome ? LIL_OK : lp->err.code;
}

static lil_status fold_cap(struct lil_loop *lp, const struct kept_rec *r, json_t *v)
{
    struct lil_meter_event ev = {0};
    const char *reason = json_string_value(json_object_get(v, "reason"));
    const char *action = json_string_value(json_object_get(v, "action"));
    bool cleared = strncmp(r->name, "cap_cleared.", 12) == 0;

    if (!reason || !lil__cap_from_reason(reason, strlen(reason), &ev.cap) ||
        (!cleared &&
         (!action || !lil__cap_action_from_name(action, strlen(action), &ev.action))))
        return lil__seterr(&lp->err, LIL_E_CORRUPT, 0,
                           "record %s of run %s names no cap", r->name, lp->run_id);
    ev.kind = cleared ? LIL_METER_EV_CAP_CLEARED : LIL_METER_EV_CAP;
    if (!num_ok(lp, v, "a cap record", "atIteration", 0, &ev.iteration) ||
        !num_ok(lp, v, "a cap record", "at", 0, &ev.ts_ms))
        return lp->err.code;
    if (lil__loop_cap_detail(
            lp, ev.cap,
            cleared ? NULL : json_string_value(json_object_get(v, "detail"))) != LIL_OK)
        return lp->err.code;
    return lil__meters_fold(&lp->meters, &lp->err, &ev);
}

/* A slot record: the slot's facts, then the meters (runner_budget.c). */
static lil_status replay_slot(struct lil_loop *lp, const struct kept_rec *r,
                              const uint8_t *p)
{
    lil_status rc = add_slot(lp, r, p);
    struct loop_slot *s = rc == LIL_OK ? lil__loop_slot(lp, r->name) : NULL;
    bool moved;

    if (!s)
        return rc;
    if (r->type == LIL_REC_INTENT)
        return lil__budget_intent(lp, true, r->name);
    return lil__budget_outcome(lp, true, r->name,
                               r->type == LIL_REC_STEP ? s->outcome : NULL, &moved);
}

static lil_status replay_kept(struct lil_loop *lp, struct walk *w)
{
    for (size_t i = 0; i < w->nrecs; i++) {
        const struct kept_rec *r = &w->recs[i];
        const uint8_t *p = w->arena.data + r->off;
        lil_status rc;

        if (is_slot_name(r->name, strlen(r->name))) {
            rc = replay_slot(lp, r, p);
        } else if (strncmp(r->name, "retried.", 8) == 0) {
            lil__loop_retried_replay(lp);
            rc = LIL_OK;
        } else {
            json_t *v = parse(lp, p, r->len);

            if (!v)
                rc = lp->err.code;
            else if (strncmp(r->name, "reserve.", 8) == 0)
                rc = lil__budget_fold_reserve(lp, r->name, v);
            else
                rc = fold_cap(lp, r, v);
            json_decref(v);
        }
        if (rc != LIL_OK)
            return rc;
    }
    return LIL_OK;
}

/* A pause is over once its slot holds an approval, or a later iteration
 * was committed. */
static void settle_pause(struct lil_loop *lp)
{
    char name[LIL_LOOP_NAME_MAX];
    struct loop_slot *s;

    if (!lp->pause.on)
        return;
    lil__loop_slot_name(name, lp->pause.iteration, lp->pause.seq);
    s = lil__loop_slot(lp, name);
    if ((s && s->outcome) || lp->meters.iteration > lp->pause.iteration ||
        lp->end != LOOP_LIVE)
        pause_clear(lp);
}

static void settle_end(struct lil_loop *lp)
{
    struct lil_run *run = lp->run;
    char why[LIL_ERRMSG_MAX];

    if (lil__run_status(run) != LIL_RUN_STOPPED || lp->end != LOOP_LIVE)
        return;
    snprintf(why, sizeof(why), "%.*s",
             (int)(run->outcome_len < sizeof(why) ? run->outcome_len : sizeof(why) - 1),
             run->outcome ? (const char *)run->outcome : "aborted");
    set_end(lp, LOOP_STOPPED, why[0] ? why : "aborted");
}

/* Fresh meters with the IR's limits, else the start record's, else none
 * (a start record written before it carried its caps). */
static lil_status init_meters(struct lil_loop *lp)
{
    struct lil_cap_limits none;

    if (lp->ir)
        return lil__meters_init(&lp->meters, &lp->err, lp->ir, lp->started_ms);
    if (lp->has_start_caps)
        return lil__meters_init_limits(&lp->meters, &lp->err, &lp->start_caps,
                                       lp->started_ms);
    memset(&none, 0, sizeof(none));
    none.max_iterations = INT64_MAX;
    none.action = LIL_CAPACT_BREAKPOINT;
    return lil__meters_init_limits(&lp->meters, &lp->err, &none, lp->started_ms);
}

lil_status lil__loop_load(struct lil_loop *lp)
{
    struct walk w;
    lil_status rc;

    memset(&w, 0, sizeof(w));
    w.lp = lp;
    lil__buf_init(&w.snap, lp->env, SIZE_MAX);
    lil__buf_init(&w.arena, lp->env, SIZE_MAX);
    rc = lil__run_foreach(lp->run, &lp->err, each_record, &w);
    if (rc == LIL_OK)
        rc = w.rc;
    if (rc == LIL_OK && lp->started)
        rc = init_meters(lp);
    if (rc == LIL_OK && w.has_snap)
        rc = restore_snapshot(lp, &w);
    if (rc == LIL_OK)
        rc = replay_kept(lp, &w);
    if (rc == LIL_OK) {
        settle_end(lp);
        settle_pause(lp);
        rc = lil__loop_retried_settle(lp);
    }
    if (rc == LIL_OK && lp->started)
        rc = lil__inputs_unseal(lp); /* a runner's: the values of secret inputs */
    lil__free(lp->env, w.recs);
    lil__buf_free(&w.snap);
    lil__buf_free(&w.arena);
    return rc;
}
