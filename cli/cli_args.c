/*
 * cli_args.c — see cli_args.h.
 */
#include "cli_args.h"
#include "sim_limits.h"
#include "sim_loop.h"
#include "sim_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR(...) do { if (err && errlen) snprintf(err, errlen, __VA_ARGS__); } while (0)

int cli_parse_size(const char *opt, const char *s, uint64_t *out, char *err, size_t errlen)
{
    return sim_parse_size(opt, s, out, err, errlen);
}

int cli_parse_sram(const char *opt, const char *s, uint64_t *out, char *err, size_t errlen)
{
    if (sim_parse_size(opt, s, out, err, errlen) != 0)
        return -1;
    if (*out > SIM_MAX_M) {
        ERR("%s %s: at most 1G is supported (on-chip memories are KiB to MiB)", opt,
            sim_shown(s).s);
        return -1;
    }
    return 0;
}

int cli_parse_count(const char *opt, const char *s, int64_t lo, int64_t hi,
                    int64_t *out, char *err, size_t errlen)
{
    return sim_parse_count(opt, s, lo, hi, out, err, errlen);
}

int cli_parse_problem_opt(cli_problem *p, int id, const char *optname, const char *val,
                          char *err, size_t errlen)
{
    switch (id) {
    case CLI_O_N:
        return cli_parse_count(optname, val, 1, SIM_MAX_N, &p->sh->N, err, errlen) ? -1 : 1;
    case CLI_O_D:
        return cli_parse_count(optname, val, 1, SIM_MAX_D, &p->sh->d, err, errlen) ? -1 : 1;
    case CLI_O_M:
        return cli_parse_sram(optname, val, &p->sh->M, err, errlen) ? -1 : 1;
    case CLI_O_DTYPE:
        if (sim_dtype_parse(val, &p->sh->dtype) == 0)
            return 1;
        ERR("--dtype %s: unknown type (fp16, bf16, fp32, e4m3 or e5m2)", sim_shown(val).s);
        return -1;
    case CLI_O_CAUSAL:
        p->sh->causal = 1;
        return 1;
    case CLI_O_NQ:
    case CLI_O_NK:
        return cli_parse_count(optname, val, 1, SIM_MAX_N, id == CLI_O_NQ ? &p->Nq : &p->Nk,
                               err, errlen) ? -1 : 1;
    case CLI_O_BR:
    case CLI_O_BC:
        if (!p->Br)
            return 0;
        return cli_parse_count(optname, val, 1, p->max_block ? p->max_block : SIM_MAX_N,
                               id == CLI_O_BR ? p->Br : p->Bc, err, errlen) ? -1 : 1;
    case CLI_O_PLAN:
        if (!p->plan)
            return 0;
        if (!strcmp(val, "best") || !strcmp(val, "auto")) {
            *p->plan = SIM_PLAN_AUTO;
        } else if (!strcmp(val, "paper")) {
            *p->plan = SIM_PLAN_PAPER;
        } else if (!strcmp(val, "same") && p->plan_same) {
            *p->plan = SIM_PLAN_SAME;
        } else if (!strcmp(val, "kernel") && p->plan_same && !p->no_kernel) {
            *p->plan = SIM_PLAN_KERNEL;
        } else {
            ERR("--plan %s: unknown plan (%s)", sim_shown(val).s,
                !p->plan_same  ? "best or paper"
                : p->no_kernel ? "same, best or paper"
                               : "same, best, paper or kernel");
            return -1;
        }
        return 1;
    }
    return 0;
}

int cli_parse_gpu(const char *s, const sim_gpu **out, int *is_list, char *err, size_t errlen)
{
    *out = NULL;
    *is_list = 0;
    if (s && !strcmp(s, "list")) {
        *is_list = 1;
        return 0;
    }
    *out = sim_gpu_find(s);
    if (!*out) {
        /* the names from the preset table, so the message cannot go stale */
        char names[160];
        sim_gpu_preset_names(names, sizeof names);
        ERR("--gpu %s: unknown preset (%s; 'fasim --gpu list' shows them)", sim_shown(s).s,
            names);
        return -1;
    }
    return 0;
}

/* "naive, fa1, fa2 or all": what --algo takes, from the registry. */
static const char *algo_choices(char *buf, size_t len)
{
    sim_algo_names(buf, len, ", ");
    const size_t o = strlen(buf);
    snprintf(buf + o, len - o, " or all");
    return buf;
}

/* Whether `all` (and a preset that runs every loop order) includes a: all
 * but the opt-in ones run only when named (SIM_LOOP_NAMED_ONLY: fa3). */
static int in_all(int a)
{
    return !(sim_algo_loop((sim_algo)a)->flags & SIM_LOOP_NAMED_ONLY);
}

int cli_parse_algos(const char *s, int run[SIM_ALGO_MAX], char *err, size_t errlen)
{
    char choices[256];
    for (int a = 0; a < SIM_ALGO_MAX; a++)
        run[a] = 0;
    if (!s || !*s) {
        ERR("--algo needs a value: %s", algo_choices(choices, sizeof choices));
        return -1;
    }
    char buf[128];
    if (strlen(s) >= sizeof buf) {
        ERR("--algo: value too long");
        return -1;
    }
    strcpy(buf, s);
    int any = 0;
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        if (!strcmp(tok, "all")) {
            for (int a = 0; a < sim_algo_count(); a++)
                if (!run[a] && in_all(a))
                    run[a] = SIM_ALGO_IF_SERVED;
            any = 1;
            continue;
        }
        sim_algo a;
        if (sim_algo_parse(tok, &a) != 0) {
            ERR("--algo %s: unknown loop order '%s' (%s)", sim_shown(s).s, sim_shown(tok).s,
                algo_choices(choices, sizeof choices));
            return -1;
        }
        run[a] = 1;
        any = 1;
    }
    if (!any) {
        ERR("--algo %s: no loop order named", sim_shown(s).s);
        return -1;
    }
    return 0;
}

/* ---- the report's options ------------------------------------------------ */

void cli_report_usage(FILE *out)
{
    cli_usage(out, CLI_CMD_REPORT, NULL, 0);
}

/* The report's state while its options are parsed. */
typedef struct {
    cli_report_opts *o;
    cli_problem prob;
    int compute, count_only;
    cli_given given;           /* the options given: a preset must not override them */
} report_parse;

static void report_defaults(report_parse *p, cli_report_opts *o)
{
    memset(o, 0, sizeof *o);
    memset(p, 0, sizeof *p);
    sim_request *r = &o->req;
    r->sh.N = 1024;
    r->sh.d = 64;
    r->sh.M = 96 * 1024;
    r->sh.dtype = SIM_FP16;
    for (int a = 0; a < sim_algo_count(); a++)      /* the default set */
        r->run_algo[a] = sim_algo_in_default((sim_algo)a) ? SIM_ALGO_IF_SERVED : 0;
    r->run_pass[SIM_FWD] = 1;
    r->plan_kind = SIM_PLAN_SAME;     /* the loop orders on the same tiles */
    r->mode = SIM_MODE_AUTO;
    r->seed = 1;
    p->o = o;
    p->prob = (cli_problem){ .sh = &r->sh, .Br = &r->Br, .Bc = &r->Bc, .plan = &r->plan_kind,
                             .plan_same = 1 };
}

/* --preset NAME or list: the model, or -1 with the presets named. */
static int parse_preset(cli_report_opts *o, const char *val, char *err, size_t errlen)
{
    if (!strcmp(val, "list")) {
        o->preset_list = 1;
    } else if (!(o->req.model = sim_model_find(val))) {
        int nm;
        const sim_model *all = sim_model_presets(&nm);
        char names[256] = "";
        for (int q = 0; q < nm; q++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     q ? ", " : "", all[q].name);
        ERR("--preset %s: no such model (%s; --preset list shows them)", sim_shown(val).s,
            names);
        return -1;
    }
    return 0;
}

int cli_parse_intermediates(const char *s, int *out, char *err, size_t errlen)
{
    sim_inter x;
    if (sim_inter_parse(s, &x) != 0) {
        ERR("--intermediates %s: unknown choice (kernel or paper)", sim_shown(s).s);
        return -1;
    }
    *out = (int)x;
    return 0;
}

int cli_parse_unfused_ops(const char *s, int *out, char *err, size_t errlen)
{
    sim_uf_ops o;
    if (sim_uf_ops_parse(s, &o) != 0) {
        ERR("--unfused-ops %s: unknown list (gpt2 or fa2bench)", sim_shown(s).s);
        return -1;
    }
    *out = (int)o;
    return 0;
}

/* --pass fwd, bwd or both into run_pass. */
static int parse_pass(sim_request *r, const char *val, char *err, size_t errlen)
{
    if (!strcmp(val, "fwd") || !strcmp(val, "both")) {
        r->run_pass[SIM_FWD] = 1;
        r->run_pass[SIM_BWD] = !strcmp(val, "both");
    } else if (!strcmp(val, "bwd")) {
        r->run_pass[SIM_FWD] = 0;
        r->run_pass[SIM_BWD] = 1;
    } else {
        ERR("--pass %s: unknown pass (fwd, bwd or both)", sim_shown(val).s);
        return -1;
    }
    return 0;
}

int cli_parse_ring_opt(sim_ring_req *rq, int id, const char *optname, const char *val,
                       char *err, size_t errlen)
{
    int64_t n;
    switch (id) {
    case CLI_O_RING:
        if (cli_parse_count(optname, val, 1, SIM_RING_MAX_P, &n, err, errlen))
            return -1;
        rq->P = (int)n;
        return 1;
    case CLI_O_RING_ORDER:
        if (sim_ring_order_parse(val, &rq->order) != 0) {
            ERR("--ring-order %s: unknown order (contiguous or zigzag)", sim_shown(val).s);
            return -1;
        }
        return 1;
    case CLI_O_LINK:
        if (!(rq->link = sim_link_find(val))) {
            char names[128];
            ERR("--link %s: no such link (%s)", sim_shown(val).s,
                sim_link_names(names, sizeof names));
            return -1;
        }
        return 1;
    }
    return 0;
}

/* One of the report's own options (not a problem option). Returns 0 or -1. */
static int report_option(report_parse *p, int id, const char *optname, const char *val,
                         char *err, size_t errlen)
{
    cli_report_opts *o = p->o;
    sim_request *r = &o->req;
    int64_t n;
    switch (id) {
    case CLI_O_PRESET:
        return parse_preset(o, val, err, errlen);
    case CLI_O_GPU:
        return cli_parse_gpu(val, &r->gpu, &o->gpu_list, err, errlen);
    case CLI_O_ALGO:
        return cli_parse_algos(val, r->run_algo, err, errlen);
    case CLI_O_BATCH:
    case CLI_O_HEADS:
    case CLI_O_KV_HEADS:
        return cli_parse_count(optname, val, 1, SIM_MAX_HEADS,
                               id == CLI_O_BATCH ? &r->sh.batch
                               : id == CLI_O_HEADS ? &r->sh.heads : &r->sh.kv_heads,
                               err, errlen);
    case CLI_O_WINDOW:
        r->sh.causal = 1;
        return cli_parse_count(optname, val, 1, SIM_MAX_N, &r->sh.window, err, errlen);
    case CLI_O_BLOCK_MASK: o->block_mask = val; return 0;
    case CLI_O_SEED:                    /* 0 .. 2^63-1, as in the view and the lessons */
        if (cli_parse_count(optname, val, 0, INT64_MAX, &n, err, errlen))
            return -1;
        r->seed = (uint64_t)n;
        return 0;
    case CLI_O_PASS:
        return parse_pass(r, val, err, errlen);
    case CLI_O_SPLITS:
        if (!strcmp(val, "auto")) {
            o->splits_auto = 1;
            return 0;
        }
        o->splits_auto = 0;
        return cli_parse_count(optname, val, 1, SIM_MAX_HEADS, &r->run.splits, err, errlen);
    case CLI_O_RING:
    case CLI_O_RING_ORDER:
    case CLI_O_LINK:
        return cli_parse_ring_opt(&r->ring, id, optname, val, err, errlen) < 0 ? -1 : 0;
    case CLI_O_SOFTMAX:
        if (sim_softmax_parse(val, &r->run.softmax) != 0) {
            ERR("--softmax %s: unknown form (auto, 1pass, 2pass or 3pass)", sim_shown(val).s);
            return -1;
        }
        return 0;
    case CLI_O_PAGE_SIZE:
        return cli_parse_count(optname, val, 1, SIM_MAX_N, &r->run.page, err, errlen);
    case CLI_O_INTERMEDIATES:
        return cli_parse_intermediates(val, &r->run.intermediates, err, errlen);
    case CLI_O_DROPOUT:
        if (sim_parse_real(val, &r->run.dropout) != 0 || !(r->run.dropout >= 0.0) ||
            !(r->run.dropout < 1.0)) {
            ERR("--dropout %s: a probability in [0, 1) (0.1 drops one score in ten)",
                sim_shown(val).s);
            return -1;
        }
        return 0;
    case CLI_O_UNFUSED_OPS:
        return cli_parse_unfused_ops(val, &r->run.unfused_ops, err, errlen);
    case CLI_O_FP8_SCALE:
        if (sim_fp8_scale_parse(val, &r->run.fp8_scale) != 0) {
            ERR("--fp8-scale %s: unknown scaling (tensor or block)", sim_shown(val).s);
            return -1;
        }
        return 0;
    case CLI_O_INCOHERENT:
        if (strcmp(val, "on") && strcmp(val, "off")) {
            ERR("--incoherent %s: on or off", sim_shown(val).s);
            return -1;
        }
        r->run.incoherent = !strcmp(val, "on");
        return 0;
    case CLI_O_INPUTS:
        if (strcmp(val, "bell") && strcmp(val, "outliers")) {
            ERR("--inputs %s: unknown kind (bell or outliers)", sim_shown(val).s);
            return -1;
        }
        r->outliers = !strcmp(val, "outliers");
        return 0;
    case CLI_O_MAX_MEM:
        return cli_parse_size(optname, val, &r->max_mem, err, errlen);
    case CLI_O_L2:
        /* 0 (no L2: the two-level counts) and "inf" (each tile from DRAM
         * once) are the model's two limits, beside any size. */
        r->gm.l2_set = 1;
        if (!strcmp(val, "0")) {
            r->gm.l2_bytes = 0;
            return 0;
        }
        if (!strcmp(val, "inf")) {
            r->gm.l2_bytes = SIM_GM_L2_INFINITE;
            return 0;
        }
        if (cli_parse_size(optname, val, &r->gm.l2_bytes, err, errlen) != 0) {
            ERR("--l2 %s: a size in bytes (40M, 50MiB), 0 (no L2) or inf (unbounded)",
                sim_shown(val).s);
            return -1;
        }
        return 0;
    case CLI_O_PIPELINE:
    case CLI_O_WARP_SPEC:
        if (strcmp(val, "on") && strcmp(val, "off")) {
            ERR("%s %s: on or off", optname, sim_shown(val).s);
            return -1;
        }
        *(id == CLI_O_PIPELINE ? &r->gm.no_pipeline : &r->gm.no_warp_spec) = !strcmp(val, "off");
        return 0;
    case CLI_O_TRACE: o->trace_path = val; return 0;
    case CLI_O_TIMELINE: o->timeline_path = val; return 0;
    case CLI_O_JOBS:
        if (cli_parse_count(optname, val, 1, SIM_MAX_THREADS, &n, err, errlen))
            return -1;
        o->jobs = (int)n;
        return 0;
    case CLI_O_MAX_STEPS:
        if (cli_parse_count(optname, val, 1, INT64_MAX, &n, err, errlen))
            return -1;
        r->max_steps = (uint64_t)n;
        return 0;
    case CLI_O_DO: o->do_path = val; return 0;
    case CLI_O_Q: o->q_path = val; return 0;
    case CLI_O_K: o->k_path = val; return 0;
    case CLI_O_V: o->v_path = val; return 0;
    case CLI_O_OUT: o->out_path = val; return 0;
    case CLI_O_JSON: o->json = 1; return 0;
    case CLI_O_EXPLAIN: r->explain = 1; return 0;
    case CLI_O_COMPUTE: p->compute = 1; return 0;
    case CLI_O_COUNT_ONLY: p->count_only = 1; return 0;
    case CLI_O_HELP: o->help = 1; return 0;
    case CLI_O_VERSION: o->version = 1; return 0;
    }
    return 0;
}

/* The preset's fields whose options were not given. */
static void apply_preset(sim_request *r, const cli_given *given)
{
    const sim_model *m = r->model;
#define UNSET(opt) (!cli_given_has(given, (opt)))
    if (UNSET(CLI_O_N))                 /* --Nq, --Nk then change one side */
        r->sh.N = m->N;
    if (UNSET(CLI_O_D))
        r->sh.d = m->d;
    if (UNSET(CLI_O_DTYPE))
        r->sh.dtype = SIM_FP16;
    if (UNSET(CLI_O_HEADS))
        r->sh.heads = m->heads;
    if (UNSET(CLI_O_KV_HEADS))          /* --heads alone: one K, V head per query head */
        r->sh.kv_heads = UNSET(CLI_O_HEADS) ? m->kv_heads : 0;
    if (UNSET(CLI_O_BATCH))
        r->sh.batch = m->batch;
    if (UNSET(CLI_O_WINDOW))
        r->sh.window = m->window;
    r->sh.causal |= m->causal || r->sh.window > 0;   /* --causal only turns it on */
    if (UNSET(CLI_O_PASS))
        r->run_pass[SIM_BWD] = m->backward;
    if (UNSET(CLI_O_ALGO) && m->every_algo)   /* the opt-in baselines too, not fa3 */
        for (int a = 0; a < sim_algo_count(); a++)
            r->run_algo[a] = in_all(a) ? SIM_ALGO_IF_SERVED : 0;
#undef UNSET
}

/* N_q, N_k and M settled, and the shape checked for each pass run. */
static int report_shape(report_parse *p, char *err, size_t errlen)
{
    cli_report_opts *o = p->o;
    sim_request *r = &o->req;
    if (r->model)
        apply_preset(r, &p->given);
    if (r->gpu && !o->M_set)
        r->sh.M = r->gpu->smem_per_block;
    /* N_q = --Nq or N, N_k = --Nk or N; N_k is kept only where it differs. */
    const int64_t Nq = p->prob.Nq, Nk = p->prob.Nk;
    o->N_set |= Nq != 0;
    o->Nk_set = Nk != 0;
    const int64_t N = r->sh.N;
    r->sh.N = Nq ? Nq : N;
    r->sh.Nk = Nk ? Nk : N;
    if (r->sh.Nk == r->sh.N)
        r->sh.Nk = 0;
    sim_run_opts b = r->run;
    b.pass = SIM_BWD;
    if (sim_check(&r->sh, &r->run, err, errlen) == 0 &&
        (!r->run_pass[SIM_BWD] || sim_check(&r->sh, &b, err, errlen) == 0))
        return 0;
    if (r->model) {                 /* the values may be the preset's, not given */
        const size_t n = strlen(err);
        snprintf(err + n, errlen - n, " (--preset %s set N = %lld, H = %lld, G = %lld%s; "
                 "options given override it)", r->model->name, (long long)r->model->N,
                 (long long)r->model->heads, (long long)r->model->kv_heads,
                 r->model->backward ? "" : ", the forward pass only");
    }
    return -1;
}

int cli_check_data_options(int compute, int count_only, const char *q, const char *k,
                           const char *v, char *err, size_t errlen)
{
    if (compute && count_only) {
        ERR("--compute and --count-only contradict each other; choose one");
        return -1;
    }
    const int nfiles = !!q + !!k + !!v;
    if (nfiles != 0 && nfiles != 3) {
        ERR("--q, --k and --v go together: give all three .npy files or none");
        return -1;
    }
    return nfiles;
}

int cli_check_plan_options(int nfiles, int count_only, sim_plan_kind *kind, int64_t Br,
                           int64_t Bc, char *err, size_t errlen)
{
    if (nfiles == 3 && count_only) {
        ERR("--count-only ignores data; drop it or drop --q/--k/--v");
        return -1;
    }
    if (*kind == SIM_PLAN_SAME && (Br || Bc))
        *kind = SIM_PLAN_USER;       /* the default gives way to sizes given */
    if (*kind == SIM_PLAN_PAPER && (Br || Bc)) {
        ERR("--plan paper sets B_r and B_c itself; drop --Br/--Bc or the --plan");
        return -1;
    }
    if ((Br || Bc) && *kind != SIM_PLAN_KERNEL)
        *kind = SIM_PLAN_USER;       /* a kernel plan keeps its warps and registers */
    return 0;
}

/* A softmax form named needs a loop order and pass that has forms (naive's
 * forward); the FlashAttention loop orders have their own online softmax,
 * the unfused baseline the framework's softmax kernels. */
static int softmax_served(const sim_request *r, char *err, size_t errlen)
{
    if (r->run.softmax == SIM_SOFTMAX_AUTO)
        return 0;
    for (int q = 0; q < SIM_PASS_COUNT; q++) {
        sim_run_opts run = r->run;
        run.pass = (sim_pass)q;
        const int on = r->run_pass[q] || (q == SIM_FWD && !r->run_pass[SIM_BWD]);
        for (int a = 0; a < sim_algo_count(); a++)
            if (on && r->run_algo[a] && sim_loop_softmax_forms((sim_algo)a, &run))
                return 0;
    }
    ERR("--softmax %s names a form of standard attention's forward softmax: run naive's "
        "forward pass (--algo naive, --pass fwd or both); fa1 and fa2 have their own online "
        "softmax, unfused the framework's kernels",
        sim_softmax_name(r->run.softmax));
    return -1;
}

/* --ring splits FA2's forward pass across devices: each round is one FA2
 * run, merged by its logsumexp L. Without --algo it runs fa2 alone; what
 * it cannot honour is refused, each with its reason. */
static int ring_combinations(report_parse *p, char *err, size_t errlen)
{
    sim_request *r = &p->o->req;
    if (!r->ring.P) {
        if (cli_given_has(&p->given, CLI_O_RING_ORDER) || cli_given_has(&p->given, CLI_O_LINK)) {
            ERR("--%s goes with --ring P", cli_given_has(&p->given, CLI_O_LINK) ? "link"
                                                                              : "ring-order");
            return -1;
        }
        return 0;
    }
    if (cli_given_has(&p->given, CLI_O_ALGO)) {
        for (int a = 0; a < sim_algo_count(); a++)
            if (r->run_algo[a] && a != SIM_FA2) {
                ERR("--ring runs fa2 on each device (each round one FA2 run, the partials "
                    "merged by their logsumexp L); --algo %s is not a ring here: use --algo "
                    "fa2 or drop --algo", sim_algo_name((sim_algo)a));
                return -1;
            }
    } else {
        for (int a = 0; a < sim_algo_count(); a++)
            r->run_algo[a] = a == SIM_FA2;
    }
    const char *no = r->run_pass[SIM_BWD] ? "--pass bwd or both (the ring's backward is "
                                            "not modelled)"
                     : r->run.splits || p->o->splits_auto ? "--splits (a ring already splits "
                                                             "the keys, across devices)"
                     : r->run.page ? "--page-size (a device's K, V block is contiguous)"
                     : r->plan_kind == SIM_PLAN_KERNEL ? "--plan kernel (the rounds are "
                                                         "planned as the fa2 run's tiles)"
                     : sim_dtype_is_fp8(r->sh.dtype) ? "an fp8 dtype (each device would "
                                                       "scale its own block)"
                     : p->o->block_mask ? "--block-mask (the rounds are dense blocks; a "
                                          "mask across devices is not modelled)"
                     : NULL;
    if (no) {
        ERR("--ring cannot be combined with %s", no);
        return -1;
    }
    return sim_ring_check(&r->sh, &r->ring, err, errlen);
}

/* Whether a loop order the request runs carries flag (SIM_LOOP_*). */
static int runs_flagged(const sim_request *r, unsigned flag)
{
    for (int a = 0; a < sim_algo_count(); a++)
        if (r->run_algo[a] && (sim_algo_loop((sim_algo)a)->flags & flag))
            return 1;
    return 0;
}

/* Options that contradict each other, and the mode. */
static int report_combinations(report_parse *p, char *err, size_t errlen)
{
    cli_report_opts *o = p->o;
    sim_request *r = &o->req;
    const int nfiles = cli_check_data_options(p->compute, p->count_only, o->q_path, o->k_path,
                                              o->v_path, err, errlen);
    if (nfiles < 0)
        return -1;
    if (r->run.dropout > 0.0 && !runs_flagged(r, SIM_LOOP_DROPOUT)) {
        ERR("--dropout changes the counts of unfused alone (FA1 and FA2 regenerate the "
            "mask in the backward; naive, Algorithm 0, has none): add --algo unfused or "
            "--algo all");
        return -1;
    }
    if (cli_given_has(&p->given, CLI_O_UNFUSED_OPS) && !runs_flagged(r, SIM_LOOP_FRAMEWORK)) {
        ERR("--unfused-ops chooses the operations of unfused alone: add --algo unfused or "
            "--algo all");
        return -1;
    }
    if (o->splits_auto) {
        /* FlashAttention-2's own choice for the --gpu's SMs (the A100's
         * without one, as --plan kernel); 1 leaves split-KV out, said so. */
        const sim_gpu *g = r->gpu ? r->gpu : sim_gpu_find("a100");
        r->run.splits = sim_kernel_splits_auto(&r->sh, g->sms);
        const long long qblocks = (long long)(sim_shape_B(&r->sh) * sim_shape_H(&r->sh) *
                                              ((r->sh.N + 63) / 64));
        if (r->run.splits == 1)
            fprintf(stderr, "fasim: note: --splits auto: 1 on %s (the B H ceil(N/64) = %lld "
                    "query blocks fill its SMs): no split-KV run\n", g->name, qblocks);
        else
            fprintf(stderr, "fasim: note: --splits auto: %lld splits, FlashAttention-2's "
                    "choice for the %d SMs of %s%s (%lld query blocks alone would leave "
                    "SMs idle)\n", (long long)r->run.splits, g->sms, g->name,
                    r->gpu ? "" : ", as no --gpu was given", qblocks);
    }
    if (o->timeline_path && strcmp(o->timeline_path, "-") != 0) {
        const size_t n = strlen(o->timeline_path);
        if (n < 4 || strcmp(o->timeline_path + n - 4, ".svg") != 0) {
            ERR("--timeline %s: the picture is SVG: give a name ending in .svg, or - for the "
                "terminal", sim_shown(o->timeline_path).s);
            return -1;
        }
    }
    if (cli_given_has(&p->given, CLI_O_PIPELINE) || cli_given_has(&p->given, CLI_O_WARP_SPEC)) {
        const char *sw = cli_given_has(&p->given, CLI_O_PIPELINE) ? "pipeline"
                                                                 : "warp-specialization";
        int fa3 = 0, others = 0;
        for (int a = 0; a < sim_algo_count(); a++) {
            fa3 += r->run_algo[a] && sim_algo_loop((sim_algo)a)->wgmma;
            others += r->run_algo[a] && !sim_algo_loop((sim_algo)a)->wgmma;
        }
        if (!fa3 || others) {
            ERR("--%s switches an overlap of FlashAttention-3's pipeline: use it with --algo "
                "fa3 alone", sw);
            return -1;
        }
        if (!r->gpu) {
            ERR("--%s is the GPU model's (FA3's pipeline in time): add --gpu h100, h100-pcie "
                "or h200", sw);
            return -1;
        }
    }
    if ((r->gm.l2_set || o->trace_path || o->timeline_path) && !r->gpu) {
        ERR("--%s is the GPU model's: add --gpu NAME ('fasim --gpu list' prints them)",
            o->trace_path ? "trace" : o->timeline_path ? "timeline" : "l2");
        return -1;
    }
    /* an fp8 option with another dtype does nothing: said, even at its default */
    if ((cli_given_has(&p->given, CLI_O_FP8_SCALE) || cli_given_has(&p->given, CLI_O_INCOHERENT)) &&
        !sim_dtype_is_fp8(r->sh.dtype)) {
        ERR("%s applies to an fp8 dtype only: add --dtype e4m3 or e5m2",
            cli_given_has(&p->given, CLI_O_FP8_SCALE) ? "--fp8-scale" : "--incoherent");
        return -1;
    }
    if (nfiles == 3 && cli_given_has(&p->given, CLI_O_INPUTS)) {
        ERR("--inputs draws seeded inputs, and --q, --k, --v give them: choose one");
        return -1;
    }
    if (nfiles == 3 && r->model) {
        ERR("--preset sets the shape, and so do --q, --k and --v: choose one");
        return -1;
    }
    if (o->do_path && nfiles != 3) {
        ERR("--dO goes with --q, --k and --v: the gradient of given inputs");
        return -1;
    }
    if (o->do_path && !r->run_pass[SIM_BWD]) {
        ERR("--dO is the backward pass's input: add --pass bwd or --pass both");
        return -1;
    }
    if (cli_check_plan_options(nfiles, p->count_only, &r->plan_kind, r->Br, r->Bc, err,
                               errlen) != 0)
        return -1;
    if (softmax_served(r, err, errlen) != 0)
        return -1;
    if (ring_combinations(p, err, errlen) != 0)
        return -1;
    if (o->out_path) {
        int n_algos = 0;
        for (int a = 0; a < sim_algo_count(); a++)
            n_algos += r->run_algo[a];
        if (n_algos != 1) {
            ERR("--out writes one output: choose one loop order with --algo");
            return -1;
        }
        if (!r->run_pass[SIM_FWD]) {
            ERR("--out writes the forward pass's O: use --pass fwd or --pass both");
            return -1;
        }
        if (p->count_only) {
            ERR("--out needs data; it cannot be used with --count-only");
            return -1;
        }
        p->compute = 1;
    }
    r->mode = p->compute ? SIM_MODE_COMPUTE : p->count_only ? SIM_MODE_COUNT : SIM_MODE_AUTO;
    return 0;
}

/* One option of the report: a problem option or one of its own. */
static int report_each(void *ctx, int id, const char *optname, const char *val, char *err,
                       size_t errlen)
{
    report_parse *p = ctx;
    cli_report_opts *o = p->o;
    cli_given_set(&p->given, id);
    int rc = cli_parse_problem_opt(&p->prob, id, optname, val, err, errlen);
    if (rc == 0)
        rc = report_option(p, id, optname, val, err, errlen);
    o->N_set |= id == CLI_O_N;
    o->d_set |= id == CLI_O_D;
    o->M_set |= id == CLI_O_M;
    return rc < 0 ? -1 : 0;
}

int cli_parse_report(int argc, char **argv, int first, cli_report_opts *o,
                     char *err, size_t errlen)
{
    report_parse p;
    report_defaults(&p, o);
    if (cli_parse_each(argc, argv, first, CLI_CMD_REPORT, &o->help, report_each, &p, err,
                       errlen) != 0)
        return -1;
    if (o->help || o->version || o->gpu_list || o->preset_list)
        return 0;
    if (report_shape(&p, err, errlen) != 0)
        return -1;
    return report_combinations(&p, err, errlen);
}
