/*
 * main.c -- the `lil` command: global flags, the table of verbs, help and
 * version.
 *
 *     lil [--dir DIR] [--json] VERB [ARGS...]
 *
 * Global flags may come before the verb or among its arguments.  The verb
 * does the work and returns the exit status; main only dispatches and makes
 * sure stdout was written (a full disk or a closed pipe is exit 1).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "safe_out.h"

static const struct cli_verb *const verbs[] = {
    &cli_verb_ls,       &cli_verb_inspect,  &cli_verb_log,    &cli_verb_check,
    &cli_verb_resolve,  &cli_verb_validate, &cli_verb_new,    &cli_verb_explain,
    &cli_verb_run,      &cli_verb_step,     &cli_verb_resume, &cli_verb_stop,
    &cli_verb_approve,  &cli_verb_recover,  &cli_verb_doctor, &cli_verb_tick,
    &cli_verb_verify,   &cli_verb_score,    &cli_verb_watch,  &cli_verb_db,
    &cli_verb_export,   &cli_verb_import,   &cli_verb_submit, &cli_verb_worker,
    &cli_verb_schedule, &cli_verb_fork,     &cli_verb_diff,   &cli_verb_rm,
    &cli_verb_gc,       &cli_verb_workers,  &cli_verb_mcp,    &cli_verb_serve,
};

#define NVERBS (sizeof(verbs) / sizeof(verbs[0]))

static const char help_head[] =
    "lil -- durable execution in C: tools for run journals and loop specs.\n"
    "\n"
    "Usage: lil [--dir DIR] [--json] VERB [ARGS...]\n"
    "       lil help VERB | lil VERB --help | lil --version\n"
    "\n"
    "Verbs:\n";

static const char help_tail[] =
    "\n"
    "Global flags (before or after the verb; --flag=value works too):\n"
    "  --dir DIR   store directory (default: $LIL_DIR, else .lil), or a\n"
    "              PostgreSQL URI postgresql://... (docs/postgres.md)\n"
    "  --json      print one JSON document instead of text\n"
    "  --shared-store  accept a store directory another user owns or may\n"
    "              write in (refused otherwise; docs/security.md)\n"
    "  --help, -h  show help\n"
    "  --version   print the library version\n"
    "\n"
    "Environment: LIL_DIR (store), LIL_JOURNAL_KEY (key of keyed journals),\n"
    "LIL_SHARED_STORE=1 (as --shared-store), USER (default --actor of resolve).\n"
    "\n"
    "Exit status (the same for every verb):\n"
    "  0   success\n"
    "  1   failure: damaged journal (check), no such run or store, I/O error;\n"
    "      invalid loop spec (validate, explain, new); new --out FILE exists\n"
    "  2   the run is uncertain: an effect's outcome is unknown (inspect)\n"
    "  3   loop verbs: the run is paused (waits for an approval)\n"
    "  4   loop verbs: the run is waiting (until its wakeAt, or step: more to do)\n"
    "  5   loop verbs: the run was stopped\n"
    "  64  usage error: unknown verb or flag, missing argument, invalid id\n"
    "  75  the run is held by another process (check --repair, resolve): the\n"
    "      message names its pid when lil knows it; try again when it is done\n"
    "  watch: the program's status (128+N: killed by signal N), or 71 cannot\n"
    "      fork, 80 restart limit, 81 crash loop, 82 same step, 126 / 127 the\n"
    "      program cannot be executed / is not found\n"
    "  diff: 10 the runs differ\n";

static void print_main_help(FILE *f)
{
    fputs(help_head, f);
    for (size_t i = 0; i < NVERBS; i++)
        fprintf(f, "  %-9s %s\n", verbs[i]->name, verbs[i]->summary);
    fprintf(f, "  %-9s %s\n", "help", "show help for a verb");
    fputs(help_tail, f);
}

static const struct cli_verb *find_verb(const char *name)
{
    for (size_t i = 0; i < NVERBS; i++) {
        if (strcmp(verbs[i]->name, name) == 0)
            return verbs[i];
    }
    return NULL;
}

/* The verb closest to a mistyped name (at most 2 edits, fewer than the
 * name's length), or NULL. */
static const char *nearest_verb(const char *name)
{
    const char *best = NULL;
    size_t best_d = 3;

    for (size_t i = 0; i < NVERBS; i++) {
        size_t d = cli_edit_distance(name, verbs[i]->name);
        if (d < best_d && d < strlen(name)) {
            best = verbs[i]->name;
            best_d = d;
        }
    }
    return best;
}

/* An unknown verb: a usage error, with the nearest verb when one is close. */
static int unknown_verb(const char *context, const char *name)
{
    const char *near = nearest_verb(name);

    if (near)
        return cli_usage(NULL, "%sunknown verb '%s'; did you mean '%s'?", context, name,
                         near);
    return cli_usage(NULL, "%sunknown verb '%s'", context, name);
}

/* `lil help [VERB]`. */
static int cmd_help(int argc, char **argv)
{
    const struct cli_verb *v;

    if (argc == 0) {
        print_main_help(stdout);
        return CLI_EXIT_OK;
    }
    if (argc > 1)
        return cli_usage(NULL, "help: unexpected argument '%s'", argv[1]);
    v = find_verb(argv[0]);
    if (!v)
        return unknown_verb("help: ", argv[0]);
    cli_print_help(v);
    return CLI_EXIT_OK;
}

/* The flags known before the verb, for a mistyped one. */
static const char *const global_names[] = {"dir",     "json",         "help",
                                           "version", "shared-store", NULL};

/* A global flag before the verb, at argv[*i].  Returns -1 to go on, or an
 * exit status (help, version, usage error). */
static int global_flag(struct cli_ctx *ctx, int argc, char **argv, int *i)
{
    const char *w = argv[*i];

    if (strcmp(w, "--help") == 0 || strcmp(w, "-h") == 0) {
        print_main_help(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(w, "--version") == 0) {
        printf("lil %s\n", lil_version());
        return CLI_EXIT_OK;
    }
    if (strcmp(w, "--json") == 0) {
        ctx->json = true;
        return -1;
    }
    if (strcmp(w, "--shared-store") == 0) {
        ctx->shared_store = true;
        return -1;
    }
    if (strncmp(w, "--dir=", 6) == 0) {
        ctx->dir = w + 6;
        return -1;
    }
    if (strcmp(w, "--dir") == 0) {
        if (*i + 1 >= argc)
            return cli_usage(NULL, "flag --dir needs a value");
        ctx->dir = argv[++*i];
        return -1;
    }
    return cli_unknown_flag(NULL, w, w[1] == '-' ? strcspn(w + 2, "=") : 0,
                            global_names);
}

static int dispatch(int argc, char **argv)
{
    struct cli_ctx ctx = {NULL, NULL, false, false};
    int i = 1;

    for (; i < argc && argv[i][0] == '-'; i++) {
        int rc = global_flag(&ctx, argc, argv, &i);
        if (rc >= 0)
            return rc;
    }
    if (i >= argc) {
        print_main_help(stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[i], "help") == 0)
        return cmd_help(argc - i - 1, argv + i + 1);
    ctx.verb = find_verb(argv[i]);
    if (!ctx.verb)
        return unknown_verb("", argv[i]);
    return ctx.verb->run(&ctx, argc - i - 1, argv + i + 1);
}

int main(int argc, char **argv)
{
    int rc;

    cli_safe_streams();
    rc = dispatch(argc, argv);

    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "lil: cannot write to stdout\n");
        return rc == CLI_EXIT_OK ? CLI_EXIT_FAIL : rc;
    }
    return rc;
}
