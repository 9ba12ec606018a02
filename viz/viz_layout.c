/*
 * viz_layout.c — draw a view model on a canvas (see viz_canvas.h).
 *
 * The screen, top to bottom (80 x 24 shown; larger canvases stretch the
 * grids, the pseudocode window and the statistics table):
 *
 *   title: loop order, shape, plan, mode
 *   where: step k of n, line, i of T_r, j of T_c
 *   HBM tile grids           | pseudocode, current line marked
 *   per-tensor byte counters | SRAM: used of M, fill bar, resident buffers
 *   statistics of the current row block: m, l before and after, alpha;
 *   the chosen row of O_i
 *   moved: this step's transfers (or a message: tile details, prompts)
 *   status line (controls), interactive renderers only
 *
 * Block indices are shown 1-based, as the papers number them (i = 1..T_r);
 * element ranges 0-based and half-open, as slices ([32:48]).
 */
#include "viz_canvas.h"

#include <stdio.h>
#include <string.h>

#include "ref_tile.h"

const char VIZ_CONTROLS[] =
    "spc:play n:step b:back +-:speed g:goto a:algo c:causal r:restart ?:help q:quit";

enum { MIN_W = 80 };

/* ---- small formatting helpers -------------------------------------------- */

static void fmt_count(char *buf, size_t len, uint64_t v)
{
    sim_format_count(buf, len, v);
}

/* "12.5" style value of a float for the statistics table, in w columns. */
static void fmt_val(char *buf, size_t len, float v, int w)
{
    if (v != v)
        snprintf(buf, len, "%*s", w, "nan");
    else if (v == -REF_INF)
        snprintf(buf, len, "%*s", w, "-inf");
    else if (v == REF_INF)
        snprintf(buf, len, "%*s", w, "inf");
    else if (v > -1e5f && v < 1e5f)
        snprintf(buf, len, "%*.5f", w, (double)v);
    else
        snprintf(buf, len, "%*.3e", w, (double)v);
}

/* ---- the header lines ---------------------------------------------------- */

static void draw_title(const viz_model *m, viz_canvas *c)
{
    const viz_info *in = viz_model_info(m);
    char mb[32];
    fmt_count(mb, sizeof mb, in->sh.M);
    char what[40], lens[48];
    if (in->run.splits > 1)
        snprintf(what, sizeof what, "%s S=%lld", sim_algo_name(in->algo),
                 (long long)in->run.splits);
    else
        snprintf(what, sizeof what, "%s%s", sim_algo_name(in->algo),
                 in->run.pass == SIM_BWD ? " bwd" : "");
    if (sim_shape_Nk(&in->sh) != in->sh.N)
        snprintf(lens, sizeof lens, "Nq=%lld Nk=%lld", (long long)in->sh.N,
                 (long long)sim_shape_Nk(&in->sh));
    else
        snprintf(lens, sizeof lens, "N=%lld", (long long)in->sh.N);
    /* The report's tiles say so: the view and the report then count the
     * same bytes. */
    char tiles[64];
    if (in->same_tiles > 0)
        snprintf(tiles, sizeof tiles, "B_r=B_c=%lld as the report's", (long long)in->plan.Br);
    else
        snprintf(tiles, sizeof tiles, "B_r=%lld B_c=%lld", (long long)in->plan.Br,
                 (long long)in->plan.Bc);
    char title[256];
    for (int k = 0; k < 2; k++) {
        snprintf(title, sizeof title, "fasim view  %s  %s d=%lld %s M=%s B  %s%s%s", what, lens,
                 (long long)in->sh.d, sim_dtype_name(in->sh.dtype), mb, tiles,
                 in->sh.causal ? "  causal" : "",
                 in->computed || in->refused ? "" : "  count-only");
        if (strlen(title) <= MIN_W + strlen("fasim view  ") || in->same_tiles <= 0)
            break;
        /* Still too long: the tiles' note shortens. */
        snprintf(tiles, sizeof tiles, "B_r=B_c=%lld (report's)", (long long)in->plan.Br);
    }
    /* Long shapes (decoding, split-KV): the program's name gives way first. */
    const char *t = strlen(title) > MIN_W ? title + strlen("fasim view  ") : title;
    viz_canvas_text(c, 0, 0, -1, VIZ_ST_TITLE, t);
}

/* The position line at one of four widths: level 0 the widest, 1 with
 * two-column gaps, 2 also without the names T_r, T_c, S_rows, 3 also with
 * "a/b" for "a of b" in the step and the block indices. */
static void where_text(const viz_model *m, int level, char *buf, size_t len)
{
    const viz_info *in = viz_model_info(m);
    const viz_state *st = viz_model_state(m);
    const char *gap = level ? "  " : "   ";
    const int names = level < 2;
    char s1[32], s2[32];
    fmt_count(s1, sizeof s1, st->step + 1);
    fmt_count(s2, sizeof s2, in->nsteps);
    const char *of = level < 3 ? " of " : "/";
    int n = snprintf(buf, len, "step %s%s%s%sline %d", s1, of, s2, gap, st->line);
    const viz_code_line *code = viz_pseudocode_line(in, st->line);
    if (st->i >= 0 && code && (code->view & SIM_VIEW_SOFTMAX) && in->plan.softmax_passes == 1)
        n += snprintf(buf + n, len - (size_t)n, "%srows block %lld of %lld%s%lld%s", gap,
                      (long long)st->i + 1,
                      (long long)((in->sh.N + in->plan.Bs_r - 1) / in->plan.Bs_r),
                      names ? " (S_rows: " : " (", (long long)in->plan.Bs_r,
                      names ? " rows of S)" : " rows)");
    else if (st->split >= 0 && st->i >= 0)      /* split-KV: the split first, shorter */
        n += snprintf(buf + n, len - (size_t)n, "%ssplit %lld of %lld%si = %lld of %lld", gap,
                      (long long)st->split + 1, (long long)in->run.splits, gap,
                      (long long)st->i + 1, (long long)in->plan.Tr);
    else if (st->i >= 0)
        n += snprintf(buf + n, len - (size_t)n, "%si = %lld%s%s%lld", gap,
                      (long long)st->i + 1, of, names ? "T_r = " : "", (long long)in->plan.Tr);
    if (st->j >= 0)
        n += snprintf(buf + n, len - (size_t)n, "%sj = %lld%s%s%lld", gap,
                      (long long)st->j + 1, of, names && st->split < 0 ? "T_c = " : "",
                      (long long)in->plan.Tc);
    if (st->pass)
        snprintf(buf + n, len - (size_t)n, "%spass %d of %d (%s)", gap, st->pass,
                 in->plan.softmax_passes,
                 st->pass == in->plan.softmax_passes ? "normalise"
                 : in->plan.softmax_passes == 2      ? "m, l online"
                 : st->pass == 1                     ? "row max"
                                                     : "row sum");
}

static void draw_where(const viz_model *m, viz_canvas *c, int maxw)
{
    const viz_info *in = viz_model_info(m);
    if (in->refused) {
        char need[32], mb[32];
        fmt_count(need, sizeof need, in->plan.sram_peak);
        fmt_count(mb, sizeof mb, in->sh.M);
        viz_canvas_printf(c, 0, 1, maxw, VIZ_ST_OVER,
                          "PLAN REFUSED: it needs %s B of SRAM, M is %s B; nothing runs",
                          need, mb);
        return;
    }
    /* The widest form that fits maxw: then narrower gaps, then the
     * counts' names left out ("i = 3 of 8"), then "3/8", so that no value is
     * cut (the renderer's state takes the line's right end). */
    char buf[200];
    for (int level = 0; level < 4; level++) {
        where_text(m, level, buf, sizeof buf);
        if (maxw < 0 || (int)strlen(buf) <= maxw)
            break;
    }
    viz_canvas_text(c, 0, 1, maxw, VIZ_ST_TITLE, buf);
}

/* ---- HBM: tile grids and counters ---------------------------------------- */

/* Grid height: at most gh rows and at least lo, preferring a height at which
 * every grid with fewer tiles than rows gets a whole number of rows per tile
 * (so that tile boundaries fall on cell boundaries and a highlight never
 * spills over). */
static int pick_grid_height(const viz_info *in, int gh, int lo)
{
    if (lo < (gh + 1) / 2)
        lo = (gh + 1) / 2;
    for (int g = gh; g >= lo && g >= 1; g--) {
        int ok = 1;
        for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
            const viz_tensor_info *ti = &in->tensor[t];
            if (!ti->present)
                continue;
            /* A partial last tile cannot align; it does not constrain g. */
            if (ti->grid_rows <= g && ti->rows % ti->tile_rows == 0 &&
                g % ti->grid_rows != 0)
                ok = 0;
        }
        if (ok)
            return g;
    }
    return gh;
}

static int is_wide(sim_tensor t)
{
    return t == SIM_S || t == SIM_P || t == SIM_dP || t == SIM_dS;
}

/* A count as a cell shows it: "3" up to nine, "9+" past it. */
static int fmt_times(char *buf, size_t len, uint32_t n)
{
    return n > 9 ? snprintf(buf, len, "9+") : snprintf(buf, len, "%u", n);
}

/* How often a tile moved, in a few characters: "3r" read three times, "1w"
 * written once, "2r1w" both, "." never. The marks of the grid legend: no
 * letter that names a tensor (r and w name none). */
static int count_text(char *buf, size_t len, uint32_t r, uint32_t w)
{
    char a[8] = "", b[8] = "";
    if (r) {
        fmt_times(a, sizeof a, r);
        strcat(a, "r");
    }
    if (w) {
        fmt_times(b, sizeof b, w);
        strcat(b, "w");
    }
    return snprintf(buf, len, "%s%s", r || w ? a : ".", b);
}

/* The mark of a tile this step: '>' being loaded, '<' being stored, '='
 * both, '*' in hand (in SRAM or being worked on), ' ' none. */
static char tile_mark(unsigned bits, viz_style *st)
{
    const unsigned ld = bits & VIZ_TILE_LOADING, sto = bits & VIZ_TILE_STORING;
    *st = ld ? VIZ_ST_LOAD : sto ? VIZ_ST_STORE : VIZ_ST_CURRENT;
    if (ld && sto)
        return '=';
    if (ld)
        return '>';
    if (sto)
        return '<';
    return bits & VIZ_TILE_CURRENT ? '*' : ' ';
}

/* One cell of w columns for a tile (or the tiles a cell stands for): its
 * mark, then its counts ("*2r"); where they do not fit, the mark and the
 * digit of its moves (reads + writes, '+' past nine); in one column, the
 * mark if it has one, else that digit. */
static void draw_cell(viz_canvas *c, int x, int y, int w, unsigned bits, uint32_t r,
                      uint32_t wr)
{
    viz_style ms, ts = r && wr ? VIZ_ST_BOTH : wr ? VIZ_ST_WRITTEN : r ? VIZ_ST_READ
                                                                       : VIZ_ST_DIM;
    const char mark = tile_mark(bits, &ms);
    if (bits & VIZ_TILE_CURRENT)
        ts = VIZ_ST_CURRENT;
    char txt[16];
    const uint32_t n = r + wr;
    const int len = count_text(txt, sizeof txt, r, wr);
    if (w < 1 + len) {
        txt[0] = n == 0 ? '.' : n > 9 ? '+' : (char)('0' + n);
        txt[1] = '\0';
    }
    if (w == 1 && mark != ' ') {
        viz_canvas_fill(c, x, y, 1, mark, ms);
    } else if (w == 1) {
        viz_canvas_text(c, x, y, 1, ts, txt);
    } else {
        viz_canvas_fill(c, x, y, w, ' ', ts);
        viz_canvas_fill(c, x, y, 1, mark, mark == ' ' ? ts : ms);
        viz_canvas_text(c, x + 1, y, w - 1, ts, txt);
    }
}

/* The columns a tile's counts need at most in this run (mark included). */
static int cell_need(const viz_tensor_info *ti)
{
    char txt[16];
    return 1 + count_text(txt, sizeof txt, ti->max_reads, ti->max_writes);
}

enum { GAP = 2 };      /* columns between two grids (1 when space is short) */

/* The grids' widths within `avail` columns, in w[] per tensor: each cell as
 * wide as its counts need (cell_need), or two columns (the mark, then the
 * digit of its moves) when that does not fit, or one (the mark, else the
 * digit) as a last resort; S and P (N x N_k) share what is left, whole
 * cells per tile column where they can. Returns the total width; *cell the
 * columns of the narrow grids' cells (0: as their counts need). */
static int grid_widths(const viz_info *in, int avail, int gap, int w[SIM_TENSOR_COUNT],
                       int *cell)
{
    int nw = 0, ntens = 0, fixed = 0;
    static const int CELL[] = { 0, 2, 1 };
    for (int pass = 0; pass < 3; pass++) {
        nw = ntens = fixed = 0;
        *cell = CELL[pass];
        for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
            w[t] = 0;
            if (!in->tensor[t].present)
                continue;
            ntens++;
            if (is_wide((sim_tensor)t))
                nw++;
            else
                fixed += w[t] = pass ? CELL[pass] : cell_need(&in->tensor[t]);
        }
        if (fixed + gap * (ntens - 1) + 4 * nw <= avail)
            break;
    }
    int total = fixed + gap * (ntens > 0 ? ntens - 1 : 0);
    if (nw) {
        int ws = (avail - total) / nw;
        if (ws < 1)
            ws = 1;
        for (int t = 0; t < SIM_TENSOR_COUNT; t++)
            if (in->tensor[t].present && is_wide((sim_tensor)t)) {
                const viz_tensor_info *ti = &in->tensor[t];
                const int need = cell_need(ti);
                int wt = ws;
                if (ti->grid_cols * need <= wt)          /* counts in every cell */
                    wt = (int)(ti->grid_cols * (wt / ti->grid_cols));
                else if (ti->grid_cols <= wt)            /* whole cells per tile */
                    wt = (int)(ti->grid_cols * (wt / ti->grid_cols));
                w[t] = wt;
                total += wt;
            }
    }
    return total;
}

/* The largest number of tiles one cell stands for, rows and columns. */
static void grid_scale(const viz_info *in, int gh, const int w[SIM_TENSOR_COUNT], int *sr,
                       int *sc)
{
    *sr = *sc = 1;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        const viz_tensor_info *ti = &in->tensor[t];
        if (!ti->present)
            continue;
        for (int r = 0; r < gh; r++) {
            int64_t a, b;
            viz_axis_cell(ti->rows, ti->tile_rows, gh, r, &a, &b);
            if (b - a > *sr)
                *sr = (int)(b - a);
        }
        if (is_wide((sim_tensor)t) && w[t] > 0)
            for (int q = 0; q < w[t]; q++) {
                int64_t a, b;
                viz_axis_cell(ti->cols, ti->tile_cols, w[t], q, &a, &b);
                if (b - a > *sc)
                    *sc = (int)(b - a);
            }
    }
}

/* Draws the grids: names in row y0, then gh rows of cells. A run of
 * columns standing for the same tiles is one cell. Returns the width. */
static int draw_grids(const viz_model *m, viz_canvas *c, int y0, int gh,
                      const int w[SIM_TENSOR_COUNT], int gap, viz_layout *out)
{
    const viz_info *in = viz_model_info(m);
    int x = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        const viz_tensor_info *ti = &in->tensor[t];
        if (!ti->present)
            continue;
        viz_canvas_text(c, x, y0, w[t] + gap - 1, VIZ_ST_HEAD, ti->name);
        for (int r = 0; r < gh; r++) {
            int64_t tr0, tr1;
            viz_axis_cell(ti->rows, ti->tile_rows, gh, r, &tr0, &tr1);
            for (int q = 0; q < w[t];) {
                int64_t tc0, tc1, a, b;
                viz_axis_cell(ti->cols, ti->tile_cols, w[t], q, &tc0, &tc1);
                int n = 1;
                while (q + n < w[t] &&
                       (viz_axis_cell(ti->cols, ti->tile_cols, w[t], q + n, &a, &b),
                        a == tc0 && b == tc1))
                    n++;
                const unsigned bits = viz_tile_range_mark(m, (sim_tensor)t, tr0, tr1, tc0, tc1);
                uint32_t nr, nw;
                viz_tile_range_counts(m, (sim_tensor)t, tr0, tr1, tc0, tc1, &nr, &nw);
                draw_cell(c, x + q, y0 + 1 + r, n, bits, nr, nw);
                q += n;
            }
        }
        if (out) {
            viz_grid_rect *g = &out->grid[t];
            g->present = 1;
            g->x = x;
            g->y = y0 + 1;
            g->w = w[t];
            g->h = gh;
            g->tensor = (sim_tensor)t;
        }
        x += w[t] + gap;
    }
    return x - gap;
}

/* The block grid: row i for Q_i, column j for K_j, V_j, one character per
 * block or per bh x bw blocks: '#' done, '*' now, '.' to come, '-' skipped
 * (fully masked); a character standing for done and coming blocks ':'. */
static const char BLOCKS_HEAD[] = "blocks";
enum { BLOCKS_W = sizeof BLOCKS_HEAD - 1 };

static void draw_blocks(const viz_model *m, viz_canvas *c, int x0, int y0, int bh, int bw)
{
    const sim_plan *p = &viz_model_info(m)->plan;
    viz_canvas_text(c, x0, y0, BLOCKS_W, VIZ_ST_HEAD, BLOCKS_HEAD);
    for (int r = 0; r < bh; r++) {
        int64_t i0, i1;
        viz_axis_cell(p->Tr, 1, bh, r, &i0, &i1);
        for (int q = 0; q < bw; q++) {
            int64_t j0, j1;
            viz_axis_cell(p->Tc, 1, bw, q, &j0, &j1);
            const unsigned b = viz_block_range(m, i0, i1, j0, j1);
            char ch = '.';
            viz_style st = VIZ_ST_DIM;
            if (b & VIZ_BLOCK_NOW) {
                ch = '*';
                st = VIZ_ST_CURRENT;
            } else if ((b & VIZ_BLOCK_DONE) && (b & VIZ_BLOCK_TODO)) {
                ch = ':';
                st = VIZ_ST_READ;
            } else if (b & VIZ_BLOCK_DONE) {
                ch = '#';
                st = VIZ_ST_READ;
            } else if (!(b & VIZ_BLOCK_TODO)) {
                ch = '-';
            }
            viz_canvas_fill(c, x0 + q, y0 + 1 + r, 1, ch, st);
        }
    }
}

/* The byte counters as items "Q r 2,048/8,192": bytes so far / the closed
 * form's total, under the one header COUNTER_HEAD. split: a tensor both
 * read and written gives two items.
 * Numbers are exact bytes when every item, with the totals in both places,
 * fits maxw; else the whole frame counts in one unit (KiB, MiB, ...), the
 * one in which the largest total is under 1024, named once in the header;
 * deciding on the totals keeps the layout the same at every step. */
enum { MAX_ITEMS = 2 * SIM_TENSOR_COUNT };

static const char COUNTER_HEAD[] = "bytes so far / total";

/* A byte count in the frame's unit (0: exact bytes). */
static void fmt_in_unit(char *buf, size_t len, uint64_t v, int unit)
{
    if (!unit) {
        fmt_count(buf, len, v);
        return;
    }
    const uint64_t div = UINT64_C(1) << (10 * unit);
    if (v % div == 0)
        snprintf(buf, len, "%llu", (unsigned long long)(v / div));
    else
        snprintf(buf, len, "%.2f", (double)v / (double)div);
}

static int format_items(const char *name, const uint64_t v[4], int split, int unit,
                        char items[][192])
{
    char f[4][32];
    for (int q = 0; q < 4; q++)
        fmt_in_unit(f[q], sizeof f[q], v[q], unit);
    const int rd = v[1] > 0, wr = v[3] > 0 || !rd;
    int k = 0;
    if (rd && wr && !split) {
        snprintf(items[k++], 192, "%-2.2s r %s/%s w %s/%s", name, f[0], f[1], f[2], f[3]);
    } else {
        if (rd)
            snprintf(items[k++], 192, "%-2.2s r %s/%s", name, f[0], f[1]);
        if (wr)
            snprintf(items[k++], 192, "%-2.2s w %s/%s", rd ? "" : name, f[2], f[3]);
    }
    return k;
}

/* Each present tensor's items at the end of the run in `unit`, with the
 * widest one's width; returns that width. */
static int final_items_width(const viz_model *m, int split, int unit, uint64_t *largest)
{
    const viz_info *in = viz_model_info(m);
    int w = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        if (!in->tensor[t].present)
            continue;
        const uint64_t fr = viz_final_bytes_read(m, (sim_tensor)t);
        const uint64_t fw = viz_final_bytes_written(m, (sim_tensor)t);
        const uint64_t fin[4] = { fr, fr, fw, fw };
        if (largest && (fr > *largest || fw > *largest))
            *largest = fr > fw ? fr : fw;
        char probe[2][192];
        const int k = format_items(in->tensor[t].name, fin, split, unit, probe);
        for (int q = 0; q < k; q++)
            if ((int)strlen(probe[q]) > w)
                w = (int)strlen(probe[q]);
    }
    return w;
}

/* The frame's unit: 0 (bytes) when every exact item fits maxw, else 1 KiB,
 * 2 MiB, ...: the largest total under 1024 of it. */
static int counter_unit(const viz_model *m, int split, int maxw)
{
    uint64_t largest = 0;
    if (final_items_width(m, split, 0, &largest) <= maxw)
        return 0;
    int unit = 1;
    while (unit < 6 && largest >> (10 * unit) >= 1024)
        unit++;
    return unit;
}

/* The counters' header: "bytes so far / total", with the unit when it is
 * not bytes. */
static void counter_head(char *buf, size_t len, int unit)
{
    static const char *const UNITS[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    if (unit)
        snprintf(buf, len, "%s, %s", COUNTER_HEAD, UNITS[unit]);
    else
        snprintf(buf, len, "%s", COUNTER_HEAD);
}

static int counter_items(const viz_model *m, int split, int unit, char items[][192])
{
    const viz_info *in = viz_model_info(m);
    int n = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        if (!in->tensor[t].present)
            continue;
        const uint64_t fr = viz_final_bytes_read(m, (sim_tensor)t);
        const uint64_t fw = viz_final_bytes_written(m, (sim_tensor)t);
        const uint64_t now[4] = { viz_bytes_read(m, (sim_tensor)t), fr,
                                  viz_bytes_written(m, (sim_tensor)t), fw };
        n += format_items(in->tensor[t].name, now, split, unit, items + n);
    }
    return n;
}

/* The widest counter item at the end of the run (the widest at any step). */
static int counter_width(const viz_model *m, int split, int maxw)
{
    return final_items_width(m, split, counter_unit(m, split, maxw), NULL);
}

/* ---- pseudocode and SRAM ------------------------------------------------- */

static void draw_code(const viz_model *m, viz_canvas *c, int x0, int y0, int ph, int rw)
{
    const viz_info *in = viz_model_info(m);
    const viz_state *st = viz_model_state(m);
    int n;
    const viz_code_line *code = viz_pseudocode(in, &n);
    viz_canvas_text(c, x0, y0, rw, VIZ_ST_HEAD, viz_pseudocode_title(in));
    int cur = -1;
    if (!in->refused)
        for (int k = 0; k < n; k++)
            if (code[k].line == st->line) {
                cur = k;
                break;
            }
    int start = 0;
    if (n > ph && cur >= 0) {
        start = cur - ph / 3;
        if (start < 0)
            start = 0;
        if (start > n - ph)
            start = n - ph;
    }
    for (int r = 0; r < ph && start + r < n; r++) {
        const int k = start + r;
        /* The current line and its continuations (line 0 below it). */
        int on = cur >= 0 && k >= cur;
        for (int q = cur + 1; on && q <= k; q++)
            if (code[q].line != 0)
                on = 0;
        char num[8] = "  ";
        if (code[k].line)
            snprintf(num, sizeof num, "%2d", code[k].line);
        char buf[96];
        snprintf(buf, sizeof buf, "%c%s %*s%s", on ? '>' : ' ', num, 2 * code[k].indent, "",
                 code[k].text);
        viz_style sty = on ? VIZ_ST_CURLINE : VIZ_ST_NORMAL;
        if (on)
            viz_canvas_fill(c, x0, y0 + 1 + r, rw, ' ', sty);
        viz_canvas_text(c, x0, y0 + 1 + r, rw, sty, buf);
    }
}

/* The resident buffers as "name bytes" tokens, wrapped into rw columns.
 * Returns the number of lines used (or needed, when draw is 0). */
static int draw_buffers(const viz_model *m, viz_canvas *c, int x0, int y0, int rw, int maxl,
                        int draw)
{
    const viz_state *st = viz_model_state(m);
    int x = 0, line = 0;
    for (int k = 0; k < st->nbuf; k++) {
        const viz_sram_entry *b = &st->buf[k];
        char num[32], tok[64];
        fmt_count(num, sizeof num, b->bytes);
        viz_style sty = VIZ_ST_NORMAL;
        char mark = ' ';
        if (b->flags & VIZ_BUF_PENDING) {
            snprintf(tok, sizeof tok, "(%s %s)", b->name, num);
            sty = VIZ_ST_DIM;
        } else {
            if (b->flags & (VIZ_BUF_REFUSED | VIZ_BUF_OVER)) {
                mark = '!';
                sty = VIZ_ST_OVER;
            } else if (b->flags & VIZ_BUF_LOADED) {
                mark = '>';             /* the grids' marks: loaded, stored */
                sty = VIZ_ST_LOAD;
            } else if (b->flags & VIZ_BUF_STORED) {
                mark = '<';
                sty = VIZ_ST_STORE;
            }
            snprintf(tok, sizeof tok, "%c%s %s%s", mark, b->name, num,
                     (b->flags & VIZ_BUF_REFUSED) ? " does not fit" : "");
        }
        int len = (int)strlen(tok);
        if (x > 0 && x + len > rw) {
            line++;
            x = 0;
        }
        if (draw && line < maxl)
            viz_canvas_text(c, x0 + x, y0 + line, rw - x, sty, tok);
        x += len + 1;
    }
    return st->nbuf ? line + 1 : 1;
}

static void draw_sram(const viz_model *m, viz_canvas *c, int x0, int y0, int rw, int maxl)
{
    const viz_info *in = viz_model_info(m);
    const viz_state *st = viz_model_state(m);
    uint64_t used = st->sram_used, shown = used;
    if (in->refused)
        for (int k = 0; k < st->nbuf; k++)
            if (st->buf[k].flags & VIZ_BUF_REFUSED)
                shown = st->buf[k].offset + st->buf[k].bytes;
    const uint64_t M = in->sh.M;
    char u[32], mb[32], head[96], tail[64];
    fmt_count(u, sizeof u, shown);
    fmt_count(mb, sizeof mb, M);
    /* The loop orders allocate their buffers when the run starts (the
     * papers' on-chip arrays): "allocated", not "loaded"; '>' and '<' mark
     * the buffers a tile moved into or out of at this step. */
    snprintf(head, sizeof head, "SRAM allocated (M = %s B):", mb);
    if ((int)strlen(head) > rw)
        snprintf(head, sizeof head, "SRAM (M = %s B):", mb);
    viz_canvas_text(c, x0, y0, rw, shown > M ? VIZ_ST_OVER : VIZ_ST_HEAD, head);
    snprintf(tail, sizeof tail, " %s B %d%%", u, (int)((shown * 100 + M / 2) / M));
    /* The bar: '#' up to the used bytes, '!' past M, '.' free; then the
     * bytes allocated and their share of M. */
    const int bw = rw - 2 - (int)strlen(tail);
    if (bw < 4)
        viz_canvas_text(c, x0, y0 + 1, rw, VIZ_ST_NORMAL, tail + 1);
    if (bw >= 4) {
        const uint64_t scale = shown > M ? shown : M;
        const int fill = (int)((shown * (uint64_t)bw + scale / 2) / scale);
        const int mpos = (int)(M * (uint64_t)bw / scale);
        viz_canvas_text(c, x0, y0 + 1, 1, VIZ_ST_NORMAL, "[");
        for (int q = 0; q < bw; q++) {
            if (q < fill && q < mpos)
                viz_canvas_fill(c, x0 + 1 + q, y0 + 1, 1, '#', VIZ_ST_BAR);
            else if (q < fill)
                viz_canvas_fill(c, x0 + 1 + q, y0 + 1, 1, '!', VIZ_ST_OVER);
            else
                viz_canvas_fill(c, x0 + 1 + q, y0 + 1, 1, '.', VIZ_ST_DIM);
        }
        viz_canvas_text(c, x0 + 1 + bw, y0 + 1, 1, VIZ_ST_NORMAL, "]");
        viz_canvas_text(c, x0 + 2 + bw, y0 + 1, rw - bw - 2, shown > M ? VIZ_ST_OVER
                                                                      : VIZ_ST_NORMAL, tail);
    }
    draw_buffers(m, c, x0, y0 + 2, rw, maxl - 2, 1);
}

/* ---- statistics ---------------------------------------------------------- */

static void draw_stats(const viz_model *m, viz_canvas *c, int y0, int rows, int w)
{
    const viz_info *in = viz_model_info(m);
    const viz_state *st = viz_model_state(m);
    const viz_stats *s = &st->stats;
    if (rows < 1)
        return;
    if (in->refused) {
        viz_canvas_text(c, 0, y0, w, VIZ_ST_HEAD, "STATISTICS  none: the plan was refused");
        return;
    }
    if (!s->available) {
        viz_canvas_text(c, 0, y0, w, VIZ_ST_HEAD,
                        "STATISTICS  unavailable: no data in a count-only run");
        if (rows > 1 && in->mode_note[0])
            viz_canvas_text(c, 2, y0 + 1, w - 2, VIZ_ST_DIM, in->mode_note);
        return;
    }
    const sim_loop *l = viz_loop(in);
    if (l && l->no_stats) {
        viz_canvas_printf(c, 0, y0, w, VIZ_ST_HEAD, "STATISTICS  none: %s", l->no_stats);
        if (rows > 1 && l->no_stats_detail)
            viz_canvas_text(c, 2, y0 + 1, w - 2, VIZ_ST_DIM, l->no_stats_detail);
        return;
    }
    if (!s->shown && !s->out_shown) {
        viz_canvas_text(c, 0, y0, w, VIZ_ST_HEAD,
                        "STATISTICS  none at this line (no row block's m, l or O on chip)");
        return;
    }
    int y = y0;
    const int64_t r_end = s->row0 + s->block_rows;
    if (s->shown) {
        char chg[48] = "";
        if (s->before_valid && s->after_valid && !s->m_is_L_before && !s->m_is_L_after)
            snprintf(chg, sizeof chg, "; max changed in %d row%s", s->nchanged,
                     s->nchanged == 1 ? "" : "s");
        viz_canvas_printf(c, 0, y++, w, VIZ_ST_HEAD,
                          "STATISTICS  block %lld, rows [%lld:%lld)%s", (long long)st->i + 1,
                          (long long)s->row0, (long long)r_end, chg);
    } else {
        viz_canvas_printf(c, 0, y++, w, VIZ_ST_HEAD, "OUTPUT  block %lld, rows [%lld:%lld)",
                          (long long)st->i + 1, (long long)s->row0, (long long)r_end);
    }
    const int out_lines = s->out_shown ? (rows - 1 >= 6 ? 2 : 1) : 0;
    int table = rows - 1 - out_lines;
    if (s->shown && table >= 2) {
        const int cw = 11;
        /* FA2's line 13 turns m_i into L_i = m_i + log l_i in m_i's buffer:
         * m_new stays m_old there, and L_i has a column of its own, so that
         * no column changes its name between old and new. */
        const int to_L = s->m_is_L_after && !s->m_is_L_before;
        char h[160];
        snprintf(h, sizeof h, " %5s %*s %*s %*s %*s %*s", "row", cw,
                 s->m_is_L_before ? "L_old" : "m_old", cw,
                 s->m_is_L_after && !to_L ? "L_new" : "m_new", cw, "l_old", cw, "l_new", cw + 4,
                 to_L ? "L=m_new+log l" : s->alpha_shown ? "e^(m_old-m_new)" : "");
        viz_canvas_text(c, 0, y++, w, VIZ_ST_DIM, h);
        table--;
        int nshow = s->nrows < table ? s->nrows : table;
        for (int r = 0; r < nshow; r++) {
            char v[5][24];
            if (s->before_valid) {
                fmt_val(v[0], sizeof v[0], s->m_old[r], cw);
                fmt_val(v[2], sizeof v[2], s->l_old[r], cw);
            } else {
                snprintf(v[0], sizeof v[0], "%*s", cw, "-");
                snprintf(v[2], sizeof v[2], "%*s", cw, "-");
            }
            if (s->after_valid) {
                fmt_val(v[1], sizeof v[1], to_L && s->before_valid ? s->m_old[r] : s->m_new[r], cw);
                fmt_val(v[3], sizeof v[3], s->l_new[r], cw);
            } else {
                snprintf(v[1], sizeof v[1], "%*s", cw, "-");
                snprintf(v[3], sizeof v[3], "%*s", cw, "-");
            }
            if (to_L && s->after_valid)
                fmt_val(v[4], sizeof v[4], s->m_new[r], cw + 4);
            else if (s->alpha_shown)
                fmt_val(v[4], sizeof v[4], s->alpha[r], cw + 4);
            else
                v[4][0] = '\0';
            char line[200];
            snprintf(line, sizeof line, "%c%5lld %s %s %s %s %s", s->changed[r] ? '*' : ' ',
                     (long long)(s->row0 + r), v[0], v[1], v[2], v[3], v[4]);
            viz_style sty = s->changed[r] ? VIZ_ST_CHANGED : VIZ_ST_NORMAL;
            if (s->changed[r])
                viz_canvas_fill(c, 0, y, w < 80 ? w : 80, ' ', sty);
            viz_canvas_text(c, 0, y++, w, sty, line);
        }
        if (nshow < s->block_rows && y < y0 + rows - out_lines)
            viz_canvas_printf(c, 0, y++, w, VIZ_ST_DIM, "  ... %lld more rows",
                              (long long)(s->block_rows - nshow));
    }
    if (s->out_shown) {
        if (y > y0 + rows - out_lines)
            y = y0 + rows - out_lines;
        for (int k = 0; k < out_lines; k++) {
            const int after = out_lines == 1 || k == 1;
            const int norm = after ? s->out_normalised : s->out_normalised_before;
            const char *what = norm ? "normalised" : "unnormalised";
            const int valid = after ? s->after_valid : s->before_valid;
            const float *o = after ? s->out_new : s->out_old;
            char buf[256];
            int n = snprintf(buf, sizeof buf, "O row %lld %s (%s):",
                             (long long)(s->row0 + s->out_row), after ? "after " : "before",
                             what);
            if (!valid) {
                snprintf(buf + n, sizeof buf - (size_t)n, " -");
            } else {
                int q = 0;
                /* Each value takes 8 columns; keep 4 for " ...". */
                for (; q < s->out_cols && n + 8 + 4 <= w; q++)
                    n += snprintf(buf + n, sizeof buf - (size_t)n, " %+.4f", (double)o[q]);
                if (q < in->sh.d)
                    snprintf(buf + n, sizeof buf - (size_t)n, " ...");
            }
            viz_canvas_text(c, 0, y + k, w, VIZ_ST_NORMAL, buf);
        }
    }
}

/* ---- a warp-specialised kernel's pipeline (FA3) ---------------------------- */

/* The PIPELINE panel's lines (0: this loop order has none). */
static int pipeline_lines(const viz_model *m)
{
    sim_pipe_row rows[SIM_PIPE_ROWS];
    const int n = viz_model_pipeline(m, rows);
    return n > 0 ? 1 + n : 0;
}

/* The panel in `rows` lines from y0: a head saying there is no clock here
 * and where time is, then who does what at this step. */
static void draw_pipeline(const viz_model *m, viz_canvas *c, int y0, int rows, int w)
{
    sim_pipe_row r[SIM_PIPE_ROWS];
    const int n = viz_model_pipeline(m, r);
    if (n <= 0 || rows < 1)
        return;
    viz_canvas_text(c, 0, y0, w, VIZ_ST_HEAD,
                    "PIPELINE  order only, no clock (time: fasim --gpu h100 --algo fa3 "
                    "--timeline -)");
    int lw = 0;                /* the labels' column */
    for (int k = 0; k < n; k++)
        if ((int)strlen(r[k].who) > lw)
            lw = (int)strlen(r[k].who);
    for (int k = 0; k < n && k + 1 < rows; k++)
        viz_canvas_printf(c, 0, y0 + 1 + k, w, VIZ_ST_NORMAL, "  %-*s  %s", lw, r[k].who,
                          r[k].what);
}

/* ---- this step's transfers ------------------------------------------------ */

static void draw_moved(const viz_model *m, viz_canvas *c, int y, int w)
{
    const viz_info *in = viz_model_info(m);
    const viz_state *st = viz_model_state(m);
    char buf[512];
    int n = snprintf(buf, sizeof buf, "moved:");
    if (in->refused) {
        viz_canvas_text(c, 0, y, w, VIZ_ST_NORMAL, "moved: nothing (the plan was refused)");
        return;
    }
    if (st->nxfer == 0)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " nothing (on-chip work)");
    int shown = 0;
    for (int k = 0; k < st->nxfer && n < (int)sizeof buf - 80; k++) {
        const viz_transfer *x = &st->xfer[k];
        char range[80], b[32];
        if (in->tensor[x->tensor].cols == x->cols)
            snprintf(range, sizeof range, "%s[%lld:%lld]", sim_tensor_name(x->tensor),
                     (long long)x->r0, (long long)(x->r0 + x->rows));
        else
            snprintf(range, sizeof range, "%s[%lld:%lld,%lld:%lld]",
                     sim_tensor_name(x->tensor), (long long)x->r0,
                     (long long)(x->r0 + x->rows), (long long)x->c0,
                     (long long)(x->c0 + x->cols));
        fmt_count(b, sizeof b, x->bytes);
        /* FA2's line 13 writes L_i = m_i + log l_i into m_i's buffer: the
         * store names what it holds, not the buffer's first use. */
        char what[64];
        if (x->tensor == SIM_L && x->buf && !strcmp(x->buf, "m_i"))
            snprintf(what, sizeof what, "L_i (in m_i's buffer)");
        else
            snprintf(what, sizeof what, "%s", x->buf ? x->buf : "?");
        char item[256];
        if (x->kind == SIM_EV_LOAD)
            snprintf(item, sizeof item, "%s %s -> %s %s B", shown ? "," : "", range, what, b);
        else
            snprintf(item, sizeof item, "%s %s <- %s %s B", shown ? "," : "", range, what, b);
        if (n + (int)strlen(item) > w - 12 && shown) {
            snprintf(buf + n, sizeof buf - (size_t)n, " +%d more", st->nxfer - k);
            break;
        }
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s", item);
        shown++;
    }
    viz_canvas_text(c, 0, y, w, VIZ_ST_NORMAL, buf);
}

/* ---- the whole frame ------------------------------------------------------ */

/* The HBM column's arrangement: the tile grids, the block grid beside them
 * (FA1, FA2), and the counters beside both when there is room (wide
 * windows), else packed below them after their header. */
typedef struct {
    char items[MAX_ITEMS + 1][192];
    char head[48];             /* the counters' header (counter_head) */
    int nitems;
    int w[SIM_TENSOR_COUNT];   /* grid widths (grid_widths) */
    int bw;                    /* the block grid's columns (0: none) */
    int side;                  /* 1: counters beside the grids */
    int cw;                    /* their width when beside */
    int gap;
    int counter_lines;
} hbm_cols;

/* The block grid's columns beside tile grids of width gw in lw columns (a
 * space kept before what follows): one per block up to T_c, at least 4 (or
 * T_c), else none. */
static int block_cols(const viz_info *in, int lw, int gw, int gap)
{
    if (!in->blocks)
        return 0;
    int bw = lw - gw - gap - 1;
    if (bw > in->plan.Tc)
        bw = (int)in->plan.Tc;
    return bw >= 4 || (bw > 0 && bw == in->plan.Tc) ? bw : 0;
}

static void arrange_hbm(const viz_model *m, int lw, hbm_cols *hc)
{
    const viz_info *in = viz_model_info(m);
    /* The block grid wants at least 4 columns (or T_c) beside the tiles. */
    const int bmin = in->blocks ? GAP + (int)(in->plan.Tc < 4 ? in->plan.Tc : 4) + 1 : 0;
    int gap = GAP, cell, cell1, w1[SIM_TENSOR_COUNT];
    int gw = grid_widths(in, lw - bmin, gap, hc->w, &cell);
    /* One column between grids where it buys wider cells (a count beside
     * each mark) or is the only way to fit. */
    const int gw1 = grid_widths(in, lw - bmin, 1, w1, &cell1);
    const int tc = in->blocks ? (int)in->plan.Tc : 0;
    if (gw > lw - bmin || (cell && (cell1 == 0 || cell1 > cell) && gw1 <= lw - bmin) ||
        (cell1 == cell && gw + GAP + tc + 1 > lw && gw1 + 1 + tc + 1 <= lw)) {
        gap = 1;
        gw = gw1;
        memcpy(hc->w, w1, sizeof w1);
    }
    /* Counters beside: when the grids, the whole block grid and the widest
     * exact counter item fit. */
    const int bfull = in->blocks ? GAP + (int)(in->plan.Tc > BLOCKS_W ? in->plan.Tc : BLOCKS_W) + 1
                                 : 0;
    int cw = counter_width(m, 1, lw);
    if (cw < (int)strlen(COUNTER_HEAD))
        cw = (int)strlen(COUNTER_HEAD);
    const int side = gw + bfull + GAP + cw <= lw;
    if (side) {
        hc->bw = block_cols(in, lw - cw - GAP, gw, gap);
        /* The block grid's column is at least as wide as its heading. */
        const int bcol = hc->bw ? GAP + (hc->bw > BLOCKS_W ? hc->bw : BLOCKS_W) : 0;
        cw = lw - (gw + bcol) - GAP;
        const int unit = counter_unit(m, 1, cw);
        counter_head(hc->head, sizeof hc->head, unit);
        hc->nitems = counter_items(m, 1, unit, hc->items);
        hc->counter_lines = 1 + hc->nitems;
    } else {
        hc->bw = block_cols(in, lw, gw, gap);
        /* Packed into lines of lw columns after their header. */
        const int unit = counter_unit(m, 0, lw);
        counter_head(hc->head, sizeof hc->head, unit);
        snprintf(hc->items[0], sizeof hc->items[0], "%s:", hc->head);
        hc->nitems = 1 + counter_items(m, 0, unit, hc->items + 1);
        hc->counter_lines = 0;
        for (int k = 0, x = 0; k < hc->nitems; k++) {
            const int len = (int)strlen(hc->items[k]);
            if (k == 0 || x + GAP + len > lw) {
                hc->counter_lines++;
                x = len;
            } else {
                x += GAP + len;
            }
        }
    }
    hc->side = side;
    hc->cw = cw;
    hc->gap = gap;
}

/* The two legend lines of the HBM column: what a cell's counts and marks
 * mean. No mark is the letter of a tensor (the loop orders move Q, K, V, O,
 * S, P, m, l, L, O~ and the backward's dO, dQ, dK, dV, D, dP, dS). */
static void draw_legend(const viz_model *m, viz_canvas *c, int y, int lw, const hbm_cols *hc,
                        int bh)
{
    const viz_info *in = viz_model_info(m);
    int digits = 0, counts = 0, one = 0, over = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        const viz_tensor_info *ti = &in->tensor[t];
        if (!ti->present)
            continue;
        const int64_t per_tile = is_wide((sim_tensor)t) ? hc->w[t] / ti->grid_cols : hc->w[t];
        if (per_tile < cell_need(ti))
            digits = 1;
        else
            counts = 1;
        one |= per_tile < 2;
        over |= ti->max_reads > 9 || ti->max_writes > 9 || ti->max_reads + ti->max_writes > 9;
    }
    /* What a cell's count means, and what stands for more than nine: "9+"
     * in a count, '+' for a digit; a one-column cell shows its mark in
     * place of the digit. */
    char head[96];
    if (!digits)
        snprintf(head, sizeof head, "HBM  2r1w: read twice, written once%s",
                 over ? "; 9+: >9" : "");
    else if (counts && one && !over)
        snprintf(head, sizeof head, "HBM  2r1w: 2 reads 1 write; 3 in all or mark");
    else if (counts)
        snprintf(head, sizeof head, "HBM  2r1w: 2 reads, 1 write; 3 in all%s",
                 over ? ", + >9" : "");
    else if (one)
        snprintf(head, sizeof head, "HBM  3: reads+writes%s; a mark hides it",
                 over ? ", +: >9" : "");
    else
        snprintf(head, sizeof head, "HBM  3: tile read or written 3 times%s",
                 over ? "; +: >9" : "");
    viz_canvas_text(c, 0, y, lw, VIZ_ST_HEAD, head);
    /* A block character standing for several blocks, some done and some
     * to come, shows ':'. */
    const int sr = hc->bw && (in->plan.Tr > bh || in->plan.Tc > hc->bw);
    viz_canvas_text(c, 0, y + 1, lw, VIZ_ST_DIM,
                    !hc->bw ? "> load  < store  * in hand now"
                    : sr    ? "> load < store * now # done : part - skipped"
                            : "> load  < store  * now  # done  - skipped");
}

/* The HBM column: the legend, the grids in gh rows, a row saying how many
 * tiles (blocks) a cell stands for when it is more than one, and the
 * counters. */
static void draw_hbm(const viz_model *m, viz_canvas *c, int body0, int top, int lw,
                     const hbm_cols *hc, viz_layout *out)
{
    const viz_info *in = viz_model_info(m);
    const int side = hc->side, nitems = hc->nitems;
    const int cw = hc->cw;
    int gh = top - 3 - (side ? 0 : hc->counter_lines);
    int maxg = 1;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        if (in->tensor[t].present && in->tensor[t].grid_rows > maxg)
            maxg = (int)(in->tensor[t].grid_rows < 1000 ? in->tensor[t].grid_rows : 1000);
    if (hc->bw && in->plan.Tr > maxg)
        maxg = (int)(in->plan.Tr < 1000 ? in->plan.Tr : 1000);
    if (gh > 4 * maxg)
        gh = 4 * maxg;
    int sr, sc;
    grid_scale(in, gh < 1 ? 1 : gh, hc->w, &sr, &sc);
    const int note = sr > 1 || sc > 1 || (hc->bw && (in->plan.Tr > gh || in->plan.Tc > hc->bw));
    if (note)
        gh--;
    const int lo = side ? hc->counter_lines - note : 1;
    if (gh < 1)
        gh = 1;
    gh = pick_grid_height(in, gh, lo);
    grid_scale(in, gh, hc->w, &sr, &sc);
    const int bh = hc->bw ? (int)(in->plan.Tr < gh ? in->plan.Tr : gh) : 0;
    draw_legend(m, c, body0, lw, hc, bh);
    const int gx = draw_grids(m, c, body0 + 2, gh, hc->w, hc->gap, out);
    if (hc->bw)
        draw_blocks(m, c, gx + hc->gap, body0 + 2, bh, hc->bw);
    int y = body0 + 3 + gh;
    if (note) {
        /* Beside the last counter line, if one reaches this row. */
        const int nw = side && hc->counter_lines > gh + 1 ? lw - cw - GAP : lw;
        char cellp[48] = "", buf[160] = "";
        if (sc > 1)
            snprintf(cellp, sizeof cellp, "cell <= %dx%d tiles", sr, sc);
        else if (sr > 1)
            snprintf(cellp, sizeof cellp, "cell <= %d tiles", sr);
        snprintf(buf, sizeof buf, "%s", cellp);
        if (bh && (in->plan.Tr > bh || in->plan.Tc > hc->bw)) {
            /* The blocks a character stands for, rows x columns said in
             * words where they fit. */
            const long long br = (in->plan.Tr + bh - 1) / bh,
                            bc = (in->plan.Tc + hc->bw - 1) / hc->bw;
            snprintf(buf, sizeof buf, "%s%sblock char <= %lld row%s x %lld col%s", cellp,
                     cellp[0] ? ", " : "",
                     br, br == 1 ? "" : "s", bc, bc == 1 ? "" : "s");
            if ((int)strlen(buf) > nw)
                snprintf(buf, sizeof buf, "%s%sblock char: %lld row%s x %lld col%s", cellp,
                         cellp[0] ? "; " : "", br, br == 1 ? "" : "s", bc, bc == 1 ? "" : "s");
            if ((int)strlen(buf) > nw && cellp[0])
                snprintf(buf, sizeof buf, "%s; char: %lld row%s x %lld col%s of blocks", cellp,
                         br, br == 1 ? "" : "s", bc, bc == 1 ? "" : "s");
            if ((int)strlen(buf) > nw && cellp[0])
                snprintf(buf, sizeof buf, "%s; char: %lld row%s x %lld col%s", cellp, br,
                         br == 1 ? "" : "s", bc, bc == 1 ? "" : "s");
            if ((int)strlen(buf) > nw && cellp[0]) {
                if (sc > 1)
                    snprintf(cellp, sizeof cellp, "cell<=%dx%d", sr, sc);
                else
                    snprintf(cellp, sizeof cellp, "cell<=%d", sr);
                snprintf(buf, sizeof buf, "%s; block char: %lld row%s x %lld col%s", cellp, br,
                         br == 1 ? "" : "s", bc, bc == 1 ? "" : "s");
            }
        }
        viz_canvas_text(c, 0, y, nw, VIZ_ST_DIM, buf);
        y++;
    }
    if (side) {
        const int cx = lw - cw;
        viz_canvas_text(c, cx, body0 + 2, cw, VIZ_ST_DIM, hc->head);
        for (int k = 0; k < nitems; k++)
            viz_canvas_text(c, cx, body0 + 3 + k, cw, VIZ_ST_NORMAL, hc->items[k]);
    } else {
        for (int k = 0, x = 0; k < nitems; k++) {
            const int len = (int)strlen(hc->items[k]);
            if (k > 0 && x + GAP + len > lw) {
                y++;
                x = 0;
            } else if (k > 0) {
                x += GAP;
            }
            viz_canvas_text(c, x, y, lw - x, k ? VIZ_ST_NORMAL : VIZ_ST_DIM, hc->items[k]);
            x += len;
        }
    }
}

/* Rows for the statistics: a header, column names, the block's rows, two
 * O rows; at most 40% of the body in large windows, and what is left in
 * small ones. Returns the rows above them (at least 6). */
static int body_top(const viz_model *m, int nbody, int top_min, int pipe)
{
    const viz_info *in = viz_model_info(m);
    const viz_state *st = viz_model_state(m);
    const sim_loop *l = viz_loop(in);
    const viz_stats *s = &st->stats;
    int want = 3 + (s->nrows > 0 ? s->nrows : (int)(in->plan.Br < 64 ? in->plan.Br : 64)) + 2;
    if (!in->computed || in->refused || (l && l->no_stats))
        want = 2;             /* no statistics in this run: a note */
    /* a pipeline panel (pipe lines) comes on top of the statistics' share */
    want += pipe;
    int cap = nbody * 2 / 5 + pipe;
    if (cap > nbody - top_min)
        cap = nbody - top_min;
    if (want > cap)
        want = cap;
    if (want < 1)
        want = 1;
    int top = nbody - want;
    if (top < 6)
        top = 6;
    return top;
}

void viz_layout_draw(const viz_model *m, viz_canvas *c, const viz_frame_opts *o,
                     viz_layout *out)
{
    viz_canvas_clear(c);
    if (out)
        memset(out, 0, sizeof *out);
    const viz_info *in = viz_model_info(m);
    const int W = c->w, H = c->h;
    const int has_status = o && o->status;
    const int msg_y = H - 1 - has_status;
    if (out)
        out->too_small = W < MIN_W || H < 23 + has_status;

    draw_title(m, c);
    if (H > 1) {
        /* The renderer's state ("paused") at the right end; the position
         * stops a column before it. */
        const int len = o && o->state ? (int)strlen(o->state) : 0;
        draw_where(m, c, len ? W - len - 1 : -1);
        if (len)
            viz_canvas_text(c, W - len, 1, len, VIZ_ST_TITLE, o->state);
    }
    const int body0 = 2, nbody = msg_y - body0;
    if (nbody < 4) {
        if (msg_y > 1)
            viz_canvas_text(c, 0, msg_y, W, VIZ_ST_DIM, "(window too small: 80 x 24 or more)");
        if (has_status)
            viz_canvas_text(c, 0, H - 1, W, VIZ_ST_STATUS, o->status);
        return;
    }

    /* Columns: HBM on the left, pseudocode and SRAM on the right. */
    int lw = W * 55 / 100;
    if (lw < 44)
        lw = W - 36 > 20 ? W - 36 : W / 2;
    const int x1 = lw + 1, rw = W - x1;

    hbm_cols hc;
    arrange_hbm(m, lw, &hc);
    const int buf_lines = draw_buffers(m, c, x1, 0, rw, 0, 0);
    /* The least the top part needs: the legend, the names and grids of 4
     * rows beside the counters, 6 above them (the statistics give up rows
     * first: the grids and the block grid are the picture); 5 lines of
     * code. */
    int top_min = hc.side ? 3 + (hc.counter_lines > 4 ? hc.counter_lines : 4)
                          : 3 + 6 + hc.counter_lines;
    if (1 + 5 + 2 + buf_lines > top_min)
        top_min = 1 + 5 + 2 + buf_lines;
    const int pipe = pipeline_lines(m);
    const int top = body_top(m, nbody, top_min, pipe);
    const int bottom_y = body0 + top;
    /* the pipeline panel first, the statistics below it in what is left */
    const int pipe_rows = pipe < msg_y - bottom_y ? pipe : msg_y - bottom_y;
    const int stats_y = bottom_y + pipe_rows, stats_rows = msg_y - stats_y;
    draw_hbm(m, c, body0, top, lw, &hc, out);

    /* Right: pseudocode, then SRAM. */
    for (int y = body0; y < bottom_y; y++)
        viz_canvas_fill(c, lw, y, 1, '|', VIZ_ST_DIM);
    const int sram_lines = 2 + buf_lines;
    int ph = top - 1 - sram_lines;
    int n;
    (void)viz_pseudocode(in, &n);
    if (ph > n)
        ph = n;
    if (ph < 1)
        ph = 1;
    draw_code(m, c, x1, body0, ph, rw);
    draw_sram(m, c, x1, body0 + 1 + ph, rw, top - 1 - ph);

    /* Bottom: the pipeline (FA3), statistics, what moved, the status line. */
    draw_pipeline(m, c, bottom_y, pipe_rows, W);
    draw_stats(m, c, stats_y, stats_rows, W);
    if (o && o->message)
        viz_canvas_text(c, 0, msg_y, W, VIZ_ST_NORMAL, o->message);
    else
        draw_moved(m, c, msg_y, W);
    if (has_status)
        viz_canvas_text(c, 0, H - 1, W, VIZ_ST_STATUS, o->status);
}

int viz_layout_hit(const viz_layout *l, const viz_model *m, int x, int y, sim_tensor *t,
                   int64_t *tr, int64_t *tc)
{
    const viz_info *in = viz_model_info(m);
    for (int k = 0; k < SIM_TENSOR_COUNT; k++) {
        const viz_grid_rect *g = &l->grid[k];
        if (!g->present || x < g->x || x >= g->x + g->w || y < g->y || y >= g->y + g->h)
            continue;
        const viz_tensor_info *ti = &in->tensor[g->tensor];
        int64_t a0, a1, b0, b1;
        viz_axis_cell(ti->rows, ti->tile_rows, g->h, y - g->y, &a0, &a1);
        viz_axis_cell(ti->cols, ti->tile_cols, g->w, x - g->x, &b0, &b1);
        *t = g->tensor;
        *tr = a0;
        *tc = b0;
        return 1;
    }
    return 0;
}
