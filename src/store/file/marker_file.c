/*
 * marker_file.c -- markers of the file store.
 *
 * Files, in <store>/markers/, named by the first 32 hex digits of
 * SHA-256(name) (fixed length, no path tricks):
 *   m-<h>.lock     held with an OFD lock while a caller is inside
 *   m-<h>.pending  published before the function runs: "a caller is (or
 *                  was) inside"; it holds {"pid":P}
 *   m-<h>.done     published after the function succeeded: its result
 *
 * Publishing is temp file + fdatasync + rename + directory fsync, so each
 * file is whole and durable; an unlink is followed by a directory fsync.
 * Every file is opened only when it is a regular file, never through a
 * link (os.h, lil__os_open_regular), and the directory itself may not be
 * a link: a marker planted as a link or a FIFO is an error, not a hang or
 * a write elsewhere.
 * The protocol over these states is the engine's (src/engine/marker.c).
 *
 * In a keyed store (its own key, LIL_JOURNAL_KEY or lil_store_set_key) a
 * done file is authenticated: the result, then 32 bytes of
 * HMAC-SHA-256(key, "lil-marker-done" || 0x00 || marker name || 0x00 ||
 * result) (docs/format.md).  A done file whose tag does not verify (planted
 * by someone without the key, copied from another marker, written without
 * a key) is refused: LIL_E_KEY, naming the file, and the marker's work is
 * neither skipped nor run.  Unkeyed stores keep the bare result.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "os/os.h"
#include "store/file/store_file.h"

#define MARKER_PATH_MAX 4200

struct lil_smarker {
    struct file_store *fs;
    const struct lil_env *env;
    char name[LIL_STEP_NAME_MAX + 1];
    char dir[MARKER_PATH_MAX];
    char lock[MARKER_PATH_MAX];
    char pending[MARKER_PATH_MAX];
    char done[MARKER_PATH_MAX];
    int fd;
};

/* The markers' directory is the store's own, never one a link leads to. */
static lil_status not_a_link(struct lil_err *err, const char *dir)
{
    struct stat st;

    if (lstat(dir, &st) != 0)
        return lil__seterr(err, LIL_E_IO, errno, "lstat %s: %s", dir,
                           lil__errstr(errno));
    if (S_ISLNK(st.st_mode))
        return lil__seterr(err, LIL_E_IO, ELOOP,
                           "%s is a symbolic link (lil does not follow links in a "
                           "store)",
                           dir);
    return LIL_OK;
}

static lil_status marker_paths(struct lil_smarker *m, struct lil_err *err)
{
    const char *where = m->fs->base.where;
    uint8_t digest[LIL_SHA256_LEN];
    char hex[2 * LIL_SHA256_LEN + 1];

    if (strlen(where) > MARKER_PATH_MAX - 64)
        return lil__seterr(err, LIL_E_TOOBIG, 0, "store path is too long");
    lil__sha256(m->name, strlen(m->name), digest);
    lil__hex(digest, 16, hex);
    if (snprintf(m->dir, sizeof(m->dir), "%s/markers", where) < 0 ||
        snprintf(m->lock, sizeof(m->lock), "%s/m-%.32s.lock", m->dir, hex) < 0 ||
        snprintf(m->pending, sizeof(m->pending), "%s/m-%.32s.pending", m->dir, hex) <
            0 ||
        snprintf(m->done, sizeof(m->done), "%s/m-%.32s.done", m->dir, hex) < 0)
        return lil__seterr(err, LIL_E_INVAL, 0, "cannot format marker paths");
    if (lil__store_file_sync_parent(m->fs, err) != LIL_OK)
        return err->code;
    if (lil__os_mkdir(m->env, err, m->dir, true) != LIL_OK)
        return err->code;
    return not_a_link(err, m->dir);
}

lil_status lil__marker_file_enter(struct lil_store *st, struct lil_err *err,
                                  const char *name, struct lil_smarker **out)
{
    struct lil_smarker *m = lil__calloc(st->env, 1, sizeof(*m));
    lil_status rc;

    *out = NULL;
    if (!m)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    m->fs = (struct file_store *)st;
    m->env = st->env;
    m->fd = -1;
    snprintf(m->name, sizeof(m->name), "%s", name);
    rc = lil__store_key_ensure(st, err);
    if (rc == LIL_OK)
        rc = marker_paths(m, err);
    if (rc == LIL_OK)
        rc = lil__os_open_regular(m->env, err, m->lock, O_RDWR | O_CREAT | O_CLOEXEC,
                                  0600, &m->fd);
    if (rc == LIL_OK)
        rc = lil__os_lock_wait(m->env, err, m->fd, m->lock);
    if (rc != LIL_OK) {
        lil__marker_file_leave(m);
        return rc;
    }
    *out = m;
    return LIL_OK;
}

void lil__marker_file_leave(struct lil_smarker *m)
{
    if (!m)
        return;
    lil__os_close(m->env, m->fd);
    lil__free(m->env, m);
}

static void drop(lil_bytes *out)
{
    lil__export_free(out->data);
    out->data = NULL;
    out->len = 0;
}

#define TAG_LABEL "lil-marker-done"

/* The tag of a done file of marker m holding result, under key. */
static lil_status done_tag(struct lil_smarker *m, struct lil_err *err,
                           const uint8_t *key, size_t key_len, const void *result,
                           size_t len, uint8_t tag[LIL_SHA256_LEN])
{
    struct lil_mac *mac = NULL;
    lil_status rc = lil__mac_new(m->env, err, key, key_len, &mac);

    if (rc != LIL_OK)
        return rc;
    lil__mac_begin(mac);
    lil__mac_update(mac, TAG_LABEL, sizeof(TAG_LABEL)); /* with its NUL */
    lil__mac_update(mac, m->name, strlen(m->name) + 1);
    if (len)
        lil__mac_update(mac, result, len);
    lil__mac_end(mac, tag);
    lil__mac_free(m->env, mac);
    return LIL_OK;
}

/* A keyed store's done file: its tag verified and cut off (out->len). */
static lil_status done_verify(struct lil_smarker *m, struct lil_err *err,
                              const uint8_t *key, size_t key_len, lil_bytes *out)
{
    uint8_t tag[LIL_SHA256_LEN];
    bool ok = out->len >= LIL_SHA256_LEN;
    size_t n = ok ? out->len - LIL_SHA256_LEN : 0;

    if (ok && done_tag(m, err, key, key_len, out->data, n, tag) != LIL_OK)
        return err->code;
    ok = ok && memcmp(tag, (uint8_t *)out->data + n, LIL_SHA256_LEN) == 0;
    if (!ok)
        return lil__seterr(err, LIL_E_KEY, 0,
                           "marker '%s': %s is not authenticated by the store's key "
                           "(written without the key, or for another marker): refused, "
                           "the marker's work is neither skipped nor run; remove the "
                           "file (lil_marker_clear) once it is understood",
                           m->name, m->done);
    out->len = n;
    ((uint8_t *)out->data)[n] = 0;
    return LIL_OK;
}

/* Read the done file into *out (result, without a keyed store's tag). */
static lil_status read_done(struct lil_smarker *m, struct lil_err *err, lil_bytes *out)
{
    uint8_t *key = NULL;
    size_t key_len = 0;
    lil_status rc = lil__os_read_file(m->env, err, m->done, out);

    if (rc == LIL_OK)
        rc = lil__store_key_copy(&m->fs->base, err, &key, &key_len);
    if (rc == LIL_OK && key)
        rc = done_verify(m, err, key, key_len, out);
    lil__store_key_free(&m->fs->base, key, key_len);
    if (rc != LIL_OK && rc != LIL_E_NOTFOUND)
        drop(out);
    return rc;
}

lil_status lil__marker_file_state(struct lil_smarker *m, struct lil_err *err,
                                  enum lil_smarker_state *state, lil_bytes *result)
{
    lil_bytes local = {0};
    lil_status rc = read_done(m, err, result ? result : &local);

    drop(&local);
    *state = LIL_SMARKER_NONE;
    if (rc == LIL_OK) {
        /* its publisher may have died before the directory fsync */
        rc = lil__os_fsync_dir(m->env, err, m->dir);
        if (rc != LIL_OK && result)
            drop(result);
        if (rc == LIL_OK)
            *state = LIL_SMARKER_DONE;
        return rc;
    }
    if (rc != LIL_E_NOTFOUND)
        return rc;
    rc = lil__os_read_file(m->env, err, m->pending, NULL);
    if (rc == LIL_OK)
        *state = LIL_SMARKER_PENDING;
    return rc == LIL_E_NOTFOUND ? LIL_OK : rc;
}

lil_status lil__marker_file_begin(struct lil_smarker *m, struct lil_err *err,
                                  const void *owner, size_t owner_len)
{
    return lil__os_publish(m->env, err, m->dir, m->pending, owner, owner_len);
}

/* The done file's bytes: result, and in a keyed store its tag. */
static lil_status done_bytes(struct lil_smarker *m, struct lil_err *err,
                             const void *result, size_t len, uint8_t **out, size_t *n)
{
    uint8_t *key = NULL, *bytes = NULL;
    size_t key_len = 0;
    lil_status rc = lil__store_key_copy(&m->fs->base, err, &key, &key_len);

    *out = NULL;
    *n = len + (key ? LIL_SHA256_LEN : 0);
    if (rc == LIL_OK) {
        bytes = lil__malloc(m->env, *n ? *n : 1);
        if (!bytes)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    if (bytes && result && len)
        memcpy(bytes, result, len);
    if (bytes && key)
        rc = done_tag(m, err, key, key_len, result, len, bytes + len);
    lil__store_key_free(&m->fs->base, key, key_len);
    *out = bytes;
    return rc;
}

lil_status lil__marker_file_finish(struct lil_smarker *m, struct lil_err *err,
                                   const void *result, size_t len)
{
    uint8_t *bytes = NULL;
    size_t n = 0;
    lil_status rc = done_bytes(m, err, result, len, &bytes, &n);

    if (rc == LIL_OK)
        rc = lil__os_publish(m->env, err, m->dir, m->done, bytes, n);
    lil__free(m->env, bytes);

    if (rc != LIL_OK)
        return rc;
    m->env->os->unlink(m->pending);
    return lil__os_fsync_dir(m->env, err, m->dir);
}

lil_status lil__marker_file_abandon(struct lil_smarker *m, struct lil_err *err)
{
    m->env->os->unlink(m->pending);
    return lil__os_fsync_dir(m->env, err, m->dir);
}

lil_status lil__marker_file_clear(struct lil_smarker *m, struct lil_err *err)
{
    int gone = m->env->os->unlink(m->done) == 0;

    gone += m->env->os->unlink(m->pending) == 0;
    if (!gone)
        return lil__seterr(err, LIL_E_NOTFOUND, 0, "marker '%s' is not set", m->name);
    return lil__os_fsync_dir(m->env, err, m->dir);
}
