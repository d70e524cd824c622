/*
 * hash.h -- SHA-256 (OpenSSL libcrypto's SHA-256 functions, which need no
 * initialization of OpenSSL: see hash.c), HMAC-SHA-256 (RFC 2104, on the
 * same functions) and CRC-32 (ISA-L; the same CRC-32 as zlib's crc32).
 *
 * struct lil_mac is a chain hasher: plain SHA-256 when no key is set,
 * HMAC-SHA-256 with one.  It is reused across records, so the per-record
 * cost is one init + updates + final, with no allocation.  Any number of
 * lil_macs may be used at once, each by one thread at a time.
 */
#ifndef LIL_BASE_HASH_H
#define LIL_BASE_HASH_H

#include <lil/lil.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define LIL_SHA256_LEN 32

uint32_t lil__crc32(uint32_t crc, const void *data, size_t len);

void lil__sha256(const void *data, size_t len, uint8_t out[LIL_SHA256_LEN]);

/* HMAC-SHA-256 (RFC 2104) of data under key (any length, 0 too): no
 * allocation, no failure. */
void lil__hmac_sha256(const uint8_t *key, size_t key_len, const void *data, size_t len,
                      uint8_t out[LIL_SHA256_LEN]);

/* Lowercase hex of len bytes into out (2*len+1 bytes). */
void lil__hex(const uint8_t *bytes, size_t len, char *out);

struct lil_mac; /* opaque */

/* A new hasher in *out; key may be NULL (plain SHA-256).  Errors, in err:
 * LIL_E_NOMEM.  The begin/update/end calls below cannot fail. */
lil_status lil__mac_new(const struct lil_env *env, struct lil_err *err,
                        const uint8_t *key, size_t key_len, struct lil_mac **out);
void lil__mac_free(const struct lil_env *env, struct lil_mac *m);
int lil__mac_keyed(const struct lil_mac *m);
void lil__mac_begin(struct lil_mac *m);
void lil__mac_update(struct lil_mac *m, const void *data, size_t len);
void lil__mac_end(struct lil_mac *m, uint8_t out[LIL_SHA256_LEN]);

/* One-shot: mac of a||b (b may be NULL). */
void lil__mac2(struct lil_mac *m, const void *a, size_t alen, const void *b,
               size_t blen, uint8_t out[LIL_SHA256_LEN]);

#endif
