/*
 * test_gpu_cli.c — `fasim gpu` end to end. argv[1] is the fasim binary.
 *
 * Each case runs it with fork/execv (no shell), stdout and stderr captured in
 * files of the test's temporary directory, under an alarm so that a hang
 * fails instead of blocking the suite. The cases: --backend cpu reports all
 * three kernels bit-identical with equal counters; --json is well formed
 * (brackets balanced outside strings) and says the same; --out writes exactly
 * the bytes `fasim --compute --out` writes, from seeded and from .npy inputs;
 * the default backend without a device (or without a CUDA build) fails with
 * one line that names --backend cpu; bad usage exits 2.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim.h"
#include "sim_npy.h"
#include "test_util.h"

#define RUN_TIMEOUT_S TU_RUN_TIMEOUT_S
#define MAX_ARGS 48

static const char *g_fasim;

typedef struct {
    int code;                 /* exit status, or -1 when killed by a signal */
    char *out, *err;          /* captured, NUL-terminated, owned */
    size_t out_len;
} run_res;

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    *len = 0;
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (cap - n - 1 == 0) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

/* Run fasim with the NULL-terminated argument list (after argv[0]). */
static run_res run(const char *first, ...)
{
    char *args[MAX_ARGS];
    int n = 0;
    args[n++] = (char *)g_fasim;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && n < MAX_ARGS - 1; a = va_arg(ap, const char *))
        args[n++] = (char *)a;
    va_end(ap);
    args[n] = NULL;
    char po[512], pe[512];
    tu_path(po, sizeof po, "gpu_cli.out");
    tu_path(pe, sizeof pe, "gpu_cli.err");
    pid_t pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || fo < 0 || fe < 0)
            _exit(127);
        dup2(in, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        alarm(RUN_TIMEOUT_S);
        execv(g_fasim, args);
        _exit(127);
    }
    run_res r = { -1, NULL, NULL, 0 };
    int st = 0;
    if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
        r.code = WEXITSTATUS(st);
    size_t el;
    r.out = slurp(po, &r.out_len);
    r.err = slurp(pe, &el);
    if (r.code != 0 && r.code != 1 && r.code != 2)
        fprintf(stderr, "fasim exited %d; stderr:\n%s\n", r.code, r.err ? r.err : "");
    return r;
}

static void run_free(run_res *r)
{
    free(r->out);
    free(r->err);
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void test_cpu_all_identical(void **state)
{
    (void)state;
    run_res r = run("gpu", "--N", "96", "--d", "16", "--M", "16K", "--backend", "cpu",
                    "--repeat", "2", NULL);
    assert_int_equal(r.code, 0);
    assert_int_equal(count_of(r.out, "bit-identical to the simulator"), 3);
    assert_int_equal(count_of(r.out, "counters equal"), 3);
    assert_int_equal(count_of(r.out, "DIFFER"), 0);
    /* The CPU runs the kernels' source: its times are shown, as the CPU's,
     * and no speedup is made of them. */
    assert_null(strstr(r.out, "the speed of naive"));
    assert_int_equal(count_of(r.out, "on this CPU (no speedup"), 3);
    assert_non_null(strstr(r.out, "its\ntimes are not a GPU's"));
    assert_string_equal(r.err, "");
    run_free(&r);
}

/* Brackets balanced outside strings, one top-level object, no trailing junk. */
static int json_well_formed(const char *s)
{
    int depth = 0, in_str = 0, objects = 0;
    for (const char *p = s; *p; p++) {
        if (in_str) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_str = 0;
            continue;
        }
        if (*p == '"')
            in_str = 1;
        else if (*p == '{' || *p == '[')
            depth++;
        else if (*p == '}' || *p == ']') {
            if (--depth < 0)
                return 0;
            objects += depth == 0;
        } else if (depth == 0 && *p != '\n' && *p != ' ')
            return 0;
    }
    return depth == 0 && !in_str && objects == 1 && s[0] == '{';
}

static void test_cpu_json(void **state)
{
    (void)state;
    run_res r = run("gpu", "--N", "70", "--d", "8", "--M", "8K", "--causal", "--backend",
                    "cpu", "--json", "--repeat", "1", NULL);
    assert_int_equal(r.code, 0);
    assert_true(json_well_formed(r.out));
    assert_int_equal(count_of(r.out, "\"identical\": true"), 3);
    assert_int_equal(count_of(r.out, "\"counts_equal\": true"), 3);
    assert_int_equal(count_of(r.out, "\"equal\": false"), 0);
    assert_non_null(strstr(r.out, "\"backend\": \"cpu\""));
    assert_int_equal(count_of(r.out, "\"speedup_vs_naive\": null"), 3);
    run_free(&r);
    /* Without --repeat the CPU path times one run: its times are not a GPU's,
     * so five would only cost five times as long. */
    r = run("gpu", "--N", "64", "--d", "8", "--M", "8K", "--backend", "cpu", "--json", NULL);
    assert_int_equal(r.code, 0);
    assert_int_equal(count_of(r.out, "\"timed_runs\": 1,"), 3);
    run_free(&r);
}

static int same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = slurp(a, &la), *y = slurp(b, &lb);
    int same = x && y && la == lb && la > 128 && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* `fasim gpu --out` and `fasim --compute --out`: the same bytes. */
static void test_out_bytes_equal(void **state)
{
    (void)state;
    const char *algos[] = { "naive", "fa1", "fa2" };
    char a[512], b[512];
    tu_path(a, sizeof a, "kernel_O.npy");
    tu_path(b, sizeof b, "sim_O.npy");
    for (int k = 0; k < 3; k++) {
        run_res r1 = run("gpu", "--backend", "cpu", "--algo", algos[k], "--N", "77", "--d",
                         "12", "--M", "8K", "--causal", "--dtype", "bf16", "--seed", "5",
                         "--repeat", "1", "--out", a, NULL);
        run_res r2 = run("--algo", algos[k], "--N", "77", "--d", "12", "--M", "8K",
                         "--causal", "--dtype", "bf16", "--seed", "5", "--compute", "--out",
                         b, NULL);
        assert_int_equal(r1.code, 0);
        assert_int_equal(r2.code, 0);
        assert_true(same_file(a, b));
        run_free(&r1);
        run_free(&r2);
    }
}

/* Every head of a batch, GQA, decoding (N_k > N_q) under a causal window:
 * `fasim gpu --out` and `fasim --compute --out` write the same (B, H, N, d)
 * bytes, and the kernels launch the released grids: FA1 one block per
 * (batch, head), FA2 (T_r, B H). */
static void test_out_bytes_equal_heads(void **state)
{
    (void)state;
    const char *algos[] = { "naive", "fa1", "fa2" };
    const char *grid[] = { "(grid 3 x 8)", "8 thread blocks\n", "(grid 3 x 8)" };
    char a[512], b[512];
    tu_path(a, sizeof a, "kernel_O3.npy");
    tu_path(b, sizeof b, "sim_O3.npy");
    for (int k = 0; k < 3; k++) {
        run_res r1 = run("gpu", "--backend", "cpu", "--algo", algos[k], "--N", "45", "--Nk",
                         "70", "--d", "8", "--batch", "2", "--heads", "4", "--kv-heads", "2",
                         "--window", "24", "--Br", "16", "--Bc", "16", "--M", "8K", "--seed",
                         "3", "--out", a, NULL);
        run_res r2 = run("--algo", algos[k], "--N", "45", "--Nk", "70", "--d", "8", "--batch",
                         "2", "--heads", "4", "--kv-heads", "2", "--window", "24", "--Br", "16",
                         "--Bc", "16", "--M", "8K", "--seed", "3", "--compute", "--out", b,
                         NULL);
        assert_int_equal(r1.code, 0);
        assert_int_equal(r2.code, 0);
        assert_int_equal(count_of(r1.out, "bit-identical to the simulator (2,880 values"), 1);
        assert_int_equal(count_of(r1.out, "counters equal"), 1);
        assert_non_null(strstr(r1.out, "batch 2 x 4 query heads over 2 key/value heads, "
                                       "N_q = 45, N_k = 70, window 24"));
        assert_non_null(strstr(r1.out, grid[k]));
        assert_true(same_file(a, b));
        run_free(&r1);
        run_free(&r2);
    }
    run_res r = run("gpu", "--backend", "cpu", "--algo", "fa2", "--N", "40", "--d", "8",
                    "--heads", "3", "--kv-heads", "1", "--causal", "--M", "8K", "--json", NULL);
    assert_int_equal(r.code, 0);
    assert_true(json_well_formed(r.out));
    assert_non_null(strstr(r.out, "\"heads\": 3,"));
    assert_non_null(strstr(r.out, "\"kv_heads\": 1,"));
    assert_non_null(strstr(r.out, "\"grid_y\": 3,"));
    assert_int_equal(count_of(r.out, "\"identical\": true"), 1);
    run_free(&r);
}

/* Split-KV (decoding: 4 queries, 700 keys, GQA): FA2 once more in S = 4
 * splits, its partials' kernel and its combine, bit-identical to the
 * simulator's split run with equal counters; --out still writes the unsplit
 * run, byte for byte the report's. */
static void test_split_kv(void **state)
{
    (void)state;
    char a[512], b[512];
    tu_path(a, sizeof a, "kernel_O4.npy");
    tu_path(b, sizeof b, "sim_O4.npy");
    run_res r1 = run("gpu", "--backend", "cpu", "--algo", "fa2", "--Nq", "4", "--Nk", "700",
                     "--d", "32", "--heads", "8", "--kv-heads", "2", "--causal", "--splits", "4",
                     "--Bc", "64", "--out", a, NULL);
    run_res r2 = run("--algo", "fa2", "--Nq", "4", "--Nk", "700", "--d", "32", "--heads", "8",
                     "--kv-heads", "2", "--causal", "--splits", "4", "--Bc", "64", "--compute",
                     "--out", b, NULL);
    assert_int_equal(r1.code, 0);
    assert_int_equal(r2.code, 0);
    assert_non_null(strstr(r1.out, "fa2 S=4 FlashAttention-2, split-KV"));
    /* 4 splits x 1 query block x 8 heads, then 8 merges */
    assert_non_null(strstr(r1.out, "2 launches, 40 thread blocks (grid 4 x 8)"));
    assert_int_equal(count_of(r1.out, "bit-identical to the simulator (1,024 values, and L)"),
                     2);
    assert_int_equal(count_of(r1.out, "counters equal"), 2);
    assert_true(same_file(a, b));
    run_free(&r1);
    run_free(&r2);
}

/* The same from .npy inputs (float32 files, rounded to fp16 by both). */
static void test_out_bytes_equal_npy(void **state)
{
    (void)state;
    const int64_t N = 50, d = 6;
    float *x = malloc((size_t)(3 * N * d) * sizeof *x);
    assert_non_null(x);
    sim_random_inputs(42, N, d, SIM_FP32, x, x + N * d, x + 2 * N * d);
    char pq[512], pk[512], pv[512], a[512], b[512], err[256];
    tu_path(pq, sizeof pq, "q.npy");
    tu_path(pk, sizeof pk, "k.npy");
    tu_path(pv, sizeof pv, "v.npy");
    tu_path(a, sizeof a, "kernel_O2.npy");
    tu_path(b, sizeof b, "sim_O2.npy");
    assert_int_equal(sim_npy_write_f32(pq, x, N, d, err, sizeof err), 0);
    assert_int_equal(sim_npy_write_f32(pk, x + N * d, N, d, err, sizeof err), 0);
    assert_int_equal(sim_npy_write_f32(pv, x + 2 * N * d, N, d, err, sizeof err), 0);
    free(x);
    run_res r1 = run("gpu", "--backend", "cpu", "--algo", "fa2", "--M", "4K", "--q", pq,
                     "--k", pk, "--v", pv, "--repeat", "1", "--out", a, NULL);
    run_res r2 = run("--algo", "fa2", "--M", "4K", "--q", pq, "--k", pk, "--v", pv,
                     "--out", b, NULL);
    assert_int_equal(r1.code, 0);
    assert_int_equal(r2.code, 0);
    assert_non_null(strstr(r1.out, "inputs from .npy"));
    assert_true(same_file(a, b));
    run_free(&r1);
    run_free(&r2);
}

/* 4-D .npy inputs, Q (B, H, N, d) and K, V (B, G, N_k, d): the batch, the
 * heads and N_k come from them, and --out writes (B, H, N, d), byte for byte
 * the report's. */
static void test_out_bytes_equal_npy_heads(void **state)
{
    (void)state;
    const int64_t B = 2, H = 4, G = 2, N = 30, Nk = 50, d = 8;
    const int64_t nq = B * H * N * d, nk = B * G * Nk * d;
    float *x = malloc((size_t)(nq + 2 * nk) * sizeof *x);
    assert_non_null(x);
    sim_random_qkv(9, B * H * N, B * G * Nk, d, SIM_FP32, x, x + nq, x + nq + nk);
    char pq[512], pk[512], pv[512], a[512], b[512], err[256];
    tu_path(pq, sizeof pq, "q4.npy");
    tu_path(pk, sizeof pk, "k4.npy");
    tu_path(pv, sizeof pv, "v4.npy");
    tu_path(a, sizeof a, "kernel_O5.npy");
    tu_path(b, sizeof b, "sim_O5.npy");
    assert_int_equal(sim_npy_write_f32_4d(pq, x, B, H, N, d, err, sizeof err), 0);
    assert_int_equal(sim_npy_write_f32_4d(pk, x + nq, B, G, Nk, d, err, sizeof err), 0);
    assert_int_equal(sim_npy_write_f32_4d(pv, x + nq + nk, B, G, Nk, d, err, sizeof err), 0);
    free(x);
    run_res r1 = run("gpu", "--backend", "cpu", "--algo", "fa1", "--M", "8K", "--causal",
                     "--q", pq, "--k", pk, "--v", pv, "--out", a, NULL);
    run_res r2 = run("--algo", "fa1", "--M", "8K", "--causal", "--q", pq, "--k", pk, "--v",
                     pv, "--out", b, NULL);
    assert_int_equal(r1.code, 0);
    assert_int_equal(r2.code, 0);
    assert_non_null(strstr(r1.out, "batch 2 x 4 query heads over 2 key/value heads, "
                                   "N_q = 30, N_k = 50"));
    assert_true(same_file(a, b));
    run_free(&r1);
    run_free(&r2);
}

/* The default backend is CUDA. Without a CUDA build or a device: exit 1 with
 * one line naming --backend cpu and nothing on stdout. With a device it runs
 * and must match, like the CPU path. */
static void test_default_backend(void **state)
{
    (void)state;
    run_res r = run("gpu", "--N", "64", "--d", "16", "--M", "16K", "--repeat", "1", NULL);
    if (r.code == 0) {
        assert_int_equal(count_of(r.out, "bit-identical to the simulator"), 3);
    } else {
        assert_int_equal(r.code, 1);
        assert_int_equal(r.out_len, 0);
        assert_non_null(strstr(r.err, "--backend cpu"));
        assert_int_equal(count_of(r.err, "\n"), 1);
        assert_true(strstr(r.err, "without CUDA") || strstr(r.err, "no CUDA device"));
    }
    run_free(&r);
}

static void test_bad_usage(void **state)
{
    (void)state;
    const char *bad[][3] = {
        { "--backend", "tpu", NULL }, { "--count-only", NULL, NULL },
        { "--repeat", "0", NULL },    { "--threads", NULL, NULL },
        { "--bogus", NULL, NULL },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        run_res r = run("gpu", "--backend", "cpu", "--N", "32", bad[k][0], bad[k][1], NULL);
        assert_int_equal(r.code, 2);
        assert_int_equal(r.out_len, 0);
        assert_int_equal(count_of(r.err, "\n"), 1);
        run_free(&r);
    }
    /* The report's variants the kernels do not run: named, not ignored. */
    const char *variant[][3] = {
        { "--page-size", "4", "--page-size" },
    };
    for (size_t k = 0; k < sizeof variant / sizeof variant[0]; k++) {
        run_res r = run("gpu", "--backend", "cpu", "--N", "32", variant[k][0], variant[k][1],
                        NULL);
        assert_int_equal(r.code, 2);
        assert_int_equal(r.out_len, 0);
        assert_non_null(strstr(r.err, variant[k][2]));
        assert_non_null(strstr(r.err, "the kernels run the forward pass"));
        run_free(&r);
    }
    run_res s = run("gpu", "--backend", "cpu", "--N", "32", "--algo", "fa1", "--splits", "2",
                    NULL);
    assert_int_equal(s.code, 2);
    assert_non_null(strstr(s.err, "--splits is a plan of FA2's forward pass"));
    run_free(&s);
    run_res h = run("gpu", "--help", NULL);
    assert_int_equal(h.code, 0);
    assert_non_null(strstr(h.out, "--backend"));
    run_free(&h);
}

/* --pass both: the forward's run, then FA1's or FA2's backward kernels
 * beside the simulator's backward (dQ, dK, dV bit for bit, the counts per
 * tensor), over batches, heads, a causal window; dQ's modes and block
 * orders. */
static void test_backward(void **state)
{
    (void)state;
    /* B H N d = 2 x 2 x 40 x 8; T_r = 5, T_c = 8. FA2: (5 + 8 + 5) x 4
     * blocks; FA1 (Algorithm 4): one launch, a block per (batch, head). */
    const char *algo[2] = { "fa2", "fa1" };
    const char *shows[2][3] = {
        { "\nfa2 bwd FlashAttention-2's backward (Algorithm 2)",
          "dQ       deterministic (j ascending in each head), blocks in the grid's order",
          "3 launches, 72 thread blocks (grid 8 x 4)" },
        { "\nfa1 bwd FlashAttention's backward (Algorithm 4)",
          "dQ       j ascending, in the one block of its head",
          "  plan     B_r = 8, B_c = 5: 1 launch, 4 thread blocks\n  output   bit-identical "
          "to the simulator (dQ" },
    };
    for (int a = 0; a < 2; a++) {
        run_res r = run("gpu", "--backend", "cpu", "--N", "40", "--d", "8", "--batch", "2",
                        "--heads", "2", "--causal", "--window", "12", "--Br", "8", "--Bc",
                        "5", "--algo", algo[a], "--pass", "both", NULL);
        assert_int_equal(r.code, 0);
        assert_int_equal(count_of(r.out, "bit-identical to the simulator"), 2);
        assert_int_equal(count_of(r.out, "counters equal"), 2);
        assert_int_equal(count_of(r.out, "DIFFER"), 0);
        for (int k = 0; k < 3; k++)
            assert_non_null(strstr(r.out, shows[a][k]));
        assert_non_null(strstr(r.out, "(dQ 1,280 values, dK and dV 1,280 each)"));
        assert_string_equal(r.err, "");
        run_free(&r);
    }
    /* A shuffled order: deterministic keeps the simulator's dQ; atomic adds
     * in the shuffled order, dQ apart (fp32: no rounding hides it), dK and
     * dV still the simulator's; both exit 0. */
    const char *mode[2] = { "deterministic", "atomic" };
    for (int k = 0; k < 2; k++) {
        run_res m = run("gpu", "--backend", "cpu", "--N", "40", "--d", "8", "--heads", "2",
                        "--Br", "8", "--Bc", "5", "--dtype", "fp32", "--algo", "fa2", "--pass",
                        "bwd", "--dq-mode", mode[k], "--block-order-seed", "1", NULL);
        assert_int_equal(m.code, 0);
        assert_non_null(strstr(m.out, "blocks in seed 1's order"));
        assert_int_equal(count_of(m.out, "counters equal"), 1);
        if (k == 0)
            assert_non_null(strstr(m.out, "bit-identical to the simulator (dQ"));
        else
            assert_non_null(strstr(m.out, "dK, dV bit-identical to the simulator; dQ differs "
                                          "in "));
        run_free(&m);
    }
    run_res j = run("gpu", "--backend", "cpu", "--N", "24", "--d", "4", "--pass", "bwd",
                    "--json", NULL);
    assert_int_equal(j.code, 0);
    assert_true(json_well_formed(j.out));
    assert_non_null(strstr(j.out, "\"pass\": \"bwd\", \"dq_mode\": \"deterministic\", "
                                  "\"block_order_seed\": 0"));
    assert_non_null(strstr(j.out, "\"identical\": true, \"dq_differing\": 0"));
    run_free(&j);
    /* GQA's backward (MQA here): dK, dV summed over the group, bit-identical. */
    run_res g = run("gpu", "--backend", "cpu", "--N", "24", "--d", "4", "--heads", "3",
                    "--kv-heads", "1", "--causal", "--pass", "bwd", NULL);
    assert_int_equal(g.code, 0);
    assert_non_null(strstr(g.out, "summed over each key/value head's query heads (GQA)"));
    assert_non_null(strstr(g.out, "bit-identical to the simulator (dQ"));
    run_free(&g);
    /* Refused, in one line: an unknown mode, the modes without the
     * backward, another loop order's backward, --out, the modes without
     * FA2's backward. */
    const char *bad[][5] = {
        { "--dq-mode", "atomics", "--pass", "bwd", NULL },
        { "--dq-mode", "atomic", "--pass", "fwd", NULL },
        { "--block-order-seed", "3", "--causal", NULL, NULL },
        { "--algo", "naive", "--pass", "bwd", NULL },
        { "--algo", "fa2", "--out", "/tmp/fasim-gpu-bwd.npy", "--pass" },
        { "--algo", "fa1", "--dq-mode", "atomic", "--pass" },
    };
    const char *says[] = { "--dq-mode atomics: unknown mode", "add --pass bwd",
                           "add --pass bwd", "the backward kernels are FA1's and FA2's",
                           "--out writes the forward's O", "add fa2 to --algo" };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        run_res b = run("gpu", "--backend", "cpu", "--N", "32", "--heads", "2", bad[k][0],
                        bad[k][1], bad[k][2], bad[k][3], bad[k][4], k >= 4 ? "both" : NULL,
                        NULL);
        assert_int_equal(b.code, 2);
        assert_int_equal(b.out_len, 0);
        assert_int_equal(count_of(b.err, "\n"), 1);
        assert_non_null(strstr(b.err, says[k]));
        run_free(&b);
    }
    /* A block order on CUDA: the device's own, refused before the device is
     * looked for (so the same on any machine). */
    run_res s = run("gpu", "--backend", "cuda", "--N", "32", "--pass", "bwd",
                    "--block-order-seed", "2", NULL);
    assert_int_equal(s.code, 2);
    assert_int_equal(s.out_len, 0);
    assert_int_equal(count_of(s.err, "\n"), 1);
    assert_non_null(strstr(s.err, "on a GPU the hardware orders them"));
    run_free(&s);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_gpu_cli PATH-TO-FASIM\n");
        return 2;
    }
    g_fasim = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_all_identical),
        cmocka_unit_test(test_cpu_json),
        cmocka_unit_test(test_out_bytes_equal),
        cmocka_unit_test(test_out_bytes_equal_npy),
        cmocka_unit_test(test_out_bytes_equal_heads),
        cmocka_unit_test(test_split_kv),
        cmocka_unit_test(test_out_bytes_equal_npy_heads),
        cmocka_unit_test(test_default_backend),
        cmocka_unit_test(test_bad_usage),
        cmocka_unit_test(test_backward),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
