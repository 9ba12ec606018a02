/*
 * sim_fit.h — least-squares fits of power laws: y = C * x_1^a_1 * ... * x_p^a_p,
 * fitted as the linear model log y = log C + sum_k a_k log x_k.
 *
 * Used by the sweeps to report "HBM bytes grow like N^a" beside the exponent
 * Theorem 2 predicts. With one regressor this is the slope of the log-log
 * line; with two or three (a grid) it is the joint fit, so each exponent is
 * the growth in that parameter with the others held fixed.
 */
#ifndef FASIM_SIM_FIT_H
#define FASIM_SIM_FIT_H

#define SIM_FIT_MAX_VARS 3

typedef struct {
    int ok;                              /* 1 when the fit was made */
    int nvars;                           /* p */
    int npoints;                         /* n */
    double exponent[SIM_FIT_MAX_VARS];   /* a_k */
    double log_c;                        /* log C (natural log) */
    double r2;                           /* coefficient of determination of log y;
                                            1 when log y is exactly the model
                                            (including a constant y) */
    double max_resid;                    /* max |log y - model|, natural log:
                                            0.01 means the worst point is 1% off */
} sim_fit;

/* Fit n points. x is row-major n x p (x[i*p + k] = x_k of point i), all > 0;
 * y[i] > 0. Needs n >= p + 1 and every regressor to take at least two
 * distinct values (otherwise its exponent is undetermined).
 * Returns 0 with *out filled, or -1 (out->ok = 0) for too few points,
 * non-positive data, or a regressor without spread (or regressors that are
 * functions of each other, e.g. M varied in step with N). */
int sim_fit_power_law(int n, int p, const double *x, const double *y, sim_fit *out);

#endif /* FASIM_SIM_FIT_H */
