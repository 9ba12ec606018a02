/*
 * test_threads.c — a compute run on several threads, or on the scalar path
 * of the tile products, gives the bits of one thread on the widest path:
 *   - sim_run_inputs of FA2 (forward, and the backward whose forward runs
 *     first) at 1 thread against 2, 3 and 7: O, L (dQ, dK, dV) byte for
 *     byte, the counts, tile steps and SRAM peak equal; over a causal mask,
 *     a sliding window with more keys than queries, grouped query heads in
 *     batches, paged KV and partial last blocks (query blocks shared among
 *     threads, or groups of heads where there are as many as threads);
 *   - every loop order and pass with several groups of heads (threads over
 *     heads): standard attention, FA1, split-KV, FA1's and standard
 *     attention's backward, GQA's backward with its group sums;
 *   - the same runs with the tile products forced to the scalar path;
 *   - fasim --out (argv[1] is the fasim binary): the same file from
 *     --jobs 1 and --jobs 2, and from FASIM_SIMD=scalar and the default.
 * The thread and path choices are new: the old code had neither.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_simd.h"
#include "sim.h"
#include "test_util.h"

static const char *g_fasim;

typedef struct {
    const char *name;
    sim_algo algo;
    sim_shape sh;
    sim_run_opts run;
} run_case;

static const run_case CASES[] = {
    { "causal bf16, partial block", SIM_FA2,
      { .N = 1000, .d = 64, .M = 96 * 1024, .dtype = SIM_BF16, .causal = 1 }, { 0 } },
    { "window, N_k > N, d = 3", SIM_FA2, { .N = 300, .Nk = 517, .d = 3, .M = 24 * 1024,
                                           .dtype = SIM_FP32, .causal = 1, .window = 70 }, { 0 } },
    { "grouped heads, batch 2", SIM_FA2, { .N = 200, .d = 80, .M = 96 * 1024, .dtype = SIM_FP16,
                                           .batch = 2, .heads = 4, .kv_heads = 2 },
      { .group = 1 } },
    { "paged KV", SIM_FA2, { .N = 333, .d = 16, .M = 24 * 1024, .dtype = SIM_FP32 },
      { .page = 16, .page_seed = 5 } },
    { "backward", SIM_FA2, { .N = 260, .d = 64, .M = 96 * 1024, .dtype = SIM_FP32, .causal = 1 },
      { .pass = SIM_BWD } },
    /* threads over groups of heads: every loop order and pass */
    { "naive, 3 heads of a batch of 2", SIM_NAIVE,
      { .N = 150, .d = 32, .M = 48 * 1024, .dtype = SIM_FP16, .causal = 1, .batch = 2,
        .heads = 3 }, { 0 } },
    { "fa1, 5 heads", SIM_FA1, { .N = 190, .d = 24, .M = 24 * 1024, .dtype = SIM_BF16,
                                 .heads = 5 }, { 0 } },
    { "split-KV, 4 heads", SIM_FA2, { .N = 9, .Nk = 700, .d = 64, .M = 48 * 1024,
                                      .dtype = SIM_FP16, .heads = 4 }, { .splits = 3 } },
    { "fa1 backward, 3 heads", SIM_FA1, { .N = 130, .d = 16, .M = 24 * 1024, .dtype = SIM_FP32,
                                          .causal = 1, .heads = 3 }, { .pass = SIM_BWD } },
    { "naive backward, batch 3", SIM_NAIVE, { .N = 100, .d = 8, .M = 24 * 1024,
                                              .dtype = SIM_FP16, .batch = 3 },
      { .pass = SIM_BWD } },
    { "GQA backward, 6 heads over 3", SIM_FA2, { .N = 120, .d = 32, .M = 48 * 1024,
                                                 .dtype = SIM_BF16, .heads = 6, .kv_heads = 3 },
      { .pass = SIM_BWD } },
};

static int64_t heads_q(const sim_shape *sh)
{
    return (sh->batch ? sh->batch : 1) * (sh->heads ? sh->heads : 1);
}

static int64_t heads_kv(const sim_shape *sh)
{
    return (sh->batch ? sh->batch : 1) * (sh->kv_heads ? sh->kv_heads : (sh->heads ? sh->heads : 1));
}

static void run_case_on(const run_case *c, int threads, sim_result *res)
{
    const sim_shape *sh = &c->sh;
    const int64_t nq = heads_q(sh) * sh->N, nk = heads_kv(sh) * (sh->Nk ? sh->Nk : sh->N);
    float *Q = malloc((size_t)(nq * sh->d) * sizeof *Q);
    float *K = malloc((size_t)(nk * sh->d) * sizeof *K);
    float *V = malloc((size_t)(nk * sh->d) * sizeof *V);
    float *dO = malloc((size_t)(nq * sh->d) * sizeof *dO);
    assert_true(Q && K && V && dO);
    sim_random_qkv(7, nq, nk, sh->d, sh->dtype, Q, K, V);
    sim_random_grad(7, nq * sh->d, sh->dtype, dO);
    sim_plan p;
    char err[1024];
    if (sim_plan_choose(c->algo, sh, &c->run, SIM_PLAN_AUTO, 0, 0, &p, err, sizeof err) != 0)
        fail_msg("%s: %s", c->name, err);
    sim_set_threads(threads);
    const sim_inputs in = { Q, K, V, dO };
    if (sim_run_inputs(c->algo, sh, &p, &in, NULL, res, err, sizeof err) != 0)
        fail_msg("%s: %s", c->name, err);
    sim_set_threads(0);
    free(Q);
    free(K);
    free(V);
    free(dO);
}

/* The same bytes in a and b, both present or both absent. */
static void same_floats(const char *what, const char *name, const float *a, const float *b,
                        int64_t n)
{
    assert_true((a == NULL) == (b == NULL));
    if (a && memcmp(a, b, (size_t)n * sizeof *a) != 0)
        fail_msg("%s: %s differs", name, what);
}

static void same_results(const run_case *c, const sim_result *a, const sim_result *b)
{
    const sim_shape *sh = &c->sh;
    const int64_t nq = heads_q(sh) * sh->N, nk = heads_kv(sh) * (sh->Nk ? sh->Nk : sh->N);
    same_floats("O", c->name, a->O, b->O, nq * sh->d);
    same_floats("L", c->name, a->L, b->L, nq);
    same_floats("dQ", c->name, a->dQ, b->dQ, nq * sh->d);
    same_floats("dK", c->name, a->dK, b->dK, nk * sh->d);
    same_floats("dV", c->name, a->dV, b->dV, nk * sh->d);
    assert_true(sim_counts_equal(&a->counts, &b->counts));
    assert_int_equal(a->steps, b->steps);
    assert_int_equal(a->sram_peak, b->sram_peak);
    assert_int_equal(a->reg_peak, b->reg_peak);
}

static void threads_same_bits(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        sim_result one;
        run_case_on(&CASES[k], 1, &one);
        assert_non_null(one.O);
        const int ns[] = { 2, 3, 7 };
        for (int t = 0; t < 3; t++) {
            sim_result many;
            run_case_on(&CASES[k], ns[t], &many);
            same_results(&CASES[k], &one, &many);
            sim_result_free(&many);
        }
        sim_result_free(&one);
    }
}

static void scalar_path_same_bits(void **state)
{
    (void)state;
    const ref_simd best = ref_simd_active();
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        sim_result fast, scalar;
        run_case_on(&CASES[k], 2, &fast);
        assert_int_equal(ref_simd_force(REF_SIMD_SCALAR), 0);
        run_case_on(&CASES[k], 1, &scalar);
        assert_int_equal(ref_simd_force(best), 0);
        same_results(&CASES[k], &fast, &scalar);
        sim_result_free(&fast);
        sim_result_free(&scalar);
    }
    printf("  the widest path here: %s\n", ref_simd_name(best));
}

/* The whole file fasim --out writes, or NULL. */
static char *slurp(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)*len + 1);
    if (b && fread(b, 1, (size_t)*len, f) != (size_t)*len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

static void out_files_identical(void **state)
{
    (void)state;
    const char *runs[][2] = {
        { "", "--jobs 1" }, { "", "--jobs 2" },
        { "FASIM_SIMD=scalar", "--jobs 1" }, { "FASIM_SIMD=avx2", "--jobs 3" },
    };
    const char *args = "--compute --N 999 --d 80 --M 64K --causal --algo fa2 --dtype bf16";
    char *first = NULL;
    long first_len = 0;
    for (int k = 0; k < 4; k++) {
        char path[512], cmd[2048];
        char name[32];
        snprintf(name, sizeof name, "threads_out%d.npy", k);
        tu_path(path, sizeof path, name);
        snprintf(cmd, sizeof cmd, "%s %s %s %s --out %s >/dev/null", runs[k][0], g_fasim, args,
                 runs[k][1], path);
        assert_int_equal(system(cmd), 0);
        long len = 0;
        char *got = slurp(path, &len);
        assert_non_null(got);
        if (!first) {
            first = got;
            first_len = len;
            remove(path);
            continue;
        }
        if (len != first_len || memcmp(got, first, (size_t)len) != 0)
            fail_msg("fasim --out differs: %s ... %s", runs[k][0], runs[k][1]);
        free(got);
        remove(path);
    }
    free(first);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_threads FASIM\n");
        return 2;
    }
    g_fasim = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_same_bits),
        cmocka_unit_test(scalar_path_same_bits),
        cmocka_unit_test(out_files_identical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
