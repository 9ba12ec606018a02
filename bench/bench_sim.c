/*
 * bench_sim.c — how fast the simulator is, in one run on this machine.
 *
 *   1. Count-only cost grows with tile steps (T_r T_c), not with N^2 d, and
 *      its memory does not grow with N: FA2 at N = 2^16 .. 2^20, d = 128,
 *      M = 228K, reporting steps per second (of the wall clock and of
 *      this process's CPU time) and the process's peak RSS.
 *   2. Compute mode at N = 4096, d = 64 (fp32) for naive, FA1 and FA2:
 *      seconds and GFLOP/s (4 N^2 d flops), beside the float64 oracle (row
 *      by row, in double) in the same run. Ratios, not absolute
 *      times, are what carries over between runs of a noisy machine.
 *   3. Paged KV beside contiguous K, V in the same run: count-only FA2 and
 *      naive at N = 2^18, d = 64, M = 96 KiB, pages of 16 rows (tiles that
 *      span pages, the page-table transfer per tile), seconds and the ratio.
 *   4. The float64 oracle's loop order against its specification, the plain
 *      loops (ref_oracle_attention_plain), at N = 4096 and 8192, d = 64, not
 *      causal and causal: seconds, the ratio, and that the doubles are equal.
 *
 * Build: cmake --build build --target bench_sim;  run: ./build/bench/bench_sim
 * Options: --quick (smaller sizes, for a smoke run).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "ref_oracle.h"
#include "sim.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* This process's CPU seconds: on a shared machine the wall clock counts the
 * other processes' turns too. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void count_only(int quick)
{
    printf("count-only FA2, d = 128, M = 228 KiB, fp16\n");
    printf("  %9s %9s %8s %14s %10s %14s %14s %10s\n", "N", "B_r x B_c", "T_r", "tile steps",
           "seconds", "steps/s", "steps/cpu-s", "RSS KiB");
    int64_t top = quick ? (INT64_C(1) << 17) : (INT64_C(1) << 20);
    for (int64_t N = INT64_C(1) << 16; N <= top; N *= 4) {
        sim_shape sh = { .N = N, .d = 128, .M = 228 * 1024, .dtype = SIM_FP16, .causal = 0 };
        sim_plan p;
        char err[512];
        if (sim_plan_choose(SIM_FA2, &sh, NULL, SIM_PLAN_AUTO, 0, 0, &p, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            exit(1);
        }
        sim_result r;
        double t0 = now(), c0 = cpu_now();
        if (sim_run(SIM_FA2, &sh, &p, NULL, NULL, NULL, NULL, &r, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            exit(1);
        }
        double t = now() - t0, c = cpu_now() - c0;
        char bb[32];
        snprintf(bb, sizeof bb, "%lldx%lld", (long long)p.Br, (long long)p.Bc);
        printf("  %9lld %9s %8lld %14llu %10.3f %14.3e %14.3e %10ld\n", (long long)N, bb,
               (long long)p.Tr, (unsigned long long)r.steps, t, (double)r.steps / t,
               (double)r.steps / c, peak_rss_kib());
        sim_result_free(&r);
    }
}

static void compute(int quick)
{
    const int64_t N = quick ? 1024 : 4096, d = 64;
    sim_shape sh = { .N = N, .d = d, .M = 96 * 1024, .dtype = SIM_FP32, .causal = 0 };
    size_t n = (size_t)(N * d);
    float *Q = malloc(n * sizeof *Q), *K = malloc(n * sizeof *K), *V = malloc(n * sizeof *V);
    double *O = malloc(n * sizeof *O);
    if (!Q || !K || !V || !O)
        exit(1);
    sim_random_inputs(1, N, d, SIM_FP32, Q, K, V);
    const double flops = 4.0 * (double)N * (double)N * (double)d;

    printf("\ncompute mode, N = %lld, d = %lld, fp32, M = 96 KiB (%.2f GFLOP per run)\n",
           (long long)N, (long long)d, flops * 1e-9);
    printf("  %-22s %10s %10s %12s %12s\n", "", "seconds", "GFLOP/s", "vs oracle", "max |err|");
    double t0 = now();
    ref_oracle_attention_f(Q, K, V, N, d, 0, O, NULL);
    double t_oracle = now() - t0;
    printf("  %-22s %10.3f %10.3f %12s %12s\n", "float64 oracle (loops)", t_oracle,
           flops / t_oracle * 1e-9, "1.00x", "-");
    for (int a = 0; a < sim_algo_count(); a++) {
        sim_plan p;
        sim_result r;
        char err[512];
        if (sim_plan_choose((sim_algo)a, &sh, NULL, SIM_PLAN_AUTO, 0, 0, &p, err,
                            sizeof err) != 0 ||
            (t0 = now(), sim_run((sim_algo)a, &sh, &p, Q, K, V, NULL, &r, err, sizeof err)) != 0) {
            fprintf(stderr, "%s\n", err);
            exit(1);
        }
        double t = now() - t0;
        ref_error e = ref_compare(r.O, O, (int64_t)n);
        char label[48], ratio[16], er[16];
        snprintf(label, sizeof label, "%s %lldx%lld", sim_algo_name((sim_algo)a),
                 (long long)p.Br, (long long)p.Bc);
        snprintf(ratio, sizeof ratio, "%.2fx", t_oracle / t);
        snprintf(er, sizeof er, "%.2e", e.max_abs);
        printf("  %-22s %10.3f %10.3f %12s %12s\n", label, t, flops / t * 1e-9, ratio, er);
        sim_result_free(&r);
    }
    free(Q);
    free(K);
    free(V);
    free(O);
}

static void paged(int quick)
{
    const int64_t N = quick ? (INT64_C(1) << 15) : (INT64_C(1) << 18);
    printf("\npaged KV (P = 16) against contiguous, count-only, N = %lld, d = 64, "
           "M = 96 KiB\n", (long long)N);
    printf("  %-6s %9s %14s %12s %12s %8s %16s\n", "", "B_r x B_c", "tile steps",
           "contig. s", "paged s", "ratio", "K+V transfers");
    const sim_algo algos[2] = { SIM_NAIVE, SIM_FA2 };
    for (int k = 0; k < 2; k++) {
        sim_shape sh = { .N = N, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16 };
        sim_plan p;
        char err[512];
        double t[2] = { 0 };
        sim_result r[2];
        for (int pg = 0; pg < 2; pg++) {
            const sim_run_opts run = { .page = pg ? 16 : 0 };
            if (sim_plan_choose(algos[k], &sh, &run, SIM_PLAN_AUTO, 0, 0, &p, err,
                                sizeof err) != 0) {
                fprintf(stderr, "%s\n", err);
                exit(1);
            }
            double t0 = now();
            if (sim_run(algos[k], &sh, &p, NULL, NULL, NULL, NULL, &r[pg], err,
                        sizeof err) != 0) {
                fprintf(stderr, "%s\n", err);
                exit(1);
            }
            t[pg] = now() - t0;
        }
        char bb[32], tr[48];
        snprintf(bb, sizeof bb, "%lldx%lld", (long long)p.Br, (long long)p.Bc);
        snprintf(tr, sizeof tr, "%.2fx", (double)(r[1].counts.read_ops[SIM_K] +
                                                  r[1].counts.read_ops[SIM_V]) /
                                             (double)(r[0].counts.read_ops[SIM_K] +
                                                      r[0].counts.read_ops[SIM_V]));
        printf("  %-6s %9s %14llu %12.3f %12.3f %7.2fx %16s\n", sim_algo_name(algos[k]), bb,
               (unsigned long long)r[0].steps, t[0], t[1], t[1] / t[0], tr);
        sim_result_free(&r[0]);
        sim_result_free(&r[1]);
    }
}

static void oracle_order(int quick)
{
    printf("\nfloat64 oracle: ordered loops against the plain loops, d = 64\n");
    printf("  %6s %7s %12s %12s %8s %14s\n", "N", "causal", "plain s", "oracle s", "ratio",
           "same doubles");
    const int64_t d = 64;
    for (int64_t N = quick ? 512 : 4096; N <= (quick ? 1024 : 8192); N *= 2) {
        float *Q = malloc((size_t)(N * d) * sizeof *Q), *K = malloc((size_t)(N * d) * sizeof *K);
        float *V = malloc((size_t)(N * d) * sizeof *V);
        double *O = malloc((size_t)(N * d) * sizeof *O), *Op = malloc((size_t)(N * d) * sizeof *Op);
        if (!Q || !K || !V || !O || !Op) {
            fprintf(stderr, "bench_sim: out of memory\n");
            exit(1);
        }
        uint64_t x = 0x9e3779b97f4a7c15u;
        for (int64_t i = 0; i < N * d; i++) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            Q[i] = (float)((double)(x >> 40) / (double)(1u << 24) - 0.5);
            K[i] = (float)((double)((x >> 16) & 0xffffff) / (double)(1u << 24) - 0.5);
            V[i] = (float)((double)(x & 0xffffff) / (double)(1u << 24) - 0.5);
        }
        for (int causal = 0; causal <= 1; causal++) {
            const ref_mask mk = { causal, 0, 0, NULL };
            double t0 = now();
            ref_oracle_attention_plain(Q, K, V, N, N, d, &mk, Op, NULL);
            double t1 = now();
            ref_oracle_attention_masked(Q, K, V, N, N, d, &mk, O, NULL);
            double t2 = now();
            printf("  %6lld %7s %12.3f %12.3f %7.2fx %14s\n", (long long)N, causal ? "yes" : "no",
                   t1 - t0, t2 - t1, (t1 - t0) / (t2 - t1),
                   memcmp(O, Op, (size_t)(N * d) * sizeof *O) == 0 ? "yes" : "NO");
        }
        free(Q);
        free(K);
        free(V);
        free(O);
        free(Op);
    }
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    if (argc > 1 && !quick) {
        fprintf(stderr, "usage: bench_sim [--quick]\n");
        return 2;
    }
    count_only(quick);
    compute(quick);
    paged(quick);
    oracle_order(quick);
    return 0;
}
