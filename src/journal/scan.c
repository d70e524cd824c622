/*
 * scan.c -- the recovery scan and the record codec (format.h).
 *
 * The scan walks records in order and stops at the first one that is not
 * valid.  What happens then is the heart of crash safety: a torn tail
 * (bytes that were never durable, with nothing valid after them) is
 * dropped; damage to bytes that had been durable (a SETTLED record follows
 * them), or followed by intact records that would run again if dropped, is
 * an error naming its offset (format.h, RECOVERY).
 */
#include "journal/scan.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/random.h>

#include "journal/format.h"

static const char key_check_label[] = "lil-key-check";

uint64_t lil__record_limit(size_t max_record)
{
    return (uint64_t)max_record + LIL_JF_REC_OVERHEAD + LIL_JF_KEY_MAX;
}

static void key_check(const uint8_t *key, size_t key_len, const uint8_t *salt,
                      uint8_t out[LIL_JF_KEYCHECK_LEN])
{
    uint8_t full[LIL_SHA256_LEN];
    uint8_t msg[sizeof(key_check_label) - 1 + LIL_JF_SALT_LEN];

    memcpy(msg, key_check_label, sizeof(key_check_label) - 1);
    memcpy(msg + sizeof(key_check_label) - 1, salt, LIL_JF_SALT_LEN);
    lil__hmac_sha256(key, key_len, msg, sizeof(msg), full);
    memcpy(out, full, LIL_JF_KEYCHECK_LEN);
}

/* The salt only has to differ between journals.  From the kernel, not
 * OpenSSL's RAND_bytes, whose first use initializes all of OpenSSL for the
 * process (hash.c).  Up to 256 bytes, getrandom returns them all at once
 * once the kernel's pool is ready; before that it may block or see EINTR. */
static lil_status make_salt(uint8_t *salt)
{
    ssize_t r;

    do
        r = getrandom(salt, LIL_JF_SALT_LEN, 0);
    while (r < 0 && errno == EINTR);
    return r == LIL_JF_SALT_LEN ? LIL_OK : LIL_E_IO;
}

lil_status lil__format_header(struct lil_err *err, const uint8_t *key, size_t key_len,
                              int64_t created_ns, uint8_t out[64])
{
    uint8_t *salt = out + LIL_JF_H_SALT;

    memset(out, 0, LIL_JF_HEADER_LEN);
    memcpy(out, LIL_JF_MAGIC, LIL_JF_MAGIC_LEN);
    lil__wr32(out + LIL_JF_H_VERSION, LIL_JF_VERSION);
    lil__wr32(out + LIL_JF_H_INCOMPAT, key ? LIL_JF_INCOMPAT_KEYED : 0);
    lil__wr32(out + LIL_JF_H_HEADER_LEN, LIL_JF_HEADER_LEN);
    if (make_salt(salt) != LIL_OK)
        return lil__seterr(err, LIL_E_IO, errno, "cannot make a journal salt: %s",
                           lil__errstr(errno));
    lil__wr64(out + LIL_JF_H_CREATED, (uint64_t)created_ns);
    if (key)
        key_check(key, key_len, salt, out + LIL_JF_H_KEYCHECK);
    lil__wr32(out + LIL_JF_H_CRC, lil__crc32(0, out, LIL_JF_H_CRC));
    return LIL_OK;
}

void lil__reseal_header(const uint8_t *key, size_t key_len, uint8_t h[64])
{
    uint32_t incompat = lil__rd32(h + LIL_JF_H_INCOMPAT) & ~LIL_JF_INCOMPAT_KEYED;

    lil__wr32(h + LIL_JF_H_INCOMPAT, incompat | (key ? LIL_JF_INCOMPAT_KEYED : 0));
    memset(h + LIL_JF_H_KEYCHECK, 0, LIL_JF_KEYCHECK_LEN);
    if (key)
        key_check(key, key_len, h + LIL_JF_H_SALT, h + LIL_JF_H_KEYCHECK);
    lil__wr32(h + LIL_JF_H_CRC, lil__crc32(0, h, LIL_JF_H_CRC));
}

bool lil__header_keyed(const uint8_t h[64])
{
    return (lil__rd32(h + LIL_JF_H_INCOMPAT) & LIL_JF_INCOMPAT_KEYED) != 0;
}

static lil_status header_key(struct lil_err *err, const char *path, const uint8_t *h,
                             const uint8_t *key, size_t key_len)
{
    bool keyed = (lil__rd32(h + LIL_JF_H_INCOMPAT) & LIL_JF_INCOMPAT_KEYED) != 0;
    uint8_t want[LIL_JF_KEYCHECK_LEN];

    if (keyed && !key)
        return lil__seterr(err, LIL_E_KEY, 0,
                           "%s is keyed: set LIL_JOURNAL_KEY to the key it was "
                           "written with",
                           path);
    if (!keyed && key)
        return lil__seterr(err, LIL_E_KEY, 0,
                           "%s was written without a key, but LIL_JOURNAL_KEY is set",
                           path);
    if (!keyed)
        return LIL_OK;
    key_check(key, key_len, h + LIL_JF_H_SALT, want);
    if (memcmp(want, h + LIL_JF_H_KEYCHECK, LIL_JF_KEYCHECK_LEN) != 0)
        return lil__seterr(
            err, LIL_E_KEY, 0,
            "%s: the key in use (the store's journal.key, "
            "LIL_JOURNAL_KEY or lil_store_set_key) is not the key it was "
            "written with",
            path);
    return LIL_OK;
}

static lil_status header_fields(struct lil_err *err, const char *path, const uint8_t *h)
{
    uint32_t version = lil__rd32(h + LIL_JF_H_VERSION);
    uint32_t incompat = lil__rd32(h + LIL_JF_H_INCOMPAT);

    if (lil__crc32(0, h, LIL_JF_H_CRC) != lil__rd32(h + LIL_JF_H_CRC))
        return lil__seterr(err, LIL_E_CORRUPT, 0,
                           "%s: damaged file header at offset 0 (bad checksum)", path);
    if (version > LIL_JF_VERSION)
        return lil__seterr(err, LIL_E_VERSION, 0,
                           "%s: journal format version %u is newer than this lil "
                           "(reads version %u)",
                           path, version, LIL_JF_VERSION);
    if (version == 0 || lil__rd32(h + LIL_JF_H_HEADER_LEN) != LIL_JF_HEADER_LEN)
        return lil__seterr(err, LIL_E_CORRUPT, 0,
                           "%s: bad file header at offset 0 (version %u)", path,
                           version);
    if (incompat & ~LIL_JF_INCOMPAT_KNOWN)
        return lil__seterr(err, LIL_E_VERSION, 0,
                           "%s: journal uses features this lil does not know "
                           "(incompat bits 0x%x)",
                           path, incompat & ~LIL_JF_INCOMPAT_KNOWN);
    return LIL_OK;
}

bool lil__scan_header_cut(const uint8_t *data, size_t len)
{
    size_t n = len < LIL_JF_MAGIC_LEN ? len : LIL_JF_MAGIC_LEN;

    if (len >= LIL_JF_HEADER_LEN)
        return false;
    return len == 0 || memcmp(data, LIL_JF_MAGIC, n) == 0; /* an empty file too */
}

lil_status lil__scan_header(const struct lil_env *env, struct lil_err *err,
                            const char *path, const uint8_t *data, size_t len,
                            const uint8_t *key, size_t key_len, struct lil_mac **mac,
                            struct scan_result *res)
{
    lil_status rc;

    *mac = NULL;
    memset(res, 0, sizeof(*res));
    if (len < LIL_JF_HEADER_LEN || memcmp(data, LIL_JF_MAGIC, LIL_JF_MAGIC_LEN) != 0)
        return lil__seterr(err, LIL_E_CORRUPT, 0,
                           "%s: not a lil journal (bad magic at offset 0)", path);
    rc = header_fields(err, path, data);
    if (rc == LIL_OK)
        rc = header_key(err, path, data, key, key_len);
    if (rc != LIL_OK)
        return rc;
    rc = lil__mac_new(env, err, key, key_len, mac);
    if (rc != LIL_OK)
        return rc;
    lil__mac2(*mac, data, LIL_JF_HEADER_LEN, NULL, 0, res->chain);
    res->created_ns = (int64_t)lil__rd64(data + LIL_JF_H_CREATED);
    res->end = LIL_JF_HEADER_LEN;
    res->segment = (lil__rd32(data + LIL_JF_H_INCOMPAT) & LIL_JF_INCOMPAT_SEGMENT) != 0;
    return LIL_OK;
}

/* The chain of a record: H(prev || len field || bytes 8..len-33). */
static void record_chain(struct lil_mac *mac, const uint8_t *prev, const uint8_t *rec,
                         uint32_t len, uint8_t out[LIL_SHA256_LEN])
{
    lil__mac_begin(mac);
    lil__mac_update(mac, prev, LIL_SHA256_LEN);
    lil__mac_update(mac, rec, 4);
    lil__mac_update(mac, rec + 8, len - 8 - LIL_JF_CHAIN_LEN);
    lil__mac_end(mac, out);
}

lil_status lil__encode_record(struct lil_mac *mac, uint8_t *prev_chain, uint64_t seq,
                              const struct lil_rec *rec, uint8_t flags, uint8_t *out,
                              size_t len)
{
    uint8_t *chain = out + len - LIL_JF_CHAIN_LEN;

    lil__wr32(out + LIL_JF_R_LEN, (uint32_t)len);
    lil__wr64(out + LIL_JF_R_SEQ, seq);
    lil__wr64(out + LIL_JF_R_TS, (uint64_t)rec->ts_ns);
    lil__wr32(out + LIL_JF_R_DUR, rec->dur_us);
    lil__wr16(out + LIL_JF_R_KEY_LEN, (uint16_t)rec->key_len);
    out[LIL_JF_R_TYPE] = rec->type;
    out[LIL_JF_R_FLAGS] = flags;
    if (rec->key_len)
        memcpy(out + LIL_JF_REC_FIXED, rec->key, rec->key_len);
    if (rec->payload_len)
        memcpy(out + LIL_JF_REC_FIXED + rec->key_len, rec->payload, rec->payload_len);
    record_chain(mac, prev_chain, out, (uint32_t)len, chain);
    memcpy(prev_chain, chain, LIL_SHA256_LEN);
    lil__wr32(out + LIL_JF_R_CRC, lil__crc32(0, out + 8, len - 8));
    return LIL_OK;
}

/* Is there a valid record at off whose framing and CRC hold? */
static bool frame_ok(const uint8_t *data, size_t len, uint64_t off, uint64_t limit)
{
    uint32_t rlen;

    if (off + LIL_JF_REC_OVERHEAD > len)
        return false;
    rlen = lil__rd32(data + off);
    if (rlen < LIL_JF_REC_OVERHEAD || rlen > limit || rlen > len - off)
        return false;
    if (lil__rd16(data + off + LIL_JF_R_KEY_LEN) > rlen - LIL_JF_REC_OVERHEAD)
        return false;
    return lil__crc32(0, data + off + 8, rlen - 8) ==
           lil__rd32(data + off + LIL_JF_R_CRC);
}

void lil__jrec_parse(const uint8_t *p, uint64_t off, struct lil_rec *r)
{
    r->off = off;
    r->len = lil__rd32(p);
    r->seq = lil__rd64(p + LIL_JF_R_SEQ);
    r->ts_ns = (int64_t)lil__rd64(p + LIL_JF_R_TS);
    r->dur_us = lil__rd32(p + LIL_JF_R_DUR);
    r->key_len = lil__rd16(p + LIL_JF_R_KEY_LEN);
    r->type = p[LIL_JF_R_TYPE];
    r->flags = p[LIL_JF_R_FLAGS];
    r->key = p + LIL_JF_REC_FIXED;
    r->payload = r->key + r->key_len;
    r->payload_len = r->len - LIL_JF_REC_OVERHEAD - r->key_len;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w)
            return false;
    }
    for (; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/*
 * After an invalid record at bad: are there intact records further on?  A
 * torn tail has none: what a crash or power cut interrupted was the last
 * thing written.  Damage has some, and so may a power cut that made later
 * unsynced writes durable but not an earlier one.  The search goes byte by
 * byte from bad for a record whose length and CRC hold and whose seq can
 * follow the last valid one (every record is at least 64 bytes long), then
 * walks on record by record, and searches again past any further bad
 * bytes.  It runs only past a bad record, never on a clean end.  The CRC
 * work of the byte-by-byte search is capped (crafted input could otherwise
 * make it quadratic); when the cap is hit the answer is UNDECIDED, and
 * damage is reported, never silently cut.
 */
enum after { AFTER_DONE, AFTER_UNDECIDED };

struct search {
    const uint8_t *data;
    size_t len;
    uint64_t limit;
    uint64_t budget; /* CRC bytes the byte-by-byte search may still check */
};

/* The first offset after from where an intact record with a seq that can
 * follow last_seq starts; false when there is none (or the budget ran out:
 * *undecided). */
static bool find_record(struct search *s, uint64_t from, uint64_t last_seq,
                        uint64_t *at, bool *undecided)
{
    for (uint64_t off = from + 1; off + LIL_JF_REC_OVERHEAD <= s->len; off++) {
        const uint8_t *p = s->data + off;
        uint32_t rlen;
        uint64_t seq, w;

        memcpy(&w, p, 8);
        if (w == 0) { /* no record starts in the next 5 bytes: their len is 0 */
            off += 4;
            continue;
        }
        rlen = lil__rd32(p);
        if (rlen < LIL_JF_REC_OVERHEAD || rlen > s->len - off || rlen > s->limit)
            continue;
        seq = lil__rd64(p + LIL_JF_R_SEQ);
        if (seq <= last_seq || seq - last_seq > (off - from) / LIL_JF_REC_OVERHEAD + 1)
            continue;
        if (s->budget < rlen) {
            *undecided = true;
            return false;
        }
        s->budget -= rlen;
        if (frame_ok(s->data, s->len, off, s->limit)) {
            *at = off;
            return true;
        }
    }
    return false;
}

static bool is_step_outcome(uint8_t type)
{
    return type == LIL_REC_STEP || type == LIL_REC_STEP_FAILED;
}

/* Walk the intact records from at (which is one) while their seqs follow
 * each other, counting them in res; *seq and *end receive the last one's
 * seq and end. */
static void walk_after(const struct search *s, uint64_t at, struct scan_result *res,
                       uint64_t *seq, uint64_t *end)
{
    const uint8_t *p = s->data + at;

    *seq = lil__rd64(p + LIL_JF_R_SEQ);
    for (;;) {
        uint8_t type = p[LIL_JF_R_TYPE];
        res->after_records++;
        res->after_steps += is_step_outcome(type);
        res->after_work |= type != LIL_REC_OPEN && type != LIL_REC_CLOSE;
        res->after_settled |= (p[LIL_JF_R_FLAGS] & LIL_JF_FLAG_SETTLED) != 0;
        at += lil__rd32(p);
        res->after_end = at;
        p = s->data + at;
        if (!frame_ok(s->data, s->len, at, s->limit) ||
            lil__rd64(p + LIL_JF_R_SEQ) != *seq + 1)
            break;
        (*seq)++;
    }
    *end = at;
}

/* Count in res the intact records after the invalid record at bad (the
 * record at bad itself too when its framing holds: it is out of order). */
static enum after records_after(const uint8_t *data, size_t len, uint64_t bad,
                                uint64_t last_seq, uint64_t limit,
                                struct scan_result *res)
{
    struct search s = {data, len, limit, 4 * (uint64_t)len + (1u << 20)};
    uint64_t from = bad, seq = last_seq, at = bad;
    bool undecided = false;

    if (frame_ok(data, len, bad, limit))
        walk_after(&s, bad, res, &seq, &from);
    while (find_record(&s, from, seq, &at, &undecided))
        walk_after(&s, at, res, &seq, &from);
    return undecided ? AFTER_UNDECIDED : AFTER_DONE;
}

static const char *why_invalid(const uint8_t *data, size_t len, uint64_t off,
                               uint64_t expect_seq, uint64_t limit)
{
    uint32_t rlen;

    if (off + 4 > len)
        return "truncated record";
    rlen = lil__rd32(data + off);
    if (rlen < LIL_JF_REC_OVERHEAD || rlen > limit)
        return "impossible record length";
    if (rlen > len - off)
        return "record runs past the end of the file";
    if (!frame_ok(data, len, off, limit))
        return "bad checksum";
    if (lil__rd64(data + off + LIL_JF_R_SEQ) != expect_seq)
        return "sequence number out of order";
    return "bad record";
}

/* Intact records after the damage that no sync proves durable, and that
 * hold more than OPEN and CLOSE records: a power cut may explain them
 * (docs/format.md, Recovery, rule 5), but so may damage, and dropping them
 * would run their steps again.  The open refuses; `lil check` tells what
 * lies there, `lil check --repair` drops it when asked. */
static lil_status unsynced_after(struct lil_err *err, const char *path, const char *why,
                                 const struct scan_result *res)
{
    return lil__seterr(err, LIL_E_CORRUPT, 0,
                       "%s: damaged record at offset %llu (%s), then %llu intact "
                       "records (%llu steps) never synced; not dropped: `lil check "
                       "--repair` truncates the journal there",
                       path, (unsigned long long)res->damage_off, why,
                       (unsigned long long)res->after_records,
                       (unsigned long long)res->after_steps);
}

static lil_status stop_at(struct lil_err *err, const char *path, const uint8_t *data,
                          size_t len, uint64_t limit, struct scan_result *res)
{
    uint64_t off = res->end;
    const char *why;

    res->damage_off = off;
    if (off + 4 <= len && lil__rd32(data + off) == 0 && all_zero(data + off, len - off))
        return LIL_OK; /* clean end: preallocated zeros */
    if (off >= len)
        return LIL_OK;
    why = why_invalid(data, len, off, res->seq + 1, limit);
    res->damaged = true;
    if (records_after(data, len, off, res->seq, limit, res) == AFTER_UNDECIDED)
        return lil__seterr(err, LIL_E_CORRUPT, 0,
                           "%s: damaged record at offset %llu (%s), and the bytes "
                           "after it are too irregular to prove it a torn tail; "
                           "`lil check --repair` truncates the journal there",
                           path, (unsigned long long)off, why);
    /* A whole, checksummed record out of sequence was not torn: records
     * were removed or reordered.  A SETTLED record after the damage was
     * written when the damaged bytes had been durable. */
    if (frame_ok(data, len, off, limit) || res->after_settled)
        return lil__seterr(err, LIL_E_CORRUPT, 0,
                           "%s: damaged record at offset %llu (%s) with %llu intact "
                           "records (%llu steps) after it; `lil check --repair` "
                           "truncates the journal there",
                           path, (unsigned long long)off, why,
                           (unsigned long long)res->after_records,
                           (unsigned long long)res->after_steps);
    if (res->after_work)
        return unsynced_after(err, path, why, res);
    res->damaged = false; /* a torn tail, perhaps with OPEN and CLOSE after it */
    res->torn = true;
    return LIL_OK;
}

static lil_status chain_check(struct lil_err *err, const char *path,
                              struct lil_mac *mac, const uint8_t *rec, uint32_t rlen,
                              uint64_t off, struct scan_result *res)
{
    uint8_t next[LIL_SHA256_LEN];

    record_chain(mac, res->chain, rec, rlen, next);
    if (memcmp(next, rec + rlen - LIL_JF_CHAIN_LEN, LIL_SHA256_LEN) != 0) {
        res->damaged = true;
        res->damage_off = off;
        return lil__seterr(err, LIL_E_CORRUPT, 0,
                           "%s: hash chain broken at offset %llu (seq %llu): a "
                           "record was edited, removed or reordered",
                           path, (unsigned long long)off,
                           (unsigned long long)(res->seq + 1));
    }
    memcpy(res->chain, next, LIL_SHA256_LEN);
    return LIL_OK;
}

/* ---- the chain on a second core --------------------------------------- */

/* A large journal's chain is verified by a second thread while the first
 * checks framing and builds the index: SHA-256 is the larger half of the
 * work, and the two halves only meet at the end.  The chain thread walks
 * the same records by their length fields and notes the first record
 * whose chain does not match; that is damage only if the framing scan
 * found the record valid (before its end). */
#define PARALLEL_CHAIN_MIN (256u << 10) /* bytes of journal */

struct chain_job {
    struct lil_mac *mac;
    const uint8_t *data;
    size_t len;
    uint64_t limit;
    uint8_t chain[LIL_SHA256_LEN];
    uint64_t bad_off; /* first record whose chain is wrong; UINT64_MAX: none */
};

static void *chain_thread(void *arg)
{
    struct chain_job *c = arg;
    uint64_t off = LIL_JF_HEADER_LEN;
    uint8_t next[LIL_SHA256_LEN];

    c->bad_off = UINT64_MAX;
    while (off + LIL_JF_REC_OVERHEAD <= c->len) {
        uint32_t rlen = lil__rd32(c->data + off);
        if (rlen < LIL_JF_REC_OVERHEAD || rlen > c->limit || rlen > c->len - off)
            break;
        record_chain(c->mac, c->chain, c->data + off, rlen, next);
        if (memcmp(next, c->data + off + rlen - LIL_JF_CHAIN_LEN, LIL_SHA256_LEN) !=
            0) {
            c->bad_off = off;
            break;
        }
        memcpy(c->chain, next, LIL_SHA256_LEN);
        off += rlen;
    }
    return NULL;
}

/* The framing scan, with (chained) or without the chain check. */
static lil_status scan_loop(struct lil_err *err, const char *path, const uint8_t *data,
                            size_t len, struct lil_mac *mac, uint64_t limit,
                            bool chained, journal_scan_fn fn, void *ud,
                            struct scan_result *res)
{
    for (;;) {
        uint64_t off = res->end;
        struct lil_rec r;
        lil_status rc;

        if (!frame_ok(data, len, off, limit) ||
            lil__rd64(data + off + LIL_JF_R_SEQ) != res->seq + 1)
            return stop_at(err, path, data, len, limit, res);
        lil__jrec_parse(data + off, off, &r);
        if (chained && (rc = chain_check(err, path, mac, data + off, r.len, off, res)))
            return rc;
        if (fn && (rc = fn(ud, &r, err)) != LIL_OK)
            return rc;
        if (r.seq == res->mark_seq) {
            memcpy(res->mark_chain, data + off + r.len - LIL_JF_CHAIN_LEN,
                   LIL_SHA256_LEN);
            res->marked = true;
        }
        if (res->records == 0)
            res->created_ns = r.ts_ns;
        res->seq = r.seq;
        res->records++;
        res->last_ns = r.ts_ns;
        res->last_off = off;
        res->last_type = r.type;
        res->end = off + r.len;
    }
}

/* After a parallel scan: the chain thread's verdict on the valid prefix. */
static lil_status chain_verdict(struct lil_err *err, const char *path,
                                const struct chain_job *c, const uint8_t *data,
                                lil_status rc, struct scan_result *res)
{
    if (c->bad_off < res->end) {
        res->damaged = true;
        res->damage_off = c->bad_off;
        return lil__seterr(
            err, LIL_E_CORRUPT, 0,
            "%s: hash chain broken at offset %llu (seq %llu): a "
            "record was edited, removed or reordered",
            path, (unsigned long long)c->bad_off,
            (unsigned long long)lil__rd64(data + c->bad_off + LIL_JF_R_SEQ));
    }
    if (rc == LIL_OK && res->records) /* the chain stored in the last record */
        memcpy(res->chain, data + res->end - LIL_JF_CHAIN_LEN, LIL_SHA256_LEN);
    return rc;
}

/* A later segment starts with its link: BEGIN, whose seq (above 1) the
 * records after it follow.  Anything else there is damage: a segment is
 * written whole and synced before it is named. */
static lil_status segment_start(struct lil_err *err, const char *path,
                                const uint8_t *data, size_t len, uint64_t limit,
                                struct scan_result *res)
{
    uint64_t off = res->end;
    struct lil_rec r;

    if (!res->segment || res->records)
        return LIL_OK;
    if (frame_ok(data, len, off, limit)) {
        lil__jrec_parse(data + off, off, &r);
        if (r.type == LIL_REC_BEGIN && r.seq > 1 &&
            lil__seg_link_decode(r.payload, r.payload_len, &res->link)) {
            res->base_seq = r.seq;
            res->seq = r.seq - 1;
            return LIL_OK;
        }
    }
    res->damaged = true;
    res->damage_off = off;
    return lil__seterr(err, LIL_E_CORRUPT, 0,
                       "%s: damaged record at offset %llu (a journal segment that does "
                       "not start with its link to the segment before it)",
                       path, (unsigned long long)off);
}

lil_status lil__scan_records(const struct lil_env *env, struct lil_err *err,
                             const char *path, const uint8_t *data, size_t len,
                             struct lil_mac *mac, bool verify_chain, size_t max_record,
                             journal_scan_fn fn, void *ud, struct scan_result *res)
{
    uint64_t limit = lil__record_limit(max_record);
    struct chain_job c = {mac, data, len, limit, {0}, UINT64_MAX};
    pthread_t th;
    lil_status rc;

    (void)env;
    rc = segment_start(err, path, data, len, limit, res);
    if (rc != LIL_OK)
        return rc;
    if (!verify_chain) { /* the next record chains to the last one's value */
        rc = scan_loop(err, path, data, len, mac, limit, false, fn, ud, res);
        if (rc == LIL_OK && res->records)
            memcpy(res->chain, data + res->end - LIL_JF_CHAIN_LEN, LIL_SHA256_LEN);
        return rc;
    }
    memcpy(c.chain, res->chain, LIL_SHA256_LEN);
    if (len < PARALLEL_CHAIN_MIN || pthread_create(&th, NULL, chain_thread, &c) != 0)
        return scan_loop(err, path, data, len, mac, limit, true, fn, ud, res);
    rc = scan_loop(err, path, data, len, mac, limit, false, fn, ud, res);
    pthread_join(th, NULL);
    if (rc != LIL_OK && rc != LIL_E_CORRUPT)
        return rc; /* the callback's error */
    return chain_verdict(err, path, &c, data, rc, res);
}
