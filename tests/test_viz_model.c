/*
 * test_viz_model.c — the view model, step by step, against an independent
 * observation of the same simulator runs.
 *
 * The reference side attaches its own observer to sim_run and records, per
 * SIM_EV_LINE, the counters reached (ev->counts) and, for FA1, the values of
 * m_i, l_i as they are stored (ev->data of the STORE events). Statistics are
 * also recomputed from scratch with reference/ref_tile.h, row by row, in the
 * order FA2's Algorithm 1 uses, so that equality is bitwise. Counters at the
 * last step are compared with the closed form (sim_theory_counts).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>

#include "ref_tile.h"
#include "sim.h"
#include "viz_model.h"

/* ---- an independent observer ------------------------------------------------ */

typedef struct {
    int line;
    int64_t i, j;
} where;

typedef struct {
    size_t n, cap;
    where *at;                 /* per LINE event */
    sim_counts *before;        /* counters when the LINE was reached */
    sim_counts final;
    /* FA1: m_i, l_i stored at line 13, per (i, j): rows of block i. */
    float *m_store, *l_store;  /* indexed [(j * T_r + i) * B_r + r] */
    int64_t Tr, Br;
} observed;

static void obs_event(void *ctx, const sim_event *e)
{
    observed *o = ctx;
    if (e->kind == SIM_EV_LINE) {
        if (o->n == o->cap) {
            o->cap = o->cap ? 2 * o->cap : 1024;
            o->at = realloc(o->at, o->cap * sizeof *o->at);
            o->before = realloc(o->before, o->cap * sizeof *o->before);
            assert_non_null(o->at);
            assert_non_null(o->before);
        }
        o->at[o->n] = (where){ e->line, e->i, e->j };
        o->before[o->n] = *e->counts;
        o->n++;
    } else if (e->kind == SIM_EV_STORE && e->data && o->m_store &&
               (e->tensor == SIM_m || e->tensor == SIM_l) && e->line == 13) {
        float *dst = e->tensor == SIM_m ? o->m_store : o->l_store;
        memcpy(dst + (e->j * o->Tr + e->i) * o->Br, e->data, (size_t)e->rows * sizeof(float));
    } else if (e->kind == SIM_EV_DONE) {
        o->final = *e->counts;
    }
}

static void observed_free(observed *o)
{
    free(o->at);
    free(o->before);
    free(o->m_store);
    free(o->l_store);
}

/* Run the configuration through sim directly, with the observer. */
static void observe(const viz_config *c, const sim_plan *p, int compute, observed *o,
                    sim_result *res)
{
    memset(o, 0, sizeof *o);
    float *Q = NULL, *K = NULL, *V = NULL;
    const size_t nd = (size_t)(c->sh.N * c->sh.d);
    if (compute) {
        Q = malloc(nd * sizeof *Q);
        K = malloc(nd * sizeof *K);
        V = malloc(nd * sizeof *V);
        sim_random_inputs(c->seed, c->sh.N, c->sh.d, c->sh.dtype, Q, K, V);
        if (c->algo == SIM_FA1) {
            o->Tr = p->Tr;
            o->Br = p->Br;
            o->m_store = calloc((size_t)(p->Tr * p->Tc * p->Br), sizeof(float));
            o->l_store = calloc((size_t)(p->Tr * p->Tc * p->Br), sizeof(float));
        }
    }
    sim_observer ob = { obs_event, o };
    char err[512];
    assert_int_equal(sim_run(c->algo, &c->sh, p, Q, K, V, &ob, res, err, sizeof err), 0);
    free(Q);
    free(K);
    free(V);
}

static viz_config small_cfg(sim_algo algo, int64_t N, int64_t d, int64_t B, int causal)
{
    viz_config c;
    viz_config_default(&c);
    c.algo = algo;
    c.sh.N = N;
    c.sh.d = d;
    c.sh.M = 64 * 1024;
    c.sh.causal = causal;
    c.Br = c.Bc = B;
    c.plan_kind = SIM_PLAN_USER;
    c.mode = VIZ_MODE_COMPUTE;
    return c;
}

static viz_model *build_ok(const viz_config *c)
{
    viz_model *m = NULL;
    char err[2048];
    int rc = viz_model_build(c, &m, err, sizeof err);
    if (rc != VIZ_OK)
        fprintf(stderr, "build: %s\n", err);
    assert_int_equal(rc, VIZ_OK);
    assert_non_null(m);
    return m;
}

/* ---- which tile is highlighted ------------------------------------------------ */

/* FA2, N = 64, B_r = B_c = 16: at line 7 with i = 1, j = 2 (0-based) the
 * step loads K tile 2 and V tile 2, nothing else. */
static void test_fa2_line7_tiles(void **state)
{
    (void)state;
    viz_config c = small_cfg(SIM_FA2, 64, 16, 16, 0);
    viz_model *m = build_ok(&c);
    uint64_t k;
    assert_int_equal(viz_model_find_step(m, 0, 7, 1, 2, &k), 0);
    assert_int_equal(viz_model_seek(m, k), 0);
    const viz_state *st = viz_model_state(m);
    assert_int_equal(st->line, 7);
    assert_int_equal(st->i, 1);
    assert_int_equal(st->j, 2);
    assert_int_equal(st->nxfer, 2);
    for (int x = 0; x < 2; x++) {
        assert_int_equal(st->xfer[x].kind, SIM_EV_LOAD);
        assert_int_equal(st->xfer[x].r0, 32);
        assert_int_equal(st->xfer[x].rows, 16);
        assert_int_equal(st->xfer[x].tr0, 2);
        assert_int_equal(st->xfer[x].tr1, 3);
        assert_int_equal(st->xfer[x].bytes, 16 * 16 * 2);
    }
    assert_int_equal(st->xfer[0].tensor, SIM_K);
    assert_int_equal(st->xfer[1].tensor, SIM_V);
    for (int t = SIM_K; t <= SIM_V; t++) {
        for (int64_t tr = 0; tr < 4; tr++) {
            unsigned mk = viz_tile_mark(m, (sim_tensor)t, tr, 0);
            /* Block i = 0 read every K, V tile already. */
            assert_true(mk & VIZ_TILE_READ);
            assert_int_equal(!!(mk & VIZ_TILE_LOADING), tr == 2);
            assert_false(mk & (VIZ_TILE_WRITTEN | VIZ_TILE_STORING));
        }
    }
    /* Q: tiles 0 and 1 read, 2 and 3 untouched; O: tile 0 written only.
     * Block i = 1 is in hand: Q_1 (in SRAM), O_1 (on chip, not yet in
     * HBM), and K_2, V_2; L_1 is not: it has no SRAM buffer of its own (line
     * 13 computes it into m_i's, line 15 stores it from there). */
    assert_int_equal(viz_tile_mark(m, SIM_Q, 0, 0), VIZ_TILE_READ);
    assert_int_equal(viz_tile_mark(m, SIM_Q, 1, 0), VIZ_TILE_READ | VIZ_TILE_CURRENT);
    assert_int_equal(viz_tile_mark(m, SIM_Q, 2, 0), 0);
    assert_int_equal(viz_tile_mark(m, SIM_O, 0, 0), VIZ_TILE_WRITTEN);
    assert_int_equal(viz_tile_mark(m, SIM_O, 1, 0), VIZ_TILE_CURRENT);
    assert_int_equal(viz_tile_mark(m, SIM_L, 0, 0), VIZ_TILE_WRITTEN);
    assert_int_equal(viz_tile_mark(m, SIM_L, 1, 0), 0);
    assert_int_equal(viz_tile_mark(m, SIM_S, 0, 0), 0);          /* not present */
    assert_int_equal(viz_tile_range_mark(m, SIM_K, 0, 4, 0, 1),
                     VIZ_TILE_READ | VIZ_TILE_LOADING | VIZ_TILE_CURRENT);
    assert_int_equal(viz_tile_range_mark(m, SIM_Q, 2, 4, 0, 1), 0);
    /* The next step (line 8) moves nothing: no load or store marked, but
     * K_2 is still the tile in hand. */
    assert_int_equal(viz_model_seek(m, k + 1), 0);
    assert_int_equal(viz_model_state(m)->line, 8);
    assert_int_equal(viz_model_state(m)->nxfer, 0);
    assert_int_equal(viz_tile_mark(m, SIM_K, 2, 0), VIZ_TILE_READ | VIZ_TILE_CURRENT);
    assert_int_equal(viz_tile_mark(m, SIM_K, 1, 0), VIZ_TILE_READ);
    /* Line 14 stores O tile i, line 15 L tile i. */
    assert_int_equal(viz_model_find_step(m, 0, 14, 1, -1, &k), 0);
    viz_model_seek(m, k);
    assert_int_equal(viz_tile_mark(m, SIM_O, 1, 0),
                     VIZ_TILE_WRITTEN | VIZ_TILE_STORING | VIZ_TILE_CURRENT);
    assert_int_equal(viz_model_state(m)->xfer[0].tensor, SIM_O);
    char buf[256];
    assert_int_equal(viz_tile_describe(m, SIM_K, 2, 0, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "read 2x"));
    assert_int_equal(viz_tile_describe(m, SIM_K, 9, 0, buf, sizeof buf), -1);
    viz_model_free(m);
}

/* ---- counters and resident buffers at every step ------------------------------- */

static void check_counters(sim_algo algo, int64_t N, int64_t d, int64_t B, int causal,
                           int compute)
{
    viz_config c = small_cfg(algo, N, d, B, causal);
    c.mode = compute ? VIZ_MODE_COMPUTE : VIZ_MODE_COUNT;
    viz_model *m = build_ok(&c);
    const viz_info *in = viz_model_info(m);
    observed o;
    sim_result res;
    observe(&c, &in->plan, 0, &o, &res);
    assert_int_equal(in->nsteps, o.n);
    assert_int_equal(in->computed, compute);
    for (uint64_t k = 0; k < in->nsteps; k++) {
        assert_int_equal(viz_model_seek(m, k), 0);
        const viz_state *st = viz_model_state(m);
        assert_int_equal(st->line, o.at[k].line);
        assert_int_equal(st->i, o.at[k].i);
        assert_int_equal(st->j, o.at[k].j);
        /* After step k = when the next line is reached (or the run ends). */
        const sim_counts *want = k + 1 < o.n ? &o.before[k + 1] : &o.final;
        if (!sim_counts_equal(&st->counts, want)) {
            fprintf(stderr, "%s N=%lld step %llu (line %d): counters differ\n",
                    sim_algo_name(algo), (long long)N, (unsigned long long)k, st->line);
            fail();
        }
        uint64_t used = 0;
        for (int b = 0; b < st->nbuf; b++) {
            assert_int_equal(st->buf[b].offset, used);
            used += st->buf[b].bytes;
        }
        assert_int_equal(used, st->sram_used);
        assert_true(st->sram_used <= c.sh.M);
        assert_int_equal(st->stats.available, compute);
    }
    /* The last step's counters are the closed form's. */
    assert_true(sim_counts_equal(&viz_model_state(m)->counts, &in->final_counts));
    assert_true(in->theory_matches);
    sim_counts th;
    assert_int_equal(sim_theory_counts(&in->plan, &c.sh, &th), 0);
    assert_true(sim_counts_equal(&th, &in->final_counts));
    observed_free(&o);
    sim_result_free(&res);
    viz_model_free(m);
}

static void test_counters_every_step(void **state)
{
    (void)state;
    for (int a = 0; a < sim_algo_count(); a++)
        for (int causal = 0; causal < 2; causal++) {
            check_counters((sim_algo)a, 64, 16, 16, causal, 1);
            check_counters((sim_algo)a, 50, 8, 16, causal, 0);   /* partial blocks */
        }
}

/* The buffers resident at each line are those of its phase. */
static void test_sram_phases(void **state)
{
    (void)state;
    viz_config c = small_cfg(SIM_FA2, 64, 16, 16, 0);
    viz_model *m = build_ok(&c);
    const viz_info *in = viz_model_info(m);
    viz_model_seek(m, 0);
    assert_int_equal(viz_model_state(m)->nbuf, 7);
    assert_int_equal(viz_model_state(m)->sram_used, in->plan.sram_peak);
    assert_string_equal(viz_model_state(m)->buf[0].name, "Q_i");
    assert_true(viz_model_state(m)->buf[0].flags & VIZ_BUF_LOADED);
    viz_model_seek(m, in->nsteps - 2);
    assert_int_equal(viz_model_state(m)->line, 15);
    assert_int_equal(viz_model_state(m)->nbuf, 7);
    assert_string_equal(viz_model_state(m)->buf[5].name, "m_i");
    assert_true(viz_model_state(m)->buf[5].flags & VIZ_BUF_STORED);   /* L_i from m_i */
    viz_model_seek(m, in->nsteps - 1);
    assert_int_equal(viz_model_state(m)->line, 17);
    assert_int_equal(viz_model_state(m)->nbuf, 0);                    /* released */
    viz_model_free(m);

    /* Naive: line 1 holds Q_i, K_j, S_ij; line 2 (one pass here) S_rows, m,
     * l; line 3 P_ij, V_j, O_i. */
    c = small_cfg(SIM_NAIVE, 64, 16, 16, 0);
    m = build_ok(&c);
    in = viz_model_info(m);
    const char *want[4][3] = { { "", "", "" }, { "Q_i", "K_j", "S_ij" },
                               { "S_rows", "m", "l" }, { "P_ij", "V_j", "O_i" } };
    for (uint64_t k = 0; k + 1 < in->nsteps; k++) {
        viz_model_seek(m, k);
        const viz_state *st = viz_model_state(m);
        assert_true(st->line >= 1 && st->line <= 3);
        assert_int_equal(st->nbuf, 3);
        for (int b = 0; b < 3; b++)
            assert_string_equal(st->buf[b].name, want[st->line][b]);
    }
    viz_model_free(m);
}

/* ---- statistics ------------------------------------------------------------------ */

/* FA2: replay Algorithm 1 for one row block with ref_tile.h and compare m_i,
 * l_i, alpha and the changed flags of every line-9 step, at lines 12 and 13
 * the final m, l and L; at line 15 L, which must also equal the simulator's
 * output. */
static void check_fa2_stats(int64_t N, int64_t d, int64_t B, int causal)
{
    viz_config c = small_cfg(SIM_FA2, N, d, B, causal);
    viz_model *m = build_ok(&c);
    const viz_info *in = viz_model_info(m);
    observed o;
    sim_result res;
    observe(&c, &in->plan, 1, &o, &res);
    const int64_t Br = in->plan.Br, Bc = in->plan.Bc;
    float *Q = malloc((size_t)(N * d) * sizeof *Q), *K = malloc((size_t)(N * d) * sizeof *K);
    float *V = malloc((size_t)(N * d) * sizeof *V);
    sim_random_inputs(c.seed, N, d, c.sh.dtype, Q, K, V);
    float *S = malloc((size_t)(Br * Bc) * sizeof *S);
    const float scale = 1.0f / sqrtf((float)d);
    int changes = 0;
    for (int64_t i = 0; i < in->plan.Tr; i++) {
        const int64_t r0 = i * Br, br = N - r0 < Br ? N - r0 : Br;
        float mm[64], ll[64];
        for (int64_t r = 0; r < br; r++) {
            mm[r] = -REF_INF;
            ll[r] = 0.0f;
        }
        const int64_t j_end = causal ? ((r0 + br - 1) / Bc) + 1 : in->plan.Tc;
        for (int64_t j = 0; j < j_end; j++) {
            const int64_t c0 = j * Bc, bc = N - c0 < Bc ? N - c0 : Bc;
            ref_tile_scores(Q + r0 * d, K + c0 * d, (int)br, (int)bc, (int)d, scale, S);
            if (causal)
                ref_tile_mask_causal(S, (int)br, (int)bc, r0, c0);
            uint64_t k;
            assert_int_equal(viz_model_find_step(m, 0, 9, i, j, &k), 0);
            viz_model_seek(m, k);
            const viz_stats *s = &viz_model_state(m)->stats;
            assert_true(s->shown && s->before_valid && s->after_valid && s->alpha_shown);
            assert_int_equal(s->row0, r0);
            assert_int_equal(s->block_rows, br);
            assert_int_equal(s->nrows, br);
            for (int64_t r = 0; r < br; r++) {
                float m_old = mm[r];
                float alpha = ref_online_step(S + r * bc, (int)bc, &mm[r], &ll[r]);
                assert_memory_equal(&s->m_old[r], &m_old, sizeof(float));
                assert_memory_equal(&s->m_new[r], &mm[r], sizeof(float));
                assert_memory_equal(&s->l_new[r], &ll[r], sizeof(float));
                assert_memory_equal(&s->alpha[r], &alpha, sizeof(float));
                assert_int_equal(s->changed[r], m_old != mm[r]);
                changes += s->changed[r];
            }
        }
        /* Line 12 divides O_i by l_i and leaves the final m_i, l_i of the
         * block; line 13 turns m_i into L_i = m_i + log l_i. */
        uint64_t k;
        assert_int_equal(viz_model_find_step(m, 0, 12, i, -1, &k), 0);
        viz_model_seek(m, k);
        const viz_stats *s = &viz_model_state(m)->stats;
        assert_false(s->m_is_L_before);
        assert_false(s->m_is_L_after);
        assert_false(s->out_normalised_before);
        assert_true(s->out_normalised);
        assert_false(s->alpha_shown);
        for (int64_t r = 0; r < br; r++) {
            assert_memory_equal(&s->m_old[r], &mm[r], sizeof(float));
            assert_memory_equal(&s->l_old[r], &ll[r], sizeof(float));
            assert_memory_equal(&s->m_new[r], &mm[r], sizeof(float));
            assert_memory_equal(&s->l_new[r], &ll[r], sizeof(float));
        }
        assert_int_equal(viz_model_find_step(m, 0, 13, i, -1, &k), 0);
        viz_model_seek(m, k);
        s = &viz_model_state(m)->stats;
        assert_false(s->m_is_L_before);
        assert_true(s->m_is_L_after);
        assert_true(s->out_normalised_before && s->out_normalised);
        assert_false(s->alpha_shown);
        for (int64_t r = 0; r < br; r++) {
            float L = ref_lse(mm[r], ll[r]);
            assert_memory_equal(&s->m_old[r], &mm[r], sizeof(float));
            assert_memory_equal(&s->l_old[r], &ll[r], sizeof(float));
            assert_memory_equal(&s->m_new[r], &L, sizeof(float));
            assert_memory_equal(&s->l_new[r], &ll[r], sizeof(float));
        }
        /* Line 15 stores L_i: the view's m_i equals the simulator's L. */
        assert_int_equal(viz_model_find_step(m, 0, 15, i, -1, &k), 0);
        viz_model_seek(m, k);
        s = &viz_model_state(m)->stats;
        assert_true(s->m_is_L_before && s->after_valid);
        assert_memory_equal(s->m_new, res.L + r0, (size_t)br * sizeof(float));
        /* Line 5: initialised, nothing before. */
        assert_int_equal(viz_model_find_step(m, 0, 5, i, -1, &k), 0);
        viz_model_seek(m, k);
        s = &viz_model_state(m)->stats;
        assert_false(s->before_valid);
        assert_true(s->after_valid);
        assert_true(s->m_new[0] == -REF_INF && s->l_new[0] == 0.0f);
    }
    assert_true(changes > 0);
    free(Q);
    free(K);
    free(V);
    free(S);
    observed_free(&o);
    sim_result_free(&res);
    viz_model_free(m);
}

static void test_fa2_stats(void **state)
{
    (void)state;
    check_fa2_stats(64, 16, 16, 0);
    check_fa2_stats(50, 8, 16, 1);
}

/* FA1: at line 13 (i, j) the view's m_i, l_i after the step are what the
 * simulator stored to HBM; at line 9 the values before are those stored at
 * (i, j - 1), and the O row after line 12 is normalised. */
static void test_fa1_stats(void **state)
{
    (void)state;
    viz_config c = small_cfg(SIM_FA1, 48, 8, 16, 0);
    viz_model *m = build_ok(&c);
    const viz_info *in = viz_model_info(m);
    observed o;
    sim_result res;
    observe(&c, &in->plan, 1, &o, &res);
    const int64_t Br = in->plan.Br, Tr = in->plan.Tr;
    for (int64_t j = 0; j < in->plan.Tc; j++)
        for (int64_t i = 0; i < Tr; i++) {
            uint64_t k;
            assert_int_equal(viz_model_find_step(m, 0, 13, i, j, &k), 0);
            viz_model_seek(m, k);
            const viz_stats *s = &viz_model_state(m)->stats;
            assert_true(s->shown && s->after_valid && s->out_normalised);
            const float *ms = o.m_store + (j * Tr + i) * Br, *ls = o.l_store + (j * Tr + i) * Br;
            assert_memory_equal(s->m_new, ms, (size_t)s->nrows * sizeof(float));
            assert_memory_equal(s->l_new, ls, (size_t)s->nrows * sizeof(float));
            assert_int_equal(viz_model_find_step(m, 0, 9, i, j, &k), 0);
            viz_model_seek(m, k);
            s = &viz_model_state(m)->stats;
            assert_true(s->before_valid);
            if (j > 0) {
                assert_memory_equal(s->m_old, o.m_store + ((j - 1) * Tr + i) * Br,
                                    (size_t)s->nrows * sizeof(float));
            } else {
                assert_true(s->m_old[0] == -REF_INF && s->l_old[0] == 0.0f);
            }
            /* Line 8 loads: no "before" (another block's values). */
            assert_int_equal(viz_model_find_step(m, 0, 8, i, j, &k), 0);
            viz_model_seek(m, k);
            assert_false(viz_model_state(m)->stats.before_valid);
            assert_int_equal(viz_model_state(m)->nxfer, 4);
        }
    /* The O row at the end equals the simulator's output row (rounded to the
     * dtype as FA1 stores it). */
    uint64_t k;
    assert_int_equal(viz_model_find_step(m, 0, 13, 1, in->plan.Tc - 1, &k), 0);
    viz_model_seek(m, k);
    const viz_stats *s = &viz_model_state(m)->stats;
    float row[VIZ_OUT_MAX_COLS];
    memcpy(row, s->out_new, sizeof row);
    sim_round_to_dtype(row, s->out_cols, c.sh.dtype);
    assert_memory_equal(row, res.O + 1 * Br * c.sh.d, (size_t)s->out_cols * sizeof(float));
    observed_free(&o);
    sim_result_free(&res);
    viz_model_free(m);
}

/* Naive over tiles (rows of S that do not fit): two passes by default,
 * three asked for; each step of line 2 carries its pass number, and each
 * pass visits every tile. */
static void check_naive_passes(sim_softmax form, int passes)
{
    /* A row of S in fp32 is 512 x 4 = 2,048 B > M. */
    viz_config c = small_cfg(SIM_NAIVE, 512, 8, 16, 0);
    c.sh.M = 2000;
    c.run.softmax = form;
    viz_model *m = build_ok(&c);
    const viz_info *in = viz_model_info(m);
    assert_int_equal(in->plan.softmax_passes, passes);
    int seen[4] = { 0 };
    for (uint64_t k = 0; k < in->nsteps; k++) {
        viz_model_seek(m, k);
        const viz_state *st = viz_model_state(m);
        if (st->line != 2) {
            assert_int_equal(st->pass, 0);
            continue;
        }
        assert_true(st->pass >= 1 && st->pass <= passes);
        seen[st->pass]++;
        assert_true(st->stats.shown && st->stats.before_valid && st->stats.after_valid);
        assert_false(st->stats.alpha_shown);
    }
    assert_int_equal(seen[1], in->plan.Tr * in->plan.Tc);
    assert_int_equal(seen[2], seen[1]);
    assert_int_equal(seen[3], passes == 3 ? seen[1] : 0);
    viz_model_free(m);
}

static void test_naive_passes(void **state)
{
    (void)state;
    check_naive_passes(SIM_SOFTMAX_AUTO, 2);
    check_naive_passes(SIM_SOFTMAX_3PASS, 3);
}

/* ---- seeking ----------------------------------------------------------------------- */

/* A jump lands on the same state as walking there, across checkpoints. */
static void test_seek_equals_walk(void **state)
{
    (void)state;
    viz_config c = small_cfg(SIM_FA1, 512, 8, 16, 1);
    viz_model *m = build_ok(&c);
    const viz_info *in = viz_model_info(m);
    assert_true(in->nsteps > 2 * VIZ_CHECKPOINT_STEPS);
    const uint64_t n = in->nsteps;
    viz_state *walk = malloc((size_t)n * sizeof *walk);
    viz_transfer (*xf)[4] = malloc((size_t)n * sizeof *xf);
    for (uint64_t k = 0; k < n; k++) {
        viz_model_seek(m, k);
        walk[k] = *viz_model_state(m);
        memcpy(xf[k], walk[k].xfer, (size_t)(walk[k].nxfer < 4 ? walk[k].nxfer : 4) *
               sizeof(viz_transfer));
    }
    uint64_t r = 12345;
    for (int t = 0; t < 500; t++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        const uint64_t k = (r >> 33) % n;
        assert_int_equal(viz_model_seek(m, k), 0);
        const viz_state *st = viz_model_state(m);
        assert_int_equal(st->step, k);
        assert_true(sim_counts_equal(&st->counts, &walk[k].counts));
        assert_int_equal(st->nbuf, walk[k].nbuf);
        assert_memory_equal(st->buf, walk[k].buf, sizeof st->buf);
        assert_int_equal(st->sram_used, walk[k].sram_used);
        assert_int_equal(st->nxfer, walk[k].nxfer);
        for (int x = 0; x < st->nxfer && x < 4; x++) {
            assert_int_equal(st->xfer[x].r0, xf[k][x].r0);
            assert_int_equal(st->xfer[x].tensor, xf[k][x].tensor);
        }
        assert_memory_equal(&st->stats, &walk[k].stats, sizeof st->stats);
    }
    assert_int_equal(viz_model_seek(m, n), -1);
    assert_int_equal(viz_model_state(m)->step < n, 1);
    free(walk);
    free(xf);
    viz_model_free(m);
}

/* ---- modes, refusals, limits --------------------------------------------------------- */

static void test_count_only(void **state)
{
    (void)state;
    viz_config c;
    viz_config_default(&c);
    c.sh.N = 4096;              /* N^2 d = 2^30: counted, not computed */
    c.sh.M = 96 * 1024;
    viz_model *m = build_ok(&c);
    const viz_info *in = viz_model_info(m);
    assert_false(in->computed);
    assert_non_null(strstr(in->mode_note, "count-only"));
    assert_non_null(strstr(in->mode_note, "--compute"));
    assert_int_equal(viz_model_seek(m, in->nsteps - 1), 0);
    assert_false(viz_model_state(m)->stats.available);
    assert_true(sim_counts_equal(&viz_model_state(m)->counts, &in->final_counts));
    /* Every K tile was read, every O tile written. */
    for (int64_t t = 0; t < in->tensor[SIM_K].grid_rows; t++)
        assert_true(viz_tile_mark(m, SIM_K, t, 0) & VIZ_TILE_READ);
    assert_int_equal(viz_tile_range_mark(m, SIM_O, 0, in->tensor[SIM_O].grid_rows, 0, 1),
                     VIZ_TILE_WRITTEN);
    viz_model_free(m);
}

static void test_refused_plan(void **state)
{
    (void)state;
    viz_config c;
    viz_config_default(&c);
    c.sh.N = 64;
    c.sh.d = 64;
    c.sh.M = 8 * 1024;
    c.Br = c.Bc = 64;           /* needs 57,856 B; M = 8 KiB */
    c.plan_kind = SIM_PLAN_USER;
    viz_model *m = NULL;
    char err[2048];
    assert_int_equal(viz_model_build(&c, &m, err, sizeof err), VIZ_EREFUSED);
    assert_non_null(m);
    assert_non_null(strstr(err, "does not fit"));
    const viz_info *in = viz_model_info(m);
    assert_true(in->refused);
    assert_int_equal(in->nsteps, 0);
    assert_int_equal(viz_model_seek(m, 0), -1);
    const viz_state *st = viz_model_state(m);
    int refused = -1;
    for (int b = 0; b < st->nbuf; b++) {
        if (st->buf[b].flags & VIZ_BUF_REFUSED) {
            assert_int_equal(refused, -1);
            refused = b;
            assert_true(st->buf[b].offset <= c.sh.M);
            assert_true(st->buf[b].offset + st->buf[b].bytes > c.sh.M);
        } else if (refused < 0) {
            assert_true(st->buf[b].offset + st->buf[b].bytes <= c.sh.M);
        } else {
            assert_true(st->buf[b].flags & VIZ_BUF_PENDING);
        }
    }
    assert_int_equal(refused, 1);     /* Q_i fits (8,192 B), K_j does not */
    assert_string_equal(st->buf[1].name, "K_j");
    assert_int_equal(viz_tile_mark(m, SIM_Q, 0, 0), 0);
    viz_model_free(m);

    /* M too small for any plan: refused too, with the smallest plan shown. */
    c.Br = c.Bc = 0;
    c.plan_kind = SIM_PLAN_AUTO;
    c.sh.M = 100;
    assert_int_equal(viz_model_build(&c, &m, err, sizeof err), VIZ_EREFUSED);
    assert_true(viz_model_info(m)->refused);
    viz_model_free(m);

    /* A paper plan over M runs, its buffers past M flagged. */
    viz_config_default(&c);
    c.algo = SIM_FA1;
    c.plan_kind = SIM_PLAN_PAPER;
    m = build_ok(&c);
    assert_false(viz_model_info(m)->plan.fits);
    st = viz_model_state(m);
    int over = 0;
    for (int b = 0; b < st->nbuf; b++)
        over += !!(st->buf[b].flags & VIZ_BUF_OVER);
    assert_true(over > 0);
    viz_model_free(m);
}

static void test_limits(void **state)
{
    (void)state;
    viz_config c;
    viz_config_default(&c);
    c.sh.N = 4096;
    c.sh.M = 96 * 1024;
    c.Br = c.Bc = 16;
    c.plan_kind = SIM_PLAN_USER;
    c.max_log_bytes = 1 << 20;
    viz_model *m = NULL;
    char err[2048];
    assert_int_equal(viz_model_build(&c, &m, err, sizeof err), VIZ_EUSAGE);
    assert_null(m);
    assert_non_null(strstr(err, "hint"));
    c.max_log_bytes = 0;
    c.sh.N = INT64_C(1) << 31;
    assert_int_equal(viz_model_build(&c, &m, err, sizeof err), VIZ_EUSAGE);
    c.sh.N = 0;
    assert_int_equal(viz_model_build(&c, &m, err, sizeof err), VIZ_EUSAGE);
    /* Forced compute beyond 2^34 multiply-adds is refused. */
    viz_config_default(&c);
    c.sh.N = 65536;
    c.sh.M = 96 * 1024;
    c.mode = VIZ_MODE_COMPUTE;
    assert_int_equal(viz_model_build(&c, &m, err, sizeof err), VIZ_EUSAGE);
    assert_null(m);
}

/* The backward passes step through: each shows the tensors its closed form
 * moves (dO, dQ, dK, dV among them, naive's dP, dS, FA2's D) and no others,
 * the measured counts equal the closed form, and the counters after the last
 * step are the run's. No statistics are claimed for them. */
static void test_backward_steps(void **state)
{
    (void)state;
    for (int a = 0; a < sim_algo_count(); a++) {
        viz_config c = small_cfg((sim_algo)a, 40, 8, 16, a == SIM_FA2);
        c.Bc = 8;
        c.run.pass = SIM_BWD;
        viz_model *m = build_ok(&c);
        const viz_info *in = viz_model_info(m);
        assert_true(in->theory_matches);
        sim_counts th;
        assert_int_equal(sim_theory_counts(&in->plan, &c.sh, &th), 0);
        for (int t = 0; t < SIM_TENSOR_COUNT; t++)
            assert_int_equal(in->tensor[t].present, th.read_ops[t] + th.write_ops[t] > 0);
        const sim_tensor grads[4] = { SIM_dO, SIM_dQ, SIM_dK, SIM_dV };
        for (int g = 0; g < 4; g++)
            assert_true(in->tensor[grads[g]].present);
        sim_algo unfused;
        assert_int_equal(sim_algo_parse("unfused", &unfused), 0);
        assert_int_equal(in->tensor[SIM_dP].present, a == SIM_NAIVE || a == (int)unfused);
        assert_int_equal(in->tensor[SIM_D].present, a == SIM_FA2);
        assert_int_equal(viz_model_seek(m, in->nsteps - 1), 0);
        assert_true(sim_counts_equal(&viz_model_state(m)->counts, &th));
        for (uint64_t k = 0; k < in->nsteps; k++) {
            viz_model_seek(m, k);
            assert_false(viz_model_state(m)->stats.shown);
        }
        viz_model_free(m);
    }
}

/* Split-KV: every step of phase 1 names its split, the merge's too; after
 * the merge of the last split (line 4, split S) m and l of each row are the
 * row's largest visible score and its sum of exponentials, worked out here in
 * double from the same seeded inputs (fp16-rounded), with the O row not yet
 * normalised; line 5's L is m + log l. With T_r = 1, line 3's "after" is the
 * split's partial, not the merge's empty start. */
static void test_split_steps(void **state)
{
    (void)state;
    viz_config c = small_cfg(SIM_FA2, 3, 8, 4, 1);
    c.sh.Nk = 120;
    c.Bc = 16;
    c.run.splits = 3;
    viz_model *m = build_ok(&c);
    const viz_info *in = viz_model_info(m);
    assert_true(in->theory_matches);
    assert_true(in->tensor[SIM_Ot].present && in->tensor[SIM_m].present);
    assert_int_equal(in->tensor[SIM_Ot].rows, 3 * 3);
    int seen[3] = { 0 };
    uint64_t last_merge = UINT64_MAX, fin = UINT64_MAX, last_partial = UINT64_MAX;
    for (uint64_t k = 0; k < in->nsteps; k++) {
        viz_model_seek(m, k);
        const viz_state *st = viz_model_state(m);
        if (st->line >= 1 && st->line <= 4) {
            assert_true(st->split >= 0 && st->split < 3);
            seen[st->split] = 1;
        } else {
            assert_int_equal(st->split, -1);
        }
        if (st->line == 3 && st->split == 2)
            last_partial = k;
        if (st->line == 4 && st->split == 2)
            last_merge = k;
        if (st->line == 5)
            fin = k;
    }
    assert_true(seen[0] && seen[1] && seen[2]);
    assert_true(last_merge != UINT64_MAX && fin == last_merge + 1);
    float Q[3 * 8], K[120 * 8], V[120 * 8];
    sim_random_qkv(c.seed, 3, 120, 8, SIM_FP16, Q, K, V);
    double mx[3], sum[3];
    for (int r = 0; r < 3; r++) {
        double s[120];
        mx[r] = -INFINITY;
        sum[r] = 0.0;
        for (int col = 0; col <= r + 117; col++) {          /* causal, offset 117 */
            double dot = 0.0;
            for (int x = 0; x < 8; x++)
                dot += (double)Q[r * 8 + x] * K[col * 8 + x];
            s[col] = dot / sqrt(8.0);
            mx[r] = fmax(mx[r], s[col]);
        }
        for (int col = 0; col <= r + 117; col++)
            sum[r] += exp(s[col] - mx[r]);
    }
    viz_model_seek(m, last_merge);
    const viz_stats *s = &viz_model_state(m)->stats;
    assert_true(s->shown && s->after_valid && s->nrows == 3 && !s->out_normalised);
    for (int r = 0; r < 3; r++) {
        assert_true(fabs((double)s->m_new[r] - mx[r]) <= 1e-5 * fmax(1.0, fabs(mx[r])));
        assert_true(fabs((double)s->l_new[r] - sum[r]) <= 1e-4 * sum[r]);
    }
    viz_model_seek(m, fin);
    s = &viz_model_state(m)->stats;
    assert_true(s->after_valid && s->nrows == 3);
    assert_true(s->m_is_L_after && s->out_normalised && !s->out_normalised_before);
    for (int r = 0; r < 3; r++) {
        const double L = mx[r] + log(sum[r]);
        assert_true(fabs((double)s->m_new[r] - L) <= 1e-4 * fmax(1.0, fabs(L)));
    }
    viz_model_seek(m, last_partial);                 /* the last split's own state */
    s = &viz_model_state(m)->stats;
    assert_true(s->after_valid && s->nrows == 3);
    for (int r = 0; r < 3; r++)
        assert_true(s->m_new[r] > -REF_INF && s->l_new[r] > 0.0f);
    viz_model_free(m);
}

/* ---- each value changes on the line that changes it ------------------------------ */

/* The lines of each loop order's pseudocode that change m_i, l_i, the chosen
 * row of O_i, and that turn m_i into L_i = m_i + log l_i: bit L for line L.
 * Written out from the papers here, not read from the loop orders' tables:
 *   naive (FlashAttention, Algorithm 0): 2 computes P = softmax(S), its row
 *     maxima and sums; 3 computes O = P V;
 *   fa1 (FlashAttention, Algorithm 1): 10-11 compute m~, l~, m_new, l_new
 *     beside m_i, l_i; 12 writes the new O_i; 13 writes l_i = l_new,
 *     m_i = m_new;
 *   fa2 (FlashAttention-2, Algorithm 1): 9 computes m_i, P~, l_i; 10
 *     rescales and accumulates O_i; 12 divides O_i by l_i; 13 computes
 *     L_i = m_i + log l_i;
 *   fa2 split-KV (fasim's numbering): 2 runs FA2's lines 8-10 on the split's
 *     O~, m, l; 4 merges a split into m, l, O; 5 divides O by l and turns m
 *     into L;
 *   the backward passes keep no running statistics: the view shows none. */
typedef struct {
    const char *what;          /* for failure messages */
    sim_algo algo;
    sim_pass pass;
    int splits;
    uint32_t m, l, o, L;
} line_facts;

#define LN(x) (1u << (x))

static const line_facts LINE_FACTS[] = {
    { "naive", SIM_NAIVE, SIM_FWD, 1, LN(2), LN(2), LN(3), 0 },
    { "fa1", SIM_FA1, SIM_FWD, 1, LN(13), LN(13), LN(12), 0 },
    { "fa2", SIM_FA2, SIM_FWD, 1, LN(9), LN(9), LN(10) | LN(12), LN(13) },
    { "fa2 split-KV", SIM_FA2, SIM_FWD, 2, LN(2) | LN(4), LN(2) | LN(4),
      LN(2) | LN(4) | LN(5), LN(5) },
    { "naive bwd", SIM_NAIVE, SIM_BWD, 1, 0, 0, 0, 0 },
    { "fa1 bwd", SIM_FA1, SIM_BWD, 1, 0, 0, 0, 0 },
    { "fa2 bwd", SIM_FA2, SIM_BWD, 1, 0, 0, 0, 0 },
};

static int floats_differ(const float *a, const float *b, int n)
{
    return n > 0 && memcmp(a, b, (size_t)n * sizeof *a) != 0;
}

/* Walk every step of one run. Where the view shows a value before and after
 * a step, it may differ only on a line whose pseudocode changes it; each
 * such line where it is shown changes it at some step, and (without a
 * mask, which may hide a whole key block from the chosen row) the O row at
 * every step of its lines. (Naive's one-pass softmax computes a block's
 * statistics from nothing: it shows them after line 2 only.) */
static void check_lines(const line_facts *f, const viz_config *c)
{
    viz_model *m = build_ok(c);
    const viz_info *in = viz_model_info(m);
    enum { V_M, V_L, V_O, V_LSE, NV };
    const char *const names[NV] = { "m_i", "l_i", "O row", "L_i" };
    const uint32_t lines[NV] = { f->m, f->l, f->o, f->L };
    uint32_t changed_at[NV] = { 0 }, steady_at[NV] = { 0 }, seen_at[NV] = { 0 };
    uint64_t compared = 0;
    for (uint64_t k = 0; k < in->nsteps; k++) {
        assert_int_equal(viz_model_seek(m, k), 0);
        const viz_state *st = viz_model_state(m);
        const viz_stats *s = &st->stats;
        if (!s->before_valid || !s->after_valid)
            continue;
        assert_true(st->line > 0 && st->line < 32);
        int ch[NV] = { 0 };
        if (s->shown) {
            const int mv = floats_differ(s->m_old, s->m_new, s->nrows);
            if (s->m_is_L_before != s->m_is_L_after || (mv && s->m_is_L_before))
                ch[V_LSE] = 1;
            else
                ch[V_M] = mv;
            ch[V_L] = floats_differ(s->l_old, s->l_new, s->nrows);
        }
        if (s->out_shown)
            ch[V_O] = floats_differ(s->out_old, s->out_new, s->out_cols) ||
                      s->out_normalised_before != s->out_normalised;
        compared++;
        const int shown[NV] = { s->shown, s->shown, s->out_shown, s->shown };
        for (int v = 0; v < NV; v++) {
            if (shown[v])
                seen_at[v] |= LN(st->line);
            if (ch[v] && !(lines[v] & LN(st->line)))
                fail_msg("%s%s: %s changes at step %llu, line %d (i = %lld, j = %lld), "
                         "which does not change it", f->what, c->sh.causal ? " causal" : "",
                         names[v], (unsigned long long)k + 1, st->line, (long long)st->i,
                         (long long)st->j);
            if (ch[v])
                changed_at[v] |= LN(st->line);
            else if (v == V_O && s->out_shown)
                steady_at[v] |= LN(st->line);
        }
    }
    for (int v = 0; v < NV; v++) {
        if ((changed_at[v] & lines[v] & seen_at[v]) != (lines[v] & seen_at[v]))
            fail_msg("%s%s: %s never changes at some line of 0x%x (changed at 0x%x)",
                     f->what, c->sh.causal ? " causal" : "", names[v], lines[v],
                     changed_at[v]);
    }
    if (!c->sh.causal && (steady_at[V_O] & lines[V_O]))
        fail_msg("%s: the O row stays the same at a step of a line that changes it (0x%x)",
                 f->what, steady_at[V_O] & lines[V_O]);
    assert_true(compared > 0 || (f->m | f->l | f->o | f->L) == 0);
    viz_model_free(m);
}

static void test_values_change_on_their_lines(void **state)
{
    (void)state;
    for (size_t x = 0; x < sizeof LINE_FACTS / sizeof LINE_FACTS[0]; x++)
        for (int causal = 0; causal <= 1; causal++) {
            const line_facts *f = &LINE_FACTS[x];
            viz_config c = small_cfg(f->algo, 40, 8, 16, causal);
            c.Bc = 8;
            c.out_row = 3;
            c.run.pass = f->pass;
            c.run.splits = f->splits;
            check_lines(f, &c);
        }
    /* The naive softmax over tiles (rows of S over M), in two passes and
     * in three. */
    viz_config c = small_cfg(SIM_NAIVE, 512, 8, 16, 0);
    c.sh.M = 2000;
    check_lines(&LINE_FACTS[0], &c);
    c.run.softmax = SIM_SOFTMAX_3PASS;
    check_lines(&LINE_FACTS[0], &c);
}

/* The forward passes' values against float64: with s_k = q . k_k / sqrt(d)
 * over the keys row r sees in key blocks 1 .. j, mx their maximum,
 *   FA2 after line 9 of (i, j): m_i = mx, l_i = sum_k e^(s_k - mx);
 *   FA2 after line 10:          O row = sum_k e^(s_k - mx) v_k;
 *   FA1 after line 12:          O row = that sum / l_i;
 *   FA1 after line 13:          m_i = mx, l_i = sum_k e^(s_k - mx);
 * and before lines 10 and 12 the O row is the same sum over key blocks
 * 1 .. j - 1 (0 before the first). fp32 inputs and outputs, so that only
 * the arithmetic differs. */
/* Float64 over the keys k < upto that query row q sees (k <= q under the
 * causal mask), s_k = q . k_k / sqrt(d): their largest score (-inf for
 * none), sum_k e^(s_k - mx), and per column x < d <= 8 of V
 * o[x] = sum_k e^(s_k - mx) v_kx and bound[x] = sum_k e^(s_k - mx) |v_kx|. */
typedef struct {
    double mx, sum, o[8], bound[8];
} partial64;

static partial64 partial_sum64(const float *Q, const float *K, const float *V, int64_t d,
                               int64_t q, int64_t upto, int causal)
{
    partial64 p;
    memset(&p, 0, sizeof p);
    p.mx = -INFINITY;
    double sc[64];
    const int64_t n = causal && q + 1 < upto ? q + 1 : upto;
    assert_true(n <= 64 && d <= 8);
    for (int64_t k = 0; k < n; k++) {
        double dot = 0.0;
        for (int64_t x = 0; x < d; x++)
            dot += (double)Q[q * d + x] * K[k * d + x];
        sc[k] = dot / sqrt((double)d);
        p.mx = fmax(p.mx, sc[k]);
    }
    for (int64_t k = 0; k < n; k++) {
        const double e = exp(sc[k] - p.mx);
        p.sum += e;
        for (int64_t x = 0; x < d; x++) {
            p.o[x] += e * V[k * d + x];
            p.bound[x] += e * fabs(V[k * d + x]);
        }
    }
    return p;
}

static void check_partial_sums(sim_algo algo, int causal)
{
    const int64_t N = 40, d = 8, row = 3;
    viz_config c = small_cfg(algo, N, d, 16, causal);
    c.Bc = 8;
    c.out_row = row;
    c.sh.dtype = SIM_FP32;
    viz_model *m = build_ok(&c);
    const viz_info *in = viz_model_info(m);
    float *Q = malloc((size_t)(N * d) * sizeof *Q), *K = malloc((size_t)(N * d) * sizeof *K);
    float *V = malloc((size_t)(N * d) * sizeof *V);
    assert_true(Q && K && V);
    sim_random_inputs(c.seed, N, d, c.sh.dtype, Q, K, V);
    const int out_line = algo == SIM_FA2 ? 10 : 12, stat_line = algo == SIM_FA2 ? 9 : 13;
    int checked = 0;
    for (int64_t i = 0; i < in->plan.Tr; i++) {
        const int64_t r0 = i * in->plan.Br;
        for (int64_t j = 0; j < in->plan.Tc; j++) {
            uint64_t ko, ks;
            if (viz_model_find_step(m, 0, out_line, i, j, &ko) != 0)
                continue;                                /* a block the mask skips */
            assert_int_equal(viz_model_find_step(m, 0, stat_line, i, j, &ks), 0);
            const int64_t keys = (j + 1) * in->plan.Bc < N ? (j + 1) * in->plan.Bc : N;
            const int64_t keys_before = j * in->plan.Bc;
            viz_model_seek(m, ks);
            const viz_stats *s = &viz_model_state(m)->stats;
            assert_true(s->after_valid && s->nrows == (int)(N - r0 < 16 ? N - r0 : 16));
            for (int r = 0; r < s->nrows; r++) {
                const partial64 p = partial_sum64(Q, K, V, d, r0 + r, keys, causal);
                if (p.mx == -INFINITY) {
                    assert_true(s->m_new[r] == -REF_INF && s->l_new[r] == 0.0f);
                    continue;
                }
                assert_true(fabs(s->m_new[r] - p.mx) <= 1e-6 * fmax(1.0, fabs(p.mx)));
                assert_true(fabs(s->l_new[r] - p.sum) <= 1e-5 * p.sum);
            }
            const int64_t q = r0 + row;
            if (q >= N)
                continue;
            viz_model_seek(m, ko);
            s = &viz_model_state(m)->stats;
            assert_true(s->out_shown && s->before_valid && s->after_valid && s->out_cols == d);
            /* Before the line: key blocks 1 .. j - 1; after it: 1 .. j. */
            for (int side = 0; side < 2; side++) {
                const partial64 p =
                    partial_sum64(Q, K, V, d, q, side ? keys : keys_before, causal);
                const float *got = side ? s->out_new : s->out_old;
                for (int64_t x = 0; x < d; x++) {
                    /* FA2's O_i is unnormalised until line 12; FA1's is not. */
                    const double div = algo == SIM_FA2 || p.sum == 0.0 ? 1.0 : p.sum;
                    const double want = p.o[x] / div;
                    const double tol = p.sum == 0.0 ? 0.0 : 1e-5 * p.bound[x] / div + 1e-7;
                    if (!(fabs(got[x] - want) <= tol))
                        fail_msg("%s%s: O row %lld %s line %d of (i, j) = (%lld, %lld), col "
                                 "%lld: %.9g, float64 %.9g", algo == SIM_FA2 ? "fa2" : "fa1",
                                 causal ? " causal" : "", (long long)q,
                                 side ? "after" : "before", out_line, (long long)i + 1,
                                 (long long)j + 1, (long long)x, (double)got[x], want);
                }
            }
            checked++;
        }
    }
    assert_true(checked > 0);
    free(Q);
    free(K);
    free(V);
    viz_model_free(m);
}

static void test_partial_sums(void **state)
{
    (void)state;
    for (int causal = 0; causal <= 1; causal++) {
        check_partial_sums(SIM_FA2, causal);
        check_partial_sums(SIM_FA1, causal);
    }
}

/* ---- helpers ----------------------------------------------------------------------- */

/* Every line a run reaches is in its pseudocode, which fits the column:
 * the forward and backward passes of each loop order and FA2's split-KV. */
static void test_pseudocode_covers_lines(void **state)
{
    (void)state;
    for (int v = 0; v < 2 * sim_algo_count() + 1; v++) {
        const sim_algo a = v < 2 * sim_algo_count() ? (sim_algo)(v % sim_algo_count()) : SIM_FA2;
        viz_config c = small_cfg(a, 32, 8, 16, v % 2);
        c.Bc = 8;
        if (v >= sim_algo_count() && v < 2 * sim_algo_count())
            c.run.pass = SIM_BWD;
        else if (v == 2 * sim_algo_count())
            c.run.splits = 3;
        viz_model *m = build_ok(&c);
        int n;
        const viz_code_line *code = viz_pseudocode(viz_model_info(m), &n);
        assert_true(n > 0);
        for (int k = 0; k < n; k++)
            assert_true(2 * code[k].indent + (int)strlen(code[k].text) <= 31);
        for (uint64_t k = 0; k < viz_model_info(m)->nsteps; k++) {
            int line, found = 0;
            viz_model_step_where(m, k, &line, NULL, NULL);
            for (int q = 0; q < n; q++)
                found |= code[q].line == line;
            assert_true(found);
        }
        viz_model_free(m);
    }
}

/* ---- how many times each tile moved; the tiles in hand; the block grid ---- */

/* FA2 (i outer) and FA1 (j outer), N = 64, B_r = B_c = 16 (T_r = T_c = 4):
 * at the step of line 9 at block (i, j), 0-based, the counts follow from
 * the loop order alone. FA2 loads Q_i once per i and K_j, V_j once per
 * (i, j): K tile q was read i + 1 times if q <= j, else i. FA1 loads K_j,
 * V_j once per j and Q_i once per (j, i): Q tile q was read j + 1 times if
 * q <= i, else j. Seeking backwards and forwards gives the same counts. */
static void check_counts_at(viz_model *m, sim_algo algo, int64_t i, int64_t j)
{
    uint64_t k;
    assert_int_equal(viz_model_find_step(m, 0, 9, i, j, &k), 0);
    assert_int_equal(viz_model_seek(m, k), 0);
    for (int64_t q = 0; q < 4; q++) {
        uint32_t kr, kw, qr, qw;
        viz_tile_range_counts(m, SIM_K, q, q + 1, 0, 1, &kr, &kw);
        viz_tile_range_counts(m, SIM_Q, q, q + 1, 0, 1, &qr, &qw);
        assert_int_equal(kw, 0);
        assert_int_equal(qw, 0);
        if (algo == SIM_FA2) {
            assert_int_equal(kr, (uint32_t)(q <= j ? i + 1 : i));
            assert_int_equal(qr, (uint32_t)(q <= i ? 1 : 0));
        } else {
            assert_int_equal(kr, (uint32_t)(q <= j ? 1 : 0));
            assert_int_equal(qr, (uint32_t)(q <= i ? j + 1 : j));
        }
    }
    /* A range answers with its busiest tile. */
    uint32_t r, w;
    viz_tile_range_counts(m, algo == SIM_FA2 ? SIM_K : SIM_Q, 0, 4, 0, 1, &r, &w);
    assert_int_equal(r, (uint32_t)(algo == SIM_FA2 ? i + 1 : j + 1));
}

/* The runs of these tests: N = 64, d = 16, B_r = B_c = 16, a 4 x 4 grid. */
static const sim_algo FA_ALGOS[2] = { SIM_FA2, SIM_FA1 };

static viz_model *build_4x4(sim_algo algo, int causal)
{
    viz_config c = small_cfg(algo, 64, 16, 16, causal);
    return build_ok(&c);
}

static void test_tile_counts(void **state)
{
    (void)state;
    const sim_algo *algos = FA_ALGOS;
    for (int a = 0; a < 2; a++) {
        viz_model *m = build_4x4(algos[a], 0);
        const viz_info *in = viz_model_info(m);
        /* The run's largest counts: T_r = 4 reads of a K tile (FA2), of a
         * Q tile (FA1). FA1 keeps its running output in fp32 O_acc (the
         * kernels' intermediates): line 2 zeroes each tile, the first
         * T_c - 1 = 3 key blocks write it back (4 writes), and the last
         * writes O in the dtype (1). */
        assert_int_equal(in->tensor[SIM_K].max_reads, algos[a] == SIM_FA2 ? 4 : 1);
        assert_int_equal(in->tensor[SIM_Q].max_reads, algos[a] == SIM_FA2 ? 1 : 4);
        assert_int_equal(in->tensor[SIM_O].max_writes, 1);
        if (algos[a] == SIM_FA1)
            assert_int_equal(in->tensor[SIM_Oacc].max_writes, 4);
        check_counts_at(m, algos[a], 2, 1);
        check_counts_at(m, algos[a], 0, 3);      /* backwards */
        check_counts_at(m, algos[a], 3, 2);
        check_counts_at(m, algos[a], 1, 0);
        viz_model_free(m);
    }
}

/* On every step inside both loops the tiles in hand are marked, moving or
 * not: Q_i, O_i (and FA2's L_i, FA1's m_i, l_i) and K_j, V_j, and no other
 * tile of those tensors; outside the inner loop (FA1's lines 5-6, FA2's
 * line 4) only the loop's own side. */
static void test_current_tiles(void **state)
{
    (void)state;
    for (int a = 0; a < 2; a++) {
        viz_model *m = build_4x4(FA_ALGOS[a], 0);
        const viz_info *in = viz_model_info(m);
        int compute_steps = 0;
        for (uint64_t k = 0; k < in->nsteps; k++) {
            assert_int_equal(viz_model_seek(m, k), 0);
            const viz_state *st = viz_model_state(m);
            const sim_tensor qside[2] = { SIM_Q, SIM_O }, kside[2] = { SIM_K, SIM_V };
            for (int x = 0; x < 2; x++)
                for (int64_t q = 0; q < 4; q++) {
                    assert_int_equal(!!(viz_tile_mark(m, qside[x], q, 0) & VIZ_TILE_CURRENT),
                                     st->i == q);
                    assert_int_equal(!!(viz_tile_mark(m, kside[x], q, 0) & VIZ_TILE_CURRENT),
                                     st->j == q);
                }
            if (st->line == 9 && st->nxfer == 0) {
                assert_true(st->i >= 0 && st->j >= 0);
                compute_steps++;
            }
        }
        assert_int_equal(compute_steps, 16);     /* line 9 at each (i, j) */
        viz_model_free(m);
    }
}

/* The block grid: FA2 visits the blocks row by row, FA1 column by column;
 * under --causal the blocks (i, j) with j B_c > i B_r + B_r - 1 are fully
 * masked and never reached (skipped); naive and split-KV have none. */
static void check_blocks(sim_algo algo, int causal)
{
    viz_model *m = build_4x4(algo, causal);
    const viz_info *in = viz_model_info(m);
    assert_true(in->blocks);
    int seen = 0;
    for (uint64_t k = 0; k < in->nsteps; k++) {
        viz_model_seek(m, k);
        const viz_state *st = viz_model_state(m);
        if (st->i < 0 || st->j < 0)
            continue;
        seen++;
        for (int64_t i = 0; i < 4; i++)
            for (int64_t j = 0; j < 4; j++) {
                const int masked = causal && j * 16 > i * 16 + 15;
                const int before = algo == SIM_FA2
                                       ? (i < st->i || (i == st->i && j < st->j))
                                       : (j < st->j || (j == st->j && i < st->i));
                unsigned want = i == st->i && j == st->j ? VIZ_BLOCK_NOW
                                : masked                 ? VIZ_BLOCK_SKIPPED
                                : before                 ? VIZ_BLOCK_DONE
                                                         : VIZ_BLOCK_TODO;
                assert_int_equal(viz_block_range(m, i, i + 1, j, j + 1), want);
            }
    }
    assert_true(seen > 0);
    /* After the last step every block is done or skipped. */
    viz_model_seek(m, in->nsteps - 1);
    const unsigned all = viz_block_range(m, 0, 4, 0, 4);
    assert_int_equal(all & ~(unsigned)(VIZ_BLOCK_DONE | VIZ_BLOCK_SKIPPED), 0);
    assert_int_equal(!!(all & VIZ_BLOCK_SKIPPED), causal);
    viz_model_free(m);
}

static void test_block_grid(void **state)
{
    (void)state;
    for (int a = 0; a < 2; a++) {
        check_blocks(FA_ALGOS[a], 0);
        check_blocks(FA_ALGOS[a], 1);
    }
    viz_model *m = build_4x4(SIM_NAIVE, 0);
    assert_false(viz_model_info(m)->blocks);
    assert_int_equal(viz_block_range(m, 0, 4, 0, 4), 0);
    viz_model_free(m);
}

/* The report's same tiles, found here with the planner directly: the
 * largest of 128, 64, 32, 16 whose square plan fits M for every loop order
 * of the forward pass; -1 when none does. */
static int64_t same_square(const sim_shape *sh)
{
    static const int64_t tiles[] = { 128, 64, 32, 16 };
    for (int t = 0; t < 4; t++) {
        int all = 1;
        for (int a = 0; a < sim_algo_count(); a++) {
            sim_plan p;
            all &= sim_plan_make((sim_algo)a, sh, NULL, tiles[t], tiles[t], SIM_PLAN_USER,
                                 &p) == 0 && p.fits;
        }
        if (all)
            return tiles[t];
    }
    return -1;
}

/* The view's default problem has N several times d (S, P are N x N), and
 * runs on the report's tiles: several by several blocks, a few hundred
 * steps. */
static void test_default_shape(void **state)
{
    (void)state;
    viz_config c;
    viz_config_default(&c);
    assert_true(c.sh.N >= 4 * c.sh.d);
    assert_int_equal(c.plan_kind, SIM_PLAN_SAME);
    viz_model *m = build_ok(&c);
    const viz_info *in = viz_model_info(m);
    const int64_t t = same_square(&c.sh);
    assert_true(t > 0);
    assert_int_equal(in->same_tiles, t);
    assert_int_equal(in->plan.Br, t);
    assert_int_equal(in->plan.Bc, t);
    assert_true(in->plan.Tr >= 4 && in->plan.Tc >= 4);
    assert_true(in->nsteps >= 100 && in->nsteps <= 1000);
    viz_model_free(m);
}

/* Same tiles for every loop order ('a' in the view keeps them), at the
 * report's classroom size too; --plan best gives each its own. */
static void test_same_tiles_every_order(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = { { 256, 32, 20 * 1024 }, { 1024, 64, 96 * 1024 },
                                         { 512, 32, 16 * 1024 } };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        viz_config c;
        viz_config_default(&c);
        c.sh.N = shapes[k][0];
        c.sh.d = shapes[k][1];
        c.sh.M = (uint64_t)shapes[k][2];
        c.mode = VIZ_MODE_COUNT;
        const int64_t t = same_square(&c.sh);
        assert_true(t > 0);
        int64_t best_bc[SIM_ALGO_MAX];
        for (int a = 0; a < sim_algo_count(); a++) {
            c.algo = (sim_algo)a;
            c.plan_kind = SIM_PLAN_SAME;
            viz_model *m = build_ok(&c);
            assert_int_equal(viz_model_info(m)->plan.Br, t);
            assert_int_equal(viz_model_info(m)->plan.Bc, t);
            viz_model_free(m);
            c.plan_kind = SIM_PLAN_AUTO;
            m = build_ok(&c);
            assert_int_equal(viz_model_info(m)->same_tiles, 0);
            best_bc[a] = viz_model_info(m)->plan.Bc;
            viz_model_free(m);
        }
        if (k == 1)          /* the report's example: FA1 and FA2 differ when best */
            assert_true(best_bc[SIM_FA1] != best_bc[SIM_FA2]);
    }
}

static void test_axis_cell(void **state)
{
    (void)state;
    for (int64_t n = 1; n <= 70; n += 3)
        for (int64_t tile = 1; tile <= 20; tile += 3)
            for (int64_t cells = 1; cells <= 25; cells++) {
                const int64_t tiles = (n + tile - 1) / tile;
                int64_t next = 0;
                for (int64_t cidx = 0; cidx < cells; cidx++) {
                    int64_t t0, t1;
                    viz_axis_cell(n, tile, cells, cidx, &t0, &t1);
                    assert_true(t0 < t1 && t1 <= tiles);
                    assert_true(t0 <= next);           /* no tile skipped */
                    if (t1 > next)
                        next = t1;
                }
                assert_int_equal(next, tiles);
            }
}

/* ---- the window --------------------------------------------------------------- */

/* Everything a renderer reads at the current step, compared between a model
 * that records the whole run and one that records a window of it. */
static void same_frame(const viz_model *a, const viz_model *b)
{
    const viz_info *in = viz_model_info(a);
    const viz_state *x = viz_model_state(a), *y = viz_model_state(b);
    assert_int_equal(x->step, y->step);
    assert_int_equal(x->line, y->line);
    assert_int_equal(x->i, y->i);
    assert_int_equal(x->j, y->j);
    assert_int_equal(x->split, y->split);
    assert_int_equal(x->pass, y->pass);
    assert_true(sim_counts_equal(&x->counts, &y->counts));
    assert_int_equal(x->nxfer, y->nxfer);
    for (int k = 0; k < x->nxfer; k++) {
        const viz_transfer *u = &x->xfer[k], *v = &y->xfer[k];
        assert_int_equal(u->kind, v->kind);
        assert_int_equal(u->tensor, v->tensor);
        assert_int_equal(u->r0, v->r0);
        assert_int_equal(u->c0, v->c0);
        assert_int_equal(u->rows, v->rows);
        assert_int_equal(u->cols, v->cols);
        assert_string_equal(u->buf, v->buf);
        assert_int_equal(u->bytes, v->bytes);
    }
    assert_int_equal(x->nbuf, y->nbuf);
    assert_memory_equal(x->buf, y->buf, (size_t)x->nbuf * sizeof x->buf[0]);
    assert_int_equal(x->sram_used, y->sram_used);
    assert_int_equal(x->stats.shown, y->stats.shown);
    assert_int_equal(x->stats.row0, y->stats.row0);
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        const viz_tensor_info *ti = &in->tensor[t];
        if (!ti->present)
            continue;
        for (int64_t r = 0; r < ti->grid_rows; r++)
            for (int64_t c = 0; c < ti->grid_cols; c++) {
                assert_int_equal(viz_tile_mark(a, (sim_tensor)t, r, c),
                                 viz_tile_mark(b, (sim_tensor)t, r, c));
                uint32_t ra, wa, rb, wb;
                viz_tile_range_counts(a, (sim_tensor)t, r, r + 1, c, c + 1, &ra, &wa);
                viz_tile_range_counts(b, (sim_tensor)t, r, r + 1, c, c + 1, &rb, &wb);
                assert_int_equal(ra, rb);
                assert_int_equal(wa, wb);
                char da[256], db[256];
                assert_int_equal(viz_tile_describe(a, (sim_tensor)t, r, c, da, sizeof da), 0);
                assert_int_equal(viz_tile_describe(b, (sim_tensor)t, r, c, db, sizeof db), 0);
                assert_string_equal(da, db);
            }
    }
    for (int64_t i = 0; i < in->plan.Tr; i++)
        for (int64_t j = 0; j < in->plan.Tc; j++)
            assert_int_equal(viz_block_range(a, i, i + 1, j, j + 1),
                             viz_block_range(b, i, i + 1, j, j + 1));
}

/* A count-only model that records 61 steps at a time shows the frames of
 * one that records the whole run, stepping forwards, backwards (each
 * leaving its window) and jumping, for every loop order and pass, causal
 * and not; its searches find the same steps. */
static void test_window_same_frames(void **state)
{
    (void)state;
    const sim_algo algos[] = { SIM_FA2, SIM_FA1, SIM_NAIVE };
    for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++)
        for (int pass = 0; pass <= 1; pass++)
            for (int causal = 0; causal <= 1; causal++) {
                viz_config c;
                viz_config_default(&c);
                c.algo = algos[a];
                c.sh.N = 160;
                c.sh.d = 8;
                c.sh.causal = causal;
                c.run.pass = pass ? SIM_BWD : SIM_FWD;
                c.plan_kind = SIM_PLAN_USER;
                c.Br = c.Bc = 16;
                c.mode = VIZ_MODE_COUNT;
                viz_model *full = NULL, *win = NULL;
                char err[2048];
                assert_int_equal(viz_model_build(&c, &full, err, sizeof err), VIZ_OK);
                c.window_steps = 61;
                assert_int_equal(viz_model_build(&c, &win, err, sizeof err), VIZ_OK);
                const viz_info *fi = viz_model_info(full), *wi = viz_model_info(win);
                assert_true(fi->nsteps > 3 * 61);
                assert_int_equal(fi->window_steps, fi->nsteps);
                assert_int_equal(wi->window_steps, 61);
                assert_int_equal(fi->nsteps, wi->nsteps);
                assert_int_equal(fi->blocks, wi->blocks);
                assert_true(sim_counts_equal(&fi->measured, &wi->measured));
                for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
                    assert_int_equal(fi->tensor[t].max_reads, wi->tensor[t].max_reads);
                    assert_int_equal(fi->tensor[t].max_writes, wi->tensor[t].max_writes);
                }
                const uint64_t n = fi->nsteps;
                uint64_t rng = 7;
                for (uint64_t q = 0; q < 3 * n; q++) {
                    uint64_t k;
                    if (q < n)
                        k = q;                          /* forwards */
                    else if (q < 2 * n)
                        k = 2 * n - 1 - q;              /* backwards */
                    else
                        k = ((rng = rng * 6364136223846793005u + 1442695040888963407u) >> 33) %
                            n;
                    assert_int_equal(viz_model_seek(full, k), 0);
                    assert_int_equal(viz_model_seek(win, k), 0);
                    if (q % 7 == 0 || q >= 2 * n)
                        same_frame(full, win);
                    int l1, l2;
                    int64_t i1, j1, i2, j2;
                    assert_int_equal(viz_model_step_where(full, k, &l1, &i1, &j1), 0);
                    assert_int_equal(viz_model_step_where(win, k, &l2, &i2, &j2), 0);
                    assert_true(l1 == l2 && i1 == i2 && j1 == j2);
                    if (q % 31 == 0) {
                        /* the next step at this line from the start: often
                         * outside the window */
                        uint64_t s1 = 0, s2 = 0;
                        const int r1 = viz_model_find_step(full, 0, l1, i1, j1, &s1);
                        assert_int_equal(viz_model_find_step(win, 0, l1, i1, j1, &s2), r1);
                        assert_int_equal(s1, s2);
                        assert_true(s1 <= k);
                    }
                }
                assert_int_equal(viz_model_seek(win, n), -1);
                viz_model_free(full);
                viz_model_free(win);
            }
}

/* A count-only run far longer than its window: the recording stays a few
 * MiB (the whole run's would be about 190 MiB), and the last step and the
 * first are reached from each other. */
static void test_window_memory_flat(void **state)
{
    (void)state;
    viz_config c;
    viz_config_default(&c);
    c.sh.N = 32768;
    viz_model *m = NULL;
    char err[2048];
    assert_int_equal(viz_model_build(&c, &m, err, sizeof err), VIZ_OK);
    const viz_info *in = viz_model_info(m);
    assert_false(in->computed);
    assert_true(in->nsteps > 16 * VIZ_WINDOW_STEPS);
    assert_true(in->log_bytes < (UINT64_C(8) << 20));
    assert_int_equal(viz_model_seek(m, in->nsteps - 1), 0);
    const viz_state *st = viz_model_state(m);
    assert_int_equal(st->line, 17);                  /* FA2's return */
    assert_true(sim_counts_equal(&st->counts, &in->final_counts));
    assert_true(in->log_bytes < (UINT64_C(8) << 20));
    assert_int_equal(viz_model_seek(m, 0), 0);
    assert_int_equal(st->line, 4);
    assert_int_equal(st->i, 0);
    viz_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fa2_line7_tiles),
        cmocka_unit_test(test_counters_every_step),
        cmocka_unit_test(test_sram_phases),
        cmocka_unit_test(test_fa2_stats),
        cmocka_unit_test(test_fa1_stats),
        cmocka_unit_test(test_naive_passes),
        cmocka_unit_test(test_seek_equals_walk),
        cmocka_unit_test(test_count_only),
        cmocka_unit_test(test_refused_plan),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_backward_steps),
        cmocka_unit_test(test_split_steps),
        cmocka_unit_test(test_values_change_on_their_lines),
        cmocka_unit_test(test_partial_sums),
        cmocka_unit_test(test_pseudocode_covers_lines),
        cmocka_unit_test(test_axis_cell),
        cmocka_unit_test(test_tile_counts),
        cmocka_unit_test(test_current_tiles),
        cmocka_unit_test(test_block_grid),
        cmocka_unit_test(test_default_shape),
        cmocka_unit_test(test_same_tiles_every_order),
        cmocka_unit_test(test_window_same_frames),
        cmocka_unit_test(test_window_memory_flat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
