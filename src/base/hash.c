/*
 * hash.c -- SHA-256 and HMAC-SHA-256 over OpenSSL's SHA-256 block
 * functions, CRC-32 through Intel ISA-L (crc32_gzip_refl: the CRC-32 of
 * zlib and gzip, bit for bit, computed with carry-less multiplication at
 * tens of GB/s, against about 1.4 GB/s for zlib's crc32 on the same
 * machine).
 *
 * Plain SHA-256 (unkeyed journals, request hashes, marker keys) uses
 * SHA256_Init/Update/Final, not EVP (they are deprecated since OpenSSL 3.0,
 * not removed; 3.x keeps them):
 *   - EVP's first use initializes OpenSSL for the whole process: it reads
 *     openssl.cnf, activates the default provider and builds its method
 *     tables.  That cost 2 ms of CPU per process on the development
 *     machine, the largest single part of a resume (docs/performance.md),
 *     and it changes process-global OpenSSL state behind the host's back.
 *     The low-level functions need no initialization and touch no global
 *     state, so a program with unkeyed journals never initializes OpenSSL.
 *   - They run the same code as the default provider's SHA-256 (with the
 *     CPU's SHA extensions when present): the same bytes, the same speed
 *     per record.
 *   - What is given up: a provider configuration (a FIPS-only policy, say)
 *     does not apply to these hashes.  The chain is an integrity check of
 *     lil's own file, not a service offered to the host.
 * In liblil.so these SHA-256 functions come from OpenSSL's static
 * libcrypto.a, so a process does not load libcrypto.so.3 (and apply its
 * relocations) at start-up; liblil.a calls libcrypto.so.3's own.
 *
 * HMAC-SHA-256 (keyed journals, LIL_JOURNAL_KEY) is OpenSSL's own, through
 * EVP_MAC (and HMAC() for the one-shot), whose functions are reached
 * through libcrypto.so.3 loaded with dlopen on the first keyed use
 * (crypto_dl.h); if it cannot be loaded, keyed journals cannot be opened
 * and the error names it.  A struct lil_mac keeps its context for its
 * whole life and re-initializes it per record with the same key
 * (EVP_MAC_init with a NULL key), so hashing a record allocates nothing.
 * Keyed journals pay the load and OpenSSL's initialization once per
 * process.
 */
#define OPENSSL_SUPPRESS_DEPRECATED /* SHA256_Init & co.: see above */

#include "base/hash.h"

#include <isa-l/crc.h>
#include <stdbool.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "base/alloc.h"
#include "base/dl/crypto_dl.h"
#include "base/env.h"

#ifdef OPENSSL_NO_DEPRECATED_3_0
#error "lil needs SHA256_Init/Update/Final (this OpenSSL was built no-deprecated)"
#endif

struct lil_mac {
    SHA256_CTX ctx;             /* plain */
    const struct lil_crypto *c; /* keyed: libcrypto.so.3's functions */
    EVP_MAC *mac;               /* keyed */
    EVP_MAC_CTX *mac_ctx;       /* keyed: NULL for plain */
};

uint32_t lil__crc32(uint32_t crc, const void *data, size_t len)
{
    return crc32_gzip_refl(crc, data, (uint64_t)len);
}

void lil__sha256(const void *data, size_t len, uint8_t out[LIL_SHA256_LEN])
{
    SHA256_CTX c;

    /* not SHA256(): in OpenSSL 3 it goes through EVP and its initialization */
    SHA256_Init(&c);
    SHA256_Update(&c, data, len);
    SHA256_Final(out, &c);
}

void lil__hmac_sha256_small(const uint8_t *key, size_t key_len, const void *data,
                            size_t len, uint8_t out[LIL_SHA256_LEN])
{
    uint8_t pad[64], inner[LIL_SHA256_LEN];
    SHA256_CTX c;

    for (int round = 0; round < 2; round++) {
        memset(pad, round == 0 ? 0x36 : 0x5c, sizeof(pad));
        for (size_t i = 0; i < key_len && i < sizeof(pad); i++)
            pad[i] ^= key[i];
        SHA256_Init(&c);
        SHA256_Update(&c, pad, sizeof(pad));
        if (round == 0)
            SHA256_Update(&c, data, len);
        else
            SHA256_Update(&c, inner, sizeof(inner));
        SHA256_Final(round == 0 ? inner : out, &c);
    }
    explicit_bzero(pad, sizeof(pad));
    explicit_bzero(&c, sizeof(c));
}

void lil__hex(const uint8_t *bytes, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * len] = '\0';
}

static lil_status mac_init_keyed(struct lil_mac *m, struct lil_err *err,
                                 const uint8_t *key, size_t key_len)
{
    char digest[] = "SHA256";
    OSSL_PARAM params[2];
    lil_status rc = lil__crypto_dl_load(err, &m->c);

    if (rc != LIL_OK)
        return rc;
    m->mac = m->c->mac_fetch(NULL, "HMAC", NULL);
    if (m->mac)
        m->mac_ctx = m->c->mac_ctx_new(m->mac);
    if (!m->mac_ctx)
        return lil__seterr(err, LIL_E_NOMEM, 0,
                           "out of memory (OpenSSL HMAC-SHA-256 context)");
    params[0] = m->c->param_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0);
    params[1] = m->c->param_end();
    if (m->c->mac_init(m->mac_ctx, key, key_len, params) != 1)
        return lil__seterr(err, LIL_E_NOMEM, 0,
                           "out of memory (OpenSSL HMAC-SHA-256 key setup)");
    return LIL_OK;
}

lil_status lil__mac_new(const struct lil_env *env, struct lil_err *err,
                        const uint8_t *key, size_t key_len, struct lil_mac **out)
{
    struct lil_mac *m = lil__calloc(env, 1, sizeof(*m));
    lil_status rc;

    *out = NULL;
    if (!m)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (key) {
        rc = mac_init_keyed(m, err, key, key_len);
        if (rc != LIL_OK) {
            lil__mac_free(env, m);
            return rc;
        }
    }
    *out = m;
    return LIL_OK;
}

void lil__mac_free(const struct lil_env *env, struct lil_mac *m)
{
    if (!m)
        return;
    if (m->c) {
        m->c->mac_ctx_free(m->mac_ctx); /* wipes the key */
        m->c->mac_free(m->mac);
    }
    OPENSSL_cleanse(m, sizeof(*m));
    lil__free(env, m);
}

int lil__mac_keyed(const struct lil_mac *m)
{
    return m->mac_ctx != NULL;
}

lil_status lil__mac_begin(struct lil_mac *m)
{
    if (m->mac_ctx)
        return m->c->mac_init(m->mac_ctx, NULL, 0, NULL) == 1 ? LIL_OK : LIL_E_NOMEM;
    SHA256_Init(&m->ctx);
    return LIL_OK;
}

lil_status lil__mac_update(struct lil_mac *m, const void *data, size_t len)
{
    if (m->mac_ctx)
        return m->c->mac_update(m->mac_ctx, data, len) == 1 ? LIL_OK : LIL_E_NOMEM;
    SHA256_Update(&m->ctx, data, len);
    return LIL_OK;
}

lil_status lil__mac_end(struct lil_mac *m, uint8_t out[LIL_SHA256_LEN])
{
    size_t n = 0;

    if (m->mac_ctx)
        return m->c->mac_final(m->mac_ctx, out, &n, LIL_SHA256_LEN) == 1 ? LIL_OK
                                                                         : LIL_E_NOMEM;
    SHA256_Final(out, &m->ctx);
    return LIL_OK;
}

lil_status lil__mac2(struct lil_mac *m, const void *a, size_t alen, const void *b,
                     size_t blen, uint8_t out[LIL_SHA256_LEN])
{
    lil_status rc = lil__mac_begin(m);

    if (rc == LIL_OK)
        rc = lil__mac_update(m, a, alen);
    if (rc == LIL_OK && b)
        rc = lil__mac_update(m, b, blen);
    if (rc == LIL_OK)
        rc = lil__mac_end(m, out);
    return rc;
}

lil_status lil__hmac_sha256(struct lil_err *err, const uint8_t *key, size_t key_len,
                            const void *data, size_t len, uint8_t out[LIL_SHA256_LEN])
{
    static const uint8_t no_key[1];
    const struct lil_crypto *c;
    unsigned int n = 0;
    lil_status rc = lil__crypto_dl_load(err, &c);

    if (rc != LIL_OK)
        return rc;
    if (!c->hmac(c->sha256(), key_len ? key : no_key, (int)key_len, data, len, out, &n))
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory (OpenSSL HMAC-SHA-256)");
    return LIL_OK;
}
