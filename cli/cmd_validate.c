/*
 * cmd_validate.c -- `lil validate SPEC... [--json]`: load loop specs and
 * report every problem at once, the way a compiler does.
 *
 * For each SPEC, in order: one block per diagnostic (diag_print.c), then
 * the verdict line ("loop.yaml: ✓ valid — 1 warning(s), 0 note(s)").  A
 * file that cannot be read is an error on stderr ("lil: validate: ...",
 * naming the path) and the next SPEC is still checked.  With --json: for
 * one SPEC one document {"file", "ok", "errors", "warnings", "infos",
 * "diagnostics"}, for several an array of them (an unreadable file becomes
 * a document with one error of code "io").
 *
 * Exit status: 0 when no SPEC has an error (warnings and notes are
 * allowed), 1 when one has or cannot be read, 64 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "spec_cli.h"

/* Validate path; append its document to docs (--json) or print the text.
 * Returns CLI_EXIT_OK or CLI_EXIT_FAIL; *nomem is set when a document
 * could not be built. */
static int validate_one(const struct cli_ctx *ctx, lil_env *env, const char *path,
                        json_t *docs, bool *nomem)
{
    lil_spec *spec = NULL;
    char msg[1024];
    json_t *doc;
    int ok;

    if (cli_spec_load(env, path, &spec, msg, sizeof(msg)) != LIL_OK) {
        cli_err(ctx, "%s", msg);
        doc = docs ? cli_diag_json_failed(cli_spec_name(path), msg) : NULL;
        if (docs && json_array_append_new(docs, doc) != 0)
            *nomem = true;
        return CLI_EXIT_FAIL;
    }
    ok = lil_spec_ok(spec);
    path = cli_spec_name(path);
    if (docs) {
        if (json_array_append_new(docs, cli_diag_json(spec, path)) != 0)
            *nomem = true;
    } else {
        cli_diag_print(stdout, spec, path);
        cli_diag_summary(stdout, spec, path);
    }
    lil_spec_free(spec);
    return ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* Print the collected documents: the only one, or the array. */
static int print_docs(const struct cli_ctx *ctx, json_t *docs, size_t n, bool nomem)
{
    json_t *out = NULL;

    if (nomem) {
        json_decref(docs);
        return cli_json_print(ctx, NULL, false);
    }
    if (n == 1) {
        out = json_incref(json_array_get(docs, 0));
        json_decref(docs);
    } else {
        out = docs;
    }
    return cli_json_print(ctx, out, false);
}

static int validate_all(const struct cli_ctx *ctx, const char **pos, size_t n)
{
    lil_env *env = NULL;
    json_t *docs = NULL;
    bool nomem = false;
    int rc = CLI_EXIT_OK, jrc;

    if (lil_env_new(&env) != LIL_OK) {
        cli_err(ctx, "cannot create an environment: %s", lil_errmsg());
        return CLI_EXIT_FAIL;
    }
    if (ctx->json && !(docs = json_array()))
        nomem = true;
    for (size_t i = 0; i < n; i++) {
        if (validate_one(ctx, env, pos[i], docs, &nomem) != CLI_EXIT_OK)
            rc = CLI_EXIT_FAIL;
    }
    lil_env_free(env);
    if (!ctx->json)
        return rc;
    jrc = print_docs(ctx, docs, n, nomem);
    return jrc != CLI_EXIT_OK ? jrc : rc;
}

static int cmd_validate(struct cli_ctx *ctx, int argc, char **argv)
{
    const struct cli_args a = {NULL, NULL, NULL};
    const char **pos = NULL;
    size_t n = 0;
    int rc;

    rc = cli_parse_any(ctx, argc, argv, &a, &pos, &n);
    if (rc == CLI_PARSE_HELP)
        rc = CLI_EXIT_OK;
    else if (rc == CLI_EXIT_OK && n == 0)
        rc = cli_usage(ctx, "missing argument SPEC");
    else if (rc == CLI_EXIT_OK)
        rc = validate_all(ctx, pos, n);
    free(pos);
    return rc;
}

const struct cli_verb cli_verb_validate = {
    "validate",
    "check loop specs (LoopSpec v0.1) and report every problem",
    "Usage: lil validate SPEC... [--json]\n"
    "\n"
    "Load each loop spec (YAML, or JSON when the name ends in .json; \"-\"\n"
    "reads YAML from stdin), check it against LoopSpec v0.1 and print every\n"
    "diagnostic, compiler style:\n"
    "\n"
    "  loop.yaml:12:11: error: reference to undeclared state var 'state.nope' "
    "[bad-ref]\n"
    "     12 |     when: \"${state.nope == 1}\"\n"
    "        |           ^\n"
    "\n"
    "then one verdict line per SPEC:\n"
    "\n"
    "  loop.yaml: \u2713 valid (no diagnostics)\n"
    "  loop.yaml: \u2713 valid \u2014 N warning(s), M note(s)\n"
    "  loop.yaml: \u2717 invalid \u2014 N error(s), M warning(s)\n"
    "\n"
    "Severities: error (the spec cannot run), warning (likely a mistake),\n"
    "note (what normalization did, e.g. caps injected).  A diagnostic without\n"
    "a position reads \"loop.yaml: error: ... [code] (at PATH)\".  Control\n"
    "characters and bytes that are not UTF-8 are shown as \\xNN.\n"
    "\n"
    "Flags:\n"
    "  --json      {\"file\", \"ok\", \"errors\", \"warnings\", \"infos\",\n"
    "              \"diagnostics\": [{\"severity\", \"code\", \"message\", "
    "\"path\",\n"
    "              \"line\", \"column\"}]}; an array of them for several SPECs\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0 every SPEC is valid\n"
    "(warnings allowed); 1 a SPEC has an error or cannot be read; 64 on a\n"
    "usage error.\n",
    cmd_validate,
};
