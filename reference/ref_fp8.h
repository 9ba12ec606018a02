/*
 * ref_fp8.h — the two 8-bit floating-point formats of FlashAttention-3, and
 * the random-sign Hadamard transform of its incoherent processing.
 *
 * Formats (OCP 8-bit Floating Point Specification (OFP8), revision 1.0,
 * 2023; NVIDIA's __nv_fp8_e4m3 and __nv_fp8_e5m2 are these):
 *   e4m3  1 sign, 4 exponent (bias 7), 3 mantissa bits. No infinities: the
 *         one NaN pattern per sign is S.1111.111, so the largest finite value
 *         is 1.75 x 2^8 = 448. Smallest normal 2^-6, subnormals in steps
 *         of 2^-9.
 *   e5m2  1 sign, 5 exponent (bias 15), 2 mantissa bits, IEEE-like: infinities
 *         S.11111.00, NaNs S.11111.xx. Largest finite 1.75 x 2^15 = 57344,
 *         smallest normal 2^-14, subnormals in steps of 2^-16.
 *
 * Conversion from float32, the rule FlashAttention-3 gets from CUDA's
 * __nv_cvt_float_to_fp8(x, __NV_SATFINITE, fmt) (cuda_fp8.hpp, used by its
 * FP8 kernels and by torch's float8 casts): round to nearest, ties to even,
 * at the format's precision (subnormals included); a finite or infinite
 * value whose magnitude is beyond the largest finite one saturates to it
 * (+-448, +-57344) instead of becoming NaN or infinity; NaN stays NaN. A
 * result of zero keeps the input's sign.
 *
 * fasim holds an fp8 value as the float it stands for: every fp8 value is a
 * float exactly, so arithmetic on it in float32 is the arithmetic on the fp8
 * value. ref_fp8_code and ref_fp8_value convert to and from the 8-bit codes.
 *
 * Plain C11 and valid CUDA (REF_HD); included by ref_tile.h after its bit
 * helpers, and usable only through it.
 */
#ifndef FASIM_REF_FP8_H
#define FASIM_REF_FP8_H

/* The formats. */
enum { REF_FP8_E4M3, REF_FP8_E5M2 };

/* Largest finite value of fmt: 448 or 57344. */
REF_HD static inline float ref_fp8_max(int fmt)
{
    return fmt == REF_FP8_E4M3 ? 448.0f : 57344.0f;
}

/* x rounded to fmt as __nv_cvt_float_to_fp8 with __NV_SATFINITE rounds it
 * (the rule above), returned as the float it is. */
REF_HD static inline float ref_round_fp8(float x, int fmt)
{
    const int mbits = fmt == REF_FP8_E4M3 ? 3 : 2;
    /* Bits of 2^emin, the smallest normal: 2^-6 and 2^-14. */
    const uint32_t min_normal = fmt == REF_FP8_E4M3 ? 0x3c800000u : 0x38800000u;
    /* A float whose ulp is the subnormal step 2^(emin - mbits): 2^14, 2^7. */
    const float sub_magic = fmt == REF_FP8_E4M3 ? 16384.0f : 128.0f;
    const float maxv = ref_fp8_max(fmt);
    uint32_t u = ref_f2u(x);
    uint32_t sign = u & 0x80000000u;
    uint32_t a = u ^ sign;
    if (a > 0x7f800000u)
        return x;                                  /* NaN stays NaN */
    if (a >= ref_f2u(maxv))                        /* beyond max, or inf: saturate */
        return ref_u2f(sign | ref_f2u(maxv));
    if (a < min_normal) {                          /* subnormal: one RNE rounding */
        float y = (ref_u2f(a) + sub_magic) - sub_magic;
        return ref_u2f(ref_f2u(y) | sign);
    }
    const int drop = 23 - mbits;                   /* fraction bits dropped */
    a += (1u << (drop - 1)) - 1u + ((a >> drop) & 1u);   /* RNE */
    a &= ~((1u << drop) - 1u);
    if (a > ref_f2u(maxv))                         /* rounded past max: saturate */
        a = ref_f2u(maxv);
    return ref_u2f(a | sign);
}

/* The 8-bit code of x rounded to fmt (ref_round_fp8): sign in bit 7. NaN
 * gives the format's canonical NaN, 0x7f. */
REF_HD static inline uint8_t ref_fp8_code(float x, int fmt)
{
    const int mbits = fmt == REF_FP8_E4M3 ? 3 : 2;
    const int bias = fmt == REF_FP8_E4M3 ? 7 : 15;
    float y = ref_round_fp8(x, fmt);
    uint32_t u = ref_f2u(y);
    uint32_t sign = (u >> 24) & 0x80u;
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return 0x7f;
    int e = (int)(a >> 23) - 127;                  /* unbiased exponent of y */
    uint32_t code;
    if (e + bias <= 0) {                           /* subnormal or zero: y / 2^(1-bias-mbits) */
        float steps = ref_u2f(a) * ref_u2f((uint32_t)(127 + bias - 1 + mbits) << 23);
        code = (uint32_t)steps;
    } else {
        code = ((uint32_t)(e + bias) << mbits) | ((a >> (23 - mbits)) & ((1u << mbits) - 1u));
    }
    return (uint8_t)(sign | code);
}

/* The value of 8-bit code c of fmt as a float (NaN for the NaN codes, +-inf
 * for e5m2's infinities). */
REF_HD static inline float ref_fp8_value(uint8_t c, int fmt)
{
    const int mbits = fmt == REF_FP8_E4M3 ? 3 : 2;
    const int bias = fmt == REF_FP8_E4M3 ? 7 : 15;
    const uint32_t sign = (uint32_t)(c & 0x80u) << 24;
    const uint32_t e = (uint32_t)(c & 0x7fu) >> mbits;
    const uint32_t m = c & ((1u << mbits) - 1u);
    const uint32_t emax = fmt == REF_FP8_E4M3 ? 15u : 31u;
    if (fmt == REF_FP8_E4M3 && e == emax && m == ((1u << mbits) - 1u))
        return ref_u2f(sign | 0x7fc00000u);
    if (fmt == REF_FP8_E5M2 && e == emax)
        return ref_u2f(sign | (m ? 0x7fc00000u : 0x7f800000u));
    if (e == 0)   /* m x 2^(1 - bias - mbits), exact */
        return ref_u2f(sign | ref_f2u((float)m * ref_u2f((uint32_t)(127 + 1 - bias - mbits) << 23)));
    return ref_u2f(sign | ((e - (uint32_t)bias + 127u) << 23) | (m << (23 - mbits)));
}

/* ---- the random-sign Hadamard transform ------------------------------------
 * Incoherent processing (FlashAttention-3, section 3.3): Q and K are both
 * multiplied by one random orthogonal d x d matrix M = D H / sqrt(d), D a
 * diagonal of random signs and H the Sylvester Hadamard matrix, before they
 * are quantised. (Q M)(K M)^T = Q M M^T K^T = Q K^T, so the scores do not
 * change in exact arithmetic, while each entry of a transformed row is a
 * signed mix of all of the row's entries, which spreads an outlier over the
 * row and lowers the row's largest magnitude the scale must cover.
 *
 * x (d) is replaced by x M: the signs, then the fast Walsh-Hadamard
 * transform (d log2 d additions, in double), then 1/sqrt(d). d must be a
 * power of two; sign[k] is +1 or -1. inverse != 0 applies M^T instead (the
 * transform, then the signs), which undoes it. */
REF_HD static inline void ref_hadamard_row(double *x, int64_t d, const signed char *sign,
                                           int inverse)
{
    if (!inverse)
        for (int64_t k = 0; k < d; k++)
            x[k] *= sign[k];
    for (int64_t h = 1; h < d; h *= 2)
        for (int64_t i = 0; i < d; i += 2 * h)
            for (int64_t k = i; k < i + h; k++) {
                double a = x[k], b = x[k + h];
                x[k] = a + b;
                x[k + h] = a - b;
            }
    const double s = 1.0 / sqrt((double)d);
    for (int64_t k = 0; k < d; k++)
        x[k] *= s;
    if (inverse)
        for (int64_t k = 0; k < d; k++)
            x[k] *= sign[k];
}

#endif /* FASIM_REF_FP8_H */
