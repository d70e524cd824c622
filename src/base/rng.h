/*
 * rng.h -- the one pseudo-random generator of lil: splitmix64 (Steele, Lea
 * and Flood, "Fast splittable pseudorandom number generators", 2014), a
 * 64-bit counter through a mixing function, every seed valid.
 *
 * For jitter only (the retry delays of effects, loop/retry.h; the
 * supervisor's backoff, supervise/): good enough for that and trivially
 * reproducible from its seed.  Nothing secret comes from it (a journal's
 * salt comes from getrandom, journal/scan.c).
 *
 * No global: the caller keeps the state.  A struct lil_rng is used by one
 * thread at a time.
 */
#ifndef LIL_BASE_RNG_H
#define LIL_BASE_RNG_H

#include <stddef.h>
#include <stdint.h>

struct lil_rng {
    uint64_t state;
};

/* Start rng at seed (any value, 0 included). */
void lil__rng_seed(struct lil_rng *rng, uint64_t seed);

/* A seed from bytes (e.g. the run id, len bytes) and a number (e.g. the
 * effect's attempt): FNV-1a of the bytes, mixed with n. */
uint64_t lil__rng_key(const void *key, size_t len, uint64_t n);

/* The next 64 random bits (splitmix64). */
uint64_t lil__rng_next(struct lil_rng *rng);

/* Uniform in [0, bound) without modulo bias; 0 when bound is 0. */
uint64_t lil__rng_below(struct lil_rng *rng, uint64_t bound);

/* Uniform in [0, 1): the top 53 bits of the next draw. */
double lil__rng_unit(struct lil_rng *rng);

#endif
