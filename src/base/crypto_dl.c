/*
 * crypto_dl.c -- load libcrypto.so.3 on first use and resolve the
 * HMAC-SHA-256 functions lil calls (why: crypto_dl.h).
 *
 * The loader runs once per process under pthread_once and keeps its result
 * (the table, or the reason it failed) in file-level state that is written
 * only there and read-only afterwards.
 */
#define OPENSSL_SUPPRESS_DEPRECATED /* HMAC(): see hash.c */

#include "base/crypto_dl.h"

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

#define AT(field) offsetof(struct lil_crypto, field)

static const struct {
    const char *name;
    size_t offset;
} syms[] = {
    {"EVP_MAC_fetch", AT(mac_fetch)},
    {"EVP_MAC_free", AT(mac_free)},
    {"EVP_MAC_CTX_new", AT(mac_ctx_new)},
    {"EVP_MAC_CTX_free", AT(mac_ctx_free)},
    {"EVP_MAC_init", AT(mac_init)},
    {"EVP_MAC_update", AT(mac_update)},
    {"EVP_MAC_final", AT(mac_final)},
    {"OSSL_PARAM_construct_utf8_string", AT(param_utf8_string)},
    {"OSSL_PARAM_construct_end", AT(param_end)},
    {"HMAC", AT(hmac)},
    {"EVP_sha256", AT(sha256)},
};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static struct lil_crypto table;
static bool loaded;
static char load_error[200]; /* dlerror()'s text when !loaded */

static void note_error(void)
{
    const char *why = dlerror(); /* NOLINT(concurrency-mt-unsafe): in pthread_once */

    snprintf(load_error, sizeof(load_error), "%s", why ? why : "unknown error");
}

static void load(void)
{
    void *lib = dlopen(LIL_LIBCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
    struct lil_crypto t = {0};

    if (!lib) {
        note_error();
        return;
    }
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        void *fn = dlsym(lib, syms[i].name);

        if (!fn) {
            note_error();
            dlclose(lib);
            return;
        }
        memcpy((char *)&t + syms[i].offset, &fn, sizeof(fn));
    }
    table = t;
    loaded = true; /* lib stays loaded for the life of the process */
}

lil_status lil__crypto_dl_load(struct lil_err *err, const struct lil_crypto **out)
{
    *out = NULL;
    if (pthread_once(&load_once, load) != 0 || !loaded)
        return lil__seterr(err, LIL_E_IO, 0,
                           "cannot load " LIL_LIBCRYPTO_SONAME
                           " (OpenSSL), needed for keyed journals "
                           "(LIL_JOURNAL_KEY): %s",
                           load_error[0] ? load_error : "pthread_once failed");
    *out = &table;
    return LIL_OK;
}
