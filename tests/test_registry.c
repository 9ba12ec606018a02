/*
 * test_registry.c — a loop order is one descriptor: a loop order defined in
 * this file alone, registered with sim_loop_register, is planned, run,
 * counted, checked against its closed form and stepped through the text
 * view like the built-in ones, and every command that goes over the loop
 * orders offers it: --algo parses it and lists it, "all" includes it, the
 * report and sweeps count it; the kernels, which have none of it, refuse
 * it. The registry refuses a wrong number, a taken name and one loop order
 * too many. Also: every built-in descriptor is
 * consistent (its lines are listed, its names match), and the kernels' copy
 * of the HBM element types agrees with the core's tensor table.
 *
 * The extra loop order is standard attention's softmax in two passes over
 * the tiles of S, recomputed from Q and K (never stored):
 *   for i: load Q_i; m_i = -inf, l_i = 0
 *     pass 1, for j: load K_j; S_ij = Q_i K_j^T; m_i, l_i online
 *     pass 2, for j: load K_j; S_ij again; P_ij = exp(S_ij - m_i) / l_i; write P_ij
 * Shapes: Q (N, d), K (N_k, d), P (N, N_k); Q_i (B_r, d), K_j (B_c, d),
 * S_ij (B_r, B_c), m_i, l_i (B_r).
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

#include "cli_args.h"
#include "kern.h"
#include "kern_exec.h"
#include "sim_hier.h"
#include "sim_loop.h"
#include "sim_plot.h"
#include "sim_sweep.h"
#include "sim_theory.h"
#include "test_util.h"
#include "viz_model.h"
#include "viz_text.h"

/* ---- the extra loop order ------------------------------------------------- */

/* The next number after the built-in loop orders naive, fa1, fa2 and the
 * unfused baseline. */
#define SM2_ALGO ((sim_algo)(SIM_FA2 + 2))

enum {
    SM2_L1_LOAD_Q = 1,
    SM2_L3_STATS = 3,
    SM2_L5_WRITE_P = 5,
    SM2_L7_RETURN = 7
};

static void sm2_plan(sim_plan *p, const sim_shape *sh, int e)
{
    sim_plan_add(p, SIM_BUF_Q_i, 1, p->Br, sh->d, e, "query block");
    sim_plan_add(p, SIM_BUF_K_j, 1, p->Bc, sh->d, e, "key block");
    sim_plan_add(p, SIM_BUF_S_ij, 1, p->Br, p->Bc, 4, "scores, then P_ij");
    sim_plan_add(p, SIM_BUF_m_i, 1, p->Br, 1, 4, "row maxima");
    sim_plan_add(p, SIM_BUF_l_i, 1, p->Br, 1, 4, "row sums");
    p->nphases = 1;
}

/* One tile of S_ij; pass 1 folds it into m_i, l_i, pass 2 normalises it. */
static void sm2_tile(const sim_hier *h, const float *Q_i, const float *K_j, float *S_ij,
                     float *m_i, float *l_i, int64_t br, int64_t bc, int64_t r0, int64_t c0,
                     int pass)
{
    ref_tile_scores(Q_i, K_j, (int)br, (int)bc, (int)h->sh.d, h->scale, S_ij);
    sim_mask_tile(h, S_ij, br, bc, r0, c0);
    for (int64_t r = 0; r < br; r++) {
        float *s = S_ij + r * bc;
        if (pass == 1)
            (void)ref_online_step(s, (int)bc, &m_i[r], &l_i[r]);
        else
            ref_exp_normalise(s, s, (int)bc, m_i[r], 1.0f / l_i[r]);
    }
}

static int sm2_run(sim_hier *h, const sim_plan *p)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    float *Q_i = sim_sram_take(h, p, 1, SIM_BUF_Q_i);
    float *K_j = sim_sram_take(h, p, 1, SIM_BUF_K_j);
    float *S_ij = sim_sram_take(h, p, 1, SIM_BUF_S_ij);
    float *m_i = sim_sram_take(h, p, 1, SIM_BUF_m_i);
    float *l_i = sim_sram_take(h, p, 1, SIM_BUF_l_i);
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * p->Br, br = sim_min64(p->Br, N - r0);
        sim_at(h, SM2_L1_LOAD_Q, i, -1);
        sim_load(h, SIM_Q, SIM_BUF_Q_i, Q_i, r0, 0, br, d);
        if (h->compute)
            for (int64_t r = 0; r < br; r++) {
                m_i[r] = -REF_INF;
                l_i[r] = 0.0f;
            }
        for (int pass = 1; pass <= 2; pass++)
            for (int64_t j = 0; j < p->Tc; j++) {
                const int64_t c0 = j * p->Bc, bc = sim_min64(p->Bc, N_k - c0);
                sim_at(h, pass == 1 ? SM2_L3_STATS : SM2_L5_WRITE_P, i, j);
                sim_load(h, SIM_K, SIM_BUF_K_j, K_j, c0, 0, bc, d);
                h->steps++;
                if (h->compute)
                    sm2_tile(h, Q_i, K_j, S_ij, m_i, l_i, br, bc, r0, c0, pass);
                if (pass == 2)
                    sim_store(h, SIM_P, SIM_BUF_S_ij, S_ij, r0, c0, br, bc);
            }
    }
    sim_at(h, SM2_L7_RETURN, -1, -1);
    sim_sram_release_all(h);
    return 0;
}

/* The descriptor's closed form, written with the core's helpers. */
static void sm2_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_counts *out)
{
    const uint64_t Tr = (uint64_t)p->Tr, TT = sim_th_mul(k, Tr, (uint64_t)p->Tc);
    const uint64_t Nd = sim_th_mul(k, (uint64_t)sh->N, (uint64_t)sh->d);
    const uint64_t Nkd = sim_th_mul(k, (uint64_t)sim_shape_Nk(sh), (uint64_t)sh->d);
    sim_th_put(out, SIM_Q, SIM_RD, Nd, Tr, k);
    sim_th_put(out, SIM_K, SIM_RD, sim_th_mul(k, 2 * Tr, Nkd), sim_th_mul(k, 2, TT), k);
    sim_th_put(out, SIM_P, SIM_WR, sim_th_mul(k, (uint64_t)sh->N, (uint64_t)sim_shape_Nk(sh)),
               TT, k);
}

static uint64_t sm2_steps(sim_chk *k, const sim_plan *p, const sim_shape *sh)
{
    (void)sh;
    return sim_th_mul(k, 2, sim_th_mul(k, (uint64_t)p->Tr, (uint64_t)p->Tc));
}

static const sim_code_line SM2_CODE[] = {
    { SM2_L1_LOAD_Q, 0, "for i: load Q_i, m_i = -inf,", 0, SIM_HEAT_NONE, NULL, 0 },
    { 0, 0, "  l_i = 0", 0, SIM_HEAT_NONE, NULL, 0 },
    { 2, 1, "for j = 1 .. T_c:", 0, SIM_HEAT_NONE, NULL, 0 },
    { SM2_L3_STATS, 2, "load K_j; S_ij; m_i, l_i", SIM_VIEW_STATS | SIM_VIEW_AFTER,
      SIM_HEAT_NONE, NULL, 0 },
    { 4, 1, "for j = 1 .. T_c:", 0, SIM_HEAT_NONE, NULL, 0 },
    { SM2_L5_WRITE_P, 2, "load K_j; S_ij; write P_ij",
      SIM_VIEW_STATS | SIM_VIEW_BEFORE | SIM_VIEW_AFTER, SIM_HEAT_NONE, NULL, 0 },
    { 0, 2, "  = exp(S_ij - m_i) / l_i", 0, SIM_HEAT_NONE, NULL, 0 },
    { 6, 0, "end for", 0, SIM_HEAT_NONE, NULL, 0 },
    { SM2_L7_RETURN, 0, "return P", 0, SIM_HEAT_NONE, NULL, 0 },
};

static const sim_loop sm2 = {
    .algo = SM2_ALGO,
    .pass = SIM_FWD,
    .name = "softmax2",
    .title = "standard softmax in two passes over tiles",
    .code_title = "two-pass softmax, P only",
    .code = SM2_CODE,
    .ncode = (int)(sizeof SM2_CODE / sizeof SM2_CODE[0]),
    .hbm = 1u << SIM_Q | 1u << SIM_K | 1u << SIM_V | 1u << SIM_O | 1u << SIM_P,
    .kv_loads = SIM_KV_EVERY_I,      /* not served: the view and tests use no paging */
    .bound = SIM_BOUND_STANDARD,     /* P, N x N_k, goes to HBM */
    .reread = SIM_BLOCK_R,           /* K comes back twice per block of B_r rows */
    .mark = 's',
    .mark_style = SIM_MARK_READ,
    .color = "#7d3c98",
    .plan = sm2_plan,
    .run = sm2_run,
    .counts = sm2_counts,
    .steps = sm2_steps,
};

/* ---- its closed form, independently --------------------------------------- */

/* Q once per query block, K twice per tile (once per pass), P written once
 * per tile: plain products, no helper of the core. */
static void sm2_expected(const sim_shape *sh, int64_t Br, int64_t Bc, sim_counts *c)
{
    const uint64_t N = (uint64_t)sh->N, Nk = (uint64_t)(sh->Nk ? sh->Nk : sh->N);
    const uint64_t d = (uint64_t)sh->d;
    const uint64_t br = (uint64_t)(Br < sh->N ? Br : sh->N);
    const uint64_t bc = (uint64_t)((uint64_t)Bc < Nk ? (uint64_t)Bc : Nk);
    const uint64_t Tr = (N + br - 1) / br, Tc = (Nk + bc - 1) / bc;
    memset(c, 0, sizeof *c);
    c->read_elems[SIM_Q] = N * d;
    c->read_ops[SIM_Q] = Tr;
    c->read_elems[SIM_K] = 2 * Tr * Nk * d;
    c->read_ops[SIM_K] = 2 * Tr * Tc;
    c->write_elems[SIM_P] = N * Nk;
    c->write_ops[SIM_P] = Tr * Tc;
}

static int setup(void **state)
{
    (void)state;
    static int done;
    if (!done) {
        assert_int_equal(sim_loop_register(&sm2), 0);
        done = 1;
    }
    return 0;
}

/* ---- tests ----------------------------------------------------------------- */

/* The view model of one run with B_r x B_c blocks; fails the test unless
 * it is built. */
static viz_model *build_view(sim_algo algo, const sim_shape *sh, const sim_run_opts *run,
                             int64_t Br, int64_t Bc)
{
    viz_config cfg;
    viz_config_default(&cfg);
    cfg.algo = algo;
    cfg.sh = *sh;
    if (run)
        cfg.run = *run;
    cfg.Br = Br;
    cfg.Bc = Bc;
    cfg.plan_kind = SIM_PLAN_USER;
    viz_model *m = NULL;
    char err[1024];
    assert_int_equal(viz_model_build(&cfg, &m, err, sizeof err), VIZ_OK);
    return m;
}

static void test_register_rules(void **state)
{
    (void)state;
    assert_ptr_equal(sim_loop_of(SM2_ALGO, SIM_FWD), &sm2);
    assert_null(sim_loop_of(SM2_ALGO, SIM_BWD));
    assert_int_equal(sim_loop_register(&sm2), -1);          /* taken */
    assert_string_equal(sim_algo_name(SM2_ALGO), "softmax2");
    assert_string_equal(sim_algo_title(SM2_ALGO), sm2.title);
    /* The study layer takes its facts from the descriptor alone. */
    assert_int_equal(sim_report_bound(SM2_ALGO), SIM_BOUND_STANDARD);
    const sim_bounds bd = { .theta_standard = 7.0, .theta_flash = 3.0 };
    assert_true(sim_report_theta(&bd, SM2_ALGO) == 7.0);
    assert_int_equal(sim_reread_block(SM2_ALGO, 4, 6), 4);
    sim_shape sh = { .N = 8, .d = 4, .M = 1 << 20, .dtype = SIM_FP16 };
    const sim_run_opts split = { .splits = 2 };
    assert_null(sim_loop_find(SM2_ALGO, &split));
    sim_plan p;
    assert_int_equal(sim_plan_make(SM2_ALGO, &sh, &split, 4, 4, SIM_PLAN_USER, &p), -1);
}

static void test_counts_equal_closed_form(void **state)
{
    (void)state;
    const int64_t Ns[] = { 1, 7, 16, 33, 100 }, ds[] = { 1, 8, 64 };
    const int64_t blocks[][2] = { { 1, 1 }, { 4, 8 }, { 16, 16 }, { 7, 3 }, { 64, 32 } };
    for (size_t a = 0; a < sizeof Ns / sizeof Ns[0]; a++)
        for (size_t b = 0; b < sizeof ds / sizeof ds[0]; b++)
            for (size_t q = 0; q < sizeof blocks / sizeof blocks[0]; q++)
                for (int causal = 0; causal <= 1; causal++) {
                    sim_shape sh = { .N = Ns[a], .d = ds[b], .M = UINT64_C(1) << 30,
                                     .dtype = SIM_FP16, .causal = causal,
                                     .Nk = causal ? 0 : Ns[a] + 5 };
                    sim_plan p;
                    assert_int_equal(sim_plan_make(SM2_ALGO, &sh, NULL, blocks[q][0], blocks[q][1],
                                                   SIM_PLAN_USER, &p), 0);
                    sim_result res;
                    char err[256];
                    assert_int_equal(sim_run(SM2_ALGO, &sh, &p, NULL, NULL, NULL, NULL, &res,
                                             err, sizeof err), 0);
                    sim_counts want, theory;
                    sm2_expected(&sh, blocks[q][0], blocks[q][1], &want);
                    assert_int_equal(sim_theory_counts(&p, &sh, &theory), 0);
                    assert_true(sim_counts_equal(&res.counts, &want));
                    assert_true(sim_counts_equal(&theory, &want));
                    uint64_t steps;
                    assert_int_equal(sim_theory_steps(&p, &sh, &steps), 0);
                    assert_int_equal(steps, res.steps);
                    assert_int_equal(res.sram_peak, p.sram_peak);
                    sim_result_free(&res);
                }
}

/* Compute mode runs the same loop nest on real data. */
static void test_compute_mode_runs(void **state)
{
    (void)state;
    const int64_t N = 24, d = 8;
    float Q[24 * 8], K[24 * 8], V[24 * 8];
    sim_random_inputs(3, N, d, SIM_FP32, Q, K, V);
    sim_shape sh = { .N = N, .d = d, .M = 1 << 20, .dtype = SIM_FP32 };
    sim_plan p;
    assert_int_equal(sim_plan_make(SM2_ALGO, &sh, NULL, 8, 5, SIM_PLAN_USER, &p), 0);
    sim_result res;
    char err[256];
    assert_int_equal(sim_run(SM2_ALGO, &sh, &p, Q, K, V, NULL, &res, err, sizeof err), 0);
    assert_true(res.computed);
    sim_result_free(&res);
}

/* The text view steps through it, showing its own pseudocode. */
static void test_text_view(void **state)
{
    (void)state;
    const sim_shape sh = { .N = 32, .d = 16, .M = 64 * 1024, .dtype = SIM_FP16 };
    viz_model *m = build_view(SM2_ALGO, &sh, NULL, 8, 8);
    const viz_info *in = viz_model_info(m);
    assert_true(in->theory_matches);
    assert_int_equal(in->nsteps, 4 * (1 + 2 * 4) + 1);
    int n;
    assert_ptr_equal(viz_pseudocode(in, &n), SM2_CODE);
    assert_string_equal(viz_pseudocode_title(in), "two-pass softmax, P only");
    uint64_t step;
    assert_int_equal(viz_model_find_step(m, 0, SM2_L5_WRITE_P, 1, 2, &step), 0);
    assert_int_equal(viz_model_seek(m, step), 0);
    assert_int_equal(viz_model_state(m)->line, SM2_L5_WRITE_P);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(viz_text_frame(f, m, VIZ_TEXT_W, VIZ_TEXT_H), 0);
    fclose(f);
    assert_non_null(strstr(buf, "two-pass softmax, P only"));
    assert_non_null(strstr(buf, "load K_j; S_ij; write P_ij"));
    assert_non_null(strstr(buf, "return P"));
    free(buf);
    viz_model_free(m);
}

/* A whole file, NUL-terminated; the caller frees it. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 16);
    assert_non_null(buf);
    assert_true(fread(buf, 1, (1 << 16) - 1, f) > 0);
    fclose(f);
    return buf;
}

/* Text written by f(out, arg) to memory; the caller frees it. */
static char *written(void (*f)(FILE *, const void *), const void *arg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    f(out, arg);
    fclose(out);
    return buf;
}

static void report_help(FILE *out, const void *arg)
{
    (void)arg;
    cli_usage(out, CLI_CMD_REPORT, NULL, 0);
}

static void report_text(FILE *out, const void *rep)
{
    sim_report_text(out, rep);
}

static void report_json(FILE *out, const void *rep)
{
    sim_report_json(out, rep);
}

/* The set of loop orders is the registry's: the extra one is counted,
 * named, parsed by --algo's parser and "all", and listed where the loop
 * orders are; the kernels have none of it, so fasim gpu refuses it. */
static void test_offered_by_the_cli(void **state)
{
    (void)state;
    assert_int_equal(sim_algo_count(), (int)SM2_ALGO + 1);
    assert_ptr_equal(sim_algo_loop(SM2_ALGO), &sm2);
    assert_null(sim_algo_loop((sim_algo)sim_algo_count()));
    sim_algo a;
    assert_int_equal(sim_algo_parse("softmax2", &a), 0);
    assert_int_equal(a, SM2_ALGO);
    char names[256];
    assert_string_equal(sim_algo_names(names, sizeof names, " or "),
                        "naive, fa1, fa2, unfused or softmax2");
    int run[SIM_ALGO_MAX];
    char err[512];
    assert_int_equal(cli_parse_algos("fa2,softmax2", run, err, sizeof err), 0);
    for (int k = 0; k < SIM_ALGO_MAX; k++)
        assert_int_equal(run[k], k == SIM_FA2 || k == (int)SM2_ALGO);
    assert_int_equal(cli_parse_algos("all", run, err, sizeof err), 0);
    for (int k = 0; k < SIM_ALGO_MAX; k++)
        assert_int_equal(run[k], k <= (int)SM2_ALGO ? SIM_ALGO_IF_SERVED : 0);
    assert_int_equal(cli_parse_algos("fa2,softmax3", run, err, sizeof err), -1);
    assert_string_equal(err, "--algo fa2,softmax3: unknown loop order 'softmax3' "
                             "(naive, fa1, fa2, unfused, softmax2 or all)");
    char *help = written(report_help, NULL);
    assert_non_null(strstr(help, "naive, fa1, fa2, unfused, softmax2, or all; comma lists"));
    free(help);
    assert_false(kern_serves(SM2_ALGO));
    for (int k = 0; k < (int)SM2_ALGO; k++)      /* the papers' three; unfused has none */
        assert_int_equal(kern_serves((sim_algo)k), k <= SIM_FA2);
}

/* The classroom report runs it beside FA2 and shows its counts, which
 * equal its closed form. */
static void test_report_counts_it(void **state)
{
    (void)state;
    sim_request req;
    memset(&req, 0, sizeof req);
    req.sh = (sim_shape){ .N = 64, .d = 16, .M = 64 * 1024, .dtype = SIM_FP16 };
    req.run_algo[SIM_FA2] = 1;
    req.run_algo[SM2_ALGO] = 1;
    req.run_pass[SIM_FWD] = 1;
    req.plan_kind = SIM_PLAN_USER;
    req.Br = 16;
    req.Bc = 8;
    req.mode = SIM_MODE_COUNT;
    req.seed = 1;
    sim_report *rep = calloc(1, sizeof *rep);
    assert_non_null(rep);
    char err[2048];
    assert_int_equal(sim_report_build(&req, rep, err, sizeof err), SIM_OK);
    const sim_report_run *r = NULL;
    for (int k = 0; k < rep->nruns; k++)
        if (rep->runs[k].algo == SM2_ALGO)
            r = &rep->runs[k];
    assert_non_null(r);
    sim_counts want;
    sm2_expected(&req.sh, 16, 8, &want);
    assert_true(sim_counts_equal(&r->res.counts, &want));
    assert_true(r->theory_matches);
    char K_read[32];
    sim_format_count(K_read, sizeof K_read, want.read_elems[SIM_K]);
    char *text = written(report_text, rep);
    assert_non_null(strstr(text, "softmax2"));
    assert_non_null(strstr(text, K_read));
    free(text);
    char *json = written(report_json, rep);
    assert_non_null(strstr(json, "\"softmax2\""));
    free(json);
    sim_report_free(rep);
    free(rep);
}

/* "all" runs every loop order in the passes it has: the extra one, which
 * has no backward pass, is left out of the backward, not refused; named,
 * it is refused there. */
static void test_all_leaves_out_unserved(void **state)
{
    (void)state;
    sim_request req;
    memset(&req, 0, sizeof req);
    req.sh = (sim_shape){ .N = 64, .d = 16, .M = 64 * 1024, .dtype = SIM_FP16 };
    int run[SIM_ALGO_MAX];
    char err[2048];
    assert_int_equal(cli_parse_algos("all", run, err, sizeof err), 0);
    memcpy(req.run_algo, run, sizeof run);
    req.run_pass[SIM_FWD] = req.run_pass[SIM_BWD] = 1;
    req.mode = SIM_MODE_COUNT;
    req.seed = 1;
    sim_report *rep = calloc(1, sizeof *rep);
    assert_non_null(rep);
    assert_int_equal(sim_report_build(&req, rep, err, sizeof err), SIM_OK);
    int fwd_sm2 = 0, bwd_sm2 = 0, bwd = 0;
    for (int k = 0; k < rep->nruns; k++) {
        fwd_sm2 += rep->runs[k].algo == SM2_ALGO && rep->runs[k].pass == SIM_FWD;
        bwd_sm2 += rep->runs[k].algo == SM2_ALGO && rep->runs[k].pass == SIM_BWD;
        bwd += rep->runs[k].pass == SIM_BWD;
    }
    assert_int_equal(fwd_sm2, 1);
    assert_int_equal(bwd_sm2, 0);
    assert_int_equal(bwd, (int)SM2_ALGO);            /* the built-ins' backwards */
    sim_report_free(rep);
    /* By name, in a pass it does not have: refused. */
    assert_int_equal(cli_parse_algos("fa2,softmax2", run, err, sizeof err), 0);
    memcpy(req.run_algo, run, sizeof run);
    assert_int_equal(sim_report_build(&req, rep, err, sizeof err), SIM_EUSAGE);
    assert_non_null(strstr(err, "softmax2"));
    free(rep);
}

/* A sweep over N with every loop order fits its exponent too, and its
 * plot draws it in its descriptor's colour. */
static void test_sweep_and_plot(void **state)
{
    (void)state;
    sim_sweep_spec *sp = calloc(1, sizeof *sp);
    assert_non_null(sp);
    sp->base = (sim_shape){ .N = 256, .d = 16, .M = 16 * 1024, .dtype = SIM_FP16 };
    for (int k = 0; k < sim_algo_count(); k++)
        sp->run_algo[k] = 1;
    sp->plan_kind = SIM_PLAN_AUTO;
    sp->engine = SIM_ENGINE_CLOSED;
    char err[1024];
    assert_int_equal(sim_axis_range(&sp->axes[sp->naxes++], SIM_PARAM_N, 256, 4096,
                                    SIM_STEP_MUL, 2, err, sizeof err), 0);
    sim_sweep_result *res = calloc(1, sizeof *res);
    assert_non_null(res);
    assert_int_equal(sim_sweep_run(sp, res, err, sizeof err), SIM_OK);
    for (int k = 0; k < res->npoints; k++)
        assert_true(res->pts[k].run[SM2_ALGO].bytes > 0);
    assert_int_equal(res->fits[SM2_ALGO][0].status, SIM_FIT_OK);
    char img[512], dat[600], gp[600];
    tu_path(img, sizeof img, "registry_plot.svg");
    assert_int_equal(sim_plot_write(res, img, dat, sizeof dat, gp, sizeof gp, err, sizeof err),
                     0);
    char *d = slurp(dat), *g = slurp(gp);
    assert_non_null(strstr(d, "# columns: N naive_bytes fa1_bytes fa2_bytes unfused_bytes "
                              "softmax2_bytes "));
    assert_non_null(strstr(g, "lc rgb '#7d3c98' title 'softmax2'"));
    free(d);
    free(g);
    sim_sweep_free(res);
    free(res);
    free(sp);
}

/* Every built-in loop order lists each line its loop nest marks, under its
 * own name; the registry finds each for its pass and shapes. */
static void test_builtin_descriptors(void **state)
{
    (void)state;
    for (int a = 0; a < (int)SM2_ALGO; a++)
        for (int pass = 0; pass < SIM_PASS_COUNT; pass++) {
            const sim_loop *l = sim_loop_of((sim_algo)a, (sim_pass)pass);
            assert_non_null(l);
            assert_int_equal(l->algo, a);
            assert_int_equal(l->pass, pass);
            assert_string_equal(l->name, sim_algo_name((sim_algo)a));
            /* One bound and one mark per loop order, whatever the pass; marks
             * tell loop orders apart. */
            const sim_loop *fwd = sim_loop_of((sim_algo)a, SIM_FWD);
            assert_int_equal(l->bound, fwd->bound);
            assert_int_equal(l->mark, fwd->mark);
            for (int b = 0; b < a; b++)
                assert_int_not_equal(l->mark, sim_loop_of((sim_algo)b, SIM_FWD)->mark);
            assert_true(l->ncode > 0);
            sim_shape sh = { .N = 40, .d = 8, .M = 1 << 20, .dtype = SIM_FP16, .causal = 1 };
            const sim_run_opts run = { .pass = (sim_pass)pass };
            sim_plan p;
            assert_int_equal(sim_plan_make((sim_algo)a, &sh, &run, 8, 16, SIM_PLAN_USER, &p), 0);
            viz_model *m = build_view((sim_algo)a, &sh, &run, 8, 16);
            for (uint64_t k = 0; k < viz_model_info(m)->nsteps; k++) {
                int line, n, found = 0;
                int64_t i, j;
                assert_int_equal(viz_model_step_where(m, k, &line, &i, &j), 0);
                const viz_code_line *code = viz_pseudocode(viz_model_info(m), &n);
                for (int q = 0; q < n; q++)
                    found |= code[q].line == line;
                assert_true(found);
            }
            viz_model_free(m);
        }
    const sim_run_opts split = { .splits = 4 };
    assert_non_null(sim_loop_find(SIM_FA2, &split));
    assert_true(sim_loop_find(SIM_FA2, &split)->split);
    assert_null(sim_loop_find(SIM_NAIVE, &split));
    assert_int_equal(sim_loop_find(SIM_FA2, &split)->bound, SIM_BOUND_FLASH);
    assert_int_equal(sim_reread_block(SIM_FA1, 4, 6), 6);   /* FA1 re-reads across B_c */
    assert_int_equal(sim_reread_block(SIM_FA2, 4, 6), 4);   /* FA2 across B_r */
    assert_int_equal(sim_buf_name(SIM_BUF_Ot_i)[1], '~');
    assert_string_equal(sim_buf_name(SIM_BUF_COUNT), "?");
}

/* The registry refuses a loop order with a number out of turn, a name
 * already taken or reserved, another pass under a different name, and one
 * loop order more than SIM_ALGO_MAX: never an overrun. It fills the
 * registry up, so it runs last. */
static void test_register_refusals(void **state)
{
    (void)state;
    static sim_loop more[SIM_ALGO_MAX + 1];
    static char names[SIM_ALGO_MAX + 1][24];
    assert_int_equal(sim_loop_register(NULL), -1);
    sim_loop l = sm2;
    l.name = "gap";
    l.algo = (sim_algo)(SM2_ALGO + 2);                 /* skips a number */
    assert_int_equal(sim_loop_register(&l), -1);
    l.algo = SIM_NAIVE;                                /* a built-in's number */
    l.split = 1;
    assert_int_equal(sim_loop_register(&l), -1);
    l.split = 0;
    l.algo = (sim_algo)(SM2_ALGO + 1);
    const char *taken[] = { "fa2", "softmax2", "all", "standard" };
    for (size_t k = 0; k < sizeof taken / sizeof taken[0]; k++) {
        l.name = taken[k];
        assert_int_equal(sim_loop_register(&l), -1);
    }
    l.name = NULL;
    assert_int_equal(sim_loop_register(&l), -1);
    l = sm2;                                           /* its backward, misnamed */
    l.pass = SIM_BWD;
    l.name = "softmax2b";
    assert_int_equal(sim_loop_register(&l), -1);
    assert_int_equal(sim_algo_count(), (int)SM2_ALGO + 1);
    /* Fill every number up to SIM_ALGO_MAX; the next one is refused. */
    for (int a = sim_algo_count(); a <= SIM_ALGO_MAX; a++) {
        more[a] = sm2;
        more[a].algo = (sim_algo)a;
        snprintf(names[a], sizeof names[a], "extra%d", a);
        more[a].name = names[a];
        assert_int_equal(sim_loop_register(&more[a]), a < SIM_ALGO_MAX ? 0 : -1);
    }
    assert_int_equal(sim_algo_count(), SIM_ALGO_MAX);
    int run[SIM_ALGO_MAX];
    char err[512];
    assert_int_equal(cli_parse_algos("all", run, err, sizeof err), 0);
    for (int k = 0; k < SIM_ALGO_MAX; k++)
        assert_int_equal(run[k], SIM_ALGO_IF_SERVED);
    sim_algo a;
    assert_int_equal(sim_algo_parse(names[SIM_ALGO_MAX - 1], &a), 0);
    assert_int_equal(a, SIM_ALGO_MAX - 1);
    assert_int_equal(sim_algo_parse(names[SIM_ALGO_MAX], &a), -1);
}

/* The kernels round what they store in HBM by their own copy of the
 * element types (device code cannot read the core's table): it must agree
 * with the table for every tensor and dtype. */
static void test_kernels_agree_on_tensor_types(void **state)
{
    (void)state;
    const float x = 1.0f + 1.0f / 4096.0f;        /* not exact in fp16 or bf16 */
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        for (int dt = 0; dt < KERN_DTYPE_COUNT; dt++) {
            const float y = kern_hbm_round((sim_dtype)dt, (sim_tensor)t, x);
            const int keeps = sim_tensor_about((sim_tensor)t)->fp32 || dt == SIM_FP32;
            assert_int_equal(y == x, keeps);
            /* the unfused baseline's masks C and Z are bool, 1 byte (they hold
             * 0 and 1, which every dtype keeps) */
            const int mask = t == SIM_C || t == SIM_Z;
            assert_int_equal(sim_tensor_about((sim_tensor)t)->mask, mask);
            assert_int_equal(sim_tensor_bytes((sim_tensor)t, (sim_dtype)dt),
                             mask ? 1 : keeps ? 4 : 2);
        }
    /* fp8, which the kernels do not run: Q, K, V 1 byte, the fp32 tensors
     * 4, the masks 1, the rest (O bf16; S, P fp16) 2. */
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        for (int dt = SIM_E4M3; dt <= SIM_E5M2; dt++) {
            const int qkv = t == SIM_Q || t == SIM_K || t == SIM_V;
            const int mask = t == SIM_C || t == SIM_Z;
            assert_int_equal(sim_tensor_bytes((sim_tensor)t, (sim_dtype)dt),
                             qkv || mask ? 1 : sim_tensor_about((sim_tensor)t)->fp32 ? 4 : 2);
        }
    assert_int_equal(sim_tensor_dtype(SIM_O, SIM_E4M3), SIM_BF16);
    assert_int_equal(sim_tensor_dtype(SIM_P, SIM_E5M2), SIM_FP16);
    assert_int_equal(sim_tensor_dtype(SIM_K, SIM_E4M3), SIM_E4M3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_register_rules, setup),
        cmocka_unit_test_setup(test_counts_equal_closed_form, setup),
        cmocka_unit_test_setup(test_compute_mode_runs, setup),
        cmocka_unit_test_setup(test_text_view, setup),
        cmocka_unit_test(test_builtin_descriptors),
        cmocka_unit_test(test_kernels_agree_on_tensor_types),
        cmocka_unit_test_setup(test_offered_by_the_cli, setup),
        cmocka_unit_test_setup(test_report_counts_it, setup),
        cmocka_unit_test_setup(test_all_leaves_out_unserved, setup),
        cmocka_unit_test_setup(test_sweep_and_plot, setup),
        cmocka_unit_test_setup(test_register_refusals, setup),   /* last: fills the registry */
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
