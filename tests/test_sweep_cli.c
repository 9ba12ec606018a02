/*
 * test_sweep_cli.c — `fasim sweep`, `fasim claims` and `--gpu`, end to end.
 *
 * argv[1] is the fasim binary. Each case runs it (sweep_util.h: fork/execv,
 * output captured, a timeout) and checks the exit status, stdout and stderr:
 * the text, JSON (strict syntax) and CSV outputs; every kind of bad input
 * (exit 2, one line on stderr naming the problem, nothing on stdout); the
 * plot's data and script without gnuplot (FASIM_GNUPLOT="" hides it), with a
 * gnuplot that fails (/bin/false), and, where gnuplot is installed, the
 * rendered image; the preset table and the report's roofline; the built-in
 * claims and a claims file, good and malformed.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sweep_util.h"
#include "test_util.h"

static const char *g_fasim;

#define HAS(s, sub) do { if (!strstr((s), (sub))) \
    fail_msg("expected '%s' in:\n%s", (sub), (s)); } while (0)

static su_run ok(const char *args)
{
    su_run r = su_fasim(g_fasim, args);
    if (r.code != 0)
        fail_msg("fasim %s: exit %d\nstderr: %s", args, r.code, r.err);
    return r;
}

/* ---- sweep ---------------------------------------------------------------- */

static void sweep_text(void **state)
{
    (void)state;
    su_run r = ok("sweep --vary N=256..65536 --d 64 --M 96K");
    HAS(r.out, "sweep  N = 256 .. 65,536 (x2, 9 values)");
    HAS(r.out, "count-only: the simulator ran every configuration (9)");
    HAS(r.out, "fa2/naive");
    HAS(r.out, "EXPONENT of HBM bytes in N");
    HAS(r.out, "Theta(N^2d^2/M)");
    HAS(r.out, "lower bound");
    HAS(r.out, "7/9");                         /* two points out of regime */
    HAS(r.out, "M>Nd");
    assert_string_equal(r.err, "");            /* no progress bar: not a terminal */
    /* 80 columns */
    for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n"))
        if (strlen(line) > 80)
            fail_msg("line over 80 columns: '%s'", line);
    su_free(&r);

    r = ok("sweep --vary M=16K..256K --N 16384 --d 128 --algo fa2");
    HAS(r.out, "EXPONENT of HBM bytes in M");
    assert_null(strstr(r.out, "naive"));
    su_free(&r);

    r = ok("sweep --vary d=32..128+32 --N 4096 --algo fa1,fa2 --engine closed-form");
    HAS(r.out, "d = 32 .. 128 (+32, 4 values)");
    HAS(r.out, "closed forms: exact counts");
    su_free(&r);

    r = ok("sweep --vary N=1K,4K,16K --vary M=64K,128K --engine sim --causal");
    HAS(r.out, "EXPONENT of HBM bytes in N");
    HAS(r.out, "EXPONENT of HBM bytes in M");
    HAS(r.out, "joint");
    su_free(&r);

    /* N up to 1M: closed forms chosen automatically, and said so */
    r = ok("sweep --vary N=256K..1M");
    HAS(r.out, "note: closed forms: simulating would take");
    su_free(&r);
}

static void sweep_json_csv(void **state)
{
    (void)state;
    su_run r = ok("sweep --vary N=512..8192 --gpu a100 --json");
    if (!su_json_valid(r.out))
        fail_msg("not JSON: %s", r.out);
    HAS(r.out, "\"sweep\":{\"vary\":[{\"param\":\"N\",\"values\":[512,1024,2048,4096,8192]}]");
    HAS(r.out, "\"M_bytes\":166912");           /* --gpu a100 sets M */
    HAS(r.out, "\"engine\":\"sim\"");
    HAS(r.out, "\"roofline\":{\"flops\":");
    HAS(r.out, "\"subject\":\"fa2\",\"param\":\"N\",\"status\":\"ok\",\"exponent\":");
    HAS(r.out, "\"subject\":\"lower_bound\"");
    su_free(&r);

    r = ok("sweep --vary M=16K..1M --N 1024 --json");
    assert_true(su_json_valid(r.out));
    HAS(r.out, "\"status\":\"ok\"");
    HAS(r.out, "\"capped\":true");
    su_free(&r);
    r = ok("sweep --vary M=256K..1M --N 1024 --json");
    HAS(r.out, "\"status\":\"out of regime\",\"exponent\":null");
    su_free(&r);

    /* A block sweep: the blocks that do not fit M are marked, not dropped. */
    r = ok("sweep --vary Bc=16..512 --Br 32 --N 1000 --algo fa1");
    HAS(r.out, "blocks: B_c as varied, B_r = 32");
    HAS(r.out, "over M: fa1 with B_r x B_c = 32 x 512 needs");
    HAS(r.out, "Figure 2");
    su_free(&r);
    r = ok("sweep --vary Bc=16..512 --Br 32 --N 1000 --algo fa1 --json");
    HAS(r.out, "\"fits\":false");
    HAS(r.out, "\"fits\":true");
    su_free(&r);

    r = ok("sweep --vary M=16K..256K --N 16384 --d 128 --csv");
    assert_int_equal(su_count_lines(r.out), 1 + 5);
    HAS(r.out, "N,d,M_bytes,M_elems,dtype,causal,in_regime,naive_Br,");
    HAS(r.out, "\n16384,128,16384,8192,fp16,0,1,");
    su_free(&r);
}

static void sweep_bad_input(void **state)
{
    (void)state;
    static const struct { const char *args, *msg; } BAD[] = {
        { "sweep", "sweep needs --vary" },
        { "sweep --vary N", "expected P=LO..HI" },
        { "sweep --vary N=", "no values after '='" },
        { "sweep --vary N=256..", "a range needs both ends" },
        { "sweep --vary X=1..4", "unknown parameter 'X' (N, d, M, Br or Bc)" },
        { "sweep --vary Bc=16..64 --Bc 32", "--Bc is fixed but also varied" },
        { "sweep --vary Br=16..64 --plan paper", "drop --vary Br or the --plan" },
        { "sweep --vary Bc=0..64", "--vary Bc" },
        { "sweep --vary N=1000..10", "empty range" },
        { "sweep --vary N=1..4*1", "step *1 never reaches the end" },
        { "sweep --vary N=1..64/2", "unknown suffix" },
        { "sweep --vary N=abc..4", "not a number" },
        { "sweep --vary M=16KB..64K", "ambiguous" },
        { "sweep --vary N=1..4 --vary N=8..16", "N is already varied" },
        { "sweep --vary N=1..4 --N 5", "--N is fixed but also varied" },
        { "sweep --vary N=1..4 --json --csv", "choose one output format" },
        { "sweep --vary N=1..4 --plot x.jpg", "must end in .svg or .png" },
        { "sweep --vary N=1K..4K --vary M=32K..64K --plot x.svg", "one varied parameter" },
        { "sweep --vary N=1..4 --engine fast", "unknown engine" },
        { "sweep --vary N=1..4 --frobnicate", "unknown option '--frobnicate'" },
        { "sweep --vary N=1..4 --gpu v100", "unknown preset" },
        { "sweep --vary M=64..128", "too small for any" },
        { "sweep --vary N=64K..64K --engine sim --max-steps 10", "--engine closed-form" },
    };
    for (size_t k = 0; k < sizeof BAD / sizeof BAD[0]; k++) {
        su_run r = su_fasim(g_fasim, BAD[k].args);
        if (r.code != 2 || !strstr(r.err, BAD[k].msg) || r.out[0])
            fail_msg("fasim %s: exit %d (want 2), stderr '%s' (want '%s'), stdout '%.80s'",
                     BAD[k].args, r.code, r.err, BAD[k].msg, r.out);
        assert_true(!strncmp(r.err, "fasim: ", 7));
        su_free(&r);
    }
}

static int file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (int)st.st_size : -1;
}

static void sweep_plot(void **state)
{
    (void)state;
    char img[512], dat[512], gp[512], args[1024];
    tu_path(img, sizeof img, "io.svg");
    tu_path(dat, sizeof dat, "io.dat");
    tu_path(gp, sizeof gp, "io.gp");
    snprintf(args, sizeof args, "sweep --vary N=1K..16K --plot %s", img);

    /* Without gnuplot: data and script, and how to render them; but the
     * picture asked for is not there, so it is a failure (exit 1), not a
     * note under a success. */
    su_run r = su_fasim_env(g_fasim, args, "FASIM_GNUPLOT", "");
    if (r.code != 1)
        fail_msg("exit %d, not 1: %s", r.code, r.err);
    HAS(r.err, "gnuplot is not installed, so no picture was drawn");
    HAS(r.err, "gnuplot io.gp");
    HAS(r.err, "apt-get install gnuplot-nox");
    HAS(r.out, "EXPONENT");                    /* the table still goes to stdout */
    assert_true(file_size(dat) > 0);
    assert_true(file_size(gp) > 0);
    assert_int_equal(file_size(img), -1);
    char *g = su_slurp(gp);
    HAS(g, "set output 'io.svg'");
    HAS(g, "plot \\");
    /* Lines rise with N: the key sits top left, above a band of headroom
     * that no line enters (it used to cover the naive curve and its guide). */
    HAS(g, "set key top left");
    HAS(g, "set offsets 0, 0, graph 0.45, 0");
    free(g);
    su_free(&r);

    /* A gnuplot that fails: exit 1, and the files are still there. */
    r = su_fasim_env(g_fasim, args, "FASIM_GNUPLOT", "/bin/false");
    assert_int_equal(r.code, 1);
    HAS(r.err, "failed");
    assert_true(file_size(gp) > 0);
    su_free(&r);

    /* The real one, where installed (CI installs gnuplot-nox). */
    const char *cands[] = { "/usr/bin/gnuplot", "/usr/local/bin/gnuplot" };
    const char *gnuplot = NULL;
    for (int k = 0; k < 2; k++)
        if (access(cands[k], X_OK) == 0)
            gnuplot = cands[k];
    if (!gnuplot) {
        fprintf(stderr, "  (gnuplot not installed: rendering not tested)\n");
        return;
    }
    for (int png = 0; png < 2; png++) {
        tu_path(img, sizeof img, png ? "io.png" : "io.svg");
        snprintf(args, sizeof args, "sweep --vary M=32K..256K --N 8192 --plot %s", img);
        r = su_fasim_env(g_fasim, args, "FASIM_GNUPLOT", gnuplot);
        if (r.code != 0)
            fail_msg("gnuplot rendering: exit %d: %s", r.code, r.err);
        HAS(r.err, "fasim: wrote");
        char *im = su_slurp(img);
        assert_non_null(im);
        if (png)
            assert_memory_equal(im, "\x89PNG", 4);
        else
            HAS(im, "<svg");
        free(im);
        su_free(&r);
    }
}

/* ---- presets and the report's roofline -------------------------------------------- */

static void gpu_presets(void **state)
{
    (void)state;
    su_run r = ok("--gpu list");
    HAS(r.out, "a100");
    HAS(r.out, "166,912 B");
    HAS(r.out, "232,448 B");
    HAS(r.out, "h200");
    HAS(r.out, "4.800");
    /* H100 PCIe: 114 SMs, 2 TB/s, 1,513 TFLOPS fp16 with sparsity (half
     * dense), 51 fp32; a name of 9 characters keeps the columns. */
    HAS(r.out, "\nh100-pcie  114    232,448 B    233,472 B      2.000       756.5       51.0\n");
    HAS(r.out, "\na100       108    166,912 B");
    for (const char *p = r.out; *p; ) {
        const size_t n = strcspn(p, "\n");
        if (n > 80)
            fail_msg("--gpu list: a line over 80 columns: %.*s", (int)n, p);
        p += n + (p[n] == '\n');
    }
    su_free(&r);
    r = ok("sweep --gpu list");
    HAS(r.out, "h100");
    su_free(&r);

    r = su_fasim(g_fasim, "--gpu v100");
    assert_int_equal(r.code, 2);
    HAS(r.err, "unknown preset");
    su_free(&r);

    r = ok("--N 2048 --gpu a100 --count-only");
    HAS(r.out, "M = 163 KiB (166,912 B)");
    HAS(r.out, "  matmul FLOPs ");
    HAS(r.out, "  non-matmul FLOPs ");
    HAS(r.out, "shown, not charged");
    HAS(r.out, "non-matmul FLOPs: fa2 does ");     /* the same tiles, by default */
    HAS(r.out, " fewer than fa1 (");
    su_free(&r);
    r = ok("--N 2048 --gpu a100 --count-only --plan best");   /* each its own plan */
    HAS(r.out, "non-matmul FLOPs, fa2 against fa1: ");
    HAS(r.out, " fewer (");
    HAS(r.out, "ROOFLINE on NVIDIA A100 SXM4 80GB: HBM 2,039 GB/s");
    HAS(r.out, "binds");
    HAS(r.out, "memory");
    su_free(&r);

    /* --M wins over the preset's M; JSON has a roofline object per run */
    r = ok("--N 2048 --gpu h100 --M 96K --count-only --json");
    assert_true(su_json_valid(r.out));
    HAS(r.out, "\"M_bytes\":98304");
    HAS(r.out, "\"gpu\":\"h100\"");
    HAS(r.out, "\"roofline\":{\"flops\":");
    HAS(r.out, "\"bound\":\"");
    su_free(&r);

    /* the backward's matmul FLOPs, N = 256, d = 64: four products of
     * 2 N^2 d for standard attention, five for FA1 and FA2 (S recomputed);
     * each run also gives its FLOPs, matmul and not, without --gpu */
    r = ok("--N 256 --d 64 --pass bwd --gpu a100 --count-only --json");
    assert_true(su_json_valid(r.out));
    const char *naive = strstr(r.out, "\"algo\":\"naive\"");
    const char *fa1 = strstr(r.out, "\"algo\":\"fa1\"");
    assert_non_null(naive);
    assert_non_null(fa1);
    assert_non_null(strstr(naive, "\"roofline\":{\"flops\":33554432,"));
    assert_true(strstr(naive, "\"roofline\":{\"flops\":33554432,") < fa1);
    assert_non_null(strstr(fa1, "\"roofline\":{\"flops\":41943040,"));
    assert_non_null(strstr(r.out, "\"nonmatmul_s\":"));
    su_free(&r);
    r = ok("--N 256 --d 64 --pass bwd --algo fa2 --count-only --json");
    HAS(r.out, "\"flops\":{\"matmul\":41943040,\"nonmatmul\":");
    su_free(&r);

    /* without --gpu: no roofline */
    r = ok("--N 512 --count-only --json");
    assert_null(strstr(r.out, "roofline"));
    HAS(r.out, "\"gpu\":null");
    su_free(&r);
}

/* ---- claims -------------------------------------------------------------------------- */

static void claims_builtin(void **state)
{
    (void)state;
    su_run r = ok("claims --engine closed-form");
    HAS(r.out, " 1. S = QK^T at N = 128K (128,000), fp16, takes 31.25 GB");
    HAS(r.out, "32.77 GB = 30.52 GiB");
    HAS(r.out, "verdict:  WRONG");
    HAS(r.out, "verdict:  HOLDS ONLY IF");
    HAS(r.out, "verdict:  HOLDS:");
    /* the GPU model's speed, labelled as a model's */
    HAS(r.out, "modelled: the GPU model's times, not measurements: naive");
    HAS(r.out, "16 claims:");
    su_free(&r);

    r = ok("claims --json --engine closed-form");
    if (!su_json_valid(r.out))
        fail_msg("not JSON: %s", r.out);
    HAS(r.out, "\"id\":\"loop-order\"");
    HAS(r.out, "\"id\":\"speed-2-4x\",");
    HAS(r.out, "\"verdict\":\"holds_if\"");
    HAS(r.out, "\"summary\":{\"holds\":");
    su_free(&r);

    /* the default engine simulates the small checks */
    r = ok("claims --json");
    HAS(r.out, "\"simulated\":true");
    su_free(&r);
}

static void claims_file(void **state)
{
    (void)state;
    char path[512], args[1024];
    tu_path(path, sizeof path, "my.claims");
    const char *good =
        "# claims of my own\n"
        "fa2/naive hbm_bytes < 0.1 at N=4096 d=128 M=168K\n"
        "\n"
        "S size > 32GB at N=128000   # decimal GB\n"
        "fa2 hbm_bytes ~ 40GiB within 10% at N=128000 d=128 M=168K\n";
    assert_int_equal(tu_write_file(path, good, strlen(good)), 0);
    snprintf(args, sizeof args, "claims %s", path);
    su_run r = ok(args);
    HAS(r.out, "3 claims from");
    HAS(r.out, " 1. fa2/naive hbm_bytes < 0.1 at N=4096 d=128 M=168K");
    HAS(r.out, "my.claims:2");
    HAS(r.out, "verdict:  WRONG");
    HAS(r.out, "my.claims:4");
    HAS(r.out, "3 claims: 2 hold, 1 wrong");
    su_free(&r);
    snprintf(args, sizeof args, "claims %s --json", path);
    r = ok(args);
    assert_true(su_json_valid(r.out));
    HAS(r.out, "\"id\":\"line-2\"");
    su_free(&r);

    /* malformed lines: exit 2, FILE:LINE:COL, the line and a caret */
    const char *bad = "fa2 hbm_bytes < 1\n"
                      "fa2/naive hbm_bytes < 0.1 at N=4096 d=128 M=168KB\n"
                      "fa2 hbm_bytes <\n";
    assert_int_equal(tu_write_file(path, bad, strlen(bad)), 0);
    snprintf(args, sizeof args, "claims %s", path);
    r = su_fasim(g_fasim, args);
    assert_int_equal(r.code, 2);
    assert_string_equal(r.out, "");
    HAS(r.err, "my.claims:2:48: M=168KB: 'KB' is ambiguous");
    HAS(r.err, "\n    fa2/naive hbm_bytes < 0.1 at N=4096 d=128 M=168KB\n");
    HAS(r.err, "my.claims:3:16: missing the value");
    su_free(&r);

    /* a configuration no plan fits: exit 2 with the line */
    const char *nofit = "fa2 hbm_bytes < 1 at M=64\n";
    assert_int_equal(tu_write_file(path, nofit, strlen(nofit)), 0);
    r = su_fasim(g_fasim, args);
    assert_int_equal(r.code, 2);
    HAS(r.err, "my.claims:1: M = 64 B is too small");
    su_free(&r);

    /* an empty file, a missing file, two files, a bad option */
    assert_int_equal(tu_write_file(path, "# nothing\n", 10), 0);
    r = su_fasim(g_fasim, args);
    assert_int_equal(r.code, 2);
    HAS(r.err, "no claims in the file");
    su_free(&r);
    r = su_fasim(g_fasim, "claims /nonexistent/x.claims");
    assert_int_equal(r.code, 1);
    HAS(r.err, "cannot open");
    su_free(&r);
    r = su_fasim(g_fasim, "claims a b");
    assert_int_equal(r.code, 2);
    su_free(&r);
    r = su_fasim(g_fasim, "claims --verbose");
    assert_int_equal(r.code, 2);
    su_free(&r);
    r = ok("claims --help");
    HAS(r.out, "fa2/naive hbm_bytes < 0.1 at N=4096 d=128 M=168K");
    su_free(&r);
    r = ok("sweep --help");
    HAS(r.out, "--vary P=LO..HI");
    su_free(&r);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_sweep_cli FASIM\n");
        return 2;
    }
    g_fasim = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sweep_text),
        cmocka_unit_test(sweep_json_csv),
        cmocka_unit_test(sweep_bad_input),
        cmocka_unit_test(sweep_plot),
        cmocka_unit_test(gpu_presets),
        cmocka_unit_test(claims_builtin),
        cmocka_unit_test(claims_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
