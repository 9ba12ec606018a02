/*
 * kern_naive_bwd.cuh — standard attention's backward pass (FlashAttention
 * paper, Algorithm 3) as one kernel per line, beside sim/algo_naive_bwd.c,
 * with its line numbers:
 *
 *   1: kern_naive_bwd_dv        dV = P^T dO            grid (T_c, B H), phase 1
 *   2: kern_naive_bwd_dp        dP = dO V^T            grid (T_r, B H), phase 2
 *   3: kern_naive_bwd_ds_rows   dS = P o (dP - rowsum(P o dP)) over B_s whole
 *                               rows a block           grid (ceil(N / B_s), B H)
 *      kern_naive_bwd_ds_2pass  the same over B_r x B_c tiles in two passes
 *                               (the row sums, then dS) grid (T_r, B H), phase 3
 *   4: kern_naive_bwd_dq        dQ = scale dS K        grid (T_r, B H), phase 4
 *   5: kern_naive_bwd_dk        dK = scale dS^T Q      grid (T_c, B H), phase 5
 *
 * P comes from the forward's kernels (kern_naive.cuh), left in global memory
 * in the dtype; dP and dS are N x N_k tensors in the dtype too, written by
 * lines 2 and 3 and read by the lines after. Line 3 takes the plan's form
 * (plan->softmax_passes): one pass over whole rows when two rows of P and dP
 * fit, else two over tiles, the row sums continued tile after tile so that
 * both forms give the same bits. Each block owns one output block (dV_j,
 * dP's row block i, dS's rows, dQ_i, dK_j) and writes it once: no block
 * reads what another writes within a launch, so the order the blocks run in
 * never matters. With causal masking P is 0 where S was masked, so dS is 0
 * there; standard attention still moves every tile.
 *
 * Threads split rows: thread t computes rows t, t + blockDim, ... of dP_ij,
 * of the rows of line 3 and of dQ_i, and rows t, t + blockDim, ... of dV_j
 * and dK_j (key rows), each element's sum whole, in ref_tile.h's order, so
 * the bits are the simulator's for any number of threads.
 *
 * Shared memory: the plan's buffers of each phase (naive_bwd_plan) at the
 * plan's bytes, the fp32 ones first, then the tiles in the dtype: line 1:
 * dV_j (B_c, d), then P_ij (B_r, B_c), dO_i (B_r, d); line 2: dP_ij
 * (B_r, B_c), then dO_i, V_j (B_c, d); line 3, all fp32: P_rows, dP_rows
 * (B_s, N_k), D (B_s), or P_ij, dP_ij (B_r, B_c), D_i (B_r); line 4: dQ_i
 * (B_r, d), then dS_ij, K_j; line 5: dK_j (B_c, d), then dS_ij, Q_i.
 *
 * Shapes, one head: Q, dO, dQ (N, d); K, V, dK, dV (N_k, d); P, dP, dS
 * (N, N_k). Row-major.
 *
 * A deliberately wrong variant, for the test that must catch it (never
 * defined in the fasim build):
 *   KERN_BUG_NAIVE_BWD_D_PER_TILE  line 3's two passes restart each row sum
 *                                  at every tile (D_i = the last tile's sum),
 *                                  so dQ and dK are wrong where a row spans
 *                                  several tiles; dV, the one-pass form and
 *                                  the counts right
 */
#ifndef FASIM_KERN_NAIVE_BWD_CUH
#define FASIM_KERN_NAIVE_BWD_CUH

#include "kern_gqa_bwd.cuh"
#include "kern_naive.cuh"
#include "kern_tile.h"

/* Lines 1, 4 and 5: block (b, q) accumulates one output block Y_b of head q
 * in fp32 over the blocks of the other side, and writes it once:
 *   line 1: dV_j = P^T dO        b = j, over i: P_ij, dO_i
 *   line 4: dQ_i = scale dS K    b = i, over j: dS_ij, K_j
 *   line 5: dK_j = scale dS^T Q  b = j, over i: dS_ij, Q_i
 * X_ij is a tile of an N x N_k tensor (P, dS), Z a block of the other side
 * (dO_i, K_j, Q_i). */
KERN_DEVICE void naive_bwd_product(const kern_params *pp, int line)
{
    kern_params p = *pp;
    kern_at_head(&p, kern_block_y());
    const int64_t N = p.N, N_k = p.Nk, d = p.d, B_r = p.Br, B_c = p.Bc;
    const int64_t tid = kern_thread_x(), nt = kern_block_dim();
    const int kv = line != 4;        /* Y_j on the key side, summed over i: X^T Z */
    const int64_t B_y = kv ? B_c : B_r, B_z = kv ? B_r : B_c, T = kv ? p.Tr : p.Tc;
    const int64_t y0 = kern_block_x() * B_y, by = kern_min(B_y, (kv ? N_k : N) - y0);
    const sim_tensor tX = line == 1 ? SIM_P : SIM_dS;
    const sim_tensor tZ = line == 1 ? SIM_dO : line == 4 ? SIM_K : SIM_Q;
    sim_tensor tY = line == 1 ? SIM_dV : line == 4 ? SIM_dQ : SIM_dK;
    const float *X = line == 1 ? p.P : p.dS;
    const float *Z = line == 1 ? p.dO : line == 4 ? p.K : p.Q;
    /* dK, dV: this query head's dK_exp, dV_exp under GQA (kern_gqa_bwd.cuh) */
    float *Y = line == 4 ? p.dQ : kern_gqa_grad(&p, &tY);
    const float scale = line == 1 ? 1.0f : p.scale;

    const sim_dtype dt = p.dtype;
    const int64_t e = kern_tile_elem_bytes(dt);
    unsigned char *sm = KERN_SHARED();
    float *Y_b = (float *)kern_carve(&sm, line == 1 ? "dV_j" : line == 4 ? "dQ_i" : "dK_j",
                                     B_y * d * 4);
    void *X_ij = kern_carve(&sm, line == 1 ? "P_ij" : "dS_ij", B_r * B_c * e);
    void *Z_b = kern_carve(&sm, line == 1 ? "dO_i" : line == 4 ? "K_j" : "Q_i", B_z * d * e);
    const kern_tv Xv = kern_tv_make(X_ij, dt), Zv = kern_tv_make(Z_b, dt);

    for (int64_t x = tid; x < by; x += nt)
        for (int64_t t = 0; t < d; t++)
            Y_b[x * d + t] = 0.0f;
    for (int64_t k = 0; k < T; k++) {
        const int64_t z0 = k * B_z, bz = kern_min(B_z, (kv ? N : N_k) - z0);
        const int64_t r0 = kv ? z0 : y0, br = kv ? bz : by;    /* X_ij's rows, */
        const int64_t c0 = kv ? y0 : z0, bc = kv ? by : bz;    /* and its columns */
        KERN_SYNC();            /* every row is done with X_ij, Z of step k - 1 */
        kern_load_tile(p.cnt, tX, dt, X_ij, X, N_k, r0, c0, br, bc);
        kern_load_tile(p.cnt, tZ, dt, Z_b, Z, d, z0, 0, bz, d);
        KERN_SYNC();
        for (int64_t x = tid; x < by; x += nt) {
            if (kv)
                kern_acc_tn_row_tv(Y_b + x * d, (int)x, Xv, (int)br, (int)bc, Zv, (int)d,
                                   scale);
            else
                kern_acc_nn_row_tv(Y_b + x * d, Xv, x * bc, (int)bc, Zv, (int)d, scale);
        }
    }
    KERN_SYNC();                /* Y_b whole */
    kern_store(p.cnt, dt, tY, Y, d, y0, 0, by, d, Y_b);
}

/* Line 1: dV = P^T dO, block j owning dV_j. */
KERN_GLOBAL kern_naive_bwd_dv(kern_params p)
{
    naive_bwd_product(&p, 1);
}

/* Line 2: dP = dO V^T, block i computing row block i of dP tile by tile
 * (the forward's line 1 on dO and V, unscaled and unmasked). */
KERN_GLOBAL kern_naive_bwd_dp(kern_params p)
{
    naive_row_products(&p, 1);
}

/* Line 3, one pass: block b turns B_s whole rows of P and dP into dS, dS in
 * dP's place. */
KERN_GLOBAL kern_naive_bwd_ds_rows(kern_params p)
{
    kern_at_head(&p, kern_block_y());
    const int64_t N = p.N, N_k = p.Nk, B_s = p.Bs_r;
    const int64_t tid = kern_thread_x(), nt = kern_block_dim();
    const int64_t r0 = kern_block_x() * B_s, rows = kern_min(B_s, N - r0);

    unsigned char *sm = KERN_SHARED();
    float *P_rows = (float *)kern_carve(&sm, "P_rows", B_s * N_k * 4);
    float *dP_rows = (float *)kern_carve(&sm, "dP_rows", B_s * N_k * 4);
    float *D = (float *)kern_carve(&sm, "D", B_s * 4);

    kern_load(p.cnt, SIM_P, P_rows, p.P, N_k, r0, 0, rows, N_k);
    kern_load(p.cnt, SIM_dP, dP_rows, p.dP, N_k, r0, 0, rows, N_k);
    KERN_SYNC();
    for (int64_t r = tid; r < rows; r += nt) {
        const float *P_r = P_rows + r * N_k;
        float *dP_r = dP_rows + r * N_k;
        D[r] = ref_row_dot_acc(P_r, dP_r, (int)N_k, 0.0f);
        ref_tile_ds(P_r, dP_r, &D[r], 1, (int)N_k, dP_r);
    }
    KERN_SYNC();
    kern_store(p.cnt, p.dtype, SIM_dS, p.dS, N_k, r0, 0, rows, N_k, dP_rows);
}

/* Line 3, two passes over the B_r x B_c tiles of row block i, as
 * sim_softmax_bwd_tiles makes them: D_i = rowsum(P o dP) continued tile
 * after tile, then dS_ij = P_ij o (dP_ij - D_i), in dP_ij's place. */
KERN_GLOBAL kern_naive_bwd_ds_2pass(kern_params p)
{
    kern_at_head(&p, kern_block_y());
    const int64_t N = p.N, N_k = p.Nk, B_r = p.Br, B_c = p.Bc, T_c = p.Tc;
    const int64_t tid = kern_thread_x(), nt = kern_block_dim();
    const int64_t i = kern_block_x();
    const int64_t r0 = i * B_r, br = kern_min(B_r, N - r0);

    unsigned char *sm = KERN_SHARED();
    float *P_ij = (float *)kern_carve(&sm, "P_ij", B_r * B_c * 4);
    float *dP_ij = (float *)kern_carve(&sm, "dP_ij", B_r * B_c * 4);
    float *D_i = (float *)kern_carve(&sm, "D_i", B_r * 4);

    for (int64_t r = tid; r < br; r += nt)
        D_i[r] = 0.0f;
    for (int pass = 1; pass <= 2; pass++)
        for (int64_t j = 0; j < T_c; j++) {
            const int64_t c0 = j * B_c, bc = kern_min(B_c, N_k - c0);
            KERN_SYNC();        /* every row (and the last store) is done with the tiles */
            kern_load(p.cnt, SIM_P, P_ij, p.P, N_k, r0, c0, br, bc);
            kern_load(p.cnt, SIM_dP, dP_ij, p.dP, N_k, r0, c0, br, bc);
            KERN_SYNC();
            for (int64_t r = tid; r < br; r += nt) {
                const float *P_r = P_ij + r * bc;
                float *dP_r = dP_ij + r * bc;
                if (pass == 1) {                 /* the row sums, continued */
#ifdef KERN_BUG_NAIVE_BWD_D_PER_TILE
                    D_i[r] = ref_row_dot_acc(P_r, dP_r, (int)bc, 0.0f);
#else
                    D_i[r] = ref_row_dot_acc(P_r, dP_r, (int)bc, D_i[r]);
#endif
                } else {                         /* dS_ij */
                    ref_tile_ds(P_r, dP_r, &D_i[r], 1, (int)bc, dP_r);
                }
            }
            if (pass == 2) {
                KERN_SYNC();
                kern_store(p.cnt, p.dtype, SIM_dS, p.dS, N_k, r0, c0, br, bc, dP_ij);
            }
        }
}

/* Line 4: dQ = scale dS K, block i owning dQ_i. */
KERN_GLOBAL kern_naive_bwd_dq(kern_params p)
{
    naive_bwd_product(&p, 4);
}

/* Line 5: dK = scale dS^T Q, block j owning dK_j. */
KERN_GLOBAL kern_naive_bwd_dk(kern_params p)
{
    naive_bwd_product(&p, 5);
}

#endif /* FASIM_KERN_NAIVE_BWD_CUH */
