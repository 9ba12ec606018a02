/*
 * test_flops.c — each loop order's FLOPs (sim_theory_flops, the closed forms
 * of sim/algo_*.c) equal FLOPs counted in this file tile by tile: the loop
 * nests walked with plain arithmetic, every score of a tile checked against
 * the mask's definition, and each line of the papers' pseudocode charged
 * per element, per row or per score where it works.
 *
 * The convention (sim_loop.h): a multiply-add of a matrix product is 2
 * FLOPs; outside the products 1 per exp, log, max, add, subtract, multiply
 * or division, a reduction over n values n, a dot product of n terms 2 n.
 * The scale 1/sqrt(d) and the mask are not counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "sim.h"
#include "mask_util.h"
#include "test_util.h"

/* The tile (i, j): its rows, columns and how many of its scores are
 * visible (every one counted). */
typedef struct {
    int64_t br, bc, seen;
} tile;

static tile tile_at(const sim_shape *sh, const sim_plan *p, int64_t i, int64_t j)
{
    const int64_t Nk = sh->Nk ? sh->Nk : sh->N;
    tile t = { min64(p->Br, sh->N - i * p->Br), min64(p->Bc, Nk - j * p->Bc), 0 };
    for (int64_t r = i * p->Br; r < i * p->Br + t.br; r++)
        for (int64_t c = j * p->Bc; c < j * p->Bc + t.bc; c++)
            t.seen += visible(sh, r, c);
    return t;
}

/* The FLOPs of one head, tile by tile, from the pseudocode. */
static sim_flops enum_flops(sim_algo algo, sim_pass pass, const sim_shape *sh,
                            const sim_plan *p)
{
    const double d = (double)sh->d, N = (double)sh->N;
    const int64_t S = p->run.splits > 1 ? p->run.splits : 1;
    sim_flops f = { 0.0, 0.0 };
    for (int64_t i = 0; i < p->Tr; i++) {
        for (int64_t j = 0; j < p->Tc; j++) {
            const tile t = tile_at(sh, p, i, j);
            const double br = (double)t.br, bc = (double)t.bc, sc = br * bc;
            sim_algo unfused;
            assert_int_equal(sim_algo_parse("unfused", &unfused), 0);
            if (algo == unfused) {
                /* every tile: the products as naive's; the softmax (forward,
                 * backward) as naive's; dropout one multiply per score */
                const double drop = p->run.dropout > 0.0 ? 1.0 : 0.0;
                if (pass == SIM_FWD) {
                    f.matmul += 2.0 * 2.0 * sc * d;
                    f.other += sc * ((p->softmax_passes == 1 ? 5.0 : 7.0) + drop);
                } else {
                    f.matmul += 4.0 * 2.0 * sc * d;
                    f.other += sc * (4.0 + drop);
                }
                continue;
            }
            if (algo == SIM_NAIVE) {
                /* every tile, masked scores included */
                if (pass == SIM_FWD) {
                    f.matmul += 2.0 * sc * d      /* line 1: S = Q K^T */
                              + 2.0 * sc * d;     /* line 3: O = P V */
                    if (p->softmax_passes == 1)   /* max; exp(s - m); sum; / l */
                        f.other += sc * (1.0 + 2.0 + 1.0 + 1.0);
                    else if (p->softmax_passes == 2)   /* FA2's line 9 | exp, / l */
                        f.other += sc * (1.0 + 2.0 + 1.0) + br * (1.0 + 3.0 + 1.0) +
                                   sc * 3.0;
                    else                          /* max | exp, sum | exp, / l */
                        f.other += sc * (1.0 + 3.0 + 3.0);
                } else {
                    f.matmul += 4.0 * 2.0 * sc * d;   /* dV, dP, dQ, dK */
                    f.other += sc * (2.0 + 2.0);      /* D = sum P dP; P (dP - D) */
                }
                continue;
            }
            if (t.seen == 0)
                continue;         /* FA1 and FA2 skip a fully masked tile */
            if (pass == SIM_BWD) {
                f.matmul += 5.0 * 2.0 * sc * d;       /* S, dV, dP, dQ, dK */
                if (algo == SIM_FA1)                  /* P = exp(S - m) / l; dS;
                                                         D_i = rowsum(dO_i o O_i) */
                    f.other += sc * (3.0 + 2.0) + br * 2.0 * d;
                else                                  /* P = exp(S - L); dS */
                    f.other += sc * (2.0 + 2.0);
                continue;
            }
            f.matmul += 2.0 * sc * d + 2.0 * sc * d;  /* S_ij = Q_i K_j^T; P~ V_j */
            if (algo == SIM_FA1) {
                /* line 10: rowmax, exp(S - m~) (sub, exp), rowsum */
                f.other += sc * (1.0 + 2.0 + 1.0);
                /* line 11: m_new = max(m_i, m~); l_new = e^(m_i - m_new) l_i
                 * + e^(m~ - m_new) l~: 2 subtractions, 2 exp, 2 products, 1 sum */
                f.other += br * (1.0 + 7.0);
                /* line 12: l_i e^(..) (1), times O_i (d), e^(m~ - m_new) P~V (d),
                 * the sum (d), / l_new (d) */
                f.other += br * (1.0 + 4.0 * d);
            } else {
                /* line 9: max(m_i, rowmax S): bc + 1; exp(S - m_new): 2 bc;
                 * l_i = e^(m_i - m_new) l_i + rowsum: 1 sub, 1 exp, 1 mul,
                 * bc, 1 add */
                f.other += sc * (1.0 + 2.0 + 1.0) + br * (1.0 + 3.0 + 1.0);
                /* line 10: e^(m_i - m_new) O_i + P~ V_j */
                f.other += br * 2.0 * d;
            }
        }
    }
    if (algo == SIM_FA2 && pass == SIM_FWD)   /* split-KV: S merges of 1 + 7 + 3 d */
        f.other += S > 1 ? N * (double)S * (8.0 + 3.0 * d) : 0.0;
    if (algo == SIM_FA2)                      /* per row once: forward, / l_i and
                                                 m_i + log l_i; backward, D */
        f.other += pass == SIM_FWD ? N * (d + 2.0) : N * 2.0 * d;
    return f;
}

static void check_run(sim_algo algo, sim_shape sh, const sim_run_opts run, int64_t Br,
                      int64_t Bc)
{
    const sim_pass pass = run.pass;
    const int64_t splits = run.splits;
    sim_plan p;
    char err[256];
    if (sim_check(&sh, &run, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(sim_plan_make(algo, &sh, &run, Br, Bc, SIM_PLAN_USER, &p), 0);
    sim_flops got;
    assert_int_equal(sim_theory_flops(&p, &sh, &got), 0);
    sim_flops want = enum_flops(algo, pass, &sh, &p);
    const double heads = (double)(sh.batch ? sh.batch : 1) * (double)(sh.heads ? sh.heads : 1);
    want.matmul *= heads;
    want.other *= heads;
    if (got.matmul != want.matmul || got.other != want.other)
        fail_msg("%s %s N=%lld Nk=%lld d=%lld Br=%lld Bc=%lld causal=%d W=%lld S=%lld: "
                 "matmul %.17g want %.17g, other %.17g want %.17g",
                 sim_algo_name(algo), pass == SIM_FWD ? "fwd" : "bwd", (long long)sh.N,
                 (long long)sh.Nk, (long long)sh.d, (long long)p.Br, (long long)p.Bc,
                 sh.causal, (long long)sh.window, (long long)splits, got.matmul,
                 want.matmul, got.other, want.other);
}

static void check(sim_algo algo, sim_pass pass, sim_shape sh, int64_t splits, int64_t Br,
                  int64_t Bc)
{
    const sim_run_opts run = { .pass = pass, .splits = splits };
    check_run(algo, sh, run, Br, Bc);
}

/* Every loop order and pass, causal or not, windows, longer keys, partial
 * last blocks on both sides, block sizes from 1 to past N. */
static void closed_forms_equal_enumeration(void **state)
{
    (void)state;
    static const int64_t Ns[] = { 1, 7, 16, 33, 64, 100 };
    static const int64_t ds[] = { 1, 8, 64 };
    static const int64_t Bs[][2] = { { 1, 1 }, { 16, 16 }, { 8, 24 }, { 32, 5 }, { 200, 7 } };
    int n = 0;
    for (size_t a = 0; a < sizeof Ns / sizeof Ns[0]; a++)
        for (int extra = 0; extra < 2; extra++)
            for (size_t b = 0; b < sizeof ds / sizeof ds[0]; b++)
                for (size_t c = 0; c < sizeof Bs / sizeof Bs[0]; c++)
                    for (int mask = 0; mask < 3; mask++) {
                        sim_shape sh = { .N = Ns[a], .d = ds[b], .M = 1u << 30,
                                         .dtype = SIM_FP16 };
                        sh.Nk = extra ? Ns[a] + 13 : 0;
                        sh.causal = mask > 0;
                        sh.window = mask == 2 ? 5 : 0;
                        sh.batch = extra ? 2 : 0;
                        sh.heads = extra ? 3 : 0;
                        for (int al = 0; al < sim_algo_count(); al++)
                            for (int ps = 0; ps < SIM_PASS_COUNT; ps++) {
                                check((sim_algo)al, (sim_pass)ps, sh, 0, Bs[c][0], Bs[c][1]);
                                n++;
                            }
                        /* standard attention's softmax over tiles, as asked */
                        for (int f = SIM_SOFTMAX_2PASS; f <= SIM_SOFTMAX_3PASS; f++) {
                            const sim_run_opts run = { .softmax = (sim_softmax)f };
                            check_run(SIM_NAIVE, sh, run, Bs[c][0], Bs[c][1]);
                            n++;
                        }
                        /* split-KV: FA2's forward only, S <= N_k */
                        const int64_t splits = min64(3, sh.Nk ? sh.Nk : sh.N);
                        if (splits > 1)
                            check(SIM_FA2, SIM_FWD, sh, splits, Bs[c][0], Bs[c][1]);
                    }
    assert_true(n > 1000);
}

/* Standard attention's softmax over tiles when no whole row fits: two
 * passes by default, whose first is FA2's line 9 on every tile (4 per score
 * and 5 per row of a tile), and three asked for; each computes exp twice. */
static void naive_three_passes(void **state)
{
    (void)state;
    sim_shape sh = { .N = 4096, .d = 16, .M = 16384, .dtype = SIM_FP16 };
    sim_plan p;
    assert_int_equal(sim_plan_make(SIM_NAIVE, &sh, NULL, 16, 16, SIM_PLAN_USER, &p), 0);
    assert_int_equal(p.softmax_passes, 2);
    sim_flops f;
    assert_int_equal(sim_theory_flops(&p, &sh, &f), 0);
    assert_true(f.other == 7.0 * 4096.0 * 4096.0 + 5.0 * 4096.0 * (4096.0 / 16.0));
    const sim_run_opts three = { .softmax = SIM_SOFTMAX_3PASS };
    assert_int_equal(sim_plan_make(SIM_NAIVE, &sh, &three, 16, 16, SIM_PLAN_USER, &p), 0);
    assert_int_equal(p.softmax_passes, 3);
    assert_int_equal(sim_theory_flops(&p, &sh, &f), 0);
    assert_true(f.other == 7.0 * 4096.0 * 4096.0);
    sh.M = 1u << 24;
    assert_int_equal(sim_plan_make(SIM_NAIVE, &sh, NULL, 16, 16, SIM_PLAN_USER, &p), 0);
    assert_int_equal(p.softmax_passes, 1);
    assert_int_equal(sim_theory_flops(&p, &sh, &f), 0);
    assert_true(f.other == 5.0 * 4096.0 * 4096.0);
}

/* The backward: standard attention does four N x N_k x d products, FA1 and
 * FA2 five (S recomputed), each with its own best plan: 10/8. */
static void backward_is_ten_eighths(void **state)
{
    (void)state;
    static const int64_t Ns[] = { 256, 1000, 4096 };
    for (size_t a = 0; a < 3; a++) {
        sim_shape sh = { .N = Ns[a], .d = 64, .M = 96 * 1024, .dtype = SIM_FP16,
                         .batch = 2, .heads = 4 };
        const sim_run_opts bwd = { .pass = SIM_BWD };
        sim_flops f[SIM_ALGO_MAX];
        for (int al = 0; al < sim_algo_count(); al++) {
            sim_plan p;
            char err[1024];
            assert_int_equal(sim_plan_choose((sim_algo)al, &sh, &bwd, SIM_PLAN_AUTO, 0, 0, &p,
                                             err, sizeof err), 0);
            assert_int_equal(sim_theory_flops(&p, &sh, &f[al]), 0);
        }
        const double NNd = 8.0 * (double)Ns[a] * (double)Ns[a] * 64.0;  /* B H = 8 */
        assert_true(f[SIM_NAIVE].matmul == 4.0 * 2.0 * NNd);
        assert_true(f[SIM_FA1].matmul == 5.0 * 2.0 * NNd);
        assert_true(f[SIM_FA2].matmul == 5.0 * 2.0 * NNd);
        assert_true(f[SIM_FA1].matmul * 8.0 == f[SIM_NAIVE].matmul * 10.0);
        assert_true(f[SIM_FA2].matmul * 8.0 == f[SIM_NAIVE].matmul * 10.0);
    }
}

/* FlashAttention-2's claim against FlashAttention (section 3.1), at the
 * same block sizes, not causal. At each of the T_c tiles a row meets, FA1
 * does line 11's l_new with a second exp, product and subtraction (3 more
 * than FA2's l_i, 8 against 5) and line 12's rescale (4 d + 1: O_i
 * rescaled, P~ V_j scaled, the sum, the division) where FA2 does 2 d; FA2
 * divides by l_i and forms L_i once per row (d + 2). So FA2 does
 * N T_c (2 d + 4) - N (d + 2) fewer. */
static void fa2_fewer_nonmatmul_than_fa1(void **state)
{
    (void)state;
    static const int64_t cfg[][4] = {   /* N, d, B_r, B_c */
        { 1024, 64, 64, 64 }, { 1000, 128, 32, 48 }, { 4096, 64, 128, 16 }, { 100, 8, 16, 100 }
    };
    for (size_t c = 0; c < 4; c++) {
        sim_shape sh = { .N = cfg[c][0], .d = cfg[c][1], .M = 1u << 30, .dtype = SIM_FP16 };
        sim_plan p1, p2;
        sim_flops f1, f2;
        assert_int_equal(sim_plan_make(SIM_FA1, &sh, NULL, cfg[c][2], cfg[c][3], SIM_PLAN_USER,
                                       &p1), 0);
        assert_int_equal(sim_plan_make(SIM_FA2, &sh, NULL, cfg[c][2], cfg[c][3], SIM_PLAN_USER,
                                       &p2), 0);
        assert_int_equal(sim_theory_flops(&p1, &sh, &f1), 0);
        assert_int_equal(sim_theory_flops(&p2, &sh, &f2), 0);
        const double N = (double)cfg[c][0], d = (double)cfg[c][1];
        const double Tc = (double)((cfg[c][0] + cfg[c][3] - 1) / cfg[c][3]);
        assert_true(f1.matmul == f2.matmul);
        assert_true(f2.other < f1.other);
        assert_true(f1.other - f2.other == N * Tc * (2.0 * d + 4.0) - N * (d + 2.0));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(closed_forms_equal_enumeration),
        cmocka_unit_test(naive_three_passes),
        cmocka_unit_test(backward_is_ten_eighths),
        cmocka_unit_test(fa2_fewer_nonmatmul_than_fa1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
