/*
 * viz_sdl_draw.c — the SDL view's frame: layout, panels and colours.
 *
 * Layout (all sizes from the text face's metrics, viz_sdl_font_fit: cells
 * of CW x LH pixels, and the unit s, about LH / 10, for borders and gaps):
 *
 *   +-- top bar: the run (algorithm, shape, plan), the step, line, i, j --------+
 *   | HBM tile grids          | heat map of S_ij / P~_ij  | pseudocode          |
 *   |                         |                           |   (current line)    |
 *   |-------------------------+---------------------------+---------------------|
 *   | SRAM buffers, by offset | m_i, l_i, alpha, O_i row  | HBM counters        |
 *   +-- status: what moved this step, a clicked tile; key hints ----------------+
 *
 * Everything is opaque fills and lines, and text: the bitmap font's fills or
 * TrueType glyphs blended over them (viz_sdl_font.h). Nothing depends on
 * time or on the machine's display, so a software renderer gives the same
 * pixels on every run.
 * Block indices are shown 1-based, as the pseudocode counts (for i = 1 ..
 * T_r); element rows and columns 0-based, as the tile descriptions give them.
 */
#include "viz_sdl_draw.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "viz_sdl_font.h"

/* ---- colours (0xRRGGBB) --------------------------------------------------- */

static const viz_sdl_palette LIGHT = {
    .bg = 0xf3f4f6, .panel = 0xffffff, .border = 0xb4bac4, .text = 0x15181d,
    .dim = 0x454b56, .faint = 0x5d6470, .title = 0x0a4f8f, .hilite = 0xffe59a,
    .code_text = 0x000000, .code_num = 0x6e3a00,
    .good = 0x006b4b, .bad = 0xb02a1a, .warn = 0x8a4600,
    .t_none = 0xdfe2e7, .t_read = 0x56b4e9, .t_written = 0x009e73, .t_both = 0x0072b2,
    .t_load = 0xf0e442, .t_store = 0xd55e00, .t_loadstore = 0xe69f00, .t_cur = 0x000000,
    .mark = 0x000000,
    .before = 0x9aa0aa, .after = 0x0072b2, .changed = 0xe69f00, .masked = 0xd3d6dc,
    .masked_line = 0xa3a8b0,
    .s_neg = 0x0072b2, .s_zero = 0xf7f7f7, .s_pos = 0xd55e00,
};

static const viz_sdl_palette DARK = {
    .bg = 0x14161b, .panel = 0x1c1f26, .border = 0x4a505c, .text = 0xe4e7ed,
    .dim = 0xaeb4bf, .faint = 0x959ba7, .title = 0x78b8ff, .hilite = 0x2f4166,
    .code_text = 0xffffff, .code_num = 0xffc04d,
    .good = 0x7ed491, .bad = 0xff8a7e, .warn = 0xffc04d,
    .t_none = 0x2a2e37, .t_read = 0x56b4e9, .t_written = 0x009e73, .t_both = 0x0072b2,
    .t_load = 0xf0e442, .t_store = 0xd55e00, .t_loadstore = 0xe69f00, .t_cur = 0xffffff,
    .mark = 0x000000,
    .before = 0x6b7180, .after = 0x56b4e9, .changed = 0xe69f00, .masked = 0x30333b,
    .masked_line = 0x4a4e58,
    .s_neg = 0x0072b2, .s_zero = 0xeef0f4, .s_pos = 0xd55e00,
};

const viz_sdl_palette *viz_sdl_palette_of(viz_sdl_theme t)
{
    return t == VIZ_SDL_THEME_DARK ? &DARK : &LIGHT;
}

/* ---- drawing context -------------------------------------------------------- */

typedef struct {
    SDL_Renderer *r;
    const viz_sdl_palette *pal;
    viz_sdl_font *font;     /* NULL: the bitmap font at scale s */
    int s;      /* the layout's unit: borders, gaps, markers */
    int cw;     /* character cell width */
    int lh;     /* line height */
    int gh;     /* glyph height: a capital's, from the top of its cell */
    int pad;
    SDL_Rect area;          /* the panel being drawn (ui->text_seen) */
    const viz_sdl_ui *ui;
    FILE *svg;              /* ui->svg: SVG elements instead of drawing */
    int clips;              /* SVG: clip paths so far; > 0: a group is open */
} ctx;

static void set_color(ctx *c, uint32_t rgb)
{
    SDL_SetRenderDrawColor(c->r, (Uint8)(rgb >> 16), (Uint8)(rgb >> 8), (Uint8)rgb, 255);
}

static void fill(ctx *c, int x, int y, int w, int h, uint32_t rgb)
{
    if (w <= 0 || h <= 0)
        return;
    if (c->svg) {
        fprintf(c->svg, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                "fill=\"#%06x\"/>\n", x, y, w, h, (unsigned)(rgb & 0xffffff));
        return;
    }
    SDL_Rect rc = { x, y, w, h };
    set_color(c, rgb);
    SDL_RenderFillRect(c->r, &rc);
}

/* An outline t pixels thick, just inside the rectangle. */
static void outline(ctx *c, int x, int y, int w, int h, int t, uint32_t rgb)
{
    fill(c, x, y, w, t, rgb);
    fill(c, x, y + h - t, w, t, rgb);
    fill(c, x, y, t, h, rgb);
    fill(c, x + w - t, y, t, h, rgb);
}

static void line(ctx *c, int x0, int y0, int x1, int y1, uint32_t rgb)
{
    if (c->svg) {       /* through the pixels' centres, as SDL draws it */
        fprintf(c->svg, "<line x1=\"%d.5\" y1=\"%d.5\" x2=\"%d.5\" y2=\"%d.5\" "
                "stroke=\"#%06x\"/>\n", x0, y0, x1, y1, (unsigned)(rgb & 0xffffff));
        return;
    }
    set_color(c, rgb);
    SDL_RenderDrawLine(c->r, x0, y0, x1, y1);
}

/* A line of text as SVG: its whole characters that fit max_w, stretched to
 * their cells (so that the layout's columns hold in any monospace face),
 * the baseline a capital's height below y. Returns the width taken. */
static int svg_text(ctx *c, int x, int y, int max_w, uint32_t rgb, const char *s)
{
    int n = (int)strlen(s);
    if (n * c->cw > max_w)
        n = max_w / c->cw;
    if (n <= 0)
        return 0;
    fprintf(c->svg, "<text x=\"%d\" y=\"%d\" fill=\"#%06x\" textLength=\"%d\" "
            "lengthAdjust=\"spacingAndGlyphs\">", x,
            y + c->gh, (unsigned)(rgb & 0xffffff), n * c->cw);
    for (int k = 0; k < n; k++) {
        const char ch = s[k];
        if (ch == '<')
            fputs("&lt;", c->svg);
        else if (ch == '>')
            fputs("&gt;", c->svg);
        else if (ch == '&')
            fputs("&amp;", c->svg);
        else
            fputc((unsigned char)ch >= 32 && (unsigned char)ch < 127 ? ch : '?', c->svg);
    }
    fputs("</text>\n", c->svg);
    return n * c->cw;
}

/* No width limit for text(). */
#define NOLIM (1 << 30)

/* printf into a line of text at (x, y), cut to max_w pixels (nothing at all
 * when max_w <= 0: a line already full). Returns the width drawn. */
#if defined(__GNUC__)
__attribute__((format(printf, 6, 7)))
#endif
static int text(ctx *c, int x, int y, int max_w, uint32_t rgb, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (c->ui->text_seen && buf[0])
        c->ui->text_seen(c->ui->text_arg, buf, x, y, max_w, c->area);
    if (max_w <= 0)
        return 0;
    if (c->svg)
        return svg_text(c, x, y, max_w, rgb, buf);
    if (c->font)
        return viz_sdl_font_draw(c->font, c->r, x, y, rgb, buf, max_w);
    return viz_sdl_text_clip(c->r, x, y, c->s, rgb, buf, max_w);
}

/* Monospace: every character advances one cell. */
static int text_w(const ctx *c, const char *s)
{
    return (int)strlen(s) * c->cw;
}

static int wrapped(ctx *c, int x, int y, int w, int max_lines, uint32_t rgb, const char *s);

/* A panel: background, border, a one-line title (each panel's title is
 * written to fit its column at 1280 x 800); returns the area inside. */
static SDL_Rect panel(ctx *c, SDL_Rect a, const char *title, uint32_t title_rgb)
{
    fill(c, a.x, a.y, a.w, a.h, c->pal->panel);
    outline(c, a.x, a.y, a.w, a.h, 1, c->pal->border);
    SDL_Rect in = { a.x + c->pad, a.y + c->pad, a.w - 2 * c->pad, a.h - 2 * c->pad };
    if (title) {
        int n = wrapped(c, in.x, in.y, in.w, 1, title_rgb, title);
        in.y += n * c->lh + c->pad / 2;
        in.h -= n * c->lh + c->pad / 2;
    }
    if (in.w < 0)
        in.w = 0;
    if (in.h < 0)
        in.h = 0;
    return in;
}

/* Draw s broken into lines that fit w pixels, at spaces where possible and at
 * '\n', at most max_lines of them. Returns the lines drawn. */
static int wrapped(ctx *c, int x, int y, int w, int max_lines, uint32_t rgb, const char *s)
{
    int cols = w / c->cw, n = 0;
    if (cols < 8)
        cols = 8;
    while (*s && n < max_lines) {
        const char *nl = strchr(s, '\n');
        int len = nl ? (int)(nl - s) : (int)strlen(s);
        int take = len;
        if (take > cols) {
            take = cols;
            while (take > cols / 2 && s[take] != ' ')
                take--;
            if (s[take] != ' ')
                take = cols;
        }
        char buf[512];
        if (take > (int)sizeof buf - 1)
            take = (int)sizeof buf - 1;
        memcpy(buf, s, (size_t)take);
        buf[take] = 0;
        text(c, x, y + n * c->lh, w, rgb, "%s", buf);
        n++;
        s += take;
        while (*s == ' ')
            s++;
        if (*s == '\n')
            s++;
    }
    if (*s && c->ui->text_seen)     /* lines with no room left: lost to the reader */
        c->ui->text_seen(c->ui->text_arg, s, x, c->area.y + c->area.h, w, c->area);
    return n;
}

/* ---- top and bottom bars ---------------------------------------------------- */

static void draw_top(ctx *c, SDL_Rect a, const viz_model *m, const viz_sdl_ui *ui)
{
    const viz_info *in = viz_model_info(m);
    const viz_state *st = viz_model_state(m);
    fill(c, a.x, a.y, a.w, a.h, c->pal->bg);
    char M[32], plan[160];
    sim_format_bytes(M, sizeof M, in->sh.M);
    int n = snprintf(plan, sizeof plan, "B_r x B_c = %lld x %lld, T_r x T_c = %lld x %lld",
                     (long long)in->plan.Br, (long long)in->plan.Bc, (long long)in->plan.Tr,
                     (long long)in->plan.Tc);
    if (in->plan.softmax_passes == 1)       /* standard attention's plans only */
        snprintf(plan + n, sizeof plan - (size_t)n, ", softmax in 1 pass of B_s = %lld rows",
                 (long long)in->plan.Bs_r);
    else if (in->plan.softmax_passes)
        snprintf(plan + n, sizeof plan - (size_t)n, ", softmax in %d passes",
                 in->plan.softmax_passes);

    /* Line 1: the run. */
    int x = a.x + c->pad, y = a.y + c->pad;
    const int right = a.x + a.w - c->pad;
    x += text(c, x, y, NOLIM, c->pal->title, "fasim view  ");
    x += text(c, x, y, NOLIM, c->pal->text, "%s (%s)", viz_pseudocode_title(in),
              sim_algo_name(in->algo));
    x += text(c, x, y, right - x, c->pal->dim, "   N = %lld, d = %lld, %s, M = %s, %s",
              (long long)in->sh.N, (long long)in->sh.d, sim_dtype_name(in->sh.dtype), M,
              in->sh.causal ? "causal" : "not causal");
    /* The plan ends line 1 when it fits there, else line 2 (which is short
     * but for a refusal). */
    const int plan_here = x + text_w(c, plan) + 3 * c->cw <= right || in->refused;
    if (!plan_here) {       /* line 2 names T_r and T_c (i = 1 of T_r = 3) */
        char *t = strstr(plan, ", T_r x T_c");
        char *rest = t ? strchr(t + 2, ',') : NULL;
        if (t)
            memmove(t, rest ? rest : t + strlen(t), strlen(rest ? rest : t + strlen(t)) + 1);
    }
    if (plan_here)
        text(c, x, y, right - x, c->pal->dim, "   %s", plan);

    /* Line 2: where the run is. */
    y += c->lh;
    x = a.x + c->pad;
    if (in->refused) {
        char need[32];
        sim_format_bytes(need, sizeof need, in->plan.sram_peak);
        text(c, x, y, right - x, c->pal->bad, "PLAN REFUSED: it needs %s of SRAM, M is %s; "
             "nothing runs", need, M);
        return;
    }
    x += text(c, x, y, NOLIM, c->pal->text, "step %llu of %llu", (unsigned long long)(st->step + 1),
              (unsigned long long)in->nsteps);
    x += text(c, x, y, NOLIM, c->pal->warn, "   line %d", st->line);
    if (st->i >= 0)
        x += text(c, x, y, right - x, c->pal->text, "   i = %lld of T_r = %lld",
                  (long long)(st->i + 1), (long long)in->plan.Tr);
    if (st->j >= 0)
        x += text(c, x, y, right - x, c->pal->text, "   j = %lld of T_c = %lld",
                  (long long)(st->j + 1), (long long)in->plan.Tc);
    if (st->pass)
        x += text(c, x, y, right - x, c->pal->warn, "   pass %d of 3 (%s)", st->pass,
                  st->pass == 1 ? "row max" : st->pass == 2 ? "row sum" : "normalise");
    if (ui->interactive)
        x += text(c, x, y, right - x, ui->playing ? c->pal->good : c->pal->dim, "   [%s, %g steps/s]",
                  ui->playing ? "playing" : "paused", ui->speed);
    if (!in->computed)
        x += text(c, x, y, right - x, c->pal->dim, "   count-only: no statistics");
    if (!plan_here) {
        char *soft = strstr(plan, ", softmax");     /* the window's play state takes room */
        if (soft && x + text_w(c, plan) + 3 * c->cw > right)
            *soft = 0;
        text(c, x, y, right - x, c->pal->dim, "   %s", plan);
    }
}

/* This step's transfers in at most maxc characters: as many as fit, then
 * "and 9 more (18 KiB)" for the rest. */
static void describe_xfers(const viz_model *m, char *buf, size_t len, int maxc)
{
    const viz_state *st = viz_model_state(m);
    const viz_info *in = viz_model_info(m);
    size_t n = 0;
    buf[0] = 0;
    if (st->nxfer == 0) {
        snprintf(buf, len, "this step: no transfer between HBM and SRAM");
        return;
    }
    n += (size_t)snprintf(buf, len, "this step:");
    int k;
    for (k = 0; k < st->nxfer && n < len; k++) {
        const viz_transfer *x = &st->xfer[k];
        const viz_tensor_info *ti = &in->tensor[x->tensor];
        char where[96];
        if (ti->cols > 1 && ti->cols == in->sh.N)
            snprintf(where, sizeof where, "%s rows %lld-%lld cols %lld-%lld", ti->name,
                     (long long)x->r0, (long long)(x->r0 + x->rows - 1), (long long)x->c0,
                     (long long)(x->c0 + x->cols - 1));
        else
            snprintf(where, sizeof where, "%s rows %lld-%lld", ti->name, (long long)x->r0,
                     (long long)(x->r0 + x->rows - 1));
        char b[32], item[192];
        sim_format_bytes(b, sizeof b, x->bytes);
        if (x->kind == SIM_EV_LOAD)
            snprintf(item, sizeof item, "%s load %s -> %s (%s)", k ? ";" : "", where, x->buf, b);
        else
            snprintf(item, sizeof item, "%s store %s -> %s (%s)", k ? ";" : "", x->buf, where, b);
        /* Room for this one and, unless it is the last, the count after it. */
        const int tail = k + 1 < st->nxfer ? 32 : 0;
        if ((int)(n + strlen(item)) + tail > maxc)
            break;
        n += (size_t)snprintf(buf + n, len - n, "%s", item);
    }
    if (k < st->nxfer && n < len) {
        uint64_t rest = 0;
        for (int q = k; q < st->nxfer; q++)
            rest += st->xfer[q].bytes;
        char b[32];
        sim_format_bytes(b, sizeof b, rest);
        snprintf(buf + n, len - n, "%s and %d more (%s)", k ? ";" : "", st->nxfer - k, b);
    }
}

/* The bar at the bottom: for a warp-specialised loop order (FA3) first who
 * in its thread block does what at this step (sim_loop.pipeline, the
 * terminal view's PIPELINE panel), a line each; then what moved at this
 * step (or the prompt, or a status) and the keys or the inputs. */
static void draw_bottom(ctx *c, SDL_Rect a, const viz_model *m, const viz_sdl_ui *ui,
                        const sim_pipe_row *pipe, int npipe)
{
    fill(c, a.x, a.y, a.w, a.h, c->pal->bg);
    line(c, a.x, a.y, a.x + a.w - 1, a.y, c->pal->border);
    int x = a.x + c->pad, y = a.y + c->pad, w = a.w - 2 * c->pad;
    if (npipe > 0) {
        text(c, x, y, w, c->pal->title, "pipeline: who does what at this step, in FA3's "
             "order (time: fasim --gpu h100 --algo fa3 --timeline -)");
        y += c->lh;
        int lw = 0;
        for (int k = 0; k < npipe; k++)
            if (text_w(c, pipe[k].who) > lw)
                lw = text_w(c, pipe[k].who);
        lw += 2 * c->cw;
        for (int k = 0; k < npipe; k++, y += c->lh) {
            text(c, x + 2 * c->cw, y, lw, c->pal->title, "%s", pipe[k].who);
            text(c, x + 2 * c->cw + lw, y, w - 2 * c->cw - lw, c->pal->text, "%s",
                 pipe[k].what);
        }
    }
    if (ui->prompt) {
        text(c, x, y, w, c->pal->warn, "%s", ui->prompt);
    } else if (ui->status) {
        text(c, x, y, w, c->pal->text, "%s", ui->status);
    } else if (!viz_model_info(m)->refused) {
        char buf[1024];
        describe_xfers(m, buf, sizeof buf, w / c->cw);
        text(c, x, y, w, c->pal->text, "%s", buf);
    }
    y += c->lh;
    if (ui->interactive)
        text(c, x, y, w, c->pal->dim, "space play/pause  n/b step  +/- speed  g go to step  "
             "a algorithm  c causal  r restart  ? help  q quit  click a tile");
    else
        text(c, x, y, w, c->pal->dim, "inputs: %s; block indices i, j count from 1 as in "
             "the pseudocode, rows and columns from 0", ui->inputs ? ui->inputs : "seeded");
}

/* ---- tile grids ---------------------------------------------------------------- */

static uint32_t mark_color(const ctx *c, unsigned mk)
{
    if ((mk & VIZ_TILE_LOADING) && (mk & VIZ_TILE_STORING))
        return c->pal->t_loadstore;
    if (mk & VIZ_TILE_LOADING)
        return c->pal->t_load;
    if (mk & VIZ_TILE_STORING)
        return c->pal->t_store;
    if ((mk & VIZ_TILE_READ) && (mk & VIZ_TILE_WRITTEN))
        return c->pal->t_both;
    if (mk & VIZ_TILE_READ)
        return c->pal->t_read;
    if (mk & VIZ_TILE_WRITTEN)
        return c->pal->t_written;
    return c->pal->t_none;
}

/* The marks that tell loading and storing apart without their colours: a
 * square in the top-left corner of a tile being loaded, in the bottom-right
 * corner of one being stored (both for both), a third of the smaller side;
 * none on cells too small to show one. */
static void state_marks(ctx *c, int x, int y, int w, int h, unsigned mk)
{
    int q = (w < h ? w : h) / 3;
    if (q < 2)
        return;
    if (q > c->cw)
        q = c->cw;
    if (mk & VIZ_TILE_LOADING)
        fill(c, x, y, q, q, c->pal->mark);
    if (mk & VIZ_TILE_STORING)
        fill(c, x + w - q, y + h - q, q, q, c->pal->mark);
}

/* Pixel span [*p0, *p1) of cell k of `cells` cells over `len` pixels. */
static void span(int origin, int len, int64_t cells, int64_t k, int *p0, int *p1)
{
    *p0 = origin + (int)((int64_t)len * k / cells);
    *p1 = origin + (int)((int64_t)len * (k + 1) / cells);
}

/* One axis of a tile grid on screen: n elements cut in tiles of `tile`
 * (grid of them, the last may be partial) over len pixels from origin.
 * With at least 2 pixels per tile, every tile is a cell of its own, as tall
 * as its share of the elements (a partial last tile is drawn shorter).
 * Otherwise len / 2 equal cells each show the tiles viz_axis_cell assigns
 * them (several per cell, the marks OR-ed). */
typedef struct {
    int origin, len;
    int64_t n, tile, grid, cells;
    int per_tile;
} axis;

static axis axis_make(int origin, int len, int64_t n, int64_t tile, int64_t grid)
{
    axis x = { origin, len, n, tile, grid, grid, 1 };
    if (grid > len / 2) {
        x.per_tile = 0;
        x.cells = len / 2 > 1 ? len / 2 : 1;
    }
    return x;
}

/* Cell k: its pixels [*p0, *p1) and its tiles [*t0, *t1). */
static void axis_cell(const axis *x, int64_t k, int *p0, int *p1, int64_t *t0, int64_t *t1)
{
    if (x->per_tile) {
        int64_t e0 = k * x->tile, e1 = e0 + x->tile < x->n ? e0 + x->tile : x->n;
        *p0 = x->origin + (int)((int64_t)x->len * e0 / x->n);
        *p1 = x->origin + (int)((int64_t)x->len * e1 / x->n);
        *t0 = k;
        *t1 = k + 1;
    } else {
        span(x->origin, x->len, x->cells, k, p0, p1);
        viz_axis_cell(x->n, x->tile, x->cells, k, t0, t1);
    }
}

/* The first cell showing tile t. */
static int64_t axis_cell_of_tile(const axis *x, int64_t t)
{
    if (x->per_tile)
        return t;
    int64_t lo = 0, hi = x->cells - 1;
    while (lo < hi) {           /* the first cell whose tiles end after t */
        int64_t mid = (lo + hi) / 2, t0, t1;
        viz_axis_cell(x->n, x->tile, x->cells, mid, &t0, &t1);
        if (t1 <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The cell holding pixel p (origin <= p < origin + len). */
static int64_t axis_cell_at(const axis *x, int p)
{
    if (!x->per_tile)           /* span(): k = ceil((p - origin + 1) cells / len) - 1 */
        return (((int64_t)(p - x->origin) + 1) * x->cells - 1) / x->len;
    int64_t lo = 0, hi = x->cells - 1;
    while (lo < hi) {           /* the last cell starting at or before p */
        int64_t mid = (lo + hi + 1) / 2, t0, t1;
        int p0, p1;
        axis_cell(x, mid, &p0, &p1, &t0, &t1);
        if (p0 <= p)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The tiles the loop is working on at this step (the current block row i,
 * block column j), outlined on the grids: -1 when none. */
static void draw_grid(ctx *c, const viz_model *m, sim_tensor t, SDL_Rect a,
                      viz_sdl_grid_area *out)
{
    const viz_tensor_info *ti = &viz_model_info(m)->tensor[t];
    if (a.w < 2 || a.h < 2 || ti->grid_rows < 1 || ti->grid_cols < 1)
        return;
    const axis ay = axis_make(a.y, a.h, ti->rows, ti->tile_rows, ti->grid_rows);
    const axis ax = axis_make(a.x, a.w, ti->cols, ti->tile_cols, ti->grid_cols);
    out->present = 1;
    out->area = a;
    out->cells_r = ay.cells;
    out->cells_c = ax.cells;
    fill(c, a.x, a.y, a.w, a.h, c->pal->panel);
    for (int64_t y = 0; y < ay.cells; y++) {
        int64_t r0, r1;
        int py0, py1;
        axis_cell(&ay, y, &py0, &py1, &r0, &r1);
        int gy = py1 - py0 >= 5 ? 1 : 0;    /* a gap shows the tile boundaries */
        for (int64_t x = 0; x < ax.cells; x++) {
            int64_t c0, c1;
            int px0, px1;
            axis_cell(&ax, x, &px0, &px1, &c0, &c1);
            int gx = px1 - px0 >= 5 ? 1 : 0;
            unsigned mk = viz_tile_range_mark(m, t, r0, r1, c0, c1);
            fill(c, px0, py0, px1 - px0 - gx, py1 - py0 - gy, mark_color(c, mk));
            state_marks(c, px0, py0, px1 - px0 - gx, py1 - py0 - gy, mk);
        }
    }
    int64_t tr, tc;
    if (viz_tile_current(m, t, &tr, &tc)) {
        int py0, py1, px0, px1;
        int64_t u0, u1;
        axis_cell(&ay, axis_cell_of_tile(&ay, tr), &py0, &py1, &u0, &u1);
        axis_cell(&ax, axis_cell_of_tile(&ax, tc), &px0, &px1, &u0, &u1);
        int th = c->s;
        outline(c, px0 - th, py0 - th, px1 - px0 + 2 * th, py1 - py0 + 2 * th, th, c->pal->t_cur);
    }
}

/* "2r 1w": a tile read twice and written once so far; "2r", "1w"; "" when
 * untouched. Two lines ("2r" above "1w") when lines == 2. */
static void count_label(char *a, char *b, size_t len, uint32_t r, uint32_t w, int lines)
{
    char rs[16] = "", ws[16] = "";
    if (r)
        snprintf(rs, sizeof rs, "%ur", (unsigned)r);
    if (w)
        snprintf(ws, sizeof ws, "%uw", (unsigned)w);
    b[0] = 0;
    if (lines == 2) {
        snprintf(a, len, "%s", r ? rs : ws);
        if (r && w)
            snprintf(b, len, "%s", ws);
    } else {
        snprintf(a, len, "%s%s%s", rs, r && w ? " " : "", ws);
    }
}

/* The move counts over grid area a of tensor t: a label on each tile, or,
 * where a tile is too small for one, on each group of gr x gc tiles showing
 * the busiest of them (viz_tile_range_counts). The label is as wide as the
 * run's largest counts need (viz_tensor_info.max_reads, max_writes), on
 * two lines when one is too wide. Returns the most tiles a label stands
 * for, or 0 when the strip is too narrow for any label. */
static int64_t draw_counts(ctx *c, const viz_model *m, sim_tensor t, SDL_Rect a)
{
    const viz_tensor_info *ti = &viz_model_info(m)->tensor[t];
    char l1[32], l2[32];
    int lines = 1;
    count_label(l1, l2, sizeof l1, ti->max_reads, ti->max_writes, 1);
    int bw = text_w(c, l1) + 2 * c->s;
    if (bw > a.w) {
        lines = 2;
        count_label(l1, l2, sizeof l1, ti->max_reads, ti->max_writes, 2);
        bw = (text_w(c, l1) > text_w(c, l2) ? text_w(c, l1) : text_w(c, l2)) + 2 * c->s;
    }
    const int bh = lines * c->lh;
    if (bw > a.w || bh > a.h || ti->rows < 1 || ti->cols < 1)
        return 0;
    /* Tiles per label along each axis: enough tiles to hold the box. */
    const double th = (double)a.h * (double)ti->tile_rows / (double)ti->rows;
    const double tw = (double)a.w * (double)ti->tile_cols / (double)ti->cols;
    const int64_t gr = (int64_t)ceil((double)bh / th), gc = (int64_t)ceil((double)bw / tw);
    for (int64_t r0 = 0; r0 < ti->grid_rows; r0 += gr)
        for (int64_t c0 = 0; c0 < ti->grid_cols; c0 += gc) {
            uint32_t nr, nw;
            viz_tile_range_counts(m, t, r0, r0 + gr, c0, c0 + gc, &nr, &nw);
            if (!nr && !nw)
                continue;
            const int64_t e0 = r0 * ti->tile_rows, f0 = c0 * ti->tile_cols;
            int64_t e1 = (r0 + gr) * ti->tile_rows, f1 = (c0 + gc) * ti->tile_cols;
            e1 = e1 < ti->rows ? e1 : ti->rows;
            f1 = f1 < ti->cols ? f1 : ti->cols;
            int y0 = a.y + (int)((int64_t)a.h * e0 / ti->rows);
            int y1 = a.y + (int)((int64_t)a.h * e1 / ti->rows);
            int x0 = a.x + (int)((int64_t)a.w * f0 / ti->cols);
            int x1 = a.x + (int)((int64_t)a.w * f1 / ti->cols);
            /* Right-aligned: the state's colour stays in sight on the left. */
            int bx = x1 - bw - (x1 - x0 >= bw + 2 * c->s ? c->s : 0), by = (y0 + y1 - bh) / 2;
            bx = bx + bw > a.x + a.w ? a.x + a.w - bw : bx < a.x ? a.x : bx;
            by = by + bh > a.y + a.h ? a.y + a.h - bh : by < a.y ? a.y : by;
            count_label(l1, l2, sizeof l1, nr, nw, lines);
            fill(c, bx, by, bw, bh, c->pal->panel);
            text(c, bx + c->s, by + (c->lh - c->gh) / 2, bw - c->s, c->pal->text, "%s", l1);
            if (l2[0])
                text(c, bx + c->s, by + c->lh + (c->lh - c->gh) / 2, bw - c->s, c->pal->text,
                     "%s", l2);
        }
    return gr * gc;
}

static void legend_item(ctx *c, int *x, int y, uint32_t rgb, int outline_only,
                        unsigned mk, const char *label)
{
    int b = c->cw + c->s;
    if (outline_only)
        outline(c, *x, y, b, b, c->s, rgb);
    else
        fill(c, *x, y, b, b, rgb);
    state_marks(c, *x, y, b, b, mk);
    *x += b + c->cw / 2;
    *x += text(c, *x, y + c->s, NOLIM, c->pal->dim, "%s", label) + c->cw;
}

static void draw_tiles(ctx *c, SDL_Rect a, const viz_model *m, viz_sdl_layout *lay)
{
    const viz_info *in = viz_model_info(m);
    char title[160];
    const sim_loop *l = viz_loop(in);
    if (l && (l->flags & SIM_LOOP_TILE_S))
        snprintf(title, sizeof title, "HBM tiles: T_r x T_c = %lld x %lld",
                 (long long)in->plan.Tr, (long long)in->plan.Tc);
    else
        snprintf(title, sizeof title, "HBM tiles: T_r = %lld, T_c = %lld blocks",
                 (long long)in->plan.Tr, (long long)in->plan.Tc);
    SDL_Rect r = panel(c, a, title, c->pal->title);

    /* Legend: three lines at the bottom (the third says how the counts
     * read, once the grids are drawn). */
    int ly = r.y + r.h - 3 * c->lh;
    int lx = r.x;
    legend_item(c, &lx, ly, c->pal->t_none, 0, 0, "untouched");
    legend_item(c, &lx, ly, c->pal->t_read, 0, 0, "read");
    legend_item(c, &lx, ly, c->pal->t_written, 0, 0, "written");
    legend_item(c, &lx, ly, c->pal->t_both, 0, 0, "both");
    lx = r.x;
    legend_item(c, &lx, ly + c->lh, c->pal->t_load, 0, VIZ_TILE_LOADING, "loading");
    legend_item(c, &lx, ly + c->lh, c->pal->t_store, 0, VIZ_TILE_STORING, "storing");
    legend_item(c, &lx, ly + c->lh, c->pal->t_cur, 1, 0, "block i / j");

    /* Strips: (N, d) tensors 4 units wide, (N, 1) ones 2; (N, N) squares.
     * With squares (naive) a unit is half a character and every grid is
     * as tall as the squares, so that row block i lines up across Q, O, S
     * and P. */
    static const sim_tensor order[] = { SIM_Q, SIM_K, SIM_V, SIM_O, SIM_S, SIM_P,
                                        SIM_m, SIM_l, SIM_L };
    int top = r.y + c->lh, h = r.h - 4 * c->lh - c->pad;
    if (h < 4)
        return;
    int units = 0, nsq = 0, n = 0;
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        const viz_tensor_info *ti = &in->tensor[order[k]];
        if (!ti->present)
            continue;
        n++;
        if (ti->cols == in->sh.N && ti->cols > 1 && (order[k] == SIM_S || order[k] == SIM_P))
            nsq++;
        else
            units += ti->cols > 1 ? 4 : 2;
    }
    if (n == 0)
        return;
    int gap = c->cw;
    int avail = r.w - gap * (n - 1);
    int unit = c->cw / 2;
    int side = 0;
    if (nsq) {
        side = (avail - units * unit) / nsq;
        if (side > h)
            side = h;
        if (side < 0)
            side = 0;
        h = side;
    } else {
        unit = avail / (units ? units : 1);
        if (unit > 3 * c->cw)
            unit = 3 * c->cw;               /* a strip wider than 12 characters says nothing more */
    }
    int x = r.x, narrow = 0;
    int64_t group = 1;
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        sim_tensor t = order[k];
        const viz_tensor_info *ti = &in->tensor[t];
        if (!ti->present)
            continue;
        int sq = ti->cols == in->sh.N && ti->cols > 1 && (t == SIM_S || t == SIM_P);
        int w = sq ? side : (ti->cols > 1 ? 4 : 2) * unit;
        int gh = sq ? side : h;
        if (w < 2)
            continue;
        int tw = text_w(c, ti->name);
        text(c, x + (w - tw) / 2, r.y, NOLIM, c->pal->text, "%s", ti->name);
        SDL_Rect g = { x, top + c->s, w, gh - c->s };
        draw_grid(c, m, t, g, &lay->grid[t]);
        const int64_t per = lay->grid[t].present ? draw_counts(c, m, t, g) : 1;
        if (per == 0)
            narrow = 1;
        group = per > group ? per : group;
        x += w + gap;
    }
    /* How to read the counts, and where they stand for several tiles or
     * for none (a strip narrower than "1r"). */
    if (group > 1)
        text(c, r.x, ly + 2 * c->lh, r.w, c->pal->dim, "2r 1w: busiest of <= %lld tiles",
             (long long)group);
    else
        text(c, r.x, ly + 2 * c->lh, r.w, c->pal->dim, "2r 1w: read 2x, written 1x%s",
             narrow ? ", if wide" : "");
}

/* ---- SRAM ---------------------------------------------------------------------- */

static uint32_t buf_color(const char *name)
{
    switch (name[0]) {
    case 'Q': return 0x5b8def;
    case 'K': return 0x9b6bd6;
    case 'V': return 0xc267a8;
    case 'S': return 0xd9894a;
    case 'P': return 0xd9a84a;
    case 'O': return 0x4fb38a;
    case 'm': return 0x8fa85a;
    case 'l': return 0x6fa8a0;
    default:  return 0x6f7c8f;
    }
}

static void draw_sram(ctx *c, SDL_Rect a, const viz_model *m)
{
    const viz_info *in = viz_model_info(m);
    const viz_state *st = viz_model_state(m);
    char used[32], M[32], peak[32], title[160];
    sim_format_bytes(used, sizeof used, st->sram_used);
    sim_format_bytes(M, sizeof M, in->sh.M);
    sim_format_bytes(peak, sizeof peak, in->sram_peak);
    int n = snprintf(title, sizeof title, "SRAM %s of M = %s (%.0f%%)", used, M,
                     in->sh.M ? 100.0 * (double)st->sram_used / (double)in->sh.M : 0.0);
    char pk[48];
    snprintf(pk, sizeof pk, ", peak %s", peak);
    if (text_w(c, title) + text_w(c, pk) <= a.w - 2 * c->pad)
        snprintf(title + n, sizeof title - (size_t)n, "%s", pk);
    SDL_Rect r = panel(c, a, title, c->pal->title);
    if (r.h < 2 * c->lh)
        return;

    /* The bar: M bytes across (or the end of the last buffer, if past M). */
    uint64_t total = in->sh.M;
    for (int k = 0; k < st->nbuf; k++)
        if (st->buf[k].offset + st->buf[k].bytes > total)
            total = st->buf[k].offset + st->buf[k].bytes;
    if (total == 0)
        total = 1;
    int bh = c->lh + 2 * c->pad;
    fill(c, r.x, r.y, r.w, bh, c->pal->t_none);
    for (int k = 0; k < st->nbuf; k++) {
        const viz_sram_entry *b = &st->buf[k];
        int x0 = r.x + (int)((double)r.w * (double)b->offset / (double)total);
        int x1 = r.x + (int)((double)r.w * (double)(b->offset + b->bytes) / (double)total);
        if (x1 <= x0)
            x1 = x0 + 1;
        uint32_t col = buf_color(b->name);
        if (b->flags & VIZ_BUF_PENDING)
            col = c->pal->faint;
        if (b->flags & VIZ_BUF_REFUSED)
            col = c->pal->bad;
        fill(c, x0, r.y, x1 - x0, bh, col);
        if (b->flags & (VIZ_BUF_LOADED | VIZ_BUF_STORED))
            outline(c, x0, r.y, x1 - x0, bh, c->s,
                    (b->flags & VIZ_BUF_STORED) ? c->pal->t_store : c->pal->t_load);
        line(c, x1 - 1, r.y, x1 - 1, r.y + bh - 1, c->pal->panel);
        if (text_w(c, b->name) + c->cw / 2 <= x1 - x0)
            text(c, x0 + c->s * 2, r.y + (bh - c->gh) / 2, x1 - x0, 0x101010, "%s",
                 b->name);
    }
    if (total > in->sh.M) {       /* where M ends */
        int xm = r.x + (int)((double)r.w * (double)in->sh.M / (double)total);
        fill(c, xm - c->s, r.y - c->s, 2 * c->s, bh + 2 * c->s, c->pal->bad);
    }

    /* The list, in two columns when it is long. */
    int y = r.y + bh + c->pad;
    int rows = (r.y + r.h - y) / c->lh;
    if (rows < 1)
        return;
    int cols = st->nbuf > rows ? 2 : 1;
    int colw = r.w / cols;
    for (int k = 0; k < st->nbuf && k < rows * cols; k++) {
        const viz_sram_entry *b = &st->buf[k];
        int x = r.x + (k / rows) * colw, yy = y + (k % rows) * c->lh;
        char bytes[32];
        sim_format_bytes(bytes, sizeof bytes, b->bytes);
        int tx = x + c->cw + c->cw / 2;       /* after the buffer's colour */
        char shape[48];
        if (b->cols > 1)
            snprintf(shape, sizeof shape, "%lld x %lld", (long long)b->rows, (long long)b->cols);
        else
            snprintf(shape, sizeof shape, "%lld", (long long)b->rows);
        const char *flag = NULL;
        uint32_t fc = c->pal->dim;
        if (b->flags & VIZ_BUF_REFUSED) {
            flag = " does not fit";
            fc = c->pal->bad;
        } else if (b->flags & VIZ_BUF_PENDING) {
            flag = " not reached";
        } else if (b->flags & VIZ_BUF_OVER) {
            flag = " past M";
            fc = c->pal->bad;
        } else if ((b->flags & VIZ_BUF_LOADED) && (b->flags & VIZ_BUF_STORED)) {
            flag = " loaded+stored";
            fc = c->pal->warn;
        } else if (b->flags & VIZ_BUF_LOADED) {
            flag = " loaded";
            fc = c->pal->warn;
        } else if (b->flags & VIZ_BUF_STORED) {
            flag = " stored";
            fc = c->pal->warn;
        }
        /* Name, shape, element size and bytes; without the element size,
         * then the shape, where a column is narrow: the bytes stay. */
        char item[3][128];
        snprintf(item[0], sizeof item[0], "%-6s %-9s %dB %8s", b->name, shape, b->elem_bytes,
                 bytes);
        snprintf(item[1], sizeof item[1], "%-6s %-7s %s", b->name, shape, bytes);
        snprintf(item[2], sizeof item[2], "%s %s", b->name, bytes);
        int room = (x + colw - tx) / c->cw - (flag ? (int)strlen(flag) : 0);
        int f = 0;
        while (f < 2 && (int)strlen(item[f]) > room)
            f++;
        if ((int)strlen(item[f]) > room && flag && fc == c->pal->warn) {
            /* "in": loaded into SRAM this step, "out": stored from it */
            flag = (b->flags & VIZ_BUF_LOADED) && (b->flags & VIZ_BUF_STORED) ? " in+out"
                 : (b->flags & VIZ_BUF_LOADED) ? " in" : " out";
        }
        if ((int)strlen(item[f]) <= room)
            fill(c, x, yy + c->s, c->cw, c->gh, buf_color(b->name));
        else
            tx = x;                             /* the text needs the colour's room */
        tx += text(c, tx, yy, x + colw - tx, c->pal->text, "%s", item[f]);
        if (flag)
            text(c, tx, yy, x + colw - tx, fc, "%s", flag);
    }
}

/* ---- heat map -------------------------------------------------------------------- */

static uint32_t lerp_rgb(uint32_t a, uint32_t b, double t)
{
    uint32_t out = 0;
    for (int sh = 16; sh >= 0; sh -= 8) {
        double ca = (double)((a >> sh) & 255u), cb = (double)((b >> sh) & 255u);
        int v = (int)lround(ca + (cb - ca) * t);
        out |= (uint32_t)(v < 0 ? 0 : v > 255 ? 255 : v) << sh;
    }
    return out;
}

/* Scores: diverging around 0 (blue negative, red positive), t in [-1, 1]. */
static uint32_t color_s(const ctx *c, double t)
{
    if (t < 0)
        return lerp_rgb(c->pal->s_zero, c->pal->s_neg, t < -1 ? 1 : -t);
    return lerp_rgb(c->pal->s_zero, c->pal->s_pos, t > 1 ? 1 : t);
}

/* Probabilities: dark to bright (a five-stop ramp), t in [0, 1]. */
static uint32_t color_p(double t)
{
    static const uint32_t stop[5] = { 0x0d0e1c, 0x3e2172, 0x9e2f6c, 0xea7439, 0xfbe46c };
    if (!(t > 0))
        return stop[0];
    if (t >= 1)
        return stop[4];
    double u = t * 4;
    int k = (int)u;
    return lerp_rgb(stop[k], stop[k + 1], u - k);
}

static uint32_t heat_color(const ctx *c, const viz_sdl_heat_view *v, float x)
{
    if (x == -INFINITY)
        return c->pal->masked;
    if (v->kind == VIZ_SDL_HEAT_S) {
        double a = fabs((double)v->lo) > fabs((double)v->hi) ? fabs((double)v->lo)
                                                             : fabs((double)v->hi);
        return color_s(c, a > 0 ? (double)x / a : 0);
    }
    return color_p(v->hi > 0 ? (double)x / (double)v->hi : 0);
}

static void draw_colorbar(ctx *c, int x, int y, int w, const viz_sdl_heat_view *v)
{
    int bh = c->lh - 2 * c->s;
    for (int k = 0; k < w; k++) {
        double t = w > 1 ? (double)k / (double)(w - 1) : 0;
        uint32_t col = v->kind == VIZ_SDL_HEAT_S ? color_s(c, 2 * t - 1) : color_p(t);
        fill(c, x + k, y, 1, bh, col);
    }
    double a = fabs((double)v->lo) > fabs((double)v->hi) ? fabs((double)v->lo)
                                                         : fabs((double)v->hi);
    char lo[32], hi[32];
    if (v->kind == VIZ_SDL_HEAT_S) {
        snprintf(lo, sizeof lo, "%.3g", -a);
        snprintf(hi, sizeof hi, "%.3g", a);
    } else {
        snprintf(lo, sizeof lo, "0");
        snprintf(hi, sizeof hi, "%.3g", (double)v->hi);
    }
    int ty = y + bh + c->s;
    text(c, x, ty, NOLIM, c->pal->dim, "%s", lo);
    if (v->kind == VIZ_SDL_HEAT_S && text_w(c, lo) + text_w(c, hi) + 3 * c->cw <= w)
        text(c, x + w / 2 - c->cw / 2, ty, NOLIM, c->pal->dim, "0");
    text(c, x + w - text_w(c, hi), ty, NOLIM, c->pal->dim, "%s", hi);
}

static void draw_heat(ctx *c, SDL_Rect a, const viz_model *m, viz_sdl_heat *heat)
{
    const viz_info *in = viz_model_info(m);
    const viz_state *st = viz_model_state(m);
    const viz_sdl_heat_view *v = heat ? viz_sdl_heat_get(heat, m) : NULL;
    char title[256];
    if (v && v->kind != VIZ_SDL_HEAT_NONE) {
        snprintf(title, sizeof title, "%s", v->title);
        if (st->i >= 0 && st->j >= 0) {    /* when it fits: the top bar has them too */
            char ij[64];
            snprintf(ij, sizeof ij, "   i = %lld, j = %lld", (long long)(st->i + 1),
                     (long long)(st->j + 1));
            if (text_w(c, title) + text_w(c, ij) <= a.w - 2 * c->pad)
                strcat(title, ij);
        }
    } else {
        snprintf(title, sizeof title, "score tile S_ij / P~_ij");
    }
    SDL_Rect r = panel(c, a, title, c->pal->title);
    if (in->refused) {
        int n = wrapped(c, r.x, r.y, r.w, 2, c->pal->bad, "The plan does not fit in M, so "
                        "nothing runs. The simulator says:");
        wrapped(c, r.x, r.y + (n + 1) * c->lh, r.w, (r.h / c->lh) - n - 1, c->pal->text, in->refusal);
        return;
    }
    if (!v || v->kind == VIZ_SDL_HEAT_NONE) {
        wrapped(c, r.x, r.y + c->lh, r.w, 4, c->pal->dim,
                v ? v->note : "heat map off: out of memory");
        return;
    }
    /* Subtitle: where the tile is and what its values are. */
    char masked[64] = "";
    if (v->nmasked)
        snprintf(masked, sizeof masked, ", %lld masked (col > row)", (long long)v->nmasked);
    char sub[256];
    snprintf(sub, sizeof sub, "rows %lld-%lld, cols %lld-%lld (%d x %d)%s",
             (long long)v->row0, (long long)(v->row0 + v->rows - 1), (long long)v->col0,
             (long long)(v->col0 + v->cols - 1), v->rows, v->cols, masked);
    int nl = wrapped(c, r.x, r.y, r.w, 3, c->pal->dim, sub);
    nl += wrapped(c, r.x, r.y + nl * c->lh, r.w, 4, c->pal->dim, v->note);
    int top = r.y + nl * c->lh + c->pad;
    /* The colour bar below, and beside it (or under it, in a narrow panel)
     * the rows where m_i rose and the check of the row maxima. */
    const int cbw = r.w * 2 / 5 > 10 * c->cw ? r.w * 2 / 5 : 10 * c->cw;
    const int beside = r.w - cbw - 4 * c->cw >= 20 * c->cw;
    int bottom = r.y + r.h - (beside ? 2 : 4) * c->lh - c->pad;
    int left = r.x + 2 * c->cw;                     /* room for row ticks */
    int aw = r.x + r.w - left, ah = bottom - top;
    if (aw < 4 || ah < 4)
        return;
    /* Square cells of at most 24 s pixels when every element gets at least
     * a pixel, so that the causal mask's diagonal is at 45 degrees; else
     * each of min(rows, ah) x min(cols, aw) cells shows the nearest element,
     * in the tile's aspect. A tile longer than 4:1 (192 x 16) would be a
     * sliver: its cells may be 2:1. */
    const int stretch = (v->rows > 4 * v->cols || v->cols > 4 * v->rows) ? 2 : 1;
    int64_t nr = v->rows, nc = v->cols;
    int gw, gh;
    int cell_h = (int)(ah / nr), cell_w = (int)(aw / nc);
    if (cell_h >= 1 && cell_w >= 1) {
        if (cell_h > 24 * c->s)
            cell_h = 24 * c->s;
        if (cell_w > 24 * c->s)
            cell_w = 24 * c->s;
        if (cell_w > stretch * cell_h)
            cell_w = stretch * cell_h;
        if (cell_h > stretch * cell_w)
            cell_h = stretch * cell_w;
        gw = cell_w * (int)nc;
        gh = cell_h * (int)nr;
    } else {
        double asp = (double)v->cols / (double)v->rows;     /* width / height */
        gw = aw;
        gh = ah;
        if ((double)aw / (double)ah > stretch * asp)
            gw = (int)(ah * asp * stretch);
        else if ((double)aw / (double)ah < asp / stretch)
            gh = (int)(aw / asp * stretch);
        gw = gw < 1 ? 1 : gw;
        gh = gh < 1 ? 1 : gh;
        nr = v->rows < gh ? v->rows : gh;
        nc = v->cols < gw ? v->cols : gw;
    }
    int gap = (gw / nc >= 6 && gh / nr >= 6) ? 1 : 0;
    fill(c, left, top, gw, gh, c->pal->panel);
    for (int64_t y = 0; y < nr; y++) {
        int py0, py1;
        span(top, gh, nr, y, &py0, &py1);
        int64_t er = y * v->rows / nr;
        for (int64_t x = 0; x < nc; x++) {
            int px0, px1;
            span(left, gw, nc, x, &px0, &px1);
            int64_t ec = x * v->cols / nc;
            float val = v->v[er * v->cols + ec];
            const int masked_here = v->causal && v->col0 + ec > v->row0 + er;
            fill(c, px0, py0, px1 - px0 - gap, py1 - py0 - gap,
                 masked_here ? c->pal->masked : heat_color(c, v, val));
            if (masked_here && px1 - px0 >= 6)          /* masked: a diagonal */
                line(c, px0 + 1, py0 + 1, px1 - gap - 2, py1 - gap - 2, c->pal->masked_line);
        }
    }
    /* Row ticks: the rows whose m_i rose at this step (the statistics). */
    const viz_stats *sx = &st->stats;
    if (sx->available && sx->shown && sx->row0 == v->row0 && sx->nchanged) {
        for (int k = 0; k < sx->nrows && k < v->rows; k++) {
            if (!sx->changed[k])
                continue;
            int64_t y = k * nr / v->rows;
            int py0, py1;
            span(top, gh, nr, y, &py0, &py1);
            int hh = py1 - py0 - gap > 1 ? py1 - py0 - gap : 1;
            fill(c, left - c->cw - c->s, py0, c->cw, hh, c->pal->changed);
        }
    }
    draw_colorbar(c, r.x, bottom + c->pad, cbw, v);
    const int x0 = beside ? r.x + cbw + 2 * c->cw : r.x;
    const int ty = bottom + c->pad + (beside ? 0 : 2 * c->lh);
    if (sx->available && sx->shown && sx->nchanged && sx->row0 == v->row0) {
        int tx = x0;
        fill(c, tx, ty, c->cw, c->lh - 2 * c->s, c->pal->changed);
        tx += c->cw + c->cw / 2;
        text(c, tx, ty, r.x + r.w - tx, c->pal->dim, "m_i rose: %d row%s", sx->nchanged,
             sx->nchanged == 1 ? "" : "s");
    }
    if (v->checked)
        text(c, x0, ty + c->lh, r.x + r.w - x0, c->pal->good, "row max = run's m_i");
}

/* ---- statistics plots ---------------------------------------------------------- */

typedef struct {
    const float *before, *after;    /* n values each; before may be NULL */
    int n;
    const unsigned char *mark;      /* rows to flag, or NULL */
} series;

/* A plot of one or two series over rows 0..n-1: before in grey, after in
 * colour; -inf at the bottom edge with a note. */
static void plot(ctx *c, SDL_Rect a, const char *title, const series *s, int bars,
                 double fixed_lo, double fixed_hi)
{
    const int nt = wrapped(c, a.x, a.y, a.w, 2, c->pal->text, title);
    SDL_Rect f = { a.x + 8 * c->cw, a.y + nt * c->lh, a.w - 8 * c->cw, a.h - nt * c->lh - c->s };
    if (f.w < 8 || f.h < 8 || s->n <= 0)
        return;
    fill(c, f.x, f.y, f.w, f.h, c->pal->bg);
    double lo = fixed_lo, hi = fixed_hi;
    int any = 0, ninf = 0;
    if (!(lo < hi)) {
        for (int pass = 0; pass < 2; pass++) {
            const float *v = pass ? s->after : s->before;
            for (int k = 0; v && k < s->n; k++) {
                if (isinf(v[k])) {
                    ninf++;
                    continue;
                }
                if (!any || v[k] < lo)
                    lo = v[k];
                if (!any || v[k] > hi)
                    hi = v[k];
                any = 1;
            }
        }
        if (!any) {                    /* nothing to scale an axis on */
            text(c, a.x, f.y + c->s, a.w, c->pal->dim, "%s",
                 ninf ? "all -inf so far" : "no statistics yet");
            return;
        }
        if (bars) {                    /* bars grow from 0 */
            lo = lo > 0 ? 0 : lo;
            hi = hi < 0 ? 0 : hi;
        }
        if (hi - lo < 1e-6 * (fabs(hi) + 1e-30) || hi == lo) {
            lo -= 0.5;
            hi += 0.5;
        }
    }
    char l1[32], l2[32];
    snprintf(l1, sizeof l1, "%.3g", hi);
    snprintf(l2, sizeof l2, "%.3g", lo);
    text(c, a.x, f.y, 8 * c->cw - c->s, c->pal->dim, "%s", l1);
    text(c, a.x, f.y + f.h - c->gh, 8 * c->cw - c->s, c->pal->dim, "%s", l2);
    const int n = s->n;
#define YPIX(v) (f.y + f.h - 1 - (int)lround(((double)(v) - lo) / (hi - lo) * (f.h - 1)))
    if (bars && lo < 0 && hi > 0)
        line(c, f.x, YPIX(0.0), f.x + f.w - 1, YPIX(0.0), c->pal->border);
    for (int pass = 0; pass < 2; pass++) {
        const float *v = pass ? s->after : s->before;
        if (!v)
            continue;
        uint32_t col = pass ? c->pal->after : c->pal->before;
        int px = -1, py = -1;
        for (int k = 0; k < n; k++) {
            int x0, x1;
            span(f.x, f.w, n, k, &x0, &x1);
            int cx = (x0 + x1) / 2;
            if (s->mark && pass == 1 && s->mark[k])
                fill(c, x0, f.y, x1 - x0 > 1 ? x1 - x0 - 1 : 1, 2 * c->s, c->pal->changed);
            if (isinf(v[k])) {
                fill(c, cx - c->s, f.y + f.h - 2 * c->s, 2 * c->s, 2 * c->s,
                     pass ? c->pal->bad : c->pal->faint);
                px = -1;
                continue;
            }
            int y = YPIX(v[k]);
            if (bars) {
                int bw = (x1 - x0) / 2 > 1 ? (x1 - x0) / 2 - (x1 - x0 >= 6) : 1;
                int bx = pass ? x0 + (x1 - x0) / 2 : x0;
                int y0 = lo < 0 && hi > 0 ? YPIX(0.0) : YPIX(lo);
                int top = y < y0 ? y : y0, h = y < y0 ? y0 - y : y - y0;
                fill(c, bx, top, bw, h > 0 ? h : 1, col);
            } else {
                if (px >= 0 && n <= f.w / 2)
                    line(c, px, py, cx, y, col);
                int d = c->s + (pass ? 1 : 0);
                fill(c, cx - d, y - d, 2 * d + 1, 2 * d + 1, col);
                px = cx;
                py = y;
            }
        }
    }
#undef YPIX
    if (ninf)
        text(c, f.x + c->s * 2, f.y + f.h - c->lh, NOLIM, c->pal->dim, "-inf at the bottom");
}

static void draw_stats(ctx *c, SDL_Rect a, const viz_model *m)
{
    const viz_info *in = viz_model_info(m);
    const viz_state *st = viz_model_state(m);
    const viz_stats *s = &st->stats;
    char title[160];
    if (s->shown || s->out_shown)
    {
        snprintf(title, sizeof title, "statistics of i = %lld: rows %lld-%lld%s",
                 (long long)(st->i + 1), (long long)s->row0,
                 (long long)(s->row0 + s->block_rows - 1),
                 s->nrows < s->block_rows && s->shown ? " (first rows)" : "");
        if (text_w(c, title) > a.w - 2 * c->pad)
            snprintf(title, sizeof title, "i = %lld: rows %lld-%lld%s", (long long)(st->i + 1),
                     (long long)s->row0, (long long)(s->row0 + s->block_rows - 1),
                     s->nrows < s->block_rows && s->shown ? " (first)" : "");
    }
    else
        snprintf(title, sizeof title, "statistics m_i, l_i, output row");
    SDL_Rect r = panel(c, a, title, c->pal->title);
    if (in->refused)
        return;
    if (!s->available) {
        wrapped(c, r.x, r.y, r.w, 3, c->pal->dim, in->mode_note[0] ? in->mode_note
                                                            : "statistics unavailable");
        return;
    }
    if (!s->shown && !s->out_shown) {
        wrapped(c, r.x, r.y, r.w, 2, c->pal->dim, "no row block's statistics at this line");
        return;
    }
    text(c, r.x, r.y, r.w, c->pal->dim, "grey: before (line %d), blue: after", st->line);
    SDL_Rect g = { r.x, r.y + c->lh + c->pad, r.w, r.h - c->lh - c->pad };
    int hw = g.w / 2, hh = g.h / 2;
    SDL_Rect q[4] = {
        { g.x, g.y, hw - c->cw, hh - c->s },
        { g.x + hw, g.y, g.w - hw, hh - c->s },
        { g.x, g.y + hh, hw - c->cw, g.h - hh },
        { g.x + hw, g.y + hh, g.w - hw, g.h - hh },
    };
    if (s->shown && s->nrows > 0) {
        series sm = { s->before_valid ? s->m_old : NULL, s->after_valid ? s->m_new : NULL,
                      s->nrows, s->nchanged ? s->changed : NULL };
        series sl = { s->before_valid ? s->l_old : NULL, s->after_valid ? s->l_new : NULL,
                      s->nrows, NULL };
        char tm[96];
        if (s->m_is_L_after && !s->m_is_L_before && s->before_valid)
            snprintf(tm, sizeof tm, "m_i, then L_i = m_i + log l_i");
        else if (s->m_is_L_after)
            snprintf(tm, sizeof tm, "L_i = m_i + log l_i (in m_i)");
        else
            snprintf(tm, sizeof tm, "m_i = running row max");
        plot(c, q[0], tm, &sm, 0, 0, 0);
        plot(c, q[1], "l_i = sum exp(S - m_i)", &sl, 0, 0, 0);
        if (s->alpha_shown) {
            series sa = { NULL, s->alpha, s->nrows, NULL };
            plot(c, q[2], "alpha=e^(m_old-m_new)", &sa, 1, 0.0, 1.0);
        } else {
            text(c, q[2].x, q[2].y, q[2].w, c->pal->text, "alpha=e^(m_old-m_new)");
            wrapped(c, q[2].x, q[2].y + c->lh, q[2].w, q[2].h / c->lh - 1, c->pal->dim,
                    "not defined at this line (m_i is not rescaled here)");
        }
    } else if (s->shown) {
        text(c, q[0].x, q[0].y, q[0].w, c->pal->dim, "m_i, l_i not resident at this line");
    } else {
        wrapped(c, q[2].x, q[2].y, g.w, 2, c->pal->dim, "m_i, l_i are not used at this line");
    }
    if (!s->shown) {            /* the output row alone: give it the top half */
        q[3] = (SDL_Rect){ g.x, g.y, g.w, hh - c->s };
    }
    if (s->out_shown && s->out_cols > 0 && (s->before_valid || s->after_valid)) {
        series so = { s->before_valid ? s->out_old : NULL, s->after_valid ? s->out_new : NULL,
                      s->out_cols, NULL };
        char to[96];
        snprintf(to, sizeof to, "O_i row %lld, cols 0-%d%s", (long long)(s->row0 + s->out_row),
                 s->out_cols - 1, s->out_normalised ? "" : " (not yet / l_i)");
        plot(c, q[3], to, &so, 1, 0, 0);
    } else if (s->out_shown) {
        text(c, q[3].x, q[3].y, q[3].w, c->pal->dim, "O_i row: not resident");
    }
}

/* ---- the block grid ------------------------------------------------------------- */

/* 1 when the run visits its blocks row by row (i outer, FA2's forward),
 * 0 when column by column (j outer: FA1, the backward passes). Between two
 * blocks visited one after the other, i stays while a row goes on and j
 * stays while a column does; the first 64 changes of block vote. (The first
 * change alone misleads under a causal mask, where FA2's first row holds
 * one block and its next block is (2, 1).) */
static int blocks_by_row(const viz_model *m)
{
    const uint64_t n = viz_model_info(m)->nsteps;
    int64_t i0 = -1, j0 = -1;
    int same_i = 0, same_j = 0;
    for (uint64_t k = 0; k < n && same_i + same_j < 64; k++) {
        int line;
        int64_t i, j;
        if (viz_model_step_where(m, k, &line, &i, &j) != 0 || i < 0 || j < 0)
            continue;
        if (i0 >= 0 && (i != i0 || j != j0)) {
            same_i += i == i0;
            same_j += j == j0;
        }
        i0 = i;
        j0 = j;
    }
    return same_i >= same_j;
}

/* The T_r x T_c blocks (i, j), row i down and column j across: filled when
 * done, outlined when to come, crossed when skipped (fully masked), thick
 * outline for the block of this step; the visit number in each block when
 * it fits, so the loop order reads off the grid. A cell standing for
 * several blocks (large T) is half filled while partly done. */
static void draw_blocks(ctx *c, SDL_Rect a, const viz_model *m, viz_sdl_grid_area *out)
{
    const viz_info *in = viz_model_info(m);
    const int by_row = blocks_by_row(m);
    SDL_Rect r = panel(c, a, "blocks i, j", c->pal->title);
    int n = wrapped(c, r.x, r.y, r.w, 2, c->pal->dim, by_row ? "row by row (i outer)"
                                                            : "column by column (j outer)");
    const int legend = 2 * c->lh;
    SDL_Rect g = { r.x + 2 * c->cw, r.y + (n + 1) * c->lh, r.w - 2 * c->cw,
                   r.h - (n + 1) * c->lh - legend - c->pad };
    /* Legend: shapes first, colours second. */
    int lx = r.x, ly = r.y + r.h - legend, b = c->cw + c->s;
    fill(c, lx, ly + c->s, b, b, c->pal->t_read);
    lx += b + c->cw / 2;
    lx += text(c, lx, ly, r.x + r.w - lx, c->pal->dim, "done") + c->cw;
    outline(c, lx, ly + c->s, b, b, c->s, c->pal->border);
    lx += b + c->cw / 2;
    lx += text(c, lx, ly, r.x + r.w - lx, c->pal->dim, "to come");
    lx = r.x;
    ly += c->lh;
    fill(c, lx, ly + c->s, b, b, c->pal->t_load);
    outline(c, lx, ly + c->s, b, b, c->s, c->pal->t_cur);
    lx += b + c->cw / 2;
    lx += text(c, lx, ly, r.x + r.w - lx, c->pal->dim, "now") + c->cw;
    if (in->sh.causal) {
        fill(c, lx, ly + c->s, b, b, c->pal->masked);
        line(c, lx, ly + c->s, lx + b - 1, ly + c->s + b - 1, c->pal->masked_line);
        lx += b + c->cw / 2;
        text(c, lx, ly, r.x + r.w - lx, c->pal->dim, "skipped");
    }
    if (g.w < 4 || g.h < 4 || in->plan.Tr < 1 || in->plan.Tc < 1)
        return;
    /* Square cells, at most 3 characters wide; a cell per block when each
     * gets 3 pixels, else several blocks per cell. */
    int64_t rows = in->plan.Tr, cols = in->plan.Tc;
    int side = g.w / (int)(cols < g.w ? cols : g.w);
    if (g.h / (int)(rows < g.h ? rows : g.h) < side)
        side = g.h / (int)(rows < g.h ? rows : g.h);
    if (side > 3 * c->cw)
        side = 3 * c->cw;
    if (side < 3) {
        side = 3;
    }
    const int64_t nr = rows * side <= g.h ? rows : g.h / side, nc = cols * side <= g.w ? cols
                                                                                   : g.w / side;
    const int per_block = nr == rows && nc == cols;
    *out = (viz_sdl_grid_area){ 1, { g.x, g.y, (int)nc * side, (int)nr * side }, nr, nc };
    /* Row and column numbers where they fit: i down the left, j across. */
    if (per_block && side >= c->lh) {
        text(c, r.x, g.y + (side - c->gh) / 2, 2 * c->cw, c->pal->faint, "i");
        text(c, g.x + (side - c->cw) / 2, g.y - c->lh, c->cw, c->pal->faint, "j");
    }
    int64_t visit = 0;
    for (int64_t o = 0; o < nr * nc; o++) {
        const int64_t y = by_row ? o / nc : o % nr, x = by_row ? o % nc : o / nr;
        int64_t i0, i1, j0, j1;
        viz_axis_cell(rows, 1, nr, y, &i0, &i1);
        viz_axis_cell(cols, 1, nc, x, &j0, &j1);
        const unsigned st = viz_block_range(m, i0, i1, j0, j1);
        const int px = g.x + (int)x * side, py = g.y + (int)y * side, q = side - 1;
        if (!(st & (VIZ_BLOCK_DONE | VIZ_BLOCK_NOW | VIZ_BLOCK_TODO))) {
            fill(c, px, py, q, q, c->pal->masked);
            line(c, px, py, px + q - 1, py + q - 1, c->pal->masked_line);
            continue;
        }
        visit++;
        if (st & VIZ_BLOCK_NOW)
            fill(c, px, py, q, q, c->pal->t_load);
        else if ((st & VIZ_BLOCK_DONE) && (st & VIZ_BLOCK_TODO))
            fill(c, px, py + q / 2, q, q - q / 2, c->pal->t_read);
        else if (st & VIZ_BLOCK_DONE)
            fill(c, px, py, q, q, c->pal->t_read);
        outline(c, px, py, q, q, (st & VIZ_BLOCK_NOW) ? 2 * c->s : 1,
                (st & VIZ_BLOCK_NOW) ? c->pal->t_cur : c->pal->border);
        char num[24];
        snprintf(num, sizeof num, "%lld", (long long)visit);
        if (per_block && text_w(c, num) <= q - 2 * c->s && c->gh <= q - 2 * c->s)
            text(c, px + (q - text_w(c, num)) / 2, py + (q - c->gh) / 2, q, 0x101010, "%s", num);
    }
    if (!per_block) {
        char note[96];
        snprintf(note, sizeof note, "a cell: %lld x %lld blocks",
                 (long long)((rows + nr - 1) / nr), (long long)((cols + nc - 1) / nc));
        text(c, g.x, g.y + (int)nr * side + c->s, g.w, c->pal->dim, "%s", note);
    }
}

/* ---- pseudocode and counters ------------------------------------------------------ */

static int draw_code(ctx *c, SDL_Rect a, const viz_model *m)
{
    const viz_info *in = viz_model_info(m);
    const viz_state *st = viz_model_state(m);
    int n;
    const viz_code_line *code = viz_pseudocode(in, &n);
    /* No title: the top bar names the algorithm, and the lines need the room. */
    SDL_Rect r = panel(c, a, NULL, c->pal->title);
    /* When the lines do not all fit, a window of them around the current
     * line, a row saying how many lines are above and below it. */
    const int rows = r.h / c->lh;
    int first = 0, last = n;            /* text lines [first, last) drawn */
    int cur = 0;     /* the paper line of the text line being drawn */
    if (n > rows && rows >= 3) {
        int at = 0;
        for (int k = 0, l = 0; k < n; k++) {
            l = code[k].line ? code[k].line : l;
            if (l == st->line) {
                at = k;
                break;
            }
        }
        first = at - (rows - 2) / 3;            /* the current line a third down */
        if (first <= 0) {                       /* the top, and a mark below */
            first = 0;
            last = rows - 1;
        } else if (n - first <= rows - 1) {     /* a mark above, and the end */
            first = n - (rows - 1);
        } else {                                /* marks above and below */
            last = first + rows - 2;
        }
        for (int k = 0; k < first; k++)
            cur = code[k].line ? code[k].line : cur;
    }
    int y = r.y;
    if (first > 0) {
        text(c, r.x, y, r.w, c->pal->faint, "... %d line%s above", first, first == 1 ? "" : "s");
        y += c->lh;
    }
    for (int k = first; k < last; k++, y += c->lh) {
        if (code[k].line)
            cur = code[k].line;
        int here = !in->refused && cur == st->line;
        if (here)
            fill(c, r.x - c->s * 2, y - c->s, r.w + c->s * 4, c->lh, c->pal->hilite);
        char num[8] = "";
        if (code[k].line)
            snprintf(num, sizeof num, "%2d", code[k].line);
        text(c, r.x, y, NOLIM, here ? c->pal->code_num : c->pal->faint, "%s", num);
        int x = r.x + 4 * c->cw + code[k].indent * 2 * c->cw;
        text(c, x, y, r.x + r.w - x, here ? c->pal->code_text : c->pal->dim, "%s", code[k].text);
    }
    if (last < n)
        text(c, r.x, y, r.w, c->pal->faint, "... %d line%s below", n - last,
             n - last == 1 ? "" : "s");
    return n;
}

static void draw_bar(ctx *c, int x, int y, int w, uint64_t part, uint64_t whole, uint32_t col)
{
    int h = 5 * c->s;
    fill(c, x, y + c->s, w, h, c->pal->t_none);
    if (whole > 0 && part > 0) {
        int f = (int)((double)w * (double)part / (double)whole);
        fill(c, x, y + c->s, f > 0 ? f : 1, h, col);
    }
}

/* "12 KiB/16 KiB" (bytes so far / total) in colw pixels from x, and a bar
 * of the fraction after it when there is room for both. */
static void counter(ctx *c, int x, int y, int colw, uint64_t part, uint64_t whole,
                    uint32_t col)
{
    char p[32], w[32], s[72];
    sim_format_bytes(p, sizeof p, part);
    sim_format_bytes(w, sizeof w, whole);
    snprintf(s, sizeof s, "%s/%s", p, w);
    const int barw = colw / 4, tw = colw - barw - c->cw;
    text(c, x, y, colw, whole ? c->pal->text : c->pal->faint, "%s", s);
    if (text_w(c, s) <= tw && barw > 2 * c->cw)
        draw_bar(c, x + tw + c->cw / 2, y, barw - c->cw / 2, part, whole, col);
}

static void draw_counters(ctx *c, SDL_Rect a, const viz_model *m)
{
    const viz_info *in = viz_model_info(m);
    const viz_state *st = viz_model_state(m);
    /* The terminal view's wording; the totals are the closed form's. */
    SDL_Rect r = panel(c, a, "HBM bytes so far / total", c->pal->title);
    if (in->refused)
        return;
    int y = r.y;
    int names = 2;                  /* the longest name ("O_acc") and a space */
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        if (in->tensor[t].present && (int)strlen(in->tensor[t].name) > names)
            names = (int)strlen(in->tensor[t].name);
    int colw = (r.w - (names + 1) * c->cw) / 2;
    int xr = r.x + (names + 1) * c->cw, xw = xr + colw;
    text(c, xr, y, colw, c->pal->dim, "read");
    text(c, xw, y, colw, c->pal->dim, "written");
    y += c->lh;
    uint64_t sofar = 0, all = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        const viz_tensor_info *ti = &in->tensor[t];
        if (!ti->present)
            continue;
        if (y + c->lh > r.y + r.h)
            break;
        uint64_t rd = viz_bytes_read(m, (sim_tensor)t), rf = viz_final_bytes_read(m, (sim_tensor)t);
        uint64_t wr = viz_bytes_written(m, (sim_tensor)t);
        uint64_t wf = viz_final_bytes_written(m, (sim_tensor)t);
        sofar += rd + wr;
        all += rf + wf;
        text(c, r.x, y, NOLIM, c->pal->text, "%s", ti->name);
        counter(c, xr, y, colw, rd, rf, c->pal->t_read);
        counter(c, xw, y, colw, wr, wf, c->pal->t_written);
        y += c->lh;
    }
    y += c->pad;
    char b1[32], b2[32], e1[32], e2[32];
    sim_format_bytes(b1, sizeof b1, sofar);
    sim_format_bytes(b2, sizeof b2, all);
    if (y + c->lh <= r.y + r.h)
        text(c, r.x, y, r.w, c->pal->text, "total %s of %s (%.1f%%)", b1, b2,
             all ? 100.0 * (double)sofar / (double)all : 0.0);
    y += c->lh;
    if (y + c->lh <= r.y + r.h)
        text(c, r.x, y, r.w, in->theory_matches ? c->pal->good : c->pal->bad,
             "measured = closed form at the end: %s", in->theory_matches ? "yes" : "NO");
    y += c->lh;
    /* The same in elements, where the pseudocode leaves a line for it. */
    sim_format_count(e1, sizeof e1, sim_counts_elems(&st->counts));
    sim_format_count(e2, sizeof e2, sim_counts_elems(&in->final_counts));
    if (y + c->lh <= r.y + r.h)
        text(c, r.x, y, r.w, c->pal->dim, "elements %s of %s", e1, e2);
}

/* ---- help overlay --------------------------------------------------------------- */

static void draw_help(ctx *c, int w, int h)
{
    char a_line[200], names[160];
    snprintf(a_line, sizeof a_line, "a            next algorithm: %s",
             sim_algo_names(names, sizeof names, ", "));
    const char *const lines[] = {
        "space        play / pause",
        "n, Right     one step forward",
        "b, Left      one step back",
        "Home, End    first / last step",
        "+, -         speed x2 / x0.5",
        "g 123 Enter  go to step 123 (Esc cancels)",
        a_line,                                     /* the registry's loop orders */
        "c            causal mask on / off",
        "r            restart from step 1",
        "click        details of a tile",
        "t            light / dark theme",
        "?            this help",
        "q, Esc       quit",
        "",
        "Tiles: light blue read, green written, dark",
        "blue both; yellow loading now (mark top left),",
        "vermillion storing now (mark bottom right);",
        "outline: the blocks i, j of this step.",
        "Heat map: S_ij or P~_ij of this step,",
        "recomputed with the run's primitives.",
    };
    const int n = (int)(sizeof lines / sizeof lines[0]);
    int pw = 48 * c->cw + 2 * c->pad, ph = (n + 2) * c->lh + 2 * c->pad;
    SDL_Rect a = { (w - pw) / 2, (h - ph) / 2, pw, ph };
    SDL_Rect r = panel(c, a, "keys (press ? to close)", c->pal->warn);
    outline(c, a.x, a.y, a.w, a.h, c->s, c->pal->warn);
    for (int k = 0; k < n; k++)
        text(c, r.x, r.y + k * c->lh, r.w, c->pal->text, "%s", lines[k]);
}

/* ---- the frame ------------------------------------------------------------------ */

/* Draw into panel a from here on: nothing outside it is touched. */
static void clip(ctx *c, SDL_Rect a)
{
    c->area = a;
    if (!c->svg) {
        SDL_RenderSetClipRect(c->r, &a);
        return;
    }
    if (c->clips++ > 0)
        fputs("</g>\n", c->svg);
    fprintf(c->svg, "<clipPath id=\"c%d\"><rect x=\"%d\" y=\"%d\" width=\"%d\" "
            "height=\"%d\"/></clipPath>\n<g clip-path=\"url(#c%d)\">\n", c->clips, a.x,
            a.y, a.w, a.h, c->clips);
}

/* Back to the whole frame. */
static void unclip(ctx *c, int w, int h)
{
    c->area = (SDL_Rect){ 0, 0, w, h };
    if (!c->svg)
        SDL_RenderSetClipRect(c->r, NULL);
    else if (c->clips > 0)
        fputs("</g>\n", c->svg);
    c->clips = 0;
}

void viz_sdl_draw(SDL_Renderer *rend, int w, int h, const viz_model *m,
                  viz_sdl_heat *heat, const viz_sdl_ui *ui, viz_sdl_layout *lay)
{
    viz_sdl_layout dummy;
    if (!lay)
        lay = &dummy;
    memset(lay, 0, sizeof *lay);
    const viz_sdl_font_metrics fm = viz_sdl_font_fit(ui->font, w, h);
    ctx c = { rend, viz_sdl_palette_of(ui->theme), ui->font, fm.unit, fm.cell_w, fm.line_h,
              fm.cap_h, 4 * fm.unit, { 0, 0, w, h }, ui, ui->svg, 0 };
    lay->scale = c.s;
    lay->text = fm;
    if (c.svg) {
        /* DejaVu Sans Mono's capitals are 0.729 of its size. */
        fprintf(c.svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                "viewBox=\"0 0 %d %d\" xml:space=\"preserve\" shape-rendering=\"crispEdges\">\n"
                "<style>text{font-family:'DejaVu Sans Mono',monospace;font-size:%.1fpx;"
                "white-space:pre}</style>\n", w, h, w, h,
                fm.cap_h / 0.729);
    } else {
        SDL_RenderSetViewport(rend, NULL);
        SDL_RenderSetClipRect(rend, NULL);
    }
    fill(&c, 0, 0, w, h, c.pal->bg);

    const int bar = 2 * c.lh + 2 * c.pad;
    /* FA3's pipeline rows join the bottom bar, a line each and a title */
    sim_pipe_row pipe[SIM_PIPE_ROWS];
    const int npipe = viz_model_info(m)->refused ? 0 : viz_model_pipeline(m, pipe);
    const int pipe_h = npipe > 0 ? (1 + npipe) * c.lh : 0;
    SDL_Rect top = { 0, 0, w, bar };
    SDL_Rect bot = { 0, h - bar - pipe_h, w, bar + pipe_h };
    draw_top(&c, top, m, ui);
    draw_bottom(&c, bot, m, ui, pipe, npipe > 0 ? npipe : 0);

    /* Columns: the pseudocode's longest line (numbers, indents, text) and
     * the counters' (about 40 characters); the tile grids about a third of
     * what is left; the heat map the rest. */
    const int g = c.s * 2;
    const int y0 = bar, hh = h - 2 * bar - pipe_h;
    int code_cols = 40, ncode;
    const viz_code_line *lines = viz_pseudocode(viz_model_info(m), &ncode);
    for (int k = 0; k < ncode; k++) {
        int n = 4 + 2 * lines[k].indent + (int)strlen(lines[k].text) + 1;
        code_cols = n > code_cols ? n : code_cols;
    }
    int rw = code_cols * c.cw + 2 * c.pad + 2 * g;
    if (rw > w * 2 / 5)
        rw = w * 2 / 5;
    /* The naive order's S and P squares want a wider left column. */
    const sim_loop *l = viz_loop(viz_model_info(m));
    int lw = (w - rw) * (l && (l->flags & SIM_LOOP_TILE_S) ? 11 : 9) / 20;
    int cw = w - rw - lw;
    /* The pseudocode gets what the counters leave: a title, a header, a
     * line per tensor and the total (whether the run met the closed form,
     * and the total in elements, when there is room). */
    int ntens = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        ntens += viz_model_info(m)->tensor[t].present;
    int code_h = ncode * c.lh + 2 * c.pad + 2 * g;
    const int cnt_h = (ntens + 3) * c.lh + 3 * c.pad + c.pad / 2 + g;
    if (code_h > hh - cnt_h)
        code_h = hh - cnt_h;
    if (code_h < hh * 2 / 5)
        code_h = hh * 2 / 5;
    const int tiles_h = hh * 11 / 20, heat_h = hh * 11 / 20;
    SDL_Rect tiles = { g, y0 + g, lw - 2 * g, tiles_h - 2 * g };
    SDL_Rect sram = { g, y0 + tiles_h, lw - 2 * g, hh - tiles_h - g };
    SDL_Rect heatr = { lw, y0 + g, cw - g, heat_h - 2 * g };
    /* FA1 and FA2 share the heat map's row with their block grid. */
    const int has_blocks = viz_model_info(m)->blocks && !viz_model_info(m)->refused;
    SDL_Rect blk = { 0, 0, 0, 0 };
    if (has_blocks) {
        blk = (SDL_Rect){ lw + (cw - g) * 3 / 5, y0 + g, cw - g - (cw - g) * 3 / 5, heat_h - 2 * g };
        heatr.w -= blk.w + g;
    }
    SDL_Rect stats = { lw, y0 + heat_h, cw - g, hh - heat_h - g };
    SDL_Rect code = { lw + cw, y0 + g, rw - g, code_h - 2 * g };
    SDL_Rect cnt = { lw + cw, y0 + code_h, rw - g, hh - code_h - g };

    clip(&c, tiles);
    draw_tiles(&c, tiles, m, lay);
    clip(&c, sram);
    draw_sram(&c, sram, m);
    clip(&c, heatr);
    draw_heat(&c, heatr, m, heat);
    if (has_blocks) {
        clip(&c, blk);
        draw_blocks(&c, blk, m, &lay->blocks);
    }
    clip(&c, stats);
    draw_stats(&c, stats, m);
    clip(&c, code);
    draw_code(&c, code, m);
    clip(&c, cnt);
    draw_counters(&c, cnt, m);
    unclip(&c, w, h);
    if (ui->help)
        draw_help(&c, w, h);
    if (c.svg)
        fputs("</svg>\n", c.svg);
}

int viz_sdl_hit(const viz_sdl_layout *lay, const viz_model *m, int x, int y,
                sim_tensor *t, int64_t *tr, int64_t *tc)
{
    const viz_info *in = viz_model_info(m);
    for (int k = 0; k < SIM_TENSOR_COUNT; k++) {
        const viz_sdl_grid_area *g = &lay->grid[k];
        if (!g->present || x < g->area.x || y < g->area.y || x >= g->area.x + g->area.w ||
            y >= g->area.y + g->area.h)
            continue;
        const viz_tensor_info *ti = &in->tensor[k];
        const axis ay = axis_make(g->area.y, g->area.h, ti->rows, ti->tile_rows, ti->grid_rows);
        const axis ax = axis_make(g->area.x, g->area.w, ti->cols, ti->tile_cols, ti->grid_cols);
        int p0, p1;
        int64_t r0, r1, c0, c1;
        axis_cell(&ay, axis_cell_at(&ay, y), &p0, &p1, &r0, &r1);
        axis_cell(&ax, axis_cell_at(&ax, x), &p0, &p1, &c0, &c1);
        *t = (sim_tensor)k;
        *tr = r0;
        *tc = c0;
        return 1;
    }
    return 0;
}
