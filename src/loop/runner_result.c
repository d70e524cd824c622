/*
 * runner_result.c -- the result of a loop call (lil_loop_result, the
 * reference's RunResult; docs/loops.md, "The result") and its JSON:
 *   {"status", "iteration", "state", "reason"?, "wakeAt"?, "next"?: {"iteration"},
 *    "uncertain"?: {"iteration", "seq", "kind", "identity"}, "detail"?,
 *    "meters"?}
 * with "detail" when a budget cap says more than its word (what did not fit
 * and what to change), or when the uncertain effect is an agent call that
 * holds a reservation (what it counts whatever is decided); and "meters" (caps.h,
 * lil__meters_json: what each budget has spent, and what calls without an outcome hold
 * reserved) when the spec has a token or usd budget or a reservation is held. Strings
 * are the host's (lil__export_copy), released by lil__loop_result_free
 * (lil_loop_result_free).  The state is the committed one (the last snapshot), never
 * what an interrupted iteration had changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "engine/intent.h"
#include "loop/runner.h"

static char *host_str(const struct lil_env *env, const char *s)
{
    return s ? lil__export_copy(env, s, strlen(s)) : NULL;
}

lil_status lil__loop_result(struct lil_loop *lp, lil_loop_status status,
                            const char *reason, lil_loop_result *res)
{
    struct lil_buf text;
    lil_status rc;

    lil__loop_result_free(res);
    res->status = status;
    res->iteration = lp->started ? lp->meters.iteration : 0;
    lil__buf_init(&text, lp->env, SIZE_MAX);
    rc = lp->committed ? lil__json_canon(lp->env, &lp->err, lp->committed, &text)
                       : lil__buf_addstr(&text, "{}");
    if (rc == LIL_OK)
        res->state_json = lil__export_copy(lp->env, text.data, text.len);
    lil__buf_free(&text);
    if (reason)
        res->reason = host_str(lp->env, reason);
    if (rc == LIL_OK && (!res->state_json || (reason && !res->reason)))
        rc = LIL_E_NOMEM;
    return rc == LIL_OK ? rc : lil__seterr(&lp->err, rc, 0, "out of memory");
}

void lil__loop_result_wake(lil_loop_result *res, int64_t wake_at_ms)
{
    res->wake_at_ms = wake_at_ms;
}

void lil__loop_result_next(lil_loop_result *res, int64_t next)
{
    res->has_next = 1;
    res->next_iteration = next;
}

/* "I.S" or "exit.S" into iteration and seq. */
static void slot_of(const char *name, int64_t *iteration, int64_t *seq)
{
    const char *dot = strchr(name, '.');

    *iteration = strncmp(name, "exit.", 5) == 0 ? -1 : strtoll(name, NULL, 10);
    *seq = dot ? strtoll(dot + 1, NULL, 10) : 0;
}

/* The whole note of uncertain slot s (name): its own, or, for a note
 * over 4 KiB that its intent keeps only the first bytes of, the one the
 * journal holds in full (*whole, lil_free'd by the caller), else those
 * bytes. */
static const char *uncertain_note(struct lil_loop *lp, const char *name,
                                  const struct loop_slot *s, char **whole)
{
    struct lil_run_note n;

    *whole = NULL;
    if (!s || !s->note)
        return "effect ?";
    if (s->note_cut && lil__run_intent_note(lp->run, name, true, &n) && !n.cut)
        *whole = lil__strndup(lp->env, n.text, n.len);
    return *whole ? *whole : s->note;
}

lil_status lil__loop_result_uncertain(struct lil_loop *lp, lil_loop_result *res)
{
    const char *name = lil__run_uncertain_at(lp->run, 0);
    struct loop_slot *s = name ? lil__loop_slot(lp, name) : NULL;
    char *whole = NULL;
    const char *note = uncertain_note(lp, name, s, &whole);
    const char *sp = strchr(note, ' ');
    char reason[LIL_ERRMSG_MAX + 64], kind[32];
    lil_status rc;

    snprintf(kind, sizeof(kind), "%.*s", sp ? (int)(sp - note) : (int)strlen(note),
             note);
    res->uncertain_iteration = 0;
    if (name)
        slot_of(name, &res->uncertain_iteration, &res->uncertain_seq);
    snprintf(reason, sizeof(reason),
             "effect seq %lld (%s) crashed after starting but before its result was "
             "journaled; its outcome is unknown. Choose an explicit recovery: retry, "
             "assume-done, or abort.",
             (long long)res->uncertain_seq, kind);
    {
        int64_t it = res->uncertain_iteration, seq = res->uncertain_seq;

        rc = lil__loop_result(lp, LIL_LOOP_UNCERTAIN, reason, res);
        res->uncertain_iteration = it;
        res->uncertain_seq = seq;
    }
    if (rc == LIL_OK) {
        res->has_uncertain = 1;
        res->uncertain_kind = host_str(lp->env, kind);
        res->uncertain_identity = host_str(lp->env, sp ? sp + 1 : "");
    }
    lil__free(lp->env, whole);
    if (rc != LIL_OK)
        return rc;
    if (!res->uncertain_kind || !res->uncertain_identity)
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    return LIL_OK;
}

json_t *lil__loop_uncertain_json(const lil_loop_result *res)
{
    const char *id = res->uncertain_identity ? res->uncertain_identity : "";
    size_t len = strlen(id), n = len;
    json_t *o;

    if (n > LIL_STEP_NOTE_INLINE) {
        n = LIL_STEP_NOTE_INLINE;
        while (n > 0 && ((unsigned char)id[n] & 0xc0u) == 0x80u)
            n--; /* id[n] continues a character */
    }
    o = json_pack("{s:I, s:I, s:s, s:s%}", "iteration",
                  (json_int_t)res->uncertain_iteration, "seq",
                  (json_int_t)res->uncertain_seq, "kind",
                  res->uncertain_kind ? res->uncertain_kind : "", "identity", id, n);
    if (o && n < len) {
        json_object_set_new(o, "identity_len", json_integer((json_int_t)len));
        json_object_set_new(o, "identity_cut", json_true());
    }
    return o;
}

/* "meters" in o when a budget of tokens or usd is set, or something is
 * reserved. */
static lil_status add_meters(struct lil_loop *lp, json_t *o)
{
    const struct lil_loop_meters *m = &lp->meters;
    json_t *j = NULL;
    lil_status rc;

    if (!lp->started ||
        !(m->lim.has_tokens || m->lim.has_usd || m->reserved_tokens > 0))
        return LIL_OK;
    rc = lil__meters_json(lp->env, &lp->err, m, lil__loop_now(lp), &j);
    if (rc == LIL_OK)
        json_object_set_new(o, "meters", j);
    return rc;
}

/* "detail" in o: what the cap named by the reason says of itself beyond
 * its word, or what an uncertain agent call counts (runner_budget_admit.c). */
static void add_detail(const struct lil_loop *lp, const lil_loop_result *res, json_t *o)
{
    char text[1024];

    if (!o)
        return;
    if (res->has_uncertain) {
        char slot[LIL_LOOP_NAME_MAX];

        lil__loop_slot_name(slot, res->uncertain_iteration, res->uncertain_seq);
        if (lil__budget_uncertain_detail(lp, slot, text, sizeof(text)))
            json_object_set_new(o, "detail", json_string(text));
    } else if (res->reason && lp->cap_detail &&
               strcmp(res->reason, lil__cap_reason(lp->cap_detail_of)) == 0) {
        json_object_set_new(o, "detail", json_string(lp->cap_detail));
    }
}

static json_t *result_doc(struct lil_loop *lp, const lil_loop_result *res)
{
    json_t *o = json_object(), *state = NULL;

    if (!o || lil__json_parse(lp->env, &lp->err, LIL_E_CORRUPT, res->state_json,
                              strlen(res->state_json), 0, NULL, &state) != LIL_OK) {
        json_decref(o);
        return NULL;
    }
    json_object_set_new(o, "status", json_string(lil__loop_status_name(res->status)));
    json_object_set_new(o, "iteration", json_integer(res->iteration));
    json_object_set_new(o, "state", state);
    if (res->reason)
        json_object_set_new(o, "reason", json_string(res->reason));
    if (res->wake_at_ms)
        json_object_set_new(o, "wakeAt", json_integer(res->wake_at_ms));
    if (res->has_next)
        json_object_set_new(
            o, "next",
            json_pack("{s:I}", "iteration", (json_int_t)res->next_iteration));
    if (lp->requeued)
        json_object_set_new(o, "queued", json_true());
    if (res->has_uncertain)
        json_object_set_new(o, "uncertain", lil__loop_uncertain_json(res));
    if (lp->nnotes)
        json_object_set_new(o, "step_notes", lil__loop_notes_json(lp));
    add_detail(lp, res, o);
    if (res->status == LIL_LOOP_PAUSED)
        json_object_set_new(o, "pause", lil__loop_pause_json(lp));
    if (lp->artifacts) /* runner_artifacts.c: {files, truncated?} */
        json_object_set_new(o, "artifacts", json_deep_copy(lp->artifacts));
    if (o && add_meters(lp, o) != LIL_OK) {
        json_decref(o);
        return NULL;
    }
    return o;
}

lil_status lil__loop_result_json(struct lil_loop *lp, lil_loop_result *res)
{
    json_t *doc = result_doc(lp, res);
    struct lil_buf text;
    lil_status rc;

    if (!doc)
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    lil__buf_init(&text, lp->env, SIZE_MAX);
    rc = lil__json_dump(lp->env, &lp->err, doc, JSON_COMPACT, &text);
    json_decref(doc);
    if (rc == LIL_OK) {
        res->json = lil__export_copy(lp->env, text.data, text.len);
        if (!res->json)
            rc = lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    }
    lil__buf_free(&text);
    return rc;
}

void lil__loop_result_free(lil_loop_result *res)
{
    if (!res)
        return;
    lil__export_free(res->state_json);
    lil__export_free(res->reason);
    lil__export_free(res->uncertain_kind);
    lil__export_free(res->uncertain_identity);
    lil__export_free(res->json);
    memset(res, 0, sizeof(*res));
}

const char *lil__loop_status_name(lil_loop_status s)
{
    static const char *const names[] = {"unknown", "completed", "failed", "uncertain",
                                        "paused",  "waiting",   "stopped"};

    return s >= LIL_LOOP_COMPLETED && s <= LIL_LOOP_STOPPED ? names[s] : names[0];
}

int lil__loop_exit_code(lil_loop_status s)
{
    switch (s) {
    case LIL_LOOP_COMPLETED:
        return 0;
    case LIL_LOOP_UNCERTAIN:
        return 2;
    case LIL_LOOP_PAUSED:
        return 3;
    case LIL_LOOP_WAITING:
        return 4;
    case LIL_LOOP_STOPPED:
        return 5;
    default:
        return 1;
    }
}
