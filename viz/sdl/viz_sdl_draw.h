/*
 * viz_sdl_draw.h — one frame of the SDL view, drawn through any
 * SDL_Renderer (the window's, or a software renderer on a surface for
 * screenshots), and the mouse hit test on what was drawn.
 */
#ifndef FASIM_VIZ_SDL_DRAW_H
#define FASIM_VIZ_SDL_DRAW_H

#include <stdint.h>

#include <SDL.h>

#include "viz_model.h"
#include "viz_sdl_heat.h"

/* What the frame shows beyond the model: the window's state. */
typedef struct {
    int interactive;        /* 1: the window (key hints, play state shown) */
    int playing;
    double speed;           /* steps per second */
    int help;               /* 1: the help overlay */
    const char *status;     /* status line; NULL: this step's transfers */
    const char *prompt;     /* "go to step: 12_" while typing, else NULL */
    const char *inputs;     /* where the inputs came from ("seed 1", ".npy") */
} viz_sdl_ui;

/* Where each tensor's tile grid was drawn, for viz_sdl_hit. */
typedef struct {
    int present;
    SDL_Rect area;
    int64_t cells_r, cells_c;
} viz_sdl_grid_area;

typedef struct {
    int scale;
    viz_sdl_grid_area grid[SIM_TENSOR_COUNT];
} viz_sdl_layout;

/* Text scale for a frame of w x h pixels: the largest s <= 4 with at least
 * 160 x 60 text cells of 6 s x 10 s pixels (the layout's columns need about
 * 150 characters side by side): 1 below 1920 x 1200, 2 from there. */
int viz_sdl_scale_for(int w, int h);

/* Draw the frame of m's current step filling w x h pixels of r (every pixel
 * is drawn). heat may be NULL (the heat map then says it is off). lay, when
 * not NULL, receives the tile grids' positions. */
void viz_sdl_draw(SDL_Renderer *r, int w, int h, const viz_model *m,
                  viz_sdl_heat *heat, const viz_sdl_ui *ui, viz_sdl_layout *lay);

/* The tile under pixel (x, y) of the last frame drawn with lay: returns 1
 * with *t, *tr, *tc set (a cell that stands for several tiles gives its
 * first), or 0 when (x, y) is on no tile. */
int viz_sdl_hit(const viz_sdl_layout *lay, const viz_model *m, int x, int y,
                sim_tensor *t, int64_t *tr, int64_t *tc);

#endif /* FASIM_VIZ_SDL_DRAW_H */
