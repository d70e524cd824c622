/*
 * open.c -- how the read API opens a run: read-only, existing, with the
 * store's sync setting ignored (a reader writes nothing), so that a run
 * held by another process is read without waiting for it.
 */
#include "engine/run.h"
#include "history/history.h"

lil_status lil__history_open(struct lil_store *st, struct lil_err *err,
                             const char *run_id, struct lil_run **out)
{
    lil_run_opts ro = {sizeof(ro), LIL_SYNC_FULL, LIL_OPEN_READONLY | LIL_OPEN_EXISTING,
                       0};

    return lil__run_open(st, err, run_id, &ro, out);
}

void lil__history_close(struct lil_run *run)
{
    if (run)
        lil__run_close(run, NULL);
}
