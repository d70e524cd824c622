/*
 * cmd_worker.c -- `lil worker [--concurrency N] [--once] [--idle-exit S]
 * [--poll-ms MS] [--name NAME] [--env-allow A,B] [--json]`: claim the
 * runnable loop runs of a PostgreSQL store's queue and run them, one after
 * the other, in N threads (docs/postgres.md, "Workers").
 *
 * Each thread has a lil_worker of its own over the one store handle (a
 * store may be shared by threads; a run is one thread's): it claims a run
 * (lil_worker_next), runs it until it ends, parks, pauses, stops or is
 * uncertain, records that, and takes the next.  When nothing is runnable it
 * waits --poll-ms (default 500) and looks again: parked runs become
 * runnable when their wake time passes, so a worker is `lil tick` for many
 * machines.  An error of the claim itself (the server restarting) is
 * printed and retried at the next poll.
 *
 * Output, on stdout: one line per claim, "run R: claimed (epoch E, attempt
 * A)", and one per run handled when it leaves the worker -- completed,
 * failed, lost (fenced: its lease was taken over), or parked, paused,
 * stopped, uncertain, queued (handed back), error -- "run R: STATE at
 * iteration I (epoch E, attempt A)" and the reason or error; --json: one
 * JSON object per line (docs/schemas/worker-event.schema.json), {"event":
 * "claim", "time", "run", "epoch", "attempt", "takeover"} and {"event":
 * "end", "time", "run", "state", "status", "iteration", "epoch", "attempt",
 * "takeover", "wakeAt"?, "message"?}.  Lines are flushed as they are
 * printed; errors of the claim itself go to stderr.
 *
 * Stopping: --once (each thread takes at most one run and stops when none
 * is runnable), --idle-exit S (a thread stops after S seconds without a
 * runnable run; 0: at the first look that finds none), or SIGINT/SIGTERM:
 * the runs in progress are handed back to the queue at their next
 * iteration boundary (after the effect in flight) and the worker exits 0; a
 * second signal exits at once (128 + the signal), leaving the runs to be
 * taken over (an effect in flight then makes its run uncertain).
 *
 * Exit status: 0 when the worker stopped as asked; 1 when the store cannot
 * be opened; 64 usage, also a store directory (it keeps no queue).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define MAX_THREADS 64

struct worker_cli {
    const char *concurrency_s, *idle_s, *poll_s, *name, *env_allow;
    bool once;
    long concurrency, poll_ms;
    double idle_exit; /* seconds; < 0: never */
};

struct thread {
    const struct cli_ctx *ctx;
    const struct worker_cli *wc;
    lil_worker *w;
    pthread_t t;
};

/* ---- signals -----------------------------------------------------------------------
 */

/* Set before the handler is installed, read by it. */
static lil_worker *drainable[MAX_THREADS];
static int n_drainable;
/* Signals received: written by the handler, read by the threads (lock-free
 * atomics: safe in a handler, and between threads). */
static int signals_seen;

static bool stopping(void)
{
    return __atomic_load_n(&signals_seen, __ATOMIC_ACQUIRE) != 0;
}

static void on_signal(int sig)
{
    if (__atomic_fetch_add(&signals_seen, 1, __ATOMIC_ACQ_REL) > 0)
        _exit(128 + sig);
    for (int i = 0; i < n_drainable; i++)
        lil_worker_drain(drainable[i]);
}

/* ---- options -----------------------------------------------------------------------
 */

static int number(const struct cli_ctx *ctx, const char *flag, const char *s, double lo,
                  double hi, double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);

    if (!*s || *end || !(v >= lo && v <= hi))
        return cli_usage(ctx, "--%s must be a number from %g to %g (not '%s')", flag,
                         lo, hi, s);
    *out = v;
    return CLI_EXIT_OK;
}

static int parse(struct cli_ctx *ctx, int argc, char **argv, struct worker_cli *wc)
{
    const struct cli_flag flags[] = {
        {"concurrency", true, &wc->concurrency_s, NULL},
        {"once", false, NULL, &wc->once},
        {"idle-exit", true, &wc->idle_s, NULL},
        {"poll-ms", true, &wc->poll_s, NULL},
        {"name", true, &wc->name, NULL},
        {"env-allow", true, &wc->env_allow, NULL},
        {NULL, false, NULL, NULL},
    };
    static const char *const names[] = {NULL};
    struct cli_args a = {flags, names, NULL};
    double v = 1;
    int ex = cli_parse(ctx, argc, argv, &a);

    wc->idle_exit = -1;
    wc->concurrency = 1;
    wc->poll_ms = 500;
    if (ex == CLI_EXIT_OK && wc->concurrency_s)
        ex = number(ctx, "concurrency", wc->concurrency_s, 1, MAX_THREADS, &v);
    wc->concurrency = (long)v;
    if (ex == CLI_EXIT_OK && wc->idle_s)
        ex = number(ctx, "idle-exit", wc->idle_s, 0, 1e9, &wc->idle_exit);
    if (ex == CLI_EXIT_OK && wc->poll_s)
        ex = number(ctx, "poll-ms", wc->poll_s, 10, 3.6e6, &v);
    if (ex == CLI_EXIT_OK && wc->poll_s)
        wc->poll_ms = (long)v;
    if (ex == CLI_EXIT_OK && wc->name && !*wc->name)
        ex = cli_usage(ctx, "--name is empty");
    return ex;
}

/* ---- reporting ---------------------------------------------------------------------
 */

/* Now as "2026-12-02T14:05:00Z". */
static json_t *now_json(void)
{
    return cli_json_time(cli_now_ns(), false);
}

static void print_line(json_t *o)
{
    /* json_dumpf: what jansson allocates is the library's (lil.h, json.h) */
    if (json_dumpf(o, stdout, JSON_COMPACT) == 0)
        putchar('\n');
    json_decref(o);
}

static void print_json(const lil_worker_result *r)
{
    json_t *o = json_pack(
        "{s:s, s:o, s:s, s:s, s:I, s:I, s:i, s:b}", "event", "end", "time", now_json(),
        "run", r->run_id, "state", r->state, "iteration", (json_int_t)r->iterations,
        "epoch", (json_int_t)r->epoch, "attempt", r->attempt, "takeover", r->takeover);

    if (!o)
        return;
    cli_json_set(o, "status",
                 r->status ? json_string(lil_loop_status_name(r->status))
                           : json_null());
    if (r->wake_at_ms)
        cli_json_set(o, "wakeAt", json_integer(r->wake_at_ms));
    if (r->message[0])
        cli_json_set(o, "message", json_string(r->message));
    print_line(o);
}

/* lil_worker_opts.on_claim: the claim's line, before the run runs. */
static void report_claim(void *ud, const lil_worker_result *r)
{
    const struct cli_ctx *ctx = ((const struct thread *)ud)->ctx;
    json_t *o;

    flockfile(stdout);
    if (ctx->json) {
        o = json_pack("{s:s, s:o, s:s, s:I, s:i, s:b}", "event", "claim", "time",
                      now_json(), "run", r->run_id, "epoch", (json_int_t)r->epoch,
                      "attempt", r->attempt, "takeover", r->takeover);
        if (o)
            print_line(o);
    } else {
        printf("run %s: claimed (epoch %lld, attempt %d%s)\n", r->run_id,
               (long long)r->epoch, r->attempt,
               r->takeover ? ", taken over from a worker that died or lost it" : "");
    }
    (void)fflush(stdout);
    funlockfile(stdout);
}

static void report(const struct cli_ctx *ctx, const lil_worker_result *r)
{
    flockfile(stdout);
    if (ctx->json) {
        print_json(r);
    } else {
        printf("run %s: %s at iteration %lld (epoch %lld, attempt %d%s)", r->run_id,
               r->state, (long long)r->iterations, (long long)r->epoch, r->attempt,
               r->takeover ? ", taken over" : "");
        if (r->message[0])
            printf(": %s", r->message);
        printf("\n");
    }
    (void)fflush(stdout);
    funlockfile(stdout);
}

/* ---- the threads -------------------------------------------------------------------
 */

static double mono_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleep ms, waking early when a signal asked the worker to stop. */
static void nap(long ms)
{
    while (ms > 0 && !stopping()) {
        long now = ms < 50 ? ms : 50;
        struct timespec ts = {0, now * 1000000L};

        nanosleep(&ts, NULL);
        ms -= now;
    }
}

/* A failed claim (the server away): said once per different message. */
static void claim_failed(struct thread *th, char *last, size_t cap)
{
    const char *msg = lil_worker_errmsg(th->w);

    if (strncmp(last, msg, cap - 1) == 0)
        return;
    snprintf(last, cap, "%s", msg);
    cli_err(th->ctx, "%s (trying again)", msg);
}

static void *thread_main(void *arg)
{
    struct thread *th = arg;
    const struct worker_cli *wc = th->wc;
    double idle_since = mono_s();
    char last[256] = "";

    while (!stopping()) {
        lil_worker_result r;
        lil_status rc = lil_worker_next(th->w, &r);

        if (rc == LIL_OK) {
            report(th->ctx, &r);
            last[0] = '\0';
            idle_since = mono_s();
            if (wc->once)
                break;
            continue;
        }
        if (rc == LIL_E_DONE)
            break;
        if (rc == LIL_E_NOTFOUND) {
            last[0] = '\0';
            if (wc->once ||
                (wc->idle_exit >= 0 && mono_s() - idle_since >= wc->idle_exit))
                break;
        } else {
            claim_failed(th, last, sizeof(last));
        }
        nap(wc->poll_ms);
    }
    return NULL;
}

static int start_threads(const struct cli_ctx *ctx, lil_store *st,
                         const struct worker_cli *wc, struct thread *th)
{
    lil_worker_opts o;

    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.name = wc->name;
    o.env_allow = wc->env_allow;
    o.on_claim = report_claim;
    for (long i = 0; i < wc->concurrency; i++) {
        o.on_claim_ud = &th[i];
        th[i].ctx = ctx;
        th[i].wc = wc;
        if (lil_worker_new(st, &o, &th[i].w) != LIL_OK)
            return cli_fail(ctx, LIL_E_INVAL, "%s", lil_errmsg());
        drainable[n_drainable++] = th[i].w;
    }
    return CLI_EXIT_OK;
}

static int cmd_worker(struct cli_ctx *ctx, int argc, char **argv)
{
    static struct thread th[MAX_THREADS];
    struct worker_cli wc;
    lil_store *st = NULL;
    long started = 0;
    int ex;

    memset(&wc, 0, sizeof(wc));
    memset(th, 0, sizeof(th));
    ex = parse(ctx, argc, argv, &wc);
    if (ex == CLI_EXIT_OK)
        ex = cli_need_queue(ctx);
    if (ex == CLI_EXIT_OK)
        ex = cli_store_open(ctx, &st);
    if (ex == CLI_EXIT_OK)
        ex = start_threads(ctx, st, &wc, th);
    if (ex == CLI_EXIT_OK) {
        cli_catch_signals(on_signal);
        for (; started < wc.concurrency; started++)
            if (pthread_create(&th[started].t, NULL, thread_main, &th[started]) != 0)
                break;
        if (started == 0)
            ex = cli_fail(ctx, LIL_E_IO, "cannot start a thread");
        for (long i = 0; i < started; i++)
            pthread_join(th[i].t, NULL);
        cli_catch_signals(NULL);
    }
    n_drainable = 0;
    for (long i = 0; i < wc.concurrency; i++)
        lil_worker_free(th[i].w);
    lil_store_close(st);
    return ex == CLI_PARSE_HELP ? CLI_EXIT_OK : ex;
}

const struct cli_verb cli_verb_worker = {
    "worker", "claim and run the queued loop runs of a PostgreSQL store",
    "Usage: lil --dir postgresql://... worker [--concurrency N] [--once]\n"
    "                  [--idle-exit SECONDS] [--poll-ms MS] [--name NAME]\n"
    "                  [--env-allow A,B] [--json]\n\n"
    "Claim runnable runs of the store's queue (`lil submit`) -- queued ones, parked\n"
    "ones whose wake time has passed, and those of workers that died or lost their\n"
    "lease -- and run them, one at a time per thread, in this directory.  A run is\n"
    "held under a lease whose epoch goes up at every claim: a worker that lost it\n"
    "writes nothing more.  Paused runs wait for `lil approve`, uncertain ones for\n"
    "`lil recover`; both queue the run again.\n\n"
    "  --concurrency N   runs at once, one thread each (default 1, at most 64)\n"
    "  --once            each thread takes at most one run, and stops when none is\n"
    "                    runnable\n"
    "  --idle-exit S     stop after S seconds without a runnable run (0: at once)\n"
    "  --poll-ms MS      look for runnable runs this often when idle (default 500)\n"
    "  --name NAME       this worker's name in the queue (default: pid and host)\n"
    "  --env-allow A,B   more variables shell steps and agents see (NAME, PREFIX*)\n"
    "  --json            one JSON object per line: {\"event\": \"claim\", ...} and\n"
    "                    {\"event\": \"end\", \"state\", ...}\n\n"
    "Prints on stdout one line per claim (\"run R: claimed (epoch E, attempt A)\")\n"
    "and one when the run leaves the worker (\"run R: STATE at iteration I ...\"):\n"
    "completed, failed, lost (its lease was taken over: nothing recorded), parked,\n"
    "paused, stopped, uncertain, queued (handed back) or error.\n"
    "SIGINT/SIGTERM hand the runs in progress back at their next iteration boundary\n"
    "and exit 0; a second signal exits at once.\n"
    "Exit status: 0 stopped as asked; 1 the store cannot be opened; 64 usage, also\n"
    "a store directory (no queue).\n",
    cmd_worker};
