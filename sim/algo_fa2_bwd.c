/*
 * algo_fa2_bwd.c — FlashAttention-2's backward pass (Dao 2023, Algorithm 2),
 * with the paper's line numbers in the comments.
 *
 * Loop order: K/V blocks outer (line 5), Q blocks inner (line 8): dK_j and
 * dV_j are accumulated on chip and written once (line 18), while dQ_i is
 * accumulated in HBM by read-modify-write at every inner step (line 15).
 * P_ij is recomputed from the forward's logsumexp L alone (line 11:
 * P = exp(S_ij - L_i); docs/ARCHITECTURE.md, errors row 12: no online softmax here), and
 * D = rowsum(dO o O) is computed once, before the loops, and stored (line 4).
 *
 * Two departures from the letter of the pseudocode, both to avoid counting
 * transfers that the algorithm does not need:
 *   - line 9 lists O_i among the loads, but after line 4 nothing reads O
 *     (D_i stands in for it); fasim does not load it;
 *   - line 9 lists dQ_i and line 15 loads it again; fasim loads it once, at
 *     line 15 where it is updated.
 * And one addition for masking (sim.h): the inner loop runs over the query
 * blocks that see key block j; a key block no query sees is neither loaded
 * nor computed, but its dK_j, dV_j are still written (as zeros: line 7's
 * initial values), since Algorithm 2 initialises dK, dV nowhere else.
 *
 * Shapes: Q, O, dO, dQ (N, d); K, V, dK, dV (N_k, d); L, D (N); Q_i, O_i,
 * dO_i, dQ_i (B_r, d); K_j, V_j, dK_j, dV_j (B_c, d); S_ij, dP_ij (B_r, B_c);
 * L_i, D_i (B_r). Row-major. The scale tau = 1/sqrt(d) multiplies S, dQ, dK
 * (Algorithm 2 leaves it out, as its forward does).
 */
#include "sim_hier.h"

/* Lines 10-14 on chip for one block pair: S_ij, P_ij (in S_ij's place),
 * dV_j += P_ij^T dO_i, dP_ij, and dS_ij (in dP_ij's place). */
static SIM_NOINLINE void fa2_bwd_lines10_14(const sim_hier *h, const float *Q_i,
                                            const float *K_j, const float *V_j,
                                            const float *dO_i, const float *L_i,
                                            const float *D_i, float *S_ij, float *dP_ij,
                                            float *dV_j, int64_t br, int64_t bc, int64_t r0,
                                            int64_t c0)
{
    const int64_t d = h->sh.d;
    ref_tile_scores(Q_i, K_j, (int)br, (int)bc, (int)d, h->scale, S_ij);     /* 10 */
    sim_mask_tile(h, S_ij, br, bc, r0, c0);
    for (int64_t r = 0; r < br; r++)                                         /* 11 */
        ref_exp_lse_row(S_ij + r * bc, (int)bc, L_i[r]);
    ref_tile_acc_tn(dV_j, S_ij, dO_i, (int)br, (int)bc, (int)d, 1.0f);       /* 12 */
    ref_tile_scores(dO_i, V_j, (int)br, (int)bc, (int)d, 1.0f, dP_ij);       /* 13 */
    ref_tile_ds(S_ij, dP_ij, D_i, (int)br, (int)bc, dP_ij);                  /* 14 */
}

/* Lines 3-4: dQ = 0 in HBM; D = rowsum(dO o O), one row block at a time. */
static int lines3_4(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, d = h->sh.d, B_r = p->Br;
    float *O_i = sim_sram_take(h, p, 1, "O_i");
    float *dO_i = sim_sram_take(h, p, 1, "dO_i");
    float *D_i = sim_sram_take(h, p, 1, "D_i");
    if (h->failed)
        return -1;
    /* Line 3's zeros leave from O_i's buffer, before line 4 fills it. */
    sim_at(h, 3, -1, -1);
    if (h->compute)
        for (int64_t x = 0; x < B_r * d; x++)
            O_i[x] = 0.0f;
    for (int64_t i = 0; i < p->Tr; i++)
        sim_store(h, SIM_dQ, "O_i", O_i, i * B_r, 0, sim_min64(B_r, N - i * B_r), d);
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        sim_at(h, 4, i, -1);
        sim_load(h, SIM_O, "O_i", O_i, r0, 0, br, d);
        sim_load(h, SIM_dO, "dO_i", dO_i, r0, 0, br, d);
        h->steps++;
        if (h->compute)
            for (int64_t r = 0; r < br; r++)
                D_i[r] = ref_row_dot(dO_i + r * d, O_i + r * d, (int)d);
        sim_store(h, SIM_D, "D_i", D_i, r0, 0, br, 1);
    }
    sim_sram_release_all(h);
    return 0;
}

int sim_algo_fa2_bwd(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc, T_c = p->Tc;

    /* 1-2: Q, O, dO, L in T_r blocks of B_r rows; K, V in T_c blocks of B_c. */
    if (lines3_4(h, p) != 0)
        return -1;
    float *K_j = sim_sram_take(h, p, 2, "K_j");
    float *V_j = sim_sram_take(h, p, 2, "V_j");
    float *dK_j = sim_sram_take(h, p, 2, "dK_j");
    float *dV_j = sim_sram_take(h, p, 2, "dV_j");
    float *Q_i = sim_sram_take(h, p, 2, "Q_i");
    float *dO_i = sim_sram_take(h, p, 2, "dO_i");
    float *dQ_i = sim_sram_take(h, p, 2, "dQ_i");
    float *L_i = sim_sram_take(h, p, 2, "L_i");
    float *D_i = sim_sram_take(h, p, 2, "D_i");
    float *S_ij = sim_sram_take(h, p, 2, "S_ij");
    float *dP_ij = sim_sram_take(h, p, 2, "dP_ij");
    if (h->failed)
        return -1;
    for (int64_t j = 0; j < T_c; j++) {                              /* 5 */
        const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
        const sim_range is = sim_visit_is(h, p, j);
        if (is.lo <= is.hi) {
            sim_at(h, 6, -1, j);
            sim_load(h, SIM_K, "K_j", K_j, c0, 0, bc, d);            /* 6 */
            sim_load(h, SIM_V, "V_j", V_j, c0, 0, bc, d);
        }
        sim_at(h, 7, -1, j);
        if (h->compute)                                              /* 7 */
            for (int64_t x = 0; x < bc * d; x++)
                dK_j[x] = dV_j[x] = 0.0f;
        for (int64_t i = is.lo; i <= is.hi; i++) {                   /* 8 */
            const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
            sim_at(h, 9, i, j);
            sim_load(h, SIM_Q, "Q_i", Q_i, r0, 0, br, d);            /* 9 */
            sim_load(h, SIM_dO, "dO_i", dO_i, r0, 0, br, d);
            sim_load(h, SIM_L, "L_i", L_i, r0, 0, br, 1);
            sim_load(h, SIM_D, "D_i", D_i, r0, 0, br, 1);
            h->steps++;
            sim_at(h, 10, i, j);
            if (h->compute)                                          /* 10-14 */
                fa2_bwd_lines10_14(h, Q_i, K_j, V_j, dO_i, L_i, D_i, S_ij, dP_ij, dV_j, br,
                                   bc, r0, c0);
            sim_at(h, 15, i, j);
            sim_load(h, SIM_dQ, "dQ_i", dQ_i, r0, 0, br, d);         /* 15 */
            if (h->compute)
                ref_tile_acc_nn(dQ_i, dP_ij, K_j, (int)br, (int)bc, (int)d, h->scale);
            sim_store(h, SIM_dQ, "dQ_i", dQ_i, r0, 0, br, d);
            sim_at(h, 16, i, j);
            if (h->compute)                                          /* 16 */
                ref_tile_acc_tn(dK_j, dP_ij, Q_i, (int)br, (int)bc, (int)d, h->scale);
        }                                                            /* 17 */
        sim_at(h, 18, -1, j);
        sim_store(h, SIM_dK, "dK_j", dK_j, c0, 0, bc, d);            /* 18 */
        sim_store(h, SIM_dV, "dV_j", dV_j, c0, 0, bc, d);
    }                                                                /* 19 */
    sim_at(h, 20, -1, -1);
    sim_sram_release_all(h);
    return 0;                                                        /* 20 */
}
