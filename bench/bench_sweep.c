/*
 * bench_sweep.c — how long sweeps of 200 configurations at N up to 2^20 take.
 *
 *   1. The default engine on a 10 x 20 grid (N = 2^11 .. 2^20, M = 64 KiB ..
 *      368 KiB step 16 KiB, d = 64, all three loop orders). That sweep is
 *      about 2.5e10 tile steps, so `auto` picks the closed forms (exact; the
 *      tests prove them equal to the simulator): plans, counts and fits.
 *   2. The simulator itself (count-only) on 200 configurations at N up to
 *      2^20: FA2 on N = 2^11 .. 2^20 x M = 1 MiB .. 1.93 MiB (step 48 KiB),
 *      d = 64. Large M keeps FA2's steps (N^2 / (16 B_r)) near 1e9 in all.
 *   3. The simulator's rate per loop order (steps per second, one run each
 *      at N = 2^18, d = 64, M = 96 KiB), and from it what simulating grid 1
 *      in full would cost, loop order by loop order: where the time goes.
 *
 * Build: cmake --build build --target bench_sweep;  run: ./build/bench/bench_sweep
 * Options: --quick (N up to 2^17, for a smoke run).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_sweep.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static sim_sweep_result *sweep(int64_t Nmax, uint64_t Mlo, uint64_t Mstep, int fa2_only,
                               sim_engine engine)
{
    sim_sweep_spec *sp = calloc(1, sizeof *sp);
    sim_sweep_result *r = calloc(1, sizeof *r);
    char err[1024];
    if (!sp || !r)
        exit(1);
    sp->base = (sim_shape){ .N = 1024, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16, .causal = 0 };
    for (int a = 0; a < sim_algo_count(); a++)
        sp->run_algo[a] = !fa2_only || a == SIM_FA2;
    sp->engine = engine;
    sp->naxes = 2;
    if (sim_axis_range(&sp->axes[0], SIM_PARAM_N, 2048, Nmax, SIM_STEP_MUL, 2, err, sizeof err) ||
        sim_axis_range(&sp->axes[1], SIM_PARAM_M, (int64_t)Mlo, (int64_t)(Mlo + 19 * Mstep),
                       SIM_STEP_ADD, (int64_t)Mstep, err, sizeof err) ||
        sim_sweep_run(sp, r, err, sizeof err) != SIM_OK) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    free(sp);
    return r;
}

static void steps_by_algo(const sim_sweep_result *r, double st[SIM_ALGO_MAX])
{
    for (int a = 0; a < sim_algo_count(); a++)
        st[a] = 0;
    for (int k = 0; k < r->npoints; k++)
        for (int a = 0; a < sim_algo_count(); a++)
            if (r->spec.run_algo[a])
                st[a] += (double)r->pts[k].run[a].steps;
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    if (argc > 1 && !quick) {
        fprintf(stderr, "usage: bench_sweep [--quick]\n");
        return 2;
    }
    const int64_t Nmax = quick ? (INT64_C(1) << 17) : (INT64_C(1) << 20);

    /* 1. The default engine. */
    double t0 = now();
    sim_sweep_result *g1 = sweep(Nmax, 64 * 1024, 16 * 1024, 0, SIM_ENGINE_AUTO);
    double t1 = now() - t0;
    double st1[SIM_ALGO_MAX];
    steps_by_algo(g1, st1);
    printf("1. fasim sweep --vary N=2K..%lldK --vary M=64K..368K+16K (d = 64, all loop orders)\n",
           (long long)(Nmax >> 10));
    printf("   %d configurations, engine %s: %.3f s (plans, exact counts, fits)\n",
           g1->npoints, g1->simulated ? "sim" : "closed-form (auto)", t1);
    printf("   fa2 exponent in N %.3f, in M %.3f\n", g1->fits[SIM_FA2][0].exponent,
           g1->fits[SIM_FA2][1].exponent);

    /* 2. The simulator on 200 configurations. */
    t0 = now();
    sim_sweep_result *g2 = sweep(Nmax, 1024 * 1024, 48 * 1024, 1, SIM_ENGINE_SIM);
    double t2 = now() - t0;
    double st2[SIM_ALGO_MAX];
    steps_by_algo(g2, st2);
    printf("\n2. fasim sweep --engine sim --algo fa2 --vary N=2K..%lldK --vary M=1M..1.93M+48K\n",
           (long long)(Nmax >> 10));
    printf("   %d configurations simulated (count-only): %.2f s, %.3g tile steps, %.3g steps/s\n",
           g2->npoints, t2, st2[SIM_FA2], st2[SIM_FA2] / t2);

    /* 3. Rates per loop order, and the full simulation of grid 1. */
    printf("\n3. simulator rate per loop order (N = 2^18, d = 64, M = 96 KiB), and grid 1 "
           "simulated\n   %-6s %14s %12s %16s %14s\n", "", "steps", "steps/s", "grid 1 steps",
           "grid 1 est. s");
    double total = 0;
    for (int a = 0; a < sim_algo_count(); a++) {
        sim_shape sh = { .N = quick ? 65536 : 262144, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16, .causal = 0 };
        sim_measurement m;
        char err[512];
        if (sim_measure((sim_algo)a, &sh, SIM_PLAN_AUTO, 0, 0, SIM_ENGINE_SIM, 0, &m, err,
                        sizeof err) != SIM_OK) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        double rate = (double)m.steps / m.seconds;
        total += st1[a] / rate;
        printf("   %-6s %14llu %12.3g %16.3g %14.1f\n", sim_algo_name((sim_algo)a),
               (unsigned long long)m.steps, rate, st1[a], st1[a] / rate);
    }
    printf("   simulating grid 1 in full would take about %.0f s; the closed forms take %.3f s\n",
           total, t1);

    /* 4. The best-plan search itself: a causal search scores every fitting
     * pair of candidates, so its cost is the square of their number; large
     * M makes many pairs fit. */
    printf("\n4. best-plan search, causal, d = 16 (every fitting pair scored)\n"
           "   %-24s %-6s %12s %12s\n", "", "", "B_r x B_c", "ms");
    static const struct { int64_t N; uint64_t M; const char *what; } S[] = {
        { INT64_C(1) << 20, 228 * 1024, "N = 1M, M = 228 KiB" },
        { INT64_C(1) << 20, UINT64_C(1) << 30, "N = 1M, M = 1 GiB" },
        { INT64_C(85) << 20, UINT64_C(1) << 30, "N = 85M, M = 1 GiB" },
    };
    for (size_t k = 0; k < sizeof S / sizeof S[0]; k++)
        for (int a = 0; a < sim_algo_count(); a++) {
            sim_shape sh = { .N = S[k].N, .d = 16, .M = S[k].M, .dtype = SIM_FP16, .causal = 1 };
            sim_plan p;
            char err[512], blocks[48];
            t0 = now();
            int rc = sim_plan_choose((sim_algo)a, &sh, NULL, SIM_PLAN_AUTO, 0, 0, &p, err,
                                     sizeof err);
            double ms = 1e3 * (now() - t0);
            snprintf(blocks, sizeof blocks, "%lldx%lld", (long long)p.Br, (long long)p.Bc);
            printf("   %-24s %-6s %12s %12.2f\n", S[k].what, sim_algo_name((sim_algo)a),
                   rc == 0 ? blocks : "none", ms);
        }
    sim_sweep_free(g1);
    sim_sweep_free(g2);
    free(g1);
    free(g2);
    return 0;
}
