/*
 * demo.c -- lil's crash/resume demo: N durable steps, each ~100 ms of work.
 *
 *     lil_demo [-r RUN] [-d DIR] [-n STEPS] [-w WORK_MS] [-l RUNS_LOG]
 *     lil_demo -s [-r RUN] [-d DIR]        print the run's journal, read-only
 *
 * Each step k is one lil_step named "square": it sleeps WORK_MS (the
 * "work"), then records {"pid":P,"square":k*k,"step":k} as its result.  The
 * program prints one line per step:
 *
 *     step 7: ran (result {"pid":4242,"square":49,"step":7})
 *     step 3: replayed from journal (result {"pid":4241,"square":9,"step":3})
 *
 * Kill it at any moment (SIGKILL, power cut) and start it again: steps that
 * completed are replayed from the journal without running, and the run
 * continues with the first step that had not completed.  The pid inside a
 * replayed result is the pid of the process that actually ran it.
 *
 * The run-count log (-l) is the demo's own evidence, kept outside lil: the
 * step function appends "pid=P step=k" to it (one write, O_APPEND) the
 * moment it starts.  scripts/demo.sh and examples/demo_test.sh read it to
 * check that no completed step ever ran again.
 *
 * The store is DIR, else $LIL_DIR, else ./.lil; the run id is RUN, else
 * "demo".  Exit status: 0 when the run completed, 1 on any error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct demo_opts {
    const char *dir;
    const char *run_id;
    const char *log_path;
    long steps;
    long work_ms;
    int show;
};

struct step_ctx {
    long k;
    long work_ms;
    int log_fd;
    int called; /* set by square_fn: the step ran in this process */
};

static void usage(FILE *f)
{
    fprintf(f, "usage: lil_demo [-r RUN] [-d DIR] [-n STEPS] [-w WORK_MS] "
               "[-l RUNS_LOG]\n"
               "       lil_demo -s [-r RUN] [-d DIR]\n");
}

static int fail(const char *what, lil_status rc)
{
    fprintf(stderr, "lil_demo: %s: %s: %s\n", what, lil_status_name(rc), lil_errmsg());
    return 1;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Append "pid=P step=k" to the run-count log in one write. */
static void log_start(const struct step_ctx *ctx)
{
    char line[64];
    int n;

    if (ctx->log_fd < 0)
        return;
    n = snprintf(line, sizeof(line), "pid=%ld step=%ld\n", (long)getpid(), ctx->k);
    if (n > 0 && write(ctx->log_fd, line, (size_t)n) != n)
        fprintf(stderr, "lil_demo: cannot write the run-count log\n");
}

/* The step function: the "work" of step k. */
static int square_fn(lil_call *call, void *ud)
{
    struct step_ctx *ctx = ud;

    ctx->called = 1;
    log_start(ctx);
    sleep_ms(ctx->work_ms);
    if (lil_call_set_jsonf(call, "{s:i, s:i, s:i}", "step", (int)ctx->k, "square",
                           (int)(ctx->k * ctx->k), "pid", (int)getpid()) != LIL_OK) {
        lil_call_fail(call, "cannot set the result: %s", lil_errmsg());
        return 1;
    }
    return 0;
}

/* The "square" field of a step result, or -1. */
static long result_square(const lil_bytes *res)
{
    const char *p = res->data ? strstr(res->data, "\"square\":") : NULL;

    return p ? strtol(p + strlen("\"square\":"), NULL, 10) : -1;
}

static int run_steps(lil_run *run, const struct demo_opts *o, int log_fd, long *sum)
{
    for (long k = 1; k <= o->steps; k++) {
        struct step_ctx ctx = {.k = k, .work_ms = o->work_ms, .log_fd = log_fd};
        lil_bytes res;
        lil_status rc;

        /* lil calls square_fn only if step k has not completed before. */
        rc = lil_step(run, "square", square_fn, &ctx, &res);
        if (rc != LIL_OK) {
            char what[32];

            snprintf(what, sizeof(what), "step %ld", k);
            return fail(what, rc);
        }
        printf("step %ld: %s (result %s)\n", k,
               ctx.called ? "ran" : "replayed from journal", (const char *)res.data);
        *sum += result_square(&res);
        lil_free(res.data);
    }
    return 0;
}

static int finish(lil_run *run, long sum)
{
    char text[64];
    lil_bytes res;
    lil_status rc;
    int n = snprintf(text, sizeof(text), "{\"sum\":%ld}", sum);

    rc = lil_run_complete(run, text, (size_t)n);
    if (rc == LIL_E_DONE) {
        if (lil_run_result(run, &res) == LIL_OK) {
            printf("run was already completed (result %s)\n", (const char *)res.data);
            lil_free(res.data);
        }
        return 0;
    }
    if (rc != LIL_OK)
        return fail("complete", rc);
    printf("run completed: sum of squares = %ld\n", sum);
    return 0;
}

static int do_run(lil_store *st, const struct demo_opts *o)
{
    lil_run *run = NULL;
    long sum = 0;
    int log_fd = -1;
    int status;
    lil_status rc;

    if (o->log_path) {
        log_fd = open(o->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (log_fd < 0) {
            fprintf(stderr, "lil_demo: %s: %s\n", o->log_path, strerror(errno));
            return 1;
        }
    }
    rc = lil_run_open(st, o->run_id, NULL, &run);
    if (rc != LIL_OK) {
        if (log_fd >= 0)
            close(log_fd);
        return fail("open", rc);
    }
    printf("lil_demo: pid %ld, run '%s' in %s, %ld steps of %ld ms\n", (long)getpid(),
           o->run_id, lil_store_path(st), o->steps, o->work_ms);
    status = run_steps(run, o, log_fd, &sum);
    if (status == 0)
        status = finish(run, sum);
    rc = lil_run_close(run);
    if (status == 0 && rc != LIL_OK)
        status = fail("close", rc);
    if (log_fd >= 0)
        close(log_fd);
    return status;
}

/* Payload as text when printable, else as hex (an intent's SHA-256). */
static void print_payload(const unsigned char *p, size_t len)
{
    size_t shown = len > 72 ? 72 : len;
    int text = 1;

    for (size_t i = 0; i < shown; i++)
        if (p[i] < 0x20 || p[i] > 0x7e)
            text = 0;
    if (text)
        printf("%.*s", (int)shown, (const char *)p);
    else
        for (size_t i = 0; i < shown; i++)
            printf("%02x", p[i]);
    if (shown < len)
        printf("... (%zu bytes)", len);
}

static int show_record(void *ud, const lil_record *rec)
{
    (void)ud;
    printf("%4" PRIu64 "  %-11s %-10.*s ", rec->seq, lil_record_type_name(rec->type),
           (int)rec->key_len, rec->key);
    print_payload(rec->payload, rec->payload_len);
    printf("\n");
    return 0;
}

static int do_show(lil_store *st, const struct demo_opts *o)
{
    lil_run_opts ro = {.struct_size = sizeof(ro),
                       .flags = LIL_OPEN_READONLY | LIL_OPEN_EXISTING};
    lil_run_info info = {.struct_size = sizeof(info)};
    lil_run *run = NULL;
    lil_status rc;

    rc = lil_run_open(st, o->run_id, &ro, &run);
    if (rc != LIL_OK)
        return fail("open", rc);
    rc = lil_run_get_info(run, &info);
    if (rc == LIL_OK)
        printf("run '%s': %s, %" PRIu64 " records, %" PRIu64 " steps done, %" PRIu64
               " bytes\n",
               o->run_id, lil_run_state_name(info.state), info.records, info.steps_done,
               info.journal_bytes);
    if (rc == LIL_OK)
        rc = lil_run_foreach(run, show_record, NULL);
    lil_run_close(run);
    return rc == LIL_OK ? 0 : fail("show", rc);
}

static int parse_long(const char *s, long min, long *out)
{
    char *end = NULL;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > 100000)
        return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, struct demo_opts *o)
{
    int c;

    while ((c = getopt(argc, argv, "d:r:n:w:l:sh")) != -1) {
        switch (c) {
        case 'd':
            o->dir = optarg;
            break;
        case 'r':
            o->run_id = optarg;
            break;
        case 'l':
            o->log_path = optarg;
            break;
        case 's':
            o->show = 1;
            break;
        case 'n':
            if (parse_long(optarg, 1, &o->steps) != 0)
                return -1;
            break;
        case 'w':
            if (parse_long(optarg, 0, &o->work_ms) != 0)
                return -1;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return -1;
        }
    }
    return optind == argc ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct demo_opts o = {.run_id = "demo", .steps = 20, .work_ms = 100};
    lil_store *st = NULL;
    lil_status rc;
    int status;

    if (parse_args(argc, argv, &o) != 0) {
        usage(stderr);
        return 64;
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* one line at a time, even into a file */
    rc = lil_store_open(NULL, o.dir, &st);
    if (rc != LIL_OK)
        return fail("store", rc);
    status = o.show ? do_show(st, &o) : do_run(st, &o);
    lil_store_close(st);
    return status;
}
