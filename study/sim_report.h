/*
 * sim_report.h — the classroom report: run the requested loop orders on one
 * problem, compare with the closed forms and the oracle, and render the
 * result as text (80 columns) or JSON.
 */
#ifndef FASIM_SIM_REPORT_H
#define FASIM_SIM_REPORT_H

#include <stdio.h>

#include "ref_oracle.h"
#include "sim_json.h"
#include "sim.h"
#include "sim_limits.h"
#include "sim_loop.h"
#include "sim_gpu_model.h"
#include "sim_presets.h"
#include "sim_ring.h"
#include "sim_status.h"

typedef enum { SIM_MODE_AUTO, SIM_MODE_COMPUTE, SIM_MODE_COUNT } sim_mode;


/* Defaults for the resource limits (each raised by a CLI flag). */
#define SIM_DEFAULT_MAX_MEM   (4ull << 30)      /* compute-mode host memory  */
/* Compute mode is chosen by default when the runs would take at most two
 * seconds by sim_compute_seconds (the flops at each pass's measured rate,
 * the float64 oracle included; sim_limits.h): the three loop orders
 * forward at N = 4096, d = 64 (1.29e10 flops, 2.1 s estimated, 1.54 s
 * measured) compute, at N = 2048 (0.43 s measured) too; --pass both at
 * N = 2048 (1.45e10 flops, 4.2 s measured, its backward's products still
 * scalar) counts only. It was 4.8e9 flops at the scalar primitives' speed
 * (2.1e9 to 2.7e9 flops a second end to end). In the web page the rates are
 * a sixth: there N = 1024 computes, N = 2048 counts only. */
#define SIM_AUTO_COMPUTE_SECONDS 2.2

/* run_algo's value for a loop order "all" asked for: run it in the passes
 * (and commands) that have it, leave it out of the others. */
#define SIM_ALGO_IF_SERVED 2

typedef struct {
    sim_shape sh;                   /* the problem */
    sim_run_opts run;               /* how it runs: split-KV, paged KV (run.pass is
                                       ignored: run_pass says which; run.page_seed
                                       is seed's) */
    int run_algo[SIM_ALGO_MAX];     /* 0: not run; 1: asked by name, refused for a
                                       pass it has no loop order for;
                                       SIM_ALGO_IF_SERVED: asked through "all", left
                                       out of such a pass */
    int run_pass[SIM_PASS_COUNT];   /* nonzero: run that pass; none set: forward */
    sim_plan_kind plan_kind;        /* AUTO or PAPER; USER when Br/Bc set */
    int64_t Br, Bc;                 /* 0 = choose */
    sim_mode mode;
    uint64_t seed;
    const float *Q, *K, *V;         /* inputs from files, or NULL: seeded */
    int outliers;                   /* seeded inputs: FlashAttention-3's Table 3
                                       distribution (sim_outlier_qkv), not the
                                       bell-shaped default */
    const float *dO;                /* the backward's output gradient from a file,
                                       or NULL: seeded (sim_random_grad) */
    uint64_t max_mem;               /* 0 = default */
    uint64_t max_steps;             /* 0 = default */
    const sim_gpu *gpu;             /* a hardware preset, or NULL: with one, the
                                       report adds a roofline estimate per run */
    sim_gm_opts gm;                 /* with gpu: the GPU model's L2 and trace */
    int explain;                    /* --explain: each section's note in full */
    const sim_model *model;         /* a model preset, or NULL: with one, the
                                       report adds the traffic in GiB, per layer
                                       and for all the model's layers */
    sim_ring_req ring;              /* ring.P > 0: FA2's forward across ring.P
                                       devices beside the one-device runs
                                       (sim_ring.h) */
} sim_request;

typedef struct {
    sim_algo algo;
    sim_pass pass;
    int64_t splits;                 /* split-KV's S (fa2 forward), or 0 */
    sim_result res;
    sim_counts theory;              /* closed form for the same plan */
    int theory_matches;
    sim_counts contiguous;          /* paged KV: the closed form of the same plan
                                       with K and V contiguous, for the comparison */
    int has_error;
    ref_error err;                  /* forward: O against the oracle */
    ref_error grad_err[3];          /* backward: dQ, dK, dV against the oracle's */
    double seconds;                 /* wall time of the run */
    sim_roofline roof;              /* when req.gpu: the roofline estimate */
    int has_gm;                     /* when req.gpu: the GPU model (sim_gpu_model.h) */
    sim_gm_result gm;
    int has_flops;                  /* the loop order gives its FLOPs: */
    sim_flops flops;                /* sim_theory_flops of the run's plan */
} sim_report_run;

typedef struct {
    sim_request req;
    int computed;
    char mode_note[256];            /* why this mode, when chosen automatically */
    int nruns;
    sim_report_run runs[SIM_ALGO_MAX * SIM_PASS_COUNT + 1];   /* forward runs first;
                                       fa2's split-KV run after fa2's */
    int have_naive_bytes;
    uint64_t naive_bytes;           /* naive's forward total bytes, for the ratios */
    int have_naive_pass[SIM_PASS_COUNT];
    uint64_t naive_pass_bytes[SIM_PASS_COUNT];   /* the same for each pass */
    sim_bounds bounds;
    double oracle_seconds;
    /* GQA (G < H) with FA2 run: the same FA2 with the H/G query heads of a
     * key/value head in one block, measured beside the fa2 column. */
    int has_gqa;
    sim_report_run gqa;             /* the grouped run (algo SIM_FA2), its error
                                       against the oracle in compute mode */
    char gqa_note[512];             /* why there is no grouped run, when G < H */
    /* req.plan_kind SIM_PLAN_SAME asked: the one B_r = B_c every run uses,
     * or -1 when none of SIM_SAME_TILES fits every run (each then has its
     * best plan); 0: not asked. */
    int64_t same_tiles;
    /* req.ring.P > 0: the ring, its rounds of the fa2 run's B_r x B_c, and
     * in compute mode its merged output against the oracle. */
    int has_ring;
    sim_ring ring;
    int has_ring_err;
    ref_error ring_err;
} sim_report;

/* The square tiles SIM_PLAN_SAME tries, largest first. The released
 * FlashAttention-2 kernels (csrc/flash_attn/src/flash_fwd_launch_template.h,
 * 2.x, commit 01afd16) use B_r x B_c = 128 x 128 forward for d <= 64;
 * 128 x 64 for d = 96 .. 192 on A100 and H100 (64 x 64 causal, 128 x 32 not,
 * on sm86/sm89); 128 x 64 (A100) or 64 x 64 (H100) for d = 256. Backward at
 * d = 64 (flash_bwd_launch_template.h): 128 x 128 with 144 KB of shared
 * memory per block, else 64 x 128, in earlier 2.x releases; 64 x 64 in later
 * ones. So 128 and 64 are real kernels' squares; fasim's one-level SRAM
 * also holds the fp32 accumulators (which real kernels keep in registers),
 * so smaller squares follow for small M. */
#define SIM_SAME_TILES { 128, 64, 32, 16 }

/* Plan, check limits, run and compare. Returns SIM_OK, or SIM_EUSAGE /
 * SIM_EFAIL with a message (one or more lines, no trailing newline) in err.
 * On success the caller releases rep with sim_report_free. */
int sim_report_build(const sim_request *req, sim_report *rep, char *err, size_t errlen);

void sim_report_free(sim_report *rep);

/* SIM_PLAN_SAME's tiles for req: the largest square of SIM_SAME_TILES whose
 * plan fits M for every loop order and pass req runs, or -1 when none does. */
int64_t sim_report_same_tiles(const sim_request *req);

/* SIM_PLAN_SAME's tiles for the report's defaults on sh (`fasim` with no
 * --algo or --pass: its default loop orders, forward), or 0 when none
 * fits. What a lesson that compares loop orders' bytes runs them on, so
 * that its figures are the report's. */
int64_t sim_report_default_tiles(const sim_shape *sh);

/* Make req's plan those tiles: USER t x t for t > 0, else each loop
 * order's best plan (AUTO). */
void sim_report_use_tiles(sim_request *req, int64_t t);

/* Resolve req's SIM_PLAN_SAME (the report, fasim gpu): its tiles, applied
 * as sim_report_use_tiles does. Returns them, -1 when none fits, or 0 (and
 * req untouched) when req asks for another plan. */
int64_t sim_report_resolve_same(sim_request *req);

/* The bound of Theorem 2 that algo's traffic follows (its descriptor's);
 * SIM_BOUND_FLASH for an algo no descriptor serves. */
sim_bound sim_report_bound(sim_algo algo);

/* That bound's value in bd, in elements: bd->theta_standard or
 * bd->theta_flash. */
double sim_report_theta(const sim_bounds *bd, sim_algo algo);

void sim_report_text(FILE *out, const sim_report *rep);
void sim_report_json(FILE *out, const sim_report *rep);

/* Start a --json document on out: the top-level object with
 * "fasim_version" its first member. The caller adds the rest, closes the
 * object with sim_json_end and ends the line. */
void sim_report_json_begin(sim_json *w, FILE *out);

/* The roofline estimate as the JSON member key: flops (matmul), memory_s,
 * compute_s, estimate_s, bound, intensity, balance, nonmatmul_flops,
 * nonmatmul_s. The report's runs and the sweep's
 * points write it alike. */
void sim_report_json_roofline(sim_json *w, const char *key, const sim_roofline *rf);


/* The GPU model's result as the object `key` of a run (the report's and
 * gpu's runs[].gpu_model). */
void sim_report_json_gpu_model(sim_json *w, const char *key, const sim_gm_result *m);

#endif /* FASIM_SIM_REPORT_H */
