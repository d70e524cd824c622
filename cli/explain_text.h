/*
 * explain_text.h -- the text of `lil explain`: the explain document of
 * lil_spec_explain (docs/loopspec.md) as a person reads it.
 *
 * Sections, in order: the loop's id and pattern; the schedule (for cron,
 * the next fire times in UTC); the caps in force, each saying what happens
 * when it trips; the exit (predicate, the state it reads and who writes
 * it, grounding, liveness, on_exit and the completion hook); the steps in
 * order with what each runs (a command, prompt, request or question on
 * one line, cut with an ellipsis); the gates; the warnings and notes of
 * validation; explain's own remarks; last, the meaning of the terms the
 * text used ("breakpoint", "gate", "live", "grounding", ...), one line
 * each.
 *
 * Text from the spec is escaped like diagnostics are (cli_put_text).
 * Nothing here allocates; the document is only read.
 */
#ifndef LIL_CLI_EXPLAIN_TEXT_H
#define LIL_CLI_EXPLAIN_TEXT_H

#include <jansson.h>

/* The longest text of a spec (a command, a prompt, ...) shown on one line,
 * in characters; a longer one ends with "…". */
#define EXPLAIN_LINE_MAX 60

/* Print the explain document doc to stdout. */
void explain_print(const json_t *doc);

#endif
