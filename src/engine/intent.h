/*
 * intent.h -- an effect's intent record and where its note is
 * (docs/format.md, "Record types").
 *
 * A note of at most LIL_STEP_NOTE_INLINE bytes follows the request's
 * SHA-256 in the intent, as ever.  A longer one (an agent prompt of 100 KB,
 * an http body of megabytes) is journaled whole in a REQUEST record of its
 * own, appended just before the intent and made durable by the intent's
 * sync, and the intent, flagged LIL_SREC_REQUEST, keeps what readers need
 * without it:
 *
 *    0  32  SHA-256 of the request (what a replay compares)
 *   32  32  SHA-256 of the note (the REQUEST record's payload)
 *   64   8  the note's length, little-endian
 *   72   h  the note's first bytes: at most LIL_STEP_NOTE_HEAD, cut at a
 *           UTF-8 character boundary
 *
 * so that an open, `lil log` and the events stay as fast as with small
 * notes; only showing an uncertain effect's note in full reads the REQUEST
 * record (lil__run_intent_note).
 */
#ifndef LIL_ENGINE_INTENT_H
#define LIL_ENGINE_INTENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/hash.h"
#include "base/record.h"

#define LIL_STEP_NOTE_INLINE 4096u /* longest note kept in the intent itself */
#define LIL_STEP_NOTE_HEAD   1024u /* bytes of a longer note its intent keeps */
#define LIL_INTENT_LEN_AT    ((size_t)2 * LIL_SHA256_LEN) /* the note's length */
#define LIL_INTENT_APART     (LIL_INTENT_LEN_AT + 8u)     /* before the head */
_Static_assert(LIL_STEP_NOTE_HEAD < LIL_STEP_NOTE_INLINE,
               "a big note is longer than its head");

struct lil_run;

/* An intent's payload, decoded. */
struct lil_intent {
    const uint8_t *req_hash; /* 32 bytes, or NULL (a payload under 32) */
    const char *note;        /* the note, or its first bytes (apart) */
    size_t note_len;
    uint64_t full_len;        /* bytes of the whole note */
    const uint8_t *note_hash; /* apart: SHA-256 of the whole note; else NULL */
    bool apart;               /* the note is in a REQUEST record */
};

/* Decode an intent's payload (flags: its record's).  A payload flagged
 * apart but shorter than LIL_INTENT_APART reads as an inline note. */
void lil__intent_decode(const uint8_t *payload, size_t len, unsigned flags,
                        struct lil_intent *out);

/* Append identity's intent (synced in every mode but off): with the note
 * inline, or, when it is over LIL_STEP_NOTE_INLINE bytes, a REQUEST record
 * holding it and then the intent that names it. */
lil_status lil__intent_append(struct lil_run *run, struct lil_err *err,
                              const char *identity, const uint8_t *req_hash,
                              const void *note, size_t note_len);

/* The whole note of an apart intent (decoded from identity's latest
 * intent): the latest REQUEST record of identity before it with that
 * length and digest, borrowed until the run closes.  False when the
 * journal has none (a record the open scan did not find, or edited). */
bool lil__intent_find_note(struct lil_run *run, const char *identity,
                           const struct lil_intent *in, const char **note);

#endif
