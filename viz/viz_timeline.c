/*
 * viz_timeline.c — the GPU model's SMs over time (see viz_timeline.h).
 */
#include "viz_timeline.h"
#include "sim_text.h"

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

void viz_timeline_on_fa3_step(void *ctx, const sim_gm_fa3_step *s)
{
    viz_timeline *tl = ctx;
    viz_tl_fa3 *f = &tl->fa3;
    if (s->sm != 0 || s->slot != 0 || f->done)
        return;
    if (f->steps == 0) {
        f->head = s->head;
        f->block = s->block;
        f->i = s->i;
    } else if (s->head != f->head || s->block != f->block) {
        f->done = 1;
        return;
    }
    f->steps++;
    if (f->n >= VIZ_TL_FA3_STEPS)
        return;
    viz_tl_fa3_step *k = &f->s[f->n++];
    k->j = s->j;
    k->t = s->t;
    k->dur = s->dur;
    k->freed = s->freed;
    k->n = s->n < SIM_FA3_MAX_SLICES ? s->n : SIM_FA3_MAX_SLICES;
    memcpy(k->sl, s->sl, sizeof *k->sl * (size_t)k->n);
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
    mo.on_fa3_step = viz_timeline_on_fa3_step;
    mo.ctx = tl;
    tl->fa3.no_pipeline = o->no_pipeline;
    tl->fa3.no_warp_spec = o->no_warp_spec;
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
    viz_timeline_fa3_text(out, tl, width);
}

/* ---- FA3's pipeline in one block ---------------------------------------- */

/* s (NUL-terminated, in place) with its spaces made unbreakable */
static char *glued(char *s)
{
    for (char *c = s; *c; c++)
        if (*c == ' ')
            *c = SIM_TEXT_NBSP;
    return s;
}

/* text wrapped to width columns, every line indented by indent */
static void wrap(FILE *out, const char *text, int width, int indent)
{
    const sim_wrap_style st = { (size_t)width, (size_t)indent, 0 };
    fprintf(out, "%*s", indent, "");
    sim_text_wrap(out, (size_t)indent, text, strlen(text), &st);
}

/* What each slice kind is drawn as, and said in the legend. */
static const struct {
    char c;
    const char *fill, *what;
} KIND[SIM_FA3_KINDS] = {
    [SIM_FA3_COPY] = { 'T', "#7f7f7f", "TMA copy of a block's K, V, charged beside its step" },
    [SIM_FA3_GEMM0] = { '0', "#4c72b0", "GEMM0 S = Q_i K_j^T" },
    [SIM_FA3_GEMM1] = { '1', "#55a868", "GEMM1 O_i += P~ V_j" },
    [SIM_FA3_GEMM1_GEMM0] = { 'X', "#2a9d8f", "GEMM0 (j) + GEMM1 (j-1)" },
    [SIM_FA3_SOFTMAX] = { 's', "#dd8452", "softmax" },
    [SIM_FA3_SOFTMAX_GEMM1] = { 'S', "#c44e52", "softmax (j) beside GEMM1 (j-1)" },
};

/* The rows' labels: the copies' row names who issues them. */
static const char *fa3_row(const viz_tl_fa3 *f, int track)
{
    static const char *const ROW[SIM_FA3_TRACKS] = { "producer", "WG1", "WG2" };
    return track == SIM_FA3_PRODUCER && f->no_warp_spec ? "WG copies" : ROW[track];
}

/* The steps pictured, at most `most`, and their span [*t0, *t1]. */
static int fa3_shown(const viz_tl_fa3 *f, int most, double *t0, double *t1)
{
    const int n = f->n < most ? f->n : most;
    if (n <= 0)
        return 0;
    *t0 = f->s[0].t;
    *t1 = f->s[n - 1].t + f->s[n - 1].dur;
    return *t1 > *t0 ? n : 0;
}

static int fa3_kinds_used(const viz_tl_fa3 *f, int n, int used[SIM_FA3_KINDS])
{
    int any = 0;
    memset(used, 0, sizeof *used * SIM_FA3_KINDS);
    for (int k = 0; k < n; k++)
        for (int q = 0; q < f->s[k].n; q++)
            if (f->s[k].sl[q].kind >= 0 && f->s[k].sl[q].kind < SIM_FA3_KINDS)
                any = used[f->s[k].sl[q].kind] = 1;
    return any;
}

/* What the legend says beside the kinds, in both pictures: what SMEM full
 * counts, that the model overlaps each copy with its step, who issues the
 * copies without a producer, and what is not drawn. Returns how many. */
static int fa3_notes(const viz_tl_fa3 *f, const char *note[4])
{
    int n = 0;
    note[n++] = "SMEM full: the ring's stages (of 2) holding a block's K, V: the step's own, "
                "and the block before's until its GEMM1 has read V";
    note[n++] = "the producer issues each copy a step ahead, so the model overlaps it with "
                "its step, also at j=1, where the kernel waits for it";
    if (f->no_warp_spec)
        note[n++] = "no producer: the consumers issue the copies and wait on them";
    if (!f->no_pipeline)
        note[n++] = "j=1 has no block j-1, so no GEMM1 (j-1), and what runs after a block's "
                    "last step (its last GEMM1s, and with ping-pong WG2's last softmax) is not "
                    "drawn: the model charges it as j=1's full time";
    return n;
}
_Static_assert(SIM_FA3_STAGES == 2, "fa3_notes says the ring has 2 stages");

#define FA3_LABEL 11           /* "SMEM full  " */
#define FA3_MOST 6             /* steps pictured at most */

void viz_timeline_fa3_text(FILE *out, const viz_timeline *tl, int width)
{
    const viz_tl_fa3 *f = &tl->fa3;
    int cols = width - FA3_LABEL;
    if (cols < 20)
        cols = 20;
    double T0, T1;
    /* at least ten columns a step, so that a softmax of a tenth of it shows */
    const int most = cols / 10 < FA3_MOST ? (cols / 10 > 0 ? cols / 10 : 1) : FA3_MOST;
    const int n = fa3_shown(f, most, &T0, &T1);
    if (n == 0)
        return;
    const double dt = (T1 - T0) / cols;
    char *row = malloc((size_t)(SIM_FA3_TRACKS + 2) * (size_t)(cols + 1));
    if (!row)
        return;
    char *ruler = row + (size_t)(SIM_FA3_TRACKS + 1) * (size_t)(cols + 1);
    memset(row, '.', (size_t)(SIM_FA3_TRACKS + 1) * (size_t)(cols + 1));
    memset(ruler, ' ', (size_t)cols);
    for (int r = 0; r < SIM_FA3_TRACKS + 2; r++)
        row[(size_t)r * (size_t)(cols + 1) + (size_t)cols] = 0;
    for (int k = 0; k < n; k++) {
        const viz_tl_fa3_step *st = &f->s[k];
        for (int q = 0; q < st->n; q++) {
            const sim_fa3_slice *sl = &st->sl[q];
            if (sl->track < 0 || sl->track >= SIM_FA3_TRACKS)
                continue;
            /* a slice's cells: its span rounded to columns, at least one */
            int c0 = (int)lround((st->t + sl->t0 - T0) / dt);
            int c1 = (int)lround((st->t + sl->t0 + sl->dur - T0) / dt);
            if (c1 <= c0)
                c1 = c0 + 1;
            if (c0 < 0)
                c0 = 0;
            for (int c = c0; c < c1 && c < cols; c++)
                row[(size_t)sl->track * (size_t)(cols + 1) + (size_t)c] = KIND[sl->kind].c;
        }
        /* the ruler: '|' at the step's start, then its j (1-based) where it fits */
        const int c0 = (int)lround((st->t - T0) / dt);
        if (c0 >= 0 && c0 < cols) {
            char lab[32];
            snprintf(lab, sizeof lab, "|j=%lld", (long long)st->j + 1);
            const int next = k + 1 < n ? (int)lround((f->s[k + 1].t - T0) / dt) : cols;
            for (int c = 0; lab[c] && c0 + c < next && c0 + c < cols; c++)
                ruler[c0 + c] = lab[c];
        }
    }
    /* the ring: each step's spans of stages full, rounded to columns as the
     * slices are (two from the step's start while the block before's V waits,
     * then one) */
    char *ring = row + (size_t)SIM_FA3_TRACKS * (size_t)(cols + 1);
    for (int k = 0; k < n; k++) {
        const viz_tl_fa3_step *st = &f->s[k];
        const double tb[3] = { 0, st->freed < st->dur ? st->freed : st->dur, st->dur };
        for (int p = 0; p < 2; p++) {
            if (tb[p + 1] <= tb[p])
                continue;
            int c0 = (int)lround((st->t + tb[p] - T0) / dt);
            const int c1 = (int)lround((st->t + tb[p + 1] - T0) / dt);
            if (c0 < 0)
                c0 = 0;
            for (int c = c0; c < c1 && c < cols; c++)
                ring[c] = (char)('0' + sim_fa3_stages_full(tb[p], st->freed));
        }
    }
    char tt[32], tc[32], tb[32], text[1024];
    time_str(tt, sizeof tt, T1 - T0);
    time_str(tc, sizeof tc, dt);
    time_str(tb, sizeof tb, T0);
    snprintf(text, sizeof text, "FA3's pipeline in SM 0's first thread block (query "
             "block i = %lld of head %lld), its first %d of %lld tile steps (--pipeline %s, "
             "--warp-specialization %s): %s from t = %s, a column is %s, '|' a step's start",
             (long long)f->i + 1, (long long)f->head, n, (long long)f->steps,
             f->no_pipeline ? "off" : "on", f->no_warp_spec ? "off" : "on", glued(tt),
             glued(tb), glued(tc));
    fputc('\n', out);
    wrap(out, text, width, 0);
    for (int c = cols - 1; c >= 0 && ruler[c] == ' '; c--)
        ruler[c] = 0;
    fprintf(out, "%-*s%s\n", FA3_LABEL, "step", ruler);
    for (int r = 0; r < SIM_FA3_TRACKS; r++)
        fprintf(out, "%-*s%s\n", FA3_LABEL, fa3_row(f, r), row + (size_t)r * (size_t)(cols + 1));
    fprintf(out, "%-*s%s\n", FA3_LABEL, "SMEM full", ring);
    int used[SIM_FA3_KINDS];
    fa3_kinds_used(f, n, used);
    size_t at = 0;
    for (int k = 0; k < SIM_FA3_KINDS; k++)
        if (used[k]) {
            const size_t from = at;
            at += (size_t)snprintf(text + at, sizeof text - at, "%c %s", KIND[k].c,
                                   KIND[k].what);
            glued(text + from);
            at += (size_t)snprintf(text + at, sizeof text - at, "; ");
        }
    at += (size_t)snprintf(text + at, sizeof text - at, "." SIM_TEXT_NBSP_S "idle or waiting");
    const char *note[4];
    const int nn = fa3_notes(f, note);
    for (int k = 0; k < nn && at < sizeof text; k++)
        at += (size_t)snprintf(text + at, sizeof text - at, "; %s", note[k]);
    wrap(out, text, width, FA3_LABEL);
    free(row);
}

/* The SVG's FA3 panel: n steps of f spanning [T0, T1], from (x0, y0),
 * `plot` wide; FA3_SVG_H tall with its legend. */
#define FA3_SVG_H 250
static void fa3_svg(FILE *out, const viz_tl_fa3 *f, int n, double T0, double T1, double x0,
                    double y0, double plot)
{
    const double rh = 22, gap = 4, y1 = y0 + 26;   /* rows from y1 */
    const double sx = plot / (T1 - T0);
    const time_unit u = unit_of(T1 - T0);
    fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"13\" fill=\"#000\">FA3's "
            "pipeline in SM 0's first thread block (query block i = %lld of head %lld): its "
            "first %d of %lld tile steps, --pipeline %s, --warp-specialization %s</text>\n",
            x0, y0 + 4, (long long)f->i + 1, (long long)f->head, n, (long long)f->steps,
            f->no_pipeline ? "off" : "on", f->no_warp_spec ? "off" : "on");
    for (int r = 0; r <= SIM_FA3_TRACKS; r++)
        fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%s"
                "</text>\n", x0 - 4, y1 + r * (rh + gap) + rh * 0.7,
                r < SIM_FA3_TRACKS ? fa3_row(f, r) : "SMEM full");
    for (int k = 0; k < n; k++) {
        const viz_tl_fa3_step *st = &f->s[k];
        const double xs = x0 + (st->t - T0) * sx;
        fprintf(out, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#999\" "
                "stroke-dasharray=\"3,2\"/>\n<text x=\"%.2f\" y=\"%.1f\" font-size=\"11\">"
                "j = %lld</text>\n", xs, y1 - 12, xs,
                y1 + (SIM_FA3_TRACKS + 1) * (rh + gap), xs + 3, y1 - 3, (long long)st->j + 1);
        for (int q = 0; q < st->n; q++) {
            const sim_fa3_slice *sl = &st->sl[q];
            if (sl->track < 0 || sl->track >= SIM_FA3_TRACKS)
                continue;
            const double x = xs + sl->t0 * sx, w = sl->dur * sx;
            const double y = y1 + sl->track * (rh + gap);
            fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                    "fill=\"%s\"><title>%s</title></rect>\n", x, y, w > 0.6 ? w - 0.3 : 0.3,
                    rh, KIND[sl->kind].fill, sl->name);
            if (w > 12)
                fprintf(out, "<text x=\"%.2f\" y=\"%.1f\" font-size=\"11\" "
                        "text-anchor=\"middle\" fill=\"#fff\">%c</text>\n", x + w / 2,
                        y + rh * 0.7, KIND[sl->kind].c);
        }
        /* the ring: a bar as high as its stages full, from the step's start
         * and from when the block before's stage is freed */
        const double yr = y1 + SIM_FA3_TRACKS * (rh + gap);
        const double tb[3] = { 0, st->freed < st->dur ? st->freed : st->dur, st->dur };
        for (int p = 0; p < 2; p++) {
            if (tb[p + 1] <= tb[p])
                continue;
            const int full = sim_fa3_stages_full(tb[p], st->freed);
            const double h = rh * full / SIM_FA3_STAGES;
            fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                    "fill=\"#8172b3\"><title>%d of %d stages full</title></rect>\n",
                    xs + tb[p] * sx, yr + rh - h, (tb[p + 1] - tb[p]) * sx, h, full,
                    SIM_FA3_STAGES);
        }
    }
    /* the axis, from the first step's start */
    const double ya = y1 + (SIM_FA3_TRACKS + 1) * (rh + gap) + 2;
    fprintf(out, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#000\"/>\n",
            x0, ya, x0 + plot, ya);
    const double step = tick_step(T1 - T0);
    for (int k = 0; k * step <= (T1 - T0) * (1 + 1e-9); k++) {
        const double x = x0 + k * step * sx;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%g</text>\n",
                x, ya, x, ya + 4, x, ya + 16, k * step * u.scale);
    }
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">time from "
            "the block's first step, %s (it starts at %.3g %s)</text>\n", x0 + plot, ya + 30,
            u.name, T0 * unit_of(T0).scale, unit_of(T0).name);
    /* the legend: the kinds drawn, and the ring */
    int used[SIM_FA3_KINDS];
    fa3_kinds_used(f, n, used);
    double lx = x0;
    const double ly = ya + 46;
    for (int k = 0; k < SIM_FA3_KINDS; k++) {
        if (!used[k])
            continue;
        fprintf(out, "<rect x=\"%.0f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\">%c %s</text>\n", lx, ly - 10,
                KIND[k].fill, lx + 16, ly, KIND[k].c, KIND[k].what);
        lx += 16 + 6.2 * (double)(strlen(KIND[k].what) + 2) + 14;
    }
    fprintf(out, "<rect x=\"%.0f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"#8172b3\"/>\n",
            x0, ly + 8);
    const char *note[4];
    const int nn = fa3_notes(f, note);
    for (int k = 0; k < nn; k++)        /* the first beside the ring's swatch */
        fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"10\">%s%s</text>\n",
                x0 + 16, ly + 18 + 14 * k, note[k], k == 0 ? " (the bar's height)" : "");
}

void viz_timeline_svg(FILE *out, const viz_timeline *tl, const char *title,
                      const sim_gm_result *r)
{
    const double W = 1200, left = 60, top = 56, row = 6, right = 20;
    const int slots = tl->slots > 0 ? tl->slots : 1;
    double T0 = 0, T1 = 0;
    const int nfa3 = fa3_shown(&tl->fa3, FA3_MOST, &T0, &T1);
    const double fa3_top = top + row * tl->sms + 70;
    const double H = top + row * tl->sms + 60 + (nfa3 > 0 ? FA3_SVG_H : 0);
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
                "drawn</text>\n", left, top + row * tl->sms + 54, (long long)tl->dropped);
    if (nfa3 > 0)
        fa3_svg(out, &tl->fa3, nfa3, T0, T1, left, fa3_top, plot);
    fprintf(out, "</svg>\n");
}
