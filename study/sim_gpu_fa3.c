/*
 * sim_gpu_fa3.c — FlashAttention-3's forward pipeline in time (see
 * sim_gpu_fa3.h). No constant of its own: G, E and M come from the GPU
 * model's pipes (the tensor cores at tensor_eff of the preset's WGMMA peak,
 * the SFU's exps per clock, the FP32 rate, DRAM and L2), each sourced there
 * and in sim_presets.c.
 */
#include "sim_gpu_fa3.h"

#include <stdio.h>

static double max2(double a, double b)
{
    return a > b ? a : b;
}

static void put(sim_fa3_slice *sl, int *n, int track, sim_fa3_kind kind, const char *name,
                double t0, double dur)
{
    if (!sl || *n >= SIM_FA3_MAX_SLICES || dur <= 0)
        return;
    sl[(*n)++] = (sim_fa3_slice){ track, kind, name, t0, dur };
}

double sim_fa3_step(const sim_gm_opts *o, int first, double G, double E, double M,
                    sim_gm_bound e_bound, sim_gm_bound m_bound, sim_gm_bound *bound,
                    sim_fa3_slice *sl, int *nsl, double *freed)
{
    const int pipe = !(o && o->no_pipeline), ws = !(o && o->no_warp_spec);
    sim_fa3_slice own[SIM_FA3_MAX_SLICES];      /* the slices, when the caller wants none */
    if (!sl)
        sl = own;
    int n = 0;
    double comp;
    sim_gm_bound cb = SIM_GM_BOUND_TENSOR;
    if (ws && pipe) {
        /* turns of G/2 a warpgroup; each one's softmax under the other's
         * turn (at the first step: GEMM0 alone, and no softmax of j-1).
         * WG2's turn waits for the tensor cores (G/2) and for its own
         * softmax of j-1 (E/2), WG1's softmax for its GEMM0 and for the
         * special-function units WG2's softmax holds: both start at
         * h = max(G, E) / 2, and the step is 2h. */
        comp = max2(G, E);
        if (E > G)
            cb = e_bound;
        const double h = comp / 2;
        for (int w = SIM_FA3_WG1; w <= SIM_FA3_WG2; w++) {
            const double turn = w == SIM_FA3_WG1 ? 0 : h;
            if (first)
                put(sl, &n, w, SIM_FA3_GEMM0, "GEMM0 (j)", turn, G / 4);
            else
                put(sl, &n, w, SIM_FA3_GEMM1_GEMM0, "GEMM0 (j) + GEMM1 (j-1)", turn, G / 2);
        }
        put(sl, &n, SIM_FA3_WG1, SIM_FA3_SOFTMAX, "softmax (j)", h, E / 2);
        if (!first)
            put(sl, &n, SIM_FA3_WG2, SIM_FA3_SOFTMAX, "softmax (j-1)", 0, E / 2);
    } else if (ws) {
        /* turns of G/4: WG1 GEMM0, WG2 GEMM0, WG1 GEMM1 (after its softmax),
         * WG2 GEMM1 (after its softmax) */
        const double stall = max2(0, E / 2 - G / 4);
        comp = max2(G + stall, E);
        if (stall > 0)
            cb = e_bound;
        put(sl, &n, SIM_FA3_WG1, SIM_FA3_GEMM0, "GEMM0", 0, G / 4);
        put(sl, &n, SIM_FA3_WG1, SIM_FA3_SOFTMAX, "softmax", G / 4, E / 2);
        put(sl, &n, SIM_FA3_WG1, SIM_FA3_GEMM1, "GEMM1", G / 4 + max2(G / 4, E / 2), G / 4);
        put(sl, &n, SIM_FA3_WG2, SIM_FA3_GEMM0, "GEMM0", G / 4, G / 4);
        put(sl, &n, SIM_FA3_WG2, SIM_FA3_SOFTMAX, "softmax", G / 2, E / 2);
        put(sl, &n, SIM_FA3_WG2, SIM_FA3_GEMM1, "GEMM1", G / 2 + max2(G / 4, E / 2), G / 4);
    } else {
        /* the warpgroups in step: GEMM0 of both, then the softmax beside
         * GEMM1 of the block before (pipeline on; at the first step the
         * softmax alone), or after it (off) */
        comp = pipe ? G / 2 + max2(E, G / 2) : G + E;
        if (E > (pipe ? G / 2 : 0))
            cb = e_bound;
        for (int w = SIM_FA3_WG1; w <= SIM_FA3_WG2; w++) {
            put(sl, &n, w, SIM_FA3_GEMM0, "GEMM0", 0, G / 2);
            if (pipe && !first)
                put(sl, &n, w, SIM_FA3_SOFTMAX_GEMM1, "softmax + GEMM1 (j-1)", G / 2,
                    max2(E, G / 2));
            else
                put(sl, &n, w, SIM_FA3_SOFTMAX, "softmax", G / 2, E);
            if (!pipe)
                put(sl, &n, w, SIM_FA3_GEMM1, "GEMM1", G / 2 + E, G / 2);
        }
    }
    put(sl, &n, SIM_FA3_PRODUCER, SIM_FA3_COPY,
        ws ? "TMA K_j, V_j" : "TMA K_j, V_j (issued by the consumers)", 0, M);
    if (nsl)
        *nsl = n;
    /* the block before's stage is freed when its GEMM1 ends: in the later
     * turn that runs it (GEMM0 (j) + GEMM1 (j-1)), or beside the softmax
     * (no warp specialisation); not pipelined, a step's GEMM1 is its own
     * block's, and the stage before was freed in the step before */
    double fr = 0;
    for (int k = 0; k < n; k++)
        if ((sl[k].kind == SIM_FA3_GEMM1_GEMM0 || sl[k].kind == SIM_FA3_SOFTMAX_GEMM1) &&
            sl[k].t0 + sl[k].dur > fr)
            fr = sl[k].t0 + sl[k].dur;
    if (freed)
        *freed = fr;
    *bound = M > comp ? m_bound : cb;
    return max2(comp, M);
}

int sim_fa3_stages_full(double t, double freed)
{
    /* the consumers' block, and the block before until its GEMM1 ends */
    const int n = 1 + (t < freed);
    return n < SIM_FA3_STAGES ? n : SIM_FA3_STAGES;
}

const char *sim_fa3_track_name(const sim_gm_opts *o, int track)
{
    static const char *const ROLE[SIM_FA3_TRACKS] = {
        "producer (TMA)", "consumer warpgroup 1", "consumer warpgroup 2",
    };
    if (track == SIM_FA3_PRODUCER && o && o->no_warp_spec)
        return "TMA copies (issued by the consumers)";
    return track >= 0 && track < SIM_FA3_TRACKS ? ROLE[track] : "?";
}

int sim_fa3_gpu_check(const sim_gpu *g, char *err, size_t errlen)
{
    if (g->cc_major >= 9)
        return 0;
    snprintf(err, errlen, "fa3 runs on Hopper (compute capability 9.0): its kernel issues "
             "WGMMA and the TMA's copies, which %s (compute capability %d.%d) has not; use "
             "--gpu h100, h100-pcie or h200", g->name, g->cc_major, g->cc_minor);
    return -1;
}
