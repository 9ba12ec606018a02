/*
 * ref_simd.c — the tile products on the widest vector path the CPU has
 * (ref_simd.h): the scalar specification, the x86-64 vector paths built from
 * ref_simd_kern.h, and the choice between them at run time.
 */
#include "ref_simd.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define REF_SIMD_X86 1
#include <immintrin.h>

/* 128-bit: FMA3's VEX-encoded forms of the SSE operations. */
#define RSK_SUF sse
#define RSK_TGT "fma"
#define RSK_V __m128
#define RSK_VI __m128i
#define RSK_W 4
#define RSK_LOAD(p) _mm_loadu_ps(p)
#define RSK_STORE(p, v) _mm_storeu_ps((p), (v))
#define RSK_SET1(x) _mm_set1_ps(x)
#define RSK_FMA(a, b, c) _mm_fmadd_ps((a), (b), (c))
#define RSK_MUL(a, b) _mm_mul_ps((a), (b))
#define RSK_DIV(a, b) _mm_div_ps((a), (b))
#define RSK_SUB(a, b) _mm_sub_ps((a), (b))
#define RSK_CASTI(v) _mm_castps_si128(v)
#define RSK_CASTF(i) _mm_castsi128_ps(i)
#define RSK_IADD(a, b) _mm_add_epi32((a), (b))
#define RSK_ISUB(a, b) _mm_sub_epi32((a), (b))
#define RSK_ISRAI(a, n) _mm_srai_epi32((a), (n))
#define RSK_ISRLI(a, n) _mm_srli_epi32((a), (n))
#define RSK_ISLLI(a, n) _mm_slli_epi32((a), (n))
#define RSK_SEL_LT(x, c, a, b) _mm_blendv_ps((b), (a), _mm_cmp_ps((x), (c), _CMP_LT_OQ))
#define RSK_SEL_GT(x, c, a, b) _mm_blendv_ps((b), (a), _mm_cmp_ps((x), (c), _CMP_GT_OQ))
#define RSK_SEL_NAN(x, a, b) _mm_blendv_ps((b), (a), _mm_cmp_ps((x), (x), _CMP_UNORD_Q))
#include "ref_simd_kern.h"

#define RSK_SUF avx2
#define RSK_TGT "avx2,fma"
#define RSK_V __m256
#define RSK_VI __m256i
#define RSK_W 8
#define RSK_LOAD(p) _mm256_loadu_ps(p)
#define RSK_STORE(p, v) _mm256_storeu_ps((p), (v))
#define RSK_SET1(x) _mm256_set1_ps(x)
#define RSK_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define RSK_MUL(a, b) _mm256_mul_ps((a), (b))
#define RSK_DIV(a, b) _mm256_div_ps((a), (b))
#define RSK_SUB(a, b) _mm256_sub_ps((a), (b))
#define RSK_CASTI(v) _mm256_castps_si256(v)
#define RSK_CASTF(i) _mm256_castsi256_ps(i)
#define RSK_IADD(a, b) _mm256_add_epi32((a), (b))
#define RSK_ISUB(a, b) _mm256_sub_epi32((a), (b))
#define RSK_ISRAI(a, n) _mm256_srai_epi32((a), (n))
#define RSK_ISRLI(a, n) _mm256_srli_epi32((a), (n))
#define RSK_ISLLI(a, n) _mm256_slli_epi32((a), (n))
#define RSK_SEL_LT(x, c, a, b) _mm256_blendv_ps((b), (a), _mm256_cmp_ps((x), (c), _CMP_LT_OQ))
#define RSK_SEL_GT(x, c, a, b) _mm256_blendv_ps((b), (a), _mm256_cmp_ps((x), (c), _CMP_GT_OQ))
#define RSK_SEL_NAN(x, a, b) _mm256_blendv_ps((b), (a), _mm256_cmp_ps((x), (x), _CMP_UNORD_Q))
#include "ref_simd_kern.h"

#define RSK_SUF avx512
#define RSK_TGT "avx512f"
#define RSK_V __m512
#define RSK_VI __m512i
#define RSK_W 16
#define RSK_LOAD(p) _mm512_loadu_ps(p)
#define RSK_STORE(p, v) _mm512_storeu_ps((p), (v))
#define RSK_SET1(x) _mm512_set1_ps(x)
#define RSK_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define RSK_MUL(a, b) _mm512_mul_ps((a), (b))
#define RSK_DIV(a, b) _mm512_div_ps((a), (b))
#define RSK_SUB(a, b) _mm512_sub_ps((a), (b))
#define RSK_CASTI(v) _mm512_castps_si512(v)
#define RSK_CASTF(i) _mm512_castsi512_ps(i)
#define RSK_IADD(a, b) _mm512_add_epi32((a), (b))
#define RSK_ISUB(a, b) _mm512_sub_epi32((a), (b))
#define RSK_ISRAI(a, n) _mm512_srai_epi32((a), (n))
#define RSK_ISRLI(a, n) _mm512_srli_epi32((a), (n))
#define RSK_ISLLI(a, n) _mm512_slli_epi32((a), (n))
#define RSK_SEL_LT(x, c, a, b) \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask((x), (c), _CMP_LT_OQ), (b), (a))
#define RSK_SEL_GT(x, c, a, b) \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask((x), (c), _CMP_GT_OQ), (b), (a))
#define RSK_SEL_NAN(x, a, b) \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask((x), (x), _CMP_UNORD_Q), (b), (a))
#include "ref_simd_kern.h"
#endif

#if defined(__wasm_simd128__)
#define REF_SIMD_WASM 1
#include <wasm_simd128.h>

/* The lanes of one f64x2 half whose rounding to float would not be fmaf's:
 * on a midpoint between two floats while a b + c is not exactly there (the
 * double's low 29 bits 0x10000000, and r - xy, r - c not c, xy), or in
 * float's subnormal range (non-zero below 2^-126). Exact midpoints are
 * common (fp16 and bf16 inputs make one sum in eight or so land on one) and
 * round correctly as they are. */
static inline __attribute__((always_inline)) v128_t rsk_fma_wasm_odd(v128_t r, v128_t xy, v128_t c)
{
    const v128_t mid = wasm_i64x2_eq(wasm_v128_and(r, wasm_i64x2_splat(0x1fffffff)),
                                     wasm_i64x2_splat(0x10000000));
    const v128_t tiny = wasm_v128_and(wasm_f64x2_lt(wasm_f64x2_abs(r), wasm_f64x2_splat(0x1p-126)),
                                      wasm_f64x2_ne(r, wasm_f64x2_splat(0.0)));
    const v128_t exact = wasm_v128_and(wasm_f64x2_eq(wasm_f64x2_sub(r, xy), c),
                                       wasm_f64x2_eq(wasm_f64x2_sub(r, c), xy));
    return wasm_v128_or(wasm_v128_andnot(mid, exact), tiny);
}

/* The rare vector, lane by lane; apart, so that the products' loops stay
 * small (a browser compiles small functions to fast code sooner). */
static __attribute__((noinline)) v128_t rsk_fma_wasm_lanes(v128_t a, v128_t b, v128_t c)
{
    float x[4], y[4], z[4];
    wasm_v128_store(x, a);
    wasm_v128_store(y, b);
    wasm_v128_store(z, c);
    for (int k = 0; k < 4; k++)
        z[k] = ref_fmaf_via_double(x[k], y[k], z[k]);
    return wasm_v128_load(z);
}

/*
 * WebAssembly's 128-bit SIMD has no fused multiply-add (only the relaxed
 * proposal's, which may or may not fuse), so a lane's fmaf is computed as
 * ref_fmaf_via_double computes it (ref_tile.h): a b exact in double, one
 * rounding of a b + c to double, then to float, which is fmaf's result but
 * for the lanes rsk_fma_wasm_odd finds. Four lanes take two f64x2 halves; a
 * vector with such a lane (rare) is redone lane by lane.
 */
static inline __attribute__((always_inline)) v128_t rsk_fma_wasm(v128_t a, v128_t b, v128_t c)
{
    const v128_t c_lo = wasm_f64x2_promote_low_f32x4(c);
    const v128_t c_hi = wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(c, c, 2, 3, 2, 3));
    const v128_t xy_lo = wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(a),
                                        wasm_f64x2_promote_low_f32x4(b));
    const v128_t xy_hi = wasm_f64x2_mul(
        wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(a, a, 2, 3, 2, 3)),
        wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(b, b, 2, 3, 2, 3)));
    const v128_t lo = wasm_f64x2_add(xy_lo, c_lo), hi = wasm_f64x2_add(xy_hi, c_hi);
    const v128_t odd = wasm_v128_or(rsk_fma_wasm_odd(lo, xy_lo, c_lo),
                                    rsk_fma_wasm_odd(hi, xy_hi, c_hi));
    if (__builtin_expect(wasm_v128_any_true(odd), 0))
        return rsk_fma_wasm_lanes(a, b, c);
    return wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(lo), wasm_f32x4_demote_f64x2_zero(hi),
                              0, 1, 4, 5);
}

#define RSK_SUF wasm128
#define RSK_TGT "simd128"
#define RSK_V v128_t
#define RSK_VI v128_t
#define RSK_W 4
#define RSK_LOAD(p) wasm_v128_load(p)
#define RSK_STORE(p, v) wasm_v128_store((p), (v))
#define RSK_SET1(x) wasm_f32x4_splat(x)
#define RSK_FMA(a, b, c) rsk_fma_wasm((a), (b), (c))
#define RSK_MUL(a, b) wasm_f32x4_mul((a), (b))
#define RSK_DIV(a, b) wasm_f32x4_div((a), (b))
#define RSK_SUB(a, b) wasm_f32x4_sub((a), (b))
#define RSK_CASTI(v) (v)
#define RSK_CASTF(i) (i)
#define RSK_IADD(a, b) wasm_i32x4_add((a), (b))
#define RSK_ISUB(a, b) wasm_i32x4_sub((a), (b))
#define RSK_ISRAI(a, n) wasm_i32x4_shr((a), (n))
#define RSK_ISRLI(a, n) wasm_u32x4_shr((a), (n))
#define RSK_ISLLI(a, n) wasm_i32x4_shl((a), (n))
#define RSK_SEL_LT(x, c, a, b) wasm_v128_bitselect((a), (b), wasm_f32x4_lt((x), (c)))
#define RSK_SEL_GT(x, c, a, b) wasm_v128_bitselect((a), (b), wasm_f32x4_gt((x), (c)))
#define RSK_SEL_NAN(x, a, b) wasm_v128_bitselect((a), (b), wasm_f32x4_ne((x), (x)))
#include "ref_simd_kern.h"
#endif

static const char *const NAMES[REF_SIMD_COUNT] = { "scalar", "sse", "avx2", "avx512",
                                                   "wasm128" };

/* Lanes of each path: the scratch tiles are rounded up to them. */
static const int LANES[REF_SIMD_COUNT] = { 1, 4, 8, 16, 4 };

const char *ref_simd_name(ref_simd s)
{
    return (unsigned)s < REF_SIMD_COUNT ? NAMES[s] : "?";
}

int ref_simd_parse(const char *name, ref_simd *out)
{
    for (int s = 0; name && s < REF_SIMD_COUNT; s++)
        if (!strcmp(name, NAMES[s])) {
            *out = (ref_simd)s;
            return 0;
        }
    return -1;
}

int ref_simd_supported(ref_simd s)
{
    if (s == REF_SIMD_SCALAR)
        return 1;
#ifdef REF_SIMD_X86
    __builtin_cpu_init();
    switch (s) {
    case REF_SIMD_SSE:
        return __builtin_cpu_supports("fma") != 0;
    case REF_SIMD_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case REF_SIMD_AVX512:
        return __builtin_cpu_supports("avx512f") != 0;
    default:
        return 0;
    }
#elif defined(REF_SIMD_WASM)
    return s == REF_SIMD_WASM128;      /* the module would not load without it */
#else
    return 0;
#endif
}

/* The path in use; -1 until the first product (or ref_simd_force) sets it.
 * Atomic because the threads of a run read it. */
static _Atomic int active = -1;

ref_simd ref_simd_active(void)
{
    int a = atomic_load_explicit(&active, memory_order_relaxed);
    if (a >= 0)
        return (ref_simd)a;
    ref_simd cap = REF_SIMD_COUNT - 1;
    (void)ref_simd_parse(getenv("FASIM_SIMD"), &cap);
    a = REF_SIMD_SCALAR;
    for (int s = 1; s <= (int)cap; s++)
        if (ref_simd_supported((ref_simd)s))
            a = s;
    atomic_store_explicit(&active, a, memory_order_relaxed);
    return (ref_simd)a;
}

int ref_simd_force(ref_simd s)
{
    if ((unsigned)s >= REF_SIMD_COUNT || !ref_simd_supported(s))
        return -1;
    atomic_store_explicit(&active, (int)s, memory_order_relaxed);
    return 0;
}

/* Scratch for the vector paths: n floats on the stack below this, which
 * covers d B_c of every plan up to d = 128 and B_c = 64; the heap above. */
#define SCRATCH_STACK 8192

/* Floats of n rounded up to the path's lanes. */
static int64_t round_up(int n, ref_simd s)
{
    const int w = LANES[s];
    return ((int64_t)n + w - 1) / w * w;
}

void ref_simd_scores(const float *Q_i, const float *K_j, int br, int bc, int d, float scale,
                     float *S)
{
    const ref_simd s = ref_simd_active();
    const int64_t n = (int64_t)d * round_up(bc, s);
    float stack[SCRATCH_STACK];
    float *Kt = s == REF_SIMD_SCALAR || br <= 0 || bc <= 0 ? NULL
                : n <= SCRATCH_STACK ? stack : malloc((size_t)n * sizeof *Kt);
    switch (Kt ? s : REF_SIMD_SCALAR) {     /* no scratch: the specification */
#ifdef REF_SIMD_X86
    case REF_SIMD_SSE:
        scores_sse(Q_i, K_j, br, bc, d, scale, S, Kt);
        break;
    case REF_SIMD_AVX2:
        scores_avx2(Q_i, K_j, br, bc, d, scale, S, Kt);
        break;
    case REF_SIMD_AVX512:
        scores_avx512(Q_i, K_j, br, bc, d, scale, S, Kt);
        break;
#endif
#ifdef REF_SIMD_WASM
    case REF_SIMD_WASM128:
        scores_wasm128(Q_i, K_j, br, bc, d, scale, S, Kt);
        break;
#endif
    default:
        ref_tile_scores(Q_i, K_j, br, bc, d, scale, S);
        break;
    }
    if (Kt != stack)
        free(Kt);
}

float ref_simd_exp_shift_sum(float *x, int n, float m)
{
    switch (ref_simd_active()) {
#ifdef REF_SIMD_X86
    case REF_SIMD_SSE: {
        const float sh = ref_shift(m);
        exp_shift_sse(x, n, sh);
        break;
    }
    case REF_SIMD_AVX2:
        exp_shift_avx2(x, n, ref_shift(m));
        break;
    case REF_SIMD_AVX512:
        exp_shift_avx512(x, n, ref_shift(m));
        break;
#endif
#ifdef REF_SIMD_WASM
    case REF_SIMD_WASM128:
        exp_shift_wasm128(x, n, ref_shift(m));
        break;
#endif
    default:
        return ref_exp_shift_sum(x, n, m);
    }
    float l = 0.0f;
    for (int k = 0; k < n; k++)
        l = l + x[k];
    return l;
}

void ref_simd_exp_normalise(const float *x, float *p, int n, float m, float inv_l)
{
    if (ref_simd_active() == REF_SIMD_SCALAR) {
        ref_exp_normalise(x, p, n, m, inv_l);
        return;
    }
    if (p != x)
        memmove(p, x, (size_t)(n > 0 ? n : 0) * sizeof *p);
    (void)ref_simd_exp_shift_sum(p, n, m);
    for (int k = 0; k < n; k++)
        p[k] = p[k] * inv_l;
}

float ref_simd_online_step(float *s, int n, float *m, float *l)
{
    const float m_old = *m, m_blk = ref_row_max(s, n);
    const float m_new = m_blk > m_old ? m_blk : m_old;
    const float alpha = ref_exp(m_old - ref_shift(m_new));
    const float sum = ref_simd_exp_shift_sum(s, n, m_new);
    *l = ref_fmaf(alpha, *l, sum);
    *m = m_new;
    return alpha;
}

/* The P V products of both kinds: w NULL, ref_pv_acc_row's; else FA1's. */
static void pv_rows(float *O, int d, const float *alpha, const ref_fa1_weights *w,
                    const float *P, const float *V_j, int br, int bc)
{
    const ref_simd s = ref_simd_active();
    const int64_t n = d % LANES[s] ? (int64_t)bc * round_up(d, s) : 0;
    float stack[SCRATCH_STACK];
    float *Vp = n <= SCRATCH_STACK ? stack : malloc((size_t)n * sizeof *Vp);
    switch (Vp && br > 0 && d > 0 ? s : REF_SIMD_SCALAR) {
#ifdef REF_SIMD_X86
    case REF_SIMD_SSE:
        pv_sse(O, d, alpha, w, P, V_j, br, bc, Vp);
        break;
    case REF_SIMD_AVX2:
        pv_avx2(O, d, alpha, w, P, V_j, br, bc, Vp);
        break;
    case REF_SIMD_AVX512:
        pv_avx512(O, d, alpha, w, P, V_j, br, bc, Vp);
        break;
#endif
#ifdef REF_SIMD_WASM
    case REF_SIMD_WASM128:
        pv_wasm128(O, d, alpha, w, P, V_j, br, bc, Vp);
        break;
#endif
    default:
        for (int r = 0; r < br; r++) {
            float *o = O + (int64_t)r * d;
            const float *p = P + (int64_t)r * bc;
            if (w)
                ref_fa1_out_row(o, d, w[r], p, V_j, bc);
            else
                ref_pv_acc_row(o, d, alpha ? alpha[r] : 1.0f, p, V_j, bc);
        }
        break;
    }
    if (Vp != stack)
        free(Vp);
}

void ref_simd_pv_acc(float *O, int d, const float *alpha, const float *P, const float *V_j,
                     int br, int bc)
{
    pv_rows(O, d, alpha, NULL, P, V_j, br, bc);
}

void ref_simd_fa1_out(float *O, int d, const ref_fa1_weights *w, const float *P,
                      const float *V_j, int br, int bc)
{
    pv_rows(O, d, NULL, w, P, V_j, br, bc);
}
