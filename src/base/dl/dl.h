/*
 * dl.h -- an optional shared library loaded on first use: dlopen of the
 * first soname that loads, its functions resolved into a table, checks of
 * the caller's (version, initialization), once per process.
 *
 * Why: every process pays for each shared library it starts with (loaded,
 * relocated, initialized), and most processes that use lil never need
 * libcurl (http effects) or libpq (PostgreSQL stores).  liblil.so has
 * neither in its DT_NEEDED (the CTest liblil_needs_no_lib* checks it); each
 * user keeps only its table and calls lil__dl_load before its first use:
 *   effects/curl_dl.c, store/pg/pq_dl.c.
 *
 * What lil__dl_load promises:
 *   - the sonames are tried in turn, RTLD_NOW | RTLD_LOCAL; when none
 *     loads, the first one's dlerror() is the reason kept;
 *   - every function of the list is resolved (dlsym) into the table at its
 *     offset, or the load fails naming dlerror()'s reason;
 *   - then the caller's accept hook, if any, runs on the library (a version
 *     check, a global init); false fails the load with the reason it wrote;
 *   - a failed load closes the library; a successful one never unloads it
 *     (a host that links the library itself gets that same copy back);
 *   - the first call in the process loads, under a mutex; every later call,
 *     from any thread, returns what it found without locking.
 *
 * The table's fields are function pointers typed from the library's own
 * declarations (__typeof__) by the user, so a changed prototype is a
 * compile error, not a bad call.
 */
#ifndef LIL_BASE_DL_H
#define LIL_BASE_DL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define LIL_DL_WHY_MAX 200

/* A function to resolve and where its pointer goes in the table. */
struct lil_dl_fn {
    const char *name;
    size_t offset;
};

struct lil_dl {
    /* given by the user (LIL_DL_INIT) */
    const char *const *sonames;
    size_t n_sonames;
    const struct lil_dl_fn *fns;
    size_t n_fns;
    void *table; /* filled on success; all zero otherwise */
    size_t table_size;
    bool (*accept)(void *lib, char *why, size_t cap); /* NULL: no more checks */
    /* the loader's state */
    pthread_mutex_t mu;
    int done; /* set (release) once the load was tried */
    bool loaded;
    char why[LIL_DL_WHY_MAX]; /* the reason, when !loaded */
};

#define LIL_DL_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define LIL_DL_INIT(sonames_, fns_, table_, accept_)                                   \
    {                                                                                  \
        .sonames = (sonames_), .n_sonames = LIL_DL_COUNT(sonames_), .fns = (fns_),     \
        .n_fns = LIL_DL_COUNT(fns_), .table = &(table_), .table_size = sizeof(table_), \
        .accept = (accept_), .mu = PTHREAD_MUTEX_INITIALIZER                           \
    }

/* Load dl's library once per process (above).  true when it is loaded and
 * its table filled; otherwise dl->why says why (never empty). */
bool lil__dl_load(struct lil_dl *dl);

/* For an accept hook: the function name of lib into *fn (the bits of a
 * function pointer).  false, with dlerror()'s reason in why, if missing. */
bool lil__dl_fn(void *lib, const char *name, void *fn, char *why, size_t cap);

#endif
