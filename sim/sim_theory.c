/*
 * sim_theory.c — exact closed forms of every loop order's HBM traffic, and the
 * papers' bounds.
 *
 * These formulas are derived from the pseudocode, not from the simulator; the
 * tests check that the simulator's measured counts equal them for hundreds of
 * configurations. Notation: N, d, B_r, B_c, T_r = ceil(N/B_r),
 * T_c = ceil(N/B_c); br_last = N - (T_r - 1) B_r and bc_last likewise are the
 * rows of the last (possibly partial) blocks.
 *
 * Causal masking: block pair (i, j) is visited iff j B_c <= last row of block
 * i, i.e. j <= floor((min((i+1) B_r, N) - 1) / B_c). The number of visited
 * pairs is a floor sum, evaluated exactly in O(log) steps by floor_sum().
 */
#include "sim.h"

#include <string.h>

typedef struct {
    int overflow;
} chk;

static uint64_t mul(chk *k, uint64_t a, uint64_t b)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        k->overflow = 1;
    return r;
}

static uint64_t add(chk *k, uint64_t a, uint64_t b)
{
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r))
        k->overflow = 1;
    return r;
}

/* sum_{k=0}^{n-1} floor((a k + b) / m) for a, b >= 0, m >= 1.
 * The Euclid-like reduction: take the integer parts of a/m and b/m out of the
 * sum (arithmetic series), then count the remaining lattice points under the
 * line by swapping the roles of the axes, which shrinks (m, a) like gcd does. */
static uint64_t floor_sum(chk *k, uint64_t n, uint64_t m, uint64_t a, uint64_t b)
{
    uint64_t ans = 0;
    for (;;) {
        if (n == 0)
            return ans;
        if (a >= m) {
            uint64_t tri = (n % 2 == 0) ? mul(k, n / 2, n - 1) : mul(k, n, (n - 1) / 2);
            ans = add(k, ans, mul(k, tri, a / m));
            a %= m;
        }
        if (b >= m) {
            ans = add(k, ans, mul(k, n, b / m));
            b %= m;
        }
        uint64_t y_max = add(k, mul(k, a, n), b);
        if (y_max < m || k->overflow)
            return ans;
        n = y_max / m;
        b = y_max % m;
        uint64_t t = m;
        m = a;
        a = t;
    }
}

/* Visited block pairs under the shape's mask: the sum over query blocks i of
 * the key blocks j_lo(i) .. j_hi(i) that block i sees (sim.h, "the mask").
 * With off = N_k - N and causal masking, block i < T_r - 1 ends at row
 * (i+1) B_r - 1, so j_hi(i) = floor((B_r i + B_r - 1 + off) / B_c), and the
 * last block sees up to key N_k - 1, j_hi = T_c - 1. A window W starts block
 * i at key B_r i + off - W + 1 when that is positive: j_lo(i) =
 * floor((B_r i + off - W + 1) / B_c) from the first such i, i_0, on. */
static uint64_t visited(chk *k, const sim_shape *sh, int64_t Br, int64_t Bc)
{
    const int64_t N = sh->N, N_k = sim_shape_Nk(sh), off = N_k - N, W = sh->window;
    const uint64_t Tr = (uint64_t)((N + Br - 1) / Br), Tc = (uint64_t)((N_k + Bc - 1) / Bc);
    if (!sh->causal)
        return mul(k, Tr, Tc);
    uint64_t s = floor_sum(k, Tr - 1, (uint64_t)Bc, (uint64_t)Br, (uint64_t)(Br - 1 + off));
    s = add(k, add(k, s, Tr - 1), Tc);
    if (W > 0) {
        const int64_t first = off - W + 1;            /* row 0's first key, if >= 0 */
        const int64_t i0 = first >= 0 ? 0 : (-first + Br - 1) / Br;
        if ((uint64_t)i0 < Tr)
            s -= floor_sum(k, Tr - (uint64_t)i0, (uint64_t)Bc, (uint64_t)Br,
                           (uint64_t)(Br * i0 + first));
    }
    return s;
}

uint64_t sim_theory_visited(const sim_shape *sh, int64_t Br, int64_t Bc)
{
    chk k = { 0 };
    uint64_t v = visited(&k, sh, Br, Bc);
    return k.overflow ? UINT64_MAX : v;
}

uint64_t sim_theory_visited_blocks(int64_t N, int64_t Br, int64_t Bc, int causal)
{
    sim_shape sh = { .N = N, .d = 1, .M = 1, .dtype = SIM_FP32, .causal = causal };
    return sim_theory_visited(&sh, Br, Bc);
}

static void put(sim_counts *c, sim_tensor t, int dir_write, uint64_t elems, uint64_t ops,
                chk *k)
{
    if (dir_write) {
        c->write_elems[t] = add(k, c->write_elems[t], elems);
        c->write_ops[t] = add(k, c->write_ops[t], ops);
    } else {
        c->read_elems[t] = add(k, c->read_elems[t], elems);
        c->read_ops[t] = add(k, c->read_ops[t], ops);
    }
}

enum { RD = 0, WR = 1 };

/* The backward passes, one head (see sim_plan.c for their buffers and the
 * algo_*_bwd.c files for the loops, with the papers' line numbers).
 * V_b visited pairs; rows = sum over visited pairs of the query block's
 * rows; j_skip = key blocks before row 0's first key, which no query sees. */
static void theory_bwd(chk *k, const sim_plan *p, const sim_shape *sh, sim_counts *out)
{
    const uint64_t N = (uint64_t)sh->N, N_k = (uint64_t)sim_shape_Nk(sh), d = (uint64_t)sh->d;
    const uint64_t Br = (uint64_t)p->Br, Bc = (uint64_t)p->Bc;
    const uint64_t Tr = (uint64_t)p->Tr, Tc = (uint64_t)p->Tc;
    const uint64_t Nd = mul(k, N, d), Nkd = mul(k, N_k, d), TT = mul(k, Tr, Tc);
    if (p->algo == SIM_NAIVE) {
        const uint64_t NN = mul(k, N, N_k);
        /* 1: for j { for i { load P_ij, dO_i } store dV_j } */
        put(out, SIM_P, RD, NN, TT, k);
        put(out, SIM_dO, RD, mul(k, Tc, Nd), TT, k);
        put(out, SIM_dV, WR, Nkd, Tc, k);
        /* 2: for i { load dO_i; for j { load V_j; store dP_ij } } */
        put(out, SIM_dO, RD, Nd, Tr, k);
        put(out, SIM_V, RD, mul(k, Tr, Nkd), TT, k);
        put(out, SIM_dP, WR, NN, TT, k);
        /* 3: dS from P and dP: whole rows once, or tiles twice (sums, dS) */
        if (p->softmax_passes == 1) {
            uint64_t T_s = (N + (uint64_t)p->Bs_r - 1) / (uint64_t)p->Bs_r;
            put(out, SIM_P, RD, NN, T_s, k);
            put(out, SIM_dP, RD, NN, T_s, k);
            put(out, SIM_dS, WR, NN, T_s, k);
        } else {
            put(out, SIM_P, RD, mul(k, 2, NN), mul(k, 2, TT), k);
            put(out, SIM_dP, RD, mul(k, 2, NN), mul(k, 2, TT), k);
            put(out, SIM_dS, WR, NN, TT, k);
        }
        /* 4: for i { for j { load dS_ij, K_j } store dQ_i } */
        put(out, SIM_dS, RD, NN, TT, k);
        put(out, SIM_K, RD, mul(k, Tr, Nkd), TT, k);
        put(out, SIM_dQ, WR, Nd, Tr, k);
        /* 5: for j { for i { load dS_ij, Q_i } store dK_j } */
        put(out, SIM_dS, RD, NN, TT, k);
        put(out, SIM_Q, RD, mul(k, Tc, Nd), TT, k);
        put(out, SIM_dK, WR, Nkd, Tc, k);
        return;
    }
    const uint64_t br_last = N - (Tr - 1) * Br;
    const uint64_t V_b = visited(k, sh, p->Br, p->Bc);
    const sim_range js = sim_block_js(sh, p->Tr - 1, p->Br, p->Bc);
    const uint64_t rows = mul(k, Br, V_b) - (Br - br_last) * (uint64_t)(js.hi - js.lo + 1);
    const uint64_t rows_d = mul(k, rows, d);
    const uint64_t j_skip = (uint64_t)sim_block_js(sh, 0, p->Br, p->Bc).lo;
    const uint64_t kv = mul(k, N_k - j_skip * Bc, d);
    /* K_j, V_j for every key block some query sees (FA1 line 7, FA2 line 6) */
    put(out, SIM_K, RD, kv, Tc - j_skip, k);
    put(out, SIM_V, RD, kv, Tc - j_skip, k);
    if (p->algo == SIM_FA1) {
        /* 5: dQ, dK, dV = 0 in HBM, block by block */
        put(out, SIM_dQ, WR, Nd, Tr, k);
        put(out, SIM_dK, WR, Nkd, Tc, k);
        put(out, SIM_dV, WR, Nkd, Tc, k);
        /* 10, 21 at every visited pair: Q_i, O_i, dO_i, dQ_i, l_i, m_i in; dQ_i out */
        put(out, SIM_Q, RD, rows_d, V_b, k);
        put(out, SIM_O, RD, rows_d, V_b, k);
        put(out, SIM_dO, RD, rows_d, V_b, k);
        put(out, SIM_dQ, RD, rows_d, V_b, k);
        put(out, SIM_l, RD, rows, V_b, k);
        put(out, SIM_m, RD, rows, V_b, k);
        put(out, SIM_dQ, WR, rows_d, V_b, k);
        /* 24: dK_j, dV_j out for the key blocks visited */
        put(out, SIM_dK, WR, kv, Tc - j_skip, k);
        put(out, SIM_dV, WR, kv, Tc - j_skip, k);
    } else {
        /* 3: dQ = 0 in HBM; 4: D = rowsum(dO o O), block by block */
        put(out, SIM_dQ, WR, Nd, Tr, k);
        put(out, SIM_O, RD, Nd, Tr, k);
        put(out, SIM_dO, RD, Nd, Tr, k);
        put(out, SIM_D, WR, N, Tr, k);
        /* 9, 15 at every visited pair: Q_i, dO_i, L_i, D_i in; dQ_i in and out */
        put(out, SIM_Q, RD, rows_d, V_b, k);
        put(out, SIM_dO, RD, rows_d, V_b, k);
        put(out, SIM_L, RD, rows, V_b, k);
        put(out, SIM_D, RD, rows, V_b, k);
        put(out, SIM_dQ, RD, rows_d, V_b, k);
        put(out, SIM_dQ, WR, rows_d, V_b, k);
        /* 18: dK_j, dV_j out for every key block (zeros where no query sees it) */
        put(out, SIM_dK, WR, Nkd, Tc, k);
        put(out, SIM_dV, WR, Nkd, Tc, k);
    }
}

/* Paged KV, one head. A load of key block j (keys c0 .. c1) of K or V
 * touches pages(j) = floor(c1 / P) - floor(c0 / P) + 1 pages: it reads their
 * table entries in one transfer (PT, 4 bytes each) and moves pages(j)
 * transfers of K or V instead of one, the same elements. n(j), the loads of
 * block j of K (and as many of V), follows from each loop order: T_r for
 * standard attention (forward lines 1 and 3, backward lines 2 and 4) and for
 * FA2's forward without a mask; once per key block some query sees for FA1
 * and the backward passes; once per visiting query block for FA2's forward
 * under a mask, split or not.
 *
 * Where n(j) is the same for a range of blocks the sum is closed: a full
 * block j ends at (j+1) B_c - 1, so pages(j) = 1 + F(j+1) - F(j) - [P | (j+1)
 * B_c] with F(j) = floor(j B_c / P), and the blocks before j span
 * pre(j) = j + floor(j B_c / P) - floor(j / q) pages, q = P / gcd(P, B_c) (the
 * block boundaries that fall on a page boundary). The last block, maybe
 * partial, is added on its own. FA2 under a mask sums block by block over the
 * key blocks some query sees: each is a tile step of the run, so the sum
 * costs less than the run. */
static uint64_t pages_before(uint64_t j, uint64_t Bc, uint64_t P, uint64_t q)
{
    return j + j * Bc / P - j / q;              /* j B_c <= N_k + B_c < 2^42 */
}

static void paged(chk *k, const sim_plan *p, const sim_shape *sh, sim_counts *out)
{
    const uint64_t P = (uint64_t)sh->page, N_k = (uint64_t)sim_shape_Nk(sh);
    const uint64_t Bc = (uint64_t)p->Bc, Tc = (uint64_t)p->Tc;
    uint64_t g = P, b = Bc;
    while (b) {
        const uint64_t t = g % b;
        g = b;
        b = t;
    }
    const uint64_t q = P / g;
    const uint64_t last = (N_k - 1) / P - (Tc - 1) * Bc / P + 1;   /* pages of block T_c - 1 */
    uint64_t loads = 0, spans = 0;       /* sum of n(j), and of n(j) pages(j) */
    if (p->algo == SIM_FA2 && p->pass == SIM_FWD && sh->causal) {
        const uint64_t j_lo = (uint64_t)sim_block_js(sh, 0, p->Br, p->Bc).lo;
        for (uint64_t j = j_lo; j < Tc; j++) {
            const sim_range is = sim_block_is(sh, (int64_t)j, p->Br, p->Bc);
            const uint64_t n = (uint64_t)(is.hi - is.lo + 1);
            const uint64_t pages = j + 1 < Tc ? pages_before(j + 1, Bc, P, q) -
                                                    pages_before(j, Bc, P, q)
                                              : last;
            loads = add(k, loads, n);
            spans = add(k, spans, mul(k, n, pages));
        }
    } else {
        /* n(j) = n for the blocks j_lo .. T_c - 1 */
        uint64_t n = 1, j_lo = 0;                         /* FA1, backward passes */
        if (p->algo == SIM_NAIVE || p->pass == SIM_FWD)
            n = p->algo == SIM_FA1 ? 1 : (uint64_t)p->Tr; /* naive; FA2 without a mask */
        if (p->algo != SIM_NAIVE)
            j_lo = (uint64_t)sim_block_js(sh, 0, p->Br, p->Bc).lo;
        const uint64_t pages = pages_before(Tc - 1, Bc, P, q) - pages_before(j_lo, Bc, P, q) +
                               last;
        loads = mul(k, n, Tc - j_lo);
        spans = mul(k, n, pages);
    }
    const uint64_t extra = spans - loads;               /* transfers beyond one per load */
    out->read_ops[SIM_K] = add(k, out->read_ops[SIM_K], extra);
    out->read_ops[SIM_V] = add(k, out->read_ops[SIM_V], extra);
    put(out, SIM_PT, RD, mul(k, 2, spans), mul(k, 2, loads), k);
}

int sim_theory_counts(const sim_plan *p, const sim_shape *sh, sim_counts *out)
{
    chk k = { 0 };
    memset(out, 0, sizeof *out);
    const uint64_t N = (uint64_t)sh->N, N_k = (uint64_t)sim_shape_Nk(sh), d = (uint64_t)sh->d;
    const uint64_t Br = (uint64_t)p->Br, Bc = (uint64_t)p->Bc;
    const uint64_t Tr = (uint64_t)p->Tr, Tc = (uint64_t)p->Tc;
    const uint64_t br_last = N - (Tr - 1) * Br, bc_last = N_k - (Tc - 1) * Bc;
    const uint64_t Nd = mul(&k, N, d), Nkd = mul(&k, N_k, d), TT = mul(&k, Tr, Tc);

    switch (p->pass == SIM_BWD ? SIM_ALGO_COUNT + 1 : (int)p->algo) {
    case SIM_ALGO_COUNT + 1:
        theory_bwd(&k, p, sh, out);
        break;
    case SIM_NAIVE: {
        /* N N_k only here: FA1 and FA2 never move an N x N_k tensor, and
         * their counts stay representable long after N^2 leaves 64 bits. */
        const uint64_t NN = mul(&k, N, N_k);
        /* Line 1: for i { load Q_i; for j { load K_j; store S_ij } } */
        put(out, SIM_Q, RD, Nd, Tr, &k);
        put(out, SIM_K, RD, mul(&k, Tr, Nkd), TT, &k);
        put(out, SIM_S, WR, NN, TT, &k);
        /* Line 2: softmax, 1 pass over whole rows or 3 passes over tiles */
        if (p->softmax_passes == 1) {
            uint64_t T_s = (N + (uint64_t)p->Bs_r - 1) / (uint64_t)p->Bs_r;
            put(out, SIM_S, RD, NN, T_s, &k);
            put(out, SIM_P, WR, NN, T_s, &k);
        } else {
            put(out, SIM_S, RD, mul(&k, 3, NN), mul(&k, 3, TT), &k);
            put(out, SIM_P, WR, NN, TT, &k);
        }
        /* Line 3: for i { for j { load P_ij; load V_j } store O_i } */
        put(out, SIM_P, RD, NN, TT, &k);
        put(out, SIM_V, RD, mul(&k, Tr, Nkd), TT, &k);
        put(out, SIM_O, WR, Nd, Tr, &k);
        break;
    }
    case SIM_FA1: {
        /* Line 2: O, l, m initialised in HBM, one block of each per i. */
        put(out, SIM_O, WR, Nd, Tr, &k);
        put(out, SIM_l, WR, N, Tr, &k);
        put(out, SIM_m, WR, N, Tr, &k);
        /* Line 6: K_j, V_j once per j that some query sees: all of them but
         * the j_lo(0) whole blocks before row 0's first key (a window). */
        const uint64_t j_skip = (uint64_t)sim_block_js(sh, 0, p->Br, p->Bc).lo;
        const uint64_t kv = mul(&k, N_k - j_skip * Bc, d);
        put(out, SIM_K, RD, kv, Tc - j_skip, &k);
        put(out, SIM_V, RD, kv, Tc - j_skip, &k);
        /* Lines 8, 12, 13 at every visited (i, j): rows of Q_i, O_i, l_i, m_i.
         * B_r rows per visited pair, less B_r - br_last for each key block
         * the last (partial) query block visits. */
        uint64_t V_b = visited(&k, sh, p->Br, p->Bc);
        const sim_range js = sim_block_js(sh, p->Tr - 1, p->Br, p->Bc);
        uint64_t rows = mul(&k, Br, V_b) - (Br - br_last) * (uint64_t)(js.hi - js.lo + 1);
        uint64_t rows_d = mul(&k, rows, d);
        put(out, SIM_Q, RD, rows_d, V_b, &k);
        put(out, SIM_O, RD, rows_d, V_b, &k);
        put(out, SIM_l, RD, rows, V_b, &k);
        put(out, SIM_m, RD, rows, V_b, &k);
        put(out, SIM_O, WR, rows_d, V_b, &k);
        put(out, SIM_l, WR, rows, V_b, &k);
        put(out, SIM_m, WR, rows, V_b, &k);
        break;
    }
    case SIM_FA2: {
        /* Lines 4, 14, 15: Q_i in, O_i and L_i out, once per i. Split-KV
         * (algo_fa2_split.c): Q_i in once per split, and each split's
         * partial O~_i, m_i, l_i out, read back by the merge. */
        const uint64_t S = (uint64_t)sim_shape_S(sh);
        put(out, SIM_Q, RD, mul(&k, S, Nd), mul(&k, S, Tr), &k);
        put(out, SIM_O, WR, Nd, Tr, &k);
        put(out, SIM_L, WR, N, Tr, &k);
        if (S > 1) {
            const sim_tensor part[3] = { SIM_Ot, SIM_m, SIM_l };
            for (int q = 0; q < 3; q++) {
                const uint64_t n = mul(&k, S, q == 0 ? Nd : N);
                put(out, part[q], WR, n, mul(&k, S, Tr), &k);
                put(out, part[q], RD, n, mul(&k, S, Tr), &k);
            }
        }
        /* Line 7: K_j, V_j at every visited (i, j): B_c keys per pair, less
         * B_c - bc_last for each query block that visits the last key block. */
        uint64_t V_b = visited(&k, sh, p->Br, p->Bc);
        const sim_range is = sim_block_is(sh, p->Tc - 1, p->Br, p->Bc);
        uint64_t keys = mul(&k, Bc, V_b) - (Bc - bc_last) * (uint64_t)(is.hi - is.lo + 1);
        put(out, SIM_K, RD, mul(&k, keys, d), V_b, &k);
        put(out, SIM_V, RD, mul(&k, keys, d), V_b, &k);
        break;
    }
    default:
        return -1;
    }
    if (sh->page > 0)
        paged(&k, p, sh, out);
    /* The whole batch: every head repeats its loop nest, so each count is the
     * one-head count times the heads that move the tensor: B H on the query
     * side, and for K and V B H too (each query head reads its key/value
     * head), or B G when a block takes a group's query heads together. */
    const uint64_t q_heads = mul(&k, (uint64_t)sim_shape_B(sh), (uint64_t)sim_shape_H(sh));
    const uint64_t kv_reads = sh->group ? mul(&k, (uint64_t)sim_shape_B(sh),
                                               (uint64_t)sim_shape_G(sh))
                                        : q_heads;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        uint64_t f = (t == SIM_K || t == SIM_V || t == SIM_PT) ? kv_reads : q_heads;
        out->read_elems[t] = mul(&k, out->read_elems[t], f);
        out->write_elems[t] = mul(&k, out->write_elems[t], f);
        out->read_ops[t] = mul(&k, out->read_ops[t], f);
        out->write_ops[t] = mul(&k, out->write_ops[t], f);
    }
    /* The byte totals must fit too: elements times at most 4 bytes. */
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        (void)mul(&k, out->read_elems[t], 4);
        (void)mul(&k, out->write_elems[t], 4);
    }
    uint64_t total = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        total = add(&k, add(&k, total, out->read_elems[t]), out->write_elems[t]);
    (void)mul(&k, total, 4);
    return k.overflow ? -1 : 0;
}

int sim_theory_steps(const sim_plan *p, const sim_shape *sh, uint64_t *steps)
{
    chk k = { 0 };
    /* Blocks of heads that each run the loop nest once (sim_run). */
    const uint64_t blocks = mul(&k, (uint64_t)sim_shape_B(sh),
                                (uint64_t)(sim_shape_H(sh) / sim_shape_hq(sh)));
    uint64_t TT = mul(&k, (uint64_t)p->Tr, (uint64_t)p->Tc);
    const int bwd = p->pass == SIM_BWD;
    if (p->algo == SIM_NAIVE) {
        /* forward: lines 1 and 3 tile by tile, line 2 in 1 or 3 passes;
         * backward: lines 1, 2, 4, 5 tile by tile, line 3 in 1 or 2 passes */
        uint64_t sm = p->softmax_passes == 1
                          ? ((uint64_t)sh->N + (uint64_t)p->Bs_r - 1) / (uint64_t)p->Bs_r
                          : mul(&k, (uint64_t)p->softmax_passes, TT);
        *steps = add(&k, mul(&k, bwd ? 4 : 2, TT), sm);
    } else {
        /* the visited block pairs; FA2's backward adds line 4's T_r blocks,
         * split-KV the merge's S T_r */
        *steps = visited(&k, sh, p->Br, p->Bc);
        if (bwd && p->algo == SIM_FA2)
            *steps = add(&k, *steps, (uint64_t)p->Tr);
        if (sim_shape_S(sh) > 1)
            *steps = add(&k, *steps, mul(&k, (uint64_t)sim_shape_S(sh), (uint64_t)p->Tr));
    }
    *steps = mul(&k, *steps, blocks);
    return k.overflow ? -1 : 0;
}

sim_bounds sim_theory_bounds(const sim_shape *sh)
{
    sim_bounds b;
    /* Theorem 2 and Proposition 3 are stated for N_q = N_k = N. With N_k
     * keys the same arguments give N d -> max(N, N_k) d and N^2 -> N N_k. */
    double N = (double)sh->N, N_k = (double)sim_shape_Nk(sh), d = (double)sh->d;
    double N_max = N > N_k ? N : N_k;
    b.M_elems = (double)(sh->M / (uint64_t)sim_dtype_bytes(sh->dtype));
    /* The theorems speak of one head; a batch of B H heads repeats them. */
    const double heads = (double)sim_shape_B(sh) * (double)sim_shape_H(sh);
    b.theta_standard = heads * (N_max * d + N * N_k);
    b.theta_flash = b.M_elems > 0 ? heads * N * N_k * d * d / b.M_elems : 0.0;
    b.lower_bound = b.theta_flash;
    b.io_floor = heads * 2.0 * (N + N_k) * d;
    b.in_regime = d <= b.M_elems && b.M_elems <= N_max * d;
    return b;
}

/* ---- count helpers ------------------------------------------------------ */

uint64_t sim_counts_read_bytes(const sim_counts *c, sim_dtype dt)
{
    uint64_t s = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        s += c->read_elems[t] * (uint64_t)sim_tensor_bytes((sim_tensor)t, dt);
    return s;
}

uint64_t sim_counts_write_bytes(const sim_counts *c, sim_dtype dt)
{
    uint64_t s = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        s += c->write_elems[t] * (uint64_t)sim_tensor_bytes((sim_tensor)t, dt);
    return s;
}

uint64_t sim_counts_elems(const sim_counts *c)
{
    uint64_t s = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        s += c->read_elems[t] + c->write_elems[t];
    return s;
}

int sim_counts_equal(const sim_counts *a, const sim_counts *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}
