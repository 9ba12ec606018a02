/*
 * sim_report.c — build and render the classroom report (see sim_report.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "sim_report.h"
#include "sim_bmask.h"
#include "sim_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef FASIM_VERSION
#define FASIM_VERSION "0.0.0"
#endif

/* ---- formatting helpers ------------------------------------------------- */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- building ----------------------------------------------------------- */

static uint64_t total_bytes(const sim_counts *c, sim_dtype dt)
{
    return sim_counts_read_bytes(c, dt) + sim_counts_write_bytes(c, dt);
}

/* The closed form of a run's plan, whether it equals the measurement, and
 * with paged KV the closed form of the same plan with K, V contiguous. */
/* The GPU model of run r (plan p) on req's preset: time, DRAM bytes
 * through the L2, the launch. A launch the hardware would refuse, or a
 * trace too large, fails the report with the model's message. */
static int model_run(const sim_request *req, sim_report_run *r, const sim_plan *p,
                     const sim_shape *sh, char *err, size_t errlen)
{
    char name[64];
    snprintf(name, sizeof name, "%s %s%s", sim_algo_name(r->algo), sim_pass_name(r->pass),
             p->run.splits > 1 ? " split-KV" : "");
    sim_gm_opts o = req->gm;
    o.trace_name = name;
    if (sim_gpu_model_run(req->gpu, p, sh, &o, &r->gm, err, errlen) != 0)
        return -1;
    r->has_gm = 1;
    return 0;
}

static void set_theory(sim_report_run *r, const sim_plan *p, const sim_shape *sh)
{
    sim_theory_counts(p, sh, &r->theory);
    r->theory_matches = sim_counts_equal(&r->theory, &r->res.counts);
    r->has_flops = sim_theory_flops(p, sh, &r->flops) == 0;
    if (p->run.page > 0) {
        sim_plan flat = *p;
        flat.run.page = 0;
        sim_theory_counts(&flat, sh, &r->contiguous);
    }
}

/* The grouped FA2 run of a GQA report: its own plan (the block's query-side
 * buffers hold H/G heads, so B_r shrinks), the same inputs. A plan that does
 * not fit is a note, not a failure: the report stands without it. */
static int build_grouped(sim_report *rep, const float *Q, const float *K, const float *V,
                         const double *O_ref, char *err, size_t errlen)
{
    const sim_shape *sh = &rep->req.sh;
    sim_run_opts g = rep->req.run;
    g.group = 1;
    g.splits = 0;
    sim_plan p;
    char perr[1024];
    /* Its own plan: the paper's, the same tiles and the kernels' are for the
     * unsplit runs (no released FA2 kernel puts several heads in a block). */
    const int own = rep->same_tiles > 0;
    if (sim_plan_choose(SIM_FA2, sh, &g, rep->req.plan_kind == SIM_PLAN_PAPER || own ||
                                             rep->req.plan_kind == SIM_PLAN_KERNEL
                                             ? SIM_PLAN_AUTO : rep->req.plan_kind,
                        own ? 0 : rep->req.Br, own ? 0 : rep->req.Bc, &p, perr,
                        sizeof perr) != 0) {
        snprintf(rep->gqa_note, sizeof rep->gqa_note, "no grouped fa2 plan fits: %.480s", perr);
        return SIM_OK;
    }
    sim_report_run *r = &rep->gqa;
    r->algo = SIM_FA2;
    double t0 = now_seconds();
    if (sim_run(SIM_FA2, sh, &p, Q, K, V, NULL, &r->res, err, errlen) != 0)
        return SIM_EFAIL;
    r->seconds = now_seconds() - t0;
    rep->has_gqa = 1;
    set_theory(r, &p, sh);
    if (r->res.O) {
        r->has_error = 1;
        r->err = ref_compare(r->res.O, O_ref, sim_shape_B(sh) * sim_shape_H(sh) * sh->N * sh->d);
    }
    return SIM_OK;
}

/* The split-KV run, next in rep->runs: fa2 with the plan's p->run.splits
 * splits. */
static int run_split(sim_report *rep, const sim_plan *p, const sim_inputs *in,
                     const double *O_ref, int64_t nd, char *err, size_t errlen)
{
    const sim_shape *sh = &rep->req.sh;
    sim_report_run *r = &rep->runs[rep->nruns];
    r->algo = SIM_FA2;
    r->pass = SIM_FWD;
    r->splits = p->run.splits;
    double t0 = now_seconds();
    if (sim_run_inputs(SIM_FA2, sh, p, rep->computed ? in : NULL, NULL, &r->res, err,
                       errlen) != 0)
        return SIM_EFAIL;
    r->seconds = now_seconds() - t0;
    rep->nruns++;
    set_theory(r, p, sh);
    if (rep->computed) {
        r->has_error = 1;
        r->err = ref_compare(r->res.O, O_ref, nd);
    }
    if (rep->req.gpu) {
        r->roof = sim_roofline_estimate(rep->req.gpu, sh->dtype, sim_run_flops(p, sh),
                                        (double)total_bytes(&r->res.counts, sh->dtype));
        if (model_run(&rep->req, r, p, sh, err, errlen) != 0)
            return SIM_EUSAGE;
    }
    return SIM_OK;
}

/* The passes a request runs: forward when none is named. */
static int pass_on(const sim_request *req, sim_pass p)
{
    if (!req->run_pass[SIM_FWD] && !req->run_pass[SIM_BWD])
        return p == SIM_FWD;
    return req->run_pass[p] != 0;
}

/* The float64 oracle for every head: O (forward) and the gradients dQ, dK,
 * dV (backward). Query head qh = b H + h reads key/value head
 * b G + h / (H / G); with G < H a key/value head's dK, dV are the sums of
 * its query heads' (summed here in float64). Returns 0, or -1 out of
 * memory. */
static int oracle_heads(const sim_shape *sh, const float *Q, const float *K, const float *V,
                        const float *dO, double *O_ref, double *dQ_ref, double *dK_ref,
                        double *dV_ref)
{
    const int64_t N_k = sim_shape_Nk(sh), H = sim_shape_H(sh), G = sim_shape_G(sh);
    const int64_t BH = sim_shape_B(sh) * H, per_g = H / G;
    const int64_t qn = sh->N * sh->d, kn = N_k * sh->d;
    const ref_mask mk = sim_shape_ref_mask(sh);
    double *dK_h = NULL, *dV_h = NULL;            /* one query head's (N_k, d) */
    if (dQ_ref) {
        dK_h = malloc((size_t)kn * sizeof *dK_h);
        dV_h = malloc((size_t)kn * sizeof *dV_h);
        if (!dK_h || !dV_h) {
            free(dK_h);
            free(dV_h);
            return -1;
        }
    }
    int rc = 0;
    for (int64_t qh = 0; qh < BH && rc == 0; qh++) {
        const int64_t g = (qh / H) * G + (qh % H) / per_g;
        if (O_ref && ref_oracle_attention_masked(Q + qh * qn, K + g * kn, V + g * kn, sh->N,
                                                 N_k, sh->d, &mk, O_ref + qh * qn, NULL) != 0)
            rc = -1;
        if (rc != 0 || !dQ_ref)
            continue;
        if (ref_oracle_attention_bwd(Q + qh * qn, K + g * kn, V + g * kn, dO + qh * qn, sh->N,
                                     N_k, sh->d, &mk, dQ_ref + qh * qn, dK_h, dV_h) != 0) {
            rc = -1;
            continue;
        }
        const int first = (qh % H) % per_g == 0;   /* the group's first query head */
        for (int64_t e = 0; e < kn; e++) {
            dK_ref[g * kn + e] = (first ? 0.0 : dK_ref[g * kn + e]) + dK_h[e];
            dV_ref[g * kn + e] = (first ? 0.0 : dV_ref[g * kn + e]) + dV_h[e];
        }
    }
    free(dK_h);
    free(dV_h);
    return rc;
}

/* What sim_report_build works out before and while it runs: per pass the
 * shape and each algorithm's plan, the split-KV run's, the totals that
 * decide the mode, and in compute mode the inputs and the oracle's answers
 * (owned here, freed by build_free). Shapes: Q, O_ref, dO, dQ_ref are
 * (B H N_q, d), nd elements; K, V, dK_ref, dV_ref are (B G N_k, d), nkd. */
typedef struct {
    sim_run_opts runs[SIM_PASS_COUNT];         /* how each pass runs (unsplit) */
    sim_plan plans[SIM_PASS_COUNT][SIM_ALGO_MAX];
    int split;                                 /* a split-KV run of FA2's forward */
    sim_run_opts srun;                         /* how it runs: the forward's, split */
    sim_plan splan;
    double flops;                              /* of every run, to choose the mode */
    double seconds;                            /* sim_compute_seconds of every run */
    uint64_t mem;                              /* the largest run's working memory */
    uint64_t max_steps;
    uint64_t total_steps;                      /* of every run, saturating */
    float *Q, *K, *V, *dO;
    double *O_ref, *dQ_ref, *dK_ref, *dV_ref;
    int64_t nd, nkd;
    unsigned char left_out[SIM_PASS_COUNT][SIM_ALGO_MAX];   /* asked through "all", and
                                       no loop order of it serves that pass */
    int same;                                  /* the plans are SIM_PLAN_SAME's */
} build_ctx;

/* Whether loop order a runs in pass q. */
static int runs_in(const sim_request *req, const build_ctx *x, int q, int a)
{
    return req->run_algo[a] && !x->left_out[q][a];
}

static void build_free(build_ctx *x)
{
    free(x->Q);
    free(x->K);
    free(x->V);
    free(x->dO);
    free(x->O_ref);
    free(x->dQ_ref);
    free(x->dK_ref);
    free(x->dV_ref);
}

/* Add a run's flops and working memory to the totals that choose the mode. */
static void add_cost(build_ctx *x, sim_algo a, const sim_shape *sh, const sim_run_opts *run)
{
    x->flops += sim_compute_flops(a, sh, run);
    x->seconds += sim_compute_seconds(a, sh, run);
    uint64_t m = sim_compute_memory(a, sh, run);
    if (m > x->mem)
        x->mem = m;
}

static void add_steps(build_ctx *x, uint64_t steps)
{
    if (__builtin_add_overflow(x->total_steps, steps, &x->total_steps))
        x->total_steps = UINT64_MAX;
}

/* The GPU a kernel plan is for: --gpu's, or the A100 the released kernels
 * were tuned on. */
static sim_kernel_target kernel_target(const sim_request *req)
{
    return sim_gpu_kernel_target(req->gpu ? req->gpu : sim_gpu_find("a100"));
}

/* The plan of loop order a run as run: the kernel's (--plan kernel) or one
 * sim_plan_choose makes. Returns 0, -1 with the reason in err, or -2 (and the
 * reason) when a kernel plan is asked of a loop order and d no released
 * kernel runs. */
static int choose_plan(const sim_request *req, sim_algo a, const sim_run_opts *run,
                       sim_plan *out, char *err, size_t errlen)
{
    if (req->plan_kind != SIM_PLAN_KERNEL)
        return sim_plan_choose(a, &req->sh, run, req->plan_kind, req->Br, req->Bc, out, err,
                               errlen);
    const sim_kernel_target t = kernel_target(req);
    sim_kernel_choice c;
    if (sim_kernel_choose(a, &req->sh, run, &t, &c, err, errlen) != 0)
        return -2;
    return sim_plan_kernel(a, &req->sh, run, &t, req->Br, req->Bc, out, err, errlen);
}

/* 1. Every run's plan, and the limits they imply, before anything runs.
 * Returns SIM_OK, or SIM_EUSAGE with the reason in err. */
static int plan_runs(const sim_request *req, build_ctx *x, char *err, size_t errlen)
{
    const sim_shape *sh = &req->sh;
    char kernel_err[1024] = "";
    int planned = 0;
    for (int q = 0; q < SIM_PASS_COUNT; q++) {
        if (!pass_on(req, (sim_pass)q))
            continue;
        const char *pass = q == SIM_BWD ? " backward" : "";
        for (int a = 0; a < sim_algo_count(); a++) {
            if (!req->run_algo[a])
                continue;
            if (req->run_algo[a] == SIM_ALGO_IF_SERVED && !sim_loop_find((sim_algo)a, &x->runs[q])) {
                x->left_out[q][a] = 1;       /* "all": every loop order this pass has */
                continue;
            }
            char perr[1024];
            const int rc = choose_plan(req, (sim_algo)a, &x->runs[q], &x->plans[q][a], perr,
                                       sizeof perr);
            if (rc == -2 && req->run_algo[a] == SIM_ALGO_IF_SERVED) {
                /* "all": every loop order a released kernel runs at this d */
                x->left_out[q][a] = 1;
                snprintf(kernel_err, sizeof kernel_err, "%s%.1000s",
                             q == SIM_BWD ? "backward: " : "", perr);
                continue;
            }
            if (rc != 0) {
                snprintf(err, errlen, "%s%s", q == SIM_BWD ? "backward: " : "", perr);
                return SIM_EUSAGE;
            }
            if (x->same)
                x->plans[q][a].kind = SIM_PLAN_SAME;
            sim_counts c;
            uint64_t steps;
            /* Counted with K, V contiguous (O(1)): paged KV under a mask
             * takes a pass over the visible key blocks, which the step limit
             * below bounds; its counts are taken after the run. */
            sim_plan flat = x->plans[q][a];
            flat.run.page = 0;
            if (sim_bmask_plan_check(sh, flat.Br, flat.Bc, err, errlen) != 0)
                return SIM_EUSAGE;
            if (sim_theory_counts(&flat, sh, &c) != 0 ||
                sim_theory_steps(&x->plans[q][a], sh, &steps) != 0) {
                snprintf(err, errlen, "N = %lld, d = %lld: %s%s's HBM counts would overflow "
                         "64 bits; use a smaller N or d", (long long)sh->N,
                         (long long)sh->d, sim_algo_name((sim_algo)a), pass);
                return SIM_EUSAGE;
            }
            if (steps > x->max_steps) {
                snprintf(err, errlen, "%s%s would take %llu tile steps, more than the limit "
                         "of %llu; use a smaller N, a larger --M, or raise --max-steps",
                         sim_algo_name((sim_algo)a), pass, (unsigned long long)steps,
                         (unsigned long long)x->max_steps);
                return SIM_EUSAGE;
            }
            add_cost(x, (sim_algo)a, sh, &x->runs[q]);
            add_steps(x, steps);
            /* --ring runs FA2 again: a round of each kind and the all-gather's
             * chunks, which together cover the problem's tiles once more: at
             * most twice the one-device run's steps. */
            if (req->ring.P > 0 && a == SIM_FA2 && q == SIM_FWD)
                add_steps(x, steps > UINT64_MAX / 2 ? UINT64_MAX : 2 * steps);
            planned++;
        }
    }
    if (!planned && kernel_err[0]) {
        snprintf(err, errlen, "%s", kernel_err);
        return SIM_EUSAGE;
    }
    return SIM_OK;
}

/* Split-KV: FA2's forward once more with the keys in S splits. Returns
 * SIM_OK, or SIM_EUSAGE with the reason in err. */
static int plan_split(const sim_request *req, build_ctx *x, char *err, size_t errlen)
{
    const sim_shape *sh = &req->sh;
    x->split = req->run.splits > 1 && req->run_algo[SIM_FA2] && pass_on(req, SIM_FWD);
    x->srun = x->runs[SIM_FWD];
    if (req->run.splits > 1 && !x->split) {
        snprintf(err, errlen, "--splits is a plan of FA2's forward pass: run fa2 (--algo) "
                 "with --pass fwd or both");
        return SIM_EUSAGE;
    }
    if (!x->split)
        return SIM_OK;
    x->srun.splits = req->run.splits;
    char perr[1024];
    uint64_t steps;
    if (choose_plan(req, SIM_FA2, &x->srun, &x->splan, perr, sizeof perr) != 0) {
        snprintf(err, errlen, "%s", perr);
        return SIM_EUSAGE;
    }
    if (x->same)
        x->splan.kind = SIM_PLAN_SAME;
    if (sim_theory_steps(&x->splan, sh, &steps) != 0 || steps > x->max_steps) {
        snprintf(err, errlen, "fa2 with %lld splits would take more tile steps than the "
                 "limit of %llu; raise --max-steps", (long long)req->run.splits,
                 (unsigned long long)x->max_steps);
        return SIM_EUSAGE;
    }
    add_cost(x, SIM_FA2, sh, &x->srun);
    add_steps(x, steps);
    return SIM_OK;
}

/* The runs together within --max-steps, as each is: the grouped FA2 run of a
 * GQA report too (its own plan, as build_grouped makes it; none when no
 * plan fits). Returns SIM_OK, or SIM_EUSAGE with the reason in err. */
static int check_total_steps(const sim_request *req, build_ctx *x, char *err, size_t errlen)
{
    const sim_shape *sh = &req->sh;
    if (sim_shape_G(sh) < sim_shape_H(sh) && req->run_algo[SIM_FA2] && pass_on(req, SIM_FWD)) {
        sim_run_opts g = req->run;
        g.group = 1;
        g.splits = 0;
        sim_plan p;
        uint64_t steps;
        char perr[1024];
        if (sim_plan_choose(SIM_FA2, sh, &g, req->plan_kind == SIM_PLAN_PAPER || x->same ||
                                             req->plan_kind == SIM_PLAN_KERNEL
                                                 ? SIM_PLAN_AUTO : req->plan_kind,
                            x->same ? 0 : req->Br, x->same ? 0 : req->Bc, &p, perr,
                            sizeof perr) == 0 &&
            sim_theory_steps(&p, sh, &steps) == 0)
            add_steps(x, steps);
    }
    /* With --gpu the GPU model replays every run's steps, pricing each one
     * (sim_limits.h: SIM_GM_STEP_COST). */
    const uint64_t gm_max = x->max_steps / SIM_GM_STEP_COST;
    if (req->gpu && x->total_steps <= x->max_steps && x->total_steps > gm_max) {
        snprintf(err, errlen, "--gpu: the GPU model would replay %llu tile steps, more than "
                 "its limit of %llu (--max-steps / %d: it prices each step, %d times or more "
                 "slower than counting); use a smaller N, fewer heads or devices, or raise "
                 "--max-steps", (unsigned long long)x->total_steps,
                 (unsigned long long)gm_max, SIM_GM_STEP_COST, SIM_GM_STEP_COST);
        return SIM_EUSAGE;
    }
    if (x->total_steps <= x->max_steps)
        return SIM_OK;
    snprintf(err, errlen, "these runs would take %llu tile steps in all, more than the limit "
             "of %llu (--max-steps bounds each run and all of them together); run fewer loop "
             "orders or passes (--algo, --pass), use a smaller N, or raise --max-steps",
             (unsigned long long)x->total_steps, (unsigned long long)x->max_steps);
    return SIM_EUSAGE;
}

/* 2. Mode: compute when asked, or (auto) when it is cheap and fits; else
 * count only, with rep->mode_note saying why. need is the memory computing
 * takes. Returns SIM_OK with rep->computed set, or SIM_EUSAGE. */
static int choose_mode(const sim_request *req, sim_report *rep, double flops, double secs,
                       uint64_t need, char *err, size_t errlen)
{
    const uint64_t max_mem = req->max_mem ? req->max_mem : SIM_DEFAULT_MAX_MEM;
    int compute = 0;
    char b1[32], b2[32];
    if (req->run.dropout > 0.0 && req->mode != SIM_MODE_COUNT) {
        /* Dropout is counted, not computed (sim_run refuses it): a random
         * mask would leave nothing to check against the oracle. */
        if (req->mode == SIM_MODE_COMPUTE || req->Q) {
            snprintf(err, errlen, "--dropout is counted, not computed: fasim's numerics "
                     "are attention without dropout; drop --compute and the inputs, or "
                     "--dropout");
            return SIM_EUSAGE;
        }
        snprintf(rep->mode_note, sizeof rep->mode_note,
                 "counting only: --dropout is counted, not computed (fasim's numerics are "
                 "attention without dropout)");
        rep->computed = 0;
        return SIM_OK;
    }
    switch (req->mode) {
    case SIM_MODE_COUNT:
        break;
    case SIM_MODE_COMPUTE:
        if (need > max_mem) {
            sim_format_bytes(b1, sizeof b1, need);
            sim_format_bytes(b2, sizeof b2, max_mem);
            snprintf(err, errlen, "compute mode would need %s of memory (more than the "
                     "%s limit); use --count-only (the counts are exact without data) "
                     "or raise --max-mem", b1, b2);
            return SIM_EUSAGE;
        }
        compute = 1;
        break;
    case SIM_MODE_AUTO:
        if (req->Q) {
            compute = 1;       /* the user gave data: they want it used */
            if (need > max_mem) {
                sim_format_bytes(b1, sizeof b1, need);
                sim_format_bytes(b2, sizeof b2, max_mem);
                snprintf(err, errlen, "computing on these inputs needs %s of memory, "
                         "over the %s limit; use --count-only or raise --max-mem", b1, b2);
                return SIM_EUSAGE;
            }
        } else if (secs <= SIM_AUTO_COMPUTE_SECONDS && need <= max_mem) {
            compute = 1;
        } else if (secs <= SIM_AUTO_COMPUTE_SECONDS) {
            sim_format_bytes(b1, sizeof b1, need);
            sim_format_bytes(b2, sizeof b2, max_mem);
            snprintf(rep->mode_note, sizeof rep->mode_note,
                     "counting only: computing would need %s of memory, over the %s limit; "
                     "--max-mem raises it", b1, b2);
        } else {
            char dur[64];
            sim_format_duration(dur, sizeof dur, secs);
            snprintf(rep->mode_note, sizeof rep->mode_note,
                     "counting only: computing would take %.1e flops (%s " SIM_COMPUTE_WHERE
                     "); --compute forces it", flops, dur);
        }
        break;
    }
    rep->computed = compute;
    return SIM_OK;
}

/* 3. Inputs (the user's, rounded to the dtype, or seeded) and the oracle's
 * answers on them. Returns SIM_OK or SIM_EFAIL (out of memory). */
static int make_inputs(const sim_request *req, sim_report *rep, build_ctx *x, char *err,
                       size_t errlen)
{
    const sim_shape *sh = &req->sh;
    const int64_t nd = x->nd, nkd = x->nkd;
    x->Q = malloc((size_t)nd * sizeof *x->Q);
    x->K = malloc((size_t)nkd * sizeof *x->K);
    x->V = malloc((size_t)nkd * sizeof *x->V);
    x->O_ref = malloc((size_t)nd * sizeof *x->O_ref);
    int ok = x->Q && x->K && x->V && x->O_ref;
    if (pass_on(req, SIM_BWD)) {
        x->dO = malloc((size_t)nd * sizeof *x->dO);
        x->dQ_ref = malloc((size_t)nd * sizeof *x->dQ_ref);
        x->dK_ref = malloc((size_t)nkd * sizeof *x->dK_ref);
        x->dV_ref = malloc((size_t)nkd * sizeof *x->dV_ref);
        ok = ok && x->dO && x->dQ_ref && x->dK_ref && x->dV_ref;
    }
    if (!ok) {
        snprintf(err, errlen, "out of memory for the inputs (N = %lld, d = %lld)",
                 (long long)sh->N, (long long)sh->d);
        return SIM_EFAIL;
    }
    if (req->Q) {
        memcpy(x->Q, req->Q, (size_t)nd * sizeof *x->Q);
        memcpy(x->K, req->K, (size_t)nkd * sizeof *x->K);
        memcpy(x->V, req->V, (size_t)nkd * sizeof *x->V);
        sim_round_to_dtype(x->Q, nd, sh->dtype);
        sim_round_to_dtype(x->K, nkd, sh->dtype);
        sim_round_to_dtype(x->V, nkd, sh->dtype);
    } else {
        (req->outliers ? sim_outlier_qkv : sim_random_qkv)(
            req->seed, sim_shape_B(sh) * sim_shape_H(sh) * sh->N,
            sim_shape_B(sh) * sim_shape_G(sh) * sim_shape_Nk(sh), sh->d, sh->dtype, x->Q, x->K,
            x->V);
    }
    if (x->dO) {
        if (req->dO) {
            memcpy(x->dO, req->dO, (size_t)nd * sizeof *x->dO);
            sim_round_to_dtype(x->dO, nd, sh->dtype);
        } else {
            sim_random_grad(req->seed, nd, sh->dtype, x->dO);
        }
    }
    /* The oracle sees the same dtype-rounded inputs, so the error measures
     * the algorithm, not the quantisation of its inputs; fp8 inputs are
     * quantised only as a run places them (sim_fp8_quantise), so there the
     * error includes it, as FlashAttention-3's Table 3 measures it. */
    double t0 = now_seconds();
    if (oracle_heads(sh, x->Q, x->K, x->V, x->dO, x->O_ref, x->dQ_ref, x->dK_ref,
                     x->dV_ref) != 0) {
        snprintf(err, errlen, "out of memory in the oracle");
        return SIM_EFAIL;
    }
    rep->oracle_seconds = now_seconds() - t0;
    return SIM_OK;
}

/* 4. The runs: the forward's, then the backward's, each with its error
 * against the oracle and its roofline; the split-KV run after FA2's
 * forward. Returns SIM_OK or SIM_EFAIL. */
static int run_all(const sim_request *req, sim_report *rep, const build_ctx *x, char *err,
                   size_t errlen)
{
    const sim_shape *sh = &req->sh;
    const int compute = rep->computed;
    const sim_inputs in = { x->Q, x->K, x->V, x->dO };
    for (int q = 0; q < SIM_PASS_COUNT; q++) {
        if (!pass_on(req, (sim_pass)q))
            continue;
        for (int a = 0; a < sim_algo_count(); a++) {
            if (!runs_in(req, x, q, a))
                continue;
            sim_report_run *r = &rep->runs[rep->nruns];
            const sim_plan *p = &x->plans[q][a];
            r->algo = (sim_algo)a;
            r->pass = (sim_pass)q;
            double t0 = now_seconds();
            if (sim_run_inputs((sim_algo)a, sh, p, compute ? &in : NULL, NULL, &r->res,
                               err, errlen) != 0)
                return SIM_EFAIL;
            r->seconds = now_seconds() - t0;
            rep->nruns++;
            set_theory(r, p, sh);
            if (compute) {
                r->has_error = 1;
                if (q == SIM_FWD) {
                    r->err = ref_compare(r->res.O, x->O_ref, x->nd);
                } else {
                    r->grad_err[0] = ref_compare(r->res.dQ, x->dQ_ref, x->nd);
                    r->grad_err[1] = ref_compare(r->res.dK, x->dK_ref, x->nkd);
                    r->grad_err[2] = ref_compare(r->res.dV, x->dV_ref, x->nkd);
                }
            }
            if (req->gpu) {
                r->roof = sim_roofline_estimate(req->gpu, sh->dtype,
                                                sim_run_flops(p, sh),
                                                (double)total_bytes(&r->res.counts, sh->dtype));
                if (model_run(req, r, p, sh, err, errlen) != 0)
                    return SIM_EUSAGE;
            }
            int rc;
            if (x->split && a == SIM_FA2 && q == SIM_FWD &&
                (rc = run_split(rep, &x->splan, &in, x->O_ref, x->nd, err, errlen)) != SIM_OK)
                return rc;
        }
    }
    return SIM_OK;
}

/* The ring of req.ring: its rounds with the fa2 forward run's block sizes,
 * computed on the report's inputs in compute mode. */
static int build_ring(sim_report *rep, const build_ctx *x, char *err, size_t errlen)
{
    const sim_request *rq = &rep->req;
    const sim_report_run *fa2 = NULL;
    for (int k = 0; k < rep->nruns; k++)
        if (rep->runs[k].algo == SIM_FA2 && rep->runs[k].pass == SIM_FWD)
            fa2 = &rep->runs[k];
    if (!fa2) {
        snprintf(err, errlen, "--ring runs FA2's forward pass on each device: add --algo fa2");
        return SIM_EUSAGE;
    }
    const int c = rep->computed;
    if (sim_ring_build(&rq->sh, &x->runs[SIM_FWD], &rq->ring, fa2->res.plan.Br,
                       fa2->res.plan.Bc, rq->gpu, c ? x->Q : NULL, c ? x->K : NULL,
                       c ? x->V : NULL, &rep->ring, err, errlen) != 0)
        return SIM_EFAIL;
    rep->has_ring = 1;
    if (c) {
        rep->has_ring_err = 1;
        rep->ring_err = ref_compare(rep->ring.O, x->O_ref, x->nd);
    }
    return SIM_OK;
}

/* 5. Naive's bytes for the ratios, per pass: measured when it ran, else
 * its closed form under the same plan options. */
static void naive_bytes(const sim_request *req, sim_report *rep, const build_ctx *x)
{
    const sim_dtype dt = req->sh.dtype;
    for (int q = 0; q < SIM_PASS_COUNT; q++) {
        if (!pass_on(req, (sim_pass)q))
            continue;
        for (int k = 0; k < rep->nruns; k++)
            if (rep->runs[k].algo == SIM_NAIVE && rep->runs[k].pass == (sim_pass)q) {
                rep->have_naive_pass[q] = 1;
                rep->naive_pass_bytes[q] = total_bytes(&rep->runs[k].res.counts, dt);
            }
        if (!rep->have_naive_pass[q]) {
            sim_plan np;
            sim_counts c;
            char e2[8];
            /* A kernel plan: no released kernel runs standard attention, so
             * its best plan. */
            const int kern = req->plan_kind == SIM_PLAN_KERNEL;
            if (sim_plan_choose(SIM_NAIVE, &req->sh, &x->runs[q],
                                kern ? SIM_PLAN_AUTO : req->plan_kind, kern ? 0 : req->Br,
                                kern ? 0 : req->Bc, &np, e2, sizeof e2) == 0 &&
                sim_theory_counts(&np, &req->sh, &c) == 0) {
                rep->have_naive_pass[q] = 1;
                rep->naive_pass_bytes[q] = total_bytes(&c, dt);
            }
        }
    }
    rep->have_naive_bytes = rep->have_naive_pass[SIM_FWD];
    rep->naive_bytes = rep->naive_pass_bytes[SIM_FWD];
}

/* The memory computing takes: the runs' largest, plus the oracle's O (and
 * the three gradients) of every head in double and one row of scores. */
static uint64_t compute_memory(const sim_shape *sh, int bwd, uint64_t mem)
{
    const int64_t N_k = sim_shape_Nk(sh);
    const int64_t BH = sim_shape_B(sh) * sim_shape_H(sh), BG = sim_shape_B(sh) * sim_shape_G(sh);
    double oracle_mem = 8.0 * (double)(BH * sh->N + (bwd ? BH * sh->N + 2 * BG * N_k : 0)) *
                            (double)sh->d + 8.0 * 4.0 * (double)N_k;
    uint64_t need = mem + (uint64_t)fmin(oracle_mem, 1.8e19);
    return need < mem ? UINT64_MAX : need;
}

int64_t sim_report_same_tiles(const sim_request *req)
{
    static const int64_t tiles[] = SIM_SAME_TILES;
    for (size_t k = 0; k < sizeof tiles / sizeof tiles[0]; k++) {
        int all = 1;
        for (int q = 0; q < SIM_PASS_COUNT && all; q++) {
            if (!pass_on(req, (sim_pass)q))
                continue;
            sim_run_opts run = req->run;       /* as sim_report_build runs the pass */
            run.pass = (sim_pass)q;
            run.splits = 0;
            for (int a = 0; a < sim_algo_count() && all; a++) {
                sim_plan p;
                if (!req->run_algo[a] || !sim_loop_find((sim_algo)a, &run))
                    continue;
                all = sim_plan_make((sim_algo)a, &req->sh, &run, tiles[k], tiles[k],
                                    SIM_PLAN_USER, &p) == 0 && p.fits;
            }
        }
        if (all)
            return tiles[k];
    }
    return -1;
}

int64_t sim_report_default_tiles(const sim_shape *sh)
{
    sim_request req;
    memset(&req, 0, sizeof req);       /* as cli_args.c's report defaults */
    req.sh = *sh;
    for (int a = 0; a < sim_algo_count(); a++)
        req.run_algo[a] = sim_algo_in_default((sim_algo)a) ? SIM_ALGO_IF_SERVED : 0;
    req.run_pass[SIM_FWD] = 1;
    req.plan_kind = SIM_PLAN_SAME;
    const int64_t t = sim_report_same_tiles(&req);
    return t > 0 ? t : 0;
}

/* SIM_PLAN_SAME asked: its tiles written into rep->req as USER sizes, or
 * each loop order's best plan (AUTO) when none fits. */
void sim_report_use_tiles(sim_request *req, int64_t t)
{
    req->plan_kind = t > 0 ? SIM_PLAN_USER : SIM_PLAN_AUTO;
    req->Br = req->Bc = t > 0 ? t : 0;
}

int64_t sim_report_resolve_same(sim_request *req)
{
    if (req->plan_kind != SIM_PLAN_SAME)
        return 0;
    const int64_t t = sim_report_same_tiles(req);
    sim_report_use_tiles(req, t);
    return t;
}

static void resolve_same_tiles(sim_report *rep, build_ctx *x)
{
    rep->same_tiles = sim_report_resolve_same(&rep->req);
    x->same = rep->same_tiles > 0;
}

int sim_report_build(const sim_request *req, sim_report *rep, char *err, size_t errlen)
{
    memset(rep, 0, sizeof *rep);
    rep->req = *req;
    rep->req.run.pass = SIM_FWD;
    rep->req.run.page_seed = req->seed;          /* paged KV: the placement follows --seed */
    rep->req.run.incoherent_seed = req->seed;    /* and the Hadamard transform's signs */
    const sim_request *rq = &rep->req;
    const sim_shape *sh = &rq->sh;
    if (sim_check(sh, &rq->run, err, errlen) != 0 ||
        (rq->ring.P > 0 && sim_ring_check(sh, &rq->ring, err, errlen) != 0))
        return SIM_EUSAGE;
    build_ctx ctx, *x = &ctx;
    memset(x, 0, sizeof *x);
    int rc = SIM_OK;
    for (int q = 0; q < SIM_PASS_COUNT && rc == SIM_OK; q++) {
        x->runs[q] = rq->run;                  /* the run of each pass */
        x->runs[q].pass = (sim_pass)q;
        x->runs[q].splits = 0;                 /* split-KV is a run of its own */
        if (pass_on(req, (sim_pass)q) && sim_check(sh, &x->runs[q], err, errlen) != 0)
            rc = SIM_EUSAGE;
    }
    x->max_steps = req->max_steps ? req->max_steps : SIM_DEFAULT_MAX_STEPS;
    if (rc == SIM_OK)
        resolve_same_tiles(rep, x);
    rep->bounds = sim_theory_bounds(sh);
    x->nd = sim_shape_B(sh) * sim_shape_H(sh) * sh->N * sh->d;
    x->nkd = sim_shape_B(sh) * sim_shape_G(sh) * sim_shape_Nk(sh) * sh->d;
    if (rc == SIM_OK)
        rc = plan_runs(rq, x, err, errlen);
    if (rc == SIM_OK)
        rc = plan_split(rq, x, err, errlen);
    if (rc == SIM_OK)
        rc = check_total_steps(rq, x, err, errlen);
    if (rc == SIM_OK)
        rc = choose_mode(rq, rep, x->flops, x->seconds,
                         compute_memory(sh, pass_on(req, SIM_BWD), x->mem), err, errlen);
    if (rc != SIM_OK)
        return rc;
    if (rep->computed)
        rc = make_inputs(rq, rep, x, err, errlen);
    if (rc == SIM_OK)
        rc = run_all(rq, rep, x, err, errlen);
    /* GQA: FA2 again with each group's query heads in one block. */
    if (rc == SIM_OK && sim_shape_G(sh) < sim_shape_H(sh) && req->run_algo[SIM_FA2] &&
        pass_on(req, SIM_FWD))
        rc = build_grouped(rep, x->Q, x->K, x->V, x->O_ref, err, errlen);
    if (rc == SIM_OK && rq->ring.P > 0)
        rc = build_ring(rep, x, err, errlen);
    if (rc == SIM_OK)
        naive_bytes(rq, rep, x);
    build_free(x);
    if (rc != SIM_OK)
        sim_report_free(rep);
    return rc;
}

void sim_report_free(sim_report *rep)
{
    for (int k = 0; k < rep->nruns; k++)
        sim_result_free(&rep->runs[k].res);
    rep->nruns = 0;
    if (rep->has_gqa)
        sim_result_free(&rep->gqa.res);
    rep->has_gqa = 0;
    if (rep->has_ring)
        sim_ring_free(&rep->ring);
    rep->has_ring = 0;
}

sim_bound sim_report_bound(sim_algo algo)
{
    const sim_loop *l = sim_algo_loop(algo);
    return l ? l->bound : SIM_BOUND_FLASH;
}

double sim_report_theta(const sim_bounds *bd, sim_algo algo)
{
    return sim_report_bound(algo) == SIM_BOUND_STANDARD ? bd->theta_standard
                                                        : bd->theta_flash;
}

/* ---- text --------------------------------------------------------------- */

#define LABEL_W 22
/* Column width: 18 for up to three runs (80 columns in all), less for more,
 * and never less than the widest count needs (section_text sets it). */
static int COL_W = 18;

static void row_label(FILE *out, const char *label)
{
    fprintf(out, "  %-*s", LABEL_W - 2, label);
}

/* A run's column title: its loop order, "fa2 S=8" for split-KV. */
static const char *run_label(const sim_report_run *r, char *buf, size_t len)
{
    if (r->splits > 1)
        snprintf(buf, len, "%s S=%lld", sim_algo_name(r->algo), (long long)r->splits);
    else
        snprintf(buf, len, "%s", sim_algo_name(r->algo));
    return buf;
}

static void cell(FILE *out, const char *s)
{
    fprintf(out, "%*s", COL_W, s);
}

/* A table's header row: the title in the label column, then one column per
 * run ("naive", ..., "fa2 S=8"). */
static void runs_header(FILE *out, const sim_report *rep, const char *title)
{
    char lb[32];
    fprintf(out, "%-*s", LABEL_W, title);
    for (int k = 0; k < rep->nruns; k++)
        cell(out, run_label(&rep->runs[k], lb, sizeof lb));
    fputc('\n', out);
}

/* The same with one column per loop order marked in show[]. */
static void algos_header(FILE *out, const char *title, const int show[SIM_ALGO_MAX])
{
    fprintf(out, "%-*s", LABEL_W, title);
    for (int a = 0; a < sim_algo_count(); a++)
        if (show[a])
            cell(out, sim_algo_name((sim_algo)a));
    fputc('\n', out);
}

/* Scale *v by powers of 1000 below 1000 and return the decimal suffix
 * ('k', 'M', ... 'E'), or ' ' when it is below 1000 already. */
static char decimal_scale(double *v)
{
    static const char unit[] = "kMGTPE";
    int u = -1;
    while (*v >= 999.95 && u < 5) {
        *v /= 1000.0;
        u++;
    }
    return u < 0 ? ' ' : unit[u];
}

/* A count, exact when it fits the column (COL_W - 1 characters), else to
 * four significant digits with a decimal suffix ("97.17 G"): four columns
 * of 10^11 would not fit 80 columns. The JSON is always exact. */
static void count_cell(FILE *out, uint64_t n)
{
    char b[40];
    sim_format_count(b, sizeof b, n);
    if ((int)strlen(b) > COL_W - 1) {
        double v = (double)n;
        const char u = decimal_scale(&v);
        snprintf(b, sizeof b, "%.2f %c", v, u);
    }
    cell(out, b);
}

static const char *plan_kind_name(sim_plan_kind k)
{
    return k == SIM_PLAN_PAPER ? "paper"
           : k == SIM_PLAN_USER ? "user"
           : k == SIM_PLAN_SAME ? "same"
           : k == SIM_PLAN_KERNEL ? "kernel"
                                : "best";
}

/* K and V reads of a run, in elements. */
static uint64_t kv_reads(const sim_counts *c)
{
    return c->read_elems[SIM_K] + c->read_elems[SIM_V];
}

/* The KV cache, K and V of G heads of N_k rows, in bytes. */
static uint64_t kv_cache_bytes(const sim_shape *sh, int64_t G)
{
    return 2u * (uint64_t)(sim_shape_B(sh) * G * sim_shape_Nk(sh) * sh->d) *
           (uint64_t)sim_dtype_bytes(sh->dtype);
}

/* GROUPED-QUERY ATTENTION: the KV cache with G heads against H, and FA2's
 * K + V reads with one query head per block against a group per block. */
static void gqa_text(FILE *out, const sim_report *rep)
{
    const sim_shape *sh = &rep->req.sh;
    const int64_t H = sim_shape_H(sh), G = sim_shape_G(sh);
    char b1[40], b2[40], b3[40];
    fprintf(out, "\nGROUPED-QUERY ATTENTION: %lld query heads share %lld key/value head%s "
            "(%lld each)\n", (long long)H, (long long)G, G == 1 ? "" : "s",
            (long long)(H / G));
    sim_format_bytes(b1, sizeof b1, kv_cache_bytes(sh, G));
    sim_format_bytes(b2, sizeof b2, kv_cache_bytes(sh, H));
    fprintf(out, "  KV cache (K and V in HBM): %s with G = %lld; %s with H = %lld (MHA)\n", b1,
            (long long)G, b2, (long long)H);
    const sim_report_run *one = NULL;
    for (int k = 0; k < rep->nruns; k++)
        if (rep->runs[k].algo == SIM_FA2 && rep->runs[k].splits <= 1)
            one = &rep->runs[k];
    if (!one) {
        fprintf(out, "  (run fa2 to compare one query head per block with a group per block)\n");
        return;
    }
    if (!rep->has_gqa) {
        fprintf(out, "  %s\n", rep->gqa_note);
        return;
    }
    const sim_report_run *grp = &rep->gqa;
    const sim_dtype dt = sh->dtype;
    fprintf(out, "  %-30s%11s%18s%17s\n", "fa2", "B_r x B_c", "K+V reads, elems",
            "total bytes");
    const sim_report_run *rows[2] = { one, grp };
    for (int q = 0; q < 2; q++) {
        const sim_plan *p = &rows[q]->res.plan;
        char what[64];
        if (q == 0)
            snprintf(what, sizeof what, "one query head per block");
        else
            snprintf(what, sizeof what, "%lld query heads per block", (long long)(H / G));
        sim_format_count(b1, sizeof b1, kv_reads(&rows[q]->res.counts));
        sim_format_bytes(b2, sizeof b2, total_bytes(&rows[q]->res.counts, dt));
        snprintf(b3, sizeof b3, "%lld x %lld", (long long)p->Br, (long long)p->Bc);
        fprintf(out, "    %-28s%11s%18s%17s\n", what, b3, b1, b2);
    }
    const uint64_t r1 = kv_reads(&one->res.counts), r2 = kv_reads(&grp->res.counts);
    if (r2 <= r1)
        fprintf(out, "  a group per block reads K and V %.2fx less", (double)r1 / (double)(r2 ? r2 : 1));
    else
        fprintf(out, "  a group per block reads K and V %.2fx MORE here: its heads' Q_i, O_i,\n"
                "  S_ij share the SRAM, so B_r falls from %lld to %lld",
                (double)r2 / (double)r1, (long long)one->res.plan.Br,
                (long long)grp->res.plan.Br);
    fprintf(out, "; closed form %s", grp->theory_matches ? "matches" : "DOES NOT match");
    if (grp->has_error)
        fprintf(out, ";\n  max |O - O_ref| %.3e (one head per block: %.3e)", grp->err.max_abs,
                one->err.max_abs);
    fputc('\n', out);
}

/* GROUPED-QUERY ATTENTION in the backward: how dK, dV of a key/value head
 * come from its H/G query heads (sim_gqa_grad), and what the expanded
 * gradients and their sum cost each loop order run. */
static void gqa_bwd_text(FILE *out, const sim_report *rep)
{
    const sim_shape *sh = &rep->req.sh;
    const int64_t H = sim_shape_H(sh), G = sim_shape_G(sh);
    const sim_dtype dt = sh->dtype;
    fprintf(out, "\nGROUPED-QUERY ATTENTION, backward: %lld query heads share %lld key/value "
            "head%s\n", (long long)H, (long long)G, G == 1 ? "" : "s");
    fprintf(out, "  each query head writes its dK, dV to dK_exp, dV_exp (%s); then a key/value\n"
            "  head's dK, dV are the sums of its %lld (in fp32, rounded once), as\n"
            "  FlashAttention-2's mha_bwd does (dk_expanded, at::sum_out)\n",
            sim_dtype_name(dt), (long long)(H / G));
    for (int k = 0; k < rep->nruns; k++) {
        const sim_report_run *r = &rep->runs[k];
        if (r->pass != SIM_BWD)
            continue;
        const sim_counts *c = &r->res.counts;
        uint64_t b = 0;
        const sim_tensor t[4] = { SIM_dKexp, SIM_dVexp, SIM_dK, SIM_dV };
        for (int x = 0; x < 4; x++)
            b += (c->read_elems[t[x]] + c->write_elems[t[x]]) *
                 (uint64_t)sim_tensor_bytes(t[x], dt);
        char b1[40], b2[40];
        sim_format_bytes(b1, sizeof b1, b);
        sim_format_bytes(b2, sizeof b2, total_bytes(c, dt));
        fprintf(out, "  %-8s dK_exp, dV_exp, dK, dV: %s of %s\n", sim_algo_name(r->algo), b1,
                b2);
    }
}

/* SPLIT-KV: why the split run exists (S times the blocks of work), what its
 * partial states cost in HBM, and how its output compares with fa2's. */
static void split_text(FILE *out, const sim_report *rep)
{
    const sim_report_run *one = NULL, *sp = NULL;
    for (int k = 0; k < rep->nruns; k++) {
        if (rep->runs[k].algo != SIM_FA2 || rep->runs[k].pass != SIM_FWD)
            continue;
        if (rep->runs[k].splits > 1)
            sp = &rep->runs[k];
        else
            one = &rep->runs[k];
    }
    if (!sp)
        return;
    const sim_shape *sh = &rep->req.sh;
    const sim_plan *p = &sp->res.plan;
    const int64_t S = sp->splits, heads = sim_shape_B(sh) * sim_shape_H(sh);
    const sim_counts *c = &sp->res.counts;
    char b1[40], b2[40], b3[40];
    sim_format_count(b1, sizeof b1, (uint64_t)p->Tc);
    fprintf(out, "\nSPLIT-KV (decoding): the key blocks in S splits, each writing a partial\n"
            "(O~, m, l) to HBM; a merge pass combines them (the merge lemma)\n"
            "  T_c = %s key blocks in S = %lld splits\n", b1, (long long)S);
    sim_format_count(b1, sizeof b1, (uint64_t)(heads * p->Tr));
    sim_format_count(b2, sizeof b2, (uint64_t)(heads * p->Tr * S));
    fprintf(out, "  blocks of work for the GPU: %s unsplit, %s split\n", b1, b2);
    uint64_t part_w = 0, part_r = 0;
    const sim_tensor t[3] = { SIM_Ot, SIM_m, SIM_l };
    for (int q = 0; q < 3; q++) {
        const int eb = sim_tensor_bytes(t[q], sh->dtype);
        part_w += c->write_elems[t[q]] * (uint64_t)eb;
        part_r += c->read_elems[t[q]] * (uint64_t)eb;
    }
    sim_format_bytes(b1, sizeof b1, part_w);
    sim_format_bytes(b2, sizeof b2, part_r);
    const uint64_t tb = total_bytes(c, sh->dtype);
    fprintf(out, "  partials: %s written, %s read by the merge: %.2g%% of its traffic\n",
            b1, b2, tb ? 100.0 * (double)(part_w + part_r) / (double)tb : 0.0);
    if (one) {
        const uint64_t ob = total_bytes(&one->res.counts, sh->dtype);
        sim_format_bytes(b3, sizeof b3, tb);
        fprintf(out, "  total %s, %.3fx unsplit fa2's", b3, ob ? (double)tb / (double)ob : 0.0);
        if (sp->res.O && one->res.O) {
            const int64_t n = heads * sh->N * sh->d;
            double worst = 0.0;
            for (int64_t x = 0; x < n; x++)
                worst = fmax(worst, fabs((double)sp->res.O[x] - (double)one->res.O[x]));
            if (worst == 0.0)
                fprintf(out, "; O is fa2's bit for bit here\n  (the merge regroups the "
                        "sums, but the %s output rounding hides it)", sim_dtype_name(sh->dtype));
            else
                fprintf(out, "; max |O - O_fa2| %.3e (rounding:\n  the merge groups the sums "
                        "differently)", worst);
        }
        fputc('\n', out);
    }
}

/* PAGED KV: what the page table costs each run against contiguous K and V:
 * the table's entries read (one transfer per K or V tile) and the tiles
 * that span pages, moved as one transfer per page. The elements of K and V
 * are the same; only transfers and the table's bytes are added. */
static void paged_text(FILE *out, const sim_report *rep)
{
    const sim_shape *sh = &rep->req.sh;
    const sim_run_opts *run = &rep->req.run;
    if (run->page <= 0 || rep->nruns == 0)
        return;
    const int64_t pages = sim_run_pages(sh, run);
    const int64_t pool = sim_shape_B(sh) * sim_shape_G(sh) * pages;
    char b1[40], b2[40], b3[40];
    sim_format_count(b1, sizeof b1, (uint64_t)run->page);
    fprintf(out, "\nPAGED KV: K and V in pages of P = %s rows, placed in a pool by a page "
            "table\n", b1);
    sim_format_count(b1, sizeof b1, (uint64_t)pages);
    sim_format_count(b2, sizeof b2, (uint64_t)pool);
    sim_format_bytes(b3, sizeof b3, (uint64_t)pool * 4u);
    fprintf(out, "  pages per key/value head: %s; in the pool: %s\n", b1, b2);
    fprintf(out, "  the table: %s (4 B an entry), placed by seed %llu\n", b3,
            (unsigned long long)run->page_seed);
    runs_header(out, rep, "");
    static const char *const rows[] = { "K+V tiles loaded", "K+V transfers, paged",
                                        "table entries read", "table transfers",
                                        "bytes / contiguous" };
    for (int row = 0; row < 5; row++) {
        row_label(out, rows[row]);
        for (int k = 0; k < rep->nruns; k++) {
            const sim_counts *c = &rep->runs[k].res.counts, *f = &rep->runs[k].contiguous;
            switch (row) {
            case 0: count_cell(out, f->read_ops[SIM_K] + f->read_ops[SIM_V]); break;
            case 1: count_cell(out, c->read_ops[SIM_K] + c->read_ops[SIM_V]); break;
            case 2: count_cell(out, c->read_elems[SIM_PT]); break;
            case 3: count_cell(out, c->read_ops[SIM_PT]); break;
            default: {
                const uint64_t fb = total_bytes(f, sh->dtype);
                snprintf(b1, sizeof b1, "%.6f",
                         fb ? (double)total_bytes(c, sh->dtype) / (double)fb : 0.0);
                cell(out, b1);
            }
            }
        }
        fputc('\n', out);
    }
    fprintf(out, "  each K or V tile moves as one transfer per page it touches (pages lie "
            "apart\n  in the pool), after one read of those pages' table entries; plans are "
            "chosen\n  as for contiguous K and V\n");
}

/* "s of t" for a causal run's skipped blocks (s of all T_r T_c) into
 * b1[len]; the share alone when that would not fit a column. */
static void skipped_cell(char *b1, size_t len, const sim_shape *sh, const sim_plan *p)
{
    uint64_t all = (uint64_t)p->Tr * (uint64_t)p->Tc;
    uint64_t seen = sim_plan_stores_scores(p)
                        ? all   /* standard attention materialises all of S */
                        : sim_theory_visited(sh, p->Br, p->Bc);
    char c1[32], c2[32];
    sim_format_count(c1, sizeof c1, all - seen);
    sim_format_count(c2, sizeof c2, all);
    snprintf(b1, len, "%s of %s", c1, c2);
    /* A column holds COL_W - 1 characters and a space; past that (millions
     * of blocks) say the share instead of running into the next column. */
    if ((int)strlen(b1) > COL_W - 1) {
        double v = (double)all;
        const char u = decimal_scale(&v);
        snprintf(b1, len, "%.2f%% of %.1f%c", 100.0 * (double)(all - seen) / (double)all,
                 v, u);
    }
    if ((int)strlen(b1) > COL_W - 1)     /* narrow columns: the share alone */
        snprintf(b1, len, "%.2f%%", 100.0 * (double)(all - seen) / (double)all);
}

/* Set COL_W for this section: wide enough for its largest count, narrow
 * enough that the runs fit 80 columns (then counts shorten). */
static void set_column_width(const sim_report *rep)
{
    const sim_dtype dt = rep->req.sh.dtype;
    char b1[80];
    uint64_t widest = 0;
    for (int k = 0; k < rep->nruns; k++) {
        const sim_counts *c = &rep->runs[k].res.counts;
        const uint64_t n[3] = { sim_counts_elems(c), sim_counts_read_bytes(c, dt),
                                sim_counts_write_bytes(c, dt) };
        for (int q = 0; q < 3; q++)
            widest = n[q] > widest ? n[q] : widest;
    }
    sim_format_count(b1, sizeof b1, widest);
    COL_W = rep->nruns <= 3 ? 18 : 14;
    if ((int)strlen(b1) + 2 > COL_W)
        COL_W = (int)strlen(b1) + 2;
    if (rep->nruns > 0 && LABEL_W + rep->nruns * COL_W > 80)    /* then counts shorten */
        COL_W = (80 - LABEL_W) / rep->nruns;
}

/* ---- the notes under the sections ------------------------------------------- */

/* What each section's numbers mean, for a reader who has read the
 * FlashAttention abstract: a brief note always, and with --explain more. */
typedef struct {
    const char *brief, *more;
} section_note;

static const section_note NOTE_PLAN = {
    "B_r x B_c: the rows of Q, and of K and V, in one tile. Tile steps: the tiles the "
    "loops visit (standard attention's softmax passes over S count too). SRAM peak: the "
    "most bytes on chip at once.",
    "T_r = ceil(N / B_r) and T_c = ceil(N_k / B_c) count the blocks. 'same' means every "
    "loop order runs on one square tile, so the columns differ by the loop order alone; "
    "--plan best gives each the tiles that make its own traffic smallest, and the "
    "comparison then mixes the loop order with the tile shape.",
};
/* --plan kernel's: two levels on chip. */
static const section_note NOTE_PLAN_KERNEL = {
    "B_r x B_c: the rows of Q, and of K and V, in one tile, as the released kernel "
    "launches it. SRAM peak: the most bytes in shared memory at once; registers: the "
    "accumulators and statistics, against the budget of the block's warps.",
    "The budget is min(255 registers a thread x 32 threads x warps, 65,536 a block) x 4 B. "
    "Where a buffer lives moves no byte between HBM and the chip: the traffic is that of "
    "the same tiles with every buffer in SRAM.",
};
/* Why the loop orders' traffic differs (the traffic notes' --explain half). */
#define TRAFFIC_WHY                                                                      \
    "FA1 keeps K_j, V_j on chip and walks the Q blocks inside, so it reads and writes O, " \
    "l and m once per key block. FA2 keeps Q_i and O_i on chip and walks the key blocks "  \
    "inside, so it reads K and V once per query block and writes O once. Standard "        \
    "attention writes S and P (N x N_k) to HBM and reads them back: the N^2 terms."
static const section_note NOTE_TRAFFIC = {
    "Elements moved between HBM and SRAM, every re-read counted again; (2 B) and (4 B) "
    "are the bytes of one element in HBM.",
    TRAFFIC_WHY,
};
/* The same with FP8 inputs, which are one byte an element. */
static const section_note NOTE_TRAFFIC_FP8 = {
    "Elements moved between HBM and SRAM, every re-read counted again; (1 B), (2 B) and "
    "(4 B) are the bytes of one element in HBM: Q, K, V in FP8, the output in bf16.",
    TRAFFIC_WHY,
};
static const section_note NOTE_BOUNDS = {
    "Theta(x) is 'about a constant times x': each figure is x alone, and measured / "
    "Theta is this run's constant, not a distance from the best. The two theorems' "
    "expressions differ, so the ratios do not compare across loop orders.",
    "Theorem 2 of the FlashAttention paper: standard attention makes Theta(N d + N^2) "
    "HBM accesses, FlashAttention Theta(N^2 d^2 / M), for d <= M <= N d with M in "
    "elements. Proposition 3: no exact algorithm makes o(N^2 d^2 / M) for every such M. "
    "Reading Q, K, V and writing O once is a floor for any algorithm.",
};
static const char ERROR_MORE[] =
    "max |O - O_ref| is the largest difference of one entry; divided by max |O_ref| it "
    "is relative to the output's size. Each loop order rounds its output to the dtype "
    "in HBM.";

/* The note under a section: "  note: ..." wrapped at 80 columns, and with
 * --explain its second part. */
static void note_text(FILE *out, const sim_report *rep, const section_note *n)
{
    sim_text_wrap_lead(out, "  note: ", 8, 80, n->brief);
    if (rep->req.explain)
        sim_text_wrap_lead(out, "        ", 8, 80, n->more);
}

/* The run of algo a in rep (one pass's view), unsplit; NULL if none. */
static const sim_report_run *find_run(const sim_report *rep, sim_algo a)
{
    for (int k = 0; k < rep->nruns; k++)
        if (rep->runs[k].algo == a && rep->runs[k].splits <= 1)
            return &rep->runs[k];
    return NULL;
}

/* The note under ERROR: what the error is against and, where the dtype
 * rounds something a loop order stores in HBM, what; "largest" only where
 * standard attention's error is the largest of the runs. */
static void error_note(FILE *out, const sim_report *rep, sim_pass pass)
{
    char brief[900];
    const sim_dtype dt = rep->req.sh.dtype;
    int n = sim_dtype_is_fp8(dt)
                ? snprintf(brief, sizeof brief, "Against attention computed in float64 from "
                           "the inputs before they are quantised to %s (scales per %s%s), so "
                           "the error includes the quantisation, as FlashAttention-3's "
                           "Table 3 measures it; O is written in bf16.", sim_dtype_name(dt),
                           rep->req.run.fp8_scale == SIM_FP8_BLOCK ? "block" : "tensor",
                           rep->req.run.incoherent ? ", after the Hadamard transform" : "")
                : snprintf(brief, sizeof brief, "Against attention computed in float64 "
                           "from the same inputs.");
    const sim_report_run *nv = find_run(rep, SIM_NAIVE), *f1 = find_run(rep, SIM_FA1);
    if (nv && pass == SIM_FWD && rep->req.sh.dtype != SIM_FP32) {
        /* With FP8 inputs the quantisation dominates every loop order's
         * error, so S and P's rounding explains no ranking. */
        int largest = !sim_dtype_is_fp8(rep->req.sh.dtype);
        for (int k = 0; k < rep->nruns; k++)
            largest &= rep->runs[k].err.max_rel <= nv->err.max_rel;
        n += snprintf(brief + n, sizeof brief - (size_t)n, " Standard attention rounds S and P "
                      "to %s when it stores them in HBM, where FlashAttention keeps them in "
                      "fp32 on chip%s", sim_dtype_name(sim_tensor_dtype(SIM_S, dt)),
                      largest ? ": that, not the method, makes its error the largest here."
                              : ".");
    }
    if (f1 && pass == SIM_FWD && rep->req.sh.dtype != SIM_FP32 && n > 0 &&
        (size_t)n < sizeof brief)
        snprintf(brief + n, sizeof brief - (size_t)n,
                 rep->req.run.intermediates == SIM_INTER_PAPER
                     ? " FA1 rounds its running output O to %s in HBM at every key block "
                       "(--intermediates paper)."
                     : " FA1 keeps its running output in fp32 (O_acc) between key blocks "
                       "and rounds P~ to %s before P~ V, as the released kernels do; "
                       "--intermediates paper rounds O at every step instead.",
                 sim_dtype_name(rep->req.sh.dtype));
    const section_note note = { brief, ERROR_MORE };
    note_text(out, rep, &note);
}

static int64_t sim_min(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* --plan kernel: the GPU, and each run's launch choice and its source. */
static void kernel_lines(FILE *out, const sim_report *rep)
{
    const sim_kernel_target t = kernel_target(&rep->req);
    char text[320];
    snprintf(text, sizeof text, "the released kernels' launch choices for %s (compute "
             "capability %d.%d%s); accumulators and statistics in registers, the tiles "
             "loaded from HBM in SRAM (shared memory)", t.name, t.cc_major, t.cc_minor,
             rep->req.gpu ? "" : ", as without --gpu");
    sim_text_wrap_lead(out, "tiles: ", 0, 80, text);
    for (int k = 0; k < rep->nruns; k++) {
        const sim_report_run *r = &rep->runs[k];
        const sim_plan *p = &r->res.plan;
        sim_kernel_choice c;
        char lb[32];
        if (!p->warps || sim_kernel_choose(r->algo, &rep->req.sh, &p->run, &t, &c, NULL, 0))
            continue;
        char given[64] = "";
        if (p->Br != sim_min(c.Br, p->sh.N) || p->Bc != sim_min(c.Bc, sim_shape_Nk(&p->sh)))
            snprintf(given, sizeof given, "; --Br/--Bc: %lld x %lld", (long long)p->Br,
                     (long long)p->Bc);
        char lead[48];
        snprintf(lead, sizeof lead, "  %s%s: ", run_label(r, lb, sizeof lb),
                 r->pass == SIM_BWD ? " backward" : "");
        snprintf(text, sizeof text, "%lld x %lld, %d warps: %s%s%s%s%s", (long long)c.Br,
                 (long long)c.Bc, c.warps, c.source, c.depends ? " (" : "",
                 c.depends ? c.depends : "", c.depends ? ")" : "", given);
        sim_text_wrap_lead(out, lead, 6, 80, text);
    }
}

/* Whether a run of rep has a kernel plan (a register level). */
static int any_registers(const sim_report *rep)
{
    for (int k = 0; k < rep->nruns; k++)
        if (rep->runs[k].res.plan.warps > 0)
            return 1;
    return 0;
}

/* The note on standard attention's forward softmax, under its traffic:
 * which form the run used, and why (the row of S against M, or the form
 * asked). */
static const char SOFTMAX_MORE[] =
    "A row of S that fits in SRAM is read once: its maximum, sum and the division "
    "happen on chip. A row that does not fit is read twice, as real softmax kernels read "
    "it (Milakov and Gimelshein 2018): the first pass keeps each row's m and l, scaling l "
    "by exp(m_old - m_new) whenever m grows, the second writes P = exp(S - m) / l. The "
    "textbook's three passes (max, sum, normalise) read S once more. --softmax 1pass, "
    "2pass or 3pass runs one form.";

/* Which operations unfused ran, when it ran FlashAttention-2's benchmark's
 * (--unfused-ops fa2bench): its copies show as writes of Q, K, V, dO. */
static void unfused_ops_note(FILE *out, const sim_report *rep)
{
    int ran = 0;
    for (int k = 0; k < rep->nruns; k++)
        ran |= (sim_algo_loop(rep->runs[k].algo)->flags & SIM_LOOP_FRAMEWORK) != 0;
    if (!ran || rep->req.run.unfused_ops != SIM_UF_FA2BENCH)
        return;
    static const section_note note = {
        "unfused runs FlashAttention-2's benchmark's operations (--unfused-ops "
        "fa2bench): Q, K, V copied into batched layouts (dO copied, dQ, dK, dV stacked "
        "backward), the scale inside the products.",
        "attention_pytorch in flash-attn's benchmarks takes one packed tensor (B, N, 3, "
        "H, d); a reshape of a permuted view copies, so each operand is copied once "
        "before its product. GPT-2's operations (the default) have no copies here and a "
        "kernel of their own for the scale.",
    };
    note_text(out, rep, &note);
}

static void softmax_note(FILE *out, const sim_report *rep)
{
    const sim_report_run *nv = find_run(rep, SIM_NAIVE);
    if (!nv || nv->pass != SIM_FWD)
        return;
    const sim_plan *p = &nv->res.plan;
    const uint64_t row = (uint64_t)sim_shape_Nk(&rep->req.sh) * 4 + 8;
    const char *form = p->softmax_passes == 1   ? "one pass over whole rows of S"
                       : p->softmax_passes == 2 ? "two passes over tiles of S (m and l "
                                                  "online, then P)"
                                                : "three passes over tiles of S (max, sum, "
                                                  "normalise)";
    char bytes[32], brief[320];
    sim_format_count(bytes, sizeof bytes, row);
    if (p->run.softmax != SIM_SOFTMAX_AUTO)
        snprintf(brief, sizeof brief, "Standard attention's softmax: %s, as --softmax %s "
                 "asks; a row in fp32 with its m and l takes %s B.", form,
                 sim_softmax_name(p->run.softmax), bytes);
    else
        snprintf(brief, sizeof brief, "Standard attention's softmax: %s, since a row in "
                 "fp32 with its m and l (%s B) %s M.", form, bytes,
                 row <= rep->req.sh.M ? "fits" : "does not fit");
    const section_note note = { brief, SOFTMAX_MORE };
    note_text(out, rep, &note);
}

/* TILE PLAN: blocks, tiles, who chose them, steps, skipped blocks, SRAM
 * (shared memory), and with a kernel plan the warps and registers. */
static void plan_rows(FILE *out, const sim_report *rep)
{
    const sim_shape *sh = &rep->req.sh;
    char b1[80];
    fputc('\n', out);
    if (sh->blocks) {
        const sim_block_mask *b = sh->blocks;
        char c1[32];
        sim_format_count(c1, sizeof c1, b->nonzero);
        fprintf(out, "block mask %s: %lld x %lld blocks of %lld x %lld scores; %s nonzero,\n"
                "  s = %.4g of them (block-sparse: tiles with no visible score skipped)\n\n",
                b->pattern, (long long)b->R, (long long)b->m.cols, (long long)b->m.br,
                (long long)b->m.bc, c1, sim_bmask_s(b));
    }
    runs_header(out, rep, "TILE PLAN");

    row_label(out, "B_r x B_c");
    for (int k = 0; k < rep->nruns; k++) {
        const sim_plan *p = &rep->runs[k].res.plan;
        snprintf(b1, sizeof b1, "%lld x %lld", (long long)p->Br, (long long)p->Bc);
        cell(out, b1);
    }
    fputc('\n', out);
    row_label(out, "T_r x T_c");
    for (int k = 0; k < rep->nruns; k++) {
        const sim_plan *p = &rep->runs[k].res.plan;
        snprintf(b1, sizeof b1, "%lld x %lld", (long long)p->Tr, (long long)p->Tc);
        cell(out, b1);
    }
    fputc('\n', out);
    row_label(out, "chosen by");
    for (int k = 0; k < rep->nruns; k++)
        cell(out, plan_kind_name(rep->runs[k].res.plan.kind));
    fputc('\n', out);
    row_label(out, "tile steps");
    for (int k = 0; k < rep->nruns; k++)
        count_cell(out, rep->runs[k].res.steps);
    fputc('\n', out);
    if (sh->causal || sh->blocks) {
        row_label(out, "blocks skipped");
        for (int k = 0; k < rep->nruns; k++) {
            skipped_cell(b1, sizeof b1, sh, &rep->runs[k].res.plan);
            cell(out, b1);
        }
        fputc('\n', out);
    }
    row_label(out, "SRAM peak, bytes");
    for (int k = 0; k < rep->nruns; k++)
        count_cell(out, rep->runs[k].res.sram_peak);
    fputc('\n', out);
    row_label(out, "SRAM peak / M");
    for (int k = 0; k < rep->nruns; k++) {
        double f = sh->M ? (double)rep->runs[k].res.sram_peak / (double)sh->M : 0.0;
        snprintf(b1, sizeof b1, "%.1f%%%s", 100.0 * f, f > 1.0 ? " OVER" : "");
        cell(out, b1);
    }
    fputc('\n', out);
    if (!any_registers(rep))
        return;
    row_label(out, "warps per block");
    for (int k = 0; k < rep->nruns; k++) {
        snprintf(b1, sizeof b1, "%d", rep->runs[k].res.plan.warps);
        cell(out, rep->runs[k].res.plan.warps ? b1 : "-");
    }
    fputc('\n', out);
    row_label(out, "registers, bytes");
    for (int k = 0; k < rep->nruns; k++)
        count_cell(out, rep->runs[k].res.reg_peak);
    fputc('\n', out);
    row_label(out, "registers / budget");
    for (int k = 0; k < rep->nruns; k++) {
        const sim_plan *p = &rep->runs[k].res.plan;
        double f = p->reg_limit ? (double)rep->runs[k].res.reg_peak / (double)p->reg_limit : 0;
        snprintf(b1, sizeof b1, "%.1f%%", 100.0 * f);
        cell(out, p->reg_limit ? b1 : "-");
    }
    fputc('\n', out);
}

/* HBM TRAFFIC: per tensor and direction, totals, the closed form, bytes. */
static void traffic_rows(FILE *out, const sim_report *rep)
{
    const sim_dtype dt = rep->req.sh.dtype;
    char b1[80];
    fputc('\n', out);
    runs_header(out, rep, "HBM TRAFFIC, elements");
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        for (int dir = 0; dir < 2; dir++) {
            int any = 0;
            for (int k = 0; k < rep->nruns; k++) {
                const sim_counts *c = &rep->runs[k].res.counts;
                any |= (dir ? c->write_elems[t] : c->read_elems[t]) != 0;
            }
            if (!any)
                continue;
            snprintf(b1, sizeof b1, "%-2s %s (%d B)", sim_tensor_name((sim_tensor)t),
                     dir ? "write" : "read", sim_tensor_bytes((sim_tensor)t, dt));
            row_label(out, b1);
            for (int k = 0; k < rep->nruns; k++) {
                const sim_counts *c = &rep->runs[k].res.counts;
                count_cell(out, dir ? c->write_elems[t] : c->read_elems[t]);
            }
            fputc('\n', out);
        }
    }
    row_label(out, "total elements");
    for (int k = 0; k < rep->nruns; k++)
        count_cell(out, sim_counts_elems(&rep->runs[k].res.counts));
    fputc('\n', out);
    row_label(out, "closed-form elements");
    for (int k = 0; k < rep->nruns; k++)
        count_cell(out, sim_counts_elems(&rep->runs[k].theory));
    fputc('\n', out);
    row_label(out, "matches, per tensor");
    for (int k = 0; k < rep->nruns; k++)
        cell(out, rep->runs[k].theory_matches ? "yes" : "NO");
    fputc('\n', out);
    row_label(out, "bytes read");
    for (int k = 0; k < rep->nruns; k++)
        count_cell(out, sim_counts_read_bytes(&rep->runs[k].res.counts, dt));
    fputc('\n', out);
    row_label(out, "bytes written");
    for (int k = 0; k < rep->nruns; k++)
        count_cell(out, sim_counts_write_bytes(&rep->runs[k].res.counts, dt));
    fputc('\n', out);
    row_label(out, "total bytes");
    for (int k = 0; k < rep->nruns; k++) {
        sim_format_bytes(b1, sizeof b1, total_bytes(&rep->runs[k].res.counts, dt));
        cell(out, b1);
    }
    fputc('\n', out);
    if (rep->have_naive_bytes) {
        row_label(out, "bytes / naive's");
        for (int k = 0; k < rep->nruns; k++) {
            double r = (double)total_bytes(&rep->runs[k].res.counts, dt) /
                       (double)rep->naive_bytes;
            snprintf(b1, sizeof b1, "%.4f", r);
            cell(out, b1);
        }
        fputc('\n', out);
    }
}

/* BOUNDS: Theorem 2 and Proposition 3 for this shape, and measured / Theta. */
static void bounds_text(FILE *out, const sim_report *rep, sim_pass pass)
{
    const sim_shape *sh = &rep->req.sh;
    const sim_dtype dt = sh->dtype;
    char b1[80];
    const sim_bounds *bd = &rep->bounds;
    sim_format_count(b1, sizeof b1, (uint64_t)bd->M_elems);
    fprintf(out, "\nBOUNDS, elements; the paper's M = %s elements (M bytes / %d)\n", b1,
            sim_dtype_bytes(dt));
    if (pass == SIM_BWD)
        fprintf(out, "  the backward's bounds (FlashAttention, Theorem 5) are Theorem 2's\n");
    const int square = sim_shape_Nk(sh) == sh->N;
    if (!square)
        fprintf(out, "  the theorems are about N_q = N_k = N: they do not speak about N_q = %lld,\n"
                "  N_k = %lld. Their formulas below, for reference only, take N d as\n"
                "  max(N_q, N_k) d, N^2 as N_q N_k and %s\n",
                (long long)sh->N, (long long)sim_shape_Nk(sh),
                pass == SIM_BWD ? "8 N d as 4 (N_q + N_k) d" : "4 N d as 2 (N_q + N_k) d");
    else if (bd->in_regime)
        fprintf(out, "  d <= M <= N d holds: the theorems speak about this configuration\n");
    else
        fprintf(out, "  d <= M <= N d does NOT hold (M %s): the theorems do not apply\n",
                bd->M_elems < (double)sh->d ? "< d" : "> N d");
    sim_format_count(b1, sizeof b1, (uint64_t)llround(bd->theta_standard));
    fprintf(out, "  Theorem 2, standard:        Theta(N d + N^2)   = %s\n", b1);
    sim_format_count(b1, sizeof b1, (uint64_t)llround(bd->theta_flash));
    fprintf(out, "  Theorem 2, FlashAttention:  Theta(N^2 d^2 / M) = %s\n", b1);
    fprintf(out, "  Proposition 3, lower bound: Omega(N^2 d^2 / M) = %s\n", b1);
    if (sh->blocks) {
        /* Proposition 4: block-sparse FlashAttention, s the fraction of the
         * mask's blocks that are nonzero. */
        sim_format_count(b1, sizeof b1, (uint64_t)llround(bd->theta_sparse));
        fprintf(out, "  Proposition 4, block-sparse: Theta(N d + N^2 d^2 s / M) = %s\n", b1);
        fprintf(out, "    s = %.4g: the mask's nonzero blocks over all of them\n",
                sim_bmask_s(sh->blocks));
    }
    if (pass == SIM_BWD) {
        sim_format_count(b1, sizeof b1, (uint64_t)llround(bd->io_floor_bwd));
        fprintf(out, "  read Q, K, V, O, dO, write dQ, dK, dV once: 8 N d = %s\n", b1);
    } else {
        sim_format_count(b1, sizeof b1, (uint64_t)llround(bd->io_floor));
        fprintf(out, "  read Q, K, V and write O once:          4 N d = %s\n", b1);
    }
    if (!square) {
        /* A ratio to a bound that does not hold here would read as a
         * distance from theory. */
        fprintf(out, "  (no measured / Theta: there is no theorem to compare with)\n");
        return;
    }
    row_label(out, "measured / Theta");
    for (int k = 0; k < rep->nruns; k++) {
        double th = sim_report_theta(bd, rep->runs[k].algo);
        snprintf(b1, sizeof b1, "%.2f", (double)sim_counts_elems(&rep->runs[k].res.counts) /
                 (th > 0 ? th : 1.0));
        cell(out, b1);
    }
    fputc('\n', out);
    if (!sh->blocks)
        return;
    row_label(out, "measured / Prop. 4");
    for (int k = 0; k < rep->nruns; k++) {
        snprintf(b1, sizeof b1, "%.2f", (double)sim_counts_elems(&rep->runs[k].res.counts) /
                 (bd->theta_sparse > 0 ? bd->theta_sparse : 1.0));
        cell(out, sim_report_bound(rep->runs[k].algo) == SIM_BOUND_FLASH ? b1 : "-");
    }
    fputc('\n', out);
}

/* FA3's pipeline under the GPU model's table (sim_gpu_fa3.h): a mean tile
 * step's G, E, M and what the step costs with the switches as given. */
static void fa3_pipeline_text(FILE *out, const sim_report *rep)
{
    for (int k = 0; k < rep->nruns; k++) {
        const sim_report_run *r = &rep->runs[k];
        const sim_gm_result *m = &r->gm;
        if (!m->fa3.steps)
            continue;
        char g[32], e[32], c[32], st[32];
        sim_format_seconds(g, sizeof g, m->fa3.G);
        sim_format_seconds(e, sizeof e, m->fa3.E);
        sim_format_seconds(c, sizeof c, m->fa3.M);
        sim_format_seconds(st, sizeof st, m->fa3.step);
        const int pipe = !rep->req.gm.no_pipeline, ws = !rep->req.gm.no_warp_spec;
        fprintf(out, "  %s's pipeline, a mean step of %lld x %lld: products G %s, softmax\n"
                "  E %s, copies M %s; pipeline %s, warp specialization %s:\n"
                "  a step costs %s, %s in the mean of its steps' own\n"
                "  (the first step of a block waits on its copies)\n", sim_algo_name(r->algo),
                (long long)r->res.plan.Br, (long long)r->res.plan.Bc, g, e, c,
                pipe ? "on" : "off", ws ? "on" : "off",
                ws && pipe ? "max(G, E, M)" : ws ? "max(G + max(0, E/2 - G/4), E, M)"
                : pipe ? "max(G/2 + max(E, G/2), M)" : "max(G + E, M)", st);
    }
}

/* GPU MODEL on the --gpu preset: each run launched as its released kernel,
 * its blocks in waves on the SMs, through the L2, in time
 * (sim_gpu_model.h). */
static void gpu_model_text(FILE *out, const sim_report *rep)
{
    const sim_gpu *g = rep->req.gpu;
    char b1[80], b2[40];
    const uint64_t l2 = rep->runs[0].gm.l2_bytes;
    if (l2 == SIM_GM_L2_INFINITE)
        snprintf(b2, sizeof b2, "unbounded");
    else
        sim_format_bytes(b2, sizeof b2, l2);
    fprintf(out, "\nGPU MODEL on %s: %d SMs, L2 %s\n", g->title, g->sms, b2);
    fprintf(out, "each loop order launched as its released kernel, in waves, through the L2\n");
    runs_header(out, rep, "  model");
    static const char *const rows[] = { "thread blocks", "resident per SM", "waves",
                                        "SMs busy", "DRAM bytes", "HBM bytes as launched",
                                        "L2 hit rate (reads)", "predicted time",
                                        "TFLOP/s", "binds" };
    for (int q = 0; q < 10; q++) {
        row_label(out, rows[q]);
        for (int k = 0; k < rep->nruns; k++) {
            const sim_gm_result *m = &rep->runs[k].gm;
            switch (q) {
            case 0: sim_format_count(b1, sizeof b1, (uint64_t)m->blocks); break;
            case 1: snprintf(b1, sizeof b1, "%d", m->occupancy); break;
            case 2: snprintf(b1, sizeof b1, "%.2f", m->waves); break;
            case 3: snprintf(b1, sizeof b1, "%d of %d", m->sms_busy, g->sms); break;
            case 4: sim_format_bytes(b1, sizeof b1, m->dram_read_bytes + m->dram_write_bytes);
                    break;
            case 5: sim_format_bytes(b1, sizeof b1, m->hbm_read_bytes + m->hbm_write_bytes);
                    break;
            case 6: snprintf(b1, sizeof b1, "%.1f%%", m->l2_hit_rate * 100); break;
            case 7: sim_format_seconds(b1, sizeof b1, m->time_s); break;
            case 8: snprintf(b1, sizeof b1, "%.1f", m->tflops); break;
            default: snprintf(b1, sizeof b1, "%s", sim_gm_bound_name(m->bound)); break;
            }
            cell(out, b1);
        }
        fputc('\n', out);
    }
    fa3_pipeline_text(out, rep);
    sim_gpu_model_assumptions(out, g);
}

/* ROOFLINE on the --gpu preset: each run's time bound from its two-level
 * HBM bytes at full bandwidth and its matmul FLOPs at the peak; the
 * non-matmul FLOPs' time at the fp32 rate beside it, not charged
 * (sim_presets.h says why). The bytes are the two-level model's, every
 * re-read from HBM, so the bound holds for a GPU without an L2; with one,
 * re-reads of K and V hit it and a kernel can be faster (FA3 at its Table 2
 * shape: 5.54 ms here, 3.54 ms measured), which the text says. */
static void roofline_text(FILE *out, const sim_report *rep)
{
    const sim_dtype dt = rep->req.sh.dtype;
    char b1[80], b2[80];
    const sim_gpu *g = rep->req.gpu;
    sim_format_count(b2, sizeof b2, (uint64_t)(g->hbm_bytes_per_s * 1e-9 + 0.5));
    fprintf(out, "\nROOFLINE on %s: HBM %s GB/s, %s %.1f TFLOP/s\n", g->title, b2,
            dt == SIM_FP32 ? "fp32" : sim_dtype_is_fp8(dt) && g->fp8_flops > 0 ? "fp8 dense"
                                                                               : "fp16/bf16 dense",
            sim_gpu_peak_flops(g, dt) * 1e-12);
    fprintf(out, "the whole GPU at peak rate and full bandwidth on the two-level count: a lower\n"
            "bound on time where every re-read reaches HBM; an L2 absorbs re-reads, so a\n"
            "kernel can beat it (GPU MODEL below: the L2's share)\n");
    runs_header(out, rep, "  estimate");
    static const char *const rows[] = { "matmul FLOPs", "non-matmul FLOPs",
                                        "HBM time, bytes/BW", "matmul time, /peak",
                                        "estimate, the larger", "binds",
                                        "FLOP per HBM byte", "non-matmul, fp32 pk" };
    for (int q = 0; q < 8; q++) {
        row_label(out, rows[q]);
        for (int k = 0; k < rep->nruns; k++) {
            const sim_roofline *rf = &rep->runs[k].roof;
            double t = q == 2 ? rf->t_memory : q == 3 ? rf->t_compute
                     : q == 7 ? rf->t_other : rf->t_estimate;
            if (q == 0 || q == 1)
                snprintf(b1, sizeof b1, "%.3g", q == 0 ? rf->flops : rf->other_flops);
            else if (q == 5)
                snprintf(b1, sizeof b1, "%s", rf->memory_bound ? "memory" : "compute");
            else if (q == 6)
                snprintf(b1, sizeof b1, "%.1f", rf->intensity);
            else
                sim_format_seconds(b1, sizeof b1, t);
            cell(out, b1);
        }
        fputc('\n', out);
    }
    fprintf(out, "  the GPU's balance: %.0f FLOP per byte; a run below it is memory-bound\n",
            rep->runs[0].roof.balance);
    fprintf(out, "  non-matmul at %.1f TFLOP/s (fp32, no tensor cores): shown, not charged\n",
            g->fp32_flops * 1e-12);
    /* FlashAttention-2's first claim against FlashAttention (section 3.1):
     * fewer non-matmul FLOPs. Forward, O_i is divided by l_i once instead
     * of rescaled and divided at every tile; backward, D_i is computed once
     * and P_ij needs no division. Each plan's B_c sets how many tiles a row
     * meets, so the claim is about one plan: FA2's closed form on FA1's
     * block sizes. The comparison names the two loop orders, as a claim
     * does. */
    const sim_report_run *f1 = find_run(rep, SIM_FA1), *f2 = find_run(rep, SIM_FA2);
    if (!f1 || !f2 || !f1->has_flops || !f2->has_flops || f1->flops.other <= 0)
        return;
    const sim_shape *s = &rep->req.sh;
    sim_run_opts run = rep->req.run;
    run.pass = f1->pass;
    run.splits = 0;
    run.group = 0;
    const sim_plan *p1 = &f1->res.plan;
    sim_plan p2;
    sim_flops same;
    if (sim_plan_make(SIM_FA2, s, &run, p1->Br, p1->Bc, SIM_PLAN_USER, &p2) != 0 ||
        sim_theory_flops(&p2, s, &same) != 0)
        return;
    const double saved = f1->flops.other - same.other;
    const sim_plan *pf2 = &f2->res.plan;
    if (pf2->Br == p1->Br && pf2->Bc == p1->Bc) {      /* the same tiles: one line */
        fprintf(out, "  non-matmul FLOPs: fa2 does %.3g fewer than fa1 (%.1f%%) on the same\n"
                "  B_r x B_c = %lld x %lld\n", saved, 100.0 * saved / f1->flops.other,
                (long long)p1->Br, (long long)p1->Bc);
        return;
    }
    fprintf(out, "  non-matmul FLOPs, fa2 against fa1: %+.3g with their own plans;\n",
            f2->flops.other - f1->flops.other);
    fprintf(out, "  %.3g fewer (%.1f%%) with fa1's B_r x B_c = %lld x %lld\n", saved,
            100.0 * saved / f1->flops.other, (long long)p1->Br, (long long)p1->Bc);
}

/* ERROR vs float64: O's, or in the backward dQ's, dK's and dV's. */
static void error_text(FILE *out, const sim_report *rep, sim_pass pass)
{
    char b1[80], b2[80];
    fputc('\n', out);
    runs_header(out, rep, "ERROR vs float64");
    static const char *const grad[3] = { "dQ", "dK", "dV" };
    for (int g = 0; g < (pass == SIM_BWD ? 3 : 1); g++) {
        const char *t = pass == SIM_BWD ? grad[g] : "O";
        for (int rel = 0; rel < 2; rel++) {        /* max |x - x_ref|, then over max |x_ref| */
            if (rel)
                snprintf(b2, sizeof b2, "  / max |%s_ref|", t);
            else
                snprintf(b2, sizeof b2, "max |%s - %s_ref|", t, t);
            row_label(out, b2);
            for (int k = 0; k < rep->nruns; k++) {
                const ref_error *e = pass == SIM_BWD ? &rep->runs[k].grad_err[g]
                                                     : &rep->runs[k].err;
                snprintf(b1, sizeof b1, "%.3e", rel ? e->max_rel : e->max_abs);
                cell(out, b1);
            }
            fputc('\n', out);
        }
    }
    if (pass == SIM_FWD && sim_dtype_is_fp8(rep->req.sh.dtype)) {   /* Table 3's measure */
        row_label(out, "rms(O - O_ref)");
        for (int k = 0; k < rep->nruns; k++) {
            snprintf(b1, sizeof b1, "%.3e", rep->runs[k].err.rmse);
            cell(out, b1);
        }
        fputc('\n', out);
    }
}

/* SRAM BUFFERS per run and phase, wrapped at 80 columns, and a note for
 * each paper plan that exceeds M. */
static void buffers_text(FILE *out, const sim_report *rep)
{
    const sim_shape *sh = &rep->req.sh;
    char b1[80], b2[80], lb[32];
    const int regs = any_registers(rep);
    if (regs)
        fprintf(out, "\nON-CHIP BUFFERS, bytes (fp32 accumulators and statistics at 4 B); "
                "[reg]: in\nregisters, the others in SRAM (shared memory)\n");
    else
        fprintf(out, "\nSRAM BUFFERS, bytes (fp32 accumulators and statistics at 4 B)\n");
    for (int k = 0; k < rep->nruns; k++) {
        const sim_plan *p = &rep->runs[k].res.plan;
        for (int ph = 1; ph <= p->nphases; ph++) {
            int col = 0, any = 0;
            for (int q = 0; q < p->nbuf; q++)
                any |= p->buf[q].phase == ph;
            if (!any)                    /* a line that does not run (unfused's mask) */
                continue;
            if (p->nphases > 1)
                col = fprintf(out, "  %s line %d:", run_label(&rep->runs[k], lb, sizeof lb), ph);
            else
                col = fprintf(out, "  %s:", run_label(&rep->runs[k], lb, sizeof lb));
            for (int q = 0; q < p->nbuf; q++) {
                const sim_buffer *b = &p->buf[q];
                if (b->phase != ph)
                    continue;
                char item[96];
                sim_format_count(b2, sizeof b2, b->bytes);
                const char *at = b->level == SIM_LEVEL_REG ? " [reg]" : "";
                if (b->cols == 1)
                    snprintf(item, sizeof item, " %s %lld = %s%s", b->name,
                             (long long)b->rows, b2, at);
                else
                    snprintf(item, sizeof item, " %s %lldx%lld = %s%s", b->name,
                             (long long)b->rows, (long long)b->cols, b2, at);
                if (col + (int)strlen(item) + 1 > 79) {
                    fprintf(out, "\n       ");
                    col = 7;
                }
                col += fprintf(out, "%s;", item);
            }
            fputc('\n', out);
        }
    }
    for (int k = 0; k < rep->nruns && regs; k++) {
        const sim_plan *p = &rep->runs[k].res.plan;
        if (!p->warps)
            continue;
        sim_format_count(b1, sizeof b1, p->sram_peak);
        sim_format_count(b2, sizeof b2, p->reg_peak);
        char b3[32];
        sim_format_count(b3, sizeof b3, p->reg_limit);
        fprintf(out, "  %s: SRAM %s B; registers %s B of %s B (%d warps, %d threads)\n",
                run_label(&rep->runs[k], lb, sizeof lb), b1, b2, b3, p->warps, 32 * p->warps);
    }
    for (int k = 0; k < rep->nruns; k++) {
        const sim_plan *p = &rep->runs[k].res.plan;
        if (!p->fits) {
            sim_format_count(b1, sizeof b1, p->sram_peak - sh->M);
            fprintf(out, "  note: %s's paper plan exceeds M by %s B (%.2f x M): line 1 "
                    "of Algorithm 1\n        sizes Q_i, K_j, V_j, O_i only; S_ij and "
                    "fp32 accumulators come on top\n",
                    sim_algo_name(p->algo), b1, (double)p->sram_peak / (double)sh->M);
        }
    }
}

/* The tables of one pass: plan, traffic, (GQA,) bounds, roofline, error,
 * SRAM buffers. rep holds that pass's runs only (section_view). */
static void section_text(FILE *out, const sim_report *rep, sim_pass pass)
{
    const int64_t H = sim_shape_H(&rep->req.sh), G = sim_shape_G(&rep->req.sh);
    set_column_width(rep);
    plan_rows(out, rep);
    note_text(out, rep, any_registers(rep) ? &NOTE_PLAN_KERNEL : &NOTE_PLAN);
    traffic_rows(out, rep);
    note_text(out, rep, sim_dtype_is_fp8(rep->req.sh.dtype) ? &NOTE_TRAFFIC_FP8 : &NOTE_TRAFFIC);
    softmax_note(out, rep);
    unfused_ops_note(out, rep);
    if (G < H && pass == SIM_FWD)
        gqa_text(out, rep);
    if (G < H && pass == SIM_BWD)
        gqa_bwd_text(out, rep);
    if (pass == SIM_FWD)
        split_text(out, rep);
    paged_text(out, rep);
    bounds_text(out, rep, pass);
    if (sim_shape_Nk(&rep->req.sh) == rep->req.sh.N)   /* else no measured / Theta */
        note_text(out, rep, &NOTE_BOUNDS);
    if (rep->req.gpu) {
        roofline_text(out, rep);
        gpu_model_text(out, rep);
    }
    if (rep->computed) {
        error_text(out, rep, pass);
        error_note(out, rep, pass);
    }
    buffers_text(out, rep);
}

/* A copy of rep with the runs of one pass, and that pass's naive bytes. */
static void section_view(const sim_report *rep, sim_pass pass, sim_report *view)
{
    *view = *rep;
    view->nruns = 0;
    for (int k = 0; k < rep->nruns; k++)
        if (rep->runs[k].pass == pass)
            view->runs[view->nruns++] = rep->runs[k];
    view->have_naive_bytes = rep->have_naive_pass[pass];
    view->naive_bytes = rep->naive_pass_bytes[pass];
}

/* FORWARD + BACKWARD: a training step's attention traffic, loop order by
 * loop order, when both passes ran. */
/* Each loop order's forward + backward bytes; both[a] == 3 when it ran both
 * passes. Returns the naive sum for the ratios, or 0 without one. */
static double step_totals(const sim_report *rep, uint64_t tot[SIM_ALGO_MAX],
                          int both[SIM_ALGO_MAX])
{
    for (int a = 0; a < sim_algo_count(); a++) {
        tot[a] = 0;
        both[a] = 0;
    }
    for (int k = 0; k < rep->nruns; k++) {
        if (rep->runs[k].splits > 1)
            continue;                       /* an alternative to fa2, not a pass of it */
        tot[rep->runs[k].algo] += total_bytes(&rep->runs[k].res.counts, rep->req.sh.dtype);
        both[rep->runs[k].algo] |= 1 << rep->runs[k].pass;
    }
    if (!rep->have_naive_pass[SIM_FWD] || !rep->have_naive_pass[SIM_BWD])
        return 0.0;
    return (double)rep->naive_pass_bytes[SIM_FWD] + (double)rep->naive_pass_bytes[SIM_BWD];
}

static void totals_text(FILE *out, const sim_report *rep)
{
    uint64_t tot[SIM_ALGO_MAX];
    int both[SIM_ALGO_MAX];
    const double naive = step_totals(rep, tot, both);
    int show[SIM_ALGO_MAX];
    for (int a = 0; a < sim_algo_count(); a++)
        show[a] = both[a] == 3;
    fputc('\n', out);
    algos_header(out, "FORWARD + BACKWARD", show);
    char b1[40];
    row_label(out, "total bytes");
    for (int a = 0; a < sim_algo_count(); a++)
        if (both[a] == 3) {
            sim_format_bytes(b1, sizeof b1, tot[a]);
            cell(out, b1);
        }
    fputc('\n', out);
    if (naive > 0) {
        row_label(out, "bytes / naive's");
        for (int a = 0; a < sim_algo_count(); a++)
            if (both[a] == 3) {
                snprintf(b1, sizeof b1, "%.4f", (double)tot[a] / naive);
                cell(out, b1);
            }
        fputc('\n', out);
    }
}

/* MODEL: with --preset, each loop order's HBM traffic in GiB (2^30 B, the
 * unit of the traffic tables above, so that the same bytes read the same)
 * for one attention layer over the whole batch, per pass, and for all the
 * model's layers (each layer's attention moves the same bytes). */
static void model_text(FILE *out, const sim_report *rep)
{
    const sim_model *m = rep->req.model;
    const sim_shape *sh = &rep->req.sh;
    fprintf(out, "\nMODEL: %s (%s)\n  one attention layer: B = %lld sequence%s (fasim's "
            "choice) x H = %lld heads,\n  N = %lld, d = %lld; the model has %lld such layers.\n"
            "  HBM traffic in GiB (2^30 bytes), as in the tables above:\n", m->title, m->source, (long long)sim_shape_B(sh),
            sim_shape_B(sh) == 1 ? "" : "s", (long long)sim_shape_H(sh), (long long)sh->N,
            (long long)sh->d, (long long)m->layers);
    double gib[SIM_PASS_COUNT + 1][SIM_ALGO_MAX] = { { 0 } };
    int ran[SIM_ALGO_MAX] = { 0 }, passes = 0;
    for (int k = 0; k < rep->nruns; k++) {
        const sim_report_run *r = &rep->runs[k];
        if (r->splits > 1)
            continue;
        const double g = (double)total_bytes(&r->res.counts, sh->dtype) / (1024.0 * 1024.0 * 1024.0);
        gib[r->pass][r->algo] += g;
        gib[SIM_PASS_COUNT][r->algo] += g;
        ran[r->algo] = 1;
        passes |= 1 << r->pass;
    }
    algos_header(out, "", ran);
    char b1[48];
    for (int row = 0; row <= SIM_PASS_COUNT + 1; row++) {
        const int q = row < SIM_PASS_COUNT ? row : SIM_PASS_COUNT;
        if (row < SIM_PASS_COUNT && !(passes & (1 << row)))
            continue;
        if (row == SIM_PASS_COUNT && passes != 3)
            continue;                    /* one pass: its row is the layer's total */
        if (row < SIM_PASS_COUNT)
            snprintf(b1, sizeof b1, "%s, one layer", row == SIM_FWD ? "forward" : "backward");
        else if (row == SIM_PASS_COUNT)
            snprintf(b1, sizeof b1, "both, one layer");
        else
            snprintf(b1, sizeof b1, "all %lld layers", (long long)m->layers);
        row_label(out, b1);
        for (int a = 0; a < sim_algo_count(); a++) {
            if (!ran[a])
                continue;
            const double v = row <= SIM_PASS_COUNT ? gib[q][a]
                                                   : gib[SIM_PASS_COUNT][a] * (double)m->layers;
            snprintf(b1, sizeof b1, "%.2f", v);
            cell(out, b1);
        }
        fputc('\n', out);
    }
    if (!m->figure || passes != 3)
        return;
    /* A paper's figure is in GB (10^9 bytes): the layer's bytes in its unit. */
    row_label(out, "both, one layer, GB");
    for (int a = 0; a < sim_algo_count(); a++)
        if (ran[a]) {
            snprintf(b1, sizeof b1, "%.2f", gib[SIM_PASS_COUNT][a] * 1.073741824);
            cell(out, b1);
        }
    fprintf(out, "\n  note: ");
    for (const char *s = m->figure; *s; s++) {
        fputc(*s, out);
        if (*s == '\n')
            fputs("        ", out);
    }
    fputc('\n', out);
}

void sim_report_text(FILE *out, const sim_report *rep)
{
    const sim_shape *sh = &rep->req.sh;
    const sim_dtype dt = sh->dtype;
    char b1[80], b2[80];

    sim_format_bytes(b1, sizeof b1, sh->M);
    sim_format_count(b2, sizeof b2, sh->M);
    char lens[64], mask[48];
    if (sim_shape_Nk(sh) != sh->N)
        snprintf(lens, sizeof lens, "N_q = %lld, N_k = %lld", (long long)sh->N,
                 (long long)sim_shape_Nk(sh));
    else
        snprintf(lens, sizeof lens, "N = %lld", (long long)sh->N);
    if (sh->window > 0)
        snprintf(mask, sizeof mask, "causal, window W = %lld", (long long)sh->window);
    else
        snprintf(mask, sizeof mask, "%s", sh->causal ? "causal" : "not causal");
    char head[160];
    const int hn = snprintf(head, sizeof head, "fasim %s  %s, d = %lld, %s, M = %s (%s B),",
                            FASIM_VERSION, lens, (long long)sh->d, sim_dtype_name(dt), b1, b2);
    fprintf(out, "%s%s%s\n", head, hn + 1 + (int)strlen(mask) > 80 ? "\n" : " ", mask);
    if (rep->req.model)
        fprintf(out, "preset %s: %s\n", rep->req.model->name, rep->req.model->title);
    const int64_t B = sim_shape_B(sh), H = sim_shape_H(sh), G = sim_shape_G(sh);
    if (B > 1 || H > 1) {
        char heads[40];
        sim_format_count(heads, sizeof heads, (uint64_t)(B * H));
        if (G < H)
            fprintf(out, "batch B = %lld, H = %lld query heads on G = %lld key/value heads:\n"
                    "counts for all %s heads\n", (long long)B, (long long)H, (long long)G,
                    heads);
        else
            fprintf(out, "batch B = %lld, H = %lld heads: counts for all %s heads\n",
                    (long long)B, (long long)H, heads);
    }
    if (rep->computed)
        fprintf(out, "compute mode: %s; output checked against the float64 oracle\n",
                rep->req.Q         ? "inputs from .npy files"
                : rep->req.outliers ? "seeded outlier inputs"
                                    : "seeded random inputs");
    else
        fprintf(out, "count-only mode: no tensor data; counts are exact\n");
    if (rep->same_tiles > 0 && pass_on(&rep->req, SIM_FWD) && pass_on(&rep->req, SIM_BWD))
        fprintf(out, "tiles: B_r = B_c = %lld for every loop order and both passes, the largest\n"
                "square of 128, 64, 32, 16 that fits M for all (real kernels use 64 and\n"
                "128); each loop order's own best plan: --plan best\n",
                (long long)rep->same_tiles);
    else if (rep->same_tiles > 0)
        fprintf(out, "tiles: B_r = B_c = %lld for every loop order, the largest square of 128,\n"
                "64, 32, 16 that fits M for all (real kernels use 64 and 128); each loop\n"
                "order's own best plan: --plan best\n", (long long)rep->same_tiles);
    else if (rep->same_tiles < 0)
        fprintf(out, "tiles: no square of 128, 64, 32 or 16 fits M for every loop order, so\n"
                "each has its own best plan (--plan best)\n");
    if (rep->req.plan_kind == SIM_PLAN_KERNEL)
        kernel_lines(out, rep);

    int passes = 0;
    for (int k = 0; k < rep->nruns; k++)
        passes |= 1 << rep->runs[k].pass;
    for (int q = 0; q < SIM_PASS_COUNT; q++) {
        if (!(passes & (1 << q)))
            continue;
        if (q == SIM_BWD)
            fprintf(out, "\n== BACKWARD PASS: dQ, dK, dV from dO (naive: FlashAttention "
                    "Algorithm 3; fa1:\n   its Algorithm 4; fa2: FlashAttention-2 Algorithm "
                    "2), recomputing from L\n   or l, m ==\n");
        else if (passes & (1 << SIM_BWD))
            fprintf(out, "\n== FORWARD PASS ==\n");
        sim_report view;
        section_view(rep, (sim_pass)q, &view);
        section_text(out, &view, (sim_pass)q);
    }
    if (passes == 3)
        totals_text(out, rep);
    if (rep->req.model)
        model_text(out, rep);
    if (rep->has_ring)
        sim_ring_text(out, &rep->ring, rep->has_ring_err ? &rep->ring_err : NULL);
    if (rep->mode_note[0]) {
        /* wrapped at 78 columns, continuation lines under the text */
        fputs("\nnote:", out);
        int col = 5;
        char word[160];
        const char *p = rep->mode_note;
        while (*p) {
            int n = 0;
            while (*p == ' ')
                p++;
            while (p[n] && p[n] != ' ' && n < (int)sizeof word - 1)
                n++;
            if (!n)
                break;
            memcpy(word, p, (size_t)n);
            word[n] = '\0';
            p += n;
            if (col + 1 + n > 78) {
                fputs("\n     ", out);
                col = 5;
            }
            col += fprintf(out, " %s", word);
        }
        fputc('\n', out);
    }
}

/* ---- JSON --------------------------------------------------------------- */

/* {"max_abs":..,"max_rel":..} as the member key. */
static void json_error(sim_json *w, const char *key, const ref_error *e)
{
    sim_json_obj(w, key);
    sim_json_num(w, "max_abs", e->max_abs);
    sim_json_num(w, "max_rel", e->max_rel);
    sim_json_num(w, "rmse", e->rmse);
    sim_json_end(w);
}

/* Per tensor touched: elements and bytes read and written, and with_ops the
 * transfers too. */
static void json_counts(sim_json *w, const char *key, const sim_counts *c, sim_dtype dt,
                        int with_ops)
{
    sim_json_obj(w, key);
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        if (!c->read_elems[t] && !c->write_elems[t])
            continue;
        uint64_t eb = (uint64_t)sim_tensor_bytes((sim_tensor)t, dt);
        sim_json_obj(w, sim_tensor_name((sim_tensor)t));
        sim_json_uint(w, "read_elems", c->read_elems[t]);
        sim_json_uint(w, "write_elems", c->write_elems[t]);
        sim_json_uint(w, "read_bytes", c->read_elems[t] * eb);
        sim_json_uint(w, "write_bytes", c->write_elems[t] * eb);
        if (with_ops) {
            sim_json_uint(w, "read_ops", c->read_ops[t]);
            sim_json_uint(w, "write_ops", c->write_ops[t]);
        }
        sim_json_end(w);
    }
    sim_json_end(w);
}

/* "config" and "bounds": what was asked, and the paper's bounds for it. */
static void json_config(sim_json *w, const sim_report *rep)
{
    const sim_shape *sh = &rep->req.sh;
    const sim_bounds *bd = &rep->bounds;
    sim_json_obj(w, "config");
    sim_json_int(w, "N", sh->N);
    sim_json_int(w, "Nk", sim_shape_Nk(sh));
    sim_json_int(w, "d", sh->d);
    sim_json_uint(w, "M_bytes", sh->M);
    sim_json_whole(w, "M_elems", bd->M_elems);
    sim_json_str(w, "dtype", sim_dtype_name(sh->dtype));
    sim_json_bool(w, "causal", sh->causal);
    sim_json_int(w, "window", sh->window);
    sim_json_int(w, "batch", sim_shape_B(sh));
    sim_json_int(w, "heads", sim_shape_H(sh));
    sim_json_int(w, "kv_heads", sim_shape_G(sh));
    sim_json_int(w, "page_size", rep->req.run.page);
    sim_json_str(w, "intermediates", sim_inter_name((sim_inter)rep->req.run.intermediates));
    sim_json_num(w, "dropout", rep->req.run.dropout);
    sim_json_str(w, "unfused_ops", sim_uf_ops_name((sim_uf_ops)rep->req.run.unfused_ops));
    sim_json_str(w, "pass", pass_on(&rep->req, SIM_BWD)
                                ? (pass_on(&rep->req, SIM_FWD) ? "both" : "bwd") : "fwd");
    sim_json_str(w, "mode", rep->computed ? "compute" : "count-only");
    if (sim_dtype_is_fp8(sh->dtype)) {
        sim_json_str(w, "fp8_scale", sim_fp8_scale_name(rep->req.run.fp8_scale));
        sim_json_bool(w, "incoherent", rep->req.run.incoherent);
    } else {
        sim_json_null(w, "fp8_scale");
        sim_json_null(w, "incoherent");
    }
    sim_json_str(w, "inputs", rep->req.Q ? "npy" : rep->req.outliers ? "outliers" : "seed");
    sim_json_uint(w, "seed", rep->req.seed);
    if (rep->req.gpu)
        sim_json_str(w, "gpu", rep->req.gpu->name);
    else
        sim_json_null(w, "gpu");
    if (sh->blocks) {                      /* --block-mask: absent without one */
        sim_json_obj(w, "block_mask");
        sim_json_int(w, "rows", sh->blocks->R);
        sim_json_int(w, "cols", sh->blocks->m.cols);
        sim_json_uint(w, "nonzero", sh->blocks->nonzero);
        sim_json_num(w, "s", sim_bmask_s(sh->blocks));
        sim_json_str(w, "pattern", sh->blocks->pattern);
        sim_json_end(w);
    }
    sim_json_end(w);
    sim_json_obj(w, "bounds");
    sim_json_num(w, "theta_standard_elems", bd->theta_standard);
    sim_json_num(w, "theta_flash_elems", bd->theta_flash);
    sim_json_num(w, "lower_bound_elems", bd->lower_bound);
    sim_json_num(w, "io_floor_elems", bd->io_floor);
    sim_json_num(w, "io_floor_bwd_elems", bd->io_floor_bwd);
    sim_json_bool(w, "in_regime", bd->in_regime);
    sim_json_bool(w, "theorems_apply", bd->in_regime && sim_shape_Nk(&rep->req.sh) == rep->req.sh.N);
    if (rep->req.sh.blocks)
        sim_json_num(w, "theta_sparse_elems", bd->theta_sparse);
    sim_json_end(w);
}

/* A run's "plan": blocks, tiles, SRAM peak and the buffers behind it. */
static void json_plan(sim_json *w, const sim_report_run *r)
{
    const sim_plan *p = &r->res.plan;
    sim_json_obj(w, "plan");
    sim_json_str(w, "kind", plan_kind_name(p->kind));
    sim_json_int(w, "Br", p->Br);
    sim_json_int(w, "Bc", p->Bc);
    sim_json_int(w, "Tr", p->Tr);
    sim_json_int(w, "Tc", p->Tc);
    sim_json_uint(w, "sram_peak_bytes", r->res.sram_peak);
    sim_json_bool(w, "fits", p->fits);
    if (p->warps) {                        /* a kernel plan: the register level */
        sim_json_int(w, "warps", p->warps);
        sim_json_uint(w, "reg_peak_bytes", r->res.reg_peak);
        sim_json_uint(w, "reg_limit_bytes", p->reg_limit);
    }
    if (sim_plan_stores_scores(p)) {
        sim_json_int(w, "softmax_passes", p->softmax_passes);
        if (sim_loop_softmax_forms(p->algo, &p->run))
            sim_json_str(w, "softmax", sim_softmax_name(p->run.softmax));
    }
    sim_json_arr(w, "buffers");
    for (int q = 0; q < p->nbuf; q++) {
        const sim_buffer *b = &p->buf[q];
        sim_json_obj(w, NULL);
        sim_json_str(w, "name", b->name);
        sim_json_int(w, "phase", b->phase);
        sim_json_int(w, "rows", b->rows);
        sim_json_int(w, "cols", b->cols);
        sim_json_int(w, "elem_bytes", b->elem_bytes);
        sim_json_uint(w, "bytes", b->bytes);
        if (p->warps)
            sim_json_str(w, "level", b->level == SIM_LEVEL_REG ? "registers" : "sram");
        sim_json_end(w);
    }
    sim_json_end(w);
    sim_json_end(w);
}

/* A run's "hbm" (what it moved) and "theory" (the closed form's count). */
static void json_traffic(sim_json *w, const sim_report *rep, const sim_report_run *r)
{
    const sim_dtype dt = rep->req.sh.dtype;
    const sim_counts *c = &r->res.counts;
    uint64_t rb = sim_counts_read_bytes(c, dt), wb = sim_counts_write_bytes(c, dt);
    uint64_t read_el = 0, write_el = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        read_el += c->read_elems[t];
        write_el += c->write_elems[t];
    }
    sim_json_obj(w, "hbm");
    sim_json_uint(w, "read_elems", read_el);
    sim_json_uint(w, "write_elems", write_el);
    sim_json_uint(w, "read_bytes", rb);
    sim_json_uint(w, "write_bytes", wb);
    sim_json_uint(w, "total_bytes", rb + wb);
    if (rep->have_naive_pass[r->pass])
        sim_json_num(w, "ratio_to_naive",
                     (double)(rb + wb) / (double)rep->naive_pass_bytes[r->pass]);
    else
        sim_json_null(w, "ratio_to_naive");
    json_counts(w, "tensors", c, dt, 1);
    sim_json_end(w);
    sim_json_obj(w, "theory");
    sim_json_uint(w, "exact_elems", sim_counts_elems(&r->theory));
    sim_json_uint(w, "exact_bytes", sim_counts_read_bytes(&r->theory, dt) +
                                        sim_counts_write_bytes(&r->theory, dt));
    sim_json_bool(w, "matches", r->theory_matches);
    json_counts(w, "tensors", &r->theory, dt, 0);
    sim_json_num(w, "theta_elems", sim_report_theta(&rep->bounds, r->algo));
    sim_json_end(w);
}

void sim_report_json_roofline(sim_json *w, const char *key, const sim_roofline *rf)
{
    sim_json_obj(w, key);
    sim_json_num(w, "flops", rf->flops);
    sim_json_num(w, "memory_s", rf->t_memory);
    sim_json_num(w, "compute_s", rf->t_compute);
    sim_json_num(w, "estimate_s", rf->t_estimate);
    sim_json_str(w, "bound", rf->memory_bound ? "memory" : "compute");
    sim_json_num(w, "intensity", rf->intensity);
    sim_json_num(w, "balance", rf->balance);
    sim_json_num(w, "nonmatmul_flops", rf->other_flops);
    sim_json_num(w, "nonmatmul_s", rf->t_other);
    sim_json_end(w);
}

/* One element of "runs". */
void sim_report_json_gpu_model(sim_json *w, const char *key, const sim_gm_result *m)
{
    sim_json_obj(w, key);
    sim_json_num(w, "time_s", m->time_s);
    sim_json_num(w, "tflops", m->tflops);
    sim_json_uint(w, "dram_read_bytes", m->dram_read_bytes);
    sim_json_uint(w, "dram_write_bytes", m->dram_write_bytes);
    sim_json_uint(w, "hbm_read_bytes", m->hbm_read_bytes);
    sim_json_uint(w, "hbm_write_bytes", m->hbm_write_bytes);
    sim_json_num(w, "l2_hit_rate", m->l2_hit_rate);
    if (m->l2_bytes == SIM_GM_L2_INFINITE)
        sim_json_null(w, "l2_bytes");
    else
        sim_json_uint(w, "l2_bytes", m->l2_bytes);
    sim_json_int(w, "blocks", m->blocks);
    sim_json_num(w, "waves", m->waves);
    sim_json_int(w, "sms_busy", m->sms_busy);
    sim_json_int(w, "occupancy", m->occupancy);
    sim_json_str(w, "bound", sim_gm_bound_name(m->bound));
    if (m->fa3.steps) {         /* FA3's pipeline: a mean step (sim_gpu_fa3.h) */
        sim_json_obj(w, "fa3_step");
        sim_json_num(w, "gemm_s", m->fa3.G);
        sim_json_num(w, "softmax_s", m->fa3.E);
        sim_json_num(w, "copy_s", m->fa3.M);
        sim_json_num(w, "step_s", m->fa3.step);
        sim_json_end(w);
    }
    /* the L2 per tensor: what the blocks read of it, and the share that hit */
    sim_json_arr(w, "tensors");
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        if (!m->read_bytes[t])
            continue;
        sim_json_obj(w, NULL);
        sim_json_str(w, "name", sim_tensor_name((sim_tensor)t));
        sim_json_uint(w, "read_bytes", m->read_bytes[t]);
        sim_json_num(w, "l2_hit_rate", (double)m->hit_bytes[t] / (double)m->read_bytes[t]);
        sim_json_end(w);
    }
    sim_json_end(w);
    sim_json_arr(w, "kernels");
    for (int k = 0; k < m->nkernels; k++) {
        const sim_gm_kernel *K = &m->kernels[k];
        sim_json_obj(w, NULL);
        sim_json_str(w, "name", K->name);
        sim_json_int(w, "blocks", K->blocks);
        sim_json_arr(w, "grid");
        for (int x = 0; x < 3; x++)
            sim_json_int(w, NULL, K->grid[x]);
        sim_json_end(w);
        sim_json_int(w, "threads", K->threads);
        sim_json_int(w, "occupancy", K->occupancy);
        sim_json_str(w, "occupancy_by", K->occupancy_by);
        sim_json_num(w, "waves", K->waves);
        sim_json_int(w, "sms_busy", K->sms_busy);
        sim_json_num(w, "start_s", K->t_start);
        sim_json_num(w, "end_s", K->t_end);
        sim_json_end(w);
    }
    sim_json_end(w);
    sim_json_end(w);
}

static void json_run(sim_json *w, const sim_report *rep, const sim_report_run *r)
{
    const sim_shape *sh = &rep->req.sh;
    const sim_counts *c = &r->res.counts;
    sim_json_obj(w, NULL);
    sim_json_str(w, "algo", sim_algo_name(r->algo));
    sim_json_str(w, "pass", sim_pass_name(r->pass));
    sim_json_int(w, "splits", r->splits > 1 ? r->splits : 1);
    json_plan(w, r);
    sim_json_uint(w, "steps", r->res.steps);
    if (r->has_flops) {
        sim_json_obj(w, "flops");
        sim_json_num(w, "matmul", r->flops.matmul);
        sim_json_num(w, "nonmatmul", r->flops.other);
        sim_json_num(w, "total", r->flops.matmul + r->flops.other);
        sim_json_end(w);
    }
    json_traffic(w, rep, r);
    if (r->has_error && r->pass == SIM_FWD) {
        json_error(w, "error", &r->err);
    } else if (r->has_error) {
        static const char *const grad[3] = { "dQ", "dK", "dV" };
        sim_json_obj(w, "error");
        for (int g = 0; g < 3; g++)
            json_error(w, grad[g], &r->grad_err[g]);
        sim_json_end(w);
    }
    if (rep->req.gpu)
        sim_report_json_roofline(w, "roofline", &r->roof);
    if (r->has_gm)
        sim_report_json_gpu_model(w, "gpu_model", &r->gm);
    if (rep->req.run.page > 0) {
        const sim_counts *f = &r->contiguous;
        sim_json_obj(w, "paged");
        sim_json_uint(w, "kv_transfers", c->read_ops[SIM_K] + c->read_ops[SIM_V]);
        sim_json_uint(w, "kv_transfers_contiguous", f->read_ops[SIM_K] + f->read_ops[SIM_V]);
        sim_json_uint(w, "table_entries_read", c->read_elems[SIM_PT]);
        sim_json_uint(w, "table_reads", c->read_ops[SIM_PT]);
        sim_json_uint(w, "total_bytes_contiguous", total_bytes(f, sh->dtype));
        sim_json_end(w);
    }
    sim_json_num(w, "seconds", r->seconds);
    sim_json_end(w);
}

/* "preset": the model's name and its bytes per layer and in all. */
static void json_preset(sim_json *w, const sim_report *rep)
{
    const sim_model *m = rep->req.model;
    uint64_t layer[SIM_ALGO_MAX];
    int ran[SIM_ALGO_MAX];
    (void)step_totals(rep, layer, ran);
    sim_json_obj(w, "preset");
    sim_json_str(w, "name", m->name);
    sim_json_str(w, "title", m->title);
    sim_json_str(w, "source", m->source);
    sim_json_int(w, "layers", m->layers);
    sim_json_arr(w, "algos");
    for (int a = 0; a < sim_algo_count(); a++) {
        if (!ran[a])
            continue;
        sim_json_obj(w, NULL);
        sim_json_str(w, "algo", sim_algo_name((sim_algo)a));
        sim_json_uint(w, "layer_bytes", layer[a]);
        sim_json_num(w, "model_bytes", (double)layer[a] * (double)m->layers);
        sim_json_end(w);
    }
    sim_json_end(w);
    sim_json_end(w);
}

/* "totals": forward plus backward, per algorithm that ran both. */
static void json_totals(sim_json *w, const sim_report *rep)
{
    uint64_t tot[SIM_ALGO_MAX];
    int both[SIM_ALGO_MAX];
    const double naive = step_totals(rep, tot, both);
    sim_json_arr(w, "totals");
    for (int a = 0; a < sim_algo_count(); a++) {
        if (both[a] != 3)
            continue;
        sim_json_obj(w, NULL);
        sim_json_str(w, "algo", sim_algo_name((sim_algo)a));
        sim_json_uint(w, "total_bytes", tot[a]);
        if (naive > 0)
            sim_json_num(w, "ratio_to_naive", (double)tot[a] / naive);
        else
            sim_json_null(w, "ratio_to_naive");
        sim_json_end(w);
    }
    sim_json_end(w);
}

/* "gqa": the K/V cache against multi-head's, and the grouped kernel's run. */
static void json_gqa(sim_json *w, const sim_report *rep)
{
    const sim_shape *sh = &rep->req.sh;
    sim_json_obj(w, "gqa");
    sim_json_uint(w, "kv_cache_bytes", kv_cache_bytes(sh, sim_shape_G(sh)));
    sim_json_uint(w, "kv_cache_bytes_mha", kv_cache_bytes(sh, sim_shape_H(sh)));
    if (rep->has_gqa) {
        const sim_report_run *g = &rep->gqa;
        sim_json_obj(w, "grouped");
        sim_json_int(w, "heads_per_block", sim_shape_H(sh) / sim_shape_G(sh));
        sim_json_int(w, "Br", g->res.plan.Br);
        sim_json_int(w, "Bc", g->res.plan.Bc);
        sim_json_uint(w, "sram_peak_bytes", g->res.sram_peak);
        sim_json_uint(w, "kv_read_elems", kv_reads(&g->res.counts));
        sim_json_uint(w, "total_bytes", total_bytes(&g->res.counts, sh->dtype));
        sim_json_bool(w, "matches", g->theory_matches);
        if (g->has_error)
            json_error(w, "error", &g->err);
        sim_json_end(w);
    } else if (rep->gqa_note[0]) {
        sim_json_str(w, "note", rep->gqa_note);
    }
    sim_json_end(w);
}

void sim_report_json_begin(sim_json *w, FILE *out)
{
    sim_json_init(w, out, SIM_JSON_COMPACT);
    sim_json_obj(w, NULL);
    sim_json_str(w, "fasim_version", FASIM_VERSION);
}

void sim_report_json(FILE *out, const sim_report *rep)
{
    const sim_shape *sh = &rep->req.sh;
    sim_json w;
    sim_report_json_begin(&w, out);
    json_config(&w, rep);
    sim_json_arr(&w, "runs");
    for (int k = 0; k < rep->nruns; k++)
        json_run(&w, rep, &rep->runs[k]);
    sim_json_end(&w);
    if (rep->computed) {
        /* Apart from runs[].seconds, which time the loop orders alone. */
        sim_json_obj(&w, "oracle");
        sim_json_num(&w, "seconds", rep->oracle_seconds);
        sim_json_end(&w);
    }
    if (rep->req.model)
        json_preset(&w, rep);
    if (rep->req.run.page > 0) {
        const int64_t pages = sim_run_pages(sh, &rep->req.run);
        const int64_t pool = sim_shape_B(sh) * sim_shape_G(sh) * pages;
        sim_json_obj(&w, "paged");
        sim_json_int(&w, "page_size", rep->req.run.page);
        sim_json_int(&w, "pages_per_head", pages);
        sim_json_int(&w, "pool_pages", pool);
        sim_json_int(&w, "table_bytes", 4 * pool);
        sim_json_uint(&w, "placement_seed", rep->req.seed);
        sim_json_end(&w);
    }
    if (pass_on(&rep->req, SIM_FWD) && pass_on(&rep->req, SIM_BWD))
        json_totals(&w, rep);
    if (sim_shape_G(sh) < sim_shape_H(sh))
        json_gqa(&w, rep);
    if (rep->has_ring)
        sim_ring_json(&w, &rep->ring, rep->has_ring_err ? &rep->ring_err : NULL);
    if (rep->mode_note[0])
        sim_json_str(&w, "note", rep->mode_note);
    sim_json_end(&w);
    fputc('\n', out);
}
