/*
 * watch_child.c -- the program bench_watch.c supervises.
 *
 *     bench_watch_child FILE N
 *
 * Appends "s <ns>" (CLOCK_MONOTONIC, system-wide) to FILE as the first
 * thing main does; then, on attempts below N ($LIL_ATTEMPT, else a count of
 * its own), "d <ns>" and a SIGKILL to itself.  The time from a "d" to the
 * next "s" is the restart: the death noticed, the child reaped, the next
 * one forked and exec'd, up to its main.  Links only libc, so that its own
 * start-up is the smallest a dynamically linked program has.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void note(int fd, char what, long long ns)
{
    char line[48];
    int n = snprintf(line, sizeof(line), "%c %lld\n", what, ns);

    if (write(fd, line, (size_t)n) != n)
        _exit(2);
}

int main(int argc, char **argv)
{
    long long start = now_ns();
    const char *a = getenv("LIL_ATTEMPT");
    int fd;

    if (argc != 3)
        return 64;
    fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return 2;
    note(fd, 's', start);
    if (a && atoi(a) >= atoi(argv[2]))
        return 0;
    note(fd, 'd', now_ns());
    raise(SIGKILL);
    return 3;
}
