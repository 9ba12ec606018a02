/*
 * test_numerics.c — compute-mode outputs against the float64 oracle on random
 * inputs, for all three loop orders, causal and not, block sizes that do and
 * do not divide N; the same bits on every run.
 *
 * Tolerances:
 *   fp32: 1e-5 absolute (the bound fasim promises). Outputs are convex combinations of
 *     V (|V| <= 3.47 for these inputs); float32 sums of up to N = 300 terms in
 *     order lose at most N * 2^-24 relative in the worst case and far less
 *     typically.
 *   fp16 / bf16 (unit roundoff u = 2^-11 / 2^-8; inputs are already rounded,
 *   so the oracle sees the same values):
 *     FA2 rounds only its output: |err| <= u max|V| (+ the fp32 part).
 *     FA1 also rounds O_i each time it stores it, T_c times: each rounding is
 *       at most u max|V| and later steps shrink it, so |err| <= T_c u max|V|.
 *     naive rounds S (an absolute error u |s| in a logit is a relative error
 *       u |s| in its probability), rounds P (relative u), then O (u |O|).
 *       A relative perturbation e of the weights moves a weighted mean of V by
 *       at most 2 e max|V|, so |err| <= (2 (u s_max + u) + u) max|V|.
 *   Each bound gets a factor 1.5 for second-order terms and the fp32 part.
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
#include "sim.h"
#include "test_util.h"

typedef struct {
    int64_t N, d;
    float *Q, *K, *V;
    double *O_ref, *L_ref;
    double v_max, s_max;
    double s_abs_max;      /* max over (r, c) of scale * sum_t |q_rt k_ct| */
} problem;

static problem make_problem(uint64_t seed, int64_t N, int64_t d, sim_dtype dt, int causal,
                            float logit_scale)
{
    problem pr = { N, d, NULL, NULL, NULL, NULL, NULL, 0, 0, 0 };
    size_t n = (size_t)(N * d);
    pr.Q = malloc(n * sizeof(float));
    pr.K = malloc(n * sizeof(float));
    pr.V = malloc(n * sizeof(float));
    pr.O_ref = malloc(n * sizeof(double));
    pr.L_ref = malloc((size_t)N * sizeof(double));
    assert_non_null(pr.Q);
    sim_random_inputs(seed, N, d, SIM_FP32, pr.Q, pr.K, pr.V);
    for (size_t k = 0; k < n; k++) {
        pr.Q[k] *= logit_scale;
        if (pr.Q[k] == 0.0f && pr.K[k] == 0.0f)
            fail_msg("inputs must not be zero");
    }
    sim_round_to_dtype(pr.Q, (int64_t)n, dt);
    sim_round_to_dtype(pr.K, (int64_t)n, dt);
    sim_round_to_dtype(pr.V, (int64_t)n, dt);
    assert_int_equal(ref_oracle_attention_f(pr.Q, pr.K, pr.V, N, d, causal, pr.O_ref,
                                            pr.L_ref), 0);
    for (size_t k = 0; k < n; k++)
        pr.v_max = fmax(pr.v_max, fabs(pr.V[k]));
    const double scale = 1.0 / sqrt((double)d);
    for (int64_t r = 0; r < N; r++)
        for (int64_t c = 0; c < N; c++) {
            double dot = 0, dot_abs = 0;
            for (int64_t t = 0; t < d; t++) {
                dot += (double)pr.Q[r * d + t] * pr.K[c * d + t];
                dot_abs += fabs((double)pr.Q[r * d + t] * pr.K[c * d + t]);
            }
            pr.s_max = fmax(pr.s_max, fabs(dot * scale));
            pr.s_abs_max = fmax(pr.s_abs_max, dot_abs * scale);
        }
    return pr;
}

static void free_problem(problem *pr)
{
    free(pr->Q);
    free(pr->K);
    free(pr->V);
    free(pr->O_ref);
    free(pr->L_ref);
}

static double unit_roundoff(sim_dtype dt)
{
    return dt == SIM_FP16 ? ldexp(1.0, -11) : dt == SIM_BF16 ? ldexp(1.0, -8) : 0.0;
}

static double tolerance(sim_algo a, sim_dtype dt, const sim_plan *p, const problem *pr)
{
    if (dt == SIM_FP32)
        return 1e-5;
    double u = unit_roundoff(dt), bound;
    if (a == SIM_FA2)
        bound = u * pr->v_max;
    else if (a == SIM_FA1)
        bound = (double)p->Tc * u * pr->v_max;
    else
        bound = (2.0 * (u * pr->s_max + u) + u) * pr->v_max;
    return 1.5 * bound + 1e-5;
}

static const struct {
    int64_t N, d, Br, Bc;
} CONFIGS[] = {
    { 1, 1, 1, 1 },       { 5, 3, 2, 4 },      { 37, 8, 16, 16 },  { 64, 16, 64, 64 },
    { 100, 16, 32, 16 },  { 129, 32, 48, 80 }, { 200, 64, 64, 32 }, { 257, 20, 96, 128 },
    { 300, 128, 16, 48 }, { 64, 64, 7, 9 },
};
#define NCONFIGS (int)(sizeof CONFIGS / sizeof CONFIGS[0])

static void run_against_oracle(sim_dtype dt)
{
    double worst_ratio[SIM_ALGO_MAX] = { 0 }, worst_form = 0.0;
    for (int k = 0; k < NCONFIGS; k++)
        for (int causal = 0; causal <= 1; causal++) {
            sim_shape sh = { .N = CONFIGS[k].N, .d = CONFIGS[k].d, .M = 64u << 20, .dtype = dt, .causal = causal };
            problem pr = make_problem(1000u + (uint64_t)k, sh.N, sh.d, dt, causal, 1.0f);
            for (int a = 0; a < sim_algo_count(); a++) {
                sim_plan p;
                assert_int_equal(sim_plan_make((sim_algo)a, &sh, NULL, CONFIGS[k].Br, CONFIGS[k].Bc,
                                               SIM_PLAN_USER, &p), 0);
                sim_result r;
                assert_int_equal(sim_run((sim_algo)a, &sh, &p, pr.Q, pr.K, pr.V, NULL, &r,
                                         NULL, 0), 0);
                double tol = tolerance((sim_algo)a, dt, &p, &pr);
                char what[96];
                snprintf(what, sizeof what, "%s %s N=%lld d=%lld causal=%d", sim_algo_name((sim_algo)a),
                         sim_dtype_name(dt), (long long)sh.N, (long long)sh.d, causal);
                assert_int_equal(tu_compare_f64(what, r.O, pr.O_ref, sh.N * sh.d, tol), 0);
                ref_error e = ref_compare(r.O, pr.O_ref, sh.N * sh.d);
                if (e.max_abs / tol > worst_ratio[a])
                    worst_ratio[a] = e.max_abs / tol;
                if (a == SIM_FA2 && dt == SIM_FP32)   /* the logsumexp too */
                    assert_int_equal(tu_compare_f64("L", r.L, pr.L_ref, sh.N, 1e-5), 0);
                sim_result_free(&r);
            }
            /* Standard attention's softmax over tiles, in two passes (the
             * online normaliser) and three: the same tolerance. */
            for (int f = SIM_SOFTMAX_2PASS; f <= SIM_SOFTMAX_3PASS; f++) {
                const sim_run_opts run = { .softmax = (sim_softmax)f };
                sim_plan p;
                assert_int_equal(sim_plan_make(SIM_NAIVE, &sh, &run, CONFIGS[k].Br,
                                               CONFIGS[k].Bc, SIM_PLAN_USER, &p), 0);
                assert_int_equal(p.softmax_passes, f);
                sim_result r;
                assert_int_equal(sim_run(SIM_NAIVE, &sh, &p, pr.Q, pr.K, pr.V, NULL, &r, NULL,
                                         0), 0);
                const double tol = tolerance(SIM_NAIVE, dt, &p, &pr);
                char what[96];
                snprintf(what, sizeof what, "naive %s %s N=%lld d=%lld causal=%d",
                         sim_softmax_name((sim_softmax)f), sim_dtype_name(dt), (long long)sh.N,
                         (long long)sh.d, causal);
                assert_int_equal(tu_compare_f64(what, r.O, pr.O_ref, sh.N * sh.d, tol), 0);
                ref_error e = ref_compare(r.O, pr.O_ref, sh.N * sh.d);
                worst_form = fmax(worst_form, e.max_abs / tol);
                sim_result_free(&r);
            }
            free_problem(&pr);
        }
    printf("  %s: largest error / tolerance: naive %.3f, fa1 %.3f, fa2 %.3f; naive over "
           "tiles %.3f\n", sim_dtype_name(dt), worst_ratio[0], worst_ratio[1], worst_ratio[2],
           worst_form);
}

static void test_fp32_against_oracle(void **state)
{
    (void)state;
    run_against_oracle(SIM_FP32);
}

static void test_fp16_against_oracle(void **state)
{
    (void)state;
    run_against_oracle(SIM_FP16);
}

static void test_bf16_against_oracle(void **state)
{
    (void)state;
    run_against_oracle(SIM_BF16);
}

/* Logits of magnitude in the thousands: exp(s) alone would overflow fp32 at
 * s > 88.7 (docs/ARCHITECTURE.md, errors row 7); the shifted exponentials do not, and the
 * result is as exact as float32 logits allow. A float32 dot product of d terms
 * errs by at most d 2^-24 sum_t |q_t k_t| (the classic gamma_d bound), the
 * scale adds 2^-24 |s|; a logit error e changes a probability by a factor
 * within exp(+-2e), so |O - O_ref| <= 4 e max|V| for small e. */
static void test_large_logits(void **state)
{
    (void)state;
    sim_shape sh = { .N = 96, .d = 32, .M = 64u << 20, .dtype = SIM_FP32, .causal = 0 };
    problem pr = make_problem(77, sh.N, sh.d, SIM_FP32, 0, 300.0f);
    double e = (double)(sh.d + 1) * ldexp(1.0, -24) * pr.s_abs_max;
    double tol = 4.0 * e * pr.v_max + 1e-5;
    printf("  largest |logit| = %.0f; logit error bound %.2e, output tolerance %.2e\n",
           pr.s_max, e, tol);
    assert_true(pr.s_max > 1000.0);
    for (int a = 0; a < sim_algo_count(); a++) {
        sim_plan p;
        assert_int_equal(sim_plan_make((sim_algo)a, &sh, NULL, 32, 16, SIM_PLAN_USER, &p), 0);
        sim_result r;
        assert_int_equal(sim_run((sim_algo)a, &sh, &p, pr.Q, pr.K, pr.V, NULL, &r, NULL, 0), 0);
        for (int64_t k = 0; k < sh.N * sh.d; k++)
            assert_true(isfinite(r.O[k]));
        assert_int_equal(tu_compare_f64(sim_algo_name((sim_algo)a), r.O, pr.O_ref,
                                        sh.N * sh.d, tol), 0);
        ref_error er = ref_compare(r.O, pr.O_ref, sh.N * sh.d);
        printf("  %s: max error %.2e\n", sim_algo_name((sim_algo)a), er.max_abs);
        sim_result_free(&r);
    }
    free_problem(&pr);
}

/* Same inputs, same plan: the same bits, every time; and the naive order's
 * one-pass and three-pass softmax give the same bits too. Its two passes
 * (the default when a row of S does not fit) are reproducible too: each
 * row's l is rescaled as m grows, tile after tile in the same order. */
static void test_bitwise_reproducible(void **state)
{
    (void)state;
    sim_shape sh = { .N = 150, .d = 24, .M = 64u << 20, .dtype = SIM_FP16, .causal = 1 };
    problem pr = make_problem(3, sh.N, sh.d, SIM_FP16, 1, 1.0f);
    for (int a = 0; a < sim_algo_count(); a++) {
        sim_plan p;
        assert_int_equal(sim_plan_make((sim_algo)a, &sh, NULL, 48, 32, SIM_PLAN_USER, &p), 0);
        sim_result r1, r2;
        assert_int_equal(sim_run((sim_algo)a, &sh, &p, pr.Q, pr.K, pr.V, NULL, &r1, NULL, 0), 0);
        assert_int_equal(sim_run((sim_algo)a, &sh, &p, pr.Q, pr.K, pr.V, NULL, &r2, NULL, 0), 0);
        assert_int_equal(tu_compare_bits("O", r1.O, r2.O, sh.N * sh.d), 0);
        sim_result_free(&r1);
        sim_result_free(&r2);
    }
    sim_plan one, two, three;
    assert_int_equal(sim_plan_make(SIM_NAIVE, &sh, NULL, 48, 32, SIM_PLAN_USER, &one), 0);
    sim_shape small = sh;
    small.M = (uint64_t)sh.N * 4;            /* a row of S no longer fits */
    const sim_run_opts three_pass = { .softmax = SIM_SOFTMAX_3PASS };
    assert_int_equal(sim_plan_make(SIM_NAIVE, &small, &three_pass, 48, 32, SIM_PLAN_USER,
                                   &three), 0);
    assert_int_equal(sim_plan_make(SIM_NAIVE, &small, NULL, 48, 32, SIM_PLAN_USER, &two), 0);
    assert_int_equal(one.softmax_passes, 1);
    assert_int_equal(two.softmax_passes, 2);
    assert_int_equal(three.softmax_passes, 3);
    two.fits = 1;
    sim_result t1, t2;
    assert_int_equal(sim_run(SIM_NAIVE, &small, &two, pr.Q, pr.K, pr.V, NULL, &t1, NULL, 0), 0);
    assert_int_equal(sim_run(SIM_NAIVE, &small, &two, pr.Q, pr.K, pr.V, NULL, &t2, NULL, 0), 0);
    assert_int_equal(tu_compare_bits("naive 2 passes", t1.O, t2.O, sh.N * sh.d), 0);
    sim_result_free(&t1);
    sim_result_free(&t2);
    three.fits = 1;                          /* counts differ, arithmetic must not */
    sim_result r1, r3;
    assert_int_equal(sim_run(SIM_NAIVE, &sh, &one, pr.Q, pr.K, pr.V, NULL, &r1, NULL, 0), 0);
    assert_int_equal(sim_run(SIM_NAIVE, &small, &three, pr.Q, pr.K, pr.V, NULL, &r3, NULL, 0), 0);
    assert_int_equal(tu_compare_bits("naive 1 vs 3 passes", r1.O, r3.O, sh.N * sh.d), 0);
    assert_true(r3.counts.read_elems[SIM_S] == 3 * r1.counts.read_elems[SIM_S]);
    sim_result_free(&r1);
    sim_result_free(&r3);
    free_problem(&pr);
}

/* The stored output holds values of the dtype: rounding it again is a no-op. */
static void test_output_is_of_dtype(void **state)
{
    (void)state;
    for (int dt = 0; dt < 2; dt++) {
        sim_shape sh = { .N = 40, .d = 8, .M = 1u << 20, .dtype = (sim_dtype)dt, .causal = 0 };
        problem pr = make_problem(9, sh.N, sh.d, (sim_dtype)dt, 0, 1.0f);
        sim_plan p;
        assert_int_equal(sim_plan_make(SIM_FA2, &sh, NULL, 16, 16, SIM_PLAN_USER, &p), 0);
        sim_result r;
        assert_int_equal(sim_run(SIM_FA2, &sh, &p, pr.Q, pr.K, pr.V, NULL, &r, NULL, 0), 0);
        float *again = malloc(sizeof(float) * 320);
        memcpy(again, r.O, sizeof(float) * 320);
        sim_round_to_dtype(again, 320, (sim_dtype)dt);
        assert_int_equal(tu_compare_bits("O", again, r.O, 320), 0);
        free(again);
        sim_result_free(&r);
        free_problem(&pr);
    }
}

/* Random (N, d) inputs of n rows each, not rounded (fp32). */
static float *random_rows(uint64_t seed, int64_t n, int64_t d)
{
    float *x = malloc((size_t)(n * d) * 3 * sizeof(float));
    assert_non_null(x);
    sim_random_inputs(seed, n, d, SIM_FP32, x, x + n * d, x + 2 * n * d);
    return x;
}

/* The oracle's mask, checked from its meaning: row r of a masked problem is
 * plain (unmasked) attention of that one query over the keys it sees, the
 * rows [max(0, r + off - W + 1), r + off] of K and V. */
static void test_oracle_mask_is_slicing(void **state)
{
    (void)state;
    uint64_t rng = 71;
    for (int k = 0; k < 40; k++) {
        const int64_t Nq = tu_rand_range(&rng, 1, 40), Nk = Nq + tu_rand_range(&rng, 0, 60);
        const int64_t d = tu_rand_range(&rng, 1, 12), off = Nk - Nq;
        const ref_mask mk = { 1, off,
                              tu_rand_range(&rng, 0, 1) ? tu_rand_range(&rng, 1, Nk) : 0, NULL };
        float *q = random_rows(100u + (uint64_t)k, Nq, d);
        float *kv = random_rows(200u + (uint64_t)k, Nk, d);
        const float *K = kv, *V = kv + Nk * d;
        double *O = malloc((size_t)(Nq * d) * sizeof *O), one[16], L1;
        double *L = malloc((size_t)Nq * sizeof *L);
        assert_int_equal(ref_oracle_attention_masked(q, K, V, Nq, Nk, d, &mk, O, L), 0);
        const ref_mask none = { 0, 0, 0, NULL };
        for (int64_t r = 0; r < Nq; r++) {
            int64_t hi = r + off, lo = mk.window ? hi - mk.window + 1 : 0;
            lo = lo < 0 ? 0 : lo;
            assert_int_equal(ref_oracle_attention_masked(q + r * d, K + lo * d, V + lo * d, 1,
                                                         hi - lo + 1, d, &none, one, &L1), 0);
            for (int64_t t = 0; t < d; t++)
                assert_true(fabs(one[t] - O[r * d + t]) <= 1e-12);
            assert_true(fabs(L1 - L[r]) <= 1e-12);
        }
        free(q);
        free(kv);
        free(O);
        free(L);
    }
}

/* The oracle's loops are ordered for speed (four keys' dot products side by
 * side, V walked by rows), but each double must be the one the plain loops
 * give (ref_oracle_attention_plain, the specification): masked and not, key
 * counts that are and are not multiples of four, bit for bit. */
static void test_oracle_is_the_plain_loops(void **state)
{
    (void)state;
    uint64_t rng = 907;
    for (int k = 0; k < 30; k++) {
        const int64_t Nq = tu_rand_range(&rng, 1, 37), Nk = Nq + tu_rand_range(&rng, 0, 41);
        const int64_t d = tu_rand_range(&rng, 1, 70);
        const int causal = (int)tu_rand_range(&rng, 0, 1);
        const ref_mask mk = { causal, Nk - Nq, causal && tu_rand_range(&rng, 0, 1)
                                                   ? tu_rand_range(&rng, 1, Nk) : 0, NULL };
        float *q = random_rows(300u + (uint64_t)k, Nq, d);
        float *kv = random_rows(400u + (uint64_t)k, Nk, d);
        const float *K = kv, *V = kv + Nk * d;
        const size_t on = (size_t)(Nq * d) * sizeof(double), ln = (size_t)Nq * sizeof(double);
        double *O = malloc(on), *L = malloc(ln), *Op = malloc(on), *Lp = malloc(ln);
        assert_int_equal(ref_oracle_attention_masked(q, K, V, Nq, Nk, d, &mk, O, L), 0);
        assert_int_equal(ref_oracle_attention_plain(q, K, V, Nq, Nk, d, &mk, Op, Lp), 0);
        assert_memory_equal(O, Op, on);
        assert_memory_equal(L, Lp, ln);
        free(q);
        free(kv);
        free(O);
        free(L);
        free(Op);
        free(Lp);
    }
}

/* Longer keys than queries and sliding windows: every loop order against the
 * float64 oracle in fp32 (1e-5, as above), on random shapes and blocks. */
static void test_masks_against_oracle(void **state)
{
    (void)state;
    uint64_t rng = 2024;
    int windows = 0;
    for (int k = 0; k < 24; k++) {
        sim_shape sh = { .N = tu_rand_range(&rng, 1, 120), .d = tu_rand_range(&rng, 1, 40),
                         .M = 64u << 20, .dtype = SIM_FP32, .causal = k % 4 != 0 };
        sh.Nk = sh.N + tu_rand_range(&rng, 0, 150);
        if (sh.causal && k % 2)
            sh.window = tu_rand_range(&rng, 1, sh.Nk);
        windows += sh.window > 0;
        float *q = random_rows(300u + (uint64_t)k, sh.N, sh.d);
        float *kv = random_rows(400u + (uint64_t)k, sh.Nk, sh.d);
        const float *K = kv + sh.Nk * sh.d, *V = kv + 2 * sh.Nk * sh.d;
        double *O_ref = malloc((size_t)(sh.N * sh.d) * sizeof *O_ref);
        const ref_mask mk = { sh.causal, sh.Nk - sh.N, sh.window, NULL };
        assert_int_equal(ref_oracle_attention_masked(q, K, V, sh.N, sh.Nk, sh.d, &mk, O_ref,
                                                     NULL), 0);
        for (int a = 0; a < sim_algo_count(); a++) {
            sim_plan p;
            assert_int_equal(sim_plan_make((sim_algo)a, &sh, NULL, tu_rand_range(&rng, 1, sh.N),
                                           tu_rand_range(&rng, 1, sh.Nk), SIM_PLAN_USER, &p), 0);
            sim_result r;
            char err[256];
            assert_int_equal(sim_run((sim_algo)a, &sh, &p, q, K, V, NULL, &r, err, sizeof err), 0);
            char what[128];
            snprintf(what, sizeof what, "%s N=%lld Nk=%lld d=%lld W=%lld",
                     sim_algo_name((sim_algo)a), (long long)sh.N, (long long)sh.Nk,
                     (long long)sh.d, (long long)sh.window);
            assert_int_equal(tu_compare_f64(what, r.O, O_ref, sh.N * sh.d, 1e-5), 0);
            sim_result_free(&r);
        }
        free(q);
        free(kv);
        free(O_ref);
    }
    assert_true(windows >= 8);
}

/* A window as long as the keys is causal attention, bit for bit. */
static void test_full_window_same_bits(void **state)
{
    (void)state;
    sim_shape c = { .N = 90, .d = 16, .M = 1u << 22, .dtype = SIM_FP16, .causal = 1, .Nk = 130 };
    sim_shape w = c;
    w.window = 130;
    float *q = random_rows(9, c.N, c.d), *kv = random_rows(10, c.Nk, c.d);
    for (int a = 0; a < sim_algo_count(); a++) {
        sim_plan pc, pw;
        sim_result rc, rw;
        assert_int_equal(sim_plan_make((sim_algo)a, &c, NULL, 32, 16, SIM_PLAN_USER, &pc), 0);
        assert_int_equal(sim_plan_make((sim_algo)a, &w, NULL, 32, 16, SIM_PLAN_USER, &pw), 0);
        assert_int_equal(sim_run((sim_algo)a, &c, &pc, q, kv + c.Nk * c.d, kv + 2 * c.Nk * c.d,
                                 NULL, &rc, NULL, 0), 0);
        assert_int_equal(sim_run((sim_algo)a, &w, &pw, q, kv + c.Nk * c.d, kv + 2 * c.Nk * c.d,
                                 NULL, &rw, NULL, 0), 0);
        assert_int_equal(tu_compare_bits("window = N_k vs causal", rc.O, rw.O, c.N * c.d), 0);
        sim_result_free(&rc);
        sim_result_free(&rw);
    }
    free(q);
    free(kv);
}

/* Batches and heads, GQA among them: every head's output against the oracle
 * on its own query head and the key/value head h / (H / G) it reads, in
 * fp32 (1e-5); and FA2 with a group's query heads in one block gives the
 * same bits as one head per block, its arithmetic being row by row. */
static void test_heads_against_oracle(void **state)
{
    (void)state;
    uint64_t rng = 555;
    for (int k = 0; k < 12; k++) {
        sim_shape sh = { .N = tu_rand_range(&rng, 1, 60), .d = tu_rand_range(&rng, 1, 16),
                         .M = 64u << 20, .dtype = SIM_FP32, .causal = k % 2 };
        sh.Nk = sh.N + tu_rand_range(&rng, 0, 30);
        sh.batch = tu_rand_range(&rng, 1, 3);
        sh.heads = tu_rand_range(&rng, 1, 6);
        do
            sh.kv_heads = tu_rand_range(&rng, 1, sh.heads);
        while (sh.heads % sh.kv_heads != 0);
        const int64_t BH = sh.batch * sh.heads, BG = sh.batch * sh.kv_heads;
        const int64_t per = sh.heads / sh.kv_heads, qn = sh.N * sh.d, kn = sh.Nk * sh.d;
        float *q = random_rows(600u + (uint64_t)k, BH * sh.N, sh.d);
        float *kv = random_rows(700u + (uint64_t)k, BG * sh.Nk, sh.d);
        const float *K = kv + BG * kn, *V = kv + 2 * BG * kn;
        double *O_ref = malloc((size_t)(BH * qn) * sizeof *O_ref);
        const ref_mask mk = { sh.causal, sh.Nk - sh.N, 0, NULL };
        for (int64_t b = 0; b < sh.batch; b++)
            for (int64_t h = 0; h < sh.heads; h++) {
                const int64_t qh = b * sh.heads + h, g = b * sh.kv_heads + h / per;
                assert_int_equal(ref_oracle_attention_masked(q + qh * qn, K + g * kn, V + g * kn,
                                                             sh.N, sh.Nk, sh.d, &mk,
                                                             O_ref + qh * qn, NULL), 0);
            }
        const int64_t Br = tu_rand_range(&rng, 1, sh.N), Bc = tu_rand_range(&rng, 1, sh.Nk);
        float *fa2 = NULL;
        for (int a = 0; a <= sim_algo_count(); a++) {   /* the last: FA2 grouped */
            const sim_run_opts run = { .group = a == sim_algo_count() };
            const sim_algo al = run.group ? SIM_FA2 : (sim_algo)a;
            sim_plan p;
            sim_result r;
            assert_int_equal(sim_plan_make(al, &sh, &run, Br, Bc, SIM_PLAN_USER, &p), 0);
            assert_int_equal(sim_run(al, &sh, &p, q, K, V, NULL, &r, NULL, 0), 0);
            char what[96];
            snprintf(what, sizeof what, "%s%s B=%lld H=%lld G=%lld", sim_algo_name(al),
                     run.group ? " grouped" : "", (long long)sh.batch, (long long)sh.heads,
                     (long long)sh.kv_heads);
            assert_int_equal(tu_compare_f64(what, r.O, O_ref, BH * qn, 1e-5), 0);
            if (al == SIM_FA2 && !run.group) {
                fa2 = r.O;
                r.O = NULL;
            } else if (run.group) {
                assert_int_equal(tu_compare_bits(what, r.O, fa2, BH * qn), 0);
            }
            sim_result_free(&r);
        }
        free(fa2);
        free(q);
        free(kv);
        free(O_ref);
    }
}

/* GQA with G = H is plain multi-head attention: --kv-heads H gives the bits
 * and the counts of no --kv-heads, grouped or not, and each head's output is
 * the bits of a one-head run on that head's Q, K, V alone. */
static void test_gqa_g_equals_h_is_plain(void **state)
{
    (void)state;
    uint64_t rng = 2024;
    for (int k = 0; k < 8; k++) {
        sim_shape plain = { .N = tu_rand_range(&rng, 1, 50), .d = tu_rand_range(&rng, 1, 16),
                            .M = 64u << 20, .dtype = (sim_dtype)(k % 3), .causal = k % 2 };
        plain.batch = tu_rand_range(&rng, 1, 2);
        plain.heads = tu_rand_range(&rng, 2, 4);
        const int64_t BH = plain.batch * plain.heads, n1 = plain.N * plain.d;
        float *q = random_rows(3000u + (uint64_t)k, BH * plain.N, plain.d);
        float *kv = random_rows(3100u + (uint64_t)k, 2 * BH * plain.N, plain.d);
        const float *K = kv, *V = kv + BH * n1;
        const int64_t Br = tu_rand_range(&rng, 1, plain.N), Bc = tu_rand_range(&rng, 1, plain.N);
        for (int a = 0; a < sim_algo_count(); a++) {
            sim_plan p;
            sim_result want, got;
            assert_int_equal(sim_plan_make((sim_algo)a, &plain, NULL, Br, Bc, SIM_PLAN_USER, &p),
                             0);
            assert_int_equal(sim_run((sim_algo)a, &plain, &p, q, K, V, NULL, &want, NULL, 0), 0);
            for (int grouped = 0; grouped <= (a == SIM_FA2); grouped++) {
                sim_shape gqa = plain;
                gqa.kv_heads = plain.heads;
                const sim_run_opts run = { .group = grouped };
                assert_int_equal(sim_plan_make((sim_algo)a, &gqa, &run, Br, Bc, SIM_PLAN_USER, &p),
                                 0);
                assert_int_equal(sim_run((sim_algo)a, &gqa, &p, q, K, V, NULL, &got, NULL, 0),
                                 0);
                assert_int_equal(tu_compare_bits("G = H", got.O, want.O, BH * n1), 0);
                assert_true(sim_counts_equal(&got.counts, &want.counts));
                sim_result_free(&got);
            }
            for (int64_t h = 0; h < BH; h++) {             /* one head at a time */
                sim_shape one = plain;
                one.batch = one.heads = 0;
                sim_result r1;
                assert_int_equal(sim_plan_make((sim_algo)a, &one, NULL, Br, Bc, SIM_PLAN_USER,
                                               &p), 0);
                assert_int_equal(sim_run((sim_algo)a, &one, &p, q + h * n1, K + h * n1,
                                         V + h * n1, NULL, &r1, NULL, 0), 0);
                assert_int_equal(tu_compare_bits("one head", r1.O, want.O + h * n1, n1), 0);
                sim_result_free(&r1);
            }
            sim_result_free(&want);
        }
        free(q);
        free(kv);
    }
}

/* Relative error of a gradient against the oracle's, normwise (max-norm),
 * as the report prints it; the bound for fp32 is 1e-4. */
#define GRAD_TOL 1e-4

static int grad_ok(const char *what, const float *got, const double *want, int64_t n,
                   double *worst)
{
    ref_error e = ref_compare(got, want, n);
    if (e.max_rel > *worst)
        *worst = e.max_rel;
    if (e.max_rel <= GRAD_TOL)
        return 1;
    fprintf(stderr, "%s: error %.3g of the gradient's max-norm at %lld\n", what, e.max_rel,
            (long long)e.worst_index);
    return 0;
}

/* How every backward problem runs. */
static const sim_run_opts BWD = { .pass = SIM_BWD };

/* One backward problem: inputs, the oracle's gradients, each loop order's. */
typedef struct {
    sim_shape sh;                  /* run as BWD */
    int64_t nq, nk;            /* floats of Q-shaped and K-shaped tensors */
    float *q, *kv, *dO;        /* kv holds K then V */
    double *dQ, *dK, *dV;      /* the oracle's */
} bwd_problem;

static void bwd_make(bwd_problem *b, uint64_t seed)
{
    const sim_shape *sh = &b->sh;
    const int64_t BH = (sh->batch ? sh->batch : 1) * (sh->heads ? sh->heads : 1);
    const int64_t Nk = sh->Nk ? sh->Nk : sh->N;
    b->nq = BH * sh->N * sh->d;
    b->nk = BH * Nk * sh->d;
    b->q = random_rows(seed, BH * sh->N, sh->d);
    b->kv = random_rows(seed + 1, 2 * BH * Nk, sh->d);
    b->dO = random_rows(seed + 2, BH * sh->N, sh->d);
    b->dQ = malloc((size_t)b->nq * sizeof(double));
    b->dK = malloc((size_t)b->nk * sizeof(double));
    b->dV = malloc((size_t)b->nk * sizeof(double));
    assert_non_null(b->dV);
    const ref_mask mk = { sh->causal, Nk - sh->N, sh->window, NULL };
    const int64_t qn = sh->N * sh->d, kn = Nk * sh->d;
    for (int64_t h = 0; h < BH; h++)
        assert_int_equal(ref_oracle_attention_bwd(b->q + h * qn, b->kv + h * kn,
                                                  b->kv + b->nk + h * kn, b->dO + h * qn,
                                                  sh->N, Nk, sh->d, &mk, b->dQ + h * qn,
                                                  b->dK + h * kn, b->dV + h * kn), 0);
}

static void bwd_free(bwd_problem *b)
{
    free(b->q);
    free(b->kv);
    free(b->dO);
    free(b->dQ);
    free(b->dK);
    free(b->dV);
}

static void bwd_run(const bwd_problem *b, sim_algo a, int64_t Br, int64_t Bc, sim_result *r)
{
    sim_plan p;
    char err[256];
    const sim_inputs in = { b->q, b->kv, b->kv + b->nk, b->dO };
    assert_int_equal(sim_plan_make(a, &b->sh, &BWD, Br, Bc, SIM_PLAN_USER, &p), 0);
    if (sim_run_inputs(a, &b->sh, &p, &in, NULL, r, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* The backward passes in fp32 against the float64 oracle's gradients (which
 * test_grad checks against finite differences): random shapes, masks,
 * longer keys, batches, blocks that do not divide N. */
static void test_backward_against_oracle(void **state)
{
    (void)state;
    uint64_t rng = 4711;
    double worst[SIM_ALGO_MAX] = { 0 };
    for (int k = 0; k < 24; k++) {
        bwd_problem b = { .sh = { .N = tu_rand_range(&rng, 1, 90),
                                  .d = tu_rand_range(&rng, 1, 32), .M = 64u << 20,
                                  .dtype = SIM_FP32, .causal = k % 3 != 0 } };
        b.sh.Nk = b.sh.N + (k % 2 ? tu_rand_range(&rng, 0, 60) : 0);
        if (b.sh.causal && k % 4 == 1)
            b.sh.window = tu_rand_range(&rng, 1, b.sh.Nk);
        if (k % 5 == 0) {
            b.sh.batch = 2;
            b.sh.heads = 2;
        }
        bwd_make(&b, 800u + 3u * (uint64_t)k);
        const int64_t Br = tu_rand_range(&rng, 1, b.sh.N), Bc = tu_rand_range(&rng, 1, b.sh.Nk);
        for (int a = 0; a < sim_algo_count(); a++) {
            sim_result r;
            bwd_run(&b, (sim_algo)a, Br, Bc, &r);
            char what[128];
            snprintf(what, sizeof what, "%s bwd N=%lld Nk=%lld d=%lld causal=%d W=%lld",
                     sim_algo_name((sim_algo)a), (long long)b.sh.N, (long long)b.sh.Nk,
                     (long long)b.sh.d, b.sh.causal, (long long)b.sh.window);
            assert_true(grad_ok(what, r.dQ, b.dQ, b.nq, &worst[a]));
            assert_true(grad_ok(what, r.dK, b.dK, b.nk, &worst[a]));
            assert_true(grad_ok(what, r.dV, b.dV, b.nk, &worst[a]));
            /* the same loop nest counting only: the same counts */
            sim_plan p;
            sim_result rn;
            assert_int_equal(sim_plan_make((sim_algo)a, &b.sh, &BWD, Br, Bc, SIM_PLAN_USER, &p), 0);
            assert_int_equal(sim_run_inputs((sim_algo)a, &b.sh, &p, NULL, NULL, &rn, NULL, 0), 0);
            assert_true(sim_counts_equal(&r.counts, &rn.counts));
            assert_int_equal(r.steps, rn.steps);
            sim_result_free(&rn);
            sim_result_free(&r);
        }
        bwd_free(&b);
    }
    printf("  fp32 backward, worst error of the gradient's max-norm: naive %.2e, fa1 %.2e, "
           "fa2 %.2e (bound %.0e)\n", worst[0], worst[1], worst[2], GRAD_TOL);
}

/* GQA's backward (G < H): the float64 oracle per query head, its dK, dV
 * summed over the head's group here in float64; K, V, dK, dV hold B G
 * heads. dK_h is the first query head's alone, for the check that must
 * fail. */
typedef struct {
    sim_shape sh;
    int64_t nq, nk;
    float *q, *k, *v, *dO;
    double *dQ, *dK, *dV, *dK_h;
} gqa_problem;

static void gqa_make(gqa_problem *b, uint64_t seed)
{
    const sim_shape *sh = &b->sh;
    const int64_t B = sim_shape_B(sh), H = sim_shape_H(sh), G = sim_shape_G(sh);
    const int64_t Nk = sim_shape_Nk(sh), qn = sh->N * sh->d, kn = Nk * sh->d;
    b->nq = B * H * qn;
    b->nk = B * G * kn;
    b->q = random_rows(seed, B * H * sh->N, sh->d);
    b->k = random_rows(seed + 1, B * G * Nk, sh->d);
    b->v = random_rows(seed + 2, B * G * Nk, sh->d);
    b->dO = random_rows(seed + 3, B * H * sh->N, sh->d);
    b->dQ = malloc((size_t)b->nq * sizeof(double));
    b->dK = calloc((size_t)b->nk, sizeof(double));
    b->dV = calloc((size_t)b->nk, sizeof(double));
    b->dK_h = calloc((size_t)b->nk, sizeof(double));
    double *dk = malloc((size_t)kn * sizeof *dk), *dv = malloc((size_t)kn * sizeof *dv);
    assert_true(b->dQ && b->dK && b->dV && b->dK_h && dk && dv);
    const ref_mask mk = { sh->causal, Nk - sh->N, sh->window, NULL };
    for (int64_t qh = 0; qh < B * H; qh++) {
        const int64_t g = (qh / H) * G + (qh % H) / (H / G);
        assert_int_equal(ref_oracle_attention_bwd(b->q + qh * qn, b->k + g * kn, b->v + g * kn,
                                                  b->dO + qh * qn, sh->N, Nk, sh->d, &mk,
                                                  b->dQ + qh * qn, dk, dv), 0);
        for (int64_t e = 0; e < kn; e++) {
            b->dK[g * kn + e] += dk[e];
            b->dV[g * kn + e] += dv[e];
            if ((qh % H) % (H / G) == 0)
                b->dK_h[g * kn + e] = dk[e];
        }
    }
    free(dk);
    free(dv);
}

static void gqa_free(gqa_problem *b)
{
    free(b->q);
    free(b->k);
    free(b->v);
    free(b->dO);
    free(b->dQ);
    free(b->dK);
    free(b->dV);
    free(b->dK_h);
}

/* Counting only: the counts of algo a on sh. */
static sim_counts counts_of(sim_algo a, const sim_shape *sh, int64_t Br, int64_t Bc)
{
    sim_plan p;
    sim_result r;
    assert_int_equal(sim_plan_make(a, sh, &BWD, Br, Bc, SIM_PLAN_USER, &p), 0);
    assert_int_equal(sim_run_inputs(a, sh, &p, NULL, NULL, &r, NULL, 0), 0);
    sim_counts c = r.counts;
    sim_counts th;
    assert_int_equal(sim_theory_counts(&p, sh, &th), 0);
    assert_true(sim_counts_equal(&c, &th));           /* the library's closed form too */
    sim_result_free(&r);
    return c;
}

/* GQA's backward, every loop order, against the float64 oracle with the
 * group sum done here, and its counts against the closed form of
 * flash-attn's mha_bwd: each query head's dK, dV written to dK_exp, dV_exp
 * as MHA writes dK, dV (K, V read per query head, as MHA reads them: every
 * other tensor's count is MHA's on the same H), then each key/value head's
 * H/G tiles of dK_exp read per key block of B_c rows and dK written once.
 * G = H is MHA exactly: no dK_exp, the counts of no --kv-heads. */
static void test_gqa_backward(void **state)
{
    (void)state;
    uint64_t rng = 2718;
    double worst = 0.0;
    for (int k = 0; k < 32; k++) {
        gqa_problem b = { .sh = { .N = tu_rand_range(&rng, 1, 40),
                                  .d = tu_rand_range(&rng, 1, 16), .M = 64u << 20,
                                  .dtype = SIM_FP32, .causal = k % 2 } };
        b.sh.heads = tu_rand_range(&rng, 2, 6);
        do
            b.sh.kv_heads = tu_rand_range(&rng, 1, b.sh.heads);
        while (b.sh.heads % b.sh.kv_heads != 0);
        if (k % 8 == 0)
            b.sh.kv_heads = b.sh.heads;                 /* G = H: plain MHA */
        b.sh.batch = tu_rand_range(&rng, 1, 2);
        b.sh.Nk = b.sh.N + (k % 3 ? tu_rand_range(&rng, 0, 30) : 0);
        if (b.sh.causal && k % 4 == 1)
            b.sh.window = tu_rand_range(&rng, 1, b.sh.Nk);
        const int64_t B = b.sh.batch, H = b.sh.heads, G = b.sh.kv_heads;
        const int64_t Nk = b.sh.Nk, d = b.sh.d;
        gqa_make(&b, 900u + 5u * (uint64_t)k);
        const int64_t Br = tu_rand_range(&rng, 1, b.sh.N), Bc = tu_rand_range(&rng, 1, Nk);
        const uint64_t Tc = (uint64_t)((Nk + Bc - 1) / Bc);
        sim_shape mha = b.sh;
        mha.kv_heads = 0;
        for (int a = 0; a < sim_algo_count(); a++) {
            char what[160];
            snprintf(what, sizeof what, "%s bwd B=%lld H=%lld G=%lld N=%lld Nk=%lld d=%lld "
                     "causal=%d W=%lld", sim_algo_name((sim_algo)a), (long long)B,
                     (long long)H, (long long)G, (long long)b.sh.N, (long long)Nk,
                     (long long)d, b.sh.causal, (long long)b.sh.window);
            sim_plan p;
            sim_result r;
            char err[256];
            const sim_inputs in = { b.q, b.k, b.v, b.dO };
            assert_int_equal(sim_plan_make((sim_algo)a, &b.sh, &BWD, Br, Bc, SIM_PLAN_USER,
                                           &p), 0);
            if (sim_run_inputs((sim_algo)a, &b.sh, &p, &in, NULL, &r, err, sizeof err) != 0)
                fail_msg("%s: %s", what, err);
            assert_true(grad_ok(what, r.dQ, b.dQ, b.nq, &worst));
            assert_true(grad_ok(what, r.dK, b.dK, b.nk, &worst));
            assert_true(grad_ok(what, r.dV, b.dV, b.nk, &worst));
            /* counts: computed in compute mode, counting only, and closed form */
            const sim_counts c = counts_of((sim_algo)a, &b.sh, Br, Bc);
            assert_true(sim_counts_equal(&r.counts, &c));
            sim_result_free(&r);
            sim_counts want = counts_of((sim_algo)a, &mha, Br, Bc);
            if (G < H) {
                const sim_tensor ex[2] = { SIM_dKexp, SIM_dVexp }, to[2] = { SIM_dK, SIM_dV };
                for (int x = 0; x < 2; x++) {
                    want.write_elems[ex[x]] = want.write_elems[to[x]];
                    want.write_ops[ex[x]] = want.write_ops[to[x]];
                    want.read_elems[ex[x]] = (uint64_t)(B * H * Nk * d);
                    want.read_ops[ex[x]] = (uint64_t)(B * H) * Tc;
                    want.write_elems[to[x]] = (uint64_t)(B * G * Nk * d);
                    want.write_ops[to[x]] = (uint64_t)(B * G) * Tc;
                }
            }
            if (!sim_counts_equal(&c, &want))
                fail_msg("%s: counts differ from the closed form", what);
            assert_int_equal(c.read_elems[SIM_dKexp] + c.write_elems[SIM_dKexp] == 0, G == H);
        }
        /* The check fails without the group sum: dK of one query head. */
        if (G < H) {
            double w = 0.0;
            sim_result r;
            const sim_inputs in = { b.q, b.k, b.v, b.dO };
            sim_plan p;
            assert_int_equal(sim_plan_make(SIM_FA2, &b.sh, &BWD, Br, Bc, SIM_PLAN_USER, &p), 0);
            assert_int_equal(sim_run_inputs(SIM_FA2, &b.sh, &p, &in, NULL, &r, NULL, 0), 0);
            assert_false(grad_ok("fa2 dK against one head's, no group sum (must fail)", r.dK,
                                 b.dK_h, b.nk, &w));
            sim_result_free(&r);
        }
        gqa_free(&b);
    }
    printf("  GQA backward, worst error of the gradient's max-norm: %.2e (bound %.0e)\n",
           worst, GRAD_TOL);
}

/* The checker proves itself: a dQ missing its 1/sqrt(d) (a real slip: the
 * scale is easy to forget in the backward, Algorithm 2 omits it) and a dS
 * without the D term are both rejected by the same comparison. */
static void test_backward_checker_rejects_wrong(void **state)
{
    (void)state;
    bwd_problem b = { .sh = { .N = 48, .d = 16, .M = 64u << 20, .dtype = SIM_FP32,
                              .causal = 1 } };
    bwd_make(&b, 77);
    sim_result r;
    bwd_run(&b, SIM_FA2, 16, 16, &r);
    double w = 0.0;
    assert_true(grad_ok("fa2 dQ", r.dQ, b.dQ, b.nq, &w));
    for (int64_t i = 0; i < b.nq; i++)
        r.dQ[i] *= 4.0f;                             /* sqrt(16): the scale left out */
    assert_false(grad_ok("dQ without the scale (must fail)", r.dQ, b.dQ, b.nq, &w));
    /* dK from dS = P o dP with the D term dropped, as a kernel that forgot
     * the softmax Jacobian's second term would give: recomputed here in
     * double (causal, N_k = N, d = 16). */
    double *wrong = calloc((size_t)b.nk, sizeof *wrong);
    const double scale = 0.25;
    for (int64_t rr = 0; rr < b.sh.N; rr++) {
        double s[48], m = -INFINITY, l = 0.0;
        for (int64_t c = 0; c <= rr; c++) {
            double dot = 0.0;
            for (int64_t t = 0; t < 16; t++)
                dot += (double)b.q[rr * 16 + t] * b.kv[c * 16 + t];
            s[c] = scale * dot;
            m = fmax(m, s[c]);
        }
        for (int64_t c = 0; c <= rr; c++)
            l += (s[c] = exp(s[c] - m));
        for (int64_t c = 0; c <= rr; c++) {
            double dp = 0.0, P = s[c] / l;
            for (int64_t t = 0; t < 16; t++)
                dp += (double)b.dO[rr * 16 + t] * b.kv[b.nk + c * 16 + t];
            for (int64_t t = 0; t < 16; t++)
                wrong[c * 16 + t] += scale * P * dp * b.q[rr * 16 + t];
        }
    }
    float *wf = malloc((size_t)b.nk * sizeof *wf);
    for (int64_t i = 0; i < b.nk; i++)
        wf[i] = (float)wrong[i];
    assert_false(grad_ok("dK without D (must fail)", wf, b.dK, b.nk, &w));
    free(wf);
    free(wrong);
    sim_result_free(&r);
    bwd_free(&b);
}

/* Standard attention's line 3 in two passes over tiles (two rows of P and dP
 * do not fit) gives the bits of one pass over whole rows: the row sums run
 * over the row in the same order, each tile continuing the last. */
static void test_backward_line3_passes_same_bits(void **state)
{
    (void)state;
    bwd_problem b = { .sh = { .N = 70, .Nk = 110, .d = 3, .M = 64u << 20, .dtype = SIM_FP16,
                              .causal = 1 } };
    bwd_make(&b, 5150);
    sim_result one, two;
    sim_plan p;
    bwd_run(&b, SIM_NAIVE, 4, 4, &one);
    b.sh.M = 110 * 8 + 3;                     /* under two rows: 8 N_k + 4 */
    assert_int_equal(sim_plan_make(SIM_NAIVE, &b.sh, &BWD, 4, 4, SIM_PLAN_USER, &p), 0);
    assert_int_equal(p.softmax_passes, 2);
    assert_true(p.fits);
    bwd_run(&b, SIM_NAIVE, 4, 4, &two);
    assert_int_equal(tu_compare_bits("dQ", one.dQ, two.dQ, b.nq), 0);
    assert_int_equal(tu_compare_bits("dK", one.dK, two.dK, b.nk), 0);
    assert_int_equal(tu_compare_bits("dV", one.dV, two.dV, b.nk), 0);
    assert_false(sim_counts_equal(&one.counts, &two.counts));   /* P, dP read twice */
    sim_result_free(&one);
    sim_result_free(&two);
    bwd_free(&b);
}

/* Split-KV decoding against unsplit FA2 and the oracle, fp32: the merge
 * lemma regroups the sums, so the outputs agree to rounding (1e-5 here, as
 * each against the oracle), and S = 1 is FA2 bit for bit. */
static void test_splits_against_unsplit(void **state)
{
    (void)state;
    uint64_t rng = 6060;
    double worst = 0.0;
    for (int k = 0; k < 16; k++) {
        sim_shape sh = { .N = tu_rand_range(&rng, 1, 6), .d = tu_rand_range(&rng, 1, 48),
                         .M = 64u << 20, .dtype = SIM_FP32, .causal = k % 2 };
        sh.Nk = sh.N + tu_rand_range(&rng, 16, 700);
        if (k % 4 == 3)
            sh.window = tu_rand_range(&rng, 1, sh.Nk);
        float *q = random_rows(900u + (uint64_t)k, sh.N, sh.d);
        float *kv = random_rows(950u + (uint64_t)k, 2 * sh.Nk, sh.d);
        const float *K = kv, *V = kv + sh.Nk * sh.d;
        double *O_ref = malloc((size_t)(sh.N * sh.d) * sizeof *O_ref);
        const ref_mask mk = { sh.causal, sh.Nk - sh.N, sh.window, NULL };
        assert_int_equal(ref_oracle_attention_masked(q, K, V, sh.N, sh.Nk, sh.d, &mk, O_ref,
                                                     NULL), 0);
        const int64_t Bc = tu_rand_range(&rng, 1, 64), Tc = (sh.Nk + Bc - 1) / Bc;
        sim_plan p;
        sim_result plain, split;
        assert_int_equal(sim_plan_make(SIM_FA2, &sh, NULL, 4, Bc, SIM_PLAN_USER, &p), 0);
        assert_int_equal(sim_run(SIM_FA2, &sh, &p, q, K, V, NULL, &plain, NULL, 0), 0);
        sim_run_opts run = { .splits = 1 };
        sim_result one;
        assert_int_equal(sim_plan_make(SIM_FA2, &sh, &run, 4, Bc, SIM_PLAN_USER, &p), 0);
        assert_int_equal(sim_run(SIM_FA2, &sh, &p, q, K, V, NULL, &one, NULL, 0), 0);
        assert_int_equal(tu_compare_bits("S = 1", one.O, plain.O, sh.N * sh.d), 0);
        sim_result_free(&one);
        run.splits = tu_rand_range(&rng, 2, Tc < 32 ? Tc : 32);
        assert_int_equal(sim_plan_make(SIM_FA2, &sh, &run, 4, Bc, SIM_PLAN_USER, &p), 0);
        char err[256];
        if (sim_run(SIM_FA2, &sh, &p, q, K, V, NULL, &split, err, sizeof err) != 0)
            fail_msg("%s", err);
        double *plain_d = malloc((size_t)(sh.N * sh.d) * sizeof *plain_d);
        for (int64_t x = 0; x < sh.N * sh.d; x++)
            plain_d[x] = plain.O[x];
        assert_int_equal(tu_compare_f64("split vs unsplit", split.O, plain_d, sh.N * sh.d, 1e-5), 0);
        assert_int_equal(tu_compare_f64("split vs oracle", split.O, O_ref, sh.N * sh.d, 1e-5), 0);
        for (int64_t x = 0; x < sh.N; x++)        /* the logsumexp too */
            assert_true(fabsf(split.L[x] - plain.L[x]) <= 1e-5f);
        ref_error e = ref_compare(split.O, plain_d, sh.N * sh.d);
        worst = fmax(worst, e.max_abs);
        sim_result_free(&plain);
        sim_result_free(&split);
        free(plain_d);
        free(q);
        free(kv);
        free(O_ref);
    }
    printf("  split-KV vs unsplit FA2, fp32: largest |difference| %.2e\n", worst);
}

/* Paged KV moves the same values from other addresses: every loop order,
 * both passes, split-KV and grouped heads give the bits of contiguous KV,
 * for two placements of the pages (two seeds), while the pool really is
 * shuffled (an address slip would mix keys of other pages or heads and
 * change the output). */
static void test_paged_same_bits(void **state)
{
    (void)state;
    uint64_t rng = 8080;
    int runs = 0;
    for (int k = 0; k < 18; k++) {
        sim_shape sh = { .N = tu_rand_range(&rng, 1, 40), .d = tu_rand_range(&rng, 1, 20),
                         .M = 64u << 20, .dtype = (sim_dtype)(k % 3), .causal = k % 2 };
        sh.Nk = sh.N + tu_rand_range(&rng, 0, 90);
        if (sh.causal && k % 4 == 1)
            sh.window = tu_rand_range(&rng, 1, sh.Nk);
        sh.batch = tu_rand_range(&rng, 1, 2);
        sh.heads = 2;
        const int64_t BH = sh.batch * sh.heads, nq = BH * sh.N * sh.d, nk = BH * sh.Nk * sh.d;
        float *q = random_rows(1200u + (uint64_t)k, BH * sh.N, sh.d);
        float *kv = random_rows(1300u + (uint64_t)k, 2 * BH * sh.Nk, sh.d);
        float *dO = random_rows(1400u + (uint64_t)k, BH * sh.N, sh.d);
        const int64_t Br = tu_rand_range(&rng, 1, sh.N), Bc = tu_rand_range(&rng, 1, sh.Nk);
        const int64_t Tc = (sh.Nk + Bc - 1) / Bc;
        for (int v = 0; v < 2 * sim_algo_count() + 2; v++) {
            sim_shape flat = sh;
            sim_run_opts run = { 0 };
            sim_algo a = (sim_algo)(v % sim_algo_count());
            if (v >= sim_algo_count() && v < 2 * sim_algo_count())
                run.pass = SIM_BWD;
            else if (v == 2 * sim_algo_count()) {         /* FA2 split-KV */
                a = SIM_FA2;
                run.splits = Tc > 1 ? tu_rand_range(&rng, 2, Tc < 6 ? Tc : 6) : 1;
            } else if (v == 2 * sim_algo_count() + 1) {  /* FA2 grouped, MQA */
                a = SIM_FA2;
                flat.kv_heads = 1;
                run.group = 1;
            }
            sim_algo unfused;
            assert_int_equal(sim_algo_parse("unfused", &unfused), 0);
            if (a == unfused) {      /* refused: unfused reads K and V as whole tensors */
                sim_run_opts paged = run;
                paged.page = 1;
                sim_plan refused;
                assert_int_equal(sim_plan_make(a, &flat, &paged, Br, Bc, SIM_PLAN_USER,
                                               &refused), -1);
                continue;
            }
            const int64_t nkv = flat.kv_heads ? sh.batch * sh.Nk * sh.d : nk;
            const sim_inputs in = { q, kv, kv + nkv, dO };
            sim_plan p;
            sim_result want, got[2];
            char err[256];
            assert_int_equal(sim_plan_make(a, &flat, &run, Br, Bc, SIM_PLAN_USER, &p), 0);
            if (sim_run_inputs(a, &flat, &p, &in, NULL, &want, err, sizeof err) != 0)
                fail_msg("%s", err);
            for (int seed = 0; seed < 2; seed++) {
                sim_run_opts paged = run;
                paged.page = tu_rand_range(&rng, 1, sh.Nk < 12 ? sh.Nk : 12);
                paged.page_seed = 31u + (uint64_t)seed;
                assert_int_equal(sim_plan_make(a, &flat, &paged, Br, Bc, SIM_PLAN_USER, &p), 0);
                if (sim_run_inputs(a, &flat, &p, &in, NULL, &got[seed], err, sizeof err) != 0)
                    fail_msg("%s", err);
                char what[128];
                snprintf(what, sizeof what, "%s %s paged P=%lld N=%lld Nk=%lld S=%lld G=%lld",
                         sim_algo_name(a), sim_pass_name(run.pass), (long long)paged.page,
                         (long long)sh.N, (long long)sh.Nk, (long long)run.splits,
                         (long long)flat.kv_heads);
                if (run.pass == SIM_FWD) {
                    assert_int_equal(tu_compare_bits(what, got[seed].O, want.O, nq), 0);
                } else {
                    assert_int_equal(tu_compare_bits(what, got[seed].dQ, want.dQ, nq), 0);
                    assert_int_equal(tu_compare_bits(what, got[seed].dK, want.dK, nk), 0);
                    assert_int_equal(tu_compare_bits(what, got[seed].dV, want.dV, nk), 0);
                }
                runs++;
            }
            sim_result_free(&want);
            sim_result_free(&got[0]);
            sim_result_free(&got[1]);
        }
        free(q);
        free(kv);
        free(dO);
    }
    printf("  %d paged runs, each the bits of contiguous KV\n", runs);
}

/* The pool is shuffled: with more than one page, the placement of a seed is
 * not the identity, and two seeds place the pages differently, so the test
 * above compares real gathers, not copies of the contiguous layout. */
static void test_paged_pool_is_shuffled(void **state)
{
    (void)state;
    sim_shape sh = { .N = 64, .d = 4, .M = 64u << 20, .dtype = SIM_FP32, .batch = 2,
                     .heads = 2 };
    sim_run_opts run = { .page = 4 };
    int64_t pt[2][64];
    for (int seed = 0; seed < 2; seed++) {
        run.page_seed = 31u + (uint64_t)seed;
        assert_int_equal(sim_page_table(&sh, &run, pt[seed], 64), 0);
        int moved = 0, seen[64] = { 0 };
        for (int x = 0; x < 64; x++) {
            assert_true(pt[seed][x] >= 0 && pt[seed][x] < 64);
            seen[pt[seed][x]]++;
            moved += pt[seed][x] != x;
        }
        for (int x = 0; x < 64; x++)
            assert_int_equal(seen[x], 1);             /* a permutation of the pool */
        assert_true(moved > 48);
    }
    assert_memory_not_equal(pt[0], pt[1], sizeof pt[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp32_against_oracle),
        cmocka_unit_test(test_fp16_against_oracle),
        cmocka_unit_test(test_bf16_against_oracle),
        cmocka_unit_test(test_large_logits),
        cmocka_unit_test(test_bitwise_reproducible),
        cmocka_unit_test(test_output_is_of_dtype),
        cmocka_unit_test(test_oracle_mask_is_slicing),
        cmocka_unit_test(test_oracle_is_the_plain_loops),
        cmocka_unit_test(test_masks_against_oracle),
        cmocka_unit_test(test_full_window_same_bits),
        cmocka_unit_test(test_heads_against_oracle),
        cmocka_unit_test(test_gqa_g_equals_h_is_plain),
        cmocka_unit_test(test_backward_against_oracle),
        cmocka_unit_test(test_backward_checker_rejects_wrong),
        cmocka_unit_test(test_gqa_backward),
        cmocka_unit_test(test_backward_line3_passes_same_bits),
        cmocka_unit_test(test_splits_against_unsplit),
        cmocka_unit_test(test_paged_same_bits),
        cmocka_unit_test(test_paged_pool_is_shuffled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
