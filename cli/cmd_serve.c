/*
 * cmd_serve.c -- `lil serve`: the control center in the browser
 * (docs/serve.md).  The server is in cli/serve/; this file reads the
 * flags, opens the store and runs the server until SIGINT or SIGTERM.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "serve/serve.h"
#include "serve/serve_http.h"

struct serve_flags {
    const char *listen, *user, *spec_root, *env_allow;
    bool listen_given, read_only;
};

/* The store given as a word (`lil serve postgresql://...`), or none. */
static int store_word(struct cli_ctx *ctx, const char **pos, size_t npos)
{
    if (npos == 0)
        return CLI_EXIT_OK;
    if (npos > 1)
        return cli_usage(ctx, "one store at most (--dir DIR or a URI)");
    if (ctx->dir)
        return cli_usage(ctx, "the store is given twice: --dir %s and %s", ctx->dir,
                         pos[0]);
    ctx->dir = pos[0];
    return CLI_EXIT_OK;
}

static int fill_opts(struct cli_ctx *ctx, const struct serve_flags *f,
                     struct serve_opts *o, char *root, char *exe)
{
    if (f->user && !serve_user_ok(f->user))
        return cli_usage(ctx,
                         "--user: 1 to %d bytes of UTF-8 without control characters",
                         SERVE_USER_MAX);
    if (cli_server_paths(ctx, f->spec_root, root, exe) != 0)
        return CLI_EXIT_FAIL;
    o->store = cli_store_dir(ctx);
    o->shared_store = ctx->shared_store;
    o->listen = f->listen_given ? f->listen : SERVE_DEFAULT_LISTEN;
    o->listen_given = f->listen_given;
    o->read_only = f->read_only;
    o->user = f->user;
    o->spec_root = root;
    o->env_allow = f->env_allow;
    o->lil_exe = exe;
    return CLI_EXIT_OK;
}

/* Open the store, serve, close everything: the exit status. */
static int serve(struct cli_ctx *ctx, const struct serve_opts *o)
{
    struct serve srv = {.opts = *o};
    int ex = cli_store_create(ctx, &srv.store);

    if (ex != CLI_EXIT_OK)
        return ex;
    srv.is_pg = cli_store_is_url(o->store);
    srv.store_label = strdup(lil_store_path(srv.store));
    srv.jobs.lil_exe = o->lil_exe;
    srv.jobs.store = o->store;
    srv.jobs.shared_store = o->shared_store;
    srv.jobs.env_allow = o->env_allow;
    (void)signal(SIGPIPE, SIG_IGN); /* a client gone is a failed write, not a death */
    ex = srv.store_label ? serve_run(&srv) : CLI_EXIT_FAIL;
    serve_lab_free(&srv);
    serve_actions_free(&srv);
    serve_index_free(&srv);
    serve_auth_free(&srv);
    free(srv.store_label);
    lil_store_close(srv.store);
    return ex;
}

static int cmd_serve(struct cli_ctx *ctx, int argc, char **argv)
{
    struct serve_flags f = {0};
    const struct cli_flag flags[] = {
        {"listen", true, &f.listen, &f.listen_given},
        {"read-only", false, NULL, &f.read_only},
        {"user", true, &f.user, NULL},
        {"spec-root", true, &f.spec_root, NULL},
        {"env-allow", true, &f.env_allow, NULL},
        {NULL, false, NULL, NULL},
    };
    struct cli_args a = {flags, NULL, NULL};
    struct serve_opts o = {0};
    char root[PATH_MAX], exe[PATH_MAX];
    const char **pos = NULL;
    size_t npos = 0;
    int ex = cli_parse_any(ctx, argc, argv, &a, &pos, &npos);

    if (ex == CLI_EXIT_OK)
        ex = store_word(ctx, pos, npos);
    if (ex == CLI_EXIT_OK)
        ex = fill_opts(ctx, &f, &o, root, exe);
    if (ex == CLI_EXIT_OK)
        ex = serve(ctx, &o);
    free(pos);
    return ex == CLI_PARSE_HELP ? CLI_EXIT_OK : ex;
}

const struct cli_verb cli_verb_serve = {
    "serve", "serve the control center: runs, actions and a crash lab in the browser",
    "Usage: lil serve [--dir DIR | URI] [--listen HOST:PORT] [--read-only]\n"
    "                 [--user NAME] [--spec-root DIR] [--env-allow A,B]\n"
    "\n"
    "Serve a page that shows every run of the store, each run's timeline, spend\n"
    "and state, and lets an operator stop, approve, recover and resume runs; a\n"
    "crash lab kills a demo loop mid-step and resumes it (docs/serve.md).  The\n"
    "page is compiled in.  At start, and after each login, a one-time login URL\n"
    "is printed on stderr: open it in a browser.\n"
    "\n"
    "Flags:\n"
    "  --listen HOST:PORT  where to listen (default 127.0.0.1:8420; port 0 takes a\n"
    "                   free one).  A host that is not loopback is served with a\n"
    "                   warning: other hosts may connect, without encryption\n"
    "  --read-only      show runs; refuse every action and the crash lab\n"
    "  --user NAME      the user of every session (actor web:NAME); no name is\n"
    "                   asked at login\n"
    "  --spec-root DIR  specs are read, and runs resumed, only from under DIR\n"
    "                   (default: the current directory)\n"
    "  --env-allow A,B  more variables the shell steps of resumed loops see\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0 after SIGINT or SIGTERM; 1 the\n"
    "store cannot be opened or the address bound; 64 usage (a bad flag or\n"
    "address).\n",
    cmd_serve};
