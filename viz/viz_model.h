/*
 * viz_model.h — the view model of one simulator run, independent of any
 * renderer (docs/ARCHITECTURE.md, Layers: viz/ draws a run; sim/ never includes curses
 * or SDL, and neither does this header).
 *
 * What it is. viz_model_build() runs the simulator once (sim_run) with an
 * observer that records a compact event log: every pseudocode line reached
 * (SIM_EV_LINE), every SRAM allocation and release, every tile loaded or
 * stored, and, in compute mode, copies of the statistics m_i, l_i and of one
 * row of O_i whenever they change. A STEP is one SIM_EV_LINE event: "the loop
 * order reached line L with block indices i, j". The state at any step is
 * rebuilt from the log on demand (viz_model_seek), from a checkpoint at most
 * VIZ_CHECKPOINT_STEPS steps back, so stepping forwards, backwards and jumping
 * all cost the same small amount of work at any N (N = 4096 included). A
 * count-only run records a window of VIZ_WINDOW_STEPS steps (compute mode the
 * whole run): a seek outside it runs the simulator again to record the
 * window around the new step, so the memory stays flat in N.
 *
 * What a renderer reads (all of it valid until the next seek or free):
 *   viz_model_info()   the run: shape, plan, mode, step total, the closed-form
 *                      final counts, and per tensor the shape of its tile grid;
 *   viz_model_state()  the current step: line, i, j, the transfers of this
 *                      step (what just moved), the running counters, the SRAM
 *                      buffers resident now, the statistics of the current
 *                      row block before and after this step;
 *   viz_tile_mark() / viz_tile_range_mark()
 *                      per tile of a tensor: read, written, being loaded or
 *                      stored now, in hand now (a range query for grids
 *                      where one screen cell stands for many tiles);
 *   viz_tile_range_counts()
 *                      how many times a tile was read and written so far
 *                      (FA2 reads each K_j, V_j once per i: T_r times);
 *   viz_block_range()  the T_r x T_c blocks (i, j): done, now, to come, or
 *                      skipped (fully masked), in the loop order's order;
 *   viz_tile_describe() a one-line description of one tile (mouse clicks);
 *   viz_pseudocode()   the loop order's pseudocode, with the paper's line
 *                      numbers, so that the state's `line` can be highlighted.
 *
 * Notation (the papers'): N rows, d head dimension, B_r x B_c block sizes,
 * T_r = ceil(N / B_r) query blocks Q_i, T_c = ceil(N / B_c) key/value blocks
 * K_j, V_j; m_i, l_i the running row maximum and row sum of block i. All
 * tensors are row-major. Steps and block indices i, j are 0-based here, as in
 * sim; renderers show step + 1, i + 1, j + 1 (the papers number blocks from
 * 1: i = 1 .. T_r).
 *
 * Tile grids. Each tensor in HBM is divided into the tiles its loop order
 * moves: Q, O and the vectors m, l, L into T_r row blocks of B_r rows; K and V
 * into T_c row blocks of B_c rows; S and P (naive) into T_r x T_c tiles of
 * B_r x B_c. The backward adds dO, dQ (as Q), dK, dV (as K), D (as L) and
 * naive's dP, dS (as S); split-KV's partials O~, m, l hold S blocks of rows. A transfer marks every tile it overlaps (the naive one-pass
 * softmax moves B_s whole rows of S at a time, which may cover parts of two
 * row blocks; both are marked).
 *
 * Ownership: the model owns everything it returns; the caller owns the model
 * and frees it with viz_model_free. Not thread-safe: seek and queries on one
 * model must not run concurrently.
 */
#ifndef FASIM_VIZ_MODEL_H
#define FASIM_VIZ_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"
#include "sim_loop.h"

/* ---- limits, each justified --------------------------------------------- */

/* Default bound on the memory the recorded run may hold (event log, steps,
 * checkpoints, statistics copies, tile marks). Measured: an FA2 run at
 * N = 4096, d = 64 with B_r = B_c = 16 (263,681 steps) holds 35 MiB
 * computed (17 MiB counted, before a count-only run kept a window of
 * VIZ_WINDOW_STEPS); FA1 with the same blocks 22 MiB. 256 MiB leaves room
 * for every run a class would step through while refusing runs that would
 * take seconds to record and gigabytes to keep. */
#define VIZ_DEFAULT_MAX_LOG   (UINT64_C(256) << 20)

/* Statistics are recorded for at most this many rows of each row block (the
 * first ones). A terminal shows a handful; a large window a few dozen. It
 * bounds the copies at 2 * 64 floats per change of m_i, l_i. */
#define VIZ_STATS_MAX_ROWS    64

/* Columns of the chosen output row recorded (the first ones of O_i's row). */
#define VIZ_OUT_MAX_COLS      16

/* A checkpoint (counters and resident buffers) every this many steps: a seek
 * replays at most this many steps' events, a few thousand at most, which
 * takes microseconds. */
#define VIZ_CHECKPOINT_STEPS  1024

/* A count-only run records at most this many steps at a time, its window
 * (viz_model.c): about 3 MiB of steps and events, so that the view's memory
 * stays flat in N. A seek outside the window runs the simulator again,
 * count-only, and records the window around the new step, half of it
 * before: stepping back re-runs once per 32,768 steps. */
#define VIZ_WINDOW_STEPS      (UINT64_C(1) << 16)

/* The most steps a view steps through: a run of up to 5 lines per tile step
 * (the bound check_log_size takes). Each seek outside the window runs them
 * all again, count-only, at about 50 ns each with the recorder watching:
 * 2^27 steps is about 6 s; FA2 at N = 131072, d = 32, M = 20K (16.8 million
 * tile steps) is under it. */
#define VIZ_MAX_STEPS         (UINT64_C(1) << 27)

/* Compute mode is chosen automatically when N^2 d is at most this: the
 * recording then takes under half a second (measured: FA2 at N^2 d = 2^30,
 * N = 4096, d = 64, B_r = B_c = 16, takes 1.6 s). Beyond it the view counts
 * only and says that the statistics are unavailable. VIZ_MODE_COMPUTE
 * (--compute) forces it, up to VIZ_MAX_COMPUTE_N2D (about 25 s). */
#define VIZ_AUTO_COMPUTE_N2D  (UINT64_C(1) << 28)
#define VIZ_MAX_COMPUTE_N2D   (UINT64_C(1) << 34)

/* Status codes of viz_model_build; the first three are the CLI's exit codes. */
enum {
    VIZ_OK = 0,
    VIZ_EFAIL = 1,      /* out of memory, simulator failure */
    VIZ_EUSAGE = 2,     /* bad configuration, run too large to record */
    VIZ_EREFUSED = 3    /* the plan does not fit in M: a drawable model with no
                           steps is returned (see viz_info.refused) */
};

/* ---- configuration ------------------------------------------------------- */

typedef enum { VIZ_MODE_AUTO, VIZ_MODE_COMPUTE, VIZ_MODE_COUNT } viz_mode;

typedef struct {
    sim_algo algo;
    sim_shape sh;              /* N, d, M (bytes), dtype, causal; N_k (Nk);
                                  one head */
    sim_run_opts run;          /* the pass and split-KV's splits */
    sim_plan_kind plan_kind;   /* SAME (the report's square tiles, the
                                  default), AUTO (best), PAPER, or USER when
                                  Br/Bc set */
    int64_t Br, Bc;            /* 0: chosen by the plan (AUTO/USER with one pinned) */
    uint64_t seed;             /* seeded inputs when Q, K, V are NULL */
    const float *Q, *K, *V;    /* Q (N, d), K and V (N_k, d) inputs, or all NULL;
                                  read during viz_model_build only, not kept.
                                  A backward run's dO is seeded */
    viz_mode mode;
    int64_t out_row;           /* row within the Q block whose partial output
                                  is recorded (0-based; clamped to the block) */
    uint64_t max_log_bytes;    /* 0: VIZ_DEFAULT_MAX_LOG */
    uint64_t window_steps;     /* count-only: steps recorded at a time (0:
                                  VIZ_WINDOW_STEPS); compute mode records all */
} viz_config;

/* The view's default problem: N several times d, so that S and P (N x N)
 * look larger than Q (N x d), and an M whose same tiles (the report's
 * B_r = B_c = 32, which every loop order fits) give a T_r x T_c = 8 x 8
 * block grid and FA2 a run of 281 steps. */
#define VIZ_DEFAULT_N 256
#define VIZ_DEFAULT_D 32
#define VIZ_DEFAULT_M (20 * 1024)

/* Defaults: FA2, VIZ_DEFAULT_N, _D, _M, fp16, not causal, the report's same
 * tiles (SIM_PLAN_SAME), seed 1, auto mode, out_row 0. */
void viz_config_default(viz_config *cfg);

/* ---- the run -------------------------------------------------------------- */

/* One tensor in HBM and its tile grid. */
typedef struct {
    int present;               /* the loop order moves this tensor */
    const char *name;          /* "Q", ..., "m", "l", "L" */
    int64_t rows, cols;        /* elements: (N, d), (N, N) or (N, 1) */
    int64_t tile_rows, tile_cols;   /* elements per tile (last ones partial) */
    int64_t grid_rows, grid_cols;   /* tiles: e.g. T_r x 1, T_c x 1, T_r x T_c */
    int elem_bytes;            /* bytes of one element in HBM */
    uint32_t max_reads;        /* the most times any one tile is read in the
                                  whole run, and written: a renderer sizes
                                  its cells on them, so they stay put */
    uint32_t max_writes;
} viz_tensor_info;

typedef struct {
    sim_algo algo;
    sim_shape sh;
    sim_run_opts run;          /* the configuration's (and the plan's, plan.run) */
    sim_plan plan;             /* block sizes and the SRAM buffers */
    int64_t same_tiles;        /* SIM_PLAN_SAME asked: the report's B_r = B_c
                                  (sim_report_same_tiles over every loop
                                  order), or -1 when none fits them all (the
                                  plan is then this loop order's best); 0:
                                  another plan was asked */
    int refused;               /* 1: the plan does not fit M; nsteps == 0 and
                                  the state shows the buffers with the one
                                  that does not fit flagged VIZ_BUF_REFUSED */
    char refusal[1024];        /* refused: the plan message (sim_plan's) */
    int computed;              /* 1: compute mode (statistics available) */
    char mode_note[160];       /* count-only: why, in one line (the
                                  statistics are then unavailable); else "" */
    uint64_t nsteps;           /* steps (LINE events) of the run */
    uint64_t window_steps;     /* steps recorded at a time: nsteps, or
                                  VIZ_WINDOW_STEPS for a longer count-only run */
    uint64_t tile_steps;       /* the simulator's tile steps (sim_result.steps) */
    sim_counts final_counts;   /* closed form (sim_theory_counts) */
    sim_counts measured;       /* measured at the end of the run */
    int theory_matches;        /* measured == closed form */
    uint64_t sram_peak;        /* measured peak, bytes */
    uint64_t log_bytes;        /* memory held by the recording */
    int64_t out_row;           /* the recorded output row within a block */
    int blocks;                /* 1: the run has a T_r x T_c block grid
                                  (viz_block_range): FA1, FA2, not split */
    viz_tensor_info tensor[SIM_TENSOR_COUNT];
} viz_info;

/* ---- one step ------------------------------------------------------------- */

/* A tile moved during the current step (what just moved). */
typedef struct {
    sim_event_kind kind;       /* SIM_EV_LOAD (HBM -> SRAM) or SIM_EV_STORE */
    sim_tensor tensor;
    int64_t r0, c0, rows, cols;     /* the tile in HBM, elements */
    int64_t tr0, tr1, tc0, tc1;     /* the grid tiles it overlaps, half-open */
    const char *buf;           /* the SRAM buffer ("K_j") */
    uint64_t bytes;            /* bytes moved */
} viz_transfer;

/* Flags of an SRAM buffer in the state. */
enum {
    VIZ_BUF_LOADED = 1,        /* a tile was loaded into it during this step */
    VIZ_BUF_STORED = 2,        /* a tile was stored from it during this step */
    VIZ_BUF_OVER = 4,          /* it ends past M (a paper plan run over M) */
    VIZ_BUF_REFUSED = 8,       /* refused plan: the buffer that does not fit */
    VIZ_BUF_PENDING = 16       /* refused plan: never reached (after the refused) */
};

typedef struct {
    char name[16];             /* "Q_i", "S_ij", "m~_ij", ... */
    int64_t rows, cols;
    int elem_bytes;            /* 4 for fp32 accumulators and statistics */
    uint64_t bytes;
    uint64_t offset;           /* bytes allocated before it (its start in SRAM) */
    unsigned flags;            /* VIZ_BUF_* */
} viz_sram_entry;

/* The statistics of the current row block, before and after this step.
 * "Before" is the content of m_i, l_i (and O_i's chosen row) when the line is
 * reached; "after" is the content when the next line is reached (or, if the
 * next line belongs to another block, after this step's last transfer). */
typedef struct {
    int available;             /* 0: count-only run (viz_info.mode_note) */
    int shown;                 /* 1: this step works on a row block's
                                  statistics (FA2 lines 4-15, FA1 lines 8-13,
                                  naive line 2); 0: nothing to show here */
    int64_t row0;              /* first global row of the block */
    int64_t block_rows;        /* rows in the block (the last may be partial) */
    int nrows;                 /* rows recorded: min(block_rows, VIZ_STATS_MAX_ROWS) */
    int before_valid;          /* 0: the buffers hold another block's values
                                  (e.g. FA2 line 5 before the initialisation) */
    int after_valid;
    int m_is_L_before;         /* FA2 after line 13: m_i holds L_i = m_i + log l_i */
    int m_is_L_after;
    float m_old[VIZ_STATS_MAX_ROWS], m_new[VIZ_STATS_MAX_ROWS];
    float l_old[VIZ_STATS_MAX_ROWS], l_new[VIZ_STATS_MAX_ROWS];
    int alpha_shown;           /* 1: alpha is meaningful here (FA1, FA2 while
                                  m is the running maximum on both sides) */
    float alpha[VIZ_STATS_MAX_ROWS];   /* exp(m_old - m_new), computed as
                                  ref_online_step does (bit-equal to FA2's) */
    unsigned char changed[VIZ_STATS_MAX_ROWS];  /* m_new != m_old */
    int nchanged;
    /* The chosen row (viz_info.out_row) of the output block O_i. */
    int out_shown;             /* 1: this step holds an O_i (all three orders) */
    int64_t out_row;           /* local row within the block */
    int out_cols;              /* min(d, VIZ_OUT_MAX_COLS) */
    int out_normalised_before; /* the same for the "before" row: FA2's line 12
                                  and split-KV's line 5 divide during the step */
    int out_normalised;        /* 1: already divided by l_i (FA1 keeps O
                                  normalised; FA2 after line 12; naive) */
    float out_old[VIZ_OUT_MAX_COLS], out_new[VIZ_OUT_MAX_COLS];
} viz_stats;

typedef struct {
    uint64_t step;             /* 0-based, < viz_info.nsteps */
    int line;                  /* the paper's pseudocode line */
    int64_t i, j;              /* block indices, -1 outside that loop */
    int64_t split;             /* split-KV: the split s in hand (0-based), else -1 */
    int pass;                  /* naive softmax over tiles: 1 .. its passes; else 0 */
    int nxfer;                 /* transfers during this step */
    const viz_transfer *xfer;  /* (owned by the model) */
    sim_counts counts;         /* running totals after this step */
    int nbuf;                  /* SRAM buffers resident during this step, in
                                  allocation order: a phase's buffers appear
                                  at its first line and stay through its
                                  last (naive's three phases; FA2's line 17
                                  shows them released) */
    viz_sram_entry buf[SIM_MAX_BUFFERS];
    uint64_t sram_used;        /* bytes */
    viz_stats stats;
} viz_state;

/* ---- building and stepping ----------------------------------------------- */

typedef struct viz_model viz_model;

/* Plan, record and index one run (see the file comment). Returns VIZ_OK with
 * *out set and seeked to step 0; VIZ_EREFUSED with *out set to a model of the
 * refused plan (no steps; err holds the plan message); VIZ_EUSAGE or
 * VIZ_EFAIL with *out = NULL and a one- or multi-line message in err (no
 * trailing newline). Runs whose recording would exceed cfg->max_log_bytes are
 * refused with VIZ_EUSAGE and a hint (smaller N, larger blocks). */
int viz_model_build(const viz_config *cfg, viz_model **out, char *err, size_t errlen);

void viz_model_free(viz_model *m);

const viz_info *viz_model_info(const viz_model *m);
const viz_state *viz_model_state(const viz_model *m);
/* The configuration the model was built from (inputs pointers cleared). */
const viz_config *viz_model_config(const viz_model *m);

/* Make `step` the current step. Returns 0, or -1 (state unchanged) when
 * step >= nsteps. Costs at most VIZ_CHECKPOINT_STEPS steps of replay, and a
 * count-only run of the simulator when the step is outside the window
 * (viz_info.window_steps); -1 also when that run fails (out of memory). */
int viz_model_seek(viz_model *m, uint64_t step);

/* Where step k is, without seeking. Returns 0, or -1 when out of range or
 * outside the window recorded (the steps around the current one). */
int viz_model_step_where(const viz_model *m, uint64_t step, int *line, int64_t *i,
                         int64_t *j);

/* The first step >= from at pseudocode line `line` with block indices i, j
 * (-1 matches only -1; VIZ_ANY matches any). Returns 0 with *step set, or -1.
 * Steps outside the window are searched by a count-only run of the
 * simulator. */
#define VIZ_ANY INT64_MIN
int viz_model_find_step(const viz_model *m, uint64_t from, int line, int64_t i,
                        int64_t j, uint64_t *step);

/* ---- tile marks at the current step --------------------------------------- */

enum {
    VIZ_TILE_READ = 1,         /* loaded at least once up to this step */
    VIZ_TILE_WRITTEN = 2,      /* stored at least once up to this step */
    VIZ_TILE_LOADING = 4,      /* being loaded during this step */
    VIZ_TILE_STORING = 8,      /* being stored during this step */
    VIZ_TILE_CURRENT = 16      /* in hand at this step, moving or not: tile i
                                  of Q, O, m, l, L (and dO, dQ, D), tile j of
                                  K, V (dK, dV), tile (i, j) of S, P (dP, dS);
                                  none outside the loops, in naive's row-wise
                                  softmax and for split-KV's partials */
};

/* The VIZ_TILE_* bits of tile (tr, tc) of tensor t; 0 when untouched, when t
 * is not present, or out of range. */
unsigned viz_tile_mark(const viz_model *m, sim_tensor t, int64_t tr, int64_t tc);

/* The OR of the marks of tiles [tr0, tr1) x [tc0, tc1), clamped to the grid:
 * for a screen cell standing for several tiles. Cost: the number of tiles. */
unsigned viz_tile_range_mark(const viz_model *m, sim_tensor t, int64_t tr0, int64_t tr1,
                             int64_t tc0, int64_t tc1);

/* The tile of t in hand at this step (the one VIZ_TILE_CURRENT marks): row
 * tile i of the query-side tensors, j of the key-side ones, (i, j) of the
 * N x N_k ones. Returns 1 with *tr, *tc set, or 0 when t has none here:
 * outside the loops, in naive's row-wise softmax (its i counts B_s rows), in
 * a naive phase whose line does not move t, for split-KV's partials. */
int viz_tile_current(const viz_model *m, sim_tensor t, int64_t *tr, int64_t *tc);

/* How many times tiles [tr0, tr1) x [tc0, tc1) were read and written up to
 * and including this step (its transfers counted): the largest count among
 * them, so that a cell standing for several tiles shows the busiest. Both 0
 * out of range or when t is not present. Cost: the number of tiles. */
void viz_tile_range_counts(const viz_model *m, sim_tensor t, int64_t tr0, int64_t tr1,
                           int64_t tc0, int64_t tc1, uint32_t *reads, uint32_t *writes);

/* ---- the block grid: T_r x T_c blocks (i, j) ------------------------------- */

enum {
    VIZ_BLOCK_DONE = 1,        /* reached at an earlier step */
    VIZ_BLOCK_NOW = 2,         /* the block (i, j) of this step */
    VIZ_BLOCK_TODO = 4,        /* reached at a later step */
    VIZ_BLOCK_SKIPPED = 8      /* never reached: fully masked (causal, window) */
};

/* The OR of the VIZ_BLOCK_* states of blocks [i0, i1) x [j0, j1), clamped to
 * T_r x T_c; 0 when the run has no block grid (viz_info.blocks). The order
 * in which the blocks turn DONE is the loop order's: row by row for FA2's
 * forward (i outer), column by column for FA1 and the backward (j outer).
 * Cost: the number of blocks. */
unsigned viz_block_range(const viz_model *m, int64_t i0, int64_t i1, int64_t j0, int64_t j1);

/* One line about tile (tr, tc) of t up to the current step: its element
 * range, how often it was read and written so far and when first and last.
 * Written for people: tiles and steps numbered from 1, as shown on screen
 * ("K tile 3 of 4, rows [32:48); read 1x (steps 7..7), never written").
 * Returns 0, or -1 (with a message) out of range.
 * Cost: a scan of the window up to the current step (milliseconds at most). */
int viz_tile_describe(const viz_model *m, sim_tensor t, int64_t tr, int64_t tc,
                      char *buf, size_t len);

/* ---- pseudocode ----------------------------------------------------------- */

/* A line of pseudocode: the loop order's own (sim_loop.h), with the line
 * number, the indent, the text and what the line means to a view. */
typedef sim_code_line viz_code_line;

/* The pseudocode of the run's loop order, condensed to ASCII: the forward
 * passes (naive: FlashAttention's Algorithm 0; fa1: its Algorithm 1; fa2:
 * FlashAttention-2's Algorithm 1), the backward passes (FlashAttention's
 * Algorithms 3 and 4, FlashAttention-2's Algorithm 2) and FA2's split-KV
 * (fasim's own numbering). Returns the lines (static storage), sets *n. */
const viz_code_line *viz_pseudocode(const viz_info *in, int *n);

/* The title of the pseudocode ("FlashAttention-2, Algorithm 1"). */
const char *viz_pseudocode_title(const viz_info *in);

/* The run's loop order (its descriptor: flags, what its lines mean). */
const sim_loop *viz_loop(const viz_info *in);

/* The PIPELINE panel of a warp-specialised loop order (FA3) at the current
 * step: what its producer and consumer warpgroups do and what its ring of
 * shared-memory stages holds (sim_loop.pipeline), at most SIM_PIPE_ROWS
 * rows. Returns how many; 0 for the other loop orders and a refused plan. */
int viz_model_pipeline(const viz_model *m, sim_pipe_row rows[SIM_PIPE_ROWS]);

/* The numbered line `line` of the run's pseudocode, or NULL when unlisted. */
const viz_code_line *viz_pseudocode_line(const viz_info *in, int line);

/* ---- helpers for renderers ------------------------------------------------ */

/* Bytes read and written so far / in all (closed form) of tensor t. */
uint64_t viz_bytes_read(const viz_model *m, sim_tensor t);
uint64_t viz_bytes_written(const viz_model *m, sim_tensor t);
uint64_t viz_final_bytes_read(const viz_model *m, sim_tensor t);
uint64_t viz_final_bytes_written(const viz_model *m, sim_tensor t);

/* Map a screen axis of `cells` cells onto `n` elements of a tensor axis that
 * is cut in tiles of `tile` elements: the tiles [*t0, *t1) shown by cell c.
 * Every tile is shown by at least one cell when cells >= ceil(n / tile); when
 * there are fewer cells, a cell shows several tiles (the caller says how many,
 * e.g. "1 cell = 4 tiles"). */
void viz_axis_cell(int64_t n, int64_t tile, int64_t cells, int64_t c, int64_t *t0,
                   int64_t *t1);

#endif /* FASIM_VIZ_MODEL_H */
