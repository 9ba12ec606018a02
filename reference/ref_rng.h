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

/* Standard normal N(0, 1), unbounded: Marsaglia's polar method on two
 * uniforms of ref_rng_uniform (pairs outside the unit disc, or at its
 * centre, are drawn again), u sqrt(-2 ln s / s), the second value of the pair
 * discarded. Only ref_log, IEEE sqrt and division, so identical everywhere. */
REF_HD static inline float ref_rng_gauss(ref_rng *r)
{
    for (;;) {
        float u = ref_rng_uniform(r);
        float v = ref_rng_uniform(r);
        float s = u * u + v * v;
        if (s > 0.0f && s < 1.0f)
            return u * sqrtf(-2.0f * ref_log(s) / s);
    }
}

/* The outlier inputs of the FlashAttention-3 paper (section 4.3, Table 3):
 * N(0, 1) + N(0, 100) x Bernoulli(0.001), the second normal of standard
 * deviation 10, present with probability 0.001 (an integer threshold on 64
 * random bits: 18446744073709552 / 2^64 = 0.001). */
REF_HD static inline float ref_rng_outlier(ref_rng *r)
{
    float x = ref_rng_gauss(r);
    if (ref_rng_next(r) < 18446744073709552ull)
        x += 10.0f * ref_rng_gauss(r);
    return x;
}

#endif /* FASIM_REF_RNG_H */
