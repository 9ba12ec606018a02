/*
 * viz_timeline.h — the GPU model's SMs over time (study/sim_gpu_model.h):
 * which thread block ran where, wave by wave, as a terminal picture and as
 * an SVG that fasim draws itself.
 *
 * A timeline collects the blocks of one modelled run through the model's
 * on_block callback (viz_timeline_on_block), then draws them: one row per
 * SM, time across, each block marked with its wave on its slot (the k-th
 * block a slot runs is in wave k).
 *
 * For FA3 (a loop order whose kernel issues WGMMA: sim_gpu_fa3.h) it also
 * keeps the first tile steps of one thread block, SM 0's first, as the
 * model timed them (its on_fa3_step callback: the slices sim_fa3_step gave
 * each step, never recomputed here), and draws them below the SMs: one row
 * per track (the producer's copies, consumer warpgroups 1 and 2) and one
 * for the shared-memory ring's stages full, time across, the steps marked.
 */
#ifndef FASIM_VIZ_TIMELINE_H
#define FASIM_VIZ_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "sim_gpu_fa3.h"
#include "sim_gpu_model.h"

typedef struct {
    int kernel, sm, slot;
    int wave;                  /* the k-th block its slot ran (0-based) */
    double t0, t1;             /* seconds */
    int64_t head, block;
} viz_tl_block;

/* One tile step of the pictured FA3 block, as the model timed it. */
typedef struct {
    int64_t j;                 /* its key/value block (0-based) */
    double t, dur, freed;      /* seconds: its start, its time, the block before's stage freed */
    sim_fa3_slice sl[SIM_FA3_MAX_SLICES];
    int n;
} viz_tl_fa3_step;

#define VIZ_TL_FA3_STEPS 16    /* steps of the pictured block kept */

typedef struct {
    int no_pipeline, no_warp_spec;   /* the run's switches */
    int64_t head, block, i;    /* the pictured block: SM 0's first */
    int64_t steps;             /* its computing steps, all of them */
    int n;                     /* of those, kept in s */
    int done;                  /* 1: SM 0's first slot has moved on to another block */
    viz_tl_fa3_step s[VIZ_TL_FA3_STEPS];
} viz_tl_fa3;

typedef struct {
    viz_tl_block *b;
    int64_t n, cap;
    int64_t max_blocks;        /* blocks kept (the rest counted in dropped) */
    int64_t dropped;
    int sms, slots;            /* SMs, and the most slots any SM used */
    int max_slots;             /* the stride of waves[] */
    int *waves;                /* per (sm, slot): blocks run so far */
    double t_end;
    int failed;                /* out of memory */
    viz_tl_fa3 fa3;            /* FA3's pipeline, one block (fa3.n = 0: none) */
} viz_timeline;

/* An empty timeline for a GPU of `sms` SMs, keeping at most max_blocks
 * blocks (the picture of more would be a solid colour). Returns 0, or -1
 * out of memory. */
int viz_timeline_init(viz_timeline *tl, int sms, int max_slots, int64_t max_blocks);
void viz_timeline_free(viz_timeline *tl);

/* The model's on_block callback; ctx is the timeline. */
void viz_timeline_on_block(void *ctx, int kernel, int sm, int slot, double t0, double t1,
                           int64_t head, int64_t block);

/* The model's on_fa3_step callback; ctx is the timeline: keeps the steps
 * of the first block on SM 0's first slot. */
void viz_timeline_on_fa3_step(void *ctx, const sim_gm_fa3_step *s);

/* Model plan p (problem sh) on g as sim_gpu_model_run does, with o's L2 and
 * no trace, collecting its blocks into tl (initialised here, at most
 * max_blocks kept) and its result into *res. Returns 0, or -1 with err set
 * (the model's message, or out of memory); tl is freed on failure. */
int viz_timeline_model(viz_timeline *tl, const sim_gpu *g, const sim_plan *p,
                       const sim_shape *sh, const sim_gm_opts *o, int64_t max_blocks,
                       sim_gm_result *res, char *err, size_t errlen);

/* The terminal picture: `rows` SMs at most (the first ones; a line says how
 * many are left out), `width` columns of time; each cell the wave of the
 * block on the SM's first slot (0-9, then a-z, cycling), '.' idle. Below
 * it, when the timeline kept FA3 steps, viz_timeline_fa3_text's picture. */
void viz_timeline_text(FILE *out, const viz_timeline *tl, const char *title, int width,
                       int rows);

/* FA3's pipeline in one thread block, `width` columns: its first steps
 * (as many as fit, at most 6), time across; rows "producer" (or, with
 * --warp-specialization off, "WG copies": the consumers issue them), "WG1",
 * "WG2", each cell the slice there (T copy, 0 GEMM0, 1 GEMM1, X GEMM1 of
 * j-1 and GEMM0 of j, s softmax, S softmax beside GEMM1 of j-1, '.' idle or
 * waiting), and "SMEM full", the ring's stages full (1 .. SIM_FA3_STAGES);
 * a ruler marks each step's start '|' and its j (1-based, as the
 * pseudocode's); a legend of what is drawn. Nothing when none kept. */
void viz_timeline_fa3_text(FILE *out, const viz_timeline *tl, int width);

/* The SVG: every SM and slot, a rectangle per block coloured by its wave,
 * a time axis in microseconds, the title and the model's figures; for FA3,
 * below it the kept block's steps as viz_timeline_fa3_text draws them,
 * each slice a rectangle coloured by what it does. */
void viz_timeline_svg(FILE *out, const viz_timeline *tl, const char *title,
                      const sim_gm_result *r);

#endif /* FASIM_VIZ_TIMELINE_H */
