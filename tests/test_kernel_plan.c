/*
 * test_kernel_plan.c — the register level and --plan kernel: the released
 * kernels' block sizes and warps against a table written here from their
 * launch code, the plans' shared memory and registers against sums written
 * here, HBM counts that do not depend on where a buffer lives, and the
 * refusals (a register buffer over the budget, a head dim no kernel serves).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "sim_presets.h"
#include "test_util.h"

/* The launch choices, from the sources sim_kernel.c cites, read again:
 * FlashAttention-2 flash_fwd_launch_template.h (run_mha_fwd_hdim*, no
 * dropout) and flash_bwd_launch_template.h (run_mha_bwd_hdim*), and
 * FlashAttention-1 fmha_fwd_hdim*.cu. A100: compute capability 8.0,
 * 163 KiB opt-in per block, 164 KiB per SM; H100: 9.0, 227 and 228 KiB.
 * Neither is sm86/sm89, so causal masking changes nothing on them. */
typedef struct {
    sim_algo algo;
    sim_pass pass;
    int64_t d;
    int64_t a100[3], h100[3];   /* B_r, B_c, warps */
} expect_row;

static const expect_row TABLE[] = {
    { SIM_FA2, SIM_FWD, 32,  { 128, 128, 4 }, { 128, 128, 4 } },
    { SIM_FA2, SIM_FWD, 64,  { 128, 128, 4 }, { 128, 128, 4 } },
    { SIM_FA2, SIM_FWD, 96,  { 128, 64, 4 },  { 128, 64, 4 } },
    { SIM_FA2, SIM_FWD, 128, { 128, 64, 4 },  { 128, 64, 4 } },
    { SIM_FA2, SIM_FWD, 192, { 128, 64, 8 },  { 128, 64, 8 } },
    /* 128 x 64 x 8 when the block may have 2*256*(128+128) B and the SM
     * less than 4*256*(64+128) B (the A100); else 64 x 64 x 4 (H100). */
    { SIM_FA2, SIM_FWD, 256, { 128, 64, 8 },  { 64, 64, 4 } },
    { SIM_FA2, SIM_BWD, 32,  { 128, 128, 8 }, { 128, 128, 8 } },
    { SIM_FA2, SIM_BWD, 64,  { 128, 128, 8 }, { 128, 128, 8 } },   /* >= 144 KB */
    { SIM_FA2, SIM_BWD, 96,  { 64, 128, 8 },  { 64, 128, 8 } },
    { SIM_FA2, SIM_BWD, 128, { 64, 128, 8 },  { 64, 128, 8 } },    /* >= 144 KB */
    { SIM_FA2, SIM_BWD, 160, { 64, 64, 8 },   { 64, 64, 8 } },
    { SIM_FA2, SIM_BWD, 192, { 64, 64, 8 },   { 64, 64, 8 } },
    { SIM_FA2, SIM_BWD, 256, { 64, 64, 8 },   { 64, 64, 8 } },
    /* FA1: STEP = 16 query rows, S = 256 keys (seqlen_k >= 256) for d <= 64,
     * 128 for d = 128; WARPS_M x WARPS_N = 1 x 4. */
    { SIM_FA1, SIM_FWD, 32,  { 16, 256, 4 },  { 16, 256, 4 } },
    { SIM_FA1, SIM_FWD, 64,  { 16, 256, 4 },  { 16, 256, 4 } },
    { SIM_FA1, SIM_FWD, 128, { 16, 128, 4 },  { 16, 128, 4 } },
    /* FA1's backward (fmha_bwd_hdim*.cu): the same S and STEP, 1 x 8 warps. */
    { SIM_FA1, SIM_BWD, 32,  { 16, 256, 8 },  { 16, 256, 8 } },
    { SIM_FA1, SIM_BWD, 64,  { 16, 256, 8 },  { 16, 256, 8 } },
    { SIM_FA1, SIM_BWD, 128, { 16, 128, 8 },  { 16, 128, 8 } },
};

#define NROWS (sizeof TABLE / sizeof TABLE[0])

static sim_kernel_target target(const char *name)
{
    const sim_gpu *g = sim_gpu_find(name);
    assert_non_null(g);
    return sim_gpu_kernel_target(g);
}

/* Shared memory and registers of a plan, summed here from what each loop
 * order holds on chip (e bytes per element of a loaded tile, 4 per fp32
 * accumulator or statistic): the largest phase of each. */
static void expected_levels(const sim_plan *p, int64_t d, int e, uint64_t *smem,
                            uint64_t *regs)
{
    const uint64_t R = (uint64_t)p->Br, C = (uint64_t)p->Bc, D = (uint64_t)d, E = (uint64_t)e;
    if (p->algo == SIM_FA2 && p->run.pass == SIM_FWD) {
        *smem = (R * D + 2 * C * D) * E;                        /* Q_i, K_j, V_j */
        *regs = (R * C + R * D + 2 * R) * 4;                    /* S_ij, O_i, m_i, l_i */
    } else if (p->algo == SIM_FA1 && p->run.pass == SIM_BWD) {
        /* Algorithm 4: K_j, V_j (line 6), Q_i, O_i, dO_i (line 9) loaded;
         * dK_j, dV_j, dQ_i, S_ij, dP_ij and l_i, m_i, D_i accumulated. */
        *smem = (2 * C * D + 3 * R * D) * E;
        *regs = (2 * C * D + R * D + 2 * R * C + 3 * R) * 4;
    } else if (p->algo == SIM_FA1) {
        *smem = (2 * C * D + R * D) * E;                        /* K_j, V_j, Q_i */
        *regs = (R * D + R * C + 6 * R) * 4;    /* O_i, S_ij, m, l, m~, l~, m_new, l_new */
    } else {
        /* FA2 backward: line 4 (O_i, dO_i; D_i), then the loop (K_j, V_j,
         * Q_i, dO_i; dK_j, dV_j, dQ_i, L_i, D_i, S_ij, dP_ij). */
        const uint64_t s1 = 2 * R * D * E, s2 = (2 * C * D + 2 * R * D) * E;
        const uint64_t r1 = R * 4, r2 = (2 * C * D + R * D + 2 * R + 2 * R * C) * 4;
        *smem = s1 > s2 ? s1 : s2;
        *regs = r1 > r2 ? r1 : r2;
    }
}

/* The budget: min(255 registers x 32 threads x warps, 64K registers) x 4 B
 * (CUDA C++ Programming Guide, compute capabilities 8.0 and 9.0). */
static uint64_t budget(int64_t warps)
{
    uint64_t regs = 255u * 32u * (uint64_t)warps;
    return (regs < 65536u ? regs : 65536u) * 4u;
}

static void test_kernel_tiles_match_the_launch_code(void **state)
{
    (void)state;
    const char *gpus[2] = { "a100", "h100" };
    for (int g = 0; g < 2; g++) {
        const sim_kernel_target t = target(gpus[g]);
        const sim_gpu *gp = sim_gpu_find(gpus[g]);
        for (size_t k = 0; k < NROWS; k++)
            for (int causal = 0; causal <= 1; causal++) {
                const expect_row *x = &TABLE[k];
                const int64_t *want = g == 0 ? x->a100 : x->h100;
                sim_shape sh = { .N = 4096, .d = x->d, .M = gp->smem_per_block,
                                 .dtype = SIM_FP16, .causal = causal };
                sim_run_opts run = { .pass = x->pass };
                sim_plan p;
                char err[512];
                int rc = sim_plan_kernel(x->algo, &sh, &run, &t, 0, 0, &p, err, sizeof err);
                if (rc != 0)
                    fail_msg("%s %s d = %lld: %s", gpus[g], sim_algo_name(x->algo),
                             (long long)x->d, err);
                assert_int_equal(p.Br, want[0]);
                assert_int_equal(p.Bc, want[1]);
                assert_int_equal(p.warps, want[2]);
                assert_int_equal(p.kind, SIM_PLAN_KERNEL);
                /* It fits the preset's shared memory and its register budget,
                 * both summed here. */
                uint64_t smem, regs;
                expected_levels(&p, x->d, 2, &smem, &regs);
                assert_int_equal(p.sram_peak, smem);
                assert_int_equal(p.reg_peak, regs);
                assert_int_equal(p.reg_limit, budget(want[2]));
                assert_true(smem <= gp->smem_per_block);
                assert_true(regs <= budget(want[2]));
                assert_true(p.fits);
            }
    }
}

/* Where the choice depends on the GPU generation and causal masking: an
 * sm86 part (compute capability 8.6, 99 KiB per block, 100 KiB per SM). */
static void test_kernel_tiles_follow_sm86_and_causal(void **state)
{
    (void)state;
    const sim_kernel_target t = { .cc_major = 8, .cc_minor = 6, .smem_per_block = 99 * 1024,
                                  .smem_per_sm = 100 * 1024, .regs_per_block = 65536,
                                  .regs_per_thread = 255, .name = "sm86" };
    static const struct { sim_pass pass; int64_t d; int causal; int64_t Br, Bc, warps; } rows[] = {
        { SIM_FWD, 128, 0, 128, 32, 4 }, { SIM_FWD, 128, 1, 64, 64, 4 },
        { SIM_FWD, 96, 0, 128, 64, 4 },  { SIM_FWD, 96, 1, 64, 64, 4 },
        { SIM_FWD, 256, 0, 64, 64, 4 },
        { SIM_BWD, 64, 0, 64, 128, 8 },  { SIM_BWD, 128, 0, 64, 64, 8 },
        { SIM_BWD, 256, 0, 64, 32, 8 },
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        sim_shape sh = { .N = 4096, .d = rows[k].d, .M = t.smem_per_block, .dtype = SIM_FP16,
                         .causal = rows[k].causal };
        sim_run_opts run = { .pass = rows[k].pass };
        sim_kernel_choice c;
        assert_int_equal(sim_kernel_choose(SIM_FA2, &sh, &run, &t, &c, NULL, 0), 0);
        assert_int_equal(c.Br, rows[k].Br);
        assert_int_equal(c.Bc, rows[k].Bc);
        assert_int_equal(c.warps, rows[k].warps);
    }
    /* Split-KV: 64 query rows, 256 / 128 / 64 keys by d; 4 warps. FA1 at
     * N_k = 128: S = 128. */
    static const struct { int64_t d, Bc; } split[] = { { 64, 256 }, { 128, 128 }, { 256, 64 } };
    for (size_t k = 0; k < 3; k++) {
        sim_shape sh = { .N = 1, .Nk = 8192, .d = split[k].d, .M = 227 * 1024,
                         .dtype = SIM_FP16 };
        sim_run_opts run = { .splits = 4 };
        sim_kernel_choice c;
        assert_int_equal(sim_kernel_choose(SIM_FA2, &sh, &run, &t, &c, NULL, 0), 0);
        assert_int_equal(c.Br, 64);
        assert_int_equal(c.Bc, split[k].Bc);
        assert_int_equal(c.warps, 4);
    }
    sim_shape sh = { .N = 128, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16 };
    sim_kernel_choice c;
    assert_int_equal(sim_kernel_choose(SIM_FA1, &sh, NULL, &t, &c, NULL, 0), 0);
    assert_int_equal(c.Bc, 128);
}

/* Moving the accumulators to registers moves no byte between HBM and chip:
 * every count, the output and the gradients equal the one-level plan's on
 * the same tiles; and each level's measured peak is the plan's. */
static void test_counts_do_not_depend_on_the_level(void **state)
{
    (void)state;
    const sim_kernel_target t = target("a100");
    static const struct { sim_algo algo; sim_pass pass; int64_t d; int causal; } cases[] = {
        { SIM_FA2, SIM_FWD, 64, 0 }, { SIM_FA2, SIM_FWD, 64, 1 }, { SIM_FA1, SIM_FWD, 64, 0 },
        { SIM_FA1, SIM_FWD, 32, 1 }, { SIM_FA2, SIM_BWD, 64, 0 }, { SIM_FA2, SIM_BWD, 32, 1 },
        { SIM_FA1, SIM_BWD, 64, 0 }, { SIM_FA1, SIM_BWD, 128, 1 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int64_t N = 300, d = cases[k].d;
        sim_shape sh = { .N = N, .d = d, .M = 163 * 1024, .dtype = SIM_FP16,
                         .causal = cases[k].causal };
        sim_run_opts run = { .pass = cases[k].pass };
        sim_plan kp, one;
        char err[512];
        assert_int_equal(sim_plan_kernel(cases[k].algo, &sh, &run, &t, 0, 0, &kp, err,
                                         sizeof err), 0);
        assert_true(kp.reg_peak > 0);
        sim_shape big = sh;
        big.M = 1u << 30;                       /* one level: everything in SRAM */
        assert_int_equal(sim_plan_make(cases[k].algo, &big, &run, kp.Br, kp.Bc, SIM_PLAN_USER,
                                       &one), 0);
        assert_int_equal(one.reg_peak, 0);
        assert_int_equal(one.sram_peak, kp.sram_peak + kp.reg_peak);

        float *Q = malloc(sizeof(float) * (size_t)(N * d)), *K = malloc(sizeof(float) * (size_t)(N * d));
        float *V = malloc(sizeof(float) * (size_t)(N * d)), *dO = malloc(sizeof(float) * (size_t)(N * d));
        assert_non_null(Q);
        assert_non_null(K);
        assert_non_null(V);
        assert_non_null(dO);
        sim_random_inputs(7, N, d, sh.dtype, Q, K, V);
        sim_random_grad(7, N * d, sh.dtype, dO);
        const sim_inputs in = { Q, K, V, dO };
        sim_result a, b;
        assert_int_equal(sim_run_inputs(cases[k].algo, &sh, &kp, &in, NULL, &a, err,
                                        sizeof err), 0);
        assert_int_equal(sim_run_inputs(cases[k].algo, &big, &one, &in, NULL, &b, err,
                                        sizeof err), 0);
        assert_true(sim_counts_equal(&a.counts, &b.counts));
        assert_int_equal(a.steps, b.steps);
        assert_int_equal(a.sram_peak, kp.sram_peak);
        assert_int_equal(a.reg_peak, kp.reg_peak);
        assert_int_equal(b.reg_peak, 0);
        const size_t n = sizeof(float) * (size_t)(N * d);
        if (cases[k].pass == SIM_FWD) {
            assert_memory_equal(a.O, b.O, n);
        } else {
            assert_memory_equal(a.dQ, b.dQ, n);
            assert_memory_equal(a.dK, b.dK, n);
            assert_memory_equal(a.dV, b.dV, n);
        }
        sim_result_free(&a);
        sim_result_free(&b);
        free(Q);
        free(K);
        free(V);
        free(dO);
    }
}

/* Events of a kernel plan name the level of their buffer: FA1 loads m_i,
 * l_i and O_i from HBM into registers and Q_i into SRAM, and SRAM in use
 * never passes the plan's shared memory. */
typedef struct {
    int to_reg, to_sram, alloc_reg, bad;
    uint64_t sram_max;
} level_count;

static void on_event(void *ctx, const sim_event *ev)
{
    level_count *c = ctx;
    if (ev->sram_used > c->sram_max)
        c->sram_max = ev->sram_used;
    if (ev->kind == SIM_EV_LOAD) {
        const int reg = !strcmp(ev->buf, "m_i") || !strcmp(ev->buf, "l_i") ||
                        !strcmp(ev->buf, "O_i");
        c->to_reg += ev->to == SIM_LEVEL_REG;
        c->to_sram += ev->to == SIM_LEVEL_SRAM;
        c->bad += ev->from != SIM_LEVEL_HBM || ev->to != (reg ? SIM_LEVEL_REG : SIM_LEVEL_SRAM);
    } else if (ev->kind == SIM_EV_ALLOC) {
        c->alloc_reg += ev->to == SIM_LEVEL_REG;
        c->bad += ev->from != ev->to;
    }
}

static void test_events_name_the_level(void **state)
{
    (void)state;
    const sim_kernel_target t = target("a100");
    sim_shape sh = { .N = 512, .d = 64, .M = 163 * 1024, .dtype = SIM_FP16 };
    sim_plan p;
    char err[512];
    assert_int_equal(sim_plan_kernel(SIM_FA1, &sh, NULL, &t, 0, 0, &p, err, sizeof err), 0);
    level_count c = { 0 };
    const sim_observer obs = { on_event, &c };
    sim_result res;
    assert_int_equal(sim_run(SIM_FA1, &sh, &p, NULL, NULL, NULL, &obs, &res, err, sizeof err), 0);
    assert_int_equal(c.bad, 0);
    assert_true(c.to_reg > 0 && c.to_sram > 0);
    /* O_i, S_ij, m_i, l_i, m~, l~, m_new, l_new: 8 register buffers, taken once */
    assert_int_equal(c.alloc_reg, 8);
    assert_int_equal(c.sram_max, p.sram_peak);
    sim_result_free(&res);
}

/* The paper's plans stay one level: no buffer in registers. */
static void test_paper_plans_stay_one_level(void **state)
{
    (void)state;
    for (int a = 0; a < sim_algo_count(); a++) {
        sim_shape sh = { .N = 512, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16 };
        sim_plan p;
        char err[512];
        assert_int_equal(sim_plan_choose((sim_algo)a, &sh, NULL, SIM_PLAN_AUTO, 0, 0, &p, err,
                                         sizeof err), 0);
        assert_int_equal(p.warps, 0);
        assert_int_equal(p.reg_peak, 0);
        for (int k = 0; k < p.nbuf; k++)
            assert_int_equal(p.buf[k].level, SIM_LEVEL_SRAM);
    }
    assert_string_equal(sim_level_name(SIM_LEVEL_REG), "registers");
}

static void test_refusals(void **state)
{
    (void)state;
    const sim_kernel_target t = target("a100");
    char err[512], want[64];
    sim_plan p;
    /* B_r = 256, B_c = 128 at d = 128 fits the A100's 163 KiB of shared
     * memory (Q_i 64 KiB, K_j and V_j 32 KiB each) but not 4 warps' registers:
     * S_ij alone is 256 x 128 x 4 B, more than 255 x 128 x 4 B. */
    sim_shape sh = { .N = 1024, .d = 128, .M = 163 * 1024, .dtype = SIM_FP16 };
    assert_int_equal(sim_plan_kernel(SIM_FA2, &sh, NULL, &t, 256, 128, &p, err, sizeof err), -1);
    const uint64_t regs = 2u * 256u * 128u * 4u + 2u * 256u * 4u;
    snprintf(want, sizeof want, "%llu", (unsigned long long)(regs - 255u * 128u * 4u));
    assert_non_null(strstr(err, "register buffer S_ij"));
    assert_non_null(strstr(err, "133,632 B over"));
    assert_string_equal(want, "133632");
    assert_null(strchr(err, '\n'));
    /* Shared memory over M. */
    sh.M = 96 * 1024;
    sh.d = 256;
    assert_int_equal(sim_plan_kernel(SIM_FA2, &sh, NULL, &t, 0, 0, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "32,768 B over M = 98,304 B"));    /* 128 KiB - 96 KiB */
    assert_null(strchr(err, '\n'));
    /* Head dims the kernels do not serve, and loop orders none runs. */
    sh.d = 80;
    assert_int_equal(sim_plan_kernel(SIM_FA2, &sh, NULL, &t, 0, 0, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "d = 32, 64, 96, 128, 192 and 256, not d = 80"));
    sim_kernel_choice c;
    assert_int_equal(sim_kernel_choose(SIM_NAIVE, &sh, NULL, &t, &c, err, sizeof err), -2);
    assert_non_null(strstr(err, "no released kernel of naive"));
    const sim_run_opts bwd = { .pass = SIM_BWD };
    sh.d = 96;
    assert_int_equal(sim_kernel_choose(SIM_FA1, &sh, &bwd, &t, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "fa1 backward kernels serve d = 32, 64 and 128, not d = 96"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_tiles_match_the_launch_code),
        cmocka_unit_test(test_kernel_tiles_follow_sm86_and_causal),
        cmocka_unit_test(test_counts_do_not_depend_on_the_level),
        cmocka_unit_test(test_events_name_the_level),
        cmocka_unit_test(test_paper_plans_stay_one_level),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
