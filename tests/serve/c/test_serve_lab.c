/*
 * test_serve_lab.c -- the crash lab of `lil serve` from the outside: start
 * the demo loop, SIGKILL it while a step is in flight, resume (the killed
 * step uncertain, the steps before it replayed from the journal), recover
 * with a retry (journaled with the session's actor), completed with no
 * step done twice -- checked in the lab's document, in the side file
 * itself and in the run's events; the "lab" events of the stream; the
 * buttons refused where they do not apply (409) and under --read-only
 * (403).
 */
#include <dirent.h>
#include <lil/lil.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "serve_client.h"
#include "t.h"

#define WAIT_MS 60000 /* the machine may be busy: the demo takes ~6 s */
#define N_STEPS 6

static const char *const step_names[N_STEPS] = {"download", "unpack",  "compile",
                                                "test",     "package", "publish"};

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* Start the server with its TMPDIR under the test's directory, where the
 * lab makes its directories (the test's own TMPDIR left as it was). */
static int start_server(struct sc_server *sv, const char *const *extra)
{
    const char *old = getenv("TMPDIR");
    char *saved = old ? strdup(old) : NULL;
    int rc;

    mkdir(t_path("tmp"), 0700);
    setenv("TMPDIR", t_path("tmp"), 1);
    rc = sc_start(sv, t_path("store"), extra);
    if (saved)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    free(saved);
    return rc;
}

static bool start_logged_in(struct sc_server *sv, const char *const *extra)
{
    if (start_server(sv, extra) != 0) {
        fprintf(stderr, "server did not start: %s\n", sv->err);
        return false;
    }
    if (sc_login(sv, "alice") != 0) {
        fprintf(stderr, "login failed: %s\n", sv->err);
        sc_stop(sv, SIGKILL);
        return false;
    }
    return true;
}

/* GET /api/lab: the document (the caller's), or NULL. */
static json_t *lab_get(struct sc_server *sv)
{
    struct sc_reply r;
    json_t *doc = NULL;

    if (sc_get(sv, "/api/lab", &r) == 0 && r.status == 200)
        doc = json_incref(r.json);
    sc_reply_free(&r);
    return doc;
}

static const char *doc_state(const json_t *doc)
{
    return json_string_value(json_object_get(doc, "state"));
}

static json_t *doc_step(const json_t *doc, size_t i)
{
    return json_array_get(json_object_get(doc, "steps"), i);
}

static json_int_t step_count(const json_t *doc, size_t i, const char *what)
{
    return json_integer_value(json_object_get(doc_step(doc, i), what));
}

/* Say where the lab is, when it is not where it should be. */
static void print_lab(const json_t *doc, const char *want)
{
    size_t i;
    json_t *line;

    fprintf(stderr, "the lab is %s, not %s; its log:\n", doc_state(doc), want);
    json_array_foreach(json_object_get(doc, "log"), i, line)
        fprintf(stderr, "  %s\n", json_string_value(json_object_get(line, "text")));
}

/* Poll the lab until its state is want (the document), or NULL at the
 * deadline. */
static json_t *wait_state(struct sc_server *sv, const char *want)
{
    for (int waited = 0; waited < WAIT_MS; waited += 100) {
        json_t *doc = lab_get(sv);
        const char *state = doc_state(doc);

        if (state && strcmp(state, want) == 0)
            return doc;
        if (waited + 100 >= WAIT_MS)
            print_lab(doc, want);
        json_decref(doc);
        sleep_ms(100);
    }
    return NULL;
}

/* Poll until step 2 or 3 has started and is in flight: its index, or -1. */
static int wait_step_in_flight(struct sc_server *sv)
{
    for (int waited = 0; waited < WAIT_MS; waited += 50) {
        json_t *doc = lab_get(sv);
        const char *step = json_string_value(json_object_get(doc, "step"));
        int k = -1;

        for (int i = 1; step && i <= 2; i++)
            if (strcmp(step, step_names[i]) == 0)
                k = i;
        json_decref(doc);
        if (k >= 0)
            return k;
        sleep_ms(50);
    }
    return -1;
}

/* POST /api/lab/kill while a step is in flight (a 409 between two steps
 * is tried again): the reply. */
static void kill_in_flight(struct sc_server *sv, struct sc_reply *r)
{
    for (int tries = 0; tries < 20; tries++) {
        T_OK(sc_post(sv, "/api/lab/kill", NULL, r));
        if (r->status != 409)
            return;
        sc_reply_free(r);
        sleep_ms(100);
    }
    T_OK(sc_post(sv, "/api/lab/kill", NULL, r));
}

/* The log holds a line containing text. */
static bool log_has(const json_t *doc, const char *text)
{
    size_t i;
    json_t *line;

    json_array_foreach(json_object_get(doc, "log"), i, line)
    {
        const char *s = json_string_value(json_object_get(line, "text"));

        if (s && strstr(s, text) && json_is_integer(json_object_get(line, "ms")))
            return true;
    }
    return false;
}

/* The path of the lab's one directory under the server's TMPDIR (its
 * name in path): 0, or -1. */
static int lab_dir(char *path, size_t cap)
{
    DIR *d = opendir(t_path("tmp"));
    struct dirent *e;
    int rc = -1;

    if (!d)
        return -1;
    while (rc != 0 && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "lil-lab-", 8) == 0) {
            snprintf(path, cap, "%s/%s", t_path("tmp"), e->d_name);
            rc = 0;
        }
    closedir(d);
    return rc;
}

/* How many lab directories the server's TMPDIR holds. */
static int lab_dirs(void)
{
    DIR *d = opendir(t_path("tmp"));
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "lil-lab-", 8) == 0)
            n++;
    if (d)
        closedir(d);
    return n;
}

/* The lab's directory is private (0700) and its spec, the demo the binary
 * holds, validates without a diagnostic. */
static void check_lab_dir(void)
{
    char dir[4096], cmd[8192], out[4096];
    struct stat sb;

    T_REQUIRE(lab_dir(dir, sizeof(dir)) == 0);
    T_REQUIRE(stat(dir, &sb) == 0);
    T_EQ_I64(sb.st_mode & 0777, 0700);
    snprintf(cmd, sizeof(cmd), "'%s' validate '%s/demo.yaml'", t_lil_bin(), dir);
    T_EQ_I64(t_run(cmd, out, sizeof(out), 1), 0);
    T_CONTAINS(out, "valid (no diagnostics)");
}

/* The lab's side file, read whole into buf: 0, or -1. */
static int read_side_file(char *buf, size_t cap)
{
    char dir[4096], path[4200];
    FILE *f;
    size_t n;

    if (lab_dir(dir, sizeof(dir)) != 0)
        return -1;
    snprintf(path, sizeof(path), "%s/side.txt", dir);
    f = fopen(path, "r");
    if (!f)
        return -1;
    n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
    return 0;
}

/* How many lines of text are exactly line. */
static int count_lines(const char *text, const char *line)
{
    size_t len = strlen(line);
    int n = 0;

    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, line, len) == 0 && (p[len] == '\n' || p[len] == '\0'))
            n++;
    return n;
}

/* The side file says what the lab's document says, and each step ran
 * once but the killed one (started twice, done once). */
static void check_side_file(const json_t *doc, int killed)
{
    char text[8192], line[64];

    T_REQUIRE(read_side_file(text, sizeof(text)) == 0);
    for (int i = 0; i < N_STEPS; i++) {
        snprintf(line, sizeof(line), "start %s", step_names[i]);
        T_EQ_I64(count_lines(text, line), i == killed ? 2 : 1);
        T_EQ_I64(count_lines(text, line), step_count(doc, (size_t)i, "started"));
        snprintf(line, sizeof(line), "done %s", step_names[i]);
        T_EQ_I64(count_lines(text, line), 1);
        T_EQ_I64(count_lines(text, line), step_count(doc, (size_t)i, "done"));
    }
}

/* The run's events hold its recovery: a retry by web:alice, with the
 * lab's reason. */
static void check_recovery_event(struct sc_server *sv, const char *run)
{
    char path[256];
    struct sc_reply r;
    json_t *ev;
    size_t i;
    int found = 0;

    snprintf(path, sizeof(path), "/api/runs/%s/events?types=recovery", run);
    T_OK(sc_get(sv, path, &r));
    T_EQ_I64(r.status, 200);
    json_array_foreach(json_object_get(r.json, "events"), i, ev)
    {
        const char *actor = json_string_value(json_object_get(ev, "actor"));
        const char *how = json_string_value(json_object_get(ev, "how"));
        const char *reason = json_string_value(json_object_get(ev, "reason"));

        if (actor && strcmp(actor, "web:alice") == 0 && how &&
            strcmp(how, "retry") == 0 && reason && strstr(reason, "crash lab"))
            found++;
    }
    T_EQ_I64(found, 1);
    sc_reply_free(&r);
}

/* The killed step is in flight no more: its process was killed with lil's
 * (a shell step leads its own session), so no `done` comes after. */
static void check_killed_for_good(struct sc_server *sv, int k)
{
    json_t *doc;

    sleep_ms(1500); /* longer than what was left of the step's second */
    doc = lab_get(sv);
    T_REQUIRE(doc != NULL);
    T_EQ_STR(doc_state(doc), "killed");
    T_EQ_I64(step_count(doc, (size_t)k, "started"), 1);
    T_EQ_I64(step_count(doc, (size_t)k, "done"), 0);
    for (int i = k + 1; i < N_STEPS; i++)
        T_EQ_I64(step_count(doc, (size_t)i, "started"), 0);
    json_decref(doc);
}

/* Read "lab" events until one says state: its document, or NULL. */
static json_t *wait_lab_event(struct sc_stream *st, const char *state)
{
    json_t *ev = NULL;

    while (sc_stream_wait(st, "lab", 10000, &ev)) {
        const char *s = doc_state(ev);

        if (s && strcmp(s, state) == 0)
            return ev;
        json_decref(ev);
        ev = NULL;
    }
    fprintf(stderr, "no lab event said %s\n", state);
    t_fail();
    return NULL;
}

/* Start: running, a fresh run id, a "lab" event on the stream (st not
 * NULL).  The document, or NULL. */
static json_t *start_lab(struct sc_server *sv, struct sc_stream *st)
{
    struct sc_reply r;
    json_t *ev = NULL, *doc;
    const char *run;

    T_OK(sc_post(sv, "/api/lab/start", NULL, &r));
    T_EQ_I64(r.status, 200);
    T_EQ_STR(sc_str(&r, "state"), "running");
    run = sc_str(&r, "run");
    T_CHECK(run && strncmp(run, "crash-lab-", 10) == 0 && strlen(run) == 18 &&
            strspn(run + 10, "0123456789abcdef") == 8);
    T_CHECK(json_integer_value(json_object_get(r.json, "pid")) > 0);
    T_CHECK(log_has(r.json, "started crash-lab-"));
    doc = r.status == 200 && run ? json_incref(r.json) : NULL;
    sc_reply_free(&r);
    if (doc && st) {
        ev = wait_lab_event(st, "running");
        T_EQ_STR(json_string_value(json_object_get(ev, "run")),
                 json_string_value(json_object_get(doc, "run")));
        json_decref(ev);
    }
    return doc;
}

/* Kill while step 2 or 3 is in flight: the index of the step killed, or
 * -1. */
static int kill_lab(struct sc_server *sv)
{
    struct sc_reply r;
    char text[64];
    int k = wait_step_in_flight(sv);

    if (k < 1) {
        fprintf(stderr, "step 2 or 3 did not start\n");
        t_fail();
        return -1;
    }
    kill_in_flight(sv, &r);
    T_EQ_I64(r.status, 200);
    T_EQ_STR(sc_str(&r, "state"), "killed");
    T_CHECK(json_is_null(json_object_get(r.json, "pid")));
    T_EQ_I64(json_integer_value(json_object_get(r.json, "kills")), 1);
    k = -1;
    for (int i = 0; i < N_STEPS; i++)
        if (sc_str(&r, "step") && strcmp(sc_str(&r, "step"), step_names[i]) == 0)
            k = i;
    T_CHECK(k >= 1);
    if (k >= 1) {
        snprintf(text, sizeof(text), "killed at step %d %s (pid ", k + 1,
                 step_names[k]);
        T_CHECK(log_has(r.json, text));
    }
    sc_reply_free(&r);
    return k;
}

/* Resume: uncertain at the killed step, the steps before it replayed. */
static void resume_lab(struct sc_server *sv, int k)
{
    struct sc_reply r;
    char text[80];
    json_t *doc;

    T_OK(sc_post(sv, "/api/lab/resume", NULL, &r));
    T_EQ_I64(r.status, 200);
    T_EQ_STR(sc_str(&r, "state"), "running");
    sc_reply_free(&r);
    doc = wait_state(sv, "uncertain");
    T_REQUIRE(doc != NULL);
    if (k == 1)
        snprintf(text, sizeof(text), "resumed: step 1 replayed from the journal");
    else
        snprintf(text, sizeof(text), "resumed: steps 1-%d replayed from the journal",
                 k);
    T_CHECK(log_has(doc, text));
    snprintf(text, sizeof(text), "step %d %s uncertain", k + 1, step_names[k]);
    T_CHECK(log_has(doc, text));
    for (int i = 0; i < k; i++) /* replayed, not run again */
        T_EQ_I64(step_count(doc, (size_t)i, "started"), 1);
    T_EQ_I64(step_count(doc, (size_t)k, "started"), 1);
    T_EQ_I64(step_count(doc, (size_t)k, "done"), 0);
    json_decref(doc);
}

/* Recover with a retry: completed, nothing done twice. */
static json_t *recover_lab(struct sc_server *sv, int k)
{
    struct sc_reply r;
    json_t *doc;

    T_OK(sc_post(sv, "/api/lab/recover", NULL, &r));
    T_EQ_I64(r.status, 200);
    T_EQ_STR(sc_str(&r, "state"), "running");
    sc_reply_free(&r);
    doc = wait_state(sv, "completed");
    if (!doc) {
        t_fail();
        return NULL;
    }
    T_EQ_I64(json_integer_value(json_object_get(doc, "duplicates")), 0);
    T_EQ_I64(json_integer_value(json_object_get(doc, "kills")), 1);
    T_CHECK(log_has(doc, "recovered by web:alice: retry"));
    T_CHECK(log_has(doc, "completed: 6 steps, 0 duplicates"));
    for (int i = 0; i < N_STEPS; i++) {
        T_EQ_STR(json_string_value(json_object_get(doc_step(doc, (size_t)i), "name")),
                 step_names[i]);
        T_EQ_I64(step_count(doc, (size_t)i, "started"), i == k ? 2 : 1);
        T_EQ_I64(step_count(doc, (size_t)i, "done"), 1);
    }
    return doc;
}

/* What does not apply now is refused with 409, and changes nothing. */
static void check_conflict(struct sc_server *sv, const char *path, const char *what)
{
    struct sc_reply r;

    T_OK(sc_post(sv, path, NULL, &r));
    T_EQ_I64(r.status, 409);
    T_CONTAINS(sc_str(&r, "error"), what);
    sc_reply_free(&r);
}

/* Stop the server, and the lab's child if one still runs (it outlives the
 * server, in a session of its own). */
static void stop_all(struct sc_server *sv)
{
    json_t *doc = lab_get(sv);
    json_int_t pid = json_integer_value(json_object_get(doc, "pid"));

    json_decref(doc);
    if (pid > 0)
        kill(-(pid_t)pid, SIGKILL);
    T_EQ_I64(sc_stop(sv, SIGTERM), 0);
}

/* start, kill, resume, recover; the stream's "lab" events. */
static void kill_resume_recover(struct sc_server *sv, struct sc_stream *st)
{
    json_t *doc = start_lab(sv, st), *ev;
    char run[64];
    int k;

    T_REQUIRE(doc != NULL);
    snprintf(run, sizeof(run), "%s", json_string_value(json_object_get(doc, "run")));
    json_decref(doc);
    check_lab_dir();
    check_conflict(sv, "/api/lab/start", "is not over");
    check_conflict(sv, "/api/lab/recover", "running");
    k = kill_lab(sv);
    T_REQUIRE(k >= 1);
    ev = wait_lab_event(st, "killed");
    T_EQ_I64(json_integer_value(json_object_get(ev, "kills")), 1);
    json_decref(ev);
    check_killed_for_good(sv, k);
    check_conflict(sv, "/api/lab/kill", "nothing runs");
    check_conflict(sv, "/api/lab/recover", "killed");
    check_conflict(sv, "/api/lab/start", "is not over");
    resume_lab(sv, k);
    json_decref(wait_lab_event(st, "uncertain"));
    doc = recover_lab(sv, k);
    T_REQUIRE(doc != NULL);
    check_side_file(doc, k);
    json_decref(doc);
    json_decref(wait_lab_event(st, "completed"));
    check_recovery_event(sv, run);
    check_conflict(sv, "/api/lab/kill", "nothing runs");
    check_conflict(sv, "/api/lab/resume", "completed");
}

T_TEST(kill_resume_recover)
{
    struct sc_server sv;
    struct sc_stream *st = NULL;
    long status = 0;

    T_REQUIRE(start_logged_in(&sv, NULL));
    T_OK(sc_stream_open(&sv, NULL, &st, &status));
    T_EQ_I64(status, 200);
    if (st)
        kill_resume_recover(&sv, st);
    sc_stream_close(st);
    stop_all(&sv);
}

/* After the end, start makes a new run in a new directory. */
static void start_again(struct sc_server *sv)
{
    json_t *doc = start_lab(sv, NULL);
    char first[64];
    int k;

    T_REQUIRE(doc != NULL);
    snprintf(first, sizeof(first), "%s",
             json_string_value(json_object_get(doc, "run")));
    json_decref(doc);
    k = kill_lab(sv);
    T_REQUIRE(k >= 1);
    resume_lab(sv, k);
    doc = recover_lab(sv, k);
    T_REQUIRE(doc != NULL);
    json_decref(doc);
    doc = start_lab(sv, NULL);
    T_REQUIRE(doc != NULL);
    T_CHECK(strcmp(json_string_value(json_object_get(doc, "run")), first) != 0);
    T_EQ_I64(json_integer_value(json_object_get(doc, "kills")), 0);
    T_EQ_I64(json_array_size(json_object_get(doc, "log")), 1);
    T_EQ_I64(lab_dirs(), 1); /* the first run's directory removed */
    for (int i = 0; i < N_STEPS; i++)
        T_EQ_I64(step_count(doc, (size_t)i, "done"), 0);
    json_decref(doc);
}

T_TEST(start_again_after_the_end)
{
    struct sc_server sv;

    T_REQUIRE(start_logged_in(&sv, NULL));
    start_again(&sv);
    stop_all(&sv);
}

static void check_idle(struct sc_server *sv)
{
    json_t *doc = lab_get(sv);

    T_REQUIRE(doc != NULL);
    T_EQ_STR(doc_state(doc), "idle");
    T_CHECK(json_is_null(json_object_get(doc, "run")));
    T_CHECK(json_is_null(json_object_get(doc, "pid")));
    T_CHECK(json_is_null(json_object_get(doc, "step")));
    T_EQ_I64(json_array_size(json_object_get(doc, "steps")), N_STEPS);
    for (int i = 0; i < N_STEPS; i++) {
        T_EQ_STR(json_string_value(json_object_get(doc_step(doc, (size_t)i), "name")),
                 step_names[i]);
        T_EQ_I64(step_count(doc, (size_t)i, "started"), 0);
        T_EQ_I64(step_count(doc, (size_t)i, "done"), 0);
    }
    T_EQ_I64(json_integer_value(json_object_get(doc, "duplicates")), 0);
    T_EQ_I64(json_integer_value(json_object_get(doc, "kills")), 0);
    T_EQ_I64(json_array_size(json_object_get(doc, "log")), 0);
    json_decref(doc);
}

T_TEST(idle_lab)
{
    struct sc_server sv;

    T_REQUIRE(start_logged_in(&sv, NULL));
    check_idle(&sv);
    check_conflict(&sv, "/api/lab/kill", "nothing runs");
    check_conflict(&sv, "/api/lab/resume", "idle");
    check_conflict(&sv, "/api/lab/recover", "idle");
    stop_all(&sv);
}

T_TEST(read_only)
{
    const char *const extra[] = {"--read-only", NULL};
    const char *const posts[] = {"/api/lab/start", "/api/lab/kill", "/api/lab/resume",
                                 "/api/lab/recover"};
    struct sc_server sv;
    struct sc_reply r;

    T_REQUIRE(start_logged_in(&sv, extra));
    for (size_t i = 0; i < sizeof(posts) / sizeof(posts[0]); i++) {
        T_OK(sc_post(&sv, posts[i], NULL, &r));
        T_EQ_I64(r.status, 403);
        T_CONTAINS(sc_str(&r, "error"), "read-only");
        sc_reply_free(&r);
    }
    check_idle(&sv);
    stop_all(&sv);
}

T_MAIN()
