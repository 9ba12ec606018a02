/*
 * algo_fa1.c — FlashAttention forward pass (Dao et al. 2022, Algorithm 1),
 * with the paper's line numbers in the comments.
 *
 * Loop order: K/V blocks outer (line 5), Q blocks inner (line 7). The running
 * output and statistics live in HBM: line 2 initialises O, l, m there, line 8
 * loads Q_i, O_i, l_i, m_i at every inner step and lines 12-13 write O_i, l_i,
 * m_i back. So K and V are read once, while Q is read and O, l, m are read and
 * written T_c times. l and m are fp32. The running output between key
 * blocks is kept as the run's intermediates say (sim.h, sim_inter): by
 * default in fp32, in HBM tensor O_acc (flash-attn v1's o_tmp), and O is
 * written in the dtype once, at line 12 of the last key block that query
 * block i sees; with the paper's intermediates O itself is stored in the
 * dtype at every step, as Algorithm 1 reads. Likewise P~_ij is rounded to
 * the dtype before line 12's P~_ij V_j (after line 10's row sum l~, taken
 * from the fp32 values), or kept in fp32.
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
#include "sim_theory.h"

/* The pseudocode's lines that the loop nest marks, as numbered in the paper. */
enum {
    FA1_L2_INIT = 2,
    FA1_L6_LOAD_KV = 6,
    FA1_L8_LOAD_QOLM = 8,
    FA1_L9_SCORES = 9,
    FA1_L10_BLOCK_STATS = 10,
    FA1_L11_NEW_STATS = 11,
    FA1_L12_WRITE_O = 12,
    FA1_L13_WRITE_LM = 13,
    FA1_L16_RETURN = 16
};

/* Line 10, row by row: m~_ij = rowmax(S_ij), S_ij <- P~_ij = exp(S_ij - m~_ij),
 * l~_ij = rowsum(P~_ij). */
static void fa1_line10(float *S_ij, float *mt_ij, float *lt_ij, int64_t br, int64_t bc)
{
    for (int64_t r = 0; r < br; r++) {               /* ref_fa1_block_row */
        mt_ij[r] = ref_row_max(S_ij + r * bc, (int)bc);
        lt_ij[r] = ref_simd_exp_shift_sum(S_ij + r * bc, (int)bc, mt_ij[r]);
    }
}

/* Line 11, row by row: m_new = max(m_i, m~_ij),
 * l_new = e^(m_i - m_new) l_i + e^(m~_ij - m_new) l~_ij; m_i, l_i unchanged. */
static void fa1_line11(const float *m_i, const float *l_i, const float *mt_ij,
                       const float *lt_ij, float *m_new, float *l_new, int64_t br)
{
    for (int64_t r = 0; r < br; r++)
        l_new[r] = ref_fa1_weights_row(m_i[r], l_i[r], mt_ij[r], lt_ij[r], &m_new[r]).l_new;
}

/* Line 12, row by row: O_i <- diag(l_new)^-1 (diag(l_i) e^(m_i - m_new) O_i
 * + e^(m~_ij - m_new) P~_ij V_j), the weights those of line 11 (recomputed
 * from the same values, so the same bits). P~_ij is first rounded as the
 * product takes it (p_round, sim_inter_p_round). */
static void fa1_line12(float *P_ij, const float *V_j, float *O_i, const float *m_i,
                       const float *l_i, const float *mt_ij, const float *lt_ij, int64_t br,
                       int64_t bc, int64_t d, int p_round)
{
    ref_round_row(P_ij, br * bc, p_round);
    ref_fa1_weights w[64];                      /* the weights of up to 64 rows at a time */
    for (int64_t r0 = 0; r0 < br; r0 += 64) {
        const int64_t n = sim_min64(64, br - r0);
        for (int64_t r = 0; r < n; r++) {
            float m_new;
            w[r] = ref_fa1_weights_row(m_i[r0 + r], l_i[r0 + r], mt_ij[r0 + r], lt_ij[r0 + r],
                                       &m_new);
        }
        ref_simd_fa1_out(O_i + r0 * d, (int)d, w, P_ij + r0 * bc, V_j, (int)n, (int)bc);
    }
}

static int fa1_run(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc, T_r = p->Tr, T_c = p->Tc;
    /* The running output between key blocks: O_acc (fp32) or O itself. */
    const sim_tensor O_run = sim_inter_acc(&h->run, SIM_O);

    float *K_j = sim_sram_take(h, p, 1, SIM_BUF_K_j);
    float *V_j = sim_sram_take(h, p, 1, SIM_BUF_V_j);
    float *Q_i = sim_sram_take(h, p, 1, SIM_BUF_Q_i);
    float *O_i = sim_sram_take(h, p, 1, SIM_BUF_O_i);
    float *S_ij = sim_sram_take(h, p, 1, SIM_BUF_S_ij);
    float *m_i = sim_sram_take(h, p, 1, SIM_BUF_m_i);
    float *l_i = sim_sram_take(h, p, 1, SIM_BUF_l_i);
    /* m~_ij, l~_ij, m_new, l_new: the paper's on-chip vectors of lines 10-11;
     * m_i, l_i take the new values at line 13. */
    float *mt_ij = sim_sram_take(h, p, 1, SIM_BUF_mt_ij);
    float *lt_ij = sim_sram_take(h, p, 1, SIM_BUF_lt_ij);
    float *m_new = sim_sram_take(h, p, 1, SIM_BUF_m_new);
    float *l_new = sim_sram_take(h, p, 1, SIM_BUF_l_new);
    if (h->failed)
        return -1;

    /* 2: O = 0 (its running value's tensor), l = 0, m = -inf in HBM,
     * written block by block from SRAM. */
    sim_at(h, FA1_L2_INIT, -1, -1);
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
        sim_store(h, O_run, SIM_BUF_O_i, O_i, r0, 0, br, d);
        sim_store(h, SIM_l, SIM_BUF_l_i, l_i, r0, 0, br, 1);
        sim_store(h, SIM_m, SIM_BUF_m_i, m_i, r0, 0, br, 1);
    }
    /* 3-4: Q, O, l, m in T_r blocks of B_r rows; K, V in T_c blocks of B_c. */
    for (int64_t j = 0; j < T_c; j++) {                          /* 5 */
        const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
        const sim_range is = sim_visit_is(h, p, j);
        if (is.lo > is.hi)
            continue;                                            /* no query sees K_j */
        sim_at(h, FA1_L6_LOAD_KV, -1, j);
        sim_load(h, SIM_K, SIM_BUF_K_j, K_j, c0, 0, bc, d);            /* 6 */
        sim_load(h, SIM_V, SIM_BUF_V_j, V_j, c0, 0, bc, d);
        for (int64_t i = is.lo; i <= is.hi; i++) {               /* 7 */
            if (!sim_visited(h, i, j))
                continue;                                        /* a block mask's zero */
            const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
            sim_at(h, FA1_L8_LOAD_QOLM, i, j);
            sim_load(h, SIM_Q, SIM_BUF_Q_i, Q_i, r0, 0, br, d);        /* 8 */
            sim_load(h, O_run, SIM_BUF_O_i, O_i, r0, 0, br, d);
            sim_load(h, SIM_l, SIM_BUF_l_i, l_i, r0, 0, br, 1);
            sim_load(h, SIM_m, SIM_BUF_m_i, m_i, r0, 0, br, 1);
            h->steps++;
            sim_at(h, FA1_L9_SCORES, i, j);
            if (h->compute) {                                    /* 9 */
                ref_simd_scores(Q_i, K_j, (int)br, (int)bc, (int)d, h->scale, S_ij);
                sim_mask_tile(h, S_ij, br, bc, r0, c0);
            }
            sim_at(h, FA1_L10_BLOCK_STATS, i, j);
            if (h->compute)                                      /* 10 */
                fa1_line10(S_ij, mt_ij, lt_ij, br, bc);
            sim_at(h, FA1_L11_NEW_STATS, i, j);
            if (h->compute)                                      /* 11 */
                fa1_line11(m_i, l_i, mt_ij, lt_ij, m_new, l_new, br);
            sim_at(h, FA1_L12_WRITE_O, i, j);
            if (h->compute)                                      /* 12 */
                fa1_line12(S_ij, V_j, O_i, m_i, l_i, mt_ij, lt_ij, br, bc, d, h->p_round);
            /* The last key block block i sees leaves O in the dtype. */
            const int last = j == sim_visit_js(h, p, i).hi;
            sim_store(h, last ? SIM_O : O_run, SIM_BUF_O_i, O_i, r0, 0, br, d);
            sim_at(h, FA1_L13_WRITE_LM, i, j);
            if (h->compute) {                                    /* 13 */
                memcpy(l_i, l_new, (size_t)br * sizeof *l_i);
                memcpy(m_i, m_new, (size_t)br * sizeof *m_i);
            }
            sim_store(h, SIM_l, SIM_BUF_l_i, l_i, r0, 0, br, 1);
            sim_store(h, SIM_m, SIM_BUF_m_i, m_i, r0, 0, br, 1);
        }                                                        /* 14 */
    }                                                            /* 15 */
    sim_at(h, FA1_L16_RETURN, -1, -1);
    sim_sram_release_all(h);
    return 0;                                                    /* 16 */
}

static void fa1_plan(sim_plan *p, const sim_shape *sh, int e)
{
    const int64_t Br = p->Br, Bc = p->Bc, d = sh->d;
    sim_plan_add(p, SIM_BUF_K_j, 1, Bc, d, e, "key block (line 6)");
    sim_plan_add(p, SIM_BUF_V_j, 1, Bc, d, e, "value block (line 6)");
    sim_plan_add(p, SIM_BUF_Q_i, 1, Br, d, e, "query block (line 8)");
    sim_plan_add(p, SIM_BUF_O_i, 1, Br, d, 4, "output block, fp32 (line 8)");
    sim_plan_add(p, SIM_BUF_S_ij, 1, Br, Bc, 4, "scores, then P~_ij (lines 9-10)");
    sim_plan_add(p, SIM_BUF_m_i, 1, Br, 1, 4, "row maxima (line 8)");
    sim_plan_add(p, SIM_BUF_l_i, 1, Br, 1, 4, "row sums (line 8)");
    sim_plan_add(p, SIM_BUF_mt_ij, 1, Br, 1, 4, "block row maxima (line 10)");
    sim_plan_add(p, SIM_BUF_lt_ij, 1, Br, 1, 4, "block row sums (line 10)");
    sim_plan_add(p, SIM_BUF_m_new, 1, Br, 1, 4, "new maxima (line 11)");
    sim_plan_add(p, SIM_BUF_l_new, 1, Br, 1, 4, "new sums (line 11)");
    p->nphases = 1;
}

static void fa1_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_counts *out)
{
    const uint64_t N = (uint64_t)sh->N, d = (uint64_t)sh->d, Tr = (uint64_t)p->Tr;
    const uint64_t Nd = sim_th_mul(k, N, d);
    const sim_tensor O_run = sim_inter_acc(&p->run, SIM_O);
    /* Line 2: O (its running value's tensor), l, m initialised in HBM, one
     * block of each per i. */
    sim_th_put(out, O_run, SIM_WR, Nd, Tr, k);
    sim_th_put(out, SIM_l, SIM_WR, N, Tr, k);
    sim_th_put(out, SIM_m, SIM_WR, N, Tr, k);
    /* Line 6: K_j, V_j once per j that some query sees: all of them but
     * the j_lo(0) whole blocks before row 0's first key (a window), and
     * under a block mask the blocks it leaves no query (sim_th_kv_seen). */
    uint64_t kv_blocks;
    const uint64_t kv = sim_th_mul(k, sim_th_kv_seen(k, p, sh, &kv_blocks), d);
    sim_th_put(out, SIM_K, SIM_RD, kv, kv_blocks, k);
    sim_th_put(out, SIM_V, SIM_RD, kv, kv_blocks, k);
    /* Lines 8, 12, 13 at every visited (i, j): rows of Q_i, O_i, l_i, m_i.
     * Every query block sees some key, so line 12 at the last key block of
     * each writes all N d of O, T_r transfers; the running value's tensor
     * takes the other visits' writes (O itself: all of them). */
    uint64_t V_b;
    const uint64_t rows = sim_th_pair_rows(k, p, sh, &V_b);
    const uint64_t rows_d = sim_th_mul(k, rows, d);
    sim_th_put(out, SIM_Q, SIM_RD, rows_d, V_b, k);
    sim_th_put(out, O_run, SIM_RD, rows_d, V_b, k);
    sim_th_put(out, SIM_l, SIM_RD, rows, V_b, k);
    sim_th_put(out, SIM_m, SIM_RD, rows, V_b, k);
    sim_th_put(out, SIM_O, SIM_WR, Nd, Tr, k);
    sim_th_put(out, O_run, SIM_WR, rows_d - Nd, V_b - Tr, k);
    sim_th_put(out, SIM_l, SIM_WR, rows, V_b, k);
    sim_th_put(out, SIM_m, SIM_WR, rows, V_b, k);
}

/* The visited block pairs. */
static uint64_t fa1_steps(sim_chk *k, const sim_plan *p, const sim_shape *sh)
{
    return sim_th_visited(k, sh, p->Br, p->Bc);
}

/* At every visited pair, A scores over R query rows in all
 * (sim_th_pair_scores). Line 9: S_ij = Q_i K_j^T and line 12's P~_ij V_j,
 * 2 d per score each. Per row of a pair (sim_loop.flops's convention):
 * line 10, rowmax (B_c), exp(S_ij - m~) (2 B_c), rowsum (B_c); line 11,
 * m_new (1), l_new = e^(m_i - m_new) l_i + e^(m~ - m_new) l~ (7); line 12,
 * l_i e^(m_i - m_new) (1) times O_i (d), e^(m~ - m_new) times P~_ij V_j (d),
 * their sum (d) and the division by l_new (d): O_i is rescaled and divided
 * at every pair, where FA2 divides once. */
static void fa1_flops(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_flops *out)
{
    uint64_t R;
    const double A = sim_th_pair_scores(k, p, sh, &R), d = (double)sh->d;
    out->matmul = 4.0 * d * A;
    out->other = 4.0 * A + (4.0 * d + 9.0) * (double)R;
}

#define STEP (SIM_VIEW_STATS | SIM_VIEW_OUT | SIM_VIEW_AFTER | SIM_VIEW_NORM_BEFORE | \
              SIM_VIEW_NORM_AFTER)

/* Condensed as FA2's listing (algo_fa2.c). The view flags: 8 loads block
 * i's values from HBM; 9-13 work on them: 10 and 11 compute m~, l~, m_new,
 * l_new beside m_i, l_i, 12 writes the new O_i (FA1 keeps O normalised) and
 * 13 the new l_i, m_i. A heat map shows S_ij at 9 and P~_ij against the
 * block's own maximum at 10-13. */
static const sim_code_line FA1_CODE[] = {
    SIM_CODE(1, 0, "B_c = ceil(M/4d),"),
    SIM_CODE(0, 0, "B_r = min(ceil(M/4d), d)"),
    { FA1_L2_INIT, 0, "O = 0, l = 0, m = -inf in HBM", 0, SIM_HEAT_NONE,
      "line 2: O = 0, l = 0, m = -inf written to HBM", 0 },
    SIM_CODE(3, 0, "Q -> T_r blocks; K,V -> T_c"),
    SIM_CODE(4, 0, "O, l, m -> T_r blocks"),
    SIM_CODE(5, 0, "for j = 1 .. T_c:"),
    { FA1_L6_LOAD_KV, 1, "load K_j, V_j from HBM", 0, SIM_HEAT_NONE,
      "line 6: K_j and V_j arrive; S_ij is computed at line 9", 0 },
    SIM_CODE(7, 1, "for i = 1 .. T_r:"),
    { FA1_L8_LOAD_QOLM, 2, "load Q_i, O_i, l_i, m_i", STEP, SIM_HEAT_NONE,
      "line 8: Q_i, O_i, l_i, m_i arrive; S_ij is computed at line 9", 0 },
    { FA1_L9_SCORES, 2, "S_ij = Q_i K_j^T", STEP | SIM_VIEW_BEFORE | SIM_VIEW_ALPHA, SIM_HEAT_S,
      NULL, 0 },
    { FA1_L10_BLOCK_STATS, 2, "m~ = rowmax(S_ij)", STEP | SIM_VIEW_BEFORE | SIM_VIEW_ALPHA,
      SIM_HEAT_P_BLOCK, NULL, 0 },
    SIM_CODE(0, 2, "P~ = exp(S_ij - m~)"),
    SIM_CODE(0, 2, "l~ = rowsum(P~)"),
    { FA1_L11_NEW_STATS, 2, "m_new = max(m_i, m~)", STEP | SIM_VIEW_BEFORE | SIM_VIEW_ALPHA,
      SIM_HEAT_P_BLOCK, NULL, 0 },
    SIM_CODE(0, 2, "l_new = e^(m_i-m_new) l_i"),
    SIM_CODE(0, 2, "      + e^(m~-m_new) l~"),
    { FA1_L12_WRITE_O, 2, "write to HBM: O_i =", STEP | SIM_VIEW_BEFORE | SIM_VIEW_ALPHA,
      SIM_HEAT_P_BLOCK, NULL, 0 },
    SIM_CODE(0, 2, " (l_i e^(m_i-m_new) O_i"),
    SIM_CODE(0, 2, "  + e^(m~-m_new) P~ V_j)"),
    SIM_CODE(0, 2, "  / l_new"),
    { FA1_L13_WRITE_LM, 2, "write l_i = l_new,", STEP | SIM_VIEW_BEFORE | SIM_VIEW_ALPHA,
      SIM_HEAT_P_BLOCK, NULL, 0 },
    SIM_CODE(0, 2, "  m_i = m_new to HBM"),
    SIM_CODE(14, 1, "end for"),
    SIM_CODE(15, 0, "end for"),
    { FA1_L16_RETURN, 0, "return O", 0, SIM_HEAT_RETURN, NULL, 0 },
};

const sim_loop sim_loop_fa1 = {
    .algo = SIM_FA1,
    .pass = SIM_FWD,
    .name = "fa1",
    .title = "FlashAttention-1 (Dao et al. 2022, Algorithm 1)",
    .code_title = "FlashAttention, Algorithm 1",
    .code = FA1_CODE,
    .ncode = (int)(sizeof FA1_CODE / sizeof FA1_CODE[0]),
    .hbm = 1u << SIM_Q | 1u << SIM_K | 1u << SIM_V | 1u << SIM_O | 1u << SIM_m | 1u << SIM_l |
           1u << SIM_Oacc,
    .kv_loads = SIM_KV_ONCE,
    .grid = SIM_GRID_HEAD_SPLIT_Q,
    .warps = SIM_WARPS_SPLIT_K,
    .prefetch = 1,           /* v1 loads the next Q_i during a step */
    .bound = SIM_BOUND_FLASH,
    .reread = SIM_BLOCK_C,
    .mark = '1',
    .mark_style = SIM_MARK_READ,
    .color = "#2471a3",
    .plan = fa1_plan,
    .run = fa1_run,
    .counts = fa1_counts,
    .steps = fa1_steps,
    .flops = fa1_flops,
};
