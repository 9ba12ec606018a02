/*
 * bench_simd.c — compute mode on the vector paths and threads, against the
 * scalar specification, in one run on this machine.
 *
 * For naive, FA1 and FA2 at N = 4096 (--N), d = 64, fp32, M = 96 KiB, each
 * loop order's own plan: seconds of sim_run (the loop order alone, no
 * oracle) with the tile products on the scalar path (ref_tile.h's loops,
 * what compute mode ran before the vector paths) and on the widest path this
 * CPU has, on one thread, and on the widest path with two threads; GFLOP/s
 * (4 N^2 d), the ratios, and whether all three outputs have the same bits.
 * One thread's runs are timed in CPU seconds of the process, which a machine
 * shared with other work inflates less than wall time; the two-thread
 * speedup compares wall times. Each time is the best of --rounds rounds
 * (default 3), the configurations taking turns within a round, so that a
 * busy machine weighs on all alike.
 * The last line, "fa2-1t-seconds S", is for bench/simd.sh, which sets it
 * beside numpy's standard attention.
 *
 * Build: cmake --build build --target bench_simd;  run: ./build/bench/bench_simd
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ref_simd.h"
#include "sim.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { CFG_SCALAR, CFG_FAST, CFG_FAST2, CFG_COUNT };

/* One run of configuration cfg: its wall seconds, and its CPU seconds in
 * *cpu; O kept in *O (freed by the caller). */
static double run_once(sim_algo a, const sim_shape *sh, const sim_plan *p, const float *Q,
                       const float *K, const float *V, int cfg, ref_simd best, float **O,
                       double *cpu)
{
    sim_result r;
    char err[512];
    ref_simd_force(cfg == CFG_SCALAR ? REF_SIMD_SCALAR : best);
    sim_set_threads(cfg == CFG_FAST2 ? 2 : 1);
    const double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (sim_run(a, sh, p, Q, K, V, NULL, &r, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    const double t = clock_s(CLOCK_MONOTONIC) - t0;
    *cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    *O = r.O;
    r.O = NULL;
    sim_result_free(&r);
    return t;
}

int main(int argc, char **argv)
{
    int64_t N = 4096;
    int rounds = 3;
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--N") && k + 1 < argc)
            N = atoll(argv[++k]);
        else if (!strcmp(argv[k], "--rounds") && k + 1 < argc)
            rounds = atoi(argv[++k]);
        else {
            fprintf(stderr, "usage: bench_simd [--N N] [--rounds R]\n");
            return 2;
        }
    }
    const int64_t d = 64;
    sim_shape sh = { .N = N, .d = d, .M = 96 * 1024, .dtype = SIM_FP32, .causal = 0 };
    const size_t n = (size_t)(N * d);
    float *Q = malloc(n * sizeof *Q), *K = malloc(n * sizeof *K), *V = malloc(n * sizeof *V);
    if (!Q || !K || !V)
        return 1;
    sim_random_inputs(1, N, d, SIM_FP32, Q, K, V);
    const double flops = 4.0 * (double)N * (double)N * (double)d;
    const ref_simd best = ref_simd_active();

    printf("compute mode, N = %lld, d = %lld, fp32, M = 96 KiB, each loop order's plan; "
           "best of %d rounds\n", (long long)N, (long long)d, rounds);
    printf("widest vector path: %s; seconds of sim_run alone (no oracle): CPU seconds on one "
           "thread, wall seconds for 1 thread against 2\n", ref_simd_name(best));
    printf("  %-14s %9s %8s %9s %8s %8s %9s %9s %7s %6s\n", "", "scalar s", "GFLOP/s",
           "vector s", "GFLOP/s", "speedup", "1 thr. w", "2 thr. w", "2 vs 1", "bits");
    double fa2_1t = 0.0;
    for (int a = 0; a < sim_algo_count(); a++) {
        if (!sim_algo_in_default((sim_algo)a))
            continue;
        sim_plan p;
        char err[512];
        if (sim_plan_choose((sim_algo)a, &sh, NULL, SIM_PLAN_AUTO, 0, 0, &p, err,
                            sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        double t[CFG_COUNT] = { 1e300, 1e300, 1e300 }, cpu[CFG_COUNT] = { 1e300, 1e300, 1e300 };
        float *O[CFG_COUNT] = { NULL, NULL, NULL };
        for (int r = 0; r < rounds; r++)
            for (int c = 0; c < CFG_COUNT; c++) {
                free(O[c]);
                double u;
                const double s = run_once((sim_algo)a, &sh, &p, Q, K, V, c, best, &O[c], &u);
                t[c] = s < t[c] ? s : t[c];
                cpu[c] = u < cpu[c] ? u : cpu[c];
            }
        const int same = !memcmp(O[0], O[1], n * sizeof(float)) &&
                         !memcmp(O[0], O[2], n * sizeof(float));
        char label[48];
        snprintf(label, sizeof label, "%s %lldx%lld", sim_algo_name((sim_algo)a),
                 (long long)p.Br, (long long)p.Bc);
        printf("  %-14s %9.3f %8.2f %9.3f %8.2f %7.1fx %9.3f %9.3f %6.2fx %6s\n", label, cpu[0],
               flops / cpu[0] * 1e-9, cpu[1], flops / cpu[1] * 1e-9, cpu[0] / cpu[1], t[1], t[2],
               t[1] / t[2], same ? "same" : "DIFFER");
        if (a == SIM_FA2)
            fa2_1t = cpu[1];
        for (int c = 0; c < CFG_COUNT; c++)
            free(O[c]);
    }
    printf("fa2-1t-seconds %.6f\n", fa2_1t);
    free(Q);
    free(K);
    free(V);
    return 0;
}
