/*
 * artifacts_view.h -- the artifacts a loop run recorded when it ended (its
 * last artifacts.N record: docs/loops.md, "Artifacts"), for `lil inspect`:
 * read through the public API, printed as text or given as JSON.
 */
#ifndef LIL_CLI_ARTIFACTS_VIEW_H
#define LIL_CLI_ARTIFACTS_VIEW_H

#include <lil/lil.h>

#include <jansson.h>

/* The record's payload {"files": [...], "truncated"?}, a new reference; JSON
 * null when the run recorded none (or it cannot be read). */
json_t *cli_artifacts_json(lil_run *run);

/* The text lines of `lil inspect`: "artifacts  N files", then one line per
 * file (path, size, sha256); nothing when the run recorded none. */
void cli_artifacts_print(lil_run *run);

#endif
