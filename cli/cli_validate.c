/*
 * cli_validate.c — `fasim validate [FILE]`: the GPU timing model against
 * published measurements. Each row of the figures file is run through the
 * model (study/sim_validate.c) and printed beside what was measured, with
 * its error and the geometric means.
 *
 * Without FILE: the figures fasim ships, bench/published/gpu-figures.tsv of
 * the source tree it was built from when that is still there, else the copy
 * `cmake --install` put in share/fasim. Exit status: 0 when every row was
 * predicted (or not modelled: fa3 off Hopper), whatever the errors;
 * 2 for bad usage (an option, a malformed row); 1 for other failures (a file
 * that cannot be read, a row the model refused).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_cmds.h"
#include "cli_inputs.h"
#include "cli_table.h"
#include "sim_parse.h"
#include "sim_status.h"
#include "sim_validate.h"

#ifndef FASIM_FIGURES_SOURCE
#define FASIM_FIGURES_SOURCE "bench/published/gpu-figures.tsv"
#endif
#ifndef FASIM_FIGURES_INSTALLED
#define FASIM_FIGURES_INSTALLED "/usr/local/share/fasim/gpu-figures.tsv"
#endif

/* A figures file is a few hundred rows; 4 MiB is far more than any. */
#define MAX_FILE (4u << 20)

/* The file fasim ships: in the source tree, else installed. */
static const char *default_file(void)
{
    return access(FASIM_FIGURES_SOURCE, R_OK) == 0 ? FASIM_FIGURES_SOURCE
                                                   : FASIM_FIGURES_INSTALLED;
}

static int run(const char *path, int json)
{
    const char *name = strcmp(path, "-") ? path : "<stdin>";
    char *text = cli_read_text(path, "validate", MAX_FILE,
                               "a figures file is a few hundred rows");
    if (!text)
        return SIM_EFAIL;
    sim_vfig_list l;
    size_t elen = 16384;
    char *err = malloc(elen);
    int nbad = err ? sim_validate_parse(name, text, &l, err, elen) : -1;
    free(text);
    if (nbad != 0) {
        if (nbad < 0)
            fprintf(stderr, "fasim: out of memory\n");
        else
            fprintf(stderr, "%s\n", err);
        free(err);
        return nbad < 0 ? SIM_EFAIL : SIM_EUSAGE;
    }
    free(err);
    if (l.n == 0) {
        fprintf(stderr, "fasim: validate %s: no figures in the file (a header, then one "
                "row a figure; see 'fasim validate --help')\n", sim_shown(name).s);
        return SIM_EUSAGE;
    }
    sim_vrow *r = calloc((size_t)l.n, sizeof *r);
    if (!r) {
        sim_vfig_list_free(&l);
        fprintf(stderr, "fasim: out of memory\n");
        return SIM_EFAIL;
    }
    for (int k = 0; k < l.n; k++) {
        const sim_vfig *f = &l.items[k];
        double t;
        if (!f->modelled) {
            r[k].status = SIM_VROW_NOT_MODELLED;
        } else if (sim_validate_predict(f, &r[k].pred, &t, r[k].why, sizeof r[k].why) != 0) {
            r[k].status = SIM_VROW_FAILED;
            fprintf(stderr, "fasim: validate %s:%d: the model refused: %s\n",
                    sim_shown(name).s, f->line, r[k].why);
        }
    }
    const sim_vsummary s = sim_validate_summarise(&l, r);
    if (json)
        sim_validate_json(stdout, name, &l, r, &s);
    else
        sim_validate_print(stdout, name, &l, r, &s);
    free(r);
    sim_vfig_list_free(&l);
    return s.failed ? SIM_EFAIL : SIM_OK;
}

int cli_validate_main(int argc, char **argv, int first)
{
    const char *path = NULL;
    int json = 0;
    cli_given given = { { 0, 0 } };
    char err[256];
    for (int k = first; k < argc; k++) {
        const char *a = argv[k];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            cli_usage(stdout, CLI_CMD_VALIDATE, NULL, 0);
            return SIM_OK;
        } else if (!strcmp(a, "--json")) {
            if (cli_given_twice(&given, CLI_O_JSON, "--json", err, sizeof err) != 0) {
                fprintf(stderr, "fasim: %s\n", err);
                return SIM_EUSAGE;
            }
            json = 1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "fasim: validate: unknown option '%s'; see 'fasim validate "
                    "--help'\n", sim_shown(a).s);
            return SIM_EUSAGE;
        } else if (path) {
            fprintf(stderr, "fasim: validate takes one FILE; got '%s' and '%s'\n",
                    sim_shown(path).s, sim_shown(a).s);
            return SIM_EUSAGE;
        } else {
            path = a;
        }
    }
    int rc = run(path ? path : default_file(), json);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "fasim: cannot write to stdout\n");
        rc = SIM_EFAIL;
    }
    return rc;
}
