/*
 * test_kernels_cases.h — the random configurations and the comparison that
 * test_kernels.c (CPU path) and test_kernels_gpu.c (CUDA) share.
 *
 * A case is one loop order on one problem: N, d, B_r, B_c (N often not a
 * multiple of either), causal or not, fp16/bf16/fp32, M either the plan's own
 * peak or larger, which moves the naive softmax between its one-pass form
 * and its forms over tiles (two passes, or three asked for). Inputs are seeded bell-shaped values, never zero.
 *
 * kc_compare runs the simulator in compute mode and a kernel run on the same
 * inputs and plan, and reports whether O (and L) are bit-identical and the
 * per-tensor counts equal; it also checks the simulator's counts against the
 * closed form, so that "equal" is never two copies of one mistake.
 */
#ifndef FASIM_TEST_KERNELS_CASES_H
#define FASIM_TEST_KERNELS_CASES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_internal.h"
#include "sim.h"
#include "test_util.h"

typedef struct {
    sim_algo algo;
    sim_shape sh;
    sim_plan plan;
    uint64_t seed;
    int threads;
} kc_case;

/* A random case for `algo` from the test's generator state. */
static void kc_random_case(uint64_t *st, sim_algo algo, kc_case *c)
{
    memset(c, 0, sizeof *c);
    c->algo = algo;
    c->sh.N = tu_rand_range(st, 1, 150);
    c->sh.d = tu_rand_range(st, 1, 48);
    c->sh.dtype = (sim_dtype)tu_rand_range(st, 0, 2);
    c->sh.causal = (int)tu_rand_range(st, 0, 1);
    c->seed = tu_rand(st);
    c->threads = (int)tu_rand_range(st, 1, 8);
    int64_t Br = tu_rand_range(st, 1, c->sh.N + 3);
    int64_t Bc = tu_rand_range(st, 1, c->sh.N + 3);
    if (tu_rand_range(st, 0, 2) != 0) {      /* mostly real tiling: blocks < N */
        Br = tu_rand_range(st, 1, c->sh.N > 2 ? c->sh.N / 2 : 1);
        Bc = tu_rand_range(st, 1, c->sh.N > 2 ? c->sh.N / 2 : 1);
    }
    /* M: random; if the plan does not fit, exactly its peak (which then fits:
     * phases 1 and 3 do not depend on M, and phase 2 only shrinks or keeps).
     * One draw in four takes tiny tiles and the smallest M that holds them, so
     * that a row of S (4N + 8 bytes) does not fit and the naive softmax goes
     * over tiles: in two passes by default, in three for half of them. */
    sim_run_opts run = { 0 };
    c->sh.M = (uint64_t)tu_rand_range(st, 256, 64 * 1024);
    if (tu_rand_range(st, 0, 3) == 0) {
        c->sh.N = tu_rand_range(st, 48, 120);    /* 4N + 8 > the largest tiny plan, 192 B */
        c->sh.d = tu_rand_range(st, 1, 4);
        Br = tu_rand_range(st, 1, 4);
        Bc = tu_rand_range(st, 1, 4);
        c->sh.M = 1;
        run.softmax = tu_rand_range(st, 0, 1) ? SIM_SOFTMAX_3PASS : SIM_SOFTMAX_AUTO;
    }
    sim_plan_make(algo, &c->sh, &run, Br, Bc, SIM_PLAN_USER, &c->plan);
    if (!c->plan.fits) {
        c->sh.M = c->plan.sram_peak;
        sim_plan_make(algo, &c->sh, &run, Br, Bc, SIM_PLAN_USER, &c->plan);
    }
}

static void kc_describe(const kc_case *c, char *buf, size_t len)
{
    char form[24] = "";
    if (c->algo == SIM_NAIVE)
        snprintf(form, sizeof form, " softmax=%dpass", c->plan.softmax_passes);
    snprintf(buf, len, "%s N=%lld d=%lld Br=%lld Bc=%lld M=%llu %s%s seed=%llu threads=%d%s",
             sim_algo_name(c->algo), (long long)c->sh.N, (long long)c->sh.d,
             (long long)c->plan.Br, (long long)c->plan.Bc, (unsigned long long)c->sh.M,
             sim_dtype_name(c->sh.dtype), c->sh.causal ? " causal" : "",
             (unsigned long long)c->seed, c->threads, form);
}

typedef struct {
    int ran;                 /* both runs succeeded */
    int identical;           /* O (and L for FA2) bit-identical */
    int64_t differing;       /* elements of O that differ */
    int counts_equal;        /* kernel counts == simulator counts, per tensor */
    int sim_matches_theory;  /* simulator counts == closed form */
    double seconds;
} kc_outcome;

/* Run case c through the simulator and through the kernels: backend CPU with
 * table `tab`, or CUDA when tab is NULL. Prints the case when it fails. */
static kc_outcome kc_compare(const kc_case *c, const kern_cpu_table *tab, int quiet)
{
    kc_outcome o;
    memset(&o, 0, sizeof o);
    const int64_t nd = c->sh.N * c->sh.d;
    float *Q = malloc((size_t)nd * sizeof *Q), *K = malloc((size_t)nd * sizeof *K),
          *V = malloc((size_t)nd * sizeof *V);
    char desc[256], err[1024];
    kc_describe(c, desc, sizeof desc);
    if (!Q || !K || !V) {
        free(Q); free(K); free(V);
        return o;
    }
    sim_random_inputs(c->seed, c->sh.N, c->sh.d, c->sh.dtype, Q, K, V);
    sim_result sr;
    kern_result kr;
    kern_options opt = { c->threads, 1 };
    if (sim_run(c->algo, &c->sh, &c->plan, Q, K, V, NULL, &sr, err, sizeof err) != 0) {
        fprintf(stderr, "%s: sim_run failed: %s\n", desc, err);
        goto out;
    }
    int rc = tab ? kern_run_cpu_table(tab, c->algo, &c->sh, &c->plan, Q, K, V, &opt, &kr,
                                      err, sizeof err)
                 : kern_run(KERN_CUDA, c->algo, &c->sh, &c->plan, Q, K, V, &opt, &kr, err,
                            sizeof err);
    if (rc != 0) {
        fprintf(stderr, "%s: kernel run failed: %s\n", desc, err);
        sim_result_free(&sr);
        goto out;
    }
    o.ran = 1;
    o.seconds = kr.seconds;
    o.differing = quiet ? (memcmp(sr.O, kr.O, (size_t)nd * sizeof(float)) != 0)
                        : tu_compare_bits(desc, kr.O, sr.O, nd);
    o.identical = o.differing == 0;
    if (c->algo == SIM_FA2)
        o.identical = o.identical && sr.L && kr.L &&
                      memcmp(sr.L, kr.L, (size_t)c->sh.N * sizeof(float)) == 0;
    o.counts_equal = sim_counts_equal(&sr.counts, &kr.counts);
    sim_counts th;
    o.sim_matches_theory = sim_theory_counts(&c->plan, &c->sh, &th) == 0 &&
                           sim_counts_equal(&th, &sr.counts);
    if (!quiet && !o.counts_equal) {
        for (int t = 0; t < SIM_TENSOR_COUNT; t++)
            if (sr.counts.read_elems[t] != kr.counts.read_elems[t] ||
                sr.counts.write_elems[t] != kr.counts.write_elems[t] ||
                sr.counts.read_ops[t] != kr.counts.read_ops[t] ||
                sr.counts.write_ops[t] != kr.counts.write_ops[t])
                fprintf(stderr, "%s: %s kernel r %llu/%llu w %llu/%llu, sim r %llu/%llu "
                        "w %llu/%llu (elems/ops)\n", desc, sim_tensor_name((sim_tensor)t),
                        (unsigned long long)kr.counts.read_elems[t],
                        (unsigned long long)kr.counts.read_ops[t],
                        (unsigned long long)kr.counts.write_elems[t],
                        (unsigned long long)kr.counts.write_ops[t],
                        (unsigned long long)sr.counts.read_elems[t],
                        (unsigned long long)sr.counts.read_ops[t],
                        (unsigned long long)sr.counts.write_elems[t],
                        (unsigned long long)sr.counts.write_ops[t]);
    }
    if (!quiet && !o.identical)
        fprintf(stderr, "%s: output not bit-identical (%lld of %lld differ)\n", desc,
                (long long)o.differing, (long long)nd);
    kern_result_free(&kr);
    sim_result_free(&sr);
out:
    free(Q);
    free(K);
    free(V);
    return o;
}

#endif /* FASIM_TEST_KERNELS_CASES_H */
