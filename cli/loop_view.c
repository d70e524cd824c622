/*
 * loop_view.c -- what the journal of a loop run says (see loop_view.h):
 * record names (the library's, from the events of lil_run_events),
 * one-line summaries, and a whole run: its facts from lil_loop_facts, and
 * its events for what is only shown (the usage of its calls, the slots of
 * its last iterations).  Nothing here decodes a record's name.
 */
#include "loop_view.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "run_events.h"

/* ---- names ------------------------------------------------------------------- */

/* The record's name as the library decoded it: the event's "loop" object. */
bool loop_view_event_name(const json_t *ev, struct loop_view_name *out)
{
    static const char *const kinds[] = {NULL, "start", "effect", "snapshot", "control"};
    const json_t *nm = json_object_get(ev, "loop");
    const char *kind = json_string_value(json_object_get(nm, "kind"));
    const char *control = json_string_value(json_object_get(nm, "control"));

    memset(out, 0, sizeof(*out));
    for (size_t i = 1; kind && i < sizeof(kinds) / sizeof(*kinds); i++)
        if (strcmp(kind, kinds[i]) == 0)
            out->kind = (enum loop_view_kind)i;
    if (out->kind == LOOP_VIEW_CONTROL &&
        (!control || strlen(control) >= sizeof(out->control)))
        out->kind = LOOP_VIEW_NONE; /* longer than any kind the runner writes */
    if (out->kind == LOOP_VIEW_NONE) {
        memset(out, 0, sizeof(*out));
        return false;
    }
    out->iteration = (int64_t)json_integer_value(json_object_get(nm, "iteration"));
    out->seq = (int64_t)json_integer_value(json_object_get(nm, "seq"));
    out->n = (uint64_t)json_integer_value(json_object_get(nm, "n"));
    if (control)
        memcpy(out->control, control, strlen(control) + 1);
    return true;
}

/* The payload as a JSON object, or NULL. */
static json_t *payload_obj(const lil_record *rec)
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

json_t *loop_view_name_json(const struct loop_view_name *nm)
{
    static const char *const kinds[] = {NULL, "start", "effect", "snapshot", "control"};
    json_t *o;

    if (nm->kind == LOOP_VIEW_NONE ||
        (size_t)nm->kind >= sizeof(kinds) / sizeof(*kinds))
        return NULL;
    o = json_object();
    cli_json_set(o, "kind", json_string(kinds[nm->kind]));
    if (nm->kind == LOOP_VIEW_EFFECT || nm->kind == LOOP_VIEW_SNAPSHOT)
        cli_json_set(o, "iteration", json_integer(nm->iteration));
    if (nm->kind == LOOP_VIEW_EFFECT)
        cli_json_set(o, "seq", json_integer(nm->seq));
    if (nm->kind == LOOP_VIEW_CONTROL) {
        cli_json_set(o, "control", json_string(nm->control));
        cli_json_set(o, "n", cli_json_u64(nm->n));
    }
    return o;
}

/* ---- summaries --------------------------------------------------------------- */

/* A summary under construction: text appended, cut at its capacity. */
struct line {
    char buf[2048];
    size_t len;
};

static void put(struct line *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void put(struct line *l, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (l->len >= sizeof(l->buf) - 1)
        return;
    va_start(ap, fmt);
    n = vsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        l->len += (size_t)n < sizeof(l->buf) - l->len ? (size_t)n
                                                      : sizeof(l->buf) - 1 - l->len;
}

/* v as compact JSON, at most max bytes (cut at a character, "..." added).
 * json_dumpb writes into our buffer: no string of jansson's to free (lil
 * owns jansson's allocation hooks, json.h). */
static void put_json(struct line *l, const json_t *v, size_t max)
{
    char text[2048];
    size_t n =
        v ? json_dumpb(v, text, sizeof(text), JSON_COMPACT | JSON_ENCODE_ANY) : 0;
    size_t shown = n;

    if (n == 0) {
        put(l, "-");
        return;
    }
    if (shown > max || shown >= sizeof(text)) { /* text holds sizeof(text) bytes */
        shown = max < sizeof(text) - 1 ? max : sizeof(text) - 1;
        while (shown > 0 && ((unsigned char)text[shown] & 0xC0) == 0x80)
            shown--;
    }
    put(l, "%.*s%s", (int)shown, text, shown < n ? "..." : "");
}

static const char *str_of(const json_t *o, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : dflt;
}

static int64_t int_of(const json_t *o, const char *key)
{
    return (int64_t)json_integer_value(json_object_get(o, key));
}

/* Member key of o as a count of tokens: an integer in [0, 2^53 - 1], 0
 * for anything else (what a crafted journal may hold). */
static int64_t count_of(const json_t *o, const char *key)
{
    int64_t v = int_of(o, key);

    return v >= 0 && v <= INT64_C(9007199254740991) ? v : 0;
}

/* *sum + v, saturated. */
static void add_count(int64_t *sum, int64_t v)
{
    if (__builtin_add_overflow(*sum, v, sum))
        *sum = INT64_MAX;
}

/* Member key of o as a number (int or real), 0 when it is not one. */
static double num_of(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

static void put_time_ms(struct line *l, int64_t ms)
{
    char iso[40];

    cli_fmt_iso(cli_ms_to_ns(ms), false, iso, sizeof(iso));
    put(l, "%s", iso);
}

/* "  tokens 100 usd 0.2500"; "~" before estimated tokens, "unpriced" for
 * no usd. */
static void put_usage(struct line *l, const json_t *usage)
{
    const json_t *usd = json_object_get(usage, "usd");

    if (!json_is_object(usage))
        return;
    put(l, "  tokens %s%" PRId64,
        json_is_true(json_object_get(usage, "estimated")) ? "~" : "",
        int_of(usage, "tokens"));
    if (json_is_number(usd))
        put(l, " usd %.4f", json_number_value(usd));
    else
        put(l, " unpriced");
}

static void sum_start(struct line *l, const json_t *v)
{
    put(l, "loop %s  spec %s  inputs ", str_of(v, "loopId", "?"),
        str_of(v, "specPath", "?"));
    put_json(l, json_object_get(v, "inputs"), 60);
    put(l, "  state ");
    put_json(l, json_object_get(v, "baseState"), 60);
}

/* The outcome of a slot: an effect's result, a sleep, an approval. */
static void sum_slot_step(struct line *l, const json_t *v)
{
    const char *kind = str_of(v, "kind", "?");

    if (strcmp(kind, "sleep") == 0) {
        put(l, "sleep until ");
        put_time_ms(l, int_of(v, "wakeAt"));
    } else if (strcmp(kind, "sleepUntil") == 0) {
        if (json_is_true(json_object_get(v, "resolved")))
            put(l, "sleepUntil: the condition held");
        else {
            put(l, "sleepUntil: look again at ");
            put_time_ms(l, int_of(v, "wakeAt"));
        }
    } else if (strcmp(kind, "breakpoint") == 0) {
        put(l, "breakpoint %s approved by %s: %s", str_of(v, "step", "?"),
            str_of(v, "actor", "?"), str_of(v, "reason", ""));
    } else {
        put(l, "%s %s  ", kind, str_of(v, "step", "-"));
        put_json(l, json_object_get(v, "result"), 80);
        put_usage(l, json_object_get(v, "usage"));
        if (json_is_true(json_object_get(v, "recovered")))
            put(l, "  (assumed done)");
    }
}

static void sum_intent(struct line *l, const lil_record *rec)
{
    char hex[24];
    const char *note;
    size_t len;

    cli_fmt_hex(rec->payload, rec->payload_len < 8 ? rec->payload_len : 8, hex,
                sizeof(hex));
    uint64_t full;

    if (cli_intent_note(rec, &note, &len) && cli_intent_note_cut(rec, &full))
        put(l, "%.*s... (%" PRIu64 " bytes)  request %s...",
            (int)(len > 200 ? 200 : len), note, full, hex);
    else if (cli_intent_note(rec, &note, &len))
        put(l, "%.*s  request %s...", (int)(len > 200 ? 200 : len), note, hex);
    else
        put(l, "request %s...", hex);
}

static void sum_control(struct line *l, const char *kind, const json_t *v)
{
    const json_t *req = json_object_get(v, "request");

    if (strcmp(kind, "cap") == 0)
        put(l, "cap %s tripped at iteration %" PRId64 " (%s)", str_of(v, "reason", "?"),
            int_of(v, "iteration"), str_of(v, "action", "?"));
    else if (strcmp(kind, "cap_cleared") == 0)
        put(l, "cap %s approved by %s: %s", str_of(v, "reason", "?"),
            str_of(v, "actor", "?"), str_of(v, "why", ""));
    else if (strcmp(kind, "pause") == 0)
        put(l, "paused at %s (iteration %" PRId64 "): %s [strategy: %s]",
            str_of(v, "step", "?"), int_of(v, "iteration"), str_of(v, "ask", ""),
            str_of(v, "strategy", "?"));
    else if (strcmp(kind, "parked") == 0) {
        put(l, "parked until ");
        put_time_ms(l, int_of(v, "wakeAt"));
        put(l, " (iteration %" PRId64 ")", int_of(v, "iteration"));
    } else if (strcmp(kind, "stop_requested") == 0)
        put(l, "stop requested by %s: %s", str_of(req, "actor", "?"),
            str_of(req, "reason", ""));
    else if (strcmp(kind, "stop_cleared") == 0)
        put(l, "stop cleared by %s: %s", str_of(v, "actor", "?"),
            str_of(v, "reason", ""));
    else if (strcmp(kind, "retried") == 0)
        put(l, "failed run retried by %s at iteration %" PRId64 ": %s",
            str_of(v, "actor", "?"), int_of(v, "iteration"), str_of(v, "reason", ""));
    else if (strcmp(kind, "terminated") == 0)
        put(l, "terminated at iteration %" PRId64, int_of(v, "iteration"));
    else if (strcmp(kind, "observer") == 0)
        put(l, "observer %s: %s%s%s", str_of(v, "event", "?"), str_of(v, "status", "?"),
            json_object_get(v, "error") ? ": " : "", str_of(v, "error", ""));
    else
        put_json(l, v, 120);
}

static void sum_snapshot(struct line *l, const json_t *v)
{
    const json_t *m = json_object_get(v, "meters");
    int64_t tokens = int_of(m, "tokens");
    double usd = json_number_value(json_object_get(m, "usd"));

    put(l, "iteration %" PRId64 " committed  state ", int_of(v, "iteration"));
    put_json(l, json_object_get(v, "state"), 80);
    if (tokens > 0 || usd > 0)
        put(l, "  tokens %" PRId64 " usd %.4f", tokens, usd);
}

static void sum_end(struct line *l, const json_t *v)
{
    put(l, "%s at iteration %" PRId64, str_of(v, "status", "?"),
        int_of(v, "iteration"));
    if (json_is_string(json_object_get(v, "reason")))
        put(l, ": %s", str_of(v, "reason", ""));
}

/* The summary of a record whose payload is the JSON object v. */
static void sum_parsed(struct line *l, const lil_record *rec,
                       const struct loop_view_name *nm, const json_t *v)
{
    switch (nm->kind) {
    case LOOP_VIEW_START:
        sum_start(l, v);
        break;
    case LOOP_VIEW_EFFECT:
        if (rec->type == LIL_REC_RESOLVE)
            put(l, "resolved: %s by %s: %s", str_of(v, "action", "?"),
                str_of(v, "actor", "?"), str_of(v, "reason", ""));
        else
            sum_slot_step(l, v);
        break;
    case LOOP_VIEW_SNAPSHOT:
        sum_snapshot(l, v);
        break;
    case LOOP_VIEW_CONTROL:
        sum_control(l, nm->control, v);
        break;
    default:
        sum_end(l, v);
        break;
    }
}

void loop_view_summary(const lil_record *rec, const struct loop_view_name *nm,
                       size_t max, char *buf, size_t cap)
{
    struct line l = {"", 0};
    json_t *v = NULL;

    if (rec->type == LIL_REC_INTENT)
        sum_intent(&l, rec);
    else if (rec->type != LIL_REC_STEP_FAILED && rec->type != LIL_REC_RUN_FAILED &&
             (v = payload_obj(rec)) != NULL)
        sum_parsed(&l, rec, nm, v);
    if (l.len == 0 && rec->type != LIL_REC_INTENT) { /* a reason, or not JSON */
        cli_fmt_payload(rec->payload, rec->payload_len, max, buf, cap);
        json_decref(v);
        return;
    }
    json_decref(v);
    cli_fmt_printable(l.buf, l.len, max, buf, cap);
}

/* ---- the walk ---------------------------------------------------------------- */

/* What the walk keeps besides the view: it reads records for display only
 * (the facts are lil_loop_facts'). */
struct walk {
    struct loop_view *v;
    size_t tail;
    int64_t snapshots; /* iterations the snapshot records commit (shown
                          for a damaged run only) */
    bool usage_known;  /* the run's usage came from its facts */
    bool nomem;
};

static char *dup_bytes(const void *p, size_t n)
{
    char *s = malloc(n + 1);

    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

/* ---- the slots of the last iterations ---------------------------------------- */

static void iter_release(struct loop_view_iter *it)
{
    for (size_t i = 0; i < it->n; i++) {
        free(it->slots[i].kind);
        free(it->slots[i].step);
        free(it->slots[i].model);
        free(it->slots[i].unreported);
        free(it->slots[i].note);
    }
    free(it->slots);
}

/* The entry of iteration, made (and the oldest dropped) when new. */
static struct loop_view_iter *iter_for(struct walk *w, int64_t iteration)
{
    struct loop_view *v = w->v;
    struct loop_view_iter *grown;

    for (size_t i = v->niters; i-- > 0;)
        if (v->iters[i].iteration == iteration)
            return &v->iters[i];
    if (v->niters == w->tail) {
        iter_release(&v->iters[0]);
        memmove(v->iters, v->iters + 1, (v->niters - 1) * sizeof(*v->iters));
        v->niters--;
        v->iters_omitted++;
    }
    if (v->niters == v->capiters) {
        size_t cap = v->capiters ? v->capiters * 2 : 16;
        grown = realloc(v->iters, cap * sizeof(*grown));
        if (!grown) {
            w->nomem = true;
            return NULL;
        }
        v->iters = grown;
        v->capiters = cap;
    }
    grown = &v->iters[v->niters++];
    memset(grown, 0, sizeof(*grown));
    grown->iteration = iteration;
    return grown;
}

static struct loop_view_slot *slot_for(struct walk *w, struct loop_view_iter *it,
                                       const char *name, size_t len, int64_t seq)
{
    struct loop_view_slot *s;

    for (size_t i = 0; i < it->n; i++)
        if (strlen(it->slots[i].name) == len &&
            memcmp(it->slots[i].name, name, len) == 0)
            return &it->slots[i];
    if (len >= LOOP_VIEW_SLOT_MAX)
        return NULL;
    if (it->n == it->cap) {
        size_t cap = it->cap ? it->cap * 2 : 4;
        s = realloc(it->slots, cap * sizeof(*s));
        if (!s) {
            w->nomem = true;
            return NULL;
        }
        it->slots = s;
        it->cap = cap;
    }
    s = &it->slots[it->n++];
    memset(s, 0, sizeof(*s));
    memcpy(s->name, name, len);
    s->seq = seq;
    s->status = "started";
    return s;
}

static void set_str(struct walk *w, char **dst, const char *s, size_t n)
{
    char *copy = dup_bytes(s, n);

    if (!copy) {
        w->nomem = true;
        return;
    }
    free(*dst);
    *dst = copy;
}

/* An intent: the slot's kind from its note ("kind identity"). */
static void slot_intent(struct walk *w, struct loop_view_slot *s, const json_t *ev)
{
    const char *kind = json_string_value(json_object_get(ev, "kind"));

    s->status = "started";
    if (s->kind || !kind)
        return;
    set_str(w, &s->kind, kind, strlen(kind));
}

static void slot_usage(struct walk *w, struct loop_view_slot *s, const json_t *usage)
{
    const char *model = json_string_value(json_object_get(usage, "model"));

    s->has_usage = true;
    s->tokens = count_of(usage, "tokens");
    s->has_usd = json_is_number(json_object_get(usage, "usd"));
    s->usd = json_number_value(json_object_get(usage, "usd"));
    s->estimated = json_is_true(json_object_get(usage, "estimated"));
    s->overran = json_is_true(json_object_get(usage, "overran"));
    s->at_reservation = json_is_true(json_object_get(usage, "at_reservation"));
    if (model)
        set_str(w, &s->model, model, strlen(model));
    if (json_is_string(json_object_get(usage, "unreported")))
        set_str(w, &s->unreported,
                json_string_value(json_object_get(usage, "unreported")),
                json_string_length(json_object_get(usage, "unreported")));
}

/* A slot's outcome (its event v: an effect, a sleep, an approval). */
static void slot_outcome(struct walk *w, struct loop_view_slot *s, const json_t *v)
{
    const char *kind = json_string_value(json_object_get(v, "kind"));
    const char *step = json_string_value(json_object_get(v, "step"));
    const json_t *usage = json_object_get(v, "usage");

    if (kind)
        set_str(w, &s->kind, kind, strlen(kind));
    if (step)
        set_str(w, &s->step, step, strlen(step));
    if (json_is_object(usage))
        slot_usage(w, s, usage);
    if (json_is_string(json_object_get(v, "note")))
        set_str(w, &s->note, json_string_value(json_object_get(v, "note")),
                json_string_length(json_object_get(v, "note")));
    s->wake_at_ms = int_of(v, "wake_at_ms");
    if (kind && strcmp(kind, "breakpoint") == 0)
        s->status = "approved";
    else if (json_is_true(json_object_get(v, "recovered")))
        s->status = "assumed-done";
    else
        s->status = "done";
}

static const char *resolved_status(const json_t *ev)
{
    const char *how = json_string_value(json_object_get(ev, "how"));

    if (how && strcmp(how, "abort") == 0)
        return "aborted";
    if (how && strcmp(how, "assume-done") == 0)
        return "assumed-done";
    return "retry";
}

/* The event ev of a slot's record (of record type rt) in the history. */
static void history_slot(struct walk *w, const json_t *ev, const char *rt,
                         const struct loop_view_name *nm)
{
    const char *key = str_of(json_object_get(ev, "record"), "key", "");
    struct loop_view_iter *it = iter_for(w, nm->iteration);
    struct loop_view_slot *s = it ? slot_for(w, it, key, strlen(key), nm->seq) : NULL;

    if (!s)
        return;
    if (strcmp(rt, "intent") == 0) {
        slot_intent(w, s, ev);
        return;
    }
    if (strcmp(rt, "resolve") == 0) {
        s->status = resolved_status(ev);
        return;
    }
    s->dur_us = (uint32_t)int_of(ev, "dur_us");
    if (strcmp(rt, "step-failed") == 0) {
        if (strcmp(s->status, "aborted") != 0)
            s->status = "failed";
        return;
    }
    if (!json_is_false(json_object_get(ev, "decoded")))
        slot_outcome(w, s, ev);
}

/* A reservation (a reserve event): one attempt of its slot's agent call. */
static void history_reserve(struct walk *w, const json_t *ev)
{
    const char *slot = json_string_value(json_object_get(ev, "slot"));
    struct loop_view_iter *it;
    struct loop_view_slot *s;

    if (!slot || !json_is_integer(json_object_get(ev, "slot_seq")))
        return;
    it = iter_for(w, int_of(ev, "iteration"));
    s = it ? slot_for(w, it, slot, strlen(slot), int_of(ev, "slot_seq")) : NULL;
    if (!s)
        return;
    s->attempts++;
    s->last_reserved_tokens = count_of(ev, "tokens");
    s->last_reserved_usd = json_number_value(json_object_get(ev, "usd"));
    add_count(&s->reserved_tokens, s->last_reserved_tokens);
    s->reserved_usd += s->last_reserved_usd;
    s->reserved_rest =
        s->reserved_rest || json_is_true(json_object_get(ev, "unpriced"));
}

/* ---- events ------------------------------------------------------------------ */

/* A slot's record: the run's usage, and the history of the last iterations. */
static void on_slot(struct walk *w, const json_t *ev, const char *rt,
                    const struct loop_view_name *nm)
{
    const json_t *usage = json_object_get(ev, "usage");

    if (!w->usage_known && strcmp(rt, "step") == 0 && json_is_object(usage)) {
        w->v->usage.calls++;
        w->v->usage.unpriced += !json_is_number(json_object_get(usage, "usd"));
        if (json_is_true(json_object_get(usage, "at_reservation"))) {
            w->v->usage.at_reservation++;
        } else {
            w->v->usage.estimated += json_is_true(json_object_get(usage, "estimated"));
            add_count(&w->v->usage.reported_tokens, count_of(usage, "tokens"));
            w->v->usage.reported_usd += num_of(usage, "usd");
        }
    }
    if (w->tail > 0)
        history_slot(w, ev, rt, nm);
}

static void on_snapshot(struct walk *w, const struct loop_view_name *nm)
{
    if (nm->iteration + 1 > w->snapshots)
        w->snapshots = nm->iteration + 1;
    if (w->tail > 0)
        (void)iter_for(w, nm->iteration);
}

/* The start (the first loop_start event): its record's fields, as named
 * there. */
static void on_start(struct walk *w, const json_t *ev)
{
    static const char *const keys[][2] = {
        {"loopId", "loop_id"},          {"spec", "spec_sha256"},
        {"specPath", "spec_path"},      {"inputs", "inputs"},
        {"startedAt", "started_at_ms"}, {"baseState", "base_state"}};
    json_t *p = json_object();

    if (!p) {
        w->nomem = true;
        return;
    }
    for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
        json_t *v = json_object_get(ev, keys[i][1]);

        if (v)
            json_object_set(p, keys[i][0], v);
    }
    w->v->is_loop = true;
    w->v->start = p;
}

static int each_event(void *ud, const json_t *ev)
{
    struct walk *w = ud;
    const char *type = str_of(ev, "type", "");
    const char *rt = str_of(json_object_get(ev, "record"), "type", "");
    struct loop_view_name nm;

    if (!w->v->is_loop) {
        if (strcmp(type, "loop_start") == 0)
            on_start(w, ev);
        return w->nomem;
    }
    /* one event per record: iteration_start and wake come with another */
    if (strcmp(type, "iteration_start") == 0 || strcmp(type, "wake") == 0 ||
        !loop_view_event_name(ev, &nm))
        return 0;
    if (nm.kind == LOOP_VIEW_EFFECT)
        on_slot(w, ev, rt, &nm);
    else if (nm.kind == LOOP_VIEW_SNAPSHOT)
        on_snapshot(w, &nm);
    else if (nm.kind == LOOP_VIEW_CONTROL && w->tail > 0 &&
             strcmp(nm.control, "reserve") == 0)
        history_reserve(w, ev);
    return w->nomem;
}

/* ---- the facts --------------------------------------------------------------- */

static json_t *obj_or_null(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);

    return json_is_object(v) ? v : NULL;
}

static void meters_from(struct loop_view_meters *m, const json_t *facts)
{
    const json_t *j = json_object_get(facts, "meters");
    const json_t *tok = json_object_get(j, "tokens"), *usd = json_object_get(j, "usd");
    const json_t *wall = json_object_get(j, "wallclock");
    const json_t *totals = json_object_get(facts, "totals");

    m->iteration_base = int_of(j, "iteration_base");
    m->tokens = int_of(totals, "tokens");
    m->tokens_base = int_of(tok, "base");
    m->tokens_reserved = int_of(tok, "reserved");
    m->usd = num_of(totals, "usd");
    m->usd_base = num_of(usd, "base");
    m->usd_reserved = num_of(usd, "reserved");
    m->repeats = int_of(json_object_get(j, "no_progress"), "repeats");
    m->wallclock_base_ms = int_of(wall, "base_ms");
    m->elapsed_ms = int_of(wall, "elapsed_ms");
}

static void budget_from(struct loop_view_budget *b, const json_t *facts)
{
    const json_t *j = json_object_get(facts, "budget");
    const json_t *tok = obj_or_null(j, "tokens"), *usd = obj_or_null(j, "usd");
    const json_t *wall = obj_or_null(j, "wallclock_ms");

    memset(b, 0, sizeof(*b));
    b->has_tokens = tok != NULL;
    b->tokens_limit = int_of(tok, "limit");
    b->tokens_used = int_of(tok, "used");
    b->tokens_reserved = int_of(tok, "reserved");
    b->tokens_left = int_of(tok, "left");
    b->has_usd = usd != NULL;
    b->usd_limit = num_of(usd, "limit");
    b->usd_used = num_of(usd, "used");
    b->usd_reserved = num_of(usd, "reserved");
    b->usd_left = num_of(usd, "left");
    b->has_wallclock = wall != NULL;
    b->wallclock_limit_ms = int_of(wall, "limit");
    b->wallclock_used_ms = int_of(wall, "used");
    b->wallclock_left_ms = int_of(wall, "left");
}

/* The view's facts from lil_loop_facts' document (v->facts). */
static void from_facts(struct loop_view *v)
{
    const json_t *f = v->facts;
    const json_t *wake = json_object_get(f, "wake_at_ms");

    v->status = str_of(f, "status", "?");
    v->reason = json_string_value(json_object_get(f, "reason"));
    v->iterations = int_of(f, "iteration");
    v->state = json_object_get(f, "state");
    v->ended = json_is_true(json_object_get(f, "ended"));
    v->wake_at_ms = json_is_integer(wake) ? (int64_t)json_integer_value(wake) : 0;
    v->stop = obj_or_null(f, "stop");
    v->paused = obj_or_null(f, "paused");
    v->uncertain = obj_or_null(f, "uncertain");
    meters_from(&v->meters, f);
    budget_from(&v->budget, f);
    v->usage.tokens = v->meters.tokens;
    v->usage.usd = v->meters.usd;
}

/* A journal the runner's fold refuses: shown, as damaged, with its
 * message. */
static lil_status set_damaged(struct walk *w, const char *msg)
{
    struct loop_view *v = w->v;

    v->damage = strdup(msg ? msg : "the journal holds records the runner never writes");
    if (!v->damage)
        return LIL_E_NOMEM;
    v->damaged = true;
    v->status = "damaged";
    v->reason = v->damage;
    v->iterations = w->snapshots;
    v->state = json_object_get(v->start, "baseState");
    return LIL_OK;
}

static lil_status load_facts(lil_run *run, struct walk *w)
{
    lil_bytes b = {NULL, 0};
    lil_status rc = lil_loop_facts(run, &b);

    if (rc == LIL_E_NOTFOUND) { /* no start record the runner would take */
        json_decref(w->v->start);
        w->v->start = NULL;
        w->v->is_loop = false;
        return LIL_OK;
    }
    if (rc == LIL_E_CORRUPT)
        return set_damaged(w, lil_run_errmsg(run));
    if (rc != LIL_OK)
        return rc;
    w->v->facts = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    if (!json_is_object(w->v->facts))
        return LIL_E_NOMEM;
    from_facts(w->v);
    return LIL_OK;
}

/* An intent without an outcome: in flight while the run is held. */
static void settle_slots(struct walk *w, const lil_run_info *info)
{
    const char *open = info->holder_pid != 0 ? "running" : "uncertain";

    for (size_t i = 0; i < w->v->niters; i++)
        for (size_t j = 0; j < w->v->iters[i].n; j++)
            if (strcmp(w->v->iters[i].slots[j].status, "started") == 0)
                w->v->iters[i].slots[j].status = open;
}

/* No slots wanted (`ls`): the run's facts (lil_run_facts) hold all of it --
 * the runner's facts, its start's fields, the usage its calls reported --
 * without reading its events.  *done false: read the events instead (a
 * damaged loop run). */
static lil_status load_from_facts(lil_store *st, lil_run *run, struct loop_view *v,
                                  bool *done)
{
    static const char *const keys[][2] = {{"loopId", "loop"},
                                          {"spec", "spec_sha256"},
                                          {"specPath", "spec_path"},
                                          {"inputs", "inputs"},
                                          {"startedAt", "started_at_ms"}};
    lil_bytes b = {NULL, 0};
    lil_status rc = lil_run_facts(st, lil_run_id(run), &b);
    json_t *f = rc == LIL_OK ? json_loadb(b.data, b.len, 0, NULL) : NULL;
    json_t *lf = json_object_get(f, "loop"), *u = json_object_get(f, "usage");

    lil_free(b.data);
    *done = rc != LIL_OK || strcmp(str_of(f, "kind", ""), "loop") != 0 ||
            json_is_object(lf);
    if (rc == LIL_OK && !f)
        rc = LIL_E_NOMEM;
    if (rc == LIL_OK && json_is_object(lf) && !(v->start = json_object()))
        rc = LIL_E_NOMEM;
    if (rc == LIL_OK && json_is_object(lf)) {
        for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
            if (json_object_get(lf, keys[i][1]))
                json_object_set(v->start, keys[i][0], json_object_get(lf, keys[i][1]));
        v->is_loop = true;
        v->facts = json_incref(lf);
        from_facts(v);
        v->usage.calls = int_of(u, "calls");
        v->usage.estimated = int_of(u, "estimated_calls");
        v->usage.at_reservation = int_of(u, "at_reservation_calls");
        v->usage.unpriced = int_of(u, "unpriced_calls");
        v->usage.reported_tokens = int_of(u, "tokens");
        v->usage.reported_usd = num_of(u, "usd");
    }
    json_decref(f);
    return rc;
}

/* The slots of the last w->tail iterations of a loop run whose facts are
 * read: only the events of those iterations' slots, snapshots and
 * reservations. */
static lil_status load_tail(lil_store *st, lil_run *run, const lil_run_info *info,
                            struct walk *w)
{
    struct cli_events_query q = {
        "effect_start,effect,recovery,sleep,approval,iteration_end,reserve", 0, w->tail,
        0};
    lil_status rc;

    w->usage_known = true;
    rc = cli_run_events_query(st, lil_run_id(run), info->records, &q, each_event, w);
    w->v->iters_omitted += q.iterations_before;
    return rc;
}

lil_status loop_view_load(lil_store *st, lil_run *run, const lil_run_info *info,
                          size_t tail, struct loop_view *v)
{
    struct walk w;
    bool done = false;
    lil_status rc;

    memset(v, 0, sizeof(*v));
    memset(&w, 0, sizeof(w));
    w.v = v;
    w.tail = tail;
    rc = load_from_facts(st, run, v, &done);
    if (rc == LIL_OK && done && v->is_loop && tail > 0)
        rc = load_tail(st, run, info, &w);
    if (rc == LIL_OK && !done) /* a damaged loop run: its events, all of them */
        rc = cli_run_events(st, lil_run_id(run), info->records, each_event, &w);
    if (w.nomem)
        rc = LIL_E_NOMEM;
    if (rc == LIL_OK && !done && v->is_loop)
        rc = load_facts(run, &w);
    if (rc == LIL_OK && v->is_loop)
        settle_slots(&w, info);
    if (rc != LIL_OK)
        loop_view_free(v);
    return rc;
}

void loop_view_free(struct loop_view *v)
{
    json_decref(v->start);
    json_decref(v->facts);
    free(v->damage);
    for (size_t i = 0; i < v->niters; i++)
        iter_release(&v->iters[i]);
    free(v->iters);
    memset(v, 0, sizeof(*v));
}

/* ---- helpers for the printers ------------------------------------------------ */

void loop_view_uncertain(const struct loop_view *v, char *kind, size_t kind_cap,
                         const char **identity)
{
    snprintf(kind, kind_cap, "%s", str_of(v->uncertain, "kind", "?"));
    *identity = str_of(v->uncertain, "identity", "");
}

void loop_view_fmt_json(const json_t *v, size_t max, char *buf, size_t cap)
{
    struct line l = {"", 0};

    put_json(&l, v, max);
    cli_fmt_printable(l.buf, l.len, l.len, buf, cap);
}

const char *loop_view_str(const json_t *o, const char *key, const char *dflt)
{
    return str_of(o, key, dflt);
}

const char *loop_view_spec_path(const struct loop_view *v)
{
    return str_of(v->start, "specPath", "SPEC");
}

/* ---- JSON -------------------------------------------------------------------- */

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *incref_or_null(json_t *v)
{
    return v ? json_incref(v) : json_null();
}

static json_t *meters_json(const struct loop_view *v)
{
    const struct loop_view_meters *m = &v->meters;
    json_t *o;

    if (v->damaged)
        return json_null();
    o = json_object();
    cli_json_set(o, "iteration_base", json_integer(m->iteration_base));
    cli_json_set(o, "tokens", json_integer(m->tokens));
    cli_json_set(o, "tokens_base", json_integer(m->tokens_base));
    cli_json_set(o, "tokens_reserved", json_integer(m->tokens_reserved));
    cli_json_set(o, "usd", json_real(m->usd));
    cli_json_set(o, "usd_base", json_real(m->usd_base));
    cli_json_set(o, "usd_reserved", json_real(m->usd_reserved));
    cli_json_set(o, "repeats", json_integer(m->repeats));
    cli_json_set(o, "wallclock_base_ms", json_integer(m->wallclock_base_ms));
    cli_json_set(o, "elapsed_ms", json_integer(m->elapsed_ms));
    cli_json_set(o, "caps", incref_or_null(json_object_get(v->facts, "caps")));
    cli_json_set(o, "runner", incref_or_null(json_object_get(v->facts, "meters")));
    cli_json_set(o, "reservations",
                 incref_or_null(json_object_get(v->facts, "reservations")));
    return o;
}

static json_t *stop_json(const struct loop_view *v)
{
    if (!v->stop)
        return json_null();
    return json_pack("{s:s, s:s, s:I}", "actor", str_of(v->stop, "actor", ""), "reason",
                     str_of(v->stop, "reason", ""), "requested_at_ms",
                     (json_int_t)int_of(v->stop, "requestedAt"));
}

static json_t *reserved_json(const struct loop_view_slot *s)
{
    json_t *o = json_object();

    cli_json_set(o, "attempts", json_integer(s->attempts));
    cli_json_set(o, "tokens", json_integer(s->reserved_tokens));
    cli_json_set(o, "usd", json_real(s->reserved_usd));
    cli_json_set(o, "unpriced", json_boolean(s->reserved_rest));
    return o;
}

static json_t *slot_json(const struct loop_view_slot *s)
{
    json_t *o = json_object();

    cli_json_set(o, "slot", json_string(s->name));
    cli_json_set(o, "seq", json_integer(s->seq));
    cli_json_set(o, "kind", str_or_null(s->kind));
    cli_json_set(o, "step", str_or_null(s->step));
    cli_json_set(o, "status", json_string(s->status));
    cli_json_set(o, "dur_us", json_integer(s->dur_us));
    if (s->note)
        cli_json_set(o, "note", json_string(s->note));
    if (s->has_usage) {
        cli_json_set(o, "tokens", json_integer(s->tokens));
        cli_json_set(o, "usd", s->has_usd ? json_real(s->usd) : json_null());
        cli_json_set(o, "estimated", json_boolean(s->estimated));
        cli_json_set(o, "model", str_or_null(s->model));
        cli_json_set(o, "overran", json_boolean(s->overran));
        cli_json_set(o, "at_reservation", json_boolean(s->at_reservation));
        cli_json_set(o, "unreported", str_or_null(s->unreported));
    }
    if (s->attempts)
        cli_json_set(o, "reserved", reserved_json(s));
    if (s->wake_at_ms)
        cli_json_set(o, "wake_at_ms", json_integer(s->wake_at_ms));
    return o;
}

static json_t *history_json(const struct loop_view *v)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < v->niters; i++) {
        const struct loop_view_iter *it = &v->iters[i];
        json_t *o = json_object(), *slots = json_array();
        struct loop_view_usage u;

        for (size_t j = 0; j < it->n; j++)
            json_array_append_new(slots, slot_json(&it->slots[j]));
        loop_view_iter_usage(it, &u);
        cli_json_set(o, "iteration", json_integer(it->iteration));
        cli_json_set(o, "committed",
                     json_boolean(it->iteration >= 0 && it->iteration < v->iterations));
        cli_json_set(o, "usage", u.calls ? loop_view_usage_json(&u) : json_null());
        cli_json_set(o, "effects", slots);
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *start_fields(const struct loop_view *v)
{
    json_t *o = json_object();
    const json_t *s = v->start;

    cli_json_set(o, "id", json_string(str_of(s, "loopId", "")));
    cli_json_set(o, "spec_path",
                 str_or_null(json_string_value(json_object_get(s, "specPath"))));
    cli_json_set(o, "spec_sha256",
                 str_or_null(json_string_value(json_object_get(s, "spec"))));
    cli_json_set(o, "inputs",
                 json_object_get(s, "inputs")
                     ? json_incref(json_object_get(s, "inputs"))
                     : json_object());
    cli_json_set(o, "started_at_ms", json_integer(int_of(s, "startedAt")));
    return o;
}

json_t *loop_view_json(const struct loop_view *v)
{
    json_t *o = start_fields(v);

    cli_json_set(o, "status", json_string(v->status));
    cli_json_set(o, "reason", str_or_null(v->reason));
    cli_json_set(o, "iterations", json_integer(v->iterations));
    cli_json_set(o, "state", v->state ? incref_or_null(v->state) : json_object());
    cli_json_set(o, "meters", meters_json(v));
    cli_json_set(o, "usage", loop_view_usage_json(&v->usage));
    cli_json_set(o, "counted_at_reservations", loop_view_reserved_json(&v->usage));
    cli_json_set(o, "budget", loop_view_budget_json(&v->budget));
    cli_json_set(o, "wake_at_ms",
                 v->wake_at_ms ? json_integer(v->wake_at_ms) : json_null());
    cli_json_set(o, "uncertain", incref_or_null(v->uncertain));
    cli_json_set(o, "waiting_for", incref_or_null(v->paused));
    cli_json_set(o, "stop", stop_json(v));
    cli_json_set(o, "history_omitted", json_integer(v->iters_omitted));
    cli_json_set(o, "history", history_json(v));
    return o;
}

/* ---- usage and budgets ------------------------------------------------------- */

void loop_view_iter_usage(const struct loop_view_iter *it, struct loop_view_usage *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < it->n; i++) {
        const struct loop_view_slot *s = &it->slots[i];

        if (!s->has_usage)
            continue;
        out->calls++;
        out->estimated += s->estimated && !s->at_reservation;
        out->unpriced += !s->has_usd;
        if (s->at_reservation) { /* the meters count its reservation */
            out->at_reservation++;
            add_count(&out->tokens, s->last_reserved_tokens);
            out->usd +=
                s->reserved_rest ? (s->has_usd ? s->usd : 0) : s->last_reserved_usd;
            continue;
        }
        add_count(&out->tokens, s->tokens);
        out->usd += s->has_usd ? s->usd : 0;
    }
    out->reported_tokens = out->tokens;
    out->reported_usd = out->usd;
}

/* "$0.2500"; six decimals under a cent, so that a small call is not $0. */
static void put_usd(struct line *l, double usd)
{
    put(l, usd > 0 && usd < 0.01 ? "$%.6f" : "$%.4f", usd);
}

/* "272 tokens, $0.1000" ("all usd left" for a call without a price). */
static void put_reserve(struct line *l, int64_t tokens, double usd, bool rest)
{
    put(l, "%" PRId64 " tokens", tokens);
    if (rest) {
        put(l, ", all usd left");
    } else if (usd > 0) {
        put(l, ", ");
        put_usd(l, usd);
    }
}

/* A call without usage: reserved while in flight or uncertain, counted at
 * its reservation once over (failed, aborted, assumed done). */
static void put_no_usage(struct line *l, const struct loop_view_slot *s)
{
    bool open =
        strcmp(s->status, "uncertain") == 0 || strcmp(s->status, "running") == 0;

    put(l, open ? "reserved " : "counted at its reservation: ");
    put_reserve(l, s->reserved_tokens, s->reserved_usd, s->reserved_rest);
    if (s->attempts > 1)
        put(l, " (%" PRId64 " attempts)", s->attempts);
}

/* The attempts before the one that reported: each counted at its
 * reservation. */
static void put_earlier(struct line *l, const struct loop_view_slot *s)
{
    int64_t n = s->attempts - 1;

    put(l, "; %" PRId64 " earlier attempt%s counted at %s reservation%s: ", n,
        n == 1 ? "" : "s", n == 1 ? "its" : "their", n == 1 ? "" : "s");
    put_reserve(l, s->reserved_tokens - s->last_reserved_tokens,
                s->reserved_usd - s->last_reserved_usd, s->reserved_rest);
}

/* A call whose usage was missing or invalid: counted at its reservation,
 * and why. */
static void put_unbelieved(struct line *l, const struct loop_view_slot *s)
{
    put(l, "counted at its reservation: ");
    if (s->reserved_rest) /* an unpriced model: its usd stays the estimate's */
        put_reserve(l, s->last_reserved_tokens, s->has_usd ? s->usd : 0, false);
    else
        put_reserve(l, s->last_reserved_tokens, s->last_reserved_usd, false);
    if (s->model)
        put(l, " (%s)", s->model);
    put(l, ", usage not counted: %s", s->unreported ? s->unreported : "not reported");
    if (s->attempts > 1)
        put_earlier(l, s);
}

void loop_view_fmt_call(const struct loop_view_slot *s, char *buf, size_t cap)
{
    struct line l = {"", 0};

    if (!s->has_usage) {
        if (s->attempts)
            put_no_usage(&l, s);
        cli_fmt_printable(l.buf, l.len, l.len, buf, cap);
        return;
    }
    if (s->at_reservation) {
        put_unbelieved(&l, s);
        cli_fmt_printable(l.buf, l.len, l.len, buf, cap);
        return;
    }
    put(&l, "%s%" PRId64 " tokens%s, ", s->estimated ? "~" : "", s->tokens,
        s->estimated ? " (estimated)" : "");
    if (s->has_usd)
        put_usd(&l, s->usd);
    else
        put(&l, "unpriced");
    if (s->model)
        put(&l, " (%s)", s->model);
    if (s->attempts > 1)
        put_earlier(&l, s);
    if (s->overran) {
        put(&l, "; OVERRAN its reservation of ");
        put_reserve(&l, s->last_reserved_tokens, s->last_reserved_usd, false);
    }
    cli_fmt_printable(l.buf, l.len, l.len, buf, cap);
}

void loop_view_fmt_usage(const struct loop_view_usage *u, char *buf, size_t cap)
{
    struct line l = {"", 0};

    put(&l, "%s%" PRId64 " tokens%s, ", u->estimated ? "~" : "", u->tokens,
        !u->estimated              ? ""
        : u->estimated == u->calls ? " (estimated)"
                                   : " (estimated in part)");
    if (u->unpriced == u->calls && u->calls > 0) {
        put(&l, "unpriced");
    } else {
        put_usd(&l, u->usd);
        if (u->unpriced)
            put(&l, " + unpriced (%" PRId64 " of %" PRId64 " calls)", u->unpriced,
                u->calls);
    }
    put(&l, " in %" PRId64 " call%s", u->calls, u->calls == 1 ? "" : "s");
    if (loop_view_reserved_tokens(u) > 0 || loop_view_reserved_usd(u) > 0) {
        put(&l, " (%" PRId64 " tokens, ", loop_view_reserved_tokens(u));
        put_usd(&l, loop_view_reserved_usd(u));
        put(&l, " of it counted at reservations)");
    }
    cli_fmt_printable(l.buf, l.len, l.len, buf, cap);
}

void loop_view_fmt_usage_compact(const struct loop_view_usage *u, char *buf, size_t cap)
{
    struct line l = {"", 0};

    if (u->calls == 0 && u->tokens == 0 && u->usd == 0) {
        snprintf(buf, cap, "-");
        return;
    }
    put(&l, "%s%" PRId64 " tok ", u->estimated ? "~" : "", u->tokens);
    if (u->calls > 0 && u->unpriced == u->calls)
        put(&l, "$?");
    else
        put_usd(&l, u->usd);
    if (u->unpriced && u->unpriced < u->calls)
        put(&l, "+?");
    snprintf(buf, cap, "%s", l.buf);
}

int64_t loop_view_reserved_tokens(const struct loop_view_usage *u)
{
    return u->tokens > u->reported_tokens ? u->tokens - u->reported_tokens : 0;
}

double loop_view_reserved_usd(const struct loop_view_usage *u)
{
    /* a difference of sums made in another order: under a millionth of a
     * cent it is rounding, not a reservation */
    return u->usd - u->reported_usd > 1e-8 ? u->usd - u->reported_usd : 0.0;
}

json_t *loop_view_reserved_json(const struct loop_view_usage *u)
{
    json_t *o = json_object();

    cli_json_set(o, "tokens", json_integer(loop_view_reserved_tokens(u)));
    cli_json_set(o, "usd", json_real(loop_view_reserved_usd(u)));
    return o;
}

json_t *loop_view_usage_json(const struct loop_view_usage *u)
{
    json_t *o = json_object();

    cli_json_set(o, "calls", json_integer(u->calls));
    cli_json_set(o, "tokens", json_integer(u->tokens));
    cli_json_set(o, "usd", json_real(u->usd));
    cli_json_set(o, "estimated", json_boolean(u->estimated > 0));
    cli_json_set(o, "estimated_calls", json_integer(u->estimated));
    cli_json_set(o, "unpriced_calls", json_integer(u->unpriced));
    cli_json_set(o, "at_reservation_calls", json_integer(u->at_reservation));
    return o;
}

/* {"limit", "used", "reserved" (when not NULL), "left"}, or null when the
 * budget is not set (the values are released). */
static json_t *budget_item(bool set, json_t *limit, json_t *used, json_t *reserved,
                           json_t *left)
{
    json_t *o;

    if (!set) {
        json_decref(limit);
        json_decref(used);
        json_decref(reserved);
        json_decref(left);
        return json_null();
    }
    o = json_object();
    cli_json_set(o, "limit", limit);
    cli_json_set(o, "used", used);
    if (reserved)
        cli_json_set(o, "reserved", reserved);
    cli_json_set(o, "left", left);
    return o;
}

json_t *loop_view_budget_json(const struct loop_view_budget *b)
{
    json_t *o = json_object();

    cli_json_set(o, "tokens",
                 budget_item(b->has_tokens, json_integer(b->tokens_limit),
                             json_integer(b->tokens_used),
                             json_integer(b->tokens_reserved),
                             json_integer(b->tokens_left)));
    cli_json_set(o, "usd",
                 budget_item(b->has_usd, json_real(b->usd_limit),
                             json_real(b->usd_used), json_real(b->usd_reserved),
                             json_real(b->usd_left)));
    cli_json_set(o, "wallclock_ms",
                 budget_item(b->has_wallclock, json_integer(b->wallclock_limit_ms),
                             json_integer(b->wallclock_used_ms), NULL,
                             json_integer(b->wallclock_left_ms)));
    return o;
}
