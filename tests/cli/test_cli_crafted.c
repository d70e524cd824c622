/*
 * test_cli_crafted.c -- loop journals whose records hold numbers no real run
 * writes: integers at the ends of int64, at 2^53 - 1, negative counts and
 * times, money past any budget.  Each journal is written through lil.h (a
 * real run's start record with its numbers replaced, then control records
 * and a snapshot), and every verb that reads a loop run -- ls, inspect, log,
 * check, resume -- must answer with a documented exit status, never a
 * signal (the asan preset turns any signed overflow into one).  Numbers out
 * of their range (docs/loops.md, "Records") make the run damaged, and the
 * message names the member.
 */
#include <lil/lil.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_util.h"
#include "t.h"

static char out[C_OUT_CAP], err[C_OUT_CAP];

#define SPEC                                                     \
    "loopspec: \"0.1\"\nid: crafted\npattern: react\n"           \
    "state:\n  vars:\n    n: {type: int, init: 0}\n"             \
    "body:\n  - id: s\n    kind: agent\n    harness: internal\n" \
    "    prompt: noop\n    on_done:\n      incr: n\n"            \
    "terminate:\n  signal: state-predicate\n"                    \
    "  until: \"${state.n >= 3}\"\n"                             \
    "caps:\n  max_iterations: 10\n  budget: {tokens: 1000}\n"

#define I64_MAX "9223372036854775807"
#define I64_MIN "-9223372036854775808"
#define JS_MAX  "9007199254740991"

static int fill(lil_call *call, void *ud)
{
    const char *s = ud;

    return lil_call_set_result(call, s, strlen(s)) == LIL_OK ? 0 : 1;
}

/* The spec's file, and a real run of it whose start record is the model. */
static const char *spec_path(void)
{
    const char *p = t_path("crafted.yaml");
    FILE *f = fopen(p, "w");

    if (f) {
        fputs(SPEC, f);
        fclose(f);
    }
    return p;
}

static int start_of(void *ud, const lil_record *rec)
{
    char **start = ud;

    if (rec->type == LIL_REC_STEP && rec->key_len == 4 &&
        memcmp(rec->key, "loop", 4) == 0) {
        *start = strndup(rec->payload, rec->payload_len);
        return 1;
    }
    return 0;
}

/* A real run's start record (malloc'd JSON text). */
static char *model_start(void)
{
    lil_store *st;
    lil_run *run;
    char *start = NULL;

    T_EQ_I64(c_lil(out, err, "run '%s' --run-id model --sync off --dir '%s'",
                   spec_path(), c_store()),
             0);
    st = c_open_store();
    run = c_open_run(st, "model");
    (void)lil_run_foreach(run, start_of, &start);
    lil_run_close(run);
    lil_store_close(st);
    return start;
}

/* The model's start record with member path (one or two keys) set to the
 * JSON number text v. */
static char *start_with(const char *model, const char *key, const char *sub,
                        const char *v)
{
    json_t *o = json_loads(model, 0, NULL), *num = json_loads(v, JSON_DECODE_ANY, NULL);
    json_t *at = sub ? json_object_get(o, key) : o;
    char *text;

    json_object_set_new(at, sub ? sub : key, num);
    text = calloc(1, 4096);
    if (text)
        (void)json_dumpb(o, text, 4095, JSON_COMPACT);
    json_decref(o);
    return text;
}

/* Run id: the records name=payload, in order. */
static void craft(const char *id, const char *const *recs, size_t n)
{
    lil_store *st = c_open_store();
    lil_run *run = c_open_run(st, id);

    for (size_t i = 0; i + 1 < n; i += 2)
        T_OK(lil_step(run, recs[i], fill, (char *)(uintptr_t)recs[i + 1], NULL));
    lil_run_close(run);
    lil_store_close(st);
}

static bool documented(int rc)
{
    return rc == 0 || rc == 1 || rc == 2 || rc == 3 || rc == 64;
}

/* Every reading verb, then a resume, on id: documented exits only. */
static void read_all(const char *id)
{
    static const char *const verbs[] = {"inspect", "inspect --json", "log",
                                        "log --jsonl", "check"};

    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
        int rc = c_lil(out, err, "%s '%s' --dir '%s'", verbs[i], id, c_store());
        if (!documented(rc))
            fprintf(stderr, "lil %s %s: exit %d\n%s\n", verbs[i], id, rc, err);
        T_CHECK(documented(rc));
    }
    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", c_store()), 0);
    T_EQ_I64(c_lil(out, err, "ls --json --dir '%s'", c_store()), 0);
    json_decref(c_json(out));
    T_CHECK(documented(c_lil(out, err, "resume '%s' --run-id '%s' --dir '%s'",
                             spec_path(), id, c_store())));
}

/* A start record with member key (of "caps" when sub) set to v: read
 * cleanly, and when out of range refused naming the member. */
static void start_member(const char *key, const char *sub, const char *v, bool in_range)
{
    static int n;
    char *model = model_start(), *start, id[16];

    T_REQUIRE(model);
    start = start_with(model, key, sub, v);
    snprintf(id, sizeof(id), "c1-%d", ++n);
    {
        const char *recs[] = {"loop", start};
        craft(id, recs, 2);
    }
    read_all(id);
    T_EQ_I64(c_lil(out, err, "inspect %s --json --dir '%s'", id, c_store()), 0);
    if (!in_range) {
        T_CONTAINS(out, "damaged");
        T_CONTAINS(out, sub ? sub : key);
    }
    free(start);
    free(model);
}

T_TEST(started_at_out_of_range)
{
    start_member("startedAt", NULL, I64_MIN, false);
}

T_TEST(started_at_huge)
{
    start_member("startedAt", NULL, I64_MAX, false);
}

T_TEST(started_at_last_exact)
{
    start_member("startedAt", NULL, JS_MAX, true);
}

T_TEST(caps_at_the_ends)
{
    start_member("caps", "max_iterations", I64_MAX, true);
    start_member("caps", "tokens", I64_MIN, false);
    start_member("caps", "wallclock_ms", I64_MAX, true);
}

/* A snapshot with every meter at v (and money at usd). */
static void snapshot_meters(const char *v, const char *usd, bool in_range)
{
    char *model = model_start(), snap[1024];

    T_REQUIRE(model);
    snprintf(snap, sizeof(snap),
             "{\"iteration\":%s,\"state\":{\"n\":0},\"meters\":{\"iterationBase\":%s,"
             "\"tokens\":%s,\"tokensBase\":%s,\"usd\":%s,\"usdBase\":%s,"
             "\"reservedTokens\":%s,\"reservedUsd\":%s,\"wallclockBase\":%s,"
             "\"fpResetAt\":%s,\"repeats\":%s}}",
             v, v, v, v, usd, usd, v, usd, v, v, v);
    {
        const char *recs[] = {"loop", model, "0.snap", snap};
        craft("c2", recs, 4);
    }
    read_all("c2");
    T_EQ_I64(c_lil(out, err, "inspect c2 --json --dir '%s'", c_store()), 0);
    if (!in_range)
        T_CONTAINS(out, "is not a");
    free(model);
}

T_TEST(snapshot_meters_at_int64_max)
{
    snapshot_meters(I64_MAX, "1e308", false);
}

T_TEST(snapshot_meters_negative)
{
    snapshot_meters(I64_MIN, "-1e308", false);
}

T_TEST(snapshot_meters_at_two_to_53)
{
    snapshot_meters(JS_MAX, "1e15", true);
}

/* Control records: a pause, a park, reservations and caps with numbers at
 * the ends of int64. */
T_TEST(control_records_at_the_ends)
{
    char *model = model_start();
    const char *recs[] = {
        "loop",
        model,
        "pause.1",
        "{\"iteration\":" I64_MAX ",\"seq\":" I64_MIN
        ",\"step\":\"s\",\"ask\":\"x\",\"strategy\":\"single\",\"digest\":\"d\",\"why\":\"w\"}",
        "parked.2",
        "{\"iteration\":" I64_MAX ",\"wakeAt\":" I64_MIN "}",
        "reserve.3",
        "{\"slot\":\"0.0\",\"tokens\":" I64_MAX ",\"usd\":1e308,\"limit\":" I64_MIN "}",
        "reserve.4",
        "{\"slot\":\"0.1\",\"tokens\":" I64_MAX ",\"usd\":1e308,\"limit\":" I64_MAX "}",
        "cap.5",
        "{\"reason\":\"token-budget\",\"action\":\"breakpoint\",\"iteration\":" I64_MAX
        "}",
        "cap_cleared.99999999999999999999",
        "{\"reason\":\"wallclock\",\"atIteration\":" I64_MIN ",\"at\":" I64_MIN
        ",\"actor\":\"a\",\"why\":\"w\"}",
    };

    T_REQUIRE(model);
    recs[1] = model;
    craft("c3", recs, sizeof(recs) / sizeof(recs[0]));
    read_all("c3");
    T_EQ_I64(c_lil(out, err, "inspect c3 --json --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "damaged");
    free(model);
}

/* Usage an outcome reports past its range is counted at the reservation,
 * never added as it is. */
T_TEST(usage_out_of_range_is_not_added)
{
    char *model = model_start();
    const char *recs[] = {
        "loop",
        NULL,
        "0.0",
        "{\"iteration\":0,\"seq\":0,\"kind\":\"agent\",\"step\":\"s\",\"identity\":\"x\","
        "\"result\":{},\"usage\":{\"tokens\":" I64_MAX ",\"usd\":1e308}}",
    };

    T_REQUIRE(model);
    recs[1] = model;
    craft("c4", recs, sizeof(recs) / sizeof(recs[0]));
    read_all("c4");
    T_EQ_I64(c_lil(out, err, "inspect c4 --json --dir '%s'", c_store()), 0);
    T_CHECK(strstr(out, I64_MAX) == NULL);
    free(model);
}

T_MAIN()
