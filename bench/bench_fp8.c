/*
 * bench_fp8.c — FlashAttention-3's Table 3 (Shah et al. 2024, section 4.3):
 * the RMSE of attention's output against a float64 reference when Q, K, V
 * hold N(0, 1) + N(0, 100) x Bernoulli(0.001), in fp16 and in fp8 (e4m3),
 * as fasim simulates each row, beside the paper's figure and the ratio.
 *
 * What each row runs (one head, not causal, tiles B_r = B_c = 128, FA3's
 * kBlockM for its FP8 forward; M = 1 MiB so they fit):
 *   FP16 baseline   naive (standard attention) in fp16: S and P stored in
 *                   fp16 in HBM, fp32 arithmetic on chip
 *   FA2             fa2 in fp16, P~ rounded to fp16 before P~ V
 *   FA3 (fp16)      the same run: FA3's fp16 numerics are FA2's (fp32
 *                   accumulation, P~ in fp16); fasim has no FA3 loop order
 *   FP8 baseline    naive in e4m3, one scale per tensor, fp32 accumulation,
 *                   S and P in fp16 (the paper's "fp16 softmax")
 *   FA3             fa2 in e4m3, block scales, incoherent processing, P~ in e4m3
 *   no block quant  the same with one scale per tensor
 *   no incoherent   the same with block scales and no transform
 * Every row's reference is attention in float64 from the float32 inputs
 * before any rounding (ref_oracle_attention_f), so every row's error
 * includes the rounding of its inputs, as the paper measures it.
 *
 * The paper does not give the problem size; two are run: N = 1024, d = 64
 * and N = 4096, d = 128. The outliers are few (one entry in a thousand, 65
 * of Q's 65,536 at N = 1024, d = 64) and the error gathers on the rows and
 * columns that hold them, so one draw's RMSE swings by 2x from seed to
 * seed. Each row is therefore run on S draws (seeds 1 .. S, sim_outlier_qkv;
 * the transform's signs from the same seed), and the figure is the RMSE
 * over all of their entries, sqrt(mean of the draws' RMSE^2), beside the
 * smallest and largest single draw's.
 *
 * Build: cmake --build build --target bench_fp8
 * Run:   ./build/bench/bench_fp8 [S (default 8)]
 * The committed output: bench/results/fp8-table3-2026-12-04.txt.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_oracle.h"
#include "sim.h"

typedef struct {
    const char *name;
    double paper;
    sim_algo algo;
    sim_dtype dtype;
    sim_fp8_scale scale;
    int incoherent;
    int fp8;            /* a row the goal (within 1.5x, same order) is about */
} row;

static const row ROWS[] = {
    { "FP16 baseline (naive)", 3.2e-4, SIM_NAIVE, SIM_FP16, SIM_FP8_TENSOR, 0, 0 },
    { "FA2 (fp16)", 1.9e-4, SIM_FA2, SIM_FP16, SIM_FP8_TENSOR, 0, 0 },
    { "FA3 (fp16) = fa2", 1.9e-4, SIM_FA2, SIM_FP16, SIM_FP8_TENSOR, 0, 0 },
    { "FP8 baseline (naive)", 2.4e-2, SIM_NAIVE, SIM_E4M3, SIM_FP8_TENSOR, 0, 1 },
    { "FA3 (fp8)", 9.1e-3, SIM_FA2, SIM_E4M3, SIM_FP8_BLOCK, 1, 1 },
    { "FA3 no block quant", 9.3e-3, SIM_FA2, SIM_E4M3, SIM_FP8_TENSOR, 1, 1 },
    { "FA3 no incoherent", 2.4e-2, SIM_FA2, SIM_E4M3, SIM_FP8_BLOCK, 0, 1 },
};
enum { NROWS = sizeof ROWS / sizeof ROWS[0] };

/* Row r's RMSE on the draw of `seed` (Q, K, V and O_ref that draw's). */
static int one_run(const row *r, int64_t N, int64_t d, uint64_t seed, const float *Q,
                   const float *K, const float *V, const double *O_ref, double *rmse)
{
    sim_shape sh = { .N = N, .d = d, .M = UINT64_C(1) << 20, .dtype = r->dtype };
    sim_run_opts run = { .fp8_scale = r->scale, .incoherent = r->incoherent,
                         .incoherent_seed = seed };
    sim_plan p;
    sim_result res;
    char err[512];
    if (sim_plan_choose(r->algo, &sh, &run, SIM_PLAN_AUTO, 128, 128, &p, err, sizeof err) ||
        sim_run(r->algo, &sh, &p, Q, K, V, NULL, &res, err, sizeof err)) {
        fprintf(stderr, "bench_fp8: %s: %s\n", r->name, err);
        return -1;
    }
    *rmse = ref_compare(res.O, O_ref, N * d).rmse;
    sim_result_free(&res);
    return 0;
}

static int one_size(int64_t N, int64_t d, int seeds)
{
    const int64_t n = N * d;
    float *Q = malloc((size_t)n * sizeof *Q), *K = malloc((size_t)n * sizeof *K),
          *V = malloc((size_t)n * sizeof *V);
    double *O_ref = malloc((size_t)n * sizeof *O_ref);
    double sq[NROWS] = { 0 }, lo[NROWS], hi[NROWS];
    int rc = -1;
    if (!Q || !K || !V || !O_ref)
        goto done;
    for (int s = 1; s <= seeds; s++) {
        sim_outlier_qkv((uint64_t)s, N, N, d, SIM_FP32, Q, K, V);
        if (ref_oracle_attention_f(Q, K, V, N, d, 0, O_ref, NULL) != 0)
            goto done;
        for (int k = 0; k < NROWS; k++) {
            double e;
            if (one_run(&ROWS[k], N, d, (uint64_t)s, Q, K, V, O_ref, &e) != 0)
                goto done;
            sq[k] += e * e;
            lo[k] = s == 1 || e < lo[k] ? e : lo[k];
            hi[k] = s == 1 || e > hi[k] ? e : hi[k];
        }
    }
    printf("N = %lld, d = %lld, one head, not causal, B_r = B_c = 128, %d draw%s (seeds 1 .. "
           "%d)\n", (long long)N, (long long)d, seeds, seeds > 1 ? "s" : "", seeds);
    printf("  %-24s %-28s %9s %9s %6s  %s\n", "row", "fasim runs", "paper", "fasim", "ratio",
           "one draw: least .. most");
    double got[NROWS];
    int ok = 1;
    for (int k = 0; k < NROWS; k++) {
        const row *r = &ROWS[k];
        char what[64];
        got[k] = sqrt(sq[k] / seeds);
        if (sim_dtype_is_fp8(r->dtype))
            snprintf(what, sizeof what, "%s %s, %s%s", sim_algo_name(r->algo),
                     sim_dtype_name(r->dtype), sim_fp8_scale_name(r->scale),
                     r->incoherent ? ", hadamard" : "");
        else
            snprintf(what, sizeof what, "%s %s", sim_algo_name(r->algo),
                     sim_dtype_name(r->dtype));
        const double ratio = got[k] / r->paper;
        printf("  %-24s %-28s %9.2e %9.2e %5.2fx  %.2e .. %.2e%s\n", r->name, what, r->paper,
               got[k], ratio, lo[k], hi[k],
               r->fp8 && (ratio > 1.5 || ratio < 1 / 1.5) ? "  (outside 1.5x)" : "");
        ok &= !r->fp8 || (ratio <= 1.5 && ratio >= 1 / 1.5);
    }
    /* The paper's order of the FP8 rows: FA3 < no block quant < no
     * incoherent <= baseline. */
    const int order = got[4] <= got[5] && got[5] < got[6] && got[6] <= got[3];
    printf("  FP8 rows within 1.5x of the paper: %s; the paper's order (FA3 <= no block "
           "quant < no incoherent <= baseline): %s\n\n", ok ? "yes" : "no",
           order ? "yes" : "no");
    rc = 0;
done:
    free(Q);
    free(K);
    free(V);
    free(O_ref);
    return rc;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    const long seeds = argc > 1 ? strtol(argv[1], &end, 10) : 8;
    if (argc > 2 || (argc > 1 && (*end || end == argv[1] || seeds < 1 || seeds > 1000))) {
        fprintf(stderr, "usage: bench_fp8 [DRAWS]: DRAWS from 1 to 1000 (default 8)\n");
        return 2;
    }
    printf("FlashAttention-3 Table 3: RMSE of O against float64, inputs N(0,1) + N(0,100) x "
           "Bernoulli(0.001); fasim: the RMSE over all entries of %ld draws\n\n", seeds);
    if (one_size(1024, 64, (int)seeds) != 0 || one_size(4096, 128, (int)seeds) != 0) {
        fprintf(stderr, "bench_fp8: failed\n");
        return 1;
    }
    return 0;
}
