/*
 * sim_validate.c — the GPU model against published figures (see
 * sim_validate.h): the figures file's parser, each row's run of the model,
 * the errors and their table.
 */
#include "sim_validate.h"
#include "sim_gpu_model.h"
#include "sim_json.h"
#include "sim_loop.h"
#include "sim_parse.h"
#include "sim_report.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#ifndef FASIM_VERSION
#define FASIM_VERSION "0.0.0"
#endif

/* The columns, in the order the header must name them. */
enum {
    COL_GPU, COL_DTYPE, COL_ALGO, COL_PASSES, COL_CAUSAL, COL_BATCH, COL_HEADS, COL_N, COL_D,
    COL_METRIC, COL_VALUE, COL_FLOPS, COL_FIT, COL_SOURCE, NCOLS
};
static const char *const COLS[NCOLS] = {
    "gpu", "dtype", "algo", "passes", "causal", "batch", "heads", "N", "d",
    "metric", "value", "flops", "fit", "source",
};

/* fa3's switches as an algo column names them: "fa3/np", "fa3/nw". */
static const char *const FA3_SWITCH[2] = { "np", "nw" };

static const char *const METRICS[SIM_VM_COUNT] = { "tflops", "ms", "GB" };

const char *sim_vmetric_name(sim_vmetric m)
{
    return (unsigned)m < SIM_VM_COUNT ? METRICS[m] : "?";
}

/* ---- parsing ----------------------------------------------------------- */

/* The messages of a parse: appended one a line while they fit. */
typedef struct {
    char *buf;
    size_t len, used;
    int n;
} msgs;

static void msg_add(msgs *m, const char *name, int line, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    m->n++;
    if (!m->buf || m->used + 1 >= m->len)
        return;
    int w = snprintf(m->buf + m->used, m->len - m->used, "%s%s:%d: %s", m->used ? "\n" : "",
                     name, line, text);
    if (w > 0)
        m->used += (size_t)w < m->len - m->used ? (size_t)w : m->len - m->used - 1;
}

/* Split line (NUL-terminated, modified) at tabs into f[0..max-1]; returns
 * the number of fields (more than max: max + 1). */
static int split_tabs(char *line, char **f, int max)
{
    int n = 0;
    for (char *p = line;; ) {
        char *t = strchr(p, '\t');
        if (n < max)
            f[n] = p;
        n++;
        if (!t)
            break;
        *t = '\0';
        p = t + 1;
    }
    return n > max ? max + 1 : n;
}

/* A whole number in [lo, hi], digits only. */
static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 15)
        return -1;
    int64_t v = strtoll(s, NULL, 10);
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* One row into *f; 0, or -1 with the reason in why. */
static int parse_row(char **c, sim_vfig *f, char *why, size_t len)
{
    int64_t v;
    f->gpu = sim_gpu_find(c[COL_GPU]);
    if (!f->gpu) {
        snprintf(why, len, "gpu '%.80s': no such preset ('fasim --gpu list')",
                 sim_shown(c[COL_GPU]).s);
        return -1;
    }
    if (sim_dtype_parse(c[COL_DTYPE], &f->dtype) != 0) {
        snprintf(why, len, "dtype '%.80s': fp16, bf16, fp32, e4m3 or e5m2", sim_shown(c[COL_DTYPE]).s);
        return -1;
    }
    char base[24];
    const char *slash = strchr(c[COL_ALGO], '/');
    const size_t nb = slash ? (size_t)(slash - c[COL_ALGO]) : strlen(c[COL_ALGO]);
    snprintf(base, sizeof base, "%.*s", (int)(nb < sizeof base ? nb : sizeof base - 1),
             c[COL_ALGO]);
    if (nb >= sizeof base || sim_algo_parse(base, &f->algo) != 0) {
        char names[128];
        snprintf(why, len, "algo '%.80s': a loop order (%s), or fa3/np, fa3/nw, "
                 "unfused/fa2bench",
                 sim_shown(c[COL_ALGO]).s, sim_algo_names(names, sizeof names, " or "));
        return -1;
    }
    const int wgmma = sim_algo_loop(f->algo)->wgmma;
    const int unfused = (sim_algo_loop(f->algo)->flags & SIM_LOOP_FRAMEWORK) != 0;
    f->no_pipeline = f->no_warp_spec = 0;
    f->unfused_ops = SIM_UF_GPT2;
    if (slash && unfused) {
        sim_uf_ops u;
        if (sim_uf_ops_parse(slash + 1, &u) != 0) {
            snprintf(why, len, "algo '%.80s': after 'unfused/' the operations, gpt2 or "
                     "fa2bench (--unfused-ops)", sim_shown(c[COL_ALGO]).s);
            return -1;
        }
        f->unfused_ops = (int)u;
    } else if (slash) {
        f->no_pipeline = wgmma && !strcmp(slash + 1, FA3_SWITCH[0]);
        f->no_warp_spec = wgmma && !strcmp(slash + 1, FA3_SWITCH[1]);
        if (!f->no_pipeline && !f->no_warp_spec) {
            snprintf(why, len, "algo '%.80s': a switch after '/' is fa3's: fa3/np "
                     "(--pipeline off) or fa3/nw (--warp-specialization off), or "
                     "unfused's operations (unfused/fa2bench)", sim_shown(c[COL_ALGO]).s);
            return -1;
        }
    }
    f->modelled = !(wgmma && f->gpu->cc_major < 9);   /* fa3 off Hopper: kept, not run */
    snprintf(f->algo_name, sizeof f->algo_name, "%s", c[COL_ALGO]);
    f->fwd = !strcmp(c[COL_PASSES], "fwd") || !strcmp(c[COL_PASSES], "fwd+bwd");
    f->bwd = !strcmp(c[COL_PASSES], "bwd") || !strcmp(c[COL_PASSES], "fwd+bwd");
    if (!f->fwd && !f->bwd) {
        snprintf(why, len, "passes '%.80s': fwd, bwd or fwd+bwd", sim_shown(c[COL_PASSES]).s);
        return -1;
    }
    static const struct {
        int col;
        int64_t lo, hi;
    } INTS[] = {
        { COL_CAUSAL, 0, 1 }, { COL_BATCH, 1, 65536 }, { COL_HEADS, 1, 65536 },
        { COL_N, 1, INT64_C(1) << 40 }, { COL_D, 1, 65536 }, { COL_FIT, 0, 1 },
    };
    for (size_t k = 0; k < sizeof INTS / sizeof INTS[0]; k++) {
        const int col = INTS[k].col;
        if (parse_int(c[col], INTS[k].lo, INTS[k].hi, &v) != 0) {
            snprintf(why, len, "%s '%.80s': a whole number from %lld to %lld", COLS[col],
                     sim_shown(c[col]).s, (long long)INTS[k].lo, (long long)INTS[k].hi);
            return -1;
        }
        switch (col) {
        case COL_CAUSAL: f->causal = (int)v; break;
        case COL_BATCH: f->batch = v; break;
        case COL_HEADS: f->heads = v; break;
        case COL_N: f->N = v; break;
        case COL_D: f->d = v; break;
        default: f->fit = (int)v; break;
        }
    }
    int m = 0;
    while (m < SIM_VM_COUNT && strcmp(c[COL_METRIC], METRICS[m]))
        m++;
    if (m == SIM_VM_COUNT) {
        snprintf(why, len, "metric '%.80s': tflops, ms or GB", sim_shown(c[COL_METRIC]).s);
        return -1;
    }
    f->metric = (sim_vmetric)m;
    if (sim_parse_real(c[COL_VALUE], &f->value) != 0 || !isfinite(f->value) ||
        !(f->value > 0)) {
        snprintf(why, len, "value '%.80s': a positive number", sim_shown(c[COL_VALUE]).s);
        return -1;
    }
    f->fa2_flops = !strcmp(c[COL_FLOPS], "fa2");
    if (f->metric == SIM_VM_TFLOPS && !f->fa2_flops) {
        snprintf(why, len, "flops '%.80s': a tflops row names its FLOP convention (fa2)",
                 sim_shown(c[COL_FLOPS]).s);
        return -1;
    }
    if (f->metric != SIM_VM_TFLOPS && strcmp(c[COL_FLOPS], "-")) {
        snprintf(why, len, "flops '%.80s': '-' on a %s row (a FLOP convention is for tflops)",
                 sim_shown(c[COL_FLOPS]).s, METRICS[f->metric]);
        return -1;
    }
    if (!c[COL_SOURCE][0]) {
        snprintf(why, len, "source: empty; every figure names where it was published");
        return -1;
    }
    snprintf(f->source, sizeof f->source, "%s", c[COL_SOURCE]);
    return 0;
}

int sim_validate_parse(const char *name, const char *text, sim_vfig_list *out, char *err,
                       size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen)
        err[0] = '\0';
    msgs m = { err, errlen, 0, 0 };
    const size_t tlen = strlen(text);
    char *copy = malloc(tlen + 1);
    if (!copy)
        return -1;
    memcpy(copy, text, tlen + 1);
    int cap = 0, header = 0, lineno = 0;
    for (char *p = copy; *p; ) {
        char *line = p;
        char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + strlen(p);
        if (nl)
            *nl = '\0';
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r')
            line[--len] = '\0';
        if (line[0] == '#' || strspn(line, " \t") == len)
            continue;
        char *c[NCOLS];
        const int n = split_tabs(line, c, NCOLS);
        if (n != NCOLS) {
            msg_add(&m, name, lineno, "%d tab-separated column%s, where %d are needed (%s)",
                    n > NCOLS ? NCOLS + 1 : n, n == 1 ? "" : "s", NCOLS,
                    header ? "gpu dtype algo passes causal batch heads N d metric value "
                             "flops fit source" : "the header first");
            if (!header)
                header = 1;           /* one message for a bad header, not one a row */
            continue;
        }
        if (!header) {
            header = 1;
            for (int k = 0; k < NCOLS; k++)
                if (strcmp(c[k], COLS[k])) {
                    msg_add(&m, name, lineno, "header: column %d is '%.80s', where '%s' is "
                            "needed", k + 1, sim_shown(c[k]).s, COLS[k]);
                    break;
                }
            continue;
        }
        sim_vfig f;
        char why[400];
        memset(&f, 0, sizeof f);
        f.line = lineno;
        if (parse_row(c, &f, why, sizeof why) != 0) {
            msg_add(&m, name, lineno, "%s", why);
            continue;
        }
        if (out->n == cap) {
            cap = cap ? 2 * cap : 64;
            sim_vfig *grown = realloc(out->items, (size_t)cap * sizeof *grown);
            if (!grown) {
                free(copy);
                sim_vfig_list_free(out);
                return -1;
            }
            out->items = grown;
        }
        out->items[out->n++] = f;
    }
    free(copy);
    if (!header)
        msg_add(&m, name, lineno ? lineno : 1, "no header line (%d columns: gpu dtype algo "
                "passes ... source)", NCOLS);
    if (m.n)
        sim_vfig_list_free(out);
    return m.n;
}

void sim_vfig_list_free(sim_vfig_list *l)
{
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

/* ---- running the model --------------------------------------------------- */

double sim_validate_flops(const sim_vfig *f)
{
    /* FlashAttention-2, section 4.1: forward 4 B N^2 d H (two products of
     * 2 N^2 d each), half of it under a causal mask; backward 2.5 times. */
    double fwd = 4.0 * (double)f->batch * (double)f->N * (double)f->N * (double)f->d *
                 (double)f->heads;
    if (f->causal)
        fwd /= 2.0;
    return (f->fwd ? fwd : 0.0) + (f->bwd ? 2.5 * fwd : 0.0);
}

sim_shape sim_validate_shape(const sim_vfig *f)
{
    sim_shape sh = {
        .N = f->N, .d = f->d, .M = f->gpu->smem_per_block, .dtype = f->dtype,
        .causal = f->causal, .batch = f->batch, .heads = f->heads,
    };
    return sh;
}

int sim_validate_plan(const sim_vfig *f, sim_pass q, sim_plan *out, char *err, size_t errlen)
{
    const sim_shape sh = sim_validate_shape(f);
    sim_run_opts run;
    memset(&run, 0, sizeof run);
    run.pass = q;
    run.unfused_ops = f->unfused_ops;
    const sim_kernel_target t = sim_gpu_kernel_target(f->gpu);
    sim_kernel_choice c;
    if (sim_kernel_choose(f->algo, &sh, &run, &t, &c, err, errlen) == 0)
        return sim_plan_kernel(f->algo, &sh, &run, &t, 0, 0, out, err, errlen);
    if (f->algo == SIM_FA1 || f->algo == SIM_FA2)
        return -1;                /* a d its released kernel does not serve: err says */
    /* No released kernel runs this loop order: the report's default plan
     * (SIM_PLAN_SAME), the largest square tile that fits every pass the
     * row runs, else its best plan, as sim_report_use_tiles falls back. */
    sim_request req;
    memset(&req, 0, sizeof req);
    req.sh = sh;
    req.run.unfused_ops = f->unfused_ops;
    req.run_algo[f->algo] = 1;
    req.run_pass[SIM_FWD] = f->fwd;
    req.run_pass[SIM_BWD] = f->bwd;
    req.plan_kind = SIM_PLAN_SAME;
    const int64_t tile = sim_report_same_tiles(&req);
    if (tile <= 0)
        return sim_plan_choose(f->algo, &sh, &run, SIM_PLAN_AUTO, 0, 0, out, err, errlen);
    if (sim_plan_make(f->algo, &sh, &run, tile, tile, SIM_PLAN_USER, out) != 0) {
        snprintf(err, errlen, "%s has no %s pass", sim_algo_name(f->algo),
                 sim_pass_name(q));
        return -1;
    }
    out->kind = SIM_PLAN_SAME;
    return 0;
}

int sim_validate_predict(const sim_vfig *f, double *value, double *time_s, char *err,
                         size_t errlen)
{
    const sim_shape sh = sim_validate_shape(f);
    sim_gm_opts o;
    memset(&o, 0, sizeof o);
    o.no_pipeline = f->no_pipeline;
    o.no_warp_spec = f->no_warp_spec;
    double t = 0.0, bytes = 0.0;
    for (int q = 0; q < SIM_PASS_COUNT; q++) {
        if (!(q == SIM_FWD ? f->fwd : f->bwd))
            continue;
        sim_plan p;
        char perr[512];
        if (sim_validate_plan(f, (sim_pass)q, &p, perr, sizeof perr) != 0) {
            snprintf(err, errlen, "%s%s", q == SIM_BWD ? "backward: " : "", perr);
            return -1;
        }
        sim_gm_result r;
        if (sim_gpu_model_run(f->gpu, &p, &sh, &o, &r, perr, sizeof perr) != 0) {
            snprintf(err, errlen, "%s%s", q == SIM_BWD ? "backward: " : "", perr);
            return -1;
        }
        t += r.time_s;
        bytes += (double)r.dram_read_bytes + (double)r.dram_write_bytes;
    }
    *time_s = t;
    *value = f->metric == SIM_VM_TFLOPS ? sim_validate_flops(f) / t * 1e-12
             : f->metric == SIM_VM_MS   ? t * 1e3
                                        : bytes * 1e-9;
    return 0;
}

/* ---- the errors ---------------------------------------------------------- */

double sim_validate_error(double pred, double meas)
{
    return (pred - meas) / meas;
}

double sim_validate_factor(double pred, double meas)
{
    return pred > meas ? pred / meas : meas / pred;
}

static void group_add(sim_vgroup *g, double *logsum, double factor)
{
    g->n++;
    *logsum += log(factor);
}

sim_vsummary sim_validate_summarise(const sim_vfig_list *l, sim_vrow *r)
{
    sim_vsummary s;
    memset(&s, 0, sizeof s);
    double log_fit = 0.0, log_other = 0.0;
    for (int k = 0; k < l->n; k++) {
        const sim_vfig *f = &l->items[k];
        if (r[k].status == SIM_VROW_NOT_MODELLED) {
            s.not_modelled++;
            continue;
        }
        if (r[k].status == SIM_VROW_FAILED) {
            s.failed++;
            continue;
        }
        r[k].error = sim_validate_error(r[k].pred, f->value);
        r[k].off = fabs(r[k].error) > SIM_VALIDATE_OFF;
        s.off += r[k].off;
        const double factor = sim_validate_factor(r[k].pred, f->value);
        if (f->fit)
            group_add(&s.fit, &log_fit, factor);
        else
            group_add(&s.other, &log_other, factor);
    }
    s.fit.geomean_error = s.fit.n ? exp(log_fit / s.fit.n) - 1.0 : 0.0;
    s.other.geomean_error = s.other.n ? exp(log_other / s.other.n) - 1.0 : 0.0;
    return s;
}

/* ---- the table ----------------------------------------------------------- */

static const char *metric_shown(sim_vmetric m)
{
    return m == SIM_VM_TFLOPS ? "TF/s" : m == SIM_VM_MS ? "ms" : "GB";
}

/* A figure as the table shows it: 4 significant digits in at most 7 columns. */
static void fmt_value(char *buf, size_t len, double v)
{
    if (v >= 99995 || v < 1e-3)
        snprintf(buf, len, "%.1e", v);
    else
        snprintf(buf, len, "%.4g", v);
}

static void print_group(FILE *out, const char *what, const sim_vgroup *g)
{
    if (g->n)
        fprintf(out, "  %-22s %3d, geometric mean |error| %.1f%%\n", what, g->n,
                100.0 * g->geomean_error);
    else
        fprintf(out, "  %-22s %3d\n", what, g->n);
}

void sim_validate_print(FILE *out, const char *name, const sim_vfig_list *l,
                        const sim_vrow *r, const sim_vsummary *s)
{
    fprintf(out, "fasim %s validate: the GPU model against %d published figure%s\n"
            "from %s\n\n", FASIM_VERSION, l->n, l->n == 1 ? "" : "s", name);
    /* the gpu and algo columns as wide as their widest names, so that the
     * shipped file's rows fit 80 columns */
    int gw = 3, aw = 4;
    for (int k = 0; k < l->n; k++) {
        const int w = (int)strlen(l->items[k].algo_name), v = (int)strlen(l->items[k].gpu->name);
        aw = w > aw ? w : aw;
        gw = v > gw ? v : gw;
    }
    fprintf(out, "%4s %-*s %-*s %-7s %1s %-5s %5s %3s %-4s %6s %6s %6s\n", "line", gw, "gpu",
            aw, "algo", "passes", "c", "B x H", "N", "d", "unit", "meas.", "pred.", "error");
    for (int k = 0; k < l->n; k++) {
        const sim_vfig *f = &l->items[k];
        char bh[24], meas[24], pred[24], err[24];
        snprintf(bh, sizeof bh, "%lldx%lld", (long long)f->batch, (long long)f->heads);
        fmt_value(meas, sizeof meas, f->value);
        if (r[k].status == SIM_VROW_OK) {
            fmt_value(pred, sizeof pred, r[k].pred);
            /* Past +999.9% the column says so; --json has the number. */
            snprintf(err, sizeof err, r[k].error < 9.9995 ? "%+.1f%%" : ">+999%%",
                     100.0 * r[k].error);
        } else {
            snprintf(pred, sizeof pred, "-");
            snprintf(err, sizeof err, "%s", r[k].status == SIM_VROW_FAILED ? "failed" : "n/m");
        }
        fprintf(out, "%4d %-*s %-*s %-7s %1s %-5s %5lld %3lld %-4s %6s %6s %6s%s\n", f->line,
                gw, f->gpu->name, aw, f->algo_name, f->fwd && f->bwd ? "fwd+bwd" : f->fwd ? "fwd" : "bwd",
                f->causal ? "c" : "-", bh, (long long)f->N, (long long)f->d,
                metric_shown(f->metric), meas, pred, err,
                r[k].status == SIM_VROW_OK && r[k].off ? " !" : f->fit ? " f" : "");
    }
    fprintf(out, "\n  c: causal mask. unfused: standard attention as a framework runs it, a\n"
            "  kernel per operation (GPT-2's operations; unfused/fa2bench:\n"
            "  FlashAttention-2's benchmark's, --unfused-ops fa2bench). fa3/np,\n"
            "  fa3/nw: fa3 with --pipeline off, with --warp-specialization off.\n"
            "  meas.: the published figure; pred.: the model's; error: (pred. -\n"
            "  meas.) / meas.; n/m: not modelled (fa3 off Hopper).\n"
            "  f: a row one of the model's constants was fitted on; !: off by more than %.0f%%.\n"
            "  Sources: the file's source column (--json).\n\n",
            100.0 * SIM_VALIDATE_OFF);
    print_group(out, "fitted rows (fit = 1):", &s->fit);
    print_group(out, "other rows (fit = 0):", &s->other);
    fprintf(out, "  |error| is the geometric mean of max(pred/meas, meas/pred), minus one.\n");
    fprintf(out, "  off by more than %.0f%%: %d row%s", 100.0 * SIM_VALIDATE_OFF, s->off,
            s->off == 1 ? "" : "s");
    int shown = 0;
    for (int k = 0; k < l->n && shown < 12; k++)
        if (r[k].status == SIM_VROW_OK && r[k].off)
            fprintf(out, "%s%d", shown++ ? ", " : s->off == 1 ? " (line " : " (lines ",
                    l->items[k].line);
    fprintf(out, "%s\n", shown ? (shown < s->off ? ", ...)" : ")") : "");
    if (s->not_modelled)
        fprintf(out, "  not modelled: %d row%s\n", s->not_modelled,
                s->not_modelled == 1 ? "" : "s");
    if (s->failed)
        fprintf(out, "  the model refused: %d row%s (the messages above)\n", s->failed,
                s->failed == 1 ? "" : "s");
}

static void json_group(sim_json *w, const char *key, const sim_vgroup *g)
{
    sim_json_obj(w, key);
    sim_json_int(w, "rows", g->n);
    if (g->n)
        sim_json_num(w, "geomean_error", g->geomean_error);
    else
        sim_json_null(w, "geomean_error");
    sim_json_end(w);
}

void sim_validate_json(FILE *out, const char *name, const sim_vfig_list *l, const sim_vrow *r,
                       const sim_vsummary *s)
{
    sim_json w;
    sim_report_json_begin(&w, out);
    sim_json_str(&w, "file", name);
    sim_json_num(&w, "off_threshold", SIM_VALIDATE_OFF);
    sim_json_arr_lines(&w, "rows");
    for (int k = 0; k < l->n; k++) {
        const sim_vfig *f = &l->items[k];
        sim_json_obj(&w, NULL);
        sim_json_int(&w, "line", f->line);
        sim_json_str(&w, "gpu", f->gpu->name);
        sim_json_str(&w, "dtype", sim_dtype_name(f->dtype));
        sim_json_str(&w, "algo", f->algo_name);
        sim_json_str(&w, "passes", f->fwd && f->bwd ? "fwd+bwd" : f->fwd ? "fwd" : "bwd");
        sim_json_bool(&w, "causal", f->causal);
        sim_json_int(&w, "batch", f->batch);
        sim_json_int(&w, "heads", f->heads);
        sim_json_int(&w, "N", f->N);
        sim_json_int(&w, "d", f->d);
        sim_json_str(&w, "metric", METRICS[f->metric]);
        sim_json_num(&w, "measured", f->value);
        sim_json_str(&w, "status", r[k].status == SIM_VROW_OK            ? "predicted"
                                   : r[k].status == SIM_VROW_NOT_MODELLED ? "not_modelled"
                                                                          : "failed");
        if (r[k].status == SIM_VROW_OK) {
            sim_json_num(&w, "predicted", r[k].pred);
            sim_json_num(&w, "error", r[k].error);
            sim_json_bool(&w, "off", r[k].off);
        } else {
            sim_json_null(&w, "predicted");
            sim_json_null(&w, "error");
            sim_json_null(&w, "off");
        }
        if (r[k].status == SIM_VROW_FAILED)
            sim_json_str(&w, "why", r[k].why);
        sim_json_bool(&w, "fit", f->fit);
        sim_json_str(&w, "source", f->source);
        sim_json_end(&w);
    }
    sim_json_end(&w);
    sim_json_obj(&w, "summary");
    json_group(&w, "fit", &s->fit);
    json_group(&w, "not_fit", &s->other);
    sim_json_int(&w, "off", s->off);
    sim_json_int(&w, "not_modelled", s->not_modelled);
    sim_json_int(&w, "failed", s->failed);
    sim_json_end(&w);
    sim_json_end(&w);
    fputc('\n', out);
}
