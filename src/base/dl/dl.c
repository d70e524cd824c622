/*
 * dl.c -- an optional shared library loaded on first use (dl.h).
 *
 * The result (the table, or the reason) is written once, under the mutex,
 * and published by the release store of done; readers that see done with
 * an acquire load read it without the lock.
 */
#include "base/dl/dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* dlsym gives a void *; a POSIX system stores function pointers in the same
 * bits, which is what copying them into the table relies on. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "function pointers and void * differ in size");

static void note_dlerror(char *why, size_t cap)
{
    const char *e = dlerror(); /* NOLINT(concurrency-mt-unsafe): under the mutex */

    snprintf(why, cap, "%s", e ? e : "unknown error");
}

bool lil__dl_fn(void *lib, const char *name, void *fn, char *why, size_t cap)
{
    void *p = dlsym(lib, name);

    if (!p) {
        note_dlerror(why, cap);
        return false;
    }
    memcpy(fn, &p, sizeof(p));
    return true;
}

/* dlopen the first soname that loads; NULL with why set if none. */
static void *open_library(struct lil_dl *dl)
{
    for (size_t i = 0; i < dl->n_sonames; i++) {
        void *lib = dlopen(dl->sonames[i], RTLD_NOW | RTLD_LOCAL);

        if (lib)
            return lib;
        if (i == 0)
            note_dlerror(dl->why, sizeof(dl->why)); /* the first one's reason */
    }
    return NULL;
}

static bool resolve(struct lil_dl *dl, void *lib)
{
    for (size_t i = 0; i < dl->n_fns; i++)
        if (!lil__dl_fn(lib, dl->fns[i].name, (char *)dl->table + dl->fns[i].offset,
                        dl->why, sizeof(dl->why)))
            return false;
    return true;
}

static void load(struct lil_dl *dl)
{
    void *lib = open_library(dl);

    if (!lib)
        return;
    if (!resolve(dl, lib) ||
        (dl->accept && !dl->accept(lib, dl->why, sizeof(dl->why)))) {
        memset(dl->table, 0, dl->table_size);
        dlclose(lib);
        return;
    }
    dl->loaded = true; /* lib stays loaded for the life of the process */
}

bool lil__dl_load(struct lil_dl *dl)
{
    if (__atomic_load_n(&dl->done, __ATOMIC_ACQUIRE))
        return dl->loaded;
    pthread_mutex_lock(&dl->mu);
    if (!dl->done) {
        load(dl);
        if (!dl->loaded && !dl->why[0])
            snprintf(dl->why, sizeof(dl->why), "unknown error");
        __atomic_store_n(&dl->done, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&dl->mu);
    return dl->loaded;
}
