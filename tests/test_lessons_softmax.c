/*
 * test_lessons_softmax.c — lessons 1-5 (softmax-overflow, online-softmax, merge,
 * online-attention, a-common-bug), end to end.
 *
 * argv[1] is the fasim binary, argv[2] the folder of golden files
 * (tests/golden). The binary runs with fork/execv (no shell), stdin from a
 * file holding the test's input, stdout and stderr captured into files and
 * read into static buffers, and an alarm that survives execv, so a hang fails
 * the case. In-process runs go through lesson_run with a memstream.
 *
 * The cases:
 *   - golden: each lesson's --script output at its defaults, byte for byte
 *     (FASIM_UPDATE_GOLDEN=1 rewrites the files instead); lesson_run in
 *     process prints the same; no line is wider than 78 columns;
 *   - random inputs: each lesson runs on seeded random inputs, and the numbers
 *     it prints (its result lines and every "Answer:") are parsed and compared
 *     with values recomputed here from reference/ (bit for bit where the
 *     lesson prints float32 to 9 digits, to the printed precision otherwise);
 *     lesson 5's buggy update is recomputed independently in float64 from the
 *     article's formula;
 *   - piped answers: right and wrong answers to lesson 2, and the feedback;
 *     b shows the previous step again, the same text; q quits with 0;
 *   - bad input: exit status 2, one message on stderr that names the
 *     problem, nothing on stdout; the list and --help.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lesson.h"
#include "ref_oracle.h"
#include "ref_rng.h"
#include "ref_tile.h"
#include "sim.h"
#include "test_util.h"

#define RUN_TIMEOUT_S TU_RUN_TIMEOUT_S
#define MAX_ARGS 24

static const char *g_fasim, *g_golden;
static char g_out[1 << 18], g_err[1 << 14];   /* the last run's stdout, stderr */
static int g_code;                           /* its exit status (-1: a signal) */
static char g_cmd[4096];                     /* its command line, for messages */

static const char *const NAMES[5] = { "softmax-overflow", "online-softmax", "merge",
                                      "online-attention", "a-common-bug" };

/* ---- running ---------------------------------------------------------------- */

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
}

/* fasim ARGS... with `input` on stdin; args is NULL-terminated. */
static void run_bin(const char *input, const char *const *args)
{
    char *argv[MAX_ARGS + 2];
    int n = 0, off = snprintf(g_cmd, sizeof g_cmd, "fasim");
    argv[n++] = (char *)g_fasim;
    for (int k = 0; args[k]; k++) {
        assert_true(n < MAX_ARGS);
        argv[n++] = (char *)args[k];
        if (off < (int)sizeof g_cmd)
            off += snprintf(g_cmd + off, sizeof g_cmd - (size_t)off, " '%s'", args[k]);
    }
    argv[n] = NULL;
    char in_path[512], out_path[512], err_path[512];
    tu_path(in_path, sizeof in_path, "stdin.txt");
    tu_path(out_path, sizeof out_path, "stdout.txt");
    tu_path(err_path, sizeof err_path, "stderr.txt");
    assert_int_equal(tu_write_file(in_path, input ? input : "", input ? strlen(input) : 0), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int i = open(in_path, O_RDONLY);
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (i < 0 || o < 0 || e < 0)
            _exit(126);
        dup2(i, 0);
        dup2(o, 1);
        dup2(e, 2);
        alarm(RUN_TIMEOUT_S);
        execv(g_fasim, argv);
        _exit(127);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    g_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    slurp(out_path, g_out, sizeof g_out);
    slurp(err_path, g_err, sizeof g_err);
    if (g_code < 0)
        fail_msg("%s: killed by signal %d", g_cmd, WTERMSIG(st));
}

/* lesson_run(NAME, --script, args...) in process, output into g_out. */
static void run_api(const char *name, const char *const *args)
{
    int argc = 0;
    while (args[argc])
        argc++;
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    lesson_run_opts o = { 1, stdin, out, argc, (char **)args, LESSON_HANDOUT_NONE };
    const lesson_def *def = lesson_find(name);
    assert_non_null(def);
    g_code = lesson_run(def, &o);
    fclose(out);
    int off = snprintf(g_cmd, sizeof g_cmd, "lesson_run(%s --script", name);
    for (int k = 0; k < argc && off < (int)sizeof g_cmd; k++)
        off += snprintf(g_cmd + off, sizeof g_cmd - (size_t)off, " %s", args[k]);
    if (off < (int)sizeof g_cmd)
        snprintf(g_cmd + off, sizeof g_cmd - (size_t)off, ")");
    size_t n = len < sizeof g_out - 1 ? len : sizeof g_out - 1;
    memcpy(g_out, buf, n);
    g_out[n] = '\0';
    free(buf);
    if (g_code != 0)
        fail_msg("%s returned %d", g_cmd, g_code);
}

static void expect(const char *needle)
{
    if (!strstr(g_out, needle))
        fail_msg("%s: output lacks \"%s\"; it is:\n%s", g_cmd, needle, g_out);
}

static int count(const char *hay, const char *needle)
{
    int c = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        c++;
    return c;
}

/* ---- parsing what a lesson printed -------------------------------------------- */

/* The text right after the k-th (0-based) occurrence of label at or after
 * `from` (the start of a section, or NULL for all of the output). */
static const char *after(const char *from, const char *label, int k)
{
    const char *p = from ? from : g_out;
    for (int i = 0; p && i <= k; i++) {
        p = strstr(p, label);
        if (p && i < k)
            p += strlen(label);
    }
    if (!p)
        fail_msg("%s: no \"%s\" (#%d) in:\n%s", g_cmd, label, k + 1, g_out);
    return p + strlen(label);
}

/* The value after "name = " on the line that starts at p. */
static float field(const char *p, const char *name)
{
    const char *eol = strchr(p, '\n');
    char key[32];
    snprintf(key, sizeof key, "%s = ", name);
    const char *q = strstr(p, key);
    if (!q || (eol && q > eol))
        fail_msg("%s: no %s on the line \"%.*s\"", g_cmd, key, eol ? (int)(eol - p) : 80, p);
    return strtof(q + strlen(key), NULL);
}

/* Every "Answer: X" in order; returns how many. */
static int answers(double *a, int cap)
{
    int n = 0;
    for (const char *p = g_out; (p = strstr(p, "\nAnswer: ")) && n < cap; p += 9)
        a[n++] = strtod(p + 9, NULL);
    return n;
}

static void same_bits(const char *what, float got, float want)
{
    if (ref_f2u(got) != ref_f2u(want))
        fail_msg("%s: %s printed %.9g, reference gives %.9g", g_cmd, what, got, want);
}

static void close_to(const char *what, double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fmax(fabs(want), 1e-30)))
        fail_msg("%s: %s printed %.9g, reference gives %.9g", g_cmd, what, got, want);
}

/* A comma list of floats, each to 9 digits (exact when parsed back). */
static void list(char *buf, size_t len, const float *x, int n)
{
    size_t off = 0;
    for (int k = 0; k < n && off < len; k++)
        off += (size_t)snprintf(buf + off, len - off, "%s%.9g", k ? "," : "", x[k]);
}

/* Uniform in [-r, r] on a grid of 1/16: exact in float, distinct maxima. */
static float grid(uint64_t *s, int r)
{
    return (float)tu_rand_range(s, -16 * r, 16 * r) / 16.0f;
}

/* ---- golden files --------------------------------------------------------------- */

static void check_width(const char *text, const char *what)
{
    int line = 1, col = 0;
    for (const char *p = text; *p; p++) {
        if (*p == '\n') {
            line++;
            col = 0;
        } else if ((col += ((unsigned char)*p & 0xc0) != 0x80) > 78) {
            fail_msg("%s: line %d is wider than 78 columns", what, line);
        }
    }
}

static void test_golden(void **state)
{
    (void)state;
    static char want[1 << 18];
    for (int k = 0; k < 5; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/lesson_%s.txt", g_golden, NAMES[k]);
        run_bin(NULL, (const char *[]){ "lesson", NAMES[k], "--script", NULL });
        assert_int_equal(g_code, 0);
        assert_string_equal(g_err, "");
        if (getenv("FASIM_UPDATE_GOLDEN")) {
            assert_int_equal(tu_write_file(path, g_out, strlen(g_out)), 0);
            continue;
        }
        slurp(path, want, sizeof want);
        if (strcmp(g_out, want) != 0) {
            size_t i = 0;
            while (g_out[i] && g_out[i] == want[i])
                i++;
            fail_msg("%s differs from %s at byte %zu:\n--- got ---\n%.200s\n--- want ---\n"
                     "%.200s\n(FASIM_UPDATE_GOLDEN=1 rewrites the golden files)", g_cmd,
                     path, i, g_out + (i > 40 ? i - 40 : 0), want + (i > 40 ? i - 40 : 0));
        }
        check_width(g_out, path);
        run_api(NAMES[k], (const char *[]){ NULL });
        if (strcmp(g_out, want) != 0)
            fail_msg("lesson_run(%s) prints other text than the binary", NAMES[k]);
    }
}

/* ---- random inputs ---------------------------------------------------------------- */

static void test_random_overflow(void **state)
{
    (void)state;
    uint64_t seed = 101;
    float x[16];
    char arg[1024];
    for (int t = 0; t < 40; t++) {
        int n = (int)tu_rand_range(&seed, 1, 12);
        for (int k = 0; k < n; k++)
            x[k] = grid(&seed, 130);
        list(arg, sizeof arg, x, n);
        run_api("softmax-overflow", (const char *[]){ "--x", arg, NULL });
        int n_inf = 0;
        for (int k = 0; k < n; k++)
            n_inf += isinf(ref_exp(x[k])) != 0;
        float m, l;
        ref_softmax_stats(x, n, &m, &l);
        const char *p = after(NULL, "  safe softmax:  ", 0);
        same_bits("m", field(p, "m"), m);
        same_bits("l", field(p, "l"), l);
        double a[8];
        assert_int_equal(answers(a, 8), 3);
        assert_int_equal((int)a[0], n_inf);
        close_to("l (answer)", a[1], l, 1e-5);
        assert_int_equal((int)a[2], 12 * n);
        if (n_inf)
            expect("so the sum is inf");
    }
}

static void test_random_online_softmax(void **state)
{
    (void)state;
    uint64_t seed = 202;
    ref_rng rng = ref_rng_seed(7);
    static float x[64], s[64];
    static char arg[2048], barg[16];
    for (int t = 0; t < 60; t++) {
        int n = (int)tu_rand_range(&seed, 1, 64), B = (int)tu_rand_range(&seed, 1, n);
        float scale = (float[]){ 0.5f, 4.0f, 40.0f }[t % 3];
        for (int k = 0; k < n; k++)
            x[k] = ref_rng_normalish(&rng) * scale;
        list(arg, sizeof arg, x, n);
        snprintf(barg, sizeof barg, "%d", B);
        run_api("online-softmax", (const char *[]){ "--x", arg, "--block", barg, NULL });
        float m, l, m1, l1;
        ref_softmax_online(x, n, B, s, &m, &l);
        ref_softmax_stats(x, n, &m1, &l1);
        const char *p = after(NULL, "  block by block:  ", 0);
        same_bits("m (blocks)", field(p, "m"), m);
        same_bits("l (blocks)", field(p, "l"), l);
        p = after(NULL, "  whole vector:    ", 0);
        same_bits("m (whole)", field(p, "m"), m1);
        same_bits("l (whole)", field(p, "l"), l1);
        /* the running state after each shown block, and the answers */
        const int T = (n + B - 1) / B, shown = T < 5 ? T : 5;
        double want[32], got[32];
        int nw = 0, grew = 0;
        float rm = -REF_INF, rl = 0.0f;
        for (int j = 0; j < T; j++) {
            int a = j * B, len = n - a < B ? n - a : B;
            float m_old = rm;
            memcpy(s, x + a, (size_t)len * sizeof *s);
            float alpha = ref_online_step(s, len, &rm, &rl);
            if (j >= shown)
                continue;
            char label[48];
            snprintf(label, sizeof label, "  after block %d:  ", j + 1);
            p = after(NULL, label, 0);
            close_to("running m", field(p, "m"), rm, 1e-6);
            close_to("running l", field(p, "l"), rl, 1e-6);
            if (j == 0)
                continue;
            want[nw++] = rm;
            if (rm > m_old && !grew++)
                want[nw++] = alpha;
            if (j == shown - 1)
                want[nw++] = rl;
        }
        assert_int_equal(answers(got, 32), nw);
        for (int k = 0; k < nw; k++)
            close_to("an answer", got[k], want[k], 1e-5);
        if (T > 5) {
            char label[48];
            snprintf(label, sizeof label, "  after block %d:  ", T);
            p = after(NULL, label, 0);
            close_to("final m", field(p, "m"), m, 1e-6);
            close_to("final l", field(p, "l"), l, 1e-6);
        }
    }
}

typedef struct {
    float m, l, acc;
} mstate;

static mstate mpart(const float *x, const float *v, int a, int b)
{
    float s[64];
    mstate r = { -REF_INF, 0.0f, 0.0f };
    memcpy(s, x + a, (size_t)(b - a) * sizeof *s);
    float alpha = ref_online_step(s, b - a, &r.m, &r.l);
    ref_pv_acc_row(&r.acc, 1, alpha, s, v + a, b - a);
    return r;
}

static mstate mmerge(mstate a, mstate b)
{
    mstate r;
    ref_merge(a.m, a.l, &a.acc, b.m, b.l, &b.acc, 1, &r.m, &r.l, &r.acc);
    return r;
}

static void check_state(const char *label, mstate w)
{
    const char *p = after(NULL, label, 0);
    same_bits(label, field(p, "m"), w.m);
    same_bits(label, field(p, "l"), w.l);
    same_bits(label, field(p, "acc"), w.acc);
}

static void test_random_merge(void **state)
{
    (void)state;
    uint64_t seed = 303;
    float x[40], v[40];
    static char xa[1024], va[1024], pa[16];
    for (int t = 0; t < 40; t++) {
        int n = (int)tu_rand_range(&seed, 2, 40), P = (int)tu_rand_range(&seed, 2, n);
        for (int k = 0; k < n; k++) {
            x[k] = grid(&seed, 6);
            v[k] = grid(&seed, 3);
        }
        list(xa, sizeof xa, x, n);
        list(va, sizeof va, v, n);
        snprintf(pa, sizeof pa, "%d", P);
        run_api("merge", (const char *[]){ "--x", xa, "--v", va, "--parts", pa, NULL });
        const int h = n / 2;
        check_state("  merged:  ", mmerge(mpart(x, v, 0, h), mpart(x, v, h, n)));
        check_state("  B + A:   ", mmerge(mpart(x, v, h, n), mpart(x, v, 0, h)));
        mstate parts[40], chain = mpart(x, v, 0, n / P);
        for (int p = 0; p < P; p++)
            parts[p] = mpart(x, v, p * n / P, (p + 1) * n / P);
        for (int p = 1; p < P; p++)
            chain = mmerge(chain, parts[p]);
        check_state("  chain:   ", chain);
        int left = P, depth = 0;
        while (left > 1) {                       /* neighbours, the odd one waits */
            int k = 0;
            for (int p = 0; p + 1 < left; p += 2)
                parts[k++] = mmerge(parts[p], parts[p + 1]);
            if (left % 2)
                parts[k++] = parts[left - 1];
            left = k;
            depth++;
        }
        check_state("  tree:    ", parts[0]);
        assert_int_equal(depth, (int)ceil(log2((double)P)));
        double a[8];
        assert_int_equal(answers(a, 8), 3);
        assert_int_equal((int)a[2], depth);
        /* the merged output against float64 */
        double md = x[0], ld = 0, od = 0;
        for (int k = 1; k < n; k++)
            md = fmax(md, x[k]);
        for (int k = 0; k < n; k++) {
            ld += exp(x[k] - md);
            od += exp(x[k] - md) * v[k];
        }
        const char *p = after(NULL, "  tree:    ", 0);
        if (fabs(field(p, "O") - od / ld) > 1e-5)
            fail_msg("%s: tree O %.9g, float64 %.9g", g_cmd, field(p, "O"), od / ld);
    }
}

static void test_random_online_attention(void **state)
{
    (void)state;
    uint64_t seed = 404;
    static float Q[48 * 8], K[48 * 8], V[48 * 8], sc[48], s[48], o2[8], o1[8];
    static double O[48 * 8];
    for (int t = 0; t < 30; t++) {
        int N = (int)tu_rand_range(&seed, 1, 48), d = (int)tu_rand_range(&seed, 1, 8);
        int B = (int)tu_rand_range(&seed, 1, N), row = (int)tu_rand_range(&seed, 0, N - 1);
        uint64_t sd = (uint64_t)tu_rand_range(&seed, 0, 1000000);
        char a[5][32];
        snprintf(a[0], 32, "%d", N);
        snprintf(a[1], 32, "%d", d);
        snprintf(a[2], 32, "%d", B);
        snprintf(a[3], 32, "%d", row);
        snprintf(a[4], 32, "%llu", (unsigned long long)sd);
        run_api("online-attention", (const char *[]){ "--N", a[0], "--d", a[1], "--block",
                a[2], "--row", a[3], "--seed", a[4], NULL });
        sim_random_inputs(sd, N, d, SIM_FP32, Q, K, V);
        ref_tile_scores(Q + row * d, K, 1, N, d, 1.0f / sqrtf((float)d), sc);
        float m2 = -REF_INF, l2 = 0, m1 = -REF_INF, l1 = 0, alpha2 = 0;
        memset(o2, 0, sizeof o2);
        memset(o1, 0, sizeof o1);
        const int T = (N + B - 1) / B;
        for (int j = 0; j < T; j++) {
            int c0 = j * B, len = N - c0 < B ? N - c0 : B;
            memcpy(s, sc + c0, (size_t)len * sizeof *s);
            float alpha = ref_online_step(s, len, &m2, &l2);
            ref_pv_acc_row(o2, d, alpha, s, V + c0 * d, len);
            if (j == 1)
                alpha2 = alpha;
            memcpy(s, sc + c0, (size_t)len * sizeof *s);
            ref_fa1_step_row(s, len, V + c0 * d, d, o1, &m1, &l1);
        }
        ref_normalise_row(o2, d, l2);
        assert_int_equal(ref_oracle_attention_f(Q, K, V, N, d, 0, O, NULL), 0);
        const char *p2 = after(NULL, "  FA2:", 0), *p1 = after(NULL, "  FA1:", 0);
        for (int c = 0; c < d; c++) {
            char *end;
            float g2 = strtof(p2, &end);
            p2 = end;
            float g1 = strtof(p1, &end);
            p1 = end;
            same_bits("FA2 o", g2, o2[c]);
            same_bits("FA1 o", g1, o1[c]);
            if (fabs(g2 - O[row * d + c]) > 1e-5 || fabs(g1 - O[row * d + c]) > 1e-5)
                fail_msg("%s: o[%d] = %.9g / %.9g, oracle %.9g", g_cmd, c, g2, g1,
                         O[row * d + c]);
        }
        expect("FA2 the same bits, FA1 the same bits");
        double ans[4];
        int na = answers(ans, 4);
        assert_int_equal(na, T >= 2 ? 2 : 1);
        if (T >= 2)
            close_to("alpha of block 2", ans[0], alpha2, 1e-5);
        assert_int_equal((int)ans[na - 1], T * d);
    }
}

static void test_random_common_bug(void **state)
{
    (void)state;
    uint64_t seed = 505;
    float x[40], v[40], s[40];
    static char xa[1024], va[1024], ba[16];
    for (int t = 0; t < 40; t++) {
        int n = (int)tu_rand_range(&seed, 2, 40), B = (int)tu_rand_range(&seed, 1, n);
        for (int k = 0; k < n; k++) {
            x[k] = grid(&seed, 6);
            v[k] = grid(&seed, 3);
        }
        list(xa, sizeof xa, x, n);
        list(va, sizeof va, v, n);
        snprintf(ba, sizeof ba, "%d", B);
        run_api("a-common-bug", (const char *[]){ "--x", xa, "--v", va, "--block", ba,
                NULL });
        /* the article's recurrence, in float64, as its text writes it */
        double m = -INFINITY, l = 0, acc = 0, md = -INFINITY, ld = 0, od = 0;
        int part_at = 0;
        const int T = (n + B - 1) / B;
        for (int j = 0; j < T; j++) {
            int a = j * B, len = n - a < B ? n - a : B;
            double m_curr = -INFINITY, sum = 0, pv = 0;
            for (int k = a; k < a + len; k++)
                m_curr = fmax(m_curr, x[k]);
            double m_new = fmax(m, m_curr);
            for (int k = a; k < a + len; k++) {
                sum += exp(x[k] - m_new);
                pv += exp(x[k] - m_new) * v[k];
            }
            double c_old = j ? exp(m - m_new) : 0, c_curr = exp(m_curr - m_new);
            l = c_old * l + c_curr * sum;
            acc = c_old * acc + c_curr * pv;
            if (m_curr < m_new && !part_at)
                part_at = j + 1;
            m = m_new;
        }
        for (int k = 0; k < n; k++)
            md = fmax(md, x[k]);
        for (int k = 0; k < n; k++) {
            ld += exp(x[k] - md);
            od += exp(x[k] - md) * v[k];
        }
        float fm, fl;
        ref_softmax_online(x, n, B, s, &fm, &fl);
        const char *sec = after(NULL, "Where it lands", 0);
        const char *p = after(sec, "  correct:  ", 0);
        same_bits("correct m", field(p, "m"), fm);
        same_bits("correct l", field(p, "l"), fl);
        if (fabs(field(p, "O") - od / ld) > 1e-5)
            fail_msg("%s: correct O %.9g, float64 %.9g", g_cmd, field(p, "O"), od / ld);
        p = after(sec, "  buggy:    ", 0);
        close_to("buggy l", field(p, "l"), l, 1e-5);
        if (fabs(field(p, "O") - acc / l) > 1e-5)
            fail_msg("%s: buggy O %.9g, float64 of the article's formula %.9g", g_cmd,
                     field(p, "O"), acc / l);
        if (part_at && !(l < ld))
            fail_msg("%s: the article's l %.9g should be below the true %.9g", g_cmd, l, ld);
        double a[4];
        assert_true(answers(a, 4) >= 1);
        assert_int_equal((int)a[0], part_at);
    }
}

/* ---- answering through a pipe --------------------------------------------------- */

static void test_piped_answers(void **state)
{
    (void)state;
    /* steps 1 -> 2 -> 3; m right, alpha wrong; -> 4; m wrong, l close; on */
    run_bin("\n\n5\n0.5\n\n4\n1.58\n\n\n\n", (const char *[]){ "lesson", "online-softmax",
            NULL });
    assert_int_equal(g_code, 0);
    float x[6] = { 1, 3, 2, 5, 0, 4 }, s[6], m, l;
    ref_softmax_online(x, 6, 2, s, &m, &l);
    char want[256];
    expect("What is m after this block?\nYour answer (a number; Enter shows it): 5\n"
           "Right: 5.\n");
    snprintf(want, sizeof want, "Not quite: the answer is %.6g; you said 0.5, %.3g too "
             "high", ref_exp(3.0f - 5.0f), 0.5 - ref_exp(3.0f - 5.0f));
    expect(want);
    /* 4 is the block's largest entry, not the running maximum: diagnosed. */
    expect("Not quite: the answer is 5; you said 4. That is this block's largest entry.");
    snprintf(want, sizeof want, "Right: the answer is %.6g; you said 1.58: off by %.3g",
             l, 1.58 - l);
    expect(want);
    expect("You answered 2 of 4 questions right on the first try.\nEnd of lesson");
    assert_int_equal(count(g_out, "[Enter: next step"), 5);
}

/* A known mistake gets its diagnosis; a count or an index is judged exactly,
 * and a miss is not "a percentage of the answer". */
static void test_graded_answers(void **state)
{
    (void)state;
    /* online-softmax, block 2: m = max(3, 5); alpha with the sign flipped is
     * exp(5 - 3) = 7.389. */
    run_bin("\n\n5\n7.389\n", (const char *[]){ "lesson", "online-softmax", NULL });
    assert_int_equal(g_code, 0);
    char want[256];
    snprintf(want, sizeof want, "Not quite: the answer is %.6g; you said 7.389. You flipped "
             "the sign", exp(3.0 - 5.0));
    expect(want);
    /* a-common-bug's first question is a block index: block 2 is the first
     * whose maximum (2) is below the running one (4), so l parts there. */
    run_bin("3\n", (const char *[]){ "lesson", "a-common-bug", NULL });
    assert_int_equal(g_code, 0);
    expect("Not quite: the answer is 2; you said 3.\n");
    assert_int_equal(count(g_out, "of the answer"), 0);
    /* merge's depth is a count: 2.01 rounds is no near miss. */
    run_bin("\n\n\n\n\n2.01\n", (const char *[]){ "lesson", "merge", "--parts", "3",
            NULL });
    assert_int_equal(g_code, 0);
    expect("How many rounds deep is the tree for your parts?\nYour answer (a number; Enter "
           "shows it): 2.01\nNot quite: the answer is 2; you said 2.01.\n");
}

/* An answer rounded to the digits typed is right, and the exact value is
 * shown; a small expression is read as its value; text that is neither
 * gets one wrapped line of help. Going back and answering again leaves the
 * first try's count. */
static void test_rounded_and_expressions(void **state)
{
    (void)state;
    float x[6] = { 1, 3, 2, 5, 0, 4 }, s[6], m, l;
    ref_softmax_online(x, 6, 2, s, &m, &l);
    const double alpha = exp(3.0 - 5.0);
    assert_false(fabs(0.14 - alpha) <= 0.005 * alpha);     /* outside the tolerance */
    assert_false(fabs(1.6 - l) <= 0.005 * l);
    run_bin("\n\n5\n0.14\n\n5\n1.6\n\n\n\n", (const char *[]){ "lesson", "online-softmax",
            NULL });
    assert_int_equal(g_code, 0);
    char want[256];
    snprintf(want, sizeof want, "Right: the answer is %.6g; you said 0.14, which is it rounded "
             "to 2\ndecimals.", alpha);
    expect(want);
    snprintf(want, sizeof want, "Right: the answer is %.6g; you said 1.6, which is it rounded "
             "to 1 decimal.", (double)l);
    expect(want);
    expect("You answered 4 of 4 questions right on the first try.");
    /* One digit is a guess, not a rounding: 0.1 for 0.135 stays wrong. */
    run_bin("\n\n5\n0.1\n\n\n\n\n\n\n", (const char *[]){ "lesson", "online-softmax",
            NULL });
    expect("Not quite: the answer is 0.135335; you said 0.1,");
    run_bin("\n\n5\nexp (-2)\n\n\n\n\n\n\n", (const char *[]){ "lesson", "online-softmax",
            NULL });
    expect("exp (-2)\nRight: 0.135335.\n");
    run_bin("\n\n5\nexp(-2\n1/8\n\n\n\n\n\n\n", (const char *[]){ "lesson", "online-softmax",
            NULL });
    expect("exp(-2\nThat is not a number: type one, such as 0.1353 or 1e-3, or an expression, "
           "such\nas exp(-2), 1/8 or 2^10; or press Enter to see the answer.\n");
    expect("you said 1/8 = 0.125,");
    run_bin("\n\n5\n2^-3*2\n\n\n\n\n\n\n", (const char *[]){ "lesson", "online-softmax",
            NULL });
    expect("you said 2^-3*2 = 0.25,");
    /* wrong first, then back and right: the count keeps the first try */
    run_bin("\n\n4\nb\n\n5\n\n\n\n\n\n\n", (const char *[]){ "lesson", "online-softmax",
            NULL });
    expect("You answered 0 of 4 questions right on the first try.");
}

/* In --script text the question comes before the line that shows its value,
 * within the question's step. */
static void asked_before_shown(const char *question, const char *shown)
{
    const char *q = strstr(g_out, question);
    if (!q)
        fail_msg("%s: no question \"%s\"", g_cmd, question);
    const char *step = q;
    while (step > g_out && strncmp(step, "\nStep ", 6) != 0)
        step--;
    const char *end = strstr(q, "\nStep "), *v = strstr(step, shown);
    if (!v || v < q || (end && v > end))
        fail_msg("%s: \"%s\" is not shown after the question \"%s\" in its step", g_cmd,
                 shown, question);
}

static void test_question_before_value(void **state)
{
    (void)state;
    run_bin(NULL, (const char *[]){ "lesson", "online-softmax", "--script", NULL });
    assert_int_equal(g_code, 0);
    asked_before_shown("Question: What is l after this block?", "l_new = alpha * l_old");
    run_bin(NULL, (const char *[]){ "lesson", "a-common-bug", "--script", NULL });
    assert_int_equal(g_code, 0);
    asked_before_shown("Question: By what factor does the buggy code shrink",
                       "extra factor exp(m_curr - m_new) =");
}

static void test_back_and_quit(void **state)
{
    (void)state;
    run_bin("\nb\nq\n", (const char *[]){ "lesson", "online-softmax", NULL });
    assert_int_equal(g_code, 0);
    assert_int_equal(count(g_out, "Step 1 of 6:"), 2);
    assert_int_equal(count(g_out, "Step 2 of 6:"), 1);
    expect("(quit)\n");
    /* the step shown again is the same text */
    const char *a = strstr(g_out, "Step 1 of 6:"), *b = strstr(a + 1, "Step 1 of 6:");
    const char *ea = strstr(a, "[Enter"), *eb = strstr(b, "[Enter");
    assert_true(ea && eb && ea - a == eb - b);
    assert_memory_equal(a, b, (size_t)(ea - a));

    run_bin("\n\nq\n", (const char *[]){ "lesson", "2", NULL });   /* q at a question */
    assert_int_equal(g_code, 0);
    expect("Question: What is m after this block?\nYour answer (a number; Enter shows it): "
           "q\n(quit)\n");
    assert_int_equal(count(g_out, "Step 4 of 6"), 0);

    run_bin(NULL, (const char *[]){ "lesson", "merge", NULL });    /* stdin empty: on */
    assert_int_equal(g_code, 0);
    expect("Step 5 of 5: Summary");
}

/* ---- bad input, the list, --help --------------------------------------------------- */

static void test_bad_input(void **state)
{
    (void)state;
    static const struct {
        const char *args[8];
        const char *msg;
    } cases[] = {
        { { "lesson", "online-softmax", "--x", "", NULL },
          "fasim lesson online-softmax: --x is empty" },
        { { "lesson", "online-softmax", "--x", "1,a", NULL },
          "fasim lesson online-softmax: --x 1,a: entry 2 ('a') is not a number" },
        { { "lesson", "online-softmax", "--x", "nan", NULL }, "entry 1 is NaN" },
        { { "lesson", "online-softmax", "--x", "1,2,inf", NULL }, "not a finite" },
        { { "lesson", "online-softmax", "--block", "0", NULL },
          "fasim lesson online-softmax: --block 0: must be between 1 and 4096" },
        { { "lesson", "online-softmax", "--x", "1,2", "--block", "3", NULL },
          "--block 3 is larger than the vector (2 entries)" },
        { { "lesson", "online-softmax", "--bogus", "1", NULL }, "unknown option --bogus" },
        { { "lesson", "softmax-overflow", "--x", "1,,2", NULL }, "entry 2 is empty" },
        { { "lesson", "merge", "--v", "1,2", NULL }, "--v has 2 values but --x has 8" },
        { { "lesson", "merge", "--parts", "9", NULL }, "--parts 9 is more than the 8 keys" },
        { { "lesson", "online-attention", "--N", "0", NULL }, "--N 0: must be between 1" },
        { { "lesson", "online-attention", "--N", "4", "--row", "4", NULL },
          "--row 4: there are 4 rows" },
        { { "lesson", "a-common-bug", "--block", "x", NULL }, "--block x: not a whole number" },
        { { "lesson", "nope", NULL },
          "fasim lesson: unknown lesson 'nope'; run 'fasim lesson' to list them" },
        { { "lesson", "online-sofmax", "--script", NULL }, "did you mean 'online-softmax'?" },
        { { "lesson", "16", NULL }, "unknown lesson '16'" },
        { { "lesson", "--x", "1", NULL }, "comes before the lesson's name" },
        { { "lesson", "--script", NULL }, "--script needs a lesson" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        run_bin(NULL, cases[k].args);
        if (g_code != 2 || !strstr(g_err, cases[k].msg) || g_out[0] ||
            strncmp(g_err, "fasim lesson", 12) != 0 || count(g_err, "\n") != 1)
            fail_msg("%s: exit %d, stderr \"%s\", stdout \"%.80s\"; wanted 2, \"%s\", "
                     "nothing", g_cmd, g_code, g_err, g_out, cases[k].msg);
    }
}

static void test_list_and_help(void **state)
{
    (void)state;
    run_bin(NULL, (const char *[]){ "lesson", NULL });
    assert_int_equal(g_code, 0);
    for (int k = 0; k < 5; k++) {
        char row[64];
        snprintf(row, sizeof row, "\n%3d  %s ", k + 1, NAMES[k]);
        expect(row);
    }
    expect("\n  9  causal ");
    run_bin(NULL, (const char *[]){ "lesson", "--help", NULL });
    assert_int_equal(g_code, 0);
    expect("usage: fasim lesson");
    expect("\n  2  online-softmax ");
    run_bin(NULL, (const char *[]){ "lesson", "2", "--help", NULL });
    assert_int_equal(g_code, 0);
    expect("usage: fasim lesson online-softmax [--script|--worksheet|--answers] [options]");
    expect("  --block B   entries per block");
    run_bin(NULL, (const char *[]){ "lesson", "online-attention", "--help", NULL });
    expect("  --seed S");
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_lessons_softmax path/to/fasim path/to/golden\n");
        return 2;
    }
    g_fasim = argv[1];
    g_golden = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_random_overflow),
        cmocka_unit_test(test_random_online_softmax),
        cmocka_unit_test(test_random_merge),
        cmocka_unit_test(test_random_online_attention),
        cmocka_unit_test(test_random_common_bug),
        cmocka_unit_test(test_piped_answers),
        cmocka_unit_test(test_graded_answers),
        cmocka_unit_test(test_rounded_and_expressions),
        cmocka_unit_test(test_question_before_value),
        cmocka_unit_test(test_back_and_quit),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_list_and_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
