/*
 * cli_sweep.c — `fasim sweep`: parse the options, run sim_sweep_run, print
 * the table and fits (text, --json or --csv), draw a progress bar on a
 * terminal, and write (and, with gnuplot installed, render) --plot.
 *
 * All the work is in study/sim_sweep.c and study/sim_plot.c; this file only
 * parses, dispatches and formats (docs/ARCHITECTURE.md, Layers). Exit status: 0, 2 for
 * bad usage (a malformed --vary, an unknown parameter, an empty range, a
 * plan that does not fit), 1 for other failures (I/O, gnuplot failing).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_args.h"
#include "cli_cmds.h"
#include "sim_outfile.h"
#include "sim_plot.h"
#include "sim_text.h"
#include "sim_sweep.h"
#include "sim_parse.h"

static void usage(FILE *out)
{
    cli_usage(out, CLI_CMD_SWEEP, NULL, 0);
}

#define ERRF(...) do { snprintf(err, errlen, __VA_ARGS__); } while (0)

/* One value of parameter p: a count for N, d, B_r and B_c, a size for M. */
static int parse_value(sim_param p, const char *opt, const char *s, int64_t *out, char *err,
                       size_t errlen)
{
    if (p == SIM_PARAM_M) {
        uint64_t v;
        if (cli_parse_sram(opt, s, &v, err, errlen) != 0)
            return -1;
        *out = (int64_t)v;
        return 0;
    }
    return cli_parse_count(opt, s, 1, p == SIM_PARAM_D ? SIM_MAX_D : SIM_MAX_N, out, err,
                           errlen);
}

/* The values of --vary spec, buf (a copy of what follows "P=", which this
 * cuts up), into ax. */
static int parse_values(const char *spec, sim_param p, const char *name, char *buf,
                        sim_axis *ax, char *err, size_t errlen)
{
    char opt[64];
    snprintf(opt, sizeof opt, "--vary %s", name);
    if (!buf[0]) {
        ERRF("--vary %s: no values after '='", sim_shown(spec).s);
        return -1;
    }
    char *dots = strstr(buf, "..");
    if (!dots) {
        /* A list (or one value). */
        int64_t v[SIM_AXIS_MAX_VALUES];
        int n = 0;
        for (char *tok = buf, *next; tok; tok = next) {
            next = strchr(tok, ',');
            if (next)
                *next++ = '\0';
            if (n == SIM_AXIS_MAX_VALUES) {
                ERRF("%s: more than %d values", opt, SIM_AXIS_MAX_VALUES);
                return -1;
            }
            if (parse_value(p, opt, tok, &v[n++], err, errlen) != 0)
                return -1;
        }
        char e2[256];
        if (sim_axis_list(ax, p, v, n, e2, sizeof e2) != 0) {
            ERRF("--vary %s: %s", sim_shown(spec).s, e2);
            return -1;
        }
        return 0;
    }
    *dots = '\0';
    char *lo_s = buf, *hi_s = dots + 2;
    if (!*lo_s || !*hi_s) {
        ERRF("--vary %s: a range needs both ends, LO..HI", sim_shown(spec).s);
        return -1;
    }
    sim_step_kind kind = SIM_STEP_MUL;
    int64_t step = 2;
    /* The step: the first '*' or '+' after HI's first character, with an
     * optional ':' before it. */
    char *st = NULL;
    for (char *q = hi_s + 1; *q; q++)
        if (*q == '*' || *q == '+' || *q == ':') {
            st = q;
            break;
        }
    if (st) {
        char *q = st;
        if (*q == ':')
            *q++ = '\0';
        if (*q != '*' && *q != '+') {
            ERRF("--vary %s: the step is *K or +K (e.g. *2, +64)", sim_shown(spec).s);
            return -1;
        }
        kind = *q == '*' ? SIM_STEP_MUL : SIM_STEP_ADD;
        *st = '\0';
        const char *sv = q + 1;
        char sopt[80];
        snprintf(sopt, sizeof sopt, "%s step", opt);
        if (kind == SIM_STEP_ADD && p == SIM_PARAM_M) {
            if (parse_value(p, sopt, sv, &step, err, errlen) != 0)
                return -1;
        } else if (cli_parse_count(sopt, sv, 1, INT64_MAX, &step, err, errlen) != 0) {
            return -1;
        }
    }
    int64_t lo, hi;
    if (parse_value(p, opt, lo_s, &lo, err, errlen) != 0 ||
        parse_value(p, opt, hi_s, &hi, err, errlen) != 0)
        return -1;
    char e2[256];
    if (sim_axis_range(ax, p, lo, hi, kind, step, e2, sizeof e2) != 0) {
        ERRF("--vary %s: %s", sim_shown(spec).s, e2);
        return -1;
    }
    return 0;
}


/* --vary P=LO..HI[STEP] or P=V1,V2,... into ax. */
static int parse_vary(const char *spec, sim_axis *ax, char *err, size_t errlen)
{
    const char *eq = strchr(spec, '=');
    if (!eq) {
        ERRF("--vary %s: expected P=LO..HI (e.g. N=256..65536, M=16K..256K, d=32..256+32, Bc=16..512)",
             sim_shown(spec).s);
        return -1;
    }
    char name[16];
    size_t nl = (size_t)(eq - spec);
    if (nl == 0 || nl >= sizeof name) {
        ERRF("--vary %s: unknown parameter '%s' (N, d, M, Br or Bc)", sim_shown(spec).s,
             sim_shown_n(spec, nl).s);
        return -1;
    }
    memcpy(name, spec, nl);
    name[nl] = '\0';
    sim_param p;
    if (sim_param_parse(name, &p) != 0) {
        ERRF("--vary %s: unknown parameter '%s' (N, d, M, Br or Bc)", sim_shown(spec).s,
             sim_shown(name).s);
        return -1;
    }
    /* No bound on the text beyond the arguments' own: a list of
     * SIM_AXIS_MAX_VALUES values is as long as it needs to be. */
    char *buf = strdup(eq + 1);
    if (!buf) {
        ERRF("--vary: out of memory");
        return -1;
    }
    int rc = parse_values(spec, p, name, buf, ax, err, errlen);
    free(buf);
    return rc;
}

typedef struct {
    int json, csv, no_progress, help, gpu_list;
    const char *plot;
    int fixed_set[SIM_PARAM_COUNT];
    sim_sweep_spec spec;
} sweep_opts;

/* Scan argv[*k], one of the sweep's options: its CLI_O_* id with *val set
 * (NULL for a switch) and *k past a separate value; CLI_OPT_HELP for -h and
 * --help; or -1 with a message. */
static int scan_option(int argc, char **argv, int *k, const char **val, char *err,
                       size_t errlen)
{
    const char *arg = argv[*k];
    *val = NULL;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
        return CLI_OPT_HELP;
    if (strncmp(arg, "--", 2) != 0 || !arg[2]) {
        ERRF("sweep: unexpected argument '%s'; see 'fasim sweep --help'", sim_shown(arg).s);
        return -1;
    }
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t nl = eq ? (size_t)(eq - name) : strlen(name);
    const int id = nl < 32 ? cli_option_find(CLI_CMD_SWEEP, name, nl) : -1;
    if (nl >= 32) {
        ERRF("sweep: unknown option '%s'; see 'fasim sweep --help'", sim_shown(arg).s);
        return -1;
    }
    if (id < 0 || id == CLI_O_HELP) {       /* --help=... is no option */
        ERRF("sweep: unknown option '--%.*s'; see 'fasim sweep --help'", (int)nl, name);
        return -1;
    }
    if (!CLI_OPTIONS[id].arg) {
        if (eq) {
            ERRF("--%s takes no value", CLI_OPTIONS[id].name);
            return -1;
        }
    } else if (eq) {
        *val = eq + 1;
    } else if (!(*val = cli_take_value(argc, argv, k))) {
        ERRF("--%s needs a value; see 'fasim sweep --help'", CLI_OPTIONS[id].name);
        return -1;
    }
    return id;
}

/* --vary SPEC: one more axis, of a parameter not yet varied. */
static int add_axis(sim_sweep_spec *sp, const char *val, char *err, size_t errlen)
{
    if (sp->naxes == SIM_PARAM_COUNT) {
        ERRF("--vary: at most %d parameters (N, d, M, Br, Bc)", SIM_PARAM_COUNT);
        return -1;
    }
    if (parse_vary(val, &sp->axes[sp->naxes], err, errlen) != 0)
        return -1;
    for (int a = 0; a < sp->naxes; a++)
        if (sp->axes[a].param == sp->axes[sp->naxes].param) {
            ERRF("--vary %s: %s is already varied; a grid needs two different "
                 "parameters", sim_shown(val).s, sim_param_name(sp->axes[a].param));
            return -1;
        }
    sp->naxes++;
    return 0;
}

/* One of the sweep's own options (not a problem option). Returns 0 or -1. */
static int sweep_option(sweep_opts *o, int id, const char *optname, const char *val,
                        char *err, size_t errlen)
{
    sim_sweep_spec *sp = &o->spec;
    int64_t n;
    switch (id) {
    case CLI_O_VARY:
        return add_axis(sp, val, err, errlen);
    case CLI_O_ALGO:
        return cli_parse_algos(val, sp->run_algo, err, errlen);
    case CLI_O_GPU:
        return cli_parse_gpu(val, &sp->gpu, &o->gpu_list, err, errlen);
    case CLI_O_ENGINE:
        if (!strcmp(val, "auto"))
            sp->engine = SIM_ENGINE_AUTO;
        else if (!strcmp(val, "sim"))
            sp->engine = SIM_ENGINE_SIM;
        else if (!strcmp(val, "closed-form") || !strcmp(val, "closed"))
            sp->engine = SIM_ENGINE_CLOSED;
        else {
            ERRF("--engine %s: unknown engine (auto, sim or closed-form)", sim_shown(val).s);
            return -1;
        }
        return 0;
    case CLI_O_MAX_STEPS:
        if (cli_parse_count(optname, val, 1, INT64_MAX, &n, err, errlen))
            return -1;
        sp->max_steps = (uint64_t)n;
        return 0;
    case CLI_O_PLOT: o->plot = val; return 0;
    case CLI_O_JSON: o->json = 1; return 0;
    case CLI_O_CSV: o->csv = 1; return 0;
    case CLI_O_NO_PROGRESS: o->no_progress = 1; return 0;
    }
    return 0;
}

/* What the options say together: an axis, no parameter both fixed and
 * varied, one output format, the plan, M from a preset, the plot. */
static int sweep_combinations(sweep_opts *o, char *err, size_t errlen)
{
    sim_sweep_spec *sp = &o->spec;
    if (sp->naxes == 0) {
        ERRF("sweep needs --vary P=LO..HI (e.g. --vary N=256..65536); see "
             "'fasim sweep --help'");
        return -1;
    }
    for (int a = 0; a < sp->naxes; a++)
        if (o->fixed_set[sp->axes[a].param]) {
            ERRF("--%s is fixed but also varied by --vary %s; drop one",
                 sim_param_name(sp->axes[a].param), sim_param_name(sp->axes[a].param));
            return -1;
        }
    if (o->json && o->csv) {
        ERRF("--json and --csv: choose one output format");
        return -1;
    }
    if (sp->plan_kind == SIM_PLAN_PAPER && (sp->Br || sp->Bc)) {
        ERRF("--plan paper sets B_r and B_c itself; drop --Br/--Bc or the --plan");
        return -1;
    }
    for (int a = 0; a < sp->naxes; a++)
        if (sim_param_is_block(sp->axes[a].param) && sp->plan_kind == SIM_PLAN_PAPER) {
            ERRF("--plan paper sets B_r and B_c itself; drop --vary %s or the --plan",
                 sim_param_name(sp->axes[a].param));
            return -1;
        }
    if (sp->Br || sp->Bc)
        sp->plan_kind = SIM_PLAN_USER;
    if (sp->gpu && !o->fixed_set[SIM_PARAM_M])
        sp->base.M = sp->gpu->smem_per_block;
    if (o->plot) {
        if (!sim_plot_format_ok(o->plot)) {
            ERRF("--plot %s: the image must end in .svg or .png", sim_shown(o->plot).s);
            return -1;
        }
        if (sp->naxes != 1) {
            ERRF("--plot draws one varied parameter; this sweep varies %d (drop a --vary, "
                 "or plot from --csv)", sp->naxes);
            return -1;
        }
    }
    return 0;
}

static int parse_args(int argc, char **argv, int first, sweep_opts *o, char *err,
                      size_t errlen)
{
    memset(o, 0, sizeof *o);
    sim_sweep_spec *sp = &o->spec;
    sp->base = (sim_shape){ .N = 1024, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16, .causal = 0 };
    for (int a = 0; a < sim_algo_count(); a++)      /* the default set */
        sp->run_algo[a] = sim_algo_in_default((sim_algo)a);
    sp->plan_kind = SIM_PLAN_AUTO;
    sp->engine = SIM_ENGINE_AUTO;
    cli_problem prob = { .sh = &sp->base, .Br = &sp->Br, .Bc = &sp->Bc,
                         .plan = &sp->plan_kind };
    cli_given given = { { 0, 0 } };      /* --vary comes once per varied parameter */
    for (int k = first; k < argc; k++) {
        const char *val;
        int id = scan_option(argc, argv, &k, &val, err, errlen);
        if (id == -1)
            return -1;
        if (id == CLI_OPT_HELP) {
            o->help = 1;
            continue;
        }
        char optname[40];
        snprintf(optname, sizeof optname, "--%s", CLI_OPTIONS[id].name);
        if (id != CLI_O_VARY && cli_given_twice(&given, id, optname, err, errlen) != 0)
            return -1;
        int rc = cli_parse_problem_opt(&prob, id, optname, val, err, errlen);
        if (rc == 0)
            rc = sweep_option(o, id, optname, val, err, errlen);
        if (rc < 0)
            return -1;
        o->fixed_set[SIM_PARAM_N] |= id == CLI_O_N;
        o->fixed_set[SIM_PARAM_D] |= id == CLI_O_D;
        o->fixed_set[SIM_PARAM_M] |= id == CLI_O_M;
        o->fixed_set[SIM_PARAM_BR] |= id == CLI_O_BR;
        o->fixed_set[SIM_PARAM_BC] |= id == CLI_O_BC;
    }
    if (o->help || o->gpu_list)
        return 0;
    return sweep_combinations(o, err, errlen);
}

/* ---- progress bar ------------------------------------------------------------- */

typedef struct {
    double start, last;
    int shown;
} progress;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Drawn on stderr once the sweep has taken 0.3 s ("more than a moment"),
 * then at most ten times a second. */
static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    progress *pg = ctx;
    double t = now_s();
    if (t - pg->start < 0.3 || (t - pg->last < 0.1 && done < total))
        return;
    pg->last = t;
    pg->shown = 1;
    double f = total ? (double)done / (double)total : 1.0;
    int w = 40, fill = (int)(f * w + 0.5);
    char bar[48];
    for (int k = 0; k < w; k++)
        bar[k] = k < fill ? '#' : '.';
    bar[w] = '\0';
    double eta = f > 0 ? (t - pg->start) * (1.0 - f) / f : 0.0;
    fprintf(stderr, "\r  sweep [%s] %3.0f%%  %.1f s, about %.0f s left ", bar, 100.0 * f,
            t - pg->start, eta);
    fflush(stderr);
}

/* ---- the plot --------------------------------------------------------------------- */

/* Run gnuplot on script (a path relative to dir, "./"- or "../"-first) from
 * dir. Returns its exit status, or -1 if it could not be started or ended
 * by a signal. */
static int run_gnuplot(const char *gnuplot, const char *dir, const char *script)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (chdir(dir) != 0)
            _exit(126);
        execl(gnuplot, "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    sim_outfile_guard_child(pid);        /* killed with us: no orphan drawing on */
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            sim_outfile_guard_child(0);
            return -1;
        }
    sim_outfile_guard_child(0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The image whole or not at all. gnuplot writes it where the script says,
 * by its bare name in the working directory, so it runs in a new folder
 * beside the image (".fasim-plot-XXXXXX") that holds a link to the data;
 * the finished image is renamed over the old one, which a failure leaves
 * as it was. Every temporary goes when this returns, or when a signal ends
 * the process. Returns gnuplot's status, or -1 (it could not run, or wrote
 * no image), with errno-style detail in *why when the folder or the link
 * could not be made. */
/* Whether gnuplot wrote the whole picture: it exits 0 even when a write
 * fails (a full disk), leaving a cut file. An SVG ends with its closing
 * tag; a PNG with its IEND chunk, whose 12 bytes are fixed. */
static int image_complete(const char *path)
{
    static const unsigned char iend[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D',
                                            0xae, 0x42, 0x60, 0x82 };
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    unsigned char tail[64];
    size_t n = 0;
    if (fseek(f, -(long)sizeof tail, SEEK_END) != 0)
        rewind(f);
    n = fread(tail, 1, sizeof tail, f);
    fclose(f);
    const size_t len = strlen(path);
    if (len >= 4 && !strcasecmp(path + len - 4, ".png"))
        return n >= sizeof iend && !memcmp(tail + n - sizeof iend, iend, sizeof iend);
    /* SVG: "</svg>" and nothing after it but white space */
    size_t end = n;
    while (end > 0 && (tail[end - 1] == '\n' || tail[end - 1] == ' ' || tail[end - 1] == '\r'))
        end--;
    return end >= 6 && !memcmp(tail + end - 6, "</svg>", 6);
}

static int render_image(const char *gnuplot, const char *image, const char *dat,
                        const char *gp, int *why)
{
    char folder[4096], tmpdir[4200], link_path[8400], tmp_image[8400];
    char script[4200], rel[4200];
    const char *slash = strrchr(image, '/');
    const char *img = slash ? slash + 1 : image;
    const char *datname = strrchr(dat, '/') ? strrchr(dat, '/') + 1 : dat;
    const char *gpname = strrchr(gp, '/') ? strrchr(gp, '/') + 1 : gp;
    snprintf(folder, sizeof folder, "%.*s", slash ? (int)(slash - image) : 1,
             slash ? image : ".");
    if (slash == image)
        strcpy(folder, "/");
    *why = 0;
    if (snprintf(tmpdir, sizeof tmpdir, "%s/.fasim-plot-XXXXXX", folder) >= 4096 ||
        strlen(tmpdir) + 1 + strlen(datname) >= 4096 ||
        strlen(tmpdir) + 1 + strlen(img) >= 4096) {
        *why = ENAMETOOLONG;
        return -1;
    }
    if ((*why = sim_outfile_mkdtemp(tmpdir)) != 0)
        return -1;
    /* mkdtemp wrote the folder's name into tmpdir: the two paths inside it follow. */
    snprintf(link_path, sizeof link_path, "%s/%s", tmpdir, datname);
    snprintf(tmp_image, sizeof tmp_image, "%s/%s", tmpdir, img);
    snprintf(script, sizeof script, "../%s", gpname);
    snprintf(rel, sizeof rel, "../%s", datname);
    sim_outfile_guard(link_path);
    sim_outfile_guard(tmp_image);
    int rc = -1;
    if (link(dat, link_path) == 0 || symlink(rel, link_path) == 0) {
        rc = run_gnuplot(gnuplot, tmpdir, script);
        if (rc == 0 && !image_complete(tmp_image)) {
            *why = -1;                   /* gnuplot says 0 even when a write failed */
            rc = -1;
        }
        if (rc == 0 && rename(tmp_image, image) != 0) {
            *why = errno;
            rc = -1;
        }
    } else {
        *why = errno;
    }
    unlink(tmp_image);
    unlink(link_path);
    rmdir(tmpdir);
    sim_outfile_unguard(tmp_image);
    sim_outfile_unguard(link_path);
    sim_outfile_unguard(tmpdir);
    return rc;
}

static int do_plot(const sim_sweep_result *res, const char *image)
{
    char dat[4096], gp[4096], err[512];
    int e = sim_outfile_check(image);
    if (e) {
        fprintf(stderr, "fasim: --plot %s: cannot write: %s\n", image, strerror(e));
        return SIM_EFAIL;
    }
    if (sim_plot_write(res, image, dat, sizeof dat, gp, sizeof gp, err, sizeof err) != 0) {
        fprintf(stderr, "fasim: %s\n", err);
        return SIM_EFAIL;
    }
    char gnuplot[4096];
    if (sim_outfile_find_program("gnuplot", "FASIM_GNUPLOT", gnuplot, sizeof gnuplot) != 0) {
        /* The suggested command quotes the names for a shell: pasted, it runs
         * gnuplot and nothing else. */
        const char *slash = strrchr(gp, '/');
        char dir[4096], wdir[8400], wgp[8400];
        if (slash) {
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - gp), gp);
            fprintf(stderr, "fasim: --plot: gnuplot is not installed, so no picture was drawn; "
                    "wrote %s and %s. Render with:\n"
                    "  cd %s && gnuplot %s\n", dat, gp, sim_shell_word(wdir, sizeof wdir, dir),
                    sim_shell_word(wgp, sizeof wgp, slash + 1));
        } else {
            fprintf(stderr, "fasim: --plot: gnuplot is not installed, so no picture was drawn; "
                    "wrote %s and %s. Render with:\n"
                    "  gnuplot %s\n", dat, gp, sim_shell_word(wgp, sizeof wgp, gp));
        }
        fprintf(stderr, "  (Debian/Ubuntu: apt-get install gnuplot-nox)\n");
        /* The picture asked for is not there: a failure, though the data
         * and the script are. */
        return SIM_EFAIL;
    }
    int why;
    int rc = render_image(gnuplot, image, dat, gp, &why);
    if (rc != 0 && why < 0) {
        fprintf(stderr, "fasim: --plot %s: gnuplot's picture is cut short (a full disk?); "
                "the old image is as it was, the data and the script are in %s and %s\n",
                image, dat, gp);
        return SIM_EFAIL;
    }
    if (rc != 0 && why) {
        fprintf(stderr, "fasim: --plot %s: cannot render beside it: %s; the data and the "
                "script are in %s and %s\n", image, strerror(why), dat, gp);
        return SIM_EFAIL;
    }
    if (rc != 0) {
        fprintf(stderr, "fasim: gnuplot (%s) failed (status %d) on %s; the data and the "
                "script are in %s and %s\n", gnuplot, rc, gp, dat, gp);
        return SIM_EFAIL;
    }
    fprintf(stderr, "fasim: wrote %s (from %s and %s, which you can restyle)\n", image, dat, gp);
    return SIM_OK;
}

/* ---- main ---------------------------------------------------------------------------- */

int cli_sweep_parse_check(int argc, char **argv, int first, char *err, size_t errlen)
{
    sweep_opts *o = malloc(sizeof *o);
    if (!o) {
        ERRF("out of memory");
        return -1;
    }
    int rc = parse_args(argc, argv, first, o, err, errlen);
    free(o);
    return rc;
}

int cli_sweep_main(int argc, char **argv, int first)
{
    sweep_opts *o = malloc(sizeof *o);   /* three axes of 1024 values: keep off the stack */
    if (!o) {
        fprintf(stderr, "fasim: out of memory\n");
        return SIM_EFAIL;
    }
    char err[2048];
    int rc = SIM_OK;
    if (parse_args(argc, argv, first, o, err, sizeof err) != 0) {
        fprintf(stderr, "fasim: %s\n", err);
        free(o);
        return SIM_EUSAGE;
    }
    if (o->help) {
        usage(stdout);
        free(o);
        return SIM_OK;
    }
    if (o->gpu_list) {
        sim_gpu_print_table(stdout);
        free(o);
        return SIM_OK;                   /* main checks that stdout took it */
    }
    progress pg = { now_s(), 0.0, 0 };
    if (!o->no_progress && isatty(STDERR_FILENO)) {
        o->spec.progress = on_progress;
        o->spec.progress_ctx = &pg;
    }
    sim_sweep_result *res = malloc(sizeof *res);
    if (!res) {
        fprintf(stderr, "fasim: out of memory\n");
        free(o);
        return SIM_EFAIL;
    }
    rc = sim_sweep_run(&o->spec, res, err, sizeof err);
    if (pg.shown) {
        fprintf(stderr, "\r%*s\r", 79, "");
        fflush(stderr);
    }
    if (rc != SIM_OK) {
        fprintf(stderr, "fasim: %s\n", err);
        free(res);
        free(o);
        return rc;
    }
    if (o->json)
        sim_sweep_json(stdout, res);
    else if (o->csv)
        sim_sweep_csv(stdout, res);
    else
        sim_sweep_text(stdout, res);
    if ((o->json || o->csv) && res->engine_note[0])
        fprintf(stderr, "fasim: note: %s\n", res->engine_note);
    if (o->plot) {
        int prc = do_plot(res, o->plot);
        if (prc != SIM_OK)
            rc = prc;
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "fasim: cannot write to stdout\n");
        rc = SIM_EFAIL;
    }
    sim_sweep_free(res);
    free(res);
    free(o);
    return rc;
}
