/*
 * cmd_loop.c -- the loop verbs: `lil run`, `step`, `resume`, `stop`,
 * `approve`, `recover` (docs/loops.md).  Each parses its options, opens
 * the spec, the store and the loop (loop_cli.c), makes one lil_loop_* call
 * and prints its result; the exit status is the result's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loop_cli.h"

#define RUN_OPTS                                                     \
    (LOOP_OPT_RUN | LOOP_OPT_APPROVE | LOOP_OPT_YES | LOOP_OPT_WHO | \
     LOOP_OPT_CASSETTE | LOOP_OPT_SPEC | LOOP_OPT_FRESH)

enum loop_call { CALL_RUN, CALL_STEP, CALL_RESUME };

/* The call of a verb whose arguments lc holds. */
static int run_parsed(struct cli_ctx *ctx, struct loop_cli *lc, enum loop_call call)
{
    lil_loop_result res = {0};
    lil_status rc;
    int ex = loop_cli_prepare(ctx, lc, call != CALL_RESUME);

    if (ex == CLI_EXIT_OK) /* a queued run goes back to the queue (its workers) */
        ex = loop_cli_open(ctx, lc, call == CALL_RESUME ? LIL_LOOP_REQUEUE : 0u);
    if (ex != CLI_EXIT_OK)
        return ex;
    loop_cli_signals(lc);
    rc = call == CALL_RUN    ? lil_loop_run(lc->lp, &res)
         : call == CALL_STEP ? lil_loop_step(lc->lp, &res)
                             : lil_loop_resume(lc->lp, &res);
    return loop_cli_answer(ctx, lc, rc, &res);
}

static int run_like(struct cli_ctx *ctx, int argc, char **argv, unsigned mask,
                    enum loop_call call)
{
    struct loop_cli lc;
    int ex;

    memset(&lc, 0, sizeof(lc));
    ex = loop_cli_parse(ctx, argc, argv, mask, &lc);
    if (ex == CLI_EXIT_OK)
        ex = run_parsed(ctx, &lc, call);
    loop_cli_close(&lc);
    return ex == CLI_PARSE_HELP ? CLI_EXIT_OK : ex;
}

static int cmd_run(struct cli_ctx *ctx, int argc, char **argv)
{
    return run_like(ctx, argc, argv, RUN_OPTS, CALL_RUN);
}

static int cmd_step(struct cli_ctx *ctx, int argc, char **argv)
{
    return run_like(ctx, argc, argv, RUN_OPTS, CALL_STEP);
}

static const char *actor_of(const struct loop_cli *lc);

/* `lil resume --retry-failed`: the failed run re-opened, then run. */
static int retry_failed(struct cli_ctx *ctx, struct loop_cli *lc)
{
    lil_loop_result res = {0};
    lil_status rc;
    int ex = loop_cli_prepare(ctx, lc, false);

    if (ex == CLI_EXIT_OK)
        ex = loop_cli_open(ctx, lc, LIL_LOOP_REQUEUE | LIL_LOOP_RETRY_FAILED);
    if (ex != CLI_EXIT_OK)
        return ex;
    loop_cli_signals(lc);
    rc = lil_loop_retry_failed(lc->lp, actor_of(lc), lc->reason, &res);
    return loop_cli_answer(ctx, lc, rc, &res);
}

static int cmd_resume(struct cli_ctx *ctx, int argc, char **argv)
{
    struct loop_cli lc;
    int ex;

    memset(&lc, 0, sizeof(lc));
    ex = loop_cli_parse(ctx, argc, argv,
                        LOOP_OPT_APPROVE | LOOP_OPT_YES | LOOP_OPT_WHO | LOOP_OPT_SPEC |
                            LOOP_OPT_RETRY,
                        &lc);
    if (ex == CLI_EXIT_OK && lc.retry_failed && lc.approve)
        ex = cli_usage(ctx, "--retry-failed goes without --approve: a failed run "
                            "has no pause to approve");
    if (ex == CLI_EXIT_OK)
        ex = lc.retry_failed ? retry_failed(ctx, &lc)
                             : run_parsed(ctx, &lc, CALL_RESUME);
    loop_cli_close(&lc);
    return ex == CLI_PARSE_HELP ? CLI_EXIT_OK : ex;
}

/* ---- stop
 * ------------------------------------------------------------------------------ */

/* {"status":"stop-requested","request":{"version","runId","actor","reason"}}
 * (the reference's answer; the journaled request also has its time). */
static int print_request(const struct cli_ctx *ctx, const char *id, const char *actor,
                         const char *reason)
{
    json_t *o = json_pack("{s:s, s:{s:i, s:s, s:s, s:s}}", "status", "stop-requested",
                          "request", "version", 1, "runId", id, "actor",
                          actor && *actor ? actor : "unknown", "reason", reason);

    return cli_json_print(ctx, o, true);
}

static const char *actor_of(const struct loop_cli *lc)
{
    return lc->actor ? lc->actor : cli_user("unknown");
}

/* The start of a verb that needs --reason (verb names it): parse argv into
 * lc (zeroed first) and prepare it. */
static int parse_with_reason(struct cli_ctx *ctx, int argc, char **argv,
                             const char *verb, unsigned mask, struct loop_cli *lc)
{
    int ex;

    memset(lc, 0, sizeof(*lc));
    ex = loop_cli_parse(ctx, argc, argv, LOOP_OPT_WHO | mask, lc);
    if (ex == CLI_EXIT_OK && !lc->reason_set)
        ex = cli_usage(ctx, "%s requires --reason <text>", verb);
    if (ex == CLI_EXIT_OK)
        ex = loop_cli_prepare(ctx, lc, false);
    return ex;
}

/* The start of `lil stop`: like parse_with_reason, but the run need not
 * exist (*started says whether it does). */
static int parse_stop(struct cli_ctx *ctx, int argc, char **argv, struct loop_cli *lc,
                      bool *started)
{
    int ex;

    memset(lc, 0, sizeof(*lc));
    *started = false;
    ex = loop_cli_parse(ctx, argc, argv, LOOP_OPT_WHO, lc);
    if (ex == CLI_EXIT_OK && !lc->reason_set)
        ex = cli_usage(ctx, "stop requires --reason <text>");
    if (ex == CLI_EXIT_OK)
        ex = loop_cli_prepare_stop(ctx, lc, started);
    return ex;
}

static int cmd_stop(struct cli_ctx *ctx, int argc, char **argv)
{
    char h1[8192], h2[8192];
    struct loop_cli lc;
    const char *id;
    bool started;
    lil_status rc;
    int ex;

    ex = parse_stop(ctx, argc, argv, &lc, &started);
    if (ex == CLI_EXIT_OK) {
        id = lc.run_id ? lc.run_id : lil_spec_id(lc.spec);
        rc = lil_loop_request_stop(lc.st, id, actor_of(&lc), lc.reason);
        if (rc != LIL_OK)
            ex = cli_fail(ctx, rc, "%s", lil_store_errmsg(lc.st));
        else if (ctx->json)
            ex = print_request(ctx, id, actor_of(&lc), lc.reason);
        else if (started)
            printf("stop requested for run '%s': it stops at its next iteration "
                   "boundary; `%s` goes on\n",
                   id, loop_cli_hint(&lc, "resume", NULL, h1, sizeof(h1)));
        else
            printf("stop requested for run '%s', which has not started: its first "
                   "`%s` ends stopped before any step; `%s` then goes on\n",
                   id, loop_cli_hint(&lc, "run", NULL, h1, sizeof(h1)),
                   loop_cli_hint(&lc, "resume", NULL, h2, sizeof(h2)));
    }
    loop_cli_close(&lc);
    return ex == CLI_PARSE_HELP ? CLI_EXIT_OK : ex;
}

static int close_with(struct loop_cli *lc, int ex)
{
    loop_cli_close(lc);
    return ex == CLI_PARSE_HELP ? CLI_EXIT_OK : ex;
}

/* ---- approve and recover
 * ---------------------------------------------------------------- */

/* The pause the run waits at now (from lil_loop_current): its "pause"
 * object (a new reference), or NULL when it is not paused. */
static json_t *current_pause(struct loop_cli *lc)
{
    lil_loop_result now = {0};
    json_t *o = NULL, *p = NULL;

    if (lil_loop_current(lc->lp, &now) == LIL_OK && now.status == LIL_LOOP_PAUSED &&
        now.json && (o = json_loads(now.json, 0, NULL)))
        p = json_incref(json_object_get(o, "pause"));
    json_decref(o);
    lil_loop_result_free(&now);
    return json_is_object(p) ? p : (json_decref(p), NULL);
}

static const char *member(const json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));

    return v ? v : "";
}

/* The pending action of pause p, for people (stderr: escaped as all of it). */
static void show_pause(const char *run_id, const json_t *p)
{
    long long it = (long long)json_integer_value(json_object_get(p, "iteration"));

    if (strcmp(member(p, "kind"), "cap") == 0)
        fprintf(stderr, "run '%s' waits at %s: cap %s tripped at iteration %lld%s%s\n",
                run_id, member(p, "id"), member(p, "cap"), it,
                json_object_get(p, "detail") ? ": " : "", member(p, "detail"));
    else
        fprintf(stderr,
                "run '%s' waits at %s: iteration %lld, step %s [strategy: %s]: %s\n",
                run_id, member(p, "id"), it, member(p, "step"), member(p, "strategy"),
                member(p, "ask"));
    fprintf(stderr, "  digest %s\n", member(p, "digest"));
}

/* y/N on the terminal (/dev/tty); false for anything but y or yes. */
static bool ask_terminal(void)
{
    FILE *tty = fopen("/dev/tty", "r");
    char line[32] = "";
    bool yes;

    if (!tty)
        return false;
    fprintf(stderr, "approve it? [y/N] ");
    (void)fflush(stderr);
    yes = fgets(line, sizeof(line), tty) &&
          (strcmp(line, "y\n") == 0 || strcmp(line, "yes\n") == 0 ||
           strcmp(line, "Y\n") == 0);
    (void)fclose(tty);
    return yes;
}

/* Neither --pause, --digest nor --current: show the pending action and ask
 * on a terminal; a script must name the pause (64). */
static int approve_asked(struct cli_ctx *ctx, struct loop_cli *lc, lil_loop_result *res)
{
    const char *id = lil_loop_run_id(lc->lp);
    json_t *p = current_pause(lc);
    int ex = CLI_EXIT_OK;
    lil_status rc;

    if (!p) /* not paused: the library says so */
        return loop_cli_answer(
            ctx, lc, lil_loop_approve(lc->lp, actor_of(lc), lc->reason, res), res);
    if (!isatty(0)) {
        ex = cli_usage(ctx,
                       "run '%s' waits at pause %s (digest %s); a script names the "
                       "pause it approves: --pause %s (or --digest D), or --current "
                       "for whatever pause is current",
                       id ? id : "?", member(p, "id"), member(p, "digest"),
                       member(p, "id"));
    } else {
        show_pause(id ? id : "?", p);
        if (!ask_terminal()) {
            cli_err(ctx, "not approved: nothing was journaled");
            ex = CLI_EXIT_FAIL;
        }
    }
    if (ex == CLI_EXIT_OK) {
        rc = lil_loop_approve_pause(lc->lp, member(p, "id"), member(p, "digest"),
                                    actor_of(lc), lc->reason, res);
        ex = loop_cli_answer(ctx, lc, rc, res);
    }
    json_decref(p);
    return ex;
}

static int cmd_approve(struct cli_ctx *ctx, int argc, char **argv)
{
    struct loop_cli lc;
    lil_loop_result res = {0};
    lil_status rc;
    int ex;

    ex = parse_with_reason(ctx, argc, argv, "approve", LOOP_OPT_PAUSE | LOOP_OPT_SPEC,
                           &lc);
    if (ex == CLI_EXIT_OK)
        ex = loop_cli_open(ctx, &lc, LIL_LOOP_REQUEUE);
    if (ex == CLI_EXIT_OK) {
        loop_cli_signals(&lc);
        if (!lc.current && !lc.pause_id && !lc.digest)
            return close_with(&lc, approve_asked(ctx, &lc, &res));
        rc = lil_loop_approve_pause(lc.lp, lc.pause_id, lc.digest, actor_of(&lc),
                                    lc.reason, &res);
        ex = loop_cli_answer(ctx, &lc, rc, &res);
    }
    return close_with(&lc, ex);
}

static int recover_args(struct cli_ctx *ctx, const struct loop_cli *lc,
                        lil_resolution *how)
{
    int n = (int)lc->retry + (int)lc->assume_done + (int)lc->abort;

    if (n != 1)
        return cli_usage(ctx,
                         "recover requires exactly one of --retry, --assume-done, or "
                         "--abort");
    if (!lc->reason_set)
        return cli_usage(ctx, "recover requires --reason <text>");
    if (lc->assume_done && !lc->result_set)
        return cli_usage(ctx, "--assume-done requires --result-json <json>");
    if (lc->result_set && !lc->assume_done)
        return cli_usage(ctx, "--result-json goes only with --assume-done");
    if (lc->approve && !lc->retry)
        return cli_usage(ctx, "--approve goes only with --retry");
    *how = lc->retry         ? LIL_RESOLVE_RETRY
           : lc->assume_done ? LIL_RESOLVE_ASSUME_DONE
                             : LIL_RESOLVE_ABORT;
    return CLI_EXIT_OK;
}

static int cmd_recover(struct cli_ctx *ctx, int argc, char **argv)
{
    struct loop_cli lc;
    lil_loop_result res = {0};
    lil_resolution how = LIL_RESOLVE_RETRY;
    lil_status rc;
    int ex;

    memset(&lc, 0, sizeof(lc));
    ex = loop_cli_parse(ctx, argc, argv,
                        LOOP_OPT_WHO | LOOP_OPT_RECOVER | LOOP_OPT_APPROVE, &lc);
    if (ex == CLI_EXIT_OK)
        ex = recover_args(ctx, &lc, &how);
    if (ex == CLI_EXIT_OK && lc.result_set) {
        json_error_t jerr;
        json_t *v = json_loads(lc.result_json, JSON_DECODE_ANY, &jerr);

        if (!v)
            ex = cli_usage(ctx, "invalid --result-json: %s", jerr.text);
        json_decref(v);
    }
    if (ex == CLI_EXIT_OK)
        ex = loop_cli_prepare(ctx, &lc, false);
    if (ex == CLI_EXIT_OK)
        ex = loop_cli_open(ctx, &lc, LIL_LOOP_REQUEUE);
    if (ex == CLI_EXIT_OK) {
        loop_cli_signals(&lc);
        rc = lil_loop_recover(lc.lp, how, lc.result_set ? lc.result_json : NULL,
                              actor_of(&lc), lc.reason, &res);
        ex = loop_cli_answer(ctx, &lc, rc, &res);
    }
    loop_cli_close(&lc);
    return ex == CLI_PARSE_HELP ? CLI_EXIT_OK : ex;
}

/* ---- the verbs
 * ---------------------------------------------------------------------------- */

#define LOOP_EXIT_HELP                                                                    \
    "\nExit status (the table is in `lil --help`): 0 completed, 1 failed, 2 uncertain,\n" \
    "3 paused, 4 waiting, 5 stopped, 64 usage, 75 held by another process.\n"

#define PROGRESS_HELP                                                                  \
    "  --progress auto|plain|json|off  what the run does, on stderr: a line (plain)\n" \
    "                       or a JSON object (json) per event, or nothing (off);\n"    \
    "                       auto (the default): the terminal line on a terminal,\n"    \
    "                       else plain.  Ctrl-C stops after the current effect;\n"     \
    "                       a second abandons it (exit 130)\n"

#define RUN_FLAGS_HELP                                                                   \
    "  --run-id ID          the run (default: the spec's id)\n"                          \
    "  --fresh              a new run under a new id (printed), the spec's run left\n"   \
    "                       as it is\n"                                                  \
    "  --input NAME=VALUE   an input, converted to its declared type (repeatable)\n"     \
    "  --inputs FILE.json   inputs as a JSON object (--input wins)\n"                    \
    "  --sync full|normal|off  durability of the journal (default $LIL_SYNC, full)\n"    \
    "  --approve            approve a cap that paused the run (rebases that meter)\n"    \
    "  --yes                approve every breakpoint and gate reached\n"                 \
    "  --wait               sleep in-process through parks instead of returning\n"       \
    "  --env-allow A,B      more variables shell steps and agents see (NAME, PREFIX*)\n" \
    "  --actor A, --reason R  who and why, journaled with approvals\n"                   \
    "  --accept-spec-change  run on with a spec other than the one the run is bound\n"   \
    "                       to (refused otherwise); journaled with who and why\n"        \
    "  --record FILE        write every shell, http and agent result to FILE (JSONL)\n"  \
    "  --replay FILE        answer every effect from FILE, run nothing (run id\n"        \
    "                       ID-replay unless --run-id)\n"                                \
    "  --json               print the result as JSON\n" PROGRESS_HELP LOOP_EXIT_HELP

const struct cli_verb cli_verb_run = {
    "run", "run a loop spec until it completes, parks, pauses or stops",
    "Usage: lil run SPEC [OPTIONS]\n\n"
    "Run the loop of SPEC durably: each effect is journaled before it starts and\n"
    "never runs twice; a killed run goes on from its last committed iteration.\n\n" RUN_FLAGS_HELP,
    cmd_run};

const struct cli_verb cli_verb_step = {
    "step", "run exactly one iteration of a loop spec",
    "Usage: lil step SPEC [OPTIONS]\n\n"
    "Like `lil run`, for one iteration; a run with more to do is waiting (4)\n"
    "with next.iteration.\n\n" RUN_FLAGS_HELP,
    cmd_step};

/* resume's flags, one a line (the parser's: cmd_resume's mask). */
#define RESUME_FLAGS_HELP                                                              \
    "Flags:\n"                                                                         \
    "  --run-id ID          the run (default: the spec's id)\n"                        \
    "  --actor A, --reason R  who resumes and why, journaled (default: $USER,\n"       \
    "                       \"explicit resume\")\n"                                    \
    "  --approve            approve a cap that paused the run (rebases that meter)\n"  \
    "  --yes                approve every breakpoint and gate reached\n"               \
    "  --accept-spec-change  run on with a spec other than the one the run is bound\n" \
    "                       to (refused otherwise); journaled with who and why\n"      \
    "  --retry-failed       re-open a failed run from its failed iteration\n"          \
    "  --json               print the result as JSON\n" PROGRESS_HELP

const struct cli_verb cli_verb_resume = {
    "resume", "clear an honoured stop request and run on",
    "Usage: lil resume SPEC [FLAGS]\n\n"
    "Journal who resumed and why, then run as `lil run`.  A spec other than the\n"
    "one the run is bound to is refused (exit 1, nothing written) unless\n"
    "--accept-spec-change accepts it.  A queued run (`lil submit`) goes back to\n"
    "the queue instead: a worker runs it (exit 4).  --retry-failed re-opens a\n"
    "failed run from the iteration it failed in: the effects that failed run\n"
    "again, what completed is kept (replayed, not run); journaled (retried.N).\n"
    "A run that a cap failed goes on only when the cap allows it now (its limit\n"
    "raised in the spec: --accept-spec-change).  Refused (exit 1, nothing\n"
    "written) for a run that has not failed or that a cap still stops; 75 when\n"
    "another process holds the run.\n"
    "\n" RESUME_FLAGS_HELP LOOP_EXIT_HELP,
    cmd_resume};

const struct cli_verb cli_verb_stop = {
    "stop", "ask a loop run to stop at its next iteration boundary",
    "Usage: lil stop SPEC [--run-id ID] --reason R [--actor A] [--json]\n\n"
    "Publish a stop request beside the run's journal; no lock is needed, so it\n"
    "works while another process runs the loop.  A second request is refused, so is\n"
    "one for a run that has ended.  A run that has not started yet may be asked\n"
    "too: its first `lil run` (or step, or worker) ends stopped before any step.\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0 the request is published (the\n"
    "run stops at its next iteration boundary); 1 a stop is already requested, the\n"
    "run has ended, the spec cannot be read or is invalid, an I/O error; 65 the\n"
    "run's keyed journal is behind its rollback record; 64 usage error.  stop\n"
    "waits for nothing and takes no lock: it never exits 2 to 5 or 75.\n",
    cmd_stop};

const struct cli_verb cli_verb_approve = {
    "approve", "approve the breakpoint, gate or cap a paused run waits at",
    "Usage: lil approve SPEC [--run-id ID] (--pause ID | --digest D | --current)\n"
    "                   --reason R [--actor A] [--accept-spec-change] [--json]\n\n"
    "The approval is journaled with who and why (and the OS user), bound to that\n"
    "pause only, and the run goes on (a queued run: back in the queue, for a\n"
    "worker; exit 4).  A run that is not paused is refused (exit 1).\n\n"
    "Every pause has an id (pause.N, cap.N) and a digest of what it asks, shown\n"
    "by `lil run`, `lil inspect` and `lil ls --json`.  --pause and --digest (a\n"
    "prefix of 8 or more digits) name the pause approved: another pause is\n"
    "refused (exit 1, nothing journaled), so a late approver never releases a\n"
    "later pause.  Without them, on a terminal, the pending action is shown and\n"
    "asked y/N; in a script (stdin not a terminal) --current approves whatever\n"
    "pause is current, and without it approve refuses (exit 64) naming the pause.\n"
    "\n" PROGRESS_HELP LOOP_EXIT_HELP,
    cmd_approve};

const struct cli_verb cli_verb_recover = {
    "recover", "decide the uncertain effect of a loop run",
    "Usage: lil recover SPEC [--run-id ID] (--retry [--approve] | --assume-done\n"
    "                   --result-json JSON | --abort) --reason R [--actor A] [--json]\n\n"
    "retry runs the effect again; assume-done takes JSON as its result without\n"
    "running it; abort stops the run for good.  Then the run goes on (a queued run:\n"
    "back in the queue, for a worker; exit 4).  An uncertain agent call stays\n"
    "counted at its reservation whatever is decided (the result's detail says\n"
    "how much); its retry reserves again, and --approve approves at once the\n"
    "token or usd budget cap (a breakpoint) that this retry's check trips,\n"
    "journaled with the same actor and reason.\n"
    "\n" PROGRESS_HELP LOOP_EXIT_HELP,
    cmd_recover};
