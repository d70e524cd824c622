/*
 * segment.h -- a journal's later segments (format.h, SEGMENTS): the link
 * that opens one, and the bytes of a new segment.  Pure functions over
 * memory; journal.c puts a segment in place (lil__journal_rotate).
 */
#ifndef LIL_JOURNAL_SEGMENT_H
#define LIL_JOURNAL_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/env.h"
#include "base/record.h"

#define LIL_JSEG_LINK_LEN 56u

/* What a later segment's BEGIN says of the segment before it. */
struct journal_link {
    uint32_t segment; /* this segment's number: 1, 2, ... (0: the first file) */
    uint8_t prev_salt[16];
    uint8_t prev_chain[32];
};

void lil__seg_link_encode(const struct journal_link *l, uint8_t out[LIL_JSEG_LINK_LEN]);
/* False when p (n bytes) is not a link (length, number 0, reserved bits). */
bool lil__seg_link_decode(const uint8_t *p, size_t n, struct journal_link *out);

/* A new segment whose first record follows seq prev_seq: its header (a new
 * salt, keyed under key when key is not NULL, incompat bit 1), its BEGIN
 * (run_id, the link), then recs[0..n) in order, each flagged SETTLED (the
 * file is synced before it is named), into b (emptied first).  *chain gets
 * the last record's chain value, *salt the new header's salt. */
lil_status lil__seg_image(const struct lil_env *env, struct lil_err *err,
                          const uint8_t *key, size_t key_len, const char *run_id,
                          uint64_t prev_seq, const struct journal_link *link,
                          const struct lil_rec *recs, size_t n, struct lil_buf *b,
                          uint8_t chain[32], uint8_t salt[16]);

#endif
