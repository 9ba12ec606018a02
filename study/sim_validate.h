/*
 * sim_validate.h — the GPU timing model (sim_gpu_model.h) against published
 * measurements: a file of figures, each with its full configuration and its
 * source, the model's prediction for each, and the errors.
 *
 * The file (bench/published/gpu-figures.tsv) is tab-separated text: '#'
 * starts a comment line, blank lines are skipped, the first other line is
 * the header naming the columns, then one figure a row:
 *
 *   gpu dtype algo passes causal batch heads N d metric value flops fit source
 *
 * gpu: a preset (sim_gpu_find); algo: a loop order (sim_algo_parse), fa3
 * with one of its switches as "fa3/np" (--pipeline off) or "fa3/nw"
 * (--warp-specialization off); a row of fa3 on a GPU it does not run on
 * (not Hopper) is kept, printed and left out of the statistics; passes: fwd, bwd or fwd+bwd; metric: tflops, ms or GB
 * (DRAM bytes read and written, 10^9 B); flops: the FLOP convention of a
 * tflops row, "fa2" (FlashAttention-2, section 4.1: forward 4 B N^2 d H,
 * halved under a causal mask, backward 2.5 times the forward), "-" on the
 * others; fit: 1 on the rows that fixed the model's constants.
 *
 * The errors: a row's is signed, (predicted - measured) / measured; a set of
 * rows is summed up by the geometric mean of max(p/m, m/p), minus one (so an
 * error of +50% and one of -33% weigh the same: both are a factor of 1.5),
 * kept apart for the rows with fit = 1 and the others, and by the rows off
 * by more than SIM_VALIDATE_OFF (|error| over 40%).
 */
#ifndef FASIM_SIM_VALIDATE_H
#define FASIM_SIM_VALIDATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"
#include "sim_presets.h"

/* A row is "off" when its |error| exceeds this: the goal is no
 * figure off by more than 40%. */
#define SIM_VALIDATE_OFF 0.40

typedef enum { SIM_VM_TFLOPS, SIM_VM_MS, SIM_VM_GB, SIM_VM_COUNT } sim_vmetric;

const char *sim_vmetric_name(sim_vmetric m);      /* "tflops", "ms", "GB" */

/* One published figure. */
typedef struct {
    int line;                 /* 1-based line of the file */
    const sim_gpu *gpu;
    sim_dtype dtype;
    int modelled;             /* 0: a loop order the model cannot run on gpu
                                 (fa3 off Hopper) */
    sim_algo algo;
    int no_pipeline, no_warp_spec;   /* fa3's switches (sim_gm_opts) */
    int unfused_ops;          /* unfused's operations, a sim_uf_ops: "unfused/fa2bench" */
    char algo_name[24];       /* as written */
    int fwd, bwd;             /* the passes: fwd, bwd or both */
    int causal;
    int64_t batch, heads, N, d;
    sim_vmetric metric;
    double value;             /* the published figure, > 0 */
    int fa2_flops;            /* 1: the FLOP convention "fa2" (tflops rows) */
    int fit;
    char source[256];
} sim_vfig;

typedef struct {
    sim_vfig *items;
    int n;
} sim_vfig_list;

/* Parse a figures file (its whole text; name is used in messages). Returns
 * the number of bad lines, each refused in err as "name:LINE: what is
 * wrong" (one a line, as many as fit), with out empty; -1 when out of memory;
 * 0 with out set (free with sim_vfig_list_free). */
int sim_validate_parse(const char *name, const char *text, sim_vfig_list *out, char *err,
                       size_t errlen);

void sim_vfig_list_free(sim_vfig_list *l);

/* The FLOPs a tflops row's convention counts for its problem and passes. */
double sim_validate_flops(const sim_vfig *f);

/* The problem of row f as the model runs it: M the preset's shared memory
 * per block. */
sim_shape sim_validate_shape(const sim_vfig *f);

/* The plan the model runs for pass q of row f: the released kernel's
 * (sim_plan_kernel for the preset, as --plan kernel), or for a loop order
 * no released kernel runs (naive, unfused) the report's default plan: the
 * largest square tile of SIM_SAME_TILES that fits the row's passes, else
 * the best. Returns 0, or -1 with a one-line message. */
int sim_validate_plan(const sim_vfig *f, sim_pass q, sim_plan *out, char *err, size_t errlen);

/* The model's prediction of row f in the row's metric, and its time (all
 * passes, s). Returns 0, or -1 with a one-line message (the model's). */
int sim_validate_predict(const sim_vfig *f, double *value, double *time_s, char *err,
                         size_t errlen);

/* ---- the errors ---------------------------------------------------------- */

/* (pred - meas) / meas: +0.25 predicts a quarter more than was measured. */
double sim_validate_error(double pred, double meas);

/* max(pred / meas, meas / pred): 1 for a perfect prediction. */
double sim_validate_factor(double pred, double meas);

/* What each row came to. */
typedef enum {
    SIM_VROW_OK,              /* predicted */
    SIM_VROW_NOT_MODELLED,    /* a loop order fasim lacks */
    SIM_VROW_FAILED           /* the model refused it (why says so) */
} sim_vrow_status;

typedef struct {
    sim_vrow_status status;
    double pred;              /* in the row's metric (SIM_VROW_OK) */
    double error;             /* sim_validate_error(pred, value) */
    int off;                  /* |error| > SIM_VALIDATE_OFF */
    char why[256];            /* SIM_VROW_FAILED: the model's message */
} sim_vrow;

/* A group of rows: how many, and the geometric mean of their factors minus
 * one (0 when n is 0). */
typedef struct {
    int n;
    double geomean_error;
} sim_vgroup;

typedef struct {
    sim_vgroup fit, other;    /* rows with fit = 1, and the others */
    int off;                  /* rows off by more than SIM_VALIDATE_OFF */
    int not_modelled, failed;
} sim_vsummary;

/* Fill r[k].error and r[k].off from r[k].pred for every predicted row, and
 * sum them up. */
sim_vsummary sim_validate_summarise(const sim_vfig_list *l, sim_vrow *r);

/* The table (80 columns) and its summary; name: the file's. */
void sim_validate_print(FILE *out, const char *name, const sim_vfig_list *l,
                        const sim_vrow *r, const sim_vsummary *s);

/* The same as one JSON object. */
void sim_validate_json(FILE *out, const char *name, const sim_vfig_list *l, const sim_vrow *r,
                       const sim_vsummary *s);

#endif /* FASIM_SIM_VALIDATE_H */
