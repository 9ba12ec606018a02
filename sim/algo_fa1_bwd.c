/*
 * algo_fa1_bwd.c — FlashAttention's backward pass (Dao et al. 2022, Algorithm
 * 4), with the paper's line numbers in the comments. fasim has no dropout
 * (p_drop = 0), so lines 1, 14, 15 and 18 are identities and are left out.
 *
 * Loop order: K/V blocks outer (line 6), Q blocks inner (line 9), as in the
 * forward pass. K_j, V_j and the accumulators dK_j, dV_j stay on chip for the
 * inner loop; line 10 loads Q_i, O_i, dO_i, dQ_i, l_i, m_i at every inner
 * step, P_ij is recomputed from the forward's statistics (line 13:
 * P = diag(l_i)^-1 exp(S_ij - m_i), not an online softmax: docs/ARCHITECTURE.md, errors row 12),
 * D_i = rowsum(dO_i o O_i) is recomputed on chip (line 19), and line 21
 * writes dQ_i back to HBM at every step. Line 5 initialises dQ, dK and dV to
 * zero in HBM (writes, as the forward's line 2 is counted).
 *
 * Masking (sim.h): the inner loop runs over the query blocks that see key
 * block j; a key block no query sees is skipped (its dK_j, dV_j stay line 5's
 * zeros).
 *
 * Shapes: Q, O, dO, dQ (N, d); K, V, dK, dV (N_k, d); l, m (N); Q_i, O_i,
 * dO_i, dQ_i (B_r, d); K_j, V_j, dK_j, dV_j (B_c, d); S_ij, dP_ij (B_r, B_c);
 * l_i, m_i, D_i (B_r). Row-major. The scale tau = 1/sqrt(d).
 */
#include "sim_hier.h"

/* Lines 11-20 on chip for one block pair: S_ij, the mask, P_ij (in S_ij's
 * place), dV_j += P_ij^T dO_i, dP_ij, D_i, and dS_ij (in dP_ij's place). */
static SIM_NOINLINE void fa1_bwd_lines11_20(const sim_hier *h, const float *Q_i,
                                            const float *K_j, const float *V_j,
                                            const float *O_i, const float *dO_i,
                                            const float *l_i, const float *m_i, float *S_ij,
                                            float *dP_ij, float *D_i, float *dV_j, int64_t br,
                                            int64_t bc, int64_t r0, int64_t c0)
{
    const int64_t d = h->sh.d;
    ref_tile_scores(Q_i, K_j, (int)br, (int)bc, (int)d, h->scale, S_ij);     /* 11 */
    sim_mask_tile(h, S_ij, br, bc, r0, c0);                                  /* 12 */
    for (int64_t r = 0; r < br; r++)                                         /* 13 */
        ref_exp_normalise(S_ij + r * bc, S_ij + r * bc, (int)bc, m_i[r],
                          l_i[r] > 0.0f ? 1.0f / l_i[r] : 0.0f);
    ref_tile_acc_tn(dV_j, S_ij, dO_i, (int)br, (int)bc, (int)d, 1.0f);       /* 16 */
    ref_tile_scores(dO_i, V_j, (int)br, (int)bc, (int)d, 1.0f, dP_ij);       /* 17 */
    for (int64_t r = 0; r < br; r++)                                         /* 19 */
        D_i[r] = ref_row_dot(dO_i + r * d, O_i + r * d, (int)d);
    ref_tile_ds(S_ij, dP_ij, D_i, (int)br, (int)bc, dP_ij);                  /* 20 */
}

int sim_algo_fa1_bwd(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc, T_r = p->Tr, T_c = p->Tc;

    float *K_j = sim_sram_take(h, p, 1, "K_j");
    float *V_j = sim_sram_take(h, p, 1, "V_j");
    float *dK_j = sim_sram_take(h, p, 1, "dK_j");
    float *dV_j = sim_sram_take(h, p, 1, "dV_j");
    float *Q_i = sim_sram_take(h, p, 1, "Q_i");
    float *O_i = sim_sram_take(h, p, 1, "O_i");
    float *dO_i = sim_sram_take(h, p, 1, "dO_i");
    float *dQ_i = sim_sram_take(h, p, 1, "dQ_i");
    float *l_i = sim_sram_take(h, p, 1, "l_i");
    float *m_i = sim_sram_take(h, p, 1, "m_i");
    float *S_ij = sim_sram_take(h, p, 1, "S_ij");
    float *dP_ij = sim_sram_take(h, p, 1, "dP_ij");
    float *D_i = sim_sram_take(h, p, 1, "D_i");
    if (h->failed)
        return -1;

    /* 2-4: block sizes (the plan's), Q, O, dO, l, m in T_r blocks; K, V in T_c. */
    /* 5: dQ = 0, dK = 0, dV = 0 in HBM, written block by block from SRAM. */
    sim_at(h, 5, -1, -1);
    if (h->compute) {
        for (int64_t x = 0; x < B_r * d; x++)
            dQ_i[x] = 0.0f;
        for (int64_t x = 0; x < B_c * d; x++)
            dK_j[x] = dV_j[x] = 0.0f;
    }
    for (int64_t i = 0; i < T_r; i++)
        sim_store(h, SIM_dQ, "dQ_i", dQ_i, i * B_r, 0, sim_min64(B_r, N - i * B_r), d);
    for (int64_t j = 0; j < T_c; j++) {
        sim_store(h, SIM_dK, "dK_j", dK_j, j * B_c, 0, sim_min64(B_c, N_k - j * B_c), d);
        sim_store(h, SIM_dV, "dV_j", dV_j, j * B_c, 0, sim_min64(B_c, N_k - j * B_c), d);
    }
    for (int64_t j = 0; j < T_c; j++) {                              /* 6 */
        const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
        const sim_range is = sim_visit_is(h, p, j);
        if (is.lo > is.hi)
            continue;                                                /* no query sees K_j */
        sim_at(h, 7, -1, j);
        sim_load(h, SIM_K, "K_j", K_j, c0, 0, bc, d);                /* 7 */
        sim_load(h, SIM_V, "V_j", V_j, c0, 0, bc, d);
        sim_at(h, 8, -1, j);
        if (h->compute)                                              /* 8 */
            for (int64_t x = 0; x < bc * d; x++)
                dK_j[x] = dV_j[x] = 0.0f;
        for (int64_t i = is.lo; i <= is.hi; i++) {                   /* 9 */
            const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
            sim_at(h, 10, i, j);
            sim_load(h, SIM_Q, "Q_i", Q_i, r0, 0, br, d);            /* 10 */
            sim_load(h, SIM_O, "O_i", O_i, r0, 0, br, d);
            sim_load(h, SIM_dO, "dO_i", dO_i, r0, 0, br, d);
            sim_load(h, SIM_dQ, "dQ_i", dQ_i, r0, 0, br, d);
            sim_load(h, SIM_l, "l_i", l_i, r0, 0, br, 1);
            sim_load(h, SIM_m, "m_i", m_i, r0, 0, br, 1);
            h->steps++;
            sim_at(h, 11, i, j);
            if (h->compute)                                          /* 11-20 */
                fa1_bwd_lines11_20(h, Q_i, K_j, V_j, O_i, dO_i, l_i, m_i, S_ij, dP_ij, D_i,
                                   dV_j, br, bc, r0, c0);
            sim_at(h, 21, i, j);
            if (h->compute)                                          /* 21 */
                ref_tile_acc_nn(dQ_i, dP_ij, K_j, (int)br, (int)bc, (int)d, h->scale);
            sim_store(h, SIM_dQ, "dQ_i", dQ_i, r0, 0, br, d);
            sim_at(h, 22, i, j);
            if (h->compute)                                          /* 22 */
                ref_tile_acc_tn(dK_j, dP_ij, Q_i, (int)br, (int)bc, (int)d, h->scale);
        }                                                            /* 23 */
        sim_at(h, 24, -1, j);
        sim_store(h, SIM_dK, "dK_j", dK_j, c0, 0, bc, d);            /* 24 */
        sim_store(h, SIM_dV, "dV_j", dV_j, c0, 0, bc, d);
    }                                                                /* 25 */
    sim_at(h, 26, -1, -1);
    sim_sram_release_all(h);
    return 0;                                                        /* 26 */
}
