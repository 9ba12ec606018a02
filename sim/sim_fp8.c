/*
 * sim_fp8.c — FlashAttention-3's FP8 inputs: incoherent processing and the
 * quantisation of Q, K, V with per-tensor or per-block scales (sim.h,
 * sim_fp8_quantise). The outlier inputs of its Table 3 are drawn beside the
 * other seeded inputs (sim_run.c, sim_outlier_qkv).
 */
#include "ref_rng.h"
#include "sim.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The signs of the transform: d draws of a stream of the seed. */
static void hadamard_signs(uint64_t seed, int64_t d, signed char *sign)
{
    ref_rng r = ref_rng_seed(seed ^ UINT64_C(0x4adaa4adaa4adaa4));
    for (int64_t k = 0; k < d; k++)
        sign[k] = (ref_rng_next(&r) >> 63) ? -1 : 1;
}

/* x (rows, d) := x M, row by row, in double. */
static void transform_rows(float *x, int64_t rows, int64_t d, const signed char *sign,
                           double *row)
{
    for (int64_t i = 0; i < rows; i++) {
        float *xi = x + i * d;
        for (int64_t k = 0; k < d; k++)
            row[k] = xi[k];
        ref_hadamard_row(row, d, sign, 0);
        for (int64_t k = 0; k < d; k++)
            xi[k] = (float)row[k];
    }
}

/* Quantise n values with one scale: s = amax / max (at least FLT_MIN, so
 * that x / s stays finite for the tiniest amax), x := fp8(x / s) s. */
static void quantise_block(float *x, int64_t n, int kind, float maxv)
{
    float amax = 0.0f;
    for (int64_t k = 0; k < n; k++)
        amax = fmaxf(amax, fabsf(x[k]));
    float s = amax / maxv;
    if (s < FLT_MIN)
        s = FLT_MIN;
    for (int64_t k = 0; k < n; k++)
        x[k] = ref_round_to(x[k] / s, kind) * s;
}

/* One tensor of `heads` heads of `rows` rows each, in blocks of `blk`
 * rows per head (0: the whole tensor). */
static void quantise_tensor(float *x, int64_t heads, int64_t rows, int64_t d, int64_t blk,
                            sim_dtype dt)
{
    const int kind = sim_dtype_round_kind(dt);
    const float maxv = ref_fp8_max(dt == SIM_E4M3 ? REF_FP8_E4M3 : REF_FP8_E5M2);
    if (blk <= 0) {
        quantise_block(x, heads * rows * d, kind, maxv);
        return;
    }
    for (int64_t h = 0; h < heads; h++)
        for (int64_t r0 = 0; r0 < rows; r0 += blk) {
            const int64_t br = rows - r0 < blk ? rows - r0 : blk;
            quantise_block(x + (h * rows + r0) * d, br * d, kind, maxv);
        }
}

static int all_finite(const float *x, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        if (!isfinite(x[k]))
            return 0;
    return 1;
}

int sim_fp8_quantise(const sim_shape *sh, const sim_run_opts *run, int64_t Br, int64_t Bc,
                     float *Q, float *K, float *V, char *err, size_t errlen)
{
    const int64_t d = sh->d, Nq = sh->N, Nk = sim_shape_Nk(sh);
    const int64_t qh = sim_shape_B(sh) * sim_shape_H(sh), kh = sim_shape_B(sh) * sim_shape_G(sh);
    if (!sim_dtype_is_fp8(sh->dtype))
        return 0;
    if (sim_check(sh, run, err, errlen) != 0)      /* d a power of two, a forward pass */
        return -1;
    float *t[3] = { Q, K, V };
    const char *const names[3] = { "Q", "K", "V" };
    const int64_t n[3] = { qh * Nq * d, kh * Nk * d, kh * Nk * d };
    for (int k = 0; k < 3; k++)
        if (!all_finite(t[k], n[k])) {
            snprintf(err, errlen, "%s holds inf or NaN: no fp8 scale covers it (a scale "
                     "is the tensor's or block's largest magnitude over %g)", names[k], sh->dtype == SIM_E4M3 ? 448.0 : 57344.0);
            return -1;
        }
    if (run->incoherent) {
        signed char *sign = malloc((size_t)d);
        double *row = malloc((size_t)d * sizeof *row);
        if (!sign || !row) {
            free(sign);
            free(row);
            snprintf(err, errlen, "out of memory for the Hadamard transform");
            return -1;
        }
        hadamard_signs(run->incoherent_seed, d, sign);
        transform_rows(Q, qh * Nq, d, sign, row);
        transform_rows(K, kh * Nk, d, sign, row);
        free(sign);
        free(row);
    }
    const int block = run->fp8_scale == SIM_FP8_BLOCK;
    quantise_tensor(Q, qh, Nq, d, block ? Br : 0, sh->dtype);
    quantise_tensor(K, kh, Nk, d, block ? Bc : 0, sh->dtype);
    quantise_tensor(V, kh, Nk, d, block ? Bc : 0, sh->dtype);
    return 0;
}
