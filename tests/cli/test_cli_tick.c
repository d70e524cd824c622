/*
 * test_cli_tick.c -- `lil tick` through the binary, on loop runs that
 * `lil run` parked on a sleep.
 *
 * What each test proves:
 *   - nothing due (no loop runs, a plain run, a completed loop, a park
 *     whose wake time is an hour away): exit 0, nothing printed, no
 *     journal written; --json lists the park as not-due with its wakeAt;
 *   - a due park is resumed with the spec and run id it started with (two
 *     runs of one spec): the new status is printed, the iteration that
 *     parked replays its effect instead of running it again (the side
 *     file has one line per iteration), and the runs end completed;
 *   - a run that moved on after its park (`lil run` resumed it) is left
 *     alone;
 *   - a due run held by another process is skipped, exit 0;
 *   - a due run whose spec is gone is reported (exit 1) and the other due
 *     runs are still resumed; a resumed run that ends failed is exit 1;
 *   - tick runs only what it was given: a park whose spec file was edited
 *     is refused (exit 1, nothing written) until the spec is as it was; a
 *     run imported from another store is refused until an operator
 *     resumes it once by hand (imported.N, adopted.N);
 *   - a missing store is exit 1, an argument is a usage error (64).
 */
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli_util.h"
#include "t.h"

static char out[C_OUT_CAP], err[C_OUT_CAP];

/* A loop that counts to `to`, sleeping `nap` after each count. */
static const char *nap_spec(const char *name, const char *nap, int to, int max)
{
    char text[2048];
    const char *p = t_path(name);
    FILE *f;

    snprintf(
        text, sizeof(text),
        "loopspec: \"0.1\"\n"
        "id: nap\n"
        "pattern: react\n"
        "state: { vars: { n: { type: int, init: 0 } } }\n"
        "body:\n"
        "  - { id: bump, kind: shell, cmd: \"echo x >> side.txt\", on_done: { incr: n "
        "} }\n"
        "  - { id: nap, kind: sleep, for: %s }\n"
        "terminate: { signal: state-predicate, until: \"${state.n >= %d}\" }\n"
        "caps: { max_iterations: %d, on_cap_exceeded: fail }\n",
        nap, to, max);
    f = fopen(p, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return p;
}

/* `lil run SPEC [--run-id ID]`: parks (exit 4). */
static void park(const char *spec, const char *run_id)
{
    T_EQ_I64(c_lil(out, err, "--dir '%s' run '%s' %s%s", c_store(), spec,
                   run_id ? "--run-id " : "", run_id ? run_id : ""),
             4);
}

/* Sleep past a wake time ms milliseconds away. */
static void pass(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static int side_lines(void)
{
    FILE *f = fopen(t_path("side.txt"), "rb");
    int n = 0, c;

    while (f && (c = fgetc(f)) != EOF)
        n += c == '\n';
    if (f)
        fclose(f);
    return n;
}

T_TEST(nothing_due)
{
    const char *spec = nap_spec("loop.yaml", "1h", 1, 5);
    int64_t before;
    json_t *doc, *e;

    c_make_run("plain", 2, true);
    T_EQ_I64(c_lil(out, err, "--dir '%s' tick", c_store()), 0);
    T_EQ_STR(out, "");
    park(spec, NULL);
    before = c_record_count("nap");
    T_EQ_I64(c_lil(out, err, "--dir '%s' tick", c_store()), 0);
    T_EQ_STR(out, "");
    T_EQ_I64(c_record_count("nap"), before);
    T_EQ_I64(c_lil(out, err, "--json --dir '%s' tick", c_store()), 0);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_CHECK(json_integer_value(json_object_get(doc, "now")) > 0);
    T_EQ_I64(json_array_size(json_object_get(doc, "runs")), 1);
    e = json_array_get(json_object_get(doc, "runs"), 0);
    T_EQ_STR(json_string_value(json_object_get(e, "run")), "nap");
    T_EQ_STR(json_string_value(json_object_get(e, "action")), "not-due");
    T_CHECK(json_integer_value(json_object_get(e, "wakeAt")) >
            json_integer_value(json_object_get(doc, "now")) + 3000000);
    json_decref(doc);
    T_EQ_I64(c_record_count("nap"), before);
}

T_TEST(resumes_due_parks)
{
    const char *spec = nap_spec("loop.yaml", "1200ms", 1, 5);

    park(spec, NULL);
    park(spec, "second");
    T_EQ_I64(side_lines(), 2);
    pass(1300);
    T_EQ_I64(c_lil(out, err, "--dir '%s' tick", c_store()), 0);
    T_CONTAINS(out, "run 'nap': resumed, now completed at iteration 1\n");
    T_CONTAINS(out, "run 'second': resumed, now completed at iteration 1\n");
    T_EQ_I64(side_lines(), 2); /* replayed, not run again */
    T_EQ_I64(c_state("nap"), LIL_RUN_COMPLETED);
    T_EQ_I64(c_state("second"), LIL_RUN_COMPLETED);
    T_EQ_I64(c_lil(out, err, "--dir '%s' tick", c_store()), 0);
    T_EQ_STR(out, "");
}

T_TEST(parks_again_and_json)
{
    const char *spec = nap_spec("loop.yaml", "1200ms", 2, 5);
    json_t *doc, *e;

    park(spec, NULL);
    pass(1300);
    T_EQ_I64(c_lil(out, err, "--json --dir '%s' tick", c_store()), 0);
    doc = c_json(out);
    T_REQUIRE(doc);
    e = json_array_get(json_object_get(doc, "runs"), 0);
    T_EQ_STR(json_string_value(json_object_get(e, "action")), "resumed");
    T_EQ_STR(json_string_value(json_object_get(e, "status")), "waiting");
    T_EQ_I64(
        json_integer_value(json_object_get(json_object_get(e, "result"), "iteration")),
        1);
    T_CHECK(json_integer_value(
                json_object_get(json_object_get(e, "result"), "wakeAt")) > 0);
    json_decref(doc);
    T_EQ_I64(side_lines(), 2);
}

T_TEST(leaves_a_run_that_moved_on)
{
    const char *spec = nap_spec("loop.yaml", "1200ms", 1, 5);
    int64_t before;

    park(spec, NULL);
    pass(1300);
    T_EQ_I64(c_lil(out, err, "--dir '%s' run '%s'", c_store(), spec), 0); /* woke it */
    before = c_record_count("nap");
    T_EQ_I64(c_lil(out, err, "--dir '%s' tick", c_store()), 0);
    T_EQ_STR(out, "");
    T_EQ_I64(c_record_count("nap"), before);
}

T_TEST(skips_a_held_run)
{
    const char *spec = nap_spec("loop.yaml", "1200ms", 1, 5);
    pid_t holder;

    park(spec, NULL);
    pass(1300);
    holder = c_hold("nap");
    T_REQUIRE(holder > 0);
    T_EQ_I64(c_lil(out, err, "--dir '%s' tick", c_store()), 0);
    c_release(holder);
    T_CONTAINS(out, "run 'nap': held by another process, skipped\n");
    T_EQ_I64(c_lil(out, err, "--dir '%s' tick", c_store()), 0);
    T_CONTAINS(out, "run 'nap': resumed, now completed");
}

T_TEST(reports_a_lost_spec_and_goes_on)
{
    const char *gone = nap_spec("gone.yaml", "1200ms", 1, 5);
    const char *spec = nap_spec("loop.yaml", "1200ms", 1, 5);

    park(gone, "a-lost");
    park(spec, "b-kept");
    T_CHECK(unlink(gone) == 0);
    pass(1300);
    T_EQ_I64(c_lil(out, err, "--dir '%s' tick", c_store()), 1);
    T_CONTAINS(err, "lil: tick: run 'a-lost': cannot load its spec");
    T_CONTAINS(out, "run 'b-kept': resumed, now completed");
}

T_TEST(a_resumed_run_that_fails)
{
    const char *spec = nap_spec("loop.yaml", "1200ms", 5, 1);

    park(spec, NULL);
    pass(1300);
    T_EQ_I64(c_lil(out, err, "--dir '%s' tick", c_store()), 1);
    T_CONTAINS(out, "run 'nap': resumed, now failed at iteration 1 (max_iterations)\n");
}

/* The spec file edited under a parked run: the park is due, but tick
 * runs only what it was given -- refused (exit 1, nothing written, the run
 * still parked); with the spec as it was, it is resumed. */
T_TEST(an_edited_spec_is_not_ticked)
{
    int64_t before;
    json_t *doc, *e;

    park(nap_spec("loop.yaml", "1200ms", 1, 5), NULL);
    T_EQ_I64(side_lines(), 1);
    nap_spec("loop.yaml", "1200ms", 2, 5); /* terminate changed */
    pass(1300);
    before = c_record_count("nap");
    T_EQ_I64(c_lil(out, err, "--json --dir '%s' tick", c_store()), 1);
    T_CONTAINS(err, "lil: tick: run 'nap': not resumed: its spec ");
    T_CONTAINS(err, " changed (sha256 ");
    doc = c_json(out);
    T_REQUIRE(doc);
    e = json_array_get(json_object_get(doc, "runs"), 0);
    T_EQ_STR(json_string_value(json_object_get(e, "action")), "refused");
    json_decref(doc);
    T_EQ_I64(c_record_count("nap"), before);
    T_EQ_I64(side_lines(), 1);
    nap_spec("loop.yaml", "1200ms", 1, 5); /* as it was: the same digest */
    T_EQ_I64(c_lil(out, err, "--dir '%s' tick", c_store()), 0);
    T_CONTAINS(out, "run 'nap': resumed, now completed");
}

/* A parked run exported and imported into another store: its first tick
 * there refuses it (the import is journaled) until an operator resumes it
 * once by hand; the run in the store it came from ticks as before. */
T_TEST(an_imported_run_is_not_ticked)
{
    char spec[4096], other[4096];

    snprintf(spec, sizeof(spec), "%s", nap_spec("loop.yaml", "1200ms", 2, 5));
    park(spec, NULL);
    snprintf(other, sizeof(other), "%s", t_path("other"));
    T_EQ_I64(c_lil(out, err, "--dir '%s' export nap --out '%s'", c_store(),
                   t_path("nap.lil")),
             0);
    /* a file store keys its journals with a key of its own (a PostgreSQL
       store has none) */
    if (t_store_pg())
        T_EQ_I64(c_lil(out, err, "--dir '%s' import '%s'", other, t_path("nap.lil")),
                 0);
    else
        T_EQ_I64(c_lil(out, err, "--dir '%s' import '%s' --source-key '%s/journal.key'",
                       other, t_path("nap.lil"), c_store()),
                 0);
    pass(1300);
    T_EQ_I64(c_lil(out, err, "--dir '%s' tick", other), 1);
    T_CONTAINS(err, "lil: tick: run 'nap': not resumed: it was imported");
    T_EQ_I64(side_lines(), 1);
    /* the operator resumes it by hand: journaled, and tick may go on */
    T_EQ_I64(
        c_lil(out, err, "--dir '%s' resume '%s' --reason 'moved here'", other, spec),
        4);
    T_EQ_I64(c_lil(out, err, "--dir '%s' log nap --jsonl", other), 0);
    T_CONTAINS(out, "imported.");
    T_CONTAINS(out, "adopted.");
    pass(1300);
    T_EQ_I64(c_lil(out, err, "--dir '%s' tick", other), 0);
    T_CONTAINS(out, "run 'nap': resumed, now completed");
}

T_TEST(bad_input)
{
    T_EQ_I64(c_lil(out, err, "--dir '%s' tick", t_path("nostore")), 1);
    T_EQ_I64(c_lil(out, err, "--dir '%s' tick extra", c_store()), 64);
    T_EQ_I64(c_lil(out, err, "tick --bogus"), 64);
    T_EQ_I64(c_lil(out, err, "tick --help"), 0);
    T_CONTAINS(out, "Usage: lil tick");
}

T_MAIN()
