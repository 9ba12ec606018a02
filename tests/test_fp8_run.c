/*
 * test_fp8_run.c — fp8 runs of the simulator: quantisation with per-tensor
 * and per-block scales and the Hadamard transform (sim_fp8_quantise), FA2's
 * forward counts with 1-byte Q, K, V against its closed form written out
 * here, and ref_compare's rmse.
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
#include "sim.h"

/* Two blocks of 4 rows (d = 4): block 0 holds one value 1000, block 1
 * values of 1e-3. One scale for the tensor (1000 / 448) puts 1e-3 at
 * 4.5e-4, under half of e4m3's least subnormal (2^-10): it flushes to 0.
 * A scale per block (1e-3 / 448) keeps it within e4m3's half-ulp 2^-4. */
static void test_block_scales_keep_small_blocks(void **state)
{
    (void)state;
    enum { N = 8, D = 4 };
    sim_shape sh = { .N = N, .d = D, .M = 1 << 20, .dtype = SIM_E4M3 };
    for (int block = 0; block < 2; block++) {
        float Q[N * D], K[N * D], V[N * D];
        for (int k = 0; k < N * D; k++)
            Q[k] = K[k] = V[k] = k < 4 * D ? 0.5f : 1e-3f;
        Q[0] = K[0] = V[0] = 1000.0f;
        sim_run_opts run = { .fp8_scale = block ? SIM_FP8_BLOCK : SIM_FP8_TENSOR };
        char err[256];
        assert_int_equal(sim_fp8_quantise(&sh, &run, 4, 4, Q, K, V, err, sizeof err), 0);
        for (int k = 4 * D; k < N * D; k++) {
            const float *t[3] = { Q, K, V };
            for (int x = 0; x < 3; x++) {
                if (block)
                    assert_true(fabs(t[x][k] - 1e-3) <= 1e-3 / 16 * 1.0001);
                else
                    assert_true(t[x][k] == 0.0f);
            }
        }
        /* The largest magnitude lands on 448 x scale: itself, to a float. */
        assert_true(fabsf(Q[0] - 1000.0f) <= 1000.0f * 1e-6f);
        /* 0.5 / (1000 / 448) = 0.224: e4m3 rounds it within 2^-4. */
        assert_true(fabs(Q[D] - 0.5) <= 0.5 / 16);
    }
}

/* The transform is seeded (same seed, same bits; another seed, another
 * matrix) and leaves Q K^T as it was up to the quantisation; V is not
 * transformed. */
static void test_incoherent_is_seeded(void **state)
{
    (void)state;
    enum { N = 16, D = 8 };
    sim_shape sh = { .N = N, .d = D, .M = 1 << 20, .dtype = SIM_E5M2 };
    float Q0[N * D], K0[N * D], V0[N * D];
    sim_random_qkv(7, N, N, D, SIM_FP32, Q0, K0, V0);
    float Q[3][N * D], K[3][N * D], V[3][N * D];
    const uint64_t seeds[3] = { 1, 1, 2 };
    char err[256];
    for (int k = 0; k < 3; k++) {
        memcpy(Q[k], Q0, sizeof Q0);
        memcpy(K[k], K0, sizeof K0);
        memcpy(V[k], V0, sizeof V0);
        sim_run_opts run = { .incoherent = 1, .incoherent_seed = seeds[k] };
        assert_int_equal(sim_fp8_quantise(&sh, &run, 4, 4, Q[k], K[k], V[k], err, sizeof err),
                         0);
    }
    assert_memory_equal(Q[0], Q[1], sizeof Q0);
    assert_memory_not_equal(Q[0], Q[2], sizeof Q0);
    assert_memory_equal(V[0], V[2], sizeof V0);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double a = 0, b = 0, na = 0, nb = 0;
            for (int c = 0; c < D; c++) {
                a += (double)Q0[i * D + c] * K0[j * D + c];
                b += (double)Q[2][i * D + c] * K[2][j * D + c];
                na += (double)Q0[i * D + c] * Q0[i * D + c];
                nb += (double)K0[j * D + c] * K0[j * D + c];
            }
            /* e5m2: each entry within 2^-3 relative, so the score within
             * 2 x 2^-3 + 2^-6 of |q| |k| (Cauchy-Schwarz). */
            assert_true(fabs(a - b) <= 0.3 * sqrt(na * nb));
        }
}

/* Refusals: d not a power of two under --incoherent, inputs not finite. */
static void test_refusals(void **state)
{
    (void)state;
    float Q[12] = { 0 }, K[12] = { 0 }, V[12] = { 0 };
    char err[256];
    sim_shape sh = { .N = 4, .d = 3, .M = 1 << 20, .dtype = SIM_E4M3 };
    sim_run_opts run = { .incoherent = 1 };
    assert_int_equal(sim_fp8_quantise(&sh, &run, 4, 4, Q, K, V, err, sizeof err), -1);
    assert_non_null(strstr(err, "power of two"));
    run.incoherent = 0;
    V[5] = INFINITY;
    assert_int_equal(sim_fp8_quantise(&sh, &run, 4, 4, Q, K, V, err, sizeof err), -1);
    assert_non_null(strstr(err, "V holds inf or NaN"));
    sim_shape h = sh;
    h.dtype = SIM_FP16;
    run.fp8_scale = SIM_FP8_BLOCK;
    assert_int_equal(sim_check(&h, &run, err, sizeof err), -1);
    assert_non_null(strstr(err, "fp8 dtype"));
}

/* FA2's forward in fp8, not causal, counted: Q read once, K and V T_r times
 * (N d elements of 1 byte each time), O written once in bf16 (2 bytes), L
 * written once in fp32: bytes = N d + 2 T_r N d + 2 N d + 4 N. */
static void test_fa2_counts_one_byte(void **state)
{
    (void)state;
    const int64_t Ns[] = { 64, 100, 1000 }, ds[] = { 16, 64 };
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 2; b++)
            for (int dt = SIM_E4M3; dt <= SIM_E5M2; dt++) {
                const int64_t N = Ns[a], d = ds[b];
                sim_shape sh = { .N = N, .d = d, .M = 96 * 1024, .dtype = (sim_dtype)dt };
                sim_plan p;
                sim_result res;
                char err[512];
                assert_int_equal(sim_plan_choose(SIM_FA2, &sh, NULL, SIM_PLAN_AUTO, 32, 32, &p,
                                                 err, sizeof err), 0);
                assert_int_equal(sim_run(SIM_FA2, &sh, &p, NULL, NULL, NULL, NULL, &res, err,
                                         sizeof err), 0);
                const uint64_t Tr = (uint64_t)((N + 31) / 32);
                const uint64_t nd = (uint64_t)(N * d);
                const uint64_t want = nd + 2 * Tr * nd + 2 * nd + 4 * (uint64_t)N;
                assert_int_equal(sim_counts_read_bytes(&res.counts, sh.dtype) +
                                     sim_counts_write_bytes(&res.counts, sh.dtype), want);
                sim_result_free(&res);
            }
}

static void test_rmse(void **state)
{
    (void)state;
    const float got[4] = { 1, 2, 3, 4 };
    const double want[4] = { 1, 2, 5, 4 };
    ref_error e = ref_compare(got, want, 4);
    assert_true(fabs(e.rmse - 1.0) < 1e-15);    /* sqrt(4 / 4) */
    assert_true(e.max_abs == 2.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_scales_keep_small_blocks),
        cmocka_unit_test(test_incoherent_is_seeded),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_fa2_counts_one_byte),
        cmocka_unit_test(test_rmse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
