/*
 * cli_compare.c — `fasim compare [options] vs [options]`: two runs side by
 * side (study/sim_compare.h holds the rows).
 *
 * Side A is the options before "vs"; side B is A's options with those after
 * "vs" put in place of the same options of A (so "--algo fa1 vs --algo fa2"
 * differs in the loop order alone). Each side is parsed by the report's
 * parser and built by the report; --json, on either side, asks for one JSON
 * object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_cmds.h"
#include "cli_inputs.h"
#include "cli_table.h"
#include "sim_compare.h"
#include "sim_parse.h"

#define PROG "fasim compare"

/* The option argv word w names (w without its dashes), for the report, or -1. */
static int option_of(const char *w)
{
    if (strncmp(w, "--", 2) != 0)
        return -1;
    return cli_option_find(CLI_CMD_COMPARE, w + 2, strlen(w + 2));
}

/* Whether the words [b0, b1) give option o. */
static int gives(char **w, int b0, int b1, int o)
{
    for (int k = b0; k < b1; k++) {
        const int ok = option_of(w[k]);
        if (ok == o)
            return 1;
        if (ok >= 0 && CLI_OPTIONS[ok].arg)
            k++;                             /* its value is no option */
    }
    return 0;
}

/* Append to out (n words so far) the words [a0, a1), less --json (*json
 * set instead) and less each option (with its value) that skip[0..nskip)
 * gives. Returns the new count. */
static int append(char **out, int n, char **w, int a0, int a1, char **skip, int nskip,
                  int *json)
{
    for (int k = a0; k < a1; k++) {
        const int o = option_of(w[k]);
        const int takes = o >= 0 && CLI_OPTIONS[o].arg != NULL && k + 1 < a1;
        if (o == CLI_O_JSON) {
            *json = 1;
            continue;
        }
        if (o >= 0 && skip && gives(skip, 0, nskip, o)) {
            k += takes;
            continue;
        }
        out[n++] = w[k];
        if (takes)
            out[n++] = w[++k];
    }
    return n;
}

/* The words as one line for the header: "--algo fa1 --Br 64". */
static void join(char *buf, size_t len, char **w, int n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 1; k < n && used < len; k++) {
        int m = snprintf(buf + used, len - used, "%s%s", k > 1 ? " " : "", sim_shown(w[k]).s);
        if (m < 0)
            break;
        used += (size_t)m;
    }
}

/* One side's options: parsed and checked. Returns SIM_OK, or an exit
 * status with the message printed. */
static int parse_side(const char *which, int n, char **w, cli_report_opts *o)
{
    char err[2048];
    if (cli_parse_report(n, w, 1, o, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": side %s: %s\n", which, err);
        return SIM_EUSAGE;
    }
    if (!gives(w, 1, n, CLI_O_ALGO)) {
        for (int a = 0; a < sim_algo_count(); a++)
            o->req.run_algo[a] = a == SIM_FA2;  /* one loop order a side: fa2 */
    }
    const char *why = NULL;
    if (o->gpu_list || o->preset_list)
        why = "'list' is the report's: see 'fasim --gpu list' or 'fasim --preset list'";
    else if (o->out_path)
        why = "--out is the report's: compare writes no arrays";
    else if (o->version)
        why = "--version is the report's";
    if (why) {
        fprintf(stderr, PROG ": side %s: %s\n", which, why);
        return SIM_EUSAGE;
    }
    if (sim_compare_check(&o->req, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": side %s: %s\n", which, err);
        return SIM_EUSAGE;
    }
    return SIM_OK;
}

/* One side: load its inputs and build its report. Returns SIM_OK with rep
 * built (the caller frees it and m), or an exit status with the message
 * printed and nothing left to free. */
static int build_side(const char *which, cli_report_opts *o, sim_report *rep,
                      sim_npy_matrix m[4])
{
    char err[2048];
    memset(m, 0, 4 * sizeof *m);
    if (o->q_path) {
        int rc = cli_inputs_load_report(o, NULL, 0, m, err, sizeof err);
        if (rc != SIM_OK) {
            fprintf(stderr, PROG ": side %s: %s\n", which, err);
            cli_inputs_free(m);
            return rc;
        }
    }
    int rc = sim_report_build(&o->req, rep, err, sizeof err);
    if (rc != SIM_OK) {
        fprintf(stderr, PROG ": side %s: %s\n", which, err);
        cli_inputs_free(m);
    }
    return rc;
}

int cli_compare_main(int argc, char **argv, int first)
{
    int vs = -1, nvs = 0;
    for (int k = first; k < argc; k++) {
        if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
            cli_usage(stdout, CLI_CMD_COMPARE, NULL, 0);
            return SIM_OK;
        }
        if (!strcmp(argv[k], "vs")) {
            vs = k;
            nvs++;
        }
    }
    if (nvs != 1) {
        fprintf(stderr, PROG ": %s; e.g. fasim compare --algo fa1 vs --algo fa2 "
                "(see 'fasim compare --help')\n",
                nvs ? "give 'vs' once, between the two sides" : "give the two sides apart "
                "with 'vs'");
        return SIM_EUSAGE;
    }
    /* Each side's words behind a program name, as the report's parser
     * takes them; at most every word of argv. */
    char **wa = malloc((size_t)(argc + 1) * sizeof *wa);
    char **wb = malloc((size_t)(argc + 1) * sizeof *wb);
    if (!wa || !wb) {
        free(wa);
        free(wb);
        fprintf(stderr, PROG ": out of memory\n");
        return SIM_EFAIL;
    }
    int json = 0;
    wa[0] = wb[0] = argv[0];
    const int na = append(wa, 1, argv, first, vs, NULL, 0, &json);
    int nb = append(wb, 1, argv, first, vs, argv + vs + 1, argc - vs - 1, &json);
    nb = append(wb, nb, argv, vs + 1, argc, NULL, 0, &json);
    wa[na] = wb[nb] = NULL;

    sim_report ra, rb;
    sim_npy_matrix ma[4], mb[4];
    cli_report_opts oa, ob;
    int rc = parse_side("A", na, wa, &oa);
    if (rc == SIM_OK)
        rc = parse_side("B", nb, wb, &ob);
    if (rc != SIM_OK) {
        free(wa);
        free(wb);
        return rc;
    }
    /* Parsed from zeroed defaults by one parser, two requests that ask for
     * the same run are equal byte for byte (file inputs are named by their
     * argv words: the same word, the same pointer). */
    if (!memcmp(&oa.req, &ob.req, sizeof oa.req))
        fprintf(stderr, PROG ": warning: side B is side A (nothing after 'vs' changes it)\n");
    sim_compare_same_tiles(&oa.req, &ob.req);
    rc = build_side("A", &oa, &ra, ma);
    if (rc == SIM_OK) {
        rc = build_side("B", &ob, &rb, mb);
        if (rc != SIM_OK) {
            sim_report_free(&ra);
            cli_inputs_free(ma);
        }
    }
    if (rc == SIM_OK) {
        sim_comparison *c = malloc(sizeof *c);
        char a_args[1024], b_args[1024];
        join(a_args, sizeof a_args, wa, na);
        join(b_args, sizeof b_args, wb, nb);
        if (!c) {
            fprintf(stderr, PROG ": out of memory\n");
            rc = SIM_EFAIL;
        } else {
            sim_compare(&ra, &rb, c);
            if (json)
                sim_compare_json(stdout, c, a_args, b_args);
            else
                sim_compare_text(stdout, c, a_args, b_args);
            free(c);
        }
        sim_report_free(&ra);
        sim_report_free(&rb);
        cli_inputs_free(ma);
        cli_inputs_free(mb);
    }
    free(wa);
    free(wb);
    return rc;
}
