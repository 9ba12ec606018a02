/*
 * viz_timeline.h — the GPU model's SMs over time (study/sim_gpu_model.h):
 * which thread block ran where, wave by wave, as a terminal picture and as
 * an SVG that fasim draws itself.
 *
 * A timeline collects the blocks of one modelled run through the model's
 * on_block callback (viz_timeline_on_block), then draws them: one row per
 * SM, time across, each block marked with its wave on its slot (the k-th
 * block a slot runs is in wave k).
 */
#ifndef FASIM_VIZ_TIMELINE_H
#define FASIM_VIZ_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "sim_gpu_model.h"

typedef struct {
    int kernel, sm, slot;
    int wave;                  /* the k-th block its slot ran (0-based) */
    double t0, t1;             /* seconds */
    int64_t head, block;
} viz_tl_block;

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
} viz_timeline;

/* An empty timeline for a GPU of `sms` SMs, keeping at most max_blocks
 * blocks (the picture of more would be a solid colour). Returns 0, or -1
 * out of memory. */
int viz_timeline_init(viz_timeline *tl, int sms, int max_slots, int64_t max_blocks);
void viz_timeline_free(viz_timeline *tl);

/* The model's on_block callback; ctx is the timeline. */
void viz_timeline_on_block(void *ctx, int kernel, int sm, int slot, double t0, double t1,
                           int64_t head, int64_t block);

/* Model plan p (problem sh) on g as sim_gpu_model_run does, with o's L2 and
 * no trace, collecting its blocks into tl (initialised here, at most
 * max_blocks kept) and its result into *res. Returns 0, or -1 with err set
 * (the model's message, or out of memory); tl is freed on failure. */
int viz_timeline_model(viz_timeline *tl, const sim_gpu *g, const sim_plan *p,
                       const sim_shape *sh, const sim_gm_opts *o, int64_t max_blocks,
                       sim_gm_result *res, char *err, size_t errlen);

/* The terminal picture: `rows` SMs at most (the first ones; a line says how
 * many are left out), `width` columns of time; each cell the wave of the
 * block on the SM's first slot (0-9, then a-z, cycling), '.' idle. */
void viz_timeline_text(FILE *out, const viz_timeline *tl, const char *title, int width,
                       int rows);

/* The SVG: every SM and slot, a rectangle per block coloured by its wave,
 * a time axis in microseconds, the title and the model's figures. */
void viz_timeline_svg(FILE *out, const viz_timeline *tl, const char *title,
                      const sim_gm_result *r);

#endif /* FASIM_VIZ_TIMELINE_H */
