/*
 * resume_child.c -- the program bench_resume starts: a durable program
 * resuming.  It opens run argv[2] of store argv[1] with sync=full, runs
 * step "s" until one actually executes (every earlier one replays from the
 * journal), and exits.  Exit 0 only if exactly argv[3] steps replayed.
 *
 *     bench_resume_child STORE RUN REPLAYED PAYLOAD_LEN
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lil/lil.h>

struct ctx {
    const char *data;
    size_t len;
    int ran;
};

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
    unsigned long long replayed = 0;

    if (argc != 5)
        return 64;
    c.len = strtoul(argv[4], NULL, 10);
    if (c.len > sizeof(payload))
        return 64;
    memset(payload, 'x', c.len);
    if (lil_store_open(NULL, argv[1], &st) != LIL_OK ||
        lil_run_open(st, argv[2], &opts, &run) != LIL_OK) {
        fprintf(stderr, "resume_child: open: %s\n", lil_errmsg());
        return 1;
    }
    while (!c.ran) {
        lil_status rc = lil_step(run, "s", step_fn, &c, NULL);
        if (rc != LIL_OK) {
            fprintf(stderr, "resume_child: step: %s\n", lil_errmsg());
            return 1;
        }
        replayed += !c.ran;
    }
    if (lil_run_close(run) != LIL_OK)
        return 1;
    lil_store_close(st);
    return replayed == strtoull(argv[3], NULL, 10) ? 0 : 3;
}
