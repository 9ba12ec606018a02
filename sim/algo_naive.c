/*
 * algo_naive.c — standard attention (FlashAttention paper, Algorithm 0), with
 * its line numbers in the comments:
 *
 *   1: Load Q, K by blocks from HBM, compute S = Q K^T, write S to HBM.
 *   2: Read S from HBM, compute P = softmax(S), write P to HBM.
 *   3: Load P and V by blocks from HBM, compute O = P V, write O to HBM.
 *
 * The matrix products are tiled (B_r x B_c) so that SRAM is respected. The
 * softmax takes the form the run asks (sim_softmax). By default it reads whole
 * rows of S when one fits in SRAM (one pass); otherwise it makes the two
 * passes over tiles that real softmax kernels make, with the online
 * normaliser of Milakov and Gimelshein (2018): the first computes each row's
 * m and l together, rescaling l whenever m grows, the second writes
 * P = exp(S - m) / l. The three passes of the textbook form (row maxima, row
 * sums, normalise) stay one option away. One pass and three give the same
 * bits (the sum runs over the row in the same order); two passes round l
 * differently (it is rescaled as m grows), within the oracle's tolerance.
 * With causal masking, S and P are still materialised in full (masked scores
 * are -inf, their probabilities 0), as standard implementations do.
 *
 * S and P are stored in the run's dtype, as the standard implementation does;
 * that rounding is part of why its error is larger than FlashAttention's.
 *
 * Shapes: Q, O (N, d); K, V (N_k, d); S, P (N, N_k); Q_i, O_i (B_r, d); K_j,
 * V_j (B_c, d); S_ij, P_ij (B_r, B_c); S_rows (B_s, N_k). Row-major. N_k = N
 * unless the keys are longer (decoding); masked scores follow sim.h's mask.
 */
#include "sim_hier.h"
#include "sim_theory.h"

/* Algorithm 0's lines, as the loop nest marks them. */
enum {
    NAIVE_L1_SCORES = 1,
    NAIVE_L2_SOFTMAX = 2,
    NAIVE_L3_OUTPUT = 3,
    NAIVE_L4_RETURN = 4
};

/* Line 1: S = scale * Q K^T, tile by tile. */
static int line1_scores(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc;
    float *Q_i = sim_sram_take(h, p, 1, SIM_BUF_Q_i);
    float *K_j = sim_sram_take(h, p, 1, SIM_BUF_K_j);
    float *S_ij = sim_sram_take(h, p, 1, SIM_BUF_S_ij);
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        sim_at(h, NAIVE_L1_SCORES, i, -1);
        sim_load(h, SIM_Q, SIM_BUF_Q_i, Q_i, r0, 0, br, d);
        for (int64_t j = 0; j < p->Tc; j++) {
            const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
            sim_at(h, NAIVE_L1_SCORES, i, j);
            sim_load(h, SIM_K, SIM_BUF_K_j, K_j, c0, 0, bc, d);
            h->steps++;
            if (h->compute) {
                ref_simd_scores(Q_i, K_j, (int)br, (int)bc, (int)d, h->scale, S_ij);
                sim_mask_tile(h, S_ij, br, bc, r0, c0);
            }
            sim_store(h, SIM_S, SIM_BUF_S_ij, S_ij, r0, c0, br, bc);
        }
    }
    sim_sram_release_all(h);
    return 0;
}

/* Line 2, one pass: B_s whole rows of S at a time. */
static int line2_rows(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), B_s = p->Bs_r;
    float *S_rows = sim_sram_take(h, p, 2, SIM_BUF_S_rows);
    float *m = sim_sram_take(h, p, 2, SIM_BUF_m);
    float *l = sim_sram_take(h, p, 2, SIM_BUF_l);
    if (h->failed)
        return -1;
    for (int64_t i = 0; i * B_s < N; i++) {
        const int64_t r0 = i * B_s, rows = sim_min64(B_s, N - r0);
        sim_at(h, NAIVE_L2_SOFTMAX, i, -1);
        sim_load(h, SIM_S, SIM_BUF_S_rows, S_rows, r0, 0, rows, N_k);
        h->steps++;
        if (h->compute) {
            for (int64_t r = 0; r < rows; r++) {
                float *s = S_rows + r * N_k;
                m[r] = ref_row_max(s, (int)N_k);
                l[r] = ref_simd_exp_shift_sum(s, (int)N_k, m[r]);
                float inv_l = 1.0f / l[r];
                for (int64_t c = 0; c < N_k; c++)
                    s[c] = s[c] * inv_l;
            }
        }
        sim_store(h, SIM_P, SIM_BUF_S_rows, S_rows, r0, 0, rows, N_k);
    }
    sim_sram_release_all(h);
    return 0;
}

/* Line 2, two or three passes (p->softmax_passes) over B_r x B_c tiles.
 * Two: the online normaliser, m_i and l_i of each row together (l_i
 * rescaled by exp(m_old - m_new) as m_i grows, ref_online_step), then P.
 * Three: row maxima, row sums against them, then P. */
static int line2_tiles(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), B_r = p->Br, B_c = p->Bc;
    float *S_ij = sim_sram_take(h, p, 2, SIM_BUF_S_ij);
    float *m_i = sim_sram_take(h, p, 2, SIM_BUF_m_i);
    float *l_i = sim_sram_take(h, p, 2, SIM_BUF_l_i);
    if (h->failed)
        return -1;
    const int passes = p->softmax_passes;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        for (int pass = 1; pass <= passes; pass++) {
            if (h->compute && pass == 1)
                for (int64_t r = 0; r < br; r++) {
                    m_i[r] = -REF_INF;
                    l_i[r] = 0.0f;
                }
            for (int64_t j = 0; j < p->Tc; j++) {
                const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
                sim_at(h, NAIVE_L2_SOFTMAX, i, j);
                sim_load(h, SIM_S, SIM_BUF_S_ij, S_ij, r0, c0, br, bc);
                h->steps++;
                if (h->compute) {
                    for (int64_t r = 0; r < br; r++) {
                        float *s = S_ij + r * bc;
                        if (pass == passes) {        /* normalise */
                            ref_simd_exp_normalise(s, s, (int)bc, m_i[r], 1.0f / l_i[r]);
                        } else if (passes == 2) {    /* m and l online; s is read again */
                            ref_simd_online_step(s, (int)bc, &m_i[r], &l_i[r]);
                        } else if (pass == 1) {      /* row maxima */
                            float mb = ref_row_max(s, (int)bc);
                            m_i[r] = mb > m_i[r] ? mb : m_i[r];
                        } else {                     /* row sums against the max */
                            l_i[r] = ref_exp_sum(s, (int)bc, m_i[r], l_i[r]);
                        }
                    }
                }
                if (pass == passes)
                    sim_store(h, SIM_P, SIM_BUF_S_ij, S_ij, r0, c0, br, bc);
            }
        }
    }
    sim_sram_release_all(h);
    return 0;
}

/* Line 3: O = P V, tile by tile, accumulated in fp32 on chip. */
static int line3_output(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    const int64_t B_r = p->Br, B_c = p->Bc;
    float *P_ij = sim_sram_take(h, p, 3, SIM_BUF_P_ij);
    float *V_j = sim_sram_take(h, p, 3, SIM_BUF_V_j);
    float *O_i = sim_sram_take(h, p, 3, SIM_BUF_O_i);
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * B_r, br = sim_min64(B_r, N - r0);
        sim_at(h, NAIVE_L3_OUTPUT, i, -1);
        if (h->compute)
            for (int64_t x = 0; x < br * d; x++)
                O_i[x] = 0.0f;
        for (int64_t j = 0; j < p->Tc; j++) {
            const int64_t c0 = j * B_c, bc = sim_min64(B_c, N_k - c0);
            sim_at(h, NAIVE_L3_OUTPUT, i, j);
            sim_load(h, SIM_P, SIM_BUF_P_ij, P_ij, r0, c0, br, bc);
            sim_load(h, SIM_V, SIM_BUF_V_j, V_j, c0, 0, bc, d);
            h->steps++;
            if (h->compute)
                ref_simd_pv_acc(O_i, (int)d, NULL, P_ij, V_j, (int)br, (int)bc);
        }
        sim_store(h, SIM_O, SIM_BUF_O_i, O_i, r0, 0, br, d);
    }
    sim_sram_release_all(h);
    return 0;
}

static int naive_run(sim_hier *h, const sim_plan *p)
{
    if (line1_scores(h, p) != 0)
        return -1;
    if ((p->softmax_passes == 1 ? line2_rows(h, p) : line2_tiles(h, p)) != 0)
        return -1;
    if (line3_output(h, p) != 0)
        return -1;
    sim_at(h, NAIVE_L4_RETURN, -1, -1);                                        /* 4: return O */
    return 0;
}

static void naive_plan(sim_plan *p, const sim_shape *sh, int e)
{
    const int64_t N_k = sim_shape_Nk(sh), d = sh->d, Br = p->Br, Bc = p->Bc;
    /* Algorithm 0, line 1: S = Q K^T, tiled. */
    sim_plan_add(p, SIM_BUF_Q_i, 1, Br, d, e, "query block");
    sim_plan_add(p, SIM_BUF_K_j, 1, Bc, d, e, "key block");
    sim_plan_add(p, SIM_BUF_S_ij, 1, Br, Bc, 4, "fp32 accumulator of Q_i K_j^T");
    /* Line 2: P = softmax(S), of the form the run asks (sim_naive_softmax):
     * one pass over B_s whole rows of S in fp32 plus their m and l (read S
     * once), or two or three over tiles. A one-pass plan whose row does not
     * fit keeps one row, so that it does not fit either. */
    const int64_t B_s = sim_plan_rows(sh, 4, 8);
    p->softmax_passes = sim_naive_softmax(p->run.softmax, B_s);
    if (p->softmax_passes == 1) {
        p->Bs_r = B_s > 0 ? B_s : 1;
        sim_plan_add(p, SIM_BUF_S_rows, 2, p->Bs_r, N_k, 4,
                     "whole rows of S, fp32; P in place");
        sim_plan_add(p, SIM_BUF_m, 2, p->Bs_r, 1, 4, "row maxima");
        sim_plan_add(p, SIM_BUF_l, 2, p->Bs_r, 1, 4, "row sums");
    } else {
        sim_plan_add(p, SIM_BUF_S_ij, 2, Br, Bc, 4, "tile of S, fp32; P in place");
        sim_plan_add(p, SIM_BUF_m_i, 2, Br, 1, 4, "row maxima");
        sim_plan_add(p, SIM_BUF_l_i, 2, Br, 1, 4, "row sums");
    }
    /* Line 3: O = P V, tiled. */
    sim_plan_add(p, SIM_BUF_P_ij, 3, Br, Bc, e, "tile of P");
    sim_plan_add(p, SIM_BUF_V_j, 3, Bc, d, e, "value block");
    sim_plan_add(p, SIM_BUF_O_i, 3, Br, d, 4, "fp32 accumulator of P V");
    p->nphases = 3;
}

/* N N_k only in standard attention: FA1 and FA2 never move an N x N_k
 * tensor, and their counts stay representable long after N^2 leaves 64
 * bits. */
static void naive_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_counts *out)
{
    const uint64_t N = (uint64_t)sh->N, N_k = (uint64_t)sim_shape_Nk(sh), d = (uint64_t)sh->d;
    const uint64_t Tr = (uint64_t)p->Tr, Tc = (uint64_t)p->Tc;
    const uint64_t Nd = sim_th_mul(k, N, d), Nkd = sim_th_mul(k, N_k, d);
    const uint64_t TT = sim_th_mul(k, Tr, Tc), NN = sim_th_mul(k, N, N_k);
    /* Line 1: for i { load Q_i; for j { load K_j; store S_ij } } */
    sim_th_put(out, SIM_Q, SIM_RD, Nd, Tr, k);
    sim_th_put(out, SIM_K, SIM_RD, sim_th_mul(k, Tr, Nkd), TT, k);
    sim_th_put(out, SIM_S, SIM_WR, NN, TT, k);
    /* Line 2: softmax, 1 pass over whole rows or 2 or 3 passes over tiles,
     * each reading S; the last writes P */
    if (p->softmax_passes == 1) {
        uint64_t T_s = (N + (uint64_t)p->Bs_r - 1) / (uint64_t)p->Bs_r;
        sim_th_put(out, SIM_S, SIM_RD, NN, T_s, k);
        sim_th_put(out, SIM_P, SIM_WR, NN, T_s, k);
    } else {
        const uint64_t passes = (uint64_t)p->softmax_passes;
        sim_th_put(out, SIM_S, SIM_RD, sim_th_mul(k, passes, NN), sim_th_mul(k, passes, TT), k);
        sim_th_put(out, SIM_P, SIM_WR, NN, TT, k);
    }
    /* Line 3: for i { for j { load P_ij; load V_j } store O_i } */
    sim_th_put(out, SIM_P, SIM_RD, NN, TT, k);
    sim_th_put(out, SIM_V, SIM_RD, sim_th_mul(k, Tr, Nkd), TT, k);
    sim_th_put(out, SIM_O, SIM_WR, Nd, Tr, k);
}

int sim_naive_softmax(sim_softmax f, int64_t B_s)
{
    switch (f) {
    case SIM_SOFTMAX_1PASS: return 1;
    case SIM_SOFTMAX_2PASS: return 2;
    case SIM_SOFTMAX_3PASS: return 3;
    default: return B_s > 0 ? 1 : 2;
    }
}

uint64_t sim_naive_steps(sim_chk *k, const sim_plan *p, const sim_shape *sh, int tiled_lines)
{
    const uint64_t TT = sim_th_mul(k, (uint64_t)p->Tr, (uint64_t)p->Tc);
    const uint64_t sm = p->softmax_passes == 1
                            ? ((uint64_t)sh->N + (uint64_t)p->Bs_r - 1) / (uint64_t)p->Bs_r
                            : sim_th_mul(k, (uint64_t)p->softmax_passes, TT);
    return sim_th_add(k, sim_th_mul(k, (uint64_t)tiled_lines, TT), sm);
}

/* Lines 1 and 3 tile by tile, line 2 in 1, 2 or 3 passes. */
static uint64_t naive_steps(sim_chk *k, const sim_plan *p, const sim_shape *sh)
{
    return sim_naive_steps(k, p, sh, 2);
}

/* Every score, masked or not (sim_loop.flops's convention). Lines 1 and 3:
 * S = Q K^T and O = P V, 2 N N_k d each. Line 2 per row of N_k scores: in
 * one pass rowmax (N_k), exp(s - m) (2 N_k), rowsum (N_k) and the division
 * by l (N_k); in three passes over tiles the maxima (N_k), then exp(s - m)
 * and its sum (3 N_k), then exp(s - m) again and the division (3 N_k). In
 * two, the first is FA2's line 9 on each of a row's T_c tiles of b_c
 * scores: m_new = max(m, rowmax) (b_c + 1), exp(s - m_new) (2 b_c),
 * l = e^(m - m_new) l + rowsum (b_c + 4), so 4 N_k + 5 T_c per row; the
 * second as three's third (3 N_k). */
static void naive_flops(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_flops *out)
{
    (void)k;
    const double NN = (double)sh->N * (double)sim_shape_Nk(sh);
    out->matmul = 4.0 * (double)sh->d * NN;
    out->other = p->softmax_passes == 1   ? 5.0 * NN
                 : p->softmax_passes == 2 ? 7.0 * NN + 5.0 * (double)sh->N * (double)p->Tc
                                          : 7.0 * NN;
}

/* The tiles in hand at each line, outlined by a view: line 1 works on Q, K
 * and S, line 2 on S and P, line 3 on P, V and O (the statistics' rows
 * always). Its backward (algo_naive_bwd.c) outlines the same. */
#define NAIVE_STATS (1u << SIM_m | 1u << SIM_l | 1u << SIM_L)
#define NAIVE_TILES_1 (NAIVE_STATS | 1u << SIM_Q | 1u << SIM_K | 1u << SIM_S)
#define NAIVE_TILES_2 (NAIVE_STATS | 1u << SIM_S | 1u << SIM_P)
#define NAIVE_TILES_3 (NAIVE_STATS | 1u << SIM_O | 1u << SIM_V | 1u << SIM_P)

static const sim_code_line NAIVE_CODE[] = {
    { NAIVE_L1_SCORES, 0, "load Q_i, K_j by blocks,", 0, SIM_HEAT_S,
      "line 1: Q_i arrives; the tiles S_ij follow", NAIVE_TILES_1 },
    SIM_CODE(0, 0, "  S = Q K^T, write S to HBM"),
    /* two or three passes: m_i, l_i are initialised before the first
     * tile; one pass: computed from scratch for each block of rows */
    { NAIVE_L2_SOFTMAX, 0, "read S, P = softmax(S),",
      SIM_VIEW_STATS | SIM_VIEW_AFTER | SIM_VIEW_BEFORE_TILED | SIM_VIEW_SOFTMAX,
      SIM_HEAT_SOFTMAX, NULL, NAIVE_TILES_2 },
    SIM_CODE(0, 0, "  write P to HBM"),
    { NAIVE_L3_OUTPUT, 0, "load P_ij, V_j by blocks,",
      SIM_VIEW_OUT | SIM_VIEW_AFTER | SIM_VIEW_BEFORE_IN_J | SIM_VIEW_NORM_BEFORE |
          SIM_VIEW_NORM_AFTER, SIM_HEAT_P_STORED,
      "line 3: O_i = 0 on chip; the tiles P_ij follow", NAIVE_TILES_3 },
    SIM_CODE(0, 0, "  O = P V, write O to HBM"),
    { NAIVE_L4_RETURN, 0, "return O", 0, SIM_HEAT_RETURN, NULL, 0 },
};

const sim_loop sim_loop_naive = {
    .algo = SIM_NAIVE,
    .pass = SIM_FWD,
    .name = "naive",
    .title = "standard attention (FlashAttention paper, Algorithm 0)",
    .code_title = "standard attention, Algorithm 0",
    .code = NAIVE_CODE,
    .ncode = (int)(sizeof NAIVE_CODE / sizeof NAIVE_CODE[0]),
    .flags = SIM_LOOP_LINE_BLOCKS | SIM_LOOP_TILE_S,
    .hbm = 1u << SIM_Q | 1u << SIM_K | 1u << SIM_V | 1u << SIM_O | 1u << SIM_S | 1u << SIM_P,
    .kv_loads = SIM_KV_EVERY_I,
    .grid = SIM_GRID_PER_LINE,
    .prefetch = 1,
    .bound = SIM_BOUND_STANDARD,
    .reread = SIM_BLOCK_R,
    .mark = 'n',
    .mark_style = SIM_MARK_WRITTEN,
    .color = "#c0392b",
    .plan = naive_plan,
    .run = naive_run,
    .counts = naive_counts,
    .steps = naive_steps,
    .flops = naive_flops,
    .softmax_forms = 1,
};
