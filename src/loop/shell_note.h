/*
 * shell_note.h -- what a shell step's result says a person must know at
 * once: its command was not found (exit 127) or is not executable (126).
 * A loop that spins on such a step until max_iterations must say so at
 * its first iteration: the progress line, the RunResult's step notes
 * (runner_notes.c) and `lil inspect` (the "note" of a history effect
 * event) all read it here.
 */
#ifndef LIL_LOOP_SHELL_NOTE_H
#define LIL_LOOP_SHELL_NOTE_H

#include <stdbool.h>
#include <stddef.h>

#include "json/json.h"

/* For a shell result ({"code", "stderr", ...}) of exit 127 or 126: "command
 * not found: NAME" or "not executable: NAME" in buf (NUL-terminated, cut to
 * cap), NAME from the shell's message on stderr ("sh: 1: NAME: not found"),
 * else the first word of cmd (may be NULL); true.  Any other result:
 * false, buf untouched. */
bool lil__shell_note(const json_t *result, const char *cmd, char *buf, size_t cap);

#endif
