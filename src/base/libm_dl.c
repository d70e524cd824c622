/*
 * libm_dl.c -- fmod from libm.so.6, loaded on first use (libm_dl.h).
 */
#include "base/libm_dl.h"

#include <dlfcn.h>
#include <gnu/lib-names.h> /* LIBM_SO: "libm.so.6" on glibc */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static lil_fmod_fn fmod_fn;
static char load_error[200];

static void note_error(void)
{
    const char *why = dlerror(); /* NOLINT(concurrency-mt-unsafe): in pthread_once */

    snprintf(load_error, sizeof(load_error), "%s", why ? why : "unknown error");
}

static void load(void)
{
    void *lib = dlopen(LIBM_SO, RTLD_NOW | RTLD_LOCAL);
    void *fn;

    if (!lib) {
        note_error();
        return;
    }
    fn = dlsym(lib, "fmod");
    if (!fn) {
        note_error();
        dlclose(lib);
        return;
    }
    memcpy(&fmod_fn, &fn, sizeof(fn)); /* lib stays loaded for the process */
}

lil_fmod_fn lil__libm_fmod(void)
{
    if (pthread_once(&load_once, load) != 0)
        return NULL;
    return fmod_fn;
}

const char *lil__libm_error(void)
{
    return load_error;
}
