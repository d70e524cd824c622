/*
 * bench_letitloop.c -- lil's Python package beside letitloop 0.7.0, the
 * library whose API it offers, in one run: the same workflow (N steps of a
 * 200-character result, durable at each library's default, then replayed)
 * at 1,000 and 10,000 steps (--quick: 100 and 1,000), timed by
 * bench/bench_letitloop.py, which prints the rows this forwards.
 *
 * letitloop comes from the venv of bindings/python/requirements/letitloop.txt
 * (scripts/pyenv.sh makes it, or reuses it: the package index is needed the
 * first time); lil from the source tree with the module built beside
 * lil_bench (../bindings/python/lil), as for the python group.  letitloop's
 * calls have a time budget (120 s, --quick 20 s): its write path grows with
 * the square of the steps, and a row that reached the budget says so.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"

#define LETITLOOP_REQ "bindings/python/requirements/letitloop.txt"

/* The venv's python (scripts/pyenv.sh) into out; false when it failed. */
static bool venv_python(char *out, size_t cap)
{
    char cmd[4096];
    FILE *f;
    bool ok;

    snprintf(cmd, sizeof(cmd), "bash '%s/scripts/pyenv.sh' '%s/%s'", BENCH_SOURCE_DIR,
             BENCH_SOURCE_DIR, LETITLOOP_REQ);
    f = popen(cmd, "r");
    if (!f)
        return false;
    ok = fgets(out, (int)cap, f) != NULL;
    if (pclose(f) != 0 || !ok)
        return false;
    out[strcspn(out, "\n")] = '\0';
    return out[0] != '\0';
}

/* One "ROW\twhat\tresult\ttarget" line to the table. */
static void forward_row(char *line)
{
    char *what, *result, *target, *save = NULL;

    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "ROW\t", 4) != 0)
        return;
    what = strtok_r(line + 4, "\t", &save);
    result = strtok_r(NULL, "\t", &save);
    target = strtok_r(NULL, "\t", &save);
    if (what)
        bench_row(what, result ? result : "", target ? target : "", -1);
}

static bool run_script(const struct bench_cfg *cfg, const char *py, const char *ext_dir)
{
    char cmd[20000], line[512];
    FILE *f;
    int rows = 0;

    snprintf(cmd, sizeof(cmd),
             "PYTHONPATH='%s/bindings/python' LIL_PYTHON_EXT_DIR='%s' "
             "PYTHONDONTWRITEBYTECODE=1 '%s' '%s/bench/bench_letitloop.py' --dir "
             "'%s/letitloop' --steps %s --budget %s",
             BENCH_SOURCE_DIR, ext_dir, py, BENCH_SOURCE_DIR, cfg->dir,
             cfg->quick ? "100,1000" : "1000,10000", cfg->quick ? "20" : "120");
    f = popen(cmd, "r");
    if (!f)
        return false;
    while (fgets(line, sizeof(line), f)) {
        forward_row(line);
        rows++;
    }
    return pclose(f) == 0 && rows > 0;
}

void bench_letitloop(const struct bench_cfg *cfg)
{
    char ext_dir[4096], py[4096];
    struct stat sb;

    bench_section("letitloop 0.7.0 beside lil (the same Python workflow)");
    snprintf(ext_dir, sizeof(ext_dir), "%s/../bindings/python/lil", cfg->bin_dir);
    if (stat(ext_dir, &sb) != 0) {
        bench_row("lil's Python package", "not built (no Python headers: python3-dev)",
                  "", -1);
        return;
    }
    if (!venv_python(py, sizeof(py))) {
        bench_row("letitloop 0.7.0",
                  "its venv could not be made (scripts/pyenv.sh: "
                  "is the package index reachable?)",
                  "", 0);
        return;
    }
    fprintf(stderr, "== letitloop: the same workflow in lil and letitloop 0.7.0\n");
    if (!run_script(cfg, py, ext_dir))
        bench_row("letitloop 0.7.0", "bench_letitloop.py failed", "", 0);
}
