/*
 * faults.c -- the fault-injecting system-call table, the power-cut log and
 * the failing allocator described in faults.h.
 *
 * Every wrapper first counts the call and asks decide() whether the armed
 * fault acts on it.  With tracking on, a wrapper that changes a file writes
 * its undo entry to the log before making the change (a write: the old
 * bytes) or right after it succeeded (a new name: so that a failed create
 * or link never undoes someone else's file).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "faults.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/env.h"
#include "os/os.h"

/* ---- generator ------------------------------------------------------------ */

uint64_t t_rand(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

uint64_t t_rand_below(uint64_t *state, uint64_t n)
{
    return n ? t_rand(state) % n : 0;
}

/* ---- counting and acting ---------------------------------------------------- */

static struct {
    unsigned long count[T_K_COUNT];
    int armed;
    struct t_fault f;
    unsigned long fired;
    uint64_t rng;
} S;

static const char *const kind_names[T_K_COUNT] = {
    "open",  "pwrite",     "fdatasync", "fsync",  "ftruncate", "fallocate", "rename",
    "link",  "unlink",     "mkdir",     "read",   "write",     "pipe2",     "fcntl",
    "spawn", "pidfd_open", "poll",      "waitid", "kill",
};

const char *t_kind_name(enum t_kind k)
{
    return (unsigned)k < T_K_COUNT ? kind_names[k] : "?";
}

const char *t_action_name(enum t_action a)
{
    switch (a) {
    case T_ACT_NONE:
        return "none";
    case T_ACT_ERR:
        return "error";
    case T_ACT_SHORT:
        return "short";
    case T_ACT_CRASH:
        return "crash";
    case T_ACT_CRASH_AFTER:
        return "crash-after";
    case T_ACT_CRASH_TORN:
        return "crash-torn";
    }
    return "?";
}

void t_faults_reset(void)
{
    memset(S.count, 0, sizeof(S.count));
    S.armed = 0;
    S.fired = 0;
}

void t_faults_arm(const struct t_fault *f)
{
    t_faults_reset();
    S.f = *f;
    S.armed = 1;
    S.rng = f->seed ? f->seed : 1;
}

unsigned long t_faults_fired(void)
{
    return S.fired;
}

unsigned long t_faults_count(enum t_kind k)
{
    return (unsigned)k < T_K_COUNT ? S.count[k] : 0;
}

static enum t_action decide(enum t_kind k)
{
    unsigned long n = ++S.count[k];

    if (!S.armed || S.f.kind != k || S.f.action == T_ACT_NONE)
        return T_ACT_NONE;
    if (n == S.f.nth || (S.f.sticky && n > S.f.nth)) {
        S.fired++;
        return S.f.action;
    }
    return T_ACT_NONE;
}

static void crash(void)
{
    _exit(T_CRASH_EXIT);
}

/* ---- power-cut log: writing ------------------------------------------------- */

enum pc_type {
    PC_WRITE = 1, /* bytes [off, off+len) were overwritten; old bytes follow */
    PC_SIZE,      /* the size went from old_size to off; cut bytes follow */
    PC_SYNC,      /* the file was fdatasync'd / fsync'd */
    PC_CREATE,    /* path was created in directory (pdev, pino) */
    PC_LINK,      /* path2 was linked to the file of path */
    PC_RENAME,    /* path was renamed to path2; replaced target bytes follow */
    PC_DIRSYNC,   /* the directory (dev, ino) was fsync'd */
};

#define PC_MAGIC     0x50434c47u
#define PC_SAVE_MAX  (1u << 20) /* largest replaced rename target kept */
#define PC_FD_MAX    4096
#define PC_NO_TARGET UINT64_MAX

struct pc_hdr {
    uint32_t magic;
    uint32_t type;
    uint64_t dev, ino;   /* the file (the directory for PC_DIRSYNC) */
    uint64_t pdev, pino; /* directory of the new name (CREATE, LINK, RENAME) */
    uint64_t off, len;
    uint64_t old_size;
    uint64_t old_len; /* bytes of old content after the header */
    uint32_t path_len, path2_len;
    uint64_t total;
};

static struct {
    int log_fd;
    char *fd_path[PC_FD_MAX];
} PC = {.log_fd = -1};

static uint8_t *read_file(const char *path, size_t *len);

static void pc_remember(int fd, const char *path)
{
    if (fd < 0 || fd >= PC_FD_MAX)
        return;
    free(PC.fd_path[fd]);
    PC.fd_path[fd] = strdup(path);
}

static const char *pc_path_of(int fd)
{
    return fd >= 0 && fd < PC_FD_MAX && PC.fd_path[fd] ? PC.fd_path[fd] : "";
}

static void pc_forget_fd(int fd)
{
    if (fd >= 0 && fd < PC_FD_MAX) {
        free(PC.fd_path[fd]);
        PC.fd_path[fd] = NULL;
    }
}

static int parent_stat(const char *path, struct stat *st)
{
    char buf[4096];
    char *slash;

    snprintf(buf, sizeof(buf), "%s", path);
    slash = strrchr(buf, '/');
    if (!slash)
        return stat(".", st);
    if (slash == buf)
        slash[1] = '\0';
    else
        *slash = '\0';
    return stat(buf, st);
}

static void write_fully(int fd, const void *p, size_t n)
{
    const char *c = p;

    while (n > 0) {
        ssize_t r = write(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return;
        c += r;
        n -= (size_t)r;
    }
}

/* Append one entry: h (total and the lengths are filled here), old bytes,
 * path, path2.  One write() so that a kill leaves a whole entry or a
 * truncated last one, which the reader ignores. */
static void pc_log(struct pc_hdr *h, const void *old, size_t old_len, const char *path,
                   const char *path2)
{
    size_t pl = path ? strlen(path) : 0, p2l = path2 ? strlen(path2) : 0;
    size_t total = sizeof(*h) + old_len + pl + p2l;
    char *buf;
    int saved = errno;

    h->magic = PC_MAGIC;
    h->old_len = old_len;
    h->path_len = (uint32_t)pl;
    h->path2_len = (uint32_t)p2l;
    h->total = total;
    buf = malloc(total);
    if (!buf) {
        fprintf(stderr, "faults: out of memory logging a change\n");
        abort();
    }
    memcpy(buf, h, sizeof(*h));
    if (old_len)
        memcpy(buf + sizeof(*h), old, old_len);
    if (pl)
        memcpy(buf + sizeof(*h) + old_len, path, pl);
    if (p2l)
        memcpy(buf + sizeof(*h) + old_len + pl, path2, p2l);
    write_fully(PC.log_fd, buf, total);
    free(buf);
    errno = saved;
}

/* Read up to n bytes at off of fd's file (the fd may be write-only). */
static size_t read_old(int fd, void *buf, size_t n, off_t off)
{
    size_t got = 0;
    int rfd = fd;
    bool own = false;

    if (n == 0)
        return 0;
    for (;;) {
        ssize_t r = pread(rfd, (char *)buf + got, n - got, off + (off_t)got);
        if (r < 0 && errno == EBADF && !own) {
            rfd = open(pc_path_of(fd), O_RDONLY | O_CLOEXEC);
            if (rfd < 0)
                return 0;
            own = true;
            continue;
        }
        if (r <= 0)
            break;
        got += (size_t)r;
        if (got == n)
            break;
    }
    if (own)
        close(rfd);
    return got;
}

static void pc_log_write(int fd, size_t n, off_t off)
{
    struct pc_hdr h;
    struct stat st;
    uint8_t *old;
    size_t got;
    int saved = errno;

    if (PC.log_fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    memset(&h, 0, sizeof(h));
    h.type = PC_WRITE;
    h.dev = (uint64_t)st.st_dev;
    h.ino = (uint64_t)st.st_ino;
    h.off = (uint64_t)off;
    h.len = n;
    h.old_size = (uint64_t)st.st_size;
    old = malloc(n ? n : 1);
    if (!old)
        abort();
    got = read_old(fd, old, n, off);
    pc_log(&h, old, got, pc_path_of(fd), NULL);
    free(old);
    errno = saved;
}

static void pc_log_size(int fd, uint64_t new_size)
{
    struct pc_hdr h;
    struct stat st;
    uint8_t *old = NULL;
    size_t got = 0;
    int saved = errno;

    if (PC.log_fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    if ((uint64_t)st.st_size == new_size)
        return;
    memset(&h, 0, sizeof(h));
    h.type = PC_SIZE;
    h.dev = (uint64_t)st.st_dev;
    h.ino = (uint64_t)st.st_ino;
    h.off = new_size;
    h.old_size = (uint64_t)st.st_size;
    if (new_size < h.old_size) {
        size_t cut = (size_t)(h.old_size - new_size);
        old = malloc(cut);
        if (!old)
            abort();
        got = read_old(fd, old, cut, (off_t)new_size);
    }
    pc_log(&h, old, got, pc_path_of(fd), NULL);
    free(old);
    errno = saved;
}

static void pc_log_sync(int fd)
{
    struct pc_hdr h;
    struct stat st;
    int saved = errno;

    if (PC.log_fd < 0 || fstat(fd, &st) != 0)
        return;
    memset(&h, 0, sizeof(h));
    h.type = S_ISDIR(st.st_mode) ? PC_DIRSYNC : PC_SYNC;
    h.dev = (uint64_t)st.st_dev;
    h.ino = (uint64_t)st.st_ino;
    h.old_size = (uint64_t)st.st_size;
    pc_log(&h, NULL, 0, pc_path_of(fd), NULL);
    errno = saved;
}

/* A new name: CREATE (path) or LINK (path -> path2).  Logged after the
 * call succeeded. */
static void pc_log_name(uint32_t type, const char *path, const char *path2)
{
    struct pc_hdr h;
    struct stat st, pst;
    const char *name = path2 ? path2 : path;
    int saved = errno;

    if (PC.log_fd < 0 || stat(name, &st) != 0 || parent_stat(name, &pst) != 0)
        return;
    memset(&h, 0, sizeof(h));
    h.type = type;
    h.dev = (uint64_t)st.st_dev;
    h.ino = (uint64_t)st.st_ino;
    h.pdev = (uint64_t)pst.st_dev;
    h.pino = (uint64_t)pst.st_ino;
    h.old_size = (uint64_t)st.st_size;
    pc_log(&h, NULL, 0, path, path2);
    errno = saved;
}

/* Content of an existing file (a rename target about to be replaced). */
static uint8_t *slurp(const char *path, size_t max, size_t *len)
{
    struct stat st;
    uint8_t *buf;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t got = 0;

    *len = 0;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size > max) {
        close(fd);
        return NULL;
    }
    buf = malloc((size_t)st.st_size + 1);
    while (buf && got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    *len = got;
    return buf;
}

static bool entry_ok(const uint8_t *data, size_t left)
{
    struct pc_hdr h;

    if (left < sizeof(h))
        return false;
    memcpy(&h, data, sizeof(h));
    return h.magic == PC_MAGIC && h.total <= left &&
           h.total == sizeof(h) + h.old_len + h.path_len + h.path2_len;
}

/* A process killed while it appended an entry leaves a torn last entry
 * (its change was not made).  Cut it off before anyone appends after it,
 * or the reader would frame every later entry wrongly. */
static void pc_cut_torn(const char *log_path)
{
    size_t len, pos = 0;
    uint8_t *data = read_file(log_path, &len);

    if (!data)
        return;
    while (entry_ok(data + pos, len - pos)) {
        struct pc_hdr h;
        memcpy(&h, data + pos, sizeof(h));
        pos += (size_t)h.total;
    }
    if (pos < len && truncate(log_path, (off_t)pos) != 0)
        fprintf(stderr, "faults: cannot truncate %s: %s\n", log_path, strerror(errno));
    free(data);
}

void t_pc_track(const char *log_path)
{
    t_pc_untrack();
    pc_cut_torn(log_path);
    PC.log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (PC.log_fd < 0) {
        fprintf(stderr, "faults: cannot open %s: %s\n", log_path, strerror(errno));
        abort();
    }
}

void t_pc_untrack(void)
{
    if (PC.log_fd >= 0)
        close(PC.log_fd);
    PC.log_fd = -1;
}

void t_pc_forget(const char *log_path)
{
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    if (fd >= 0)
        close(fd);
}

/* ---- the table --------------------------------------------------------------- */

static int f_open(const char *path, int flags, mode_t mode)
{
    enum t_action act = decide(T_K_OPEN);
    struct stat st;
    bool existed = true;
    int fd;

    if (act == T_ACT_CRASH || act == T_ACT_CRASH_TORN)
        crash();
    if (act == T_ACT_ERR) {
        errno = S.f.err;
        return -1;
    }
    if (PC.log_fd >= 0 && (flags & O_CREAT))
        existed = stat(path, &st) == 0;
    fd = lil__os_posix.open(path, flags, mode);
    if (fd >= 0 && PC.log_fd >= 0) {
        pc_remember(fd, path);
        if (!existed)
            pc_log_name(PC_CREATE, path, NULL);
    }
    if (act == T_ACT_CRASH_AFTER)
        crash();
    return fd;
}

static int f_close(int fd)
{
    pc_forget_fd(fd);
    return lil__os_posix.close(fd);
}

/* A call that changes no file: decide, then fail it (errno set) or end the
 * process before it; the caller makes the call and then crash_after(act). */
static enum t_action fault_before(enum t_kind k)
{
    enum t_action act = decide(k);

    if (act == T_ACT_CRASH || act == T_ACT_CRASH_TORN)
        crash();
    if (act == T_ACT_ERR)
        errno = S.f.err;
    return act;
}

static void crash_after(enum t_action act)
{
    if (act == T_ACT_CRASH_AFTER)
        crash();
}

static ssize_t f_read(int fd, void *buf, size_t n)
{
    enum t_action act = fault_before(T_K_READ);
    ssize_t r;

    if (act == T_ACT_ERR)
        return -1;
    r = lil__os_posix.read(fd, buf, n);
    crash_after(act);
    return r;
}

static ssize_t f_pread(int fd, void *buf, size_t n, off_t off)
{
    return lil__os_posix.pread(fd, buf, n, off);
}

static ssize_t tracked_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    pc_log_write(fd, n, off);
    return lil__os_posix.pwrite(fd, buf, n, off);
}

static ssize_t f_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    enum t_action act = decide(T_K_PWRITE);
    ssize_t r;

    switch (act) {
    case T_ACT_CRASH:
        crash();
        break;
    case T_ACT_ERR:
        errno = S.f.err;
        return -1;
    case T_ACT_SHORT:
        return tracked_pwrite(fd, buf, n >= 2 ? n / 2 : n, off);
    case T_ACT_CRASH_TORN:
        if (n >= 2)
            tracked_pwrite(fd, buf, 1 + (size_t)t_rand_below(&S.rng, n - 1), off);
        crash();
        break;
    case T_ACT_CRASH_AFTER:
        tracked_pwrite(fd, buf, n, off);
        crash();
        break;
    case T_ACT_NONE:
        break;
    }
    r = tracked_pwrite(fd, buf, n, off);
    return r;
}

static int sync_call(enum t_kind k, int (*real)(int), int fd)
{
    enum t_action act = decide(k);
    int r;

    if (act == T_ACT_CRASH || act == T_ACT_CRASH_TORN)
        crash();
    if (act == T_ACT_ERR) {
        errno = S.f.err;
        return -1; /* nothing was synced: the log says so too */
    }
    r = real(fd);
    if (r == 0)
        pc_log_sync(fd);
    if (act == T_ACT_CRASH_AFTER)
        crash();
    return r;
}

static int f_fdatasync(int fd)
{
    return sync_call(T_K_FDATASYNC, lil__os_posix.fdatasync, fd);
}

static int f_fsync(int fd)
{
    return sync_call(T_K_FSYNC, lil__os_posix.fsync, fd);
}

static int f_ftruncate(int fd, off_t len)
{
    enum t_action act = decide(T_K_FTRUNCATE);
    int r;

    if (act == T_ACT_CRASH || act == T_ACT_CRASH_TORN)
        crash();
    if (act == T_ACT_ERR) {
        errno = S.f.err;
        return -1;
    }
    pc_log_size(fd, (uint64_t)len);
    r = lil__os_posix.ftruncate(fd, len);
    if (act == T_ACT_CRASH_AFTER)
        crash();
    return r;
}

static int f_fallocate(int fd, int mode, off_t off, off_t len)
{
    enum t_action act = decide(T_K_FALLOCATE);
    struct stat st;
    int r;

    if (act == T_ACT_CRASH || act == T_ACT_CRASH_TORN)
        crash();
    if (act == T_ACT_ERR) {
        errno = S.f.err;
        return -1;
    }
    if (PC.log_fd >= 0 && fstat(fd, &st) == 0) {
        if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
            pc_log_write(fd, (size_t)len, off);
        if (!(mode & FALLOC_FL_KEEP_SIZE) && off + len > st.st_size)
            pc_log_size(fd, (uint64_t)(off + len));
    }
    r = lil__os_posix.fallocate(fd, mode, off, len);
    if (act == T_ACT_CRASH_AFTER)
        crash();
    return r;
}

static int f_fstat(int fd, struct stat *st)
{
    return lil__os_posix.fstat(fd, st);
}

/* Counted as opens; only reads go through it (the artifacts' walk), so
 * nothing is created to remember for a power cut. */
static int f_openat(int dirfd, const char *path, int flags, mode_t mode)
{
    enum t_action act = fault_before(T_K_OPEN);
    int fd;

    if (act == T_ACT_ERR)
        return -1;
    fd = lil__os_posix.openat(dirfd, path, flags, mode);
    crash_after(act);
    return fd;
}

static int f_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    return lil__os_posix.fstatat(dirfd, path, st, flags);
}

static int f_rename(const char *from, const char *to)
{
    enum t_action act = decide(T_K_RENAME);
    struct pc_hdr h;
    struct stat st, pst;
    uint8_t *saved = NULL;
    size_t saved_len = 0;
    bool target = false;
    int r;

    if (act == T_ACT_CRASH || act == T_ACT_CRASH_TORN)
        crash();
    if (act == T_ACT_ERR) {
        errno = S.f.err;
        return -1;
    }
    if (PC.log_fd >= 0 && stat(to, &st) == 0) {
        target = true;
        saved = slurp(to, PC_SAVE_MAX, &saved_len);
    }
    r = lil__os_posix.rename(from, to);
    if (r == 0 && PC.log_fd >= 0 && stat(to, &st) == 0 && parent_stat(to, &pst) == 0) {
        memset(&h, 0, sizeof(h));
        h.type = PC_RENAME;
        h.dev = (uint64_t)st.st_dev;
        h.ino = (uint64_t)st.st_ino;
        h.pdev = (uint64_t)pst.st_dev;
        h.pino = (uint64_t)pst.st_ino;
        /* old_size: the replaced target's size, or none; when the target
         * was too big to keep, the rename is never undone (old_len !=
         * old_size). */
        h.old_size = target ? (saved ? saved_len : PC_SAVE_MAX + 1ull) : PC_NO_TARGET;
        pc_log(&h, saved, saved ? saved_len : 0, from, to);
    }
    free(saved);
    if (act == T_ACT_CRASH_AFTER)
        crash();
    return r;
}

static int f_link(const char *from, const char *to)
{
    enum t_action act = decide(T_K_LINK);
    int r;

    if (act == T_ACT_CRASH || act == T_ACT_CRASH_TORN)
        crash();
    if (act == T_ACT_ERR) {
        errno = S.f.err;
        return -1;
    }
    r = lil__os_posix.link(from, to);
    if (r == 0)
        pc_log_name(PC_LINK, from, to);
    if (act == T_ACT_CRASH_AFTER)
        crash();
    return r;
}

static int f_unlink(const char *path)
{
    enum t_action act = decide(T_K_UNLINK);
    int r;

    if (act == T_ACT_CRASH || act == T_ACT_CRASH_TORN)
        crash();
    if (act == T_ACT_ERR) {
        errno = S.f.err;
        return -1;
    }
    r = lil__os_posix.unlink(path); /* an unlink counts as durable at once */
    if (act == T_ACT_CRASH_AFTER)
        crash();
    return r;
}

static int f_mkdir(const char *path, mode_t mode)
{
    enum t_action act = decide(T_K_MKDIR);
    int r;

    if (act == T_ACT_CRASH || act == T_ACT_CRASH_TORN)
        crash();
    if (act == T_ACT_ERR) {
        errno = S.f.err;
        return -1;
    }
    r = lil__os_posix.mkdir(path, mode);
    if (r == 0)
        pc_log_name(PC_CREATE, path, NULL); /* the entry needs its parent's fsync */
    if (act == T_ACT_CRASH_AFTER)
        crash();
    return r;
}

static int f_fcntl_lock(int fd, int cmd, struct flock *fl)
{
    return lil__os_posix.fcntl_lock(fd, cmd, fl);
}

static void *f_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return lil__os_posix.mmap(addr, len, prot, flags, fd, off);
}

static int f_munmap(void *addr, size_t len)
{
    return lil__os_posix.munmap(addr, len);
}

static ssize_t f_write(int fd, const void *buf, size_t n)
{
    enum t_action act = fault_before(T_K_WRITE);
    ssize_t r;

    if (act == T_ACT_ERR)
        return -1;
    r = lil__os_posix.write(fd, buf, n);
    crash_after(act);
    return r;
}

static int f_pipe2(int fds[2], int flags)
{
    enum t_action act = fault_before(T_K_PIPE2);
    int r;

    if (act == T_ACT_ERR)
        return -1;
    r = lil__os_posix.pipe2(fds, flags);
    crash_after(act);
    return r;
}

static int f_fcntl_int(int fd, int cmd, int arg)
{
    enum t_action act = fault_before(T_K_FCNTL);
    int r;

    if (act == T_ACT_ERR)
        return -1;
    r = lil__os_posix.fcntl_int(fd, cmd, arg);
    crash_after(act);
    return r;
}

static int f_spawn(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                   const posix_spawnattr_t *attr, char *const argv[],
                   char *const envp[])
{
    enum t_action act = fault_before(T_K_SPAWN);
    int r;

    if (act == T_ACT_ERR)
        return S.f.err; /* posix_spawn returns the error number */
    r = lil__os_posix.spawn(pid, file, fa, attr, argv, envp);
    crash_after(act);
    return r;
}

static int f_pidfd_open(pid_t pid, unsigned flags)
{
    enum t_action act = fault_before(T_K_PIDFD_OPEN);
    int r;

    if (act == T_ACT_ERR)
        return -1;
    r = lil__os_posix.pidfd_open(pid, flags);
    crash_after(act);
    return r;
}

static int f_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
    enum t_action act = fault_before(T_K_POLL);
    int r;

    if (act == T_ACT_ERR)
        return -1;
    r = lil__os_posix.poll(fds, n, timeout_ms);
    crash_after(act);
    return r;
}

static int f_waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
    enum t_action act = fault_before(T_K_WAITID);
    int r;

    if (act == T_ACT_ERR)
        return -1;
    r = lil__os_posix.waitid(type, id, info, options);
    crash_after(act);
    return r;
}

static int f_kill(pid_t pid, int sig)
{
    enum t_action act = fault_before(T_K_KILL);
    int r;

    if (act == T_ACT_ERR)
        return -1;
    r = lil__os_posix.kill(pid, sig);
    crash_after(act);
    return r;
}

static const struct lil_os faults_os = {
    .open = f_open,
    .close = f_close,
    .read = f_read,
    .pread = f_pread,
    .pwrite = f_pwrite,
    .fdatasync = f_fdatasync,
    .fsync = f_fsync,
    .ftruncate = f_ftruncate,
    .fallocate = f_fallocate,
    .fstat = f_fstat,
    .rename = f_rename,
    .link = f_link,
    .unlink = f_unlink,
    .mkdir = f_mkdir,
    .fcntl_lock = f_fcntl_lock,
    .mmap = f_mmap,
    .munmap = f_munmap,
    .pipe2 = f_pipe2,
    .fcntl_int = f_fcntl_int,
    .write = f_write,
    .spawn = f_spawn,
    .pidfd_open = f_pidfd_open,
    .poll = f_poll,
    .waitid = f_waitid,
    .kill = f_kill,
    .fork = fork, /* not counted: only the supervisor forks */
    .openat = f_openat,
    .fstatat = f_fstatat,
    .rmdir = rmdir, /* not counted: only removing a run's segments */
};

const struct lil_os *t_faults_os(void)
{
    return &faults_os;
}

lil_env *t_env_faulty(void)
{
    lil_env *env = NULL;

    if (lil_env_new(&env) != LIL_OK)
        return NULL;
    lil__env_set_os(env, &faults_os);
    return env;
}

/* ---- power-cut log: applying ------------------------------------------------ */

struct pc_ent {
    struct pc_hdr h;
    const uint8_t *old;
    char *path;
    char *path2;
    bool durable;
};

struct pc_file {
    uint64_t dev, ino;
    char *path;    /* where it is now */
    bool unsynced; /* has content/size entries not covered by a sync */
    uint64_t synced_size;
    bool synced_later; /* scratch for the durability pass */
    bool gone;
};

struct pc_state {
    struct pc_ent *e;
    size_t n;
    struct pc_file *f;
    size_t nf;
    uint64_t *dirs; /* (dev, ino) pairs fsync'd later in the log */
    size_t ndirs;
    uint64_t rng;
    enum t_pc_policy policy;
    struct t_pc_stats *st;
};

static struct pc_file *pc_file(struct pc_state *s, uint64_t dev, uint64_t ino)
{
    struct pc_file *nf;

    for (size_t i = 0; i < s->nf; i++)
        if (s->f[i].dev == dev && s->f[i].ino == ino)
            return &s->f[i];
    nf = realloc(s->f, (s->nf + 1) * sizeof(*s->f));
    if (!nf)
        abort();
    s->f = nf;
    memset(&s->f[s->nf], 0, sizeof(*s->f));
    s->f[s->nf].dev = dev;
    s->f[s->nf].ino = ino;
    return &s->f[s->nf++];
}

static void set_path(struct pc_file *f, const char *path)
{
    free(f->path);
    f->path = strdup(path);
}

static char *dup_n(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);

    if (!s)
        abort();
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    *len = 0;
    if (fd < 0 || !buf) {
        if (fd >= 0)
            close(fd);
        free(buf);
        return NULL;
    }
    for (;;) {
        ssize_t r;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb)
                abort();
            buf = nb;
            cap *= 2;
        }
        r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    *len = n;
    return buf;
}

static void pc_parse(struct pc_state *s, const uint8_t *data, size_t len)
{
    size_t pos = 0;

    while (entry_ok(data + pos, len - pos)) {
        struct pc_hdr h;
        struct pc_ent *ne;
        memcpy(&h, data + pos, sizeof(h));
        ne = realloc(s->e, (s->n + 1) * sizeof(*s->e));
        if (!ne)
            abort();
        s->e = ne;
        s->e[s->n].h = h;
        s->e[s->n].old = data + pos + sizeof(h);
        s->e[s->n].path = dup_n(data + pos + sizeof(h) + h.old_len, h.path_len);
        s->e[s->n].path2 =
            dup_n(data + pos + sizeof(h) + h.old_len + h.path_len, h.path2_len);
        s->e[s->n].durable = false;
        s->n++;
        pos += (size_t)h.total;
    }
}

static bool dir_synced_later(const struct pc_state *s, uint64_t dev, uint64_t ino)
{
    for (size_t i = 0; i < s->ndirs; i++)
        if (s->dirs[2 * i] == dev && s->dirs[2 * i + 1] == ino)
            return true;
    return false;
}

/* Backwards: an entry is durable when a later sync covers it. */
static void pc_mark_durable(struct pc_state *s)
{
    for (size_t i = s->n; i-- > 0;) {
        struct pc_ent *e = &s->e[i];
        struct pc_file *f = pc_file(s, e->h.dev, e->h.ino);
        switch (e->h.type) {
        case PC_SYNC:
            f->synced_later = true;
            e->durable = true;
            break;
        case PC_DIRSYNC: {
            uint64_t *nd = realloc(s->dirs, (s->ndirs + 1) * 2 * sizeof(uint64_t));
            if (!nd)
                abort();
            s->dirs = nd;
            s->dirs[2 * s->ndirs] = e->h.dev;
            s->dirs[2 * s->ndirs + 1] = e->h.ino;
            s->ndirs++;
            e->durable = true;
            break;
        }
        case PC_WRITE:
        case PC_SIZE:
            e->durable = f->synced_later;
            break;
        default:
            e->durable = dir_synced_later(s, e->h.pdev, e->h.pino);
            break;
        }
    }
}

/* Forwards: where each file is at the end, and its size at its last sync. */
static void pc_track_paths(struct pc_state *s)
{
    for (size_t i = 0; i < s->n; i++) {
        struct pc_ent *e = &s->e[i];
        struct pc_file *f = pc_file(s, e->h.dev, e->h.ino);
        if (e->h.type == PC_RENAME || e->h.type == PC_LINK)
            set_path(f, e->path2);
        else if (e->h.type == PC_CREATE || !f->path)
            set_path(f, e->path);
        if ((e->h.type == PC_WRITE || e->h.type == PC_SIZE) && !e->durable &&
            !f->unsynced) {
            f->unsynced = true;
            f->synced_size = e->h.old_size;
        }
    }
}

static int open_same(const char *path, const struct pc_file *f)
{
    struct stat st;
    int fd;

    if (!path || !path[0])
        return -1;
    fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != f->ino ||
        (uint64_t)st.st_dev != f->dev) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Open the file of f for writing if it is still there (same inode), by the
 * name the change was made through (e, may be NULL) or its latest name. */
static int pc_open(const struct pc_file *f, const struct pc_ent *e)
{
    int fd;

    if (f->gone)
        return -1;
    fd = e ? open_same(e->path, f) : -1;
    return fd >= 0 ? fd : open_same(f->path, f);
}

static uint64_t fd_size(int fd)
{
    struct stat st;

    return fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Put the old bytes of e back over [from, off+len), never past the end of
 * the file as it is now (a later size change decides that part). */
static void restore(int fd, const struct pc_ent *e, uint64_t from)
{
    uint64_t end = e->h.off + e->h.len, size = fd_size(fd);
    uint8_t zero[4096] = {0};

    if (end > size)
        end = size;
    for (uint64_t pos = from; pos < end;) {
        uint64_t rel = pos - e->h.off;
        size_t n;
        const void *src;
        if (rel < e->h.old_len) {
            n = (size_t)(e->h.old_len - rel < end - pos ? e->h.old_len - rel
                                                        : end - pos);
            src = e->old + rel;
        } else {
            n = (size_t)(end - pos < sizeof(zero) ? end - pos : sizeof(zero));
            src = zero;
        }
        if (pwrite(fd, src, n, (off_t)pos) != (ssize_t)n)
            return;
        pos += n;
    }
}

static void garble(struct pc_state *s, int fd, const struct pc_ent *e)
{
    uint64_t a = t_rand_below(&s->rng, e->h.len);
    uint64_t b = a + 1 + t_rand_below(&s->rng, e->h.len - a);
    uint64_t size = fd_size(fd);
    uint8_t buf[4096];

    if (b + e->h.off > size)
        b = size > e->h.off ? size - e->h.off : a;
    for (uint64_t pos = a; pos < b;) {
        size_t n = (size_t)(b - pos < sizeof(buf) ? b - pos : sizeof(buf));
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)t_rand(&s->rng);
        if (pwrite(fd, buf, n, (off_t)(e->h.off + pos)) != (ssize_t)n)
            return;
        pos += n;
    }
}

static void undo_write(struct pc_state *s, const struct pc_ent *e, int fd)
{
    uint64_t r = s->policy == T_PC_DROP_ALL ? 50 : t_rand_below(&s->rng, 100);

    if (e->h.len == 0)
        return;
    if (r < 40) {
        s->st->kept++;
    } else if (r < 65) {
        restore(fd, e, e->h.off);
        s->st->dropped++;
    } else if (r < 85) {
        restore(fd, e, e->h.off + t_rand_below(&s->rng, e->h.len));
        s->st->torn++;
    } else {
        garble(s, fd, e);
        s->st->garbled++;
    }
}

static void undo_size(struct pc_state *s, const struct pc_ent *e, int fd)
{
    if (s->policy != T_PC_DROP_ALL && t_rand_below(&s->rng, 2) == 0)
        return;
    if (ftruncate(fd, (off_t)e->h.old_size) != 0)
        return;
    if (e->h.old_len && pwrite(fd, e->old, (size_t)e->h.old_len, (off_t)e->h.off) < 0)
        return;
    s->st->size_undone++;
}

static bool coin(struct pc_state *s)
{
    return s->policy == T_PC_DROP_ALL || t_rand_below(&s->rng, 2) == 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* A directory whose entry was not durable vanishes with all it held. */
static int rmtree(const char *path)
{
    return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void undo_name(struct pc_state *s, const struct pc_ent *e, struct pc_file *f)
{
    struct stat st;
    const char *name = e->h.type == PC_CREATE ? e->path : e->path2;

    if (!coin(s) || stat(name, &st) != 0 || (uint64_t)st.st_ino != e->h.ino)
        return;
    if (e->h.type == PC_RENAME) {
        if (e->h.old_size != PC_NO_TARGET && e->h.old_size != e->h.old_len)
            return; /* the replaced target was not kept: leave it */
        if (rename(e->path2, e->path) != 0)
            return;
        set_path(f, e->path);
        if (e->h.old_size != PC_NO_TARGET) {
            int fd = open(e->path2, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            if (fd >= 0) {
                write_fully(fd, e->old, (size_t)e->h.old_len);
                close(fd);
            }
        }
    } else {
        if (S_ISDIR(st.st_mode) ? rmtree(name) != 0 : unlink(name) != 0)
            return;
        if (e->h.type == PC_CREATE)
            f->gone = true;
        else if (f->path && strcmp(f->path, e->path2) == 0)
            set_path(f, e->path);
    }
    s->st->names_undone++;
}

static const char *const pc_type_names[] = {"?",      "write", "size",   "sync",
                                            "create", "link",  "rename", "dirsync"};

/* LIL_PC_TRACE=1: one line per log entry on stderr, with what the cut did
 * (the counters before and after tell which choice was made). */
static void pc_trace(const struct pc_ent *e, const char *what)
{
    const char *base = strrchr(e->path, '/');

    fprintf(stderr, "pc: %-7s %s%s%s ino=%llu off=%llu len=%llu old_size=%llu %s\n",
            e->h.type <= PC_DIRSYNC ? pc_type_names[e->h.type] : "?",
            base ? base + 1 : e->path, e->path2[0] ? " -> " : "",
            e->path2[0]
                ? (strrchr(e->path2, '/') ? strrchr(e->path2, '/') + 1 : e->path2)
                : "",
            (unsigned long long)e->h.ino, (unsigned long long)e->h.off,
            (unsigned long long)e->h.len, (unsigned long long)e->h.old_size, what);
}

static const char *pc_outcome(const struct t_pc_stats *a, const struct t_pc_stats *b)
{
    if (b->dropped != a->dropped)
        return "DROPPED";
    if (b->torn != a->torn)
        return "TORN";
    if (b->garbled != a->garbled)
        return "GARBLED";
    if (b->size_undone != a->size_undone)
        return "SIZE-UNDONE";
    if (b->names_undone != a->names_undone)
        return "NAME-UNDONE";
    return "kept";
}

static void pc_undo(struct pc_state *s)
{
    bool trace = getenv("LIL_PC_TRACE") != NULL;

    for (size_t i = s->n; i-- > 0;) {
        struct pc_ent *e = &s->e[i];
        struct pc_file *f = pc_file(s, e->h.dev, e->h.ino);
        struct t_pc_stats before = *s->st;
        int fd;
        if (e->durable) {
            if (trace)
                pc_trace(e, "durable");
            continue;
        }
        s->st->unsynced++;
        before.unsynced = s->st->unsynced;
        if (e->h.type == PC_WRITE || e->h.type == PC_SIZE) {
            fd = pc_open(f, e);
            if (fd < 0)
                continue;
            if (e->h.type == PC_WRITE)
                undo_write(s, e, fd);
            else
                undo_size(s, e, fd);
            close(fd);
        } else if (e->h.type != PC_SYNC && e->h.type != PC_DIRSYNC) {
            undo_name(s, e, f);
        }
        if (trace)
            pc_trace(e, pc_outcome(&before, s->st));
    }
}

/* The size of a file grown by unsynced writes may fall back to what the
 * last sync made durable (the metadata was never written). */
static void pc_sizes(struct pc_state *s)
{
    for (size_t i = 0; i < s->nf; i++) {
        struct pc_file *f = &s->f[i];
        uint64_t size, r, to;
        int fd;
        if (!f->unsynced)
            continue;
        fd = pc_open(f, NULL);
        if (fd < 0)
            continue;
        size = fd_size(fd);
        r = s->policy == T_PC_DROP_ALL ? 0 : t_rand_below(&s->rng, 100);
        to = size;
        if (r < 20)
            to = f->synced_size;
        else if (r < 30 && size > f->synced_size)
            to = f->synced_size + t_rand_below(&s->rng, size - f->synced_size);
        if (to < size && ftruncate(fd, (off_t)to) == 0) {
            s->st->size_undone++;
            if (getenv("LIL_PC_TRACE"))
                fprintf(stderr,
                        "pc: file ino=%llu size %llu -> %llu (synced size %llu)\n",
                        (unsigned long long)f->ino, (unsigned long long)size,
                        (unsigned long long)to, (unsigned long long)f->synced_size);
        }
        close(fd);
    }
}

int t_pc_apply(const char *log_path, uint64_t seed, enum t_pc_policy policy,
               struct t_pc_stats *st)
{
    struct t_pc_stats local;
    struct pc_state s;
    size_t len;
    uint8_t *data = read_file(log_path, &len);

    if (!st)
        st = &local;
    memset(st, 0, sizeof(*st));
    if (!data)
        return -1;
    memset(&s, 0, sizeof(s));
    s.rng = seed ? seed : 1;
    s.policy = policy;
    s.st = st;
    pc_parse(&s, data, len);
    st->entries = s.n;
    pc_mark_durable(&s);
    pc_track_paths(&s);
    pc_undo(&s);
    pc_sizes(&s);
    for (size_t i = 0; i < s.n; i++) {
        free(s.e[i].path);
        free(s.e[i].path2);
    }
    for (size_t i = 0; i < s.nf; i++)
        free(s.f[i].path);
    free(s.e);
    free(s.f);
    free(s.dirs);
    free(data);
    t_pc_forget(log_path);
    return 0;
}

/* ---- allocator ---------------------------------------------------------------- */

#define A_MAGIC 0x7441414cull /* "tAAL" */
#define A_HDR   16u

static bool a_refuse(struct t_alloc *a)
{
    a->calls++;
    if (a->fail_at &&
        (a->calls == a->fail_at || (a->sticky && a->calls > a->fail_at))) {
        a->failed++;
        return true;
    }
    return false;
}

static unsigned char *a_base(void *p)
{
    unsigned char *b = (unsigned char *)p - A_HDR;
    uint64_t m;

    memcpy(&m, b, sizeof(m));
    if (m != A_MAGIC) {
        fprintf(stderr, "faults: block %p was not allocated by the test allocator\n",
                p);
        abort();
    }
    return b;
}

static void *a_malloc(void *ud, size_t n)
{
    struct t_alloc *a = ud;
    unsigned char *b;
    uint64_t m = A_MAGIC;

    if (a_refuse(a) || n > SIZE_MAX - A_HDR)
        return NULL;
    b = malloc(n + A_HDR);
    if (!b)
        return NULL;
    memcpy(b, &m, sizeof(m));
    a->live++;
    return b + A_HDR;
}

static void *a_realloc(void *ud, void *p, size_t n)
{
    struct t_alloc *a = ud;
    unsigned char *b;

    if (!p)
        return a_malloc(ud, n);
    if (a_refuse(a) || n > SIZE_MAX - A_HDR)
        return NULL;
    b = realloc(a_base(p), n + A_HDR);
    return b ? b + A_HDR : NULL;
}

static void a_free(void *ud, void *p)
{
    struct t_alloc *a = ud;
    unsigned char *b;

    if (!p)
        return;
    b = a_base(p);
    memset(b, 0, sizeof(uint64_t));
    a->live--;
    free(b);
}

lil_status t_alloc_install(lil_env *env, struct t_alloc *a)
{
    return lil_env_set_allocator(env, a_malloc, a_realloc, a_free, a);
}
