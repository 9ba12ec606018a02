/*
 * viz_sdl_font.h — the SDL view's text: a TrueType monospace face through
 * SDL2_ttf when the build has it and a font file is found (DejaVu Sans Mono
 * by default, $FASIM_FONT to choose another), sized to the frame so that a
 * projected 1920 x 1080 frame is readable; else fasim's own 5 x 7 bitmap font
 * (ASCII 32 to 126), drawn as filled rectangles through any SDL_Renderer.
 * The window and the headless screenshot draw text with the same code.
 *
 * A glyph is 5 columns x 7 rows in a cell of VIZ_SDL_CELL_W x VIZ_SDL_CELL_H
 * pixels (one column and two rows of spacing), all multiplied by `scale`.
 */
#ifndef FASIM_VIZ_SDL_FONT_H
#define FASIM_VIZ_SDL_FONT_H

#include <stdint.h>

#include <SDL.h>

#define VIZ_SDL_GLYPH_W 5
#define VIZ_SDL_GLYPH_H 7
#define VIZ_SDL_CELL_W  6
#define VIZ_SDL_CELL_H  9

/* The glyph of character c: VIZ_SDL_GLYPH_H strings of VIZ_SDL_GLYPH_W
 * characters, '#' for a lit pixel, '.' for a dark one. Characters outside
 * 32..126 get the glyph of '?'. Static storage. */
const char *const *viz_sdl_glyph(int c);

/* Width in pixels of s drawn at `scale` (its characters times the cell). */
int viz_sdl_text_width(const char *s, int scale);

/* Draw s with its cell's top-left corner at (x, y) in colour rgb (0xRRGGBB),
 * opaque; '\n' is not special (callers lay out lines). Returns the width
 * drawn, as viz_sdl_text_width. */
int viz_sdl_text(SDL_Renderer *r, int x, int y, int scale, uint32_t rgb, const char *s);

/* The same, drawing at most max_w pixels of text: a string that is too wide
 * is cut to whole characters. Returns the width drawn. */
int viz_sdl_text_clip(SDL_Renderer *r, int x, int y, int scale, uint32_t rgb,
                      const char *s, int max_w);

/* The bitmap font's scale for a frame of w x h pixels: the largest s <= 4
 * with at least 160 x 60 text cells of 6 s x 10 s pixels: 1 below
 * 1920 x 1200, 2 from there. */
int viz_sdl_scale_for(int w, int h);

/* ---- the view's text face --------------------------------------------------- */

/* A text face, TrueType or the bitmap font, sized for one frame size. */
typedef struct viz_sdl_font viz_sdl_font;

/* The metrics the layout is built from, in pixels. Every character advances
 * cell_w (monospace); lines are line_h apart; a capital is cap_h tall, its
 * top at the y given to viz_sdl_font_draw. unit is the layout's small unit
 * (borders, gaps, markers): about a tenth of line_h, the bitmap font's
 * scale. */
typedef struct {
    int cell_w, line_h, cap_h, unit;
} viz_sdl_font_metrics;

/* Open the view's face: the file named by $FASIM_FONT when set, else the
 * first of DejaVu Sans Mono's usual places (Debian's fonts-dejavu-core
 * first) and a few other monospace fonts. When SDL2_ttf is not built in or
 * no file opens, the face is the bitmap font and the process says so once on
 * stderr. NULL only when out of memory. */
viz_sdl_font *viz_sdl_font_open(void);

void viz_sdl_font_close(viz_sdl_font *f);

/* The TrueType file in use, or NULL for the bitmap font. */
const char *viz_sdl_font_file(const viz_sdl_font *f);

/* Size the face for a frame of w x h pixels (cheap when the size is
 * unchanged) and return its metrics. TrueType: the largest pixel size whose
 * cells give at least VIZ_SDL_TEXT_COLS columns and VIZ_SDL_TEXT_ROWS lines
 * (the three columns' text side by side, about 40 characters each; the
 * bars and the panels' lines stacked), at least 8 pixels: 16 pixels at
 * 1280 x 800, 25 at 1920 x 1080 (DejaVu Sans Mono: 15 x 30 cells, capitals
 * 18 pixels tall).
 * Bitmap: viz_sdl_scale_for(w, h). f NULL: the bitmap font. */
#define VIZ_SDL_TEXT_COLS 120
#define VIZ_SDL_TEXT_ROWS 36
viz_sdl_font_metrics viz_sdl_font_fit(viz_sdl_font *f, int w, int h);

/* Draw at most max_w pixels of s (whole characters) at (x, y), the top-left
 * of its cell, opaque colour rgb over what is there (TrueType glyphs are
 * anti-aliased by blending), in the size of the last viz_sdl_font_fit.
 * Returns the width drawn: characters times cell_w. */
int viz_sdl_font_draw(viz_sdl_font *f, SDL_Renderer *r, int x, int y, uint32_t rgb,
                      const char *s, int max_w);

#endif /* FASIM_VIZ_SDL_FONT_H */
