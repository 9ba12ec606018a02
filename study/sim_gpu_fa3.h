/*
 * sim_gpu_fa3.h — FlashAttention-3's forward pipeline in time: the clock of
 * one tile step of a warp-specialised Hopper thread block, which the GPU
 * model (sim_gpu_model.c) asks for the loop orders whose kernel issues WGMMA
 * and TMA (sim_loop.wgmma: FA3).
 *
 * The thread block (FA3 paper, section 3.1; hopper/ of flash-attention): a
 * producer warpgroup copies K_j, V_j with the TMA into a ring of s = 2
 * shared-memory stages; two consumer warpgroups, 64 rows of the B_r = 128
 * each, run S = Q_i K_j^T (GEMM0), the softmax, and O_i += P~ V_j (GEMM1).
 * Of one step (the B_r x B_c tile of block pair i, j):
 *   G  both products of both warpgroups on the SM's tensor cores (WGMMA);
 *   E  the softmax of the whole tile: its exps on the special-function
 *      units, the rest on the FP32 pipe, one after the other in a warp;
 *   M  the copies of K_j, V_j (DRAM and L2, as the model shares them).
 * A warpgroup's share is G/2 and E/2, each of its two products G/4. The
 * step's time by switch:
 *   both on (FA3): ping-pong gives the tensor cores to one warpgroup at a
 *     time, its turn GEMM0 of block j and GEMM1 of block j-1 (the
 *     intra-warpgroup overlap), while the other runs its softmax; the
 *     producer's copies run ahead into the ring: max(G, E, M);
 *   --pipeline off: a turn holds one product, and a warpgroup's GEMM1 waits
 *     for its own softmax, which has only the other's GEMM0 (G/4) to hide
 *     under: max(G + max(0, E/2 - G/4), E, M);
 *   --warp-specialization off: no producer and no ping-pong: the consumers
 *     issue the copies of the next block and wait on them at its start, and
 *     run in step, each overlapping its softmax of block j with its GEMM1
 *     of block j-1: max(G/2 + max(E, G/2), M);
 *   both off: the products and the softmax in turn: max(G + E, M).
 * The ring's other stage lets a copy take one whole step; each block's
 * first copy waits the DRAM latency, as every kernel's (sim_gpu_model.h).
 */
#ifndef FASIM_SIM_GPU_FA3_H
#define FASIM_SIM_GPU_FA3_H

#include "sim_gpu_model.h"

/* The tracks of one thread block in a trace. With --warp-specialization
 * off there is no producer: SIM_FA3_PRODUCER then holds the copies the
 * consumers issue (and wait on). */
enum { SIM_FA3_PRODUCER, SIM_FA3_WG1, SIM_FA3_WG2, SIM_FA3_TRACKS };

/* What a slice does, for the pictures' legends (viz/viz_timeline.c). */
typedef enum {
    SIM_FA3_COPY,            /* the TMA's copies of K, V */
    SIM_FA3_GEMM0,           /* S = Q_i K_j^T */
    SIM_FA3_GEMM1,           /* O_i += P~ V_j */
    SIM_FA3_GEMM1_GEMM0,     /* GEMM0 of block j, then GEMM1 of block j-1: one turn */
    SIM_FA3_SOFTMAX,         /* the online softmax of one block */
    SIM_FA3_SOFTMAX_GEMM1,   /* the softmax of block j beside GEMM1 of block j-1 */
    SIM_FA3_KINDS
} sim_fa3_kind;

/* One slice of a step on a track: t0 and dur in seconds from its start. */
typedef struct sim_fa3_slice {
    int track;
    sim_fa3_kind kind;
    const char *name;        /* "TMA K_j, V_j", "GEMM0", "softmax", ... */
    double t0, dur;
} sim_fa3_slice;

#define SIM_FA3_MAX_SLICES 8

/* One step's time from G, E, M (seconds, as above) under the switches of o
 * (NULL: both on); first is 1 at a block's first computing step, which has
 * no block j-1 before it: its turns hold GEMM0 alone, and a warpgroup has
 * no softmax of block j-1 to run. Such a step is still charged in full: the
 * model gives every step the same G, E and M, and the block's last GEMM1,
 * which the kernel runs after its loop, is the time its first step's turns
 * leave idle; a block's total is unchanged. *bound gets what binds the
 * step, and, when sl is not NULL, the slices (at most SIM_FA3_MAX_SLICES)
 * and *freed the time from the step's start at which the stage of the
 * block before is freed (the end of its GEMM1, which the intra-warpgroup
 * overlap runs in this step's turns; 0 when this step has none: a block's
 * first step, or --pipeline off). Returns the step's time. */
double sim_fa3_step(const sim_gm_opts *o, int first, double G, double E, double M,
                    sim_gm_bound e_bound, sim_gm_bound m_bound, sim_gm_bound *bound,
                    sim_fa3_slice *sl, int *nsl, double *freed);

/* The ring's stages holding a block's K, V at time t from a step's start:
 * the block the consumers work on, and the block before until its GEMM1 has
 * read its V (the step's freed); 1 .. SIM_FA3_STAGES. The copies the model
 * charges beside a step (the producer issues them a step ahead) fill a
 * stage that is not counted full until they land. */
int sim_fa3_stages_full(double t, double freed);

/* The name of a track under the switches of o (NULL: both on): "producer
 * (TMA)", "consumer warpgroup 1", ...; with --warp-specialization off, the
 * copies' track is named as the consumers'. */
const char *sim_fa3_track_name(const sim_gm_opts *o, int track);

/* A GPU the pipeline runs on: 0, or -1 with the reason (not Hopper: no
 * WGMMA, no TMA). */
int sim_fa3_gpu_check(const sim_gpu *g, char *err, size_t errlen);

#endif /* FASIM_SIM_GPU_FA3_H */
