/*
 * bench_langgraph.c -- LangGraph checkpointed by lil (lil.adapters.langgraph
 * LilSaver) beside langgraph-checkpoint-sqlite's SqliteSaver, on the same
 * graph and disk, in one run: the wall time of a super-step (one checkpoint
 * and one task's writes, durability "sync") and of a new saver reading the
 * latest state of a long thread (what a resumed process does first), with
 * their ratios.
 *
 * bench/bench_langgraph.py measures; it runs with the python of the venv of
 * bindings/python/requirements/langgraph.txt (scripts/pyenv.sh makes it,
 * from the package index, the first time) and the package from the source
 * tree with the module built beside lil_bench.  Without the module or the
 * venv the rows say so and nothing is measured.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "bench.h"

/* The venv's python into py (false when pyenv.sh failed). */
static bool venv_python(char *py, size_t cap)
{
    char cmd[4096];
    FILE *f;
    bool ok;

    snprintf(
        cmd, sizeof(cmd),
        "bash '%s/scripts/pyenv.sh' '%s/bindings/python/requirements/langgraph.txt'",
        BENCH_SOURCE_DIR, BENCH_SOURCE_DIR);
    f = popen(cmd, "r");
    if (!f)
        return false;
    ok = fgets(py, (int)cap, f) != NULL;
    if (pclose(f) != 0 || !ok)
        return false;
    py[strcspn(py, "\n")] = '\0';
    return py[0] != '\0';
}

/* Run bench_langgraph.py; its JSON object, or NULL when it failed. */
static json_t *run_bench(const struct bench_cfg *cfg, const char *py,
                         const char *ext_dir)
{
    char cmd[16384], line[2048];
    size_t steps = cfg->quick ? 100 : 300, history = cfg->quick ? 300 : 1000;
    json_t *out = NULL;
    FILE *f;

    snprintf(cmd, sizeof(cmd),
             "PYTHONPATH='%s/bindings/python' LIL_PYTHON_EXT_DIR='%s' "
             "PYTHONDONTWRITEBYTECODE=1 '%s' '%s/bench/bench_langgraph.py' --dir "
             "'%s/langgraph' --steps %zu --history %zu",
             BENCH_SOURCE_DIR, ext_dir, py, BENCH_SOURCE_DIR, cfg->dir, steps, history);
    f = popen(cmd, "r");
    if (!f)
        return NULL;
    if (fgets(line, sizeof(line), f))
        out = json_loads(line, 0, NULL);
    if (pclose(f) != 0 || !json_is_object(out)) {
        json_decref(out);
        return NULL;
    }
    return out;
}

static double num(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

static void langgraph_rows(const json_t *r, size_t history)
{
    char buf[200], what[120];
    double sq_step = num(r, "step_us_sqlite"), sq_resume = num(r, "resume_ms_sqlite");
    double full = num(r, "step_us_lil_full"), normal = num(r, "step_us_lil_normal");

    snprintf(buf, sizeof(buf), "%.0f µs (synchronous=%d)", sq_step,
             (int)json_integer_value(json_object_get(r, "sqlite_synchronous")));
    bench_row("LangGraph super-step, SqliteSaver", buf, "", -1);
    snprintf(buf, sizeof(buf), "%.0f µs: %.2f× SqliteSaver", full, full / sq_step);
    bench_row("LangGraph super-step, LilSaver sync=full", buf, "", -1);
    snprintf(buf, sizeof(buf), "%.0f µs: %.2f× SqliteSaver", normal, normal / sq_step);
    bench_row("LangGraph super-step, LilSaver sync=normal", buf, "", -1);
    snprintf(what, sizeof(what),
             "LangGraph resume: new saver, get_state of %zu checkpoints", history);
    snprintf(buf, sizeof(buf), "LilSaver %.1f ms, SqliteSaver %.2f ms: %.0f×",
             num(r, "resume_ms_lil_full"), sq_resume,
             num(r, "resume_ms_lil_full") / sq_resume);
    bench_row(what, buf, "", -1);
}

void bench_langgraph(const struct bench_cfg *cfg)
{
    char ext_dir[4096], py[4096];
    struct stat sb;
    json_t *r;

    bench_section("LangGraph: lil.adapters.langgraph beside SqliteSaver");
    snprintf(ext_dir, sizeof(ext_dir), "%s/../bindings/python/lil", cfg->bin_dir);
    if (stat(ext_dir, &sb) != 0) {
        bench_row("LangGraph", "not built (no Python headers: python3-dev)", "", -1);
        return;
    }
    fprintf(stderr, "== langgraph: scripts/pyenv.sh, then bench_langgraph.py\n");
    if (!venv_python(py, sizeof(py))) {
        bench_row("LangGraph", "no venv (scripts/pyenv.sh failed: see above)", "", 0);
        return;
    }
    r = run_bench(cfg, py, ext_dir);
    if (!r) {
        bench_row("LangGraph", "bench_langgraph.py failed", "", 0);
        return;
    }
    langgraph_rows(r, cfg->quick ? 300 : 1000);
    json_decref(r);
}
