/*
 * test_checker.c — the checkers prove themselves: known-wrong results are fed
 * to the same comparisons the other tests use, and must be caught.
 *
 * The wrong attention is the online-softmax update of one of the source
 * articles (docs/sources.md, quote 6, errors row 6): P = exp(S - m_new) and
 * then l and P V multiplied by exp(m_curr - m_new) again, which scales the
 * current block twice whenever an earlier block held the larger maximum.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_oracle.h"
#include "ref_tile.h"
#include "sim.h"
#include "test_util.h"

enum { N = 64, D = 16, BLOCK = 16 };

/* Online attention over key blocks of BLOCK, one query row at a time.
 * article_bug = 1 reproduces the article's double scaling. */
static void online_attention(const float *Q, const float *K, const float *V, int article_bug,
                             float *O)
{
    const float scale = 1.0f / sqrtf((float)D);
    for (int r = 0; r < N; r++) {
        float m = -INFINITY, l = 0.0f, acc[D] = { 0 };
        for (int j0 = 0; j0 < N; j0 += BLOCK) {
            float s[BLOCK];
            ref_tile_scores(Q + r * D, K + j0 * D, 1, BLOCK, D, scale, s);
            float m_curr = ref_row_max(s, BLOCK);
            float m_new = m_curr > m ? m_curr : m;
            float alpha = ref_exp(m - ref_shift(m_new));          /* correction_old */
            float beta = article_bug ? ref_exp(m_curr - m_new) : 1.0f; /* correction_curr */
            float sum = ref_exp_shift_sum(s, BLOCK, m_new);       /* P = exp(S - m_new) */
            l = alpha * l + beta * sum;
            for (int c = 0; c < D; c++) {
                float pv = 0.0f;
                for (int k = 0; k < BLOCK; k++)
                    pv = fmaf(s[k], V[(j0 + k) * D + c], pv);
                acc[c] = alpha * acc[c] + beta * pv;
            }
            m = m_new;
        }
        for (int c = 0; c < D; c++)
            O[r * D + c] = acc[c] / l;
    }
}

static void inputs(float *Q, float *K, float *V, double *O_ref)
{
    sim_random_inputs(42, N, D, SIM_FP32, Q, K, V);
    assert_int_equal(ref_oracle_attention_f(Q, K, V, N, D, 0, O_ref, NULL), 0);
}

static void test_correct_online_passes(void **state)
{
    (void)state;
    float Q[N * D], K[N * D], V[N * D], O[N * D];
    double O_ref[N * D];
    inputs(Q, K, V, O_ref);
    online_attention(Q, K, V, 0, O);
    assert_int_equal(tu_compare_f64("correct", O, O_ref, N * D, 1e-5), 0);
}

/* The known-wrong result must fail the comparison every test relies on. */
static void test_article_bug_is_caught(void **state)
{
    (void)state;
    float Q[N * D], K[N * D], V[N * D], O[N * D];
    double O_ref[N * D];
    inputs(Q, K, V, O_ref);
    online_attention(Q, K, V, 1, O);
    int64_t bad = tu_compare_f64("the article's update (expected to differ)", O, O_ref, N * D, 1e-5);
    assert_true(bad > 0);
    ref_error e = ref_compare(O, O_ref, N * D);
    assert_true(e.max_abs > 1e-3);
}

/* One corrupted element, one NaN: each is found, and only where it is. */
static void test_corruption_is_caught(void **state)
{
    (void)state;
    sim_shape sh = { .N = N, .d = D, .M = 1u << 20, .dtype = SIM_FP32, .causal = 0 };
    float Q[N * D], K[N * D], V[N * D];
    double O_ref[N * D];
    inputs(Q, K, V, O_ref);
    sim_plan p;
    assert_int_equal(sim_plan_make(SIM_FA2, &sh, NULL, 16, 16, SIM_PLAN_USER, &p), 0);
    sim_result r;
    assert_int_equal(sim_run(SIM_FA2, &sh, &p, Q, K, V, NULL, &r, NULL, 0), 0);
    assert_int_equal(tu_compare_f64("fa2", r.O, O_ref, N * D, 1e-5), 0);
    r.O[123] += 1e-4f;
    assert_int_equal(tu_compare_f64("one element off (expected)", r.O, O_ref, N * D, 1e-5), 1);
    ref_error e = ref_compare(r.O, O_ref, N * D);
    assert_int_equal(e.worst_index, 123);
    r.O[7] = NAN;
    assert_int_equal(tu_compare_f64("NaN (expected)", r.O, O_ref, N * D, 1e-5), 2);
    e = ref_compare(r.O, O_ref, N * D);
    assert_true(isnan(e.max_abs));
    sim_result_free(&r);
}

/* A count off by one element, or one transfer, is not "equal". */
static void test_count_mismatch_is_caught(void **state)
{
    (void)state;
    sim_shape sh = { .N = 100, .d = 8, .M = 1u << 20, .dtype = SIM_FP16, .causal = 1 };
    sim_plan p;
    assert_int_equal(sim_plan_make(SIM_FA1, &sh, NULL, 16, 32, SIM_PLAN_USER, &p), 0);
    sim_result r;
    assert_int_equal(sim_run(SIM_FA1, &sh, &p, NULL, NULL, NULL, NULL, &r, NULL, 0), 0);
    sim_counts th;
    assert_int_equal(sim_theory_counts(&p, &sh, &th), 0);
    assert_true(sim_counts_equal(&r.counts, &th));
    sim_counts off = th;
    off.read_elems[SIM_m] += 1;
    assert_false(sim_counts_equal(&r.counts, &off));
    off = th;
    off.write_ops[SIM_O] -= 1;
    assert_false(sim_counts_equal(&r.counts, &off));
    /* and a wrong plan gives different counts from the same closed form */
    sim_plan q;
    assert_int_equal(sim_plan_make(SIM_FA1, &sh, NULL, 16, 16, SIM_PLAN_USER, &q), 0);
    sim_counts other;
    assert_int_equal(sim_theory_counts(&q, &sh, &other), 0);
    assert_false(sim_counts_equal(&r.counts, &other));
    sim_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_correct_online_passes),
        cmocka_unit_test(test_article_bug_is_caught),
        cmocka_unit_test(test_corruption_is_caught),
        cmocka_unit_test(test_count_mismatch_is_caught),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
