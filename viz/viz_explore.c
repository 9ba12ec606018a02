/*
 * viz_explore.c — the explore model and its screen (see viz_explore.h).
 *
 * The screen at 80 x 24 (text frames: the same without the status line):
 *
 *   title: N, d, dtype, M (and the GPU preset), causal
 *   the command that prints the same numbers; the loop order v opens
 *   HBM TRAFFIC: per loop order the plan's blocks, bytes read / written /
 *     in all, the ratio to naive, SRAM peak against M, fits (or why not);
 *     the exact totals
 *   BOUNDS: M in elements, the regime, Theorem 2, Proposition 3,
 *     measured / Theta
 *   the chart: HBM bytes against N, N/8 .. 8N, log-log, one mark per loop
 *     order, a slope-2 guide through FA2's point at N, the slopes from N to
 *     2N beside Theorem 2's
 *   the message line: what the last key did
 *   the status line: the keys
 *
 * Every number is a closed form of sim/ (sim_plan_choose, sim_theory_counts,
 * sim_theory_bounds); nothing is simulated here.
 */
#include "viz_explore.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_presets.h"
#include "sim_report.h"

const char VIZ_EXPLORE_KEYS[] = "NnDdMmRrCc0tTxgGaA123vz?hqQ";

const char VIZ_EXPLORE_STATUS[] =
    "N/n D/d M/m:*2/2 R/r C/c:+-16 t:dtype x:causal g:gpu a:algo v:view ?:help q:quit";

/* ---- small formatting helpers ------------------------------------------------ */

/* The loop orders the explorer shows: the default set (sim_algo_in_default),
 * whose table has a row each; an opt-in baseline (unfused) is the report's,
 * named with --algo. */
static int shown(int a)
{
    return sim_algo_in_default((sim_algo)a);
}

static void fmt_count(char *buf, size_t len, uint64_t v)
{
    sim_format_count(buf, len, v);
}

/* Bytes in at most 8 characters, three significant digits: "9.25 MiB",
 * "56.6 GiB", "680 KiB", "1020 MiB", "512 B". */
static void fmt_bytes_short(char *buf, size_t len, double v)
{
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    int u = 0;
    while (v >= 1023.5 && u < 6) {
        v /= 1024.0;
        u++;
    }
    if (u == 0 || fabs(v - round(v)) < 1e-9)
        snprintf(buf, len, "%.0f %s", v, unit[u]);
    else if (v < 9.995)
        snprintf(buf, len, "%.2f %s", v, unit[u]);
    else if (v < 99.95)
        snprintf(buf, len, "%.1f %s", v, unit[u]);
    else
        snprintf(buf, len, "%.0f %s", v, unit[u]);
}

/* An element count of the bounds (a double): exact with commas below 10^7,
 * else three significant digits ("1.153e+18"): they are Theta expressions,
 * not counts, and the line has room for nine characters each. */
static void fmt_el(char *buf, size_t len, double v)
{
    if (v < 1e7)
        fmt_count(buf, len, (uint64_t)(v + 0.5));
    else
        snprintf(buf, len, "%.3e", v);
}

/* A value as the command line takes it: "96K", "1M", "1G", or digits. */
static void fmt_arg(char *buf, size_t len, uint64_t v)
{
    if (v >= (UINT64_C(1) << 30) && v % (UINT64_C(1) << 30) == 0)
        snprintf(buf, len, "%lluG", (unsigned long long)(v >> 30));
    else if (v >= (UINT64_C(1) << 20) && v % (UINT64_C(1) << 20) == 0)
        snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
    else if (v >= 1024 && v % 1024 == 0)
        snprintf(buf, len, "%lluK", (unsigned long long)(v >> 10));
    else
        snprintf(buf, len, "%llu", (unsigned long long)v);
}

static const sim_gpu *preset(int k)
{
    int n;
    const sim_gpu *g = sim_gpu_presets(&n);
    return k >= 0 && k < n ? &g[k] : NULL;
}

static int npresets(void)
{
    int n;
    (void)sim_gpu_presets(&n);
    return n;
}

/* ---- configuration -------------------------------------------------------------- */

void viz_explore_config_default(viz_explore_config *c)
{
    memset(c, 0, sizeof *c);
    c->sh.N = 1024;
    c->sh.d = 64;
    c->sh.M = 96 * 1024;
    c->sh.dtype = SIM_FP16;
    c->sh.causal = 0;
    c->gpu = -1;
    c->view_algo = SIM_FA2;
}

int viz_explore_init(viz_explore *e, const viz_explore_config *cfg, char *err,
                     size_t errlen)
{
    memset(e, 0, sizeof *e);
    const sim_shape *sh = &cfg->sh;
    if (sh->N < 1 || sh->N > VIZ_EX_MAX_N) {
        snprintf(err, errlen, "N = %lld: explore takes 1 <= N <= 2^30 (%lld)",
                 (long long)sh->N, (long long)VIZ_EX_MAX_N);
        return -1;
    }
    if (sh->d < 1 || sh->d > VIZ_EX_MAX_D) {
        snprintf(err, errlen, "d = %lld: explore takes 1 <= d <= %lld", (long long)sh->d,
                 (long long)VIZ_EX_MAX_D);
        return -1;
    }
    if (cfg->gpu < -1 || cfg->gpu >= npresets()) {
        snprintf(err, errlen, "unknown gpu preset %d", cfg->gpu);
        return -1;
    }
    if (cfg->gpu < 0 && (sh->M < VIZ_EX_MIN_M || sh->M > VIZ_EX_MAX_M)) {
        snprintf(err, errlen, "M = %llu B: explore takes 256 B <= M <= 1 MiB (it searches "
                 "the plans again at every key, and larger M makes that slow; the report "
                 "takes up to 1G)", (unsigned long long)sh->M);
        return -1;
    }
    if ((unsigned)sh->dtype >= SIM_DTYPE_COUNT ||
        (unsigned)cfg->view_algo >= (unsigned)sim_algo_count()) {
        snprintf(err, errlen, "invalid dtype or loop order");
        return -1;
    }
    if (cfg->Br < 0 || cfg->Bc < 0 || cfg->Br > VIZ_EX_MAX_N || cfg->Bc > VIZ_EX_MAX_N) {
        snprintf(err, errlen, "block sizes: 0 (chosen) or 1 .. 2^30");
        return -1;
    }
    e->cfg = *cfg;
    e->M_own = cfg->sh.M;
    if (cfg->gpu >= 0)
        e->cfg.sh.M = preset(cfg->gpu)->smem_per_block;
    e->cfg.sh.causal = !!cfg->sh.causal;
    e->start = e->cfg;
    e->start_M_own = e->M_own;
    snprintf(e->msg, sizeof e->msg, "keys change the configuration; ? shows them all; "
             "v opens the view of %s", sim_algo_name(e->cfg.view_algo));
    viz_explore_update(e);
    return 0;
}

/* ---- the derived state ------------------------------------------------------- */

/* The buffer that takes the most SRAM in the plan's largest phase. */
static const sim_buffer *largest_buffer(const sim_plan *p)
{
    uint64_t best_sum = 0;
    int best_ph = 1;
    for (int ph = 1; ph <= p->nphases; ph++) {
        uint64_t sum = 0;
        for (int k = 0; k < p->nbuf; k++)
            if (p->buf[k].phase == ph)
                sum += p->buf[k].bytes;
        if (sum > best_sum) {
            best_sum = sum;
            best_ph = ph;
        }
    }
    const sim_buffer *b = NULL;
    for (int k = 0; k < p->nbuf; k++)
        if (p->buf[k].phase == best_ph && (!b || p->buf[k].bytes > b->bytes))
            b = &p->buf[k];
    return b;
}

/* sim_plan_choose refused: say why in one line, from the pinned plan (or the
 * smallest one, B = 1, for a size that is chosen). */
static void explain_refusal(sim_algo a, const sim_shape *sh, int64_t Br, int64_t Bc,
                            viz_explore_row *r)
{
    sim_plan p;
    if (sim_plan_make(a, sh, NULL, Br ? Br : 1, Bc ? Bc : 1, SIM_PLAN_USER, &p) != 0) {
        r->status = VIZ_EX_REFUSED;
        snprintf(r->why, sizeof r->why, "invalid block sizes");
        return;
    }
    r->plan = p;
    if (p.fits) {
        /* Plans fit, but sim_plan_choose found none with countable traffic;
         * there is no chosen plan to show. */
        r->status = VIZ_EX_OVERFLOW;
        r->plan.Br = r->plan.Bc = 0;
        snprintf(r->why, sizeof r->why, "counts pass 64 bits for every plan that fits");
        return;
    }
    r->status = VIZ_EX_REFUSED;
    char need[32], over[32], big[32];
    fmt_count(need, sizeof need, p.sram_peak);
    fmt_count(over, sizeof over, p.sram_peak - sh->M);
    const sim_buffer *b = largest_buffer(&p);
    fmt_count(big, sizeof big, b ? b->bytes : 0);
    if (Br && Bc)
        snprintf(r->why, sizeof r->why, "%lldx%lld: SRAM %s B, %s B over M; largest %s %s B",
                 (long long)p.Br, (long long)p.Bc, need, over, b ? b->name : "?", big);
    else if (Br || Bc)
        snprintf(r->why, sizeof r->why, "no %s fits beside %s = %lld: %lldx%lld needs %s B, "
                 "%s B over M", Br ? "B_c" : "B_r", Br ? "B_r" : "B_c",
                 (long long)(Br ? p.Br : p.Bc), (long long)p.Br, (long long)p.Bc, need,
                 over);
    else
        snprintf(r->why, sizeof r->why, "no plan fits: even 1x1 needs %s B of SRAM, %s B "
                 "over M", need, over);
}

/* The row of loop order a: the plan the report would choose with the same
 * options, and its closed-form traffic. */
static void make_row(sim_algo a, const sim_shape *sh, int64_t Br, int64_t Bc,
                     viz_explore_row *r)
{
    memset(r, 0, sizeof *r);
    const sim_plan_kind kind = (Br || Bc) ? SIM_PLAN_USER : SIM_PLAN_AUTO;
    char err[1024];
    if (sim_plan_choose(a, sh, NULL, kind, Br, Bc, &r->plan, err, sizeof err) != 0) {
        explain_refusal(a, sh, Br, Bc, r);
        return;
    }
    if (sim_theory_counts(&r->plan, sh, &r->counts) != 0) {
        memset(&r->counts, 0, sizeof r->counts);
        r->status = VIZ_EX_OVERFLOW;
        snprintf(r->why, sizeof r->why, "counts pass 64 bits at this N");
        return;
    }
    r->status = VIZ_EX_OK;
    r->read_bytes = sim_counts_read_bytes(&r->counts, sh->dtype);
    r->write_bytes = sim_counts_write_bytes(&r->counts, sh->dtype);
    r->total_bytes = r->read_bytes + r->write_bytes;
    r->elems = sim_counts_elems(&r->counts);
}

/* N * 2^(j/2), rounded to the nearest integer (halves up); exact for even j. */
static int64_t half_octave(int64_t N, int j)
{
    if (j % 2 == 0) {
        if (j >= 0)
            return N << (j / 2);
        const int s = -j / 2;
        return (N + (INT64_C(1) << (s - 1))) >> s;
    }
    return (int64_t)llround((double)N * pow(2.0, (double)j / 2.0));
}

static void make_chart(viz_explore *e)
{
    viz_explore_chart *ch = &e->chart;
    memset(ch, 0, sizeof *ch);
    const int64_t N = e->cfg.sh.N;
    ch->lx_lo = log2((double)N) - 3.0;
    ch->lx_hi = log2((double)N) + 3.0;
    for (int k = 0; k < VIZ_EX_CHART_POINTS; k++) {
        const int64_t Nk = half_octave(N, k - VIZ_EX_CHART_MID);
        if (Nk < 1)
            continue;
        if (ch->n && Nk <= ch->N[ch->n - 1]) {
            /* Rounding met the previous point (tiny N): the same values. */
            if (k == VIZ_EX_CHART_MID)
                ch->mid = ch->n - 1;
            continue;
        }
        const int q = ch->n++;
        if (k == VIZ_EX_CHART_MID)
            ch->mid = q;
        ch->N[q] = Nk;
        ch->lx[q] = log2((double)Nk);
        for (int a = 0; a < sim_algo_count(); a++) {
            viz_explore_row tmp;
            const viz_explore_row *r = &e->row[a];
            if (!shown(a))
                continue;
            if (Nk != N) {
                sim_shape sh = e->cfg.sh;
                sh.N = Nk;
                make_row((sim_algo)a, &sh, e->cfg.Br, e->cfg.Bc, &tmp);
                r = &tmp;
            }
            ch->ok[a][q] = r->status == VIZ_EX_OK;
            ch->bytes[a][q] = r->status == VIZ_EX_OK ? r->total_bytes : 0;
        }
    }
}

void viz_explore_update(viz_explore *e)
{
    const sim_shape *sh = &e->cfg.sh;
    for (int a = 0; a < sim_algo_count(); a++)
        if (shown(a))
            make_row((sim_algo)a, sh, e->cfg.Br, e->cfg.Bc, &e->row[a]);
    e->bounds = sim_theory_bounds(sh);
    const viz_explore_row *nv = &e->row[SIM_NAIVE];
    for (int a = 0; a < sim_algo_count(); a++) {
        viz_explore_row *r = &e->row[a];
        if (!shown(a) || r->status != VIZ_EX_OK)
            continue;
        if (nv->status == VIZ_EX_OK && nv->total_bytes)
            r->ratio = (double)r->total_bytes / (double)nv->total_bytes;
        const double theta = sim_report_theta(&e->bounds, (sim_algo)a);
        r->per_theta = theta > 0 ? (double)r->elems / theta : 0.0;
    }
    make_chart(e);
}

/* ---- keys ----------------------------------------------------------------------- */

#define MSG(...) snprintf(e->msg, sizeof e->msg, __VA_ARGS__)

static void key_double(viz_explore *e, int64_t *v, int64_t hi, const char *name,
                       const char *limit)
{
    char a[32], b[32];
    fmt_count(a, sizeof a, (uint64_t)*v);
    if (*v > hi / 2) {
        MSG("%s = %s: at most %s here", name, a, limit);
        return;
    }
    *v *= 2;
    fmt_count(b, sizeof b, (uint64_t)*v);
    MSG("%s doubled: %s -> %s", name, a, b);
}

static void key_halve(viz_explore *e, int64_t *v, const char *name)
{
    char a[32], b[32];
    fmt_count(a, sizeof a, (uint64_t)*v);
    if (*v < 2) {
        MSG("%s = 1: the smallest", name);
        return;
    }
    *v /= 2;
    fmt_count(b, sizeof b, (uint64_t)*v);
    MSG("%s halved: %s -> %s", name, a, b);
}

static void key_M(viz_explore *e, int up)
{
    uint64_t *M = &e->cfg.sh.M;
    char a[32], b[32];
    fmt_bytes_short(a, sizeof a, (double)*M);
    if (up ? *M > VIZ_EX_MAX_M / 2 : *M / 2 < VIZ_EX_MIN_M) {
        MSG("M = %s: explore takes 256 B .. 1 MiB", a);
        return;
    }
    const int had_gpu = e->cfg.gpu >= 0;
    *M = up ? *M * 2 : *M / 2;
    e->cfg.gpu = -1;
    fmt_bytes_short(b, sizeof b, (double)*M);
    MSG("M %s: %s -> %s%s", up ? "doubled" : "halved", a, b,
        had_gpu ? " (no gpu preset now)" : "");
}

static void key_block(viz_explore *e, int64_t *b, int up, const char *name,
                      const char *other, int64_t other_v)
{
    const int64_t N = e->cfg.sh.N;
    if (up) {
        if (*b >= N) {
            MSG("%s = %lld already covers N = %lld rows", name, (long long)*b, (long long)N);
            return;
        }
        *b += VIZ_EX_BLOCK_STEP;
    } else {
        if (*b == 0) {
            MSG("%s is chosen per loop order already (0); R/C pin a size", name);
            return;
        }
        *b = *b > VIZ_EX_BLOCK_STEP ? *b - VIZ_EX_BLOCK_STEP : 0;
    }
    if (*b == 0 && other_v == 0)
        MSG("%s chosen again: the best plan per loop order", name);
    else if (*b == 0)
        MSG("%s chosen per loop order; %s = %lld pinned", name, other, (long long)other_v);
    else if (other_v == 0)
        MSG("%s = %lld pinned; %s chosen per loop order", name, (long long)*b, other);
    else
        MSG("%s = %lld, %s = %lld: both pinned", name, (long long)*b, other,
            (long long)other_v);
}

static void key_gpu(viz_explore *e, int dir)
{
    const int n = npresets();
    const int old = e->cfg.gpu;
    if (old < 0)
        e->M_own = e->cfg.sh.M;
    /* n + 1 states: none (-1), then the presets in order. */
    const int next = ((old + 1 + dir) % (n + 1) + (n + 1)) % (n + 1) - 1;
    e->cfg.gpu = next;
    char b[32], c[32];
    if (next < 0) {
        e->cfg.sh.M = e->M_own;
        fmt_count(b, sizeof b, e->cfg.sh.M);
        MSG("no gpu preset: M = %s B, as before the presets", b);
        return;
    }
    const sim_gpu *g = preset(next);
    e->cfg.sh.M = g->smem_per_block;
    fmt_count(b, sizeof b, g->smem_per_block);
    fmt_bytes_short(c, sizeof c, (double)g->smem_per_block);
    MSG("gpu %s: M = %s B (%s), the shared memory one thread block can use", g->name, b, c);
}

viz_explore_action viz_explore_key(viz_explore *e, int key)
{
    if (e->help) {
        e->help = 0;
        MSG("help closed");
        return VIZ_EX_KEY_DONE;
    }
    viz_explore_config *c = &e->cfg;
    if (key >= '1' && key - '1' < sim_algo_count() && shown(key - '1')) {   /* 1 naive, ... */
        c->view_algo = (sim_algo)(key - '1');
        MSG("v opens the view of %s", sim_algo_name(c->view_algo));
        return VIZ_EX_KEY_DONE;
    }
    switch (key) {
    case 'N':
        key_double(e, &c->sh.N, VIZ_EX_MAX_N, "N", "2^30");
        break;
    case 'n':
        key_halve(e, &c->sh.N, "N");
        break;
    case 'D':
        key_double(e, &c->sh.d, VIZ_EX_MAX_D, "d", "65,536");
        break;
    case 'd':
        key_halve(e, &c->sh.d, "d");
        break;
    case 'M':
    case 'm':
        key_M(e, key == 'M');
        break;
    case 'R':
    case 'r':
        key_block(e, &c->Br, key == 'R', "B_r", "B_c", c->Bc);
        break;
    case 'C':
    case 'c':
        key_block(e, &c->Bc, key == 'C', "B_c", "B_r", c->Br);
        break;
    case '0':
        c->Br = c->Bc = 0;
        MSG("B_r and B_c chosen again: the best plan per loop order");
        break;
    case 't':
    case 'T': {
        const sim_dtype old = c->sh.dtype;
        c->sh.dtype = (sim_dtype)((old + (key == 't' ? 1 : SIM_DTYPE_COUNT - 1)) %
                                  SIM_DTYPE_COUNT);
        MSG("dtype %s -> %s: Q, K, V, O, S, P take %d B; m, l, L stay fp32",
            sim_dtype_name(old), sim_dtype_name(c->sh.dtype), sim_dtype_bytes(c->sh.dtype));
        break;
    }
    case 'x':
        c->sh.causal = !c->sh.causal;
        if (c->sh.causal)
            MSG("causal on: FA1 and FA2 skip fully masked blocks; naive still moves all "
                "of S, P");
        else
            MSG("causal off");
        break;
    case 'g':
    case 'G':
        key_gpu(e, key == 'g' ? 1 : -1);
        break;
    case 'a':
    case 'A':
        c->view_algo = sim_algo_next(c->view_algo);
        MSG("v opens the view of %s", sim_algo_name(c->view_algo));
        return VIZ_EX_KEY_DONE;          /* nothing derived changes */
    case 'v': {
        char cmd[160];
        viz_explore_command(e, 1, cmd, sizeof cmd);
        MSG("the view: %s", cmd);
        return VIZ_EX_KEY_VIEW;
    }
    case 'z':
        e->cfg = e->start;
        e->M_own = e->start_M_own;
        MSG("back to the starting configuration");
        break;
    case '?':
    case 'h':
        e->help = 1;
        MSG("help: any key closes it");
        return VIZ_EX_KEY_DONE;
    case 'q':
    case 'Q':
        return VIZ_EX_KEY_QUIT;
    default:
        if (key > 32 && key < 127)
            MSG("unknown key '%c': ? shows the keys", key);
        else
            MSG("unknown key (code %d): ? shows the keys", key);
        return VIZ_EX_KEY_UNKNOWN;
    }
    viz_explore_update(e);
    return VIZ_EX_KEY_DONE;
}

/* ---- the view and the command line ---------------------------------------------- */

void viz_explore_view_config(const viz_explore *e, viz_config *out)
{
    viz_config_default(out);
    out->algo = e->cfg.view_algo;
    out->sh = e->cfg.sh;
    out->Br = e->cfg.Br;
    out->Bc = e->cfg.Bc;
    out->plan_kind = (e->cfg.Br || e->cfg.Bc) ? SIM_PLAN_USER : SIM_PLAN_AUTO;
}

void viz_explore_command(const viz_explore *e, int view, char *buf, size_t len)
{
    const viz_explore_config *c = &e->cfg;
    char n[32], d[32], m[32];
    fmt_arg(n, sizeof n, (uint64_t)c->sh.N);
    fmt_arg(d, sizeof d, (uint64_t)c->sh.d);
    fmt_arg(m, sizeof m, c->sh.M);
    int k = snprintf(buf, len, "fasim%s --N %s --d %s", view ? " view" : "", n, d);
    /* The view has no --gpu; the report's --gpu also adds a roofline. */
    if (c->gpu >= 0 && !view)
        k += snprintf(buf + k, len > (size_t)k ? len - (size_t)k : 0, " --gpu %s",
                      preset(c->gpu)->name);
    else
        k += snprintf(buf + k, len > (size_t)k ? len - (size_t)k : 0, " --M %s", m);
    if (c->sh.dtype != SIM_FP16)
        k += snprintf(buf + k, len > (size_t)k ? len - (size_t)k : 0, " --dtype %s",
                      sim_dtype_name(c->sh.dtype));
    if (c->sh.causal)
        k += snprintf(buf + k, len > (size_t)k ? len - (size_t)k : 0, " --causal");
    if (c->Br)
        k += snprintf(buf + k, len > (size_t)k ? len - (size_t)k : 0, " --Br %lld",
                      (long long)c->Br);
    if (c->Bc)
        k += snprintf(buf + k, len > (size_t)k ? len - (size_t)k : 0, " --Bc %lld",
                      (long long)c->Bc);
    if (view)
        snprintf(buf + k, len > (size_t)k ? len - (size_t)k : 0, " --algo %s",
                 sim_algo_name(c->view_algo));
}

/* ---- drawing ----------------------------------------------------------------------- */

enum { MIN_W = 80, MIN_H = 23 };

/* Items joined by `sep` spaces from x, each whole or not at all: returns the
 * column after the last one written. */
static int put_items(viz_canvas *c, int x, int y, int w, int sep, viz_style st,
                     const char *const *items, int n)
{
    for (int k = 0; k < n; k++) {
        const int len = (int)strlen(items[k]);
        const int at = x + (k ? sep : 0);
        if (at + len > w)
            break;
        viz_canvas_text(c, at, y, len, st, items[k]);
        x = at + len;
    }
    return x;
}

static void draw_title(const viz_explore *e, viz_canvas *c)
{
    const sim_shape *sh = &e->cfg.sh;
    char it[6][96], n[32], d[32], m[32], ms[32];
    fmt_count(n, sizeof n, (uint64_t)sh->N);
    fmt_count(d, sizeof d, (uint64_t)sh->d);
    fmt_count(m, sizeof m, sh->M);
    fmt_bytes_short(ms, sizeof ms, (double)sh->M);
    snprintf(it[0], sizeof it[0], "fasim explore");
    snprintf(it[1], sizeof it[1], "N = %s", n);
    snprintf(it[2], sizeof it[2], "d = %s", d);
    snprintf(it[3], sizeof it[3], "%s", sim_dtype_name(sh->dtype));
    if (e->cfg.gpu >= 0)
        snprintf(it[4], sizeof it[4], "M = %s B (%s, %s)", m, ms, preset(e->cfg.gpu)->name);
    else if (sh->M >= 1024)
        snprintf(it[4], sizeof it[4], "M = %s B (%s)", m, ms);
    else
        snprintf(it[4], sizeof it[4], "M = %s B", m);
    snprintf(it[5], sizeof it[5], "%s", sh->causal ? "causal" : "not causal");
    const char *p[6] = { it[0], it[1], it[2], it[3], it[4], it[5] };
    int len = 0;
    for (int k = 0; k < 6; k++)
        len += (int)strlen(p[k]) + (k ? 2 : 0);
    put_items(c, 0, 0, c->w, len <= c->w ? 2 : 1, VIZ_ST_TITLE, p, 6);
}

static void draw_command(const viz_explore *e, viz_canvas *c)
{
    char cmd[200], line[240], right[48];
    viz_explore_command(e, 0, cmd, sizeof cmd);
    snprintf(line, sizeof line, "same numbers: %s", cmd);
    if ((int)strlen(line) > c->w)
        snprintf(line, sizeof line, "%s", cmd);
    viz_canvas_text(c, 0, 1, c->w, VIZ_ST_DIM, line);
    snprintf(right, sizeof right, "v opens %s", sim_algo_name(e->cfg.view_algo));
    const int rl = (int)strlen(right), x = c->w - rl;
    if (x >= (int)strlen(line) + 2)
        viz_canvas_text(c, x, 1, rl, VIZ_ST_NORMAL, right);
}

static void plan_note(const viz_explore *e, char *buf, size_t len)
{
    const int64_t Br = e->cfg.Br, Bc = e->cfg.Bc;
    if (!Br && !Bc)
        snprintf(buf, len, "best plans");
    else if (Br && Bc)
        snprintf(buf, len, "%lldx%lld pinned", (long long)Br, (long long)Bc);
    else if (Br)
        snprintf(buf, len, "B_r = %lld pinned", (long long)Br);
    else
        snprintf(buf, len, "B_c = %lld pinned", (long long)Bc);
}

static void draw_table(const viz_explore *e, viz_canvas *c, int y)
{
    const int W = c->w;
    const char *head = "HBM TRAFFIC  exact; equal to the simulator's counts";
    viz_canvas_text(c, 0, y, W, VIZ_ST_HEAD, head);
    char note[96];
    plan_note(e, note, sizeof note);
    const int nl = (int)strlen(note);
    if (W - nl >= (int)strlen(head) + 2)
        viz_canvas_text(c, W - nl, y, nl, VIZ_ST_HEAD, note);
    char line[512];
    snprintf(line, sizeof line, "%c%s %-5s %10s %10s %10s %10s %6s %9s %5s %s", ' ', "#",
             "loop", "B_r x B_c", "read", "written", "total", "/naive", "SRAM peak", "of M",
             "fits");
    viz_canvas_text(c, 0, y + 1, W, VIZ_ST_DIM, line);
    const uint64_t M = e->cfg.sh.M;
    for (int a = 0, row = 0; a < sim_algo_count(); a++) {
        const viz_explore_row *r = &e->row[a];
        if (!shown(a))
            continue;
        const int yr = y + 2 + row++;
        const char mark = a == (int)e->cfg.view_algo ? '>' : ' ';
        const char *name = sim_algo_name((sim_algo)a);
        char blocks[48];
        if (r->plan.Br > 0)
            snprintf(blocks, sizeof blocks, "%lldx%lld", (long long)r->plan.Br,
                     (long long)r->plan.Bc);
        else
            snprintf(blocks, sizeof blocks, "-");
        if (r->status == VIZ_EX_REFUSED) {
            snprintf(line, sizeof line, "%c%d %-5s refused: %s", mark, a + 1, name, r->why);
            viz_canvas_text(c, 0, yr, W, VIZ_ST_OVER, line);
            continue;
        }
        if (r->status == VIZ_EX_OVERFLOW) {
            snprintf(line, sizeof line, "%c%d %-5s %10s  %s", mark, a + 1, name, blocks,
                     r->why);
            viz_canvas_text(c, 0, yr, W, VIZ_ST_OVER, line);
            continue;
        }
        char rd[32], wr[32], tot[32], ratio[32], peak[32], pct[32];
        fmt_bytes_short(rd, sizeof rd, (double)r->read_bytes);
        fmt_bytes_short(wr, sizeof wr, (double)r->write_bytes);
        fmt_bytes_short(tot, sizeof tot, (double)r->total_bytes);
        if (r->ratio > 0)
            snprintf(ratio, sizeof ratio, "%.4f", r->ratio);
        else
            snprintf(ratio, sizeof ratio, "-");
        fmt_count(peak, sizeof peak, r->plan.sram_peak);
        const double f = 100.0 * (double)r->plan.sram_peak / (double)M;
        snprintf(pct, sizeof pct, f < 99.95 ? "%.1f%%" : "%.0f%%", f);
        snprintf(line, sizeof line, "%c%d %-5s %10s %10s %10s %10s %6s %9s %5s %s", mark,
                 a + 1, name, blocks, rd, wr, tot, ratio, peak, pct,
                 r->plan.fits ? "yes" : "NO");
        viz_canvas_text(c, 0, yr, W, a == (int)e->cfg.view_algo ? VIZ_ST_TITLE
                                                                       : VIZ_ST_NORMAL,
                        line);
    }
    /* The exact totals: with commas when they fit, else plain digits. */
    for (int commas = 1; commas >= 0; commas--) {
        int n = snprintf(line, sizeof line, "  exact bytes:");
        for (int a = 0; a < sim_algo_count(); a++) {
            const viz_explore_row *r = &e->row[a];
            char v[40];
            if (!shown(a))
                continue;
            if (r->status != VIZ_EX_OK)
                snprintf(v, sizeof v, "-");
            else if (commas)
                fmt_count(v, sizeof v, r->total_bytes);
            else
                snprintf(v, sizeof v, "%llu", (unsigned long long)r->total_bytes);
            n += snprintf(line + n, sizeof line - (size_t)n, "  %s %s",
                          sim_algo_name((sim_algo)a), v);
        }
        if (n <= W || !commas)
            break;
    }
    viz_canvas_text(c, 0, y + 5, W, VIZ_ST_NORMAL, line);
}

static void draw_bounds(const viz_explore *e, viz_canvas *c, int y)
{
    const sim_bounds *b = &e->bounds;
    const sim_shape *sh = &e->cfg.sh;
    char m[32], line[256];
    fmt_el(m, sizeof m, b->M_elems);
    const char *regime = b->in_regime ? "yes"
                         : b->M_elems < (double)sh->d ? "no, M < d"
                                                       : "no, M > N d";
    snprintf(line, sizeof line, "BOUNDS  elements; M = %s elements (bytes / %d)  "
             "d <= M <= N d: %s", m, sim_dtype_bytes(sh->dtype), regime);
    viz_canvas_text(c, 0, y, c->w, VIZ_ST_HEAD, line);
    char s1[32], s2[32], s3[32];
    fmt_el(s1, sizeof s1, b->theta_standard);
    fmt_el(s2, sizeof s2, b->theta_flash);
    fmt_el(s3, sizeof s3, b->io_floor);
    char i1[96], i2[96], i3[96];
    snprintf(i1, sizeof i1, "  Theorem 2: standard N d + N^2 = %s", s1);
    snprintf(i2, sizeof i2, "flash N^2 d^2 / M = %s", s2);
    const char *l1[2] = { i1, i2 };
    put_items(c, 0, y + 1, c->w, 3, VIZ_ST_NORMAL, l1, 2);
    snprintf(i1, sizeof i1, "  Prop. 3: lower bound %s", s2);
    snprintf(i2, sizeof i2, "4 N d = %s", s3);
    int n = snprintf(i3, sizeof i3, "measured/Theta");
    for (int a = 0; a < sim_algo_count(); a++) {
        if (!shown(a))
            continue;
        if (e->row[a].status == VIZ_EX_OK && e->row[a].per_theta > 0)
            n += snprintf(i3 + n, sizeof i3 - (size_t)n, " %s %.2f",
                          sim_algo_name((sim_algo)a), e->row[a].per_theta);
        else
            n += snprintf(i3 + n, sizeof i3 - (size_t)n, " %s -", sim_algo_name((sim_algo)a));
    }
    /* The measured/Theta constants matter more than 4 N d: drop 4 N d first. */
    const char *l2[3] = { i1, i3, i2 };
    put_items(c, 0, y + 2, c->w, 2, VIZ_ST_NORMAL, l2, 3);
}

char viz_explore_mark(sim_algo a)
{
    const sim_loop *l = sim_algo_loop(a);
    return l ? l->mark : '?';
}

/* The chart's style of a loop order's mark, as its descriptor says: each
 * built-in mark its own colour; by default the headers' style. */
static viz_style mark_style(sim_algo a)
{
    const sim_loop *l = sim_algo_loop(a);
    switch (l ? l->mark_style : SIM_MARK_HEAD) {
    case SIM_MARK_WRITTEN: return VIZ_ST_WRITTEN;
    case SIM_MARK_READ: return VIZ_ST_READ;
    default: return VIZ_ST_HEAD;
    }
}

int viz_explore_cell(const viz_explore_area *a, int64_t N, uint64_t bytes, int *x, int *y)
{
    if (!a->present || N < 1 || bytes < 1)
        return 0;
    const double lx = log2((double)N), ly = log2((double)bytes);
    const double fx = (lx - a->lx_lo) / (a->lx_hi - a->lx_lo) * (double)(a->w - 1);
    const double fy = (a->ly_hi - ly) / (a->ly_hi - a->ly_lo) * (double)(a->h - 1);
    const long cx = lround(fx), cy = lround(fy);
    if (cx < 0 || cx >= a->w || cy < 0 || cy >= a->h)
        return 0;
    *x = a->x0 + (int)cx;
    *y = a->y0 + (int)cy;
    return 1;
}

static int cell_is(const viz_canvas *c, int x, int y, char ch)
{
    return c->ch[(size_t)y * (size_t)c->w + (size_t)x] == ch;
}

/* A y label: 2^ly bytes, at most 8 characters. */
static void fmt_pow2(char *buf, size_t len, double ly)
{
    if (ly >= 64.0)
        snprintf(buf, len, "16 EiB");
    else
        fmt_bytes_short(buf, len, exp2(ly));
}

/* The slope of loop order a's bytes from N to 2N (points mid and mid + 2). */
static int chart_slope(const viz_explore_chart *ch, int a, double *s)
{
    const int k0 = ch->mid, k1 = ch->mid + 2;
    if (k1 >= ch->n || !ch->ok[a][k0] || !ch->ok[a][k1] || ch->N[k1] != 2 * ch->N[k0])
        return 0;
    *s = log2((double)ch->bytes[a][k1] / (double)ch->bytes[a][k0]);
    return 1;
}

static void draw_side(const viz_explore *e, viz_canvas *c, int x, int y, int h, int w)
{
    const viz_explore_chart *ch = &e->chart;
    char line[8][64];
    int n = 0, head2;
    snprintf(line[n++], sizeof line[0], "slope, N to 2N:");
    for (int a = 0; a < sim_algo_count(); a++) {
        double s;
        if (!shown(a))
            continue;
        if (chart_slope(ch, a, &s))
            snprintf(line[n++], sizeof line[0], "  %-5s %6.3f", sim_algo_name((sim_algo)a), s);
        else
            snprintf(line[n++], sizeof line[0], "  %-5s %6s", sim_algo_name((sim_algo)a), "-");
    }
    /* Theorem 2's expressions over the same step: N d + N^2, and N^2 d^2 / M
     * (exactly 2). */
    const double N = (double)e->cfg.sh.N, d = (double)e->cfg.sh.d;
    const double std = log2((2 * N * d + 4 * N * N) / (N * d + N * N));
    head2 = n;
    snprintf(line[n++], sizeof line[0], "Theorem 2:");
    snprintf(line[n++], sizeof line[0], "  std   %6.3f", std);
    snprintf(line[n++], sizeof line[0], "  flash %6.3f", 2.0);
    for (int k = 0; k < n && k < h; k++)
        viz_canvas_text(c, x, y + k, w, k == 0 || k == head2 ? VIZ_ST_HEAD : VIZ_ST_NORMAL,
                        line[k]);
}

/* "n naive  1 fa1  2 fa2  * several  . slope 2  : N": each loop order's
 * mark and name, then the other marks. Returns buf. */
static const char *chart_legend(char *buf, size_t len)
{
    size_t o = 0;
    for (int a = 0; a < sim_algo_count() && o < len; a++)
        if (shown(a))
            o += (size_t)snprintf(buf + o, len - o, "%c %s  ",
                                  viz_explore_mark((sim_algo)a), sim_algo_name((sim_algo)a));
    if (o < len)
        snprintf(buf + o, len - o, "* several  . slope 2  : N");
    return buf;
}

/* The chart in rows [y, y + h) of the canvas: a header, the plot, the axis
 * and its labels. */
static void draw_chart(const viz_explore *e, viz_canvas *c, int y, int h, viz_explore_area *ar)
{
    const viz_explore_chart *ch = &e->chart;
    const int W = c->w;
    viz_canvas_text(c, 0, y, W, VIZ_ST_HEAD, "HBM BYTES vs N, log-log:");
    char legend[256];
    viz_canvas_text(c, 26, y, W - 26, VIZ_ST_DIM, chart_legend(legend, sizeof legend));
    const int side_w = 17, label_w = 8;
    const int ph = h - 3;                  /* header, axis, labels */
    const int x0 = label_w + 1, pw = W - x0 - side_w - 1;
    if (ph < 3 || pw < 13) {
        viz_canvas_text(c, 0, y + 1, W, VIZ_ST_DIM, "(the chart needs a window of 80 x 24)");
        return;
    }
    /* The y range: whole octaves around every point that has a count. */
    double lo = INFINITY, hi = -INFINITY;
    for (int a = 0; a < sim_algo_count(); a++)
        for (int k = 0; k < ch->n; k++)
            if (ch->ok[a][k] && ch->bytes[a][k] > 0) {
                const double ly = log2((double)ch->bytes[a][k]);
                lo = ly < lo ? ly : lo;
                hi = ly > hi ? ly : hi;
            }
    if (!(lo <= hi)) {
        viz_canvas_text(c, 0, y + 1, W, VIZ_ST_DIM,
                        "(no plan fits at any N of the chart: nothing to draw)");
        return;
    }
    viz_explore_area a = { 1, x0, y + 1, pw, ph, ch->lx_lo, ch->lx_hi, floor(lo), ceil(hi) };
    if (a.ly_hi - a.ly_lo < 1.0)
        a.ly_hi = a.ly_lo + 1.0;
    if (ar)
        *ar = a;
    /* The y axis: labels at the top, middle and bottom rows. */
    for (int r = 0; r < ph; r++) {
        viz_canvas_text(c, label_w, a.y0 + r, 1, VIZ_ST_DIM, "|");
        if (r != 0 && r != ph - 1 && r != (ph - 1) / 2)
            continue;
        char lab[32];
        fmt_pow2(lab, sizeof lab, a.ly_hi - (a.ly_hi - a.ly_lo) * r / (double)(ph - 1));
        viz_canvas_printf(c, 0, a.y0 + r, label_w, VIZ_ST_DIM, "%*s", label_w, lab);
    }
    /* The marks; two loop orders in one cell make '*'. */
    for (int al = 0; al < sim_algo_count(); al++)
        for (int k = 0; k < ch->n; k++) {
            int cx, cy;
            if (!ch->ok[al][k] || !viz_explore_cell(&a, ch->N[k], ch->bytes[al][k], &cx, &cy))
                continue;
            if (cell_is(c, cx, cy, ' '))
                viz_canvas_fill(c, cx, cy, 1, viz_explore_mark((sim_algo)al),
                                mark_style((sim_algo)al));
            else if (!cell_is(c, cx, cy, viz_explore_mark((sim_algo)al)))
                viz_canvas_fill(c, cx, cy, 1, '*', VIZ_ST_BOTH);
        }
    /* The slope-2 guide through FA2's point at N (else FA1's, else naive's). */
    int anchor = -1;
    for (int al = SIM_FA2; al >= SIM_NAIVE && anchor < 0; al--)
        if (ch->ok[al][ch->mid])
            anchor = al;
    const int cmid = a.x0 + (int)lround((log2((double)e->cfg.sh.N) - a.lx_lo) /
                                        (a.lx_hi - a.lx_lo) * (double)(pw - 1));
    for (int q = 0; q < pw; q++) {
        const int cx = a.x0 + q;
        if (anchor >= 0) {
            const double lx = a.lx_lo + (a.lx_hi - a.lx_lo) * q / (double)(pw - 1);
            const double ly = log2((double)ch->bytes[anchor][ch->mid]) +
                              2.0 * (lx - ch->lx[ch->mid]);
            const long r = lround((a.ly_hi - ly) / (a.ly_hi - a.ly_lo) * (double)(ph - 1));
            if (r >= 0 && r < ph && cell_is(c, cx, a.y0 + (int)r, ' '))
                viz_canvas_fill(c, cx, a.y0 + (int)r, 1, '.', VIZ_ST_DIM);
        }
    }
    /* The current N: a dotted column where nothing else is. */
    for (int r = 0; r < ph; r++)
        if (cell_is(c, cmid, a.y0 + r, ' '))
            viz_canvas_fill(c, cmid, a.y0 + r, 1, ':', VIZ_ST_DIM);
    /* The x axis: a tick at every octave, labels where they fit. */
    const int ya = a.y0 + ph;
    viz_canvas_text(c, label_w, ya, 1, VIZ_ST_DIM, "+");
    viz_canvas_fill(c, a.x0, ya, pw, '-', VIZ_ST_DIM);
    int last_end = -1;
    char lab[40];
    /* The middle label first, so that it always shows. */
    fmt_arg(lab, sizeof lab, (uint64_t)e->cfg.sh.N);
    char mid[48];
    snprintf(mid, sizeof mid, "N = %s", lab);
    const int ml = (int)strlen(mid), mx = cmid - ml / 2;
    viz_canvas_text(c, mx, ya + 1, ml, VIZ_ST_NORMAL, mid);
    for (int k = 0; k < ch->n; k++) {
        /* Octaves only: the points N * 2^j for whole j. */
        const double oct = ch->lx[k] - log2((double)e->cfg.sh.N);
        if (fabs(oct - round(oct)) > 0.2)
            continue;
        const double fx = (ch->lx[k] - a.lx_lo) / (a.lx_hi - a.lx_lo) * (double)(pw - 1);
        const int cx = a.x0 + (int)lround(fx);
        if (cx < a.x0 || cx >= a.x0 + pw)
            continue;
        viz_canvas_fill(c, cx, ya, 1, '+', VIZ_ST_DIM);
        if (k == ch->mid)
            continue;
        fmt_arg(lab, sizeof lab, (uint64_t)ch->N[k]);
        const int ll = (int)strlen(lab);
        int lx = cx - ll / 2;
        if (lx < a.x0 - 1)
            lx = a.x0 - 1;
        const int overlaps_mid = lx + ll >= mx && lx <= mx + ml;
        if (lx > last_end && !overlaps_mid && lx + ll <= a.x0 + pw) {
            viz_canvas_text(c, lx, ya + 1, ll, VIZ_ST_DIM, lab);
            last_end = lx + ll;
        }
    }
    draw_side(e, c, W - side_w, a.y0, ph + 2, side_w);
}

static const char *const HELP[] = {
    "fasim explore: change the problem, see the traffic at once",
    "",
    "N / n     double / halve N          D / d   double / halve d",
    "M / m     double / halve M, 256 B .. 1 MiB (ends a gpu preset)",
    "R / r     B_r + 16 / - 16           C / c   B_c + 16 / - 16",
    "0         B_r = B_c = 0: the best plan per loop order again",
    "t / T     next / previous dtype     x       causal on / off",
    "g / G     gpu preset: none, a100, h100, h200 (M = its smem)",
    "a, 1 2 3  the loop order v opens: next, or naive / fa1 / fa2",
    "v         open the view (fasim view) of this configuration",
    "z         back to the start         ? h     this help",
    "q         quit",
    "",
    "table: the closed forms of the plan the simulator would use",
    /* draw_help puts the chart's own legend in this line */
    "chart: n naive  1 fa1  2 fa2  * several  . slope 2  : N",
    "any key closes this help",
};

/* The help box, its chart line with the legend of the chart itself. The
 * line of the keys 1 2 3 names the built-in loop orders, which they choose
 * in a column of their own; a registered one is chosen with a or its
 * number. */
static void draw_help(viz_canvas *c)
{
    enum { NHELP = (int)(sizeof HELP / sizeof HELP[0]) };
    const char *lines[NHELP];
    char chart[280], legend[256];
    snprintf(chart, sizeof chart, "chart: %s", chart_legend(legend, sizeof legend));
    for (int k = 0; k < NHELP; k++)
        lines[k] = strncmp(HELP[k], "chart: ", 7) == 0 ? chart : HELP[k];
    viz_canvas_box(c, lines, NHELP);
}


void viz_explore_draw(const viz_explore *e, viz_canvas *c, const char *status,
                      viz_explore_area *area)
{
    viz_canvas_clear(c);
    if (area)
        memset(area, 0, sizeof *area);
    const int H = c->h, has_status = status != NULL;
    const int msg_y = H - 1 - has_status;
    draw_title(e, c);
    if (H > 1)
        draw_command(e, c);
    /* Fixed rows: title, command, 6 of table, 3 of bounds; then the chart
     * takes what is left above the message line. */
    if (msg_y >= 8)
        draw_table(e, c, 2);
    if (msg_y >= 11)
        draw_bounds(e, c, 8);
    if (msg_y - 11 >= 1)
        draw_chart(e, c, 11, msg_y - 11, area);
    if (msg_y > 0) {
        if (c->w < MIN_W || H < MIN_H + has_status)
            viz_canvas_text(c, 0, msg_y, c->w, VIZ_ST_DIM,
                            "(window too small: explore is drawn for 80 x 24 or more)");
        else
            viz_canvas_text(c, 0, msg_y, c->w, VIZ_ST_NORMAL, e->msg);
    }
    if (has_status)
        viz_canvas_text(c, 0, H - 1, c->w, VIZ_ST_STATUS, status);
    if (e->help)
        draw_help(c);
}

int viz_explore_text_frame(FILE *out, const viz_explore *e, int w, int h)
{
    viz_canvas c;
    if (viz_canvas_init(&c, w, h) != 0)
        return -1;
    viz_explore_draw(e, &c, NULL, NULL);
    int rc = 0;
    for (int y = 0; y < c.h && rc == 0; y++) {
        const char *row = c.ch + (size_t)y * (size_t)c.w;
        int n = c.w;
        while (n > 0 && row[n - 1] == ' ')
            n--;
        if (n && fwrite(row, 1, (size_t)n, out) != (size_t)n)
            rc = -1;
        if (fputc('\n', out) == EOF)
            rc = -1;
    }
    viz_canvas_free(&c);
    return rc;
}
