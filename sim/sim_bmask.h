/*
 * sim_bmask.h — block-sparse masks (sim.h, sim_block_mask): the patterns,
 * a grid's block sizes from N_q x N_k, the checks a run needs, and a plan's
 * visited tiles as a map the loop orders read (sim_hier.h).
 */
#ifndef FASIM_SIM_BMASK_H
#define FASIM_SIM_BMASK_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"

/* Build pattern spec on an R x C grid of br x bc blocks (the run's common
 * plan tile): "local:K" (K >= 0) the band |i - j| <= K; "strided:K" (K >= 1)
 * the blocks with |i - j| a multiple of K; "global:G,K" (G, K >= 0) the
 * first G block rows and columns and the band of K; "random:P" (0 < P <= 1)
 * each block with probability P, drawn from seed, and the diagonal, so that
 * every block row has one. *bits gets the R x C bits, which the caller
 * frees (out points at them). Returns 0, or -1 with a one-line message: bad
 * syntax, or more than SIM_MAX_BMASK_BLOCKS blocks. */
int sim_bmask_pattern(const char *spec, int64_t R, int64_t C, int64_t br, int64_t bc,
                      uint64_t seed, sim_block_mask *out, unsigned char **bits, char *err,
                      size_t errlen);

/* A grid of R x C blocks over N_q x N_k scores (a file's): b_r =
 * ceil(N_q / R), b_c = ceil(N_k / C) into b, with b->R and b->m.cols.
 * Requires 1 <= R <= N_q, 1 <= C <= N_k and every block at least one row
 * and key: (R - 1) b_r < N_q, (C - 1) b_c < N_k. Returns 0, or -1 with a
 * message. */
int sim_bmask_grid(sim_block_mask *b, int64_t R, int64_t C, int64_t Nq, int64_t Nk,
                   char *err, size_t errlen);

/* The mask of sh against its problem: blocks covering the scores, and every
 * query row left a visible key (the message names the first block row that
 * leaves one none). 0 with no mask. sim_shape_check calls it. */
int sim_bmask_check(const sim_shape *sh, char *err, size_t errlen);

/* A plan's visited tiles under sh's block mask: bits (T_r x T_c, 1 where
 * sim_tile_visible), and for each query block the first and last key
 * blocks it visits (js), for each key block the first and last query
 * blocks (is); empty ranges where none. All NULL without a mask. */
typedef struct {
    unsigned char *bits;
    sim_range *js, *is;
    int64_t Tc;
} sim_visits;

/* A plan of tiles Br x Bc under sh's block mask: 0, or -1 with a message
 * when its T_r T_c tiles are more than SIM_MAX_BMASK_TILES (nothing maps
 * or sums them). 0 without a mask. */
int sim_bmask_plan_check(const sim_shape *sh, int64_t Br, int64_t Bc, char *err,
                         size_t errlen);

/* Make v for tiles Br x Bc; returns 0, or -1 with a message (a grid of more
 * than SIM_MAX_BMASK_TILES tiles, or no memory). */
int sim_bmask_visits_make(const sim_shape *sh, int64_t Br, int64_t Bc, sim_visits *v,
                          char *err, size_t errlen);
void sim_bmask_visits_free(sim_visits *v);

#endif /* FASIM_SIM_BMASK_H */
