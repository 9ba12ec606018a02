/*
 * test_kernels_gpu.c — the kernels on a CUDA device against the simulator:
 * the same random configurations and comparisons as test_kernels.c (bit
 * identity of O and L, per-tensor counts equal), through kern_run(KERN_CUDA).
 *
 * FA2's backward (kern_run_bwd(KERN_CUDA)) against the simulator's, as
 * test_kernels_bwd.c does on the CPU path: random cases (batches, heads,
 * causal masks and windows, N_q < N_k, partial blocks, every dtype, both
 * intermediates) in deterministic mode give dQ, dK and dV bit for bit and
 * the counts per tensor, with three timed runs each equal to the counted
 * one; on the plan fasim picks for an H200; and in atomic mode, where the blocks add
 * to dQ as they arrive, dK and dV still bit for bit and dQ within rounding
 * of the simulator's sum.
 *
 * Exits 77 (skipped) in a build without CUDA or on a machine without a
 * device, printing why; CTest reports it as skipped, not passed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "test_kernels_cases.h"

#define KC_CASES 24

/* kind 0: one head; 1: batches, heads, GQA, windows, N_q < N_k; 2: the
 * same with split-KV (FA2). */
static void random_cases(sim_algo algo, uint64_t seed, int kind)
{
    uint64_t st = seed;
    for (int k = 0; k < KC_CASES; k++) {
        kc_case c;
        if (kind == 2)
            kc_random_split_case(&st, &c);
        else
            kc_random_case_of(&st, algo, kind, &c);
        c.threads = 32 * (int)tu_rand_range(&st, 1, 4);   /* whole warps on a GPU */
        kc_outcome o = kc_compare(&c, NULL, 0);
        char desc[256];
        kc_describe(&c, desc, sizeof desc);
        if (!o.ran || !o.identical || !o.counts_equal || !o.sim_matches_theory)
            fail_msg("case %d: %s: ran %d identical %d counts_equal %d sim=theory %d", k,
                     desc, o.ran, o.identical, o.counts_equal, o.sim_matches_theory);
    }
}

static void test_gpu_naive(void **state)
{
    (void)state;
    random_cases(SIM_NAIVE, 101, 0);
    random_cases(SIM_NAIVE, 404, 1);
}

static void test_gpu_fa1(void **state)
{
    (void)state;
    random_cases(SIM_FA1, 202, 0);
    random_cases(SIM_FA1, 505, 1);
}

static void test_gpu_fa2(void **state)
{
    (void)state;
    random_cases(SIM_FA2, 303, 0);
    random_cases(SIM_FA2, 606, 1);
    random_cases(SIM_FA2, 707, 2);
}

/* A classroom-sized case, the one the README shows: N = 1024, the best plan. */
static void test_gpu_best_plans(void **state)
{
    (void)state;
    for (int a = 0; a < sim_algo_count(); a++) {
        kc_case c;
        memset(&c, 0, sizeof c);
        c.algo = (sim_algo)a;
        c.sh = (sim_shape){ .N = 1024, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16, .causal = a == SIM_FA2 };
        c.seed = 1;
        c.threads = 128;
        char err[1024];
        assert_int_equal(sim_plan_choose(c.algo, &c.sh, NULL, SIM_PLAN_AUTO, 0, 0, &c.plan, err,
                                         sizeof err), 0);
        kc_outcome o = kc_compare(&c, NULL, 0);
        assert_true(o.ran && o.identical && o.counts_equal);
    }
}

#define KB_GPU_CASES 24

/* Deterministic mode: the simulator's bits whatever order the device runs
 * the blocks in (every one waits for dQ_i's turn). */
static void test_gpu_fa2_bwd(void **state)
{
    (void)state;
    uint64_t st = 0x67707562776400ull;
    for (int k = 0; k < KB_GPU_CASES; k++) {
        kc_case c;
        kb_random_case(&st, SIM_FA2, k % 2, k % 3 == 1, &c);
        c.threads = 32 * (int)tu_rand_range(&st, 1, 4);
        kb_inputs in;
        kb_inputs_make(&c, &in);
        sim_result sr;
        kern_result kr;
        kb_sim(&c, &in, &sr);
        kb_kern(&c, NULL, &in, KERN_DQ_DETERMINISTIC, 0, &kr);
        char desc[256];
        kc_describe(&c, desc, sizeof desc);
        const unsigned g = kb_same_grads(&c, &sr, &kr);
        if (g != 7u || !kb_counts_ok(&c, &sr, &kr))
            fail_msg("case %d: %s: dQ %u dK %u dV %u counts %d", k, desc, g & 1u,
                     g >> 1 & 1u, g >> 2 & 1u, kb_counts_ok(&c, &sr, &kr));
        kern_result_free(&kr);
        sim_result_free(&sr);
        kb_inputs_free(&in);
    }
}

/* The plan fasim chooses at the H200's 227 KiB: N = 1024, d = 64,
 * B_r = B_c = 64, causal, 4 heads, fp16 (16 key blocks; dQ_i passed along
 * up to 16 blocks). */
static void test_gpu_fa2_bwd_h200_plan(void **state)
{
    (void)state;
    kc_case c;
    memset(&c, 0, sizeof c);
    c.algo = SIM_FA2;
    c.sh = (sim_shape){ .N = 1024, .d = 64, .M = 227 * 1024, .dtype = SIM_FP16, .causal = 1,
                        .heads = 4, .kv_heads = 4 };
    c.seed = 3;
    c.threads = 128;
    const sim_run_opts run = { .pass = SIM_BWD };
    sim_plan_make(SIM_FA2, &c.sh, &run, 64, 64, SIM_PLAN_USER, &c.plan);
    assert_true(c.plan.fits);
    kb_inputs in;
    kb_inputs_make(&c, &in);
    sim_result sr;
    kern_result kr;
    kb_sim(&c, &in, &sr);
    kb_kern(&c, NULL, &in, KERN_DQ_DETERMINISTIC, 0, &kr);
    assert_int_equal(kb_same_grads(&c, &sr, &kr), 7u);
    assert_true(kb_counts_ok(&c, &sr, &kr));
    kern_result_free(&kr);
    sim_result_free(&sr);
    kb_inputs_free(&in);
}

/* Atomic mode: each block's read-modify-write of dQ_i whole under dQ_i's
 * lock, in arrival order. dK, dV are the simulator's bits and the counts
 * equal; dQ is the same additions in some order: finite, and each value
 * within 1e-5 of the largest |dQ| of the simulator's (fp32, eight terms). */
static void test_gpu_fa2_bwd_atomic(void **state)
{
    (void)state;
    kc_case c;
    kb_order_case(SIM_FA2, &c);
    c.threads = 64;
    kb_inputs in;
    kb_inputs_make(&c, &in);
    sim_result sr;
    kb_sim(&c, &in, &sr);
    const int64_t nq = kern_tensor_elems(&c.sh, SIM_Q);
    double big = 0.0;
    for (int64_t x = 0; x < nq; x++)
        big = fabs(sr.dQ[x]) > big ? fabs(sr.dQ[x]) : big;
    for (int rep = 0; rep < 4; rep++) {
        kern_result kr;
        kb_kern(&c, NULL, &in, KERN_DQ_ATOMIC, 0, &kr);
        assert_int_equal(kb_same_grads(&c, &sr, &kr) & 6u, 6u);
        assert_true(kb_counts_ok(&c, &sr, &kr));
        for (int64_t x = 0; x < nq; x++)
            if (!(fabs((double)kr.dQ[x] - sr.dQ[x]) <= 1e-5 * big))
                fail_msg("atomic dQ[%lld] = %.9g, the simulator's %.9g", (long long)x,
                         kr.dQ[x], sr.dQ[x]);
        kern_result_free(&kr);
    }
    sim_result_free(&sr);
    kb_inputs_free(&in);
}

int main(void)
{
    char why[512];
    if (!kern_cuda_available(why, sizeof why)) {
        printf("skipped: %s\n", why);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_fa2),
        cmocka_unit_test(test_gpu_naive),
        cmocka_unit_test(test_gpu_fa1),
        cmocka_unit_test(test_gpu_best_plans),
        cmocka_unit_test(test_gpu_fa2_bwd),
        cmocka_unit_test(test_gpu_fa2_bwd_h200_plan),
        cmocka_unit_test(test_gpu_fa2_bwd_atomic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
