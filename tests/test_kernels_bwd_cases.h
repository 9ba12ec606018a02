/*
 * test_kernels_bwd_cases.h — what the backward kernels' tests share
 * (test_kernels_bwd.c: FA2's; test_kernels_naive_bwd.c: standard
 * attention's): a random MHA backward case, its seeded inputs (Q, K, V and
 * dO, as the report draws them), the simulator's and the kernels' runs of
 * c->algo, and the comparison of their dQ, dK, dV and counts.
 */
#ifndef FASIM_TEST_KERNELS_BWD_CASES_H
#define FASIM_TEST_KERNELS_BWD_CASES_H

#include "test_kernels_cases.h"

/* A backward case of loop order a: kc_random_case_of's problem (heads and
 * mask drawn when `heads`), made MHA, with a's backward plan `run` of the
 * same blocks (M raised to its peak where it does not fit). */
static void kb_random_case_of(uint64_t *st, sim_algo a, int heads, const sim_run_opts *run,
                              kc_case *c)
{
    kc_random_case_of(st, a, heads, c);
    c->sh.kv_heads = c->sh.heads;
    const int64_t Br = c->plan.Br, Bc = c->plan.Bc;
    sim_plan_make(a, &c->sh, run, Br, Bc, SIM_PLAN_USER, &c->plan);
    if (!c->plan.fits) {
        c->sh.M = c->plan.sram_peak;
        sim_plan_make(a, &c->sh, run, Br, Bc, SIM_PLAN_USER, &c->plan);
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
    if (sim_run_inputs(c->algo, &c->sh, &c->plan, &si, NULL, sr, err, sizeof err) != 0)
        fail_msg("sim_run: %s", err);
}

static void kb_kern(const kc_case *c, const kern_cpu_table *tab, const kb_inputs *in,
                    kern_dq_mode mode, uint64_t order_seed, kern_result *kr)
{
    char err[512], desc[256];
    const kern_options opt = { .threads = c->threads, .repeat = 1, .dq_mode = mode,
                               .block_order_seed = order_seed };
    kc_describe(c, desc, sizeof desc);
    if (kern_run_bwd_cpu_table(tab, c->algo, &c->sh, &c->plan, in->Q, in->K, in->V, in->dO,
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

/* The counts equal per tensor, and the simulator's equal to the closed form. */
static int kb_counts_ok(const kc_case *c, const sim_result *sr, const kern_result *kr)
{
    sim_counts th;
    return sim_counts_equal(&sr->counts, &kr->counts) &&
           sim_theory_counts(&c->plan, &c->sh, &th) == 0 && sim_counts_equal(&th, &sr->counts);
}

/* What every backward run refuses, case c (two heads or more) on inputs in:
 * GQA's backward, the CUDA backend, a forward plan given to the backward's
 * run and the backward's plan to the forward's. */
static void kb_assert_refusals(kc_case *c, const kb_inputs *in)
{
    kern_result kr;
    char err[512];
    const int64_t G = c->sh.kv_heads;
    c->sh.kv_heads = 1;
    assert_int_equal(kern_run_bwd(KERN_CPU, c->algo, &c->sh, &c->plan, in->Q, in->K, in->V,
                                  in->dO, NULL, &kr, err, sizeof err), -1);
    assert_non_null(strstr(err, "GQA"));
    c->sh.kv_heads = G;
    assert_int_equal(kern_run_bwd(KERN_CUDA, c->algo, &c->sh, &c->plan, in->Q, in->K, in->V,
                                  in->dO, NULL, &kr, err, sizeof err), -1);
    assert_non_null(strstr(err, "--backend cpu"));
    sim_plan fp;
    const sim_run_opts fwd = { 0 };
    sim_plan_make(c->algo, &c->sh, &fwd, c->plan.Br, c->plan.Bc, SIM_PLAN_USER, &fp);
    assert_int_equal(kern_run_bwd(KERN_CPU, c->algo, &c->sh, &fp, in->Q, in->K, in->V, in->dO,
                                  NULL, &kr, err, sizeof err), -1);
    assert_int_equal(kern_run(KERN_CPU, c->algo, &c->sh, &c->plan, in->Q, in->K, in->V, NULL,
                              &kr, err, sizeof err), -1);
}

#endif /* FASIM_TEST_KERNELS_BWD_CASES_H */
