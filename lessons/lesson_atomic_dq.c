/*******************************************************************************
*
*   fasim lesson 15 - atomic-dq: the order of FA2's dQ additions
*
*   Level:     [★★★] 3/3 advanced                  Minutes: about 10
*
*   Goal:      see that floating-point addition is not associative; see why
*              FlashAttention-2's backward shares only dQ between its thread
*              blocks; measure, on the kernels' CPU path, dQ's bits under two
*              block orders with atomic adds and with a fixed order; and say
*              what a fixed order costs.
*   After it:  you can say why FA2's backward is not bit-reproducible by
*              default, which of dQ, dK, dV can change from run to run, and
*              the two ways to make it deterministic.
*
*   Options:   --N N       query and key rows (default 64, 16 to 512)
*              --order S   the seed of the second block order (default 1)
*
*   Run:       fasim lesson atomic-dq --N 64 --order 1
*
*   Numbers:   float32; the backward kernels of kernels/kern_fa2_bwd.cuh run
*              on the CPU path (kern_run_bwd), fp32 tiles, d = 16,
*              B_r = 16, B_c = 8.
*
*******************************************************************************/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kern.h"
#include "lesson.h"

#define AD_D 16
#define AD_BR 16
#define AD_BC 8

/* Elements of a and b (n each) whose bits differ, and the largest |a - b|. */
static int64_t differing(const float *a, const float *b, int64_t n, double *max_diff)
{
    int64_t k = 0;
    *max_diff = 0.0;
    for (int64_t x = 0; x < n; x++)
        if (memcmp(&a[x], &b[x], sizeof(float)) != 0) {
            k++;
            const double e = fabs((double)a[x] - (double)b[x]);
            *max_diff = e > *max_diff ? e : *max_diff;
        }
    return k;
}

/* FA2's backward on the kernels' CPU path, dQ added in `mode` with the
 * blocks in the order of `seed`. */
static void backward(lesson *L, const sim_shape *sh, const sim_plan *p, const float *Q,
                     const float *K, const float *V, const float *dO, kern_dq_mode mode,
                     uint64_t seed, kern_result *r)
{
    char err[512];
    const kern_options opt = { .threads = 2, .repeat = 1, .dq_mode = mode,
                               .block_order_seed = seed };
    if (kern_run_bwd(KERN_CPU, SIM_FA2, sh, p, Q, K, V, dO, &opt, r, err, sizeof err) != 0)
        lesson_fail(L, "the backward kernels: %s", err);
}

static void run(lesson *L)
{
    /* ---- setup: options and inputs ------------------------------------ */
    const int64_t N = lesson_opt_int(L, "N", 64, 16, 512);
    const uint64_t seed = (uint64_t)lesson_opt_int(L, "order", 1, 1, 1000000);
    sim_shape sh;
    memset(&sh, 0, sizeof sh);
    sh.N = N;
    sh.d = AD_D;
    sh.M = 1u << 20;
    sh.dtype = SIM_FP32;
    const sim_run_opts bwd = { .pass = SIM_BWD };
    sim_plan p;
    if (sim_plan_make(SIM_FA2, &sh, &bwd, AD_BR, AD_BC, SIM_PLAN_USER, &p) != 0)
        lesson_fail(L, "no plan for N = %lld", (long long)N);
    const int64_t n = N * AD_D;
    float *Q = lesson_alloc(L, (size_t)n * sizeof *Q), *K = lesson_alloc(L, (size_t)n * sizeof *K);
    float *V = lesson_alloc(L, (size_t)n * sizeof *V), *dO = lesson_alloc(L, (size_t)n * sizeof *dO);
    sim_random_qkv(1, N, N, AD_D, SIM_FP32, Q, K, V);
    sim_random_grad(1, n, SIM_FP32, dO);

    /* ---- steps --------------------------------------------------------- */
    lesson_step(L, "Addition in floating point is not associative");
    volatile float a = 1e8f, b = 1.0f, c = -1e8f;   /* volatile: computed here, in float */
    const float abc = (a + b) + c, acb = (a + c) + b;
    lesson_say(L, "Add a = 1e8, b = 1 and c = -1e8 in float32. Near 1e8 float32 holds "
               "only multiples of 8, so a + b rounds back to a.");
    lesson_ask(L, "What is (a + b) + c in float32?", abc, 0.0);
    lesson_print(L, "  (a + b) + c = %g\n  (a + c) + b = %g\n\n", abc, acb);
    lesson_say(L, "The same three numbers, added in another order, give another sum. "
               "Every rounding is exact to half a unit in the last place, but which "
               "roundings happen depends on the order.");

    lesson_step(L, "Only dQ is shared between thread blocks");
    lesson_say(L, "FlashAttention-2's backward (Algorithm 2) runs one thread block per "
               "key block j: it loads K_j and V_j once, accumulates dK_j and dV_j on "
               "chip over the query blocks i, and writes them once. Nobody else "
               "touches dK_j or dV_j. But dQ_i = sum over j of tau dS_ij K_j: every "
               "block j adds its share into the same dQ_i in global memory.");
    lesson_print(L, "  N = %lld, d = %d, B_r = %d, B_c = %d: T_r = %lld query blocks, "
                 "T_c = %lld key blocks\n\n", (long long)N, AD_D, AD_BR, AD_BC,
                 (long long)p.Tr, (long long)p.Tc);
    const lesson_question qn = { .answer = (double)p.Tc, .discrete = 1 };
    lesson_ask_q(L, &qn, "How many thread blocks add into each dQ_i?");
    lesson_say(L, "On a GPU the %lld blocks run at once and finish in no fixed order. "
               "The released kernel adds with atomicAdd by default: each addition is "
               "indivisible, but their order is whatever the hardware gives.",
               (long long)p.Tc);

    lesson_step(L, "Two block orders, measured");
    kern_result det0, det1, at0, at1;
    backward(L, &sh, &p, Q, K, V, dO, KERN_DQ_DETERMINISTIC, 0, &det0);
    backward(L, &sh, &p, Q, K, V, dO, KERN_DQ_DETERMINISTIC, seed, &det1);
    backward(L, &sh, &p, Q, K, V, dO, KERN_DQ_ATOMIC, 0, &at0);
    backward(L, &sh, &p, Q, K, V, dO, KERN_DQ_ATOMIC, seed, &at1);
    double m_at, m_det, m_k, m_v;
    const int64_t d_at = differing(at0.dQ, at1.dQ, n, &m_at);
    const int64_t d_det = differing(det0.dQ, det1.dQ, n, &m_det);
    const int64_t d_k = differing(at0.dK, at1.dK, n, &m_k) + differing(det0.dK, at1.dK, n, &m_k);
    const int64_t d_v = differing(at0.dV, at1.dV, n, &m_v) + differing(det0.dV, at1.dV, n, &m_v);
    lesson_say(L, "fasim's backward kernels ran in float32 on the CPU path twice with the blocks "
               "in the grid's order and twice in an order shuffled from seed %llu (as "
               "a GPU's blocks might finish), once each with atomic adds and once "
               "with a fixed order.", (unsigned long long)seed);
    const lesson_question qd = { .answer = (double)d_det, .discrete = 1 };
    lesson_ask_q(L, &qd, "With a fixed order, how many of dQ's %lld values differ "
                 "between the two block orders?", (long long)n);
    lesson_print(L, "  atomic:        dQ differs in %lld of %lld values (max |diff| %.3g)\n",
                 (long long)d_at, (long long)n, m_at);
    lesson_print(L, "  deterministic: dQ differs in %lld of %lld values\n", (long long)d_det,
                 (long long)n);
    lesson_print(L, "  dK and dV, every run: %lld values differ\n\n", (long long)(d_k + d_v));
    lesson_say(L, "The differences are a few units in the last place of float32: each "
               "order is as accurate as the others, none is the right one. But the "
               "bits change from run to run, so a training run cannot be replayed "
               "bit for bit. dK and dV never change: each block owns its own. (In fp16 "
               "or bf16, dQ is still summed in float32 and rounded to the dtype once at "
               "the end, which hides most of these differences.)");
    kern_result_free(&det0);
    kern_result_free(&det1);
    kern_result_free(&at0);
    kern_result_free(&at1);

    lesson_step(L, "What a fixed order costs");
    const double buf = (double)p.Tc * (double)n * 4.0;
    lesson_say(L, "Two ways give dQ the same bits in every run. (1) The blocks take "
               "turns: block j adds into dQ_i only after block j - 1 has (a counter "
               "per query block that the blocks spin on), so blocks wait. (2) Each block writes its share to a buffer of "
               "its own, T_c x N x d floats, and a last pass sums them in a fixed "
               "order: here %.0f bytes per head, T_c times dQ's fp32 size.", buf);
    lesson_say(L, "fasim models (1): in deterministic mode (fasim gpu --dq-mode "
               "deterministic, the default) each head's blocks add in ascending j "
               "whatever order they run in, and the bits are the simulator's. Its "
               "time is not modelled: the CPU path's times are no GPU's, and the GPU "
               "model has no term for the waiting.");

    /* ---- summary ------------------------------------------------------- */
    lesson_step(L, "Summary");
    lesson_say(L, "- Floating-point addition is not associative: the order of a sum "
               "changes its last bits.\n"
               "- FA2's backward gives each thread block one key block: dK_j, dV_j "
               "are its own, dQ is shared by all %lld blocks.\n"
               "- With atomic adds dQ's bits follow the blocks' order (here %lld of "
               "%lld values moved); a fixed order gives the same bits every run.\n"
               "- A fixed order costs waiting, or T_c times dQ's memory and a "
               "reduction.", (long long)p.Tc, (long long)d_at, (long long)n);
}

const lesson_def lesson_atomic_dq = {
    "atomic-dq", 15, "The order of FA2's dQ additions", "advanced", 10,
    "atomic and deterministic dQ in FA2's backward",
    "--N N       query and key rows (default 64, 16 to 512)\n"
    "--order S   the seed of the second block order (default 1)\n",
    run,
};
