/*
 * place.h -- where a run is in its steps, folded from its records: the
 * effect it started and has not finished (an INTENT without a STEP,
 * STEP_FAILED or RESOLVE of the same identity after it), or else the last
 * step it finished.  The supervisor names the place of a death with it
 * (supervise/where.c), and lil_run_facts reports it ("place").
 *
 * The fold: records in journal order go to lil__place_add; an INTENT opens
 * its identity (again: moved last, one entry), a STEP, STEP_FAILED or
 * RESOLVE of the same identity closes it, and a STEP or STEP_FAILED is the
 * last step.  lil__place_take then gives the latest identity still open
 * (started true), or the last step (started false), or none (step NULL);
 * last_ns is the time of the newest record.  Keys are copied (the records
 * may go away); identities longer than LIL_PLACE_STEP_MAX bytes are cut.
 * One fold per thread; lil__place_free releases it (also after take).
 */
#ifndef LIL_ENGINE_PLACE_H
#define LIL_ENGINE_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/env.h"
#include "base/err.h"

#define LIL_PLACE_STEP_MAX 512

struct lil_place {
    char *step;      /* NULL: no step yet */
    bool started;    /* step was started and not finished */
    int64_t last_ns; /* time of the newest record */
};

struct lil_place_fold {
    const struct lil_env *env;
    int64_t last_ns;
    char *last_step; /* the last STEP or STEP_FAILED identity */
    char **open;     /* identities of intents without an outcome, in order */
    size_t n_open, cap_open;
};

void lil__place_init(struct lil_place_fold *f, const struct lil_env *env);
/* The next record: its type (lil_record_type), key and time. */
lil_status lil__place_add(struct lil_place_fold *f, struct lil_err *err, int type,
                          const void *key, size_t key_len, int64_t ts_ns);
/* The place the fold found into *out (strings owned by *out). */
lil_status lil__place_take(struct lil_place_fold *f, struct lil_err *err,
                           struct lil_place *out);
void lil__place_free(struct lil_place_fold *f);
void lil__place_clear(const struct lil_env *env, struct lil_place *p);

#endif
