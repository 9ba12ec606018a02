/*
 * kern_gqa_bwd.cuh — GQA's backward (G < H key/value heads, MQA: G = 1) in
 * the kernels, beside sim/sim_run.c's group_sum: what a backward kernel
 * writes instead of dK_j, dV_j, and the group sum after it.
 *
 * The released FlashAttention-2 runs GQA's backward as MHA's: each query
 * head writes its own dK, dV, into dk_expanded, dv_expanded (B H, N_k, d)
 * in q's dtype, and mha_bwd then sums each key/value head's H/G of them
 * with at::sum_out (flash_api.cpp). fasim holds those as dK_exp, dV_exp
 * (sim_gqa_grad):
 *
 *   kern_gqa_grad         where a backward kernel writes dK_j, dV_j: its
 *                         query head's dK_exp, dV_exp when G < H, else dK,
 *                         dV (kern_at_head has moved both to its head);
 *   kern_gqa_sum_dk       grid (T_c, B G): block (j, b G + g) sums key block
 *   kern_gqa_sum_dv       j (B_c rows) of dK_exp (dV_exp) over the query
 *                         heads b H + g H/G .. b H + (g + 1) H/G - 1 that
 *                         read key/value head g, in ascending order, in
 *                         fp32 from 0, and writes dK_j (dV_j) of dK (dV)
 *                         once, rounded to the dtype.
 *
 * The two are group_sum's two passes (dK's, then dV's), as separate launches
 * that any backward appends (kern_schedule_make): each has one buffer, the
 * plan's dK_j (dV_j) of the phase that holds it, fp32 (B_c, d), which the
 * simulator names for the sum's transfers. Each tile of dK_exp is added
 * into it as it arrives (kern_load_add): sum = ((0 + t_0) + t_1) + ..., the
 * simulator's additions in its order, one transfer of B_c d elements per
 * query head. Element x of the tile is thread x mod blockDim's throughout,
 * so the bits are the simulator's for any number of threads.
 *
 * Shapes: dK_exp, dV_exp (B H, N_k, d); dK, dV (B G, N_k, d); bc this
 * block's key rows (the last block may be partial).
 *
 * A deliberately wrong variant, for the test that must catch it (never
 * defined in the fasim build):
 *   KERN_BUG_GQA_SUM_DESCENDING  the group's query heads summed from the
 *                                last to the first: the same transfers, a
 *                                different rounding of the sum once H/G >= 3
 */
#ifndef FASIM_KERN_GQA_BWD_CUH
#define FASIM_KERN_GQA_BWD_CUH

#include "kern_exec.h"

/* Where a backward kernel writes gradient *t (SIM_dK or SIM_dV) of its
 * query head: dK_exp or dV_exp with G < H (*t set to it), else *t itself. */
KERN_DEVICE float *kern_gqa_grad(const kern_params *p, sim_tensor *t)
{
    const int dk = *t == SIM_dK;
    float *exp_t = dk ? p->dKexp : p->dVexp;
    if (!exp_t)
        return dk ? p->dK : p->dV;
    *t = dk ? SIM_dKexp : SIM_dVexp;
    return exp_t;
}

/* Block (j, kv) of the group sum of `from` (dK_exp or dV_exp) into `to`
 * (dK or dV), through the buffer named buf. */
KERN_DEVICE void gqa_sum(const kern_params *p, sim_tensor from_t, const float *from,
                         sim_tensor to_t, float *to, const char *buf)
{
    const int64_t N_k = p->Nk, d = p->d, B_c = p->Bc, per_g = p->H / p->G;
    const int64_t tid = kern_thread_x(), nt = kern_block_dim();
    const int64_t j = kern_block_x(), kv = kern_block_y();      /* kv = b G + g */
    const int64_t head0 = kv / p->G * p->H + kv % p->G * per_g;   /* its first query head */
    const int64_t c0 = j * B_c, bc = kern_min(B_c, N_k - c0);
    unsigned char *sm = KERN_SHARED();
    float *sum = (float *)kern_carve(&sm, buf, B_c * d * 4);
    for (int64_t x = tid; x < bc * d; x += nt)
        sum[x] = 0.0f;
    for (int64_t q = 0; q < per_g; q++) {
#ifdef KERN_BUG_GQA_SUM_DESCENDING
        const int64_t head = head0 + per_g - 1 - q;
#else
        const int64_t head = head0 + q;
#endif
        kern_load_add(p->cnt, from_t, sum, from + head * N_k * d, d, c0, 0, bc, d);
    }
    KERN_SYNC();
    kern_store(p->cnt, p->dtype, to_t, to + kv * N_k * d, d, c0, 0, bc, d, sum);
}

KERN_GLOBAL kern_gqa_sum_dk(kern_params p)
{
    gqa_sum(&p, SIM_dKexp, p.dKexp, SIM_dK, p.dK, "dK_j");
}

KERN_GLOBAL kern_gqa_sum_dv(kern_params p)
{
    gqa_sum(&p, SIM_dVexp, p.dVexp, SIM_dV, p.dV, "dV_j");
}

#endif /* FASIM_KERN_GQA_BWD_CUH */
