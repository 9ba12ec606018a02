/*
 * viz_explore.h — `fasim explore`: one configuration that keys change, and
 * everything derived from it, recomputed at once after every key.
 *
 * What it is. A viz_explore holds a configuration (N, d, M, dtype, causal,
 * pinned block sizes, a GPU preset, the loop order `v` opens) and, derived
 * from it by viz_explore_update():
 *   - per loop order (naive, fa1, fa2) the plan the simulator would use —
 *     sim_plan_choose() with the same arguments as the report (`fasim --N ..
 *     --Br ..`) — and that plan's exact closed-form counts (sim_theory_counts:
 *     equal to the simulator's measured counts, which the tests prove), its
 *     HBM bytes read, written and in all, the ratio to naive's total, and its
 *     SRAM peak against M; or, for a plan that is refused, one line saying why;
 *   - the bounds of the papers (Theorem 2, Proposition 3, the regime);
 *   - a chart: the same closed-form totals at VIZ_EX_CHART_POINTS values of N
 *     from N/8 to 8N in half octaves (N * 2^(k/2), rounded), so that a small
 *     log-log chart can show how each loop order grows beside slope 2.
 * Nothing here runs the simulator or touches a terminal: every number is a
 * closed form, so a key costs a few plan searches (well under a millisecond
 * at the defaults; tens of milliseconds at the largest M, 1 MiB, with small d
 * and causal masking — the bound on M below exists for that reason).
 *
 * Drawing. viz_explore_draw() lays the screen out on a viz_canvas, as
 * viz_layout.c does for the view, so that the curses renderer and the text
 * frames (`fasim explore --keys ... | cat`) show the same characters. 80 x 24
 * is the designed minimum (80 x 23 without the status line); larger canvases
 * get a larger chart.
 *
 * Notation: N rows, d head dimension, B_r x B_c block sizes (0 = chosen per
 * loop order, the best plan), M SRAM in bytes; the papers' M counts elements
 * (M / dtype bytes), and the bounds say so.
 */
#ifndef FASIM_VIZ_EXPLORE_H
#define FASIM_VIZ_EXPLORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"
#include "sim_limits.h"
#include "viz_canvas.h"
#include "viz_model.h"

/* ---- limits, each justified ------------------------------------------------ */

/* The explorer takes less than the command line (sim_limits.h) where it
 * must: it plans every loop order again at every key and charts N/8 .. 8N.
 * N up to 2^30: beyond it even FA2's counts at the chart's 8N leave 64 bits,
 * and naive's N^2 terms do already at about 2^29.5 (their rows then say so). */
#define VIZ_EX_MAX_N      (INT64_C(1) << 30)
/* d as on the command line. */
#define VIZ_EX_MAX_D      SIM_MAX_D
/* M from 256 B (below every useful plan at d = 64: a teacher can show a
 * refusal) to 1 MiB (past every GPU preset's 227 KiB; measured: the causal
 * plan search at 1 MiB, d = 1, N = 8M takes 13 ms for the three loop orders,
 * and grows in proportion to M, so that 16 MiB would take 0.1 s per N and 2 s
 * per key with the chart). */
#define VIZ_EX_MIN_M      UINT64_C(256)
#define VIZ_EX_MAX_M      (UINT64_C(1) << 20)
_Static_assert(VIZ_EX_MAX_N <= SIM_MAX_N && VIZ_EX_MAX_M <= SIM_MAX_M,
               "the explorer takes no more than the command line");
/* R/r and C/c move a pinned block size by the granularity of the best plan's
 * candidates (sim_plan.c: multiples of 16, the tensor-core tile). */
#define VIZ_EX_BLOCK_STEP 16
/* Chart: N/8 .. 8N in half octaves, 13 values; the middle one is N. */
#define VIZ_EX_CHART_POINTS 13
#define VIZ_EX_CHART_MID    6

/* ---- configuration --------------------------------------------------------- */

typedef struct {
    sim_shape sh;              /* N, d, M (bytes), dtype, causal; always run as
                                  the plain forward pass (no sim_run_opts) */
    int64_t Br, Bc;            /* 0: chosen per loop order (the best plan); one
                                  alone pins it and the other is chosen */
    int gpu;                   /* -1: none; else an index into sim_gpu_presets():
                                  M is then the preset's shared memory per block */
    sim_algo view_algo;        /* the loop order `v` opens (default FA2) */
} viz_explore_config;

/* The report's defaults: N = 1024, d = 64, M = 96K, fp16, not causal, best
 * plans, no preset; `v` opens FA2. */
void viz_explore_config_default(viz_explore_config *c);

/* ---- the derived state -------------------------------------------------------- */

typedef enum {
    VIZ_EX_OK,                 /* a plan that fits, with its counts */
    VIZ_EX_REFUSED,            /* no plan fits M (with the pinned sizes) */
    VIZ_EX_OVERFLOW            /* a plan fits but its counts pass 64 bits */
} viz_explore_status;

/* One loop order's row of the table. */
typedef struct {
    viz_explore_status status;
    sim_plan plan;             /* OK/OVERFLOW: the plan the simulator would use;
                                  REFUSED: the pinned (or smallest) plan tried */
    sim_counts counts;         /* OK: the exact closed form */
    uint64_t read_bytes, write_bytes, total_bytes;
    uint64_t elems;            /* read + written elements */
    double ratio;              /* total_bytes / naive's; 0 when naive has none */
    double per_theta;          /* elements / the Theta expression of Theorem 2 */
    char why[160];             /* not OK: one line, e.g. "256x256 needs ..." */
} viz_explore_row;

typedef struct {
    int n;                                      /* points (fewer for tiny N) */
    int mid;                                    /* index of the point at N */
    int64_t N[VIZ_EX_CHART_POINTS];             /* ascending, distinct, >= 1 */
    double lx[VIZ_EX_CHART_POINTS];             /* log2 of N[k] */
    int ok[SIM_ALGO_MAX][VIZ_EX_CHART_POINTS];          /* a plan fits, counts fit */
    uint64_t bytes[SIM_ALGO_MAX][VIZ_EX_CHART_POINTS];  /* closed-form totals */
    double lx_lo, lx_hi;                        /* log2(N/8), log2(8N): the axis */
} viz_explore_chart;

typedef struct viz_explore {
    viz_explore_config cfg;    /* current; change it with keys */
    viz_explore_config start;  /* as given: 'z' returns to it */
    uint64_t M_own;            /* the M that 'g' returns to after the presets */
    uint64_t start_M_own;      /* M_own as given */
    int help;                  /* the help box is shown; the next key closes it */
    char msg[200];             /* what the last key did, one line */
    /* derived by viz_explore_update: */
    viz_explore_row row[SIM_ALGO_MAX];
    sim_bounds bounds;
    viz_explore_chart chart;
} viz_explore;

/* Check the configuration and derive everything from it. Returns 0, or -1
 * with a one-line message in err (a value out of the limits above). */
int viz_explore_init(viz_explore *e, const viz_explore_config *cfg, char *err,
                     size_t errlen);

/* Recompute the table, the bounds and the chart from e->cfg. */
void viz_explore_update(viz_explore *e);

/* ---- keys ---------------------------------------------------------------------- */

typedef enum {
    VIZ_EX_KEY_DONE,           /* applied (or at a limit: msg says so) */
    VIZ_EX_KEY_QUIT,           /* q */
    VIZ_EX_KEY_VIEW,           /* v: the caller opens the view of
                                  viz_explore_view_config() */
    VIZ_EX_KEY_UNKNOWN         /* not a key of explore (msg says so) */
} viz_explore_action;

/* Every key explore knows, for validating --keys. */
extern const char VIZ_EXPLORE_KEYS[];
/* The status line of the interactive screen (80 columns). */
extern const char VIZ_EXPLORE_STATUS[];

/* Apply one key (an ASCII character; see VIZ_EXPLORE_KEYS and the help
 * box). While the help box is shown, any key only closes it. Updates the
 * derived state and e->msg. */
viz_explore_action viz_explore_key(viz_explore *e, int key);

/* The view's configuration for the current state: the loop order
 * cfg.view_algo, the same shape, pinned sizes and plan kind, seed 1. */
void viz_explore_view_config(const viz_explore *e, viz_config *out);

/* The command line that gives the same numbers: the report ("fasim --N 1K
 * --d 64 --M 96K") or, with view != 0, the view of cfg.view_algo. */
void viz_explore_command(const viz_explore *e, int view, char *buf, size_t len);

/* ---- drawing -------------------------------------------------------------------- */

/* Where the chart was drawn, for tests and mouse-free renderers alike. */
typedef struct {
    int present;               /* 0: no room, or no point to draw */
    int x0, y0, w, h;          /* the plot's cells */
    double lx_lo, lx_hi;       /* log2 N at the first and last column */
    double ly_lo, ly_hi;       /* log2 bytes at the bottom and top row */
} viz_explore_area;

/* Draw the screen on c (cleared first). status: the bottom line (the
 * interactive renderer passes VIZ_EXPLORE_STATUS), or NULL for text frames.
 * area may be NULL. */
void viz_explore_draw(const viz_explore *e, viz_canvas *c, const char *status,
                      viz_explore_area *area);

/* The cell of the point (N, bytes) on a drawn chart: returns 1 with *x, *y
 * set, or 0 when it falls outside the plot. */
int viz_explore_cell(const viz_explore_area *a, int64_t N, uint64_t bytes, int *x, int *y);

/* The marks of the chart: naive 'n', fa1 '1', fa2 '2'; two or more in one
 * cell '*'; the slope-2 guide '.'. */
char viz_explore_mark(sim_algo a);

/* Print one frame as text: w x h characters, ASCII, no trailing spaces.
 * Returns 0, or -1 on a write or allocation failure. */
int viz_explore_text_frame(FILE *out, const viz_explore *e, int w, int h);

#endif /* FASIM_VIZ_EXPLORE_H */
