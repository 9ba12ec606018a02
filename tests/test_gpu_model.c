/*
 * test_gpu_model.c — the GPU model (study/sim_gpu_model.c) at its limits,
 * where its answers follow from first principles:
 *   - an L2 of 0 bytes: every tile goes to DRAM, so the DRAM bytes are the
 *     two-level counts of the same plan, all heads (sim_theory_counts);
 *   - an unbounded L2: every tile is read from DRAM once and written once,
 *     so the DRAM bytes are the tensors' sizes (computed here from N, d and
 *     the heads), whatever the loop order re-reads;
 *   - the launch: FA2's grid is T_r x B x H, FA1's forward B x H x S;
 *   - GQA's backward adds its group sums, two launches of grid T_c x B x G
 *     whose bytes (B H N_k d read, B G N_k d written, each of dK and dV, in
 *     the dtype) are computed here from the shape;
 *   - FA1's backward spends, per step, the shared-memory time of the partial
 *     sums its warps exchange and of the operands that outrun its tensor
 *     cores, computed here from v1's warp layout;
 *   - FA1's steps leave the latency of their dependent phases exposed (v1's
 *     products and barriers per step, counted here), and only FA1's; the
 *     step the model reports is the one it charges (its parts computed here);
 *   - the trace is JSON in the trace-event format (parsed here);
 *   - the efficiency constants are frozen (what fitted them is in
 *     sim_gpu_model.c; changing them changes every figure the README shows).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "sim_gpu_model.h"
#include "sim_presets.h"

static sim_plan plan_for(sim_algo a, const sim_shape *sh, sim_pass pass, int kernel)
{
    sim_run_opts run = { 0 };
    run.pass = pass;
    sim_plan p;
    char err[512];
    if (kernel) {
        sim_kernel_target kt = sim_gpu_kernel_target(sim_gpu_find("a100"));
        assert_int_equal(sim_plan_kernel(a, sh, &run, &kt, 0, 0, &p, err, sizeof err), 0);
    } else {
        assert_int_equal(sim_plan_make(a, sh, &run, 32, 32, SIM_PLAN_USER, &p), 0);
    }
    return p;
}

static sim_gm_result model(const sim_plan *p, const sim_shape *sh, uint64_t l2)
{
    sim_gm_opts o = { .l2_bytes = l2, .l2_set = 1 };
    sim_gm_result r;
    char err[512];
    int rc = sim_gpu_model_run(sim_gpu_find("a100"), p, sh, &o, &r, err, sizeof err);
    if (rc != 0)
        fail_msg("%s", err);
    return r;
}

/* L2 of 0 bytes: the DRAM bytes equal the closed-form counts times the
 * heads, per direction, for every loop order and pass, MHA and (kv = 1)
 * MQA, whose backward adds dK_exp, dV_exp and the group sums' traffic. */
static void test_zero_l2_is_two_level(void **state)
{
    (void)state;
    static const struct { sim_algo a; sim_pass pass; int kernel; } CASES[] = {
        { SIM_NAIVE, SIM_FWD, 0 }, { SIM_FA1, SIM_FWD, 0 }, { SIM_FA2, SIM_FWD, 0 },
        { SIM_NAIVE, SIM_BWD, 0 }, { SIM_FA1, SIM_BWD, 0 }, { SIM_FA2, SIM_BWD, 0 },
        { SIM_FA1, SIM_FWD, 1 }, { SIM_FA2, SIM_FWD, 1 }, { SIM_FA2, SIM_BWD, 1 },
    };
    for (int kv = 0; kv < 2; kv++)
    for (int causal = 0; causal < 2; causal++)
        for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
            sim_shape sh = { .N = 200, .d = 64, .M = 163 * 1024, .dtype = SIM_FP16,
                             .causal = causal, .batch = 2, .heads = 3, .kv_heads = kv };
            sim_plan p = plan_for(CASES[c].a, &sh, CASES[c].pass, CASES[c].kernel);
            sim_counts th;
            assert_int_equal(sim_theory_counts(&p, &sh, &th), 0);
            const uint64_t rd = sim_counts_read_bytes(&th, sh.dtype);
            const uint64_t wr = sim_counts_write_bytes(&th, sh.dtype);
            sim_gm_result r = model(&p, &sh, 0);
            /* FA1's forward splits a head into S blocks that each load K
             * and V: its DRAM reads exceed one head's count by (S - 1)
             * K and V per head. */
            uint64_t extra = 0;
            if (CASES[c].a == SIM_FA1 && CASES[c].pass == SIM_FWD)
                extra = (uint64_t)(r.kernels[0].grid[2] - 1) *
                        (th.read_elems[SIM_K] + th.read_elems[SIM_V]) * 2u;
            assert_int_equal(r.dram_read_bytes, rd + extra);
            assert_int_equal(r.dram_write_bytes, wr);
            assert_int_equal(r.hbm_read_bytes, rd + extra);
            assert_int_equal(r.hbm_write_bytes, wr);
            assert_true(r.l2_hit_rate == 0.0);
        }
}

/* The unfused baseline's softmax over rows past PyTorch's persistent kernel
 * (N_k = 2048 > 1024) reads S three times forward, P and dP twice backward:
 * the second and later reads of a row come from the L2 when the rows in
 * flight fit it: a row a block of 128 threads (half of 2048 / 8 fp16 a
 * 16-byte load), 16 of them on each of the A100's 108 SMs of 2048 threads,
 * 4 KiB a row. With an L2 a byte smaller they do not, and with none the
 * DRAM bytes are the two-level counts (fa2bench's operations too). */
static void test_row_rereads_from_l2(void **state)
{
    (void)state;
    sim_algo uf;
    assert_int_equal(sim_algo_parse("unfused", &uf), 0);
    const int64_t N = 2048, d = 64, e = 2;
    const uint64_t rows_in_flight = 108u * 16u * (uint64_t)(N * e);
    sim_shape sh = { .N = N, .d = d, .M = 163 * 1024, .dtype = SIM_FP16 };
    for (int ops = 0; ops < SIM_UF_OPS_COUNT; ops++)
        for (int q = 0; q < 2; q++) {
            sim_run_opts run = { .pass = q ? SIM_BWD : SIM_FWD, .unfused_ops = ops };
            sim_plan p;
            assert_int_equal(sim_plan_make(uf, &sh, &run, 64, 64, SIM_PLAN_USER, &p), 0);
            assert_int_equal(p.softmax_passes, q ? 2 : 3);
            const sim_tensor t = q ? SIM_dP : SIM_S;   /* and P backward */
            const uint64_t rereads = (uint64_t)(p.softmax_passes - 1) * (uint64_t)(N * N * e);
            sim_gm_result in = model(&p, &sh, rows_in_flight);
            sim_gm_result out = model(&p, &sh, rows_in_flight - 1);
            sim_gm_result none = model(&p, &sh, 0);
            assert_true(in.hit_bytes[t] >= rereads);
            assert_true(out.hit_bytes[t] < rereads / 4);
            assert_true(in.dram_read_bytes + rereads <= out.dram_read_bytes + out.hit_bytes[t]);
            if (q) {
                assert_true(in.hit_bytes[SIM_P] >= rereads);
                assert_true(out.hit_bytes[SIM_P] < rereads / 4);
            }
            sim_counts th;
            assert_int_equal(sim_theory_counts(&p, &sh, &th), 0);
            assert_int_equal(none.dram_read_bytes, sim_counts_read_bytes(&th, sh.dtype));
            assert_int_equal(none.hit_bytes[t], 0);
        }
}

/* An unbounded L2: each tensor read once and written once. FA2's forward
 * reads Q, K, V and writes O and L; its backward reads Q, K, V, O, dO, L
 * and writes D, dQ, dK, dV and its fp32 dQ_acc. */
static void test_infinite_l2_is_compulsory(void **state)
{
    (void)state;
    for (int causal = 0; causal < 2; causal++) {
        const int64_t N = 1000, d = 64, B = 2, H = 4, G = 2, e = 2;
        sim_shape sh = { .N = N, .d = d, .M = 163 * 1024, .dtype = SIM_FP16, .causal = causal,
                         .batch = B, .heads = H, .kv_heads = G };
        sim_plan p = plan_for(SIM_FA2, &sh, SIM_FWD, 1);
        sim_gm_result r = model(&p, &sh, SIM_GM_L2_INFINITE);
        /* Q: B H N d; K, V: B G N d (shared by a group through the L2) */
        const uint64_t want_rd = (uint64_t)(B * H * N * d + 2 * B * G * N * d) * e;
        const uint64_t want_wr = (uint64_t)(B * H * N * d) * e + (uint64_t)(B * H * N) * 4;
        assert_int_equal(r.dram_read_bytes, want_rd);
        assert_int_equal(r.dram_write_bytes, want_wr);
        assert_true(r.l2_hit_rate > 0.5);
    }
    {
        const int64_t N = 512, d = 64, B = 1, H = 2, e = 2;
        sim_shape sh = { .N = N, .d = d, .M = 163 * 1024, .dtype = SIM_FP16,
                         .batch = B, .heads = H };
        sim_plan p = plan_for(SIM_FA2, &sh, SIM_BWD, 1);
        sim_gm_result r = model(&p, &sh, SIM_GM_L2_INFINITE);
        const uint64_t nd = (uint64_t)(B * H * N * d), n = (uint64_t)(B * H * N);
        /* read: Q K V O dO (e), L (4); D is written, then read from the L2 */
        assert_int_equal(r.dram_read_bytes, 5 * nd * e + n * 4);
        /* written: D (4), dQ_acc (4), dQ dK dV (e) */
        assert_int_equal(r.dram_write_bytes, n * 4 + nd * 4 + 3 * nd * e);
    }
}

/* FA1's shared memory (sliced_k_operands, smem_step): its backward at
 * d = 128 on A100 (v1's 16 x 128 tile, 8 warps side by side over the keys),
 * one head of N = 1024, so T_c = 8 blocks each on an SM of its own, every
 * step bound by its arithmetic (the loads of 8 blocks are far under DRAM's
 * and L2's bandwidth). Against the same run with shared memory made
 * unboundedly fast, each of a block's T_r = 64 steps is longer by, computed
 * here from v1's loops (fmha_dgrad_kernel_1xN_loop.h):
 *   - the fp32 dQ partials the 8 warps write and read back, 2 x 8 x 16 x 128
 *     x 4 bytes;
 *   - S = Q_i K_j^T and dP = dO_i V_j^T, each reading (8 x 16 + 128) x 128
 *     fp16 elements from shared memory, more than their tensor time: each
 *     takes its bytes over shared memory's bandwidth instead (dQ, dV and dK
 *     read less than their tensor time: unchanged). */
static void test_fa1_shared_memory(void **state)
{
    (void)state;
    sim_shape sh = { .N = 1024, .d = 128, .M = 163 * 1024, .dtype = SIM_FP16, .batch = 1,
                     .heads = 1 };
    sim_plan p = plan_for(SIM_FA1, &sh, SIM_BWD, 1);
    assert_int_equal(p.Br, 16);
    assert_int_equal(p.Bc, 128);
    assert_int_equal(p.warps, 8);
    const sim_gpu *a100 = sim_gpu_find("a100");
    sim_gpu fast = *a100;
    fast.smem_bytes_per_clk = 1e12;
    sim_gm_opts o = { 0 };
    sim_gm_result r, rf;
    char err[512];
    assert_int_equal(sim_gpu_model_run(a100, &p, &sh, &o, &r, err, sizeof err), 0);
    assert_int_equal(sim_gpu_model_run(&fast, &p, &sh, &o, &rf, err, sizeof err), 0);
    assert_int_equal(r.blocks, 8);
    const double smem_bw = 128.0 * 1410e6;                      /* bytes/s per SM */
    const double tc = 312e12 * sim_gpu_model_constants().tensor_eff / 108;   /* FLOP/s */
    const double t_mm = 2.0 * 16 * 128 * 128 / tc;             /* one product */
    const double t_op = (8.0 * 16 + 128) * 128 * 2 / smem_bw;  /* S's, dP's operands */
    assert_true(t_op > t_mm);
    const double exchange = 2.0 * 8 * 16 * 128 * 4 / smem_bw;
    const double per_step = exchange + 2 * (t_op - t_mm);
    const double want = 64 * per_step;
    const double got = r.time_s - rf.time_s;
    if (fabs(got - want) > 1e-3 * want)
        fail_msg("FA1 backward, shared memory: %.4g s longer, expected %.4g", got, want);
}

/* The dependent phases of a step, counted here from the released kernels'
 * loops: v1's forward (fmha_fprop_kernel_1xN.h) S and O += P V_j and two
 * barriers (the row maximum's exchange, O's partials); v1's backward
 * (fmha_dgrad_kernel_1xN_loop.h) five products and one barrier (dQ's
 * partials). FA2 and standard attention are charged none. */
static void test_step_phases(void **state)
{
    (void)state;
    sim_run_opts run = { 0 };
    run.pass = SIM_FWD;
    assert_int_equal(sim_gm_step_phases(sim_loop_find(SIM_FA1, &run), 0), 2 + 2);
    assert_int_equal(sim_gm_step_phases(sim_loop_find(SIM_FA2, &run), 0), 0);
    assert_int_equal(sim_gm_step_phases(sim_loop_find(SIM_NAIVE, &run), 0), 0);
    run.pass = SIM_BWD;
    assert_int_equal(sim_gm_step_phases(sim_loop_find(SIM_FA1, &run), 1), 5 + 1);
    assert_int_equal(sim_gm_step_phases(sim_loop_find(SIM_FA2, &run), 1), 0);
    assert_int_equal(sim_gm_step_phases(NULL, 1), 0);
}

/* The phases' latency is in clocks, everything else the model takes from
 * the clock (shared memory's and the SFU's rates) per clock: an A100 at
 * twice the clock with half the bytes and exps per clock differs only in
 * it. FA1's backward of test_fa1_shared_memory (8 blocks, one an SM, each
 * of T_r = 64 steps bound by its own arithmetic) is shorter by 64 steps x
 * 6 phases x 170 clocks x (1 / 1.41 GHz - 1 / 2.82 GHz); FA2's, whose
 * steps are charged no latency, by nothing. */
static void test_phase_latency(void **state)
{
    (void)state;
    sim_shape sh = { .N = 1024, .d = 128, .M = 163 * 1024, .dtype = SIM_FP16, .batch = 1,
                     .heads = 1 };
    const sim_gpu *a100 = sim_gpu_find("a100");
    sim_gpu fast = *a100;
    fast.clock_hz *= 2;
    fast.smem_bytes_per_clk /= 2;
    fast.sfu_per_clk /= 2;
    sim_gm_opts o = { 0 };
    sim_gm_result r, rf;
    char err[512];
    sim_plan p = plan_for(SIM_FA1, &sh, SIM_BWD, 1);
    assert_int_equal(sim_gpu_model_run(a100, &p, &sh, &o, &r, err, sizeof err), 0);
    assert_int_equal(sim_gpu_model_run(&fast, &p, &sh, &o, &rf, err, sizeof err), 0);
    assert_int_equal(r.blocks, 8);
    const double want = 64 * 6 * 170 * (1 / 1410e6 - 1 / 2820e6);
    const double got = r.time_s - rf.time_s;
    if (fabs(got - want) > 1e-3 * want)
        fail_msg("FA1 backward, phase latency: %.4g s, expected %.4g", got, want);
    sim_plan p2 = plan_for(SIM_FA2, &sh, SIM_BWD, 1);
    assert_int_equal(sim_gpu_model_run(a100, &p2, &sh, &o, &r, err, sizeof err), 0);
    assert_int_equal(sim_gpu_model_run(&fast, &p2, &sh, &o, &rf, err, sizeof err), 0);
    assert_true(fabs(r.time_s - rf.time_s) <= 1e-9 * r.time_s);
}

/* The step the model reports (sim_gm_result.step, which lesson 11 prints)
 * is the one it charges: FA1's forward on the A100 (B_r x B_c of its
 * kernel plan) spends its products' FLOPs, 4 d a score, at the tensor
 * cores' share of one SM (peak x mma.sync's fraction x tensor_eff / SMs),
 * one exp a score on the SFU's 16 a clock, and 4 phases of 170 clocks;
 * FA2's no phases. Each computed here from the preset's numbers. */
static void test_step_parts(void **state)
{
    (void)state;
    sim_shape sh = { .N = 1024, .d = 64, .M = 163 * 1024, .dtype = SIM_FP16, .batch = 1,
                     .heads = 16 };
    const sim_gpu *g = sim_gpu_find("a100");
    const sim_gm_constants k = sim_gpu_model_constants();
    sim_gm_opts o = { 0 };
    sim_gm_result r;
    char err[512];
    sim_plan p = plan_for(SIM_FA1, &sh, SIM_FWD, 1);
    assert_int_equal(sim_gpu_model_run(g, &p, &sh, &o, &r, err, sizeof err), 0);
    assert_true(r.step.set);
    const double area = (double)p.Br * (double)p.Bc;
    const double mm = area * 4.0 * 64 /
                      (g->fp16_flops * g->mma_sync_fraction * k.tensor_eff / g->sms);
    if (fabs(r.step.mm - mm) > 1e-9 * mm)
        fail_msg("FA1 step products: %.6g s, expected %.6g", r.step.mm, mm);
    const double sfu = area / (g->sfu_per_clk * g->clock_hz);
    if (fabs(r.step.sfu - sfu) > 1e-9 * sfu)
        fail_msg("FA1 step exps: %.6g s, expected %.6g", r.step.sfu, sfu);
    assert_int_equal(r.step.nphases, 4);
    const double ph = 4 * 170 / g->clock_hz;
    if (fabs(r.step.phases - ph) > 1e-9 * ph)
        fail_msg("FA1 step phases: %.6g s, expected %.6g", r.step.phases, ph);
    assert_true(r.step.exchange > 0 && r.step.prod >= r.step.mm);
    sim_plan p2 = plan_for(SIM_FA2, &sh, SIM_FWD, 1);
    assert_int_equal(sim_gpu_model_run(g, &p2, &sh, &o, &r, err, sizeof err), 0);
    assert_true(r.step.set);
    assert_int_equal(r.step.nphases, 0);
    assert_true(r.step.phases == 0 && r.step.exchange == 0);
}

/* The launch: FA2's forward has T_r blocks per head; the first kernel
 * of FA1's forward B x H x S with S from the occupancy. */
static void test_launch(void **state)
{
    (void)state;
    sim_shape sh = { .N = 4096, .d = 128, .M = 163 * 1024, .dtype = SIM_FP16, .batch = 2,
                     .heads = 8 };
    sim_plan p = plan_for(SIM_FA2, &sh, SIM_FWD, 1);
    sim_gm_result r = model(&p, &sh, UINT64_C(40) << 20);
    assert_int_equal(r.nkernels, 1);
    assert_int_equal(r.kernels[0].grid[0], (4096 + p.Br - 1) / p.Br);
    assert_int_equal(r.kernels[0].grid[1], 2);
    assert_int_equal(r.kernels[0].grid[2], 8);
    assert_int_equal(r.blocks, 2 * 8 * ((4096 + p.Br - 1) / p.Br));
    assert_true(r.occupancy >= 1);
    assert_true(fabs(r.waves - (double)r.blocks / (108.0 * r.occupancy)) < 1e-9);
    assert_int_equal(r.sms_busy, 108);
    assert_true(r.time_s > 0 && r.tflops > 0 && r.tflops < 312);

    /* B H = 16 heads on 108 SMs: FA1 splits them to fill the SMs */
    sim_shape s1 = sh;
    s1.batch = 1;
    s1.heads = 16;
    sim_plan p1 = plan_for(SIM_FA1, &s1, SIM_FWD, 1);
    sim_gm_result r1 = model(&p1, &s1, UINT64_C(40) << 20);
    assert_int_equal(r1.kernels[0].grid[0], 1);
    assert_int_equal(r1.kernels[0].grid[1], 16);
    assert_true(r1.kernels[0].grid[2] > 1);
}

/* GQA's backward: after the loop order's kernels, the group sums of dK_exp
 * and dV_exp (flash-attn's two at::sum_out), each a launch of T_c x B x G
 * blocks. Their bytes, from the shape alone: with no L2 the run reads
 * B H N_k d more in the dtype for each of dK and dV than the same heads
 * as MHA (each query head's tiles, read once) and writes B G N_k d more
 * (the sums; the query heads' own dK_exp, dV_exp are MHA's dK, dV), and
 * each sum takes at least its bytes over the DRAM's bandwidth. */
static void test_gqa_group_sum(void **state)
{
    (void)state;
    const int64_t N = 1000, d = 64, B = 2, H = 8, G = 2, e = 2;
    for (int a = 0; a < 3; a++) {
        sim_shape sh = { .N = N, .d = d, .M = 163 * 1024, .dtype = SIM_FP16, .causal = 1,
                         .batch = B, .heads = H, .kv_heads = G };
        sim_shape mha = sh;
        mha.kv_heads = H;
        sim_plan p = plan_for((sim_algo)a, &sh, SIM_BWD, a == SIM_FA2);
        sim_plan pm = plan_for((sim_algo)a, &mha, SIM_BWD, a == SIM_FA2);
        assert_int_equal(p.Bc, pm.Bc);
        sim_gm_result r = model(&p, &sh, 0), rm = model(&pm, &mha, 0);
        assert_int_equal(r.nkernels, rm.nkernels + 2);
        const uint64_t rd = (uint64_t)(B * H * N * d * e), wr = (uint64_t)(B * G * N * d * e);
        assert_int_equal(r.dram_read_bytes - rm.dram_read_bytes, 2 * rd);
        assert_int_equal(r.dram_write_bytes - rm.dram_write_bytes, 2 * wr);
        assert_int_equal(r.read_bytes[SIM_dKexp], rd);
        assert_int_equal(r.read_bytes[SIM_dVexp], rd);
        const sim_gpu *g = sim_gpu_find("a100");
        const double bw = g->hbm_bytes_per_s * sim_gpu_model_constants().dram_eff;
        for (int x = 0; x < 2; x++) {
            const sim_gm_kernel *K = &r.kernels[r.nkernels - 2 + x];
            assert_non_null(strstr(K->name, x ? "dV = sum dV_exp" : "dK = sum dK_exp"));
            assert_int_equal(K->grid[0], (N + p.Bc - 1) / p.Bc);
            assert_int_equal(K->grid[1], B);
            assert_int_equal(K->grid[2], G);
            assert_int_equal(K->blocks, B * G * ((N + p.Bc - 1) / p.Bc));
            assert_int_equal(K->threads, 128);
            assert_true(K->t_end - K->t_start >= (double)(rd + wr) / bw);
            assert_true(K->t_start >= r.kernels[r.nkernels - 3 + x].t_end);   /* after */
        }
        assert_true(r.time_s > rm.time_s);
    }
}

/* No L2 is never faster than an L2: a store that bypasses it is charged to
 * DRAM's bandwidth as a write-back is (FA1 writes its fp32 running output
 * at every step). */
static void test_no_l2_not_faster(void **state)
{
    (void)state;
    sim_shape sh = { .N = 4096, .d = 128, .M = 163 * 1024, .dtype = SIM_FP16, .heads = 16 };
    for (int a = SIM_FA1; a <= SIM_FA2; a++) {
        sim_plan p = plan_for((sim_algo)a, &sh, SIM_FWD, 1);
        sim_gm_result none = model(&p, &sh, 0), l2 = model(&p, &sh, UINT64_C(40) << 20);
        assert_true(none.time_s >= l2.time_s);
        assert_true(none.dram_read_bytes + none.dram_write_bytes >=
                    l2.dram_read_bytes + l2.dram_write_bytes);
    }
}

/* A grid over the hardware's limit is refused with the limit named. */
static void test_grid_limit(void **state)
{
    (void)state;
    sim_shape sh = { .N = 64, .d = 64, .M = 163 * 1024, .dtype = SIM_FP16, .batch = 70000,
                     .heads = 1 };
    sim_plan p = plan_for(SIM_FA2, &sh, SIM_FWD, 1);
    sim_gm_opts o = { 0 };
    sim_gm_result r;
    char err[512];
    assert_int_equal(sim_gpu_model_run(sim_gpu_find("a100"), &p, &sh, &o, &r, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "65535"));
}

/* ---- a strict JSON reader, enough to check the trace's syntax ---- */
typedef struct {
    const char *s;
    int events, slices, counters;
} json_rd;

static void ws(json_rd *j)
{
    while (isspace((unsigned char)*j->s))
        j->s++;
}

static int value(json_rd *j, int depth);

static int string(json_rd *j)
{
    if (*j->s != '"')
        return -1;
    for (j->s++; *j->s != '"'; j->s++) {
        if ((unsigned char)*j->s < 0x20 || !*j->s)
            return -1;
        if (*j->s == '\\')
            j->s++;
    }
    j->s++;
    return 0;
}

static int value(json_rd *j, int depth)
{
    ws(j);
    if (*j->s == '{' || *j->s == '[') {
        const char close = *j->s == '{' ? '}' : ']';
        const int obj = close == '}';
        j->s++;
        ws(j);
        if (*j->s == close) {
            j->s++;
            return 0;
        }
        for (;;) {
            ws(j);
            if (obj) {
                const char *key = j->s;
                if (string(j))
                    return -1;
                if (depth == 2 && !strncmp(key, "\"ph\"", 4)) {
                    ws(j);
                    if (*j->s != ':')
                        return -1;
                    j->s++;
                    ws(j);
                    j->events++;
                    j->slices += !strncmp(j->s, "\"X\"", 3);
                    j->counters += !strncmp(j->s, "\"C\"", 3);
                    if (strncmp(j->s, "\"X\"", 3) && strncmp(j->s, "\"C\"", 3) &&
                        strncmp(j->s, "\"M\"", 3))
                        return -1;
                    if (string(j))
                        return -1;
                    goto next;
                }
                ws(j);
                if (*j->s != ':')
                    return -1;
                j->s++;
            }
            if (value(j, depth + 1))
                return -1;
next:
            ws(j);
            if (*j->s == ',') {
                j->s++;
                continue;
            }
            if (*j->s != close)
                return -1;
            j->s++;
            return 0;
        }
    }
    if (*j->s == '"')
        return string(j);
    if (!strncmp(j->s, "true", 4) || !strncmp(j->s, "null", 4)) {
        j->s += 4;
        return 0;
    }
    if (!strncmp(j->s, "false", 5)) {
        j->s += 5;
        return 0;
    }
    char *end;
    strtod(j->s, &end);
    if (end == j->s)
        return -1;
    j->s = end;
    return 0;
}

static void test_trace_parses(void **state)
{
    (void)state;
    sim_shape sh = { .N = 1024, .d = 64, .M = 163 * 1024, .dtype = SIM_FP16, .causal = 1,
                     .batch = 2, .heads = 4 };
    sim_plan p = plan_for(SIM_FA2, &sh, SIM_FWD, 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    sim_gm_trace tr;
    sim_gm_trace_begin(&tr, f);
    sim_gm_opts o = { .trace = &tr, .trace_name = "fa2 fwd" };
    sim_gm_result r;
    char err[512];
    assert_int_equal(sim_gpu_model_run(sim_gpu_find("a100"), &p, &sh, &o, &r, err, sizeof err),
                     0);
    sim_gm_trace_end(&tr);
    assert_int_equal(fclose(f), 0);
    json_rd j = { .s = buf };
    assert_int_equal(value(&j, 0), 0);
    ws(&j);
    assert_int_equal(*j.s, '\0');
    assert_non_null(strstr(buf, "\"traceEvents\":["));
    /* a slice per block and at least one per tile step */
    assert_true((uint64_t)j.slices >= (uint64_t)r.blocks + r.steps);
    assert_true(j.counters >= 1);
    assert_int_equal((uint64_t)j.events, tr.events);
    free(buf);

    /* too many events: refused before anything is written */
    f = open_memstream(&buf, &len);
    sim_gm_trace_begin(&tr, f);
    o.trace_max_events = 100;
    assert_int_equal(sim_gpu_model_run(sim_gpu_find("a100"), &p, &sh, &o, &r, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "--heads"));
    assert_int_equal(tr.events, 0);
    fclose(f);
    free(buf);
}

static void test_constants_frozen(void **state)
{
    (void)state;
    sim_gm_constants c = sim_gpu_model_constants();
    assert_true(c.tensor_eff == 0.74);
    assert_true(c.dram_eff == 0.90);
    assert_true(c.framework_dram_eff == 0.60);
    assert_true(c.launch_s == 4e-6);
    assert_true(c.phase_cycles == 170);
}

/* A preset without a number the model needs is named. */
static void test_missing_number(void **state)
{
    (void)state;
    sim_gpu g = *sim_gpu_find("h100");
    g.sfu_per_clk = 0;
    sim_shape sh = { .N = 256, .d = 64, .M = 163 * 1024, .dtype = SIM_FP16 };
    sim_plan p = plan_for(SIM_FA2, &sh, SIM_FWD, 0);
    sim_gm_opts o = { 0 };
    sim_gm_result r;
    char err[512];
    assert_int_equal(sim_gpu_model_run(&g, &p, &sh, &o, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "exp (SFU)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_l2_is_two_level),
        cmocka_unit_test(test_infinite_l2_is_compulsory),
        cmocka_unit_test(test_row_rereads_from_l2),
        cmocka_unit_test(test_launch),
        cmocka_unit_test(test_fa1_shared_memory),
        cmocka_unit_test(test_step_phases),
        cmocka_unit_test(test_phase_latency),
        cmocka_unit_test(test_step_parts),
        cmocka_unit_test(test_gqa_group_sum),
        cmocka_unit_test(test_no_l2_not_faster),
        cmocka_unit_test(test_grid_limit),
        cmocka_unit_test(test_trace_parses),
        cmocka_unit_test(test_constants_frozen),
        cmocka_unit_test(test_missing_number),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
