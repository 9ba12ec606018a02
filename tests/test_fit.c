/*
 * test_fit.c — sim_fit_power_law on synthetic data with known exponents:
 * one, two and three regressors, exact and perturbed data, and every way a
 * fit must refuse (too few points, no spread, regressors in lockstep,
 * non-positive data). One case feeds a known different slope and checks
 * that the fit does not report the expected one (the checker proves itself).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "sim_fit.h"

static void one_var_exact(void **state)
{
    (void)state;
    const double a[] = { 2.5, -1.0, 0.5, 3.0 };
    for (int q = 0; q < 4; q++) {
        double x[11], y[11];
        for (int i = 0; i < 11; i++) {
            x[i] = ldexp(1.0, i);                 /* 1 .. 1024 */
            y[i] = 3.0 * pow(x[i], a[q]);
        }
        sim_fit f;
        assert_int_equal(sim_fit_power_law(11, 1, x, y, &f), 0);
        assert_true(f.ok);
        assert_true(fabs(f.exponent[0] - a[q]) < 1e-12);
        assert_true(fabs(f.log_c - log(3.0)) < 1e-10);
        assert_true(fabs(f.r2 - 1.0) < 1e-12);
        assert_true(f.max_resid < 1e-10);
    }
}

/* y = 5 N^2 M^-1 on a 6 x 5 grid (N from 1024, M from 32768, not powers of
 * the same base, so that the columns are not collinear). */
static void two_vars_grid(void **state)
{
    (void)state;
    double x[60], y[30];
    int n = 0;
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 5; k++) {
            double N = 1024.0 * pow(2.0, i), M = 32768.0 * pow(1.5, k);
            x[2 * n] = N;
            x[2 * n + 1] = M;
            y[n++] = 5.0 * N * N / M;
        }
    sim_fit f;
    assert_int_equal(sim_fit_power_law(n, 2, x, y, &f), 0);
    assert_true(fabs(f.exponent[0] - 2.0) < 1e-10);
    assert_true(fabs(f.exponent[1] + 1.0) < 1e-10);
    assert_true(fabs(f.r2 - 1.0) < 1e-12);
}

static void three_vars(void **state)
{
    (void)state;
    double x[3 * 27], y[27];
    int n = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) {
                double N = 4096.0 * pow(2, i), d = 32.0 * pow(3, j), M = 65536.0 * pow(5, k);
                x[3 * n] = N;
                x[3 * n + 1] = d;
                x[3 * n + 2] = M;
                y[n++] = N * N * d * d / M;
            }
    sim_fit f;
    assert_int_equal(sim_fit_power_law(n, 3, x, y, &f), 0);
    assert_true(fabs(f.exponent[0] - 2.0) < 1e-10);
    assert_true(fabs(f.exponent[1] - 2.0) < 1e-10);
    assert_true(fabs(f.exponent[2] + 1.0) < 1e-10);
}

/* +-1% multiplicative perturbations (deterministic, alternating): the
 * exponent stays within 0.01 and R^2 drops below 1 but stays high. */
static void perturbed(void **state)
{
    (void)state;
    double x[16], y[16];
    for (int i = 0; i < 16; i++) {
        x[i] = 256.0 * pow(2.0, i);
        y[i] = pow(x[i], 2.0) * (1.0 + ((i * 7) % 3 - 1) * 0.01);
    }
    sim_fit f;
    assert_int_equal(sim_fit_power_law(16, 1, x, y, &f), 0);
    assert_true(fabs(f.exponent[0] - 2.0) < 0.01);
    assert_true(f.r2 < 1.0);
    assert_true(f.r2 > 0.9999);
    assert_true(f.max_resid > 0.005 && f.max_resid < 0.03);
}

/* A different slope must come out as itself, not as the "expected" 2. */
static void wrong_slope_is_seen(void **state)
{
    (void)state;
    double x[8], y[8];
    for (int i = 0; i < 8; i++) {
        x[i] = 1000.0 * (i + 1);
        y[i] = pow(x[i], 1.9);
    }
    sim_fit f;
    assert_int_equal(sim_fit_power_law(8, 1, x, y, &f), 0);
    assert_true(fabs(f.exponent[0] - 2.0) > 0.05);
    assert_true(fabs(f.exponent[0] - 1.9) < 1e-10);
}

static void constant_y(void **state)
{
    (void)state;
    double x[5] = { 1, 2, 4, 8, 16 }, y[5] = { 7, 7, 7, 7, 7 };
    sim_fit f;
    assert_int_equal(sim_fit_power_law(5, 1, x, y, &f), 0);
    assert_true(fabs(f.exponent[0]) < 1e-12);
    assert_true(f.r2 == 1.0);
}

static void refusals(void **state)
{
    (void)state;
    sim_fit f;
    double x1[2] = { 1, 2 }, y1[2] = { 1, 4 };
    /* too few points for two regressors (n = 2 < p + 1 = 3) */
    double x2[4] = { 1, 1, 2, 3 };
    assert_int_equal(sim_fit_power_law(2, 2, x2, y1, &f), -1);
    assert_false(f.ok);
    /* one point */
    assert_int_equal(sim_fit_power_law(1, 1, x1, y1, &f), -1);
    /* no spread in x */
    double xc[4] = { 5, 5, 5, 5 }, yc[4] = { 1, 2, 3, 4 };
    assert_int_equal(sim_fit_power_law(4, 1, xc, yc, &f), -1);
    /* a constant second column */
    double xk[8] = { 1, 9, 2, 9, 4, 9, 8, 9 }, yk[4] = { 1, 2, 3, 4 };
    assert_int_equal(sim_fit_power_law(4, 2, xk, yk, &f), -1);
    /* lockstep: x2 = x1^2 is collinear with x1 in log space */
    double xl[8] = { 2, 4, 4, 16, 8, 64, 16, 256 };
    assert_int_equal(sim_fit_power_law(4, 2, xl, yk, &f), -1);
    /* non-positive data */
    double xz[3] = { 1, 2, 4 }, yz[3] = { 1, 0, 4 }, xn[3] = { 1, -2, 4 }, yp[3] = { 1, 2, 4 };
    assert_int_equal(sim_fit_power_law(3, 1, xz, yz, &f), -1);
    assert_int_equal(sim_fit_power_law(3, 1, xn, yp, &f), -1);
    /* bad p */
    assert_int_equal(sim_fit_power_law(3, 0, xz, yp, &f), -1);
    assert_int_equal(sim_fit_power_law(9, SIM_FIT_MAX_VARS + 1, xz, yp, &f), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_var_exact),
        cmocka_unit_test(two_vars_grid),
        cmocka_unit_test(three_vars),
        cmocka_unit_test(perturbed),
        cmocka_unit_test(wrong_slope_is_seen),
        cmocka_unit_test(constant_y),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
