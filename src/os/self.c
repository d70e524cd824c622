/*
 * self.c -- this process: its pid as this library last saw it (to tell a
 * forked child from the process that opened a run), and whether a given
 * process holds a given file open (to name a lock's holder honestly).
 *
 * The pid is read once and kept, and a fork handler (pthread_atfork) reads
 * it again in every child that fork() makes, so comparing it costs a load,
 * not a system call (getpid is not cached by glibc; replaying a step costs
 * less than two getpid calls).  This is the one piece of mutable
 * process-wide state in the library: the process's identity is
 * process-wide by nature.  A child made by a raw clone system call runs no
 * fork handler and is not told apart.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os/os.h"

static pthread_once_t pid_once = PTHREAD_ONCE_INIT;
int lil__os_pid;

static void note_pid(void)
{
    __atomic_store_n(&lil__os_pid, (int)getpid(), __ATOMIC_RELAXED);
}

static void pid_init(void)
{
    note_pid();
    pthread_atfork(NULL, NULL, note_pid);
}

int lil__os_self_pid_init(void)
{
    pthread_once(&pid_once, pid_init);
    return __atomic_load_n(&lil__os_pid, __ATOMIC_RELAXED);
}

/* Does /proc/pid/fd hold a descriptor of the file (dev, ino)? */
static int fd_dir_has(int pid, dev_t dev, ino_t ino)
{
    char dir[64], path[64 + 256];
    struct dirent *e;
    DIR *d;
    int found = 0;

    snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
    d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    while (!found &&
           (e = readdir(d)) != NULL) { /* NOLINT(concurrency-mt-unsafe): own DIR */
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        found = stat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
    }
    closedir(d);
    return found;
}

int lil__os_pid_has_open(const struct lil_env *env, int pid, int fd)
{
    struct stat st;

    if (pid <= 0 || env->os->fstat(fd, &st) != 0)
        return -1;
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return 0;
    return fd_dir_has(pid, st.st_dev, st.st_ino);
}

/* /proc/PID/stat: "pid (comm) state ppid ... starttime" -- comm may hold
 * spaces and parentheses, so the fields are counted from its last ')';
 * starttime is field 22. */
int lil__os_proc_start(const struct lil_env *env, int pid, uint64_t *start, bool *gone)
{
    char path[64], buf[1024];
    const char *p;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    fd = env->os->open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    n = env->os->read(fd, buf, sizeof(buf) - 1);
    env->os->close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || !p[2])
        return -1;
    *gone = p[2] == 'Z' || p[2] == 'X'; /* dead, not reaped yet */
    p += 2;
    for (int field = 3; field < 22 && p; field++) {
        p = strchr(p, ' ');
        p = p ? p + 1 : NULL;
    }
    if (!p)
        return -1;
    *start = strtoull(p, NULL, 10);
    return 0;
}
