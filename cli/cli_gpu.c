/*
 * cli_gpu.c — `fasim gpu`: run the real kernels (kernels/) beside the
 * simulator on the same inputs and plans, and show, per loop order, whether
 * the output is bit-identical to the simulator's compute mode, the kernel's
 * own count of global-memory traffic per tensor beside the simulator's, and
 * the time with the speedup over naive.
 *
 * Options: the report's (cli_parse_report: --N --d --M --dtype --algo --Br
 * --Bc --plan --causal --seed --q --k --v --out --json --gpu --max-mem), plus
 *   --backend cpu|cuda   cuda (default) needs a CUDA build and a device;
 *                        cpu runs the same kernel source on the CPU path
 *   --repeat K           timed runs after the counted one (median; default 5
 *                        on CUDA, 1 on the CPU, whose times are no GPU's)
 *   --threads T          threads per block (default 1 on the CPU, 128 on CUDA;
 *                        at most 64 on the CPU, 1024 on CUDA)
 *   --lock F             hold a lock on file F (created) while the kernels run,
 *                        so that several fasim gpu processes sharing a device
 *                        (kernels/device_check.sh) time their kernels one at a
 *                        time while their simulators run in parallel
 * --out writes the kernel's O, so that `fasim gpu ... --out a.npy` and
 * `fasim ... --compute --out b.npy` can be compared byte for byte.
 *
 * Exit status: 0 when every kernel matched the simulator (bits and counts),
 * 1 when one did not, or on failures (no CUDA, I/O, memory), 2 bad usage.
 * The loop orders and the comparison live in sim/ and kernels/; this file
 * parses, dispatches and formats.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_cmds.h"
#include "cli_inputs.h"
#include "kern.h"
#include "sim_gpu_model.h"
#include "sim_npy.h"
#include "sim_report.h"
#include "sim_parse.h"

#define GPU_DEFAULT_REPEAT 5
#define GPU_DEFAULT_REPEAT_CPU 1 /* the CPU path's time is not a GPU's: one check of races */
#define GPU_MAX_REPEAT 1000      /* a median of more says nothing new */
#define GPU_MAX_THREADS 1024     /* CUDA's bound; the CPU path's is KERN_CPU_MAX_THREADS */
/* every loop order's forward, FA2 split-KV, and every loop order's backward */
#define GPU_MAX_RUNS (2 * SIM_ALGO_MAX + 1)

static void usage(FILE *out)
{
    const int nums[] = { GPU_DEFAULT_REPEAT, GPU_DEFAULT_REPEAT_CPU, KERN_CPU_DEFAULT_THREADS,
                         KERN_CUDA_DEFAULT_THREADS, KERN_CPU_MAX_THREADS, GPU_MAX_THREADS,
                         KERN_CPU_MAX_GRID_X, KERN_CPU_MAX_GRID_Y,
                         (int)(KERN_CPU_MAX_SMEM / 1024u), KERN_CPU_MAX_THREADS };
    cli_usage(out, CLI_CMD_GPU, nums, 10);
}

typedef struct {
    sim_algo algo;
    sim_pass pass;        /* SIM_FWD, or SIM_BWD (the backward kernels: kern_serves_bwd) */
    sim_plan plan;
    sim_result sim;
    kern_result kern;
    int identical;        /* O (and L), or dQ, dK and dV, bit-identical */
    kern_dq_mode dq_mode; /* the backward's: how dQ was added, */
    uint64_t order_seed;  /* and the blocks' order (0: the grid's) */
    int64_t dq_differing; /* atomic dQ: values apart from the simulator's sum, which
                             adds in ascending j (identical then judges dK, dV) */
    double max_diff;      /* max |kernel - sim| over O; inf where one is NaN */
    int counts_equal;
    int has_model;        /* --gpu NAME: the GPU model's prediction for these launches */
    double model_s;       /* its time, s */
    char model_err[160];  /* or why there is none */
} gpu_run;

/* The command line of fasim gpu: the report's options, and its own
 * (take_own_options). */
typedef struct {
    cli_report_opts o;
    kern_backend backend;
    int repeat, threads;
    const char *lock_path;
    kern_dq_mode dq_mode;
    uint64_t block_order_seed;
    int backward_options;        /* --dq-mode or --block-order-seed given */
} gpu_opts;

/* Pull gpu's own options out of argv[first..]; the rest goes to the
 * report's parser. Returns 0, or -1 with err set. */
static int take_own_options(int argc, char **argv, int first, char **rest, int *nrest,
                            gpu_opts *g, char *err, size_t errlen)
{
    *nrest = 0;
    cli_given given = { { 0, 0 } };
    for (int k = first; k < argc; k++) {
        const char *a = argv[k];
        int which = -1;                 /* the option of gpu's own, CLI_O_* */
        const char *val = NULL;
        for (int q = 0; q < CLI_O_COUNT; q++) {
            const unsigned in = CLI_OPTIONS[q].cmds;
            if (!(in & CLI_IN(CLI_CMD_GPU)) || (in & CLI_IN(CLI_CMD_REPORT)))
                continue;
            size_t n = strlen(CLI_OPTIONS[q].name);
            if (a[0] == '-' && a[1] == '-' && !strncmp(a + 2, CLI_OPTIONS[q].name, n) &&
                (a[n + 2] == '\0' || a[n + 2] == '=')) {
                which = q;
                if (a[n + 2] == '=')
                    val = a + n + 3;
                else if (!(val = cli_take_value(argc, argv, &k))) {
                    snprintf(err, errlen, "--%s needs a value; see 'fasim gpu --help'",
                             CLI_OPTIONS[q].name);
                    return -1;
                }
            }
        }
        if (which < 0) {
            rest[(*nrest)++] = argv[k];
            continue;
        }
        char optname[32];
        snprintf(optname, sizeof optname, "--%s", CLI_OPTIONS[which].name);
        if (cli_given_twice(&given, which, optname, err, errlen) != 0)
            return -1;
        int64_t n;
        if (which == CLI_O_BACKEND) {
            if (kern_backend_parse(val, &g->backend) != 0) {
                snprintf(err, errlen, "--backend %s: unknown backend (cpu or cuda)",
                         sim_shown(val).s);
                return -1;
            }
        } else if (which == CLI_O_REPEAT) {
            if (cli_parse_count("--repeat", val, 1, GPU_MAX_REPEAT, &n, err, errlen))
                return -1;
            g->repeat = (int)n;
        } else if (which == CLI_O_LOCK) {
            g->lock_path = val;
        } else if (which == CLI_O_DQ_MODE) {
            if (kern_dq_mode_parse(val, &g->dq_mode) != 0) {
                snprintf(err, errlen, "--dq-mode %s: unknown mode (deterministic or atomic)",
                         sim_shown(val).s);
                return -1;
            }
            g->backward_options = 1;
        } else if (which == CLI_O_BLOCK_ORDER_SEED) {
            if (cli_parse_count("--block-order-seed", val, 0, INT64_MAX, &n, err, errlen))
                return -1;
            g->block_order_seed = (uint64_t)n;
            g->backward_options = 1;
        } else {
            if (cli_parse_count("--threads", val, 1, GPU_MAX_THREADS, &n, err, errlen))
                return -1;
            g->threads = (int)n;
        }
    }
    rest[*nrest] = NULL;
    return 0;
}

/* --q/--k/--v: read, check shapes, set N, N_k, d and the heads, as the
 * report does. Returns SIM_OK, or an exit status with the message
 * printed. */
static int load_inputs(cli_report_opts *o, sim_npy_matrix m[4])
{
    char err[1024];
    int rc = cli_inputs_load_report(o, NULL, 0, m, err, sizeof err);
    if (rc != SIM_OK)
        fprintf(stderr, "fasim: %s\n", err);
    return rc;
}

static double max_abs_diff(const float *a, const float *b, int64_t n)
{
    double m = 0.0;
    for (int64_t k = 0; k < n; k++) {
        if (isnan(a[k]) != isnan(b[k]))
            return INFINITY;
        double x = fabs((double)a[k] - (double)b[k]);
        if (x > m)
            m = x;
    }
    return m;
}

static void fmt_count(char *buf, size_t len, uint64_t elems, uint64_t ops)
{
    char e[32], o[32];
    sim_format_count(e, sizeof e, elems);
    sim_format_count(o, sizeof o, ops);
    snprintf(buf, len, "%s / %s", e, o);
}

static int tensor_equal(const sim_counts *a, const sim_counts *b, int t)
{
    return a->read_elems[t] == b->read_elems[t] && a->write_elems[t] == b->write_elems[t] &&
           a->read_ops[t] == b->read_ops[t] && a->write_ops[t] == b->write_ops[t];
}

static int tensor_touched(const sim_counts *c, int t)
{
    return c->read_ops[t] || c->write_ops[t];
}

static void print_seconds(FILE *out, double s)
{
    if (s >= 1.0)
        fprintf(out, "%.3f s", s);
    else if (s >= 1e-3)
        fprintf(out, "%.3f ms", s * 1e3);
    else
        fprintf(out, "%.1f us", s * 1e6);
}

/* The naive run of pass `pass` among runs[], the baseline of the speedups
 * of that pass; NULL when naive was not run that way. */
static const gpu_run *naive_of(const gpu_run *runs, int nruns, sim_pass pass)
{
    for (int k = 0; k < nruns; k++)
        if (runs[k].algo == SIM_NAIVE && runs[k].pass == pass)
            return &runs[k];
    return NULL;
}

static void print_text(FILE *out, const cli_report_opts *o, kern_backend b,
                       const gpu_run *runs, int nruns)
{
    const sim_shape *sh = &o->req.sh;
    char mb[32];
    sim_format_bytes(mb, sizeof mb, sh->M);
    const int nt = nruns ? runs[0].kern.threads : 0;
    fprintf(out, "fasim gpu: the kernels beside the simulator, backend %s (%d thread%s per "
            "block)\n", kern_backend_name(b), nt, nt == 1 ? "" : "s");
    fprintf(out, "%s = %lld, d = %lld, M = %s, %s%s, %s, %d timed run%s (median)\n",
            sh->Nk > 0 && sh->Nk != sh->N ? "N_q" : "N", (long long)sh->N, (long long)sh->d, mb, sim_dtype_name(sh->dtype),
            sh->causal ? ", causal" : "", o->q_path ? "inputs from .npy" : "seeded inputs",
            nruns ? runs[0].kern.runs : 0, nruns && runs[0].kern.runs == 1 ? "" : "s");
    if (sim_shape_B(sh) * sim_shape_H(sh) > 1 || sh->Nk > 0 || sh->window > 0) {
        fprintf(out, "batch %lld x %lld query heads", (long long)sim_shape_B(sh),
                (long long)sim_shape_H(sh));
        if (sim_shape_G(sh) < sim_shape_H(sh))
            fprintf(out, " over %lld key/value head%s", (long long)sim_shape_G(sh),
                    sim_shape_G(sh) == 1 ? "" : "s");
        fprintf(out, ", N_q = %lld, N_k = %lld", (long long)sh->N,
                (long long)sim_shape_Nk(sh));
        if (sh->window > 0)
            fprintf(out, ", window %lld", (long long)sh->window);
        fprintf(out, "\n");
    }
    if (b == KERN_CPU)
        fprintf(out, "The CPU runs the kernels' source, to check their outputs and counts: its\n"
                "times are not a GPU's, and one loop order's time over another's is no\n"
                "speedup a GPU would show (run --backend cuda on a GPU for that).\n");
    for (int k = 0; k < nruns; k++) {
        const gpu_run *r = &runs[k], *naive = naive_of(runs, nruns, r->pass);
        const int64_t nO = kern_tensor_elems(sh, SIM_O);
        char c1[32], c2[32], grid[64] = "";
        const char *gqa = sim_shape_G(sh) < sim_shape_H(sh)
            ? ",\n         then dK, dV summed over each key/value head's query heads (GQA)" : "";
        if (r->pass == SIM_BWD && r->algo == SIM_FA1) {
            fprintf(out, "\nfa1 bwd FlashAttention's backward (Algorithm 4): a block per head, "
                    "K/V outer, Q inner%s\n", gqa);
            fprintf(out, "  dQ       j ascending, in the one block of its head\n");
        } else if (r->pass == SIM_BWD && r->algo == SIM_NAIVE) {
            fprintf(out, "\nnaive bwd standard attention's backward (Algorithm 3): a launch per "
                    "line, dV, dP, dS, dQ, dK%s\n", gqa);
        } else if (r->pass == SIM_BWD) {
            fprintf(out, "\nfa2 bwd FlashAttention-2's backward (Algorithm 2): D, then a block "
                    "per key block%s\n", gqa);
            fprintf(out, "  dQ       %s (%s), blocks in ", kern_dq_mode_name(r->dq_mode),
                    r->dq_mode == KERN_DQ_DETERMINISTIC ? "j ascending in each head"
                                                        : "as the blocks finish");
            if (r->order_seed)
                fprintf(out, "seed %llu's order\n", (unsigned long long)r->order_seed);
            else if (b == KERN_CUDA)
                fprintf(out, "the order this device runs them in\n");
            else
                fprintf(out, "the grid's order\n");
        } else if (r->plan.run.splits > 1) {
            fprintf(out, "\nfa2 S=%lld FlashAttention-2, split-KV: %lld splits of the keys, "
                    "then their merge\n", (long long)r->plan.run.splits,
                    (long long)r->plan.run.splits);
        } else {
            fprintf(out, "\n%-6s %s\n", sim_algo_name(r->algo), sim_algo_title(r->algo));
        }
        if (r->kern.grid_y > 1)     /* the grid of the largest launch, x by y */
            snprintf(grid, sizeof grid, " (grid %lld x %lld)", (long long)r->kern.grid_x,
                     (long long)r->kern.grid_y);
        fprintf(out, "  plan     B_r = %lld, B_c = %lld: %d launch%s, %lld thread block%s%s\n",
                (long long)r->plan.Br, (long long)r->plan.Bc, r->kern.launches,
                r->kern.launches == 1 ? "" : "es", (long long)r->kern.blocks,
                r->kern.blocks == 1 ? "" : "s", grid);
        sim_format_count(c1, sizeof c1, (uint64_t)nO);
        if (r->identical && r->pass == SIM_BWD && r->dq_differing) {
            sim_format_count(c2, sizeof c2, (uint64_t)r->dq_differing);
            fprintf(out, "  output   dK, dV bit-identical to the simulator; dQ differs in %s "
                    "of %s values\n", c2, c1);
            fprintf(out, "           (max |diff| %.3g): the same additions in another order\n",
                    r->max_diff);
        } else if (r->identical && r->pass == SIM_BWD)
            fprintf(out, "  output   bit-identical to the simulator (dQ %s values, dK and dV "
                    "%s each)\n", c1, (sim_format_count(c2, sizeof c2, (uint64_t)
                    kern_tensor_elems(sh, SIM_K)), c2));
        else if (r->identical)
            fprintf(out, "  output   bit-identical to the simulator (%s values%s)\n", c1,
                    r->algo == SIM_FA2 ? ", and L" : "");
        else
            fprintf(out, "  output   DIFFERS from the simulator: max |diff| %.3g\n",
                    r->max_diff);
        if (k == 0)
            fprintf(out, "  (counts are elements / transfers; a transfer is one tile)\n");
        sim_format_count(c1, sizeof c1, r->kern.smem_bytes);
        sim_format_count(c2, sizeof c2, r->kern.plan_bytes);
        if (r->kern.smem_bytes == r->kern.plan_bytes)
            fprintf(out, "  shared   %s B per block: the plan's SRAM peak%s\n", c1,
                    sh->dtype == SIM_FP32 ? "" : " (2-byte tiles)");
        else
            fprintf(out, "  shared   %s B per block, the plan's %s B: DIFFERS\n", c1, c2);
        fprintf(out, "  %-8s %-15s %-15s %-15s %s\n", "HBM", "kernel reads",
                "sim reads", "kernel writes", "sim writes");
        for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
            const sim_counts *kc = &r->kern.counts, *sc = &r->sim.counts;
            if (!tensor_touched(kc, t) && !tensor_touched(sc, t))
                continue;
            char a[72], bb[72], c[72], d[72];
            fmt_count(a, sizeof a, kc->read_elems[t], kc->read_ops[t]);
            fmt_count(bb, sizeof bb, sc->read_elems[t], sc->read_ops[t]);
            fmt_count(c, sizeof c, kc->write_elems[t], kc->write_ops[t]);
            fmt_count(d, sizeof d, sc->write_elems[t], sc->write_ops[t]);
            fprintf(out, "  %-8s %-15s %-15s %-15s %-15s %s\n",
                    sim_tensor_name((sim_tensor)t), a, bb, c, d,
                    tensor_equal(kc, sc, t) ? "equal" : "DIFFER");
        }
        uint64_t kb = sim_counts_read_bytes(&r->kern.counts, sh->dtype) +
                      sim_counts_write_bytes(&r->kern.counts, sh->dtype);
        uint64_t sb = sim_counts_read_bytes(&r->sim.counts, sh->dtype) +
                      sim_counts_write_bytes(&r->sim.counts, sh->dtype);
        sim_format_count(c1, sizeof c1, kb);
        sim_format_count(c2, sizeof c2, sb);
        fprintf(out, "  bytes    kernel %s, simulator %s: %s\n", c1, c2,
                r->counts_equal ? "counters equal" : "counters DIFFER");
        fprintf(out, "  time     ");
        print_seconds(out, r->kern.seconds);
        if (b == KERN_CPU)
            fprintf(out, " on this CPU (no speedup: see above)");
        else if (naive && r->kern.seconds > 0.0)
            fprintf(out, ", %.2fx the speed of naive", naive->kern.seconds / r->kern.seconds);
        fprintf(out, "\n");
        if (o->req.gpu && r->has_model) {
            fprintf(out, "  model    ");
            print_seconds(out, r->model_s);
            fprintf(out, " on %s: the GPU model's prediction for these launches", o->req.gpu->name);
            if (b == KERN_CUDA && r->model_s > 0.0)
                fprintf(out, "; measured / model = %.2f", r->kern.seconds / r->model_s);
            fprintf(out, "\n");
        } else if (o->req.gpu) {
            fprintf(out, "  model    none on %s: %s\n", o->req.gpu->name, r->model_err);
        }
    }
}

static void json_counts(sim_json *w, const char *key, const sim_counts *c, int t)
{
    sim_json_obj(w, key);
    sim_json_uint(w, "read_elems", c->read_elems[t]);
    sim_json_uint(w, "write_elems", c->write_elems[t]);
    sim_json_uint(w, "read_ops", c->read_ops[t]);
    sim_json_uint(w, "write_ops", c->write_ops[t]);
    sim_json_end(w);
}

/* One element of "runs": the kernel's launch, its agreement with the
 * simulator (output and counts, per tensor), and its time. */
static void json_run(sim_json *w, const sim_shape *sh, const gpu_run *r, const gpu_run *naive,
                     const sim_gpu *gpu)
{
    sim_json_obj(w, NULL);
    sim_json_str(w, "algo", sim_algo_name(r->algo));
    sim_json_str(w, "pass", sim_pass_name(r->pass));
    if (r->pass == SIM_BWD) {
        sim_json_str(w, "dq_mode", kern_dq_mode_name(r->dq_mode));
        sim_json_uint(w, "block_order_seed", r->order_seed);
    }
    sim_json_int(w, "splits", r->plan.run.splits > 1 ? r->plan.run.splits : 1);
    sim_json_int(w, "Br", r->plan.Br);
    sim_json_int(w, "Bc", r->plan.Bc);
    sim_json_int(w, "threads", r->kern.threads);
    sim_json_int(w, "launches", r->kern.launches);
    sim_json_int(w, "blocks", r->kern.blocks);
    sim_json_int(w, "grid_x", r->kern.grid_x);
    sim_json_int(w, "grid_y", r->kern.grid_y);
    sim_json_uint(w, "smem_bytes", r->kern.smem_bytes);
    sim_json_uint(w, "plan_sram_bytes", r->kern.plan_bytes);
    sim_json_bool(w, "identical", r->identical);
    if (r->pass == SIM_BWD)
        sim_json_int(w, "dq_differing", r->dq_differing);
    sim_json_num_g(w, "max_abs_diff", r->max_diff, 9);
    sim_json_bool(w, "counts_equal", r->counts_equal);
    sim_json_obj(w, "tensors");
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        if (!tensor_touched(&r->kern.counts, t) && !tensor_touched(&r->sim.counts, t))
            continue;
        sim_json_obj(w, sim_tensor_name((sim_tensor)t));
        json_counts(w, "kernel", &r->kern.counts, t);
        json_counts(w, "sim", &r->sim.counts, t);
        sim_json_bool(w, "equal", tensor_equal(&r->kern.counts, &r->sim.counts, t));
        sim_json_end(w);
    }
    sim_json_end(w);
    sim_json_uint(w, "kernel_bytes", sim_counts_read_bytes(&r->kern.counts, sh->dtype) +
                                         sim_counts_write_bytes(&r->kern.counts, sh->dtype));
    sim_json_uint(w, "sim_bytes", sim_counts_read_bytes(&r->sim.counts, sh->dtype) +
                                      sim_counts_write_bytes(&r->sim.counts, sh->dtype));
    sim_json_num_g(w, "seconds", r->kern.seconds, 9);
    sim_json_int(w, "timed_runs", r->kern.runs);
    if (naive && r->kern.seconds > 0.0)
        sim_json_num_g(w, "speedup_vs_naive", naive->kern.seconds / r->kern.seconds, 6);
    else
        sim_json_null(w, "speedup_vs_naive");
    if (gpu)
        sim_json_str(w, "model_gpu", gpu->name);
    else
        sim_json_null(w, "model_gpu");
    if (gpu && r->has_model)
        sim_json_num_g(w, "model_seconds", r->model_s, 9);
    else
        sim_json_null(w, "model_seconds");
    sim_json_end(w);
}

static void print_json(FILE *out, const cli_report_opts *o, kern_backend b,
                       const gpu_run *runs, int nruns)
{
    const sim_shape *sh = &o->req.sh;
    sim_json w;
    sim_json_init(&w, out, SIM_JSON_SPACED);
    sim_json_obj(&w, NULL);
    sim_json_str(&w, "command", "gpu");
    sim_json_str(&w, "backend", kern_backend_name(b));
    sim_json_int(&w, "N", sh->N);
    sim_json_int(&w, "d", sh->d);
    sim_json_uint(&w, "M", sh->M);
    sim_json_str(&w, "dtype", sim_dtype_name(sh->dtype));
    sim_json_bool(&w, "causal", sh->causal);
    sim_json_int(&w, "batch", sim_shape_B(sh));
    sim_json_int(&w, "heads", sim_shape_H(sh));
    sim_json_int(&w, "kv_heads", sim_shape_G(sh));
    sim_json_int(&w, "Nk", sim_shape_Nk(sh));
    sim_json_int(&w, "window", sh->window);
    sim_json_uint(&w, "seed", o->req.seed);
    sim_json_str(&w, "inputs", o->q_path ? "npy" : "seeded");
    sim_json_arr_lines(&w, "runs");
    /* The CPU path's times are no GPU's: no speedup (null) on it. */
    for (int k = 0; k < nruns; k++)
        json_run(&w, sh, &runs[k], b == KERN_CPU ? NULL : naive_of(runs, nruns, runs[k].pass),
                 o->req.gpu);
    sim_json_end(&w);
    sim_json_end(&w);
    fputc('\n', out);
}

/* The kernels run the forward pass of every head of a batch (GQA and MQA
 * too) with the simulator's masks and N_q <= N_k, FA2 split-KV, and FA2's
 * backward (GQA's too): paged KV and the model presets are the simulator's alone. A loop order
 * with no kernel is refused when named, and left out of "all". Returns 1
 * with a message naming the option, or 0. */
static int unsupported(cli_report_opts *o, char *err, size_t errlen)
{
    const sim_shape *sh = &o->req.sh;
    const char *what = NULL;
    for (int a = 0; a < sim_algo_count(); a++)
        if (o->req.run_algo[a] == SIM_ALGO_IF_SERVED && !kern_serves((sim_algo)a))
            o->req.run_algo[a] = 0;              /* "all": every loop order with a kernel */
        else if (o->req.run_algo[a] && !kern_serves((sim_algo)a)) {
            snprintf(err, errlen, "no kernel runs loop order %s (kernels/ has naive's, "
                     "fa1's and fa2's); choose them with --algo", sim_algo_name((sim_algo)a));
            return 1;
        }
    if (sim_dtype_is_fp8(sh->dtype)) {
        snprintf(err, errlen, "--dtype %s: the kernels run fp16, bf16 and fp32; fp8 "
                 "(FlashAttention-3's FP8 forward) is simulated by the report (fasim without "
                 "'gpu')", sim_dtype_name(sh->dtype));
        return 1;
    }
    if (o->block_mask) {
        snprintf(err, errlen, "--block-mask: the kernels run dense masks only (causal and "
                 "windows); block-sparse attention is simulated by the report (fasim without "
                 "'gpu')");
        return 1;
    }
    if (o->req.model)
        what = "--preset";
    else if (o->req.run.page > 0)
        what = "--page-size";
    if (what) {
        snprintf(err, errlen, "%s: the kernels run the forward pass (batches, heads, GQA, "
                 "causal windows, N_q < N_k, split-KV) and every loop order's backward; the report "
                 "(fasim without 'gpu') simulates the rest", what);
        return 1;
    }
    if (!o->req.run_pass[SIM_BWD])
        return 0;
    int bwd = 0;              /* loop orders asked for with a backward kernel */
    for (int a = 0; a < sim_algo_count(); a++) {
        if (!kern_serves_bwd((sim_algo)a) && o->req.run_algo[a] == 1 &&
            !o->req.run_pass[SIM_FWD]) {
            snprintf(err, errlen, "--pass bwd: the backward kernels are naive's, FA1's and "
                     "FA2's (--algo naive, fa1, fa2); %s's backward is the report's (fasim without 'gpu')",
                     sim_algo_name((sim_algo)a));
            return 1;
        }
        bwd += o->req.run_algo[a] && kern_serves_bwd((sim_algo)a);
    }
    if (!bwd) {
        snprintf(err, errlen, "--pass %s: add naive, fa1 or fa2 to --algo (the loop orders "
                 "with backward kernels)", o->req.run_pass[SIM_FWD] ? "both" : "bwd");
        return 1;
    }
    return 0;
}

/* Parse and check the options: -1 to go on, or the exit status (after
 * --help, or with the message printed). */
static int gpu_parse(int argc, char **argv, int first, gpu_opts *g)
{
    char err[2048];
    g->backend = KERN_CUDA;
    g->repeat = 0;                    /* unset: chosen by the backend below */
    g->threads = 0;
    g->lock_path = NULL;
    g->dq_mode = KERN_DQ_DETERMINISTIC;
    g->block_order_seed = 0;
    g->backward_options = 0;
    int nrest = 0;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    if (!rest) {
        fprintf(stderr, "fasim: out of memory\n");
        return SIM_EFAIL;
    }
    if (take_own_options(argc, argv, first, rest, &nrest, g, err, sizeof err) != 0) {
        fprintf(stderr, "fasim: %s\n", err);
        free(rest);
        return SIM_EUSAGE;
    }
    cli_report_opts *o = &g->o;
    int prc = cli_parse_report(nrest, rest, 0, o, err, sizeof err);
    free(rest);
    if (prc != 0) {
        fprintf(stderr, "fasim: %s\n", err);
        return SIM_EUSAGE;
    }
    if (o->help) {
        usage(stdout);
        return SIM_OK;
    }
    if (o->version || o->gpu_list || o->preset_list) {
        fprintf(stderr, "fasim: gpu: --version, --gpu list and --preset list belong to 'fasim' "
                "itself\n");
        return SIM_EUSAGE;
    }
    if (o->req.plan_kind == SIM_PLAN_KERNEL) {
        fprintf(stderr, "fasim: gpu: --plan kernel is the report's: these kernels keep every "
                "buffer in shared memory (--plan same, best or paper)\n");
        return SIM_EUSAGE;
    }
    if (o->req.ring.P > 0) {
        fprintf(stderr, "fasim: gpu: --ring is the report's: fasim gpu runs its kernels on one "
                "device, and the report models the ring's P devices\n");
        return SIM_EUSAGE;
    }
    if (o->req.mode == SIM_MODE_COUNT) {
        fprintf(stderr, "fasim: gpu runs the kernels on real data; drop --count-only\n");
        return SIM_EUSAGE;
    }
    if (g->repeat == 0)
        g->repeat = g->backend == KERN_CPU ? GPU_DEFAULT_REPEAT_CPU : GPU_DEFAULT_REPEAT;
    if (g->backend == KERN_CPU && g->threads > KERN_CPU_MAX_THREADS) {
        fprintf(stderr, "fasim: --threads %d: the CPU path (--backend cpu) runs at most %d "
                "threads per block (CUDA up to %d)\n", g->threads, KERN_CPU_MAX_THREADS,
                GPU_MAX_THREADS);
        return SIM_EUSAGE;
    }
    if (unsupported(o, err, sizeof err)) {
        fprintf(stderr, "fasim: gpu: %s\n", err);
        return SIM_EUSAGE;
    }
    if (g->backward_options && !o->req.run_pass[SIM_BWD]) {
        fprintf(stderr, "fasim: gpu: --dq-mode and --block-order-seed choose how the "
                "backward adds dQ: add --pass bwd (or both)\n");
        return SIM_EUSAGE;
    }
    if (g->backward_options && !o->req.run_algo[SIM_FA2]) {
        fprintf(stderr, "fasim: gpu: --dq-mode and --block-order-seed order FA2's backward "
                "blocks (FA1's holds each head in one block, dQ added in one order): add fa2 "
                "to --algo\n");
        return SIM_EUSAGE;
    }
    if (g->block_order_seed && g->backend == KERN_CUDA) {
        fprintf(stderr, "fasim: gpu: --block-order-seed orders the CPU path's blocks; on a GPU "
                "the hardware orders them: drop it, or add --backend cpu\n");
        return SIM_EUSAGE;
    }
    if (o->req.run_pass[SIM_BWD] && o->out_path) {
        fprintf(stderr, "fasim: gpu: --out writes the forward's O: drop --pass bwd, or "
                "--out\n");
        return SIM_EUSAGE;
    }
    if (g->backend == KERN_CUDA && !kern_cuda_available(err, sizeof err)) {
        fprintf(stderr, "fasim: %s\n", err);
        return SIM_EFAIL;
    }
    if (g->backend == KERN_CUDA && o->req.run_pass[SIM_BWD] && o->req.run_algo[SIM_NAIVE]) {
        /* kern_run_bwd refuses it there: the CUDA run keeps no P for it */
        int others = o->req.run_algo[SIM_FA1] || o->req.run_algo[SIM_FA2];
        fprintf(stderr, "fasim: gpu: standard attention's backward kernels run on the CPU path "
                "only%s\n", others ? "; its backward is left out here (--backend cpu runs it)"
                                    : ": add --backend cpu, or fa1 or fa2 to --algo");
        if (!others)
            return SIM_EUSAGE;
    }
    if (o->out_path && cli_out_writable(o->out_path) != SIM_OK)
        return SIM_EFAIL;
    return -1;
}

/* The work of the runs before any of it starts: the simulator's compute
 * run and, on the CPU, the kernel's counted run and g->repeat timed ones
 * (on CUDA the simulator's run is the CPU's work). Past
 * SIM_MAX_COMPUTE_FLOPS it is refused unless --compute forces it; forced,
 * the estimate is printed first (as the report does). Returns SIM_OK or
 * SIM_EUSAGE with the message printed. */
static int gpu_work(const gpu_opts *g, const gpu_run *runs, int nruns)
{
    const sim_shape *sh = &g->o.req.sh;
    const double per_run = 1.0 + (g->backend == KERN_CPU ? 1.0 + g->repeat : 0.0);
    double flops = 0.0;
    for (int k = 0; k < nruns; k++)
        flops += per_run * sim_compute_flops(runs[k].algo, sh, &runs[k].plan.run);
    const double secs = ceil(flops / SIM_KERN_CPU_FLOPS_PER_S);
    if (g->o.req.mode != SIM_MODE_COMPUTE && flops > SIM_MAX_COMPUTE_FLOPS) {
        fprintf(stderr, "fasim: gpu: the simulator%s would compute %.1e flops, about %.0f s "
                "on a 2-core 2026 x86-64 machine (measured by bench/bench_sim), over the "
                "limit of %.1e flops (about a minute); use a smaller N, fewer --repeat, or "
                "--compute to force it\n", g->backend == KERN_CPU ? " and the CPU kernels" : "",
                flops, secs, SIM_MAX_COMPUTE_FLOPS);
        return SIM_EUSAGE;
    }
    if (g->o.req.mode == SIM_MODE_COMPUTE && secs > SIM_AUTO_COMPUTE_SECONDS)
        fprintf(stderr, "fasim: gpu: computing %.1e flops: about %.0f s on a 2-core 2026 "
                "x86-64 machine\n", flops, secs);
    return SIM_OK;
}

/* The plan of run r (its algo set) with req's tiles and run options, within
 * --max-mem and --max-steps. The kernel run holds as much host memory as
 * the simulator's (its global tensors), so twice that. Returns SIM_OK or an
 * exit status with the message printed. */
static int gpu_plan_one(const gpu_opts *g, const sim_request *req, gpu_run *r)
{
    char err[2048];
    const cli_report_opts *o = &g->o;
    const sim_shape *sh = &o->req.sh;
    const uint64_t max_mem = o->req.max_mem ? o->req.max_mem : SIM_DEFAULT_MAX_MEM;
    const uint64_t max_steps = o->req.max_steps ? o->req.max_steps : SIM_DEFAULT_MAX_STEPS;
    if (sim_plan_choose(r->algo, sh, &req->run, req->plan_kind, req->Br, req->Bc, &r->plan,
                        err, sizeof err) != 0) {
        fprintf(stderr, "fasim: %s\n", err);
        return SIM_EUSAGE;
    }
    uint64_t need = sim_compute_memory(r->algo, sh, &req->run);
    if (need > max_mem / 2) {
        char b1[32], b2[32];
        sim_format_bytes(b1, sizeof b1, need == UINT64_MAX ? need : 2 * need);
        sim_format_bytes(b2, sizeof b2, max_mem);
        fprintf(stderr, "fasim: %s on the kernels and the simulator would need %s of "
                "memory, over the %s limit; use a smaller N or raise --max-mem\n",
                sim_algo_name(r->algo), b1, b2);
        return SIM_EUSAGE;
    }
    uint64_t steps;
    if (sim_theory_steps(&r->plan, sh, &steps) != 0)
        steps = UINT64_MAX;
    if (steps > max_steps) {
        fprintf(stderr, "fasim: gpu: %s would take %llu tile steps, more than the limit "
                "of %llu; use a smaller N, a larger --M, or raise --max-steps\n",
                sim_algo_name(r->algo), (unsigned long long)steps,
                (unsigned long long)max_steps);
        return SIM_EUSAGE;
    }
    if (o->req.gpu) {          /* --gpu NAME: the GPU model of the same launches */
        sim_gm_opts gm = o->req.gm;
        gm.trace = NULL;
        sim_gm_result res;
        r->has_model = sim_gpu_model_run(o->req.gpu, &r->plan, sh, &gm, &res, r->model_err,
                                         sizeof r->model_err) == 0;
        r->model_s = r->has_model ? res.time_s : 0.0;
    }
    return SIM_OK;
}

/* Plans and limits before anything runs: runs[0..*nruns-1], one per loop
 * order asked for (and FA2's split-KV run), each as gpu_plan_one checks it;
 * the runs' flops are bounded by gpu_work. Returns SIM_OK or an exit
 * status with the message printed. */
static int gpu_plan(const gpu_opts *g, gpu_run runs[GPU_MAX_RUNS], int *nruns)
{
    const cli_report_opts *o = &g->o;
    /* The report's plans, so that --out compares byte for byte with the
     * report's: the same tiles for every loop order by default. */
    sim_request req = o->req;
    sim_report_resolve_same(&req);
    const int64_t S = o->req.run.splits;
    if (S > 1 && !o->req.run_algo[SIM_FA2]) {
        fprintf(stderr, "fasim: gpu: --splits is a plan of FA2's forward pass: run fa2 "
                "(--algo)\n");
        return SIM_EUSAGE;
    }
    /* Each loop order asked for, unsplit; with --splits S, FA2 once more in
     * S splits (its partials' and its combine kernel), as the report adds
     * its split-KV run. */
    for (int a = 0; o->req.run_pass[SIM_FWD] && a <= sim_algo_count(); a++) {
        const int split = a == sim_algo_count();
        if (split ? S <= 1 : !o->req.run_algo[a])
            continue;
        gpu_run *r = &runs[*nruns];
        r->algo = split ? SIM_FA2 : (sim_algo)a;
        r->pass = SIM_FWD;
        req.run.splits = split ? S : 0;
        int rc = gpu_plan_one(g, &req, r);
        if (rc != SIM_OK)
            return rc;
        (*nruns)++;
    }
    /* --pass bwd or both: the backward of each loop order asked for that has
     * backward kernels (unsupported() has checked there is one), after the
     * forward runs as the report orders them. */
    for (int a = 0; o->req.run_pass[SIM_BWD] && a < sim_algo_count(); a++) {
        if (!o->req.run_algo[a] || !kern_serves_bwd((sim_algo)a) ||
            (g->backend == KERN_CUDA && a == SIM_NAIVE))     /* the CPU path's alone */
            continue;
        gpu_run *r = &runs[*nruns];
        r->algo = (sim_algo)a;
        r->pass = SIM_BWD;
        req.run.splits = 0;
        req.run.pass = SIM_BWD;
        int rc = gpu_plan_one(g, &req, r);
        if (rc != SIM_OK)
            return rc;
        (*nruns)++;
    }
    return gpu_work(g, runs, *nruns);
}

/* Run r on the simulator, then (holding --lock) on the kernels, and compare
 * them. Returns SIM_OK or SIM_EFAIL with the message printed. */
static int gpu_run_one(const gpu_opts *g, gpu_run *r, const float *Q, const float *K,
                       const float *V, const float *dO)
{
    char err[2048];
    const sim_shape *sh = &g->o.req.sh;
    const int64_t nd = kern_tensor_elems(sh, SIM_O), nL = kern_tensor_elems(sh, SIM_L);
    const sim_inputs in = { Q, K, V, r->pass == SIM_BWD ? dO : NULL };
    if (sim_run_inputs(r->algo, sh, &r->plan, &in, NULL, &r->sim, err, sizeof err) != 0) {
        fprintf(stderr, "fasim: simulator: %s\n", err);
        return SIM_EFAIL;
    }
    int lockfd = -1;
    if (g->lock_path) {
        struct flock fl;
        memset(&fl, 0, sizeof fl);
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        lockfd = open(g->lock_path, O_RDWR | O_CREAT, 0644);
        if (lockfd < 0 || fcntl(lockfd, F_SETLKW, &fl) != 0) {
            const char *why = strerror(errno);
            fprintf(stderr, "fasim: --lock %s: %s\n", sim_shown(g->lock_path).s, why);
            if (lockfd >= 0)
                close(lockfd);
            return SIM_EFAIL;
        }
    }
    r->dq_mode = g->dq_mode;
    r->order_seed = g->block_order_seed;
    kern_options opt = { .threads = g->threads, .repeat = g->repeat, .dq_mode = g->dq_mode,
                         .block_order_seed = g->block_order_seed };
    int krc = r->pass == SIM_BWD
                  ? kern_run_bwd(g->backend, r->algo, sh, &r->plan, Q, K, V, dO, &opt,
                                 &r->kern, err, sizeof err)
                  : kern_run(g->backend, r->algo, sh, &r->plan, Q, K, V, &opt, &r->kern,
                             err, sizeof err);
    if (lockfd >= 0)
        close(lockfd);                    /* releases the lock */
    if (krc != 0) {
        fprintf(stderr, "fasim: %s kernel: %s\n", sim_algo_name(r->algo), err);
        return SIM_EFAIL;
    }
    r->counts_equal = sim_counts_equal(&r->sim.counts, &r->kern.counts);
    if (r->pass == SIM_BWD) {   /* the gradients: dQ (as O), dK, dV (as K) */
        const int64_t nk = kern_tensor_elems(sh, SIM_K);
        const float *ks[3] = { r->kern.dQ, r->kern.dK, r->kern.dV },
                    *ss[3] = { r->sim.dQ, r->sim.dK, r->sim.dV };
        r->identical = 1;
        r->max_diff = 0.0;
        for (int t = 0; t < 3; t++) {
            const int64_t n = t ? nk : nd;
            const double m = max_abs_diff(ks[t], ss[t], n);
            const int same = memcmp(ks[t], ss[t], (size_t)n * sizeof(float)) == 0;
            if (t == 0 && r->dq_mode == KERN_DQ_ATOMIC) {   /* another order may differ */
                for (int64_t x = 0; x < n; x++)
                    r->dq_differing += memcmp(&ks[t][x], &ss[t][x], sizeof(float)) != 0;
                if (isinf(m))                               /* a NaN is no order's */
                    r->identical = 0;
            } else {
                r->identical = r->identical && same;
            }
            r->max_diff = m > r->max_diff ? m : r->max_diff;
        }
        return SIM_OK;
    }
    r->identical = memcmp(r->sim.O, r->kern.O, (size_t)nd * sizeof(float)) == 0;
    if (r->algo == SIM_FA2)
        r->identical = r->identical && r->sim.L && r->kern.L &&
                       memcmp(r->sim.L, r->kern.L, (size_t)nL * sizeof(float)) == 0;
    r->max_diff = max_abs_diff(r->kern.O, r->sim.O, nd);
    return SIM_OK;
}

/* Print the runs, name the ones that do not match, write --out. Returns
 * the exit status. */
static int gpu_output(const gpu_opts *g, const gpu_run *runs, int nruns, int q_rank)
{
    const cli_report_opts *o = &g->o;
    const sim_shape *sh = &o->req.sh;
    const kern_backend backend = g->backend;
    int rc = SIM_OK, all_match = 1;
    for (int k = 0; k < nruns; k++)
        if (!runs[k].identical || !runs[k].counts_equal)
            all_match = 0;
    if (o->json)
        print_json(stdout, o, backend, runs, nruns);
    else
        print_text(stdout, o, backend, runs, nruns);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "fasim: cannot write to stdout\n");
        rc = SIM_EFAIL;
    }
    for (int k = 0; k < nruns; k++)
        if (!runs[k].identical || !runs[k].counts_equal)
            fprintf(stderr, "fasim: gpu: the %s kernel does not match the simulator (%s)\n",
                    sim_algo_name(runs[k].algo),
                    !runs[k].identical ? "output" : "counters");
    if (!all_match && rc == SIM_OK)
        rc = SIM_EFAIL;
    /* --out: the one loop order asked for (the report writes its unsplit
     * run too, not the split-KV one). */
    if (o->out_path && nruns == 1 + (o->req.run.splits > 1) &&
        cli_out_write(o->out_path, runs[0].kern.O, sh, q_rank) != SIM_OK)
        rc = SIM_EFAIL;
    return rc;
}

int cli_gpu_main(int argc, char **argv, int first)
{
    gpu_opts g;
    int rc = gpu_parse(argc, argv, first, &g);
    if (rc >= 0)
        return rc;
    cli_report_opts *o = &g.o;
    sim_npy_matrix m[4];
    memset(m, 0, sizeof m);
    int nruns = 0;
    gpu_run runs[GPU_MAX_RUNS];
    memset(runs, 0, sizeof runs);
    float *Q = NULL, *K = NULL, *V = NULL, *dO = NULL;
    if ((o->q_path && (rc = load_inputs(o, m)) != SIM_OK) ||
        (rc = gpu_plan(&g, runs, &nruns)) != SIM_OK)
        goto out;
    const sim_shape *sh = &o->req.sh;
    const int64_t nq = kern_tensor_elems(sh, SIM_Q), nk = kern_tensor_elems(sh, SIM_K);
    if (o->q_path) {
        Q = m[0].data;
        K = m[1].data;
        V = m[2].data;
    } else {
        Q = malloc((size_t)nq * sizeof *Q);
        K = malloc((size_t)nk * sizeof *K);
        V = malloc((size_t)nk * sizeof *V);
        if (!Q || !K || !V) {
            fprintf(stderr, "fasim: out of memory for the inputs\n");
            rc = SIM_EFAIL;
            goto out;
        }
        /* The report's draw (sim_report.c): every query head's rows, then
         * every key/value head's. */
        (o->req.outliers ? sim_outlier_qkv : sim_random_qkv)(o->req.seed, nq / sh->d,
                                                             nk / sh->d, sh->d, sh->dtype, Q,
                                                             K, V);
    }
    /* The backward's dO: --dO, or the report's draw (sim_report.c). */
    if (o->req.run_pass[SIM_BWD]) {
        if (!(dO = malloc((size_t)nq * sizeof *dO))) {
            fprintf(stderr, "fasim: out of memory for the inputs\n");
            rc = SIM_EFAIL;
            goto out;
        }
        if (m[3].data)
            memcpy(dO, m[3].data, (size_t)nq * sizeof *dO);
        else
            sim_random_grad(o->req.seed, nq, sh->dtype, dO);
    }
    for (int k = 0; k < nruns; k++)
        if ((rc = gpu_run_one(&g, &runs[k], Q, K, V, dO)) != SIM_OK)
            goto out;
    rc = gpu_output(&g, runs, nruns, o->q_path ? m[0].rank : 0);
out:
    for (int k = 0; k < GPU_MAX_RUNS; k++) {
        sim_result_free(&runs[k].sim);
        kern_result_free(&runs[k].kern);
    }
    if (!o->q_path) {
        free(Q);
        free(K);
        free(V);
    }
    free(dO);
    cli_inputs_free(m);
    return rc;
}
