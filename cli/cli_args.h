/*
 * cli_args.h — command-line parsing for fasim: sizes ("96K", "1.5MiB"),
 * counts, and the report's options.
 *
 * Every parser returns 0 on success or -1 with a one-line message in err
 * that names the option and the problem and, where there is one, the fix.
 */
#ifndef FASIM_CLI_ARGS_H
#define FASIM_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "cli_table.h"
#include "sim_limits.h"
#include "sim_report.h"

/* A byte size: a whole or decimal number with an optional binary suffix
 * B, K or KiB (1024), M or MiB (2^20), G or GiB (2^30), T or TiB (2^40);
 * e.g. 98304, 96K, 96KiB, 1.5MiB. The result must be a whole number of
 * bytes >= 1. "KB", "MB", "GB", "TB" are refused (ambiguous between 1000
 * and 1024). */
int cli_parse_size(const char *opt, const char *s, uint64_t *out, char *err, size_t errlen);

/* An SRAM size (--M): a size as above, at most SIM_MAX_M. */
int cli_parse_sram(const char *opt, const char *s, uint64_t *out, char *err, size_t errlen);

/* --intermediates kernel or paper (sim_inter) into *out. Returns 0, or -1
 * with a one-line message. */
int cli_parse_intermediates(const char *s, int *out, char *err, size_t errlen);
/* --unfused-ops gpt2 or fa2bench into *out (a sim_uf_ops). */
int cli_parse_unfused_ops(const char *s, int *out, char *err, size_t errlen);

/* A positive integer in [lo, hi], with the same suffixes as sizes (so
 * --N 64K means 65536). */
int cli_parse_count(const char *opt, const char *s, int64_t lo, int64_t hi,
                    int64_t *out, char *err, size_t errlen);

/* The problem options every command shares (--N --d --M --dtype --causal
 * --Nq --Nk --Br --Bc --plan), and where the command keeps them. */
typedef struct {
    sim_shape *sh;             /* N (1 .. SIM_MAX_N), d (1 .. SIM_MAX_D), M, dtype, causal */
    int64_t *Br, *Bc;          /* NULL: the command takes no block sizes */
    int64_t max_block;         /* their bound; 0: SIM_MAX_N */
    sim_plan_kind *plan;       /* NULL: the command takes no --plan */
    int plan_same;             /* --plan same is taken: the command compares loop
                                  orders (the report's, compare's, gpu's, the
                                  view's) */
    int no_kernel;             /* with plan_same: --plan kernel is not taken
                                  (the view steps through the paper's loops) */
    int64_t Nq, Nk;            /* --Nq and --Nk as given; 0: not given */
} cli_problem;

/* The contradictions every command that takes data and plans shares.
 * cli_check_data_options: --compute with --count-only, and --q/--k/--v given
 * in part; returns the number of files (0 or 3), or -1 with a message.
 * cli_check_plan_options: --count-only beside the files, --plan paper beside
 * --Br/--Bc; sets *kind to SIM_PLAN_USER when a block size is given.
 * Returns 0, or -1 with a message. */
int cli_check_data_options(int compute, int count_only, const char *q, const char *k,
                           const char *v, char *err, size_t errlen);
int cli_check_plan_options(int nfiles, int count_only, sim_plan_kind *kind, int64_t Br,
                           int64_t Bc, char *err, size_t errlen);

/* Option id, as cli_opt_scan returns it with optname and val: when it is a
 * problem option, parse it into p and return 1 (or -1 with a message); else
 * return 0 and leave it to the command. Every command parses these here. */
int cli_parse_problem_opt(cli_problem *p, int id, const char *optname, const char *val,
                          char *err, size_t errlen);

/* --ring P, --ring-order O, --link NAME into rq: 1 when id is one of them,
 * 0 when not, -1 with a message. The report and the view share it. */
int cli_parse_ring_opt(sim_ring_req *rq, int id, const char *optname, const char *val,
                       char *err, size_t errlen);

/* Look up a --gpu value: a preset, or "list" (*is_list = 1, *out = NULL).
 * Returns 0, or -1 with a message naming the presets. */
int cli_parse_gpu(const char *s, const sim_gpu **out, int *is_list, char *err, size_t errlen);

/* Parse a comma list of loop orders ("all", "naive", "fa1,fa2"): run[a] = 1
 * for each named, every registered one for "all", 0 for the others (all
 * SIM_ALGO_MAX set). Returns 0, or -1 with a message listing the names. */
int cli_parse_algos(const char *s, int run[SIM_ALGO_MAX], char *err, size_t errlen);

typedef struct cli_report_opts {
    int help;
    int version;
    int gpu_list;        /* --gpu list: print the presets and exit */
    int preset_list;     /* --preset list: print the model presets and exit */
    int json;
    int N_set, d_set, M_set, Nk_set;
    const char *q_path, *k_path, *v_path, *do_path;
    const char *out_path;
    const char *trace_path;  /* --trace FILE: the GPU model's trace */
    const char *timeline_path;  /* --timeline FILE.svg or -: the first run's SMs */
    int splits_auto;         /* --splits auto: the released kernel's choice */
    int jobs;            /* --jobs: threads of a compute run; 0: the default */
    const char *block_mask;  /* --block-mask: a pattern or a file (cli_block_mask_load) */
    sim_request req;
} cli_report_opts;

/* Parse the report's options from argv[first..argc-1]. Defaults: N = 1024,
 * d = 64, M = 96K, fp16, all three loop orders, the best plan, auto mode,
 * seed 1. --gpu NAME sets req.gpu and, unless --M is given, M to the
 * preset's shared memory per thread block.
 * --gpu list sets gpu_list (the caller prints sim_gpu_print_table).
 * --preset NAME sets req.model and, for each of its fields whose option is
 * not given, the shape (N, d, H, G, B, window, causal, fp16) and the passes;
 * --preset list sets preset_list (the caller prints sim_model_print_table). */
int cli_parse_report(int argc, char **argv, int first, cli_report_opts *o,
                     char *err, size_t errlen);

/* The report's --help text. */
void cli_report_usage(FILE *out);

#endif /* FASIM_CLI_ARGS_H */
