/*
 * test_scan.c -- the recovery scan on journal images built in memory:
 * every cut point of a torn tail, every damaged byte before the tail, the
 * SETTLED rule and the search past a bad record that tell them apart (with
 * the counts of what follows the damage), chain tampering, reordering, and
 * the header checks (version, features, keys, a header cut short).
 */
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "base/hash.h"
#include "journal/format.h"
#include "journal/journal.h"
#include "journal/scan.h"
#include "t.h"

#define MAX_IMG (64 * 1024)
#define NREC    6

struct image {
    uint8_t data[MAX_IMG];
    size_t len;
    uint64_t off[NREC + 1]; /* record offsets; off[NREC] = end */
};

static struct lil_env env;

/* Records of types[i] (BEGIN, then STEP, when types is NULL). */
static void build_types(struct image *img, const char *key, uint8_t flags,
                        const uint8_t *types)
{
    uint8_t chain[LIL_SHA256_LEN];
    size_t klen = key ? strlen(key) : 0;
    struct lil_mac *mac = NULL;
    struct lil_err err;

    lil__env_init(&env);
    memset(img, 0, sizeof(*img));
    T_REQUIRE(lil__mac_new(&env, &err, (const uint8_t *)key, klen, &mac) == LIL_OK);
    T_REQUIRE(lil__format_header(&err, (const uint8_t *)key, klen, 1, img->data) ==
              LIL_OK);
    lil__mac2(mac, img->data, LIL_JF_HEADER_LEN, NULL, 0, chain);
    img->len = LIL_JF_HEADER_LEN;
    for (int i = 0; i < NREC; i++) {
        char name[16], payload[64];
        struct lil_rec r = {0};
        size_t len;
        snprintf(name, sizeof(name), "step%d", i);
        snprintf(payload, sizeof(payload), "result of step %d %.*s", i, i * 3,
                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        r.type = types ? types[i] : i == 0 ? LIL_REC_BEGIN : LIL_REC_STEP;
        r.ts_ns = 1000 + i;
        r.key = (const uint8_t *)name;
        r.key_len = strlen(name);
        r.payload = (const uint8_t *)payload;
        r.payload_len = strlen(payload);
        len = LIL_JF_REC_OVERHEAD + r.key_len + r.payload_len;
        img->off[i] = img->len;
        T_REQUIRE(lil__encode_record(mac, chain, (uint64_t)i + 1, &r, flags,
                                     img->data + img->len, len) == LIL_OK);
        img->len += len;
    }
    img->off[NREC] = img->len;
    lil__mac_free(&env, mac);
}

static void build(struct image *img, const char *key, uint8_t flags)
{
    build_types(img, key, flags, NULL);
}

/* The scan of open, with its whole result. */
static lil_status scan_full(const struct image *img, size_t len,
                            struct scan_result *res, struct lil_err *err)
{
    struct lil_mac *mac = NULL;
    lil_status rc;

    lil__clearerr(err);
    rc = lil__scan_header(&env, err, "img", img->data, len, NULL, 0, &mac, res);
    if (rc == LIL_OK)
        rc = lil__scan_records(&env, err, "img", img->data, len, mac, false, 1 << 20,
                               NULL, NULL, res);
    lil__mac_free(&env, mac);
    return rc;
}

static lil_status scan(const struct image *img, size_t len, const char *key,
                       uint64_t *end, uint64_t *records, struct lil_err *err)
{
    lil__clearerr(err);
    return lil__journal_scan_buffer(&env, err, img->data, len, (const uint8_t *)key,
                                    key ? strlen(key) : 0, 1 << 20, end, records);
}

T_TEST(intact_image_scans_whole)
{
    static struct image img;
    struct lil_err err;
    uint64_t end, n;

    build(&img, NULL, LIL_JF_FLAG_SETTLED);
    T_EQ_I64(scan(&img, img.len, NULL, &end, &n, &err), LIL_OK);
    T_EQ_I64(end, img.len);
    T_EQ_I64(n, NREC);
}

T_TEST(preallocated_zeros_are_a_clean_end)
{
    static struct image img;
    struct lil_err err;
    uint64_t end, n;

    build(&img, NULL, LIL_JF_FLAG_SETTLED);
    T_EQ_I64(scan(&img, img.len + 4096, NULL, &end, &n, &err), LIL_OK);
    T_EQ_I64(end, img.len);
    T_EQ_I64(n, NREC);
}

/* Cutting the file anywhere leaves the whole records before the cut. */
T_TEST(every_cut_point_is_a_torn_tail)
{
    static struct image img;
    struct lil_err err;
    uint64_t end, n;

    build(&img, NULL, LIL_JF_FLAG_SETTLED);
    for (size_t cut = LIL_JF_HEADER_LEN; cut <= img.len; cut++) {
        uint64_t whole = 0;
        while (whole < NREC && img.off[whole + 1] <= cut)
            whole++;
        T_EQ_I64(scan(&img, cut, NULL, &end, &n, &err), LIL_OK);
        T_EQ_I64(n, whole);
        T_EQ_I64(end, img.off[whole]);
    }
}

/* A damaged byte in any record followed by SETTLED records is damage to
 * durable data: an error naming that record's offset. */
T_TEST(damage_before_settled_records_is_corrupt)
{
    static struct image img;
    struct lil_err err;
    uint64_t end, n;
    char want[64];

    build(&img, NULL, LIL_JF_FLAG_SETTLED);
    for (int k = 0; k < NREC - 1; k++) {
        for (uint64_t b = img.off[k]; b < img.off[k + 1]; b++) {
            img.data[b] ^= 0x40;
            T_EQ_I64(scan(&img, img.len, NULL, &end, &n, &err), LIL_E_CORRUPT);
            snprintf(want, sizeof(want), "offset %llu", (unsigned long long)img.off[k]);
            T_CONTAINS(err.msg, want);
            img.data[b] ^= 0x40;
        }
    }
}

/* Without SETTLED records after it, damage followed by intact steps may be
 * a power cut that made later writes durable but not an earlier one, or
 * damage; dropping them would run those steps again, so the scan refuses,
 * and counts what follows.  Damage in the last record is a torn tail. */
T_TEST(damage_before_unsettled_steps_is_refused)
{
    static struct image img;
    struct scan_result res;
    struct lil_err err;
    uint64_t end, n;
    char want[64];

    build(&img, NULL, 0);
    for (int k = 0; k < NREC; k++) {
        uint64_t b = img.off[k] + 10;
        img.data[b] ^= 0xff;
        if (k == NREC - 1) {
            T_EQ_I64(scan(&img, img.len, NULL, &end, &n, &err), LIL_OK);
            T_EQ_I64(end, img.off[k]);
        } else {
            T_EQ_I64(scan(&img, img.len, NULL, &end, &n, &err), LIL_E_CORRUPT);
            snprintf(want, sizeof(want), "offset %llu", (unsigned long long)img.off[k]);
            T_CONTAINS(err.msg, want);
            T_CONTAINS(err.msg, "never synced");
        }
        T_EQ_I64(n, (uint64_t)k);
        scan_full(&img, img.len, &res, &err);
        T_EQ_I64(res.records, (uint64_t)k);
        T_EQ_I64(res.damage_off, img.off[k]);
        T_EQ_I64(res.after_records, (uint64_t)(NREC - 1 - k));
        T_EQ_I64(res.after_steps, (uint64_t)(NREC - 1 - k));
        T_EQ_I64(res.torn, k == NREC - 1);
        T_EQ_I64(res.damaged, k != NREC - 1);
        img.data[b] ^= 0xff;
    }
}

/* Only OPEN and CLOSE records after the damage: nothing there is replayed,
 * so it is a torn tail (the writer drops them with it, and logs it). */
T_TEST(damage_before_only_open_and_close_is_torn)
{
    static const uint8_t types[NREC] = {LIL_REC_BEGIN, LIL_REC_OPEN, LIL_REC_STEP,
                                        LIL_REC_CLOSE, LIL_REC_OPEN, LIL_REC_CLOSE};
    static struct image img;
    struct scan_result res;
    struct lil_err err;

    build_types(&img, NULL, 0, types);
    img.data[img.off[2] + 40] ^= 1;
    T_EQ_I64(scan_full(&img, img.len, &res, &err), LIL_OK);
    T_EQ_I64(res.records, 2);
    T_EQ_I64(res.end, img.off[2]);
    T_CHECK(res.torn);
    T_EQ_I64(res.after_records, 3);
    T_EQ_I64(res.after_steps, 0);
    T_CHECK(!res.after_work);
    /* the same with a SETTLED record after it: damage to durable bytes */
    build_types(&img, NULL, LIL_JF_FLAG_SETTLED, types);
    img.data[img.off[2] + 40] ^= 1;
    T_EQ_I64(scan_full(&img, img.len, &res, &err), LIL_E_CORRUPT);
    T_CHECK(res.after_settled);
}

/* The search goes on past every bad stretch, and a zeroed stretch (a write
 * that never reached the disk) counts as bad bytes too. */
T_TEST(search_goes_past_several_bad_stretches)
{
    static struct image img;
    struct scan_result res;
    struct lil_err err;

    build(&img, NULL, 0);
    img.data[img.off[1] + 20] ^= 1;
    memset(img.data + img.off[3], 0, img.off[4] - img.off[3]);
    T_EQ_I64(scan_full(&img, img.len + 100, &res, &err), LIL_E_CORRUPT);
    T_EQ_I64(res.records, 1);
    T_EQ_I64(res.damage_off, img.off[1]);
    T_EQ_I64(res.after_records, 3); /* records 2, 4 and 5 */
    T_EQ_I64(res.after_steps, 3);
    T_EQ_I64(res.after_end, img.off[NREC]);
    T_CONTAINS(err.msg, "then 3 intact records (3 steps)");
}

T_TEST(edited_record_with_fixed_crc_breaks_the_chain)
{
    static struct image img;
    struct lil_err err;
    uint64_t end, n, off;
    uint32_t len;

    build(&img, NULL, 0);
    off = img.off[2];
    len = lil__rd32(img.data + off);
    img.data[off + len - LIL_JF_CHAIN_LEN - 1] ^= 1; /* last payload byte */
    lil__wr32(img.data + off + 4, lil__crc32(0, img.data + off + 8, len - 8));
    T_EQ_I64(scan(&img, img.len, NULL, &end, &n, &err), LIL_E_CORRUPT);
    T_CONTAINS(err.msg, "hash chain broken");
    T_EQ_I64(n, 2); /* the records before the edited one */
    (void)end;
}

T_TEST(edited_timestamp_breaks_the_chain)
{
    static struct image img;
    struct lil_err err;
    uint64_t end, n, off;
    uint32_t len;

    build(&img, NULL, 0);
    off = img.off[1];
    len = lil__rd32(img.data + off);
    img.data[off + LIL_JF_R_TS] ^= 1;
    lil__wr32(img.data + off + 4, lil__crc32(0, img.data + off + 8, len - 8));
    T_EQ_I64(scan(&img, img.len, NULL, &end, &n, &err), LIL_E_CORRUPT);
    T_CONTAINS(err.msg, "offset");
}

T_TEST(removed_record_is_corrupt)
{
    static struct image img;
    struct lil_err err;
    uint64_t end, n;
    size_t cut;

    build(&img, NULL, 0);
    cut = (size_t)(img.off[3] - img.off[2]);
    memmove(img.data + img.off[2], img.data + img.off[3], img.len - img.off[3]);
    T_EQ_I64(scan(&img, img.len - cut, NULL, &end, &n, &err), LIL_E_CORRUPT);
    T_CONTAINS(err.msg, "out of order");
}

T_TEST(header_checks)
{
    static struct image img;
    struct lil_err err;
    uint64_t end, n;

    build(&img, NULL, 0);
    /* a header cut short: no record yet, which a writer starts afresh */
    for (size_t cut = 0; cut < LIL_JF_HEADER_LEN; cut++) {
        T_CHECK(lil__scan_header_cut(img.data, cut));
        T_EQ_I64(scan(&img, cut, NULL, &end, &n, &err), LIL_OK);
        T_EQ_I64(end, 0);
        T_EQ_I64(n, 0);
    }
    T_CHECK(!lil__scan_header_cut(img.data, LIL_JF_HEADER_LEN));
    img.data[3] ^= 1; /* not a journal's start */
    T_CHECK(!lil__scan_header_cut(img.data, 10));
    T_EQ_I64(scan(&img, 10, NULL, &end, &n, &err), LIL_E_CORRUPT);
    img.data[3] ^= 1;
    lil__wr32(img.data + LIL_JF_H_VERSION, 2);
    lil__wr32(img.data + LIL_JF_H_CRC, lil__crc32(0, img.data, LIL_JF_H_CRC));
    T_EQ_I64(scan(&img, img.len, NULL, &end, &n, &err), LIL_E_VERSION);
    lil__wr32(img.data + LIL_JF_H_VERSION, 1);
    lil__wr32(img.data + LIL_JF_H_INCOMPAT, 0x100);
    lil__wr32(img.data + LIL_JF_H_CRC, lil__crc32(0, img.data, LIL_JF_H_CRC));
    T_EQ_I64(scan(&img, img.len, NULL, &end, &n, &err), LIL_E_VERSION);
    lil__wr32(img.data + LIL_JF_H_INCOMPAT, 0);
    img.data[LIL_JF_H_SALT] ^= 1; /* CRC no longer matches */
    T_EQ_I64(scan(&img, img.len, NULL, &end, &n, &err), LIL_E_CORRUPT);
    T_CONTAINS(err.msg, "offset 0");
}

T_TEST(keyed_journal_needs_its_key)
{
    static struct image img;
    struct lil_err err;
    uint64_t end, n;

    build(&img, "sesame", LIL_JF_FLAG_SETTLED);
    T_EQ_I64(scan(&img, img.len, "sesame", &end, &n, &err), LIL_OK);
    T_EQ_I64(n, NREC);
    T_EQ_I64(scan(&img, img.len, NULL, &end, &n, &err), LIL_E_KEY);
    T_EQ_I64(scan(&img, img.len, "sesam", &end, &n, &err), LIL_E_KEY);
    build(&img, NULL, 0);
    T_EQ_I64(scan(&img, img.len, "sesame", &end, &n, &err), LIL_E_KEY);
}

T_TEST(huge_length_fields_are_refused_without_allocating)
{
    static struct image img;
    struct lil_err err;
    uint64_t end, n;

    build(&img, NULL, 0);
    lil__wr32(img.data + img.off[4], 0xfffffff0u);
    /* a step follows the bad length: damage, not a torn tail */
    T_EQ_I64(scan(&img, img.len, NULL, &end, &n, &err), LIL_E_CORRUPT);
    T_EQ_I64(n, 4);
    lil__wr32(img.data + img.off[5], 0xfffffff0u);
    T_EQ_I64(scan(&img, img.len, NULL, &end, &n, &err), LIL_OK);
    T_EQ_I64(n, 4);
}

/* A torn record followed by megabytes of plausible SETTLED headers whose
 * lengths run to the end of the file: searching for a settled record must
 * stay linear (the CRC work is capped) and decide for damage, not hang. */
T_TEST(crafted_search_ahead_stays_linear)
{
    size_t len = 8u << 20;
    uint8_t *buf = calloc(1, len);
    struct lil_err err;
    uint64_t end, n;
    static struct image img;

    T_REQUIRE(buf != NULL);
    build(&img, NULL, 0);
    memcpy(buf, img.data, LIL_JF_HEADER_LEN);
    lil__wr32(buf + LIL_JF_HEADER_LEN, 1); /* a torn record */
    for (size_t off = 128; off + 64 <= len; off += 64) {
        lil__wr32(buf + off, (uint32_t)(len - off));
        lil__wr64(buf + off + LIL_JF_R_SEQ, 1);
        buf[off + LIL_JF_R_FLAGS] = LIL_JF_FLAG_SETTLED;
    }
    lil__clearerr(&err);
    T_EQ_I64(
        lil__journal_scan_buffer(&env, &err, buf, len, NULL, 0, 64u << 20, &end, &n),
        LIL_E_CORRUPT);
    T_CONTAINS(err.msg, "offset 64");
    free(buf);
}

/* Journals of 256 KiB and more have their chain verified on a second
 * thread: the verdicts must be the same as the serial scan's. */
static uint8_t *build_big(size_t nrec, size_t *len_out, uint64_t *off_of_mid)
{
    size_t cap = LIL_JF_HEADER_LEN + nrec * (LIL_JF_REC_OVERHEAD + 16 + 200);
    uint8_t *buf = calloc(1, cap + 4096);
    uint8_t chain[LIL_SHA256_LEN], payload[200];
    struct lil_mac *mac = NULL;
    struct lil_err err;
    size_t len = LIL_JF_HEADER_LEN;

    if (!buf || lil__mac_new(&env, &err, NULL, 0, &mac) != LIL_OK)
        return NULL;
    memset(payload, 'p', sizeof(payload));
    lil__format_header(&err, NULL, 0, 1, buf);
    lil__mac2(mac, buf, LIL_JF_HEADER_LEN, NULL, 0, chain);
    for (size_t i = 0; i < nrec; i++) {
        char name[16];
        struct lil_rec r = {0};
        size_t rl;
        snprintf(name, sizeof(name), "s%zu", i);
        r.type = i == 0 ? LIL_REC_BEGIN : LIL_REC_STEP;
        r.key = (const uint8_t *)name;
        r.key_len = strlen(name);
        r.payload = payload;
        r.payload_len = sizeof(payload);
        rl = LIL_JF_REC_OVERHEAD + r.key_len + r.payload_len;
        if (i == nrec / 2)
            *off_of_mid = len;
        lil__encode_record(mac, chain, i + 1, &r, LIL_JF_FLAG_SETTLED, buf + len, rl);
        len += rl;
    }
    lil__mac_free(&env, mac);
    *len_out = len;
    return buf;
}

T_TEST(big_journal_chain_checked_in_parallel)
{
    size_t len = 0, n = 40000;
    uint64_t mid = 0, end, recs;
    struct lil_err err;
    uint8_t *buf;
    uint32_t rlen;
    char want[64];

    lil__env_init(&env);
    buf = build_big(n, &len, &mid);
    T_REQUIRE(buf != NULL);
    T_REQUIRE(len > (8u << 20));
    lil__clearerr(&err);
    T_EQ_I64(lil__journal_scan_buffer(&env, &err, buf, len + 4096, NULL, 0, 1 << 20,
                                      &end, &recs),
             LIL_OK);
    T_EQ_I64(recs, n);
    T_EQ_I64(end, len);
    rlen = lil__rd32(buf + mid);
    buf[mid + LIL_JF_R_TS] ^= 1; /* edit, and hide it from the CRC */
    lil__wr32(buf + mid + 4, lil__crc32(0, buf + mid + 8, rlen - 8));
    T_EQ_I64(
        lil__journal_scan_buffer(&env, &err, buf, len, NULL, 0, 1 << 20, &end, &recs),
        LIL_E_CORRUPT);
    snprintf(want, sizeof(want), "hash chain broken at offset %llu",
             (unsigned long long)mid);
    T_CONTAINS(err.msg, want);
    free(buf);
}

T_MAIN()
