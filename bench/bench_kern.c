/*
 * bench_kern.c — the kernels' CPU path (kernels/kern_cpu.c) against the
 * simulator's compute mode on the same work: each case runs sim_run
 * (compute, its own threads) and kern_run on the CPU backend (one counted
 * run, then one timed run) on the same inputs and plan, and prints both
 * times, their ratio, and that the outputs are bit-identical.
 *
 *   bench_kern [threads]     threads per block of the CPU path (default:
 *                            KERN_CPU_DEFAULT_THREADS)
 *
 * The CPU path runs a thread block as real threads with real barriers,
 * sim_threads() / threads blocks side by side; the simulator runs query
 * blocks in parallel; both with the SIMD tile primitives of ref_simd.c.
 * The ratio is what checking a kernel on the CPU costs over simulating it,
 * not a speed of either on a GPU. Rows: the forward of every loop order,
 * FA2's backward, and GQA with a batch.
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

/* Times the simulator's run of plan p, forward or backward (inputs in, the
 * backward's dO too), into *sr. */
static double sim_time(sim_algo a, const sim_shape *sh, const sim_plan *p,
                       const sim_inputs *in, sim_result *sr)
{
    char err[1024];
    const double t0 = now();
    if (sim_run_inputs(a, sh, p, in, NULL, sr, err, sizeof err) != 0) {
        fprintf(stderr, "bench_kern: sim_run: %s\n", err);
        exit(1);
    }
    return now() - t0;
}

static int same(const float *a, const float *b, int64_t n)
{
    return a && b && memcmp(a, b, (size_t)n * sizeof(float)) == 0;
}

/* One case: the simulator's run and the kernels' (a counted run, then a
 * timed one) on the same inputs and plan. The backward (pass SIM_BWD): the
 * simulator's time is its backward run less its forward run (sim_run's
 * backward computes O and L first), the kernels' the backward launches
 * (kern_run_bwd's forward is neither counted nor timed); the gradients
 * dQ, dK, dV are compared. */
static void row(sim_algo a, sim_shape sh, sim_pass pass, int64_t B_r, int64_t B_c, int threads)
{
    char err[1024];
    const sim_run_opts run = { .pass = pass };
    sim_plan p, pf;
    sim_plan_make(a, &sh, &run, B_r, B_c, SIM_PLAN_USER, &p);
    sim_plan_make(a, &sh, NULL, B_r, B_c, SIM_PLAN_USER, &pf);
    const int64_t nq = kern_tensor_elems(&sh, SIM_Q), nk = kern_tensor_elems(&sh, SIM_K);
    float *Q = malloc((size_t)nq * sizeof *Q), *K = malloc((size_t)nk * sizeof *K),
          *V = malloc((size_t)nk * sizeof *V), *dO = malloc((size_t)nq * sizeof *dO);
    if (!Q || !K || !V || !dO) {
        fprintf(stderr, "bench_kern: out of memory\n");
        exit(1);
    }
    sim_random_qkv(1, nq / sh.d, nk / sh.d, sh.d, sh.dtype, Q, K, V);
    sim_random_grad(2, nq, sh.dtype, dO);
    const sim_inputs in = { Q, K, V, pass == SIM_BWD ? dO : NULL };
    sim_result sr, sf;
    double t_sim = sim_time(a, &sh, &p, &in, &sr);
    if (pass == SIM_BWD) {
        t_sim -= sim_time(a, &sh, &pf, &in, &sf);
        sim_result_free(&sf);
    }
    kern_result kr;
    const kern_options opt = { .threads = threads, .repeat = 1 };
    const double t0 = now();
    const int rc = pass == SIM_BWD
                       ? kern_run_bwd(KERN_CPU, a, &sh, &p, Q, K, V, dO, &opt, &kr, err, sizeof err)
                       : kern_run(KERN_CPU, a, &sh, &p, Q, K, V, &opt, &kr, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "bench_kern: kern_run: %s\n", err);
        exit(1);
    }
    const double t_all = now() - t0;     /* the counted run and the timed one */
    const int ok = pass == SIM_BWD ? same(sr.dQ, kr.dQ, nq) && same(sr.dK, kr.dK, nk) &&
                                         same(sr.dV, kr.dV, nk)
                                   : same(sr.O, kr.O, nq);
    printf("%-5s %-4s %5lld %5lld %3lld %2lld %3lld %2lld %-6s %4lld %4lld %8.3f %8.3f "
           "%8.3f %6.2fx %s\n",
           sim_algo_name(a), sim_pass_name(pass), (long long)sh.N, (long long)sim_shape_Nk(&sh),
           (long long)sh.d, (long long)sim_shape_B(&sh), (long long)sim_shape_H(&sh),
           (long long)sim_shape_G(&sh), sh.window ? "window" : sh.causal ? "causal" : "full",
           (long long)B_r, (long long)B_c, t_sim, kr.seconds, t_all, kr.seconds / t_sim,
           ok ? "identical" : "DIFFER");
    fflush(stdout);
    sim_result_free(&sr);
    kern_result_free(&kr);
    free(Q);
    free(K);
    free(V);
    free(dO);
}

int main(int argc, char **argv)
{
    const int threads = argc > 1 ? atoi(argv[1]) : KERN_CPU_DEFAULT_THREADS;
    printf("the kernels' CPU path (%d threads per block) against the simulator's compute "
           "mode (%d threads)\n", threads, sim_threads());
    printf("%-5s %-4s %5s %5s %3s %2s %3s %2s %-6s %4s %4s %8s %8s %8s %7s\n", "algo", "pass",
           "N", "N_k", "d", "B", "H", "G", "mask", "B_r", "B_c", "sim (s)", "kern (s)",
           "k+count", "k / sim");
    const sim_shape base = { .N = 1024, .d = 64, .M = KERN_CPU_MAX_SMEM, .dtype = SIM_FP16,
                             .heads = 4 };
    for (int causal = 0; causal <= 1; causal++)
        for (int a = 0; a < sim_algo_count(); a++) {
            if (!kern_serves((sim_algo)a))
                continue;
            sim_shape sh = base;
            sh.causal = causal;
            row((sim_algo)a, sh, SIM_FWD, 64, 64, threads);
        }
    /* The backward of every loop order with backward kernels: MHA, one
     * sequence; then FA2's over a batch, and every one's with GQA. */
    for (int causal = 0; causal <= 1; causal++)
        for (int a = 0; a < sim_algo_count(); a++) {
            if (!kern_serves_bwd((sim_algo)a))
                continue;
            sim_shape sh = base;
            sh.causal = causal;
            row((sim_algo)a, sh, SIM_BWD, 64, 64, threads);
        }
    sim_shape batch = base;
    batch.N = 512;
    batch.batch = 4;
    batch.causal = 1;
    row(SIM_FA2, batch, SIM_BWD, 64, 64, threads);
    /* GQA with a batch: 8 query heads on 2 key/value heads, 2 sequences. */
    sim_shape gqa = base;
    gqa.N = 512;
    gqa.batch = 2;
    gqa.heads = 8;
    gqa.kv_heads = 2;
    gqa.causal = 1;
    for (int a = 0; a < sim_algo_count(); a++)
        if (kern_serves((sim_algo)a))
            row((sim_algo)a, gqa, SIM_FWD, 64, 64, threads);
    for (int a = 0; a < sim_algo_count(); a++)     /* and its backward: dK_exp, then the sums */
        if (kern_serves_bwd((sim_algo)a))
            row((sim_algo)a, gqa, SIM_BWD, 64, 64, threads);
    /* Decoding-like: few queries, a long sliding-window context. */
    gqa.batch = 1;
    gqa.Nk = 2048;
    gqa.window = 256;
    row(SIM_FA2, gqa, SIM_FWD, 64, 64, threads);
    return 0;
}
