/*
 * test_loop_facts.c -- lil_loop_facts through lil.h: a loop run's facts
 * from its journal alone, on a run handle opened read-only, with no spec.
 *
 * What it proves: the facts are the runner's own.  After each state a
 * loop run can be left in -- completed, paused on a cap, an agent call
 * killed mid-call (uncertain, its reservation held), that call aborted
 * (stopped, the reservation counted) -- the "meters" of the facts equal,
 * key for key, the "meters" lil_loop_current reports through a loop
 * opened with the spec, and the status, reason and iteration are its
 * answer; "budget" is what the meters say is used, reserved and left.  A
 * run another process holds reads "running" with that process's pid; an
 * ordinary run is LIL_E_NOTFOUND; bad arguments are LIL_E_INVAL.
 *
 * The agent calls go through the `cli` harness (LIL_AGENT_CMD): a script
 * that answers, or one that SIGKILLs the process running the loop (its
 * parent) so that the call has an intent and no outcome.
 */
#include <lil/lil.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "api_util.h"
#include "t.h"

/* Agent calls of the cli harness against token and usd budgets. */
static const char agent_spec[] =
    "loopspec: \"0.1\"\n"
    "id: facts\n"
    "pattern: react\n"
    "state: { vars: { n: { type: int, init: 0 } } }\n"
    "body:\n"
    "  - { id: think, kind: agent, harness: cli, prompt: \"round ${state.n}\", "
    "on_done: { incr: n } }\n"
    "terminate: { signal: state-predicate, until: \"${state.n >= 2}\" }\n"
    "caps: { max_iterations: 5, on_cap_exceeded: fail, budget: { tokens: 1000, usd: "
    "1.0, wallclock: 1h } }\n";

/* Shell steps only; max_iterations 1 with a breakpoint: paused on the cap. */
static const char shell_spec[] =
    "loopspec: \"0.1\"\n"
    "id: shells\n"
    "pattern: react\n"
    "state: { vars: { n: { type: int, init: 0 } } }\n"
    "body:\n"
    "  - { id: bump, kind: shell, cmd: \"true\", on_done: { incr: n } }\n"
    "terminate: { signal: state-predicate, until: \"${state.n >= 3}\" }\n"
    "caps: { max_iterations: %d, on_cap_exceeded: breakpoint, budget: { tokens: 500 "
    "} }\n";

/* ---- specs, loops, facts and answers ----------------------------------------- */

static lil_spec *spec_of(const char *text)
{
    lil_spec *spec = NULL;

    if (lil_spec_parse(NULL, "loop.yaml", text, strlen(text), NULL, &spec) != LIL_OK ||
        !lil_spec_ok(spec)) {
        fprintf(stderr, "the test's spec does not load:\n%s\n", text);
        lil_spec_free(spec);
        return NULL;
    }
    return spec;
}

static lil_loop *open_loop(lil_store *st, const lil_spec *spec)
{
    lil_loop_opts o;
    lil_loop *lp = NULL;

    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.actor = "tester";
    if (lil_loop_open(st, spec, &o, &lp) != LIL_OK)
        fprintf(stderr, "lil_loop_open: %s\n", lil_store_errmsg(st));
    return lp;
}

/* The facts of run id (a new reference), read through a read-only handle;
 * NULL (and *rc) on failure. */
static json_t *facts_of(lil_store *st, const char *id, lil_status *rc)
{
    lil_run_opts ro = {sizeof(ro), LIL_SYNC_DEFAULT,
                       LIL_OPEN_READONLY | LIL_OPEN_EXISTING, 0};
    lil_bytes b = {NULL, 0};
    lil_run *run = NULL;
    json_t *doc = NULL;

    *rc = lil_run_open(st, id, &ro, &run);
    if (*rc == LIL_OK)
        *rc = lil_loop_facts(run, &b);
    if (*rc == LIL_OK) {
        T_CHECK(b.len == strlen(b.data));
        doc = json_loadb(b.data, b.len, 0, NULL);
    }
    if (*rc != LIL_OK)
        fprintf(stderr, "lil_loop_facts: %s\n", run ? lil_run_errmsg(run) : "no run");
    lil_free(b.data);
    lil_run_close(run);
    return doc;
}

/* What the runner answers now (lil_loop_current), as its JSON. */
static json_t *current(lil_loop *lp)
{
    lil_loop_result res;
    json_t *doc = NULL;

    memset(&res, 0, sizeof(res));
    if (lil_loop_current(lp, &res) == LIL_OK)
        doc = json_loads(res.json, 0, NULL);
    lil_loop_result_free(&res);
    return doc;
}

/* a and b equal but for their wallclock (its elapsed counts to now). */
static bool meters_equal(const json_t *a, const json_t *b)
{
    json_t *x = json_deep_copy(a), *y = json_deep_copy(b);
    bool same;

    json_object_del(x, "wallclock");
    json_object_del(y, "wallclock");
    same = x && y && json_equal(x, y);
    if (!same) {
        char sx[2048], sy[2048];
        size_t nx = json_dumpb(a, sx, sizeof(sx) - 1, JSON_COMPACT);
        size_t ny = json_dumpb(b, sy, sizeof(sy) - 1, JSON_COMPACT);

        sx[nx < sizeof(sx) ? nx : 0] = '\0';
        sy[ny < sizeof(sy) ? ny : 0] = '\0';
        fprintf(stderr, "meters differ:\n  facts  %s\n  runner %s\n", sx, sy);
    }
    json_decref(x);
    json_decref(y);
    return same;
}

/* The facts agree with the runner's answer res: status, reason, iteration,
 * state, meters; and "budget" is what the meters say. */
static void agree(const json_t *facts, const json_t *res)
{
    const json_t *m = json_object_get(res, "meters");
    const json_t *tok = json_object_get(m, "tokens");
    const json_t *bt = json_object_get(json_object_get(facts, "budget"), "tokens");
    json_int_t used = json_integer_value(json_object_get(tok, "used"));
    json_int_t limit = json_integer_value(json_object_get(tok, "budget"));

    T_REQUIRE(facts && res && m);
    T_EQ_STR(json_string_value(json_object_get(facts, "status")),
             json_string_value(json_object_get(res, "status")));
    T_CHECK(json_equal(
        json_object_get(facts, "reason") ? json_object_get(facts, "reason")
                                         : json_null(),
        json_object_get(res, "reason") ? json_object_get(res, "reason") : json_null()));
    T_EQ_I64(json_integer_value(json_object_get(facts, "iteration")),
             json_integer_value(json_object_get(res, "iteration")));
    T_CHECK(json_equal(json_object_get(facts, "state"), json_object_get(res, "state")));
    T_CHECK(meters_equal(json_object_get(facts, "meters"), m));
    T_EQ_I64(json_integer_value(json_object_get(bt, "limit")), limit);
    T_EQ_I64(json_integer_value(json_object_get(bt, "used")), used);
    T_EQ_I64(json_integer_value(json_object_get(bt, "reserved")),
             json_integer_value(json_object_get(tok, "reserved")));
    T_EQ_I64(json_integer_value(json_object_get(bt, "left")),
             limit > used ? limit - used : 0);
}

static void write_script(const char *name, const char *body)
{
    const char *path = t_path(name);

    T_REQUIRE(u_write_file(path, body, strlen(body)) == 0);
    T_REQUIRE(chmod(path, 0755) == 0);
}

/* Run spec's loop to its end in a child process (whose agent calls may
 * kill it); its exit status. */
static int run_in_child(const char *spec_text)
{
    pid_t pid = fork();
    int status = -1;

    T_CHECK(pid >= 0);
    if (pid == 0) {
        lil_store *st = u_store(NULL);
        lil_spec *spec = spec_of(spec_text);
        lil_loop *lp = st && spec ? open_loop(st, spec) : NULL;
        lil_loop_result res;

        memset(&res, 0, sizeof(res));
        if (!lp || lil_loop_run(lp, &res) != LIL_OK)
            _exit(9);
        _exit(lil_loop_exit_code(res.status));
    }
    T_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    return status;
}

/* ---- the runner's facts ------------------------------------------------------ */

T_TEST(completed_run)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    char text[2048];
    lil_store *st = u_store(NULL);
    lil_spec *spec;
    lil_loop *lp;
    lil_loop_result res;
    json_t *facts, *now, *caps;
    lil_status rc;

    snprintf(text, sizeof(text), shell_spec, 10);
    spec = spec_of(text);
    T_REQUIRE(st && spec);
    lp = open_loop(st, spec);
    T_REQUIRE(lp);
    memset(&res, 0, sizeof(res));
    T_OK(lil_loop_run(lp, &res));
    T_EQ_I64(res.status, LIL_LOOP_COMPLETED);
    lil_loop_result_free(&res);
    now = current(lp);
    facts = facts_of(st, "shells", &rc);
    T_OK(rc);
    agree(facts, now);
    T_CHECK(json_is_true(json_object_get(facts, "ended")));
    T_EQ_STR(json_string_value(json_object_get(facts, "loop")), "shells");
    T_CHECK(
        strstr(json_string_value(json_object_get(facts, "spec_path")), "loop.yaml"));
    /* the loop is open here: this process holds the run */
    T_EQ_I64(json_integer_value(json_object_get(facts, "holder_pid")), getpid());
    T_CHECK(json_is_null(json_object_get(facts, "uncertain")));
    T_CHECK(json_is_null(json_object_get(facts, "paused")));
    T_EQ_I64(json_array_size(json_object_get(facts, "reservations")), 0);
    caps = json_pack("{s:i, s:s, s:i}", "max_iterations", 10, "on_cap_exceeded",
                     "breakpoint", "tokens", 500);
    T_CHECK(json_equal(json_object_get(facts, "caps"), caps));
    T_CHECK(json_is_null(json_object_get(json_object_get(facts, "budget"), "usd")));
    json_decref(caps);
    json_decref(facts);
    json_decref(now);
    T_OK(lil_loop_close(lp));
    lil_spec_free(spec);
    lil_store_close(st);
}

T_TEST(paused_on_a_cap)
{
    char text[2048];
    lil_store *st = u_store(NULL);
    lil_spec *spec;
    lil_loop *lp;
    lil_loop_result res;
    json_t *facts, *now, *paused;
    lil_status rc;

    snprintf(text, sizeof(text), shell_spec, 1);
    spec = spec_of(text);
    T_REQUIRE(st && spec);
    lp = open_loop(st, spec);
    T_REQUIRE(lp);
    memset(&res, 0, sizeof(res));
    T_OK(lil_loop_run(lp, &res));
    T_EQ_I64(res.status, LIL_LOOP_PAUSED);
    lil_loop_result_free(&res);
    now = current(lp);
    facts = facts_of(st, "shells", &rc);
    agree(facts, now);
    T_EQ_STR(json_string_value(json_object_get(facts, "reason")), "max_iterations");
    T_CHECK(json_is_false(json_object_get(facts, "ended")));
    paused = json_pack("{s:s, s:s, s:s, s:i}", "kind", "cap", "cap", "max_iterations",
                       "action", "breakpoint", "iteration", 1);
    {
        json_t *got = json_deep_copy(json_object_get(facts, "paused"));
        const char *id = json_string_value(json_object_get(got, "id"));
        const char *digest = json_string_value(json_object_get(got, "digest"));

        /* the pause's id is its cap record's name; its digest is 64 hex digits */
        T_CHECK(id && strncmp(id, "cap.", 4) == 0);
        T_CHECK(digest && strlen(digest) == 64);
        json_object_del(got, "id");
        json_object_del(got, "digest");
        T_CHECK(json_equal(got, paused));
        json_decref(got);
    }
    json_decref(paused);
    json_decref(facts);
    json_decref(now);
    T_OK(lil_loop_close(lp));
    lil_spec_free(spec);
    lil_store_close(st);
}

/* An agent call killed mid-call: uncertain, its reservation held and
 * counted; aborted: stopped, the reservation counted in full. */
T_TEST(killed_agent_call_then_abort)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(agent_spec);
    json_t *facts, *now, *held;
    lil_loop *lp;
    lil_loop_result res;
    json_int_t reserved;
    lil_status rc;
    int status;

    T_REQUIRE(st && spec);
    write_script("killer.sh", "#!/bin/sh\nkill -9 $PPID\nexit 0\n");
    setenv("LIL_AGENT_CMD", t_path("killer.sh"), 1);
    setenv("LIL_AGENT_MAX_TOKENS", "100", 1);
    status = run_in_child(agent_spec);
    T_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    facts = facts_of(st, "facts", &rc);
    T_OK(rc);
    T_EQ_STR(json_string_value(json_object_get(facts, "status")), "uncertain");
    held = json_array_get(json_object_get(facts, "reservations"), 0);
    T_EQ_STR(json_string_value(json_object_get(held, "slot")), "0.0");
    reserved = json_integer_value(json_object_get(held, "tokens"));
    T_CHECK(reserved > 100); /* the prompt's bytes + the limit */
    T_CHECK(json_is_true(json_object_get(held, "unpriced"))); /* all usd left */
    T_CHECK(json_real_value(json_object_get(held, "usd")) == 1.0);
    T_EQ_STR(
        json_string_value(json_object_get(json_object_get(facts, "uncertain"), "kind")),
        "agent");
    lp = open_loop(st, spec);
    T_REQUIRE(lp);
    now = current(lp);
    agree(facts, now);
    T_EQ_I64(
        json_integer_value(json_object_get(
            json_object_get(json_object_get(facts, "budget"), "tokens"), "reserved")),
        reserved);
    json_decref(facts);
    json_decref(now);
    /* aborted: the call counts at its reservation */
    memset(&res, 0, sizeof(res));
    T_OK(lil_loop_recover(lp, LIL_RESOLVE_ABORT, NULL, "tester", "give up", &res));
    T_EQ_I64(res.status, LIL_LOOP_STOPPED);
    lil_loop_result_free(&res);
    now = current(lp);
    facts = facts_of(st, "facts", &rc);
    agree(facts, now);
    T_CHECK(json_is_true(json_object_get(facts, "ended")));
    T_EQ_I64(json_array_size(json_object_get(facts, "reservations")), 0);
    T_EQ_I64(
        json_integer_value(json_object_get(json_object_get(facts, "totals"), "tokens")),
        reserved);
    json_decref(facts);
    json_decref(now);
    T_OK(lil_loop_close(lp));
    unsetenv("LIL_AGENT_CMD");
    unsetenv("LIL_AGENT_MAX_TOKENS");
    lil_spec_free(spec);
    lil_store_close(st);
}

/* Calls that answer without a usage (the cli harness reports none):
 * settled at their reservations. */
T_TEST(agent_calls_settled)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(agent_spec);
    json_t *facts, *now;
    lil_loop *lp;
    lil_status rc;

    T_REQUIRE(st && spec);
    write_script("agent.sh", "#!/bin/sh\necho fine\n");
    setenv("LIL_AGENT_CMD", t_path("agent.sh"), 1);
    setenv("LIL_AGENT_MAX_TOKENS", "100", 1);
    T_EQ_I64(WEXITSTATUS(run_in_child(agent_spec)), 0);
    lp = open_loop(st, spec);
    T_REQUIRE(lp);
    now = current(lp);
    facts = facts_of(st, "facts", &rc);
    agree(facts, now);
    T_EQ_STR(json_string_value(json_object_get(facts, "status")), "completed");
    T_EQ_I64(json_integer_value(json_object_get(facts, "iteration")), 2);
    T_EQ_I64(json_array_size(json_object_get(facts, "reservations")), 0);
    json_decref(facts);
    json_decref(now);
    T_OK(lil_loop_close(lp));
    unsetenv("LIL_AGENT_CMD");
    unsetenv("LIL_AGENT_MAX_TOKENS");
    lil_spec_free(spec);
    lil_store_close(st);
}

/* ---- holders, ordinary runs, misuse ------------------------------------------ */

T_TEST(held_by_another_process_reads_running)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    char text[2048];
    lil_store *st = u_store(NULL);
    lil_spec *spec;
    lil_loop *lp;
    lil_loop_result res;
    json_t *facts;
    lil_status rc;
    int fds[2];
    char c = 0;
    pid_t pid;

    snprintf(text, sizeof(text), shell_spec, 10);
    spec = spec_of(text);
    T_REQUIRE(st && spec);
    lp = open_loop(st, spec);
    T_REQUIRE(lp);
    memset(&res, 0, sizeof(res));
    T_OK(lil_loop_step(lp, &res)); /* one iteration: waiting */
    T_EQ_I64(res.status, LIL_LOOP_WAITING);
    lil_loop_result_free(&res);
    T_OK(lil_loop_close(lp));
    T_REQUIRE(pipe(fds) == 0);
    pid = fork();
    T_REQUIRE(pid >= 0);
    if (pid == 0) { /* hold the run until the parent is done */
        lil_store *cst = u_store(NULL);
        lil_run *run = cst ? u_run(cst, "shells") : NULL;

        close(fds[0]);
        if (run && write(fds[1], "x", 1) == 1)
            pause();
        _exit(1);
    }
    close(fds[1]);
    T_CHECK(read(fds[0], &c, 1) == 1);
    close(fds[0]);
    facts = facts_of(st, "shells", &rc);
    T_OK(rc);
    T_EQ_STR(json_string_value(json_object_get(facts, "status")), "running");
    T_EQ_I64(json_integer_value(json_object_get(facts, "holder_pid")), pid);
    T_EQ_I64(json_integer_value(json_object_get(facts, "iteration")), 1);
    json_decref(facts);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    facts = facts_of(st, "shells", &rc);
    T_EQ_STR(json_string_value(json_object_get(facts, "status")), "waiting");
    json_decref(facts);
    lil_spec_free(spec);
    lil_store_close(st);
}

T_TEST(an_ordinary_run_is_not_found)
{
    lil_store *st = u_store(NULL);
    lil_run *run = st ? u_run(st, "plain") : NULL;
    lil_bytes b = {NULL, 0};

    T_REQUIRE(run);
    T_OK(u_step_text(run, "loop", "{\"reason\":\"x\"}"));
    T_EQ_I64(lil_loop_facts(run, &b), LIL_E_NOTFOUND);
    T_CHECK(b.data == NULL && b.len == 0);
    T_CHECK(strstr(lil_run_errmsg(run), "not a loop run") != NULL);
    T_EQ_I64(lil_loop_facts(run, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_loop_facts(NULL, &b), LIL_E_INVAL);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_MAIN()
