/*
 * segments_file.c -- the older segments of the file store's runs
 * (docs/format.md, "Segments"): <store>/<run id>.seg/NNNNNNNN.lil, segment
 * N's file, kept read-only once the run went on in segment N + 1 (the
 * live one, <store>/<run id>.lil).  Their names, the walk of a run's whole
 * history through them, and dropping the oldest (`lil compact --keep`).
 *
 * An archived segment is the live file of its day under a second name (a
 * hard link made before the new segment took the live name), so a crash
 * between the two leaves at most a second name of the live file, numbered
 * as the live one: walks stop below the live segment's number and never
 * read it, and the next rotation finds it in place.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "journal/format.h"
#include "os/os.h"
#include "store/file/store_file.h"

#define SEG_EXT ".seg"

static bool seg_dir(const char *dir, const char *run_id, char *out, size_t cap)
{
    return (size_t)snprintf(out, cap, "%s/%s" SEG_EXT, dir, run_id) < cap;
}

static bool seg_path(const char *dir, const char *run_id, uint32_t n, char *out,
                     size_t cap)
{
    return (size_t)snprintf(out, cap, "%s/%s" SEG_EXT "/%08u.lil", dir, run_id,
                            (unsigned)n) < cap;
}

lil_status lil__seg_archive(const struct lil_env *env, struct lil_err *err,
                            const char *dir, const char *run_id, uint32_t n, char *out,
                            size_t cap)
{
    char d[4352];

    if (!seg_dir(dir, run_id, d, sizeof(d)) || !seg_path(dir, run_id, n, out, cap))
        return lil__seterr(err, LIL_E_TOOBIG, 0, "path of run %s is too long", run_id);
    if (env->os->mkdir(d, 0700) == 0)
        return lil__os_fsync_dir(env, err, dir);
    if (errno != EEXIST)
        return lil__seterr(err, LIL_E_IO, errno, "mkdir %s: %s", d, lil__errstr(errno));
    return LIL_OK;
}

static bool seg_exists(const struct lil_env *env, const char *path)
{
    int fd = env->os->open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);

    if (fd < 0)
        return false;
    env->os->close(fd);
    return true;
}

/* ---- the whole history ------------------------------------------------------ */

struct filt {
    lil_rec_walk_fn fn;
    void *ud;
    bool later; /* a later segment: its link and copies are passed over */
    int stopped;
};

static int filtered(void *ud, const struct lil_rec *r)
{
    struct filt *f = ud;

    if (f->later && (r->type == LIL_REC_BEGIN || (r->flags & LIL_SREC_COPY)))
        return 0;
    f->stopped = f->fn(f->ud, r);
    return f->stopped;
}

/* Segment j must follow the one whose last record prev is. */
static lil_status follows(struct lil_err *err, struct journal *j, const char *path,
                          const struct journal_head *prev)
{
    struct journal_link link;
    uint64_t base;

    if (lil__journal_link(j, &link, &base) && base == prev->seq + 1 &&
        memcmp(link.prev_salt, prev->salt, sizeof(link.prev_salt)) == 0 &&
        memcmp(link.prev_chain, prev->chain, sizeof(link.prev_chain)) == 0)
        return LIL_OK;
    return lil__seterr(err, LIL_E_CORRUPT, 0,
                       "%s: damaged record at offset %u (its link does not name the "
                       "last record of the segment before it)",
                       path, LIL_JF_HEADER_LEN);
}

static lil_status walk_one(const struct lil_env *env, struct lil_err *err,
                           const struct seg_walk_opts *o, uint32_t n,
                           struct journal_head *prev, struct filt *f)
{
    struct journal_opts jo = {.readonly = true,
                              .max_record = o->max_record,
                              .key = o->key,
                              .key_len = o->key_len,
                              .run_id = o->run_id};
    char path[4400];
    struct journal *j = NULL;
    bool created = false;
    lil_status rc;

    if (!seg_path(o->dir, o->run_id, n, path, sizeof(path)))
        return lil__seterr(err, LIL_E_TOOBIG, 0, "path of run %s is too long",
                           o->run_id);
    rc = lil__journal_open(env, err, o->dir, path, &jo, NULL, NULL, &j, &created);
    if (rc == LIL_OK && prev->seq)
        rc = follows(err, j, path, prev);
    f->later = n > 0;
    if (rc == LIL_OK)
        rc = lil__journal_foreach(j, err, filtered, f);
    if (rc == LIL_OK)
        lil__journal_head(j, prev);
    lil__journal_close(j, NULL);
    return rc;
}

lil_status lil__seg_walk(const struct lil_env *env, struct lil_err *err,
                         const struct seg_walk_opts *o, struct journal *live,
                         lil_rec_walk_fn fn, void *ud)
{
    struct filt f = {fn, ud, false, 0};
    struct journal_head prev = {0};
    uint32_t n = lil__journal_segment(live), k = n;
    char path[4400];
    lil_status rc = LIL_OK;

    while (k > 0 && seg_path(o->dir, o->run_id, k - 1, path, sizeof(path)) &&
           seg_exists(env, path))
        k--; /* the oldest kept: the ones before it were dropped */
    for (uint32_t i = k; rc == LIL_OK && i < n && !f.stopped; i++)
        rc = walk_one(env, err, o, i, &prev, &f);
    if (rc != LIL_OK || f.stopped)
        return rc;
    if (prev.seq)
        rc = follows(err, live, "the live segment", &prev);
    f.later = n > 0;
    return rc == LIL_OK ? lil__journal_foreach(live, err, filtered, &f) : rc;
}

/* ---- dropping the oldest ---------------------------------------------------- */

static lil_status live_segment(struct lil_store *st, struct lil_err *err,
                               const char *run_id, uint32_t *n)
{
    struct journal_opts jo = {
        .readonly = true, .max_record = (size_t)-1 >> 1, .run_id = run_id};
    char path[4400];
    struct journal *j = NULL;
    uint8_t *key = NULL;
    size_t key_len = 0;
    bool created = false;
    lil_status rc = lil__store_key_copy(st, err, &key, &key_len);

    if (rc != LIL_OK)
        return rc;
    jo.key = key;
    jo.key_len = key_len;
    snprintf(path, sizeof(path), "%s/%s.lil", st->where, run_id);
    rc =
        lil__journal_open(st->env, err, st->where, path, &jo, NULL, NULL, &j, &created);
    if (rc == LIL_OK)
        *n = lil__journal_segment(j);
    lil__journal_close(j, NULL);
    lil__store_key_free(st, key, key_len);
    return rc;
}

lil_status lil__seg_drop(struct lil_store *st, struct lil_err *err, const char *run_id,
                         unsigned keep, unsigned *dropped)
{
    char path[4400], d[4352];
    uint32_t n = 0;
    lil_status rc;

    *dropped = 0;
    if (keep < 1)
        return lil__seterr(err, LIL_E_INVAL, 0, "keep at least the live segment (1)");
    rc = lil__run_id_check(err, run_id);
    if (rc == LIL_OK)
        rc = live_segment(st, err, run_id, &n);
    /* segments 0..n, the live one n: the oldest first, so a crash leaves
     * the newest ones */
    for (uint32_t i = 0; rc == LIL_OK && (uint64_t)i + keep <= n; i++) {
        if (!seg_path(st->where, run_id, i, path, sizeof(path)))
            break;
        if (st->env->os->unlink(path) == 0)
            (*dropped)++;
        else if (errno != ENOENT)
            rc = lil__seterr(err, LIL_E_IO, errno, "unlink %s: %s", path,
                             lil__errstr(errno));
    }
    if (rc == LIL_OK && *dropped && seg_dir(st->where, run_id, d, sizeof(d)))
        rc = lil__os_fsync_dir(st->env, err, d);
    return rc;
}
