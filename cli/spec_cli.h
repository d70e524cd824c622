/*
 * spec_cli.h -- what the loop-spec verbs (validate, new, explain, doctor)
 * share: printing a spec's diagnostics (diag_print.c), doctor's checks
 * (cmd_doctor.c) and the built-in blueprints of `lil new` (blueprints.c).
 *
 * Like the rest of the command, these use only <lil/lil.h> and jansson.
 */
#ifndef LIL_CLI_SPEC_CLI_H
#define LIL_CLI_SPEC_CLI_H

#include <lil/lil.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "cli.h"

/* ------------------------------------------------------------------------ */
/* Diagnostics (diag_print.c)                                                */

/* Print every diagnostic of spec to f, compiler style:
 *
 *     loop.yaml:12:11: error: reference to undeclared state var ... [bad-ref]
 *        12 |     when: "${state.nope == 1}"
 *           |           ^
 *
 * file is used when a diagnostic names no file.  Bytes that would not print
 * as themselves (control characters, invalid UTF-8, C1 and bidi controls)
 * are shown as \xNN; the caret line repeats a tab where the source has one
 * and a blank of the same width elsewhere, so the caret lands under the
 * column (see docs/cli.md, "Reading a diagnostic"). */
void cli_diag_print(FILE *f, const lil_spec *spec, const char *file);

/* The same for the warnings only (a valid spec about to run: what lil
 * ignores or doubts is said once, on stderr). */
void cli_diag_print_warnings(FILE *f, const lil_spec *spec, const char *file);

/* Print s (NULL: nothing) escaped like the diagnostics' text. */
void cli_put_text(FILE *f, const char *s);

/* The summary line, like the reference's formatValidation header:
 * "FILE: ✓ valid (no diagnostics)", "FILE: ✓ valid — N warning(s), M
 * note(s)", "FILE: ✗ invalid — N error(s), M warning(s)". */
void cli_diag_summary(FILE *f, const lil_spec *spec, const char *file);

/* {"file", "ok", "errors", "warnings", "infos", "diagnostics": [{"severity",
 * "code", "message", "path", "line", "column"}]} (path, line and column
 * null when absent).  NULL when an allocation failed. */
json_t *cli_diag_json(const lil_spec *spec, const char *file);

/* The same document for a file that could not be loaded: one error of
 * code "io" whose message is msg. */
json_t *cli_diag_json_failed(const char *file, const char *msg);

/* Load path (lil_spec_load), or stdin when path is "-" (lil_spec_parse,
 * named "<stdin>").  On failure msg (cap bytes) receives a message that
 * names the path, and the status is returned. */
lil_status cli_spec_load(lil_env *env, const char *path, lil_spec **out, char *msg,
                         size_t cap);

/* The name a SPEC argument is shown as: "<stdin>" for "-", else path. */
const char *cli_spec_name(const char *path);

/* ------------------------------------------------------------------------ */
/* Doctor (cmd_doctor.c)                                                     */

/* The checks of `lil doctor` for a valid spec (file: the name it is shown
 * as) and the store at store (a directory or a PostgreSQL URL): the
 * document of `lil doctor --json`, {"loop", "spec", "store", "ok",
 * "checks", "agents", "version"}; NULL when out of memory or the spec is
 * not valid. */
json_t *cli_doctor_json(const lil_spec *spec, const char *file, const char *store);

/* ------------------------------------------------------------------------ */
/* Blueprints of `lil new` (blueprints.c)                                    */

struct cli_blueprint {
    const char *name;    /* "fix-tests" */
    const char *pattern; /* "react" */
    const char *summary; /* one line for `lil new --list` */
    const char *text;    /* the spec; "@ID@" stands for the loop id */
};

/* The blueprints, one per pattern, in the order of docs/loopspec.md's pattern
 * list; *n receives their count. */
const struct cli_blueprint *cli_blueprints(size_t *n);

/* The blueprint named name, or the one of pattern; NULL when none. */
const struct cli_blueprint *cli_blueprint_named(const char *name);
const struct cli_blueprint *cli_blueprint_of_pattern(const char *pattern);

/* The text of bp for loop id (which must obey the loop id rule), or NULL
 * when out of memory; free() it. */
char *cli_blueprint_render(const struct cli_blueprint *bp, const char *id);

/* A poll-until spec that runs the shell command cmd until the guard expr
 * holds (see the comment of blueprints.c for the state it declares).
 * cmd and expr must be valid UTF-8 (else NULL with *bad set); NULL on
 * allocation failure.  free() it. */
char *cli_from_shell_render(const char *id, const char *cmd, const char *expr,
                            bool *bad);

/* Where byte off of line -- the generated `until:` line of
 * cli_from_shell_render(id, cmd, expr) -- falls in expr: a byte offset of
 * expr (strlen(expr) or the guard's end for the position just after it),
 * or -1 when off is not inside the expression (the quote or "${" before
 * it, say).  expr must be valid UTF-8. */
long cli_from_shell_until_offset(const char *line, size_t off, const char *expr);

/* 1 when id obeys the loop id rule ^[A-Za-z0-9_.:-]+$. */
bool cli_loop_id_ok(const char *id);

/* 1 when the NUL-terminated s is valid UTF-8. */
bool cli_utf8_ok(const char *s);

#endif
