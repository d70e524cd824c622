/*
 * bench.h -- shared pieces of the lil benchmarks: clock, sample statistics,
 * the workload's bytes, and the result table.
 *
 * Every benchmark measures lil beside the physical limit of the same
 * machine, in the same process run, so that the ratios printed are honest
 * (docs/performance.md explains each row).  The workload is the same
 * everywhere: a step named "s" whose result is payload_len bytes; its
 * identity is "s" the first time, then "s#2", "s#3", ... (lil.h), and the
 * raw loops write records of exactly the size lil writes for that identity
 * (format.h: 64 bytes of overhead + key + payload).
 */
#ifndef LIL_BENCH_BENCH_H
#define LIL_BENCH_BENCH_H

#include <lil/lil.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_REC_OVERHEAD 64u /* fixed header + chain, format.h */
#define BENCH_PAYLOAD      200u

struct bench_cfg {
    bool quick;
    const char *dir;     /* scratch directory on the disk under test */
    const char *bin_dir; /* where the helper programs are */
    size_t payload_len;
    /* counts (shrunk by --quick) */
    size_t sync_steps;    /* steps per fdatasync-bound loop */
    size_t fast_steps;    /* steps per sync=normal / sync=off loop */
    size_t big_steps;     /* records for replay and flat-append */
    size_t flat_window;   /* appends timed at each flat-append point */
    size_t resume_steps;  /* completed steps in the resumed run */
    size_t resume_reps;   /* processes started per resume variant */
    double group_seconds; /* duration of each group-commit point */
    size_t replay_reps;   /* open + replay repetitions (median kept) */
    size_t shell_reps;    /* runs of /bin/true per way (shell effect) */
    /* the loop runner (bench_loop.c, bench_loop_proc.c) */
    const char *lil_path;    /* the `lil` command (default: ../cli/lil) */
    size_t loop_iters;       /* iterations per overhead round */
    size_t loop_sync_iters;  /* iterations whose system calls are counted */
    size_t loop_flat_iters;  /* the long run (windows up to here) */
    size_t loop_resume_reps; /* `lil step` and `lil --version` runs each */
    size_t loop_shell_iters; /* iterations with a shell step (and bare spawns) */
    /* agent calls (bench_agent.c) */
    size_t agent_iters;     /* iterations (and bare calls) with a small reply */
    size_t agent_big_iters; /* iterations with a 1 MiB reply */
    const char *pg;         /* the PostgreSQL server (lil_bench --pg URL), or NULL */
};

struct bench_stats {
    size_t n;
    double mean;
    double p50;
    double p99;
    double min;
    double max;
};

/* Monotonic clock, ns. */
uint64_t bench_now_ns(void);

/* CPU time of the calling thread (user + system), ns.  Unlike the wall
 * clock it does not count the time slices other processes take on a busy
 * machine. */
uint64_t bench_cpu_ns(void);

/* Statistics of n samples (sorted in place). */
struct bench_stats bench_stats_of(double *samples, size_t n);

/* The samples (in time order, not yet sorted) cut into `batches` equal
 * slices: the median of the slices' means.  A mean that keeps amortized
 * costs (chunk growth, index growth) but not a burst of interference from
 * another process on a shared machine. */
double bench_batch_mean(const double *samples, size_t n, size_t batches);

/* Length of the identity of the i-th (1-based) occurrence of name. */
size_t bench_identity_len(const char *name, size_t i);

/* Write the identity of the i-th occurrence of name into buf. */
void bench_identity(char *buf, size_t cap, const char *name, size_t i);

/* A step function that sets the result to the bytes in ud (a struct
 * bench_payload) and counts how many times it was really called. */
struct bench_payload {
    const void *data;
    size_t len;
    uint64_t calls;
};

int bench_fill_fn(lil_call *call, void *ud);

/* The payload every benchmark uses (static, payload_len bytes). */
const void *bench_payload_bytes(size_t len);

/* Open (create) a run in the store with the given sync mode. */
lil_run *bench_open_run(lil_store *st, const char *id, lil_sync sync);

/* Print msg and the lil error, then exit(1): a benchmark that cannot run
 * must not print numbers. */
void bench_die(const char *what, lil_status rc, const char *msg)
    __attribute__((noreturn));
void bench_die_errno(const char *what) __attribute__((noreturn));

/* Result table.  verdict: 1 PASS, 0 MISS, -1 none (informational). */
void bench_section(const char *title);
void bench_row(const char *what, const char *result, const char *target, int verdict);
void bench_print_table(void);

/* The benchmarks (each appends its rows to the table). */
void bench_raw_and_full(const struct bench_cfg *cfg, lil_store *st);
void bench_sync_modes(const struct bench_cfg *cfg, lil_store *st);
void bench_bytes(const struct bench_cfg *cfg, lil_store *st);
void bench_flat_and_replay(const struct bench_cfg *cfg, lil_store *st);
void bench_resume(const struct bench_cfg *cfg, lil_store *st);
void bench_record(const struct bench_cfg *cfg);
void bench_group(const struct bench_cfg *cfg, lil_store *st);
void bench_spec(const struct bench_cfg *cfg);
void bench_shell(const struct bench_cfg *cfg);
void bench_loop(const struct bench_cfg *cfg, lil_store *st);
void bench_loop_resume(const struct bench_cfg *cfg, lil_store *st);
void bench_loop_shell(const struct bench_cfg *cfg, lil_store *st);
void bench_agent(const struct bench_cfg *cfg);
void bench_watch(const struct bench_cfg *cfg);
void bench_pg(const struct bench_cfg *cfg);
void bench_python(const struct bench_cfg *cfg, lil_store *st);
void bench_letitloop(const struct bench_cfg *cfg);
void bench_langgraph(const struct bench_cfg *cfg);
void bench_workers(const struct bench_cfg *cfg);
void bench_mcp(const struct bench_cfg *cfg);
void bench_serve(const struct bench_cfg *cfg);

#endif
