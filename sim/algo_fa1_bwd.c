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
 * zero in HBM (writes, as the forward's line 2 is counted). dQ's running
 * sum is kept as the run's intermediates say (sim.h, sim_inter): by
 * default in fp32, in HBM tensor dQ_acc (flash-attn v1's dq_tmp), and line
 * 21 of the last key block query block i sees writes dQ_i in the dtype (as
 * v1's last loop step does); with the paper's, dQ in the dtype every time.
 * P_ij is rounded to the dtype before line 16's product and dS_ij before
 * lines 21-22's, line 20 taking the fp32 P_ij.
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
#include "sim_theory.h"

/* Algorithm 4's lines, as the loop nest marks them. */
enum {
    FA1B_L5_ZERO = 5,
    FA1B_L7_LOAD_KV = 7,
    FA1B_L8_ZERO_ACC = 8,
    FA1B_L10_LOAD_Q = 10,
    FA1B_L11_SCORES = 11,
    FA1B_L21_DQ = 21,
    FA1B_L22_DK = 22,
    FA1B_L24_WRITE_DKV = 24,
    FA1B_L26_RETURN = 26
};

/* Lines 11-20 on chip for one block pair: S_ij, the mask, P_ij (in S_ij's
 * place), dV_j += P_ij^T dO_i, dP_ij, D_i, and dS_ij (in dP_ij's place).
 * Line 16 comes after 20: dS_ij takes the fp32 P_ij, which is then rounded
 * for line 16's product (h->p_round), and dS_ij for lines 21-22's. */
static SIM_NOINLINE void fa1_bwd_lines11_20(const sim_hier *h, const float *Q_i,
                                            const float *K_j, const float *V_j,
                                            const float *O_i, const float *dO_i,
                                            const float *l_i, const float *m_i, float *S_ij,
                                            float *dP_ij, float *D_i, float *dV_j, int64_t br,
                                            int64_t bc, int64_t r0, int64_t c0)
{
    const int64_t d = h->sh.d;
    ref_simd_scores(Q_i, K_j, (int)br, (int)bc, (int)d, h->scale, S_ij);     /* 11 */
    sim_mask_tile(h, S_ij, br, bc, r0, c0);                                  /* 12 */
    for (int64_t r = 0; r < br; r++)                                         /* 13 */
        ref_simd_exp_normalise(S_ij + r * bc, S_ij + r * bc, (int)bc, m_i[r],
                               l_i[r] > 0.0f ? 1.0f / l_i[r] : 0.0f);
    ref_simd_scores(dO_i, V_j, (int)br, (int)bc, (int)d, 1.0f, dP_ij);       /* 17 */
    for (int64_t r = 0; r < br; r++)                                         /* 19 */
        D_i[r] = ref_row_dot(dO_i + r * d, O_i + r * d, (int)d);
    ref_tile_ds(S_ij, dP_ij, D_i, (int)br, (int)bc, dP_ij);                  /* 20 */
    ref_round_row(S_ij, br * bc, h->p_round);
    ref_tile_acc_tn(dV_j, S_ij, dO_i, (int)br, (int)bc, (int)d, 1.0f);       /* 16 */
    ref_round_row(dP_ij, br * bc, h->p_round);
}

static int fa1_bwd_run(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc, T_r = p->Tr, T_c = p->Tc;
    /* dQ's running sum between key blocks: dQ_acc (fp32) or dQ itself. */
    const sim_tensor dQ_run = sim_inter_acc(&h->run, SIM_dQ);

    float *K_j = sim_sram_take(h, p, 1, SIM_BUF_K_j);
    float *V_j = sim_sram_take(h, p, 1, SIM_BUF_V_j);
    float *dK_j = sim_sram_take(h, p, 1, SIM_BUF_dK_j);
    float *dV_j = sim_sram_take(h, p, 1, SIM_BUF_dV_j);
    float *Q_i = sim_sram_take(h, p, 1, SIM_BUF_Q_i);
    float *O_i = sim_sram_take(h, p, 1, SIM_BUF_O_i);
    float *dO_i = sim_sram_take(h, p, 1, SIM_BUF_dO_i);
    float *dQ_i = sim_sram_take(h, p, 1, SIM_BUF_dQ_i);
    float *l_i = sim_sram_take(h, p, 1, SIM_BUF_l_i);
    float *m_i = sim_sram_take(h, p, 1, SIM_BUF_m_i);
    float *S_ij = sim_sram_take(h, p, 1, SIM_BUF_S_ij);
    float *dP_ij = sim_sram_take(h, p, 1, SIM_BUF_dP_ij);
    float *D_i = sim_sram_take(h, p, 1, SIM_BUF_D_i);
    if (h->failed)
        return -1;

    /* 2-4: block sizes (the plan's), Q, O, dO, l, m in T_r blocks; K, V in T_c. */
    /* 5: dQ = 0, dK = 0, dV = 0 in HBM, written block by block from SRAM. */
    sim_at(h, FA1B_L5_ZERO, -1, -1);
    if (h->compute) {
        for (int64_t x = 0; x < B_r * d; x++)
            dQ_i[x] = 0.0f;
        for (int64_t x = 0; x < B_c * d; x++)
            dK_j[x] = dV_j[x] = 0.0f;
    }
    for (int64_t i = 0; i < T_r; i++)
        sim_store(h, dQ_run, SIM_BUF_dQ_i, dQ_i, i * B_r, 0, sim_min64(B_r, N - i * B_r), d);
    for (int64_t j = 0; j < T_c; j++) {
        const int64_t bc = sim_min64(B_c, N_k - j * B_c);
        sim_store(h, sim_gqa_grad(&h->sh, SIM_dK), SIM_BUF_dK_j, dK_j, j * B_c, 0, bc, d);
        sim_store(h, sim_gqa_grad(&h->sh, SIM_dV), SIM_BUF_dV_j, dV_j, j * B_c, 0, bc, d);
    }
    for (int64_t j = 0; j < T_c; j++) {                              /* 6 */
        const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
        const sim_range is = sim_visit_is(h, p, j);
        if (is.lo > is.hi)
            continue;                                                /* no query sees K_j */
        sim_at(h, FA1B_L7_LOAD_KV, -1, j);
        sim_load(h, SIM_K, SIM_BUF_K_j, K_j, c0, 0, bc, d);                /* 7 */
        sim_load(h, SIM_V, SIM_BUF_V_j, V_j, c0, 0, bc, d);
        sim_at(h, FA1B_L8_ZERO_ACC, -1, j);
        if (h->compute)                                              /* 8 */
            for (int64_t x = 0; x < bc * d; x++)
                dK_j[x] = dV_j[x] = 0.0f;
        for (int64_t i = is.lo; i <= is.hi; i++) {                   /* 9 */
            if (!sim_visited(h, i, j))
                continue;                                            /* a block mask's zero */
            const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
            sim_at(h, FA1B_L10_LOAD_Q, i, j);
            sim_load(h, SIM_Q, SIM_BUF_Q_i, Q_i, r0, 0, br, d);            /* 10 */
            sim_load(h, SIM_O, SIM_BUF_O_i, O_i, r0, 0, br, d);
            sim_load(h, SIM_dO, SIM_BUF_dO_i, dO_i, r0, 0, br, d);
            sim_load(h, dQ_run, SIM_BUF_dQ_i, dQ_i, r0, 0, br, d);
            sim_load(h, SIM_l, SIM_BUF_l_i, l_i, r0, 0, br, 1);
            sim_load(h, SIM_m, SIM_BUF_m_i, m_i, r0, 0, br, 1);
            h->steps++;
            sim_at(h, FA1B_L11_SCORES, i, j);
            if (h->compute)                                          /* 11-20 */
                fa1_bwd_lines11_20(h, Q_i, K_j, V_j, O_i, dO_i, l_i, m_i, S_ij, dP_ij, D_i,
                                   dV_j, br, bc, r0, c0);
            sim_at(h, FA1B_L21_DQ, i, j);
            if (h->compute)                                          /* 21 */
                ref_tile_acc_nn(dQ_i, dP_ij, K_j, (int)br, (int)bc, (int)d, h->scale);
            /* The last key block block i sees leaves dQ in the dtype. */
            const int last = j == sim_visit_js(h, p, i).hi;
            sim_store(h, last ? SIM_dQ : dQ_run, SIM_BUF_dQ_i, dQ_i, r0, 0, br, d);
            sim_at(h, FA1B_L22_DK, i, j);
            if (h->compute)                                          /* 22 */
                ref_tile_acc_tn(dK_j, dP_ij, Q_i, (int)br, (int)bc, (int)d, h->scale);
        }                                                            /* 23 */
        sim_at(h, FA1B_L24_WRITE_DKV, -1, j);
        sim_store(h, sim_gqa_grad(&h->sh, SIM_dK), SIM_BUF_dK_j, dK_j, c0, 0, bc, d); /* 24 */
        sim_store(h, sim_gqa_grad(&h->sh, SIM_dV), SIM_BUF_dV_j, dV_j, c0, 0, bc, d);
    }                                                                /* 25 */
    sim_at(h, FA1B_L26_RETURN, -1, -1);
    sim_sram_release_all(h);
    return 0;                                                        /* 26 */
}

/* K_j, V_j and the accumulators dK_j, dV_j stay for the inner loop over
 * query blocks, which brings Q_i, O_i, dO_i, dQ_i and l_i, m_i (D_i is
 * computed on chip). The recomputed tiles are fp32. */
static void fa1_bwd_plan(sim_plan *p, const sim_shape *sh, int e)
{
    const int64_t Br = p->Br, Bc = p->Bc, d = sh->d;
    sim_plan_add(p, SIM_BUF_K_j, 1, Bc, d, e, "key block (line 7)");
    sim_plan_add(p, SIM_BUF_V_j, 1, Bc, d, e, "value block (line 7)");
    sim_plan_add(p, SIM_BUF_dK_j, 1, Bc, d, 4, "fp32 accumulator (line 8)");
    sim_plan_add(p, SIM_BUF_dV_j, 1, Bc, d, 4, "fp32 accumulator (line 8)");
    sim_plan_add(p, SIM_BUF_Q_i, 1, Br, d, e, "query block (line 10)");
    sim_plan_add(p, SIM_BUF_O_i, 1, Br, d, e, "output block, for D_i (line 10)");
    sim_plan_add(p, SIM_BUF_dO_i, 1, Br, d, e, "output gradient block (line 10)");
    sim_plan_add(p, SIM_BUF_dQ_i, 1, Br, d, 4, "query gradient, fp32 (line 10)");
    sim_plan_add(p, SIM_BUF_l_i, 1, Br, 1, 4, "row sums (line 10)");
    sim_plan_add(p, SIM_BUF_m_i, 1, Br, 1, 4, "row maxima (line 10)");
    sim_plan_add(p, SIM_BUF_S_ij, 1, Br, Bc, 4, "scores, then P_ij (lines 11-13)");
    sim_plan_add(p, SIM_BUF_dP_ij, 1, Br, Bc, 4, "dP_ij, then dS_ij (lines 17-20)");
    sim_plan_add(p, SIM_BUF_D_i, 1, Br, 1, 4, "rowsum(dO_i o O_i) (line 19)");
    p->nphases = 1;
}

/* V_b visited pairs; rows = the query rows summed over them. */
static void fa1_bwd_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh,
                           sim_counts *out)
{
    const uint64_t N = (uint64_t)sh->N, N_k = (uint64_t)sim_shape_Nk(sh), d = (uint64_t)sh->d;
    const uint64_t Tr = (uint64_t)p->Tr, Tc = (uint64_t)p->Tc;
    const uint64_t Nd = sim_th_mul(k, N, d), Nkd = sim_th_mul(k, N_k, d);
    uint64_t V_b;
    const uint64_t rows = sim_th_pair_rows(k, p, sh, &V_b), rows_d = sim_th_mul(k, rows, d);
    const sim_tensor dQ_run = sim_inter_acc(&p->run, SIM_dQ);
    uint64_t kv_blocks;
    const uint64_t kv = sim_bwd_kv_counts(k, p, sh, out, &kv_blocks);   /* 7 */
    /* 5: dQ (its running sum's tensor), dK, dV = 0 in HBM, block by block */
    sim_th_put(out, dQ_run, SIM_WR, Nd, Tr, k);
    sim_th_put(out, SIM_dK, SIM_WR, Nkd, Tc, k);
    sim_th_put(out, SIM_dV, SIM_WR, Nkd, Tc, k);
    /* 10, 21 at every visited pair: Q_i, O_i, dO_i, dQ_i, l_i, m_i in; dQ_i
     * out, to dQ at the last key block of each query block (every one sees
     * some key: N d in T_r transfers), to the running sum's tensor else */
    sim_th_put(out, SIM_Q, SIM_RD, rows_d, V_b, k);
    sim_th_put(out, SIM_O, SIM_RD, rows_d, V_b, k);
    sim_th_put(out, SIM_dO, SIM_RD, rows_d, V_b, k);
    sim_th_put(out, dQ_run, SIM_RD, rows_d, V_b, k);
    sim_th_put(out, SIM_l, SIM_RD, rows, V_b, k);
    sim_th_put(out, SIM_m, SIM_RD, rows, V_b, k);
    sim_th_put(out, SIM_dQ, SIM_WR, Nd, Tr, k);
    sim_th_put(out, dQ_run, SIM_WR, rows_d - Nd, V_b - Tr, k);
    /* 24: dK_j, dV_j out for the key blocks visited */
    sim_th_put(out, SIM_dK, SIM_WR, kv, kv_blocks, k);
    sim_th_put(out, SIM_dV, SIM_WR, kv, kv_blocks, k);
}

/* The visited block pairs. */
static uint64_t fa1_bwd_steps(sim_chk *k, const sim_plan *p, const sim_shape *sh)
{
    return sim_th_visited(k, sh, p->Br, p->Bc);
}

/* At every visited pair, A scores over R query rows (sim_th_pair_scores):
 * five products of 2 d per score, line 11's S_ij = Q_i K_j^T recomputed,
 * 16 dV_j += P_ij^T dO_i, 17 dP_ij = dO_i V_j^T, 21 dQ_i += dS_ij K_j and
 * 22 dK_j += dS_ij^T Q_i. Per score: line 13, P_ij = exp(S_ij - m_i) / l_i
 * (3); line 20, dS_ij = P o (dP_ij - D_i) (2). Per row of a pair: line 19,
 * D_i = rowsum(dO_i o O_i), recomputed at every pair (2 d). */
static void fa1_bwd_flops(sim_chk *k, const sim_plan *p, const sim_shape *sh,
                          sim_flops *out)
{
    uint64_t R;
    const double A = sim_th_pair_scores(k, p, sh, &R), d = (double)sh->d;
    out->matmul = 10.0 * d * A;
    out->other = 5.0 * A + 2.0 * d * (double)R;
}

/* FlashAttention's Algorithm 4, condensed. Its dropout lines (1, 14, 15,
 * 18) are identities without dropout and stay as comments; tau = 1/sqrt(d). */
static const sim_code_line FA1_BWD_CODE[] = {
    SIM_CODE(1, 0, "(dropout state: none)"),
    SIM_CODE(2, 0, "B_c = ceil(M/4d), B_r = ..."),
    SIM_CODE(3, 0, "Q -> T_r blocks; K,V -> T_c"),
    SIM_CODE(4, 0, "O, dO, l, m -> T_r blocks"),
    SIM_CODE(FA1B_L5_ZERO, 0, "dQ = 0, dK = 0, dV = 0 in HBM"),
    SIM_CODE(6, 0, "for j = 1 .. T_c:"),
    SIM_CODE(FA1B_L7_LOAD_KV, 1, "load K_j, V_j from HBM"),
    SIM_CODE(FA1B_L8_ZERO_ACC, 1, "dK~_j = 0, dV~_j = 0"),
    SIM_CODE(9, 1, "for i = 1 .. T_r:"),
    SIM_CODE(FA1B_L10_LOAD_Q, 2, "load Q_i,O_i,dO_i,dQ_i,"),
    SIM_CODE(0, 2, "  l_i, m_i"),
    SIM_CODE(FA1B_L11_SCORES, 2, "S_ij = tau Q_i K_j^T"),
    SIM_CODE(12, 2, "mask(S_ij)"),
    SIM_CODE(13, 2, "P_ij = diag(l_i)^-1 *"),
    SIM_CODE(0, 2, "  exp(S_ij - m_i)"),
    SIM_CODE(14, 2, "(15: no dropout)"),
    SIM_CODE(16, 2, "dV~_j += P_ij^T dO_i"),
    SIM_CODE(17, 2, "dP_ij = dO_i V_j^T (18)"),
    SIM_CODE(19, 2, "D_i = rowsum(dO_i o O_i)"),
    SIM_CODE(20, 2, "dS_ij = P o (dP_ij - D_i)"),
    SIM_CODE(FA1B_L21_DQ, 2, "write dQ_i += tau dS K_j"),
    SIM_CODE(FA1B_L22_DK, 2, "dK~_j += tau dS_ij^T Q_i"),
    SIM_CODE(23, 1, "end for"),
    SIM_CODE(FA1B_L24_WRITE_DKV, 1, "write dK_j, dV_j to HBM"),
    SIM_CODE(25, 0, "end for"),
    SIM_CODE(FA1B_L26_RETURN, 0, "return dQ, dK, dV"),
};

const sim_loop sim_loop_fa1_bwd = {
    .algo = SIM_FA1,
    .pass = SIM_BWD,
    .name = "fa1",
    .title = "FlashAttention-1 (Dao et al. 2022, Algorithm 1)",
    .code_title = "FlashAttention, Algorithm 4",
    .code = FA1_BWD_CODE,
    .ncode = (int)(sizeof FA1_BWD_CODE / sizeof FA1_BWD_CODE[0]),
    .no_stats = "the backward recomputes P from the forward's statistics",
    .no_stats_detail = "P_ij = diag(l_i)^-1 exp(S_ij - m_i), l and m from the forward",
    .hbm = 1u << SIM_Q | 1u << SIM_K | 1u << SIM_V | 1u << SIM_O | 1u << SIM_m | 1u << SIM_l |
           1u << SIM_Oacc | 1u << SIM_dQacc |
           1u << SIM_dO | 1u << SIM_dQ | 1u << SIM_dK | 1u << SIM_dV,
    .kv_loads = SIM_KV_ONCE,
    .grid = SIM_GRID_HEAD_OR_COLS,
    .warps = SIM_WARPS_SPLIT_K,
    .prefetch = 1,           /* v1 loads the next Q_i during a step */
    .bound = SIM_BOUND_FLASH,
    .reread = SIM_BLOCK_C,
    .mark = '1',
    .plan = fa1_bwd_plan,
    .run = fa1_bwd_run,
    .counts = fa1_bwd_counts,
    .steps = fa1_bwd_steps,
    .flops = fa1_bwd_flops,
};
