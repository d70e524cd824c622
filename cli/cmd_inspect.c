/*
 * cmd_inspect.c -- `lil inspect RUN`: a run's header and its timeline.
 *
 * The run is opened read-only.  Two walks over the records: the first
 * finds the time of the first record (timeline times are relative to it),
 * the width of the identity column, and, for each uncertain effect
 * (lil_run_uncertain_at), the seq of its last intent -- that intent is the
 * one without an outcome, flagged UNCERTAIN -- and that intent's note (the
 * text after the request hash that names the effect), shown beside the
 * identity.  The second walk prints one row per record (or builds the JSON
 * timeline).
 *
 * A loop run (docs/loops.md) also gets a section between the header and
 * the timeline, from loop_view_load: the loop, its status and reason, the
 * committed state and meters, what is used, reserved and left of its
 * budgets -- all of it the runner's own (lil_loop_facts) -- the usage of
 * its agent calls, what it waits for, and the slots (effects, sleeps,
 * approvals) of its last --tail iterations with each iteration's usage
 * and each call's (its reservations, an overrun); --json puts the same in
 * a "loop" object.  Estimated tokens are marked "~" (and "(estimated)"),
 * calls without a price "unpriced".
 *
 * A run that a live process holds and whose effect has no outcome yet is
 * running, its effect in flight (lil_run_facts' "in_flight", as `lil ls`
 * reads it): the status reads "running (effect in flight: iteration 3,
 * shell, 12 s)", the effect is shown "in flight" instead of uncertain, and
 * the exit status is 0.
 *
 * Exit status: 2 when the run is uncertain (a script can tell that a
 * person must decide), else 0; 1 when the run cannot be read.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifacts_view.h"
#include "cli.h"
#include "hint.h"
#include "loop_view.h"

#define TAIL_DEFAULT 10
#define TAIL_MAX     1000000

struct uncertain {
    char *id; /* a copy */
    uint64_t intent_seq;
    char *note; /* a copy of its last intent's note (NUL added), or NULL */
    size_t note_len;
};

struct insp {
    lil_run *run;
    int64_t first_ns;
    bool have_first;
    int key_w;
    struct uncertain *unc;
    size_t nunc;
    json_t *timeline; /* --json: the array being built */
    bool nomem;       /* the first walk ran out of memory */
    size_t tail;      /* --tail: iterations of a loop run shown */
    struct loop_view loop;
    json_t *flight;        /* lil_run_facts' "in_flight", or NULL */
    lil_segments_info seg; /* what is kept of a compacted run's history */
};

/* Copy the uncertain identities (their strings are valid only until the
 * next call on the run). */
static int load_uncertain(struct insp *in)
{
    size_t n = lil_run_uncertain_count(in->run);

    in->unc = calloc(n ? n : 1, sizeof(*in->unc));
    if (!in->unc)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *id = lil_run_uncertain_at(in->run, i);
        in->unc[i].id = strdup(id ? id : "");
        if (!in->unc[i].id)
            return -1;
        in->nunc++;
    }
    return 0;
}

static void insp_free(struct insp *in)
{
    loop_view_free(&in->loop);
    json_decref(in->flight);
    for (size_t i = 0; i < in->nunc; i++) {
        free(in->unc[i].id);
        free(in->unc[i].note);
    }
    free(in->unc);
}

static struct uncertain *find_uncertain(const struct insp *in, const lil_record *rec)
{
    for (size_t i = 0; i < in->nunc; i++) {
        const char *id = in->unc[i].id;
        if (strlen(id) == rec->key_len && memcmp(id, rec->key, rec->key_len) == 0)
            return &in->unc[i];
    }
    return NULL;
}

/* u's last intent so far is rec: keep its note.  -1 when out of memory. */
static int keep_note(struct uncertain *u, const lil_record *rec)
{
    const char *note;
    size_t len;

    u->intent_seq = rec->seq;
    free(u->note);
    u->note = NULL;
    u->note_len = 0;
    if (!cli_intent_note(rec, &note, &len))
        return 0;
    u->note = malloc(len + 1);
    if (!u->note)
        return -1;
    memcpy(u->note, note, len);
    u->note[len] = '\0';
    u->note_len = len;
    return 0;
}

static int first_walk(void *ud, const lil_record *rec)
{
    struct insp *in = ud;
    struct uncertain *u;

    if (!in->have_first) {
        in->first_ns = rec->ts_ns;
        in->have_first = true;
    }
    if (rec->key_len > (size_t)in->key_w)
        in->key_w = rec->key_len > 32 ? 32 : (int)rec->key_len;
    if (rec->type == LIL_REC_INTENT && (u = find_uncertain(in, rec)) != NULL &&
        keep_note(u, rec) != 0) {
        in->nomem = true;
        return 1;
    }
    return 0;
}

static bool is_uncertain(const struct insp *in, const lil_record *rec)
{
    const struct uncertain *u;

    if (rec->type != LIL_REC_INTENT)
        return false;
    u = find_uncertain(in, rec);
    return u && u->intent_seq == rec->seq;
}

/* The status column of a record. */
static const char *row_status(const struct insp *in, const lil_record *rec)
{
    switch (rec->type) {
    case LIL_REC_BEGIN:
        return "created";
    case LIL_REC_OPEN:
        return "opened";
    case LIL_REC_STEP:
        return "done";
    case LIL_REC_STEP_FAILED:
    case LIL_REC_RUN_FAILED:
        return "failed";
    case LIL_REC_INTENT:
        if (!is_uncertain(in, rec))
            return "intent";
        return in->flight ? "IN FLIGHT" : "UNCERTAIN";
    case LIL_REC_RESOLVE:
        return "resolved";
    case LIL_REC_RUN_DONE:
        return "completed";
    case LIL_REC_CLOSE:
        return "closed";
    case LIL_REC_REQUEST:
        return "request";
    case LIL_REC_FORK:
        return "forked";
    default:
        return "?";
    }
}

/* An intent's note column: the start of its request hash, its note. */
static void intent_note(const struct insp *in, const lil_record *rec, char *buf,
                        size_t cap)
{
    char hex[20], text[300], note[320] = "";
    const char *data;
    size_t len;

    cli_fmt_hex(rec->payload, rec->payload_len < 8 ? rec->payload_len : 8, hex,
                sizeof(hex));
    if (cli_intent_note(rec, &data, &len)) {
        uint64_t full;

        cli_fmt_printable(data, len, 80, text, sizeof(text));
        if (cli_intent_note_cut(rec, &full))
            snprintf(note, sizeof(note), "  note: %s (%" PRIu64 " bytes)", text, full);
        else
            snprintf(note, sizeof(note), "  note: %s", text);
    }
    snprintf(buf, cap, "request sha256 %s...%s%s", hex, note,
             !is_uncertain(in, rec) ? ""
             : in->flight           ? "  in flight: its holder is running it"
                                    : "  outcome unknown: see `lil resolve`");
}

/* The note column: reason, result, request hash, resolution. */
static void row_note(const struct insp *in, const lil_record *rec, char *buf,
                     size_t cap)
{
    char tmp[300];

    buf[0] = '\0';
    switch (rec->type) {
    case LIL_REC_STEP_FAILED:
    case LIL_REC_RUN_FAILED:
    case LIL_REC_RESOLVE:
    case LIL_REC_OPEN:
    case LIL_REC_FORK: /* the provenance: source, cut, actor, reason */
        cli_fmt_payload(rec->payload, rec->payload_len, 200, buf, cap);
        break;
    case LIL_REC_RUN_DONE:
        cli_fmt_payload(rec->payload, rec->payload_len, 60, tmp, sizeof(tmp));
        snprintf(buf, cap, "result: %s", tmp);
        break;
    case LIL_REC_INTENT:
        intent_note(in, rec, buf, cap);
        break;
    case LIL_REC_REQUEST: /* the whole note of the intent after it */
        cli_fmt_payload(rec->payload, rec->payload_len, 80, tmp, sizeof(tmp));
        snprintf(buf, cap, "%s (%zu bytes)", tmp, rec->payload_len);
        break;
    default:
        break;
    }
}

static bool has_result(const lil_record *rec)
{
    return rec->type == LIL_REC_STEP || rec->type == LIL_REC_RUN_DONE;
}

static int print_row(void *ud, const lil_record *rec)
{
    const struct insp *in = ud;
    char t[32], key[300], dur[16], size[24], note[700];

    cli_fmt_rel(rec->ts_ns - in->first_ns, t, sizeof(t));
    cli_fmt_printable(rec->key, rec->key_len, 64, key, sizeof(key));
    cli_fmt_dur(rec->dur_us, dur, sizeof(dur));
    snprintf(size, sizeof(size), "%zu", rec->payload_len);
    row_note(in, rec, note, sizeof(note));
    printf("%5" PRIu64 "  %-9s  %-11s  %-*s  %-9s  %8s  %6s  %s\n", rec->seq, t,
           lil_record_type_name(rec->type), in->key_w, key, row_status(in, rec), dur,
           has_result(rec) ? size : "-", note);
    return 0;
}

/* One timeline entry of the --json document. */
static int json_row(void *ud, const lil_record *rec)
{
    struct insp *in = ud;
    json_t *o = json_object();
    char t[32];

    cli_fmt_rel(rec->ts_ns - in->first_ns, t, sizeof(t));
    cli_json_set(o, "seq", cli_json_u64(rec->seq));
    cli_json_set(o, "offset", cli_json_u64(rec->offset));
    cli_json_set(o, "ts", cli_json_time(rec->ts_ns, true));
    cli_json_set(o, "t", json_string(t));
    cli_json_set(o, "type", json_string(lil_record_type_name(rec->type)));
    cli_json_set(o, "identity", cli_json_str(rec->key, rec->key_len));
    cli_json_set(o, "status", json_string(row_status(in, rec)));
    cli_json_set(o, "dur_us", json_integer(rec->dur_us));
    cli_json_set(o, "payload_len", json_integer((json_int_t)rec->payload_len));
    if (rec->type == LIL_REC_INTENT) {
        char hex[2 * CLI_INTENT_HASH_LEN + 1];
        const char *note;
        size_t len;
        cli_fmt_hex(rec->payload,
                    rec->payload_len < CLI_INTENT_HASH_LEN ? rec->payload_len
                                                           : CLI_INTENT_HASH_LEN,
                    hex, sizeof(hex));
        cli_json_set(o, "request_sha256", json_string(hex));
        uint64_t full;
        if (cli_intent_note(rec, &note, &len))
            cli_json_set(o, "note", cli_json_str(note, len));
        if (cli_intent_note_cut(rec, &full)) {
            cli_json_set(o, "note_len", cli_json_u64(full));
            cli_json_set(o, "note_cut", json_true());
        }
    } else if (rec->type != LIL_REC_STEP && rec->type != LIL_REC_REQUEST) {
        cli_json_payload(o, rec->payload, rec->payload_len);
    } /* a step's result, and the whole note of a request record: payload_len
         here, the bytes with `lil log --jsonl` */
    json_array_append_new(in->timeline, o);
    return 0;
}

static void print_when(const char *label, int64_t ns, int64_t now)
{
    char iso[40], ago[32];

    cli_fmt_iso(ns, false, iso, sizeof(iso));
    cli_fmt_ago(ns, now, ago, sizeof(ago));
    printf("%-14s%s (%s)\n", label, iso, ago);
}

/* "charge  note: <its note>  (outcome unknown: lil resolve ...)" */
static void print_uncertain(const struct insp *in, size_t i, const char *label)
{
    const struct uncertain *u = &in->unc[i];
    char key[300], text[300], note[320] = "";

    cli_fmt_printable(u->id, strlen(u->id), 200, key, sizeof(key));
    if (u->note) {
        cli_fmt_printable(u->note, u->note_len, 120, text, sizeof(text));
        snprintf(note, sizeof(note), "note: %s  ", text);
    }
    if (in->flight) { /* its holder is running it */
        printf("%-14s%s  %s\n", label, key, note);
        return;
    }
    printf("%-14s%s  %s(outcome unknown: lil resolve %s %s --retry|--assume-done|"
           "--abort)\n",
           label, key, note, lil_run_id(in->run), key);
}

/* "running (effect in flight: iteration 3, shell, 12 s)"; a program
 * run's: "running (effect in flight: charge, 12 s)". */
static void flight_status(const json_t *f, char *buf, size_t cap)
{
    const json_t *it = json_object_get(f, "iteration");
    const char *kind = json_string_value(json_object_get(f, "kind"));
    const char *step = json_string_value(json_object_get(f, "step"));
    long long secs =
        (long long)json_integer_value(json_object_get(f, "elapsed_ms")) / 1000;
    char what[200], safe[160];

    if (json_is_integer(it) && json_integer_value(it) < 0)
        snprintf(what, sizeof(what), "on_exit, %s", kind ? kind : "?");
    else if (json_is_integer(it))
        snprintf(what, sizeof(what), "iteration %lld, %s",
                 (long long)json_integer_value(it), kind ? kind : "?");
    else {
        cli_fmt_printable(step ? step : "?", step ? strlen(step) : 1, 120, safe,
                          sizeof(safe));
        snprintf(what, sizeof(what), "%s", safe);
    }
    snprintf(buf, cap, "running (effect in flight: %s, %lld s)", what, secs);
}

/* The header's status: the engine's, or running with the effect in
 * flight. */
static void status_text(const struct insp *in, const lil_run_info *info, char *buf,
                        size_t cap)
{
    if (in->flight)
        flight_status(in->flight, buf, cap);
    else
        snprintf(buf, cap, "%s", lil_run_state_name(info->state));
}

static void print_header(const struct insp *in, const lil_run_info *info)
{
    int64_t now = cli_now_ns();
    char key[300], status[400];

    cli_fmt_printable(lil_run_id(in->run), strlen(lil_run_id(in->run)), 200, key,
                      sizeof(key));
    printf("%-14s%s\n", "run", key);
    status_text(in, info, status, sizeof(status));
    printf("%-14s%s\n", "status", status);
    print_when("created", info->created_ns, now);
    print_when("last activity", info->last_ns, now);
    printf("%-14s%" PRIu64 " (steps: %" PRIu64 " done, %" PRIu64 " failed)\n",
           "records", info->records, info->steps_done, info->steps_failed);
    printf("%-14s%" PRIu64 "\n", "bytes", info->journal_bytes);
    printf("%-14s%s\n", "sync", cli_sync_name(info->sync));
    printf("%-14s%s\n", "keyed", info->keyed ? "yes" : "no");
    if (in->seg.first)
        printf("%-14sbefore seq %" PRIu64 " dropped (segments 0..%" PRIu32
               " are gone; the run goes on from segment %" PRIu32 ")\n",
               "history", in->seg.first_seq, in->seg.first - 1, in->seg.live);
    if (info->torn_offset)
        printf("%-14sat offset %" PRIu64 ", never acknowledged; the next writable "
               "open truncates it%s\n",
               "torn tail", info->torn_offset,
               info->torn_records ? " with the OPEN and CLOSE records after it" : "");
    if (info->holder_pid)
        printf("%-14s%d\n", "holder pid", info->holder_pid);
    else
        printf("%-14s-\n", "holder pid");
    for (size_t i = 0; i < in->nunc; i++)
        print_uncertain(in, i, i ? "" : in->flight ? "in flight" : "uncertain");
}

/* ---- a loop run's section ------------------------------------------------------ */

static json_t *loop_json(const struct insp *in)
{
    json_t *o;

    if (!in->loop.is_loop)
        return json_null();
    o = loop_view_json(&in->loop);
    cli_json_set(o, "tail", cli_json_u64(in->tail));
    return o;
}

static void print_text_line(const char *label, const char *text)
{
    char safe[1200];

    cli_fmt_printable(text, strlen(text), 1000, safe, sizeof(safe));
    printf("%-14s%s\n", label, safe);
}

static void print_json_line(const char *label, const json_t *v, size_t max)
{
    char text[1200];

    loop_view_fmt_json(v, max, text, sizeof(text));
    printf("%-14s%s\n", label, text);
}

/* "tokens ~816/1000 (272 reserved, ~184 left)": spent (reservations
 * included) of the limit. */
static void print_token_budget(const struct loop_view_budget *b, const char *est)
{
    printf("tokens %s%" PRId64 "/%" PRId64 " (", est, b->tokens_used, b->tokens_limit);
    if (b->tokens_reserved > 0)
        printf("%" PRId64 " reserved, ", b->tokens_reserved);
    printf("%s%" PRId64 " left)  ", est, b->tokens_left);
}

static void print_usd_budget(const struct loop_view_budget *b, bool unpriced)
{
    printf("usd %.4f/%.4f (", b->usd_used, b->usd_limit);
    if (b->usd_reserved > 0)
        printf("%.4f reserved, ", b->usd_reserved);
    printf("%.4f left)%s  ", b->usd_left, unpriced ? " + unpriced calls" : "");
}

/* What is left of each budget the run started with, as the runner counts
 * it (lil_loop_facts): "budget  tokens ~816/1000 (272 reserved, ~184
 * left)  usd 0.0100/1.0000 (0.9900 left)  wallclock 12s/1h (59m48s
 * left)"; "~" when some tokens were estimated. */
static void print_budget(const struct loop_view *v)
{
    const struct loop_view_budget *b = &v->budget;
    const char *est = v->usage.estimated ? "~" : "";
    char used[16], lim[16], left[16];

    if (!b->has_tokens && !b->has_usd && !b->has_wallclock)
        return;
    printf("%-14s", "budget");
    if (b->has_tokens)
        print_token_budget(b, est);
    if (b->has_usd)
        print_usd_budget(b, v->usage.unpriced > 0);
    if (b->has_wallclock) {
        cli_fmt_dur(b->wallclock_used_ms > 0 ? (uint64_t)b->wallclock_used_ms * 1000
                                             : 0,
                    used, sizeof(used));
        cli_fmt_dur((uint64_t)(b->wallclock_limit_ms > 0 ? b->wallclock_limit_ms : 0) *
                        1000,
                    lim, sizeof(lim));
        cli_fmt_dur((uint64_t)b->wallclock_left_ms * 1000, left, sizeof(left));
        printf("wallclock %s/%s (%s left)", used, lim, left);
    }
    printf("\n");
}

/* The run's agent calls: "usage  ~150 tokens (estimated in part), $0.7500
 * in 2 calls". */
static void print_usage(const struct loop_view *v)
{
    char text[300];

    if (v->usage.calls == 0 && v->usage.tokens == 0 && v->usage.usd == 0)
        return;
    loop_view_fmt_usage(&v->usage, text, sizeof(text));
    printf("%-14s%s\n", "usage", text);
}

/* "meters  iteration base 0, tokens 544 (base 0, 272 reserved), usd ..."
 * (tokens and usd: the totals the meters count), then the wallclock. */
static void print_meters(const struct loop_view *v)
{
    const struct loop_view_meters *m = &v->meters;
    char iso[40], dur[16], tres[40] = "", ures[40] = "";

    if (m->tokens_reserved > 0)
        snprintf(tres, sizeof(tres), ", %" PRId64 " reserved", m->tokens_reserved);
    if (m->usd_reserved > 0)
        snprintf(ures, sizeof(ures), ", %.4f reserved", m->usd_reserved);
    printf("%-14siteration base %" PRId64 ", tokens %" PRId64 " (base %" PRId64
           "%s), usd %.4f (base %.4f%s), repeats %" PRId64 "\n",
           "meters", m->iteration_base, m->tokens, m->tokens_base, tres, m->usd,
           m->usd_base, ures, m->repeats);
    cli_fmt_iso(cli_ms_to_ns(m->wallclock_base_ms), false, iso, sizeof(iso));
    cli_fmt_dur(m->elapsed_ms > 0 ? (uint64_t)m->elapsed_ms * 1000 : 0, dur,
                sizeof(dur));
    printf("%-14sbase %s, elapsed %s%s\n", "wallclock", iso, dur,
           v->ended ? " (to the last record)" : "");
    print_usage(v);
    print_budget(v);
}

/* The store and run the hints name (set by inspect_run). */
static struct cli_hint_run hint_run;

/* A command for the run inspected (hint.h), into buf. */
static const char *hint(const struct loop_view *v, const char *verb, const char *tail,
                        char *buf, size_t cap)
{
    struct cli_hint_run r = hint_run;

    r.spec = loop_view_spec_path(v);
    r.spec_id = loop_view_str(v->start, "loopId", NULL);
    return cli_hint(&r, verb, tail, buf, cap);
}

/* The approval a paused run waits for, and how to give it. */
static void print_approval(const struct loop_view *v)
{
    const json_t *p = v->paused;
    char text[2400], tail[300], cmd[2000];

    if (!p)
        return;
    snprintf(tail, sizeof(tail), "--pause %s --reason R", loop_view_str(p, "id", "?"));
    hint(v, "approve", tail, cmd, sizeof(cmd));
    if (strcmp(loop_view_str(p, "kind", ""), "cap") == 0)
        snprintf(text, sizeof(text),
                 "cap %s tripped at iteration %" PRId64 " (breakpoint): %s",
                 loop_view_str(p, "cap", "?"),
                 (int64_t)json_integer_value(json_object_get(p, "iteration")), cmd);
    else
        snprintf(text, sizeof(text), "approval of %s (iteration %" PRId64 "): %s: %s",
                 loop_view_str(p, "step", "?"),
                 (int64_t)json_integer_value(json_object_get(p, "iteration")),
                 loop_view_str(p, "ask", ""), cmd);
    print_text_line("waiting for", text);
    snprintf(text, sizeof(text), "%s, digest %s", loop_view_str(p, "id", "?"),
             loop_view_str(p, "digest", "?"));
    print_text_line("pause", text);
}

/* The effect without an outcome, and (not running) how to decide it. */
static void print_in_doubt(const struct loop_view *v)
{
    const char *identity;
    char text[2400], kind[32];

    loop_view_uncertain(v, kind, sizeof(kind), &identity);
    snprintf(text, sizeof(text), "%s %s %s", loop_view_str(v->uncertain, "slot", "?"),
             kind, identity);
    print_text_line(strcmp(v->status, "running") == 0 ? "in flight" : "in doubt", text);
    if (strcmp(v->status, "uncertain") != 0)
        return;
    hint(v, "recover",
         "--retry | --assume-done --result-json JSON | --abort --reason R", text,
         sizeof(text));
    print_text_line("recover", text);
}

/* What a person must do: approve, recover, resume; and when it wakes. */
static void print_waits(const struct loop_view *v, int64_t now_ns)
{
    char text[2400], when[40], ago[32];

    print_approval(v);
    if (v->uncertain)
        print_in_doubt(v);
    if (v->stop) {
        char cmd[2000];

        snprintf(text, sizeof(text), "requested by %s: %s (%s goes on)",
                 loop_view_str(v->stop, "actor", "?"),
                 loop_view_str(v->stop, "reason", ""),
                 hint(v, "resume", NULL, cmd, sizeof(cmd)));
        print_text_line("stop", text);
    }
    if (strcmp(v->status, "failed") == 0) {
        char cmd[2000];

        snprintf(text, sizeof(text),
                 "fix the cause, then %s (goes on from the failed iteration)",
                 hint(v, "resume", "--retry-failed", cmd, sizeof(cmd)));
        print_text_line("retry", text);
    }
    if (v->wake_at_ms) {
        cli_fmt_iso(cli_ms_to_ns(v->wake_at_ms), false, when, sizeof(when));
        cli_fmt_ago(cli_ms_to_ns(v->wake_at_ms), now_ns, ago, sizeof(ago));
        printf("%-14s%s (%s)\n", "wakes at", when, ago);
    }
}

static void print_slot(const struct loop_view_slot *s)
{
    char kind[64], step[120], dur[16], extra[300] = "";

    cli_fmt_printable(s->kind ? s->kind : "?", s->kind ? strlen(s->kind) : 1, 40, kind,
                      sizeof(kind));
    cli_fmt_printable(s->step ? s->step : "-", s->step ? strlen(s->step) : 1, 40, step,
                      sizeof(step));
    cli_fmt_dur(s->dur_us, dur, sizeof(dur));
    if (s->note)
        cli_fmt_printable(s->note, strlen(s->note), 200, extra, sizeof(extra));
    else if (s->has_usage || s->attempts)
        loop_view_fmt_call(s, extra, sizeof(extra));
    else if (s->wake_at_ms)
        cli_fmt_iso(cli_ms_to_ns(s->wake_at_ms), false, extra, sizeof(extra));
    printf("    %-8s  %-10s  %-16s  %-12s  %8s%s%s\n", s->name, kind, step, s->status,
           dur, extra[0] ? "  " : "", extra);
}

/* "  iteration 3 (not committed)  usage: 50 tokens, $0.5000 in 1 call",
 * then its slots. */
static void print_iteration(const struct loop_view *v, const struct loop_view_iter *it)
{
    struct loop_view_usage u;
    char usage[320] = "";

    loop_view_iter_usage(it, &u);
    if (u.calls > 0) {
        snprintf(usage, sizeof(usage), "  usage: ");
        loop_view_fmt_usage(&u, usage + 9, sizeof(usage) - 9);
    }
    if (it->iteration < 0)
        printf("  on_exit%s\n", usage);
    else
        printf("  iteration %" PRId64 "%s%s\n", it->iteration,
               it->iteration < v->iterations ? "" : " (not committed)", usage);
    for (size_t j = 0; j < it->n; j++)
        print_slot(&it->slots[j]);
}

static void print_history(const struct loop_view *v, size_t tail)
{
    if (tail == 0)
        return;
    if (v->iters_omitted)
        printf("\nthe last %zu iterations (%" PRId64
               " before them not shown; --tail N):\n",
               v->niters, v->iters_omitted);
    else
        printf("\niterations:\n");
    printf("    %-8s  %-10s  %-16s  %-12s  %8s  %s\n", "SLOT", "KIND", "STEP", "STATUS",
           "DURATION", "USAGE");
    for (size_t i = 0; i < v->niters; i++)
        print_iteration(v, &v->iters[i]);
}

static void print_loop(const struct insp *in)
{
    const struct loop_view *v = &in->loop;
    const json_t *st = v->start;
    const char *sha = loop_view_str(st, "spec", "?");
    char text[1200];
    int64_t now = cli_now_ns();

    printf("\n");
    print_text_line("loop", loop_view_str(st, "loopId", "?"));
    snprintf(text, sizeof(text), "%s (sha256 %.16s...)", loop_view_spec_path(v), sha);
    print_text_line("spec", text);
    print_json_line("inputs", json_object_get(st, "inputs"), 300);
    print_text_line("loop status", v->status);
    if (v->reason)
        print_text_line("reason", v->reason);
    printf("%-14s%" PRId64 " committed\n", "iterations", v->iterations);
    print_json_line("state", v->state, 500);
    if (!v->damaged)
        print_meters(v);
    print_waits(v, now);
    cli_artifacts_print(in->run);
    print_history(v, in->tail);
}

static json_t *header_json(const struct insp *in, const lil_run_info *info)
{
    json_t *o = json_object(), *unc = json_array(), *notes = json_object();

    cli_json_set(o, "run",
                 cli_json_str(lil_run_id(in->run), strlen(lil_run_id(in->run))));
    cli_json_set(o, "status",
                 json_string(in->flight ? "running" : lil_run_state_name(info->state)));
    cli_json_set(o, "in_flight", in->flight ? json_incref(in->flight) : json_null());
    cli_json_set(o, "created", cli_json_time(info->created_ns, false));
    cli_json_set(o, "created_ns", json_integer(info->created_ns));
    cli_json_set(o, "last_activity", cli_json_time(info->last_ns, false));
    cli_json_set(o, "last_activity_ns", json_integer(info->last_ns));
    cli_json_set(o, "records", cli_json_u64(info->records));
    cli_json_set(o, "steps_done", cli_json_u64(info->steps_done));
    cli_json_set(o, "steps_failed", cli_json_u64(info->steps_failed));
    cli_json_set(o, "journal_bytes", cli_json_u64(info->journal_bytes));
    cli_json_set(o, "sync", json_string(cli_sync_name(info->sync)));
    cli_json_set(o, "keyed", json_boolean(info->keyed));
    cli_json_set(o, "torn_offset",
                 info->torn_offset ? cli_json_u64(info->torn_offset) : json_null());
    cli_json_set(o, "records_after_torn", cli_json_u64(info->torn_records));
    cli_json_set(o, "holder_pid",
                 info->holder_pid ? json_integer(info->holder_pid) : json_null());
    for (size_t i = 0; i < in->nunc; i++) {
        json_array_append_new(unc, cli_json_str(in->unc[i].id, strlen(in->unc[i].id)));
        if (in->unc[i].note && notes)
            json_object_set_new(notes, in->unc[i].id,
                                cli_json_str(in->unc[i].note, in->unc[i].note_len));
    }
    cli_json_set(o, "uncertain", unc);
    cli_json_set(o, "uncertain_notes", notes);
    cli_json_set(o, "loop", loop_json(in));
    cli_json_set(o, "artifacts", cli_artifacts_json(in->run));
    return o;
}

/* Print the header and the timeline (text or JSON). */
static int show(const struct cli_ctx *ctx, struct insp *in, const lil_run_info *info)
{
    lil_status rc;

    if (!ctx->json) {
        print_header(in, info);
        if (in->loop.is_loop)
            print_loop(in);
        printf("\n%5s  %-9s  %-11s  %-*s  %-9s  %8s  %6s  %s\n", "SEQ", "TIME", "TYPE",
               in->key_w, "IDENTITY", "STATUS", "DURATION", "SIZE", "NOTE");
        rc = lil_run_foreach(in->run, print_row, in);
    } else {
        json_t *doc = header_json(in, info);
        in->timeline = json_array();
        rc = lil_run_foreach(in->run, json_row, in);
        cli_json_set(doc, "timeline", in->timeline);
        if (rc == LIL_OK)
            return cli_json_print(ctx, doc, false);
        json_decref(doc);
    }
    if (rc != LIL_OK)
        return cli_fail(ctx, rc, "%s", lil_run_errmsg(in->run));
    return CLI_EXIT_OK;
}

/* Release in and report why a walk failed: rc, or memory (rc LIL_OK or
 * LIL_E_NOMEM: the command's own allocations). */
static int walk_failed(const struct cli_ctx *ctx, struct insp *in, lil_status rc)
{
    insp_free(in);
    if (rc == LIL_OK || rc == LIL_E_NOMEM) {
        cli_err(ctx, "out of memory");
        return CLI_EXIT_FAIL;
    }
    return cli_fail(ctx, rc, "%s", lil_errmsg()); /* the run's or the store's */
}

/* The effect a live holder is running (lil_run_facts' "in_flight"), when
 * the run is held and has an effect without an outcome. */
static lil_status load_flight(lil_store *st, lil_run *run, const lil_run_info *info,
                              struct insp *in)
{
    lil_bytes b = {NULL, 0};
    json_t *f, *fl;
    lil_status rc;

    if (info->holder_pid == 0 || info->state != LIL_RUN_UNCERTAIN)
        return LIL_OK;
    rc = lil_run_facts(st, lil_run_id(run), &b);
    if (rc != LIL_OK)
        return rc;
    f = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    if (!f)
        return LIL_E_NOMEM;
    fl = json_object_get(f, "in_flight");
    in->flight = json_is_object(fl) ? json_incref(fl) : NULL;
    json_decref(f);
    return LIL_OK;
}

static int inspect_run(const struct cli_ctx *ctx, lil_store *st, lil_run *run,
                       size_t tail)
{
    struct insp in;
    lil_run_info info;
    lil_status walked;
    bool held;
    int rc = cli_run_info(ctx, run, &info);

    hint_run = (struct cli_hint_run){ctx, NULL, lil_run_id(run), NULL};

    if (rc != CLI_EXIT_OK)
        return rc;
    memset(&in, 0, sizeof(in));
    in.run = run;
    in.key_w = 8;
    in.tail = tail;
    in.seg.struct_size = sizeof(in.seg);
    if (lil_run_segments(st, lil_run_id(run), &in.seg) != LIL_OK)
        in.seg.first = 0; /* the walk below reports what is wrong */
    walked = loop_view_load(st, run, &info, tail, &in.loop);
    if (walked != LIL_OK)
        return walk_failed(ctx, &in, walked);
    if (load_uncertain(&in) != 0)
        return walk_failed(ctx, &in, LIL_E_NOMEM);
    walked = load_flight(st, run, &info, &in);
    if (walked != LIL_OK)
        return walk_failed(ctx, &in, walked);
    walked = lil_run_foreach(run, first_walk, &in);
    if (in.nomem || walked != LIL_OK)
        return walk_failed(ctx, &in, in.nomem ? LIL_E_NOMEM : walked);
    rc = show(ctx, &in, &info);
    held = in.flight != NULL;
    insp_free(&in);
    if (rc == CLI_EXIT_OK && info.state == LIL_RUN_UNCERTAIN && !held)
        return CLI_EXIT_UNCERTAIN;
    return rc;
}

/* --tail N: 0 to TAIL_MAX. */
static bool parse_tail(const char *text, size_t *out)
{
    size_t v = 0;

    if (!text || !*text)
        return false;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (size_t)(*p - '0');
        if (v > TAIL_MAX)
            return false;
    }
    *out = v;
    return true;
}

static int cmd_inspect(struct cli_ctx *ctx, int argc, char **argv)
{
    static const char *const names[] = {"RUN", NULL};
    const char *pos[1] = {NULL};
    const char *tail_text = NULL;
    bool tail_set = false;
    const struct cli_flag flags[] = {{"tail", true, &tail_text, &tail_set},
                                     {NULL, false, NULL, NULL}};
    struct cli_args a = {flags, names, pos};
    lil_store *st = NULL;
    lil_run *run = NULL;
    bool help = false;
    size_t tail = TAIL_DEFAULT;
    int rc = cli_open_run_arg(ctx, argc, argv, &a, &st, NULL, &help);

    if (rc == CLI_EXIT_OK && !help && tail_set && !parse_tail(tail_text, &tail))
        rc = cli_usage(ctx, "--tail wants a number of iterations (0 to %d), not '%s'",
                       TAIL_MAX, tail_text ? tail_text : "");
    if (rc == CLI_EXIT_OK && !help) /* the run once the flags are known to be good */
        rc = cli_run_open(ctx, st, pos[0], true, &run);
    if (rc == CLI_EXIT_OK && !help)
        rc = inspect_run(ctx, st, run, tail);
    lil_run_close(run);
    lil_store_close(st);
    return rc;
}

const struct cli_verb cli_verb_inspect = {
    "inspect",
    "show a run's state and timeline",
    "Usage: lil inspect RUN [--tail N] [--dir DIR] [--json]\n"
    "\n"
    "Show the run's header (id, status, created, last activity, records, bytes,\n"
    "sync mode, keyed, a torn tail, holder pid, uncertain effects) and its\n"
    "timeline: one row per journal record with its seq, time since the first\n"
    "record (+1.234s), type, identity, status (created, opened, done, failed,\n"
    "intent, resolved, completed, closed), duration, result size and a note (the\n"
    "reason of a failure, the run's result, the request hash of an intent and\n"
    "the note it carries).  An effect whose intent has no outcome is flagged\n"
    "UNCERTAIN: decide it with `lil resolve`; the header shows its intent's note\n"
    "beside its identity.\n"
    "\n"
    "A loop run also gets a section after the header: loop id, spec, inputs,\n"
    "the loop's status and reason, committed iterations and state, the meters,\n"
    "the tokens and usd of its agent calls and what is used, reserved and left\n"
    "of its budgets -- as the runner counts them (a call in flight or\n"
    "uncertain at its reservation) --, what it waits for (an approval, a\n"
    "recovery, a resume, its wake time), and per iteration its usage and its\n"
    "effects, sleeps and approvals (kind, step, status, duration, a call's\n"
    "tokens, usd, model and reservations): the last 10 iterations, or --tail\n"
    "N.  \"~\" marks estimated tokens, \"unpriced\" a call whose model has no\n"
    "price.  A loop run that recorded its artifacts when it ended lists them\n"
    "(path, size, sha256; --json: \"artifacts\", null when none).\n"
    "\n"
    "The run is opened read-only (no lock, nothing written).\n"
    "\n"
    "Flags:\n"
    "  --tail N    a loop run: show its last N iterations (default 10)\n"
    "  --dir DIR   store directory (default: $LIL_DIR, else .lil)\n"
    "  --json      the header as an object with a \"timeline\" array, and\n"
    "              \"loop\" (null when the run is no loop run)\n"
    "\n"
    "A damaged journal is not shown: the message says where the damage is and\n"
    "how many intact records and steps follow it (see `lil check`).\n"
    "\n"
    "A run that a live process holds is running: an effect of it without an\n"
    "outcome is in flight, not uncertain (status \"running (effect in flight:\n"
    "iteration 3, shell, 12 s)\"; --json: \"in_flight\": {\"step\", \"started_ns\",\n"
    "\"elapsed_ms\", \"iteration\", \"kind\"}, else null).\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0, or 2 when the run is\n"
    "uncertain (and no process holds it); 1 when the run cannot be read (no such run, damaged journal,\n"
    "missing key); 64 on a usage error.  A held run is shown (no lock taken).\n",
    cmd_inspect,
};
