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

static void put(sim_fa3_slice *sl, int *n, int track, const char *name, double t0, double dur)
{
    if (!sl || *n >= SIM_FA3_MAX_SLICES || dur <= 0)
        return;
    sl[(*n)++] = (sim_fa3_slice){ track, name, t0, dur };
}

double sim_fa3_step(const sim_gm_opts *o, double G, double E, double M, sim_gm_bound e_bound,
                    sim_gm_bound m_bound, sim_gm_bound *bound, sim_fa3_slice *sl, int *nsl,
                    double *filled)
{
    const int pipe = !(o && o->no_pipeline), ws = !(o && o->no_warp_spec);
    int n = 0;
    double comp;
    sim_gm_bound cb = SIM_GM_BOUND_TENSOR;
    if (ws && pipe) {
        /* turns of G/2 a warpgroup; each one's softmax under the other's turn */
        comp = max2(G, E);
        if (E > G)
            cb = e_bound;
        put(sl, &n, SIM_FA3_WG1, "GEMM1 (j-1) + GEMM0 (j)", 0, G / 2);
        put(sl, &n, SIM_FA3_WG1, "softmax (j)", G / 2, E / 2);
        put(sl, &n, SIM_FA3_WG2, "softmax (j-1)", 0, E / 2);
        put(sl, &n, SIM_FA3_WG2, "GEMM1 (j-1) + GEMM0 (j)", G / 2, G / 2);
    } else if (ws) {
        /* turns of G/4: WG1 GEMM0, WG2 GEMM0, WG1 GEMM1 (after its softmax),
         * WG2 GEMM1 (after its softmax) */
        const double stall = max2(0, E / 2 - G / 4);
        comp = max2(G + stall, E);
        if (stall > 0)
            cb = e_bound;
        put(sl, &n, SIM_FA3_WG1, "GEMM0", 0, G / 4);
        put(sl, &n, SIM_FA3_WG1, "softmax", G / 4, E / 2);
        put(sl, &n, SIM_FA3_WG1, "GEMM1", G / 4 + max2(G / 4, E / 2), G / 4);
        put(sl, &n, SIM_FA3_WG2, "GEMM0", G / 4, G / 4);
        put(sl, &n, SIM_FA3_WG2, "softmax", G / 2, E / 2);
        put(sl, &n, SIM_FA3_WG2, "GEMM1", G / 2 + max2(G / 4, E / 2), G / 4);
    } else {
        /* the warpgroups in step: GEMM0 of both, then the softmax beside
         * GEMM1 of the block before (pipeline on), or after it (off) */
        comp = pipe ? G / 2 + max2(E, G / 2) : G + E;
        if (E > (pipe ? G / 2 : 0))
            cb = e_bound;
        for (int w = SIM_FA3_WG1; w <= SIM_FA3_WG2; w++) {
            put(sl, &n, w, "GEMM0", 0, G / 2);
            put(sl, &n, w, pipe ? "softmax + GEMM1 (j-1)" : "softmax", G / 2,
                pipe ? max2(E, G / 2) : E);
            if (!pipe)
                put(sl, &n, w, "GEMM1", G / 2 + E, G / 2);
        }
    }
    put(sl, &n, SIM_FA3_PRODUCER, ws ? "TMA K_j, V_j" : "TMA K_j, V_j (consumers wait)", 0, M);
    if (nsl)
        *nsl = n;
    if (filled)
        *filled = M;
    *bound = M > comp ? m_bound : cb;
    return max2(comp, M);
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
