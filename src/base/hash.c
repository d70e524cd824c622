/*
 * hash.c -- SHA-256 and HMAC-SHA-256 over OpenSSL's SHA-256 block
 * functions, CRC-32 through Intel ISA-L (crc32_gzip_refl: the CRC-32 of
 * zlib and gzip, bit for bit, computed with carry-less multiplication at
 * tens of GB/s, against about 1.4 GB/s for zlib's crc32 on the same
 * machine).
 *
 * Why SHA256_Init/Update/Final and not EVP (they are deprecated since
 * OpenSSL 3.0, not removed; 3.x keeps them):
 *   - EVP's first use initializes OpenSSL for the whole process: it reads
 *     openssl.cnf, activates the default provider and builds its method
 *     tables.  That cost 2 ms of CPU per process on the development
 *     machine, the largest single part of a resume (docs/performance.md),
 *     and it changes process-global OpenSSL state behind the host's back.
 *     The low-level functions need no initialization and touch no global
 *     state; lil now never initializes OpenSSL.
 *   - They run the same code as the default provider's SHA-256 (with the
 *     CPU's SHA extensions when present), so the bytes and the speed per
 *     record are the same.
 *   - What is given up: a provider configuration (a FIPS-only policy, say)
 *     does not apply to these hashes.  The chain is an integrity check of
 *     lil's own file, not a service offered to the host.
 * HMAC is RFC 2104 built on them: the states after the key's inner and
 * outer pad blocks are computed once per key and copied for each message,
 * so hashing a record allocates nothing and costs two block compressions
 * more than plain SHA-256.  tests/unit/test_hash.c checks both against
 * EVP's results.
 */
#define OPENSSL_SUPPRESS_DEPRECATED /* SHA256_Init & co.: see above */

#include "base/hash.h"

#include <stdbool.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <isa-l/crc.h>

#include "base/alloc.h"
#include "base/env.h"

#ifdef OPENSSL_NO_DEPRECATED_3_0
#error "lil needs SHA256_Init/Update/Final (this OpenSSL was built no-deprecated)"
#endif

#define BLOCK_LEN SHA256_CBLOCK /* 64 */

struct lil_mac {
    SHA256_CTX ctx;   /* the message being hashed */
    SHA256_CTX inner; /* keyed: the state after (key ^ ipad) */
    SHA256_CTX outer; /* keyed: the state after (key ^ opad) */
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

void lil__hex(const uint8_t *bytes, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * len] = '\0';
}

/* RFC 2104: a key longer than a block is hashed first; the block-sized key
 * XOR ipad (0x36) and XOR opad (0x5c) start the inner and outer hashes. */
static void mac_set_key(struct lil_mac *m, const uint8_t *key, size_t key_len)
{
    uint8_t k[BLOCK_LEN] = {0};
    uint8_t pad[BLOCK_LEN];

    if (key_len > BLOCK_LEN)
        lil__sha256(key, key_len, k);
    else if (key_len)
        memcpy(k, key, key_len);
    for (size_t i = 0; i < BLOCK_LEN; i++)
        pad[i] = (uint8_t)(k[i] ^ 0x36);
    SHA256_Init(&m->inner);
    SHA256_Update(&m->inner, pad, BLOCK_LEN);
    for (size_t i = 0; i < BLOCK_LEN; i++)
        pad[i] = (uint8_t)(k[i] ^ 0x5c);
    SHA256_Init(&m->outer);
    SHA256_Update(&m->outer, pad, BLOCK_LEN);
    OPENSSL_cleanse(k, sizeof(k));
    OPENSSL_cleanse(pad, sizeof(pad));
    m->keyed = true;
}

struct lil_mac *lil__mac_new(const struct lil_env *env, const uint8_t *key,
                             size_t key_len)
{
    struct lil_mac *m = lil__calloc(env, 1, sizeof(*m));

    if (m && key)
        mac_set_key(m, key, key_len);
    return m;
}

void lil__mac_free(const struct lil_env *env, struct lil_mac *m)
{
    if (!m)
        return;
    OPENSSL_cleanse(m, sizeof(*m)); /* keyed: the pad states stand for the key */
    lil__free(env, m);
}

int lil__mac_keyed(const struct lil_mac *m)
{
    return m->keyed;
}

lil_status lil__mac_begin(struct lil_mac *m)
{
    if (m->keyed)
        m->ctx = m->inner;
    else
        SHA256_Init(&m->ctx);
    return LIL_OK;
}

lil_status lil__mac_update(struct lil_mac *m, const void *data, size_t len)
{
    SHA256_Update(&m->ctx, data, len);
    return LIL_OK;
}

lil_status lil__mac_end(struct lil_mac *m, uint8_t out[LIL_SHA256_LEN])
{
    SHA256_Final(out, &m->ctx);
    if (m->keyed) {
        m->ctx = m->outer;
        SHA256_Update(&m->ctx, out, LIL_SHA256_LEN);
        SHA256_Final(out, &m->ctx);
    }
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

void lil__hmac_sha256(const uint8_t *key, size_t key_len, const void *data, size_t len,
                      uint8_t out[LIL_SHA256_LEN])
{
    struct lil_mac m;

    mac_set_key(&m, key, key_len);
    lil__mac2(&m, data, len, NULL, 0, out);
    OPENSSL_cleanse(&m, sizeof(m));
}
