/*
 * segments.c -- the public calls over a compacted run's segments
 * (docs/format.md, "Segments"; docs/api.md, "Segments"): what is kept of
 * its history, and dropping the oldest segments.  A store that keeps every
 * run in one piece (no run_segments / run_drop_segments) answers with a
 * run in one segment and nothing to drop.
 */
#include <string.h>

#include "api/entry.h"
#include "store/store.h"

lil_status lil_run_segments(lil_store *st, const char *run_id, lil_segments_info *info)
{
    struct lil_sseg_info si = {0, 0, 1};
    lil_segments_info full;
    struct lil_err e;
    lil_status rc;

    lil__clearerr(&e);
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    if (!info || info->struct_size < sizeof(size_t) + 2 * sizeof(uint32_t))
        return lil__api_to_store(
            st, &e,
            lil__seterr(&e, LIL_E_INVAL, 0,
                        "lil_run_segments: info is NULL or its struct_size is unset"));
    rc = lil__run_id_check(&e, run_id);
    if (rc == LIL_OK && st->ops->run_segments)
        rc = st->ops->run_segments(st, &e, run_id, &si);
    memset(&full, 0, sizeof(full));
    full.struct_size = info->struct_size;
    full.live = si.live;
    full.first = si.first;
    full.first_seq = si.first_seq;
    if (rc == LIL_OK)
        memcpy(info, &full,
               info->struct_size < sizeof(full) ? info->struct_size : sizeof(full));
    return lil__api_to_store(st, &e, rc);
}

lil_status lil_run_drop_segments(lil_store *st, const char *run_id, unsigned keep,
                                 unsigned *dropped)
{
    struct lil_err e;
    unsigned n = 0;
    lil_status rc;

    lil__clearerr(&e);
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    if (!dropped)
        return lil__api_to_store(
            st, &e,
            lil__seterr(&e, LIL_E_INVAL, 0, "lil_run_drop_segments: dropped is NULL"));
    *dropped = 0;
    rc = lil__run_id_check(&e, run_id);
    if (rc == LIL_OK && keep < 1)
        rc = lil__seterr(&e, LIL_E_INVAL, 0,
                         "lil_run_drop_segments: keep is 0 (the live segment is "
                         "always kept: keep >= 1)");
    if (rc == LIL_OK && st->ops->run_drop_segments)
        rc = st->ops->run_drop_segments(st, &e, run_id, keep, &n);
    *dropped = n;
    return lil__api_to_store(st, &e, rc);
}
