/*
 * test_effects.c -- lil_effect, uncertainty and lil_run_resolve.
 *
 * An effect's intent (SHA-256 of the request) is in the journal before its
 * function runs; a forked child that _exits inside the function leaves the
 * run uncertain, and the three resolutions (retry, assume-done, abort) are
 * checked from the outside: who runs, with which attempt number and
 * idempotency key, what the run's state becomes, and that the decision
 * survives a reopen.  Non-deterministic replays (another request, another
 * kind of step at the same identity) must fail with LIL_E_NONDET.
 */
#include <lil/lil.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "api_util.h"
#include "t.h"

/* ---- intent before outcome ---------------------------------------------- */

struct peek {
    lil_store *st;
    int calls;
    lil_status ro_rc;
    int last_type;
    unsigned last_flags;
    char last_key[64];
    size_t last_payload_len;
    unsigned attempt;
};

/* Inside the effect: look at the journal through a read-only handle. */
static int fn_peek(lil_call *call, void *ud)
{
    struct peek *p = ud;
    lil_run_opts o = {.struct_size = sizeof(o), .flags = LIL_OPEN_READONLY};
    lil_run *ro = NULL;
    struct u_recs rs = {0};
    p->calls++;
    p->attempt = lil_call_attempt(call);
    p->ro_rc = lil_run_open(p->st, "r", &o, &ro);
    if (p->ro_rc == LIL_OK && u_collect(ro, &rs) == LIL_OK && rs.n > 0) {
        const struct u_rec *last = &rs.r[rs.n - 1];
        p->last_type = last->type;
        p->last_flags = last->flags;
        snprintf(p->last_key, sizeof(p->last_key), "%s", last->key);
        p->last_payload_len = last->payload_len;
    }
    u_recs_free(&rs);
    lil_run_close(ro);
    return lil_call_set_result(call, "done", 4) != LIL_OK;
}

T_TEST(intent_synced_before_fn_then_outcome)
{
    const char req[] = "POST /charge amount=10";
    unsigned char md[32];
    unsigned int mdlen = 0;
    T_REQUIRE(EVP_Digest(req, strlen(req), md, &mdlen, EVP_sha256(), NULL) == 1);
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    struct peek p = {.st = st};
    lil_bytes out = {0};
    T_OK(lil_effect(run, "e", req, strlen(req), fn_peek, &p, &out));
    T_EQ_I64(p.calls, 1);
    T_EQ_I64(p.attempt, 1);
    T_EQ_I64(p.ro_rc, LIL_OK);
    T_EQ_I64(p.last_type, LIL_REC_INTENT);
    T_EQ_STR(p.last_key, "e");
    T_CHECK(p.last_flags & LIL_RECF_EFFECT);
    T_EQ_I64(p.last_payload_len, 32);
    T_EQ_MEM(out.data, out.len, "done", 4);
    lil_free(out.data);

    struct u_recs rs;
    T_OK(u_collect(run, &rs));
    T_REQUIRE(rs.n >= 2);
    const struct u_rec *in = &rs.r[rs.n - 2], *st_rec = &rs.r[rs.n - 1];
    T_EQ_I64(in->type, LIL_REC_INTENT);
    T_EQ_STR(in->key, "e");
    T_EQ_MEM(in->payload, in->payload_len, md, 32);
    T_EQ_I64(st_rec->type, LIL_REC_STEP);
    T_EQ_STR(st_rec->key, "e");
    T_CHECK(st_rec->flags & LIL_RECF_EFFECT);
    T_EQ_MEM(st_rec->payload, st_rec->payload_len, "done", 4);
    u_recs_free(&rs);
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    T_OK(lil_run_close(run));

    run = u_run(st, "r");
    T_REQUIRE(run);
    int never = 0;
    T_OK(lil_effect(run, "e", req, strlen(req), fn_never, &never, &out));
    T_EQ_I64(never, 0);
    T_EQ_MEM(out.data, out.len, "done", 4);
    lil_free(out.data);
    T_EQ_I64(lil_run_uncertain_count(run), 0);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(effect_null_request_and_failure)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    struct fn_ctx ok = {.result = "k", .result_len = 1};
    struct fn_ctx bad = {.fail_msg = "card declined"};
    T_OK(lil_effect(run, "n", NULL, 0, fn_generic, &ok, NULL));
    T_EQ_I64(lil_effect(run, "f", "x", 1, fn_generic, &bad, NULL), LIL_E_FAILED);
    T_CONTAINS(lil_run_errmsg(run), "card declined");
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    T_OK(lil_run_close(run));

    run = u_run(st, "r");
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    T_EQ_I64(lil_run_uncertain_count(run), 0);
    int never = 0;
    lil_bytes out = {0};
    T_OK(lil_effect(run, "n", NULL, 0, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "k", 1);
    lil_free(out.data);
    T_EQ_I64(lil_effect(run, "f", "x", 1, fn_never, &never, NULL), LIL_E_FAILED);
    T_CONTAINS(lil_run_errmsg(run), "card declined");
    T_EQ_I64(never, 0);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* ---- uncertainty ---------------------------------------------------------- */

/* Child: charge once (completes), charge again and die inside it. */
static int child_charges_and_dies(void *ud)
{
    (void)ud;
    lil_store *st = NULL;
    lil_run *run = NULL;
    if (lil_store_open(NULL, U_STORE, &st) != LIL_OK)
        return 10;
    if (lil_run_open(st, "r", NULL, &run) != LIL_OK)
        return 11;
    struct fn_ctx c1 = {.result = "c1", .result_len = 2};
    if (lil_effect(run, "charge", "req", 3, fn_generic, &c1, NULL) != LIL_OK)
        return 12;
    struct fn_ctx c2 = {.key_file = "child.key", .die = 1};
    lil_effect(run, "charge", "req", 3, fn_generic, &c2, NULL);
    return 13; /* not reached */
}

/* Leave run "r" uncertain at charge#2; returns the child's key (malloc'd). */
static char *make_uncertain(void)
{
    pid_t pid = u_fork(child_charges_and_dies, NULL);
    T_CHECK(pid > 0);
    if (pid <= 0)
        return NULL;
    T_EQ_I64(u_wait(pid), 0);
    size_t n = 0;
    return (char *)u_read_file("child.key", &n);
}

static void check_uncertain(lil_run *run)
{
    int never = 0;
    lil_bytes out = {(void *)"garbage", 3};
    T_EQ_I64(lil_run_status(run), LIL_RUN_UNCERTAIN);
    T_EQ_STR(lil_run_state_name(lil_run_status(run)), "uncertain");
    T_EQ_I64(lil_run_uncertain_count(run), 1);
    T_EQ_STR(lil_run_uncertain_at(run, 0), "charge#2");
    T_CHECK(lil_run_uncertain_at(run, 1) == NULL);
    T_EQ_I64(lil_step(run, "other", fn_never, &never, &out), LIL_E_UNCERTAIN);
    T_CHECK(out.data == NULL && out.len == 0);
    T_EQ_I64(lil_effect(run, "charge", "req", 3, fn_never, &never, NULL),
             LIL_E_UNCERTAIN);
    T_EQ_I64(lil_effect(run, "new", "q", 1, fn_never, &never, NULL), LIL_E_UNCERTAIN);
    T_EQ_I64(lil_run_complete(run, "x", 1), LIL_E_UNCERTAIN);
    T_EQ_I64(never, 0);
}

T_TEST(child_dies_inside_effect_leaves_uncertain)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    char *key = make_uncertain();
    T_REQUIRE(key);
    T_CHECK(u_is_idem_key(key));
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    check_uncertain(run);
    T_OK(lil_run_close(run));
    run = u_run(st, "r"); /* still uncertain: nothing decided */
    T_REQUIRE(run);
    check_uncertain(run);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    free(key);
}

static const struct u_rec *find_resolve(const struct u_recs *rs)
{
    return u_find(rs, LIL_REC_RESOLVE, "charge#2");
}

T_TEST(resolve_retry_runs_again_attempt_2)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    char *key = make_uncertain();
    T_REQUIRE(key);
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_run_resolve(run, "charge#2", LIL_RESOLVE_RETRY, NULL, 0, "alice",
                         "bank says no charge"));
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    T_EQ_I64(lil_run_uncertain_count(run), 0);
    int never = 0;
    lil_bytes out = {0};
    T_OK(lil_effect(run, "charge", "req", 3, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "c1", 2);
    lil_free(out.data);
    T_EQ_I64(never, 0);
    struct fn_ctx c = {.result = "c2", .result_len = 2};
    T_OK(lil_effect(run, "charge", "req", 3, fn_generic, &c, &out));
    T_EQ_I64(c.calls, 1);
    T_EQ_I64(c.attempt, 2);
    T_EQ_STR(c.identity, "charge#2");
    T_EQ_STR(c.key, key);
    T_EQ_MEM(out.data, out.len, "c2", 2);
    lil_free(out.data);

    struct u_recs rs;
    T_OK(u_collect(run, &rs));
    const struct u_rec *res = find_resolve(&rs);
    T_CHECK(res != NULL);
    if (res) {
        T_CONTAINS((const char *)res->payload, "alice");
        T_CONTAINS((const char *)res->payload, "bank says no charge");
        T_CONTAINS((const char *)res->payload, "retry");
    }
    u_recs_free(&rs);
    T_OK(lil_run_close(run));

    run = u_run(st, "r");
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    T_OK(lil_effect(run, "charge", "req", 3, fn_never, &never, NULL));
    T_OK(lil_effect(run, "charge", "req", 3, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "c2", 2);
    lil_free(out.data);
    T_EQ_I64(never, 0);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    free(key);
}

T_TEST(resolve_assume_done_returns_result_without_running)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    char *key = make_uncertain();
    T_REQUIRE(key);
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_run_resolve(run, "charge#2", LIL_RESOLVE_ASSUME_DONE, "receipt-9", 9,
                         "bob", "seen in the bank statement"));
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    int never = 0;
    lil_bytes out = {0};
    T_OK(lil_effect(run, "charge", "req", 3, fn_never, &never, NULL));
    T_OK(lil_effect(run, "charge", "req", 3, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "receipt-9", 9);
    lil_free(out.data);
    T_EQ_I64(never, 0);
    T_OK(lil_run_close(run));

    run = u_run(st, "r");
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    T_EQ_I64(lil_run_uncertain_count(run), 0);
    T_OK(lil_effect(run, "charge", "req", 3, fn_never, &never, NULL));
    T_OK(lil_effect(run, "charge", "req", 3, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "receipt-9", 9);
    lil_free(out.data);
    T_EQ_I64(never, 0);
    struct fn_ctx next = {.result = "n", .result_len = 1};
    T_OK(lil_step(run, "next", fn_generic, &next, NULL));
    T_EQ_I64(next.calls, 1);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    free(key);
}

static void check_stopped(lil_run *run)
{
    int never = 0;
    lil_bytes out = {0};
    T_EQ_I64(lil_run_status(run), LIL_RUN_STOPPED);
    T_EQ_STR(lil_run_state_name(LIL_RUN_STOPPED), "stopped");
    T_OK(lil_effect(run, "charge", "req", 3, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "c1", 2);
    lil_free(out.data);
    T_EQ_I64(lil_effect(run, "charge", "req", 3, fn_never, &never, NULL), LIL_E_FAILED);
    T_EQ_I64(lil_step(run, "new", fn_never, &never, NULL), LIL_E_DONE);
    T_EQ_I64(lil_effect(run, "new2", "q", 1, fn_never, &never, NULL), LIL_E_DONE);
    T_EQ_I64(lil_run_complete(run, "x", 1), LIL_E_DONE);
    T_EQ_I64(never, 0);
    /* the result names who stopped the run and why */
    T_EQ_I64(lil_run_result(run, &out), LIL_E_FAILED);
    T_CONTAINS(lil_run_errmsg(run), "was stopped: aborted by carol: too risky");
}

T_TEST(resolve_abort_stops_the_run)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    char *key = make_uncertain();
    T_REQUIRE(key);
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_run_resolve(run, "charge#2", LIL_RESOLVE_ABORT, NULL, 0, "carol",
                         "too risky"));
    T_EQ_I64(lil_run_uncertain_count(run), 0);
    check_stopped(run);
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    check_stopped(run);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    free(key);
}

T_TEST(resolve_argument_rules)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    char *key = make_uncertain();
    T_REQUIRE(key);
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    const char *id = "charge#2";
    const int R = LIL_RESOLVE_RETRY;
    T_EQ_I64(lil_run_resolve(run, id, R, NULL, 0, NULL, "why"), LIL_E_INVAL);
    T_EQ_I64(lil_run_resolve(run, id, R, NULL, 0, "", "why"), LIL_E_INVAL);
    T_EQ_I64(lil_run_resolve(run, id, R, NULL, 0, "me", NULL), LIL_E_INVAL);
    T_EQ_I64(lil_run_resolve(run, id, R, NULL, 0, "me", ""), LIL_E_INVAL);
    T_EQ_I64(lil_run_resolve(run, id, R, NULL, 0, u_repeat('a', 201), "why"),
             LIL_E_INVAL);
    T_EQ_I64(lil_run_resolve(run, id, R, NULL, 0, "me", u_repeat('r', 1001)),
             LIL_E_INVAL);
    T_EQ_I64(lil_run_resolve(run, id, (lil_resolution)0, NULL, 0, "me", "why"),
             LIL_E_INVAL);
    T_EQ_I64(lil_run_resolve(run, id, (lil_resolution)99, NULL, 0, "me", "why"),
             LIL_E_INVAL);
    T_EQ_I64(lil_run_resolve(run, id, R, "x", 1, "me", "why"), LIL_E_INVAL);
    T_EQ_I64(lil_run_resolve(run, id, LIL_RESOLVE_ABORT, "x", 1, "me", "why"),
             LIL_E_INVAL);
    T_EQ_I64(lil_run_resolve(run, NULL, R, NULL, 0, "me", "why"), LIL_E_INVAL);
    T_EQ_I64(lil_run_resolve(run, "nope", R, NULL, 0, "me", "why"), LIL_E_NOTFOUND);
    T_EQ_I64(lil_run_resolve(run, "charge", R, NULL, 0, "me", "why"), LIL_E_NOTFOUND);
    T_EQ_I64(lil_run_resolve(run, id, R, NULL, 0, "m\xff", "why"), LIL_E_INVAL);
    T_CONTAINS(lil_errmsg(), "UTF-8");
    T_EQ_I64(lil_run_resolve(run, id, R, NULL, 0, "me", "\xc3("), LIL_E_INVAL);
    T_EQ_I64(lil_run_status(run), LIL_RUN_UNCERTAIN);
    T_EQ_I64(lil_run_uncertain_count(run), 1);
    /* the limits themselves are accepted */
    char actor[201], reason[1001];
    snprintf(actor, sizeof(actor), "%s", u_repeat('a', 200));
    snprintf(reason, sizeof(reason), "%s", u_repeat('r', 1000));
    T_OK(lil_run_resolve(run, id, R, NULL, 0, actor, reason));
    T_EQ_I64(lil_run_resolve(run, id, R, NULL, 0, "me", "again"), LIL_E_NOTFOUND);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    free(key);
}

T_TEST(resolve_on_running_run_notfound)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(u_step_text(run, "a", "1"));
    T_EQ_I64(lil_run_resolve(run, "a", LIL_RESOLVE_RETRY, NULL, 0, "me", "why"),
             LIL_E_NOTFOUND);
    T_EQ_I64(lil_run_resolve(run, "zzz", LIL_RESOLVE_ASSUME_DONE, "r", 1, "me", "why"),
             LIL_E_NOTFOUND);
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(resolve_retry_is_durable)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    char *key = make_uncertain();
    T_REQUIRE(key);
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_run_resolve(run, "charge#2", LIL_RESOLVE_RETRY, NULL, 0, "alice",
                         "retry after restart"));
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    T_EQ_I64(lil_run_uncertain_count(run), 0);
    int never = 0;
    T_OK(lil_effect(run, "charge", "req", 3, fn_never, &never, NULL));
    T_EQ_I64(never, 0);
    struct fn_ctx c = {.result = "c2", .result_len = 2};
    T_OK(lil_effect(run, "charge", "req", 3, fn_generic, &c, NULL));
    T_EQ_I64(c.calls, 1);
    T_EQ_I64(c.attempt, 2);
    T_EQ_STR(c.key, key);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    free(key);
}

T_TEST(resolve_assume_done_empty_result)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    char *key = make_uncertain();
    T_REQUIRE(key);
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_run_resolve(run, "charge#2", LIL_RESOLVE_ASSUME_DONE, NULL, 0, "bob",
                         "it went through"));
    int never = 0;
    lil_bytes out = {0};
    T_OK(lil_effect(run, "charge", "req", 3, fn_never, &never, NULL));
    T_OK(lil_effect(run, "charge", "req", 3, fn_never, &never, &out));
    T_EQ_I64(out.len, 0);
    T_CHECK(out.data != NULL);
    lil_free(out.data);
    T_EQ_I64(never, 0);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    free(key);
}

T_TEST(readonly_sees_uncertain_and_cannot_resolve)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    char *key = make_uncertain();
    T_REQUIRE(key);
    lil_store *st = u_store(NULL);
    lil_run *run = u_run_opts(st, "r", LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0);
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_UNCERTAIN);
    T_EQ_I64(lil_run_uncertain_count(run), 1);
    T_EQ_STR(lil_run_uncertain_at(run, 0), "charge#2");
    T_EQ_I64(lil_run_resolve(run, "charge#2", LIL_RESOLVE_RETRY, NULL, 0, "me", "why"),
             LIL_E_INVAL);
    T_OK(lil_run_close(run));
    run = u_run(st, "r"); /* the read-only handle decided nothing */
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_UNCERTAIN);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    free(key);
}

/* ---- SIGKILL inside an effect; repeated retries --------------------------- */

struct killed_ctx {
    struct u_pipe *inside;
};

static int fn_signal_and_wait(lil_call *call, void *ud)
{
    struct killed_ctx *k = ud;
    (void)call;
    u_pipe_signal(k->inside);
    for (;;)
        pause();
}

/* Child: effect "pay" whose function tells the parent, then waits for
 * SIGKILL. */
static int child_killed_in_effect(void *ud)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    if (lil_store_open(NULL, U_STORE, &st) != LIL_OK)
        return 10;
    lil_run_opts o = {.struct_size = sizeof(o), .sync = LIL_SYNC_NORMAL};
    if (lil_run_open(st, "k", &o, &run) != LIL_OK)
        return 11;
    lil_effect(run, "pay", "p", 1, fn_signal_and_wait, ud, NULL);
    return 12;
}

T_TEST(sigkill_inside_effect_leaves_uncertain)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    struct u_pipe inside;
    T_REQUIRE(u_pipe_open(&inside) == 0);
    struct killed_ctx k = {.inside = &inside};
    pid_t pid = u_fork(child_killed_in_effect, &k);
    T_REQUIRE(pid > 0);
    T_EQ_I64(u_pipe_wait(&inside, 30), 0);
    kill(pid, SIGKILL);
    T_EQ_I64(u_wait(pid), 128 + SIGKILL);
    u_pipe_close(&inside);
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "k");
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_UNCERTAIN);
    T_EQ_I64(lil_run_uncertain_count(run), 1);
    T_EQ_STR(lil_run_uncertain_at(run, 0), "pay");
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* Child: run effect "charge" of run "r" and die inside it (attempt noted). */
static int child_dies_in_charge(void *ud)
{
    (void)ud;
    lil_store *st = NULL;
    lil_run *run = NULL;
    if (lil_store_open(NULL, U_STORE, &st) != LIL_OK)
        return 10;
    if (lil_run_open(st, "r", NULL, &run) != LIL_OK)
        return 11;
    struct fn_ctx c = {.key_file = "attempt.key", .die = 1};
    lil_status rc = lil_effect(run, "charge", "req", 3, fn_generic, &c, NULL);
    return rc == LIL_E_UNCERTAIN ? 20 : 12;
}

T_TEST(retry_that_dies_again_counts_attempts)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    for (unsigned attempt = 1; attempt <= 3; attempt++) {
        pid_t pid = u_fork(child_dies_in_charge, NULL);
        T_REQUIRE(pid > 0);
        T_EQ_I64(u_wait(pid), 0); /* died inside fn: the effect ran */
        lil_store *st = u_store(NULL);
        lil_run *run = u_run(st, "r");
        T_REQUIRE(run);
        T_EQ_I64(lil_run_status(run), LIL_RUN_UNCERTAIN);
        T_EQ_I64(lil_run_uncertain_count(run), 1);
        T_EQ_STR(lil_run_uncertain_at(run, 0), "charge");
        int never = 0;
        T_EQ_I64(lil_step(run, "charge", fn_never, &never, NULL), LIL_E_UNCERTAIN);
        T_OK(lil_run_resolve(run, "charge", LIL_RESOLVE_RETRY, NULL, 0, "ops",
                             "try again"));
        T_OK(lil_run_close(run));
        lil_store_close(st);
    }
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    int never = 0;
    /* the journal holds an effect here: a plain step is refused */
    T_EQ_I64(lil_step(run, "charge", fn_never, &never, NULL), LIL_E_NONDET);
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    struct fn_ctx c = {.result = "ok", .result_len = 2};
    T_OK(lil_effect(run, "charge", "req", 3, fn_generic, &c, NULL));
    T_EQ_I64(c.calls, 1);
    T_EQ_I64(c.attempt, 4); /* three attempts died inside fn */
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* ---- non-determinism ------------------------------------------------------ */

T_TEST(nondet_other_request_or_kind)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    struct fn_ctx c = {.result = "ra", .result_len = 2};
    T_OK(lil_effect(run, "e", "A", 1, fn_generic, &c, NULL));
    T_OK(u_step_text(run, "s", "plain"));
    T_OK(lil_run_close(run));

    int never = 0;
    lil_bytes out = {(void *)"garbage", 7};
    run = u_run(st, "r");
    T_REQUIRE(run);
    T_EQ_I64(lil_effect(run, "e", "B", 1, fn_never, &never, &out), LIL_E_NONDET);
    T_CHECK(out.data == NULL && out.len == 0);
    T_OK(lil_run_close(run));

    run = u_run(st, "r");
    T_REQUIRE(run);
    T_EQ_I64(lil_effect(run, "e", NULL, 0, fn_never, &never, NULL), LIL_E_NONDET);
    T_OK(lil_run_close(run));

    run = u_run(st, "r");
    T_REQUIRE(run);
    T_EQ_I64(lil_step(run, "e", fn_never, &never, NULL), LIL_E_NONDET);
    T_OK(lil_run_close(run));

    run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_effect(run, "e", "A", 1, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "ra", 2);
    lil_free(out.data);
    T_EQ_I64(lil_effect(run, "s", "A", 1, fn_never, &never, NULL), LIL_E_NONDET);
    T_OK(lil_run_close(run));
    T_EQ_I64(never, 0);
    lil_store_close(st);
}

T_MAIN()

/* ---- a request of megabytes ------------------------------------------------- */

#define BIG_REQ (10u * 1024u * 1024u) /* an http body of 10 MiB */

static char *big_request(char last)
{
    char *r = malloc(BIG_REQ);

    if (r) {
        memset(r, 'b', BIG_REQ);
        r[BIG_REQ - 1] = last;
    }
    return r;
}

/* Child: effect "upload" with the 10 MiB request, killed inside it. */
static int child_uploads_and_is_killed(void *ud)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    char *req = big_request('!');
    if (!req || lil_store_open(NULL, U_STORE, &st) != LIL_OK)
        return 10;
    if (lil_run_open(st, "big", NULL, &run) != LIL_OK)
        return 11;
    lil_effect(run, "upload", req, BIG_REQ, fn_signal_and_wait, ud, NULL);
    return 12;
}

/* The journal holds a 10 MiB request as its SHA-256 only: after a SIGKILL
 * inside the effect the run is uncertain, the same request is recognised
 * (it replays once resolved) and one that differs in its last byte is a
 * non-deterministic replay; a completed one never runs again. */
T_TEST(big_request_through_sigkill_and_resume)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    char *req = big_request('!'), *other = big_request('?');
    struct u_pipe inside;
    struct killed_ctx k = {.inside = &inside};
    struct fn_ctx c = {.result = "sent", .result_len = 4};
    lil_bytes out = {0};
    int never = 0;
    T_REQUIRE(req && other);
    T_REQUIRE(u_pipe_open(&inside) == 0);
    pid_t pid = u_fork(child_uploads_and_is_killed, &k);
    T_REQUIRE(pid > 0);
    T_EQ_I64(u_pipe_wait(&inside, 30), 0);
    kill(pid, SIGKILL);
    T_EQ_I64(u_wait(pid), 128 + SIGKILL);
    u_pipe_close(&inside);
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "big");
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_UNCERTAIN);
    T_EQ_STR(lil_run_uncertain_at(run, 0), "upload");
    T_EQ_I64(lil_effect(run, "upload", req, BIG_REQ, fn_never, &never, NULL),
             LIL_E_UNCERTAIN);
    T_OK(lil_run_resolve(run, "upload", LIL_RESOLVE_ASSUME_DONE, "seen", 4, "ops",
                         "in the server's log"));
    T_OK(lil_run_close(run));
    run = u_run(st, "big");
    T_REQUIRE(run);
    T_EQ_I64(lil_effect(run, "upload", other, BIG_REQ, fn_never, &never, NULL),
             LIL_E_NONDET);
    T_OK(lil_run_close(run));
    run = u_run(st, "big");
    T_REQUIRE(run);
    T_OK(lil_effect(run, "upload", req, BIG_REQ, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "seen", 4);
    lil_free(out.data);
    T_OK(lil_effect(run, "upload", req, BIG_REQ, fn_generic, &c, NULL)); /* upload#2 */
    T_OK(lil_run_close(run));
    run = u_run(st, "big");
    T_REQUIRE(run);
    T_OK(lil_effect(run, "upload", req, BIG_REQ, fn_never, &never, NULL));
    T_OK(lil_effect(run, "upload", req, BIG_REQ, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "sent", 4);
    lil_free(out.data);
    T_EQ_I64(never, 0);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    free(req);
    free(other);
}
