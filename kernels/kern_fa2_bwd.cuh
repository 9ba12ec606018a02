/*
 * kern_fa2_bwd.cuh — FlashAttention-2's backward pass (Dao 2023, Algorithm 2)
 * as three kernels, beside sim/algo_fa2_bwd.c: the same loop nest, the same
 * primitives, the same line numbers.
 *
 *   kern_fa2_bwd_pre      grid (T_r, B H), the plan's phase 1: block (i, q)
 *                         zeroes its rows of dQ's running sum (line 3) and
 *                         dQ_i's turn, and writes D_i = rowsum(dO_i o O_i)
 *                         (line 4);
 *   kern_fa2_bwd          grid (T_c, B H), phase 2: block (j, q) owns key
 *                         block j of head q (line 5's loop is the grid's x):
 *                         K_j, V_j on chip, dK_j, dV_j accumulated on chip
 *                         and written once (line 18; with G < H to the
 *                         head's dK_exp, dV_exp, which kern_gqa_bwd.cuh's
 *                         launches then sum over each group), and for every query
 *                         block i that sees key block j, Q_i, dO_i, L_i, D_i
 *                         read and dQ_i read, added to and written (line 15);
 *   kern_fa2_bwd_convert  grid (T_r, B H), phase 2's buffers: dQ_acc (fp32)
 *                         to dQ in the dtype, block by block (line 20, the
 *                         released kernel's convert_dQ); not launched when
 *                         the paper's intermediates keep dQ itself.
 *
 * dQ is the one tensor the blocks of kern_fa2_bwd share: every key block j
 * adds its dS_ij K_j into the same dQ_i. Each block's read-modify-write of
 * dQ_i is one addition to the running sum, so the order the blocks take
 * their turns is the order of the additions, and floating-point addition is
 * not associative (kern.h, kern_dq_mode). The turns are p.dq_turn, one per
 * head and query block (kern_exec.h's kern_turn_*): deterministic, block j
 * waits until the key blocks js.lo .. j - 1 that see query block i are done
 * with dQ_i, so the additions go in j ascending, the simulator's order,
 * however the blocks are scheduled; atomic, a block takes dQ_i's lock when
 * it is free, in the order the blocks arrive. Either way a block holds dQ_i
 * for its whole read-modify-write, never a part of it. dK_j and dV_j belong
 * to block j alone and never depend on the order.
 *
 * Threads split rows: thread t computes rows t, t + blockDim, ... of S_ij,
 * P_ij, dP_ij, dS_ij and dQ_i, and rows t, t + blockDim, ... of dK_j and dV_j
 * (their rows are key rows), each element's sum whole, in ref_tile.h's
 * order, so the bits are the simulator's for any number of threads.
 *
 * Shared memory: the plan's buffers of each phase (fa2_bwd_plan) at the
 * plan's bytes, the fp32 ones first (D_i; dK_j, dV_j, dQ_i, L_i, D_i, S_ij,
 * dP_ij), then the tiles in the dtype (O_i, dO_i; K_j, V_j, Q_i, dO_i).
 *
 * Shapes, one head: Q, O, dO, dQ, dQ_acc (N, d); K, V, dK, dV, dK_exp, dV_exp (N_k, d);
 * L, D (N); br, bc this block's rows (the last may be partial).
 *
 * A deliberately wrong variant, for the test that must catch it (never
 * defined in the fasim build):
 *   KERN_BUG_BWD_DS_NO_D   line 14 without D_i: dS_ij = P_ij o dP_ij, so
 *                          dQ and dK are wrong, dV and the counts right
 *   KERN_BUG_BWD_TURN_KEPT a block hands dQ_i's turn on unchanged, so in
 *                          deterministic mode the next key block waits for
 *                          ever (on the CPU path: the launch fails)
 */
#ifndef FASIM_KERN_FA2_BWD_CUH
#define FASIM_KERN_FA2_BWD_CUH

#include "kern_gqa_bwd.cuh"
#include "kern_tile.h"

/* dQ's running sum: dQ_acc (fp32), or dQ itself (the paper's). */
KERN_DEVICE float *fa2_bwd_dq_run(const kern_params *p, sim_tensor *t)
{
    *t = p->dQacc ? SIM_dQacc : SIM_dQ;
    return p->dQacc ? p->dQacc : p->dQ;
}

KERN_GLOBAL kern_fa2_bwd_pre(kern_params p)
{
    kern_at_head(&p, kern_block_y());
    const int64_t N = p.N, d = p.d, B_r = p.Br, e = kern_tile_elem_bytes(p.dtype);
    const int64_t tid = kern_thread_x(), nt = kern_block_dim();
    const int64_t i = kern_block_x();
    const int64_t r0 = i * B_r, br = kern_min(B_r, N - r0);
    unsigned char *sm = KERN_SHARED();
    float *D_i = (float *)kern_carve(&sm, "D_i", B_r * 4);
    void *O_i = kern_carve(&sm, "O_i", B_r * d * e);
    void *dO_i = kern_carve(&sm, "dO_i", B_r * d * e);
    const kern_tv Ov = kern_tv_make(O_i, p.dtype), dOv = kern_tv_make(dO_i, p.dtype);
    sim_tensor dq_t;
    float *dq = fa2_bwd_dq_run(&p, &dq_t);

    for (int64_t x = tid; x < br * d; x += nt)                   /* 3: dQ = 0 */
        dq[r0 * d + x] = 0.0f;
    if (p.dq_turn && tid == 0)          /* no key block has added to dQ_i yet */
        p.dq_turn[i] = 0;
    if (p.cnt && tid == 0) {
        KERN_COUNT_ADD(&p.cnt->write_elems[dq_t], br * d);
        KERN_COUNT_ADD(&p.cnt->write_ops[dq_t], 1);
    }
    kern_load_tile(p.cnt, SIM_O, p.dtype, O_i, p.O, d, r0, 0, br, d);     /* 4 */
    kern_load_tile(p.cnt, SIM_dO, p.dtype, dO_i, p.dO, d, r0, 0, br, d);
    KERN_SYNC();
    for (int64_t r = tid; r < br; r += nt)
        D_i[r] = kern_row_dot_tv(dOv, r * d, Ov, r * d, (int)d);
    KERN_SYNC();
    kern_store(p.cnt, p.dtype, SIM_D, p.D, 1, r0, 0, br, 1, D_i);
}

/* Phase 2's buffers, carved as the plan lays them out. */
typedef struct {
    float *dK_j, *dV_j, *dQ_i, *L_i, *D_i, *S_ij, *dP_ij;
    void *K_j, *V_j, *Q_i, *dO_i;
} fa2_bwd_smem;

KERN_DEVICE fa2_bwd_smem fa2_bwd_carve(const kern_params *p)
{
    const int64_t d = p->d, B_r = p->Br, B_c = p->Bc, e = kern_tile_elem_bytes(p->dtype);
    unsigned char *sm = KERN_SHARED();
    fa2_bwd_smem b;
    b.dK_j = (float *)kern_carve(&sm, "dK_j", B_c * d * 4);
    b.dV_j = (float *)kern_carve(&sm, "dV_j", B_c * d * 4);
    b.dQ_i = (float *)kern_carve(&sm, "dQ_i", B_r * d * 4);
    b.L_i = (float *)kern_carve(&sm, "L_i", B_r * 4);
    b.D_i = (float *)kern_carve(&sm, "D_i", B_r * 4);
    b.S_ij = (float *)kern_carve(&sm, "S_ij", B_r * B_c * 4);
    b.dP_ij = (float *)kern_carve(&sm, "dP_ij", B_r * B_c * 4);
    b.K_j = kern_carve(&sm, "K_j", B_c * d * e);
    b.V_j = kern_carve(&sm, "V_j", B_c * d * e);
    b.Q_i = kern_carve(&sm, "Q_i", B_r * d * e);
    b.dO_i = kern_carve(&sm, "dO_i", B_r * d * e);
    return b;
}

KERN_GLOBAL kern_fa2_bwd(kern_params p)
{
    kern_at_head(&p, kern_block_y());
    const int64_t N = p.N, N_k = p.Nk, d = p.d, B_r = p.Br, B_c = p.Bc;
    const int64_t tid = kern_thread_x(), nt = kern_block_dim();
    const int64_t j = kern_block_x();                            /* 5 */
    const int64_t c0 = j * B_c, bc = kern_min(B_c, N_k - c0);
    const sim_dtype dt = p.dtype;
    const ref_mask mk = kern_mask(&p);
    const fa2_bwd_smem b = fa2_bwd_carve(&p);
    const kern_tv Kv = kern_tv_make(b.K_j, dt), Vv = kern_tv_make(b.V_j, dt),
                  Qv = kern_tv_make(b.Q_i, dt), dOv = kern_tv_make(b.dO_i, dt);
    sim_tensor dq_t;
    float *dq = fa2_bwd_dq_run(&p, &dq_t);
    const sim_range is = kern_block_is(&p, j);

    if (is.lo <= is.hi) {                                        /* 6 */
        kern_load_tile(p.cnt, SIM_K, dt, b.K_j, p.K, d, c0, 0, bc, d);
        kern_load_tile(p.cnt, SIM_V, dt, b.V_j, p.V, d, c0, 0, bc, d);
    }
    for (int64_t x = tid; x < bc; x += nt)                       /* 7 */
        for (int64_t t = 0; t < d; t++)
            b.dK_j[x * d + t] = b.dV_j[x * d + t] = 0.0f;
    for (int64_t i = is.lo; i <= is.hi; i++) {                   /* 8 */
        const int64_t r0 = i * B_r, br = kern_min(B_r, N - r0);
        KERN_SYNC();            /* every thread is done with step i - 1's tiles */
        kern_load_tile(p.cnt, SIM_Q, dt, b.Q_i, p.Q, d, r0, 0, br, d);    /* 9 */
        kern_load_tile(p.cnt, SIM_dO, dt, b.dO_i, p.dO, d, r0, 0, br, d);
        kern_load(p.cnt, SIM_L, b.L_i, p.L, 1, r0, 0, br, 1);
        kern_load(p.cnt, SIM_D, b.D_i, p.D, 1, r0, 0, br, 1);
        KERN_SYNC();
        const kern_rows R = kern_my_rows(br);    /* this thread's rows of S_ij, dP_ij */
        kern_scores_rows(R, Qv, Kv, (int)bc, (int)d, p.scale, b.S_ij);         /* 10 */
        kern_scores_rows(R, dOv, Vv, (int)bc, (int)d, 1.0f, b.dP_ij);          /* 13 */
        for (int64_t r = R.lo; r < R.hi; r += R.step) {          /* 11, 14, row r */
            float *s = b.S_ij + r * bc, *dp = b.dP_ij + r * bc;
            ref_tile_mask(s, 1, (int)bc, r0 + r, c0, &mk);
            ref_exp_lse_row(s, (int)bc, b.L_i[r]);                            /* 11 */
#ifdef KERN_BUG_BWD_DS_NO_D
            const float D_r = 0.0f;
#else
            const float D_r = b.D_i[r];
#endif
            ref_tile_ds(s, dp, &D_r, 1, (int)bc, dp);                         /* 14 */
            ref_round_row(s, bc, p.p_round);     /* P_ij as line 12's product takes it */
            ref_round_row(dp, bc, p.p_round);    /* dS_ij as lines 15-16's take it */
        }
        KERN_SYNC();            /* P_ij, dS_ij whole */
        const kern_rows C = kern_my_rows(bc);    /* this thread's rows of dV_j, dK_j */
        kern_acc_tn_rows(C, b.dV_j, b.S_ij, (int)br, (int)bc, dOv, (int)d, 1.0f);       /* 12 */
        kern_acc_tn_rows(C, b.dK_j, b.dP_ij, (int)br, (int)bc, Qv, (int)d, p.scale);    /* 16 */
        /* 15: dQ_i += dS_ij K_j, a read-modify-write at this block's turn:
         * deterministic, after key blocks js.lo .. j - 1 (turn j - js.lo);
         * atomic, whenever dQ_i is free. */
        int *turn = p.dq_turn ? p.dq_turn + i : NULL;
        const int mine = (int)(j - kern_block_js(&p, i).lo);
        if (turn && p.dq_atomic)
            kern_turn_lock(turn);
        else if (turn)
            kern_turn_wait(turn, mine);
        kern_load(p.cnt, dq_t, b.dQ_i, dq, d, r0, 0, br, d);
        KERN_SYNC();            /* dQ_i in shared memory */
        kern_acc_nn_rows(R, b.dQ_i, b.dP_ij, (int)bc, Kv, (int)d, p.scale);            /* 15 */
        KERN_SYNC();            /* dQ_i whole */
        kern_store(p.cnt, dt, dq_t, dq, d, r0, 0, br, d, b.dQ_i);
#ifdef KERN_BUG_BWD_TURN_KEPT
        const int next = mine;
#else
        const int next = mine + 1;
#endif
        if (turn)
            kern_turn_pass(turn, p.dq_atomic ? 0 : next);
    }                                                            /* 17 */
    KERN_SYNC();                /* dK_j, dV_j whole */
    sim_tensor dK_t = SIM_dK, dV_t = SIM_dV;       /* GQA: the head's dK_exp, dV_exp */
    float *dK = kern_gqa_grad(&p, &dK_t), *dV = kern_gqa_grad(&p, &dV_t);
    kern_store(p.cnt, dt, dK_t, dK, d, c0, 0, bc, d, b.dK_j);     /* 18 */
    kern_store(p.cnt, dt, dV_t, dV, d, c0, 0, bc, d, b.dV_j);
}                                                                /* 19 */

/* Line 20: dQ_i = dQ_acc_i in the dtype, through phase 2's dQ_i buffer as
 * the simulator converts it (the launch holds phase 2's shared memory). */
KERN_GLOBAL kern_fa2_bwd_convert(kern_params p)
{
    kern_at_head(&p, kern_block_y());
    const int64_t N = p.N, d = p.d, B_r = p.Br;
    const int64_t i = kern_block_x();
    const int64_t r0 = i * B_r, br = kern_min(B_r, N - r0);
    const fa2_bwd_smem b = fa2_bwd_carve(&p);
    kern_load(p.cnt, SIM_dQacc, b.dQ_i, p.dQacc, d, r0, 0, br, d);
    KERN_SYNC();
    kern_store(p.cnt, p.dtype, SIM_dQ, p.dQ, d, r0, 0, br, d, b.dQ_i);
}

#endif /* FASIM_KERN_FA2_BWD_CUH */
