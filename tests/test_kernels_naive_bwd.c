/*
 * test_kernels_naive_bwd.c — standard attention's backward kernels
 * (kernels/kern_naive_bwd.cuh, Algorithm 3) on the CPU path against the
 * simulator's backward (sim/algo_naive_bwd.c).
 *
 * 36 random configurations (batch 1-3, heads 1-4 (MHA), causal and not, a
 * sliding window, N_q < N_k, N not a multiple of the blocks, fp16/bf16/fp32,
 * 1-12 threads, line 3 in one pass over whole rows and in two over tiles):
 * dQ, dK and dV bit-identical to sim_run's compute mode over every head, the
 * counts equal per tensor and the simulator's equal to the closed form, each
 * launch's shared memory the plan's bytes of its phase. What the kernels
 * carve is the driver's layout. In fp32 the gradients are within 1e-4 of the
 * float64 oracle's (normwise). A wrong build (KERN_BUG_NAIVE_BWD_D_PER_TILE:
 * line 3's row sums restarted at every tile) must fail the output check in
 * the two-pass form with its counts still equal, and pass in the one-pass
 * form, which it does not touch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ref_oracle.h"
#include "test_kernels_cases.h"

#define NB_CASES 36
#define NB_GRAD_TOL 1e-4         /* fp32 against the oracle, as tests/test_numerics.c */

extern const kern_cpu_table kern_cpu_bug_naive_bwd_d_per_tile;

static const sim_run_opts NB_RUN = { .pass = SIM_BWD };

/* A random case of the naive backward, 1-12 threads per block. Every line
 * moves every tile (T_r T_c of them a head, masked or not) and every tile
 * costs the CPU path two barriers, so the draw is kept to about 1,500 tiles
 * a case: the small-tile draws that put line 3 in two passes (M under two
 * rows of P and dP) take one head and N of 20-32, the others blocks doubled
 * until they fit the bound. */
static void nb_random_case(uint64_t *st, int heads, kc_case *c)
{
    kb_random_case(st, SIM_NAIVE, heads, 0, c);
    c->threads = (int)tu_rand_range(st, 1, 12);
    sim_shape *sh = &c->sh;
    int64_t Br = c->plan.Br, Bc = c->plan.Bc;
    if (c->plan.softmax_passes == 2) {
        const int64_t extra = sim_shape_Nk(sh) - sh->N;
        sh->batch = sh->heads = sh->kv_heads = 1;
        sh->N = 20 + sh->N % 13;
        sh->Nk = sh->Nk ? sh->N + extra % 9 : 0;
        sh->window = sh->window ? 1 + sh->window % sim_shape_Nk(sh) : 0;
        sh->M = 1;
    }
    const int64_t BH = sim_shape_B(sh) * sim_shape_H(sh), N_k = sim_shape_Nk(sh);
    while (((sh->N + Br - 1) / Br) * ((N_k + Bc - 1) / Bc) * BH > 1500) {
        Br = Br * 2 < sh->N ? Br * 2 : sh->N;
        Bc = Bc * 2 < N_k ? Bc * 2 : N_k;
    }
    sim_plan_make(SIM_NAIVE, sh, &NB_RUN, Br, Bc, SIM_PLAN_USER, &c->plan);
    if (!c->plan.fits) {
        sh->M = c->plan.sram_peak;
        sim_plan_make(SIM_NAIVE, sh, &NB_RUN, Br, Bc, SIM_PLAN_USER, &c->plan);
    }
}

/* A fixed case: N = 45 over N_k = 52 keys, two heads of two sequences, fp16,
 * B_r = 8, B_c = 5 (T_c = 11); with `tiles`, M the plan's peak with tiny
 * d, under two rows of P and dP: line 3 in two passes. */
static void nb_fixed_case(int tiles, sim_dtype dt, kc_case *c)
{
    memset(c, 0, sizeof *c);
    c->algo = SIM_NAIVE;
    c->sh = (sim_shape){ .N = 45, .Nk = 52, .d = tiles ? 3 : 8, .dtype = dt, .batch = 2,
                         .heads = 2, .kv_heads = 2, .causal = 1, .M = tiles ? 1 : 1u << 20 };
    c->seed = 11;
    c->threads = 3;
    sim_plan_make(SIM_NAIVE, &c->sh, &NB_RUN, 8, 5, SIM_PLAN_USER, &c->plan);
    if (tiles) {
        c->sh.M = c->plan.sram_peak;
        sim_plan_make(SIM_NAIVE, &c->sh, &NB_RUN, 8, 5, SIM_PLAN_USER, &c->plan);
    }
    assert_true(c->plan.fits);
    assert_int_equal(c->plan.softmax_passes, tiles ? 2 : 1);
}

/* Each launch's shared memory is the plan's bytes of its phase, the largest
 * the plan's peak, and the run reports that peak. */
static int nb_smem_ok(const kc_case *c, const kern_result *kr)
{
    kern_schedule s;
    char err[256];
    if (kern_schedule_make(SIM_NAIVE, &c->plan, &c->sh, &s, err, sizeof err) != 0 || s.n != 5)
        return 0;
    for (int k = 0; k < s.n; k++) {
        uint64_t want = 0;
        for (int b = 0; b < c->plan.nbuf; b++)
            if (c->plan.buf[b].phase == s.l[k].phase)
                want += c->plan.buf[b].bytes;
        if (s.l[k].smem_bytes != want)
            return 0;
    }
    return kr->smem_bytes == c->plan.sram_peak && kr->plan_bytes == c->plan.sram_peak &&
           kr->launches == 5;
}

static void test_random_cases(void **state)
{
    (void)state;
    uint64_t st = 0x6e62776431ull;
    int partial = 0, causal = 0, window = 0, decode = 0, multi = 0, many = 0;
    int forms[3] = { 0 }, dtypes[KERN_DTYPE_COUNT] = { 0 };
    for (int k = 0; k < NB_CASES; k++) {
        kc_case c;
        nb_random_case(&st, k % 4 != 0, &c);
        kb_inputs in;
        kb_inputs_make(&c, &in);
        sim_result sr;
        kern_result kr;
        kb_sim(&c, &in, &sr);
        kb_kern(&c, &kern_cpu_kernels, &in, KERN_DQ_DETERMINISTIC, 0, &kr);
        char desc[256];
        kc_describe(&c, desc, sizeof desc);
        const unsigned g = kb_same_grads(&c, &sr, &kr);
        if (g != 7u || !kb_counts_ok(&c, &sr, &kr) || !nb_smem_ok(&c, &kr))
            fail_msg("case %d: %s: dQ %u dK %u dV %u counts %d smem %d", k, desc, g & 1u,
                     g >> 1 & 1u, g >> 2 & 1u, kb_counts_ok(&c, &sr, &kr),
                     nb_smem_ok(&c, &kr));
        partial += c.sh.N % c.plan.Br != 0 || sim_shape_Nk(&c.sh) % c.plan.Bc != 0;
        causal += c.sh.causal;
        window += c.sh.window > 0;
        decode += sim_shape_Nk(&c.sh) > c.sh.N;
        multi += sim_shape_B(&c.sh) * sim_shape_H(&c.sh) > 1;
        many += c.threads > 8;
        forms[c.plan.softmax_passes]++;
        dtypes[c.sh.dtype]++;
        kern_result_free(&kr);
        sim_result_free(&sr);
        kb_inputs_free(&in);
    }
    /* The draw covered each kind of configuration, and both forms of line 3. */
    assert_true(partial >= 3);
    assert_true(causal >= 3);
    assert_true(window >= 1);
    assert_true(decode >= 1);
    assert_true(multi >= 3);
    assert_true(many >= 3);
    assert_true(forms[1] >= 3);
    assert_true(forms[2] >= 3);
    for (int t = 0; t < KERN_DTYPE_COUNT; t++)
        assert_true(dtypes[t] >= 1);
}

/* What the backward's kernels carve (kern_carve, recorded on the CPU path)
 * is the driver's layout, in both forms of line 3 and every dtype. */
static void test_carve_is_the_layout(void **state)
{
    (void)state;
    const sim_dtype dts[] = { SIM_FP16, SIM_BF16, SIM_FP32 };
    for (int tiles = 0; tiles < 2; tiles++)
        for (size_t q = 0; q < 3; q++) {
            kc_case c;
            nb_fixed_case(tiles, dts[q], &c);
            kb_inputs in;
            kb_inputs_make(&c, &in);
            kern_carve_log log;
            memset(&log, 0, sizeof log);
            kern_cpu_carve_log = &log;
            kern_result kr;
            kb_kern(&c, &kern_cpu_kernels, &in, KERN_DQ_DETERMINISTIC, 0, &kr);
            kern_cpu_carve_log = NULL;
            kern_schedule s, fs;
            sim_plan fp;
            const sim_run_opts fwd = { 0 };
            char err[256];
            sim_plan_make(SIM_NAIVE, &c.sh, &fwd, c.plan.Br, c.plan.Bc, SIM_PLAN_AUTO, &fp);
            assert_int_equal(kern_schedule_make(SIM_NAIVE, &fp, &c.sh, &fs, err, sizeof err),
                             0);
            assert_int_equal(kern_schedule_make(SIM_NAIVE, &c.plan, &c.sh, &s, err,
                                                sizeof err), 0);
            /* The forward's counted and timed runs first, then the backward's. */
            const int first = 2 * fs.n;
            assert_true(log.launches >= first + 2 * s.n);
            int at = 0;
            while (at < log.n && log.r[at].launch < first)
                at++;
            for (int k = 0; k < s.n; k++) {
                kern_smem_buf buf[SIM_MAX_BUFFERS];
                int n, seen = 0;
                uint64_t bytes;
                assert_int_equal(kern_layout(s.l[k].k, s.l[k].phase, &c.plan, &c.sh, buf, &n,
                                             &bytes, err, sizeof err), 0);
                assert_int_equal(bytes, s.l[k].smem_bytes);
                for (; at < log.n && log.r[at].launch == first + k; at++, seen++) {
                    int b = 0;
                    while (b < n && strcmp(buf[b].name, log.r[at].name) != 0)
                        b++;
                    if (b == n)
                        fail_msg("%s carves %s, not in the plan", kern_kernel_name(s.l[k].k),
                                 log.r[at].name);
                    assert_int_equal(log.r[at].offset, buf[b].offset);
                    assert_int_equal(log.r[at].bytes, buf[b].bytes);
                }
                assert_int_equal(seen, n);
            }
            kern_result_free(&kr);
            kb_inputs_free(&in);
        }
}

/* fp32: the kernels' dQ, dK, dV against the float64 oracle's, head by head
 * (MHA: query head h reads key/value head h). */
static void test_against_oracle(void **state)
{
    (void)state;
    uint64_t st = 0x6f7261636c65ull;
    double worst = 0.0;
    for (int k = 0; k < 8; k++) {
        kc_case c;
        nb_random_case(&st, 1, &c);
        c.sh.dtype = SIM_FP32;
        sim_plan_make(SIM_NAIVE, &c.sh, &NB_RUN, c.plan.Br, c.plan.Bc, SIM_PLAN_USER, &c.plan);
        if (!c.plan.fits) {
            c.sh.M = c.plan.sram_peak;
            sim_plan_make(SIM_NAIVE, &c.sh, &NB_RUN, c.plan.Br, c.plan.Bc, SIM_PLAN_USER,
                          &c.plan);
        }
        kb_inputs in;
        kb_inputs_make(&c, &in);
        kern_result kr;
        kb_kern(&c, &kern_cpu_kernels, &in, KERN_DQ_DETERMINISTIC, 0, &kr);
        const int64_t N = c.sh.N, N_k = sim_shape_Nk(&c.sh), d = c.sh.d;
        const int64_t BH = sim_shape_B(&c.sh) * sim_shape_H(&c.sh), qn = N * d, kn = N_k * d;
        double *dQ = malloc((size_t)(BH * qn) * sizeof *dQ);
        double *dK = malloc((size_t)(BH * kn) * sizeof *dK);
        double *dV = malloc((size_t)(BH * kn) * sizeof *dV);
        assert_true(dQ && dK && dV);
        const ref_mask mk = { c.sh.causal, N_k - N, c.sh.window, NULL };
        for (int64_t h = 0; h < BH; h++)
            assert_int_equal(ref_oracle_attention_bwd(in.Q + h * qn, in.K + h * kn,
                                                      in.V + h * kn, in.dO + h * qn, N, N_k,
                                                      d, &mk, dQ + h * qn, dK + h * kn,
                                                      dV + h * kn), 0);
        const ref_error e[3] = { ref_compare(kr.dQ, dQ, BH * qn), ref_compare(kr.dK, dK, BH * kn),
                                 ref_compare(kr.dV, dV, BH * kn) };
        char desc[256];
        kc_describe(&c, desc, sizeof desc);
        for (int t = 0; t < 3; t++) {
            worst = e[t].max_rel > worst ? e[t].max_rel : worst;
            if (!(e[t].max_rel <= NB_GRAD_TOL))
                fail_msg("%s: %s off the oracle by %.3g of its max-norm", desc,
                         t == 0 ? "dQ" : t == 1 ? "dK" : "dV", e[t].max_rel);
        }
        free(dQ);
        free(dK);
        free(dV);
        kern_result_free(&kr);
        kb_inputs_free(&in);
    }
    printf("  fp32 naive backward kernels, worst error of the gradient's max-norm: %.2e "
           "(bound %.0e)\n", worst, NB_GRAD_TOL);
}

/* The wrong build restarts line 3's row sums at every tile: with two passes
 * and T_c = 11, dQ and dK are wrong, dV (line 1, before line 3) and the
 * counts right; the one-pass form, which it does not touch, is right. */
static void test_bug_is_caught(void **state)
{
    (void)state;
    for (int tiles = 0; tiles < 2; tiles++) {
        kc_case c;
        nb_fixed_case(tiles, SIM_FP16, &c);
        kb_inputs in;
        kb_inputs_make(&c, &in);
        sim_result sr;
        kern_result kr;
        kb_sim(&c, &in, &sr);
        kb_kern(&c, &kern_cpu_bug_naive_bwd_d_per_tile, &in, KERN_DQ_DETERMINISTIC, 0, &kr);
        assert_int_equal(kb_same_grads(&c, &sr, &kr), tiles ? 4u : 7u);
        assert_true(kb_counts_ok(&c, &sr, &kr));
        kern_result_free(&kr);
        sim_result_free(&sr);
        kb_inputs_free(&in);
    }
}

/* Refusals: the CUDA backend (standard attention's backward runs on the
 * CPU path), a forward plan given to the backward's run and a backward plan
 * to the forward's. */
static void test_refusals(void **state)
{
    (void)state;
    kc_case c;
    nb_fixed_case(0, SIM_FP32, &c);
    kb_inputs in;
    kb_inputs_make(&c, &in);
    kern_result kr;
    char err[512];
    assert_int_equal(kern_run_bwd(KERN_CUDA, c.algo, &c.sh, &c.plan, in.Q, in.K, in.V, in.dO,
                                  NULL, &kr, err, sizeof err), -1);
    assert_non_null(strstr(err, "--backend cpu"));
    assert_null(strchr(err, '\n'));
    kb_plan_refusals(&c, &in);
    assert_int_equal(kern_serves_bwd(SIM_NAIVE), 1);
    assert_int_equal(kern_serves_bwd(SIM_FA1), 1);
    assert_int_equal(kern_serves_bwd(SIM_FA2), 1);
    kb_inputs_free(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_cases),
        cmocka_unit_test(test_carve_is_the_layout),
        cmocka_unit_test(test_against_oracle),
        cmocka_unit_test(test_bug_is_caught),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
