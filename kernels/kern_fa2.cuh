/*
 * kern_fa2.cuh — FlashAttention-2 forward (Dao 2023, Algorithm 1) as a kernel,
 * beside sim/algo_fa2.c: the same loop nest, the same primitives, the same
 * line numbers.
 *
 * Grid: (T_r, B H) thread blocks, as the released kernel launches them
 * (query block, batch x head): block (i, q) owns query block Q_i of query
 * head q (line 3's loop is the grid's x), which reads key/value head
 * b G + h / (H / G) (kern_at_head). Inside a block the K/V loop (line 6) runs in order; O_i, m_i, l_i
 * stay in shared memory until O_i and L_i are written once (lines 14-15).
 * Threads split the rows of the block: thread t computes rows t, t + blockDim,
 * ... of S_ij, P~_ij and O_i, each with the whole row's arithmetic in the
 * simulator's order, so the output is the simulator's bit for bit.
 *
 * Shared memory: the plan's buffers (sim_plan_make, SIM_FA2) at the plan's
 * bytes, the fp32 ones first: S_ij (B_r, B_c), O_i (B_r, d), m_i, l_i (B_r)
 * as floats, then Q_i (B_r, d), K_j, V_j (B_c, d) in the dtype's storage
 * type (2-byte bits for fp16/bf16, kern_tile.h).
 *
 * Masking (causal, a sliding window, N_q < N_k: sim.h's mask): the inner
 * loop runs over the band of key blocks query block i visits
 * (kern_block_js, the simulator's sim_block_js), each tile masked by
 * ref_tile_mask as the simulator masks it.
 *
 * Shapes, one head: Q, O (N, d); K, V (N_k, d); L (N); br, bc the rows of
 * this block (the last may be partial). Row-major throughout.
 *
 * Deliberately wrong variants, for the tests that must catch them (never
 * defined in the fasim build):
 *   KERN_BUG_SKIP_RESCALE  line 10 without diag(e^(m_old - m_new)): O_i wrong
 *   KERN_BUG_RELOAD_Q      Q_i loaded again at every inner step: counts wrong
 */
#ifndef FASIM_KERN_FA2_CUH
#define FASIM_KERN_FA2_CUH

#include "kern_tile.h"

KERN_GLOBAL kern_fa2(kern_params p)
{
    kern_at_head(&p, kern_block_y());
    const int64_t N = p.N, N_k = p.Nk, d = p.d, B_r = p.Br, B_c = p.Bc;
    const int64_t tid = kern_thread_x(), nt = kern_block_dim();
    const int64_t i = kern_block_x();                            /* 3 */
    const ref_mask mk = kern_mask(&p);
    const int64_t r0 = i * B_r, br = kern_min(B_r, N - r0);

    const sim_dtype dt = p.dtype;
    const int64_t e = kern_tile_elem_bytes(dt);
    unsigned char *sm = KERN_SHARED();
    float *S_ij = (float *)kern_carve(&sm, "S_ij", B_r * B_c * 4);
    float *O_i = (float *)kern_carve(&sm, "O_i", B_r * d * 4);
    float *m_i = (float *)kern_carve(&sm, "m_i", B_r * 4);
    float *l_i = (float *)kern_carve(&sm, "l_i", B_r * 4);
    void *Q_i = kern_carve(&sm, "Q_i", B_r * d * e);
    void *K_j = kern_carve(&sm, "K_j", B_c * d * e);
    void *V_j = kern_carve(&sm, "V_j", B_c * d * e);
    const kern_tv Qv = kern_tv_make(Q_i, dt), Kv = kern_tv_make(K_j, dt),
                  Vv = kern_tv_make(V_j, dt), Sv = kern_tv_make(S_ij, SIM_FP32);

    kern_load_tile(p.cnt, SIM_Q, dt, Q_i, p.Q, d, r0, 0, br, d); /* 4 */
    for (int64_t r = tid; r < br; r += nt) {                     /* 5 */
        m_i[r] = -REF_INF;
        l_i[r] = 0.0f;
        for (int64_t c = 0; c < d; c++)
            O_i[r * d + c] = 0.0f;
    }
    const sim_range js = kern_block_js(&p, i);
    for (int64_t j = js.lo; j <= js.hi; j++) {                   /* 6 */
        const int64_t c0 = j * B_c, bc = kern_min(B_c, N_k - c0);
        KERN_SYNC();            /* every row is done with K_j, V_j of step j - 1 */
        kern_load_tile(p.cnt, SIM_K, dt, K_j, p.K, d, c0, 0, bc, d);  /* 7 */
        kern_load_tile(p.cnt, SIM_V, dt, V_j, p.V, d, c0, 0, bc, d);
#ifdef KERN_BUG_RELOAD_Q
        kern_load_tile(p.cnt, SIM_Q, dt, Q_i, p.Q, d, r0, 0, br, d);
#endif
        KERN_SYNC();            /* Q_i (first step), K_j, V_j are in shared memory */
        for (int64_t r = tid; r < br; r += nt) {
            float *s = S_ij + r * bc;
            kern_scores_row(Qv, r * d, Kv, (int)bc, (int)d, p.scale, s);       /* 8 */
            ref_tile_mask(s, 1, (int)bc, r0 + r, c0, &mk);
            float alpha = ref_online_step(s, (int)bc, &m_i[r], &l_i[r]);        /* 9 */
            ref_round_row(s, bc, p.p_round);     /* P~ as line 10's product takes it */
#ifdef KERN_BUG_SKIP_RESCALE
            alpha = 1.0f;
#endif
            kern_pv_acc_row(O_i + r * d, (int)d, alpha, Sv, r * bc, Vv, (int)bc); /* 10 */
        }
    }                                                            /* 11 */
    for (int64_t r = tid; r < br; r += nt) {
        ref_normalise_row(O_i + r * d, (int)d, l_i[r]);          /* 12 */
        m_i[r] = ref_lse(m_i[r], l_i[r]);                        /* 13: L_i in m_i */
    }
    KERN_SYNC();                /* all rows of O_i and L_i are final */
    kern_store(p.cnt, p.dtype, SIM_O, p.O, d, r0, 0, br, d, O_i);           /* 14 */
    kern_store(p.cnt, p.dtype, SIM_L, p.L, 1, r0, 0, br, 1, m_i);           /* 15 */
}                                                                /* 16-17 */

#endif /* FASIM_KERN_FA2_CUH */
