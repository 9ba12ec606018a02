/*
 * test_tile.c — the float32 tile primitives of reference/ref_tile.h against
 * float64 computations: scores and the causal mask, the online softmax
 * against the one-pass statistics, the merge of partial softmax states, the
 * FA2 and FA1 row updates, and fully masked blocks; then the primitives of
 * the backward pass (row dot, exp against L, dS, the two accumulations), each
 * on its own and composed on one tile against the float64 backward oracle.
 *
 * Most tolerances are first-order rounding-error bounds computed for each
 * case from the data, in units of u = 2^-24 (the unit roundoff of float32):
 * a float operation returns op(x, y)(1 + e) with |e| <= u, a sum of n terms
 * taken left to right is off by at most (n - 1) u times the sum of the
 * magnitudes of its terms, and ref_exp is within EXP_ERR_U u of e^x. The
 * rounding of the argument x - m of each exp adds |x - m| u to that term's
 * relative error, so the bounds carry a term sum_k e^(x_k - m) |x_k - m|,
 * which stays small because e^a |a| <= 1/e. The largest measured error of
 * each kind, and its ratio to the bound, are printed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_oracle.h"
#include "ref_tile.h"
#include "test_util.h"

/* ---- tolerances ----------------------------------------------------------- */

/* Unit roundoff of float32. */
#define U 0x1p-24

/* ref_exp's relative error against the exact e^x, in units of u: it is within
 * 1 ulp of the correctly rounded float (test_exp.c), which is within 1/2 ulp
 * of e^x, and 1 ulp is at most 2^-23 = 2u relative: 1.5 * 2u = 3u. */
#define EXP_ERR_U 3.0

/* Rounding errors a merge (ref_merge) adds to each term that passes through
 * it, in units of u: its exp factor (EXP_ERR_U), the product a * l_a and the
 * fmaf (1 u each). */
#define MERGE_ERR_U (EXP_ERR_U + 2.0)

/* The bounds below are first order in u. The second-order terms are below
 * (n u)^2 relative for n <= 320 terms, about 4e-10; a margin of 1% of the
 * bound covers them. */
#define BOUND_MARGIN 1.01

/* Subnormal results of ref_exp (arguments under -87.3) carry an absolute
 * error of up to 1.5 * 2^-149 rather than a relative one; each term adds
 * this much to a bound. */
#define SUBNORMAL_ABS_ERR 0x1p-148

/* merge(a, b) against merge(b, a). ref_merge computes fmaf(b, l_b, a * l_a):
 * the side named first is rounded once more than the other, so the two orders
 * are not bitwise equal in general (measured: about 4 in 10 pairs differ; see
 * the printout). For l (a sum of two non-negative products) one order rounds
 * the smaller product first (at most 1/4 ulp of the sum, since it is at most
 * half the sum), the other the larger (at most 1/2 ulp), and each then rounds
 * the sum (1/2 ulp): the results are within 3/4 and 1 ulp of the exact sum,
 * under 2 ulps apart, so at most one float step apart. */
#define MERGE_COMM_L_STEPS 1
/* For acc (terms of either sign) each order is within u |first| + u |sum|
 * of the exact value, so the two differ by at most 3 u (|a acc_a| + |b acc_b|)
 * to first order. */
#define MERGE_COMM_ACC_U 3.0

/* softmax(x) V from the online FA2 row update against float64, relative to
 * sum_k p_k |V[k][c]| (the size of the terms that make output c; |o_c| itself
 * can be arbitrarily small by cancellation, and with V > 0 this is |o_c|).
 * 1e-5 is fasim's float32 accuracy target (the bound its other numerics tests
 * use too). The worst-case first-order bound grows like (n + 4 n_blocks) u,
 * over 1500 u = 9e-5 for 300 keys in blocks of 1, but rounding errors of
 * random sign grow like the square root of that: the measured error (printed)
 * is about 1.2e-6. */
#define FA2_OUT_REL_TOL 1e-5

/* FA1 (ref_fa1_step_row) against FA2 for the same row and blocks, relative
 * to the same term size, and FA1 against float64. FA1 keeps the output
 * normalised, so each block adds to what FA2 does a product l * a, a product
 * (l a) * o, an fmaf, a division and one more exp (b = e^(m~ - m_new)): a
 * different but equally long chain of roundings, so it is held to the same
 * 1e-5 target. Measured (printed): about 17 u = 1e-6 between the two. */
#define FA1_OUT_REL_TOL 1e-5

/* A fully masked block after real data. FA2's update is the identity on m,
 * l and the unnormalised output, bitwise: alpha = ref_exp(0) = 1 exactly and
 * every term added is 0. FA1 (ref_fa1_step_row) recomputes the normalised
 * output as fl(fl(l * o) / l), which is not the identity for an arbitrary
 * float o (it moves about 1 in 8 random o by one step), but FA1's o is itself
 * a quotient fl(X / l) by the same l, and then fl(fl(o * l) / l) = o: no
 * exception in 3e8 random and near-power-of-two trials made while writing
 * this test. So FA1 is held to bitwise too (0 float steps). */
#define FA1_MASKED_MAX_STEPS 0

/* ---- random data ---------------------------------------------------------- */

/* Uniform in [lo, hi). */
static double urand(uint64_t *rng, double lo, double hi)
{
    return lo + (hi - lo) * (double)(tu_rand(rng) >> 11) * 0x1p-53;
}

/* A non-zero float uniform in +-[lo, hi). */
static float nz_rand(uint64_t *rng, double lo, double hi)
{
    float v = (float)urand(rng, lo, hi);
    return (tu_rand(rng) & 1) ? -v : v;
}

enum {
    LOGITS_MODERATE,   /* uniform in [-8, 8] */
    LOGITS_OFFSET,     /* C + uniform [-12, 12], |C| <= 1e4: e^x overflows a float */
    LOGITS_WIDE,       /* uniform in [-1e4, 1e4] */
    LOGITS_MASKED,     /* moderate, with 10-90% of entries -inf */
    LOGITS_MASKED_RUNS,/* offset, with runs of -inf long enough to mask whole blocks */
    LOGITS_KINDS
};

static const char *const KIND_NAME[LOGITS_KINDS] = {
    "moderate", "offset", "wide", "masked", "masked runs",
};

/* Fill x[0..n-1]; at least one entry is finite. */
static void gen_logits(uint64_t *rng, float *x, int n, int kind)
{
    double c = urand(rng, -1e4, 1e4);
    double mask_p = urand(rng, 0.1, 0.9);
    for (int k = 0; k < n; k++) {
        switch (kind) {
        case LOGITS_MODERATE:
        case LOGITS_MASKED:
            x[k] = (float)urand(rng, -8.0, 8.0);
            break;
        case LOGITS_WIDE:
            x[k] = (float)urand(rng, -1e4, 1e4);
            break;
        default:
            x[k] = (float)(c + urand(rng, -12.0, 12.0));
            break;
        }
    }
    if (kind == LOGITS_MASKED) {
        for (int k = 0; k < n; k++)
            if (urand(rng, 0.0, 1.0) < mask_p)
                x[k] = -INFINITY;
    } else if (kind == LOGITS_MASKED_RUNS) {
        int runs = (int)tu_rand_range(rng, 1, 4);
        for (int r = 0; r < runs; r++) {
            int start = (int)tu_rand_range(rng, 0, n - 1);
            int len = (int)tu_rand_range(rng, 1, n / 2 + 1);
            for (int k = start; k < n && k < start + len; k++)
                x[k] = -INFINITY;
        }
    }
    int finite = 0;
    for (int k = 0; k < n; k++)
        finite += x[k] != -INFINITY;
    if (!finite)
        x[tu_rand_range(rng, 0, n - 1)] = (float)urand(rng, -8.0, 8.0);
}

/* ---- float64 references --------------------------------------------------- */

/* The exact statistics of x against the float maximum m (which is exact):
 * l = sum e^(x_k - m); la = sum e^(x_k - m) |x_k - m| (for the bounds). */
static void ref_stats_f64(const float *x, int n, float m, double *l, double *la)
{
    *l = 0.0;
    *la = 0.0;
    for (int k = 0; k < n; k++) {
        if (x[k] == -INFINITY)
            continue;
        double a = (double)x[k] - (double)m;
        double w = exp(a);
        *l += w;
        *la += w * fabs(a);
    }
}

/* Error bound for a quantity computed from n exp terms whose each passes
 * through `roundings` relative roundings of u (sum steps, products, fmaf)
 * and `exps` evaluations of ref_exp. w = sum of |term|, wa = sum of
 * |term| |x_k - m| (see the top of the file). */
static double bound(double roundings, double exps, int n, double w, double wa)
{
    return BOUND_MARGIN * (U * ((roundings + exps * EXP_ERR_U) * w + wa) +
                           n * SUBNORMAL_ABS_ERR);
}

/* Number of float steps between two non-negative finite floats. */
static long long steps(float a, float b)
{
    long long d = (long long)ref_f2u(a) - (long long)ref_f2u(b);
    return d < 0 ? -d : d;
}

/* Float steps between any two finite floats, counting -0 and +0 as one
 * step apart (so that 0 steps means the same bits). */
static long long ordinal_steps(float a, float b)
{
    uint32_t ua = ref_f2u(a), ub = ref_f2u(b);
    long long oa = ua >> 31 ? -(long long)(ua & 0x7fffffffu) - 1 : (long long)ua;
    long long ob = ub >> 31 ? -(long long)(ub & 0x7fffffffu) - 1 : (long long)ub;
    return oa > ob ? oa - ob : ob - oa;
}

static int same_bits(float a, float b)
{
    return ref_f2u(a) == ref_f2u(b);
}

/* ---- 0. the fused multiply-add of the WebAssembly build --------------------- */

/* fmaf's bits, NaN aside (any NaN is a NaN). */
static int same_fma(float got, float want)
{
    return (isnan(got) && isnan(want)) || same_bits(got, want);
}

/* ref_fmaf_via_double (ref_fmaf in the WebAssembly build) against the C
 * library's fmaf, bit for bit: random bit patterns over the whole range,
 * products and sums of every exponent, results in the subnormal range, and
 * the cases the double form must hand to fmaf, a double that lands on a
 * midpoint between two floats while the exact sum lies just off it. */
static void test_fmaf_via_double(void **state)
{
    (void)state;
    uint64_t rng = 0xf3a1ull;
    long handed = 0;
    for (int trial = 0; trial < 400000; trial++) {
        float a = ref_u2f((uint32_t)tu_rand(&rng)), b = ref_u2f((uint32_t)tu_rand(&rng));
        float c = ref_u2f((uint32_t)tu_rand(&rng));
        if (trial % 4 == 1) {          /* products and sums of comparable size */
            a = nz_rand(&rng, 0.5, 2.0) * ldexpf(1.0f, (int)tu_rand_range(&rng, -40, 40));
            b = nz_rand(&rng, 0.5, 2.0) * ldexpf(1.0f, (int)tu_rand_range(&rng, -40, 40));
            c = nz_rand(&rng, 0.5, 2.0) * (a * b) * ldexpf(1.0f, (int)tu_rand_range(&rng, -30, 30));
        } else if (trial % 4 == 2) {   /* results in and near the subnormal range */
            a = nz_rand(&rng, 0.5, 2.0) * 0x1p-70f;
            b = nz_rand(&rng, 0.5, 2.0) * ldexpf(1.0f, (int)tu_rand_range(&rng, -70, -50));
            c = ref_u2f((uint32_t)tu_rand_range(&rng, 0, 0x01000000) |
                        (uint32_t)(tu_rand(&rng) & 1) << 31);
        } else if (trial % 8 == 7) {
            /* the same in float's subnormal range: c an odd multiple of
             * 2^-149, a b = 2^-150 (1 - 2^-46) just short of the midpoint */
            c = ldexpf((float)(2 * tu_rand_range(&rng, 0, 1 << 22) + 1), -149);
            c = tu_rand(&rng) & 1 ? -c : c;
            a = 0x1p-75f * (1.0f + 0x1p-23f) * ((c < 0) == (tu_rand(&rng) & 1) ? -1.0f : 1.0f);
            b = 0x1p-75f * (1.0f - 0x1p-23f);
            handed++;
        } else if (trial % 4 == 3) {
            /* c + h, h half an ulp of c: a midpoint. a b = h (1 - 2^-46) lies
             * just below it, so a double sum rounds onto the midpoint, and
             * ties-to-even would round an odd c up where fmaf rounds down */
            c = nz_rand(&rng, 1.0, 2.0) * ldexpf(1.0f, (int)tu_rand_range(&rng, -100, 100));
            const float h = ldexpf(1.0f, ilogbf(c) - 24);
            a = h * (1.0f + 0x1p-23f) * ((c < 0) == (tu_rand(&rng) & 1) ? -1.0f : 1.0f);
            b = 1.0f - 0x1p-23f;
            if (ref_f2u(c) & 1)
                handed++;
        }
        const float got = ref_fmaf_via_double(a, b, c), want = fmaf(a, b, c);
        if (!same_fma(got, want))
            fail_msg("fmaf(%a, %a, %a) = %a, the double form %a", (double)a, (double)b,
                     (double)c, (double)want, (double)got);
    }
    assert_true(handed > 1000);        /* the midpoint family came out as built */
}

/* ---- 1. scores and the causal mask ---------------------------------------- */

/* ref_tile_scores: each score is d fmaf roundings and one product away from
 * the exact dot product, so |S - S_exact| <= gamma_(d+1) |scale| sum |q_t k_t|
 * with gamma_n = n u / (1 - n u) (Higham, Accuracy and Stability, 3.1). This
 * is a rigorous bound, not first order. */
static double gamma_n(int n)
{
    return n * U / (1.0 - n * U);
}

static void test_scores_match_double(void **state)
{
    (void)state;
    uint64_t rng = 0x5c07e5ull;
    double worst_ratio = 0.0, worst_rel = 0.0;
    long long checked = 0;
    for (int trial = 0; trial < 400; trial++) {
        int br = (int)tu_rand_range(&rng, 1, 17);
        int bc = (int)tu_rand_range(&rng, 1, 17);
        int d = (int)tu_rand_range(&rng, 1, 160);
        float scale = trial % 2 ? 1.0f / sqrtf((float)d) : (float)urand(&rng, 0.01, 4.0);
        float *Q = malloc(sizeof(float) * (size_t)(br * d));
        float *K = malloc(sizeof(float) * (size_t)(bc * d));
        float *S = malloc(sizeof(float) * (size_t)(br * bc));
        assert_true(Q && K && S);
        for (int i = 0; i < br * d; i++)
            Q[i] = nz_rand(&rng, 0.001, 2.0);
        for (int i = 0; i < bc * d; i++)
            K[i] = nz_rand(&rng, 0.001, 2.0);
        ref_tile_scores(Q, K, br, bc, d, scale, S);
        for (int r = 0; r < br; r++) {
            for (int c = 0; c < bc; c++) {
                double dot = 0.0, mag = 0.0;
                for (int t = 0; t < d; t++) {
                    double p = (double)Q[r * d + t] * (double)K[c * d + t];  /* exact */
                    dot += p;
                    mag += fabs(p);
                }
                double want = dot * (double)scale;
                /* the double sum's own error, d 2^-53 mag, is added too */
                double tol = gamma_n(d + 1) * (double)scale * mag + d * 0x1p-53 * mag * scale;
                double err = fabs((double)S[r * bc + c] - want);
                if (!(err <= tol))
                    fail_msg("S[%d][%d] (br %d bc %d d %d): got %.9g want %.17g err %.3g > %.3g",
                             r, c, br, bc, d, (double)S[r * bc + c], want, err, tol);
                if (err / tol > worst_ratio)
                    worst_ratio = err / tol;
                if (err / (scale * mag) > worst_rel)
                    worst_rel = err / (scale * mag);
                checked++;
            }
        }
        free(Q);
        free(K);
        free(S);
    }
    printf("  scores: %lld dot products, worst error %.2f u of scale*sum|q k| "
           "(%.3f of the bound)\n", checked, worst_rel / U, worst_ratio);

    /* a case with a known exact answer: (1,2,3).(4,5,6) = 32, times 0.5 */
    const float q[3] = { 1, 2, 3 }, k[3] = { 4, 5, 6 };
    float s;
    ref_tile_scores(q, k, 1, 1, 3, 0.5f, &s);
    assert_true(same_bits(s, 16.0f));
}

static void test_mask_causal(void **state)
{
    (void)state;
    uint64_t rng = 0xca05a1ull;
    long long masked = 0, kept = 0;
    for (int trial = 0; trial < 2000; trial++) {
        int br = (int)tu_rand_range(&rng, 1, 20);
        int bc = (int)tu_rand_range(&rng, 1, 20);
        int64_t row0 = tu_rand_range(&rng, 0, 64);
        int64_t col0 = tu_rand_range(&rng, 0, 64);
        if (trial % 4 == 0)
            col0 = row0;                                  /* diagonal block */
        float S[400], S0[400];
        for (int i = 0; i < br * bc; i++)
            S[i] = S0[i] = nz_rand(&rng, 0.0, 10.0);
        ref_tile_mask_causal(S, br, bc, row0, col0);
        for (int r = 0; r < br; r++) {
            for (int c = 0; c < bc; c++) {
                float v = S[r * bc + c];
                if (col0 + c > row0 + r) {
                    if (!(v == -INFINITY))
                        fail_msg("row %lld col %lld: not masked (%g)", (long long)(row0 + r),
                                 (long long)(col0 + c), (double)v);
                    masked++;
                } else {
                    if (!same_bits(v, S0[r * bc + c]))
                        fail_msg("row %lld col %lld: changed although col <= row",
                                 (long long)(row0 + r), (long long)(col0 + c));
                    kept++;
                }
            }
        }
    }
    printf("  causal mask: %lld entries masked, %lld kept\n", masked, kept);
    assert_true(masked > 0 && kept > 0);

    /* a 3x3 diagonal block: exactly the strict upper triangle */
    float S[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    ref_tile_mask_causal(S, 3, 3, 10, 10);
    const float want[9] = { 1, -INFINITY, -INFINITY, 4, 5, -INFINITY, 7, 8, 9 };
    assert_int_equal(tu_compare_bits("diag", S, want, 9), 0);
    /* a block entirely above the diagonal, and one entirely below */
    float A[4] = { 1, 2, 3, 4 }, B[4] = { 1, 2, 3, 4 };
    ref_tile_mask_causal(A, 2, 2, 0, 2);
    ref_tile_mask_causal(B, 2, 2, 2, 0);
    for (int i = 0; i < 4; i++) {
        assert_true(A[i] == -INFINITY);
        assert_true(B[i] == (float)(i + 1));
    }
}

/* ---- 2. online softmax against the one-pass statistics --------------------- */

#define MAX_N 320

static void test_softmax_online_vs_onepass(void **state)
{
    (void)state;
    uint64_t rng = 0x50f7ull;
    float x[MAX_N], scratch[MAX_N + 8];
    long long runs = 0, l_differ = 0, max_steps = 0;
    double worst_one = 0.0, worst_on = 0.0, worst_diff = 0.0;
    int worst_kind = 0;
    for (int n = 1; n <= 300; n++) {
        for (int kind = 0; kind < LOGITS_KINDS; kind++) {
            gen_logits(&rng, x, n, kind);
            double ld, lda;
            float m1, l1;
            ref_softmax_stats(x, n, &m1, &l1);
            float mx = -INFINITY;
            for (int k = 0; k < n; k++)
                mx = x[k] > mx ? x[k] : mx;
            assert_true(same_bits(m1, mx));
            ref_stats_f64(x, n, m1, &ld, &lda);
            /* one pass: n - 1 sum roundings and one exp per term */
            double b1 = bound(n - 1, 1, n, ld, lda);
            double e1 = fabs((double)l1 - ld);
            if (!(e1 <= b1))
                fail_msg("one-pass l (n %d, %s): %.9g vs %.17g, err %.3g > %.3g", n,
                         KIND_NAME[kind], (double)l1, ld, e1, b1);
            if (e1 / b1 > worst_one)
                worst_one = e1 / b1;

            const int blocks[3] = { (int)tu_rand_range(&rng, 1, n + 3), 1 + (n % 7), n };
            for (int bi = 0; bi < 3; bi++) {
                int block = blocks[bi];
                int nb = (n + block - 1) / block;
                float m2, l2;
                ref_softmax_online(x, n, block, scratch, &m2, &l2);
                runs++;
                /* the maximum is exact whatever the grouping */
                if (!same_bits(m2, m1))
                    fail_msg("online m %a != one-pass m %a (n %d block %d)", (double)m2,
                             (double)m1, n, block);
                /* online: n - 1 sum roundings, plus for each block one fmaf and
                 * one rescale exp (alpha) that every earlier term goes through */
                double b2 = bound((n - 1) + nb, 1 + nb, n, ld, lda);
                double e2 = fabs((double)l2 - ld);
                if (!(e2 <= b2))
                    fail_msg("online l (n %d block %d, %s): %.9g vs %.17g, err %.3g > %.3g",
                             n, block, KIND_NAME[kind], (double)l2, ld, e2, b2);
                if (e2 / b2 > worst_on)
                    worst_on = e2 / b2;
                /* the two float results against each other: different
                 * summation grouping (per block) and rescaling by alpha */
                double ed = fabs((double)l1 - (double)l2);
                if (!(ed <= b1 + b2))
                    fail_msg("online l %.9g vs one-pass l %.9g (n %d block %d)", (double)l2,
                             (double)l1, n, block);
                if (ed / (b1 + b2) > worst_diff)
                    worst_diff = ed / (b1 + b2);
                long long st = steps(l1, l2);
                if (st)
                    l_differ++;
                if (st > max_steps) {
                    max_steps = st;
                    worst_kind = kind;
                }
                assert_false(isnan(l2));
            }
        }
    }
    printf("  online vs one-pass: %lld runs, m always equal, l differs in %lld, by at most "
           "%lld ulp (%s logits)\n", runs, l_differ, max_steps, KIND_NAME[worst_kind]);
    printf("  error / bound: one-pass l %.3f, online l %.3f, online - one-pass %.3f\n",
           worst_one, worst_on, worst_diff);

    /* large logits: a naive exp(x) is inf for each of these, the statistics
     * are exact */
    const float big[4] = { 1e4f, 1e4f, -INFINITY, 1e4f };
    float m, l;
    ref_softmax_online(big, 4, 3, scratch, &m, &l);
    assert_true(m == 1e4f && l == 3.0f);
    ref_softmax_stats(big, 4, &m, &l);
    assert_true(m == 1e4f && l == 3.0f);

    /* a fully masked vector: m = -inf, l = 0, and no NaN */
    float all_masked[7];
    for (int k = 0; k < 7; k++)
        all_masked[k] = -INFINITY;
    for (int block = 1; block <= 8; block++) {
        ref_softmax_online(all_masked, 7, block, scratch, &m, &l);
        assert_true(m == -INFINITY && same_bits(l, 0.0f));
    }
    ref_softmax_stats(all_masked, 7, &m, &l);
    assert_true(m == -INFINITY && same_bits(l, 0.0f));
}

/* ---- 3. merge of partial states -------------------------------------------- */

#define MAX_D 16
#define MAX_PARTS 8

typedef struct {
    float m, l;
    float acc[MAX_D];
} pstate;

static pstate empty_state(void)
{
    pstate s;
    memset(&s, 0, sizeof s);
    s.m = -INFINITY;
    return s;
}

static pstate merge(const pstate *a, const pstate *b, int d)
{
    pstate r = empty_state();
    ref_merge(a->m, a->l, a->acc, b->m, b->l, b->acc, d, &r.m, &r.l, r.acc);
    return r;
}

/* The state of x[0..n-1] with values V (n, d), as one block of FA2 computes
 * it from an empty state. */
static pstate part_state(const float *x, int n, const float *V, int d)
{
    pstate s = empty_state();
    float p[MAX_N];
    memcpy(p, x, sizeof(float) * (size_t)n);
    float alpha = ref_online_step(p, n, &s.m, &s.l);
    assert_true(same_bits(alpha, 0.0f));      /* nothing to rescale */
    ref_pv_acc_row(s.acc, d, alpha, p, V, n);
    return s;
}

static pstate merge_tree(const pstate *parts, int lo, int hi, int d)
{
    if (hi - lo == 1)
        return parts[lo];
    int mid = lo + (hi - lo) / 2;
    pstate a = merge_tree(parts, lo, mid, d);
    pstate b = merge_tree(parts, mid, hi, d);
    return merge(&a, &b, d);
}

static int state_bits_equal(const pstate *a, const pstate *b, int d)
{
    if (!same_bits(a->m, b->m) || !same_bits(a->l, b->l))
        return 0;
    for (int c = 0; c < d; c++)
        if (!same_bits(a->acc[c], b->acc[c]))
            return 0;
    return 1;
}

/* Commutativity of one pair: returns the number of values (l and acc) whose
 * bits differ between merge(a, b) and merge(b, a). */
static int check_commutes(const pstate *a, const pstate *b, int d, long long *max_l_steps,
                          double *worst_acc)
{
    pstate ab = merge(a, b, d), ba = merge(b, a, d);
    assert_true(same_bits(ab.m, ba.m));
    long long st = steps(ab.l, ba.l);
    if (st > MERGE_COMM_L_STEPS)
        fail_msg("merge l not commutative within %d step: %a vs %a", MERGE_COMM_L_STEPS,
                 (double)ab.l, (double)ba.l);
    if (st > *max_l_steps)
        *max_l_steps = st;
    int differ = st != 0;
    float sh = ref_shift(ab.m);
    double fa = (double)ref_exp(a->m - sh), fb = (double)ref_exp(b->m - sh);
    for (int c = 0; c < d; c++) {
        double size = fabs(fa * a->acc[c]) + fabs(fb * b->acc[c]);
        double diff = fabs((double)ab.acc[c] - (double)ba.acc[c]);
        double tol = BOUND_MARGIN * MERGE_COMM_ACC_U * U * size;
        if (!(diff <= tol))
            fail_msg("merge acc[%d] not commutative: %a vs %a (tol %.3g)", c,
                     (double)ab.acc[c], (double)ba.acc[c], tol);
        if (size > 0 && diff / (U * size) > *worst_acc)
            *worst_acc = diff / (U * size);
        differ += !same_bits(ab.acc[c], ba.acc[c]);
    }
    return differ;
}

static void test_merge(void **state)
{
    (void)state;
    uint64_t rng = 0x3e6ull;
    float x[MAX_N], V[MAX_N * MAX_D];
    long long pairs = 0, pairs_differ = 0, values_differ = 0, values = 0, max_l_steps = 0;
    long long chain_tree_differ = 0, identities = 0;
    double worst_comm_acc = 0.0, worst_chain = 0.0, worst_tree = 0.0, worst_ct = 0.0;
    for (int trial = 0; trial < 3000; trial++) {
        int P = (int)tu_rand_range(&rng, 2, MAX_PARTS);
        int n = (int)tu_rand_range(&rng, P, 300);
        int d = (int)tu_rand_range(&rng, 1, MAX_D);
        int kind = trial % LOGITS_KINDS;
        gen_logits(&rng, x, n, kind);
        for (int i = 0; i < n * d; i++)
            V[i] = (float)urand(&rng, -1.0, 1.0);

        /* P - 1 distinct cut points in 1..n-1, sorted: contiguous parts */
        int cut[MAX_PARTS + 1];
        cut[0] = 0;
        cut[P] = n;
        for (int i = 1; i < P; i++) {
            int c, dup;
            do {
                c = (int)tu_rand_range(&rng, 1, n - 1);
                dup = 0;
                for (int j = 1; j < i; j++)
                    dup |= cut[j] == c;
            } while (dup);
            int j = i;
            while (j > 1 && cut[j - 1] > c) {
                cut[j] = cut[j - 1];
                j--;
            }
            cut[j] = c;
        }
        pstate parts[MAX_PARTS];
        for (int i = 0; i < P; i++) {
            assert_true(cut[i] < cut[i + 1]);
            parts[i] = part_state(x + cut[i], cut[i + 1] - cut[i], V + cut[i] * d, d);
        }

        /* (a) commutativity, every pair of parts and every chain step */
        pstate chain = parts[0];
        for (int i = 0; i < P; i++) {
            for (int j = i + 1; j < P; j++) {
                int df = check_commutes(&parts[i], &parts[j], d, &max_l_steps, &worst_comm_acc);
                pairs++;
                pairs_differ += df != 0;
                values_differ += df;
                values += d + 1;
            }
            if (i > 0) {
                int df = check_commutes(&chain, &parts[i], d, &max_l_steps, &worst_comm_acc);
                pairs++;
                pairs_differ += df != 0;
                values_differ += df;
                values += d + 1;
                chain = merge(&chain, &parts[i], d);
            }
        }

        /* (b) associativity: the left-to-right chain against a balanced tree,
         * and both against float64 */
        pstate tree = merge_tree(parts, 0, P, d);
        assert_true(same_bits(chain.m, tree.m));
        float mx = -INFINITY;
        for (int k = 0; k < n; k++)
            mx = x[k] > mx ? x[k] : mx;
        assert_true(same_bits(chain.m, mx));
        if (!state_bits_equal(&chain, &tree, d))
            chain_tree_differ++;

        /* per term: its part's sum (at most n roundings: n - 1 sum steps, or
         * n fmaf for acc), its exp, and up to P - 1 merges (MERGE_ERR_U each) */
        double merges_u = MERGE_ERR_U * (P - 1);
        for (int c = -1; c < d; c++) {           /* c = -1: l */
            double want = 0.0, w = 0.0, wa = 0.0;
            for (int k = 0; k < n; k++) {
                if (x[k] == -INFINITY)
                    continue;
                double a = (double)x[k] - (double)mx;
                double v = c < 0 ? 1.0 : (double)V[k * d + c];
                want += exp(a) * v;
                w += exp(a) * fabs(v);
                wa += exp(a) * fabs(v) * fabs(a);
            }
            float gc = c < 0 ? chain.l : chain.acc[c];
            float gt = c < 0 ? tree.l : tree.acc[c];
            double b = bound(n + merges_u, 1, n, w, wa);
            double ec = fabs((double)gc - want), et = fabs((double)gt - want);
            if (!(ec <= b) || !(et <= b))
                fail_msg("merge %s (n %d, %d parts, %s): chain %.9g tree %.9g want %.17g "
                         "bound %.3g", c < 0 ? "l" : "acc", n, P, KIND_NAME[kind], (double)gc,
                         (double)gt, want, b);
            /* chain - tree: the parts are shared, only the merges differ */
            double bct = 2.0 * BOUND_MARGIN * U * (merges_u * w + wa) + n * SUBNORMAL_ABS_ERR;
            double ect = fabs((double)gc - (double)gt);
            if (!(ect <= bct))
                fail_msg("merge chain %.9g vs tree %.9g (%s, n %d, %d parts): %.3g > %.3g",
                         (double)gc, (double)gt, c < 0 ? "l" : "acc", n, P, ect, bct);
            if (b > 0) {
                worst_chain = fmax(worst_chain, ec / b);
                worst_tree = fmax(worst_tree, et / b);
            }
            if (bct > 0)
                worst_ct = fmax(worst_ct, ect / bct);
        }

        /* (c) the empty state is an identity, bitwise, on either side */
        pstate e = empty_state();
        for (int i = 0; i <= P; i++) {
            const pstate *s = i < P ? &parts[i] : &chain;
            pstate r1 = merge(s, &e, d), r2 = merge(&e, s, d);
            if (!state_bits_equal(&r1, s, d) || !state_bits_equal(&r2, s, d))
                fail_msg("merge with the empty state changed a state (m %a l %a)",
                         (double)s->m, (double)s->l);
            identities += 2;
        }
        pstate ee = merge(&e, &e, d);
        assert_true(state_bits_equal(&ee, &e, d));

        /* out_acc may alias acc_a or acc_b: same bits as a separate output */
        pstate sep = merge(&parts[0], &parts[1], d);
        pstate al = parts[0], bl = parts[1];
        ref_merge(al.m, al.l, al.acc, bl.m, bl.l, bl.acc, d, &al.m, &al.l, al.acc);
        ref_merge(parts[0].m, parts[0].l, parts[0].acc, bl.m, bl.l, bl.acc, d, &bl.m, &bl.l,
                  bl.acc);
        assert_true(state_bits_equal(&sep, &al, d));
        assert_true(state_bits_equal(&sep, &bl, d));
    }
    printf("  merge commutativity: %lld pairs, %lld not bitwise equal (%lld of %lld values); "
           "l by at most %lld step, acc by at most %.2f u of the term sizes\n", pairs,
           pairs_differ, values_differ, values, max_l_steps, worst_comm_acc);
    printf("  merge associativity: chain and tree differ bitwise in %lld of 3000 cases; "
           "error / bound: chain %.3f, tree %.3f, chain - tree %.3f\n", chain_tree_differ,
           worst_chain, worst_tree, worst_ct);
    printf("  merge identity: %lld merges with the empty state, all bitwise identities\n",
           identities);
}

/* ---- 4. FA2 and FA1 row updates -------------------------------------------- */

typedef struct {
    float m, l;
    float o[MAX_D];
} row_state;

/* FA2 over x in blocks of bc: ref_online_step + ref_pv_acc_row per block,
 * ref_normalise_row at the end (when normalise). */
static row_state run_fa2(const float *x, int n, int bc, const float *V, int d, int normalise)
{
    row_state s;
    memset(&s, 0, sizeof s);
    s.m = -INFINITY;
    float p[MAX_N];
    for (int start = 0; start < n; start += bc) {
        int len = n - start < bc ? n - start : bc;
        memcpy(p, x + start, sizeof(float) * (size_t)len);
        float alpha = ref_online_step(p, len, &s.m, &s.l);
        ref_pv_acc_row(s.o, d, alpha, p, V + (int64_t)start * d, len);
    }
    if (normalise)
        ref_normalise_row(s.o, d, s.l);
    return s;
}

static row_state run_fa1(const float *x, int n, int bc, const float *V, int d)
{
    row_state s;
    memset(&s, 0, sizeof s);
    s.m = -INFINITY;
    float p[MAX_N];
    for (int start = 0; start < n; start += bc) {
        int len = n - start < bc ? n - start : bc;
        memcpy(p, x + start, sizeof(float) * (size_t)len);
        ref_fa1_step_row(p, len, V + (int64_t)start * d, d, s.o, &s.m, &s.l);
    }
    return s;
}

/* Most tests here give the first block of every row one real score, the
 * case fasim's FA1 always has (under the causal mask key 0 is in the first
 * block and visible to every row). A fully masked first block is tested on
 * its own in test_masked_block (ref_fa1_step_row then leaves o at 0). */
static void first_block_real(uint64_t *rng, float *x, int n, int bc)
{
    int len = bc < n ? bc : n;
    for (int k = 0; k < len; k++)
        if (x[k] != -INFINITY)
            return;
    x[tu_rand_range(rng, 0, len - 1)] = (float)urand(rng, -8.0, 8.0);
}

static void test_fa2_fa1_rows(void **state)
{
    (void)state;
    uint64_t rng = 0xfa2fa1ull;
    float x[MAX_N], V[MAX_N * MAX_D], scratch[MAX_N + 8];
    double worst_fa2 = 0.0, worst_fa1 = 0.0, worst_fa1_64 = 0.0, worst_l = 0.0, worst_l1 = 0.0;
    long long fa1_differ = 0, outputs = 0;
    int trials = 0;
    for (int trial = 0; trial < 3000; trial++) {
        int n = (int)tu_rand_range(&rng, 1, 300);
        int bc = trial % 5 == 0 ? 1 : (int)tu_rand_range(&rng, 1, n + 3);
        int d = (int)tu_rand_range(&rng, 1, MAX_D);
        int kind = trial % LOGITS_KINDS;
        int positive_v = (trial / LOGITS_KINDS) % 2;
        gen_logits(&rng, x, n, kind);
        first_block_real(&rng, x, n, bc);
        for (int i = 0; i < n * d; i++)
            V[i] = positive_v ? (float)urand(&rng, 0.5, 1.5) : (float)urand(&rng, -1.0, 1.0);
        int nb = (n + bc - 1) / bc;
        trials++;

        row_state f2 = run_fa2(x, n, bc, V, d, 1);
        row_state f1 = run_fa1(x, n, bc, V, d);

        /* m and l of FA2 are those of the online softmax, bitwise */
        float mo, lo;
        ref_softmax_online(x, n, bc, scratch, &mo, &lo);
        assert_true(same_bits(f2.m, mo) && same_bits(f2.l, lo));
        assert_true(same_bits(f1.m, mo));

        double ld, lda;
        ref_stats_f64(x, n, f2.m, &ld, &lda);
        double bl = bound((n - 1) + nb, 1 + nb, n, ld, lda);
        double el = fabs((double)f2.l - ld);
        assert_true(el <= bl);
        worst_l = fmax(worst_l, el / bl);
        /* FA1's l: per block an exp for l_t, an exp for each side of the
         * update, a product and an fmaf */
        double bl1 = bound((n - 1) + 2 * nb, 1 + 2 * nb, n, ld, lda);
        double el1 = fabs((double)f1.l - ld);
        if (!(el1 <= bl1))
            fail_msg("FA1 l %.9g vs %.17g (n %d bc %d): %.3g > %.3g", (double)f1.l, ld, n, bc,
                     el1, bl1);
        worst_l1 = fmax(worst_l1, el1 / bl1);

        for (int c = 0; c < d; c++) {
            double num = 0.0, size = 0.0;
            for (int k = 0; k < n; k++) {
                if (x[k] == -INFINITY)
                    continue;
                double w = exp((double)x[k] - (double)f2.m);
                num += w * (double)V[k * d + c];
                size += w * fabs((double)V[k * d + c]);
            }
            double want = num / ld, scale = size / ld;
            double e2 = fabs((double)f2.o[c] - want);
            if (!(e2 <= FA2_OUT_REL_TOL * scale))
                fail_msg("FA2 o[%d] (n %d bc %d d %d, %s): %.9g vs %.17g, rel err %.3g", c, n,
                         bc, d, KIND_NAME[kind], (double)f2.o[c], want, e2 / scale);
            worst_fa2 = fmax(worst_fa2, e2 / scale);
            double e12 = fabs((double)f1.o[c] - (double)f2.o[c]);
            double e1 = fabs((double)f1.o[c] - want);
            if (!(e12 <= FA1_OUT_REL_TOL * scale) || !(e1 <= FA1_OUT_REL_TOL * scale))
                fail_msg("FA1 o[%d] %.9g vs FA2 %.9g vs float64 %.17g (n %d bc %d): rel %.3g, "
                         "%.3g", c, (double)f1.o[c], (double)f2.o[c], want, n, bc,
                         e12 / scale, e1 / scale);
            worst_fa1 = fmax(worst_fa1, e12 / (U * scale));
            worst_fa1_64 = fmax(worst_fa1_64, e1 / scale);
            fa1_differ += !same_bits(f1.o[c], f2.o[c]);
            outputs++;
            assert_false(isnan(f2.o[c]) || isnan(f1.o[c]));
        }
    }
    printf("  FA2 row: %d rows, worst output error %.3g relative (tolerance %.0e); "
           "l error / bound %.3f\n", trials, worst_fa2, FA2_OUT_REL_TOL, worst_l);
    printf("  FA1 row: differs from FA2 in %lld of %lld outputs, by at most %.1f u of the "
           "term size; worst output error %.3g relative; l error / bound %.3f\n", fa1_differ,
           outputs, worst_fa1, worst_fa1_64, worst_l1);
}

/* ---- 5. fully masked blocks ------------------------------------------------- */

static void test_masked_block(void **state)
{
    (void)state;
    uint64_t rng = 0x3a5cedull;
    float x[MAX_N], V[MAX_N * MAX_D], p[MAX_N];
    long long fa1_moved = 0, fa1_outputs = 0;
    for (int trial = 0; trial < 2000; trial++) {
        int n = (int)tu_rand_range(&rng, 1, 200);
        int bc = (int)tu_rand_range(&rng, 1, n);
        int mb = (int)tu_rand_range(&rng, 1, 40);     /* the masked block's length */
        int d = (int)tu_rand_range(&rng, 1, MAX_D);
        int kind = trial % LOGITS_KINDS;
        gen_logits(&rng, x, n, kind);
        first_block_real(&rng, x, n, bc);
        for (int i = 0; i < (n + mb) * d; i++)
            V[i] = (float)urand(&rng, -1.0, 1.0);
        for (int k = n; k < n + mb; k++)
            x[k] = -INFINITY;

        /* FA2: real data, then the masked block */
        row_state s = run_fa2(x, n, bc, V, d, 0);
        assert_true(s.l >= 1.0f && isfinite(s.l));
        for (int c = 0; c < d; c++)
            assert_false(isnan(s.o[c]));
        row_state t = s;
        memcpy(p, x + n, sizeof(float) * (size_t)mb);
        float alpha = ref_online_step(p, mb, &t.m, &t.l);
        assert_true(same_bits(alpha, 1.0f));
        for (int k = 0; k < mb; k++)
            assert_true(same_bits(p[k], 0.0f));
        ref_pv_acc_row(t.o, d, alpha, p, V + (int64_t)n * d, mb);
        if (!same_bits(t.m, s.m) || !same_bits(t.l, s.l))
            fail_msg("FA2 masked block changed m/l: %a/%a -> %a/%a", (double)s.m, (double)s.l,
                     (double)t.m, (double)t.l);
        assert_int_equal(tu_compare_bits("FA2 o after masked block", t.o, s.o, d), 0);

        /* the same through the block loop, when the masked block is one of
         * the blocks: m, l and the normalised output are those without it */
        if (n % bc == 0 && mb <= bc) {
            row_state with = run_fa2(x, n + mb, bc, V, d, 1);
            row_state without = run_fa2(x, n, bc, V, d, 1);
            assert_true(same_bits(with.m, without.m) && same_bits(with.l, without.l));
            assert_int_equal(tu_compare_bits("FA2 loop", with.o, without.o, d), 0);
            float m1, l1, m2, l2, scratch[MAX_N];
            ref_softmax_online(x, n + mb, bc, scratch, &m1, &l1);
            ref_softmax_online(x, n, bc, scratch, &m2, &l2);
            assert_true(same_bits(m1, m2) && same_bits(l1, l2));
        }

        /* FA1: m and l unchanged, o within FA1_MASKED_MAX_STEPS (0: bitwise) */
        row_state f = run_fa1(x, n, bc, V, d);
        row_state g = f;
        memcpy(p, x + n, sizeof(float) * (size_t)mb);
        ref_fa1_step_row(p, mb, V + (int64_t)n * d, d, g.o, &g.m, &g.l);
        assert_true(same_bits(g.m, f.m) && same_bits(g.l, f.l));
        for (int c = 0; c < d; c++) {
            assert_false(isnan(g.o[c]));
            if (ordinal_steps(f.o[c], g.o[c]) > FA1_MASKED_MAX_STEPS)
                fail_msg("FA1 masked block moved o[%d] from %a to %a", c, (double)f.o[c],
                         (double)g.o[c]);
            fa1_moved += !same_bits(f.o[c], g.o[c]);
            fa1_outputs++;
        }
    }
    printf("  masked block: FA2 leaves m, l, o bitwise unchanged; FA1 leaves m, l unchanged "
           "and changes %lld of %lld outputs\n", fa1_moved, fa1_outputs);

    /* a masked block before real data (FA2 and FA1): the result is bitwise
     * the one without it, and nothing is NaN */
    for (int trial = 0; trial < 500; trial++) {
        int n = (int)tu_rand_range(&rng, 1, 100);
        int bc = (int)tu_rand_range(&rng, 1, 20);
        int d = (int)tu_rand_range(&rng, 1, MAX_D);
        for (int k = 0; k < bc; k++)
            x[k] = -INFINITY;
        gen_logits(&rng, x + bc, n, trial % LOGITS_KINDS);
        for (int i = 0; i < (n + bc) * d; i++)
            V[i] = (float)urand(&rng, -1.0, 1.0);
        row_state with = run_fa2(x, n + bc, bc, V, d, 1);
        row_state without = run_fa2(x + bc, n, bc, V + (int64_t)bc * d, d, 1);
        assert_true(same_bits(with.m, without.m) && same_bits(with.l, without.l));
        assert_int_equal(tu_compare_bits("FA2 leading masked block", with.o, without.o, d), 0);
        /* FA1: a fully masked first block leaves the state empty (o = 0,
         * l = 0, m = -inf) and no NaN; the result is then the one without it */
        row_state f_with = run_fa1(x, n + bc, bc, V, d);
        row_state f_without = run_fa1(x + bc, n, bc, V + (int64_t)bc * d, d);
        assert_true(same_bits(f_with.m, f_without.m) && same_bits(f_with.l, f_without.l));
        assert_int_equal(tu_compare_bits("FA1 leading masked block", f_with.o, f_without.o, d), 0);
    }
}

/* ---- 6. backward primitives ------------------------------------------------ */

/* Tile sizes of the backward tests: one tile covers the whole problem. */
#define BWD_MAX 16

/* x = 1 + 2^-12: x^2 = 1 + 2^-11 + 2^-24 needs 25 bits, so it rounds (ties to
 * even) to 1 + 2^-11, while fmaf(x, x, -1) = 2^-11 + 2^-24 exactly. A sum
 * -1 + x * x therefore tells a fused, ascending accumulation (2^-11 + 2^-24)
 * from an unfused one or a descending one (2^-11 both). */
#define ORDER_X (1.0f + 0x1p-12f)
#define ORDER_FUSED (0x1p-11f + 0x1p-24f)

static void test_bwd_row_dot(void **state)
{
    (void)state;
    uint64_t rng = 0xd07ull;
    float a[MAX_N], b[MAX_N];
    double worst = 0.0;
    for (int trial = 0; trial < 2000; trial++) {
        int n = (int)tu_rand_range(&rng, 0, 300);
        for (int k = 0; k < n; k++) {
            a[k] = nz_rand(&rng, 0.001, 2.0);
            b[k] = nz_rand(&rng, 0.001, 2.0);
        }
        float got = ref_row_dot(a, b, n);
        /* the stated order, written out: same bits */
        float hand = 0.0f;
        for (int k = 0; k < n; k++)
            hand = fmaf(a[k], b[k], hand);
        assert_true(same_bits(got, hand));
        /* ref_row_dot_acc continues the chain: the row cut into up to three
         * pieces, each continuing the last, gives the same bits */
        int k1 = (int)tu_rand_range(&rng, 0, n), k2 = (int)tu_rand_range(&rng, k1, n);
        float chain = ref_row_dot_acc(a, b, k1, 0.0f);
        chain = ref_row_dot_acc(a + k1, b + k1, k2 - k1, chain);
        chain = ref_row_dot_acc(a + k2, b + k2, n - k2, chain);
        assert_true(same_bits(chain, got));
        /* n fmaf roundings: |err| <= gamma_n sum |a b| (rigorous), plus the
         * double sum's own n 2^-53 sum |a b| */
        double want = 0.0, mag = 0.0;
        for (int k = 0; k < n; k++) {
            want += (double)a[k] * (double)b[k];
            mag += fabs((double)a[k] * (double)b[k]);
        }
        double tol = gamma_n(n) * mag + n * 0x1p-53 * mag;
        double err = fabs((double)got - want);
        if (!(err <= tol))
            fail_msg("row_dot (n %d): got %.9g want %.17g err %.3g > %.3g", n, (double)got,
                     want, err, tol);
        if (n > 0)
            worst = fmax(worst, err / (U * mag));
    }
    printf("  row_dot: 2000 dot products, worst error %.2f u of sum|a b| (bound n u)\n", worst);

    /* order witnesses: fused and ascending (see ORDER_X) */
    const float wa[2] = { -1.0f, ORDER_X }, wb[2] = { 1.0f, ORDER_X };
    assert_true(same_bits(ref_row_dot(wa, wb, 2), ORDER_FUSED));
    /* ascending from 0: 1 + 2^24 rounds to 2^24 (ties to even), then - 2^24
     * gives 0; summed from the other end it would be 1 */
    const float ua[3] = { 1.0f, 0x1p24f, -0x1p24f }, ub[3] = { 1.0f, 1.0f, 1.0f };
    assert_true(same_bits(ref_row_dot(ua, ub, 3), 0.0f));
    /* n = 0 gives +0 */
    assert_true(same_bits(ref_row_dot(ua, ub, 0), 0.0f));
}

static void test_bwd_exp_lse_row(void **state)
{
    (void)state;
    uint64_t rng = 0xe15eull;
    float x[MAX_N], s[MAX_N];
    double worst = 0.0, worst_sum = 0.0;
    for (int trial = 0; trial < 2000; trial++) {
        int n = (int)tu_rand_range(&rng, 1, 300);
        int kind = trial % LOGITS_KINDS;
        gen_logits(&rng, x, n, kind);
        /* L: the row's logsumexp in double, rounded to float (as the forward
         * pass stores it), or for one trial in four any value >= the max */
        double m = -INFINITY;
        for (int k = 0; k < n; k++)
            m = fmax(m, (double)x[k]);
        double l = 0.0;
        for (int k = 0; k < n; k++)
            l += x[k] == -INFINITY ? 0.0 : exp((double)x[k] - m);
        float L = trial % 4 ? (float)(m + log(l)) : (float)(m + urand(&rng, 0.0, 30.0));
        memcpy(s, x, sizeof(float) * (size_t)n);
        ref_exp_lse_row(s, n, L);
        double sum = 0.0, sum_bound = 0.0;
        for (int k = 0; k < n; k++) {
            /* the stated operation: ref_exp(x - ref_shift(L)), bitwise */
            assert_true(same_bits(s[k], ref_exp(x[k] - ref_shift(L))));
            if (x[k] == -INFINITY) {
                assert_true(same_bits(s[k], 0.0f));
                continue;
            }
            /* ref_exp's error plus the rounding of its argument x - L
             * (|x - L| u relative, see the top of the file) */
            double a = (double)x[k] - (double)L;
            double want = exp(a);
            double tol = BOUND_MARGIN * U * (EXP_ERR_U + fabs(a)) * want + SUBNORMAL_ABS_ERR;
            double err = fabs((double)s[k] - want);
            if (!(err <= tol))
                fail_msg("exp_lse_row (n %d, %s): exp(%.9g - %.9g) = %.9g, want %.17g", n,
                         KIND_NAME[kind], (double)x[k], (double)L, (double)s[k], want);
            if (want > 0x1p-126)
                worst = fmax(worst, err / (U * want));
            sum += s[k];
            sum_bound += tol;
        }
        /* the row sums to sum_k e^(x_k - L) = l e^(m - L) within the terms'
         * bounds and the double sums' own rounding; with L the rounded
         * logsumexp that is 1 up to L's rounding, |L| u (printed) */
        double exact = l * exp(m - (double)L);
        double err = fabs(sum - exact);
        assert_true(err <= sum_bound + 4.0 * n * 0x1p-53 * exact);
        if (trial % 4)
            worst_sum = fmax(worst_sum, fabs(sum - 1.0));
    }
    printf("  exp_lse_row: worst error %.2f u relative (bound (3 + |x - L|) u); rows of P "
           "sum to 1 within %.2e (L's own rounding, |L| u with |L| up to 1e4)\n", worst,
           worst_sum);

    /* a row that saw no key: L = -inf and all scores -inf give 0s, no NaN */
    float empty[5] = { -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY };
    ref_exp_lse_row(empty, 5, -INFINITY);
    for (int k = 0; k < 5; k++)
        assert_true(same_bits(empty[k], 0.0f));
    /* an exact case: a score equal to L gives e^0 = 1 exactly, a masked one 0 */
    float one[2] = { 3.5f, -INFINITY };
    ref_exp_lse_row(one, 2, 3.5f);
    assert_true(same_bits(one[0], 1.0f) && same_bits(one[1], 0.0f));
}

static void test_bwd_ds(void **state)
{
    (void)state;
    uint64_t rng = 0xd5ull;
    float P[BWD_MAX * BWD_MAX], dP[BWD_MAX * BWD_MAX], D[BWD_MAX], dS[BWD_MAX * BWD_MAX];
    double worst = 0.0;
    for (int trial = 0; trial < 2000; trial++) {
        int br = (int)tu_rand_range(&rng, 1, BWD_MAX);
        int bc = (int)tu_rand_range(&rng, 1, BWD_MAX);
        for (int i = 0; i < br * bc; i++) {
            P[i] = (float)urand(&rng, 0.001, 1.0);
            if (tu_rand(&rng) % 5 == 0)
                P[i] = 0.0f;                     /* a masked entry */
            dP[i] = nz_rand(&rng, 0.001, 2.0);
        }
        for (int r = 0; r < br; r++)
            D[r] = nz_rand(&rng, 0.001, 2.0);
        ref_tile_ds(P, dP, D, br, bc, dS);
        for (int r = 0; r < br; r++) {
            for (int c = 0; c < bc; c++) {
                int i = r * bc + c;
                /* the stated operation, bitwise: a subtraction then a product */
                float hand = P[i] * (dP[i] - D[r]);
                assert_true(same_bits(dS[i], hand));
                if (P[i] == 0.0f) {
                    assert_true(dS[i] == 0.0f);
                    continue;
                }
                /* two roundings: |err| <= gamma_2 |P (dP - D)|. In double,
                 * dP - D is exact (the two floats' exponents differ by under
                 * 12, so the difference needs under 53 bits) and the product
                 * is rounded once more, 2^-53 relative. */
                double want = (double)P[i] * ((double)dP[i] - (double)D[r]);
                double tol = (gamma_n(2) + 0x1p-53) * fabs(want);
                double err = fabs((double)dS[i] - want);
                if (!(err <= tol))
                    fail_msg("ds[%d][%d]: got %.9g want %.17g", r, c, (double)dS[i], want);
                if (want != 0.0)
                    worst = fmax(worst, err / (U * fabs(want)));
            }
        }
        /* dS may alias dP: same bits in place */
        ref_tile_ds(P, dP, D, br, bc, dP);
        assert_int_equal(tu_compare_bits("ds in place", dP, dS, br * bc), 0);
    }
    printf("  tile_ds: worst error %.2f u relative (bound 2 u)\n", worst);
}

/* One accumulation and its checks: acc0 + scale * op(A) B against double
 * with the rigorous bound gamma_(n+1) (|scale| sum |a b| + |acc0|) (n fmaf
 * roundings of the sum and one of the final fmaf), and bitwise against the
 * stated order written out. tn: A (rows, acols), out (acols, d), n = rows;
 * nn: A (rows, k), out (rows, d), n = k. Returns the worst error in u of
 * |scale| sum |a b| + |acc0|. */
static double check_acc(int tn, int rows, int cols, int d, float scale, const float *A,
                        const float *B, const float *acc0)
{
    float got[BWD_MAX * BWD_MAX * 4];
    int out_rows = tn ? cols : rows, n = tn ? rows : cols;
    memcpy(got, acc0, sizeof(float) * (size_t)(out_rows * d));
    if (tn)
        ref_tile_acc_tn(got, A, B, rows, cols, d, scale);
    else
        ref_tile_acc_nn(got, A, B, rows, cols, d, scale);
    double worst = 0.0;
    for (int o = 0; o < out_rows; o++) {
        for (int t = 0; t < d; t++) {
            float hs = 0.0f;
            double want = 0.0, mag = 0.0;
            for (int j = 0; j < n; j++) {
                float a = tn ? A[j * cols + o] : A[o * cols + j];
                float b = B[j * d + t];
                hs = fmaf(a, b, hs);
                want += (double)a * (double)b;
                mag += fabs((double)a * (double)b);
            }
            int i = o * d + t;
            float hand = fmaf(scale, hs, acc0[i]);
            if (!same_bits(got[i], hand))
                fail_msg("acc_%s[%d][%d] (rows %d cols %d d %d): %a, the stated order gives %a",
                         tn ? "tn" : "nn", o, t, rows, cols, d, (double)got[i], (double)hand);
            want = (double)scale * want + (double)acc0[i];
            double size = fabs((double)scale) * mag + fabs((double)acc0[i]);
            double tol = gamma_n(n + 1) * size + (n + 1) * 0x1p-53 * size;
            double err = fabs((double)got[i] - want);
            if (!(err <= tol))
                fail_msg("acc_%s[%d][%d] (rows %d cols %d d %d): got %.9g want %.17g err %.3g "
                         "> %.3g", tn ? "tn" : "nn", o, t, rows, cols, d, (double)got[i], want,
                         err, tol);
            worst = fmax(worst, err / (U * size));
        }
    }
    return worst;
}

static void test_bwd_acc(void **state)
{
    (void)state;
    uint64_t rng = 0xacc7ull;
    enum { CAP = BWD_MAX * BWD_MAX * 4 };
    float A[CAP], At[CAP], B[CAP], acc0[CAP];
    double worst_tn = 0.0, worst_nn = 0.0;
    for (int trial = 0; trial < 1000; trial++) {
        int rows = (int)tu_rand_range(&rng, 1, BWD_MAX);
        int cols = (int)tu_rand_range(&rng, 1, BWD_MAX);
        int d = (int)tu_rand_range(&rng, 1, 4 * BWD_MAX);
        float scale = trial % 3 == 0 ? 1.0f
                    : trial % 3 == 1 ? 1.0f / sqrtf((float)d) : (float)urand(&rng, 0.01, 4.0);
        for (int i = 0; i < rows * cols; i++)
            A[i] = nz_rand(&rng, 0.001, 2.0);
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++)
                At[c * rows + r] = A[r * cols + c];
        int brows = rows > cols ? rows : cols;
        for (int i = 0; i < brows * d; i++)
            B[i] = nz_rand(&rng, 0.001, 2.0);
        for (int i = 0; i < brows * d; i++)
            acc0[i] = nz_rand(&rng, 0.001, 2.0);
        /* tn: A (rows, cols), B (rows, d); nn: A (rows, cols), B (cols, d) */
        worst_tn = fmax(worst_tn, check_acc(1, rows, cols, d, scale, A, B, acc0));
        worst_nn = fmax(worst_nn, check_acc(0, rows, cols, d, scale, A, B, acc0));
        /* A^T B by tn equals (A^T) B by nn with A transposed explicitly,
         * bitwise: both sum over the rows of A in ascending order */
        float x1[CAP], x2[CAP];
        memcpy(x1, acc0, sizeof(float) * (size_t)(cols * d));
        memcpy(x2, acc0, sizeof(float) * (size_t)(cols * d));
        ref_tile_acc_tn(x1, A, B, rows, cols, d, scale);
        ref_tile_acc_nn(x2, At, B, cols, rows, d, scale);
        assert_int_equal(tu_compare_bits("tn vs nn of the transpose", x1, x2, cols * d), 0);
    }
    printf("  acc_tn / acc_nn: 1000 accumulations each, worst error %.2f / %.2f u of "
           "|scale| sum|a b| + |acc| (bound n + 1 u)\n", worst_tn, worst_nn);

    /* order witnesses. The sum: fused and ascending (see ORDER_X); scale 1
     * and acc 0 leave it as it is. */
    {
        const float a[2] = { -1.0f, ORDER_X }, b[2] = { 1.0f, ORDER_X };
        float acc = 0.0f;
        ref_tile_acc_tn(&acc, a, b, 2, 1, 1, 1.0f);      /* A (2, 1), B (2, 1) */
        assert_true(same_bits(acc, ORDER_FUSED));
        acc = 0.0f;
        ref_tile_acc_nn(&acc, a, b, 1, 2, 1, 1.0f);      /* A (1, 2), B (2, 1) */
        assert_true(same_bits(acc, ORDER_FUSED));
    }
    /* the update: fmaf(scale, s, acc), fused, scale applied once to the sum:
     * s = x, scale = x, acc = -1 gives x^2 - 1 exactly */
    {
        const float a = ORDER_X, b = 1.0f;
        float acc = -1.0f;
        ref_tile_acc_tn(&acc, &a, &b, 1, 1, 1, ORDER_X);
        assert_true(same_bits(acc, ORDER_FUSED));
        acc = -1.0f;
        ref_tile_acc_nn(&acc, &a, &b, 1, 1, 1, ORDER_X);
        assert_true(same_bits(acc, ORDER_FUSED));
    }
    /* the sum starts from 0.0f, not from acc: with acc = 2^24, adding the
     * terms 1 and 1 one at a time into acc would round each away (ties to
     * even) and leave 2^24; summed first they give 2^24 + 2 */
    {
        const float a[2] = { 1.0f, 1.0f }, b[2] = { 1.0f, 1.0f };
        float acc = 0x1p24f;
        ref_tile_acc_tn(&acc, a, b, 2, 1, 1, 1.0f);
        assert_true(same_bits(acc, 0x1p24f + 2.0f));
        acc = 0x1p24f;
        ref_tile_acc_nn(&acc, a, b, 1, 2, 1, 1.0f);
        assert_true(same_bits(acc, 0x1p24f + 2.0f));
    }
}

/*
 * The backward primitives composed on one tile that covers the whole problem,
 * in the order FA2's Algorithm 2 applies them, against the float64 oracle:
 *   S = scale Q K^T, masked;  P = exp(S - L)  (L from the oracle, as float)
 *   dP = dO V^T;  D = rowsum(dO o O)  (O from the oracle, as float)
 *   dS = P o (dP - D);  dV = P^T dO;  dK = scale dS^T Q;  dQ = scale dS K.
 * Tolerance: fasim's float32 target is 1e-5 of the max-norm, but a float
 * result can only be held to the size of the terms it is made of, and the
 * gradients cancel: dS's rows sum to zero, so with two keys a dQ of 6e-4 can
 * come from terms of 1e-1 (Nq = 1, Nk = 2 here gave 2.9e-5 of dQ's
 * max-norm). So the error of each gradient is bounded by 80 u = 4.8e-6 (under
 * the 1e-5 target) of its largest term size, computed in double below with
 * the gradient formulas on absolute values (|dP|, |D|, |K|, ...); where there
 * is no cancellation the term size is the max-norm itself. Why 80 u: a
 * first-order count of the roundings that reach one entry is d + 1 in dP and
 * in D, 2 in dS, N + 1 in the final sum, 3 u + |S - L| u in the exp and |L| u
 * from L's rounding, and the score's (d + 1) u |S| absolute error, which is a
 * relative error of P: with |S| <= 16 here the worst case is over 300 u, but
 * errors of random sign grow like the square root of their count. Measured
 * (printed), the worst is 0.10 of the bound (8 u, in dV): a margin of 10.
 * The error relative to the max-norm is printed too.
 */
#define BWD_TILE_TERM_TOL (80.0 * 5.9604644775390625e-8)   /* 80 u, u = 2^-24 */

/* The term sizes of one gradient entry, max over entries: the gradient
 * formulas with every factor replaced by its absolute value. P and the
 * oracle's O are exact enough in double. */
static void bwd_term_sizes(const float *Q, const float *K, const float *V, const float *dO,
                           const double *O, const double *L, int Nq, int Nk, int d,
                           const ref_mask *mk, double T[3])
{
    const double scale = 1.0 / sqrt((double)d);
    T[0] = T[1] = T[2] = 0.0;
    double tq[16 * 16] = { 0 }, tk[16 * 16] = { 0 }, tv[16 * 16] = { 0 };
    for (int r = 0; r < Nq; r++) {
        double Dabs = 0.0;
        for (int t = 0; t < d; t++)
            Dabs += fabs((double)dO[r * d + t] * O[r * d + t]);
        for (int c = 0; c < Nk; c++) {
            if (!ref_mask_visible(mk, r, c) || L[r] == -INFINITY)
                continue;
            double s = 0.0, dp = 0.0;
            for (int t = 0; t < d; t++) {
                s += (double)Q[r * d + t] * K[c * d + t];
                dp += fabs((double)dO[r * d + t] * V[c * d + t]);
            }
            const double P = exp(scale * s - L[r]), ds = P * (dp + Dabs);
            for (int t = 0; t < d; t++) {
                tq[r * d + t] += scale * ds * fabs((double)K[c * d + t]);
                tk[c * d + t] += scale * ds * fabs((double)Q[r * d + t]);
                tv[c * d + t] += P * fabs((double)dO[r * d + t]);
            }
        }
    }
    for (int i = 0; i < 16 * 16; i++) {
        T[0] = fmax(T[0], tq[i]);
        T[1] = fmax(T[1], tk[i]);
        T[2] = fmax(T[2], tv[i]);
    }
}

static void test_bwd_tile_vs_oracle(void **state)
{
    (void)state;
    enum { NMAX = BWD_MAX, DMAX = BWD_MAX };
    float Q[NMAX * DMAX], K[NMAX * DMAX], V[NMAX * DMAX], dO[NMAX * DMAX], Of[NMAX * DMAX];
    float S[NMAX * NMAX], dS[NMAX * NMAX], D[NMAX];
    float dQ[NMAX * DMAX], dK[NMAX * DMAX], dV[NMAX * DMAX];
    double O[NMAX * DMAX], L[NMAX], wQ[NMAX * DMAX], wK[NMAX * DMAX], wV[NMAX * DMAX];
    uint64_t rng = 0xbac4ull;
    double worst[3] = { 0.0, 0.0, 0.0 }, worst_rel[3] = { 0.0, 0.0, 0.0 };
    int no_key_rows = 0, over_target = 0;
    for (int trial = 0; trial < 600; trial++) {
        int Nq = (int)tu_rand_range(&rng, 1, NMAX);
        int Nk = (int)tu_rand_range(&rng, 1, NMAX);
        int d = (int)tu_rand_range(&rng, 1, DMAX);
        ref_mask mk = { 0, 0, 0, NULL };
        switch (trial % 4) {
        case 1:                                  /* causal, queries last */
            mk.causal = 1;
            mk.offset = Nk - Nq;
            break;
        case 2:                                  /* causal with a window */
            mk.causal = 1;
            mk.offset = Nk - Nq;
            mk.window = tu_rand_range(&rng, 1, Nk);
            break;
        case 3:                                  /* any offset: some rows may see no key */
            mk.causal = 1;
            mk.offset = tu_rand_range(&rng, -4, Nk);
            break;
        }
        for (int i = 0; i < Nq * d; i++) {
            Q[i] = nz_rand(&rng, 0.01, 2.0);
            dO[i] = nz_rand(&rng, 0.01, 2.0);
        }
        for (int i = 0; i < Nk * d; i++) {
            K[i] = nz_rand(&rng, 0.01, 2.0);
            V[i] = nz_rand(&rng, 0.01, 2.0);
        }
        float scale = 1.0f / sqrtf((float)d);
        assert_int_equal(ref_oracle_attention_masked(Q, K, V, Nq, Nk, d, &mk, O, L), 0);
        assert_int_equal(ref_oracle_attention_bwd(Q, K, V, dO, Nq, Nk, d, &mk, wQ, wK, wV), 0);
        for (int i = 0; i < Nq * d; i++)
            Of[i] = (float)O[i];

        ref_tile_scores(Q, K, Nq, Nk, d, scale, S);
        ref_tile_mask(S, Nq, Nk, 0, 0, &mk);
        for (int r = 0; r < Nq; r++) {
            ref_exp_lse_row(S + r * Nk, Nk, (float)L[r]);            /* S <- P */
            D[r] = ref_row_dot(dO + r * d, Of + r * d, d);
            no_key_rows += L[r] == -INFINITY;
        }
        ref_tile_scores(dO, V, Nq, Nk, d, 1.0f, dS);                  /* dP */
        ref_tile_ds(S, dS, D, Nq, Nk, dS);                            /* dS, in place */
        memset(dQ, 0, sizeof dQ);
        memset(dK, 0, sizeof dK);
        memset(dV, 0, sizeof dV);
        ref_tile_acc_tn(dV, S, dO, Nq, Nk, d, 1.0f);
        ref_tile_acc_tn(dK, dS, Q, Nq, Nk, d, scale);
        ref_tile_acc_nn(dQ, dS, K, Nq, Nk, d, scale);

        const float *got[3] = { dQ, dK, dV };
        const double *want[3] = { wQ, wK, wV };
        const int64_t n[3] = { (int64_t)Nq * d, (int64_t)Nk * d, (int64_t)Nk * d };
        static const char *const name[3] = { "dQ", "dK", "dV" };
        double T[3];
        bwd_term_sizes(Q, K, V, dO, O, L, Nq, Nk, d, &mk, T);
        for (int g = 0; g < 3; g++) {
            ref_error e = ref_compare(got[g], want[g], n[g]);
            if (T[g] == 0.0) {
                /* nothing flows here (no row sees a key): the float result
                 * is exactly 0 too */
                assert_true(e.max_abs == 0.0);
                continue;
            }
            const double bound = BWD_TILE_TERM_TOL * T[g];
            if (!(e.max_abs <= bound)) {
                (void)tu_compare_f64(name[g], got[g], want[g], n[g], bound);
                fail_msg("%s (Nq %d Nk %d d %d, causal %d offset %lld window %lld): error %.3g "
                         "= %.2f x the bound at %lld", name[g], Nq, Nk, d, mk.causal,
                         (long long)mk.offset, (long long)mk.window, e.max_abs,
                         e.max_abs / bound, (long long)e.worst_index);
            }
            worst[g] = fmax(worst[g], e.max_abs / bound);
            worst_rel[g] = fmax(worst_rel[g], e.max_rel);
            if (e.max_rel > 1e-5) {
                /* over the max-norm target only where the terms are much
                 * larger than the result: cancellation, not a loose primitive */
                double norm = 0.0;
                for (int64_t i = 0; i < n[g]; i++)
                    norm = fmax(norm, fabs(want[g][i]));
                if (!(T[g] > 10.0 * norm))
                    fail_msg("%s (Nq %d Nk %d d %d): error %.3g of the max-norm without "
                             "cancellation (term size %.3g, max-norm %.3g)", name[g], Nq, Nk, d,
                             e.max_rel, T[g], norm);
                over_target++;
            }
        }
    }
    printf("  backward on one tile vs oracle: 600 problems (%d rows with no key), worst error "
           "/ (80 u of the term sizes): dQ %.3f dK %.3f dV %.3f\n", no_key_rows, worst[0],
           worst[1], worst[2]);
    printf("  the same relative to the max-norm: dQ %.2e dK %.2e dV %.2e (%d of 1800 "
           "gradients over 1e-5, each with terms over 10 x its max-norm)\n", worst_rel[0],
           worst_rel[1], worst_rel[2], over_target);
    assert_true(no_key_rows > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fmaf_via_double),
        cmocka_unit_test(test_scores_match_double),
        cmocka_unit_test(test_mask_causal),
        cmocka_unit_test(test_softmax_online_vs_onepass),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_fa2_fa1_rows),
        cmocka_unit_test(test_masked_block),
        cmocka_unit_test(test_bwd_row_dot),
        cmocka_unit_test(test_bwd_exp_lse_row),
        cmocka_unit_test(test_bwd_ds),
        cmocka_unit_test(test_bwd_acc),
        cmocka_unit_test(test_bwd_tile_vs_oracle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
