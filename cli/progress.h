/*
 * progress.h -- what the loop verbs print on stderr while a loop runs
 * (`--progress plain|json|auto`; docs/cli.md, "Progress"), from the
 * runner's progress callback (lil_loop_event):
 *
 *  - plain: one line per event: an iteration starts, an effect starts and
 *    ends (with its duration, and what a person must know of it: "command
 *    not found: NAME"), a streamed agent call's running tokens, a pause, a
 *    cap, a sleep, the end;
 *  - json: one JSON object per event, {"event", "iteration", ...};
 *  - term: one status line redrawn in place -- iteration, the step in
 *    flight with a clock ticking each second (a thread redraws it), the
 *    tokens and spend so far (usd with enough digits to be non-zero), and
 *    a streamed agent call's running tokens ("+340 streaming") --
 *    cleared before the result is printed;
 *  - auto: term when stderr is a terminal, else plain.
 *
 * Whatever the mode, the state (the effect in flight) is kept, for what
 * the second Ctrl-C says was left uncertain (progress_abandoned).  One
 * run per process; the state is guarded by a mutex, the ticking thread
 * runs only in term mode.
 */
#ifndef LIL_CLI_PROGRESS_H
#define LIL_CLI_PROGRESS_H

#include <lil/lil.h>
#include <stdbool.h>

enum progress_mode { PROGRESS_OFF, PROGRESS_PLAIN, PROGRESS_JSON, PROGRESS_TERM };

/* --progress's value: "plain", "json", "auto" (term on a terminal, else
 * plain), or NULL (the default: term on a terminal, else off).  false for
 * any other word. */
bool progress_mode_of(const char *word, enum progress_mode *out);

/* Start showing the progress of a run in mode (the ticking thread of term).
 * hint: the command that decides an uncertain effect of it, for the
 * second Ctrl-C, as hint.h writes it ("lil --dir s recover loop.yaml
 * --run-id r2"). */
void progress_start(enum progress_mode mode, const char *hint);

/* The runner's progress callback (ud unused). */
void progress_event(void *ud, const lil_loop_event *ev);

/* The end: the term line cleared (the ticking thread stopped); plain and
 * json say how the call ended. */
void progress_end(const lil_loop_result *res);

/* Write to stderr, from a signal handler (async-signal-safe): what the
 * first Ctrl-C does, or what the second left (the effect in flight, now
 * uncertain, and how to decide it). */
void progress_say_stopping(void);
void progress_say_abandoned(void);

/* "$0.000042": usd with enough digits to be non-zero ("$0" for 0, two
 * digits from $0.01 up, "$1.0e-13" below $0.000000000001). */
void progress_fmt_usd(double usd, char *buf, size_t cap);

#endif
