/*
 * intent.c -- an effect's intent record, with its note inline or in a
 * REQUEST record before it (intent.h has the layout).
 */
#include "engine/intent.h"

#include <string.h>

#include "engine/run.h"

/* The longest prefix of note (valid UTF-8, longer than max bytes) of at
 * most max bytes that ends at a character boundary. */
static size_t head_len(const uint8_t *note, size_t max)
{
    size_t n = max;

    while (n > 0 && (note[n] & 0xc0u) == 0x80u) /* note[n] continues a character */
        n--;
    return n;
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void wr64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void lil__intent_decode(const uint8_t *payload, size_t len, unsigned flags,
                        struct lil_intent *out)
{
    memset(out, 0, sizeof(*out));
    if (len < LIL_SHA256_LEN)
        return;
    out->req_hash = payload;
    if ((flags & LIL_SREC_REQUEST) && len >= LIL_INTENT_APART) {
        out->apart = true;
        out->note_hash = payload + LIL_SHA256_LEN;
        out->full_len = rd64(payload + LIL_INTENT_LEN_AT);
        out->note = (const char *)payload + LIL_INTENT_APART;
        out->note_len = len - LIL_INTENT_APART;
        return;
    }
    out->note = (const char *)payload + LIL_SHA256_LEN;
    out->note_len = len - LIL_SHA256_LEN;
    out->full_len = out->note_len;
}

static lil_status append_inline(struct lil_run *run, struct lil_err *err,
                                const char *identity, const uint8_t *req_hash,
                                const void *note, size_t note_len)
{
    uint8_t payload[LIL_SHA256_LEN + LIL_STEP_NOTE_INLINE];
    struct lil_rec r = {0};

    memcpy(payload, req_hash, LIL_SHA256_LEN);
    if (note_len)
        memcpy(payload + LIL_SHA256_LEN, note, note_len);
    r.type = LIL_REC_INTENT;
    r.flags = LIL_SREC_EFFECT;
    r.key = (const uint8_t *)identity;
    r.key_len = strlen(identity);
    r.payload = payload;
    r.payload_len = LIL_SHA256_LEN + note_len;
    return run->st->ops->run_append(run->sr, err, &r, LIL_APPEND_SYNC);
}

/* The REQUEST record is not synced on its own: the intent's sync, which
 * covers every record before it, makes both durable before the effect
 * starts.  A crash between the two leaves a REQUEST record that no intent
 * names: the effect never started, and runs when the run resumes. */
static lil_status append_apart(struct lil_run *run, struct lil_err *err,
                               const char *identity, const uint8_t *req_hash,
                               const void *note, size_t note_len)
{
    uint8_t payload[LIL_INTENT_APART + LIL_STEP_NOTE_HEAD];
    size_t head = head_len(note, LIL_STEP_NOTE_HEAD); /* note_len > INLINE > HEAD */
    struct lil_rec r = {0};
    lil_status rc;

    r.type = LIL_REC_REQUEST;
    r.flags = LIL_SREC_EFFECT;
    r.key = (const uint8_t *)identity;
    r.key_len = strlen(identity);
    r.payload = note;
    r.payload_len = note_len;
    rc = run->st->ops->run_append(run->sr, err, &r, LIL_APPEND_LAZY);
    if (rc != LIL_OK)
        return rc;
    memcpy(payload, req_hash, LIL_SHA256_LEN);
    lil__sha256(note, note_len, payload + LIL_SHA256_LEN);
    wr64(payload + LIL_INTENT_LEN_AT, note_len);
    memcpy(payload + LIL_INTENT_APART, note, head);
    r.type = LIL_REC_INTENT;
    r.flags = LIL_SREC_EFFECT | LIL_SREC_REQUEST;
    r.payload = payload;
    r.payload_len = LIL_INTENT_APART + head;
    return run->st->ops->run_append(run->sr, err, &r, LIL_APPEND_SYNC);
}

lil_status lil__intent_append(struct lil_run *run, struct lil_err *err,
                              const char *identity, const uint8_t *req_hash,
                              const void *note, size_t note_len)
{
    if (note_len <= LIL_STEP_NOTE_INLINE)
        return append_inline(run, err, identity, req_hash, note, note_len);
    return append_apart(run, err, identity, req_hash, note, note_len);
}

bool lil__intent_find_note(struct lil_run *run, const char *identity,
                           const struct lil_intent *in, const char **note)
{
    size_t key_len = strlen(identity);
    uint8_t digest[LIL_SHA256_LEN];
    const uint8_t *found = NULL;
    uint64_t off = 0;
    struct lil_rec r;

    *note = NULL;
    if (!in->apart)
        return false;
    while (run->st->ops->run_next_scanned(run->sr, &off, &r))
        if (r.type == LIL_REC_REQUEST && r.key_len == key_len &&
            memcmp(r.key, identity, key_len) == 0 && r.payload_len == in->full_len)
            found = r.payload;
    if (!found)
        return false;
    lil__sha256(found, (size_t)in->full_len, digest);
    if (memcmp(digest, in->note_hash, LIL_SHA256_LEN) != 0)
        return false;
    *note = (const char *)found;
    return true;
}
