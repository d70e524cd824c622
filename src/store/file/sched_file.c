/*
 * sched_file.c -- schedules of the file store: <store>/schedules/, one
 * document and one mark per schedule (docs/format.md, "Schedules").
 *
 *   <store>/schedules/<id>.json   the schedule's document (JSON, the
 *                                 queue layer's: src/queue/schedule.h)
 *   <store>/schedules/<id>.fired  the last slot fired: decimal epoch ms
 *   <store>/schedules/<id>.lock   an empty file, OFD-locked while a mark
 *                                 is read and replaced
 *
 * Every file is written whole and atomically (a temporary file, fsync,
 * rename or link, the directory fsync'd: os.h, lil__os_publish) and read
 * only when regular, never through a link (lil__os_read_file).  The
 * directory is made 0700; one that is a link, not this user's, or
 * writable by others is refused, as the store itself is.  A mark only
 * moves forward: read and replaced under the lock, so two processes
 * marking at once keep the later slot.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "os/os.h"
#include "store/file/store_file.h"

#define SCHED_DIR  "schedules"
#define DOC_EXT    ".json"
#define MARK_EXT   ".fired"
#define LOCK_EXT   ".lock"
#define SCHED_PATH 4400

static void sched_dir(const struct lil_store *st, char *out, size_t cap)
{
    snprintf(out, cap, "%s/" SCHED_DIR, st->where);
}

static lil_status sched_path(const struct lil_store *st, struct lil_err *err,
                             const char *id, const char *ext, char *out, size_t cap)
{
    lil_status rc = lil__run_id_check(err, id);
    int n;

    if (rc != LIL_OK)
        return rc;
    n = snprintf(out, cap, "%s/" SCHED_DIR "/%s%s", st->where, id, ext);
    if (n < 0 || (size_t)n >= cap)
        return lil__seterr(err, LIL_E_TOOBIG, 0, "schedule path too long");
    return LIL_OK;
}

/* The directory must be a directory (not a link), this user's, and
 * writable by nobody else. */
static lil_status check_dir(struct lil_err *err, const char *dir)
{
    struct stat sb;

    if (lstat(dir, &sb) != 0)
        return errno == ENOENT ? LIL_E_NOTFOUND
                               : lil__seterr(err, LIL_E_IO, errno, "stat %s: %s", dir,
                                             lil__errstr(errno));
    if (!S_ISDIR(sb.st_mode))
        return lil__seterr(err, LIL_E_IO, ENOTDIR,
                           "%s is not a directory (a link or a file): refused", dir);
    if (sb.st_uid != geteuid() || (sb.st_mode & (S_IWGRP | S_IWOTH)))
        return lil__seterr(err, LIL_E_IO, EPERM,
                           "%s is another user's or writable by others: refused", dir);
    return LIL_OK;
}

static lil_status ensure_dir(struct lil_store *st, struct lil_err *err)
{
    char dir[SCHED_PATH];
    lil_status rc = lil__store_file_sync_parent((struct file_store *)st, err);

    sched_dir(st, dir, sizeof(dir));
    if (rc == LIL_OK && check_dir(err, dir) == LIL_E_NOTFOUND)
        rc = lil__os_mkdir(st->env, err, dir, true);
    return rc == LIL_OK ? check_dir(err, dir) : rc;
}

lil_status lil__sched_file_put(struct lil_store *st, struct lil_err *err,
                               const char *id, const void *doc, size_t len,
                               bool replace)
{
    char dir[SCHED_PATH], path[SCHED_PATH];
    bool existed = false;
    lil_status rc = sched_path(st, err, id, DOC_EXT, path, sizeof(path));

    sched_dir(st, dir, sizeof(dir));
    if (rc == LIL_OK)
        rc = ensure_dir(st, err);
    if (rc == LIL_OK && replace)
        return lil__os_publish(st->env, err, dir, path, doc, len);
    if (rc == LIL_OK)
        rc = lil__os_publish_new(st->env, err, dir, path, doc, len, &existed);
    if (rc == LIL_OK && existed)
        rc = lil__seterr(err, LIL_E_INVAL, 0, "schedule %s exists already", id);
    return rc;
}

/* The mark in text (decimal digits) into *ms; 0 for a file that holds
 * anything else (it is then reported, never believed). */
static lil_status parse_mark(struct lil_err *err, const char *path, const lil_bytes *b,
                             int64_t *ms)
{
    const uint8_t *p = b->data;
    int64_t v = 0;

    for (size_t i = 0; i < b->len; i++) {
        uint8_t c = p[i];

        if (c == '\n' && i + 1 == b->len && i > 0)
            break;
        if (c < '0' || c > '9' || v > (INT64_MAX - 9) / 10 || i >= 19)
            return lil__seterr(err, LIL_E_CORRUPT, 0,
                               "%s is not a mark (decimal milliseconds)", path);
        v = v * 10 + (c - '0');
    }
    *ms = v;
    return LIL_OK;
}

static lil_status read_mark(struct lil_store *st, struct lil_err *err, const char *id,
                            int64_t *ms)
{
    char path[SCHED_PATH];
    lil_bytes b = {NULL, 0};
    lil_status rc = sched_path(st, err, id, MARK_EXT, path, sizeof(path));

    *ms = 0;
    if (rc == LIL_OK)
        rc = lil__os_read_file(st->env, err, path, &b);
    if (rc == LIL_E_NOTFOUND)
        return LIL_OK;
    if (rc == LIL_OK)
        rc = parse_mark(err, path, &b, ms);
    lil__export_free(b.data);
    return rc;
}

lil_status lil__sched_file_get(struct lil_store *st, struct lil_err *err,
                               const char *id, lil_bytes *doc, int64_t *mark_ms)
{
    char dir[SCHED_PATH], path[SCHED_PATH];
    lil_status rc = sched_path(st, err, id, DOC_EXT, path, sizeof(path));

    doc->data = NULL;
    doc->len = 0;
    *mark_ms = 0;
    sched_dir(st, dir, sizeof(dir));
    if (rc == LIL_OK && (rc = check_dir(err, dir)) == LIL_E_NOTFOUND)
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "no schedule %s", id);
    if (rc == LIL_OK &&
        (rc = lil__os_read_file(st->env, err, path, doc)) == LIL_E_NOTFOUND)
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "no schedule %s", id);
    if (rc == LIL_OK)
        rc = read_mark(st, err, id, mark_ms);
    if (rc != LIL_OK) {
        lil__export_free(doc->data);
        doc->data = NULL;
        doc->len = 0;
    }
    return rc;
}

static void unlink_quiet(struct lil_store *st, struct lil_err *err, const char *id,
                         const char *ext)
{
    char path[SCHED_PATH];

    if (sched_path(st, err, id, ext, path, sizeof(path)) == LIL_OK)
        (void)st->env->os->unlink(path);
}

lil_status lil__sched_file_del(struct lil_store *st, struct lil_err *err,
                               const char *id)
{
    char dir[SCHED_PATH], path[SCHED_PATH];
    lil_status rc = sched_path(st, err, id, DOC_EXT, path, sizeof(path));

    sched_dir(st, dir, sizeof(dir));
    if (rc == LIL_OK && (rc = check_dir(err, dir)) == LIL_E_NOTFOUND)
        return lil__seterr(err, LIL_E_NOTFOUND, 0, "no schedule %s", id);
    if (rc != LIL_OK)
        return rc;
    if (st->env->os->unlink(path) != 0)
        return errno == ENOENT
                   ? lil__seterr(err, LIL_E_NOTFOUND, 0, "no schedule %s", id)
                   : lil__seterr(err, LIL_E_IO, errno, "unlink %s: %s", path,
                                 lil__errstr(errno));
    unlink_quiet(st, err, id, MARK_EXT);
    unlink_quiet(st, err, id, LOCK_EXT);
    return lil__os_fsync_dir(st->env, err, dir);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* The schedule id of a document's file name into id; false for another
 * file. */
static bool id_of(const char *file, char *id, size_t cap)
{
    size_t n = strlen(file), ext = sizeof(DOC_EXT) - 1;

    if (n <= ext || strcmp(file + n - ext, DOC_EXT) != 0 || n - ext >= cap)
        return false;
    memcpy(id, file, n - ext);
    id[n - ext] = '\0';
    return lil__run_id_check(NULL, id) == LIL_OK;
}

lil_status lil__sched_file_list(struct lil_store *st, struct lil_err *err,
                                lil_run_id_fn fn, void *ud)
{
    char dir[SCHED_PATH], id[LIL_RUN_ID_MAX + 1];
    struct dirent **names = NULL;
    lil_status rc;
    int n, stop = 0;

    sched_dir(st, dir, sizeof(dir));
    rc = check_dir(err, dir);
    if (rc != LIL_OK)
        return rc == LIL_E_NOTFOUND ? LIL_OK : rc;
    n = scandir(dir, &names, NULL, by_name);
    if (n < 0)
        return lil__seterr(err, LIL_E_IO, errno, "scan %s: %s", dir,
                           lil__errstr(errno));
    for (int i = 0; i < n; i++) {
        if (!stop && id_of(names[i]->d_name, id, sizeof(id)))
            stop = fn(ud, id);
        free(names[i]);
    }
    free(names);
    return LIL_OK;
}

/* Under the lock of id's lock file: the mark becomes slot_ms if later. */
static lil_status mark_locked(struct lil_store *st, struct lil_err *err, const char *id,
                              int64_t slot_ms)
{
    char dir[SCHED_PATH], path[SCHED_PATH], text[32];
    int64_t old = 0;
    lil_status rc = read_mark(st, err, id, &old);
    int n;

    if (rc != LIL_OK || old >= slot_ms)
        return rc;
    sched_dir(st, dir, sizeof(dir));
    rc = sched_path(st, err, id, MARK_EXT, path, sizeof(path));
    n = snprintf(text, sizeof(text), "%" PRId64 "\n", slot_ms);
    return rc == LIL_OK ? lil__os_publish(st->env, err, dir, path, text, (size_t)n)
                        : rc;
}

lil_status lil__sched_file_mark(struct lil_store *st, struct lil_err *err,
                                const char *id, int64_t slot_ms)
{
    char path[SCHED_PATH];
    int fd = -1;
    lil_status rc = sched_path(st, err, id, LOCK_EXT, path, sizeof(path));

    if (rc == LIL_OK)
        rc = ensure_dir(st, err);
    if (rc == LIL_OK)
        rc = lil__os_open_regular(st->env, err, path, O_RDWR | O_CREAT | O_CLOEXEC,
                                  0600, &fd);
    if (rc == LIL_OK)
        rc = lil__os_lock_wait(st->env, err, fd, path);
    if (rc == LIL_OK)
        rc = mark_locked(st, err, id, slot_ms);
    lil__os_close(st->env, fd); /* the lock goes with it */
    return rc;
}
