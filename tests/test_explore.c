/*
 * test_explore.c — `fasim explore`: the model (viz/viz_explore.c) and the
 * CLI's text frames.
 *
 *   - the table equals the closed forms (sim_theory_counts) of the plans
 *     sim_plan_choose picks with the report's arguments, for a hundred and
 *     fifty configurations; bytes, ratios and SRAM are recomputed here from
 *     the per-tensor counts; and, for small ones, the simulator itself
 *     (count-only sim_run) measures the same counts, as the screen says;
 *   - every key changes the configuration as documented, limits included;
 *   - the chart's points are the closed-form totals at N/8 .. 8N, and each is
 *     drawn where viz_explore_cell says, with its loop order's mark;
 *   - text frames of short --keys runs against golden files, their format,
 *     and bad options (exit 2, a message, nothing on stdout).
 *
 * Usage: test_explore <path to fasim> <golden directory>
 * FASIM_UPDATE_GOLDEN=1 rewrites the golden files (review the diff).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "sim_presets.h"
#include "test_util.h"
#include "viz_canvas.h"
#include "viz_explore.h"
#include "viz_text.h"

/* The loop orders the explorer shows: the default set (the unfused
 * baseline is the report's, named with --algo). */
#define FOR_SHOWN(a) \
    for (int a = 0; a < sim_algo_count(); a++) if (sim_algo_in_default((sim_algo)a))

static const char *g_fasim, *g_golden;

/* ---- independent arithmetic ---------------------------------------------------- */

/* Bytes of one element of tensor t in HBM, written out here rather than
 * taken from sim_tensor_bytes: m, l, L are fp32, the rest take the dtype;
 * in fp8 only Q, K, V are 1 byte, O (bf16) and S, P (fp16) 2. */
static uint64_t elem_bytes(int t, sim_dtype dt)
{
    if (t == SIM_m || t == SIM_l || t == SIM_L || t == SIM_Oacc)   /* FA1's running O: fp32 */
        return 4;
    if (dt == SIM_E4M3 || dt == SIM_E5M2)
        return t == SIM_Q || t == SIM_K || t == SIM_V ? 1 : 2;
    return dt == SIM_FP32 ? 4 : 2;
}

typedef struct {
    int ok;                    /* a plan fits and its counts fit 64 bits */
    int chosen;                /* sim_plan_choose succeeded */
    sim_plan plan;
    sim_counts counts;
    uint64_t rd, wr;
} expect;

static expect expected(sim_algo a, const sim_shape *sh, int64_t Br, int64_t Bc)
{
    expect x;
    memset(&x, 0, sizeof x);
    char err[2048];
    const sim_plan_kind kind = (Br || Bc) ? SIM_PLAN_USER : SIM_PLAN_AUTO;
    x.chosen = sim_plan_choose(a, sh, NULL, kind, Br, Bc, &x.plan, err, sizeof err) == 0;
    if (!x.chosen || sim_theory_counts(&x.plan, sh, &x.counts) != 0)
        return x;
    x.ok = 1;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        x.rd += x.counts.read_elems[t] * elem_bytes(t, sh->dtype);
        x.wr += x.counts.write_elems[t] * elem_bytes(t, sh->dtype);
    }
    return x;
}

static void init_or_fail(viz_explore *e, const viz_explore_config *c)
{
    char err[512];
    if (viz_explore_init(e, c, err, sizeof err) != 0) {
        fprintf(stderr, "viz_explore_init: %s\n", err);
        fail();
    }
}

/* ---- the table ------------------------------------------------------------------- */

static void check_rows(const viz_explore *e)
{
    const sim_shape *sh = &e->cfg.sh;
    expect x[SIM_ALGO_MAX];
    FOR_SHOWN(a)
        x[a] = expected((sim_algo)a, sh, e->cfg.Br, e->cfg.Bc);
    FOR_SHOWN(a) {
        const viz_explore_row *r = &e->row[a];
        if (!x[a].ok) {
            /* No plan (refused, or every fitting plan overflows), or a plan
             * whose counts pass 64 bits: not OK, and one line says why. */
            assert_int_not_equal(r->status, VIZ_EX_OK);
            if (x[a].chosen)
                assert_int_equal(r->status, VIZ_EX_OVERFLOW);
            assert_true(r->why[0] != '\0');
            assert_null(strchr(r->why, '\n'));
            continue;
        }
        if (r->status != VIZ_EX_OK)
            fprintf(stderr, "%s N=%lld d=%lld M=%llu: %s\n", sim_algo_name((sim_algo)a),
                    (long long)sh->N, (long long)sh->d, (unsigned long long)sh->M, r->why);
        assert_int_equal(r->status, VIZ_EX_OK);
        assert_int_equal(r->plan.Br, x[a].plan.Br);
        assert_int_equal(r->plan.Bc, x[a].plan.Bc);
        assert_int_equal(r->plan.sram_peak, x[a].plan.sram_peak);
        assert_true(r->plan.fits && r->plan.sram_peak <= sh->M);
        assert_memory_equal(&r->counts, &x[a].counts, sizeof r->counts);
        assert_int_equal(r->read_bytes, x[a].rd);
        assert_int_equal(r->write_bytes, x[a].wr);
        assert_int_equal(r->total_bytes, x[a].rd + x[a].wr);
        if (x[SIM_NAIVE].ok) {
            const double want = (double)(x[a].rd + x[a].wr) /
                                (double)(x[SIM_NAIVE].rd + x[SIM_NAIVE].wr);
            assert_true(fabs(r->ratio - want) <= 1e-12 * want);
        } else {
            assert_true(r->ratio == 0.0);
        }
    }
}

static void test_table_equals_closed_forms(void **state)
{
    (void)state;
    static const int64_t Ns[] = { 1, 7, 16, 100, 256, 1000, 1024, 4096, 65536, 1 << 20 };
    static const int64_t ds[] = { 1, 16, 32, 64, 100, 128 };
    static const uint64_t Ms[] = { 256, 4096, 16384, 98304, 166912, 232448, 1 << 20 };
    static const int64_t Bs[] = { 0, 0, 0, 16, 32, 48, 64, 100 };
    uint64_t seed = 6;
    for (int k = 0; k < 150; k++) {
        viz_explore_config c;
        viz_explore_config_default(&c);
        c.sh.N = Ns[tu_rand(&seed) % (sizeof Ns / sizeof Ns[0])];
        c.sh.d = ds[tu_rand(&seed) % (sizeof ds / sizeof ds[0])];
        c.sh.M = Ms[tu_rand(&seed) % (sizeof Ms / sizeof Ms[0])];
        c.sh.dtype = (sim_dtype)(tu_rand(&seed) % SIM_DTYPE_COUNT);
        c.sh.causal = (int)(tu_rand(&seed) % 2);
        c.Br = Bs[tu_rand(&seed) % (sizeof Bs / sizeof Bs[0])];
        c.Bc = Bs[tu_rand(&seed) % (sizeof Bs / sizeof Bs[0])];
        viz_explore e;
        init_or_fail(&e, &c);
        check_rows(&e);
    }
    /* The report's classroom numbers (README): 9.25 MiB, 2.95 MiB, 1.75 MiB.
     * FA1's running O in fp32 O_acc: read and written T_c = 4 times N d,
     * 4 bytes each, where O took 2 read 4 and written 5 times: 16 N d more. */
    viz_explore_config c;
    viz_explore_config_default(&c);
    viz_explore e;
    init_or_fail(&e, &c);
    assert_int_equal(e.row[SIM_NAIVE].read_bytes + e.row[SIM_NAIVE].write_bytes,
                     5373952 + 4325376);
    assert_int_equal(e.row[SIM_FA1].total_bytes, 1343488 + 696320 + 16 * 1024 * 64);
    assert_int_equal(e.row[SIM_FA2].total_bytes, 1703936 + 135168);
    assert_int_equal(e.row[SIM_FA2].plan.Br, 192);
    assert_int_equal(e.row[SIM_FA2].plan.Bc, 16);
}

/* The screen's claim, "equal to the simulator's counts": the simulator,
 * count-only, measures exactly the table's counts with the table's plans. */
static void test_table_equals_simulator(void **state)
{
    (void)state;
    static const struct {
        int64_t N, d;
        uint64_t M;
        int causal;
        int64_t Br, Bc;
    } C[] = {
        { 64, 64, 8192, 0, 0, 0 },   { 100, 32, 16384, 1, 0, 0 }, { 256, 16, 4096, 0, 16, 0 },
        { 1000, 64, 98304, 1, 0, 0 }, { 1024, 64, 98304, 0, 0, 0 }, { 333, 8, 8192, 0, 32, 16 },
    };
    for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
        viz_explore_config c;
        viz_explore_config_default(&c);
        c.sh.N = C[k].N;
        c.sh.d = C[k].d;
        c.sh.M = C[k].M;
        c.sh.causal = C[k].causal;
        c.Br = C[k].Br;
        c.Bc = C[k].Bc;
        viz_explore e;
        init_or_fail(&e, &c);
        FOR_SHOWN(a) {
            const viz_explore_row *r = &e.row[a];
            assert_int_equal(r->status, VIZ_EX_OK);
            sim_result res;
            char err[512];
            assert_int_equal(sim_run((sim_algo)a, &e.cfg.sh, &r->plan, NULL, NULL, NULL, NULL,
                                     &res, err, sizeof err), 0);
            assert_memory_equal(&res.counts, &r->counts, sizeof res.counts);
            assert_int_equal(res.sram_peak, r->plan.sram_peak);
            sim_result_free(&res);
        }
    }
}

/* A refused plan says why in one line; the line names the overflow. */
static void test_refusals(void **state)
{
    (void)state;
    viz_explore_config c;
    viz_explore_config_default(&c);
    c.sh.N = 256;
    c.sh.d = 32;
    c.sh.M = 16384;
    c.Br = 64;
    c.Bc = 64;
    viz_explore e;
    init_or_fail(&e, &c);
    FOR_SHOWN(a) {
        const viz_explore_row *r = &e.row[a];
        assert_int_equal(r->status, VIZ_EX_REFUSED);
        assert_null(strchr(r->why, '\n'));
        /* The plan's peak and its excess over M, as the simulator computes. */
        sim_plan p;
        assert_int_equal(sim_plan_make((sim_algo)a, &c.sh, NULL, 64, 64, SIM_PLAN_USER, &p), 0);
        assert_false(p.fits);
        char need[32], over[32], want[96];
        sim_format_count(need, sizeof need, p.sram_peak);
        sim_format_count(over, sizeof over, p.sram_peak - c.sh.M);
        snprintf(want, sizeof want, "64x64: SRAM %s B, %s B over M", need, over);
        if (!strstr(r->why, want))
            fprintf(stderr, "why: %s\nwant: %s\n", r->why, want);
        assert_non_null(strstr(r->why, want));
    }
    /* Nothing fits at all: M too small for d. */
    c.Br = c.Bc = 0;
    c.sh.d = 1024;
    c.sh.M = 256;
    init_or_fail(&e, &c);
    FOR_SHOWN(a) {
        assert_int_equal(e.row[a].status, VIZ_EX_REFUSED);
        assert_non_null(strstr(e.row[a].why, "no plan fits: even 1x1 needs"));
    }
    /* Counts past 64 bits: naive at N = 2^30. */
    viz_explore_config_default(&c);
    c.sh.N = VIZ_EX_MAX_N;
    init_or_fail(&e, &c);
    assert_int_equal(e.row[SIM_NAIVE].status, VIZ_EX_OVERFLOW);
    assert_int_equal(e.row[SIM_FA2].status, VIZ_EX_OK);
    assert_true(e.row[SIM_FA2].ratio == 0.0);     /* no naive to compare with */
}

/* ---- keys ------------------------------------------------------------------------ */

static void key(viz_explore *e, int k, viz_explore_action want)
{
    const viz_explore_action got = viz_explore_key(e, k);
    if (got != want)
        fprintf(stderr, "key '%c': action %d, want %d (msg: %s)\n", k, got, want, e->msg);
    assert_int_equal(got, want);
}

static void test_keys(void **state)
{
    (void)state;
    viz_explore_config c;
    viz_explore_config_default(&c);
    viz_explore e;
    init_or_fail(&e, &c);
    /* N, d: double and halve, within 1 .. 2^30 and 1 .. 65536. */
    key(&e, 'N', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.sh.N, 2048);
    assert_string_equal(e.msg, "N doubled: 1,024 -> 2,048");
    key(&e, 'n', VIZ_EX_KEY_DONE);
    key(&e, 'n', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.sh.N, 512);
    check_rows(&e);                    /* derived again at once */
    key(&e, 'D', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.sh.d, 128);
    key(&e, 'd', VIZ_EX_KEY_DONE);
    key(&e, 'd', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.sh.d, 32);
    check_rows(&e);
    viz_explore lim;
    c.sh.N = 1;
    c.sh.d = 1;
    init_or_fail(&lim, &c);
    key(&lim, 'n', VIZ_EX_KEY_DONE);
    key(&lim, 'd', VIZ_EX_KEY_DONE);
    assert_int_equal(lim.cfg.sh.N, 1);
    assert_int_equal(lim.cfg.sh.d, 1);
    c.sh.N = VIZ_EX_MAX_N;
    c.sh.d = VIZ_EX_MAX_D;
    init_or_fail(&lim, &c);
    key(&lim, 'N', VIZ_EX_KEY_DONE);
    key(&lim, 'D', VIZ_EX_KEY_DONE);
    assert_int_equal(lim.cfg.sh.N, VIZ_EX_MAX_N);
    assert_int_equal(lim.cfg.sh.d, VIZ_EX_MAX_D);
    assert_non_null(strstr(lim.msg, "at most"));
    viz_explore_config_default(&c);

    /* M: double and halve within 256 B .. 1 MiB. */
    key(&e, 'M', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.sh.M, 196608);
    key(&e, 'm', VIZ_EX_KEY_DONE);
    key(&e, 'm', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.sh.M, 49152);
    for (int k = 0; k < 20; k++)
        viz_explore_key(&e, 'm');
    assert_int_equal(e.cfg.sh.M, 384);         /* 49152 / 2^7; the next would be 192 */
    for (int k = 0; k < 20; k++)
        viz_explore_key(&e, 'M');
    assert_int_equal(e.cfg.sh.M, 786432);      /* 384 * 2^11; the next would pass 1 MiB */
    check_rows(&e);

    /* B_r, B_c: steps of 16, 0 = chosen; '0' resets both. */
    init_or_fail(&e, &c);
    key(&e, 'r', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.Br, 0);
    key(&e, 'R', VIZ_EX_KEY_DONE);
    key(&e, 'R', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.Br, 32);
    assert_int_equal(e.cfg.Bc, 0);
    FOR_SHOWN(a)
        assert_int_equal(e.row[a].plan.Br, 32);          /* pinned, B_c chosen */
    check_rows(&e);
    key(&e, 'C', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.Bc, 16);
    FOR_SHOWN(a) {
        assert_int_equal(e.row[a].plan.Br, 32);
        assert_int_equal(e.row[a].plan.Bc, 16);
        assert_int_equal(e.row[a].plan.kind, SIM_PLAN_USER);
    }
    key(&e, 'c', VIZ_EX_KEY_DONE);
    key(&e, 'r', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.Bc, 0);
    assert_int_equal(e.cfg.Br, 16);
    key(&e, 'C', VIZ_EX_KEY_DONE);
    key(&e, '0', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.Br, 0);
    assert_int_equal(e.cfg.Bc, 0);
    assert_int_equal(e.row[SIM_FA2].plan.kind, SIM_PLAN_AUTO);
    c.sh.N = 32;
    viz_explore small;
    init_or_fail(&small, &c);
    key(&small, 'R', VIZ_EX_KEY_DONE);
    key(&small, 'R', VIZ_EX_KEY_DONE);
    key(&small, 'R', VIZ_EX_KEY_DONE);         /* B_r = 32 = N already: stays */
    assert_int_equal(small.cfg.Br, 32);
    assert_non_null(strstr(small.msg, "already covers N"));
    viz_explore_config_default(&c);

    /* dtype cycles fp16 -> bf16 -> fp32 -> e4m3 -> e5m2 -> fp16, T
     * backwards; x causal. The fp8 rows: Q, K, V at 1 byte. */
    key(&e, 't', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.sh.dtype, SIM_BF16);
    key(&e, 't', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.sh.dtype, SIM_FP32);
    check_rows(&e);
    key(&e, 't', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.sh.dtype, SIM_E4M3);
    check_rows(&e);
    key(&e, 't', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.sh.dtype, SIM_E5M2);
    key(&e, 't', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.sh.dtype, SIM_FP16);
    key(&e, 'T', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.sh.dtype, SIM_E5M2);
    key(&e, 'T', VIZ_EX_KEY_DONE);
    key(&e, 'T', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.sh.dtype, SIM_FP32);
    key(&e, 'x', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.sh.causal, 1);
    check_rows(&e);
    key(&e, 'x', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.sh.causal, 0);

    /* g: none -> a100 -> h100 -> h200 -> none, M the preset's, then the old M;
     * changing M by hand ends the preset. */
    init_or_fail(&e, &c);
    int np;
    const sim_gpu *g = sim_gpu_presets(&np);
    for (int k = 0; k < np; k++) {
        key(&e, 'g', VIZ_EX_KEY_DONE);
        assert_int_equal(e.cfg.gpu, k);
        assert_int_equal(e.cfg.sh.M, g[k].smem_per_block);
        check_rows(&e);
    }
    key(&e, 'g', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.gpu, -1);
    assert_int_equal(e.cfg.sh.M, 98304);
    key(&e, 'G', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.gpu, np - 1);
    key(&e, 'm', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.gpu, -1);
    assert_int_equal(e.cfg.sh.M, g[np - 1].smem_per_block / 2);
    assert_non_null(strstr(e.msg, "no gpu preset now"));

    /* The loop order v opens: a cycles, 1 2 3 choose; v asks for the view. */
    assert_int_equal(e.cfg.view_algo, SIM_FA2);
    key(&e, 'a', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.view_algo, SIM_NAIVE);
    key(&e, '2', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.view_algo, SIM_FA1);
    key(&e, '3', VIZ_EX_KEY_DONE);
    assert_int_equal(e.cfg.view_algo, SIM_FA2);
    key(&e, '1', VIZ_EX_KEY_DONE);
    key(&e, 'v', VIZ_EX_KEY_VIEW);
    viz_config vc;
    viz_explore_view_config(&e, &vc);
    assert_int_equal(vc.algo, SIM_NAIVE);
    assert_memory_equal(&vc.sh, &e.cfg.sh, sizeof vc.sh);
    assert_int_equal(vc.plan_kind, SIM_PLAN_AUTO);
    /* M: half the last preset's (h100-pcie: 232,448 / 2) */
    assert_int_equal(g[np - 1].smem_per_block / 2, 116224);
    assert_non_null(strstr(e.msg, "fasim view --N 1K --d 64 --M 116224 --algo naive"));

    /* z: the starting configuration; ? shows help and the next key only
     * closes it; q quits; anything else is unknown and changes nothing. */
    key(&e, 'z', VIZ_EX_KEY_DONE);
    assert_memory_equal(&e.cfg, &e.start, sizeof e.cfg);
    key(&e, '?', VIZ_EX_KEY_DONE);
    assert_true(e.help);
    key(&e, 'N', VIZ_EX_KEY_DONE);
    assert_false(e.help);
    assert_int_equal(e.cfg.sh.N, 1024);
    const viz_explore_config before = e.cfg;
    key(&e, 'k', VIZ_EX_KEY_UNKNOWN);
    key(&e, 27, VIZ_EX_KEY_UNKNOWN);
    assert_memory_equal(&e.cfg, &before, sizeof before);
    assert_non_null(strstr(e.msg, "unknown key"));
    key(&e, 'q', VIZ_EX_KEY_QUIT);
    /* Every key the CLI accepts is known to the model. */
    for (const char *p = VIZ_EXPLORE_KEYS; *p; p++) {
        viz_explore f;
        init_or_fail(&f, &c);
        assert_int_not_equal(viz_explore_key(&f, *p), VIZ_EX_KEY_UNKNOWN);
    }
}

static void test_init_limits(void **state)
{
    (void)state;
    viz_explore_config c;
    viz_explore e;
    char err[512];
    static const struct {
        int64_t N, d;
        uint64_t M;
    } BAD[] = {
        { 0, 64, 98304 }, { VIZ_EX_MAX_N + 1, 64, 98304 }, { 1024, 0, 98304 },
        { 1024, VIZ_EX_MAX_D + 1, 98304 }, { 1024, 64, 255 }, { 1024, 64, VIZ_EX_MAX_M + 1 },
    };
    for (size_t k = 0; k < sizeof BAD / sizeof BAD[0]; k++) {
        viz_explore_config_default(&c);
        c.sh.N = BAD[k].N;
        c.sh.d = BAD[k].d;
        c.sh.M = BAD[k].M;
        err[0] = '\0';
        assert_int_equal(viz_explore_init(&e, &c, err, sizeof err), -1);
        assert_true(err[0] != '\0');
    }
    /* A preset sets M, whatever cfg.sh.M says (then 'g' returns to it). */
    viz_explore_config_default(&c);
    c.gpu = 0;
    c.sh.M = 4096;
    assert_int_equal(viz_explore_init(&e, &c, err, sizeof err), 0);
    assert_int_equal(e.cfg.sh.M, sim_gpu_presets(NULL)[0].smem_per_block);
    int np;
    (void)sim_gpu_presets(&np);
    for (int k = 0; k < np; k++)
        viz_explore_key(&e, 'g');
    assert_int_equal(e.cfg.gpu, -1);
    assert_int_equal(e.cfg.sh.M, 4096);
}

/* ---- the chart ------------------------------------------------------------------- */

static void check_chart(const viz_explore *e)
{
    const viz_explore_chart *ch = &e->chart;
    const int64_t N = e->cfg.sh.N;
    assert_true(ch->n >= 1 && ch->n <= VIZ_EX_CHART_POINTS);
    assert_int_equal(ch->N[ch->mid], N);
    for (int k = 1; k < ch->n; k++)
        assert_true(ch->N[k] > ch->N[k - 1]);
    assert_int_equal(ch->N[ch->n - 1], 8 * N);
    if (N >= 8)
        assert_int_equal(ch->N[0], (N + 4) / 8);
    for (int k = 0; k < ch->n; k++) {
        sim_shape sh = e->cfg.sh;
        sh.N = ch->N[k];
        FOR_SHOWN(a) {
            const expect x = expected((sim_algo)a, &sh, e->cfg.Br, e->cfg.Bc);
            assert_int_equal(ch->ok[a][k], x.ok);
            if (x.ok)
                assert_int_equal(ch->bytes[a][k], x.rd + x.wr);
        }
    }
    /* Drawn: every point with a count is at its cell, with its mark (or '*'
     * where loop orders share a cell). */
    viz_canvas c;
    assert_int_equal(viz_canvas_init(&c, VIZ_TEXT_W, VIZ_TEXT_H), 0);
    viz_explore_area ar;
    viz_explore_draw(e, &c, NULL, &ar);
    assert_true(ar.present);
    assert_true(ar.w >= 40 && ar.h >= 6);
    int drawn = 0;
    for (int k = 0; k < ch->n; k++)
        FOR_SHOWN(a) {
            if (!ch->ok[a][k])
                continue;
            int x, y;
            assert_true(viz_explore_cell(&ar, ch->N[k], ch->bytes[a][k], &x, &y));
            const char got = c.ch[(size_t)y * (size_t)c.w + (size_t)x];
            if (got != viz_explore_mark((sim_algo)a) && got != '*')
                fprintf(stderr, "N = %lld %s at (%d, %d): '%c'\n", (long long)ch->N[k],
                        sim_algo_name((sim_algo)a), x, y, got);
            assert_true(got == viz_explore_mark((sim_algo)a) || got == '*');
            drawn++;
            /* The mapping is not constant: 16x the bytes is another row (or
             * off the plot). */
            int x2, y2;
            if (ch->bytes[a][k] < UINT64_MAX / 16 &&
                viz_explore_cell(&ar, ch->N[k], ch->bytes[a][k] * 16, &x2, &y2)) {
                if (!(y2 < y))
                    fprintf(stderr, "N = %lld: 16x bytes at row %d, not above %d (ly %g..%g)\n",
                            (long long)ch->N[k], y2, y, ar.ly_lo, ar.ly_hi);
                assert_true(y2 < y);
            }
        }
    assert_true(drawn > 0);
    viz_canvas_free(&c);
}

static void test_chart(void **state)
{
    (void)state;
    viz_explore_config c;
    viz_explore_config_default(&c);
    viz_explore e;
    init_or_fail(&e, &c);
    check_chart(&e);
    /* N/8 .. 8N in half octaves: 128, 181, 256, ..., 8192 around 1024. */
    assert_int_equal(e.chart.n, VIZ_EX_CHART_POINTS);
    assert_int_equal(e.chart.N[0], 128);
    assert_int_equal(e.chart.N[1], 181);
    assert_int_equal(e.chart.N[VIZ_EX_CHART_MID], 1024);
    assert_int_equal(e.chart.N[7], 1448);
    /* The slope printed beside the chart is the closed forms' from N to 2N. */
    viz_canvas cv;
    assert_int_equal(viz_canvas_init(&cv, VIZ_TEXT_W, VIZ_TEXT_H), 0);
    viz_explore_draw(&e, &cv, NULL, NULL);
    char *text = malloc((size_t)cv.w * (size_t)cv.h + 1);
    assert_non_null(text);
    memcpy(text, cv.ch, (size_t)cv.w * (size_t)cv.h);
    text[cv.w * cv.h] = '\0';
    FOR_SHOWN(a) {
        const double s = log2((double)e.chart.bytes[a][VIZ_EX_CHART_MID + 2] /
                              (double)e.chart.bytes[a][VIZ_EX_CHART_MID]);
        char want[64];
        snprintf(want, sizeof want, "%-5s %6.3f", sim_algo_name((sim_algo)a), s);
        assert_non_null(strstr(text, want));
    }
    free(text);
    viz_canvas_free(&cv);
    /* Other shapes, causal, pinned blocks, tiny and huge N. */
    static const struct {
        int64_t N, d;
        uint64_t M;
        int causal;
        int64_t Br, Bc;
    } C[] = {
        { 4096, 128, 232448, 1, 0, 0 },
        { 1000, 32, 16384, 0, 16, 0 },
        { 256, 32, 16384, 0, 64, 16 },
        { 1, 1, 256, 0, 0, 0 },
        { 5, 64, 98304, 1, 0, 0 },
        { VIZ_EX_MAX_N, 64, 98304, 0, 0, 0 },
    };
    for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
        c.sh.N = C[k].N;
        c.sh.d = C[k].d;
        c.sh.M = C[k].M;
        c.sh.causal = C[k].causal;
        c.Br = C[k].Br;
        c.Bc = C[k].Bc;
        init_or_fail(&e, &c);
        check_chart(&e);
    }
}

/* The screen fits 80 x 24 and follows larger canvases; smaller ones say so. */
static void test_sizes(void **state)
{
    (void)state;
    viz_explore_config c;
    viz_explore_config_default(&c);
    viz_explore e;
    init_or_fail(&e, &c);
    assert_true(strlen(VIZ_EXPLORE_STATUS) <= 80);
    static const int S[][2] = { { 80, 24 }, { 120, 40 }, { 200, 60 }, { 60, 20 }, { 1, 1 } };
    for (size_t k = 0; k < sizeof S / sizeof S[0]; k++) {
        viz_canvas cv;
        assert_int_equal(viz_canvas_init(&cv, S[k][0], S[k][1]), 0);
        viz_explore_area ar;
        viz_explore_draw(&e, &cv, VIZ_EXPLORE_STATUS, &ar);
        const char *last = cv.ch + (size_t)(cv.h - 1) * (size_t)cv.w;
        if (S[k][0] >= 80) {
            assert_true(ar.present);
            assert_memory_equal(last, VIZ_EXPLORE_STATUS, strlen(VIZ_EXPLORE_STATUS));
            /* The chart grows with the window. */
            assert_int_equal(ar.h, S[k][1] - 1 - 1 - 11 - 3);
            assert_int_equal(ar.w, S[k][0] - 9 - 17 - 1);
        }
        if (S[k][0] == 60) {
            const char *msg = cv.ch + (size_t)(cv.h - 2) * (size_t)cv.w;
            assert_memory_equal(msg, "(window too small", 17);
        }
        viz_canvas_free(&cv);
    }
}

/* ---- the CLI --------------------------------------------------------------------- */

typedef struct {
    char *out, *err;
    size_t out_len;
    int status;
} run_result;

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        const size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap)
            break;
        char *b = realloc(buf, 2 * cap + 1);
        if (!b) {
            free(buf);
            buf = NULL;
        }
        buf = b;
        cap *= 2;
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

/* `fasim explore ARGS` with stdout and stderr to files, stdin from /dev/null. */
static run_result run_explore(const char *args)
{
    run_result r;
    memset(&r, 0, sizeof r);
    char out[600], err[600], cmd[2048];
    tu_path(out, sizeof out, "explore.out");
    tu_path(err, sizeof err, "explore.err");
    snprintf(cmd, sizeof cmd, "'%s' explore %s >'%s' 2>'%s' </dev/null", g_fasim, args, out,
             err);
    const int st = system(cmd);
    assert_true(st != -1 && WIFEXITED(st));
    r.status = WEXITSTATUS(st);
    r.out = slurp(out, &r.out_len);
    r.err = slurp(err, NULL);
    assert_non_null(r.out);
    assert_non_null(r.err);
    return r;
}

static void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
}

/* ASCII, at most 80 columns, no trailing spaces. */
static void check_format(const char *s)
{
    int col = 0, line = 1;
    for (const char *p = s; *p; p++) {
        if (*p == '\n') {
            if (p > s && p[-1] == ' ') {
                fprintf(stderr, "line %d ends in a space\n", line);
                fail();
            }
            col = 0;
            line++;
            continue;
        }
        if (*p < 32 || *p > 126) {
            fprintf(stderr, "line %d: byte 0x%02x\n", line, (unsigned char)*p);
            fail();
        }
        if (++col > 80) {
            fprintf(stderr, "line %d is over 80 columns\n", line);
            fail();
        }
    }
}

static int count_of(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static int updating(void)
{
    const char *u = getenv("FASIM_UPDATE_GOLDEN");
    return u && u[0] == '1';
}

/* 1 when got differs from golden file `name` (printing the first line that
 * differs), else 0. */
static int golden_differs(const char *name, const char *got, size_t len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", g_golden, name);
    size_t wlen;
    char *want = slurp(path, &wlen);
    if (!want) {
        fprintf(stderr, "missing golden file %s (FASIM_UPDATE_GOLDEN=1 writes it)\n", path);
        return 1;
    }
    const int differs = wlen != len || memcmp(want, got, len) != 0;
    if (differs) {
        size_t k = 0, line = 1, start = 0;
        while (k < len && k < wlen && got[k] == want[k]) {
            if (got[k] == '\n') {
                line++;
                start = k + 1;
            }
            k++;
        }
        const char *w = want + (start < wlen ? start : wlen);
        const char *g = got + (start < len ? start : len);
        fprintf(stderr, "%s differs at line %zu:\n  want: %.*s\n  got:  %.*s\n", name, line,
                (int)strcspn(w, "\n"), w, (int)strcspn(g, "\n"), g);
    }
    free(want);
    return differs;
}

static const struct {
    const char *file, *args;
} GOLDEN[] = {
    /* The example of the documentation: N doubled twice, then causal. */
    { "explore-NNx.txt", "--keys NNx" },
    /* Pinned blocks until they do not fit, and the view of the refused plan. */
    { "explore-blocks.txt", "--N 256 --d 32 --M 16K --keys RRCCCv0" },
    /* Presets, help, dtype, M by hand, another loop order's view. */
    { "explore-gpu.txt", "--N 64 --gpu h100 --keys g?xtm2v" },
};

static void test_golden(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof GOLDEN / sizeof GOLDEN[0]; k++) {
        run_result r = run_explore(GOLDEN[k].args);
        if (r.status != 0)
            fprintf(stderr, "%s: exit %d: %s\n", GOLDEN[k].args, r.status, r.err);
        assert_int_equal(r.status, 0);
        assert_int_equal(r.err[0], '\0');
        check_format(r.out);
        if (updating()) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", g_golden, GOLDEN[k].file);
            assert_int_equal(tu_write_file(path, r.out, r.out_len), 0);
            fprintf(stderr, "wrote %s\n", path);
        } else if (golden_differs(GOLDEN[k].file, r.out, r.out_len)) {
            fail();
        }
        run_result again = run_explore(GOLDEN[k].args);
        assert_int_equal(again.out_len, r.out_len);
        assert_memory_equal(again.out, r.out, r.out_len);
        run_free(&again);
        run_free(&r);
    }
}

/* The golden comparison proves itself: one changed digit is caught. */
static void test_golden_detects_change(void **state)
{
    (void)state;
    if (updating())
        skip();
    run_result r = run_explore(GOLDEN[0].args);
    assert_int_equal(golden_differs(GOLDEN[0].file, r.out, r.out_len), 0);
    char *p = strstr(r.out, "9,699,328");
    assert_non_null(p);
    p[0] = '8';
    fprintf(stderr, "(a difference is expected here:)\n");
    assert_int_equal(golden_differs(GOLDEN[0].file, r.out, r.out_len), 1);
    run_free(&r);
}

/* Frames: the start and one per key (1 + 23 lines each); q stops; the
 * library's frame is the CLI's. */
static void test_frames(void **state)
{
    (void)state;
    run_result r = run_explore("--keys NNx");
    assert_int_equal(r.status, 0);
    assert_int_equal(count_of(r.out, "---- explore: "), 4);
    assert_int_equal(count_of(r.out, "\n"), 4 * (1 + VIZ_TEXT_H));
    assert_non_null(strstr(r.out, "---- explore: key 3 of 3 'x' "));
    /* The last frame, from the library. */
    viz_explore_config c;
    viz_explore_config_default(&c);
    viz_explore e;
    init_or_fail(&e, &c);
    for (const char *k = "NNx"; *k; k++)
        viz_explore_key(&e, *k);
    char path[600];
    tu_path(path, sizeof path, "lib.out");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(viz_explore_text_frame(f, &e, VIZ_TEXT_W, VIZ_TEXT_H), 0);
    fclose(f);
    size_t len;
    char *lib = slurp(path, &len);
    assert_non_null(lib);
    assert_true(r.out_len > len);
    assert_memory_equal(r.out + r.out_len - len, lib, len);
    assert_non_null(strstr(lib, "N = 4,096"));
    assert_non_null(strstr(lib, "exact; equal to the simulator's counts"));
    free(lib);
    run_free(&r);

    r = run_explore("--keys NqN");
    assert_int_equal(r.status, 0);
    assert_int_equal(count_of(r.out, "---- explore: "), 2);
    run_free(&r);
    r = run_explore("");
    assert_int_equal(r.status, 0);
    assert_int_equal(count_of(r.out, "---- explore: "), 1);
    assert_non_null(strstr(r.out, "N = 1,024"));
    run_free(&r);
    /* A view that cannot be recorded says why instead of a frame. */
    r = run_explore("--N 1M --keys v");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "no view: "));
    check_format(r.out);
    run_free(&r);
}

static void test_cli_usage(void **state)
{
    (void)state;
    run_result r = run_explore("--help");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "usage: fasim explore"));
    assert_non_null(strstr(r.out, "--keys STRING"));
    run_free(&r);
    r = run_explore("--gpu list");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "h100"));
    run_free(&r);

    static const struct {
        const char *args, *msg;
    } BAD[] = {
        { "--N 0", "--N 0: must be at least 1" },
        { "--N 2G", "explore takes N up to 2^30" },
        { "--N", "--N needs a value" },
        { "--d 100000", "--d 100000" },
        { "--M 2M", "explore takes 256 B .. 1M" },
        { "--M 100", "explore takes 256 B .. 1M" },
        { "--M 96KB", "ambiguous" },
        { "--dtype fp8", "unknown type" },
        { "--gpu v100", "unknown preset" },
        { "--gpu a100 --M 96K", "give --gpu or --M, not both" },
        { "--Br 0", "--Br 0: must be at least 1" },
        { "--algo all", "one loop order for v" },
        { "--keys NkN", "unknown key 'k' at position 2" },
        { "--keys", "--keys needs a value" },
        { "--json", "not an option of 'fasim explore'" },
        { "--Keys N", "did you mean '--keys'" },
        { "--causal=1", "takes no value" },
        { "stray", "unexpected argument" },
    };
    for (size_t k = 0; k < sizeof BAD / sizeof BAD[0]; k++) {
        r = run_explore(BAD[k].args);
        if (r.status != 2 || !strstr(r.err, BAD[k].msg))
            fprintf(stderr, "'%s': exit %d, stderr: %s", BAD[k].args, r.status, r.err);
        assert_int_equal(r.status, 2);
        assert_non_null(strstr(r.err, BAD[k].msg));
        assert_non_null(strstr(r.err, "fasim explore: "));
        assert_int_equal(r.out_len, 0);
        run_free(&r);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s <fasim> <golden dir>\n", argv[0]);
        return 2;
    }
    g_fasim = argv[1];
    g_golden = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_equals_closed_forms),
        cmocka_unit_test(test_table_equals_simulator),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_init_limits),
        cmocka_unit_test(test_chart),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_golden_detects_change),
        cmocka_unit_test(test_frames),
        cmocka_unit_test(test_cli_usage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
