/*
 * format.h -- the on-disk format of a run journal.  docs/format.md mirrors
 * this comment; change both together.
 *
 * A journal is one file per run, <store>/<run id>.lil, append-only.  All
 * integers are little-endian.
 *
 * FILE HEADER (64 bytes, offset 0)
 *
 *   off size field
 *     0    8 magic        89 4c 49 4c 0d 0a 1a 0a  ("\x89LIL\r\n\x1a\n")
 *     8    4 version      format version, 1
 *    12    4 incompat     feature bits a reader must know (bit 0: keyed chain;
 *                         bit 1: a later segment, below)
 *    16    4 compat       feature bits a reader may ignore (none yet)
 *    20    4 header_len   64
 *    24   16 salt         random, per file
 *    40    8 created_ns   creation time, ns since the Unix epoch
 *    48   12 key_check    keyed: first 12 bytes of HMAC(key, "lil-key-check" ||
 *                         salt); else zero
 *    60    4 crc          CRC-32 (zlib) of bytes 0..59
 *
 * A version above 1 or an unknown incompat bit is refused (LIL_E_VERSION).
 * A keyed file opened without the key, or with another key, is LIL_E_KEY.
 *
 * RECORD (at offset 64 and after, back to back, no padding)
 *
 *   off size field
 *     0    4 len          bytes of the whole record, 64 + key_len + payload_len
 *     4    4 crc          CRC-32 of bytes 8..len-1 (the rest of the record)
 *     8    8 seq          1 for the first record, then +1
 *    16    8 ts_ns        time the record was made, ns since the Unix epoch
 *    24    4 dur_us       µs the step's function took (0 when none)
 *    28    2 key_len      bytes of key (at most 65535)
 *    30    1 type         lil_record_type (lil.h)
 *    31    1 flags        bit 0 EFFECT: the step is an effect
 *                         bit 1 REQUEST: an intent whose note is in the
 *                               REQUEST record (type 10) before it
 *                         bit 2 COPY: in a later segment, a copy of a record
 *                               of an earlier one (SEGMENTS below)
 *                         bit 7 SETTLED: when this record was written, every
 *                               byte before it was durable: fdatasync'd, or
 *                               (sync off) found intact by the open before
 *    32    k key          identity ("fetch#2"), run id, or nothing
 *  32+k    p payload      result, reason, SHA-256(request), JSON; an effect's
 *                         note over 4096 bytes in a REQUEST record (type 10)
 *                         before its intent (engine/intent.h)
 * len-32  32 chain        H(previous chain || bytes 0..3 || bytes 8..len-33)
 *
 * H is SHA-256, or HMAC-SHA-256 under the journal key when the file is
 * keyed.  The chain before the first record is H(file header).  The chain
 * covers every byte of every record but its CRC (timestamps included) and
 * the order of records, so editing, removing or reordering any record is
 * detected even when the CRCs are recomputed, wherever the chain is
 * verified: lil check always, an open when the journal is keyed or the
 * caller asks (LIL_OPEN_VERIFY_CHAIN).  A plain open checks len, CRC and
 * seq of every record and chains new records to the last stored value.
 *
 * END OF JOURNAL AND PREALLOCATION
 *
 * The writer grows the file in chunks (fallocate), so the file is usually
 * longer than the journal; the bytes past the last record read as zero.
 * The end is where a record with len == 0 starts and only zero bytes
 * follow, or the end of the file.  A writable open of a journal in mode
 * full or normal fdatasyncs it before appending, so what it found is
 * durable before anything is added after it.
 *
 * RECOVERY (open)
 *
 * Records are read in order.  A record is valid when len is in range, it
 * fits the file, its CRC matches and its seq is the next one.  At the first
 * invalid record, at offset X, unless only zeros follow (the clean end),
 * the intact records after X are searched for (byte by byte, then record
 * by record):
 *   - if one carries the SETTLED flag, the bytes at X had been durable and
 *     have been damaged since: LIL_E_CORRUPT naming X;
 *   - if they hold anything but OPEN and CLOSE records, LIL_E_CORRUPT naming
 *     X and counting them: damage, or a power cut that kept later unsynced
 *     writes and lost an earlier one, which lil cannot tell apart, and
 *     dropping them would run acknowledged steps again;
 *   - otherwise X begins a torn tail (a crash or power cut before the sync
 *     that would have made it durable; nothing acknowledged lies there): the
 *     writer truncates the file to X before its next append.
 * `lil check --repair` truncates at X when asked.
 *
 * A file with no complete record (cut inside its header, or inside BEGIN)
 * is a creation cut short: no run yet for a reader (LIL_E_NOTFOUND); a
 * writer replaces it with a new header and BEGIN, synced, as it creates a
 * journal (journal.c, restart).
 * A record whose CRC is right but whose chain is wrong is LIL_E_CORRUPT (it
 * was edited, removed or moved) wherever the chain is verified.
 *
 * SEGMENTS (compaction: journal/segment.h, docs/format.md "Segments")
 *
 * A long run's journal may go on in a new file, a later segment, whose
 * header has incompat bit 1 and whose first record is BEGIN (key: the run
 * id) with the seq that follows the last record of the segment before it,
 * and this payload, the link (56 bytes):
 *
 *   off size field
 *     0    4 segment      this segment's number, 1 for the second file
 *     4    4 reserved     zero
 *     8   16 prev_salt    the salt of the segment before (its header)
 *    24   32 prev_chain   the chain value of that segment's last record
 *
 * The chain of a segment starts at H(its header), as in any journal, and
 * covers the link, so the link is sealed like every record.  The records
 * after it that carry COPY are copies of records of earlier segments
 * (what a resumed run needs: its start, its bindings, its last snapshot);
 * readers of the whole history pass them over.
 */
#ifndef LIL_JOURNAL_FORMAT_H
#define LIL_JOURNAL_FORMAT_H

#include <stdint.h>
#include <string.h>

#define LIL_JF_MAGIC            "\x89LIL\r\n\x1a\n"
#define LIL_JF_MAGIC_LEN        8
#define LIL_JF_VERSION          1u
#define LIL_JF_HEADER_LEN       64u
#define LIL_JF_INCOMPAT_KEYED   0x1u
#define LIL_JF_INCOMPAT_SEGMENT 0x2u /* a later segment (SEGMENTS below) */
#define LIL_JF_INCOMPAT_KNOWN   (LIL_JF_INCOMPAT_KEYED | LIL_JF_INCOMPAT_SEGMENT)
#define LIL_JF_SALT_LEN         16u
#define LIL_JF_KEYCHECK_LEN     12u

#define LIL_JF_REC_FIXED    32u /* bytes before the key */
#define LIL_JF_CHAIN_LEN    32u
#define LIL_JF_REC_OVERHEAD (LIL_JF_REC_FIXED + LIL_JF_CHAIN_LEN)
#define LIL_JF_KEY_MAX      65535u

#define LIL_JF_FLAG_EFFECT  0x01u
#define LIL_JF_FLAG_REQUEST 0x02u
#define LIL_JF_FLAG_COPY    0x04u /* a segment's copy of an earlier record */
#define LIL_JF_FLAG_SETTLED 0x80u

/* Header field offsets. */
#define LIL_JF_H_VERSION    8
#define LIL_JF_H_INCOMPAT   12
#define LIL_JF_H_COMPAT     16
#define LIL_JF_H_HEADER_LEN 20
#define LIL_JF_H_SALT       24
#define LIL_JF_H_CREATED    40
#define LIL_JF_H_KEYCHECK   48
#define LIL_JF_H_CRC        60

/* Record field offsets. */
#define LIL_JF_R_LEN     0
#define LIL_JF_R_CRC     4
#define LIL_JF_R_SEQ     8
#define LIL_JF_R_TS      16
#define LIL_JF_R_DUR     24
#define LIL_JF_R_KEY_LEN 28
#define LIL_JF_R_TYPE    30
#define LIL_JF_R_FLAGS   31

static inline uint32_t lil__rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint64_t lil__rd64(const uint8_t *p)
{
    return (uint64_t)lil__rd32(p) | (uint64_t)lil__rd32(p + 4) << 32;
}

static inline uint16_t lil__rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline void lil__wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void lil__wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void lil__wr64(uint8_t *p, uint64_t v)
{
    lil__wr32(p, (uint32_t)v);
    lil__wr32(p + 4, (uint32_t)(v >> 32));
}

#endif
