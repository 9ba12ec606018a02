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
                           const char *Xb, sim_tensor Z, const char *Zb, sim_tensor Y,
                           const char *Yb, float scale)
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
    float *dO_i = sim_sram_take(h, p, 2, "dO_i");
    float *V_j = sim_sram_take(h, p, 2, "V_j");
    float *dP_ij = sim_sram_take(h, p, 2, "dP_ij");
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        sim_at(h, 2, i, -1);
        sim_load(h, SIM_dO, "dO_i", dO_i, r0, 0, br, d);
        for (int64_t j = 0; j < p->Tc; j++) {
            const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
            sim_at(h, 2, i, j);
            sim_load(h, SIM_V, "V_j", V_j, c0, 0, bc, d);
            h->steps++;
            if (h->compute)
                ref_tile_scores(dO_i, V_j, (int)br, (int)bc, (int)d, 1.0f, dP_ij);
            sim_store(h, SIM_dP, "dP_ij", dP_ij, r0, c0, br, bc);
        }
    }
    sim_sram_release_all(h);
    return 0;
}

/* Line 3, one pass: B_s whole rows of P and dP at a time; dS in dP's place. */
static int line3_rows(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), B_s = p->Bs_r;
    float *P_rows = sim_sram_take(h, p, 3, "P_rows");
    float *dP_rows = sim_sram_take(h, p, 3, "dP_rows");
    float *D = sim_sram_take(h, p, 3, "D");
    if (h->failed)
        return -1;
    for (int64_t i = 0; i * B_s < N; i++) {
        const int64_t r0 = i * B_s, rows = sim_min64(B_s, N - r0);
        sim_at(h, 3, i, -1);
        sim_load(h, SIM_P, "P_rows", P_rows, r0, 0, rows, N_k);
        sim_load(h, SIM_dP, "dP_rows", dP_rows, r0, 0, rows, N_k);
        h->steps++;
        if (h->compute) {
            for (int64_t r = 0; r < rows; r++)
                D[r] = ref_row_dot_acc(P_rows + r * N_k, dP_rows + r * N_k, (int)N_k, 0.0f);
            ref_tile_ds(P_rows, dP_rows, D, (int)rows, (int)N_k, dP_rows);
        }
        sim_store(h, SIM_dS, "dP_rows", dP_rows, r0, 0, rows, N_k);
    }
    sim_sram_release_all(h);
    return 0;
}

/* Line 3, two passes over B_r x B_c tiles when two rows do not fit: the row
 * sums, continued tile after tile in the order of one pass (so both give the
 * same bits), then dS. */
static int line3_two_pass(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), B_r = p->Br, B_c = p->Bc;
    float *P_ij = sim_sram_take(h, p, 3, "P_ij");
    float *dP_ij = sim_sram_take(h, p, 3, "dP_ij");
    float *D_i = sim_sram_take(h, p, 3, "D_i");
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        if (h->compute)
            zero(D_i, br);
        for (int pass = 1; pass <= 2; pass++) {
            for (int64_t j = 0; j < p->Tc; j++) {
                const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
                sim_at(h, 3, i, j);
                sim_load(h, SIM_P, "P_ij", P_ij, r0, c0, br, bc);
                sim_load(h, SIM_dP, "dP_ij", dP_ij, r0, c0, br, bc);
                h->steps++;
                if (h->compute && pass == 1)
                    for (int64_t r = 0; r < br; r++)
                        D_i[r] = ref_row_dot_acc(P_ij + r * bc, dP_ij + r * bc, (int)bc, D_i[r]);
                if (pass == 2) {
                    if (h->compute)
                        ref_tile_ds(P_ij, dP_ij, D_i, (int)br, (int)bc, dP_ij);
                    sim_store(h, SIM_dS, "dP_ij", dP_ij, r0, c0, br, bc);
                }
            }
        }
    }
    sim_sram_release_all(h);
    return 0;
}

/* Line 4: dQ = scale dS K, one query block's accumulator at a time. */
static int line4_dQ(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc;
    float *dS_ij = sim_sram_take(h, p, 4, "dS_ij");
    float *K_j = sim_sram_take(h, p, 4, "K_j");
    float *dQ_i = sim_sram_take(h, p, 4, "dQ_i");
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        sim_at(h, 4, i, -1);
        if (h->compute)
            zero(dQ_i, br * d);
        for (int64_t j = 0; j < p->Tc; j++) {
            const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
            sim_at(h, 4, i, j);
            sim_load(h, SIM_dS, "dS_ij", dS_ij, r0, c0, br, bc);
            sim_load(h, SIM_K, "K_j", K_j, c0, 0, bc, d);
            h->steps++;
            if (h->compute)
                ref_tile_acc_nn(dQ_i, dS_ij, K_j, (int)br, (int)bc, (int)d, h->scale);
        }
        sim_store(h, SIM_dQ, "dQ_i", dQ_i, r0, 0, br, d);
    }
    sim_sram_release_all(h);
    return 0;
}

int sim_algo_naive_bwd(sim_hier *h, const sim_plan *p)
{
    if (kv_side_product(h, p, 1, SIM_P, "P_ij", SIM_dO, "dO_i", SIM_dV, "dV_j", 1.0f) != 0)
        return -1;                                          /* 1: dV = P^T dO */
    if (line2_dP(h, p) != 0)                                /* 2: dP = dO V^T */
        return -1;
    if ((p->softmax_passes == 1 ? line3_rows(h, p) : line3_two_pass(h, p)) != 0)
        return -1;                                          /* 3: dS */
    if (line4_dQ(h, p) != 0)                                /* 4: dQ = dS K */
        return -1;
    if (kv_side_product(h, p, 5, SIM_dS, "dS_ij", SIM_Q, "Q_i", SIM_dK, "dK_j",
                        h->scale) != 0)                     /* 5: dK = dS^T Q */
        return -1;
    sim_at(h, 6, -1, -1);                                   /* 6: return dQ, dK, dV */
    return 0;
}
