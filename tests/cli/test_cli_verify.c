/*
 * test_cli_verify.c -- `lil verify` and `lil score` through the binary.
 *
 * What each test proves:
 *   - a loop that terminates passes, nothing outside the temporary store
 *     is touched (its shell step's side file, the completion hook's file,
 *     the store in the working directory are never made) and the
 *     temporary store is gone afterwards ($TMPDIR is the test's);
 *   - the --json report: verdicts, the three dry runs' ends and states;
 *   - fixtures feed the effects: a shell result saved into the exit var
 *     ends the loop, an http and an agent step with an unavailable harness
 *     are answered from fixtures, an agent fixture's usage trips a token
 *     budget (failed on a cap is bounded), breakpoints are approved;
 *   - without an exit the loop ends on its cap (bounded, with a note),
 *     above 1000 iterations at the ceiling (with a note);
 *   - a sleep takes no time (the help says so); a sleep.until whose guard
 *     stays false parks the dry run: verify fails and says why;
 *   - declared inputs without defaults get sample values;
 *   - score: the scorecard of a plain spec, a perfect 100, and an exit fed
 *     by an agent downgraded with the var named;
 *   - bad input: an invalid spec, bad fixture files (not JSON, not an
 *     object, unknown keys, over 1 MiB, a NUL byte, missing) exit 1 with
 *     the path and the reason; usage errors exit 64.
 */
#include <dirent.h>
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli_util.h"
#include "t.h"

static char out[C_OUT_CAP], err[C_OUT_CAP];

/* A loop that counts: until, max_iterations and a step after the count. */
static const char *count_like(const char *until, int max, const char *more)
{
    static char buf[2048];

    snprintf(buf, sizeof(buf),
             "loopspec: \"0.1\"\n"
             "id: count\n"
             "pattern: react\n"
             "state: { vars: { n: { type: int, init: 0 } } }\n"
             "body:\n"
             "  - id: bump\n"
             "    kind: shell\n"
             "    cmd: \"echo x >> side.txt\"\n"
             "    on_done: { incr: n }\n"
             "%s"
             "terminate: { signal: state-predicate, until: \"%s\" }\n"
             "caps: { max_iterations: %d }\n",
             more, until, max);
    return buf;
}

#define COUNT_SPEC count_like("${state.n >= 3}", 10, "")
#define NAP_SPEC \
    count_like("${state.n >= 3}", 10, "  - { id: nap, kind: sleep, for: 5m }\n")
#define WAIT_SPEC                     \
    count_like("${state.n >= 3}", 10, \
               "  - { id: wait, kind: sleep, until: \"${state.n > 100}\" }\n")

/* Write text to name in the test's directory; returns its path. */
static const char *put(const char *name, const char *text)
{
    const char *p = t_path(name);
    FILE *f = fopen(p, "wb");

    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return p;
}

static bool exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0;
}

/* $TMPDIR of the binary: an empty directory of the test (the harness's
 * own $TMPDIR, kept in *saved, is put back by shared_tmp). */
static void private_tmp(char *saved, size_t cap)
{
    const char *was = getenv("TMPDIR");

    snprintf(saved, cap, "%s", was ? was : "");
    mkdir(t_path("tmp"), 0700);
    setenv("TMPDIR", t_path("tmp"), 1);
}

static void shared_tmp(const char *saved)
{
    if (*saved)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return d ? n : -1;
}

/* `lil --json verify SPEC [extra]`, parsed. */
static json_t *report(const char *spec, const char *extra, int *rc)
{
    *rc = c_lil(out, err, "--json verify '%s' %s", spec, extra ? extra : "");
    return c_json(out);
}

static const char *dry(json_t *r, const char *which, const char *key)
{
    return json_string_value(json_object_get(json_object_get(r, which), key));
}

static json_int_t dry_int(json_t *r, const char *which, const char *key)
{
    return json_integer_value(json_object_get(json_object_get(r, which), key));
}

static bool has_issue(json_t *r, const char *code)
{
    size_t i;
    json_t *is;

    json_array_foreach(json_object_get(r, "issues"), i, is)
    {
        if (strcmp(json_string_value(json_object_get(is, "code")), code) == 0)
            return true;
    }
    return false;
}

T_TEST(passes_without_touching_anything)
{
    const char *spec = put("count.yaml", COUNT_SPEC);
    char saved[4096];

    private_tmp(saved, sizeof(saved));
    T_EQ_I64(c_lil(out, err, "verify '%s'", spec), 0);
    shared_tmp(saved);
    T_CONTAINS(out, "\u2713 verify PASSED\n");
    T_CONTAINS(out,
               "  bounded: \u2713  deterministic: \u2713  resume-stable: \u2713\n");
    T_CONTAINS(out, "  dry-run ended 'completed' after 3 iteration(s) (terminate.until "
                    "held)\n");
    T_CHECK(!exists(t_path("side.txt")));
    T_CHECK(!exists(t_path(".lil")));
    T_EQ_I64(entries(t_path("tmp")), 0);
}

T_TEST(json_report)
{
    const char *spec = put("count.yaml", COUNT_SPEC);
    int rc;
    json_t *r = report(spec, NULL, &rc);

    T_EQ_I64(rc, 0);
    T_REQUIRE(r);
    T_CHECK(json_is_true(json_object_get(r, "ok")));
    T_CHECK(json_is_true(json_object_get(r, "bounded")));
    T_CHECK(json_is_true(json_object_get(r, "deterministic")));
    T_CHECK(json_is_true(json_object_get(r, "resumeStable")));
    T_CHECK(json_is_true(json_object_get(r, "terminatedNaturally")));
    T_EQ_I64(json_integer_value(json_object_get(r, "maxIterations")), 10);
    T_EQ_I64(json_array_size(json_object_get(r, "issues")), 0);
    T_EQ_STR(dry(r, "dryRun", "status"), "completed");
    T_EQ_STR(dry(r, "rerun", "status"), "completed");
    T_EQ_STR(dry(r, "stepped", "status"), "completed");
    T_EQ_I64(dry_int(r, "dryRun", "iteration"), 3);
    T_EQ_I64(dry_int(r, "stepped", "steps"), 4); /* 3 iterations, then the exit */
    T_EQ_I64(json_integer_value(json_object_get(
                 json_object_get(json_object_get(r, "dryRun"), "state"), "n")),
             3);
    T_EQ_I64(json_integer_value(json_object_get(json_object_get(r, "score"), "total")),
             79);
    json_decref(r);
}

/* The exit var is saved from the shell result: only a fixture ends it. */
static const char saved_spec[] =
    "loopspec: \"0.1\"\n"
    "id: saved\n"
    "pattern: react\n"
    "state: { vars: { done: { type: boolean, init: false }, n: { type: int, init: 0 } } "
    "}\n"
    "body:\n"
    "  - { id: probe, kind: shell, cmd: \"exit 3\", save: { done: \"$.done\" } }\n"
    "  - { id: ask, kind: breakpoint, ask: \"go on?\" }\n"
    "  - id: call\n"
    "    kind: http\n"
    "    request: { method: GET, url: \"http://127.0.0.1:9/never\" }\n"
    "  - { id: think, kind: agent, harness: claude-code, prompt: \"p\",\n"
    "      on_done: { incr: n } }\n"
    "terminate: { signal: oracle, until: \"${state.done == true}\" }\n"
    "caps: { max_iterations: 4, budget: { tokens: 25 } }\n";

T_TEST(fixtures_answer_the_effects)
{
    const char *spec = put("saved.yaml", saved_spec);
    const char *fx =
        put("fx.json", "{\"shell\": {\"done\": true}, \"http\": {\"ok\": 1}}");
    char extra[4200];
    int rc;
    json_t *r;

    snprintf(extra, sizeof(extra), "--fixtures '%s'", fx);
    r = report(spec, extra, &rc);
    T_EQ_I64(rc, 0);
    T_REQUIRE(r);
    T_EQ_STR(dry(r, "dryRun", "status"), "completed");
    T_EQ_I64(dry_int(r, "dryRun", "iteration"), 1);
    T_CHECK(json_is_true(json_object_get(json_object_get(r, "fixtures"), "shell")));
    T_CHECK(!json_is_true(json_object_get(json_object_get(r, "fixtures"), "agent")));
    json_decref(r);
}

T_TEST(agent_usage_trips_a_budget)
{
    const char *spec = put("saved.yaml", saved_spec);
    const char *fx = put("fx.json", "{\"agent\": {\"usage\": {\"tokens\": 10}}}");
    char extra[4200];
    int rc;
    json_t *r;

    snprintf(extra, sizeof(extra), "--fixtures '%s'", fx);
    r = report(spec, extra, &rc);
    T_EQ_I64(rc, 0); /* a cap is a clean end */
    T_REQUIRE(r);
    T_EQ_STR(dry(r, "dryRun", "status"), "paused"); /* on_cap_exceeded: breakpoint */
    T_EQ_STR(dry(r, "dryRun", "reason"), "token-budget");
    T_EQ_STR(dry(r, "stepped", "reason"), "token-budget");
    T_CHECK(has_issue(r, "no-natural-exit"));
    json_decref(r);
}

T_TEST(ends_on_its_cap_without_an_exit)
{
    const char *spec = put("saved.yaml", saved_spec);

    T_EQ_I64(c_lil(out, err, "verify '%s'", spec), 0);
    T_CONTAINS(out, "dry-run ended 'paused' after 4 iteration(s) (max_iterations)");
    T_CONTAINS(out, "\u2139 info: did not reach 'completed' under empty mocks (ended "
                    "'paused' via max_iterations)");
}

T_TEST(stops_at_the_ceiling)
{
    const char *spec = put("big.yaml", count_like("${state.n < 0}", 5000, ""));
    int rc;
    json_t *r = report(spec, NULL, &rc);

    T_EQ_I64(rc, 0);
    T_REQUIRE(r);
    T_CHECK(json_is_true(json_object_get(r, "clamped")));
    T_CHECK(
        json_is_true(json_object_get(json_object_get(r, "dryRun"), "ceilingReached")));
    T_EQ_I64(dry_int(r, "dryRun", "iteration"), 1000);
    T_EQ_I64(dry_int(r, "stepped", "iteration"), 1000);
    T_CHECK(has_issue(r, "verify-ceiling"));
    T_CHECK(has_issue(r, "no-natural-exit"));
    json_decref(r);
}

T_TEST(a_sleep_takes_no_time)
{
    const char *spec = put("nap.yaml", NAP_SPEC);

    T_EQ_I64(c_lil(out, err, "verify '%s'", spec), 0);
    T_CONTAINS(out, "\u2713 verify PASSED\n");
    T_CONTAINS(out, "bounded: \u2713");
}

T_TEST(the_help_says_what_a_sleep_does)
{
    T_EQ_I64(c_lil(out, err, "verify --help"), 0);
    T_CONTAINS(out, "on which every sleep is over at once");
    T_CONTAINS(out, "only a sleep.until\nwhose guard stays false");
    T_CHECK(strstr(out, "does not skip real time") == NULL);
}

T_TEST(a_sleep_until_that_stays_false_parks_the_dry_run)
{
    const char *spec = put("wait.yaml", WAIT_SPEC);

    T_EQ_I64(c_lil(out, err, "verify '%s'", spec), 1);
    T_CONTAINS(out, "\u2717 verify FAILED\n");
    T_CONTAINS(out, "bounded: \u2717");
    T_CONTAINS(out, "on a sleep.until whose guard stays false under the fixtures");
    T_CONTAINS(out, "[unbounded]");
}

T_TEST(inputs_get_sample_values)
{
    const char *spec =
        put("in.yaml",
            "loopspec: \"0.1\"\n"
            "id: inputs\n"
            "pattern: react\n"
            "inputs:\n"
            "  s: { type: string, required: true }\n"
            "  i: { type: int, required: true }\n"
            "  b: { type: boolean, required: true }\n"
            "  l: { type: list, required: true }\n"
            "  e: { type: \"enum[red,green]\", required: true }\n"
            "  d: { type: int, default: 7 }\n"
            "state: { vars: { seen: { type: json }, n: { type: int, init: 0 } } }\n"
            "body:\n"
            "  - id: look\n"
            "    kind: shell\n"
            "    cmd: \"true\"\n"
            "    on_done: { incr: n, set: { seen: \"${inputs.s + inputs.i + inputs.b + "
            "inputs.e + inputs.d}\" } }\n"
            "terminate: { signal: state-predicate, until: \"${state.n >= 1}\" }\n"
            "caps: { max_iterations: 3 }\n");
    int rc;
    json_t *r = report(spec, NULL, &rc);

    T_EQ_I64(rc, 0);
    T_REQUIRE(r);
    T_EQ_STR(json_string_value(json_object_get(
                 json_object_get(json_object_get(r, "dryRun"), "state"), "seen")),
             "x0falsered7");
    json_decref(r);
}

/* ---- score
 * --------------------------------------------------------------------------- */

T_TEST(score_of_a_plain_spec)
{
    const char *spec = put("count.yaml", COUNT_SPEC);

    T_EQ_I64(c_lil(out, err, "score '%s'", spec), 0);
    T_CONTAINS(out, "Scorecard: 79/100  (C)\n");
    T_CONTAINS(out, "  \u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2591"
                    "  termination safety  25.5/30  signal: state-predicate \u00b7 "
                    "grounding: structural\n");
    T_CONTAINS(out, "  caps                12.5/25  explicit caps");
    T_CONTAINS(out, "  observability       10.5/15  trace: journal");
    T_CONTAINS(out, "  resumability        15/15");
    T_CONTAINS(out, "  determinism         15/15");
}

T_TEST(score_of_a_perfect_spec)
{
    const char *spec = put(
        "best.yaml",
        "loopspec: \"0.1\"\n"
        "id: best\n"
        "pattern: react\n"
        "state: { vars: { code: { type: int, init: 1 }, n: { type: int, init: 0 } } }\n"
        "body:\n"
        "  - { id: test, kind: shell, cmd: \"make test\", save: { code: \"$.code\" },\n"
        "      on_done: { incr: n } }\n"
        "terminate: { signal: oracle, until: \"${state.code == 0}\" }\n"
        "caps:\n"
        "  max_iterations: 5\n"
        "  no_progress: { fingerprint: \"${state.n}\", max_repeats: 3 }\n"
        "  budget: { tokens: 1000 }\n"
        "observe:\n"
        "  hooks: { completed: { kind: shell, cmd: \"touch hooked\" } }\n");
    const char *fx = put("fx.json", "{\"shell\": {\"code\": 0}}");

    T_EQ_I64(c_lil(out, err, "score '%s' --fixtures '%s'", spec, fx), 0);
    T_CONTAINS(out, "Scorecard: 100/100  (A)\n");
    T_CHECK(!exists(t_path("hooked")));
}

T_TEST(score_downgrades_an_agent_fed_exit)
{
    const char *spec =
        put("judge.yaml",
            "loopspec: \"0.1\"\n"
            "id: judge\n"
            "pattern: react\n"
            "state: { vars: { done: { type: boolean, init: false } } }\n"
            "body:\n"
            "  - { id: w, kind: agent, harness: internal, prompt: do,\n"
            "      save: { done: \"$.done\" } }\n"
            "terminate: { signal: oracle, until: \"${state.done == true}\" }\n"
            "caps: { max_iterations: 3, on_cap_exceeded: exit-clean }\n");

    T_EQ_I64(c_lil(out, err, "score '%s'", spec), 0);
    T_CONTAINS(out, "termination safety  12/30  signal: oracle \u00b7 grounding: agent "
                    "(downgraded: exit fed by agent output [done])\n");
}

T_TEST(score_of_a_failing_verify)
{
    const char *spec = put("wait.yaml", WAIT_SPEC);

    T_EQ_I64(c_lil(out, err, "score '%s'", spec), 1);
    T_CONTAINS(out, "Scorecard: ");
    T_CONTAINS(out, "resumability");
    T_CONTAINS(out, "\u2717 verify FAILED");
    T_CONTAINS(out, "[unbounded]");
}

/* ---- bad input
 * ------------------------------------------------------------------------- */

static void bad_fixture(const char *text, const char *expect)
{
    const char *spec = put("count.yaml", COUNT_SPEC);
    const char *fx = put("bad.json", text);

    T_EQ_I64(c_lil(out, err, "verify '%s' --fixtures '%s'", spec, fx), 1);
    T_CONTAINS(err, fx);
    T_CONTAINS(err, expect);
    T_EQ_STR(out, "");
}

T_TEST(bad_fixtures)
{
    bad_fixture("{\"shell\": 1, \"bogus\": 2, \"x\": 3}",
                "unknown verification fixture key(s): bogus, x");
    bad_fixture("{\"shell\": ", "invalid verification fixture JSON");
    bad_fixture("[1, 2]", "must be a JSON object");
    bad_fixture("{\"shell\": 1, \"shell\": 2}", "invalid verification fixture JSON");
}

T_TEST(fixtures_too_large_or_odd)
{
    const char *spec = put("count.yaml", COUNT_SPEC);
    const char *fx = t_path("big.json");
    FILE *f = fopen(fx, "wb");

    T_REQUIRE(f);
    fputc('{', f);
    for (int i = 0; i < (1 << 20); i++)
        fputc(' ', f);
    fputc('}', f);
    fclose(f);
    T_EQ_I64(c_lil(out, err, "verify '%s' --fixtures '%s'", spec, fx), 1);
    T_CONTAINS(err, "larger than 1 MiB");
    f = fopen(fx, "wb");
    T_REQUIRE(f);
    fwrite("{}\0{}", 1, 5, f);
    fclose(f);
    T_EQ_I64(c_lil(out, err, "verify '%s' --fixtures '%s'", spec, fx), 1);
    T_CONTAINS(err, "NUL byte");
    T_EQ_I64(c_lil(out, err, "score '%s' --fixtures '%s'", spec, t_path("none.json")),
             1);
    T_CONTAINS(err, "cannot read --fixtures");
}

T_TEST(invalid_spec_and_usage)
{
    const char *spec = put("bad.yaml", "loopspec: \"0.1\"\nid: t\npattern: react\n");

    T_EQ_I64(c_lil(out, err, "verify '%s'", spec), 1);
    T_CONTAINS(err, "is not a valid loop spec");
    T_EQ_I64(c_lil(out, err, "score '%s'", t_path("missing.yaml")), 1);
    T_EQ_I64(c_lil(out, err, "verify"), 64);
    T_EQ_I64(c_lil(out, err, "verify a.yaml b.yaml"), 64);
    T_EQ_I64(c_lil(out, err, "score a.yaml --bogus"), 64);
    T_EQ_I64(c_lil(out, err, "verify a.yaml --fixtures"), 64);
    T_EQ_I64(c_lil(out, err, "verify --help"), 0);
    T_CONTAINS(out, "Usage: lil verify SPEC");
}

T_MAIN()
