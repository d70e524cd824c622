/*
 * test_serve_runs.c -- what `lil serve` reads, from the outside: the
 * binary started on a store (serve_client.c) holding runs of both kinds (a
 * program run made through lil.h here, a loop run made by `lil run`), and
 * its read routes asked over HTTP.
 *
 * What it proves: a page lists every run with its row (kind, status, word,
 * loop id, iteration, steps, times), sorted by last activity or id, sliced
 * by offset and limit, with the counts of every status (a damaged journal's
 * run among them, with its reason); each filter (status words, kind, a
 * substring of the run id or loop id) keeps what it says; every bad query
 * value is 400 naming its parameter; a run's facts are lil_run_facts'
 * document, its events lil_run_events' pages put together; the state at
 * iteration N of a loop is what that iteration committed, 404 past the
 * last; the spec is read only under --spec-root (403 outside), and
 * "matches" turns false when the file changes; a run written, changed or
 * removed after the page was read comes as a "runs" event within 1 s, a
 * watched run's new records as a "run" event; 10,000 runs page in under 200
 * ms of server time each (Server-Timing); on PostgreSQL (tests/pg registers
 * this file again), a queued run shows the queue's word.
 */
#include <lil/lil.h>
#include <signal.h>
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

/* A loop of three iterations, each adding 1 to n. */
static const char counter_spec[] =
    "loopspec: \"0.1\"\n"
    "id: counter\n"
    "pattern: react\n"
    "state: { vars: { n: { type: int, init: 0 } } }\n"
    "body:\n"
    "  - { id: bump, kind: shell, cmd: \"echo '{\\\"ok\\\":1}'\", on_done: { incr: n } "
    "}\n"
    "terminate: { signal: state-predicate, until: \"${state.n >= 3}\" }\n"
    "caps: { max_iterations: 5, on_cap_exceeded: fail }\n";

/* ---- helpers ------------------------------------------------------------- */

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

static char step_result[] = "done"; /* every step's result */

static int step_fn(lil_call *call, void *ud)
{
    const char *text = ud;

    return lil_call_set_result(call, text, strlen(text)) == LIL_OK ? 0 : 1;
}

static lil_store *open_store(void)
{
    lil_store *st = NULL;

    if (lil_store_open(NULL, t_store("store"), &st) != LIL_OK) {
        fprintf(stderr, "store: %s\n", lil_errmsg());
        return NULL;
    }
    return st;
}

/* A program run id with steps steps, completed or left running. */
static void program_run(lil_store *st, const char *id, int steps, bool complete)
{
    lil_run_opts o = {sizeof(o), LIL_SYNC_OFF, 0, 0};
    lil_run *run = NULL;
    char name[32];

    T_REQUIRE(lil_run_open(st, id, &o, &run) == LIL_OK);
    for (int i = 0; i < steps; i++) {
        lil_bytes out = {NULL, 0};

        snprintf(name, sizeof(name), "step%d", i);
        T_OK(lil_step(run, name, step_fn, step_result, &out));
        lil_free(out.data);
    }
    if (complete)
        T_OK(lil_run_complete(run, "ok", 2));
    T_OK(lil_run_close(run));
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    T_REQUIRE(f != NULL);
    T_CHECK(fputs(text, f) >= 0);
    T_CHECK(fclose(f) == 0);
}

/* `lil run SPEC --run-id ID` on the test's store: its exit status. */
static int loop_run(const char *spec, const char *run_id)
{
    char cmd[4096], out[4096];

    snprintf(cmd, sizeof(cmd), "'%s' --dir '%s' run '%s' --run-id '%s' 2>&1",
             t_lil_bin(), t_store("store"), spec, run_id);
    return t_run(cmd, out, sizeof(out), 1);
}

/* The store of most tests: prog-a (2 steps, completed), prog-b (1 step,
 * running), job-7 (the counter loop, completed), made in that order. */
static void three_runs(void)
{
    lil_store *st = open_store();

    T_REQUIRE(st != NULL);
    program_run(st, "prog-a", 2, true);
    pause_ms(2);
    program_run(st, "prog-b", 1, false);
    lil_store_close(st);
    pause_ms(2);
    T_REQUIRE(mkdir(t_path("specs"), 0700) == 0);
    write_file(t_path("specs/counter.yaml"), counter_spec);
    T_EQ_I64(loop_run(t_path("specs/counter.yaml"), "job-7"), 0);
}

static bool start(struct sc_server *sv, const char *const *extra)
{
    if (sc_start(sv, t_store("store"), extra) != 0) {
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

/* GET path: its JSON (the caller's) when the status is want, else NULL. */
static json_t *get(struct sc_server *sv, const char *path, long want)
{
    struct sc_reply r;
    json_t *doc = NULL;

    if (sc_get(sv, path, &r) != 0) {
        fprintf(stderr, "GET %s: no answer\n", path);
        return NULL;
    }
    if (r.status == want)
        doc = json_incref(r.json);
    else
        fprintf(stderr, "GET %s: %ld, not %ld: %s\n", path, r.status, want, r.body);
    sc_reply_free(&r);
    return doc;
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

/* The run ids of a page, space separated. */
static const char *ids_of(const json_t *page)
{
    static char buf[4096];
    size_t i, len = 0;
    json_t *row;

    buf[0] = '\0';
    json_array_foreach(json_object_get(page, "runs"), i, row)
    {
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? " " : "",
                                str(row, "run"));
        if (len >= sizeof(buf))
            break;
    }
    return buf;
}

/* The ids of the page at path (its total in *total). */
static const char *page_ids(struct sc_server *sv, const char *path, long long *total)
{
    json_t *page = get(sv, path, 200);
    const char *ids = ids_of(page);

    if (total)
        *total = page ? num(page, "total") : -1;
    json_decref(page);
    return page ? ids : "(no page)";
}

static const json_t *row_of(const json_t *page, const char *id)
{
    size_t i;
    json_t *row;

    json_array_foreach(json_object_get(page, "runs"), i, row)
    {
        if (strcmp(str(row, "run"), id) == 0)
            return row;
    }
    return NULL;
}

/* ---- a page of runs ------------------------------------------------------ */

T_TEST(a_page_lists_runs_of_both_kinds)
{
    struct sc_server sv;
    json_t *page;
    const json_t *row;
    long long total;

    three_runs();
    T_REQUIRE(start(&sv, NULL));
    page = get(&sv, "/api/runs", 200);
    T_REQUIRE(page != NULL);
    T_EQ_I64(num(page, "total"), 3);
    T_EQ_I64(num(page, "offset"), 0);
    T_EQ_I64(num(page, "limit"), 50);
    T_EQ_STR(ids_of(page), "job-7 prog-b prog-a"); /* last activity first */
    T_EQ_I64(num(json_object_get(page, "counts"), "completed"), 2);
    T_EQ_I64(num(json_object_get(page, "counts"), "running"), 1);
    T_EQ_I64(num(json_object_get(page, "indexing"), "done"), 3);
    T_EQ_I64(num(json_object_get(page, "indexing"), "total"), 3);
    T_CHECK(strlen(str(page, "store")) > 0);
    row = row_of(page, "job-7");
    T_REQUIRE(row != NULL);
    T_EQ_STR(str(row, "kind"), "loop");
    T_EQ_STR(str(row, "status"), "completed");
    T_EQ_STR(str(row, "word"), "completed");
    T_EQ_STR(str(row, "loop_id"), "counter");
    T_EQ_I64(num(row, "iteration"), 3);
    T_CHECK(json_is_true(json_object_get(row, "ended")));
    T_EQ_I64(num(json_object_get(row, "steps"), "done") >= 3, 1);
    T_CHECK(json_is_array(json_object_get(row, "budget")));
    T_CHECK(json_is_object(json_object_get(row, "usage")));
    T_EQ_I64(num(row, "uncertain"), 0);
    T_CHECK(json_is_null(json_object_get(row, "holder")));
    T_CHECK(json_is_null(json_object_get(row, "paused")));
    row = row_of(page, "prog-a");
    T_REQUIRE(row != NULL);
    T_EQ_STR(str(row, "kind"), "program");
    T_EQ_STR(str(row, "status"), "completed");
    T_EQ_I64(num(json_object_get(row, "steps"), "done"), 2);
    T_CHECK(json_is_null(json_object_get(row, "loop_id")));
    T_CHECK(json_is_null(json_object_get(row, "iteration")));
    T_CHECK(json_is_null(json_object_get(row, "usage")));
    T_CHECK(num(row, "last_ns") >= num(row, "created_ns") &&
            num(row, "created_ns") > 0);
    row = row_of(page, "prog-b");
    T_REQUIRE(row != NULL);
    T_EQ_STR(str(row, "status"), "running");
    T_CHECK(json_is_false(json_object_get(row, "ended")));
    json_decref(page);
    /* sort and slices */
    T_EQ_STR(page_ids(&sv, "/api/runs?sort=id", NULL), "job-7 prog-a prog-b");
    T_EQ_STR(page_ids(&sv, "/api/runs?sort=last", NULL), "job-7 prog-b prog-a");
    T_EQ_STR(page_ids(&sv, "/api/runs?sort=id&offset=1&limit=1", &total), "prog-a");
    T_EQ_I64(total, 3);
    T_EQ_STR(page_ids(&sv, "/api/runs?offset=2", NULL), "prog-a");
    T_EQ_STR(page_ids(&sv, "/api/runs?offset=9", &total), "");
    T_EQ_I64(total, 3);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

/* A journal damaged before its tail: the run keeps its row, its word the
 * one `lil ls` shows, the library's reason beside it. */
T_TEST(a_damaged_run_has_its_row)
{
    struct sc_server sv;
    lil_store *st;
    json_t *page;
    const json_t *row;
    FILE *f;
    long size;

    T_FILE_ONLY(); /* it damages a journal file */
    st = open_store();
    T_REQUIRE(st != NULL);
    program_run(st, "sound", 2, true);
    program_run(st, "broken", 6, true);
    lil_store_close(st);
    f = fopen(t_path("store/broken.lil"), "r+b");
    T_REQUIRE(f != NULL);
    T_REQUIRE(fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 200);
    T_REQUIRE(fseek(f, size / 2, SEEK_SET) == 0);
    T_CHECK(fputc('#', f) != EOF && fputc('#', f) != EOF);
    T_CHECK(fclose(f) == 0);
    T_REQUIRE(start(&sv, NULL));
    page = get(&sv, "/api/runs?sort=id", 200);
    T_REQUIRE(page != NULL);
    T_EQ_STR(ids_of(page), "broken sound");
    row = row_of(page, "broken");
    T_REQUIRE(row != NULL);
    T_EQ_STR(str(row, "status"), "damaged");
    T_EQ_STR(str(row, "word"), "damaged");
    T_EQ_STR(str(json_object_get(row, "error"), "code"), "LIL_E_CORRUPT");
    T_CHECK(strlen(str(json_object_get(row, "error"), "message")) > 0);
    T_EQ_I64(num(json_object_get(page, "counts"), "damaged"), 1);
    T_EQ_I64(num(json_object_get(page, "counts"), "completed"), 1);
    T_CHECK(json_object_get(row_of(page, "sound"), "error") == NULL);
    json_decref(page);
    T_EQ_STR(page_ids(&sv, "/api/runs?status=damaged", NULL), "broken");
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_TEST(each_filter_keeps_what_it_says)
{
    struct sc_server sv;
    json_t *page;
    long long total;

    three_runs();
    T_REQUIRE(start(&sv, NULL));
    T_EQ_STR(page_ids(&sv, "/api/runs?kind=loop", NULL), "job-7");
    T_EQ_STR(page_ids(&sv, "/api/runs?kind=program", NULL), "prog-b prog-a");
    T_EQ_STR(page_ids(&sv, "/api/runs?status=completed", NULL), "job-7 prog-a");
    T_EQ_STR(page_ids(&sv, "/api/runs?status=running", NULL), "prog-b");
    T_EQ_STR(page_ids(&sv, "/api/runs?status=running,completed&sort=id", NULL),
             "job-7 prog-a prog-b");
    T_EQ_STR(page_ids(&sv, "/api/runs?status=paused", &total), "");
    T_EQ_I64(total, 0);
    T_EQ_STR(page_ids(&sv, "/api/runs?q=COUNTER", NULL), "job-7"); /* its loop id */
    T_EQ_STR(page_ids(&sv, "/api/runs?q=job", NULL), "job-7");
    T_EQ_STR(page_ids(&sv, "/api/runs?q=PROG&sort=id", NULL), "prog-a prog-b");
    T_EQ_STR(page_ids(&sv, "/api/runs?q=zzz", NULL), "");
    T_EQ_STR(page_ids(&sv, "/api/runs?kind=program&status=completed", NULL), "prog-a");
    T_EQ_STR(page_ids(&sv, "/api/runs?status=&kind=&q=", NULL), "job-7 prog-b prog-a");
    /* the counts are every run's, whatever the filter */
    page = get(&sv, "/api/runs?kind=loop", 200);
    T_REQUIRE(page != NULL);
    T_EQ_I64(num(json_object_get(page, "counts"), "completed"), 2);
    T_EQ_I64(num(json_object_get(page, "counts"), "running"), 1);
    json_decref(page);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_TEST(bad_query_values_are_400)
{
    static const char *const bad[][2] = {
        {"/api/runs?status=bogus", "status"},
        {"/api/runs?status=running,,completed", "status"},
        {"/api/runs?kind=loops", "kind"},
        {"/api/runs?sort=name", "sort"},
        {"/api/runs?limit=0", "limit"},
        {"/api/runs?limit=501", "limit"},
        {"/api/runs?limit=ten", "limit"},
        {"/api/runs?offset=-1", "offset"},
        {"/api/runs/prog-a/events?limit=0", "limit"},
        {"/api/runs/prog-a/events?limit=2001", "limit"},
        {"/api/runs/prog-a/events?from=x", "from"},
        {"/api/runs/prog-a/events?types=Effect", "types"},
        {"/api/runs/prog-a/events?iterations=-2", "iterations"},
        {"/api/runs/job-7/state", "iteration"},
        {"/api/runs/job-7/state?iteration=-1", "iteration"},
        {"/api/runs/job-7/state?iteration=one", "iteration"},
    };
    struct sc_server sv;
    struct sc_reply r;

    three_runs();
    T_REQUIRE(start(&sv, NULL));
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        T_OK(sc_get(&sv, bad[i][0], &r));
        T_EQ_I64(r.status, 400);
        T_CHECK(strncmp(sc_str(&r, "error") ? sc_str(&r, "error") : "", bad[i][1],
                        strlen(bad[i][1])) == 0);
        if (r.status != 400)
            fprintf(stderr, "  %s: %s\n", bad[i][0], r.body);
        sc_reply_free(&r);
    }
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

/* ---- one run ------------------------------------------------------------- */

static json_t *lib_doc(lil_status rc, lil_bytes *b)
{
    json_t *v = rc == LIL_OK ? json_loadb(b->data, b->len, 0, NULL) : NULL;

    lil_free(b->data);
    return v;
}

T_TEST(facts_and_pages_of_events)
{
    struct sc_server sv;
    lil_store *st;
    lil_bytes b = {NULL, 0};
    json_t *want, *got, *all, *page, *ev;
    char path[128];
    uint64_t from = 0;
    size_t i, pages = 0;

    three_runs();
    T_REQUIRE(start(&sv, NULL));
    st = open_store();
    T_REQUIRE(st != NULL);
    /* the facts, as the library gives them */
    want = lib_doc(lil_run_facts(st, "prog-a", &b), &b);
    got = get(&sv, "/api/runs/prog-a", 200);
    T_REQUIRE(want != NULL && got != NULL);
    T_CHECK(json_equal(want, got));
    json_decref(want);
    json_decref(got);
    got = get(&sv, "/api/runs/job-7", 200);
    T_REQUIRE(got != NULL);
    T_EQ_STR(str(got, "kind"), "loop");
    T_EQ_STR(str(json_object_get(got, "loop"), "loop"), "counter");
    json_decref(got);
    got = get(&sv, "/api/runs/nosuch", 404);
    T_REQUIRE(got != NULL);
    T_EQ_STR(str(got, "error"), "no run 'nosuch'");
    json_decref(got);
    got = get(&sv, "/api/runs/nosuch/events", 404);
    json_decref(got);
    T_CHECK(got != NULL);
    /* pages of 4 events put together are the whole history */
    b = (lil_bytes){NULL, 0};
    want = lib_doc(lil_run_events(st, "job-7", 0, 0, &b), &b);
    T_REQUIRE(want != NULL);
    all = json_array();
    for (;;) {
        snprintf(path, sizeof(path), "/api/runs/job-7/events?limit=4&from=%llu",
                 (unsigned long long)from);
        page = get(&sv, path, 200);
        T_REQUIRE(page != NULL);
        T_CHECK(json_array_size(json_object_get(page, "events")) <= 5);
        T_EQ_I64(num(page, "last_seq"), num(want, "last_seq"));
        json_array_extend(all, json_object_get(page, "events"));
        from = (uint64_t)num(page, "next");
        pages++;
        if (!json_is_true(json_object_get(page, "more"))) {
            json_decref(page);
            break;
        }
        json_decref(page);
    }
    T_CHECK(pages > 2);
    T_CHECK(json_equal(all, json_object_get(want, "events")));
    json_decref(all);
    json_decref(want);
    /* only some types; the last iterations */
    page = get(&sv, "/api/runs/job-7/events?types=effect,iteration_end", 200);
    T_REQUIRE(page != NULL);
    T_EQ_I64((long long)json_array_size(json_object_get(page, "events")), 6);
    json_array_foreach(json_object_get(page, "events"), i, ev)
    {
        T_EQ_STR(str(ev, "type"), i % 2 ? "iteration_end" : "effect");
    }
    json_decref(page);
    page = get(&sv, "/api/runs/job-7/events?iterations=1", 200);
    T_REQUIRE(page != NULL);
    T_EQ_I64(num(page, "iterations_before"), 2); /* iterations 0, 1 before 2 */
    json_decref(page);
    lil_store_close(st);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_TEST(state_at_an_iteration)
{
    struct sc_server sv;
    json_t *doc;
    char path[128];
    long long seq = 0;

    three_runs();
    T_REQUIRE(start(&sv, NULL));
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "/api/runs/job-7/state?iteration=%d", i);
        doc = get(&sv, path, 200);
        T_REQUIRE(doc != NULL);
        T_EQ_STR(str(doc, "run"), "job-7");
        T_EQ_I64(num(doc, "iteration"), i);
        T_EQ_I64(num(json_object_get(doc, "state"), "n"), i + 1);
        T_CHECK(json_is_object(json_object_get(doc, "meters")));
        T_CHECK(num(doc, "seq") > seq && num(doc, "ts_ns") > 0);
        seq = num(doc, "seq");
        json_decref(doc);
    }
    doc = get(&sv, "/api/runs/job-7/state?iteration=3", 404); /* not reached */
    T_REQUIRE(doc != NULL);
    T_CONTAINS(str(doc, "error"), "has no state of iteration 3");
    json_decref(doc);
    doc = get(&sv, "/api/runs/prog-a/state?iteration=0", 404);
    T_REQUIRE(doc != NULL);
    T_CONTAINS(str(doc, "error"), "is no loop run");
    json_decref(doc);
    doc = get(&sv, "/api/runs/nosuch/state?iteration=0", 404);
    T_REQUIRE(doc != NULL);
    T_EQ_STR(str(doc, "error"), "no run 'nosuch'");
    json_decref(doc);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

/* ---- the spec ---------------------------------------------------------------- */

/* GET the spec of run; its answer when the status is want. */
static json_t *spec_of(struct sc_server *sv, const char *run, long want)
{
    char path[128];

    snprintf(path, sizeof(path), "/api/runs/%s/spec", run);
    return get(sv, path, want);
}

T_TEST(the_spec_under_the_root_only)
{
    const char *extra[] = {"--spec-root", t_path("specs"), NULL};
    struct sc_server sv;
    char *real, *changed;
    json_t *doc, *facts;

    three_runs();
    real = realpath(t_path("specs/counter.yaml"), NULL);
    T_REQUIRE(real != NULL);
    T_REQUIRE(start(&sv, extra));
    facts = get(&sv, "/api/runs/job-7", 200);
    T_REQUIRE(facts != NULL);
    doc = spec_of(&sv, "job-7", 200);
    T_REQUIRE(doc != NULL);
    T_EQ_STR(str(doc, "run"), "job-7");
    T_EQ_STR(str(doc, "path"), real);
    T_EQ_STR(str(doc, "text"), counter_spec);
    T_EQ_STR(str(doc, "sha256"), str(json_object_get(facts, "loop"), "spec_sha256"));
    T_EQ_STR(str(doc, "run_sha256"), str(doc, "sha256"));
    T_EQ_I64(strlen(str(doc, "sha256")), 64);
    T_CHECK(json_is_true(json_object_get(doc, "matches")));
    json_decref(doc);
    /* the file changed: its digest is no longer the run's */
    changed = strdup(counter_spec);
    T_REQUIRE(changed != NULL && strstr(changed, "max_iterations: 5"));
    strstr(changed, "max_iterations: 5")[16] = '6';
    write_file(t_path("specs/counter.yaml"), changed);
    doc = spec_of(&sv, "job-7", 200);
    T_REQUIRE(doc != NULL);
    T_EQ_STR(str(doc, "text"), changed);
    T_CHECK(json_is_false(json_object_get(doc, "matches")));
    T_EQ_I64(strlen(str(doc, "sha256")), 64);
    T_CHECK(strcmp(str(doc, "sha256"), str(doc, "run_sha256")) != 0);
    T_EQ_STR(str(doc, "run_sha256"),
             str(json_object_get(facts, "loop"), "spec_sha256"));
    json_decref(doc);
    /* no spec: a program run, no run, no file */
    doc = spec_of(&sv, "prog-a", 404);
    T_CHECK(doc && strstr(str(doc, "error"), "is no loop run"));
    json_decref(doc);
    doc = spec_of(&sv, "nosuch", 404);
    T_CHECK(doc && strcmp(str(doc, "error"), "no run 'nosuch'") == 0);
    json_decref(doc);
    T_CHECK(unlink(t_path("specs/counter.yaml")) == 0);
    doc = spec_of(&sv, "job-7", 404);
    T_CHECK(doc && strstr(str(doc, "error"), "no such spec"));
    json_decref(doc);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
    /* a root the spec is not under */
    write_file(t_path("specs/counter.yaml"), counter_spec);
    T_REQUIRE(mkdir(t_path("elsewhere"), 0700) == 0);
    extra[1] = t_path("elsewhere");
    T_REQUIRE(start(&sv, extra));
    doc = spec_of(&sv, "job-7", 403);
    T_CHECK(doc && strstr(str(doc, "error"), "outside --spec-root"));
    json_decref(doc);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
    json_decref(facts);
    free(changed);
    free(real);
}

/* ---- live ---------------------------------------------------------------- */

/* Wait at most ms for a "runs" event whose rows hold id (or, removed, its
 * removed list): the row (the caller's), or NULL. */
static json_t *runs_event_with(struct sc_stream *es, const char *id, bool removed,
                               int ms)
{
    int64_t end = now_ms() + ms;
    json_t *data = NULL, *v;
    size_t i;

    while (now_ms() < end && sc_stream_wait(es, "runs", (int)(end - now_ms()), &data)) {
        json_array_foreach(json_object_get(data, removed ? "removed" : "rows"), i, v)
        {
            if (strcmp(removed ? json_string_value(v) : str(v, "run"), id) == 0) {
                json_incref(v);
                json_decref(data);
                return v;
            }
        }
        json_decref(data);
    }
    return NULL;
}

T_TEST(changes_come_as_events_within_a_second)
{
    struct sc_server sv;
    struct sc_stream *all = NULL, *one = NULL;
    lil_store *st;
    json_t *row, *data = NULL;
    long status = 0;
    int64_t t0;
    char cmd[2048], out[1024];

    three_runs();
    T_REQUIRE(start(&sv, NULL));
    json_decref(get(&sv, "/api/runs", 200));
    T_OK(sc_stream_open(&sv, NULL, &all, &status));
    T_EQ_I64(status, 200);
    T_OK(sc_stream_open(&sv, "prog-b", &one, &status));
    T_EQ_I64(status, 200);
    T_CHECK(sc_stream_wait(all, "hello", 2000, NULL));
    T_CHECK(sc_stream_wait(one, "hello", 2000, NULL));
    st = open_store();
    T_REQUIRE(st != NULL);
    /* a new run */
    t0 = now_ms();
    program_run(st, "fresh", 1, true);
    row = runs_event_with(all, "fresh", false, 1000);
    T_CHECK(row != NULL);
    fprintf(stderr, "  a new run came in %lld ms\n", (long long)(now_ms() - t0));
    T_EQ_STR(str(row, "status"), "completed");
    json_decref(row);
    /* a run that grew: its row, and the watcher's "run" event */
    t0 = now_ms();
    program_run(st, "prog-b", 2, false); /* step0 replays, step1 is new */
    row = runs_event_with(all, "prog-b", false, 1000);
    T_CHECK(row != NULL);
    fprintf(stderr, "  a change came in %lld ms\n", (long long)(now_ms() - t0));
    T_EQ_I64(num(json_object_get(row, "steps"), "done"), 2);
    json_decref(row);
    T_CHECK(sc_stream_wait(one, "run", 1000, &data));
    T_EQ_STR(str(data, "run"), "prog-b");
    T_CHECK(num(data, "last_seq") > 3);
    json_decref(data);
    /* an ended run written again (it is looked at in the sweep, not each tick) */
    t0 = now_ms();
    program_run(st, "prog-a", 2, false);
    row = runs_event_with(all, "prog-a", false, 1000);
    T_CHECK(row != NULL);
    fprintf(stderr, "  an ended run's change came in %lld ms\n",
            (long long)(now_ms() - t0));
    json_decref(row);
    lil_store_close(st);
    /* a run removed */
    snprintf(cmd, sizeof(cmd), "'%s' --dir '%s' rm prog-a 2>&1", t_lil_bin(),
             t_store("store"));
    t0 = now_ms();
    T_EQ_I64(t_run(cmd, out, sizeof(out), 1), 0);
    row = runs_event_with(all, "prog-a", true, 1000);
    T_CHECK(row != NULL);
    fprintf(stderr, "  a removal came in %lld ms\n", (long long)(now_ms() - t0));
    json_decref(row);
    T_EQ_STR(page_ids(&sv, "/api/runs?sort=id", NULL), "fresh job-7 prog-b");
    sc_stream_close(all);
    sc_stream_close(one);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

/* ---- 10,000 runs --------------------------------------------------------- */
#define MANY       10000
#define MANY_PROCS 4

/* Runs run-<k> for k = first, first + step, ... < MANY, in a child. */
static pid_t make_many(int first, int step)
{
    pid_t pid = fork();

    if (pid != 0)
        return pid;
    lil_store *st = NULL;
    int bad = lil_store_open(NULL, t_store("store"), &st) != LIL_OK;

    for (int k = first; !bad && k < MANY; k += step) {
        lil_run_opts o = {sizeof(o), LIL_SYNC_OFF, 0, 0};
        lil_run *run = NULL;
        lil_bytes out = {NULL, 0};
        char id[32];

        snprintf(id, sizeof(id), "run-%05d", k);
        bad = lil_run_open(st, id, &o, &run) != LIL_OK ||
              lil_step(run, "fetch", step_fn, step_result, &out) != LIL_OK ||
              (k % 3 == 0 && lil_run_complete(run, "ok", 2) != LIL_OK);
        lil_free(out.data);
        bad = lil_run_close(run) != LIL_OK || bad;
    }
    lil_store_close(st);
    _exit(bad);
}

/* GET path: its server time (ms), checked under 200. */
static double timed_page(struct sc_server *sv, const char *path, long long total)
{
    struct sc_reply r;
    double ms;

    T_OK(sc_get(sv, path, &r));
    T_EQ_I64(r.status, 200);
    T_EQ_I64(num(r.json, "total"), total);
    ms = r.server_ms;
    T_CHECK(ms >= 0 && ms < 200);
    fprintf(stderr, "  %-44s %7.2f ms\n", path, ms);
    sc_reply_free(&r);
    return ms;
}

T_TEST(ten_thousand_runs_page_in_under_200_ms)
{
    struct sc_server sv;
    pid_t kids[MANY_PROCS];
    json_t *page = NULL;
    int status = 0;
    int64_t t0;

    T_FILE_ONLY();
    for (int i = 0; i < MANY_PROCS; i++)
        kids[i] = make_many(i, MANY_PROCS);
    for (int i = 0; i < MANY_PROCS; i++) {
        T_REQUIRE(kids[i] > 0 && waitpid(kids[i], &status, 0) == kids[i]);
        T_EQ_I64(status, 0);
    }
    T_REQUIRE(start(&sv, NULL));
    t0 = now_ms(); /* the index fills a part at a time */
    while (now_ms() - t0 < 60000) {
        json_decref(page);
        page = get(&sv, "/api/runs?limit=1", 200);
        T_REQUIRE(page != NULL);
        if (num(json_object_get(page, "indexing"), "done") == MANY)
            break;
        pause_ms(200);
    }
    T_EQ_I64(num(json_object_get(page, "indexing"), "total"), MANY);
    T_EQ_I64(num(json_object_get(page, "indexing"), "done"), MANY);
    json_decref(page);
    fprintf(stderr, "  indexed %d runs %lld ms after the start\n", MANY,
            (long long)(now_ms() - t0));
    timed_page(&sv, "/api/runs", MANY);
    timed_page(&sv, "/api/runs?limit=500", MANY);
    timed_page(&sv, "/api/runs?sort=id&offset=9500&limit=500", MANY);
    timed_page(&sv, "/api/runs?status=completed&limit=500", 3334);
    timed_page(&sv, "/api/runs?status=running,completed&offset=5000", MANY);
    timed_page(&sv, "/api/runs?q=RUN-0999", 10);
    timed_page(&sv, "/api/runs?kind=program&sort=last&offset=9990", MANY);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

/* ---- PostgreSQL: the queue ----------------------------------------------- */
/* On PostgreSQL (tests/pg), a queued run's row has the queue's state and
 * word; on a file store (no queue), no row has a queue. */
T_TEST(a_queued_run_shows_the_queue)
{
    struct sc_server sv;
    json_t *page, *row;
    char cmd[4096], out[4096];
    size_t i;

    three_runs();
    snprintf(cmd, sizeof(cmd), "'%s' --dir '%s' submit '%s' --run-id queued-1 2>&1",
             t_lil_bin(), t_store("store"), t_path("specs/counter.yaml"));
    T_EQ_I64(t_run(cmd, out, sizeof(out), 1), t_store_pg() ? 0 : 64);
    T_REQUIRE(start(&sv, NULL));
    page = get(&sv, "/api/runs?sort=id", 200);
    T_REQUIRE(page != NULL);
    T_EQ_STR(ids_of(page),
             t_store_pg() ? "job-7 prog-a prog-b queued-1" : "job-7 prog-a prog-b");
    json_array_foreach(json_object_get(page, "runs"), i, row)
    {
        bool queued = strcmp(str(row, "run"), "queued-1") == 0;

        T_CHECK(json_is_null(json_object_get(row, "queue")) == !queued);
        T_EQ_STR(str(row, "word"), queued ? "queued" : str(row, "status"));
        if (queued) {
            T_EQ_STR(str(json_object_get(row, "queue"), "state"), "queued");
            T_CHECK(
                json_is_null(json_object_get(json_object_get(row, "queue"), "worker")));
        }
    }
    json_decref(page);
    if (t_store_pg())
        T_EQ_STR(page_ids(&sv, "/api/runs?status=queued", NULL), "queued-1");
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_MAIN()
