/*
 * viz_sdl.h — the SDL2 view of one simulator run: an interactive window and
 * a headless screenshot (PNG or BMP) of any step.
 *
 * Both draw the same frame from the same code (viz_sdl_draw.c) through an
 * SDL_Renderer: the window's renderer for `fasim view --sdl`, a software
 * renderer on an SDL_Surface for `--screenshot FILE`, which needs no display,
 * no video driver and no SDL_Init at all.
 *
 * The frame (paper notation: N rows, d head dimension, B_r x B_c blocks,
 * T_r = ceil(N / B_r) query blocks Q_i, T_c = ceil(N / B_c) key/value blocks
 * K_j, V_j; block indices are shown 1-based, as the pseudocode counts them):
 *   - the tile grid of every tensor in HBM (Q, K, V, O, S, P, m, l, L),
 *     coloured by what happened to each tile so far and what moves now;
 *   - the SRAM buffers resident at this step, laid out by offset within M;
 *   - a heat map of the score tile S_ij = Q_i K_j^T / sqrt(d) or of
 *     P~_ij = exp(S_ij - m), recomputed here from the run's inputs with the
 *     simulator's own primitives (reference/ref_tile.h), so its values are
 *     the bits the run had in SRAM (viz_sdl_heat.c says which m, and when);
 *   - m_i, l_i per row before and after the step, alpha = e^(m_old - m_new)
 *     and the chosen row of O_i, as small plots;
 *   - the pseudocode with the current line, and the HBM counters so far
 *     against the closed-form totals.
 *
 * Nothing here changes the model except its current step (viz_model_seek).
 */
#ifndef FASIM_VIZ_SDL_H
#define FASIM_VIZ_SDL_H

#include <stddef.h>
#include <stdint.h>

#include "viz_model.h"

/* Frame size when the caller passes 0: 1280 x 800 pixels. The text grows
 * with the frame (viz_sdl_font_fit in viz_sdl_font.h): DejaVu Sans Mono at
 * 16 pixels here, 25 at 1920 x 1080 (capitals 18 pixels tall, readable when
 * projected); the built-in 5 x 7 font at 1x, 2x from 1920 x 1200, when the
 * build lacks SDL2_ttf or no font file is found. */
#define VIZ_SDL_DEFAULT_W 1280
#define VIZ_SDL_DEFAULT_H 800
/* Screenshot limits: 320 x 200 still shows every panel (cramped); 8192 keeps
 * one frame (8192^2 x 4 B = 256 MiB) within reason. */
#define VIZ_SDL_MIN_SIZE  200
#define VIZ_SDL_MAX_SIZE  8192

/* Colour themes. Light is the default: a projector washes out a dark frame's
 * dim greys, and light frames print and sit on slides; dark is for a screen
 * in a dim room. */
typedef enum { VIZ_SDL_THEME_LIGHT, VIZ_SDL_THEME_DARK } viz_sdl_theme;

typedef struct {
    /* The (N, d) row-major float32 inputs the model was built from, when they
     * were the caller's (.npy) rather than seeded: viz_model_config() clears
     * its input pointers, so without these the heat map cannot know them.
     * All NULL: the inputs were seeded (viz_config.seed). Read during the
     * call only; the window also uses them to rebuild the run ('a', 'c').
     * When Q is NULL but the model was built from other inputs, the heat map
     * notices before it draws anything (its recomputed row maxima disagree
     * with the run's recorded m_i; viz_sdl_heat_probe) and says "heat map
     * needs seeded inputs" instead of drawing wrong data. Count-only runs
     * record no m_i to compare: there the caller must pass the inputs. */
    const float *Q, *K, *V;
    int width, height;          /* window size at start; 0: the defaults */
    uint64_t start_step;        /* 0-based step shown first (clamped) */
    int play;                   /* 1: start playing */
    double steps_per_second;    /* playing speed; 0: 4 */
    viz_sdl_theme theme;        /* colours; 0: light */
} viz_sdl_opts;

/* Zero inputs, default size, step 0, paused, 4 steps per second, light. */
void viz_sdl_opts_default(viz_sdl_opts *o);

/* The interactive window (`fasim view --sdl`). Keys: space play/pause,
 * n or Right one step, b or Left one back, Home / End first / last step,
 * + / - speed x2 / x0.5, g then digits then Enter jump to a step (1-based, as
 * shown; Escape cancels), a switch algorithm (naive -> fa1 -> fa2) on the same
 * inputs, c toggle the causal mask, r restart from step 1, t light / dark
 * theme, ? help, q / Escape / closing the window quit. A left click on a
 * tile shows viz_tile_describe() in the status line.
 *
 * m stays the caller's: runs rebuilt for 'a' and 'c' are owned and freed
 * here; m is left at the step last shown of it. o may be NULL (defaults).
 * Calls SDL_Init(SDL_INIT_VIDEO) and SDL_Quit() on every exit path.
 * Returns 0 when the user quits; VIZ_EFAIL with a message in err (no trailing
 * newline) when no window can be opened (no display: the message suggests
 * `--screenshot FILE` or the terminal view) or on out of memory. */
int viz_sdl_run(viz_model *m, const viz_sdl_opts *o, char *err, size_t errlen);

/* Render step `step` (0-based, < viz_info.nsteps; 0 for a refused plan, which
 * has no steps and draws its refusal) to `path` without any window: PNG when
 * the name ends in ".png", BMP (24-bit, via SDL_SaveBMP) for ".bmp", either
 * case. width, height: pixels, 0 for the defaults, else within
 * [VIZ_SDL_MIN_SIZE, VIZ_SDL_MAX_SIZE]. The same model, step and size give the
 * same bytes on every run. m is left at `step`; o may be NULL (seeded inputs).
 * Returns 0; VIZ_EUSAGE (an unknown extension, a step out of range, a bad
 * size: nothing is written) or VIZ_EFAIL (the file cannot be written: no
 * partial file is left; out of memory), with a message in err. */
int viz_sdl_screenshot(viz_model *m, const viz_sdl_opts *o, uint64_t step,
                       const char *path, int width, int height, char *err,
                       size_t errlen);

#endif /* FASIM_VIZ_SDL_H */
