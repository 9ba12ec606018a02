/*
 * viz_timeline.c — the GPU model's SMs over time (see viz_timeline.h).
 */
#include "viz_timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int viz_timeline_init(viz_timeline *tl, int sms, int max_slots, int64_t max_blocks)
{
    memset(tl, 0, sizeof *tl);
    tl->sms = sms;
    tl->max_slots = max_slots;
    tl->max_blocks = max_blocks;
    tl->waves = calloc((size_t)sms * (size_t)max_slots, sizeof *tl->waves);
    return tl->waves ? 0 : -1;
}

void viz_timeline_free(viz_timeline *tl)
{
    free(tl->b);
    free(tl->waves);
    memset(tl, 0, sizeof *tl);
}

void viz_timeline_on_block(void *ctx, int kernel, int sm, int slot, double t0, double t1,
                           int64_t head, int64_t block)
{
    viz_timeline *tl = ctx;
    if (tl->failed || sm < 0 || sm >= tl->sms || slot < 0 || slot >= tl->max_slots)
        return;
    int *w = &tl->waves[(size_t)sm * (size_t)tl->max_slots + (size_t)slot];
    const int wave = (*w)++;
    if (t1 > tl->t_end)
        tl->t_end = t1;
    if (slot + 1 > tl->slots)
        tl->slots = slot + 1;
    if (tl->n >= tl->max_blocks) {
        tl->dropped++;
        return;
    }
    if (tl->n == tl->cap) {
        int64_t c = tl->cap ? tl->cap * 2 : 4096;
        viz_tl_block *nb = realloc(tl->b, sizeof *nb * (size_t)c);
        if (!nb) {
            tl->failed = 1;
            return;
        }
        tl->b = nb;
        tl->cap = c;
    }
    tl->b[tl->n++] = (viz_tl_block){ .kernel = kernel, .sm = sm, .slot = slot, .wave = wave,
                                     .t0 = t0, .t1 = t1, .head = head, .block = block };
}

int viz_timeline_model(viz_timeline *tl, const sim_gpu *g, const sim_plan *p,
                       const sim_shape *sh, const sim_gm_opts *o, int64_t max_blocks,
                       sim_gm_result *res, char *err, size_t errlen)
{
    if (viz_timeline_init(tl, g->sms, g->max_blocks_per_sm, max_blocks) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    sim_gm_opts mo = *o;
    mo.trace = NULL;
    mo.on_block = viz_timeline_on_block;
    mo.ctx = tl;
    if (sim_gpu_model_run(g, p, sh, &mo, res, err, errlen) != 0 || tl->failed) {
        if (tl->failed)
            snprintf(err, errlen, "out of memory");
        viz_timeline_free(tl);
        return -1;
    }
    return 0;
}

static char wave_char(int w)
{
    static const char C[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    return C[w % 36];
}

/* The unit a time axis that ends at t_end is labelled in. */
typedef struct {
    double scale;                 /* seconds to the unit */
    const char *name;
} time_unit;

static time_unit unit_of(double t_end)
{
    return t_end >= 1e-3 ? (time_unit){ 1e3, "ms" } : (time_unit){ 1e6, "us" };
}

static void time_str(char *buf, size_t len, double t)
{
    const time_unit u = unit_of(t);
    snprintf(buf, len, "%.3g %s", t * u.scale, u.name);
}

/* A round tick spacing for an axis of length t (> 0): the smallest of
 * 1, 2, 5 x 10^k that gives at most ten ticks (so at least four). */
static double tick_step(double t)
{
    const double raw = t / 10, mag = pow(10, floor(log10(raw)));
    static const double NICE[] = { 1, 2, 5, 10 };
    for (int k = 0; k < 4; k++)
        if (NICE[k] * mag >= raw * (1 - 1e-9))
            return NICE[k] * mag;
    return 10 * mag;
}

void viz_timeline_text(FILE *out, const viz_timeline *tl, const char *title, int width,
                       int rows)
{
    const int label = 7;                     /* "SM 107 " */
    int cols = width - label;
    if (cols < 10)
        cols = 10;
    const int shown = tl->sms < rows ? tl->sms : rows;
    char *grid = malloc((size_t)shown * (size_t)cols);
    if (!grid || tl->t_end <= 0) {
        free(grid);
        fprintf(out, "%s: no blocks ran\n", title);
        return;
    }
    memset(grid, '.', (size_t)shown * (size_t)cols);
    for (int64_t k = 0; k < tl->n; k++) {
        const viz_tl_block *b = &tl->b[k];
        if (b->sm >= shown || b->slot != 0)
            continue;
        int c0 = (int)(b->t0 / tl->t_end * cols), c1 = (int)(b->t1 / tl->t_end * cols);
        if (c1 >= cols)
            c1 = cols - 1;
        for (int c = c0; c <= c1; c++)
            grid[(size_t)b->sm * (size_t)cols + (size_t)c] = wave_char(b->wave);
    }
    char t1[32], tc[32];
    time_str(t1, sizeof t1, tl->t_end);
    time_str(tc, sizeof tc, tl->t_end / cols);
    fprintf(out, "%s\n", title);
    fprintf(out, "SMs over time, 0 .. %s (a column is %s); each cell the wave of the\n", t1,
            tc);
    fprintf(out, "block on the SM's first slot (0-9, a-z), '.' idle\n");
    for (int r = 0; r < shown; r++)
        fprintf(out, "SM %-3d %.*s\n", r, cols, grid + (size_t)r * (size_t)cols);
    if (shown < tl->sms)
        fprintf(out, "(SMs %d .. %d not shown: the first %d of %d)\n", shown, tl->sms - 1, shown,
                tl->sms);
    if (tl->dropped)
        fprintf(out, "(%lld later blocks not drawn)\n", (long long)tl->dropped);
    free(grid);
}

void viz_timeline_svg(FILE *out, const viz_timeline *tl, const char *title,
                      const sim_gm_result *r)
{
    const double W = 1200, left = 60, top = 56, row = 6, right = 20;
    const int slots = tl->slots > 0 ? tl->slots : 1;
    const double H = top + row * tl->sms + 60;
    const double plot = W - left - right;
    const double tend = tl->t_end > 0 ? tl->t_end : 1;
    /* Two hues alternate by wave, shaded by slot; a second kernel takes
     * another pair. */
    static const char *const FILL[4][2] = {
        { "#4c72b0", "#8fa8d6" }, { "#dd8452", "#f0b894" },
        { "#55a868", "#97cfa4" }, { "#8172b3", "#b7acd9" },
    };
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, sans-serif\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n", W, H, W, H);
    fprintf(out, "<text x=\"%.0f\" y=\"22\" font-size=\"16\" fill=\"#000\">", left);
    for (const char *c = title; *c; c++) {
        if (*c == '<')
            fputs("&lt;", out);
        else if (*c == '&')
            fputs("&amp;", out);
        else
            fputc(*c, out);
    }
    fprintf(out, "</text>\n");
    const time_unit u = unit_of(tend);
    if (r)
        fprintf(out, "<text x=\"%.0f\" y=\"42\" font-size=\"12\" fill=\"#333\">%lld blocks, "
                "%d resident per SM, %.2f waves, %d SMs busy; predicted %.4g %s, %.1f "
                "TFLOP/s; L2 hit rate %.1f%%; one row per SM, its slots stacked, colour by wave</text>\n",
                left, (long long)r->blocks, r->occupancy, r->waves, r->sms_busy,
                r->time_s * u.scale, u.name, r->tflops, r->l2_hit_rate * 100);
    for (int64_t k = 0; k < tl->n; k++) {
        const viz_tl_block *b = &tl->b[k];
        const double x = left + b->t0 / tend * plot, w = (b->t1 - b->t0) / tend * plot;
        const double y = top + b->sm * row + (double)b->slot * row / slots;
        fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n",
                x, y, w > 0.3 ? w - 0.15 : 0.15, row / slots - 0.3,
                FILL[b->kernel % 4][b->wave % 2]);
    }
    /* the axis: ticks at round times (1, 2 or 5 x 10^k, four to ten of
     * them), every label in the header's unit */
    const double ybase = top + row * tl->sms + 4;
    fprintf(out, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#000\"/>\n",
            left, ybase, left + plot, ybase);
    const double step = tick_step(tend);
    for (int k = 0; k * step <= tend * (1 + 1e-9); k++) {
        const double x = left + plot * (k * step) / tend;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">%g</text>\n",
                x, ybase, x, ybase + 5, x, ybase + 19, k * step * u.scale);
    }
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">time, %s</text>\n",
            left + plot, ybase + 34, u.name);
    fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\" "
            "transform=\"rotate(-90 %.0f %.1f)\">SM</text>\n", left - 8, top + 20, left - 8,
            top + 20);
    fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"12\">SM 0</text>\n", 8.0, top + 6);
    fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"12\">SM %d</text>\n", 8.0,
            top + row * tl->sms, tl->sms - 1);
    if (tl->dropped)
        fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"12\">%lld later blocks not "
                "drawn</text>\n", left, H - 6, (long long)tl->dropped);
    fprintf(out, "</svg>\n");
}
