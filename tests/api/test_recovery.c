/*
 * test_recovery.c -- what an open does with a journal that was cut short or
 * damaged, seen through lil.h only (the byte layout is docs/format.md).
 *
 *   - A journal cut at every length from 0 to the end of its BEGIN record (a
 *     creation cut short, the header included): a read-only open finds no
 *     run and writes nothing, check calls it a torn tail with no record, and
 *     a writable open starts it afresh: the journal then begins with BEGIN
 *     carrying the run id, a step appended after it replays, and check says
 *     intact.  In each sync mode.
 *   - One flipped byte in record 12 of 100 (BEGIN, OPEN, 98 steps, left by a
 *     process that died without closing), in each sync mode: check reports
 *     the damage, the 11 records before it and the 88 intact records (88
 *     steps) after it; every open refuses with LIL_E_CORRUPT saying so, logs
 *     it at WARN and writes nothing; check --repair truncates there and
 *     reports what it dropped; the run then opens, replays the steps before
 *     the damage and runs the others again.
 *   - Damage followed only by an OPEN record is a torn tail: it opens,
 *     read-only opens report it (lil_run_info), a writable open truncates it
 *     and logs the record it dropped.
 */
#include <lil/lil.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_util.h"
#include "t.h"

#define HEADER_LEN 64

static const lil_sync modes[3] = {LIL_SYNC_FULL, LIL_SYNC_NORMAL, LIL_SYNC_OFF};

/* Log lines kept by log_keep. */
struct logbuf {
    char text[16384];
    size_t len;
    int warns;
};

static void log_keep(void *ud, int level, const char *msg)
{
    struct logbuf *l = ud;
    int n = snprintf(l->text + l->len, sizeof(l->text) - l->len, "%d %s\n", level, msg);
    if (n > 0 && (size_t)n < sizeof(l->text) - l->len)
        l->len += (size_t)n;
    l->warns += level == LIL_LOG_WARN;
}

/* A store whose env logs into *l. */
static lil_store *logged_store(lil_env **env, struct logbuf *l)
{
    lil_store *st = NULL;
    memset(l, 0, sizeof(*l));
    T_OK(lil_env_new(env));
    T_OK(lil_env_set_log(*env, log_keep, l, LIL_LOG_DEBUG));
    T_OK(lil_store_open(*env, U_STORE, &st));
    return st;
}

static lil_check_report check(lil_store *st, const char *id, unsigned flags)
{
    lil_check_report rep;
    memset(&rep, 0, sizeof(rep));
    rep.struct_size = sizeof(rep);
    T_OK(lil_run_check(st, id, flags, &rep));
    return rep;
}

static int count_calls(lil_call *call, void *ud)
{
    (*(int *)ud)++;
    return lil_call_set_result(call, "A", 1) != LIL_OK;
}

/* Run r is opened and closed once; returns the end of its BEGIN record. */
static long long make_run(lil_store *st, lil_sync sync)
{
    lil_run *run = u_run_opts(st, "r", sync, 0, 0);
    struct u_recs rs;
    long long end = -1;

    if (!run)
        return -1;
    T_OK(u_collect(run, &rs));
    if (rs.n >= 1 && rs.r[0].type == LIL_REC_BEGIN)
        end = (long long)(rs.r[0].offset + rs.r[0].size);
    u_recs_free(&rs);
    T_OK(lil_run_close(run));
    return end;
}

/* After the cut: nothing for a reader, a torn tail with no record for
 * check, and nothing written by either. */
static void expect_no_run_yet(lil_store *st, long long cut)
{
    const char *path = u_journal_path(NULL, "r");
    lil_run *run = NULL;
    lil_run_opts ro = {sizeof(ro), LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0};
    lil_run_opts ex = {sizeof(ex), LIL_SYNC_DEFAULT, LIL_OPEN_EXISTING, 0};
    lil_check_report rep;

    T_EQ_I64(lil_run_open(st, "r", &ro, &run), LIL_E_NOTFOUND);
    T_CONTAINS(lil_store_errmsg(st), "no complete record");
    T_EQ_I64(lil_run_open(st, "r", &ex, &run), LIL_E_NOTFOUND);
    T_CHECK(run == NULL);
    rep = check(st, "r", 0);
    T_EQ_I64(rep.intact, 1);
    T_EQ_I64(rep.torn_tail, 1);
    T_EQ_I64(rep.records, 0);
    T_EQ_I64(rep.records_after_damage, 0);
    T_CONTAINS(rep.message, "no complete record");
    T_EQ_I64(u_file_size(path), cut);
}

/* A writable open starts it afresh: BEGIN with the run id, then OPEN; a
 * new step; a reopen replays it and check says intact. */
static void expect_fresh_start(lil_store *st, lil_sync sync)
{
    lil_run *run = u_run_opts(st, "r", sync, 0, 0);
    struct u_recs rs;
    int calls = 0;
    lil_check_report rep;

    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    T_OK(lil_step(run, "a", count_calls, &calls, NULL));
    T_EQ_I64(calls, 1);
    T_OK(lil_run_close(run));
    run = u_run_opts(st, "r", sync, 0, 0);
    T_REQUIRE(run);
    T_OK(lil_step(run, "a", count_calls, &calls, NULL));
    T_EQ_I64(calls, 1); /* replayed */
    T_OK(u_collect(run, &rs));
    T_REQUIRE(rs.n >= 4);
    T_EQ_I64(rs.r[0].type, LIL_REC_BEGIN);
    T_EQ_I64(rs.r[0].seq, 1);
    T_EQ_I64(rs.r[0].offset, HEADER_LEN);
    T_EQ_STR(rs.r[0].key, "r");
    T_EQ_I64(rs.r[1].type, LIL_REC_OPEN);
    T_CHECK(u_find(&rs, LIL_REC_STEP, "a") != NULL);
    u_recs_free(&rs);
    T_OK(lil_run_close(run));
    rep = check(st, "r", 0);
    T_EQ_I64(rep.intact, 1);
    T_EQ_I64(rep.torn_tail, 0);
}

/* Stores without a key of their own: its journals are crafted and damaged to test the
 * recovery rule, which is the same keyed or not; a rollback record would (rightly)
 * refuse a journal cut below a record it made (test_rollback.c tests keyed stores). */
__attribute__((constructor)) static void no_own_key(void)
{
    setenv("LIL_STORE_KEY", "off", 1);
}

T_TEST(journal_cut_inside_header_or_begin_starts_afresh)
{
    lil_env *env = NULL;
    struct logbuf l;
    lil_store *st = logged_store(&env, &l);
    const char *path = u_journal_path(NULL, "r");
    long long end = make_run(st, LIL_SYNC_FULL);

    T_REQUIRE(end > HEADER_LEN);
    for (long long cut = 0; cut <= end; cut++) {
        lil_sync sync = modes[cut % 3];
        unlink(path);
        T_EQ_I64(make_run(st, sync), end);
        T_REQUIRE(truncate(path, (off_t)cut) == 0);
        l.len = 0;
        l.text[0] = '\0';
        if (cut < end) {
            expect_no_run_yet(st, cut);
            expect_fresh_start(st, sync);
            T_CONTAINS(l.text, "event=restart run=r");
        } else { /* BEGIN whole: an ordinary journal */
            expect_fresh_start(st, sync);
            T_CHECK(strstr(l.text, "event=restart") == NULL);
        }
    }
    lil_store_close(st);
    lil_env_free(env);
}

/* Garbage after a whole header is not a cut header: the header's checksum
 * still decides.  A file cut in its header whose bytes are not a journal's
 * start is no journal (LIL_E_CORRUPT), and is left alone. */
T_TEST(short_file_that_is_no_journal_is_left_alone)
{
    lil_store *st = u_store(NULL);
    const char *path = u_journal_path(NULL, "r");
    lil_run *run = NULL;

    make_run(st, LIL_SYNC_FULL);
    T_REQUIRE(u_write_file(path, "hello", 5) == 0);
    T_EQ_I64(lil_run_open(st, "r", NULL, &run), LIL_E_CORRUPT);
    T_EQ_I64(u_file_size(path), 5);
    lil_store_close(st);
}

/* ---- damage with intact records after it ------------------------------- */

#define NSTEPS 98 /* with BEGIN and OPEN: 100 records */

static int make_100(void *ud)
{
    const lil_sync *sync = ud;
    lil_store *st = NULL;
    lil_run *run = NULL;
    char name[16], text[32];

    if (lil_store_open(NULL, U_STORE, &st) != LIL_OK)
        return 10;
    if (lil_run_open(st, "r", &(lil_run_opts){sizeof(lil_run_opts), *sync, 0, 0},
                     &run) != LIL_OK)
        return 11;
    for (int i = 1; i <= NSTEPS; i++) {
        snprintf(name, sizeof(name), "s%d", i);
        snprintf(text, sizeof(text), "result %d", i);
        if (u_step_text(run, name, text) != LIL_OK)
            return 12;
    }
    _exit(0); /* no close, as a crash leaves it */
}

/* The offset and size of record seq of run r (read-only). */
static int record_at(lil_store *st, uint64_t seq, uint64_t *off, uint32_t *size,
                     size_t *n)
{
    lil_run *run = u_run_opts(st, "r", LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0);
    struct u_recs rs;
    int found = 0;

    if (!run)
        return 0;
    T_OK(u_collect(run, &rs));
    *n = rs.n;
    for (size_t i = 0; i < rs.n; i++)
        if (rs.r[i].seq == seq) {
            *off = rs.r[i].offset;
            *size = rs.r[i].size;
            found = 1;
        }
    u_recs_free(&rs);
    T_OK(lil_run_close(run));
    return found;
}

static void expect_refused(lil_store *st, struct logbuf *l, lil_sync sync,
                           unsigned flags, uint64_t off)
{
    lil_run *run = NULL;
    lil_run_opts o = {sizeof(o), sync, flags, 0};

    l->len = 0;
    l->text[0] = '\0';
    T_EQ_I64(lil_run_open(st, "r", &o, &run), LIL_E_CORRUPT);
    T_CHECK(run == NULL);
    T_CHECK(u_mentions_offset(lil_store_errmsg(st), off));
    T_CONTAINS(lil_store_errmsg(st), "88 intact records (88 steps)");
    T_CONTAINS(lil_store_errmsg(st), "lil check --repair");
    T_CONTAINS(l->text, "30 event=damaged run=r");
    T_CONTAINS(l->text, "records_after=88 steps_after=88");
}

static void flipped_record_12_of_100(lil_sync sync)
{
    lil_env *env = NULL;
    struct logbuf l;
    lil_store *st = logged_store(&env, &l);
    const char *path = u_journal_path(NULL, "r");
    uint64_t off = 0;
    uint32_t size = 0;
    size_t n = 0;
    unsigned char byte;
    lil_check_report rep;
    long long bytes;
    int calls = 0;

    T_EQ_I64(u_wait(u_fork(make_100, &sync)), 0);
    T_REQUIRE(record_at(st, 12, &off, &size, &n));
    T_EQ_I64(n, 100);
    {
        size_t len = 0;
        unsigned char *all = u_read_file(path, &len);
        T_REQUIRE(all && len > off + 40);
        byte = all[off + 40] ^ 0x20; /* in the key or payload of step s10 */
        free(all);
    }
    T_REQUIRE(u_write_at(path, off + 40, &byte, 1) == 0);
    bytes = u_file_size(path);

    rep = check(st, "r", 0);
    T_EQ_I64(rep.intact, 0);
    T_EQ_I64(rep.torn_tail, 0);
    T_EQ_I64(rep.damage_offset, off);
    T_EQ_I64(rep.records, 11);
    T_EQ_I64(rep.valid_bytes, off);
    T_EQ_I64(rep.records_after_damage, 88);
    T_EQ_I64(rep.steps_after_damage, 88);
    expect_refused(st, &l, sync, 0, off);
    expect_refused(st, &l, sync, LIL_OPEN_READONLY, off);
    T_EQ_I64(u_file_size(path), bytes); /* nothing written */

    rep = check(st, "r", LIL_CHECK_REPAIR);
    T_EQ_I64(rep.repaired, 1);
    T_EQ_I64(rep.damage_offset, off);
    T_EQ_I64(rep.records, 11);
    T_EQ_I64(rep.records_after_damage, 88);
    T_EQ_I64(u_file_size(path), (long long)off);

    lil_run *run = u_run_opts(st, "r", sync, 0, 0);
    T_REQUIRE(run);
    for (int i = 1; i <= 11; i++) {
        char name[16];
        snprintf(name, sizeof(name), "s%d", i);
        T_OK(lil_step(run, name, count_calls, &calls, NULL));
        T_EQ_I64(calls, i <= 9 ? 0 : i - 9); /* s1..s9 replay, s10 on run again */
    }
    T_OK(lil_run_close(run));
    rep = check(st, "r", 0);
    T_EQ_I64(rep.intact, 1);
    T_EQ_I64(rep.torn_tail, 0);
    lil_store_close(st);
    lil_env_free(env);
}

T_TEST(flipped_byte_in_record_12_of_100_sync_off)
{
    flipped_record_12_of_100(LIL_SYNC_OFF);
}

T_TEST(flipped_byte_in_record_12_of_100_sync_normal)
{
    flipped_record_12_of_100(LIL_SYNC_NORMAL);
}

T_TEST(flipped_byte_in_record_12_of_100_sync_full)
{
    flipped_record_12_of_100(LIL_SYNC_FULL);
}

/* A clean close (CLOSE), then a process that opened the run (OPEN, not
 * synced after a CLOSE) and died.  Damage in the CLOSE record has only
 * that OPEN after it: a torn tail, dropped with it. */
static int open_and_die(void *ud)
{
    lil_store *st = NULL;
    lil_run *run = NULL;

    (void)ud;
    if (lil_store_open(NULL, U_STORE, &st) != LIL_OK ||
        lil_run_open(st, "r",
                     &(lil_run_opts){sizeof(lil_run_opts), LIL_SYNC_NORMAL, 0, 0},
                     &run) != LIL_OK)
        return 10;
    _exit(0);
}

T_TEST(damage_followed_only_by_open_is_a_torn_tail)
{
    lil_env *env = NULL;
    struct logbuf l;
    lil_store *st = logged_store(&env, &l);
    const char *path = u_journal_path(NULL, "r");
    lil_run *run = u_run_opts(st, "r", LIL_SYNC_NORMAL, 0, 0);
    lil_run_info info = {.struct_size = sizeof(info)};
    lil_check_report rep;
    uint64_t off = 0;
    uint32_t size = 0;
    size_t n = 0;
    unsigned char *all;
    size_t len = 0;
    unsigned char byte;
    int never = 0;

    T_REQUIRE(run);
    T_OK(u_step_text(run, "a", "A"));
    T_OK(lil_run_close(run));                        /* BEGIN OPEN STEP CLOSE */
    T_EQ_I64(u_wait(u_fork(open_and_die, NULL)), 0); /* + OPEN */
    T_REQUIRE(record_at(st, 4, &off, &size, &n));
    T_EQ_I64(n, 5);
    all = u_read_file(path, &len);
    T_REQUIRE(all && len > off + 20);
    byte = all[off + 20] ^ 0x5a; /* a byte of CLOSE's time, changed whatever it was */
    free(all);
    T_REQUIRE(u_write_at(path, off + 20, &byte, 1) == 0);

    rep = check(st, "r", 0);
    T_EQ_I64(rep.intact, 1);
    T_EQ_I64(rep.torn_tail, 1);
    T_EQ_I64(rep.records, 3);
    T_EQ_I64(rep.records_after_damage, 1);
    T_EQ_I64(rep.steps_after_damage, 0);
    T_CONTAINS(rep.message, "only OPEN and CLOSE");
    run = u_run_opts(st, "r", LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0);
    T_REQUIRE(run);
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64(info.records, 3);
    T_EQ_I64(info.torn_offset, off);
    T_EQ_I64(info.torn_records, 1);
    T_OK(lil_run_close(run));

    l.len = 0;
    run = u_run_opts(st, "r", LIL_SYNC_NORMAL, 0, 0);
    T_REQUIRE(run);
    T_CONTAINS(l.text, "30 event=torn_tail run=r");
    T_CONTAINS(l.text, "records_after=1");
    T_OK(lil_step(run, "a", fn_never, &never, NULL));
    T_EQ_I64(never, 0);
    T_OK(lil_run_close(run));
    rep = check(st, "r", 0);
    T_EQ_I64(rep.intact, 1);
    T_EQ_I64(rep.torn_tail, 0);
    lil_store_close(st);
    lil_env_free(env);
}

T_MAIN()
