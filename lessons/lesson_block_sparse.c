/*******************************************************************************
*
*   fasim lesson 13 - block-sparse: the traffic of a sparsity mask of blocks
*
*   Level:     [★★☆] 2/3 intermediate              Minutes: about 10
*
*   Goal:      count, for your N, block size and pattern, the nonzero blocks
*              of a block-sparse mask, the K and V that FA2 reads through
*              them, and Proposition 4's bound Theta(N d + N^2 d^2 s / M).
*   After it:  you can say what s is; count a band's nonzero blocks; say why
*              K and V shrink with s while Q and O do not; and say why the
*              bound keeps an N d term that s does not touch.
*
*   Options:   --N N         sequence length (default 1024)
*              --block B     the mask's blocks and the tiles, B x B (default 64)
*              --pattern P   local:K, strided:K, global:G,K or random:P
*                            (default local:1)
*              --d D         head dimension (default 64)
*              --M BYTES     SRAM, for the bound (default 96K)
*
*   Run:       fasim lesson block-sparse --N 2048 --pattern local:2
*
*   Numbers:   the mask from sim_bmask_pattern; HBM counts from
*              sim_theory_counts on the mask (sums over its visited tiles);
*              the bound from sim_theory_bounds.
*
*******************************************************************************/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lesson.h"
#include "sim_bmask.h"
#include "sim_parse.h"

/* FA2's closed-form counts on B x B tiles of sh (its mask, if any). */
static int fa2_counts(const sim_shape *sh, int64_t B, sim_counts *c)
{
    sim_plan p;
    return sim_plan_make(SIM_FA2, sh, NULL, B, B, SIM_PLAN_USER, &p) != 0
               ? -1
               : sim_theory_counts(&p, sh, c);
}

/* The mask's grid, one character a block: '#' nonzero, '.' zero. */
static void draw_mask(lesson *L, const sim_block_mask *b)
{
    for (int64_t i = 0; i < b->R; i++) {
        char row[80];
        for (int64_t j = 0; j < b->m.cols; j++)
            row[j] = b->m.bits[i * b->m.cols + j] ? '#' : '.';
        row[b->m.cols] = '\0';
        lesson_print(L, "    %s\n", row);
    }
    lesson_print(L, "\n");
}

static void run(lesson *L)
{
    /* ---- setup: options and the mask ----------------------------------- */
    sim_shape sh = { 0 };
    sh.N = lesson_opt_int(L, "N", 1024, 1, (int64_t)1 << 24);
    int64_t B = lesson_opt_int(L, "block", 64, 1, (int64_t)1 << 24);
    const char *pat = lesson_opt_string(L, "pattern", "local:1");
    sh.d = lesson_opt_int(L, "d", 64, 1, 4096);
    const char *m_text = lesson_opt_string(L, "M", "96K");
    sh.M = lesson_opt_size(L, "M", "96K");
    sh.dtype = SIM_FP16;
    B = B < sh.N ? B : sh.N;
    const int64_t T = (sh.N + B - 1) / B;
    if ((uint64_t)T * (uint64_t)T > SIM_MAX_BMASK_TILES)
        lesson_fail(L, "--N %lld with --block %lld: %lld x %lld blocks, more than the %llu "
                    "fasim maps; use a larger --block", (long long)sh.N, (long long)B,
                    (long long)T, (long long)T, (unsigned long long)SIM_MAX_BMASK_TILES);
    sim_block_mask bm;
    unsigned char *bits = NULL;
    char err[512];
    if (sim_bmask_pattern(pat, T, T, B, B, 1, &bm, &bits, err, sizeof err) != 0)
        lesson_fail(L, "--pattern: %s", err + (strncmp(err, "--block-mask ", 13) ? 0 : 13));
    sim_shape ms = sh;
    ms.blocks = &bm;
    if (sim_check(&ms, NULL, err, sizeof err) != 0) {
        free(bits);
        lesson_fail(L, "--pattern %s: %s", sim_shown(pat).s, err);
    }
    sim_counts dense, sparse;
    if (fa2_counts(&sh, B, &dense) != 0 || fa2_counts(&ms, B, &sparse) != 0) {
        free(bits);
        lesson_fail(L, "N = %lld, d = %lld: the counts overflow 64 bits", (long long)sh.N,
                    (long long)sh.d);
    }
    const double s = sim_bmask_s(&bm);
    const uint64_t all = (uint64_t)T * (uint64_t)T;

    /* ---- steps --------------------------------------------------------- */
    lesson_step(L, "What s is");
    lesson_say(L, "Block-sparse FlashAttention (Proposition 4 of the FlashAttention paper) "
               "takes a mask of blocks: S is cut into blocks of B_r x B_c scores, and a "
               "0 block is skipped whole. Here N = %lld in blocks of %lld x %lld: a "
               "%lld x %lld grid of %s blocks. s is the fraction of them that are 1.",
               (long long)sh.N, (long long)B, (long long)B, (long long)T, (long long)T,
               lesson_num(all));
    lesson_say(L, "local:K keeps the band |i - j| <= K, the blocks within K of the "
               "diagonal; strided:K the blocks whose distance from it is a multiple of K; "
               "global:G,K the first G block rows and columns and the band; random:P each "
               "block with probability P, and the diagonal. Your pattern is %s. A band of "
               "K blocks each side has 2K + 1 blocks in each block row, less those that "
               "would fall off the grid: (2K + 1) T - K (K + 1) for K < T.",
               sim_shown(pat).s);
    const lesson_question qn = { .answer = (double)bm.nonzero, .discrete = 1, .known = {
        { (double)T, 0, bm.nonzero != (uint64_t)T ? "That is the diagonal alone: the "
          "band has blocks on both sides of it, fewer near the corners." : NULL } } };
    lesson_ask_q(L, &qn, "How many of the %s blocks of %s are nonzero?", lesson_num(all),
                 sim_shown(pat).s);
    lesson_print(L, "  nonzero blocks: %s of %s, s = %.4f\n\n", lesson_num(bm.nonzero),
                 lesson_num(all), s);
    /* The picture on a step of its own, so that each fits a 24-line terminal. */
    if (T <= 16) {
        lesson_step(L, "The mask, drawn ('#' nonzero, '.' skipped)");
        draw_mask(L, &bm);
        lesson_say(L, "For a band, s is about (2K + 1) / T: it falls as N grows with the "
                   "band fixed.");
    }

    lesson_step(L, "The count against the nonzero blocks");
    lesson_say(L, "FA2 keeps Q_i, O_i, m_i, l_i on chip while it goes over the key blocks "
               "of row block i, and loads K_j, V_j once per block it visits. With the mask "
               "it visits only the nonzero blocks, so K and V are read B_c d per nonzero "
               "block (less at a short last block).");
    const uint64_t k_sparse = sparse.read_elems[SIM_K], k_dense = dense.read_elems[SIM_K];
    const lesson_question qk = { .answer = (double)k_sparse, .discrete = 1, .known = {
        { (double)k_dense, 0, "That is the dense count, T_r N d: every key block for "
          "every row block. The mask skips the zero blocks." } } };
    lesson_ask_q(L, &qk, "How many elements of K does FA2 read with this mask (d = %lld)?",
                 (long long)sh.d);
    lesson_print(L, "  %-18s %18s %18s\n", "", "dense", "block-sparse");
    lesson_print(L, "  %-18s %18s %18s\n", "K (and V) read", lesson_num(k_dense),
                 lesson_num(k_sparse));
    lesson_print(L, "  %-18s %18s %18s\n", "Q read", lesson_num(dense.read_elems[SIM_Q]),
                 lesson_num(sparse.read_elems[SIM_Q]));
    lesson_print(L, "  %-18s %18s %18s\n", "O written", lesson_num(dense.write_elems[SIM_O]),
                 lesson_num(sparse.write_elems[SIM_O]));
    lesson_print(L, "  %-18s %18s %18s\n\n", "all elements", lesson_num(sim_counts_elems(&dense)),
                 lesson_num(sim_counts_elems(&sparse)));
    lesson_say(L, "K and V shrink by the factor %.4f (%s / %s): s itself when B divides N, "
               "a little off it when a short last block is among the nonzero ones. Q, O and "
               "L do not shrink at all: every row block is read and written once whatever "
               "the mask.", (double)k_sparse / (double)k_dense, lesson_num(k_sparse),
               lesson_num(k_dense));

    lesson_step(L, "Proposition 4's bound");
    const sim_bounds bd = sim_theory_bounds(&ms);
    lesson_say(L, "Theorem 2 bounds FlashAttention's traffic by Theta(N^2 d^2 / M) "
               "elements, M the SRAM in elements (M = %s here). Proposition 4 bounds "
               "block-sparse FlashAttention by Theta(N d + N^2 d^2 s / M): the N^2 part is "
               "scaled by s, and N d (reading Q and writing O once) stays.",
               lesson_num((uint64_t)bd.M_elems));
    const lesson_question qb = { .answer = bd.theta_sparse, .tol = 0.01, .known = {
        { bd.theta_flash * s, 0, "That is Theorem 2's expression times s: the N d term "
          "is missing. Q and O still move once, whatever s is." } } };
    lesson_ask_q(L, &qb, "What is N d + N^2 d^2 s / M here?");
    lesson_print(L, "  Theorem 2:     N^2 d^2 / M         = %s\n",
                 lesson_num((uint64_t)(bd.theta_flash + 0.5)));
    lesson_print(L, "  Proposition 4: N d + N^2 d^2 s / M = %s\n",
                 lesson_num((uint64_t)(bd.theta_sparse + 0.5)));
    lesson_print(L, "  FA2 measured:                      %s, %.2f x the bound\n\n",
                 lesson_num(sim_counts_elems(&sparse)),
                 (double)sim_counts_elems(&sparse) / bd.theta_sparse);

    lesson_step(L, "Why the bound scales with s");
    lesson_say(L, "FA2's traffic is Q in and O, L out once (about 2 N d), plus K and V at "
               "every visited block: 2 B_c d per nonzero block, 2 s T^2 B d in all. With "
               "B near M / 4d, T^2 B d = N^2 d / B is about N^2 d^2 / M: the s-scaled term "
               "of the bound. Bands of K blocks on this N:");
    lesson_print(L, "  %8s %10s %18s %12s\n", "pattern", "s", "FA2 elements", "/ dense");
    for (int64_t K = 0; K < T && K <= 64; K = K ? 2 * K : 1) {
        char name[32];
        snprintf(name, sizeof name, "local:%lld", (long long)K);
        sim_block_mask b2;
        unsigned char *bits2 = NULL;
        sim_counts c2;
        sim_shape s2 = sh;
        if (sim_bmask_pattern(name, T, T, B, B, 1, &b2, &bits2, err, sizeof err) != 0)
            break;
        s2.blocks = &b2;
        if (fa2_counts(&s2, B, &c2) == 0)
            lesson_print(L, "  %8s %10.4f %18s %12.4f\n", name, sim_bmask_s(&b2),
                         lesson_num(sim_counts_elems(&c2)),
                         (double)sim_counts_elems(&c2) / (double)sim_counts_elems(&dense));
        free(bits2);
    }
    lesson_print(L, "  %8s %10.4f %18s %12.4f\n\n", "dense", 1.0,
                 lesson_num(sim_counts_elems(&dense)), 1.0);
    lesson_say(L, "The ratio to dense follows s down until the N d of Q and O, which no "
               "mask removes, is most of what is left: that is the bound's first term.");

    /* ---- summary ------------------------------------------------------- */
    lesson_step(L, "Summary");
    lesson_say(L, "- s is the fraction of the mask's blocks that are 1: %s of %s here, "
               "s = %.4f.\n"
               "- FA2 reads K and V at the nonzero blocks only: s times the dense %s "
               "elements of each.\n"
               "- Q, O and L move once whatever the mask, so Proposition 4's bound is "
               "N d + N^2 d^2 s / M, not s N^2 d^2 / M.\n"
               "- `fasim --block-mask %s --N %lld --d %lld --M %s --Br %lld --Bc %lld%s` "
               "counts the same run, tensor by tensor.",
               lesson_num(bm.nonzero), lesson_num(all), s, lesson_num(k_dense),
               sim_shown(pat).s, (long long)sh.N, (long long)sh.d, m_text, (long long)B,
               (long long)B, strncmp(pat, "random:", 7) ? "" : " --seed 1");
    free(bits);
}

const lesson_def lesson_block_sparse = {
    "block-sparse", 13, "Block-sparse attention: s and Proposition 4", "intermediate", 10,
    "a mask of blocks: s and Proposition 4",
    "--N N         sequence length, up to 2^24 (default 1024)\n"
    "--block B     blocks and tiles B x B, up to 2^24 (default 64)\n"
    "--pattern P   local:K, strided:K, global:G,K or random:P (default local:1)\n"
    "--d D         head dimension, up to 4096 (default 64)\n"
    "--M BYTES     SRAM for the bound (default 96K)\n",
    run,
};
