/*
 * test_kernels_bwd.c — the backward kernels on the CPU path against the
 * simulator's backward: FA2's (kernels/kern_fa2_bwd.cuh, sim/algo_fa2_bwd.c)
 * and FA1's (kernels/kern_fa1_bwd.cuh, sim/algo_fa1_bwd.c).
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
 * FA1: 36 random configurations of the same kinds, 1-12 threads, N_k < N_q
 * too: dQ, dK, dV bit-identical and the counts equal, the backward launch's
 * shared memory carved as kern_layout lays out the plan's buffers (the
 * plan's bytes), dQ's mode and block order without effect (a block holds a
 * whole head), and the gradients within each dtype's bound of the float64
 * oracle (ref_oracle_attention_bwd). A wrong build (KERN_BUG_FA1_BWD_NO_L:
 * line 13 without diag(l_i)^-1) must fail the output and the oracle's check
 * with its counts right.
 *
 * dQ_i's turns (kern_exec.h's kern_turn_*) run on the CPU path too: a block
 * that would wait for a turn that never comes fails the launch there. So
 * every case above checks the turn each block waits for (j - js.lo) under
 * causal masks and windows, and a wrong build that hands the turn on
 * unchanged (KERN_BUG_BWD_TURN_KEPT) must fail in deterministic mode, where
 * a GPU would hang, and still be right in atomic mode, which only locks.
 *
 * GQA and MQA (G < H, kern_gqa_bwd.cuh): 32 random configurations of FA2's
 * backward and 16 each of FA1's and standard attention's (batch 1-3, H up to 8 over every G that divides
 * it, G = 1 among them, the same masks, dtypes, threads and intermediates)
 * with dQ, dK, dV bit-identical to sim_run's and the counts equal per
 * tensor, dK_exp and dV_exp included; the group sums' launches carve the
 * plan's dK_j, dV_j; and a wrong build that sums a group's heads from the
 * last to the first (KERN_BUG_GQA_SUM_DESCENDING) must fail on dK and dV
 * alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ref_oracle.h"
#include "test_kernels_cases.h"

#define KB_CASES 36
#define KG_CASES 32        /* FA2's; FA1's half as many */

extern const kern_cpu_table kern_cpu_bug_bwd_ds_no_d;
extern const kern_cpu_table kern_cpu_bug_fa1_bwd_no_l;
extern const kern_cpu_table kern_cpu_bug_gqa_sum_descending;
extern const kern_cpu_table kern_cpu_bug_bwd_turn_kept;

/* Normwise error of the gradients against the float64 oracle on the same
 * (rounded) inputs: fp32's bound is test_numerics.c's GRAD_TOL; the 2-byte
 * dtypes round P_ij, dS_ij and dQ's stores, fp16 to 11 bits, bf16 to 8
 * (measured worst over the cases below: see the test's printout). */
static const double KB_ORACLE_TOL[KERN_DTYPE_COUNT] = {
    [SIM_FP16] = 1e-2, [SIM_BF16] = 6e-2, [SIM_FP32] = 1e-4,
};

/* The worst normwise error of kr's dQ, dK, dV against the float64 oracle of
 * every head, on the inputs rounded to the dtype as the runs take them. */
static double kb_oracle_error(const kc_case *c, const kb_inputs *in, const kern_result *kr)
{
    const sim_shape *sh = &c->sh;
    const int64_t N = sh->N, N_k = sim_shape_Nk(sh), d = sh->d;
    const int64_t nq = kern_tensor_elems(sh, SIM_Q), nk = kern_tensor_elems(sh, SIM_K);
    const ref_mask mk = { sh->causal, N_k - N, sh->window, NULL };
    float *r[4] = { malloc((size_t)nq * sizeof(float)), malloc((size_t)nk * sizeof(float)),
                    malloc((size_t)nk * sizeof(float)), malloc((size_t)nq * sizeof(float)) };
    const float *src[4] = { in->Q, in->K, in->V, in->dO };
    double *g[3] = { malloc((size_t)nq * sizeof(double)), malloc((size_t)nk * sizeof(double)),
                     malloc((size_t)nk * sizeof(double)) };
    for (int t = 0; t < 4; t++) {
        const int64_t n = t == 1 || t == 2 ? nk : nq;
        assert_non_null(r[t]);
        memcpy(r[t], src[t], (size_t)n * sizeof(float));
        sim_round_to_dtype(r[t], n, sh->dtype);
    }
    for (int t = 0; t < 3; t++)
        assert_non_null(g[t]);
    for (int64_t h = 0; h < nq / (N * d); h++)        /* MHA: head h reads K, V head h */
        assert_int_equal(ref_oracle_attention_bwd(r[0] + h * N * d, r[1] + h * N_k * d,
                                                  r[2] + h * N_k * d, r[3] + h * N * d, N,
                                                  N_k, d, &mk, g[0] + h * N * d,
                                                  g[1] + h * N_k * d, g[2] + h * N_k * d),
                         0);
    const float *got[3] = { kr->dQ, kr->dK, kr->dV };
    double worst = 0.0;
    for (int t = 0; t < 3; t++) {
        const ref_error e = ref_compare(got[t], g[t], t ? nk : nq);
        worst = e.max_rel > worst ? e.max_rel : worst;
        free(g[t]);
    }
    for (int t = 0; t < 4; t++)
        free(r[t]);
    return worst;
}

/* What a draw of random cases covered. */
typedef struct {
    int partial, causal, window, decode, shorter, multi, paper, many_threads;
    int dtypes[KERN_DTYPE_COUNT];
} kb_cover;

static void kb_cover_add(kb_cover *v, const kc_case *c)
{
    v->partial += c->sh.N % c->plan.Br != 0 || sim_shape_Nk(&c->sh) % c->plan.Bc != 0;
    v->causal += c->sh.causal;
    v->window += c->sh.window > 0;
    v->decode += sim_shape_Nk(&c->sh) > c->sh.N;
    v->shorter += sim_shape_Nk(&c->sh) < c->sh.N;
    v->multi += sim_shape_B(&c->sh) * sim_shape_H(&c->sh) > 1;
    v->paper += c->plan.run.intermediates == SIM_INTER_PAPER;
    v->many_threads += c->threads > 8;
    v->dtypes[c->sh.dtype]++;
}

/* The draw covered each kind of configuration: 3 or more (a window and
 * N_q < N_k: 1), every dtype `dtypes` times, 9-12 threads `many` times. */
static void kb_cover_check(const kb_cover *v, int dtypes, int many)
{
    assert_true(v->partial >= 3);
    assert_true(v->causal >= 3);
    assert_true(v->window >= 1);
    assert_true(v->decode >= 1);
    assert_true(v->multi >= 3);
    assert_true(v->paper >= 3);
    assert_true(v->many_threads >= many);
    for (int t = 0; t < KERN_DTYPE_COUNT; t++)
        assert_true(v->dtypes[t] >= dtypes);
}

/* Case k: the gradients bit-identical and the counts equal, or fail naming
 * the case. */
static void kb_case_ok(int k, const kc_case *c, const sim_result *sr, const kern_result *kr)
{
    char desc[256];
    kc_describe(c, desc, sizeof desc);
    const unsigned g = kb_same_grads(c, sr, kr);
    if (g != 7u || !kb_counts_ok(c, sr, kr))
        fail_msg("case %d: %s: dQ %u dK %u dV %u counts %d", k, desc, g & 1u, g >> 1 & 1u,
                 g >> 2 & 1u, kb_counts_ok(c, sr, kr));
}

/* Case k of a random draw (`what` names the draw): the kernels' dQ, dK, dV
 * bit-identical to the simulator's and the counts equal per tensor and to
 * the closed form, or the test fails naming the case. The kernels' counts
 * go to *counts. */
static void kb_check_case(const char *what, int k, const kc_case *c, sim_counts *counts)
{
    kb_inputs in;
    kb_inputs_make(c, &in);
    sim_result sr;
    kern_result kr;
    kb_sim(c, &in, &sr);
    kb_kern(c, &kern_cpu_kernels, &in, KERN_DQ_DETERMINISTIC, 0, &kr);
    char desc[256];
    kc_describe(c, desc, sizeof desc);
    const unsigned g = kb_same_grads(c, &sr, &kr);
    if (g != 7u || !kb_counts_ok(c, &sr, &kr))
        fail_msg("%s case %d: %s: dQ %u dK %u dV %u counts %d", what, k, desc, g & 1u,
                 g >> 1 & 1u, g >> 2 & 1u, kb_counts_ok(c, &sr, &kr));
    *counts = kr.counts;
    kern_result_free(&kr);
    sim_result_free(&sr);
    kb_inputs_free(&in);
}

static void test_random_cases(void **state)
{
    (void)state;
    uint64_t st = 0x6b62776433ull;
    kb_cover v = { 0 };
    for (int k = 0; k < KB_CASES; k++) {
        kc_case c;
        kb_random_case(&st, SIM_FA2, k % 2, k % 3 == 1, &c);
        kb_inputs in;
        kb_inputs_make(&c, &in);
        sim_result sr;
        kern_result kr;
        kb_sim(&c, &in, &sr);
        kb_kern(&c, &kern_cpu_kernels, &in, KERN_DQ_DETERMINISTIC, 0, &kr);
        kb_case_ok(k, &c, &sr, &kr);
        kb_cover_add(&v, &c);
        kern_result_free(&kr);
        sim_result_free(&sr);
        kb_inputs_free(&in);
    }
    kb_cover_check(&v, 1, 0);
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
    kb_order_case(SIM_FA2, &c);
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
            assert_true(kb_same(one.dQ, many.dQ, nq) && kb_same(one.dK, many.dK, nk) &&
                        kb_same(one.dV, many.dV, nk));
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
    kb_order_case(SIM_FA2, &c);
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

/* A wrong build of loop order a's backward on order_case's problem: the
 * gradients of `right` (bits dQ 0, dK 1, dV 2) still the simulator's, the
 * others not, the counts right; the oracle sees it too, and passes the real
 * build. */
static void kb_bug_caught(sim_algo a, const kern_cpu_table *bug, unsigned right)
{
    kc_case c;
    kb_order_case(a, &c);
    kb_inputs in;
    kb_inputs_make(&c, &in);
    sim_result sr;
    kern_result kr;
    kb_sim(&c, &in, &sr);
    kb_kern(&c, bug, &in, KERN_DQ_DETERMINISTIC, 0, &kr);
    assert_int_equal(kb_same_grads(&c, &sr, &kr), right);
    assert_true(kb_counts_ok(&c, &sr, &kr));
    assert_true(kb_oracle_error(&c, &in, &kr) > 100.0 * KB_ORACLE_TOL[SIM_FP32]);
    kern_result_free(&kr);
    kb_kern(&c, &kern_cpu_kernels, &in, KERN_DQ_DETERMINISTIC, 0, &kr);
    assert_int_equal(kb_same_grads(&c, &sr, &kr), 7u);
    assert_true(kb_oracle_error(&c, &in, &kr) <= KB_ORACLE_TOL[SIM_FP32]);
    kern_result_free(&kr);
    sim_result_free(&sr);
    kb_inputs_free(&in);
}

/* The wrong builds. FA2's, dS without D_i: dQ and dK wrong, dV right.
 * FA1's, line 13 without diag(l_i)^-1: every gradient wrong. */
static void test_bug_is_caught(void **state)
{
    (void)state;
    kb_bug_caught(SIM_FA2, &kern_cpu_bug_bwd_ds_no_d, 4u);
    kb_bug_caught(SIM_FA1, &kern_cpu_bug_fa1_bwd_no_l, 0u);
}

/* ---- GQA and MQA ----------------------------------------------------------- */

/* A GQA case of loop order a: kc_random_case_of's problem (mask, N_k,
 * dtype, threads, blocks) with H drawn from 2, 3, 4, 6, 8 and G from the
 * divisors of H below it (1: MQA). */
static void kg_random_case(uint64_t *st, sim_algo a, int paper, kc_case *c)
{
    static const int64_t Hs[5] = { 2, 3, 4, 6, 8 };
    kc_random_case_of(st, a, 1, c);
    c->sh.heads = Hs[tu_rand_range(st, 0, 4)];
    int64_t Gs[8], n = 0;
    for (int64_t g = 1; g < c->sh.heads; g++)
        if (c->sh.heads % g == 0)
            Gs[n++] = g;
    c->sh.kv_heads = Gs[tu_rand_range(st, 0, n - 1)];
    kb_plan(paper, c);
}

/* n random GQA cases of loop order a, drawn from seed. */
static void kg_random_cases(sim_algo a, int n, uint64_t st)
{
    int mqa = 0, gqa = 0, big_groups = 0, causal = 0, window = 0, partial = 0, paper = 0;
    int multi_batch = 0, threads = 0;
    int dtypes[KERN_DTYPE_COUNT] = { 0 };
    for (int k = 0; k < n; k++) {
        kc_case c;
        kg_random_case(&st, a, k % 3 == 1, &c);
        sim_counts cnt;
        kb_check_case("GQA", k, &c, &cnt);
        /* Every query head's dK_exp went out once per key block, and every
         * key/value head's dK came in from its whole group. */
        const uint64_t BH = (uint64_t)(sim_shape_B(&c.sh) * sim_shape_H(&c.sh));
        const uint64_t Nkd = (uint64_t)(sim_shape_Nk(&c.sh) * c.sh.d);
        if (a != SIM_FA1)
            assert_int_equal(cnt.write_elems[SIM_dKexp], BH * Nkd);
        else            /* FA1: line 5's zeros too, and line 24 where a query sees j */
            assert_true(cnt.write_elems[SIM_dKexp] >= BH * Nkd &&
                        cnt.write_elems[SIM_dKexp] <= 2 * BH * Nkd);
        assert_int_equal(cnt.read_elems[SIM_dVexp], BH * Nkd);
        assert_int_equal(cnt.write_elems[SIM_dK], (uint64_t)kern_tensor_elems(&c.sh, SIM_dK));
        mqa += sim_shape_G(&c.sh) == 1;
        gqa += sim_shape_G(&c.sh) > 1;
        big_groups += sim_shape_H(&c.sh) / sim_shape_G(&c.sh) >= 3;
        causal += c.sh.causal;
        window += c.sh.window > 0;
        partial += sim_shape_Nk(&c.sh) % c.plan.Bc != 0;
        paper += c.plan.run.intermediates == SIM_INTER_PAPER;
        multi_batch += sim_shape_B(&c.sh) > 1;
        threads += c.threads > 1;
        dtypes[c.sh.dtype]++;
    }
    assert_true(mqa >= 3);
    assert_true(gqa >= 3);
    assert_true(big_groups >= 3);
    assert_true(causal >= 3);
    assert_true(window >= 1);
    assert_true(partial >= 3);
    assert_true(paper >= 3);
    assert_true(multi_batch >= 3);
    assert_true(threads >= 3);
    for (int t = 0; t < KERN_DTYPE_COUNT; t++)
        assert_true(dtypes[t] >= 1);
}

static void test_gqa_random_cases(void **state)
{
    (void)state;
    kg_random_cases(SIM_FA2, KG_CASES, 0x67716162776475ull);
}

static void test_fa1_gqa_random_cases(void **state)
{
    (void)state;
    kg_random_cases(SIM_FA1, KG_CASES / 2, 0x6661316771ull);
}

static void test_naive_gqa_random_cases(void **state)
{
    (void)state;
    kg_random_cases(SIM_NAIVE, KG_CASES / 2, 0x6e61697665ull);
}

/* A group of four query heads per key/value head, fp32 (nothing but the
 * additions rounds the group's sum), several key blocks, 3 threads. */
static void gqa_case(kc_case *c)
{
    kb_order_case(SIM_FA2, c);
    c->sh.heads = 8;
    c->sh.kv_heads = 2;
    kb_plan(0, c);
    assert_true(c->plan.fits);
}

/* The schedule: FA2's backward launches, then the two group sums, grid
 * (T_c, B G), each with the plan's dK_j or dV_j of phase 2 and nothing
 * else; and what the CPU path carves is that layout. A plan whose dK_j
 * is not the kernel's is refused. */
static void test_gqa_schedule(void **state)
{
    (void)state;
    kc_case c;
    gqa_case(&c);
    kern_schedule s;
    char err[256];
    assert_int_equal(kern_schedule_make(SIM_FA2, &c.plan, &c.sh, &s, err, sizeof err), 0);
    assert_int_equal(s.n, 5);
    const kern_kernel want[2] = { KERN_K_GQA_SUM_DK, KERN_K_GQA_SUM_DV };
    const char *bufs[2] = { "dK_j", "dV_j" };
    for (int x = 0; x < 2; x++) {
        const kern_launch *l = &s.l[3 + x];
        assert_int_equal(l->k, want[x]);
        assert_int_equal(l->grid, c.plan.Tc);
        assert_int_equal(l->grid_y, sim_shape_B(&c.sh) * sim_shape_G(&c.sh));
        assert_int_equal(l->phase, 2);
        kern_smem_buf buf[SIM_MAX_BUFFERS];
        int n;
        uint64_t bytes;
        assert_int_equal(kern_layout(l->k, l->phase, &c.plan, &c.sh, buf, &n, &bytes, err,
                                     sizeof err), 0);
        assert_int_equal(n, 1);
        assert_string_equal(buf[0].name, bufs[x]);
        assert_int_equal(buf[0].offset, 0);
        assert_int_equal(bytes, (uint64_t)(c.plan.Bc * c.sh.d) * 4u);
        assert_int_equal(l->smem_bytes, bytes);
    }
    kern_carve_log log;
    memset(&log, 0, sizeof log);
    kb_inputs in;
    kb_inputs_make(&c, &in);
    kern_result kr;
    kern_cpu_carve_log = &log;
    kb_kern(&c, &kern_cpu_kernels, &in, KERN_DQ_DETERMINISTIC, 0, &kr);
    kern_cpu_carve_log = NULL;
    kern_result_free(&kr);
    /* Launches 0 and 1 are the forward's (counted, timed), 2 .. 6 the
     * backward's counted run: its launches 3 and 4 are the sums. */
    int seen[2] = { 0, 0 };
    for (int r = 0; r < log.n; r++)
        for (int x = 0; x < 2; x++)
            if (log.r[r].launch == 2 + 3 + x) {
                assert_string_equal(log.r[r].name, bufs[x]);
                assert_int_equal(log.r[r].offset, 0);
                assert_int_equal(log.r[r].bytes, (uint64_t)(c.plan.Bc * c.sh.d) * 4u);
                seen[x]++;
            }
    assert_int_equal(seen[0], 1);
    assert_int_equal(seen[1], 1);
    for (int b = 0; b < c.plan.nbuf; b++)
        if (!strcmp(c.plan.buf[b].name, "dV_j"))
            c.plan.buf[b].cols += 1;
    assert_int_equal(kern_schedule_make(SIM_FA2, &c.plan, &c.sh, &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "does not match"));
    kb_inputs_free(&in);
}

/* The wrong build: a group summed from its last head to its first. The same
 * transfers, dQ right, dK and dV wrong. */
static void test_gqa_bug_is_caught(void **state)
{
    (void)state;
    kc_case c;
    gqa_case(&c);
    kb_inputs in;
    kb_inputs_make(&c, &in);
    sim_result sr;
    kern_result kr, good;
    kb_sim(&c, &in, &sr);
    kb_kern(&c, &kern_cpu_kernels, &in, KERN_DQ_DETERMINISTIC, 0, &good);
    assert_int_equal(kb_same_grads(&c, &sr, &good), 7u);
    kb_kern(&c, &kern_cpu_bug_gqa_sum_descending, &in, KERN_DQ_DETERMINISTIC, 0, &kr);
    assert_int_equal(kb_same_grads(&c, &sr, &kr), 1u);
    assert_true(kb_counts_ok(&c, &sr, &kr));
    kern_result_free(&good);
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
    kb_order_case(SIM_FA2, &c);
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

/* Refusals: the CUDA backend without a device or with a block order, a
 * forward plan given to the backward's run and a backward plan to the
 * forward's. */
static void test_refusals(void **state)
{
    (void)state;
    kc_case c;
    kb_inputs in;
    kern_result kr;
    char err[512];
    kb_order_case(SIM_FA2, &c);
    kb_inputs_make(&c, &in);
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
    kb_plan_refusals(&c, &in);
    kern_dq_mode m;
    assert_int_equal(kern_dq_mode_parse("atomic", &m), 0);
    assert_int_equal(m, KERN_DQ_ATOMIC);
    assert_int_equal(kern_dq_mode_parse("deterministic", &m), 0);
    assert_int_equal(m, KERN_DQ_DETERMINISTIC);
    assert_int_equal(kern_dq_mode_parse("atomics", &m), -1);
    kb_inputs_free(&in);
}

/* ---- FA1's backward (kernels/kern_fa1_bwd.cuh, sim/algo_fa1_bwd.c) ------------ */

#define KB_FA1_CASES 36

/* The shared memory of kr's last launch (the backward's, timed) as the
 * carve log saw it: every buffer of kern_fa1_bwd's layout once, at its
 * offset and size, and the launch's bytes the plan's peak. */
static void kb_fa1_carve_ok(const kc_case *c, const kern_carve_log *log, const kern_result *kr)
{
    kern_smem_buf buf[SIM_MAX_BUFFERS];
    int n, seen = 0;
    uint64_t bytes;
    char err[256];
    assert_int_equal(kern_layout(KERN_K_FA1_BWD, 1, &c->plan, &c->sh, buf, &n, &bytes, err,
                                 sizeof err), 0);
    assert_int_equal(bytes, c->plan.sram_peak);
    assert_int_equal(kr->smem_bytes, c->plan.sram_peak);
    assert_int_equal(kr->launches, 1);
    for (int k = 0; k < log->n; k++) {
        if (log->r[k].launch != log->launches - 1)
            continue;
        int b = 0;
        while (b < n && strcmp(buf[b].name, log->r[k].name) != 0)
            b++;
        assert_true(b < n);
        assert_int_equal(log->r[k].offset, buf[b].offset);
        assert_int_equal(log->r[k].bytes, buf[b].bytes);
        seen++;
    }
    assert_int_equal(seen, n);
}

/* 36 random FA1 configurations, 1-12 threads: the simulator's bits, counts
 * and shared memory; any dQ mode and block order (a block holds a whole
 * head: dQ_i's additions have one order); the oracle's gradients within
 * the dtype's bound. */
static void test_fa1_random_cases(void **state)
{
    (void)state;
    uint64_t st = 0x6661316277ull;
    kb_cover v = { 0 };
    double worst[KERN_DTYPE_COUNT] = { 0 };
    for (int k = 0; k < KB_FA1_CASES; k++) {
        kc_case c;
        kb_random_case(&st, SIM_FA1, k % 3 != 0, k % 3 == 1, &c);
        c.threads = (int)tu_rand_range(&st, 1, 12);
        kb_inputs in;
        kb_inputs_make(&c, &in);
        sim_result sr;
        kern_result kr;
        kb_sim(&c, &in, &sr);
        kern_carve_log log;
        memset(&log, 0, sizeof log);
        kern_cpu_carve_log = &log;
        kb_kern(&c, &kern_cpu_kernels, &in, k % 2 ? KERN_DQ_ATOMIC : KERN_DQ_DETERMINISTIC,
                (uint64_t)(k % 4), &kr);
        kern_cpu_carve_log = NULL;
        kb_case_ok(k, &c, &sr, &kr);
        kb_fa1_carve_ok(&c, &log, &kr);
        const double e = kb_oracle_error(&c, &in, &kr);
        if (e > KB_ORACLE_TOL[c.sh.dtype]) {
            char desc[256];
            kc_describe(&c, desc, sizeof desc);
            fail_msg("case %d: %s: %.3g of the gradients' max-norm from the oracle", k, desc,
                     e);
        }
        worst[c.sh.dtype] = e > worst[c.sh.dtype] ? e : worst[c.sh.dtype];
        kb_cover_add(&v, &c);
        kern_result_free(&kr);
        sim_result_free(&sr);
        kb_inputs_free(&in);
    }
    printf("  fa1 bwd against the float64 oracle, worst error of the gradients' max-norm: "
           "fp16 %.2e, bf16 %.2e, fp32 %.2e\n", worst[SIM_FP16], worst[SIM_BF16],
           worst[SIM_FP32]);
    printf("  (%d partial blocks, %d causal, %d windows, %d N_q < N_k, %d N_k < N_q, "
           "%d batched, %d paper, %d with 9-12 threads)\n", v.partial, v.causal, v.window,
           v.decode, v.shorter, v.multi, v.paper, v.many_threads);
    assert_true(v.shorter >= 1);
    kb_cover_check(&v, 3, 3);
}

/* FA1's backward is one launch of kern_fa1_bwd over the B H heads. */
static void test_fa1_schedule(void **state)
{
    (void)state;
    kc_case c;
    kb_order_case(SIM_FA1, &c);
    kern_schedule s;
    char err[512];
    assert_int_equal(kern_schedule_make(SIM_FA1, &c.plan, &c.sh, &s, err, sizeof err), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.l[0].k, KERN_K_FA1_BWD);
    assert_int_equal(s.l[0].grid, 4);
    assert_int_equal(s.l[0].grid_y, 1);
    assert_int_equal(s.l[0].smem_bytes, c.plan.sram_peak);
    assert_string_equal(kern_kernel_name(KERN_K_FA1_BWD), "kern_fa1_bwd");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_cases),
        cmocka_unit_test(test_dq_modes),
        cmocka_unit_test(test_concurrent_blocks),
        cmocka_unit_test(test_block_order),
        cmocka_unit_test(test_bug_is_caught),
        cmocka_unit_test(test_turn_bug_is_caught),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_fa1_random_cases),
        cmocka_unit_test(test_fa1_schedule),
        cmocka_unit_test(test_gqa_random_cases),
        cmocka_unit_test(test_fa1_gqa_random_cases),
        cmocka_unit_test(test_naive_gqa_random_cases),
        cmocka_unit_test(test_gqa_schedule),
        cmocka_unit_test(test_gqa_bug_is_caught),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
