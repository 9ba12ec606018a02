/*******************************************************************************
*
*   fasim lesson 12 - l2-bytes: the bytes the paper counts, the bytes DRAM sees
*
*   Level:     [★★★] 3/3 advanced                  Minutes: about 10
*
*   Goal:      set the two-level count of HBM traffic (what the papers'
*              theorems count) against the DRAM bytes of a GPU whose L2 is
*              shared by all its SMs, for GPT-2 medium's attention.
*   After it:  you can say why an L2 of 0 bytes gives the count back, what
*              an unbounded one leaves (each tensor read once, written once),
*              and which tensors the real L2 catches, and how often.
*
*   Options:   --algo A    fa2 (default) or fa1
*              --N N       sequence length, 16 to 32768 (default 1024)
*              --d D       head dimension: 64 (default) or 128
*              --heads H   query heads per sequence (default 16)
*              --batch B   sequences (default 64)
*              --gpu G     a100 (default), a100-40, h100, h100-pcie or h200
*              --l2 BYTES  the L2's size (default: the preset's)
*
*   Run:       fasim lesson l2-bytes --algo fa1 --l2 20M
*
*   Numbers:   the GPU model (study/sim_gpu_model.h) of the forward and the
*              backward pass, through lesson_gpu_model, with the preset's L2,
*              none, and an unbounded one; its per-tensor reads and hits.
*
*******************************************************************************/
#include <stdio.h>
#include <string.h>

#include "lesson.h"
#include "sim_gpu_model.h"
#include "sim_parse.h"

/* The FlashAttention paper (Dao et al. 2022), Figure 2 (left): GPT-2 medium,
 * forward and backward on an A100, FlashAttention's HBM traffic measured. */
#define FIG2_GB 4.4

enum { WITH_L2, NO_L2, UNBOUNDED, NL2 };

static uint64_t dram(const sim_gm_result r[2])
{
    return r[0].dram_read_bytes + r[0].dram_write_bytes + r[1].dram_read_bytes +
           r[1].dram_write_bytes;
}

static void run(lesson *L)
{
    /* ---- setup: options and inputs ------------------------------------ */
    sim_shape sh = { .dtype = SIM_FP16, .causal = 1 };   /* GPT-2 is a decoder */
    const char *an = lesson_opt_string(L, "algo", "fa2");
    sh.N = lesson_opt_int(L, "N", 1024, 16, 32768);
    sh.d = lesson_opt_int(L, "d", 64, 64, 128);
    sh.heads = lesson_opt_int(L, "heads", 16, 1, 256);
    sh.batch = lesson_opt_int(L, "batch", 64, 1, 256);
    const sim_gpu *g = lesson_gpu(L, lesson_opt_string(L, "gpu", "a100"));
    char l2_def[32];
    snprintf(l2_def, sizeof l2_def, "%llu", (unsigned long long)g->l2_bytes);
    const char *l2_text = lesson_opt_string(L, "l2", l2_def);
    if (!strcmp(l2_text, "inf"))
        lesson_fail(L, "--l2 inf: the lesson sets the L2 against an unbounded one itself "
                    "(step 4); give a size, e.g. 40M");
    const uint64_t l2 = lesson_opt_size(L, "l2", l2_def);
    sim_algo algo;
    if (sim_algo_parse(an, &algo) != 0 || (algo != SIM_FA1 && algo != SIM_FA2))
        lesson_fail(L, "--algo %s: use fa1 or fa2", sim_shown(an).s);
    if (sh.d != 64 && sh.d != 128)
        lesson_fail(L, "--d %lld: use 64 or 128, which both released kernels serve",
                    (long long)sh.d);
    const sim_gm_opts o[NL2] = { { .l2_bytes = l2, .l2_set = 1 },
                                 { .l2_bytes = 0, .l2_set = 1 },
                                 { .l2_bytes = SIM_GM_L2_INFINITE, .l2_set = 1 } };
    sim_gm_result r[NL2][2];
    for (int k = 0; k < NL2; k++)
        for (int q = 0; q < 2; q++)
            lesson_gpu_model(L, g, algo, (sim_pass)q, &sh, &o[k], NULL, &r[k][q]);
    const uint64_t counted = r[WITH_L2][0].hbm_read_bytes + r[WITH_L2][0].hbm_write_bytes +
                             r[WITH_L2][1].hbm_read_bytes + r[WITH_L2][1].hbm_write_bytes;
    const char *A = algo == SIM_FA1 ? "FA1" : "FA2";
    char b1[32], b2[32];

    /* ---- steps --------------------------------------------------------- */
    lesson_step(L, "What the paper counts");
    lesson_say(L, "GPT-2 medium's attention: B = %lld x H = %lld heads, N = %lld, d = %lld, "
               "causal (a decoder), fp16, forward and backward, %s as its released kernel launches it on the "
               "%s. The papers' theorems count the bytes between HBM and one block's "
               "SRAM, as if nothing sat between: fasim's two-level model.", (long long)sh.batch,
               (long long)sh.heads, (long long)sh.N, (long long)sh.d, A, g->title);
    lesson_askf(L, (double)counted / 1e9, "How many GB (10^9 B) does the two-level model "
                "count for %s, forward and backward?", A);
    lesson_say(L, "%s B = %.2f GB. The FlashAttention paper measured %.1f GB for this "
               "model on an A100 (Figure 2). A GPU has an L2 cache, %s on this one, shared "
               "by all %d SMs: a tile one block loaded may still be there when another "
               "asks for it.", lesson_num(counted), (double)counted / 1e9, FIG2_GB,
               (sim_format_bytes(b1, 32, g->l2_bytes), b1), g->sms);

    lesson_step(L, "No L2: the count, exactly");
    lesson_say(L, "With an L2 of 0 bytes every load goes to DRAM and every store is written "
               "back at once: DRAM sees %s B, the two-level count %s B.",
               lesson_num(dram(r[NO_L2])), lesson_num(counted));
    lesson_askf(L, (double)dram(r[NO_L2]) / (double)counted, "DRAM bytes over counted "
                "bytes, with no L2?");
    lesson_say(L, "The two-level model is the GPU without its L2 (fasim --l2 0).");

    lesson_step(L, "The L2 catches re-reads");
    sim_format_bytes(b1, 32, r[WITH_L2][0].l2_bytes);
    uint64_t rd = 0, hit = 0;
    for (int q = 0; q < 2; q++) {
        rd += r[WITH_L2][q].l2_read_bytes;
        for (int t = 0; t < SIM_TENSOR_COUNT; t++)
            hit += r[WITH_L2][q].hit_bytes[t];
    }
    lesson_askf(L, (double)hit / (double)rd, "With the %s L2, what fraction of the bytes "
                "%s reads hit in the L2?", b1, A);
    lesson_print(L, "  %-8s %14s %14s %8s\n", "tensor", "read, counted", "hit in L2", "hit");
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        const uint64_t tr = r[WITH_L2][0].read_bytes[t] + r[WITH_L2][1].read_bytes[t];
        const uint64_t th = r[WITH_L2][0].hit_bytes[t] + r[WITH_L2][1].hit_bytes[t];
        if (tr == 0)
            continue;
        sim_format_bytes(b1, 32, tr);
        sim_format_bytes(b2, 32, th);
        lesson_print(L, "  %-8s %14s %14s %7.1f%%\n", sim_tensor_name((sim_tensor)t), b1, b2,
                     100.0 * (double)th / (double)tr);
    }
    sim_format_bytes(b1, 32, dram(r[WITH_L2]));
    lesson_print(L, "  DRAM bytes, reads missed and writes: %s (%.2f GB)\n\n", b1,
                 (double)dram(r[WITH_L2]) / 1e9);
    lesson_say(L, "A hit is a tile another block loaded a moment before and the L2 still "
               "holds: blocks of the same head run side by side and read the same K_j, V_j "
               "(or Q_i, dO_i). A tensor read once, as %s's O, cannot hit.", A);

    lesson_step(L, "An unbounded L2: compulsory traffic");
    const double comp = (double)dram(r[UNBOUNDED]);
    lesson_askf(L, (double)dram(r[WITH_L2]) / comp, "DRAM bytes with the preset's L2 over "
                "DRAM bytes with an unbounded one?");
    lesson_say(L, "With an L2 that never evicts, each tile is read from DRAM once and "
               "written once: %s B (%.2f GB), the compulsory traffic, which no cache can "
               "lower.", lesson_num((uint64_t)comp), comp / 1e9);

    /* ---- summary ------------------------------------------------------- */
    lesson_step(L, "Summary");
    lesson_print(L, "  %s, forward + backward        GB\n", A);
    lesson_print(L, "  two-level count (no L2)  %8.2f\n", (double)counted / 1e9);
    lesson_print(L, "  DRAM, the preset's L2    %8.2f\n", (double)dram(r[WITH_L2]) / 1e9);
    lesson_print(L, "  DRAM, unbounded L2       %8.2f\n", comp / 1e9);
    lesson_print(L, "  measured, paper Fig. 2   %8.1f  (FlashAttention, A100)\n\n", FIG2_GB);
    lesson_say(L, "- The theorems count bytes as if each block had HBM to itself: that "
               "is DRAM with no L2.\n"
               "- A shared L2 turns re-reads by neighbouring blocks into hits; DRAM then "
               "sees misses and write-backs, between the count and the compulsory "
               "traffic.\n"
               "- A measured figure is DRAM's: compare it with the L2's line, not the "
               "count.");
}

const lesson_def lesson_l2_bytes = {
    "l2-bytes", 12, "The bytes the paper counts, the bytes DRAM sees", "advanced", 10,
    "two-level count vs DRAM through the L2",
    "--algo A    fa2 (default) or fa1\n"
    "--N N       sequence length, 16 to 32768 (default 1024)\n"
    "--d D       head dimension, 64 or 128 (default 64)\n"
    "--heads H   query heads per sequence, up to 256 (default 16)\n"
    "--batch B   sequences, up to 256 (default 64: GPT-2 medium's preset)\n"
    "--gpu G     a100 (default), a100-40, h100, h100-pcie or h200\n"
    "--l2 BYTES  the L2's size: 40M, 20MiB (default: the preset's); the\n"
    "            lesson compares it with no L2 and an unbounded one\n",
    run,
};
