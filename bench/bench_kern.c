/*
 * bench_kern.c — the kernels' CPU path (kernels/kern_cpu.c) against the
 * simulator's compute mode on the same work: each case runs sim_run
 * (compute, its own threads) and kern_run on the CPU backend (one counted
 * run, then one timed run) on the same inputs and plan, and prints both
 * times, their ratio, and that the outputs are bit-identical.
 *
 *   bench_kern [threads]     threads per block of the CPU path (default 4)
 *
 * The CPU path runs a thread block as real threads with real barriers, one
 * block at a time; the simulator runs query blocks in parallel with SIMD
 * tile primitives. The ratio is what checking a kernel on the CPU costs
 * over simulating it, not a speed of either on a GPU.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kern.h"
#include "sim.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void row(sim_algo a, sim_shape sh, int64_t B_r, int64_t B_c, int threads)
{
    char err[1024];
    sim_plan p;
    sim_plan_make(a, &sh, NULL, B_r, B_c, SIM_PLAN_USER, &p);
    const int64_t nq = kern_tensor_elems(&sh, SIM_Q), nk = kern_tensor_elems(&sh, SIM_K);
    float *Q = malloc((size_t)nq * sizeof *Q), *K = malloc((size_t)nk * sizeof *K),
          *V = malloc((size_t)nk * sizeof *V);
    if (!Q || !K || !V) {
        fprintf(stderr, "bench_kern: out of memory\n");
        exit(1);
    }
    sim_random_qkv(1, nq / sh.d, nk / sh.d, sh.d, sh.dtype, Q, K, V);
    sim_result sr;
    kern_result kr;
    double t0 = now();
    if (sim_run(a, &sh, &p, Q, K, V, NULL, &sr, err, sizeof err) != 0) {
        fprintf(stderr, "bench_kern: sim_run: %s\n", err);
        exit(1);
    }
    const double t_sim = now() - t0;
    const kern_options opt = { .threads = threads, .repeat = 1 };
    t0 = now();
    if (kern_run(KERN_CPU, a, &sh, &p, Q, K, V, &opt, &kr, err, sizeof err) != 0) {
        fprintf(stderr, "bench_kern: kern_run: %s\n", err);
        exit(1);
    }
    const double t_all = now() - t0;     /* the counted run and the timed one */
    const int same = memcmp(sr.O, kr.O, (size_t)kern_tensor_elems(&sh, SIM_O) * 4) == 0;
    printf("%-5s %6lld %4lld %3lld %3lld %-6s %4lld %4lld %10.3f %10.3f %10.3f %7.1fx %s\n",
           sim_algo_name(a), (long long)sh.N, (long long)sh.d, (long long)sim_shape_B(&sh),
           (long long)sim_shape_H(&sh), sh.causal ? "causal" : "full", (long long)B_r,
           (long long)B_c, t_sim, kr.seconds, t_all, kr.seconds / t_sim,
           same ? "identical" : "DIFFER");
    sim_result_free(&sr);
    kern_result_free(&kr);
    free(Q);
    free(K);
    free(V);
}

int main(int argc, char **argv)
{
    const int threads = argc > 1 ? atoi(argv[1]) : KERN_CPU_DEFAULT_THREADS;
    printf("the kernels' CPU path (%d threads per block) against the simulator's compute "
           "mode (%d threads)\n", threads, sim_threads());
    printf("%-5s %6s %4s %3s %3s %-6s %4s %4s %10s %10s %10s %8s\n", "algo", "N", "d", "B",
           "H", "mask", "B_r", "B_c", "sim (s)", "kernel (s)", "k+count(s)", "k / sim");
    const sim_shape base = { .N = 1024, .d = 64, .M = KERN_CPU_MAX_SMEM, .dtype = SIM_FP16,
                             .heads = 4 };
    for (int causal = 0; causal <= 1; causal++)
        for (int a = 0; a < sim_algo_count(); a++) {
            if (!kern_serves((sim_algo)a))
                continue;
            sim_shape sh = base;
            sh.causal = causal;
            row((sim_algo)a, sh, 64, 64, threads);
        }
    sim_shape gqa = base;
    gqa.N = 512;
    gqa.Nk = 2048;
    gqa.heads = 8;
    gqa.kv_heads = 2;
    gqa.causal = 1;
    gqa.window = 256;
    row(SIM_FA2, gqa, 64, 64, threads);
    return 0;
}
