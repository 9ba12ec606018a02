/*
 * sim_gpu_model.h — a whole GPU in time: many SMs running a loop order's
 * thread blocks in waves, an L2 shared by them, and a clock.
 *
 * The two-level model (sim/) counts what one thread block moves between HBM
 * and its SRAM. This model launches the loop order as the released kernel it
 * stands for (its grid, the loop order's `grid` in sim_loop.h), places the
 * blocks on a preset's SMs as the hardware dispatches them (block-index
 * order, each to the first SM with room), and replays each block's tile
 * steps in time order through an L2 that all SMs share:
 *
 *   - the work of a block is the loop order's own: one head is run in the
 *     two-level model (count-only) with an observer, and its loads and
 *     stores, split by thread block and tile step, are the template every
 *     head of the batch replays, with its own addresses;
 *   - the L2 is a least-recently-used cache of tiles with a byte capacity
 *     (write-back: a stored tile is written to DRAM when evicted or when the
 *     run ends). A tile is always moved whole, so tile granularity is the
 *     fully associative sector LRU of the same capacity (sectors of one
 *     tile are touched together and leave together); the real L2's hashed
 *     set mapping and its two partitions are not modelled. DRAM bytes are
 *     its misses and write-backs. An L2 of 0 bytes gives back the two-level
 *     counts exactly; an infinite one, each tile read and written once;
 *   - the clock: a tile step costs the larger of its transfers (DRAM and L2
 *     bandwidth shared equally by the blocks in flight) and its arithmetic
 *     when the kernel prefetches (sim_loop.grid says which do), their sum
 *     when it does not; the arithmetic is the pipes of the SM (tensor
 *     cores, FP32, the special-function units' exp, and for FA1 shared
 *     memory: its warps' exchange and operands) shared by the blocks
 *     resident on it: a step takes the longer of its own pipes in sequence
 *     and the busiest pipe's work over all resident blocks. A block's first
 *     step waits one DRAM latency; each kernel launch adds its overhead.
 *     Kernel time is the last block's finish.
 *
 * What is modelled instead of measured is said where it is printed
 * (sim_gpu_model_assumptions). The efficiency constants are in
 * sim_gpu_model.c, each with what fixed it.
 */
#ifndef FASIM_SIM_GPU_MODEL_H
#define FASIM_SIM_GPU_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"
#include "sim_presets.h"
#include "sim_loop.h"

/* A trace in Chrome's trace-event format (JSON; opens in Perfetto and
 * chrome://tracing): one process per modelled run, one track per SM slot
 * (a slice per thread block and per tile step: load, matmul, softmax), and
 * DRAM bandwidth as a counter track. */
typedef struct {
    FILE *f;
    uint64_t events;         /* written so far */
    int pid;                 /* the last run's process id */
    int first;               /* 1 until the first event */
} sim_gm_trace;

void sim_gm_trace_begin(sim_gm_trace *t, FILE *f);   /* the file's opening */
void sim_gm_trace_end(sim_gm_trace *t);              /* and its close */

struct sim_fa3_slice;        /* sim_gpu_fa3.h */
struct sim_gm_fa3_step;      /* below */

/* How a run of the model is asked for. */
typedef struct {
    uint64_t l2_bytes;       /* the L2's capacity: the preset's when l2_set is
                                0; SIM_GM_L2_INFINITE: unbounded */
    int l2_set;              /* 1: l2_bytes was given (--l2), even 0 */
    sim_gm_trace *trace;     /* a trace to add this run to, or NULL */
    const char *trace_name;  /* the run's name there: "fa2 fwd" */
    uint64_t trace_max_events;  /* refuse a run of more events (0: 4,000,000) */
    /* FlashAttention-3's switches (sim_gpu_fa3.h), for a loop order whose
     * kernel issues WGMMA and TMA only: 1 turns off the overlap of one
     * block's softmax with the next block's products in a warpgroup
     * (--pipeline off), or the producer warpgroup and the ping-pong of the
     * consumers (--warp-specialization off). */
    int no_pipeline, no_warp_spec;
    /* Called once per thread block as it finishes, in time order: the
     * kernel (index into sim_gm_result.kernels), the SM, the slot on it
     * (0 .. occupancy - 1), its span in seconds, its query head b H + h
     * (GQA's group sums: its key/value head b G + g) and its block index
     * within the head. NULL: none. */
    void (*on_block)(void *ctx, int kernel, int sm, int slot, double t0, double t1,
                     int64_t head, int64_t block);
    /* Called once per computing tile step of a loop order whose kernel
     * issues WGMMA (FA3), as it is timed, in time order on each slot: the
     * step's slices on the pipeline's tracks (sim_gpu_fa3.h). NULL: none. */
    void (*on_fa3_step)(void *ctx, const struct sim_gm_fa3_step *s);
    void *ctx;               /* for on_block and on_fa3_step */
} sim_gm_opts;

/* One tile step of FA3's pipeline, as on_fa3_step gets it. */
typedef struct sim_gm_fa3_step {
    int sm, slot;            /* as on_block's */
    int64_t head, block;     /* as on_block's */
    int64_t i, j;            /* the block pair (B_r rows of Q_i, B_c of K_j, V_j) */
    int64_t step;            /* its computing steps before this one in the block */
    double t, dur;           /* its start (s, since the run began) and time */
    double freed;            /* from its start: when the block before's stage is freed
                                (sim_fa3_step) */
    const struct sim_fa3_slice *sl;   /* n slices, t0 from its start */
    int n;
} sim_gm_fa3_step;

#define SIM_GM_L2_INFINITE UINT64_MAX

/* What binds a run's time: the resource whose work took the most of it. */
typedef enum {
    SIM_GM_BOUND_TENSOR,     /* the matrix products on tensor cores */
    SIM_GM_BOUND_FP32,       /* the softmax's adds, maxima, multiplies */
    SIM_GM_BOUND_SFU,        /* exp on the special-function units */
    SIM_GM_BOUND_SMEM,       /* shared memory: operands read by every warp, and
                                FA1's partial sums exchanged between warps */
    SIM_GM_BOUND_DRAM,       /* DRAM bandwidth */
    SIM_GM_BOUND_L2,         /* L2 bandwidth */
    SIM_GM_BOUND_LATENCY,    /* waiting on loads and launches */
    SIM_GM_BOUND_COUNT
} sim_gm_bound;

const char *sim_gm_bound_name(sim_gm_bound b);   /* "tensor cores", "DRAM", ... */

/* One kernel launch of a run. */
typedef struct {
    char name[32];           /* "main", "D = rowsum(dO o O)", "combine" */
    int64_t blocks;          /* thread blocks in its grid */
    int64_t grid[3];         /* gridDim x, y, z as the released kernel launches it */
    int threads;             /* per block */
    int occupancy;           /* resident blocks per SM */
    const char *occupancy_by;/* what limits it: "shared memory", "registers",
                                "threads", "blocks per SM" */
    double waves;            /* blocks / (SMs x occupancy) */
    int sms_busy;            /* SMs that ran at least one of its blocks */
    double t_start, t_end;   /* s, since the run began */
} sim_gm_kernel;

#define SIM_GM_MAX_KERNELS 8

typedef struct {
    double time_s;           /* predicted time: every kernel, launches included */
    double flops;            /* the run's FLOPs (sim_run_flops, all heads) */
    double tflops;           /* flops / time_s / 1e12 */
    uint64_t dram_read_bytes, dram_write_bytes;
    uint64_t hbm_read_bytes, hbm_write_bytes;   /* the two-level counts, all heads */
    uint64_t l2_read_bytes;  /* bytes the blocks read (through the L2) */
    double l2_hit_rate;      /* of those, the fraction that hit */
    uint64_t read_bytes[SIM_TENSOR_COUNT];      /* per tensor: bytes read ... */
    uint64_t hit_bytes[SIM_TENSOR_COUNT];       /* ... and of those, hits */
    int64_t blocks;          /* the main kernel's (the largest grid) */
    double waves;
    int sms_busy;
    int occupancy;
    sim_gm_bound bound;
    double bound_share;      /* the fraction of busy time it bound */
    sim_gm_kernel kernels[SIM_GM_MAX_KERNELS];
    int nkernels;
    uint64_t l2_bytes;       /* the capacity used (SIM_GM_L2_INFINITE: none) */
    uint64_t steps;          /* tile steps replayed, all blocks */
    /* FA3's pipeline (sim_gpu_fa3.h), for a loop order whose kernel issues
     * WGMMA: the mean over its main kernel's computing steps of G (the
     * products), E (the softmax), M (the copies) and the step's time, in
     * seconds, and how many steps; all 0 for the others. */
    struct {
        double G, E, M, step;
        uint64_t steps;
    } fa3;
    /* The first full tile step (B_r x B_c scores) of the grid's kernel, as
     * the clock charges it, in seconds: its products alone on the tensor
     * cores (mm) and stretched where shared memory feeds them slower
     * (prod), its exps (sfu), its other FP32 work (fp32), the warps'
     * exchange through shared memory (exchange) and the latency of its
     * dependent phases (phases, `nphases` of them at phase_cycles each).
     * One block alone on its SM runs them one after another; `set` is 0
     * when the run has no such step. */
    struct {
        double mm, prod, sfu, fp32, exchange, phases;
        int nphases, set;
    } step;
} sim_gm_result;

/* Model a run of plan p (problem sh) on GPU g. Returns 0, or -1 with a
 * one-line message: a number the model needs missing from g (named), a
 * launch over a hardware limit (grid size, shared memory or registers per
 * block, named), out of memory, or a trace over its limit (with its size
 * and how to narrow it). */
int sim_gpu_model_run(const sim_gpu *g, const sim_plan *p, const sim_shape *sh,
                      const sim_gm_opts *o, sim_gm_result *out, char *err, size_t errlen);

/* The lines the report prints under the model's table: what it models
 * instead of measuring, and its constants. */
void sim_gpu_model_assumptions(FILE *out, const sim_gpu *g);

/* The efficiency constants (sim_gpu_model.c says what fixed each), for the
 * test that freezes them and for the report. */
typedef struct {
    double tensor_eff;       /* fraction of the tensor-core peak an mma loop reaches */
    double dram_eff;         /* fraction of DRAM bandwidth a stream reaches */
    double framework_dram_eff;   /* the fraction a framework's kernels reach, one per
                                    operation (SIM_LOOP_FRAMEWORK: unfused) */
    double launch_s;         /* seconds from one kernel's end to the next's start */
    double phase_cycles;     /* clocks each dependent phase of a tile step (a product
                                whose result the next one needs, a barrier of the
                                block's warps) leaves exposed (sim_gm_step_phases) */
} sim_gm_constants;

/* The dependent phases of one tile step of a loop order's kernel: its
 * products in sequence plus its block-wide barriers (__syncthreads), as
 * counted in the released kernels' loops (sim_gpu_model.c says where). 0 for
 * standard attention's library kernels. */
int sim_gm_step_phases(const sim_loop *loop, int bwd);

sim_gm_constants sim_gpu_model_constants(void);

#endif /* FASIM_SIM_GPU_MODEL_H */
