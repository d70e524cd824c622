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
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lil/lil.h>

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

T_MAIN()
