/*
 * loop_view.c -- what the journal of a loop run says (see loop_view.h):
 * record names, one-line summaries, and the fold of a whole run.
 *
 * The fold keeps, besides the facts the status needs, the bytes of the
 * last snapshot only (parsed once, at the end), so that `lil ls` reads a
 * long run without parsing each snapshot's state; it parses an effect's
 * outcome only when it keeps slots (inspect) or when the outcome mentions
 * "usage" (the meters).
 */
#include "loop_view.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define NS_PER_MS INT64_C(1000000)

/* ---- names -------------------------------------------------------------------- */

/* n decimal digits (1 to 18, so that the value fits an int64_t) at s. */
static bool digits(const char *s, size_t n, int64_t *out)
{
    int64_t v = 0;

    if (n == 0 || n > 18)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

static bool key_is(const lil_record *rec, const char *s)
{
    return rec->key_len == strlen(s) && memcmp(rec->key, s, rec->key_len) == 0;
}

/* "I.S" or "exit.S" */
static bool slot_name(const char *k, size_t n, struct loop_view_name *out)
{
    const char *dot = memchr(k, '.', n);
    size_t a = dot ? (size_t)(dot - k) : 0;

    if (!dot || !digits(dot + 1, n - a - 1, &out->seq))
        return false;
    if (a == 4 && memcmp(k, "exit", 4) == 0)
        out->iteration = -1;
    else if (!digits(k, a, &out->iteration))
        return false;
    out->kind = LOOP_VIEW_EFFECT;
    return true;
}

/* "I.snap" */
static bool snap_name(const char *k, size_t n, struct loop_view_name *out)
{
    if (n <= 5 || memcmp(k + n - 5, ".snap", 5) != 0 ||
        !digits(k, n - 5, &out->iteration))
        return false;
    out->kind = LOOP_VIEW_SNAPSHOT;
    return true;
}

/* "<kind>.N", kind of [a-z_] */
static bool control_name(const char *k, size_t n, struct loop_view_name *out)
{
    const char *dot = memchr(k, '.', n);
    size_t a = dot ? (size_t)(dot - k) : 0;
    int64_t nth;

    if (a == 0 || a >= sizeof(out->control) || !digits(dot + 1, n - a - 1, &nth))
        return false;
    for (size_t i = 0; i < a; i++)
        if (!((k[i] >= 'a' && k[i] <= 'z') || k[i] == '_'))
            return false;
    memcpy(out->control, k, a);
    out->control[a] = '\0';
    out->n = (uint64_t)nth;
    out->kind = LOOP_VIEW_CONTROL;
    return true;
}

bool loop_view_name(const lil_record *rec, struct loop_view_name *out)
{
    bool slot_type = rec->type == LIL_REC_STEP || rec->type == LIL_REC_STEP_FAILED ||
                     rec->type == LIL_REC_INTENT || rec->type == LIL_REC_RESOLVE;

    memset(out, 0, sizeof(*out));
    if (slot_type && slot_name(rec->key, rec->key_len, out))
        return true;
    memset(out, 0, sizeof(*out));
    if (rec->type != LIL_REC_STEP)
        return false;
    if (key_is(rec, "loop")) {
        out->kind = LOOP_VIEW_START;
        return true;
    }
    if (snap_name(rec->key, rec->key_len, out) ||
        control_name(rec->key, rec->key_len, out))
        return true;
    memset(out, 0, sizeof(*out));
    return false;
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

bool loop_view_is_start(const lil_record *rec)
{
    json_t *v;
    bool yes;

    if (rec->type != LIL_REC_STEP || !key_is(rec, "loop"))
        return false;
    v = payload_obj(rec);
    yes = json_is_string(json_object_get(v, "loopId"));
    json_decref(v);
    return yes;
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

/* ---- summaries ------------------------------------------------------------------ */

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

static void put_time_ms(struct line *l, int64_t ms)
{
    char iso[40];

    cli_fmt_iso(ms * NS_PER_MS, false, iso, sizeof(iso));
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
    if (cli_intent_note(rec, &note, &len))
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

/* ---- the fold ----------------------------------------------------------------- */

struct walk {
    struct loop_view *v;
    const lil_run_info *info;
    size_t tail;
    char *unc_name; /* the first uncertain effect, or NULL */
    char *snap;     /* the last snapshot's payload */
    size_t snap_len;
    int64_t after_tokens; /* usage journaled after that snapshot */
    double after_usd;
    json_t *end;        /* run-done payload */
    char *failed;       /* run-failed reason */
    char *last_failure; /* the last failed slot's reason (an abort) */
    json_t *parked;
    int64_t pause_it, pause_seq, parked_it;
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

/* Replace *dst with a copy of the payload's bytes (NUL added). */
static void keep_text(struct walk *w, char **dst, const lil_record *rec)
{
    char *s = dup_bytes(rec->payload, rec->payload_len);

    if (!s) {
        w->nomem = true;
        return;
    }
    free(*dst);
    *dst = s;
}

static void set_json(json_t **dst, json_t *v)
{
    json_decref(*dst);
    *dst = v;
}

/* ---- the slots of the last iterations ------------------------------------------- */

static void iter_release(struct loop_view_iter *it)
{
    for (size_t i = 0; i < it->n; i++) {
        free(it->slots[i].kind);
        free(it->slots[i].step);
        free(it->slots[i].model);
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
                                       const lil_record *rec, int64_t seq)
{
    struct loop_view_slot *s;

    for (size_t i = 0; i < it->n; i++)
        if (key_is(rec, it->slots[i].name))
            return &it->slots[i];
    if (rec->key_len >= LOOP_VIEW_SLOT_MAX)
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
    memcpy(s->name, rec->key, rec->key_len);
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
static void slot_intent(struct walk *w, struct loop_view_slot *s, const lil_record *rec)
{
    const char *note, *sp;
    size_t len;

    s->status = "started";
    if (s->kind || !cli_intent_note(rec, &note, &len))
        return;
    sp = memchr(note, ' ', len);
    set_str(w, &s->kind, note, sp ? (size_t)(sp - note) : len);
}

/* A slot's outcome (parsed payload v). */
static void slot_outcome(struct walk *w, struct loop_view_slot *s, const json_t *v)
{
    const char *kind = json_string_value(json_object_get(v, "kind"));
    const char *step = json_string_value(json_object_get(v, "step"));
    const json_t *usage = json_object_get(v, "usage");

    if (kind)
        set_str(w, &s->kind, kind, strlen(kind));
    if (step)
        set_str(w, &s->step, step, strlen(step));
    if (json_is_object(usage)) {
        const char *model = json_string_value(json_object_get(usage, "model"));

        s->has_usage = true;
        s->tokens = int_of(usage, "tokens");
        s->has_usd = json_is_number(json_object_get(usage, "usd"));
        s->usd = json_number_value(json_object_get(usage, "usd"));
        s->estimated = json_is_true(json_object_get(usage, "estimated"));
        if (model)
            set_str(w, &s->model, model, strlen(model));
    }
    s->wake_at_ms = int_of(v, "wakeAt");
    if (kind && strcmp(kind, "breakpoint") == 0)
        s->status = "approved";
    else if (json_is_true(json_object_get(v, "recovered")))
        s->status = "assumed-done";
    else
        s->status = "done";
}

static const char *resolved_status(const json_t *v)
{
    const char *action = json_string_value(json_object_get(v, "action"));

    if (action && strcmp(action, "abort") == 0)
        return "aborted";
    if (action && strcmp(action, "assume-done") == 0)
        return "assumed-done";
    return "retry";
}

/* Record rec (parsed payload v, or NULL) in the history. */
static void history_slot(struct walk *w, const lil_record *rec,
                         const struct loop_view_name *nm, const json_t *v)
{
    struct loop_view_iter *it = iter_for(w, nm->iteration);
    struct loop_view_slot *s = it ? slot_for(w, it, rec, nm->seq) : NULL;

    if (!s)
        return;
    if (rec->type == LIL_REC_INTENT) {
        slot_intent(w, s, rec);
        return;
    }
    if (rec->type == LIL_REC_RESOLVE) {
        s->status = resolved_status(v);
        return;
    }
    s->dur_us = rec->dur_us;
    if (rec->type == LIL_REC_STEP_FAILED) {
        if (strcmp(s->status, "aborted") != 0)
            s->status = "failed";
        return;
    }
    if (v)
        slot_outcome(w, s, v);
}

/* ---- records -----------------------------------------------------------------------
 */

static void on_slot(struct walk *w, const lil_record *rec,
                    const struct loop_view_name *nm)
{
    bool parsed = rec->type == LIL_REC_STEP || rec->type == LIL_REC_RESOLVE;
    bool want = w->tail > 0 || (rec->type == LIL_REC_STEP &&
                                memmem(rec->payload, rec->payload_len, "\"usage\"", 7));
    json_t *v = want && parsed ? payload_obj(rec) : NULL;
    const json_t *usage = json_object_get(v, "usage");

    if (rec->type == LIL_REC_STEP_FAILED)
        keep_text(w, &w->last_failure, rec);
    if (rec->type == LIL_REC_STEP && json_is_object(usage)) {
        w->after_tokens += int_of(usage, "tokens");
        w->after_usd += json_number_value(json_object_get(usage, "usd"));
        w->v->usage.calls++;
        w->v->usage.estimated += json_is_true(json_object_get(usage, "estimated"));
        w->v->usage.unpriced += !json_is_number(json_object_get(usage, "usd"));
    }
    if (rec->type == LIL_REC_STEP && w->v->pause && nm->iteration == w->pause_it &&
        nm->seq == w->pause_seq)
        set_json(&w->v->pause, NULL); /* approved */
    if (w->tail > 0)
        history_slot(w, rec, nm, v);
    json_decref(v);
}

static void on_snapshot(struct walk *w, const lil_record *rec,
                        const struct loop_view_name *nm)
{
    struct loop_view *v = w->v;
    char *copy = dup_bytes(rec->payload, rec->payload_len);

    if (!copy) {
        w->nomem = true;
        return;
    }
    free(w->snap);
    w->snap = copy;
    w->snap_len = rec->payload_len;
    w->after_tokens = 0;
    w->after_usd = 0;
    if (nm->iteration + 1 > v->iterations)
        v->iterations = nm->iteration + 1;
    if (v->pause && w->pause_it < v->iterations)
        set_json(&v->pause, NULL);
    if (w->parked && w->parked_it < v->iterations)
        set_json(&w->parked, NULL);
    if (w->tail > 0)
        (void)iter_for(w, nm->iteration);
}

static void on_control(struct walk *w, const lil_record *rec,
                       const struct loop_view_name *nm)
{
    struct loop_view *v = w->v;
    json_t *p = payload_obj(rec);
    const char *k = nm->control;

    if (!p)
        return;
    if (strcmp(k, "stop_requested") == 0 &&
        json_is_object(json_object_get(p, "request")))
        set_json(&v->stop, json_incref(json_object_get(p, "request")));
    else if (strcmp(k, "stop_cleared") == 0)
        set_json(&v->stop, NULL);
    else if (strcmp(k, "pause") == 0) {
        w->pause_it = int_of(p, "iteration");
        w->pause_seq = int_of(p, "seq");
        set_json(&v->pause, json_incref(p));
    } else if (strcmp(k, "cap") == 0 &&
               strcmp(str_of(p, "action", ""), "breakpoint") == 0)
        set_json(&v->cap, json_incref(p));
    else if (strcmp(k, "cap_cleared") == 0)
        set_json(&v->cap, NULL);
    else if (strcmp(k, "parked") == 0) {
        w->parked_it = int_of(p, "iteration");
        set_json(&w->parked, json_incref(p));
    }
    json_decref(p);
}

static void on_start(struct walk *w, const lil_record *rec)
{
    json_t *p = payload_obj(rec);

    if (!json_is_string(json_object_get(p, "loopId"))) {
        json_decref(p);
        return;
    }
    w->v->is_loop = true;
    w->v->start = p;
}

static int each_record(void *ud, const lil_record *rec)
{
    struct walk *w = ud;
    struct loop_view_name nm;

    if (!w->v->is_loop) {
        if (rec->type == LIL_REC_STEP && key_is(rec, "loop"))
            on_start(w, rec);
        return w->nomem;
    }
    if (rec->type == LIL_REC_RUN_DONE)
        set_json(&w->end, payload_obj(rec));
    else if (rec->type == LIL_REC_RUN_FAILED)
        keep_text(w, &w->failed, rec);
    else if (!loop_view_name(rec, &nm))
        return 0;
    else if (nm.kind == LOOP_VIEW_EFFECT)
        on_slot(w, rec, &nm);
    else if (nm.kind == LOOP_VIEW_SNAPSHOT)
        on_snapshot(w, rec, &nm);
    else if (nm.kind == LOOP_VIEW_CONTROL)
        on_control(w, rec, &nm);
    return w->nomem;
}

/* ---- after the walk
 * ------------------------------------------------------------------ */

static void meters_from(struct loop_view_meters *m, const json_t *j)
{
    m->iteration_base = int_of(j, "iterationBase");
    m->tokens = int_of(j, "tokens");
    m->tokens_base = int_of(j, "tokensBase");
    m->usd = json_number_value(json_object_get(j, "usd"));
    m->usd_base = json_number_value(json_object_get(j, "usdBase"));
    m->repeats = int_of(j, "repeats");
    m->wallclock_base_ms = int_of(j, "wallclockBase");
}

/* The committed state and the meters: the last snapshot's, else the
 * start's. */
static void settle_state(struct walk *w)
{
    struct loop_view *v = w->v;
    json_t *snap = w->snap ? json_loadb(w->snap, w->snap_len, 0, NULL) : NULL;
    json_t *meters = json_object_get(snap, "meters");

    if (json_is_object(json_object_get(snap, "state")) && json_is_object(meters)) {
        v->state = json_incref(json_object_get(snap, "state"));
        meters_from(&v->meters, meters);
    } else {
        v->state = json_incref(json_object_get(v->start, "baseState"));
        v->meters.wallclock_base_ms = int_of(v->start, "startedAt");
    }
    json_decref(snap);
    v->meters.tokens += w->after_tokens;
    v->meters.usd += w->after_usd;
    v->usage.tokens = v->meters.tokens;
    v->usage.usd = v->meters.usd;
}

static void set_reason(struct walk *w, const char *s)
{
    if (s)
        set_str(w, &w->v->reason, s, strlen(s));
}

/* How the run ended, if it did: completed, failed or stopped for good. */
static bool settle_end(struct walk *w)
{
    struct loop_view *v = w->v;

    if (w->end) {
        v->status = strcmp(str_of(w->end, "status", ""), "stopped") == 0 ? "stopped"
                                                                         : "completed";
        set_reason(w, json_string_value(json_object_get(w->end, "reason")));
    } else if (w->failed || w->info->state == LIL_RUN_FAILED) {
        v->status = "failed";
        set_reason(w, w->failed);
    } else if (w->info->state == LIL_RUN_STOPPED) {
        v->status = "stopped"; /* an abort recovery */
        set_reason(w, w->last_failure ? w->last_failure : "aborted");
    } else {
        return false;
    }
    v->ended = true;
    set_json(&v->pause, NULL);
    set_json(&v->cap, NULL);
    return true;
}

static void uncertain_reason(struct walk *w, bool held)
{
    char kind[32], reason[4608];
    const char *identity;

    loop_view_uncertain(w->v, kind, sizeof(kind), &identity);
    if (held)
        snprintf(reason, sizeof(reason), "effect %s (%s) is running",
                 w->unc_name ? w->unc_name : "?", kind);
    else
        snprintf(
            reason, sizeof(reason),
            "effect %s (%s) started and its outcome is unknown: decide with `lil "
            "recover %s --retry | --assume-done --result-json JSON | --abort --reason R`",
            w->unc_name ? w->unc_name : "?", kind, loop_view_spec_path(w->v));
    set_reason(w, reason);
}

static void settle_status(struct walk *w)
{
    struct loop_view *v = w->v;
    bool held = w->info->holder_pid != 0;

    if (settle_end(w))
        return;
    if (w->info->state == LIL_RUN_UNCERTAIN) {
        v->status = held ? "running" : "uncertain";
        uncertain_reason(w, held);
    } else if (v->stop) {
        v->status = "stopped";
        set_reason(w, json_string_value(json_object_get(v->stop, "reason")));
    } else if (v->cap) {
        v->status = "paused";
        set_reason(w, json_string_value(json_object_get(v->cap, "reason")));
    } else if (v->pause) {
        v->status = "paused";
        set_reason(w, json_string_value(json_object_get(v->pause, "why")));
    } else {
        v->status = held ? "running" : "waiting";
        if (w->parked)
            v->wake_at_ms = int_of(w->parked, "wakeAt");
    }
}

/* An intent without an outcome: in flight while the run is held. */
static void settle_slots(struct walk *w)
{
    const char *open = w->info->holder_pid != 0 ? "running" : "uncertain";

    for (size_t i = 0; i < w->v->niters; i++)
        for (size_t j = 0; j < w->v->iters[i].n; j++)
            if (strcmp(w->v->iters[i].slots[j].status, "started") == 0)
                w->v->iters[i].slots[j].status = open;
}

/* The note of the uncertain effect's last intent. */
static int find_note(void *ud, const lil_record *rec)
{
    struct walk *w = ud;
    const char *note;
    size_t len;

    if (rec->type == LIL_REC_INTENT && key_is(rec, w->unc_name) &&
        cli_intent_note(rec, &note, &len))
        set_str(w, &w->v->uncertain_note, note, len);
    return w->nomem;
}

static lil_status load_uncertain(lil_run *run, struct walk *w)
{
    const char *name = lil_run_uncertain_at(run, 0);

    if (!name)
        return LIL_OK;
    w->unc_name = strdup(name);
    w->v->uncertain_slot = strdup(name);
    if (!w->unc_name || !w->v->uncertain_slot)
        return LIL_E_NOMEM;
    return lil_run_foreach(run, find_note, w);
}

static void walk_free(struct walk *w)
{
    free(w->unc_name);
    free(w->snap);
    free(w->failed);
    free(w->last_failure);
    json_decref(w->end);
    json_decref(w->parked);
}

lil_status loop_view_load(lil_run *run, const lil_run_info *info, size_t tail,
                          struct loop_view *v)
{
    struct walk w;
    lil_status rc;

    memset(v, 0, sizeof(*v));
    memset(&w, 0, sizeof(w));
    w.v = v;
    w.info = info;
    w.tail = tail;
    rc = lil_run_foreach(run, each_record, &w);
    if (rc == LIL_OK && !w.nomem && v->is_loop && info->state == LIL_RUN_UNCERTAIN)
        rc = load_uncertain(run, &w);
    if (w.nomem)
        rc = LIL_E_NOMEM;
    if (rc == LIL_OK && v->is_loop) {
        v->last_ms = info->last_ns / NS_PER_MS;
        settle_state(&w);
        settle_status(&w);
        settle_slots(&w);
        rc = w.nomem || !v->status ? LIL_E_NOMEM : LIL_OK;
    }
    walk_free(&w);
    if (rc != LIL_OK)
        loop_view_free(v);
    return rc;
}

void loop_view_free(struct loop_view *v)
{
    json_decref(v->start);
    json_decref(v->state);
    json_decref(v->stop);
    json_decref(v->pause);
    json_decref(v->cap);
    free(v->reason);
    free(v->uncertain_slot);
    free(v->uncertain_note);
    for (size_t i = 0; i < v->niters; i++)
        iter_release(&v->iters[i]);
    free(v->iters);
    memset(v, 0, sizeof(*v));
}

/* ---- helpers for the printers
 * ---------------------------------------------------------- */

int64_t loop_view_elapsed_ms(const struct loop_view *v, int64_t now_ms)
{
    return (v->ended ? v->last_ms : now_ms) - v->meters.wallclock_base_ms;
}

void loop_view_uncertain(const struct loop_view *v, char *kind, size_t kind_cap,
                         const char **identity)
{
    const char *note = v->uncertain_note;
    const char *sp = note ? strchr(note, ' ') : NULL;

    if (!note) {
        snprintf(kind, kind_cap, "?");
        *identity = "";
        return;
    }
    snprintf(kind, kind_cap, "%.*s", sp ? (int)(sp - note) : (int)strlen(note), note);
    *identity = sp ? sp + 1 : "";
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

/* ---- JSON
 * -------------------------------------------------------------------------------- */

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *meters_json(const struct loop_view *v, int64_t now_ms)
{
    const struct loop_view_meters *m = &v->meters;
    json_t *o = json_object();

    cli_json_set(o, "iteration_base", json_integer(m->iteration_base));
    cli_json_set(o, "tokens", json_integer(m->tokens));
    cli_json_set(o, "tokens_base", json_integer(m->tokens_base));
    cli_json_set(o, "usd", json_real(m->usd));
    cli_json_set(o, "usd_base", json_real(m->usd_base));
    cli_json_set(o, "repeats", json_integer(m->repeats));
    cli_json_set(o, "wallclock_base_ms", json_integer(m->wallclock_base_ms));
    cli_json_set(o, "elapsed_ms", json_integer(loop_view_elapsed_ms(v, now_ms)));
    cli_json_set(o, "caps",
                 json_object_get(v->start, "caps")
                     ? json_incref(json_object_get(v->start, "caps"))
                     : json_null());
    return o;
}

static json_t *uncertain_json(const struct loop_view *v)
{
    struct loop_view_name nm = {0};
    const char *identity;
    char kind[32];
    json_t *o;

    if (!v->uncertain_slot)
        return json_null();
    o = json_object();
    loop_view_uncertain(v, kind, sizeof(kind), &identity);
    cli_json_set(o, "slot", json_string(v->uncertain_slot));
    if (slot_name(v->uncertain_slot, strlen(v->uncertain_slot), &nm)) {
        cli_json_set(o, "iteration", json_integer(nm.iteration));
        cli_json_set(o, "seq", json_integer(nm.seq));
    }
    cli_json_set(o, "kind", json_string(kind));
    cli_json_set(o, "identity", cli_json_str(identity, strlen(identity)));
    return o;
}

/* The approval the run waits for: a cap, else a breakpoint or gate. */
static json_t *waiting_json(const struct loop_view *v)
{
    const json_t *p = v->pause;
    json_t *o;

    if (v->cap)
        return json_pack("{s:s, s:s, s:s, s:I}", "kind", "cap", "cap",
                         str_of(v->cap, "reason", "?"), "action",
                         str_of(v->cap, "action", "?"), "iteration",
                         (json_int_t)int_of(v->cap, "iteration"));
    if (!p)
        return json_null();
    o = json_pack("{s:s, s:I, s:I, s:s, s:s, s:s}", "kind", "breakpoint", "iteration",
                  (json_int_t)int_of(p, "iteration"), "seq",
                  (json_int_t)int_of(p, "seq"), "step", str_of(p, "step", ""), "ask",
                  str_of(p, "ask", ""), "strategy", str_of(p, "strategy", ""));
    cli_json_set(o, "question", json_string(str_of(p, "why", "")));
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

static json_t *slot_json(const struct loop_view_slot *s)
{
    json_t *o = json_object();

    cli_json_set(o, "slot", json_string(s->name));
    cli_json_set(o, "seq", json_integer(s->seq));
    cli_json_set(o, "kind", str_or_null(s->kind));
    cli_json_set(o, "step", str_or_null(s->step));
    cli_json_set(o, "status", json_string(s->status));
    cli_json_set(o, "dur_us", json_integer(s->dur_us));
    if (s->has_usage) {
        cli_json_set(o, "tokens", json_integer(s->tokens));
        cli_json_set(o, "usd", s->has_usd ? json_real(s->usd) : json_null());
        cli_json_set(o, "estimated", json_boolean(s->estimated));
        cli_json_set(o, "model", str_or_null(s->model));
    }
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

        for (size_t j = 0; j < it->n; j++)
            json_array_append_new(slots, slot_json(&it->slots[j]));
        struct loop_view_usage u;

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

json_t *loop_view_json(const struct loop_view *v, int64_t now_ms)
{
    json_t *o = start_fields(v);
    struct loop_view_budget b;

    cli_json_set(o, "status", json_string(v->status));
    cli_json_set(o, "reason", str_or_null(v->reason));
    cli_json_set(o, "iterations", json_integer(v->iterations));
    cli_json_set(o, "state", v->state ? json_incref(v->state) : json_object());
    cli_json_set(o, "meters", meters_json(v, now_ms));
    cli_json_set(o, "usage", loop_view_usage_json(&v->usage));
    loop_view_budget(v, now_ms, &b);
    cli_json_set(o, "budget", loop_view_budget_json(&b));
    cli_json_set(o, "wake_at_ms",
                 v->wake_at_ms ? json_integer(v->wake_at_ms) : json_null());
    cli_json_set(o, "uncertain", uncertain_json(v));
    cli_json_set(o, "waiting_for", waiting_json(v));
    cli_json_set(o, "stop", stop_json(v));
    cli_json_set(o, "history_omitted", json_integer(v->iters_omitted));
    cli_json_set(o, "history", history_json(v));
    return o;
}

/* ---- usage and budgets
 * ---------------------------------------------------------------- */

void loop_view_iter_usage(const struct loop_view_iter *it, struct loop_view_usage *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < it->n; i++) {
        const struct loop_view_slot *s = &it->slots[i];

        if (!s->has_usage)
            continue;
        out->calls++;
        out->estimated += s->estimated;
        out->unpriced += !s->has_usd;
        out->tokens += s->tokens;
        out->usd += s->has_usd ? s->usd : 0;
    }
}

/* A number of the caps, if it is one. */
static bool cap_of(const json_t *caps, const char *key, double *out)
{
    const json_t *v = json_object_get(caps, key);

    if (!json_is_number(v))
        return false;
    *out = json_number_value(v);
    return true;
}

void loop_view_budget(const struct loop_view *v, int64_t now_ms,
                      struct loop_view_budget *out)
{
    const json_t *caps = json_object_get(v->start, "caps");
    const struct loop_view_meters *m = &v->meters;
    double lim;

    memset(out, 0, sizeof(*out));
    if ((out->has_tokens = cap_of(caps, "tokens", &lim))) {
        out->tokens_limit = (int64_t)lim;
        out->tokens_used = m->tokens - m->tokens_base;
        out->tokens_left = out->tokens_limit > out->tokens_used
                               ? out->tokens_limit - out->tokens_used
                               : 0;
    }
    if ((out->has_usd = cap_of(caps, "usd", &lim))) {
        out->usd_limit = lim;
        out->usd_used = m->usd - m->usd_base;
        out->usd_left = lim > out->usd_used ? lim - out->usd_used : 0.0;
    }
    if ((out->has_wallclock = cap_of(caps, "wallclock_ms", &lim))) {
        out->wallclock_limit_ms = (int64_t)lim;
        out->wallclock_used_ms = loop_view_elapsed_ms(v, now_ms);
        out->wallclock_left_ms = out->wallclock_limit_ms > out->wallclock_used_ms
                                     ? out->wallclock_limit_ms - out->wallclock_used_ms
                                     : 0;
    }
}

/* "$0.2500"; six decimals under a cent, so that a small call is not $0. */
static void put_usd(struct line *l, double usd)
{
    put(l, usd > 0 && usd < 0.01 ? "$%.6f" : "$%.4f", usd);
}

void loop_view_fmt_call(const struct loop_view_slot *s, char *buf, size_t cap)
{
    struct line l = {"", 0};

    put(&l, "%s%" PRId64 " tokens%s, ", s->estimated ? "~" : "", s->tokens,
        s->estimated ? " (estimated)" : "");
    if (s->has_usd)
        put_usd(&l, s->usd);
    else
        put(&l, "unpriced");
    if (s->model)
        put(&l, " (%s)", s->model);
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

json_t *loop_view_usage_json(const struct loop_view_usage *u)
{
    json_t *o = json_object();

    cli_json_set(o, "calls", json_integer(u->calls));
    cli_json_set(o, "tokens", json_integer(u->tokens));
    cli_json_set(o, "usd", json_real(u->usd));
    cli_json_set(o, "estimated", json_boolean(u->estimated > 0));
    cli_json_set(o, "estimated_calls", json_integer(u->estimated));
    cli_json_set(o, "unpriced_calls", json_integer(u->unpriced));
    return o;
}

static json_t *budget_item(bool set, json_t *limit, json_t *used, json_t *left)
{
    json_t *o;

    if (!set) {
        json_decref(limit);
        json_decref(used);
        json_decref(left);
        return json_null();
    }
    o = json_object();
    cli_json_set(o, "limit", limit);
    cli_json_set(o, "used", used);
    cli_json_set(o, "left", left);
    return o;
}

json_t *loop_view_budget_json(const struct loop_view_budget *b)
{
    json_t *o = json_object();

    cli_json_set(o, "tokens",
                 budget_item(b->has_tokens, json_integer(b->tokens_limit),
                             json_integer(b->tokens_used),
                             json_integer(b->tokens_left)));
    cli_json_set(o, "usd",
                 budget_item(b->has_usd, json_real(b->usd_limit),
                             json_real(b->usd_used), json_real(b->usd_left)));
    cli_json_set(o, "wallclock_ms",
                 budget_item(b->has_wallclock, json_integer(b->wallclock_limit_ms),
                             json_integer(b->wallclock_used_ms),
                             json_integer(b->wallclock_left_ms)));
    return o;
}
