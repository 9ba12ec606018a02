/*
 * algo_fa2.c — FlashAttention-2 forward pass (Dao 2023, Algorithm 1), with the
 * paper's line numbers in the comments.
 *
 * Loop order: Q blocks outer, K/V blocks inner. O_i, l_i, m_i stay on chip for
 * the whole inner loop, so Q is read once and O and L are written once; K and V
 * are read T_r times (fewer under causal masking).
 *
 * Masking (causal, a sliding window, keys longer than queries: sim.h): the
 * inner loop runs over the key blocks query block i sees, the band of them.
 *
 * Grouped query heads (GQA, sim_shape.group): a block takes the same rows of
 * the hq = H/G query heads that share one key/value head. Q_i, S_ij, O_i,
 * m_i, l_i hold hq slices of br rows, one per head, and each K_j, V_j is
 * loaded once for all of them; the arithmetic is row by row, so a row's
 * bits are those of the one-head run. hq = 1 is the plain loop nest.
 *
 * Shapes: Q, O (N, d); K, V (N_k, d); L (N); Q_i, O_i (B_r, d); K_j, V_j
 * (B_c, d); S_ij (B_r, B_c); m_i, l_i (B_r). Row-major throughout.
 */
#include "sim_hier.h"

/* The on-chip arithmetic lives in functions of its own, out of line: the
 * loop nest below then stays small enough that count-only runs (which skip
 * these calls) keep their loop state in registers. */

/* Line 8: S_ij = Q_i K_j^T / sqrt(d), masked entries -inf, for the hq
 * slices of br rows (one per query head of the block). */
static SIM_NOINLINE void fa2_line8(const sim_hier *h, const float *Q_i, const float *K_j,
                                   float *S_ij, int64_t br, int64_t bc, int64_t r0,
                                   int64_t c0)
{
    ref_tile_scores(Q_i, K_j, (int)(h->hq * br), (int)bc, (int)h->sh.d, h->scale, S_ij);
    for (int64_t k = 0; k < h->hq; k++)
        sim_mask_tile(h, S_ij + k * br * bc, br, bc, r0, c0);
}

/* Lines 9-10, row by row: m_i, P~_ij = exp(S_ij - m_i), l_i, and
 * O_i <- diag(e^(m_old - m_i)) O_i + P~_ij V_j. */
static SIM_NOINLINE void fa2_lines9_10(float *S_ij, const float *V_j, float *O_i,
                                       float *m_i, float *l_i, int64_t br, int64_t bc,
                                       int64_t d)
{
    for (int64_t r = 0; r < br; r++) {
        float *s = S_ij + r * bc;
        float alpha = ref_online_step(s, (int)bc, &m_i[r], &l_i[r]);
        ref_pv_acc_row(O_i + r * d, (int)d, alpha, s, V_j, (int)bc);
    }
}

int sim_algo_fa2(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc, T_r = p->Tr;

    float *Q_i = sim_sram_take(h, p, 1, "Q_i");
    float *K_j = sim_sram_take(h, p, 1, "K_j");
    float *V_j = sim_sram_take(h, p, 1, "V_j");
    float *S_ij = sim_sram_take(h, p, 1, "S_ij");
    float *O_i = sim_sram_take(h, p, 1, "O_i");
    float *m_i = sim_sram_take(h, p, 1, "m_i");
    float *l_i = sim_sram_take(h, p, 1, "l_i");
    if (h->failed)
        return -1;

    const int64_t hq = h->hq;        /* query heads in the block; head k's rows
                                        start at k N in Q, O, L and at k br on chip */

    /* 1-2: Q, O, L in T_r blocks of B_r rows; K, V in T_c blocks of B_c rows. */
    for (int64_t i = 0; i < T_r; i++) {                          /* 3 */
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        sim_at(h, 4, i, -1);
        for (int64_t k = 0; k < hq; k++)                         /* 4 */
            sim_load(h, SIM_Q, "Q_i", Q_i + k * br * d, k * N + r0, 0, br, d);
        sim_at(h, 5, i, -1);
        if (h->compute)                                          /* 5 */
            sim_state_empty(m_i, l_i, O_i, hq * br, d);
        const sim_range js = sim_visit_js(h, p, i);
        for (int64_t j = js.lo; j <= js.hi; j++) {               /* 6 */
            const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
            sim_at(h, 7, i, j);
            sim_load(h, SIM_K, "K_j", K_j, c0, 0, bc, d);        /* 7 */
            sim_load(h, SIM_V, "V_j", V_j, c0, 0, bc, d);
            h->steps++;
            sim_at(h, 8, i, j);
            if (h->compute)                                      /* 8 */
                fa2_line8(h, Q_i, K_j, S_ij, br, bc, r0, c0);
            sim_at(h, 9, i, j);
            if (h->compute)                                      /* 9, 10 */
                fa2_lines9_10(S_ij, V_j, O_i, m_i, l_i, hq * br, bc, d);
            sim_at(h, 10, i, j);
        }                                                        /* 11 */
        sim_at(h, 12, i, -1);
        if (h->compute) {
            for (int64_t r = 0; r < hq * br; r++) {
                ref_normalise_row(O_i + r * d, (int)d, l_i[r]);  /* 12 */
                m_i[r] = ref_lse(m_i[r], l_i[r]);                /* 13: L_i in m_i */
            }
        }
        sim_at(h, 14, i, -1);
        for (int64_t k = 0; k < hq; k++)                         /* 14 */
            sim_store(h, SIM_O, "O_i", O_i + k * br * d, k * N + r0, 0, br, d);
        sim_at(h, 15, i, -1);
        for (int64_t k = 0; k < hq; k++)                         /* 15 */
            sim_store(h, SIM_L, "m_i", m_i + k * br, k * N + r0, 0, br, 1);
    }                                                            /* 16 */
    sim_at(h, 17, -1, -1);
    sim_sram_release_all(h);
    return 0;                                                    /* 17 */
}
