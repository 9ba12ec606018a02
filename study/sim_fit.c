/*
 * sim_fit.c — power-law fits by least squares in log space (see sim_fit.h).
 *
 * The regressors are centred (log x_k minus its mean) before the normal
 * equations are formed: the intercept then separates out, and the p x p
 * system is the covariance matrix, whose conditioning does not suffer from
 * log values far from zero (log 2^20 ~ 14). p <= 3, so Gaussian elimination
 * with partial pivoting is exact enough and simpler than a QR.
 */
#include "sim_fit.h"

#include <math.h>
#include <string.h>

int sim_fit_power_law(int n, int p, const double *x, const double *y, sim_fit *out)
{
    memset(out, 0, sizeof *out);
    out->nvars = p;
    out->npoints = n;
    if (p < 1 || p > SIM_FIT_MAX_VARS || n < p + 1 || !x || !y)
        return -1;
    double mx[SIM_FIT_MAX_VARS] = { 0 }, my = 0.0;
    for (int i = 0; i < n; i++) {
        if (!(y[i] > 0.0) || !isfinite(y[i]))
            return -1;
        my += log(y[i]);
        for (int k = 0; k < p; k++) {
            if (!(x[i * p + k] > 0.0) || !isfinite(x[i * p + k]))
                return -1;
            mx[k] += log(x[i * p + k]);
        }
    }
    my /= n;
    for (int k = 0; k < p; k++)
        mx[k] /= n;

    /* A[k][l] = sum (lx_k - mean)(lx_l - mean); b[k] = sum (lx_k - mean)(ly - mean) */
    double A[SIM_FIT_MAX_VARS][SIM_FIT_MAX_VARS] = { { 0 } }, b[SIM_FIT_MAX_VARS] = { 0 };
    double syy = 0.0;
    for (int i = 0; i < n; i++) {
        double dy = log(y[i]) - my;
        double dx[SIM_FIT_MAX_VARS];
        for (int k = 0; k < p; k++)
            dx[k] = log(x[i * p + k]) - mx[k];
        for (int k = 0; k < p; k++) {
            b[k] += dx[k] * dy;
            for (int l = 0; l < p; l++)
                A[k][l] += dx[k] * dx[l];
        }
        syy += dy * dy;
    }
    /* A regressor without spread: its exponent is undetermined. The scale of
     * "no spread" is relative to the largest spread, so that 1e-300 noise in
     * a constant column is still recognised. */
    double scale = 0.0;
    for (int k = 0; k < p; k++)
        if (A[k][k] > scale)
            scale = A[k][k];
    if (!(scale > 0.0))
        return -1;
    for (int k = 0; k < p; k++)
        if (A[k][k] <= 1e-12 * scale)
            return -1;

    /* Solve A a = b. */
    double M[SIM_FIT_MAX_VARS][SIM_FIT_MAX_VARS + 1];
    for (int k = 0; k < p; k++) {
        for (int l = 0; l < p; l++)
            M[k][l] = A[k][l];
        M[k][p] = b[k];
    }
    for (int c = 0; c < p; c++) {
        int piv = c;
        for (int r = c + 1; r < p; r++)
            if (fabs(M[r][c]) > fabs(M[piv][c]))
                piv = r;
        if (fabs(M[piv][c]) <= 1e-12 * scale)
            return -1;                 /* regressors depend on each other */
        if (piv != c)
            for (int l = 0; l <= p; l++) {
                double t = M[c][l];
                M[c][l] = M[piv][l];
                M[piv][l] = t;
            }
        for (int r = c + 1; r < p; r++) {
            double f = M[r][c] / M[c][c];
            for (int l = c; l <= p; l++)
                M[r][l] -= f * M[c][l];
        }
    }
    double a[SIM_FIT_MAX_VARS];
    for (int c = p - 1; c >= 0; c--) {
        double s = M[c][p];
        for (int l = c + 1; l < p; l++)
            s -= M[c][l] * a[l];
        a[c] = s / M[c][c];
    }

    double log_c = my;
    for (int k = 0; k < p; k++)
        log_c -= a[k] * mx[k];
    double ssr = 0.0, worst = 0.0;
    for (int i = 0; i < n; i++) {
        double model = log_c;
        for (int k = 0; k < p; k++)
            model += a[k] * log(x[i * p + k]);
        double r = log(y[i]) - model;
        ssr += r * r;
        if (fabs(r) > worst)
            worst = fabs(r);
    }
    for (int k = 0; k < p; k++)
        out->exponent[k] = a[k];
    out->log_c = log_c;
    /* R^2 = 1 - SSR/SST. A constant y (SST zero up to the rounding of the
     * mean, ~1e-32 per point) is fitted exactly by exponents 0. */
    out->r2 = syy > 1e-24 * n ? 1.0 - ssr / syy : 1.0;
    out->max_resid = worst;
    out->ok = 1;
    return 0;
}
