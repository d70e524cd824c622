/*
 * watch_args.h -- `lil watch`'s command line: which words are lil watch's
 * options and which are the command's (watch_split), and the command made
 * ready to run (watch_command: a script's interpreter, whether the program
 * is lil itself).
 *
 * The rule (docs/supervise.md, "The command line"):
 *  - before the command, every word up to the first one that is not an
 *    option is lil watch's; "--" there ends them, and everything after it
 *    is the command, untouched (`lil watch [OPTIONS] -- CMD [ARGS...]`);
 *  - after the command's first word (`lil watch CMD [ARGS...] [OPTIONS]`),
 *    lil watch's own options (with their values) are lil watch's wherever
 *    they stand, "--" ends them (everything after it is the command's),
 *    any other word that starts with '-' (a number aside) is a usage error
 *    naming it, and the remaining words are the command's arguments.
 */
#ifndef LIL_CLI_WATCH_ARGS_H
#define LIL_CLI_WATCH_ARGS_H

#include <stdbool.h>

#include "cli.h"

/* argv split: both arrays point into argv; the caller frees them (free). */
struct watch_split {
    char **opts; /* lil watch's options and their values, for cli_parse */
    int nopts;
    char **cmd; /* the command's words, NULL-terminated */
    int ncmd;
};

/* Split argv by the rule above; flags: the verb's table (the global flags
 * are known too).  CLI_EXIT_OK, CLI_EXIT_USAGE (message printed) or
 * CLI_EXIT_FAIL (out of memory; printed). */
int watch_split(const struct cli_ctx *ctx, const struct cli_flag *flags, int argc,
                char **argv, struct watch_split *out);

void watch_split_free(struct watch_split *s);

/* The command to run. */
struct watch_command {
    const char **argv; /* NULL-terminated; free with watch_command_free */
    char *python;      /* a script's interpreter (argv[0]), or NULL */
    bool is_lil;       /* the program is lil itself */
};

/* From the command's words: a first word ending in ".py" runs with the
 * python3 of the environment -- $VIRTUAL_ENV/bin/python3 when $VIRTUAL_ENV
 * is set and it is executable, else the first python3 in PATH (the word
 * "python3" when there is none: it then fails as not found).  The program
 * is lil when its file name is "lil" or when it (looked up in PATH when it
 * has no '/') is the same file as this process's executable.  false when
 * out of memory. */
bool watch_command(char **words, int n, struct watch_command *out);

void watch_command_free(struct watch_command *c);

#endif
