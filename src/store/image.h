/*
 * image.h -- journal images held in memory, for the stores that keep a run
 * as one (store/mem/: in the process, store/pg/: read from rows): the
 * header and BEGIN of a new run, the scan at open, walking the frames and
 * stepping through what the open scanned.  The bytes are the journal's
 * (journal/format.h), built and read with the journal's own code, so that
 * every store's runs look alike.  These stores commit records whole: a
 * torn tail in an image is damage, not a crash's leftover.
 *
 * No state: every function works on the bytes it is given.
 */
#ifndef LIL_STORE_IMAGE_H
#define LIL_STORE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "journal/scan.h"
#include "store/store.h"

/* Append the header of a new run (LIL_JF_HEADER_LEN bytes) and its BEGIN
 * record (keyed by run_id, chained under key) to out.  Errors, in err:
 * LIL_E_NOMEM, and lil__format_header's. */
lil_status lil__image_first(const struct lil_env *env, struct lil_err *err,
                            const char *run_id, const uint8_t *key, size_t key_len,
                            struct lil_buf *out);

/* Scan an image (len bytes at data; where names it in messages) with the
 * journal's scan, calling fn for each record; *mac gets the run's MAC and
 * res the scan's result.  A torn tail, or an image without records, is
 * LIL_E_CORRUPT naming the offset. */
lil_status lil__image_scan(const struct lil_env *env, struct lil_err *err,
                           const char *where, const uint8_t *data, size_t len,
                           const struct lil_srun_opts *o, lil_rec_scan_fn fn, void *ud,
                           struct lil_mac **mac, struct scan_result *res);

/* Call fn for each whole frame of frames (len bytes found at offset off of
 * the image) until it returns non-zero; returns 1 then, else 0. */
int lil__image_walk(const uint8_t *frames, size_t len, uint64_t off, lil_rec_walk_fn fn,
                    void *ud);

/* Call fn for each record of a whole image (its header, then records:
 * valid bytes) until it returns non-zero; returns 1 then, else 0. */
int lil__image_records(const uint8_t *image, size_t valid, lil_rec_walk_fn fn,
                       void *ud);

/* The chain value (LIL_SHA256_LEN bytes) of the last record of a whole
 * image of valid bytes (at least one record). */
const uint8_t *lil__image_head(const uint8_t *image, size_t valid);

/* run_next_scanned over an image whose first end bytes were scanned. */
bool lil__image_next(const uint8_t *image, uint64_t end, uint64_t *cursor,
                     struct lil_rec *rec);

#endif
