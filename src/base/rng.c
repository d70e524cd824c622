/*
 * rng.c -- splitmix64 (rng.h).
 */
#include "base/rng.h"

#define GOLDEN     0x9E3779B97F4A7C15ULL
#define FNV_OFFSET 0xCBF29CE484222325ULL
#define FNV_PRIME  0x00000100000001B3ULL
#define TWO_53     9007199254740992.0

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void lil__rng_seed(struct lil_rng *rng, uint64_t seed)
{
    rng->state = seed;
}

uint64_t lil__rng_key(const void *key, size_t len, uint64_t n)
{
    const unsigned char *p = key;
    uint64_t h = FNV_OFFSET;

    for (size_t i = 0; p && i < len; i++) {
        h ^= p[i];
        h *= FNV_PRIME;
    }
    return mix64(h ^ mix64(n + GOLDEN));
}

uint64_t lil__rng_next(struct lil_rng *rng)
{
    rng->state += GOLDEN;
    return mix64(rng->state);
}

uint64_t lil__rng_below(struct lil_rng *rng, uint64_t bound)
{
    uint64_t threshold, r;

    if (bound == 0)
        return 0;
    /* 2^64 mod bound: the values below it would make the low results
     * more likely; drawing again happens with probability < bound / 2^64. */
    threshold = (0 - bound) % bound;
    do {
        r = lil__rng_next(rng);
    } while (r < threshold);
    return r % bound;
}

double lil__rng_unit(struct lil_rng *rng)
{
    return (double)(lil__rng_next(rng) >> 11) / TWO_53;
}
