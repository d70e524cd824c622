/*
 * test_serve_actions.c -- the actions of `lil serve` over HTTP: the real
 * binary (serve_client.h), loops run by the real `lil run`, what the runs
 * became read through lil.h.
 *
 * A paused loop approved by its pause id (or its digest) completes (its job's events,
 * the approval journaled with actor web:alice and the reason); a wrong pause id is 409
 * naming the pause; a running loop asked to stop ends stopped (actor and reason
 * journaled) and resume runs it to its end; a loop whose process is SIGKILLed during a
 * shell step is uncertain and is recovered with retry and with assume-done; a program
 * run's uncertain effect is resolved in the server; a child that refuses ends its job
 * with the CLI's words as its error; a missing reason is 400,
 * --read-only 403, a run whose spec lies outside --spec-root 403, what a run's state
 * does not allow 409.
 */
#include <fcntl.h>
#include <lil/lil.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "serve_client.h"
#include "t.h"

#define WAIT_MS 30000
#define USER    "alice"
#define ACTOR   "web:alice"

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    T_CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* ---- specs ------------------------------------------------------------------ */

/* A shell step, then a breakpoint: paused once, completed when approved. */
static const char bp_spec[] = "loopspec: \"0.1\"\n"
                              "id: bp\n"
                              "pattern: react\n"
                              "state:\n"
                              "  vars:\n"
                              "    n: {type: int, init: 0}\n"
                              "body:\n"
                              "  - id: work\n"
                              "    kind: shell\n"
                              "    cmd: \"echo work >> side-bp.txt\"\n"
                              "    on_done: {incr: n}\n"
                              "  - id: ask\n"
                              "    kind: breakpoint\n"
                              "    ask: \"deploy ${state.n}?\"\n"
                              "terminate: {signal: state-predicate, until: \"${state.n "
                              ">= 1}\"}\n"
                              "caps: {max_iterations: 5}\n";

/* Each iteration's step waits (30 s at most) until the file go exists;
 * two iterations. */
static const char wait_spec[] =
    "loopspec: \"0.1\"\n"
    "id: wait\n"
    "pattern: react\n"
    "state:\n"
    "  vars:\n"
    "    n: {type: int, init: 0}\n"
    "body:\n"
    "  - id: work\n"
    "    kind: shell\n"
    "    cmd: \"echo ran >> side-wait.txt; for i in $(seq 600); do [ -e go ] && "
    "break; sleep 0.05; done\"\n"
    "    on_done: {incr: n}\n"
    "terminate: {signal: state-predicate, until: \"${state.n >= 2}\"}\n"
    "caps: {max_iterations: 5, budget: {wallclock: \"10m\"}}\n";

/* A step that sleeps the first time (its shell's pid in effect-ID.pid)
 * and is done at once the second. */
static void write_sleepy(const char *id)
{
    char text[1024], path[256];

    snprintf(text, sizeof(text),
             "loopspec: \"0.1\"\n"
             "id: %s\n"
             "pattern: react\n"
             "state:\n"
             "  vars:\n"
             "    n: {type: int, init: 0}\n"
             "body:\n"
             "  - id: nap\n"
             "    kind: shell\n"
             "    cmd: \"if [ -e again-%s ]; then echo second; else touch again-%s; "
             "echo $$ > effect-%s.pid; exec sleep 30; fi\"\n"
             "    on_done: {incr: n}\n"
             "terminate: {signal: state-predicate, until: \"${state.n >= 1}\"}\n"
             "caps: {max_iterations: 3}\n",
             id, id, id, id);
    snprintf(path, sizeof(path), "specs/%s.yaml", id);
    write_file(path, text);
}

static void specs_dir(void)
{
    T_CHECK(mkdir("specs", 0700) == 0);
    write_file("specs/bp.yaml", bp_spec);
    write_file("specs/wait.yaml", wait_spec);
}

/* ---- runs, through lil.h and the lil binary ------------------------------------ */

/* The facts of run id (a new reference), or NULL. */
static json_t *facts(const char *id)
{
    lil_store *st = NULL;
    lil_bytes b = {0};
    json_t *o = NULL;

    if (lil_store_open(NULL, t_store("store"), &st) == LIL_OK &&
        lil_run_facts(st, id, &b) == LIL_OK)
        o = json_loadb((const char *)b.data, b.len, 0, NULL);
    lil_free(b.data);
    lil_store_close(st);
    return o;
}

static const char *status_of(json_t *f)
{
    return or_empty(json_string_value(json_object_get(f, "status")));
}

/* Wait until run id's status is status (in_flight: with an effect in
 * flight): true, or false after WAIT_MS (the facts printed). */
static bool wait_status(const char *id, const char *status, bool in_flight)
{
    int64_t until = now_ms() + WAIT_MS;
    json_t *o;

    do {
        o = facts(id);
        if (strcmp(status_of(o), status) == 0 &&
            (!in_flight || json_is_object(json_object_get(o, "in_flight")))) {
            json_decref(o);
            return true;
        }
        json_decref(o);
        usleep(20000);
    } while (now_ms() < until);
    o = facts(id);
    fprintf(stderr, "run %s never %s: ", id, status);
    json_dumpf(o, stderr, JSON_COMPACT);
    fputc('\n', stderr);
    json_decref(o);
    return false;
}

/* The events of run id hold text (an actor, a reason). */
static bool events_hold(const char *id, const char *text)
{
    lil_store *st = NULL;
    lil_bytes b = {0};
    bool found = false;

    if (lil_store_open(NULL, t_store("store"), &st) == LIL_OK &&
        lil_run_events(st, id, 0, 0, &b) == LIL_OK)
        found = b.data && strstr((const char *)b.data, text) != NULL;
    lil_free(b.data);
    lil_store_close(st);
    return found;
}

/* `lil --dir store run SPEC --run-id ID --progress off` in the background:
 * its pid. */
static pid_t lil_run_bg(const char *spec, const char *id)
{
    pid_t pid = fork();

    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);

        dup2(null, 1);
        dup2(null, 2);
        execl(t_lil_bin(), "lil", "--dir", t_store("store"), "run", spec, "--run-id",
              id, "--progress", "off", (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* The exit status of pid within WAIT_MS, or -1. */
static int wait_exit(pid_t pid)
{
    int64_t until = now_ms() + WAIT_MS;
    int st = 0;

    while (now_ms() < until) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        usleep(20000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

/* `lil --dir store run SPEC --run-id ID` to its end: its exit status. */
static int lil_run_fg(const char *spec, const char *id)
{
    return wait_exit(lil_run_bg(spec, id));
}

/* The pid path holds (a step's shell wrote it), or 0. */
static int read_pid_file(const char *path)
{
    FILE *f = fopen(path, "r");
    int pid = 0;

    if (f) {
        if (fscanf(f, "%d", &pid) != 1 || pid <= 1)
            pid = 0;
        fclose(f);
    }
    return pid;
}

static void kill_pid_file(const char *path)
{
    int pid = read_pid_file(path);

    if (pid)
        kill(pid, SIGKILL);
}

/* Wait until path holds a pid (the step's shell has written it): true, or
 * false after WAIT_MS. */
static bool wait_pid_file(const char *path)
{
    int64_t until = now_ms() + WAIT_MS;

    do {
        if (read_pid_file(path))
            return true;
        usleep(20000);
    } while (now_ms() < until);
    fprintf(stderr, "%s never held a pid\n", path);
    return false;
}

/* Run sleepy spec id until its step sleeps (its marker touched, its pid
 * written), SIGKILL its process: the run is uncertain. */
static bool make_uncertain(const char *id)
{
    char spec[128], pidfile[128];
    pid_t pid;
    bool ok;

    write_sleepy(id);
    snprintf(spec, sizeof(spec), "specs/%s.yaml", id);
    snprintf(pidfile, sizeof(pidfile), "effect-%s.pid", id);
    pid = lil_run_bg(spec, id);
    ok = wait_status(id, "running", true) && wait_pid_file(pidfile);
    kill(pid, SIGKILL);
    T_CHECK(wait_exit(pid) == 128 + SIGKILL);
    kill_pid_file(pidfile); /* the orphaned sleep */
    return ok && wait_status(id, "uncertain", false);
}

/* ---- the server ----------------------------------------------------------------- */

/* `lil serve --dir store --spec-root specs [flag]`, logged in as alice. */
static bool serve_start(struct sc_server *sv, const char *flag)
{
    const char *extra[] = {"--spec-root", "specs", flag, NULL};

    if (sc_start(sv, t_store("store"), extra) != 0) {
        fprintf(stderr, "lil serve did not start: %s\n", sv->err);
        return false;
    }
    if (sc_login(sv, USER) != 0) {
        sc_stop(sv, SIGKILL);
        return false;
    }
    return true;
}

/* serve_start, and an event stream of every run open in *st (the server
 * stopped when it cannot be opened). */
static bool serve_streaming(struct sc_server *sv, struct sc_stream **st)
{
    long status = 0;

    if (!serve_start(sv, NULL))
        return false;
    if (sc_stream_open(sv, NULL, st, &status) == 0 && status == 200)
        return true;
    fprintf(stderr, "GET /api/stream: %ld\n", status);
    if (*st)
        sc_stream_close(*st);
    sc_stop(sv, SIGTERM);
    return false;
}

/* POST /api/runs/RUN/VERB with body: the reply's status (r filled). */
static long action(struct sc_server *sv, const char *run, const char *verb,
                   json_t *body, struct sc_reply *r)
{
    static char text[4096]; /* json_dumpb: the harness's jansson allocates from lil */
    size_t len = json_dumpb(body, text, sizeof(text) - 1, JSON_COMPACT);
    char path[256];

    T_CHECK(len > 0 && len < sizeof(text) - 1);
    text[len < sizeof(text) ? len : 0] = '\0';
    snprintf(path, sizeof(path), "/api/runs/%s/%s", run, verb);
    memset(r, 0, sizeof(*r));
    if (sc_post(sv, path, text, r) != 0)
        r->status = -1;
    json_decref(body);
    if (r->status >= 400)
        fprintf(stderr, "POST %s: %ld %s\n", path, r->status, or_empty(r->body));
    return r->status;
}

/* The job of a reply (borrowed). */
static json_t *job_of(const struct sc_reply *r)
{
    return json_object_get(r->json, "job");
}

/* Wait on st for the "job" event of job id that says it ended: its data
 * (the caller's), or NULL. */
static json_t *wait_job_end(struct sc_stream *st, json_int_t id)
{
    int64_t until = now_ms() + WAIT_MS;
    json_t *data = NULL;

    while (now_ms() < until) {
        if (!sc_stream_wait(st, "job", (int)(until - now_ms()), &data))
            break;
        if (json_integer_value(json_object_get(data, "id")) == id &&
            strcmp(or_empty(json_string_value(json_object_get(data, "state"))),
                   "ended") == 0)
            return data;
        json_decref(data);
        data = NULL;
    }
    fprintf(stderr, "job %lld never ended\n", (long long)id);
    return NULL;
}

/* A job started by r runs, then ends with status: the end's data checked. */
static void job_ends(struct sc_stream *st, const struct sc_reply *r, const char *verb,
                     const char *status)
{
    json_t *job = job_of(r), *end;

    T_EQ_I64(r->status, 202);
    T_EQ_STR(or_empty(json_string_value(json_object_get(job, "verb"))), verb);
    T_EQ_STR(or_empty(json_string_value(json_object_get(job, "actor"))), ACTOR);
    T_EQ_STR(or_empty(json_string_value(json_object_get(job, "state"))), "running");
    T_CHECK(json_integer_value(json_object_get(job, "pid")) > 0);
    T_CHECK(llabs((long long)json_integer_value(json_object_get(job, "started_ms")) -
                  (long long)time(NULL) * 1000) < 60000); /* a time of day */
    end = wait_job_end(st, json_integer_value(json_object_get(job, "id")));
    T_REQUIRE(end != NULL);
    T_EQ_STR(or_empty(json_string_value(json_object_get(end, "status"))), status);
    T_CHECK(json_is_null(json_object_get(end, "error")));
    json_decref(end);
}

/* ---- tests ------------------------------------------------------------------------
 */

/* A paused loop: a wrong pause id is 409 naming the pause; approving its
 * pause id starts a job that completes the run; the approval is journaled
 * with the actor and the reason; the job is listed. */
T_TEST(approve_paused_loop)
{
    struct sc_server sv;
    struct sc_stream *st = NULL;
    struct sc_reply r;
    char digest[16];
    json_t *f;

    T_ONE_PROCESS();
    specs_dir();
    T_EQ_I64(lil_run_fg("specs/bp.yaml", "bp"), 3); /* paused */
    T_REQUIRE(serve_streaming(&sv, &st));

    T_EQ_I64(action(&sv, "bp", "approve",
                    json_pack("{s:s, s:s}", "reason", "ok", "pause_id", "pause.9"), &r),
             409);
    T_CHECK(strstr(or_empty(sc_str(&r, "error")), "pause.1") != NULL);
    sc_reply_free(&r);
    T_EQ_I64(action(&sv, "bp", "approve",
                    json_pack("{s:s, s:s}", "reason", "ok", "digest", "00000000"), &r),
             409);
    sc_reply_free(&r);
    T_EQ_I64(action(&sv, "bp", "approve", json_pack("{s:s}", "reason", "ok"), &r),
             400); /* no pause named */
    sc_reply_free(&r);
    T_EQ_I64(action(&sv, "bp", "resume", json_pack("{s:s}", "reason", "go"), &r),
             409); /* paused: approve it */
    sc_reply_free(&r);
    T_CHECK(!events_hold("bp", ACTOR)); /* nothing refused was journaled */

    action(
        &sv, "bp", "approve",
        json_pack("{s:s, s:s}", "reason", "looks right to me", "pause_id", "pause.1"),
        &r);
    job_ends(st, &r, "approve", "completed");
    sc_reply_free(&r);
    T_CHECK(wait_status("bp", "completed", false));
    T_CHECK(events_hold("bp", ACTOR));
    T_CHECK(events_hold("bp", "looks right to me"));

    T_EQ_I64(sc_get(&sv, "/api/jobs", &r), 0);
    T_EQ_I64(r.status, 200);
    T_EQ_I64((json_int_t)json_array_size(json_object_get(r.json, "jobs")), 1);
    T_EQ_STR(or_empty(json_string_value(json_object_get(
                 json_array_get(json_object_get(r.json, "jobs"), 0), "state"))),
             "ended");
    sc_reply_free(&r);
    T_EQ_I64(action(&sv, "bp", "resume", json_pack("{s:s}", "reason", "again"), &r),
             409); /* completed */
    sc_reply_free(&r);

    /* another run of the spec, approved by the first digits of its digest */
    T_EQ_I64(lil_run_fg("specs/bp.yaml", "bp2"), 3);
    f = facts("bp2");
    snprintf(digest, sizeof(digest), "%.12s",
             or_empty(json_string_value(
                 json_object_get(json_object_get(f, "paused"), "digest"))));
    json_decref(f);
    T_EQ_I64((json_int_t)strlen(digest), 12);
    action(&sv, "bp2", "approve",
           json_pack("{s:s, s:s}", "reason", "by digest", "digest", digest), &r);
    job_ends(st, &r, "approve", "completed");
    sc_reply_free(&r);
    T_CHECK(events_hold("bp2", "by digest"));
    sc_stream_close(st);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

/* A child that refuses (the spec changed since the run started) ends its
 * job with its exit status and the CLI's words as the error. */
T_TEST(job_error)
{
    struct sc_server sv;
    struct sc_stream *st = NULL;
    struct sc_reply r;
    json_t *job, *end;
    char changed[sizeof(bp_spec) + 64];

    T_ONE_PROCESS();
    specs_dir();
    T_EQ_I64(lil_run_fg("specs/bp.yaml", "bp"), 3);
    snprintf(changed, sizeof(changed), "%s", bp_spec);
    memcpy(strstr(changed, "deploy"), "DEPLOY", 6);
    write_file("specs/bp.yaml", changed);
    T_REQUIRE(serve_streaming(&sv, &st));
    T_EQ_I64(action(&sv, "bp", "approve",
                    json_pack("{s:s, s:s}", "reason", "ok", "pause_id", "pause.1"), &r),
             202);
    job = job_of(&r);
    end = wait_job_end(st, json_integer_value(json_object_get(job, "id")));
    sc_reply_free(&r);
    T_CHECK(end != NULL);
    T_EQ_I64(json_integer_value(json_object_get(end, "exit_code")), 1);
    T_CHECK(json_is_null(json_object_get(end, "status")));
    T_CHECK(strstr(or_empty(json_string_value(json_object_get(end, "error"))),
                   "spec") != NULL);
    json_decref(end);
    T_CHECK(wait_status("bp", "paused", false));
    sc_stream_close(st);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

/* A running loop asked to stop ends stopped, the request journaled with
 * the actor and the reason; a second stop is 409; resume runs it on to
 * its end. */
T_TEST(stop_then_resume)
{
    struct sc_server sv;
    struct sc_stream *st = NULL;
    struct sc_reply r;
    pid_t pid;

    T_ONE_PROCESS();
    specs_dir();
    T_REQUIRE(serve_streaming(&sv, &st));
    pid = lil_run_bg("specs/wait.yaml", "wait");
    T_CHECK(wait_status("wait", "running", true));

    T_EQ_I64(action(&sv, "wait", "stop",
                    json_pack("{s:s}", "reason", "enough for today"), &r),
             200);
    T_CHECK(json_is_true(json_object_get(r.json, "ok")));
    T_EQ_STR(or_empty(json_string_value(
                 json_object_get(json_object_get(r.json, "request"), "actor"))),
             ACTOR);
    sc_reply_free(&r);
    T_EQ_I64(action(&sv, "wait", "stop", json_pack("{s:s}", "reason", "twice"), &r),
             409);
    sc_reply_free(&r);
    write_file("go", "");
    T_EQ_I64(wait_exit(pid), 5); /* stopped */
    T_CHECK(wait_status("wait", "stopped", false));
    T_CHECK(events_hold("wait", ACTOR));
    T_CHECK(events_hold("wait", "enough for today"));

    action(&sv, "wait", "resume", json_pack("{s:s}", "reason", "tomorrow came"), &r);
    job_ends(st, &r, "resume", "completed");
    sc_reply_free(&r);
    T_CHECK(wait_status("wait", "completed", false));
    T_CHECK(events_hold("wait", "tomorrow came"));
    sc_stream_close(st);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

/* Loops killed during a shell step are uncertain: recover retry runs the
 * step again, assume-done takes the result given; both complete. */
T_TEST(recover_uncertain_loops)
{
    struct sc_server sv;
    struct sc_stream *st = NULL;
    struct sc_reply r;

    T_ONE_PROCESS();
    specs_dir();
    T_REQUIRE(make_uncertain("sleepy-a"));
    T_REQUIRE(make_uncertain("sleepy-b"));
    T_REQUIRE(serve_streaming(&sv, &st));

    T_EQ_I64(action(&sv, "sleepy-a", "recover",
                    json_pack("{s:s, s:s}", "reason", "x", "how", "sideways"), &r),
             400);
    sc_reply_free(&r);
    T_EQ_I64(action(&sv, "sleepy-a", "recover",
                    json_pack("{s:s, s:s}", "reason", "x", "how", "assume-done"), &r),
             400); /* assume-done without a result */
    sc_reply_free(&r);
    T_EQ_I64(action(&sv, "sleepy-a", "resume", json_pack("{s:s}", "reason", "x"), &r),
             409); /* uncertain: recover first */
    sc_reply_free(&r);

    action(&sv, "sleepy-a", "recover",
           json_pack("{s:s, s:s}", "reason", "the nap was cut short", "how", "retry"),
           &r);
    job_ends(st, &r, "recover", "completed");
    sc_reply_free(&r);
    T_CHECK(events_hold("sleepy-a", "the nap was cut short"));
    T_CHECK(events_hold("sleepy-a", ACTOR));

    action(&sv, "sleepy-b", "recover",
           json_pack("{s:s, s:s, s:{s:i, s:s}}", "reason", "it did finish", "how",
                     "assume-done", "result", "exit_code", 0, "stdout", "napped\n"),
           &r);
    job_ends(st, &r, "recover", "completed");
    sc_reply_free(&r);
    T_CHECK(events_hold("sleepy-b", "it did finish"));
    T_CHECK(events_hold("sleepy-b", "napped"));
    T_EQ_I64(action(&sv, "sleepy-b", "recover",
                    json_pack("{s:s, s:s}", "reason", "again", "how", "retry"), &r),
             409); /* nothing uncertain now */
    sc_reply_free(&r);
    sc_stream_close(st);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

/* A program run whose effect has an intent and no outcome: the server
 * resolves it (assume-done with the result given), journaled with the
 * actor; stop and resume are for loops. */
T_TEST(program_run_resolved)
{
    lil_run_opts o = {sizeof(o), LIL_SYNC_DEFAULT, 0, 0};
    struct sc_server sv;
    struct sc_reply r;
    lil_store *store = NULL;
    lil_run *run = NULL;
    lil_call *call = NULL;
    lil_bytes out = {0};
    json_t *f, *job;

    T_ONE_PROCESS();
    specs_dir();
    T_REQUIRE(lil_store_open(NULL, t_store("store"), &store) == LIL_OK);
    T_REQUIRE(lil_run_open(store, "pay-7", &o, &run) == LIL_OK);
    T_REQUIRE(lil_effect_begin(run, "charge", "42 EUR", 6, &call, &out) == LIL_OK);
    T_REQUIRE(call != NULL);
    T_CHECK(lil_call_cancel(call) == LIL_OK);
    T_CHECK(lil_run_close(run) == LIL_OK);
    lil_store_close(store);
    T_REQUIRE(wait_status("pay-7", "uncertain", false));
    T_REQUIRE(serve_start(&sv, NULL));

    T_EQ_I64(action(&sv, "pay-7", "stop", json_pack("{s:s}", "reason", "x"), &r), 409);
    T_CHECK(strstr(or_empty(sc_str(&r, "error")), "loop") != NULL);
    sc_reply_free(&r);
    T_EQ_I64(action(&sv, "pay-7", "resume", json_pack("{s:s}", "reason", "x"), &r),
             409);
    sc_reply_free(&r);
    T_EQ_I64(action(&sv, "pay-7", "recover",
                    json_pack("{s:s, s:s, s:s}", "reason", "x", "how", "retry", "step",
                              "refund"),
                    &r),
             409); /* no such uncertain effect */
    sc_reply_free(&r);

    T_EQ_I64(action(&sv, "pay-7", "recover",
                    json_pack("{s:s, s:s, s:s}", "reason", "the bank shows the charge",
                              "how", "assume-done", "result", "ch_1"),
                    &r),
             200);
    job = job_of(&r);
    T_EQ_STR(or_empty(json_string_value(json_object_get(job, "verb"))), "resolve");
    T_EQ_STR(or_empty(json_string_value(json_object_get(job, "state"))), "ended");
    T_EQ_STR(or_empty(json_string_value(json_object_get(job, "status"))), "running");
    T_CHECK(json_is_null(json_object_get(job, "pid")));
    sc_reply_free(&r);
    f = facts("pay-7");
    T_EQ_STR(status_of(f), "running");
    json_decref(f);
    T_CHECK(events_hold("pay-7", ACTOR));
    T_CHECK(events_hold("pay-7", "the bank shows the charge"));
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

/* What every action refuses: no reason, a bad one, no such run, a run
 * whose spec is outside --spec-root, and everything under --read-only. */
T_TEST(refusals)
{
    struct sc_server sv;
    struct sc_reply r;

    T_ONE_PROCESS();
    specs_dir();
    T_CHECK(mkdir("elsewhere", 0700) == 0);
    write_file("elsewhere/bp.yaml", bp_spec);
    T_EQ_I64(lil_run_fg("elsewhere/bp.yaml", "outside"), 3);
    T_EQ_I64(lil_run_fg("specs/bp.yaml", "bp"), 3);
    T_REQUIRE(serve_start(&sv, NULL));

    T_EQ_I64(action(&sv, "bp", "stop", json_object(), &r), 400);
    T_CHECK(strstr(or_empty(sc_str(&r, "error")), "reason") != NULL);
    sc_reply_free(&r);
    T_EQ_I64(action(&sv, "bp", "stop", json_pack("{s:s}", "reason", ""), &r), 400);
    sc_reply_free(&r);
    T_EQ_I64(action(&sv, "bp", "stop", json_pack("{s:s}", "reason", "bell\a"), &r),
             400);
    sc_reply_free(&r);
    T_EQ_I64(action(&sv, "bp", "stop", json_pack("{s:i}", "reason", 7), &r), 400);
    sc_reply_free(&r);
    {
        char long_reason[1100];

        memset(long_reason, 'x', sizeof(long_reason) - 1);
        long_reason[sizeof(long_reason) - 1] = '\0';
        T_EQ_I64(
            action(&sv, "bp", "stop", json_pack("{s:s}", "reason", long_reason), &r),
            400);
        sc_reply_free(&r);
    }
    T_EQ_I64(action(&sv, "nobody", "stop", json_pack("{s:s}", "reason", "x"), &r), 404);
    sc_reply_free(&r);
    T_EQ_I64(action(&sv, "outside", "approve",
                    json_pack("{s:s, s:s}", "reason", "x", "pause_id", "pause.1"), &r),
             403);
    T_CHECK(strstr(or_empty(sc_str(&r, "error")), "outside --spec-root") != NULL);
    sc_reply_free(&r);
    T_CHECK(!events_hold("outside", ACTOR));
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);

    T_REQUIRE(serve_start(&sv, "--read-only"));
    T_EQ_I64(action(&sv, "bp", "stop", json_pack("{s:s}", "reason", "x"), &r), 403);
    sc_reply_free(&r);
    T_EQ_I64(action(&sv, "bp", "approve",
                    json_pack("{s:s, s:s}", "reason", "x", "pause_id", "pause.1"), &r),
             403);
    sc_reply_free(&r);
    T_EQ_I64(sc_get(&sv, "/api/jobs", &r), 0);
    T_EQ_I64(r.status, 200);
    T_EQ_I64((json_int_t)json_array_size(json_object_get(r.json, "jobs")), 0);
    sc_reply_free(&r);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
    T_CHECK(!events_hold("bp", ACTOR));
}

T_MAIN()
