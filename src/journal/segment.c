/*
 * segment.c -- the bytes of a journal's later segment (format.h,
 * SEGMENTS): its link, and a whole new segment built in memory before
 * journal.c writes, syncs and names it.
 */
#include "journal/segment.h"

#include <string.h>

#include "base/clock.h"
#include "base/hash.h"
#include "journal/format.h"
#include "journal/scan.h"

void lil__seg_link_encode(const struct journal_link *l, uint8_t out[LIL_JSEG_LINK_LEN])
{
    memset(out, 0, LIL_JSEG_LINK_LEN);
    lil__wr32(out, l->segment);
    memcpy(out + 8, l->prev_salt, sizeof(l->prev_salt));
    memcpy(out + 24, l->prev_chain, sizeof(l->prev_chain));
}

bool lil__seg_link_decode(const uint8_t *p, size_t n, struct journal_link *out)
{
    if (n != LIL_JSEG_LINK_LEN || lil__rd32(p) == 0 || lil__rd32(p + 4) != 0)
        return false;
    out->segment = lil__rd32(p);
    memcpy(out->prev_salt, p + 8, sizeof(out->prev_salt));
    memcpy(out->prev_chain, p + 24, sizeof(out->prev_chain));
    return true;
}

static lil_status add_record(struct lil_mac *mac, struct lil_err *err,
                             struct lil_buf *b, uint8_t *chain, uint64_t seq,
                             const struct lil_rec *rec)
{
    size_t len = LIL_JF_REC_OVERHEAD + rec->key_len + rec->payload_len;
    struct lil_rec r = *rec;
    lil_status rc;

    if (!r.ts_ns)
        r.ts_ns = lil__wall_ns();
    rc = lil__buf_reserve(b, len);
    if (rc == LIL_OK)
        rc = lil__encode_record(mac, chain, seq, &r,
                                (uint8_t)(rec->flags | LIL_JF_FLAG_SETTLED),
                                b->data + b->len, len);
    if (rc != LIL_OK)
        return lil__seterr(err, rc, 0, "out of memory building a journal segment");
    b->len += len;
    return LIL_OK;
}

static lil_status seg_header(struct lil_err *err, const uint8_t *key, size_t key_len,
                             uint8_t h[LIL_JF_HEADER_LEN])
{
    lil_status rc = lil__format_header(err, key, key_len, lil__wall_ns(), h);

    if (rc != LIL_OK)
        return rc;
    lil__wr32(h + LIL_JF_H_INCOMPAT,
              lil__rd32(h + LIL_JF_H_INCOMPAT) | LIL_JF_INCOMPAT_SEGMENT);
    lil__wr32(h + LIL_JF_H_CRC, lil__crc32(0, h, LIL_JF_H_CRC));
    return LIL_OK;
}

lil_status lil__seg_image(const struct lil_env *env, struct lil_err *err,
                          const uint8_t *key, size_t key_len, const char *run_id,
                          uint64_t prev_seq, const struct journal_link *link,
                          const struct lil_rec *recs, size_t n, struct lil_buf *b,
                          uint8_t chain[32], uint8_t salt[16])
{
    uint8_t h[LIL_JF_HEADER_LEN], lk[LIL_JSEG_LINK_LEN];
    struct lil_rec begin = {0};
    struct lil_mac *mac = NULL;
    lil_status rc;

    lil__buf_reset(b);
    rc = seg_header(err, key, key_len, h);
    if (rc == LIL_OK)
        rc = lil__mac_new(env, err, key, key_len, &mac);
    if (rc == LIL_OK && lil__buf_add(b, h, sizeof(h)) != LIL_OK)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (rc == LIL_OK)
        lil__mac2(mac, h, sizeof(h), NULL, 0, chain);
    lil__seg_link_encode(link, lk);
    begin.type = LIL_REC_BEGIN;
    begin.key = (const uint8_t *)run_id;
    begin.key_len = strlen(run_id);
    begin.payload = lk;
    begin.payload_len = sizeof(lk);
    if (rc == LIL_OK)
        rc = add_record(mac, err, b, chain, prev_seq + 1, &begin);
    for (size_t i = 0; rc == LIL_OK && i < n; i++)
        rc = add_record(mac, err, b, chain, prev_seq + 2 + i, &recs[i]);
    lil__mac_free(env, mac);
    memcpy(salt, h + LIL_JF_H_SALT, LIL_JF_SALT_LEN);
    return rc;
}
