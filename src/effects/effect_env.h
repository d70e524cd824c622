/*
 * effect_env.h -- the environment lil gives the programs it runs (shell
 * steps, hooks, agent CLIs).
 *
 * The reference runtime passes its whole environment to shell steps unless
 * its host sets `effectEnv` (docs/loops.md, "What lil does differently from
 * the reference runtime"): API keys, tokens and the journal's key reach
 * every command a spec runs.  lil scrubs by default.  A child gets:
 *
 *   - the base names, when lil's own environment has them: PATH, HOME,
 *     TMPDIR, TEMP, LANG, LC_ALL and every other LC_* (locale), SHELL,
 *     USER, LOGNAME, TERM, TZ -- what a command needs to find programs,
 *     write temporary files and print text as the user expects (the MCP
 *     server of the reference scrubs to PATH, HOME, TMPDIR, TEMP, LANG,
 *     LC_ALL, SHELL);
 *   - the names the caller allows: lists separated by commas (`--env-allow
 *     A,B`, LIL_EFFECT_ENV), blanks around a name ignored; an entry that
 *     ends in `*` allows every name that starts with what precedes it
 *     (`AWS_*`; `*` alone passes lil's whole environment, as the reference
 *     does);
 *   - never lil's own secrets unless an entry names one exactly (a pattern,
 *     `*` too, does not reach them): the settings the library classes as
 *     secret (the journal key LIL_JOURNAL_KEY / LOOPY_JOURNAL_KEY, the llm
 *     harness's key LIL_LLM_API_KEY / LOOPY_LLM_API_KEY), LIL_DIR (a
 *     PostgreSQL URI may hold a password) and LIL_LLM_HEADERS /
 *     LOOPY_LLM_HEADERS (may hold a token).
 *
 * Agent CLIs (agents/agent_cli.c) get the same, plus the variables of their
 * own harness (their provider's key, their configuration).
 *
 * Names are case-sensitive (POSIX).  A name that appears twice in the
 * source is taken once, its first value (what getenv returns); an entry
 * without '=' is skipped.  The variables keep the source's order.
 *
 * Ownership: the result is one block (the array of pointers and the
 * strings it points to), copied from the source, released with
 * lil__effect_env_free.  Nothing is kept between calls.  Reading environ
 * is as safe as getenv: not while another thread changes the environment.
 */
#ifndef LIL_LOOP_EFFECT_ENV_H
#define LIL_LOOP_EFFECT_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "base/env.h"

/* The environment of a child: "NAME=value" strings, NULL-terminated, from
 * src (NULL: this process's environ) filtered as above.  allow holds
 * n_allow comma-separated lists; NULL entries are skipped (pass getenv's
 * result as it is).  LIL_E_NOMEM. */
lil_status lil__effect_env_build(const struct lil_env *env, struct lil_err *err,
                                 const char *const *src, const char *const *allow,
                                 size_t n_allow, const char ***out);

void lil__effect_env_free(const struct lil_env *env, const char **vars);

/* Would a variable named name (len bytes) reach the child? */
bool lil__effect_env_keeps(const char *name, size_t len, const char *const *allow,
                           size_t n_allow);

#endif
