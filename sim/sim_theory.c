/*
 * sim_theory.c — exact closed forms of every loop order's HBM traffic, and the
 * papers' bounds.
 *
 * Each loop order's own formulas are in its file (algo_*.c), written with the
 * helpers declared in sim_theory.h; this file holds those helpers, paged KV,
 * the heads of a batch and the papers' bounds.
 *
 * These formulas are derived from the pseudocode, not from the simulator; the
 * tests check that the simulator's measured counts equal them for hundreds of
 * configurations. Notation: N, d, B_r, B_c, T_r = ceil(N/B_r),
 * T_c = ceil(N/B_c); br_last = N - (T_r - 1) B_r and bc_last likewise are the
 * rows of the last (possibly partial) blocks.
 *
 * Causal masking: block pair (i, j) is visited iff j B_c <= last row of block
 * i, i.e. j <= floor((min((i+1) B_r, N) - 1) / B_c). The number of visited
 * pairs is a floor sum, evaluated exactly in O(log) steps by sim_th_floor_sum().
 *
 * A block mask (sim.h, sim_block_mask) makes the visited set any set: the
 * sums over it that the closed forms are written in (the pairs, their query
 * rows, keys and scores, the key blocks some query sees) are then summed
 * tile by tile over the plan's T_r x T_c tiles (visit_sums), each tile
 * visited iff sim_tile_visible. The forms themselves do not change.
 */
#include "sim_theory.h"

#include <stdlib.h>
#include <string.h>

#include "sim_limits.h"

typedef sim_chk chk;              /* short, as the formulas below use it */

/* sum_{k=0}^{n-1} floor((a k + b) / m) for a, b >= 0, m >= 1.
 * The Euclid-like reduction: take the integer parts of a/m and b/m out of the
 * sum (arithmetic series), then count the remaining lattice points under the
 * line by swapping the roles of the axes, which shrinks (m, a) like gcd does. */
uint64_t sim_th_floor_sum(chk *k, uint64_t n, uint64_t m, uint64_t a, uint64_t b)
{
    uint64_t ans = 0;
    for (;;) {
        if (n == 0)
            return ans;
        if (a >= m) {
            uint64_t tri = (n % 2 == 0) ? sim_th_mul(k, n / 2, n - 1) : sim_th_mul(k, n, (n - 1) / 2);
            ans = sim_th_add(k, ans, sim_th_mul(k, tri, a / m));
            a %= m;
        }
        if (b >= m) {
            ans = sim_th_add(k, ans, sim_th_mul(k, n, b / m));
            b %= m;
        }
        uint64_t y_max = sim_th_add(k, sim_th_mul(k, a, n), b);
        if (y_max < m || k->overflow)
            return ans;
        n = y_max / m;
        b = y_max % m;
        uint64_t t = m;
        m = a;
        a = t;
    }
}

/* The sums over a block mask's visited tiles of B_r x B_c. A grid of more
 * than SIM_MAX_BMASK_TILES tiles is not summed (an overflow: the plan is not
 * countable, as a run refuses it). */
typedef struct {
    uint64_t pairs, rows, keys;   /* visited pairs; sum of their br_i; of their bc_j */
    double scores;                /* sum of br_i bc_j */
    uint64_t kv_blocks, kv_keys;  /* key blocks with a visited tile; their keys */
} visit_sums;

static visit_sums sums_of(chk *k, const sim_shape *sh, int64_t Br, int64_t Bc)
{
    visit_sums v = { 0, 0, 0, 0.0, 0, 0 };
    const int64_t N = sh->N, N_k = sim_shape_Nk(sh);
    const int64_t Tr = (N + Br - 1) / Br, Tc = (N_k + Bc - 1) / Bc;
    unsigned char *seen = NULL;
    if ((uint64_t)Tr * (uint64_t)Tc > SIM_MAX_BMASK_TILES ||
        !(seen = calloc((size_t)Tc, 1))) {
        k->overflow = 1;
        return v;
    }
    for (int64_t i = 0; i < Tr; i++) {
        const uint64_t br = (uint64_t)((i + 1) * Br < N ? Br : N - i * Br);
        const sim_range c = sim_block_js(sh, i, Br, Bc);   /* the causal band */
        for (int64_t j = c.lo; j <= c.hi; j++) {
            if (!sim_tile_visible(sh, i, j, Br, Bc))
                continue;
            const uint64_t bc = (uint64_t)((j + 1) * Bc < N_k ? Bc : N_k - j * Bc);
            v.pairs++;
            v.rows += br;
            v.keys += bc;
            v.scores += (double)br * (double)bc;
            if (!seen[j]) {
                seen[j] = 1;
                v.kv_blocks++;
                v.kv_keys += bc;
            }
        }
    }
    free(seen);
    return v;
}

/* Visited block pairs under the shape's mask: the sum over query blocks i of
 * the key blocks j_lo(i) .. j_hi(i) that block i sees (sim.h, "the mask").
 * With off = N_k - N and causal masking, block i < T_r - 1 ends at row
 * (i+1) B_r - 1, so j_hi(i) = floor((B_r i + B_r - 1 + off) / B_c), and the
 * last block sees up to key N_k - 1, j_hi = T_c - 1. A window W starts block
 * i at key B_r i + off - W + 1 when that is positive: j_lo(i) =
 * floor((B_r i + off - W + 1) / B_c) from the first such i, i_0, on. */
uint64_t sim_th_visited(chk *k, const sim_shape *sh, int64_t Br, int64_t Bc)
{
    const int64_t N = sh->N, N_k = sim_shape_Nk(sh), off = N_k - N, W = sh->window;
    const uint64_t Tr = (uint64_t)((N + Br - 1) / Br), Tc = (uint64_t)((N_k + Bc - 1) / Bc);
    if (sh->blocks)
        return sums_of(k, sh, Br, Bc).pairs;
    if (!sh->causal)
        return sim_th_mul(k, Tr, Tc);
    uint64_t s = sim_th_floor_sum(k, Tr - 1, (uint64_t)Bc, (uint64_t)Br, (uint64_t)(Br - 1 + off));
    s = sim_th_add(k, sim_th_add(k, s, Tr - 1), Tc);
    if (W > 0) {
        const int64_t first = off - W + 1;            /* row 0's first key, if >= 0 */
        const int64_t i0 = first >= 0 ? 0 : (-first + Br - 1) / Br;
        if ((uint64_t)i0 < Tr)
            s -= sim_th_floor_sum(k, Tr - (uint64_t)i0, (uint64_t)Bc, (uint64_t)Br,
                           (uint64_t)(Br * i0 + first));
    }
    return s;
}

uint64_t sim_theory_visited(const sim_shape *sh, int64_t Br, int64_t Bc)
{
    chk k = { 0 };
    uint64_t v = sim_th_visited(&k, sh, Br, Bc);
    return k.overflow ? UINT64_MAX : v;
}

uint64_t sim_theory_visited_blocks(int64_t N, int64_t Br, int64_t Bc, int causal)
{
    sim_shape sh = { .N = N, .d = 1, .M = 1, .dtype = SIM_FP32, .causal = causal };
    return sim_theory_visited(&sh, Br, Bc);
}

uint64_t sim_th_pair_rows(chk *k, const sim_plan *p, const sim_shape *sh, uint64_t *V_b)
{
    const uint64_t N = (uint64_t)sh->N, Br = (uint64_t)p->Br, Tr = (uint64_t)p->Tr;
    const uint64_t br_last = N - (Tr - 1) * Br;
    if (sh->blocks) {
        const visit_sums v = sums_of(k, sh, p->Br, p->Bc);
        *V_b = v.pairs;
        return v.rows;
    }
    *V_b = sim_th_visited(k, sh, p->Br, p->Bc);
    const sim_range js = sim_block_js(sh, p->Tr - 1, p->Br, p->Bc);
    return sim_th_mul(k, Br, *V_b) - (Br - br_last) * (uint64_t)(js.hi - js.lo + 1);
}

/* Each pair (i, j) holds br_i bc_j scores: B_c per query row of the pair,
 * less B_c - bc_last for each row of a pair with the last key block. Every
 * query block that visits key block T_c - 1 is a full B_r but the last
 * (which always visits it: the last query row sees the last key). */
double sim_th_pair_scores(chk *k, const sim_plan *p, const sim_shape *sh, uint64_t *rows)
{
    const uint64_t N = (uint64_t)sh->N, Br = (uint64_t)p->Br, Tr = (uint64_t)p->Tr;
    const uint64_t Bc = (uint64_t)p->Bc, Tc = (uint64_t)p->Tc;
    const uint64_t br_last = N - (Tr - 1) * Br;
    const uint64_t bc_last = (uint64_t)sim_shape_Nk(sh) - (Tc - 1) * Bc;
    uint64_t V_b;
    *rows = sim_th_pair_rows(k, p, sh, &V_b);
    if (sh->blocks)
        return sums_of(k, sh, p->Br, p->Bc).scores;
    const sim_range is = sim_block_is(sh, p->Tc - 1, p->Br, p->Bc);
    const double last_rows = (double)Br * (double)(is.hi - is.lo + 1) - (double)(Br - br_last);
    return (double)Bc * (double)*rows - (double)(Bc - bc_last) * last_rows;
}

uint64_t sim_th_kv_skip(const sim_plan *p, const sim_shape *sh)
{
    return (uint64_t)sim_block_js(sh, 0, p->Br, p->Bc).lo;
}

uint64_t sim_th_kv_seen(chk *k, const sim_plan *p, const sim_shape *sh, uint64_t *blocks)
{
    if (sh->blocks) {
        const visit_sums v = sums_of(k, sh, p->Br, p->Bc);
        *blocks = v.kv_blocks;
        return v.kv_keys;
    }
    const uint64_t j_skip = sim_th_kv_skip(p, sh);
    *blocks = (uint64_t)p->Tc - j_skip;
    return (uint64_t)sim_shape_Nk(sh) - j_skip * (uint64_t)p->Bc;
}

uint64_t sim_th_pair_keys(chk *k, const sim_plan *p, const sim_shape *sh)
{
    return sums_of(k, sh, p->Br, p->Bc).keys;
}

uint64_t sim_bwd_kv_counts(chk *k, const sim_plan *p, const sim_shape *sh, sim_counts *out,
                           uint64_t *blocks)
{
    const uint64_t kv = sim_th_mul(k, sim_th_kv_seen(k, p, sh, blocks), (uint64_t)sh->d);
    sim_th_put(out, SIM_K, SIM_RD, kv, *blocks, k);
    sim_th_put(out, SIM_V, SIM_RD, kv, *blocks, k);
    return kv;
}

/* Paged KV, one head. A load of key block j (keys c0 .. c1) of K or V
 * touches pages(j) = floor(c1 / P) - floor(c0 / P) + 1 pages: it reads their
 * table entries in one transfer (PT, 4 bytes each) and moves pages(j)
 * transfers of K or V instead of one, the same elements. n(j), the loads of
 * block j of K (and as many of V), follows from each loop order (its
 * kv_loads): T_r for standard attention (forward lines 1 and 3, backward
 * lines 2 and 4), SIM_KV_EVERY_I; once per key block some query sees for FA1
 * and the backward passes, SIM_KV_ONCE; once per visiting query block for
 * FA2's forward, split or not, SIM_KV_PER_VISIT (T_r without a mask).
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

static void paged(chk *k, const sim_loop *l, const sim_plan *p, const sim_shape *sh,
                  sim_counts *out)
{
    const uint64_t P = (uint64_t)p->run.page, N_k = (uint64_t)sim_shape_Nk(sh);
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
    if (l->kv_loads == SIM_KV_PER_VISIT && sh->causal) {
        const uint64_t j_lo = (uint64_t)sim_block_js(sh, 0, p->Br, p->Bc).lo;
        for (uint64_t j = j_lo; j < Tc; j++) {
            const sim_range is = sim_block_is(sh, (int64_t)j, p->Br, p->Bc);
            const uint64_t n = (uint64_t)(is.hi - is.lo + 1);
            const uint64_t pages = j + 1 < Tc ? pages_before(j + 1, Bc, P, q) -
                                                    pages_before(j, Bc, P, q)
                                              : last;
            loads = sim_th_add(k, loads, n);
            spans = sim_th_add(k, spans, sim_th_mul(k, n, pages));
        }
    } else {
        /* n(j) = n for the blocks j_lo .. T_c - 1 */
        const uint64_t n = l->kv_loads == SIM_KV_ONCE ? 1 : (uint64_t)p->Tr;
        const uint64_t j_lo = l->kv_loads == SIM_KV_EVERY_I ? 0 : sim_th_kv_skip(p, sh);
        const uint64_t pages = pages_before(Tc - 1, Bc, P, q) - pages_before(j_lo, Bc, P, q) +
                               last;
        loads = sim_th_mul(k, n, Tc - j_lo);
        spans = sim_th_mul(k, n, pages);
    }
    const uint64_t extra = spans - loads;               /* transfers beyond one per load */
    out->read_ops[SIM_K] = sim_th_add(k, out->read_ops[SIM_K], extra);
    out->read_ops[SIM_V] = sim_th_add(k, out->read_ops[SIM_V], extra);
    sim_th_put(out, SIM_PT, SIM_RD, sim_th_mul(k, 2, spans), sim_th_mul(k, 2, loads), k);
}

int sim_theory_counts(const sim_plan *p, const sim_shape *sh, sim_counts *out)
{
    chk k = { 0 };
    memset(out, 0, sizeof *out);
    const sim_loop *l = sim_loop_find(p->algo, &p->run);
    if (!l)
        return -1;
    l->counts(&k, p, sh, out);
    if (p->run.page > 0)
        paged(&k, l, p, sh, out);
    /* The whole batch: every head repeats its loop nest, so each count is the
     * one-head count times the heads that move the tensor: B H on the query
     * side, and for K and V B H too (each query head reads its key/value
     * head), or B G when a block takes a group's query heads together. */
    const uint64_t q_heads = sim_th_mul(&k, (uint64_t)sim_shape_B(sh), (uint64_t)sim_shape_H(sh));
    const uint64_t kv_reads = p->run.group ? sim_th_mul(&k, (uint64_t)sim_shape_B(sh),
                                               (uint64_t)sim_shape_G(sh))
                                        : q_heads;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        uint64_t f = (t == SIM_K || t == SIM_V || t == SIM_PT) ? kv_reads : q_heads;
        out->read_elems[t] = sim_th_mul(&k, out->read_elems[t], f);
        out->write_elems[t] = sim_th_mul(&k, out->write_elems[t], f);
        out->read_ops[t] = sim_th_mul(&k, out->read_ops[t], f);
        out->write_ops[t] = sim_th_mul(&k, out->write_ops[t], f);
    }
    /* GQA's backward (sim_gqa_grad): every query head's dK, dV went to
     * dK_exp, dV_exp; then each of the B G key/value heads reads its H/G
     * query heads' tiles, T_c blocks of B_c rows, and writes dK, dV once. */
    if (p->run.pass == SIM_BWD && sim_gqa_grad(sh, SIM_dK) == SIM_dKexp) {
        const uint64_t Nkd = sim_th_mul(&k, (uint64_t)sim_shape_Nk(sh), (uint64_t)sh->d);
        const uint64_t kv_heads = sim_th_mul(&k, (uint64_t)sim_shape_B(sh),
                                             (uint64_t)sim_shape_G(sh));
        const sim_tensor from[2] = { SIM_dKexp, SIM_dVexp }, to[2] = { SIM_dK, SIM_dV };
        for (int x = 0; x < 2; x++) {
            /* a loop order's counts that name dK_exp already stay */
            out->write_elems[from[x]] = sim_th_add(&k, out->write_elems[from[x]],
                                                   out->write_elems[to[x]]);
            out->write_ops[from[x]] = sim_th_add(&k, out->write_ops[from[x]],
                                                 out->write_ops[to[x]]);
            out->write_elems[to[x]] = out->write_ops[to[x]] = 0;
            sim_th_put(out, from[x], SIM_RD, sim_th_mul(&k, Nkd, q_heads),
                       sim_th_mul(&k, (uint64_t)p->Tc, q_heads), &k);
            sim_th_put(out, to[x], SIM_WR, sim_th_mul(&k, Nkd, kv_heads),
                       sim_th_mul(&k, (uint64_t)p->Tc, kv_heads), &k);
        }
    }
    /* The byte totals must fit too: elements times at most 4 bytes. */
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        (void)sim_th_mul(&k, out->read_elems[t], 4);
        (void)sim_th_mul(&k, out->write_elems[t], 4);
    }
    uint64_t total = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        total = sim_th_add(&k, sim_th_add(&k, total, out->read_elems[t]), out->write_elems[t]);
    (void)sim_th_mul(&k, total, 4);
    return k.overflow ? -1 : 0;
}

int sim_theory_steps(const sim_plan *p, const sim_shape *sh, uint64_t *steps)
{
    chk k = { 0 };
    const sim_loop *l = sim_loop_find(p->algo, &p->run);
    if (!l)
        return -1;
    /* Blocks of heads that each run the loop nest once (sim_run). */
    const uint64_t blocks = sim_th_mul(&k, (uint64_t)sim_shape_B(sh),
                                (uint64_t)(sim_shape_H(sh) / sim_run_hq(sh, &p->run)));
    *steps = sim_th_mul(&k, l->steps(&k, p, sh), blocks);
    return k.overflow ? -1 : 0;
}

int sim_theory_flops(const sim_plan *p, const sim_shape *sh, sim_flops *out)
{
    chk k = { 0 };
    out->matmul = out->other = 0.0;
    const sim_loop *l = sim_loop_find(p->algo, &p->run);
    if (!l || !l->flops)
        return -1;
    l->flops(&k, p, sh, out);
    /* Every query head does its own arithmetic, grouped or not: B H times
     * the one-head count. */
    const double heads = (double)sim_shape_B(sh) * (double)sim_shape_H(sh);
    out->matmul *= heads;
    out->other *= heads;
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
    /* Q, O, dO read and dQ written: 4 N d; K, V read and dK, dV written:
     * 4 N_k d. */
    b.io_floor_bwd = heads * 4.0 * (N + N_k) * d;
    b.in_regime = d <= b.M_elems && b.M_elems <= N_max * d;
    b.theta_sparse = sh->blocks && b.M_elems > 0
                         ? heads * (N_max * d + N * N_k * d * d * sim_bmask_s(sh->blocks) /
                                                    b.M_elems)
                         : b.theta_flash;
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
