/*
 * algo_naive.c — standard attention (FlashAttention paper, Algorithm 0), with
 * its line numbers in the comments:
 *
 *   1: Load Q, K by blocks from HBM, compute S = Q K^T, write S to HBM.
 *   2: Read S from HBM, compute P = softmax(S), write P to HBM.
 *   3: Load P and V by blocks from HBM, compute O = P V, write O to HBM.
 *
 * The matrix products are tiled (B_r x B_c) so that SRAM is respected. The
 * softmax reads whole rows of S when one fits in SRAM (one pass); otherwise it
 * makes the three passes real code needs: row maxima, row sums, normalise.
 * Both give the same bits: the sum runs over the row in the same order.
 * With causal masking, S and P are still materialised in full (masked scores
 * are -inf, their probabilities 0), as standard implementations do.
 *
 * S and P are stored in the run's dtype, as the standard implementation does;
 * that rounding is part of why its error is larger than FlashAttention's.
 *
 * Shapes: Q, O (N, d); K, V (N_k, d); S, P (N, N_k); Q_i, O_i (B_r, d); K_j,
 * V_j (B_c, d); S_ij, P_ij (B_r, B_c); S_rows (B_s, N_k). Row-major. N_k = N
 * unless the keys are longer (decoding); masked scores follow sim.h's mask.
 */
#include "sim_hier.h"

/* Line 1: S = scale * Q K^T, tile by tile. */
static int line1_scores(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc;
    float *Q_i = sim_sram_take(h, p, 1, "Q_i");
    float *K_j = sim_sram_take(h, p, 1, "K_j");
    float *S_ij = sim_sram_take(h, p, 1, "S_ij");
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        sim_at(h, 1, i, -1);
        sim_load(h, SIM_Q, "Q_i", Q_i, r0, 0, br, d);
        for (int64_t j = 0; j < p->Tc; j++) {
            const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
            sim_at(h, 1, i, j);
            sim_load(h, SIM_K, "K_j", K_j, c0, 0, bc, d);
            h->steps++;
            if (h->compute) {
                ref_tile_scores(Q_i, K_j, (int)br, (int)bc, (int)d, h->scale, S_ij);
                sim_mask_tile(h, S_ij, br, bc, r0, c0);
            }
            sim_store(h, SIM_S, "S_ij", S_ij, r0, c0, br, bc);
        }
    }
    sim_sram_release_all(h);
    return 0;
}

/* Line 2, one pass: B_s whole rows of S at a time. */
static int line2_rows(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), B_s = p->Bs_r;
    float *S_rows = sim_sram_take(h, p, 2, "S_rows");
    float *m = sim_sram_take(h, p, 2, "m");
    float *l = sim_sram_take(h, p, 2, "l");
    if (h->failed)
        return -1;
    for (int64_t i = 0; i * B_s < N; i++) {
        const int64_t r0 = i * B_s, rows = sim_min64(B_s, N - r0);
        sim_at(h, 2, i, -1);
        sim_load(h, SIM_S, "S_rows", S_rows, r0, 0, rows, N_k);
        h->steps++;
        if (h->compute) {
            for (int64_t r = 0; r < rows; r++) {
                float *s = S_rows + r * N_k;
                m[r] = ref_row_max(s, (int)N_k);
                l[r] = ref_exp_shift_sum(s, (int)N_k, m[r]);
                float inv_l = 1.0f / l[r];
                for (int64_t c = 0; c < N_k; c++)
                    s[c] = s[c] * inv_l;
            }
        }
        sim_store(h, SIM_P, "S_rows", S_rows, r0, 0, rows, N_k);
    }
    sim_sram_release_all(h);
    return 0;
}

/* Line 2, three passes over B_r x B_c tiles when a row does not fit. */
static int line2_three_pass(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), B_r = p->Br, B_c = p->Bc;
    float *S_ij = sim_sram_take(h, p, 2, "S_ij");
    float *m_i = sim_sram_take(h, p, 2, "m_i");
    float *l_i = sim_sram_take(h, p, 2, "l_i");
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        for (int pass = 1; pass <= 3; pass++) {
            if (h->compute && pass == 1)
                for (int64_t r = 0; r < br; r++) {
                    m_i[r] = -REF_INF;
                    l_i[r] = 0.0f;
                }
            for (int64_t j = 0; j < p->Tc; j++) {
                const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
                sim_at(h, 2, i, j);
                sim_load(h, SIM_S, "S_ij", S_ij, r0, c0, br, bc);
                h->steps++;
                if (h->compute) {
                    for (int64_t r = 0; r < br; r++) {
                        float *s = S_ij + r * bc;
                        if (pass == 1) {             /* row maxima */
                            float mb = ref_row_max(s, (int)bc);
                            m_i[r] = mb > m_i[r] ? mb : m_i[r];
                        } else if (pass == 2) {      /* row sums against the max */
                            l_i[r] = ref_exp_sum(s, (int)bc, m_i[r], l_i[r]);
                        } else {                     /* normalise */
                            ref_exp_normalise(s, s, (int)bc, m_i[r], 1.0f / l_i[r]);
                        }
                    }
                }
                if (pass == 3)
                    sim_store(h, SIM_P, "S_ij", S_ij, r0, c0, br, bc);
            }
        }
    }
    sim_sram_release_all(h);
    return 0;
}

/* Line 3: O = P V, tile by tile, accumulated in fp32 on chip. */
static int line3_output(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc;
    float *P_ij = sim_sram_take(h, p, 3, "P_ij");
    float *V_j = sim_sram_take(h, p, 3, "V_j");
    float *O_i = sim_sram_take(h, p, 3, "O_i");
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        sim_at(h, 3, i, -1);
        if (h->compute)
            for (int64_t x = 0; x < br * d; x++)
                O_i[x] = 0.0f;
        for (int64_t j = 0; j < p->Tc; j++) {
            const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
            sim_at(h, 3, i, j);
            sim_load(h, SIM_P, "P_ij", P_ij, r0, c0, br, bc);
            sim_load(h, SIM_V, "V_j", V_j, c0, 0, bc, d);
            h->steps++;
            if (h->compute)
                for (int64_t r = 0; r < br; r++)
                    ref_pv_acc_row(O_i + r * d, (int)d, 1.0f, P_ij + r * bc, V_j, (int)bc);
        }
        sim_store(h, SIM_O, "O_i", O_i, r0, 0, br, d);
    }
    sim_sram_release_all(h);
    return 0;
}

int sim_algo_naive(sim_hier *h, const sim_plan *p)
{
    if (line1_scores(h, p) != 0)
        return -1;
    if ((p->softmax_passes == 1 ? line2_rows(h, p) : line2_three_pass(h, p)) != 0)
        return -1;
    if (line3_output(h, p) != 0)
        return -1;
    sim_at(h, 4, -1, -1);                                        /* 4: return O */
    return 0;
}
