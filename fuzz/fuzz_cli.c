/*
 * fuzz_cli.c — the command line: the report's options (cli_parse_report),
 * `fasim sweep`'s (cli_sweep_parse_check), and the size and count parsers
 * (sim_parse_size, sim_parse_count) that every option with a number uses.
 *
 * The first byte of the input chooses the parser; the rest is the argument
 * list, one argument per line, or the one value for a size or count.
 *
 * Properties:
 *   - a refusal has a one-line message;
 *   - an accepted report stays within the documented limits (N <= 2^40,
 *     d <= 65536, M <= 1 GiB) and plans: for every loop order it asks for, a
 *     plan is chosen or refused with a message (the plan search is bounded,
 *     so this also finds inputs that make it slow: libFuzzer's -timeout), and
 *     an accepted best plan fits M and has closed-form counts;
 *   - an accepted size is >= 1, an accepted count lies in its range, and
 *     writing either back in decimal parses to the same value.
 */
#include "fuzz_util.h"

#include <inttypes.h>

#include "cli_args.h"
#include "cli_cmds.h"
#include "sim.h"
#include "sim_parse.h"

static void fuzz_report(int argc, char **argv)
{
    cli_report_opts o;
    char err[2048];
    err[0] = '\0';
    if (cli_parse_report(argc, argv, 1, &o, err, sizeof err) != 0) {
        fuzz_check_message(err, 1, "");
        return;
    }
    if (o.help || o.version || o.gpu_list || o.preset_list)
        return;
    const sim_request *r = &o.req;
    FUZZ_CHECK(r->sh.N >= 1 && r->sh.N <= SIM_MAX_N, "N = %" PRId64, r->sh.N);
    FUZZ_CHECK(r->sh.d >= 1 && r->sh.d <= SIM_MAX_D, "d = %" PRId64, r->sh.d);
    FUZZ_CHECK(r->sh.M >= 1 && r->sh.M <= SIM_MAX_M, "M = %" PRIu64, r->sh.M);
    for (int a = 0; a < sim_algo_count(); a++) {
        if (!r->run_algo[a])
            continue;
        sim_plan p;
        err[0] = '\0';
        if (sim_plan_choose((sim_algo)a, &r->sh, &r->run, r->plan_kind, r->Br, r->Bc, &p, err,
                            sizeof err) != 0) {
            fuzz_check_message(err, 0, "");
            continue;
        }
        if (r->plan_kind == SIM_PLAN_PAPER)
            continue;                  /* a paper plan may exceed M: it is shown as over */
        FUZZ_CHECK(p.fits && p.sram_peak <= r->sh.M, "a chosen plan does not fit");
        FUZZ_CHECK(p.Br >= 1 && p.Bc >= 1 && p.Br <= r->sh.N && p.Bc <= sim_shape_Nk(&r->sh),
                   "blocks %" PRId64 " x %" PRId64 " for N_q = %" PRId64 ", N_k = %" PRId64,
                   p.Br, p.Bc, r->sh.N, sim_shape_Nk(&r->sh));
        /* A searched plan (not both blocks given) was scored by its closed
         * form, so its counts exist. Both blocks given are only checked to
         * fit here; their overflow is refused when the report counts them. */
        sim_counts c;
        if (!(r->Br && r->Bc))
            FUZZ_CHECK(sim_theory_counts(&p, &r->sh, &c) == 0,
                       "a searched plan whose counts overflow");
    }
}

static void fuzz_size(const char *s)
{
    char err[512], back[32];
    uint64_t v;
    err[0] = '\0';
    if (sim_parse_size("--M", s, &v, err, sizeof err) != 0) {
        fuzz_check_message(err, 1, "");   /* one line: the value is shown escaped */
        return;
    }
    FUZZ_CHECK(v >= 1, "size %" PRIu64, v);
    snprintf(back, sizeof back, "%" PRIu64, v);
    uint64_t w = 0;
    FUZZ_CHECK(sim_parse_size("--M", back, &w, err, sizeof err) == 0 && w == v,
               "'%s' -> %" PRIu64 " does not parse back", s, v);
}

static void fuzz_count(const char *s, int64_t lo, int64_t hi)
{
    char err[512], back[32];
    int64_t v;
    err[0] = '\0';
    if (sim_parse_count("--N", s, lo, hi, &v, err, sizeof err) != 0) {
        fuzz_check_message(err, 1, "");   /* one line: the value is shown escaped */
        return;
    }
    FUZZ_CHECK(v >= lo && v <= hi, "count %" PRId64 " outside [%" PRId64 ", %" PRId64 "]",
               v, lo, hi);
    snprintf(back, sizeof back, "%" PRId64, v);
    int64_t w = -1;
    FUZZ_CHECK(sim_parse_count("--N", back, lo, hi, &w, err, sizeof err) == 0 && w == v,
               "'%s' -> %" PRId64 " does not parse back", s, v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *s = fuzz_string(data + 1, size - 1);
    char *argv[FUZZ_MAX_ARGS + 1];
    char err[2048];
    switch (data[0] % 4) {
    case 0: {
        int argc = fuzz_argv(s, "fasim", argv);
        argv[argc] = NULL;
        fuzz_report(argc, argv);
        break;
    }
    case 1: {
        int argc = fuzz_argv(s, "sweep", argv);
        argv[argc] = NULL;
        err[0] = '\0';
        if (cli_sweep_parse_check(argc, argv, 1, err, sizeof err) != 0)
            fuzz_check_message(err, 1, "");
        break;
    }
    case 2:
        fuzz_size(s);
        break;
    default:
        fuzz_count(s, 1, SIM_MAX_N);
        fuzz_count(s, 0, INT64_MAX);
        break;
    }
    free(s);
    return 0;
}
