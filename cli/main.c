/*
 * main.c — the fasim executable: parse, dispatch, format. No algorithm
 * lives here (docs/ARCHITECTURE.md, Layers).
 *
 * Results go to stdout, diagnostics to stderr. Exit status: 0 success,
 * 2 bad usage, 1 other failures (bad .npy data, I/O, memory, an output
 * stdout did not take).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_cmds.h"
#include "cli_inputs.h"
#include "ref_simd.h"
#include "sim_loop.h"
#include "sim_npy.h"
#include "sim_outfile.h"
#include "viz_timeline.h"
#include "sim_presets.h"
#include "sim_report.h"
#include "sim_parse.h"

#ifndef FASIM_VERSION
#define FASIM_VERSION "0.0.0"
#endif

/* Load --q/--k/--v (and --dO) and set the shape from them; options given as
 * well must agree. Returns SIM_OK, or an exit status with the message
 * printed. */
static int load_inputs(cli_report_opts *o, sim_npy_matrix m[4])
{
    char err[1024];
    int rc = cli_inputs_load_report(o, NULL, 0, m, err, sizeof err);
    if (rc != SIM_OK)
        fprintf(stderr, "fasim: %s\n", err);
    return rc;
}

/* The flops of the runs req asks for, forward and backward (--pass; none
 * set: forward), and *fits: whether each run fits --max-mem (a run refused
 * for memory is refused before any work, so no estimate is printed for it). */
static double compute_flops(const sim_request *req, int *fits, double *seconds)
{
    double flops = 0.0;
    *seconds = 0.0;
    const uint64_t max_mem = req->max_mem ? req->max_mem : SIM_DEFAULT_MAX_MEM;
    const int any = req->run_pass[SIM_FWD] || req->run_pass[SIM_BWD];
    *fits = 1;
    for (int q = 0; q < SIM_PASS_COUNT; q++) {
        sim_run_opts run = req->run;
        run.pass = (sim_pass)q;
        if (any ? !req->run_pass[q] : q != SIM_FWD)
            continue;
        for (int a = 0; a < sim_algo_count(); a++)
            if (req->run_algo[a]) {
                flops += sim_compute_flops((sim_algo)a, &req->sh, &run);
                *seconds += sim_compute_seconds((sim_algo)a, &req->sh, &run);
                *fits &= sim_compute_memory((sim_algo)a, &req->sh, &run) <= max_mem;
            }
    }
    return flops;
}

/* --timeline: the GPU model of the report's first run once more, its
 * blocks collected, drawn as SVG (FILE) or on the terminal (-). */
static int draw_timeline(const cli_report_opts *o, const sim_report *rep)
{
    const sim_report_run *r = NULL;
    for (int k = 0; k < rep->nruns && !r; k++)
        if (rep->runs[k].has_gm)
            r = &rep->runs[k];
    if (!r)
        return SIM_OK;
    const sim_gpu *g = o->req.gpu;
    viz_timeline tl;
    sim_gm_result res;
    char err[512], title[160];
    int rc = SIM_OK;
    if (viz_timeline_model(&tl, g, &r->res.plan, &o->req.sh, &o->req.gm, 200000, &res, err,
                           sizeof err) != 0) {
        fprintf(stderr, "fasim: --timeline: %s\n", err);
        return SIM_EFAIL;
    }
    const sim_shape *sh = &o->req.sh;
    snprintf(title, sizeof title, "%s %s on %s: N = %lld, d = %lld, %lld x %lld heads%s, %s",
             sim_algo_name(r->algo), sim_pass_name(r->pass), g->title, (long long)sh->N,
             (long long)sh->d, (long long)sim_shape_B(sh), (long long)sim_shape_H(sh),
             sh->causal ? ", causal" : "", sim_dtype_name(sh->dtype));
    if (!strcmp(o->timeline_path, "-")) {
        printf("\n");
        viz_timeline_text(stdout, &tl, title, 80, 24);
    } else {
        sim_outfile f;
        if (sim_outfile_open(&f, o->timeline_path) != 0) {
            fprintf(stderr, "fasim: --timeline %s: %s\n", sim_shown(o->timeline_path).s,
                    strerror(errno));
            rc = SIM_EFAIL;
        } else {
            viz_timeline_svg(f.f, &tl, title, &res);
            if (sim_outfile_commit(&f) != 0) {
                fprintf(stderr, "fasim: --timeline %s: %s\n", sim_shown(o->timeline_path).s,
                        strerror(errno));
                rc = SIM_EFAIL;
            }
        }
    }
    viz_timeline_free(&tl);
    return rc;
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
        return SIM_OK;                   /* main checks that stdout took it */
    }
    if (o.preset_list) {
        sim_model_print_table(stdout);
        return SIM_OK;
    }
    if (o.out_path && cli_out_writable(o.out_path) != SIM_OK)
        return SIM_EFAIL;
    sim_set_threads(o.jobs);
    sim_npy_matrix m[4];
    memset(m, 0, sizeof m);
    if (o.q_path) {
        int rc = load_inputs(&o, m);
        if (rc != SIM_OK) {
            cli_inputs_free(m);
            return rc;
        }
    }
    if (o.block_mask) {
        int rc = cli_block_mask_load(&o, err, sizeof err);
        if (rc != SIM_OK) {
            fprintf(stderr, "fasim: %s\n", err);
            cli_inputs_free(m);
            return rc;
        }
    }
    if (o.req.mode == SIM_MODE_COMPUTE || (o.req.mode == SIM_MODE_AUTO && o.req.Q)) {
        /* A compute run can take minutes: say so before it starts. Inputs
         * from files compute without --compute; past SIM_MAX_COMPUTE_FLOPS
         * they are refused, and --compute forces them. */
        int fits;
        double secs;
        double flops = compute_flops(&o.req, &fits, &secs);
        char dur[64];
        sim_format_duration(dur, sizeof dur, secs);
        if (fits && o.req.mode == SIM_MODE_AUTO && flops > SIM_MAX_COMPUTE_FLOPS) {
            fprintf(stderr, "fasim: computing on these inputs would take %.1e flops, %s "
                    SIM_COMPUTE_WHERE ", over the limit of %.1e flops; --compute forces it "
                    "(the counts need no data: --count-only without --q --k --v)\n", flops,
                    dur, SIM_MAX_COMPUTE_FLOPS);
            cli_inputs_free(m);
            return SIM_EUSAGE;
        }
        if (fits && secs > SIM_AUTO_COMPUTE_SECONDS)
            fprintf(stderr, "fasim: computing %.1e flops: %s " SIM_COMPUTE_WHERE "\n", flops,
                    dur);
    }
    /* The trace file is opened before the run (an unwritable path fails
     * at once) and takes its place only when complete. */
    sim_outfile trace_file;
    sim_gm_trace trace;
    if (o.trace_path) {
        if (sim_outfile_open(&trace_file, o.trace_path) != 0) {
            fprintf(stderr, "fasim: --trace %s: cannot write there (%s)\n", o.trace_path,
                    strerror(errno));
            cli_inputs_free(m);
            return SIM_EFAIL;
        }
        sim_gm_trace_begin(&trace, trace_file.f);
        o.req.gm.trace = &trace;
    }
    const int tl_svg = o.timeline_path && strcmp(o.timeline_path, "-") != 0;
    if (tl_svg && sim_outfile_check(o.timeline_path) != 0) {
        fprintf(stderr, "fasim: --timeline %s: cannot open for writing: %s\n",
                sim_shown(o.timeline_path).s, strerror(sim_outfile_check(o.timeline_path)));
        if (o.trace_path)
            sim_outfile_abort(&trace_file);
        cli_inputs_free(m);
        return SIM_EFAIL;
    }
    sim_report rep;
    int rc = sim_report_build(&o.req, &rep, err, sizeof err);
    if (o.trace_path) {
        if (rc == SIM_OK)
            sim_gm_trace_end(&trace);
        if (rc != SIM_OK || sim_outfile_commit(&trace_file) != 0) {
            if (rc == SIM_OK) {
                fprintf(stderr, "fasim: --trace %s: %s\n", o.trace_path, strerror(errno));
                rc = SIM_EFAIL;
            } else {
                sim_outfile_abort(&trace_file);
            }
        }
    }
    if (rc != SIM_OK) {
        fprintf(stderr, "fasim: %s\n", err);
        cli_inputs_free(m);
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
    /* The forward run comes first; a batch is written as (B, H, N, d). */
    if (o.out_path && cli_out_write(o.out_path, rep.runs[0].res.O, &o.req.sh,
                                    o.q_path ? m[0].rank : 0) != SIM_OK)
        rc = SIM_EFAIL;
    if (o.timeline_path && draw_timeline(&o, &rep) != SIM_OK)
        rc = SIM_EFAIL;
    if (fflush(stdout) != 0) {
        fprintf(stderr, "fasim: cannot write the report to stdout\n");
        rc = SIM_EFAIL;
    }
    sim_report_free(&rep);
    cli_inputs_free(m);
    return rc;
}

static int cmd_main(int argc, char **argv);

/* fasim help [COMMAND [NAME]]: that command's --help ("fasim help lesson
 * merge" is the lesson's). */
static int cmd_help(int argc, char **argv)
{
    if (argc == 2 || !strcmp(argv[2], "report") || !strcmp(argv[2], "help")) {
        cli_report_usage(stdout);
        return SIM_OK;
    }
    if (argc > 4 || argv[2][0] == '-') {
        fprintf(stderr, "fasim: usage: fasim help [COMMAND [LESSON]]\n");
        return SIM_EUSAGE;
    }
    char help[] = "--help";
    char *args[] = { argv[0], argv[2], argc == 4 ? argv[3] : help, argc == 4 ? help : NULL,
                     NULL };
    return cmd_main(argc == 4 ? 4 : 3, args);
}

/* An unknown subcommand: the command meant, when it is one letter off or
 * two swapped (the typos people make). */
static int cmd_unknown(const char *name)
{
    const char *near = NULL;
    for (int k = 0; k < CLI_CMD_COUNT && !near; k++) {
        const char *cmd = CLI_COMMANDS[k].name;
        size_t a = strlen(name), b = strlen(cmd), diff = 0;
        if (a == b) {
            for (size_t c = 0; c < a; c++)
                diff += name[c] != cmd[c];
            if (diff <= 2)
                near = cmd;
        }
    }
    if (near)
        fprintf(stderr, "fasim: unknown subcommand '%s'; did you mean '%s'?\n",
                sim_shown(name).s, near);
    else
        fprintf(stderr, "fasim: unknown subcommand '%s'; see 'fasim --help'\n",
                sim_shown(name).s);
    return SIM_EUSAGE;
}

/* Subcommands come first; anything starting with '-' is the report. */
static int cmd_main(int argc, char **argv)
{
    if (argc <= 1 || argv[1][0] == '-')
        return cmd_report(argc, argv, 1);
    switch (cli_command_find(argv[1])) {
    case CLI_CMD_REPORT: return cmd_report(argc, argv, 2);
    case CLI_CMD_VIEW: return cli_view_main(argc, argv, 2);
    case CLI_CMD_LESSON: return cli_lesson_main(argc, argv, 2);
    case CLI_CMD_SWEEP: return cli_sweep_main(argc, argv, 2);
    case CLI_CMD_CLAIMS: return cli_claims_main(argc, argv, 2);
    case CLI_CMD_EXPLORE: return cli_explore_main(argc, argv, 2);
    case CLI_CMD_GPU: return cli_gpu_main(argc, argv, 2);
    case CLI_CMD_COMPARE: return cli_compare_main(argc, argv, 2);
    case CLI_CMD_VALIDATE: return cli_validate_main(argc, argv, 2);
    case CLI_CMD_RING_MEMORY: return cli_ring_memory_main(argc, argv, 2);
    case CLI_CMD_HELP: return cmd_help(argc, argv);
    }
    return cmd_unknown(argv[1]);
}

/* Every command's output, --help and --version included, must reach
 * stdout: a lost one (a full disk, a closed stdout) is a failure with one
 * line on stderr. A command that failed has said why already. */
int main(int argc, char **argv)
{
    /* FASIM_SIMD caps the products' vector path (reference/ref_simd.h); a
     * name that is none caps nothing, which a user should hear of. */
    const char *simd = getenv("FASIM_SIMD");
    ref_simd cap;
    if (simd && *simd && ref_simd_parse(simd, &cap) != 0)
        fprintf(stderr, "fasim: FASIM_SIMD=%s is not a path (scalar, sse, avx2, avx512, "
                "wasm128); ignored\n", simd);
    /* FlashAttention-3's forward, loop order 4 (sim_loop.h says why it is
     * registered here rather than built in) */
    if (sim_fa3_register() < 0) {
        fprintf(stderr, "fasim: cannot register loop order fa3\n");
        return SIM_EFAIL;
    }
    int rc = cmd_main(argc, argv);
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == SIM_OK) {
        fprintf(stderr, "fasim: cannot write to stdout\n");
        rc = SIM_EFAIL;
    }
    return rc;
}
