/*
 * test_loop_api.c -- the loop run calls of lil.h (lil_loop_*), black-box:
 * options and misuse, a run to completion with its progress events, steps,
 * a paused run run again on the same handle, stops asked from another
 * thread (lil_loop_request_stop, lil_loop_interrupt), a stop asked before
 * the run exists (lil_loop_stop_pending), inputs that differ
 * on resume, approvals of a run that is not paused, and the JSON of every
 * kind of result.
 *
 * The loops' shell steps append a line per effect to side.txt in the
 * test's directory, so a test can count how often each effect ran.
 */
#include <dirent.h>
#include <lil/lil.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "api_util.h"
#include "t.h"

/* n iterations of: a (shell), nap (sleep 20ms), b (shell, n += 1). */
static const char count_spec[] =
    "loopspec: \"0.1\"\n"
    "id: count\n"
    "pattern: react\n"
    "inputs: { tok: { type: string, default: t } }\n"
    "state: { vars: { n: { type: int, init: 0 } } }\n"
    "body:\n"
    "  - { id: a, kind: shell, cmd: \"echo '${state.n} a' >> side.txt\" }\n"
    "  - { id: nap, kind: sleep, for: 20ms }\n"
    "  - { id: b, kind: shell, cmd: \"echo '${state.n} b' >> side.txt\", on_done: { "
    "incr: n } }\n"
    "terminate: { signal: state-predicate, until: \"${state.n >= %d}\" }\n"
    "caps: { max_iterations: 100, budget: { wallclock: 1h } }\n";

/* A breakpoint between two effects, one iteration. */
static const char pause_spec[] =
    "loopspec: \"0.1\"\n"
    "id: pause\n"
    "pattern: react\n"
    "state: { vars: { n: { type: int, init: 0 } } }\n"
    "body:\n"
    "  - { id: a, kind: shell, cmd: \"echo '${state.n} a' >> side.txt\" }\n"
    "  - { id: ok, kind: breakpoint, ask: \"go on after ${state.n}?\" }\n"
    "  - { id: b, kind: shell, cmd: \"echo '${state.n} b' >> side.txt\", on_done: { "
    "incr: n } }\n"
    "terminate: { signal: state-predicate, until: \"${state.n >= 1}\" }\n"
    "caps: { max_iterations: 5, budget: { wallclock: 1h } }\n";

/* Slow iterations for the stop tests: two 10 ms effects each. */
static const char slow_spec[] =
    "loopspec: \"0.1\"\n"
    "id: slow\n"
    "pattern: react\n"
    "state: { vars: { n: { type: int, init: 0 } } }\n"
    "body:\n"
    "  - { id: a, kind: shell, cmd: \"sleep 0.01; echo '${state.n} a' >> side.txt\" }\n"
    "  - { id: b, kind: shell, cmd: \"sleep 0.01; echo '${state.n} b' >> side.txt\", "
    "on_done: { incr: n } }\n"
    "terminate: { signal: state-predicate, until: \"${state.n >= %d}\" }\n"
    "caps: { max_iterations: 1000, budget: { wallclock: 1h } }\n";

/* A long shell effect, then a long sleep. */
static const char long_spec[] =
    "loopspec: \"0.1\"\n"
    "id: long\n"
    "pattern: react\n"
    "state: { vars: { n: { type: int, init: 0 } } }\n"
    "body:\n"
    "  - { id: %s }\n"
    "  - { id: b, kind: shell, cmd: \"echo '${state.n} b' >> side.txt\", on_done: { "
    "incr: n } }\n"
    "terminate: { signal: state-predicate, until: \"${state.n >= 1}\" }\n"
    "caps: { max_iterations: 5, budget: { wallclock: 1h } }\n";

static lil_spec *spec_of(const char *fmt, const char *arg, int n)
{
    char text[4096];
    lil_spec *spec = NULL;

    if (arg)
        snprintf(text, sizeof(text), fmt, arg);
    else
        snprintf(text, sizeof(text), fmt, n);
    if (lil_spec_parse(NULL, "loop.yaml", text, strlen(text), NULL, &spec) != LIL_OK ||
        !lil_spec_ok(spec)) {
        fprintf(stderr, "the test's spec does not load:\n%s\n", text);
        lil_spec_free(spec);
        return NULL;
    }
    return spec;
}

static lil_loop_opts opts_default(void)
{
    lil_loop_opts o;

    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.actor = "tester";
    return o;
}

static lil_loop *open_loop(lil_store *st, const lil_spec *spec, const lil_loop_opts *o)
{
    lil_loop *lp = NULL;
    lil_status rc = lil_loop_open(st, spec, o, &lp);

    if (rc != LIL_OK)
        fprintf(stderr, "lil_loop_open: %s: %s\n", lil_status_name(rc),
                lil_store_errmsg(st));
    return lp;
}

/* Times side.txt holds line (exactly), and its number of lines. */
static int side_count(const char *line, int *total)
{
    FILE *f = fopen("side.txt", "r");
    char buf[256];
    int n = 0;

    if (total)
        *total = 0;
    if (!f)
        return 0;
    while (fgets(buf, sizeof(buf), f)) {
        buf[strcspn(buf, "\n")] = '\0';
        n += line && strcmp(buf, line) == 0;
        if (total)
            (*total)++;
    }
    fclose(f);
    return n;
}

/* Every line of side.txt is there once, and there are total of them. */
static int side_all_once(int total)
{
    FILE *f = fopen("side.txt", "r");
    char lines[256][64];
    int n = 0, dup = 0;

    if (!f)
        return total == 0;
    while (n < 256 && fgets(lines[n], sizeof(lines[n]), f)) {
        for (int i = 0; i < n; i++)
            dup += strcmp(lines[i], lines[n]) == 0;
        n++;
    }
    fclose(f);
    if (dup || n != total)
        fprintf(stderr, "side.txt: %d lines (%d repeated), want %d once each\n", n, dup,
                total);
    return dup == 0 && n == total;
}

/* Entries of directory dir (not . and ..). */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static int count_run(void *ud, const char *run_id)
{
    (void)run_id;
    (*(int *)ud)++;
    return 0;
}

/* What the store holds: files of the store's directory, or runs of a
 * PostgreSQL store (t_store). */
static int store_entries(lil_store *st)
{
    int n = 0;

    if (!t_store_pg() && !t_store_mem())
        return dir_entries(U_STORE_DIR);
    return lil_store_foreach_run(st, count_run, &n) == LIL_OK ? n : -1;
}

static json_t *result_json(const lil_loop_result *res)
{
    json_t *j = res->json ? json_loads(res->json, 0, NULL) : NULL;

    if (!json_is_object(j))
        fprintf(stderr, "the result's JSON is not an object: %s\n",
                res->json ? res->json : "(null)");
    return j;
}

/* The keys of object o, sorted and joined with commas. */
static const char *keys_of(json_t *o)
{
    static char out[256];
    const char *names[16];
    size_t n = 0;
    const char *k;
    json_t *v;

    out[0] = '\0';
    json_object_foreach(o, k, v)
    {
        if (n < 16)
            names[n++] = k;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (strcmp(names[j], names[i]) < 0) {
                const char *t = names[i];
                names[i] = names[j];
                names[j] = t;
            }
    for (size_t i = 0; i < n; i++)
        snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? "," : "",
                 names[i]);
    return out;
}

/* ---- options and misuse
 * -------------------------------------------------------------- */

T_TEST(loop_open_rejects_bad_options)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(count_spec, NULL, 2), *bad = NULL;
    lil_loop_opts o = opts_default();
    lil_loop *lp = NULL;
    const char *pairs[1] = {"nope=1"};
    static const char bad_spec[] =
        "loopspec: \"0.1\"\nid: bad\npattern: react\nbody:\n"
        "  - { id: a, kind: shell, cmd: \"echo ${state.nope}\" }\n"
        "terminate: { signal: state-predicate, until: \"${iteration >= 1}\" }\n";

    T_REQUIRE(st && spec);
    T_EQ_I64(lil_loop_open(st, spec, &o, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_loop_open(NULL, spec, &o, &lp), LIL_E_INVAL);
    T_CHECK(lp == NULL);
    o.flags = 1u << 20; /* no LIL_LOOP_* flag */
    T_EQ_I64(lil_loop_open(st, spec, &o, &lp), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(st), "unknown flags");
    o = opts_default();
    o.struct_size = 8;
    T_EQ_I64(lil_loop_open(st, spec, &o, &lp), LIL_E_INVAL);
    o = opts_default();
    o.max_block_ms = -1;
    T_EQ_I64(lil_loop_open(st, spec, &o, &lp), LIL_E_INVAL);
    o = opts_default();
    o.n_input_pairs = 1;
    T_EQ_I64(lil_loop_open(st, spec, &o, &lp), LIL_E_INVAL);
    o = opts_default();
    o.run_id = "../up";
    T_EQ_I64(lil_loop_open(st, spec, &o, &lp), LIL_E_INVAL);
    /* A spec with errors: LIL_E_SPEC. */
    T_EQ_I64(lil_spec_parse(NULL, "bad.yaml", bad_spec, strlen(bad_spec), NULL, &bad),
             LIL_OK);
    T_CHECK(bad && !lil_spec_ok(bad));
    T_EQ_I64(lil_loop_open(st, bad, NULL, &lp), LIL_E_SPEC);
    T_CONTAINS(lil_store_errmsg(st), "errors");
    T_EQ_I64(lil_loop_open(st, NULL, NULL, &lp), LIL_E_SPEC);
    T_CHECK(lp == NULL);
    /* None of these created anything in the store. */
    T_EQ_I64(store_entries(st), 0);
    /* Inputs the spec does not declare, or that are not an object. */
    o = opts_default();
    o.n_input_pairs = 1;
    o.input_pairs = pairs;
    T_EQ_I64(lil_loop_open(st, spec, &o, &lp), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(st), "nope");
    o = opts_default();
    o.inputs_json = "[1]";
    T_EQ_I64(lil_loop_open(st, spec, &o, &lp), LIL_E_INVAL);
    T_CHECK(lp == NULL);
    T_EQ_I64(lil_loop_close(NULL), LIL_OK);
    lil_spec_free(bad);
    lil_spec_free(spec);
    lil_store_close(st);
}

T_TEST(loop_calls_refuse_bad_handles)
{
    lil_loop_result res;
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(count_spec, NULL, 1);
    lil_loop_opts o = opts_default();
    lil_loop *lp;
    lil_bytes pending;
    char text[512];

    T_REQUIRE(st && spec);
    T_EQ_I64(lil_loop_run(NULL, &res), LIL_E_INVAL);
    T_EQ_I64(lil_loop_step(NULL, &res), LIL_E_INVAL);
    T_EQ_I64(lil_loop_current(NULL, &res), LIL_E_INVAL);
    lp = open_loop(st, spec, &o);
    T_REQUIRE(lp);
    T_EQ_I64(lil_loop_run(lp, NULL), LIL_E_INVAL);
    T_EQ_STR(lil_loop_run_id(lp), "count");
    T_EQ_I64(lil_loop_approve(lp, "", "why", &res), LIL_E_INVAL);
    T_EQ_I64(lil_loop_recover(lp, LIL_RESOLVE_RETRY, NULL, "me", "", &res),
             LIL_E_INVAL);
    T_EQ_I64(lil_loop_request_stop(st, "count", "me", ""), LIL_E_INVAL);
    /* A run that has not started may be asked: the request waits for it. */
    T_EQ_I64(lil_loop_stop_pending(st, "nosuchrun", &pending), LIL_E_NOTFOUND);
    T_EQ_I64(lil_loop_request_stop(st, "nosuchrun", "me", "why"), LIL_OK);
    T_EQ_I64(lil_loop_request_stop(st, "nosuchrun", "me", "why"), LIL_E_DONE);
    T_EQ_I64(lil_loop_stop_pending(st, "nosuchrun", &pending), LIL_OK);
    T_REQUIRE(pending.data && pending.len < sizeof(text));
    memcpy(text, pending.data, pending.len);
    text[pending.len] = '\0';
    lil_free(pending.data);
    T_CONTAINS(text, "\"runId\": \"nosuchrun\"");
    T_CONTAINS(text, "\"actor\": \"me\"");
    T_CONTAINS(text, "\"reason\": \"why\"");
    T_EQ_I64(lil_loop_stop_pending(st, "count", &pending), LIL_E_NOTFOUND);
    T_CHECK(pending.data == NULL && pending.len == 0);
    T_EQ_I64(lil_loop_stop_pending(st, "bad/id", &pending), LIL_E_INVAL);
    T_EQ_I64(lil_loop_stop_pending(st, "count", NULL), LIL_E_INVAL);
    T_EQ_I64(lil_loop_stop_pending(NULL, "count", &pending), LIL_E_INVAL);
    /* Not uncertain: nothing to recover. */
    T_EQ_I64(lil_loop_recover(lp, LIL_RESOLVE_RETRY, NULL, "me", "why", &res),
             LIL_E_INVAL);
    T_CONTAINS(lil_loop_errmsg(lp), "no uncertain effect");
    /* One process at a time. */
    {
        lil_loop *second = NULL;
        T_EQ_I64(lil_loop_open(st, spec, &o, &second), LIL_E_LOCKED);
    }
    T_EQ_I64(lil_loop_close(lp), LIL_OK);
    lil_spec_free(spec);
    lil_store_close(st);
}

/* ---- a run to completion
 * --------------------------------------------------------------- */

struct events {
    int iterations, effects, ends, sleeps, other;
    long slept_ms;
    int64_t last_iteration;
};

static void count_event(void *ud, const lil_loop_event *ev)
{
    struct events *e = ud;

    switch (ev->kind) {
    case LIL_LOOP_EV_ITERATION:
        e->iterations++;
        e->last_iteration = ev->iteration;
        break;
    case LIL_LOOP_EV_EFFECT:
        e->effects += ev->effect && strcmp(ev->effect, "shell") == 0 && ev->step;
        break;
    case LIL_LOOP_EV_EFFECT_END: /* each effect that started, done (no text) */
        e->ends += ev->text == NULL && ev->value >= 0;
        break;
    case LIL_LOOP_EV_SLEEP:
        e->sleeps++;
        e->slept_ms += (long)ev->value;
        break;
    default:
        e->other++;
    }
}

T_TEST(loop_run_to_completion_with_progress)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(count_spec, NULL, 3);
    lil_loop_opts o = opts_default();
    struct events ev = {0};
    lil_loop_result res;
    lil_loop *lp;
    json_t *j;
    int total;

    T_REQUIRE(st && spec);
    o.progress = count_event;
    o.progress_ud = &ev;
    lp = open_loop(st, spec, &o);
    T_REQUIRE(lp);
    T_OK(lil_loop_run(lp, &res));
    T_EQ_STR(lil_loop_status_name(res.status), "completed");
    T_EQ_I64(lil_loop_exit_code(res.status), 0);
    T_EQ_I64(res.iteration, 3);
    T_EQ_STR(res.state_json, "{\"n\":3}");
    T_CHECK(res.reason == NULL && !res.has_next && !res.has_uncertain);
    j = result_json(&res);
    T_EQ_STR(keys_of(j), "iteration,state,status");
    json_decref(j);
    lil_loop_result_free(&res);
    /* Three iterations begin, and a fourth finds terminate true. */
    T_EQ_I64(ev.iterations, 4);
    T_EQ_I64(ev.last_iteration, 3);
    T_EQ_I64(ev.effects, 6);
    T_EQ_I64(ev.ends, 6);
    T_EQ_I64(ev.sleeps, 3);
    T_CHECK(ev.slept_ms > 0 && ev.slept_ms <= 60);
    T_EQ_I64(ev.other, 0);
    T_EQ_I64(side_count("2 b", &total), 1);
    T_CHECK(side_all_once(6));
    /* Run again: the result, nothing runs, nothing is announced. */
    memset(&ev, 0, sizeof(ev));
    T_OK(lil_loop_run(lp, &res));
    T_EQ_I64(res.status, LIL_LOOP_COMPLETED);
    lil_loop_result_free(&res);
    T_OK(lil_loop_current(lp, &res));
    T_EQ_I64(res.status, LIL_LOOP_COMPLETED);
    lil_loop_result_free(&res);
    T_EQ_I64(ev.iterations + ev.effects + ev.ends + ev.sleeps, 0);
    T_CHECK(side_all_once(6));
    T_EQ_I64(lil_loop_close(lp), LIL_OK);
    lil_spec_free(spec);
    lil_store_close(st);
}

T_TEST(loop_step_twice_on_one_handle)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(count_spec, NULL, 3);
    lil_loop_opts o = opts_default();
    lil_loop_result res;
    lil_loop *lp;
    json_t *j;

    T_REQUIRE(st && spec);
    lp = open_loop(st, spec, &o);
    T_REQUIRE(lp);
    for (int k = 1; k <= 2; k++) {
        T_OK(lil_loop_step(lp, &res));
        T_EQ_I64(res.status, LIL_LOOP_WAITING);
        T_EQ_I64(lil_loop_exit_code(res.status), 4);
        T_EQ_I64(res.iteration, k);
        T_CHECK(res.has_next);
        T_EQ_I64(res.next_iteration, k);
        T_EQ_I64(res.wake_at_ms, 0);
        j = result_json(&res);
        T_EQ_STR(keys_of(j), "iteration,next,state,status");
        T_EQ_I64(json_integer_value(
                     json_object_get(json_object_get(j, "next"), "iteration")),
                 k);
        json_decref(j);
        lil_loop_result_free(&res);
        T_CHECK(side_all_once(2 * k));
    }
    T_OK(lil_loop_run(lp, &res));
    T_EQ_I64(res.status, LIL_LOOP_COMPLETED);
    lil_loop_result_free(&res);
    T_CHECK(side_all_once(6));
    T_EQ_I64(lil_loop_close(lp), LIL_OK);
    lil_spec_free(spec);
    lil_store_close(st);
}

/* ---- a pause, run again on the same handle
 * ------------------------------------------- */

/* Every key of run id's step, intent and resolve records: none twice. */
static int journal_names_once(lil_store *st, const char *id, int *intents_00)
{
    lil_run_opts ro = {sizeof(ro), LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0};
    struct u_recs recs = {0};
    lil_run *run = NULL;
    int dup = 0;

    *intents_00 = 0;
    if (lil_run_open(st, id, &ro, &run) != LIL_OK || u_collect(run, &recs) != LIL_OK)
        dup = -1;
    for (size_t i = 0; i < recs.n; i++) {
        *intents_00 +=
            recs.r[i].type == LIL_REC_INTENT && strcmp(recs.r[i].key, "0.0") == 0;
        if (recs.r[i].type != LIL_REC_STEP && recs.r[i].type != LIL_REC_INTENT)
            continue;
        for (size_t k = i + 1; k < recs.n; k++)
            if (recs.r[k].type == recs.r[i].type &&
                strcmp(recs.r[k].key, recs.r[i].key) == 0) {
                fprintf(stderr, "record %s appears twice\n", recs.r[i].key);
                dup++;
            }
        if (strchr(recs.r[i].key, '#')) {
            fprintf(stderr, "record %s has an occurrence number\n", recs.r[i].key);
            dup++;
        }
    }
    u_recs_free(&recs);
    lil_run_close(run);
    return dup;
}

T_TEST(loop_run_again_after_a_pause)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(pause_spec, NULL, 0);
    lil_loop_opts o = opts_default();
    lil_loop_result res;
    lil_loop *lp;
    json_t *j;
    int intents;

    T_REQUIRE(st && spec);
    lp = open_loop(st, spec, &o);
    T_REQUIRE(lp);
    for (int k = 0; k < 3; k++) {
        T_OK(lil_loop_run(lp, &res));
        T_EQ_STR(lil_loop_status_name(res.status), "paused");
        T_EQ_I64(lil_loop_exit_code(res.status), 3);
        T_CONTAINS(res.reason, "go on after 0?");
        j = result_json(&res);
        T_EQ_STR(keys_of(j), "iteration,pause,reason,state,status");
        T_EQ_STR(json_string_value(json_object_get(json_object_get(j, "pause"), "id")),
                 "pause.1"); /* the same pause each time: one record */
        T_EQ_STR(json_string_value(json_object_get(j, "reason")), res.reason);
        json_decref(j);
        lil_loop_result_free(&res);
        T_EQ_I64(side_count("0 a", NULL), 1); /* replayed, not run again */
    }
    T_EQ_I64(journal_names_once(st, "pause", &intents), 0);
    T_EQ_I64(intents, 1);
    T_OK(lil_loop_approve(lp, "tester", "looks right", &res));
    T_EQ_I64(res.status, LIL_LOOP_COMPLETED);
    T_EQ_STR(res.state_json, "{\"n\":1}");
    lil_loop_result_free(&res);
    T_CHECK(side_all_once(2));
    T_EQ_I64(journal_names_once(st, "pause", &intents), 0);
    T_EQ_I64(intents, 1);
    /* Completed: there is nothing to approve. */
    T_EQ_I64(lil_loop_approve(lp, "tester", "again", &res), LIL_E_INVAL);
    T_CONTAINS(lil_loop_errmsg(lp), "not paused");
    T_EQ_I64(lil_loop_close(lp), LIL_OK);
    lil_spec_free(spec);
    lil_store_close(st);
}

T_TEST(loop_approve_refused_when_not_paused)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(count_spec, NULL, 2);
    lil_loop_opts o = opts_default();
    lil_loop_result res;
    lil_loop *lp;

    T_REQUIRE(st && spec);
    lp = open_loop(st, spec, &o);
    T_REQUIRE(lp);
    T_EQ_I64(lil_loop_approve(lp, "tester", "why not", &res), LIL_E_INVAL);
    T_CONTAINS(lil_loop_errmsg(lp), "not paused");
    T_CONTAINS(lil_errmsg(), "not paused");
    T_EQ_I64(side_count(NULL, NULL), 0); /* nothing ran */
    T_OK(lil_loop_step(lp, &res));
    lil_loop_result_free(&res);
    T_EQ_I64(lil_loop_approve(lp, "tester", "why not", &res), LIL_E_INVAL);
    T_CHECK(side_all_once(2));
    T_EQ_I64(lil_loop_close(lp), LIL_OK);
    lil_spec_free(spec);
    lil_store_close(st);
}

/* ---- stops from another thread
 * -------------------------------------------------------- */

struct stopper {
    lil_store *st;
    lil_loop *lp;
    int lines; /* act once side.txt has this many lines */
    int how;   /* 0: lil_loop_request_stop; else lil_loop_interrupt(how) */
    lil_status rc;
};

static void *stopper_main(void *ud)
{
    struct stopper *s = ud;
    int total = 0;

    for (int i = 0; i < 5000 && total < s->lines; i++) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        (void)side_count(NULL, &total);
    }
    if (s->how == 0)
        s->rc = lil_loop_request_stop(s->st, "slow", "other-thread", "enough for now");
    else
        lil_loop_interrupt(s->lp, s->how);
    return NULL;
}

static void stop_while_running(int how, lil_loop_result *res, int *lines)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(slow_spec, NULL, 40);
    lil_loop_opts o = opts_default();
    struct stopper s = {st, NULL, 3, how, LIL_OK};
    pthread_t th;
    lil_loop *lp;

    memset(res, 0, sizeof(*res));
    T_REQUIRE(st && spec);
    lp = open_loop(st, spec, &o);
    T_REQUIRE(lp);
    s.lp = lp;
    T_REQUIRE(pthread_create(&th, NULL, stopper_main, &s) == 0);
    T_OK(lil_loop_run(lp, res));
    pthread_join(th, NULL);
    T_EQ_I64(s.rc, LIL_OK);
    T_EQ_STR(lil_loop_status_name(res->status), "stopped");
    T_EQ_I64(lil_loop_exit_code(res->status), 5);
    T_CHECK(res->iteration < 40);
    (void)side_count(NULL, lines);
    T_CHECK(side_all_once(*lines));
    /* lil_loop_resume goes on from there; nothing runs twice. */
    {
        lil_loop_result more;
        T_OK(lil_loop_resume(lp, &more));
        T_EQ_I64(more.status, LIL_LOOP_COMPLETED);
        T_EQ_STR(more.state_json, "{\"n\":40}");
        lil_loop_result_free(&more);
    }
    T_CHECK(side_all_once(80));
    T_EQ_I64(lil_loop_close(lp), LIL_OK);
    lil_spec_free(spec);
    lil_store_close(st);
}

T_TEST(loop_request_stop_from_another_thread)
{
    lil_loop_result res;
    int lines = 0;

    stop_while_running(0, &res, &lines);
    /* Honoured at an iteration boundary: no half iteration. */
    T_EQ_I64(lines, 2 * res.iteration);
    T_CHECK(res.iteration >= 1);
    T_CONTAINS(res.reason, "enough for now");
    lil_loop_result_free(&res);
}

T_TEST(loop_interrupt_stop_from_another_thread)
{
    lil_loop_result res;
    int lines = 0;

    stop_while_running(LIL_LOOP_INTERRUPT_STOP, &res, &lines);
    /* After the current effect, whose outcome is journaled: the committed
     * iterations plus the effects of the one that was interrupted. */
    T_CHECK(lines >= 2 * res.iteration && lines <= 2 * res.iteration + 2);
    T_CHECK(res.reason != NULL);
    lil_loop_result_free(&res);
}

/* A child process runs the loop; its first effect kills it (kill -9
 * $PPID): the run is uncertain, with the effect in the result. */
static int run_and_die(void *ud)
{
    lil_loop_result res;
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(long_spec, ud, 0);
    lil_loop_opts o = opts_default();
    lil_loop *lp = st && spec ? open_loop(st, spec, &o) : NULL;

    if (lp)
        (void)lil_loop_run(lp, &res);
    return 3; /* not reached when the effect ran */
}

T_TEST(loop_uncertain_result_and_recovery)
{
    static char step[] =
        "a, kind: shell, cmd: \"echo start >> side.txt; kill -9 $PPID\"";
    pid_t pid;

    T_ONE_PROCESS(); /* its store is shared with another process */
    pid = u_fork(run_and_die, step);
    lil_loop_opts o = opts_default();
    lil_loop_result res;
    lil_store *st;
    lil_spec *spec;
    lil_loop *lp;
    json_t *j, *u, *zero = json_pack("{s:i}", "n", 0);

    T_REQUIRE(pid > 0);
    T_EQ_I64(u_wait(pid), 128 + 9);
    st = u_store(NULL);
    spec = spec_of(long_spec, step, 0);
    T_REQUIRE(st && spec);
    lp = open_loop(st, spec, &o);
    T_REQUIRE(lp);
    T_OK(lil_loop_current(lp, &res));
    T_EQ_STR(lil_loop_status_name(res.status), "uncertain");
    T_EQ_I64(lil_loop_exit_code(res.status), 2);
    T_CHECK(res.has_uncertain && res.reason);
    T_EQ_I64(res.uncertain_iteration, 0);
    T_EQ_I64(res.uncertain_seq, 0);
    T_EQ_STR(res.uncertain_kind, "shell");
    T_CONTAINS(res.uncertain_identity, "kill -9 $PPID");
    j = result_json(&res);
    T_EQ_STR(keys_of(j), "iteration,reason,state,status,uncertain");
    T_EQ_STR(json_string_value(json_object_get(j, "status")), "uncertain");
    T_EQ_STR(json_string_value(json_object_get(j, "reason")), res.reason);
    T_CHECK(json_equal(json_object_get(j, "state"), zero));
    u = json_object_get(j, "uncertain");
    T_EQ_STR(keys_of(u), "identity,iteration,kind,seq");
    T_EQ_I64(json_integer_value(json_object_get(u, "iteration")), 0);
    T_EQ_I64(json_integer_value(json_object_get(u, "seq")), 0);
    T_EQ_STR(json_string_value(json_object_get(u, "kind")), "shell");
    T_EQ_STR(json_string_value(json_object_get(u, "identity")), res.uncertain_identity);
    json_decref(j);
    json_decref(zero);
    lil_loop_result_free(&res);
    /* Running does not run it again; recovery needs valid JSON. */
    T_OK(lil_loop_run(lp, &res));
    T_EQ_I64(res.status, LIL_LOOP_UNCERTAIN);
    lil_loop_result_free(&res);
    T_EQ_I64(
        lil_loop_recover(lp, LIL_RESOLVE_ASSUME_DONE, "not json", "tester", "x", &res),
        LIL_E_INVAL);
    T_EQ_I64(lil_loop_recover(lp, LIL_RESOLVE_RETRY, "{}", "tester", "x", &res),
             LIL_E_INVAL);
    T_OK(lil_loop_recover(lp, LIL_RESOLVE_ASSUME_DONE, "{\"code\":0,\"stdout\":\"\"}",
                          "tester", "it ran", &res));
    T_EQ_I64(res.status, LIL_LOOP_COMPLETED);
    T_EQ_STR(res.state_json, "{\"n\":1}");
    lil_loop_result_free(&res);
    T_EQ_I64(side_count("start", NULL), 1); /* never run again */
    T_EQ_I64(side_count("0 b", NULL), 1);
    T_EQ_I64(lil_loop_close(lp), LIL_OK);
    lil_spec_free(spec);
    lil_store_close(st);
}

/* lil.h: LIL_LOOP_INTERRUPT_KILL kills the running shell effect, "its
 * outcome is not journaled, so the run is uncertain (the call returns
 * uncertain)". */
T_TEST(loop_interrupt_kill_makes_the_run_uncertain)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(
        long_spec, "a, kind: shell, cmd: \"echo start >> side.txt; sleep 30\"", 0);
    lil_loop_opts o = opts_default();
    struct stopper s = {st, NULL, 1, LIL_LOOP_INTERRUPT_KILL, LIL_OK};
    lil_loop_result res;
    pthread_t th;
    lil_loop *lp;

    T_REQUIRE(st && spec);
    lp = open_loop(st, spec, &o);
    T_REQUIRE(lp);
    s.lp = lp;
    T_REQUIRE(pthread_create(&th, NULL, stopper_main, &s) == 0);
    T_OK(lil_loop_run(lp, &res));
    pthread_join(th, NULL);
    T_EQ_STR(lil_loop_status_name(res.status), "uncertain");
    T_CHECK(res.has_uncertain);
    lil_loop_result_free(&res);
    T_EQ_I64(side_count("start", NULL), 1);
    T_EQ_I64(side_count("0 b", NULL), 0);
    T_EQ_I64(lil_loop_close(lp), LIL_OK);
    lil_spec_free(spec);
    lil_store_close(st);
}

/* ---- inputs on resume
 * ---------------------------------------------------------------- */

T_TEST(loop_inputs_that_differ_on_resume)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(count_spec, NULL, 2);
    lil_loop_opts o = opts_default();
    const char *first[1] = {"tok=alpha"}, *other[1] = {"tok=beta"};
    lil_loop_result res;
    lil_loop *lp = NULL;

    T_REQUIRE(st && spec);
    o.input_pairs = first;
    o.n_input_pairs = 1;
    lp = open_loop(st, spec, &o);
    T_REQUIRE(lp);
    T_OK(lil_loop_step(lp, &res));
    lil_loop_result_free(&res);
    T_EQ_I64(lil_loop_close(lp), LIL_OK);
    lp = NULL;
    o.input_pairs = other;
    T_EQ_I64(lil_loop_open(st, spec, &o, &lp), LIL_E_INVAL);
    T_CHECK(lp == NULL);
    T_CONTAINS(lil_store_errmsg(st), "changed since the run started");
    T_CONTAINS(lil_store_errmsg(st), "beta");
    o.input_pairs = NULL;
    o.n_input_pairs = 0;
    o.inputs_json = "{\"tok\":\"gamma\"}";
    T_EQ_I64(lil_loop_open(st, spec, &o, &lp), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(st), "gamma");
    /* The same inputs, or none: the journaled ones. */
    o.inputs_json = "{\"tok\":\"alpha\"}";
    lp = open_loop(st, spec, &o);
    T_REQUIRE(lp);
    T_EQ_I64(lil_loop_close(lp), LIL_OK);
    o.inputs_json = NULL;
    lp = open_loop(st, spec, &o);
    T_REQUIRE(lp);
    T_OK(lil_loop_run(lp, &res));
    T_EQ_I64(res.status, LIL_LOOP_COMPLETED);
    lil_loop_result_free(&res);
    T_CHECK(side_all_once(4));
    T_EQ_I64(lil_loop_close(lp), LIL_OK);
    lil_spec_free(spec);
    lil_store_close(st);
}

/* The message of a mismatch names the input (lil.h: "LIL_E_INVAL naming
 * the input") and the run once. */
T_TEST(loop_inputs_mismatch_names_the_input)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(count_spec, NULL, 2);
    lil_loop_opts o = opts_default();
    const char *first[1] = {"tok=alpha"}, *other[1] = {"tok=beta"};
    lil_loop *lp = NULL;
    const char *msg, *again;

    T_REQUIRE(st && spec);
    o.input_pairs = first;
    o.n_input_pairs = 1;
    lp = open_loop(st, spec, &o);
    T_REQUIRE(lp);
    T_EQ_I64(lil_loop_close(lp), LIL_OK);
    lp = NULL;
    o.input_pairs = other;
    T_EQ_I64(lil_loop_open(st, spec, &o, &lp), LIL_E_INVAL);
    msg = lil_store_errmsg(st);
    T_CONTAINS(msg, "input 'tok' changed since the run started");
    again = strstr(msg, "run count:");
    T_CHECK(again && !strstr(again + 1, "run count:"));
    lil_spec_free(spec);
    lil_store_close(st);
}

/* ---- a parked run -------------------------------------------------------------------
 */

T_TEST(loop_parked_result_has_wake_at)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(long_spec, "a, kind: sleep, for: 1h", 0);
    lil_loop_opts o = opts_default();
    lil_loop_result res;
    lil_loop *lp;
    json_t *j;
    int64_t now = (int64_t)time(NULL) * 1000;

    T_REQUIRE(st && spec);
    lp = open_loop(st, spec, &o);
    T_REQUIRE(lp);
    T_OK(lil_loop_run(lp, &res));
    T_EQ_STR(lil_loop_status_name(res.status), "waiting");
    T_CHECK(res.wake_at_ms > now + 3500 * 1000 && res.wake_at_ms < now + 3700 * 1000);
    T_CHECK(!res.has_next);
    j = result_json(&res);
    T_EQ_STR(keys_of(j), "iteration,state,status,wakeAt");
    T_EQ_I64(json_integer_value(json_object_get(j, "wakeAt")), res.wake_at_ms);
    T_EQ_I64(json_integer_value(json_object_get(j, "iteration")), 0);
    json_decref(j);
    lil_loop_result_free(&res);
    T_EQ_I64(side_count(NULL, NULL), 0);
    T_EQ_I64(lil_loop_close(lp), LIL_OK);
    lil_spec_free(spec);
    lil_store_close(st);
}

T_MAIN()
