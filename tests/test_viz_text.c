/*
 * test_viz_text.c — the plain-text frames of `fasim view`: golden frames of
 * small runs compared byte for byte, the frame format (ASCII, <= 80
 * columns, no terminal codes), the library renderer against the CLI, and
 * the CLI's messages and exit statuses.
 *
 * Usage: test_viz_text <path to fasim> <golden directory>
 * With FASIM_UPDATE_GOLDEN=1 in the environment the golden files are
 * (re)written instead of compared; review the diff before committing.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "test_util.h"
#include "viz_model.h"
#include "viz_text.h"

static const char *g_fasim, *g_golden;

/* ---- helpers -------------------------------------------------------------- */

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
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    for (size_t r; buf && (r = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap) {
            char *b = realloc(buf, 2 * cap + 1);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

/* Run `fasim view ARGS` with stdout and stderr to files (not a terminal). */
static run_result run_view(const char *args)
{
    run_result r;
    memset(&r, 0, sizeof r);
    char out[600], err[600], cmd[2048];
    tu_path(out, sizeof out, "view.out");
    tu_path(err, sizeof err, "view.err");
    snprintf(cmd, sizeof cmd, "'%s' view %s >'%s' 2>'%s' </dev/null", g_fasim, args, out, err);
    int st = system(cmd);
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

/* Every line ASCII-printable, at most 80 columns, no trailing spaces. */
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
            fprintf(stderr, "line %d: byte 0x%02x is not printable ASCII\n", line,
                    (unsigned char)*p);
            fail();
        }
        if (++col > 80) {
            fprintf(stderr, "line %d is over 80 columns\n", line);
            fail();
        }
    }
}

/* 1 when got differs from the golden file `name` (printing where), else 0. */
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
    int differs = wlen != len || memcmp(want, got, len) != 0;
    if (differs) {
        /* Show the first differing line. */
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
        const int wn = (int)strcspn(w, "\n"), gn = (int)strcspn(g, "\n");
        fprintf(stderr, "%s differs from the golden file at line %zu:\n  want: %.*s\n"
                "  got:  %.*s\n(FASIM_UPDATE_GOLDEN=1 rewrites it; review the diff)\n",
                name, line, wn, w, gn, g);
    }
    free(want);
    return differs;
}

static int updating(void)
{
    const char *upd = getenv("FASIM_UPDATE_GOLDEN");
    return upd && upd[0] == '1';
}

/* Compare with (or, under FASIM_UPDATE_GOLDEN, write) a golden file. */
static void golden(const char *name, const char *got, size_t len)
{
    if (updating()) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", g_golden, name);
        assert_int_equal(tu_write_file(path, got, len), 0);
        fprintf(stderr, "wrote %s\n", path);
        return;
    }
    if (golden_differs(name, got, len))
        fail();
}

/* ---- golden frames -------------------------------------------------------- */

static const struct {
    const char *file, *args;
    int status;
} CASES[] = {
    { "view-fa2-n32.txt", "--N 32 --d 8 --M 4K --algo fa2 --frames 5", 0 },
    { "view-fa2-n32-end.txt", "--N 32 --d 8 --M 4K --algo fa2 --step 13 --frames 9", 0 },
    { "view-fa1-n32.txt", "--N 32 --d 8 --M 4K --algo fa1 --step 6 --frames 4", 0 },
    { "view-naive-n32-causal.txt", "--N 32 --d 8 --M 4K --algo naive --causal --step 5 "
                                   "--frames 4", 0 },
    { "view-refused.txt", "--N 32 --d 8 --M 4K --Br 32 --Bc 32", 2 },
    { "view-fa2-bwd.txt", "--N 32 --d 8 --M 4K --algo fa2 --pass bwd --causal --step 9 "
                          "--frames 3", 0 },
    { "view-naive-bwd.txt", "--N 32 --d 8 --M 4K --algo naive --pass bwd --step 4 "
                            "--frames 3", 0 },
    { "view-fa2-split.txt", "--Nq 2 --Nk 96 --d 8 --M 4K --algo fa2 --splits 3 --Bc 16 "
                            "--causal --step 8 --frames 5", 0 },
};

static void test_golden_frames(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        run_result r = run_view(CASES[k].args);
        if (r.status != CASES[k].status)
            fprintf(stderr, "%s: exit %d, stderr: %s\n", CASES[k].args, r.status, r.err);
        assert_int_equal(r.status, CASES[k].status);
        check_format(r.out);
        golden(CASES[k].file, r.out, r.out_len);
        /* Deterministic: the same bytes a second time. */
        run_result again = run_view(CASES[k].args);
        assert_int_equal(again.out_len, r.out_len);
        assert_memory_equal(again.out, r.out, r.out_len);
        run_free(&again);
        run_free(&r);
    }
}

/* The comparison proves itself: one changed digit is caught. */
static void test_golden_detects_change(void **state)
{
    (void)state;
    if (updating())
        skip();
    run_result r = run_view(CASES[0].args);
    assert_int_equal(golden_differs(CASES[0].file, r.out, r.out_len), 0);
    char *p = strstr(r.out, "r 256/512");
    assert_non_null(p);
    p[2] = '3';
    fprintf(stderr, "(a difference is expected here:)\n");
    assert_int_equal(golden_differs(CASES[0].file, r.out, r.out_len), 1);
    assert_int_equal(golden_differs(CASES[0].file, r.out, r.out_len - 1), 1);
    run_free(&r);
}

/* The library's frames are the CLI's, and the frames count and separators
 * are as documented. */
static void test_library_equals_cli(void **state)
{
    (void)state;
    viz_config c;
    viz_config_default(&c);
    c.sh.N = 32;
    c.sh.d = 8;
    c.sh.M = 4096;
    viz_model *m = NULL;
    char err[1024];
    assert_int_equal(viz_model_build(&c, &m, err, sizeof err), VIZ_OK);
    char path[600];
    tu_path(path, sizeof path, "lib.out");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(viz_text_frames(f, m, 0, 5, VIZ_TEXT_W, VIZ_TEXT_H), 0);
    fclose(f);
    size_t len;
    char *lib = slurp(path, &len);
    run_result r = run_view("--N 32 --d 8 --M 4K --frames 5");
    assert_int_equal(r.status, 0);
    assert_int_equal(len, r.out_len);
    assert_memory_equal(lib, r.out, len);
    /* Five frames of 1 + 23 lines. */
    int lines = 0, seps = 0;
    for (const char *p = lib; *p; p++)
        lines += *p == '\n';
    for (const char *p = lib; (p = strstr(p, "---- step ")) != NULL; p++)
        seps++;
    assert_int_equal(seps, 5);
    assert_int_equal(lines, 5 * (1 + VIZ_TEXT_H));
    free(lib);
    run_free(&r);
    viz_model_free(m);
}

/* ---- the CLI's messages ----------------------------------------------------- */

static void test_cli_usage(void **state)
{
    (void)state;
    run_result r = run_view("--help");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "usage: fasim view"));
    assert_non_null(strstr(r.out, "--frames"));
    run_free(&r);

    static const struct {
        const char *args, *msg;
    } BAD[] = {
        { "--N 0", "--N 0: must be at least 1" },
        { "--N", "--N needs a value" },
        { "--algo all", "one loop order" },
        { "--algo fa3", "unknown loop order" },
        { "--frames 0", "--frames 0" },
        { "--step x", "--step x" },
        { "--json", "option of the report" },
        { "--Frames 3", "did you mean '--frames'" },
        { "--compute --count-only", "contradict" },
        { "--q a.npy", "go together" },
        { "--plan paper --Br 16", "--plan paper" },
        { "stray", "unexpected argument" },
        { "--N 64 --step 100000", "the run has" },
        { "--N 4096 --Br 1 --Bc 1 --M 96K", "hint" },
        { "--splits 3 --algo fa1", "--algo fa2" },
        { "--splits 3 --pass bwd", "drop --pass bwd" },
        { "--pass both", "fwd or bwd" },
        { "--pass bwd --screenshot x.png", "terminal view" },
        { "--Nq 64 --Nk 32 --causal", "--Nq must not exceed --Nk" },
    };
    for (size_t k = 0; k < sizeof BAD / sizeof BAD[0]; k++) {
        r = run_view(BAD[k].args);
        if (r.status != 2 || !strstr(r.err, BAD[k].msg))
            fprintf(stderr, "'%s': exit %d, stderr: %s", BAD[k].args, r.status, r.err);
        assert_int_equal(r.status, 2);
        assert_non_null(strstr(r.err, BAD[k].msg));
        assert_int_equal(r.out_len, 0);
        run_free(&r);
    }
    /* .npy that does not exist: exit 1. */
    r = run_view("--q /nonexistent.npy --k /nonexistent.npy --v /nonexistent.npy");
    assert_int_equal(r.status, 1);
    run_free(&r);
}

static void test_cli_refused(void **state)
{
    (void)state;
    run_result r = run_view("--N 64 --M 8K --Br 64 --Bc 64");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "does not fit in M = 8,192 B"));
    assert_non_null(strstr(r.err, "hint"));
    assert_non_null(strstr(r.out, "PLAN REFUSED"));
    assert_non_null(strstr(r.out, "!K_j 8,192 does not fit"));
    run_free(&r);
}

static void test_cli_frames_cap(void **state)
{
    (void)state;
    /* 281 steps: 200 frames and a note on stderr. */
    run_result r = run_view("--N 64 --M 8K");
    assert_int_equal(r.status, 0);
    int seps = 0;
    for (const char *p = r.out; (p = strstr(p, "---- step ")) != NULL; p++)
        seps++;
    assert_int_equal(seps, 200);
    assert_non_null(strstr(r.err, "--frames K prints more"));
    run_free(&r);
    /* --frames past the end stops at the last step, without a note. */
    r = run_view("--N 64 --M 8K --step 270 --frames 100");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "---- step 281 of 281"));
    assert_null(strstr(r.out, "---- step 282"));
    assert_int_equal(r.err[0], '\0');
    check_format(r.out);
    run_free(&r);
    /* --row chooses the output row within each Q block. */
    r = run_view("--N 32 --d 8 --M 4K --row 5 --step 5 --frames 1");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "O row 5 after "));
    run_free(&r);
}

/* Large runs: count-only, the statistics say why, the grid says how many
 * tiles a cell stands for; and the last step's counters are the closed
 * form's (the report's numbers). */
static void test_cli_large(void **state)
{
    (void)state;
    run_result r = run_view("--N 4096 --d 64 --M 96K --Br 16 --Bc 16 --step 263681 --frames 1");
    assert_int_equal(r.status, 0);
    check_format(r.out);
    assert_non_null(strstr(r.out, "step 263,681 of 263,681"));
    assert_non_null(strstr(r.out, "count-only"));
    assert_non_null(strstr(r.out, "STATISTICS  unavailable"));
    assert_non_null(strstr(r.out, "cell <= "));
    /* FA2, B_r = B_c = 16: K read T_r = 256 times, 4096 x 64 x 2 B each:
     * 134,217,728 B (the counters packed below the grids have room for
     * the exact numbers), each K tile 256 times ("9+r"). */
    assert_non_null(strstr(r.out, "K  r 134,217,728/134,217,728"));
    assert_non_null(strstr(r.out, " 9+r "));
    run_free(&r);
    r = run_view("--N 1024 --M 96K --algo naive --frames 1 --step 200");
    assert_int_equal(r.status, 0);
    check_format(r.out);
    run_free(&r);
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
        cmocka_unit_test(test_golden_frames),
        cmocka_unit_test(test_golden_detects_change),
        cmocka_unit_test(test_library_equals_cli),
        cmocka_unit_test(test_cli_usage),
        cmocka_unit_test(test_cli_refused),
        cmocka_unit_test(test_cli_frames_cap),
        cmocka_unit_test(test_cli_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
