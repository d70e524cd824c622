/*
 * cmd_submit.c -- `lil submit SPEC [--run-id ID] [--input NAME=VALUE]...
 * [--inputs FILE.json] [--sync full|normal|off] [--json]`: queue a loop run
 * in a PostgreSQL store for `lil worker` (docs/postgres.md, "Workers").
 *
 * The spec is loaded and validated here (an invalid one prints its
 * diagnostics and queues nothing: exit 1), the inputs resolved and checked
 * (lil_loop_submit: exit 1 naming the input), and the run created with the
 * spec's text, so that a worker on another machine needs no file.  The run
 * id is printed (--json: {"run", "status": "queued"}).  A store directory
 * has no queue: refused before anything is opened (exit 64, naming what to
 * use).  A run id that exists: exit 1.
 */
#include <stdio.h>
#include <string.h>

#include "loop_cli.h"

/* submit and worker: a store directory is one machine's. */
int cli_need_queue(const struct cli_ctx *ctx)
{
    const char *where = cli_store_dir(ctx);

    if (cli_store_is_url(where))
        return CLI_EXIT_OK;
    return cli_usage(
        ctx,
        "`lil %s` needs a PostgreSQL store (--dir postgresql://... or LIL_DIR): "
        "'%s' is a store directory, which keeps no queue (on one machine, "
        "run loops with `lil run` and parked ones with `lil tick`)",
        ctx->verb->name, where);
}

static int print_queued(const struct cli_ctx *ctx, const struct loop_cli *lc,
                        const char *id)
{
    if (ctx->json)
        return cli_json_print(
            ctx, json_pack("{s:s, s:s}", "run", id, "status", "queued"), true);
    printf("queued run '%s' (%s): `lil worker` runs it\n", id, lc->spec_path);
    return CLI_EXIT_OK;
}

static int cmd_submit(struct cli_ctx *ctx, int argc, char **argv)
{
    struct loop_cli lc;
    lil_loop_opts o;
    char *id = NULL;
    lil_status rc;
    int ex;

    memset(&lc, 0, sizeof(lc));
    ex = loop_cli_parse(ctx, argc, argv, LOOP_OPT_SUBMIT, &lc);
    if (ex == CLI_EXIT_OK)
        ex = cli_need_queue(ctx);
    if (ex == CLI_EXIT_OK)
        ex = loop_cli_prepare(ctx, &lc, true);
    if (ex == CLI_EXIT_OK) {
        memset(&o, 0, sizeof(o));
        o.struct_size = sizeof(o);
        o.run_id = lc.run_id;
        o.sync = loop_cli_sync(lc.sync);
        o.inputs_json = lc.inputs_json;
        o.input_pairs = lc.input_pairs;
        o.n_input_pairs = lc.n_input_pairs;
        rc = lil_loop_submit(lc.st, lc.spec, &o, &id);
        ex = rc == LIL_OK ? print_queued(ctx, &lc, id)
                          : cli_fail(ctx, rc, "%s", lil_store_errmsg(lc.st));
    }
    lil_free(id);
    loop_cli_close(&lc);
    return ex == CLI_PARSE_HELP ? CLI_EXIT_OK : ex;
}

const struct cli_verb cli_verb_submit = {
    "submit", "queue a loop run in a PostgreSQL store for `lil worker`",
    "Usage: lil --dir postgresql://... submit SPEC [--run-id ID] [--input NAME=VALUE]...\n"
    "                  [--inputs FILE.json] [--sync full|normal|off] [--json]\n\n"
    "Queue a loop run of SPEC: the run is created with the spec's text and its\n"
    "inputs (checked now), and the first `lil worker` that is free claims and runs\n"
    "it, on any machine.  The run id (default: the spec's id) is printed.\n\n"
    "  --run-id ID          the run (it must not exist)\n"
    "  --input NAME=VALUE   an input, converted to its declared type (repeatable)\n"
    "  --inputs FILE.json   inputs as a JSON object (--input wins)\n"
    "  --sync MODE          the run's durability (default $LIL_SYNC, full)\n"
    "  --json               print {\"run\", \"status\": \"queued\"}\n\n"
    "Exit status: 0 queued; 1 an invalid spec (its diagnostics), bad inputs, a run\n"
    "that exists, the server's error; 64 usage, also a store directory (no queue).\n",
    cmd_submit};
