/*
 * test_begin.c -- steps, effects and markers in two calls (lil_step_begin,
 * lil_effect_begin, lil_marker_begin, lil_call_end, lil_call_cancel): a
 * begun step journals what lil_step would, a replay returns at once with no
 * call, a failure is journaled and replayed, a cancelled plain step leaves
 * nothing (its occurrence still counted), a cancelled effect leaves the run
 * uncertain, begun calls are ended from other threads in any order, and a
 * begun marker is held against other processes until it is ended, leaves
 * nothing when cancelled or failed, and is in doubt when its holder dies.
 */
#include <lil/lil.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_util.h"
#include "t.h"

/* Begin name; it must run: set text as its result and end it. */
static lil_status begin_and_end(lil_run *run, const char *name, const char *text,
                                lil_bytes *out)
{
    lil_call *call = NULL;
    lil_status rc = lil_step_begin(run, name, &call, out);

    if (rc != LIL_OK)
        return rc;
    if (!call)
        return LIL_E_INVAL; /* replayed: not what the caller wanted */
    rc = lil_call_set_result(call, text, strlen(text));
    if (rc != LIL_OK) {
        lil_call_cancel(call);
        return rc;
    }
    return lil_call_end(call, out);
}

T_TEST(begun_step_journals_and_replays)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    lil_bytes out = {0};
    lil_call *call = NULL;
    T_REQUIRE(run);
    T_OK(begin_and_end(run, "a", "A", &out));
    T_EQ_MEM(out.data, out.len, "A", 1);
    lil_free(out.data);
    T_OK(lil_step_begin(run, "a", &call, NULL)); /* a#2 */
    T_REQUIRE(call);
    T_EQ_STR(lil_call_identity(call), "a#2");
    T_EQ_I64(lil_call_attempt(call), 1);
    T_CHECK(u_is_idem_key(lil_call_idempotency_key(call)));
    T_OK(lil_call_set_result(call, "A2", 2));
    T_OK(lil_call_end(call, NULL));
    T_OK(lil_run_close(run));

    run = u_run(st, "r");
    T_REQUIRE(run);
    call = (lil_call *)&out; /* cleared on entry */
    T_OK(lil_step_begin(run, "a", &call, &out));
    T_CHECK(call == NULL);
    T_EQ_MEM(out.data, out.len, "A", 1);
    lil_free(out.data);
    T_OK(lil_step_begin(run, "a", &call, &out));
    T_CHECK(call == NULL);
    T_EQ_MEM(out.data, out.len, "A2", 2);
    lil_free(out.data);
    /* lil_step sees the same journal */
    int never = 0;
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_step(run, "a", fn_never, &never, NULL));
    T_EQ_I64(never, 0);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(begun_failure_is_journaled)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    lil_call *call = NULL;
    lil_bytes out = {0};
    T_REQUIRE(run);
    T_OK(lil_step_begin(run, "f", &call, &out));
    T_REQUIRE(call);
    T_OK(lil_call_fail(call, "boom %d", 7));
    T_EQ_I64(lil_call_end(call, &out), LIL_E_FAILED);
    T_CHECK(out.data == NULL);
    T_CONTAINS(lil_errmsg(), "boom 7");
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    T_EQ_I64(lil_step_begin(run, "f", &call, &out), LIL_E_FAILED);
    T_CHECK(call == NULL);
    T_CONTAINS(lil_run_errmsg(run), "step 'f' failed: boom 7");
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(cancelled_plain_step_leaves_nothing)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    lil_call *call = NULL;
    lil_bytes out = {0};
    T_REQUIRE(run);
    T_OK(lil_step_begin(run, "c", &call, NULL));
    T_REQUIRE(call);
    T_OK(lil_call_set_result(call, "x", 1));
    T_OK(lil_call_cancel(call));
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    /* the occurrence was counted: the next call is c#2 */
    T_OK(lil_step_begin(run, "c", &call, NULL));
    T_REQUIRE(call);
    T_EQ_STR(lil_call_identity(call), "c#2");
    T_OK(lil_call_cancel(call));
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    lil_run_info info = {.struct_size = sizeof(info)};
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64((int64_t)info.steps_done, 0);
    T_OK(begin_and_end(run, "c", "again", &out)); /* runs again */
    T_EQ_MEM(out.data, out.len, "again", 5);
    lil_free(out.data);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(cancelled_effect_is_uncertain)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    lil_call *call = NULL;
    lil_bytes out = {0};
    T_REQUIRE(run);
    T_OK(lil_effect_begin(run, "pay", "req", 3, &call, NULL));
    T_REQUIRE(call);
    T_OK(lil_call_cancel(call));
    T_EQ_I64(lil_run_status(run), LIL_RUN_UNCERTAIN);
    T_EQ_I64(lil_step_begin(run, "other", &call, NULL), LIL_E_UNCERTAIN);
    T_CHECK(call == NULL);
    T_OK(lil_run_close(run));

    run = u_run(st, "r");
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_UNCERTAIN);
    T_EQ_STR(lil_run_uncertain_at(run, 0), "pay");
    T_OK(lil_run_resolve(run, "pay", LIL_RESOLVE_RETRY, NULL, 0, "t", "retry it"));
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_effect_begin(run, "pay", "req", 3, &call, NULL));
    T_REQUIRE(call);
    T_EQ_I64(lil_call_attempt(call), 2);
    T_OK(lil_call_set_result(call, "paid", 4));
    T_OK(lil_call_end(call, &out));
    T_EQ_MEM(out.data, out.len, "paid", 4);
    lil_free(out.data);
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_effect_begin(run, "pay", "req", 3, &call, &out));
    T_CHECK(call == NULL);
    T_EQ_MEM(out.data, out.len, "paid", 4);
    lil_free(out.data);
    T_OK(lil_run_close(run));
    /* another request at this identity is a divergent replay */
    run = u_run(st, "r");
    T_REQUIRE(run);
    T_EQ_I64(lil_effect_begin(run, "pay", "other", 5, &call, NULL), LIL_E_NONDET);
    T_CHECK(call == NULL);
    T_OK(lil_run_close(run));
    /* so is a plain step at an effect's identity */
    run = u_run(st, "r");
    T_REQUIRE(run);
    T_EQ_I64(lil_step_begin(run, "pay", &call, NULL), LIL_E_NONDET);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

struct ender {
    lil_call *call;
    const char *text;
    lil_status rc;
};

static void *end_on_thread(void *ud)
{
    struct ender *e = ud;

    e->rc = lil_call_set_result(e->call, e->text, strlen(e->text));
    if (e->rc == LIL_OK)
        e->rc = lil_call_end(e->call, NULL);
    return NULL;
}

T_TEST(begun_calls_end_on_other_threads_in_any_order)
{
    enum { N = 16 };

    lil_store *st = u_store(NULL);
    lil_run *run = u_run_opts(st, "r", LIL_SYNC_FULL, 0, 0);
    struct ender e[N];
    pthread_t th[N];
    char texts[N][8];
    T_REQUIRE(run);
    for (int i = 0; i < N; i++) {
        snprintf(texts[i], sizeof(texts[i]), "v%d", i);
        e[i].text = texts[i];
        T_OK(lil_step_begin(run, "s", &e[i].call, NULL));
        T_REQUIRE(e[i].call);
    }
    for (int i = N - 1; i >= 0; i--)
        T_REQUIRE(pthread_create(&th[i], NULL, end_on_thread, &e[i]) == 0);
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        T_OK(e[i].rc);
    }
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    for (int i = 0; i < N; i++) {
        lil_call *call = NULL;
        lil_bytes out = {0};
        T_OK(lil_step_begin(run, "s", &call, &out));
        T_CHECK(call == NULL);
        T_EQ_MEM(out.data, out.len, texts[i], strlen(texts[i]));
        lil_free(out.data);
    }
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

static int fn_set_x(lil_call *call, void *ud)
{
    lil_status *rc = ud;

    *rc = lil_call_end(call, NULL); /* not a begun call */
    return lil_call_set_result(call, "x", 1) != LIL_OK;
}

T_TEST(misuse)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    lil_call *call = NULL;
    lil_status inner = LIL_OK;
    T_REQUIRE(run);
    T_EQ_I64(lil_call_end(NULL, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_call_cancel(NULL), LIL_E_INVAL);
    T_EQ_I64(lil_step_begin(run, "s", NULL, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_step_begin(NULL, "s", &call, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_step_begin(run, "", &call, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_step_begin(run, "a#b", &call, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_effect_begin(run, "e", NULL, 3, &call, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_marker_begin(NULL, "m", LIL_MARKER_RETRY, &call, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_marker_begin(st, "m", 99, &call, NULL), LIL_E_INVAL);
    T_CHECK(call == NULL);
    T_OK(lil_step(run, "in", fn_set_x, &inner, NULL));
    T_EQ_I64(inner, LIL_E_INVAL);
    /* a run that has ended runs nothing new */
    T_OK(lil_run_complete(run, "done", 4));
    T_EQ_I64(lil_step_begin(run, "late", &call, NULL), LIL_E_DONE);
    T_CHECK(call == NULL);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* ---- markers ------------------------------------------------------------------ */

struct marker_child {
    struct u_pipe *go;    /* wait for a byte on it first, if set */
    struct u_pipe *ready; /* signalled just before asking for the marker */
    int die;              /* _exit while holding the marker */
    int policy;
};

/* Child: begin marker "m"; with die, _exit(0) holding it; otherwise expect
 * the published "R" (exit 0) or run it and publish "C" (exit 10). */
static int child_marker(void *ud)
{
    struct marker_child *c = ud;
    lil_store *st = NULL;
    lil_call *call = NULL;
    lil_bytes out = {0};
    int code;

    if (c->go && u_pipe_wait(c->go, 30) != 0)
        return 20;
    if (lil_store_open(NULL, U_STORE, &st) != LIL_OK)
        return 21;
    if (c->ready)
        u_pipe_signal(c->ready);
    if (lil_marker_begin(st, "m", c->policy, &call, &out) != LIL_OK)
        return 22;
    if (c->die)
        _exit(0);
    if (call) {
        lil_call_set_result(call, "C", 1);
        return lil_call_end(call, NULL) == LIL_OK ? 10 : 23;
    }
    code = out.len == 1 && memcmp(out.data, "R", 1) == 0 ? 0 : 24;
    lil_free(out.data);
    lil_store_close(st);
    return code;
}

/* The child is forked before the marker is held: a child forked while it
 * is held would share its lock (lil.h, lil_run_open on fork). */
T_TEST(begun_marker_holds_other_processes)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    lil_store *st = u_store(NULL);
    lil_call *call = NULL;
    lil_bytes out = {0};
    struct u_pipe go, ready;
    T_REQUIRE(st && u_pipe_open(&go) == 0 && u_pipe_open(&ready) == 0);
    struct marker_child c = {.go = &go, .ready = &ready, .policy = LIL_MARKER_RETRY};
    pid_t pid = u_fork(child_marker, &c);
    T_REQUIRE(pid > 0);
    T_OK(lil_marker_begin(st, "m", LIL_MARKER_RETRY, &call, &out));
    T_REQUIRE(call);
    T_EQ_I64(lil_call_attempt(call), 1);
    T_CHECK(u_is_idem_key(lil_call_idempotency_key(call)));
    u_pipe_signal(&go);
    T_REQUIRE(u_pipe_wait(&ready, 30) == 0);
    usleep(200 * 1000); /* the child now waits inside lil_marker_begin */
    T_OK(lil_call_set_result(call, "R", 1));
    T_OK(lil_call_end(call, &out));
    T_EQ_MEM(out.data, out.len, "R", 1);
    lil_free(out.data);
    T_EQ_I64(u_wait(pid), 0); /* it got the published result */
    T_OK(lil_marker_begin(st, "m", LIL_MARKER_RAISE, &call, &out));
    T_CHECK(call == NULL);
    T_EQ_MEM(out.data, out.len, "R", 1);
    lil_free(out.data);
    u_pipe_close(&go);
    u_pipe_close(&ready);
    lil_store_close(st);
}

T_TEST(cancelled_or_failed_marker_publishes_nothing)
{
    lil_store *st = u_store(NULL);
    lil_call *call = NULL;
    lil_bytes out = {0};
    T_REQUIRE(st);
    T_OK(lil_marker_begin(st, "m", LIL_MARKER_RETRY, &call, NULL));
    T_REQUIRE(call);
    T_OK(lil_call_cancel(call));
    T_OK(lil_marker_begin(st, "m", LIL_MARKER_RAISE, &call, NULL));
    T_REQUIRE(call); /* nothing published, nothing in doubt */
    T_OK(lil_call_fail(call, "nope"));
    T_EQ_I64(lil_call_end(call, &out), LIL_E_FAILED);
    T_CONTAINS(lil_store_errmsg(st), "nope");
    T_OK(lil_marker_begin(st, "m", LIL_MARKER_RAISE, &call, NULL));
    T_REQUIRE(call);
    T_OK(lil_call_set_result(call, "ok", 2));
    T_OK(lil_call_end(call, NULL));
    T_EQ_I64(lil_marker_reset(st, "m"), LIL_OK);
    lil_store_close(st);
}

T_TEST(marker_holder_that_dies_leaves_it_in_doubt)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    lil_store *st = NULL;
    lil_call *call = NULL;
    lil_bytes out = {0};
    struct marker_child c = {.die = 1, .policy = LIL_MARKER_RETRY};
    pid_t pid = u_fork(child_marker, &c);
    T_REQUIRE(pid > 0);
    T_EQ_I64(u_wait(pid), 0);
    st = u_store(NULL);
    T_REQUIRE(st);
    T_EQ_I64(lil_marker_begin(st, "m", LIL_MARKER_RAISE, &call, NULL), LIL_E_UNCERTAIN);
    T_CHECK(call == NULL);
    T_OK(lil_marker_begin(st, "m", LIL_MARKER_RETRY, &call, NULL));
    T_REQUIRE(call);
    T_EQ_I64(lil_call_attempt(call), 2);
    T_OK(lil_call_set_result(call, "R", 1));
    T_OK(lil_call_end(call, NULL));
    /* assume-done publishes an empty result without a call */
    pid = u_fork(child_marker, &(struct marker_child){.die = 1});
    T_REQUIRE(pid > 0);
    T_EQ_I64(u_wait(pid), 0); /* "m" is published: the child just exits */
    T_OK(lil_marker_reset(st, "m"));
    pid = u_fork(child_marker, &c);
    T_REQUIRE(pid > 0);
    T_EQ_I64(u_wait(pid), 0);
    T_OK(lil_marker_begin(st, "m", LIL_MARKER_ASSUME_DONE, &call, &out));
    T_CHECK(call == NULL);
    T_EQ_I64((int64_t)out.len, 0);
    lil_free(out.data);
    lil_store_close(st);
}

T_MAIN()
