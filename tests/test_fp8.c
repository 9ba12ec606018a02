/*
 * test_fp8.c — the fp8 formats and the Hadamard transform of
 * reference/ref_fp8.h, and the outlier inputs of reference/ref_rng.h.
 *
 * Expected values are computed here, independently of the code under test:
 * each of the 256 codes of a format is decoded by the OCP spec's formula
 * ((-1)^s 2^(e - bias) (1 + m / 2^M), or 2^(1 - bias) m / 2^M for e = 0) with
 * ldexp in double; rounding is checked against a nearest-value search over
 * those values (ties to the code whose last mantissa bit is 0, magnitudes
 * beyond the largest finite value saturating to it, as __NV_SATFINITE
 * converts). The Hadamard transform is checked against the definition of
 * orthogonality: Q K^T computed in double before and after.
 */
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
#include "ref_tile.h"
#include "test_util.h"

typedef struct {
    int fmt, ebits, mbits, bias;
    double max;
    const char *name;
} fmt_info;

static const fmt_info FMTS[2] = {
    { REF_FP8_E4M3, 4, 3, 7, 448.0, "e4m3" },
    { REF_FP8_E5M2, 5, 2, 15, 57344.0, "e5m2" },
};

/* Decode code c by the spec's formula; *kind: 0 finite, 1 inf, 2 NaN. */
static double spec_value(const fmt_info *f, unsigned c, int *kind)
{
    const unsigned s = c >> 7, e = (c >> f->mbits) & ((1u << f->ebits) - 1u);
    const unsigned m = c & ((1u << f->mbits) - 1u);
    const unsigned emax = (1u << f->ebits) - 1u;
    *kind = 0;
    if (f->fmt == REF_FP8_E4M3 && e == emax && m == (1u << f->mbits) - 1u)
        *kind = 2;                       /* e4m3: S.1111.111 is NaN, no inf */
    if (f->fmt == REF_FP8_E5M2 && e == emax)
        *kind = m ? 2 : 1;               /* e5m2: IEEE-like */
    if (*kind == 2)
        return NAN;
    if (*kind == 1)
        return s ? -INFINITY : INFINITY;
    double v = e == 0 ? ldexp((double)m, 1 - f->bias - f->mbits)
                      : ldexp(1.0 + (double)m / (double)(1u << f->mbits), (int)e - f->bias);
    return s ? -v : v;
}

/* The finite non-negative values of f in increasing order, with their codes. */
static int finite_values(const fmt_info *f, double *v, unsigned *code)
{
    int n = 0;
    for (unsigned c = 0; c < 128; c++) {
        int kind;
        double x = spec_value(f, c, &kind);
        if (kind == 0) {
            v[n] = x;
            code[n++] = c;
        }
    }
    return n;   /* codes 0..127 of finite values are already in order */
}

/* The nearest finite value to x, ties to the even code, saturating. */
static double spec_round(const fmt_info *f, double x)
{
    double v[128];
    unsigned code[128];
    int n = finite_values(f, v, code);
    double a = fabs(x);
    double r;
    if (a >= f->max) {
        r = f->max;
    } else {
        int k = 0;
        while (k + 1 < n && v[k + 1] <= a)
            k++;
        if (v[k] == a || k + 1 == n) {
            r = v[k];
        } else {
            double lo = a - v[k], hi = v[k + 1] - a;
            r = lo < hi ? v[k] : hi < lo ? v[k + 1] : (code[k] & 1u) ? v[k + 1] : v[k];
        }
    }
    return signbit(x) ? -r : r;
}

static int same_float(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Every code: its value as the spec gives it, and code -> value -> code. */
static void test_every_code_round_trips(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        const fmt_info *f = &FMTS[k];
        int nan = 0;
        for (unsigned c = 0; c < 256; c++) {
            int kind;
            double want = spec_value(f, c, &kind);
            float got = ref_fp8_value((uint8_t)c, f->fmt);
            if (kind == 2) {
                assert_true(isnan(got));
                assert_true(isnan(ref_round_fp8(got, f->fmt)));
                assert_int_equal(ref_fp8_code(got, f->fmt), 0x7f);
                nan++;
                continue;
            }
            if (kind == 1) {   /* e5m2's inf saturates: SATFINITE */
                assert_true(isinf(got) && (got > 0) == (want > 0));
                assert_true(ref_round_fp8(got, f->fmt) == (float)(got > 0 ? f->max : -f->max));
                continue;
            }
            if ((double)got != want || !signbit(got) != !signbit(want))
                fail_msg("%s code 0x%02x: %.9g, want %.9g", f->name, c, (double)got, want);
            /* The value is representable: rounding leaves it, bits and sign. */
            assert_true(same_float(ref_round_fp8(got, f->fmt), got));
            if (ref_fp8_code(got, f->fmt) != c)
                fail_msg("%s 0x%02x -> %.9g -> 0x%02x", f->name, c, (double)got,
                         ref_fp8_code(got, f->fmt));
        }
        assert_int_equal(nan, f->fmt == REF_FP8_E4M3 ? 2 : 6);
    }
    assert_true(ref_fp8_max(REF_FP8_E4M3) == 448.0f);
    assert_true(ref_fp8_max(REF_FP8_E5M2) == 57344.0f);
}

/* Midpoints of neighbouring values go to the even code; a hair either side
 * goes to the nearer one. */
static void test_ties_to_even(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        const fmt_info *f = &FMTS[k];
        double v[128];
        unsigned code[128];
        int n = finite_values(f, v, code);
        for (int i = 0; i + 1 < n; i++) {
            double mid = 0.5 * (v[i] + v[i + 1]);   /* exact in double and in float */
            double even = (code[i] & 1u) ? v[i + 1] : v[i];
            for (int s = 0; s < 2; s++) {
                float x = (float)(s ? -mid : mid);
                float got = ref_round_fp8(x, f->fmt);
                if ((double)got != (s ? -even : even))
                    fail_msg("%s tie %.9g -> %.9g, want %.9g", f->name, (double)x,
                             (double)got, s ? -even : even);
                assert_true((double)ref_round_fp8(nextafterf(x, 0.0f), f->fmt) ==
                            (s ? -v[i] : v[i]));
                assert_true((double)ref_round_fp8(nextafterf(x, s ? -1e30f : 1e30f), f->fmt) ==
                            (s ? -v[i + 1] : v[i + 1]));
            }
        }
    }
    /* Two by hand: e4m3 between 1 (0x38) and 1.125 (0x39) rounds 1.0625 to 1;
     * between 1.125 and 1.25 (0x3a), 1.1875 to 1.25. */
    assert_true(ref_round_fp8(1.0625f, REF_FP8_E4M3) == 1.0f);
    assert_true(ref_round_fp8(1.1875f, REF_FP8_E4M3) == 1.25f);
    assert_true(ref_round_fp8(1.125f, REF_FP8_E5M2) == 1.0f);   /* 1, 1.25: 1 is even */
    assert_true(ref_round_fp8(1.375f, REF_FP8_E5M2) == 1.5f);
}

/* Beyond the largest finite value: saturation, never NaN or inf. Below half
 * the smallest subnormal: a signed zero. */
static void test_saturation_and_underflow(void **state)
{
    (void)state;
    const float big[] = { 449.0f, 463.9f, 464.0f, 480.0f, 1e6f, 3.4e38f, INFINITY };
    for (size_t k = 0; k < sizeof big / sizeof big[0]; k++) {
        assert_true(ref_round_fp8(big[k], REF_FP8_E4M3) == 448.0f);
        assert_true(ref_round_fp8(-big[k], REF_FP8_E4M3) == -448.0f);
    }
    const float big5[] = { 57345.0f, 61439.0f, 61440.0f, 65536.0f, 1e9f, INFINITY };
    for (size_t k = 0; k < sizeof big5 / sizeof big5[0]; k++) {
        assert_true(ref_round_fp8(big5[k], REF_FP8_E5M2) == 57344.0f);
        assert_true(ref_round_fp8(-big5[k], REF_FP8_E5M2) == -57344.0f);
    }
    assert_true(isnan(ref_round_fp8(NAN, REF_FP8_E4M3)));
    assert_true(isnan(ref_round_fp8(-NAN, REF_FP8_E5M2)));
    /* e4m3's least subnormal is 2^-9: half of it is a tie to 0 (even). */
    assert_true(ref_round_fp8(ldexpf(1.0f, -10), REF_FP8_E4M3) == 0.0f);
    assert_true(ref_round_fp8(nextafterf(ldexpf(1.0f, -10), 1.0f), REF_FP8_E4M3) ==
                ldexpf(1.0f, -9));
    float nz = ref_round_fp8(-1e-30f, REF_FP8_E5M2);
    assert_true(nz == 0.0f && signbit(nz));
    assert_int_equal(ref_fp8_code(-1e-30f, REF_FP8_E5M2), 0x80);
}

/* Random floats over every binade that matters: ref_round_fp8 against the
 * nearest-value search, bit for bit. */
static void test_rounding_matches_search(void **state)
{
    (void)state;
    uint64_t s = 17;
    for (int k = 0; k < 2; k++) {
        const fmt_info *f = &FMTS[k];
        for (int t = 0; t < 200000; t++) {
            int e = (int)tu_rand_range(&s, -22, 17);
            double m = (double)(tu_rand(&s) >> 11) / 9007199254740992.0;   /* [0, 1) */
            float x = (float)ldexp(1.0 + m, e);
            if (tu_rand(&s) & 1)
                x = -x;
            float got = ref_round_fp8(x, f->fmt);
            double want = spec_round(f, (double)x);
            if ((double)got != want || !signbit(got) != !signbit(want))
                fail_msg("%s round(%.9g) = %.9g, want %.9g", f->name, (double)x, (double)got,
                         want);
        }
    }
}

/* ref_round_to reaches the fp8 formats through its kinds. */
static void test_round_kinds(void **state)
{
    (void)state;
    assert_true(ref_round_to(500.0f, REF_ROUND_E4M3) == 448.0f);
    assert_true(ref_round_to(500.0f, REF_ROUND_E5M2) == 512.0f);
    assert_true(ref_round_to(500.0f, REF_ROUND_FP16) == 500.0f);
}

/* P~ enters an fp8 product at 2^8 times its value (FA3's Max_offset = 8):
 * 0.003 is a subnormal of e4m3, whose steps of 2^-9 round it to 2 x 2^-9
 * = 0.00390625; at 2^8 x 0.003 = 0.768 the normal numbers' steps of 2^-4
 * round it to 0.75, and 0.75 / 256 = 0.0029296875. Probabilities of 1 and
 * 0 stay; fp16 is rounded as it is, with no offset. */
static void test_round_probs_offset(void **state)
{
    (void)state;
    float p[4] = { 0.003f, 1.0f, 0.0f, 0.1f };
    ref_round_row(p, 4, REF_ROUND_E4M3);
    assert_true(ref_round_to(0.003f, REF_ROUND_E4M3) == 0.00390625f);
    assert_true(p[0] == 0.0029296875f);
    assert_true(p[1] == 1.0f && p[2] == 0.0f);
    /* 25.6 rounds to 26 (steps of 2 in [16, 32)), so 0.1 to 26 / 256 */
    assert_true(p[3] == 26.0f / 256.0f);
    float h[1] = { 0.003f };
    ref_round_row(h, 1, REF_ROUND_FP16);
    assert_true(h[0] == ref_round_to(0.003f, REF_ROUND_FP16));
}

/* (Q M)(K M)^T = Q K^T, and M^T undoes M, to double precision. */
static void test_hadamard_orthogonal(void **state)
{
    (void)state;
    for (int64_t d = 1; d <= 256; d *= 2) {
        enum { R = 6 };
        double q[R][256], k[R][256], q0[R][256], k0[R][256];
        signed char sign[256];
        ref_rng r = ref_rng_seed((uint64_t)d);
        for (int64_t c = 0; c < d; c++)
            sign[c] = (ref_rng_next(&r) >> 63) ? -1 : 1;
        for (int i = 0; i < R; i++)
            for (int64_t c = 0; c < d; c++) {
                q0[i][c] = q[i][c] = ref_rng_outlier(&r);
                k0[i][c] = k[i][c] = ref_rng_outlier(&r);
            }
        for (int i = 0; i < R; i++) {
            ref_hadamard_row(q[i], d, sign, 0);
            ref_hadamard_row(k[i], d, sign, 0);
        }
        for (int i = 0; i < R; i++)
            for (int j = 0; j < R; j++) {
                double a = 0, b = 0, na = 0, nb = 0;
                for (int64_t c = 0; c < d; c++) {
                    a += q0[i][c] * k0[j][c];
                    b += q[i][c] * k[j][c];
                    na += q0[i][c] * q0[i][c];
                    nb += k0[j][c] * k0[j][c];
                }
                /* The scores agree to a few ulps of the norms' product. */
                assert_true(fabs(a - b) <= 1e-14 * sqrt(na * nb) * (double)d);
            }
        for (int i = 0; i < R; i++) {
            ref_hadamard_row(q[i], d, sign, 1);
            for (int64_t c = 0; c < d; c++)
                assert_true(fabs(q[i][c] - q0[i][c]) <= 1e-14 * (1.0 + fabs(q0[i][c])));
        }
    }
    /* d = 2, signs (+1, -1): (x0, x1) -> (x0 - x1, x0 + x1) / sqrt 2. */
    double x[2] = { 3.0, 1.0 };
    const signed char sg[2] = { 1, -1 };
    ref_hadamard_row(x, 2, sg, 0);
    assert_true(fabs(x[0] - 2.0 / sqrt(2.0)) < 1e-15 && fabs(x[1] - 4.0 / sqrt(2.0)) < 1e-15);
}

/* The outlier inputs: unit-variance bulk, about 1 in 1000 with a N(0, 100)
 * added; the seeded stream is the same every time. */
static void test_outlier_inputs(void **state)
{
    (void)state;
    ref_rng r = ref_rng_seed(1);
    const int n = 400000;
    double sum = 0, sq = 0;
    int big = 0;
    for (int k = 0; k < n; k++) {
        double x = ref_rng_gauss(&r);
        sum += x;
        sq += x * x;
    }
    assert_true(fabs(sum / n) < 0.01 && fabs(sq / n - 1.0) < 0.02);
    r = ref_rng_seed(1);
    sq = 0;
    for (int k = 0; k < n; k++) {
        double x = ref_rng_outlier(&r);
        sq += x * x;
        big += fabs(x) > 6.0;
    }
    /* Variance 1 + 100 x 0.001 = 1.1; |x| > 6 nearly only from outliers
     * (P(|N(0,101)| > 6) = 0.55: about 0.00055 n = 220). */
    assert_true(fabs(sq / n - 1.1) < 0.05);
    assert_true(big > 150 && big < 300);
    ref_rng a = ref_rng_seed(9), b = ref_rng_seed(9);
    for (int k = 0; k < 1000; k++)
        assert_true(same_float(ref_rng_outlier(&a), ref_rng_outlier(&b)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_code_round_trips),
        cmocka_unit_test(test_ties_to_even),
        cmocka_unit_test(test_saturation_and_underflow),
        cmocka_unit_test(test_rounding_matches_search),
        cmocka_unit_test(test_round_kinds),
        cmocka_unit_test(test_round_probs_offset),
        cmocka_unit_test(test_hadamard_orthogonal),
        cmocka_unit_test(test_outlier_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
