/*
 * kern_fa1.cuh — FlashAttention forward (Dao et al. 2022, Algorithm 1) as a
 * kernel, beside sim/algo_fa1.c: the same loop nest, the same primitives, the
 * same line numbers.
 *
 * Grid: B H thread blocks, one per (batch, head), as the released
 * FlashAttention-1 kernel launches them; block q runs the whole nest of query
 * head q (kern_at_head: it reads key/value head b G + h / (H / G)).
 * Algorithm 1 is sequential in j (K/V outer, line 5) and reads K_j, V_j once
 * per j; a grid over i would read them T_r times, and one launch per j would
 * still differ from the paper's order of stores. A block per head is exactly
 * Algorithm 1 per head, with exactly the simulator's counts; one head keeps
 * one SM busy, so a GPU fills only with B H at least its SMs.
 *
 * Masking (causal, a sliding window, N_q < N_k: sim.h's mask): line 7 runs
 * over the query blocks that visit key block j (kern_block_is, the
 * simulator's sim_block_is), and a key block no query sees is skipped,
 * K_j and V_j unloaded, as the simulator skips it.
 *
 * Threads split the rows of each tile: thread t computes rows t, t + blockDim,
 * ... with ref_fa1_step_row (lines 10-12 for one row), in the simulator's
 * order, so the output is the simulator's bit for bit.
 *
 * Shared memory: the plan's buffers (sim_plan_make, SIM_FA1) at the plan's
 * bytes, the fp32 ones first: O_i (B_r, d), S_ij (B_r, B_c), m_i, l_i, m~_ij,
 * l~_ij, m_new, l_new (B_r) as floats, then K_j, V_j (B_c, d), Q_i (B_r, d) in
 * the dtype's storage type (2-byte bits for fp16/bf16, kern_tile.h). m~_ij ..
 * l_new are reserved as the plan charges them; kern_fa1_step_row keeps their
 * values in registers.
 *
 * Shapes, one head: Q, O (N, d); K, V (N_k, d); l, m (N). Row-major
 * throughout.
 */
#ifndef FASIM_KERN_FA1_CUH
#define FASIM_KERN_FA1_CUH

#include "kern_tile.h"

KERN_GLOBAL kern_fa1(kern_params p)
{
    kern_at_head(&p, kern_block_x());
    const int64_t N = p.N, N_k = p.Nk, d = p.d, B_r = p.Br, B_c = p.Bc, T_r = p.Tr,
                  T_c = p.Tc;
    const int64_t tid = kern_thread_x(), nt = kern_block_dim();
    const ref_mask mk = kern_mask(&p);

    const sim_dtype dt = p.dtype;
    const int64_t e = kern_tile_elem_bytes(dt);
    unsigned char *sm = KERN_SHARED();
    float *O_i = (float *)kern_carve(&sm, "O_i", B_r * d * 4);
    float *S_ij = (float *)kern_carve(&sm, "S_ij", B_r * B_c * 4);
    float *m_i = (float *)kern_carve(&sm, "m_i", B_r * 4);
    float *l_i = (float *)kern_carve(&sm, "l_i", B_r * 4);
    (void)kern_carve(&sm, "m~_ij", B_r * 4);     /* reserved, as the plan charges them */
    (void)kern_carve(&sm, "l~_ij", B_r * 4);
    (void)kern_carve(&sm, "m_new", B_r * 4);
    (void)kern_carve(&sm, "l_new", B_r * 4);
    void *K_j = kern_carve(&sm, "K_j", B_c * d * e);
    void *V_j = kern_carve(&sm, "V_j", B_c * d * e);
    void *Q_i = kern_carve(&sm, "Q_i", B_r * d * e);
    const kern_tv Qv = kern_tv_make(Q_i, dt), Kv = kern_tv_make(K_j, dt),
                  Vv = kern_tv_make(V_j, dt);
    /* The running output between key blocks: fp32 O_acc (flash-attn v1's
     * o_tmp) or, with the paper's intermediates, O itself (sim_inter). */
    float *O_run = p.Oacc ? p.Oacc : p.O;
    const sim_tensor T_run = p.Oacc ? SIM_Oacc : SIM_O;

    /* 2: O = 0, l = 0, m = -inf in HBM, written block by block from SRAM. */
    for (int64_t i = 0; i < T_r; i++) {
        const int64_t r0 = i * B_r, br = kern_min(B_r, N - r0);
        KERN_SYNC();            /* the previous block's stores have read O_i, l_i, m_i */
        for (int64_t r = tid; r < br; r += nt) {
            for (int64_t c = 0; c < d; c++)
                O_i[r * d + c] = 0.0f;
            l_i[r] = 0.0f;
            m_i[r] = -REF_INF;
        }
        KERN_SYNC();
        kern_store(p.cnt, p.dtype, T_run, O_run, d, r0, 0, br, d, O_i);
        kern_store(p.cnt, p.dtype, SIM_l, p.l, 1, r0, 0, br, 1, l_i);
        kern_store(p.cnt, p.dtype, SIM_m, p.m, 1, r0, 0, br, 1, m_i);
    }
    /* 3-4: Q, O, l, m in T_r blocks of B_r rows; K, V in T_c blocks of B_c. */
    for (int64_t j = 0; j < T_c; j++) {                          /* 5 */
        const int64_t c0 = j * B_c, bc = kern_min(B_c, N_k - c0);
        const sim_range is = kern_block_is(&p, j);
        if (is.lo > is.hi)
            continue;           /* no query sees K_j (a window): not loaded */
        KERN_SYNC();            /* every row is done with K_j, V_j of step j - 1 */
        kern_load_tile(p.cnt, SIM_K, dt, K_j, p.K, d, c0, 0, bc, d);  /* 6 */
        kern_load_tile(p.cnt, SIM_V, dt, V_j, p.V, d, c0, 0, bc, d);
        for (int64_t i = is.lo; i <= is.hi; i++) {              /* 7 */
            const int64_t r0 = i * B_r, br = kern_min(B_r, N - r0);
            KERN_SYNC();        /* the stores of step i - 1 have read O_i, l_i, m_i;
                                   and the writes of line 2 are visible (a block
                                   sees its own global writes after a barrier) */
            kern_load_tile(p.cnt, SIM_Q, dt, Q_i, p.Q, d, r0, 0, br, d);  /* 8 */
            kern_load(p.cnt, T_run, O_i, O_run, d, r0, 0, br, d);
            kern_load(p.cnt, SIM_l, l_i, p.l, 1, r0, 0, br, 1);
            kern_load(p.cnt, SIM_m, m_i, p.m, 1, r0, 0, br, 1);
            KERN_SYNC();
            const kern_rows R = kern_my_rows(br);    /* this thread's rows */
            kern_scores_rows(R, Qv, Kv, (int)bc, (int)d, p.scale, S_ij);          /* 9 */
            for (int64_t r = R.lo; r < R.hi; r += R.step)
                ref_tile_mask(S_ij + r * bc, 1, (int)bc, r0 + r, c0, &mk);
            kern_fa1_step_rows(R, S_ij, (int)bc, Vv, (int)d, O_i, m_i, l_i,       /* 10-12 */
                               p.p_round);
            KERN_SYNC();
            /* the last key block block i sees writes O in the dtype */
            const int last = j == kern_block_js(&p, i).hi;
            kern_store(p.cnt, p.dtype, last ? SIM_O : T_run, last ? p.O : O_run, d, r0, 0,
                       br, d, O_i);                                                /* 12 */
            kern_store(p.cnt, p.dtype, SIM_l, p.l, 1, r0, 0, br, 1, l_i);       /* 13 */
            kern_store(p.cnt, p.dtype, SIM_m, p.m, 1, r0, 0, br, 1, m_i);
        }                                                        /* 14 */
    }                                                            /* 15 */
}                                                                /* 16 */

#endif /* FASIM_KERN_FA1_CUH */
