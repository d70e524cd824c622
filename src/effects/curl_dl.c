/*
 * curl_dl.c -- load libcurl on first use, check its version, initialize
 * it and resolve the functions the http effect calls (why: curl_dl.h).
 *
 * The table, its functions and the checks only; base/dl/dl.h loads the
 * library, once.
 */
#include "effects/curl_dl.h"

#include <stddef.h>
#include <stdio.h>

#include "base/dl/dl.h"

#define AT(field) offsetof(struct lil_curl, field)

static const struct lil_dl_fn fns[] = {
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

/* The version check and curl_global_init, through two more symbols. */
static bool initialize(void *lib, char *why, size_t cap)
{
    __typeof__(curl_version_info) *version_info = NULL;
    __typeof__(curl_global_init) *global_init = NULL;
    const curl_version_info_data *v;
    CURLcode rc;

    if (!lil__dl_fn(lib, "curl_version_info", &version_info, why, cap) ||
        !lil__dl_fn(lib, "curl_global_init", &global_init, why, cap))
        return false;
    v = version_info(CURLVERSION_NOW);
    if (!v || v->version_num < LIL_LIBCURL_MIN_VERSION) {
        snprintf(why, cap, "version %s is older than 7.85.0",
                 v && v->version ? v->version : "(unknown)");
        return false;
    }
    rc = global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
        snprintf(why, cap, "curl_global_init failed (code %d)", (int)rc);
        return false;
    }
    return true;
}

static struct lil_curl table;
static struct lil_dl dl = LIL_DL_INIT(sonames, fns, table, initialize);

lil_status lil__curl_dl_load(struct lil_err *err, const struct lil_curl **out)
{
    *out = NULL;
    if (!lil__dl_load(&dl))
        return lil__seterr(err, LIL_E_IO, 0,
                           "cannot load %s (libcurl), needed for http effects: %s",
                           sonames[0], dl.why);
    *out = &table;
    return LIL_OK;
}
