/*
 * cmd_db.c -- `lil db init|migrate|status`: the store's schema.
 *
 * A PostgreSQL store (--dir postgresql://...) keeps its runs in tables that
 * lil creates (init) and upgrades (migrate) itself, versioned
 * (docs/postgres.md); status says what is there.  A file store has no
 * schema: init creates its directory, migrate has nothing to do.  All
 * through lil_store_schema, which opens no store (a store does not open on
 * a missing schema).
 *
 * Exit status: init and migrate 0 when the schema is at this lil's version
 * afterwards; status 0 when it is, 1 when it is missing, older or newer
 * (the message says which and what to run); 1 on any error (the server's
 * words and what to do); 64 on a usage error.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int action_of(const char *word)
{
    if (strcmp(word, "status") == 0)
        return LIL_SCHEMA_STATUS;
    if (strcmp(word, "init") == 0)
        return LIL_SCHEMA_INIT;
    if (strcmp(word, "migrate") == 0)
        return LIL_SCHEMA_MIGRATE;
    return -1;
}

static json_t *info_json(const lil_schema_info *info)
{
    json_t *o = json_object();

    cli_json_set(o, "backend", json_string(info->backend));
    cli_json_set(o, "version", json_integer(info->version));
    cli_json_set(o, "latest", json_integer(info->latest));
    cli_json_set(o, "changed", json_boolean(info->changed));
    cli_json_set(
        o, "message",
        cli_json_str(info->message, strnlen(info->message, sizeof(info->message))));
    return o;
}

static int run_db(const struct cli_ctx *ctx, int action)
{
    lil_schema_info info;
    lil_status rc;
    int ret;

    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    rc = lil_store_schema(NULL, cli_store_dir(ctx), action, &info);
    if (rc != LIL_OK)
        return cli_fail(ctx, rc, "%s", lil_errmsg());
    ret = info.version == info.latest ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    if (ctx->json) {
        int jrc = cli_json_print(ctx, info_json(&info), false);
        return jrc != CLI_EXIT_OK ? jrc : ret;
    }
    printf("%s store: %s\n", info.backend, info.message);
    return ret;
}

static int cmd_db(struct cli_ctx *ctx, int argc, char **argv)
{
    static const char *const names[] = {"ACTION", NULL};
    const char *pos[1] = {NULL};
    struct cli_args a = {NULL, names, pos};
    int rc = cli_parse(ctx, argc, argv, &a), action;

    if (rc != CLI_EXIT_OK)
        return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    action = action_of(pos[0]);
    if (action < 0)
        return cli_usage(ctx, "unknown action '%s' (init, migrate or status)", pos[0]);
    return run_db(ctx, action);
}

const struct cli_verb cli_verb_db = {
    "db",
    "create, upgrade or show the store's schema (init, migrate, status)",
    "Usage: lil db init|migrate|status [--dir DIR] [--json]\n"
    "\n"
    "A PostgreSQL store (--dir postgresql://..., or LIL_DIR) keeps runs in\n"
    "tables of one schema (default \"lil\"; the URI's schema=NAME picks\n"
    "another), which lil creates and upgrades itself (docs/postgres.md):\n"
    "\n"
    "  init      create the schema and its tables when missing (run it once,\n"
    "            as a role that may create them); nothing when it is there\n"
    "  migrate   upgrade a schema made by an older lil to this lil's version\n"
    "  status    the schema's version, and this lil's\n"
    "\n"
    "Two lils that init or migrate at once do the work once.  A store opens\n"
    "only on a schema of this lil's version: on a missing one every verb says\n"
    "to run `lil db init`, on an older one `lil db migrate`, on a newer one\n"
    "which lil migrated it.  A file store has no schema: init creates its\n"
    "directory, migrate and status say so.\n"
    "\n"
    "Flags:\n"
    "  --json      {\"backend\", \"version\", \"latest\", \"changed\", \"message\"}\n"
    "  --dir DIR   the store (default: $LIL_DIR, else .lil)\n"
    "\n"
    "Exit status: 0 when the schema is at this lil's version (afterwards);\n"
    "1 when status finds it missing, older or newer, and on an error (the\n"
    "server's words and what to do); 64 on a usage error.\n",
    cmd_db,
};
