/*
 * tmpfile.c -- the temporary files of the verbs that write a file whole
 * (`lil new`, `lil export --out`): created beside their final name under a
 * name nobody can guess, with O_CREAT | O_EXCL | O_NOFOLLOW, so that a
 * file or a symbolic link planted there is never opened, let alone
 * truncated or written through.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* 16 hex digits from the kernel's random source (the clock and the pid
 * should it fail: O_EXCL still holds). */
static void random_hex(char out[17])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char b[8];
    ssize_t r;

    do
        r = getrandom(b, sizeof(b), GRND_NONBLOCK);
    while (r < 0 && errno == EINTR);
    if (r != (ssize_t)sizeof(b)) {
        struct timespec ts;
        uint64_t v;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        v = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
            ((uint64_t)getpid() << 44);
        for (size_t i = 0; i < sizeof(b); i++)
            b[i] = (unsigned char)(v >> (8 * i));
    }
    for (size_t i = 0; i < sizeof(b); i++) {
        out[2 * i] = hex[b[i] >> 4];
        out[2 * i + 1] = hex[b[i] & 15];
    }
    out[16] = '\0';
}

int cli_create_temp(const char *prefix, mode_t mode, char *tmp, size_t cap)
{
    char r[17];
    int fd = -1, n;

    for (int tries = 0; tries < 8 && fd < 0; tries++) {
        random_hex(r);
        n = snprintf(tmp, cap, "%s.%s.tmp", prefix, r);
        if (n < 0 || (size_t)n >= cap) {
            errno = ENAMETOOLONG;
            return -1;
        }
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    return fd;
}
