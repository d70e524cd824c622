/*
 * fork.c -- the public calls that fork and compare runs (lil.h, "Forking
 * and comparing runs"): lil_run_fork and lil_run_diff.  Argument checks,
 * one json scope per call, errors published on the store; where a journal
 * may be cut and how two runs differ are src/history/fork.c's and diff.c's,
 * the new run's journal is made by the store's import (store/move.c).
 */
#include "history/fork.h"

#include <string.h>

#include "api/entry.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "engine/run.h"
#include "history/history.h"
#include "loop/runner.h"

#define TEXT_MAX 4096 /* an actor's or reason's bytes */

static lil_status check_text(struct lil_err *e, const char *what, const char *s)
{
    if (s && *s && !lil__api_text_ok(s, TEXT_MAX))
        return lil__seterr(e, LIL_E_INVAL, 0,
                           "lil_run_fork: %s is blank or longer than %d bytes", what,
                           TEXT_MAX);
    return LIL_OK;
}

static lil_status check_fork(const char *run_id, const lil_run_fork_opts *o,
                             const char *new_id, struct lil_err *e)
{
    lil_status rc = lil__run_id_check(e, run_id);

    if (rc == LIL_OK)
        rc = lil__run_id_check(e, new_id);
    if (rc != LIL_OK)
        return rc;
    if (!o || o->struct_size < sizeof(*o))
        return lil__seterr(
            e, LIL_E_INVAL, 0,
            "lil_run_fork: opts is NULL or its struct_size is too small");
    if (o->at_kind < LIL_FORK_AT_ITERATION || o->at_kind > LIL_FORK_AT_STEP)
        return lil__seterr(e, LIL_E_INVAL, 0, "lil_run_fork: unknown at_kind %d",
                           o->at_kind);
    rc = check_text(e, "actor", o->actor);
    return rc == LIL_OK ? check_text(e, "reason", o->reason) : rc;
}

/* LIL_OK when new_id is not a run of st; else why not. */
static lil_status must_be_new(struct lil_store *st, struct lil_err *e,
                              const char *new_id)
{
    struct lil_err probe;
    struct lil_run *run = NULL;
    lil_status rc = lil__history_open(st, &probe, new_id, &run);

    lil__history_close(run);
    if (rc == LIL_E_NOTFOUND)
        return LIL_OK;
    return lil__seterr(e, LIL_E_INVAL, 0,
                       "run %s already exists in %s: a fork needs a new run id", new_id,
                       st->where);
}

/* The provenance record of a fork of run_id cut as plan says, into *payload. */
static lil_status provenance(struct lil_store *from, struct lil_err *e,
                             const char *run_id, const lil_run_fork_opts *o,
                             const struct lil_fork_plan *plan, struct lil_buf *payload)
{
    char *user = lil__loop_os_user(from->env);
    struct lil_fork_who who = {run_id,
                               from->where,
                               o->actor && *o->actor ? o->actor : "unknown",
                               o->reason ? o->reason : "",
                               user ? user : "unknown",
                               lil__wall_ns() / 1000000};
    json_t *v = lil__fork_provenance(plan, &who);
    lil_status rc = v ? lil__json_canon(from->env, e, v, payload)
                      : lil__seterr(e, LIL_E_NOMEM, 0, "out of memory");

    json_decref(v);
    lil__free(from->env, user);
    return rc;
}

static json_t *fork_doc(struct lil_store *from, struct lil_store *to,
                        const char *run_id, const char *new_id,
                        const struct lil_fork_plan *p)
{
    char head[2 * LIL_SHA256_LEN + 1];
    json_t *cut = json_pack("{sI}", "seq", (json_int_t)p->cut_seq);

    lil__hex(p->source_head, LIL_SHA256_LEN, head);
    if (cut)
        json_object_set_new(
            cut, p->loop ? "iteration" : "step",
            json_integer((json_int_t)(p->loop ? p->iteration : p->step)));
    return json_pack(
        "{ss ss ss ss ss so sI sI ss}", "run", new_id, "store", to->where, "source",
        run_id, "sourceStore", from->where, "kind", p->loop ? "loop" : "program", "cut",
        cut, "records", (json_int_t)p->cut_seq, "dropped",
        (json_int_t)(p->source_last - (p->cut_seq - 1)), "sourceHead", head);
}

static lil_status fork_run(struct lil_store *from, const char *run_id,
                           const lil_run_fork_opts *o, struct lil_store *to,
                           const char *new_id, struct lil_err *e, json_t **doc)
{
    struct lil_fork_plan plan;
    struct lil_buf image, payload;
    struct lil_rec rec;
    uint64_t valid = 0;
    lil_status rc = must_be_new(to, e, new_id);

    memset(&plan, 0, sizeof(plan));
    plan.kind = o->at_kind;
    plan.at = o->at;
    lil__buf_init(&image, from->env, (size_t)-1);
    lil__buf_init(&payload, from->env, (size_t)-1);
    if (rc == LIL_OK)
        rc = lil__store_image(from, e, run_id, &image, &valid);
    if (rc == LIL_OK)
        rc = lil__fork_plan(from->env, e, run_id, image.data, (size_t)valid, &plan);
    if (rc == LIL_OK)
        rc = provenance(from, e, run_id, o, &plan, &payload);
    if (rc == LIL_OK) {
        memset(&rec, 0, sizeof(rec));
        rec.type = LIL_REC_FORK;
        rec.ts_ns = lil__wall_ns();
        rec.key = (const uint8_t *)run_id;
        rec.key_len = strlen(run_id);
        rec.payload = payload.data;
        rec.payload_len = payload.len;
        rc = lil__store_fork_in(to, e, image.data, plan.cut_len, new_id, &rec);
    }
    if (rc == LIL_OK && !(*doc = fork_doc(from, to, run_id, new_id, &plan)))
        rc = lil__seterr(e, LIL_E_NOMEM, 0, "out of memory");
    lil__buf_free(&payload);
    lil__buf_free(&image);
    return rc;
}

lil_status lil_run_fork(lil_store *from, const char *run_id,
                        const lil_run_fork_opts *opts, lil_store *to,
                        const char *new_id, lil_bytes *json)
{
    struct lil_json_scope sc;
    struct lil_err e;
    json_t *doc = NULL;
    lil_status rc;

    lil__api_clear_bytes(json);
    lil__clearerr(&e);
    if (!lil__api_store_ok(from) || !lil__api_store_ok(to))
        return lil__api_bad_handle("store");
    rc = check_fork(run_id, opts, new_id, &e);
    if (rc != LIL_OK)
        return lil__api_to_store(to, &e, rc);
    lil__api_scope_begin(&sc, to->env);
    rc = fork_run(from, run_id, opts, to, new_id, &e, &doc);
    if (rc == LIL_OK && json)
        rc = lil__api_dump_doc(to->env, &e, doc, JSON_COMPACT | JSON_SORT_KEYS, json);
    else
        json_decref(doc);
    rc = lil__api_scope_end(&sc, &e, rc);
    if (rc != LIL_OK && json) {
        lil__export_free(json->data);
        lil__api_clear_bytes(json);
    }
    return lil__api_to_store(to, &e, rc);
}

lil_status lil_run_diff(lil_store *sa, const char *a, lil_store *sb, const char *b,
                        lil_bytes *json)
{
    struct lil_json_scope sc;
    struct lil_err e;
    json_t *doc = NULL;
    lil_status rc;

    lil__api_clear_bytes(json);
    lil__clearerr(&e);
    if (!lil__api_store_ok(sa) || !lil__api_store_ok(sb))
        return lil__api_bad_handle("store");
    rc = lil__run_id_check(&e, a);
    if (rc == LIL_OK)
        rc = lil__run_id_check(&e, b);
    if (rc == LIL_OK && !json)
        rc = lil__seterr(&e, LIL_E_INVAL, 0, "lil_run_diff: json is NULL");
    if (rc != LIL_OK)
        return lil__api_to_store(sa, &e, rc);
    lil__api_scope_begin(&sc, sa->env);
    rc = lil__history_diff(sa, a, sb, b, &e, &doc);
    if (rc == LIL_OK && json)
        rc = lil__api_dump_doc(sa->env, &e, doc, JSON_COMPACT | JSON_SORT_KEYS, json);
    rc = lil__api_scope_end(&sc, &e, rc);
    if (rc != LIL_OK && json) {
        lil__export_free(json->data);
        lil__api_clear_bytes(json);
    }
    return lil__api_to_store(sa, &e, rc);
}
