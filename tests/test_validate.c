/*
 * test_validate.c — `fasim validate`: the figures file's parser (good rows
 * read, bad ones refused with their line and what is wrong), the FLOP
 * convention and the error arithmetic against values computed here, the
 * table flagging a prediction known to be wrong, and the command's exit
 * status. Arguments: the fasim binary and the shipped figures file.
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

#include "sim_loop.h"
#include "sim_validate.h"
#include "sweep_util.h"

static const char *g_fasim, *g_figures;

#define HEADER "gpu\tdtype\talgo\tpasses\tcausal\tbatch\theads\tN\td\tmetric\tvalue\tflops\tfit" \
               "\tsource\n"
#define GOOD1 "a100\tfp16\tfa2\tfwd+bwd\t0\t16\t32\t1024\t64\ttflops\t153\tfa2\t1\tpaper A\n"
#define GOOD2 "h100-pcie\tbf16\tunfused\tfwd\t1\t4\t16\t8192\t128\tms\t3.5\t-\t0\tpaper B\n"
#define GOOD3 "a100\tfp16\tfa3\tfwd\t0\t4\t16\t8448\t128\tGB\t4.4\t-\t0\tpaper C\n"

#define HAS(s, sub) do { if (!strstr((s), (sub))) \
    fail_msg("missing \"%s\" in:\n%s", (sub), (s)); } while (0)

/* ---- the parser ---------------------------------------------------------- */

static void parse_good(void **state)
{
    (void)state;
    sim_vfig_list l;
    char err[1024];
    const char *text = "# a comment\n\n" HEADER GOOD1 "# another\r\n" GOOD2 GOOD3;
    assert_int_equal(sim_validate_parse("f.tsv", text, &l, err, sizeof err), 0);
    assert_int_equal(l.n, 3);
    const sim_vfig *a = &l.items[0], *b = &l.items[1], *c = &l.items[2];
    assert_int_equal(a->line, 4);
    assert_string_equal(a->gpu->name, "a100");
    assert_int_equal(a->algo, SIM_FA2);
    assert_true(a->modelled && a->fwd && a->bwd && !a->causal && a->fit && a->fa2_flops);
    assert_int_equal(a->batch, 16);
    assert_int_equal(a->heads, 32);
    assert_int_equal(a->N, 1024);
    assert_int_equal(a->d, 64);
    assert_int_equal(a->metric, SIM_VM_TFLOPS);
    assert_true(a->value == 153.0);
    assert_string_equal(a->source, "paper A");
    assert_int_equal(b->line, 6);                  /* after the CRLF comment */
    assert_int_equal(b->dtype, SIM_BF16);
    assert_string_equal(b->algo_name, "unfused");
    assert_true(b->fwd && !b->bwd && b->causal && !b->fit && !b->fa2_flops);
    assert_int_equal(b->metric, SIM_VM_MS);
    assert_true(b->value == 3.5);
    assert_false(c->modelled);                     /* fa3 off Hopper: kept, not modelled */
    assert_int_equal(c->metric, SIM_VM_GB);
    sim_vfig_list_free(&l);
}

/* Each bad row alone after a good header: refused with its line (3) and
 * the words that say what is wrong. */
static void parse_bad_rows(void **state)
{
    (void)state;
    static const struct {
        const char *row, *why;
    } BAD[] = {
        { "v100\tfp16\tfa2\tfwd\t0\t1\t1\t64\t64\tms\t1\t-\t0\tx\n", "gpu 'v100': no such preset" },
        { "a100\tfp8\tfa2\tfwd\t0\t1\t1\t64\t64\tms\t1\t-\t0\tx\n", "dtype 'fp8'" },
        { "a100\tfp16\tfa9\tfwd\t0\t1\t1\t64\t64\tms\t1\t-\t0\tx\n", "algo 'fa9'" },
        { "h100\tfp16\tfa2/np\tfwd\t0\t1\t1\t64\t64\tms\t1\t-\t0\tx\n",
          "algo 'fa2/np': a switch after '/' is fa3's" },
        { "h100\tfp16\tfa3/xx\tfwd\t0\t1\t1\t64\t64\tms\t1\t-\t0\tx\n", "algo 'fa3/xx'" },
        { "a100\tfp16\tfa2\tboth\t0\t1\t1\t64\t64\tms\t1\t-\t0\tx\n", "passes 'both'" },
        { "a100\tfp16\tfa2\tfwd\t2\t1\t1\t64\t64\tms\t1\t-\t0\tx\n", "causal '2': a whole number from 0 to 1" },
        { "a100\tfp16\tfa2\tfwd\t0\t0\t1\t64\t64\tms\t1\t-\t0\tx\n", "batch '0'" },
        { "a100\tfp16\tfa2\tfwd\t0\t1\t-3\t64\t64\tms\t1\t-\t0\tx\n", "heads '-3'" },
        { "a100\tfp16\tfa2\tfwd\t0\t1\t1\t1k\t64\tms\t1\t-\t0\tx\n", "N '1k'" },
        { "a100\tfp16\tfa2\tfwd\t0\t1\t1\t64\t99999\tms\t1\t-\t0\tx\n", "d '99999'" },
        { "a100\tfp16\tfa2\tfwd\t0\t1\t1\t64\t64\tus\t1\t-\t0\tx\n", "metric 'us': tflops, ms or GB" },
        { "a100\tfp16\tfa2\tfwd\t0\t1\t1\t64\t64\tms\t0\t-\t0\tx\n", "value '0': a positive number" },
        { "a100\tfp16\tfa2\tfwd\t0\t1\t1\t64\t64\tms\tnan\t-\t0\tx\n", "value 'nan'" },
        { "a100\tfp16\tfa2\tfwd\t0\t1\t1\t64\t64\ttflops\t100\t-\t0\tx\n", "a tflops row names its FLOP convention" },
        { "a100\tfp16\tfa2\tfwd\t0\t1\t1\t64\t64\tms\t1\tfa2\t0\tx\n", "flops 'fa2': '-' on a ms row" },
        { "a100\tfp16\tfa2\tfwd\t0\t1\t1\t64\t64\tms\t1\t-\tyes\tx\n", "fit 'yes'" },
        { "a100\tfp16\tfa2\tfwd\t0\t1\t1\t64\t64\tms\t1\t-\t0\t\n", "source: empty" },
        { "a100 fp16 fa2 fwd 0 1 1 64 64 ms 1 - 0 x\n", "1 tab-separated column, where 14" },
        { "a100\tfp16\tfa2\tfwd\t0\t1\t1\t64\t64\tms\t1\t-\t0\tx\textra\n", "15 tab-separated columns" },
    };
    for (size_t k = 0; k < sizeof BAD / sizeof BAD[0]; k++) {
        char text[1024], err[1024];
        snprintf(text, sizeof text, "# figures\n" HEADER "%s", BAD[k].row);
        sim_vfig_list l;
        const int n = sim_validate_parse("bad.tsv", text, &l, err, sizeof err);
        if (n != 1)
            fail_msg("row %zu: %d bad lines, expected 1 (%s)", k, n, err);
        HAS(err, "bad.tsv:3: ");
        HAS(err, BAD[k].why);
        assert_int_equal(l.n, 0);
        assert_null(l.items);
    }
}

/* Every bad line is reported, each with its own number; the good rows
 * between them do not make a partial list. */
static void parse_many_bad(void **state)
{
    (void)state;
    const char *text = HEADER GOOD1
                       "a100\tfp16\tfa2\tfwd\t0\t1\t1\t64\t64\tms\t-1\t-\t0\tx\n" GOOD2
                       "h999\tfp16\tfa2\tfwd\t0\t1\t1\t64\t64\tms\t1\t-\t0\tx\n";
    sim_vfig_list l;
    char err[2048];
    assert_int_equal(sim_validate_parse("m.tsv", text, &l, err, sizeof err), 2);
    HAS(err, "m.tsv:3: value '-1'");
    HAS(err, "m.tsv:5: gpu 'h999'");
    assert_int_equal(l.n, 0);
}

static void parse_bad_header(void **state)
{
    (void)state;
    sim_vfig_list l;
    char err[1024];
    const char *renamed = "gpu\tdtype\tloop\tpasses\tcausal\tbatch\theads\tN\td\tmetric\tvalue\t"
                          "flops\tfit\tsource\n" GOOD1;
    assert_int_equal(sim_validate_parse("h.tsv", renamed, &l, err, sizeof err), 1);
    HAS(err, "h.tsv:1: header: column 3 is 'loop', where 'algo' is needed");
    assert_int_equal(sim_validate_parse("h.tsv", GOOD1, &l, err, sizeof err), 1);
    HAS(err, "h.tsv:1: header: column 1 is 'a100'");
    assert_int_equal(sim_validate_parse("e.tsv", "# nothing\n", &l, err, sizeof err), 1);
    HAS(err, "e.tsv:1: no header line");
    /* A header alone is a file of no figures: parsed, empty. */
    assert_int_equal(sim_validate_parse("o.tsv", HEADER, &l, err, sizeof err), 0);
    assert_int_equal(l.n, 0);
}

/* ---- the FLOP convention and the errors ------------------------------------ */

static void flops_convention(void **state)
{
    (void)state;
    sim_vfig f;
    memset(&f, 0, sizeof f);
    f.batch = 16, f.heads = 32, f.N = 1024, f.d = 64, f.fwd = 1;
    /* FlashAttention-2 section 4.1: 4 B N^2 d H forward. */
    const double fwd = 4.0 * 16 * 1024.0 * 1024.0 * 64 * 32;   /* 137,438,953,472 */
    assert_true(fwd == 137438953472.0);
    assert_true(sim_validate_flops(&f) == fwd);
    f.bwd = 1;
    assert_true(sim_validate_flops(&f) == fwd * 3.5);          /* + 2.5 x forward */
    f.fwd = 0;
    assert_true(sim_validate_flops(&f) == fwd * 2.5);
    f.fwd = 1, f.causal = 1;
    assert_true(sim_validate_flops(&f) == fwd * 3.5 / 2);      /* halved */
}

static void error_arithmetic(void **state)
{
    (void)state;
    assert_true(fabs(sim_validate_error(120, 100) - 0.20) < 1e-15);
    assert_true(fabs(sim_validate_error(75, 100) + 0.25) < 1e-15);
    assert_true(sim_validate_factor(150, 100) == 1.5);
    assert_true(sim_validate_factor(100, 150) == 1.5);   /* symmetric */
    assert_true(sim_validate_factor(7, 7) == 1.0);

    /* Four predicted rows, two fitted: factors 1.1 and 1.44 (fit), 2.0 and
     * 0.5 -> 2.0 (not fit); one not modelled, one failed. */
    sim_vfig f[6];
    sim_vrow r[6];
    memset(f, 0, sizeof f);
    memset(r, 0, sizeof r);
    const double meas[6] = { 100, 100, 10, 10, 5, 5 };
    const double pred[6] = { 110, 100 / 1.44, 20, 5, 0, 0 };
    const int fit[6] = { 1, 1, 0, 0, 0, 0 };
    for (int k = 0; k < 6; k++) {
        f[k].value = meas[k];
        f[k].fit = fit[k];
        f[k].line = 10 + k;
        r[k].pred = pred[k];
    }
    r[4].status = SIM_VROW_NOT_MODELLED;
    r[5].status = SIM_VROW_FAILED;
    sim_vfig_list l = { f, 6 };
    const sim_vsummary s = sim_validate_summarise(&l, r);
    assert_int_equal(s.fit.n, 2);
    assert_int_equal(s.other.n, 2);
    assert_true(fabs(s.fit.geomean_error - (sqrt(1.1 * 1.44) - 1.0)) < 1e-12);
    assert_true(fabs(s.other.geomean_error - 1.0) < 1e-12);    /* sqrt(2 x 2) - 1 */
    assert_int_equal(s.not_modelled, 1);
    assert_int_equal(s.failed, 1);
    /* Off: |error| over 40%: +100% and -50%, not +10% or -30.6%. */
    assert_int_equal(s.off, 2);
    assert_false(r[0].off);
    assert_false(r[1].off);
    assert_true(r[2].off && r[3].off);
    assert_true(fabs(r[3].error + 0.5) < 1e-15);

    /* The edge: exactly 40% is not off, a little more is. */
    r[0].pred = 140, r[1].pred = 100 * 1.4000001;
    r[0].status = r[1].status = SIM_VROW_OK;
    sim_vfig_list two = { f, 2 };
    const sim_vsummary e = sim_validate_summarise(&two, r);
    assert_int_equal(e.off, 1);
    assert_false(r[0].off);
    assert_true(r[1].off);
}

/* A prediction known to be wrong (three times the figure) is flagged in the
 * table and counted; the right one beside it is not. */
static void table_flags_wrong(void **state)
{
    (void)state;
    sim_vfig_list l;
    char err[1024];
    assert_int_equal(sim_validate_parse("w.tsv", HEADER GOOD1 GOOD2 GOOD3, &l, err, sizeof err),
                     0);
    sim_vrow r[3];
    memset(r, 0, sizeof r);
    r[0].pred = 153.0 * 1.05;            /* +5.0% */
    r[1].pred = 3.5 * 3.0;               /* +200%: wrong */
    r[2].status = SIM_VROW_NOT_MODELLED;
    const sim_vsummary s = sim_validate_summarise(&l, r);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    sim_validate_print(out, "w.tsv", &l, r, &s);
    fclose(out);
    /* Row of line 3 (GOOD2): measured 3.5, predicted 10.5, +200%, flagged. */
    HAS(buf, "   3 h100-pcie unfused fwd     c 4x16   8192 128 ms      3.5   10.5 +200.0% !\n");
    /* a fitted row is marked f */
    HAS(buf, "   2 a100      fa2     fwd+bwd - 16x32  1024  64 TF/s    153  160.7  +5.0% f\n");
    HAS(buf, "   4 a100      fa3     fwd     - 4x16   8448 128 GB      4.4      -    n/m\n");
    HAS(buf, "off by more than 40%: 1 row (line 3)");
    HAS(buf, "  fitted rows (fit = 1):   1, geometric mean |error| 5.0%\n");
    HAS(buf, "  other rows (fit = 0):    1, geometric mean |error| 200.0%\n");
    HAS(buf, "not modelled: 1 row");
    for (char *p = buf; *p; ) {                 /* 80 columns */
        size_t n = strcspn(p, "\n");
        if (n > 80)
            fail_msg("line over 80 columns: %.*s", (int)n, p);
        p += n + (p[n] == '\n');
    }
    free(buf);

    buf = NULL;
    out = open_memstream(&buf, &len);
    sim_validate_json(out, "w.tsv", &l, r, &s);
    fclose(out);
    assert_true(su_json_valid(buf));
    HAS(buf, "\"line\":3,");
    HAS(buf, "\"off\":true");
    HAS(buf, "\"status\":\"not_modelled\",\"predicted\":null");
    HAS(buf, "\"summary\":{\"fit\":{\"rows\":1,\"geomean_error\":0.05");
    HAS(buf, "\"off\":1,\"not_modelled\":1,\"failed\":0}");
    free(buf);
    sim_vfig_list_free(&l);
}

/* The shipped file parses, and its rows hold what they say: FA2 paper
 * Figure 4's batch 16384 / N and hidden dimension 2048. */
static void shipped_file(void **state)
{
    (void)state;
    char *text = su_slurp(g_figures);
    assert_non_null(text);
    sim_vfig_list l;
    char err[4096];
    if (sim_validate_parse(g_figures, text, &l, err, sizeof err) != 0)
        fail_msg("%s", err);
    free(text);
    assert_true(l.n >= 60);
    int fig4 = 0, fa3 = 0, fits = 0;
    for (int k = 0; k < l.n; k++) {
        const sim_vfig *f = &l.items[k];
        if (strstr(f->source, "FlashAttention-2 (Dao 2023), Figure 4")) {
            fig4++;
            assert_int_equal(f->batch * f->N, 16384);
            assert_int_equal(f->heads * f->d, 2048);
            assert_true(f->fwd && f->bwd);
        }
        fa3 += !strncmp(f->algo_name, "fa3", 3);
        assert_true(f->modelled);               /* every shipped row runs */
        /* Table 2's ablation rows carry their switch */
        assert_int_equal(f->no_pipeline, !strcmp(f->algo_name, "fa3/np"));
        assert_int_equal(f->no_warp_spec, !strcmp(f->algo_name, "fa3/nw"));
        /* the rows that fitted the constants, as sim_gpu_model.c names
         * them: the tensor-core efficiency on FA2, not causal, d = 128,
         * N >= 4k; FA1's phase latency on FA1, not causal, d = 64, every N */
        if (f->fit) {
            fits++;
            if (f->algo == SIM_FA2) {
                assert_true(f->N >= 4096 && f->d == 128 && !f->causal);
                assert_non_null(strstr(f->source, "Figure 4, FlashAttention-2, without"));
            } else if (f->algo == SIM_FA1) {
                assert_true(f->d == 64 && !f->causal);
                assert_non_null(strstr(f->source, "Figure 4, FlashAttention, without"));
            } else {    /* the framework's DRAM rate on PyTorch, d = 64 */
                assert_int_equal(f->unfused_ops, SIM_UF_FA2BENCH);
                assert_true(f->d == 64 && !f->causal);
                assert_non_null(strstr(f->source, "Figure 4, PyTorch, without"));
            }
        }
    }
    assert_int_equal(fig4, 58);         /* 4 x 12 FA1 and FA2, 2 x 5 PyTorch */
    assert_int_equal(fa3, 12);          /* Table 2's 3 x 2, Figure 7's 6 */
    assert_int_equal(fits, 3 + 6 + 5);   /* tensor_eff, phase_cycles, framework_dram_eff */
    sim_vfig_list_free(&l);
}

/* ---- the command ----------------------------------------------------------- */

/* Run `fasim validate FILE [extra]` on text written to FILE, a file of
 * the test's temporary folder named name. */
static su_run validate_text(const char *name, const char *text, const char *extra)
{
    char path[512], args[1024];
    tu_path(path, sizeof path, name);
    assert_int_equal(tu_write_file(path, text, strlen(text)), 0);
    snprintf(args, sizeof args, "validate %s%s", path, extra);
    return su_fasim(g_fasim, args);
}

static void command_exit_codes(void **state)
{
    (void)state;
    su_run r = su_fasim(g_fasim, "validate --help");
    assert_int_equal(r.code, 0);
    HAS(r.out, "usage: fasim validate [FILE] [--json]");
    su_free(&r);

    r = su_fasim(g_fasim, "validate --bogus");
    assert_int_equal(r.code, 2);
    HAS(r.err, "unknown option '--bogus'");
    su_free(&r);

    r = su_fasim(g_fasim, "validate a.tsv b.tsv");
    assert_int_equal(r.code, 2);
    HAS(r.err, "validate takes one FILE");
    su_free(&r);

    r = su_fasim(g_fasim, "validate --json --json");
    assert_int_equal(r.code, 2);
    su_free(&r);

    r = su_fasim(g_fasim, "validate /nonexistent/figures.tsv");
    assert_int_equal(r.code, 1);
    HAS(r.err, "cannot open");
    su_free(&r);

    r = validate_text("bad.tsv", HEADER "a100\tfp16\tfa2\tfwd\t0\t1\t1\t64\t64\tms\t1\t-\t0\t\n",
                      "");
    assert_int_equal(r.code, 2);
    HAS(r.err, "bad.tsv:2: source: empty");
    assert_string_equal(r.out, "");
    su_free(&r);

    r = validate_text("empty.tsv", "# none\n" HEADER, "");
    assert_int_equal(r.code, 2);
    HAS(r.err, "no figures in the file");
    su_free(&r);

    /* Over the 4 MiB limit: refused before it is parsed. */
    const size_t big = (4u << 20) + 1;
    char *text = malloc(big + 1);
    assert_non_null(text);
    memset(text, '#', big);
    text[big] = '\0';
    r = validate_text("big.tsv", text, "");
    free(text);
    assert_int_equal(r.code, 1);
    HAS(r.err, "larger than 4194304 bytes; a figures file is a few hundred rows");
    su_free(&r);

    /* Rows of a loop order not modelled only: every row accounted, exit 0. */
    r = validate_text("fa3.tsv", HEADER GOOD3, "");
    assert_int_equal(r.code, 0);
    HAS(r.out, "n/m");
    HAS(r.out, "not modelled: 1 row");
    su_free(&r);
}

/* Rows the model runs: a prediction per row, exit 0. (The shipped file's
 * 74 rows take seconds, a minute on a loaded machine: shipped_file parses
 * it, scripts/validate.sh runs it.) */
static void command_predicts(void **state)
{
    (void)state;
    su_run r = validate_text("one.tsv", HEADER GOOD1 GOOD2, " --json");
    if (r.code != 0)
        fail_msg("exit %d: %s", r.code, r.err);
    assert_true(su_json_valid(r.out));
    HAS(r.out, "\"status\":\"predicted\"");
    assert_null(strstr(r.out, "\"predicted\":null"));
    su_free(&r);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_validate FASIM FIGURES.tsv\n");
        return 2;
    }
    g_fasim = argv[1];
    g_figures = argv[2];
    if (sim_fa3_register() < 0)         /* the figures name fa3, as fasim registers it */
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_good),
        cmocka_unit_test(parse_bad_rows),
        cmocka_unit_test(parse_many_bad),
        cmocka_unit_test(parse_bad_header),
        cmocka_unit_test(flops_convention),
        cmocka_unit_test(error_arithmetic),
        cmocka_unit_test(table_flags_wrong),
        cmocka_unit_test(shipped_file),
        cmocka_unit_test(command_exit_codes),
        cmocka_unit_test(command_predicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
