/*
 * viz_sdl_font.h — fasim's own 5 x 7 bitmap font for the SDL view (ASCII 32
 * to 126), drawn as filled rectangles through any SDL_Renderer, so that the
 * window and the headless screenshot draw text with the same code and no
 * font library.
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

#endif /* FASIM_VIZ_SDL_FONT_H */
