/*
 * kern_half.h — the 2-byte storage types of the kernels' shared-memory tiles:
 * float <-> fp16 bits and float <-> bf16 bits, host and device (REF_HD).
 *
 * The tiles a plan charges at 2 bytes per element (Q_i, K_j, V_j, and P_ij of
 * the naive order, in fp16 or bf16) hold values that are already rounded to
 * the dtype (they come from HBM, where sim_store / kern_store rounded them).
 * So these conversions never round: float -> bits is exact for every value
 * the dtype represents, and bits -> float is exact always. A value that the
 * dtype cannot represent is outside their contract (fp16: the result is
 * truncated, not rounded; ref_round_fp16 / ref_round_bf16 round).
 *
 * Written with integer operations only (plus one multiplication by a power
 * of two for fp16 subnormals, which is exact), so that nvcc and the C
 * compiler give the same bits; tests/test_kernels.c checks all 65,536
 * patterns of each type.
 */
#ifndef FASIM_KERN_HALF_H
#define FASIM_KERN_HALF_H

#include <stdint.h>

#include "ref_tile.h"   /* REF_HD, ref_f2u, ref_u2f */

/* bf16 is the top half of a float32: exact for a value with zero low bits. */
REF_HD static inline uint16_t kern_f32_to_bf16(float x)
{
    return (uint16_t)(ref_f2u(x) >> 16);
}

REF_HD static inline float kern_bf16_to_f32(uint16_t h)
{
    return ref_u2f((uint32_t)h << 16);
}

/* fp16 (1 sign, 5 exponent bits biased 15, 10 fraction bits). */
REF_HD static inline uint16_t kern_f32_to_fp16(float x)
{
    uint32_t u = ref_f2u(x);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u)                             /* NaN: quiet, keep the payload's top */
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x03ffu));
    if (a >= 0x47800000u)                            /* inf (2^16 and above: not fp16) */
        return (uint16_t)(sign | 0x7c00u);
    if (a >= 0x38800000u)                            /* normal: 2^-14 <= |x| < 2^16 */
        return (uint16_t)(sign | (((a >> 23) - 112u) << 10) | ((a >> 13) & 0x03ffu));
    /* subnormal or zero: |x| = m 2^-24 with m < 1024, an integer; exact. */
    float f = ref_u2f(a) * 16777216.0f;              /* * 2^24 */
    return (uint16_t)(sign | (uint32_t)f);
}

REF_HD static inline float kern_fp16_to_f32(uint16_t h)
{
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t e = ((uint32_t)h >> 10) & 0x1fu, m = (uint32_t)h & 0x03ffu;
    if (e == 0x1fu)                                  /* inf, NaN */
        return ref_u2f(sign | 0x7f800000u | (m << 13));
    if (e != 0)                                      /* normal */
        return ref_u2f(sign | ((e + 112u) << 23) | (m << 13));
    float f = (float)m * 5.9604644775390625e-08f;    /* subnormal or zero: m 2^-24, exact */
    return ref_u2f(ref_f2u(f) | sign);
}

#endif /* FASIM_KERN_HALF_H */
