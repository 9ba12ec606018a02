/*
 * sim_sweep.h — sweeps: run the loop orders over a range (or a grid) of N, d
 * or M, count-only, and fit how their HBM traffic grows, beside the exponents
 * Theorem 2 predicts (naive ~ N^2, FlashAttention ~ N^2 d^2 / M, for
 * d <= M <= N d with M in elements) and the lower bound of Proposition 3.
 *
 * A sweep is: spec (fixed shape + one to three axes) -> the grid of points
 * (the first axis varies slowest) -> for each point and loop order, a plan
 * (the best one unless blocks are given), the closed-form counts and tile
 * steps -> optionally the simulator itself, count-only, whose counts must
 * equal the closed forms -> fits -> text, JSON, CSV, plot data.
 *
 * Regime. A fit uses only the points where Theorem 2 speaks (d <= M_elems
 * <= N d) and where the block whose count sets the re-reads has not reached
 * its cap (B = N leaves nothing to re-read). That block is B_r for the naive
 * order and FA2 (K and V are read T_r times) and B_c for FA1 (Q, O, l, m move
 * T_c times). When no usable points remain for a parameter the fit says why
 * instead of quoting an exponent.
 */
#ifndef FASIM_SIM_SWEEP_H
#define FASIM_SIM_SWEEP_H

#include <stdint.h>
#include <stdio.h>

#include "sim.h"
#include "sim_fit.h"
#include "sim_presets.h"
#include "sim_report.h"

/* ---- axes --------------------------------------------------------------- */

/* The shape's N, d and M, then the block sizes B_r and B_c: a sweep over a
 * block size keeps the shape fixed and plans every point with the blocks
 * asked (the other one pinned by --Br/--Bc, or the best for it), as the
 * FlashAttention paper's Figure 2 (middle) varies the block size. A point
 * whose blocks do not fit M is kept and marked (sim_sweep_entry.misfit). */
typedef enum {
    SIM_PARAM_N, SIM_PARAM_D, SIM_PARAM_M, SIM_PARAM_BR, SIM_PARAM_BC, SIM_PARAM_COUNT
} sim_param;

const char *sim_param_name(sim_param p);          /* "N", "d", "M", "Br", "Bc" */
/* "N"/"n", "d"/"D", "M"/"m", "Br", "Bc"; returns 0 and sets *out, or -1. */
int sim_param_parse(const char *s, sim_param *out);

/* 1 for B_r and B_c, the plan's parameters; 0 for the shape's. */
static inline int sim_param_is_block(sim_param p)
{
    return p == SIM_PARAM_BR || p == SIM_PARAM_BC;
}

#define SIM_AXIS_MAX_VALUES 1024     /* per axis: far more than a plot shows */
#define SIM_SWEEP_MAX_POINTS 4096    /* per sweep: a grid of 64 x 64 */

typedef enum { SIM_STEP_MUL, SIM_STEP_ADD } sim_step_kind;

typedef struct {
    sim_param param;
    int n;
    int64_t values[SIM_AXIS_MAX_VALUES];   /* ascending, distinct, >= 1 */
    /* How it was made, for the heading: a range lo..hi with a step, or a list. */
    int is_range;
    sim_step_kind step_kind;
    int64_t step;
} sim_axis;

/* Fill ax with lo, lo (*|+) step, ... up to hi (the last value is the largest
 * one <= hi; hi itself need not be reached). Requires 1 <= lo <= hi; a
 * multiplicative step >= 2, an additive step >= 1.
 * Returns 0, or -1 with err set: an empty range (lo > hi), a bad step, or
 * more than SIM_AXIS_MAX_VALUES values. */
int sim_axis_range(sim_axis *ax, sim_param p, int64_t lo, int64_t hi, sim_step_kind kind,
                   int64_t step, char *err, size_t errlen);

/* Fill ax with an explicit list of n values (sorted and de-duplicated here).
 * Returns 0, or -1 with err set (n < 1, a value < 1, too many values). */
int sim_axis_list(sim_axis *ax, sim_param p, const int64_t *v, int n, char *err,
                  size_t errlen);

/* ---- one measurement ------------------------------------------------------ */

typedef enum {
    SIM_ENGINE_AUTO,     /* the simulator when the whole job is at most
                            SIM_ENGINE_AUTO_STEPS tile steps, else closed forms */
    SIM_ENGINE_SIM,      /* always run the simulator (count-only) */
    SIM_ENGINE_CLOSED    /* closed forms only (exact; tests prove them equal) */
} sim_engine;

/* 2^29 tile steps: 1.5 to 4 s of count-only simulation here (bench_sweep
 * measures 1.4e8 steps/s for FA1 and 3.7-4e8 for the naive order and FA2,
 * one core). */
#define SIM_ENGINE_AUTO_STEPS (UINT64_C(1) << 29)

typedef struct {
    sim_plan plan;
    sim_counts counts;     /* measured (simulated) or closed form */
    uint64_t steps;
    int simulated;         /* 1: sim_run produced the counts */
    double seconds;        /* wall time of the simulation (0 for closed forms) */
} sim_measurement;

/* Plan and count one loop order on one shape, run as the plain forward pass
 * (sweeps and claims have no run options: no pass, split or pages of their
 * own). kind/Br/Bc as for
 * sim_plan_choose. engine: SIM runs sim_run count-only and requires its counts
 * to equal the closed form; CLOSED does not run it; AUTO runs it when the run
 * is at most SIM_ENGINE_AUTO_STEPS tile steps. max_steps (0 =
 * SIM_DEFAULT_MAX_STEPS) limits a simulated run.
 * Returns SIM_OK; SIM_EUSAGE with err set (no plan fits, counts overflow,
 * too many steps); SIM_EFAIL (the simulator failed, or disagreed with the
 * closed form — a bug, reported as such). */
int sim_measure(sim_algo algo, const sim_shape *sh, sim_plan_kind kind, int64_t Br,
                int64_t Bc, sim_engine engine, uint64_t max_steps, sim_measurement *out,
                char *err, size_t errlen);

/* Total HBM bytes of a count. */
uint64_t sim_counts_total_bytes(const sim_counts *c, sim_dtype dt);

/* The block whose count sets the re-reads (see the file comment). */
int64_t sim_reread_block(sim_algo algo, int64_t Br, int64_t Bc);

/* ---- a sweep ---------------------------------------------------------------- */

typedef struct {
    sim_shape base;                  /* the fixed parameters */
    int run_algo[SIM_ALGO_MAX];
    sim_plan_kind plan_kind;         /* AUTO or PAPER; USER when Br/Bc set */
    int64_t Br, Bc;                  /* 0 = choose */
    int naxes;                       /* 1 .. SIM_PARAM_COUNT, distinct params */
    sim_axis axes[SIM_PARAM_COUNT];
    sim_engine engine;
    uint64_t max_steps;              /* per run; 0 = SIM_DEFAULT_MAX_STEPS */
    const sim_gpu *gpu;              /* NULL, or a preset: roofline per run */
    /* Called while the simulator runs, after each run: done and total are
     * tile steps. May be NULL. */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
} sim_sweep_spec;

typedef struct {
    int64_t Br, Bc, Tr, Tc;
    uint64_t sram_peak;
    uint64_t steps;
    uint64_t read_bytes, write_bytes, bytes, elems;
    int capped;                      /* the re-read block is N: nothing re-read */
    int softmax_passes;              /* naive: 1 or 2 (sim_plan); 0 otherwise */
    int misfit;                      /* a sweep over block sizes: these blocks do not
                                        fit M here, so nothing was counted; Br, Bc,
                                        Tr, Tc and sram_peak are the smallest such
                                        plan's, the rest 0 */
    double flops;                    /* matmul FLOPs (sim_run_flops) */
    sim_roofline roof;               /* when spec.gpu */
    double seconds;                  /* simulation time, 0 for closed forms */
} sim_sweep_entry;

typedef struct {
    sim_shape sh;
    int64_t Br, Bc;                  /* a block axis's values here; 0: the spec's */
    sim_bounds bounds;
    sim_sweep_entry run[SIM_ALGO_MAX];   /* by algo; valid where spec.run_algo */
} sim_sweep_point;

typedef enum {
    SIM_FIT_OK,              /* exponent quoted beside theory */
    SIM_FIT_OUT_OF_REGIME,   /* too few points with d <= M <= N d: no exponent */
    SIM_FIT_CAPPED,          /* too few points with blocks below their caps */
    SIM_FIT_FIXED_BLOCKS,    /* the re-read block does not change with M or d:
                                exponent quoted, Theorem 2 does not apply */
    SIM_FIT_FAILED           /* e.g. parameters varied in lockstep */
} sim_fit_status;

const char *sim_fit_status_name(sim_fit_status s);  /* "ok", "out of regime", ... */

typedef struct {
    sim_fit_status status;
    double exponent, r2, max_resid;      /* when status is OK or FIXED_BLOCKS */
    int has_theory;
    double theory;                       /* exponent of the Theta / Omega expression
                                            fitted over the same points */
    int has_block;
    double block_exponent;               /* the re-read block's exponent */
    int has_end_slope;
    double end_slope;                    /* one axis: slope between the last two
                                            usable points */
    int used, total;                     /* points in the fit, points in the sweep */
    int out_of_regime, capped;           /* points left out, by reason */
    char note[240];                      /* one line, or empty */
} sim_sweep_fit;

/* Subjects of the fits: the loop orders 0 .. sim_algo_count() - 1, then the
 * lower bound, right after them (at most SIM_ALGO_MAX). */
#define SIM_SUBJECT_BOUND sim_algo_count()

typedef struct {
    sim_sweep_spec spec;
    int simulated;                   /* 1: every count came from the simulator */
    char engine_note[200];           /* why closed forms, when chosen automatically */
    int npoints;
    sim_sweep_point *pts;            /* owned; npoints of them */
    sim_sweep_fit fits[SIM_ALGO_MAX + 1][SIM_PARAM_COUNT];   /* [subject][axis k] */
    uint64_t total_steps;
    double seconds;                  /* wall time of the whole sweep */
} sim_sweep_result;

/* Run the sweep. Every plan and limit is checked before anything runs.
 * Returns SIM_OK (release res with sim_sweep_free), or SIM_EUSAGE /
 * SIM_EFAIL with err set (and nothing to free). */
int sim_sweep_run(const sim_sweep_spec *spec, sim_sweep_result *res, char *err,
                  size_t errlen);
void sim_sweep_free(sim_sweep_result *res);

/* Fit the points again (sim_sweep_run does this itself; exposed for tests
 * that build points by hand). */
void sim_sweep_fit_all(sim_sweep_result *res);

/* Renderers. Text: 80 columns, the table then the exponents. JSON: one
 * object (keys in docs/sweeps.md). CSV: a header and one row per point. */
void sim_sweep_text(FILE *out, const sim_sweep_result *res);
void sim_sweep_json(FILE *out, const sim_sweep_result *res);
void sim_sweep_csv(FILE *out, const sim_sweep_result *res);

/* The value of parameter p at a point. */
int64_t sim_point_param(const sim_sweep_point *pt, sim_param p);

#endif /* FASIM_SIM_SWEEP_H */
