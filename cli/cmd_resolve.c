/*
 * cmd_resolve.c -- `lil resolve RUN IDENTITY (--retry | --assume-done
 * [--result TEXT] | --abort) --actor WHO --reason TEXT`.
 *
 * Decides an uncertain effect (an intent without an outcome) with
 * lil_run_resolve; the decision is journaled, synced, with actor and reason.
 *
 * The identity is checked first on a read-only handle, so a typo writes
 * nothing to the journal (opening a run for writing journals an "open"
 * record).  Then the run is opened for writing, which needs its lock:
 * CLI_EXIT_LOCKED (75) while another process holds it, with the library's
 * message that names the holder's pid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define ACTOR_MAX  200
#define REASON_MAX 1000

struct resolve_args {
    const char *run_id, *identity;
    lil_resolution how;
    const char *result; /* --assume-done only; NULL if not given */
    const char *actor, *reason;
};

static const char *how_name(lil_resolution how)
{
    switch (how) {
    case LIL_RESOLVE_RETRY:
        return "retry";
    case LIL_RESOLVE_ASSUME_DONE:
        return "assume-done";
    case LIL_RESOLVE_ABORT:
        return "abort";
    }
    return "?";
}

/* $USER when set and not empty, else "cli". */
static const char *default_actor(void)
{
    return cli_user("cli");
}

struct resolve_flags {
    bool retry, assume, abort, result_set, actor_set, reason_set;
    const char *result, *actor, *reason;
};

/* Check the combination of flags and fill *out. */
static int validate(const struct cli_ctx *ctx, const struct resolve_flags *f,
                    struct resolve_args *out)
{
    int n = (int)f->retry + (int)f->assume + (int)f->abort;

    if (n != 1)
        return cli_usage(ctx, "give exactly one of --retry, --assume-done, --abort");
    if (f->result_set && !f->assume)
        return cli_usage(ctx, "--result goes only with --assume-done");
    if (!f->reason_set || !*f->reason)
        return cli_usage(ctx, "missing --reason (why this decision is right)");
    out->actor = f->actor_set ? f->actor : default_actor();
    if (!*out->actor || strlen(out->actor) > ACTOR_MAX)
        return cli_usage(ctx, "--actor must be 1 to %d bytes", ACTOR_MAX);
    if (strlen(f->reason) > REASON_MAX)
        return cli_usage(ctx, "--reason must be at most %d bytes", REASON_MAX);
    out->how = f->retry    ? LIL_RESOLVE_RETRY
               : f->assume ? LIL_RESOLVE_ASSUME_DONE
                           : LIL_RESOLVE_ABORT;
    out->result = f->result_set ? f->result : NULL;
    out->reason = f->reason;
    return CLI_EXIT_OK;
}

static int parse(struct cli_ctx *ctx, int argc, char **argv, struct resolve_args *ra)
{
    static const char *const names[] = {"RUN", "IDENTITY", NULL};
    const char *pos[2] = {NULL, NULL};
    struct resolve_flags f;
    memset(&f, 0, sizeof(f));
    const struct cli_flag flags[] = {
        {"retry", false, NULL, &f.retry},
        {"assume-done", false, NULL, &f.assume},
        {"abort", false, NULL, &f.abort},
        {"result", true, &f.result, &f.result_set},
        {"actor", true, &f.actor, &f.actor_set},
        {"reason", true, &f.reason, &f.reason_set},
        {NULL, false, NULL, NULL},
    };
    struct cli_args a = {flags, names, pos};
    int rc = cli_parse(ctx, argc, argv, &a);

    if (rc != CLI_EXIT_OK)
        return rc;
    ra->run_id = pos[0];
    ra->identity = pos[1];
    return validate(ctx, &f, ra);
}

/* Say why identity cannot be resolved: name the run's uncertain effects,
 * or say that it has none. */
static void explain_not_uncertain(const struct cli_ctx *ctx, lil_run *run,
                                  const char *identity)
{
    size_t n = lil_run_uncertain_count(run);
    char list[512] = "";
    size_t at = 0;

    if (n == 0) {
        cli_err(ctx, "run '%s' has no uncertain effect (status %s)", lil_run_id(run),
                lil_run_state_name(lil_run_status(run)));
        return;
    }
    for (size_t i = 0; i < n && at < sizeof(list); i++) {
        const char *id = lil_run_uncertain_at(run, i);
        int w = snprintf(list + at, sizeof(list) - at, "%s%s", i ? ", " : "",
                         id ? id : "?");
        at += w > 0 ? (size_t)w : 0;
    }
    cli_err(ctx, "'%s' is not an uncertain effect of run '%s' (uncertain: %s)",
            identity, lil_run_id(run), list);
}

/* Read-only look: is identity one of the run's uncertain effects? */
static int precheck(const struct cli_ctx *ctx, lil_store *st,
                    const struct resolve_args *ra)
{
    lil_run *run = NULL;
    int rc = cli_run_open(ctx, st, ra->run_id, true, &run);
    bool found = false;

    if (rc != CLI_EXIT_OK)
        return rc;
    for (size_t i = 0; i < lil_run_uncertain_count(run) && !found; i++) {
        const char *id = lil_run_uncertain_at(run, i);
        found = id && strcmp(id, ra->identity) == 0;
    }
    if (!found)
        explain_not_uncertain(ctx, run, ra->identity);
    lil_run_close(run);
    return found ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

static int report(const struct cli_ctx *ctx, const struct resolve_args *ra,
                  lil_run_state state)
{
    json_t *o;

    if (!ctx->json) {
        printf("resolved '%s' of run '%s': %s (by %s: %s); the run is now %s\n",
               ra->identity, ra->run_id, how_name(ra->how), ra->actor, ra->reason,
               lil_run_state_name(state));
        return CLI_EXIT_OK;
    }
    o = json_object();
    cli_json_set(o, "run", cli_json_str(ra->run_id, strlen(ra->run_id)));
    cli_json_set(o, "identity", cli_json_str(ra->identity, strlen(ra->identity)));
    cli_json_set(o, "resolution", json_string(how_name(ra->how)));
    cli_json_set(o, "actor", cli_json_str(ra->actor, strlen(ra->actor)));
    cli_json_set(o, "reason", cli_json_str(ra->reason, strlen(ra->reason)));
    cli_json_set(o, "status", json_string(lil_run_state_name(state)));
    return cli_json_print(ctx, o, false);
}

static int resolve(const struct cli_ctx *ctx, lil_store *st,
                   const struct resolve_args *ra)
{
    lil_run *run = NULL;
    const char *res = ra->result;
    lil_status rc;
    lil_run_state state;
    int ret = cli_run_open(ctx, st, ra->run_id, false, &run);

    if (ret != CLI_EXIT_OK)
        return ret;
    rc = lil_run_resolve(run, ra->identity, ra->how, res, res ? strlen(res) : 0,
                         ra->actor, ra->reason);
    state = lil_run_status(run);
    if (rc != LIL_OK) {
        ret = cli_fail(ctx, rc, "%s", lil_run_errmsg(run));
        lil_run_close(run);
        return ret;
    }
    rc = lil_run_close(run);
    if (rc != LIL_OK)
        return cli_fail(ctx, rc, "closing run '%s': %s", ra->run_id, lil_errmsg());
    return report(ctx, ra, state);
}

static int cmd_resolve(struct cli_ctx *ctx, int argc, char **argv)
{
    struct resolve_args ra;
    lil_store *st = NULL;
    int rc;

    memset(&ra, 0, sizeof(ra));
    rc = parse(ctx, argc, argv, &ra);
    if (rc != CLI_EXIT_OK)
        return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    rc = cli_run_id_ok(ctx, ra.run_id);
    if (rc == CLI_EXIT_OK)
        rc = cli_store_open(ctx, &st);
    if (rc == CLI_EXIT_OK)
        rc = precheck(ctx, st, &ra);
    if (rc == CLI_EXIT_OK)
        rc = resolve(ctx, st, &ra);
    lil_store_close(st);
    return rc;
}

const struct cli_verb cli_verb_resolve = {
    "resolve",
    "decide an uncertain effect: --retry, --assume-done or --abort",
    "Usage: lil resolve RUN IDENTITY (--retry | --assume-done [--result TEXT] |\n"
    "                   --abort) [--actor WHO] --reason TEXT [--dir DIR] [--json]\n"
    "\n"
    "Decide the outcome of an uncertain effect: one whose intent was journaled\n"
    "but whose process died before its outcome was (see `lil inspect RUN`).\n"
    "The decision is journaled and synced, with the actor and the reason.\n"
    "\n"
    "Flags:\n"
    "  --retry          run the effect again on the next execution (the effect\n"
    "                   may then have happened twice: at-least-once)\n"
    "  --assume-done    take the effect as done; --result TEXT is its result\n"
    "                   (empty without --result); it is not run again.  A\n"
    "                   Python step's result is JSON (--result null for None):\n"
    "                   without one its replay raises an error naming the step\n"
    "  --abort          the effect fails and the run is stopped\n"
    "  --actor WHO      who decides (default: $USER, else \"cli\"; 1-200 bytes)\n"
    "  --reason TEXT    why (required; at most 1000 bytes)\n"
    "  --json           {\"run\", \"identity\", \"resolution\", \"actor\", "
    "\"reason\",\n"
    "                   \"status\"}\n"
    "  --dir DIR        store directory (default: $LIL_DIR, else .lil)\n"
    "\n"
    "Once no uncertain effect remains the run is running again (or stopped,\n"
    "after --abort).\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0 resolved; 1 IDENTITY is not\n"
    "an uncertain effect of RUN, no such run, I/O error; 75 another process\n"
    "holds the run (the message names its pid: try again when it is done); 64\n"
    "on a usage error.\n",
    cmd_resolve,
};
