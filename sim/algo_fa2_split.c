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
 * Pseudocode lines, as sim_at marks them for observers (the listing is
 * SPLIT_CODE below): 1 load Q_i and empty the split's state, 2 a key block
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
#include "sim_theory.h"

/* fasim's own line numbers (the papers have no split-KV listing). */
enum {
    SPLIT_L1_LOAD_Q = 1,
    SPLIT_L2_KV = 2,
    SPLIT_L3_WRITE_PARTIAL = 3,
    SPLIT_L4_MERGE = 4,
    SPLIT_L5_NORMALISE = 5,
    SPLIT_L6_RETURN = 6
};

/* Phase 1's arithmetic for one block pair (FA2 lines 8-10). */
static SIM_NOINLINE void split_step(const sim_hier *h, const float *Q_i, const float *K_j,
                                    const float *V_j, float *S_ij, float *O_i, float *m_i,
                                    float *l_i, int64_t br, int64_t bc, int64_t r0,
                                    int64_t c0)
{
    const int64_t d = h->sh.d;
    ref_simd_scores(Q_i, K_j, (int)br, (int)bc, (int)d, h->scale, S_ij);
    sim_mask_tile(h, S_ij, br, bc, r0, c0);
    float alpha[64];                            /* the rescaling of up to 64 rows at a time */
    for (int64_t a = 0; a < br; a += 64) {
        const int64_t n = sim_min64(64, br - a);
        for (int64_t r = a; r < a + n; r++) {
            alpha[r - a] = ref_simd_online_step(S_ij + r * bc, (int)bc, &m_i[r], &l_i[r]);
            ref_round_row(S_ij + r * bc, bc, h->p_round);  /* P~ as line 10 takes it */
        }
        ref_simd_pv_acc(O_i + a * d, (int)d, alpha, S_ij + a * bc, V_j, (int)n, (int)bc);
    }
}

/* Phase 1: every split's partial state of every query block. */
static int partials(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc, T_r = p->Tr, S = sim_run_S(&h->run);
    float *Q_i = sim_sram_take(h, p, 1, SIM_BUF_Q_i);
    float *K_j = sim_sram_take(h, p, 1, SIM_BUF_K_j);
    float *V_j = sim_sram_take(h, p, 1, SIM_BUF_V_j);
    float *S_ij = sim_sram_take(h, p, 1, SIM_BUF_S_ij);
    float *O_i = sim_sram_take(h, p, 1, SIM_BUF_Ot_i);
    float *m_i = sim_sram_take(h, p, 1, SIM_BUF_m_i);
    float *l_i = sim_sram_take(h, p, 1, SIM_BUF_l_i);
    if (h->failed)
        return -1;
    for (int64_t s = 0; s < S; s++) {
        const sim_range split = sim_split_js(s, S, p->Tc);
        h->split = s;
        for (int64_t i = 0; i < T_r; i++) {
            const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
            sim_at(h, SPLIT_L1_LOAD_Q, i, -1);
            sim_load(h, SIM_Q, SIM_BUF_Q_i, Q_i, r0, 0, br, d);
            if (h->compute)
                sim_state_empty(m_i, l_i, O_i, br, d);
            const sim_range js = sim_visit_js(h, p, i);
            const int64_t j0 = js.lo > split.lo ? js.lo : split.lo;
            const int64_t j1 = js.hi < split.hi ? js.hi : split.hi;
            for (int64_t j = j0; j <= j1; j++) {
                if (!sim_visited(h, i, j))
                    continue;                                    /* a block mask's zero */
                const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
                sim_at(h, SPLIT_L2_KV, i, j);
                sim_load(h, SIM_K, SIM_BUF_K_j, K_j, c0, 0, bc, d);
                sim_load(h, SIM_V, SIM_BUF_V_j, V_j, c0, 0, bc, d);
                h->steps++;
                if (h->compute)
                    split_step(h, Q_i, K_j, V_j, S_ij, O_i, m_i, l_i, br, bc, r0, c0);
            }
            sim_at(h, SPLIT_L3_WRITE_PARTIAL, i, -1);
            sim_store(h, SIM_Ot, SIM_BUF_Ot_i, O_i, s * N + r0, 0, br, d);
            sim_store(h, SIM_m, SIM_BUF_m_i, m_i, s * N + r0, 0, br, 1);
            sim_store(h, SIM_l, SIM_BUF_l_i, l_i, s * N + r0, 0, br, 1);
        }
    }
    h->split = -1;
    sim_sram_release_all(h);
    return 0;
}

/* Phase 2: the merge of the S partials of each query block. */
static int merge(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, d = h->sh.d, B_r = p->Br, S = sim_run_S(&h->run);
    float *Ot_s = sim_sram_take(h, p, 2, SIM_BUF_Ot_s);
    float *m_s = sim_sram_take(h, p, 2, SIM_BUF_m_s);
    float *l_s = sim_sram_take(h, p, 2, SIM_BUF_l_s);
    float *O_i = sim_sram_take(h, p, 2, SIM_BUF_O_i);
    float *m_i = sim_sram_take(h, p, 2, SIM_BUF_m_i);
    float *l_i = sim_sram_take(h, p, 2, SIM_BUF_l_i);
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        if (h->compute)
            sim_state_empty(m_i, l_i, O_i, br, d);
        for (int64_t s = 0; s < S; s++) {
            h->split = s;
            sim_at(h, SPLIT_L4_MERGE, i, -1);
            sim_load(h, SIM_Ot, SIM_BUF_Ot_s, Ot_s, s * N + r0, 0, br, d);
            sim_load(h, SIM_m, SIM_BUF_m_s, m_s, s * N + r0, 0, br, 1);
            sim_load(h, SIM_l, SIM_BUF_l_s, l_s, s * N + r0, 0, br, 1);
            h->steps++;
            if (h->compute)
                for (int64_t r = 0; r < br; r++)
                    ref_merge(m_i[r], l_i[r], O_i + r * d, m_s[r], l_s[r], Ot_s + r * d,
                              (int)d, &m_i[r], &l_i[r], O_i + r * d);
        }
        h->split = -1;
        sim_at(h, SPLIT_L5_NORMALISE, i, -1);
        if (h->compute)
            for (int64_t r = 0; r < br; r++) {
                ref_normalise_row(O_i + r * d, (int)d, l_i[r]);
                m_i[r] = ref_lse(m_i[r], l_i[r]);                /* L_i in m_i */
            }
        sim_store(h, SIM_O, SIM_BUF_O_i, O_i, r0, 0, br, d);
        sim_store(h, SIM_L, SIM_BUF_m_i, m_i, r0, 0, br, 1);
    }
    sim_sram_release_all(h);
    return 0;
}

static int split_run(sim_hier *h, const sim_plan *p)
{
    if (partials(h, p) != 0 || merge(h, p) != 0)
        return -1;
    sim_at(h, SPLIT_L6_RETURN, -1, -1);
    return 0;
}

/* Phase 1 is FA2's block with O~_i for O_i; phase 2 merges one split's
 * partial O~_s, m_s, l_s into O_i, m_i, l_i. */
static void split_plan(sim_plan *p, const sim_shape *sh, int e)
{
    const int64_t Br = p->Br, Bc = p->Bc, d = sh->d;
    sim_plan_add(p, SIM_BUF_Q_i, 1, Br, d, e, "query block");
    sim_plan_add(p, SIM_BUF_K_j, 1, Bc, d, e, "key block of the split");
    sim_plan_add(p, SIM_BUF_V_j, 1, Bc, d, e, "value block of the split");
    sim_plan_add(p, SIM_BUF_S_ij, 1, Br, Bc, 4, "scores, then P~");
    sim_plan_add(p, SIM_BUF_Ot_i, 1, Br, d, 4, "the split's partial output, fp32");
    sim_plan_add(p, SIM_BUF_m_i, 1, Br, 1, 4, "the split's running maxima");
    sim_plan_add(p, SIM_BUF_l_i, 1, Br, 1, 4, "the split's running sums");
    sim_plan_add(p, SIM_BUF_Ot_s, 2, Br, d, 4, "a split's partial output (merge)");
    sim_plan_add(p, SIM_BUF_m_s, 2, Br, 1, 4, "its maxima");
    sim_plan_add(p, SIM_BUF_l_s, 2, Br, 1, 4, "its sums");
    sim_plan_add(p, SIM_BUF_O_i, 2, Br, d, 4, "the merged output, fp32");
    sim_plan_add(p, SIM_BUF_m_i, 2, Br, 1, 4, "merged maxima; L_i at the end");
    sim_plan_add(p, SIM_BUF_l_i, 2, Br, 1, 4, "merged sums");
    p->nphases = 2;
}

/* Q_i in once per split, each split's partial O~_i, m_i, l_i out and read
 * back by the merge; O_i and L_i out once per i; K_j, V_j as in FA2. */
static void split_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_counts *out)
{
    const uint64_t N = (uint64_t)sh->N, Tr = (uint64_t)p->Tr, S = (uint64_t)sim_run_S(&p->run);
    const uint64_t Nd = sim_th_mul(k, N, (uint64_t)sh->d);
    sim_th_put(out, SIM_Q, SIM_RD, sim_th_mul(k, S, Nd), sim_th_mul(k, S, Tr), k);
    sim_th_put(out, SIM_O, SIM_WR, Nd, Tr, k);
    sim_th_put(out, SIM_L, SIM_WR, N, Tr, k);
    const sim_tensor part[3] = { SIM_Ot, SIM_m, SIM_l };
    for (int q = 0; q < 3; q++) {
        const uint64_t n = sim_th_mul(k, S, q == 0 ? Nd : N);
        sim_th_put(out, part[q], SIM_WR, n, sim_th_mul(k, S, Tr), k);
        sim_th_put(out, part[q], SIM_RD, n, sim_th_mul(k, S, Tr), k);
    }
    sim_fa2_kv_counts(k, p, sh, out);
}

/* The visited block pairs, and the merge's S T_r. */
static uint64_t split_steps(sim_chk *k, const sim_plan *p, const sim_shape *sh)
{
    return sim_th_add(k, sim_th_visited(k, sh, p->Br, p->Bc),
                      sim_th_mul(k, (uint64_t)sim_run_S(&p->run), (uint64_t)p->Tr));
}

/* Phase 1 visits FA2's pairs, split by split, with FA2's arithmetic per
 * pair (algo_fa2.c's fa2_flops), but no division: each split writes its
 * partial unnormalised. Phase 2, per query row, S merges (ref_merge) of
 * m = max(m_a, m_b) (1), l = e^(m_a - m) l_a + e^(m_b - m) l_b (7) and
 * O~ likewise (3 d), then O_i = O~ / l (d) and L_i = m + log l (2). */
static void split_flops(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_flops *out)
{
    uint64_t R;
    const double A = sim_th_pair_scores(k, p, sh, &R), d = (double)sh->d;
    const double S = (double)sim_run_S(&p->run);
    out->matmul = 4.0 * d * A;
    out->other = 4.0 * A + (2.0 * d + 5.0) * (double)R +
                 (S * (3.0 * d + 8.0) + d + 2.0) * (double)sh->N;
}

#define SO (SIM_VIEW_STATS | SIM_VIEW_OUT)
#define BA (SIM_VIEW_BEFORE | SIM_VIEW_AFTER)

/* FA2 per split, then the merge lemma. The view flags: 1 loads Q_i and
 * empties the split's state; 2 is FA2's online step on O~; 3 writes the
 * partial; 4 merges split s into the running state (emptied before the
 * first); 5 normalises, and m becomes L. */
static const sim_code_line SPLIT_CODE[] = {
    { SPLIT_L1_LOAD_Q, 0, "for s = 1..S, i = 1..T_r:", SO | SIM_VIEW_AFTER, SIM_HEAT_NONE,
      NULL, 0 },
    SIM_CODE(0, 1, "load Q_i; O~ = 0, l = 0,"),
    SIM_CODE(0, 1, "  m = -inf on chip"),
    { SPLIT_L2_KV, 1, "for j in split s:", SO | BA | SIM_VIEW_ALPHA, SIM_HEAT_NONE, NULL, 0 },
    SIM_CODE(0, 2, "load K_j, V_j; FA2's"),
    SIM_CODE(0, 2, "  lines 8-10 on O~, m, l"),
    { SPLIT_L3_WRITE_PARTIAL, 1, "write O~_i, m_i, l_i of s", SO | BA, SIM_HEAT_NONE, NULL, 0 },
    SIM_CODE(0, 0, "merge, for i = 1 .. T_r:"),
    { SPLIT_L4_MERGE, 1, "for s = 1 .. S: load", SO | BA | SIM_VIEW_ALPHA, SIM_HEAT_NONE,
      NULL, 0 },
    SIM_CODE(0, 2, "O~, m, l of s; m = max(m,"),
    SIM_CODE(0, 2, "m_s), rescale both, add"),
    { SPLIT_L5_NORMALISE, 1, "O_i = O~ / l, L_i = m +",
      SO | BA | SIM_VIEW_L_AFTER | SIM_VIEW_NORM_AFTER, SIM_HEAT_NONE, NULL, 0 },
    SIM_CODE(0, 1, "  log l; write O_i, L_i"),
    SIM_CODE(SPLIT_L6_RETURN, 0, "return O, L"),
};

const sim_loop sim_loop_fa2_split = {
    .algo = SIM_FA2,
    .pass = SIM_FWD,
    .split = 1,
    .name = "fa2",
    .title = "FlashAttention-2 (Dao 2023, Algorithm 1)",
    .code_title = "split-KV: FA2 per split, merge",
    .code = SPLIT_CODE,
    .ncode = (int)(sizeof SPLIT_CODE / sizeof SPLIT_CODE[0]),
    .merge_line = SPLIT_L4_MERGE,
    .hbm = 1u << SIM_Q | 1u << SIM_K | 1u << SIM_V | 1u << SIM_O | 1u << SIM_L |
           1u << SIM_Ot | 1u << SIM_m | 1u << SIM_l,
    .kv_loads = SIM_KV_PER_VISIT,
    .grid = SIM_GRID_SPLITS,
    .warps = SIM_WARPS_SPLIT_Q,
    .prefetch = 1,
    .bound = SIM_BOUND_FLASH,
    .reread = SIM_BLOCK_R,
    .mark = '2',
    .plan = split_plan,
    .run = split_run,
    .counts = split_counts,
    .steps = split_steps,
    .flops = split_flops,
};
