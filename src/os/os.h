/*
 * os.h -- the system-call table and the file helpers built on it.
 *
 * Every system call that touches a journal or a marker goes through the
 * env's struct lil_os, never straight to libc, so that tests can replace
 * it: fail the k-th pwrite with EIO, the k-th fdatasync with EIO, write
 * short, end the process at the k-th call (crash points), or hold unsynced
 * writes back and garble them (simulated power cut).  The default table is
 * lil__os_posix.  Function pointers take no user data: a replacing table
 * keeps its state where its test wants it.  Child processes (os/proc.h)
 * go through it too.
 *
 * Every helper below returns LIL_OK or LIL_E_IO with errno kept in err and a
 * message naming the call and the path.  EINTR is retried here, once for all.
 */
#ifndef LIL_OS_OS_H
#define LIL_OS_OS_H

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "base/env.h"

struct lil_os {
    int (*open)(const char *path, int flags, mode_t mode);
    int (*close)(int fd);
    ssize_t (*read)(int fd, void *buf, size_t n); /* sequential: loop specs, pipes */
    ssize_t (*pread)(int fd, void *buf, size_t n, off_t off);
    ssize_t (*pwrite)(int fd, const void *buf, size_t n, off_t off);
    int (*fdatasync)(int fd);
    int (*fsync)(int fd);
    int (*ftruncate)(int fd, off_t len);
    int (*fallocate)(int fd, int mode, off_t off, off_t len);
    int (*fstat)(int fd, struct stat *st);
    int (*rename)(const char *from, const char *to);
    int (*link)(const char *from, const char *to);
    int (*unlink)(const char *path);
    int (*mkdir)(const char *path, mode_t mode);
    int (*fcntl_lock)(int fd, int cmd, struct flock *fl);
    void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t off);
    int (*munmap)(void *addr, size_t len);
    /* child processes (proc.c) */
    int (*pipe2)(int fds[2], int flags);
    int (*fcntl_int)(int fd, int cmd, int arg); /* F_GETFL, F_SETFL, F_DUPFD_CLOEXEC */
    ssize_t (*write)(int fd, const void *buf, size_t n); /* sequential: pipes */
    /* posix_spawnp: 0 or an errno value (not -1 and errno), exec errors too */
    int (*spawn)(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);
    int (*pidfd_open)(pid_t pid, unsigned flags); /* ENOSYS before Linux 5.3 */
    int (*poll)(struct pollfd *fds, nfds_t n, int timeout_ms);
    int (*waitid)(idtype_t type, id_t id, siginfo_t *info, int options);
    int (*kill)(pid_t pid, int sig);
    pid_t (*fork)(void); /* the supervisor's children (fork.c) */
    /* relative to a directory's descriptor (the artifacts' walk, which
       never follows a link it did not check) */
    int (*openat)(int dirfd, const char *path, int flags, mode_t mode);
    int (*fstatat)(int dirfd, const char *path, struct stat *st, int flags);
    int (*rmdir)(const char *path); /* an emptied directory (a run's segments) */
};

extern const struct lil_os lil__os_posix;

/* Fill env with the defaults (lil__env_init) and the POSIX table: how every
 * env is made above base (lil_env_new, a spec loaded without one). */
void lil__os_env_init(struct lil_env *env);

/* Replace the system-call table (tests inject faults this way); NULL puts
 * the POSIX table back. */
void lil__env_set_os(struct lil_env *env, const struct lil_os *os);

lil_status lil__os_open(const struct lil_env *env, struct lil_err *err,
                        const char *path, int flags, mode_t mode, int *fd_out);
void lil__os_close(const struct lil_env *env, int fd); /* -1 is a no-op */

/* Open path only if it is a regular file, never through a symbolic link:
 * what a store holds (journals, stop requests, markers) is opened this
 * way, so that a link planted there cannot redirect lil to another file
 * and a FIFO or a device cannot hang it.  The open adds O_NOFOLLOW (a link
 * at path: LIL_E_IO, errno ELOOP, "it is a symbolic link") and O_NONBLOCK
 * (opening a FIFO does not wait for a writer; on a regular file the flag
 * changes nothing), then fstat: anything but a regular file is closed and
 * refused (LIL_E_IO, errno EINVAL, the message saying what it is).  Links
 * in the directories above path are followed as usual. */
lil_status lil__os_open_regular(const struct lil_env *env, struct lil_err *err,
                                const char *path, int flags, mode_t mode, int *fd_out);

/* Whether path can be opened for reading as lil__os_open_regular opens. */
bool lil__os_is_regular(const struct lil_env *env, const char *path);

/* A temporary name beside path that nobody can guess: "<path>.<tag>.<16
 * hex digits from getrandom>" into out (cap bytes; LIL_E_TOOBIG when it
 * does not fit). */
lil_status lil__os_temp_name(struct lil_err *err, const char *path, const char *tag,
                             char *out, size_t cap);

/* Create a new temporary file beside path, mode 0600, named as
 * lil__os_temp_name says (into tmp), with O_CREAT | O_EXCL | O_NOFOLLOW:
 * it never opens a file or a link that was already there (a name taken is
 * drawn again, a few times).  *fd_out is open for writing on LIL_OK. */
lil_status lil__os_create_temp(const struct lil_env *env, struct lil_err *err,
                               const char *path, const char *tag, char *tmp, size_t cap,
                               int *fd_out);

/* Read exactly n bytes at off; a short file gives LIL_E_IO with errno 0 and
 * *got (if not NULL) set to what was read. */
lil_status lil__os_pread_all(const struct lil_env *env, struct lil_err *err, int fd,
                             void *buf, size_t n, uint64_t off, const char *what);

/* Write exactly n bytes at off, looping over short writes.  A write that
 * makes no progress is an error (ENOSPC if errno says nothing). */
lil_status lil__os_pwrite_all(const struct lil_env *env, struct lil_err *err, int fd,
                              const void *buf, size_t n, uint64_t off,
                              const char *what);

lil_status lil__os_fdatasync(const struct lil_env *env, struct lil_err *err, int fd,
                             const char *what);
lil_status lil__os_ftruncate(const struct lil_env *env, struct lil_err *err, int fd,
                             uint64_t len, const char *what);
lil_status lil__os_fstat_size(const struct lil_env *env, struct lil_err *err, int fd,
                              uint64_t *size_out, const char *what);

/* fsync the directory dir (after a create, rename, link or unlink in it). */
lil_status lil__os_fsync_dir(const struct lil_env *env, struct lil_err *err,
                             const char *dir);

/* fsync the directory that holds path (path's own name in it). */
lil_status lil__os_fsync_parent(const struct lil_env *env, struct lil_err *err,
                                const char *path);

/* mkdir -p of one level: create dir (0700) unless it exists as a directory.
 * With sync_parent, its name is then made durable (fsync of its parent),
 * whoever created it: a creator may have died before doing so. */
lil_status lil__os_mkdir(const struct lil_env *env, struct lil_err *err,
                         const char *dir, bool sync_parent);

/* Publish data at path atomically and durably: write a temporary file in the
 * same directory (lil__os_create_temp), fsync it, rename it over path (a
 * link at path is replaced, never followed), fsync the directory. */
lil_status lil__os_publish(const struct lil_env *env, struct lil_err *err,
                           const char *dir, const char *path, const void *data,
                           size_t len);

/* The whole file at path into *out (lil_free; NULL out: only tell whether
 * it exists).  LIL_E_NOTFOUND when it does not exist; opened as
 * lil__os_open_regular opens (a link or a FIFO there is an error). */
lil_status lil__os_read_file(const struct lil_env *env, struct lil_err *err,
                             const char *path, lil_bytes *out);

/* Publish data at path only if nothing is there yet, atomically and
 * durably: a temporary file, fsync'd, hard-linked to path (link(2) never
 * replaces a file), then removed; the directory fsync'd.  *existed is true
 * (and LIL_OK returned, nothing changed) when path already existed. */
lil_status lil__os_publish_new(const struct lil_env *env, struct lil_err *err,
                               const char *dir, const char *path, const void *data,
                               size_t len, bool *existed);

/* Open-file-description locks: they belong to the open file, not to the
 * process, and die with the last descriptor (so with the process).
 * try_lock: LIL_E_LOCKED if another description holds a conflicting lock.
 * wait_lock: blocks until it is free. */
lil_status lil__os_lock_try(const struct lil_env *env, struct lil_err *err, int fd,
                            const char *what);
lil_status lil__os_lock_wait(const struct lil_env *env, struct lil_err *err, int fd,
                             const char *what);

/* The contents of the file open at fd, for reading.  shared: a read-only
 * shared mapping (only for a file this process has locked, since another
 * process that truncates a mapped file makes reads past its new end fault);
 * otherwise a private copy read with pread.  *data is NULL for an empty
 * file.  Release with lil__os_unload and the same shared flag. */
lil_status lil__os_load(const struct lil_env *env, struct lil_err *err, int fd,
                        const char *path, bool shared, uint8_t **data, uint64_t *len);
void lil__os_unload(const struct lil_env *env, uint8_t *data, uint64_t len,
                    bool shared);

/* true when another open file description holds the lock of fd's file. */
bool lil__os_lock_held(const struct lil_env *env, int fd);

/* This process's pid, read again after every fork() (self.c): a load, not
 * a system call (the API checks it on every call on a run). */
extern int lil__os_pid; /* 0 until first asked for */
int lil__os_self_pid_init(void);

static inline int lil__os_self_pid(void)
{
    int pid = __atomic_load_n(&lil__os_pid, __ATOMIC_RELAXED);

    return pid ? pid : lil__os_self_pid_init();
}

/* When process pid started (clock ticks since boot, /proc/PID/stat), so
 * that a pid reused by another process is told apart; *gone is set for a
 * process that has died and is not reaped yet.  0, or -1 when there is no
 * such process (or /proc cannot tell). */
int lil__os_proc_start(const struct lil_env *env, int pid, uint64_t *start, bool *gone);

/* Whether process pid holds a descriptor of the file open at fd: 1 yes,
 * 0 no (or pid is gone), -1 cannot tell (no /proc, another user's process). */
int lil__os_pid_has_open(const struct lil_env *env, int pid, int fd);

#endif
