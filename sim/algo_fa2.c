/*
 * algo_fa2.c — FlashAttention-2 forward pass (Dao 2023, Algorithm 1), with the
 * paper's line numbers in the comments.
 *
 * Loop order: Q blocks outer, K/V blocks inner. O_i, l_i, m_i stay on chip for
 * the whole inner loop, so Q is read once and O and L are written once; K and V
 * are read T_r times (fewer under causal masking). The query blocks are
 * independent: in compute mode threads take them (sim_loop.rows_parallel).
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
#include <stdio.h>
#include <stdlib.h>

#include "sim_hier.h"
#include "sim_theory.h"

/* The pseudocode's lines that the loop nest marks (sim_at), as numbered in
 * the paper; FA2_CODE below lists them all. */
enum {
    FA2_L4_LOAD_Q = 4,
    FA2_L5_INIT = 5,
    FA2_L7_LOAD_KV = 7,
    FA2_L8_SCORES = 8,
    FA2_L9_ONLINE = 9,
    FA2_L10_ACC = 10,
    FA2_L12_NORMALISE = 12,
    FA2_L13_LSE = 13,
    FA2_L14_WRITE_O = 14,
    FA2_L15_WRITE_L = 15,
    FA2_L17_RETURN = 17
};

/* The on-chip arithmetic lives in functions of its own, out of line: the
 * loop nest below then stays small enough that count-only runs (which skip
 * these calls) keep their loop state in registers. */

/* Line 8: S_ij = Q_i K_j^T / sqrt(d), masked entries -inf, for the hq
 * slices of br rows (one per query head of the block). */
static SIM_NOINLINE void fa2_line8(const sim_hier *h, const float *Q_i, const float *K_j,
                                   float *S_ij, int64_t br, int64_t bc, int64_t r0,
                                   int64_t c0)
{
    ref_simd_scores(Q_i, K_j, (int)(h->hq * br), (int)bc, (int)h->sh.d, h->scale, S_ij);
    for (int64_t k = 0; k < h->hq; k++)
        sim_mask_tile(h, S_ij + k * br * bc, br, bc, r0, c0);
}

/* Line 9, row by row: m_i <- max(m_i, rowmax S_ij), S_ij <- P~_ij =
 * exp(S_ij - m_i), l_i <- e^(m_old - m_i) l_i + rowsum(P~_ij); alpha gets
 * e^(m_old - m_i), the rescaling line 10 applies. The row sum is taken
 * from the fp32 P~_ij; then P~_ij is rounded as line 10's product takes it
 * (p_round: sim_inter_p_round, the dtype by default). */
static SIM_NOINLINE void fa2_line9(float *S_ij, float *m_i, float *l_i, float *alpha,
                                   int64_t br, int64_t bc, int p_round)
{
    for (int64_t r = 0; r < br; r++) {
        alpha[r] = ref_simd_online_step(S_ij + r * bc, (int)bc, &m_i[r], &l_i[r]);
        ref_round_row(S_ij + r * bc, bc, p_round);
    }
}

/* Line 10, row by row: O_i <- diag(alpha) O_i + P~_ij V_j. */
static SIM_NOINLINE void fa2_line10(const float *P_ij, const float *V_j, float *O_i,
                                    const float *alpha, int64_t br, int64_t bc, int64_t d)
{
    ref_simd_pv_acc(O_i, (int)d, alpha, P_ij, V_j, (int)br, (int)bc);
}

/* Lines 6-11 of a count-only run with no observer (sim_counting_only): the
 * loads of K_j, V_j the loop below makes at each visited j, tallied in
 * locals and added to the counters once per row block. K_j and V_j are
 * the same bc x d tiles, so one tally serves both. */
static void fa2_count_kv(sim_hier *h, const sim_plan *p, int64_t i, sim_range js)
{
    const int64_t N_k = sim_shape_Nk(&h->sh), d = h->sh.d, B_c = p->Bc;
    sim_tally kv = { 0, 0 };
    if (h->vis.bits == NULL)            /* dense: no test per tile */
        for (int64_t j = js.lo; j <= js.hi; j++)
            sim_tally_add(&kv, sim_min64(B_c, N_k - j * B_c), d);
    else
        for (int64_t j = js.lo; j <= js.hi; j++)
            if (sim_visited(h, i, j))
                sim_tally_add(&kv, sim_min64(B_c, N_k - j * B_c), d);
    sim_tally_load(h, SIM_K, kv);
    sim_tally_load(h, SIM_V, kv);
    h->steps += kv.ops;
}

/* The forward loop nest of FA2's order, marking the lines of `ln`: FA2's
 * own (fa2_run below) or FA3's producer and consumer lines (algo_fa3.c),
 * whose loop order, traffic and arithmetic are these. */
int sim_fa2_fwd_nest(sim_hier *h, const sim_plan *p, const sim_fwd_lines *ln)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc, T_r = p->Tr;

    float *Q_i = sim_sram_take(h, p, 1, SIM_BUF_Q_i);
    float *K_j = sim_sram_take(h, p, 1, SIM_BUF_K_j);
    float *V_j = sim_sram_take(h, p, 1, SIM_BUF_V_j);
    float *S_ij = sim_sram_take(h, p, 1, SIM_BUF_S_ij);
    float *O_i = sim_sram_take(h, p, 1, SIM_BUF_O_i);
    float *m_i = sim_sram_take(h, p, 1, SIM_BUF_m_i);
    float *l_i = sim_sram_take(h, p, 1, SIM_BUF_l_i);
    const int64_t hq = h->hq;        /* query heads in the block; head k's rows
                                        start at k N in Q, O, L and at k br on chip */
    /* e^(m_old - m_new) per row, from line 9 to line 10: a kernel keeps it in
     * registers, so it takes no SRAM (compute mode only). */
    float *alpha = NULL;
    if (h->compute && !h->failed) {
        alpha = malloc((size_t)(hq * B_r) * sizeof *alpha);
        if (!alpha) {
            h->failed = 1;
            snprintf(h->err, h->errlen, "out of memory for the rescaling factors");
        }
    }
    if (h->failed)
        return -1;
    const int counting = sim_counting_only(h);

    /* 1-2: Q, O, L in T_r blocks of B_r rows; K, V in T_c blocks of B_c rows. */
    for (int64_t i = h->part; i < T_r; i += sim_part_step(h)) {  /* 3 */
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        sim_at(h, ln->load_q, i, -1);
        for (int64_t k = 0; k < hq; k++)                         /* 4 */
            sim_load(h, SIM_Q, SIM_BUF_Q_i, sim_buf_at(Q_i, k * br * d), k * N + r0, 0, br, d);
        sim_at(h, ln->init, i, -1);
        if (h->compute)                                          /* 5 */
            sim_state_empty(m_i, l_i, O_i, hq * br, d);
        const sim_range js = sim_visit_js(h, p, i);
        if (counting)
            fa2_count_kv(h, p, i, js);                           /* 6-11, tallied */
        for (int64_t j = js.lo; !counting && j <= js.hi; j++) {  /* 6 */
            if (!sim_visited(h, i, j))
                continue;                                        /* a block mask's zero */
            const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
            sim_at(h, ln->load_kv, i, j);
            sim_load(h, SIM_K, SIM_BUF_K_j, K_j, c0, 0, bc, d);        /* 7 */
            sim_load(h, SIM_V, SIM_BUF_V_j, V_j, c0, 0, bc, d);
            h->steps++;
            sim_at(h, ln->scores, i, j);
            if (h->compute)                                      /* 8 */
                fa2_line8(h, Q_i, K_j, S_ij, br, bc, r0, c0);
            sim_at(h, ln->online, i, j);
            if (h->compute)                                      /* 9 */
                fa2_line9(S_ij, m_i, l_i, alpha, hq * br, bc, h->p_round);
            sim_at(h, ln->acc, i, j);
            if (h->compute)                                      /* 10 */
                fa2_line10(S_ij, V_j, O_i, alpha, hq * br, bc, d);
        }                                                        /* 11 */
        sim_at(h, ln->normalise, i, -1);
        if (h->compute)
            for (int64_t r = 0; r < hq * br; r++)
                ref_normalise_row(O_i + r * d, (int)d, l_i[r]);  /* 12 */
        sim_at(h, ln->lse, i, -1);
        if (h->compute)
            for (int64_t r = 0; r < hq * br; r++)
                m_i[r] = ref_lse(m_i[r], l_i[r]);                /* 13: L_i in m_i */
        sim_at(h, ln->write_o, i, -1);
        for (int64_t k = 0; k < hq; k++)                         /* 14 */
            sim_store(h, SIM_O, SIM_BUF_O_i, sim_buf_at(O_i, k * br * d), k * N + r0, 0, br, d);
        sim_at(h, ln->write_l, i, -1);
        for (int64_t k = 0; k < hq; k++)                         /* 15 */
            sim_store(h, SIM_L, SIM_BUF_m_i, sim_buf_at(m_i, k * br), k * N + r0, 0, br, 1);
    }                                                            /* 16 */
    sim_at(h, ln->ret, -1, -1);
    sim_sram_release_all(h);
    free(alpha);
    return 0;                                                    /* 17 */
}

static int fa2_run(sim_hier *h, const sim_plan *p)
{
    static const sim_fwd_lines FA2_LINES = {
        .load_q = FA2_L4_LOAD_Q, .init = FA2_L5_INIT, .load_kv = FA2_L7_LOAD_KV,
        .scores = FA2_L8_SCORES, .online = FA2_L9_ONLINE, .acc = FA2_L10_ACC,
        .normalise = FA2_L12_NORMALISE, .lse = FA2_L13_LSE, .write_o = FA2_L14_WRITE_O,
        .write_l = FA2_L15_WRITE_L, .ret = FA2_L17_RETURN,
    };
    return sim_fa2_fwd_nest(h, p, &FA2_LINES);
}

/* Grouped query heads: the block holds B_r rows of each of its hq heads on
 * the query side; K_j, V_j serve them all. */
void sim_fa2_fwd_plan(sim_plan *p, const sim_shape *sh, int e)
{
    const int64_t R = sim_run_hq(sh, &p->run) * p->Br, Bc = p->Bc, d = sh->d;
    sim_plan_add(p, SIM_BUF_Q_i, 1, R, d, e, "query block (line 4)");
    sim_plan_add(p, SIM_BUF_K_j, 1, Bc, d, e, "key block (line 7)");
    sim_plan_add(p, SIM_BUF_V_j, 1, Bc, d, e, "value block (line 7)");
    sim_plan_add(p, SIM_BUF_S_ij, 1, R, Bc, 4, "scores, then P~ (lines 8-9)");
    sim_plan_add(p, SIM_BUF_O_i, 1, R, d, 4, "fp32 output accumulator (line 10)");
    sim_plan_add(p, SIM_BUF_m_i, 1, R, 1, 4, "running maxima; L_i at the end");
    sim_plan_add(p, SIM_BUF_l_i, 1, R, 1, 4, "running sums");
    p->nphases = 1;
}

/* Line 7: K_j, V_j at every visited (i, j): B_c keys per pair, less
 * B_c - bc_last for each query block that visits the last key block; under
 * a block mask, the keys of the visited pairs summed (sim_th_pair_keys). */
void sim_fa2_kv_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_counts *out)
{
    const uint64_t d = (uint64_t)sh->d, Bc = (uint64_t)p->Bc, Tc = (uint64_t)p->Tc;
    const uint64_t bc_last = (uint64_t)sim_shape_Nk(sh) - (Tc - 1) * Bc;
    const uint64_t V_b = sim_th_visited(k, sh, p->Br, p->Bc);
    const sim_range is = sim_block_is(sh, p->Tc - 1, p->Br, p->Bc);
    const uint64_t keys = sh->blocks ? sim_th_pair_keys(k, p, sh)
                          : sim_th_mul(k, Bc, V_b) - (Bc - bc_last) * (uint64_t)(is.hi - is.lo + 1);
    sim_th_put(out, SIM_K, SIM_RD, sim_th_mul(k, keys, d), V_b, k);
    sim_th_put(out, SIM_V, SIM_RD, sim_th_mul(k, keys, d), V_b, k);
}

/* Lines 4, 14, 15: Q_i in, O_i and L_i out, once per i; line 7 K_j, V_j. */
void sim_fa2_fwd_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_counts *out)
{
    const uint64_t N = (uint64_t)sh->N, Tr = (uint64_t)p->Tr;
    const uint64_t Nd = sim_th_mul(k, N, (uint64_t)sh->d);
    sim_th_put(out, SIM_Q, SIM_RD, Nd, Tr, k);
    sim_th_put(out, SIM_O, SIM_WR, Nd, Tr, k);
    sim_th_put(out, SIM_L, SIM_WR, N, Tr, k);
    sim_fa2_kv_counts(k, p, sh, out);
}

/* The visited block pairs. */
uint64_t sim_fa2_fwd_steps(sim_chk *k, const sim_plan *p, const sim_shape *sh)
{
    return sim_th_visited(k, sh, p->Br, p->Bc);
}

/* At every visited pair, A scores over R query rows in all
 * (sim_th_pair_scores). Line 8: S_ij = Q_i K_j^T and line 10's P~_ij V_j,
 * 2 d per score each. Per row of a pair (sim_loop.flops's convention):
 * line 9, m_new = max(m_i, rowmax S_ij) (B_c + 1), exp(S_ij - m_new)
 * (2 B_c), l_i = e^(m_i - m_new) l_i + rowsum P~ (B_c + 4); line 10, O_i
 * times e^(m_i - m_new) plus P~_ij V_j (2 d). Once per query row: line 12,
 * the division by l_i (d); line 13, L_i = m_i + log l_i (2). */
void sim_fa2_fwd_flops(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_flops *out)
{
    uint64_t R;
    const double A = sim_th_pair_scores(k, p, sh, &R), d = (double)sh->d;
    out->matmul = 4.0 * d * A;
    out->other = 4.0 * A + (2.0 * d + 5.0) * (double)R + (d + 2.0) * (double)sh->N;
}

#define SO (SIM_VIEW_STATS | SIM_VIEW_OUT)
#define FA2_NOTE_12 "line 12: O_i = diag(l_i)^-1 O_i; no score tile"
#define FA2_NOTE_13 "line 13: L_i = m_i + log l_i; no score tile"
#define BA (SIM_VIEW_BEFORE | SIM_VIEW_AFTER)

/* Line 0 continues the numbered line above it. Each text with its indent
 * (two columns per level) fits 31 columns, so that the 80-column view shows
 * it whole beside the line numbers. Names follow the papers, shortened where
 * the column needs it: P~, m~, l~ are P~_ij, m~_ij, l~_ij. The view flags:
 * 4 loads Q_i while the buffers still hold block i-1; 5 initialises; 7-10
 * update m_i, l_i, O_i online; 12 divides O_i by l_i and 13 turns m_i into
 * L_i. A heat map shows S_ij at 8 and P~_ij against the running maximum at
 * 9-10. */
static const sim_code_line FA2_CODE[] = {
    SIM_CODE(1, 0, "Q -> T_r blocks Q_i (B_r rows)"),
    SIM_CODE(0, 0, "K, V -> T_c blocks (B_c rows)"),
    SIM_CODE(2, 0, "O -> blocks O_i, L -> L_i"),
    SIM_CODE(3, 0, "for i = 1 .. T_r:"),
    { FA2_L4_LOAD_Q, 1, "load Q_i from HBM to SRAM", SO, SIM_HEAT_NONE,
      "line 4: Q_i arrives in SRAM; S_ij is computed at line 8", 0 },
    { FA2_L5_INIT, 1, "O_i = 0, l_i = 0, m_i = -inf", SO | SIM_VIEW_AFTER, SIM_HEAT_NONE,
      "line 5: O_i = 0, l_i = 0, m_i = -inf; no score tile yet", 0 },
    { 6, 1, "for j = 1 .. T_c:", SO | SIM_VIEW_AFTER, SIM_HEAT_NONE, NULL, 0 },
    { FA2_L7_LOAD_KV, 2, "load K_j, V_j from HBM", SO | BA | SIM_VIEW_ALPHA, SIM_HEAT_NONE,
      "line 7: K_j and V_j arrive; S_ij is computed at line 8", 0 },
    { FA2_L8_SCORES, 2, "S_ij = Q_i K_j^T", SO | BA | SIM_VIEW_ALPHA, SIM_HEAT_S, NULL, 0 },
    { FA2_L9_ONLINE, 2, "m_new = max(m_i, rowmax S)", SO | BA | SIM_VIEW_ALPHA,
      SIM_HEAT_P_RUNNING, NULL, 0 },
    SIM_CODE(0, 2, "P~ = exp(S_ij - m_new)"),
    SIM_CODE(0, 2, "l_i = e^(m_i-m_new) l_i"),
    SIM_CODE(0, 2, "      + rowsum(P~)"),
    { FA2_L10_ACC, 2, "O_i = e^(m_i-m_new) O_i", SO | BA | SIM_VIEW_ALPHA, SIM_HEAT_P_RUNNING,
      NULL, 0 },
    SIM_CODE(0, 2, "      + P~ V_j; m_i = m_new"),
    { 11, 1, "end for", SO | BA, SIM_HEAT_NONE, NULL, 0 },
    { FA2_L12_NORMALISE, 1, "O_i = diag(l_i)^-1 O_i", SO | BA | SIM_VIEW_NORM_AFTER,
      SIM_HEAT_NONE, FA2_NOTE_12, 0 },
    { FA2_L13_LSE, 1, "L_i = m_i + log(l_i)",
      SO | BA | SIM_VIEW_L_AFTER | SIM_VIEW_NORM_BEFORE | SIM_VIEW_NORM_AFTER, SIM_HEAT_NONE,
      FA2_NOTE_13, 0 },
    { FA2_L14_WRITE_O, 1, "write O_i to HBM",
      SO | BA | SIM_VIEW_L_BEFORE | SIM_VIEW_L_AFTER | SIM_VIEW_NORM_BEFORE |
          SIM_VIEW_NORM_AFTER, SIM_HEAT_WRITE, NULL, 0 },
    { FA2_L15_WRITE_L, 1, "write L_i to HBM",
      SO | BA | SIM_VIEW_L_BEFORE | SIM_VIEW_L_AFTER | SIM_VIEW_NORM_BEFORE |
          SIM_VIEW_NORM_AFTER, SIM_HEAT_WRITE, NULL, 0 },
    { 16, 0, "end for", 0, SIM_HEAT_RETURN, NULL, 0 },
    { FA2_L17_RETURN, 0, "return O, L", 0, SIM_HEAT_RETURN, NULL, 0 },
};

const sim_loop sim_loop_fa2 = {
    .algo = SIM_FA2,
    .pass = SIM_FWD,
    .grouped = 1,
    .name = "fa2",
    .title = "FlashAttention-2 (Dao 2023, Algorithm 1)",
    .code_title = "FlashAttention-2, Algorithm 1",
    .code = FA2_CODE,
    .ncode = (int)(sizeof FA2_CODE / sizeof FA2_CODE[0]),
    .hbm = 1u << SIM_Q | 1u << SIM_K | 1u << SIM_V | 1u << SIM_O | 1u << SIM_L,
    .kv_loads = SIM_KV_PER_VISIT,
    .grid = SIM_GRID_ROWS,
    .warps = SIM_WARPS_SPLIT_Q,
    .prefetch = 1,
    .bound = SIM_BOUND_FLASH,
    .reread = SIM_BLOCK_R,
    .mark = '2',
    .mark_style = SIM_MARK_HEAD,
    .color = "#1e8449",
    .plan = sim_fa2_fwd_plan,
    .run = fa2_run,
    .counts = sim_fa2_fwd_counts,
    .steps = sim_fa2_fwd_steps,
    .flops = sim_fa2_fwd_flops,
    .rows_parallel = 1,
};
