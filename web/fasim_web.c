/*
 * fasim_web.c — the page's C API: the classroom report and the step-by-step
 * view, as JSON strings, for the WebAssembly build (web/CMakeLists.txt).
 *
 * Nothing is computed here that the command line does not compute: the
 * options are parsed by the report's parser (cli_parse_report, the one table
 * of options and limits), the report is built and written by sim_report_build
 * and sim_report_json, byte for byte what `fasim --json` prints, and the view
 * is viz_model's. This file only turns their results into JSON for the page,
 * which draws them and recomputes nothing.
 *
 * Arguments come as one string of command-line words separated by '\n'
 * ("--N\n1024\n--M\n96K"), so that no word needs quoting. Every function
 * returns a NUL-terminated JSON document owned by this file, valid until the
 * next call: the result, or {"error": MESSAGE, "status": EXIT} where MESSAGE
 * is the line the command line prints on stderr ("fasim: --N 0: ...") and
 * EXIT its exit status. Not thread-safe (the page calls from one thread).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "fasim_web.h"
#include "ref_rng.h"
#include "ref_simd.h"
#include "sim_json.h"
#include "sim_report.h"
#include "viz_model.h"

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#define FW_EXPORT EMSCRIPTEN_KEEPALIVE
#else
#define FW_EXPORT
#endif

/* Words of one call's command line: more than any form of the page sends. */
#define FW_MAX_ARGS 64

/* The view's slots: FA1 and FA2 side by side. */
#define FW_SLOTS 2

/* Cells per axis of a tile grid or the block grid sent to the page: a
 * phone's width holds 32 cells at the page's smallest size; a larger grid
 * shows several tiles per cell (viz_axis_cell), busiest counted. */
#define FW_MAX_CELLS 32

/* Rows of m_i, l_i and columns of O_i's row sent per step: what a phone's
 * column holds. */
#define FW_STATS_ROWS 8

/* The document returned last (freed on the next call). */
static char *fw_doc;
static viz_model *fw_model[FW_SLOTS];
/* The last report built, for fw_report_text. */
static sim_report *fw_last;

typedef struct {
    FILE *f;
    char *buf;
    size_t len;
    sim_json w;
} fw_out;

static int out_open(fw_out *o)
{
    free(fw_doc);
    fw_doc = NULL;
    o->buf = NULL;
    o->len = 0;
    o->f = open_memstream(&o->buf, &o->len);
    if (!o->f)
        return -1;
    sim_json_init(&o->w, o->f, SIM_JSON_COMPACT);
    return 0;
}

static const char *out_close(fw_out *o)
{
    fclose(o->f);
    fw_doc = o->buf;
    return fw_doc ? fw_doc : "{\"error\":\"fasim: out of memory\",\"status\":1}";
}

/* {"error": prog ": " msg, "status": status} */
static const char *fw_error(const char *prog, const char *msg, int status)
{
    fw_out o;
    if (out_open(&o) != 0)
        return "{\"error\":\"fasim: out of memory\",\"status\":1}";
    char *line = malloc(strlen(prog) + strlen(msg) + 3);
    if (!line) {
        fclose(o.f);
        free(o.buf);
        return "{\"error\":\"fasim: out of memory\",\"status\":1}";
    }
    sprintf(line, "%s: %s", prog, msg);
    sim_json_obj(&o.w, NULL);
    sim_json_str(&o.w, "error", line);
    sim_json_int(&o.w, "status", status);
    sim_json_end(&o.w);
    free(line);
    return out_close(&o);
}

/* Split args at '\n' into argv[1..] (argv[0] = "fasim") in words, a copy the
 * caller frees. Returns argc, or -1 when there are too many words. */
static int split_args(const char *args, char **argv, char **words)
{
    *words = strdup(args ? args : "");
    if (!*words)
        return -1;
    int argc = 0;
    argv[argc++] = "fasim";
    char *s = *words;
    while (*s) {
        if (argc == FW_MAX_ARGS)
            return -1;
        argv[argc++] = s;
        char *nl = strchr(s, '\n');
        if (!nl)
            break;
        *nl = '\0';
        s = nl + 1;
    }
    argv[argc] = NULL;
    return argc;
}

/* Parse args as the report's options into *o (on the heap: the options are
 * large). Returns NULL with *o set, or the error document. The page's forms
 * send no file options; --help and --version have no place on a page. */
static const char *parse_report(const char *args, cli_report_opts **o)
{
    char *argv[FW_MAX_ARGS + 1], *words = NULL, err[2048];
    *o = calloc(1, sizeof **o);
    int argc = *o ? split_args(args, argv, &words) : -1;
    if (argc < 0) {
        free(words);
        free(*o);
        *o = NULL;
        return fw_error("fasim", "out of memory, or too many options", 1);
    }
    int rc = cli_parse_report(argc, argv, 1, *o, err, sizeof err);
    free(words);        /* the options keep no pointer into argv but file paths */
    if (rc == 0 && ((*o)->help || (*o)->version || (*o)->gpu_list || (*o)->preset_list ||
                    (*o)->q_path || (*o)->out_path)) {
        snprintf(err, sizeof err, "the page takes the problem's options only");
        rc = -1;
    } else if (rc == 0 && (*o)->block_mask) {
        /* its value points into the words freed above, and a mask file is
         * the command line's to read */
        snprintf(err, sizeof err, "--block-mask is the command line's (fasim --block-mask)");
        rc = -1;
    }
    if (rc != 0) {
        free(*o);
        *o = NULL;
        return fw_error("fasim", err, SIM_EUSAGE);
    }
    return NULL;
}

/* The version, as `fasim --version` prints it after "fasim ". */
FW_EXPORT const char *fw_version(void)
{
#ifdef FASIM_VERSION
    return FASIM_VERSION;
#else
    return "0.0.0";
#endif
}

/* fw_simd_check's inputs (ref_rng's numbers): uniform in +-[0.25, 4) times
 * 2^scale, kept to 11 significant bits (an fp16 input's, where sums land
 * exactly on a midpoint between two floats one time in eight) when short is
 * set. */
static void sc_fill(ref_rng *st, float *x, int n, int scale, int shortened)
{
    for (int k = 0; k < n; k++) {
        float v = ldexpf(0.25f + 3.75f * (float)(ref_rng_next(st) >> 40) * 0x1p-24f, scale);
        uint32_t u = ref_f2u(v);
        if (shortened)
            u = (u + 0x1000u) & ~0x1fffu;
        x[k] = (ref_rng_next(st) & 1 ? -1.0f : 1.0f) * ref_u2f(u);
    }
}

static int64_t sc_differ(const float *a, const float *b, int n)
{
    int64_t k = 0;
    for (int i = 0; i < n; i++)
        k += ref_f2u(a[i]) != ref_f2u(b[i]);
    return k;
}

/* Sizes of fw_simd_check's tiles: up to 24 rows, 40 keys, d up to 72. */
enum { SC_BR = 24, SC_BC = 40, SC_D = 72 };

FW_EXPORT const char *fw_simd_check(int trials)
{
    static float Q[SC_BR * SC_D], K[SC_BC * SC_D], V[SC_BC * SC_D], P[SC_BR * SC_BC];
    static float S[2][SC_BR * SC_BC], O[2][SC_BR * SC_D], O0[SC_BR * SC_D], X[2][SC_BC];
    float alpha[SC_BR], sum[2];
    ref_fa1_weights w[SC_BR];
    if (trials < 1 || trials > 10000)
        return fw_error("fw_simd_check", "trials must be 1..10000", 1);
    const ref_simd path = ref_simd_active();
    ref_rng st = ref_rng_seed(0x5eedf00dull);
    int64_t values = 0, differ = 0;
    for (int t = 0; t < trials; t++) {
        const int br = 1 + (int)(ref_rng_next(&st) % SC_BR), bc = 1 + (int)(ref_rng_next(&st) % SC_BC);
        const int d = t % 8 == 5 || t % 8 == 6 ? 2 : 1 + (int)(ref_rng_next(&st) % SC_D), shortened = t % 2;
        /* one trial in four tiny: products and sums in float's subnormal range */
        const int scale = t % 4 == 3 ? -66 : (int)(ref_rng_next(&st) % 9) - 4;
        sc_fill(&st, Q, br * d, scale, shortened);
        sc_fill(&st, K, bc * d, scale, shortened);
        sc_fill(&st, V, bc * d, scale, shortened);
        sc_fill(&st, P, br * bc, 0, shortened);
        sc_fill(&st, O0, br * d, 0, shortened);
        sc_fill(&st, X[0], bc, 2, 0);
        for (int r = 0; r < br; r++) {
            alpha[r] = ldexpf(1.0f, -(int)(ref_rng_next(&st) % 8));
            w[r] = (ref_fa1_weights){ alpha[r], 1.0f - alpha[r] / 2, r % 5 ? 1.5f : 0.0f };
        }
        if (t % 8 == 5 || t % 8 == 6) {
            /* Sums that a rounding through doubles puts on a midpoint
             * between two floats while the exact sum is just below it
             * (ref_fmaf_via_double's hard cases): a score of q = (c, a)
             * against k = (1, b), and a P~ V step from o = c with p = a,
             * v = b. Normal: c with an odd last bit, a = h (1 + 2^-23) for
             * h half c's ulp, b = 1 - 2^-23. Subnormal: c an odd multiple
             * of 2^-149, a = 2^-75 (1 + 2^-23), b = 2^-75 (1 - 2^-23), so
             * a b = 2^-150 (1 - 2^-46). */
            const int sub = t % 8 == 6;
            const float b = ldexpf(1.0f - 0x1p-23f, sub ? -75 : 0);
            for (int r = 0; r < br; r++) {
                const float c = sub ? ldexpf((float)(2 * (ref_rng_next(&st) % 4096) + 1), -149)
                                    : ref_u2f(ref_f2u(Q[r * d]) | 1u);
                const float a = ldexpf(1.0f + 0x1p-23f, sub ? -75 : ilogbf(c) - 24) *
                                (c < 0 ? -1.0f : 1.0f);
                Q[r * 2] = c;
                Q[r * 2 + 1] = a;
                P[r * bc] = a;
                O0[r * d] = c;
                alpha[r] = 1.0f;
            }
            for (int k = 0; k < bc; k++) {
                K[k * 2] = 1.0f;
                K[k * 2 + 1] = b;
                V[k * d] = b;
            }
        }
        memcpy(X[1], X[0], sizeof X[0]);
        for (int pass = 0; pass < 2; pass++) {       /* 0: the path, 1: scalar */
            if (ref_simd_force(pass ? REF_SIMD_SCALAR : path) != 0)
                return fw_error("fw_simd_check", "cannot select the path", 1);
            ref_simd_scores(Q, K, br, bc, d, 0.125f, S[pass]);
            memcpy(O[pass], O0, sizeof O0);
            ref_simd_pv_acc(O[pass], d, alpha, P, V, br, bc);
            ref_simd_fa1_out(O[pass], d, w, P, V, br, bc);
            sum[pass] = ref_simd_exp_shift_sum(X[pass], bc, 1.0f);
        }
        values += br * bc + br * d + bc + 1;
        differ += sc_differ(S[0], S[1], br * bc) + sc_differ(O[0], O[1], br * d) +
                  sc_differ(X[0], X[1], bc) + sc_differ(&sum[0], &sum[1], 1);
    }
    (void)ref_simd_force(path);
    fw_out out;
    if (out_open(&out) != 0)
        return fw_error("fw_simd_check", "out of memory", SIM_EFAIL);
    fprintf(out.f, "{\"path\":\"%s\",\"trials\":%d,\"values\":%lld,\"differ\":%lld}",
            ref_simd_name(path), trials, (long long)values, (long long)differ);
    return out_close(&out);
}

/* The classroom report of the options in args: `fasim ARGS --json`'s
 * output, or the error it prints. */
FW_EXPORT const char *fw_report(const char *args)
{
    cli_report_opts *o;
    const char *fail = parse_report(args, &o);
    if (fail)
        return fail;
    sim_report *rep = calloc(1, sizeof *rep);
    char err[2048];
    int rc = rep ? sim_report_build(&o->req, rep, err, sizeof err) : SIM_EFAIL;
    free(o);
    if (rc != SIM_OK) {
        const char *fail_doc = fw_error("fasim", rep ? err : "out of memory", rc);
        free(rep);
        return fail_doc;
    }
    if (fw_last)
        sim_report_free(fw_last);
    free(fw_last);
    fw_last = rep;
    fw_out out;
    if (out_open(&out) != 0)
        return fw_error("fasim", "out of memory", SIM_EFAIL);
    sim_report_json(out.f, rep);
    return out_close(&out);
}

/* The last report fw_report built as `fasim ARGS` prints it (80 columns),
 * or "" when there is none. */
FW_EXPORT const char *fw_report_text(void)
{
    fw_out out;
    if (!fw_last || out_open(&out) != 0)
        return "";
    sim_report_text(out.f, fw_last);
    return out_close(&out);
}

/* ---- the view ------------------------------------------------------------- */

static void json_counts(sim_json *w, const char *key, const viz_model *m, const sim_counts *c)
{
    const viz_info *in = viz_model_info(m);
    unsigned long long re = 0, we = 0, rb = 0, wb = 0;
    sim_json_obj(w, key);
    sim_json_arr(w, "tensors");
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        if (!in->tensor[t].present)
            continue;
        const unsigned long long eb = (unsigned long long)in->tensor[t].elem_bytes;
        sim_json_obj(w, NULL);
        sim_json_str(w, "name", in->tensor[t].name);
        sim_json_uint(w, "read_elems", c->read_elems[t]);
        sim_json_uint(w, "write_elems", c->write_elems[t]);
        sim_json_uint(w, "read_ops", c->read_ops[t]);
        sim_json_uint(w, "write_ops", c->write_ops[t]);
        sim_json_end(w);
        re += c->read_elems[t];
        we += c->write_elems[t];
        rb += c->read_elems[t] * eb;
        wb += c->write_elems[t] * eb;
    }
    sim_json_end(w);
    sim_json_uint(w, "read_elems", re);
    sim_json_uint(w, "write_elems", we);
    sim_json_uint(w, "read_bytes", rb);
    sim_json_uint(w, "write_bytes", wb);
    sim_json_uint(w, "bytes", rb + wb);
    sim_json_end(w);
}

static void json_floats(sim_json *w, const char *key, const float *v, int n)
{
    sim_json_arr(w, key);
    for (int k = 0; k < n; k++)
        sim_json_num(w, NULL, (double)v[k]);
    sim_json_end(w);
}

/* The view of the options in args (one loop order: --algo fa1 or fa2, ...)
 * in slot (0 or 1), built and seeked to step 0: what does not change from
 * step to step (the run, its plan, tensors, pseudocode). A plan that does
 * not fit M is an error here, with viz_model_build's message. */
FW_EXPORT const char *fw_view_open(int slot, const char *args)
{
    if (slot < 0 || slot >= FW_SLOTS)
        return fw_error("fasim view", "no such view", SIM_EUSAGE);
    viz_model_free(fw_model[slot]);
    fw_model[slot] = NULL;
    cli_report_opts *o;
    const char *fail = parse_report(args, &o);
    if (fail)
        return fail;
    viz_config cfg;
    viz_config_default(&cfg);
    int nalgo = 0;
    for (int a = 0; a < sim_algo_count(); a++)
        if (o->req.run_algo[a] == 1) {
            cfg.algo = (sim_algo)a;
            nalgo++;
        }
    cfg.sh = o->req.sh;
    cfg.seed = o->req.seed;
    if (o->req.mode == SIM_MODE_COUNT)
        cfg.mode = VIZ_MODE_COUNT;     /* --count-only: the view counts only too */
    free(o);
    if (nalgo != 1)
        return fw_error("fasim view", "the view shows one loop order: give --algo", SIM_EUSAGE);
    char err[2048];
    viz_model *m = NULL;
    int rc = viz_model_build(&cfg, &m, err, sizeof err);
    if (rc != VIZ_OK) {
        viz_model_free(m);
        return fw_error("fasim view", err, rc == VIZ_EFAIL ? 1 : 2);
    }
    fw_model[slot] = m;
    const viz_info *in = viz_model_info(m);
    fw_out out;
    if (out_open(&out) != 0)
        return fw_error("fasim view", "out of memory", 1);
    sim_json *w = &out.w;
    sim_json_obj(w, NULL);
    sim_json_str(w, "algo", sim_algo_name(in->algo));
    sim_json_str(w, "title", viz_pseudocode_title(in));
    sim_json_int(w, "N", in->sh.N);
    sim_json_int(w, "d", in->sh.d);
    sim_json_uint(w, "M", in->sh.M);
    sim_json_str(w, "dtype", sim_dtype_name(in->sh.dtype));
    sim_json_bool(w, "causal", in->sh.causal);
    sim_json_int(w, "Br", in->plan.Br);
    sim_json_int(w, "Bc", in->plan.Bc);
    sim_json_int(w, "Tr", in->plan.Tr);
    sim_json_int(w, "Tc", in->plan.Tc);
    sim_json_uint(w, "sram_peak", in->sram_peak);
    sim_json_uint(w, "nsteps", in->nsteps);
    sim_json_bool(w, "computed", in->computed);
    sim_json_str(w, "mode_note", in->mode_note);
    sim_json_bool(w, "blocks", in->blocks);
    sim_json_bool(w, "theory_matches", in->theory_matches);
    json_counts(w, "final", m, &in->final_counts);
    sim_json_arr(w, "tensors");
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        const viz_tensor_info *ti = &in->tensor[t];
        if (!ti->present)
            continue;
        sim_json_obj(w, NULL);
        sim_json_str(w, "name", ti->name);
        sim_json_int(w, "rows", ti->rows);
        sim_json_int(w, "cols", ti->cols);
        sim_json_int(w, "grid_rows", ti->grid_rows);
        sim_json_int(w, "grid_cols", ti->grid_cols);
        sim_json_uint(w, "max_reads", ti->max_reads);
        sim_json_uint(w, "max_writes", ti->max_writes);
        sim_json_end(w);
    }
    sim_json_end(w);
    int ncode;
    const viz_code_line *code = viz_pseudocode(in, &ncode);
    sim_json_arr(w, "code");
    for (int k = 0; k < ncode; k++) {
        sim_json_obj(w, NULL);
        sim_json_int(w, "line", code[k].line);
        sim_json_int(w, "indent", code[k].indent);
        sim_json_str(w, "text", code[k].text);
        sim_json_end(w);
    }
    sim_json_end(w);
    sim_json_end(w);
    return out_close(&out);
}

/* One axis of a grid of n things cut in tiles of `tile`, shown in at most
 * FW_MAX_CELLS cells: the number of cells. */
static int64_t cells_of(int64_t grid)
{
    return grid < FW_MAX_CELLS ? grid : FW_MAX_CELLS;
}

/* The tiles of tensor t at this step: one [reads, writes, marks] per cell,
 * row by row, a cell standing for tiles [t0, t1) of each axis. */
static void json_tiles(sim_json *w, const viz_model *m, sim_tensor t)
{
    const viz_tensor_info *ti = &viz_model_info(m)->tensor[t];
    const int64_t cr = cells_of(ti->grid_rows), cc = cells_of(ti->grid_cols);
    sim_json_obj(w, NULL);
    sim_json_str(w, "name", ti->name);
    sim_json_int(w, "cell_rows", cr);
    sim_json_int(w, "cell_cols", cc);
    sim_json_arr(w, "cells");
    for (int64_t r = 0; r < cr; r++)
        for (int64_t c = 0; c < cc; c++) {
            int64_t r0, r1, c0, c1;
            uint32_t reads, writes;
            viz_axis_cell(ti->rows, ti->tile_rows, cr, r, &r0, &r1);
            viz_axis_cell(ti->cols, ti->tile_cols, cc, c, &c0, &c1);
            viz_tile_range_counts(m, t, r0, r1, c0, c1, &reads, &writes);
            sim_json_arr(w, NULL);
            sim_json_uint(w, NULL, reads);
            sim_json_uint(w, NULL, writes);
            sim_json_uint(w, NULL, viz_tile_range_mark(m, t, r0, r1, c0, c1));
            sim_json_end(w);
        }
    sim_json_end(w);
    sim_json_end(w);
}

static void json_stats(sim_json *w, const viz_stats *s)
{
    sim_json_obj(w, "stats");
    sim_json_bool(w, "available", s->available);
    sim_json_bool(w, "shown", s->shown);
    if (s->available && s->shown) {
        const int n = s->nrows < FW_STATS_ROWS ? s->nrows : FW_STATS_ROWS;
        sim_json_int(w, "row0", s->row0);
        sim_json_int(w, "block_rows", s->block_rows);
        sim_json_bool(w, "before_valid", s->before_valid);
        sim_json_bool(w, "after_valid", s->after_valid);
        sim_json_bool(w, "m_is_L_before", s->m_is_L_before);
        sim_json_bool(w, "m_is_L_after", s->m_is_L_after);
        json_floats(w, "m_old", s->m_old, n);
        json_floats(w, "m_new", s->m_new, n);
        json_floats(w, "l_old", s->l_old, n);
        json_floats(w, "l_new", s->l_new, n);
        sim_json_int(w, "nchanged", s->nchanged);
        sim_json_bool(w, "out_shown", s->out_shown);
        if (s->out_shown) {
            const int nc = s->out_cols < FW_STATS_ROWS ? s->out_cols : FW_STATS_ROWS;
            sim_json_int(w, "out_row", s->out_row);
            sim_json_bool(w, "out_normalised_before", s->out_normalised_before);
            sim_json_bool(w, "out_normalised", s->out_normalised);
            json_floats(w, "out_old", s->out_old, nc);
            json_floats(w, "out_new", s->out_new, nc);
        }
    }
    sim_json_end(w);
}

/* Step `step` (0-based) of the view in slot: the line, the block, what
 * moved, the counters, SRAM against M, m and l before and after, every
 * tile's reads and writes so far and the block grid. */
FW_EXPORT const char *fw_view_step(int slot, double step)
{
    viz_model *m = slot >= 0 && slot < FW_SLOTS ? fw_model[slot] : NULL;
    if (!m)
        return fw_error("fasim view", "no view is open", SIM_EUSAGE);
    const viz_info *in = viz_model_info(m);
    if (!(step >= 0) || step >= (double)in->nsteps)
        return fw_error("fasim view", "no such step", SIM_EUSAGE);
    viz_model_seek(m, (uint64_t)step);
    const viz_state *st = viz_model_state(m);
    fw_out out;
    if (out_open(&out) != 0)
        return fw_error("fasim view", "out of memory", 1);
    sim_json *w = &out.w;
    sim_json_obj(w, NULL);
    sim_json_uint(w, "step", st->step);
    sim_json_int(w, "line", st->line);
    sim_json_int(w, "i", st->i);
    sim_json_int(w, "j", st->j);
    json_counts(w, "counts", m, &st->counts);
    sim_json_arr(w, "moved");
    for (int k = 0; k < st->nxfer; k++) {
        const viz_transfer *x = &st->xfer[k];
        sim_json_obj(w, NULL);
        sim_json_str(w, "kind", x->kind == SIM_EV_LOAD ? "load" : "store");
        sim_json_str(w, "tensor", sim_tensor_name(x->tensor));
        sim_json_str(w, "buf", x->buf);
        sim_json_uint(w, "bytes", x->bytes);
        sim_json_int(w, "r0", x->r0);
        sim_json_int(w, "rows", x->rows);
        sim_json_end(w);
    }
    sim_json_end(w);
    sim_json_uint(w, "sram_used", st->sram_used);
    sim_json_arr(w, "sram");
    for (int k = 0; k < st->nbuf; k++) {
        const viz_sram_entry *b = &st->buf[k];
        sim_json_obj(w, NULL);
        sim_json_str(w, "name", b->name);
        sim_json_int(w, "rows", b->rows);
        sim_json_int(w, "cols", b->cols);
        sim_json_uint(w, "bytes", b->bytes);
        sim_json_uint(w, "offset", b->offset);
        sim_json_bool(w, "loaded", (b->flags & VIZ_BUF_LOADED) != 0);
        sim_json_bool(w, "stored", (b->flags & VIZ_BUF_STORED) != 0);
        sim_json_end(w);
    }
    sim_json_end(w);
    json_stats(w, &st->stats);
    sim_json_arr(w, "tiles");
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        if (in->tensor[t].present)
            json_tiles(w, m, (sim_tensor)t);
    sim_json_end(w);
    if (in->blocks) {
        const int64_t br = cells_of(in->plan.Tr), bc = cells_of(in->plan.Tc);
        sim_json_obj(w, "blocks");
        sim_json_int(w, "cell_rows", br);
        sim_json_int(w, "cell_cols", bc);
        sim_json_arr(w, "cells");
        for (int64_t r = 0; r < br; r++)
            for (int64_t c = 0; c < bc; c++) {
                int64_t i0, i1, j0, j1;
                viz_axis_cell(in->plan.Tr, 1, br, r, &i0, &i1);
                viz_axis_cell(in->plan.Tc, 1, bc, c, &j0, &j1);
                sim_json_uint(w, NULL, viz_block_range(m, i0, i1, j0, j1));
            }
        sim_json_end(w);
        sim_json_end(w);
    }
    sim_json_end(w);
    return out_close(&out);
}
