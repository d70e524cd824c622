/*
 * marker.c -- a local side effect done exactly once across processes.
 *
 * Files, in <store>/markers/, named by the first 32 hex digits of
 * SHA-256(name) (fixed length, no path tricks):
 *   m-<h>.lock     held with an OFD lock while a caller is inside
 *   m-<h>.pending  published before fn runs: "a caller is (or was) inside"
 *   m-<h>.done     published after fn succeeds: its result
 *
 * Protocol: lock (waiting for a caller inside) -> done exists: return its
 * result -> pending exists: the holder died inside fn (we hold the lock, so
 * it is gone): apply the policy -> publish pending -> fn -> publish done,
 * unlink pending, fsync the directory -> unlock.  Publishing is temp file +
 * fdatasync + rename + directory fsync, so each file is whole and durable.
 */
#include "engine/call.h"
#include "engine/run.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "os/os.h"

#define MARKER_PATH_MAX 4200
/* Scope of marker idempotency keys: a run id cannot hold a control
 * character, so no step of any run shares a key with a marker. */
#define MARKER_SCOPE "\x01marker"

struct marker {
    struct lil_store *st;
    const char *name;
    char dir[MARKER_PATH_MAX];
    char lock[MARKER_PATH_MAX];
    char pending[MARKER_PATH_MAX];
    char done[MARKER_PATH_MAX];
    int fd;
};

static lil_status marker_paths(struct marker *m, struct lil_err *err)
{
    uint8_t digest[LIL_SHA256_LEN];
    char hex[2 * LIL_SHA256_LEN + 1];

    if (strlen(m->st->dir) > MARKER_PATH_MAX - 64)
        return lil__seterr(err, LIL_E_TOOBIG, 0, "store path is too long");
    lil__sha256(m->name, strlen(m->name), digest);
    lil__hex(digest, 16, hex);
    if (snprintf(m->dir, sizeof(m->dir), "%s/markers", m->st->dir) < 0 ||
        snprintf(m->lock, sizeof(m->lock), "%s/m-%.32s.lock", m->dir, hex) < 0 ||
        snprintf(m->pending, sizeof(m->pending), "%s/m-%.32s.pending", m->dir, hex) < 0 ||
        snprintf(m->done, sizeof(m->done), "%s/m-%.32s.done", m->dir, hex) < 0)
        return lil__seterr(err, LIL_E_INVAL, 0, "cannot format marker paths");
    if (lil__store_sync_parent(m->st, err) != LIL_OK)
        return err->code;
    return lil__os_mkdir(m->st->env, err, m->dir, true);
}

static lil_status marker_lock(struct marker *m, struct lil_err *err)
{
    const struct lil_env *env = m->st->env;
    lil_status rc = lil__os_open(env, err, m->lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600,
                                 &m->fd);

    if (rc == LIL_OK)
        rc = lil__os_lock_wait(env, err, m->fd, m->lock);
    return rc;
}

/* Read a whole small file; LIL_E_NOTFOUND if it does not exist. */
static lil_status read_file(const struct lil_env *env, struct lil_err *err,
                            const char *path, lil_bytes *out)
{
    uint64_t size = 0;
    int fd = -1;
    lil_status rc = lil__os_open(env, err, path, O_RDONLY | O_CLOEXEC, 0, &fd);

    if (rc != LIL_OK)
        return err->sys_errno == ENOENT ? LIL_E_NOTFOUND : rc;
    rc = lil__os_fstat_size(env, err, fd, &size, path);
    if (rc == LIL_OK && out) {
        out->data = lil__export_alloc(env, (size_t)size);
        out->len = (size_t)size;
        if (!out->data)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
        else
            rc = lil__os_pread_all(env, err, fd, out->data, (size_t)size, 0, path);
        if (rc != LIL_OK) {
            lil_free(out->data);
            out->data = NULL;
            out->len = 0;
        }
    }
    lil__os_close(env, fd);
    return rc;
}

static lil_status publish_done(struct marker *m, struct lil_err *err,
                               const void *data, size_t len)
{
    const struct lil_env *env = m->st->env;
    lil_status rc = lil__os_publish(env, err, m->dir, m->done, data, len);

    if (rc != LIL_OK)
        return rc;
    env->os->unlink(m->pending);
    return lil__os_fsync_dir(env, err, m->dir);
}

static lil_status run_marker_fn(struct marker *m, struct lil_err *err, unsigned attempt,
                                lil_fn fn, void *ud, lil_bytes *out)
{
    const struct lil_env *env = m->st->env;
    struct lil_call call;
    char owner[64];
    int n = snprintf(owner, sizeof(owner), "{\"pid\":%ld}", (long)getpid());
    lil_status rc = lil__os_publish(env, err, m->dir, m->pending, owner, (size_t)n);

    if (rc != LIL_OK)
        return rc;
    lil__call_init(&call, env, MARKER_SCOPE, m->name, attempt, LIL_DEFAULT_MAX_RECORD);
    if (fn(&call, ud) != 0 || call.failed) {
        env->os->unlink(m->pending);
        lil__os_fsync_dir(env, NULL, m->dir);
        rc = lil__seterr(err, LIL_E_FAILED, 0, "marker '%s' failed: %s", m->name,
                         call.reason.len ? (const char *)call.reason.data
                                         : "the function returned an error");
    } else {
        rc = publish_done(m, err, call.result.data, call.result.len);
        if (rc == LIL_OK && out && lil__buf_export(&call.result, out) != LIL_OK)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    lil__call_free(&call);
    return rc;
}

static lil_status in_doubt(struct marker *m, struct lil_err *err, int policy,
                           lil_fn fn, void *ud, lil_bytes *out)
{
    if (policy == LIL_MARKER_RAISE)
        return lil__seterr(err, LIL_E_UNCERTAIN, 0,
                           "marker '%s': a previous holder died inside it; its outcome "
                           "is unknown (lil_marker_reset runs it again)",
                           m->name);
    if (policy == LIL_MARKER_ASSUME_DONE) {
        lil_status rc = publish_done(m, err, "", 0);
        if (rc == LIL_OK && out) {
            out->data = lil__export_alloc(m->st->env, 0);
            if (!out->data)
                return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
        }
        return rc;
    }
    return run_marker_fn(m, err, 2, fn, ud, out);
}

static lil_status marker_locked(struct marker *m, struct lil_err *err, int policy,
                                lil_fn fn, void *ud, lil_bytes *out)
{
    lil_status rc = read_file(m->st->env, err, m->done, out);

    if (rc == LIL_OK) {
        /* its publisher may have died before the directory fsync */
        rc = lil__os_fsync_dir(m->st->env, err, m->dir);
        if (rc != LIL_OK && out) {
            lil_free(out->data);
            out->data = NULL;
            out->len = 0;
        }
        return rc;
    }
    if (rc != LIL_E_NOTFOUND)
        return rc;
    rc = read_file(m->st->env, err, m->pending, NULL);
    if (rc == LIL_OK)
        return in_doubt(m, err, policy, fn, ud, out);
    if (rc != LIL_E_NOTFOUND)
        return rc;
    return run_marker_fn(m, err, 1, fn, ud, out);
}

lil_status lil__marker(struct lil_store *st, struct lil_err *err, const char *name,
                       int policy, lil_fn fn, void *ud, lil_bytes *out)
{
    struct marker m = {.st = st, .name = name, .fd = -1};
    lil_status rc = lil__step_name_check(err, name);

    if (rc == LIL_OK && (policy < LIL_MARKER_RETRY || policy > LIL_MARKER_RAISE))
        rc = lil__seterr(err, LIL_E_INVAL, 0, "unknown marker policy %d", policy);
    if (rc == LIL_OK)
        rc = marker_paths(&m, err);
    if (rc == LIL_OK)
        rc = marker_lock(&m, err);
    if (rc == LIL_OK)
        rc = marker_locked(&m, err, policy, fn, ud, out);
    lil__os_close(st->env, m.fd);
    return rc;
}

lil_status lil__marker_reset(struct lil_store *st, struct lil_err *err,
                             const char *name)
{
    struct marker m = {.st = st, .name = name, .fd = -1};
    lil_status rc = lil__step_name_check(err, name);

    if (rc == LIL_OK)
        rc = marker_paths(&m, err);
    if (rc == LIL_OK)
        rc = marker_lock(&m, err);
    if (rc == LIL_OK) {
        int gone = st->env->os->unlink(m.done) == 0;
        gone += st->env->os->unlink(m.pending) == 0;
        rc = gone ? lil__os_fsync_dir(st->env, err, m.dir)
                  : lil__seterr(err, LIL_E_NOTFOUND, 0, "marker '%s' is not set", name);
    }
    lil__os_close(st->env, m.fd);
    return rc;
}
