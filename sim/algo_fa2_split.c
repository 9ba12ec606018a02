/*
 * algo_fa2_split.c — FlashAttention-2's forward pass with the keys split
 * (split-KV, "Flash-Decoding"): for decoding, where N_q is 1 or a few rows,
 * FA2's loop over query blocks gives a GPU one or two thread blocks of work.
 * Splitting the T_c key blocks into S contiguous parts gives S times as many,
 * at the price of a partial state per split in HBM and a merge.
 *
 *   Phase 1, for each split s and query block i (FA2's loop over i, its inner
 *     loop over the key blocks j of split s only, sim_split_js):
 *       load Q_i; m = -inf, l = 0, O~ = 0 on chip;
 *       for j in split s: load K_j, V_j; S_ij = Q_i K_j^T; the online step
 *         (FA2 lines 7-10, unchanged);
 *       write the partial state O~_i^(s) (unnormalised, fp32), m_i^(s), l_i^(s).
 *   Phase 2, the merge, for each query block i:
 *       for s = 0 .. S-1: load O~_i^(s), m_i^(s), l_i^(s) and merge it into
 *         the running (m, l, O~) with the merge lemma (ref_merge):
 *         m = max(m_a, m_b), l = e^(m_a - m) l_a + e^(m_b - m) l_b, likewise O~;
 *       O_i = O~ / l, L_i = m + log l; write O_i, L_i.
 * The merge's order is s = 0, 1, ..., so the result is deterministic; it
 * equals unsplit FA2 to rounding (the sums are grouped differently).
 *
 * Pseudocode lines, as sim_at marks them for observers (the view's listing
 * is in viz_model.c): 1 load Q_i and empty the split's state, 2 a key block
 * of the split, 3 write the partial, 4 merge split s, 5 normalise and write
 * O_i, L_i, 6 return. h->split names the split in hand at lines 1-4.
 *
 * Every split writes its partial for every query block, even one whose keys
 * the mask hides from that block (then m = -inf, l = 0, O~ = 0, which the
 * merge lemma treats as empty): the merge reads S partials per block, as
 * split-KV kernels do. Q_i is read once per split.
 *
 * Shapes: Q, O (N, d); K, V (N_k, d); L (N); O~ (S N, d), m, l (S N): split
 * s's rows are s N .. s N + N - 1. Q_i, O~_i (B_r, d); K_j, V_j (B_c, d);
 * S_ij (B_r, B_c); m_i, l_i (B_r). Row-major.
 */
#include "sim_hier.h"

/* Phase 1's arithmetic for one block pair (FA2 lines 8-10). */
static SIM_NOINLINE void split_step(const sim_hier *h, const float *Q_i, const float *K_j,
                                    const float *V_j, float *S_ij, float *O_i, float *m_i,
                                    float *l_i, int64_t br, int64_t bc, int64_t r0,
                                    int64_t c0)
{
    const int64_t d = h->sh.d;
    ref_tile_scores(Q_i, K_j, (int)br, (int)bc, (int)d, h->scale, S_ij);
    sim_mask_tile(h, S_ij, br, bc, r0, c0);
    for (int64_t r = 0; r < br; r++) {
        float alpha = ref_online_step(S_ij + r * bc, (int)bc, &m_i[r], &l_i[r]);
        ref_pv_acc_row(O_i + r * d, (int)d, alpha, S_ij + r * bc, V_j, (int)bc);
    }
}

/* Phase 1: every split's partial state of every query block. */
static int partials(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc, T_r = p->Tr, S = sim_shape_S(&h->sh);
    float *Q_i = sim_sram_take(h, p, 1, "Q_i");
    float *K_j = sim_sram_take(h, p, 1, "K_j");
    float *V_j = sim_sram_take(h, p, 1, "V_j");
    float *S_ij = sim_sram_take(h, p, 1, "S_ij");
    float *O_i = sim_sram_take(h, p, 1, "O~_i");
    float *m_i = sim_sram_take(h, p, 1, "m_i");
    float *l_i = sim_sram_take(h, p, 1, "l_i");
    if (h->failed)
        return -1;
    for (int64_t s = 0; s < S; s++) {
        const sim_range split = sim_split_js(s, S, p->Tc);
        h->split = s;
        for (int64_t i = 0; i < T_r; i++) {
            const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
            sim_at(h, 1, i, -1);
            sim_load(h, SIM_Q, "Q_i", Q_i, r0, 0, br, d);
            if (h->compute)
                sim_state_empty(m_i, l_i, O_i, br, d);
            const sim_range js = sim_visit_js(h, p, i);
            const int64_t j0 = js.lo > split.lo ? js.lo : split.lo;
            const int64_t j1 = js.hi < split.hi ? js.hi : split.hi;
            for (int64_t j = j0; j <= j1; j++) {
                const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
                sim_at(h, 2, i, j);
                sim_load(h, SIM_K, "K_j", K_j, c0, 0, bc, d);
                sim_load(h, SIM_V, "V_j", V_j, c0, 0, bc, d);
                h->steps++;
                if (h->compute)
                    split_step(h, Q_i, K_j, V_j, S_ij, O_i, m_i, l_i, br, bc, r0, c0);
            }
            sim_at(h, 3, i, -1);
            sim_store(h, SIM_Ot, "O~_i", O_i, s * N + r0, 0, br, d);
            sim_store(h, SIM_m, "m_i", m_i, s * N + r0, 0, br, 1);
            sim_store(h, SIM_l, "l_i", l_i, s * N + r0, 0, br, 1);
        }
    }
    h->split = -1;
    sim_sram_release_all(h);
    return 0;
}

/* Phase 2: the merge of the S partials of each query block. */
static int merge(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, d = h->sh.d, B_r = p->Br, S = sim_shape_S(&h->sh);
    float *Ot_s = sim_sram_take(h, p, 2, "O~_s");
    float *m_s = sim_sram_take(h, p, 2, "m_s");
    float *l_s = sim_sram_take(h, p, 2, "l_s");
    float *O_i = sim_sram_take(h, p, 2, "O_i");
    float *m_i = sim_sram_take(h, p, 2, "m_i");
    float *l_i = sim_sram_take(h, p, 2, "l_i");
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        if (h->compute)
            sim_state_empty(m_i, l_i, O_i, br, d);
        for (int64_t s = 0; s < S; s++) {
            h->split = s;
            sim_at(h, 4, i, -1);
            sim_load(h, SIM_Ot, "O~_s", Ot_s, s * N + r0, 0, br, d);
            sim_load(h, SIM_m, "m_s", m_s, s * N + r0, 0, br, 1);
            sim_load(h, SIM_l, "l_s", l_s, s * N + r0, 0, br, 1);
            h->steps++;
            if (h->compute)
                for (int64_t r = 0; r < br; r++)
                    ref_merge(m_i[r], l_i[r], O_i + r * d, m_s[r], l_s[r], Ot_s + r * d,
                              (int)d, &m_i[r], &l_i[r], O_i + r * d);
        }
        h->split = -1;
        sim_at(h, 5, i, -1);
        if (h->compute)
            for (int64_t r = 0; r < br; r++) {
                ref_normalise_row(O_i + r * d, (int)d, l_i[r]);
                m_i[r] = ref_lse(m_i[r], l_i[r]);                /* L_i in m_i */
            }
        sim_store(h, SIM_O, "O_i", O_i, r0, 0, br, d);
        sim_store(h, SIM_L, "m_i", m_i, r0, 0, br, 1);
    }
    sim_sram_release_all(h);
    return 0;
}

int sim_algo_fa2_split(sim_hier *h, const sim_plan *p)
{
    if (partials(h, p) != 0 || merge(h, p) != 0)
        return -1;
    sim_at(h, 6, -1, -1);
    return 0;
}
