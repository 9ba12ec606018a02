/*
 * test_ring.c — ring attention across devices (study/sim_ring.h).
 *
 * Counts: over random configurations, each device's HBM bytes and tile
 * steps equal FA2's closed form summed over the sub-shapes of its rounds,
 * both worked out here from the ring's definition (which device's block a
 * round holds, which rows it sees) and FA2's loop nest (Q read once, O and
 * L written once, K_j and V_j read for every visited block pair), not with
 * the module's helpers. Link bytes: 2 c d B G elements each round but the
 * last. Numerics: the merged output against the float64 oracle within
 * FA2's tolerance, the same bits on a second run. The zig-zag order's
 * balance and the contiguous order's exact imbalance. A known-wrong
 * placement of the rows must fail the oracle. Bad input through the
 * command line: exit status 2 and a message naming the problem.
 */
#define _POSIX_C_SOURCE 200809L   /* popen */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ref_oracle.h"
#include "sim.h"
#include "sim_ring.h"
#include "test_util.h"

static const char *g_fasim, *g_readme;

/* ---- FA2's closed form, worked out here ---- */

typedef struct {
    uint64_t bytes;     /* HBM bytes, all B H heads */
    uint64_t steps;     /* visited block pairs, all B H heads */
} cost;

/* One FA2 forward run of N_q x N_k rows (causal: the queries are the last
 * N_q keys), blocks Br x Bc clamped to the rows, B H query heads: Q read
 * once, O written once (dtype), L written once (4 B), and for each visited
 * pair (i, j) the key block's rows of K and of V read. */
static cost fa2_cost(int64_t Nq, int64_t Nk, int causal, int64_t d, int64_t Br, int64_t Bc,
                     int64_t heads, int s)
{
    if (Br > Nq)
        Br = Nq;
    if (Bc > Nk)
        Bc = Nk;
    uint64_t kv_rows = 0, pairs = 0;
    for (int64_t r0 = 0; r0 < Nq; r0 += Br) {
        const int64_t r1 = (r0 + Br < Nq ? r0 + Br : Nq) - 1;
        const int64_t last_key = causal ? r1 + (Nk - Nq) : Nk - 1;
        for (int64_t c0 = 0; c0 < Nk && c0 <= last_key; c0 += Bc) {
            pairs++;
            kv_rows += (uint64_t)((c0 + Bc < Nk ? c0 + Bc : Nk) - c0);
        }
    }
    cost c;
    c.bytes = (uint64_t)heads * ((uint64_t)(2 * Nq * d) * (uint64_t)s + 4u * (uint64_t)Nq +
                                 2u * kv_rows * (uint64_t)d * (uint64_t)s);
    c.steps = (uint64_t)heads * pairs;
    return c;
}

/* Device p's round r of a ring of P devices holding c rows each: the cost
 * of the block it computes against. */
static cost round_cost(int P, int zig, int causal, int p, int r, int64_t c, int64_t d,
                       int64_t Br, int64_t Bc, int64_t heads, int s)
{
    const int q = ((p - r) % P + P) % P;     /* whose K, V block it holds */
    const cost none = { 0, 0 };
    if (!causal)
        return fa2_cost(c, c, 0, d, Br, Bc, heads, s);
    if (q == p)
        return fa2_cost(c, c, 1, d, Br, Bc, heads, s);
    if (!zig)
        return q < p ? fa2_cost(c, c, 0, d, Br, Bc, heads, s) : none;
    /* zig-zag: p holds chunks p and 2P-1-p of c/2 rows, q likewise */
    return q < p ? fa2_cost(c, c / 2, 0, d, Br, Bc, heads, s)
                 : fa2_cost(c / 2, c, 0, d, Br, Bc, heads, s);
}

static void test_counts_random(void **state)
{
    (void)state;
    uint64_t rng = 20261204;
    const int64_t blocks[] = { 1, 7, 16, 32, 64, 128 };
    for (int k = 0; k < 120; k++) {
        const int P = (int)tu_rand_range(&rng, 1, 8);
        const int zig = (int)tu_rand_range(&rng, 0, 1);
        const int causal = (int)tu_rand_range(&rng, 0, 1);
        int64_t c = tu_rand_range(&rng, 16, 96);
        if (zig)
            c += c & 1;
        sim_shape sh = { .N = c * P, .d = tu_rand_range(&rng, 1, 64), .M = 1u << 30,
                         .dtype = (sim_dtype)tu_rand_range(&rng, 0, 2), .causal = causal };
        sh.batch = tu_rand_range(&rng, 1, 2);
        sh.heads = tu_rand_range(&rng, 1, 4);
        sh.kv_heads = tu_rand_range(&rng, 0, 1) ? sh.heads : 1;
        const int64_t Br = blocks[tu_rand_range(&rng, 0, 5)];
        const int64_t Bc = blocks[tu_rand_range(&rng, 0, 5)];
        const sim_ring_req rq = { P, zig ? SIM_RING_ZIGZAG : SIM_RING_CONTIGUOUS, NULL, 0 };
        sim_ring g;
        char err[256];
        if (sim_ring_build(&sh, NULL, &rq, Br, Bc, NULL, NULL, NULL, NULL, &g, err,
                           sizeof err) != 0)
            fail_msg("config %d: %s", k, err);
        const int s = sim_dtype_bytes(sh.dtype);
        const int64_t heads = sh.batch * sh.heads, kvh = sh.batch * sh.kv_heads;
        const uint64_t block = 2u * (uint64_t)(c * sh.d * kvh) * (uint64_t)s;
        uint64_t total = 0, total_want = 0;
        for (int p = 0; p < P; p++) {
            cost want = { 0, 0 };
            for (int r = 0; r < P; r++) {
                const cost rc = round_cost(P, zig, causal, p, r, c, sh.d, Br, Bc, heads, s);
                want.bytes += rc.bytes;
                want.steps += rc.steps;
            }
            if (g.dev[p].hbm_bytes != want.bytes || g.dev[p].steps != want.steps)
                fail_msg("config %d (N %lld d %lld P %d %s %s Br %lld Bc %lld B %lld H %lld "
                         "G %lld) device %d: %llu bytes, %llu steps; want %llu, %llu", k,
                         (long long)sh.N, (long long)sh.d, P, zig ? "zigzag" : "contiguous",
                         causal ? "causal" : "full", (long long)Br, (long long)Bc,
                         (long long)sh.batch, (long long)sh.heads, (long long)sh.kv_heads, p,
                         (unsigned long long)g.dev[p].hbm_bytes,
                         (unsigned long long)g.dev[p].steps,
                         (unsigned long long)want.bytes, (unsigned long long)want.steps);
            /* Each round but the last sends the block in hand and receives
             * the next: 2 c d B G elements each way. */
            assert_int_equal(g.dev[p].sent_bytes, (uint64_t)(P - 1) * block);
            assert_int_equal(g.dev[p].recv_bytes, (uint64_t)(P - 1) * block);
            assert_int_equal(g.dev[p].ag_recv_bytes, (uint64_t)(P - 1) * block);
            total += g.dev[p].hbm_bytes;
            total_want += want.bytes;
        }
        assert_int_equal(g.block_bytes, block);
        assert_int_equal(total, total_want);
        /* Q, O_r (dtype), the fp32 accumulator, L and L_r, two K, V blocks
         * (one alone on one device: nothing arrives). */
        assert_int_equal(g.peak_bytes, (uint64_t)(heads * c) * (uint64_t)(sh.d * (2 * s + 4) + 8) +
                                           (P > 1 ? 2 : 1) * block);
        sim_ring_free(&g);
    }
}

/* Contiguous causal: device p computes in p + 1 rounds, its own block
 * (causal) and p full ones. Zig-zag: P rounds each, the same tile steps
 * (B_r = B_c). */
static void test_balance(void **state)
{
    (void)state;
    const int P = 8;
    const int64_t c = 64, d = 16, B = 64;
    sim_shape sh = { .N = c * P, .d = d, .M = 1u << 30, .dtype = SIM_FP16, .causal = 1 };
    sim_ring g;
    char err[256];
    sim_ring_req rq = { P, SIM_RING_CONTIGUOUS, NULL, 0 };
    assert_int_equal(sim_ring_build(&sh, NULL, &rq, B, B, NULL, NULL, NULL, NULL, &g, err,
                                    sizeof err), 0);
    const cost diag = fa2_cost(c, c, 1, d, B, B, 1, 2), full = fa2_cost(c, c, 0, d, B, B, 1, 2);
    for (int p = 0; p < P; p++) {
        assert_int_equal(g.dev[p].rounds_computed, (uint64_t)(p + 1));
        assert_int_equal(g.dev[p].steps, diag.steps + (uint64_t)p * full.steps);
    }
    sim_ring_free(&g);
    rq.order = SIM_RING_ZIGZAG;
    assert_int_equal(sim_ring_build(&sh, NULL, &rq, B, B, NULL, NULL, NULL, NULL, &g, err,
                                    sizeof err), 0);
    for (int p = 0; p < P; p++) {
        assert_int_equal(g.dev[p].rounds_computed, (uint64_t)P);
        assert_int_equal(g.dev[p].steps, g.dev[0].steps);
    }
    /* and the same work in all, causal c x c plus P - 1 half blocks */
    assert_int_equal(g.dev[0].steps,
                     diag.steps + (uint64_t)(P - 1) * fa2_cost(c, c / 2, 0, d, B, B, 1, 2).steps);
    sim_ring_free(&g);
}

/* ---- numerics ---- */

typedef struct {
    sim_shape sh;
    float *Q, *K, *V;      /* (B, H, N, d); (B, G, N, d) */
    double *O_ref;         /* (B, H, N, d) */
    double v_max;
} problem;

static problem make_problem(uint64_t seed, int64_t N, int64_t d, int64_t H, int64_t G,
                            sim_dtype dt, int causal)
{
    problem pr;
    memset(&pr, 0, sizeof pr);
    pr.sh = (sim_shape){ .N = N, .d = d, .M = 1u << 30, .dtype = dt, .causal = causal,
                         .heads = H, .kv_heads = G };
    const size_t nq = (size_t)(H * N * d), nk = (size_t)(G * N * d);
    pr.Q = malloc(nq * sizeof *pr.Q);
    pr.K = malloc(nk * sizeof *pr.K);
    pr.V = malloc(nk * sizeof *pr.V);
    pr.O_ref = malloc(nq * sizeof *pr.O_ref);
    assert_non_null(pr.Q);
    assert_non_null(pr.K);
    assert_non_null(pr.V);
    assert_non_null(pr.O_ref);
    float *scratch = malloc((size_t)(N * d) * sizeof *scratch);
    assert_non_null(scratch);
    for (int64_t h = 0; h < H; h++)
        sim_random_qkv(seed + 7u * (uint64_t)h, N, N, d, dt, pr.Q + h * N * d, scratch,
                       scratch);
    for (int64_t g = 0; g < G; g++)
        sim_random_qkv(seed + 1000u + 7u * (uint64_t)g, N, N, d, dt, scratch,
                       pr.K + g * N * d, pr.V + g * N * d);
    free(scratch);
    for (size_t k = 0; k < nk; k++)
        pr.v_max = fmax(pr.v_max, fabs(pr.V[k]));
    const ref_mask mk = { causal, 0, 0, NULL };
    for (int64_t h = 0; h < H; h++) {
        const int64_t g = h / (H / G);
        assert_int_equal(ref_oracle_attention_masked(pr.Q + h * N * d, pr.K + g * N * d,
                                                     pr.V + g * N * d, N, N, d, &mk,
                                                     pr.O_ref + h * N * d, NULL), 0);
    }
    return pr;
}

static void free_problem(problem *pr)
{
    free(pr->Q);
    free(pr->K);
    free(pr->V);
    free(pr->O_ref);
}

/* FA2's tolerance (tests/test_numerics.c): 1.5 u max|V| + 1e-5. */
static double tolerance(sim_dtype dt, double v_max)
{
    const double u = dt == SIM_FP16 ? ldexp(1.0, -11) : dt == SIM_BF16 ? ldexp(1.0, -8) : 0.0;
    return 1.5 * u * v_max + 1e-5;
}

static void test_oracle(void **state)
{
    (void)state;
    static const struct {
        int64_t N, d, H, G, Br, Bc;
        int P;
        sim_dtype dt;
    } C[] = {
        { 64, 16, 1, 1, 16, 16, 2, SIM_FP16 },  { 96, 8, 2, 1, 16, 32, 3, SIM_FP16 },
        { 128, 32, 2, 2, 32, 16, 4, SIM_BF16 }, { 160, 16, 1, 1, 7, 9, 5, SIM_FP32 },
        { 64, 4, 3, 3, 64, 64, 1, SIM_FP16 },   { 256, 16, 1, 1, 32, 32, 8, SIM_FP16 },
    };
    for (size_t k = 0; k < sizeof C / sizeof C[0]; k++)
        for (int causal = 0; causal <= 1; causal++)
            for (int zig = 0; zig <= 1; zig++) {
                if (zig && C[k].N % (2 * C[k].P))
                    continue;
                problem pr = make_problem(300u + k, C[k].N, C[k].d, C[k].H, C[k].G, C[k].dt,
                                          causal);
                const sim_ring_req rq = { C[k].P, zig ? SIM_RING_ZIGZAG : SIM_RING_CONTIGUOUS,
                                          NULL, 0 };
                sim_ring a, b;
                char err[256], what[96];
                assert_int_equal(sim_ring_build(&pr.sh, NULL, &rq, C[k].Br, C[k].Bc, NULL,
                                                pr.Q, pr.K, pr.V, &a, err, sizeof err), 0);
                assert_int_equal(sim_ring_build(&pr.sh, NULL, &rq, C[k].Br, C[k].Bc, NULL,
                                                pr.Q, pr.K, pr.V, &b, err, sizeof err), 0);
                const int64_t n = C[k].H * C[k].N * C[k].d;
                snprintf(what, sizeof what, "config %zu %s %s", k, causal ? "causal" : "full",
                         zig ? "zigzag" : "contiguous");
                assert_int_equal(tu_compare_f64(what, a.O, pr.O_ref, n,
                                                tolerance(C[k].dt, pr.v_max)), 0);
                assert_int_equal(tu_compare_bits(what, a.O, b.O, n), 0);
                sim_ring_free(&a);
                sim_ring_free(&b);
                free_problem(&pr);
            }
}

/* A known-wrong result must fail: the zig-zag ring's rows put back as if
 * each device held contiguous rows (the chunks left unpermuted). */
static void test_wrong_placement_fails(void **state)
{
    (void)state;
    const int P = 4;
    const int64_t N = 128, d = 16, c = N / P, h = c / 2;
    problem pr = make_problem(77, N, d, 1, 1, SIM_FP16, 1);
    const sim_ring_req rq = { P, SIM_RING_ZIGZAG, NULL, 0 };
    sim_ring g;
    char err[256];
    assert_int_equal(sim_ring_build(&pr.sh, NULL, &rq, 16, 16, NULL, pr.Q, pr.K, pr.V, &g,
                                    err, sizeof err), 0);
    float *wrong = malloc((size_t)(N * d) * sizeof *wrong);
    assert_non_null(wrong);
    for (int p = 0; p < P; p++)
        for (int64_t i = 0; i < c; i++) {
            const int64_t zig_row = i < h ? p * h + i : (2 * P - 1 - p) * h + (i - h);
            memcpy(wrong + (p * c + i) * d, g.O + zig_row * d, (size_t)d * sizeof *wrong);
        }
    const double tol = tolerance(SIM_FP16, pr.v_max);
    fprintf(stderr, "  (the mismatches below are expected: a wrong placement)\n");
    assert_true(tu_compare_f64("unpermuted", wrong, pr.O_ref, N * d, tol) > 0);
    assert_int_equal(tu_compare_f64("right", g.O, pr.O_ref, N * d, tol), 0);
    free(wrong);
    sim_ring_free(&g);
    free_problem(&pr);
}

/* The view's watched row: after the last round, L = m + log l of the
 * merge's running state is the row's logsumexp, against the oracle's. */
static void test_watch(void **state)
{
    (void)state;
    const int P = 4;
    const int64_t N = 128, d = 16, c = N / P, h = c / 2, w = 5;
    problem pr = make_problem(91, N, d, 1, 1, SIM_FP32, 1);
    double *O = malloc((size_t)(N * d) * sizeof *O), *L = malloc((size_t)N * sizeof *L);
    assert_non_null(O);
    assert_non_null(L);
    const ref_mask mk = { 1, 0, 0, NULL };
    assert_int_equal(ref_oracle_attention_masked(pr.Q, pr.K, pr.V, N, N, d, &mk, O, L), 0);
    for (int zig = 0; zig <= 1; zig++) {
        const sim_ring_req rq = { P, zig ? SIM_RING_ZIGZAG : SIM_RING_CONTIGUOUS, NULL, w };
        sim_ring g;
        char err[256];
        assert_int_equal(sim_ring_build(&pr.sh, NULL, &rq, 8, 8, NULL, pr.Q, pr.K, pr.V, &g,
                                        err, sizeof err), 0);
        for (int p = 0; p < P; p++) {
            const int64_t row = zig ? (w < h ? p * h + w : (2 * P - 1 - p) * h + w - h)
                                    : p * c + w;
            const double got = (double)g.watch_m[p * P + P - 1] +
                               log((double)g.watch_l[p * P + P - 1]);
            if (fabs(got - L[row]) > 1e-5)
                fail_msg("%s device %d row %lld: L = %.9g, oracle %.9g",
                         zig ? "zigzag" : "contiguous", p, (long long)row, got, L[row]);
        }
        sim_ring_free(&g);
    }
    free(O);
    free(L);
    free_problem(&pr);
}

/* ---- the command line ---- */

/* Run fasim with args (a shell word list), stdout and stderr captured
 * together into out; returns the exit status. */
static int run(char *out, size_t len, const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", g_fasim, args);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t n = fread(out, 1, len - 1, f);
    out[n] = '\0';
    const int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void expect(const char *args, int code, const char *text)
{
    static char out[1 << 16];
    const int got = run(out, sizeof out, args);
    if (got != code || !strstr(out, text))
        fail_msg("fasim %s: exit %d, want %d with \"%s\"; output:\n%.2000s", args, got, code,
                 text, out);
}

static void test_cli_refusals(void **state)
{
    (void)state;
    expect("--N 100 --ring 3", 2, "not a multiple of 3");
    expect("--N 96 --ring 5 --ring-order zigzag", 2, "not a multiple of 10");
    expect("--N 96 --ring 0", 2, "--ring");
    expect("--N 1024 --ring 128", 2, "at least 16");
    expect("--N 256 --ring 2 --link warp", 2, "no such link (nvlink3");
    expect("--N 256 --ring 2 --ring-order spiral", 2, "contiguous or zigzag");
    expect("--N 256 --ring 2 --algo fa1", 2, "--algo fa1 is not a ring");
    expect("--N 256 --ring 2 --pass both", 2, "cannot be combined with --pass");
    expect("--N 256 --ring 2 --splits 2", 2, "cannot be combined with --splits");
    expect("--N 256 --ring 2 --page-size 16", 2, "cannot be combined with --page-size");
    expect("--N 256 --ring 2 --window 8", 2, "--window");
    expect("--N 256 --ring 2 --block-mask local:1", 2, "cannot be combined with --block-mask");
    expect("view --N 256 --ring 2 --block-mask local:1", 2, "cannot be combined with --block-mask");
    expect("--N 256 --Nk 512 --ring 2", 2, "N_q = N_k");
    expect("--N 256 --link nvlink4", 2, "goes with --ring");
    expect("gpu --backend cpu --N 256 --ring 2", 2, "runs its kernels on one device");
    expect("view --N 256 --ring 2 --sdl", 2, "cannot be combined with --sdl");
    expect("view --N 256 --ring 2 --algo fa1", 2, "cannot be combined with --algo");
    expect("view --N 256 --ring-order zigzag", 2, "goes with --ring");
    expect("view --N 100 --ring 3", 2, "not a multiple of 3");
    expect("view --N 64 --ring 4 --row 16", 2, "0 .. 15");
}

static void test_cli_runs(void **state)
{
    (void)state;
    static char out[1 << 17];
    assert_int_equal(run(out, sizeof out, "--N 256 --d 32 --ring 4 --causal --gpu h100 "
                                          "--link nvlink4"), 0);
    assert_non_null(strstr(out, "RING ATTENTION: P = 4 devices, contiguous order"));
    assert_non_null(strstr(out, "merged output against the float64 oracle"));
    assert_non_null(strstr(out, "ALL-GATHER"));
    assert_int_equal(run(out, sizeof out, "--N 256 --d 32 --ring 1 --json --count-only"), 0);
    assert_non_null(strstr(out, "\"ring\":{\"P\":1,"));
    assert_int_equal(run(out, sizeof out, "--N 256 --d 32 --ring 1 --count-only"), 0);
    assert_non_null(strstr(out, "P = 1: one device, one round: plain FA2"));
    assert_non_null(strstr(out, "RING ATTENTION: P = 1 device,"));
    assert_int_equal(run(out, sizeof out, "ring-memory --help"), 0);
    assert_non_null(strstr(out, "usage: fasim ring-memory"));
    assert_int_equal(run(out, sizeof out, "ring-memory --gpu h200"), 0);
    assert_non_null(strstr(out, "does not compare like with like"));
    /* Without --link, link times are null in the JSON, not 0. */
    assert_int_equal(run(out, sizeof out, "--N 256 --d 32 --ring 2 --gpu h100 --json "
                                          "--count-only"), 0);
    assert_non_null(strstr(out, "\"link\":null,\"link_bytes_per_s\":null"));
    assert_non_null(strstr(out, "\"link_s\":null"));
    assert_null(strstr(out, "\"link_s\":0"));
    /* Past 64 devices the per-device table is cut, the totals still of all. */
    assert_int_equal(run(out, sizeof out, "--N 2048 --d 16 --ring 128 --count-only"), 0);
    assert_non_null(strstr(out, "(devices 32 .. 95 left out but the slowest; the total is of "
                                "all 128)"));
    assert_null(strstr(out, "\n    64 "));
    /* The view's small default M at d = 128 fits no square tile: the ring
     * takes FA2's best plan in M, as the plain view does. */
    assert_int_equal(run(out, sizeof out, "view --N 256 --d 128 --ring 4"), 0);
    assert_non_null(strstr(out, "-- round 3 of 4 --"));
    assert_int_equal(run(out, sizeof out, "view --N 64 --d 8 --ring 4 --causal"), 0);
    assert_non_null(strstr(out, "-- round 3 of 4 --"));
    assert_non_null(strstr(out, "device 0: K, V of 3: skipped: every score masked"));
    assert_non_null(strstr(out, "device 3: K, V of 0: full block, 16 x 16"));
}

/* fasim ring-memory: each row's tokens a device from the memory model,
 * worked out here: (HBM - 16 params / n) / (h (2 L + 34)) bytes a token. */
static void test_ring_memory(void **state)
{
    (void)state;
    static const struct {
        int n;
        double params, h, L, paper_k;
    } want[] = {
        { 8, 3.43e9, 3200, 26, 512 },  { 8, 6.7e9, 4096, 32, 256 },
        { 8, 13.0e9, 5120, 40, 128 },  { 32, 6.7e9, 4096, 32, 4096 },
        { 32, 13.0e9, 5120, 40, 2048 },
    };
    const uint64_t hbm = 80000000000u;       /* an A100 80GB */
    sim_ring_memory_row rows[8];
    assert_int_equal(sim_ring_memory_rows(hbm, rows, 8), 5);
    for (int k = 0; k < 5; k++) {
        const double c = floor((8e10 - 16.0 * want[k].params / want[k].n) /
                               (want[k].h * (2.0 * want[k].L + 34.0)));
        assert_int_equal(rows[k].devices, want[k].n);
        assert_int_equal(rows[k].tokens_per_device, (int64_t)c);
        assert_int_equal(rows[k].tokens, (int64_t)c * want[k].n);
        assert_int_equal(rows[k].paper_tokens, (int64_t)want[k].paper_k * 1024);
    }
    static char out[1 << 14];
    assert_int_equal(run(out, sizeof out, "ring-memory"), 0);
    assert_non_null(strstr(out, "512K"));
    assert_non_null(strstr(out, "assumed"));
    expect("ring-memory --gpu tpu", 2, "--gpu tpu");
    expect("ring-memory --N 5", 2, "unknown option");
}

/* The README's sample of the section is what fasim prints: from its
 * heading to the end of the output. */
static void test_readme_sample(void **state)
{
    (void)state;
    static char out[1 << 17], readme[1 << 20];
    assert_int_equal(run(out, sizeof out, "--N 65536 --d 128 --heads 32 --causal --ring 8 "
                                          "--gpu h100 --link nvlink4 --ring-order zigzag"), 0);
    FILE *f = fopen(g_readme, "r");
    assert_non_null(f);
    const size_t n = fread(readme, 1, sizeof readme - 1, f);
    readme[n] = '\0';
    fclose(f);
    const char *live = strstr(out, "RING ATTENTION");
    const char *doc = strstr(readme, "```\nRING ATTENTION");
    assert_non_null(live);
    assert_non_null(doc);
    doc += 4;
    const char *end = strstr(doc, "```\n");
    assert_non_null(end);
    const size_t want = (size_t)(end - doc), got = strlen(live);
    if (got != want || memcmp(live, doc, want) != 0)
        fail_msg("README's ring sample differs from the live output:\n%.3000s", live);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_ring PATH_TO_FASIM README.md\n");
        return 2;
    }
    g_fasim = argv[1];
    g_readme = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_random),
        cmocka_unit_test(test_balance),
        cmocka_unit_test(test_oracle),
        cmocka_unit_test(test_wrong_placement_fails),
        cmocka_unit_test(test_watch),
        cmocka_unit_test(test_cli_refusals),
        cmocka_unit_test(test_cli_runs),
        cmocka_unit_test(test_ring_memory),
        cmocka_unit_test(test_readme_sample),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
