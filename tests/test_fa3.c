/*
 * test_fa3.c — FlashAttention-3's forward (sim/algo_fa3.c) and its pipeline
 * in time (study/sim_gpu_fa3.c):
 *   - its HBM counts, tile steps, FLOPs and output bits are FA2 forward's on
 *     the same tiles (fp16 and e4m3, causal or not);
 *   - what it refuses: the backward, fp32, a GPU that is not Hopper, the
 *     switches on another loop order;
 *   - one step's time under each switch against the closed forms of
 *     sim_gpu_fa3.h, computed here from G, E and M;
 *   - the released kernel's tiles (hopper/tile_size.h) and warps;
 *   - the FA3 paper's Table 2 (H100 SXM5, fp16, batch 4, N = 8448, 16 heads,
 *     d = 128): each row within 20% of the published time, in the published
 *     order, and the full pipeline no faster than its products alone at the
 *     tensor cores' rate (computed here from the preset's peak);
 *   - a block's first step names no block j-1 (in the slices and the
 *     trace, counted against the grid's closed form), and with warp
 *     specialisation off no producer is named;
 *   - the timeline's picture of one block (viz/viz_timeline.c) follows the
 *     switches: what each warpgroup's row holds inside a step, the ring's
 *     stages within 1 .. 2, the steps' count;
 *   - the view's PIPELINE panel at every step of a small run, causal or
 *     not, against FA3's schedule written out here: the stage each block
 *     sits in, the producer's next block, whose turn on the tensor cores.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "sim_gpu_fa3.h"
#include "sim_gpu_model.h"
#include "sim_loop.h"
#include "sim_presets.h"
#include "viz_model.h"
#include "viz_timeline.h"

static sim_algo SIM_FA3;   /* registered in main */

/* Same counts, steps and FLOPs as FA2's forward, same output bits, at the
 * same tiles (fp16 and fp8, causal or not, a ragged last block). */
static void test_same_as_fa2(void **state)
{
    (void)state;
    const sim_dtype dts[2] = { SIM_FP16, SIM_E4M3 };
    for (int x = 0; x < 4; x++) {
        sim_shape sh = { .N = 200, .d = 32, .M = 1 << 20, .dtype = dts[x & 1],
                         .causal = x >> 1, .batch = 1, .heads = 2 };
        const int64_t n = sh.N * sh.d * 2;
        float *Q = malloc(sizeof *Q * (size_t)n), *K = malloc(sizeof *K * (size_t)n),
              *V = malloc(sizeof *V * (size_t)n);
        assert_non_null(Q);
        assert_non_null(K);
        assert_non_null(V);
        sim_random_qkv(3, 2 * sh.N, 2 * sh.N, sh.d, SIM_FP32, Q, K, V);
        sim_result r[2];
        const sim_algo algos[2] = { SIM_FA2, SIM_FA3 };
        for (int a = 0; a < 2; a++) {
            sim_plan p;
            const sim_run_opts run = { 0 };
            assert_int_equal(sim_plan_make(algos[a], &sh, &run, 64, 48, SIM_PLAN_USER, &p), 0);
            char err[256];
            assert_int_equal(sim_run(algos[a], &sh, &p, Q, K, V, NULL, &r[a], err, sizeof err),
                             0);
            sim_flops f;
            assert_int_equal(sim_theory_flops(&p, &sh, &f), 0);
            if (a == 1) {
                sim_plan p2;
                assert_int_equal(sim_plan_make(SIM_FA2, &sh, &run, 64, 48, SIM_PLAN_USER, &p2),
                                 0);
                sim_flops f2;
                assert_int_equal(sim_theory_flops(&p2, &sh, &f2), 0);
                assert_true(f.matmul == f2.matmul && f.other == f2.other);
                /* the ring: two stages of K_j and V_j, 48 x 32 fp16 or fp8 each */
                assert_int_equal(p.sram_peak - p2.sram_peak,
                                 2u * 48u * 32u * (unsigned)sim_dtype_bytes(sh.dtype));
            }
        }
        assert_memory_equal(&r[0].counts, &r[1].counts, sizeof r[0].counts);
        assert_int_equal(r[0].steps, r[1].steps);
        assert_memory_equal(r[0].O, r[1].O, sizeof(float) * (size_t)n);
        assert_memory_equal(r[0].L, r[1].L, sizeof(float) * (size_t)(2 * sh.N));
        sim_result_free(&r[0]);
        sim_result_free(&r[1]);
        free(Q);
        free(K);
        free(V);
    }
}

/* Forward only, 16- and 8-bit types; opt-in and out of "all". */
static void test_refusals(void **state)
{
    (void)state;
    sim_shape sh = { .N = 128, .d = 64, .M = 1 << 20, .dtype = SIM_FP16 };
    sim_plan p;
    char err[512];
    sim_run_opts bwd = { .pass = SIM_BWD };
    assert_int_not_equal(sim_plan_choose(SIM_FA3, &sh, &bwd, SIM_PLAN_AUTO, 0, 0, &p, err,
                                         sizeof err), 0);
    assert_non_null(strstr(err, "no backward pass"));
    sh.dtype = SIM_FP32;
    const sim_run_opts fwd = { 0 };
    assert_int_not_equal(sim_plan_choose(SIM_FA3, &sh, &fwd, SIM_PLAN_AUTO, 0, 0, &p, err,
                                         sizeof err), 0);
    assert_non_null(strstr(err, "does not run in fp32"));
    assert_int_equal(sim_algo_in_default(SIM_FA3), 0);
    assert_true(sim_algo_loop(SIM_FA3)->flags & SIM_LOOP_NAMED_ONLY);
    sim_algo a;
    assert_int_equal(sim_algo_parse("fa3", &a), 0);
    assert_int_equal(a, SIM_FA3);

    /* not Hopper: no plan of its kernel, no model */
    sh.dtype = SIM_FP16;
    sim_kernel_target a100 = sim_gpu_kernel_target(sim_gpu_find("a100"));
    assert_int_not_equal(sim_plan_kernel(SIM_FA3, &sh, &fwd, &a100, 0, 0, &p, err, sizeof err),
                         0);
    assert_non_null(strstr(err, "Hopper"));
    assert_int_equal(sim_plan_make(SIM_FA3, &sh, &fwd, 64, 64, SIM_PLAN_USER, &p), 0);
    sim_gm_result r;
    assert_int_not_equal(sim_gpu_model_run(sim_gpu_find("a100"), &p, &sh, NULL, &r, err,
                                           sizeof err), 0);
    assert_non_null(strstr(err, "WGMMA"));
    /* the switches belong to FA3 */
    assert_int_equal(sim_plan_make(SIM_FA2, &sh, &fwd, 64, 64, SIM_PLAN_USER, &p), 0);
    sim_gm_opts o = { .no_pipeline = 1 };
    assert_int_not_equal(sim_gpu_model_run(sim_gpu_find("h100"), &p, &sh, &o, &r, err,
                                           sizeof err), 0);
    assert_non_null(strstr(err, "--algo fa3"));
}

/* The released kernel's tiles and warps, as tile_size_fwd_sm90 gives them. */
static void test_kernel_tiles(void **state)
{
    (void)state;
    const struct {
        int64_t d;
        sim_dtype dt;
        int causal;
        int64_t Br, Bc;
        int warps;
    } C[] = {
        { 128, SIM_FP16, 0, 128, 176, 12 }, { 128, SIM_BF16, 1, 128, 128, 12 },
        { 64, SIM_FP16, 0, 192, 192, 16 },  { 256, SIM_FP16, 0, 128, 80, 12 },
        { 256, SIM_E4M3, 0, 128, 128, 12 }, { 128, SIM_E5M2, 1, 128, 224, 12 },
    };
    const sim_kernel_target h100 = sim_gpu_kernel_target(sim_gpu_find("h100"));
    for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
        sim_shape sh = { .N = 1024, .d = C[k].d, .M = h100.smem_per_block, .dtype = C[k].dt,
                         .causal = C[k].causal };
        sim_kernel_choice c;
        char err[256];
        assert_int_equal(sim_kernel_choose(SIM_FA3, &sh, NULL, &h100, &c, err, sizeof err), 0);
        assert_int_equal(c.Br, C[k].Br);
        assert_int_equal(c.Bc, C[k].Bc);
        assert_int_equal(c.warps, C[k].warps);
    }
    sim_shape odd = { .N = 1024, .d = 80, .M = h100.smem_per_block, .dtype = SIM_FP16 };
    sim_kernel_choice c;
    char err[256];
    assert_int_not_equal(sim_kernel_choose(SIM_FA3, &odd, NULL, &h100, &c, err, sizeof err), 0);
}

/* One step by switch: G = 4, E = 3, M = 1 (E/2 = 1.5 over G/4 = 1: the
 * softmax outlasts the other warpgroup's GEMM0), and E = 1 (it does not). */
static void test_step_closed_forms(void **state)
{
    (void)state;
    const double G = 4, M = 1;
    const double Es[2] = { 3, 1 };
    for (int k = 0; k < 2; k++) {
        const double E = Es[k];
        const double want[4] = {
            fmax(G, E),                                   /* FA3 */
            fmax(G + fmax(0, E / 2 - G / 4), E),          /* --pipeline off */
            G / 2 + fmax(E, G / 2),                       /* --warp-specialization off */
            G + E,                                        /* both off */
        };
        for (int sw = 0; sw < 4; sw++) {
            sim_gm_opts o = { .no_pipeline = sw & 1, .no_warp_spec = sw >> 1 };
            sim_gm_bound b;
            sim_fa3_slice sl[SIM_FA3_MAX_SLICES];
            int n = 0;
            double freed = -1;
            const double t = sim_fa3_step(&o, 0, G, E, M, SIM_GM_BOUND_SFU, SIM_GM_BOUND_DRAM, &b,
                                          sl, &n, &freed);
            const double expect = want[sw];
            assert_true(fabs(t - expect) < 1e-12);
            assert_true(n > 0 && n <= SIM_FA3_MAX_SLICES);
            /* the block before's stage: freed when its GEMM1 ends, in
             * WG2's turn (both on) or beside the softmax (no warp
             * specialisation); not pipelined, in the step before */
            const double freed_want[4] = { fmax(G, E) / 2 + G / 2, 0, G / 2 + fmax(E, G / 2),
                                           0 };
            assert_true(fabs(freed - freed_want[sw]) < 1e-12);
            double f2 = -1;
            sim_fa3_step(&o, 0, G, E, M, SIM_GM_BOUND_SFU, SIM_GM_BOUND_DRAM, &b, NULL, NULL,
                         &f2);
            assert_true(f2 == freed);
            sim_fa3_step(&o, 1, G, E, M, SIM_GM_BOUND_SFU, SIM_GM_BOUND_DRAM, &b, NULL, NULL,
                         &f2);
            assert_true(f2 == 0);       /* a block's first step: no block before */
            for (int s = 0; s < n; s++)   /* every slice within the step */
                assert_true(sl[s].t0 >= 0 && sl[s].t0 + sl[s].dur <= t + 1e-12);
            /* memory slower than the arithmetic: the copies bind */
            assert_true(sim_fa3_step(&o, 0, G, E, 100, SIM_GM_BOUND_SFU, SIM_GM_BOUND_DRAM, &b,
                                     NULL, NULL, NULL) == 100);
            assert_int_equal(b, SIM_GM_BOUND_DRAM);
        }
        /* with E = 1 the softmax hides under one product: pipelining buys nothing */
        if (k == 1)
            assert_true(want[1] == want[0]);
    }
}

/* FA3's released-kernel plan on the H100 for fp16 shape (N, d, B, H), run
 * through the GPU model with options o (NULL: none). */
static sim_gm_result h100_fa3(int64_t N, int64_t d, int64_t B, int64_t H, const sim_gm_opts *o,
                              sim_plan *p)
{
    const sim_gpu *g = sim_gpu_find("h100");
    sim_shape sh = { .N = N, .d = d, .M = g->smem_per_block, .dtype = SIM_FP16, .batch = B,
                     .heads = H };
    const sim_run_opts run = { 0 };
    const sim_kernel_target kt = sim_gpu_kernel_target(g);
    char err[512];
    assert_int_equal(sim_plan_kernel(SIM_FA3, &sh, &run, &kt, 0, 0, p, err, sizeof err), 0);
    sim_gm_result r;
    if (sim_gpu_model_run(g, p, &sh, o, &r, err, sizeof err) != 0)
        fail_msg("%s", err);
    return r;
}

static double table2(int no_pipeline, int no_ws, double *tflops)
{
    sim_gm_opts o = { .no_pipeline = no_pipeline, .no_warp_spec = no_ws };
    sim_plan p;
    const sim_gm_result r = h100_fa3(8448, 128, 4, 16, &o, &p);
    *tflops = r.tflops;
    return r.time_s;
}

/* FA3 paper, Table 2: 3.538 ms, 4.021 ms without the GEMM-softmax
 * pipelining, 4.105 ms without warp specialization. */
static void test_table2(void **state)
{
    (void)state;
    double tf[3];
    const double t[3] = { table2(0, 0, &tf[0]), table2(1, 0, &tf[1]), table2(0, 1, &tf[2]) };
    const double pub[3] = { 3.538e-3, 4.021e-3, 4.105e-3 };
    for (int k = 0; k < 3; k++)
        assert_true(fabs(t[k] - pub[k]) / pub[k] < 0.20);
    assert_true(t[0] < t[1] && t[1] < t[2]);
    /* No faster than its products at the tensor cores' rate: 4 B H N^2 d
     * FLOPs at tensor_eff of 989.4 TFLOP/s (WGMMA reaches the peak). */
    const double flops = 4.0 * 4 * 16 * 8448.0 * 8448.0 * 128;
    const double floor = flops / (989.4e12 * sim_gpu_model_constants().tensor_eff);
    assert_true(t[0] >= floor);
    assert_true(t[0] < 1.10 * floor);
    assert_true(tf[0] > 0);
}

/* Table 2's shape, its mean step: every tile is whole (8448 = 66 x 128 =
 * 48 x 176), so G and E are one tile's, computed here from the preset:
 * G = 4 B_r B_c d FLOPs at tensor_eff of the SM's share of the peak; E =
 * B_r B_c (one exp at 16 a clock, plus the other FLOPs of a score but the
 * exp at the FP32 pipe's rate, an FMA being 2), the other FLOPs of FA2's
 * forward (algo_fa2.c): 4 a score, 2d + 5 a row of each block pair and
 * d + 2 a row. */
static void test_step_parts(void **state)
{
    (void)state;
    sim_plan p;
    const sim_gm_result r = h100_fa3(8448, 128, 1, 4, NULL, &p);
    assert_int_equal(p.Br, 128);
    assert_int_equal(p.Bc, 176);
    const double Br = 128, Bc = 176, d = 128, N = 8448, Tc = N / Bc;
    const double tc_sm = 989.4e12 * sim_gpu_model_constants().tensor_eff / 132;
    const double G = 4 * Br * Bc * d / tc_sm;
    const double A = N * N, other = 4 * A + (2 * d + 5) * N * Tc + (d + 2) * N;
    const double E = Br * Bc * (1.0 / (16 * 1830e6) + (other / A - 1) / (66.9e12 / 2 / 132));
    assert_true(fabs(r.fa3.G - G) < 1e-9 * G);
    assert_true(fabs(r.fa3.E - E) < 1e-9 * E);
    assert_int_equal(r.fa3.steps, (uint64_t)(4 * 66 * 48));
    assert_true(r.fa3.step >= G && r.fa3.step >= r.fa3.M);
    assert_true(r.fa3.E < r.fa3.G);      /* the products bind at d = 128 in fp16 */
}

/* The trace of N = 1024, d = 128, one head on the H100 (with warp
 * specialisation off when no_ws) in *buf (*len bytes; free it), and its
 * plan in *p. */
static void fa3_trace(int no_ws, sim_plan *p, char **buf, size_t *len)
{
    FILE *f = open_memstream(buf, len);
    assert_non_null(f);
    sim_gm_trace tr;
    sim_gm_trace_begin(&tr, f);
    sim_gm_opts o = { .trace = &tr, .trace_name = "fa3 fwd", .no_warp_spec = no_ws };
    (void)h100_fa3(1024, 128, 1, 1, &o, p);
    sim_gm_trace_end(&tr);
    fclose(f);
}

/* The trace holds the warpgroups' tracks and the ring's counter. */
static void test_trace_tracks(void **state)
{
    (void)state;
    sim_plan p;
    char *buf = NULL;
    size_t len = 0;
    fa3_trace(0, &p, &buf, &len);
    assert_non_null(strstr(buf, "consumer warpgroup 2"));
    assert_non_null(strstr(buf, "\"GEMM0 (j) + GEMM1 (j-1)\""));
    assert_non_null(strstr(buf, "\"TMA K_j, V_j\""));
    assert_non_null(strstr(buf, "SMEM stages full"));
    free(buf);
}


/* At a block's first step no slice names block j-1, under every switch, and
 * the step costs what any other does (charged in full); at a later step the
 * pipelined turns do name it. */
static void test_first_step_names(void **state)
{
    (void)state;
    const double G = 4, E = 3, M = 1;
    for (int sw = 0; sw < 4; sw++) {
        sim_gm_opts o = { .no_pipeline = sw & 1, .no_warp_spec = sw >> 1 };
        sim_gm_bound b;
        sim_fa3_slice sl[SIM_FA3_MAX_SLICES];
        int n = 0, later = 0;
        const double t1 = sim_fa3_step(&o, 1, G, E, M, SIM_GM_BOUND_SFU, SIM_GM_BOUND_DRAM, &b,
                                       sl, &n, NULL);
        for (int k = 0; k < n; k++) {
            assert_null(strstr(sl[k].name, "j-1"));
            assert_true(sl[k].kind != SIM_FA3_GEMM1_GEMM0 &&
                        sl[k].kind != SIM_FA3_SOFTMAX_GEMM1);
            assert_true(sl[k].t0 >= 0 && sl[k].t0 + sl[k].dur <= t1 + 1e-12);
        }
        const double t2 = sim_fa3_step(&o, 0, G, E, M, SIM_GM_BOUND_SFU, SIM_GM_BOUND_DRAM, &b,
                                       sl, &n, NULL);
        assert_true(t1 == t2);
        for (int k = 0; k < n; k++)
            later += strstr(sl[k].name, "j-1") != NULL;
        /* pipelined: both turns (ping-pong) or both warpgroups' softmax
         * beside GEMM1 (no warp specialisation) name j-1; not pipelined:
         * none */
        assert_int_equal(later, (sw & 1) ? 0 : sw == 0 ? 3 : 2);
    }
}

/* A step's slices keep the data's order and share the units, whichever of
 * G and E is longer: on no track do two slices overlap; with warp
 * specialisation the two warpgroups' products never share the tensor cores
 * at once, nor (pipelined) their softmaxes the special-function units; a
 * warpgroup's turn that runs GEMM1 (j-1) starts after its softmax of j-1
 * ends; and every slice ends within the step. */
static int tensor_kind(int kind)
{
    return kind == SIM_FA3_GEMM0 || kind == SIM_FA3_GEMM1 || kind == SIM_FA3_GEMM1_GEMM0;
}

static void test_step_order(void **state)
{
    (void)state;
    static const double GE[][2] = { { 4, 3 }, { 2, 3 }, { 1, 5 }, { 3, 3 } };
    for (int q = 0; q < 4; q++)
        for (int sw = 0; sw < 4; sw++)
            for (int first = 0; first < 2; first++) {
                const double G = GE[q][0], E = GE[q][1], M = 0.5;
                sim_gm_opts o = { .no_pipeline = sw & 1, .no_warp_spec = sw >> 1 };
                sim_gm_bound b;
                sim_fa3_slice sl[SIM_FA3_MAX_SLICES];
                int n = 0;
                const double t = sim_fa3_step(&o, first, G, E, M, SIM_GM_BOUND_SFU,
                                              SIM_GM_BOUND_DRAM, &b, sl, &n, NULL);
                for (int a = 0; a < n; a++) {
                    const sim_fa3_slice *x = &sl[a];
                    if (x->t0 < 0 || x->t0 + x->dur > t + 1e-12)
                        fail_msg("G %g E %g sw %d: %s [%g, %g) outside the step %g", G, E, sw,
                                 x->name, x->t0, x->t0 + x->dur, t);
                    for (int c = a + 1; c < n; c++) {
                        const sim_fa3_slice *y = &sl[c];
                        const int overlap = x->t0 < y->t0 + y->dur - 1e-12 &&
                                            y->t0 < x->t0 + x->dur - 1e-12;
                        const int same_unit = sw == 0 && x->track != SIM_FA3_PRODUCER &&
                            y->track != SIM_FA3_PRODUCER &&
                            ((tensor_kind(x->kind) && tensor_kind(y->kind)) ||
                             (x->kind == SIM_FA3_SOFTMAX && y->kind == SIM_FA3_SOFTMAX));
                        if (overlap && (x->track == y->track || same_unit))
                            fail_msg("G %g E %g sw %d first %d: %s and %s overlap", G, E, sw,
                                     first, x->name, y->name);
                    }
                    if (x->kind != SIM_FA3_GEMM1_GEMM0)
                        continue;
                    for (int c = 0; c < n; c++)
                        if (sl[c].track == x->track && strstr(sl[c].name, "softmax (j-1)") &&
                            sl[c].t0 + sl[c].dur > x->t0 + 1e-12)
                            fail_msg("G %g E %g: GEMM1 (j-1) before its softmax ends", G, E);
                }
            }
}

static int count_of(const char *buf, const char *what)
{
    int n = 0;
    for (const char *p = strstr(buf, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

/* The trace of N = 1024, d = 128, one head on the H100: T_r = 1024 / 128 =
 * 8 blocks of T_c = ceil(1024 / 176) = 6 steps. Each block's first step:
 * both turns GEMM0 alone, no softmax of j-1; each later one: both turns
* GEMM0 (j) + GEMM1 (j-1), WG2's softmax (j-1). With warp specialisation
 * off, no track is named a producer. */
static void test_trace_first_steps(void **state)
{
    (void)state;
    const int Tr = 8, Tc = 6;
    for (int ws = 0; ws < 2; ws++) {
        sim_plan p;
        char *buf = NULL;
        size_t len = 0;
        fa3_trace(ws, &p, &buf, &len);
        assert_int_equal(p.Tc, Tc);
        if (!ws) {
            assert_int_equal(count_of(buf, "\"name\":\"GEMM0 (j)\""), 2 * Tr);
            assert_int_equal(count_of(buf, "\"name\":\"GEMM0 (j) + GEMM1 (j-1)\""),
                             2 * Tr * (Tc - 1));
            assert_int_equal(count_of(buf, "\"name\":\"softmax (j-1)\""), Tr * (Tc - 1));
            assert_int_equal(count_of(buf, "\"name\":\"softmax (j)\""), Tr * Tc);
            assert_non_null(strstr(buf, "producer (TMA)"));
        } else {
            assert_int_equal(count_of(buf, "\"name\":\"softmax + GEMM1 (j-1)\""),
                             2 * Tr * (Tc - 1));
            assert_int_equal(count_of(buf, "\"name\":\"softmax\""), 2 * Tr);
            assert_null(strstr(buf, "producer"));
            assert_non_null(strstr(buf, "issued by the consumers"));
        }
        free(buf);
    }
}

/* The row of the picture whose label is `label` (11 columns), or NULL. */
static const char *pic_row(const char *pic, const char *label)
{
    char key[32];
    snprintf(key, sizeof key, "\n%-11s", label);
    const char *p = strstr(pic, key);
    return p ? p + strlen(key) : NULL;
}

/* What row r holds in columns [c0, c1): a set of its characters. */
static int has(const char *r, int c0, int c1, char c)
{
    for (int k = c0; k < c1 && r[k] && r[k] != '\n'; k++)
        if (r[k] == c)
            return 1;
    return 0;
}

/* The timeline of N = 2048, d = 128, 4 heads (T_c = ceil(2048 / 176) = 12
 * steps a block) under each switch: the block pictured is SM 0's first
 * (head 0, block 0) with all 12 steps counted, back to back; in every step
 * after the first, each consumer row holds what the switch says (both on:
 * X and s; --pipeline off: 0, s and 1; --warp-specialization off: 0 and S;
 * both off: 0, s and 1), the first step neither X nor S (no block j-1);
 * the copies' row is "producer" only with warp specialisation; the ring's
 * row within 1 .. 2 stages (kStages = 2): two at a later step's start when
 * pipelined (the block before's V waits for the GEMM1 of this step's
 * turns), one at the first step and throughout when not pipelined. */
static void test_timeline_picture(void **state)
{
    (void)state;
    const sim_gpu *g = sim_gpu_find("h100");
    sim_shape sh = { .N = 2048, .d = 128, .M = g->smem_per_block, .dtype = SIM_FP16,
                     .batch = 1, .heads = 4 };
    const sim_run_opts run = { 0 };
    const sim_kernel_target kt = sim_gpu_kernel_target(g);
    char err[512];
    sim_plan p;
    assert_int_equal(sim_plan_kernel(SIM_FA3, &sh, &run, &kt, 0, 0, &p, err, sizeof err), 0);
    static const char *const WANT[4] = { "Xs", "0s1", "0S", "0s1" };
    static const char *const NOT[4] = { "01S", "XS", "X1s", "XS" };
    for (int sw = 0; sw < 4; sw++) {
        const sim_gm_opts o = { .no_pipeline = sw & 1, .no_warp_spec = sw >> 1 };
        viz_timeline tl;
        sim_gm_result r;
        if (viz_timeline_model(&tl, g, &p, &sh, &o, 100000, &r, err, sizeof err) != 0)
            fail_msg("%s", err);
        assert_int_equal(tl.fa3.steps, 12);
        assert_int_equal(tl.fa3.head, 0);
        assert_int_equal(tl.fa3.block, 0);
        assert_int_equal(tl.fa3.n, 12);
        for (int k = 0; k + 1 < tl.fa3.n; k++)
            assert_true(fabs(tl.fa3.s[k + 1].t - tl.fa3.s[k].t - tl.fa3.s[k].dur) <
                        1e-12 * r.time_s);
        char *pic = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&pic, &len);
        assert_non_null(f);
        viz_timeline_text(f, &tl, "t", 80, 4);
        fclose(f);
        viz_timeline_free(&tl);
        {   /* the header, its lines joined */
            char *one = strdup(pic);
            assert_non_null(one);
            for (char *c = one; *c; c++)
                if (*c == '\n')
                    *c = ' ';
            assert_non_null(strstr(one, "its first 6 of 12 tile steps"));
            free(one);
        }
        const char *ruler = pic_row(pic, "step"), *copies = pic_row(pic, "producer");
        const char *wg[2] = { pic_row(pic, "WG1"), pic_row(pic, "WG2") };
        const char *ring = pic_row(pic, "SMEM full");
        assert_non_null(ruler);
        assert_non_null(wg[0]);
        assert_non_null(wg[1]);
        assert_non_null(ring);
        if (sw >> 1) {
            assert_null(copies);
            copies = pic_row(pic, "WG copies");
        }
        assert_non_null(copies);
        assert_true(has(copies, 0, 69, 'T'));
        /* the steps' starts, from the ruler */
        int at[8], n = 0;
        for (int c = 0; c < 69 && n < 7 && ruler[c] != '\n'; c++)
            if (ruler[c] == '|')
                at[n++] = c;
        assert_int_equal(n, 6);
        assert_int_equal(at[0], 0);
        at[n] = 69;
        assert_true(strncmp(ruler, "|j=1", 4) == 0);
        for (int w = 0; w < 2; w++) {
            assert_false(has(wg[w], at[0], at[1], 'X') || has(wg[w], at[0], at[1], 'S'));
            assert_true(has(wg[w], at[0], at[1], '0'));
            for (int k = 1; k < n; k++) {
                for (const char *c = WANT[sw]; *c; c++)
                    assert_true(has(wg[w], at[k], at[k + 1], *c));
                for (const char *c = NOT[sw]; *c; c++)
                    assert_false(has(wg[w], at[k], at[k + 1], *c));
            }
        }
        int seen[3] = { 0 };
        for (int c = 0; c < 69; c++) {
            assert_true(ring[c] == '1' || ring[c] == '2');
            seen[ring[c] - '0'] = 1;
        }
        /* pipelined, a later step starts with two stages full (its block's
         * and the block before's V, for the GEMM1 its turns run), the first
         * with one; not pipelined, one throughout */
        const int pipelined = !(sw & 1);
        assert_true(seen[1] && seen[2] == pipelined);
        assert_int_equal(ring[at[0]], '1');
        for (int k = 1; k < n; k++)
            assert_int_equal(ring[at[k] + 1], pipelined ? '2' : '1');
        free(pic);
    }
}

/* Whether row r's text holds the formatted string. */
static int says(const sim_pipe_row *r, const char *fmt, long long a, long long b, long long c)
{
    char want[128];
    snprintf(want, sizeof want, fmt, a, b, c);
    return strstr(r->what, want) != NULL;
}

/* The view's PIPELINE panel at every step of N = 128, B_r = B_c = 32 (T_r =
 * T_c = 4; causal: query block i visits key blocks 1 .. i, 1-based), with
 * the ring of 2 stages, a row each: block j (1-based) in stage j mod 2 from
 * its landing (line 6); the other holds block j - 1's V until both turns of
 * block j have run its GEMM1 (lines 6, 10, 11; none before the first
 * block), then block j + 1 fills it (line 12), or it is free after the
 * last; the epilogue's GEMM1 reads the last block's V; at line 10 (S) WG1
 * holds the tensor cores and WG2 runs
 * the softmax of block j - 1 (waits at the first block), at line 11 the
 * other way; the first block's turn names no GEMM1. Outside the loop:
 * line 3 waits for Q_i, the return has no panel. */
static void test_view_pipeline(void **state)
{
    (void)state;
    for (int causal = 0; causal < 2; causal++) {
        viz_config c;
        viz_config_default(&c);
        c.algo = SIM_FA3;
        c.sh.N = 128;
        c.sh.d = 16;
        c.sh.M = 64 * 1024;
        c.sh.causal = causal;
        c.Br = c.Bc = 32;
        c.plan_kind = SIM_PLAN_USER;
        c.mode = VIZ_MODE_COUNT;
        viz_model *m = NULL;
        char err[2048];
        assert_int_equal(viz_model_build(&c, &m, err, sizeof err), VIZ_OK);
        const viz_info *in = viz_model_info(m);
        int seen10 = 0, seen11 = 0;
        for (uint64_t k = 0; k < in->nsteps; k++) {
            assert_int_equal(viz_model_seek(m, k), 0);
            const viz_state *st = viz_model_state(m);
            sim_pipe_row r[SIM_PIPE_ROWS];
            const int n = viz_model_pipeline(m, r);
            if (st->i < 0) {            /* the return */
                assert_int_equal(n, 0);
                continue;
            }
            assert_int_equal(n, 3);
            const long long i = st->i + 1, j = st->j + 1, last = causal ? i : 4;
            char wg[2][64];
            snprintf(wg[0], sizeof wg[0], "WG1 [%lld:%lld)", (i - 1) * 32, (i - 1) * 32 + 16);
            snprintf(wg[1], sizeof wg[1], "WG2 [%lld:%lld)", (i - 1) * 32 + 16, i * 32);
            assert_string_equal(r[0].who, "SMEM stages");
            assert_string_equal(r[1].who, wg[0]);
            assert_string_equal(r[2].who, wg[1]);
            if (st->j < 0) {
                if (st->line == 3) {
                    assert_true(says(&r[0], "0: free  1: K_1 V_1: producer filling", 0, 0, 0));
                    assert_non_null(strstr(r[1].what, "waits for Q_i"));
                }
                if (st->line == 14)     /* the last block's V, for its GEMM1 */
                    assert_true(says(&r[0], "%lld: K_%lld V_%lld: GEMM1 on V", last % 2, last,
                                     last));
                continue;
            }
            /* block j's stage */
            assert_true(says(&r[0], "%lld: K_%lld V_%lld: ", j % 2, j, j));
            if (st->line == 6) {
                assert_true(says(&r[0], "%lld: K_%lld V_%lld: landing", j % 2, j, j));
                /* WG1 waits for K_j; WG2's softmax of the block before runs on */
                assert_non_null(strstr(r[1].what, "waits for stage"));
                if (j > 1)
                    assert_true(says(&r[2], "softmax of block %lld", j - 1, 0, 0));
                else
                    assert_non_null(strstr(r[2].what, "waits for stage"));
            }
            /* the other stage: block j - 1's V until both turns of block j
             * have run its GEMM1 (lines 6, 10, 11), then block j + 1's */
            const long long o = (j + 1) % 2;
            if (j > 1 && st->line != 12)
                assert_true(says(&r[0], "%lld: K_%lld V_%lld: ", o, j - 1, j - 1));
            else if (j < last && st->line != 6)
                assert_true(says(&r[0], "%lld: K_%lld V_%lld: producer filling", o, j + 1,
                                 j + 1));
            else
                assert_true(says(&r[0], "%lld: free", o, 0, 0));
            if (st->line == 10 || st->line == 11) {
                const int turn = st->line == 10 ? 1 : 2, soft = 3 - turn;
                assert_non_null(strstr(r[turn].what, "tensor cores"));
                assert_true(says(&r[turn], "GEMM0 S = Q_i K_%lld^T", j, 0, 0));
                if (j == 1) {
                    assert_null(strstr(r[turn].what, "GEMM1"));
                    assert_non_null(strstr(r[soft].what, turn == 1 ? "waits" : "softmax of "
                                                                                "block 1"));
                } else {
                    assert_true(says(&r[turn], "GEMM0 S = Q_i K_%lld^T, then GEMM1 with V_%lld", j, j - 1, 0));
                    assert_true(says(&r[soft], "softmax of block %lld", turn == 1 ? j - 1 : j,
                                     0, 0));
                }
                seen10 += st->line == 10;
                seen11 += st->line == 11;
            }
        }
        /* every visited block pair: 16 of them, or 1 + 2 + 3 + 4 = 10 causal */
        assert_int_equal(seen10, causal ? 10 : 16);
        assert_int_equal(seen11, seen10);
        viz_model_free(m);
    }
    /* the other loop orders have no panel */
    viz_config c;
    viz_config_default(&c);
    c.algo = SIM_FA2;
    c.sh.N = 64;
    c.sh.d = 16;
    c.mode = VIZ_MODE_COUNT;
    viz_model *m = NULL;
    char err[2048];
    assert_int_equal(viz_model_build(&c, &m, err, sizeof err), VIZ_OK);
    sim_pipe_row r[SIM_PIPE_ROWS];
    for (uint64_t k = 0; k < viz_model_info(m)->nsteps; k++) {
        assert_int_equal(viz_model_seek(m, k), 0);
        assert_int_equal(viz_model_pipeline(m, r), 0);
    }
    viz_model_free(m);
}

int main(void)
{
    const int a = sim_fa3_register();
    if (a < 0)
        return 1;
    SIM_FA3 = (sim_algo)a;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_fa2),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_kernel_tiles),
        cmocka_unit_test(test_step_closed_forms),
        cmocka_unit_test(test_table2),
        cmocka_unit_test(test_step_parts),
        cmocka_unit_test(test_trace_tracks),
        cmocka_unit_test(test_first_step_names),
        cmocka_unit_test(test_step_order),
        cmocka_unit_test(test_trace_first_steps),
        cmocka_unit_test(test_timeline_picture),
        cmocka_unit_test(test_view_pipeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
