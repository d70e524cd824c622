/*
 * where.h -- where in its journal a supervised child died: the run it was
 * in, and the step it had started and not finished, or else its last step.
 *
 * Read-only: the store is opened only when its directory exists (nothing
 * is created), its runs are opened read-only (no lock taken, nothing
 * written, so a run still held by a leftover process is read all the same)
 * and closed before returning.
 *
 * Which run: among the runs of the store, the one whose last record is the
 * most recent, if it was written since the child started (since_ns).  The
 * store's run_changed (the journal's modification time, no scan) picks the
 * candidates first, so only runs changed since then are read.
 *
 * Which step: walking the run's records in order, an effect's INTENT opens
 * its identity and a STEP, STEP_FAILED or RESOLVE of the same identity
 * closes it.  An identity still open at the end is the step the child was
 * in (started set; the latest one opened, when there are several); else
 * the identity of the run's last STEP or STEP_FAILED is the step it died
 * after (started clear); a run with no step gives step NULL.
 *
 * Errors: LIL_E_NOMEM, LIL_E_IO (the store's directory cannot be listed).
 * A run that cannot be read (damaged, keyed without the key, being
 * created) is skipped.  Strings are owned by the struct:
 * lil__sv_where_free.
 */
#ifndef LIL_SUPERVISE_WHERE_H
#define LIL_SUPERVISE_WHERE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/env.h"

struct lil_sv_where {
    bool store;      /* the store's directory exists (else nothing below) */
    char *run_id;    /* NULL: no run changed since the child started */
    char *step;      /* NULL: the run has no step yet */
    bool started;    /* step was started and not finished */
    int64_t last_ns; /* time of the run's last record */
};

/* Longest step identity kept (bytes; a longer one is cut). */
#define LIL_SV_STEP_MAX 512

lil_status lil__sv_where(struct lil_env *env, struct lil_err *err, const char *dir,
                         int64_t since_ns, struct lil_sv_where *out);
void lil__sv_where_free(const struct lil_env *env, struct lil_sv_where *w);

/* The place as a key for lil__sv_same_note: run id, step and started, NUL
 * separated, into buf; 0 when the place is not known (no run). */
size_t lil__sv_where_key(const struct lil_sv_where *w, char *buf, size_t cap);

#endif
