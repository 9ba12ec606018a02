/*
 * viz_sdl_draw.h — one frame of the SDL view, drawn through any
 * SDL_Renderer (the window's, or a software renderer on a surface for
 * screenshots), and the mouse hit test on what was drawn.
 */
#ifndef FASIM_VIZ_SDL_DRAW_H
#define FASIM_VIZ_SDL_DRAW_H

#include <stdint.h>
#include <stdio.h>

#include <SDL.h>

#include "viz_model.h"
#include "viz_sdl.h"
#include "viz_sdl_font.h"
#include "viz_sdl_heat.h"

/* One theme's colours (0xRRGGBB). Text colours (text, dim, faint, title,
 * good, bad, warn) are read on bg and on panel, code_text and code_num on
 * hilite: each pair has a contrast of at least 4.5:1 (WCAG 2). The tile
 * states and the plots use the Okabe-Ito colours, which stay apart for the
 * common colour-vision deficiencies; loading and storing tiles also carry a
 * corner mark (mark: top-left loading, bottom-right storing), so that they
 * differ in more than hue. */
typedef struct {
    uint32_t bg, panel, border, text, dim, faint, title, hilite, code_text, code_num;
    uint32_t good, bad, warn;
    uint32_t t_none, t_read, t_written, t_both, t_load, t_store, t_loadstore, t_cur, mark;
    uint32_t before, after, changed, masked, masked_line;
    uint32_t s_neg, s_zero, s_pos;  /* the score heat map: negative, 0, positive */
} viz_sdl_palette;

/* The colours of theme t (an unknown t gives light). Static storage. */
const viz_sdl_palette *viz_sdl_palette_of(viz_sdl_theme t);

/* What the frame shows beyond the model: the window's state. */
typedef struct {
    int interactive;        /* 1: the window (key hints, play state shown) */
    int playing;
    double speed;           /* steps per second */
    int help;               /* 1: the help overlay */
    const char *status;     /* status line; NULL: this step's transfers */
    const char *prompt;     /* "go to step: 12_" while typing, else NULL */
    const char *inputs;     /* where the inputs came from ("seed 1", ".npy") */
    viz_sdl_theme theme;    /* 0: light */
    viz_sdl_font *font;     /* the text face; NULL: the bitmap font */
    /* When set, called for every string the frame means to draw, before any
     * cut: where it starts (its cell's top-left), the width it may take
     * (max_w pixels) and the panel it belongs to (the whole frame for the
     * bars). A string the frame has no room for at all (a wrapped text's
     * lines past its last one) is reported at the panel's bottom edge. For
     * tests: a string that does not fit its panel is one a reader loses. */
    void (*text_seen)(void *arg, const char *s, int x, int y, int max_w, SDL_Rect panel);
    void *text_arg;
    /* When set, the frame is written here as one SVG document instead of
     * being drawn (the renderer may then be NULL): the same layout, every
     * fill and line a <rect> or <line>, every string a <text> in a monospace
     * face stretched to the width of its cells, each panel clipped. */
    FILE *svg;
} viz_sdl_ui;

/* Where each tensor's tile grid was drawn, for viz_sdl_hit. */
typedef struct {
    int present;
    SDL_Rect area;
    int64_t cells_r, cells_c;
} viz_sdl_grid_area;

typedef struct {
    int scale;                  /* the layout's unit (the bitmap font's scale) */
    viz_sdl_font_metrics text;  /* the text cells the frame was laid out in */
    viz_sdl_grid_area grid[SIM_TENSOR_COUNT];
    viz_sdl_grid_area blocks;   /* the T_r x T_c block grid (FA1, FA2): cells_r x
                                   cells_c square cells filling area */
} viz_sdl_layout;

/* Draw the frame of m's current step filling w x h pixels of r (every pixel
 * is drawn), or write it to ui->svg. heat may be NULL (the heat map then says it is off). lay, when
 * not NULL, receives the tile grids' positions. */
void viz_sdl_draw(SDL_Renderer *r, int w, int h, const viz_model *m,
                  viz_sdl_heat *heat, const viz_sdl_ui *ui, viz_sdl_layout *lay);

/* The tile under pixel (x, y) of the last frame drawn with lay: returns 1
 * with *t, *tr, *tc set (a cell that stands for several tiles gives its
 * first), or 0 when (x, y) is on no tile. */
int viz_sdl_hit(const viz_sdl_layout *lay, const viz_model *m, int x, int y,
                sim_tensor *t, int64_t *tr, int64_t *tc);

/* ---- drawing without a window (viz_sdl_shot.c) ------------------------------ */

/* A software renderer on a w x h surface with the view's heat map and face:
 * what --screenshot and --record draw frames with, no display needed. */
typedef struct {
    SDL_Surface *surf;
    SDL_Renderer *rend;
    viz_sdl_heat *heat;
    viz_sdl_font *font;
    viz_sdl_ui ui;
    char inputs[96];
    uint8_t *rgb;           /* the last frame drawn: packed R, G, B, w * 3 a row */
    int w, h;
} viz_sdl_offscreen;

/* Make f for m (probing the heat map's inputs: m is left at its step); o may
 * be NULL. Returns 0, or VIZ_EFAIL with a message in err (out of memory). */
int viz_sdl_offscreen_open(viz_sdl_offscreen *f, viz_model *m, const viz_sdl_opts *o, int w,
                           int h, char *err, size_t errlen);
/* Draw m's current step; returns f->rgb. */
const uint8_t *viz_sdl_offscreen_draw(viz_sdl_offscreen *f, const viz_model *m);
/* Write m's current step to out as SVG (viz_sdl_ui.svg). */
void viz_sdl_offscreen_svg(viz_sdl_offscreen *f, const viz_model *m, FILE *out);
void viz_sdl_offscreen_close(viz_sdl_offscreen *f);

/* VIZ_EUSAGE with "WHAT size W x H: ..." in err unless both sides are in
 * [VIZ_SDL_MIN_SIZE, VIZ_SDL_MAX_SIZE]; else 0. */
int viz_sdl_check_size(int w, int h, const char *what, char *err, size_t errlen);

/* Seek m to step (0-based; 0 alone for a refused plan). Returns 0, or
 * VIZ_EUSAGE with the range in err. */
int viz_sdl_seek_step(viz_model *m, uint64_t step, char *err, size_t errlen);

#endif /* FASIM_VIZ_SDL_DRAW_H */
