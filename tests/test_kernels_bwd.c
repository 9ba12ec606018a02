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
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_kernels_cases.h"

#define KB_CASES 36

extern const kern_cpu_table kern_cpu_bug_bwd_ds_no_d;

/* A backward case: kc_random_case_of's problem (heads and mask drawn when
 * `heads`), made MHA, with FA2's backward plan of the same blocks (M raised
 * to its peak where it does not fit), the paper's intermediates when paper. */
static void kb_random_case(uint64_t *st, int heads, int paper, kc_case *c)
{
    kc_random_case_of(st, SIM_FA2, heads, c);
    c->sh.kv_heads = c->sh.heads;
    const sim_run_opts run = { .pass = SIM_BWD,
                               .intermediates = paper ? SIM_INTER_PAPER : SIM_INTER_KERNEL };
    const int64_t Br = c->plan.Br, Bc = c->plan.Bc;
    sim_plan_make(SIM_FA2, &c->sh, &run, Br, Bc, SIM_PLAN_USER, &c->plan);
    if (!c->plan.fits) {
        c->sh.M = c->plan.sram_peak;
        sim_plan_make(SIM_FA2, &c->sh, &run, Br, Bc, SIM_PLAN_USER, &c->plan);
    }
}

typedef struct {
    float *Q, *K, *V, *dO;
} kb_inputs;

static void kb_inputs_free(kb_inputs *in)
{
    free(in->Q);
    free(in->K);
    free(in->V);
    free(in->dO);
}

static void kb_inputs_make(const kc_case *c, kb_inputs *in)
{
    const int64_t nq = kern_tensor_elems(&c->sh, SIM_Q), nk = kern_tensor_elems(&c->sh, SIM_K);
    in->Q = malloc((size_t)nq * sizeof(float));
    in->K = malloc((size_t)nk * sizeof(float));
    in->V = malloc((size_t)nk * sizeof(float));
    in->dO = malloc((size_t)nq * sizeof(float));
    assert_non_null(in->Q);
    assert_non_null(in->K);
    assert_non_null(in->V);
    assert_non_null(in->dO);
    sim_random_qkv(c->seed, nq / c->sh.d, nk / c->sh.d, c->sh.d, c->sh.dtype, in->Q, in->K,
                   in->V);
    sim_random_grad(c->seed + 1, nq, c->sh.dtype, in->dO);
}

static void kb_sim(const kc_case *c, const kb_inputs *in, sim_result *sr)
{
    char err[512];
    const sim_inputs si = { in->Q, in->K, in->V, in->dO };
    if (sim_run_inputs(SIM_FA2, &c->sh, &c->plan, &si, NULL, sr, err, sizeof err) != 0)
        fail_msg("sim_run: %s", err);
}

static void kb_kern(const kc_case *c, const kern_cpu_table *tab, const kb_inputs *in,
                    kern_dq_mode mode, uint64_t order_seed, kern_result *kr)
{
    char err[512], desc[256];
    const kern_options opt = { .threads = c->threads, .repeat = 1, .dq_mode = mode,
                               .block_order_seed = order_seed };
    kc_describe(c, desc, sizeof desc);
    if (kern_run_bwd_cpu_table(tab, SIM_FA2, &c->sh, &c->plan, in->Q, in->K, in->V, in->dO,
                               &opt, kr, err, sizeof err) != 0)
        fail_msg("%s: kernel run: %s", desc, err);
}

static int same(const float *a, const float *b, int64_t n)
{
    return a && b && memcmp(a, b, (size_t)n * sizeof(float)) == 0;
}

/* Which of dQ, dK, dV (bits 0, 1, 2) of kr equal sr's. */
static unsigned kb_same_grads(const kc_case *c, const sim_result *sr, const kern_result *kr)
{
    const int64_t nq = kern_tensor_elems(&c->sh, SIM_Q), nk = kern_tensor_elems(&c->sh, SIM_K);
    return (unsigned)same(sr->dQ, kr->dQ, nq) | (unsigned)same(sr->dK, kr->dK, nk) << 1 |
           (unsigned)same(sr->dV, kr->dV, nk) << 2;
}

static int kb_counts_ok(const kc_case *c, const sim_result *sr, const kern_result *kr)
{
    sim_counts th;
    return sim_counts_equal(&sr->counts, &kr->counts) &&
           sim_theory_counts(&c->plan, &c->sh, &th) == 0 && sim_counts_equal(&th, &sr->counts);
}

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

/* A case with several key blocks per head and several heads: fp32 (so that
 * nothing rounds dQ's running sum but the additions themselves). */
static void order_case(kc_case *c)
{
    memset(c, 0, sizeof *c);
    c->algo = SIM_FA2;
    c->sh.N = 40;
    c->sh.d = 8;
    c->sh.dtype = SIM_FP32;
    c->sh.batch = 2;
    c->sh.heads = 2;
    c->sh.kv_heads = 2;
    c->sh.M = 1u << 20;
    c->seed = 7;
    c->threads = 3;
    const sim_run_opts run = { .pass = SIM_BWD };
    sim_plan_make(SIM_FA2, &c->sh, &run, 8, 5, SIM_PLAN_USER, &c->plan);
    assert_true(c->plan.fits);
    assert_int_equal(c->plan.Tc, 8);
}

/* Blocks side by side (kern_cpu.c: sim_threads() / threads of them): an
 * ordered launch runs its heads in groups, each head's blocks in the order
 * given, so even atomic dQ under a shuffled order gets the bits of one
 * block at a time; the counts are the same. 8 cores asked for: 8, 4 and 2
 * resident blocks with 1, 2 and 3 threads each, whatever this machine has. */
static void test_concurrent_blocks(void **state)
{
    (void)state;
    kc_case c;
    order_case(&c);
    kb_inputs in;
    kb_inputs_make(&c, &in);
    const int64_t nq = kern_tensor_elems(&c.sh, SIM_Q), nk = kern_tensor_elems(&c.sh, SIM_K);
    for (uint64_t seed = 0; seed <= 3; seed++)
        for (int t = 1; t <= 3; t++) {
            c.threads = t;
            kern_result one, many;
            sim_set_threads(1);
            kb_kern(&c, &kern_cpu_kernels, &in, KERN_DQ_ATOMIC, seed, &one);
            sim_set_threads(8);
            kb_kern(&c, &kern_cpu_kernels, &in, KERN_DQ_ATOMIC, seed, &many);
            sim_set_threads(0);
            assert_true(same(one.dQ, many.dQ, nq) && same(one.dK, many.dK, nk) &&
                        same(one.dV, many.dV, nk));
            assert_true(sim_counts_equal(&one.counts, &many.counts));
            kern_result_free(&one);
            kern_result_free(&many);
        }
    kb_inputs_free(&in);
}

static void test_dq_modes(void **state)
{
    (void)state;
    kc_case c;
    order_case(&c);
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
        differ += !same(first.dQ, atom.dQ, nq);
        kern_result_free(&det);
        kern_result_free(&atom);
    }
    /* Two orders of the same additions give dQ's bits apart: order 0 and
     * order 1 (checked on their own), and most of the others. */
    kern_result one;
    kb_kern(&c, &kern_cpu_kernels, &in, KERN_DQ_ATOMIC, 1, &one);
    assert_false(same(first.dQ, one.dQ, nq));
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
    order_case(&c);
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

/* Refusals: GQA's backward, a forward plan given to the backward's run. */
static void test_refusals(void **state)
{
    (void)state;
    kc_case c;
    order_case(&c);
    kb_inputs in;
    kb_inputs_make(&c, &in);
    kern_result kr;
    char err[512];
    c.sh.kv_heads = 1;
    assert_int_equal(kern_run_bwd(KERN_CPU, SIM_FA2, &c.sh, &c.plan, in.Q, in.K, in.V, in.dO,
                                  NULL, &kr, err, sizeof err), -1);
    assert_non_null(strstr(err, "GQA"));
    c.sh.kv_heads = 2;
    assert_int_equal(kern_run_bwd(KERN_CUDA, SIM_FA2, &c.sh, &c.plan, in.Q, in.K, in.V, in.dO,
                                  NULL, &kr, err, sizeof err), -1);
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
        cmocka_unit_test(test_concurrent_blocks),
        cmocka_unit_test(test_block_order),
        cmocka_unit_test(test_bug_is_caught),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
