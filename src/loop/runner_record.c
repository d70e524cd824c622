/*
 * runner_record.c -- the records of a loop run (docs/loops.md, "Records"):
 * their names, and appending them through the engine's steps.
 *
 * Every record is a step with an exact name (struct lil_step_req.exact):
 * "I.S" slots, "I.snap" snapshots, "<kind>.N" control records, "loop"
 * the start.  Payloads are compact JSON objects, keys in the order written
 * (the identities inside them are canonical JSON).
 *
 * The snapshot of iteration I:
 *   {"iteration": I, "state": {...}, "fp": "<fingerprint>" (with
 *    caps.no_progress; `undefined` for a guard that is),
 *    "meters": {"iterationBase", "tokens", "tokensBase", "usd", "usdBase",
 *               "reservedTokens", "reservedUsd", "wallclockBase",
 *               "fpResetAt", "repeats", "fpHash"}}
 * (a meter at 0 left out, fpHash only when a fingerprint was seen)
 * carries the meters as they are after it (caps.h), so that a resumed run
 * reads them from its last snapshot instead of folding every record.  So
 * a journal written when an undefined guard gave no fingerprint (no "fp"
 * in those snapshots, the streak left as it was) resumes with the streak
 * it committed; the rule of today applies from its next snapshot on.  It
 * is appended lazily (not synced on its own): the next effect's intent, a
 * later outcome, lil_run_sync or the close makes it durable, and a
 * snapshot lost in a power cut costs only the replay of its iteration.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/hash.h"
#include "engine/call.h"
#include "loop/runner.h"

/* The step function of a plain record: its payload is ud's bytes. */
struct payload {
    const struct lil_buf *text;
};

static int set_payload(lil_call *call, void *ud)
{
    const struct payload *p = ud;
    lil_status rc = lil__call_set_result(call, NULL, p->text->data, p->text->len);

    if (rc != LIL_OK) /* journal nothing: a record the runner writes never fails */
        lil__call_abandon(call, rc);
    return rc != LIL_OK;
}

static lil_status append_named(struct lil_loop *lp, const char *name, json_t *payload,
                               bool lazy, bool after_end, lil_bytes *out)
{
    struct lil_buf text;
    struct payload p = {&text};
    struct lil_step_req req = {0};
    lil_status rc;

    lil__buf_init(&text, lp->env, SIZE_MAX);
    rc = lil__json_dump(lp->env, &lp->err, payload, JSON_COMPACT, &text);
    json_decref(payload);
    if (rc != LIL_OK) {
        lil__buf_free(&text);
        return rc;
    }
    req.lazy = lazy;
    req.exact = true;
    req.after_end = after_end;
    rc = lil__run_step_req(lp->run, &lp->err, name, &req, set_payload, &p, out);
    lil__buf_free(&text);
    return rc;
}

lil_status lil__loop_plain(struct lil_loop *lp, const char *name, json_t *payload,
                           bool lazy, json_t **journaled)
{
    lil_bytes out = {0};
    lil_status rc;

    if (!payload)
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    rc = append_named(lp, name, payload, lazy, false, journaled ? &out : NULL);
    if (rc == LIL_OK && journaled) {
        rc = lil__json_parse(lp->env, &lp->err, LIL_E_CORRUPT, out.data, out.len, 0,
                             NULL, journaled);
        lil__export_free(out.data);
    }
    return rc;
}

lil_status lil__loop_control(struct lil_loop *lp, const char *kind, json_t *payload,
                             bool lazy)
{
    char name[LIL_LOOP_NAME_MAX];
    lil_status rc;

    snprintf(name, sizeof(name), "%s.%" PRIu64, kind, lp->nctl + 1);
    rc = lil__loop_plain(lp, name, payload, lazy, NULL);
    if (rc == LIL_OK)
        lp->nctl++;
    return rc;
}

lil_status lil__loop_notice(struct lil_loop *lp, const char *kind, json_t *payload)
{
    char name[LIL_LOOP_NAME_MAX];
    lil_status rc;

    if (!payload)
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    snprintf(name, sizeof(name), "%s.%" PRIu64, kind, lp->nctl + 1);
    rc = append_named(lp, name, payload, false, true, NULL);
    if (rc == LIL_OK)
        lp->nctl++;
    return rc;
}

/* ---- the snapshot --------------------------------------------------------------- */

/* A meter worth writing: an integer that is not 0. */
static void set_int(json_t *o, const char *k, int64_t v)
{
    if (v)
        json_object_set_new(o, k, json_integer((json_int_t)v));
}

/* The meters after a snapshot; a meter at 0 is left out (a reader takes an
 * absent one as 0), so that most snapshots carry only the wallclock base. */
static json_t *meters_json(const struct lil_loop_meters *m)
{
    json_t *o = json_object();
    char hex[2 * LIL_SHA256_LEN + 1];

    if (!o)
        return NULL;
    set_int(o, "iterationBase", m->iteration_base);
    set_int(o, "tokens", m->tokens);
    set_int(o, "tokensBase", m->tokens_base);
    if (m->usd != 0.0)
        json_object_set_new(o, "usd", json_real(m->usd));
    if (m->usd_base != 0.0)
        json_object_set_new(o, "usdBase", json_real(m->usd_base));
    set_int(o, "reservedTokens", m->reserved_tokens);
    if (m->reserved_usd != 0.0)
        json_object_set_new(o, "reservedUsd", json_real(m->reserved_usd));
    json_object_set_new(o, "wallclockBase", json_integer(m->wallclock_base_ms));
    set_int(o, "fpResetAt", m->fp_reset_at);
    set_int(o, "repeats", m->repeats);
    if (m->has_fp) {
        lil__hex(m->fp, LIL_SHA256_LEN, hex);
        json_object_set_new(o, "fpHash", json_string(hex));
    }
    return o;
}

lil_status lil__loop_snapshot(struct lil_loop *lp, struct iter *it)
{
    struct lil_loop_meters next = lp->meters;
    struct lil_state_ctx cx;
    struct lil_buf fp;
    bool has_fp = false;
    json_t *payload, *state;
    lil_status rc;
    char name[LIL_LOOP_NAME_MAX];

    lil__buf_init(&fp, lp->env, 1u << 20);
    lil__loop_ctx(it, &cx);
    rc = lil__state_fingerprint(&it->state, &lp->err, &cx, &fp, &has_fp);
    if (rc == LIL_OK)
        rc = lil__meters_note_snapshot(&next, &lp->err, it->iteration,
                                       has_fp ? fp.data : NULL, has_fp ? fp.len : 0);
    if (rc != LIL_OK) {
        lil__buf_free(&fp);
        return rc;
    }
    state = it->state.vars; /* written now, then the committed state */
    payload = json_pack("{s:I, s:O, s:o}", "iteration", (json_int_t)it->iteration,
                        "state", state, "meters", meters_json(&next));
    if (payload && has_fp)
        json_object_set_new(payload, "fp", json_stringn((const char *)fp.data, fp.len));
    lil__buf_free(&fp);
    memcpy(name + lil__i64_text(it->iteration, name), ".snap", 6);
    rc = lil__loop_plain(lp, name, payload, true, NULL);
    if (rc != LIL_OK)
        return rc;
    lp->meters = next;
    json_decref(lp->committed);
    lp->committed = json_incref(state); /* the iteration ends here: it->state is
                                           not changed again */
    lil__loop_slots_clear(lp);
    return LIL_OK;
}
