/*
 * facts.c -- what a run is now (lil_run_facts; docs/api.md "Reading
 * runs"): any run's engine facts -- status, steps, records, times, the
 * process holding it, its uncertain effects with their requests -- the
 * store's -- a pending stop request, the queue state on PostgreSQL -- and,
 * for a loop run, the runner's own fold (lil__loop_facts: the same
 * document as lil_loop_facts, under "loop", and its status, iteration,
 * meters, budget, pause and wake time at the top).
 *
 * "in_flight": the effect a live process is running now -- an uncertain
 * effect of a run another process holds is in flight, not uncertain --
 * {"step", "started_ns", "elapsed_ms"} and, in a loop run, "iteration" and
 * "kind"; null when the run is not held or has no effect without an
 * outcome.  `lil inspect` and `lil ls` read it alike.
 */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "engine/place.h"
#include "engine/run.h"
#include "history/events_int.h"
#include "history/history.h"
#include "loop/record_name.h"
#include "loop/runner.h"

static json_t *or_null(json_t *v)
{
    return v ? v : json_null();
}

static json_t *holder(const lil_run_info *info)
{
    if (info->holder_pid == 0)
        return json_null();
    return json_pack(
        "{s:o, s:n}", "pid",
        info->holder_pid > 0 ? json_integer(info->holder_pid) : json_null(), "host");
}

/* The engine's uncertain effects: [{"step", "request"}], oldest first; a
 * request over 4 KiB is its first bytes, with "request_len" (its size) and
 * "request_cut": true. */
static json_t *uncertain(struct lil_run *run)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < run->n_uncertain; i++) {
        const struct ientry *e = &run->index.entries[run->uncertain[i]];
        char *id = lil__strndup(run->env, (const char *)e->key, e->key_len);
        struct lil_run_note note;
        json_t *o = json_object();

        if (id && lil__run_intent_note(run, id, false, &note)) {
            lil__hev_set(o, "request", lil__hev_text(note.text, note.len));
            if (note.cut) {
                lil__hev_set(o, "request_len", json_integer((json_int_t)note.full_len));
                lil__hev_set(o, "request_cut", json_true());
            }
        }
        lil__hev_set(o, "step", id ? lil__hev_text(id, strlen(id)) : NULL);
        json_array_append_new(a, o);
        lil__free(run->env, id);
    }
    return a;
}

static const char *program_status(const struct lil_run *run, const lil_run_info *info)
{
    if (run->state == LIL_RUN_UNCERTAIN && info->holder_pid != 0)
        return "running"; /* its effect is in flight */
    return lil__run_state_name(run->state);
}

/* The outcome of an ended program run: its result or reason as text. */
static void outcome(json_t *o, const struct lil_run *run)
{
    const char *key = run->state == LIL_RUN_COMPLETED ? "result" : "reason";

    if (run->state == LIL_RUN_RUNNING || run->state == LIL_RUN_UNCERTAIN ||
        !run->outcome)
        return;
    lil__hev_set(o, key, lil__hev_text(run->outcome, run->outcome_len));
}

static json_t *engine_facts(struct lil_run *run, const lil_run_info *info)
{
    json_t *o = json_object(), *steps = json_object();

    lil__hev_set(o, "run", json_string(run->id));
    lil__hev_set(o, "kind", json_string("program"));
    lil__hev_set(o, "status", json_string(program_status(run, info)));
    lil__hev_set(o, "ended",
                 json_boolean(run->state == LIL_RUN_COMPLETED ||
                              run->state == LIL_RUN_FAILED ||
                              run->state == LIL_RUN_STOPPED));
    lil__hev_set(steps, "done", json_integer((json_int_t)info->steps_done));
    lil__hev_set(steps, "failed", json_integer((json_int_t)info->steps_failed));
    lil__hev_set(o, "steps", steps);
    lil__hev_set(o, "records", json_integer((json_int_t)info->records));
    lil__hev_set(o, "last_seq", json_integer((json_int_t)info->records));
    lil__hev_set(o, "journal_bytes", json_integer((json_int_t)info->journal_bytes));
    lil__hev_set(o, "created_ns", json_integer(info->created_ns));
    lil__hev_set(o, "last_ns", json_integer(info->last_ns));
    lil__hev_set(o, "keyed", json_boolean(info->keyed));
    lil__hev_set(o, "holder", holder(info));
    lil__hev_set(o, "uncertain", uncertain(run));
    outcome(o, run);
    return o;
}

/* ---- where the run is ------------------------------------------------------------ */

struct place_walk {
    struct lil_place_fold f;
    struct lil_err *err;
    lil_status rc;
};

static int place_record(void *ud, const lil_record *rec)
{
    struct place_walk *pw = ud;

    pw->rc =
        lil__place_add(&pw->f, pw->err, rec->type, rec->key, rec->key_len, rec->ts_ns);
    return pw->rc != LIL_OK;
}

/* "place": {"step", "started"} (the effect the run is in, else its last
 * step; engine/place.h), or null before its first step. */
static lil_status place(struct lil_run *run, struct lil_err *err, json_t *o)
{
    struct place_walk pw = {.err = err, .rc = LIL_OK};
    struct lil_place p = {0};
    lil_status rc;

    lil__place_init(&pw.f, run->env);
    rc = lil__run_foreach(run, err, place_record, &pw);
    if (rc == LIL_OK)
        rc = pw.rc;
    if (rc == LIL_OK)
        rc = lil__place_take(&pw.f, err, &p);
    if (rc == LIL_OK)
        lil__hev_set(o, "place",
                     p.step
                         ? json_pack("{s:s, s:b}", "step", p.step, "started", p.started)
                         : json_null());
    lil__place_clear(run->env, &p);
    lil__place_free(&pw.f);
    return rc;
}

/* ---- the effect in flight ------------------------------------------------------ */

struct flight_walk {
    const char *step;
    size_t step_len;
    int64_t started_ns; /* its latest intent's time */
};

static int flight_record(void *ud, const lil_record *rec)
{
    struct flight_walk *fw = ud;

    if (rec->type == LIL_REC_INTENT && rec->key_len == fw->step_len &&
        memcmp(rec->key, fw->step, fw->step_len) == 0)
        fw->started_ns = rec->ts_ns;
    return 0;
}

/* "in_flight" of a held run (info's holder) with an effect without an
 * outcome: its newest such effect, since when; null otherwise.  A loop
 * run's iteration and kind are added by in_flight_loop. */
static lil_status in_flight(struct lil_run *run, struct lil_err *err,
                            const lil_run_info *info, int64_t now_ms, json_t *o)
{
    struct flight_walk fw = {0};
    const struct ientry *e;
    lil_status rc;
    int64_t elapsed;

    if (info->holder_pid == 0 || run->n_uncertain == 0) {
        lil__hev_set(o, "in_flight", json_null());
        return LIL_OK;
    }
    e = &run->index.entries[run->uncertain[run->n_uncertain - 1]];
    fw.step = (const char *)e->key;
    fw.step_len = e->key_len;
    rc = lil__run_foreach(run, err, flight_record, &fw);
    if (rc != LIL_OK)
        return rc;
    elapsed = fw.started_ns ? now_ms - fw.started_ns / 1000000 : 0;
    lil__hev_set(o, "in_flight",
                 json_pack("{s:o, s:I, s:I}", "step",
                           lil__hev_text(fw.step, fw.step_len), "started_ns",
                           (json_int_t)fw.started_ns, "elapsed_ms",
                           (json_int_t)(elapsed > 0 ? elapsed : 0)));
    return LIL_OK;
}

/* A loop run's in-flight effect: its iteration and kind, from the
 * runner's "uncertain" (which a held run's facts call running). */
static void in_flight_loop(json_t *o)
{
    json_t *f = json_object_get(o, "in_flight");
    json_t *u = json_object_get(json_object_get(o, "loop"), "uncertain");

    if (!json_is_object(f) || !json_is_object(u))
        return;
    lil__hev_copy(f, "iteration", u, "iteration");
    lil__hev_copy(f, "kind", u, "kind");
}

/* ---- the usage its agent calls reported ------------------------------------------ */

struct usage_walk {
    bool started; /* the loop's start record was seen */
    int64_t calls, estimated, unpriced, at_reservation, tokens;
    double usd;
};

/* Add one call's usage.  A number out of its range (a crafted journal)
 * adds nothing; the sums saturate. */
static void add_usage(struct usage_walk *u, const json_t *used)
{
    int64_t tokens;
    double usd;

    if (lil__json_int_in(used, "tokens", 0, LIL_LOOP_NUM_MAX, &tokens) &&
        __builtin_add_overflow(u->tokens, tokens, &u->tokens))
        u->tokens = INT64_MAX;
    if (lil__json_num_in(used, "usd", 0, LIL_LOOP_USD_MAX, &usd) &&
        isfinite(u->usd + usd))
        u->usd += usd;
}

/* An effect's outcome (a slot's step) that reported usage.  Only payloads
 * that mention it are parsed. */
static int usage_record(void *ud, const lil_record *rec)
{
    struct usage_walk *u = ud;
    json_t *p, *used;

    if (!u->started) {
        u->started = lil__hev_is_loop_start(rec);
        return 0;
    }
    if (rec->type != LIL_REC_STEP || !lil__loop_name_is_slot(rec->key, rec->key_len) ||
        !memmem(rec->payload, rec->payload_len, "\"usage\"", 7))
        return 0;
    p = lil__hev_payload(rec);
    used = json_object_get(p, "usage");
    if (json_is_object(used)) {
        u->calls++;
        u->unpriced += !json_is_number(json_object_get(used, "usd"));
        if (json_is_true(json_object_get(used, "at_reservation"))) {
            u->at_reservation++; /* the meters count its reservation instead */
        } else {
            u->estimated += json_is_true(json_object_get(used, "estimated"));
            add_usage(u, used);
        }
    }
    json_decref(p);
    return 0;
}

/* "usage": what a loop run's agent calls reported, {"calls",
 * "estimated_calls", "unpriced_calls", "at_reservation_calls", "tokens",
 * "usd"}: tokens and usd leave out the calls whose usage was missing or
 * invalid and counted at their reservations (at_reservation_calls; the
 * meters count what those and calls without usage reserved: "meters",
 * "budget"). */
static lil_status usage(struct lil_run *run, struct lil_err *err, json_t *o)
{
    struct usage_walk u = {0};
    lil_status rc = lil__run_foreach(run, err, usage_record, &u);

    if (rc == LIL_OK)
        lil__hev_set(o, "usage",
                     json_pack("{s:I, s:I, s:I, s:I, s:I, s:f}", "calls",
                               (json_int_t)u.calls, "estimated_calls",
                               (json_int_t)u.estimated, "unpriced_calls",
                               (json_int_t)u.unpriced, "at_reservation_calls",
                               (json_int_t)u.at_reservation, "tokens",
                               (json_int_t)u.tokens, "usd", u.usd));
    return rc;
}

/* ---- the store's facts ------------------------------------------------------- */

static json_t *stop_request(struct lil_store *st, const char *run_id)
{
    struct lil_err e;
    lil_bytes b = {NULL, 0};
    json_t *v = NULL;

    if (lil__stop_read(st, &e, run_id, &b) != LIL_OK)
        return json_null();
    v = json_loadb(b.data, b.len, 0, NULL);
    lil__export_free(b.data);
    return or_null(v);
}

static json_t *queue_state(struct lil_store *st, const char *run_id)
{
    enum lil_sq_state state;
    struct lil_err e;

    if (lil__queue_state(st, &e, run_id, &state) != LIL_OK)
        return json_null();
    return json_string(lil__sq_state_name(state));
}

/* ---- a loop run ---------------------------------------------------------------- */

static void copy_loop(json_t *o, json_t *lf)
{
    static const char *const keys[] = {"status", "iteration",  "meters", "budget",
                                       "paused", "wake_at_ms", "reason", "ended"};

    lil__hev_set(o, "kind", json_string("loop"));
    for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
        lil__hev_copy(o, keys[i], lf, keys[i]);
    lil__hev_set(o, "loop", json_incref(lf));
}

/* The runner's fold, when run is a loop run.  A journal it refuses is
 * "damaged", its message the reason. */
static lil_status loop_facts(struct lil_run *run, struct lil_err *err, int64_t now_ms,
                             json_t *o)
{
    struct lil_err e;
    json_t *lf = NULL;
    lil_status rc;

    lil__clearerr(&e);
    rc = lil__loop_facts(run, &e, now_ms, &lf);
    if (rc == LIL_E_NOTFOUND) {
        lil__hev_set(o, "loop", json_null());
        return LIL_OK;
    }
    if (rc == LIL_E_CORRUPT) {
        lil__hev_set(o, "kind", json_string("loop"));
        lil__hev_set(o, "status", json_string("damaged"));
        lil__hev_set(o, "reason", json_string(e.msg));
        lil__hev_set(o, "loop", json_null());
        return LIL_OK;
    }
    if (rc != LIL_OK) {
        lil__copyerr(err, &e);
        return rc;
    }
    copy_loop(o, lf);
    json_decref(lf);
    return usage(run, err, o);
}

lil_status lil__history_facts(struct lil_store *st, struct lil_err *err,
                              const char *run_id, int64_t now_ms, json_t **out)
{
    struct lil_run *run = NULL;
    lil_run_info info = {.struct_size = sizeof(info)};
    json_t *o = NULL;
    lil_status rc = lil__history_open(st, err, run_id, &run);

    *out = NULL;
    if (rc == LIL_OK)
        rc = lil__run_info(run, err, &info);
    if (rc == LIL_OK && !(o = engine_facts(run, &info)))
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (rc == LIL_OK) {
        static const char *const loop_keys[] = {"iteration", "meters",     "budget",
                                                "paused",    "wake_at_ms", "usage"};

        for (size_t i = 0; i < sizeof(loop_keys) / sizeof(*loop_keys); i++)
            lil__hev_set(o, loop_keys[i], json_null());
        rc = place(run, err, o);
    }
    if (rc == LIL_OK)
        rc = in_flight(run, err, &info, now_ms, o);
    if (rc == LIL_OK)
        rc = loop_facts(run, err, now_ms, o);
    if (rc == LIL_OK) {
        in_flight_loop(o);
        lil__hev_set(o, "stop_request", stop_request(st, run_id));
        lil__hev_set(o, "queue", queue_state(st, run_id));
        *out = o;
        o = NULL;
    }
    json_decref(o);
    lil__history_close(run);
    return rc;
}
