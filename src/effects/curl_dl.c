/*
 * curl_dl.c -- load libcurl on first use, check its version, initialize
 * it and resolve the functions the http effect calls (why: curl_dl.h).
 *
 * The loader runs once per process under pthread_once and keeps its result
 * (the table, or the reason it failed) in file-level state that is written
 * only there and read-only afterwards.
 */
#include "effects/curl_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* dlsym gives a void *; a POSIX system stores function pointers in the same
 * bits, which is what copying them into the table relies on. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "function pointers and void * differ in size");

#define AT(field) offsetof(struct lil_curl, field)

static const struct {
    const char *name;
    size_t offset;
} syms[] = {
    {"curl_easy_init", AT(easy_init)},
    {"curl_easy_cleanup", AT(easy_cleanup)},
    {"curl_easy_reset", AT(easy_reset)},
    {"curl_easy_setopt", AT(easy_setopt)},
    {"curl_easy_perform", AT(easy_perform)},
    {"curl_easy_getinfo", AT(easy_getinfo)},
    {"curl_easy_strerror", AT(easy_strerror)},
    {"curl_easy_nextheader", AT(easy_nextheader)},
    {"curl_slist_append", AT(slist_append)},
    {"curl_slist_free_all", AT(slist_free_all)},
};

static const char *const sonames[] = {LIL_LIBCURL_SONAMES};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static struct lil_curl table;
static bool loaded;
static char load_error[200]; /* why, when !loaded */

static void note_dlerror(void)
{
    const char *why = dlerror(); /* NOLINT(concurrency-mt-unsafe): in pthread_once */

    snprintf(load_error, sizeof(load_error), "%s", why ? why : "unknown error");
}

/* dlopen the first soname that loads; NULL with load_error set if none. */
static void *open_library(void)
{
    for (size_t i = 0; i < sizeof(sonames) / sizeof(sonames[0]); i++) {
        void *lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);

        if (lib)
            return lib;
        if (i == 0)
            note_dlerror(); /* the first soname's reason is the one reported */
    }
    return NULL;
}

static bool resolve(void *lib, struct lil_curl *t)
{
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        void *fn = dlsym(lib, syms[i].name);

        if (!fn) {
            note_dlerror();
            return false;
        }
        memcpy((char *)t + syms[i].offset, &fn, sizeof(fn));
    }
    return true;
}

/* The version check and curl_global_init, through two more symbols. */
static bool initialize(void *lib)
{
    __typeof__(curl_version_info) *version_info = NULL;
    __typeof__(curl_global_init) *global_init = NULL;
    void *fn = dlsym(lib, "curl_version_info");
    const curl_version_info_data *v;
    CURLcode rc;

    if (fn)
        memcpy(&version_info, &fn, sizeof(fn));
    fn = dlsym(lib, "curl_global_init");
    if (fn)
        memcpy(&global_init, &fn, sizeof(fn));
    if (!version_info || !global_init) {
        note_dlerror();
        return false;
    }
    v = version_info(CURLVERSION_NOW);
    if (!v || v->version_num < LIL_LIBCURL_MIN_VERSION) {
        snprintf(load_error, sizeof(load_error), "version %s is older than 7.85.0",
                 v && v->version ? v->version : "(unknown)");
        return false;
    }
    rc = global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
        snprintf(load_error, sizeof(load_error), "curl_global_init failed (code %d)",
                 (int)rc);
        return false;
    }
    return true;
}

static void load(void)
{
    void *lib = open_library();
    struct lil_curl t = {0};

    if (!lib)
        return;
    if (!resolve(lib, &t) || !initialize(lib)) {
        dlclose(lib);
        return;
    }
    table = t;
    loaded = true; /* lib stays loaded for the life of the process */
}

lil_status lil__curl_dl_load(struct lil_err *err, const struct lil_curl **out)
{
    *out = NULL;
    if (pthread_once(&load_once, load) != 0 || !loaded)
        return lil__seterr(
            err, LIL_E_IO, 0, "cannot load %s (libcurl), needed for http effects: %s",
            sonames[0], load_error[0] ? load_error : "pthread_once failed");
    *out = &table;
    return LIL_OK;
}
