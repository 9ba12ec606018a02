/*
 * test_lessons_io.c — lessons 6-12 (tiling-budget, io-complexity, loop-order,
 * causal, fp8-outliers, gpu-time, l2-bytes), end to end.
 *
 * argv[1] is the fasim binary, argv[2] the folder of golden files
 * (tests/golden). Each case runs `fasim lesson NAME --script ...` with
 * fork/execv (no shell), stdin from /dev/null, stdout and stderr captured into
 * files and read into static buffers (nothing to free when a check fails), and
 * an alarm that survives execv, so a hang fails the case.
 *
 * The cases:
 *   - golden: the default --script output of each lesson, byte for byte
 *     (FASIM_UPDATE_GOLDEN=1 rewrites the files instead); and the same text
 *     from lesson_run() called in-process with an output FILE*;
 *   - random inputs: each lesson on seeded random N, d, M, dtype and block
 *     sizes; every "Answer:" it reveals (and a few labelled lines) is checked
 *     against a value recomputed here from closed forms written out in this
 *     file (buffer sizes, per-tensor traffic, block counts by brute force), or
 *     from sim/ where the value is a search (fasim's best plan);
 *   - bad input: exit status 2, a message on stderr that names the problem,
 *     and nothing on stdout;
 *   - the checker proves itself: the article's "about 2x" must fail the same
 *     comparison the exact 2T/(T+1) passes.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lesson.h"
#include "sim.h"
#include "gm_util.h"
#include "sim_report.h"
#include "ref_rng.h"
#include "test_util.h"

#define RUN_TIMEOUT_S TU_RUN_TIMEOUT_S
#define MAX_ARGS 32
#define MAX_ANSWERS 16

static const char *g_fasim, *g_golden;
static char g_out[1 << 18], g_err[1 << 14];   /* the last run's stdout, stderr */
static int g_code;                           /* its exit status (-1: a signal) */
static char g_cmd[1024];                     /* its command line, for messages */

/* ---- running the binary ---------------------------------------------------- */

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
}

/* fasim lesson NAME --script ARGS... (args NULL-terminated), stdin empty; or,
 * with input, fasim lesson NAME ARGS... answering from input through a pipe. */
static void run_argv(char **argv, const char *input);

static void run_lesson_in(const char *name, const char *input, const char *const *args)
{
    char *argv[MAX_ARGS + 5];
    int n = 0;
    argv[n++] = (char *)g_fasim;
    argv[n++] = "lesson";
    argv[n++] = (char *)name;
    if (!input)
        argv[n++] = "--script";
    for (int k = 0; args && args[k]; k++) {
        assert_true(n < MAX_ARGS + 4);
        argv[n++] = (char *)args[k];
    }
    argv[n] = NULL;
    run_argv(argv, input);
}

/* fasim ARGS... (argv[0] the binary, NULL-terminated), stdin from input
 * (NULL: empty); stdout and stderr into g_out and g_err. */
static void run_argv(char **argv, const char *input)
{
    int off = snprintf(g_cmd, sizeof g_cmd, "fasim");
    for (int k = 1; argv[k]; k++)
        if (off < (int)sizeof g_cmd)
            off += snprintf(g_cmd + off, sizeof g_cmd - (size_t)off, " %s", argv[k]);
    char outp[512], errp[512], inp[512] = "/dev/null";
    tu_path(outp, sizeof outp, "lesson.stdout");
    tu_path(errp, sizeof errp, "lesson.stderr");
    if (input) {
        tu_path(inp, sizeof inp, "lesson.stdin");
        assert_int_equal(tu_write_file(inp, input, strlen(input)), 0);
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int in = open(inp, O_RDONLY);
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        alarm(RUN_TIMEOUT_S);
        execv(g_fasim, argv);
        _exit(127);
    }
    int st = 0;
    pid_t w;
    do
        w = waitpid(pid, &st, 0);
    while (w < 0 && errno == EINTR);
    assert_int_equal(w, pid);
    g_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    slurp(outp, g_out, sizeof g_out);
    slurp(errp, g_err, sizeof g_err);
    if (g_code < 0)
        fail_msg("%s: killed by signal %d", g_cmd, WTERMSIG(st));
}

static void run_lesson(const char *name, const char *const *args)
{
    run_lesson_in(name, NULL, args);
}

/* Run and require success. */
static void run_ok(const char *name, const char *const *args)
{
    run_lesson(name, args);
    if (g_code != 0)
        fail_msg("%s: exit %d\n%s", g_cmd, g_code, g_err);
}

/* ---- reading what a lesson printed ----------------------------------------- */

/* The numbers of the "Answer: X" lines, in order; returns how many. */
static int answers(double *v, int max)
{
    int n = 0;
    for (const char *p = strstr(g_out, "\nAnswer: "); p && n < max;
         p = strstr(p + 1, "\nAnswer: "))
        v[n++] = strtod(p + 9, NULL);
    return n;
}

/* The number after the first occurrence of label (thousands commas allowed). */
static double labelled(const char *label)
{
    const char *p = strstr(g_out, label);
    if (!p)
        fail_msg("%s: no \"%s\" in the output", g_cmd, label);
    p += strlen(label);
    while (*p == ' ')
        p++;
    char digits[64];
    size_t k = 0;
    for (; *p && (strchr("0123456789.,eE+-", *p)) && k + 1 < sizeof digits; p++)
        if (*p != ',')
            digits[k++] = *p;
    digits[k] = '\0';
    return strtod(digits, NULL);
}

/* The engine prints whole numbers exactly and others to 6 significant digits. */
static int near(double got, double want)
{
    return fabs(got - want) <= 1e-5 * fabs(want) + 1e-12;
}

static void check(const char *what, double got, double want)
{
    if (!near(got, want))
        fail_msg("%s: %s is %.9g, expected %.9g", g_cmd, what, got, want);
}

static void need_answers(double *v, int want)
{
    int n = answers(v, MAX_ANSWERS);
    if (n != want)
        fail_msg("%s: %d answers, expected %d\n%s", g_cmd, n, want, g_out);
}

/* ---- closed forms, written out here ---------------------------------------- */

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* SRAM bytes of one block (sim_plan.c's buffer list, restated): inputs at e,
 * S_ij and O_i fp32, and 2 (FA2) or 6 (FA1) fp32 vectors of B_r. */
static uint64_t sram_bytes(sim_algo a, int64_t Br, int64_t Bc, int64_t d, int e)
{
    uint64_t inputs = (uint64_t)(Br + 2 * Bc) * (uint64_t)d * (uint64_t)e;
    uint64_t acc = 4u * (uint64_t)(Br * Bc + Br * d);
    return inputs + acc + 4u * (uint64_t)Br * (a == SIM_FA1 ? 6u : 2u);
}

/* Non-causal HBM bytes of FA1 and FA2 for blocks Br x Bc (Algorithm 1 of each
 * paper: FA1 reads Q, O, l, m T_c times and writes them T_c + 1 times; FA2
 * reads K, V T_r times and Q, O, L once). */
static double fa_bytes(sim_algo a, int64_t N, int64_t d, int64_t Br, int64_t Bc, int e)
{
    double Nd = (double)N * (double)d, Tr = (double)cdiv(N, Br), Tc = (double)cdiv(N, Bc);
    if (a == SIM_FA1)   /* Q T_c times, K, V, O once; the running O in fp32 O_acc,
                           read T_c times and written T_c (line 2 and all but the last) */
        return e * (2 * Nd + Tc * Nd + Nd) + 4.0 * 2 * Tc * Nd +
               4.0 * N * (2 * Tc + 2 * (Tc + 1));
    return e * (Nd + 2 * Tr * Nd + Nd) + 4.0 * N;
}

/* Visited block pairs under the causal mask, by brute force over row blocks,
 * and FA2's causal bytes (K_j, V_j rows summed over the visited pairs). */
static uint64_t brute_visited(int64_t N, int64_t Br, int64_t Bc, double *fa2_bytes,
                              int64_t d, int e)
{
    uint64_t v = 0;
    double keys = 0;
    for (int64_t i = 0; i * Br < N; i++) {
        int64_t last_row = min64((i + 1) * Br, N) - 1, jl = last_row / Bc;
        v += (uint64_t)(jl + 1);
        keys += (double)min64((jl + 1) * Bc, N);
    }
    double Nd = (double)N * (double)d;
    *fa2_bytes = e * (2 * Nd + 2 * keys * (double)d) + 4.0 * N;
    return v;
}

static const char *pick_dtype(uint64_t *rng, int *e)
{
    static const char *const names[] = { "fp16", "bf16", "fp32" };
    int k = (int)tu_rand_range(rng, 0, 2);
    *e = k == 2 ? 4 : 2;
    return names[k];
}

/* ---- golden files ----------------------------------------------------------- */

static const char *const NAMES[] = { "tiling-budget", "io-complexity", "loop-order", "causal",
                                     "fp8-outliers", "gpu-time",     "l2-bytes",     "block-sparse",
                                     "ring",          "atomic-dq" };
#define NNAMES ((int)(sizeof NAMES / sizeof NAMES[0]))

static void compare_golden(const char *name, const char *got)
{
    char path[1024];
    static char want[1 << 18];
    snprintf(path, sizeof path, "%s/lesson_%s.txt", g_golden, name);
    const char *upd = getenv("FASIM_UPDATE_GOLDEN");
    if (upd && *upd == '1') {
        assert_int_equal(tu_write_file(path, got, strlen(got)), 0);
        return;
    }
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("%s: missing (FASIM_UPDATE_GOLDEN=1 writes it)", path);
    size_t n = fread(want, 1, sizeof want - 1, f);
    fclose(f);
    want[n] = '\0';
    if (strcmp(got, want) == 0)
        return;
    int line = 1;
    size_t k = 0;
    for (; got[k] && got[k] == want[k]; k++)
        line += got[k] == '\n';
    fail_msg("%s differs from %s at line %d, byte %zu", name, path, line, k);
}

static void test_golden(void **state)
{
    (void)state;
    for (int k = 0; k < NNAMES; k++) {
        run_ok(NAMES[k], NULL);
        compare_golden(NAMES[k], g_out);
    }
}

/* lesson_run with an output FILE* writes what the binary writes. */
static void test_lesson_run_api(void **state)
{
    (void)state;
    for (int k = 0; k < NNAMES; k++) {
        char path[512];
        tu_path(path, sizeof path, "api.txt");
        FILE *out = fopen(path, "w+b"), *in = fopen("/dev/null", "rb");
        assert_non_null(out);
        assert_non_null(in);
        lesson_run_opts o = { 1, in, out, 0, NULL, LESSON_HANDOUT_NONE };
        int rc = lesson_run(lesson_find(NAMES[k]), &o);
        fclose(out);
        fclose(in);
        assert_int_equal(rc, 0);
        slurp(path, g_out, sizeof g_out);
        snprintf(g_cmd, sizeof g_cmd, "lesson_run(%s)", NAMES[k]);
        compare_golden(NAMES[k], g_out);
    }
}

/* ---- random inputs ---------------------------------------------------------- */

static void test_tiling_random(void **state)
{
    (void)state;
    uint64_t rng = 601;
    for (int t = 0; t < 20; t++) {
        int e;
        const char *dt = pick_dtype(&rng, &e);
        int64_t N = tu_rand_range(&rng, 1, 3000), d = tu_rand_range(&rng, 1, 256);
        int64_t Br = tu_rand_range(&rng, 1, 300), Bc = tu_rand_range(&rng, 1, 300);
        uint64_t M = (uint64_t)tu_rand_range(&rng, 4096, 300000);
        sim_algo a = t % 2 ? SIM_FA1 : SIM_FA2;
        char sN[32], sd[32], sM[32], sBr[32], sBc[32];
        snprintf(sN, 32, "%lld", (long long)N);
        snprintf(sd, 32, "%lld", (long long)d);
        snprintf(sM, 32, "%llu", (unsigned long long)M);
        snprintf(sBr, 32, "%lld", (long long)Br);
        snprintf(sBc, 32, "%lld", (long long)Bc);
        const char *args[] = { "--N", sN, "--d", sd, "--M", sM, "--dtype", dt, "--Br", sBr,
                               "--Bc", sBc, "--algo", sim_algo_name(a), NULL };
        run_ok("tiling-budget", args);
        const int64_t br = min64(Br, N), bc = min64(Bc, N);
        const int64_t M_el = (int64_t)M / e;
        /* the largest square multiple of 16 that fits, by linear search */
        int64_t sq = 0;
        for (int64_t b = 16; b <= N && sram_bytes(a, b, b, d, e) <= M; b += 16)
            sq = b;
        double v[MAX_ANSWERS];
        need_answers(v, sq ? 7 : 6);
        check("Q_i bytes", v[0], (double)(br * d * e));
        check("block bytes", v[1], (double)sram_bytes(a, br, bc, d, e));
        check("SRAM for one block", labelled("SRAM for one block:"),
              (double)sram_bytes(a, br, bc, d, e));
        check("the article's sum", v[2], 128.0 * 128 * 2 + 3.0 * 128 * 128 * 2);
        check("line 1's B_c", v[3], (double)min64(cdiv(M_el, 4 * d), N));
        const int64_t b4 = min64(d, N);   /* M = 4 d^2: B_r = B_c = d */
        check("line 1 at M = 4d^2", v[4], (double)(4 * b4 * d + b4 * b4) / (4.0 * d * d));
        check("misread B_c", v[5], (double)min64(cdiv((int64_t)M, 4 * d), N));
        if (sq)
            check("largest square", v[6], (double)sq);
    }
}

static void test_io_random(void **state)
{
    (void)state;
    uint64_t rng = 701;
    for (int t = 0; t < 12; t++) {
        int e;
        const char *dt = pick_dtype(&rng, &e);
        int64_t N = tu_rand_range(&rng, 16, 4096), d = 8 * tu_rand_range(&rng, 1, 16);
        uint64_t M = (uint64_t)tu_rand_range(&rng, 8192, 262144);
        char sN[32], sd[32], sM[32];
        snprintf(sN, 32, "%lld", (long long)N);
        snprintf(sd, 32, "%lld", (long long)d);
        snprintf(sM, 32, "%llu", (unsigned long long)M);
        const char *args[] = { "--N", sN, "--d", sd, "--M", sM, "--dtype", dt, NULL };
        run_ok("io-complexity", args);
        if (strstr(g_out, "DIFFERS"))
            fail_msg("%s: a measured count differs from its closed form", g_cmd);
        /* The report's tiles (--plan same) and, where none fits, fasim's best
         * plans are searches: take them from study/ and sim/, then count the
         * bytes of FA2 with the closed form written out here. */
        sim_shape sh = { .N = N, .d = d, .M = M, .dtype = e == 4 ? SIM_FP32 : SIM_FP16, .causal = 0 };
        double bytes[2][3];   /* [N or 2N][algo] */
        for (int k = 0; k < 2; k++) {
            sim_shape s = sh;
            s.N = k ? 2 * N : N;
            const int64_t tiles = sim_report_default_tiles(&s);
            for (int a = 0; a < 3; a++) {
                sim_plan p;
                sim_counts c;
                assert_int_equal(sim_plan_choose((sim_algo)a, &s, NULL,
                                                 tiles ? SIM_PLAN_USER : SIM_PLAN_AUTO, tiles,
                                                 tiles, &p, NULL, 0), 0);
                assert_int_equal(sim_theory_counts(&p, &s, &c), 0);
                bytes[k][a] = (double)(sim_counts_read_bytes(&c, s.dtype) +
                                       sim_counts_write_bytes(&c, s.dtype));
                if (a == SIM_FA2)
                    check("FA2 closed form", bytes[k][a],
                          fa_bytes(SIM_FA2, s.N, d, p.Br, p.Bc, e));
            }
        }
        sim_shape s2 = sh;
        s2.M = 2 * M;
        sim_plan p2;
        const int64_t t2 = sim_report_default_tiles(&s2);
        assert_int_equal(sim_plan_choose(SIM_FA2, &s2, NULL, t2 ? SIM_PLAN_USER : SIM_PLAN_AUTO,
                                         t2, t2, &p2, NULL, 0), 0);
        const double Me = (double)(M / (uint64_t)e), n = (double)N, dd = (double)d;
        const double theta = n * n * dd * dd / Me;
        double v[MAX_ANSWERS];
        need_answers(v, 7);
        check("one copy of S", v[0], n * n * e);
        check("FA2 / standard", v[1], bytes[0][2] / bytes[0][0]);
        check("FA2 / standard line", labelled("FA2 / standard, bytes:"),
              floor(bytes[0][2] / bytes[0][0] * 1e4 + 0.5) / 1e4);
        check("N^2 d^2 / M", v[2], theta);
        check("standard at 2N", v[4], bytes[1][0] / bytes[0][0]);
        check("FA2 at 2M", v[5], fa_bytes(SIM_FA2, N, d, p2.Br, p2.Bc, e) / bytes[0][2]);
        check("ratio of the expressions", v[6], theta / (n * dd + n * n));
        (void)v[3];   /* FA2 elements / theta: checked through v[1] and v[2] */
    }
}

static void test_loop_order_random(void **state)
{
    (void)state;
    uint64_t rng = 801;
    int ran = 0;
    for (int t = 0; t < 12; t++) {
        int e;
        const char *dt = pick_dtype(&rng, &e);
        int64_t N = tu_rand_range(&rng, 1, 4096), d = tu_rand_range(&rng, 1, 128);
        uint64_t M = (uint64_t)tu_rand_range(&rng, 16384, 262144);
        int64_t Br = tu_rand_range(&rng, 1, 128), Bc = tu_rand_range(&rng, 1, 128);
        const int given = t % 3 != 0 && sram_bytes(SIM_FA1, min64(Br, N), min64(Bc, N), d, e) <= M;
        sim_shape lsh = { .N = N, .d = d, .M = M, .dtype = e == 4 ? SIM_FP32 : SIM_FP16 };
        const int64_t rt = sim_report_default_tiles(&lsh);
        if (!given && rt) {   /* the lesson's default: the report's tiles, */
            Br = Bc = rt;
        } else if (!given) {  /* else the largest square that fits FA1 */
            Br = 0;
            for (int64_t b = 16; b <= N && sram_bytes(SIM_FA1, b, b, d, e) <= M; b += 16)
                Br = b;
            if (N < 16)
                Br = N;
            if (!Br || sram_bytes(SIM_FA1, min64(Br, N), min64(Br, N), d, e) > M)
                continue;
            Bc = Br;
        }
        char sN[32], sd[32], sM[32], sBr[32], sBc[32];
        snprintf(sN, 32, "%lld", (long long)N);
        snprintf(sd, 32, "%lld", (long long)d);
        snprintf(sM, 32, "%llu", (unsigned long long)M);
        snprintf(sBr, 32, "%lld", (long long)Br);
        snprintf(sBc, 32, "%lld", (long long)Bc);
        const char *args[] = { "--N", sN, "--d", sd, "--M", sM, "--dtype", dt,
                               given ? "--Br" : NULL, sBr, "--Bc", sBc, NULL };
        run_ok("loop-order", args);
        const int64_t Tr = cdiv(N, min64(Br, N)), Tc = cdiv(N, min64(Bc, N));
        double v[MAX_ANSWERS];
        need_answers(v, 5);
        check("FA1 reads of Q", v[0], (double)Tc);
        check("FA1 writes of O", v[1], (double)(Tc + 1) * (double)N * (double)d);
        check("FA2 reads of K", v[2], (double)Tr);
        check("FA1 / FA2 bytes", v[3],
              fa_bytes(SIM_FA1, N, d, Br, Bc, e) / fa_bytes(SIM_FA2, N, d, Br, Bc, e));
        check("all of O in fp32", v[4], 4.0 * (double)N * (double)d);
        ran++;
    }
    assert_true(ran >= 8);   /* the draw must not skip most cases */
}

/* fp8-outliers on random rows: q.k and the largest |entry| of q M, with M =
 * D H / sqrt(d) built here as a matrix (H_ij = (-1)^popcount(i & j), the
 * signs drawn from ref_rng as the lesson documents), not by the fast
 * transform the lesson uses. */
static void test_fp8_outliers_random(void **state)
{
    (void)state;
    uint64_t rng = 977;
    for (int t = 0; t < 12; t++) {
        const int d = 2 << tu_rand_range(&rng, 0, 5);
        const int o = (int)tu_rand_range(&rng, 0, d - 1);
        const uint64_t seed = (uint64_t)tu_rand_range(&rng, 0, 1000);
        double q[64], k[64];
        char sq[1024] = "", sk[1024] = "", ss[32];
        for (int c = 0; c < d; c++) {
            q[c] = (double)tu_rand_range(&rng, -200, 200) / 100.0 + (c == o ? 25.0 : 0.0);
            k[c] = (double)tu_rand_range(&rng, -200, 200) / 100.0 + (c == o ? -15.0 : 0.0);
            snprintf(sq + strlen(sq), sizeof sq - strlen(sq), "%s%g", c ? "," : "", q[c]);
            snprintf(sk + strlen(sk), sizeof sk - strlen(sk), "%s%g", c ? "," : "", k[c]);
        }
        snprintf(ss, sizeof ss, "%llu", (unsigned long long)seed);
        const char *args[] = { "--q", sq, "--k", sk, "--seed", ss, NULL };
        run_ok("fp8-outliers", args);
        double v[MAX_ANSWERS];
        need_answers(v, 2);
        double dot = 0;
        for (int c = 0; c < d; c++)
            dot += q[c] * k[c];
        check("q.k", v[0], dot);
        ref_rng r = ref_rng_seed(seed);
        double sg[64], mq = 0;
        for (int c = 0; c < d; c++)
            sg[c] = (ref_rng_next(&r) >> 63) ? -1.0 : 1.0;
        for (int j = 0; j < d; j++) {
            double x = 0;
            for (int i = 0; i < d; i++)
                x += q[i] * sg[i] * (__builtin_popcount((unsigned)(i & j)) % 2 ? -1.0 : 1.0);
            mq = fmax(mq, fabs(x / sqrt((double)d)));
        }
        check("max |q M|", v[1], mq);
    }
}

/* block-sparse: a band local:K on T x T blocks has (2K + 1) T - K (K + 1)
 * nonzero blocks (K < T); FA2 reads K at each, B d elements of a full block
 * (with B dividing N here); the bound is N d + N^2 d^2 s / M_elems. */
static void test_block_sparse_random(void **state)
{
    (void)state;
    uint64_t rng = 1313;
    for (int t = 0; t < 12; t++) {
        const int64_t B = (int64_t[]){ 16, 32, 64 }[tu_rand_range(&rng, 0, 2)];
        const int64_t T = tu_rand_range(&rng, 2, 40), N = T * B;
        const int64_t K = tu_rand_range(&rng, 0, T - 1), d = tu_rand_range(&rng, 1, 128);
        char sN[32], sB[32], sP[32], sd[32];
        snprintf(sN, 32, "%lld", (long long)N);
        snprintf(sB, 32, "%lld", (long long)B);
        snprintf(sP, 32, "local:%lld", (long long)K);
        snprintf(sd, 32, "%lld", (long long)d);
        const char *args[] = { "--N", sN, "--block", sB, "--pattern", sP, "--d", sd, NULL };
        run_ok("block-sparse", args);
        const double nz = (double)((2 * K + 1) * T - K * (K + 1));
        const double s = nz / ((double)T * (double)T), M = 96.0 * 1024 / 2;
        double v[MAX_ANSWERS];
        need_answers(v, 3);
        check("nonzero blocks", v[0], nz);
        check("K read", v[1], nz * (double)B * (double)d);
        check("bound", v[2], (double)N * (double)d +
                                 (double)N * (double)N * (double)d * (double)d * s / M);
    }
}

static void test_causal_random(void **state)
{
    (void)state;
    uint64_t rng = 901;
    for (int t = 0; t < 20; t++) {
        int e;
        const char *dt = pick_dtype(&rng, &e);
        int64_t N = tu_rand_range(&rng, 1, 5000), d = tu_rand_range(&rng, 1, 256);
        int64_t Br = tu_rand_range(&rng, 1, 300), Bc = t % 2 ? Br : tu_rand_range(&rng, 1, 300);
        char sN[32], sd[32], sBr[32], sBc[32];
        snprintf(sN, 32, "%lld", (long long)N);
        snprintf(sd, 32, "%lld", (long long)d);
        snprintf(sBr, 32, "%lld", (long long)Br);
        snprintf(sBc, 32, "%lld", (long long)Bc);
        const char *sq[] = { "--N", sN, "--d", sd, "--dtype", dt, "--block", sBr, NULL };
        const char *rc[] = { "--N", sN, "--d", sd, "--dtype", dt, "--Br", sBr, "--Bc", sBc,
                             NULL };
        run_ok("causal", t % 2 ? sq : rc);
        const int64_t br = min64(Br, N), bc = min64(Bc, N);
        const double all = (double)cdiv(N, br) * (double)cdiv(N, bc);
        double fa2c;
        const double vis = (double)brute_visited(N, br, bc, &fa2c, d, e);
        double v[MAX_ANSWERS];
        need_answers(v, 3);
        check("visited blocks", v[0], vis);
        check("visited blocks line", labelled("visited blocks:"), vis);
        check("block saving", v[1], all / vis);
        check("FA2 byte saving", v[2], fa_bytes(SIM_FA2, N, d, br, bc, e) / fa2c);
        if (br == bc) {
            const double T = (double)cdiv(N, br);
            check("T(T+1)/2", vis, T * (T + 1) / 2);
            check("2T/(T+1)", v[1], 2 * T / (T + 1));
        }
    }
}

/* ---- bad input -------------------------------------------------------------- */

static void test_bad_input(void **state)
{
    (void)state;
    static const struct {
        const char *lesson, *args[6], *says;
    } cases[] = {
        { "causal", { "--N", "0" }, "--N" },
        { "causal", { "--block", "0" }, "--block" },
        { "causal", { "--N", "1073741824", "--block", "1" }, "overflow" },
        { "causal", { "--nosuch", "1" }, "nosuch" },
        { "io-complexity", { "--M", "12Q" }, "--M" },
        { "io-complexity", { "--M", "100" }, "too small" },
        { "io-complexity", { "--N", "300000" }, "--N" },
        { "loop-order", { "--block", "0" }, "--block" },
        { "loop-order", { "--M", "1K", "--d", "128" }, "does not fit" },
        { "loop-order", { "--Br", "512", "--Bc", "512" }, "does not fit" },
        { "tiling-budget", { "--dtype", "fp8" }, "--dtype" },
        { "tiling-budget", { "--dtype", "e4m3" }, "--dtype e4m3: use fp16, bf16 or fp32" },
        { "causal", { "--dtype", "e5m2" }, "--dtype e5m2: use fp16, bf16 or fp32" },
        { "io-complexity", { "--dtype", "e4m3" }, "--dtype e4m3: use fp16, bf16 or fp32" },
        { "loop-order", { "--dtype", "e5m2" }, "--dtype e5m2: use fp16, bf16 or fp32" },
        { "fp8-outliers", { "--q", "1,2,3", "--k", "1,2,3" }, "power of two" },
        { "fp8-outliers", { "--q", "1,2", "--k", "1,2,3,4" }, "the same d" },
        { "fp8-outliers", { "--q", "1,100", "--k", "1,2" }, "--amax 100" },
        { "tiling-budget", { "--algo", "naive" }, "--algo" },
        { "tiling-budget", { "--M", "1" }, "B_c = 0" },
        { "tiling-budget", { "--d", "-3" }, "--d" },
        { "gpu-time", { "--d", "96" }, "--d 96" },
        { "gpu-time", { "--gpu", "tpu" }, "--gpu tpu" },
        { "l2-bytes", { "--algo", "naive" }, "--algo naive" },
        { "l2-bytes", { "--l2", "0" }, "--l2" },
        { "l2-bytes", { "--l2", "inf" }, "against an unbounded one itself" },
        { "l2-bytes", { "--N", "32768", "--heads", "256" }, "fewer heads" },
        { "ring", { "--N", "100" }, "a multiple of 2P = 8" },
        { "ring", { "--P", "8", "--N", "128" }, "at least 32 P = 256" },
        { "ring", { "--link", "wifi" }, "--link wifi: no such link" },
        { "ring", { "--P", "1" }, "--P" },
        { "atomic-dq", { "--N", "8" }, "--N" },
        { "atomic-dq", { "--order", "0" }, "--order" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        run_lesson(cases[k].lesson, cases[k].args);
        if (g_code != 2 || !strstr(g_err, cases[k].says) || g_out[0])
            fail_msg("%s: exit %d (want 2), stderr \"%s\" (want \"%s\" in it), stdout "
                     "%zu bytes (want 0)", g_cmd, g_code, g_err, cases[k].says,
                     strlen(g_out));
    }
}

/* ---- grading the learner's answers ------------------------------------------ */

static void expect(const char *needle)
{
    if (!strstr(g_out, needle))
        fail_msg("%s: output lacks \"%s\"; it is:\n%s", g_cmd, needle, g_out);
}

/* The idealised answer of a concept counts as right and is explained; known
 * mistakes (bytes counted as elements, the article's sum) are diagnosed; a
 * count is judged exactly. The defaults: N = 1024, d = 64, M = 96K, fp16. */
static void test_graded_answers(void **state)
{
    (void)state;
    /* io-complexity, step 5: N doubles; 4 is the N^2 terms' factor. */
    sim_shape sh = { .N = 1024, .d = 64, .M = 98304, .dtype = SIM_FP16 };
    double b[2];
    for (int k = 0; k < 2; k++) {
        sim_shape s = sh;
        s.N = k ? 2048 : 1024;
        sim_plan p;
        sim_counts c;
        const int64_t t = sim_report_default_tiles(&s);    /* the report's tiles, as the lesson's */
        assert_int_equal(sim_plan_choose(SIM_NAIVE, &s, NULL, SIM_PLAN_USER, t, t, &p, NULL, 0), 0);
        assert_int_equal(sim_theory_counts(&p, &s, &c), 0);
        b[k] = (double)(sim_counts_read_bytes(&c, s.dtype) + sim_counts_write_bytes(&c, s.dtype));
    }
    assert_true(b[1] / b[0] < 4.0 && !near(b[1] / b[0], 4.0));
    char want[256];
    snprintf(want, sizeof want, "you said 4, and the exact answer is %.6g. 4 is what the N^2",
             b[1] / b[0]);
    run_lesson_in("io-complexity", "\n\n\n\n\n\n\n\n4\n", NULL);
    assert_int_equal(g_code, 0);
    expect("Right in idea: ");
    expect(want);

    /* io-complexity, step 3: N^2 d^2 / M with M = 98,304 B taken as elements
     * is 1024^2 64^2 / 98304 = 43,690.7, half the answer. */
    run_lesson_in("io-complexity", "\n\n\n\n43690.7\n", NULL);
    assert_int_equal(g_code, 0);
    expect("you said 43690.7. That takes M in bytes;");

    /* tiling-budget, step 1: Q_i of 64 x 64 fp16 is 8,192 B; 4,096 counts
     * elements. Step 3: the article's 98,304 B leaves S_ij out. */
    run_lesson_in("tiling-budget", "4096\n", NULL);
    assert_int_equal(g_code, 0);
    expect("Not quite: the answer is 8192; you said 4096. That counts elements;");
    run_lesson_in("tiling-budget", "\n\n\n\n98304\n", NULL);
    assert_int_equal(g_code, 0);
    expect("Not quite: the answer is 131072; you said 98304. That is the article's own\n"
           "total, which is Q_i + K_j + V_j alone");

    /* causal, step 1: T = 16 blocks a side visit T(T+1)/2 = 136 pairs; 137 is
     * wrong, and not "0.74% of the answer". */
    run_lesson_in("causal", "137\n", NULL);
    assert_int_equal(g_code, 0);
    expect("Not quite: the answer is 136; you said 137.\n");
    if (strstr(g_out, "of the answer"))
        fail_msg("%s: a count's miss given as a percentage:\n%s", g_cmd, g_out);
}

/* io-complexity, step 4 asks how many times the lower bound FA2 moves: no
 * earlier line may show that multiple. */
static void test_io_question_before_value(void **state)
{
    (void)state;
    run_ok("io-complexity", NULL);
    const char *q = strstr(g_out, "Question: How many times the lower bound");
    assert_non_null(q);
    double v;
    assert_int_equal(sscanf(strstr(q, "Answer: "), "Answer: %lf", &v), 1);
    char shown[32];
    snprintf(shown, sizeof shown, "%.2f", v);
    const char *at = strstr(g_out, shown);
    if (at && at < q)
        fail_msg("%s: the answer %s is shown before its question:\n%.*s", g_cmd, shown,
                 (int)(q - g_out), g_out);
}

/* Mistakes met in a classroom get a sentence each; an answer rounded to the
 * digits typed is right; the report's own figure is the lesson's answer. */
static void test_classic_mistakes(void **state)
{
    (void)state;
    /* causal at N = 1024, blocks 64: T = 16, T^2/2 = 128 is not T(T+1)/2 =
     * 136; the block saving 256/136 = 1.882 typed as 1.9 is it rounded; the
     * block saving reused as the byte saving (1.88) is diagnosed. */
    const double saving = 256.0 / 136.0;
    assert_false(fabs(1.9 - saving) <= 0.005 * saving);
    run_lesson_in("causal", "128\n\n\n1.9\n\n1.88\n", NULL);
    assert_int_equal(g_code, 0);
    expect("Not quite: the answer is 136; you said 128. That is T^2/2, half the grid.");
    char want[256];
    snprintf(want, sizeof want, "Right: the answer is %.6g; you said 1.9, which is it rounded "
             "to 1 decimal.", saving);
    expect(want);
    expect("you said 1.88. That is the block saving,\nreused.");
    expect("You answered 1 of 3 questions right on the first try.");

    /* loop-order on the report's 64 x 64 tiles: FA1 writes O (T_c + 1) N d =
     * 17 x 65,536 = 1,114,112 elements; twice that is fp16 bytes. */
    run_lesson_in("loop-order", "\n\n\n2228224\n", NULL);
    assert_int_equal(g_code, 0);
    expect("Not quite: the answer is 1114112; you said 2228224. That counts bytes;");

    /* io-complexity: the report's FA2 / standard at the defaults. */
    run_lesson_in("io-complexity", "\n\n0.3473\n", NULL);
    assert_int_equal(g_code, 0);
    expect("you said 0.3473: off by");
    if (strstr(g_out, "Not quite: the answer is 0.3"))
        fail_msg("%s: the report's figure is judged wrong:\n%s", g_cmd, g_out);
}

/* "12,845,056" as a number. */
static double uncomma(const char *t)
{
    char digits[64];
    size_t n = 0;
    for (; *t && n + 1 < sizeof digits; t++)
        if (*t != ',')
            digits[n++] = *t;
    digits[n] = '\0';
    return strtod(digits, NULL);
}

/* A row of the report's traffic table: the numbers after label, one per
 * loop order (naive, fa1, fa2), thousands commas allowed. */
static void report_row(const char *label, double v[3])
{
    const char *p = strstr(g_out, label);
    if (!p)
        fail_msg("%s: no \"%s\" row", g_cmd, label);
    p += strlen(label);
    for (int k = 0; k < 3; k++) {
        char digits[64];
        size_t n = 0;
        while (*p == ' ')
            p++;
        for (; *p && strchr("0123456789,", *p) && n + 1 < sizeof digits; p++)
            if (*p != ',')
                digits[n++] = *p;
        digits[n] = '\0';
        v[k] = strtod(digits, NULL);
    }
}

/* The lessons that compare loop orders' bytes print the report's figures:
 * the same bytes per loop order as `fasim` on the same problem. */
static void test_lessons_agree_with_report(void **state)
{
    (void)state;
    static const char *const cases[][6] = {
        { "--N", "1024", "--d", "64", "--M", "96K" },
        { "--N", "4096", "--d", "64", "--M", "192K" },
        { "--N", "512", "--d", "128", "--M", "64K" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *argv[12] = { (char *)g_fasim };
        for (int k = 0; k < 6; k++)
            argv[1 + k] = (char *)cases[c][k];
        argv[7] = "--count-only";
        argv[8] = NULL;
        run_argv(argv, NULL);
        assert_int_equal(g_code, 0);
        double rd[3], wr[3], rep[3];
        report_row("\n  bytes read", rd);
        report_row("\n  bytes written", wr);
        for (int k = 0; k < 3; k++)
            rep[k] = rd[k] + wr[k];
        const char *args[7] = { cases[c][0], cases[c][1], cases[c][2], cases[c][3],
                                cases[c][4], cases[c][5], NULL };
        run_ok("io-complexity", args);
        static const char *const rows[3] = { "\n  naive ", "\n  fa1 ", "\n  fa2 " };
        for (int k = 0; k < 3; k++) {   /* order, B_r x B_c, elements, bytes */
            const char *p = strstr(g_out, rows[k]);
            if (!p)
                fail_msg("%s: no row%s", g_cmd, rows[k]);
            char order[16], x[4], elems[32], bytes[32];
            long long br, bc;
            assert_int_equal(sscanf(p, " %15s %lld %3s %lld %31s %31s", order, &br, x, &bc,
                                    elems, bytes), 6);
            check(rows[k] + 3, uncomma(bytes), rep[k]);
        }
        double v[MAX_ANSWERS];
        need_answers(v, 7);
        check("FA2 / standard", v[1], rep[2] / rep[0]);
        run_ok("loop-order", args);
        const char *p = strstr(g_out, "\n  bytes ");
        char b1[32], b2[32];
        if (!p || sscanf(p, " bytes %31s %31s", b1, b2) != 2)
            fail_msg("%s: no bytes line", g_cmd);
        const double fa1 = uncomma(b1), fa2 = uncomma(b2);
        check("loop-order's FA1 bytes", fa1, rep[1]);
        check("loop-order's FA2 bytes", fa2, rep[2]);
    }
}

/* io-complexity asks what fraction FA2 moves after it shows both byte
 * counts, in the question's step, and before it shows the fraction. */
static void test_io_fraction_after_data(void **state)
{
    (void)state;
    run_ok("io-complexity", NULL);
    const char *q = strstr(g_out, "Question: FlashAttention-2 moves what fraction");
    assert_non_null(q);
    const char *step = strstr(g_out, "Step 2 of ");
    assert_non_null(step);
    assert_true(step < q);
    const char *nv = strstr(step, "\n  naive "), *f2 = strstr(step, "\n  fa2 ");
    if (!nv || !f2 || nv > q || f2 > q)
        fail_msg("%s: the bytes of standard attention and FA2 are not shown before the "
                 "question:\n%.*s", g_cmd, (int)(q - step), step);
    double v[MAX_ANSWERS];
    need_answers(v, 7);
    char shown[32];
    snprintf(shown, sizeof shown, "%.4f", v[1]);
    const char *at = strstr(g_out, shown);
    if (at && at < q)
        fail_msg("%s: the fraction %s is shown before its question", g_cmd, shown);
}

/* Every step of every lesson, at its default options, fits a 24-line
 * terminal before each prompt: from the step's heading to its question's
 * prompt, and from the answer to the next prompt (the "Answer:" line of
 * --script stands where the learner's answer goes). */
static void test_steps_fit_24_lines(void **state)
{
    (void)state;
    int count;
    const lesson_def *const *all = lesson_all(&count);
    for (int k = 0; k < count; k++) {
        run_ok(all[k]->name, NULL);
        int line = 0, from = -1;
        const char *from_text = NULL;
        for (const char *p = g_out; *p; line++) {
            const char *nl = strchr(p, '\n');
            const int head = !strncmp(p, "Step ", 5) && strstr(p, " of ") &&
                             (!nl || strstr(p, " of ") < nl);
            const int ans = !strncmp(p, "Answer: ", 8);
            const int end = !strncmp(p, "End of lesson", 13);
            if ((head || end || ans) && from >= 0) {
                /* to a heading: the lines so far and the prompt; to an answer:
                 * the lines up to it, the answer line being the prompt's */
                const int lines = line - from + 1;
                if (lines > 24)
                    fail_msg("fasim lesson %s --script: %d lines before the prompt at line "
                             "%d, from \"%.60s\"", all[k]->name, lines, line + 1, from_text);
            }
            if (head || ans) {
                from = line;
                from_text = p;
            }
            if (!nl)
                break;
            p = nl + 1;
        }
    }
}

/* A worksheet question stands on what the worksheet shows: it does not
 * point back ("that factor") at text the worksheet leaves out. */
static void test_worksheet_questions_stand_alone(void **state)
{
    (void)state;
    static const char *const back[] = { "that factor", "that value", "that number",
                                        "that sum", "that ratio", "that count", "this factor",
                                        "those " };
    int count;
    const lesson_def *const *all = lesson_all(&count);
    for (int k = 0; k < count; k++) {
        char *argv[] = { (char *)g_fasim, "lesson", (char *)all[k]->name, "--worksheet", NULL };
        run_argv(argv, NULL);
        assert_int_equal(g_code, 0);
        for (const char *q = strstr(g_out, "**Question "); q; q = strstr(q + 1, "**Question ")) {
            const char *nl = strchr(q, '\n');
            const size_t len = nl ? (size_t)(nl - q) : strlen(q);
            char text[512];
            snprintf(text, sizeof text, "%.*s", (int)len, q);
            for (size_t w = 0; w < sizeof back / sizeof back[0]; w++)
                if (strstr(text, back[w]))
                    fail_msg("fasim lesson %s --worksheet: \"%s\" points back with \"%s\" at "
                             "text the worksheet leaves out", all[k]->name, text, back[w]);
        }
    }
}

/* ---- lessons 10 and 11: the GPU model's numbers --------------------------------- */

static sim_gm_result gpu_pass(sim_algo a, sim_pass q, const sim_shape *base, uint64_t l2)
{
    sim_gm_result r;
    char err[1024];
    if (gm_util_pass(a, q, base, l2, &r, err, sizeof err) != 0)
        fail_msg("%s", err);
    return r;
}

/* Lesson 10's answers are the model's: FA1's time over FA2's, FA2's forward
 * blocks, the SMs FA1's backward keeps busy, the A100's 312 / 19.5. */
static void test_gpu_time_is_the_model(void **state)
{
    (void)state;
    static const int64_t cases[][4] = { { 1024, 64, 16, 1 }, { 4096, 128, 4, 2 },
                                        { 2048, 64, 32, 8 } };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const sim_shape sh = { .N = cases[c][0], .d = cases[c][1], .dtype = SIM_FP16,
                               .heads = cases[c][2], .batch = cases[c][3] };
        const uint64_t l2 = sim_gpu_find("a100")->l2_bytes;
        sim_gm_result r[2][2];
        for (int a = 0; a < 2; a++)
            for (int q = 0; q < 2; q++)
                r[a][q] = gpu_pass(a ? SIM_FA2 : SIM_FA1, (sim_pass)q, &sh, l2);
        char sN[32], sd[32], sH[32], sB[32];
        snprintf(sN, 32, "%lld", (long long)sh.N);
        snprintf(sd, 32, "%lld", (long long)sh.d);
        snprintf(sH, 32, "%lld", (long long)sh.heads);
        snprintf(sB, 32, "%lld", (long long)sh.batch);
        const char *args[] = { "--N", sN, "--d", sd, "--heads", sH, "--batch", sB, NULL };
        run_ok("gpu-time", args);
        double v[MAX_ANSWERS];
        need_answers(v, 4);
        check("FA1 time / FA2 time", v[0], (r[0][0].time_s + r[0][1].time_s) /
                                           (r[1][0].time_s + r[1][1].time_s));
        check("FA2 forward blocks", v[1], (double)r[1][0].blocks);
        check("SMs busy, FA1 backward", v[2], (double)r[0][1].sms_busy);
        check("tensor peak / FP32 peak", v[3], 312.0 / 19.5);
        /* FA2's forward: a block per query block of each head (closed form). */
        check("FA2 forward blocks, closed form", v[1],
              (double)(cdiv(sh.N, 128) * sh.heads * sh.batch));
        /* Step 3 says FA1 leaves SMs idle only where it does (matched on
         * the text with its line breaks made spaces). */
        static char flat[sizeof g_out];
        for (size_t k = 0; k < sizeof flat; k++)
            flat[k] = g_out[k] == '\n' ? ' ' : g_out[k];
        const int idle = r[0][1].sms_busy < sim_gpu_find("a100")->sms;
        if ((strstr(flat, "Here FA1's grid is too short") != NULL) != idle ||
            (strstr(flat, "Here FA1's grid fills every SM") != NULL) == idle)
            fail_msg("%s: step 3's text disagrees with %d SMs busy\n%s", g_cmd,
                     r[0][1].sms_busy, g_out);
    }
}

/* Lesson 11's answers: the two-level count in GB, DRAM = count with no L2,
 * the hit rate with the preset's L2, and its DRAM over the unbounded L2's. */
static void test_l2_bytes_is_the_model(void **state)
{
    (void)state;
    static const struct { const char *algo; int64_t N, heads, batch; uint64_t l2; } cases[] = {
        { "fa2", 1024, 16, 8, 0 }, { "fa1", 2048, 8, 2, UINT64_C(8) << 20 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const sim_algo a = cases[c].algo[2] == '1' ? SIM_FA1 : SIM_FA2;
        /* causal, as the lesson's GPT-2 (a decoder) */
        const sim_shape sh = { .N = cases[c].N, .d = 64, .dtype = SIM_FP16, .causal = 1,
                               .heads = cases[c].heads, .batch = cases[c].batch };
        const uint64_t l2 = cases[c].l2 ? cases[c].l2 : sim_gpu_find("a100")->l2_bytes;
        const uint64_t l2s[3] = { l2, 0, SIM_GM_L2_INFINITE };
        double dram[3] = { 0, 0, 0 }, counted = 0, rd = 0, hit = 0;
        for (int k = 0; k < 3; k++)
            for (int q = 0; q < 2; q++) {
                const sim_gm_result r = gpu_pass(a, (sim_pass)q, &sh, l2s[k]);
                dram[k] += (double)(r.dram_read_bytes + r.dram_write_bytes);
                if (k == 1)
                    counted += (double)(r.hbm_read_bytes + r.hbm_write_bytes);
                if (k == 0) {
                    rd += (double)r.l2_read_bytes;
                    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
                        hit += (double)r.hit_bytes[t];
                }
            }
        char sN[32], sH[32], sB[32], sL[32];
        snprintf(sN, 32, "%lld", (long long)sh.N);
        snprintf(sH, 32, "%lld", (long long)sh.heads);
        snprintf(sB, 32, "%lld", (long long)sh.batch);
        snprintf(sL, 32, "%llu", (unsigned long long)l2);
        const char *args[] = { "--algo", cases[c].algo, "--N", sN, "--heads", sH, "--batch", sB,
                               cases[c].l2 ? "--l2" : NULL, sL, NULL };
        run_ok("l2-bytes", args);
        double v[MAX_ANSWERS];
        need_answers(v, 4);
        check("two-level GB", v[0], counted / 1e9);
        check("DRAM / counted with no L2", v[1], 1.0);
        assert_true(dram[1] == counted);   /* an L2 of 0 bytes gives the count back */
        check("L2 hit rate", v[2], hit / rd);
        check("DRAM, L2 / unbounded", v[3], dram[0] / dram[2]);
    }
}

/* ---- the checker proves itself ---------------------------------------------- */

/* At N = 1024 with 64 x 64 blocks the saving is 32/17; the article's "about 2x"
 * must not pass the comparison that every random case above relies on. */
static void test_checker_rejects_the_article(void **state)
{
    (void)state;
    const char *args[] = { "--N", "1024", "--block", "64", NULL };
    run_ok("causal", args);
    double v[MAX_ANSWERS];
    need_answers(v, 3);
    assert_true(near(v[1], 32.0 / 17.0));
    assert_false(near(v[1], 2.0));
    assert_false(near(v[0], 128.0));   /* T^2 / 2 is not T(T+1)/2 = 136 */
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s FASIM GOLDEN_DIR\n", argv[0]);
        return 2;
    }
    g_fasim = argv[1];
    g_golden = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_lesson_run_api),
        cmocka_unit_test(test_tiling_random),
        cmocka_unit_test(test_io_random),
        cmocka_unit_test(test_loop_order_random),
        cmocka_unit_test(test_causal_random),
        cmocka_unit_test(test_block_sparse_random),
        cmocka_unit_test(test_fp8_outliers_random),
        cmocka_unit_test(test_gpu_time_is_the_model),
        cmocka_unit_test(test_l2_bytes_is_the_model),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_checker_rejects_the_article),
        cmocka_unit_test(test_graded_answers),
        cmocka_unit_test(test_io_question_before_value),
        cmocka_unit_test(test_classic_mistakes),
        cmocka_unit_test(test_lessons_agree_with_report),
        cmocka_unit_test(test_io_fraction_after_data),
        cmocka_unit_test(test_steps_fit_24_lines),
        cmocka_unit_test(test_worksheet_questions_stand_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
