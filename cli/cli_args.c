/*
 * cli_args.c — see cli_args.h.
 */
#include "cli_args.h"
#include "sim_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
        ERR("%s %s: at most 1G is supported (on-chip memories are KiB to MiB)", opt, s);
        return -1;
    }
    return 0;
}

int cli_parse_count(const char *opt, const char *s, int64_t lo, int64_t hi,
                    int64_t *out, char *err, size_t errlen)
{
    return sim_parse_count(opt, s, lo, hi, out, err, errlen);
}

int cli_parse_shape_opt(const char *optname, const char *val, sim_shape *sh, char *err,
                        size_t errlen)
{
    if (!strcmp(optname, "--N"))
        return cli_parse_count(optname, val, 1, SIM_MAX_N, &sh->N, err, errlen);
    if (!strcmp(optname, "--d"))
        return cli_parse_count(optname, val, 1, SIM_MAX_D, &sh->d, err, errlen);
    if (!strcmp(optname, "--M"))
        return cli_parse_sram(optname, val, &sh->M, err, errlen);
    if (!strcmp(optname, "--dtype")) {
        if (sim_dtype_parse(val, &sh->dtype) == 0)
            return 0;
        ERR("--dtype %s: unknown type (fp16, bf16 or fp32)", val);
        return -1;
    }
    ERR("%s: not a problem option", optname);
    return -1;
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
        ERR("--gpu %s: unknown preset (a100, h100, h200; 'fasim --gpu list' shows them)",
            s ? s : "");
        return -1;
    }
    return 0;
}

int cli_parse_algos(const char *s, int run[SIM_ALGO_COUNT], char *err, size_t errlen)
{
    for (int a = 0; a < SIM_ALGO_COUNT; a++)
        run[a] = 0;
    if (!s || !*s) {
        ERR("--algo needs a value: naive, fa1, fa2 or all");
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
            for (int a = 0; a < SIM_ALGO_COUNT; a++)
                run[a] = 1;
            any = 1;
            continue;
        }
        sim_algo a;
        if (sim_algo_parse(tok, &a) != 0) {
            ERR("--algo %s: unknown loop order '%s' (naive, fa1, fa2 or all)", s, tok);
            return -1;
        }
        run[a] = 1;
        any = 1;
    }
    if (!any) {
        ERR("--algo %s: no loop order named", s);
        return -1;
    }
    return 0;
}

/* ---- the report's options ------------------------------------------------ */

void cli_report_usage(FILE *out)
{
    cli_usage(out, CLI_CMD_REPORT, NULL, 0);
}

int cli_parse_report(int argc, char **argv, int first, cli_report_opts *o,
                     char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    sim_request *r = &o->req;
    r->sh.N = 1024;
    r->sh.d = 64;
    r->sh.M = 96 * 1024;
    r->sh.dtype = SIM_FP16;
    for (int a = 0; a < SIM_ALGO_COUNT; a++)
        r->run_algo[a] = 1;
    r->run_pass[SIM_FWD] = 1;
    r->plan_kind = SIM_PLAN_AUTO;
    r->mode = SIM_MODE_AUTO;
    r->seed = 1;
    int compute = 0, count_only = 0;
    int64_t Nq = 0, Nk = 0;
    uint64_t given = 0;             /* the options a preset must not override */

    for (int k = first; k < argc; k++) {
        const char *val;
        char optname[32];
        int id = cli_opt_scan(argc, argv, &k, CLI_CMD_REPORT, &val, optname, sizeof optname,
                              err, errlen);
        if (id == -1)
            return -1;
        if (id == CLI_OPT_HELP) {
            o->help = 1;
            continue;
        }
        int64_t n;
        given |= UINT64_C(1) << id;
        switch (id) {
        case CLI_O_PRESET:
            if (!strcmp(val, "list")) {
                o->preset_list = 1;
            } else if (!(r->model = sim_model_find(val))) {
                int nm;
                const sim_model *all = sim_model_presets(&nm);
                char names[256] = "";
                for (int q = 0; q < nm; q++)
                    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                             q ? ", " : "", all[q].name);
                ERR("--preset %s: no such model (%s; --preset list shows them)", val, names);
                return -1;
            }
            break;
        case CLI_O_N:
        case CLI_O_D:
        case CLI_O_M:
        case CLI_O_DTYPE:
            if (cli_parse_shape_opt(optname, val, &r->sh, err, errlen))
                return -1;
            o->N_set |= id == CLI_O_N;
            o->d_set |= id == CLI_O_D;
            o->M_set |= id == CLI_O_M;
            break;
        case CLI_O_GPU:
            if (cli_parse_gpu(val, &r->gpu, &o->gpu_list, err, errlen))
                return -1;
            break;
        case CLI_O_ALGO:
            if (cli_parse_algos(val, r->run_algo, err, errlen))
                return -1;
            break;
        case CLI_O_BR:
        case CLI_O_BC:
            if (cli_parse_count(optname, val, 1, SIM_MAX_N, &n, err, errlen))
                return -1;
            if (id == CLI_O_BR)
                r->Br = n;
            else
                r->Bc = n;
            break;
        case CLI_O_PLAN:
            if (!strcmp(val, "best") || !strcmp(val, "auto")) {
                r->plan_kind = SIM_PLAN_AUTO;
            } else if (!strcmp(val, "paper")) {
                r->plan_kind = SIM_PLAN_PAPER;
            } else {
                ERR("--plan %s: unknown plan (best or paper)", val);
                return -1;
            }
            break;
        case CLI_O_CAUSAL:
            r->sh.causal = 1;
            break;
        case CLI_O_NQ:
        case CLI_O_NK:
            if (cli_parse_count(optname, val, 1, SIM_MAX_N, id == CLI_O_NQ ? &Nq : &Nk, err,
                                errlen))
                return -1;
            break;
        case CLI_O_BATCH:
        case CLI_O_HEADS:
        case CLI_O_KV_HEADS:
            if (cli_parse_count(optname, val, 1, SIM_MAX_HEADS,
                                id == CLI_O_BATCH ? &r->sh.batch
                                : id == CLI_O_HEADS ? &r->sh.heads : &r->sh.kv_heads,
                                err, errlen))
                return -1;
            break;
        case CLI_O_WINDOW:
            if (cli_parse_count(optname, val, 1, SIM_MAX_N, &r->sh.window, err, errlen))
                return -1;
            r->sh.causal = 1;
            break;
        case CLI_O_SEED: {
            uint64_t s;
            if (sim_parse_scaled(optname, val, 0, &s, err, errlen))
                return -1;
            r->seed = s;
            break;
        }
        case CLI_O_PASS:
            if (!strcmp(val, "fwd") || !strcmp(val, "both")) {
                r->run_pass[SIM_FWD] = 1;
                r->run_pass[SIM_BWD] = !strcmp(val, "both");
            } else if (!strcmp(val, "bwd")) {
                r->run_pass[SIM_FWD] = 0;
                r->run_pass[SIM_BWD] = 1;
            } else {
                ERR("--pass %s: unknown pass (fwd, bwd or both)", val);
                return -1;
            }
            break;
        case CLI_O_DO: o->do_path = val; break;
        case CLI_O_SPLITS:
            if (cli_parse_count(optname, val, 1, SIM_MAX_HEADS, &r->sh.splits, err, errlen))
                return -1;
            break;
        case CLI_O_PAGE_SIZE:
            if (cli_parse_count(optname, val, 1, SIM_MAX_N, &r->sh.page, err, errlen))
                return -1;
            break;
        case CLI_O_Q: o->q_path = val; break;
        case CLI_O_K: o->k_path = val; break;
        case CLI_O_V: o->v_path = val; break;
        case CLI_O_OUT: o->out_path = val; break;
        case CLI_O_JSON: o->json = 1; break;
        case CLI_O_COMPUTE: compute = 1; break;
        case CLI_O_COUNT_ONLY: count_only = 1; break;
        case CLI_O_MAX_MEM:
            if (cli_parse_size(optname, val, &r->max_mem, err, errlen))
                return -1;
            break;
        case CLI_O_MAX_STEPS:
            if (cli_parse_count(optname, val, 1, INT64_MAX, &n, err, errlen))
                return -1;
            r->max_steps = (uint64_t)n;
            break;
        case CLI_O_HELP: o->help = 1; break;
        case CLI_O_VERSION: o->version = 1; break;
        }
    }
    if (o->help || o->version || o->gpu_list || o->preset_list)
        return 0;
    if (r->model) {                 /* the preset, under the options given */
        const sim_model *m = r->model;
#define UNSET(opt) (!(given & (UINT64_C(1) << (opt))))
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
#undef UNSET
    }
    if (r->gpu && !o->M_set)
        r->sh.M = r->gpu->smem_per_block;
    /* N_q = --Nq or N, N_k = --Nk or N; N_k is kept only where it differs. */
    o->N_set |= Nq != 0;
    o->Nk_set = Nk != 0;
    const int64_t N = r->sh.N;
    r->sh.N = Nq ? Nq : N;
    r->sh.Nk = Nk ? Nk : N;
    if (r->sh.Nk == r->sh.N)
        r->sh.Nk = 0;
    sim_shape b = r->sh;
    b.pass = SIM_BWD;
    if (sim_shape_check(&r->sh, err, errlen) != 0 ||
        (r->run_pass[SIM_BWD] && sim_shape_check(&b, err, errlen) != 0)) {
        if (r->model) {                 /* the values may be the preset's, not given */
            const size_t n = strlen(err);
            snprintf(err + n, errlen - n, " (--preset %s set N = %lld, H = %lld, G = %lld%s; "
                     "options given override it)", r->model->name, (long long)r->model->N,
                     (long long)r->model->heads, (long long)r->model->kv_heads,
                     r->model->backward ? "" : ", the forward pass only");
        }
        return -1;
    }

    if (compute && count_only) {
        ERR("--compute and --count-only contradict each other; choose one");
        return -1;
    }
    int nfiles = !!o->q_path + !!o->k_path + !!o->v_path;
    if (nfiles != 0 && nfiles != 3) {
        ERR("--q, --k and --v go together: give all three .npy files or none");
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
    if (nfiles == 3 && count_only) {
        ERR("--count-only ignores data; drop it or drop --q/--k/--v");
        return -1;
    }
    if (r->plan_kind == SIM_PLAN_PAPER && (r->Br || r->Bc)) {
        ERR("--plan paper sets B_r and B_c itself; drop --Br/--Bc or the --plan");
        return -1;
    }
    if (r->Br || r->Bc)
        r->plan_kind = SIM_PLAN_USER;
    if (o->out_path) {
        int n_algos = 0;
        for (int a = 0; a < SIM_ALGO_COUNT; a++)
            n_algos += r->run_algo[a];
        if (n_algos != 1) {
            ERR("--out writes one output: choose one loop order with --algo");
            return -1;
        }
        if (!r->run_pass[SIM_FWD]) {
            ERR("--out writes the forward pass's O: use --pass fwd or --pass both");
            return -1;
        }
        if (count_only) {
            ERR("--out needs data; it cannot be used with --count-only");
            return -1;
        }
        compute = 1;
    }
    r->mode = compute ? SIM_MODE_COMPUTE : count_only ? SIM_MODE_COUNT : SIM_MODE_AUTO;
    return 0;
}
