/*
 * test_kernels.c — the kernels on the CPU path against the simulator.
 *
 * For each loop order, KC_CASES (30) random configurations (N not a multiple of
 * the block sizes, causal and not, fp16/bf16/fp32, 1 to 8 threads per block,
 * both forms of the naive softmax): the kernel's O (and FA2's L) must equal
 * sim_run's compute-mode output bit for bit, and its per-tensor counts must
 * equal the simulator's (which in turn must equal the closed form). The test
 * asserts that the random draw covered each kind of configuration. As many
 * again per loop order over batches, heads (MHA, GQA, MQA), N_q < N_k and
 * causal windows, and of FA2 split-KV: every head's output and the counts.
 *
 * The checker proves itself: two deliberately wrong builds of the same kernel
 * source (kern_cpu_kernels.c compiled again with KERN_BUG_SKIP_RESCALE, and
 * with KERN_BUG_RELOAD_Q) must be rejected, the first by the output check and
 * the second by the count check, each while the other check still passes; and
 * KERN_BUG_KV_HEAD_MODULO (GQA's heads reading the wrong key/value head) by
 * the output check, as one changed element of O in any head is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "kern_half.h"
#include "ref_simd.h"
#include "test_kernels_cases.h"

#define KC_CASES 30

extern const kern_cpu_table kern_cpu_bug_skip_rescale;
extern const kern_cpu_table kern_cpu_bug_reload_q;
extern const kern_cpu_table kern_cpu_bug_kv_head_modulo;

static void random_cases(sim_algo algo, uint64_t seed)
{
    uint64_t st = seed;
    int partial = 0, causal = 0, plain = 0, one_pass = 0, two_pass = 0, three_pass = 0;
    int dtypes[KERN_DTYPE_COUNT] = { 0 };
    for (int k = 0; k < KC_CASES; k++) {
        kc_case c;
        kc_random_case(&st, algo, &c);
        if (k % 3 == 1) {   /* the paper's intermediates: the kernels follow them too */
            const sim_run_opts paper = { .intermediates = SIM_INTER_PAPER };
            sim_plan_make(algo, &c.sh, &paper, c.plan.Br, c.plan.Bc, c.plan.kind, &c.plan);
        }
        double t0 = kern_now_seconds();
        kc_outcome o = kc_compare(&c, &kern_cpu_kernels, 0);
        char desc[256];
        kc_describe(&c, desc, sizeof desc);
        if (getenv("KC_VERBOSE"))
            fprintf(stderr, "%6.3f s  %s\n", kern_now_seconds() - t0, desc);
        if (!o.ran || !o.identical || !o.counts_equal || !o.sim_matches_theory)
            fail_msg("case %d: %s: ran %d identical %d counts_equal %d sim=theory %d", k,
                     desc, o.ran, o.identical, o.counts_equal, o.sim_matches_theory);
        partial += (c.sh.N % c.plan.Br != 0) || (c.sh.N % c.plan.Bc != 0);
        causal += c.sh.causal;
        plain += !c.sh.causal;
        dtypes[c.sh.dtype]++;
        if (algo == SIM_NAIVE) {
            one_pass += c.plan.softmax_passes == 1;
            two_pass += c.plan.softmax_passes == 2;
            three_pass += c.plan.softmax_passes == 3;
        }
    }
    /* The draw must have covered partial blocks, causal masks and every dtype. */
    assert_true(partial >= 3);
    assert_true(causal >= 3);
    assert_true(plain >= 3);
    for (int t = 0; t < KERN_DTYPE_COUNT; t++)
        assert_true(dtypes[t] >= 1);
    if (algo == SIM_NAIVE) {
        assert_true(one_pass >= 1);
        assert_true(two_pass >= 1);
        assert_true(three_pass >= 1);
    }
}

/* KC_CASES random configurations of `algo` over batches, heads (MHA, GQA,
 * MQA), decoding shapes (N_q < N_k), causal masks and sliding windows: every
 * head's O (and L) bit for bit and the counts per tensor, with the draw
 * asserted to have covered each kind. */
static void random_heads_cases(sim_algo algo, uint64_t seed)
{
    uint64_t st = seed;
    int batch = 0, gqa = 0, mqa = 0, decode = 0, window = 0, causal = 0, plain = 0;
    for (int k = 0; k < KC_CASES; k++) {
        kc_case c;
        kc_random_case_of(&st, algo, 1, &c);
        kc_outcome o = kc_compare(&c, &kern_cpu_kernels, 0);
        char desc[256];
        kc_describe(&c, desc, sizeof desc);
        if (getenv("KC_VERBOSE"))
            fprintf(stderr, "%s\n", desc);
        if (!o.ran || !o.identical || !o.counts_equal || !o.sim_matches_theory)
            fail_msg("case %d: %s: ran %d identical %d counts_equal %d sim=theory %d", k,
                     desc, o.ran, o.identical, o.counts_equal, o.sim_matches_theory);
        const int64_t H = sim_shape_H(&c.sh), G = sim_shape_G(&c.sh);
        batch += sim_shape_B(&c.sh) > 1;
        gqa += G > 1 && G < H;
        mqa += G == 1 && H > 1;
        decode += sim_shape_Nk(&c.sh) > c.sh.N;
        window += c.sh.window > 0;
        causal += c.sh.causal;
        plain += !c.sh.causal;
    }
    assert_true(batch >= 3);
    assert_true(gqa >= 2);
    assert_true(mqa >= 2);
    assert_true(decode >= 3);
    assert_true(window >= 3);
    assert_true(causal >= 3);
    assert_true(plain >= 3);
}

/* Split-KV: KC_CASES random FA2 configurations with 2 to 9 splits, over the
 * heads and masks above: the partials' kernel and the combine kernel give
 * the simulator's split run bit for bit (O and L of every head), with its
 * counts per tensor (O~, m, l written and read back once per split). */
static void test_fa2_split_random(void **state)
{
    (void)state;
    uint64_t st = 707;
    int split = 0, windowed = 0;
    for (int k = 0; k < KC_CASES; k++) {
        kc_case c;
        kc_random_split_case(&st, &c);
        kc_outcome o = kc_compare(&c, &kern_cpu_kernels, 0);
        char desc[256];
        kc_describe(&c, desc, sizeof desc);
        if (!o.ran || !o.identical || !o.counts_equal || !o.sim_matches_theory)
            fail_msg("case %d: %s: ran %d identical %d counts_equal %d sim=theory %d", k,
                     desc, o.ran, o.identical, o.counts_equal, o.sim_matches_theory);
        split += c.plan.run.splits > 1;
        windowed += c.plan.run.splits > 1 && c.sh.window > 0;
    }
    assert_true(split >= 20);
    assert_true(windowed >= 2);
}

static void test_naive_heads_random(void **state)
{
    (void)state;
    random_heads_cases(SIM_NAIVE, 404);
}

static void test_fa1_heads_random(void **state)
{
    (void)state;
    random_heads_cases(SIM_FA1, 505);
}

static void test_fa2_heads_random(void **state)
{
    (void)state;
    random_heads_cases(SIM_FA2, 606);
}

static void test_naive_random(void **state)
{
    (void)state;
    random_cases(SIM_NAIVE, 101);
}

static void test_fa1_random(void **state)
{
    (void)state;
    random_cases(SIM_FA1, 202);
}

static void test_fa2_random(void **state)
{
    (void)state;
    random_cases(SIM_FA2, 303);
}

/* A case with several K/V blocks per row block, so that the running maximum
 * moves and the rescale matters, and a partial last block. */
static kc_case fixed_case(sim_algo algo, int64_t N, int64_t d, int64_t Br, int64_t Bc,
                          int causal, sim_dtype dt, int threads)
{
    kc_case c;
    memset(&c, 0, sizeof c);
    c.algo = algo;
    c.sh = (sim_shape){ .N = N, .d = d, .M = 1u << 20, .dtype = dt, .causal = causal };
    c.seed = 7;
    c.threads = threads;
    sim_plan_make(algo, &c.sh, NULL, Br, Bc, SIM_PLAN_USER, &c.plan);
    return c;
}

static void test_bug_skip_rescale_caught(void **state)
{
    (void)state;
    const kc_case cases[] = {
        fixed_case(SIM_FA2, 100, 16, 16, 12, 0, SIM_FP16, 4),
        fixed_case(SIM_FA2, 77, 8, 10, 9, 1, SIM_FP32, 3),
        fixed_case(SIM_FA2, 64, 32, 64, 16, 0, SIM_BF16, 8),
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        kc_outcome good = kc_compare(&cases[k], &kern_cpu_kernels, 0);
        assert_true(good.ran && good.identical && good.counts_equal);
        kc_outcome bad = kc_compare(&cases[k], &kern_cpu_bug_skip_rescale, 1);
        assert_true(bad.ran);
        assert_false(bad.identical);          /* the output check catches it ...   */
        assert_true(bad.counts_equal);        /* ... which the counts cannot see   */
    }
}

static void test_bug_reload_q_caught(void **state)
{
    (void)state;
    const kc_case cases[] = {
        fixed_case(SIM_FA2, 100, 16, 16, 12, 0, SIM_FP16, 4),
        fixed_case(SIM_FA2, 77, 8, 10, 9, 1, SIM_FP32, 2),
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        kc_outcome bad = kc_compare(&cases[k], &kern_cpu_bug_reload_q, 1);
        assert_true(bad.ran);
        assert_true(bad.identical);           /* the numbers are right ...        */
        assert_false(bad.counts_equal);       /* ... the traffic is not           */
    }
}

/* A case of two sequences of four query heads over two key/value heads,
 * decoding (N_k > N_q) under a causal window. */
static kc_case heads_case(sim_algo algo)
{
    kc_case c;
    memset(&c, 0, sizeof c);
    c.algo = algo;
    c.sh = (sim_shape){ .N = 37, .d = 8, .M = 1u << 20, .dtype = SIM_FP16, .causal = 1,
                        .Nk = 50, .window = 20, .batch = 2, .heads = 4, .kv_heads = 2 };
    c.seed = 11;
    c.threads = 3;
    sim_plan_make(algo, &c.sh, NULL, 8, 6, SIM_PLAN_USER, &c.plan);
    return c;
}

/* The comparison sees one wrong element, in any head: the kernels' O with
 * one value changed (in the last head, its last element; in the first head,
 * its first) is not identical, and a count one off is not equal. And a
 * kernel build whose query heads read key/value head h mod G instead of
 * h / (H / G) moves exactly the same traffic and is caught by the output. */
static void test_wrong_result_caught(void **state)
{
    (void)state;
    for (int a = 0; a < sim_algo_count(); a++) {
        if (!kern_serves((sim_algo)a))
            continue;
        kc_case c = heads_case((sim_algo)a);
        sim_result sr;
        kern_result kr;
        assert_int_equal(kc_run(&c, &kern_cpu_kernels, &sr, &kr), 0);
        kc_outcome o = kc_judge(&c, &sr, &kr, 1);
        assert_true(o.identical && o.counts_equal);
        const int64_t nO = kern_tensor_elems(&c.sh, SIM_O);
        const int64_t at[2] = { nO - 1, 0 };
        for (int k = 0; k < 2; k++) {
            const float keep = kr.O[at[k]];
            kr.O[at[k]] = ref_u2f(ref_f2u(keep) ^ 1u);       /* one ulp */
            assert_false(kc_judge(&c, &sr, &kr, 1).identical);
            kr.O[at[k]] = keep;
        }
        kr.counts.read_elems[SIM_K]++;
        o = kc_judge(&c, &sr, &kr, 1);
        assert_true(o.identical);
        assert_false(o.counts_equal);
        kern_result_free(&kr);
        sim_result_free(&sr);
        kc_outcome bad = kc_compare(&c, &kern_cpu_bug_kv_head_modulo, 1);
        assert_true(bad.ran);
        assert_false(bad.identical);
        assert_true(bad.counts_equal);
    }
}

/* The kernels' block bounds (kern_block_js, kern_block_is: device code)
 * are the simulator's sim_block_js and sim_block_is, for every block of
 * shapes with causal masks, windows and N_k > N_q. */
static void test_block_bounds_agree(void **state)
{
    (void)state;
    uint64_t st = 99;
    for (int k = 0; k < 3000; k++) {
        sim_shape sh = { .N = tu_rand_range(&st, 1, 70), .d = 4, .M = 1u << 20,
                         .causal = (int)tu_rand_range(&st, 0, 1) };
        sh.Nk = sh.N + tu_rand_range(&st, 0, 30);
        if (sh.causal && tu_rand_range(&st, 0, 1))
            sh.window = tu_rand_range(&st, 1, sh.Nk + 3);
        sim_plan p;
        sim_plan_make(SIM_FA2, &sh, NULL, tu_rand_range(&st, 1, 20), tu_rand_range(&st, 1, 20),
                      SIM_PLAN_USER, &p);
        const kern_params kp = kern_params_make(&sh, &p);
        for (int64_t i = 0; i < p.Tr; i++) {
            sim_range a = kern_block_js(&kp, i), b = sim_block_js(&sh, i, p.Br, p.Bc);
            assert_true(a.lo == b.lo && a.hi == b.hi);
        }
        for (int64_t j = 0; j < p.Tc; j++) {
            sim_range a = kern_block_is(&kp, j), b = sim_block_is(&sh, j, p.Br, p.Bc);
            assert_true(a.lo == b.lo && a.hi == b.hi);
        }
    }
}

/* A launch over the CPU path's limits is refused before anything is
 * allocated (the inputs here are one float), naming the limit: a grid's y
 * over 65,535 heads, shared memory over 227 KiB per block, 65 threads. */
static void test_limits_refused(void **state)
{
    (void)state;
    float x[1] = { 1.0f };
    kern_result r;
    char err[1024];
    sim_shape sh = { .N = 64, .d = 8, .M = 1u << 20, .dtype = SIM_FP16, .batch = 65536 };
    sim_plan p;
    sim_plan_make(SIM_FA2, &sh, NULL, 16, 16, SIM_PLAN_USER, &p);
    assert_int_equal(kern_run(KERN_CPU, SIM_FA2, &sh, &p, x, x, x, NULL, &r, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "65536 blocks in y"));
    assert_non_null(strstr(err, "65535"));
    sh.batch = 65535;            /* 65535 heads: within the limit of the grid */
    kern_schedule s;
    assert_int_equal(kern_schedule_make(SIM_FA2, &p, &sh, &s, err, sizeof err), 0);
    assert_int_equal(kern_check_limits(&s, 4, &kern_cpu_limits, err, sizeof err), 0);
    sh = (sim_shape){ .N = 256, .d = 128, .M = 1u << 20, .dtype = SIM_FP32 };
    sim_plan_make(SIM_FA2, &sh, NULL, 128, 128, SIM_PLAN_USER, &p);
    assert_true(p.sram_peak > KERN_CPU_MAX_SMEM);
    assert_int_equal(kern_run(KERN_CPU, SIM_FA2, &sh, &p, x, x, x, NULL, &r, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "shared memory per block"));
    assert_non_null(strstr(err, "232448 B"));
    sh.dtype = SIM_FP16;
    sim_plan_make(SIM_FA2, &sh, NULL, 16, 16, SIM_PLAN_USER, &p);
    const kern_options opt = { .threads = KERN_CPU_MAX_THREADS + 1, .repeat = 1 };
    assert_int_equal(kern_run(KERN_CPU, SIM_FA2, &sh, &p, x, x, x, &opt, &r, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "65 threads per block"));
}

/* The same case with 1 to 12 threads per block: the same bits (rows are split,
 * arithmetic is not), and with threads > rows (idle threads at barriers);
 * with one block at a time and with several side by side (sim_threads() /
 * threads of them: 8 cores asked for, whatever this machine has). */
static void test_thread_count_independent(void **state)
{
    (void)state;
    for (int a = 0; a < sim_algo_count(); a++) {
        const int threads[] = { 1, 2, 5, 8, 12 };
        if (!kern_serves((sim_algo)a))
            continue;                    /* no kernel: the unfused baseline */
        for (int cores = 1; cores <= 8; cores *= 8)
            for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
                kc_case c = fixed_case((sim_algo)a, 45, 12, 10, 7, k % 2, SIM_FP16, threads[k]);
                sim_set_threads(cores);
                kc_outcome o = kc_compare(&c, &kern_cpu_kernels, 0);
                sim_set_threads(0);
                assert_true(o.ran && o.identical && o.counts_equal);
            }
    }
}

/* The kernels' shared memory must be the plan's buffers at the plan's bytes:
 * each launch takes exactly its phase's bytes, the largest the plan's
 * sram_peak, and a plan whose buffer list differs from a kernel's carve-up
 * (a size, or an element type) is refused before anything runs. Odd sizes
 * (B_r d odd, B_c odd) are where a 2-byte tile before an fp32 buffer would
 * misalign it: the layout must still need no padding. */
static void test_smem_is_the_plan(void **state)
{
    (void)state;
    const int64_t dims[][4] = { { 64, 16, 16, 32 }, { 45, 7, 5, 3 }, { 33, 9, 11, 13 } };
    for (size_t q = 0; q < sizeof dims / sizeof dims[0]; q++)
        for (int dt = 0; dt < SIM_DTYPE_COUNT; dt++)
            for (int a = 0; a < sim_algo_count(); a++) {
                sim_shape sh = { .N = dims[q][0], .d = dims[q][1], .M = 96 * 1024, .dtype = (sim_dtype)dt, .causal = 0 };
                if (!kern_serves((sim_algo)a))
                    continue;            /* no kernel: the unfused baseline */
                if (q == 1)
                    sh.M = 120;  /* under a row of S (4N + 8 = 188 B): three passes */
                sim_plan p;
                assert_int_equal(sim_plan_make((sim_algo)a, &sh, NULL, dims[q][2], dims[q][3],
                                               SIM_PLAN_USER, &p), 0);
                kern_schedule s;
                char err[256];
                assert_int_equal(kern_schedule_make((sim_algo)a, &p, &sh, &s, err,
                                                    sizeof err), 0);
                uint64_t peak = 0;
                for (int k = 0; k < s.n; k++) {
                    uint64_t want = 0;
                    for (int b = 0; b < p.nbuf; b++)
                        if (p.buf[b].phase == s.l[k].phase)
                            want += p.buf[b].bytes;
                    assert_int_equal(s.l[k].smem_bytes, want);
                    peak = want > peak ? want : peak;
                    kern_smem_buf buf[SIM_MAX_BUFFERS];
                    int n;
                    uint64_t bytes;
                    assert_int_equal(kern_layout(s.l[k].k, s.l[k].phase, &p, &sh, buf, &n,
                                                 &bytes, err, sizeof err), 0);
                    for (int b = 0; b < n; b++)
                        assert_int_equal(buf[b].offset % (uint64_t)buf[b].elem_bytes, 0);
                }
                assert_int_equal(peak, p.sram_peak);
                sim_plan bad = p;
                bad.buf[0].rows += 1;
                assert_int_equal(kern_schedule_make((sim_algo)a, &bad, &sh, &s, err,
                                                    sizeof err), -1);
                assert_non_null(strstr(err, "does not match"));
                if (dt != SIM_FP32) {           /* a tile the plan charges at 4 B */
                    bad = p;
                    bad.buf[0].elem_bytes = 4;
                    bad.buf[0].bytes = (uint64_t)(bad.buf[0].rows * bad.buf[0].cols) * 4u;
                    if (p.buf[0].elem_bytes == 2)
                        assert_int_equal(kern_schedule_make((sim_algo)a, &bad, &sh, &s, err,
                                                            sizeof err), -1);
                }
            }
}

/* What the kernels really carve (kern_carve, recorded on the CPU path) is the
 * driver's layout: the same buffers at the same offsets and bytes. */
static void test_carve_is_the_layout(void **state)
{
    (void)state;
    const sim_dtype dts[] = { SIM_FP16, SIM_BF16, SIM_FP32 };
    for (size_t q = 0; q < 3; q++)
        for (int a = 0; a < sim_algo_count() && kern_serves((sim_algo)a); a++)
            for (int pass = 0; pass < (a == SIM_NAIVE ? 3 : 1); pass++) {
                kc_case c = fixed_case((sim_algo)a, 45, pass ? 3 : 7, 5, 3, 1, dts[q], 3);
                if (pass) {   /* M = the plan's peak, under a row of S: two passes,
                                 or three asked for */
                    const sim_run_opts run = { .softmax = pass == 2 ? SIM_SOFTMAX_3PASS
                                                                    : SIM_SOFTMAX_AUTO };
                    c.sh.M = 1;
                    sim_plan_make(c.algo, &c.sh, &run, 5, 3, SIM_PLAN_USER, &c.plan);
                    c.sh.M = c.plan.sram_peak;
                    sim_plan_make(c.algo, &c.sh, &run, 5, 3, SIM_PLAN_USER, &c.plan);
                    assert_int_equal(c.plan.softmax_passes, pass + 1);
                }
                kern_carve_log log;
                memset(&log, 0, sizeof log);
                kern_cpu_carve_log = &log;
                kc_outcome o = kc_compare(&c, &kern_cpu_kernels, 0);
                kern_cpu_carve_log = NULL;
                assert_true(o.ran && o.identical && o.counts_equal);
                kern_schedule s;
                char err[256];
                assert_int_equal(kern_schedule_make(c.algo, &c.plan, &c.sh, &s, err,
                                                    sizeof err), 0);
                assert_true(log.launches >= 2 * s.n);     /* the counted and timed runs */
                int at = 0;
                for (int k = 0; k < s.n; k++) {
                    kern_smem_buf buf[SIM_MAX_BUFFERS];
                    int n;
                    uint64_t bytes;
                    assert_int_equal(kern_layout(s.l[k].k, s.l[k].phase, &c.plan, &c.sh,
                                                 buf, &n, &bytes, err, sizeof err), 0);
                    int seen = 0;
                    for (; at < log.n && log.r[at].launch == k; at++, seen++) {
                        int b = 0;
                        while (b < n && strcmp(buf[b].name, log.r[at].name) != 0)
                            b++;
                        if (b == n)
                            fail_msg("%s carves %s, not in the plan",
                                     kern_kernel_name(s.l[k].k), log.r[at].name);
                        if (log.r[at].offset != buf[b].offset)
                            fail_msg("%s: %s carved at %llu, the layout says %llu", kern_kernel_name(s.l[k].k), buf[b].name, (unsigned long long)log.r[at].offset, (unsigned long long)buf[b].offset);
                        assert_int_equal(log.r[at].bytes, buf[b].bytes);
                    }
                    assert_int_equal(seen, n);
                }
            }
}

/* The 2-byte conversions of kern_half.h: every fp16 and bf16 pattern goes to
 * the float it denotes and back to itself (NaNs stay NaN), and every float
 * that ref_round_fp16 / ref_round_bf16 returns survives the trip exactly. */
static void test_half_conversions(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = kern_fp16_to_f32((uint16_t)h);
        int nan = ((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff);
        if (nan) {
            assert_true(f != f);
            assert_true(kern_fp16_to_f32(kern_f32_to_fp16(f)) != f);
            continue;
        }
        assert_int_equal(kern_f32_to_fp16(f), h);
        assert_int_equal(ref_f2u(ref_round_fp16(f)), ref_f2u(f));   /* a value of fp16 */
        /* the value: sign * 2^(e-15) * 1.m, or m 2^-24 for subnormals */
        uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
        double v = e == 0x1f ? INFINITY : e ? ldexp(1.0 + m / 1024.0, (int)e - 15)
                                             : ldexp((double)m, -24);
        assert_true((double)(h & 0x8000 ? -f : f) == v);
        assert_int_equal(ref_f2u(f) >> 31, h >> 15);
        float b = kern_bf16_to_f32((uint16_t)h);
        assert_int_equal(ref_f2u(b), h << 16);
        if (b == b)
            assert_int_equal(kern_f32_to_bf16(b), h);
    }
    uint64_t st = 12345;
    for (int k = 0; k < 200000; k++) {
        float x = ref_u2f((uint32_t)tu_rand(&st));
        if (x != x)
            continue;
        float r = ref_round_fp16(x);
        assert_int_equal(ref_f2u(kern_fp16_to_f32(kern_f32_to_fp16(r))), ref_f2u(r));
        r = ref_round_bf16(x);
        assert_int_equal(ref_f2u(kern_bf16_to_f32(kern_f32_to_bf16(r))), ref_f2u(r));
    }
}

/* The CPU's bulk conversions (kern_cpu_tile_floats, kern_cpu_tile_put_n, the
 * tile-of-rows primitives' and kern_load_tile's) against kern_half.h's, bit
 * for bit, on every path this CPU runs: every fp16 and bf16 pattern to
 * floats, and every value back (NaNs: the element conversion's pattern too),
 * at lengths that leave a tail past the last whole vector. */
static void test_bulk_conversions(void **state)
{
    (void)state;
    enum { N = 65536 };
    uint16_t *h = malloc(N * sizeof *h), *back = malloc(N * sizeof *back);
    float *f = malloc(N * sizeof *f);
    assert_true(h && back && f);
    for (uint32_t k = 0; k < N; k++)
        h[k] = (uint16_t)k;
    const ref_simd was = ref_simd_active();
    for (int s = 0; s < REF_SIMD_COUNT; s++) {
        if (ref_simd_force((ref_simd)s) != 0)
            continue;
        for (int bf = 0; bf <= 1; bf++) {
            const sim_dtype t = bf ? SIM_BF16 : SIM_FP16;
            const int64_t n = N - 3;             /* a partial vector at the end */
            kern_cpu_tile_floats(h, t, n, f);
            for (int64_t k = 0; k < n; k++)
                assert_int_equal(ref_f2u(f[k]), ref_f2u(bf ? kern_bf16_to_f32(h[k])
                                                           : kern_fp16_to_f32(h[k])));
            kern_cpu_tile_put_n(back, t, f, n);
            for (int64_t k = 0; k < n; k++)
                assert_int_equal(back[k], bf ? kern_f32_to_bf16(f[k]) : kern_f32_to_fp16(f[k]));
        }
    }
    assert_int_equal(ref_simd_force(was), 0);
    free(h);
    free(back);
    free(f);
}

/* A refused plan is refused here too, with the simulator's explanation. */
static void test_misfit_refused(void **state)
{
    (void)state;
    sim_shape sh = { .N = 256, .d = 64, .M = 1024, .dtype = SIM_FP16, .causal = 0 };
    sim_plan p;
    sim_plan_make(SIM_FA2, &sh, NULL, 64, 64, SIM_PLAN_USER, &p);
    assert_false(p.fits);
    float x[1] = { 1.0f };
    kern_result r;
    char err[1024];
    assert_int_equal(kern_run(KERN_CPU, SIM_FA2, &sh, &p, x, x, x, NULL, &r, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "does not fit"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fa2_random),
        cmocka_unit_test(test_naive_random),
        cmocka_unit_test(test_fa1_random),
        cmocka_unit_test(test_naive_heads_random),
        cmocka_unit_test(test_fa1_heads_random),
        cmocka_unit_test(test_fa2_heads_random),
        cmocka_unit_test(test_fa2_split_random),
        cmocka_unit_test(test_wrong_result_caught),
        cmocka_unit_test(test_block_bounds_agree),
        cmocka_unit_test(test_limits_refused),
        cmocka_unit_test(test_bug_skip_rescale_caught),
        cmocka_unit_test(test_bug_reload_q_caught),
        cmocka_unit_test(test_thread_count_independent),
        cmocka_unit_test(test_smem_is_the_plan),
        cmocka_unit_test(test_carve_is_the_layout),
        cmocka_unit_test(test_half_conversions),
        cmocka_unit_test(test_bulk_conversions),
        cmocka_unit_test(test_misfit_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
