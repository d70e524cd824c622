/*
 * bench_loop.h -- what the loop runner's benchmarks share (bench_loop.c,
 * bench_loop_proc.c): the one-step loop spec they all run, opening and
 * running a loop run that must end as expected, and the wall and CPU
 * clocks read from the progress callback.
 *
 * The spec: one state variable n (an int from 0), a body of exactly one
 * step (its `kind` lines given by the caller) whose on_done increments n,
 * terminate when n reaches `until`, and max_iterations far above it (so
 * no cap ever trips).  Every iteration is then one effect (intent and
 * outcome records) and one snapshot: three journal records.
 *
 * A benchmark that cannot run must not print numbers: every helper exits
 * through bench_die when lil fails or a run ends otherwise than expected.
 */
#ifndef LIL_BENCH_BENCH_LOOP_H
#define LIL_BENCH_BENCH_LOOP_H

#include <stdint.h>

#include "bench.h"

/* The `kind` lines of the body's step (indented by 4 spaces). */
#define BENCH_LOOP_AGENT      "    kind: agent\n    harness: internal\n    prompt: noop\n"
#define BENCH_LOOP_SHELL      "    kind: shell\n    cmd: \"true\"\n"
#define BENCH_LOOP_SHELL_ARGV "    kind: shell\n    cmd: /bin/true\n    args: []\n"

/* The spec text (malloc'd, NUL-terminated) of loop id with the step
 * kind_lines, ending once n >= until. */
char *bench_loop_spec_text(const char *id, const char *kind_lines, int64_t until);

/* The same, parsed; it must be valid.  Release with lil_spec_free. */
lil_spec *bench_loop_spec(const char *id, const char *kind_lines, int64_t until);

/* Open loop run run_id of spec in st with the sync mode and progress
 * callback (fn may be NULL). */
lil_loop *bench_loop_open(lil_store *st, const lil_spec *spec, const char *run_id,
                          lil_sync sync, lil_loop_progress_fn fn, void *ud);

/* lil_loop_run of lp, which must complete with `iterations` committed;
 * then close it. */
void bench_loop_run_close(lil_loop *lp, int64_t iterations);

/* A row: lil_loop_open of the run of spec in the store at store_dir
 * (holding `iterations` committed iterations) in this process -- the
 * fold of its journal -- its CPU and wall time and the preads it made
 * (counted by the system-call table of bench_loop.c). */
void bench_loop_open_cost(const char *store_dir, const lil_spec *spec,
                          int64_t iterations);

/* Rows: an effect with a 100 KB identity beside one of 100 B
 * (bench_loop_big.c). */
void bench_loop_big(const struct bench_cfg *cfg, lil_store *st);

/* The two clocks at one moment. */
struct bench_mark {
    uint64_t wall_ns;
    uint64_t cpu_ns;
};

struct bench_mark bench_mark_now(void);

#endif
