/*
 * algo_fa3.c — FlashAttention-3's forward pass (Shah, Bikshandi, Zhang,
 * Thakkar, Ramani, Dao 2024, Algorithm 1): FA2's loop order run by a
 * warp-specialised thread block on Hopper.
 *
 * Loop order: Q blocks outer, K/V blocks inner, as FA2's forward
 * (algo_fa2.c): a producer warp(group) loads Q_i, then K_j, V_j into a ring
 * of s shared-memory stages with the TMA's asynchronous copies; two consumer
 * warpgroups (B_r / 2 rows of Q_i each) compute S = Q_i K_j^T, the online
 * softmax and O_i += P~ V_j with WGMMA, and release the stage. What moves
 * between HBM and SRAM, and the arithmetic, are FA2's forward's on the same
 * tiles: this file runs FA2's nest (sim_fa2_fwd_nest) and takes its closed
 * forms, marking its own pseudocode lines. The ring makes the plan hold s
 * key and value blocks at once (its SRAM), and the producer and consumer
 * split, the ping-pong between the consumers and the overlap of one block's
 * softmax with the next block's products are a matter of time: the GPU
 * model's (study/sim_gpu_fa3.c).
 *
 * Forward only, in fp16, bf16 or FP8 (e4m3, e5m2): FA3's kernels (hopper/
 * in the flash-attention repository) run no fp32; its backward is not
 * modelled (sim_run_opts_check refuses both, with the reason).
 *
 * Shapes: Q, O (N, d); K, V (N_k, d); L (N); Q_i, O_i (B_r, d); the ring
 * s x (B_c, d) for K and for V; S_ij (B_r, B_c); m_i, l_i (B_r).
 */
#include <stdio.h>

#include "sim_hier.h"
#include "sim_theory.h"

/* The pseudocode's lines the nest marks (fasim's numbering, in Algorithm
 * 1's order: the producer's lines, then the consumers'). */
enum {
    FA3_L3_LOAD_Q = 3,
    FA3_L6_LOAD_KV = 6,
    FA3_L8_INIT = 8,
    FA3_L10_SCORES = 10,
    FA3_L11_ONLINE = 11,
    FA3_L12_ACC = 12,
    FA3_L14_NORMALISE = 14,
    FA3_L15_LSE = 15,
    FA3_L16_WRITE_O = 16,
    FA3_L17_WRITE_L = 17,
    FA3_L18_RETURN = 18
};

static int fa3_run(sim_hier *h, const sim_plan *p)
{
    static const sim_fwd_lines FA3_LINES = {
        .load_q = FA3_L3_LOAD_Q, .init = FA3_L8_INIT, .load_kv = FA3_L6_LOAD_KV,
        .scores = FA3_L10_SCORES, .online = FA3_L11_ONLINE, .acc = FA3_L12_ACC,
        .normalise = FA3_L14_NORMALISE, .lse = FA3_L15_LSE, .write_o = FA3_L16_WRITE_O,
        .write_l = FA3_L17_WRITE_L, .ret = FA3_L18_RETURN,
    };
    return sim_fa2_fwd_nest(h, p, &FA3_LINES);
}

/* FA2's buffers, with the key and value blocks a ring of SIM_FA3_STAGES
 * stages each (sim_loop.h, with its source): the producer fills stage
 * j mod s while the consumers read the others. (The nest uses one stage at a time; the others are the room the
 * producer's copies run ahead into.) */
static void fa3_plan(sim_plan *p, const sim_shape *sh, int e)
{
    const int64_t Br = p->Br, Bc = p->Bc, d = sh->d;
    sim_plan_add(p, SIM_BUF_Q_i, 1, Br, d, e, "query block (line 3)");
    sim_plan_add(p, SIM_BUF_K_j, 1, SIM_FA3_STAGES * Bc, d, e,
                 "ring of 2 key blocks (line 6)");
    sim_plan_add(p, SIM_BUF_V_j, 1, SIM_FA3_STAGES * Bc, d, e,
                 "ring of 2 value blocks (line 6)");
    sim_plan_add(p, SIM_BUF_S_ij, 1, Br, Bc, 4, "scores, then P~ (lines 10-11)");
    sim_plan_add(p, SIM_BUF_O_i, 1, Br, d, 4, "fp32 output accumulator (line 12)");
    sim_plan_add(p, SIM_BUF_m_i, 1, Br, 1, 4, "running maxima; L_i at the end");
    sim_plan_add(p, SIM_BUF_l_i, 1, Br, 1, 4, "running sums");
    p->nphases = 1;
}

/* ---- the view's PIPELINE panel -------------------------------------------- */

/* What the thread block does at pseudocode line `line` of block pair
 * (i, j), after FA3's Algorithm 1 and its kernel's schedule (hopper/ of
 * flash-attention: the producer warp's TMA loads in mainloop_fwd_sm90, the
 * consumers' ping-pong and intra-warpgroup overlap). Blocks are numbered
 * from 1 as the pseudocode's (for j = 1 .. T_c), so block j's K_j, V_j sit
 * in stage j mod s of the ring (lines 5, 6):
 *   - the producer: before the loop, Q_i then K_1, V_1; K_{j+1}, V_{j+1}
 *     into stage (j+1) mod s once block j-1's stage is released, which is
 *     after GEMM1 of block j-1 (it reads V_{j-1}), run in both warpgroups'
 *     turns of block j: so from line 12 of block j, nothing after the
 *     last; the consumers wait at line 6 for their stage to fill;
 *   - the consumers, B_r / 2 rows each, ping-pong: WG1's turn on the tensor
 *     cores issues GEMM0 of block j (S = Q_i K_j^T), then GEMM1 of block j-1
 *     (O_i += P~ V_{j-1}), as FA3's Algorithm 2 and its kernel's mainloop
 *     order them, while WG2 runs its softmax of block j-1; then WG2's
 *     turn while WG1 runs its softmax of block j. So line 10 (S) is WG1's
 *     turn and line 11 (the softmax) WG2's; line 12's product runs in the
 *     next turn (after the loop for the last block). The first block has no
 *     block j-1: its turns hold GEMM0 alone.
 * The visited blocks of a causal or windowed mask (sim_block_js) bound the
 * loop; a block mask's holes are not skipped here. */
static int fa3_pipeline(const sim_plan *p, const sim_shape *sh, int line, int64_t i, int64_t j,
                        sim_pipe_row *rows)
{
    enum { S = SIM_FA3_STAGES };
    if (i < 0 || line == FA3_L18_RETURN)
        return 0;
    const sim_range js = sim_block_js(sh, i, p->Br, p->Bc);
    const long long first = (long long)js.lo + 1, last = (long long)js.hi + 1;
    const int64_t r0 = i * p->Br, r1 = sim_min64(r0 + p->Br, sh->N), half = p->Br / 2;
    /* the ring's stages in one row (what each holds), then the two
     * consumer warpgroups */
    enum { W = 96 };
    char st[S][W];
    for (int k = 0; k < S; k++)
        snprintf(st[k], W, "free");
    const int n = 3;
    sim_pipe_row *ring = &rows[0], *wg1 = &rows[1], *wg2 = &rows[2];
    snprintf(ring->who, sizeof ring->who, "SMEM stages");
    snprintf(wg1->who, sizeof wg1->who, "WG1 [%lld:%lld)", (long long)r0,
             (long long)sim_min64(r0 + half, r1));
    snprintf(wg2->who, sizeof wg2->who, "WG2 [%lld:%lld)", (long long)sim_min64(r0 + half, r1),
             (long long)r1);
    const long long b = (long long)j + 1;       /* block j, 1-based */
    if (j < 0 && (line == FA3_L3_LOAD_Q || line == FA3_L8_INIT)) {
        snprintf(st[first % S], W, "K_%lld V_%lld: producer filling (after Q_i)", first,
                 first);
        for (int w = 0; w < 2; w++)
            snprintf(rows[1 + w].what, sizeof rows[0].what, "%s",
                     line == FA3_L3_LOAD_Q ? "waits for Q_i"
                                           : "O_i = 0, l_i = 0, m_i = -inf on its rows");
    } else if (j < 0) {     /* the epilogue, lines 14-17 */
        if (line == FA3_L14_NORMALISE)
            snprintf(st[last % S], W, "K_%lld V_%lld: GEMM1 on V, then freed", last, last);
        for (int w = 0; w < 2; w++)
            snprintf(rows[1 + w].what, sizeof rows[0].what, "%s",
                     line == FA3_L14_NORMALISE
                         ? "GEMM1 of the last block (O_i += P~ V_j), then O_i / l_i"
                         : "epilogue: L_i = m_i + log l_i, O_i and L_i to HBM");
    } else {
        /* Block b's stage: its K, V land (line 6), GEMM0 reads K (lines
         * 10, 11), and V waits for GEMM1 of block b, which runs in the
         * warpgroups' turns of block b + 1 (the intra-warpgroup overlap):
         * the stage is freed only then, so during block b's turns the
         * other stage still holds block b - 1's V, and the producer fills
         * it with block b + 1 once both turns are done (line 12). */
        snprintf(st[b % S], W, "K_%lld V_%lld: %s", b, b,
                 line == FA3_L6_LOAD_KV ? "landing, awaited"
                 : line == FA3_L12_ACC  ? "V kept for GEMM1"
                                        : "GEMM0 on K");
        char *other = st[(b + 1) % S];
        if (b > first && line != FA3_L12_ACC)
            snprintf(other, W, "K_%lld V_%lld: %s", b - 1, b - 1,
                     line == FA3_L6_LOAD_KV ? "V kept for GEMM1" : "GEMM1 on V, then freed");
        else if (b < last && line != FA3_L6_LOAD_KV)
            snprintf(other, W, "K_%lld V_%lld: producer filling", b + 1, b + 1);
        else if (b == last)
            snprintf(other, W, "free, no block after");
    }
    int len = 0;
    for (int k = 0; k < S && len < (int)sizeof ring->what; k++)
        len += snprintf(ring->what + len, sizeof ring->what - (size_t)len, "%s%d: %s",
                        k ? "  " : "", k, st[k]);
    if (j < 0)
        return n;
    char turn[96];
    if (b == first)
        snprintf(turn, sizeof turn, "tensor cores: GEMM0 S = Q_i K_%lld^T (no block before)", b);
    else
        snprintf(turn, sizeof turn, "tensor cores: GEMM0 S = Q_i K_%lld^T, then GEMM1 "
                 "with V_%lld", b, b - 1);
    switch (line) {
    case FA3_L6_LOAD_KV: {
        char wait[96];
        snprintf(wait, sizeof wait, "waits for stage %lld to fill (K_%lld, V_%lld)", b % S, b,
                 b);
        snprintf(wg1->what, sizeof wg1->what, "%s", wait);
        /* WG2's softmax of the block before needs no K_j: it runs on */
        if (b == first)
            snprintf(wg2->what, sizeof wg2->what, "%s", wait);
        else
            snprintf(wg2->what, sizeof wg2->what, "softmax of block %lld (needs no K_%lld)",
                     b - 1, b);
        break;
    }
    case FA3_L10_SCORES:
        snprintf(wg1->what, sizeof wg1->what, "%s", turn);
        if (b == first)
            snprintf(wg2->what, sizeof wg2->what, "waits for its turn");
        else
            snprintf(wg2->what, sizeof wg2->what, "softmax of block %lld", b - 1);
        break;
    case FA3_L11_ONLINE:
        snprintf(wg1->what, sizeof wg1->what, "softmax of block %lld", b);
        snprintf(wg2->what, sizeof wg2->what, "%s", turn);
        break;
    default:                /* line 12 (lines 5 and 13 mark no step) */
        snprintf(wg1->what, sizeof wg1->what, "O_i += P~ V_%lld: in its next turn, %s", b,
                 b < last ? "after GEMM0 of the next block" : "after the loop");
        snprintf(wg2->what, sizeof wg2->what, "softmax of block %lld; its O_i += P~ V_%lld in "
                 "its next turn", b, b);
        break;
    }
    return n;
}

#define SO (SIM_VIEW_STATS | SIM_VIEW_OUT)
#define BA (SIM_VIEW_BEFORE | SIM_VIEW_AFTER)
#define FA3_DONE (SO | BA | SIM_VIEW_L_BEFORE | SIM_VIEW_L_AFTER | SIM_VIEW_NORM_BEFORE | \
                  SIM_VIEW_NORM_AFTER)

/* Each text with its indent fits 31 columns (sim_code_line). The view
 * flags are FA2's on the same steps (algo_fa2.c): Q_i arrives, the state is
 * initialised, K_j and V_j arrive, the online update, then O_i divided by
 * l_i and m_i turned into L_i. Lines 5 and 13, the ring's barriers, mark no
 * step of the two-level model: they are the GPU model's. */
static const sim_code_line FA3_CODE[] = {
    SIM_CODE(1, 0, "SMEM ring: s stages of K_j, V_j"),
    SIM_CODE(2, 0, "producer warp (TMA):"),
    { FA3_L3_LOAD_Q, 1, "load Q_i from HBM to SMEM", SO, SIM_HEAT_NONE,
      "line 3: Q_i arrives in SMEM; S_ij is computed at line 10", 0 },
    SIM_CODE(4, 1, "for j = 1 .. T_c:"),
    SIM_CODE(5, 2, "wait: stage j mod s free"),
    { FA3_L6_LOAD_KV, 2, "load K_j, V_j to stage", SO | BA | SIM_VIEW_ALPHA, SIM_HEAT_NONE,
      "line 6: K_j and V_j arrive; S_ij is computed at line 10", 0 },
    SIM_CODE(0, 2, "  j mod s, signal consumers"),
    SIM_CODE(7, 0, "2 consumer warpgroups:"),
    { FA3_L8_INIT, 1, "O_i = 0, l_i = 0, m_i = -inf", SO | SIM_VIEW_AFTER, SIM_HEAT_NONE,
      "line 8: O_i = 0, l_i = 0, m_i = -inf; no score tile yet", 0 },
    { 9, 1, "for j = 1 .. T_c:", SO | SIM_VIEW_AFTER, SIM_HEAT_NONE, NULL, 0 },
    { FA3_L10_SCORES, 2, "S = Q_i K_j^T (WGMMA)", SO | BA | SIM_VIEW_ALPHA, SIM_HEAT_S, NULL,
      0 },
    { FA3_L11_ONLINE, 2, "m_new = max(m_i, rowmax S)", SO | BA | SIM_VIEW_ALPHA,
      SIM_HEAT_P_RUNNING, NULL, 0 },
    SIM_CODE(0, 2, "P~ = exp(S - m_new)"),
    SIM_CODE(0, 2, "l_i = e^(m_i-m_new) l_i"),
    SIM_CODE(0, 2, "      + rowsum(P~)"),
    { FA3_L12_ACC, 2, "O_i = e^(m_i-m_new) O_i", SO | BA | SIM_VIEW_ALPHA, SIM_HEAT_P_RUNNING,
      NULL, 0 },
    SIM_CODE(0, 2, "      + P~ V_j (WGMMA)"),
    SIM_CODE(0, 2, "m_i = m_new"),
    { 13, 2, "release stage j mod s", SO | BA, SIM_HEAT_NONE, NULL, 0 },
    { FA3_L14_NORMALISE, 1, "O_i = diag(l_i)^-1 O_i", SO | BA | SIM_VIEW_NORM_AFTER,
      SIM_HEAT_NONE, "line 14: O_i = diag(l_i)^-1 O_i; no score tile", 0 },
    { FA3_L15_LSE, 1, "L_i = m_i + log(l_i)",
      SO | BA | SIM_VIEW_L_AFTER | SIM_VIEW_NORM_BEFORE | SIM_VIEW_NORM_AFTER, SIM_HEAT_NONE,
      "line 15: L_i = m_i + log l_i; no score tile", 0 },
    { FA3_L16_WRITE_O, 1, "write O_i to HBM", FA3_DONE, SIM_HEAT_WRITE, NULL, 0 },
    { FA3_L17_WRITE_L, 1, "write L_i to HBM", FA3_DONE, SIM_HEAT_WRITE, NULL, 0 },
    { FA3_L18_RETURN, 0, "return O, L", 0, SIM_HEAT_RETURN, NULL, 0 },
};

#define FA3_ALGO ((sim_algo)4)   /* after naive, fa1, fa2 and unfused */

static const sim_loop sim_loop_fa3 = {
    .algo = FA3_ALGO,
    .pass = SIM_FWD,
    .name = "fa3",
    .title = "FlashAttention-3 (Shah et al. 2024, Algorithm 1)",
    .code_title = "FlashAttention-3, Algorithm 1",
    .code = FA3_CODE,
    .ncode = (int)(sizeof FA3_CODE / sizeof FA3_CODE[0]),
    .flags = SIM_LOOP_OPT_IN | SIM_LOOP_NAMED_ONLY | SIM_LOOP_UNPAGED,
    .hbm = 1u << SIM_Q | 1u << SIM_K | 1u << SIM_V | 1u << SIM_O | 1u << SIM_L,
    .kv_loads = SIM_KV_PER_VISIT,
    .grid = SIM_GRID_ROWS,
    .warps = SIM_WARPS_SPLIT_Q,
    .prefetch = 1,
    .wgmma = 1,
    .dtypes = 1u << SIM_FP16 | 1u << SIM_BF16 | 1u << SIM_E4M3 | 1u << SIM_E5M2,
    .serves = "fa3 models FlashAttention-3's forward pass in fp16, bf16 or fp8 (e4m3, "
              "e5m2), as its Hopper kernels run it; fp32 and the backward are not modelled",
    .bound = SIM_BOUND_FLASH,
    .reread = SIM_BLOCK_R,
    .mark = '3',
    .mark_style = SIM_MARK_READ,
    .color = "#8e44ad",
    .plan = fa3_plan,
    .run = fa3_run,
    .counts = sim_fa2_fwd_counts,
    .steps = sim_fa2_fwd_steps,
    .flops = sim_fa2_fwd_flops,
    .rows_parallel = 1,
    .pipeline = fa3_pipeline,
};

int sim_fa3_register(void)
{
    sim_algo a;
    if (sim_algo_parse("fa3", &a) == 0)
        return (int)a;
    return sim_loop_register(&sim_loop_fa3) == 0 ? (int)FA3_ALGO : -1;
}
