/*
 * curl_dl.h -- the few libcurl functions the http effect calls
 * (effect_http.h), reached through libcurl.so.4 loaded with dlopen on the
 * first request.
 *
 * Why: every process pays for each shared library it starts with, and
 * libcurl.so.4 brings a dozen more (TLS, HTTP/2, IDN, SSH, LDAP, Kerberos,
 * ...), each loaded, relocated and initialized at start-up.  Most processes
 * that use lil never make an HTTP request (a resumed run replays its http
 * effects from the journal), so liblil.so has no libcurl in its DT_NEEDED
 * (the CTest liblil_needs_no_libcurl checks it) and the first request of a
 * process loads it here, once (base/dl/dl.h), RTLD_NOW | RTLD_LOCAL, tries
 * the sonames of LIL_LIBCURL_SONAMES in turn, and never unloads it.
 * curl_global_init runs once, inside the same one-time load (libcurl 7.84 and
 * later make it thread-safe and reference-counted, so a host that uses
 * libcurl itself is not disturbed).  A host that links libcurl gets that
 * same copy back from dlopen.
 *
 * The curl headers are used for types and constants only (compiled with
 * CURL_NO_OLDIES; nothing here links against libcurl).  The pointers are
 * typed from curl's own declarations (__typeof__), so a changed prototype
 * is a compile error, not a bad call.  libcurl 7.85 or later is needed
 * (CURLOPT_PROTOCOLS_STR; the thread-safe curl_global_init and
 * curl_easy_nextheader are 7.84): the load checks the version the library
 * reports.
 *
 * libcurl allocates with its own allocator (malloc), not the env's: the
 * memory it holds per request is bounded by the request's options
 * (effect_http.h says how).
 *
 * Threads: lil__curl_dl_load may be called from any thread at any time;
 * the table it returns is immutable and lives as long as the process.
 */
#ifndef LIL_LOOP_CURL_DL_H
#define LIL_LOOP_CURL_DL_H

#define CURL_NO_OLDIES
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

#include "base/err.h"

/* The sonames tried in turn: the OpenSSL build of libcurl, then the GnuTLS
 * one (same ABI); a build may name others (-DLIL_LIBCURL_SONAMES=...). */
#ifndef LIL_LIBCURL_SONAMES
#define LIL_LIBCURL_SONAMES "libcurl.so.4", "libcurl-gnutls.so.4"
#endif

/* The oldest libcurl accepted (curl_version_info's version_num). */
#define LIL_LIBCURL_MIN_VERSION 0x075500 /* 7.85.0 */

struct lil_curl {
    __typeof__(curl_easy_init) *easy_init;
    __typeof__(curl_easy_cleanup) *easy_cleanup;
    __typeof__(curl_easy_reset) *easy_reset;
    __typeof__(curl_easy_setopt) *easy_setopt;
    __typeof__(curl_easy_perform) *easy_perform;
    __typeof__(curl_easy_getinfo) *easy_getinfo;
    __typeof__(curl_easy_strerror) *easy_strerror;
    __typeof__(curl_easy_nextheader) *easy_nextheader;
    __typeof__(curl_slist_append) *slist_append;
    __typeof__(curl_slist_free_all) *slist_free_all;
};

/* The table, libcurl being loaded (and curl_global_init called) by the
 * first call in the process.  If it cannot be loaded, lacks a function, is
 * older than LIL_LIBCURL_MIN_VERSION or fails to initialize, every call
 * fails the same way: LIL_E_IO, with a message naming libcurl.so.4 and
 * the reason (dlerror()'s text, the missing function, ...). */
lil_status lil__curl_dl_load(struct lil_err *err, const struct lil_curl **out);

#endif
