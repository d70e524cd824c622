/*
 * supervise.h -- the supervisor behind lil_supervise (lil.h,
 * "Supervision"; the public call and its checks are src/api/supervise.c).
 */
#ifndef LIL_SUPERVISE_SUPERVISE_H
#define LIL_SUPERVISE_SUPERVISE_H

#include <lil/lil.h>

/* Supervise as lil_supervise does: the options checked (policy.h, the
 * env's runs), then the loop; returns LIL_OK in each forked child, an
 * error when it cannot start, and otherwise ends the process. */
lil_status lil__supervise(const lil_supervise_options *opts);

#endif
