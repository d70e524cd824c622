/*
 * cmd_ls.c -- `lil ls`: one line per run of the store.
 *
 * The ids are collected first (lil_store_foreach_run), then each run is
 * opened read-only (no lock, nothing written, so a run held by a live
 * process can be listed) and its lil_run_info printed.  A run that cannot
 * be opened still gets its line, with a status word that says why
 * ("locked", "damaged", "key?", "version?", "error") and the library's
 * message.  ls exits 0 whenever the store itself could be listed.
 *
 * A loop run (docs/loops.md) is read once more through loop_view_load
 * (lil_loop_facts: the runner's own fold): its line shows the loop's
 * status (paused, waiting, ...) instead of the engine's, a USAGE column
 * with the tokens and usd its meters count ("~" before tokens when some
 * were estimated, "+?" after usd when some calls were unpriced) and a last
 * column with its committed iterations and what is left of its budgets,
 * reservations counted; --json adds a "loop" object.
 *
 * A store with a queue (PostgreSQL) is asked once for it (lil_queue_list):
 * a run the queue has shows its queue state -- queued, claimed (a worker
 * holds it), parked, error -- in STATUS, a WORKER column names the worker
 * that claimed it ("(lost)" once its lease is gone), and --json adds a
 * "queue" object (null for a run that was never queued).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "loop_view.h"

/* What ls shows of a loop run. */
struct ls_loop {
    bool is_loop;
    char *id, *reason;
    char status[16]; /* loop_view.h's words */
    int64_t iterations, tokens, wake_at_ms;
    double usd;
    struct loop_view_usage usage;
    struct loop_view_budget budget;
    json_t *pause; /* what a paused run waits at (its id and digest), or NULL */
};

struct ls_row {
    char *id;
    const char *status;
    json_t *queue; /* its row of the store's queue (lil_queue_list), or NULL */
    char *reason;  /* NULL when the run opened */
    const char *code;
    lil_run_info info;
    struct ls_loop loop;
};

struct ls_list {
    struct ls_row *rows;
    size_t n, cap;
    bool oom;
    bool has_queue; /* the store keeps a queue: a WORKER column */
};

static int collect_id(void *ud, const char *run_id)
{
    struct ls_list *l = ud;
    struct ls_row *grown;

    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        grown = realloc(l->rows, cap * sizeof(*grown));
        if (!grown) {
            l->oom = true;
            return 1;
        }
        l->rows = grown;
        l->cap = cap;
    }
    memset(&l->rows[l->n], 0, sizeof(l->rows[0]));
    l->rows[l->n].id = strdup(run_id);
    if (!l->rows[l->n].id) {
        l->oom = true;
        return 1;
    }
    l->n++;
    return 0;
}

static void list_free(struct ls_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->rows[i].id);
        free(l->rows[i].reason);
        free(l->rows[i].loop.id);
        free(l->rows[i].loop.reason);
        json_decref(l->rows[i].loop.pause);
        json_decref(l->rows[i].queue);
    }
    free(l->rows);
}

/* Read the loop facts of an opened run into row->loop. */
static lil_status fill_loop(lil_store *st, lil_run *run, struct ls_row *row)
{
    struct loop_view v;
    struct ls_loop *lo = &row->loop;
    lil_status rc = loop_view_load(st, run, &row->info, 0, &v);

    if (rc != LIL_OK || !v.is_loop) {
        loop_view_free(&v);
        return rc;
    }
    lo->is_loop = true;
    snprintf(lo->status, sizeof(lo->status), "%s", v.status);
    lo->iterations = v.iterations;
    lo->tokens = v.meters.tokens;
    lo->usd = v.meters.usd;
    lo->wake_at_ms = v.wake_at_ms;
    lo->usage = v.usage;
    lo->budget = v.budget;
    lo->pause = v.paused ? json_incref(v.paused) : NULL;
    lo->id = strdup(json_string_value(json_object_get(v.start, "loopId")));
    lo->reason = v.reason ? strdup(v.reason) : NULL;
    if (!lo->id || (v.reason && !lo->reason))
        rc = LIL_E_NOMEM;
    loop_view_free(&v);
    return rc;
}

/* ---- the queue --------------------------------------------------------------- */

/* The store's queue (one query for every run) into the rows. */
static void fill_queue(lil_store *st, struct ls_list *l)
{
    lil_bytes b = {NULL, 0};
    json_t *doc = NULL, *byid = json_object(), *q;
    size_t i;

    if (lil_queue_list(st, &b) == LIL_OK)
        doc = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    l->has_queue = json_is_true(json_object_get(doc, "queue"));
    json_array_foreach(json_object_get(doc, "runs"), i, q)
    {
        const char *id = json_string_value(json_object_get(q, "run"));
        if (id && byid)
            json_object_set(byid, id, q);
    }
    for (i = 0; i < l->n; i++)
        l->rows[i].queue = json_incref(json_object_get(byid, l->rows[i].id));
    json_decref(byid);
    json_decref(doc);
}

/* The WORKER column: the worker that claimed the run, "(lost)" after it
 * when its lease is gone. */
static void worker_column(const struct ls_row *r, char *buf, size_t cap)
{
    const char *w = json_string_value(json_object_get(r->queue, "worker"));
    const char *state = json_string_value(json_object_get(r->queue, "state"));
    bool claimed = state && strcmp(state, "running") == 0;

    snprintf(buf, cap, "-");
    if (!w || !claimed)
        return;
    cli_fmt_printable(w, strlen(w), 40, buf, cap > 60 ? 60 : cap);
    if (!json_is_true(json_object_get(r->queue, "held"))) {
        size_t n = strlen(buf);
        snprintf(buf + n, cap - n, " (lost)");
    }
}

static json_t *queue_json(const json_t *q)
{
    static const char *const keys[] = {"state",    "worker",     "held",
                                       "attempts", "wake_at_ms", "error"};
    json_t *o;

    if (!q)
        return json_null();
    o = json_object();
    for (size_t i = 0; o && i < sizeof(keys) / sizeof(keys[0]); i++)
        json_object_set(o, keys[i], json_object_get(q, keys[i]));
    return o;
}

/* ---- a run ------------------------------------------------------------------- */

/* Open one run read-only and fill its row. */
static void fill_row(lil_store *st, struct ls_row *row)
{
    lil_run_opts opts = {sizeof(opts), LIL_SYNC_DEFAULT,
                         LIL_OPEN_READONLY | LIL_OPEN_EXISTING, 0};
    lil_run *run = NULL;
    bool loop_failed = false;
    lil_status rc;

    row->info.struct_size = sizeof(row->info);
    rc = lil_run_open(st, row->id, &opts, &run);
    if (rc == LIL_OK)
        rc = lil_run_get_info(run, &row->info);
    if (rc == LIL_OK) {
        rc = fill_loop(st, run, row);
        loop_failed = rc != LIL_OK;
    }
    if (rc == LIL_OK) {
        /* held and uncertain: its effect is in flight (lil_run_facts' rule) */
        row->status = row->info.state == LIL_RUN_UNCERTAIN && row->info.holder_pid
                          ? "running"
                          : lil_run_state_name(row->info.state);
        if (cli_queue_word(row->queue))
            row->status = cli_queue_word(row->queue);
    } else {
        row->status = cli_failure_word(rc);
        row->code = lil_status_name(rc);
        row->reason = strdup(rc == LIL_E_NOMEM ? "out of memory"
                             : loop_failed     ? lil_errmsg()
                             : run             ? lil_run_errmsg(run)
                                               : lil_store_errmsg(st));
    }
    lil_run_close(run);
}

static json_t *loop_json(const struct ls_loop *lo)
{
    json_t *o;

    if (!lo->is_loop)
        return json_null();
    o = json_object();
    cli_json_set(o, "id", json_string(lo->id));
    cli_json_set(o, "status", json_string(lo->status));
    cli_json_set(o, "reason", lo->reason ? json_string(lo->reason) : json_null());
    cli_json_set(o, "iterations", json_integer(lo->iterations));
    cli_json_set(o, "tokens", json_integer(lo->tokens));
    cli_json_set(o, "usd", json_real(lo->usd));
    cli_json_set(o, "estimated", json_boolean(lo->usage.estimated > 0));
    cli_json_set(o, "usage", loop_view_usage_json(&lo->usage));
    cli_json_set(o, "counted_at_reservations", loop_view_reserved_json(&lo->usage));
    cli_json_set(o, "budget", loop_view_budget_json(&lo->budget));
    cli_json_set(o, "wake_at_ms",
                 lo->wake_at_ms ? json_integer(lo->wake_at_ms) : json_null());
    cli_json_set(o, "waiting_for", lo->pause ? json_incref(lo->pause) : json_null());
    return o;
}

static json_t *row_json(const struct ls_row *r)
{
    json_t *o = json_object();
    const lil_run_info *in = &r->info;

    cli_json_set(o, "id", cli_json_str(r->id, strlen(r->id)));
    cli_json_set(o, "status", json_string(r->status));
    if (r->code) {
        json_t *err = json_object();
        cli_json_set(err, "code", json_string(r->code));
        cli_json_set(err, "message",
                     cli_json_str(r->reason ? r->reason : "",
                                  r->reason ? strlen(r->reason) : 0));
        cli_json_set(o, "error", err);
        return o;
    }
    cli_json_set(o, "records", cli_json_u64(in->records));
    cli_json_set(o, "steps_done", cli_json_u64(in->steps_done));
    cli_json_set(o, "steps_failed", cli_json_u64(in->steps_failed));
    cli_json_set(o, "journal_bytes", cli_json_u64(in->journal_bytes));
    cli_json_set(o, "created", cli_json_time(in->created_ns, false));
    cli_json_set(o, "created_ns", json_integer(in->created_ns));
    cli_json_set(o, "last_activity", cli_json_time(in->last_ns, false));
    cli_json_set(o, "last_activity_ns", json_integer(in->last_ns));
    cli_json_set(o, "holder_pid",
                 in->holder_pid ? json_integer(in->holder_pid) : json_null());
    cli_json_set(o, "loop", loop_json(&r->loop));
    cli_json_set(o, "queue", queue_json(r->queue));
    return o;
}

static int print_json(const struct cli_ctx *ctx, lil_store *st, const struct ls_list *l)
{
    json_t *doc = json_object(), *runs = json_array();

    for (size_t i = 0; i < l->n; i++)
        json_array_append_new(runs, row_json(&l->rows[i]));
    cli_json_set(doc, "store",
                 cli_json_str(lil_store_path(st), strlen(lil_store_path(st))));
    if (!runs) {
        json_decref(doc);
        return cli_json_print(ctx, NULL, false);
    }
    cli_json_set(doc, "runs", runs);
    return cli_json_print(ctx, doc, false);
}

static int id_width(const struct ls_list *l)
{
    size_t w = 3;

    for (size_t i = 0; i < l->n; i++) {
        size_t len = strlen(l->rows[i].id);
        w = len > w ? len : w;
    }
    return w > 40 ? 40 : (int)w;
}

/* What is left of the run's budgets: ", left: ~880 tok, $0.2500, 59m". */
static void budget_left(const struct ls_loop *lo, char *buf, size_t cap)
{
    const struct loop_view_budget *b = &lo->budget;
    char dur[16];
    size_t n;

    if (!b->has_tokens && !b->has_usd && !b->has_wallclock)
        return;
    n = strlen(buf);
    snprintf(buf + n, cap - n, ", left:");
    n = strlen(buf);
    if (b->has_tokens)
        snprintf(buf + n, cap - n, " %s%" PRId64 " tok", lo->usage.estimated ? "~" : "",
                 b->tokens_left);
    n = strlen(buf);
    if (b->has_usd)
        snprintf(buf + n, cap - n, " $%.4f", b->usd_left);
    n = strlen(buf);
    cli_fmt_dur((uint64_t)b->wallclock_left_ms * 1000, dur, sizeof(dur));
    if (b->has_wallclock)
        snprintf(buf + n, cap - n, " %s", dur);
}

/* What calls without an outcome hold: ", reserved: 272 tok $0.0001". */
static void budget_reserved(const struct ls_loop *lo, char *buf, size_t cap)
{
    const struct loop_view_budget *b = &lo->budget;
    size_t n = strlen(buf);

    if (b->tokens_reserved <= 0 && b->usd_reserved <= 0)
        return;
    snprintf(buf + n, cap - n, ", reserved:");
    n = strlen(buf);
    if (b->has_tokens)
        snprintf(buf + n, cap - n, " %" PRId64 " tok", b->tokens_reserved);
    n = strlen(buf);
    if (b->has_usd)
        snprintf(buf + n, cap - n, " $%.4f", b->usd_reserved);
}

/* The LOOP column: "3 iterations, left: ~880 tok $0.2500, wakes in 5m". */
static void loop_column(const struct ls_loop *lo, int64_t now, char *buf, size_t cap)
{
    size_t n;

    if (!lo->is_loop) {
        snprintf(buf, cap, "-");
        return;
    }
    snprintf(buf, cap, "%" PRId64 " iteration%s", lo->iterations,
             lo->iterations == 1 ? "" : "s");
    budget_left(lo, buf, cap);
    budget_reserved(lo, buf, cap);
    n = strlen(buf);
    if (lo->wake_at_ms) {
        char when[32];
        cli_fmt_ago(cli_ms_to_ns(lo->wake_at_ms), now, when, sizeof(when));
        snprintf(buf + n, cap - n, ", wakes %s", when);
    }
}

static void print_row(const struct ls_row *r, int w, int64_t now, bool worker)
{
    const lil_run_info *in = &r->info;
    char id[900], iso[40], ago[32], pid[16], loop[300], usage[64] = "-", who[80];
    const char *status = cli_queue_word(r->queue);

    cli_fmt_printable(r->id, strlen(r->id), LIL_RUN_ID_MAX, id, sizeof(id));
    if (r->code) {
        char why[600];
        cli_fmt_printable(r->reason, r->reason ? strlen(r->reason) : 0, 500, why,
                          sizeof(why));
        printf("%-*s  %-10s %5s %6s %8s  %-30s  %-7s  ", w, id, r->status, "-", "-",
               "-", "-", "-");
        if (worker)
            printf("%-24s  ", "-");
        printf("%-22s  %s\n", "-", why);
        return;
    }
    cli_fmt_iso(in->last_ns, false, iso, sizeof(iso));
    cli_fmt_ago(in->last_ns, now, ago, sizeof(ago));
    size_t n = strlen(iso);
    snprintf(iso + n, sizeof(iso) - n, " (%s)", ago);
    snprintf(pid, sizeof(pid), "%d", in->holder_pid);
    loop_column(&r->loop, now, loop, sizeof(loop));
    if (r->loop.is_loop)
        loop_view_fmt_usage_compact(&r->loop.usage, usage, sizeof(usage));
    if (!status)
        status = r->loop.is_loop ? r->loop.status : r->status;
    printf("%-*s  %-10s %5" PRIu64 " %6" PRIu64 " %8" PRIu64 "  %-30s  %-7s  ", w, id,
           status, in->steps_done, in->steps_failed, in->journal_bytes, iso,
           in->holder_pid ? pid : "-");
    worker_column(r, who, sizeof(who));
    if (worker)
        printf("%-24s  ", who);
    printf("%-22s  %s\n", usage, loop);
}

static void print_text(lil_store *st, const struct ls_list *l)
{
    int w = id_width(l);
    int64_t now = cli_now_ns();

    if (l->n == 0) {
        printf("no runs in store '%s'\n", lil_store_path(st));
        return;
    }
    printf("%-*s  %-10s %5s %6s %8s  %-30s  %-7s  ", w, "RUN", "STATUS", "DONE",
           "FAILED", "BYTES", "LAST ACTIVITY", "PID");
    if (l->has_queue)
        printf("%-24s  ", "WORKER");
    printf("%-22s  %s\n", "USAGE", "LOOP");
    for (size_t i = 0; i < l->n; i++)
        print_row(&l->rows[i], w, now, l->has_queue);
}

static int list_runs(const struct cli_ctx *ctx, lil_store *st)
{
    struct ls_list l = {NULL, 0, 0, false, false};
    lil_status rc = lil_store_foreach_run(st, collect_id, &l);
    int ret = CLI_EXIT_OK;

    if (rc != LIL_OK || l.oom) {
        list_free(&l);
        if (rc != LIL_OK)
            return cli_fail(ctx, rc, "%s", lil_store_errmsg(st));
        cli_err(ctx, "out of memory");
        return CLI_EXIT_FAIL;
    }
    fill_queue(st, &l);
    for (size_t i = 0; i < l.n; i++)
        fill_row(st, &l.rows[i]);
    if (ctx->json)
        ret = print_json(ctx, st, &l);
    else
        print_text(st, &l);
    list_free(&l);
    return ret;
}

static int cmd_ls(struct cli_ctx *ctx, int argc, char **argv)
{
    static const char *const names[] = {NULL};
    struct cli_args a = {NULL, names, NULL};
    lil_store *st = NULL;
    int rc = cli_parse(ctx, argc, argv, &a);

    if (rc != CLI_EXIT_OK)
        return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    rc = cli_store_open(ctx, &st);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = list_runs(ctx, st);
    lil_store_close(st);
    return rc;
}

const struct cli_verb cli_verb_ls = {
    "ls",
    "list the runs of the store",
    "Usage: lil ls [--dir DIR] [--json]\n"
    "\n"
    "List the runs of the store, one line each: id, status, steps done, steps\n"
    "failed, journal bytes, last activity (UTC and how long ago), the pid of\n"
    "the process holding the run, if any, and for a loop run the tokens and usd\n"
    "of its agent calls (USAGE: \"~\" before estimated tokens, \"+?\" after usd\n"
    "when some calls were unpriced), its committed iterations, what is left\n"
    "of its budgets and what calls without an outcome hold reserved, as the\n"
    "runner counts them.  Runs are opened read-only: ls takes no lock and\n"
    "writes nothing, so it works while runs are being written.\n"
    "\n"
    "The status of a loop run is the loop's: completed, failed, uncertain,\n"
    "paused, waiting, stopped, running while a process holds it, or damaged\n"
    "when its journal holds records the runner never writes.\n"
    "\n"
    "On a PostgreSQL store, a run of the queue (`lil submit`) shows its queue\n"
    "state while the queue has it: queued, claimed (a worker holds it), parked\n"
    "(a worker claims it at its wake time) or error (a worker could not run it);\n"
    "a WORKER column names the worker that claimed it, \"(lost)\" after the name\n"
    "once that worker's lease is gone (`lil workers`).\n"
    "\n"
    "A run that cannot be opened is listed with the reason and the status\n"
    "locked, damaged (see `lil check`), key? (LIL_JOURNAL_KEY missing or\n"
    "wrong), version? (written by a newer lil), unborn (no complete record:\n"
    "its creation was cut short; the next writable open starts it) or error.\n"
    "\n"
    "Flags:\n"
    "  --dir DIR   store directory (default: $LIL_DIR, else .lil)\n"
    "  --json      {\"store\": DIR, \"runs\": [{\"id\", \"status\", \"records\",\n"
    "              \"steps_done\", \"steps_failed\", \"journal_bytes\", \"created\",\n"
    "              \"last_activity\", \"holder_pid\", \"loop\": null or {\"id\",\n"
    "              \"status\", \"reason\", \"iterations\", \"tokens\", \"usd\",\n"
    "              \"estimated\", \"usage\", \"counted_at_reservations\",\n"
    "              \"budget\", \"wake_at_ms\"}, \"queue\": null or {\"state\",\n"
    "              \"worker\", \"held\", \"attempts\", \"wake_at_ms\", \"error\"}}]}\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0 when the store could be\n"
    "listed (whatever the runs' states: a held run is listed with its pid); 1\n"
    "when it could not (no such directory, I/O error); 64 on a usage error.\n",
    cmd_ls,
};
