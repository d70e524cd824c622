/*
 * hint.h -- the commands lil prints as a next step (approve, recover,
 * resume, stop, rm, run --fresh), written so that
 * pasting one in the same shell acts on the same run: `--dir DIR` when the
 * store is not the default one, the spec, `--run-id ID` when the run is
 * not the spec's default run, each word quoted for the shell when it needs
 * it (hint.c).  Every hint of the loop verbs and of inspect goes through
 * here, so none names only the spec (which hits the wrong run for every
 * submitted job).
 */
#ifndef LIL_CLI_HINT_H
#define LIL_CLI_HINT_H

#include <stddef.h>

#include "cli.h"

/* The run a hint acts on. */
struct cli_hint_run {
    const struct cli_ctx *ctx; /* its --dir (NULL: the default store) */
    const char *spec;          /* the spec's path, or NULL: the verb takes RUN */
    const char *run_id;        /* the run (NULL: the spec's default run) */
    const char *spec_id;       /* the spec's id, the default run id (NULL:
                                  unknown, so --run-id is always given) */
};

/* "lil [--dir DIR] VERB SPEC [--run-id ID] TAIL" (spec NULL: "lil [--dir
 * DIR] VERB RUN TAIL") into buf (cap bytes, cut if it must be); tail (may
 * be NULL) is appended as it is (flags, placeholders).  Returns buf. */
const char *cli_hint(const struct cli_hint_run *r, const char *verb, const char *tail,
                     char *buf, size_t cap);

/* A word as the shell reads it back: as it is when it holds only
 * characters the shell leaves alone, else in single quotes. */
void cli_hint_quote(const char *word, char *buf, size_t cap);

#endif
