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
 * Threads split the rows of the block (kern_my_rows: rows t, t + blockDim,
 * ... on a GPU, a contiguous chunk on the CPU): each thread computes its rows
 * of S_ij, P~_ij and O_i, each with the whole row's arithmetic in the
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

/* FA2's block in shared memory, carved as the plan lays it out: the fp32
 * buffers S_ij, O_i (or a split's O~_i: `o_name`), m_i, l_i, then the tiles
 * Q_i, K_j, V_j in the dtype. */
typedef struct {
    float *S_ij, *O_i, *m_i, *l_i;
    void *Q_i, *K_j, *V_j;
} fa2_smem;

KERN_DEVICE fa2_smem fa2_carve(const kern_params *p, const char *o_name)
{
    const int64_t d = p->d, B_r = p->Br, B_c = p->Bc, e = kern_tile_elem_bytes(p->dtype);
    unsigned char *sm = KERN_SHARED();
    fa2_smem b;
    b.S_ij = (float *)kern_carve(&sm, "S_ij", B_r * B_c * 4);
    b.O_i = (float *)kern_carve(&sm, o_name, B_r * d * 4);
    b.m_i = (float *)kern_carve(&sm, "m_i", B_r * 4);
    b.l_i = (float *)kern_carve(&sm, "l_i", B_r * 4);
    b.Q_i = kern_carve(&sm, "Q_i", B_r * d * e);
    b.K_j = kern_carve(&sm, "K_j", B_c * d * e);
    b.V_j = kern_carve(&sm, "V_j", B_c * d * e);
    return b;
}

/* Lines 4-11 for query block i over its key blocks j0 .. j1 (all it
 * visits, or a split's share of them): Q_i loaded, the state emptied, the
 * online steps. O_i, m_i, l_i are left unnormalised in shared memory, and
 * every thread's rows done with them (the caller reads only its own rows,
 * kern_my_rows(br), before the next barrier). */
KERN_DEVICE void fa2_rows(const kern_params *pp, const fa2_smem *b, int64_t i, int64_t j0,
                          int64_t j1)
{
    const kern_params p = *pp;
    const int64_t N = p.N, N_k = p.Nk, d = p.d, B_r = p.Br, B_c = p.Bc;
    const ref_mask mk = kern_mask(&p);
    const int64_t r0 = i * B_r, br = kern_min(B_r, N - r0);
    const kern_rows R = kern_my_rows(br);        /* this thread's rows of the block */
    const sim_dtype dt = p.dtype;
    float *S_ij = b->S_ij, *O_i = b->O_i, *m_i = b->m_i, *l_i = b->l_i;
    const kern_tv Qv = kern_tv_make(b->Q_i, dt), Kv = kern_tv_make(b->K_j, dt),
                  Vv = kern_tv_make(b->V_j, dt), Sv = kern_tv_make(S_ij, SIM_FP32);

    kern_load_tile(p.cnt, SIM_Q, dt, b->Q_i, p.Q, d, r0, 0, br, d);   /* 4 */
    kern_state_empty_rows(R, m_i, l_i, O_i, d);                  /* 5 */
    for (int64_t j = j0; j <= j1; j++) {                         /* 6 */
        const int64_t c0 = j * B_c, bc = kern_min(B_c, N_k - c0);
        KERN_SYNC();            /* every row is done with K_j, V_j of step j - 1 */
        kern_load_tile(p.cnt, SIM_K, dt, b->K_j, p.K, d, c0, 0, bc, d);  /* 7 */
        kern_load_tile(p.cnt, SIM_V, dt, b->V_j, p.V, d, c0, 0, bc, d);
#ifdef KERN_BUG_RELOAD_Q
        kern_load_tile(p.cnt, SIM_Q, dt, b->Q_i, p.Q, d, r0, 0, br, d);
#endif
        KERN_SYNC();            /* Q_i (first step), K_j, V_j are in shared memory */
        kern_scores_rows(R, Qv, Kv, (int)bc, (int)d, p.scale, S_ij);            /* 8 */
        for (int64_t r = R.lo; r < R.hi; r += R.step) {
            float *s = S_ij + r * bc;
            ref_tile_mask(s, 1, (int)bc, r0 + r, c0, &mk);
            float alpha = kern_online_step(s, (int)bc, &m_i[r], &l_i[r]);       /* 9 */
            ref_round_row(s, bc, p.p_round);     /* P~ as line 10's product takes it */
#ifdef KERN_BUG_SKIP_RESCALE
            alpha = 1.0f;
#endif
            kern_scale_row(O_i + r * d, (int)d, alpha);          /* 10: diag(alpha) O_i */
        }
        kern_pv_acc_rows(R, O_i, (int)d, Sv, Vv, (int)bc);       /* 10: + P~_ij V_j */
    }                                                            /* 11 */
}

KERN_GLOBAL kern_fa2(kern_params p)
{
    kern_at_head(&p, kern_block_y());
    const int64_t N = p.N, d = p.d, B_r = p.Br;
    const int64_t i = kern_block_x();                            /* 3 */
    const int64_t r0 = i * B_r, br = kern_min(B_r, N - r0);
    const fa2_smem b = fa2_carve(&p, "O_i");
    const sim_range js = kern_block_js(&p, i);
    fa2_rows(&p, &b, i, js.lo, js.hi);                           /* 4-11 */
    const kern_rows R = kern_my_rows(br);        /* the rows fa2_rows gave this thread */
    for (int64_t r = R.lo; r < R.hi; r += R.step) {
        ref_normalise_row(b.O_i + r * d, (int)d, b.l_i[r]);      /* 12 */
        b.m_i[r] = ref_lse(b.m_i[r], b.l_i[r]);                  /* 13: L_i in m_i */
    }
    KERN_SYNC();                /* all rows of O_i and L_i are final */
    kern_store(p.cnt, p.dtype, SIM_O, p.O, d, r0, 0, br, d, b.O_i);         /* 14 */
    kern_store(p.cnt, p.dtype, SIM_L, p.L, 1, r0, 0, br, 1, b.m_i);         /* 15 */
}                                                                /* 16-17 */

/*
 * Split-KV (Flash-Decoding), beside sim/algo_fa2_split.c: the key blocks in S
 * contiguous splits (sim_split_js). kern_fa2_split, grid (S T_r, B H): block
 * (s T_r + i, q) runs FA2's lines 4-11 for query block i over the key blocks
 * of split s that it visits (none: the empty state) and writes the partial
 * state unnormalised, fp32: O~_i^(s), m_i^(s), l_i^(s) at rows s N + r0 of the
 * head. kern_fa2_combine, grid (T_r, B H): block (i, q) merges the S partials
 * of query block i in order s = 0 .. S - 1 (ref_merge, the simulator's), then
 * O_i = O~ / l, L_i = m + log l (lines 12-15).
 */
KERN_GLOBAL kern_fa2_split(kern_params p)
{
    kern_at_head(&p, kern_block_y());
    const int64_t N = p.N, d = p.d, B_r = p.Br;
    const int64_t i = kern_block_x() % p.Tr, s = kern_block_x() / p.Tr;
    const int64_t r0 = i * B_r, br = kern_min(B_r, N - r0);
    const fa2_smem b = fa2_carve(&p, "O~_i");
    const sim_range js = kern_block_js(&p, i);
    const sim_range sp = { s * p.Tc / p.splits, (s + 1) * p.Tc / p.splits - 1 };
    fa2_rows(&p, &b, i, js.lo > sp.lo ? js.lo : sp.lo, js.hi < sp.hi ? js.hi : sp.hi);
    KERN_SYNC();                /* every row of the partial state is final */
    kern_store(p.cnt, p.dtype, SIM_Ot, p.Ot, d, s * N + r0, 0, br, d, b.O_i);
    kern_store(p.cnt, p.dtype, SIM_m, p.m, 1, s * N + r0, 0, br, 1, b.m_i);
    kern_store(p.cnt, p.dtype, SIM_l, p.l, 1, s * N + r0, 0, br, 1, b.l_i);
}

KERN_GLOBAL kern_fa2_combine(kern_params p)
{
    kern_at_head(&p, kern_block_y());
    const int64_t N = p.N, d = p.d, B_r = p.Br;
    const int64_t tid = kern_thread_x(), nt = kern_block_dim();
    const int64_t i = kern_block_x();
    const int64_t r0 = i * B_r, br = kern_min(B_r, N - r0);
    unsigned char *sm = KERN_SHARED();
    float *Ot_s = (float *)kern_carve(&sm, "O~_s", B_r * d * 4);
    float *m_s = (float *)kern_carve(&sm, "m_s", B_r * 4);
    float *l_s = (float *)kern_carve(&sm, "l_s", B_r * 4);
    float *O_i = (float *)kern_carve(&sm, "O_i", B_r * d * 4);
    float *m_i = (float *)kern_carve(&sm, "m_i", B_r * 4);
    float *l_i = (float *)kern_carve(&sm, "l_i", B_r * 4);

    kern_state_empty(m_i, l_i, O_i, br, d);
    for (int64_t s = 0; s < p.splits; s++) {
        KERN_SYNC();            /* every row is done with split s - 1's partial */
        kern_load(p.cnt, SIM_Ot, Ot_s, p.Ot, d, s * N + r0, 0, br, d);
        kern_load(p.cnt, SIM_m, m_s, p.m, 1, s * N + r0, 0, br, 1);
        kern_load(p.cnt, SIM_l, l_s, p.l, 1, s * N + r0, 0, br, 1);
        KERN_SYNC();
        for (int64_t r = tid; r < br; r += nt)
            ref_merge(m_i[r], l_i[r], O_i + r * d, m_s[r], l_s[r], Ot_s + r * d, (int)d,
                      &m_i[r], &l_i[r], O_i + r * d);
    }
    for (int64_t r = tid; r < br; r += nt) {
        ref_normalise_row(O_i + r * d, (int)d, l_i[r]);          /* 12 */
        m_i[r] = ref_lse(m_i[r], l_i[r]);                        /* 13: L_i in m_i */
    }
    KERN_SYNC();
    kern_store(p.cnt, p.dtype, SIM_O, p.O, d, r0, 0, br, d, O_i);           /* 14 */
    kern_store(p.cnt, p.dtype, SIM_L, p.L, 1, r0, 0, br, 1, m_i);           /* 15 */
}

#endif /* FASIM_KERN_FA2_CUH */
