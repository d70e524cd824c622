/*
 * segments_file.c -- the older segments of the file store's runs
 * (docs/format.md, "Segments"): <store>/<run id>.seg/NNNNNNNN.lil, segment
 * N's file, kept read-only once the run went on in segment N + 1 (the
 * live one, <store>/<run id>.lil).  Their names, the walk of a run's whole
 * history through them, what is kept of it, dropping the oldest
 * (lil_run_drop_segments, `lil gc --segments`), removing them all with
 * their run, and verifying the chain across them (`lil check`).
 *
 * An archived segment is the live file of its day under a second name (a
 * hard link made before the new segment took the live name), so a crash
 * between the two leaves at most a second name of the live file, numbered
 * as the live one: walks stop below the live segment's number and never
 * read it, and the next rotation finds it in place.
 */
#include <dirent.h>
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

bool lil__seg_began(const struct lil_env *env, const char *dir, const char *run_id)
{
    char d[4352];

    /* a name too long for a directory cannot have one: say yes, the sweep
     * will tell */
    return !seg_dir(dir, run_id, d, sizeof(d)) || seg_exists(env, d) || errno != ENOENT;
}

/* ---- the whole history ------------------------------------------------------ */

struct filt {
    lil_rec_walk_fn fn;
    void *ud;
    bool later;  /* a later segment: its link is passed over */
    bool copies; /* its copies too (the history before it is kept) */
    int stopped;
};

static int filtered(void *ud, const struct lil_rec *r)
{
    struct filt *f = ud;

    if (f->later && (r->type == LIL_REC_BEGIN ||
                     (f->copies == false && (r->flags & LIL_SREC_COPY))))
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
    f->copies = prev->seq == 0; /* the oldest kept */
    if (rc == LIL_OK)
        rc = lil__journal_foreach(j, err, filtered, f);
    if (rc == LIL_OK)
        lil__journal_head(j, prev);
    lil__journal_close(j, NULL);
    return rc;
}

/* The oldest segment of run_id kept below live n: the ones before it were
 * dropped (n itself when every older one was). */
static uint32_t oldest_kept(const struct lil_env *env, const char *dir,
                            const char *run_id, uint32_t n)
{
    char path[4400];
    uint32_t k = n;

    while (k > 0 && seg_path(dir, run_id, k - 1, path, sizeof(path)) &&
           seg_exists(env, path))
        k--;
    return k;
}

/* The history kept, oldest first.  The copies at the start of a later
 * segment are passed over when the segment before it was walked (they
 * repeat it), and given when it is the oldest kept: then they are the only
 * trace of the run's start and bindings. */
lil_status lil__seg_walk(const struct lil_env *env, struct lil_err *err,
                         const struct seg_walk_opts *o, struct journal *live,
                         lil_rec_walk_fn fn, void *ud)
{
    struct filt f = {fn, ud, false, false, 0};
    struct journal_head prev = {0};
    uint32_t n = lil__journal_segment(live), k = oldest_kept(env, o->dir, o->run_id, n);
    lil_status rc = LIL_OK;

    for (uint32_t i = k; rc == LIL_OK && i < n && !f.stopped; i++)
        rc = walk_one(env, err, o, i, &prev, &f);
    if (rc != LIL_OK || f.stopped)
        return rc;
    if (prev.seq)
        rc = follows(err, live, "the live segment", &prev);
    f.later = n > 0;
    f.copies = prev.seq == 0;
    return rc == LIL_OK ? lil__journal_foreach(live, err, filtered, &f) : rc;
}

/* ---- a segment opened read-only ------------------------------------------------ */

/* Open the journal at path read-only, under the store's key. */
static lil_status open_ro(struct lil_store *st, struct lil_err *err, const char *run_id,
                          const char *path, struct journal **j)
{
    struct journal_opts jo = {
        .readonly = true, .max_record = (size_t)-1 >> 1, .run_id = run_id};
    uint8_t *key = NULL;
    size_t key_len = 0;
    bool created = false;
    lil_status rc = lil__store_key_copy(st, err, &key, &key_len);

    *j = NULL;
    if (rc != LIL_OK)
        return rc;
    jo.key = key;
    jo.key_len = key_len;
    rc = lil__journal_open(st->env, err, st->where, path, &jo, NULL, NULL, j, &created);
    lil__store_key_free(st, key, key_len);
    return rc;
}

static lil_status open_live(struct lil_store *st, struct lil_err *err,
                            const char *run_id, struct journal **j)
{
    char path[4400];

    *j = NULL;
    if ((size_t)snprintf(path, sizeof(path), "%s/%s.lil", st->where, run_id) >=
        sizeof(path))
        return lil__seterr(err, LIL_E_TOOBIG, 0, "path of run %s is too long", run_id);
    return open_ro(st, err, run_id, path, j);
}

/* The seq of the first record of segment j (its BEGIN); 1 for a first file. */
static uint64_t base_of(const struct journal *j)
{
    struct journal_link link;
    uint64_t base = 1;

    return lil__journal_link(j, &link, &base) ? base : 1;
}

lil_status lil__seg_info(struct lil_store *st, struct lil_err *err, const char *run_id,
                         struct lil_sseg_info *out)
{
    char path[4400];
    struct journal *j = NULL;
    lil_status rc = lil__run_id_check(err, run_id);

    memset(out, 0, sizeof(*out));
    out->first_seq = 1;
    if (rc == LIL_OK)
        rc = open_live(st, err, run_id, &j);
    if (rc != LIL_OK)
        return rc;
    out->live = lil__journal_segment(j);
    out->first = oldest_kept(st->env, st->where, run_id, out->live);
    if (out->first == out->live) {
        out->first_seq = out->live ? base_of(j) : 1;
    } else if (out->first > 0) {
        lil__journal_close(j, NULL);
        seg_path(st->where, run_id, out->first, path, sizeof(path));
        rc = open_ro(st, err, run_id, path, &j);
        if (rc == LIL_OK)
            out->first_seq = base_of(j);
    }
    lil__journal_close(j, NULL);
    return rc;
}

/* ---- dropping the oldest ---------------------------------------------------- */

lil_status lil__seg_drop(struct lil_store *st, struct lil_err *err, const char *run_id,
                         unsigned keep, unsigned *dropped)
{
    char path[4400], d[4352];
    struct journal *j = NULL;
    uint32_t n = 0;
    lil_status rc;

    *dropped = 0;
    if (keep < 1)
        return lil__seterr(err, LIL_E_INVAL, 0, "keep at least the live segment (1)");
    rc = lil__run_id_check(err, run_id);
    if (rc == LIL_OK)
        rc = open_live(st, err, run_id, &j);
    if (rc == LIL_OK)
        n = lil__journal_segment(j);
    lil__journal_close(j, NULL);
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

/* ---- removing them all (a run removed) -------------------------------------- */

/* A name of a segment file: eight digits and ".lil". */
static bool seg_name(const char *name)
{
    size_t i = 0;

    while (i < 8 && name[i] >= '0' && name[i] <= '9')
        i++;
    return i == 8 && strcmp(name + 8, ".lil") == 0;
}

lil_status lil__seg_remove_all(struct lil_store *st, struct lil_err *err,
                               const char *run_id)
{
    char d[4352], path[4400];
    struct dirent *e;
    lil_status rc = LIL_OK;
    DIR *dir;

    if (!seg_dir(st->where, run_id, d, sizeof(d)))
        return lil__seterr(err, LIL_E_TOOBIG, 0, "path of run %s is too long", run_id);
    dir = opendir(d);
    if (!dir)
        return errno == ENOENT ? LIL_OK
                               : lil__seterr(err, LIL_E_IO, errno, "opendir %s: %s", d,
                                             lil__errstr(errno));
    while (rc == LIL_OK && (e = readdir(dir)) != NULL)
        if (seg_name(e->d_name) &&
            (size_t)snprintf(path, sizeof(path), "%s/%s", d, e->d_name) <
                sizeof(path) &&
            st->env->os->unlink(path) != 0 && errno != ENOENT)
            rc = lil__seterr(err, LIL_E_IO, errno, "unlink %s: %s", path,
                             lil__errstr(errno));
    (void)closedir(dir);
    if (rc == LIL_OK && st->env->os->rmdir(d) != 0 && errno != ENOENT)
        rc = lil__seterr(err, LIL_E_IO, errno, "rmdir %s: %s", d, lil__errstr(errno));
    return rc;
}

/* ---- checking every segment kept -------------------------------------------- */

static void old_damage(lil_check_report *rep, uint32_t seg, uint64_t off,
                       const lil_check_report *sub, const char *what)
{
    rep->intact = 0;
    rep->torn_tail = 0;
    rep->old_damage = 1;
    rep->damage_segment = seg;
    rep->damage_offset = off;
    rep->records_after_damage = sub ? sub->records_after_damage : 0;
    rep->steps_after_damage = sub ? sub->steps_after_damage : 0;
    snprintf(rep->message, sizeof(rep->message),
             "older segment %u: %.150s (the run goes on from its live segment %u; "
             "lil gc --segments drops the older ones)",
             (unsigned)seg, what, (unsigned)rep->live_segment);
}

/* Segment i verified on its own.  An archived segment was synced whole
 * before the next one was made: a torn tail there is damage too. */
static lil_status check_one(struct lil_store *st, struct lil_err *err,
                            const struct seg_walk_opts *o, uint32_t i,
                            lil_check_report *rep, bool *bad)
{
    lil_check_report sub = {.struct_size = sizeof(sub)};
    char path[4400], what[300];
    lil_status rc;

    seg_path(o->dir, o->run_id, i, path, sizeof(path));
    rc =
        lil__journal_check(st->env, err, o->dir, path, o->key, o->key_len, false, &sub);
    if (rc == LIL_E_NOTFOUND || rc == LIL_E_IO) {
        snprintf(what, sizeof(what), "cannot be read: %s", err->msg);
        old_damage(rep, i, 0, NULL, what);
        *bad = true;
        return LIL_OK;
    }
    if (rc != LIL_OK || (sub.intact && !sub.torn_tail))
        return rc;
    snprintf(what, sizeof(what), "%s", sub.message);
    old_damage(rep, i, sub.torn_tail ? sub.valid_bytes : sub.damage_offset, &sub, what);
    *bad = true;
    return LIL_OK;
}

/* The head of segment i (or of the live file when i is the live one). */
static lil_status head_link(struct lil_store *st, struct lil_err *err,
                            const struct seg_walk_opts *o, uint32_t i, uint32_t live,
                            struct journal_head *head, struct journal_link *link,
                            uint64_t *base)
{
    char path[4400];
    struct journal *j = NULL;
    lil_status rc;

    if (i == live) {
        rc = open_live(st, err, o->run_id, &j);
    } else {
        seg_path(o->dir, o->run_id, i, path, sizeof(path));
        rc = open_ro(st, err, o->run_id, path, &j);
    }
    if (rc == LIL_OK) {
        lil__journal_head(j, head);
        if (!lil__journal_link(j, link, base))
            memset(link, 0, sizeof(*link));
    }
    lil__journal_close(j, NULL);
    return rc;
}

lil_status lil__seg_check(struct lil_store *st, struct lil_err *err,
                          const struct seg_walk_opts *o, lil_check_report *rep)
{
    struct journal_head prev = {0}, head;
    struct journal_link link;
    uint32_t n = rep->live_segment;
    uint64_t base = 0;
    bool bad = false;
    lil_status rc = LIL_OK;

    rep->first_segment = n ? oldest_kept(st->env, o->dir, o->run_id, n) : 0;
    if (!rep->intact || n == 0)
        return LIL_OK; /* the live segment's damage is the one to report */
    for (uint32_t i = rep->first_segment; rc == LIL_OK && !bad && i <= n; i++) {
        if (i < n)
            rc = check_one(st, err, o, i, rep, &bad);
        if (rc == LIL_OK && !bad)
            rc = head_link(st, err, o, i, n, &head, &link, &base);
        if (rc == LIL_OK && !bad && prev.seq &&
            (base != prev.seq + 1 ||
             memcmp(link.prev_salt, prev.salt, sizeof(link.prev_salt)) != 0 ||
             memcmp(link.prev_chain, prev.chain, sizeof(link.prev_chain)) != 0)) {
            old_damage(rep, i, LIL_JF_HEADER_LEN, NULL,
                       "its link does not name the last record of the segment "
                       "before it");
            bad = true;
        }
        prev = head;
    }
    if (rc == LIL_OK && !bad && rep->first_segment < n) {
        size_t len = strnlen(rep->message, sizeof(rep->message));
        snprintf(rep->message + len, sizeof(rep->message) - len,
                 "; segments %u..%u linked", (unsigned)rep->first_segment, (unsigned)n);
    }
    return rc;
}
