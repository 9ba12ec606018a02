/*******************************************************************************
*
*   fasim lesson 14 - ring: attention across P devices, K and V passed round
*
*   Level:     [★★★] 3/3 advanced                  Minutes: about 15
*
*   Goal:      follow ring attention (Liu, Zaharia, Abbeel 2023): P devices
*              each hold N/P rows of Q, K, V; in P rounds the K, V blocks go
*              round the ring and every device meets every block; the
*              partial outputs merge by the merge lemma (lesson 3); a causal
*              mask leaves the contiguous order unbalanced, the zig-zag order
*              not; and the link hides behind compute when c >= F / B.
*   After it:  you can say whose block a device holds in round r, why the
*              merged output is exact, how much work each device does under
*              a causal mask in either order, and how long a block must be
*              for a link to hide.
*
*   Options:   --P P       devices, 2 to 16 (default 4)
*              --N N       sequence length, a multiple of 2P, 32 P to 4096
*                          (default 512)
*              --d D       head dimension, 1 to 128 (default 32)
*              --gpu G     a100, a100-40, h100 (default), h100-pcie or h200
*              --link L    nvlink3, nvlink4 (default), pcie4, pcie5, ib-hdr
*                          or ib-ndr
*
*   Run:       fasim lesson ring --P 8 --link pcie4
*
*   Numbers:   study/sim_ring.h: each round one FA2 run of the simulator,
*              count-only or computed, merged with ref_merge; the float64
*              oracle; the GPU model for one round's time.
*
*******************************************************************************/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lesson.h"
#include "ref_oracle.h"
#include "sim_ring.h"

/* A ring's per-device figures, copied out so the ring can be freed before a
 * step or a question (a lesson holds no resources across them). */
typedef struct {
    uint64_t rounds[16], steps[16];
    double time_s, link_s, compute_round_s, threshold;
} figures;

static void ring_figures(lesson *L, int P, const sim_shape *sh, sim_ring_order o,
                        const sim_link *link, const sim_gpu *g, const float *Q,
                        const float *K, const float *V, figures *f, ref_error *err,
                        const double *O_ref)
{
    const sim_ring_req rq = { P, o, link, 0 };
    sim_ring r;
    char msg[256];
    if (sim_ring_build(sh, NULL, &rq, 32, 32, g, Q, K, V, &r, msg, sizeof msg) != 0)
        lesson_fail(L, "%s", msg);
    memset(f, 0, sizeof *f);
    for (int p = 0; p < P; p++) {
        f->rounds[p] = r.dev[p].rounds_computed;
        f->steps[p] = r.dev[p].steps;
    }
    f->time_s = r.dev[r.slowest].time_s;
    f->link_s = r.link_s;
    f->compute_round_s = r.kind[SIM_RING_FULL].compute_s;
    f->threshold = r.threshold_c;
    if (err && r.computed)
        *err = ref_compare(r.O, O_ref, sh->N * sh->d);
    sim_ring_free(&r);
}

static void run(lesson *L)
{
    /* ---- setup: options and inputs ------------------------------------ */
    const int P = (int)lesson_opt_int(L, "P", 4, 2, 16);
    sim_shape sh = { .N = lesson_opt_int(L, "N", 512, 32, 4096),
                     .d = lesson_opt_int(L, "d", 32, 1, 128), .M = 1u << 20,
                     .dtype = SIM_FP16, .causal = 1 };
    const sim_gpu *g = lesson_gpu(L, lesson_opt_string(L, "gpu", "h100"));
    const char *ln = lesson_opt_string(L, "link", "nvlink4");
    const sim_link *link = sim_link_find(ln);
    if (!link) {
        char names[128];
        lesson_fail(L, "--link %s: no such link (%s)", ln, sim_link_names(names, sizeof names));
    }
    if (sh.N % (2 * P) || sh.N < 32 * P)
        lesson_fail(L, "--N %lld: a multiple of 2P = %d, at least 32 P = %d", (long long)sh.N,
                    2 * P, 32 * P);
    const int64_t N = sh.N, d = sh.d, c = N / P;
    float *Q = lesson_alloc(L, (size_t)(N * d) * sizeof *Q);
    float *K = lesson_alloc(L, (size_t)(N * d) * sizeof *K);
    float *V = lesson_alloc(L, (size_t)(N * d) * sizeof *V);
    double *O_ref = lesson_alloc(L, (size_t)(N * d) * sizeof *O_ref);
    sim_random_qkv(42, N, N, d, sh.dtype, Q, K, V);
    const ref_mask mk = { 1, 0, 0, NULL };
    if (ref_oracle_attention_masked(Q, K, V, N, N, d, &mk, O_ref, NULL) != 0)
        lesson_fail(L, "out of memory for the oracle");
    figures cont, zig, big;
    ref_error e_cont, e_zig;
    ring_figures(L, P, &sh, SIM_RING_CONTIGUOUS, link, NULL, Q, K, V, &cont, &e_cont, O_ref);
    ring_figures(L, P, &sh, SIM_RING_ZIGZAG, link, NULL, Q, K, V, &zig, &e_zig, O_ref);

    /* ---- steps --------------------------------------------------------- */
    lesson_step(L, "The rounds");
    lesson_say(L, "One sequence of N = %lld rows, too long for one device, is cut into "
               "P = %d blocks of c = N / P = %lld rows: device p holds rows of Q, K and V "
               "from p c on. Its queries need every key, so the K, V blocks travel: in "
               "round r device p computes against the block of device (p - r) mod P, and "
               "while it computes it passes that block on to device p + 1.",
               (long long)N, P, (long long)c);
    lesson_print(L, "  round:   ");
    for (int r = 0; r < P; r++)
        lesson_print(L, "%3d", r);
    lesson_print(L, "\n");
    for (int p = 0; p < P; p++) {
        lesson_print(L, "  device %d:", p);
        for (int r = 0; r < P; r++)
            lesson_print(L, "%3d", sim_ring_source(P, p, r));
        lesson_print(L, "\n");
    }
    lesson_print(L, "  (whose K, V block each device holds)\n\n");
    const lesson_question qs = { .answer = sim_ring_source(P, 1, P - 1), .discrete = 1 };
    lesson_ask_q(L, &qs, "In the last round, r = %d, whose block does device 1 hold?", P - 1);
    lesson_say(L, "After P rounds every device has met every block once, and each block "
               "crossed P - 1 links: the same bytes as gathering all of K and V on every "
               "device, but a device never holds more than two blocks (the one in hand "
               "and the one arriving).");

    lesson_step(L, "The merge");
    lesson_say(L, "Each round is one FA2 run, and FA2 leaves its output O_r normalised "
               "and the logsumexp L_r of each row. That pair is a partial state of "
               "lesson 3 with m = L_r, l = 1, acc = O_r, so the rounds merge by the "
               "merge lemma, in round order. Run on seeded fp16 inputs, causal, every "
               "round in the simulator:");
    lesson_print(L, "  merged output against the float64 oracle, contiguous: max abs "
                 "error %.3g\n", e_cont.max_abs);
    lesson_print(L, "  the same, zig-zag order:                               %.3g\n\n",
                 e_zig.max_abs);
    lesson_say(L, "Both are fp16 rounding, as one FA2 run on one device gives: the merge "
               "is exact in real arithmetic, whatever the order of the blocks.");

    lesson_step(L, "The causal imbalance, and the zig-zag order");
    lesson_say(L, "Under a causal mask a query sees only earlier keys. Device p's own "
               "block is the diagonal (half of it visible); a block from an earlier "
               "device is all visible; a block from a later device is all masked, and "
               "the device has nothing to do that round.");
    const lesson_question qi = { .answer = (double)cont.rounds[P - 1], .discrete = 1 };
    lesson_ask_q(L, &qi, "In how many of the %d rounds does device %d compute?", P, P - 1);
    lesson_print(L, "  device  rounds (contiguous)  tile steps  rounds (zig-zag)  tile steps\n");
    for (int p = 0; p < P; p++)
        lesson_print(L, "  %6d  %19llu  %10s  %16llu  %10s\n", p,
                     (unsigned long long)cont.rounds[p], lesson_num(cont.steps[p]),
                     (unsigned long long)zig.rounds[p], lesson_num(zig.steps[p]));
    lesson_print(L, "\n");
    lesson_say(L, "Contiguous: device p computes in p + 1 rounds, and since a ring moves "
               "in step, device %d sets the pace while device 0 idles. Zig-zag: cut "
               "the sequence into 2P chunks and give device p chunks p and 2P-1-p, an "
               "early one and a late one. Its own two chunks are exactly causal among "
               "themselves; from an earlier device it needs both its chunks against "
               "that device's early chunk, from a later one its late chunk against "
               "both: half a block either way, so every device does the same work.",
               P - 1);

    lesson_step(L, "When the link hides behind compute");
    /* A long context on 8 devices, for times: c = 4,096 rows a device. */
    sim_shape large = { .N = 32768, .d = 128, .M = g->smem_per_block, .dtype = SIM_FP16,
                        .heads = 8 };
    ring_figures(L, 8, &large, SIM_RING_CONTIGUOUS, link, g, NULL, NULL, NULL, &big, NULL,
                 NULL);
    lesson_say(L, "A round computes 4 c^2 d FLOPs per head (Q K^T and P V) at the GPU's "
               "rate F while 2 c d elements of s = 2 bytes cross the link at B bytes a "
               "second. Compute hides the link when 4 c^2 d / F >= 2 c d s / B, that is "
               "c >= s F / (2 B) = F / B in fp16. On %s, F = %.4g TFLOP/s; the %s link "
               "carries B = %.4g GB/s each way.", g->name,
               sim_gpu_peak_flops(g, SIM_FP16) / 1e12, link->name, link->bytes_per_s / 1e9);
    const lesson_question qc = { .answer = ceil(big.threshold), .tol = 1.0 };
    lesson_ask_q(L, &qc, "How many rows must a device hold, at least, for the link to hide?");
    lesson_print(L, "  N = %s, d = 128, 8 heads on 8 devices: c = %s rows (a long context,\n"
                 "  the same whatever --N, --d and --P: they size the steps above, which\n"
                 "  compute every output; --gpu and --link apply here)\n",
                 lesson_num((uint64_t)large.N), lesson_num((uint64_t)(large.N / 8)));
    lesson_print(L, "  one round's compute (GPU model): %.3g ms; one block over the link: "
                 "%.3g ms\n", big.compute_round_s * 1e3, big.link_s * 1e3);
    lesson_print(L, "  the ring, slowest device: %.3g ms\n\n", big.time_s * 1e3);
    lesson_say(L, "%s", (double)(large.N / 8) >= big.threshold
                            ? "Here c is above the bound: the link's time disappears "
                              "under compute. Try --link pcie4 to see it show."
                            : "Here c is below the bound: every round waits on the link. "
                              "A faster link (--link nvlink4) or more rows a device hides "
                              "it.");

    /* ---- summary ------------------------------------------------------- */
    lesson_step(L, "Summary");
    lesson_say(L, "- P devices, c = N / P rows each; round r: device p computes against "
               "block (p - r) mod P and passes it on.\n"
               "- Each round's (O_r, L_r) is a partial state; the merge lemma makes the "
               "ring exact.\n"
               "- Causal, contiguous: device p works in p + 1 of P rounds; zig-zag "
               "(chunks p and 2P-1-p) evens the work.\n"
               "- The link hides when c >= s F / (2 B): F / B rows in fp16.");
}

const lesson_def lesson_ring = {
    "ring", 14, "Ring attention across devices", "advanced", 15,
    "K and V passed round a ring of devices",
    "--P P       devices, 2 to 16 (default 4)\n"
    "--N N       sequence length, a multiple of 2P, 32 P to 4096 (default 512)\n"
    "--d D       head dimension, 1 to 128 (default 32)\n"
    "--gpu G     a100, a100-40, h100 (default), h100-pcie or h200\n"
    "--link L    nvlink3, nvlink4 (default), pcie4, pcie5, ib-hdr or ib-ndr\n",
    run,
};
