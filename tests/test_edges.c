/*
 * test_edges.c — numerics and counts at the edges, each with the behaviour
 * README.md ("Numerics at the edges") documents:
 *
 *   logits of magnitude 1e4     no overflow; the softmax is exactly one-hot
 *                               when the largest logit leads by > 104, so O
 *                               is exactly the chosen row of V
 *   a row whose keys are all    m = -inf, l = 0, output 0 (not NaN), and it
 *     masked (tile level)       changes nothing when merged with other keys
 *   subnormal inputs            kept (no flush to zero): errors within the
 *                               subnormal spacing's rounding bound
 *   N = 1                       O = V exactly (the one weight is 1)
 *   d = 1, N < block, N = block against the oracle; counts equal closed forms
 *                               written out here for one block
 *   very large N, count-only    exact 64-bit counts at N = 2^24, no data held
 *
 * Shapes: Q, K, V, O (N, d) row-major.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ref_oracle.h"
#include "ref_tile.h"
#include "sim.h"
#include "test_util.h"

/* Run algo on (Q, K, V) with blocks Br x Bc (0, 0: the best plan) and
 * return the result (caller frees). */
static sim_result run(sim_algo a, const sim_shape *sh, int64_t Br, int64_t Bc,
                      const float *Q, const float *K, const float *V)
{
    sim_plan p;
    char err[1024];
    if (Br)
        assert_int_equal(sim_plan_make(a, sh, NULL, Br, Bc, SIM_PLAN_USER, &p), 0);
    else
        assert_int_equal(sim_plan_choose(a, sh, NULL, SIM_PLAN_AUTO, 0, 0, &p, err, sizeof err), 0);
    assert_true(p.fits);
    sim_result r;
    assert_int_equal(sim_run(a, sh, &p, Q, K, V, NULL, &r, err, sizeof err), 0);
    sim_counts c;
    assert_int_equal(sim_theory_counts(&r.plan, sh, &c), 0);
    assert_true(sim_counts_equal(&c, &r.counts));
    return r;
}

/* The unfused baseline, by name: it has no enum constant. */
static sim_algo unfused(void)
{
    sim_algo a;
    assert_int_equal(sim_algo_parse("unfused", &a), 0);
    return a;
}

static float *alloc_f(int64_t n)
{
    float *x = calloc((size_t)n, sizeof *x);
    assert_non_null(x);
    return x;
}

/* Logits of magnitude 1e4: q_r = A e_pi(r) + noise below A/2, k_c = A e_c
 * (d = N), so s_rc = scale A q_r[c]: the chosen key scores scale A^2 = 1e4,
 * every other at most half of that. exp(-5000) is 0 in float, so P is
 * exactly one-hot and O_r = V_pi(r) bit for bit, in every loop order and
 * dtype, causal (pi(r) <= r) or not. Save the unfused baseline in fp16:
 * like the framework it stands for, it stores Q K^T before the scale, and
 * A^2 = 80,000 is past fp16's largest 65,504: the scores overflow to inf
 * and the output is NaN (what HuggingFace's reorder_and_upcast_attn
 * option exists to avoid). */
static void test_logits_1e4_one_hot(void **state)
{
    (void)state;
    const int64_t N = 64, d = 64;
    const float A = sqrtf(1e4f * 8.0f);            /* scale = 1/8 at d = 64 */
    uint64_t rng = 11;
    for (int dt = 0; dt < 3; dt++)
        for (int causal = 0; causal <= 1; causal++) {
            sim_shape sh = { .N = N, .d = d, .M = 1u << 20, .dtype = (sim_dtype)dt, .causal = causal };
            float *Q = alloc_f(N * d), *K = alloc_f(N * d), *V = alloc_f(N * d);
            int64_t pi[64];
            sim_random_inputs(5 + (uint64_t)dt, N, d, SIM_FP32, Q, K, V);
            for (int64_t r = 0; r < N; r++) {
                pi[r] = tu_rand_range(&rng, 0, causal ? r : N - 1);
                for (int64_t t = 0; t < d; t++) {
                    Q[r * d + t] = t == pi[r] ? A : (Q[r * d + t] > 0 ? 0.25f : -0.25f) * A *
                                                    (float)(1 + (r + t) % 2);
                    K[r * d + t] = t == r ? A : 0.0f;
                }
            }
            sim_round_to_dtype(V, N * d, sh.dtype);
            double s_max = 0;
            for (int a = 0; a < sim_algo_count(); a++) {
                sim_result res = run((sim_algo)a, &sh, 16, 16, Q, K, V);
                if ((sim_algo)a == unfused() && sh.dtype == SIM_FP16) {
                    for (int64_t r = 0; r < N; r++)
                        assert_true(isnan(res.O[r * d]));
                    sim_result_free(&res);
                    continue;
                }
                for (int64_t r = 0; r < N; r++) {
                    /* The logit actually formed, in double, from the dtype's Q. */
                    float q = Q[r * d + pi[r]];
                    sim_round_to_dtype(&q, 1, sh.dtype);
                    s_max = fmax(s_max, (double)q * A / 8.0);
                    assert_int_equal(tu_compare_bits(sim_algo_name((sim_algo)a), res.O + r * d,
                                                     V + pi[r] * d, d), 0);
                }
                sim_result_free(&res);
            }
            assert_true(s_max > 9900.0);
            free(Q);
            free(K);
            free(V);
        }
}

/* A row whose scores are all -inf, through every primitive: FA2's online
 * step and normalisation, FA1's step, logsumexp, and the merge. */
static void test_fully_masked_row(void **state)
{
    (void)state;
    enum { BC = 5, D = 3 };
    const float V[BC * D] = { 1.5f, -2, 0.25f, 3, 1, -1, 0.5f, 0.5f, 2, -3, 4, 1, 2, 2, -0.75f };
    float s[BC];
    for (int k = 0; k < BC; k++)
        s[k] = -REF_INF;
    /* FA2: m_i = -inf, l_i = 0 before; the masked block leaves them so. */
    float m = -REF_INF, l = 0.0f, o[D] = { 0, 0, 0 };
    float alpha = ref_online_step(s, BC, &m, &l);
    ref_pv_acc_row(o, D, alpha, s, V, BC);
    assert_true(m == -REF_INF && l == 0.0f && alpha == 0.0f);
    for (int k = 0; k < BC; k++)
        assert_true(s[k] == 0.0f);                        /* P~ = exp(-inf - 0) = 0 */
    for (int c = 0; c < D; c++)
        assert_true(o[c] == 0.0f);
    ref_normalise_row(o, D, l);
    for (int c = 0; c < D; c++)
        assert_true(o[c] == 0.0f && !signbit(o[c]));     /* 0, not NaN */
    assert_true(ref_lse(m, l) == -REF_INF);
    /* FA1: the same block changes nothing. */
    for (int k = 0; k < BC; k++)
        s[k] = -REF_INF;
    float m1 = -REF_INF, l1 = 0.0f, o1[D] = { 0, 0, 0 };
    ref_fa1_step_row(s, BC, V, D, o1, &m1, &l1);
    assert_true(m1 == -REF_INF && l1 == 0.0f);
    for (int c = 0; c < D; c++)
        assert_true(o1[c] == 0.0f);                       /* not (0 * 0) / 0 */
    /* Merge: an empty state (m = -inf, l = 0, acc = 0) is the identity,
     * whichever side it is on. */
    const float real[BC] = { 0.5f, -1.25f, 2.0f, 0.0f, 1.0f };
    float sa[BC], ma = -REF_INF, la = 0, oa[D] = { 0 };
    memcpy(sa, real, sizeof sa);
    ref_pv_acc_row(oa, D, ref_online_step(sa, BC, &ma, &la), sa, V, BC);
    float mm, lm, acc[D];
    const float zero[D] = { 0, 0, 0 };
    ref_merge(-REF_INF, 0.0f, zero, ma, la, oa, D, &mm, &lm, acc);
    assert_true(mm == ma && lm == la);
    assert_int_equal(tu_compare_bits("merge with empty", acc, oa, D), 0);
    ref_merge(ma, la, oa, -REF_INF, 0.0f, zero, D, &mm, &lm, acc);
    assert_true(mm == ma && lm == la);
    assert_int_equal(tu_compare_bits("merge with empty (b)", acc, oa, D), 0);
}

/* Subnormal V (about 1e-39, below FLT_MIN = 1.18e-38), fp32. An output is
 * built by at most N + 3 T_c + 2 roundings (products, rescales, the
 * division). Each errs by at most half an ulp of the value it rounds: half
 * the subnormal spacing, 2^-150, while that value is subnormal, and 2^-24 of
 * it once a sum of up to l weights times |v| grows past FLT_MIN. After the
 * division by l >= 1 each rounding is worth at most 2^-150 + 2^-24 max|V|;
 * the weights' own relative errors (a few ulps) add about 2^-23 max|V|.
 * Flushing to zero would show as zeros where the oracle is far from zero. */
static void test_subnormal_inputs(void **state)
{
    (void)state;
    const int64_t N = 80, d = 8;
    for (int causal = 0; causal <= 1; causal++) {
        sim_shape sh = { .N = N, .d = d, .M = 1u << 20, .dtype = SIM_FP32, .causal = causal };
        float *Q = alloc_f(N * d), *K = alloc_f(N * d), *V = alloc_f(N * d);
        double *O_ref = malloc((size_t)(N * d) * sizeof *O_ref);
        assert_non_null(O_ref);
        sim_random_inputs(21, N, d, SIM_FP32, Q, K, V);
        int subnormal = 0;
        for (int64_t k = 0; k < N * d; k++) {
            V[k] *= 1e-39f;
            subnormal += V[k] != 0.0f && fabsf(V[k]) < 1.17549435e-38f;
        }
        assert_true(subnormal > N * d / 2);
        double v_max = 0;
        for (int64_t k = 0; k < N * d; k++)
            v_max = fmax(v_max, fabs((double)V[k]));
        assert_int_equal(ref_oracle_attention_f(Q, K, V, N, d, causal, O_ref, NULL), 0);
        for (int a = 0; a < sim_algo_count(); a++) {
            sim_result r = run((sim_algo)a, &sh, 16, 16, Q, K, V);
            double tol = (double)(N + 3 * r.plan.Tc + 2) * (ldexp(1.0, -150) +
                                                            ldexp(v_max, -24)) +
                         ldexp(v_max, -23);
            assert_int_equal(tu_compare_f64(sim_algo_name((sim_algo)a), r.O, O_ref, N * d, tol),
                             0);
            int64_t kept = 0, should = 0;
            for (int64_t k = 0; k < N * d; k++)
                if (fabs(O_ref[k]) > 2 * tol) {
                    should++;
                    kept += r.O[k] != 0.0f;
                }
            assert_true(should > N * d / 2);
            assert_int_equal(kept, should);
            sim_result_free(&r);
        }
        free(Q);
        free(K);
        free(V);
        free(O_ref);
    }
    /* Storage types keep subnormals too: fp16's smallest is 2^-24; bf16 has
     * fp32's exponent range with 7 fraction bits, so its smallest is 2^-133. */
    assert_true(ref_round_fp16(3.0f * ldexpf(1, -24)) == 3.0f * ldexpf(1, -24));
    assert_true(ref_round_fp16(ldexpf(1, -25)) == 0.0f);             /* tie to even 0 */
    assert_true(ref_round_fp16(1.5f * ldexpf(1, -25)) == ldexpf(1, -24));
    assert_true(ref_round_bf16(ldexpf(1, -130)) == ldexpf(1, -130));
    assert_true(ref_round_bf16(ldexpf(1, -133)) == ldexpf(1, -133));
    assert_true(ref_round_bf16(ldexpf(1, -134)) == 0.0f);            /* tie to even 0 */
}

/* N = 1: the only weight is exp(0) / 1 = 1, so O = V exactly. */
static void test_N1(void **state)
{
    (void)state;
    const int64_t d = 24;
    for (int dt = 0; dt < 3; dt++)
        for (int causal = 0; causal <= 1; causal++) {
            sim_shape sh = { .N = 1, .d = d, .M = 64 * 1024, .dtype = (sim_dtype)dt, .causal = causal };
            float Q[24], K[24], V[24];
            sim_random_inputs(31, 1, d, (sim_dtype)dt, Q, K, V);
            for (int a = 0; a < sim_algo_count(); a++) {
                sim_result r = run((sim_algo)a, &sh, 0, 0, Q, K, V);
                assert_int_equal(r.plan.Tr * r.plan.Tc, 1);
                assert_int_equal(tu_compare_bits("N = 1", r.O, V, d), 0);
                sim_result_free(&r);
            }
        }
}

/* Compare a run with the oracle at the fp32 tolerance of test_numerics. */
static void check_oracle(const sim_shape *sh, int64_t Br, int64_t Bc, uint64_t seed)
{
    int64_t n = sh->N * sh->d;
    float *Q = alloc_f(n), *K = alloc_f(n), *V = alloc_f(n);
    double *O_ref = malloc((size_t)n * sizeof *O_ref);
    assert_non_null(O_ref);
    sim_random_inputs(seed, sh->N, sh->d, sh->dtype, Q, K, V);
    assert_int_equal(ref_oracle_attention_f(Q, K, V, sh->N, sh->d, sh->causal, O_ref, NULL), 0);
    for (int a = 0; a < sim_algo_count(); a++) {
        sim_result r = run((sim_algo)a, sh, Br, Bc, Q, K, V);
        assert_int_equal(tu_compare_f64(sim_algo_name((sim_algo)a), r.O, O_ref, n, 1e-5), 0);
        sim_result_free(&r);
    }
    free(Q);
    free(K);
    free(V);
    free(O_ref);
}

static void test_d1(void **state)
{
    (void)state;
    for (int causal = 0; causal <= 1; causal++) {
        sim_shape sh = { .N = 77, .d = 1, .M = 4096, .dtype = SIM_FP32, .causal = causal };
        check_oracle(&sh, 0, 0, 41);
        check_oracle(&sh, 16, 32, 42);
    }
}

/* Blocks larger than N are clamped to N: one block, T_r = T_c = 1. Its
 * counts, written out from the pseudocode with one block:
 *   naive: Q, K, V read, O written once (N d); S and P written and read
 *          once each (N^2; one softmax pass);
 *   fa1:   Q, K, V read once; O read once and written twice (line 2's
 *          zeros, then the result), l and m likewise (N);
 *   fa2:   Q, K, V read once, O written once, L written once (N). */
static void check_one_block(int64_t N, int64_t Br, int64_t Bc)
{
    const int64_t d = 16;
    sim_shape sh = { .N = N, .d = d, .M = 1u << 20, .dtype = SIM_FP32, .causal = 0 };
    check_oracle(&sh, Br, Bc, 51);
    for (int a = 0; a < sim_algo_count(); a++) {
        sim_plan p;
        assert_int_equal(sim_plan_make((sim_algo)a, &sh, NULL, Br, Bc, SIM_PLAN_USER, &p), 0);
        assert_int_equal(p.Tr, 1);
        assert_int_equal(p.Tc, 1);
        sim_result r;
        assert_int_equal(sim_run((sim_algo)a, &sh, &p, NULL, NULL, NULL, NULL, &r, NULL, 0), 0);
        const uint64_t Nd = (uint64_t)(N * d), NN = (uint64_t)(N * N), n = (uint64_t)N;
        const sim_counts *c = &r.counts;
        assert_int_equal(c->read_elems[SIM_Q], Nd);
        assert_int_equal(c->read_elems[SIM_K], Nd);
        assert_int_equal(c->read_elems[SIM_V], Nd);
        switch ((sim_algo)a) {
        case SIM_NAIVE:
            assert_int_equal(c->write_elems[SIM_O], Nd);
            assert_int_equal(c->write_elems[SIM_S], NN);
            assert_int_equal(c->read_elems[SIM_S], NN);
            assert_int_equal(c->write_elems[SIM_P], NN);
            assert_int_equal(c->read_elems[SIM_P], NN);
            break;
        case SIM_FA1:       /* one key block: O_acc's zeros read once, O written once */
            assert_int_equal(c->read_elems[SIM_Oacc], Nd);
            assert_int_equal(c->write_elems[SIM_Oacc], Nd);
            assert_int_equal(c->read_elems[SIM_O], 0);
            assert_int_equal(c->write_elems[SIM_O], Nd);
            assert_int_equal(c->read_elems[SIM_l], n);
            assert_int_equal(c->write_elems[SIM_l], 2 * n);
            assert_int_equal(c->read_elems[SIM_m], n);
            assert_int_equal(c->write_elems[SIM_m], 2 * n);
            break;
        default:
            if ((sim_algo)a == unfused()) {
                /* S: written by the product and the division, read by the
                 * division and the softmax; P written once, read by P V */
                assert_int_equal(c->write_elems[SIM_O], Nd);
                assert_int_equal(c->write_elems[SIM_S], 2 * NN);
                assert_int_equal(c->read_elems[SIM_S], 2 * NN);
                assert_int_equal(c->write_elems[SIM_P], NN);
                assert_int_equal(c->read_elems[SIM_P], NN);
                break;
            }
            assert_int_equal(c->read_elems[SIM_O], 0);
            assert_int_equal(c->write_elems[SIM_O], Nd);
            assert_int_equal(c->write_elems[SIM_L], n);
            break;
        }
        sim_result_free(&r);
    }
}

static void test_N_below_block(void **state)
{
    (void)state;
    check_one_block(10, 64, 64);      /* N smaller than both blocks */
    check_one_block(32, 32, 32);      /* exactly one block */
}

/* N = 2^24 counted without data: with B_r = B_c = 8192, T = 2048 and
 *   fa2: Q read N d, K and V read T N d each, O written N d, L written N;
 *   fa2 causal: K and V read B_c d T(T+1)/2 each (block (i, j) is visited
 *   when j <= i); the same totals as the closed forms, in 64 bits. */
static void test_large_N_count_only(void **state)
{
    (void)state;
    const int64_t N = INT64_C(1) << 24, d = 64, B = 8192, T = N / B;
    for (int causal = 0; causal <= 1; causal++) {
        sim_shape sh = { .N = N, .d = d, .M = 1u << 30, .dtype = SIM_FP16, .causal = causal };
        sim_plan p;
        assert_int_equal(sim_plan_make(SIM_FA2, &sh, NULL, B, B, SIM_PLAN_USER, &p), 0);
        assert_true(p.fits);
        sim_result r;
        assert_int_equal(sim_run(SIM_FA2, &sh, &p, NULL, NULL, NULL, NULL, &r, NULL, 0), 0);
        assert_int_equal(r.computed, 0);
        assert_null(r.O);
        uint64_t kv = causal ? (uint64_t)(B * d) * (uint64_t)(T * (T + 1) / 2)
                             : (uint64_t)T * (uint64_t)(N * d);
        assert_int_equal(r.counts.read_elems[SIM_Q], (uint64_t)(N * d));
        assert_int_equal(r.counts.read_elems[SIM_K], kv);
        assert_int_equal(r.counts.read_elems[SIM_V], kv);
        assert_int_equal(r.counts.write_elems[SIM_O], (uint64_t)(N * d));
        assert_int_equal(r.counts.write_elems[SIM_L], (uint64_t)N);
        assert_int_equal(r.steps, causal ? (uint64_t)(T * (T + 1) / 2) : (uint64_t)(T * T));
        sim_counts c;
        assert_int_equal(sim_theory_counts(&p, &sh, &c), 0);
        assert_true(sim_counts_equal(&c, &r.counts));
        sim_result_free(&r);
    }
}

/* Past N^2 = 2^64 the loop orders of FlashAttention still have exact
 * counts (they never move an N x N tensor); standard attention does not.
 * N = 2^34, d = 1, B_r = B_c = 2^24, T = 1024: FA2 reads K and V T N d =
 * 2^44 elements each, FA1 reads Q that often. (The fuzz target found N = 534G refused for FA2 because
 * N^2 was formed for every loop order.) */
static void test_counts_past_N_squared(void **state)
{
    (void)state;
    const int64_t N = INT64_C(1) << 34, B = INT64_C(1) << 24, T = N / B;
    sim_shape sh = { .N = N, .d = 1, .M = 1u << 30, .dtype = SIM_FP16, .causal = 0 };
    sim_counts c;
    for (int a = 0; a < sim_algo_count(); a++) {
        sim_plan p;
        assert_int_equal(sim_plan_make((sim_algo)a, &sh, NULL, B, B, SIM_PLAN_USER, &p), 0);
        int rc = sim_theory_counts(&p, &sh, &c);
        if (a == SIM_NAIVE || (sim_algo)a == unfused()) {
            assert_int_not_equal(rc, 0);          /* S alone is N^2 = 2^68 elements */
            continue;
        }
        assert_int_equal(rc, 0);
        /* FA1 reads K and V once (outer loop); FA2 once per query block. */
        uint64_t kv = a == SIM_FA1 ? (uint64_t)N : (uint64_t)T * (uint64_t)N;
        assert_int_equal(c.read_elems[SIM_K], kv);
        assert_int_equal(c.read_elems[SIM_V], kv);
        /* ... and FA1 reads Q and O once per key block. */
        if (a == SIM_FA1)
            assert_int_equal(c.read_elems[SIM_Q], (uint64_t)T * (uint64_t)N);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_logits_1e4_one_hot),
        cmocka_unit_test(test_fully_masked_row),
        cmocka_unit_test(test_subnormal_inputs),
        cmocka_unit_test(test_N1),
        cmocka_unit_test(test_d1),
        cmocka_unit_test(test_N_below_block),
        cmocka_unit_test(test_large_N_count_only),
        cmocka_unit_test(test_counts_past_N_squared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
