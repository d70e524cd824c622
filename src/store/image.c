/*
 * image.c -- journal images held in memory (image.h): a new run's first
 * bytes, the scan at open, walking frames, the records the open scanned.
 */
#include "store/image.h"

#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/hash.h"
#include "journal/format.h"

lil_status lil__image_first(const struct lil_env *env, struct lil_err *err,
                            const char *run_id, const uint8_t *key, size_t key_len,
                            struct lil_buf *out)
{
    struct lil_rec rec = {0};
    struct lil_mac *mac = NULL;
    uint8_t chain[LIL_SHA256_LEN];
    size_t len = LIL_JF_REC_OVERHEAD + strlen(run_id);
    lil_status rc = lil__mac_new(env, err, key, key_len, &mac);

    if (rc == LIL_OK && lil__buf_reserve(out, LIL_JF_HEADER_LEN + len) != LIL_OK)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (rc == LIL_OK)
        rc =
            lil__format_header(err, key, key_len, lil__wall_ns(), out->data + out->len);
    if (rc == LIL_OK) {
        uint8_t *header = out->data + out->len;
        rec.type = LIL_REC_BEGIN;
        rec.key = (const uint8_t *)run_id;
        rec.key_len = strlen(run_id);
        rec.ts_ns = lil__wall_ns();
        lil__mac2(mac, header, LIL_JF_HEADER_LEN, NULL, 0, chain);
        rc = lil__encode_record(mac, chain, 1, &rec, LIL_JF_FLAG_SETTLED,
                                header + LIL_JF_HEADER_LEN, len);
        if (rc != LIL_OK)
            rc = lil__seterr(err, rc, 0, "out of memory");
        else
            out->len += LIL_JF_HEADER_LEN + len;
    }
    lil__mac_free(env, mac);
    return rc;
}

lil_status lil__image_scan(const struct lil_env *env, struct lil_err *err,
                           const char *where, const uint8_t *data, size_t len,
                           const struct lil_srun_opts *o, lil_rec_scan_fn fn, void *ud,
                           struct lil_mac **mac, struct scan_result *res)
{
    lil_status rc =
        lil__scan_header(env, err, where, data, len, o->key, o->key_len, mac, res);

    if (rc == LIL_OK)
        rc = lil__scan_records(env, err, where, data, len, *mac,
                               o->verify_chain || o->key, o->max_record, fn, ud, res);
    if (rc == LIL_OK && (res->torn || res->records == 0))
        rc = lil__seterr(err, LIL_E_CORRUPT, 0,
                         "%s: damaged record at offset %llu (`lil check` shows it; "
                         "`lil check --repair` deletes it and what follows)",
                         where, (unsigned long long)res->end);
    return rc;
}

int lil__image_walk(const uint8_t *frames, size_t len, uint64_t off, lil_rec_walk_fn fn,
                    void *ud)
{
    size_t at = 0;

    while (at + LIL_JF_REC_OVERHEAD <= len) {
        struct lil_rec rec;
        lil__jrec_parse(frames + at, off + at, &rec);
        if (rec.len < LIL_JF_REC_OVERHEAD || rec.len > len - at)
            break;
        if (fn(ud, &rec) != 0)
            return 1;
        at += rec.len;
    }
    return 0;
}

int lil__image_records(const uint8_t *image, size_t valid, lil_rec_walk_fn fn, void *ud)
{
    if (valid <= LIL_JF_HEADER_LEN)
        return 0;
    return lil__image_walk(image + LIL_JF_HEADER_LEN, valid - LIL_JF_HEADER_LEN,
                           LIL_JF_HEADER_LEN, fn, ud);
}

const uint8_t *lil__image_head(const uint8_t *image, size_t valid)
{
    return image + valid - LIL_JF_CHAIN_LEN;
}

bool lil__image_next(const uint8_t *image, uint64_t end, uint64_t *cursor,
                     struct lil_rec *rec)
{
    uint64_t at = *cursor < LIL_JF_HEADER_LEN ? LIL_JF_HEADER_LEN : *cursor;

    if (at >= end)
        return false;
    lil__jrec_parse(image + at, at, rec);
    *cursor = at + rec->len;
    return true;
}
