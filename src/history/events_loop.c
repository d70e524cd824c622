/*
 * events_loop.c -- the events of a loop run's records (docs/loops.md,
 * "Records"; the names decoded by loop/record_name.h).  Every event of a
 * loop record also carries "loop": {"kind": "start" | "effect" |
 * "snapshot" | "control", "iteration"?, "seq"?, "control"?, "n"?}.
 *
 * record            event             fields
 * "loop"            loop_start        loop_id, spec_sha256, spec_path, cwd,
 *                                     inputs, caps, started_at_ms, base_state
 * (an iteration's   iteration_start   iteration
 *  first record)
 * I.S intent        effect_start      slot, iteration, request_sha256, and
 *                                     from the note: kind, identity
 * I.S outcome,      effect            slot, iteration, kind, step, identity,
 *  I.S failure                        outcome ("ok", "failed"), dur_us, usage,
 *                                     result or reason, recovered, retries,
 *                                     note (a shell step's exit 127 or 126
 *                                     in words: "command not found: NAME");
 *                                     decoded: false for a payload that is
 *                                     not a JSON object
 * I.S resolve       recovery          slot, iteration, how, actor, reason
 * I.S sleep         sleep             slot, iteration, kind, dur_us,
 *                                     wake_at_ms or resolved
 * I.S breakpoint    approval          slot, iteration, kind, dur_us, step,
 *                                     actor, reason, digest
 * cap_cleared.N     approval          cap, actor, reason, at_iteration, at_ms
 * I.snap            iteration_end     iteration; with LIL_EVENTS_STATE also
 *                                     state and meters, the snapshot's own
 *                                     (else it is not parsed: the state is
 *                                     lil_run_facts')
 * cap.N             cap_tripped       cap, action, iteration
 * pause.N           pause             iteration, slot_seq, step, ask,
 *                                     strategy, digest, reason
 * parked.N          park              iteration, wake_at_ms
 * (the first loop   wake              -
 *  record after)
 * stop_requested.N  stop              actor, reason, requested_at_ms
 * stop_cleared.N    stop_cleared      actor, reason
 * retried.N         retried           actor, reason, iteration, failure, cap,
 *                                     slots, at_ms
 * terminated.N      terminated        iteration
 * observer.N        observer          event, status, error
 * reserve.N         reserve           slot, iteration, slot_seq, step, tokens,
 *                                     usd, unpriced, retry
 * other <kind>.N    control           control, payload
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "engine/intent.h"
#include "history/events_int.h"
#include "loop/runner.h"
#include "loop/shell_note.h"

/* ---- the "loop" object and the iteration ------------------------------------ */

static json_t *event(struct hwalk *w, const lil_record *rec,
                     const struct lil_loop_name *nm, const char *type)
{
    (void)nm; /* w->nm: lil__hev_new adds "loop" */
    return lil__hev_new(w, rec, type);
}

/* An iteration's first record: "iteration_start" before its events. */
static void enter_iteration(struct hwalk *w, const lil_record *rec,
                            const struct lil_loop_name *nm, int64_t iteration)
{
    json_t *ev;

    if (iteration < 0 || (w->iter_open && w->iter == iteration))
        return;
    w->iter_open = true;
    w->iter = iteration;
    w->nretries = 0;
    ev = event(w, rec, nm, "iteration_start");
    lil__hev_set(ev, "iteration", json_integer(iteration));
}

static void set_slot(json_t *ev, const lil_record *rec, const struct lil_loop_name *nm)
{
    lil__hev_set(ev, "slot", lil__hev_text(rec->key, rec->key_len));
    lil__hev_set(ev, "iteration", json_integer(nm->iteration));
}

/* ---- retries of agent calls (reserve.N with "retry") ------------------------ */

static int64_t *retries_of(struct hwalk *w, const char *slot, bool add)
{
    struct slot_retries *r;

    for (size_t i = 0; i < w->nretries; i++)
        if (strcmp(w->retries[i].slot, slot) == 0)
            return &w->retries[i].retries;
    if (!add || strlen(slot) >= sizeof(r->slot))
        return NULL;
    r = lil__grow(w->env, w->retries, &w->capretries, w->nretries, sizeof(*r), 8);
    if (!r) {
        w->rc = lil__seterr(w->err, LIL_E_NOMEM, 0, "out of memory");
        return NULL;
    }
    w->retries = r;
    r = &w->retries[w->nretries++];
    snprintf(r->slot, sizeof(r->slot), "%s", slot);
    r->retries = 0;
    return &r->retries;
}

/* ---- slots --------------------------------------------------------------------- */

static void slot_intent(struct hwalk *w, const lil_record *rec,
                        const struct lil_loop_name *nm)
{
    json_t *ev = event(w, rec, nm, "effect_start");
    char hex[65];
    struct lil_intent in;
    const char *sp;

    lil__intent_decode(rec->payload, rec->payload_len, rec->flags, &in);
    sp = in.note_len ? memchr(in.note, ' ', in.note_len) : NULL;
    set_slot(ev, rec, nm);
    lil__hex(rec->payload, rec->payload_len < 32 ? rec->payload_len : 32, hex);
    hex[2 * (rec->payload_len < 32 ? rec->payload_len : 32)] = '\0';
    lil__hev_set(ev, "request_sha256", json_string(hex));
    if (sp) { /* the note: "kind identity" (or its first bytes) */
        lil__hev_set(ev, "kind", lil__hev_text(in.note, (size_t)(sp - in.note)));
        lil__hev_set(ev, "identity",
                     lil__hev_text(sp + 1, in.note_len - (size_t)(sp - in.note) - 1));
    } else if (in.note_len) {
        lil__hev_set(ev, "kind", lil__hev_text(in.note, in.note_len));
    }
    if (in.apart) { /* the whole is the request record before the intent */
        size_t kind_len = sp ? (size_t)(sp - in.note) + 1 : 0;

        lil__hev_set(
            ev, "identity_len",
            json_integer(
                (json_int_t)(in.full_len > kind_len ? in.full_len - kind_len : 0)));
        lil__hev_set(ev, "identity_cut", json_true());
    }
}

static void slot_failed(struct hwalk *w, const lil_record *rec,
                        const struct lil_loop_name *nm)
{
    json_t *ev = event(w, rec, nm, "effect");
    char slot_name[48];
    int64_t *n;

    set_slot(ev, rec, nm);
    lil__hev_set(ev, "outcome", json_string("failed"));
    lil__hev_set(ev, "dur_us", json_integer(rec->dur_us));
    lil__hev_set(ev, "reason", lil__hev_text(rec->payload, rec->payload_len));
    snprintf(slot_name, sizeof(slot_name), "%.*s", (int)rec->key_len, rec->key);
    n = retries_of(w, slot_name, false);
    lil__hev_set(ev, "retries", json_integer(n ? *n : 0));
}

static void slot_effect(struct hwalk *w, const lil_record *rec,
                        const struct lil_loop_name *nm, const json_t *p)
{
    json_t *ev = event(w, rec, nm, "effect");
    json_t *usage = json_object_get(p, "usage");
    const char *kind = json_string_value(json_object_get(p, "kind"));
    char slot_name[48], note[200];
    int64_t *n;

    set_slot(ev, rec, nm);
    if (!p) /* not what the runner writes */
        lil__hev_set(ev, "decoded", json_false());
    lil__hev_copy(ev, "kind", p, "kind");
    lil__hev_copy(ev, "step", p, "step");
    lil__hev_copy(ev, "identity", p, "identity");
    lil__hev_set(ev, "outcome", json_string("ok"));
    lil__hev_set(ev, "dur_us", json_integer(rec->dur_us));
    lil__hev_set(ev, "usage", usage ? json_incref(usage) : json_null());
    lil__hev_copy(ev, "result", p, "result");
    if (kind && strcmp(kind, "shell") == 0 &&
        lil__shell_note(json_object_get(p, "result"), NULL, note, sizeof(note)))
        lil__hev_set(ev, "note", json_string(note));
    if (json_is_true(json_object_get(p, "recovered")))
        lil__hev_set(ev, "recovered", json_true());
    snprintf(slot_name, sizeof(slot_name), "%.*s", (int)rec->key_len, rec->key);
    n = retries_of(w, slot_name, false);
    lil__hev_set(ev, "retries", json_integer(n ? *n : 0));
}

static void slot_step(struct hwalk *w, const lil_record *rec,
                      const struct lil_loop_name *nm)
{
    json_t *p = lil__hev_payload(rec), *ev;
    const char *kind = json_string_value(json_object_get(p, "kind"));

    if (kind && (strcmp(kind, "sleep") == 0 || strcmp(kind, "sleepUntil") == 0)) {
        ev = event(w, rec, nm, "sleep");
        set_slot(ev, rec, nm);
        lil__hev_set(ev, "kind", json_string(kind));
        lil__hev_set(ev, "dur_us", json_integer(rec->dur_us));
        lil__hev_copy(ev, "wake_at_ms", p, "wakeAt");
        lil__hev_copy(ev, "resolved", p, "resolved");
    } else if (kind && strcmp(kind, "breakpoint") == 0) {
        ev = event(w, rec, nm, "approval");
        set_slot(ev, rec, nm);
        lil__hev_set(ev, "kind", json_string(kind));
        lil__hev_set(ev, "dur_us", json_integer(rec->dur_us));
        lil__hev_copy(ev, "step", p, "step");
        lil__hev_copy(ev, "actor", p, "actor");
        lil__hev_copy(ev, "reason", p, "reason");
        lil__hev_copy(ev, "ask_digest", p, "digest");
    } else {
        slot_effect(w, rec, nm, p);
    }
    json_decref(p);
}

static void slot_resolve(struct hwalk *w, const lil_record *rec,
                         const struct lil_loop_name *nm)
{
    json_t *ev = event(w, rec, nm, "recovery"), *p = lil__hev_payload(rec);

    set_slot(ev, rec, nm);
    lil__hev_copy(ev, "how", p, "action");
    lil__hev_copy(ev, "actor", p, "actor");
    lil__hev_copy(ev, "reason", p, "reason");
    json_decref(p);
}

static void slot(struct hwalk *w, const lil_record *rec, const struct lil_loop_name *nm)
{
    enter_iteration(w, rec, nm, nm->iteration);
    if (rec->type == LIL_REC_INTENT)
        slot_intent(w, rec, nm);
    else if (rec->type == LIL_REC_STEP_FAILED)
        slot_failed(w, rec, nm);
    else if (rec->type == LIL_REC_RESOLVE)
        slot_resolve(w, rec, nm);
    else
        slot_step(w, rec, nm);
}

/* ---- the start and snapshots ---------------------------------------------------- */

static void start(struct hwalk *w, const lil_record *rec,
                  const struct lil_loop_name *nm)
{
    json_t *ev = event(w, rec, nm, "loop_start"), *p = lil__hev_payload(rec);

    lil__hev_copy(ev, "loop_id", p, "loopId");
    lil__hev_copy(ev, "spec_sha256", p, "spec");
    lil__hev_copy(ev, "spec_path", p, "specPath");
    lil__hev_copy(ev, "cwd", p, "cwd");
    lil__hev_copy(ev, "inputs", p, "inputs");
    lil__hev_copy(ev, "caps", p, "caps");
    lil__hev_copy(ev, "started_at_ms", p, "startedAt");
    lil__hev_copy(ev, "base_state", p, "baseState");
    json_decref(p);
}

/* LIL_EVENTS_STATE: the snapshot's "state" and "meters", as journaled (null
 * when the payload is not the runner's). */
static void snapshot_state(json_t *ev, const lil_record *rec)
{
    json_t *p = lil__hev_payload(rec), *v;

    v = json_object_get(p, "state");
    lil__hev_set(ev, "state", v ? json_incref(v) : json_null());
    v = json_object_get(p, "meters");
    lil__hev_set(ev, "meters", v ? json_incref(v) : json_null());
    json_decref(p);
}

static void snapshot(struct hwalk *w, const lil_record *rec,
                     const struct lil_loop_name *nm)
{
    json_t *ev;

    enter_iteration(w, rec, nm, nm->iteration);
    ev = event(w, rec, nm, "iteration_end");
    lil__hev_set(ev, "iteration", json_integer(nm->iteration));
    if (ev && (w->q->flags & LIL_EVENTS_STATE))
        snapshot_state(ev, rec);
    w->iter_open = false;
    w->nretries = 0;
}

/* ---- control records --------------------------------------------------------------
 */

struct control_map {
    const char *kind, *type;
    const char *keys[7][2]; /* {event key, payload key}; NULL ends */
};

static const struct control_map controls[] = {
    {"cap",
     "cap_tripped",
     {{"cap", "reason"}, {"action", "action"}, {"iteration", "iteration"}}},
    {"cap_cleared",
     "approval",
     {{"cap", "reason"},
      {"actor", "actor"},
      {"reason", "why"},
      {"at_iteration", "atIteration"},
      {"at_ms", "at"}}},
    {"pause",
     "pause",
     {{"iteration", "iteration"},
      {"slot_seq", "seq"},
      {"step", "step"},
      {"ask", "ask"},
      {"strategy", "strategy"},
      {"ask_digest", "digest"},
      {"reason", "why"}}},
    {"parked", "park", {{"iteration", "iteration"}, {"wake_at_ms", "wakeAt"}}},
    {"stop_cleared", "stop_cleared", {{"actor", "actor"}, {"reason", "reason"}}},
    {"retried",
     "retried",
     {{"actor", "actor"},
      {"reason", "reason"},
      {"iteration", "iteration"},
      {"failure", "failure"},
      {"cap", "cap"},
      {"slots", "slots"},
      {"at_ms", "at"}}},
    {"terminated", "terminated", {{"iteration", "iteration"}}},
    {"observer",
     "observer",
     {{"event", "event"}, {"status", "status"}, {"error", "error"}}},
    {"reserve",
     "reserve",
     {{"slot", "slot"},
      {"step", "step"},
      {"tokens", "tokens"},
      {"usd", "usd"},
      {"unpriced", "unpriced"},
      {"retry", "retry"}}},
};

static void stop(struct hwalk *w, const lil_record *rec, const struct lil_loop_name *nm,
                 const json_t *p)
{
    json_t *ev = event(w, rec, nm, "stop");
    const json_t *req = json_object_get(p, "request");

    lil__hev_copy(ev, "actor", req, "actor");
    lil__hev_copy(ev, "reason", req, "reason");
    lil__hev_copy(ev, "requested_at_ms", req, "requestedAt");
}

/* A reservation: the iteration and place of its slot (the iteration starts
 * before it), and a retry counted. */
static void note_reserve(struct hwalk *w, const lil_record *rec,
                         const struct lil_loop_name *nm, json_t *ev, const json_t *p)
{
    const char *s = json_string_value(json_object_get(p, "slot"));
    struct lil_loop_name at;
    int64_t *n;

    if (!s || !lil__loop_name_parse(s, strlen(s), &at) || at.kind != LIL_LOOP_NAME_SLOT)
        return;
    lil__hev_set(ev, "iteration", json_integer(at.iteration));
    lil__hev_set(ev, "slot_seq", json_integer(at.seq));
    if (at.iteration >= 0 && !(w->iter_open && w->iter == at.iteration)) {
        if (ev) { /* iteration_start goes before it */
            json_incref(ev);
            json_array_remove(w->pending, json_array_size(w->pending) - 1);
        }
        enter_iteration(w, rec, nm, at.iteration);
        if (ev)
            json_array_append_new(w->pending, ev);
    }
    if (json_integer_value(json_object_get(p, "retry")) > 0 &&
        (n = retries_of(w, s, true)) != NULL)
        (*n)++;
}

/* A pause's id (its record's name) and the digest an approval names, as
 * the facts and the loop's result show them ("ask_digest" is the digest
 * of what it asks, as journaled). */
static void pause_ident(const struct hwalk *w, const lil_record *rec, json_t *ev,
                        const json_t *p)
{
    char id[LIL_LOOP_NAME_MAX], digest[65];

    if (!ev || rec->key_len == 0 || rec->key_len >= sizeof(id))
        return;
    memcpy(id, rec->key, rec->key_len);
    id[rec->key_len] = '\0';
    lil__loop_breakpoint_digest(
        w->env, id, json_integer_value(json_object_get(p, "iteration")),
        json_integer_value(json_object_get(p, "seq")),
        json_string_value(json_object_get(p, "step")),
        json_string_value(json_object_get(p, "digest")), digest);
    lil__hev_set(ev, "pause_id", json_string(id));
    lil__hev_set(ev, "digest", json_string(digest));
}

static void control(struct hwalk *w, const lil_record *rec,
                    const struct lil_loop_name *nm)
{
    json_t *p = lil__hev_payload(rec), *ev;
    size_t i, k;

    if (strcmp(nm->control, "stop_requested") == 0) {
        stop(w, rec, nm, p);
        json_decref(p);
        return;
    }
    for (i = 0; i < sizeof(controls) / sizeof(*controls); i++)
        if (strcmp(controls[i].kind, nm->control) == 0)
            break;
    if (i == sizeof(controls) / sizeof(*controls)) {
        ev = event(w, rec, nm, "control");
        lil__hev_set(ev, "control", json_string(nm->control));
        lil__hev_set(ev, "payload", p ? json_incref(p) : json_null());
        json_decref(p);
        return;
    }
    ev = event(w, rec, nm, controls[i].type);
    for (k = 0; k < 7 && controls[i].keys[k][0]; k++)
        lil__hev_copy(ev, controls[i].keys[k][0], p, controls[i].keys[k][1]);
    if (strcmp(nm->control, "reserve") == 0)
        note_reserve(w, rec, nm, ev, p);
    else if (strcmp(nm->control, "pause") == 0)
        pause_ident(w, rec, ev, p);
    json_decref(p);
}

/* ---- one record ---------------------------------------------------------------- */

/* A record before the page (w->quiet: no event is made): only what the
 * walk keeps -- the iteration, a park, the retries of the iteration's
 * calls -- so that the page's events are what they would be in a walk
 * from the first record.  Only a reserve.N payload is parsed. */
static void keep_state(struct hwalk *w, const lil_record *rec,
                       const struct lil_loop_name *nm)
{
    json_t *p;

    if (nm->kind == LIL_LOOP_NAME_SLOT) {
        enter_iteration(w, rec, nm, nm->iteration);
    } else if (nm->kind == LIL_LOOP_NAME_SNAP) {
        snapshot(w, rec, nm);
    } else if (nm->kind == LIL_LOOP_NAME_CONTROL &&
               strcmp(nm->control, "reserve") == 0) {
        p = lil__hev_payload(rec);
        note_reserve(w, rec, nm, NULL, p);
        json_decref(p);
    }
}

void lil__hev_loop(struct hwalk *w, const lil_record *rec,
                   const struct lil_loop_name *nm)
{
    bool park = nm->kind == LIL_LOOP_NAME_CONTROL && strcmp(nm->control, "parked") == 0;

    if (w->parked && !park) {
        w->parked = false;
        (void)event(w, rec, nm, "wake");
    }
    if (w->quiet) {
        keep_state(w, rec, nm);
        w->parked = park;
        return;
    }
    switch (nm->kind) {
    case LIL_LOOP_NAME_START:
        start(w, rec, nm);
        break;
    case LIL_LOOP_NAME_SLOT:
        slot(w, rec, nm);
        break;
    case LIL_LOOP_NAME_SNAP:
        snapshot(w, rec, nm);
        break;
    default:
        control(w, rec, nm);
        break;
    }
    w->parked = park;
}
