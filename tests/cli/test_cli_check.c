/*
 * test_cli_check.c -- `lil check RUN [--repair]`: an intact journal, a
 * torn unsynced tail (intact, reported, exit 0), a byte flipped in the
 * middle (exit 1, the offset printed, nothing written), --repair (the
 * journal is cut at that offset and then checks intact), --repair on a run
 * held by another process (exit 75, the holder's pid named), a journal
 * from a newer format, and
 * --json.  A byte flipped in record 12 of 100 written with sync=off: check
 * (text and --json) counts the 88 intact records and steps after it, inspect
 * refuses with the same counts, --repair drops them and says so.  A journal
 * cut inside its first record: a torn tail with no record, `unborn` in
 * ls.  The damage is crafted with the byte layout of src/journal/format.h:
 * records start at offset 64, the key at +32.
 */
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include "cli_util.h"
#include "t.h"

static char out[C_OUT_CAP], err[C_OUT_CAP];

static int step_result(lil_call *call, void *ud)
{
    (void)ud;
    return lil_call_set_result(call, "some result", 11) != LIL_OK;
}

#define REC_KEY 32 /* offset of the key in a record */

/* Make run "r" with five steps and flip a payload byte of record 3;
 * returns that record's offset. */
static uint64_t make_damaged(void)
{
    uint64_t off = 0;
    size_t klen = 0, plen = 0;

    c_make_run("r", 5, true);
    T_CHECK(c_record_count("r") >= 7);
    T_CHECK(c_record_at("r", 3, &off, &klen, &plen));
    T_CHECK(plen > 0);
    T_CHECK(c_flip_byte(c_journal("r"), off + REC_KEY + klen));
    return off;
}

T_TEST(intact)
{
    json_t *doc;
    char want[128];

    c_make_run("r", 3, true);
    T_EQ_I64(c_lil(out, err, "check r --dir '%s'", c_store()), 0);
    snprintf(want, sizeof(want), "r: intact: %lld records, %llu bytes",
             (long long)c_record_count("r"), (unsigned long long)c_journal_bytes("r"));
    T_CONTAINS(out, want);
    T_CHECK(strstr(out, "torn") == NULL);
    T_EQ_I64(c_lil(out, err, "check r --json --dir '%s'", c_store()), 0);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_CHECK(json_is_true(json_object_get(doc, "intact")));
    T_CHECK(json_is_false(json_object_get(doc, "torn_tail")));
    T_CHECK(json_is_false(json_object_get(doc, "repaired")));
    T_CHECK(json_is_null(json_object_get(doc, "damage_offset")));
    T_EQ_I64(json_integer_value(json_object_get(doc, "records")), c_record_count("r"));
    T_EQ_I64(json_integer_value(json_object_get(doc, "valid_bytes")),
             c_journal_bytes("r"));
    json_decref(doc);
}

T_TEST(torn_tail_is_intact_but_reported)
{
    T_FILE_ONLY();
    unsigned char junk[40];
    uint64_t end, before;
    int64_t nrec;
    char want[128];
    json_t *doc;

    c_make_run("r", 3, true);
    end = c_journal_bytes("r");
    nrec = c_record_count("r");
    memset(junk, 0xab, sizeof(junk));
    T_REQUIRE(c_pwrite(c_journal("r"), end, junk, sizeof(junk)));
    before = c_file_hash(c_journal("r"));
    T_EQ_I64(c_lil(out, err, "check r --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "r: intact");
    snprintf(want, sizeof(want), "torn tail at offset %llu (", (unsigned long long)end);
    T_CONTAINS(out, want);
    T_CONTAINS(out, "truncated on next open");
    T_CHECK(c_file_hash(c_journal("r")) == before); /* check wrote nothing */
    T_EQ_I64(c_lil(out, err, "check r --json --dir '%s'", c_store()), 0);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_CHECK(json_is_true(json_object_get(doc, "intact")));
    T_CHECK(json_is_true(json_object_get(doc, "torn_tail")));
    T_EQ_I64(json_integer_value(json_object_get(doc, "torn_offset")), end);
    json_decref(doc);
    /* the records are all there; a writer truncates the tail */
    T_EQ_I64(c_record_count("r"), nrec);
    lil_store *st = c_open_store();
    T_OK(lil_run_close(c_open_run(st, "r")));
    lil_store_close(st);
    T_EQ_I64(c_lil(out, err, "check r --dir '%s'", c_store()), 0);
    T_CHECK(strstr(out, "torn") == NULL);
}

T_TEST(damage_in_the_middle)
{
    uint64_t off = make_damaged(), before = c_file_hash(c_journal("r"));
    char want[128];
    json_t *doc;

    T_EQ_I64(c_lil(out, err, "check r --dir '%s'", c_store()), 1);
    snprintf(want, sizeof(want),
             "r: DAMAGED at offset %llu: ", (unsigned long long)off);
    T_CONTAINS(out, want);
    T_CONTAINS(out, "2 valid records");
    T_CONTAINS(out, "--repair would cut");
    T_CHECK(c_file_hash(c_journal("r")) == before);
    T_EQ_I64(c_lil(out, err, "check r --json --dir '%s'", c_store()), 1);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_CHECK(json_is_false(json_object_get(doc, "intact")));
    T_CHECK(json_is_false(json_object_get(doc, "repaired")));
    T_EQ_I64(json_integer_value(json_object_get(doc, "damage_offset")), off);
    T_EQ_I64(json_integer_value(json_object_get(doc, "records")), 2);
    T_CHECK(json_string_length(json_object_get(doc, "message")) > 0);
    json_decref(doc);
    T_CHECK(c_file_hash(c_journal("r")) == before);
}

T_TEST(repair_cuts_at_the_damage)
{
    uint64_t off = make_damaged();
    char want[128];
    lil_store *st;
    lil_run *run = NULL;

    T_EQ_I64(c_lil(out, err, "check r --repair --dir '%s'", c_store()), 0);
    snprintf(want, sizeof(want), "r: repaired: truncated at offset %llu, cut ",
             (unsigned long long)off);
    T_CONTAINS(out, want);
    T_CONTAINS(out, "2 records kept");
    T_EQ_I64(c_lil(out, err, "check r --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "r: intact: 2 records");
    T_EQ_I64(c_record_count("r"), 2);
    T_EQ_I64(c_journal_bytes("r"), off);
    st = c_open_store();
    T_OK(lil_run_open(st, "r", NULL, &run));
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    lil_run_close(run);
    lil_store_close(st);
}

T_TEST(repair_json)
{
    uint64_t off = make_damaged();
    json_t *doc;

    T_EQ_I64(c_lil(out, err, "check r --repair --json --dir '%s'", c_store()), 0);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_CHECK(json_is_true(json_object_get(doc, "repaired")));
    T_EQ_I64(json_integer_value(json_object_get(doc, "damage_offset")), off);
    json_decref(doc);
}

T_TEST(repair_of_intact_journal_changes_nothing)
{
    int64_t n;

    c_make_run("r", 2, true);
    n = c_record_count("r");
    T_EQ_I64(c_lil(out, err, "check r --repair --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "r: intact");
    T_EQ_I64(c_record_count("r"), n);
}

T_TEST(repair_needs_the_lock)
{
    char want[128];
    pid_t holder;

    make_damaged();
    c_make_run("busy", 1, false);
    holder = c_hold("busy");
    T_REQUIRE(holder > 0);
    T_EQ_I64(c_lil(out, err, "check busy --dir '%s'", c_store()), 0);
    T_EQ_I64(c_lil(out, err, "check busy --repair --dir '%s'", c_store()), 75);
    snprintf(want, sizeof(want),
             "lil: check: run busy is held by pid %d; try again when it is done\n",
             (int)holder);
    T_EQ_STR(err, want);
    c_release(holder);
    T_EQ_I64(c_lil(out, err, "check busy --repair --dir '%s'", c_store()), 0);
}

T_TEST(missing_run)
{
    lil_store_close(c_open_store());
    T_EQ_I64(c_lil(out, err, "check nope --dir '%s'", c_store()), 1);
    T_CONTAINS(err, "lil: check: no run 'nope'");
}

T_TEST(damaged_header)
{
    c_make_run("r", 1, true);
    T_REQUIRE(c_flip_byte(c_journal("r"), 30)); /* inside the salt */
    T_EQ_I64(c_lil(out, err, "check r --dir '%s'", c_store()), 1);
    T_CHECK(strlen(out) + strlen(err) > 0);
}

T_TEST(newer_format_is_refused)
{
    T_FILE_ONLY();
    unsigned char hdr[64];
    FILE *f;

    c_make_run("r", 1, true);
    f = fopen(c_journal("r"), "rb");
    T_REQUIRE(f && fread(hdr, 1, sizeof(hdr), f) == sizeof(hdr));
    fclose(f);
    hdr[8] = 2; /* version */
    uLong crc = crc32(0L, hdr, 60);
    for (int i = 0; i < 4; i++)
        hdr[60 + i] = (unsigned char)(crc >> (8 * i));
    T_REQUIRE(c_pwrite(c_journal("r"), 0, hdr, sizeof(hdr)));
    T_EQ_I64(c_lil(out, err, "check r --dir '%s'", c_store()), 1);
    T_CONTAINS(err, "lil: check: ");
    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "version?");
}

/* Run r: BEGIN, OPEN and 98 steps with sync=off (its close writes no
 * CLOSE), then a payload byte of record 12 flipped; returns its offset. */
static uint64_t make_100_damaged_at_12(void)
{
    lil_store *st = c_open_store();
    lil_run_opts o = {sizeof(o), LIL_SYNC_OFF, 0, 0};
    lil_run *run = NULL;
    uint64_t off = 0;
    size_t klen = 0, plen = 0;

    T_OK(lil_run_open(st, "r", &o, &run));
    for (int i = 1; i <= 98; i++) {
        char name[16];
        snprintf(name, sizeof(name), "s%d", i);
        T_OK(lil_step(run, name, step_result, NULL, NULL));
    }
    T_OK(lil_run_close(run));
    lil_store_close(st);
    T_EQ_I64(c_record_count("r"), 100);
    T_CHECK(c_record_at("r", 12, &off, &klen, &plen));
    T_CHECK(c_flip_byte(c_journal("r"), off + REC_KEY + klen));
    return off;
}

T_TEST(damage_with_intact_steps_after_it)
{
    uint64_t off = make_100_damaged_at_12(), before = c_file_hash(c_journal("r"));
    char want[128];
    json_t *doc;

    T_EQ_I64(c_lil(out, err, "check r --dir '%s'", c_store()), 1);
    snprintf(want, sizeof(want),
             "r: DAMAGED at offset %llu: ", (unsigned long long)off);
    T_CONTAINS(out, want);
    T_CONTAINS(out, "88 intact records (88 steps) never synced");
    T_CONTAINS(out, "11 valid records");
    T_CONTAINS(out,
               "--repair would drop the 88 intact records (88 steps) after the damage");
    T_EQ_I64(c_lil(out, err, "check r --json --dir '%s'", c_store()), 1);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_CHECK(json_is_false(json_object_get(doc, "intact")));
    T_EQ_I64(json_integer_value(json_object_get(doc, "damage_offset")), off);
    T_EQ_I64(json_integer_value(json_object_get(doc, "records")), 11);
    T_EQ_I64(json_integer_value(json_object_get(doc, "records_after_damage")), 88);
    T_EQ_I64(json_integer_value(json_object_get(doc, "steps_after_damage")), 88);
    json_decref(doc);
    /* the open refuses: inspect says where and what follows */
    T_EQ_I64(c_lil(out, err, "inspect r --dir '%s'", c_store()), 1);
    snprintf(want, sizeof(want), "offset %llu", (unsigned long long)off);
    T_CONTAINS(err, want);
    T_CONTAINS(err, "88 intact records (88 steps)");
    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "damaged");
    T_CHECK(c_file_hash(c_journal("r")) == before);
    /* --repair drops them, and says so; then the run opens */
    T_EQ_I64(c_lil(out, err, "check r --repair --dir '%s'", c_store()), 0);
    snprintf(want, sizeof(want), "r: repaired: truncated at offset %llu, cut ",
             (unsigned long long)off);
    T_CONTAINS(out, want);
    T_CONTAINS(out, "11 records kept");
    T_CONTAINS(out, "dropped 88 intact records (88 steps) after the damage");
    T_EQ_I64(c_lil(out, err, "inspect r --dir '%s'", c_store()), 0);
    T_EQ_I64(c_lil(out, err, "check r --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "r: intact: 11 records");
}

T_TEST(journal_cut_inside_its_first_record)
{
    T_FILE_ONLY();
    json_t *doc;

    c_make_run("r", 1, false);
    T_REQUIRE(truncate(c_journal("r"), 64 + 40) == 0);
    /* a creation cut short leaves no rollback record (the first is written
     * at the first clean close): without it, the cut is a torn tail */
    char head[4200];
    snprintf(head, sizeof(head), "%s/r.head", c_store());
    T_EQ_I64(c_lil(out, err, "check r --dir '%s'", c_store()), 65);
    T_CONTAINS(err, "rolled back to seq 0 (last known ");
    T_REQUIRE(unlink(head) == 0);
    T_EQ_I64(c_lil(out, err, "check r --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "r: torn tail at offset 64: no complete record");
    T_EQ_I64(c_lil(out, err, "check r --json --dir '%s'", c_store()), 0);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_CHECK(json_is_true(json_object_get(doc, "intact")));
    T_CHECK(json_is_true(json_object_get(doc, "torn_tail")));
    T_EQ_I64(json_integer_value(json_object_get(doc, "records")), 0);
    T_EQ_I64(json_integer_value(json_object_get(doc, "torn_offset")), 64);
    json_decref(doc);
    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "unborn");
    T_EQ_I64(c_lil(out, err, "inspect r --dir '%s'", c_store()), 1);
    T_CONTAINS(err, "no complete record");
    T_EQ_I64(c_file_size(c_journal("r")), 64 + 40);
}

T_MAIN()
