/*
 * hash.c -- SHA-256 and HMAC-SHA-256 over OpenSSL's SHA-256 block
 * functions, CRC-32 through Intel ISA-L (crc32_gzip_refl: the CRC-32 of
 * zlib and gzip, bit for bit, computed with carry-less multiplication at
 * tens of GB/s, against about 1.4 GB/s for zlib's crc32 on the same
 * machine).
 *
 * SHA-256 uses SHA256_Init/Update/Final, not EVP (they are deprecated since
 * OpenSSL 3.0, not removed; 3.x keeps them):
 *   - EVP's first use initializes OpenSSL for the whole process: it reads
 *     openssl.cnf, activates the default provider and builds its method
 *     tables.  That cost 2 ms of CPU per process on the development
 *     machine, the largest single part of a resume (docs/performance.md),
 *     and it changes process-global OpenSSL state behind the host's back.
 *     The low-level functions need no initialization and touch no global
 *     state, so lil never initializes OpenSSL.
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
 * HMAC-SHA-256 (RFC 2104; keyed journals, which every store has by default,
 * markers, head records, credential digests) is built on the same
 * functions: the key, padded with ipad and opad, is absorbed once into two
 * SHA-256 contexts when a struct lil_mac is made, and each record starts
 * from a copy of the inner one and ends with a copy of the outer one.  A
 * record then costs its own bytes plus one compression for the outer hash,
 * and nothing is allocated or initialized per process; OpenSSL's EVP_MAC
 * would have cost the initialization above in every process (all stores
 * are keyed) and a provider dispatch per record.  tests/unit/test_hash.c
 * checks it against RFC 4231's vectors, keys longer than a block included.
 */
#define OPENSSL_SUPPRESS_DEPRECATED /* SHA256_Init & co.: see above */

#include "base/hash.h"

#include <isa-l/crc.h>
#include <stdbool.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "base/alloc.h"
#include "base/env.h"

#ifdef OPENSSL_NO_DEPRECATED_3_0
#error "lil needs SHA256_Init/Update/Final (this OpenSSL was built no-deprecated)"
#endif

#define HMAC_BLOCK 64 /* SHA-256's block, the length of HMAC's pads */

struct lil_mac {
    SHA256_CTX ctx;   /* the record being hashed */
    SHA256_CTX inner; /* keyed: the key ^ ipad absorbed */
    SHA256_CTX outer; /* keyed: the key ^ opad absorbed */
    bool keyed;
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

/* The inner and outer contexts of HMAC-SHA-256 under key: each has absorbed
 * one block, the key (hashed first when longer than a block) XOR ipad or
 * opad. */
static void hmac_pads(const uint8_t *key, size_t key_len, SHA256_CTX *inner,
                      SHA256_CTX *outer)
{
    uint8_t k[HMAC_BLOCK] = {0}, pad[HMAC_BLOCK];

    if (key_len > HMAC_BLOCK)
        lil__sha256(key, key_len, k);
    else if (key_len)
        memcpy(k, key, key_len);
    for (size_t i = 0; i < HMAC_BLOCK; i++)
        pad[i] = k[i] ^ 0x36;
    SHA256_Init(inner);
    SHA256_Update(inner, pad, HMAC_BLOCK);
    for (size_t i = 0; i < HMAC_BLOCK; i++)
        pad[i] = k[i] ^ 0x5c;
    SHA256_Init(outer);
    SHA256_Update(outer, pad, HMAC_BLOCK);
    OPENSSL_cleanse(k, sizeof(k));
    OPENSSL_cleanse(pad, sizeof(pad));
}

/* HMAC's last step: out = H(outer || H(inner || data)), ctx holding the
 * inner hash of the data.  Wipes ctx. */
static void hmac_finish(SHA256_CTX *ctx, const SHA256_CTX *outer,
                        uint8_t out[LIL_SHA256_LEN])
{
    uint8_t inner_md[LIL_SHA256_LEN];
    SHA256_CTX o = *outer;

    SHA256_Final(inner_md, ctx);
    SHA256_Update(&o, inner_md, sizeof(inner_md));
    SHA256_Final(out, &o);
    OPENSSL_cleanse(inner_md, sizeof(inner_md));
    OPENSSL_cleanse(&o, sizeof(o));
}

void lil__hmac_sha256(const uint8_t *key, size_t key_len, const void *data, size_t len,
                      uint8_t out[LIL_SHA256_LEN])
{
    SHA256_CTX inner, outer;

    hmac_pads(key, key_len, &inner, &outer);
    SHA256_Update(&inner, data, len);
    hmac_finish(&inner, &outer, out);
    OPENSSL_cleanse(&outer, sizeof(outer));
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

lil_status lil__mac_new(const struct lil_env *env, struct lil_err *err,
                        const uint8_t *key, size_t key_len, struct lil_mac **out)
{
    struct lil_mac *m = lil__calloc(env, 1, sizeof(*m));

    *out = NULL;
    if (!m)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (key) {
        hmac_pads(key, key_len, &m->inner, &m->outer);
        m->keyed = true;
    }
    *out = m;
    return LIL_OK;
}

void lil__mac_free(const struct lil_env *env, struct lil_mac *m)
{
    if (!m)
        return;
    OPENSSL_cleanse(m, sizeof(*m)); /* the pads are as good as the key */
    lil__free(env, m);
}

int lil__mac_keyed(const struct lil_mac *m)
{
    return m->keyed;
}

void lil__mac_begin(struct lil_mac *m)
{
    if (m->keyed)
        m->ctx = m->inner;
    else
        SHA256_Init(&m->ctx);
}

void lil__mac_update(struct lil_mac *m, const void *data, size_t len)
{
    SHA256_Update(&m->ctx, data, len);
}

void lil__mac_end(struct lil_mac *m, uint8_t out[LIL_SHA256_LEN])
{
    if (m->keyed)
        hmac_finish(&m->ctx, &m->outer, out);
    else
        SHA256_Final(out, &m->ctx);
}

void lil__mac2(struct lil_mac *m, const void *a, size_t alen, const void *b,
               size_t blen, uint8_t out[LIL_SHA256_LEN])
{
    lil__mac_begin(m);
    lil__mac_update(m, a, alen);
    if (b)
        lil__mac_update(m, b, blen);
    lil__mac_end(m, out);
}
