/*
 * cmd_check.c -- `lil check RUN [--repair]`: verify a run's journal.
 *
 * lil_run_check verifies the header, every record's framing and checksum,
 * the sequence and the hash chain.  The verdicts:
 *
 *   intact            exit 0
 *   intact, torn tail exit 0: only an unsynced last record was torn by a
 *                     crash (perhaps with OPEN and CLOSE records after it,
 *                     or in a journal with no complete record at all);
 *                     nothing acknowledged lies there, and the next open
 *                     truncates it.  Reported all the same.
 *   damaged           exit 1: the offset of the first bad byte, what was
 *                     found, and the intact records and steps after it,
 *                     which an open will not drop.  Nothing is changed.
 *   repaired          exit 0 (--repair only): the journal was truncated at
 *                     the damage; the records after it are gone, and the
 *                     report says how many.
 *
 * Without --repair nothing is written and no lock is taken; --repair needs
 * the run's lock: CLI_EXIT_LOCKED (75) while another process holds it, with
 * the holder's pid (lil_run_check's message names only the file, so
 * cli_held looks the holder up).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static uint64_t bytes_after(uint64_t file_bytes, uint64_t offset)
{
    return file_bytes > offset ? file_bytes - offset : 0;
}

/* The intact records after the damage, when the search found some. */
static void print_after(const lil_check_report *r, const char *what)
{
    if (r->records_after_damage)
        printf("%s %" PRIu64 " intact records (%" PRIu64 " steps) after the damage\n",
               what, r->records_after_damage, r->steps_after_damage);
}

static void print_text(const char *id, const lil_check_report *r)
{
    uint64_t cut = bytes_after(r->file_bytes, r->damage_offset);

    if (r->repaired) {
        printf("%s: repaired: truncated at offset %" PRIu64 ", cut %" PRIu64
               " bytes; %" PRIu64 " records kept\n",
               id, r->damage_offset, cut, r->records);
        print_after(r, "dropped");
        printf("the damage was: %s\n", r->message);
        return;
    }
    if (!r->intact && r->live_segment) {
        printf("%s: DAMAGED in segment %" PRIu32 "%s at offset %" PRIu64 ": %s\n", id,
               r->damage_segment, r->old_damage ? " (an older one)" : " (the live one)",
               r->damage_offset, r->message);
        if (r->old_damage)
            return; /* --repair cuts the live segment only */
    } else if (!r->intact) {
        printf("%s: DAMAGED at offset %" PRIu64 ": %s\n", id, r->damage_offset,
               r->message);
    }
    if (!r->intact) {
        printf("%" PRIu64 " valid records (%" PRIu64 " bytes) before the damage; "
               "--repair would cut %" PRIu64 " bytes\n",
               r->records, r->valid_bytes, cut);
        print_after(r, "--repair would drop the");
        return;
    }
    if (r->torn_tail && r->records == 0) { /* a creation cut short */
        printf("%s: %s\n", id, r->message);
        return;
    }
    printf("%s: intact: %" PRIu64 " records, %" PRIu64 " bytes, chain verified\n", id,
           r->records, r->valid_bytes);
    if (r->live_segment)
        printf("segments %" PRIu32 "..%" PRIu32 " verified and linked (live: %" PRIu32
               ")%s\n",
               r->first_segment, r->live_segment, r->live_segment,
               r->first_segment ? "; the ones before were dropped" : "");
    if (r->torn_tail)
        printf("torn tail at offset %" PRIu64 " (%" PRIu64
               " bytes), truncated on next open\n",
               r->valid_bytes, bytes_after(r->file_bytes, r->valid_bytes));
    if (r->torn_tail && r->records_after_damage)
        printf("after it %" PRIu64 " intact records, only OPEN and CLOSE: dropped with "
               "it\n",
               r->records_after_damage);
}

static json_t *report_json(const char *id, const lil_check_report *r)
{
    json_t *o = json_object();
    bool damaged = !r->intact || r->repaired;

    cli_json_set(o, "run", cli_json_str(id, strlen(id)));
    cli_json_set(o, "intact", json_boolean(r->intact));
    cli_json_set(o, "torn_tail", json_boolean(r->torn_tail));
    cli_json_set(o, "repaired", json_boolean(r->repaired));
    cli_json_set(o, "records", cli_json_u64(r->records));
    cli_json_set(o, "valid_bytes", cli_json_u64(r->valid_bytes));
    cli_json_set(o, "damage_offset",
                 damaged ? cli_json_u64(r->damage_offset) : json_null());
    cli_json_set(o, "torn_offset",
                 r->torn_tail ? cli_json_u64(r->valid_bytes) : json_null());
    cli_json_set(o, "file_bytes", cli_json_u64(r->file_bytes));
    cli_json_set(o, "records_after_damage", cli_json_u64(r->records_after_damage));
    cli_json_set(o, "steps_after_damage", cli_json_u64(r->steps_after_damage));
    cli_json_set(o, "message",
                 cli_json_str(r->message, strnlen(r->message, sizeof(r->message))));
    cli_json_set(o, "live_segment", cli_json_u64(r->live_segment));
    cli_json_set(o, "first_segment", cli_json_u64(r->first_segment));
    cli_json_set(o, "damage_segment",
                 damaged ? cli_json_u64(r->damage_segment) : json_null());
    cli_json_set(o, "old_damage", json_boolean(r->old_damage));
    return o;
}

static int check_run(const struct cli_ctx *ctx, lil_store *st, const char *id,
                     bool repair)
{
    lil_check_report r;
    lil_status rc;
    int ret;

    memset(&r, 0, sizeof(r));
    r.struct_size = sizeof(r);
    rc = lil_run_check(st, id, repair ? LIL_CHECK_REPAIR : 0u, &r);
    if (rc == LIL_E_NOTFOUND) {
        cli_err(ctx, "no run '%s' in store '%s'", id, lil_store_path(st));
        return CLI_EXIT_FAIL;
    }
    if (rc == LIL_E_LOCKED)
        return cli_held(ctx, st, id);
    if (rc != LIL_OK)
        return cli_fail(ctx, rc, "%s", lil_store_errmsg(st));
    r.message[sizeof(r.message) - 1] = '\0';
    ret = r.intact || r.repaired ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    if (ctx->json) {
        int jrc = cli_json_print(ctx, report_json(id, &r), false);
        return jrc != CLI_EXIT_OK ? jrc : ret;
    }
    print_text(id, &r);
    return ret;
}

static int check_verb(const struct cli_ctx *ctx, lil_store *st, const char *id,
                      void *ud)
{
    return check_run(ctx, st, id, *(const bool *)ud);
}

static int cmd_check(struct cli_ctx *ctx, int argc, char **argv)
{
    bool repair = false;
    const struct cli_flag flags[] = {{"repair", false, NULL, &repair},
                                     {NULL, false, NULL, NULL}};

    return cli_on_run_arg(ctx, argc, argv, flags, check_verb, &repair);
}

const struct cli_verb cli_verb_check = {
    "check",
    "verify a run's journal; --repair truncates damage",
    "Usage: lil check RUN [--repair] [--dir DIR] [--json]\n"
    "\n"
    "Verify the run's journal: the file header, every record's framing and\n"
    "checksum, the sequence numbers and the hash chain.  Prints one of:\n"
    "\n"
    "  RUN: intact: N records, B bytes, chain verified\n"
    "      (and, when a crash tore an unsynced last record: \"torn tail at offset\n"
    "      N (X bytes), truncated on next open\"; nothing acknowledged is lost)\n"
    "  RUN: DAMAGED at offset N: what was found\n"
    "      (and the intact records and steps after the damage: an open refuses\n"
    "      to drop them, --repair drops them)\n"
    "  RUN: repaired: truncated at offset N, cut X bytes; N records kept\n"
    "\n"
    "A journal with no complete record (its creation was cut short) is a torn\n"
    "tail too: \"RUN: torn tail at offset N: no complete record ...\".\n"
    "Without --repair nothing is written and no lock is taken.\n"
    "\n"
    "Flags:\n"
    "  --repair    truncate the journal at the first damaged byte; the records\n"
    "              from there on are lost.  Needs the run's lock.\n"
    "  --json      {\"run\", \"intact\", \"torn_tail\", \"repaired\", \"records\",\n"
    "              \"valid_bytes\", \"damage_offset\", \"torn_offset\", "
    "\"file_bytes\",\n"
    "              \"records_after_damage\", \"steps_after_damage\", \"message\"}\n"
    "  --dir DIR   store directory (default: $LIL_DIR, else .lil)\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0 intact (torn tail included)\n"
    "or repaired; 1 damaged, no such run, wrong key, I/O error; 75 --repair\n"
    "while another process holds the run (the message names its pid: try\n"
    "again when it is done); 64 on a usage error.\n",
    cmd_check,
};
