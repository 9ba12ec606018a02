/*
 * main.c — the fasim executable: parse, dispatch, format. No algorithm
 * lives here (docs/ARCHITECTURE.md, Layers).
 *
 * Results go to stdout, diagnostics to stderr. Exit status: 0 success,
 * 2 bad usage, 1 other failures (bad .npy data, I/O, memory).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_cmds.h"
#include "sim_npy.h"
#include "sim_presets.h"
#include "sim_report.h"

#ifndef FASIM_VERSION
#define FASIM_VERSION "0.0.0"
#endif

static void free_inputs(sim_npy_matrix m[4])
{
    for (int k = 0; k < 4; k++)
        free(m[k].data);
}

/* "(N, d)" or "(B, H, N, d)": an array's shape as the file held it. */
static const char *shape_text(const sim_npy_matrix *m, char *buf, size_t len)
{
    if (m->rank == 4)
        snprintf(buf, len, "(%lld, %lld, %lld, %lld)", (long long)m->batch,
                 (long long)m->heads, (long long)m->rows, (long long)m->cols);
    else
        snprintf(buf, len, "(%lld, %lld)", (long long)m->rows, (long long)m->cols);
    return buf;
}

/* Load --q/--k/--v (and --dO) and set the shape from them: Q (N_q, d) or
 * (B, H, N_q, d); K and V (N_k, d) or (B, G, N_k, d), of Q's rank and batch;
 * dO Q's shape. Options given as well must agree. Returns 0, or an exit
 * status. */
static int load_inputs(cli_report_opts *o, sim_npy_matrix m[4])
{
    const char *paths[4] = { o->q_path, o->k_path, o->v_path, o->do_path };
    const char *names[4] = { "--q", "--k", "--v", "--dO" };
    char err[512], s0[96], s1[96], s2[96];
    /* Each file is bounded by the compute-memory limit before it is read. */
    uint64_t max_mem = o->req.max_mem ? o->req.max_mem : SIM_DEFAULT_MAX_MEM;
    int64_t max_elems = (int64_t)(max_mem / 4 / 4);
    const int nfiles = o->do_path ? 4 : 3;
    for (int k = 0; k < nfiles; k++) {
        if (sim_npy_read(paths[k], max_elems, &m[k], err, sizeof err) != 0) {
            fprintf(stderr, "fasim: %s %s\n", names[k], err);
            return SIM_EFAIL;
        }
    }
    const sim_npy_matrix *q = &m[0], *k = &m[1], *v = &m[2];
    if (v->rank != k->rank || v->batch != k->batch || v->heads != k->heads ||
        v->rows != k->rows || v->cols != k->cols || k->cols != q->cols || k->rank != q->rank ||
        k->batch != q->batch) {
        fprintf(stderr, "fasim: shapes differ: Q %s is %s, K %s is %s, V %s is %s; Q must be "
                "(N_q, d) or (B, H, N_q, d), and K, V both (N_k, d) or (B, G, N_k, d)\n",
                paths[0], shape_text(q, s0, sizeof s0), paths[1], shape_text(k, s1, sizeof s1),
                paths[2], shape_text(v, s2, sizeof s2));
        return SIM_EFAIL;
    }
    if (nfiles == 4 && (m[3].rank != q->rank || m[3].batch != q->batch ||
                        m[3].heads != q->heads || m[3].rows != q->rows ||
                        m[3].cols != q->cols)) {
        fprintf(stderr, "fasim: --dO %s is %s; it must have Q's shape %s\n", paths[3],
                shape_text(&m[3], s0, sizeof s0), shape_text(q, s1, sizeof s1));
        return SIM_EFAIL;
    }
    sim_shape *sh = &o->req.sh;
    const int64_t G = q->rank == 4 ? k->heads : 0;
    if ((o->N_set && sh->N != q->rows) || (o->Nk_set && sim_shape_Nk(sh) != k->rows) ||
        (o->d_set && sh->d != q->cols) || (sh->batch && sh->batch != q->batch) ||
        (sh->heads && sh->heads != q->heads) || (sh->kv_heads && sh->kv_heads != k->heads)) {
        fprintf(stderr, "fasim: --N/--Nq/--Nk/--d/--batch/--heads/--kv-heads disagree with the "
                "files' shapes: Q %s, K and V %s; drop them when giving .npy inputs\n",
                shape_text(q, s0, sizeof s0), shape_text(k, s1, sizeof s1));
        return SIM_EUSAGE;
    }
    if (q->cols > SIM_MAX_D || q->batch > SIM_MAX_HEADS || q->heads > SIM_MAX_HEADS) {
        fprintf(stderr, "fasim: %s: shape %s is over the supported d <= %lld, B, H <= %lld\n",
                paths[0], shape_text(q, s0, sizeof s0), (long long)SIM_MAX_D,
                (long long)SIM_MAX_HEADS);
        return SIM_EFAIL;
    }
    sh->N = q->rows;
    sh->Nk = k->rows == q->rows ? 0 : k->rows;
    sh->d = q->cols;
    sh->batch = q->batch;
    sh->heads = q->heads;
    sh->kv_heads = G;
    char err2[256];
    if (sim_shape_check(sh, err2, sizeof err2) != 0) {
        fprintf(stderr, "fasim: the files' shapes: %s\n", err2);
        return SIM_EUSAGE;
    }
    o->req.Q = q->data;
    o->req.K = k->data;
    o->req.V = v->data;
    o->req.dO = nfiles == 4 ? m[3].data : NULL;
    return SIM_OK;
}

static int cmd_report(int argc, char **argv, int first)
{
    cli_report_opts o;
    char err[2048];
    if (cli_parse_report(argc, argv, first, &o, err, sizeof err) != 0) {
        fprintf(stderr, "fasim: %s\n", err);
        return SIM_EUSAGE;
    }
    if (o.help) {
        cli_report_usage(stdout);
        return SIM_OK;
    }
    if (o.version) {
        printf("fasim %s\n", FASIM_VERSION);
        return SIM_OK;
    }
    if (o.gpu_list) {
        sim_gpu_print_table(stdout);
        return fflush(stdout) == 0 ? SIM_OK : SIM_EFAIL;
    }
    if (o.preset_list) {
        sim_model_print_table(stdout);
        return fflush(stdout) == 0 ? SIM_OK : SIM_EFAIL;
    }
    if (o.out_path) {
        /* Fail before the work, not after it: can the output be written? */
        FILE *f = fopen(o.out_path, "ab");
        if (!f) {
            fprintf(stderr, "fasim: --out %s: cannot open for writing: %s\n", o.out_path,
                    strerror(errno));
            return SIM_EFAIL;
        }
        fclose(f);
    }
    sim_npy_matrix m[4];
    memset(m, 0, sizeof m);
    if (o.q_path) {
        int rc = load_inputs(&o, m);
        if (rc != SIM_OK) {
            free_inputs(m);
            return rc;
        }
    }
    if (o.req.mode == SIM_MODE_COMPUTE) {
        /* A forced compute run can take minutes: say so before it starts. */
        double flops = 0.0;
        int fits = 1;   /* runs refused for memory are refused before any work */
        const uint64_t max_mem = o.req.max_mem ? o.req.max_mem : SIM_DEFAULT_MAX_MEM;
        for (int a = 0; a < SIM_ALGO_COUNT; a++)
            if (o.req.run_algo[a]) {
                flops += sim_compute_flops((sim_algo)a, &o.req.sh);
                fits &= sim_compute_memory((sim_algo)a, &o.req.sh) <= max_mem;
            }
        if (fits && flops > 4.0 * SIM_AUTO_COMPUTE_FLOPS)
            fprintf(stderr, "fasim: computing %.1e flops: about %.0f s here\n", flops,
                    ceil(flops / SIM_AUTO_COMPUTE_FLOPS));
    }
    sim_report rep;
    int rc = sim_report_build(&o.req, &rep, err, sizeof err);
    if (rc != SIM_OK) {
        fprintf(stderr, "fasim: %s\n", err);
        free_inputs(m);
        return rc;
    }
    if (o.json)
        sim_report_json(stdout, &rep);
    else
        sim_report_text(stdout, &rep);
    if (rep.mode_note[0] && o.json)
        fprintf(stderr, "fasim: note: %s\n", rep.mode_note);
    for (int k = 0; k < rep.nruns; k++)
        if (!rep.runs[k].res.plan.fits)
            fprintf(stderr, "fasim: warning: the paper plan of %s needs %llu B of SRAM, "
                    "more than M = %llu B; simulated as if SRAM were that large\n",
                    sim_algo_name(rep.runs[k].algo),
                    (unsigned long long)rep.runs[k].res.sram_peak,
                    (unsigned long long)o.req.sh.M);
    if (o.out_path) {
        /* The forward run comes first; a batch is written as (B, H, N, d). */
        const sim_result *res = &rep.runs[0].res;
        const sim_shape *sh = &o.req.sh;
        int wrc = sh->batch > 1 || sh->heads > 1 || (o.q_path && m[0].rank == 4)
                      ? sim_npy_write_f32_4d(o.out_path, res->O, sim_shape_B(sh),
                                             sim_shape_H(sh), sh->N, sh->d, err, sizeof err)
                      : sim_npy_write_f32(o.out_path, res->O, sh->N, sh->d, err, sizeof err);
        if (wrc != 0) {
            fprintf(stderr, "fasim: --out %s\n", err);
            rc = SIM_EFAIL;
        }
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "fasim: cannot write the report to stdout\n");
        rc = SIM_EFAIL;
    }
    sim_report_free(&rep);
    free_inputs(m);
    return rc;
}

int main(int argc, char **argv)
{
    /* Subcommands come first; anything starting with '-' is the report. */
    if (argc > 1 && argv[1][0] != '-') {
        if (!strcmp(argv[1], "report"))
            return cmd_report(argc, argv, 2);
        if (!strcmp(argv[1], "view"))
            return cli_view_main(argc, argv, 2);
        if (!strcmp(argv[1], "lesson"))
            return cli_lesson_main(argc, argv, 2);
        if (!strcmp(argv[1], "sweep"))
            return cli_sweep_main(argc, argv, 2);
        if (!strcmp(argv[1], "claims"))
            return cli_claims_main(argc, argv, 2);
        if (!strcmp(argv[1], "explore"))
            return cli_explore_main(argc, argv, 2);
        if (!strcmp(argv[1], "gpu"))
            return cli_gpu_main(argc, argv, 2);
        if (!strcmp(argv[1], "help")) {
            /* fasim help [COMMAND [NAME]]: that command's --help ("fasim
             * help lesson merge" is the lesson's). */
            if (argc == 2 || !strcmp(argv[2], "report") || !strcmp(argv[2], "help")) {
                cli_report_usage(stdout);
                return SIM_OK;
            }
            if (argc > 4 || argv[2][0] == '-') {
                fprintf(stderr, "fasim: usage: fasim help [COMMAND [LESSON]]\n");
                return SIM_EUSAGE;
            }
            char help[] = "--help";
            char *args[] = { argv[0], argv[2], argc == 4 ? argv[3] : help,
                             argc == 4 ? help : NULL, NULL };
            return main(argc == 4 ? 4 : 3, args);
        }
        static const char *const CMDS[] = { "report", "view", "lesson", "sweep", "claims",
                                            "explore", "gpu", "help" };
        const char *near = NULL;
        for (size_t k = 0; k < sizeof CMDS / sizeof CMDS[0] && !near; k++) {
            /* one letter off, or two swapped: the typos people make */
            size_t a = strlen(argv[1]), b = strlen(CMDS[k]), diff = 0;
            if (a == b) {
                for (size_t c = 0; c < a; c++)
                    diff += argv[1][c] != CMDS[k][c];
                if (diff <= 2)
                    near = CMDS[k];
            }
        }
        if (near)
            fprintf(stderr, "fasim: unknown subcommand '%s'; did you mean '%s'?\n", argv[1],
                    near);
        else
            fprintf(stderr, "fasim: unknown subcommand '%s'; see 'fasim --help'\n", argv[1]);
        return SIM_EUSAGE;
    }
    return cmd_report(argc, argv, 1);
}
