/*
 * algo_fa1.c — FlashAttention forward pass (Dao et al. 2022, Algorithm 1),
 * with the paper's line numbers in the comments.
 *
 * Loop order: K/V blocks outer (line 5), Q blocks inner (line 7). The running
 * output and statistics live in HBM: line 2 initialises O, l, m there, line 8
 * loads Q_i, O_i, l_i, m_i at every inner step and lines 12-13 write O_i, l_i,
 * m_i back. So K and V are read once, while Q is read and O, l, m are read and
 * written T_c times. O is stored in the run's dtype each time, as the output
 * tensor is; l and m are fp32.
 *
 * Line 1's block sizes are the plan's (sim_plan_choose, "paper" kind gives
 * line 1 literally). The softmax scale 1/sqrt(d) is applied to S_ij (the paper
 * leaves it out of Algorithm 1 and puts it in Algorithm 2).
 *
 * Masking (causal, a sliding window, keys longer than queries: sim.h): the
 * inner loop runs over the query blocks that see key block j, and a key block
 * that no query sees (a window leaves some) is skipped, K_j and V_j unloaded.
 *
 * Shapes: Q, O (N, d); K, V (N_k, d); l, m (N); Q_i, O_i (B_r, d); K_j, V_j
 * (B_c, d); S_ij (B_r, B_c); l_i, m_i and the per-block statistics (B_r).
 * Row-major.
 */
#include "sim_hier.h"

int sim_algo_fa1(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc, T_r = p->Tr, T_c = p->Tc;

    float *K_j = sim_sram_take(h, p, 1, "K_j");
    float *V_j = sim_sram_take(h, p, 1, "V_j");
    float *Q_i = sim_sram_take(h, p, 1, "Q_i");
    float *O_i = sim_sram_take(h, p, 1, "O_i");
    float *S_ij = sim_sram_take(h, p, 1, "S_ij");
    float *m_i = sim_sram_take(h, p, 1, "m_i");
    float *l_i = sim_sram_take(h, p, 1, "l_i");
    /* m~_ij, l~_ij, m_new, l_new: the paper's on-chip vectors of lines 10-11.
     * ref_fa1_step_row computes them one row at a time, so their storage is
     * reserved (and charged) but the values pass through registers. */
    (void)sim_sram_take(h, p, 1, "m~_ij");
    (void)sim_sram_take(h, p, 1, "l~_ij");
    (void)sim_sram_take(h, p, 1, "m_new");
    (void)sim_sram_take(h, p, 1, "l_new");
    if (h->failed)
        return -1;

    /* 2: O = 0, l = 0, m = -inf in HBM, written block by block from SRAM. */
    sim_at(h, 2, -1, -1);
    for (int64_t i = 0; i < T_r; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        if (h->compute) {
            for (int64_t x = 0; x < br * d; x++)
                O_i[x] = 0.0f;
            for (int64_t r = 0; r < br; r++) {
                l_i[r] = 0.0f;
                m_i[r] = -REF_INF;
            }
        }
        sim_store(h, SIM_O, "O_i", O_i, r0, 0, br, d);
        sim_store(h, SIM_l, "l_i", l_i, r0, 0, br, 1);
        sim_store(h, SIM_m, "m_i", m_i, r0, 0, br, 1);
    }
    /* 3-4: Q, O, l, m in T_r blocks of B_r rows; K, V in T_c blocks of B_c. */
    for (int64_t j = 0; j < T_c; j++) {                          /* 5 */
        const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
        const sim_range is = sim_visit_is(h, p, j);
        if (is.lo > is.hi)
            continue;                                            /* no query sees K_j */
        sim_at(h, 6, -1, j);
        sim_load(h, SIM_K, "K_j", K_j, c0, 0, bc, d);            /* 6 */
        sim_load(h, SIM_V, "V_j", V_j, c0, 0, bc, d);
        for (int64_t i = is.lo; i <= is.hi; i++) {               /* 7 */
            const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
            sim_at(h, 8, i, j);
            sim_load(h, SIM_Q, "Q_i", Q_i, r0, 0, br, d);        /* 8 */
            sim_load(h, SIM_O, "O_i", O_i, r0, 0, br, d);
            sim_load(h, SIM_l, "l_i", l_i, r0, 0, br, 1);
            sim_load(h, SIM_m, "m_i", m_i, r0, 0, br, 1);
            h->steps++;
            sim_at(h, 9, i, j);
            if (h->compute) {                                    /* 9 */
                ref_tile_scores(Q_i, K_j, (int)br, (int)bc, (int)d, h->scale, S_ij);
                sim_mask_tile(h, S_ij, br, bc, r0, c0);
            }
            sim_at(h, 10, i, j);
            if (h->compute) {                                    /* 10, 11, 12 */
                for (int64_t r = 0; r < br; r++)
                    ref_fa1_step_row(S_ij + r * bc, (int)bc, V_j, (int)d,
                                     O_i + r * d, &m_i[r], &l_i[r]);
            }
            sim_at(h, 12, i, j);
            sim_store(h, SIM_O, "O_i", O_i, r0, 0, br, d);       /* 12 */
            sim_at(h, 13, i, j);
            sim_store(h, SIM_l, "l_i", l_i, r0, 0, br, 1);       /* 13 */
            sim_store(h, SIM_m, "m_i", m_i, r0, 0, br, 1);
        }                                                        /* 14 */
    }                                                            /* 15 */
    sim_at(h, 16, -1, -1);
    sim_sram_release_all(h);
    return 0;                                                    /* 16 */
}
