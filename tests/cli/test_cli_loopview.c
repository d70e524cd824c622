/*
 * test_cli_loopview.c -- `lil ls`, `lil inspect` and `lil log` on loop runs
 * (docs/loops.md, "Records"; docs/cli.md).
 *
 * The loop runs are made by the real binary: `lil run` on small specs the
 * test writes (shell steps that run `true`, `echo` or `sleep 5`), then
 * stopped where each status comes about: completed, paused at a
 * breakpoint and at a cap, waiting on a sleep, stopped by a request,
 * failed by a cap, uncertain (`lil run` killed with SIGKILL inside a
 * `sleep 5` effect; running while it lives), aborted.  Tokens and usd:
 * a journal written through lil.h with the records the runner writes for
 * agent calls (reported, priced; estimated and unpriced) checks every
 * figure -- per call, per iteration, per run, the budget left -- exactly;
 * tests/loop/t_agentview.py does the same with runs of the real harnesses.
 * Each verb's text and JSON are checked against what the runner says
 * (its exit status and --json result), and ordinary runs must show no
 * loop, even with steps named like loop records.
 */
#include <lil/lil.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli_util.h"
#include "t.h"

static char out[C_OUT_CAP], err[C_OUT_CAP];

/* ---- helpers ------------------------------------------------------------------ */

/* Write a spec: the common head, id, then body (steps), terminate and caps. */
static const char *spec(const char *id, const char *body, const char *until,
                        const char *caps)
{
    static char path[4096];
    char name[256];
    FILE *f;

    snprintf(name, sizeof(name), "%s.yaml", id);
    snprintf(path, sizeof(path), "%s", t_path(name));
    f = fopen(path, "w");
    if (!f) {
        t_fail();
        return path;
    }
    fprintf(f,
            "loopspec: \"0.1\"\nid: %s\npattern: react\nstate:\n  vars:\n"
            "    n: {type: int, init: 0}\nbody:\n%sterminate:\n"
            "  signal: state-predicate\n  until: \"${state.n >= %s}\"\ncaps:\n%s",
            id, body, until, caps);
    fclose(f);
    return path;
}

#define STEP_BUMP \
    "  - id: bump\n    kind: shell\n    cmd: \"true\"\n    on_done:\n      incr: n\n"
#define STEP_SLOW \
    "  - id: slow\n    kind: shell\n    cmd: \"sleep 5\"\n    on_done:\n      incr: n\n"
#define STEP_ASK \
    "  - id: ok\n    kind: breakpoint\n    ask: \"Go on after ${state.n}?\"\n"
#define STEP_NAP "  - id: nap\n    kind: sleep\n    for: 1h\n"
#define CAPS_10  "  max_iterations: 10\n"

/* `lil --dir STORE ARGS` (ARGS formatted), into out and err. */
static int lil(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int lil(const char *fmt, ...)
{
    char args[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    return c_lil(out, err, "--dir '%s' %s", c_store(), args);
}

/* The run object of id in an `ls --json` document. */
static json_t *ls_run(json_t *doc, const char *id)
{
    json_t *r;
    size_t i;

    json_array_foreach(json_object_get(doc, "runs"), i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "id")), id) == 0)
            return r;
    }
    return NULL;
}

/* The line of text that starts with prefix (static copy), or "". */
static const char *line_of(const char *text, const char *prefix)
{
    static char line[8192];
    size_t plen = strlen(prefix);

    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len >= plen && strncmp(p, prefix, plen) == 0) {
            snprintf(line, sizeof(line), "%.*s", (int)len, p);
            return line;
        }
        p = nl ? nl + 1 : NULL;
    }
    return "";
}

/* The loop object of `ls --json` for id (a new reference), or NULL. */
static json_t *ls_loop(const char *id)
{
    json_t *doc, *loop;

    T_EQ_I64(lil("ls --json"), 0);
    doc = c_json(out);
    loop = json_incref(json_object_get(ls_run(doc, id), "loop"));
    json_decref(doc);
    return loop;
}

/* The "loop" object of `inspect ID --json ARGS` (a new reference); *rc
 * gets the exit status. */
static json_t *inspect_loop(const char *id, const char *args, int *rc)
{
    json_t *doc, *loop;

    *rc = lil("inspect '%s' --json %s", id, args);
    doc = c_json(out);
    loop = json_incref(json_object_get(doc, "loop"));
    json_decref(doc);
    return loop;
}

static const char *jstr(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : "(none)";
}

static int64_t jint(const json_t *o, const char *key)
{
    return (int64_t)json_integer_value(json_object_get(o, key));
}

/* `log ID --jsonl`: the record with key (the n-th with that key, 1-based). */
static json_t *jsonl_record(const char *id, const char *key, int nth)
{
    T_EQ_I64(lil("log '%s' --jsonl", id), 0);
    for (char *p = out; p && *p;) {
        char *nl = strchr(p, '\n');
        json_t *o;
        if (nl)
            *nl = '\0';
        o = json_loads(p, 0, NULL);
        if (o && strcmp(jstr(o, "key"), key) == 0 && --nth == 0)
            return o;
        json_decref(o);
        p = nl ? nl + 1 : NULL;
    }
    return NULL;
}

/* The text line of `log ID` whose key column is key (the first). */
static const char *log_line(const char *id, const char *key)
{
    static char line[8192];
    char pat[300];

    T_EQ_I64(lil("log '%s'", id), 0);
    snprintf(pat, sizeof(pat), "  %s  ", key);
    for (const char *p = out; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        snprintf(line, sizeof(line), "%.*s", (int)len, p);
        if (strstr(line, pat))
            return line;
        p = nl ? nl + 1 : NULL;
    }
    return "";
}

/* ---- completed ------------------------------------------------------------------ */

T_TEST(completed_run)
{
    const char *sp = spec("count", STEP_BUMP, "3", CAPS_10);
    json_t *lo, *hist, *eff;
    int rc;

    T_EQ_I64(lil("run '%s'", sp), 0);
    /* ls */
    T_EQ_I64(lil("ls"), 0);
    T_CONTAINS(out, "LOOP");
    T_CONTAINS(line_of(out, "count "), "completed");
    T_CONTAINS(line_of(out, "count "), "3 iterations");
    lo = ls_loop("count");
    T_REQUIRE(json_is_object(lo));
    T_EQ_STR(jstr(lo, "id"), "count");
    T_EQ_STR(jstr(lo, "status"), "completed");
    T_EQ_I64(jint(lo, "iterations"), 3);
    T_EQ_I64(jint(lo, "tokens"), 0);
    T_CHECK(json_is_real(json_object_get(lo, "usd")));
    T_CHECK(json_is_null(json_object_get(lo, "reason")));
    T_CHECK(json_is_null(json_object_get(lo, "wake_at_ms")));
    json_decref(lo);
    /* inspect, text */
    T_EQ_I64(lil("inspect count"), 0);
    T_EQ_STR(line_of(out, "loop "), "loop          count");
    T_CONTAINS(line_of(out, "spec "), "count.yaml (sha256 ");
    T_EQ_STR(line_of(out, "loop status"), "loop status   completed");
    T_EQ_STR(line_of(out, "iterations "), "iterations    3 committed");
    T_EQ_STR(line_of(out, "state "), "state         {\"n\":3}");
    T_CONTAINS(line_of(out, "meters "), "iteration base 0, tokens 0");
    T_CONTAINS(line_of(out, "wallclock "), "(to the last record)");
    T_CONTAINS(out, "\n  iteration 2\n");
    T_CONTAINS(line_of(out, "    2.0 "), "shell       bump              done");
    T_CONTAINS(out, "  SEQ  TIME"); /* the timeline follows */
    /* inspect --json */
    lo = inspect_loop("count", "", &rc);
    T_EQ_I64(rc, 0);
    T_REQUIRE(json_is_object(lo));
    T_EQ_STR(jstr(lo, "status"), "completed");
    T_EQ_I64(jint(lo, "iterations"), 3);
    T_EQ_I64(jint(json_object_get(lo, "state"), "n"), 3);
    T_CHECK(strstr(jstr(lo, "spec_path"), "count.yaml") != NULL);
    T_EQ_I64(strlen(jstr(lo, "spec_sha256")), 64);
    T_CHECK(json_is_object(json_object_get(lo, "inputs")));
    T_CHECK(json_is_null(json_object_get(lo, "uncertain")));
    T_CHECK(json_is_null(json_object_get(lo, "waiting_for")));
    T_CHECK(json_is_null(json_object_get(lo, "stop")));
    T_EQ_I64(jint(lo, "tail"), 10);
    T_EQ_I64(jint(lo, "history_omitted"), 0);
    T_EQ_I64(jint(json_object_get(lo, "meters"), "iteration_base"), 0);
    T_CHECK(jint(json_object_get(lo, "meters"), "elapsed_ms") >= 0);
    hist = json_object_get(lo, "history");
    T_EQ_I64(json_array_size(hist), 3);
    T_EQ_I64(jint(json_array_get(hist, 2), "iteration"), 2);
    T_CHECK(json_is_true(json_object_get(json_array_get(hist, 2), "committed")));
    eff = json_array_get(json_object_get(json_array_get(hist, 0), "effects"), 0);
    T_EQ_STR(jstr(eff, "slot"), "0.0");
    T_EQ_STR(jstr(eff, "kind"), "shell");
    T_EQ_STR(jstr(eff, "step"), "bump");
    T_EQ_STR(jstr(eff, "status"), "done");
    T_CHECK(jint(eff, "dur_us") > 0);
    T_CHECK(!json_object_get(eff, "tokens"));
    json_decref(lo);
}

T_TEST(completed_run_log)
{
    const char *sp = spec("count", STEP_BUMP, "3", CAPS_10);
    json_t *r, *loop;

    T_EQ_I64(lil("run '%s'", sp), 0);
    T_CONTAINS(log_line("count", "loop"), "loop count  spec ");
    T_CONTAINS(log_line("count", "loop"), "inputs {}  state {\"n\":0}");
    T_CONTAINS(log_line("count", "0.0"), "shell {\"cmd\":\"true\"}  request ");
    T_CONTAINS(out, "shell bump  {\"stdout\":\"\",\"code\":0}");
    T_CONTAINS(log_line("count", "1.snap"), "iteration 1 committed  state {\"n\":2}");
    T_CONTAINS(log_line("count", "terminated.1"), "terminated at iteration 3");
    T_CONTAINS(out, "completed at iteration 3");
    /* --jsonl: the loop object, the rest as before */
    r = jsonl_record("count", "loop", 1);
    T_REQUIRE(r);
    T_EQ_STR(jstr(json_object_get(r, "loop"), "kind"), "start");
    T_CHECK(strstr(jstr(r, "payload"), "\"loopId\":\"count\"") != NULL);
    json_decref(r);
    r = jsonl_record("count", "2.0", 2); /* the outcome, after the intent */
    T_REQUIRE(r);
    loop = json_object_get(r, "loop");
    T_EQ_STR(jstr(loop, "kind"), "effect");
    T_EQ_I64(jint(loop, "iteration"), 2);
    T_EQ_I64(jint(loop, "seq"), 0);
    T_EQ_STR(jstr(r, "type"), "step");
    T_CHECK(strstr(jstr(r, "payload"), "\"kind\":\"shell\"") != NULL);
    json_decref(r);
    r = jsonl_record("count", "2.snap", 1);
    T_REQUIRE(r);
    loop = json_object_get(r, "loop");
    T_EQ_STR(jstr(loop, "kind"), "snapshot");
    T_EQ_I64(jint(loop, "iteration"), 2);
    T_CHECK(!json_object_get(loop, "seq"));
    json_decref(r);
    r = jsonl_record("count", "terminated.1", 1);
    T_REQUIRE(r);
    loop = json_object_get(r, "loop");
    T_EQ_STR(jstr(loop, "kind"), "control");
    T_EQ_STR(jstr(loop, "control"), "terminated");
    T_EQ_I64(jint(loop, "n"), 1);
    json_decref(r);
    r = jsonl_record("count", "count", 1); /* the begin record */
    T_REQUIRE(r);
    T_CHECK(!json_object_get(r, "loop"));
    json_decref(r);
    /* --json: the same objects */
    T_EQ_I64(lil("log count --json"), 0);
    r = c_json(out);
    T_EQ_STR(
        jstr(json_object_get(json_array_get(json_object_get(r, "records"), 2), "loop"),
             "kind"),
        "start");
    json_decref(r);
}

/* ---- paused ---------------------------------------------------------------------- */

T_TEST(paused_at_a_breakpoint)
{
    const char *sp = spec("ask", STEP_BUMP STEP_ASK, "2", CAPS_10);
    json_t *lo, *w, *hist;
    int rc;

    T_EQ_I64(lil("run '%s'", sp), 3);
    T_EQ_I64(lil("ls"), 0);
    T_CONTAINS(line_of(out, "ask "), "paused");
    T_CONTAINS(line_of(out, "ask "), "0 iterations");
    lo = ls_loop("ask");
    T_EQ_STR(jstr(lo, "status"), "paused");
    T_CONTAINS(jstr(lo, "reason"), "Go on after 1?");
    json_decref(lo);
    T_EQ_I64(lil("inspect ask"), 0);
    T_EQ_STR(line_of(out, "loop status"), "loop status   paused");
    T_CONTAINS(line_of(out, "waiting for"),
               "approval of ok (iteration 0): Go on after 1?");
    /* a hint that can be pasted: the store and the pause named */
    T_CONTAINS(line_of(out, "waiting for"), " approve ");
    T_CONTAINS(line_of(out, "waiting for"), "--pause pause.1 --reason R");
    T_CONTAINS(out, "  iteration 0 (not committed)\n");
    lo = inspect_loop("ask", "", &rc);
    T_EQ_I64(rc, 0);
    w = json_object_get(lo, "waiting_for");
    T_EQ_STR(jstr(w, "kind"), "breakpoint");
    T_EQ_STR(jstr(w, "step"), "ok");
    T_EQ_STR(jstr(w, "ask"), "Go on after 1?");
    T_EQ_STR(jstr(w, "strategy"), "single");
    T_EQ_I64(jint(w, "iteration"), 0);
    T_EQ_I64(jint(w, "seq"), 1);
    json_decref(lo);
    T_CONTAINS(log_line("ask", "pause.1"),
               "paused at ok (iteration 0): Go on after 1?");
    /* approved: the approval is a slot of iteration 0, the next pause waits */
    T_EQ_I64(lil("approve '%s' --current --actor tester --reason fine", sp), 3);
    lo = inspect_loop("ask", "", &rc);
    T_EQ_I64(jint(lo, "iterations"), 1);
    T_EQ_I64(jint(json_object_get(lo, "waiting_for"), "iteration"), 1);
    hist =
        json_object_get(json_array_get(json_object_get(lo, "history"), 0), "effects");
    T_EQ_STR(jstr(json_array_get(hist, 1), "kind"), "breakpoint");
    T_EQ_STR(jstr(json_array_get(hist, 1), "status"), "approved");
    json_decref(lo);
    T_CONTAINS(log_line("ask", "0.1"), "breakpoint ok approved by tester: fine");
    T_EQ_I64(lil("approve '%s' --current --reason fine", sp), 0);
    lo = ls_loop("ask");
    T_EQ_STR(jstr(lo, "status"), "completed");
    json_decref(lo);
}

T_TEST(paused_at_a_cap)
{
    const char *sp = spec("capped", STEP_BUMP, "5",
                          "  max_iterations: 2\n  on_cap_exceeded: breakpoint\n");
    json_t *lo, *w;
    int rc;

    T_EQ_I64(lil("run '%s'", sp), 3);
    lo = ls_loop("capped");
    T_EQ_STR(jstr(lo, "status"), "paused");
    T_EQ_STR(jstr(lo, "reason"), "max_iterations");
    T_EQ_I64(jint(lo, "iterations"), 2);
    json_decref(lo);
    T_EQ_I64(lil("inspect capped"), 0);
    T_CONTAINS(line_of(out, "waiting for"),
               "cap max_iterations tripped at iteration 2 (breakpoint): lil --dir ");
    T_CONTAINS(line_of(out, "waiting for"), " approve ");
    lo = inspect_loop("capped", "", &rc);
    w = json_object_get(lo, "waiting_for");
    T_EQ_STR(jstr(w, "kind"), "cap");
    T_EQ_STR(jstr(w, "cap"), "max_iterations");
    T_EQ_STR(jstr(w, "action"), "breakpoint");
    T_EQ_I64(jint(w, "iteration"), 2);
    json_decref(lo);
    T_CONTAINS(log_line("capped", "cap.1"),
               "cap max_iterations tripped at iteration 2 (breakpoint)");
    /* approved: the cap is cleared, the run goes on to the next trip */
    T_EQ_I64(lil("approve '%s' --current --actor tester --reason more", sp), 3);
    T_CONTAINS(log_line("capped", "cap_cleared.2"),
               "cap max_iterations approved by tester: more");
    lo = ls_loop("capped");
    T_EQ_I64(jint(lo, "iterations"), 4);
    json_decref(lo);
}

/* ---- waiting, failed
 * ------------------------------------------------------------------ */

T_TEST(waiting_on_a_sleep)
{
    const char *sp = spec("nap", STEP_BUMP STEP_NAP, "3", CAPS_10);
    int64_t now_ms = (int64_t)time(NULL) * 1000;
    json_t *lo;
    int rc;

    T_EQ_I64(lil("run '%s'", sp), 4);
    T_EQ_I64(lil("ls"), 0);
    T_CONTAINS(line_of(out, "nap "), "waiting");
    T_CONTAINS(line_of(out, "nap "), "wakes in ");
    lo = inspect_loop("nap", "", &rc);
    T_EQ_STR(jstr(lo, "status"), "waiting");
    T_CHECK(jint(lo, "wake_at_ms") > now_ms + 3000 * 1000);
    T_EQ_STR(jstr(json_array_get(
                      json_object_get(json_array_get(json_object_get(lo, "history"), 0),
                                      "effects"),
                      1),
                  "kind"),
             "sleep");
    json_decref(lo);
    T_EQ_I64(lil("inspect nap"), 0);
    T_CONTAINS(line_of(out, "wakes at"), "(in ");
    T_CONTAINS(log_line("nap", "0.1"), "sleep until ");
    T_CONTAINS(log_line("nap", "parked.1"), "parked until ");
}

T_TEST(failed_by_a_cap)
{
    const char *sp =
        spec("short", STEP_BUMP, "5", "  max_iterations: 1\n  on_cap_exceeded: fail\n");
    json_t *lo;

    T_EQ_I64(lil("run '%s'", sp), 1);
    lo = ls_loop("short");
    T_EQ_STR(jstr(lo, "status"), "failed");
    T_EQ_STR(jstr(lo, "reason"), "max_iterations");
    T_EQ_I64(jint(lo, "iterations"), 1);
    json_decref(lo);
    T_EQ_I64(lil("inspect short"), 0);
    T_EQ_STR(line_of(out, "loop status"), "loop status   failed");
    T_EQ_STR(line_of(out, "reason "), "reason        max_iterations");
    T_CONTAINS(log_line("short", "cap.1"),
               "cap max_iterations tripped at iteration 1 (fail)");
}

/* ---- stopped -----------------------------------------------------------------------
 */

T_TEST(stopped_by_a_request)
{
    const char *sp = spec("halt", STEP_BUMP, "3", CAPS_10);
    json_t *lo, *stop;
    int rc;

    T_EQ_I64(lil("step '%s'", sp), 4);
    T_EQ_I64(lil("stop '%s' --actor tester --reason enough", sp), 0);
    T_EQ_I64(lil("run '%s'", sp), 5);
    T_EQ_I64(lil("ls"), 0);
    T_CONTAINS(line_of(out, "halt "), "stopped");
    T_CONTAINS(line_of(out, "halt "), "1 iteration");
    lo = ls_loop("halt");
    T_EQ_STR(jstr(lo, "status"), "stopped");
    T_EQ_STR(jstr(lo, "reason"), "enough");
    json_decref(lo);
    T_EQ_I64(lil("inspect halt"), 0);
    T_CONTAINS(line_of(out, "stop "), "requested by tester: enough (lil --dir ");
    T_CONTAINS(line_of(out, "stop "), " resume ");
    lo = inspect_loop("halt", "", &rc);
    stop = json_object_get(lo, "stop");
    T_EQ_STR(jstr(stop, "actor"), "tester");
    T_EQ_STR(jstr(stop, "reason"), "enough");
    T_CHECK(jint(stop, "requested_at_ms") > 0);
    T_CHECK(strstr(jstr(lo, "reason"), "enough") != NULL);
    json_decref(lo);
    T_CONTAINS(log_line("halt", "stop_requested.1"),
               "stop requested by tester: enough");
    /* resumed: cleared, and the run completes */
    T_EQ_I64(lil("resume '%s' --actor tester --reason again", sp), 0);
    T_CONTAINS(log_line("halt", "stop_cleared.2"), "stop cleared by tester: again");
    lo = inspect_loop("halt", "", &rc);
    T_EQ_STR(jstr(lo, "status"), "completed");
    T_CHECK(json_is_null(json_object_get(lo, "stop")));
    json_decref(lo);
}

/* ---- uncertain
 * ----------------------------------------------------------------------- */

/* True once run id has an intent for slot and no outcome for it. */
struct seen {
    const char *slot;
    bool intent, outcome;
};

static int look(void *ud, const lil_record *rec)
{
    struct seen *s = ud;

    if (rec->key_len == strlen(s->slot) &&
        memcmp(rec->key, s->slot, rec->key_len) == 0) {
        s->intent = s->intent || rec->type == LIL_REC_INTENT;
        s->outcome = s->outcome || rec->type == LIL_REC_STEP;
    }
    return 0;
}

static bool inside_effect(const char *id, const char *slot)
{
    lil_run_opts opts = {sizeof(opts), LIL_SYNC_DEFAULT,
                         LIL_OPEN_READONLY | LIL_OPEN_EXISTING, 0};
    struct seen s = {slot, false, false};
    lil_store *st = NULL;
    lil_run *run = NULL;

    if (lil_store_open(NULL, c_store(), &st) == LIL_OK &&
        lil_run_open(st, id, &opts, &run) == LIL_OK)
        (void)lil_run_foreach(run, look, &s);
    lil_run_close(run);
    lil_store_close(st);
    return s.intent && !s.outcome;
}

/* Does a process hold run id (`ls --json`'s holder_pid)? */
static bool held(const char *id)
{
    json_t *doc;
    bool yes;

    if (lil("ls --json") != 0)
        return false;
    doc = c_json(out);
    yes = !json_is_null(json_object_get(ls_run(doc, id), "holder_pid"));
    json_decref(doc);
    return yes;
}

/* `lil run SPEC` in a child, killed with SIGKILL inside effect slot of run
 * id; checks `ls` while it runs. */
static void run_and_kill(const char *sp, const char *id, const char *slot)
{
    pid_t pid = fork();
    int status = 0;
    json_t *lo;

    T_REQUIRE(pid >= 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
            _exit(127);
        execl(t_lil_bin(), "lil", "--dir", c_store(), "run", sp, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 500 && !inside_effect(id, slot); i++)
        usleep(10000);
    T_CHECK(inside_effect(id, slot));
    lo = ls_loop(id); /* a live holder: the effect is in flight */
    T_EQ_STR(jstr(lo, "status"), "running");
    json_decref(lo);
    kill(pid, SIGKILL);
    T_CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status));
    /* the effect's child may hold the journal's descriptor (and its lock)
     * for a moment after lil died: between its spawn and its exec */
    for (int i = 0; i < 500 && held(id); i++)
        usleep(10000);
}

T_TEST(uncertain_after_sigkill)
{
    const char *sp = spec("unsure", STEP_SLOW, "3", CAPS_10);
    json_t *lo, *u, *eff;
    int rc;

    run_and_kill(sp, "unsure", "0.0");
    T_EQ_I64(lil("ls"), 0);
    T_CONTAINS(line_of(out, "unsure "), "uncertain");
    lo = ls_loop("unsure");
    T_EQ_STR(jstr(lo, "status"), "uncertain");
    T_CONTAINS(jstr(lo, "reason"), "effect seq 0 (shell) crashed after starting but "
                                   "before its result was journaled");
    json_decref(lo);
    /* the runner says the same */
    T_EQ_I64(lil("step '%s' --json", sp), 2);
    T_CONTAINS(out, "effect seq 0 (shell) crashed after starting");
    T_EQ_I64(lil("inspect unsure"), 2);
    T_EQ_STR(line_of(out, "in doubt"), "in doubt      0.0 shell {\"cmd\":\"sleep 5\"}");
    T_CONTAINS(line_of(out, "recover "), " recover ");
    T_CONTAINS(line_of(out, "    0.0 "), "uncertain");
    lo = inspect_loop("unsure", "", &rc);
    T_EQ_I64(rc, 2);
    u = json_object_get(lo, "uncertain");
    T_EQ_STR(jstr(u, "slot"), "0.0");
    T_EQ_I64(jint(u, "iteration"), 0);
    T_EQ_I64(jint(u, "seq"), 0);
    T_EQ_STR(jstr(u, "kind"), "shell");
    T_EQ_STR(jstr(u, "identity"), "{\"cmd\":\"sleep 5\"}");
    eff = json_array_get(
        json_object_get(json_array_get(json_object_get(lo, "history"), 0), "effects"),
        0);
    T_EQ_STR(jstr(eff, "status"), "uncertain");
    T_EQ_STR(jstr(eff, "kind"), "shell");
    json_decref(lo);
    T_CONTAINS(log_line("unsure", "0.0"), "shell {\"cmd\":\"sleep 5\"}  request ");
    /* aborted: stopped for good, with the abort's reason */
    T_EQ_I64(lil("recover '%s' --abort --actor tester --reason nope", sp), 5);
    lo = ls_loop("unsure");
    T_EQ_STR(jstr(lo, "status"), "stopped");
    T_EQ_STR(jstr(lo, "reason"), "aborted by tester: nope");
    json_decref(lo);
    lo = inspect_loop("unsure", "", &rc);
    T_EQ_I64(rc, 0);
    T_CHECK(json_is_null(json_object_get(lo, "uncertain")));
    eff = json_array_get(
        json_object_get(json_array_get(json_object_get(lo, "history"), 0), "effects"),
        0);
    T_EQ_STR(jstr(eff, "status"), "aborted");
    json_decref(lo);
    T_CONTAINS(log_line("unsure", "0.0"), "shell {\"cmd\":\"sleep 5\"}");
    T_CONTAINS(out, "resolved: abort by tester: nope");
}

/* ---- long runs: --tail
 * ------------------------------------------------------------------ */

T_TEST(tail_shows_the_last_iterations)
{
    const char *sp = spec("long", STEP_BUMP, "12", "  max_iterations: 20\n");
    json_t *lo, *hist;
    int rc;

    T_EQ_I64(lil("run '%s'", sp), 0);
    lo = inspect_loop("long", "", &rc);
    hist = json_object_get(lo, "history");
    T_EQ_I64(json_array_size(hist), 10);
    T_EQ_I64(jint(lo, "history_omitted"), 2);
    T_EQ_I64(jint(json_array_get(hist, 0), "iteration"), 2);
    T_EQ_I64(jint(json_array_get(hist, 9), "iteration"), 11);
    json_decref(lo);
    lo = inspect_loop("long", "--tail 3", &rc);
    T_EQ_I64(json_array_size(json_object_get(lo, "history")), 3);
    T_EQ_I64(jint(lo, "history_omitted"), 9);
    T_EQ_I64(jint(lo, "tail"), 3);
    json_decref(lo);
    lo = inspect_loop("long", "--tail=100", &rc);
    T_EQ_I64(json_array_size(json_object_get(lo, "history")), 12);
    json_decref(lo);
    T_EQ_I64(lil("inspect long --tail 2"), 0);
    T_CONTAINS(out, "the last 2 iterations (10 before them not shown; --tail N):");
    T_CHECK(!strstr(out, "  iteration 9\n"));
    T_CONTAINS(out, "  iteration 11\n");
    T_EQ_I64(lil("inspect long --tail 0"), 0);
    T_CHECK(!strstr(out, "SLOT"));
    T_EQ_I64(lil("inspect long --tail -1"), 64);
    T_CONTAINS(err, "--tail");
    T_EQ_I64(lil("inspect long --tail 10000000"), 64);
    T_EQ_I64(lil("inspect long --tail"), 64);
    T_EQ_I64(lil("inspect nope --tail x"), 64); /* usage first, then the run */
}

/* ---- usage: an agent's tokens and usd
 * ---------------------------------------------------- */

struct payload {
    const char *json;
};

static int set_json(lil_call *call, void *ud)
{
    const struct payload *p = ud;

    return lil_call_set_json(call, p->json) != LIL_OK;
}

/* A loop run as the runner journals one whose agent step "think" reported
 * usage: iteration 0 committed (100 tokens, $0.25), iteration 1 begun
 * (50 tokens, $0.50 after the snapshot; then step "guess", 40 tokens
 * estimated by the harness and unpriced), with budgets of 1000 tokens and
 * $1. */
static void make_agent_run(const char *id)
{
    static const char *const recs[][2] = {
        {"loop", "{\"baseState\":{\"n\":0},\"inputs\":{},\"loopId\":\"agent\","
                 "\"spec\":\"00\",\"specPath\":\"agent.yaml\",\"startedAt\":1000,"
                 "\"caps\":{\"tokens\":1000,\"usd\":1.0}}"},
        {"0.0", "{\"identity\":\"{}\",\"iteration\":0,\"kind\":\"agent\","
                "\"result\":{\"text\":\"hi\"},\"seq\":0,\"step\":\"think\","
                "\"usage\":{\"tokens\":100,\"usd\":0.25}}"},
        {"0.snap", "{\"iteration\":0,\"meters\":{\"fpResetAt\":0,\"iterationBase\":0,"
                   "\"repeats\":0,\"tokens\":100,\"tokensBase\":0,\"usd\":0.25,"
                   "\"usdBase\":0.0,\"wallclockBase\":1000},\"state\":{\"n\":1}}"},
        {"1.0", "{\"identity\":\"{}\",\"iteration\":1,\"kind\":\"agent\","
                "\"result\":{},\"seq\":0,\"step\":\"think\","
                "\"usage\":{\"tokens\":50,\"usd\":0.5,\"model\":\"gpt-4o\"}}"},
        {"1.1", "{\"identity\":\"{}\",\"iteration\":1,\"kind\":\"agent\","
                "\"result\":{},\"seq\":1,\"step\":\"guess\","
                "\"usage\":{\"tokens\":40,\"estimated\":true,\"model\":\"m\"}}"},
    };
    lil_store *st = c_open_store();
    lil_run *run = st ? c_open_run(st, id) : NULL;

    for (size_t i = 0; run && i < sizeof(recs) / sizeof(recs[0]); i++) {
        struct payload p = {recs[i][1]};
        if (strchr(recs[i][0], '.') && strstr(recs[i][0], "snap") == NULL)
            T_OK(lil_effect(run, recs[i][0], "{}", 2, set_json, &p, NULL));
        else
            T_OK(lil_step(run, recs[i][0], set_json, &p, NULL));
    }
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* The object at key of the n-th entry of array key0 of o. */
static json_t *nth_of(json_t *o, const char *key0, size_t n)
{
    return json_array_get(json_object_get(o, key0), n);
}

T_TEST(tokens_and_usd)
{
    json_t *lo, *eff, *u, *b;
    int rc;

    make_agent_run("agent");
    T_EQ_I64(lil("ls"), 0);
    T_CONTAINS(line_of(out, "agent "), "waiting");
    T_CONTAINS(line_of(out, "agent "),
               "  ~190 tok $0.7500+?      1 iteration, left: ~810 tok $0.2500");
    lo = ls_loop("agent");
    T_EQ_I64(jint(lo, "tokens"), 190);
    T_CHECK(json_real_value(json_object_get(lo, "usd")) > 0.7499 &&
            json_real_value(json_object_get(lo, "usd")) < 0.7501);
    T_CHECK(json_is_true(json_object_get(lo, "estimated")));
    T_EQ_I64(jint(json_object_get(lo, "usage"), "calls"), 3);
    T_EQ_I64(jint(json_object_get(lo, "usage"), "unpriced_calls"), 1);
    T_EQ_I64(jint(json_object_get(json_object_get(lo, "budget"), "tokens"), "left"),
             810);
    json_decref(lo);
    lo = inspect_loop("agent", "", &rc);
    T_EQ_I64(jint(json_object_get(lo, "meters"), "tokens"), 190);
    T_EQ_I64(jint(json_object_get(lo, "meters"), "wallclock_base_ms"), 1000);
    eff = nth_of(nth_of(lo, "history", 0), "effects", 0);
    T_EQ_STR(jstr(eff, "kind"), "agent");
    T_EQ_STR(jstr(eff, "step"), "think");
    T_EQ_I64(jint(eff, "tokens"), 100);
    T_CHECK(json_real_value(json_object_get(eff, "usd")) == 0.25);
    T_CHECK(json_is_false(json_object_get(eff, "estimated")));
    T_CHECK(json_is_null(json_object_get(eff, "model")));
    eff = nth_of(nth_of(lo, "history", 1), "effects", 1);
    T_EQ_I64(jint(eff, "tokens"), 40);
    T_CHECK(json_is_null(json_object_get(eff, "usd"))); /* unpriced */
    T_CHECK(json_is_true(json_object_get(eff, "estimated")));
    T_EQ_STR(jstr(eff, "model"), "m");
    u = json_object_get(nth_of(lo, "history", 1), "usage");
    T_EQ_I64(jint(u, "calls"), 2);
    T_EQ_I64(jint(u, "tokens"), 90);
    T_CHECK(json_real_value(json_object_get(u, "usd")) == 0.5);
    T_EQ_I64(jint(u, "estimated_calls"), 1);
    u = json_object_get(lo, "usage");
    T_EQ_I64(jint(u, "calls"), 3);
    T_EQ_I64(jint(u, "tokens"), 190);
    T_CHECK(json_is_true(json_object_get(u, "estimated")));
    b = json_object_get(lo, "budget");
    T_EQ_I64(jint(json_object_get(b, "tokens"), "limit"), 1000);
    T_EQ_I64(jint(json_object_get(b, "tokens"), "used"), 190);
    T_EQ_I64(jint(json_object_get(b, "tokens"), "left"), 810);
    T_CHECK(fabs(json_real_value(json_object_get(json_object_get(b, "usd"), "left")) -
                 0.25) < 1e-9);
    T_CHECK(json_is_null(json_object_get(b, "wallclock_ms")));
    json_decref(lo);
    T_EQ_I64(lil("inspect agent"), 0);
    T_CONTAINS(line_of(out, "meters "),
               "tokens 190 (base 0), usd 0.7500 (base 0.0000)");
    T_EQ_STR(line_of(out, "usage "), "usage         ~190 tokens (estimated in part), "
                                     "$0.7500 + unpriced (1 of 3 calls) in 3 calls");
    T_EQ_STR(line_of(out, "budget "), "budget        tokens ~190/1000 (~810 left)  usd "
                                      "0.7500/1.0000 (0.2500 left) + unpriced calls  ");
    T_EQ_STR(line_of(out, "  iteration 0"),
             "  iteration 0  usage: 100 tokens, $0.2500 in 1 call");
    T_EQ_STR(line_of(out, "  iteration 1"),
             "  iteration 1 (not committed)  usage: ~90 tokens (estimated in part), "
             "$0.5000 + unpriced (1 of 2 calls) in 2 calls");
    T_CONTAINS(line_of(out, "    0.0 "), "  100 tokens, $0.2500");
    T_CONTAINS(line_of(out, "    1.0 "), "  50 tokens, $0.5000 (gpt-4o)");
    T_CONTAINS(line_of(out, "    1.1 "), "  ~40 tokens (estimated), unpriced (m)");
    T_CONTAINS(log_line("agent", "0.snap"),
               "iteration 0 committed  state {\"n\":1}  tokens 100 usd 0.2500");
    T_EQ_I64(lil("log agent"), 0);
    T_CONTAINS(out, "agent think  {\"text\":\"hi\"}  tokens 100 usd 0.2500");
    T_CONTAINS(out, "agent guess  {}  tokens ~40 unpriced");
}

/* ---- ordinary runs
 * ------------------------------------------------------------------------ */

struct text {
    const char *s;
};

static int set_text(lil_call *call, void *ud)
{
    const struct text *t = ud;

    return lil_call_set_result(call, t->s, strlen(t->s)) != LIL_OK;
}

T_TEST(ordinary_runs_show_no_loop)
{
    static const char *const names[] = {"loop", "cap.1", "0.0", "0.snap"};
    lil_store *st = c_open_store();
    lil_run *run = st ? c_open_run(st, "plain") : NULL;
    json_t *doc, *lo;
    int rc;

    for (size_t i = 0; run && i < sizeof(names) / sizeof(names[0]); i++) {
        struct text t = {"{\"reason\":\"x\"}"};
        T_OK(lil_step(run, names[i], set_text, &t, NULL));
    }
    T_OK(lil_run_close(run));
    lil_store_close(st);
    lo = ls_loop("plain");
    T_CHECK(json_is_null(lo));
    json_decref(lo);
    T_EQ_I64(lil("ls"), 0);
    T_CONTAINS(line_of(out, "plain "), "running");
    lo = inspect_loop("plain", "", &rc);
    T_EQ_I64(rc, 0);
    T_CHECK(json_is_null(lo));
    json_decref(lo);
    T_EQ_I64(lil("inspect plain"), 0);
    T_CHECK(!strstr(out, "loop status"));
    T_EQ_I64(lil("log plain --jsonl"), 0);
    T_CHECK(!strstr(out, "\"loop\":{"));
    T_CONTAINS(log_line("plain", "cap.1"), "{\"reason\":\"x\"}");
    doc = jsonl_record("plain", "cap.1", 1);
    T_CHECK(doc && !json_object_get(doc, "loop"));
    json_decref(doc);
}

/* A result of about 14 KB: its summary is cut, with "..." at the cut. */
T_TEST(long_results_are_cut)
{
    const char *sp = spec("big",
                          "  - id: list\n    kind: shell\n    cmd: \"seq 1 3000\"\n"
                          "    on_done:\n      incr: n\n",
                          "1", CAPS_10);
    char *summary, *nl;

    T_EQ_I64(lil("run '%s'", sp), 0);
    T_EQ_I64(lil("log big"), 0);
    summary = strstr(out, "shell list  ");
    T_REQUIRE(summary);
    nl = strchr(summary, '\n');
    if (nl)
        *nl = '\0';
    T_CONTAINS(summary, "shell list  {\"stdout\":\"1\\\\n2\\\\n3");
    T_CHECK(strlen(summary) < 200);
    T_CHECK(strcmp(summary + strlen(summary) - 3, "...") == 0);
    T_EQ_I64(lil("inspect big"), 0);
    T_EQ_I64(lil("log big --jsonl"), 0);
    T_CONTAINS(out, "2999\\\\n3000");
}

/* ---- records that are not what the runner writes ------------------------------------
 */

/* A loop run whose later records are damaged in meaning (their framing and
 * checksums are sound): the runner's fold refuses them, so ls and inspect
 * call the loop "damaged" with the runner's message, exit 0, and still
 * show what they read for display (the history, the log). */
T_TEST(odd_payloads_are_passed_over)
{
    static const char *const recs[][2] = {
        {"loop", "{\"loopId\":\"odd\",\"startedAt\":\"no\"}"},
        {"0.0", "null"},
        {"0.1", "{\"kind\":7,\"step\":[],\"usage\":{\"tokens\":\"x\"}}"},
        {"0.snap", "garbage"},
        {"pause.1", "[1]"},
        {"cap.2", "{\"action\":\"breakpoint\"}"},
        {"stop_requested.3", "{\"request\":\"later\"}"},
        {"parked.4", "{}"},
        {"99999999999999999999.0", "{}"},
        {"1.snap", "{\"iteration\":1,\"state\":[],\"meters\":7}"},
        {"exit.0", "{\"kind\":\"shell\"}"},
    };
    lil_store *st = c_open_store();
    lil_run *run = st ? c_open_run(st, "odd") : NULL;
    json_t *lo;
    int rc;

    for (size_t i = 0; run && i < sizeof(recs) / sizeof(recs[0]); i++) {
        struct text t = {recs[i][1]};
        T_OK(lil_step(run, recs[i][0], set_text, &t, NULL));
    }
    T_OK(lil_run_close(run));
    lil_store_close(st);
    lo = ls_loop("odd");
    T_EQ_STR(jstr(lo, "status"), "damaged");
    T_CONTAINS(jstr(lo, "reason"), "the start record of run odd has no baseState");
    T_EQ_I64(jint(lo, "iterations"), 2); /* what the snapshot records say */
    T_CHECK(json_is_null(json_object_get(json_object_get(lo, "budget"), "tokens")));
    json_decref(lo);
    T_EQ_I64(lil("ls"), 0);
    T_CONTAINS(line_of(out, "odd "), "damaged");
    T_EQ_I64(lil("inspect odd"), 0);
    T_EQ_STR(line_of(out, "loop status"), "loop status   damaged");
    T_CONTAINS(line_of(out, "reason "), "has no baseState");
    T_CHECK(!strstr(out, "\nmeters "));
    lo = inspect_loop("odd", "--tail 1", &rc);
    T_EQ_I64(rc, 0);
    T_CHECK(json_is_null(json_object_get(lo, "meters")));
    T_EQ_I64(jint(json_array_get(json_object_get(lo, "history"), 0), "iteration"), -1);
    json_decref(lo);
    T_EQ_I64(lil("log odd"), 0);
    T_CONTAINS(log_line("odd", "0.snap"), "garbage");
    T_CONTAINS(log_line("odd", "pause.1"), "[1]");
    T_EQ_I64(lil("log odd --jsonl"), 0);
}

T_MAIN()
