/*
 * algo_naive_bwd.c — standard attention's backward pass (FlashAttention paper,
 * Algorithm 3), with its line numbers in the comments:
 *
 *   1: Load P, dO by blocks from HBM, compute dV = P^T dO, write dV to HBM.
 *   2: Load dO, V by blocks from HBM, compute dP = dO V^T, write dP to HBM.
 *   3: Read P, dP from HBM, compute dS, dS_ij = P_ij (dP_ij - sum_l P_il dP_il),
 *      write dS to HBM.
 *   4: Load dS and K by blocks from HBM, compute dQ = dS K, write dQ to HBM.
 *   5: Load dS and Q by blocks from HBM, compute dK = dS^T Q, write dK to HBM.
 *
 * P comes from the forward pass (Algorithm 0), stored in HBM in the dtype;
 * dP and dS are N x N_k tensors too, in the dtype. The products are tiled
 * B_r x B_c so that SRAM is respected, each accumulated in fp32 on chip and
 * written once. Line 3 needs each row's sum of P o dP: one pass over whole
 * rows of P and dP when two rows fit in SRAM, else two passes over tiles
 * (the sums, then dS). The scale 1/sqrt(d) of S = Q K^T / sqrt(d) multiplies
 * dQ and dK (Algorithm 3 leaves it out, as Algorithm 0 does).
 * With causal masking P is 0 where S was masked, so dS is 0 there; standard
 * attention still moves every tile.
 *
 * Shapes: Q, dQ, dO (N, d); K, V, dK, dV (N_k, d); P, dP, dS (N, N_k);
 * Q_i, dO_i, dQ_i (B_r, d); K_j, V_j, dK_j, dV_j (B_c, d); P_ij, dP_ij,
 * dS_ij (B_r, B_c); P_rows, dP_rows (B_s, N_k). Row-major.
 */
#include "sim_hier.h"
#include "sim_theory.h"

/* Algorithm 3's lines, as the loop nest marks them. */
enum {
    NBWD_L1_DV = 1,
    NBWD_L2_DP = 2,
    NBWD_L3_DS = 3,
    NBWD_L4_DQ = 4,
    NBWD_L5_DK = 5,
    NBWD_L6_RETURN = 6
};

static void zero(float *x, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        x[k] = 0.0f;
}

/* Lines 1 and 5 have one shape: for each key block j, an fp32 accumulator
 * Y_j = scale X^T Z over the query blocks i (X an N x N_k tensor's tiles X_ij,
 * Z_i a query-side block), written once. Line 1: dV = P^T dO; line 5:
 * dK = scale dS^T Q. */
static int kv_side_product(sim_hier *h, const sim_plan *p, int line, sim_tensor X,
                           sim_buf_id Xb, sim_tensor Z, sim_buf_id Zb, sim_tensor Y,
                           sim_buf_id Yb, float scale)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc;
    float *X_ij = sim_sram_take(h, p, line, Xb);
    float *Z_i = sim_sram_take(h, p, line, Zb);
    float *Y_j = sim_sram_take(h, p, line, Yb);
    if (h->failed)
        return -1;
    for (int64_t j = 0; j < p->Tc; j++) {
        const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
        sim_at(h, line, -1, j);
        if (h->compute)
            zero(Y_j, bc * d);
        for (int64_t i = 0; i < p->Tr; i++) {
            const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
            sim_at(h, line, i, j);
            sim_load(h, X, Xb, X_ij, r0, c0, br, bc);
            sim_load(h, Z, Zb, Z_i, r0, 0, br, d);
            h->steps++;
            if (h->compute)
                ref_tile_acc_tn(Y_j, X_ij, Z_i, (int)br, (int)bc, (int)d, scale);
        }
        sim_store(h, Y, Yb, Y_j, c0, 0, bc, d);
    }
    sim_sram_release_all(h);
    return 0;
}

/* Line 2: dP = dO V^T, tile by tile. */
static int line2_dP(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc;
    float *dO_i = sim_sram_take(h, p, 2, SIM_BUF_dO_i);
    float *V_j = sim_sram_take(h, p, 2, SIM_BUF_V_j);
    float *dP_ij = sim_sram_take(h, p, 2, SIM_BUF_dP_ij);
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        sim_at(h, NBWD_L2_DP, i, -1);
        sim_load(h, SIM_dO, SIM_BUF_dO_i, dO_i, r0, 0, br, d);
        for (int64_t j = 0; j < p->Tc; j++) {
            const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
            sim_at(h, NBWD_L2_DP, i, j);
            sim_load(h, SIM_V, SIM_BUF_V_j, V_j, c0, 0, bc, d);
            h->steps++;
            if (h->compute)
                ref_simd_scores(dO_i, V_j, (int)br, (int)bc, (int)d, 1.0f, dP_ij);
            sim_store(h, SIM_dP, SIM_BUF_dP_ij, dP_ij, r0, c0, br, bc);
        }
    }
    sim_sram_release_all(h);
    return 0;
}

/* Line 3, one pass: B_s whole rows of P and dP at a time; dS in dP's place. */
static int line3_rows(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), B_s = p->Bs_r;
    float *P_rows = sim_sram_take(h, p, 3, SIM_BUF_P_rows);
    float *dP_rows = sim_sram_take(h, p, 3, SIM_BUF_dP_rows);
    float *D = sim_sram_take(h, p, 3, SIM_BUF_D);
    if (h->failed)
        return -1;
    for (int64_t i = 0; i * B_s < N; i++) {
        const int64_t r0 = i * B_s, rows = sim_min64(B_s, N - r0);
        sim_at(h, NBWD_L3_DS, i, -1);
        sim_load(h, SIM_P, SIM_BUF_P_rows, P_rows, r0, 0, rows, N_k);
        sim_load(h, SIM_dP, SIM_BUF_dP_rows, dP_rows, r0, 0, rows, N_k);
        h->steps++;
        if (h->compute) {
            for (int64_t r = 0; r < rows; r++)
                D[r] = ref_row_dot_acc(P_rows + r * N_k, dP_rows + r * N_k, (int)N_k, 0.0f);
            ref_tile_ds(P_rows, dP_rows, D, (int)rows, (int)N_k, dP_rows);
        }
        sim_store(h, SIM_dS, SIM_BUF_dP_rows, dP_rows, r0, 0, rows, N_k);
    }
    sim_sram_release_all(h);
    return 0;
}

/* Line 3, two passes over B_r x B_c tiles when two rows do not fit: the row
 * sums, continued tile after tile in the order of one pass (so both give the
 * same bits), then dS. */
static int line3_two_pass(sim_hier *h, const sim_plan *p)
{
    float *P_ij = sim_sram_take(h, p, 3, SIM_BUF_P_ij);
    float *dP_ij = sim_sram_take(h, p, 3, SIM_BUF_dP_ij);
    float *D_i = sim_sram_take(h, p, 3, SIM_BUF_D_i);
    if (h->failed)
        return -1;
    sim_softmax_bwd_tiles(h, p, NBWD_L3_DS, SIM_P, SIM_dP, SIM_dS, 0, P_ij, dP_ij, D_i);
    sim_sram_release_all(h);
    return 0;
}

/* Line 4: dQ = scale dS K, one query block's accumulator at a time. */
static int line4_dQ(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc;
    float *dS_ij = sim_sram_take(h, p, 4, SIM_BUF_dS_ij);
    float *K_j = sim_sram_take(h, p, 4, SIM_BUF_K_j);
    float *dQ_i = sim_sram_take(h, p, 4, SIM_BUF_dQ_i);
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        sim_at(h, NBWD_L4_DQ, i, -1);
        if (h->compute)
            zero(dQ_i, br * d);
        for (int64_t j = 0; j < p->Tc; j++) {
            const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
            sim_at(h, NBWD_L4_DQ, i, j);
            sim_load(h, SIM_dS, SIM_BUF_dS_ij, dS_ij, r0, c0, br, bc);
            sim_load(h, SIM_K, SIM_BUF_K_j, K_j, c0, 0, bc, d);
            h->steps++;
            if (h->compute)
                ref_tile_acc_nn(dQ_i, dS_ij, K_j, (int)br, (int)bc, (int)d, h->scale);
        }
        sim_store(h, SIM_dQ, SIM_BUF_dQ_i, dQ_i, r0, 0, br, d);
    }
    sim_sram_release_all(h);
    return 0;
}

static int naive_bwd_run(sim_hier *h, const sim_plan *p)
{
    const sim_tensor dK = sim_gqa_grad(&h->sh, SIM_dK), dV = sim_gqa_grad(&h->sh, SIM_dV);
    if (kv_side_product(h, p, NBWD_L1_DV, SIM_P, SIM_BUF_P_ij, SIM_dO, SIM_BUF_dO_i, dV,
                        SIM_BUF_dV_j, 1.0f) != 0)
        return -1;                                          /* 1: dV = P^T dO */
    if (line2_dP(h, p) != 0)                                /* 2: dP = dO V^T */
        return -1;
    if ((p->softmax_passes == 1 ? line3_rows(h, p) : line3_two_pass(h, p)) != 0)
        return -1;                                          /* 3: dS */
    if (line4_dQ(h, p) != 0)                                /* 4: dQ = dS K */
        return -1;
    if (kv_side_product(h, p, NBWD_L5_DK, SIM_dS, SIM_BUF_dS_ij, SIM_Q, SIM_BUF_Q_i, dK,
                        SIM_BUF_dK_j, h->scale) != 0)       /* 5: dK = dS^T Q */
        return -1;
    sim_at(h, NBWD_L6_RETURN, -1, -1);                     /* 6: return dQ, dK, dV */
    return 0;
}

/* Five phases, one per line: 1 dV = P^T dO (dV_j kept, K/V-block outer),
 * 2 dP = dO V^T, 3 dS = P o (dP - rowsum(P o dP)) over whole rows (one
 * pass) or tiles (two: the sums, then dS), 4 dQ = dS K, 5 dK = dS^T Q.
 * Accumulators and the recomputed tiles are fp32. */
static void naive_bwd_plan(sim_plan *p, const sim_shape *sh, int e)
{
    const int64_t Br = p->Br, Bc = p->Bc, d = sh->d, N_k = sim_shape_Nk(sh);
    sim_plan_add(p, SIM_BUF_P_ij, 1, Br, Bc, e, "tile of P (line 1)");
    sim_plan_add(p, SIM_BUF_dO_i, 1, Br, d, e, "output gradient block");
    sim_plan_add(p, SIM_BUF_dV_j, 1, Bc, d, 4, "fp32 accumulator of P^T dO");
    sim_plan_add(p, SIM_BUF_dO_i, 2, Br, d, e, "output gradient block (line 2)");
    sim_plan_add(p, SIM_BUF_V_j, 2, Bc, d, e, "value block");
    sim_plan_add(p, SIM_BUF_dP_ij, 2, Br, Bc, 4, "fp32 accumulator of dO V^T");
    p->Bs_r = sim_plan_rows(sh, 8, 4);         /* rows of P and dP, fp32, and D */
    if (p->Bs_r > 0) {
        p->softmax_passes = 1;
        sim_plan_add(p, SIM_BUF_P_rows, 3, p->Bs_r, N_k, 4, "whole rows of P, fp32 (line 3)");
        sim_plan_add(p, SIM_BUF_dP_rows, 3, p->Bs_r, N_k, 4, "whole rows of dP; dS in place");
        sim_plan_add(p, SIM_BUF_D, 3, p->Bs_r, 1, 4, "row sums of P o dP");
    } else {
        p->softmax_passes = 2;
        sim_plan_add(p, SIM_BUF_P_ij, 3, Br, Bc, 4, "tile of P, fp32 (line 3)");
        sim_plan_add(p, SIM_BUF_dP_ij, 3, Br, Bc, 4, "tile of dP; dS in place");
        sim_plan_add(p, SIM_BUF_D_i, 3, Br, 1, 4, "row sums of P o dP");
    }
    sim_plan_add(p, SIM_BUF_dS_ij, 4, Br, Bc, e, "tile of dS (line 4)");
    sim_plan_add(p, SIM_BUF_K_j, 4, Bc, d, e, "key block");
    sim_plan_add(p, SIM_BUF_dQ_i, 4, Br, d, 4, "fp32 accumulator of dS K");
    sim_plan_add(p, SIM_BUF_dS_ij, 5, Br, Bc, e, "tile of dS (line 5)");
    sim_plan_add(p, SIM_BUF_Q_i, 5, Br, d, e, "query block");
    sim_plan_add(p, SIM_BUF_dK_j, 5, Bc, d, 4, "fp32 accumulator of dS^T Q");
    p->nphases = 5;
}

static void naive_bwd_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh,
                             sim_counts *out)
{
    const uint64_t N = (uint64_t)sh->N, N_k = (uint64_t)sim_shape_Nk(sh), d = (uint64_t)sh->d;
    const uint64_t Tr = (uint64_t)p->Tr, Tc = (uint64_t)p->Tc;
    const uint64_t Nd = sim_th_mul(k, N, d), Nkd = sim_th_mul(k, N_k, d);
    const uint64_t TT = sim_th_mul(k, Tr, Tc), NN = sim_th_mul(k, N, N_k);
    /* 1: for j { for i { load P_ij, dO_i } store dV_j } */
    sim_th_put(out, SIM_P, SIM_RD, NN, TT, k);
    sim_th_put(out, SIM_dO, SIM_RD, sim_th_mul(k, Tc, Nd), TT, k);
    sim_th_put(out, SIM_dV, SIM_WR, Nkd, Tc, k);
    /* 2: for i { load dO_i; for j { load V_j; store dP_ij } } */
    sim_th_put(out, SIM_dO, SIM_RD, Nd, Tr, k);
    sim_th_put(out, SIM_V, SIM_RD, sim_th_mul(k, Tr, Nkd), TT, k);
    sim_th_put(out, SIM_dP, SIM_WR, NN, TT, k);
    /* 3: dS from P and dP: whole rows once, or tiles twice (sums, dS) */
    if (p->softmax_passes == 1) {
        uint64_t T_s = (N + (uint64_t)p->Bs_r - 1) / (uint64_t)p->Bs_r;
        sim_th_put(out, SIM_P, SIM_RD, NN, T_s, k);
        sim_th_put(out, SIM_dP, SIM_RD, NN, T_s, k);
        sim_th_put(out, SIM_dS, SIM_WR, NN, T_s, k);
    } else {
        sim_th_put(out, SIM_P, SIM_RD, sim_th_mul(k, 2, NN), sim_th_mul(k, 2, TT), k);
        sim_th_put(out, SIM_dP, SIM_RD, sim_th_mul(k, 2, NN), sim_th_mul(k, 2, TT), k);
        sim_th_put(out, SIM_dS, SIM_WR, NN, TT, k);
    }
    /* 4: for i { for j { load dS_ij, K_j } store dQ_i } */
    sim_th_put(out, SIM_dS, SIM_RD, NN, TT, k);
    sim_th_put(out, SIM_K, SIM_RD, sim_th_mul(k, Tr, Nkd), TT, k);
    sim_th_put(out, SIM_dQ, SIM_WR, Nd, Tr, k);
    /* 5: for j { for i { load dS_ij, Q_i } store dK_j } */
    sim_th_put(out, SIM_dS, SIM_RD, NN, TT, k);
    sim_th_put(out, SIM_Q, SIM_RD, sim_th_mul(k, Tc, Nd), TT, k);
    sim_th_put(out, SIM_dK, SIM_WR, Nkd, Tc, k);
}

/* Lines 1, 2, 4, 5 tile by tile, line 3 in 1 or 2 passes. */
static uint64_t naive_bwd_steps(sim_chk *k, const sim_plan *p, const sim_shape *sh)
{
    return sim_naive_steps(k, p, sh, 4);
}

/* Every score, masked or not. Lines 1, 2, 4, 5: dV = P^T dO, dP = dO V^T,
 * dQ = dS K, dK = dS^T Q, 2 N N_k d each. Line 3 per score, in one pass or
 * two alike: D = rowsum(P o dP) (a multiply and an add) and
 * dS = P o (dP - D) (a subtract and a multiply). */
static void naive_bwd_flops(sim_chk *k, const sim_plan *p, const sim_shape *sh,
                            sim_flops *out)
{
    (void)k;
    (void)p;
    const double NN = (double)sh->N * (double)sim_shape_Nk(sh);
    out->matmul = 8.0 * (double)sh->d * NN;
    out->other = 4.0 * NN;
}

/* FlashAttention's Algorithm 3, condensed as the forward listings;
 * tau = 1/sqrt(d). The backward keeps no running statistics for a view. */
/* The tiles a view outlines at each line: as the forward's lines 1-3
 * (Q, K, S; S, P; O, V, P), then P. */
#define NBWD_TILES_1 (1u << SIM_Q | 1u << SIM_K | 1u << SIM_S)
#define NBWD_TILES_2 (1u << SIM_S | 1u << SIM_P)
#define NBWD_TILES_3 (1u << SIM_O | 1u << SIM_V | 1u << SIM_P)
#define NBWD_TILES_4 (1u << SIM_P)

static const sim_code_line NAIVE_BWD_CODE[] = {
    { NBWD_L1_DV, 0, "load P, dO by blocks,", 0, SIM_HEAT_NONE, NULL, NBWD_TILES_1 },
    SIM_CODE(0, 0, "  dV = P^T dO, write dV"),
    { NBWD_L2_DP, 0, "load dO, V by blocks,", 0, SIM_HEAT_NONE, NULL, NBWD_TILES_2 },
    SIM_CODE(0, 0, "  dP = dO V^T, write dP"),
    { NBWD_L3_DS, 0, "read P, dP; dS = P o (dP -", SIM_VIEW_SOFTMAX, SIM_HEAT_NONE, NULL,
      NBWD_TILES_3 },
    SIM_CODE(0, 0, "  rowsum(P o dP)), write dS"),
    { NBWD_L4_DQ, 0, "load dS, K by blocks,", 0, SIM_HEAT_NONE, NULL, NBWD_TILES_4 },
    SIM_CODE(0, 0, "  dQ = tau dS K, write dQ"),
    { NBWD_L5_DK, 0, "load dS, Q by blocks,", 0, SIM_HEAT_NONE, NULL, NBWD_TILES_4 },
    SIM_CODE(0, 0, "  dK = tau dS^T Q, write dK"),
    { NBWD_L6_RETURN, 0, "return dQ, dK, dV", 0, SIM_HEAT_NONE, NULL, NBWD_TILES_4 },
};

const sim_loop sim_loop_naive_bwd = {
    .algo = SIM_NAIVE,
    .pass = SIM_BWD,
    .name = "naive",
    .title = "standard attention (FlashAttention paper, Algorithm 0)",
    .code_title = "standard backward, Algorithm 3",
    .code = NAIVE_BWD_CODE,
    .ncode = (int)(sizeof NAIVE_BWD_CODE / sizeof NAIVE_BWD_CODE[0]),
    .flags = SIM_LOOP_LINE_BLOCKS | SIM_LOOP_TILE_S,
    .no_stats = "the backward reads P from HBM",
    .hbm = 1u << SIM_Q | 1u << SIM_K | 1u << SIM_V | 1u << SIM_O | 1u << SIM_S | 1u << SIM_P |
           1u << SIM_dO | 1u << SIM_dQ | 1u << SIM_dK | 1u << SIM_dV | 1u << SIM_dP |
           1u << SIM_dS,
    .kv_loads = SIM_KV_EVERY_I,
    .grid = SIM_GRID_PER_LINE,
    .prefetch = 1,
    .bound = SIM_BOUND_STANDARD,
    .reread = SIM_BLOCK_R,
    .mark = 'n',
    .plan = naive_bwd_plan,
    .run = naive_bwd_run,
    .counts = naive_bwd_counts,
    .steps = naive_bwd_steps,
    .flops = naive_bwd_flops,
};
