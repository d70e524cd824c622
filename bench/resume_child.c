/*
 * resume_child.c -- the program bench_resume starts: a durable program
 * resuming.  It opens run argv[2] of store argv[1] with sync=full, calls
 * step "s" argv[3] times (each replays from the journal) and once more (that
 * one runs), and exits.  Exit 0 only if exactly so.  With "die" as the last
 * argument it exits without closing the run, as a process that is killed
 * once its step is durable: the next one then resumes after a crash.
 *
 *     bench_resume_child STORE RUN REPLAYED PAYLOAD_LEN [die]
 *
 * With LIL_BENCH_PHASES=FILE in the environment it also appends one line to
 * FILE: the ms from main() to the store open, the run open, the replay of
 * every journaled step, the new step, and the close (0 with "die").
 */
#define _GNU_SOURCE
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct ctx {
    const char *data;
    size_t len;
    int ran;
};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* t[0] main, t[1] store open, t[2] run open, t[3] replayed, t[4] new step,
 * t[5] closed. */
static void write_phases(const double t[6])
{
    const char *path = getenv("LIL_BENCH_PHASES");
    FILE *f = path ? fopen(path, "a") : NULL;

    if (!f)
        return;
    fprintf(f, "%.3f %.3f %.3f %.3f %.3f\n", t[1] - t[0], t[2] - t[1], t[3] - t[2],
            t[4] - t[3], t[5] - t[4]);
    fclose(f);
}

static int step_fn(lil_call *call, void *ud)
{
    struct ctx *c = ud;
    c->ran = 1;
    return lil_call_set_result(call, c->data, c->len) == LIL_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    static char payload[1 << 16];
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_run_opts opts = {.struct_size = sizeof(opts), .sync = LIL_SYNC_FULL};
    struct ctx c = {payload, 0, 0};
    unsigned long long replayed = 0, want;
    double t[6] = {now_ms(), 0, 0, 0, 0, 0};

    if (argc != 5 && !(argc == 6 && strcmp(argv[5], "die") == 0))
        return 64;
    c.len = strtoul(argv[4], NULL, 10);
    if (c.len > sizeof(payload))
        return 64;
    memset(payload, 'x', c.len);
    want = strtoull(argv[3], NULL, 10);
    if (lil_store_open(NULL, argv[1], &st) != LIL_OK ||
        (t[1] = now_ms(), lil_run_open(st, argv[2], &opts, &run)) != LIL_OK) {
        fprintf(stderr, "resume_child: open: %s\n", lil_errmsg());
        return 1;
    }
    t[2] = now_ms();
    for (unsigned long long k = 0; k <= want && !c.ran; k++) {
        if (k == want)
            t[3] = now_ms(); /* the step that runs, if the count is right */
        lil_status rc = lil_step(run, "s", step_fn, &c, NULL);
        if (rc != LIL_OK) {
            fprintf(stderr, "resume_child: step: %s\n", lil_errmsg());
            return 1;
        }
        replayed += !c.ran;
    }
    t[4] = now_ms();
    if (argc == 6) { /* die: no close, no CLOSE record */
        t[5] = t[4];
        write_phases(t);
        _exit(replayed == want && c.ran ? 0 : 3);
    }
    if (lil_run_close(run) != LIL_OK)
        return 1;
    lil_store_close(st);
    t[5] = now_ms();
    write_phases(t);
    return replayed == want && c.ran ? 0 : 3;
}
