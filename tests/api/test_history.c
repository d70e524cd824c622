/*
 * test_history.c -- the read API of runs through lil.h: lil_run_facts,
 * lil_run_events and lil_run_wait.
 *
 * What it proves: a program run and a loop run give the expected typed
 * events, in order, with their fields decoded (steps with their results
 * and reasons, effects with their kind, step, identity and outcome,
 * iterations, the end); pages from/max/next put together give the whole
 * history, nothing twice; the facts of a loop run carry the document of
 * lil_loop_facts unchanged, and a program run's facts its engine's
 * figures; a run another process holds is read (its pid the holder);
 * waiting returns when another process appends a record and times out
 * otherwise; bad arguments are LIL_E_INVAL and an unknown run
 * LIL_E_NOTFOUND.  The same tests run against PostgreSQL (tests/pg).
 */
#include <lil/lil.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "api_util.h"
#include "t.h"

static const char shell_spec[] =
    "loopspec: \"0.1\"\n"
    "id: hist\n"
    "pattern: react\n"
    "state: { vars: { n: { type: int, init: 0 } } }\n"
    "body:\n"
    "  - { id: bump, kind: shell, cmd: \"echo '{\\\"ok\\\":1}'\", on_done: { incr: n } }\n"
    "terminate: { signal: state-predicate, until: \"${state.n >= 2}\" }\n"
    "caps: { max_iterations: 5, on_cap_exceeded: fail }\n";

/* ---- helpers ------------------------------------------------------------------ */

static json_t *parse_bytes(lil_bytes *b)
{
    json_t *v = json_loadb(b->data, b->len, 0, NULL);

    T_CHECK(b->len == strlen(b->data));
    lil_free(b->data);
    b->data = NULL;
    return v;
}

static json_t *events(lil_store *st, const char *id, uint64_t from, size_t max)
{
    lil_bytes b = {NULL, 0};
    lil_status rc = lil_run_events(st, id, from, max, &b);

    if (rc != LIL_OK) {
        fprintf(stderr, "lil_run_events: %s\n", lil_store_errmsg(st));
        return NULL;
    }
    return parse_bytes(&b);
}

static json_t *events_with(lil_store *st, const char *id, const lil_events_opts *o)
{
    lil_bytes b = {NULL, 0};

    if (lil_run_events_with(st, id, o, &b) != LIL_OK) {
        fprintf(stderr, "lil_run_events_with: %s\n", lil_store_errmsg(st));
        return NULL;
    }
    return parse_bytes(&b);
}

static json_t *facts(lil_store *st, const char *id)
{
    lil_bytes b = {NULL, 0};

    if (lil_run_facts(st, id, &b) != LIL_OK) {
        fprintf(stderr, "lil_run_facts: %s\n", lil_store_errmsg(st));
        return NULL;
    }
    return parse_bytes(&b);
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));

    return s ? s : "";
}

static long long num(const json_t *o, const char *k)
{
    return (long long)json_integer_value(json_object_get(o, k));
}

/* The event types of a page, space separated, without process opens and
 * closes (how many there are depends on the store's syncs). */
static void types_of(const json_t *page, char *buf, size_t cap)
{
    size_t i, len = 0;
    json_t *ev;

    buf[0] = '\0';
    json_array_foreach(json_object_get(page, "events"), i, ev)
    {
        const char *t = str(ev, "type");

        if (strncmp(t, "process_", 8) == 0)
            continue;
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? " " : "", t);
        if (len >= cap)
            return;
    }
}

/* The first event of type in page (from index *at on), or NULL. */
static json_t *find(const json_t *page, const char *type, size_t *at)
{
    json_t *a = json_object_get(page, "events");

    for (size_t i = at ? *at : 0; i < json_array_size(a); i++)
        if (strcmp(str(json_array_get(a, i), "type"), type) == 0) {
            if (at)
                *at = i + 1;
            return json_array_get(a, i);
        }
    return NULL;
}

static void program_run(lil_store *st, const char *id)
{
    struct fn_ctx fail = {0};
    lil_run *run = u_run(st, id);
    lil_bytes out = {NULL, 0};

    T_REQUIRE(run != NULL);
    T_OK(u_step_text(run, "fetch", "hello"));
    fail.fail_msg = "no luck";
    T_CHECK(lil_step(run, "parse", fn_generic, &fail, &out) == LIL_E_FAILED);
    T_OK(lil_effect(run, "charge", "{\"amount\":5}", 12, fn_generic,
                    &(struct fn_ctx){0}, &out));
    lil_free(out.data);
    T_OK(lil_run_complete(run, "done", 4));
    T_OK(lil_run_close(run));
}

static lil_status loop_run(lil_store *st)
{
    lil_spec *spec = NULL;
    lil_loop_opts o;
    lil_loop *lp = NULL;
    lil_loop_result res;
    lil_status rc;

    memset(&o, 0, sizeof(o));
    memset(&res, 0, sizeof(res));
    o.struct_size = sizeof(o);
    o.actor = "tester";
    rc = lil_spec_parse(NULL, "loop.yaml", shell_spec, strlen(shell_spec), NULL, &spec);
    if (rc == LIL_OK)
        rc = lil_loop_open(st, spec, &o, &lp);
    if (rc == LIL_OK)
        rc = lil_loop_run(lp, &res);
    if (rc != LIL_OK)
        fprintf(stderr, "loop: %s\n", lil_errmsg());
    lil_loop_result_free(&res);
    lil_loop_close(lp);
    lil_spec_free(spec);
    return rc;
}

/* ---- a program run ---------------------------------------------------------- */

T_TEST(program_run_events)
{
    lil_store *st = u_store(NULL);
    json_t *page, *ev;
    char types[512];

    T_REQUIRE(st != NULL);
    program_run(st, "prog");
    page = events(st, "prog", 0, 0);
    T_REQUIRE(page != NULL);
    T_EQ_STR(str(page, "kind"), "program");
    T_CHECK(json_is_false(json_object_get(page, "more")));
    T_EQ_I64(num(page, "next"), num(page, "last_seq") + 1);
    types_of(page, types, sizeof(types));
    T_EQ_STR(types, "run_start step step effect_start effect run_end");
    ev = find(page, "step", NULL);
    T_EQ_STR(str(ev, "step"), "fetch");
    T_EQ_STR(str(ev, "outcome"), "ok");
    T_EQ_STR(str(ev, "result"), "hello");
    T_EQ_I64(num(ev, "seq") > 0, 1);
    T_CHECK(num(ev, "ts_ns") > 0);
    T_EQ_STR(str(json_object_get(ev, "record"), "type"), "step");
    {
        size_t at = 0;

        (void)find(page, "step", &at);
        ev = find(page, "step", &at);
    }
    T_EQ_STR(str(ev, "step"), "parse");
    T_EQ_STR(str(ev, "outcome"), "failed");
    T_EQ_STR(str(ev, "reason"), "no luck");
    ev = find(page, "effect_start", NULL);
    T_EQ_STR(str(ev, "step"), "charge");
    T_EQ_I64(strlen(str(ev, "request_sha256")), 64);
    ev = find(page, "effect", NULL);
    T_EQ_STR(str(ev, "step"), "charge");
    T_EQ_STR(str(ev, "outcome"), "ok");
    ev = find(page, "run_end", NULL);
    T_EQ_STR(str(ev, "status"), "completed");
    T_EQ_STR(str(ev, "result"), "done");
    json_decref(page);
    lil_store_close(st);
}

T_TEST(program_run_facts)
{
    lil_store *st = u_store(NULL);
    json_t *f;

    T_REQUIRE(st != NULL);
    program_run(st, "prog");
    f = facts(st, "prog");
    T_REQUIRE(f != NULL);
    T_EQ_STR(str(f, "run"), "prog");
    T_EQ_STR(str(f, "kind"), "program");
    T_EQ_STR(str(f, "status"), "completed");
    T_CHECK(json_is_true(json_object_get(f, "ended")));
    T_EQ_STR(str(f, "result"), "done");
    T_EQ_I64(num(json_object_get(f, "steps"), "done"), 2);
    T_EQ_I64(num(json_object_get(f, "steps"), "failed"), 1);
    T_CHECK(json_is_null(json_object_get(f, "holder")));
    T_CHECK(json_is_null(json_object_get(f, "loop")));
    T_CHECK(json_is_null(json_object_get(f, "iteration")));
    T_CHECK(json_is_null(json_object_get(f, "usage")));
    T_EQ_I64(json_array_size(json_object_get(f, "uncertain")), 0);
    T_CHECK(num(f, "created_ns") > 0 && num(f, "last_ns") >= num(f, "created_ns"));
    T_EQ_I64(num(f, "last_seq"), num(f, "records"));
    T_EQ_STR(str(json_object_get(f, "place"), "step"), "charge"); /* its last step */
    T_CHECK(json_is_false(json_object_get(json_object_get(f, "place"), "started")));
    json_decref(f);
    lil_store_close(st);
}

/* ---- paging --------------------------------------------------------------------- */

T_TEST(pages_put_together_are_the_history)
{
    lil_store *st = u_store(NULL);
    json_t *all, *got = json_array(), *page;
    uint64_t from = 0;
    int pages = 0;

    T_REQUIRE(st != NULL);
    program_run(st, "prog");
    all = events(st, "prog", 0, 0);
    T_REQUIRE(all != NULL);
    for (;;) {
        page = events(st, "prog", from, 2);
        T_REQUIRE(page != NULL);
        T_CHECK(json_array_size(json_object_get(page, "events")) <= 2);
        json_array_extend(got, json_object_get(page, "events"));
        pages++;
        from = (uint64_t)num(page, "next");
        if (!json_is_true(json_object_get(page, "more"))) {
            json_decref(page);
            break;
        }
        json_decref(page);
        T_REQUIRE(pages < 100);
    }
    T_CHECK(pages > 2);
    T_CHECK(json_equal(got, json_object_get(all, "events")));
    /* past the end: nothing, next stays */
    page = events(st, "prog", 1000, 5);
    T_REQUIRE(page != NULL);
    T_EQ_I64(json_array_size(json_object_get(page, "events")), 0);
    T_EQ_I64(num(page, "next"), 1000);
    T_CHECK(json_is_false(json_object_get(page, "more")));
    json_decref(page);
    json_decref(got);
    json_decref(all);
    lil_store_close(st);
}

/* Pages of one event's worth: every page starts in the middle of the run,
 * and still gives the events a walk from the first record gives. */
T_TEST(loop_run_pages_put_together_are_the_history)
{
    lil_store *st = u_store(NULL);
    json_t *all, *got = json_array(), *page;
    uint64_t from = 0;
    int pages = 0;

    T_REQUIRE(st != NULL);
    T_REQUIRE(loop_run(st) == LIL_OK);
    all = events(st, "hist", 0, 0);
    T_REQUIRE(all != NULL);
    do {
        page = events(st, "hist", from, 1);
        T_REQUIRE(page != NULL);
        json_array_extend(got, json_object_get(page, "events"));
        from = (uint64_t)num(page, "next");
        pages++;
        if (!json_is_true(json_object_get(page, "more"))) {
            json_decref(page);
            break;
        }
        json_decref(page);
    } while (pages < 1000);
    T_CHECK(json_equal(got, json_object_get(all, "events")));
    json_decref(got);
    json_decref(all);
    lil_store_close(st);
}

/* ---- a loop run ------------------------------------------------------------------ */

T_TEST(loop_run_events)
{
    lil_store *st = u_store(NULL);
    json_t *page, *ev;
    char types[1024];
    size_t at = 0;

    T_REQUIRE(st != NULL);
    T_REQUIRE(loop_run(st) == LIL_OK);
    page = events(st, "hist", 0, 0);
    T_REQUIRE(page != NULL);
    T_EQ_STR(str(page, "kind"), "loop");
    types_of(page, types, sizeof(types));
    T_EQ_STR(types, "run_start loop_start "
                    "iteration_start effect_start effect iteration_end "
                    "iteration_start effect_start effect iteration_end "
                    "terminated run_end");
    ev = find(page, "loop_start", NULL);
    T_EQ_STR(str(ev, "loop_id"), "hist");
    T_EQ_I64(strlen(str(ev, "spec_sha256")), 64);
    T_EQ_STR(str(json_object_get(ev, "loop"), "kind"), "start");
    ev = find(page, "effect_start", NULL);
    T_EQ_STR(str(ev, "kind"), "shell");
    T_EQ_STR(str(ev, "slot"), "0.0");
    T_CONTAINS(str(ev, "identity"), "echo");
    ev = find(page, "effect", &at);
    T_EQ_STR(str(ev, "kind"), "shell");
    T_EQ_STR(str(ev, "step"), "bump");
    T_EQ_STR(str(ev, "outcome"), "ok");
    T_EQ_I64(num(ev, "iteration"), 0);
    T_EQ_I64(num(json_object_get(ev, "result"), "ok"), 1);
    T_CHECK(json_is_null(json_object_get(ev, "usage")));
    T_EQ_I64(num(ev, "retries"), 0);
    T_EQ_STR(str(json_object_get(ev, "loop"), "kind"), "effect");
    ev = find(page, "effect", &at);
    T_EQ_I64(num(ev, "iteration"), 1);
    ev = find(page, "iteration_end", NULL);
    T_EQ_I64(num(ev, "iteration"), 0);
    ev = find(page, "run_end", NULL);
    T_EQ_STR(str(ev, "status"), "completed");
    T_EQ_I64(num(ev, "iteration"), 2);
    json_decref(page);
    lil_store_close(st);
}

/* A paused loop's pause event names the pause as the facts do: its id and
 * the digest an approval takes (lil_loop_approve_pause accepts it); the
 * approval's event has the digest of what was asked, the pause's too. */
static const char pause_spec[] =
    "loopspec: \"0.1\"\n"
    "id: halt\n"
    "pattern: react\n"
    "state:\n"
    "  vars:\n"
    "    n: {type: int, init: 0}\n"
    "body:\n"
    "  - id: ask\n"
    "    kind: breakpoint\n"
    "    ask: \"Go on?\"\n"
    "  - id: bump\n"
    "    kind: shell\n"
    "    cmd: \"echo '{}'\"\n"
    "    on_done: {incr: n}\n"
    "terminate: {signal: state-predicate, until: \"${state.n >= 1}\"}\n"
    "caps: {max_iterations: 3}\n";

T_TEST(pause_event_names_the_pause_as_the_facts_do)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = NULL;
    lil_loop_opts o;
    lil_loop *lp = NULL;
    lil_loop_result res;
    lil_bytes fb = {0};
    json_t *facts, *paused, *page, *pause, *approval;

    memset(&o, 0, sizeof(o));
    memset(&res, 0, sizeof(res));
    o.struct_size = sizeof(o);
    o.actor = "tester";
    T_REQUIRE(st != NULL);
    T_OK(
        lil_spec_parse(NULL, "halt.yaml", pause_spec, strlen(pause_spec), NULL, &spec));
    T_OK(lil_loop_open(st, spec, &o, &lp));
    T_OK(lil_loop_run(lp, &res));
    lil_loop_result_free(&res);
    T_OK(lil_loop_close(lp));
    lp = NULL;
    T_OK(lil_run_facts(st, "halt", &fb));
    facts = parse_bytes(&fb);
    paused = json_object_get(json_object_get(facts, "loop"), "paused");
    page = events(st, "halt", 0, 0);
    pause = find(page, "pause", NULL);
    T_REQUIRE(paused != NULL && pause != NULL);
    T_EQ_STR(str(pause, "pause_id"), str(paused, "id"));
    T_EQ_STR(str(pause, "digest"), str(paused, "digest"));
    T_EQ_I64(strlen(str(pause, "ask_digest")), 64);
    T_CHECK(strcmp(str(pause, "ask_digest"), str(pause, "digest")) != 0);
    T_OK(lil_loop_open(st, spec, &o, &lp));
    T_OK(lil_loop_approve_pause(lp, str(pause, "pause_id"), str(pause, "digest"),
                                "tester", "the event's digest", &res));
    lil_loop_result_free(&res);
    T_OK(lil_loop_close(lp));
    json_decref(page);
    page = events(st, "halt", 0, 0);
    approval = find(page, "approval", NULL);
    T_REQUIRE(approval != NULL);
    T_EQ_STR(str(approval, "ask_digest"), str(find(page, "pause", NULL), "ask_digest"));
    T_CHECK(json_object_get(approval, "digest") == NULL);
    json_decref(page);
    json_decref(facts);
    lil_spec_free(spec);
    lil_store_close(st);
}

T_TEST(loop_run_facts_are_the_runners)
{
    lil_store *st = u_store(NULL);
    lil_run_opts ro = {sizeof(ro), LIL_SYNC_DEFAULT,
                       LIL_OPEN_READONLY | LIL_OPEN_EXISTING, 0};
    lil_run *run = NULL;
    lil_bytes b = {NULL, 0};
    json_t *f, *lf;

    T_REQUIRE(st != NULL);
    T_REQUIRE(loop_run(st) == LIL_OK);
    T_OK(lil_run_open(st, "hist", &ro, &run));
    T_OK(lil_loop_facts(run, &b));
    lil_run_close(run);
    lf = parse_bytes(&b);
    f = facts(st, "hist");
    T_REQUIRE(f && lf);
    T_EQ_STR(str(f, "kind"), "loop");
    T_CHECK(json_equal(json_object_get(f, "loop"), lf));
    T_EQ_STR(str(f, "status"), str(lf, "status"));
    T_EQ_STR(str(f, "status"), "completed");
    T_EQ_I64(num(f, "iteration"), 2);
    T_EQ_I64(num(json_object_get(json_object_get(f, "loop"), "state"), "n"), 2);
    T_CHECK(json_equal(json_object_get(f, "meters"), json_object_get(lf, "meters")));
    T_CHECK(json_equal(json_object_get(f, "budget"), json_object_get(lf, "budget")));
    T_CHECK(json_is_null(json_object_get(f, "holder")));
    T_CHECK(json_is_null(json_object_get(f, "stop_request")));
    T_EQ_I64(num(json_object_get(f, "usage"), "calls"), 0); /* shell steps only */
    json_decref(f);
    json_decref(lf);
    lil_store_close(st);
}

/* What `lil inspect --json` says of a finished loop run is what the facts
 * say: the loop's status, committed iterations and state, its budget. */
T_TEST(loop_run_facts_are_what_inspect_shows)
{
    lil_store *st = u_store(NULL);
    static char out[1 << 16];
    char cmd[1024];
    json_t *f, *doc, *loop;

    T_REQUIRE(st != NULL);
    T_REQUIRE(loop_run(st) == LIL_OK);
    f = facts(st, "hist");
    snprintf(cmd, sizeof(cmd), "'%s' --dir '%s' inspect hist --json", t_lil_bin(),
             U_STORE);
    T_EQ_I64(t_run(cmd, out, sizeof(out), 0), 0);
    doc = json_loads(out, 0, NULL);
    loop = json_object_get(doc, "loop");
    T_REQUIRE(f && loop);
    T_EQ_STR(str(loop, "status"), str(f, "status"));
    T_EQ_I64(num(loop, "iterations"), num(f, "iteration"));
    T_CHECK(json_equal(json_object_get(loop, "state"),
                       json_object_get(json_object_get(f, "loop"), "state")));
    T_CHECK(json_equal(json_object_get(loop, "budget"), json_object_get(f, "budget")));
    T_CHECK(json_equal(json_object_get(json_object_get(loop, "meters"), "runner"),
                       json_object_get(f, "meters")));
    json_decref(doc);
    json_decref(f);
    lil_store_close(st);
}

/* ---- another process ------------------------------------------------------------ */

/* A child that opens run id, reports on fd, then after delay_ms appends
 * step "late" and (hold) stays until killed, or closes and exits. */
static pid_t child_writer(const char *id, int delay_ms, bool hold, int fd)
{
    pid_t pid = fork();

    if (pid == 0) {
        lil_store *st = u_store(NULL);
        lil_run *run = st ? u_run(st, id) : NULL;
        struct timespec ts = {delay_ms / 1000, (long)(delay_ms % 1000) * 1000000L};

        if (write(fd, run ? "y" : "n", 1) != 1 || !run)
            _exit(1);
        nanosleep(&ts, NULL);
        if (u_step_text(run, "late", "x") != LIL_OK || lil_run_sync(run) != LIL_OK)
            _exit(1);
        while (hold)
            pause();
        lil_run_close(run);
        lil_store_close(st);
        _exit(0);
    }
    return pid;
}

T_TEST(a_held_run_is_read)
{
    lil_store *st = u_store(NULL);
    lil_run *run;
    int fds[2];
    char c = 0;
    pid_t pid;
    json_t *f;
    uint64_t last = 0;

    T_REQUIRE(st != NULL);
    run = u_run(st, "held");
    T_REQUIRE(run != NULL);
    T_OK(u_step_text(run, "one", "1"));
    T_OK(lil_run_close(run));
    T_REQUIRE(pipe(fds) == 0);
    pid = child_writer("held", 0, true, fds[1]);
    T_REQUIRE(pid > 0);
    T_CHECK(read(fds[0], &c, 1) == 1 && c == 'y');
    T_OK(lil_run_wait(st, "held", 3, 10000, &last)); /* its "late" step */
    T_CHECK(last > 3);
    f = facts(st, "held");
    T_REQUIRE(f != NULL);
    T_EQ_STR(str(f, "status"), "running");
    T_EQ_I64(num(json_object_get(f, "holder"), "pid"), pid);
    json_decref(f);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(fds[0]);
    close(fds[1]);
    lil_store_close(st);
}

T_TEST(wait_returns_on_a_new_record_and_times_out_otherwise)
{
    lil_store *st = u_store(NULL);
    lil_run *run;
    uint64_t last = 0, before;
    struct timespec t0, t1;
    int fds[2];
    char c = 0;
    pid_t pid;
    json_t *page;

    T_REQUIRE(st != NULL);
    run = u_run(st, "w");
    T_REQUIRE(run != NULL);
    T_OK(u_step_text(run, "one", "1"));
    T_OK(lil_run_close(run));
    T_OK(lil_run_wait(st, "w", 0, 0, &before)); /* already past 0: at once */
    T_CHECK(before >= 3);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    T_OK(lil_run_wait(st, "w", before, 150, &last));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    T_EQ_I64(last, before);
    T_CHECK((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 >=
            140);

    T_REQUIRE(pipe(fds) == 0);
    pid = child_writer("w", 300, false, fds[1]);
    T_REQUIRE(pid > 0);
    T_CHECK(read(fds[0], &c, 1) == 1 && c == 'y');
    /* the child's OPEN record, then its step: follow the run as a client
       would, reading only what is new */
    page = NULL;
    for (int i = 0; i < 10 && !find(page, "step", NULL); i++) {
        uint64_t from = last > before ? last : before;

        T_OK(lil_run_wait(st, "w", from, 20000, &last));
        T_CHECK(last > from);
        json_decref(page);
        page = events(st, "w", from + 1, 0);
        T_CHECK(page != NULL);
    }
    T_CHECK(find(page, "step", NULL) != NULL);
    T_EQ_STR(str(find(page, "step", NULL), "step"), "late");
    json_decref(page);
    waitpid(pid, NULL, 0);
    close(fds[0]);
    close(fds[1]);
    lil_store_close(st);
}

/* ---- a replayed failure's whole reason ----------------------------------------- */

T_TEST(step_failure_gives_the_whole_reason)
{
    lil_store *st = u_store(NULL);
    char long_reason[400];
    struct fn_ctx ok = {0}, bad = {0};
    lil_bytes out = {NULL, 0}, reason = {NULL, 0};
    char *identity = NULL;
    lil_run *run;
    int never = 0;

    T_REQUIRE(st != NULL);
    memset(long_reason, 'r', sizeof(long_reason) - 1);
    long_reason[sizeof(long_reason) - 1] = '\0';
    run = u_run(st, "sf");
    T_REQUIRE(run != NULL);
    bad.fail_msg = long_reason;
    ok.json = "1";
    T_OK(lil_step(run, "x", fn_generic, &ok, &out));
    lil_free(out.data);
    T_EQ_I64(lil_step(run, "x", fn_generic, &bad, NULL), LIL_E_FAILED);
    T_OK(lil_run_close(run));

    run = u_run(st, "sf"); /* replayed: neither function runs */
    T_REQUIRE(run != NULL);
    T_OK(lil_step(run, "x", fn_never, &never, &out));
    lil_free(out.data);
    T_EQ_I64(lil_run_step_failure(run, "x", &identity, &reason), LIL_E_NOTFOUND);
    T_EQ_I64(lil_step(run, "x", fn_never, &never, NULL), LIL_E_FAILED);
    T_EQ_I64(never, 0);
    T_OK(lil_run_step_failure(run, "x", &identity, &reason));
    T_EQ_STR(identity, "x#2");
    T_EQ_MEM(reason.data, reason.len, long_reason, strlen(long_reason));
    lil_free(identity);
    lil_free(reason.data);
    T_EQ_I64(lil_run_step_failure(run, "y", &identity, &reason), LIL_E_NOTFOUND);
    T_CHECK(identity == NULL && reason.data == NULL);
    T_EQ_I64(lil_run_step_failure(NULL, "x", &identity, &reason), LIL_E_INVAL);
    T_EQ_I64(lil_run_step_failure(run, NULL, &identity, &reason), LIL_E_INVAL);
    T_EQ_I64(lil_run_step_failure(run, "x", NULL, &reason), LIL_E_INVAL);
    T_EQ_I64(lil_run_step_failure(run, "x", &identity, NULL), LIL_E_INVAL);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* ---- the options of lil_run_events_with ---------------------------------------- */

/* The events of page from index at on (a new array). */
static json_t *events_from(const json_t *page, size_t at)
{
    json_t *a = json_array(), *ev;
    size_t i;

    json_array_foreach(json_object_get(page, "events"), i, ev)
    {
        if (i >= at)
            json_array_append(a, ev);
    }
    return a;
}

T_TEST(events_types_filter)
{
    lil_store *st = u_store(NULL);
    lil_events_opts o = {.struct_size = sizeof(o), .types = "effect,iteration_end"};
    json_t *all, *page;
    char types[512];

    T_REQUIRE(st != NULL);
    T_REQUIRE(loop_run(st) == LIL_OK);
    all = events(st, "hist", 0, 0);
    page = events_with(st, "hist", &o);
    T_REQUIRE(all != NULL && page != NULL);
    types_of(page, types, sizeof(types));
    T_EQ_STR(types, "effect iteration_end effect iteration_end");
    T_EQ_I64(num(page, "next"), num(all, "next"));
    T_EQ_I64(num(page, "last_seq"), num(all, "last_seq"));
    T_CHECK(json_object_get(page, "iterations_before") == NULL);
    T_CHECK(json_equal(json_array_get(json_object_get(page, "events"), 0),
                       find(all, "effect", NULL)));
    json_decref(page);
    o.types = ""; /* every type */
    page = events_with(st, "hist", &o);
    T_REQUIRE(page != NULL);
    T_CHECK(json_equal(page, all));
    json_decref(page);
    page = events_with(st, "hist", NULL); /* no options: lil_run_events' page */
    T_REQUIRE(page != NULL);
    T_CHECK(json_equal(page, all));
    json_decref(page);
    json_decref(all);
    lil_store_close(st);
}

T_TEST(events_brief)
{
    lil_store *st = u_store(NULL);
    lil_events_opts o = {.struct_size = sizeof(o), .flags = LIL_EVENTS_BRIEF};
    json_t *all, *page, *ev;
    size_t i, records = 0;
    uint64_t last = 0;

    T_REQUIRE(st != NULL);
    T_REQUIRE(loop_run(st) == LIL_OK);
    all = events(st, "hist", 0, 0);
    page = events_with(st, "hist", &o);
    T_REQUIRE(all != NULL && page != NULL);
    json_array_foreach(json_object_get(page, "events"), i, ev)
    {
        size_t at = 0;
        json_t *full = NULL, *cand;
        /* one event per record, the record's own: the full page's last of its seq */
        T_CHECK((uint64_t)num(ev, "seq") > last);
        last = (uint64_t)num(ev, "seq");
        records++;
        T_CHECK(strcmp(str(ev, "type"), "iteration_start") != 0);
        T_CHECK(strcmp(str(ev, "type"), "wake") != 0);
        T_EQ_I64((long long)json_object_size(ev), json_object_get(ev, "loop") ? 3 : 2);
        while ((cand = find(all, str(ev, "type"), &at)) != NULL)
            if (num(cand, "seq") == num(ev, "seq"))
                full = cand;
        T_REQUIRE(full != NULL);
        if (json_object_get(full, "loop"))
            T_CHECK(
                json_equal(json_object_get(ev, "loop"), json_object_get(full, "loop")));
        else
            T_CHECK(json_object_get(ev, "loop") == NULL);
    }
    T_EQ_I64((long long)records, num(all, "last_seq"));
    T_EQ_I64(num(page, "next"), num(all, "next"));
    json_decref(page);
    json_decref(all);
    lil_store_close(st);
}

T_TEST(events_last_iterations)
{
    lil_store *st = u_store(NULL);
    lil_events_opts o = {.struct_size = sizeof(o), .last_iterations = 1};
    json_t *all, *page;
    size_t at = 0;
    json_t *want, *got;

    T_REQUIRE(st != NULL);
    T_REQUIRE(loop_run(st) == LIL_OK);
    all = events(st, "hist", 0, 0);
    T_REQUIRE(all != NULL);
    (void)find(all, "iteration_start", &at);
    (void)find(all, "iteration_start", &at); /* the second (and last) iteration */
    page = events_with(st, "hist", &o);
    T_REQUIRE(page != NULL);
    T_EQ_STR(str(json_array_get(json_object_get(page, "events"), 0), "type"),
             "iteration_start");
    T_EQ_I64(num(page, "iterations_before"), 1);
    want = events_from(all, at - 1);
    got = events_from(page, 0);
    T_CHECK(json_array_size(got) > 0);
    T_CHECK(json_equal(got, want)); /* the same events as from the first record */
    json_decref(want);
    json_decref(got);
    json_decref(page);
    o.last_iterations = 10; /* more than the run has: the whole run */
    page = events_with(st, "hist", &o);
    T_REQUIRE(page != NULL);
    T_EQ_I64(num(page, "iterations_before"), 0);
    T_CHECK(
        json_equal(json_object_get(page, "events"), json_object_get(all, "events")));
    json_decref(page);
    o.last_iterations = 1; /* from_seq later than the last iteration's start */
    o.from_seq = (uint64_t)num(all, "last_seq");
    page = events_with(st, "hist", &o);
    T_REQUIRE(page != NULL);
    T_EQ_I64(num(json_array_get(json_object_get(page, "events"), 0), "seq"),
             num(all, "last_seq"));
    T_EQ_I64(num(page, "iterations_before"), 2);
    json_decref(page);
    json_decref(all);
    lil_store_close(st);
}

T_TEST(events_state)
{
    lil_store *st = u_store(NULL);
    lil_events_opts o = {.struct_size = sizeof(o), .flags = LIL_EVENTS_STATE};
    json_t *all, *page, *ev, *plain;
    size_t i;

    T_REQUIRE(st != NULL);
    T_REQUIRE(loop_run(st) == LIL_OK);
    all = events(st, "hist", 0, 0);
    page = events_with(st, "hist", &o);
    T_REQUIRE(all != NULL && page != NULL);
    /* the same page, but each iteration_end holds the state it committed */
    T_EQ_I64((long long)json_array_size(json_object_get(page, "events")),
             (long long)json_array_size(json_object_get(all, "events")));
    json_array_foreach(json_object_get(page, "events"), i, ev)
    {
        plain = json_deep_copy(ev);
        if (strcmp(str(ev, "type"), "iteration_end") == 0) {
            T_CHECK(json_is_object(json_object_get(ev, "state")));
            T_CHECK(json_is_object(json_object_get(ev, "meters")));
            json_object_del(plain, "state");
            json_object_del(plain, "meters");
        } else {
            T_CHECK(json_object_get(ev, "state") == NULL);
        }
        T_CHECK(json_equal(plain, json_array_get(json_object_get(all, "events"), i)));
        json_decref(plain);
    }
    json_decref(page);
    /* only the iteration ends, from the second record on: n after each */
    o.types = "iteration_end";
    o.from_seq = 2;
    page = events_with(st, "hist", &o);
    T_REQUIRE(page != NULL);
    T_EQ_I64((long long)json_array_size(json_object_get(page, "events")), 2);
    json_array_foreach(json_object_get(page, "events"), i, ev)
    {
        T_EQ_I64(num(ev, "iteration"), (long long)i);
        T_EQ_I64(num(json_object_get(ev, "state"), "n"), (long long)i + 1);
        T_CHECK(json_is_object(json_object_get(ev, "meters")));
    }
    json_decref(page);
    json_decref(all);
    /* a program run has no snapshot: the page is lil_run_events' */
    program_run(st, "prog");
    o.types = NULL;
    o.from_seq = 0;
    all = events(st, "prog", 0, 0);
    page = events_with(st, "prog", &o);
    T_REQUIRE(all != NULL && page != NULL);
    T_CHECK(json_equal(page, all));
    json_decref(page);
    json_decref(all);
    lil_store_close(st);
}

T_TEST(events_with_bad_options)
{
    lil_store *st = u_store(NULL);
    lil_events_opts o = {.struct_size = sizeof(o), .flags = 1u << 7};
    lil_bytes b = {NULL, 0};

    T_REQUIRE(st != NULL);
    program_run(st, "prog");
    T_EQ_I64(lil_run_events_with(st, "prog", &o, &b), LIL_E_INVAL);
    o.flags = LIL_EVENTS_BRIEF | LIL_EVENTS_STATE; /* a brief event holds no state */
    T_EQ_I64(lil_run_events_with(st, "prog", &o, &b), LIL_E_INVAL);
    T_CHECK(strstr(lil_store_errmsg(st), "LIL_EVENTS_STATE") != NULL);
    o.flags = 0;
    o.struct_size = sizeof(o) - 1;
    T_EQ_I64(lil_run_events_with(st, "prog", &o, &b), LIL_E_INVAL);
    o.struct_size = sizeof(o);
    T_EQ_I64(lil_run_events_with(st, "prog", &o, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_run_events_with(NULL, "prog", &o, &b), LIL_E_INVAL);
    T_CHECK(b.data == NULL && b.len == 0);
    T_EQ_I64(lil_run_events_with(st, "nosuch", &o, &b), LIL_E_NOTFOUND);
    lil_store_close(st);
}

/* ---- misuse ------------------------------------------------------------------------
 */

T_TEST(bad_arguments_and_unknown_runs)
{
    lil_store *st = u_store(NULL);
    lil_bytes b = {NULL, 0};
    uint64_t last = 7;

    T_REQUIRE(st != NULL);
    program_run(st, "prog");
    T_EQ_I64(lil_run_facts(NULL, "prog", &b), LIL_E_INVAL);
    T_EQ_I64(lil_run_facts(st, NULL, &b), LIL_E_INVAL);
    T_EQ_I64(lil_run_facts(st, "a/b", &b), LIL_E_INVAL);
    T_EQ_I64(lil_run_facts(st, "prog", NULL), LIL_E_INVAL);
    T_EQ_I64(lil_run_events(NULL, "prog", 0, 0, &b), LIL_E_INVAL);
    T_EQ_I64(lil_run_events(st, "", 0, 0, &b), LIL_E_INVAL);
    T_EQ_I64(lil_run_events(st, "prog", 0, 0, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_run_wait(NULL, "prog", 0, 0, &last), LIL_E_INVAL);
    T_EQ_I64(lil_run_wait(st, "prog", 0, -1, &last), LIL_E_INVAL);
    T_EQ_I64(last, 0);
    T_EQ_I64(lil_run_wait(st, "prog", 0, 0, NULL), LIL_E_INVAL);
    T_CHECK(b.data == NULL && b.len == 0);
    T_EQ_I64(lil_run_facts(st, "nosuch", &b), LIL_E_NOTFOUND);
    T_EQ_I64(lil_run_events(st, "nosuch", 0, 0, &b), LIL_E_NOTFOUND);
    T_EQ_I64(lil_run_wait(st, "nosuch", 0, 50, &last), LIL_E_NOTFOUND);
    T_CHECK(b.data == NULL);
    T_CHECK(strlen(lil_store_errmsg(st)) > 0);
    lil_store_close(st);
}

T_MAIN()
