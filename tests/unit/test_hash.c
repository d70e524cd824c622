/*
 * test_hash.c -- SHA-256 and HMAC-SHA-256 of base/hash.c (SHA-256 built on
 * OpenSSL's low-level SHA-256 functions, without EVP; HMAC built on them
 * with the padded key absorbed once) against RFC 4231 and against
 * OpenSSL's EVP results, over key and message lengths around the
 * 64-byte block; the chain hasher reused across messages, fed in pieces.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "base/env.h"
#include "base/hash.h"
#include "t.h"

static void evp_sha256(const void *data, size_t len, uint8_t out[32])
{
    unsigned int n = 32;

    EVP_Digest(data, len, out, &n, EVP_sha256(), NULL);
}

static void evp_hmac(const uint8_t *key, size_t key_len, const void *data, size_t len,
                     uint8_t out[32])
{
    size_t n = 0;

    EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key, key_len, data, len, out, 32, &n);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 3));
}

static const size_t lens[] = {0, 1, 31, 32, 55, 56, 63, 64, 65, 119, 128, 200, 1000};
#define N_LENS (sizeof(lens) / sizeof(lens[0]))

T_TEST(sha256_matches_evp)
{
    static uint8_t msg[1000];
    uint8_t a[32], b[32];

    fill(msg, sizeof(msg), 1);
    for (size_t i = 0; i < N_LENS; i++) {
        lil__sha256(msg, lens[i], a);
        evp_sha256(msg, lens[i], b);
        T_EQ_MEM(a, 32, b, 32);
    }
}

T_TEST(hmac_rfc4231_case_1_and_2)
{
    static const uint8_t want1[32] = {0xb0, 0x34, 0x4c, 0x61, 0xd8, 0xdb, 0x38, 0x53,
                                      0x5c, 0xa8, 0xaf, 0xce, 0xaf, 0x0b, 0xf1, 0x2b,
                                      0x88, 0x1d, 0xc2, 0x00, 0xc9, 0x83, 0x3d, 0xa7,
                                      0x26, 0xe9, 0x37, 0x6c, 0x2e, 0x32, 0xcf, 0xf7};
    static const uint8_t want2[32] = {0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e,
                                      0x6a, 0x04, 0x24, 0x26, 0x08, 0x95, 0x75, 0xc7,
                                      0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27, 0x39, 0x83,
                                      0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43};
    uint8_t key[20], out[32];

    memset(key, 0x0b, sizeof(key));
    lil__hmac_sha256(key, sizeof(key), "Hi There", 8, out);
    T_EQ_MEM(out, 32, want1, 32);
    lil__hmac_sha256((const uint8_t *)"Jefe", 4, "what do ya want for nothing?", 28,
                     out);
    T_EQ_MEM(out, 32, want2, 32);
}

/* Keys shorter than, equal to and longer than a block (hashed first). */
T_TEST(hmac_matches_evp_around_the_block)
{
    static const size_t key_lens[] = {0, 1, 16, 32, 63, 64, 65, 100, 300};
    static uint8_t key[300], msg[1000];
    uint8_t a[32], b[32];

    fill(msg, sizeof(msg), 2);
    for (size_t k = 0; k < sizeof(key_lens) / sizeof(key_lens[0]); k++) {
        fill(key, key_lens[k], (unsigned)k + 3);
        for (size_t i = 0; i < N_LENS; i++) {
            lil__hmac_sha256(key, key_lens[k], msg, lens[i], a);
            evp_hmac(key, key_lens[k], msg, lens[i], b);
            T_EQ_MEM(a, 32, b, 32);
        }
    }
}

/* A journal's hasher: one lil_mac for many records, each fed in pieces
 * (prev chain, length field, body), as scan.c does. */
static void chain_matches(const uint8_t *key, size_t key_len)
{
    static uint8_t rec[600];
    struct lil_env env;
    struct lil_mac *m = NULL;
    struct lil_err err;
    uint8_t chain[32] = {0}, next[32], want[32], joined[32 + sizeof(rec)];

    lil__env_init(&env);
    T_REQUIRE(lil__mac_new(&env, &err, key, key_len, &m) == LIL_OK);
    T_REQUIRE(m != NULL);
    T_EQ_I64(lil__mac_keyed(m), key != NULL);
    for (unsigned r = 0; r < 50; r++) {
        size_t len = 40 + (r * 37u) % (sizeof(rec) - 40);
        fill(rec, len, r);
        lil__mac_begin(m);
        lil__mac_update(m, chain, 32);
        lil__mac_update(m, rec, 4);
        lil__mac_update(m, rec + 8, len - 8);
        lil__mac_end(m, next);
        memcpy(joined, chain, 32);
        memcpy(joined + 32, rec, 4);
        memcpy(joined + 36, rec + 8, len - 8);
        if (key)
            evp_hmac(key, key_len, joined, 32 + 4 + len - 8, want);
        else
            evp_sha256(joined, 32 + 4 + len - 8, want);
        T_EQ_MEM(next, 32, want, 32);
        memcpy(chain, next, 32);
    }
    lil__mac2(m, "ab", 2, "cd", 2, next);
    if (key)
        evp_hmac(key, key_len, "abcd", 4, want);
    else
        evp_sha256("abcd", 4, want);
    T_EQ_MEM(next, 32, want, 32);
    lil__mac_free(&env, m);
}

T_TEST(chain_hasher_plain_and_keyed)
{
    static const uint8_t long_key[] = "a journal key longer than one SHA-256 block, "
                                      "as LIL_JOURNAL_KEY may well be";

    chain_matches(NULL, 0);
    chain_matches((const uint8_t *)"k", 1);
    chain_matches(long_key, sizeof(long_key) - 1);
}

T_MAIN()
