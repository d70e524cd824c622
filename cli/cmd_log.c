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
    struct loop_view_name *nm; /* by seq; kind NONE: no loop record */
    uint64_t n;                /* entries (seq 0 to n - 1) */
    uint64_t start;            /* seq of the loop's start record; 0: none */
};

struct log_walk {
    const struct cli_ctx *ctx;
    bool jsonl;
    json_t *records; /* --json */
    int out_rc;      /* first output error (an exit status) */
    struct log_names names;
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

    if (w->names.start && rec->seq >= w->names.start) {
        memset(&none, 0, sizeof(none)); /* kind NONE: no loop record */
        nm = rec->seq < w->names.n ? &w->names.nm[rec->seq] : &none;
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
    if (seq < ln->n && ln->nm[seq].kind == LOOP_VIEW_NONE)
        (void)loop_view_event_name(ev, &ln->nm[seq]);
    return 0;
}

/* The names of run's records, as its events give them. */
static int load_names(const struct cli_ctx *ctx, lil_store *st, lil_run *run,
                      struct log_names *ln)
{
    struct cli_events_query q = {NULL, LIL_EVENTS_BRIEF, 0, 0}; /* names only */
    lil_run_info info;
    int rc = cli_run_info(ctx, run, &info);
    lil_status lrc;

    if (rc != CLI_EXIT_OK)
        return rc;
    ln->n = info.records + 1;
    ln->nm = calloc(ln->n, sizeof(*ln->nm));
    if (!ln->nm) {
        cli_err(ctx, "out of memory");
        return CLI_EXIT_FAIL;
    }
    lrc = cli_run_events_query(st, lil_run_id(run), info.records, &q, name_event, ln);
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

static int log_run(const struct cli_ctx *ctx, lil_store *st, lil_run *run, bool jsonl)
{
    struct log_walk w = {ctx, jsonl, NULL, CLI_EXIT_OK, {NULL, 0, 0}};
    int rc = load_names(ctx, st, run, &w.names);

    if (rc == CLI_EXIT_OK)
        rc = log_walk(ctx, run, &w);
    free(w.names.nm);
    return rc;
}

static int cmd_log(struct cli_ctx *ctx, int argc, char **argv)
{
    static const char *const names[] = {"RUN", NULL};
    const char *pos[1] = {NULL};
    bool jsonl = false;
    const struct cli_flag flags[] = {{"jsonl", false, NULL, &jsonl},
                                     {NULL, false, NULL, NULL}};
    struct cli_args a = {flags, names, pos};
    lil_store *st = NULL;
    lil_run *run = NULL;
    bool help = false;
    int rc = cli_open_run_arg(ctx, argc, argv, &a, &st, &run, &help);

    if (rc == CLI_EXIT_OK && !help)
        rc = log_run(ctx, st, run, jsonl);
    lil_run_close(run);
    lil_store_close(st);
    return rc;
}

const struct cli_verb cli_verb_log = {
    "log",
    "print every record of a run (--jsonl: one JSON object per line)",
    "Usage: lil log RUN [--jsonl] [--dir DIR] [--json]\n"
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
    "  --dir DIR   store directory (default: $LIL_DIR, else .lil)\n"
    "\n"
    "The run is opened read-only (no lock, nothing written).\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0; 1 when the run cannot be\n"
    "read; 64 on a usage error.  A held run is read (no lock taken).\n",
    cmd_log,
};
