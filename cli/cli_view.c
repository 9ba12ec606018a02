/*
 * cli_view.c — `fasim view`: one run of one loop order, step by step.
 *
 * On a terminal (stdin and stdout both ttys) it opens the interactive view
 * (viz/viz_curses.c); otherwise it prints the frames as plain text
 * (viz/viz_text.c), which is also how the tests see it. Parsing, dispatch
 * and messages only: the model and the renderers live in viz/.
 *
 * Exit status: 0 success, 2 bad usage (including a plan that does not fit
 * and a run too large to record), 1 other failures (.npy data, memory, I/O).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli_args.h"
#include "cli_cmds.h"
#include "cli_inputs.h"
#include "sim_limits.h"
#include "sim_npy.h"
#include "sim_parse.h"
#include "sim_report.h"
#include "viz_curses.h"
#include "viz_model.h"
#include "viz_text.h"
#ifdef FASIM_HAVE_SDL2
#include "viz_sdl.h"
#endif

/* Frames printed by default when the output is not a terminal: every step of
 * a small run, and this many of a larger one (a note says how to see more). */
#define VIEW_DEFAULT_FRAMES 200
/* --fps: VIZ_SDL_REC_MAX_FPS, which a build without SDL2 does not have. */
#define VIEW_MAX_FPS 50
#ifdef FASIM_HAVE_SDL2
_Static_assert(VIEW_MAX_FPS == VIZ_SDL_REC_MAX_FPS, "--fps's bound is the recorder's");
#endif

typedef struct {
    viz_config cfg;
    int help;
    int64_t frames;            /* 0: default */
    int64_t step;              /* 1-based; 0: first */
    const char *q_path, *k_path, *v_path;
    int N_set, d_set, Nk_set;
    int sdl;                   /* --sdl: the SDL2 window */
    const char *screenshot;    /* --screenshot FILE (.png or .bmp) */
    int64_t width, height;     /* --size WxH for the SDL2 outputs; 0: default */
    int theme;                 /* --theme: 0 (not given), 1 light, 2 dark */
    const char *record;        /* --record FILE (.gif, .mp4, a folder) */
    int format;                /* --format: 0 (not given), 1 png, 2 svg */
    int64_t fps;               /* --fps; 0: default */
    sim_ring_req ring;         /* --ring P: the ring's rounds instead (ring.P > 0) */
    int ring_order_set;        /* --ring-order given */
    int unfused_ops_set;       /* --unfused-ops given */
    const char *block_mask;    /* --block-mask: a pattern or a file */
} view_opts;

static void usage(FILE *out)
{
    const int nums[] = { VIEW_DEFAULT_FRAMES, VIEW_DEFAULT_FRAMES };
    cli_usage(out, CLI_CMD_VIEW, nums, 2);
}

#define ERR(...) snprintf(err, errlen, __VA_ARGS__)

/* --algo: the one loop order the view shows. */
static int parse_algo(viz_config *c, const char *val, char *err, size_t errlen)
{
    int run[SIM_ALGO_MAX], count = 0;
    if (cli_parse_algos(val, run, err, errlen))
        return -1;
    for (int a = 0; a < sim_algo_count(); a++)
        if (run[a]) {
            c->algo = (sim_algo)a;
            count++;
        }
    if (count != 1) {
        char names[256];
        ERR("--algo %s: the view shows one loop order (%s); press 'a' in the view to switch",
            sim_shown(val).s, sim_algo_names(names, sizeof names, " or "));
        return -1;
    }
    return 0;
}

/* --size WxH: two counts joined by 'x'. */
static int parse_size(view_opts *o, const char *val, char *err, size_t errlen)
{
    char wbuf[32];
    const char *x = strchr(val, 'x');
    size_t wl = x ? (size_t)(x - val) : 0;
    if (!x || wl == 0 || wl >= sizeof wbuf) {
        ERR("--size %s: expected WIDTHxHEIGHT, e.g. 1280x800", sim_shown(val).s);
        return -1;
    }
    memcpy(wbuf, val, wl);
    wbuf[wl] = '\0';
    if (cli_parse_count("--size width", wbuf, 160, 8192, &o->width, err, errlen) ||
        cli_parse_count("--size height", x + 1, 120, 8192, &o->height, err, errlen))
        return -1;
    return 0;
}

/* The view's state while its options are parsed. */
typedef struct {
    view_opts *o;
    cli_problem prob;
    int compute, count_only;
} view_parse;

/* One of the view's own options (not a problem option). Returns 0 or -1. */
static int view_option(view_parse *p, int id, const char *optname, const char *val, char *err,
                       size_t errlen)
{
    view_opts *o = p->o;
    viz_config *c = &o->cfg;
    int64_t n;
    switch (id) {
    case CLI_O_ALGO:
        return parse_algo(c, val, err, errlen);
    case CLI_O_PASS:
        if (strcmp(val, "fwd") != 0 && strcmp(val, "bwd") != 0) {
            ERR("--pass %s: the view steps through one pass: fwd or bwd", sim_shown(val).s);
            return -1;
        }
        c->run.pass = !strcmp(val, "bwd") ? SIM_BWD : SIM_FWD;
        return 0;
    case CLI_O_SPLITS:
        return cli_parse_count(optname, val, 1, SIM_MAX_HEADS, &c->run.splits, err, errlen);
    case CLI_O_INTERMEDIATES:
        return cli_parse_intermediates(val, &c->run.intermediates, err, errlen);
    case CLI_O_UNFUSED_OPS:
        o->unfused_ops_set = 1;
        return cli_parse_unfused_ops(val, &c->run.unfused_ops, err, errlen);
    case CLI_O_SEED:
        if (cli_parse_count(optname, val, 0, INT64_MAX, &n, err, errlen))
            return -1;
        c->seed = (uint64_t)n;
        return 0;
    case CLI_O_BLOCK_MASK: o->block_mask = val; return 0;
    case CLI_O_Q: o->q_path = val; return 0;
    case CLI_O_K: o->k_path = val; return 0;
    case CLI_O_V: o->v_path = val; return 0;
    case CLI_O_COMPUTE: p->compute = 1; return 0;
    case CLI_O_COUNT_ONLY: p->count_only = 1; return 0;
    case CLI_O_STEP:
        return cli_parse_count(optname, val, 1, INT64_MAX, &o->step, err, errlen);
    case CLI_O_FRAMES:
        return cli_parse_count(optname, val, 1, INT64_MAX, &o->frames, err, errlen);
    case CLI_O_ROW:
        return cli_parse_count(optname, val, 0, SIM_MAX_N, &c->out_row, err, errlen);
    case CLI_O_SDL: o->sdl = 1; return 0;
    case CLI_O_SCREENSHOT: o->screenshot = val; return 0;
    case CLI_O_SIZE:
        return parse_size(o, val, err, errlen);
    case CLI_O_THEME:
        if (strcmp(val, "light") != 0 && strcmp(val, "dark") != 0) {
            ERR("--theme %s: expected light or dark", sim_shown(val).s);
            return -1;
        }
        o->theme = !strcmp(val, "dark") ? 2 : 1;
        return 0;
    case CLI_O_RECORD: o->record = val; return 0;
    case CLI_O_FORMAT:
        if (strcmp(val, "png") != 0 && strcmp(val, "svg") != 0) {
            ERR("--format %s: expected png or svg", sim_shown(val).s);
            return -1;
        }
        o->format = !strcmp(val, "svg") ? 2 : 1;
        return 0;
    case CLI_O_FPS:
        return cli_parse_count(optname, val, 1, VIEW_MAX_FPS, &o->fps, err, errlen);
    case CLI_O_HELP: o->help = 1; return 0;
    case CLI_O_RING:
    case CLI_O_RING_ORDER:
        o->ring_order_set |= id == CLI_O_RING_ORDER;
        return cli_parse_ring_opt(&o->ring, id, optname, val, err, errlen) < 0 ? -1 : 0;
    }
    return 0;
}

/* Options that contradict each other, and the mode. */
static int view_combinations(view_opts *o, int compute, int count_only, char *err,
                             size_t errlen)
{
    viz_config *c = &o->cfg;
    /* The registry says which loop orders serve the options; the message
     * names the option to change. */
    if (c->run.splits > 1 && sim_run_opts_check(c->algo, &c->run, NULL, 0) != 0) {
        ERR("--splits is a plan of FA2's forward pass: %s",
            c->algo != SIM_FA2 ? "add --algo fa2" : "drop --pass bwd");
        return -1;
    }
    if (o->unfused_ops_set && !(sim_algo_loop(c->algo)->flags & SIM_LOOP_FRAMEWORK)) {
        ERR("--unfused-ops chooses the operations of unfused alone: add --algo unfused");
        return -1;
    }
    const int drawn = o->sdl || o->screenshot || o->record;
    if (drawn && (c->run.pass == SIM_BWD || c->run.splits > 1)) {
        ERR("the SDL view draws the forward loop orders; step through the backward "
            "pass and split-KV in the terminal view (drop --sdl/--screenshot/--record)");
        return -1;
    }
    if (!!o->sdl + !!o->screenshot + !!o->record > 1) {
        ERR("--sdl opens a window, --screenshot writes a picture and --record an "
            "animation: choose one");
        return -1;
    }
    if ((o->width || o->height) && !drawn) {
        ERR("--size applies to --sdl, --screenshot and --record only");
        return -1;
    }
    if (o->theme && !drawn) {
        ERR("--theme applies to --sdl, --screenshot and --record only");
        return -1;
    }
    if ((o->format || o->fps) && !o->record) {
        ERR("%s applies to --record only", o->format ? "--format" : "--fps");
        return -1;
    }
    if (o->ring.P) {
        const char *no = drawn ? "--sdl, --screenshot and --record (the rounds are text)"
                         : c->algo != SIM_FA2 ? "--algo (each round is one fa2 run)"
                         : c->run.pass == SIM_BWD ? "--pass bwd (the ring's forward pass)"
                         : c->run.splits > 1 ? "--splits"
                         : o->q_path ? "--q, --k, --v (the rounds run on seeded inputs)"
                         : o->step || o->frames ? "--step and --frames (every round is shown)"
                         : o->block_mask ? "--block-mask (the rounds are dense blocks)"
                         : NULL;
        if (no) {
            ERR("--ring cannot be combined with %s", no);
            return -1;
        }
        if (sim_ring_check(&c->sh, &o->ring, err, errlen) != 0)
            return -1;
        if (c->out_row >= c->sh.N / o->ring.P) {
            ERR("--row %lld with --ring %d: a local row of a device, 0 .. %lld",
                (long long)c->out_row, o->ring.P, (long long)(c->sh.N / o->ring.P - 1));
            return -1;
        }
    } else if (o->ring_order_set) {
        ERR("--ring-order goes with --ring P");
        return -1;
    }
    const int nfiles = cli_check_data_options(compute, count_only, o->q_path, o->k_path,
                                              o->v_path, err, errlen);
    if (nfiles < 0 || cli_check_plan_options(nfiles, count_only, &c->plan_kind, c->Br, c->Bc,
                                             err, errlen) != 0)
        return -1;
    c->mode = compute ? VIZ_MODE_COMPUTE : count_only ? VIZ_MODE_COUNT : VIZ_MODE_AUTO;
    return 0;
}

/* One option of the view: a problem option or one of its own. */
static int view_each(void *ctx, int id, const char *optname, const char *val, char *err,
                     size_t errlen)
{
    view_parse *p = ctx;
    int rc = cli_parse_problem_opt(&p->prob, id, optname, val, err, errlen);
    if (rc == 0)
        rc = view_option(p, id, optname, val, err, errlen);
    p->o->N_set |= id == CLI_O_N;
    p->o->d_set |= id == CLI_O_D;
    return rc < 0 ? -1 : 0;
}

static int parse(int argc, char **argv, int first, view_opts *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    viz_config_default(&o->cfg);
    viz_config *c = &o->cfg;
    view_parse p = { o, { .sh = &c->sh, .Br = &c->Br, .Bc = &c->Bc, .plan = &c->plan_kind,
                          .plan_same = 1, .no_kernel = 1 },
                     0, 0 };
    if (cli_parse_each(argc, argv, first, CLI_CMD_VIEW, &o->help, view_each, &p, err,
                       errlen) != 0)
        return -1;
    if (o->help)
        return 0;
    /* N_q = --Nq or N, N_k = --Nk or N (kept only where it differs). */
    o->N_set |= p.prob.Nq != 0;
    if (p.prob.Nq)
        c->sh.N = p.prob.Nq;
    c->sh.Nk = p.prob.Nk && p.prob.Nk != c->sh.N ? p.prob.Nk : 0;
    o->Nk_set = p.prob.Nk != 0;
    return view_combinations(o, p.compute, p.count_only, err, errlen);
}

/* Load --q/--k/--v; N and d come from the files. Returns 0, or an exit
 * status with the message printed. */
static int load_inputs(view_opts *o, sim_npy_matrix m[4])
{
    /* The view computes at most N^2 d = 2^34 multiply-adds, so N d <= 2^24
     * elements per tensor is generous (64 MiB of float32). */
    const cli_inputs_spec spec = {
        .q_path = o->q_path, .k_path = o->k_path, .v_path = o->v_path,
        .max_elems = INT64_C(1) << 24, .one_head = "the view shows one head",
        .N_set = o->N_set, .Nk_set = o->Nk_set, .d_set = o->d_set,
    };
    viz_config *c = &o->cfg;
    char err[1024];
    int rc = cli_inputs_load(&spec, &c->sh, &c->run, m, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "fasim view: %s\n", err);
        return rc;
    }
    /* The inputs in HBM hold values of the dtype, as in the report. */
    for (int k = 0; k < 3; k++)
        sim_round_to_dtype(m[k].data, m[k].rows * m[k].cols, c->sh.dtype);
    c->Q = m[0].data;
    c->K = m[1].data;
    c->V = m[2].data;
    return 0;
}

static int run_text(viz_model *model, const view_opts *o)
{
    const viz_info *in = viz_model_info(model);
    uint64_t first = o->step ? (uint64_t)o->step - 1 : 0;
    if (!in->refused && first >= in->nsteps) {
        fprintf(stderr, "fasim view: --step %lld: the run has %llu steps\n",
                (long long)o->step, (unsigned long long)in->nsteps);
        return 2;
    }
    uint64_t count = o->frames ? (uint64_t)o->frames : VIEW_DEFAULT_FRAMES;
    const uint64_t left = in->nsteps > first ? in->nsteps - first : 0;
    if (!o->frames && left > VIEW_DEFAULT_FRAMES)
        fprintf(stderr, "fasim view: printing %d of %llu steps; --frames K prints more, "
                "--step K starts elsewhere\n", VIEW_DEFAULT_FRAMES,
                (unsigned long long)left);
    if (viz_text_frames(stdout, model, first, count, VIZ_TEXT_W, VIZ_TEXT_H) != 0) {
        fprintf(stderr, "fasim view: cannot write the frames to stdout\n");
        return 1;
    }
    return 0;
}

/* --record: whether FILE can be written and by what, before the run is
 * built (an unwritable place, a missing ffmpeg fail before any work).
 * Returns 0 or the exit status, with the message printed. */
static int record_check(const view_opts *o)
{
#ifdef FASIM_HAVE_SDL2
    const viz_sdl_rec rec = { .path = o->record, .frames_svg = o->format == 2 };
    viz_sdl_rec_kind kind;
    char err[1024];
    int rc = viz_sdl_record_check(&rec, &kind, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "fasim view: %s\n", sim_shown(err).s);
    return rc;
#else
    (void)o;
    fprintf(stderr, "fasim view: built without SDL2: install libsdl2-dev and rebuild to "
            "use --record\n");
    return 1;
#endif
}

/* --sdl, --screenshot and --record: the SDL2 renderer on the same model.
 * Returns the exit status. */
static int run_sdl(viz_model *model, const view_opts *o, const sim_npy_matrix npy[3])
{
#ifdef FASIM_HAVE_SDL2
    const viz_info *in = viz_model_info(model);
    viz_sdl_opts so;
    viz_sdl_opts_default(&so);
    so.Q = npy[0].data;
    so.K = npy[1].data;
    so.V = npy[2].data;
    so.width = (int)o->width;
    so.height = (int)o->height;
    so.theme = o->theme == 2 ? VIZ_SDL_THEME_DARK : VIZ_SDL_THEME_LIGHT;
    so.start_step = o->step ? (uint64_t)o->step - 1 : 0;
    if (!in->refused && so.start_step >= in->nsteps) {
        fprintf(stderr, "fasim view: --step %lld: the run has %llu steps\n",
                (long long)o->step, (unsigned long long)in->nsteps);
        return 2;
    }
    char serr[1024];
    int rc;
    if (o->record) {
        const viz_sdl_rec rec = { .path = o->record, .frames_svg = o->format == 2,
                                  .first = so.start_step, .count = (uint64_t)o->frames,
                                  .width = (int)o->width, .height = (int)o->height,
                                  .fps = (int)o->fps };
        rc = viz_sdl_record(model, &so, &rec, serr, sizeof serr);
        if (rc == 0) {
            /* what was written: the steps from --step, --frames of them or
             * to the run's last (as the recorder counts them) */
            const uint64_t left = in->nsteps - so.start_step;
            const uint64_t n = o->frames && (uint64_t)o->frames < left ? (uint64_t)o->frames
                                                                      : left;
            fprintf(stderr, "fasim view: wrote %llu frame%s (steps %llu to %llu) to %s\n",
                    (unsigned long long)n, n == 1 ? "" : "s",
                    (unsigned long long)so.start_step + 1,
                    (unsigned long long)(so.start_step + n), sim_shown(o->record).s);
        }
    } else if (o->screenshot) {
        rc = viz_sdl_screenshot(model, &so, so.start_step, o->screenshot, (int)o->width,
                                (int)o->height, serr, sizeof serr);
        if (rc == 0)
            fprintf(stderr, "fasim view: wrote step %llu to %s\n",
                    (unsigned long long)so.start_step + 1, sim_shown(o->screenshot).s);
    } else {
        rc = viz_sdl_run(model, &so, serr, sizeof serr);
    }
    if (rc != 0)
        fprintf(stderr, "fasim view: %s\n", sim_shown(serr).s);
    return rc;
#else
    (void)model;
    (void)o;
    (void)npy;
    fprintf(stderr, "fasim view: built without SDL2: install libsdl2-dev and rebuild, or "
            "use the terminal view\n");
    return 1;
#endif
}

/* --ring P: the ring's rounds on seeded inputs (computed unless
 * --count-only), on the report's square tiles for the shape, or --Br/--Bc;
 * --row picks the local row whose (m, l) is shown. */
static int run_ring(const view_opts *o)
{
    const viz_config *c = &o->cfg;
    const sim_shape *sh = &c->sh;
    const int compute = c->mode != VIZ_MODE_COUNT;
    /* The rounds' products, Q K^T and P V: 4 N^2 d FLOPs (half under a
     * causal mask), bounded as the report bounds computing unless forced. */
    const double flops = 4.0 * (double)sh->N * (double)sh->N * (double)sh->d *
                         (sh->causal ? 0.5 : 1.0);
    if (compute && c->mode == VIZ_MODE_AUTO && flops > SIM_MAX_COMPUTE_FLOPS) {
        fprintf(stderr, "fasim view: --ring at N = %lld: computing the rounds would take "
                "%.1e flops, over the limit of %.1e; --count-only shows the rounds without "
                "(m, l), --compute forces it\n", (long long)sh->N, flops,
                SIM_MAX_COMPUTE_FLOPS);
        return 2;
    }
    const size_t n = (size_t)(sh->N * sh->d);
    float *Q = compute ? malloc(n * sizeof *Q) : NULL;
    float *K = compute ? malloc(n * sizeof *K) : NULL;
    float *V = compute ? malloc(n * sizeof *V) : NULL;
    if (compute && (!Q || !K || !V)) {
        fprintf(stderr, "fasim view: out of memory\n");
        free(Q);
        free(K);
        free(V);
        return 1;
    }
    if (compute)
        sim_random_qkv(c->seed, sh->N, sh->N, sh->d, sh->dtype, Q, K, V);
    /* The report's square tile where it fits M; else, as the view's own run
     * would, FA2's best plan in M (with --Br/--Bc as given). */
    const int64_t t = sim_report_default_tiles(sh);
    int64_t Br = c->Br ? c->Br : t, Bc = c->Bc ? c->Bc : Br;
    if (t <= 0 && !(c->Br && c->Bc)) {
        sim_plan p;
        char perr[1024];
        if (sim_plan_choose(SIM_FA2, sh, &c->run, SIM_PLAN_AUTO, c->Br, c->Bc, &p, perr,
                            sizeof perr) != 0) {
            fprintf(stderr, "fasim view: %s\n", perr);
            free(Q);
            free(K);
            free(V);
            return 2;
        }
        Br = p.Br;
        Bc = p.Bc;
    }
    sim_ring_req rq = o->ring;
    rq.watch = c->out_row;
    sim_ring ring;
    char err[512];
    int rc = sim_ring_build(sh, &c->run, &rq, Br, Bc, NULL, Q, K, V, &ring, err, sizeof err);
    if (rc == 0) {
        sim_ring_rounds_text(stdout, &ring);
        sim_ring_free(&ring);
    } else {
        fprintf(stderr, "fasim view: %s\n", err);
    }
    free(Q);
    free(K);
    free(V);
    return rc == 0 ? 0 : 1;
}

int cli_view_main(int argc, char **argv, int first)
{
    view_opts o;
    char err[2048];
    if (parse(argc, argv, first, &o, err, sizeof err) != 0) {
        fprintf(stderr, "fasim view: %s\n", err);
        return 2;
    }
    if (o.help) {
        usage(stdout);
        return 0;
    }
    if (o.ring.P)
        return run_ring(&o);
    sim_npy_matrix npy[4];
    memset(npy, 0, sizeof npy);
    int rc = o.record ? record_check(&o) : 0;
    if (!rc && o.q_path)
        rc = load_inputs(&o, npy);
    if (!rc && o.block_mask) {
        /* patterns on --Br x --Bc, or the report's default square tile */
        rc = cli_block_mask_make(o.block_mask, &o.cfg.sh, o.cfg.Br, o.cfg.Bc,
                                 sim_report_default_tiles(&o.cfg.sh), o.cfg.seed, err,
                                 sizeof err);
        if (rc)
            fprintf(stderr, "fasim view: %s\n", err);
    }
    viz_model *model = NULL;
    int brc = rc ? rc : viz_model_build(&o.cfg, &model, err, sizeof err);
    if (!rc && brc != VIZ_OK && brc != VIZ_EREFUSED) {
        fprintf(stderr, "fasim view: %s\n", err);
        rc = brc == VIZ_EUSAGE ? 2 : 1;
    }
    const int interactive = isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
    if (!rc && model && o.record && brc == VIZ_EREFUSED) {
        fprintf(stderr, "fasim view: %s\n", err);     /* nothing to animate */
        rc = 2;
    } else if (!rc && model && (o.sdl || o.screenshot || o.record)) {
        rc = run_sdl(model, &o, npy);
        if (brc == VIZ_EREFUSED && rc == 0) {
            fprintf(stderr, "fasim view: %s\n", err);
            rc = 2;
        }
    } else if (!rc && model) {
        const viz_info *in = viz_model_info(model);
        if (!in->refused && !in->plan.fits)
            fprintf(stderr, "fasim view: warning: the paper plan needs %llu B of SRAM, more "
                    "than M = %llu B; simulated as if SRAM were that large\n",
                    (unsigned long long)in->sram_peak, (unsigned long long)o.cfg.sh.M);
        if (interactive) {
            char cerr[2048];
            uint64_t start = o.step ? (uint64_t)o.step - 1 : 0;
            rc = viz_curses_run(&o.cfg, &model, start, cerr, sizeof cerr);
            if (rc == 1 || rc == 2)
                fprintf(stderr, "fasim view: %s\n", cerr);
        } else {
            rc = run_text(model, &o);
            if (brc == VIZ_EREFUSED) {
                fprintf(stderr, "fasim view: %s\n", err);
                rc = 2;
            }
        }
    }
    viz_model_free(model);
    cli_inputs_free(npy);
    return rc;
}
