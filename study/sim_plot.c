/*
 * sim_plot.c — write a sweep's plot data and gnuplot script (see sim_plot.h).
 *
 * Units on the axes: N and d as counts, M in KiB (bytes / 1024), traffic in
 * bytes. The lower bound N^2 d^2 / M counts elements (M in elements, no
 * constant); it is drawn in bytes as elements x the dtype's size, which is
 * what "constant 1" means for a line on byte axes.
 */
#include "sim_plot.h"
#include "sim_loop.h"
#include "sim_text.h"
#include "sim_outfile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define ERR(...) do { if (err && errlen) snprintf(err, errlen, __VA_ARGS__); } while (0)

int sim_plot_format_ok(const char *image)
{
    size_t n = image ? strlen(image) : 0;
    return n > 4 && (!strcasecmp(image + n - 4, ".svg") || !strcasecmp(image + n - 4, ".png"));
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* A file name as a gnuplot string: in single quotes, where gnuplot expands
 * nothing (no backslash escapes, no `command` or @macro substitution). A
 * name with single quotes is written as a concatenation, 'it'."'".'s.svg':
 * each run of quotes in double quotes, which then hold nothing else (gnuplot
 * 5.4 misreads two doubled quotes in a row, 'a''''b', so doubling cannot
 * serve). A name that starts with '<' or '|' would still reach a shell
 * (gnuplot reads '<cmd' from a pipe and writes "|cmd" to one), and one that
 * starts with '$' names a datablock, so such a name is written "./"-first,
 * the same file in the script's directory. A script is
 * read line by line, so a name with a control character (a newline ends the
 * command) cannot be written at all. Returns 0, or -1 for such a name or
 * one too long for out. */
static int gp_quote(char *out, size_t len, const char *name)
{
    size_t o = 0;
    int in = 0;                           /* the open segment's quote, or 0 */
#define PUT(ch) do { if (o + 1 >= len) return -1; out[o++] = (char)(ch); } while (0)
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        if (*c < 0x20 || *c == 0x7f)
            return -1;
        const int want = *c == '\'' ? '"' : '\'';
        if (in != want) {
            if (in) {
                PUT(in);
                PUT('.');
            }
            PUT(want);
            in = want;
            if (c == (const unsigned char *)name && (*c == '<' || *c == '|' || *c == '$')) {
                PUT('.');
                PUT('/');
            }
        }
        PUT(*c);
    }
    if (!in) {                            /* an empty name: the empty string */
        PUT('\'');
        in = '\'';
    }
    PUT(in);
#undef PUT
    out[o] = '\0';
    return 0;
}

/* path with its 4-character extension replaced by ext (".dat"). */
static int replace_ext(char *out, size_t len, const char *path, const char *ext)
{
    size_t n = strlen(path);
    if (n < 4 || n - 4 + strlen(ext) + 1 > len)
        return -1;
    memcpy(out, path, n - 4);
    strcpy(out + n - 4, ext);
    return 0;
}

/* x as plotted: M in KiB, N and d as they are. */
static double plot_x(const sim_sweep_point *pt, sim_param p)
{
    double v = (double)sim_point_param(pt, p);
    return p == SIM_PARAM_M ? v / 1024.0 : v;
}

/* The exponent of Theorem 2's bound b in parameter p (M in elements). */
static double theorem_exponent(sim_bound b, sim_param p)
{
    if (b == SIM_BOUND_STANDARD)
        return p == SIM_PARAM_N ? 2.0 : 0.0;     /* Theta(N d + N^2), N >> d */
    return p == SIM_PARAM_M ? -1.0 : 2.0;        /* Theta(N^2 d^2 / M) */
}

static const char *param_label(sim_param p)
{
    switch (p) {
    case SIM_PARAM_N: return "N, sequence length (rows)";
    case SIM_PARAM_D: return "d, head dimension";
    case SIM_PARAM_BR: return "B_r, query rows per block";
    case SIM_PARAM_BC: return "B_c, key/value rows per block";
    default: return "M, SRAM per thread block (KiB)";
    }
}

/* A loop order's colour in the plots: its descriptor's, grey if it has none. */
static const char *color_of(sim_algo a)
{
    const sim_loop *l = sim_algo_loop(a);
    return l && l->color ? l->color : "#7f7f7f";
}

/* The data file: a comment naming the columns, then one row per point.
 * '?' marks a missing value (gnuplot: set datafile missing). */
static void write_data(FILE *f, const sim_sweep_result *res, sim_param p, int eb)
{
    const sim_sweep_spec *sp = &res->spec;
    fprintf(f, "# fasim sweep data: HBM bytes per loop order; lower bound N^2 d^2 / M "
            "(M in elements) x %d B\n# columns: %s", eb,
            p == SIM_PARAM_M ? "M_KiB" : sim_param_name(p));
    for (int a = 0; a < sim_algo_count(); a++)
        if (sp->run_algo[a])
            fprintf(f, " %s_bytes", sim_algo_name((sim_algo)a));
    fprintf(f, " lower_bound_bytes in_regime\n");
    for (int k = 0; k < res->npoints; k++) {
        const sim_sweep_point *pt = &res->pts[k];
        fprintf(f, "%.10g", plot_x(pt, p));
        for (int a = 0; a < sim_algo_count(); a++)
            if (sp->run_algo[a] && pt->run[a].misfit)
                fprintf(f, " ?");              /* the blocks do not fit M there */
            else if (sp->run_algo[a])
                fprintf(f, " %llu", (unsigned long long)pt->run[a].bytes);
        if (pt->bounds.in_regime)
            fprintf(f, " %.10g 1\n", pt->bounds.lower_bound * eb);
        else
            fprintf(f, " ? 0\n");
    }
}

/* The script's opening: what it is, the terminal, the output (q_img, the
 * image's name quoted for gnuplot), the title with the fixed parameters,
 * axes, grid and key. */
static void write_settings(FILE *f, const sim_sweep_spec *sp, sim_param p, const char *gpname,
                           const char *img, const char *datname, const char *q_img)
{
    char fixed[160] = "", b[48];
    size_t o = 0;
    if (p != SIM_PARAM_N)
        o += (size_t)snprintf(fixed + o, sizeof fixed - o, "N = %lld, ", (long long)sp->base.N);
    if (p != SIM_PARAM_D)
        o += (size_t)snprintf(fixed + o, sizeof fixed - o, "d = %lld, ", (long long)sp->base.d);
    if (p != SIM_PARAM_M) {
        sim_format_bytes(b, sizeof b, sp->base.M);
        o += (size_t)snprintf(fixed + o, sizeof fixed - o, "M = %s, ", b);
    }
    snprintf(fixed + o, sizeof fixed - o, "%s%s", sim_dtype_name(sp->base.dtype),
             sp->base.causal ? ", causal" : "");
    const size_t n = strlen(img);
    const int svg = !strcasecmp(img + n - 4, ".svg");

    fprintf(f, "# %s: written by fasim; draws %s from %s.\n", gpname, img, datname);
    char word[2200];
    fprintf(f, "# Run it from this directory: gnuplot %s\n",
            sim_shell_word(word, sizeof word, gpname));
    fprintf(f, "# Restyle freely: the data columns are named in the first lines of %s.\n\n",
            datname);
    if (svg)
        fprintf(f, "set terminal svg size 900,600 dynamic enhanced font 'Helvetica,14' "
                "background rgb 'white'\n");
    else
        fprintf(f, "set terminal pngcairo size 1200,800 enhanced font 'Helvetica,14' "
                "background rgb 'white'\n");
    fprintf(f, "set encoding utf8\nset output %s\n", q_img);
    fprintf(f, "set datafile missing '?'\n\n");
    fprintf(f, "set title 'fasim: HBM traffic against %s (%s)'\n", sim_param_name(p), fixed);
    fprintf(f, "set xlabel '%s'\n", param_label(p));
    fprintf(f, "set ylabel 'HBM traffic (bytes)'\n");
    fprintf(f, "set logscale x 2\nset logscale y 10\n");
    /* N as powers of two; d and M (KiB) as plain numbers, which read better. */
    fprintf(f, "set format x '%s'\nset format y '10^{%%L}'\n",
            p == SIM_PARAM_N ? "2^{%L}" : "%g");
    fprintf(f, "set grid xtics ytics mxtics mytics lc rgb '#dddddd'\n");
    /* The key where the lines are not: they rise to the right with N and d
     * and fall with M. A band of headroom (45% of the graph's height, on the
     * key's side) keeps every line below (above) the key, which is six rows,
     * about a quarter of the height: without it the guides and the naive
     * curve ran under the key over part of the range. */
    if (p == SIM_PARAM_M || sim_param_is_block(p))
        fprintf(f, "set key bottom left Left reverse box opaque spacing 1.2\n"
                "set offsets 0, 0, 0, graph 0.45\n\n");
    else
        fprintf(f, "set key top left Left reverse box opaque spacing 1.2\n"
                "set offsets 0, 0, graph 0.45, 0\n\n");
}

/* The guides and the plot command: one line per loop order from the data
 * (q_dat, its name quoted for gnuplot), Theorem 2's slopes, and the lower
 * bound.
 *
 * Guides: one dashed line per theorem: standard attention's slope through
 * the naive order's first in-regime point (drawn a factor 2 above it),
 * FlashAttention's through FA2's (or FA1's) first in-regime point (a factor
 * 2 below), so that a guide runs beside the data, not over it. */
static void write_plot(FILE *f, const sim_sweep_result *res, sim_param p, int eb,
                       const char *q_dat)
{
    const sim_sweep_spec *sp = &res->spec;
    /* The in-regime x range, where the guides are drawn. */
    double lo = INFINITY, hi = -INFINITY;
    const sim_sweep_point *anchor = NULL;
    for (int k = 0; k < res->npoints; k++)
        if (res->pts[k].bounds.in_regime) {
            double x = plot_x(&res->pts[k], p);
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
            if (!anchor)
                anchor = &res->pts[k];
        }
    fprintf(f, "# Theorem 2's slopes as guides, over the in-regime range [lo, hi] of "
            "the data.\n");
    if (sim_param_is_block(p)) {     /* Theorem 2 sizes the blocks itself */
        fprintf(f, "# a block size is varied: Theorem 2 has no slope in it, no guides\n");
        anchor = NULL;
    } else if (isfinite(lo))
        fprintf(f, "lo = %.10g\nhi = %.10g\n", lo, hi);
    else
        fprintf(f, "# no point is in regime (d <= M <= N d): no guides\n");
    char plot[8192];   /* six lines; four name the data file, quoted in at most 1 KiB */
    size_t po = 0;
    po += (size_t)snprintf(plot + po, sizeof plot - po, "plot \\\n");
    int col = 2;
    for (int a = 0; a < sim_algo_count(); a++) {
        if (!sp->run_algo[a])
            continue;
        po += (size_t)snprintf(plot + po, sizeof plot - po,
                               "  %s using 1:%d with linespoints lw 2 pt 7 ps 0.8 "
                               "lc rgb '%s' title '%s', \\\n",
                               q_dat, col, color_of((sim_algo)a), sim_algo_name((sim_algo)a));
        col++;
    }
    const int fa = sp->run_algo[SIM_FA2] ? SIM_FA2 : sp->run_algo[SIM_FA1] ? SIM_FA1 : -1;
    const int guide_algo[2] = { sp->run_algo[SIM_NAIVE] ? SIM_NAIVE : -1, fa };
    for (int g = 0; g < 2; g++) {
        int a = guide_algo[g];
        if (a < 0 || !anchor)
            continue;
        /* The standard guide runs above its points, FlashAttention's below. */
        const sim_bound b = sim_report_bound((sim_algo)a);
        double e = theorem_exponent(b, p);
        double x0 = plot_x(anchor, p);
        double y0 = (double)anchor->run[a].bytes * (b == SIM_BOUND_STANDARD ? 2.0 : 0.5);
        fprintf(f, "g%d(x) = (x >= lo && x <= hi) ? %.10g * (x / %.10g)**(%g) : 1/0\n", g,
                y0, x0, e);
        po += (size_t)snprintf(plot + po, sizeof plot - po,
                               "  g%d(x) with lines dt 2 lw 1.5 lc rgb '%s' title "
                               "'slope %g: Theorem 2, %s', \\\n", g, color_of((sim_algo)a), e,
                               b == SIM_BOUND_STANDARD ? "standard Θ(Nd + N^2)"
                                                       : "FlashAttention Θ(N^2d^2/M)");
    }
    po += (size_t)snprintf(plot + po, sizeof plot - po,
                           "  %s using 1:%d with lines lw 2 dt 4 lc rgb '#555555' "
                           "title 'lower bound Ω(N^2d^2/M), Prop. 3 (elements x %d B)'\n",
                           q_dat, col, eb);
    fprintf(f, "\n%s", plot);
}

int sim_plot_write(const sim_sweep_result *res, const char *image, char *dat, size_t datlen,
                   char *gp, size_t gplen, char *err, size_t errlen)
{
    const sim_sweep_spec *sp = &res->spec;
    if (sp->naxes != 1) {
        ERR("--plot draws one varied parameter; this sweep varies %d (drop a --vary, or "
            "plot from --csv)", sp->naxes);
        return -1;
    }
    if (!sim_plot_format_ok(image)) {
        ERR("--plot %s: the image must end in .svg or .png", image);
        return -1;
    }
    if (replace_ext(dat, datlen, image, ".dat") != 0 ||
        replace_ext(gp, gplen, image, ".gp") != 0) {
        ERR("--plot %s: path too long", image);
        return -1;
    }
    /* Refuse before writing anything: the names go into the script. */
    char q_img[1024], q_dat[1024];
    if (gp_quote(q_img, sizeof q_img, base_name(image)) != 0 ||
        gp_quote(q_dat, sizeof q_dat, base_name(dat)) != 0) {
        ERR("--plot: the file name has a control character (a newline, a tab, ...) or is too "
            "long, and gnuplot could not be given it safely: choose another name");
        return -1;
    }
    const sim_param p = sp->axes[0].param;
    const int eb = sim_dtype_bytes(sp->base.dtype);

    /* Both files whole or not at all: each is written to a temporary, and
     * the two are renamed into place only when both are complete. */
    sim_outfile od, og;
    int e = sim_outfile_open(&od, dat);
    if (e) {
        ERR("--plot: cannot write %s: %s", dat, strerror(e));
        return -1;
    }
    if ((e = sim_outfile_open(&og, gp)) != 0) {
        ERR("--plot: cannot write %s: %s", gp, strerror(e));
        sim_outfile_abort(&od);
        return -1;
    }
    write_data(od.f, res, p, eb);
    write_settings(og.f, sp, p, base_name(gp), base_name(image), base_name(dat), q_img);
    write_plot(og.f, res, p, eb, q_dat);
    const char *failed = fflush(od.f) != 0 || ferror(od.f)   ? dat
                         : fflush(og.f) != 0 || ferror(og.f) ? gp
                                                             : NULL;
    if (failed) {
        ERR("--plot: cannot write %s: %s", failed, strerror(errno));
        sim_outfile_abort(&og);
        sim_outfile_abort(&od);
        return -1;
    }
    if ((e = sim_outfile_commit(&od)) != 0) {
        ERR("--plot: cannot write %s: %s", dat, strerror(e));
        sim_outfile_abort(&og);
        return -1;
    }
    if ((e = sim_outfile_commit(&og)) != 0) {
        ERR("--plot: cannot write %s: %s", gp, strerror(e));
        return -1;
    }
    return 0;
}
