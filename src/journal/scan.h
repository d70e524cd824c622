/*
 * scan.h -- reading a journal image: the header, then every record in
 * order, with the recovery rule of format.h.  Pure functions over bytes in
 * memory (a mapping of the file, or a fuzzer's buffer): no I/O here.
 */
#ifndef LIL_JOURNAL_SCAN_H
#define LIL_JOURNAL_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "journal/journal.h"
#include "journal/segment.h"

struct scan_result {
    uint64_t end; /* offset past the last valid record */
    uint64_t seq; /* seq of the last valid record (0: none) */
    uint64_t records;
    uint64_t last_off;             /* offset of the last valid record (0: none) */
    uint8_t last_type;             /* its type (0: none) */
    uint8_t chain[LIL_SHA256_LEN]; /* chain after the last valid record */
    int64_t created_ns;
    int64_t last_ns;
    bool torn;           /* bytes after end are a torn tail, not clean zeros */
    bool damaged;        /* damage before the tail (err says where) */
    uint64_t damage_off; /* first bad byte when torn or damaged */
    /* Intact records found past damage_off (searched only when the scan
     * stops at a bad record): a torn tail has none, or only OPEN and CLOSE
     * records; anything more is damage (LIL_E_CORRUPT). */
    uint64_t after_records;
    uint64_t after_steps; /* of them, step outcomes (STEP, STEP_FAILED) */
    uint64_t after_end;   /* end of the last of them */
    bool after_work;      /* one of them is neither OPEN nor CLOSE */
    bool after_settled;   /* one of them carries SETTLED */
    /* Set by the caller between lil__scan_header and lil__scan_records: the
     * seq whose stored chain value the scan keeps in mark_chain (marked
     * when that record was valid); 0: none. */
    uint64_t mark_seq;
    uint8_t mark_chain[LIL_SHA256_LEN];
    bool marked;
    /* A later segment (header incompat bit 1): its first record, BEGIN,
     * holds the link and may have any seq above 1 (format.h, SEGMENTS). */
    bool segment;
    struct journal_link link; /* segment: what its BEGIN says */
    uint64_t base_seq;        /* segment: the seq of its BEGIN */
};

/* Whether data (len bytes) is a journal whose creation was cut short: it
 * ends inside its 64-byte header, and what there is of the header starts
 * as one does (its magic, or as much of it as there is; an empty file
 * too).  Such a file holds no record, so nothing acknowledged; a writable
 * open starts it afresh (docs/format.md, Recovery). */
bool lil__scan_header_cut(const uint8_t *data, size_t len);

/* Check the 64-byte header at data (len bytes available): magic, version,
 * features, CRC, and the key against key_check.  Creates *mac (SHA-256, or
 * HMAC under key) and sets res->chain to H(header).  path names the file in
 * messages.  Errors: LIL_E_CORRUPT (offset 0), LIL_E_VERSION, LIL_E_KEY,
 * LIL_E_NOMEM. */
lil_status lil__scan_header(const struct lil_env *env, struct lil_err *err,
                            const char *path, const uint8_t *data, size_t len,
                            const uint8_t *key, size_t key_len, struct lil_mac **mac,
                            struct scan_result *res);

/* Scan the records after the header: length, CRC and sequence of each, and
 * with verify_chain its chain value too (else res->chain is taken from the
 * last record, for the next append).  Calls fn (if not NULL) for each valid
 * record.  Returns LIL_OK with res filled (res->torn when the tail is torn);
 * LIL_E_CORRUPT naming the offset when damage precedes the tail (res->damaged
 * and res->damage_off are set, res->end is the end of the valid prefix); or
 * fn's error. */
lil_status lil__scan_records(const struct lil_env *env, struct lil_err *err,
                             const char *path, const uint8_t *data, size_t len,
                             struct lil_mac *mac, bool verify_chain, size_t max_record,
                             journal_scan_fn fn, void *ud, struct scan_result *res);

/* Build the header of a new journal into out (64 bytes).  Errors, in err:
 * LIL_E_IO (no random salt from the kernel). */
lil_status lil__format_header(struct lil_err *err, const uint8_t *key, size_t key_len,
                              int64_t created_ns, uint8_t out[64]);

/* Seal the header h (64 bytes) for key (NULL: none): its keyed bit, key
 * check and CRC, the salt kept. */
void lil__reseal_header(const uint8_t *key, size_t key_len, uint8_t h[64]);
/* Whether the header h (64 bytes) says the journal is keyed. */
bool lil__header_keyed(const uint8_t h[64]);
/* Encode rec as record seq after chain prev into out (len bytes,
 * 64 + key_len + payload_len); updates prev to the new chain. */
lil_status lil__encode_record(struct lil_mac *mac, uint8_t *prev_chain, uint64_t seq,
                              const struct lil_rec *rec, uint8_t flags, uint8_t *out,
                              size_t len);

/* Fill r from the record at p, found at offset off (framing checked). */
void lil__jrec_parse(const uint8_t *p, uint64_t off, struct lil_rec *r);

/* Largest record length accepted for a given max payload. */
uint64_t lil__record_limit(size_t max_record);

#endif
