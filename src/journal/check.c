/*
 * check.c -- reading a journal without writing it: walking its records,
 * verifying (and on request repairing) a file, and scanning an image in
 * memory (the fuzzer's entry point).  The file's image and its holder's
 * pid are image.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "journal/format.h"
#include "journal/image.h"
#include "journal/journal.h"
#include "journal/scan.h"
#include "os/os.h"

/* ---- walking ------------------------------------------------------------ */

static lil_status walk_one(const struct journal_view *v, struct lil_err *err,
                           struct lil_buf *b, uint64_t off, uint64_t end,
                           uint32_t *len_out)
{
    uint8_t head[4];
    uint32_t len;
    lil_status rc = lil__os_pread_all(v->env, err, v->fd, head, 4, off, v->path);

    if (rc != LIL_OK)
        return rc;
    len = lil__rd32(head);
    if (len < LIL_JF_REC_OVERHEAD || len > end - off)
        return lil__seterr(err, LIL_E_CORRUPT, 0, "%s: bad record at offset %llu",
                           v->path, (unsigned long long)off);
    lil__buf_reset(b);
    rc = lil__buf_reserve(b, len);
    if (rc != LIL_OK)
        return lil__seterr(err, rc, 0, "out of memory reading a record");
    rc = lil__os_pread_all(v->env, err, v->fd, b->data, len, off, v->path);
    if (rc == LIL_OK &&
        lil__rd16(b->data + LIL_JF_R_KEY_LEN) > len - LIL_JF_REC_OVERHEAD)
        rc = lil__seterr(err, LIL_E_CORRUPT, 0, "%s: bad key length at offset %llu",
                         v->path, (unsigned long long)off);
    *len_out = len;
    return rc;
}

lil_status lil__journal_foreach(struct journal *j, struct lil_err *err,
                                journal_walk_fn fn, void *ud)
{
    struct journal_view v;
    struct lil_buf b;
    uint64_t end = lil__journal_written(j);
    uint64_t off = LIL_JF_HEADER_LEN;
    struct lil_rec sr;
    lil_status rc = lil__journal_view(j, &v);

    /* the records the open scan checked are in memory: no read for them
     * (unless the handle went on in a new segment since) */
    for (uint64_t at = off; rc == LIL_OK && !lil__journal_rotated(j) &&
                            lil__journal_next_scanned(j, &at, &sr);) {
        off = at;
        if (fn(ud, &sr) != 0)
            return LIL_OK;
    }
    lil__buf_init(&b, v.env, (size_t)-1);
    while (rc == LIL_OK && off < end) {
        struct lil_rec r;
        uint32_t len = 0;
        rc = walk_one(&v, err, &b, off, end, &len);
        if (rc != LIL_OK)
            break;
        lil__jrec_parse(b.data, off, &r);
        if (fn(ud, &r) != 0)
            break;
        off += len;
    }
    lil__buf_free(&b);
    return rc;
}

/* ---- checking ------------------------------------------------------------ */

static void report_torn(lil_check_report *rep, const struct scan_result *res)
{
    rep->intact = 1;
    rep->torn_tail = 1;
    rep->damage_offset = res->end;
    if (res->records == 0)
        snprintf(rep->message, sizeof(rep->message),
                 "torn tail at offset %llu: no complete record (the journal's "
                 "creation was cut short; nothing was acknowledged); the next "
                 "writable open starts it afresh",
                 (unsigned long long)res->end);
    else if (res->after_records)
        snprintf(rep->message, sizeof(rep->message),
                 "torn tail at offset %llu, then %llu intact records (only OPEN "
                 "and CLOSE: nothing to replay); truncated on the next open",
                 (unsigned long long)res->end, (unsigned long long)res->after_records);
    else
        snprintf(rep->message, sizeof(rep->message),
                 "torn tail at offset %llu (never acknowledged; truncated on the "
                 "next open)",
                 (unsigned long long)res->end);
}

static void report_verdict(lil_check_report *rep, const struct scan_result *res,
                           lil_status rc, const struct lil_err *err)
{
    rep->records = res->records;
    rep->valid_bytes = res->end;
    rep->records_after_damage = res->after_records;
    rep->steps_after_damage = res->after_steps;
    if (rc == LIL_OK && (res->torn || res->records == 0)) {
        report_torn(rep, res);
    } else if (rc == LIL_OK) {
        rep->intact = 1;
        snprintf(rep->message, sizeof(rep->message),
                 "intact: %llu records, %llu bytes, chain verified",
                 (unsigned long long)res->records, (unsigned long long)res->end);
    } else {
        rep->intact = 0;
        rep->damage_offset = res->damaged ? res->damage_off : 0;
        snprintf(rep->message, sizeof(rep->message), "%s", err->msg);
    }
}

static lil_status repair(const struct lil_env *env, struct lil_err *err, int fd,
                         const char *path, lil_check_report *rep)
{
    lil_status rc;

    if (rep->intact && !rep->torn_tail)
        return LIL_OK;
    if (rep->damage_offset < LIL_JF_HEADER_LEN && !rep->torn_tail)
        return lil__seterr(err, LIL_E_CORRUPT, 0,
                           "%s: the file header is damaged; nothing to keep", path);
    rc = lil__os_ftruncate(env, err, fd, rep->damage_offset, path);
    if (rc == LIL_OK)
        rc = lil__os_fdatasync(env, err, fd, path);
    if (rc == LIL_OK)
        rep->repaired = 1;
    return rc;
}

lil_status lil__journal_check_image(const struct lil_env *env, struct lil_err *err,
                                    const char *path, const uint8_t *data, uint64_t len,
                                    const uint8_t *key, size_t key_len,
                                    lil_check_report *report)
{
    struct scan_result res;
    struct lil_mac *mac = NULL;
    struct lil_err scan_err;
    lil_status rc;

    lil__clearerr(&scan_err);
    memset(&res, 0, sizeof(res));
    if (lil__scan_header_cut(data, (size_t)len)) { /* no record: a torn tail */
        report_verdict(report, &res, LIL_OK, &scan_err);
        return LIL_OK;
    }
    rc = lil__scan_header(env, &scan_err, path, data, (size_t)len, key, key_len, &mac,
                          &res);
    if (rc == LIL_E_KEY || rc == LIL_E_VERSION || rc == LIL_E_NOMEM) {
        lil__copyerr(err, &scan_err);
        return rc;
    }
    if (rc == LIL_OK)
        rc = lil__scan_records(env, &scan_err, path, data, (size_t)len, mac, true,
                               (size_t)-1 / 4, NULL, NULL, &res);
    lil__mac_free(env, mac);
    if (rc == LIL_E_NOMEM) {
        lil__copyerr(err, &scan_err);
        return rc;
    }
    report_verdict(report, &res, rc, &scan_err);
    report->live_segment = report->damage_segment = res.segment ? res.link.segment : 0;
    return LIL_OK;
}

lil_status lil__journal_check(const struct lil_env *env, struct lil_err *err,
                              const char *dir, const char *path, const uint8_t *key,
                              size_t key_len, bool repair_it, lil_check_report *rep)
{
    uint8_t *map = NULL;
    uint64_t len = 0;
    int fd = -1;
    lil_status rc;

    (void)dir;
    rc = lil__journal_image_load(env, err, path, repair_it, &fd, &map, &len);
    if (rc == LIL_OK) {
        rep->file_bytes = len;
        rc = lil__journal_check_image(env, err, path, map, len, key, key_len, rep);
    }
    if (rc == LIL_OK && repair_it)
        rc = repair(env, err, fd, path, rep);
    lil__journal_image_free(env, fd, map, len);
    return rc;
}

lil_status lil__journal_scan_buffer(const struct lil_env *env, struct lil_err *err,
                                    const uint8_t *data, size_t len, const uint8_t *key,
                                    size_t key_len, size_t max_record,
                                    uint64_t *valid_end, uint64_t *records)
{
    struct scan_result res;
    struct lil_mac *mac = NULL;
    lil_status rc;

    if (lil__scan_header_cut(data, len)) { /* no record: what a writer starts afresh */
        *valid_end = 0;
        *records = 0;
        return LIL_OK;
    }
    rc = lil__scan_header(env, err, "(buffer)", data, len, key, key_len, &mac, &res);
    if (rc == LIL_OK)
        rc = lil__scan_records(env, err, "(buffer)", data, len, mac, true, max_record,
                               NULL, NULL, &res);
    lil__mac_free(env, mac);
    *valid_end = res.end;
    *records = res.records;
    return rc;
}
