/*
 * test_claims.c — the claims engine through the library: every built-in
 * claim checks (and its verdict is the one docs/sources.md expects), changing
 * one input flips a verdict, the two engines agree, and the claims-file
 * parser accepts the documented format and rejects malformed lines with the
 * line and column of the problem.
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

#include "gm_util.h"
#include "sim_claims.h"

static const sim_builtin_claim *find(const char *id)
{
    int n;
    const sim_builtin_claim *b = sim_builtin_claims(&n);
    for (int k = 0; k < n; k++)
        if (!strcmp(b[k].id, id))
            return &b[k];
    fail_msg("no built-in claim %s", id);
    return NULL;
}

static sim_claim_outcome check(const sim_builtin_claim *c, sim_engine e)
{
    sim_claim_outcome o;
    char err[1024];
    int rc = sim_builtin_check(c, e, &o, err, sizeof err);
    if (rc != SIM_OK)
        fail_msg("%s: %s", c->id, err);
    assert_true(o.config[0] && o.measured[0] && o.why[0]);
    return o;
}

/* The verdicts on the errors of docs/ARCHITECTURE.md, computed now. */
static void builtin_verdicts(void **state)
{
    (void)state;
    static const struct { const char *id; sim_verdict v; } WANT[] = {
        { "s-size-000", SIM_VERDICT_WRONG },       { "s-size-001", SIM_VERDICT_HOLDS_IF },
        { "io-std-n2d", SIM_VERDICT_WRONG },       { "io-std-form", SIM_VERDICT_WRONG },
        { "io-flash", SIM_VERDICT_HOLDS },         { "d2-over-m", SIM_VERDICT_WRONG },
        { "a100-sram-192", SIM_VERDICT_HOLDS_IF }, { "a100-m-168", SIM_VERDICT_WRONG },
        { "a100-smem-bw", SIM_VERDICT_WRONG },     { "sram-20mb", SIM_VERDICT_HOLDS },
        { "sram-sum-96k", SIM_VERDICT_WRONG },     { "loop-order", SIM_VERDICT_WRONG },
        { "warps", SIM_VERDICT_WRONG },            { "causal-2x", SIM_VERDICT_HOLDS_IF },
        { "memory-n2-to-n", SIM_VERDICT_HOLDS },   { "speed-2-4x", SIM_VERDICT_HOLDS_IF },
    };
    int n;
    sim_builtin_claims(&n);
    assert_int_equal(n, (int)(sizeof WANT / sizeof WANT[0]));
    for (size_t k = 0; k < sizeof WANT / sizeof WANT[0]; k++) {
        sim_claim_outcome o = check(find(WANT[k].id), SIM_ENGINE_CLOSED);
        if (o.verdict != WANT[k].v)
            fail_msg("%s: verdict %s, want %s (%s)", WANT[k].id, sim_verdict_name(o.verdict),
                     sim_verdict_name(WANT[k].v), o.why);
    }
    /* The numbers behind a few of them. */
    sim_claim_outcome o = check(find("s-size-000"), SIM_ENGINE_CLOSED);
    assert_non_null(strstr(o.measured, "32,768,000,000 B"));
    assert_non_null(strstr(o.measured, "30.52 GiB"));
    o = check(find("sram-sum-96k"), SIM_ENGINE_CLOSED);
    assert_non_null(strstr(o.measured, "131,072 B"));
    o = check(find("causal-2x"), SIM_ENGINE_CLOSED);
    assert_non_null(strstr(o.measured, "528 of 1,024"));
    assert_non_null(strstr(o.why, "T = N / B >= 9"));
    assert_false(o.modelled);                            /* a count, not a model */
    o = check(find("speed-2-4x"), SIM_ENGINE_CLOSED);
    assert_non_null(strstr(o.measured, "the GPU model's times, not measurements"));
    assert_true(o.modelled);
    assert_non_null(strstr(o.config, "74% of peak"));   /* what it assumed */
    assert_non_null(strstr(o.config, "B = 8 x H = 32 heads, N = 2048, d = 64"));
    assert_non_null(strstr(o.why, "attention alone"));
}

/* The model's time of one pass with the preset's L2, planned here. */
static double model_time(sim_algo a, sim_pass q, const sim_shape *base)
{
    sim_gm_result r;
    char err[1024];
    if (gm_util_pass(a, q, base, sim_gpu_find("a100")->l2_bytes, &r, err, sizeof err) != 0)
        fail_msg("%s", err);
    return r.time_s;
}

/* The speed claims' ratios are the GPU model's times, and the verdict
 * follows the ratio: FA2 against FA1, forward and backward, is the FA2
 * paper's "around 2x". */
static void speed_through_the_model(void **state)
{
    (void)state;
    sim_builtin_claim c = *find("speed-2-4x");
    sim_claim_outcome o = check(&c, SIM_ENGINE_CLOSED);
    const double fwd = model_time(SIM_NAIVE, SIM_FWD, &c.in.sh) /
                       model_time(SIM_FA2, SIM_FWD, &c.in.sh);
    char want[32];
    snprintf(want, sizeof want, ": %.2fx", fwd);
    if (!strstr(o.measured, want))
        fail_msg("measured \"%s\" lacks \"%s\"", o.measured, want);
    c.in.claimed = fwd * 1.2;                   /* a range above the ratio */
    c.in.claimed2 = fwd * 2;
    assert_int_equal(check(&c, SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_WRONG);

    c = *find("speed-2-4x");
    c.in.B = SIM_FA1;
    c.in.count = 1;
    c.in.claimed = 2;
    c.in.claimed2 = 0;
    c.in.tol = 0.25;
    const double both = (model_time(SIM_FA1, SIM_FWD, &c.in.sh) +
                         model_time(SIM_FA1, SIM_BWD, &c.in.sh)) /
                        (model_time(SIM_FA2, SIM_FWD, &c.in.sh) +
                         model_time(SIM_FA2, SIM_BWD, &c.in.sh));
    o = check(&c, SIM_ENGINE_CLOSED);
    snprintf(want, sizeof want, ": %.2fx", both);
    if (!strstr(o.measured, want))
        fail_msg("measured \"%s\" lacks \"%s\"", o.measured, want);
    assert_non_null(strstr(o.config, "forward + backward"));
    assert_int_equal(o.verdict, fabs(both - 2) <= 0.5 ? SIM_VERDICT_HOLDS_IF : SIM_VERDICT_WRONG);
    c.in.claimed = both;
    assert_int_equal(check(&c, SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_HOLDS_IF);
}

/* Changing one input changes the verdict: the verdicts are computed, not
 * stored. */
static void flips(void **state)
{
    (void)state;
    sim_builtin_claim c = *find("s-size-000");
    c.in.claimed = 32.77;                       /* the right number of GB */
    assert_int_equal(check(&c, SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_HOLDS);
    c.in.claimed = 30.52;                       /* right, in GiB */
    assert_int_equal(check(&c, SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_HOLDS);

    c = *find("sram-sum-96k");
    c.in.claimed = 131072;
    assert_int_equal(check(&c, SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_HOLDS);

    c = *find("loop-order");
    c.in.algo = SIM_FA1;                        /* "FA1 is K/V outer": true */
    assert_int_equal(check(&c, SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_HOLDS);

    c = *find("causal-2x");
    c.in.sh.N = 256;                            /* T = 2: 2T/(T+1) = 1.33 */
    sim_claim_outcome o = check(&c, SIM_ENGINE_CLOSED);
    assert_int_equal(o.verdict, SIM_VERDICT_WRONG);
    assert_non_null(strstr(o.why, "1.33x"));

    c = *find("warps");
    c.in.claimed = 32;
    assert_int_equal(check(&c, SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_HOLDS);

    c = *find("d2-over-m");
    c.in.claimed = 5;                           /* about 5x: what fasim measures */
    assert_int_equal(check(&c, SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_HOLDS);

    c = *find("io-std-n2d");
    c.in.expo[SIM_PARAM_D] = 0.25;              /* "about d^0.25": what fasim measures */
    assert_int_equal(check(&c, SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_HOLDS);

    c = *find("io-flash");
    c.in.expo[SIM_PARAM_M] = -2.0;              /* a wrong power of M */
    assert_int_equal(check(&c, SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_WRONG);

    c = *find("a100-m-168");
    c.in.claimed = 164;                         /* the real shared memory per SM */
    assert_int_equal(check(&c, SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_HOLDS);

    c = *find("a100-smem-bw");
    c.in.claimed = 0.18e12;                     /* per SM, right */
    assert_int_equal(check(&c, SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_HOLDS);

    c = *find("memory-n2-to-n");
    c.in.claimed2 = 2;                          /* "FlashAttention's memory is N^2" */
    assert_int_equal(check(&c, SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_WRONG);
}

/* The simulator and the closed forms give the same verdicts (small claims). */
static void engines_agree(void **state)
{
    (void)state;
    const char *ids[] = { "loop-order", "causal-2x", "io-std-n2d", "memory-n2-to-n" };
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
        sim_claim_outcome a = check(find(ids[k]), SIM_ENGINE_SIM);
        sim_claim_outcome b = check(find(ids[k]), SIM_ENGINE_CLOSED);
        assert_true(a.simulated);
        assert_false(b.simulated);
        assert_int_equal(a.verdict, b.verdict);
        assert_string_equal(a.measured, b.measured);
    }
}

/* ---- the claims-file parser ------------------------------------------------- */

static sim_user_claim parse_ok(const char *line)
{
    sim_user_claim c;
    int col;
    char err[512];
    int rc = sim_claim_parse_line(line, &c, &col, err, sizeof err);
    if (rc != 1)
        fail_msg("'%s' did not parse (rc %d, col %d): %s", line, rc, col, err);
    return c;
}

static void parser_accepts(void **state)
{
    (void)state;
    sim_user_claim c = parse_ok("fa2/naive hbm_bytes < 0.1 at N=4096 d=128 M=168K");
    assert_int_equal(c.kind, SIM_QTY_RATIO);
    assert_int_equal(c.algo, SIM_FA2);
    assert_int_equal(c.den, SIM_NAIVE);
    assert_int_equal(c.metric, SIM_MET_HBM_BYTES);
    assert_int_equal(c.cmp, SIM_CMP_LT);
    assert_true(c.value == 0.1);
    assert_int_equal(c.sh.N, 4096);
    assert_int_equal(c.sh.d, 128);
    assert_int_equal(c.sh.M, 168 * 1024);
    assert_int_equal(c.sh.dtype, SIM_FP16);
    assert_int_equal(c.plan_kind, SIM_PLAN_AUTO);

    c = parse_ok("S size > 32GB at N=128000");
    assert_int_equal(c.kind, SIM_QTY_TENSOR);
    assert_int_equal(c.tensor, SIM_S);
    assert_true(c.value == 32e9);
    assert_int_equal(c.sh.N, 128000);
    assert_int_equal(c.sh.d, 64);               /* defaults */
    assert_int_equal(c.sh.M, 96 * 1024);

    c = parse_ok("fa2 hbm_bytes ~ 40GiB within 10% at N=128000, d=128, M=168K");
    assert_int_equal(c.cmp, SIM_CMP_APPROX);
    assert_true(c.value == 40.0 * 1073741824.0);
    assert_true(fabs(c.tol - 0.10) < 1e-12);

    c = parse_ok("fa1 Q.read_elems = 4194304 at N=4096 d=64 M=96K   # Q re-read T_c times");
    assert_int_equal(c.metric, SIM_MET_T_READ_ELEMS);
    assert_int_equal(c.tensor, SIM_Q);
    assert_int_equal(c.cmp, SIM_CMP_EQ);
    assert_string_equal(c.text, "fa1 Q.read_elems = 4194304 at N=4096 d=64 M=96K");

    c = parse_ok("fa2 sram_bytes <= 163K at gpu=a100 d=128 Br=128 Bc=64");
    assert_int_equal(c.metric, SIM_MET_SRAM_BYTES);
    assert_int_equal(c.sh.M, 166912);           /* the preset's M */
    assert_int_equal(c.plan_kind, SIM_PLAN_USER);
    assert_int_equal(c.Br, 128);

    c = parse_ok("naive write_bytes >= 1e6 at causal dtype=bf16 plan=paper M=96KiB N=2K");
    assert_int_equal(c.sh.causal, 1);
    assert_int_equal(c.sh.dtype, SIM_BF16);
    assert_int_equal(c.plan_kind, SIM_PLAN_PAPER);
    assert_int_equal(c.sh.N, 2048);

    c = parse_ok("standard steps == 5 at gpu=h100 M=64K causal=no");
    assert_int_equal(c.algo, SIM_NAIVE);
    assert_int_equal(c.sh.M, 65536);            /* M given: the preset does not override */
    assert_int_equal(c.sh.causal, 0);

    c = parse_ok("fa1/fa2 hbm_elems > 50%");
    assert_true(c.value == 0.5);

    sim_user_claim z;
    int col;
    char err[256];
    assert_int_equal(sim_claim_parse_line("", &z, &col, err, sizeof err), 0);
    assert_int_equal(sim_claim_parse_line("   # only a comment", &z, &col, err, sizeof err), 0);
    assert_int_equal(sim_claim_parse_line(" \t\r", &z, &col, err, sizeof err), 0);
}

static void parser_rejects(void **state)
{
    (void)state;
    static const struct { const char *line; int col; const char *msg; } BAD[] = {
        { "fa3 hbm_bytes < 1", 1, "unknown loop order or tensor 'fa3'" },
        { "fa2/fa9 hbm_bytes < 1", 5, "unknown loop order 'fa9'" },
        { "fa2 hbm_byte < 1", 5, "unknown metric 'hbm_byte'" },
        { "fa2 X.read_elems < 1", 5, "unknown tensor 'X'" },
        { "fa2 Q.reads < 1", 7, "unknown per-tensor metric" },
        { "S bytez < 1", 3, "'size' (bytes) or 'elems'" },
        { "fa2 hbm_bytes<1", 5, "put spaces around" },
        { "fa2 hbm_bytes << 1", 15, "expected a comparison" },
        { "fa2 hbm_bytes < abc", 17, "not a number" },
        { "fa2 hbm_bytes < 10XB", 19, "unknown unit 'XB'" },
        { "fa2 hbm_bytes < 1 N=4096", 19, "unexpected 'N=4096'" },
        { "fa2 hbm_bytes < 1 within 5%", 19, "'within' goes with '~' only" },
        { "fa2 hbm_bytes ~ 1 within 5", 26, "percentage" },
        { "fa2 hbm_bytes ~ 1 within", 25, "missing the tolerance" },
        { "fa2 hbm_bytes < 1 at", 21, "missing the configuration" },
        { "fa2 hbm_bytes < 1 at X=1", 22, "unknown key 'X'" },
        { "fa2 hbm_bytes < 1 at N=12q", 26, "unknown suffix 'q'" },
        { "fa2 hbm_bytes < 1 at M=168KB", 27, "ambiguous" },
        { "fa2 hbm_bytes < 1 at N=1.5", 24, "not a whole number" },
        { "fa2 hbm_bytes < 1 at d=0", 24, "between 1 and" },
        { "fa2 hbm_bytes < 1 at N=1 N=2", 26, "given twice" },
        { "fa2 hbm_bytes < 1 at N=", 24, "needs a value" },
        { "fa2 hbm_bytes < 1 at dtype=fp8", 28, "unknown type" },
        { "fa2 hbm_bytes < 1 at gpu=v100", 26, "unknown preset" },
        { "fa2 hbm_bytes < 1 at plan=paper Br=16", 22, "plan=paper sets B_r" },
        { "fa2 hbm_bytes < 1 at causal=maybe", 29, "causal=yes" },
        { "fa2", 4, "missing the metric" },
        { "fa2 hbm_bytes", 14, "missing the comparison" },
        { "fa2 hbm_bytes <", 16, "missing the value" },
    };
    for (size_t k = 0; k < sizeof BAD / sizeof BAD[0]; k++) {
        sim_user_claim c;
        int col = -1;
        char err[512] = "";
        int rc = sim_claim_parse_line(BAD[k].line, &c, &col, err, sizeof err);
        if (rc != -1 || col != BAD[k].col || !strstr(err, BAD[k].msg))
            fail_msg("'%s': rc %d, col %d (want %d), message '%s' (want '%s')", BAD[k].line, rc,
                     col, BAD[k].col, err, BAD[k].msg);
    }
}

static void parse_file(void **state)
{
    (void)state;
    const char *good = "# my claims\n\nfa2/naive hbm_bytes < 0.5 at N=4096\r\n"
                       "S size = 32768000000 at N=128000\n";
    sim_claim_list l;
    char err[4096];
    assert_int_equal(sim_claims_parse("my.claims", good, &l, err, sizeof err), 0);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.items[0].line, 3);
    assert_int_equal(l.items[1].line, 4);
    sim_claim_list_free(&l);

    const char *bad = "fa2 hbm_bytes < 1\nfa2 hbm_byte < 1\n# fine\nS size > 1 at N=1K Q=2\n";
    assert_int_equal(sim_claims_parse("bad.claims", bad, &l, err, sizeof err), 2);
    assert_int_equal(l.n, 0);
    assert_null(l.items);
    assert_non_null(strstr(err, "bad.claims:2:5: unknown metric 'hbm_byte'"));
    assert_non_null(strstr(err, "\n    fa2 hbm_byte < 1\n        ^"));
    assert_non_null(strstr(err, "bad.claims:4:20: unknown key 'Q'"));
    assert_null(strstr(err, "bad.claims:1:"));
}

/* ---- checking user claims ------------------------------------------------------- */

static sim_claim_outcome user(const char *line, sim_engine e)
{
    sim_user_claim c = parse_ok(line);
    sim_claim_outcome o;
    char err[1024];
    int rc = sim_user_claim_check(&c, e, &o, err, sizeof err);
    if (rc != SIM_OK)
        fail_msg("'%s': %s", line, err);
    return o;
}

static void user_checks(void **state)
{
    (void)state;
    /* FA2 moves about a quarter of naive's bytes here, not a tenth. */
    sim_claim_outcome o = user("fa2/naive hbm_bytes < 0.1 at N=4096 d=128 M=168K",
                               SIM_ENGINE_AUTO);
    assert_int_equal(o.verdict, SIM_VERDICT_WRONG);
    assert_true(o.simulated);
    assert_non_null(strstr(o.why, "< 0.1 is false"));
    assert_int_equal(user("fa2/naive hbm_bytes < 0.5 at N=4096 d=128 M=168K",
                          SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_HOLDS);
    /* 128000^2 x 2 B exactly */
    assert_int_equal(user("S size = 32768000000 at N=128000", SIM_ENGINE_AUTO).verdict,
                     SIM_VERDICT_HOLDS);
    assert_int_equal(user("S size > 32GiB at N=128000", SIM_ENGINE_AUTO).verdict,
                     SIM_VERDICT_WRONG);
    /* Past N = 2^32, N^2 leaves 64 bits: it once wrapped to N^2 - 2^64 (so
     * S at N = 2^32 + 1 "had" 2^33 + 1 elements, and P at N = 8G none). */
    assert_int_equal(user("S elems = 8589934593 at N=4294967297", SIM_ENGINE_CLOSED).verdict,
                     SIM_VERDICT_WRONG);
    assert_int_equal(user("P size < 1K at N=8G", SIM_ENGINE_CLOSED).verdict,
                     SIM_VERDICT_WRONG);
    assert_int_equal(user("S elems = 1208925819614629174706176 at N=1024G",   /* 2^80 */
                          SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_HOLDS);
    /* FA1 reads Q once per key block: T_c N d, with T_c from its plan. */
    sim_shape sh = { .N = 4096, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16, .causal = 0 };
    sim_plan p;
    char err[512];
    assert_int_equal(sim_plan_choose(SIM_FA1, &sh, NULL, SIM_PLAN_AUTO, 0, 0, &p, err,
                                     sizeof err), 0);
    char line[160];
    snprintf(line, sizeof line, "fa1 Q.read_elems = %lld at N=4096 d=64 M=96K",
             (long long)(p.Tc * 4096 * 64));
    assert_int_equal(user(line, SIM_ENGINE_SIM).verdict, SIM_VERDICT_HOLDS);
    snprintf(line, sizeof line, "fa1 Q.read_elems = %lld at N=4096 d=64 M=96K",
             (long long)(p.Tc * 4096 * 64 + 1));
    assert_int_equal(user(line, SIM_ENGINE_SIM).verdict, SIM_VERDICT_WRONG);
    /* ~ within a tolerance */
    o = user("fa2 hbm_bytes ~ 40GiB within 10% at N=128000 d=128 M=168K", SIM_ENGINE_CLOSED);
    assert_int_equal(o.verdict, SIM_VERDICT_HOLDS);
    assert_int_equal(user("fa2 hbm_bytes ~ 40GiB within 1% at N=128000 d=128 M=168K",
                          SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_WRONG);
    /* an SRAM plan's bytes: FA2 128 x 64 at d = 128, fp16 */
    sim_shape s2 = { .N = 1024, .d = 128, .M = 166912, .dtype = SIM_FP16, .causal = 0 };
    assert_int_equal(sim_plan_make(SIM_FA2, &s2, NULL, 128, 64, SIM_PLAN_USER, &p), 0);
    snprintf(line, sizeof line, "fa2 sram_bytes = %llu at gpu=a100 d=128 Br=128 Bc=64",
             (unsigned long long)p.sram_peak);
    assert_int_equal(user(line, SIM_ENGINE_CLOSED).verdict, SIM_VERDICT_HOLDS);

    /* a configuration no plan fits is an error, not a verdict */
    sim_user_claim c = parse_ok("fa2 hbm_bytes < 1 at M=64");
    sim_claim_outcome oo;
    assert_int_equal(sim_user_claim_check(&c, SIM_ENGINE_AUTO, &oo, err, sizeof err),
                     SIM_EUSAGE);
    assert_non_null(strstr(err, "too small"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(builtin_verdicts),
        cmocka_unit_test(speed_through_the_model),
        cmocka_unit_test(flips),
        cmocka_unit_test(engines_agree),
        cmocka_unit_test(parser_accepts),
        cmocka_unit_test(parser_rejects),
        cmocka_unit_test(parse_file),
        cmocka_unit_test(user_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
