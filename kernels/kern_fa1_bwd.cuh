/*
 * kern_fa1_bwd.cuh — FlashAttention's backward pass (Dao et al. 2022,
 * Algorithm 4) as one kernel, beside sim/algo_fa1_bwd.c: the same loop nest,
 * the same primitives, the same line numbers. No dropout (p_drop = 0): lines
 * 1, 14, 15 and 18 are identities and left out, as the simulator leaves them.
 *
 * Grid: B H thread blocks, one per (batch, head), as flash-attn v1's backward
 * launches them (and as kern_fa1.cuh's forward); block q runs the whole nest
 * of head q: K/V outer (line 6), Q inner (line 9). K_j, V_j and the
 * accumulators dK_j, dV_j stay on chip for the inner loop and dK_j, dV_j are
 * written once (line 24); at every inner step line 10 loads Q_i, O_i, dO_i,
 * l_i, m_i and dQ_i, line 13 recomputes P_ij from the forward's l_i, m_i,
 * line 19 recomputes D_i = rowsum(dO_i o O_i), and line 21 writes dQ_i back.
 * dQ's running sum is the run's (sim_inter): fp32 dQ_acc (v1's dq_tmp), the
 * last key block query block i sees writing dQ_i in the dtype; or, with the
 * paper's intermediates, dQ itself at every step. Since one block holds a
 * whole head, dQ_i's additions come in j ascending whatever order the blocks
 * run in: there is no dQ mode here (kern.h, kern_dq_mode), and no launch
 * after the loops.
 *
 * Line 5 writes dQ (its running sum's tensor), dK and dV as zeros, block by
 * block from SRAM, as the simulator counts them; a key block no query sees
 * is skipped (K_j, V_j unloaded), its dK_j, dV_j staying line 5's zeros.
 *
 * Threads split rows: thread t computes rows t, t + blockDim, ... of S_ij,
 * P_ij, dP_ij, dS_ij and dQ_i, and rows t, t + blockDim, ... of dK_j and dV_j
 * (key rows), each element's sum whole, in ref_tile.h's order, so the bits
 * are the simulator's for any number of threads.
 *
 * Shared memory: the plan's buffers (fa1_bwd_plan, one phase) at the plan's
 * bytes, the fp32 ones first (dK_j, dV_j, dQ_i, l_i, m_i, S_ij, dP_ij, D_i),
 * then the tiles in the dtype (K_j, V_j, Q_i, O_i, dO_i).
 *
 * Shapes, one head: Q, O, dO, dQ, dQ_acc (N, d); K, V, dK, dV (N_k, d);
 * l, m (N); br, bc the rows of this step's blocks (the last may be partial).
 *
 * A deliberately wrong variant, for the test that must catch it (never
 * defined in the fasim build):
 *   KERN_BUG_FA1_BWD_NO_L   line 13 without diag(l_i)^-1: P_ij = exp(S_ij -
 *                           m_i), so dQ, dK and dV are wrong, the counts right
 */
#ifndef FASIM_KERN_FA1_BWD_CUH
#define FASIM_KERN_FA1_BWD_CUH

#include "kern_gqa_bwd.cuh"
#include "kern_tile.h"

/* The plan's buffers, carved as the plan lays them out. */
typedef struct {
    float *dK_j, *dV_j, *dQ_i, *l_i, *m_i, *S_ij, *dP_ij, *D_i;
    void *K_j, *V_j, *Q_i, *O_i, *dO_i;
} fa1_bwd_smem;

KERN_DEVICE fa1_bwd_smem fa1_bwd_carve(const kern_params *p)
{
    const int64_t d = p->d, B_r = p->Br, B_c = p->Bc, e = kern_tile_elem_bytes(p->dtype);
    unsigned char *sm = KERN_SHARED();
    fa1_bwd_smem b;
    b.dK_j = (float *)kern_carve(&sm, "dK_j", B_c * d * 4);
    b.dV_j = (float *)kern_carve(&sm, "dV_j", B_c * d * 4);
    b.dQ_i = (float *)kern_carve(&sm, "dQ_i", B_r * d * 4);
    b.l_i = (float *)kern_carve(&sm, "l_i", B_r * 4);
    b.m_i = (float *)kern_carve(&sm, "m_i", B_r * 4);
    b.S_ij = (float *)kern_carve(&sm, "S_ij", B_r * B_c * 4);
    b.dP_ij = (float *)kern_carve(&sm, "dP_ij", B_r * B_c * 4);
    b.D_i = (float *)kern_carve(&sm, "D_i", B_r * 4);
    b.K_j = kern_carve(&sm, "K_j", B_c * d * e);
    b.V_j = kern_carve(&sm, "V_j", B_c * d * e);
    b.Q_i = kern_carve(&sm, "Q_i", B_r * d * e);
    b.O_i = kern_carve(&sm, "O_i", B_r * d * e);
    b.dO_i = kern_carve(&sm, "dO_i", B_r * d * e);
    return b;
}

/* Lines 12-20 for row r of this step (thread-owned), its rows of S_ij
 * (line 11) and dP_ij (line 17) already there: the mask, P_ij in S_ij's
 * place (line 13, from the forward's m_i, l_i), D_i[r] and dS_ij in dP_ij's
 * place; then P_ij rounded for line 16's product and
 * dS_ij for lines 21-22's (line 20 takes the fp32 P_ij). */
KERN_DEVICE void fa1_bwd_row(const kern_params *p, const fa1_bwd_smem *b, const ref_mask *mk,
                             int64_t r, int64_t r0, int64_t c0, int64_t bc)
{
    const int64_t d = p->d;
    const sim_dtype dt = p->dtype;
    const kern_tv Ov = kern_tv_make(b->O_i, dt), dOv = kern_tv_make(b->dO_i, dt);
    float *s = b->S_ij + r * bc, *dp = b->dP_ij + r * bc;
    ref_tile_mask(s, 1, (int)bc, r0 + r, c0, mk);                            /* 12 */
#ifdef KERN_BUG_FA1_BWD_NO_L
    const float inv_l = 1.0f;
#else
    const float inv_l = b->l_i[r] > 0.0f ? 1.0f / b->l_i[r] : 0.0f;
#endif
    ref_exp_normalise(s, s, (int)bc, b->m_i[r], inv_l);                      /* 13 */
    b->D_i[r] = kern_row_dot_tv(dOv, r * d, Ov, r * d, (int)d);              /* 19 */
    ref_tile_ds(s, dp, &b->D_i[r], 1, (int)bc, dp);                          /* 20 */
    ref_round_row(s, bc, p->p_round);
    ref_round_row(dp, bc, p->p_round);
}

KERN_GLOBAL kern_fa1_bwd(kern_params p)
{
    kern_at_head(&p, kern_block_x());
    const int64_t N = p.N, N_k = p.Nk, d = p.d, B_r = p.Br, B_c = p.Bc, T_r = p.Tr,
                  T_c = p.Tc;
    const int64_t tid = kern_thread_x(), nt = kern_block_dim();
    const sim_dtype dt = p.dtype;
    const ref_mask mk = kern_mask(&p);
    const fa1_bwd_smem b = fa1_bwd_carve(&p);
    const kern_tv Kv = kern_tv_make(b.K_j, dt), Vv = kern_tv_make(b.V_j, dt),
                  Qv = kern_tv_make(b.Q_i, dt), dOv = kern_tv_make(b.dO_i, dt);
    /* dQ's running sum between key blocks: dQ_acc (fp32) or dQ itself. */
    const sim_tensor dq_t = p.dQacc ? SIM_dQacc : SIM_dQ;
    float *dq = p.dQacc ? p.dQacc : p.dQ;
    /* dK, dV: this query head's dK_exp, dV_exp under GQA (kern_gqa_bwd.cuh). */
    sim_tensor dK_t = SIM_dK, dV_t = SIM_dV;
    float *dK = kern_gqa_grad(&p, &dK_t), *dV = kern_gqa_grad(&p, &dV_t);

    /* 2-4: Q, O, dO, l, m in T_r blocks of B_r rows; K, V in T_c of B_c. */
    /* 5: dQ = 0, dK = 0, dV = 0 in HBM, written block by block from SRAM. */
    for (int64_t x = tid; x < B_r * d; x += nt)
        b.dQ_i[x] = 0.0f;
    for (int64_t x = tid; x < B_c * d; x += nt)
        b.dK_j[x] = b.dV_j[x] = 0.0f;
    KERN_SYNC();
    for (int64_t i = 0; i < T_r; i++)
        kern_store(p.cnt, dt, dq_t, dq, d, i * B_r, 0, kern_min(B_r, N - i * B_r), d, b.dQ_i);
    for (int64_t j = 0; j < T_c; j++) {
        const int64_t bc = kern_min(B_c, N_k - j * B_c);
        kern_store(p.cnt, dt, dK_t, dK, d, j * B_c, 0, bc, d, b.dK_j);
        kern_store(p.cnt, dt, dV_t, dV, d, j * B_c, 0, bc, d, b.dV_j);
    }
    for (int64_t j = 0; j < T_c; j++) {                          /* 6 */
        const int64_t c0 = j * B_c, bc = kern_min(B_c, N_k - c0);
        const sim_range is = kern_block_is(&p, j);
        if (is.lo > is.hi)
            continue;           /* no query sees K_j (a window): not loaded */
        KERN_SYNC();            /* line 5's and step j - 1's stores have read dK_j, dV_j;
                                   every row is done with K_j, V_j */
        kern_load_tile(p.cnt, SIM_K, dt, b.K_j, p.K, d, c0, 0, bc, d);    /* 7 */
        kern_load_tile(p.cnt, SIM_V, dt, b.V_j, p.V, d, c0, 0, bc, d);
        for (int64_t c = tid; c < bc; c += nt)                   /* 8: this thread's rows */
            for (int64_t t = 0; t < d; t++)
                b.dK_j[c * d + t] = b.dV_j[c * d + t] = 0.0f;
        for (int64_t i = is.lo; i <= is.hi; i++) {               /* 9 */
            const int64_t r0 = i * B_r, br = kern_min(B_r, N - r0);
            KERN_SYNC();        /* step i - 1's store has read dQ_i, its rows their tiles;
                                   line 5's writes are visible (a block sees its own
                                   global writes after a barrier) */
            kern_load_tile(p.cnt, SIM_Q, dt, b.Q_i, p.Q, d, r0, 0, br, d);   /* 10 */
            kern_load_tile(p.cnt, SIM_O, dt, b.O_i, p.O, d, r0, 0, br, d);
            kern_load_tile(p.cnt, SIM_dO, dt, b.dO_i, p.dO, d, r0, 0, br, d);
            kern_load(p.cnt, dq_t, b.dQ_i, dq, d, r0, 0, br, d);
            kern_load(p.cnt, SIM_l, b.l_i, p.l, 1, r0, 0, br, 1);
            kern_load(p.cnt, SIM_m, b.m_i, p.m, 1, r0, 0, br, 1);
            KERN_SYNC();
            const kern_rows R = kern_my_rows(br);    /* this thread's rows of S_ij, dP_ij */
            kern_scores_rows(R, Qv, Kv, (int)bc, (int)d, p.scale, b.S_ij);     /* 11 */
            kern_scores_rows(R, dOv, Vv, (int)bc, (int)d, 1.0f, b.dP_ij);      /* 17 */
            for (int64_t r = R.lo; r < R.hi; r += R.step)        /* 12-20, row r */
                fa1_bwd_row(&p, &b, &mk, r, r0, c0, bc);
            KERN_SYNC();        /* P_ij, dS_ij whole */
            const kern_rows C = kern_my_rows(bc);    /* this thread's rows of dV_j, dK_j */
            kern_acc_tn_rows(C, b.dV_j, b.S_ij, (int)br, (int)bc, dOv, (int)d, 1.0f);   /* 16 */
            kern_acc_tn_rows(C, b.dK_j, b.dP_ij, (int)br, (int)bc, Qv, (int)d, p.scale); /* 22 */
            kern_acc_nn_rows(R, b.dQ_i, b.dP_ij, (int)bc, Kv, (int)d, p.scale);        /* 21 */
            KERN_SYNC();        /* dQ_i whole */
            /* The last key block block i sees leaves dQ in the dtype. */
            const int last = j == kern_block_js(&p, i).hi;
            kern_store(p.cnt, dt, last ? SIM_dQ : dq_t, last ? p.dQ : dq, d, r0, 0, br, d,
                       b.dQ_i);                                  /* 21 */
        }                                                        /* 23 */
        KERN_SYNC();            /* dK_j, dV_j whole */
        kern_store(p.cnt, dt, dK_t, dK, d, c0, 0, bc, d, b.dK_j);         /* 24 */
        kern_store(p.cnt, dt, dV_t, dV, d, c0, 0, bc, d, b.dV_j);
    }                                                            /* 25 */
}                                                                /* 26 */

#endif /* FASIM_KERN_FA1_BWD_CUH */
