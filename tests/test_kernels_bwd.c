/*
 * test_kernels_bwd.c — FA2's backward kernels (kernels/kern_fa2_bwd.cuh) on
 * the CPU path against the simulator's backward (sim/algo_fa2_bwd.c).
 *
 * 36 random configurations (batch 1-3, heads 1-4 (MHA), causal and not, a
 * sliding window, N_q < N_k, N not a multiple of the blocks, fp16/bf16/fp32,
 * 1-8 threads, the kernels' and the paper's intermediates): dQ, dK and dV
 * bit-identical to sim_run's compute mode over every head, the counts equal
 * per tensor, and the simulator's counts equal to the closed form.
 *
 * The order of dQ's additions: in deterministic mode dQ's bits are the same
 * for every block order; in atomic mode two block orders give different
 * bits of dQ; in both, dK and dV are the same under every order (each block
 * owns its own). A wrong build (KERN_BUG_BWD_DS_NO_D: line 14 without D_i)
 * must fail the output check while its counts still agree.
 *
 * dQ_i's turns (kern_exec.h's kern_turn_*) run on the CPU path too: a block
 * that would wait for a turn that never comes fails the launch there. So
 * every case above checks the turn each block waits for (j - js.lo) under
 * causal masks and windows, and a wrong build that hands the turn on
 * unchanged (KERN_BUG_BWD_TURN_KEPT) must fail in deterministic mode, where
 * a GPU would hang, and still be right in atomic mode, which only locks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_kernels_cases.h"

#define KB_CASES 36

extern const kern_cpu_table kern_cpu_bug_bwd_ds_no_d;
extern const kern_cpu_table kern_cpu_bug_bwd_turn_kept;

static void test_random_cases(void **state)
{
    (void)state;
    uint64_t st = 0x6b62776433ull;
    int partial = 0, causal = 0, window = 0, decode = 0, multi = 0, paper = 0;
    int dtypes[KERN_DTYPE_COUNT] = { 0 };
    for (int k = 0; k < KB_CASES; k++) {
        kc_case c;
        kb_random_case(&st, k % 2, k % 3 == 1, &c);
        kb_inputs in;
        kb_inputs_make(&c, &in);
        sim_result sr;
        kern_result kr;
        kb_sim(&c, &in, &sr);
        kb_kern(&c, &kern_cpu_kernels, &in, KERN_DQ_DETERMINISTIC, 0, &kr);
        char desc[256];
        kc_describe(&c, desc, sizeof desc);
        const unsigned g = kb_same_grads(&c, &sr, &kr);
        if (g != 7u || !kb_counts_ok(&c, &sr, &kr))
            fail_msg("case %d: %s: dQ %u dK %u dV %u counts %d", k, desc, g & 1u,
                     g >> 1 & 1u, g >> 2 & 1u, kb_counts_ok(&c, &sr, &kr));
        partial += c.sh.N % c.plan.Br != 0 || sim_shape_Nk(&c.sh) % c.plan.Bc != 0;
        causal += c.sh.causal;
        window += c.sh.window > 0;
        decode += sim_shape_Nk(&c.sh) > c.sh.N;
        multi += sim_shape_B(&c.sh) * sim_shape_H(&c.sh) > 1;
        paper += c.plan.run.intermediates == SIM_INTER_PAPER;
        dtypes[c.sh.dtype]++;
        kern_result_free(&kr);
        sim_result_free(&sr);
        kb_inputs_free(&in);
    }
    /* The draw covered each kind of configuration. */
    assert_true(partial >= 3);
    assert_true(causal >= 3);
    assert_true(window >= 1);
    assert_true(decode >= 1);
    assert_true(multi >= 3);
    assert_true(paper >= 3);
    for (int t = 0; t < KERN_DTYPE_COUNT; t++)
        assert_true(dtypes[t] >= 1);
}

static void test_dq_modes(void **state)
{
    (void)state;
    kc_case c;
    kb_order_case(&c);
    kb_inputs in;
    kb_inputs_make(&c, &in);
    sim_result sr;
    kb_sim(&c, &in, &sr);
    const int64_t nq = kern_tensor_elems(&c.sh, SIM_Q);
    kern_result first;
    kb_kern(&c, &kern_cpu_kernels, &in, KERN_DQ_ATOMIC, 0, &first);
    assert_int_equal(kb_same_grads(&c, &sr, &first), 7u);   /* the grid's order: j ascending */
    int differ = 0;
    for (uint64_t seed = 1; seed <= 12; seed++) {
        kern_result det, atom;
        kb_kern(&c, &kern_cpu_kernels, &in, KERN_DQ_DETERMINISTIC, seed, &det);
        kb_kern(&c, &kern_cpu_kernels, &in, KERN_DQ_ATOMIC, seed, &atom);
        /* Deterministic: the simulator's bits under every order; atomic: dK
         * and dV too, dQ as the order falls; the counts the same in both. */
        assert_int_equal(kb_same_grads(&c, &sr, &det), 7u);
        assert_int_equal(kb_same_grads(&c, &sr, &atom) & 6u, 6u);
        assert_true(kb_counts_ok(&c, &sr, &det));
        assert_true(kb_counts_ok(&c, &sr, &atom));
        differ += !kb_same(first.dQ, atom.dQ, nq);
        kern_result_free(&det);
        kern_result_free(&atom);
    }
    /* Two orders of the same additions give dQ's bits apart: order 0 and
     * order 1 (checked on their own), and most of the others. */
    kern_result one;
    kb_kern(&c, &kern_cpu_kernels, &in, KERN_DQ_ATOMIC, 1, &one);
    assert_false(kb_same(first.dQ, one.dQ, nq));
    assert_true(differ >= 6);
    kern_result_free(&one);
    kern_result_free(&first);
    sim_result_free(&sr);
    kb_inputs_free(&in);
}

/* The orders themselves: permutations; deterministic ones keep each head's
 * blocks in ascending j; seed 0 is the grid's own order. */
static void test_block_order(void **state)
{
    (void)state;
    enum { GX = 7, GY = 3 };
    int64_t o[GX * GY];
    for (uint64_t seed = 0; seed < 20; seed++)
        for (int m = 0; m < KERN_DQ_COUNT; m++) {
            kern_block_order(GX, GY, seed, (kern_dq_mode)m, o);
            int seen[GX * GY] = { 0 }, last[GY] = { -1, -1, -1 }, ascending = 1, moved = 0;
            for (int k = 0; k < GX * GY; k++) {
                assert_true(o[k] >= 0 && o[k] < GX * GY);
                seen[o[k]]++;
                moved += o[k] != k;
                const int y = (int)(o[k] / GX), x = (int)(o[k] % GX);
                ascending = ascending && x > last[y];
                last[y] = x;
            }
            for (int k = 0; k < GX * GY; k++)
                assert_int_equal(seen[k], 1);
            if (m == KERN_DQ_DETERMINISTIC)
                assert_true(ascending);
            assert_true(seed == 0 ? moved == 0 : moved > 0);
        }
}

/* The wrong build: dS without D_i. dQ and dK wrong, dV right, counts right. */
static void test_bug_is_caught(void **state)
{
    (void)state;
    kc_case c;
    kb_order_case(&c);
    kb_inputs in;
    kb_inputs_make(&c, &in);
    sim_result sr;
    kern_result kr;
    kb_sim(&c, &in, &sr);
    kb_kern(&c, &kern_cpu_bug_bwd_ds_no_d, &in, KERN_DQ_DETERMINISTIC, 0, &kr);
    assert_int_equal(kb_same_grads(&c, &sr, &kr), 4u);
    assert_true(kb_counts_ok(&c, &sr, &kr));
    kern_result_free(&kr);
    sim_result_free(&sr);
    kb_inputs_free(&in);
}

/* The wrong build that keeps dQ_i's turn: deterministic mode stalls at the
 * second key block of a head (named in the message); atomic mode, a lock,
 * runs and gives the simulator's bits in the grid's order. */
static void test_turn_bug_is_caught(void **state)
{
    (void)state;
    kc_case c;
    kb_order_case(&c);
    kb_inputs in;
    kb_inputs_make(&c, &in);
    sim_result sr;
    kern_result kr;
    kb_sim(&c, &in, &sr);
    char err[512];
    const kern_options det = { .threads = 2, .repeat = 1 };
    assert_int_equal(kern_run_bwd_cpu_table(&kern_cpu_bug_bwd_turn_kept, SIM_FA2, &c.sh,
                                            &c.plan, in.Q, in.K, in.V, in.dO, &det, &kr, err,
                                            sizeof err), -1);
    assert_non_null(strstr(err, "block (1, 0) waited for a turn that never came"));
    assert_null(kr.dQ);
    assert_null(kr.O);
    kb_kern(&c, &kern_cpu_bug_bwd_turn_kept, &in, KERN_DQ_ATOMIC, 0, &kr);
    assert_int_equal(kb_same_grads(&c, &sr, &kr), 7u);
    kern_result_free(&kr);
    sim_result_free(&sr);
    kb_inputs_free(&in);
}

/* Refusals: GQA's backward, a forward plan given to the backward's run. */
static void test_refusals(void **state)
{
    (void)state;
    kc_case c;
    kb_order_case(&c);
    kb_inputs in;
    kb_inputs_make(&c, &in);
    kern_result kr;
    char err[512];
    c.sh.kv_heads = 1;
    assert_int_equal(kern_run_bwd(KERN_CPU, SIM_FA2, &c.sh, &c.plan, in.Q, in.K, in.V, in.dO,
                                  NULL, &kr, err, sizeof err), -1);
    assert_non_null(strstr(err, "GQA"));
    c.sh.kv_heads = 2;
    if (!kern_cuda_available(err, sizeof err)) {
        assert_int_equal(kern_run_bwd(KERN_CUDA, SIM_FA2, &c.sh, &c.plan, in.Q, in.K, in.V,
                                      in.dO, NULL, &kr, err, sizeof err), -1);
        assert_non_null(strstr(err, "--backend cpu"));
    }
    /* A block order is the CPU path's: a GPU's is the hardware's. */
    const kern_options seeded = { .block_order_seed = 5 };
    assert_int_equal(kern_run_bwd(KERN_CUDA, SIM_FA2, &c.sh, &c.plan, in.Q, in.K, in.V, in.dO,
                                  &seeded, &kr, err, sizeof err), -1);
    assert_non_null(strstr(err, "--backend cpu"));
    sim_plan fp;
    const sim_run_opts fwd = { 0 };
    sim_plan_make(SIM_FA2, &c.sh, &fwd, 8, 5, SIM_PLAN_USER, &fp);
    assert_int_equal(kern_run_bwd(KERN_CPU, SIM_FA2, &c.sh, &fp, in.Q, in.K, in.V, in.dO,
                                  NULL, &kr, err, sizeof err), -1);
    assert_int_equal(kern_run(KERN_CPU, SIM_FA2, &c.sh, &c.plan, in.Q, in.K, in.V, NULL, &kr,
                              err, sizeof err), -1);
    kern_dq_mode m;
    assert_int_equal(kern_dq_mode_parse("atomic", &m), 0);
    assert_int_equal(m, KERN_DQ_ATOMIC);
    assert_int_equal(kern_dq_mode_parse("deterministic", &m), 0);
    assert_int_equal(m, KERN_DQ_DETERMINISTIC);
    assert_int_equal(kern_dq_mode_parse("atomics", &m), -1);
    kb_inputs_free(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_cases),
        cmocka_unit_test(test_dq_modes),
        cmocka_unit_test(test_block_order),
        cmocka_unit_test(test_bug_is_caught),
        cmocka_unit_test(test_turn_bug_is_caught),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
