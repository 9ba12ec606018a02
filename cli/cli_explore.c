/*
 * cli_explore.c — `fasim explore`: N, d, M, B_r, B_c, dtype and causal
 * change with keys; the traffic table, the SRAM plans, the ratios, the bounds
 * and a log-log chart follow at once; `v` opens the view.
 *
 * On a terminal (stdin and stdout both ttys, no --keys) the screen is
 * interactive (viz/viz_curses.c). Otherwise it is printed as plain text:
 * the starting frame and, with --keys STRING, one frame after each key, which
 * is how the tests see it. Parsing, dispatch and messages only: the model
 * and its screen live in viz/viz_explore.c.
 *
 * Exit status: 0 success, 2 bad usage, 1 other failures (the terminal, I/O);
 * 128 + n after signal n on the interactive screen.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli_args.h"
#include "cli_cmds.h"
#include "sim_presets.h"
#include "viz_curses.h"
#include "viz_explore.h"
#include "viz_model.h"
#include "viz_text.h"
#include "sim_parse.h"

typedef struct {
    viz_explore_config cfg;
    int help;
    int gpu_list;
    int M_set;
    const char *keys;          /* NULL: no --keys */
} explore_opts;

static void usage(FILE *out)
{
    cli_usage(out, CLI_CMD_EXPLORE, NULL, 0);
}

#define ERR(...) snprintf(err, errlen, __VA_ARGS__)

/* The explorer's state while its options are parsed. */
typedef struct {
    explore_opts *o;
    cli_problem prob;
} explore_parse;

/* One option of the explorer: a problem option within its own ranges, or
 * one of its own. Returns 0 or -1. */
static int explore_each(void *ctx, int id, const char *optname, const char *val, char *err,
                        size_t errlen)
{
    explore_parse *p = ctx;
    explore_opts *o = p->o;
    viz_explore_config *c = &o->cfg;
    int rc = cli_parse_problem_opt(&p->prob, id, optname, val, err, errlen);
    if (rc < 0)
        return -1;
    /* The explorer's own ranges: it plans every loop order again at
     * every key, and charts N/8 .. 8N. */
    if (id == CLI_O_N && c->sh.N > VIZ_EX_MAX_N) {
        ERR("--N %s: explore takes N up to 2^30 = 1G (naive's N^2 counts leave "
            "64 bits soon after); the report takes more", sim_shown(val).s);
        return -1;
    }
    if (id == CLI_O_M && (c->sh.M < VIZ_EX_MIN_M || c->sh.M > VIZ_EX_MAX_M)) {
        ERR("--M %s: explore takes 256 B .. 1M (it searches every plan again at "
            "each key; the report takes up to 1G)", sim_shown(val).s);
        return -1;
    }
    o->M_set |= id == CLI_O_M;
    if (rc > 0)
        return 0;
    switch (id) {
    case CLI_O_GPU: {
        const sim_gpu *g;
        if (cli_parse_gpu(val, &g, &o->gpu_list, err, errlen))
            return -1;
        if (g) {
            int n;
            const sim_gpu *all = sim_gpu_presets(&n);
            c->gpu = (int)(g - all);
        }
        return 0;
    }
    case CLI_O_ALGO: {
        sim_algo a;
        if (sim_algo_parse(val, &a) != 0) {
            char names[256];
            ERR("--algo %s: one loop order for v: %s", sim_shown(val).s,
                sim_algo_names(names, sizeof names, " or "));
            return -1;
        }
        c->view_algo = a;
        return 0;
    }
    case CLI_O_KEYS:
        o->keys = val;
        return 0;
    case CLI_O_HELP:
        o->help = 1;
        return 0;
    }
    return 0;
}

static int parse(int argc, char **argv, int first, explore_opts *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    viz_explore_config_default(&o->cfg);
    viz_explore_config *c = &o->cfg;
    explore_parse p = { o, { .sh = &c->sh, .Br = &c->Br, .Bc = &c->Bc,
                             .max_block = VIZ_EX_MAX_N } };
    if (cli_parse_each(argc, argv, first, CLI_CMD_EXPLORE, &o->help, explore_each, &p, err,
                       errlen) != 0)
        return -1;
    if (o->help || o->gpu_list)
        return 0;
    if (c->gpu >= 0 && o->M_set) {
        ERR("--gpu sets M to the preset's shared memory; give --gpu or --M, not both");
        return -1;
    }
    if (o->keys)
        for (const char *p = o->keys; *p; p++)
            if (!strchr(VIZ_EXPLORE_KEYS, *p)) {
                const unsigned char ch = (unsigned char)*p;
                if (ch > 32 && ch < 127)
                    ERR("--keys %s: unknown key '%c' at position %d; the keys are %s "
                        "(see 'fasim explore --help')", o->keys, ch, (int)(p - o->keys) + 1,
                        VIZ_EXPLORE_KEYS);
                else
                    ERR("--keys: unknown key (byte %d) at position %d; the keys are %s",
                        ch, (int)(p - o->keys) + 1, VIZ_EXPLORE_KEYS);
                return -1;
            }
    return 0;
}

/* "---- TEXT ------": a separator of VIZ_TEXT_W columns. */
static int separator(FILE *out, const char *text)
{
    char head[160];
    int n = snprintf(head, sizeof head, "---- %s ", text);
    if (fputs(head, out) == EOF)
        return -1;
    for (; n < VIZ_TEXT_W; n++)
        if (fputc('-', out) == EOF)
            return -1;
    return fputc('\n', out) == EOF ? -1 : 0;
}

/* Key 'v' in text mode: the view's first frame, or the reason there is none
 * (then the explore frame, with the reason as its message). */
static int text_view(viz_explore *e, const char *sep, FILE *out)
{
    viz_config vc;
    viz_explore_view_config(e, &vc);
    viz_model *m = NULL;
    char err[2048];
    const int rc = viz_model_build(&vc, &m, err, sizeof err);
    if (rc == VIZ_OK || rc == VIZ_EREFUSED) {
        char s[160];
        snprintf(s, sizeof s, "%s: the view of %s, step 1", sep, sim_algo_name(vc.algo));
        int w = separator(out, s) || viz_text_frame(out, m, VIZ_TEXT_W, VIZ_TEXT_H);
        viz_model_free(m);
        return w ? -1 : 0;
    }
    const size_t nl = strcspn(err, "\n");
    snprintf(e->msg, sizeof e->msg, "no view: %.*s", (int)nl, err);
    return separator(out, sep) || viz_explore_text_frame(out, e, VIZ_TEXT_W, VIZ_TEXT_H);
}

static int run_text(viz_explore *e, const char *keys)
{
    FILE *out = stdout;
    int bad = separator(out, "explore: start") ||
              viz_explore_text_frame(out, e, VIZ_TEXT_W, VIZ_TEXT_H);
    const int n = keys ? (int)strlen(keys) : 0;
    for (int k = 0; k < n && !bad; k++) {
        char sep[96];
        snprintf(sep, sizeof sep, "explore: key %d of %d '%c'", k + 1, n, keys[k]);
        const viz_explore_action act = viz_explore_key(e, (unsigned char)keys[k]);
        if (act == VIZ_EX_KEY_QUIT)
            break;
        if (act == VIZ_EX_KEY_VIEW)
            bad = text_view(e, sep, out);
        else
            bad = separator(out, sep) ||
                  viz_explore_text_frame(out, e, VIZ_TEXT_W, VIZ_TEXT_H);
    }
    if (fflush(out) != 0 || ferror(out) || bad) {
        fprintf(stderr, "fasim explore: cannot write the frames to stdout\n");
        return 1;
    }
    return 0;
}

int cli_explore_main(int argc, char **argv, int first)
{
    explore_opts o;
    char err[2048];
    if (parse(argc, argv, first, &o, err, sizeof err) != 0) {
        fprintf(stderr, "fasim explore: %s\n", err);
        return 2;
    }
    if (o.help) {
        usage(stdout);
        return 0;
    }
    if (o.gpu_list) {
        sim_gpu_print_table(stdout);
        return 0;                        /* main checks that stdout took it */
    }
    viz_explore e;
    if (viz_explore_init(&e, &o.cfg, err, sizeof err) != 0) {
        fprintf(stderr, "fasim explore: %s\n", err);
        return 2;
    }
    const int interactive = !o.keys && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
    if (!interactive)
        return run_text(&e, o.keys);
    const int rc = viz_curses_explore(&e, err, sizeof err);
    if (rc == 1)
        fprintf(stderr, "fasim explore: %s\n", err);
    return rc;
}
