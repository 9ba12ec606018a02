/*******************************************************************************
*
*   fasim lesson 4 - online-attention: the output row, block by block
*
*   Level:     [★★☆] 2/3 intermediate              Minutes: about 15
*
*   Goal:      carry the output row o along with (m, l): for each block of keys
*              rescale o, add P~ V_j, and normalise at the end (FlashAttention-2)
*              or at every step (FlashAttention-1); check both against the
*              float64 oracle and against fasim's own simulator.
*   After it:  you can write the update o <- alpha o + P~ V_j, say why FA1
*              keeps o normalised (Algorithm 1 of Dao et al. 2022 stores O_i in
*              HBM between visits, K/V in the outer loop) while FA2 (Dao 2023,
*              Q in the outer loop) divides once, and count the divisions.
*
*   Options:   --N N       keys (rows of K and V), 1 to 256 (default 6)
*              --d D       head dimension, 1 to 16 (default 3)
*              --block B   keys per block B_c, 1 to N (default 2)
*              --row R     which query row, 0 to N-1 (default 0)
*              --seed S    seed of the random Q, K, V (default 1)
*
*   Run:       fasim lesson online-attention --N 6 --d 3 --block 2
*
*   Numbers:   float32 from reference/ref_tile.h (ref_tile_scores,
*              ref_online_step, ref_pv_acc_row, ref_normalise_row,
*              ref_fa1_step_row); ref_oracle_attention_f in float64; sim_run.
*
*******************************************************************************/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lesson.h"
#include "ref_oracle.h"
#include "ref_tile.h"
#include "sim.h"

#define DETAIL 4   /* blocks shown as a step each; the rest share a table */

/* Row `row` of O from fasim's simulator (fp32, B_r = 1, B_c = B): the bits
 * its loop order produces. Returns 0, or -1 when the run failed. */
static int sim_row(sim_algo algo, const float *Q, const float *K, const float *V, int N,
                   int d, int B, int row, float *o)
{
    sim_shape sh = { .N = N, .d = d, .M = UINT64_C(1) << 30, .dtype = SIM_FP32, .causal = 0 };
    sim_plan p;
    sim_result res;
    char err[256];
    if (sim_plan_make(algo, &sh, NULL, 1, B, SIM_PLAN_USER, &p) != 0 ||
        sim_run(algo, &sh, &p, Q, K, V, NULL, &res, err, sizeof err) != 0)
        return -1;
    memcpy(o, res.O + (size_t)row * d, (size_t)d * sizeof *o);
    sim_result_free(&res);
    return 0;
}

static double maxdiff(const float *a, const float *b, int n)
{
    double m = 0.0;
    for (int k = 0; k < n; k++)
        m = fmax(m, fabs((double)a[k] - (double)b[k]));
    return m;
}

static void run(lesson *L)
{
    /* ---- setup: options and inputs ------------------------------------ */
    const int N = (int)lesson_opt_int(L, "N", 6, 1, 256);
    const int d = (int)lesson_opt_int(L, "d", 3, 1, 16);
    const int B = (int)lesson_opt_int(L, "block", 2, 1, 256);
    const int row = (int)lesson_opt_int(L, "row", 0, 0, 255);
    const uint64_t seed = (uint64_t)lesson_opt_int(L, "seed", 1, 0, INT64_MAX);
    if (B > N)
        lesson_fail(L, "--block %d is more than the %d keys; use 1 to %d", B, N, N);
    if (row >= N)
        lesson_fail(L, "--row %d: there are %d rows, 0 to %d", row, N, N - 1);
    const int T = (N + B - 1) / B;
    const size_t nd = (size_t)N * d;
    float *Q = lesson_alloc(L, nd * 4), *K = lesson_alloc(L, nd * 4);
    float *V = lesson_alloc(L, nd * 4), *sc = lesson_alloc(L, (size_t)N * 4);
    float *s = lesson_alloc(L, (size_t)N * 4), *o2 = lesson_alloc(L, (size_t)d * 4);
    float *o1 = lesson_alloc(L, (size_t)d * 4), *tmp = lesson_alloc(L, (size_t)d * 4);
    float *s1 = lesson_alloc(L, (size_t)N * 4);     /* FA1's copy of the scores */
    float *sim2 = lesson_alloc(L, (size_t)d * 4), *sim1 = lesson_alloc(L, (size_t)d * 4);
    double *O_ref = lesson_alloc(L, nd * sizeof *O_ref);
    sim_random_inputs(seed, N, d, SIM_FP32, Q, K, V);
    const float *q = Q + (size_t)row * d;
    const float scale = 1.0f / sqrtf((float)d);     /* as sim_run uses */
    ref_tile_scores(q, K, 1, N, d, scale, sc);
    if (ref_oracle_attention_f(Q, K, V, N, d, 0, O_ref, NULL) != 0 ||
        sim_row(SIM_FA2, Q, K, V, N, d, B, row, sim2) != 0 ||
        sim_row(SIM_FA1, Q, K, V, N, d, B, row, sim1) != 0)
        lesson_fail(L, "out of memory for N = %d, d = %d", N, d);

    /* ---- steps --------------------------------------------------------- */
    lesson_step(L, "One query row against N keys");
    lesson_say(L, "Seeded random inputs (seed %llu): Q, K, V are %d x %d. We follow row "
               "%d of Q, the vector q, against all %d keys. Its scores are "
               "s = q K^T / sqrt(d), and its output is o = softmax(s) V: d = %d numbers, "
               "a weighted average of the rows of V.", (unsigned long long)seed, N, d,
               row, N, d);
    lesson_show_vector_f(L, "q", q, d, 0);
    lesson_show_tile(L, "K", K, N, d, 0);
    lesson_show_tile(L, "V", V, N, d, 0);

    /* A step of its own, so that each fits a 24-line terminal. */
    lesson_step(L, "Its scores, in blocks");
    lesson_say(L, "The scores of q against the %d keys, s = q K^T / sqrt(d):", N);
    lesson_show_vector_f(L, "s", sc, N, 0);
    lesson_print(L, "\n");
    lesson_say(L, "FlashAttention never holds the whole row of scores: it visits K and V "
               "in %d block%s of B_c = %d keys, keeping (m, l) as in lesson 2 and one "
               "output row beside them. Two ways to keep that row, side by side: "
               "FA2 keeps acc, unnormalised, and divides once at the end; FA1 keeps o "
               "normalised after every block.", T, T == 1 ? "" : "s", B);

    float m2 = -REF_INF, l2 = 0.0f, m1 = -REF_INF, l1 = 0.0f;
    for (int j = 0; j < T; j++) {
        const int a = j * B, len = N - a < B ? N - a : B;
        const float m_old = m2, l_old = l2;
        memcpy(s, sc + a, (size_t)len * 4);
        const float alpha = ref_online_step(s, len, &m2, &l2);      /* FA2, line 9 */
        ref_pv_acc_row(o2, d, alpha, s, V + (size_t)a * d, len);      /* FA2, line 10 */
        memcpy(s1, sc + a, (size_t)len * 4);
        ref_fa1_step_row(s1, len, V + (size_t)a * d, d, o1, &m1, &l1);  /* FA1, 10-12 */
        if (j >= DETAIL) {
            if (j == DETAIL) {
                char title[64];
                snprintf(title, sizeof title, "Blocks %d to %d, the same way", j + 1, T);
                lesson_step(L, title);
                lesson_print(L, "  %5s  %12s  %12s  %12s  %12s\n", "block", "m", "alpha",
                             "l", "acc[0]");
            }
            if (j - DETAIL < 40)                   /* all computed, 40 rows shown */
                lesson_print(L, "  %5d  %12.7g  %12.7g  %12.7g  %12.7g\n", j + 1, m2,
                             alpha, l2, o2[0]);
            else if (j == T - 1)
                lesson_print(L, "  ... and %d more blocks\n", T - DETAIL - 40);
            continue;
        }
        char title[64];
        snprintf(title, sizeof title, "Key block %d of %d (keys %d to %d)", j + 1, T, a,
                 a + len - 1);
        lesson_step(L, title);
        lesson_show_vector_f(L, "s_j", sc + a, len, 0);
        lesson_print(L, "  before:  m = %.7g, l = %.7g\n\n", m_old, l_old);
        if (j == 1) {
            const lesson_question q = { .answer = alpha, .known = {
                { exp((double)m2 - (double)m_old), 0, LESSON_WHY_FLIPPED_SIGN } } };
            lesson_ask_q(L, &q, "What is the rescale factor alpha = exp(m_old - m_new) for "
                         "this block?");
        }
        lesson_print(L, "  m_new = %.7g, alpha = exp(m_old - m_new) = %.7g\n", m2, alpha);
        lesson_show_vector_f(L, "P~ = exp(s_j - m_new)", s, len, 0);
        lesson_print(L, "  l = alpha * l + rowsum(P~) = %.7g\n\n", l2);
        if (j == 0)
            lesson_say(L, "FA2 (Dao 2023, Algorithm 1, line 10): acc <- alpha * acc + "
                       "P~ V_j. The old acc was weighted against m_old, so it is rescaled "
                       "by alpha before this block's rows of V, weighted by P~, are "
                       "added.");
        lesson_show_vector_f(L, "acc (FA2)", o2, d, 0);
        for (int c = 0; c < d; c++)
            tmp[c] = o2[c] / l2;
        lesson_show_vector_f(L, "acc / l", tmp, d, 0);
        lesson_show_vector_f(L, "o (FA1)", o1, d, 0);
        lesson_print(L, "\n");
        if (j == 0)
            lesson_say(L, "FA1 (Dao et al. 2022, Algorithm 1, line 12) keeps o divided "
                       "by l at every step: o <- (l_old exp(m_old - m_new) o + "
                       "exp(m~ - m_new) P~' V_j) / l_new, where P~' = exp(s_j - m~) uses "
                       "the block's own maximum m~. Its o is what acc / l is now: the "
                       "attention output over the keys seen so far.");
        else
            lesson_say(L, "Again FA1's o equals acc / l up to rounding: largest "
                       "difference %.3g.", maxdiff(o1, tmp, d));
    }
    if (T > DETAIL)
        lesson_print(L, "\n  after block %d:  m = %.7g, l = %.7g\n\n", T, m2, l2);

    lesson_step(L, "Normalise, and check against the oracle");
    ref_normalise_row(o2, d, l2);                                   /* FA2, line 12 */
    const double *want = O_ref + (size_t)row * d;
    double e2 = 0.0, e1 = 0.0;
    int same2 = 1, same1 = 1;
    for (int c = 0; c < d; c++) {
        e2 = fmax(e2, fabs((double)o2[c] - want[c]));
        e1 = fmax(e1, fabs((double)o1[c] - want[c]));
        same2 &= ref_f2u(o2[c]) == ref_f2u(sim2[c]);
        same1 &= ref_f2u(o1[c]) == ref_f2u(sim1[c]);
    }
    lesson_say(L, "FA2 divides acc by l once, here, after the last block (its line 12). "
               "FA1's o needs nothing more.");
    lesson_print(L, "  FA2:");
    for (int c = 0; c < d; c++)
        lesson_print(L, " %.9g", o2[c]);
    lesson_print(L, "\n  FA1:");
    for (int c = 0; c < d; c++)
        lesson_print(L, " %.9g", o1[c]);
    lesson_print(L, "\n");
    lesson_show_vector(L, "oracle (float64)", want, d, 12);
    lesson_print(L, "\n  largest |error|:  FA2 %.3g, FA1 %.3g\n", e2, e1);
    lesson_print(L, "  fasim's simulator, same inputs and B_c: FA2 %s, FA1 %s\n\n",
                 same2 ? "the same bits" : "DIFFERENT bits",
                 same1 ? "the same bits" : "DIFFERENT bits");
    const lesson_question divs = { .answer = (double)T * d, .discrete = 1 };
    lesson_ask_q(L, &divs, "How many divisions did FA1 make for this row (d per block)?");
    lesson_say(L, "FA1 divided %d values at each of %d blocks, %d in all; FA2 divided %d "
               "once. The reason is the loop order. Algorithm 1 of FlashAttention runs "
               "the K/V blocks in the outer loop and the Q blocks inside it, so between "
               "two visits to row %d its output goes back to HBM, and the row stored "
               "there is always a finished answer for the keys seen so far. "
               "FlashAttention-2 puts Q in the outer loop: the row stays on chip for "
               "all its key blocks, so it can stay unnormalised and be divided once.",
               d, T, T * d, d, row);

    /* ---- summary ------------------------------------------------------- */
    lesson_step(L, "Summary");
    lesson_say(L, "- Per key block: m_new, alpha = exp(m_old - m_new) <= 1, "
               "P~ = exp(s_j - m_new), l <- alpha l + rowsum(P~), "
               "acc <- alpha acc + P~ V_j.\n"
               "- FA2 (Q outer): o = acc / l once at the end; %d divisions here.\n"
               "- FA1 (K/V outer): o is renormalised every block because it is stored "
               "in HBM between visits; %d divisions here.\n"
               "- Both match the float64 oracle to float32 rounding (%.2g and %.2g), "
               "and fasim's simulator bit for bit.", d, T * d, e2, e1);
}

const lesson_def lesson_online_attention = {
    "online-attention", 4, "Online attention: the output row, block by block",
    "intermediate", 15,
    "the output row, FA2 and FA1 style",
    "--N N       keys, 1 to 256 (default 6)\n"
    "--d D       head dimension, 1 to 16 (default 3)\n"
    "--block B   keys per block B_c, 1 to N (default 2)\n"
    "--row R     which query row to follow, 0 to N-1 (default 0)\n"
    "--seed S    seed of the random Q, K, V, 0 to 2^63-1 (default 1)\n",
    run,
};
