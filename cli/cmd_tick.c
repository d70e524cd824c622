/*
 * cmd_tick.c -- `lil tick [--dir DIR] [--json]`: resume every parked loop
 * run of the store whose wake time has passed (docs/loops.md, "Parked
 * runs"), for cron or a systemd timer (examples/tick.crontab,
 * examples/lil-tick.{service,timer}).
 *
 * For each run of the store, read-only (no lock): lil_loop_facts (the
 * runner's own fold of the journal) says whether it is a loop run, which
 * spec it started with ("spec_path", "cwd") and whether it waits on a park
 * ("wake_at_ms": its last record that is not an open or a close is
 * "parked.N"; anything journaled after a park -- an effect, a snapshot, an
 * approval, an end -- means the run moved on since, and it is left alone).
 * A run whose wake time has passed is opened with the spec at spec_path
 * (its journaled inputs) and run with lil_loop_run, like `lil resume`
 * without clearing a stop.
 *
 * Tick runs only what it was given (docs/loops.md, "What a run is bound
 * to"): the facts are read with the chain verified; a due run is refused
 * ("refused", exit status 1) when it was imported and no operator has run
 * it since ("imported" in its facts), when its spec file's digest
 * (lil_spec_digest) is not the one the run is bound to ("spec_sha256"),
 * and when lil_loop_open, asked with LIL_LOOP_UNATTENDED, refuses it (a
 * journal without a key in a keyed store, and the same checks again).
 *
 * A run that another process holds is skipped (it is running already), and
 * so is a run of a PostgreSQL store's queue (lil_queue_list): its workers
 * claim it when it is due (docs/postgres.md, "Workers").  A
 * spec that no longer loads or is invalid, a journal that cannot be read,
 * a loop call that fails, and a resumed run that ends failed are reported
 * on stderr and make the exit status 1; otherwise it is 0.  Text output:
 * one line per resumed run with its new status (nothing when nothing was
 * due).  --json: {"now", "runs": [{"run", "action": "resumed" | "skipped" |
 * "failed" | "not-due", ...}]}.
 *
 * Then the schedules of the store fire (sched_cli.c).
 *
 * Shell steps run in the working directory the run started in (the start
 * record's "cwd"), as they did then.  SIGINT and SIGTERM
 * stop the run in progress at its next effect boundary (it is stopped,
 * resumable) and tick exits without starting another.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "hint.h"
#include "sched_cli.h"
#include "spec_cli.h"

#define PARKED_PREFIX "parked."

/* What lil_loop_facts says of one run. */
struct run_facts {
    bool is_loop;
    char *spec_path;  /* from the start record, or NULL */
    char *cwd;        /* the run's working directory, or NULL */
    char *spec_sha;   /* the digest of the spec the run is bound to, or NULL */
    bool imported;    /* imported, and no operator has run it since */
    bool parked;      /* waiting on a park */
    int64_t wake_at;  /* its wakeAt (ms) */
    char error[1024]; /* why the run could not be read */
};

struct tick {
    const struct cli_ctx *ctx;
    lil_store *st;
    int64_t now_ms;
    json_t *runs; /* --json */
    bool failed;
    bool accept_spec; /* --accept-spec-change */
    json_t *queued;   /* ids of the runs of the store's queue (a set), or NULL */
};

/* ---- signals
 * ------------------------------------------------------------------------------- */

static lil_loop *volatile current;
static volatile sig_atomic_t stopping;

void cli_tick_signal(int sig)
{
    lil_loop *lp = current;

    (void)sig;
    stopping = 1;
    if (lp)
        lil_loop_interrupt(lp, LIL_LOOP_INTERRUPT_STOP);
}

bool cli_tick_stopping(void)
{
    return stopping != 0;
}

void cli_tick_current(lil_loop *lp)
{
    current = lp;
}

/* ---- reading a run
 * ------------------------------------------------------------------------- */

static char *dup_member(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? strdup(s) : NULL;
}

/* Fill f from a facts document. */
static void from_facts(struct run_facts *f, const json_t *doc)
{
    const json_t *wake = json_object_get(doc, "wake_at_ms");

    f->is_loop = true;
    f->spec_path = dup_member(doc, "spec_path");
    f->cwd = dup_member(doc, "cwd");
    f->spec_sha = dup_member(doc, "spec_sha256");
    f->imported = json_is_true(json_object_get(doc, "imported"));
    f->parked = json_is_integer(wake);
    f->wake_at = (int64_t)json_integer_value(wake);
}

/* Read run_id's facts (read-only).  LIL_OK with *f filled (is_loop false
 * for a run that is no loop run); else the message in f->error. */
static lil_status read_facts(lil_store *st, const char *run_id, struct run_facts *f)
{
    lil_run_opts o = {sizeof(o), LIL_SYNC_DEFAULT,
                      LIL_OPEN_READONLY | LIL_OPEN_EXISTING | LIL_OPEN_VERIFY_CHAIN, 0};
    lil_bytes b = {NULL, 0};
    lil_run *run = NULL;
    json_t *doc = NULL;
    lil_status rc = lil_run_open(st, run_id, &o, &run);

    memset(f, 0, sizeof(*f));
    if (rc == LIL_OK)
        rc = lil_loop_facts(run, &b);
    if (rc == LIL_OK && !(doc = json_loadb(b.data, b.len, 0, NULL)))
        rc = LIL_E_NOMEM;
    if (rc == LIL_OK)
        from_facts(f, doc);
    if (rc == LIL_E_NOTFOUND && run) /* no loop start record */
        rc = LIL_OK;
    if (rc != LIL_OK)
        snprintf(f->error, sizeof(f->error), "%s",
                 rc == LIL_E_NOMEM ? "out of memory"
                 : run             ? lil_run_errmsg(run)
                                   : lil_store_errmsg(st));
    json_decref(doc);
    lil_free(b.data);
    lil_run_close(run);
    return rc;
}

/* ---- reporting
 * ----------------------------------------------------------------------------- */

static json_t *entry(const char *run_id, const char *action)
{
    json_t *o = json_object();

    cli_json_set(o, "run", cli_json_str(run_id, strlen(run_id)));
    cli_json_set(o, "action", json_string(action));
    return o;
}

static void add(struct tick *t, json_t *e)
{
    if (!t->runs || !e || json_array_append_new(t->runs, e) != 0)
        t->failed = t->failed || (t->runs && !e);
}

/* A run tick could not or would not resume: stderr (and --json), and the
 * exit status 1, since an operator must look at it.  FAILED: resuming it
 * went wrong ("action": "failed", the text in "error"); REFUSED: tick would
 * not resume it (docs/loops.md, "What a run is bound to"; "action":
 * "refused", the text in "reason"). */
enum problem { FAILED, REFUSED };

static void problem(struct tick *t, const char *run_id, enum problem kind,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void problem(struct tick *t, const char *run_id, enum problem kind,
                    const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    json_t *e;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    cli_err(t->ctx, "run '%s': %s%s", run_id, kind == REFUSED ? "not resumed: " : "",
            text);
    t->failed = true;
    if (!t->runs)
        return;
    e = entry(run_id, kind == REFUSED ? "refused" : "failed");
    cli_json_set(e, kind == REFUSED ? "reason" : "error",
                 cli_json_str(text, strlen(text)));
    add(t, e);
}

static void resumed(struct tick *t, const char *run_id, const lil_loop_result *res)
{
    json_t *e;

    if (res->status == LIL_LOOP_FAILED)
        t->failed = true;
    if (!t->runs) {
        printf("run '%s': resumed, now %s at iteration %lld", run_id,
               lil_loop_status_name(res->status), (long long)res->iteration);
        if (res->reason)
            printf(" (%s)", res->reason);
        if (res->wake_at_ms)
            printf(", wakes at %lld", (long long)res->wake_at_ms);
        putchar('\n');
        return;
    }
    e = entry(run_id, "resumed");
    cli_json_set(e, "status", json_string(lil_loop_status_name(res->status)));
    cli_json_set(e, "result", res->json ? json_loads(res->json, 0, NULL) : NULL);
    add(t, e);
}

static void skipped(struct tick *t, const char *run_id, const char *why)
{
    json_t *e;

    if (!t->runs) {
        printf("run '%s': %s, skipped\n", run_id, why);
        return;
    }
    e = entry(run_id, "skipped");
    cli_json_set(e, "reason", json_string(why));
    add(t, e);
}

static void not_due(struct tick *t, const char *run_id, int64_t wake_at)
{
    json_t *e;

    if (!t->runs)
        return;
    e = entry(run_id, "not-due");
    cli_json_set(e, "wakeAt", json_integer(wake_at));
    add(t, e);
}

/* ---- resuming
 * -------------------------------------------------------------------------------- */

static void run_loop(struct tick *t, const char *run_id, const lil_spec *spec,
                     const char *cwd)
{
    lil_loop_opts o;
    lil_loop_result res = {0};
    lil_loop *lp = NULL;
    lil_status rc;

    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.run_id = run_id;
    o.cwd = cwd;
    o.reason = "lil tick: the wake time has passed";
    o.flags = LIL_LOOP_UNATTENDED | (t->accept_spec ? LIL_LOOP_ACCEPT_SPEC_CHANGE : 0u);
    rc = lil_loop_open(t->st, spec, &o, &lp);
    if (rc == LIL_E_LOCKED) {
        skipped(t, run_id, "held by another process");
        return;
    }
    if (rc == LIL_E_KEY || rc == LIL_E_INVAL || rc == LIL_E_CORRUPT) {
        problem(t, run_id, REFUSED, "%s", lil_store_errmsg(t->st));
        return;
    }
    if (rc != LIL_OK) {
        problem(t, run_id, FAILED, "%s", lil_store_errmsg(t->st));
        return;
    }
    current = lp;
    rc = stopping ? LIL_OK : lil_loop_run(lp, &res);
    current = NULL;
    if (rc != LIL_OK)
        problem(t, run_id, FAILED, "%s", lil_loop_errmsg(lp));
    else if (res.json)
        resumed(t, run_id, &res);
    lil_loop_result_free(&res);
    if (lil_loop_close(lp) != LIL_OK)
        problem(t, run_id, FAILED, "closing the run: %s", lil_errmsg());
}

/* Does spec still have the digest the run is bound to (f->spec_sha)? */
static bool same_spec(const struct tick *t, const struct run_facts *f,
                      const lil_spec *spec, char now[65])
{
    now[0] = '\0';
    if (lil_spec_digest(spec, now) != LIL_OK)
        return false;
    return t->accept_spec || (f->spec_sha && strcmp(f->spec_sha, now) == 0);
}

static void resume(struct tick *t, const char *run_id, const struct run_facts *f)
{
    struct cli_hint_run r = {t->ctx, f->spec_path, run_id, NULL};
    lil_spec *spec = NULL;
    char msg[1024], now[65], cmd[2000];

    cli_hint(&r, "resume", NULL, cmd, sizeof(cmd));
    if (f->imported)
        problem(t, run_id, REFUSED,
                "it was imported into this store and no operator has run it since "
                "(`%s` once by hand)",
                cmd);
    else if (cli_spec_load(NULL, f->spec_path, &spec, msg, sizeof(msg)) != LIL_OK)
        problem(t, run_id, FAILED, "cannot load its spec: %s", msg);
    else if (!lil_spec_ok(spec))
        problem(t, run_id, FAILED, "its spec %s is no longer valid (`lil validate %s`)",
                f->spec_path, f->spec_path);
    else if (!same_spec(t, f, spec, now))
        problem(t, run_id, REFUSED,
                "its spec %s changed (sha256 %.16s, the run is bound to %.16s): "
                "`%s` with the spec it runs, or with --accept-spec-change",
                f->spec_path, now, f->spec_sha ? f->spec_sha : "?", cmd);
    else
        run_loop(t, run_id, spec, f->cwd);
    lil_spec_free(spec);
}

static int tick_one(void *ud, const char *run_id)
{
    struct tick *t = ud;
    struct run_facts f;
    lil_status rc;

    if (stopping)
        return 1;
    rc = read_facts(t->st, run_id, &f);
    if (rc == LIL_E_KEY || rc == LIL_E_CORRUPT)
        problem(t, run_id, REFUSED, "its journal does not verify: %s", f.error);
    else if (rc != LIL_OK)
        problem(t, run_id, FAILED, "cannot read its journal: %s", f.error);
    else if (f.is_loop && f.parked && !f.spec_path)
        problem(t, run_id, FAILED, "its start record names no spec");
    else if (f.is_loop && f.parked && f.wake_at > t->now_ms)
        not_due(t, run_id, f.wake_at);
    else if (f.is_loop && f.parked && json_object_get(t->queued, run_id))
        skipped(t, run_id, "in the queue: a worker claims it");
    else if (f.is_loop && f.parked)
        resume(t, run_id, &f);
    free(f.spec_path);
    free(f.cwd);
    free(f.spec_sha);
    return 0;
}

/* ---- the verb
 * -------------------------------------------------------------------------------- */

/* The ids of the runs of st's queue, as the keys of an object (NULL when
 * the store keeps no queue or it cannot be read: the runs' opens decide). */
static json_t *queued_runs(lil_store *st)
{
    lil_bytes b = {NULL, 0};
    json_t *doc = NULL, *set = NULL, *r;
    size_t i;

    if (lil_queue_list(st, &b) == LIL_OK)
        doc = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    if (json_is_true(json_object_get(doc, "queue")))
        set = json_object();
    json_array_foreach(json_object_get(doc, "runs"), i, r)
    {
        const char *id = json_string_value(json_object_get(r, "run"));
        if (set && id)
            json_object_set_new(set, id, json_true());
    }
    json_decref(doc);
    return set;
}

bool cli_tick_pass(const struct cli_ctx *ctx, lil_store *st, int64_t now_ms,
                   json_t *runs, bool accept_spec)
{
    struct tick t = {ctx, st, now_ms, runs, false, accept_spec, queued_runs(st)};
    lil_status rc;

    rc = lil_store_foreach_run(t.st, tick_one, &t);
    json_decref(t.queued);
    if (rc != LIL_OK) {
        cli_err(ctx, "%s", lil_store_errmsg(t.st));
        t.failed = true;
    }
    if (!stopping)
        cli_sched_fire(ctx, st, now_ms, runs, &t.failed);
    return !t.failed;
}

static int cmd_tick(struct cli_ctx *ctx, int argc, char **argv)
{
    int64_t now_ms = cli_now_ns() / 1000000;
    bool accept_spec = false, now_set = false, ok = true;
    const char *now = NULL;
    const struct cli_flag flags[] = {{"accept-spec-change", false, NULL, &accept_spec},
                                     {"now", true, &now, &now_set},
                                     {NULL, false, NULL, NULL}};
    const struct cli_args a = {flags, NULL, NULL};
    lil_store *st = NULL;
    json_t *runs = NULL;
    int ex = cli_parse(ctx, argc, argv, &a);

    if (ex == CLI_EXIT_OK && now_set && !cli_sched_parse_now(now, &now_ms))
        ex = cli_usage(
            ctx, "--now '%s' is not a time: give 2026-12-02T14:05Z or epoch ms", now);
    if (ex == CLI_EXIT_OK)
        ex = cli_store_open(ctx, &st);
    if (ex == CLI_EXIT_OK && ctx->json && !(runs = json_array()))
        ex = cli_json_print(ctx, NULL, false);
    if (ex == CLI_EXIT_OK) {
        cli_catch_signals(cli_tick_signal);
        ok = cli_tick_pass(ctx, st, now_ms, runs, accept_spec);
        cli_catch_signals(NULL);
    }
    if (ex == CLI_EXIT_OK && runs)
        ex = cli_json_print(
            ctx, json_pack("{s:I, s:O}", "now", (json_int_t)now_ms, "runs", runs),
            false);
    if (ex == CLI_EXIT_OK && !ok)
        ex = CLI_EXIT_FAIL;
    json_decref(runs);
    lil_store_close(st);
    return ex == CLI_PARSE_HELP ? CLI_EXIT_OK : ex;
}

const struct cli_verb cli_verb_tick = {
    "tick", "resume every parked loop run whose wake time has passed",
    "Usage: lil tick [--dir DIR] [--accept-spec-change] [--now TIME] [--json]\n"
    "\n"
    "For each loop run of the store that is parked on a sleep (its last record is\n"
    "a park) and whose wake time has passed, load the spec it was started with\n"
    "and run it on, as `lil resume` would.  Meant for cron or a systemd timer\n"
    "(examples/tick.crontab, examples/lil-tick.timer); shell steps run in the\n"
    "working directory the run was started in (journaled with it), wherever\n"
    "tick is started.  A run held by another process is skipped, and so is a\n"
    "run of a PostgreSQL store's queue (`lil submit`: `lil worker` claims it).\n"
    "Prints one line per resumed run with its new status; nothing when nothing\n"
    "was due.\n"
    "\n"
    "Tick runs only what it was given: a run whose spec file no longer has the\n"
    "digest the run is bound to, a run imported into the store (`lil import`)\n"
    "that no operator has resumed by hand since, and a journal that does not\n"
    "verify (or has no key in a store that has one) are not resumed: each is\n"
    "reported on stderr (\"not resumed\") and makes the exit status 1.\n"
    "\n"
    "Then fire the store's schedules (`lil schedule add`): a new run\n"
    "\"ID@2026-12-02T14:05Z\" for each slot due by its catch-up policy, each\n"
    "slot once, even with two ticks at once (`lil schedule --help`).\n"
    "\n"
    "Flags:\n"
    "  --dir DIR   the store (default $LIL_DIR, else .lil; it must exist)\n"
    "  --now TIME  take TIME (2026-12-02T14:05Z or epoch ms) as now\n"
    "  --accept-spec-change  resume runs whose spec changed too, journaling the\n"
    "              change (as `lil resume --accept-spec-change`)\n"
    "  --json      {\"now\", \"runs\": [{\"run\", \"action\": \"resumed\" (with \"status\",\n"
    "              \"result\") | \"skipped\" | \"refused\" (\"reason\") | \"failed\"\n"
    "              (\"error\") | \"not-due\" (\"wakeAt\")}]}; a fired slot adds\n"
    "              {\"run\", \"schedule\", \"action\": \"fired\" | \"exists\" | ...}\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0 every due run was resumed\n"
    "(or skipped: held); 1 the store does not exist, a run could not be resumed\n"
    "(its spec does not load or changed, it was imported, its journal cannot be\n"
    "read or does not verify) or a resumed run failed; 64 usage error.\n",
    cmd_tick};
