/*
 * events.c -- a run's history as typed events (history.h): the walk over
 * its records, paging, and the events of the records every run has
 * (begin, open, close, steps, effects, resolves, the end).  A loop run's
 * records, from its start record on, are events_loop.c's.
 *
 *   run_start      BEGIN                {"run"}
 *   process_open   OPEN                 {"pid"}
 *   process_close  CLOSE                {}
 *   effect_start   INTENT               {"step", "request_sha256", "request"?}
 *   step, effect   STEP, STEP_FAILED    {"step", "outcome": "ok"|"failed",
 *                                        "dur_us", "result" | "reason"}
 *   recovery       RESOLVE              {"step", "how", "actor", "reason"}
 *   run_end        RUN_DONE, RUN_FAILED {"status", "result" | "reason"}
 *   forked         FORK                 {"source", "source_store", "cut",
 *                                        "actor", "reason", "os_user"}
 *
 * ("effect" for a record of an effect, "step" for a plain step; payloads
 * that are not UTF-8 text are left out.)
 */
#include <string.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "engine/intent.h"
#include "engine/run.h"
#include "history/events_int.h"
#include "history/history.h"

#define INTENT_HASH_LEN 32

/* ---- helpers shared with events_loop.c ------------------------------------ */

void lil__hev_set(json_t *o, const char *key, json_t *v)
{
    if (o && v)
        json_object_set_new(o, key, v);
    else
        json_decref(v);
}

void lil__hev_copy(json_t *o, const char *key, const json_t *src, const char *k)
{
    json_t *v = json_object_get(src, k);

    if (o && v)
        json_object_set(o, key, v);
}

json_t *lil__hev_text(const void *p, size_t n)
{
    if (memchr(p, '\0', n))
        return NULL;
    return json_stringn(n ? (const char *)p : "", n);
}

json_t *lil__hev_payload(const lil_record *rec)
{
    json_t *v;

    if (rec->payload_len == 0)
        return NULL;
    v = json_loadb(rec->payload, rec->payload_len, JSON_REJECT_DUPLICATES, NULL);
    if (v && !json_is_object(v)) {
        json_decref(v);
        v = NULL;
    }
    return v;
}

static json_t *name_json(const struct lil_loop_name *nm)
{
    static const char *const kinds[] = {NULL, "start", "effect", "snapshot", "control"};
    json_t *o = json_object();

    lil__hev_set(o, "kind", json_string(kinds[nm->kind]));
    if (nm->kind == LIL_LOOP_NAME_SLOT || nm->kind == LIL_LOOP_NAME_SNAP)
        lil__hev_set(o, "iteration", json_integer(nm->iteration));
    if (nm->kind == LIL_LOOP_NAME_SLOT)
        lil__hev_set(o, "seq", json_integer(nm->seq));
    if (nm->kind == LIL_LOOP_NAME_CONTROL) {
        lil__hev_set(o, "control", json_string(nm->control));
        lil__hev_set(o, "n", json_integer((json_int_t)nm->n));
    }
    return o;
}

/* Is type one of the comma-separated list (NULL: every type)? */
static bool type_wanted(const char *list, const char *type)
{
    size_t n = strlen(type);

    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, type, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return true;
    return list == NULL;
}

/* The pre-pass and the count before the page: where iterations start. */
static bool note_iteration_start(struct hwalk *w, const lil_record *rec)
{
    uint64_t *grown;

    if (w->quiet)
        w->iters_before++;
    if (!w->q->last_iterations || w->from != UINT64_MAX)
        return true;
    grown = lil__grow(w->env, w->starts, &w->capstarts, w->nstarts, sizeof(*grown), 64);
    if (!grown) {
        w->rc = lil__seterr(w->err, LIL_E_NOMEM, 0, "out of memory");
        return false;
    }
    w->starts = grown;
    w->starts[w->nstarts++] = rec->seq;
    return true;
}

/* A brief query's event: {"seq", "type", "loop"?}, one per record. */
static json_t *brief_event(struct hwalk *w, const lil_record *rec, const char *type)
{
    json_t *ev = json_object();

    lil__hev_set(ev, "seq", json_integer((json_int_t)rec->seq));
    lil__hev_set(ev, "type", json_string(type));
    if (w->nm)
        lil__hev_set(ev, "loop", name_json(w->nm));
    return ev;
}

static json_t *full_event(struct hwalk *w, const lil_record *rec, const char *type)
{
    json_t *ev = json_object(), *r = json_object();

    lil__hev_set(r, "type", json_string(lil__record_type_name(rec->type)));
    lil__hev_set(r, "key", lil__hev_text(rec->key, rec->key_len));
    lil__hev_set(ev, "seq", json_integer((json_int_t)rec->seq));
    lil__hev_set(ev, "ts_ns", json_integer(rec->ts_ns));
    lil__hev_set(ev, "type", json_string(type));
    lil__hev_set(ev, "record", r);
    if (w->nm)
        lil__hev_set(ev, "loop", name_json(w->nm));
    return ev && r ? ev : NULL;
}

json_t *lil__hev_new(struct hwalk *w, const lil_record *rec, const char *type)
{
    bool brief = w->q->flags & LIL_EVENTS_BRIEF;
    bool synthesized = strcmp(type, "iteration_start") == 0;
    json_t *ev;

    if (synthesized && !note_iteration_start(w, rec))
        return NULL;
    synthesized = synthesized || strcmp(type, "wake") == 0;
    if (w->quiet || !type_wanted(w->q->types, type) || (brief && synthesized))
        return NULL;
    ev = brief ? brief_event(w, rec, type) : full_event(w, rec, type);
    if (!ev || json_array_append_new(w->pending, ev) != 0) {
        w->rc = lil__seterr(w->err, LIL_E_NOMEM, 0, "out of memory");
        return NULL;
    }
    return brief ? NULL : ev;
}

/* ---- the records of any run -------------------------------------------------- */

/* The request of an intent: its note, or the first bytes of a note over
 * 4 KiB (whose whole is the request record before it) with its size. */
static void request_of(json_t *ev, const lil_record *rec, const char *text_key)
{
    struct lil_intent in;

    lil__intent_decode(rec->payload, rec->payload_len, rec->flags, &in);
    if (in.note_len)
        lil__hev_set(ev, text_key, lil__hev_text(in.note, in.note_len));
    if (in.apart) {
        lil__hev_set(ev, "request_len", json_integer((json_int_t)in.full_len));
        lil__hev_set(ev, "request_cut", json_true());
    }
}

static void intent(struct hwalk *w, const lil_record *rec)
{
    json_t *ev = lil__hev_new(w, rec, "effect_start");
    size_t hash =
        rec->payload_len < INTENT_HASH_LEN ? rec->payload_len : INTENT_HASH_LEN;
    char hex[2 * INTENT_HASH_LEN + 1];

    lil__hex(rec->payload, hash, hex);
    hex[2 * hash] = '\0';
    lil__hev_set(ev, "step", lil__hev_text(rec->key, rec->key_len));
    lil__hev_set(ev, "request_sha256", json_string(hex));
    request_of(ev, rec, "request");
}

static void step(struct hwalk *w, const lil_record *rec)
{
    bool failed = rec->type == LIL_REC_STEP_FAILED;
    json_t *ev = lil__hev_new(w, rec, rec->flags & LIL_RECF_EFFECT ? "effect" : "step");

    lil__hev_set(ev, "step", lil__hev_text(rec->key, rec->key_len));
    lil__hev_set(ev, "outcome", json_string(failed ? "failed" : "ok"));
    lil__hev_set(ev, "dur_us", json_integer(rec->dur_us));
    lil__hev_set(ev, failed ? "reason" : "result",
                 lil__hev_text(rec->payload, rec->payload_len));
}

static void resolve(struct hwalk *w, const lil_record *rec)
{
    json_t *ev = lil__hev_new(w, rec, "recovery"), *p = lil__hev_payload(rec);

    lil__hev_set(ev, "step", lil__hev_text(rec->key, rec->key_len));
    lil__hev_copy(ev, "how", p, "action");
    lil__hev_copy(ev, "actor", p, "actor");
    lil__hev_copy(ev, "reason", p, "reason");
    json_decref(p);
}

static void run_end(struct hwalk *w, const lil_record *rec)
{
    json_t *ev = lil__hev_new(w, rec, "run_end"), *p;

    if (rec->type == LIL_REC_RUN_FAILED) {
        lil__hev_set(ev, "status", json_string("failed"));
        lil__hev_set(ev, "reason", lil__hev_text(rec->payload, rec->payload_len));
        return;
    }
    p = w->loop ? lil__hev_payload(rec) : NULL;
    if (p) { /* a loop's end: {"status", "iteration", "reason"?} */
        lil__hev_copy(ev, "status", p, "status");
        lil__hev_copy(ev, "iteration", p, "iteration");
        lil__hev_copy(ev, "reason", p, "reason");
        json_decref(p);
        return;
    }
    lil__hev_set(ev, "status", json_string("completed"));
    lil__hev_set(ev, "result", lil__hev_text(rec->payload, rec->payload_len));
}

static void plain(struct hwalk *w, const lil_record *rec)
{
    json_t *ev, *p;

    switch (rec->type) {
    case LIL_REC_BEGIN:
        ev = lil__hev_new(w, rec, "run_start");
        lil__hev_set(ev, "run", lil__hev_text(rec->key, rec->key_len));
        break;
    case LIL_REC_OPEN:
        ev = lil__hev_new(w, rec, "process_open");
        p = lil__hev_payload(rec);
        lil__hev_copy(ev, "pid", p, "pid");
        json_decref(p);
        break;
    case LIL_REC_CLOSE:
        (void)lil__hev_new(w, rec, "process_close");
        break;
    case LIL_REC_INTENT:
        intent(w, rec);
        break;
    case LIL_REC_STEP:
    case LIL_REC_STEP_FAILED:
        step(w, rec);
        break;
    case LIL_REC_RESOLVE:
        resolve(w, rec);
        break;
    case LIL_REC_RUN_DONE:
    case LIL_REC_RUN_FAILED:
        run_end(w, rec);
        break;
    case LIL_REC_FORK:
        ev = lil__hev_new(w, rec, "forked");
        p = lil__hev_payload(rec);
        lil__hev_copy(ev, "source", p, "source");
        lil__hev_copy(ev, "source_store", p, "sourceStore");
        lil__hev_copy(ev, "cut", p, "cut");
        lil__hev_copy(ev, "actor", p, "actor");
        lil__hev_copy(ev, "reason", p, "reason");
        lil__hev_copy(ev, "os_user", p, "osUser");
        json_decref(p);
        break;
    default: /* a request record (its intent's event tells its size), a type
                of a later version */
        break;
    }
}

/* ---- the walk ---------------------------------------------------------------- */

bool lil__hev_is_loop_start(const lil_record *rec)
{
    json_t *p;
    bool yes;

    if (rec->type != LIL_REC_STEP || rec->key_len != 4 ||
        memcmp(rec->key, "loop", 4) != 0)
        return false;
    p = lil__hev_payload(rec);
    yes = json_is_string(json_object_get(p, "loopId"));
    json_decref(p);
    return yes;
}

/* The loop name of rec: a slot is any step-like record, the rest steps. */
static bool loop_name(const lil_record *rec, struct lil_loop_name *nm)
{
    bool slot_type = rec->type == LIL_REC_STEP || rec->type == LIL_REC_STEP_FAILED ||
                     rec->type == LIL_REC_INTENT || rec->type == LIL_REC_RESOLVE;

    if (!lil__loop_name_parse(rec->key, rec->key_len, nm))
        return false;
    if (nm->kind == LIL_LOOP_NAME_SLOT)
        return slot_type;
    return rec->type == LIL_REC_STEP;
}

static void record_events(struct hwalk *w, const lil_record *rec)
{
    struct lil_loop_name nm;

    if (!w->loop && lil__hev_is_loop_start(rec))
        w->loop = true;
    if (w->loop && loop_name(rec, &nm)) {
        w->nm = &nm;
        lil__hev_loop(w, rec, &nm);
        w->nm = NULL;
    } else if (!w->quiet) { /* the records of any run keep no state */
        plain(w, rec);
    }
}

static int each_record(void *ud, const lil_record *rec)
{
    struct hwalk *w = ud;
    bool wanted = rec->seq >= w->from;

    if (wanted && json_array_size(w->events) >= w->max) {
        w->more = true; /* next stays at this record */
        return 1;
    }
    w->quiet = !wanted;
    w->pending = wanted ? json_array() : NULL; /* quiet: no event is made */
    if (wanted && !w->pending) {
        w->rc = lil__seterr(w->err, LIL_E_NOMEM, 0, "out of memory");
        return 1;
    }
    record_events(w, rec);
    if (w->rc == LIL_OK && wanted && json_array_extend(w->events, w->pending) != 0)
        w->rc = lil__seterr(w->err, LIL_E_NOMEM, 0, "out of memory");
    json_decref(w->pending);
    w->pending = NULL;
    w->next = rec->seq + 1;
    return w->rc != LIL_OK;
}

static json_t *page(struct hwalk *w, const char *run_id, uint64_t last_seq)
{
    json_t *o = json_object();
    size_t want = w->q->last_iterations ? 7 : 6;

    lil__hev_set(o, "run", json_string(run_id));
    lil__hev_set(o, "kind", json_string(w->loop ? "loop" : "program"));
    lil__hev_set(o, "events", json_incref(w->events));
    lil__hev_set(o, "next", json_integer((json_int_t)w->next));
    lil__hev_set(o, "more", json_boolean(w->more));
    lil__hev_set(o, "last_seq", json_integer((json_int_t)last_seq));
    if (w->q->last_iterations)
        lil__hev_set(o, "iterations_before", json_integer(w->iters_before));
    if (json_object_size(o) != want) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The walk's state at its start, for a walk from `from`. */
static void walk_reset(struct hwalk *w, uint64_t from)
{
    w->from = from ? from : 1;
    w->next = w->from;
    w->more = w->loop = w->iter_open = w->parked = false;
    w->iter = 0;
    w->nretries = 0;
    w->iters_before = 0;
}

/* last_iterations: a walk that makes no event finds where the run's last N
 * iterations start; the page starts there (or at q->from, if later). */
static lil_status find_last_iterations(struct lil_run *run, struct hwalk *w)
{
    const struct lil_history_query *q = w->q;
    lil_status rc;
    uint64_t from;

    walk_reset(w, UINT64_MAX);
    rc = lil__run_foreach(run, w->err, each_record, w);
    if (rc == LIL_OK)
        rc = w->rc;
    if (rc != LIL_OK)
        return rc;
    from = q->from ? q->from : 1;
    if (w->nstarts >= q->last_iterations &&
        w->starts[w->nstarts - q->last_iterations] > from)
        from = w->starts[w->nstarts - q->last_iterations];
    walk_reset(w, from);
    return LIL_OK;
}

static lil_status walk_page(struct lil_run *run, struct hwalk *w)
{
    lil_status rc = LIL_OK;

    if (w->q->last_iterations)
        rc = find_last_iterations(run, w);
    else
        walk_reset(w, w->q->from);
    if (rc == LIL_OK)
        rc = lil__run_foreach(run, w->err, each_record, w);
    return rc == LIL_OK ? w->rc : rc;
}

lil_status lil__history_events(struct lil_store *st, struct lil_err *err,
                               const char *run_id, const struct lil_history_query *q,
                               json_t **out)
{
    struct hwalk w = {0};
    struct lil_run *run = NULL;
    lil_run_info info = {.struct_size = sizeof(info)};
    lil_status rc = lil__history_open(st, err, run_id, &run);

    *out = NULL;
    if (rc != LIL_OK)
        return rc;
    w.err = err;
    w.env = st->env;
    w.q = q;
    w.max = q->max && q->max < LIL_HISTORY_PAGE_MAX ? q->max : LIL_HISTORY_PAGE_MAX;
    w.events = json_array();
    rc = w.events ? walk_page(run, &w) : LIL_E_NOMEM;
    if (rc == LIL_OK)
        rc = lil__run_info(run, err, &info);
    if (rc == LIL_OK && w.next < w.from)
        w.next = w.from; /* asked past the end */
    if (rc == LIL_OK && !(*out = page(&w, run_id, info.records)))
        rc = LIL_E_NOMEM;
    if (rc == LIL_E_NOMEM)
        lil__seterr(err, rc, 0, "out of memory");
    json_decref(w.events);
    lil__free(st->env, w.retries);
    lil__free(st->env, w.starts);
    lil__history_close(run);
    return rc;
}
