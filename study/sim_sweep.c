/*
 * sim_sweep.c — sweeps over N, d, M: plans, counts, fits, renderers (see
 * sim_sweep.h).
 *
 * Order of work: every point's plans, closed-form counts and tile steps are
 * made first (so a configuration that cannot run is refused before any
 * time is spent), then the engine is chosen, then the simulator runs (when
 * it does) and each of its counts is compared with the closed form, then the
 * fits. Memory: one sim_sweep_point per point (about 0.5 KiB), no tensors.
 */
#define _POSIX_C_SOURCE 200809L
#include "sim_sweep.h"
#include "sim_bmask.h"
#include "sim_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef FASIM_VERSION
#define FASIM_VERSION "0.0.0"
#endif

#define ERR(...) do { if (err && errlen) snprintf(err, errlen, __VA_ARGS__); } while (0)

/* Two exponents "agree" when they differ by at most this: the tolerance
 * the tests hold sweeps to, and about the spread that blocks rounded to 16
 * cause over a range of 16x. */
#define AGREE_TOL 0.05
/* The re-read block counts as "not changing" with a parameter when its
 * exponent is below this (an exponent of 0.02 over 16x is a 6% change: one
 * multiple-of-16 step of a block of 256). */
#define FIXED_BLOCK_TOL 0.02

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- axes ----------------------------------------------------------------- */

static const char *const PARAM_NAMES[SIM_PARAM_COUNT] = { "N", "d", "M", "Br", "Bc" };

const char *sim_param_name(sim_param p)
{
    return (unsigned)p < SIM_PARAM_COUNT ? PARAM_NAMES[p] : "?";
}

int sim_param_parse(const char *s, sim_param *out)
{
    if (s && (!strcmp(s, "Br") || !strcmp(s, "Bc"))) {
        *out = s[1] == 'r' ? SIM_PARAM_BR : SIM_PARAM_BC;
        return 0;
    }
    if (!s || !s[0] || s[1])
        return -1;
    switch (s[0]) {
    case 'N': case 'n': *out = SIM_PARAM_N; return 0;
    case 'd': case 'D': *out = SIM_PARAM_D; return 0;
    case 'M': case 'm': *out = SIM_PARAM_M; return 0;
    default: return -1;
    }
}

int sim_axis_range(sim_axis *ax, sim_param p, int64_t lo, int64_t hi, sim_step_kind kind,
                   int64_t step, char *err, size_t errlen)
{
    memset(ax, 0, sizeof *ax);
    ax->param = p;
    ax->is_range = 1;
    ax->step_kind = kind;
    ax->step = step;
    if (lo < 1) {
        ERR("the range must start at 1 or more");
        return -1;
    }
    if (lo > hi) {
        ERR("empty range: the start (%lld) is above the end (%lld)", (long long)lo,
            (long long)hi);
        return -1;
    }
    if ((kind == SIM_STEP_MUL && step < 2) || (kind == SIM_STEP_ADD && step < 1)) {
        ERR("step %s%lld never reaches the end (use *2 or more, or +1 or more)",
            kind == SIM_STEP_MUL ? "*" : "+", (long long)step);
        return -1;
    }
    for (int64_t v = lo; v <= hi;) {
        if (ax->n == SIM_AXIS_MAX_VALUES) {
            ERR("more than %d values; use a larger step", SIM_AXIS_MAX_VALUES);
            return -1;
        }
        ax->values[ax->n++] = v;
        int64_t next;
        if (kind == SIM_STEP_MUL ? __builtin_mul_overflow(v, step, &next)
                                 : __builtin_add_overflow(v, step, &next))
            break;
        v = next;
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int sim_axis_list(sim_axis *ax, sim_param p, const int64_t *v, int n, char *err,
                  size_t errlen)
{
    memset(ax, 0, sizeof *ax);
    ax->param = p;
    if (n < 1) {
        ERR("%s: no values given", sim_param_name(p));
        return -1;
    }
    if (n > SIM_AXIS_MAX_VALUES) {
        ERR("%s: more than %d values", sim_param_name(p), SIM_AXIS_MAX_VALUES);
        return -1;
    }
    for (int k = 0; k < n; k++) {
        if (v[k] < 1) {
            ERR("%s: values must be 1 or more", sim_param_name(p));
            return -1;
        }
        ax->values[k] = v[k];
    }
    qsort(ax->values, (size_t)n, sizeof ax->values[0], cmp_i64);
    int m = 0;
    for (int k = 0; k < n; k++)
        if (m == 0 || ax->values[m - 1] != ax->values[k])
            ax->values[m++] = ax->values[k];
    ax->n = m;
    return 0;
}

/* ---- one measurement --------------------------------------------------------- */

/* The block size algo's forward loop re-reads across (its descriptor's);
 * B_r for an algo no descriptor serves. */
static sim_block reread_of(sim_algo algo)
{
    const sim_loop *l = sim_algo_loop(algo);
    return l ? l->reread : SIM_BLOCK_R;
}

uint64_t sim_counts_total_bytes(const sim_counts *c, sim_dtype dt)
{
    return sim_counts_read_bytes(c, dt) + sim_counts_write_bytes(c, dt);
}

int64_t sim_reread_block(sim_algo algo, int64_t Br, int64_t Bc)
{
    return reread_of(algo) == SIM_BLOCK_C ? Bc : Br;
}

/* Plan and closed form of one loop order; the first half of sim_measure. */
static int plan_and_count(sim_algo algo, const sim_shape *sh, sim_plan_kind kind,
                          int64_t Br, int64_t Bc, sim_measurement *m, char *err,
                          size_t errlen)
{
    memset(m, 0, sizeof *m);
    char perr[1024];
    if (sim_plan_choose(algo, sh, NULL, kind, Br, Bc, &m->plan, perr, sizeof perr) != 0) {
        ERR("%s", perr);
        return SIM_EUSAGE;
    }
    if (sim_bmask_plan_check(sh, m->plan.Br, m->plan.Bc, err, errlen) != 0)
        return SIM_EUSAGE;
    if (sim_theory_counts(&m->plan, sh, &m->counts) != 0 ||
        sim_theory_steps(&m->plan, sh, &m->steps) != 0) {
        ERR("N = %lld, d = %lld: %s's HBM counts would overflow 64 bits; use a smaller "
            "N or d", (long long)sh->N, (long long)sh->d, sim_algo_name(algo));
        return SIM_EUSAGE;
    }
    return SIM_OK;
}

/* Run the simulator on m's plan and check it against m's closed form. */
static int simulate(sim_algo algo, const sim_shape *sh, sim_measurement *m, char *err,
                    size_t errlen)
{
    sim_result r;
    char rerr[512];
    double t0 = now_seconds();
    if (sim_run(algo, sh, &m->plan, NULL, NULL, NULL, NULL, &r, rerr, sizeof rerr) != 0) {
        ERR("%s: %s", sim_algo_name(algo), rerr);
        return SIM_EFAIL;
    }
    m->seconds = now_seconds() - t0;
    int same = sim_counts_equal(&r.counts, &m->counts) && r.steps == m->steps;
    sim_result_free(&r);
    if (!same) {
        ERR("%s at N = %lld, d = %lld, M = %llu: the simulator's counts differ from the "
            "closed form (a bug in fasim: please report it with this command line)",
            sim_algo_name(algo), (long long)sh->N, (long long)sh->d,
            (unsigned long long)sh->M);
        return SIM_EFAIL;
    }
    m->simulated = 1;
    return SIM_OK;
}

static uint64_t steps_limit(uint64_t max_steps)
{
    return max_steps ? max_steps : SIM_DEFAULT_MAX_STEPS;
}

static int check_steps(sim_algo algo, const sim_shape *sh, uint64_t steps, uint64_t limit,
                       char *err, size_t errlen)
{
    if (steps <= limit)
        return SIM_OK;
    ERR("%s at N = %lld would take %llu tile steps, more than the limit of %llu; use "
        "--engine closed-form (exact counts without simulating), a larger --M, or raise "
        "--max-steps", sim_algo_name(algo), (long long)sh->N, (unsigned long long)steps,
        (unsigned long long)limit);
    return SIM_EUSAGE;
}

int sim_measure(sim_algo algo, const sim_shape *sh, sim_plan_kind kind, int64_t Br,
                int64_t Bc, sim_engine engine, uint64_t max_steps, sim_measurement *out,
                char *err, size_t errlen)
{
    int rc = plan_and_count(algo, sh, kind, Br, Bc, out, err, errlen);
    if (rc != SIM_OK || engine == SIM_ENGINE_CLOSED ||
        (engine == SIM_ENGINE_AUTO && out->steps > SIM_ENGINE_AUTO_STEPS))
        return rc;
    rc = check_steps(algo, sh, out->steps, steps_limit(max_steps), err, errlen);
    if (rc != SIM_OK)
        return rc;
    return simulate(algo, sh, out, err, errlen);
}

/* ---- the sweep --------------------------------------------------------------- */

int64_t sim_point_param(const sim_sweep_point *pt, sim_param p)
{
    switch (p) {
    case SIM_PARAM_N: return pt->sh.N;
    case SIM_PARAM_D: return pt->sh.d;
    case SIM_PARAM_M: return (int64_t)pt->sh.M;
    case SIM_PARAM_BR: return pt->Br;
    case SIM_PARAM_BC: return pt->Bc;
    default: return 0;
    }
}

static void set_param(sim_sweep_point *pt, sim_param p, int64_t v)
{
    switch (p) {
    case SIM_PARAM_N: pt->sh.N = v; break;
    case SIM_PARAM_D: pt->sh.d = v; break;
    case SIM_PARAM_M: pt->sh.M = (uint64_t)v; break;
    case SIM_PARAM_BR: pt->Br = v; break;
    case SIM_PARAM_BC: pt->Bc = v; break;
    default: break;
    }
}

static int is_varied(const sim_sweep_spec *sp, sim_param p)
{
    for (int a = 0; a < sp->naxes; a++)
        if (sp->axes[a].param == p)
            return 1;
    return 0;
}

/* Whether the sweep varies a block size. */
static int varies_block(const sim_sweep_spec *sp)
{
    return is_varied(sp, SIM_PARAM_BR) || is_varied(sp, SIM_PARAM_BC);
}

/* A point of a block sweep whose blocks do not fit M: kept, marked, with the
 * smallest plan of the blocks asked (the other one 1 when not pinned), whose
 * SRAM peak says by how much. */
static void mark_misfit(sim_sweep_entry *r, sim_algo algo, const sim_shape *sh, int64_t Br,
                        int64_t Bc)
{
    sim_plan p;
    memset(r, 0, sizeof *r);
    r->misfit = 1;
    if (sim_plan_make(algo, sh, NULL, Br ? Br : 1, Bc ? Bc : 1, SIM_PLAN_USER, &p) == 0) {
        r->Br = p.Br;
        r->Bc = p.Bc;
        r->Tr = p.Tr;
        r->Tc = p.Tc;
        r->sram_peak = p.sram_peak;
    }
}

static void fill_run(sim_sweep_entry *r, sim_algo algo, const sim_shape *sh,
                     const sim_measurement *m, const sim_gpu *gpu)
{
    memset(r, 0, sizeof *r);
    r->Br = m->plan.Br;
    r->Bc = m->plan.Bc;
    r->Tr = m->plan.Tr;
    r->Tc = m->plan.Tc;
    r->sram_peak = m->plan.sram_peak;
    r->steps = m->steps;
    r->read_bytes = sim_counts_read_bytes(&m->counts, sh->dtype);
    r->write_bytes = sim_counts_write_bytes(&m->counts, sh->dtype);
    r->bytes = r->read_bytes + r->write_bytes;
    r->elems = sim_counts_elems(&m->counts);
    r->capped = sim_reread_block(algo, m->plan.Br, m->plan.Bc) >= sh->N;
    r->softmax_passes = m->plan.softmax_passes;
    const sim_flops f = sim_run_flops(&m->plan, sh);
    r->flops = f.matmul;
    if (gpu)
        r->roof = sim_roofline_estimate(gpu, sh->dtype, f, (double)r->bytes);
}

static const char *shape_text(char *buf, size_t len, const sim_shape *sh)
{
    char m[32];
    sim_format_count(m, sizeof m, sh->M);
    snprintf(buf, len, "N = %lld, d = %lld, M = %s B", (long long)sh->N, (long long)sh->d,
             m);
    return buf;
}

/* The axes and algorithms make a sweep: each parameter varied once, with
 * values, within SIM_SWEEP_MAX_POINTS points, and a loop order to run.
 * Returns SIM_OK with the point count in *npoints, or SIM_EUSAGE. */
static int check_spec(const sim_sweep_spec *spec, int64_t *npoints, char *err, size_t errlen)
{
    if (spec->naxes < 1 || spec->naxes > SIM_PARAM_COUNT) {
        ERR("a sweep needs one to %d varied parameters", SIM_PARAM_COUNT);
        return SIM_EUSAGE;
    }
    *npoints = 1;
    for (int a = 0; a < spec->naxes; a++) {
        for (int b = 0; b < a; b++)
            if (spec->axes[a].param == spec->axes[b].param) {
                ERR("%s is varied twice; give each parameter one --vary",
                    sim_param_name(spec->axes[a].param));
                return SIM_EUSAGE;
            }
        if (spec->axes[a].n < 1) {
            ERR("%s: no values", sim_param_name(spec->axes[a].param));
            return SIM_EUSAGE;
        }
        *npoints *= spec->axes[a].n;
        if (*npoints > SIM_SWEEP_MAX_POINTS) {
            ERR("the grid has more than %d configurations; use fewer values",
                SIM_SWEEP_MAX_POINTS);
            return SIM_EUSAGE;
        }
    }
    int nalgos = 0;
    for (int a = 0; a < sim_algo_count(); a++)
        nalgos += !!spec->run_algo[a];
    if (!nalgos) {
        ERR("no loop order to run");
        return SIM_EUSAGE;
    }
    return SIM_OK;
}

/* The run with the most tile steps, which check_steps judges. */
typedef struct {
    uint64_t steps;
    int algo, pt;
} worst_run;

/* 1. The grid, plans, closed forms and steps, into res->pts and meas
 * (sim_algo_count() per point). The first axis varies slowest: index
 * k = ((i_0 * n_1) + i_1) * n_2 + i_2. Returns SIM_OK or an error. */
static int plan_grid(sim_sweep_result *res, sim_measurement *meas, worst_run *worst,
                     char *err, size_t errlen)
{
    const sim_sweep_spec *spec = &res->spec;
    uint64_t total = 0;
    for (int k = 0; k < res->npoints; k++) {
        sim_sweep_point *pt = &res->pts[k];
        pt->sh = spec->base;
        int rest = k;
        for (int a = spec->naxes - 1; a >= 0; a--) {
            const sim_axis *ax = &spec->axes[a];
            set_param(pt, ax->param, ax->values[rest % ax->n]);
            rest /= ax->n;
        }
        pt->bounds = sim_theory_bounds(&pt->sh);
        const int64_t Br = pt->Br ? pt->Br : spec->Br, Bc = pt->Bc ? pt->Bc : spec->Bc;
        const sim_plan_kind kind = Br || Bc ? SIM_PLAN_USER : spec->plan_kind;
        for (int a = 0; a < sim_algo_count(); a++) {
            if (!spec->run_algo[a])
                continue;
            char e2[1200], where[96];
            sim_measurement *m = &meas[k * sim_algo_count() + a];
            int rc = plan_and_count((sim_algo)a, &pt->sh, kind, Br, Bc, m, e2, sizeof e2);
            if (rc == SIM_EUSAGE && varies_block(spec) && !m->plan.fits) {
                mark_misfit(&pt->run[a], (sim_algo)a, &pt->sh, Br, Bc);
                continue;
            }
            if (rc != SIM_OK) {
                ERR("at %s: %s", shape_text(where, sizeof where, &pt->sh), e2);
                return rc;
            }
            if (__builtin_add_overflow(total, m->steps, &total))
                total = UINT64_MAX;
            if (m->steps > worst->steps) {
                worst->steps = m->steps;
                worst->algo = a;
                worst->pt = k;
            }
        }
    }
    res->total_steps = total;
    return SIM_OK;
}

/* 2. The engine: simulate, or the closed forms (auto: when the sweep
 * would take too many tile steps, saying so in res->engine_note). */
static int use_simulator(sim_sweep_result *res)
{
    const uint64_t total = res->total_steps;
    switch (res->spec.engine) {
    case SIM_ENGINE_SIM:
        return 1;
    case SIM_ENGINE_CLOSED:
        return 0;
    case SIM_ENGINE_AUTO:
        if (total <= SIM_ENGINE_AUTO_STEPS)
            return 1;
        snprintf(res->engine_note, sizeof res->engine_note,
                 "closed forms: simulating would take %.2g tile steps (about %.0f s "
                 "here); --engine sim forces it", (double)total, ceil((double)total / 2.2e8));
        return 0;
    }
    return 0;
}

/* 3. The runs: simulated (with progress) or as counted, into res->pts.
 * Returns SIM_OK or the simulator's error. */
static int run_grid(sim_sweep_result *res, sim_measurement *meas, int sim, char *err,
                    size_t errlen)
{
    const sim_sweep_spec *spec = &res->spec;
    uint64_t done = 0;
    for (int k = 0; k < res->npoints; k++) {
        sim_sweep_point *pt = &res->pts[k];
        for (int a = 0; a < sim_algo_count(); a++) {
            if (!spec->run_algo[a])
                continue;
            sim_measurement *m = &meas[k * sim_algo_count() + a];
            if (pt->run[a].misfit)
                continue;
            if (sim) {
                int rc = simulate((sim_algo)a, &pt->sh, m, err, errlen);
                if (rc != SIM_OK)
                    return rc;
                done += m->steps;
                if (spec->progress)
                    spec->progress(spec->progress_ctx, done, res->total_steps);
            }
            fill_run(&pt->run[a], (sim_algo)a, &pt->sh, m, spec->gpu);
            pt->run[a].seconds = m->seconds;
        }
    }
    return SIM_OK;
}

int sim_sweep_run(const sim_sweep_spec *spec, sim_sweep_result *res, char *err,
                  size_t errlen)
{
    memset(res, 0, sizeof *res);
    double t_start = now_seconds();
    int64_t npoints;
    int rc = check_spec(spec, &npoints, err, errlen);
    if (rc != SIM_OK)
        return rc;
    res->spec = *spec;
    res->npoints = (int)npoints;
    res->pts = calloc((size_t)npoints, sizeof *res->pts);
    sim_measurement *meas = calloc((size_t)npoints * (size_t)sim_algo_count(), sizeof *meas);
    if (!res->pts || !meas) {
        free(res->pts);
        free(meas);
        res->pts = NULL;
        ERR("out of memory for %lld configurations", (long long)npoints);
        return SIM_EFAIL;
    }
    worst_run worst = { 0, 0, 0 };
    rc = plan_grid(res, meas, &worst, err, errlen);
    const int sim = rc == SIM_OK && use_simulator(res);
    if (sim)
        rc = check_steps((sim_algo)worst.algo, &res->pts[worst.pt].sh, worst.steps,
                         steps_limit(spec->max_steps), err, errlen);
    if (sim && rc == SIM_OK && res->total_steps > steps_limit(spec->max_steps)) {
        /* The sweep's work in all, bounded as one run's (sim_limits.h). */
        ERR("the sweep would simulate %.2g tile steps in all, more than the limit of %llu; "
            "use --engine closed-form (exact counts without simulating) or raise --max-steps",
            (double)res->total_steps, (unsigned long long)steps_limit(spec->max_steps));
        rc = SIM_EUSAGE;
    }
    if (rc == SIM_OK)
        rc = run_grid(res, meas, sim, err, errlen);
    free(meas);
    if (rc != SIM_OK) {
        free(res->pts);
        res->pts = NULL;
        res->npoints = 0;
        return rc;
    }
    res->simulated = sim;
    sim_sweep_fit_all(res);
    res->seconds = now_seconds() - t_start;
    return SIM_OK;
}

void sim_sweep_free(sim_sweep_result *res)
{
    if (!res)
        return;
    free(res->pts);
    res->pts = NULL;
    res->npoints = 0;
}

/* ---- fits ----------------------------------------------------------------------- */

const char *sim_fit_status_name(sim_fit_status s)
{
    switch (s) {
    case SIM_FIT_OK: return "ok";
    case SIM_FIT_OUT_OF_REGIME: return "out of regime";
    case SIM_FIT_CAPPED: return "blocks at their caps";
    case SIM_FIT_FIXED_BLOCKS: return "fixed blocks";
    case SIM_FIT_FAILED: return "no fit";
    }
    return "?";
}

static const char *block_name(sim_algo a)
{
    return reread_of(a) == SIM_BLOCK_C ? "B_c" : "B_r";
}

/* The quantity a subject's fit is about, at one point. */
static double subject_y(const sim_sweep_point *pt, int s)
{
    if (s == SIM_SUBJECT_BOUND)
        return pt->bounds.lower_bound;
    return (double)pt->run[s].bytes;
}

/* 1 when subject s is a loop order meeting standard attention's bound,
 * Theta(N d + N^2); 0 for FlashAttention's and for the lower bound. */
static int standard_subject(int s)
{
    return s != SIM_SUBJECT_BOUND && sim_report_bound((sim_algo)s) == SIM_BOUND_STANDARD;
}

static double theory_y(const sim_sweep_point *pt, int s)
{
    if (s == SIM_SUBJECT_BOUND)
        return pt->bounds.lower_bound;
    return sim_report_theta(&pt->bounds, (sim_algo)s);
}

static void param_text(char *buf, size_t len, sim_param p, int64_t v)
{
    if (p == SIM_PARAM_M)
        sim_format_bytes(buf, len, (uint64_t)v);
    else
        sim_format_count(buf, len, (uint64_t)v);
}

/* A one-line reason why a fitted exponent differs from the theory's. */
static void explain(const sim_sweep_result *res, int s, sim_param p, const int *use,
                    sim_sweep_fit *f)
{
    if (standard_subject(s)) {
        int64_t switch_at = -1;
        int prev = 0;
        for (int k = 0; k < res->npoints; k++) {
            if (!use[k])
                continue;
            int sp = res->pts[k].run[s].softmax_passes;
            if (prev && sp != prev && switch_at < 0)
                switch_at = sim_point_param(&res->pts[k], p);
            prev = sp;
        }
        if (switch_at >= 0) {
            char v[32];
            param_text(v, sizeof v, p, switch_at);
            snprintf(f->note, sizeof f->note,
                     "the softmax changes between one pass over whole rows of S and two "
                     "passes over tiles at %s = %s (whether a row of S fits in M): a "
                     "step in the constant, not in the exponent", sim_param_name(p), v);
        } else if (p != SIM_PARAM_N) {
            snprintf(f->note, sizeof f->note,
                     "the tiled Q K^T and P V re-read K and V T_r times (~N^2 d^2 / M "
                     "elements); Theta(Nd + N^2) absorbs that only while d^2 <= M");
        } else {
            snprintf(f->note, sizeof f->note,
                     "lower-order terms (Q, K, V, O moved once) weigh over this range");
        }
        return;
    }
    double want_b = p == SIM_PARAM_M ? 1.0 : p == SIM_PARAM_D ? -1.0 : 0.0;
    if (p != SIM_PARAM_N && f->has_block && fabs(f->block_exponent - want_b) > AGREE_TOL) {
        snprintf(f->note, sizeof f->note,
                 "%s %s like %s^%.2f, not %s^%.0f: SRAM also holds buffers that do not "
                 "scale with %s (fp32 S_ij, statistics, K_j/V_j), and blocks are "
                 "multiples of 16", block_name((sim_algo)s), want_b > 0 ? "grows" : "shrinks",
                 sim_param_name(p), f->block_exponent, sim_param_name(p), want_b,
                 sim_param_name(p));
    } else if (f->has_end_slope) {
        snprintf(f->note, sizeof f->note,
                 "lower-order terms (Q, K, V, O moved once: ~4 N d) still weigh at the "
                 "small end; the slope over the last two points is %.3f", f->end_slope);
    } else {
        snprintf(f->note, sizeof f->note,
                 "lower-order terms and blocks rounded to multiples of 16 weigh over this "
                 "range");
    }
}

/* Why points were left out of a subject's fits: counts over all points. */
typedef struct {
    int used;                    /* in regime and not capped: fitted */
    int out, above, below;       /* out of regime: all, M > N d, M < d */
    int out_capped;              /* out of regime with the blocks at their caps too */
    int cap;                     /* in regime, blocks at their caps */
    int nofit;                   /* a block sweep's blocks do not fit M */
} fit_tally;

/* use[k] = 1 for the points subject s's fits can use; the others counted. */
static fit_tally usable_points(const sim_sweep_result *res, int s, int *use)
{
    fit_tally t = { 0, 0, 0, 0, 0, 0, 0 };
    for (int k = 0; k < res->npoints; k++) {
        const sim_sweep_point *pt = &res->pts[k];
        if (s != SIM_SUBJECT_BOUND && pt->run[s].misfit) {
            t.nofit++;
            continue;
        }
        if (!pt->bounds.in_regime) {
            t.out++;
            t.out_capped += s != SIM_SUBJECT_BOUND && pt->run[s].capped;
            if (pt->bounds.M_elems > (double)pt->sh.N * (double)pt->sh.d)
                t.above++;
            else
                t.below++;
            continue;
        }
        if (s != SIM_SUBJECT_BOUND && pt->run[s].capped) {
            t.cap++;
            continue;
        }
        use[k] = 1;
        t.used++;
    }
    return t;
}

/* The axes whose parameter takes two values or more among the usable
 * points, into active[]; returns how many. */
static int active_axes(const sim_sweep_result *res, const int *use, int active[SIM_PARAM_COUNT])
{
    const sim_sweep_spec *sp = &res->spec;
    int nact = 0;
    for (int a = 0; a < sp->naxes; a++) {
        int64_t first = -1;
        int spread = 0;
        for (int k = 0; k < res->npoints && !spread; k++) {
            if (!use[k])
                continue;
            int64_t v = sim_point_param(&res->pts[k], sp->axes[a].param);
            if (first < 0)
                first = v;
            else if (v != first)
                spread = 1;
        }
        if (spread)
            active[nact++] = a;
    }
    return nact;
}

/* The note and status of an axis that could not be fitted: too few usable
 * points along it, because of the regime, the caps, or one value only. */
static void unfitted_note(sim_sweep_fit *f, int s, sim_param p, const fit_tally *t, int n)
{
    if (t->nofit > 0 && t->nofit >= t->out && t->nofit >= t->cap) {
        f->status = SIM_FIT_FAILED;
        snprintf(f->note, sizeof f->note, "the blocks do not fit M at %d of %d points: too "
                 "few left to fit", t->nofit, n);
    } else if (t->out >= t->cap && t->out > 0) {
        f->status = SIM_FIT_OUT_OF_REGIME;
        char capped[96] = "";
        if (t->out_capped)
            snprintf(capped, sizeof capped, "; blocks at their caps (%s = N) at %d",
                     block_name((sim_algo)s), t->out_capped);
        snprintf(f->note, sizeof f->note,
                 "out of regime at %d of %d points (M > N d at %d, M < d at %d, M "
                 "in elements%s): Theorem 2 speaks for d <= M <= N d only",
                 t->out, n, t->above, t->below, capped);
    } else if (t->cap > 0) {
        f->status = SIM_FIT_CAPPED;
        snprintf(f->note, sizeof f->note,
                 "%s = N at %d of %d points: one block holds every row, nothing "
                 "is re-read, so traffic stops following Theorem 2",
                 block_name((sim_algo)s), t->cap, n);
    } else {
        f->status = SIM_FIT_FAILED;
        snprintf(f->note, sizeof f->note, "%s takes one value only: nothing to fit",
                 sim_param_name(p));
    }
}

/* One varied axis: the slope between the last two usable points
 * (ascending order), when there are two. */
static void end_slope(const sim_sweep_result *res, int s, sim_param p, const int *use,
                      sim_sweep_fit *f)
{
    int k1 = -1, k2 = -1;
    for (int k = res->npoints - 1; k >= 0 && k1 < 0; k--)
        if (use[k]) {
            if (k2 < 0)
                k2 = k;
            else
                k1 = k;
        }
    if (k1 >= 0) {
        const sim_sweep_point *p1 = &res->pts[k1], *p2 = &res->pts[k2];
        f->has_end_slope = 1;
        f->end_slope = log(subject_y(p2, s) / subject_y(p1, s)) /
                       log((double)sim_point_param(p2, p) / (double)sim_point_param(p1, p));
    }
}

/* The joint fits over the active axes: traffic (fy), the theory expression
 * (ft), and the re-read block (fb; an algorithm's only). Scratch: x holds
 * n * SIM_PARAM_COUNT, y, yt, yb n each. */
typedef struct {
    int *use;
    double *x, *y, *yt, *yb;
    sim_fit fy, ft, fb;
    int ok, ok_b;                /* fy and ft, and fb, were fitted */
} fit_work;

static void joint_fits(const sim_sweep_result *res, int s, const int *active, int nact,
                       fit_work *w)
{
    const sim_sweep_spec *sp = &res->spec;
    int m = 0;
    for (int k = 0; k < res->npoints; k++) {
        if (!w->use[k])
            continue;
        const sim_sweep_point *pt = &res->pts[k];
        for (int q = 0; q < nact; q++)
            w->x[m * nact + q] = (double)sim_point_param(pt, sp->axes[active[q]].param);
        w->y[m] = subject_y(pt, s);
        w->yt[m] = theory_y(pt, s);
        if (s != SIM_SUBJECT_BOUND)
            w->yb[m] = (double)sim_reread_block((sim_algo)s, pt->run[s].Br, pt->run[s].Bc);
        m++;
    }
    w->ok = sim_fit_power_law(m, nact, w->x, w->y, &w->fy) == 0 &&
            sim_fit_power_law(m, nact, w->x, w->yt, &w->ft) == 0;
    if (w->ok && s != SIM_SUBJECT_BOUND)
        w->ok_b = sim_fit_power_law(m, nact, w->x, w->yb, &w->fb) == 0;
}

/* A block size's fit: Theorem 2 sizes the blocks itself (to M / d), so it
 * has no exponent in them to compare with; the note says what moves. */
static void block_note(const sim_sweep_spec *sp, int s, sim_param p, sim_sweep_fit *f)
{
    f->has_theory = 0;
    const int pinned = p == SIM_PARAM_BC ? sp->Br || is_varied(sp, SIM_PARAM_BR)
                                         : sp->Bc || is_varied(sp, SIM_PARAM_BC);
    const int rereads = (p == SIM_PARAM_BC) == (reread_of((sim_algo)s) == SIM_BLOCK_C);
    const char *b = p == SIM_PARAM_BC ? "B_c" : "B_r";
    if (standard_subject(s) && rereads)
        snprintf(f->note, sizeof f->note, "S and P (N x N_k, written and read back) do not "
                 "depend on %s; only the tiled products' reads of K and V, N / %s times, "
                 "fall as it grows", b, b);
    else if (rereads)
        snprintf(f->note, sizeof f->note, "the other operand is re-read N / %s times, so "
                 "traffic falls as %s grows, until the tensors moved once (~4 N d) weigh "
                 "(FlashAttention, Figure 2 middle)", b, b);
    else if (pinned)
        snprintf(f->note, sizeof f->note, "re-reads across %s, not %s, and %s is pinned "
                 "here: %s only cuts the inner loop", block_name((sim_algo)s), b,
                 block_name((sim_algo)s), b);
    else
        snprintf(f->note, sizeof f->note, "re-reads across %s, not %s: %s moves the bytes "
                 "only through the %s that fits beside it (pin that with --%s)",
                 block_name((sim_algo)s), b, b, block_name((sim_algo)s),
                 p == SIM_PARAM_BC ? "Br" : "Bc");
}

/* Axis a's fit from the joint fits (its exponent is column q), then the
 * verdict: fixed blocks, agreement with Theorem 2, or why not (explain). */
static void judge_axis(sim_sweep_result *res, int s, int a, int q, const fit_work *w,
                       sim_sweep_fit *f)
{
    const sim_param p = res->spec.axes[a].param;
    f->status = SIM_FIT_OK;
    f->exponent = w->fy.exponent[q];
    f->r2 = w->fy.r2;
    f->max_resid = w->fy.max_resid;
    f->has_theory = 1;
    f->theory = w->ft.exponent[q];
    if (w->ok_b) {
        f->has_block = 1;
        f->block_exponent = w->fb.exponent[q];
    }
    if (res->spec.naxes == 1)
        end_slope(res, s, p, w->use, f);
    if (s == SIM_SUBJECT_BOUND)
        return;
    if (sim_param_is_block(p)) {
        block_note(&res->spec, s, p, f);
        return;
    }
    /* FlashAttention: Theorem 2's N^2 d^2 / M assumes blocks sized to M/d. */
    if (!standard_subject(s) && p != SIM_PARAM_N && f->has_block &&
        fabs(f->block_exponent) < FIXED_BLOCK_TOL) {
        f->status = SIM_FIT_FIXED_BLOCKS;
        f->has_theory = 0;
        snprintf(f->note, sizeof f->note,
                 "%s is the same at every point (fixed --Br/--Bc?): traffic cannot "
                 "follow %s; Theorem 2 sizes blocks to M / d",
                 block_name((sim_algo)s), p == SIM_PARAM_M ? "1/M" : "d^2");
        return;
    }
    double diff = f->exponent - f->theory;
    if (fabs(diff) <= AGREE_TOL)
        return;
    explain(res, s, p, w->use, f);
}

static void fit_subject(sim_sweep_result *res, int s)
{
    const sim_sweep_spec *sp = &res->spec;
    const int n = res->npoints, naxes = sp->naxes;
    fit_work w;
    memset(&w, 0, sizeof w);
    w.use = calloc((size_t)n, sizeof *w.use);
    w.x = malloc((size_t)n * SIM_PARAM_COUNT * sizeof *w.x);
    w.y = malloc((size_t)n * sizeof *w.y);
    w.yt = malloc((size_t)n * sizeof *w.yt);
    w.yb = malloc((size_t)n * sizeof *w.yb);
    sim_sweep_fit *F = res->fits[s];
    for (int a = 0; a < naxes; a++) {
        memset(&F[a], 0, sizeof F[a]);
        F[a].total = n;
        F[a].status = SIM_FIT_FAILED;
    }
    if (!w.use || !w.x || !w.y || !w.yt || !w.yb) {
        for (int a = 0; a < naxes; a++)
            snprintf(F[a].note, sizeof F[a].note, "out of memory for the fit");
        goto out;
    }
    const fit_tally t = usable_points(res, s, w.use);
    int active[SIM_PARAM_COUNT];
    const int nact = active_axes(res, w.use, active);
    if (nact > 0)
        joint_fits(res, s, active, nact, &w);
    for (int a = 0; a < naxes; a++) {
        sim_sweep_fit *f = &F[a];
        f->used = t.used;
        f->out_of_regime = t.out;
        f->capped = t.cap;
        int q = -1;
        for (int k = 0; k < nact; k++)
            if (active[k] == a)
                q = k;
        if (q < 0) {
            unfitted_note(f, s, sp->axes[a].param, &t, n);
        } else if (!w.ok) {
            f->status = SIM_FIT_FAILED;
            snprintf(f->note, sizeof f->note, "no fit: too few usable points, or the "
                     "varied parameters move together");
        } else {
            judge_axis(res, s, a, q, &w, f);
        }
    }
out:
    free(w.use);
    free(w.x);
    free(w.y);
    free(w.yt);
    free(w.yb);
}

void sim_sweep_fit_all(sim_sweep_result *res)
{
    for (int s = 0; s <= SIM_SUBJECT_BOUND; s++)
        if (s == SIM_SUBJECT_BOUND || res->spec.run_algo[s])
            fit_subject(res, s);
}

/* ---- text ------------------------------------------------------------------------ */

static void axis_heading(char *buf, size_t len, const sim_axis *ax)
{
    char lo[32], hi[32];
    param_text(lo, sizeof lo, ax->param, ax->values[0]);
    param_text(hi, sizeof hi, ax->param, ax->values[ax->n - 1]);
    if (ax->n == 1)
        snprintf(buf, len, "%s = %s", sim_param_name(ax->param), lo);
    else if (ax->is_range)
        snprintf(buf, len, "%s = %s .. %s (%s%lld, %d values)", sim_param_name(ax->param),
                 lo, hi, ax->step_kind == SIM_STEP_MUL ? "x" : "+", (long long)ax->step,
                 ax->n);
    else
        snprintf(buf, len, "%s = %s .. %s (%d values)", sim_param_name(ax->param), lo, hi,
                 ax->n);
}

static const char *plan_words(const sim_sweep_spec *sp)
{
    if (varies_block(sp))
        return "blocks below";
    if (sp->Br || sp->Bc)
        return "your blocks";
    return sp->plan_kind == SIM_PLAN_PAPER ? "paper plans" : "best plans";
}

static const char *regime_word(const sim_sweep_point *pt)
{
    if (pt->bounds.in_regime)
        return "yes";
    return pt->bounds.M_elems < (double)pt->sh.d ? "M<d" : "M>Nd";
}

#define MAX_COLS 16

/* Print lead then text, wrapped at 78 columns with a hanging indent; no
 * trailing spaces. */
static void wrap_print(FILE *out, const char *lead, int indent, const char *text)
{
    sim_text_wrap_lead(out, lead, (size_t)indent, 78, text);
}

/* A block sweep's blocks: the one varied and the other, pinned or chosen. */
static void blocks_heading(FILE *out, const sim_sweep_spec *sp)
{
    const int vr = is_varied(sp, SIM_PARAM_BR), vc = is_varied(sp, SIM_PARAM_BC);
    if (vr && vc)
        fprintf(out, "blocks: B_r and B_c as varied\n");
    else if (vr ? sp->Bc : sp->Br)
        fprintf(out, "blocks: %s as varied, %s = %lld\n", vr ? "B_r" : "B_c",
                vr ? "B_c" : "B_r", (long long)(vr ? sp->Bc : sp->Br));
    else
        fprintf(out, "blocks: %s as varied, %s for each the one with the fewest HBM bytes "
                "that fits\n", vr ? "B_r" : "B_c", vr ? "B_c" : "B_r");
}

/* The heading: the axes, the fixed parameters, and the engine. */
static void text_heading(FILE *out, const sim_sweep_result *res)
{
    const sim_sweep_spec *sp = &res->spec;
    char b[160], c[64];
    fprintf(out, "fasim %s sweep  ", FASIM_VERSION);
    for (int a = 0; a < sp->naxes; a++) {
        axis_heading(b, sizeof b, &sp->axes[a]);
        fprintf(out, "%s%s", a ? "; " : "", b);
    }
    fputc('\n', out);
    fprintf(out, "fixed:");
    if (!is_varied(sp, SIM_PARAM_N)) {
        sim_format_count(c, sizeof c, (uint64_t)sp->base.N);
        fprintf(out, " N = %s,", c);
    }
    if (!is_varied(sp, SIM_PARAM_D))
        fprintf(out, " d = %lld,", (long long)sp->base.d);
    if (!is_varied(sp, SIM_PARAM_M)) {
        sim_format_bytes(b, sizeof b, sp->base.M);
        sim_format_count(c, sizeof c, sp->base.M);
        fprintf(out, " M = %s (%s B),", b, c);
    }
    fprintf(out, " %s, %s, %s", sim_dtype_name(sp->base.dtype),
            sp->base.causal ? "causal" : "not causal", plan_words(sp));
    if (sp->Br && !varies_block(sp))
        fprintf(out, " (B_r = %lld)", (long long)sp->Br);
    if (sp->Bc && !varies_block(sp))
        fprintf(out, " (B_c = %lld)", (long long)sp->Bc);
    if (sp->gpu)
        fprintf(out, ", %s", sp->gpu->name);
    fputc('\n', out);
    if (varies_block(sp))
        blocks_heading(out, sp);
    int over = 0;
    for (int k = 0; k < res->npoints; k++)
        for (int a = 0; a < sim_algo_count(); a++)
            over += sp->run_algo[a] && res->pts[k].run[a].misfit;
    if (res->simulated && over)
        fprintf(out, "count-only: the simulator ran every run whose blocks fit M, and its "
                "counts equal\nthe closed forms\n");
    else if (res->simulated)
        fprintf(out, "count-only: the simulator ran every configuration (%d), and its counts "
                "equal\nthe closed forms\n", res->npoints);
    else
        fprintf(out, "closed forms: exact counts without simulating (the tests prove them "
                "equal)\n");
}

/* The HBM BYTES table's columns: the varied parameters, the regime, each
 * algorithm's bytes, and (with naive) each other's ratio to naive's. */
typedef struct {
    const char *head[MAX_COLS];
    char heads[MAX_COLS][24];    /* the algorithms' headings, which head[] points at */
    int width[MAX_COLS], ncol;
    int regime_col, first_algo_col, first_ratio_col;
    int any_cap;                 /* some run had its block at the cap */
} bytes_table;

/* A run's bytes in the table, or why there are none. */
static void cell_bytes(char *b, size_t len, const sim_sweep_entry *r)
{
    if (r->misfit)
        snprintf(b, len, "over M");
    else
        sim_format_bytes(b, len, r->bytes);
}

/* Name the columns and size them to their contents. */
static void table_columns(const sim_sweep_result *res, bytes_table *t)
{
    const sim_sweep_spec *sp = &res->spec;
    char b[160];
    t->ncol = 0;
    t->any_cap = 0;
    for (int a = 0; a < sp->naxes; a++) {
        t->head[t->ncol] = sim_param_name(sp->axes[a].param);
        t->width[t->ncol++] = 1;
    }
    t->regime_col = t->ncol;
    t->head[t->ncol] = "regime";
    t->width[t->ncol++] = 6;
    t->first_algo_col = t->ncol;
    for (int a = 0; a < sim_algo_count(); a++)
        if (sp->run_algo[a]) {
            snprintf(t->heads[t->ncol], sizeof t->heads[t->ncol], "%s",
                     sim_algo_name((sim_algo)a));
            t->head[t->ncol] = t->heads[t->ncol];
            t->width[t->ncol++] = 10;
        }
    t->first_ratio_col = t->ncol;
    if (sp->run_algo[SIM_NAIVE])
        for (int a = 0; a < sim_algo_count(); a++)
            if (a != SIM_NAIVE && sp->run_algo[a]) {
                snprintf(t->heads[t->ncol], sizeof t->heads[t->ncol], "%s/naive",
                         sim_algo_name((sim_algo)a));
                t->head[t->ncol] = t->heads[t->ncol];
                t->width[t->ncol++] = 9;
            }
    for (int q = 0; q < t->ncol; q++)
        if ((int)strlen(t->head[q]) > t->width[q])
            t->width[q] = (int)strlen(t->head[q]);
    for (int k = 0; k < res->npoints; k++) {
        const sim_sweep_point *pt = &res->pts[k];
        for (int a = 0; a < sp->naxes; a++) {
            param_text(b, sizeof b, sp->axes[a].param, sim_point_param(pt, sp->axes[a].param));
            if ((int)strlen(b) > t->width[a])
                t->width[a] = (int)strlen(b);
        }
        int q = t->first_algo_col;
        for (int a = 0; a < sim_algo_count(); a++)
            if (sp->run_algo[a]) {
                cell_bytes(b, sizeof b, &pt->run[a]);
                int w = (int)strlen(b) + 1;
                if (w > t->width[q])
                    t->width[q] = w;
                t->any_cap |= pt->run[a].capped;
                q++;
            }
    }
}

/* One row of the table: point pt. */
static void table_row(FILE *out, const sim_sweep_spec *sp, const bytes_table *t,
                      const sim_sweep_point *pt)
{
    char b[160];
    for (int a = 0; a < sp->naxes; a++) {
        param_text(b, sizeof b, sp->axes[a].param, sim_point_param(pt, sp->axes[a].param));
        fprintf(out, "%*s", t->width[a] + 2, b);
    }
    fprintf(out, "%*s", t->width[t->regime_col] + 2, regime_word(pt));
    int q = t->first_algo_col;
    for (int a = 0; a < sim_algo_count(); a++)
        if (sp->run_algo[a]) {
            cell_bytes(b, sizeof b, &pt->run[a]);
            if (pt->run[a].capped)
                strcat(b, "*");
            else
                strcat(b, " ");
            fprintf(out, "%*s", t->width[q++] + 2, b);
        }
    q = t->first_ratio_col;
    if (sp->run_algo[SIM_NAIVE])
        for (int a = 0; a < sim_algo_count(); a++)
            if (a != SIM_NAIVE && sp->run_algo[a]) {
                if (pt->run[a].misfit || pt->run[SIM_NAIVE].misfit)
                    snprintf(b, sizeof b, "-");
                else
                    snprintf(b, sizeof b, "%.4f",
                             (double)pt->run[a].bytes / (double)pt->run[SIM_NAIVE].bytes);
                fprintf(out, "%*s", t->width[q++] + 2, b);
            }
    fputc('\n', out);
}

/* Under the table: each run whose blocks do not fit M, with its SRAM. */
static void misfit_text(FILE *out, const sim_sweep_result *res)
{
    const sim_sweep_spec *sp = &res->spec;
    for (int k = 0; k < res->npoints; k++)
        for (int a = 0; a < sim_algo_count(); a++) {
            const sim_sweep_entry *r = &res->pts[k].run[a];
            if (!sp->run_algo[a] || !r->misfit)
                continue;
            char need[32], M[32];
            sim_format_count(need, sizeof need, r->sram_peak);
            sim_format_count(M, sizeof M, res->pts[k].sh.M);
            fprintf(out, "  over M: %s with B_r x B_c = %lld x %lld needs %s B of SRAM, "
                    "M = %s B\n", sim_algo_name((sim_algo)a), (long long)r->Br,
                    (long long)r->Bc, need, M);
        }
}

/* HBM BYTES: one row per point, and what the marks in it mean. */
static void bytes_text(FILE *out, const sim_sweep_result *res)
{
    const sim_sweep_spec *sp = &res->spec;
    bytes_table t;
    table_columns(res, &t);
    fprintf(out, "\nHBM BYTES\n");
    for (int q = 0; q < t.ncol; q++)
        fprintf(out, "%*s", t.width[q] + 2, t.head[q]);
    fputc('\n', out);
    for (int k = 0; k < res->npoints; k++)
        table_row(out, sp, &t, &res->pts[k]);
    if (t.any_cap)
        fprintf(out, "  * the re-read block is at its cap (B = N): nothing is re-read\n");
    misfit_text(out, res);
    int n_out = 0;
    for (int k = 0; k < res->npoints; k++)
        n_out += !res->pts[k].bounds.in_regime;
    if (n_out)
        fprintf(out, "  regime: d <= M <= N d (M in elements = bytes / %d) fails at %d of %d "
                "points;\n  those are left out of the fits\n", sim_dtype_bytes(sp->base.dtype),
                n_out, res->npoints);
}

/* One subject's line of an EXPONENT block: fitted, R^2, theory, points,
 * verdict; no trailing spaces. */
static void fit_row(FILE *out, const sim_sweep_fit *f, int s)
{
    const char *who = s == SIM_SUBJECT_BOUND ? "lower bound" : sim_algo_name((sim_algo)s);
    const char *expr = standard_subject(s) ? "Theta(Nd+N^2)"
                     : s == SIM_SUBJECT_BOUND ? "Omega(N^2d^2/M)" : "Theta(N^2d^2/M)";
    char fitted[16] = "-", r2[16] = "-", th[16] = "-", pts[24], verdict[64];
    snprintf(pts, sizeof pts, "%d/%d", f->used, f->total);
    verdict[0] = '\0';
    if (f->status == SIM_FIT_OK || f->status == SIM_FIT_FIXED_BLOCKS) {
        if (s != SIM_SUBJECT_BOUND) {
            snprintf(fitted, sizeof fitted, "%.3f", f->exponent);
            snprintf(r2, sizeof r2, "%.4f", f->r2);
        }
        if (f->has_theory)
            snprintf(th, sizeof th, "%.3f", f->theory);
        if (f->status == SIM_FIT_FIXED_BLOCKS)
            snprintf(verdict, sizeof verdict, "fixed blocks");
        else if (s != SIM_SUBJECT_BOUND && !f->has_theory)
            snprintf(verdict, sizeof verdict, "see the note");   /* a block size */
        else if (s != SIM_SUBJECT_BOUND) {
            double dd = f->exponent - f->theory;
            if (fabs(dd) <= AGREE_TOL)
                snprintf(verdict, sizeof verdict, "agrees");
            else
                snprintf(verdict, sizeof verdict, "differs by %+.3f", dd);
        }
    } else {
        snprintf(verdict, sizeof verdict, "%s", sim_fit_status_name(f->status));
    }
    char line[512];   /* the fields are bounded; room for all of them at their widest */
    snprintf(line, sizeof line, "  %-11s %7s %7s %7s %-15s %6s  %s", who, fitted, r2, th,
             expr, pts, verdict);
    size_t L = strlen(line);
    while (L && line[L - 1] == ' ')
        line[--L] = '\0';
    fprintf(out, "%s\n", line);
}

/* EXPONENT of HBM bytes in axis a's parameter: a line per subject, then
 * the notes of those that have one. */
static void fit_block(FILE *out, const sim_sweep_result *res, int a)
{
    const sim_sweep_spec *sp = &res->spec;
    const char *pn = sim_param_name(sp->axes[a].param);
    fprintf(out, "\nEXPONENT of HBM bytes in %s (bytes ~ %s^a, log-log least squares%s)\n",
            pn, pn, sp->naxes > 1 ? ", joint" : "");
    fprintf(out, "  %-11s %7s %7s %7s %-15s %6s  %s\n", "", "fitted", "R^2", "theory",
            "", "points", "verdict");
    for (int s = 0; s <= SIM_SUBJECT_BOUND; s++)
        if (s == SIM_SUBJECT_BOUND || sp->run_algo[s])
            fit_row(out, &res->fits[s][a], s);
    int any_note = 0;
    for (int s = 0; s <= SIM_SUBJECT_BOUND; s++) {
        if (s != SIM_SUBJECT_BOUND && !sp->run_algo[s])
            continue;
        const sim_sweep_fit *f = &res->fits[s][a];
        if (!f->note[0])
            continue;
        if (!any_note)
            fprintf(out, "  notes:\n");
        any_note = 1;
        const char *who = s == SIM_SUBJECT_BOUND ? "bound" : sim_algo_name((sim_algo)s);
        char lead[32];
        snprintf(lead, sizeof lead, "    %s: ", who);
        wrap_print(out, lead, 6, f->note);
    }
}

void sim_sweep_text(FILE *out, const sim_sweep_result *res)
{
    text_heading(out, res);
    bytes_text(out, res);
    for (int a = 0; a < res->spec.naxes; a++)
        fit_block(out, res, a);
    fprintf(out, "\n  theory: the exponent of the expression over the same points (M in "
            "elements);\n  agrees: within %.2f. Theorem 2 and Proposition 3 drop constants "
            "and\n  lower-order terms; the fitted exponents keep them.\n", AGREE_TOL);
    if (res->engine_note[0])
        fprintf(out, "\nnote: %s\n", res->engine_note);
}

/* ---- JSON ------------------------------------------------------------------------- */

/* "sweep": the axes, what stayed fixed, the engine and the time it took. */
static void json_spec(sim_json *w, const sim_sweep_result *res)
{
    const sim_sweep_spec *sp = &res->spec;
    sim_json_obj(w, "sweep");
    sim_json_arr(w, "vary");
    for (int a = 0; a < sp->naxes; a++) {
        const sim_axis *ax = &sp->axes[a];
        sim_json_obj(w, NULL);
        sim_json_str(w, "param", sim_param_name(ax->param));
        sim_json_arr(w, "values");
        for (int k = 0; k < ax->n; k++)
            sim_json_int(w, NULL, ax->values[k]);
        sim_json_end(w);
        sim_json_end(w);
    }
    sim_json_end(w);
    sim_json_obj(w, "fixed");
    sim_json_int(w, "N", sp->base.N);
    sim_json_int(w, "d", sp->base.d);
    sim_json_uint(w, "M_bytes", sp->base.M);
    sim_json_str(w, "dtype", sim_dtype_name(sp->base.dtype));
    sim_json_bool(w, "causal", sp->base.causal);
    sim_json_str(w, "plan", (sp->Br || sp->Bc) ? "user"
                            : sp->plan_kind == SIM_PLAN_PAPER ? "paper" : "best");
    sim_json_int(w, "Br", sp->Br);
    sim_json_int(w, "Bc", sp->Bc);
    if (sp->gpu)
        sim_json_str(w, "gpu", sp->gpu->name);
    else
        sim_json_null(w, "gpu");
    sim_json_end(w);
    sim_json_str(w, "engine", res->simulated ? "sim" : "closed-form");
    sim_json_int(w, "points", res->npoints);
    sim_json_uint(w, "total_steps", res->total_steps);
    sim_json_num(w, "seconds", res->seconds);
    sim_json_end(w);
}

/* One algorithm's run at one point. */
static void json_entry(sim_json *w, const sim_sweep_spec *sp, const sim_sweep_point *pt,
                       int a)
{
    const sim_sweep_entry *r = &pt->run[a];
    sim_json_obj(w, NULL);
    sim_json_str(w, "algo", sim_algo_name((sim_algo)a));
    sim_json_int(w, "Br", r->Br);
    sim_json_int(w, "Bc", r->Bc);
    sim_json_int(w, "Tr", r->Tr);
    sim_json_int(w, "Tc", r->Tc);
    sim_json_uint(w, "sram_peak_bytes", r->sram_peak);
    sim_json_uint(w, "steps", r->steps);
    sim_json_uint(w, "read_bytes", r->read_bytes);
    sim_json_uint(w, "write_bytes", r->write_bytes);
    sim_json_uint(w, "total_bytes", r->bytes);
    sim_json_uint(w, "total_elems", r->elems);
    sim_json_bool(w, "capped", r->capped);
    sim_json_bool(w, "fits", !r->misfit);
    if (sp->run_algo[SIM_NAIVE] && !r->misfit && !pt->run[SIM_NAIVE].misfit)
        sim_json_num(w, "ratio_to_naive", (double)r->bytes / (double)pt->run[SIM_NAIVE].bytes);
    else
        sim_json_null(w, "ratio_to_naive");
    if (sp->gpu)
        sim_report_json_roofline(w, "roofline", &r->roof);
    sim_json_num(w, "seconds", r->seconds);
    sim_json_end(w);
}

/* One element of "points": the shape, its bounds, and every run there. */
static void json_point(sim_json *w, const sim_sweep_spec *sp, const sim_sweep_point *pt)
{
    sim_json_obj(w, NULL);
    sim_json_int(w, "N", pt->sh.N);
    sim_json_int(w, "d", pt->sh.d);
    sim_json_uint(w, "M_bytes", pt->sh.M);
    sim_json_whole(w, "M_elems", pt->bounds.M_elems);
    sim_json_bool(w, "in_regime", pt->bounds.in_regime);
    sim_json_obj(w, "bounds");
    sim_json_num(w, "theta_standard_elems", pt->bounds.theta_standard);
    sim_json_num(w, "theta_flash_elems", pt->bounds.theta_flash);
    sim_json_num(w, "lower_bound_elems", pt->bounds.lower_bound);
    sim_json_end(w);
    sim_json_arr(w, "runs");
    for (int a = 0; a < sim_algo_count(); a++)
        if (sp->run_algo[a])
            json_entry(w, sp, pt, a);
    sim_json_end(w);
    sim_json_end(w);
}

/* v as the member key when has, else null. */
static void json_num_if(sim_json *w, const char *key, int has, double v)
{
    if (has)
        sim_json_num(w, key, v);
    else
        sim_json_null(w, key);
}

/* One element of "fits": subject s (an algorithm or the lower bound) along
 * axis a. Exponents of a fit that failed are null, as is the bound's. */
static void json_fit(sim_json *w, const sim_sweep_spec *sp, const sim_sweep_fit *f, int s,
                     int a)
{
    int quoted = (f->status == SIM_FIT_OK || f->status == SIM_FIT_FIXED_BLOCKS) &&
                 s != SIM_SUBJECT_BOUND;
    sim_json_obj(w, NULL);
    sim_json_str(w, "subject", s == SIM_SUBJECT_BOUND ? "lower_bound"
                                                      : sim_algo_name((sim_algo)s));
    sim_json_str(w, "param", sim_param_name(sp->axes[a].param));
    sim_json_str(w, "status", sim_fit_status_name(f->status));
    json_num_if(w, "exponent", quoted, f->exponent);
    json_num_if(w, "r2", quoted, f->r2);
    json_num_if(w, "max_log_residual", quoted, f->max_resid);
    json_num_if(w, "theory", f->has_theory, f->theory);
    if (quoted && f->has_theory)
        sim_json_bool(w, "agrees", fabs(f->exponent - f->theory) <= AGREE_TOL);
    else
        sim_json_null(w, "agrees");
    json_num_if(w, "block_exponent", f->has_block, f->block_exponent);
    json_num_if(w, "end_slope", f->has_end_slope && s != SIM_SUBJECT_BOUND, f->end_slope);
    sim_json_int(w, "points_used", f->used);
    sim_json_int(w, "points", f->total);
    sim_json_int(w, "out_of_regime", f->out_of_regime);
    sim_json_int(w, "capped", f->capped);
    sim_json_str(w, "note", f->note);
    sim_json_end(w);
}

void sim_sweep_json(FILE *out, const sim_sweep_result *res)
{
    const sim_sweep_spec *sp = &res->spec;
    sim_json w;
    sim_report_json_begin(&w, out);
    json_spec(&w, res);
    sim_json_arr(&w, "points");
    for (int k = 0; k < res->npoints; k++)
        json_point(&w, sp, &res->pts[k]);
    sim_json_end(&w);
    sim_json_arr(&w, "fits");
    for (int a = 0; a < sp->naxes; a++)
        for (int s = 0; s <= SIM_SUBJECT_BOUND; s++)
            if (s == SIM_SUBJECT_BOUND || sp->run_algo[s])
                json_fit(&w, sp, &res->fits[s][a], s, a);
    sim_json_end(&w);
    if (res->engine_note[0])
        sim_json_str(&w, "note", res->engine_note);
    sim_json_end(&w);
    fputc('\n', out);
}

/* ---- CSV ------------------------------------------------------------------------------ */

void sim_sweep_csv(FILE *out, const sim_sweep_result *res)
{
    const sim_sweep_spec *sp = &res->spec;
    fprintf(out, "N,d,M_bytes,M_elems,dtype,causal,in_regime");
    for (int a = 0; a < sim_algo_count(); a++) {
        if (!sp->run_algo[a])
            continue;
        const char *n = sim_algo_name((sim_algo)a);
        fprintf(out, ",%s_Br,%s_Bc,%s_steps,%s_read_bytes,%s_write_bytes,%s_bytes,"
                "%s_elems,%s_capped", n, n, n, n, n, n, n, n);
        if (sp->run_algo[SIM_NAIVE] && a != SIM_NAIVE)
            fprintf(out, ",%s_ratio_to_naive", n);
        if (sp->gpu)
            fprintf(out, ",%s_roofline_s,%s_bound,%s_flops_per_byte", n, n, n);
    }
    fprintf(out, ",theta_standard_elems,theta_flash_elems,lower_bound_elems\n");
    for (int k = 0; k < res->npoints; k++) {
        const sim_sweep_point *pt = &res->pts[k];
        fprintf(out, "%lld,%lld,%llu,%.0f,%s,%d,%d", (long long)pt->sh.N, (long long)pt->sh.d,
                (unsigned long long)pt->sh.M, pt->bounds.M_elems,
                sim_dtype_name(pt->sh.dtype), pt->sh.causal, pt->bounds.in_regime);
        for (int a = 0; a < sim_algo_count(); a++) {
            if (!sp->run_algo[a])
                continue;
            const sim_sweep_entry *r = &pt->run[a];
            if (r->misfit) {            /* the blocks asked, and empty counts */
                fprintf(out, ",%lld,%lld,,,,,,", (long long)r->Br, (long long)r->Bc);
                if (sp->run_algo[SIM_NAIVE] && a != SIM_NAIVE)
                    fprintf(out, ",");
                if (sp->gpu)
                    fprintf(out, ",,,");
                continue;
            }
            fprintf(out, ",%lld,%lld,%llu,%llu,%llu,%llu,%llu,%d", (long long)r->Br,
                    (long long)r->Bc, (unsigned long long)r->steps,
                    (unsigned long long)r->read_bytes, (unsigned long long)r->write_bytes,
                    (unsigned long long)r->bytes, (unsigned long long)r->elems, r->capped);
            if (sp->run_algo[SIM_NAIVE] && a != SIM_NAIVE && pt->run[SIM_NAIVE].misfit)
                fprintf(out, ",");
            else if (sp->run_algo[SIM_NAIVE] && a != SIM_NAIVE)
                fprintf(out, ",%.6g", (double)r->bytes / (double)pt->run[SIM_NAIVE].bytes);
            if (sp->gpu)
                fprintf(out, ",%.6g,%s,%.6g", r->roof.t_estimate,
                        r->roof.memory_bound ? "memory" : "compute", r->roof.intensity);
        }
        fprintf(out, ",%.17g,%.17g,%.17g\n", pt->bounds.theta_standard,
                pt->bounds.theta_flash, pt->bounds.lower_bound);
    }
}
