/*
 * move.c -- moving runs between stores: `lil export` and `lil import`
 * (lil_run_export, lil_run_import), over any two backends.
 *
 * What moves is a journal file's bytes (journal/format.h): every backend
 * gives a run as one (run_image) and makes a run from one (run_import).
 * Both ways the bytes are verified here with the journal's own check
 * (framing, sequence, chain; HMAC with the store's key), so a run is never
 * moved damaged, and a torn tail (nothing acknowledged) is left behind.
 *
 * Keys: an export is verified under the source store's key and leaves as
 * it is stored.  An import verifies under the source key (the one given,
 * else the destination's) and seals the run with the destination's key
 * (its own key, made now in a new file store, or the one given to it; none
 * when it has none).  A keyed journal never verifies without a key, and a
 * source key given for a journal that is not keyed is refused (a journal
 * swapped for an unkeyed one).
 *
 * An import under another run id, or sealed under another key, rewrites
 * the header's key check (the salt is kept) and BEGIN (it names the run),
 * so every chain value after it: each record is encoded again with its
 * seq, time, flags, key and payload, chained from the header as a new
 * journal would be.  Otherwise the bytes go in unchanged.
 *
 * A fork (lil_run_fork, lil fork) is an import of the first records of a
 * verified image under a new id, sealed the same way, with one record
 * added after BEGIN (the fork's provenance, seq 2): the records after it
 * keep their bytes and times, their seq one higher.
 */
#include <string.h>

#include "base/alloc.h"
#include "journal/format.h"
#include "journal/journal.h"
#include "journal/scan.h"
#include "store/store.h"

/* Verify image (len bytes) under key: LIL_OK with *valid (the end of the
 * last valid record) when it is a whole journal, perhaps with a torn tail;
 * else the error, in words. */
static lil_status verify_with(struct lil_store *st, struct lil_err *err,
                              const char *name, const uint8_t *image, size_t len,
                              const uint8_t *key, size_t key_len, uint64_t *valid)
{
    lil_check_report rep;
    lil_status rc;

    memset(&rep, 0, sizeof(rep));
    rep.struct_size = sizeof(rep);
    rc = lil__journal_check_image(st->env, err, name, image, len, key, key_len, &rep);
    if (rc != LIL_OK)
        return rc;
    if (!rep.intact)
        return lil__seterr(err, LIL_E_CORRUPT, 0, "%s", rep.message);
    if (rep.records == 0)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "%s holds no complete record (its creation was cut short)",
                           name);
    *valid = rep.valid_bytes;
    return LIL_OK;
}

/* verify_with under the store's key (an export). */
static lil_status verify(struct lil_store *st, struct lil_err *err, const char *name,
                         const uint8_t *image, size_t len, uint64_t *valid)
{
    uint8_t *key = NULL;
    size_t key_len = 0;
    lil_status rc = lil__store_key_copy(st, err, &key, &key_len);

    if (rc == LIL_OK)
        rc = verify_with(st, err, name, image, len, key, key_len, valid);
    lil__store_key_free(st, key, key_len);
    return rc;
}

lil_status lil__store_image(struct lil_store *st, struct lil_err *err,
                            const char *run_id, struct lil_buf *image, uint64_t *valid)
{
    lil_status rc = lil__run_id_check(err, run_id);

    if (rc == LIL_OK)
        rc = st->ops->run_image(st, err, run_id, image);
    if (rc == LIL_OK)
        rc = verify(st, err, run_id, image->data, image->len, valid);
    return rc;
}

lil_status lil__store_export(struct lil_store *st, struct lil_err *err,
                             const char *run_id, lil_write_fn fn, void *ud)
{
    struct lil_buf image;
    uint64_t valid = 0;
    lil_status rc;

    lil__buf_init(&image, st->env, (size_t)-1);
    rc = lil__store_image(st, err, run_id, &image, &valid);
    if (rc == LIL_OK && fn(ud, image.data, (size_t)valid) != 0)
        rc = lil__seterr(err, LIL_E_IO, 0, "exporting run %s: the writer stopped",
                         run_id);
    lil__buf_free(&image);
    return rc;
}

/* ---- import ------------------------------------------------------------------- */

/* Encode r as record seq of out, chained after chain. */
static lil_status add_record(struct lil_mac *mac, uint8_t *chain, uint64_t seq,
                             const struct lil_rec *r, struct lil_buf *out)
{
    size_t n = LIL_JF_REC_OVERHEAD + r->key_len + r->payload_len;
    lil_status rc = lil__buf_reserve(out, n);

    if (rc == LIL_OK)
        rc = lil__encode_record(mac, chain, seq, r, r->flags, out->data + out->len, n);
    out->len += rc == LIL_OK ? n : 0;
    return rc;
}

/* image (valid bytes) sealed under key (NULL: none), with BEGIN naming
 * new_id, extra (when not NULL) added after BEGIN and every chain computed
 * again, into out. */
static lil_status rechain(struct lil_store *st, struct lil_err *err,
                          const uint8_t *image, size_t len, const char *new_id,
                          const uint8_t *key, size_t key_len,
                          const struct lil_rec *extra, struct lil_buf *out)
{
    uint8_t chain[LIL_SHA256_LEN], header[LIL_JF_HEADER_LEN];
    struct lil_mac *mac = NULL;
    size_t at = LIL_JF_HEADER_LEN;
    uint64_t shift = 0;
    lil_status rc;

    memcpy(header, image, LIL_JF_HEADER_LEN);
    lil__reseal_header(key, key_len, header);
    rc = lil__mac_new(st->env, err, key, key_len, &mac);
    if (rc == LIL_OK)
        lil__mac2(mac, header, LIL_JF_HEADER_LEN, NULL, 0, chain);
    if (rc == LIL_OK && lil__buf_add(out, header, LIL_JF_HEADER_LEN))
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    while (rc == LIL_OK && at < len) {
        struct lil_rec r;
        lil__jrec_parse(image + at, at, &r);
        at += r.len;
        if (r.type == LIL_REC_BEGIN) {
            r.key = (const uint8_t *)new_id;
            r.key_len = strlen(new_id);
        }
        rc = add_record(mac, chain, r.seq + shift, &r, out);
        if (rc == LIL_OK && r.type == LIL_REC_BEGIN && extra && !shift) {
            shift = 1;
            rc = add_record(mac, chain, r.seq + shift, extra, out);
        }
        if (rc != LIL_OK)
            rc = lil__seterr(err, rc, 0, "out of memory");
    }
    lil__mac_free(st->env, mac);
    return rc;
}

/* The run id BEGIN names (the first record, at offset 64). */
static lil_status begin_id(struct lil_err *err, const uint8_t *image, char *id,
                           size_t cap)
{
    struct lil_rec r;

    lil__jrec_parse(image + LIL_JF_HEADER_LEN, LIL_JF_HEADER_LEN, &r);
    if (r.type != LIL_REC_BEGIN || r.key_len == 0 || r.key_len >= cap)
        return lil__seterr(err, LIL_E_CORRUPT, 0,
                           "the journal's first record is not a BEGIN naming its run");
    memcpy(id, r.key, r.key_len);
    id[r.key_len] = '\0';
    return lil__run_id_check(err, id);
}

static bool is_journal(const uint8_t *data, size_t len)
{
    return len >= LIL_JF_HEADER_LEN &&
           memcmp(data, LIL_JF_MAGIC, LIL_JF_MAGIC_LEN) == 0;
}

/* Verify the journal to import under the source key (src, else the
 * destination's key dst). */
static lil_status verify_source(struct lil_store *st, struct lil_err *err,
                                const uint8_t *data, size_t len,
                                const struct lil_import_key *src, const uint8_t *dst,
                                size_t dst_len, uint64_t *valid)
{
    bool keyed = lil__header_keyed(data);
    const uint8_t *key = src && src->key ? src->key : dst;
    size_t key_len = src && src->key ? src->key_len : dst_len;
    lil_status rc;

    if (src && src->key && !keyed)
        return lil__seterr(err, LIL_E_KEY, 0,
                           "the journal to import is not keyed, but a source key was "
                           "given: refused");
    if (keyed && !key)
        return lil__seterr(err, LIL_E_KEY, 0,
                           "the journal to import is keyed: give the key it was "
                           "written with (lil import --source-key FILE)");
    rc = verify_with(st, err, "the journal to import", data, len, keyed ? key : NULL,
                     keyed ? key_len : 0, valid);
    if (rc != LIL_E_KEY || (src && src->key))
        return rc;
    return lil__seterr(err, LIL_E_KEY, 0,
                       "the journal to import was written under another key than this "
                       "store's: give that key (lil import --source-key FILE, "
                       "lil_run_import_keyed)");
}

/* Whether the image must be sealed again: another id, or another key. */
static bool must_rechain(const uint8_t *data, const char *run_id, const char *source,
                         const struct lil_import_key *src, const uint8_t *dst,
                         size_t dst_len)
{
    bool keyed = lil__header_keyed(data);

    if (strcmp(run_id, source) != 0 || keyed != (dst != NULL))
        return true;
    if (!keyed || !src || !src->key)
        return false; /* unkeyed both sides, or verified under dst already */
    return src->key_len != dst_len || memcmp(src->key, dst, dst_len) != 0;
}

/* The checks of an import before anything is written: the journal's form,
 * the id, its verification under the source key; *source its run id. */
static lil_status import_checks(struct lil_store *st, struct lil_err *err,
                                const uint8_t *data, size_t len, const char *run_id,
                                const struct lil_import_key *src, const uint8_t *dst,
                                size_t dst_len, char *source, uint64_t *valid)
{
    lil_status rc = LIL_OK;

    if (!is_journal(data, len))
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "not a lil journal (no journal header: docs/format.md)");
    if (run_id)
        rc = lil__run_id_check(err, run_id);
    if (rc == LIL_OK)
        rc = verify_source(st, err, data, len, src, dst, dst_len, valid);
    if (rc == LIL_OK)
        rc = begin_id(err, data, source, LIL_RUN_ID_MAX + 1);
    return rc;
}

lil_status lil__store_import(struct lil_store *st, struct lil_err *err,
                             const uint8_t *data, size_t len, const char *run_id,
                             const struct lil_import_key *src, char **imported_id)
{
    char source[LIL_RUN_ID_MAX + 1];
    struct lil_buf moved;
    uint64_t valid = 0;
    uint8_t *dst = NULL;
    size_t dst_len = 0;
    lil_status rc = LIL_OK;

    if (!is_journal(data, len))
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "not a lil journal (no journal header: docs/format.md)");
    rc = lil__store_key_ensure(st, err);
    if (rc == LIL_OK)
        rc = lil__store_key_copy(st, err, &dst, &dst_len);
    if (rc == LIL_OK)
        rc = import_checks(st, err, data, len, run_id, src, dst, dst_len, source,
                           &valid);
    if (rc != LIL_OK) {
        lil__store_key_free(st, dst, dst_len);
        return rc;
    }
    if (!run_id)
        run_id = source;
    lil__buf_init(&moved, st->env, (size_t)-1);
    if (must_rechain(data, run_id, source, src, dst, dst_len))
        rc = rechain(st, err, data, (size_t)valid, run_id, dst, dst_len, NULL, &moved);
    lil__store_key_free(st, dst, dst_len);
    if (rc == LIL_OK)
        rc = st->ops->run_import(st, err, run_id, moved.len ? moved.data : data,
                                 moved.len ? moved.len : (size_t)valid);
    lil__buf_free(&moved);
    if (rc == LIL_OK && imported_id) {
        *imported_id = lil__export_copy(st->env, run_id, strlen(run_id));
        if (!*imported_id)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    return rc;
}

lil_status lil__store_fork_in(struct lil_store *st, struct lil_err *err,
                              const uint8_t *image, size_t len, const char *new_id,
                              const struct lil_rec *provenance)
{
    struct lil_buf forked;
    uint8_t *dst = NULL;
    size_t dst_len = 0;
    lil_status rc = lil__run_id_check(err, new_id);

    if (rc == LIL_OK && !is_journal(image, len))
        rc = lil__seterr(err, LIL_E_INVAL, 0, "not a lil journal");
    if (rc == LIL_OK)
        rc = lil__store_key_ensure(st, err);
    if (rc == LIL_OK)
        rc = lil__store_key_copy(st, err, &dst, &dst_len);
    if (rc != LIL_OK)
        return rc;
    lil__buf_init(&forked, st->env, (size_t)-1);
    rc = rechain(st, err, image, len, new_id, dst, dst_len, provenance, &forked);
    lil__store_key_free(st, dst, dst_len);
    if (rc == LIL_OK)
        rc = st->ops->run_import(st, err, new_id, forked.data, forked.len);
    lil__buf_free(&forked);
    return rc;
}
