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

int cli_opt_scan(int argc, char **argv, int *k, const cli_opt *opts, int nopts,
                 const char *cmd, const char *const *foreign, int nforeign,
                 const char *owner, const char **val, char *optname, size_t optlen,
                 char *err, size_t errlen)
{
    const char *arg = argv[*k];
    *val = NULL;
    if (!strcmp(arg, "-h"))
        return CLI_OPT_HELP;
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
        ERR("unexpected argument '%s'; see '%s --help'", arg, cmd);
        return -1;
    }
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
    int idx = -1;
    for (int q = 0; q < nopts; q++)
        if (strlen(opts[q].name) == nlen && !strncmp(opts[q].name, name, nlen))
            idx = q;
    if (idx < 0) {
        for (int q = 0; q < nforeign; q++)
            if (strlen(foreign[q]) == nlen && !strncmp(foreign[q], name, nlen)) {
                ERR("--%s is not an option of '%s' but an option of %s", foreign[q], cmd,
                    owner);
                return -1;
            }
        for (int q = 0; q < nopts; q++)
            if (strlen(opts[q].name) == nlen && !strncasecmp(opts[q].name, name, nlen)) {
                ERR("unknown option '--%.*s'; did you mean '--%s'?", (int)nlen, name,
                    opts[q].name);
                return -1;
            }
        ERR("unknown option '--%.*s'; see '%s --help'", (int)nlen, name, cmd);
        return -1;
    }
    snprintf(optname, optlen, "--%s", opts[idx].name);
    if (opts[idx].has_arg) {
        if (eq) {
            *val = eq + 1;
        } else if (*k + 1 < argc) {
            *val = argv[++*k];
        } else {
            ERR("%s needs a value; see '%s --help'", optname, cmd);
            return -1;
        }
    } else if (eq) {
        ERR("%s takes no value", optname);
        return -1;
    }
    return opts[idx].id;
}

/* ---- the report's options ------------------------------------------------ */

enum {
    O_N, O_D, O_M, O_DTYPE, O_ALGO, O_BR, O_BC, O_PLAN, O_CAUSAL, O_SEED,
    O_Q, O_K, O_V, O_OUT, O_JSON, O_COMPUTE, O_COUNT_ONLY, O_MAX_MEM,
    O_MAX_STEPS, O_GPU, O_HELP, O_VERSION, O_NQ, O_NK, O_WINDOW, O_BATCH, O_HEADS,
    O_KV_HEADS, O_PASS, O_DO, O_SPLITS, O_PAGE, O_PRESET, O_COUNT_
};
_Static_assert(O_COUNT_ <= 64, "the options given are kept in 64 bits");

static const cli_opt OPTS[] = {
    { "N", O_N, 1 },           { "d", O_D, 1 },          { "M", O_M, 1 },
    { "dtype", O_DTYPE, 1 },   { "algo", O_ALGO, 1 },    { "Br", O_BR, 1 },
    { "Bc", O_BC, 1 },         { "plan", O_PLAN, 1 },    { "causal", O_CAUSAL, 0 },
    { "seed", O_SEED, 1 },     { "q", O_Q, 1 },          { "k", O_K, 1 },
    { "v", O_V, 1 },           { "out", O_OUT, 1 },      { "json", O_JSON, 0 },
    { "compute", O_COMPUTE, 0 }, { "count-only", O_COUNT_ONLY, 0 },
    { "max-mem", O_MAX_MEM, 1 }, { "max-steps", O_MAX_STEPS, 1 },
    { "gpu", O_GPU, 1 },
    { "help", O_HELP, 0 },     { "version", O_VERSION, 0 },
    { "Nq", O_NQ, 1 },         { "Nk", O_NK, 1 },        { "window", O_WINDOW, 1 },
    { "batch", O_BATCH, 1 },   { "heads", O_HEADS, 1 },  { "kv-heads", O_KV_HEADS, 1 },
    { "pass", O_PASS, 1 },     { "dO", O_DO, 1 },        { "splits", O_SPLITS, 1 },
    { "page-size", O_PAGE, 1 }, { "preset", O_PRESET, 1 },
};
#define NOPTS (int)(sizeof OPTS / sizeof OPTS[0])

void cli_report_usage(FILE *out)
{
    fprintf(out,
"usage: fasim [options]            the report (this page)\n"
"       fasim view [options]       one run, step by step (terminal or --sdl)\n"
"       fasim lesson [NAME]        the lessons, interactive or --script\n"
"       fasim sweep --vary P=A..B  traffic over a range, fitted exponents, plots\n"
"       fasim claims [FILE]        the source articles' claims, or yours, checked\n"
"       fasim explore              change N, d, M, blocks with keys; all updates\n"
"       fasim gpu [--backend cpu]  the CUDA kernels (or CPU path) beside the sim\n"
"       fasim COMMAND --help       that command's options\n"
"\n"
"Simulate standard attention, FlashAttention-1 and FlashAttention-2 on an\n"
"HBM/SRAM hierarchy and report every transfer beside the closed-form counts,\n"
"the bounds of the papers, and (in compute mode) the error against a float64\n"
"oracle. Example: fasim --N 1024 --M 96K\n"
"\n"
"problem\n"
"  --N N            sequence length (default 1024; 64K = 65536)\n"
"  --d D            head dimension (default 64)\n"
"  --M BYTES        SRAM per thread block in bytes: 98304, 96K, 96KiB, 1.5MiB\n"
"                   (default 96K). The papers' M counts elements; fasim\n"
"                   converts (M / dtype bytes) where it quotes them\n"
"  --dtype T        fp16 (default), bf16 or fp32: Q, K, V, O, S, P in HBM;\n"
"                   m, l, L and on-chip accumulators are fp32\n"
"  --Nq N, --Nk N   query and key/value lengths when they differ (default\n"
"                   both N; decoding: --Nq 1 --Nk 4096). With --causal the\n"
"                   queries are the last N_q positions, so N_q <= N_k\n"
"  --causal         causal mask: fully masked blocks skipped by FA1 and FA2\n"
"  --window W       sliding window (implies --causal): each query sees the W\n"
"                   keys before it, itself included; blocks outside skipped\n"
"  --batch B        sequences in the batch (default 1); counts are for all\n"
"  --heads H        query heads per sequence (default 1)     B H heads\n"
"  --kv-heads G     key/value heads, G divides H (default H): GQA, MQA at G = 1;\n"
"                   the report adds FA2 with a group's H/G heads in one block\n"
"  --gpu NAME       a100, h100 or h200: M = the shared memory one thread block\n"
"                   can use (unless --M is given), and a roofline estimate per\n"
"                   loop order; 'fasim --gpu list' prints the presets\n"
"\n"
"what to run\n"
"  --algo LIST      naive, fa1, fa2, or all (default); comma lists work\n"
"  --pass P         fwd (default), bwd or both: the backward pass computes dQ,\n"
"                   dK, dV from dO (naive: Algorithm 3, fa1: Algorithm 4 of\n"
"                   FlashAttention; fa2: Algorithm 2 of FlashAttention-2)\n"
"  --splits S       split-KV decoding: fa2 once more with the key blocks in S\n"
"                   splits, partials (O~, m, l) to HBM and a merge; S <= T_c\n"
"  --preset NAME    a real model's attention layer (list: the presets): N, d,\n"
"                   H, G, batch, window, causal, fp16, passes; options given\n"
"                   beside it override it; adds the traffic in GB per layer\n"
"                   and for all layers\n"
"  --page-size P    paged KV: K and V in pages of P <= N_k rows placed by a page\n"
"                   table (seeded by --seed); counts the table's reads and the\n"
"                   tiles that span pages, against contiguous K, V\n"
"  --Br B, --Bc B   block sizes; one of them alone pins it and picks the other\n"
"  --plan KIND      best (default): the fewest HBM bytes that fit M;\n"
"                   paper: Algorithm 1 line 1, B_c = ceil(M/4d), B_r =\n"
"                   min(B_c, d) with M in elements (may exceed M; shown)\n"
"  --compute        move real data and check the output (default when it takes\n"
"                   about a second or less)\n"
"  --count-only     count transfers only (no tensor data; any N)\n"
"  --seed S         seed of the random inputs (default 1)\n"
"  --q F --k F --v F  inputs as .npy, shape (N, d), float32 or float64; N and d\n"
"                   then come from the files (implies compute mode)\n"
"  --dO F           the backward's output gradient as .npy, Q's shape (with\n"
"                   --q --k --v; default: seeded)\n"
"\n"
"output\n"
"  --json           one JSON object on stdout (keys in README.md)\n"
"  --out F          write O as float32 .npy (one --algo; implies --compute)\n"
"\n"
"limits (bad input is refused before anything runs)\n"
"  --max-mem BYTES  compute-mode memory limit (default 4G)\n"
"  --max-steps N    tile-step limit of one run (default 8589934592 = 2^33:\n"
"                   measured, 30 s of count-only work for naive or FA2 and\n"
"                   90 s for FA1, whose steps move more tensors)\n"
"  N <= 2^40, d <= 65536, M <= 1G, B, H, G <= 65536; counts must fit in 64 bits\n"
"\n"
"  --help, --version\n"
"\n"
"exit status: 0 success, 2 bad usage, 1 other failures (bad .npy data, I/O)\n");
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
        int id = cli_opt_scan(argc, argv, &k, OPTS, NOPTS, "fasim", NULL, 0, NULL, &val,
                              optname, sizeof optname, err, errlen);
        if (id == -1)
            return -1;
        if (id == CLI_OPT_HELP) {
            o->help = 1;
            continue;
        }
        int64_t n;
        given |= UINT64_C(1) << id;
        switch (id) {
        case O_PRESET:
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
        case O_N:
        case O_D:
        case O_M:
        case O_DTYPE:
            if (cli_parse_shape_opt(optname, val, &r->sh, err, errlen))
                return -1;
            o->N_set |= id == O_N;
            o->d_set |= id == O_D;
            o->M_set |= id == O_M;
            break;
        case O_GPU:
            if (cli_parse_gpu(val, &r->gpu, &o->gpu_list, err, errlen))
                return -1;
            break;
        case O_ALGO:
            if (cli_parse_algos(val, r->run_algo, err, errlen))
                return -1;
            break;
        case O_BR:
        case O_BC:
            if (cli_parse_count(optname, val, 1, SIM_MAX_N, &n, err, errlen))
                return -1;
            if (id == O_BR)
                r->Br = n;
            else
                r->Bc = n;
            break;
        case O_PLAN:
            if (!strcmp(val, "best") || !strcmp(val, "auto")) {
                r->plan_kind = SIM_PLAN_AUTO;
            } else if (!strcmp(val, "paper")) {
                r->plan_kind = SIM_PLAN_PAPER;
            } else {
                ERR("--plan %s: unknown plan (best or paper)", val);
                return -1;
            }
            break;
        case O_CAUSAL:
            r->sh.causal = 1;
            break;
        case O_NQ:
        case O_NK:
            if (cli_parse_count(optname, val, 1, SIM_MAX_N, id == O_NQ ? &Nq : &Nk, err,
                                errlen))
                return -1;
            break;
        case O_BATCH:
        case O_HEADS:
        case O_KV_HEADS:
            if (cli_parse_count(optname, val, 1, SIM_MAX_HEADS,
                                id == O_BATCH ? &r->sh.batch
                                : id == O_HEADS ? &r->sh.heads : &r->sh.kv_heads,
                                err, errlen))
                return -1;
            break;
        case O_WINDOW:
            if (cli_parse_count(optname, val, 1, SIM_MAX_N, &r->sh.window, err, errlen))
                return -1;
            r->sh.causal = 1;
            break;
        case O_SEED: {
            uint64_t s;
            if (sim_parse_scaled(optname, val, 0, &s, err, errlen))
                return -1;
            r->seed = s;
            break;
        }
        case O_PASS:
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
        case O_DO: o->do_path = val; break;
        case O_SPLITS:
            if (cli_parse_count(optname, val, 1, SIM_MAX_HEADS, &r->sh.splits, err, errlen))
                return -1;
            break;
        case O_PAGE:
            if (cli_parse_count(optname, val, 1, SIM_MAX_N, &r->sh.page, err, errlen))
                return -1;
            break;
        case O_Q: o->q_path = val; break;
        case O_K: o->k_path = val; break;
        case O_V: o->v_path = val; break;
        case O_OUT: o->out_path = val; break;
        case O_JSON: o->json = 1; break;
        case O_COMPUTE: compute = 1; break;
        case O_COUNT_ONLY: count_only = 1; break;
        case O_MAX_MEM:
            if (cli_parse_size(optname, val, &r->max_mem, err, errlen))
                return -1;
            break;
        case O_MAX_STEPS:
            if (cli_parse_count(optname, val, 1, INT64_MAX, &n, err, errlen))
                return -1;
            r->max_steps = (uint64_t)n;
            break;
        case O_HELP: o->help = 1; break;
        case O_VERSION: o->version = 1; break;
        }
    }
    if (o->help || o->version || o->gpu_list || o->preset_list)
        return 0;
    if (r->model) {                 /* the preset, under the options given */
        const sim_model *m = r->model;
#define UNSET(opt) (!(given & (UINT64_C(1) << (opt))))
        if (UNSET(O_N))                 /* --Nq, --Nk then change one side */
            r->sh.N = m->N;
        if (UNSET(O_D))
            r->sh.d = m->d;
        if (UNSET(O_DTYPE))
            r->sh.dtype = SIM_FP16;
        if (UNSET(O_HEADS))
            r->sh.heads = m->heads;
        if (UNSET(O_KV_HEADS))          /* --heads alone: one K, V head per query head */
            r->sh.kv_heads = UNSET(O_HEADS) ? m->kv_heads : 0;
        if (UNSET(O_BATCH))
            r->sh.batch = m->batch;
        if (UNSET(O_WINDOW))
            r->sh.window = m->window;
        r->sh.causal |= m->causal || r->sh.window > 0;   /* --causal only turns it on */
        if (UNSET(O_PASS))
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
