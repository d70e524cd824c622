/*
 * cassette.h -- cassettes of loop runs: every shell, http and agent result
 * of a run kept in a file (record), and a run answered from such a file
 * without calling anything (replay).  docs/loops.md, "Cassettes".
 *
 * The file is JSON Lines, one object per effect in journal order:
 *   {"kind": "shell"|"http"|"agent", "identity": TEXT, "result": VALUE,
 *    "usage"?: {"tokens", "usd"?, "estimated"?, "model"?}, "step"?: ID}
 * identity is the effect's canonical identity JSON as the journal's intent
 * note has it (secrets redacted), result and usage are the outcome as
 * journaled (secrets redacted): a cassette holds nothing the journal does
 * not.  "step" is informative (matching ignores it).
 *
 * Record: the file is rewritten when the loop opens -- first the effect
 * outcomes its journal already holds (a resumed run's cassette is
 * complete), then every outcome the run journals, appended with one write
 * per line as it is journaled (a crash leaves whole lines and at most one
 * torn last line).  Effects that failed (retries exhausted) are not kept;
 * the completion hook's result is.
 *
 * Replay: the file is read when the loop opens; the runner's mock answers
 * each effect with the first unused entry of the same kind and identity (a
 * repeated identical request takes the next one; the digests of
 * credentials, "hmac-sha256:<hex>" and "sha256:<hex>", match any digest:
 * each run digests them under its own key, effect_http.h), its usage metered as
 * recorded.  The outcomes the replay run's journal already holds (a
 * replay resumed, or stepped) use up their entries first.  An effect the
 * cassette does not answer fails (LIL_E_NOTFOUND, not retried) with a
 * message naming the step, the wanted request and the nearest entry of
 * the same kind (smallest edit distance over the first
 * LIL_CASSETTE_NEAR_BYTES bytes of the identities; the earlier on a tie).
 * A torn last line (no newline, not JSON) is ignored; any other line that
 * is not an entry is an error naming the file and the line.
 *
 * Ownership: the loop owns its cassette (lp->replay.cassette), closed with it;
 * one thread at a time, as the loop.
 */
#ifndef LIL_LOOP_CASSETTE_H
#define LIL_LOOP_CASSETTE_H

#include "loop/runner.h"

#define LIL_CASSETTE_MAX        (256u << 20) /* bytes of a replayed cassette */
#define LIL_CASSETTE_NEAR_BYTES 400          /* compared for the nearest entry */

/* Attach a cassette to lp after its journal was folded: record into
 * record_path or replay replay_path (at most one non-NULL; both NULL:
 * nothing).  Errors in lp->err: LIL_E_IO (the file), LIL_E_INVAL (a bad
 * line: "cassette F line N: ..."), LIL_E_TOOBIG, LIL_E_NOMEM. */
lil_status lil__cassette_attach(struct lil_loop *lp, const char *record_path,
                                const char *replay_path);

/* Close and free lp's cassette (NULL: nothing). */
void lil__cassette_close(struct lil_loop *lp);

/* Edit distance of a[0..na) and b[0..nb), each cut at
 * LIL_CASSETTE_NEAR_BYTES. */
size_t lil__cassette_distance(const char *a, size_t na, const char *b, size_t nb);

#endif
