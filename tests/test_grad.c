/*
 * test_grad.c — the float64 backward oracle (ref_oracle_attention_bwd) against
 * central finite differences of the forward oracle.
 *
 * For random Q, K, V and a random output gradient dO, the scalar
 *     f(Q, K, V) = sum_{r,t} O_rt dO_rt,   O = attention(Q, K, V)
 * has df/dO = dO, so its gradients with respect to Q, K and V are exactly what
 * ref_oracle_attention_bwd returns for that dO. Each entry x of Q, K and V is
 * perturbed by +-h and (f(x + h) - f(x - h)) / (2h) is compared with the
 * oracle's entry; every entry of dQ, dK and dV is checked, for several shapes
 * and masks. A deliberately wrong gradient must be reported by the same
 * comparison, so the checker proves it can fail.
 *
 * Notation: Q, dO, dQ (Nq, d); K, V, dK, dV (Nk, d); all row-major.
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

#include "ref_oracle.h"
#include "ref_rng.h"
#include "test_util.h"

/* ---- step and tolerance --------------------------------------------------- */

/*
 * A central difference has truncation error h^2 |f'''| / 6 and rounding error
 * about eps_f / h, where eps_f ~ 1e-15 is the rounding error of f itself (a
 * sum of Nq d products of O(1) values, each a few 2^-53 off). The two balance
 * near h = 1e-5. Measured on the "offset and window" case below, the largest
 * error relative to the gradient's max-norm, over dQ / dK / dV:
 *     h = 1e-3: 6e-8 / 1e-7 / 6e-13     (truncation, ~h^2)
 *     h = 1e-4: 6e-10 / 1e-9 / 1e-11
 *     h = 1e-5: 1.5e-10 / 1.5e-10 / 8e-11  (the minimum)
 *     h = 1e-6: 1.3e-9 / 1.4e-9 / 8e-10  (rounding, ~1/h)
 *     h = 1e-8: 1.4e-7 / 1.7e-7 / 6e-8
 * (dV is exact in f up to rounding: f is linear in V, so it has no truncation
 * error.) The test prints the worst error of each case; over all 7 cases and
 * 3 seeds each it is 2.6e-10 (dK of the peaky case). FD_REL_TOL = 1e-8 leaves
 * a margin of almost 40 above that, while a wrong gradient (a missing D term,
 * a missing scale) is off by 1 or more of the max-norm (printed): 1e8 times
 * the tolerance.
 */
#define FD_H 1e-5
#define FD_REL_TOL 1e-8

/* ---- the comparison ------------------------------------------------------- */

/*
 * Entry by entry: |got[i] - want[i]| <= rel_tol * max_i |want[i]| (normwise,
 * so that entries near zero are judged on the gradient's scale). NaN in either
 * fails. Prints the first mismatches when verbose. Returns the number of
 * mismatching entries; *rel receives max |got - want| / max |want|.
 */
static int64_t grad_mismatches(const char *what, const double *got, const double *want,
                               int64_t n, double rel_tol, double *rel, int verbose)
{
    double norm = 0.0, worst = 0.0;
    for (int64_t i = 0; i < n; i++)
        norm = fmax(norm, fabs(want[i]));
    /* an all-zero reference would make any tolerance 0 and any result "right"
     * only by accident: every case here has a non-zero gradient */
    assert_true(norm > 0.0);
    double tol = rel_tol * norm;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double diff = fabs(got[i] - want[i]);
        if (!(diff <= tol)) {
            if (verbose && bad < 5)
                fprintf(stderr, "  %s[%lld]: got %.17g want %.17g diff %.3g > tol %.3g\n", what,
                        (long long)i, got[i], want[i], diff, tol);
            bad++;
        }
        if (!(diff <= worst))
            worst = diff;                        /* NaN sticks */
    }
    if (verbose && bad > 5)
        fprintf(stderr, "  %s: %lld mismatches in all\n", what, (long long)bad);
    *rel = worst / norm;
    return bad;
}

/* ---- cases ---------------------------------------------------------------- */

typedef struct {
    const char *name;
    int64_t Nq, Nk, d;
    ref_mask mk;
    double amp;          /* inputs are amp * bell-shaped: larger = peakier softmax */
} grad_case;

/* Small enough that (Nq + 2 Nk) d perturbations of an O(Nq Nk d) forward pass
 * stay far under a second in the sanitizer build. */
static const grad_case CASES[] = {
    { "Nq = Nk, not causal", 7, 7, 4, { 0, 0, 0, NULL }, 1.0 },
    { "Nq = Nk, causal", 9, 9, 5, { 1, 0, 0, NULL }, 1.0 },
    { "Nq < Nk, causal offset", 5, 12, 3, { 1, 7, 0, NULL }, 1.0 },
    { "sliding window", 10, 10, 6, { 1, 0, 3, NULL }, 1.0 },
    { "offset and window", 6, 11, 4, { 1, 5, 4, NULL }, 1.0 },
    { "Nq > Nk, not causal, peaky", 12, 5, 6, { 0, 0, 0, NULL }, 2.5 },
    /* offset -3: query rows 0..2 see no key (O = 0 there whatever the inputs,
     * so their gradient is 0); fasim's own masks never do this, the oracle's
     * contract covers it */
    { "rows that see no key", 8, 8, 2, { 1, -3, 0, NULL }, 1.0 },
};
#define N_CASES ((int)(sizeof CASES / sizeof CASES[0]))

typedef struct {
    int64_t Nq, Nk, d;
    ref_mask mk;
    double *Q, *K, *V, *dO;      /* inputs */
    double *dQ, *dK, *dV;        /* the oracle's gradients */
    double *fQ, *fK, *fV;        /* finite differences */
    double *O;                   /* scratch for f */
} problem;

/* amp * a bell-shaped value of ref_rng.h, never 0 (a 0 would hide a missing
 * term that is multiplied by it). */
static double nonzero(ref_rng *g, double amp)
{
    float v;
    do
        v = ref_rng_normalish(g);
    while (v == 0.0f);
    return amp * (double)v;
}

static double *alloc(int64_t n)
{
    double *p = malloc(sizeof(double) * (size_t)n);
    assert_non_null(p);
    return p;
}

static problem make_problem(const grad_case *gc, uint64_t seed)
{
    problem p;
    p.Nq = gc->Nq;
    p.Nk = gc->Nk;
    p.d = gc->d;
    p.mk = gc->mk;
    int64_t nq = p.Nq * p.d, nk = p.Nk * p.d;
    p.Q = alloc(nq);
    p.dO = alloc(nq);
    p.dQ = alloc(nq);
    p.fQ = alloc(nq);
    p.O = alloc(nq);
    p.K = alloc(nk);
    p.V = alloc(nk);
    p.dK = alloc(nk);
    p.dV = alloc(nk);
    p.fK = alloc(nk);
    p.fV = alloc(nk);
    ref_rng g = ref_rng_seed(seed);
    for (int64_t i = 0; i < nq; i++)
        p.Q[i] = nonzero(&g, gc->amp);
    for (int64_t i = 0; i < nk; i++)
        p.K[i] = nonzero(&g, gc->amp);
    for (int64_t i = 0; i < nk; i++)
        p.V[i] = nonzero(&g, 1.0);
    for (int64_t i = 0; i < nq; i++)
        p.dO[i] = nonzero(&g, 1.0);
    return p;
}

static void free_problem(problem *p)
{
    double *all[] = { p->Q, p->K, p->V, p->dO, p->dQ, p->dK, p->dV, p->fQ, p->fK, p->fV, p->O };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}

/* f = sum O o dO, O from the double-input forward oracle. */
static double f_of(problem *p)
{
    assert_int_equal(ref_oracle_attention_masked_d(p->Q, p->K, p->V, p->Nq, p->Nk, p->d,
                                                   &p->mk, p->O, NULL), 0);
    double f = 0.0;
    for (int64_t i = 0; i < p->Nq * p->d; i++)
        f += p->O[i] * p->dO[i];
    return f;
}

/* Central differences of f with respect to every entry of x (n entries). The
 * denominator is the step actually taken, (x + h) - (x - h), not 2h. */
static void finite_diff(problem *p, double *x, int64_t n, double h, double *out)
{
    for (int64_t i = 0; i < n; i++) {
        double x0 = x[i], xp = x0 + h, xm = x0 - h;
        x[i] = xp;
        double fp = f_of(p);
        x[i] = xm;
        double fm = f_of(p);
        x[i] = x0;
        out[i] = (fp - fm) / (xp - xm);
    }
}

static void oracle_and_fd(problem *p)
{
    assert_int_equal(ref_oracle_attention_bwd_d(p->Q, p->K, p->V, p->dO, p->Nq, p->Nk, p->d,
                                                &p->mk, p->dQ, p->dK, p->dV), 0);
    finite_diff(p, p->Q, p->Nq * p->d, FD_H, p->fQ);
    finite_diff(p, p->K, p->Nk * p->d, FD_H, p->fK);
    finite_diff(p, p->V, p->Nk * p->d, FD_H, p->fV);
}

/* ---- 1. the oracle against finite differences ------------------------------ */

static void test_oracle_vs_finite_differences(void **state)
{
    (void)state;
    double worst_all = 0.0;
    for (int ci = 0; ci < N_CASES; ci++) {
        const grad_case *gc = &CASES[ci];
        for (uint64_t seed = 1; seed <= 3; seed++) {
            problem p = make_problem(gc, 0x6ead0000ull + 16 * (uint64_t)ci + seed);
            oracle_and_fd(&p);
            double rq, rk, rv;
            int64_t bad = grad_mismatches("dQ", p.dQ, p.fQ, p.Nq * p.d, FD_REL_TOL, &rq, 1) +
                          grad_mismatches("dK", p.dK, p.fK, p.Nk * p.d, FD_REL_TOL, &rk, 1) +
                          grad_mismatches("dV", p.dV, p.fV, p.Nk * p.d, FD_REL_TOL, &rv, 1);
            if (bad)
                fail_msg("%s (seed %llu): %lld gradient entries off their finite differences",
                         gc->name, (unsigned long long)seed, (long long)bad);
            if (seed == 1)
                printf("  %-28s Nq %2lld Nk %2lld d %lld: max error / max-norm  dQ %.2e  "
                       "dK %.2e  dV %.2e\n", gc->name, (long long)p.Nq, (long long)p.Nk,
                       (long long)p.d, rq, rk, rv);
            worst_all = fmax(worst_all, fmax(rq, fmax(rk, rv)));

            /* a row that sees no key: its dQ row is exactly 0 */
            for (int64_t r = 0; r < p.Nq; r++) {
                int sees = 0;
                for (int64_t c = 0; c < p.Nk; c++)
                    sees |= ref_mask_visible(&p.mk, r, c);
                for (int64_t t = 0; !sees && t < p.d; t++)
                    assert_true(p.dQ[r * p.d + t] == 0.0);
            }
            free_problem(&p);
        }
    }
    printf("  worst over %d cases x 3 seeds: %.2e of the max-norm (tolerance %.0e, h %.0e)\n",
           N_CASES, worst_all, FD_REL_TOL, FD_H);
}

/* ---- 2. the checker proves itself ----------------------------------------- */

/* dK computed without the D term: scale sum_r P_rc dP_rc q_r, which is what
 * dK would be if dS were P o dP. P comes from the forward oracle's L. */
static void dk_without_D(const problem *p, double *dK)
{
    double *L = alloc(p->Nq);
    assert_int_equal(ref_oracle_attention_masked_d(p->Q, p->K, p->V, p->Nq, p->Nk, p->d,
                                                   &p->mk, p->O, L), 0);
    double scale = 1.0 / sqrt((double)p->d);
    memset(dK, 0, sizeof(double) * (size_t)(p->Nk * p->d));
    for (int64_t r = 0; r < p->Nq; r++) {
        for (int64_t c = 0; c < p->Nk; c++) {
            if (!ref_mask_visible(&p->mk, r, c))
                continue;
            double s = 0.0, dp = 0.0;
            for (int64_t t = 0; t < p->d; t++) {
                s += p->Q[r * p->d + t] * p->K[c * p->d + t];
                dp += p->dO[r * p->d + t] * p->V[c * p->d + t];
            }
            double P = exp(scale * s - L[r]);
            for (int64_t t = 0; t < p->d; t++)
                dK[c * p->d + t] += scale * P * dp * p->Q[r * p->d + t];
        }
    }
    free(L);
}

static void test_checker_detects_wrong_gradients(void **state)
{
    (void)state;
    const grad_case *gc = &CASES[4];            /* offset and window */
    problem p = make_problem(gc, 0xbadull);
    oracle_and_fd(&p);
    double rel;
    /* the right gradients pass ... */
    assert_int_equal(grad_mismatches("dK", p.dK, p.fK, p.Nk * p.d, FD_REL_TOL, &rel, 1), 0);
    assert_int_equal(grad_mismatches("dQ", p.dQ, p.fQ, p.Nq * p.d, FD_REL_TOL, &rel, 1), 0);

    /* ... dK without the D term does not */
    double *wrong = alloc(p.Nk * p.d);
    dk_without_D(&p, wrong);
    int64_t bad = grad_mismatches("dK without D", wrong, p.fK, p.Nk * p.d, FD_REL_TOL, &rel, 0);
    printf("  dK without the D term: %lld of %lld entries flagged, error %.2e of the max-norm\n",
           (long long)bad, (long long)(p.Nk * p.d), rel);
    assert_true(bad > 0 && rel > 1e3 * FD_REL_TOL);

    /* ... nor dQ without the scale (dS K instead of scale dS K) */
    double *wrong_q = alloc(p.Nq * p.d);
    for (int64_t i = 0; i < p.Nq * p.d; i++)
        wrong_q[i] = p.dQ[i] * sqrt((double)p.d);
    bad = grad_mismatches("dQ without scale", wrong_q, p.fQ, p.Nq * p.d, FD_REL_TOL, &rel, 0);
    printf("  dQ without the scale: %lld of %lld entries flagged, error %.2e of the max-norm\n",
           (long long)bad, (long long)(p.Nq * p.d), rel);
    assert_true(bad > 0 && rel > 1e3 * FD_REL_TOL);

    /* ... nor dK and dV swapped with each other's roles (same shape) */
    bad = grad_mismatches("dV as dK", p.dV, p.fK, p.Nk * p.d, FD_REL_TOL, &rel, 0);
    assert_true(bad > 0);

    /* ... and a single entry nudged by ten times the tolerance is caught */
    double norm = 0.0;
    for (int64_t i = 0; i < p.Nk * p.d; i++)
        norm = fmax(norm, fabs(p.fV[i]));
    memcpy(wrong, p.dV, sizeof(double) * (size_t)(p.Nk * p.d));
    wrong[p.Nk * p.d / 2] += 10.0 * FD_REL_TOL * norm;
    assert_int_equal(grad_mismatches("dV nudged", wrong, p.fV, p.Nk * p.d, FD_REL_TOL, &rel, 0),
                     1);
    /* and a NaN */
    wrong[0] = NAN;
    assert_true(grad_mismatches("dV NaN", wrong, p.fV, p.Nk * p.d, FD_REL_TOL, &rel, 0) == 2);
    free(wrong);
    free(wrong_q);
    free_problem(&p);
}

/* ---- 3. the contract: float twin, overwriting, closed forms --------------- */

static void test_oracle_contract(void **state)
{
    (void)state;
    const grad_case *gc = &CASES[2];            /* Nq < Nk, causal offset */
    int64_t nq = gc->Nq * gc->d, nk = gc->Nk * gc->d;
    float *Qf = malloc(sizeof(float) * (size_t)nq), *dOf = malloc(sizeof(float) * (size_t)nq);
    float *Kf = malloc(sizeof(float) * (size_t)nk), *Vf = malloc(sizeof(float) * (size_t)nk);
    assert_true(Qf && dOf && Kf && Vf);
    problem p = make_problem(gc, 0xf10a7ull);
    /* float inputs, and the same values widened in p */
    for (int64_t i = 0; i < nq; i++) {
        Qf[i] = (float)p.Q[i];
        dOf[i] = (float)p.dO[i];
        p.Q[i] = Qf[i];
        p.dO[i] = dOf[i];
    }
    for (int64_t i = 0; i < nk; i++) {
        Kf[i] = (float)p.K[i];
        Vf[i] = (float)p.V[i];
        p.K[i] = Kf[i];
        p.V[i] = Vf[i];
    }
    /* the float and double entry points share one core: same bits */
    assert_int_equal(ref_oracle_attention_bwd_d(p.Q, p.K, p.V, p.dO, p.Nq, p.Nk, p.d, &p.mk,
                                                p.dQ, p.dK, p.dV), 0);
    for (int64_t i = 0; i < nq; i++)
        p.fQ[i] = NAN;                          /* garbage: outputs are overwritten */
    for (int64_t i = 0; i < nk; i++)
        p.fK[i] = p.fV[i] = 1e300;
    assert_int_equal(ref_oracle_attention_bwd(Qf, Kf, Vf, dOf, p.Nq, p.Nk, p.d, &p.mk, p.fQ,
                                              p.fK, p.fV), 0);
    assert_memory_equal(p.dQ, p.fQ, sizeof(double) * (size_t)nq);
    assert_memory_equal(p.dK, p.fK, sizeof(double) * (size_t)nk);
    assert_memory_equal(p.dV, p.fV, sizeof(double) * (size_t)nk);
    /* ... and so do the two forward entry points */
    double *L1 = alloc(p.Nq), *L2 = alloc(p.Nq), *O2 = alloc(nq);
    assert_int_equal(ref_oracle_attention_masked(Qf, Kf, Vf, p.Nq, p.Nk, p.d, &p.mk, p.O, L1), 0);
    assert_int_equal(ref_oracle_attention_masked_d(p.Q, p.K, p.V, p.Nq, p.Nk, p.d, &p.mk, O2, L2),
                     0);
    assert_memory_equal(p.O, O2, sizeof(double) * (size_t)nq);
    assert_memory_equal(L1, L2, sizeof(double) * (size_t)p.Nq);
    /* Two identities of exact arithmetic, held to the rounding of double
     * sums of at most Nq Nk = 60 terms of size O(1) (about 60 * 2^-53 = 7e-15
     * at worst; measured about 2e-16, printed).
     * D_r = sum_c P_rc dP_rc equals dO_r . O_r, so sum_r dO_r . O_r equals
     * sum_c dV_c . V_c (both are sum_{r,c} P_rc dP_rc). */
    double sum_D = 0.0, sum_dVV = 0.0;
    for (int64_t i = 0; i < nq; i++)
        sum_D += p.dO[i] * p.O[i];
    for (int64_t i = 0; i < nk; i++)
        sum_dVV += p.dV[i] * p.V[i];
    assert_true(fabs(sum_D - sum_dVV) <= 1e-13 * (fabs(sum_D) + 1.0));
    /* sum_c dK_c = scale sum_r (sum_c dS_rc) q_r = 0: each row of dS sums to
     * sum_c P_rc dP_rc - D_r sum_c P_rc = 0 (softmax is shift-invariant) */
    double worst_sum = 0.0;
    for (int64_t t = 0; t < p.d; t++) {
        double s = 0.0, mag = 0.0;
        for (int64_t c = 0; c < p.Nk; c++) {
            s += p.dK[c * p.d + t];
            mag += fabs(p.dK[c * p.d + t]);
        }
        assert_true(mag > 0.0 && fabs(s) <= 1e-14 * mag);
        worst_sum = fmax(worst_sum, fabs(s) / mag);
    }
    printf("  sum_r D_r - sum dV o V: %.2e; |sum_c dK_c| / sum_c |dK_c|: %.2e (tolerances "
           "1e-13, 1e-14)\n", fabs(sum_D - sum_dVV) / (fabs(sum_D) + 1.0), worst_sum);
    free(L1);
    free(L2);
    free(O2);
    free_problem(&p);

    /* one key: P = 1 for every row, so dS = 0 and dQ = dK = 0 exactly, and
     * dV = sum_r dO_r (added in row order, as the oracle does) */
    const grad_case one = { "one key", 6, 1, 3, { 0, 0, 0, NULL }, 1.0 };
    p = make_problem(&one, 0x1c0ull);
    assert_int_equal(ref_oracle_attention_bwd_d(p.Q, p.K, p.V, p.dO, p.Nq, p.Nk, p.d, &p.mk,
                                                p.dQ, p.dK, p.dV), 0);
    for (int64_t i = 0; i < p.Nq * p.d; i++)
        assert_true(p.dQ[i] == 0.0);
    for (int64_t t = 0; t < p.d; t++) {
        double s = 0.0;
        for (int64_t r = 0; r < p.Nq; r++)
            s += p.dO[r * p.d + t];
        assert_true(p.dK[t] == 0.0);
        assert_true(p.dV[t] == s);
    }
    free_problem(&p);
    free(Qf);
    free(dOf);
    free(Kf);
    free(Vf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_vs_finite_differences),
        cmocka_unit_test(test_checker_detects_wrong_gradients),
        cmocka_unit_test(test_oracle_contract),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
