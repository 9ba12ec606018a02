/*
 * test_kernels_cases.h — the random configurations and the comparison that
 * test_kernels.c (CPU path) and test_kernels_gpu.c (CUDA) share.
 *
 * A case is one loop order on one problem: N, d, B_r, B_c (N often not a
 * multiple of either), causal or not, fp16/bf16/fp32, M either the plan's own
 * peak or larger, which moves the naive softmax between its one-pass form
 * and its forms over tiles (two passes, or three asked for). Inputs are seeded bell-shaped values, never zero.
 *
 * kc_compare runs the simulator in compute mode and a kernel run on the same
 * inputs and plan, and reports whether O (and L) are bit-identical and the
 * per-tensor counts equal; it also checks the simulator's counts against the
 * closed form, so that "equal" is never two copies of one mistake.
 *
 * The backward's helpers (kb_*) draw backward cases of a loop order, their inputs
 * (Q, K, V, dO), run the simulator's backward and the kernels', and compare
 * dQ, dK, dV and the counts. They use cmocka's fail_msg: include cmocka
 * first.
 */
#ifndef FASIM_TEST_KERNELS_CASES_H
#define FASIM_TEST_KERNELS_CASES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_internal.h"
#include "sim.h"
#include "test_util.h"

typedef struct {
    sim_algo algo;
    sim_shape sh;
    sim_plan plan;
    uint64_t seed;
    int threads;
} kc_case;

/* The problem's heads and mask, drawn for `algo` (kc_random_heads_case):
 * batch 1-3, heads 1-4 with G | H key/value heads (MHA, MQA, and GQA: 4 over
 * 2), N_k >= N
 * (decoding: fewer queries than keys) or, without causal, any N_k, and with
 * causal a sliding window now and then. */
static void kc_random_heads(uint64_t *st, sim_shape *sh)
{
    static const int64_t Gs[4][3] = { { 1, 1, 1 }, { 1, 2, 2 }, { 1, 3, 3 }, { 1, 2, 2 } };
    sh->batch = tu_rand_range(st, 1, 3);
    sh->heads = tu_rand_range(st, 1, 4);
    sh->kv_heads = Gs[sh->heads - 1][tu_rand_range(st, 0, 2)];
    if (tu_rand_range(st, 0, 1))
        sh->Nk = sh->N + tu_rand_range(st, 0, 40);
    else if (!sh->causal && tu_rand_range(st, 0, 1))
        sh->Nk = tu_rand_range(st, 1, sh->N + 20);
    if (sh->causal && tu_rand_range(st, 0, 1))
        sh->window = tu_rand_range(st, 1, sim_shape_Nk(sh) + 4);
}

/* A random case for `algo` from the test's generator state. */
static void kc_random_case_of(uint64_t *st, sim_algo algo, int heads, kc_case *c)
{
    memset(c, 0, sizeof *c);
    c->algo = algo;
    c->sh.N = tu_rand_range(st, 1, heads ? 60 : 150);
    c->sh.d = tu_rand_range(st, 1, heads ? 24 : 48);
    c->sh.dtype = (sim_dtype)tu_rand_range(st, 0, 2);
    c->sh.causal = (int)tu_rand_range(st, 0, 1);
    if (heads)
        kc_random_heads(st, &c->sh);
    c->seed = tu_rand(st);
    c->threads = (int)tu_rand_range(st, 1, 8);
    int64_t Br = tu_rand_range(st, 1, c->sh.N + 3);
    int64_t Bc = tu_rand_range(st, 1, c->sh.N + 3);
    if (tu_rand_range(st, 0, 2) != 0) {      /* mostly real tiling: blocks < N */
        Br = tu_rand_range(st, 1, c->sh.N > 2 ? c->sh.N / 2 : 1);
        Bc = tu_rand_range(st, 1, c->sh.N > 2 ? c->sh.N / 2 : 1);
    }
    /* M: random; if the plan does not fit, exactly its peak (which then fits:
     * phases 1 and 3 do not depend on M, and phase 2 only shrinks or keeps).
     * One draw in four takes tiny tiles and the smallest M that holds them, so
     * that a row of S (4N + 8 bytes) does not fit and the naive softmax goes
     * over tiles: in two passes by default, in three for half of them. */
    sim_run_opts run = { 0 };
    c->sh.M = (uint64_t)tu_rand_range(st, 256, 64 * 1024);
    if (tu_rand_range(st, 0, 3) == 0) {
        c->sh.N = tu_rand_range(st, 48, 120);    /* 4N + 8 > the largest tiny plan, 192 B */
        if (c->sh.Nk)                            /* the keys as long, or longer */
            c->sh.Nk = c->sh.N + (c->sh.causal ? tu_rand_range(st, 0, 20) : 0);
        if (c->sh.window)
            c->sh.window = tu_rand_range(st, 1, sim_shape_Nk(&c->sh));
        c->sh.d = tu_rand_range(st, 1, 4);
        Br = tu_rand_range(st, 1, 4);
        Bc = tu_rand_range(st, 1, 4);
        c->sh.M = 1;
        run.softmax = tu_rand_range(st, 0, 1) ? SIM_SOFTMAX_3PASS : SIM_SOFTMAX_AUTO;
    }
    sim_plan_make(algo, &c->sh, &run, Br, Bc, SIM_PLAN_USER, &c->plan);
    if (!c->plan.fits) {
        c->sh.M = c->plan.sram_peak;
        sim_plan_make(algo, &c->sh, &run, Br, Bc, SIM_PLAN_USER, &c->plan);
    }
}

/* One head, N_q = N_k (kc_random_case), or the heads and mask drawn too. */
static inline void kc_random_case(uint64_t *st, sim_algo algo, kc_case *c)
{
    kc_random_case_of(st, algo, 0, c);
}

/* A split-KV case of FA2 (kc_random_case_of's heads and mask): S splits,
 * 2 <= S <= T_c, of a plan with at least two key blocks. */
static inline void kc_random_split_case(uint64_t *st, kc_case *c)
{
    kc_random_case_of(st, SIM_FA2, 1, c);
    const int64_t Nk = sim_shape_Nk(&c->sh);
    int64_t Bc = Nk < 2 ? 1 : tu_rand_range(st, 1, Nk / 2);
    sim_run_opts run = { 0 };
    c->sh.M = 1u << 20;
    sim_plan_make(SIM_FA2, &c->sh, &run, c->plan.Br, Bc, SIM_PLAN_USER, &c->plan);
    run.splits = c->plan.Tc < 2 ? 0 : tu_rand_range(st, 2, c->plan.Tc < 9 ? c->plan.Tc : 9);
    sim_plan_make(SIM_FA2, &c->sh, &run, c->plan.Br, Bc, SIM_PLAN_USER, &c->plan);
}

static void kc_describe(const kc_case *c, char *buf, size_t len)
{
    char form[32] = "", heads[96] = "";
    if (c->algo == SIM_NAIVE)
        snprintf(form, sizeof form, " softmax=%dpass", c->plan.softmax_passes);
    if (c->plan.run.splits > 1)
        snprintf(form, sizeof form, " splits=%lld", (long long)c->plan.run.splits);
    if (sim_shape_B(&c->sh) * sim_shape_H(&c->sh) > 1 || c->sh.Nk || c->sh.window)
        snprintf(heads, sizeof heads, " B=%lld H=%lld G=%lld Nk=%lld W=%lld",
                 (long long)sim_shape_B(&c->sh), (long long)sim_shape_H(&c->sh),
                 (long long)sim_shape_G(&c->sh), (long long)sim_shape_Nk(&c->sh),
                 (long long)c->sh.window);
    snprintf(buf, len, "%s N=%lld%s d=%lld Br=%lld Bc=%lld M=%llu %s%s seed=%llu threads=%d%s",
             sim_algo_name(c->algo), (long long)c->sh.N, heads, (long long)c->sh.d,
             (long long)c->plan.Br, (long long)c->plan.Bc, (unsigned long long)c->sh.M,
             sim_dtype_name(c->sh.dtype), c->sh.causal ? " causal" : "",
             (unsigned long long)c->seed, c->threads, form);
}

typedef struct {
    int ran;                 /* both runs succeeded */
    int identical;           /* O (and L for FA2) bit-identical */
    int64_t differing;       /* elements of O that differ */
    int counts_equal;        /* kernel counts == simulator counts, per tensor */
    int sim_matches_theory;  /* simulator counts == closed form */
    double seconds;
} kc_outcome;

/* Judge a kernel run kr against the simulator's sr of case c: O (and FA2's
 * L) bit for bit over every head, the counts per tensor, and the
 * simulator's counts against the closed form. Prints what differs unless
 * quiet. */
static kc_outcome kc_judge(const kc_case *c, const sim_result *sr, const kern_result *kr,
                           int quiet)
{
    kc_outcome o;
    memset(&o, 0, sizeof o);
    char desc[256];
    kc_describe(c, desc, sizeof desc);
    const int64_t nO = kern_tensor_elems(&c->sh, SIM_O), nL = kern_tensor_elems(&c->sh, SIM_L);
    o.ran = 1;
    o.seconds = kr->seconds;
    o.differing = quiet ? (memcmp(sr->O, kr->O, (size_t)nO * sizeof(float)) != 0)
                        : tu_compare_bits(desc, kr->O, sr->O, nO);
    o.identical = o.differing == 0;
    if (c->algo == SIM_FA2)
        o.identical = o.identical && sr->L && kr->L &&
                      memcmp(sr->L, kr->L, (size_t)nL * sizeof(float)) == 0;
    o.counts_equal = sim_counts_equal(&sr->counts, &kr->counts);
    sim_counts th;
    o.sim_matches_theory = sim_theory_counts(&c->plan, &c->sh, &th) == 0 &&
                           sim_counts_equal(&th, &sr->counts);
    if (!quiet && !o.counts_equal) {
        const sim_counts *a = &kr->counts, *b = &sr->counts;
        for (int t = 0; t < SIM_TENSOR_COUNT; t++)
            if (b->read_elems[t] != a->read_elems[t] || b->write_elems[t] != a->write_elems[t] ||
                b->read_ops[t] != a->read_ops[t] || b->write_ops[t] != a->write_ops[t])
                fprintf(stderr, "%s: %s kernel r %llu/%llu w %llu/%llu, sim r %llu/%llu "
                        "w %llu/%llu (elems/ops)\n", desc, sim_tensor_name((sim_tensor)t),
                        (unsigned long long)a->read_elems[t],
                        (unsigned long long)a->read_ops[t],
                        (unsigned long long)a->write_elems[t],
                        (unsigned long long)a->write_ops[t],
                        (unsigned long long)b->read_elems[t],
                        (unsigned long long)b->read_ops[t],
                        (unsigned long long)b->write_elems[t],
                        (unsigned long long)b->write_ops[t]);
    }
    if (!quiet && !o.identical)
        fprintf(stderr, "%s: output not bit-identical (%lld of %lld differ)\n", desc,
                (long long)o.differing, (long long)nO);
    return o;
}

/* Run case c through the simulator (*sr) and through the kernels (*kr):
 * backend CPU with table `tab`, or CUDA when tab is NULL, on the seeded
 * inputs of every head (Q (B H N, d), K, V (B G N_k, d), as the report
 * draws them). Returns 0 with both filled (the caller frees them), or -1
 * with the failure printed. */
static int kc_run(const kc_case *c, const kern_cpu_table *tab, sim_result *sr, kern_result *kr)
{
    const int64_t nq = kern_tensor_elems(&c->sh, SIM_Q), nk = kern_tensor_elems(&c->sh, SIM_K);
    float *Q = malloc((size_t)nq * sizeof *Q), *K = malloc((size_t)nk * sizeof *K),
          *V = malloc((size_t)nk * sizeof *V);
    char desc[256], err[1024];
    kc_describe(c, desc, sizeof desc);
    int rc = -1;
    if (!Q || !K || !V)
        goto out;
    sim_random_qkv(c->seed, nq / c->sh.d, nk / c->sh.d, c->sh.d, c->sh.dtype, Q, K, V);
    kern_options opt = { .threads = c->threads, .repeat = 1 };
    if (sim_run(c->algo, &c->sh, &c->plan, Q, K, V, NULL, sr, err, sizeof err) != 0) {
        fprintf(stderr, "%s: sim_run failed: %s\n", desc, err);
        goto out;
    }
    rc = tab ? kern_run_cpu_table(tab, c->algo, &c->sh, &c->plan, Q, K, V, &opt, kr, err,
                                  sizeof err)
             : kern_run(KERN_CUDA, c->algo, &c->sh, &c->plan, Q, K, V, &opt, kr, err,
                        sizeof err);
    if (rc != 0) {
        fprintf(stderr, "%s: kernel run failed: %s\n", desc, err);
        sim_result_free(sr);
    }
out:
    free(Q);
    free(K);
    free(V);
    return rc;
}

/* kc_run, then kc_judge: prints the case when it fails (unless quiet). */
static inline kc_outcome kc_compare(const kc_case *c, const kern_cpu_table *tab, int quiet)
{
    kc_outcome o;
    memset(&o, 0, sizeof o);
    sim_result sr;
    kern_result kr;
    if (kc_run(c, tab, &sr, &kr) != 0)
        return o;
    o = kc_judge(c, &sr, &kr, quiet);
    kern_result_free(&kr);
    sim_result_free(&sr);
    return o;
}

/* ---- the backward (test_kernels_bwd.c, test_kernels_gpu.c) ------------------ */

/* c's problem with its loop order's backward plan of its blocks (M raised
 * to the plan's peak where it does not fit), the paper's intermediates when
 * paper. */
static inline void kb_plan(int paper, kc_case *c)
{
    const sim_run_opts run = { .pass = SIM_BWD,
                               .intermediates = paper ? SIM_INTER_PAPER : SIM_INTER_KERNEL };
    const int64_t Br = c->plan.Br, Bc = c->plan.Bc;
    sim_plan_make(c->algo, &c->sh, &run, Br, Bc, SIM_PLAN_USER, &c->plan);
    if (!c->plan.fits) {
        c->sh.M = c->plan.sram_peak;
        sim_plan_make(c->algo, &c->sh, &run, Br, Bc, SIM_PLAN_USER, &c->plan);
    }
}

/* A backward case of loop order a: kc_random_case_of's problem (heads and
 * mask drawn when `heads`), made MHA, with kb_plan's plan. */
static inline void kb_random_case(uint64_t *st, sim_algo a, int heads, int paper, kc_case *c)
{
    kc_random_case_of(st, a, heads, c);
    c->sh.kv_heads = c->sh.heads;
    kb_plan(paper, c);
}

typedef struct {
    float *Q, *K, *V, *dO;
} kb_inputs;

static inline void kb_inputs_free(kb_inputs *in)
{
    free(in->Q);
    free(in->K);
    free(in->V);
    free(in->dO);
}

static inline void kb_inputs_make(const kc_case *c, kb_inputs *in)
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

/* The refusals every backward's test shares: a forward plan of c's tiles
 * given to the backward's run, and c's backward plan to the forward's. */
static inline void kb_plan_refusals(const kc_case *c, const kb_inputs *in)
{
    kern_result kr;
    char err[512];
    sim_plan fp;
    const sim_run_opts fwd = { 0 };
    sim_plan_make(c->algo, &c->sh, &fwd, c->plan.Br, c->plan.Bc, SIM_PLAN_USER, &fp);
    assert_int_equal(kern_run_bwd(KERN_CPU, c->algo, &c->sh, &fp, in->Q, in->K, in->V, in->dO,
                                  NULL, &kr, err, sizeof err), -1);
    assert_int_equal(kern_run(KERN_CPU, c->algo, &c->sh, &c->plan, in->Q, in->K, in->V, NULL,
                              &kr, err, sizeof err), -1);
}

static inline void kb_sim(const kc_case *c, const kb_inputs *in, sim_result *sr)
{
    char err[512];
    const sim_inputs si = { in->Q, in->K, in->V, in->dO };
    if (sim_run_inputs(c->algo, &c->sh, &c->plan, &si, NULL, sr, err, sizeof err) != 0)
        fail_msg("sim_run: %s", err);
}

/* The backward's kernels on c's inputs: the CPU path with table tab, or
 * the CUDA backend when tab is NULL (whose block order is the device's:
 * order_seed must be 0 there; three timed runs, each checked against the
 * counted one). Fails the test when the run fails. */
static inline void kb_kern(const kc_case *c, const kern_cpu_table *tab, const kb_inputs *in,
                           kern_dq_mode mode, uint64_t order_seed, kern_result *kr)
{
    char err[512], desc[256];
    const kern_options opt = { .threads = c->threads, .repeat = tab ? 1 : 3, .dq_mode = mode,
                               .block_order_seed = order_seed };
    kc_describe(c, desc, sizeof desc);
    const int rc = tab ? kern_run_bwd_cpu_table(tab, c->algo, &c->sh, &c->plan, in->Q, in->K,
                                                in->V, in->dO, &opt, kr, err, sizeof err)
                       : kern_run_bwd(KERN_CUDA, c->algo, &c->sh, &c->plan, in->Q, in->K,
                                      in->V, in->dO, &opt, kr, err, sizeof err);
    if (rc != 0)
        fail_msg("%s: kernel run: %s", desc, err);
}

static inline int kb_same(const float *a, const float *b, int64_t n)
{
    return a && b && memcmp(a, b, (size_t)n * sizeof(float)) == 0;
}

/* Which of dQ, dK, dV (bits 0, 1, 2) of kr equal sr's. */
static inline unsigned kb_same_grads(const kc_case *c, const sim_result *sr, const kern_result *kr)
{
    const int64_t nq = kern_tensor_elems(&c->sh, SIM_Q), nk = kern_tensor_elems(&c->sh, SIM_K);
    return (unsigned)kb_same(sr->dQ, kr->dQ, nq) | (unsigned)kb_same(sr->dK, kr->dK, nk) << 1 |
           (unsigned)kb_same(sr->dV, kr->dV, nk) << 2;
}

static inline int kb_counts_ok(const kc_case *c, const sim_result *sr, const kern_result *kr)
{
    sim_counts th;
    return sim_counts_equal(&sr->counts, &kr->counts) &&
           sim_theory_counts(&c->plan, &c->sh, &th) == 0 && sim_counts_equal(&th, &sr->counts);
}

/* A case of loop order a with several key blocks per head and several
 * heads: fp32 (so that nothing rounds dQ's running sum but the additions
 * themselves). */
static inline void kb_order_case(sim_algo a, kc_case *c)
{
    memset(c, 0, sizeof *c);
    c->algo = a;
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
    sim_plan_make(a, &c->sh, &run, 8, 5, SIM_PLAN_USER, &c->plan);
    assert_true(c->plan.fits);
    assert_int_equal(c->plan.Tc, 8);
}

#endif /* FASIM_TEST_KERNELS_CASES_H */
