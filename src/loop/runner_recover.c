/*
 * runner_recover.c -- deciding an uncertain effect of a loop run
 * (docs/loopspec.md, "Uncertain effects") with the journal's own resolve record, the
 * one `lil resolve` writes:
 *   retry        the effect runs again at its slot (a new intent, attempt 2)
 *   assume-done  the given JSON is its result, journaled as its outcome
 *                {"iteration", "seq", "kind", "identity", "result",
 *                 "recovered": true}; it never runs
 *   abort        the run is stopped for good
 * then, unless aborted, the run goes on (lil__loop_run).  An agent call's
 * reservation (runner_budget.c) stays counted: a retry reserves again, and
 * an assumed outcome (which tells no usage) or an abort settles it at
 * itself.  A retry decided with LIL_LOOP_APPROVE_CAPS (`lil recover --retry
 * --approve`) carries an approval of the budget cap that its own check may
 * trip (a breakpoint): runner_budget_admit.c journals the cap and its
 * approval, with this recovery's actor and reason, and the retry starts.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "loop/runner.h"

static lil_status refuse(struct lil_loop *lp)
{
    return lil__seterr(&lp->err, LIL_E_INVAL, 0,
                       "cannot recover run %s: it has no uncertain effect (it is %s)",
                       lp->run_id, lil__loop_status_word(lp));
}

/* The outcome an assume-done journals for the uncertain effect. */
static lil_status assumed(struct lil_loop *lp, const char *name,
                          const char *result_json, struct lil_buf *out)
{
    lil_loop_result u = {0};
    json_t *result = NULL, *o;
    lil_status rc;

    if (!result_json)
        return lil__seterr(&lp->err, LIL_E_INVAL, 0, "assume-done requires a result");
    rc = lil__json_parse(lp->env, &lp->err, LIL_E_INVAL, result_json,
                         strlen(result_json), JSON_DECODE_ANY, NULL, &result);
    if (rc != LIL_OK) {
        char why[LIL_ERRMSG_MAX];

        snprintf(why, sizeof(why), "%s", lp->err.msg);
        return lil__seterr(&lp->err, rc, 0, "invalid result JSON: %s", why);
    }
    rc = lil__loop_result_uncertain(lp, &u);
    o = rc == LIL_OK ? json_pack("{s:I, s:I, s:s, s:s, s:O, s:b}", "iteration",
                                 (json_int_t)u.uncertain_iteration, "seq",
                                 (json_int_t)u.uncertain_seq, "kind", u.uncertain_kind,
                                 "identity", u.uncertain_identity, "result", result,
                                 "recovered", 1)
                     : NULL;
    (void)name;
    lil__loop_result_free(&u);
    json_decref(result);
    if (rc == LIL_OK && !o)
        rc = lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    if (rc == LIL_OK)
        rc = lil__json_canon(lp->env, &lp->err, o, out);
    json_decref(o);
    return rc;
}

static lil_status keep_assumed(struct lil_loop *lp, const char *name,
                               const struct lil_buf *payload)
{
    json_t *v = NULL;
    bool moved;
    lil_status rc =
        lil__json_parse(lp->env, &lp->err, LIL_E_CORRUPT, (const char *)payload->data,
                        payload->len, 0, NULL, &v);

    if (rc == LIL_OK)
        rc = lil__budget_outcome(lp, false, name, v, &moved);
    if (rc != LIL_OK) {
        json_decref(v);
        return rc;
    }
    return lil__loop_slot_put(lp, name, v);
}

lil_status lil__loop_recover(struct lil_loop *lp, lil_resolution how,
                             const char *result, const char *actor, const char *reason,
                             lil_loop_result *res)
{
    const char *id = NULL;
    char name[LIL_LOOP_NAME_MAX];
    struct lil_buf payload;
    bool refolded = true;
    lil_status rc = LIL_OK;

    while (rc == LIL_OK && refolded) {
        id = lil__run_uncertain_at(lp->run, 0);
        if (lp->end != LOOP_LIVE || !id)
            return refuse(lp);
        rc = lil__loop_writable(lp, &refolded);
    }
    if (rc != LIL_OK)
        return rc;
    id = lil__run_uncertain_at(lp->run, 0);
    if (how != LIL_RESOLVE_ASSUME_DONE && result)
        return lil__seterr(&lp->err, LIL_E_INVAL, 0, "only assume-done takes a result");
    snprintf(name, sizeof(name), "%s", id);
    lil__buf_init(&payload, lp->env, SIZE_MAX);
    rc = how == LIL_RESOLVE_ASSUME_DONE ? assumed(lp, name, result, &payload) : LIL_OK;
    if (rc == LIL_OK)
        rc = lil__run_resolve(lp->run, &lp->err, name, how, payload.data, payload.len,
                              actor, reason);
    if (rc == LIL_OK && how == LIL_RESOLVE_ASSUME_DONE)
        rc = keep_assumed(lp, name, &payload);
    lil__buf_free(&payload);
    if (rc != LIL_OK)
        return rc;
    if (how == LIL_RESOLVE_ABORT) {
        char why[LIL_ERRMSG_MAX];
        bool moved;

        rc = lil__budget_outcome(lp, false, name, NULL, &moved); /* as folded */
        if (rc != LIL_OK)
            return rc;
        snprintf(why, sizeof(why), "aborted by %s: %s", actor, reason);
        lp->end = LOOP_STOPPED;
        lil__free(lp->env, lp->end_reason);
        lp->end_reason = lil__strdup(lp->env, why);
        rc = lil__loop_result(lp, LIL_LOOP_STOPPED, why, res);
        return rc == LIL_OK ? lil__loop_decision_ended(lp, res) : rc;
    }
    if (how == LIL_RESOLVE_RETRY && (lp->opt.flags & LIL_LOOP_APPROVE_CAPS)) {
        snprintf(lp->recovery.slot, sizeof(lp->recovery.slot), "%s", name);
        lp->recovery.actor = actor;
        lp->recovery.reason = reason;
    }
    rc = lil__loop_decided(lp, res);
    memset(&lp->recovery, 0, sizeof(lp->recovery));
    return rc;
}
