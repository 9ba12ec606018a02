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
 * dQ's running sum lives where the run's intermediates say (sim.h,
 * sim_inter): by default in fp32, in HBM tensor dQ_acc (the released
 * kernel's dq_accum), which a last pass after the loops reads and writes
 * to dQ in the dtype (its convert_dQ, counted as the traffic it is); with
 * the paper's intermediates dQ itself, in the dtype, at every step. P_ij
 * is rounded to the dtype before line 12's product and dS_ij before lines
 * 15-16's, line 14 taking the fp32 P_ij, as the kernel's gemms take them.
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
#include "sim_theory.h"

/* Algorithm 2's lines, as the loop nest marks them. */
enum {
    FA2B_L3_ZERO_DQ = 3,
    FA2B_L4_D = 4,
    FA2B_L6_LOAD_KV = 6,
    FA2B_L7_ZERO_ACC = 7,
    FA2B_L9_LOAD_Q = 9,
    FA2B_L10_SCORES = 10,
    FA2B_L15_DQ = 15,
    FA2B_L16_DK = 16,
    FA2B_L18_WRITE_DKV = 18,
    FA2B_L20_RETURN = 20
};

/* Lines 10-14 on chip for one block pair: S_ij, P_ij (in S_ij's place),
 * dV_j += P_ij^T dO_i, dP_ij, and dS_ij (in dP_ij's place). Lines 13-14
 * come before 12: dS_ij takes the fp32 P_ij, which is then rounded for
 * line 12's product (h->p_round), and dS_ij is rounded for lines 15-16's. */
static SIM_NOINLINE void fa2_bwd_lines10_14(const sim_hier *h, const float *Q_i,
                                            const float *K_j, const float *V_j,
                                            const float *dO_i, const float *L_i,
                                            const float *D_i, float *S_ij, float *dP_ij,
                                            float *dV_j, int64_t br, int64_t bc, int64_t r0,
                                            int64_t c0)
{
    const int64_t d = h->sh.d;
    ref_simd_scores(Q_i, K_j, (int)br, (int)bc, (int)d, h->scale, S_ij);     /* 10 */
    sim_mask_tile(h, S_ij, br, bc, r0, c0);
    for (int64_t r = 0; r < br; r++)                                         /* 11 */
        ref_exp_lse_row(S_ij + r * bc, (int)bc, L_i[r]);
    ref_simd_scores(dO_i, V_j, (int)br, (int)bc, (int)d, 1.0f, dP_ij);       /* 13 */
    ref_tile_ds(S_ij, dP_ij, D_i, (int)br, (int)bc, dP_ij);                  /* 14 */
    ref_round_row(S_ij, br * bc, h->p_round);
    ref_tile_acc_tn(dV_j, S_ij, dO_i, (int)br, (int)bc, (int)d, 1.0f);       /* 12 */
    ref_round_row(dP_ij, br * bc, h->p_round);
}

/* Lines 3-4: dQ = 0 in HBM (its running sum's tensor); D = rowsum(dO o O),
 * one row block at a time. */
static int lines3_4(sim_hier *h, const sim_plan *p)
{
    const sim_tensor dQ_run = sim_inter_acc(&h->run, SIM_dQ);
    const int64_t N = h->sh.N, d = h->sh.d, B_r = p->Br;
    float *O_i = sim_sram_take(h, p, 1, SIM_BUF_O_i);
    float *dO_i = sim_sram_take(h, p, 1, SIM_BUF_dO_i);
    float *D_i = sim_sram_take(h, p, 1, SIM_BUF_D_i);
    if (h->failed)
        return -1;
    /* Line 3's zeros leave from O_i's buffer, before line 4 fills it. */
    sim_at(h, FA2B_L3_ZERO_DQ, -1, -1);
    if (h->compute)
        for (int64_t x = 0; x < B_r * d; x++)
            O_i[x] = 0.0f;
    for (int64_t i = 0; i < p->Tr; i++)
        sim_store(h, dQ_run, SIM_BUF_O_i, O_i, i * B_r, 0, sim_min64(B_r, N - i * B_r), d);
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        sim_at(h, FA2B_L4_D, i, -1);
        sim_load(h, SIM_O, SIM_BUF_O_i, O_i, r0, 0, br, d);
        sim_load(h, SIM_dO, SIM_BUF_dO_i, dO_i, r0, 0, br, d);
        h->steps++;
        if (h->compute)
            for (int64_t r = 0; r < br; r++)
                D_i[r] = ref_row_dot(dO_i + r * d, O_i + r * d, (int)d);
        sim_store(h, SIM_D, SIM_BUF_D_i, D_i, r0, 0, br, 1);
    }
    sim_sram_release_all(h);
    return 0;
}

static int fa2_bwd_run(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc, T_c = p->Tc;
    const sim_tensor dQ_run = sim_inter_acc(&h->run, SIM_dQ);

    /* 1-2: Q, O, dO, L in T_r blocks of B_r rows; K, V in T_c blocks of B_c. */
    if (lines3_4(h, p) != 0)
        return -1;
    float *K_j = sim_sram_take(h, p, 2, SIM_BUF_K_j);
    float *V_j = sim_sram_take(h, p, 2, SIM_BUF_V_j);
    float *dK_j = sim_sram_take(h, p, 2, SIM_BUF_dK_j);
    float *dV_j = sim_sram_take(h, p, 2, SIM_BUF_dV_j);
    float *Q_i = sim_sram_take(h, p, 2, SIM_BUF_Q_i);
    float *dO_i = sim_sram_take(h, p, 2, SIM_BUF_dO_i);
    float *dQ_i = sim_sram_take(h, p, 2, SIM_BUF_dQ_i);
    float *L_i = sim_sram_take(h, p, 2, SIM_BUF_L_i);
    float *D_i = sim_sram_take(h, p, 2, SIM_BUF_D_i);
    float *S_ij = sim_sram_take(h, p, 2, SIM_BUF_S_ij);
    float *dP_ij = sim_sram_take(h, p, 2, SIM_BUF_dP_ij);
    if (h->failed)
        return -1;
    for (int64_t j = 0; j < T_c; j++) {                              /* 5 */
        const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
        const sim_range is = sim_visit_is(h, p, j);
        if (is.lo <= is.hi) {
            sim_at(h, FA2B_L6_LOAD_KV, -1, j);
            sim_load(h, SIM_K, SIM_BUF_K_j, K_j, c0, 0, bc, d);            /* 6 */
            sim_load(h, SIM_V, SIM_BUF_V_j, V_j, c0, 0, bc, d);
        }
        sim_at(h, FA2B_L7_ZERO_ACC, -1, j);
        if (h->compute)                                              /* 7 */
            for (int64_t x = 0; x < bc * d; x++)
                dK_j[x] = dV_j[x] = 0.0f;
        for (int64_t i = is.lo; i <= is.hi; i++) {                   /* 8 */
            if (!sim_visited(h, i, j))
                continue;                                            /* a block mask's zero */
            const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
            sim_at(h, FA2B_L9_LOAD_Q, i, j);
            sim_load(h, SIM_Q, SIM_BUF_Q_i, Q_i, r0, 0, br, d);            /* 9 */
            sim_load(h, SIM_dO, SIM_BUF_dO_i, dO_i, r0, 0, br, d);
            sim_load(h, SIM_L, SIM_BUF_L_i, L_i, r0, 0, br, 1);
            sim_load(h, SIM_D, SIM_BUF_D_i, D_i, r0, 0, br, 1);
            h->steps++;
            sim_at(h, FA2B_L10_SCORES, i, j);
            if (h->compute)                                          /* 10-14 */
                fa2_bwd_lines10_14(h, Q_i, K_j, V_j, dO_i, L_i, D_i, S_ij, dP_ij, dV_j, br,
                                   bc, r0, c0);
            sim_at(h, FA2B_L15_DQ, i, j);
            sim_load(h, dQ_run, SIM_BUF_dQ_i, dQ_i, r0, 0, br, d);         /* 15 */
            if (h->compute)
                ref_tile_acc_nn(dQ_i, dP_ij, K_j, (int)br, (int)bc, (int)d, h->scale);
            sim_store(h, dQ_run, SIM_BUF_dQ_i, dQ_i, r0, 0, br, d);
            sim_at(h, FA2B_L16_DK, i, j);
            if (h->compute)                                          /* 16 */
                ref_tile_acc_tn(dK_j, dP_ij, Q_i, (int)br, (int)bc, (int)d, h->scale);
        }                                                            /* 17 */
        sim_at(h, FA2B_L18_WRITE_DKV, -1, j);
        sim_store(h, sim_gqa_grad(&h->sh, SIM_dK), SIM_BUF_dK_j, dK_j, c0, 0, bc, d); /* 18 */
        sim_store(h, sim_gqa_grad(&h->sh, SIM_dV), SIM_BUF_dV_j, dV_j, c0, 0, bc, d);
    }                                                                /* 19 */
    sim_at(h, FA2B_L20_RETURN, -1, -1);
    /* 20: the fp32 accumulator becomes dQ in the dtype, block by block (the
     * released kernel's convert_dQ); nothing to do when dQ was the sum. */
    if (dQ_run != SIM_dQ)
        for (int64_t i = 0; i < p->Tr; i++) {
            const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
            sim_load(h, dQ_run, SIM_BUF_dQ_i, dQ_i, r0, 0, br, d);
            sim_store(h, SIM_dQ, SIM_BUF_dQ_i, dQ_i, r0, 0, br, d);
        }
    sim_sram_release_all(h);
    return 0;                                                        /* 20 */
}

/* A first phase of its own, line 4: D = rowsum(dO o O) block by block; then
 * K_j, V_j and the accumulators dK_j, dV_j stay for the inner loop over
 * query blocks, which brings Q_i, dO_i, dQ_i, L_i and D_i. The recomputed
 * tiles are fp32. */
static void fa2_bwd_plan(sim_plan *p, const sim_shape *sh, int e)
{
    const int64_t Br = p->Br, Bc = p->Bc, d = sh->d;
    sim_plan_add(p, SIM_BUF_O_i, 1, Br, d, e, "output block (line 4)");
    sim_plan_add(p, SIM_BUF_dO_i, 1, Br, d, e, "output gradient block (line 4)");
    sim_plan_add(p, SIM_BUF_D_i, 1, Br, 1, 4, "rowsum(dO_i o O_i) (line 4)");
    sim_plan_add(p, SIM_BUF_K_j, 2, Bc, d, e, "key block (line 6)");
    sim_plan_add(p, SIM_BUF_V_j, 2, Bc, d, e, "value block (line 6)");
    sim_plan_add(p, SIM_BUF_dK_j, 2, Bc, d, 4, "fp32 accumulator (line 7)");
    sim_plan_add(p, SIM_BUF_dV_j, 2, Bc, d, 4, "fp32 accumulator (line 7)");
    sim_plan_add(p, SIM_BUF_Q_i, 2, Br, d, e, "query block (line 9)");
    sim_plan_add(p, SIM_BUF_dO_i, 2, Br, d, e, "output gradient block (line 9)");
    sim_plan_add(p, SIM_BUF_dQ_i, 2, Br, d, 4, "query gradient, fp32 (line 15)");
    sim_plan_add(p, SIM_BUF_L_i, 2, Br, 1, 4, "logsumexp (line 9)");
    sim_plan_add(p, SIM_BUF_D_i, 2, Br, 1, 4, "rowsum(dO o O) (line 9)");
    sim_plan_add(p, SIM_BUF_S_ij, 2, Br, Bc, 4, "scores, then P_ij (lines 10-11)");
    sim_plan_add(p, SIM_BUF_dP_ij, 2, Br, Bc, 4, "dP_ij, then dS_ij (lines 13-14)");
    p->nphases = 2;
}

/* V_b visited pairs; rows = the query rows summed over them. */
static void fa2_bwd_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh,
                           sim_counts *out)
{
    const uint64_t N = (uint64_t)sh->N, N_k = (uint64_t)sim_shape_Nk(sh), d = (uint64_t)sh->d;
    const uint64_t Tr = (uint64_t)p->Tr, Tc = (uint64_t)p->Tc;
    const uint64_t Nd = sim_th_mul(k, N, d), Nkd = sim_th_mul(k, N_k, d);
    uint64_t V_b;
    const uint64_t rows = sim_th_pair_rows(k, p, sh, &V_b), rows_d = sim_th_mul(k, rows, d);
    const sim_tensor dQ_run = sim_inter_acc(&p->run, SIM_dQ);
    uint64_t kv_blocks;
    (void)sim_bwd_kv_counts(k, p, sh, out, &kv_blocks);         /* 6 */
    /* 3: dQ = 0 in HBM (its running sum's tensor); 4: D = rowsum(dO o O),
     * block by block */
    sim_th_put(out, dQ_run, SIM_WR, Nd, Tr, k);
    sim_th_put(out, SIM_O, SIM_RD, Nd, Tr, k);
    sim_th_put(out, SIM_dO, SIM_RD, Nd, Tr, k);
    sim_th_put(out, SIM_D, SIM_WR, N, Tr, k);
    /* 9, 15 at every visited pair: Q_i, dO_i, L_i, D_i in; dQ_i in and out */
    sim_th_put(out, SIM_Q, SIM_RD, rows_d, V_b, k);
    sim_th_put(out, SIM_dO, SIM_RD, rows_d, V_b, k);
    sim_th_put(out, SIM_L, SIM_RD, rows, V_b, k);
    sim_th_put(out, SIM_D, SIM_RD, rows, V_b, k);
    sim_th_put(out, dQ_run, SIM_RD, rows_d, V_b, k);
    sim_th_put(out, dQ_run, SIM_WR, rows_d, V_b, k);
    /* 20: an fp32 accumulator is read once more and written to dQ */
    if (dQ_run != SIM_dQ) {
        sim_th_put(out, dQ_run, SIM_RD, Nd, Tr, k);
        sim_th_put(out, SIM_dQ, SIM_WR, Nd, Tr, k);
    }
    /* 18: dK_j, dV_j out for every key block (zeros where no query sees it) */
    sim_th_put(out, SIM_dK, SIM_WR, Nkd, Tc, k);
    sim_th_put(out, SIM_dV, SIM_WR, Nkd, Tc, k);
}

/* The visited block pairs and line 4's T_r blocks. */
static uint64_t fa2_bwd_steps(sim_chk *k, const sim_plan *p, const sim_shape *sh)
{
    return sim_th_add(k, sim_th_visited(k, sh, p->Br, p->Bc), (uint64_t)p->Tr);
}

/* At every visited pair, A scores over R query rows (sim_th_pair_scores):
 * five products of 2 d per score, line 10's S_ij = Q_i K_j^T recomputed,
 * 12 dV_j += P_ij^T dO_i, 13 dP_ij = dO_i V_j^T, 15 dQ_i += dS_ij K_j and
 * 16 dK_j += dS_ij^T Q_i. Per score: line 11, P_ij = exp(S_ij - L_i) (2);
 * line 14, dS_ij = P o (dP_ij - D_i) (2). Once per query row: line 4,
 * D = rowsum(dO o O) (2 d). */
static void fa2_bwd_flops(sim_chk *k, const sim_plan *p, const sim_shape *sh,
                          sim_flops *out)
{
    uint64_t R;
    const double A = sim_th_pair_scores(k, p, sh, &R), d = (double)sh->d;
    out->matmul = 10.0 * d * A;
    out->other = 4.0 * A + 2.0 * d * (double)sh->N;
}

/* FlashAttention-2's Algorithm 2, condensed; tau = 1/sqrt(d). */
static const sim_code_line FA2_BWD_CODE[] = {
    SIM_CODE(1, 0, "Q -> T_r blocks; K,V -> T_c"),
    SIM_CODE(2, 0, "O, dO, L -> T_r blocks"),
    SIM_CODE(FA2B_L3_ZERO_DQ, 0, "dQ = 0 in HBM; dK, dV -> T_c"),
    SIM_CODE(FA2B_L4_D, 0, "D = rowsum(dO o O), write D"),
    SIM_CODE(5, 0, "for j = 1 .. T_c:"),
    SIM_CODE(FA2B_L6_LOAD_KV, 1, "load K_j, V_j from HBM"),
    SIM_CODE(FA2B_L7_ZERO_ACC, 1, "dK_j = 0, dV_j = 0"),
    SIM_CODE(8, 1, "for i = 1 .. T_r:"),
    SIM_CODE(FA2B_L9_LOAD_Q, 2, "load Q_i, dO_i, L_i, D_i"),
    SIM_CODE(FA2B_L10_SCORES, 2, "S_ij = tau Q_i K_j^T"),
    SIM_CODE(11, 2, "P_ij = exp(S_ij - L_i)"),
    SIM_CODE(12, 2, "dV_j += P_ij^T dO_i"),
    SIM_CODE(13, 2, "dP_ij = dO_i V_j^T"),
    SIM_CODE(14, 2, "dS_ij = P o (dP_ij - D_i)"),
    SIM_CODE(FA2B_L15_DQ, 2, "load dQ_i, dQ_i +="),
    SIM_CODE(0, 2, "  tau dS_ij K_j, write it"),
    SIM_CODE(FA2B_L16_DK, 2, "dK_j += tau dS_ij^T Q_i"),
    SIM_CODE(17, 1, "end for"),
    SIM_CODE(FA2B_L18_WRITE_DKV, 1, "write dK_j, dV_j to HBM"),
    SIM_CODE(19, 0, "end for"),
    SIM_CODE(FA2B_L20_RETURN, 0, "return dQ, dK, dV"),
    SIM_CODE(0, 0, "  (dQ from fp32 dQ_acc)"),
};

const sim_loop sim_loop_fa2_bwd = {
    .algo = SIM_FA2,
    .pass = SIM_BWD,
    .name = "fa2",
    .title = "FlashAttention-2 (Dao 2023, Algorithm 1)",
    .code_title = "FlashAttention-2, Algorithm 2",
    .code = FA2_BWD_CODE,
    .ncode = (int)(sizeof FA2_BWD_CODE / sizeof FA2_BWD_CODE[0]),
    .no_stats = "the backward recomputes P from the forward's statistics",
    .no_stats_detail = "P_ij = exp(S_ij - L_i), L = m + log l from the forward: no running "
                       "max here",
    .hbm = 1u << SIM_Q | 1u << SIM_K | 1u << SIM_V | 1u << SIM_O | 1u << SIM_L |
           1u << SIM_dO | 1u << SIM_dQ | 1u << SIM_dK | 1u << SIM_dV | 1u << SIM_D |
           1u << SIM_dQacc,
    .kv_loads = SIM_KV_ONCE,
    .grid = SIM_GRID_COLS,
    .warps = SIM_WARPS_SPLIT_Q,
    .prefetch = 1,
    .bound = SIM_BOUND_FLASH,
    .reread = SIM_BLOCK_C,
    .mark = '2',
    .plan = fa2_bwd_plan,
    .run = fa2_bwd_run,
    .counts = fa2_bwd_counts,
    .steps = fa2_bwd_steps,
    .flops = fa2_bwd_flops,
};
