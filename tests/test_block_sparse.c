/*
 * test_block_sparse.c — block-sparse FlashAttention (--block-mask).
 *
 * The counts of FA1's and FA2's forward and FA2's backward are checked per
 * tensor against forms this file writes itself from the mask: it finds the
 * visited tiles by looking at every score of every tile (a tile is visited
 * iff one of its scores is visible: its block of the mask is 1 and the
 * causal rule lets the row see the key), then sums what each loop order's
 * pseudocode moves at a visited tile. The other loop orders and passes are
 * held to the library's closed forms. Compute mode is checked against a
 * float64 attention written here with the same element-wise mask; an
 * all-ones mask against the dense run; the refusals through the command
 * line. One check must fail: the form with one visited tile left out.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_oracle.h"
#include "sim.h"
#include "sim_bmask.h"
#include "sim_loop.h"
#include "sweep_util.h"

static const char *g_fasim;

/* ---- the mask, element by element, as this file reads it ----------------- */

typedef struct {
    int64_t N, Nk, W;
    int causal;
    const sim_block_mask *b;
} emask;

static int visible(const emask *e, int64_t r, int64_t c)
{
    const sim_block_mask *b = e->b;
    if (b && !b->m.bits[(r / b->m.br) * b->m.cols + c / b->m.bc])
        return 0;
    if (!e->causal)
        return 1;
    const int64_t pos = r + (e->Nk - e->N);      /* the query's place among the keys */
    return c <= pos && (e->W == 0 || c > pos - e->W);
}

/* The visited tiles of Br x Bc, one byte each (T_r x T_c), by every score. */
static unsigned char *tiles_of(const emask *e, int64_t Br, int64_t Bc, int64_t *Tr,
                               int64_t *Tc)
{
    *Tr = (e->N + Br - 1) / Br;
    *Tc = (e->Nk + Bc - 1) / Bc;
    unsigned char *t = calloc((size_t)(*Tr * *Tc), 1);
    assert_non_null(t);
    for (int64_t i = 0; i < *Tr; i++)
        for (int64_t j = 0; j < *Tc; j++) {
            int any = 0;
            for (int64_t r = i * Br; r < (i + 1) * Br && r < e->N && !any; r++)
                for (int64_t c = j * Bc; c < (j + 1) * Bc && c < e->Nk && !any; c++)
                    any = visible(e, r, c);
            t[i * *Tc + j] = (unsigned char)any;
        }
    return t;
}

/* The sums the forms are written in, over the visited tiles (skip: one tile
 * left out, the known-wrong form; -1 none). */
typedef struct {
    uint64_t pairs, rows, keys, kv_blocks, kv_keys;
} sums;

static sums sums_of(const emask *e, int64_t Br, int64_t Bc, int64_t skip)
{
    int64_t Tr, Tc;
    unsigned char *t = tiles_of(e, Br, Bc, &Tr, &Tc);
    sums s = { 0, 0, 0, 0, 0 };
    for (int64_t j = 0; j < Tc; j++) {
        const uint64_t bc = (uint64_t)((j + 1) * Bc <= e->Nk ? Bc : e->Nk - j * Bc);
        int seen = 0;
        for (int64_t i = 0; i < Tr; i++) {
            if (!t[i * Tc + j] || i * Tc + j == skip)
                continue;
            const uint64_t br = (uint64_t)((i + 1) * Br <= e->N ? Br : e->N - i * Br);
            s.pairs++;
            s.rows += br;
            s.keys += bc;
            seen = 1;
        }
        s.kv_blocks += (uint64_t)seen;
        s.kv_keys += seen ? bc : 0;
    }
    free(t);
    return s;
}

static void put(sim_counts *c, sim_tensor t, int wr, uint64_t elems, uint64_t ops)
{
    if (wr) {
        c->write_elems[t] += elems;
        c->write_ops[t] += ops;
    } else {
        c->read_elems[t] += elems;
        c->read_ops[t] += ops;
    }
}

/* FA2's forward (Algorithm 1 of the FlashAttention-2 paper): Q_i in and O_i,
 * L_i out once per query block; K_j, V_j in at every visited tile. */
static sim_counts fa2_fwd_form(const emask *e, int64_t d, int64_t Br, const sums *s)
{
    sim_counts c;
    memset(&c, 0, sizeof c);
    const uint64_t N = (uint64_t)e->N, Tr = (uint64_t)((e->N + Br - 1) / Br);
    put(&c, SIM_Q, 0, N * (uint64_t)d, Tr);
    put(&c, SIM_O, 1, N * (uint64_t)d, Tr);
    put(&c, SIM_L, 1, N, Tr);
    put(&c, SIM_K, 0, s->keys * (uint64_t)d, s->pairs);
    put(&c, SIM_V, 0, s->keys * (uint64_t)d, s->pairs);
    return c;
}

/* FA1's forward (Algorithm 1 of the FlashAttention paper) with its fp32
 * running output O_acc: O_acc, l, m set in HBM once per query block; K_j,
 * V_j in once per key block some query sees; at every visited tile Q_i,
 * O_acc, l_i, m_i in and l_i, m_i out, O_i out to O at a query block's last
 * visited tile and to O_acc at the others. */
static sim_counts fa1_fwd_form(const emask *e, int64_t d, int64_t Br, const sums *s)
{
    sim_counts c;
    memset(&c, 0, sizeof c);
    const uint64_t N = (uint64_t)e->N, D = (uint64_t)d, Tr = (uint64_t)((e->N + Br - 1) / Br);
    put(&c, SIM_Oacc, 1, N * D, Tr);
    put(&c, SIM_l, 1, N, Tr);
    put(&c, SIM_m, 1, N, Tr);
    put(&c, SIM_K, 0, s->kv_keys * D, s->kv_blocks);
    put(&c, SIM_V, 0, s->kv_keys * D, s->kv_blocks);
    put(&c, SIM_Q, 0, s->rows * D, s->pairs);
    put(&c, SIM_Oacc, 0, s->rows * D, s->pairs);
    put(&c, SIM_l, 0, s->rows, s->pairs);
    put(&c, SIM_m, 0, s->rows, s->pairs);
    put(&c, SIM_l, 1, s->rows, s->pairs);
    put(&c, SIM_m, 1, s->rows, s->pairs);
    put(&c, SIM_O, 1, N * D, Tr);
    put(&c, SIM_Oacc, 1, s->rows * D - N * D, s->pairs - Tr);
    return c;
}

/* FA2's backward (Algorithm 2 of the FlashAttention-2 paper) with its fp32
 * dQ_acc: dQ_acc zeroed, D = rowsum(dO o O) per query block; K_j, V_j in for
 * every key block some query sees, dK_j, dV_j out for every key block; at
 * every visited tile Q_i, dO_i, L_i, D_i in and dQ_i in and out; dQ_acc
 * read once more and written to dQ at the end. */
static sim_counts fa2_bwd_form(const emask *e, int64_t d, int64_t Br, int64_t Bc,
                               const sums *s)
{
    sim_counts c;
    memset(&c, 0, sizeof c);
    const uint64_t N = (uint64_t)e->N, D = (uint64_t)d, Tr = (uint64_t)((e->N + Br - 1) / Br);
    const uint64_t Tc = (uint64_t)((e->Nk + Bc - 1) / Bc), Nk = (uint64_t)e->Nk;
    put(&c, SIM_dQacc, 1, N * D, Tr);
    put(&c, SIM_O, 0, N * D, Tr);
    put(&c, SIM_dO, 0, N * D, Tr);
    put(&c, SIM_D, 1, N, Tr);
    put(&c, SIM_K, 0, s->kv_keys * D, s->kv_blocks);
    put(&c, SIM_V, 0, s->kv_keys * D, s->kv_blocks);
    put(&c, SIM_Q, 0, s->rows * D, s->pairs);
    put(&c, SIM_dO, 0, s->rows * D, s->pairs);
    put(&c, SIM_L, 0, s->rows, s->pairs);
    put(&c, SIM_D, 0, s->rows, s->pairs);
    put(&c, SIM_dQacc, 0, s->rows * D, s->pairs);
    put(&c, SIM_dQacc, 1, s->rows * D, s->pairs);
    put(&c, SIM_dQacc, 0, N * D, Tr);
    put(&c, SIM_dQ, 1, N * D, Tr);
    put(&c, SIM_dK, 1, Nk * D, Tc);
    put(&c, SIM_dV, 1, Nk * D, Tc);
    return c;
}

/* The first tensor and direction where a and b differ, printed; 0 if none. */
static int differ(const char *what, const sim_counts *a, const sim_counts *b)
{
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        if (a->read_elems[t] != b->read_elems[t] || a->read_ops[t] != b->read_ops[t] ||
            a->write_elems[t] != b->write_elems[t] || a->write_ops[t] != b->write_ops[t]) {
            print_message("%s: %s read %llu/%llu vs %llu/%llu, write %llu/%llu vs %llu/%llu\n",
                          what, sim_tensor_name((sim_tensor)t),
                          (unsigned long long)a->read_elems[t],
                          (unsigned long long)a->read_ops[t],
                          (unsigned long long)b->read_elems[t],
                          (unsigned long long)b->read_ops[t],
                          (unsigned long long)a->write_elems[t],
                          (unsigned long long)a->write_ops[t],
                          (unsigned long long)b->write_elems[t],
                          (unsigned long long)b->write_ops[t]);
            return 1;
        }
    return 0;
}

/* A count-only run of plan p; its counts and steps. */
static sim_counts measure(sim_algo a, const sim_shape *sh, const sim_plan *p, uint64_t *steps)
{
    sim_result res;
    char err[512];
    if (sim_run(a, sh, p, NULL, NULL, NULL, NULL, &res, err, sizeof err) != 0)
        fail_msg("run %s: %s", sim_algo_name(a), err);
    if (steps)
        *steps = res.steps;
    sim_counts c = res.counts;
    sim_result_free(&res);
    return c;
}

/* ---- masks of the configurations ------------------------------------------ */

/* A random grid of R x C blocks over N x Nk (a file's), each block 1 with
 * probability q, and one block per block row made 1 where the row would
 * otherwise leave a query without a key (the diagonal's, or the first). */
static int random_grid(uint64_t *rng, int64_t N, int64_t Nk, sim_block_mask *b,
                       unsigned char **bits)
{
    int64_t R, C;
    for (;;) {
        R = tu_rand_range(rng, 1, N < 12 ? N : 12);
        C = tu_rand_range(rng, 1, Nk < 12 ? Nk : 12);
        const int64_t br = (N + R - 1) / R, bc = (Nk + C - 1) / C;
        if ((R - 1) * br < N && (C - 1) * bc < Nk)
            break;
    }
    char err[256];
    memset(b, 0, sizeof *b);
    assert_int_equal(sim_bmask_grid(b, R, C, N, Nk, err, sizeof err), 0);
    /* the sizes the brief states: ceil(N_q / R), ceil(N_k / C) */
    assert_int_equal(b->m.br, (N + R - 1) / R);
    assert_int_equal(b->m.bc, (Nk + C - 1) / C);
    unsigned char *m = malloc((size_t)(R * C));
    assert_non_null(m);
    const int64_t q = tu_rand_range(rng, 10, 90);
    for (int64_t x = 0; x < R * C; x++) {
        m[x] = (unsigned char)(tu_rand_range(rng, 0, 99) < q);
        b->nonzero += m[x];
    }
    b->m.bits = m;
    snprintf(b->pattern, sizeof b->pattern, "random grid");
    *bits = m;
    return 0;
}

/* The last block of each block row on where a causal run needs it: the
 * diagonal key of the row's last query, so every row sees a key. */
static void ensure_rows(sim_block_mask *b, int64_t N, int64_t Nk, int causal)
{
    unsigned char *m = (unsigned char *)b->m.bits;
    for (int64_t i = 0; i < b->R; i++) {
        const int64_t r = i * b->m.br;           /* the first row: it sees the fewest keys */
        const int64_t c = causal ? r + (Nk - N) : 0;
        unsigned char *x = &m[i * b->m.cols + c / b->m.bc];
        b->nonzero += !*x;
        *x = 1;
    }
}

static const char *const PATTERNS[] = { "local:0", "local:1", "local:3", "strided:2",
                                        "strided:3", "global:1,0", "global:2,1",
                                        "random:0.3", "random:0.7", "random:1" };

/* ---- the 100+ configurations -------------------------------------------- */

static void test_counts_match_forms(void **state)
{
    (void)state;
    uint64_t rng = 0xb5b5b5b5ull;
    int runs = 0, configs = 0;
    for (int k = 0; k < 140; k++) {
        sim_shape sh = { 0 };
        sh.N = tu_rand_range(&rng, 1, 260);
        sh.d = tu_rand_range(&rng, 1, 64);
        sh.dtype = SIM_FP16;
        sh.causal = (int)tu_rand_range(&rng, 0, 1);
        sh.Nk = tu_rand_range(&rng, 0, 2) == 0 ? sh.N + tu_rand_range(&rng, 0, 40) : 0;
        if (sh.causal && tu_rand_range(&rng, 0, 3) == 0)
            sh.window = tu_rand_range(&rng, 1, sh.N + 8);
        const int64_t Nk = sim_shape_Nk(&sh);
        const int best = (int)tu_rand_range(&rng, 0, 1);
        sh.M = best ? (uint64_t)tu_rand_range(&rng, 16, 256) << 10 : UINT64_C(1) << 21;
        /* the common tile: a square B, clamped to N as plans clamp it */
        const int64_t B = (int64_t[]){ 1, 3, 8, 16, 32, 64 }[tu_rand_range(&rng, 0, 5)];
        sim_block_mask bm;
        unsigned char *bits = NULL;
        char err[512];
        if (tu_rand_range(&rng, 0, 2) == 0) {
            random_grid(&rng, sh.N, Nk, &bm, &bits);
        } else {
            const char *pat = PATTERNS[tu_rand_range(&rng, 0, 9)];
            const int64_t br = B < sh.N ? B : sh.N, bc = B < Nk ? B : Nk;
            assert_int_equal(sim_bmask_pattern(pat, (sh.N + br - 1) / br, (Nk + bc - 1) / bc,
                                               br, bc, (uint64_t)k, &bm, &bits, err,
                                               sizeof err), 0);
        }
        ensure_rows(&bm, sh.N, Nk, sh.causal);
        sh.blocks = &bm;
        if (sim_check(&sh, NULL, err, sizeof err) != 0) {
            /* a window can leave a row no key inside its blocks: no run */
            assert_non_null(strstr(err, "no visible key"));
            free(bits);
            continue;
        }
        configs++;
        const emask e = { sh.N, Nk, sh.window, sh.causal, &bm };
        struct {
            sim_algo a;
            sim_pass pass;
        } R[] = { { SIM_FA2, SIM_FWD }, { SIM_FA1, SIM_FWD }, { SIM_FA2, SIM_BWD },
                  { SIM_FA1, SIM_BWD }, { SIM_NAIVE, SIM_FWD } };
        for (size_t x = 0; x < sizeof R / sizeof R[0]; x++) {
            if (R[x].pass == SIM_BWD && sh.Nk != 0 && sh.Nk != sh.N)
                continue;
            sim_run_opts run = { 0 };
            run.pass = R[x].pass;
            sim_plan p;
            if (best) {
                if (sim_plan_choose(R[x].a, &sh, &run, SIM_PLAN_AUTO, 0, 0, &p, err,
                                    sizeof err) != 0)
                    continue;                  /* nothing fits this M */
            } else {
                assert_int_equal(sim_plan_make(R[x].a, &sh, &run, B, B, SIM_PLAN_USER, &p), 0);
            }
            uint64_t steps;
            const sim_counts got = measure(R[x].a, &sh, &p, &steps);
            const sums s = sums_of(&e, p.Br, p.Bc, -1);
            sim_counts want;
            if (R[x].a == SIM_FA2 && R[x].pass == SIM_FWD) {
                want = fa2_fwd_form(&e, sh.d, p.Br, &s);
                assert_int_equal(steps, s.pairs);
            } else if (R[x].a == SIM_FA1 && R[x].pass == SIM_FWD) {
                want = fa1_fwd_form(&e, sh.d, p.Br, &s);
                assert_int_equal(steps, s.pairs);
            } else if (R[x].a == SIM_FA2) {
                want = fa2_bwd_form(&e, sh.d, p.Br, p.Bc, &s);
            } else {
                assert_int_equal(sim_theory_counts(&p, &sh, &want), 0);
            }
            char what[160];
            snprintf(what, sizeof what, "config %d %s %s N=%lld Nk=%lld d=%lld causal=%d "
                     "W=%lld B=%lldx%lld %s", k, sim_algo_name(R[x].a),
                     sim_pass_name(R[x].pass), (long long)sh.N, (long long)Nk,
                     (long long)sh.d, sh.causal, (long long)sh.window, (long long)p.Br,
                     (long long)p.Bc, bm.pattern);
            if (differ(what, &got, &want))
                fail_msg("%s: counts differ from the form", what);
            /* and the library's closed form agrees with both */
            sim_counts th;
            assert_int_equal(sim_theory_counts(&p, &sh, &th), 0);
            if (differ(what, &th, &want))
                fail_msg("%s: closed form differs", what);
            runs++;
        }
        free(bits);
    }
    assert_true(configs >= 100);
    print_message("%d configurations, %d runs\n", configs, runs);
}

/* Split-KV visits FA2's tiles split by split: its K, V reads are FA2's. */
static void test_split_kv(void **state)
{
    (void)state;
    uint64_t rng = 0x5b117ull;
    for (int k = 0; k < 12; k++) {
        sim_shape sh = { .N = tu_rand_range(&rng, 16, 200), .d = 16, .M = 1u << 20,
                         .dtype = SIM_FP16, .causal = (int)tu_rand_range(&rng, 0, 1) };
        sim_block_mask bm;
        unsigned char *bits;
        char err[256];
        const int64_t B = 16, T = (sh.N + B - 1) / B;
        assert_int_equal(sim_bmask_pattern(PATTERNS[k % 10], T, T, B, B, 7, &bm, &bits, err,
                                           sizeof err), 0);
        ensure_rows(&bm, sh.N, sh.N, sh.causal);
        sh.blocks = &bm;
        sim_run_opts run = { .splits = tu_rand_range(&rng, 2, T) };
        sim_plan p;
        assert_int_equal(sim_plan_make(SIM_FA2, &sh, &run, B, B, SIM_PLAN_USER, &p), 0);
        const sim_counts got = measure(SIM_FA2, &sh, &p, NULL);
        const emask e = { sh.N, sh.N, 0, sh.causal, &bm };
        const sums s = sums_of(&e, B, B, -1);
        assert_int_equal(got.read_elems[SIM_K], s.keys * (uint64_t)sh.d);
        assert_int_equal(got.read_ops[SIM_V], s.pairs);
        sim_counts th;
        assert_int_equal(sim_theory_counts(&p, &sh, &th), 0);
        assert_false(differ("split", &got, &th));
        free(bits);
    }
}

/* A known-wrong form must fail: the forms with one visited tile left out
 * differ from the counts (so the comparison above can see a missing tile). */
static void test_missing_tile_is_seen(void **state)
{
    (void)state;
    sim_shape sh = { .N = 256, .d = 32, .M = 1u << 20, .dtype = SIM_FP16, .causal = 1 };
    sim_block_mask bm;
    unsigned char *bits;
    char err[256];
    assert_int_equal(sim_bmask_pattern("local:1", 8, 8, 32, 32, 1, &bm, &bits, err,
                                       sizeof err), 0);
    sh.blocks = &bm;
    const emask e = { sh.N, sh.N, 0, 1, &bm };
    sim_plan p;
    assert_int_equal(sim_plan_make(SIM_FA2, &sh, NULL, 32, 32, SIM_PLAN_USER, &p), 0);
    uint64_t steps;
    const sim_counts got = measure(SIM_FA2, &sh, &p, &steps);
    const sums all = sums_of(&e, 32, 32, -1);
    /* local:1 with causal: the diagonal and the block below it, 8 + 7 */
    assert_int_equal(all.pairs, 15);
    assert_int_equal(steps, 15);
    const sim_counts right = fa2_fwd_form(&e, sh.d, 32, &all);
    assert_false(differ("right", &got, &right));
    const sums less = sums_of(&e, 32, 32, 3 * 8 + 2);      /* tile (3, 2) left out */
    const sim_counts wrong = fa2_fwd_form(&e, sh.d, 32, &less);
    assert_true(differ("known wrong (expected to differ)", &got, &wrong));
    free(bits);
}

/* An all-ones mask changes no count of any loop order or pass. */
static void test_all_ones_is_dense(void **state)
{
    (void)state;
    uint64_t rng = 0xa11a11ull;
    for (int k = 0; k < 24; k++) {
        sim_shape sh = { .N = tu_rand_range(&rng, 1, 200), .d = tu_rand_range(&rng, 1, 48),
                         .M = 1u << 20, .dtype = SIM_FP16,
                         .causal = (int)tu_rand_range(&rng, 0, 1) };
        if (sh.causal && k % 3 == 0)
            sh.window = tu_rand_range(&rng, 1, sh.N);
        const int64_t R = tu_rand_range(&rng, 1, sh.N < 9 ? sh.N : 9);
        const int64_t br = (sh.N + R - 1) / R;
        if ((R - 1) * br >= sh.N)
            continue;
        unsigned char ones[81];
        memset(ones, 1, sizeof ones);
        sim_block_mask bm;
        char err[256];
        memset(&bm, 0, sizeof bm);
        assert_int_equal(sim_bmask_grid(&bm, R, R, sh.N, sh.N, err, sizeof err), 0);
        bm.m.bits = ones;
        bm.nonzero = (uint64_t)(R * R);
        sim_shape masked = sh;
        masked.blocks = &bm;
        const int64_t B = tu_rand_range(&rng, 1, 64);
        for (int a = 0; a < sim_algo_count(); a++)
            for (int q = 0; q < SIM_PASS_COUNT; q++) {
                sim_run_opts run = { .pass = (sim_pass)q };
                sim_plan pd, pm;
                if (sim_plan_make((sim_algo)a, &sh, &run, B, B, SIM_PLAN_USER, &pd) != 0)
                    continue;
                assert_int_equal(sim_plan_make((sim_algo)a, &masked, &run, B, B,
                                               SIM_PLAN_USER, &pm), 0);
                uint64_t sd, sm;
                const sim_counts d = measure((sim_algo)a, &sh, &pd, &sd);
                const sim_counts m = measure((sim_algo)a, &masked, &pm, &sm);
                if (!sh.causal && (sim_loop_find((sim_algo)a, &run)->hbm & (1u << SIM_C))) {
                    /* the unfused baseline reads any mask as its tensor C, one
                     * byte a score, as PyTorch's where reads it: not causal,
                     * only a block mask brings that line in */
                    assert_int_equal(d.read_elems[SIM_C], 0);
                    assert_int_equal(m.read_elems[SIM_C],
                                     (uint64_t)sh.N * (uint64_t)sh.N);
                    continue;
                }
                assert_false(differ(sim_algo_name((sim_algo)a), &m, &d));
                assert_int_equal(sm, sd);
                sim_counts td, tm;
                assert_int_equal(sim_theory_counts(&pd, &sh, &td), 0);
                assert_int_equal(sim_theory_counts(&pm, &masked, &tm), 0);
                assert_false(differ("closed forms", &tm, &td));
            }
    }
}

/* ---- compute mode against float64 with the same element-wise mask ------- */

/* O = softmax(scale Q K^T, masked) V in float64, by the definition. */
static void attention_f64(const emask *e, int64_t d, const float *Q, const float *K,
                          const float *V, double *O)
{
    double *s = malloc((size_t)e->Nk * sizeof *s);
    assert_non_null(s);
    const double scale = 1.0 / sqrt((double)d);
    for (int64_t r = 0; r < e->N; r++) {
        double mx = -INFINITY, l = 0.0;
        for (int64_t c = 0; c < e->Nk; c++) {
            double dot = 0.0;
            for (int64_t t = 0; t < d; t++)
                dot += (double)Q[r * d + t] * (double)K[c * d + t];
            s[c] = visible(e, r, c) ? scale * dot : -INFINITY;
            mx = s[c] > mx ? s[c] : mx;
        }
        for (int64_t c = 0; c < e->Nk; c++)
            l += s[c] == -INFINITY ? 0.0 : exp(s[c] - mx);
        for (int64_t t = 0; t < d; t++) {
            double acc = 0.0;
            for (int64_t c = 0; c < e->Nk; c++)
                if (s[c] != -INFINITY)
                    acc += exp(s[c] - mx) / l * (double)V[c * d + t];
            O[r * d + t] = acc;
        }
    }
    free(s);
}

static void test_compute_against_f64(void **state)
{
    (void)state;
    uint64_t rng = 0xc0c0ull;
    for (int k = 0; k < 8; k++) {
        sim_shape sh = { .N = tu_rand_range(&rng, 20, 150), .d = tu_rand_range(&rng, 4, 32),
                         .M = 1u << 20, .dtype = SIM_FP32,
                         .causal = (int)tu_rand_range(&rng, 0, 1) };
        sim_block_mask bm;
        unsigned char *bits;
        random_grid(&rng, sh.N, sh.N, &bm, &bits);
        ensure_rows(&bm, sh.N, sh.N, sh.causal);
        sh.blocks = &bm;
        char err[256];
        assert_int_equal(sim_check(&sh, NULL, err, sizeof err), 0);
        const int64_t n = sh.N * sh.d;
        float *Q = malloc((size_t)n * sizeof *Q), *K = malloc((size_t)n * sizeof *K);
        float *V = malloc((size_t)n * sizeof *V);
        double *want = malloc((size_t)n * sizeof *want), *orc = malloc((size_t)n * sizeof *orc);
        assert_true(Q && K && V && want && orc);
        sim_random_inputs((uint64_t)k, sh.N, sh.d, sh.dtype, Q, K, V);
        const emask e = { sh.N, sh.N, 0, sh.causal, &bm };
        attention_f64(&e, sh.d, Q, K, V, want);
        /* the oracle with the same mask agrees with the definition */
        const ref_mask mk = sim_shape_ref_mask(&sh);
        assert_int_equal(ref_oracle_attention_masked(Q, K, V, sh.N, sh.N, sh.d, &mk, orc,
                                                     NULL), 0);
        for (int64_t x = 0; x < n; x++)
            assert_true(fabs(orc[x] - want[x]) <= 1e-12 * (1.0 + fabs(want[x])));
        const int64_t B = tu_rand_range(&rng, 4, 40);
        const sim_algo algos[] = { SIM_NAIVE, SIM_FA1, SIM_FA2 };
        for (size_t a = 0; a < 3; a++) {
            sim_plan p;
            assert_int_equal(sim_plan_make(algos[a], &sh, NULL, B, B, SIM_PLAN_USER, &p), 0);
            sim_result res;
            assert_int_equal(sim_run(algos[a], &sh, &p, Q, K, V, NULL, &res, err, sizeof err),
                             0);
            double worst = 0.0;
            for (int64_t x = 0; x < n; x++) {
                const double dlt = fabs((double)res.O[x] - want[x]);
                worst = dlt > worst ? dlt : worst;
            }
            if (!(worst <= 2e-5))
                fail_msg("%s, %lld x %lld mask, N = %lld: max |O - O_ref| = %g",
                         sim_algo_name(algos[a]), (long long)bm.R, (long long)bm.m.cols,
                         (long long)sh.N, worst);
            sim_result_free(&res);
        }
        free(Q);
        free(K);
        free(V);
        free(want);
        free(orc);
        free(bits);
    }
}

/* ---- the command line's refusals ------------------------------------------ */

static void expect_refusal(const char *args, const char *word)
{
    su_run r = su_fasim(g_fasim, args);
    if (r.code != 2 || !strstr(r.err, word) || su_count_lines(r.err) != 1)
        fail_msg("fasim %s: exit %d, stderr '%s' (expected 2 and '%s' in one line)", args,
                 r.code, r.err, word);
    su_free(&r);
}

static void write_text(const char *name, const char *text, char *path, size_t len)
{
    tu_path(path, len, name);
    assert_int_equal(tu_write_file(path, text, strlen(text)), 0);
}

/* A mask file of text, and fasim before + FILE + after refused with word. */
static void refuse_file(const char *name, const char *text, const char *before,
                        const char *after, const char *word)
{
    char path[512], cmd[1024];
    write_text(name, text, path, sizeof path);
    snprintf(cmd, sizeof cmd, "%s%s%s", before, path, after);
    expect_refusal(cmd, word);
}

/* random:P keeps each off-diagonal block with probability P (and every
 * diagonal block): over T = 128 (16,256 off-diagonal blocks) the count is
 * within 5 standard deviations of T + P (T^2 - T), for several P and seeds. */
static void test_random_density(void **state)
{
    (void)state;
    const int64_t T = 128;
    const double Ps[] = { 0.01, 0.1, 0.25, 0.5, 0.9 };
    for (size_t k = 0; k < sizeof Ps / sizeof Ps[0]; k++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            char spec[32];
            snprintf(spec, sizeof spec, "random:%g", Ps[k]);
            sim_block_mask bm;
            unsigned char *bits;
            char err[256];
            assert_int_equal(sim_bmask_pattern(spec, T, T, 16, 16, seed, &bm, &bits, err,
                                               sizeof err), 0);
            uint64_t on = 0, diag = 0;
            for (int64_t i = 0; i < T; i++)
                for (int64_t j = 0; j < T; j++) {
                    on += bits[i * T + j];
                    diag += i == j && bits[i * T + j];
                }
            assert_int_equal(on, bm.nonzero);
            assert_int_equal(diag, (uint64_t)T);
            const double n = (double)(T * T - T), want = (double)T + Ps[k] * n;
            const double sd = sqrt(n * Ps[k] * (1 - Ps[k]));
            if (fabs((double)on - want) > 5 * sd)
                fail_msg("%s seed %llu: %llu blocks on, expected %.0f +- %.0f", spec,
                         (unsigned long long)seed, (unsigned long long)on, want, 5 * sd);
            free(bits);
        }
}

static void test_cli_refusals(void **state)
{
    (void)state;
    char cmd[1024], path[512];
    expect_refusal("--N 256 --block-mask local:-1 --count-only", "local:K");
    expect_refusal("--N 256 --block-mask strided:0 --count-only", "strided:K");
    expect_refusal("--N 256 --block-mask global:1 --count-only", "global:G,K");
    expect_refusal("--N 256 --block-mask random:0 --count-only", "random:P");
    expect_refusal("--N 256 --block-mask random:1.5 --count-only", "random:P");
    expect_refusal("--N 256 --block-mask banded:2 --count-only", "local:K");
    /* a pattern's |i - j| on unequal blocks is no band along the diagonal */
    expect_refusal("--N 1024 --Br 32 --Bc 64 --block-mask local:1 --count-only",
                   "built on square blocks");
    refuse_file("bm_empty.txt", "\n\n", "--N 64 --block-mask ", " --count-only", "empty");
    refuse_file("bm_two.txt", "1 0\n2 1\n", "--N 64 --block-mask ", " --count-only", "0 or 1");
    refuse_file("bm_ragged.txt", "1 0\n1\n", "--N 64 --block-mask ", " --count-only", "row 2");
    /* 5 block rows over N = 8: ceil(8 / 5) = 2 rows each leaves the last empty */
    refuse_file("bm_shape.txt", "1\n1\n1\n1\n1\n",
                "--N 8 --block-mask ", " --count-only", "empty");
    refuse_file("bm_tall.txt", "1\n1\n1\n", "--N 2 --block-mask ", " --count-only", "rows");
    /* block row 1 all zero: its queries see nothing */
    refuse_file("bm_norow.txt", "1 0\n0 0\n",
                "--N 64 --block-mask ", " --count-only", "block row 1");
    /* causal: block row 0 sees only block column 1, above the diagonal */
    refuse_file("bm_causal.txt", "0 1\n1 1\n",
                "--N 64 --causal --block-mask ", " --count-only", "block row 0");
    expect_refusal("--N 256 --block-mask local:1 --page-size 16 --count-only", "--page");
    /* a plan of 8192 x 8192 tiles under a 2 x 2 mask: past 2^24 tiles (the
     * limits' row in test_limits.c is the blocks' one) */
    refuse_file("bm_small.txt", "1 0\n1 1\n",
                "--N 8192 --block-mask ", " --Br 1 --Bc 1 --algo fa2 --count-only",
                "8192 x 8192 tiles");
    expect_refusal("gpu --N 256 --block-mask local:1 --backend cpu", "--block-mask");
    /* a good file runs, and its blocks are ceil(N / R) */
    write_text("bm_good.txt", "1 0 0\n1 1 0\n0 1 1\n", path, sizeof path);
    snprintf(cmd, sizeof cmd, "--N 100 --block-mask %s --count-only --algo fa2", path);
    su_run r = su_fasim(g_fasim, cmd);
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.out, "3 x 3 blocks of 34 x 34 scores; 5 nonzero"));
    su_free(&r);
}

/* fasim view draws the tiles a block mask leaves empty as skipped ('-'),
 * as it draws causal masking's: local:1 on 8 x 8 tiles, at the step of
 * tile (2, 1), FA2 row by row. */
static void test_view_skips(void **state)
{
    (void)state;
    su_run r = su_fasim(g_fasim, "view --N 256 --d 16 --M 32K --block-mask local:1 --Br 32 "
                                 "--Bc 32 --count-only --step 20 --frames 1");
    assert_int_equal(r.code, 0);
    const char *rows[] = { "##------", "*..-----", "-...----", "------.." };
    for (int k = 0; k < 4; k++)
        if (!strstr(r.out, rows[k]))
            fail_msg("the view lacks the block row %s:\n%s", rows[k], r.out);
    su_free(&r);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_block_sparse FASIM\n");
        return 2;
    }
    g_fasim = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_match_forms),
        cmocka_unit_test(test_split_kv),
        cmocka_unit_test(test_missing_tile_is_seen),
        cmocka_unit_test(test_all_ones_is_dense),
        cmocka_unit_test(test_compute_against_f64),
        cmocka_unit_test(test_random_density),
        cmocka_unit_test(test_cli_refusals),
        cmocka_unit_test(test_view_skips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
