/*
 * bench_python.c -- the Python package beside the C API, in one run: the
 * CPU time of a new step at sync=off through lil_step (here, in this
 * process) and through lil.step (bench/bench_python.py, run with python3 on
 * the same disk), their difference against the target (Python at most 15 µs
 * over C), and how fast Python replays a run (target 200,000 steps/s, the
 * open included).  The workload is the other benchmarks': step "s" with a
 * 200-byte result.
 *
 * python3 is $LIL_BENCH_PYTHON, else "python3" on PATH; the package is the
 * source tree's (bindings/python) with the module built beside lil_bench
 * (../bindings/python/lil).  Without that module (no Python headers when
 * lil was configured) the rows say so and nothing is measured.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

#define PY_TARGET_US   15.0     /* Python may add this much per step */
#define PY_TARGET_RATE 200000.0 /* replay from Python, steps/s */

/* CPU µs per new step of the C API at sync=off. */
static double c_fresh_us(lil_store *st, size_t n, size_t payload_len)
{
    struct bench_payload p = {bench_payload_bytes(payload_len), payload_len, 0};
    lil_run *run = bench_open_run(st, "py-c-fresh", LIL_SYNC_OFF);
    uint64_t c0 = bench_cpu_ns();

    for (size_t i = 0; i < n; i++) {
        lil_bytes out;
        lil_status rc = lil_step(run, "s", bench_fill_fn, &p, &out);
        if (rc != LIL_OK)
            bench_die("lil_step", rc, lil_run_errmsg(run));
        lil_free(out.data);
    }
    uint64_t cpu = bench_cpu_ns() - c0;
    lil_run_close(run);
    return (double)cpu / 1e3 / (double)n;
}

/* The number after "key": in the JSON object text, or -1. */
static double json_number(const char *text, const char *key)
{
    char pat[64];
    const char *at;

    snprintf(pat, sizeof(pat), "\"%s\": ", key);
    at = strstr(text, pat);
    return at ? strtod(at + strlen(pat), NULL) : -1.0;
}

/* Run bench_python.py; its JSON line into out (false when it failed). */
static bool run_python(const struct bench_cfg *cfg, const char *ext_dir, size_t n,
                       char *out, size_t cap)
{
    const char *py = getenv("LIL_BENCH_PYTHON");
    char cmd[8192];
    FILE *f;
    bool ok;

    snprintf(cmd, sizeof(cmd),
             "PYTHONPATH='%s/bindings/python' LIL_PYTHON_EXT_DIR='%s' "
             "PYTHONDONTWRITEBYTECODE=1 '%s' '%s/bench/bench_python.py' --dir "
             "'%s/python' --steps %zu",
             BENCH_SOURCE_DIR, ext_dir, py && *py ? py : "python3", BENCH_SOURCE_DIR,
             cfg->dir, n);
    f = popen(cmd, "r");
    if (!f)
        return false;
    ok = fgets(out, (int)cap, f) != NULL && strchr(out, '{') != NULL;
    return pclose(f) == 0 && ok;
}

static void python_rows(double c_us, const char *json, size_t n)
{
    char buf[200], what[96];
    double py_us = json_number(json, "fresh_cpu_us");
    double wall_us = json_number(json, "fresh_wall_us");
    double rate = json_number(json, "replay_steps_per_s");
    double wall_rate = json_number(json, "replay_wall_steps_per_s");
    double loop_rate = json_number(json, "replay_loop_steps_per_s");

    snprintf(buf, sizeof(buf), "%.2f µs CPU", c_us);
    bench_row("C API: new step, sync=off (lil_step)", buf, "", -1);
    snprintf(buf, sizeof(buf), "%.2f µs CPU (wall %.2f): C API + %.2f µs, %.1f×", py_us,
             wall_us, py_us - c_us, py_us / c_us);
    bench_row("Python: new step, sync=off (lil.step)", buf, "≤ C API + 15 µs",
              py_us >= 0 && py_us - c_us <= PY_TARGET_US);
    snprintf(what, sizeof(what), "Python: reopen + replay %zu steps", n);
    snprintf(buf, sizeof(buf),
             "%.2f M steps/s CPU (wall %.2f M/s; the replay loop alone %.2f M/s)",
             rate / 1e6, wall_rate / 1e6, loop_rate / 1e6);
    bench_row(what, buf, "≥ 200,000 steps/s", rate >= PY_TARGET_RATE);
}

void bench_python(const struct bench_cfg *cfg, lil_store *st)
{
    char ext_dir[4096], json[1024];
    struct stat sb;
    size_t n = cfg->fast_steps;
    double c_us;

    bench_section("Python package (lil.step) beside the C API (lil_step)");
    snprintf(ext_dir, sizeof(ext_dir), "%s/../bindings/python/lil", cfg->bin_dir);
    if (stat(ext_dir, &sb) != 0) {
        bench_row("Python package", "not built (no Python headers: python3-dev)", "",
                  -1);
        return;
    }
    fprintf(stderr, "== python: %zu steps through the C API, then bench_python.py\n",
            n);
    c_us = c_fresh_us(st, n, cfg->payload_len);
    if (!run_python(cfg, ext_dir, n, json, sizeof(json))) {
        bench_row("Python: new step, sync=off (lil.step)", "bench_python.py failed",
                  "≤ C API + 15 µs", 0);
        return;
    }
    python_rows(c_us, json, n);
}
