/*
 * record.h -- a record of a run, as the engine, the store interface and
 * the file journal all see it: the one shape records have in memory,
 * whatever keeps them.
 */
#ifndef LIL_BASE_RECORD_H
#define LIL_BASE_RECORD_H

#include <stddef.h>
#include <stdint.h>

/* A record as read (scan, walk) or to be appended. */
struct lil_rec {
    uint64_t seq;       /* read: 1, 2, ...; ignored on append */
    uint64_t off;       /* read: its position, stable for the run's life (the
                           file store: the byte offset in the journal file);
                           ignored on append */
    uint32_t len;       /* read: its stored size in bytes */
    int64_t ts_ns;      /* read: its time; append: 0 means now */
    uint32_t dur_us;    /* time the step took, or 0 */
    uint8_t type;       /* lil_record_type */
    uint8_t flags;      /* bit 0x01: an effect (LIL_RECF_EFFECT); the others
                           are the store's business */
    const uint8_t *key; /* identity, run id, or empty */
    size_t key_len;
    const uint8_t *payload;
    size_t payload_len;
};

#endif
