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

#include <math.h>

#include "test_util.h"
#include "viz_canvas.h"
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
    { "view-fa2-n32.txt", "--N 32 --d 8 --M 4K --algo fa2 --plan best --frames 5", 0 },
    { "view-fa2-n32-end.txt", "--N 32 --d 8 --M 4K --algo fa2 --plan best --step 13 "
                              "--frames 9", 0 },
    { "view-fa1-n32.txt", "--N 32 --d 8 --M 4K --algo fa1 --step 6 --frames 4", 0 },
    { "view-naive-n32-causal.txt", "--N 32 --d 8 --M 4K --algo naive --plan best --causal "
                                   "--step 5 --frames 4", 0 },
    { "view-refused.txt", "--N 32 --d 8 --M 4K --Br 32 --Bc 32", 2 },
    { "view-fa2-bwd.txt", "--N 32 --d 8 --M 4K --algo fa2 --pass bwd --causal --step 9 "
                          "--frames 3", 0 },
    { "view-naive-bwd.txt", "--N 32 --d 8 --M 4K --algo naive --pass bwd --step 4 "
                            "--frames 3", 0 },
    { "view-fa2-causal.txt", "--N 64 --d 16 --M 64K --Br 16 --Bc 16 --algo fa2 --causal "
                             "--step 40 --frames 2", 0 },
    { "view-fa2-split.txt", "--Nq 2 --Nk 96 --d 8 --M 4K --algo fa2 --splits 3 --Bc 16 "
                            "--causal --step 8 --frames 5", 0 },
    { "view-fa3-n64.txt", "--N 64 --d 16 --algo fa3 --step 3 --frames 8", 0 },
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
        { "--algo fa9", "unknown loop order" },
        { "--frames 0", "--frames 0" },
        { "--step x", "--step x" },
        { "--json", "option of the report" },
        { "--Frames 3", "did you mean '--frames'" },
        { "--compute --count-only", "contradict" },
        { "--q a.npy", "go together" },
        { "--plan paper --Br 16", "--plan paper" },
        { "stray", "unexpected argument" },
        { "--N 64 --step 100000", "the run has" },
        { "--N 4096 --Br 1 --Bc 1 --M 96K --compute", "hint" },
        { "--N 1M --M 96K", "limit 2^27 steps" },
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
    run_result r = run_view("--N 64 --d 64 --M 8K --Br 64 --Bc 64");
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
    run_result r = run_view("--N 64 --d 64 --M 8K");
    assert_int_equal(r.status, 0);
    int seps = 0;
    for (const char *p = r.out; (p = strstr(p, "---- step ")) != NULL; p++)
        seps++;
    assert_int_equal(seps, 200);
    assert_non_null(strstr(r.err, "--frames K prints more"));
    run_free(&r);
    /* --frames past the end stops at the last step, without a note. */
    r = run_view("--N 64 --d 64 --M 8K --step 270 --frames 100");
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

/* ---- what the grids say: counts, tiles in hand, blocks, legend ----------- */

enum { FL_MAX = 64, FL_W = 128 };

/* The lines of the frame whose "where" line (its third line) contains
 * `where`, or the last frame when where is NULL. Returns the number of
 * lines (0: no such frame). */
static int frame_lines(const char *out, const char *where, char lines[FL_MAX][FL_W])
{
    const char *f = NULL;
    for (const char *p = strstr(out, "---- "); p; p = strstr(p + 1, "\n---- ")) {
        const char *start = *p == '\n' ? p + 1 : p;
        const char *end = strstr(start + 1, "\n---- ");
        const char *w = where ? strstr(start, where) : start;
        if (w && (!end || w < end)) {
            f = start;
            if (where)
                break;
        }
    }
    if (!f)
        return 0;
    f = strchr(f, '\n') + 1;                       /* past the separator */
    int n = 0;
    while (*f && strncmp(f, "---- ", 5) != 0 && n < FL_MAX) {
        const int len = (int)strcspn(f, "\n");
        snprintf(lines[n++], FL_W, "%.*s", len < FL_W - 1 ? len : FL_W - 1, f);
        f += len + (f[len] == '\n');
    }
    return n;
}

/* The row of tensor names (the first that begins "Q "); -1 if none. */
static int names_row(char lines[FL_MAX][FL_W], int n)
{
    for (int y = 0; y < n; y++)
        if (!strncmp(lines[y], "Q ", 2))
            return y;
    return -1;
}

/* The grid rows under the names: each begins with a tile's mark or '.',
 * and Q's cell is not blank. */
static int grid_rows(char lines[FL_MAX][FL_W], int n, int ny)
{
    int gh = 0;
    for (const char *r; ny + 1 + gh < n; gh++) {
        r = lines[ny + 1 + gh];
        if (!r[0] || !strchr(" *><=.", r[0]) || strspn(r, " ") >= 3)
            break;
    }
    return gh;
}

/* The cell text at column x of a grid row, up to the next space after it. */
static void cell_at(const char *row, int x, char *buf, size_t len)
{
    const int n = (int)strlen(row);
    int e = x + 1;
    while (e < n && row[e] != ' ')
        e++;
    snprintf(buf, len, "%.*s", x < n ? e - x : 0, x < n ? row + x : "");
}

/* FA2 at line 9 of block i = 3, j = 2 (1-based) of a 4 x 4 grid: K_q was read
 * i times for q <= j and i - 1 after (once per query block so far); the
 * current Q_i is marked '*' though nothing moves; K_j too. */
static void test_cli_counts_and_marks(void **state)
{
    (void)state;
    run_result r = run_view("--N 64 --d 16 --M 64K --Br 16 --Bc 16 --algo fa2 --frames 100");
    assert_int_equal(r.status, 0);
    char lines[FL_MAX][FL_W];
    const int n = frame_lines(r.out, "line 9   i = 3 of T_r = 4   j = 2 of T_c = 4", lines);
    assert_true(n > 0);
    assert_non_null(strstr(r.out, "moved: nothing (on-chip work)"));
    const int ny = names_row(lines, n);
    assert_true(ny > 0);
    const int gh = grid_rows(lines, n, ny);
    assert_true(gh >= 4 && gh % 4 == 0);
    const int kx = (int)(strchr(lines[ny] + 1, 'K') - lines[ny]);
    const int i = 3, j = 2;
    for (int t = 0; t < 4; t++) {
        for (int y = t * gh / 4; y < (t + 1) * gh / 4; y++) {
            const char *row = lines[ny + 1 + y];
            char cell[32], want[8];
            cell_at(row, kx, cell, sizeof cell);
            snprintf(want, sizeof want, "%dr", t + 1 <= j ? i : i - 1);
            if (!strstr(cell, want))
                fprintf(stderr, "K tile %d: cell '%s', want '%s'\n", t + 1, cell, want);
            assert_non_null(strstr(cell, want));
            assert_int_equal(cell[0] == '*', t + 1 == j);        /* K_j in hand */
            assert_int_equal(row[0] == '*', t + 1 == i);         /* Q_i in hand */
        }
    }
    run_free(&r);
}

/* The block grid under the "blocks" heading: row i for Q_i, column j for
 * K_j. FA2 at block (2, 2) has done row 1 and block (2, 1); FA1 (j outer)
 * has done column 1 and block (1, 2). After a causal run the blocks above
 * the diagonal (j B_c > i B_r + B_r - 1) are skipped, the rest done. */
static void check_block_rows(const char *args, const char *where, int ci, int cj, int fa1,
                             int causal)
{
    run_result r = run_view(args);
    assert_int_equal(r.status, 0);
    char lines[FL_MAX][FL_W];
    const int n = frame_lines(r.out, where, lines);
    assert_true(n > 0);
    const int ny = names_row(lines, n);
    assert_true(ny > 0);
    const char *h = strstr(lines[ny], "blocks");
    assert_non_null(h);
    const int bx = (int)(h - lines[ny]);
    for (int i = 1; i <= 4; i++) {
        char want[8] = "";
        for (int j = 1; j <= 4; j++) {
            const int masked = causal && (j - 1) * 16 > (i - 1) * 16 + 15;
            const int before = ci < 0 ? 1
                               : fa1 ? (j < cj || (j == cj && i < ci))
                                     : (i < ci || (i == ci && j < cj));
            want[j - 1] = i == ci && j == cj ? '*' : masked ? '-' : before ? '#' : '.';
        }
        if (strncmp(lines[ny + i] + bx, want, 4) != 0)
            fprintf(stderr, "%s: block row %d is '%.4s', want '%s'\n", args, i,
                    lines[ny + i] + bx, want);
        assert_memory_equal(lines[ny + i] + bx, want, 4);
    }
    run_free(&r);
}

static void test_cli_block_grid(void **state)
{
    (void)state;
    const char *where = "line 9   i = 2 of T_r = 4   j = 2 of T_c = 4";
    check_block_rows("--N 64 --d 16 --M 64K --Br 16 --Bc 16 --algo fa2 --frames 100", where,
                     2, 2, 0, 0);
    check_block_rows("--N 64 --d 16 --M 64K --Br 16 --Bc 16 --algo fa1 --frames 200", where,
                     2, 2, 1, 0);
    check_block_rows("--N 64 --d 16 --M 64K --Br 16 --Bc 16 --algo fa2 --causal --frames 100",
                     NULL, -1, -1, 0, 1);
    check_block_rows("--N 64 --d 16 --M 64K --Br 16 --Bc 16 --algo fa1 --causal --frames 200",
                     NULL, -1, -1, 1, 1);
}

/* The legend (the lines between the position line and the names) uses no
 * symbol that is the name of a tensor the loop order moves. */
static void test_cli_legend_symbols(void **state)
{
    (void)state;
    static const char *const runs[] = {
        "--N 64 --d 16 --M 64K --algo fa2 --frames 1",
        "--N 64 --d 16 --M 64K --algo fa1 --frames 1",
        "--N 64 --d 16 --M 8K --algo naive --frames 1",
        "--N 32 --d 8 --M 4K --algo fa2 --pass bwd --frames 1",
        "--N 32 --d 8 --M 4K --algo naive --pass bwd --frames 1",
        "--Nq 2 --Nk 96 --d 8 --M 4K --algo fa2 --splits 3 --frames 1",
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        run_result r = run_view(runs[k]);
        assert_int_equal(r.status, 0);
        char lines[FL_MAX][FL_W];
        const int n = frame_lines(r.out, NULL, lines);
        const int ny = names_row(lines, n);
        assert_true(ny >= 3);
        /* The tensor names: the names row up to the first lower-case word
         * longer than a name ("blocks", "bytes"). */
        char names[32][8];
        int nn = 0;
        char row[FL_W];
        snprintf(row, sizeof row, "%.*s", (int)strcspn(lines[ny], "|"), lines[ny]);
        for (char *tok = strtok(row, " |"); tok && nn < 32; tok = strtok(NULL, " |")) {
            if (strlen(tok) > 2)
                break;
            snprintf(names[nn++], sizeof names[0], "%s", tok);
        }
        assert_true(nn >= 4);
        for (int y = 2; y < ny; y++) {
            char leg[FL_W];
            snprintf(leg, sizeof leg, "%.*s", (int)strcspn(lines[y], "|"), lines[y]);
            for (char *tok = strtok(leg, " :;,"); tok; tok = strtok(NULL, " :;,"))
                for (int q = 0; q < nn; q++)
                    if (!strcmp(tok, names[q])) {
                        fprintf(stderr, "%s: legend symbol '%s' names a tensor:\n%s\n",
                                runs[k], tok, lines[y]);
                        fail();
                    }
        }
        run_free(&r);
    }
}

/* One wording for the byte counters' header, at every width and layout. */
static void test_cli_counter_header(void **state)
{
    (void)state;
    static const char *const runs[] = {
        "--N 64 --d 16 --M 64K --algo fa2 --frames 1",
        "--N 64 --d 64 --M 8K --algo fa1 --frames 1",
        "--N 64 --d 64 --M 8K --algo naive --frames 1",
        "--N 32 --d 8 --M 4K --Br 32 --Bc 32",
        "--Nq 2 --Nk 96 --d 8 --M 4K --algo fa2 --splits 3 --frames 1",
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        run_result r = run_view(runs[k]);
        if (!strstr(r.out, "bytes so far / total"))
            fprintf(stderr, "%s: no 'bytes so far / total' in\n%s\n", runs[k], r.out);
        assert_non_null(strstr(r.out, "bytes so far / total"));
        assert_null(strstr(r.out, "now/total"));
        assert_null(strstr(r.out, "so far/total"));
        run_free(&r);
    }
}

/* The default problem: N several times d, so that S and P (N x N) do not
 * look the size of Q (N x d). */
static void test_cli_default_shape(void **state)
{
    (void)state;
    run_result r = run_view("--frames 1");
    assert_int_equal(r.status, 0);
    const char *t = strstr(r.out, " N=");
    assert_non_null(t);
    long N = 0, d = 0;
    assert_int_equal(sscanf(t, " N=%ld d=%ld", &N, &d), 2);
    assert_true(N >= 4 * d);
    run_free(&r);
}

/* ---- a new user's trial at the classroom size ------------------------------ */

/* The left (HBM) part of a frame line, before the '|' of the right column. */
static void left_part(const char *line, char *buf, size_t len)
{
    snprintf(buf, len, "%.*s", (int)strcspn(line, "|"), line);
}

/* The right part of a frame line (after the '|'), or "" . */
static const char *right_part(const char *line)
{
    const char *bar = strchr(line, '|');
    return bar ? bar + 1 : "";
}

/* At the classroom size the tiles' counts stay beside their marks: every
 * cell of Q, K, V, O (and FA1's m, l) begins with its mark (or a space)
 * and shows its count right after it; a digit past nine is '+', and then
 * the legend says so. */
static void test_cli_classroom_counts(void **state)
{
    (void)state;
    static const char *const runs[] = {
        "--algo fa1 --N 1024 --d 64 --M 96K --Br 64 --Bc 64 --step 200 --frames 1",
        "--algo fa1 --N 1024 --d 64 --M 96K --Br 80 --Bc 80 --step 200 --frames 1",
        "--algo fa1 --N 1024 --d 64 --M 96K --Br 64 --Bc 64 --step 1550 --frames 1",
        "--algo fa2 --N 1024 --d 64 --M 96K --step 200 --frames 1",
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        run_result r = run_view(runs[k]);
        assert_int_equal(r.status, 0);
        check_format(r.out);
        char lines[FL_MAX][FL_W];
        const int n = frame_lines(r.out, NULL, lines);
        const int ny = names_row(lines, n);
        assert_true(ny >= 3);
        const int gh = grid_rows(lines, n, ny);
        assert_true(gh >= 3);
        /* The tensors' columns: where each name starts, up to "blocks". */
        int xs[16], nx = 0;
        for (int x = 0; lines[ny][x] && nx < 16; x++)
            if (lines[ny][x] != ' ' && (x == 0 || lines[ny][x - 1] == ' ')) {
                if (!strncmp(lines[ny] + x, "blocks", 6) || lines[ny][x] == '|')
                    break;
                xs[nx++] = x;
            }
        assert_true(nx >= 4);
        int plus = 0;
        for (int y = ny + 1; y <= ny + gh; y++)
            for (int q = 0; q < nx; q++) {
                const char mark = lines[y][xs[q]], count = lines[y][xs[q] + 1];
                if (!strchr(" *<>=", mark) || !strchr("0123456789.+", count)) {
                    fprintf(stderr, "%s: cell '%c%c' at (%d, %d) hides its count:\n%s\n",
                            runs[k], mark, count, xs[q], y, lines[y]);
                    fail();
                }
                plus |= count == '+';
            }
        if (plus && !strstr(lines[ny - 2], "+")) {
            fprintf(stderr, "%s: '+' shown but not in the legend:\n%s\n", runs[k],
                    lines[ny - 2]);
            fail();
        }
        run_free(&r);
    }
    /* FA1's m and l are written once per (i, j): T_c = 16 times per tile at
     * the end of the run, shown '+' past nine. */
    run_result r = run_view("--algo fa1 --N 1024 --d 64 --M 96K --Br 64 --Bc 64 --step 1554 "
                            "--frames 1");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "+: >9"));
    run_free(&r);
}

/* The byte counters of one frame are in one unit: exact bytes throughout, or
 * one unit named once in the header. At the last step every counter has
 * reached its total. */
static void test_cli_one_byte_unit(void **state)
{
    (void)state;
    static const char *const runs[] = {
        "--algo fa1 --N 1024 --d 64 --M 96K --Br 64 --Bc 64",
        "--algo fa1 --N 1024 --d 64 --M 96K --Br 80 --Bc 80",
        "--algo fa2 --N 1024 --d 64 --M 96K --Br 64 --Bc 64",
        "--algo naive --N 1024 --d 64 --M 96K",
        "--algo fa2 --N 4096 --d 64 --M 96K --Br 16 --Bc 16",
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        char args[256];
        run_result r = run_view(runs[k]);
        const char *sep = strstr(r.out, "---- step 1 of ");
        assert_non_null(sep);
        unsigned long long nsteps = strtoull(sep + strlen("---- step 1 of "), NULL, 10);
        run_free(&r);
        snprintf(args, sizeof args, "%s --step %llu --frames 1", runs[k], nsteps);
        r = run_view(args);
        assert_int_equal(r.status, 0);
        char lines[FL_MAX][FL_W];
        const int n = frame_lines(r.out, NULL, lines);
        int y0 = -1, items = 0;
        for (int y = 0; y < n && y0 < 0; y++)
            if (strstr(lines[y], "bytes so far / total"))
                y0 = y;
        assert_true(y0 > 0);
        for (int y = y0; y < n && strncmp(lines[y], "STATISTICS", 10); y++) {
            char left[FL_W];
            left_part(lines[y], left, sizeof left);
            const char *p = y == y0 ? strstr(left, "total") + 5 : left;
            if (y == y0 && *p == ',')
                p = strchr(p, ':') ? strchr(p, ':') + 1 : p + strlen(p);
            else if (y == y0 && *p == ':')
                p++;
            if (strstr(p, "iB") || strstr(p, " B")) {
                fprintf(stderr, "%s: a unit inside the counters:\n%s\n", runs[k], lines[y]);
                fail();
            }
            /* Every "so far/total" pair equal at the end. */
            for (const char *q = p; (q = strchr(q, '/')) != NULL; q++) {
                const char *a = q;
                while (a > p && a[-1] != ' ')
                    a--;
                char fa[32], fb[32];
                snprintf(fa, sizeof fa, "%.*s", (int)(q - a), a);
                snprintf(fb, sizeof fb, "%.*s", (int)strcspn(q + 1, " "), q + 1);
                if (strcmp(fa, fb) != 0) {
                    fprintf(stderr, "%s: %s/%s at the last step\n", runs[k], fa, fb);
                    fail();
                }
                items++;
            }
        }
        assert_true(items >= 4);
        run_free(&r);
    }
}

/* Large T at 80 x 24: the play/pause state never covers the position's
 * values, and the SRAM panel's lines end whole. */
static void test_layout_large_T(void **state)
{
    (void)state;
    static const struct {
        int64_t N, d, M, B;
        int causal;
        uint64_t step;
    } runs[] = {
        { 4096, 64, 148480, 128, 1, 300 },
        { 65536, 64, 148480, 128, 1, 12345 },
        { 65536, 16, 96 * 1024, 128, 0, 1000000 },
        { 4096, 64, 96 * 1024, 16, 0, 200000 },
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        viz_config c;
        viz_config_default(&c);
        c.sh.N = runs[k].N;
        c.sh.d = runs[k].d;
        c.sh.M = (uint64_t)runs[k].M;
        c.sh.causal = runs[k].causal;
        c.Br = c.Bc = runs[k].B;
        c.plan_kind = SIM_PLAN_USER;
        c.mode = VIZ_MODE_COUNT;
        viz_model *m = NULL;
        char err[1024];
        assert_int_equal(viz_model_build(&c, &m, err, sizeof err), VIZ_OK);
        const viz_info *in = viz_model_info(m);
        assert_true(in->nsteps > runs[k].step);
        viz_model_seek(m, runs[k].step);
        const viz_state *st = viz_model_state(m);
        viz_canvas cv;
        assert_int_equal(viz_canvas_init(&cv, 80, 24), 0);
        const viz_frame_opts o = { VIZ_CONTROLS, NULL, "paused (10/s)" };
        viz_layout_draw(m, &cv, &o, NULL);
        char line[96];
        snprintf(line, sizeof line, "%.*s", cv.w, cv.ch + cv.w);
        /* "... j = 14 of T_c = 32 ... paused (10/s)": the j total whole,
         * then a space before the state. */
        char want[64];
        snprintf(want, sizeof want, "%lld ", (long long)in->plan.Tc);
        const char *at = strstr(line, "paused (10/s)");
        assert_non_null(at);
        assert_true(st->j >= 0);
        const char *j = strstr(line, "j = ");
        assert_non_null(j);
        const char *tc = strstr(j, want);
        while (tc && tc[-1] != ' ' && tc[-1] != '/')
            tc = strstr(tc + 1, want);
        if (!tc || tc + strlen(want) > at) {
            fprintf(stderr, "N = %lld: the position is cut:\n%s\n", (long long)c.sh.N, line);
            fail();
        }
        /* The SRAM panel: its head ends with ':' and its bar line with '%'. */
        int seen = 0;
        for (int y = 2; y < cv.h; y++) {
            char row[96];
            snprintf(row, sizeof row, "%.*s", cv.w, cv.ch + (size_t)y * (size_t)cv.w);
            const char *rp = right_part(row);
            if (strncmp(rp, "SRAM ", 5) != 0)
                continue;
            char head[64], next[96], bar[96];
            snprintf(head, sizeof head, "%s", rp);
            snprintf(next, sizeof next, "%.*s", cv.w, cv.ch + (size_t)(y + 1) * (size_t)cv.w);
            snprintf(bar, sizeof bar, "%s", right_part(next));
            for (char *e = head + strlen(head); e > head && e[-1] == ' ';)
                *--e = '\0';
            for (char *e = bar + strlen(bar); e > bar && e[-1] == ' ';)
                *--e = '\0';
            if (head[strlen(head) - 1] != ':' || bar[strlen(bar) - 1] != '%') {
                fprintf(stderr, "N = %lld: the SRAM panel is cut:\n%s\n%s\n",
                        (long long)c.sh.N, head, bar);
                fail();
            }
            seen = 1;
            break;
        }
        assert_true(seen);
        /* The title fits. */
        char title[96];
        snprintf(title, sizeof title, "%.*s", cv.w, cv.ch);
        assert_non_null(strstr(title, "count-only"));
        viz_canvas_free(&cv);
        viz_model_free(m);
    }
}

/* FA2's last lines name what is stored: L_i = m_i + log l_i, from m_i's
 * buffer; line 13's table keeps m_old, m_new and gives L a column of its
 * own whose values are m + log l of the same row. */
static void test_cli_fa2_L(void **state)
{
    (void)state;
    run_result r = run_view("--N 32 --d 8 --M 4K --algo fa2 --Br 16 --Bc 16 --frames 200");
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.out, "<- m_i"));
    assert_non_null(strstr(r.out, "L[0:16] <- L_i (in m_i's buffer) 64 B"));
    assert_non_null(strstr(r.out, "L[16:32] <- L_i (in m_i's buffer) 64 B"));
    char lines[FL_MAX][FL_W];
    const int n = frame_lines(r.out, "line 13 ", lines);
    assert_true(n > 10);
    int y = 0;
    while (y < n && !strstr(lines[y], "   row "))
        y++;
    assert_true(y < n - 1);
    assert_non_null(strstr(lines[y], "m_old"));
    assert_non_null(strstr(lines[y], "m_new"));
    assert_null(strstr(lines[y], "L_new"));
    assert_non_null(strstr(lines[y], "L="));
    for (int k = y + 1; k < n && k <= y + 4; k++) {
        long row;
        double mo, mn, lo, ln, L;
        if (sscanf(lines[k] + 1, "%ld %lf %lf %lf %lf %lf", &row, &mo, &mn, &lo, &ln, &L) != 6)
            break;
        assert_true(fabs(mo - mn) < 1e-9);
        assert_true(fabs(L - (mn + log(ln))) < 2e-4);
    }
    run_free(&r);
    /* L is never in hand in the forward pass: no '*' in its column. */
    r = run_view("--N 32 --d 8 --M 4K --algo fa2 --Br 16 --Bc 16 --frames 200");
    for (const char *p = r.out; (p = strstr(p, "\nQ ")) != NULL; p++) {
        const char *lx = strstr(p + 1, " L ");
        if (!lx || lx > strchr(p + 1, '\n'))
            continue;
        const int x = (int)(lx + 1 - (p + 1));
        for (const char *q = strchr(p + 1, '\n'); q && q[1] && strchr(" *<>=.", q[1]);
             q = strchr(q + 1, '\n')) {
            if ((int)strcspn(q + 1, "\n") > x && q[1 + x] == '*') {
                fprintf(stderr, "L in hand:\n%.80s\n", q + 1);
                fail();
            }
            if (q[1] == ' ' && q[2] == ' ' && q[3] == ' ')
                break;
        }
    }
    run_free(&r);
}

/* Symbols explained: a block character standing for several blocks (':')
 * is in the legend when one can show, its size in rows and columns in
 * words; naive's rows of S are the report's S_rows; the SRAM list marks
 * moves '>' and '<' (not '*', the tiles in hand) and says "allocated". */
static void test_cli_symbols_explained(void **state)
{
    (void)state;
    run_result r = run_view("--step 81 --frames 1");
    assert_int_equal(r.status, 0);
    char lines[FL_MAX][FL_W];
    const int n = frame_lines(r.out, NULL, lines);
    const int ny = names_row(lines, n);
    assert_true(ny >= 3);
    assert_non_null(strstr(lines[ny - 1], ": part"));
    int note = 0;
    for (int y = ny + 1; y < n; y++)
        if (strstr(lines[y], "block char") && strstr(lines[y], " row") &&
            strstr(lines[y], " col"))
            note = 1;
    assert_true(note);
    assert_non_null(strstr(r.out, "SRAM allocated"));
    run_free(&r);
    r = run_view("--N 32 --d 8 --M 4K --algo fa2 --Br 16 --Bc 16 --frames 40");
    for (const char *p = r.out; (p = strstr(p, "|")) != NULL; p++) {
        const char *e = strchr(p, '\n');
        /* SRAM tokens: a mark, then a buffer name and its bytes. */
        for (const char *q = p; q < e; q++)
            if (*q == '*' && q[1] != ' ' && (q[-1] == ' ' || q[-1] == '|') &&
                strchr("QKVSOml", q[1]) && strstr(p, "_") && strchr("0123456789", q[5])) {
                fprintf(stderr, "'*' marks an SRAM buffer:\n%.*s\n", (int)(e - p), p);
                fail();
            }
    }
    assert_non_null(strstr(r.out, ">K_j"));
    run_free(&r);
    r = run_view("--N 64 --d 16 --M 8K --algo naive --plan best --frames 60");
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.out, "B_s"));
    assert_non_null(strstr(r.out, "(S_rows: "));
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
        cmocka_unit_test(test_cli_counts_and_marks),
        cmocka_unit_test(test_cli_block_grid),
        cmocka_unit_test(test_cli_legend_symbols),
        cmocka_unit_test(test_cli_counter_header),
        cmocka_unit_test(test_cli_default_shape),
        cmocka_unit_test(test_cli_classroom_counts),
        cmocka_unit_test(test_cli_one_byte_unit),
        cmocka_unit_test(test_layout_large_T),
        cmocka_unit_test(test_cli_fa2_L),
        cmocka_unit_test(test_cli_symbols_explained),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
