/*
 * bench_spec.c -- the loop-spec front end: loading + validating a spec of
 * 1,000 steps, and evaluating a guard.
 *
 * Each is measured beside its floor on the same machine:
 *  - load: libyaml alone reading the same text event by event (no tree, no
 *    checks) -- no YAML front end can be faster than its parser;
 *  - guard: the same test written in C against the same jansson objects
 *    (two json_object_get, a compare, a strcmp) -- what a compiled guard
 *    would cost.
 * Targets (docs/performance.md): load + validate < 50 ms; the guard
 * `state.n < 10 && state.status != 'red'` >= 5 million evaluations/s.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <yaml.h>

#include "base/env.h"
#include "bench.h"
#include "lang/expr.h"

#define SPEC_STEPS 1000

/* A spec of n steps: shell steps saving into vars, guarded agent steps
 * writing counters, an http step every 50, a reduce every 100. */
static char *make_spec(size_t n, size_t *len_out)
{
    size_t cap = 256 + n * 400, len = 0;
    char *s = malloc(cap);

    if (!s)
        bench_die_errno("malloc");
#define ADD(...) len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__)
    ADD("loopspec: \"0.1\"\nid: big\npattern: react\n"
        "inputs:\n  target: { type: string, default: \"all\" }\n"
        "state:\n  vars:\n"
        "    n: { type: int, init: 0 }\n"
        "    status: { type: \"enum[red,amber,green]\", init: red }\n"
        "    code: { type: int, init: 1 }\n"
        "    items: { type: list, init: [] }\n"
        "body:\n");
    for (size_t i = 0; i < n; i++) {
        if (i % 100 == 99)
            ADD("  - id: r%zu\n    kind: reduce\n    over: \"${state.items}\"\n    as: it\n"
                "    body:\n      - { id: r%zu-x, kind: shell, cmd: \"echo ${it}\" }\n",
                i, i);
        else if (i % 50 == 49)
            ADD("  - id: h%zu\n    kind: http\n    request: { method: GET, url: "
                "\"http://127.0.0.1:8080/s/${state.n}\" }\n    save: { status: \"$.status\" }\n",
                i);
        else if (i % 2)
            ADD("  - id: a%zu\n    kind: agent\n    harness: llm\n"
                "    when: \"${state.n < 10 && state.status != 'red'}\"\n"
                "    prompt: \"step %zu of ${inputs.target}: status ${state.status}\"\n"
                "    on_done: { incr: n, append: { items: \"${state.code}\" } }\n",
                i, i);
        else
            ADD("  - id: s%zu\n    kind: shell\n    cmd: \"./check.sh %zu ${state.n}\"\n"
                "    save: { code: \"$.code\" }\n",
                i, i);
    }
    ADD("terminate: { signal: oracle, until: \"${state.code == 0 && state.status == 'green'}\" }\n"
        "caps:\n  max_iterations: 20\n  no_progress: { fingerprint: \"${state.n}\", "
        "max_repeats: 3 }\n  budget: { tokens: 100000, usd: 2, wallclock: 1h }\n");
#undef ADD
    if (len >= cap)
        bench_die("make_spec", LIL_E_TOOBIG, "spec text buffer too small");
    *len_out = len;
    return s;
}

/* libyaml alone: parse every event of the text; returns the event count. */
static size_t yaml_events(const char *text, size_t len)
{
    yaml_parser_t p;
    yaml_event_t ev;
    size_t n = 0;
    int done = 0;

    yaml_parser_initialize(&p);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (!done) {
        if (!yaml_parser_parse(&p, &ev))
            bench_die("yaml_parser_parse", LIL_E_SPEC, p.problem ? p.problem : "?");
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
        n++;
    }
    yaml_parser_delete(&p);
    return n;
}

static void bench_load(const struct bench_cfg *cfg)
{
    size_t len, reps = cfg->quick ? 10 : 40;
    char *text = make_spec(SPEC_STEPS, &len);
    double *lil_ms = calloc(reps, sizeof(double)),
           *raw_ms = calloc(reps, sizeof(double));
    struct bench_stats a, b;
    char res[160], tgt[64];

    for (size_t r = 0; r < reps; r++) {
        uint64_t t0 = bench_now_ns();
        lil_spec *spec = NULL;
        lil_status rc = lil_spec_parse(NULL, "big.yaml", text, len, NULL, &spec);

        if (rc != LIL_OK || !lil_spec_ok(spec))
            bench_die("lil_spec_parse (1000 steps)", rc,
                      spec && lil_spec_diag_count(spec)
                          ? lil_spec_diag(spec, 0)->message
                          : lil_errmsg());
        lil_spec_free(spec);
        lil_ms[r] = (double)(bench_now_ns() - t0) / 1e6;
        t0 = bench_now_ns();
        (void)yaml_events(text, len);
        raw_ms[r] = (double)(bench_now_ns() - t0) / 1e6;
    }
    a = bench_stats_of(lil_ms, reps);
    b = bench_stats_of(raw_ms, reps);
    snprintf(res, sizeof(res),
             "%.2f ms p50 (%zu KiB); libyaml events alone %.2f ms = %.1fx", a.p50,
             len >> 10, b.p50, a.p50 / b.p50);
    snprintf(tgt, sizeof(tgt), "< 50 ms");
    bench_row("load + validate, 1,000 steps", res, tgt, a.p50 < 50.0);
    free(lil_ms);
    free(raw_ms);
    free(text);
}

/* The guard in C over the same objects: the floor. */
static int native_guard(json_t *state)
{
    json_t *n = json_object_get(state, "n");
    json_t *s = json_object_get(state, "status");

    return json_number_value(n) < 10 &&
           !(json_is_string(s) && strcmp(json_string_value(s), "red") == 0);
}

static void bench_guard(const struct bench_cfg *cfg)
{
    static const char guard[] = "state.n < 10 && state.status != 'red'";
    struct lil_env env;
    struct lil_expr *e = NULL;
    struct lil_expr_err err;
    struct lil_eval ev;
    json_t *state = json_pack("{s:i, s:s, s:i}", "n", 3, "status", "amber", "code", 1);
    json_t *volatile vstate = state; /* keep the C loop from being hoisted */
    size_t iters = cfg->quick ? 2000000 : 10000000;
    uint64_t t0;
    double lil_s, native_s;
    size_t truthy = 0, native_truthy = 0;
    char res[160];

    lil__env_init(&env);
    if (lil__guard_parse(&env, guard, sizeof(guard) - 1, &e, &err) != LIL_OK)
        bench_die("lil__guard_parse", LIL_E_SPEC, err.msg);
    lil__eval_init(&ev, &env);
    ev.state = state;
    t0 = bench_cpu_ns();
    for (size_t i = 0; i < iters; i++) {
        struct lil_val v;

        lil__eval_reset(&ev);
        if (lil__expr_eval(e, &ev, &v) != LIL_OK)
            bench_die("lil__expr_eval", LIL_E_SPEC, "evaluation failed");
        truthy += lil__val_truthy(&v);
    }
    lil_s = (double)(bench_cpu_ns() - t0) / 1e9;
    t0 = bench_cpu_ns();
    for (size_t i = 0; i < iters; i++)
        native_truthy += (size_t)native_guard(vstate);
    native_s = (double)(bench_cpu_ns() - t0) / 1e9;
    if (truthy != iters || native_truthy != iters)
        bench_die("guard", LIL_E_SPEC, "the guard gave a wrong answer");
    snprintf(res, sizeof(res), "%.1fM evals/s CPU; the same test in C %.1fM/s = %.1fx",
             (double)iters / lil_s / 1e6, (double)iters / native_s / 1e6,
             lil_s / native_s);
    bench_row("guard `state.n < 10 && state.status != 'red'`", res, ">= 5M/s",
              (double)iters / lil_s >= 5e6);
    lil__eval_free(&ev);
    lil__expr_free(&env, e);
    json_decref(state);
}

void bench_spec(const struct bench_cfg *cfg)
{
    bench_section("Loop specs");
    fprintf(stderr, "loop specs: load + validate 1,000 steps, guard evaluation\n");
    bench_load(cfg);
    bench_guard(cfg);
}
