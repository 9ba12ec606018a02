/*
 * test_fa_rule.c — FlashAttention's own test rule, and the bits of the
 * paper's intermediates.
 *
 * The rule (the FlashAttention repository's tests): in fp16 or bf16, the
 * error of a FlashAttention output is at most twice that of standard
 * attention computed in the same dtype, both measured against a reference
 * in higher precision. Here the reference is the float64 oracle, and the
 * same-dtype standard attention is computed in this file, as a framework
 * computes it: each product accumulated in fp32 and its result stored in
 * the dtype (S = scale Q K^T, P = softmax(S) from the stored S, O = P V;
 * backward: dV = P^T dO, dP = dO V^T, D = rowsum(dO o O), dS = P o (dP - D),
 * dQ = scale dS K, dK = scale dS^T Q, each stored in the dtype). Every loop
 * order with its default intermediates (sim_inter: as the released kernels
 * keep them) meets the rule, forward and backward, up to T_c = 256 key
 * blocks; with the paper's (O and dQ stored in the dtype at every step)
 * FA1's forward and the backwards' dQ do not, which is why the kernels keep
 * fp32 accumulators. The unfused baseline is a framework's same-dtype
 * standard attention itself (one rounding more than the reference: it
 * stores Q K^T before scaling it), so it is held near the reference rather
 * than under the rule.
 *
 * The bits: --intermediates paper is the simulator as it was before the
 * kernels' intermediates became the default, so its outputs are pinned by
 * hashes of their bits taken then; a run that ignored the option (or a
 * change of its arithmetic) changes them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_oracle.h"
#include "ref_tile.h"
#include "sim.h"
#include "test_util.h"

/* ---- standard attention in the dtype, as a framework computes it ------------ */

static float to_dt(float x, sim_dtype dt)
{
    return dt == SIM_FP16 ? ref_round_fp16(x) : dt == SIM_BF16 ? ref_round_bf16(x) : x;
}

/* C (n, m) = scale A B in fp32, stored in the dtype, where A's element
 * (r, t) is A[r ar + t at] and B's (t, c) is B[c bc + t bt]: one loop for
 * A B^T, A B and A^T B by their strides. */
static void mm(const float *A, int64_t ar, int64_t at, const float *B, int64_t bc, int64_t bt,
               int64_t n, int64_t m, int64_t k, float scale, sim_dtype dt, float *C)
{
    for (int64_t r = 0; r < n; r++)
        for (int64_t c = 0; c < m; c++) {
            float acc = 0.0f;
            for (int64_t t = 0; t < k; t++)
                acc += A[r * ar + t * at] * B[c * bc + t * bt];
            C[r * m + c] = to_dt(scale * acc, dt);
        }
}

/* A (n, k) B^T, B (m, k); A (n, k) B, B (k, m); A^T B, A (k, n), B (k, m). */
#define mm_nt(A, B, n, m, k, s, dt, C) mm((A), (k), 1, (B), (k), 1, (n), (m), (k), (s), (dt), (C))
#define mm_nn(A, B, n, m, k, s, dt, C) mm((A), (k), 1, (B), 1, (m), (n), (m), (k), (s), (dt), (C))
#define mm_tn(A, B, n, m, k, s, dt, C) mm((A), 1, (n), (B), 1, (m), (n), (m), (k), (s), (dt), (C))

typedef struct {
    int64_t N, Nk, d;
    sim_dtype dt;
    float *Q, *K, *V, *dO;          /* inputs, rounded to the dtype */
    float *O, *dQ, *dK, *dV;        /* standard attention in the dtype */
    double *O_ref, *dQ_ref, *dK_ref, *dV_ref;   /* the float64 oracle */
} problem;

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    assert_non_null(p);
    return p;
}

static void standard_in_dtype(problem *pr)
{
    const int64_t N = pr->N, Nk = pr->Nk, d = pr->d;
    const sim_dtype dt = pr->dt;
    const float scale = 1.0f / sqrtf((float)d);
    float *S = xmalloc((size_t)(N * Nk) * sizeof(float));
    float *dP = xmalloc((size_t)(N * Nk) * sizeof(float));
    float *D = xmalloc((size_t)N * sizeof(float));
    mm_nt(pr->Q, pr->K, N, Nk, d, scale, dt, S);                /* S = scale Q K^T */
    for (int64_t r = 0; r < N; r++) {                           /* P = softmax(S), in S */
        float *s = S + r * Nk, m = -INFINITY, l = 0.0f;
        for (int64_t c = 0; c < Nk; c++)
            m = s[c] > m ? s[c] : m;
        for (int64_t c = 0; c < Nk; c++)
            l += expf(s[c] - m);
        for (int64_t c = 0; c < Nk; c++)
            s[c] = to_dt(expf(s[c] - m) / l, dt);
    }
    mm_nn(S, pr->V, N, d, Nk, 1.0f, dt, pr->O);                 /* O = P V */
    mm_tn(S, pr->dO, Nk, d, N, 1.0f, dt, pr->dV);               /* dV = P^T dO */
    mm_nt(pr->dO, pr->V, N, Nk, d, 1.0f, dt, dP);               /* dP = dO V^T */
    for (int64_t r = 0; r < N; r++) {                           /* D = rowsum(dO o O) */
        float acc = 0.0f;
        for (int64_t t = 0; t < d; t++)
            acc += pr->dO[r * d + t] * pr->O[r * d + t];
        D[r] = to_dt(acc, dt);
    }
    for (int64_t r = 0; r < N; r++)                             /* dS = P o (dP - D), in dP */
        for (int64_t c = 0; c < Nk; c++)
            dP[r * Nk + c] = to_dt(S[r * Nk + c] * (dP[r * Nk + c] - D[r]), dt);
    mm_nn(dP, pr->K, N, d, Nk, scale, dt, pr->dQ);              /* dQ = scale dS K */
    mm_tn(dP, pr->Q, Nk, d, N, scale, dt, pr->dK);              /* dK = scale dS^T Q */
    free(S);
    free(dP);
    free(D);
}

static problem make(uint64_t seed, int64_t N, int64_t Nk, int64_t d, sim_dtype dt)
{
    problem pr = { .N = N, .Nk = Nk, .d = d, .dt = dt };
    const size_t nq = (size_t)(N * d), nk = (size_t)(Nk * d);
    pr.Q = xmalloc(nq * sizeof(float));
    pr.K = xmalloc(nk * sizeof(float));
    pr.V = xmalloc(nk * sizeof(float));
    pr.dO = xmalloc(nq * sizeof(float));
    pr.O = xmalloc(nq * sizeof(float));
    pr.dQ = xmalloc(nq * sizeof(float));
    pr.dK = xmalloc(nk * sizeof(float));
    pr.dV = xmalloc(nk * sizeof(float));
    pr.O_ref = xmalloc(nq * sizeof(double));
    pr.dQ_ref = xmalloc(nq * sizeof(double));
    pr.dK_ref = xmalloc(nk * sizeof(double));
    pr.dV_ref = xmalloc(nk * sizeof(double));
    sim_random_qkv(seed, N, Nk, d, dt, pr.Q, pr.K, pr.V);
    sim_random_grad(seed, (int64_t)nq, dt, pr.dO);
    const ref_mask none = { 0 };
    assert_int_equal(ref_oracle_attention_masked(pr.Q, pr.K, pr.V, N, Nk, d, &none, pr.O_ref,
                                                 NULL), 0);
    assert_int_equal(ref_oracle_attention_bwd(pr.Q, pr.K, pr.V, pr.dO, N, Nk, d, &none,
                                              pr.dQ_ref, pr.dK_ref, pr.dV_ref), 0);
    standard_in_dtype(&pr);
    return pr;
}

static void unmake(problem *pr)
{
    float *f[] = { pr->Q, pr->K, pr->V, pr->dO, pr->O, pr->dQ, pr->dK, pr->dV };
    double *g[] = { pr->O_ref, pr->dQ_ref, pr->dK_ref, pr->dV_ref };
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
        free(f[k]);
    for (size_t k = 0; k < sizeof g / sizeof g[0]; k++)
        free(g[k]);
}

static double max_err(const float *x, const double *ref, int64_t n)
{
    double e = 0.0;
    for (int64_t k = 0; k < n; k++) {
        const double a = fabs((double)x[k] - ref[k]);
        e = a > e ? a : e;
    }
    return e;
}

/* Run loop order a (splits > 1: split-KV) in pass `pass` with intermediates
 * `inter`, blocks B_r = B_c = 16. */
static void run(const problem *pr, sim_algo a, sim_pass pass, int64_t splits, sim_inter inter,
                sim_result *res)
{
    const sim_shape sh = { .N = pr->N, .Nk = pr->Nk, .d = pr->d, .M = 64u << 20,
                           .dtype = pr->dt };
    const sim_run_opts ro = { .pass = pass, .splits = splits, .intermediates = (int)inter };
    sim_plan p;
    char err[512];
    assert_int_equal(sim_plan_make(a, &sh, &ro, 16, 16, SIM_PLAN_USER, &p), 0);
    const sim_inputs in = { pr->Q, pr->K, pr->V, pr->dO };
    if (sim_run_inputs(a, &sh, &p, &in, NULL, res, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* The largest ratio, over the outputs of a's pass, of its error to standard
 * attention's in the dtype; prints each. */
static double ratio(const problem *pr, sim_algo a, sim_pass pass, int64_t splits,
                    sim_inter inter)
{
    sim_result r;
    run(pr, a, pass, splits, inter, &r);
    const int64_t nq = pr->N * pr->d, nk = pr->Nk * pr->d;
    double worst = 0.0;
    const char *names[3] = { "O", NULL, NULL };
    double mine[3], std[3];
    int n = 1;
    if (pass == SIM_FWD) {
        mine[0] = max_err(r.O, pr->O_ref, nq);
        std[0] = max_err(pr->O, pr->O_ref, nq);
    } else {
        n = 3;
        names[0] = "dQ";
        names[1] = "dK";
        names[2] = "dV";
        mine[0] = max_err(r.dQ, pr->dQ_ref, nq);
        std[0] = max_err(pr->dQ, pr->dQ_ref, nq);
        mine[1] = max_err(r.dK, pr->dK_ref, nk);
        std[1] = max_err(pr->dK, pr->dK_ref, nk);
        mine[2] = max_err(r.dV, pr->dV_ref, nk);
        std[2] = max_err(pr->dV, pr->dV_ref, nk);
    }
    for (int k = 0; k < n; k++) {
        const double q = mine[k] / std[k];
        printf("  %s%s %s %s T_c=%lld %-2s: %.3e vs standard %.3e, ratio %.2f\n",
               sim_algo_name(a), splits > 1 ? " split" : "", sim_pass_name(pass),
               sim_dtype_name(pr->dt), (long long)((pr->Nk + 15) / 16), names[k], mine[k],
               std[k], q);
        worst = q > worst ? q : worst;
    }
    sim_result_free(&r);
    return worst;
}

/* Every loop order, fp16 and bf16, forward and backward, T_c = 64 and 256
 * (N_k = 1024, 4096 with B_c = 16): error at most twice standard
 * attention's in the same dtype. */
static void test_fa_rule(void **state)
{
    (void)state;
    const sim_dtype dts[2] = { SIM_FP16, SIM_BF16 };
    const int64_t Nks[2] = { 1024, 4096 };
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 2; k++) {
            problem pr = make(71u + (uint64_t)(2 * t + k), 64, Nks[k], 32, dts[t]);
            for (int a = 0; a < sim_algo_count(); a++)
                for (int pass = SIM_FWD; pass <= SIM_BWD; pass++) {
                    const double q = ratio(&pr, (sim_algo)a, (sim_pass)pass, 1,
                                           SIM_INTER_KERNEL);
                    /* The unfused baseline is itself a same-dtype standard
                     * attention, the framework's: it stores Q K^T and then
                     * the scaled scores, one rounding more than the
                     * reference here, so it sits near the reference's error
                     * (about 2x in fp16), not under a rule for kernels
                     * measured against it. */
                    if (strcmp(sim_algo_name((sim_algo)a), "unfused") == 0)
                        assert_true(q <= 4.0);
                    else
                        assert_true(q <= 2.0);
                }
            assert_true(ratio(&pr, SIM_FA2, SIM_FWD, 8, SIM_INTER_KERNEL) <= 2.0);
            unmake(&pr);
        }
}

/* With the paper's intermediates the rule fails where the kernels keep an
 * accumulator: FA1's forward and FA2's backward (dQ), at T_c = 256. */
static void test_paper_intermediates_break_the_rule(void **state)
{
    (void)state;
    problem pr = make(9, 64, 4096, 32, SIM_BF16);
    assert_true(ratio(&pr, SIM_FA1, SIM_FWD, 1, SIM_INTER_PAPER) > 2.0);
    assert_true(ratio(&pr, SIM_FA2, SIM_BWD, 1, SIM_INTER_PAPER) > 2.0);
    unmake(&pr);
}

/* ---- the paper's intermediates keep the earlier bits ----------------------- */

/* FNV-1a over the bits of n floats. */
static uint64_t hash_bits(const float *x, int64_t n)
{
    uint64_t h = 1469598103934665603u;
    for (int64_t k = 0; k < n; k++) {
        uint32_t u;
        memcpy(&u, &x[k], sizeof u);
        for (int b = 0; b < 4; b++) {
            h ^= (u >> (8 * b)) & 0xffu;
            h *= 1099511628211u;
        }
    }
    return h;
}

/* Seeded fp16 and bf16 runs of every loop order, hashed; the hashes were
 * taken from the simulator before it kept the kernels' intermediates (the
 * same inputs, blocks and loop nests). Any change of these bits is a change
 * of what --intermediates paper computes. */
static void test_paper_intermediates_same_bits(void **state)
{
    (void)state;
    static const struct {
        sim_algo a;
        sim_pass pass;
        int64_t splits;
        sim_dtype dt;
        uint64_t O, dQ, dK, dV;
    } want[] = {
        /* (N, N_k, d) = (48, 200, 24), seed 5, B_r = B_c = 16: T_c = 13 */
        { SIM_NAIVE, SIM_FWD, 1, SIM_FP16, 0x5c211a0960a906b9u, 0, 0, 0 },
        { SIM_FA1, SIM_FWD, 1, SIM_FP16, 0x084ba43416cd748cu, 0, 0, 0 },
        { SIM_FA2, SIM_FWD, 1, SIM_FP16, 0xb301d6137b4e0b55u, 0, 0, 0 },
        { SIM_FA2, SIM_FWD, 4, SIM_FP16, 0x34ad3aea13ea4275u, 0, 0, 0 },
        { SIM_NAIVE, SIM_BWD, 1, SIM_FP16, 0, 0x99148ae52d37b7eeu, 0x68ce3e79411d3da4u,
          0x7e099bae996224a5u },
        { SIM_FA1, SIM_BWD, 1, SIM_FP16, 0, 0x896ae800cf03525cu, 0x54bb159e6ee323c1u,
          0x029641e29c05c05fu },
        { SIM_FA2, SIM_BWD, 1, SIM_FP16, 0, 0x0c010b1d8c90fb27u, 0xe0d02e673a45d0cfu,
          0x2ef16859c51e286bu },
        { SIM_NAIVE, SIM_FWD, 1, SIM_BF16, 0x8a9de9461886b02cu, 0, 0, 0 },
        { SIM_FA1, SIM_FWD, 1, SIM_BF16, 0x82b9b2e6d9bbe39fu, 0, 0, 0 },
        { SIM_FA2, SIM_FWD, 1, SIM_BF16, 0xcbacbdae2f3a51a9u, 0, 0, 0 },
        { SIM_FA2, SIM_FWD, 4, SIM_BF16, 0xae501c876e21c6d8u, 0, 0, 0 },
        { SIM_NAIVE, SIM_BWD, 1, SIM_BF16, 0, 0x141e5d615bceb7bdu, 0xbdc55afe869640fdu,
          0xbf1f62727f9d43d2u },
        { SIM_FA1, SIM_BWD, 1, SIM_BF16, 0, 0x1fc7c77088f72f43u, 0x808f195967077951u,
          0x7acab8faddfb9c61u },
        { SIM_FA2, SIM_BWD, 1, SIM_BF16, 0, 0xde7953d209eefeacu, 0x4d1c09c58aef3440u,
          0x8dd7e3d8891f3906u },
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        problem pr = make(5, 48, 200, 24, want[k].dt);
        sim_result r;
        run(&pr, want[k].a, want[k].pass, want[k].splits, SIM_INTER_PAPER, &r);
        if (want[k].pass == SIM_FWD) {
            assert_int_equal(hash_bits(r.O, pr.N * pr.d), want[k].O);
        } else {
            assert_int_equal(hash_bits(r.dQ, pr.N * pr.d), want[k].dQ);
            assert_int_equal(hash_bits(r.dK, pr.Nk * pr.d), want[k].dK);
            assert_int_equal(hash_bits(r.dV, pr.Nk * pr.d), want[k].dV);
        }
        sim_result_free(&r);
        /* and the default differs wherever it rounds P~ (all but naive) */
        if (want[k].a != SIM_NAIVE) {
            run(&pr, want[k].a, want[k].pass, want[k].splits, SIM_INTER_KERNEL, &r);
            const float *x = want[k].pass == SIM_FWD ? r.O : r.dQ;
            assert_int_not_equal(hash_bits(x, pr.N * pr.d),
                                 want[k].pass == SIM_FWD ? want[k].O : want[k].dQ);
            sim_result_free(&r);
        }
        unmake(&pr);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fa_rule),
        cmocka_unit_test(test_paper_intermediates_break_the_rule),
        cmocka_unit_test(test_paper_intermediates_same_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
