/*
 * loop_cli.c -- the shared part of the loop verbs (loop_cli.h).
 */
#include "loop_cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hint.h"
#include "progress.h"
#include "safe_out.h"
#include "spec_cli.h"

#define INPUTS_MAX     (16u << 20) /* --inputs FILE: 16 MiB */
#define IDENTITY_SHOWN 300         /* bytes of an uncertain effect's identity shown */
#define HINT_MAX       8192        /* a command printed as a next step */

/* ---- parsing
 * ------------------------------------------------------------------------- */

/* Take every --input VALUE / --input=VALUE out of argv into lc. */
static int take_inputs(struct cli_ctx *ctx, int *argc, char **argv, struct loop_cli *lc)
{
    int out = 0;

    lc->input_pairs = calloc((size_t)*argc + 1, sizeof(*lc->input_pairs));
    if (!lc->input_pairs)
        return cli_usage(ctx, "out of memory");
    for (int i = 0; i < *argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            while (i < *argc)
                argv[out++] = argv[i++];
            break;
        }
        if (strncmp(argv[i], "--input=", 8) == 0) {
            lc->input_pairs[lc->n_input_pairs++] = argv[i] + 8;
        } else if (strcmp(argv[i], "--input") == 0) {
            if (i + 1 >= *argc || strncmp(argv[i + 1], "--", 2) == 0)
                return cli_usage(ctx, "--input needs NAME=VALUE");
            lc->input_pairs[lc->n_input_pairs++] = argv[++i];
        } else {
            argv[out++] = argv[i];
        }
    }
    *argc = out;
    for (size_t i = 0; i < lc->n_input_pairs; i++)
        if (!lc->input_pairs[i] || !strchr(lc->input_pairs[i], '='))
            return cli_usage(ctx, "--input '%s' is not NAME=VALUE", lc->input_pairs[i]);
    return CLI_EXIT_OK;
}

static size_t add_flags(struct cli_flag *f, unsigned mask, struct loop_cli *lc)
{
    size_t n = 0;

    f[n++] = (struct cli_flag){"run-id", true, &lc->run_id, NULL};
    if (mask & (LOOP_OPT_RUN | LOOP_OPT_SUBMIT)) {
        f[n++] = (struct cli_flag){"inputs", true, &lc->inputs_file, NULL};
        f[n++] = (struct cli_flag){"sync", true, &lc->sync, NULL};
    }
    if (mask & LOOP_OPT_RUN) {
        f[n++] = (struct cli_flag){"env-allow", true, &lc->env_allow, NULL};
        f[n++] = (struct cli_flag){"wait", false, NULL, &lc->wait};
    }
    if (mask & LOOP_OPT_CASSETTE) {
        f[n++] = (struct cli_flag){"record", true, &lc->record, NULL};
        f[n++] = (struct cli_flag){"replay", true, &lc->replay, NULL};
    }
    if (mask & LOOP_OPT_APPROVE)
        f[n++] = (struct cli_flag){"approve", false, NULL, &lc->approve};
    if (mask & (LOOP_OPT_APPROVE | LOOP_OPT_PAUSE)) /* the verbs that run the loop */
        f[n++] = (struct cli_flag){"progress", true, &lc->progress, NULL};
    if (mask & LOOP_OPT_YES)
        f[n++] = (struct cli_flag){"yes", false, NULL, &lc->yes};
    if (mask & LOOP_OPT_WHO) {
        f[n++] = (struct cli_flag){"actor", true, &lc->actor, &lc->actor_set};
        f[n++] = (struct cli_flag){"reason", true, &lc->reason, &lc->reason_set};
    }
    if (mask & LOOP_OPT_SPEC)
        f[n++] = (struct cli_flag){"accept-spec-change", false, NULL, &lc->accept_spec};
    if (mask & LOOP_OPT_PAUSE) {
        f[n++] = (struct cli_flag){"pause", true, &lc->pause_id, NULL};
        f[n++] = (struct cli_flag){"digest", true, &lc->digest, NULL};
        f[n++] = (struct cli_flag){"current", false, NULL, &lc->current};
    }
    if (mask & LOOP_OPT_FRESH)
        f[n++] = (struct cli_flag){"fresh", false, NULL, &lc->fresh};
    if (mask & LOOP_OPT_RETRY)
        f[n++] = (struct cli_flag){"retry-failed", false, NULL, &lc->retry_failed};
    if (mask & LOOP_OPT_RECOVER) {
        f[n++] = (struct cli_flag){"retry", false, NULL, &lc->retry};
        f[n++] = (struct cli_flag){"assume-done", false, NULL, &lc->assume_done};
        f[n++] = (struct cli_flag){"abort", false, NULL, &lc->abort};
        f[n++] =
            (struct cli_flag){"result-json", true, &lc->result_json, &lc->result_set};
    }
    f[n] = (struct cli_flag){NULL, false, NULL, NULL};
    return n;
}

/* --progress names a mode (a usage error printed otherwise). */
static bool progress_ok(struct cli_ctx *ctx, const struct loop_cli *lc)
{
    enum progress_mode mode;

    if (!lc->progress || progress_mode_of(lc->progress, &mode))
        return true;
    (void)cli_usage(ctx, "--progress must be auto, plain, json or off (not '%s')",
                    lc->progress);
    return false;
}

/* --fresh (run, step: no pause flags there) names the run itself. */
static int fresh_ok(struct cli_ctx *ctx, const struct loop_cli *lc)
{
    if (lc->run_id || lc->replay)
        return cli_usage(ctx, "--fresh names a new run itself: it goes without "
                              "--run-id and --replay");
    return CLI_EXIT_OK;
}

/* The flags' values and how they go together, once parsed. */
static int check_values(struct cli_ctx *ctx, const struct loop_cli *lc)
{
    if (lc->run_id && cli_run_id_ok(ctx, lc->run_id) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    if (lc->sync && loop_cli_sync(lc->sync) == LIL_SYNC_DEFAULT)
        return cli_usage(ctx, "--sync must be full, normal or off (not '%s')",
                         lc->sync);
    if (lc->record && lc->replay)
        return cli_usage(ctx, "--record and --replay exclude each other");
    if ((lc->record && !*lc->record) || (lc->replay && !*lc->replay))
        return cli_usage(ctx, "--record and --replay need a file name");
    if (lc->reason_set && !*lc->reason)
        return cli_usage(ctx, "--reason is empty");
    if (lc->actor_set && !*lc->actor)
        return cli_usage(ctx, "--actor is empty");
    if ((lc->pause_id && !*lc->pause_id) || (lc->digest && !*lc->digest))
        return cli_usage(ctx, "--pause and --digest need a value");
    if (!progress_ok(ctx, lc))
        return CLI_EXIT_USAGE;
    if (lc->fresh)
        return fresh_ok(ctx, lc);
    if (lc->current && (lc->pause_id || lc->digest))
        return cli_usage(ctx, "--current accepts whatever pause is current: it goes "
                              "without --pause and --digest");
    return CLI_EXIT_OK;
}

int loop_cli_parse(struct cli_ctx *ctx, int argc, char **argv, unsigned mask,
                   struct loop_cli *lc)
{
    static const char *const names[] = {"SPEC", NULL};
    const char *pos[1] = {NULL};
    struct cli_flag flags[24];
    struct cli_args a = {flags, names, pos};
    int rc = CLI_EXIT_OK;

    if (mask & (LOOP_OPT_RUN | LOOP_OPT_SUBMIT))
        rc = take_inputs(ctx, &argc, argv, lc);
    if (rc != CLI_EXIT_OK)
        return rc;
    lc->ctx = ctx;
    add_flags(flags, mask, lc);
    rc = cli_parse(ctx, argc, argv, &a);
    if (rc != CLI_EXIT_OK)
        return rc;
    lc->spec_path = pos[0];
    return check_values(ctx, lc);
}

/* ---- opening
 * --------------------------------------------------------------------------- */

static int read_inputs(struct cli_ctx *ctx, struct loop_cli *lc)
{
    FILE *f;
    size_t n;

    if (!lc->inputs_file)
        return CLI_EXIT_OK;
    f = fopen(lc->inputs_file, "rb");
    if (!f) {
        cli_err(ctx, "cannot read --inputs '%s': %s", lc->inputs_file, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    lc->inputs_json = malloc(INPUTS_MAX + 1);
    n = lc->inputs_json ? fread(lc->inputs_json, 1, INPUTS_MAX + 1, f) : 0;
    (void)fclose(f);
    if (!lc->inputs_json || n > INPUTS_MAX) {
        cli_err(ctx, "--inputs '%s' is larger than %u bytes", lc->inputs_file,
                INPUTS_MAX);
        return CLI_EXIT_FAIL;
    }
    lc->inputs_json[n] = '\0';
    return CLI_EXIT_OK;
}

static const char *run_id_of(const struct loop_cli *lc)
{
    return lc->run_id ? lc->run_id : lil_spec_id(lc->spec);
}

/* Open run id read-only, only to know whether it is there. */
static lil_status run_lookup(struct loop_cli *lc, const char *id)
{
    lil_run *run = NULL;
    lil_run_opts o = {sizeof(o), LIL_SYNC_DEFAULT,
                      LIL_OPEN_READONLY | LIL_OPEN_EXISTING, 0};
    lil_status rc = lil_run_open(lc->st, id, &o, &run);

    lil_run_close(run);
    return rc;
}

/* The run must exist (every verb but run, step and stop). */
static int run_exists(struct cli_ctx *ctx, struct loop_cli *lc, const char *id)
{
    lil_status rc = run_lookup(lc, id);
    char stop[1400];

    char run[HINT_MAX], resume[HINT_MAX];

    if (rc == LIL_E_NOTFOUND && cli_stop_pending(lc->st, id, stop, sizeof(stop))) {
        cli_err(ctx,
                "no run '%s' in the store yet; %s: `%s` ends stopped before any step, "
                "then `%s` goes on",
                id, stop, loop_cli_hint(lc, "run", NULL, run, sizeof(run)),
                loop_cli_hint(lc, "resume", NULL, resume, sizeof(resume)));
        return CLI_EXIT_FAIL;
    }
    if (rc == LIL_E_NOTFOUND) {
        cli_err(ctx, "no run '%s' in the store (start it with `%s`)", id,
                loop_cli_hint(lc, "run", NULL, run, sizeof(run)));
        return CLI_EXIT_FAIL;
    }
    return rc == LIL_OK ? CLI_EXIT_OK
                        : cli_fail(ctx, rc, "cannot read run '%s': %s", id,
                                   lil_store_errmsg(lc->st));
}

/* Load and check the spec (its diagnostics printed when it has errors). */
static int load_spec(struct cli_ctx *ctx, struct loop_cli *lc)
{
    char msg[512];
    lil_status rc = cli_spec_load(NULL, lc->spec_path, &lc->spec, msg, sizeof(msg));

    if (rc != LIL_OK) {
        cli_err(ctx, "%s", msg);
        return CLI_EXIT_FAIL;
    }
    if (!lil_spec_ok(lc->spec)) {
        cli_diag_print(stderr, lc->spec, cli_spec_name(lc->spec_path));
        cli_err(ctx, "%s is not a valid loop spec: nothing was run",
                cli_spec_name(lc->spec_path));
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* --fresh: a run id of the spec's id, the time and random digits, that
 * the store does not hold; lc->run_id set to it. */
static int fresh_id(struct cli_ctx *ctx, struct loop_cli *lc)
{
    const char *base = lil_spec_id(lc->spec) ? lil_spec_id(lc->spec) : "run";
    unsigned char rnd[3] = {0};
    char when[32];
    time_t now = time(NULL);
    struct tm tm;

    for (int tries = 0; tries < 16; tries++) {
        FILE *f = fopen("/dev/urandom", "rb");

        if (!f || fread(rnd, 1, sizeof(rnd), f) != sizeof(rnd)) {
            if (f)
                (void)fclose(f);
            cli_err(ctx, "--fresh: cannot read /dev/urandom");
            return CLI_EXIT_FAIL;
        }
        (void)fclose(f);
        if (!gmtime_r(&now, &tm) ||
            strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm) == 0)
            snprintf(when, sizeof(when), "%lld", (long long)now);
        snprintf(lc->fresh_id, sizeof(lc->fresh_id), "%.160s-%s-%02x%02x%02x", base,
                 when, rnd[0], rnd[1], rnd[2]);
        if (run_lookup(lc, lc->fresh_id) == LIL_E_NOTFOUND) {
            lc->run_id = lc->fresh_id;
            fprintf(stderr, "fresh run '%s' (run '%s' is left as it is)\n",
                    lc->fresh_id, base);
            return CLI_EXIT_OK;
        }
    }
    cli_err(ctx, "--fresh: no free run id found");
    return CLI_EXIT_FAIL;
}

int loop_cli_prepare(struct cli_ctx *ctx, struct loop_cli *lc, bool create)
{
    int ex = load_spec(ctx, lc);

    if (ex != CLI_EXIT_OK)
        return ex;
    if (create) /* run, step: say once what lil doubts or ignores in the spec */
        cli_diag_print_warnings(stderr, lc->spec, cli_spec_name(lc->spec_path));
    ex = read_inputs(ctx, lc);
    if (ex == CLI_EXIT_OK)
        ex = create ? cli_store_create(ctx, &lc->st) : cli_store_open(ctx, &lc->st);
    if (ex == CLI_EXIT_OK && !create)
        ex = run_exists(ctx, lc, run_id_of(lc) ? run_id_of(lc) : "");
    if (ex == CLI_EXIT_OK && lc->fresh)
        ex = fresh_id(ctx, lc);
    return ex;
}

int loop_cli_prepare_stop(struct cli_ctx *ctx, struct loop_cli *lc, bool *started)
{
    int ex = load_spec(ctx, lc);
    lil_status rc;

    *started = false;
    if (ex == CLI_EXIT_OK)
        ex = cli_store_create(ctx, &lc->st);
    if (ex != CLI_EXIT_OK)
        return ex;
    rc = run_lookup(lc, run_id_of(lc) ? run_id_of(lc) : "");
    *started = rc == LIL_OK;
    if (rc == LIL_OK || rc == LIL_E_NOTFOUND)
        return CLI_EXIT_OK;
    return cli_fail(ctx, rc, "cannot read run '%s': %s", run_id_of(lc),
                    lil_store_errmsg(lc->st));
}

lil_sync loop_cli_sync(const char *s)
{
    lil_sync m = LIL_SYNC_DEFAULT;

    if (s && lil_sync_from_name(s, &m) != LIL_OK)
        m = LIL_SYNC_DEFAULT;
    return m;
}

/* The progress of this run on stderr (progress.h), and the command that
 * decides an effect a second Ctrl-C leaves uncertain: a hint (hint.h), so
 * it names the store and the run as every other hint does.  Once the run
 * is open, so that a new run's id (--fresh) is known. */
static void start_progress(const struct loop_cli *lc)
{
    enum progress_mode mode = PROGRESS_OFF;
    char hint[600];

    (void)progress_mode_of(lc->progress, &mode);
    progress_start(mode, loop_cli_hint(lc, "recover", NULL, hint, sizeof(hint)));
}

int loop_cli_open(struct cli_ctx *ctx, struct loop_cli *lc, unsigned flags)
{
    lil_loop_opts o;
    lil_status rc;

    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.run_id = lc->run_id;
    o.sync = loop_cli_sync(lc->sync);
    o.flags = flags | (lc->approve ? LIL_LOOP_APPROVE_CAPS : 0u) |
              (lc->yes ? LIL_LOOP_YES : 0u) | (lc->wait ? LIL_LOOP_WAIT : 0u) |
              (lc->accept_spec ? LIL_LOOP_ACCEPT_SPEC_CHANGE : 0u);
    o.inputs_json = lc->inputs_json;
    o.input_pairs = lc->input_pairs;
    o.n_input_pairs = lc->n_input_pairs;
    o.env_allow = lc->env_allow;
    o.actor = lc->actor;
    o.reason = lc->reason;
    o.record_path = lc->record;
    o.replay_path = lc->replay;
    o.progress = progress_event; /* kept even when nothing is shown: Ctrl-C */
    o.progress_ud = lc;
    rc = lil_loop_open(lc->st, lc->spec, &o, &lc->lp);
    if (rc != LIL_OK)
        return cli_fail(ctx, rc, "%s", lil_store_errmsg(lc->st));
    start_progress(lc);
    return CLI_EXIT_OK;
}

void loop_cli_close(struct loop_cli *lc)
{
    loop_cli_signals_off();
    progress_end(NULL);
    lil_loop_close(lc->lp);
    lil_store_close(lc->st);
    lil_spec_free(lc->spec);
    free(lc->inputs_json);
    free(lc->input_pairs);
    memset(lc, 0, sizeof(*lc));
}

/* ---- results
 * ----------------------------------------------------------------------------- */

/* Whether res is of a run handed back to the queue (LIL_LOOP_REQUEUE). */
static bool queued(const lil_loop_result *res)
{
    json_t *o = res->json ? json_loads(res->json, 0, NULL) : NULL;
    bool yes = json_is_true(json_object_get(o, "queued"));

    json_decref(o);
    return yes;
}

/* "  detail: ..." of res's JSON, when it has one. */
static void print_detail(const lil_loop_result *res)
{
    json_t *o = res->json ? json_loads(res->json, 0, NULL) : NULL;
    const char *detail = json_string_value(json_object_get(o, "detail"));

    if (detail)
        printf("  detail: %s\n", detail);
    json_decref(o);
}

/* The uncertain effect: its identity cut to IDENTITY_SHOWN bytes, with
 * its size when longer (a request body of megabytes), control characters
 * escaped. */
static void print_uncertain(const struct loop_cli *lc, const lil_loop_result *res)
{
    const char *identity = res->uncertain_identity ? res->uncertain_identity : "";
    size_t len = strlen(identity);
    char shown[4 * IDENTITY_SHOWN + 8], size[48] = "", hint[HINT_MAX];

    cli_fmt_printable(identity, len, IDENTITY_SHOWN, shown, sizeof(shown));
    if (len > IDENTITY_SHOWN)
        snprintf(size, sizeof(size), " (%zu bytes)", len);
    printf("  uncertain: iteration %lld effect %lld (%s) %s%s\n  decide with `%s`\n",
           (long long)res->uncertain_iteration, (long long)res->uncertain_seq,
           res->uncertain_kind, shown, size,
           loop_cli_hint(lc, "recover",
                         "--retry|--assume-done --result-json J|--abort --reason R",
                         hint, sizeof(hint)));
}

/* The pause a paused result waits at, and the approval that names it. */
static void print_pause(const struct loop_cli *lc, const lil_loop_result *res)
{
    json_t *o = res->json ? json_loads(res->json, 0, NULL) : NULL;
    json_t *p = json_object_get(o, "pause");
    const char *id = json_string_value(json_object_get(p, "id"));
    const char *digest = json_string_value(json_object_get(p, "digest"));

    char tail[300], hint[HINT_MAX];

    if (id && digest) {
        char q[200];

        cli_hint_quote(id, q, sizeof(q));
        snprintf(tail, sizeof(tail), "--pause %s --reason R", q);
        printf("  pause: %s (digest %s)\n  approve with `%s`\n", id, digest,
               loop_cli_hint(lc, "approve", tail, hint, sizeof(hint)));
    } else {
        printf(
            "  approve with `%s`\n",
            loop_cli_hint(lc, "approve", "--current --reason R", hint, sizeof(hint)));
    }
    json_decref(o);
}

/* "  step work: command not found: foo (iterations 0 to 9, 10 times)" for
 * each of the result's step notes. */
static void print_step_notes(const lil_loop_result *res)
{
    json_t *o = res->json ? json_loads(res->json, 0, NULL) : NULL;
    json_t *n;
    size_t i;

    json_array_foreach(json_object_get(o, "step_notes"), i, n)
    {
        const char *step = json_string_value(json_object_get(n, "step"));
        const char *note = json_string_value(json_object_get(n, "note"));
        long long first = json_integer_value(json_object_get(n, "first_iteration"));
        long long last = json_integer_value(json_object_get(n, "last_iteration"));
        long long count = json_integer_value(json_object_get(n, "count"));
        char safe_step[200], safe_note[400];

        cli_fmt_printable(step ? step : "?", step ? strlen(step) : 1, 100, safe_step,
                          sizeof(safe_step));
        cli_fmt_printable(note ? note : "", note ? strlen(note) : 0, 300, safe_note,
                          sizeof(safe_note));
        if (count > 1)
            printf("  step %s: %s (iterations %lld to %lld, %lld times)\n", safe_step,
                   safe_note, first, last, count);
        else
            printf("  step %s: %s (iteration %lld)\n", safe_step, safe_note, first);
    }
    json_decref(o);
}

/* ms since the epoch as a local date, ISO 8601 with the local offset:
 * "2026-12-02T15:30:00+01:00". */
static void fmt_local(int64_t ms, char *buf, size_t cap)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    char off[8];
    size_t n;

    if (!localtime_r(&t, &tm) || strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm) == 0 ||
        strftime(off, sizeof(off), "%z", &tm) != 5) {
        snprintf(buf, cap, "%lld ms", (long long)ms);
        return;
    }
    n = strlen(buf);
    snprintf(buf + n, cap - n, "%.3s:%.2s", off, off + 3);
}

/* Whether the run of lc has ended for good (its facts' loop "ended": a
 * stop that cannot be resumed). */
static bool ended_for_good(const struct loop_cli *lc, const char *id)
{
    lil_bytes facts = {0};
    json_t *o = NULL;
    bool ended = false;

    if (lil_run_facts(lc->st, id, &facts) == LIL_OK)
        o = json_loadb((const char *)facts.data, facts.len, 0, NULL);
    ended = json_is_true(json_object_get(json_object_get(o, "loop"), "ended"));
    json_decref(o);
    lil_free(facts.data);
    return ended;
}

/* The next useful command of a run that has ended (or stopped). */
static void print_next(const struct loop_cli *lc, const lil_loop_result *res)
{
    const char *id = lil_loop_run_id(lc->lp);
    char a[HINT_MAX], b[HINT_MAX];
    struct cli_hint_run rm = {lc->ctx, NULL, id, NULL};
    struct cli_hint_run fresh = {lc->ctx, lc->spec_path, NULL, NULL};
    bool over;

    if (!id)
        return;
    over = res->status == LIL_LOOP_COMPLETED || res->status == LIL_LOOP_FAILED ||
           (res->status == LIL_LOOP_STOPPED && ended_for_good(lc, id));
    if (res->status == LIL_LOOP_FAILED) {
        char c[HINT_MAX];

        printf("  next: fix the cause, then `%s` goes on from the failed iteration "
               "(a changed spec: add --accept-spec-change); `%s` starts a new run; "
               "`%s` retires this one\n",
               loop_cli_hint(lc, "resume", "--retry-failed", c, sizeof(c)),
               cli_hint(&fresh, "run", "--fresh", a, sizeof(a)),
               cli_hint(&rm, "rm", NULL, b, sizeof(b)));
    } else if (over) {
        printf("  next: `%s` starts a new run; `%s` retires this one\n",
               cli_hint(&fresh, "run", "--fresh", a, sizeof(a)),
               cli_hint(&rm, "rm", NULL, b, sizeof(b)));
    } else if (res->status == LIL_LOOP_STOPPED)
        printf("  next: `%s` goes on\n",
               loop_cli_hint(lc, "resume", NULL, a, sizeof(a)));
}

static void print_summary(const struct loop_cli *lc, const lil_loop_result *res)
{
    const char *id = lil_loop_run_id(lc->lp);
    const char *st = lil_loop_status_name(res->status);

    if (queued(res) && res->status == LIL_LOOP_WAITING) {
        printf("run '%s': queued at iteration %lld: a worker goes on with it (`lil "
               "worker`)\n  state: %s\n",
               id ? id : "?", (long long)res->iteration,
               res->state_json ? res->state_json : "{}");
        return;
    }
    printf("run '%s': %s at iteration %lld\n", id ? id : "?", st,
           (long long)res->iteration);
    if (res->reason)
        printf("  reason: %s\n", res->reason);
    print_detail(res);
    print_step_notes(res);
    if (res->wake_at_ms) {
        long long left =
            (long long)(res->wake_at_ms - (long long)(cli_now_ns() / 1000000));
        char when[64], hint[HINT_MAX];

        fmt_local(res->wake_at_ms, when, sizeof(when));
        printf("  wakes at %s (in %llds): `lil tick` or `%s`\n", when,
               left > 0 ? left / 1000 : 0,
               loop_cli_hint(lc, "resume", NULL, hint, sizeof(hint)));
    }
    if (res->has_uncertain)
        print_uncertain(lc, res);
    if (res->status == LIL_LOOP_PAUSED)
        print_pause(lc, res);
    printf("  state: %s\n", res->state_json ? res->state_json : "{}");
    print_next(lc, res);
}

/* A failed run's next commands, for --json ("hints": retry, a new run,
 * retire it), or NULL. */
static json_t *failed_hints(const struct loop_cli *lc, const lil_loop_result *res)
{
    const char *id = lil_loop_run_id(lc->lp);
    struct cli_hint_run rm = {lc->ctx, NULL, id, NULL};
    struct cli_hint_run fresh = {lc->ctx, lc->spec_path, NULL, NULL};
    char a[HINT_MAX], b[HINT_MAX], c[HINT_MAX];

    if (res->status != LIL_LOOP_FAILED || !id)
        return NULL;
    return json_pack("{s:s, s:s, s:s}", "retry",
                     loop_cli_hint(lc, "resume", "--retry-failed", a, sizeof(a)),
                     "fresh", cli_hint(&fresh, "run", "--fresh", b, sizeof(b)), "rm",
                     cli_hint(&rm, "rm", NULL, c, sizeof(c)));
}

/* The result's JSON with "runId" (id: a --fresh run's new id) and "hints"
 * (may be NULL; stolen) added. */
static void print_json_with(const lil_loop_result *res, const char *id, json_t *hints)
{
    json_t *o = res->json ? json_loads(res->json, 0, NULL) : NULL;
    char *text;

    if (json_is_object(o) && id)
        json_object_set_new(o, "runId", json_string(id));
    if (json_is_object(o) && hints)
        json_object_set(o, "hints", hints);
    json_decref(hints);
    if (!json_is_object(o) ||
        !(text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER))) {
        printf("%s\n", res->json ? res->json : "{}");
        json_decref(o);
        return;
    }
    printf("%s\n", text);
    free(text);
    json_decref(o);
}

int loop_cli_report(const struct cli_ctx *ctx, const struct loop_cli *lc,
                    const lil_loop_result *res)
{
    progress_end(res); /* the terminal line cleared; plain and json: the end */
    if (ctx->json)
        print_json_with(res, lc->fresh ? lc->fresh_id : NULL, failed_hints(lc, res));
    else
        print_summary(lc, res);
    return lil_loop_exit_code(res->status);
}

int loop_cli_answer(const struct cli_ctx *ctx, const struct loop_cli *lc, lil_status rc,
                    lil_loop_result *res)
{
    int ex = rc == LIL_OK ? loop_cli_report(ctx, lc, res) : loop_cli_fail(ctx, lc, rc);

    lil_loop_result_free(res);
    return ex;
}

int loop_cli_fail(const struct cli_ctx *ctx, const struct loop_cli *lc, lil_status rc)
{
    return cli_fail(ctx, rc, "%s", lc->lp ? lil_loop_errmsg(lc->lp) : lil_errmsg());
}

/* ---- signals and progress
 * ------------------------------------------------------------------ */

static struct loop_cli *volatile running;
static volatile sig_atomic_t interrupts;

static void on_signal(int sig)
{
    struct loop_cli *lc = running;

    if (!lc || !lc->lp)
        return;
    if (sig == SIGINT && interrupts++ > 0) {
        lil_loop_interrupt(lc->lp, LIL_LOOP_INTERRUPT_KILL);
        progress_say_abandoned();
        _exit(128 + SIGINT);
    }
    if (sig == SIGINT)
        progress_say_stopping();
    lil_loop_interrupt(lc->lp, LIL_LOOP_INTERRUPT_STOP);
}

void loop_cli_signals(struct loop_cli *lc)
{
    running = lc;
    interrupts = 0;
    cli_catch_signals(on_signal);
}

void loop_cli_signals_off(void)
{
    (void)signal(SIGINT, SIG_DFL);
    (void)signal(SIGTERM, SIG_DFL);
    running = NULL;
}

const char *loop_cli_hint(const struct loop_cli *lc, const char *verb, const char *tail,
                          char *buf, size_t cap)
{
    const char *id = lc->lp ? lil_loop_run_id(lc->lp) : NULL;
    struct cli_hint_run r = {lc->ctx, lc->spec_path, id ? id : lc->run_id,
                             lc->spec ? lil_spec_id(lc->spec) : NULL};

    return cli_hint(&r, verb, tail, buf, cap);
}
