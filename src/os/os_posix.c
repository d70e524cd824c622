/*
 * os_posix.c -- the default system-call table (libc, nothing added) and its
 * installation in an env.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "os/os.h"

static int posix_open(const char *path, int flags, mode_t mode)
{
    return open(path, flags, mode);
}

static int posix_openat(int dirfd, const char *path, int flags, mode_t mode)
{
    return openat(dirfd, path, flags, mode);
}

static int posix_fcntl_lock(int fd, int cmd, struct flock *fl)
{
    return fcntl(fd, cmd, fl);
}

static int posix_fcntl_int(int fd, int cmd, int arg)
{
    return fcntl(fd, cmd, arg);
}

/* glibc has no wrapper before 2.36; the system call is the same. */
static int posix_pidfd_open(pid_t pid, unsigned flags)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, flags);
#else
    (void)pid;
    (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}

const struct lil_os lil__os_posix = {
    .open = posix_open,
    .close = close,
    .read = read,
    .pread = pread,
    .pwrite = pwrite,
    .fdatasync = fdatasync,
    .fsync = fsync,
    .ftruncate = ftruncate,
    .fallocate = fallocate,
    .fstat = fstat,
    .rename = rename,
    .link = link,
    .unlink = unlink,
    .mkdir = mkdir,
    .fcntl_lock = posix_fcntl_lock,
    .mmap = mmap,
    .munmap = munmap,
    .pipe2 = pipe2,
    .fcntl_int = posix_fcntl_int,
    .write = write,
    .spawn = posix_spawnp,
    .pidfd_open = posix_pidfd_open,
    .poll = poll,
    .waitid = waitid,
    .kill = kill,
    .fork = fork,
    .openat = posix_openat,
    .fstatat = fstatat,
    .rmdir = rmdir,
};

void lil__os_env_init(struct lil_env *env)
{
    lil__env_init(env);
    env->os = &lil__os_posix;
}

void lil__env_set_os(struct lil_env *env, const struct lil_os *os)
{
    env->os = os ? os : &lil__os_posix;
}
