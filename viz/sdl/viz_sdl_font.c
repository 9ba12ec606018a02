/*
 * viz_sdl_font.c — the SDL view's text: the 5 x 7 glyphs and their drawing,
 * and the face the view draws with (TrueType through SDL2_ttf, or those
 * glyphs).
 *
 * The glyphs are drawn here as pictures, one row per string, so that a reader
 * can see (and fix) each one. Design rules: capitals and digits use the full
 * 7 rows; lower case has a 2-row ascender space (x-height 5) and keeps its
 * descenders (g, j, p, q, y) inside the cell by raising the bowl; digits are
 * distinct from letters (0 has a slash-like dot row, 1 a foot, 5 vs S, 2 vs Z)
 * because the view prints mostly numbers.
 */
#include "viz_sdl_font.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FASIM_HAVE_SDL2_TTF
#include <SDL_ttf.h>
#endif

#define GLYPHS 95   /* ASCII 32 .. 126 */

static const char *const FONT[GLYPHS][VIZ_SDL_GLYPH_H] = {
    /* ' ' */ { ".....", ".....", ".....", ".....", ".....", ".....", "....." },
    /* '!' */ { "..#..", "..#..", "..#..", "..#..", "..#..", ".....", "..#.." },
    /* '"' */ { ".#.#.", ".#.#.", ".....", ".....", ".....", ".....", "....." },
    /* '#' */ { ".#.#.", ".#.#.", "#####", ".#.#.", "#####", ".#.#.", ".#.#." },
    /* '$' */ { "..#..", ".####", "#.#..", ".###.", "..#.#", "####.", "..#.." },
    /* '%' */ { "##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##" },
    /* '&' */ { ".##..", "#..#.", "#.#..", ".#...", "#.#.#", "#..#.", ".##.#" },
    /* ''' */ { "..#..", "..#..", ".....", ".....", ".....", ".....", "....." },
    /* '(' */ { "...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#." },
    /* ')' */ { ".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..." },
    /* '*' */ { ".....", "..#..", "#.#.#", ".###.", "#.#.#", "..#..", "....." },
    /* '+' */ { ".....", "..#..", "..#..", "#####", "..#..", "..#..", "....." },
    /* ',' */ { ".....", ".....", ".....", ".....", ".##..", "..#..", ".#..." },
    /* '-' */ { ".....", ".....", ".....", "#####", ".....", ".....", "....." },
    /* '.' */ { ".....", ".....", ".....", ".....", ".....", ".##..", ".##.." },
    /* '/' */ { ".....", "....#", "...#.", "..#..", ".#...", "#....", "....." },
    /* '0' */ { ".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###." },
    /* '1' */ { "..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###." },
    /* '2' */ { ".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####" },
    /* '3' */ { "#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###." },
    /* '4' */ { "...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#." },
    /* '5' */ { "#####", "#....", "####.", "....#", "....#", "#...#", ".###." },
    /* '6' */ { "..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###." },
    /* '7' */ { "#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..." },
    /* '8' */ { ".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###." },
    /* '9' */ { ".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.." },
    /* ':' */ { ".....", ".##..", ".##..", ".....", ".##..", ".##..", "....." },
    /* ';' */ { ".....", ".##..", ".##..", ".....", ".##..", "..#..", ".#..." },
    /* '<' */ { "...#.", "..#..", ".#...", "#....", ".#...", "..#..", "...#." },
    /* '=' */ { ".....", ".....", "#####", ".....", "#####", ".....", "....." },
    /* '>' */ { ".#...", "..#..", "...#.", "....#", "...#.", "..#..", ".#..." },
    /* '?' */ { ".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.." },
    /* '@' */ { ".###.", "#...#", "....#", ".##.#", "#.#.#", "#.#.#", ".###." },
    /* 'A' */ { ".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#" },
    /* 'B' */ { "####.", "#...#", "#...#", "####.", "#...#", "#...#", "####." },
    /* 'C' */ { ".###.", "#...#", "#....", "#....", "#....", "#...#", ".###." },
    /* 'D' */ { "###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.." },
    /* 'E' */ { "#####", "#....", "#....", "####.", "#....", "#....", "#####" },
    /* 'F' */ { "#####", "#....", "#....", "####.", "#....", "#....", "#...." },
    /* 'G' */ { ".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####" },
    /* 'H' */ { "#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#" },
    /* 'I' */ { ".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###." },
    /* 'J' */ { "..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.." },
    /* 'K' */ { "#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#" },
    /* 'L' */ { "#....", "#....", "#....", "#....", "#....", "#....", "#####" },
    /* 'M' */ { "#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#" },
    /* 'N' */ { "#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#" },
    /* 'O' */ { ".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###." },
    /* 'P' */ { "####.", "#...#", "#...#", "####.", "#....", "#....", "#...." },
    /* 'Q' */ { ".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#" },
    /* 'R' */ { "####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#" },
    /* 'S' */ { ".####", "#....", "#....", ".###.", "....#", "....#", "####." },
    /* 'T' */ { "#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.." },
    /* 'U' */ { "#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###." },
    /* 'V' */ { "#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.." },
    /* 'W' */ { "#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#." },
    /* 'X' */ { "#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#" },
    /* 'Y' */ { "#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.." },
    /* 'Z' */ { "#####", "....#", "...#.", "..#..", ".#...", "#....", "#####" },
    /* '[' */ { ".###.", ".#...", ".#...", ".#...", ".#...", ".#...", ".###." },
    /* '\' */ { ".....", "#....", ".#...", "..#..", "...#.", "....#", "....." },
    /* ']' */ { ".###.", "...#.", "...#.", "...#.", "...#.", "...#.", ".###." },
    /* '^' */ { "..#..", ".#.#.", "#...#", ".....", ".....", ".....", "....." },
    /* '_' */ { ".....", ".....", ".....", ".....", ".....", ".....", "#####" },
    /* '`' */ { ".#...", "..#..", ".....", ".....", ".....", ".....", "....." },
    /* 'a' */ { ".....", ".....", ".###.", "....#", ".####", "#...#", ".####" },
    /* 'b' */ { "#....", "#....", "#.##.", "##..#", "#...#", "#...#", "####." },
    /* 'c' */ { ".....", ".....", ".###.", "#....", "#....", "#...#", ".###." },
    /* 'd' */ { "....#", "....#", ".##.#", "#..##", "#...#", "#...#", ".####" },
    /* 'e' */ { ".....", ".....", ".###.", "#...#", "#####", "#....", ".###." },
    /* 'f' */ { "..##.", ".#..#", ".#...", "###..", ".#...", ".#...", ".#..." },
    /* 'g' */ { ".....", ".####", "#...#", "#...#", ".####", "....#", ".###." },
    /* 'h' */ { "#....", "#....", "#.##.", "##..#", "#...#", "#...#", "#...#" },
    /* 'i' */ { "..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###." },
    /* 'j' */ { "...#.", ".....", "..##.", "...#.", "...#.", "#..#.", ".##.." },
    /* 'k' */ { "#....", "#....", "#..#.", "#.#..", "##...", "#.#..", "#..#." },
    /* 'l' */ { ".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###." },
    /* 'm' */ { ".....", ".....", "##.#.", "#.#.#", "#.#.#", "#...#", "#...#" },
    /* 'n' */ { ".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#" },
    /* 'o' */ { ".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###." },
    /* 'p' */ { ".....", ".....", "####.", "#...#", "####.", "#....", "#...." },
    /* 'q' */ { ".....", ".....", ".##.#", "#..##", ".####", "....#", "....#" },
    /* 'r' */ { ".....", ".....", "#.##.", "##..#", "#....", "#....", "#...." },
    /* 's' */ { ".....", ".....", ".###.", "#....", ".###.", "....#", "####." },
    /* 't' */ { ".#...", ".#...", "###..", ".#...", ".#...", ".#..#", "..##." },
    /* 'u' */ { ".....", ".....", "#...#", "#...#", "#...#", "#..##", ".##.#" },
    /* 'v' */ { ".....", ".....", "#...#", "#...#", "#...#", ".#.#.", "..#.." },
    /* 'w' */ { ".....", ".....", "#...#", "#...#", "#.#.#", "#.#.#", ".#.#." },
    /* 'x' */ { ".....", ".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#" },
    /* 'y' */ { ".....", ".....", "#...#", "#...#", ".####", "....#", ".###." },
    /* 'z' */ { ".....", ".....", "#####", "...#.", "..#..", ".#...", "#####" },
    /* '{' */ { "...#.", "..#..", "..#..", ".#...", "..#..", "..#..", "...#." },
    /* '|' */ { "..#..", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.." },
    /* '}' */ { ".#...", "..#..", "..#..", "...#.", "..#..", "..#..", ".#..." },
    /* '~' */ { ".....", ".....", ".#...", "#.#.#", "...#.", ".....", "....." },
};

const char *const *viz_sdl_glyph(int c)
{
    if (c < 32 || c > 126)
        c = '?';
    return FONT[c - 32];
}

int viz_sdl_text_width(const char *s, int scale)
{
    return (int)strlen(s) * VIZ_SDL_CELL_W * scale;
}

/* One glyph's lit pixels as rectangles, each horizontal run of a row merged
 * into one (at most 3 per row, 21 per glyph). Returns the number added. */
static int glyph_rects(const char *const *g, int x, int y, int scale, SDL_Rect *out)
{
    int n = 0;
    for (int row = 0; row < VIZ_SDL_GLYPH_H; row++) {
        int col = 0;
        while (col < VIZ_SDL_GLYPH_W) {
            if (g[row][col] != '#') {
                col++;
                continue;
            }
            int start = col;
            while (col < VIZ_SDL_GLYPH_W && g[row][col] == '#')
                col++;
            out[n].x = x + start * scale;
            out[n].y = y + row * scale;
            out[n].w = (col - start) * scale;
            out[n].h = scale;
            n++;
        }
    }
    return n;
}

int viz_sdl_text_clip(SDL_Renderer *r, int x, int y, int scale, uint32_t rgb,
                      const char *s, int max_w)
{
    /* Rectangles are batched per 32 glyphs: one SDL call each, not one per
     * pixel (a frame prints a few thousand characters). */
    SDL_Rect rects[32 * 21];
    int n = 0, drawn = 0;
    const int cw = VIZ_SDL_CELL_W * scale;
    SDL_SetRenderDrawColor(r, (Uint8)(rgb >> 16), (Uint8)(rgb >> 8), (Uint8)rgb, 255);
    for (const char *p = s; *p; p++) {
        if (drawn + cw > max_w + scale)   /* the last column is spacing */
            break;
        if (*p != ' ')
            n += glyph_rects(viz_sdl_glyph((unsigned char)*p), x + drawn, y, scale,
                             rects + n);
        drawn += cw;
        if (n > 31 * 21) {
            SDL_RenderFillRects(r, rects, n);
            n = 0;
        }
    }
    if (n)
        SDL_RenderFillRects(r, rects, n);
    return drawn;
}

int viz_sdl_text(SDL_Renderer *r, int x, int y, int scale, uint32_t rgb, const char *s)
{
    return viz_sdl_text_clip(r, x, y, scale, rgb, s, 1 << 30);
}

int viz_sdl_scale_for(int w, int h)
{
    int s = w / 960 < h / 600 ? w / 960 : h / 600;
    return s < 1 ? 1 : s > 4 ? 4 : s;
}

/* ---- the view's text face ------------------------------------------------------ */

struct viz_sdl_font {
#ifdef FASIM_HAVE_SDL2_TTF
    TTF_Font *ttf;              /* NULL: the bitmap font */
    char file[512];
    int px;                     /* the size ttf is set to; 0: none yet */
    int top;                    /* ascent - cap height: drawn that far above y */
#endif
    int fit_w, fit_h;           /* the frame size of the last fit */
    viz_sdl_font_metrics met;
};

static viz_sdl_font_metrics bitmap_metrics(int w, int h)
{
    const int s = viz_sdl_scale_for(w, h);
    viz_sdl_font_metrics m = { VIZ_SDL_CELL_W * s, (VIZ_SDL_CELL_H + 1) * s,
                               VIZ_SDL_GLYPH_H * s, s };
    return m;
}

/* Said once per process: a view that falls back does so for every frame. */
static void say_fallback(const char *why)
{
    static int said;
    if (said)
        return;
    said = 1;
    fprintf(stderr, "fasim view: %s; text drawn with the built-in 5 x 7 font\n", why);
}

#ifdef FASIM_HAVE_SDL2_TTF
/* Where the usual monospace faces live: Debian/Ubuntu (fonts-dejavu-core),
 * Fedora, Arch, the BSDs, then two other families. */
static const char *const FONT_FILES[] = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/dejavu-sans-mono-fonts/DejaVuSansMono.ttf",
    "/usr/share/fonts/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/TTF/DejaVuSansMono.ttf",
    "/usr/local/share/fonts/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationMono-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeMono.ttf",
};

static int ttf_try(viz_sdl_font *f, const char *file)
{
    TTF_Font *t = TTF_OpenFont(file, 16);
    if (!t)
        return 0;
    /* Hinted glyphs on whole pixels: sharp at small sizes, and the
     * monospace advance is a whole number of pixels. */
    TTF_SetFontHinting(t, TTF_HINTING_NORMAL);
    f->ttf = t;
    snprintf(f->file, sizeof f->file, "%s", file);
    return 1;
}

/* Set the face to px pixels; fills met and top. 0, or -1 when SDL2_ttf
 * refuses. */
static int ttf_size(viz_sdl_font *f, int px)
{
    if (f->px != px && TTF_SetFontSize(f->ttf, px) != 0)
        return -1;
    f->px = px;
    int minx, maxx, miny, maxy, adv;
    if (TTF_GlyphMetrics32(f->ttf, 'M', &minx, &maxx, &miny, &maxy, &adv) != 0)
        return -1;
    int cap = 0;
    if (TTF_GlyphMetrics32(f->ttf, 'H', &minx, &maxx, &miny, &cap, &adv) != 0 || cap < 1)
        return -1;
    const int line = TTF_FontLineSkip(f->ttf);
    f->top = TTF_FontAscent(f->ttf) - cap;
    f->met.cell_w = adv;
    f->met.line_h = line;
    f->met.cap_h = cap;
    f->met.unit = (line + 5) / 10 > 1 ? (line + 5) / 10 : 1;
    return 0;
}
#endif

viz_sdl_font *viz_sdl_font_open(void)
{
    viz_sdl_font *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
#ifdef FASIM_HAVE_SDL2_TTF
    if (TTF_Init() != 0) {
        say_fallback("SDL2_ttf does not start");
        return f;
    }
    const char *env = getenv("FASIM_FONT");
    if (env && env[0]) {
        if (!ttf_try(f, env)) {
            char why[640];
            snprintf(why, sizeof why, "FASIM_FONT=%s: %s", env, TTF_GetError());
            say_fallback(why);
        }
    } else {
        for (size_t k = 0; k < sizeof FONT_FILES / sizeof FONT_FILES[0] && !f->ttf; k++)
            ttf_try(f, FONT_FILES[k]);
        if (!f->ttf)
            say_fallback("no TrueType font found (install fonts-dejavu-core, or set "
                         "FASIM_FONT to a .ttf file)");
    }
    if (!f->ttf)
        TTF_Quit();
#else
    say_fallback("built without SDL2_ttf (install libsdl2-ttf-dev and rebuild)");
#endif
    return f;
}

void viz_sdl_font_close(viz_sdl_font *f)
{
    if (!f)
        return;
#ifdef FASIM_HAVE_SDL2_TTF
    if (f->ttf) {
        TTF_CloseFont(f->ttf);
        TTF_Quit();
    }
#endif
    free(f);
}

const char *viz_sdl_font_file(const viz_sdl_font *f)
{
#ifdef FASIM_HAVE_SDL2_TTF
    if (f && f->ttf)
        return f->file;
#endif
    (void)f;
    return NULL;
}

viz_sdl_font_metrics viz_sdl_font_fit(viz_sdl_font *f, int w, int h)
{
    if (!f)
        return bitmap_metrics(w, h);
    if (f->fit_w == w && f->fit_h == h && f->met.line_h > 0)
        return f->met;
#ifdef FASIM_HAVE_SDL2_TTF
    if (f->ttf) {
        /* Down from the size whose lines alone fill the rows (line skip is
         * more than the pixel size) to the first that fits both ways. */
        int px = h / VIZ_SDL_TEXT_ROWS;
        px = px < 8 ? 8 : px > 256 ? 256 : px;
        for (; px >= 8; px--) {
            if (ttf_size(f, px) != 0)
                break;
            if (f->met.cell_w * VIZ_SDL_TEXT_COLS <= w && f->met.line_h * VIZ_SDL_TEXT_ROWS <= h)
                break;
        }
        if (px < 8 || f->met.line_h <= 0)
            ttf_size(f, 8);
        if (f->met.line_h > 0) {
            f->fit_w = w;
            f->fit_h = h;
            return f->met;
        }
        /* SDL2_ttf refused every size: the bitmap font from here on. */
        say_fallback(TTF_GetError());
        TTF_CloseFont(f->ttf);
        TTF_Quit();
        f->ttf = NULL;
    }
#endif
    f->met = bitmap_metrics(w, h);
    f->fit_w = w;
    f->fit_h = h;
    return f->met;
}

int viz_sdl_font_draw(viz_sdl_font *f, SDL_Renderer *r, int x, int y, uint32_t rgb,
                      const char *s, int max_w)
{
#ifdef FASIM_HAVE_SDL2_TTF
    if (f->ttf) {
        const int cw = f->met.cell_w;
        /* Whole characters within max_w, as the bitmap font cuts. */
        size_t n = strlen(s), fit = max_w <= 0 ? 0 : (size_t)((max_w + f->met.unit) / cw);
        if (n > fit)
            n = fit;
        char buf[1024];
        if (n > sizeof buf - 1)
            n = sizeof buf - 1;
        memcpy(buf, s, n);
        buf[n] = 0;
        if (strspn(buf, " ") == n)          /* nothing to draw */
            return (int)n * cw;
        SDL_Color col = { (Uint8)(rgb >> 16), (Uint8)(rgb >> 8), (Uint8)rgb, 255 };
        SDL_Surface *g = TTF_RenderText_Blended(f->ttf, buf, col);
        SDL_Texture *t = g ? SDL_CreateTextureFromSurface(r, g) : NULL;
        if (t) {
            SDL_Rect dst = { x, y - f->top, g->w, g->h };
            SDL_SetTextureBlendMode(t, SDL_BLENDMODE_BLEND);
            SDL_RenderCopy(r, t, NULL, &dst);
            SDL_DestroyTexture(t);
        }
        SDL_FreeSurface(g);
        return (int)n * cw;
    }
#endif
    return viz_sdl_text_clip(r, x, y, f->met.unit > 0 ? f->met.unit : 1, rgb, s, max_w);
}
