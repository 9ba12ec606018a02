/*
 * sim_presets.h — hardware presets (A100, H100, H200) and the roofline
 * estimate they make possible.
 *
 * A preset gives the numbers a teacher needs beside the IO counts: the shared
 * memory one thread block can use (fasim's M), the SM count, the HBM
 * bandwidth and the dense peak arithmetic rates. Each number's source is a
 * comment beside it in sim_presets.c. The roofline estimate is the classic
 * one: time >= max(bytes / bandwidth, flops / peak), with the whole GPU
 * working at its peak rate and full bandwidth — a lower bound on real time,
 * never a prediction of it.
 */
#ifndef FASIM_SIM_PRESETS_H
#define FASIM_SIM_PRESETS_H

#include <stdint.h>
#include <stdio.h>

#include "sim.h"

typedef struct {
    const char *name;             /* "a100", "h100", "h200" (what --gpu takes) */
    const char *title;            /* "NVIDIA A100 SXM4 80GB" */
    const char *arch;             /* "Ampere, compute capability 8.0" */
    int sms;                      /* streaming multiprocessors */
    uint64_t smem_per_block;      /* bytes: largest shared memory one block can use (opt-in) */
    uint64_t smem_per_sm;         /* bytes: largest shared-memory carve-out of one SM */
    uint64_t l1_smem_per_sm;      /* bytes: combined L1 data cache + shared memory per SM */
    double clock_hz;              /* boost clock used for the shared-memory bandwidth */
    double smem_bytes_per_clk;    /* per SM: 32 banks x 4 B */
    double hbm_bytes_per_s;       /* HBM bandwidth */
    uint64_t hbm_capacity;        /* bytes of HBM */
    double fp16_flops;            /* dense fp16/bf16 tensor-core peak, fp32 accumulate */
    double fp32_flops;            /* fp32 peak without tensor cores */
    int cc_major, cc_minor;       /* compute capability (what kernels' launch code tests) */
    uint32_t regs_per_block;      /* 32-bit registers one thread block may use */
    uint32_t regs_per_thread;     /* 32-bit registers one thread may use */
    /* What the GPU model (sim_gpu_model.h) needs beside the above; a zero
     * is a number the preset lacks, and the model says which. */
    uint64_t l2_bytes;            /* L2 cache, shared by all SMs */
    int l2_line_bytes;            /* L2 line (a tag covers it) */
    int l2_sector_bytes;          /* L2 sector (the unit DRAM fills) */
    double l2_bytes_per_s;        /* L2 read bandwidth, all SMs together */
    double dram_latency_s;        /* a load's round trip to DRAM, unloaded */
    uint32_t regs_per_sm;         /* 32-bit registers of one SM */
    int max_blocks_per_sm;        /* resident thread blocks per SM */
    int max_warps_per_sm;         /* resident warps per SM */
    int max_threads_per_sm;       /* resident threads per SM */
    int max_threads_per_block;
    int64_t max_grid_x, max_grid_yz;   /* gridDim.x, and .y and .z */
    double tf32_flops;            /* dense TF32 tensor-core peak */
    double fp8_flops;             /* dense FP8 tensor-core peak; 0: none */
    double sfu_per_clk;           /* per SM: exp2 (MUFU.EX2) results per clock */
    double mma_sync_fraction;     /* of fp16_flops, what mma.sync (the instruction the
                                     released FA1 and FA2 kernels issue) reaches; the
                                     library kernels of standard attention reach the
                                     peak */
} sim_gpu;

/* The presets, in a fixed order; *n is set to their count. */
const sim_gpu *sim_gpu_presets(int *n);

/* The presets' names, "a100, h100, ..." in their order, into buf. */
void sim_gpu_preset_names(char *buf, size_t len);

/* The preset called name (case-insensitive), or NULL. */
const sim_gpu *sim_gpu_find(const char *name);

/* What a kernel plan (sim_plan_kernel) needs to know of g. */
sim_kernel_target sim_gpu_kernel_target(const sim_gpu *g);

/* Shared-memory bandwidth of all SMs together, bytes/s (an estimate:
 * SMs x bytes per clock x clock). */
double sim_gpu_smem_bandwidth(const sim_gpu *g);

/* Peak rate for arithmetic in dtype: the fp16/bf16 tensor-core rate for fp16
 * and bf16, the FP8 tensor-core rate for e4m3 and e5m2 where the GPU has one
 * (else the fp16 rate: a GPU without FP8 tensor cores converts), the
 * non-tensor fp32 rate for fp32. */
double sim_gpu_peak_flops(const sim_gpu *g, sim_dtype dt);

/* The table `fasim --gpu list` prints (80 columns). */
void sim_gpu_print_table(FILE *out);

/* ---- model presets ------------------------------------------------------ */

/* The attention of one layer of a real model, with the batch a teacher would
 * put in a slide: the numbers of its architecture from its paper or released
 * configuration (sim_presets.c cites each), and a batch that is fasim's
 * choice (--batch changes it). */
typedef struct {
    const char *name;             /* what --preset takes: "gpt2-medium" */
    const char *title;            /* "GPT-2 medium (345M)" */
    const char *source;           /* where the architecture's numbers come from */
    int64_t N;                    /* sequence length (context) */
    int64_t d;                    /* head dimension */
    int64_t heads, kv_heads;      /* H query heads, G key/value heads (G = H: none shared) */
    int64_t window;               /* sliding window, 0: none */
    int64_t batch;                /* fasim's choice, not the source's */
    int64_t layers;               /* attention layers, for the whole model's traffic */
    int causal;                   /* decoder (1) or encoder (0) */
    int backward;                 /* 1: forward and backward (training); 0: forward
                                     only */
    int every_algo;               /* 1: the report runs every loop order when --algo
                                     is not given, the opt-in baselines too
                                     (sim_algo_in_default): the preset reproduces a
                                     paper's figure that shows them */
    const char *figure;           /* that figure's measured traffic, the report's note
                                     under its GB row (lines of at most 70 columns,
                                     '\n' between them); NULL: none */
} sim_model;

/* The model presets, in a fixed order; *n is set to their count. */
const sim_model *sim_model_presets(int *n);

/* The model preset called name (case-insensitive), or NULL. */
const sim_model *sim_model_find(const char *name);

/* The table `fasim --preset list` prints (80 columns). */
void sim_model_print_table(FILE *out);

/* ---- roofline ---------------------------------------------------------- */

/* The estimate charges the matmul FLOPs at the peak (tensor cores for fp16
 * and bf16). The non-matmul FLOPs (exp, max, sums, rescaling, division) run
 * on the CUDA cores: their time at the fp32 rate is shown beside, not added
 * to the estimate, which stays the classic two-ceiling bound. At that rate a
 * non-matmul FLOP costs peak / fp32 rate matmul FLOPs (16 on A100:
 * FlashAttention-2, section 3.1, from the same 312 and 19.5 TFLOP/s), and
 * exp is slower still on the special-function units, so t_other is itself
 * a lower bound on that work. */
typedef struct {
    double flops;                 /* matmul FLOPs of the run (sim_flops.matmul) */
    double other_flops;           /* its non-matmul FLOPs (sim_flops.other) */
    double bytes;                 /* HBM bytes of the run */
    double t_memory;              /* s: bytes / bandwidth */
    double t_compute;             /* s: flops / peak */
    double t_other;               /* s: other_flops / fp32 rate; not charged */
    double t_estimate;            /* s: the larger of t_memory and t_compute */
    int memory_bound;             /* 1 when t_memory >= t_compute */
    double intensity;             /* matmul flops per HBM byte */
    double balance;               /* the GPU's peak / bandwidth, flops per byte */
} sim_roofline;

sim_roofline sim_roofline_estimate(const sim_gpu *g, sim_dtype dt, sim_flops f, double bytes);

/* The arithmetic of a run of plan p: its loop order's closed forms
 * (sim_theory_flops) over the batch's heads, as that pass and loop order
 * do it. Matmul: 4 d per score computed forward (Q K^T and P V), 8 d in
 * standard attention's backward (four products) and 10 d in FA1's and
 * FA2's (a fifth: S recomputed); standard attention computes all N N_k
 * scores, masked or not, FA1 and FA2 the B_r x B_c tiles of the blocks they
 * visit (skipping fully masked ones), trimmed to N and N_k at the edges.
 * Zero when the loop order gives no count. */
sim_flops sim_run_flops(const sim_plan *p, const sim_shape *sh);

/* 1 when plan p's loop order holds S in HBM (its descriptor's hbm): it
 * computes and writes every score, masked or not, in whole rows; else 0. */
int sim_plan_stores_scores(const sim_plan *p);

#endif /* FASIM_SIM_PRESETS_H */
