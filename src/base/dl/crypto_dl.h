/*
 * crypto_dl.h -- OpenSSL's HMAC-SHA-256 functions (EVP_MAC, HMAC), reached
 * through libcrypto.so.3 loaded with dlopen on the first keyed use.
 *
 * Why: every process pays for each shared library it starts with.
 * libcrypto.so.3 has about 17,000 relative relocations of its own, and the
 * dynamic linker applies them all at start-up, copy-on-write-faulting
 * about 120 pages, whether or not the process ever hashes anything.  lil
 * needs from OpenSSL only SHA-256 (plain journals, every process) and
 * HMAC-SHA-256 (keyed journals: LIL_JOURNAL_KEY, few processes).  So:
 *   - liblil.so links the SHA-256 functions from OpenSSL's static
 *     libcrypto.a (a few objects, hidden with --exclude-libs; src/
 *     CMakeLists.txt) and has no libcrypto.so.3 in its DT_NEEDED;
 *   - the keyed path, whose first use initializes all of OpenSSL anyway
 *     (hash.c), loads the system's libcrypto.so.3 here, once per process
 *     (base/dl/dl.h), RTLD_NOW | RTLD_LOCAL, and never unloads it.  A host
 *     that links libcrypto.so.3 itself gets that same copy back from
 *     dlopen, so there is still one OpenSSL state per process.  EVP is not
 *     linked statically: it would pull in most of libcrypto, its providers
 *     and a second copy of OpenSSL's global state beside the host's.
 * The static liblil.a links libcrypto.so.3 as before; its keyed path goes
 * through this table too (dlopen then returns the library already loaded).
 *
 * The pointers are typed from OpenSSL's own declarations (__typeof__), so a
 * changed prototype is a compile error, not a bad call.
 *
 * Threads: lil__crypto_dl_load may be called from any thread at any time;
 * the table it returns is immutable and lives as long as the process.
 */
#ifndef LIL_BASE_CRYPTO_DL_H
#define LIL_BASE_CRYPTO_DL_H

#include <openssl/core.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/opensslv.h>
#include <openssl/params.h>

#include "base/err.h"

#define LIL_CRYPTO_STR(x)  #x
#define LIL_CRYPTO_XSTR(x) LIL_CRYPTO_STR(x)
/* "libcrypto.so.3": the soname of the OpenSSL whose headers lil is built with */
#define LIL_LIBCRYPTO_SONAME "libcrypto.so." LIL_CRYPTO_XSTR(OPENSSL_SHLIB_VERSION)

struct lil_crypto {
    __typeof__(EVP_MAC_fetch) *mac_fetch;
    __typeof__(EVP_MAC_free) *mac_free;
    __typeof__(EVP_MAC_CTX_new) *mac_ctx_new;
    __typeof__(EVP_MAC_CTX_free) *mac_ctx_free;
    __typeof__(EVP_MAC_init) *mac_init;
    __typeof__(EVP_MAC_update) *mac_update;
    __typeof__(EVP_MAC_final) *mac_final;
    __typeof__(OSSL_PARAM_construct_utf8_string) *param_utf8_string;
    __typeof__(OSSL_PARAM_construct_end) *param_end;
    __typeof__(HMAC) *hmac;
    __typeof__(EVP_sha256) *sha256;
};

/* The table, libcrypto.so.3 being loaded by the first call in the process.
 * If it cannot be loaded (or lacks a function), every call fails the same
 * way: LIL_E_IO, with a message naming libcrypto.so.3 and dlerror()'s. */
lil_status lil__crypto_dl_load(struct lil_err *err, const struct lil_crypto **out);

#endif
