/*
 * kern_internal.h — what the two backends (kern_cpu.c, kern_cuda.cu) and the
 * driver (kern_driver.c) share, and the hook the tests use to run a
 * deliberately wrong build of the same kernel source. Not for cli/.
 */
#ifndef FASIM_KERN_INTERNAL_H
#define FASIM_KERN_INTERNAL_H

#include "kern.h"
#include "kern_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernels of the three loop orders, and of the backward passes. */
typedef enum {
    KERN_K_NAIVE_SCORES, KERN_K_NAIVE_SOFTMAX_ROWS, KERN_K_NAIVE_SOFTMAX_2PASS,
    KERN_K_NAIVE_SOFTMAX_3PASS, KERN_K_NAIVE_PV, KERN_K_FA1, KERN_K_FA1_BWD, KERN_K_FA2,
    KERN_K_FA2_SPLIT, KERN_K_FA2_COMBINE, KERN_K_FA2_BWD_PRE, KERN_K_FA2_BWD,
    KERN_K_FA2_BWD_CONVERT, KERN_K_GQA_SUM_DK, KERN_K_GQA_SUM_DV,
    KERN_K_NAIVE_BWD_DV, KERN_K_NAIVE_BWD_DP, KERN_K_NAIVE_BWD_DS_ROWS,
    KERN_K_NAIVE_BWD_DS_2PASS, KERN_K_NAIVE_BWD_DQ, KERN_K_NAIVE_BWD_DK,
    KERN_K_COUNT
} kern_kernel;

const char *kern_kernel_name(kern_kernel k);
/* 1 when kernel k's blocks take turns at dQ_i (kern_params.dq_turn: a
 * backward's key blocks, kern_fa2_bwd): the CPU path runs such a launch's
 * blocks in the order of kern_block_order. */
int kern_kernel_turns(kern_kernel k);

/* One launch: a kernel, its grid (grid x grid_y blocks: blockIdx.x, .y),
 * and its dynamic shared memory in bytes, which is the plan's bytes of
 * `phase` (kern_layout). */
typedef struct {
    kern_kernel k;
    int64_t grid, grid_y;
    int phase;
    uint64_t smem_bytes;
} kern_launch;

/* One buffer of a kernel's shared memory: the plan's buffer and where the
 * kernel carves it (kern_carve). */
typedef struct {
    const char *name;
    int64_t rows, cols;
    int elem_bytes;          /* 4 (fp32), or the dtype's: 2 (fp16, bf16), 4 (fp32) */
    int tile;                /* 1: held in the dtype (Q_i, K_j, V_j, P_ij), after fp32 */
    uint64_t offset, bytes;
} kern_smem_buf;

/*
 * The shared-memory layout of kernel k for the plan's buffers of `phase`:
 * buf[] in the plan's order with their offsets, the fp32 buffers first and
 * then the dtype's tiles, each group in the plan's order (as the kernels
 * carve them). Checks that the plan's buffer list is exactly the kernel's
 * (names, order, rows, columns, element bytes; GQA's group sums take only
 * their one buffer of the phase, found by name), that every buffer is aligned
 * to its element size, and that the layout's bytes equal the plan's bytes of
 * the phase, or of the buffers taken (no padding). Returns 0 with *n and *bytes set, or -1 (err set).
 */
int kern_layout(kern_kernel k, int phase, const sim_plan *p, const sim_shape *sh,
                kern_smem_buf buf[SIM_MAX_BUFFERS], int *n, uint64_t *bytes, char *err,
                size_t errlen);

/* The launches of one run of a loop order, in order (naive: 3; FA1, FA2: 1;
 * FA2 split-KV: 2; FA1's backward: 1; FA2's backward: 3, or 2 without
 * dQ_acc; naive's backward: 5), over all B H query heads: naive's and FA2's
 * grids are (T_r, B H) (the one-pass softmax (ceil(N / B_s), B H)), FA1's
 * (B H, 1) in both passes, split-KV's partials (S T_r, B H) and its combine
 * (T_r, B H); FA2's backward (T_r, B H), (T_c, B H), and its convert
 * (T_r, B H); naive's backward (T_c, B H) for dV and dK, (T_r, B H) for dP,
 * dS (the one-pass form (ceil(N / B_s), B H)) and dQ. A backward with G < H
 * then has GQA's group sums of dK_exp and dV_exp (kern_gqa_bwd.cuh), grids
 * (T_c, B G): 7 launches at most. */
#define KERN_MAX_LAUNCHES 8
typedef struct {
    int n;
    kern_launch l[KERN_MAX_LAUNCHES];
} kern_schedule;

/* Returns 0, or -1 (err set) for an unknown loop order or a plan without the
 * buffers its kernels carve out. */
int kern_schedule_make(sim_algo a, const sim_plan *p, const sim_shape *sh,
                       kern_schedule *s, char *err, size_t errlen);

/* What a backend can launch: the grid's x and y dimensions, threads per
 * block, dynamic shared memory per block. The CUDA backend reads them from
 * the device; the CPU path has kern_cpu_limits (kern.h's KERN_CPU_*). */
typedef struct {
    const char *who;             /* "the CPU path", "this device" */
    int64_t grid_x, grid_y;
    int threads;
    uint64_t smem;
} kern_limits;

extern const kern_limits kern_cpu_limits;

/* What a run of either pass checks first, on either backend: the plan
 * against the shape (what the kernels run), its pass, the launch schedule,
 * and the launches against lim (kern_check_limits), before anything is
 * allocated; the threads per block (default_threads when opt says 0) and
 * timed runs asked for. Clears *out. Returns 0, or -1 with err set. */
int kern_prelude(sim_algo a, const sim_shape *sh, const sim_plan *p, sim_pass pass,
                 const kern_options *opt, const kern_limits *lim, int default_threads,
                 kern_result *out, kern_schedule *s, int *threads, int *repeat, char *err,
                 size_t errlen);

/* Check every launch of s with `threads` threads per block against lim,
 * before anything is allocated. Returns 0, or -1 with a one-line message
 * naming the launch, the limit and its value. */
int kern_check_limits(const kern_schedule *s, int threads, const kern_limits *lim, char *err,
                      size_t errlen);

/* The scalar part of the kernels' parameters (pointers NULL). */
kern_params kern_params_make(const sim_shape *sh, const sim_plan *p);

/* ---- the CPU path ----------------------------------------------------------- */

typedef void (*kern_cpu_fn)(kern_params p);

/* One compiled copy of the kernel source for the CPU: kern_cpu_kernels.c builds
 * the real one (kern_cpu_kernels); the tests build wrong ones from the same
 * file with KERN_BUG_* defined and KERN_TABLE_NAME renamed. */
typedef struct {
    const char *name;
    kern_cpu_fn fn[KERN_K_COUNT];
} kern_cpu_table;

extern const kern_cpu_table kern_cpu_kernels;

/* Run one launch on the CPU: `threads` POSIX threads form a block;
 * sim_threads() / threads such blocks are resident at once (at least one),
 * each with its own shared memory of smem_bytes bytes (poisoned with 0xff
 * bytes before each block: a NaN read as a float, as fp16 bits or as bf16
 * bits), and take the blocks of the grid (grid by grid_y, y outer) in turn.
 * Returns 0, or -1 with err set (threads could not be created, out of
 * memory). */
int kern_cpu_launch(kern_cpu_fn fn, kern_params p, int64_t grid, int64_t grid_y, int threads,
                    uint64_t smem_bytes, char *err, size_t errlen);
/* The same with the blocks run in the order order[0 .. grid grid_y - 1],
 * each entry a block y grid + x (a permutation); NULL: y outer, x inner.
 * With an order, the blocks of one y run one at a time in that order; ys
 * run side by side only when p.G == p.H (kern_cpu.c). */
int kern_cpu_launch_order(kern_cpu_fn fn, kern_params p, int64_t grid, int64_t grid_y,
                          int threads, uint64_t smem_bytes, const int64_t *order, char *err,
                          size_t errlen);

/* The order FA2's backward kernel (grid (T_c, B H)) runs its blocks in, as
 * order[] takes it (kern_cpu_launch_order): with seed 0 the grid's own order;
 * else a shuffle drawn from the seed (blocks finishing as they happen to on
 * a GPU). In KERN_DQ_DETERMINISTIC mode each head's blocks then take the
 * places the shuffle gave that head in ascending j: a block that arrives
 * before block j - 1 of its head waits for it, as the released kernel's
 * deterministic mode makes it wait. order has grid grid_y entries. */
void kern_block_order(int64_t grid, int64_t grid_y, uint64_t seed, kern_dq_mode mode,
                      int64_t *order);

/* kern_run on the CPU with the kernels of table t (the tests pass a wrong
 * build here; kern_run passes &kern_cpu_kernels). */
int kern_run_cpu_table(const kern_cpu_table *t, sim_algo a, const sim_shape *sh,
                       const sim_plan *p, const float *Q, const float *K, const float *V,
                       const kern_options *opt, kern_result *out, char *err, size_t errlen);

/* kern_run_bwd on the CPU with the kernels of table t. */
int kern_run_bwd_cpu_table(const kern_cpu_table *t, sim_algo a, const sim_shape *sh,
                           const sim_plan *p, const float *Q, const float *K, const float *V,
                           const float *dO, const kern_options *opt, kern_result *out,
                           char *err, size_t errlen);

/* ---- the CUDA path (kern_cuda.cu; only in a CUDA build) -------------------- */

/* Inputs are already rounded to the dtype. Same contract as kern_run. */
int kern_cuda_run(sim_algo a, const sim_shape *sh, const sim_plan *p, const float *Q,
                  const float *K, const float *V, const kern_options *opt,
                  kern_result *out, char *err, size_t errlen);
/* The same for kern_run_bwd (dO rounded too; opt's block order seed 0). */
int kern_cuda_run_bwd(sim_algo a, const sim_shape *sh, const sim_plan *p, const float *Q,
                      const float *K, const float *V, const float *dO,
                      const kern_options *opt, kern_result *out, char *err, size_t errlen);
int kern_cuda_probe(char *err, size_t errlen);

/* Helpers the backends share (kern_driver.c). */
/* 1 when loop order a run with `run` on shape sh keeps tensor t in global
 * memory (sim_run's list). */
int kern_uses(sim_algo a, const sim_shape *sh, const sim_run_opts *run, sim_tensor t);

/* kern_tensor_elems of a run: split-KV's O~, m, l hold S N rows a head. */
int64_t kern_run_elems(const sim_shape *sh, const sim_run_opts *run, sim_tensor t);


/* The tensors t[] (host or device copies, NULL where unused) into the
 * kernels' parameters; Oacc only where the run's intermediates keep the
 * running output there (sim_inter_acc). */
void kern_params_bind(kern_params *k, float *const t[SIM_TENSOR_COUNT], const sim_run_opts *run);
/* Fill a successful run's result: the counts, the median of the timed
 * runs' seconds (sorts times), the launches, blocks and shared memory of s. */
void kern_result_finish(kern_result *out, const kern_schedule *s, const sim_plan *p,
                        const kern_counts *cnt, double *times, int repeat, int threads);

/* 1 when a run of `pass` writes tensor t: the tensors poisoned with NaN
 * before each run (the forward's O and what follows it in sim_tensor; the
 * backward's D, dQ, dK, dV, dQ_acc). */
int kern_writes(sim_pass pass, sim_tensor t);

/* The tensors a run hands back in kern_result: O, and L for FA2, after a
 * forward; dQ, dK, dV after a backward. */
typedef struct {
    int n;
    sim_tensor t[3];
    int64_t elems[3];
    float **dst[3];          /* the kern_result fields they go to */
    int checked[3];          /* 1: a timed run's must equal the counted run's */
} kern_outs;
void kern_outs_make(sim_algo a, const sim_shape *sh, sim_pass pass, kern_result *out,
                    kern_outs *o);
/* After run `run` of a pass, src[k] (host memory) holding o->t[k]: run 0's
 * are copied to the result (allocated here), a timed run's compared with
 * them where checked. Returns 0, or -1 (out of memory, or the bits differ:
 * a race) with err set. */
int kern_outs_keep(const kern_outs *o, sim_algo a, int run, float *const src[3], char *err,
                   size_t errlen);

/* The forward plan a backward runs first (O and L), with the backward plan
 * p's blocks, as sim_run's backward makes it (the SRAM limit lifted to the
 * forward's). Returns 0, or -1 (err set). */
int kern_bwd_forward_plan(sim_algo a, const sim_shape *sh, const sim_plan *p, sim_plan *fp,
                          char *err, size_t errlen);
/* The backward's dQ_i turns (kern_params.dq_turn): B H T_r. */
int64_t kern_turn_count(const sim_shape *sh, const sim_plan *p);

double kern_now_seconds(void);
double kern_median(double *x, int n);              /* sorts x */
void kern_counts_to_sim(const kern_counts *k, sim_counts *s);
void kern_poison(float *x, int64_t n);             /* quiet NaN */

#ifdef __cplusplus
}
#endif

#endif /* FASIM_KERN_INTERNAL_H */
