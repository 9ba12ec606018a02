/*
 * test_simd.c — the vector paths of the tile products (reference/ref_simd.h)
 * give the bits of ref_tile.h's scalar loops, their specification: every
 * path this CPU runs, forced in turn, on random tiles of every awkward size
 * (B_c and d below, at and past a multiple of each path's lanes; d = 1, 3,
 * 64, 80, 128; tiles large enough for the heap scratch), compared byte for
 * byte; and the exps of a row (ref_exp's steps side by side) over a sweep of
 * the whole float range. The inputs span many exponents and signs, with zeros and signed
 * zeros among them, so that an unfused multiply-add, or a sum taken in
 * another order, would change some output (checked: an unfused version of
 * the scores differs from ref_tile_scores on the same inputs).
 */
#define _POSIX_C_SOURCE 200809L   /* setenv */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_rng.h"
#include "ref_simd.h"
#include "ref_tile.h"

static const int BRS[] = { 1, 3, 4, 5, 9, 64 };
static const int BCS[] = { 1, 3, 4, 7, 8, 15, 16, 17, 33, 64, 100 };
static const int DS[] = { 1, 3, 64, 80, 128 };
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Values of many magnitudes and both signs, some exactly 0 or -0. */
static void fill(ref_rng *r, float *x, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        const uint64_t u = ref_rng_next(r);
        const int kind = (int)(u % 16);
        float v = ref_rng_normalish(r) * ldexpf(1.0f, (int)(u >> 8) % 17 - 8);
        x[k] = kind == 0 ? 0.0f : kind == 1 ? -0.0f : v;
    }
}

/* Probabilities as a softmax leaves them: in [0, 1], with zeros (masked). */
static void fill_p(ref_rng *r, float *x, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        x[k] = ref_rng_next(r) % 8 == 0 ? 0.0f : ref_rng_uniform(r);
}

static float *alloc_f(int64_t n)
{
    float *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    assert_non_null(x);
    return x;
}

/* The paths this CPU runs, besides scalar; prints which are skipped. */
static int paths(ref_simd out[REF_SIMD_COUNT])
{
    int n = 0;
    for (int s = REF_SIMD_SCALAR + 1; s < REF_SIMD_COUNT; s++) {
        if (ref_simd_supported((ref_simd)s))
            out[n++] = (ref_simd)s;
        else
            printf("  path %s: not run by this CPU, skipped\n", ref_simd_name((ref_simd)s));
    }
    return n;
}

/* FASIM_SIMD caps the path chosen at the first product. Runs first, before
 * any test forces one. */
static void test_env_caps_path(void **state)
{
    (void)state;
    assert_int_equal(setenv("FASIM_SIMD", "scalar", 1), 0);
    assert_int_equal(ref_simd_active(), REF_SIMD_SCALAR);
    ref_simd s;
    assert_int_equal(ref_simd_parse("avx512", &s), 0);
    assert_int_equal(s, REF_SIMD_AVX512);
    assert_int_equal(ref_simd_parse("sse2", &s), -1);
    assert_string_equal(ref_simd_name(REF_SIMD_AVX2), "avx2");
    assert_int_equal(ref_simd_force(REF_SIMD_SCALAR), 0);
    assert_int_equal(ref_simd_force(REF_SIMD_COUNT), -1);
}

static void test_scores_bits(void **state)
{
    (void)state;
    ref_simd ps[REF_SIMD_COUNT];
    const int np = paths(ps);
    ref_rng r = ref_rng_seed(11);
    int cases = 0, unfused_differs = 0;
    for (int a = 0; a < COUNT(BRS); a++)
        for (int b = 0; b < COUNT(BCS); b++)
            for (int c = 0; c < COUNT(DS); c++) {
                const int br = BRS[a], bc = BCS[b], d = DS[c];
                float *Q = alloc_f((int64_t)br * d), *K = alloc_f((int64_t)bc * d);
                float *want = alloc_f((int64_t)br * bc), *got = alloc_f((int64_t)br * bc);
                fill(&r, Q, (int64_t)br * d);
                fill(&r, K, (int64_t)bc * d);
                const float scale = 1.0f / sqrtf((float)d);
                ref_tile_scores(Q, K, br, bc, d, scale, want);
                /* The sensitivity of the comparison: the same sums unfused. */
                for (int i = 0; i < br * bc && !unfused_differs; i++) {
                    volatile float acc = 0.0f;
                    for (int t = 0; t < d; t++) {
                        volatile float prod = Q[(i / bc) * d + t] * K[(i % bc) * d + t];
                        acc = acc + prod;
                    }
                    unfused_differs = memcmp(&(float){ acc * scale }, &want[i], 4) != 0;
                }
                for (int k = 0; k < np; k++) {
                    assert_int_equal(ref_simd_force(ps[k]), 0);
                    memset(got, 0xff, (size_t)br * bc * sizeof *got);
                    ref_simd_scores(Q, K, br, bc, d, scale, got);
                    if (memcmp(got, want, (size_t)br * bc * sizeof *got) != 0)
                        fail_msg("scores differ on path %s, br %d bc %d d %d",
                                 ref_simd_name(ps[k]), br, bc, d);
                    cases++;
                }
                free(Q);
                free(K);
                free(want);
                free(got);
            }
    assert_true(unfused_differs);
    printf("  scores: %d cases bit-identical over %d vector paths\n", cases, np);
}

/* ref_pv_acc_row (alpha given, or 1 for every row) and ref_fa1_out_row
 * (some rows with l_new = 0, which must stay as they are). */
static void test_pv_bits(void **state)
{
    (void)state;
    ref_simd ps[REF_SIMD_COUNT];
    const int np = paths(ps);
    ref_rng r = ref_rng_seed(12);
    int cases = 0;
    for (int a = 0; a < COUNT(BRS); a++)
        for (int b = 0; b < COUNT(BCS); b++)
            for (int c = 0; c < COUNT(DS); c++)
                for (int kind = 0; kind < 3; kind++) {
                    const int br = BRS[a], bc = BCS[b], d = DS[c];
                    const int64_t no = (int64_t)br * d;
                    float *P = alloc_f((int64_t)br * bc), *V = alloc_f((int64_t)bc * d);
                    float *O = alloc_f(no), *want = alloc_f(no), *got = alloc_f(no);
                    float *alpha = alloc_f(br);
                    ref_fa1_weights *w = malloc((size_t)br * sizeof *w);
                    assert_non_null(w);
                    fill_p(&r, P, (int64_t)br * bc);
                    fill(&r, V, (int64_t)bc * d);
                    fill(&r, O, no);
                    fill_p(&r, alpha, br);
                    for (int i = 0; i < br; i++) {
                        w[i].b = ref_rng_uniform(&r);
                        w[i].la = ref_rng_uniform(&r) * 3.0f;
                        w[i].l_new = i % 4 == 2 ? 0.0f : 0.5f + ref_rng_uniform(&r) * 7.0f;
                    }
                    memcpy(want, O, (size_t)no * sizeof *O);
                    for (int i = 0; i < br; i++) {
                        float *o = want + (int64_t)i * d;
                        const float *p = P + (int64_t)i * bc;
                        if (kind == 2)
                            ref_fa1_out_row(o, d, w[i], p, V, bc);
                        else
                            ref_pv_acc_row(o, d, kind == 0 ? alpha[i] : 1.0f, p, V, bc);
                    }
                    for (int k = 0; k < np; k++) {
                        assert_int_equal(ref_simd_force(ps[k]), 0);
                        memcpy(got, O, (size_t)no * sizeof *O);
                        if (kind == 2)
                            ref_simd_fa1_out(got, d, w, P, V, br, bc);
                        else
                            ref_simd_pv_acc(got, d, kind == 0 ? alpha : NULL, P, V, br, bc);
                        if (memcmp(got, want, (size_t)no * sizeof *got) != 0)
                            fail_msg("%s differs on path %s, br %d bc %d d %d",
                                     kind == 2 ? "fa1 out" : "pv acc", ref_simd_name(ps[k]),
                                     br, bc, d);
                        cases++;
                    }
                    free(P);
                    free(V);
                    free(O);
                    free(want);
                    free(got);
                    free(alpha);
                    free(w);
                }
    printf("  P V: %d cases bit-identical over %d vector paths\n", cases, np);
}

/* The exps of a row, FA2's line 9 and the normalising pass built on them: ref_exp over a sweep
 * of every 4099th bit pattern (all signs, NaNs, infinities, subnormals,
 * the cut-offs at 89 and -104 and the results that round into the
 * subnormal range), shifted by 0 and by row maxima, in rows of every
 * length up to 40. */
static void test_exp_bits(void **state)
{
    (void)state;
    ref_simd ps[REF_SIMD_COUNT];
    const int np = paths(ps);
    enum { ROW = 4096 };
    static float x[ROW], want[ROW], got[ROW];
    const float edges[] = { 0.0f, -0.0f, REF_INF, -REF_INF, 89.0f, 89.000008f, 88.72f,
                            -104.0f, -104.00001f, -87.3f, -103.9f, 1e-30f, -1e-30f };
    int64_t checked = 0;
    for (uint64_t u = 0; u < (UINT64_C(1) << 32); u += (uint64_t)ROW * 4099) {
        for (int k = 0; k < ROW; k++)
            x[k] = ref_u2f((uint32_t)(u + (uint64_t)k * 4099));
        memcpy(x, edges, sizeof edges);
        for (int shift = 0; shift < 2; shift++) {
            const float m = shift ? 3.5f : -REF_INF;     /* -inf: a shift of 0 */
            memcpy(want, x, sizeof x);
            const float lw = ref_exp_shift_sum(want, ROW, m);
            for (int k = 0; k < np; k++) {
                assert_int_equal(ref_simd_force(ps[k]), 0);
                memcpy(got, x, sizeof x);
                const float lg = ref_simd_exp_shift_sum(got, ROW, m);
                if (memcmp(got, want, sizeof got) != 0 || memcmp(&lg, &lw, 4) != 0)
                    fail_msg("exp differs on path %s near bits %08llx", ref_simd_name(ps[k]),
                             (unsigned long long)u);
                checked += ROW;
            }
        }
    }
    ref_rng r = ref_rng_seed(13);
    for (int n = 1; n <= 40; n++) {
        float s[40], sw[40];
        fill(&r, s, n);
        for (int k = 0; k < n; k++)
            s[k] *= 16.0f;
        const float m0 = n % 3 == 0 ? -REF_INF : ref_rng_normalish(&r), l0 = 2.5f;
        float mw = m0, lw = l0;
        memcpy(sw, s, sizeof s);
        const float aw = ref_online_step(sw, n, &mw, &lw);
        for (int k = 0; k < np; k++) {
            float sg[40], mg = m0, lg = l0;
            assert_int_equal(ref_simd_force(ps[k]), 0);
            memcpy(sg, s, sizeof s);
            const float ag = ref_simd_online_step(sg, n, &mg, &lg);
            assert_memory_equal(sg, sw, (size_t)n * sizeof(float));
            assert_memory_equal(&ag, &aw, 4);
            assert_memory_equal(&mg, &mw, 4);
            assert_memory_equal(&lg, &lw, 4);
            float pw[40], pg[40];                   /* the normalising pass */
            ref_exp_normalise(s, pw, n, mw, 1.0f / lw);
            ref_simd_exp_normalise(s, pg, n, mw, 1.0f / lw);
            assert_memory_equal(pg, pw, (size_t)n * sizeof(float));
            memcpy(pg, s, sizeof s);
            ref_simd_exp_normalise(pg, pg, n, mw, 1.0f / lw);
            assert_memory_equal(pg, pw, (size_t)n * sizeof(float));
        }
    }
    printf("  exp: %lld values bit-identical over %d vector paths\n", (long long)checked, np);
}

/* Forcing a path the CPU lacks changes nothing; the scalar path is always
 * there and computes the specification itself. */
static void test_force(void **state)
{
    (void)state;
    for (int s = 0; s < REF_SIMD_COUNT; s++) {
        const int ok = ref_simd_supported((ref_simd)s);
        assert_true(s != REF_SIMD_SCALAR || ok);
        assert_int_equal(ref_simd_force(REF_SIMD_SCALAR), 0);
        assert_int_equal(ref_simd_force((ref_simd)s), ok ? 0 : -1);
        assert_int_equal(ref_simd_active(), ok ? (ref_simd)s : REF_SIMD_SCALAR);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_caps_path),
        cmocka_unit_test(test_scores_bits),
        cmocka_unit_test(test_pv_bits),
        cmocka_unit_test(test_exp_bits),
        cmocka_unit_test(test_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
