/*
 * ref_rng.h — the random inputs of fasim, identical on every platform.
 *
 * splitmix64 (Steele, Lea and Flood 2014) gives 64-bit words; values are built
 * from integer bits and exact float arithmetic only, so the same seed gives
 * the same Q, K, V in C, in CUDA and in any later session.
 */
#ifndef FASIM_REF_RNG_H
#define FASIM_REF_RNG_H

#include <stdint.h>

#include "ref_tile.h"   /* REF_HD */

typedef struct {
    uint64_t state;
} ref_rng;

REF_HD static inline ref_rng ref_rng_seed(uint64_t seed)
{
    ref_rng r = { seed ^ 0x6a09e667f3bcc909ull };
    return r;
}

REF_HD static inline uint64_t ref_rng_next(ref_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1): the top 24 bits as a fraction, exactly representable. */
REF_HD static inline float ref_rng_uniform(ref_rng *r)
{
    uint32_t top = (uint32_t)(ref_rng_next(r) >> 40);      /* 24 bits */
    return (float)top * (1.0f / 8388608.0f) - 1.0f;
}

/* Bell-shaped with mean 0 and variance 1: the sum of four uniforms on [-1, 1)
 * (Irwin-Hall, variance 4/3) scaled by sqrt(3)/2. Its tails stop at +-3.46,
 * which keeps random logits realistic without extreme outliers. */
REF_HD static inline float ref_rng_normalish(ref_rng *r)
{
    float s = ref_rng_uniform(r);
    s = s + ref_rng_uniform(r);
    s = s + ref_rng_uniform(r);
    s = s + ref_rng_uniform(r);
    return s * 0.8660254038f;
}

#endif /* FASIM_REF_RNG_H */
