/*
 * viz_sdl_heat.h — the score tile S_ij or P~_ij of the current step,
 * recomputed for the heat map.
 *
 * The view model keeps no tile contents (it stays small at any N); the SDL
 * view recomputes the one tile it shows from the run's inputs with the same
 * primitives in the same order as the loop order did (ref_tile_scores,
 * ref_tile_mask_causal, ref_row_max, ref_exp), so the values are the bits the
 * run held in SRAM. Which tile, and which values, per loop order and line
 * (the state's line and block indices i, j):
 *
 *   fa2  line 8         S_ij = Q_i K_j^T / sqrt(d), masked (fp32 on chip)
 *        lines 9, 10    P~_ij = exp(S_ij - m_i), m_i the running row maximum
 *                       after this block: max over K blocks 1..j (line 9)
 *   fa1  line 9         S_ij
 *        lines 10-13    P~_ij = exp(S_ij - m~_ij), m~_ij = rowmax(S_ij) of
 *                       this block alone (Algorithm 1, line 10)
 *   naive line 1 (i,j)  S_ij, fp32 before it is written to HBM
 *        line 2, 1 pass P = softmax(S) of B_s whole rows (S read back from
 *                       HBM in the run's dtype; P before its store)
 *        line 2, 3 pass passes 1, 2: S_ij as read (dtype); pass 3: P_ij
 *        line 3 (i,j)   P_ij as read back from HBM (dtype)
 *   any other line: nothing (the note says what the line does instead).
 *
 * Inputs: seeded runs regenerate Q and K with sim_random_inputs(seed, ...);
 * runs from the caller's (.npy) inputs need them passed in (viz_sdl_opts).
 * Where the model recorded statistics, the row maxima recomputed here are
 * compared bit for bit with the run's m_i; a mismatch (inputs not the run's)
 * turns the heat map off with a note instead of showing wrong numbers.
 * viz_sdl_heat_probe makes that comparison up front, so that not even the
 * S_ij tiles before the first comparable step are shown from wrong inputs.
 */
#ifndef FASIM_VIZ_SDL_HEAT_H
#define FASIM_VIZ_SDL_HEAT_H

#include <stdint.h>

#include "viz_model.h"

/* Inputs are regenerated only up to this many elements per tensor (N d):
 * 2 x 4 B x 2^25 = 256 MiB for Q and K. Any run the view can record (at most
 * VIZ_DEFAULT_MAX_LOG of log) is far below. */
#define VIZ_SDL_HEAT_MAX_ND   (INT64_C(1) << 25)
/* Multiply-adds allowed for one heat map (the naive rows need B_r x N x d,
 * fa2's running maximum up to B_r x N x d at a jump): 2^28 is about a
 * quarter of a second; beyond, the map says why it is not drawn. */
#define VIZ_SDL_HEAT_MAX_WORK (INT64_C(1) << 28)

typedef enum { VIZ_SDL_HEAT_NONE, VIZ_SDL_HEAT_S, VIZ_SDL_HEAT_P } viz_sdl_heat_kind;

typedef struct {
    viz_sdl_heat_kind kind;
    char title[128];       /* "S_ij = Q_i K_j^T / sqrt(d)", or "" */
    char note[256];        /* NONE: why nothing is shown; else what the values
                              are ("fp32, as computed on chip") */
    int64_t row0, col0;    /* global row and column of element (0, 0) */
    int rows, cols;
    const float *v;        /* rows x cols, row-major; masked scores -inf */
    float lo, hi;          /* smallest and largest finite value over the
                              entries not masked (0, 0: none) */
    int causal;            /* 1: entries with column > row are masked: -inf in
                              S, exactly 0 in P */
    int64_t nmasked;       /* entries masked */
    int checked;           /* 1: row maxima compared equal to the run's m_i */
} viz_sdl_heat_view;

typedef struct viz_sdl_heat viz_sdl_heat;

/* A heat-map cache. Q, K: the caller's (N, d) inputs when the run used them
 * (they must outlive the cache), or NULL for seeded runs. NULL when out of
 * memory. */
viz_sdl_heat *viz_sdl_heat_new(const float *Q, const float *K);
void viz_sdl_heat_free(viz_sdl_heat *h);

/* The tile of m's current step. Never NULL; valid until the next call or
 * free. Recomputes only when the step's tile changed (and, for fa2 moving
 * forward in j, only the new block's row maxima). */
const viz_sdl_heat_view *viz_sdl_heat_get(viz_sdl_heat *h, const viz_model *m);

/* Check the inputs against the run at the first step where the run recorded
 * the row maxima (fa2 line 9, fa1 line 10, naive line 2 at its normalising
 * pass), seeking m there and back: m is left at the step it was at. A
 * mismatch turns the heat map off for every step of runs on these inputs.
 * Does nothing for count-only runs (no statistics) and refused plans. */
void viz_sdl_heat_probe(viz_sdl_heat *h, viz_model *m);

#endif /* FASIM_VIZ_SDL_HEAT_H */
