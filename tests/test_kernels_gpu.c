/*
 * test_kernels_gpu.c — the kernels on a CUDA device against the simulator:
 * the same random configurations and comparisons as test_kernels.c (bit
 * identity of O and L, per-tensor counts equal), through kern_run(KERN_CUDA).
 *
 * Exits 77 (skipped) in a build without CUDA or on a machine without a
 * device, printing why; CTest reports it as skipped, not passed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
