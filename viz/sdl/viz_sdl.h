/*
 * viz_sdl.h — the SDL2 view of one simulator run: an interactive window, a
 * headless screenshot (PNG or BMP) of any step, and a headless recording of
 * a range of steps (GIF, PNG or SVG frames, MP4 through ffmpeg).
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

/* ---- recording: `fasim view --record FILE` ---------------------------------- */

/* What a recording writes, from FILE's name: an animated GIF (".gif"), an
 * MP4 through ffmpeg (".mp4"), or numbered frames into a folder (a name that
 * ends in '/' or is a folder: step-K.png or step-K.svg, K the step shown). */
typedef enum {
    VIZ_SDL_REC_GIF, VIZ_SDL_REC_MP4, VIZ_SDL_REC_PNG, VIZ_SDL_REC_SVG
} viz_sdl_rec_kind;

/* Limits on one recording, checked before anything is drawn: every frame is
 * drawn whole in memory (W x H x 3 bytes) before it is encoded, so the
 * frames' pixels bound the time (about 10 ms a megapixel) whatever the
 * output's compression. 10,000 frames are 40 minutes at 4 steps a second;
 * 4 GiB are 1,398 frames of 1280 x 800, or 2,236 of 800 x 600. */
#define VIZ_SDL_REC_MAX_FRAMES 10000
#define VIZ_SDL_REC_MAX_BYTES (UINT64_C(4) << 30)
/* Frames per second: a GIF times its frames in hundredths of a second, and
 * browsers show a delay under 2 as 10; 50 a second is the most it keeps. */
#define VIZ_SDL_REC_MAX_FPS 50

typedef struct {
    const char *path;       /* FILE */
    int frames_svg;         /* for a folder: 1 SVG frames, 0 PNG */
    uint64_t first;         /* 0-based step of the first frame */
    uint64_t count;         /* frames, one a step; 0: to the run's last step */
    int width, height;      /* 0: the defaults */
    int fps;                /* frames per second; 0: 4 */
} viz_sdl_rec;

/* What r->path asks for, whether it can be written and whether what writes
 * it is here (giflib built in; ffmpeg on $PATH or $FASIM_FFMPEG), creating
 * nothing: for callers to fail before any work. Returns 0 with *kind set;
 * VIZ_EUSAGE (a name that is neither .gif, .mp4 nor a folder; svg with a
 * file) or VIZ_EFAIL (an unwritable place, no ffmpeg, no giflib), with a
 * message in err. */
int viz_sdl_record_check(const viz_sdl_rec *r, viz_sdl_rec_kind *kind, char *err,
                         size_t errlen);

/* Draw steps first .. first + count - 1 of m as viz_sdl_screenshot draws one
 * step (the same layout, o's theme, no display needed) and write them to
 * r->path. GIF: one frame a step, a fixed palette (every theme colour
 * exactly, the others to the nearest of a 6 x 6 x 6 cube and greys), each
 * frame after the first only where it differs from the one before, looping
 * forever; the same model and options give the same bytes. A folder is
 * created when missing (its parent must exist). Refused before any frame is
 * drawn: a range outside the run, more than VIZ_SDL_REC_MAX_FRAMES frames or
 * VIZ_SDL_REC_MAX_BYTES of pixels (VIZ_EUSAGE; the message gives the numbers
 * and how to narrow the recording). Returns 0; VIZ_EUSAGE; VIZ_EFAIL (a
 * write failed: no partial file is left; ffmpeg failed; out of memory). */
int viz_sdl_record(viz_model *m, const viz_sdl_opts *o, const viz_sdl_rec *r, char *err,
                   size_t errlen);

#endif /* FASIM_VIZ_SDL_H */
