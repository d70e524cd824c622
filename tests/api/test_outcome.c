/*
 * test_outcome.c -- lil_run_complete, lil_run_fail and lil_run_result: the
 * outcome is journaled, survives a reopen, ends the run for new steps while
 * journaled steps still replay, and can be recorded only once.  Closing an
 * ended run gives back the journal's preallocated space; closing a running
 * one keeps a little of it for the process that resumes.
 */
#include <lil/lil.h>
#include <string.h>
#include <sys/stat.h>

#include "api_util.h"
#include "t.h"

/* fresh: the handle has run no step yet, so "a" is occurrence 1 and
 * replays; on the handle that ran "a", another "a" would be "a#2". */
static void check_completed(lil_run *run, int fresh)
{
    int never = 0;
    lil_bytes out = {0};
    T_EQ_I64(lil_run_status(run), LIL_RUN_COMPLETED);
    T_OK(lil_run_result(run, &out));
    T_EQ_MEM(out.data, out.len, "total=42", 8);
    T_CHECK(out.data && ((char *)out.data)[out.len] == '\0');
    lil_free(out.data);
    if (fresh) {
        T_OK(lil_step(run, "a", fn_never, &never, &out));
        T_EQ_MEM(out.data, out.len, "A", 1);
        lil_free(out.data);
    }
    out = (lil_bytes){(void *)"garbage", 7};
    T_EQ_I64(lil_step(run, "new", fn_never, &never, &out), LIL_E_DONE);
    T_CHECK(out.data == NULL && out.len == 0);
    T_EQ_I64(lil_effect(run, "neweff", "q", 1, fn_never, &never, NULL), LIL_E_DONE);
    T_EQ_I64(never, 0);
    T_EQ_I64(lil_run_complete(run, "again", 5), LIL_E_DONE);
    T_EQ_I64(lil_run_fail(run, "too late"), LIL_E_DONE);
}

T_TEST(complete_then_reopen)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(u_step_text(run, "a", "A"));
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    T_OK(lil_run_complete(run, "total=42", 8));
    check_completed(run, 0);
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    check_completed(run, 1);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(complete_empty_result)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_run_complete(run, NULL, 0));
    lil_bytes out = {(void *)"garbage", 7};
    T_OK(lil_run_result(run, &out));
    T_EQ_I64(out.len, 0);
    T_CHECK(out.data && ((char *)out.data)[0] == '\0');
    lil_free(out.data);
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_COMPLETED);
    T_OK(lil_run_result(run, &out));
    T_EQ_I64(out.len, 0);
    lil_free(out.data);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

static void check_failed(lil_run *run, int fresh)
{
    int never = 0;
    lil_bytes out = {(void *)"garbage", 7};
    T_EQ_I64(lil_run_status(run), LIL_RUN_FAILED);
    T_EQ_STR(lil_run_state_name(LIL_RUN_FAILED), "failed");
    T_EQ_I64(lil_run_result(run, &out), LIL_E_FAILED);
    T_CHECK(out.data == NULL && out.len == 0);
    T_CONTAINS(lil_run_errmsg(run), "quota exhausted");
    T_CONTAINS(lil_errmsg(), "quota exhausted");
    if (fresh)
        T_OK(lil_step(run, "a", fn_never, &never, NULL));
    T_EQ_I64(lil_step(run, "b", fn_never, &never, NULL), LIL_E_DONE);
    T_EQ_I64(never, 0);
    T_EQ_I64(lil_run_complete(run, "x", 1), LIL_E_DONE);
    T_EQ_I64(lil_run_fail(run, "again"), LIL_E_DONE);
}

T_TEST(fail_with_reason)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(u_step_text(run, "a", "A"));
    T_OK(lil_run_fail(run, "quota exhausted"));
    check_failed(run, 0);
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    check_failed(run, 1);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(result_before_outcome_notfound)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    lil_bytes out = {(void *)"garbage", 7};
    T_EQ_I64(lil_run_result(run, &out), LIL_E_NOTFOUND);
    T_CHECK(out.data == NULL && out.len == 0);
    T_OK(u_step_text(run, "a", "A"));
    T_EQ_I64(lil_run_result(run, &out), LIL_E_NOTFOUND);
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    T_EQ_I64(lil_run_result(run, &out), LIL_E_NOTFOUND);
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    T_EQ_STR(lil_run_state_name(LIL_RUN_RUNNING), "running");
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(outcome_record_journaled)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_run_complete(run, "bin\0ary", 7));
    struct u_recs rs;
    T_OK(u_collect(run, &rs));
    T_REQUIRE(rs.n > 0);
    const struct u_rec *last = &rs.r[rs.n - 1];
    T_EQ_I64(last->type, LIL_REC_RUN_DONE);
    T_EQ_MEM(last->payload, last->payload_len, "bin\0ary", 7);
    u_recs_free(&rs);
    T_OK(lil_run_close(run));

    run = u_run(st, "f");
    T_REQUIRE(run);
    T_OK(lil_run_fail(run, "why not"));
    T_OK(u_collect(run, &rs));
    T_REQUIRE(rs.n > 0);
    last = &rs.r[rs.n - 1];
    T_EQ_I64(last->type, LIL_REC_RUN_FAILED);
    T_CONTAINS((const char *)last->payload, "why not");
    u_recs_free(&rs);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(run_result_binary_with_nul)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_run_complete(run, "bin\0ary", 7));
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    lil_bytes out = {0};
    T_OK(lil_run_result(run, &out));
    T_EQ_MEM(out.data, out.len, "bin\0ary", 7);
    lil_free(out.data);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_MAIN()

static long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

static long long journal_bytes(lil_store *st)
{
    lil_run_opts ro = {.struct_size = sizeof(ro), .flags = LIL_OPEN_READONLY};
    lil_run *run = NULL;
    lil_run_info info = {.struct_size = sizeof(info)};
    T_OK(lil_run_open(st, "r", &ro, &run));
    T_OK(lil_run_get_info(run, &info));
    T_OK(lil_run_close(run));
    return (long long)info.journal_bytes;
}

T_TEST(close_keeps_a_little_space_while_running_gives_it_back_when_ended)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    struct fn_ctx c = {.result = "x", .result_len = 1};
    T_OK(lil_step(run, "a", fn_generic, &c, NULL));
    T_OK(lil_run_close(run));
    const char *path = u_journal_path(NULL, "r");
    long long kept = file_size(path) - journal_bytes(st);
    T_CHECK(kept > 0 && kept <= 64 * 1024); /* zeros kept for the next process */

    run = u_run(st, "r"); /* the resumed run appends into that space */
    T_REQUIRE(run);
    T_OK(lil_step(run, "a", fn_never, &c.calls, NULL));
    T_EQ_I64(c.calls, 1); /* replayed, not run again */
    T_OK(lil_run_complete(run, "ok", 2));
    T_OK(lil_run_close(run));
    T_EQ_I64(file_size(path), journal_bytes(st));
    lil_store_close(st);
}
