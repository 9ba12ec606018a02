/*
 * bench_gpu_model.c — how long the GPU model takes (study/sim_gpu_model.c),
 * and how its cost grows with N, the heads and the SMs.
 *
 * The two targets: GPT-2 medium forward + backward on an A100
 * (1,024 heads, 108 SMs, the L2 simulated) in under a second, and Llama 2
 * 70B's prefill at N = 32K on an H100 in under ten. Each case is run three
 * times; the table gives the fastest, and the tile steps replayed per second.
 *
 *   bench_gpu_model          the table
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sim.h"
#include "sim_gpu_model.h"
#include "sim_presets.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One pass of one loop order under its kernel plan; returns seconds, or -1. */
static double one(const sim_gpu *g, sim_algo a, sim_pass pass, const sim_shape *sh,
                  uint64_t *steps, double *predicted)
{
    sim_run_opts run = { 0 };
    run.pass = pass;
    sim_kernel_target kt = sim_gpu_kernel_target(g);
    sim_plan p;
    char err[512];
    if (sim_plan_kernel(a, sh, &run, &kt, 0, 0, &p, err, sizeof err) != 0) {
        fprintf(stderr, "bench_gpu_model: %s\n", err);
        return -1;
    }
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        sim_gm_opts o = { 0 };
        sim_gm_result r;
        double t0 = now();
        if (sim_gpu_model_run(g, &p, sh, &o, &r, err, sizeof err) != 0) {
            fprintf(stderr, "bench_gpu_model: %s\n", err);
            return -1;
        }
        double t = now() - t0;
        if (t < best)
            best = t;
        *steps = r.steps;
        *predicted = r.time_s;
    }
    return best;
}

static void row(const char *name, const sim_gpu *g, sim_algo a, int both, sim_shape sh)
{
    uint64_t s1 = 0, s2 = 0;
    double p1 = 0, p2 = 0;
    double t = one(g, a, SIM_FWD, &sh, &s1, &p1);
    if (t >= 0 && both) {
        double tb = one(g, a, SIM_BWD, &sh, &s2, &p2);
        t = tb < 0 ? -1 : t + tb;
    }
    if (t < 0)
        return;
    printf("%-34s %-5s %-4s %9.3f s %12llu %11.2e %10.3f ms\n", name, g->name,
           sim_algo_name(a), t, (unsigned long long)(s1 + s2), (double)(s1 + s2) / t,
           (p1 + p2) * 1e3);
}

int main(void)
{
    const sim_gpu *a100 = sim_gpu_find("a100"), *h100 = sim_gpu_find("h100");
    printf("%-34s %-5s %-4s %11s %12s %11s %13s\n", "case", "gpu", "algo", "model time",
           "tile steps", "steps/s", "predicted");
    sim_shape gpt2 = { .N = 1024, .d = 64, .M = a100->smem_per_block, .dtype = SIM_FP16,
                       .causal = 1, .batch = 64, .heads = 16 };
    row("GPT-2 medium fwd+bwd (1,024 heads)", a100, SIM_FA2, 1, gpt2);
    row("GPT-2 medium fwd+bwd (1,024 heads)", a100, SIM_FA1, 1, gpt2);
    sim_shape llama = { .N = 32768, .d = 128, .M = h100->smem_per_block, .dtype = SIM_FP16,
                        .causal = 1, .batch = 1, .heads = 64, .kv_heads = 8 };
    row("Llama 2 70B prefill N = 32K", h100, SIM_FA2, 0, llama);
    printf("\ngrowth (FA2 forward, A100, d = 64, not causal):\n");
    for (int64_t N = 2048; N <= 16384; N *= 2) {
        sim_shape sh = { .N = N, .d = 64, .M = a100->smem_per_block, .dtype = SIM_FP16,
                         .batch = 1, .heads = 32 };
        char name[64];
        snprintf(name, sizeof name, "N = %lld, 32 heads", (long long)N);
        row(name, a100, SIM_FA2, 0, sh);
    }
    for (int64_t H = 32; H <= 256; H *= 2) {
        sim_shape sh = { .N = 4096, .d = 64, .M = a100->smem_per_block, .dtype = SIM_FP16,
                         .batch = 1, .heads = H };
        char name[64];
        snprintf(name, sizeof name, "N = 4096, %lld heads", (long long)H);
        row(name, a100, SIM_FA2, 0, sh);
    }
    {
        sim_shape sh = { .N = 4096, .d = 64, .M = h100->smem_per_block, .dtype = SIM_FP16,
                         .batch = 1, .heads = 64 };
        row("N = 4096, 64 heads (132 SMs)", h100, SIM_FA2, 0, sh);
        sh.M = a100->smem_per_block;
        row("N = 4096, 64 heads (108 SMs)", a100, SIM_FA2, 0, sh);
    }
    return 0;
}
