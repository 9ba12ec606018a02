/*
 * viz_canvas.h — a character canvas with semantic styles, and the layout that
 * draws a view model on it. Shared by the plain-text renderer (viz_text.c)
 * and the curses renderer (viz_curses.c), so that a text frame shows exactly
 * what the terminal shows, minus the attributes. No terminal code here.
 *
 * The canvas holds one ASCII character and one viz_style per cell. Styles
 * say what a cell means (a tile being loaded, the current pseudocode line);
 * each renderer maps them to what it can show (reverse video, bold, colour,
 * or nothing at all: every mark is also a distinct character).
 */
#ifndef FASIM_VIZ_CANVAS_H
#define FASIM_VIZ_CANVAS_H

#include <stdint.h>

#include "viz_model.h"

typedef enum {
    VIZ_ST_NORMAL,
    VIZ_ST_DIM,          /* secondary text, "not reached" */
    VIZ_ST_TITLE,        /* the top lines */
    VIZ_ST_HEAD,         /* section headers */
    VIZ_ST_READ,         /* tile read so far ("2r") */
    VIZ_ST_WRITTEN,      /* tile written so far ("1w") */
    VIZ_ST_BOTH,         /* read and written ("2r1w") */
    VIZ_ST_LOAD,         /* being loaded this step ('>'), buffer loaded */
    VIZ_ST_STORE,        /* being stored this step ('<'), buffer stored */
    VIZ_ST_CURRENT,      /* a tile or block in hand at this step ('*') */
    VIZ_ST_CURLINE,      /* the pseudocode line reached */
    VIZ_ST_CHANGED,      /* a statistics row whose maximum just changed */
    VIZ_ST_BAR,          /* the filled part of the SRAM bar */
    VIZ_ST_OVER,         /* past M: a refused buffer, a paper plan over M */
    VIZ_ST_STATUS,       /* the status line */
    VIZ_ST_COUNT
} viz_style;

typedef struct {
    int w, h;
    char *ch;                  /* w * h characters, row-major, ' ' when empty */
    unsigned char *style;      /* w * h viz_style values */
} viz_canvas;

/* Allocate a w x h canvas (w, h >= 1), cleared. Returns 0 or -1 (memory). */
int viz_canvas_init(viz_canvas *c, int w, int h);
void viz_canvas_free(viz_canvas *c);
void viz_canvas_clear(viz_canvas *c);

/* Write text at (x, y) in style st, clipped to the canvas and to at most
 * maxw characters (maxw < 0: to the right edge). Non-printable characters
 * become '?'. Returns the number of characters written. */
int viz_canvas_text(viz_canvas *c, int x, int y, int maxw, viz_style st, const char *s);
/* printf-style viz_canvas_text. */
int viz_canvas_printf(viz_canvas *c, int x, int y, int maxw, viz_style st,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void viz_canvas_fill(viz_canvas *c, int x, int y, int n, char ch, viz_style st);

/* ---- the layout -------------------------------------------------------------- */

/* Where one tensor's tile grid was drawn: for mouse hits. */
typedef struct {
    int present;
    int x, y, w, h;            /* screen cells of the grid */
    sim_tensor tensor;
} viz_grid_rect;

typedef struct {
    viz_grid_rect grid[SIM_TENSOR_COUNT];
    int too_small;             /* the canvas is under 80 x 23 (24 with status) */
} viz_layout;

/* What the renderer adds to a frame. */
typedef struct {
    const char *status;        /* the bottom line (controls), or NULL: no
                                  status line (text frames) */
    const char *message;       /* replaces the "moved:" line when non-NULL
                                  (tile details, prompts, errors) */
    const char *state;         /* right end of the second line ("paused"),
                                  or NULL */
} viz_frame_opts;

/* Draw the model's current state on c (cleared first). The layout uses the
 * whole canvas: 80 x 24 is the designed minimum; larger canvases get taller
 * grids, more pseudocode and more statistics rows. Below 80 x 23 (without
 * the status line) it draws what fits and sets out->too_small. out may be
 * NULL. */
void viz_layout_draw(const viz_model *m, viz_canvas *c, const viz_frame_opts *o,
                     viz_layout *out);

/* The tile under screen cell (x, y): returns 1 with *t, *tr, *tc set (the
 * first tile the cell stands for), or 0 when (x, y) is not on a grid. */
int viz_layout_hit(const viz_layout *l, const viz_model *m, int x, int y, sim_tensor *t,
                   int64_t *tr, int64_t *tc);

/* The status line's controls, for renderers with a keyboard. */
extern const char VIZ_CONTROLS[];

/* A framed box of n lines centred on the canvas (help screens): the first
 * line in the heading style, the rest plain, clipped to the canvas. */
void viz_canvas_box(viz_canvas *c, const char *const *lines, int n);

#endif /* FASIM_VIZ_CANVAS_H */
