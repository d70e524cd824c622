/*
 * cmd_mcp.c -- `lil mcp`: serve the Model Context Protocol on stdio, or
 * Streamable HTTP with --http (docs/mcp.md).  The server is in cli/mcp/;
 * this file reads the flags, opens the store and picks the transport.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mcp/mcp.h"

struct mcp_flags {
    const char *spec_root, *env_allow, *http, *origins;
    bool read_only, allow_run, no_token, allow_remote;
};

/* Split a comma-separated list into a NULL-terminated array (NULL: none). */
static char **split_list(const char *list)
{
    size_t n = 1;
    char **out, *copy, *save = NULL;

    if (!list || !*list)
        return NULL;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    out = calloc(n + 2, sizeof(*out));
    copy = strdup(list);
    if (!out || !copy) {
        free(out);
        free(copy);
        return NULL;
    }
    n = 0;
    out[n++] = copy; /* the buffer, freed with the array; skipped below */
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        out[n++] = tok;
    out[n] = NULL;
    return out;
}

static int fill_opts(struct cli_ctx *ctx, const struct mcp_flags *f, struct mcp_opts *o,
                     char *root, char *exe)
{
    if (f->read_only && f->allow_run)
        return cli_usage(ctx, "--read-only and --allow-run exclude each other");
    if (cli_server_paths(ctx, f->spec_root, root, exe) != 0)
        return CLI_EXIT_FAIL;
    o->store = cli_store_dir(ctx);
    o->shared_store = ctx->shared_store;
    o->read_only = f->read_only;
    o->allow_run = f->allow_run;
    o->spec_root = root;
    o->env_allow = f->env_allow;
    o->http = f->http;
    o->lil_exe = exe;
    o->no_token = f->no_token;
    o->allow_remote = f->allow_remote;
    return CLI_EXIT_OK;
}

static int serve(struct cli_ctx *ctx, struct mcp_opts *o)
{
    struct mcp_server *srv = NULL;
    lil_store *st = NULL;
    int ex = cli_store_create(ctx, &st);

    if (ex != CLI_EXIT_OK)
        return ex;
    if (mcp_server_new(o, st, &srv) != 0) {
        cli_err(ctx, "out of memory");
        return CLI_EXIT_FAIL;
    }
    (void)signal(SIGPIPE, SIG_IGN); /* a client gone is a failed write, not a death */
    ex = o->http ? mcp_http_serve(srv) : mcp_stdio_serve(srv);
    mcp_server_free(srv);
    return ex;
}

static int cmd_mcp(struct cli_ctx *ctx, int argc, char **argv)
{
    struct mcp_flags f = {0};
    const struct cli_flag flags[] = {
        {"read-only", false, NULL, &f.read_only},
        {"allow-run", false, NULL, &f.allow_run},
        {"spec-root", true, &f.spec_root, NULL},
        {"env-allow", true, &f.env_allow, NULL},
        {"http", true, &f.http, NULL},
        {"allow-origin", true, &f.origins, NULL},
        {"no-token", false, NULL, &f.no_token},
        {"allow-remote", false, NULL, &f.allow_remote},
        {NULL, false, NULL, NULL},
    };
    static const char *const names[] = {NULL};
    struct cli_args a = {flags, names, NULL};
    struct mcp_opts o = {0};
    char root[PATH_MAX], exe[PATH_MAX];
    char **origins = NULL;
    int ex = cli_parse(ctx, argc, argv, &a);

    if (ex == CLI_EXIT_OK)
        ex = fill_opts(ctx, &f, &o, root, exe);
    if (ex == CLI_EXIT_OK) {
        origins = split_list(f.origins);
        o.origins = origins ? (const char *const *)origins + 1 : NULL;
        ex = serve(ctx, &o);
    }
    if (origins)
        free(origins[0]);
    free(origins);
    return ex == CLI_PARSE_HELP ? CLI_EXIT_OK : ex;
}

const struct cli_verb cli_verb_mcp = {
    "mcp", "serve runs to an AI assistant over the Model Context Protocol",
    "Usage: lil mcp [--dir DIR|URI] [--read-only] [--allow-run] [--spec-root DIR]\n"
    "               [--env-allow A,B] [--http HOST:PORT [--no-token]\n"
    "               [--allow-origin O,O] [--allow-remote]]\n"
    "\n"
    "Serve the Model Context Protocol: on stdin and stdout (one JSON-RPC message a\n"
    "line), or with --http over Streamable HTTP at http://HOST:PORT/mcp.  Tools\n"
    "list, read and steer the store's runs (docs/mcp.md); runs are resources\n"
    "(lil://runs/{id}) a client may subscribe to.  Loops run in child processes\n"
    "that go on when the client goes away; steering is journaled with the actor\n"
    "mcp:<client name>.\n"
    "\n"
    "Flags:\n"
    "  --read-only        offer only the tools that read (list_runs, inspect_run,\n"
    "                     run_events, validate_spec, explain_spec, doctor)\n"
    "  --allow-run        also offer start_run and submit_run: new runs of specs\n"
    "                     under --spec-root\n"
    "  --spec-root DIR    the only place specs are read from (default: the\n"
    "                     current directory)\n"
    "  --env-allow A,B    more variables the shell steps of its loops see\n"
    "  --http HOST:PORT   Streamable HTTP on a loopback address; a bearer token\n"
    "                     is printed at start ($LIL_MCP_TOKEN sets it)\n"
    "  --no-token         HTTP without the token (loopback only; for local tools)\n"
    "  --allow-origin O,O  browser origins accepted besides the server's own\n"
    "  --allow-remote     let --http bind an address other than loopback (the\n"
    "                     token is then required)\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0 the client ended the session\n"
    "(stdin closed) or the server was interrupted; 1 the store cannot be opened,\n"
    "the address cannot be bound; 64 usage.\n",
    cmd_mcp};
