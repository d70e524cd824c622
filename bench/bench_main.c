/*
 * bench_main.c -- lil_bench: runs every benchmark in one process, on one
 * scratch directory, and prints one markdown table (bench/run.sh builds
 * the release preset and calls this; docs/performance.md explains it).
 *
 *     lil_bench --dir DIR [--quick] [--only NAME]... [--lil PATH]
 *
 * NAME: raw, sync, bytes, resume, record, group, replay, spec, shell, loop, agent,
 * watch, pg, python, letitloop, langgraph, workers, mcp, serve (default: all).  PATH:
 * the `lil` command the loop group starts (default: the one built beside lil_bench,
 * ../cli/lil). URL: the PostgreSQL server of the pg and workers groups (bench_pg.c,
 * bench_workers.c; run.sh starts one). DIR must be on the disk under test (the raw
 * loops and the store live there) and is left with nothing in it but the stores and the
 * runs the benchmarks made (run.sh removes it).
 */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "json/json.h"

static void usage(void)
{
    fprintf(stderr,
            "usage: lil_bench --dir DIR [--quick] [--only NAME]... [--lil PATH] "
            "[--pg URL]\n");
    exit(64);
}

static void config(struct bench_cfg *cfg, bool quick)
{
    cfg->quick = quick;
    cfg->payload_len = BENCH_PAYLOAD;
    cfg->sync_steps = quick ? 300 : 2000;
    cfg->fast_steps = quick ? 50000 : 400000;
    cfg->big_steps = quick ? 100000 : 1000000;
    cfg->flat_window = quick ? 2000 : 10000;
    cfg->resume_steps = 10000;
    cfg->resume_reps = quick ? 10 : 40;
    cfg->group_seconds = quick ? 0.5 : 2.0;
    cfg->replay_reps = quick ? 1 : 3;
    cfg->shell_reps = quick ? 50 : 300;
    cfg->loop_iters = 10000;
    cfg->loop_sync_iters = quick ? 30 : 100;
    cfg->loop_flat_iters = 100000;
    cfg->loop_resume_reps = quick ? 5 : 20;
    cfg->loop_shell_iters = quick ? 50 : 300;
    cfg->agent_iters = quick ? 300 : 2000;
    cfg->agent_big_iters = quick ? 5 : 20;
}

static const char *fs_name(const char *dir)
{
    struct statfs sf;
    if (statfs(dir, &sf))
        return "?";
    switch ((unsigned long)sf.f_type) {
    case 0xEF53:
        return "ext4";
    case 0x58465342:
        return "xfs";
    case 0x9123683E:
        return "btrfs";
    case 0x01021994:
        return "tmpfs";
    case 0x794c7630:
        return "overlayfs";
    default:
        return "other";
    }
}

static void cpu_model(char *buf, size_t cap)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    snprintf(buf, cap, "?");
    while (f && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *v = strchr(line, ':');
            snprintf(buf, cap, "%s", v ? v + 2 : line);
            buf[strcspn(buf, "\n")] = 0;
            break;
        }
    }
    if (f)
        fclose(f);
}

/* Other processes on a 2-vCPU machine show in every number: say so. */
static void print_load(const char *when)
{
    char buf[128] = "?";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (!fgets(buf, sizeof(buf), f))
            snprintf(buf, sizeof(buf), "?");
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = 0;
    printf("%s: %s (/proc/loadavg)\n", when, buf);
}

static void print_header(const struct bench_cfg *cfg)
{
    char cpu[512], date[64];
    struct utsname u;
    time_t now = time(NULL);

    uname(&u);
    cpu_model(cpu, sizeof(cpu));
    strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
    printf("lil %s benchmarks, %s run, %s\n", lil_version(),
           cfg->quick ? "quick" : "full", date);
    printf("machine: %ld vCPU (%s), %s %s, scratch dir on %s\n",
           sysconf(_SC_NPROCESSORS_ONLN), cpu, u.sysname, u.release, fs_name(cfg->dir));
    print_load("load average at the start");
    printf("\n");
}

/* Was the benchmark `name` asked for (all are when none is named)? */
static bool wanted(const char *const *only, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(only[i], name) == 0)
            return true;
    }
    return n == 0;
}

int main(int argc, char **argv)
{
    struct bench_cfg cfg = {0};
    bool quick = false;
    const char *only[16];
    size_t nonly = 0;
    char exe[PATH_MAX], store_dir[PATH_MAX], lil_path[PATH_MAX];
    lil_store *st = NULL;

    /* jansson's allocations through the envs, so the memory rows count
     * them (the library itself leaves jansson's allocator alone). */
    lil__json_hooks_install();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            cfg.dir = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc && nonly < 16)
            only[nonly++] = argv[++i];
        else if (strcmp(argv[i], "--lil") == 0 && i + 1 < argc)
            cfg.lil_path = argv[++i];
        else if (strcmp(argv[i], "--pg") == 0 && i + 1 < argc)
            cfg.pg = argv[++i];
        else
            usage();
    }
    if (!cfg.dir)
        usage();
    config(&cfg, quick);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        bench_die_errno("readlink /proc/self/exe");
    exe[n] = 0;
    cfg.bin_dir = dirname(exe);
    if (!cfg.lil_path) {
        snprintf(lil_path, sizeof(lil_path), "%s/../cli/lil", cfg.bin_dir);
        cfg.lil_path = lil_path;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsetenv("LIL_SYNC");
    unsetenv("LIL_JOURNAL_KEY");
    print_header(&cfg);

    snprintf(store_dir, sizeof(store_dir), "%s/store", cfg.dir);
    lil_status rc = lil_store_open(NULL, store_dir, &st);
    if (rc != LIL_OK)
        bench_die("lil_store_open", rc, lil_errmsg());

#define WANT(name) wanted(only, nonly, name)
    if (WANT("raw"))
        bench_raw_and_full(&cfg, st);
    if (WANT("sync"))
        bench_sync_modes(&cfg, st);
    if (WANT("bytes"))
        bench_bytes(&cfg, st);
    if (WANT("resume"))
        bench_resume(&cfg, st);
    if (WANT("record"))
        bench_record(&cfg);
    if (WANT("group"))
        bench_group(&cfg, st);
    if (WANT("replay"))
        bench_flat_and_replay(&cfg, st);
    if (WANT("spec"))
        bench_spec(&cfg);
    if (WANT("shell"))
        bench_shell(&cfg);
    if (WANT("loop"))
        bench_loop(&cfg, st);
    if (WANT("agent"))
        bench_agent(&cfg);
    if (WANT("watch"))
        bench_watch(&cfg);
    if (WANT("pg"))
        bench_pg(&cfg);
    if (WANT("python"))
        bench_python(&cfg, st);
    if (WANT("letitloop"))
        bench_letitloop(&cfg);
    if (WANT("langgraph"))
        bench_langgraph(&cfg);
    if (WANT("workers"))
        bench_workers(&cfg);
    if (WANT("mcp"))
        bench_mcp(&cfg);
    if (WANT("serve"))
        bench_serve(&cfg);
#undef WANT
    lil_store_close(st);

    fprintf(stderr, "\n");
    bench_print_table();
    print_load("load average at the end");
    return 0;
}
