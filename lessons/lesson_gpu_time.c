/*******************************************************************************
*
*   fasim lesson 11 - gpu-time: why FA2 is faster than FA1 in time
*
*   Level:     [★★★] 3/3 advanced                  Minutes: about 12
*
*   Goal:      put FA1 and FA2 on a whole GPU, as their released kernels
*              launch, and see where time goes when bytes do not explain it.
*   After it:  you can count the thread blocks each kernel launches, say how
*              many SMs they keep busy and in how many waves; and say why the
*              work that is not a matrix product costs more than its FLOPs.
*
*   Options:   --N N       sequence length, 16 to 32768 (default 1024)
*              --d D       head dimension: 64 or 128 (default 64)
*              --heads H   query heads per sequence (default 16)
*              --batch B   sequences (default 1)
*              --gpu G     a100 (default), a100-40, h100, h100-pcie or h200
*
*   Run:       fasim lesson gpu-time --N 4096 --heads 32
*
*   Numbers:   the GPU model (study/sim_gpu_model.h) of each loop order's
*              forward and backward pass, through lesson_gpu_model: blocks,
*              waves, SMs busy, DRAM bytes, time; the FLOPs of a tile step
*              from sim_theory_flops and the preset's rates.
*
*******************************************************************************/
#include <stdio.h>

#include "lesson.h"
#include "sim_gpu_model.h"

static const char *us(char *b, size_t n, double s)
{
    snprintf(b, n, "%.1f us", s * 1e6);
    return b;
}

/* The row of one quantity for FA1 fwd, FA1 bwd, FA2 fwd, FA2 bwd. */
static void row4(lesson *L, const char *label, const char *const v[4])
{
    lesson_print(L, "  %-16s %12s %12s %12s %12s\n", label, v[0], v[1], v[2], v[3]);
}

static void header(lesson *L)
{
    lesson_print(L, "  %-16s %12s %12s %12s %12s\n", "", "FA1 fwd", "FA1 bwd", "FA2 fwd",
                 "FA2 bwd");
}

/* Non-matmul FLOPs a score of plan p: the closed form's, over the scores
 * its products compute (4 d FLOPs each: Q K^T and P V). */
static double other_per_score(const sim_plan *p, const sim_shape *sh)
{
    sim_flops f;
    sim_theory_flops(p, sh, &f);
    return f.other / (f.matmul / (4.0 * (double)sh->d));
}

static void run(lesson *L)
{
    /* ---- setup: options and inputs ------------------------------------ */
    sim_shape sh = { .dtype = SIM_FP16 };
    sh.N = lesson_opt_int(L, "N", 1024, 16, 32768);
    sh.d = lesson_opt_int(L, "d", 64, 64, 128);
    sh.heads = lesson_opt_int(L, "heads", 16, 1, 256);
    sh.batch = lesson_opt_int(L, "batch", 1, 1, 256);
    const sim_gpu *g = lesson_gpu(L, lesson_opt_string(L, "gpu", "a100"));
    if (sh.d != 64 && sh.d != 128)
        lesson_fail(L, "--d %lld: the lesson compares d = 64 or 128, which both released "
                    "kernels serve", (long long)sh.d);
    const int64_t BH = sh.batch * sh.heads;
    sim_plan p[2][2];
    sim_gm_result r[2][2];                    /* [FA1, FA2][fwd, bwd] */
    for (int a = 0; a < 2; a++)
        for (int q = 0; q < 2; q++)
            lesson_gpu_model(L, g, a ? SIM_FA2 : SIM_FA1, (sim_pass)q, &sh, NULL, &p[a][q],
                             &r[a][q]);
    const double t1 = r[0][0].time_s + r[0][1].time_s, t2 = r[1][0].time_s + r[1][1].time_s;
    double bytes[2];
    for (int a = 0; a < 2; a++)
        bytes[a] = (double)(r[a][0].dram_read_bytes + r[a][0].dram_write_bytes +
                            r[a][1].dram_read_bytes + r[a][1].dram_write_bytes);
    char b[4][32];

    /* ---- steps --------------------------------------------------------- */
    lesson_step(L, "Bytes do not tell the time");
    lesson_say(L, "B = %lld sequences x H = %lld heads, N = %lld, d = %lld, fp16, forward "
               "and backward, as the FA2 paper times them, on the %s (%d SMs). fasim's GPU "
               "model launches each pass as its released kernel, through the L2, in time:",
               (long long)sh.batch, (long long)sh.heads, (long long)sh.N, (long long)sh.d,
               g->title, g->sms);
    header(L);
    for (int k = 0; k < 4; k++)
        sim_format_bytes(b[k], 32, r[k / 2][k % 2].dram_read_bytes +
                                   r[k / 2][k % 2].dram_write_bytes);
    row4(L, "DRAM bytes", (const char *const[]){ b[0], b[1], b[2], b[3] });
    for (int k = 0; k < 4; k++)
        us(b[k], 32, r[k / 2][k % 2].time_s);
    row4(L, "predicted time", (const char *const[]){ b[0], b[1], b[2], b[3] });
    lesson_print(L, "\n");
    lesson_askf(L, t1 / t2, "FA1's time over FA2's, forward and backward together?");
    lesson_say(L, "%.2f: FA2 takes %.1f us to FA1's %.1f us, while FA1 moves %.2f times "
               "FA2's DRAM bytes. Time is not bytes over bandwidth here: both kernels "
               "spend it computing, and how much of the GPU computes is the question.",
               t1 / t2, t2 * 1e6, t1 * 1e6, bytes[0] / bytes[1]);

    lesson_step(L, "Thread blocks, waves, SMs");
    lesson_say(L, "A kernel is a grid of thread blocks; the GPU deals them to its %d SMs, a "
               "few resident on each, in waves. FA1 gives each of the B H = %lld heads a "
               "block, split when that leaves SMs idle (here into %lld in the forward, %lld "
               "in the backward). FA2 gives each query block of each head its own block in the "
               "forward (T_r = %lld per head), and each key block in the backward.",
               g->sms, (long long)BH, (long long)(r[0][0].blocks / BH),
               (long long)(r[0][1].blocks / BH), (long long)p[1][0].Tr);
    const lesson_question q1 = { .answer = (double)r[1][0].blocks, .discrete = 1,
        .known = { { (double)BH, 0, "That is one block per head, FA1's grid; FA2's "
                     "forward has one per query block of each head." } } };
    lesson_ask_q(L, &q1, "How many thread blocks does FA2's forward launch?");
    header(L);
    for (int k = 0; k < 4; k++)
        sim_format_count(b[k], 32, (uint64_t)r[k / 2][k % 2].blocks);
    row4(L, "thread blocks", (const char *const[]){ b[0], b[1], b[2], b[3] });
    for (int k = 0; k < 4; k++)
        snprintf(b[k], 32, "%d", r[k / 2][k % 2].occupancy);
    row4(L, "resident per SM", (const char *const[]){ b[0], b[1], b[2], b[3] });
    for (int k = 0; k < 4; k++)
        snprintf(b[k], 32, "%.2f", r[k / 2][k % 2].waves);
    row4(L, "waves", (const char *const[]){ b[0], b[1], b[2], b[3] });
    for (int k = 0; k < 4; k++)
        snprintf(b[k], 32, "%d", r[k / 2][k % 2].sms_busy);
    row4(L, "SMs busy", (const char *const[]){ b[0], b[1], b[2], b[3] });
    lesson_print(L, "\n");

    lesson_step(L, "An idle SM does no work");
    const lesson_question q2 = { .answer = (double)r[0][1].sms_busy, .discrete = 1 };
    lesson_ask_q(L, &q2, "Of the %d SMs, how many does FA1's backward keep busy?", g->sms);
    /* What this shape shows: FA1 idles SMs only when its grid is short. */
    const int fa1_idle = r[0][1].sms_busy < g->sms;
    lesson_say(L, "%d, %.0f%% of the GPU. Waves = blocks / (SMs x resident per SM): below 1 "
               "some SMs never get a block, and the time is that of the busiest SM. FA1's "
               "backward runs %.2f waves in %s; FA2's runs %.2f in %s. %s",
               r[0][1].sms_busy, 100.0 * r[0][1].sms_busy / g->sms, r[0][1].waves,
               us(b[0], 32, r[0][1].time_s), r[1][1].waves, us(b[1], 32, r[1][1].time_s),
               fa1_idle ? "Here FA1's grid is too short for the GPU and leaves SMs idle; "
                          "FA2's grid grows with N and fills it."
                        : "Here FA1's grid fills every SM too: its B H heads, or their key "
                          "blocks where heads alone would leave SMs idle, as FA1's released "
                          "kernel chooses.");

    lesson_step(L, "The work that is not a product");
    /* One forward tile step as the model's clock charges it (sim_gm_result.step). */
    const double other[2] = { other_per_score(&p[0][0], &sh), other_per_score(&p[1][0], &sh) };
    double t[2][5];
    for (int a = 0; a < 2; a++) {
        const sim_gm_result *m = &r[a][0];
        if (!m->step.set)
            lesson_fail(L, "the model charged no full tile step of %s's forward here",
                        a ? "FA2" : "FA1");
        t[a][0] = m->step.prod;
        t[a][1] = m->step.sfu;
        t[a][2] = m->step.fp32;
        t[a][3] = m->step.exchange;
        t[a][4] = m->step.phases;
    }
    const sim_gm_constants kc = sim_gpu_model_constants();
    lesson_askf(L, g->fp16_flops / g->fp32_flops, "The %s's fp16 tensor-core peak is how "
                "many times its FP32 peak?", g->name);
    lesson_say(L, "%.0f / %.1f TFLOP/s: a FLOP outside the products (max, exp, sums, "
               "rescaling) costs that many matmul FLOPs, and exp runs on the "
               "special-function units, %.0f a clock per SM. One forward tile step on "
               "one SM, as the model charges it:", g->fp16_flops / 1e12, g->fp32_flops / 1e12,
               g->sfu_per_clk);
    char tile[2][32];
    for (int a = 0; a < 2; a++)
        snprintf(tile[a], 32, "%lld x %lld", (long long)p[a][0].Br, (long long)p[a][0].Bc);
    lesson_print(L, "  %-28s %12s %12s\n", "", "FA1", "FA2");
    lesson_print(L, "  %-28s %12s %12s\n", "tile B_r x B_c", tile[0], tile[1]);
    lesson_print(L, "  %-28s %12.2f %12.2f\n", "non-matmul FLOPs a score", other[0], other[1]);
    static const char *const what[5] = { "products (tensor cores)", "exp (SFU)",
                                         "the rest (FP32)", "warps' exchange (smem)",
                                         "dependent phases (wait)" };
    for (int k = 0; k < 5; k++)
        lesson_print(L, "  %-28s %9.0f ns %9.0f ns\n", what[k], t[0][k] * 1e9, t[1][k] * 1e9);
    const double extra[2] = { (t[0][1] + t[0][2] + t[0][3] + t[0][4]) / t[0][0],
                              (t[1][1] + t[1][2] + t[1][3] + t[1][4]) / t[1][0] };
    lesson_print(L, "\n");
    lesson_say(L, "Per score both do about the same exp and FP32 work, yet the rest adds "
               "%.0f%% to FA2's products and %.0f%% to FA1's. FA1's warps split the keys: "
               "each step sums their partial outputs through shared memory and waits on %d "
               "dependent phases (two products, two barriers) of %.0f clocks, a latency "
               "fitted on FA1's published speeds. FA2's warps split the queries and exchange "
               "nothing. These run in turn within a block; a second resident block fills "
               "the tensor cores meanwhile.",
               100 * extra[1], 100 * extra[0], r[0][0].step.nphases, kc.phase_cycles);

    /* ---- summary ------------------------------------------------------- */
    lesson_step(L, "Summary");
    lesson_say(L, "- Time on a GPU is the busiest SM's: blocks x work per block / (SMs "
               "busy x resident per SM), plus launches and waits.\n"
               "- FA2 launches one block per query block (forward) or key block "
               "(backward) of each head, %s and %s here; FA1 %s and %s.\n"
               "- A non-matmul FLOP costs %.0f matmul FLOPs on the %s: a forward step's "
               "exp, FP32, exchange and waits add %.0f%% to FA1's products, %.0f%% to "
               "FA2's.\n"
               "- The model predicts FA1's time %.2f times FA2's here, its DRAM bytes %.2f "
               "times.\n"
               "Next: lesson 12 (l2-bytes) sets the bytes the paper counts against the "
               "bytes DRAM sees.", lesson_num((uint64_t)r[1][0].blocks),
               lesson_num((uint64_t)r[1][1].blocks), lesson_num((uint64_t)r[0][0].blocks),
               lesson_num((uint64_t)r[0][1].blocks), g->fp16_flops / g->fp32_flops, g->name,
               100 * extra[0], 100 * extra[1], t1 / t2, bytes[0] / bytes[1]);
}

const lesson_def lesson_gpu_time = {
    "gpu-time", 11, "Why FA2 is faster than FA1 in time", "advanced", 12,
    "FA1 vs FA2 on a GPU: blocks, waves, exp",
    "--N N       sequence length, 16 to 32768 (default 1024)\n"
    "--d D       head dimension, 64 or 128 (default 64)\n"
    "--heads H   query heads per sequence, up to 256 (default 16)\n"
    "--batch B   sequences, up to 256 (default 1)\n"
    "--gpu G     a100 (default), a100-40, h100, h100-pcie or h200\n",
    run,
};
