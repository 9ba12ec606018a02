/*
 * sim_limits.h — the largest problem fasim accepts, in one place.
 *
 * Every layer that takes a problem from outside (the command line, claims
 * files, the explorer, the lessons, .npy inputs) bounds it by these, so that
 * the same N, d or M is accepted or refused everywhere with the same reason.
 * A layer that deliberately takes less defines its bound from these and says
 * why beside it (viz/viz_explore.h, the lessons' small examples).
 *
 * Header only: the core is the one layer every other layer includes
 * (docs/ARCHITECTURE.md, Layers). Each limit states why it is what it is.
 */
#ifndef FASIM_SIM_LIMITS_H
#define FASIM_SIM_LIMITS_H

#include <stdint.h>

/* N, N_q, N_k, the window, block sizes and page sizes: 2^40 rows. The counts
 * of naive grow as N^2 (times d for the flops); at 2^40 those terms still fit
 * in 64 bits for small d, and sim_shape_check refuses the shapes whose counts
 * would not. No real sequence comes near (a million tokens is 2^20). */
#define SIM_MAX_N     (INT64_C(1) << 40)

/* d: 65536, far above any real head dimension (64 .. 256), low enough that
 * an SRAM plan's d-wide rows stay far inside 64 bits. */
#define SIM_MAX_D     INT64_C(65536)

/* M: 1 GiB of SRAM per thread block, well past any on-chip memory (KiB to
 * a few MiB); the plan search grows with M, so a larger M only costs time. */
#define SIM_MAX_M     (UINT64_C(1) << 30)

/* Batch B, query heads H, key/value heads G, and split-KV's splits: 65536.
 * Models use up to 128 heads and batches of thousands; B H N^2 must still
 * fit in 64 bits at moderate N. */
#define SIM_MAX_HEADS INT64_C(65536)

#endif /* FASIM_SIM_LIMITS_H */
