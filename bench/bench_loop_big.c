/*
 * bench_loop_big.c -- an effect whose identity is 100 KB (an agent prompt
 * of 100 KB: its note is journaled whole in a request record before a
 * small intent, engine/intent.h) beside one of 100 B (the note inline in
 * the intent), with the no-op agent harness (`harness: internal`: nothing
 * runs, so the rows are what lil adds): per iteration with sync=full (the
 * intent's fdatasync covers the request record; the outcome record also
 * holds the identity) and with sync=off (CPU: canonical JSON, redaction,
 * two SHA-256 of the identity, the appends), then the open of each run
 * with its iterations behind it (the fold of the journal).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_loop.h"

#define SPEC_FMT                                                              \
    "loopspec: \"0.1\"\nid: %s\npattern: react\n"                             \
    "inputs:\n  p: {type: string}\n"                                          \
    "state:\n  vars:\n    n: {type: int, init: 0}\n"                          \
    "body:\n  - id: s\n    kind: agent\n    harness: internal\n"              \
    "    prompt: \"${inputs.p}\"\n    on_done:\n      incr: n\n"              \
    "terminate:\n  signal: state-predicate\n  until: \"${state.n >= %zu}\"\n" \
    "caps:\n  max_iterations: %zu\n"

static lil_spec *spec_of(const char *id, size_t n)
{
    char text[1024];
    lil_spec *spec = NULL;
    lil_status rc;

    snprintf(text, sizeof(text), SPEC_FMT, id, n, 2 * n + 10);
    rc = lil_spec_parse(NULL, "bench.yaml", text, strlen(text), NULL, &spec);
    if (rc != LIL_OK)
        bench_die("lil_spec_parse", rc, lil_errmsg());
    if (!lil_spec_ok(spec))
        bench_die("the benchmark's loop spec", LIL_E_SPEC, "");
    return spec;
}

/* {"p": "abc...xyz..."}: a prompt of n bytes. */
static char *inputs_of(size_t n)
{
    char *s = malloc(n + 16);

    if (!s)
        bench_die_errno("malloc");
    memcpy(s, "{\"p\":\"", 6);
    for (size_t i = 0; i < n; i++)
        s[6 + i] = (char)('a' + i % 26);
    memcpy(s + 6 + n, "\"}", 3);
    return s;
}

static void one(lil_store *st, const char *store_dir, size_t identity, lil_sync sync,
                size_t n)
{
    char id[48], what[120], buf[160];
    char *inputs = inputs_of(identity);
    lil_spec *spec;
    struct bench_mark m0, m1;
    lil_loop_opts opts = {.struct_size = sizeof(opts), .sync = sync};
    lil_loop *lp = NULL;
    lil_status rc;

    snprintf(id, sizeof(id), "big-%zu-%s", identity,
             sync == LIL_SYNC_FULL ? "full" : "off");
    spec = spec_of(id, n);
    opts.run_id = id;
    opts.inputs_json = inputs;
    rc = lil_loop_open(st, spec, &opts, &lp);
    if (rc != LIL_OK)
        bench_die("lil_loop_open", rc, lil_store_errmsg(st));
    m0 = bench_mark_now();
    bench_loop_run_close(lp, (int64_t)n);
    m1 = bench_mark_now();
    free(inputs);
    snprintf(what, sizeof(what), "effect with a %zu-byte prompt, sync=%s (%zu it.)",
             identity, sync == LIL_SYNC_FULL ? "full" : "off", n);
    snprintf(buf, sizeof(buf), "CPU %.1f µs, wall %.1f µs per iteration",
             (double)(m1.cpu_ns - m0.cpu_ns) / 1e3 / (double)n,
             (double)(m1.wall_ns - m0.wall_ns) / 1e3 / (double)n);
    bench_row(what, buf, "", -1);
    if (sync == LIL_SYNC_OFF)
        bench_loop_open_cost(store_dir, spec, (int64_t)n);
    lil_spec_free(spec);
}

void bench_loop_big(const struct bench_cfg *cfg, lil_store *st)
{
    char store_dir[4096];
    size_t full = cfg->quick ? 30 : 100, off = cfg->quick ? 200 : 1000;

    snprintf(store_dir, sizeof(store_dir), "%s/store", cfg->dir);
    fprintf(stderr, "loop runner: effects with a 100 B and a 100 KB identity\n");
    one(st, store_dir, 100, LIL_SYNC_FULL, full);
    one(st, store_dir, 100 * 1000, LIL_SYNC_FULL, full);
    one(st, store_dir, 100, LIL_SYNC_OFF, off);
    one(st, store_dir, 100 * 1000, LIL_SYNC_OFF, off);
}
