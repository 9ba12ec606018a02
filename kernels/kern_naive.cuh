/*
 * kern_naive.cuh — standard attention (FlashAttention paper, Algorithm 0) as
 * three kernels, beside sim/algo_naive.c, with its line numbers:
 *
 *   1: kern_naive_scores    S = Q K^T / sqrt(d), written to HBM (global memory)
 *   2: kern_naive_softmax_rows, kern_naive_softmax_2pass or
 *      kern_naive_softmax_3pass
 *                           P = softmax(S), read from and written to HBM
 *   3: kern_naive_pv        O = P V
 *
 * S and P live in global memory in the run's dtype, as the simulator keeps
 * them. The softmax takes the plan's passes (plan->softmax_passes): one over
 * whole rows (B_s rows per block), two over B_r x B_c tiles (m and l online,
 * then P) or three (max, sum, normalise), exactly as the simulator does,
 * with its bits.
 *
 * Grids, each the simulator's outer loop by the heads: (T_r, B H) blocks for
 * lines 1 and 3 and the tiled softmax (block (i, q) owns rows of Q_i of query
 * head q, kern_at_head), (ceil(N / B_s), B H) for the one-pass softmax.
 * Threads split rows; each row's arithmetic is the simulator's, in its
 * order. Masked scores (sim.h's mask: causal, a window, N_q < N_k) are -inf
 * in S, as the simulator writes them.
 *
 * Shared memory per kernel: the plan's buffers of its phase at the plan's
 * bytes, the fp32 ones first, then the tiles held in the dtype's storage type
 * (2-byte bits for fp16/bf16, kern_tile.h): line 1: S_ij (B_r, B_c) fp32, then
 * Q_i (B_r, d), K_j (B_c, d); line 2, all fp32: S_rows (B_s, N_k), m, l (B_s) or
 * S_ij (B_r, B_c), m_i, l_i (B_r); line 3: O_i (B_r, d) fp32, then P_ij
 * (B_r, B_c), V_j (B_c, d).
 *
 * Shapes, one head: Q, O (N, d); K, V (N_k, d); S, P (N, N_k). Row-major.
 */
#ifndef FASIM_KERN_NAIVE_CUH
#define FASIM_KERN_NAIVE_CUH

#include "kern_tile.h"

/* Block i computes row block i of A B^T, tile by tile: line 1's
 * S = scale Q K^T (masked scores -inf), or with `dP` the backward's line 2,
 * dP = dO V^T (kern_naive_bwd.cuh), the same loop on other tensors. */
KERN_DEVICE void naive_row_products(const kern_params *pp, int dP)
{
    kern_params p = *pp;
    kern_at_head(&p, kern_block_y());
    const int64_t N = p.N, N_k = p.Nk, d = p.d, B_r = p.Br, B_c = p.Bc, T_c = p.Tc;
    const int64_t i = kern_block_x();
    const ref_mask mk = kern_mask(&p);
    const int64_t r0 = i * B_r, br = kern_min(B_r, N - r0);
    const sim_tensor tA = dP ? SIM_dO : SIM_Q, tB = dP ? SIM_V : SIM_K, tC = dP ? SIM_dP : SIM_S;
    const float *A = dP ? p.dO : p.Q, *B = dP ? p.V : p.K;
    float *C = dP ? p.dP : p.S;
    const float scale = dP ? 1.0f : p.scale;

    const sim_dtype dt = p.dtype;
    const int64_t e = kern_tile_elem_bytes(dt);
    unsigned char *sm = KERN_SHARED();
    float *C_ij = (float *)kern_carve(&sm, dP ? "dP_ij" : "S_ij", B_r * B_c * 4);
    void *A_i = kern_carve(&sm, dP ? "dO_i" : "Q_i", B_r * d * e);
    void *B_j = kern_carve(&sm, dP ? "V_j" : "K_j", B_c * d * e);
    const kern_tv Av = kern_tv_make(A_i, dt), Bv = kern_tv_make(B_j, dt);

    kern_load_tile(p.cnt, tA, dt, A_i, A, d, r0, 0, br, d);
    for (int64_t j = 0; j < T_c; j++) {
        const int64_t c0 = j * B_c, bc = kern_min(B_c, N_k - c0);
        KERN_SYNC();            /* the store of step j - 1 has read C_ij; B_j is free */
        kern_load_tile(p.cnt, tB, dt, B_j, B, d, c0, 0, bc, d);
        KERN_SYNC();
        const kern_rows R = kern_my_rows(br);        /* this thread's rows */
        kern_scores_rows(R, Av, Bv, (int)bc, (int)d, scale, C_ij);
        for (int64_t r = R.lo; !dP && r < R.hi; r += R.step)
            ref_tile_mask(C_ij + r * bc, 1, (int)bc, r0 + r, c0, &mk);
        KERN_SYNC();
        kern_store(p.cnt, dt, tC, C, N_k, r0, c0, br, bc, C_ij);
    }
}

/* Line 1: S = scale * Q K^T, block i computing row block i of S. */
KERN_GLOBAL kern_naive_scores(kern_params p)
{
    naive_row_products(&p, 0);
}

/* Line 2, one pass: block b normalises B_s whole rows of S into P. */
KERN_GLOBAL kern_naive_softmax_rows(kern_params p)
{
    kern_at_head(&p, kern_block_y());
    const int64_t N = p.N, N_k = p.Nk, B_s = p.Bs_r;
    const int64_t tid = kern_thread_x(), nt = kern_block_dim();
    const int64_t r0 = kern_block_x() * B_s, rows = kern_min(B_s, N - r0);

    unsigned char *sm = KERN_SHARED();
    float *S_rows = (float *)kern_carve(&sm, "S_rows", B_s * N_k * 4);
    float *m = (float *)kern_carve(&sm, "m", B_s * 4);
    float *l = (float *)kern_carve(&sm, "l", B_s * 4);

    kern_load(p.cnt, SIM_S, S_rows, p.S, N_k, r0, 0, rows, N_k);
    KERN_SYNC();
    for (int64_t r = tid; r < rows; r += nt) {
        float *s = S_rows + r * N_k;
        m[r] = ref_row_max(s, (int)N_k);
        l[r] = kern_exp_shift_sum(s, (int)N_k, m[r]);
        float inv_l = 1.0f / l[r];
        for (int64_t c = 0; c < N_k; c++)
            s[c] = s[c] * inv_l;
    }
    KERN_SYNC();
    kern_store(p.cnt, p.dtype, SIM_P, p.P, N_k, r0, 0, rows, N_k, S_rows);
}

/* Line 2 over the B_r x B_c tiles of row block i, in `passes` passes as
 * sim/algo_naive.c makes them: two (m_i and l_i online, then P) or three
 * (row maxima, row sums against them, then P). */
KERN_DEVICE void naive_softmax_tiles(const kern_params *pp, int passes)
{
    kern_params p = *pp;
    kern_at_head(&p, kern_block_y());
    const int64_t N = p.N, N_k = p.Nk, B_r = p.Br, B_c = p.Bc, T_c = p.Tc;
    const int64_t tid = kern_thread_x(), nt = kern_block_dim();
    const int64_t i = kern_block_x();
    const int64_t r0 = i * B_r, br = kern_min(B_r, N - r0);

    unsigned char *sm = KERN_SHARED();
    float *S_ij = (float *)kern_carve(&sm, "S_ij", B_r * B_c * 4);
    float *m_i = (float *)kern_carve(&sm, "m_i", B_r * 4);
    float *l_i = (float *)kern_carve(&sm, "l_i", B_r * 4);

    kern_state_empty(m_i, l_i, NULL, br, 0);
    for (int pass = 1; pass <= passes; pass++) {
        for (int64_t j = 0; j < T_c; j++) {
            const int64_t c0 = j * B_c, bc = kern_min(B_c, N_k - c0);
            KERN_SYNC();        /* every row (and the last store) is done with S_ij */
            kern_load(p.cnt, SIM_S, S_ij, p.S, N_k, r0, c0, br, bc);
            KERN_SYNC();
            for (int64_t r = tid; r < br; r += nt) {
                float *s = S_ij + r * bc;
                if (pass == passes) {            /* normalise */
                    kern_exp_normalise(s, s, (int)bc, m_i[r], 1.0f / l_i[r]);
                } else if (passes == 2) {        /* m and l online; s is read again */
                    kern_online_step(s, (int)bc, &m_i[r], &l_i[r]);
                } else if (pass == 1) {          /* row maxima */
                    float mb = ref_row_max(s, (int)bc);
                    m_i[r] = mb > m_i[r] ? mb : m_i[r];
                } else {                         /* row sums against the max */
                    l_i[r] = ref_exp_sum(s, (int)bc, m_i[r], l_i[r]);
                }
            }
            if (pass == passes) {
                KERN_SYNC();
                kern_store(p.cnt, p.dtype, SIM_P, p.P, N_k, r0, c0, br, bc, S_ij);
            }
        }
    }
}

/* Line 2, two passes: when a row of S does not fit (the default form). */
KERN_GLOBAL kern_naive_softmax_2pass(kern_params p)
{
    naive_softmax_tiles(&p, 2);
}

/* Line 2, three passes: max, sum, normalise (--softmax 3pass). */
KERN_GLOBAL kern_naive_softmax_3pass(kern_params p)
{
    naive_softmax_tiles(&p, 3);
}

/* Line 3: O = P V, block i accumulating O_i in fp32 in shared memory. */
KERN_GLOBAL kern_naive_pv(kern_params p)
{
    kern_at_head(&p, kern_block_y());
    const int64_t N = p.N, N_k = p.Nk, d = p.d, B_r = p.Br, B_c = p.Bc, T_c = p.Tc;
    const int64_t tid = kern_thread_x(), nt = kern_block_dim();
    const int64_t i = kern_block_x();
    const int64_t r0 = i * B_r, br = kern_min(B_r, N - r0);

    const sim_dtype dt = p.dtype;
    const int64_t e = kern_tile_elem_bytes(dt);
    unsigned char *sm = KERN_SHARED();
    float *O_i = (float *)kern_carve(&sm, "O_i", B_r * d * 4);
    void *P_ij = kern_carve(&sm, "P_ij", B_r * B_c * e);
    void *V_j = kern_carve(&sm, "V_j", B_c * d * e);
    const kern_tv Pv = kern_tv_make(P_ij, dt), Vv = kern_tv_make(V_j, dt);

    for (int64_t r = tid; r < br; r += nt)
        for (int64_t c = 0; c < d; c++)
            O_i[r * d + c] = 0.0f;
    for (int64_t j = 0; j < T_c; j++) {
        const int64_t c0 = j * B_c, bc = kern_min(B_c, N_k - c0);
        KERN_SYNC();            /* every row is done with P_ij, V_j of step j - 1 */
        kern_load_tile(p.cnt, SIM_P, dt, P_ij, p.P, N_k, r0, c0, br, bc);
        kern_load_tile(p.cnt, SIM_V, dt, V_j, p.V, d, c0, 0, bc, d);
        KERN_SYNC();
        kern_pv_acc_rows(kern_my_rows(br), O_i, (int)d, Pv, Vv, (int)bc);
    }
    KERN_SYNC();
    kern_store(p.cnt, p.dtype, SIM_O, p.O, d, r0, 0, br, d, O_i);
}

#endif /* FASIM_KERN_NAIVE_CUH */
