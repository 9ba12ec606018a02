/*
 * kern.h — the kernels' host driver: run the naive, FA1 or FA2 kernel on the
 * simulator's inputs and plan, on the CPU path or on a CUDA device, and hand
 * back the output, the kernel's own count of global-memory traffic per tensor
 * and the time. A C API, so that cli/ stays C.
 *
 * The same kernel source (kern_naive.cuh, kern_fa1.cuh, kern_fa2.cuh) runs on
 * both backends; its output is meant to equal sim_run's compute-mode output bit
 * for bit and its counts to equal sim_run's counts (tests/test_kernels.c).
 */
#ifndef FASIM_KERN_H
#define FASIM_KERN_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The dtypes the kernels run: sim_dtype 0 .. KERN_DTYPE_COUNT - 1, fp16,
 * bf16 and fp32; the fp8 dtypes are the simulator's alone (kern_run
 * refuses them: kern_tile.h holds 2- and 4-byte tiles). */
#define KERN_DTYPE_COUNT (SIM_FP32 + 1)

typedef enum { KERN_CPU, KERN_CUDA } kern_backend;

const char *kern_backend_name(kern_backend b);            /* "cpu", "cuda" */
/* Parse "cpu" or "cuda"; 0 and *out set, or -1. */
int kern_backend_parse(const char *s, kern_backend *out);

/* 1: the blocks themselves then run side by side, one a core (kern_cpu.c),
 * as fast as the simulator's compute mode; --threads 2 or more exercises
 * the barriers (the tests run 1 to 12). kernels/README.md, "The CPU path". */
#define KERN_CPU_DEFAULT_THREADS 1
#define KERN_CPU_MAX_THREADS 64
/* The CPU path refuses what a CUDA device of compute capability 9.0
 * refuses: a grid's y dimension over 65,535 blocks, its x over 2^31 - 1,
 * and more than 227 KiB of dynamic shared memory per block (the opt-in
 * maximum of sm_90), so that a launch it runs also launches on an H100. */
#define KERN_CPU_MAX_GRID_X 2147483647
#define KERN_CPU_MAX_GRID_Y 65535
#define KERN_CPU_MAX_SMEM (227u * 1024u)
#define KERN_CUDA_DEFAULT_THREADS 128  /* four warps: rows of B_r <= 128 each get one */

/* How FA2's backward adds the key blocks' shares into dQ's running sum,
 * which all thread blocks of a head share (kern_fa2_bwd.cuh).
 * DETERMINISTIC: in a fixed order, j ascending, whatever order the blocks
 * run in (a block waits for block j - 1 of its head): the simulator's bits.
 * ATOMIC: in the order the blocks happen to run, as the released kernel's
 * atomicAdd does by default; on the CPU path that order is the shuffle of
 * kern_options.block_order_seed, on a GPU the device's. Either way each
 * block's add is its whole read-modify-write of dQ_i, under dQ_i's lock
 * (kern_fa2_bwd.cuh), not the released kernel's per-element atomicAdd. */
typedef enum { KERN_DQ_DETERMINISTIC, KERN_DQ_ATOMIC, KERN_DQ_COUNT } kern_dq_mode;

const char *kern_dq_mode_name(kern_dq_mode m);       /* "deterministic", "atomic" */
int kern_dq_mode_parse(const char *s, kern_dq_mode *out);   /* 0, or -1 */

typedef struct {
    int threads;     /* threads per block; 0: the backend's default */
    int repeat;      /* timed runs after the counted one (>= 1; 0 means 1) */
    kern_dq_mode dq_mode;        /* the backward's dQ (DETERMINISTIC, 0, by default) */
    uint64_t block_order_seed;   /* the backward's block order; 0: the grid's order */
} kern_options;

typedef struct {
    float *O;                /* (B H, N, d), owned; values of the dtype */
    float *L;                /* FA2: (B H, N) logsumexp, owned; else NULL */
    float *m, *l;            /* FA1: (B H, N) row maxima and sums, owned (its
                                backward reads them); else NULL */
    float *dQ, *dK, *dV;     /* the backward: (B H, N, d), (B G, N_k, d) twice,
                                owned; NULL after a forward run (O, L are then
                                the forward's, which the backward read) */
    sim_counts counts;       /* the counting run's global-memory traffic */
    double seconds;          /* median over the timed runs: the launches only */
    int runs;                /* timed runs */
    int threads;             /* threads per block */
    int launches;            /* kernel launches per run */
    int64_t blocks;          /* thread blocks per run, all launches together */
    int64_t grid_x, grid_y;  /* the grid of the largest launch (most blocks) */
    uint64_t smem_bytes;     /* dynamic shared memory of the largest launch */
    uint64_t plan_bytes;     /* the plan's SRAM peak (dtype-sized tiles) */
} kern_result;

/*
 * Run loop order `a` with plan p on inputs Q (B H, N, d), K, V (B G, N_k, d)
 * (rounded to the shape's dtype here as sim_run rounds them): every query
 * head of sh, with its mask. The plan must fit M or be a paper plan, as for
 * sim_run, and be ungrouped and unpaged, and split (split-KV) only for FA2
 * (sim_run_opts: the rest is the simulator's alone). A launch over the backend's limits (grid, threads,
 * shared memory) is refused, naming the limit, before anything is allocated.
 * Every output tensor is poisoned with NaN before each run, so a kernel that
 * fails to write an element is caught.
 * First one counted run, then opt->repeat timed runs without counters; the
 * timed runs' output must equal the counted run's bit for bit (else -1:
 * a kernel whose result depends on timing has a race).
 * Returns 0 with *out filled (release with kern_result_free), or -1 with a
 * one-line message in err. With KERN_CUDA and no CUDA build or no device the
 * message says so and suggests --backend cpu.
 */
int kern_run(kern_backend b, sim_algo a, const sim_shape *sh, const sim_plan *p,
             const float *Q, const float *K, const float *V, const kern_options *opt,
             kern_result *out, char *err, size_t errlen);

/*
 * The backward pass of loop order a (kern_serves_bwd: naive,
 * kern_naive_bwd.cuh; FA1, kern_fa1_bwd.cuh; FA2, kern_fa2_bwd.cuh) with a
 * backward plan p (p->run.pass SIM_BWD) on inputs Q, K, V and the output
 * gradient dO (B H, N, d), all rounded to the dtype here as sim_run rounds
 * them: first the forward kernels with the forward plan of the same blocks
 * (what the backward reads: P for naive, O and L for FA2, O, m and l for
 * FA1, as sim_run's backward computes its forward first; not counted), then
 * the backward's launches, counted once and timed opt->repeat times, with
 * the block order and dQ mode of opt (FA2's; FA1 holds a head per block,
 * naive writes each dQ block once). MHA, GQA and MQA (G < H: the group sums
 * of kern_gqa_bwd.cuh follow). On KERN_CUDA the device orders the blocks (a
 * block_order_seed is refused) and, in KERN_DQ_ATOMIC mode, dQ is not
 * compared across the timed runs (its additions' order may change from run
 * to run; dK and dV are).
 * Returns 0 with *out filled (dQ, dK, dV; O and L the forward's), or -1
 * with a one-line message in err.
 */
int kern_run_bwd(kern_backend b, sim_algo a, const sim_shape *sh, const sim_plan *p,
                 const float *Q, const float *K, const float *V, const float *dO,
                 const kern_options *opt, kern_result *out, char *err, size_t errlen);

void kern_result_free(kern_result *r);

/* Elements of tensor t of a run of sh, all heads: B H N N_k for S, P, dP, dS;
 * B H N d for Q, O, O_acc; B G N_k d for K, V; B H N for the statistics
 * (kern_result's O and L are B H N d and B H N). */
int64_t kern_tensor_elems(const sim_shape *sh, sim_tensor t);

/* 1 when kernels/ has a kernel of loop order a (naive, fa1, fa2), else 0:
 * a loop order registered at run time has none. */
int kern_serves(sim_algo a);
/* 1 when kernels/ has the backward pass of loop order a (fa1, fa2), else 0. */
int kern_serves_bwd(sim_algo a);

/* 1 when kernels/ has loop order a's backward pass (naive: Algorithm 3,
 * kern_naive_bwd.cuh; fa2: kern_fa2_bwd.cuh), else 0. */
int kern_serves_bwd(sim_algo a);

/* 1 when this build has the CUDA backend and a device is present; else 0
 * with the reason in err (one line, ending in the --backend cpu hint). */
int kern_cuda_available(char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* FASIM_KERN_H */
