/*
 * verify.h -- what dry runs prove about a loop spec: `lil verify` and `lil
 * score` (docs/loops.md, "Verify and score"), the logic behind lil_spec_verify (lil.h).
 *
 * A dry run is the real runner (runner.h) on a temporary store, with every
 * shell, http and agent effect -- the completion hook and on_exit too --
 * answered from fixtures instead of run (lil__loop_set_mock): a deep copy
 * of fixtures.shell, .http or .agent (default {}) for every call.  Nothing
 * outside the temporary store is touched: no process, no request.  The
 * store is a fresh directory $TMPDIR/lil-verify-XXXXXX (else /tmp), its
 * runs unkeyed and unsynced (LIL_SYNC_OFF), removed before returning.
 *
 * Three dry runs, each its own run of that store:
 *   A  one loop handle stepped to the end (a run without restarts);
 *   B  the same again, from scratch;
 *   S  one step per loop handle: a process restart between iterations.
 * Each stops at an end (completed, failed, stopped, paused, uncertain), at
 * a park, or when the committed iterations reach the ceiling
 * (LIL_VERIFY_CEILING; a spec allowing more is stopped there, as if its
 * max_iterations were the ceiling).  Breakpoints and gates are approved
 * (LIL_LOOP_YES), inputs without a default get a sample value (0, false,
 * [], "x", an enum's first member).  An http request that only sending
 * would refuse (lil__http_check: a sample "x" as its url) is answered all
 * the same (lil__loop_set_unsent) and noted in an unsendable-request issue.
 *
 * Verdicts: bounded (A ended cleanly -- completed, stopped, paused, failed
 * on a cap, or the ceiling -- within max_iterations + 1 iterations),
 * deterministic (A and B end with the same status and state), resume-
 * stable (S and A do), ok = all three.  Issues explain each failure.
 *
 * Limits of this version, stated in the report's issues where they apply:
 * the runner's clock is the real one, so a sleep parks a dry run
 * (sleeps block in-process only up to VERIFY_MAX_BLOCK_MS) and a loop with
 * sleeps is not proven bounded; a wallclock budget is measured in real time.
 *
 * The report (lil__verify) is a JSON object:
 *   {"ok", "bounded", "deterministic", "resumeStable", "terminatedNaturally",
 *    "maxIterations", "ceiling", "clamped", "capsInjected",
 *    "fixtures": {"shell", "http", "agent"},
 *    "dryRun" | "rerun" | "stepped": {"status", "iteration", "reason"?,
 *        "wakeAt"?, "ceilingReached", "steps", "state"},
 *    "issues": [{"severity": "error"|"warning"|"info", "code", "message"}],
 *    "score": {"total", "grade", "dimensions": [{"name", "weight", "score",
 *        "points", "note"}]}}
 *
 * Ownership: the fixtures and the report are jansson values made under the
 * caller's json scope; the caller releases them.  Thread rules: none of
 * its own (each call has its own store and loops).
 */
#ifndef LIL_LOOP_VERIFY_H
#define LIL_LOOP_VERIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "json/json.h"

struct lil_env;
struct lil_ir_spec;

#define LIL_VERIFY_CEILING      1000       /* iterations of a dry run, at most */
#define LIL_VERIFY_FIXTURES_MAX (1u << 20) /* bytes of fixture JSON */

/* What the mocks answer, one value per effect kind (never NULL once
 * parsed: {} when not given). */
struct lil_verify_fixtures {
    json_t *shell, *http, *agent;
    bool given[3]; /* shell, http, agent came from the fixtures */
};

/* Parse fixture JSON text (len bytes; NULL text: none given, all {}).  A
 * JSON object of at most LIL_VERIFY_FIXTURES_MAX bytes whose keys are
 * among shell, http and agent.  Errors: LIL_E_TOOBIG (too large),
 * LIL_E_INVAL ("invalid verification fixture JSON: ...", "verification
 * fixtures must be a JSON object", "unknown verification fixture key(s):
 * a, b"), LIL_E_NOMEM.  On error *fx holds nothing. */
lil_status lil__verify_fixtures(const struct lil_env *env, struct lil_err *err,
                                const char *text, size_t len,
                                struct lil_verify_fixtures *fx);
void lil__verify_fixtures_free(struct lil_verify_fixtures *fx);

/* The sample inputs of a dry run: an object holding a value for every
 * declared input without a default (defaults are the runner's to apply).
 * NULL when an allocation failed. */
json_t *lil__verify_inputs(const struct lil_ir_spec *ir);

/* The scorecard of ir given the dry runs' verdicts; NULL
 * when an allocation failed (LIL_E_NOMEM in err). */
json_t *lil__verify_score(const struct lil_ir_spec *ir, struct lil_err *err,
                          bool deterministic, bool resume_stable);

/* Run the three dry runs of spec (valid: lil_spec_ok) on env with fx and
 * build the report in *report (new reference).  Errors: LIL_E_IO (the
 * temporary store), a dry run that could not be written or read (its
 * status and message), LIL_E_NOMEM. */
lil_status lil__verify(lil_env *env, struct lil_err *err, const lil_spec *spec,
                       const struct lil_verify_fixtures *fx, json_t **report);

/* lil_spec_verify (lil.h) on checked arguments (spec valid, env set),
 * inside a json scope bound to env: the fixtures read from fixtures_json
 * (NULL: none), the dry runs, the report as compact JSON in *out (a block
 * for lil_free). */
lil_status lil__spec_verify(lil_env *env, struct lil_err *err, const lil_spec *spec,
                            const char *fixtures_json, lil_bytes *out);

#endif
