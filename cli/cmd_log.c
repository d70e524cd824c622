/*
 * cmd_log.c -- `lil log RUN [--jsonl]`: every record of a run.
 *
 * Text: one line per record.  --jsonl: one JSON object per line (a readable
 * event stream, written as the walk goes):
 *
 *   {"seq":3,"offset":220,"ts":"2024-05-01T10:00:00.123456789Z",
 *    "ts_ns":1714557600123456789,"type":"step","key":"fetch","flags":[],
 *    "dur_us":812,"payload":"...","payload_len":5,"size":101}
 *
 * "payload" is a string when the bytes are valid UTF-8 without NUL, else
 * "payload_b64" holds them in base64.  "size" is the record's size on disk.
 * An intent's payload is the request's SHA-256, then an optional note: its
 * "payload" (or "payload_b64") holds the hash only, "request_sha256" the
 * hash in hex and "note" the note, when there is one; "payload_len" counts
 * both.  The text line shows the hash in hex and the note after it.
 * --json: the same objects in one document {"run": ID, "records": [...]}.
 *
 * A loop run (docs/loops.md) is known by its start record; from there on
 * what each record is comes from the library (lil_run_events_with, brief:
 * the "loop" object of each record's event, read before the walk for every record the
 * handle holds): the text line shows a summary of the payload ("shell
 * bump  {\"code\":0,...}") instead of the raw JSON, and the JSON objects
 * get "loop": {"kind", "iteration"?, "seq"?, "control"?, "n"?}.
 *
 * --follow (-f): the same lines (text or --jsonl), then each record as it is
 * journaled, until the run ends.  It follows from a position: lil_run_wait
 * says when the run grew past the last record shown, and only then is the
 * run opened again, the names of the new records read from their events
 * from that position on, and the records after it printed.  It ends when
 * lil_run_facts says the run has ended (or, a loop run, is stopped and
 * nobody holds it), with the exit status of its status (completed 0,
 * failed 1, stopped 5); Ctrl-C ends it too.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "loop_view.h"
#include "run_events.h"

#define LOOP_SUMMARY_MAX 120 /* bytes of a loop record's summary */

/* What the library says each record is (from the run's events). */
struct log_names {
    struct loop_view_name *nm; /* by seq - base; kind NONE: no loop record */
    uint64_t base;             /* the seq of nm[0] */
    uint64_t n;                /* entries (seq base to base + n - 1) */
    uint64_t start;            /* seq of the loop's start record; 0: none */
};

struct log_walk {
    const struct cli_ctx *ctx;
    bool jsonl;
    json_t *records; /* --json */
    int out_rc;      /* first output error (an exit status) */
    struct log_names names;
    uint64_t from; /* the first record shown (--follow: the first not yet) */
    uint64_t last; /* the last record shown */
};

/* An intent's payload: the hash as payload (base64, as ever), in hex, and
 * the note. */
static void intent_json(json_t *o, const lil_record *rec)
{
    size_t hash_len =
        rec->payload_len < CLI_INTENT_HASH_LEN ? rec->payload_len : CLI_INTENT_HASH_LEN;
    char hex[2 * CLI_INTENT_HASH_LEN + 1];
    const char *note;
    size_t note_len;
    uint64_t full_len;

    cli_json_payload(o, rec->payload, hash_len);
    cli_fmt_hex(rec->payload, hash_len, hex, sizeof(hex));
    cli_json_set(o, "request_sha256", json_string(hex));
    if (cli_intent_note(rec, &note, &note_len))
        cli_json_set(o, "note", cli_json_str(note, note_len));
    if (cli_intent_note_cut(rec, &full_len)) { /* the whole is the request record's */
        cli_json_set(o, "note_len", cli_json_u64(full_len));
        cli_json_set(o, "note_cut", json_true());
    }
}

static json_t *record_json(const lil_record *rec, const struct loop_view_name *nm)
{
    json_t *o = json_object(), *flags = json_array();

    cli_json_set(o, "seq", cli_json_u64(rec->seq));
    cli_json_set(o, "offset", cli_json_u64(rec->offset));
    cli_json_set(o, "ts", cli_json_time(rec->ts_ns, true));
    cli_json_set(o, "ts_ns", json_integer(rec->ts_ns));
    cli_json_set(o, "type", json_string(lil_record_type_name(rec->type)));
    cli_json_set(o, "key", cli_json_str(rec->key, rec->key_len));
    if (rec->flags & LIL_RECF_EFFECT)
        json_array_append_new(flags, json_string("effect"));
    cli_json_set(o, "flags", flags);
    cli_json_set(o, "dur_us", json_integer(rec->dur_us));
    if (rec->type == LIL_REC_INTENT)
        intent_json(o, rec);
    else
        cli_json_payload(o, rec->payload, rec->payload_len);
    cli_json_set(o, "payload_len", json_integer((json_int_t)rec->payload_len));
    cli_json_set(o, "size", json_integer(rec->size));
    if (nm && nm->kind != LOOP_VIEW_NONE)
        cli_json_set(o, "loop", loop_view_name_json(nm));
    return o;
}

/* The payload column; an intent's note after its hash. */
static void text_payload(const lil_record *rec, char *buf, size_t cap)
{
    char hash[300], note[300];
    const char *text;
    size_t len;
    uint64_t full;

    if (!cli_intent_note(rec, &text, &len)) {
        cli_fmt_payload(rec->payload, rec->payload_len, 80, buf, cap);
        return;
    }
    cli_fmt_payload(rec->payload, CLI_INTENT_HASH_LEN, 80, hash, sizeof(hash));
    cli_fmt_printable(text, len, 80, note, sizeof(note));
    if (cli_intent_note_cut(rec, &full))
        snprintf(buf, cap, "%s  note: %s (%" PRIu64 " bytes)", hash, note, full);
    else
        snprintf(buf, cap, "%s  note: %s", hash, note);
}

/* nm: the record's loop name in a loop run, else NULL. */
static void print_text(const lil_record *rec, const struct loop_view_name *nm)
{
    char ts[48], key[300], dur[16], payload[620];

    cli_fmt_iso(rec->ts_ns, true, ts, sizeof(ts));
    cli_fmt_printable(rec->key, rec->key_len, 64, key, sizeof(key));
    cli_fmt_dur(rec->dur_us, dur, sizeof(dur));
    if (nm && (nm->kind != LOOP_VIEW_NONE || rec->type == LIL_REC_RUN_DONE))
        loop_view_summary(rec, nm, LOOP_SUMMARY_MAX, payload, sizeof(payload));
    else
        text_payload(rec, payload, sizeof(payload));
    printf("%5" PRIu64 "  @%-8" PRIu64 " %s  %-11s  %-20s  %-6s  %8s  %5zuB  %s\n",
           rec->seq, rec->offset, ts, lil_record_type_name(rec->type), key,
           rec->flags & LIL_RECF_EFFECT ? "effect" : "-", dur, rec->payload_len,
           payload);
}

static int each_record(void *ud, const lil_record *rec)
{
    struct log_walk *w = ud;
    struct loop_view_name none, *nm = NULL;
    const struct log_names *ln = &w->names;

    if (rec->seq < w->from)
        return 0; /* shown before */
    w->last = rec->seq;
    if (ln->start && rec->seq >= ln->start) {
        memset(&none, 0, sizeof(none)); /* kind NONE: no loop record */
        nm = rec->seq >= ln->base && rec->seq - ln->base < ln->n
                 ? &ln->nm[rec->seq - ln->base]
                 : &none;
    }
    if (w->jsonl) {
        w->out_rc = cli_json_print(w->ctx, record_json(rec, nm), true);
        return w->out_rc;
    }
    if (w->records) {
        json_array_append_new(w->records, record_json(rec, nm));
        return 0;
    }
    print_text(rec, nm);
    return 0;
}

static int name_event(void *ud, const json_t *ev)
{
    struct log_names *ln = ud;
    uint64_t seq = cli_event_seq(ev);
    const char *type = json_string_value(json_object_get(ev, "type"));

    if (!ln->start && type && strcmp(type, "loop_start") == 0)
        ln->start = seq;
    if (seq >= ln->base && seq - ln->base < ln->n &&
        ln->nm[seq - ln->base].kind == LOOP_VIEW_NONE)
        (void)loop_view_event_name(ev, &ln->nm[seq - ln->base]);
    return 0;
}

/* The names of run's records from seq from on, as its events give them
 * (ln->start kept from an earlier call). */
static int load_names(const struct cli_ctx *ctx, lil_store *st, lil_run *run,
                      uint64_t from, struct log_names *ln)
{
    struct cli_events_query q = {NULL, LIL_EVENTS_BRIEF, 0, 0}; /* names only */
    lil_run_info info;
    int rc = cli_run_info(ctx, run, &info);
    lil_status lrc;

    if (rc != CLI_EXIT_OK)
        return rc;
    free(ln->nm);
    ln->base = from;
    ln->n = info.records >= from ? info.records - from + 1 : 0;
    ln->nm = calloc(ln->n + 1, sizeof(*ln->nm));
    if (!ln->nm) {
        cli_err(ctx, "out of memory");
        return CLI_EXIT_FAIL;
    }
    if (ln->n == 0)
        return CLI_EXIT_OK;
    lrc = cli_run_events_from(st, lil_run_id(run), from, info.records, &q, name_event,
                              ln);
    if (lrc != LIL_OK)
        return cli_fail(ctx, lrc, "%s", lil_errmsg());
    return CLI_EXIT_OK;
}

static int log_walk(const struct cli_ctx *ctx, lil_run *run, struct log_walk *w)
{
    lil_status rc;
    json_t *doc;

    if (ctx->json && !w->jsonl)
        w->records = json_array();
    if (ctx->json && !w->jsonl && !w->records)
        return cli_json_print(ctx, NULL, false);
    rc = lil_run_foreach(run, each_record, w);
    if (w->out_rc != CLI_EXIT_OK) {
        json_decref(w->records);
        return w->out_rc;
    }
    if (rc != LIL_OK) {
        json_decref(w->records);
        return cli_fail(ctx, rc, "%s", lil_run_errmsg(run));
    }
    if (!w->records)
        return CLI_EXIT_OK;
    doc = json_object();
    cli_json_set(doc, "run", cli_json_str(lil_run_id(run), strlen(lil_run_id(run))));
    cli_json_set(doc, "records", w->records);
    return cli_json_print(ctx, doc, false);
}

/* A compacted run whose oldest segments were dropped (lil gc --segments):
 * its history starts later, which is no error. */
static void print_dropped(lil_store *st, lil_run *run)
{
    lil_segments_info si = {.struct_size = sizeof(si)};

    if (lil_run_segments(st, lil_run_id(run), &si) == LIL_OK && si.first)
        printf("(history before seq %" PRIu64 " was dropped: segments 0..%" PRIu32
               " are gone)\n",
               si.first_seq, si.first - 1);
}

static int log_run(const struct cli_ctx *ctx, lil_store *st, lil_run *run, bool jsonl)
{
    struct log_walk w = {ctx, jsonl, NULL, CLI_EXIT_OK, {NULL, 0, 0, 0}, 1, 0};
    int rc = load_names(ctx, st, run, 1, &w.names);

    if (rc == CLI_EXIT_OK && !ctx->json && !jsonl)
        print_dropped(st, run);
    if (rc == CLI_EXIT_OK)
        rc = log_walk(ctx, run, &w);
    free(w.names.nm);
    return rc;
}

/* ---- --follow ------------------------------------------------------------------ */

#define FOLLOW_TICK_MS 1000 /* the longest lil_run_wait between looks at the end */

/* The records of run after w->last: their names from their events (from
 * that position on), then the walk, which shows only those. */
static int follow_batch(const struct cli_ctx *ctx, lil_store *st, lil_run *run,
                        struct log_walk *w)
{
    lil_status rc;
    int ex;

    w->from = w->last + 1;
    ex = load_names(ctx, st, run, w->from, &w->names);
    if (ex != CLI_EXIT_OK)
        return ex;
    rc = lil_run_foreach(run, each_record, w);
    if (fflush(stdout) != 0 && w->out_rc == CLI_EXIT_OK)
        w->out_rc = CLI_EXIT_FAIL;
    if (w->out_rc != CLI_EXIT_OK)
        return w->out_rc;
    return rc == LIL_OK ? CLI_EXIT_OK : cli_fail(ctx, rc, "%s", lil_run_errmsg(run));
}

/* Whether run_id has ended (completed, failed, stopped: lil_run_facts'
 * "ended"), and *code, the exit status its status gives.  An exit status:
 * CLI_EXIT_OK, or the error's when the facts cannot be read. */
static int run_ended(const struct cli_ctx *ctx, lil_store *st, const char *run_id,
                     bool *ended, int *code)
{
    static const char *const words[][2] = {
        {"completed", "0"}, {"failed", "1"}, {"stopped", "5"}};
    lil_bytes b = {NULL, 0};
    lil_status rc = lil_run_facts(st, run_id, &b);
    json_t *f = rc == LIL_OK ? json_loadb(b.data, b.len, 0, NULL) : NULL;
    const char *status = json_string_value(json_object_get(f, "status"));

    lil_free(b.data);
    /* a loop run stopped stays resumable ("ended" false), but nothing goes
       on with it until an operator resumes it: the end of a follow too */
    *ended = json_is_true(json_object_get(f, "ended")) ||
             (status && strcmp(status, "stopped") == 0 &&
              json_is_null(json_object_get(f, "holder")));
    *code = CLI_EXIT_FAIL;
    for (size_t i = 0; *ended && status && i < sizeof(words) / sizeof(*words); i++)
        if (strcmp(status, words[i][0]) == 0)
            *code = words[i][1][0] - '0';
    json_decref(f);
    if (rc != LIL_OK)
        return cli_fail(ctx, rc, "%s", lil_store_errmsg(st));
    return CLI_EXIT_OK;
}

/* Open run_id read-only again, show its new records, close it. */
static int follow_grown(const struct cli_ctx *ctx, lil_store *st, const char *run_id,
                        struct log_walk *w)
{
    lil_run *run = NULL;
    int ex = cli_run_open(ctx, st, run_id, true, &run);

    if (ex == CLI_EXIT_OK)
        ex = follow_batch(ctx, st, run, w);
    lil_run_close(run);
    return ex;
}

/* --follow: what the run holds, then each record as it is journaled, until
 * the run ends (the exit status of its status). */
static int follow_run(const struct cli_ctx *ctx, lil_store *st, lil_run *run,
                      bool jsonl)
{
    struct log_walk w = {ctx, jsonl, NULL, CLI_EXIT_OK, {NULL, 0, 0, 0}, 1, 0};
    const char *id = lil_run_id(run);
    bool ended = false;
    int code = CLI_EXIT_OK, ex = follow_batch(ctx, st, run, &w);

    while (ex == CLI_EXIT_OK) {
        uint64_t seq = w.last;
        lil_status rc;

        ex = run_ended(ctx, st, id, &ended, &code);
        if (ex != CLI_EXIT_OK)
            break;
        if (ended) { /* what came since the last look, then its end */
            ex = follow_grown(ctx, st, id, &w);
            ex = ex == CLI_EXIT_OK ? code : ex;
            break;
        }
        rc = lil_run_wait(st, id, w.last, FOLLOW_TICK_MS, &seq);
        if (rc != LIL_OK) {
            ex = cli_fail(ctx, rc, "%s", lil_store_errmsg(st));
            break;
        }
        ex = seq > w.last ? follow_grown(ctx, st, id, &w) : CLI_EXIT_OK;
    }
    free(w.names.nm);
    return ex;
}

static int cmd_log(struct cli_ctx *ctx, int argc, char **argv)
{
    static const char *const names[] = {"RUN", NULL};
    const char *pos[1] = {NULL};
    bool jsonl = false, follow = false;
    const struct cli_flag flags[] = {{"jsonl", false, NULL, &jsonl},
                                     {"follow", false, NULL, &follow},
                                     {NULL, false, NULL, NULL}};
    struct cli_args a = {flags, names, pos};
    lil_store *st = NULL;
    lil_run *run = NULL;
    bool help = false;
    int rc;
    static char follow_flag[] = "--follow";

    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "-f") == 0)
            argv[i] = follow_flag; /* -f: --follow's short form */
    rc = cli_open_run_arg(ctx, argc, argv, &a, &st, &run, &help);
    if (rc == CLI_EXIT_OK && !help && follow && ctx->json && !jsonl)
        rc = cli_usage(ctx, "--follow prints records as they come: use --jsonl, "
                            "not --json");
    if (rc == CLI_EXIT_OK && !help)
        rc = follow ? follow_run(ctx, st, run, jsonl) : log_run(ctx, st, run, jsonl);
    lil_run_close(run);
    lil_store_close(st);
    return rc;
}

const struct cli_verb cli_verb_log = {
    "log",
    "print every record of a run (--jsonl: one JSON object per line)",
    "Usage: lil log RUN [--follow|-f] [--jsonl] [--dir DIR] [--json]\n"
    "\n"
    "Print every record of the run's journal, in order.  Text: one line per\n"
    "record with seq, @offset, time (UTC, ns), type, key, 'effect' flag,\n"
    "duration, payload size and the payload (cut at 80 bytes; control characters\n"
    "escaped; a payload that is not UTF-8 text is shown in hex: 0xbaf627...).\n"
    "An intent shows its request hash, then its note if it has one.  In a loop\n"
    "run, the records of the loop show a summary instead of their JSON: an\n"
    "effect's kind, step and result, a snapshot's iteration and state, what a\n"
    "control record says (paused at ..., stop requested by ...).\n"
    "\n"
    "Flags:\n"
    "  --jsonl     one JSON object per line: {\"seq\", \"offset\", \"ts\", \"ts_ns\",\n"
    "              \"type\", \"key\", \"flags\": [\"effect\"], \"dur_us\", \"payload\" "
    "(or\n"
    "              \"payload_b64\" when not UTF-8 text), \"payload_len\", \"size\"};\n"
    "              an intent's payload is its request hash, also given as\n"
    "              \"request_sha256\" (hex), with its \"note\" when it has one;\n"
    "              a loop run's records add \"loop\": {\"kind\": \"start\" |\n"
    "              \"effect\" | \"snapshot\" | \"control\", \"iteration\", \"seq\",\n"
    "              \"control\", \"n\"} (those that apply)\n"
    "  --json      the same objects as {\"run\": RUN, \"records\": [...]}\n"
    "  --follow, -f  print what the run holds, then each record as it is\n"
    "              journaled (text or --jsonl; not --json), until the run ends:\n"
    "              completed (exit 0), failed (1) or stopped (5); any store, any\n"
    "              run (a loop run or a program's).  A run that pauses, parks or\n"
    "              is left uncertain is followed on (someone may approve, tick or\n"
    "              recover it); Ctrl-C ends it (exit 130)\n"
    "  --dir DIR   store directory (default: $LIL_DIR, else .lil)\n"
    "\n"
    "The run is opened read-only (no lock, nothing written).\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0; 1 when the run cannot be\n"
    "read; 64 on a usage error; --follow: the ended run's (0, 1 or 5).  A held run is read (no lock taken).\n",
    cmd_log,
};
