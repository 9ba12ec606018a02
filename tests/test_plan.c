/*
 * test_plan.c — tile plans: the best plan is the best (against an exhaustive
 * search written here), the paper's line 1 is reproduced with its overflow,
 * refusals explain themselves with a hint that works, and the event stream
 * of a run agrees with its counters and its SRAM plan.
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
#include "sim_loop.h"
#include "test_util.h"

static uint64_t plan_bytes(const sim_plan *p, const sim_shape *sh, uint64_t *steps)
{
    sim_counts c;
    assert_int_equal(sim_theory_counts(p, sh, &c), 0);
    assert_int_equal(sim_theory_steps(p, sh, steps), 0);
    return sim_counts_read_bytes(&c, sh->dtype) + sim_counts_write_bytes(&c, sh->dtype);
}

/* The candidates of one axis of length len, as the plan search documents
 * them: multiples of 16 up to 4096, powers of two above, len itself, and with
 * `small` also 1, 2, 4, 8. */
static int axis_cands(int64_t len, int small, int64_t *cand)
{
    int n = 0;
    if (small)
        for (int64_t b = 1; b < 16 && b <= len; b *= 2)
            cand[n++] = b;
    for (int64_t b = 16; b <= len && b <= 4096; b += 16)
        cand[n++] = b;
    for (int64_t b = 8192; b <= len; b *= 2)
        cand[n++] = b;
    int listed = 0;
    for (int k = 0; k < n; k++)
        listed |= cand[k] == len;
    if (!listed)
        cand[n++] = len;
    return n;
}

/* Exhaustive: every pair of candidate sizes (multiples of 16 up to 4096,
 * powers of two above it, and N; the small powers of two only when nothing
 * else fits), built here as a list rather than indexed as sim_plan.c does. */
static int exhaustive(sim_algo a, const sim_shape *sh, uint64_t *best_bytes,
                      uint64_t *best_steps)
{
    int found = 0;
    for (int small = 0; small <= 1 && !found; small++) {
        int64_t cand[4096];
        const int n = axis_cands(sh->N, small, cand);
        for (int x = 0; x < n; x++)
            for (int y = 0; y < n; y++) {
                sim_plan p;
                assert_int_equal(sim_plan_make(a, sh, NULL, cand[x], cand[y], SIM_PLAN_AUTO, &p),
                                 0);
                if (!p.fits)
                    continue;
                uint64_t steps, bytes = plan_bytes(&p, sh, &steps);
                if (!found || bytes < *best_bytes ||
                    (bytes == *best_bytes && steps < *best_steps)) {
                    *best_bytes = bytes;
                    *best_steps = steps;
                }
                found = 1;
            }
    }
    return found;
}

static void test_best_plan_is_optimal(void **state)
{
    (void)state;
    uint64_t rng = 2024;
    int checked = 0;
    for (int k = 0; k < 60; k++) {
        sim_shape sh = { 0 };
        sh.N = tu_rand_range(&rng, 1, 600);
        sh.d = tu_rand_range(&rng, 1, 128);
        sh.dtype = (sim_dtype)tu_rand_range(&rng, 0, 2);
        sh.causal = (int)tu_rand_range(&rng, 0, 1);
        sh.M = (uint64_t)tu_rand_range(&rng, 512, 128 * 1024);
        for (int a = 0; a < sim_algo_count(); a++) {
            sim_plan p;
            char err[1024];
            uint64_t eb = 0, es = 0;
            int found = exhaustive((sim_algo)a, &sh, &eb, &es);
            int rc = sim_plan_choose((sim_algo)a, &sh, NULL, SIM_PLAN_AUTO, 0, 0, &p, err,
                                     sizeof err);
            assert_int_equal(rc == 0, found);
            if (!found) {
                assert_non_null(strstr(err, "too small"));
                continue;
            }
            uint64_t steps, bytes = plan_bytes(&p, &sh, &steps);
            if (bytes != eb || steps != es)
                fprintf(stderr, "%s N=%lld d=%lld M=%llu causal=%d: chose %lldx%lld "
                        "bytes %llu steps %llu, best %llu / %llu\n", sim_algo_name((sim_algo)a),
                        (long long)sh.N, (long long)sh.d, (unsigned long long)sh.M, sh.causal,
                        (long long)p.Br, (long long)p.Bc, (unsigned long long)bytes,
                        (unsigned long long)steps, (unsigned long long)eb,
                        (unsigned long long)es);
            assert_true(p.fits);
            assert_int_equal(bytes, eb);
            assert_int_equal(steps, es);
            checked++;
        }
    }
    assert_true(checked > 100);
}

/* Past 4096 the candidates thin out to powers of two (and N), so that the
 * causal search, which scores every fitting pair, stays bounded: N = 1M with
 * M = 1 GiB once took hours. The exhaustive search above, over the same
 * candidates built independently, must agree; and every block chosen is a
 * candidate. */
static void test_large_blocks_are_bounded_candidates(void **state)
{
    (void)state;
    const sim_shape shapes[] = {
        { .N = 20000, .d = 4, .M = 4u << 20, .dtype = SIM_FP16, .causal = 0 },
        { .N = 20000, .d = 4, .M = 4u << 20, .dtype = SIM_FP32, .causal = 1 },
        { .N = 16384, .d = 2, .M = 8u << 20, .dtype = SIM_BF16, .causal = 1 },
    };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const sim_shape *sh = &shapes[k];
        for (int a = 0; a < sim_algo_count(); a++) {
            sim_plan p;
            char err[1024];
            uint64_t eb = 0, es = 0, steps;
            assert_true(exhaustive((sim_algo)a, sh, &eb, &es));
            assert_int_equal(sim_plan_choose((sim_algo)a, sh, NULL, SIM_PLAN_AUTO, 0, 0, &p, err,
                                             sizeof err), 0);
            assert_int_equal(plan_bytes(&p, sh, &steps), eb);
            assert_int_equal(steps, es);
            const int64_t b[2] = { p.Br, p.Bc };
            for (int i = 0; i < 2; i++)
                assert_true((b[i] <= 4096 && b[i] % 16 == 0) || b[i] == sh->N ||
                            (b[i] > 4096 && (b[i] & (b[i] - 1)) == 0));
            /* At least one block past 4096: the thinned range is exercised.
             * Not by unfused, whose bytes do not depend on its blocks: its
             * best plan is the one with the fewest tile steps, of any size. */
            if (sim_algo_in_default((sim_algo)a))
                assert_true(p.Br > 4096 || p.Bc > 4096);
        }
    }
    /* N = 1M, causal, M = 1 GiB: must finish (ctest's timeout bounds it). */
    sim_shape big = { .N = 1 << 20, .d = 16, .M = 1u << 30, .dtype = SIM_FP16, .causal = 1 };
    sim_plan p;
    char err[1024];
    for (int a = 0; a < sim_algo_count(); a++)
        assert_int_equal(sim_plan_choose((sim_algo)a, &big, NULL, SIM_PLAN_AUTO, 0, 0, &p, err,
                                         sizeof err), 0);
}

/* When every plan of multiples of 16 that fits has uncountable traffic, the
 * small sizes still matter: a block of 1 on one side lets the other grow,
 * and FA2's traffic goes with T_r, FA1's with T_c. (An early exit once
 * refused both shapes with "would overflow 64 bits for every plan".) */
static void test_small_blocks_rescue_countability(void **state)
{
    (void)state;
    const struct { sim_algo a; sim_shape sh; } C[] = {
        { SIM_FA2, { .N = INT64_C(8) << 30, .d = 1, .M = 1312, .dtype = SIM_FP16 } },
        { SIM_FA2, { .N = INT64_C(8) << 30, .d = 1, .M = 1312, .dtype = SIM_FP16, .causal = 1 } },
        { SIM_FA1, { .N = 24000000, .d = 65536, .M = 10487168, .dtype = SIM_FP16 } },
    };
    for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
        sim_plan p;
        sim_counts c;
        char err[1024];
        int rc = sim_plan_choose(C[k].a, &C[k].sh, NULL, SIM_PLAN_AUTO, 0, 0, &p, err, sizeof err);
        if (rc != 0)
            fprintf(stderr, "%s: %s\n", sim_algo_name(C[k].a), err);
        assert_int_equal(rc, 0);
        assert_true(p.fits);
        assert_true(p.Br < 16 || p.Bc < 16);
        assert_int_equal(sim_theory_counts(&p, &C[k].sh, &c), 0);
    }
}

/* Algorithm 1, line 1, with M converted to elements, and the 1.25 M it can
 * ask for (Q_i, K_j, V_j, O_i and S_ij counted in elements). */
static void test_paper_plan(void **state)
{
    (void)state;
    sim_shape sh = { .N = 1024, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16 };
    sim_plan p;
    char err[512];
    assert_int_equal(sim_plan_choose(SIM_FA1, &sh, NULL, SIM_PLAN_PAPER, 0, 0, &p, err,
                                     sizeof err), 0);
    /* M = 49152 elements: B_c = ceil(49152 / 256) = 192, B_r = min(192, 64) */
    assert_int_equal(p.Bc, 192);
    assert_int_equal(p.Br, 64);
    assert_int_equal(p.kind, SIM_PLAN_PAPER);
    /* Q_i 64x64x2 + K_j, V_j 192x64x2 + O_i 64x64x4 + S_ij 64x192x4 + 6 vectors of 64 fp32 */
    assert_int_equal(p.sram_peak, 8192u + 2 * 24576u + 16384u + 49152u + 6 * 256u);
    assert_false(p.fits);
    /* It still runs, and the report can show the overflow. */
    sim_result r;
    assert_int_equal(sim_run(SIM_FA1, &sh, &p, NULL, NULL, NULL, NULL, &r, err, sizeof err), 0);
    assert_int_equal(r.sram_peak, p.sram_peak);
    sim_result_free(&r);

    /* The element count of line 1's five blocks is at most 1.25 M when 4d
     * divides M, and exactly 1.25 M when M = 4 d^2 (B_r = B_c = d). With
     * M = 4dk: k <= d gives 1 + k/4d; k > d gives 3/4 + d/2k. */
    double worst = 0.0;
    for (int64_t d = 1; d <= 256; d++)
        for (int64_t k = 1; k <= 600; k++) {
            int64_t M_el = 4 * d * k;
            int64_t Bc = (M_el + 4 * d - 1) / (4 * d), Br = Bc < d ? Bc : d;
            double ratio = (double)(2 * Br * d + 2 * Bc * d + Br * Bc) / (double)M_el;
            if (ratio > worst)
                worst = ratio;
        }
    printf("  line 1's blocks use at most %.4f M when 4d divides M\n", worst);
    assert_true(worst == 1.25);
    /* When 4d does not divide M the ceiling can ask for far more: M = d gives
     * B_r = B_c = 1 and 4d + 1 elements, about 4 M. */
    int64_t d = 64, M_el = 64;
    int64_t Bc = (M_el + 4 * d - 1) / (4 * d), Br = Bc < d ? Bc : d;
    assert_int_equal(2 * Br * d + 2 * Bc * d + Br * Bc, 4 * d + 1);
}

/* docs/ARCHITECTURE.md, errors row 5: B_r = B_c = 128, d = 128, fp16. */
static void test_article_sram_sum(void **state)
{
    (void)state;
    sim_shape sh = { .N = 4096, .d = 128, .M = 96 * 1024, .dtype = SIM_FP16 };
    sim_plan p;
    assert_int_equal(sim_plan_make(SIM_FA2, &sh, NULL, 128, 128, SIM_PLAN_USER, &p), 0);
    uint64_t qkv = 0, s = 0, o = 0;
    for (int k = 0; k < p.nbuf; k++) {
        if (!strcmp(p.buf[k].name, "Q_i") || !strcmp(p.buf[k].name, "K_j") ||
            !strcmp(p.buf[k].name, "V_j"))
            qkv += p.buf[k].bytes;
        if (!strcmp(p.buf[k].name, "S_ij"))
            s = p.buf[k].bytes;
        if (!strcmp(p.buf[k].name, "O_i"))
            o = p.buf[k].bytes;
    }
    assert_int_equal(qkv, 3u * 128 * 128 * 2);          /* 98,304 B: the article's "96 KB" */
    /* ... plus S at fp16 is 131,072 B = 128 KiB, not 96 KB */
    assert_int_equal(qkv + 128u * 128 * 2, 131072u);
    assert_int_equal(s, 128u * 128 * 4);                 /* fp32 on chip */
    assert_int_equal(o, 128u * 128 * 4);
    assert_int_equal(p.sram_peak, qkv + s + o + 2u * 128 * 4);
    assert_false(p.fits);
}

/* A refusal lists the buffers and a hint; the hinted sizes fit. */
static void test_misfit_hint_works(void **state)
{
    (void)state;
    sim_shape sh = { .N = 1024, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16 };
    for (int a = 0; a < sim_algo_count(); a++) {
        sim_plan p;
        char err[2048];
        assert_int_equal(sim_plan_choose((sim_algo)a, &sh, NULL, SIM_PLAN_USER, 512, 512, &p, err,
                                         sizeof err), -1);
        assert_non_null(strstr(err, "over"));
        assert_non_null(strstr(err, "S_ij"));
        long long br = 0, bc = 0;
        const char *h = strstr(err, "hint: --algo ");
        if (h) {                                         /* keeps one of the user's sizes */
            char name[16];
            assert_int_equal(sscanf(h, "hint: --algo %15s --Br %lld --Bc %lld", name, &br, &bc), 3);
            assert_string_equal(name, sim_algo_name((sim_algo)a));
            assert_true(br == 512 || bc == 512);
            assert_int_equal(sim_plan_make((sim_algo)a, &sh, NULL, br, bc, SIM_PLAN_USER, &p), 0);
            assert_true(p.fits);
        } else {
            assert_non_null(strstr(err, "no plan with B_r = 512 or B_c = 512 fits"));
        }
        h = strstr(err, "hint: or omit --Br/--Bc: best ");
        assert_non_null(h);
        h = strstr(h, "plan B_r = ");
        assert_non_null(h);
        assert_int_equal(sscanf(h, "plan B_r = %lld, B_c = %lld", &br, &bc), 2);
        assert_int_equal(sim_plan_make((sim_algo)a, &sh, NULL, br, bc, SIM_PLAN_USER, &p), 0);
        assert_true(p.fits);
        /* every line within 80 columns */
        for (const char *line = err; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
            const char *end = strchr(line, '\n');
            size_t len = end ? (size_t)(end - line) : strlen(line);
            assert_true(len + 7 <= 80);                  /* "fasim: " comes first */
        }
    }
    /* One size pinned: the other is chosen to fit. */
    sim_plan p;
    char err[512];
    assert_int_equal(sim_plan_choose(SIM_FA2, &sh, NULL, SIM_PLAN_USER, 64, 0, &p, err,
                                     sizeof err), 0);
    assert_int_equal(p.Br, 64);
    assert_true(p.fits);
    /* Too small for anything. */
    sh.M = 100;
    assert_int_equal(sim_plan_choose(SIM_FA2, &sh, NULL, SIM_PLAN_AUTO, 0, 0, &p, err,
                                     sizeof err), -1);
    assert_non_null(strstr(err, "too small"));
}

/* ---- the event stream ---------------------------------------------------- */

typedef struct {
    sim_counts seen;
    uint64_t sram_max;
    int allocs, frees, done;
    char order[200000];          /* one letter per Q/K/O transfer, in order */
    int n;
} trace;

static void on_event(void *ctx, const sim_event *ev)
{
    trace *t = ctx;
    if (ev->sram_used > t->sram_max)
        t->sram_max = ev->sram_used;
    switch (ev->kind) {
    case SIM_EV_ALLOC: t->allocs++; break;
    case SIM_EV_FREE: t->frees++; break;
    case SIM_EV_DONE: t->done++; break;
    case SIM_EV_LOAD:
        t->seen.read_elems[ev->tensor] += (uint64_t)(ev->rows * ev->cols);
        t->seen.read_ops[ev->tensor]++;
        if ((ev->tensor == SIM_Q || ev->tensor == SIM_K) && t->n < (int)sizeof t->order - 1)
            t->order[t->n++] = ev->tensor == SIM_Q ? 'Q' : 'K';
        break;
    case SIM_EV_STORE:
        t->seen.write_elems[ev->tensor] += (uint64_t)(ev->rows * ev->cols);
        t->seen.write_ops[ev->tensor]++;
        if (ev->tensor == SIM_O && t->n < (int)sizeof t->order - 1)
            t->order[t->n++] = 'O';
        break;
    default: break;
    }
}

/* Levels, thread blocks and time stamps of events: a transfer names its two
 * levels (a load HBM -> SRAM, a store back), a buffer its level, a block is
 * numbered in run order over the blocks of heads, and the paper's model has
 * no clock. */
typedef struct {
    int bad_levels, bad_time, events;
    int64_t last_block, blocks_seen, last_head;
    int64_t hq;
} level_trace;

static void on_level_event(void *ctx, const sim_event *ev)
{
    level_trace *t = ctx;
    t->events++;
    sim_level want_from = SIM_LEVEL_COUNT, want_to = SIM_LEVEL_COUNT;
    if (ev->kind == SIM_EV_LOAD) {
        want_from = SIM_LEVEL_HBM;
        want_to = SIM_LEVEL_SRAM;
    } else if (ev->kind == SIM_EV_STORE) {
        want_from = SIM_LEVEL_SRAM;
        want_to = SIM_LEVEL_HBM;
    } else if (ev->kind == SIM_EV_ALLOC || ev->kind == SIM_EV_FREE) {
        want_from = want_to = SIM_LEVEL_SRAM;
    }
    t->bad_levels += ev->from != want_from || ev->to != want_to;
    t->bad_time += ev->t != 0.0;
    if (ev->kind == SIM_EV_DONE)
        return;
    /* The block in hand is the head block's index: b H + h over the query
     * heads a block takes; it changes only forwards, by one. */
    assert_int_equal(ev->block, ev->head / t->hq);
    if (ev->block != t->last_block) {
        assert_int_equal(ev->block, t->last_block + 1);
        t->last_block = ev->block;
        t->blocks_seen++;
    }
}

static void test_events_levels_blocks_time(void **state)
{
    (void)state;
    assert_string_equal(sim_level_name(SIM_LEVEL_HBM), "HBM");
    assert_string_equal(sim_level_name(SIM_LEVEL_SRAM), "SRAM");
    assert_string_equal(sim_level_name(SIM_LEVEL_COUNT), "?");
    for (int a = 0; a < sim_algo_count(); a++)
        for (int group = 0; group <= (a == SIM_FA2); group++) {
            sim_shape sh = { .N = 40, .d = 8, .M = 16 * 1024, .dtype = SIM_FP16,
                             .batch = 2, .heads = 4, .kv_heads = 2 };
            const sim_run_opts run = { .group = group };
            sim_plan p;
            assert_int_equal(sim_plan_make((sim_algo)a, &sh, &run, 16, 16, SIM_PLAN_USER, &p), 0);
            level_trace t = { .last_block = -1, .hq = group ? 2 : 1 };
            sim_observer obs = { on_level_event, &t };
            sim_result r;
            assert_int_equal(sim_run((sim_algo)a, &sh, &p, NULL, NULL, NULL, &obs, &r, NULL,
                                     0), 0);
            assert_true(t.events > 0);
            assert_int_equal(t.bad_levels, 0);
            assert_int_equal(t.bad_time, 0);
            /* B H / hq blocks: 8 one head at a time, 4 with two heads each */
            assert_int_equal(t.blocks_seen, group ? 4 : 8);
            sim_result_free(&r);
        }
}

/* The registry is the one place that says which run options a loop order
 * serves: a plan is made exactly when sim_run_opts_check allows it, for
 * every loop order, pass, grouping and split; and the shape check refuses
 * the combinations no loop order serves, with the options named. */
static void test_run_options_one_place(void **state)
{
    (void)state;
    int served = 0;
    for (int a = 0; a < sim_algo_count(); a++)
        for (int pass = 0; pass < SIM_PASS_COUNT; pass++)
            for (int group = 0; group <= 1; group++)
                for (int64_t S = 0; S <= 2; S += 2) {
                    sim_shape sh = { .N = 64, .d = 8, .M = 64 * 1024, .dtype = SIM_FP16,
                                     .heads = 4, .kv_heads = group ? 2 : 4 };
                    const sim_run_opts run = { .pass = (sim_pass)pass, .group = group,
                                               .splits = S };
                    char err[256] = "";
                    const int valid = sim_run_opts_valid(&sh, &run, err, sizeof err) == 0;
                    if (!valid) {
                        assert_true(strstr(err, "--") != NULL || strstr(err, "plan of") != NULL);
                        continue;
                    }
                    const int ok = sim_run_opts_check((sim_algo)a, &run, err, sizeof err) == 0;
                    assert_int_equal(ok, sim_loop_find((sim_algo)a, &run) != NULL);
                    sim_plan p;
                    assert_int_equal(sim_plan_make((sim_algo)a, &sh, &run, 16, 16, SIM_PLAN_USER,
                                                   &p) == 0,
                                     ok);
                    /* grouped heads and split-KV: FA2's forward only */
                    assert_int_equal(ok, !(group || S > 1) || (a == SIM_FA2 && pass == SIM_FWD));
                    served += ok;
                }
    /* plain, + fa2 grouped, split */
    assert_int_equal(served, sim_algo_count() * SIM_PASS_COUNT + 2);
}

/* Split-KV's best plan is the best of the fitting pairs with T_c >= S, found
 * here by trying them all, for decoding shapes (N_q small, N_k long) with and
 * without a causal mask. Without one, the largest B_c that fits (which the
 * search once tried alone) can leave fewer key blocks than splits. */
static void test_split_plan_is_optimal(void **state)
{
    (void)state;
    uint64_t rng = 77;
    int checked = 0;
    for (int k = 0; k < 60; k++) {
        sim_shape sh = { .N = tu_rand_range(&rng, 1, 40), .d = tu_rand_range(&rng, 1, 64),
                         .dtype = SIM_FP16, .causal = k % 2 };
        sh.Nk = sh.N + tu_rand_range(&rng, 16, 900);
        sh.M = (uint64_t)tu_rand_range(&rng, 2048, 64 * 1024);
        const sim_run_opts run = { .splits = tu_rand_range(&rng, 2, 12) };
        uint64_t eb = 0, es = 0;
        int found = 0;
        for (int small = 0; small <= 1 && !found; small++) {
            int64_t cr[300], cc[300];
            const int nr = axis_cands(sh.N, small, cr), nc = axis_cands(sh.Nk, small, cc);
            for (int x = 0; x < nr; x++)
                for (int y = 0; y < nc; y++) {
                    sim_plan p;
                    assert_int_equal(sim_plan_make(SIM_FA2, &sh, &run, cr[x], cc[y],
                                                   SIM_PLAN_AUTO, &p), 0);
                    if (!p.fits || p.Tc < run.splits)
                        continue;
                    uint64_t steps, bytes = plan_bytes(&p, &sh, &steps);
                    if (!found || bytes < eb || (bytes == eb && steps < es)) {
                        eb = bytes;
                        es = steps;
                    }
                    found = 1;
                }
        }
        sim_plan p;
        char err[1024];
        const int rc = sim_plan_choose(SIM_FA2, &sh, &run, SIM_PLAN_AUTO, 0, 0, &p, err,
                                       sizeof err);
        if ((rc == 0) != found)
            fprintf(stderr, "N=%lld Nk=%lld d=%lld M=%llu S=%lld causal=%d: %s\n",
                    (long long)sh.N, (long long)sh.Nk, (long long)sh.d,
                    (unsigned long long)sh.M, (long long)run.splits, sh.causal, err);
        assert_int_equal(rc == 0, found);
        if (!found)
            continue;
        uint64_t steps, bytes = plan_bytes(&p, &sh, &steps);
        assert_true(p.fits && p.Tc >= run.splits);
        assert_int_equal(bytes, eb);
        assert_int_equal(steps, es);
        checked++;
    }
    assert_true(checked > 40);
}

static void test_events_match_counters(void **state)
{
    (void)state;
    sim_shape sh = { .N = 70, .d = 8, .M = 16 * 1024, .dtype = SIM_FP16, .causal = 0 };
    for (int causal = 0; causal <= 1; causal++)
        for (int a = 0; a < sim_algo_count(); a++) {
            sh.causal = causal;
            sim_plan p;
            assert_int_equal(sim_plan_make((sim_algo)a, &sh, NULL, 32, 16, SIM_PLAN_USER, &p), 0);
            assert_true(p.fits);
            trace *t = calloc(1, sizeof *t);
            sim_observer obs = { on_event, t };
            sim_result r;
            assert_int_equal(sim_run((sim_algo)a, &sh, &p, NULL, NULL, NULL, &obs, &r, NULL, 0), 0);
            assert_true(sim_counts_equal(&t->seen, &r.counts));
            assert_int_equal(t->sram_max, p.sram_peak);
            assert_int_equal(t->allocs, t->frees);
            assert_int_equal(t->done, 1);
            t->order[t->n] = '\0';
            if (a == SIM_FA2 && !causal)   /* T_r = 3, T_c = 5: Q K*5 O, three times */
                assert_string_equal(t->order, "QKKKKKOQKKKKKOQKKKKKO");
            if (a == SIM_FA1 && !causal)   /* line 2 and the steps move O_acc, not O: K Q*3
                                              four times, then K (Q O)*3, O written once */
                assert_string_equal(t->order, "KQQQKQQQKQQQKQQQKQOQOQO");
            if (a == SIM_FA2 && causal)    /* block i sees K blocks 0..floor((32i+31)/16) */
                assert_string_equal(t->order, "QKKOQKKKKOQKKKKKO");
            sim_result_free(&r);
            free(t);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_best_plan_is_optimal),
        cmocka_unit_test(test_large_blocks_are_bounded_candidates),
        cmocka_unit_test(test_small_blocks_rescue_countability),
        cmocka_unit_test(test_paper_plan),
        cmocka_unit_test(test_article_sram_sum),
        cmocka_unit_test(test_misfit_hint_works),
        cmocka_unit_test(test_events_match_counters),
        cmocka_unit_test(test_events_levels_blocks_time),
        cmocka_unit_test(test_run_options_one_place),
        cmocka_unit_test(test_split_plan_is_optimal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
