/*
 * test_sweep.c — sweeps through the library: axes, fasim's own fitted
 * exponents against Theorem 2 inside the regime, the "out of regime" and
 * "fixed blocks" verdicts outside it, the simulator engine against the
 * closed forms point by point, the automatic engine choice, the renderers
 * and the plot files.
 *
 * Ranges are chosen where Theorem 2's exponents hold to within 0.05 in
 * fasim (docs/sweeps.md explains why smaller ranges drift): N from 16K to
 * 1M at d = 64, M = 96K; M from 64K to 1M at N = 64K, d = 64; d from 128 to
 * 1024 at N = 64K, M = 1M. All are inside d <= M <= N d (M in elements).
 * The big ranges use the closed forms (exact; the equality test below and
 * test_theory prove them equal to the simulator); the simulated sweeps are
 * small, so the suite stays fast under the sanitizers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "sim_plot.h"
#include "sim_sweep.h"
#include "test_util.h"

static sim_sweep_spec *new_spec(int64_t N, int64_t d, uint64_t M)
{
    sim_sweep_spec *sp = calloc(1, sizeof *sp);
    assert_non_null(sp);
    sp->base = (sim_shape){ .N = N, .d = d, .M = M, .dtype = SIM_FP16, .causal = 0 };
    for (int a = 0; a < sim_algo_count(); a++)
        sp->run_algo[a] = 1;
    sp->plan_kind = SIM_PLAN_AUTO;
    sp->engine = SIM_ENGINE_CLOSED;
    return sp;
}

static void add_axis(sim_sweep_spec *sp, sim_param p, int64_t lo, int64_t hi)
{
    char err[256];
    assert_int_equal(sim_axis_range(&sp->axes[sp->naxes++], p, lo, hi, SIM_STEP_MUL, 2, err,
                                    sizeof err), 0);
}

static sim_sweep_result *run(const sim_sweep_spec *sp)
{
    sim_sweep_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    char err[2048];
    int rc = sim_sweep_run(sp, r, err, sizeof err);
    if (rc != SIM_OK)
        fail_msg("sweep failed: %s", err);
    return r;
}

static void done(sim_sweep_spec *sp, sim_sweep_result *r)
{
    sim_sweep_free(r);
    free(r);
    free(sp);
}

/* ---- axes ------------------------------------------------------------------- */

static void axes(void **state)
{
    (void)state;
    sim_axis *ax = malloc(sizeof *ax);
    char err[256];
    assert_int_equal(sim_axis_range(ax, SIM_PARAM_N, 256, 65536, SIM_STEP_MUL, 2, err,
                                    sizeof err), 0);
    assert_int_equal(ax->n, 9);
    assert_int_equal(ax->values[0], 256);
    assert_int_equal(ax->values[8], 65536);
    assert_int_equal(sim_axis_range(ax, SIM_PARAM_D, 32, 256, SIM_STEP_ADD, 32, err,
                                    sizeof err), 0);
    assert_int_equal(ax->n, 8);
    assert_int_equal(ax->values[7], 256);
    /* hi need not be reached: 1000, 2000, 4000 */
    assert_int_equal(sim_axis_range(ax, SIM_PARAM_N, 1000, 5000, SIM_STEP_MUL, 2, err,
                                    sizeof err), 0);
    assert_int_equal(ax->n, 3);
    assert_int_equal(ax->values[2], 4000);
    /* one value */
    assert_int_equal(sim_axis_range(ax, SIM_PARAM_M, 7, 7, SIM_STEP_MUL, 2, err, sizeof err), 0);
    assert_int_equal(ax->n, 1);
    /* errors */
    assert_int_equal(sim_axis_range(ax, SIM_PARAM_N, 10, 9, SIM_STEP_MUL, 2, err, sizeof err), -1);
    assert_non_null(strstr(err, "empty range"));
    assert_int_equal(sim_axis_range(ax, SIM_PARAM_N, 1, 9, SIM_STEP_MUL, 1, err, sizeof err), -1);
    assert_int_equal(sim_axis_range(ax, SIM_PARAM_N, 1, 9, SIM_STEP_ADD, 0, err, sizeof err), -1);
    assert_int_equal(sim_axis_range(ax, SIM_PARAM_N, 0, 9, SIM_STEP_ADD, 1, err, sizeof err), -1);
    assert_int_equal(sim_axis_range(ax, SIM_PARAM_N, 1, 100000, SIM_STEP_ADD, 1, err,
                                    sizeof err), -1);
    assert_non_null(strstr(err, "more than"));
    /* near INT64_MAX the range stops instead of overflowing */
    assert_int_equal(sim_axis_range(ax, SIM_PARAM_N, INT64_C(1) << 61, INT64_MAX, SIM_STEP_MUL,
                                    2, err, sizeof err), 0);
    assert_int_equal(ax->n, 2);
    /* lists are sorted and de-duplicated */
    int64_t v[5] = { 4096, 1024, 4096, 2048, 1024 };
    assert_int_equal(sim_axis_list(ax, SIM_PARAM_N, v, 5, err, sizeof err), 0);
    assert_int_equal(ax->n, 3);
    assert_int_equal(ax->values[0], 1024);
    assert_int_equal(ax->values[2], 4096);
    int64_t bad[2] = { 3, 0 };
    assert_int_equal(sim_axis_list(ax, SIM_PARAM_N, bad, 2, err, sizeof err), -1);
    sim_param p;
    assert_int_equal(sim_param_parse("N", &p), 0);
    assert_int_equal(p, SIM_PARAM_N);
    assert_int_equal(sim_param_parse("m", &p), 0);
    assert_int_equal(p, SIM_PARAM_M);
    assert_int_equal(sim_param_parse("x", &p), -1);
    assert_int_equal(sim_param_parse("NN", &p), -1);
    free(ax);
}

/* ---- Theorem 2 in fasim's own sweeps ----------------------------------------- */

static void expect_fit(const sim_sweep_result *r, int algo, double want, double tol)
{
    const sim_sweep_fit *f = &r->fits[algo][0];
    if (f->status != SIM_FIT_OK || fabs(f->exponent - want) > tol)
        fail_msg("%s: status %s, exponent %.4f, want %.2f +- %.2f (%s)",
                 sim_algo_name((sim_algo)algo), sim_fit_status_name(f->status), f->exponent,
                 want, tol, f->note);
    assert_true(fabs(f->theory - want) < 1e-9);      /* Theta(N^2 d^2 / M) exactly */
    assert_true(f->r2 > 0.998);      /* blocks are multiples of 16: not exactly a line */
    assert_int_equal(f->used, f->total);
}

static void exponent_in_N(void **state)
{
    (void)state;
    sim_sweep_spec *sp = new_spec(1024, 64, 96 * 1024);
    add_axis(sp, SIM_PARAM_N, 16384, 1 << 20);
    sim_sweep_result *r = run(sp);
    assert_int_equal(r->npoints, 7);
    assert_false(r->simulated);
    expect_fit(r, SIM_FA1, 2.0, 0.05);
    expect_fit(r, SIM_FA2, 2.0, 0.05);
    /* The lower bound's own exponent is exactly 2. */
    assert_true(fabs(r->fits[SIM_SUBJECT_BOUND][0].theory - 2.0) < 1e-9);
    /* The naive order grows like N^2 too (Theorem 2: N d + N^2). */
    assert_true(fabs(r->fits[SIM_NAIVE][0].exponent - 2.0) < 0.1);
    done(sp, r);
}

static void exponent_in_M(void **state)
{
    (void)state;
    sim_sweep_spec *sp = new_spec(65536, 64, 0);
    add_axis(sp, SIM_PARAM_M, 65536, 1 << 20);
    sim_sweep_result *r = run(sp);
    expect_fit(r, SIM_FA1, -1.0, 0.05);
    expect_fit(r, SIM_FA2, -1.0, 0.05);
    /* the re-read block grows about like M */
    assert_true(r->fits[SIM_FA2][0].has_block);
    assert_true(fabs(r->fits[SIM_FA2][0].block_exponent - 1.0) < 0.05);
    done(sp, r);
}

static void exponent_in_d(void **state)
{
    (void)state;
    sim_sweep_spec *sp = new_spec(65536, 0, 1 << 20);
    add_axis(sp, SIM_PARAM_D, 128, 1024);
    sim_sweep_result *r = run(sp);
    expect_fit(r, SIM_FA1, 2.0, 0.05);
    expect_fit(r, SIM_FA2, 2.0, 0.05);
    done(sp, r);
}

/* At small d the exponent in d is visibly below 2, and the note says why
 * (buffers that do not shrink with d): the sweep reports, it does not hide. */
static void small_d_drifts_and_says_why(void **state)
{
    (void)state;
    sim_sweep_spec *sp = new_spec(65536, 0, 1 << 20);
    add_axis(sp, SIM_PARAM_D, 32, 256);
    sim_sweep_result *r = run(sp);
    const sim_sweep_fit *f = &r->fits[SIM_FA2][0];
    assert_int_equal(f->status, SIM_FIT_OK);
    assert_true(f->exponent < 1.95 && f->exponent > 1.7);
    assert_non_null(strstr(f->note, "shrinks like d^"));
    done(sp, r);
}

/* M beyond N d at every point: no exponent, "out of regime", and the caps. */
static void out_of_regime(void **state)
{
    (void)state;
    sim_sweep_spec *sp = new_spec(1024, 64, 0);
    add_axis(sp, SIM_PARAM_M, 256 * 1024, 1 << 20);
    sim_sweep_result *r = run(sp);
    for (int s = 0; s <= SIM_SUBJECT_BOUND; s++) {
        const sim_sweep_fit *f = &r->fits[s][0];
        assert_int_equal(f->status, SIM_FIT_OUT_OF_REGIME);
        assert_int_equal(f->used, 0);
        assert_non_null(strstr(f->note, "out of regime"));
    }
    /* at 512K and 1M FA2's B_r is N: at its cap, and the note says so */
    assert_true(r->pts[2].run[SIM_FA2].capped);
    assert_non_null(strstr(r->fits[SIM_FA2][0].note, "caps"));
    /* text: the verdict column says so instead of an exponent */
    char path[512];
    FILE *f = fopen(tu_path(path, sizeof path, "oor.txt"), "w");
    sim_sweep_text(f, r);
    fclose(f);
    f = fopen(path, "r");
    char line[256];
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "  fa2 ", 6)) {
            found = 1;
            assert_non_null(strstr(line, "out of regime"));
            assert_null(strstr(line, "."));      /* no number quoted */
        }
    fclose(f);
    assert_true(found);
    done(sp, r);
}

/* Part of the range out of regime: those points are left out, the rest fit. */
static void partly_out_of_regime(void **state)
{
    (void)state;
    sim_sweep_spec *sp = new_spec(1024, 64, 96 * 1024);
    add_axis(sp, SIM_PARAM_N, 256, 65536);
    sim_sweep_result *r = run(sp);
    const sim_sweep_fit *f = &r->fits[SIM_FA2][0];
    assert_int_equal(f->status, SIM_FIT_OK);
    assert_int_equal(f->total, 9);
    assert_int_equal(f->used, 7);              /* N = 256, 512: M > N d */
    assert_int_equal(f->out_of_regime, 2);
    assert_true(f->has_end_slope);
    assert_true(fabs(f->end_slope - 2.0) < 0.01);
    done(sp, r);
}

/* Blocks pinned by the user do not grow with M: "fixed blocks", no theory. */
static void fixed_blocks(void **state)
{
    (void)state;
    sim_sweep_spec *sp = new_spec(65536, 64, 0);
    sp->run_algo[SIM_NAIVE] = sp->run_algo[SIM_FA1] = 0;
    sp->Br = 128;
    sp->Bc = 64;
    sp->plan_kind = SIM_PLAN_USER;
    add_axis(sp, SIM_PARAM_M, 128 * 1024, 1 << 20);
    sim_sweep_result *r = run(sp);
    const sim_sweep_fit *f = &r->fits[SIM_FA2][0];
    assert_int_equal(f->status, SIM_FIT_FIXED_BLOCKS);
    assert_false(f->has_theory);
    assert_true(fabs(f->exponent) < 1e-9);     /* the same bytes at every M */
    done(sp, r);
}

/* A sweep over B_c with B_r pinned, N and M fixed (the FlashAttention
 * paper's Figure 2, middle): at every point that fits, the simulator's
 * bytes equal the closed forms worked out here, with T_r = ceil(N / B_r),
 * T_c = ceil(N / B_c) and 2-byte Q, K, V, O. FA1, with its running output
 * in the fp32 O_acc as the kernels keep it (line 2 initialises O_acc, l, m
 * in HBM; K_j, V_j once each; for every query block of every key block Q_i,
 * O_acc_i, l_i, m_i read and l_i, m_i written, O_acc_i written back except
 * at the last key block, which writes O_i in the dtype once):
 * e (N d + 2 N d + T_c N d) + 4 (N d + T_c N d + (T_c - 1) N d)
 * + 4 (2 N + 4 T_c N), falling as B_c grows. FA2 (K_j, V_j for
 * every query block, Q and O once, L written): e (2 N d + 2 T_r N d) +
 * 4 N, the same at every B_c. Blocks over M are kept, marked, and left out
 * of the fits. */
static void block_sweep(void **state)
{
    (void)state;
    const int64_t N = 1000, d = 64, Br = 32;
    const uint64_t M = 96 * 1024;
    sim_sweep_spec *sp = new_spec(N, d, M);
    sp->run_algo[SIM_NAIVE] = 0;
    sp->Br = Br;
    sp->plan_kind = SIM_PLAN_USER;
    sp->engine = SIM_ENGINE_SIM;
    add_axis(sp, SIM_PARAM_BC, 16, 512);
    sim_sweep_result *r = run(sp);
    assert_true(r->simulated);
    assert_int_equal(r->npoints, 6);
    int over = 0;
    uint64_t last = UINT64_MAX;
    for (int k = 0; k < r->npoints; k++) {
        const sim_sweep_point *pt = &r->pts[k];
        const int64_t Bc = 16 << k, Tr = (N + Br - 1) / Br, Tc = (N + Bc - 1) / Bc;
        assert_int_equal(pt->Bc, Bc);
        assert_int_equal(pt->sh.N, N);
        assert_int_equal(pt->sh.M, M);
        for (int a = SIM_FA1; a <= SIM_FA2; a++) {
            const sim_sweep_entry *e = &pt->run[a];
            assert_int_equal(e->Br, Br);
            assert_int_equal(e->Bc, Bc);
            if (e->misfit) {
                assert_true(e->sram_peak > M);
                assert_int_equal(e->bytes, 0);
                over++;
                continue;
            }
            assert_true(e->sram_peak <= M);
            const uint64_t want = a == SIM_FA1
                ? (uint64_t)(2 * (3 * N * d + Tc * N * d) +
                             4 * (N * d + Tc * N * d + (Tc - 1) * N * d) + 4 * (2 * N + 4 * Tc * N))
                : (uint64_t)(2 * (2 * N * d + 2 * Tr * N * d) + 4 * N);
            assert_int_equal(e->bytes, want);
        }
        if (!pt->run[SIM_FA1].misfit) {
            assert_true(pt->run[SIM_FA1].bytes < last);
            last = pt->run[SIM_FA1].bytes;
        }
    }
    assert_true(r->pts[r->npoints - 1].run[SIM_FA1].misfit);   /* K_j, V_j alone are 128 KiB */
    assert_true(over >= 2);
    const sim_sweep_fit *f1 = &r->fits[SIM_FA1][0], *f2 = &r->fits[SIM_FA2][0];
    assert_int_equal(f1->status, SIM_FIT_OK);
    assert_false(f1->has_theory);
    assert_int_equal(f1->used + over / 2, r->npoints);
    assert_true(f1->exponent < -0.8);
    assert_non_null(strstr(f1->note, "Figure 2"));
    assert_true(fabs(f2->exponent) < 1e-9);
    assert_non_null(strstr(f2->note, "re-reads across B_r"));
    done(sp, r);
}

/* The simulator engine and the closed forms agree at every point of a grid,
 * and the simulated sweep says it simulated. */
static void engines_agree(void **state)
{
    (void)state;
    sim_sweep_spec *sp = new_spec(1024, 64, 0);
    add_axis(sp, SIM_PARAM_N, 512, 4096);
    add_axis(sp, SIM_PARAM_M, 32 * 1024, 128 * 1024);
    sp->base.causal = 1;
    sp->engine = SIM_ENGINE_SIM;
    sim_sweep_result *a = run(sp);
    sp->engine = SIM_ENGINE_CLOSED;
    sim_sweep_result *b = run(sp);
    assert_true(a->simulated);
    assert_false(b->simulated);
    assert_int_equal(a->npoints, 12);
    for (int k = 0; k < a->npoints; k++)
        for (int al = 0; al < sim_algo_count(); al++) {
            assert_int_equal(a->pts[k].run[al].bytes, b->pts[k].run[al].bytes);
            assert_int_equal(a->pts[k].run[al].steps, b->pts[k].run[al].steps);
            assert_int_equal(a->pts[k].run[al].Br, b->pts[k].run[al].Br);
        }
    /* the first axis varies slowest */
    assert_int_equal(a->pts[0].sh.N, 512);
    assert_int_equal(a->pts[1].sh.N, 512);
    assert_int_equal(a->pts[1].sh.M, 64 * 1024);
    assert_int_equal(a->pts[3].sh.N, 1024);
    sim_sweep_free(b);
    free(b);
    done(sp, a);
}

static void auto_engine(void **state)
{
    (void)state;
    sim_sweep_spec *sp = new_spec(1024, 64, 96 * 1024);
    sp->engine = SIM_ENGINE_AUTO;
    add_axis(sp, SIM_PARAM_N, 256, 4096);
    sim_sweep_result *r = run(sp);
    assert_true(r->simulated);
    assert_string_equal(r->engine_note, "");
    sim_sweep_free(r);
    free(r);
    /* N up to 1M is billions of tile steps: closed forms, and a note */
    sp->naxes = 0;
    add_axis(sp, SIM_PARAM_N, 1 << 19, 1 << 20);
    r = run(sp);
    assert_false(r->simulated);
    assert_true(r->total_steps > SIM_ENGINE_AUTO_STEPS);
    assert_non_null(strstr(r->engine_note, "--engine sim"));
    done(sp, r);
}

/* A joint fit over a grid separates the two exponents. */
static void grid_joint_fit(void **state)
{
    (void)state;
    sim_sweep_spec *sp = new_spec(0, 64, 0);
    sp->run_algo[SIM_NAIVE] = 0;
    add_axis(sp, SIM_PARAM_N, 65536, 1 << 20);
    add_axis(sp, SIM_PARAM_M, 65536, 1 << 20);
    sim_sweep_result *r = run(sp);
    assert_int_equal(r->npoints, 25);
    for (int al = SIM_FA1; al <= SIM_FA2; al++) {
        assert_int_equal(r->fits[al][0].status, SIM_FIT_OK);
        assert_true(fabs(r->fits[al][0].exponent - 2.0) < 0.05);
        assert_true(fabs(r->fits[al][1].exponent + 1.0) < 0.05);
    }
    done(sp, r);
}

static void bad_specs(void **state)
{
    (void)state;
    sim_sweep_spec *sp = new_spec(1024, 64, 96 * 1024);
    sim_sweep_result r;
    char err[1024];
    /* no axis */
    assert_int_equal(sim_sweep_run(sp, &r, err, sizeof err), SIM_EUSAGE);
    /* the same parameter twice */
    add_axis(sp, SIM_PARAM_N, 256, 1024);
    add_axis(sp, SIM_PARAM_N, 256, 1024);
    assert_int_equal(sim_sweep_run(sp, &r, err, sizeof err), SIM_EUSAGE);
    assert_non_null(strstr(err, "twice"));
    /* no plan fits: M of 64 bytes */
    sp->naxes = 0;
    add_axis(sp, SIM_PARAM_M, 64, 128);
    assert_int_equal(sim_sweep_run(sp, &r, err, sizeof err), SIM_EUSAGE);
    assert_non_null(strstr(err, "at N = 1024"));
    /* too many steps for one simulated run */
    sp->naxes = 0;
    add_axis(sp, SIM_PARAM_N, 65536, 65536);
    sp->engine = SIM_ENGINE_SIM;
    sp->max_steps = 1000;
    assert_int_equal(sim_sweep_run(sp, &r, err, sizeof err), SIM_EUSAGE);
    assert_non_null(strstr(err, "--engine closed-form"));
    free(sp);
}

/* ---- renderers and plot files -------------------------------------------------- */

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static void csv_and_plot_files(void **state)
{
    (void)state;
    sim_sweep_spec *sp = new_spec(1024, 64, 96 * 1024);
    sp->gpu = sim_gpu_find("h100");
    add_axis(sp, SIM_PARAM_N, 256, 8192);
    sim_sweep_result *r = run(sp);
    char path[512];
    FILE *f = fopen(tu_path(path, sizeof path, "s.csv"), "w");
    sim_sweep_csv(f, r);
    fclose(f);
    char *csv = read_file(path);
    /* a header and one row per point, all with the header's column count */
    int rows = 0, cols0 = -1;
    for (char *line = strtok(csv, "\n"); line; line = strtok(NULL, "\n"), rows++) {
        int c = 1;
        for (char *q = line; *q; q++)
            c += *q == ',';
        if (cols0 < 0)
            cols0 = c;
        assert_int_equal(c, cols0);
    }
    assert_int_equal(rows, 1 + r->npoints);
    assert_true(cols0 > 30);

    char img[512], dat[600], gp[600];
    tu_path(img, sizeof img, "plot.svg");
    char err[512];
    assert_int_equal(sim_plot_write(r, img, dat, sizeof dat, gp, sizeof gp, err, sizeof err), 0);
    assert_non_null(strstr(dat, "plot.dat"));
    char *d = read_file(dat);
    assert_non_null(strstr(d, "# columns: N naive_bytes fa1_bytes fa2_bytes"));
    int data_rows = 0;
    for (char *q = d; *q; q++)
        data_rows += *q == '\n';
    assert_int_equal(data_rows, 2 + r->npoints);
    assert_non_null(strstr(d, " ? 0\n"));      /* N = 256: out of regime, no bound */
    char *g = read_file(gp);
    assert_non_null(strstr(g, "set terminal svg"));
    assert_non_null(strstr(g, "set output 'plot.svg'"));
    assert_non_null(strstr(g, "set logscale x 2"));
    assert_non_null(strstr(g, "set xlabel 'N, sequence length (rows)'"));
    assert_non_null(strstr(g, "set ylabel 'HBM traffic (bytes)'"));
    assert_non_null(strstr(g, "'plot.dat' using 1:4"));
    assert_non_null(strstr(g, "slope 2: Theorem 2, FlashAttention"));
    assert_non_null(strstr(g, "lower bound"));
    /* refusals: a bad extension; a grid */
    assert_int_equal(sim_plot_write(r, "x.jpg", dat, sizeof dat, gp, sizeof gp, err,
                                    sizeof err), -1);
    r->spec.naxes = 2;
    assert_int_equal(sim_plot_write(r, img, dat, sizeof dat, gp, sizeof gp, err, sizeof err),
                     -1);
    r->spec.naxes = 1;
    done(sp, r);
}

/* gnuplot where installed (CI installs gnuplot-nox), else NULL. */
static const char *installed_gnuplot(void)
{
    const char *cands[] = { "/usr/bin/gnuplot", "/usr/local/bin/gnuplot" };
    for (size_t k = 0; k < sizeof cands / sizeof cands[0]; k++)
        if (access(cands[k], X_OK) == 0)
            return cands[k];
    return NULL;
}

/* Run gnuplot on script in dir, as the CLI does (from the image's folder). */
static int run_gnuplot_in(const char *gnuplot, const char *dir, const char *script)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (chdir(dir) != 0)
            _exit(126);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        char arg[1100];
        snprintf(arg, sizeof arg, "./%s", script);   /* as cli/cli_sweep.c runs it */
        execl(gnuplot, "gnuplot", arg, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int exists(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* A plot's file name reaches gnuplot only as data: quotes, backquotes,
 * macros, semicolons and a leading '<' or '|' (gnuplot's pipes) draw a file
 * of exactly that name and run nothing; a name with a control character,
 * which no gnuplot string can hold, is refused before any file is written. */
static void plot_names_stay_data(void **state)
{
    (void)state;
    sim_sweep_spec *sp = new_spec(1024, 64, 96 * 1024);
    add_axis(sp, SIM_PARAM_N, 256, 2048);
    sim_sweep_result *r = run(sp);
    const char *gnuplot = installed_gnuplot();
    if (!gnuplot)
        fprintf(stderr, "  (gnuplot not installed: names checked in the script only)\n");
    const char *hostile[] = {
        "x'; system('touch PWNED'); print '.svg",
        "a'b\".svg",
        "`touch PWNED`.svg",
        "<touch PWNED.svg",
        "|touch PWNED.svg",
        "-e system('touch PWNED').svg",
        "$x.svg",
        "$(touch PWNED).svg",
        "@x $HOME \\ ; # ''.svg",
        "'''q''.svg",
    };
    char err[512], dat[2048], gp[2048], img[1024];
    for (size_t k = 0; k < sizeof hostile / sizeof hostile[0]; k++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/plotname%zu", tu_tmpdir(), k);
        mkdir(dir, 0700);
        snprintf(img, sizeof img, "%s/%s", dir, hostile[k]);
        assert_int_equal(sim_plot_write(r, img, dat, sizeof dat, gp, sizeof gp, err,
                                        sizeof err), 0);
        /* The script names the image in single quotes, each run of quotes
         * in double quotes between them, joined by '.'. */
        char want[1024];
        size_t o = 0;
        int in = 0;
        for (const char *c = hostile[k]; *c; c++) {
            int seg = *c == '\'' ? '"' : '\'';
            if (seg != in) {
                if (in) {
                    want[o++] = (char)in;
                    want[o++] = '.';
                }
                want[o++] = (char)seg;
                in = seg;
                if (c == hostile[k] && (*c == '<' || *c == '|' || *c == '$')) {
                    want[o++] = '.';
                    want[o++] = '/';
                }
            }
            want[o++] = *c;
        }
        want[o++] = (char)in;
        want[o] = '\0';
        char line[1100];
        snprintf(line, sizeof line, "set output %s\n", want);
        assert_non_null(strstr(read_file(gp), line));
        if (gnuplot) {
            const char *script = strrchr(gp, '/') + 1;
            assert_int_equal(run_gnuplot_in(gnuplot, dir, script), 0);
            assert_true(exists(dir, hostile[k]));      /* the image, by its own name */
            assert_false(exists(dir, "PWNED"));
            assert_false(exists(".", "PWNED"));
        }
    }
    const char *unquotable[] = { "a\nb.svg", "a\tb.svg", "a\rb.svg", "\x1b[2J.svg",
                                 "a\x7f.svg" };
    for (size_t k = 0; k < sizeof unquotable / sizeof unquotable[0]; k++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/plotbad%zu", tu_tmpdir(), k);
        mkdir(dir, 0700);
        snprintf(img, sizeof img, "%s/%s", dir, unquotable[k]);
        assert_int_equal(sim_plot_write(r, img, dat, sizeof dat, gp, sizeof gp, err,
                                        sizeof err), -1);
        assert_non_null(strstr(err, "control character"));
        assert_false(exists(dir, strrchr(dat, '/') + 1));     /* nothing written */
        assert_false(exists(dir, strrchr(gp, '/') + 1));
    }
    done(sp, r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(axes),
        cmocka_unit_test(exponent_in_N),
        cmocka_unit_test(exponent_in_M),
        cmocka_unit_test(exponent_in_d),
        cmocka_unit_test(small_d_drifts_and_says_why),
        cmocka_unit_test(out_of_regime),
        cmocka_unit_test(partly_out_of_regime),
        cmocka_unit_test(fixed_blocks),
        cmocka_unit_test(block_sweep),
        cmocka_unit_test(engines_agree),
        cmocka_unit_test(auto_engine),
        cmocka_unit_test(grid_joint_fit),
        cmocka_unit_test(bad_specs),
        cmocka_unit_test(csv_and_plot_files),
        cmocka_unit_test(plot_names_stay_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
