/*
 * crypto_dl.c -- load libcrypto.so.3 on first use and resolve the
 * HMAC-SHA-256 functions lil calls (why: crypto_dl.h).
 *
 * The table and its functions only; base/dl/dl.h loads the library, once.
 */
#define OPENSSL_SUPPRESS_DEPRECATED /* HMAC(): see hash.c */

#include "base/dl/crypto_dl.h"

#include <stddef.h>

#include "base/dl/dl.h"

#define AT(field) offsetof(struct lil_crypto, field)

static const struct lil_dl_fn fns[] = {
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

static const char *const sonames[] = {LIL_LIBCRYPTO_SONAME};
static struct lil_crypto table;
static struct lil_dl dl = LIL_DL_INIT(sonames, fns, table, NULL);

lil_status lil__crypto_dl_load(struct lil_err *err, const struct lil_crypto **out)
{
    *out = NULL;
    if (!lil__dl_load(&dl))
        return lil__seterr(err, LIL_E_IO, 0,
                           "cannot load " LIL_LIBCRYPTO_SONAME
                           " (OpenSSL), needed for keyed journals "
                           "(LIL_JOURNAL_KEY): %s",
                           dl.why);
    *out = &table;
    return LIL_OK;
}
