/*
 * fuzz_common.c -- the guarded allocator and the status check shared by
 * the journal fuzz targets (fuzz_common.h).
 */
#define _GNU_SOURCE
#include "fuzz_common.h"

#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *guard_malloc(void *ud, size_t n)
{
    (void)ud;
    if (n > FUZZ_ALLOC_LIMIT)
        fuzz_fail("huge allocation: malloc(%zu)", n);
    return malloc(n);
}

static void *guard_realloc(void *ud, void *p, size_t n)
{
    (void)ud;
    if (n > FUZZ_ALLOC_LIMIT)
        fuzz_fail("huge allocation: realloc(%zu)", n);
    return realloc(p, n);
}

static void guard_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}

lil_env *fuzz_env(void)
{
    static lil_env *env;
    if (!env) {
        if (lil_env_new(&env) != LIL_OK ||
            lil_env_set_allocator(env, guard_malloc, guard_realloc, guard_free, NULL) !=
                LIL_OK)
            fuzz_fail("cannot create the env");
    }
    return env;
}

static char temp_dir[4096];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_temp_dir(void)
{
    if (temp_dir[0])
        nftw(temp_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_temp_dir(const char *prefix)
{
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");

    if (temp_dir[0])
        fuzz_fail("fuzz_temp_dir: one directory per process");
    snprintf(temp_dir, sizeof(temp_dir), "%s/%s.XXXXXX", base && *base ? base : "/tmp",
             prefix);
    if (!mkdtemp(temp_dir))
        fuzz_fail("mkdtemp %s failed", temp_dir);
    atexit(remove_temp_dir);
    return temp_dir;
}

void fuzz_check_status(const char *where, lil_status s)
{
    switch (s) {
    case LIL_OK:
    case LIL_E_CORRUPT:
    case LIL_E_VERSION:
    case LIL_E_KEY:
    case LIL_E_TOOBIG:
        return;
    default:
        fuzz_fail("%s: unexpected status %s (%s)", where, lil_status_name(s),
                  lil_strerror(s));
    }
}

void fuzz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FUZZ FAILURE: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}
