/*
 * ref_tile.h — the tile primitives of FlashAttention, written once, in float32.
 *
 * Every part of fasim (the simulator, the lessons, the CUDA kernels and their
 * CPU path) computes attention through these functions and nothing else, so
 * that all of them produce the same bits for the same inputs.
 *
 * Contract for bit reproducibility (docs/ARCHITECTURE.md, "Numerics"):
 *   - fixed operation order: every sum runs over its index from 0 upwards, one
 *     term at a time; products that are fused are written as fmaf, and nothing
 *     else is fused (the build uses -ffp-contract=off, and -fmad=false in CUDA);
 *   - exp and log are fasim's own (ref_exp, ref_log), built from +, *, fmaf,
 *     one IEEE division (log) and bit operations, never the platform's libm;
 *   - division is IEEE division, which C and CUDA both round correctly.
 *
 * Notation (one attention head; all matrices row-major):
 *   N    sequence length (rows of Q, K, V, O)
 *   d    head dimension
 *   B_r  rows in a query block Q_i;   B_c rows in a key/value block K_j, V_j
 *   br, bc  the actual rows of one block (the last block may be partial)
 *   Q_i  (br, d)   K_j, V_j  (bc, d)   S_ij, P_ij  (br, bc)   O_i  (br, d)
 *   m_i, l_i  (br)  running row maximum and row sum of exp(S - m)
 *
 * Masked scores are -INFINITY. A row whose scores are all -INFINITY has
 * m = -INFINITY and contributes nothing: exp is then taken against a shift of
 * 0 instead of -inf, so that no (-inf) - (-inf) = NaN ever appears.
 *
 * This header is plain C11 and also valid CUDA: REF_HD marks every function
 * __host__ __device__ when compiled by nvcc.
 */
#ifndef FASIM_REF_TILE_H
#define FASIM_REF_TILE_H

#include <math.h>    /* fmaf */
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define REF_HD __host__ __device__
#else
#define REF_HD
#endif

#define REF_INF (__builtin_inff())

/* ---- bits ------------------------------------------------------------- */

REF_HD static inline uint32_t ref_f2u(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

REF_HD static inline float ref_u2f(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* ---- fused multiply-add ----------------------------------------------- */

/*
 * ref_fmaf_via_double(a, b, c): a * b + c rounded once to float, as fmaf, from
 * double arithmetic alone. a * b is exact in double (24 + 24 significant bits
 * < 53, and the exponents stay in double's normal range). r = xy + c, rounded
 * to double, is then rounded to float: a second rounding, which gives fmaf's
 * result unless r lies exactly on a midpoint between two floats, because
 * every such midpoint is itself a double, so rounding to double cannot carry
 * the sum across one. On a midpoint, the rounding error of r (Knuth's
 * two-sum, exact in double) says on which side the exact sum lies, and r
 * moves one double ulp that way before the rounding to float (no error: the
 * sum is on the midpoint, and ties go to even). Midpoints are odd multiples
 * of half a float ulp: the double's low 29 bits 0x10000000 for a normal
 * float, odd multiples of 2^-150 in float's subnormal range. No fmaf is
 * called: WebAssembly's C library (musl) computes fmaf the same way but
 * cannot tell an exact sum from an inexact one there (no floating-point
 * flags), and rounds those midpoints away from zero. tests/test_tile.c holds
 * this to the hardware's fmaf bit for bit, midpoints and subnormals
 * included.
 */
REF_HD static inline float ref_fmaf_via_double(float a, float b, float c)
{
    const double xy = (double)a * (double)b, r = xy + (double)c;
    uint64_t u;
    memcpy(&u, &r, sizeof u);
    const double mag = r < 0 ? -r : r;
    int midpoint;
    if (mag >= 0x1p-126)
        midpoint = (u & 0x1fffffffu) == 0x10000000u && mag < 0x1p128;
    else {
        const double t = mag * 0x1p150;            /* exact: a power of two */
        midpoint = t == (double)(int64_t)t && ((int64_t)t & 1);
    }
    if (!midpoint)
        return (float)r;
    const double bv = r - xy, av = r - bv;          /* two-sum: r + err = xy + c */
    const double err = (xy - av) + ((double)c - bv);
    if (err != 0.0) {
        u = (err > 0) == (r > 0) ? u + 1 : u - 1;   /* one double ulp towards the sum */
        double moved;
        memcpy(&moved, &u, sizeof moved);
        return (float)moved;
    }
    return (float)r;
}

/* ref_fmaf: the fused multiply-add every tile primitive uses. fmaf is the
 * hardware's on x86-64 with FMA, on ARM and in CUDA; WebAssembly has no such
 * instruction, and there fmaf is a call into software (musl's, with a
 * rounding-mode query per call), which made the page's compute mode 7 to 14
 * times slower than the native scalar path. There the double form above runs
 * instead: the same bits, inline. */
#if defined(__wasm__)
#define ref_fmaf ref_fmaf_via_double
#else
#define ref_fmaf fmaf
#endif

/* ---- exp -------------------------------------------------------------- */

/*
 * ref_exp(x): e^x in float32, within 1 ulp of the correctly rounded result
 * over the whole float range (tests/test_exp.c sweeps it against libm). Being
 * 1 ulp, it is not monotonic everywhere: a few thousand neighbouring inputs
 * in [-0.25, -0.0155] step down by one ulp.
 *
 * Range reduction: x = k ln2 + r with k = nearest integer to x log2(e) and
 * |r| <= ln2/2, so e^x = 2^k e^r. k comes from the "magic number" trick: adding
 * 1.5 * 2^23 makes the float's last bit weigh 1, so one fmaf rounds x log2(e)
 * to an integer. r = x - k ln2 uses ln2 split in two (Cody and Waite) so that
 * k * LN2_HI is exact for |k| <= 255.
 * e^r: the Taylor polynomial of degree 7; its truncation error on |r| <= 0.347
 * is 0.347^8 / 8! = 5e-9, under a tenth of an ulp, so rounding dominates.
 * 2^k: built from exponent bits in two halves (2^k1 * 2^k2), so that results
 * in the subnormal range are rounded once, correctly, and 2^128 never has to
 * be represented.
 */
REF_HD static inline float ref_exp(float x)
{
    const float LOG2E  = 1.44269502163f;        /* log2(e) rounded to float   */
    const float LN2_HI = 0.693145751953125f;    /* 0x1.62e400p-1, 16 bits     */
    const float LN2_LO = 1.428606765330187e-06f;/* ln2 - LN2_HI               */
    const float MAGIC  = 12582912.0f;           /* 1.5 * 2^23                 */

    if (x != x)
        return x;                               /* NaN in, NaN out            */
    if (x > 89.0f)
        return REF_INF;                         /* e^88.73 > FLT_MAX already  */
    if (x < -104.0f)
        return 0.0f;                            /* e^-104 < half the least subnormal; also -inf */

    float t  = ref_fmaf(x, LOG2E, MAGIC);
    float kf = t - MAGIC;                       /* exact: an integer in [-150, 129] */
    int32_t k = (int32_t)(ref_f2u(t) - ref_f2u(MAGIC));

    float r = ref_fmaf(-kf, LN2_HI, x);
    r = ref_fmaf(-kf, LN2_LO, r);

    float p = 1.0f / 5040.0f;
    p = ref_fmaf(p, r, 1.0f / 720.0f);
    p = ref_fmaf(p, r, 1.0f / 120.0f);
    p = ref_fmaf(p, r, 1.0f / 24.0f);
    p = ref_fmaf(p, r, 1.0f / 6.0f);
    p = ref_fmaf(p, r, 0.5f);
    p = ref_fmaf(p, r, 1.0f);
    p = ref_fmaf(p, r, 1.0f);

    int32_t k1 = k / 2;                         /* |k1|, |k2| <= 75: both normal */
    int32_t k2 = k - k1;
    float s1 = ref_u2f((uint32_t)(k1 + 127) << 23);
    float s2 = ref_u2f((uint32_t)(k2 + 127) << 23);
    return (p * s1) * s2;
}

/*
 * ref_log(x): natural log in float32 (used for the logsumexp L = m + log l),
 * within 1 ulp over all positive floats (tests/test_exp.c sweeps it).
 * x = 2^e (1 + r) with 1 + r in [sqrt(1/2), sqrt(2)), so r = f - 1 is exact.
 * log(1 + r) = 2 atanh(s) with s = r / (2 + r); written as
 * r - (r^2/2 - s (r^2/2 + R(s^2))), R(z) = z (2/3 + 2z/5 + 2z^2/7 + 2z^3/9),
 * the large part r stays exact and only the small correction is rounded
 * (|s| <= 0.1716; the first omitted term, 2 s^11 / 11, is below 1e-9).
 * Returns -inf for 0, NaN for negative or NaN input, +inf for +inf.
 */
REF_HD static inline float ref_log(float x)
{
    const float LN2_HI = 0.693145751953125f;
    const float LN2_LO = 1.428606765330187e-06f;

    if (x != x || x < 0.0f)
        return x != x ? x : (REF_INF - REF_INF);
    if (x == 0.0f)
        return -REF_INF;
    if (x == REF_INF)
        return x;

    int32_t e = 0;
    uint32_t u = ref_f2u(x);
    if (u < 0x00800000u) {                      /* subnormal: scale by 2^23 */
        u = ref_f2u(x * 8388608.0f);
        e = -23;
    }
    e += (int32_t)((u >> 23) & 0xffu) - 127;
    float f = ref_u2f((u & 0x007fffffu) | 0x3f800000u);   /* [1, 2) */
    if (f > 1.41421356f) {
        f = f * 0.5f;
        e += 1;
    }
    float r = f - 1.0f;                         /* exact (Sterbenz) */
    float s = r / (2.0f + r);
    float z = s * s;
    float R = 2.0f / 9.0f;
    R = ref_fmaf(R, z, 2.0f / 7.0f);
    R = ref_fmaf(R, z, 2.0f / 5.0f);
    R = ref_fmaf(R, z, 2.0f / 3.0f);
    R = R * z;
    float hfsq = 0.5f * r * r;
    float ef = (float)e;
    /* e ln2 + r - (hfsq - (s (hfsq + R) + e LN2_LO)) */
    float corr = hfsq - ref_fmaf(s, hfsq + R, ef * LN2_LO);
    return ref_fmaf(ef, LN2_HI, r - corr);
}

/* ---- storage types ---------------------------------------------------- */

/* Round a float to the nearest fp16 value (ties to even), returned as float.
 * Overflow gives +-inf (65520 and above round up to inf), values under 2^-24
 * flush through the subnormal range to +-0 as IEEE binary16 does. */
REF_HD static inline float ref_round_fp16(float x)
{
    uint32_t u = ref_f2u(x);
    uint32_t sign = u & 0x80000000u;
    uint32_t a = u ^ sign;
    if (a >= 0x7f800000u)
        return x;                               /* inf or NaN */
    if (a >= 0x477ff000u)                       /* >= 65520: rounds to inf */
        return ref_u2f(sign | 0x7f800000u);
    if (a < 0x38800000u) {                      /* < 2^-14: fp16 subnormal, quantum 2^-24 */
        float f = ref_u2f(a);
        float y = (f + 0.5f) - 0.5f;            /* ulp(0.5) = 2^-24: one RNE rounding */
        return ref_u2f(ref_f2u(y) | sign);
    }
    a += 0x0fffu + ((a >> 13) & 1u);            /* keep 10 of 23 fraction bits, RNE */
    a &= ~0x1fffu;
    return ref_u2f(a | sign);
}

/* Round a float to the nearest bfloat16 value (ties to even), as float. */
REF_HD static inline float ref_round_bf16(float x)
{
    uint32_t u = ref_f2u(x);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return ref_u2f((u | 0x00400000u) & 0xffff0000u);   /* quiet NaN, bf16 bits */
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    return ref_u2f(u);
}

#include "ref_fp8.h"   /* e4m3, e5m2: ref_round_fp8 */

/* The storage types a value may be rounded to on chip, where fasim's
 * vocabulary (sim.h's dtypes) is not in reach: none (fp32), fp16, bf16, and
 * FlashAttention-3's fp8 formats (saturating, ref_fp8.h). */
enum { REF_ROUND_NONE, REF_ROUND_FP16, REF_ROUND_BF16, REF_ROUND_E4M3, REF_ROUND_E5M2 };

/* x rounded to `kind` (REF_ROUND_*), as float. */
REF_HD static inline float ref_round_to(float x, int kind)
{
    return kind == REF_ROUND_FP16 ? ref_round_fp16(x)
           : kind == REF_ROUND_BF16 ? ref_round_bf16(x)
           : kind == REF_ROUND_E4M3 ? ref_round_fp8(x, REF_FP8_E4M3)
           : kind == REF_ROUND_E5M2 ? ref_round_fp8(x, REF_FP8_E5M2) : x;
}

/* FlashAttention-3's FP8 forward takes P~ at 2^8 times its value: its
 * softmax subtracts 8 from the row maximum in the exponent of base 2, so
 * that P~ lies in [0, 256] and small probabilities keep e4m3's normal
 * numbers instead of underflowing into its subnormals (2^-9 steps), and it
 * divides the row sum by 2^8 at the end (hopper/softmax.h, Max_offset,
 * which hopper/flash_fwd_kernel_sm90.h sets to 8 for FP8, 0 otherwise). */
#define REF_FP8_P_OFFSET 8

/* x[0..n-1] rounded in place to `kind`: the probabilities a tensor-core
 * product takes in the input's type (P~ before P~ V). An fp8 kind rounds
 * 2^8 x and scales it back, which is FA3's offset above: both scalings are
 * by powers of two, exact in float32 over P~'s range, so the products and
 * the row sums are FA3's to the bit up to that exact factor. */
REF_HD static inline void ref_round_row(float *x, int64_t n, int kind)
{
    if (kind == REF_ROUND_NONE)
        return;
    if (kind == REF_ROUND_E4M3 || kind == REF_ROUND_E5M2) {
        const float up = (float)(1 << REF_FP8_P_OFFSET), down = 1.0f / up;
        for (int64_t k = 0; k < n; k++)
            x[k] = ref_round_to(x[k] * up, kind) * down;
        return;
    }
    for (int64_t k = 0; k < n; k++)
        x[k] = ref_round_to(x[k], kind);
}

/* ---- tile primitives --------------------------------------------------- */

/* S_ij = scale * Q_i K_j^T.  Q_i (br, d), K_j (bc, d), S (br, bc) row-major.
 * Each dot product accumulates k = 0..d-1 with fmaf, then is scaled once. */
REF_HD static inline void ref_tile_scores(const float *Q_i, const float *K_j,
                                          int br, int bc, int d, float scale,
                                          float *S)
{
    for (int r = 0; r < br; r++) {
        const float *q = Q_i + (int64_t)r * d;
        for (int c = 0; c < bc; c++) {
            const float *k = K_j + (int64_t)c * d;
            float acc = 0.0f;
            for (int t = 0; t < d; t++)
                acc = ref_fmaf(q[t], k[t], acc);
            S[(int64_t)r * bc + c] = acc * scale;
        }
    }
}

/*
 * Which keys a query row sees. Query row r stands at position r + offset of
 * the keys' sequence (offset = N_k - N_q: the queries are the last N_q
 * positions). Causal: key c is visible iff c <= r + offset; a window W > 0
 * also requires c > r + offset - W, so that each query sees the W keys
 * before it, itself included. Not causal: every key is visible.
 */
/* A block-sparse mask (block-sparse FlashAttention), element-wise: an R x C
 * grid of 0/1 blocks over the N_q x N_k scores, blocks of br rows and bc
 * keys. Key c is visible to row r only if bits[(r / br) cols + c / bc] is 1
 * (and the causal rule above allows it). */
typedef struct {
    const unsigned char *bits;   /* R x C, row-major, 0 or 1 */
    int64_t cols;                /* C */
    int64_t br, bc;              /* rows and keys of one block */
} ref_blocks;

typedef struct {
    int causal;
    int64_t offset;     /* N_k - N_q >= 0 */
    int64_t window;     /* 0: none */
    const ref_blocks *blocks;   /* a block-sparse mask, or NULL: none */
} ref_mask;

REF_HD static inline int ref_mask_visible(const ref_mask *mk, int64_t r, int64_t c)
{
    if (mk->blocks && !mk->blocks->bits[(r / mk->blocks->br) * mk->blocks->cols +
                                        c / mk->blocks->bc])
        return 0;
    if (!mk->causal)
        return 1;
    if (c > r + mk->offset)
        return 0;
    return mk->window <= 0 || c > r + mk->offset - mk->window;
}

/* The mask applied to a tile: score (row0 + r, col0 + c) is set to -inf when
 * key col0 + c is not visible to query row0 + r. */
REF_HD static inline void ref_tile_mask(float *S, int br, int bc, int64_t row0,
                                        int64_t col0, const ref_mask *mk)
{
    if (!mk->causal && !mk->blocks)
        return;
    for (int r = 0; r < br; r++)
        for (int c = 0; c < bc; c++)
            if (!ref_mask_visible(mk, row0 + r, col0 + c))
                S[(int64_t)r * bc + c] = -REF_INF;
}

/* Causal mask with N_k = N_q: score (row0 + r, col0 + c) is set to -inf when
 * col > row. */
REF_HD static inline void ref_tile_mask_causal(float *S, int br, int bc,
                                               int64_t row0, int64_t col0)
{
    const ref_mask mk = { 1, 0, 0, NULL };
    ref_tile_mask(S, br, bc, row0, col0, &mk);
}

/* Largest of x[0..n-1]; -inf for n = 0 or when every entry is -inf. */
REF_HD static inline float ref_row_max(const float *x, int n)
{
    float m = -REF_INF;
    for (int k = 0; k < n; k++)
        m = x[k] > m ? x[k] : m;
    return m;
}

/* The shift used against a row maximum: 0 for a fully masked row (m = -inf),
 * so that exp(-inf - shift) = 0 rather than exp(NaN). */
REF_HD static inline float ref_shift(float m)
{
    return m == -REF_INF ? 0.0f : m;
}

/* x[k] <- exp(x[k] - m) for k = 0..n-1; returns their sum, added in order. */
REF_HD static inline float ref_exp_shift_sum(float *x, int n, float m)
{
    float sh = ref_shift(m);
    float l = 0.0f;
    for (int k = 0; k < n; k++) {
        x[k] = ref_exp(x[k] - sh);
        l = l + x[k];
    }
    return l;
}

/* Sum of exp(x[k] - m) without writing x (the second pass of a 3-pass softmax). */
REF_HD static inline float ref_exp_sum(const float *x, int n, float m, float l)
{
    float sh = ref_shift(m);
    for (int k = 0; k < n; k++)
        l = l + ref_exp(x[k] - sh);
    return l;
}

/* p[k] <- exp(x[k] - m) * inv_l: the normalising pass of a softmax. */
REF_HD static inline void ref_exp_normalise(const float *x, float *p, int n,
                                            float m, float inv_l)
{
    float sh = ref_shift(m);
    for (int k = 0; k < n; k++)
        p[k] = ref_exp(x[k] - sh) * inv_l;
}

/*
 * One online-softmax step for one row (FlashAttention-2, Algorithm 1, line 9):
 *   m_new = max(m, rowmax(s));  s[k] <- P~[k] = exp(s[k] - m_new);
 *   alpha = exp(m - m_new);     l <- alpha * l + rowsum(P~).
 * On return *m = m_new, *l = the new sum; the rescale factor alpha is returned
 * (0 when the old state was empty, i.e. m was -inf).
 */
REF_HD static inline float ref_online_step(float *s, int n, float *m, float *l)
{
    float m_old = *m;
    float m_blk = ref_row_max(s, n);
    float m_new = m_blk > m_old ? m_blk : m_old;
    float alpha = ref_exp(m_old - ref_shift(m_new));
    float sum = ref_exp_shift_sum(s, n, m_new);
    *l = ref_fmaf(alpha, *l, sum);
    *m = m_new;
    return alpha;
}

/* o[c] <- alpha * o[c] + sum_k p[k] V_j[k][c], k = 0..bc-1 in order.
 * o (d), p (bc), V_j (bc, d). */
REF_HD static inline void ref_pv_acc_row(float *o, int d, float alpha,
                                         const float *p, const float *V_j, int bc)
{
    for (int c = 0; c < d; c++) {
        float acc = alpha * o[c];
        for (int k = 0; k < bc; k++)
            acc = ref_fmaf(p[k], V_j[(int64_t)k * d + c], acc);
        o[c] = acc;
    }
}

/* o[c] <- o[c] / l, the final normalisation (FA2 line 12). l > 0 for a row
 * with at least one unmasked key. A row whose keys were all masked has l = 0
 * and o = 0: there is nothing to average, and its output is defined as 0
 * (as FlashAttention's kernels give), not 0/0 = NaN. fasim's own causal mask
 * never masks a whole row (row r always sees key r). */
REF_HD static inline void ref_normalise_row(float *o, int d, float l)
{
    for (int c = 0; c < d; c++)
        o[c] = l == 0.0f ? 0.0f : o[c] / l;
}

/* Logsumexp of a finished row: L = m + log(l) (FA2 line 13). */
REF_HD static inline float ref_lse(float m, float l)
{
    return m + ref_log(l);
}

/*
 * FlashAttention-1, Algorithm 1, lines 10-12 for one row:
 *   m~ = rowmax(s), P~ = exp(s - m~), l~ = rowsum(P~)                    (10)
 *   m_new = max(m, m~), l_new = e^(m - m_new) l + e^(m~ - m_new) l~       (11)
 *   o <- (l e^(m - m_new) o + e^(m~ - m_new) P~ V_j) / l_new              (12)
 * o holds the normalised output so far (as FA1 keeps it in HBM). On return
 * *m = m_new and *l = l_new; s holds P~.
 */
typedef struct {
    float b;        /* e^(m~ - m_new), the weight of this block's P~ V_j */
    float la;       /* l e^(m - m_new), the weight of the output so far */
    float l_new;    /* the new sum; 0 while nothing unmasked has been seen */
} ref_fa1_weights;

/* Line 10 for one row: s <- P~ = exp(s - m~), *l_t <- l~ = rowsum(P~);
 * returns m~ = rowmax(s). */
REF_HD static inline float ref_fa1_block_row(float *s, int bc, float *l_t)
{
    float m_t = ref_row_max(s, bc);
    *l_t = ref_exp_shift_sum(s, bc, m_t);
    return m_t;
}

/* Line 11 for one row, from its statistics so far (m, l) and the block's
 * (m~, l~): *m_new <- max(m, m~), and the weights line 12 applies, l_new
 * among them. A pure function of its arguments: line 12 may call it again
 * for the same bits. */
REF_HD static inline ref_fa1_weights ref_fa1_weights_row(float m, float l, float m_t,
                                                         float l_t, float *m_new)
{
    ref_fa1_weights w;
    float mn = m_t > m ? m_t : m;
    float sh = ref_shift(mn);
    float a = ref_exp(m - sh);
    w.b = ref_exp(m_t - sh);
    w.l_new = ref_fmaf(w.b, l_t, a * l);
    w.la = l * a;
    *m_new = mn;
    return w;
}

/* Line 12 for one row: o <- (la o + b P~ V_j) / l_new, p = P~ (bc) and V_j
 * (bc, d); o stays 0 while nothing unmasked has been seen (l_new = 0). */
REF_HD static inline void ref_fa1_out_row(float *o, int d, ref_fa1_weights w, const float *p,
                                          const float *V_j, int bc)
{
    if (w.l_new == 0.0f)
        return;
    for (int c = 0; c < d; c++) {
        float pv = 0.0f;
        for (int k = 0; k < bc; k++)
            pv = ref_fmaf(p[k], V_j[(int64_t)k * d + c], pv);
        o[c] = ref_fmaf(w.b, pv, w.la * o[c]) / w.l_new;
    }
}

/* Lines 10-11 for one row: s <- P~, *m <- m_new, *l <- l_new, and the
 * weights line 12 applies. Shared by ref_fa1_step_row and the kernels,
 * which read V_j from their own tile storage. */
REF_HD static inline ref_fa1_weights ref_fa1_stats_row(float *s, int bc, float *m, float *l)
{
    float l_t;
    float m_t = ref_fa1_block_row(s, bc, &l_t);
    ref_fa1_weights w = ref_fa1_weights_row(*m, *l, m_t, l_t, m);
    *l = w.l_new;
    return w;
}

REF_HD static inline void ref_fa1_step_row(float *s, int bc, const float *V_j,
                                           int d, float *o, float *m, float *l)
{
    ref_fa1_weights w = ref_fa1_stats_row(s, bc, m, l);
    ref_fa1_out_row(o, d, w, s, V_j, bc);                   /* line 12 */
}

/*
 * Merge of two partial softmax states over disjoint sets of keys:
 * (m_a, l_a, acc_a) and (m_b, l_b, acc_b), where acc is the unnormalised
 * output sum_k exp(s_k - m) v_k (d values). The result describes the union:
 *   m = max(m_a, m_b), l = e^(m_a - m) l_a + e^(m_b - m) l_b,
 *   acc = e^(m_a - m) acc_a + e^(m_b - m) acc_b.
 * Exactly associative and commutative in real arithmetic; in float the
 * results agree to rounding (tests/test_tile.c measures how closely).
 * out_acc may alias acc_a or acc_b.
 */
REF_HD static inline void ref_merge(float m_a, float l_a, const float *acc_a,
                                    float m_b, float l_b, const float *acc_b,
                                    int d, float *m, float *l, float *out_acc)
{
    float m_n = m_a > m_b ? m_a : m_b;
    float sh = ref_shift(m_n);
    float a = ref_exp(m_a - sh);
    float b = ref_exp(m_b - sh);
    *l = ref_fmaf(b, l_b, a * l_a);
    *m = m_n;
    if (d > 0 && acc_a && acc_b && out_acc) {
        for (int c = 0; c < d; c++)
            out_acc[c] = ref_fmaf(b, acc_b[c], a * acc_a[c]);
    }
}

/* ---- whole-vector softmax, for the lessons and the tests ---------------- */

/* One pass (the "safe" softmax): m = max(x), l = sum exp(x - m). */
REF_HD static inline void ref_softmax_stats(const float *x, int n, float *m, float *l)
{
    *m = ref_row_max(x, n);
    *l = ref_exp_sum(x, n, *m, 0.0f);
}

/* The same statistics by the online recurrence over blocks of `block`
 * entries: per block, m_new = max(m, max(block)); l = e^(m - m_new) l + sum.
 * `scratch` holds `block` floats. */
REF_HD static inline void ref_softmax_online(const float *x, int n, int block,
                                             float *scratch, float *m, float *l)
{
    *m = -REF_INF;
    *l = 0.0f;
    for (int start = 0; start < n; start += block) {
        int len = n - start < block ? n - start : block;
        for (int k = 0; k < len; k++)
            scratch[k] = x[start + k];
        (void)ref_online_step(scratch, len, m, l);
    }
}

/* ---- backward ---------------------------------------------------------- */

/*
 * The primitives of the backward pass (FlashAttention-2, Algorithm 2; FA1's
 * Algorithm 4 uses the same products). With dO the gradient of the output:
 *   P_ij = exp(S_ij - L_i)            S_ij recomputed by ref_tile_scores
 *   dV_j += P_ij^T dO_i               dP_ij = dO_i V_j^T (ref_tile_scores, scale 1)
 *   D_i  = rowsum(dO_i o O_i)         dS_ij = P_ij o (dP_ij - D_i)
 *   dQ_i += scale dS_ij K_j           dK_j += scale dS_ij^T Q_i
 * Shapes as above, plus dO_i, dQ_i (br, d); dK_j, dV_j (bc, d); D_i (br);
 * L_i (br) the logsumexp of the forward pass. Every sum starts from 0.0f and
 * runs over its index upwards, one fmaf per term; the accumulations add
 * their sum into the accumulator with one more fmaf.
 */

/* acc + a . b, continuing the chain: acc = fmaf(a[k], b[k], acc) for
 * k = 0..n-1. A dot product over several tiles in turn, each continuing the
 * last, gives the bits of one over the whole row (standard attention's
 * backward, line 3, in one pass or two). */
REF_HD static inline float ref_row_dot_acc(const float *a, const float *b, int n, float acc)
{
    for (int k = 0; k < n; k++)
        acc = ref_fmaf(a[k], b[k], acc);
    return acc;
}

/* a . b = sum_k a[k] b[k], k = 0..n-1, acc = fmaf(a[k], b[k], acc) from 0.0f.
 * D_i[r] = ref_row_dot(dO_i + r d, O_i + r d, d). 0 for n = 0. */
REF_HD static inline float ref_row_dot(const float *a, const float *b, int n)
{
    return ref_row_dot_acc(a, b, n, 0.0f);
}

/* s[k] <- exp(s[k] - L), k = 0..n-1: one row of P recomputed from its scores
 * and the row's logsumexp L (FA2 backward). The shift follows ref_shift: a row
 * that saw no key has L = -inf and its scores are all -inf, which gives 0s;
 * a masked score (-inf) gives 0 in any row. */
REF_HD static inline void ref_exp_lse_row(float *s, int n, float L)
{
    float sh = ref_shift(L);
    for (int k = 0; k < n; k++)
        s[k] = ref_exp(s[k] - sh);
}

/* dS[r][c] = P[r][c] * (dP[r][c] - D[r]): a subtraction, then a product,
 * nothing fused. P, dP, dS (br, bc), D (br). dS may alias dP (or P); each
 * entry is read before it is written. A masked entry (P = 0) gives +-0. */
REF_HD static inline void ref_tile_ds(const float *P, const float *dP, const float *D,
                                      int br, int bc, float *dS)
{
    for (int r = 0; r < br; r++)
        for (int c = 0; c < bc; c++) {
            int64_t i = (int64_t)r * bc + c;
            dS[i] = P[i] * (dP[i] - D[r]);
        }
}

/* acc += scale * A^T B.  A (rows, acols), B (rows, d), acc (acols, d).
 * For each c, t: s = sum_r A[r][c] B[r][t], r = 0..rows-1, fmaf from 0.0f;
 * then acc[c][t] = fmaf(scale, s, acc[c][t]). acc must not alias A or B.
 * dV_j += P_ij^T dO_i:  ref_tile_acc_tn(dV_j, P, dO_i, br, bc, d, 1.0f);
 * dK_j += scale dS^T Q_i: ref_tile_acc_tn(dK_j, dS, Q_i, br, bc, d, scale). */
REF_HD static inline void ref_tile_acc_tn(float *acc, const float *A, const float *B,
                                          int rows, int acols, int d, float scale)
{
    for (int c = 0; c < acols; c++)
        for (int t = 0; t < d; t++) {
            float s = 0.0f;
            for (int r = 0; r < rows; r++)
                s = ref_fmaf(A[(int64_t)r * acols + c], B[(int64_t)r * d + t], s);
            int64_t i = (int64_t)c * d + t;
            acc[i] = ref_fmaf(scale, s, acc[i]);
        }
}

/* acc += scale * A B.  A (rows, k), B (k, d), acc (rows, d).
 * For each r, t: s = sum_c A[r][c] B[c][t], c = 0..k-1, fmaf from 0.0f;
 * then acc[r][t] = fmaf(scale, s, acc[r][t]). acc must not alias A or B.
 * dQ_i += scale dS_ij K_j:  ref_tile_acc_nn(dQ_i, dS, K_j, br, bc, d, scale). */
REF_HD static inline void ref_tile_acc_nn(float *acc, const float *A, const float *B,
                                          int rows, int k, int d, float scale)
{
    for (int r = 0; r < rows; r++)
        for (int t = 0; t < d; t++) {
            float s = 0.0f;
            for (int c = 0; c < k; c++)
                s = ref_fmaf(A[(int64_t)r * k + c], B[(int64_t)c * d + t], s);
            int64_t i = (int64_t)r * d + t;
            acc[i] = ref_fmaf(scale, s, acc[i]);
        }
}

#endif /* FASIM_REF_TILE_H */
