/*
 * loop_cli.h -- what the loop verbs (run, step, resume, stop, approve,
 * recover) share (loop_cli.c): their options, opening the spec, the store
 * and the loop, printing a result, and the signals of a running loop.
 *
 * Each verb is a thin user of lil_loop_* (lil.h); the exit status of a
 * loop result is lil_loop_exit_code (docs/loops.md, "Exit status").
 */
#ifndef LIL_CLI_LOOP_CLI_H
#define LIL_CLI_LOOP_CLI_H

#include <lil/lil.h>
#include <stdbool.h>

#include "cli.h"

/* The options of the loop verbs; which ones a verb accepts is its mask. */
enum {
    LOOP_OPT_RUN = 1u << 0,      /* --input, --inputs, --sync, --env-allow, --wait */
    LOOP_OPT_APPROVE = 1u << 1,  /* --approve */
    LOOP_OPT_YES = 1u << 2,      /* --yes */
    LOOP_OPT_WHO = 1u << 3,      /* --actor, --reason */
    LOOP_OPT_RECOVER = 1u << 4,  /* --retry, --assume-done, --result-json, --abort */
    LOOP_OPT_CASSETTE = 1u << 5, /* --record FILE, --replay FILE (run, step) */
    LOOP_OPT_SUBMIT = 1u << 6,   /* --input, --inputs, --sync (submit) */
    LOOP_OPT_SPEC = 1u << 7,     /* --accept-spec-change */
    LOOP_OPT_PAUSE = 1u << 8,    /* --pause ID, --digest D, --current (approve) */
    LOOP_OPT_FRESH = 1u << 9,    /* --fresh (run, step) */
    LOOP_OPT_RETRY = 1u << 10,   /* --retry-failed (resume) */
};

struct loop_cli {
    const struct cli_ctx *ctx; /* set by loop_cli_parse: hints name its --dir */
    const char *spec_path;
    const char *run_id; /* --run-id, else the spec's id */
    const char *inputs_file;
    const char **input_pairs; /* --input NAME=VALUE, in order */
    size_t n_input_pairs;
    const char *sync, *env_allow, *actor, *reason, *result_json;
    const char *record, *replay;   /* cassettes: --record FILE, --replay FILE */
    const char *pause_id, *digest; /* approve: the pause it must be */
    const char *progress;          /* --progress plain|json|auto, or NULL */
    bool approve, yes, wait, retry, assume_done, abort;
    bool current, accept_spec;         /* --current, --accept-spec-change */
    bool fresh;                        /* --fresh */
    bool retry_failed;                 /* --retry-failed */
    char fresh_id[LIL_RUN_ID_MAX + 1]; /* the new run of --fresh */
    bool reason_set, actor_set, result_set;
    /* made by loop_cli_open */
    lil_spec *spec;
    lil_store *st;
    lil_loop *lp;
    char *inputs_json;
};

/* Parse argv for a verb accepting mask.  CLI_EXIT_OK, CLI_PARSE_HELP or
 * CLI_EXIT_USAGE (message printed). */
int loop_cli_parse(struct cli_ctx *ctx, int argc, char **argv, unsigned mask,
                   struct loop_cli *lc);

/* Load the spec (its diagnostics printed when it has errors: exit 1, and
 * nothing created) and open the store: created when create, else it must
 * exist, and so must the run. */
int loop_cli_prepare(struct cli_ctx *ctx, struct loop_cli *lc, bool create);

/* The same for `lil stop`: the store is created (a stop may come before
 * the run's first start), the run need not exist; *started says whether it
 * does. */
int loop_cli_prepare_stop(struct cli_ctx *ctx, struct loop_cli *lc, bool *started);

/* --sync's value as a mode (lil_sync_from_name): full, normal or off; NULL
 * and any other name give LIL_SYNC_DEFAULT (loop_cli_parse refuses a name
 * that does). */
lil_sync loop_cli_sync(const char *s);

/* Open the loop (after loop_cli_prepare) with lc's options and flags. */
int loop_cli_open(struct cli_ctx *ctx, struct loop_cli *lc, unsigned flags);

/* Print res (--json: its JSON; else a short summary) and return its exit
 * status. */
int loop_cli_report(const struct cli_ctx *ctx, const struct loop_cli *lc,
                    const lil_loop_result *res);

/* Report a library error of a loop call. */
int loop_cli_fail(const struct cli_ctx *ctx, const struct loop_cli *lc, lil_status rc);

/* The end of a loop call that returned rc: its result reported (then
 * released) or its error; the exit status. */
int loop_cli_answer(const struct cli_ctx *ctx, const struct loop_cli *lc, lil_status rc,
                    lil_loop_result *res);

/* SIGINT and SIGTERM ask lc->lp to stop after the current effect (the
 * first SIGINT says so on stderr); a second SIGINT kills the effect's
 * process group and exits at once (130), leaving the effect uncertain, and
 * says which effect and how to decide it.  Progress goes to stderr as
 * --progress says (progress.h): by default the terminal line when stderr
 * is a terminal, nothing otherwise. */
void loop_cli_signals(struct loop_cli *lc);
void loop_cli_signals_off(void);

/* The command `verb` with tail (hint.h) for the run of lc, into buf: a
 * next step that can be pasted.  Returns buf. */
const char *loop_cli_hint(const struct loop_cli *lc, const char *verb, const char *tail,
                          char *buf, size_t cap);

/* Close and free what loop_cli_* made. */
void loop_cli_close(struct loop_cli *lc);

#endif
