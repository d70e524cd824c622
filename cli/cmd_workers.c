/*
 * cmd_workers.c -- `lil workers [--dir URI] [--json]`: the `lil worker`
 * processes of a PostgreSQL store (docs/postgres.md, "Workers").
 *
 * One line per registered process (lil_workers_list): its name, live or
 * lost (no heartbeat for a lease: the process died or is cut off), host,
 * pid, threads, when it started, its last heartbeat and how long ago, and
 * the runs it claimed and holds.  Ages are the server's clock's.  --json:
 * the library's document with "store" added (docs/schemas/
 * workers.schema.json).  A store directory keeps no queue and has no
 * workers: refused before anything is opened (exit 64, as `lil worker`).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : "?";
}

static int64_t num(const json_t *o, const char *key)
{
    return (int64_t)json_integer_value(json_object_get(o, key));
}

/* "r1, r2" (printable), or "-". */
static void runs_text(const json_t *runs, char *buf, size_t cap)
{
    size_t i, n = 0;
    json_t *id;

    snprintf(buf, cap, "-");
    json_array_foreach(runs, i, id)
    {
        char one[300];
        const char *s = json_string_value(id);
        int w;

        cli_fmt_printable(s ? s : "?", s ? strlen(s) : 1, 200, one, sizeof(one));
        w = snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", one);
        if (w < 0 || (size_t)w >= cap - n)
            break;
        n += (size_t)w;
    }
}

static void print_worker(const json_t *w, int64_t now_ms)
{
    char name[200], host[100], started[40], beat[40], ago[32], runs[2000];
    const char *s = str(w, "name"), *h = str(w, "host");

    cli_fmt_printable(s, strlen(s), 60, name, sizeof(name));
    cli_fmt_printable(h, strlen(h), 40, host, sizeof(host));
    cli_fmt_iso(cli_ms_to_ns(num(w, "started_ms")), false, started, sizeof(started));
    cli_fmt_iso(cli_ms_to_ns(num(w, "heartbeat_ms")), false, beat, sizeof(beat));
    cli_fmt_ago(cli_ms_to_ns(num(w, "heartbeat_ms")), cli_ms_to_ns(now_ms), ago,
                sizeof(ago));
    runs_text(json_object_get(w, "runs"), runs, sizeof(runs));
    printf("%-24s  %-5s  %-20s %8" PRId64 " %7" PRId64 "  %-20s  %-20s %-9s  %s\n",
           name, str(w, "state"), host, num(w, "pid"), num(w, "threads"), started, beat,
           ago, runs);
}

static void print_text(lil_store *st, const json_t *doc)
{
    const json_t *workers = json_object_get(doc, "workers");
    size_t i;
    json_t *w;

    if (json_array_size(workers) == 0) {
        printf("no workers in store '%s'\n", lil_store_path(st));
        return;
    }
    printf("%-24s  %-5s  %-20s %8s %7s  %-20s  %-30s  %s\n", "WORKER", "STATE", "HOST",
           "PID", "THREADS", "STARTED", "HEARTBEAT", "RUNS");
    json_array_foreach(workers, i, w)
    {
        print_worker(w, num(doc, "now_ms"));
    }
}

static int list_workers(const struct cli_ctx *ctx, lil_store *st)
{
    lil_bytes b = {NULL, 0};
    json_t *doc = NULL;
    lil_status rc = lil_workers_list(st, &b);
    int ex = CLI_EXIT_OK;

    if (rc != LIL_OK)
        return cli_fail(ctx, rc, "%s", lil_store_errmsg(st));
    doc = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    if (!doc)
        return cli_fail(ctx, LIL_E_NOMEM, "out of memory");
    if (ctx->json) {
        cli_json_set(doc, "store",
                     cli_json_str(lil_store_path(st), strlen(lil_store_path(st))));
        return cli_json_print(ctx, doc, false);
    }
    print_text(st, doc);
    json_decref(doc);
    return ex;
}

static int cmd_workers(struct cli_ctx *ctx, int argc, char **argv)
{
    static const char *const names[] = {NULL};
    struct cli_args a = {NULL, names, NULL};
    lil_store *st = NULL;
    int ex = cli_parse(ctx, argc, argv, &a);

    if (ex == CLI_EXIT_OK)
        ex = cli_need_queue(ctx);
    if (ex == CLI_EXIT_OK)
        ex = cli_store_open(ctx, &st);
    if (ex == CLI_EXIT_OK)
        ex = list_workers(ctx, st);
    lil_store_close(st);
    return ex == CLI_PARSE_HELP ? CLI_EXIT_OK : ex;
}

const struct cli_verb cli_verb_workers = {
    "workers", "list the workers of a PostgreSQL store and the runs they hold",
    "Usage: lil --dir postgresql://... workers [--json]\n"
    "\n"
    "List the `lil worker` processes registered in the store, one line each: its\n"
    "name (--name, else \"pid P on HOST since T\"), live or lost, host, pid, threads\n"
    "(--concurrency), when it started, its last heartbeat and how long ago, and\n"
    "the runs it claimed and holds.  A worker's heartbeat is kept every third of\n"
    "its lease (LIL_PG_LEASE_MS, 30 s); one older than the lease is lost: the\n"
    "process died, is paused or is cut off from the server, and its runs go to\n"
    "the next worker that claims them.  A worker that exits removes its line; a\n"
    "lost one is dropped an hour after its last heartbeat.  Times are the\n"
    "server's clock.\n"
    "\n"
    "Flags:\n"
    "  --dir URI   the store (default $LIL_DIR): a PostgreSQL store\n"
    "  --json      {\"store\", \"now_ms\", \"workers\": [{\"name\", \"owner\", \"host\",\n"
    "              \"pid\", \"threads\", \"state\": \"live\" | \"lost\", \"started_ms\",\n"
    "              \"heartbeat_ms\", \"age_ms\", \"lease_ms\", \"runs\": [RUN...]}]}\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0 listed; 1 the store cannot be\n"
    "opened or read; 64 usage, also a store directory (it keeps no queue and has\n"
    "no workers).\n",
    cmd_workers};
