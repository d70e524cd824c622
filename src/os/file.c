/*
 * file.c -- file helpers over the system-call table: whole reads and
 * writes, syncs, directory fsync, atomic publish, OFD locks, regular files
 * only, temporary names nobody can guess.
 *
 * Each helper turns a failing call into LIL_E_IO with errno and a message
 * naming the call and what it was for.  EINTR is retried.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "os/os.h"

lil_status lil__os_open(const struct lil_env *env, struct lil_err *err,
                        const char *path, int flags, mode_t mode, int *fd_out)
{
    int fd;

    *fd_out = -1;
    do
        fd = env->os->open(path, flags, mode);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return lil__seterr(err, LIL_E_IO, errno, "open %s: %s", path,
                           lil__errstr(errno));
    *fd_out = fd;
    return LIL_OK;
}

static const char *kind_of(mode_t mode)
{
    return S_ISFIFO(mode)   ? "a FIFO"
           : S_ISDIR(mode)  ? "a directory"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISLNK(mode)  ? "a symbolic link"
                            : "not a regular file";
}

lil_status lil__os_open_regular(const struct lil_env *env, struct lil_err *err,
                                const char *path, int flags, mode_t mode, int *fd_out)
{
    struct stat st;
    lil_status rc =
        lil__os_open(env, err, path, flags | O_NOFOLLOW | O_NONBLOCK, mode, fd_out);

    if (rc != LIL_OK) {
        if (err && err->sys_errno == ELOOP)
            lil__seterr(err, LIL_E_IO, ELOOP,
                        "open %s: it is a symbolic link (lil does not follow links "
                        "in a store)",
                        path);
        return rc;
    }
    if (env->os->fstat(*fd_out, &st) < 0) {
        rc =
            lil__seterr(err, LIL_E_IO, errno, "fstat %s: %s", path, lil__errstr(errno));
    } else if (!S_ISREG(st.st_mode)) {
        rc = lil__seterr(err, LIL_E_IO, EINVAL,
                         "open %s: it is %s, not a regular file (refused)", path,
                         kind_of(st.st_mode));
    }
    if (rc != LIL_OK) {
        lil__os_close(env, *fd_out);
        *fd_out = -1;
    }
    return rc;
}

bool lil__os_is_regular(const struct lil_env *env, const char *path)
{
    struct lil_err err;
    int fd = -1;
    bool ok =
        lil__os_open_regular(env, &err, path, O_RDONLY | O_CLOEXEC, 0, &fd) == LIL_OK;

    lil__os_close(env, fd);
    return ok;
}

/* 16 hex digits from the kernel's random source; should it fail, from the
 * clock and the pid (the O_EXCL of every temporary file still holds). */
static void random_hex(char out[17])
{
    static const char hex[] = "0123456789abcdef";
    uint8_t b[8];
    ssize_t r;

    do
        r = getrandom(b, sizeof(b), GRND_NONBLOCK);
    while (r < 0 && errno == EINTR);
    if (r != (ssize_t)sizeof(b)) {
        uint64_t v = (uint64_t)lil__mono_ns() ^ ((uint64_t)getpid() << 40) ^
                     (uint64_t)lil__wall_ns();
        memcpy(b, &v, sizeof(b));
    }
    for (size_t i = 0; i < sizeof(b); i++) {
        out[2 * i] = hex[b[i] >> 4];
        out[2 * i + 1] = hex[b[i] & 15];
    }
    out[16] = '\0';
}

lil_status lil__os_temp_name(struct lil_err *err, const char *path, const char *tag,
                             char *out, size_t cap)
{
    char r[17];
    int n;

    random_hex(r);
    n = snprintf(out, cap, "%s.%s.%s", path, tag, r);
    if (n < 0 || (size_t)n >= cap)
        return lil__seterr(err, LIL_E_TOOBIG, 0, "path %s is too long", path);
    return LIL_OK;
}

lil_status lil__os_create_temp(const struct lil_env *env, struct lil_err *err,
                               const char *path, const char *tag, char *tmp, size_t cap,
                               int *fd_out)
{
    lil_status rc = LIL_OK;

    *fd_out = -1;
    for (int tries = 0; tries < 8; tries++) {
        rc = lil__os_temp_name(err, path, tag, tmp, cap);
        if (rc == LIL_OK)
            rc = lil__os_open(env, err, tmp,
                              O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                              0600, fd_out);
        if (rc == LIL_OK || err->sys_errno != EEXIST)
            break;
    }
    return rc;
}

void lil__os_close(const struct lil_env *env, int fd)
{
    if (fd >= 0)
        env->os->close(fd);
}

lil_status lil__os_pread_all(const struct lil_env *env, struct lil_err *err, int fd,
                             void *buf, size_t n, uint64_t off, const char *what)
{
    size_t done = 0;

    while (done < n) {
        ssize_t r =
            env->os->pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return lil__seterr(err, LIL_E_IO, errno, "read %s at offset %llu: %s", what,
                               (unsigned long long)(off + done), lil__errstr(errno));
        if (r == 0)
            return lil__seterr(err, LIL_E_IO, 0, "read %s at offset %llu: end of file",
                               what, (unsigned long long)(off + done));
        done += (size_t)r;
    }
    return LIL_OK;
}

lil_status lil__os_pwrite_all(const struct lil_env *env, struct lil_err *err, int fd,
                              const void *buf, size_t n, uint64_t off, const char *what)
{
    size_t done = 0;

    while (done < n) {
        ssize_t r = env->os->pwrite(fd, (const char *)buf + done, n - done,
                                    (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : ENOSPC;
            return lil__seterr(err, LIL_E_IO, e, "write %s at offset %llu: %s", what,
                               (unsigned long long)(off + done), lil__errstr(e));
        }
        done += (size_t)r;
    }
    return LIL_OK;
}

lil_status lil__os_fdatasync(const struct lil_env *env, struct lil_err *err, int fd,
                             const char *what)
{
    int r;

    do
        r = env->os->fdatasync(fd);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return lil__seterr(err, LIL_E_IO, errno, "fdatasync %s: %s", what,
                           lil__errstr(errno));
    return LIL_OK;
}

lil_status lil__os_ftruncate(const struct lil_env *env, struct lil_err *err, int fd,
                             uint64_t len, const char *what)
{
    int r;

    do
        r = env->os->ftruncate(fd, (off_t)len);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return lil__seterr(err, LIL_E_IO, errno, "ftruncate %s to %llu: %s", what,
                           (unsigned long long)len, lil__errstr(errno));
    return LIL_OK;
}

lil_status lil__os_fstat_size(const struct lil_env *env, struct lil_err *err, int fd,
                              uint64_t *size_out, const char *what)
{
    struct stat st;

    *size_out = 0;
    if (env->os->fstat(fd, &st) < 0)
        return lil__seterr(err, LIL_E_IO, errno, "fstat %s: %s", what,
                           lil__errstr(errno));
    *size_out = (uint64_t)st.st_size;
    return LIL_OK;
}

lil_status lil__os_fsync_dir(const struct lil_env *env, struct lil_err *err,
                             const char *dir)
{
    int fd = -1, r;
    lil_status rc =
        lil__os_open(env, err, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, &fd);

    if (rc != LIL_OK)
        return rc;
    do
        r = env->os->fsync(fd);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        rc = lil__seterr(err, LIL_E_IO, errno, "fsync directory %s: %s", dir,
                         lil__errstr(errno));
    lil__os_close(env, fd);
    return rc;
}

/* fsync the directory that holds path. */
lil_status lil__os_fsync_parent(const struct lil_env *env, struct lil_err *err,
                                const char *path)
{
    char parent[4200];
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;

    if (!slash)
        return lil__os_fsync_dir(env, err, ".");
    if (n == 0)
        return lil__os_fsync_dir(env, err, "/");
    if (n >= sizeof(parent))
        return lil__seterr(err, LIL_E_TOOBIG, 0, "path %s is too long", path);
    memcpy(parent, path, n);
    parent[n] = '\0';
    return lil__os_fsync_dir(env, err, parent);
}

lil_status lil__os_mkdir(const struct lil_env *env, struct lil_err *err,
                         const char *dir, bool sync_parent)
{
    struct stat st;

    if (env->os->mkdir(dir, 0700) != 0 && errno != EEXIST)
        return lil__seterr(err, LIL_E_IO, errno, "mkdir %s: %s", dir,
                           lil__errstr(errno));
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return lil__seterr(err, LIL_E_IO, ENOTDIR, "%s exists and is not a directory",
                           dir);
    return sync_parent ? lil__os_fsync_parent(env, err, dir) : LIL_OK;
}

/* Write data to a new temporary file beside path (its name into tmp) and
 * make it durable. */
static lil_status write_tmp(const struct lil_env *env, struct lil_err *err,
                            const char *path, const void *data, size_t len, char *tmp,
                            size_t cap)
{
    int fd = -1;
    lil_status rc = lil__os_create_temp(env, err, path, "tmp", tmp, cap, &fd);

    if (rc != LIL_OK)
        return rc;
    rc = lil__os_pwrite_all(env, err, fd, data, len, 0, tmp);
    if (rc == LIL_OK)
        rc = lil__os_fdatasync(env, err, fd, tmp);
    lil__os_close(env, fd);
    if (rc != LIL_OK)
        env->os->unlink(tmp);
    return rc;
}

lil_status lil__os_publish(const struct lil_env *env, struct lil_err *err,
                           const char *dir, const char *path, const void *data,
                           size_t len)
{
    char tmp[4200];
    lil_status rc = write_tmp(env, err, path, data, len, tmp, sizeof(tmp));

    if (rc != LIL_OK)
        return rc;
    if (env->os->rename(tmp, path) < 0) {
        rc = lil__seterr(err, LIL_E_IO, errno, "rename %s to %s: %s", tmp, path,
                         lil__errstr(errno));
        env->os->unlink(tmp);
        return rc;
    }
    return lil__os_fsync_dir(env, err, dir);
}

lil_status lil__os_publish_new(const struct lil_env *env, struct lil_err *err,
                               const char *dir, const char *path, const void *data,
                               size_t len, bool *existed)
{
    char tmp[4200];
    lil_status rc = write_tmp(env, err, path, data, len, tmp, sizeof(tmp));
    int e = 0;

    *existed = false;
    if (rc != LIL_OK)
        return rc;
    if (env->os->link(tmp, path) < 0)
        e = errno;
    env->os->unlink(tmp);
    if (e == EEXIST)
        *existed = true;
    else if (e)
        return lil__seterr(err, LIL_E_IO, e, "link %s to %s: %s", tmp, path,
                           lil__errstr(e));
    return lil__os_fsync_dir(env, err, dir);
}

static lil_status ofd_lock(const struct lil_env *env, struct lil_err *err, int fd,
                           int cmd, const char *what)
{
    struct flock fl;
    int r;

    memset(&fl, 0, sizeof(fl));
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = 0;
    fl.l_len = 1; /* byte 0 stands for the whole file */
    do
        r = env->os->fcntl_lock(fd, cmd, &fl);
    while (r < 0 && errno == EINTR && cmd == F_OFD_SETLKW);
    if (r == 0)
        return LIL_OK;
    if (errno == EAGAIN || errno == EACCES)
        return lil__seterr(err, LIL_E_LOCKED, errno, "%s is locked", what);
    return lil__seterr(err, LIL_E_IO, errno, "lock %s: %s", what, lil__errstr(errno));
}

lil_status lil__os_lock_try(const struct lil_env *env, struct lil_err *err, int fd,
                            const char *what)
{
    return ofd_lock(env, err, fd, F_OFD_SETLK, what);
}

lil_status lil__os_lock_wait(const struct lil_env *env, struct lil_err *err, int fd,
                             const char *what)
{
    return ofd_lock(env, err, fd, F_OFD_SETLKW, what);
}

bool lil__os_lock_held(const struct lil_env *env, int fd)
{
    struct flock fl;

    memset(&fl, 0, sizeof(fl));
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = 0;
    fl.l_len = 1;
    if (env->os->fcntl_lock(fd, F_OFD_GETLK, &fl) < 0)
        return false;
    return fl.l_type != F_UNLCK;
}

static lil_status load_copy(const struct lil_env *env, struct lil_err *err, int fd,
                            const char *path, uint64_t size, uint8_t **data)
{
    uint8_t *p = lil__malloc(env, (size_t)size);
    uint64_t got = 0;

    if (!p)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory reading %s", path);
    while (got < size) { /* the file may shrink meanwhile: keep what was read */
        ssize_t r = env->os->pread(fd, p + got, (size_t)(size - got), (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            lil__free(env, p);
            return lil__seterr(err, LIL_E_IO, errno, "read %s: %s", path,
                               lil__errstr(errno));
        }
        if (r == 0)
            break;
        got += (uint64_t)r;
    }
    if (got < size)
        memset(p + got, 0, (size_t)(size - got));
    *data = p;
    return LIL_OK;
}

lil_status lil__os_load(const struct lil_env *env, struct lil_err *err, int fd,
                        const char *path, bool shared, uint8_t **data, uint64_t *len)
{
    uint64_t size = 0;
    void *p;
    lil_status rc = lil__os_fstat_size(env, err, fd, &size, path);

    *data = NULL;
    *len = 0;
    if (rc != LIL_OK || size == 0)
        return rc;
    if (size > SIZE_MAX / 2)
        return lil__seterr(err, LIL_E_TOOBIG, 0, "%s is too large", path);
    if (!shared) {
        rc = load_copy(env, err, fd, path, size, data);
    } else {
        p = env->os->mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd,
                          0);
        if (p == MAP_FAILED)
            return lil__seterr(err, LIL_E_IO, errno, "mmap %s: %s", path,
                               lil__errstr(errno));
        *data = p;
    }
    if (rc == LIL_OK)
        *len = size;
    return rc;
}

void lil__os_unload(const struct lil_env *env, uint8_t *data, uint64_t len, bool shared)
{
    if (!data)
        return;
    if (shared)
        env->os->munmap(data, (size_t)len);
    else
        lil__free(env, data);
}

lil_status lil__os_read_file(const struct lil_env *env, struct lil_err *err,
                             const char *path, lil_bytes *out)
{
    uint64_t size = 0;
    int fd = -1;
    lil_status rc = lil__os_open_regular(env, err, path, O_RDONLY | O_CLOEXEC, 0, &fd);

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
            lil__export_free(out->data);
            out->data = NULL;
            out->len = 0;
        }
    }
    lil__os_close(env, fd);
    return rc;
}
