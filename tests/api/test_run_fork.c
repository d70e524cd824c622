/*
 * test_run_fork.c -- lil_run_fork and lil_run_diff on an ordinary program
 * run (lil_step, lil_effect), through lil.h.
 *
 * What it proves: a fork at step N keeps steps 1 to N-1, which replay in
 * the fork without running, and the program goes on from step N; the
 * source's journal is the same bytes after the fork; the fork's chain
 * verifies and its record 2 is the provenance (LIL_REC_FORK, keyed by the
 * source); a fork into another store is sealed under that store's key and
 * opens there; a cut inside an effect (an intent without its outcome) is
 * refused naming the nearest valid cuts, as are a step past the run, a
 * NEW that exists, a missing source and bad options; lil_run_diff finds
 * the first divergence and the step whose result differs.  The same tests
 * run against PostgreSQL (tests/pg).
 */
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "t.h"

/* Program "wf": steps s1 s2, effect e3 (request "req"), step s4; result r. */
static void workflow(lil_store *st, const char *id, const char *e3_result, int *ran)
{
    struct fn_ctx e3 = {.result = e3_result, .result_len = strlen(e3_result)};
    lil_bytes out = {0};
    lil_run *run = u_run(st, id);

    T_REQUIRE(run != NULL);
    T_OK(u_step_text(run, "s1", "v1"));
    T_OK(u_step_text(run, "s2", "v2"));
    T_OK(lil_effect(run, "e3", "req", 3, fn_generic, &e3, &out));
    T_EQ_MEM(out.data, out.len, e3_result, strlen(e3_result));
    lil_free(out.data);
    T_OK(u_step_text(run, "s4", "v4"));
    T_OK(lil_run_complete(run, "r", 1));
    T_OK(lil_run_close(run));
    if (ran)
        *ran = e3.calls;
}

static lil_status fork_at(lil_store *from, const char *id, int kind, uint64_t at,
                          lil_store *to, const char *new_id, lil_bytes *json)
{
    lil_run_fork_opts o = {.struct_size = sizeof(o),
                           .at_kind = kind,
                           .at = at,
                           .actor = "tester",
                           .reason = "try again"};

    return lil_run_fork(from, id, &o, to, new_id, json);
}

T_TEST(fork_at_a_step_replays_before_it_and_runs_from_it)
{
    lil_store *st = u_store(NULL);
    lil_bytes doc = {0}, out = {0};
    size_t n0 = 0, n1 = 0;
    int never = 0, ran = 0;

    T_REQUIRE(st != NULL);
    workflow(st, "wf", "first", &ran);
    T_EQ_I64(ran, 1);
    unsigned char *before = u_journal_read(NULL, "wf", &n0);
    T_REQUIRE(before != NULL);

    T_OK(fork_at(st, "wf", LIL_FORK_AT_STEP, 3, st, "wf2", &doc));
    T_CONTAINS(doc.data, "\"kind\":\"program\"");
    T_CONTAINS(doc.data, "\"step\":3");
    lil_free(doc.data);
    unsigned char *after = u_journal_read(NULL, "wf", &n1);
    T_REQUIRE(after != NULL);
    T_EQ_MEM(after, n1, before, n0); /* the source: the same bytes */

    lil_check_report rep = {.struct_size = sizeof(rep)};
    T_OK(lil_run_check(st, "wf2", 0, &rep));
    T_CHECK(rep.intact);

    /* the fork: s1, s2 replay; e3 and s4 run; record 2 its provenance */
    lil_run *run = u_run(st, "wf2");
    T_REQUIRE(run != NULL);
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    struct u_recs recs = {0};
    T_OK(u_collect(run, &recs));
    T_REQUIRE(recs.n >= 2);
    T_EQ_I64(recs.r[1].type, LIL_REC_FORK);
    T_EQ_STR(recs.r[1].key, "wf");
    T_CONTAINS((const char *)recs.r[1].payload, "\"source\":\"wf\"");
    T_CONTAINS((const char *)recs.r[1].payload, "\"actor\":\"tester\"");
    T_CONTAINS((const char *)recs.r[1].payload, "\"reason\":\"try again\"");
    T_CHECK(u_find(&recs, LIL_REC_INTENT, "e3") == NULL); /* step 3 dropped */
    u_recs_free(&recs);
    T_OK(lil_step(run, "s1", fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "v1", 2);
    lil_free(out.data);
    T_OK(lil_step(run, "s2", fn_never, &never, &out));
    lil_free(out.data);
    T_EQ_I64(never, 0);
    struct fn_ctx e3 = {.result = "second", .result_len = 6};
    T_OK(lil_effect(run, "e3", "req", 3, fn_generic, &e3, &out));
    T_EQ_I64(e3.calls, 1);
    lil_free(out.data);
    T_OK(u_step_text(run, "s4", "v4"));
    T_OK(lil_run_complete(run, "r", 1));
    T_OK(lil_run_close(run));

    /* the read API's event of the provenance */
    lil_bytes ev = {0};
    T_OK(lil_run_events(st, "wf2", 0, 0, &ev));
    T_CONTAINS(ev.data, "\"type\":\"forked\"");
    T_CONTAINS(ev.data, "\"source\":\"wf\"");
    lil_free(ev.data);

    /* diff: alike up to e3's outcome, which differs */
    lil_bytes d = {0};
    T_OK(lil_run_diff(st, "wf", st, "wf2", &d));
    T_CONTAINS(d.data, "\"identical\":false");
    T_CONTAINS(d.data, "\"change\":\"differs\"");
    T_CONTAINS(d.data, "\"result\":\"first\"");
    T_CONTAINS(d.data, "\"result\":\"second\"");
    T_CONTAINS(d.data, "\"divergence\":{\"a\":{\"key\":\"e3\"");
    lil_free(d.data);
    T_OK(lil_run_diff(st, "wf", st, "wf", &d));
    T_CONTAINS(d.data, "\"identical\":true");
    T_CONTAINS(d.data, "\"divergence\":null");
    lil_free(d.data);
    free(before);
    free(after);
    lil_store_close(st);
}

T_TEST(fork_into_another_store_opens_there)
{
    lil_store *a = u_store(NULL), *b = u_store("other");
    lil_bytes out = {0};
    int never = 0;

    T_REQUIRE(a != NULL && b != NULL);
    workflow(a, "wf", "first", NULL);
    T_OK(fork_at(a, "wf", LIL_FORK_AT_STEP, 5, b, "wf", NULL)); /* whole, same id */
    lil_check_report rep = {.struct_size = sizeof(rep)};
    T_OK(lil_run_check(b, "wf", 0, &rep));
    T_CHECK(rep.intact);
    lil_run *run = u_run(b, "wf");
    T_REQUIRE(run != NULL);
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING); /* RUN_DONE was after step 4 */
    T_OK(lil_effect(run, "e3", "req", 3, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "first", 5);
    T_EQ_I64(never, 0);
    lil_free(out.data);
    T_OK(lil_run_close(run));
    lil_store_close(b);
    lil_store_close(a);
}

/* A child that dies inside effect e2 of run "unc": its intent stays. */
static int die_in_effect(void *ud)
{
    lil_store *st = u_store(NULL);
    lil_run *run = st ? u_run(st, "unc") : NULL;
    struct fn_ctx e = {.die = 1};
    lil_bytes out = {0};

    (void)ud;
    if (!run || u_step_text(run, "s1", "v1") != LIL_OK)
        return 2;
    (void)lil_effect(run, "e2", "req", 3, fn_generic, &e, &out);
    return 3; /* not reached */
}

T_TEST(cuts_at_no_valid_point_are_refused)
{
    lil_store *st = u_store(NULL);
    lil_run_fork_opts bad = {.struct_size = 1, .at_kind = LIL_FORK_AT_SEQ, .at = 2};

    T_REQUIRE(st != NULL);
    T_EQ_I64(u_wait(u_fork(die_in_effect, NULL)), 0);
    /* records: 1 begin, 2 open, 3 s1, 4 intent e2 */
    T_EQ_I64(fork_at(st, "unc", LIL_FORK_AT_SEQ, 5, st, "x", NULL), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(st), "falls inside an effect");
    T_CONTAINS(lil_store_errmsg(st), "--at-seq 4");
    T_OK(fork_at(st, "unc", LIL_FORK_AT_SEQ, 4, st, "x", NULL));
    T_EQ_I64(fork_at(st, "unc", LIL_FORK_AT_STEP, 3, st, "y", NULL), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(st), "1 to 2");
    T_EQ_I64(fork_at(st, "unc", LIL_FORK_AT_ITERATION, 1, st, "y", NULL), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(st), "not a loop run");
    T_EQ_I64(fork_at(st, "unc", LIL_FORK_AT_SEQ, 4, st, "x", NULL), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(st), "already exists");
    T_EQ_I64(fork_at(st, "nosuch", LIL_FORK_AT_SEQ, 2, st, "y", NULL), LIL_E_NOTFOUND);
    T_EQ_I64(lil_run_fork(st, "unc", NULL, st, "y", NULL), LIL_E_INVAL);
    T_EQ_I64(lil_run_fork(st, "unc", &bad, st, "y", NULL), LIL_E_INVAL);
    T_EQ_I64(lil_run_fork(st, "unc", NULL, NULL, "y", NULL), LIL_E_INVAL);
    T_EQ_I64(fork_at(st, "unc", LIL_FORK_AT_SEQ, 2, st, "bad/id", NULL), LIL_E_INVAL);
    T_EQ_I64(lil_run_diff(st, "unc", st, "nosuch", &(lil_bytes){0}), LIL_E_NOTFOUND);
    T_EQ_I64(lil_run_diff(st, "unc", st, "x", NULL), LIL_E_INVAL);
    lil_store_close(st);
}

T_MAIN()
