/*
 * cmd_rm.c -- `lil rm RUN... [--force]`: retire runs.
 *
 * Each run is removed with lil_run_remove: its journal and every file or
 * row the store keeps for it.  A run that has not ended (running, waiting,
 * paused, uncertain) is refused unless --force; a run a live process holds
 * is refused whatever the flags (75).  Each run is its own verdict: a
 * missing or refused run is reported and the others are still removed.
 * The exit status is 0 when every run was removed, 75 when the only
 * refusals were runs held by another process, else 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct rm_tally {
    json_t *removed, *failed; /* --json */
    int exit;
};

/* Fold one run's exit status into the verb's. */
static void tally_exit(struct rm_tally *t, int ex)
{
    if (ex == CLI_EXIT_OK || t->exit == CLI_EXIT_FAIL)
        return;
    t->exit = ex == CLI_EXIT_LOCKED ? CLI_EXIT_LOCKED : CLI_EXIT_FAIL;
}

static void rm_one(const struct cli_ctx *ctx, lil_store *st, const char *id,
                   unsigned flags, struct rm_tally *t)
{
    lil_status rc = lil_run_remove(st, id, flags);
    int ex = CLI_EXIT_OK;

    if (rc == LIL_OK && ctx->json)
        json_array_append_new(t->removed, cli_json_str(id, strlen(id)));
    else if (rc == LIL_OK)
        printf("removed run '%s'\n", id);
    else
        ex = cli_fail(ctx, rc, "%s", lil_store_errmsg(st));
    if (rc != LIL_OK && ctx->json)
        json_array_append_new(
            t->failed, json_pack("{s:o, s:s, s:i}", "run", cli_json_str(id, strlen(id)),
                                 "error", lil_store_errmsg(st), "exit", ex));
    tally_exit(t, ex);
}

static int rm_all(const struct cli_ctx *ctx, const char **ids, size_t n, bool force)
{
    struct rm_tally t = {json_array(), json_array(), CLI_EXIT_OK};
    lil_store *st = NULL;
    int ex = CLI_EXIT_OK;

    for (size_t i = 0; i < n && ex == CLI_EXIT_OK; i++)
        ex = cli_run_id_ok(ctx, ids[i]);
    if (ex == CLI_EXIT_OK)
        ex = cli_store_open(ctx, &st);
    for (size_t i = 0; ex == CLI_EXIT_OK && i < n; i++)
        rm_one(ctx, st, ids[i], force ? LIL_REMOVE_FORCE : 0u, &t);
    if (ex == CLI_EXIT_OK && ctx->json) {
        int printed = cli_json_print(
            ctx, json_pack("{s:O, s:O}", "removed", t.removed, "failed", t.failed),
            false);
        if (printed != CLI_EXIT_OK)
            t.exit = printed;
    }
    json_decref(t.removed);
    json_decref(t.failed);
    lil_store_close(st);
    return ex != CLI_EXIT_OK ? ex : t.exit;
}

static int cmd_rm(struct cli_ctx *ctx, int argc, char **argv)
{
    bool force = false;
    const struct cli_flag flags[] = {{"force", false, NULL, &force},
                                     {NULL, false, NULL, NULL}};
    const struct cli_args a = {flags, NULL, NULL};
    const char **pos = NULL;
    size_t n = 0;
    int rc;

    rc = cli_parse_any(ctx, argc, argv, &a, &pos, &n);
    if (rc == CLI_PARSE_HELP)
        rc = CLI_EXIT_OK;
    else if (rc == CLI_EXIT_OK && n == 0)
        rc = cli_usage(ctx, "missing argument RUN");
    else if (rc == CLI_EXIT_OK)
        rc = rm_all(ctx, pos, n, force);
    free(pos);
    return rc;
}

const struct cli_verb cli_verb_rm = {
    "rm", "remove runs from the store (retire them)",
    "Usage: lil rm RUN... [--force] [--json]\n"
    "\n"
    "Remove each run: its journal and everything the store keeps for it (the\n"
    "file store: RUN.lil, RUN.head, RUN.stop; PostgreSQL: its rows, its stop\n"
    "request, its place in the queue).  Markers belong to the store, not to a\n"
    "run, and stay.  A run must have ended (completed, failed or stopped);\n"
    "--force removes one that has not (running, waiting, paused, uncertain).\n"
    "A run held by a live process is never removed.  Each run is its own\n"
    "verdict: a missing or refused run is reported, the others are removed.\n"
    "--json prints {\"removed\": [RUN...], \"failed\": [{\"run\", \"error\",\n"
    "\"exit\"}]}.\n"
    "\n"
    "Exit status: 0 every run removed; 75 the only refusals were runs held by\n"
    "another process; 1 otherwise (no such run, not ended, I/O error); 64 usage.\n",
    cmd_rm};
