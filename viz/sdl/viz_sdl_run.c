/*
 * viz_sdl_run.c — the interactive SDL window of `fasim view --sdl` (see
 * viz_sdl.h for the keys and the contract).
 *
 * The loop redraws only when something changed (a key, a click, a resize, a
 * step while playing) and otherwise sleeps in SDL_WaitEventTimeout: while
 * playing until the next step is due, while paused for up to a second.
 * Playing advances by wall-clock time (steps = elapsed x speed), so a slow
 * frame skips steps rather than slowing the run down, and speeds beyond the
 * display's frame rate advance several steps per frame.
 */
#define _POSIX_C_SOURCE 200809L     /* dup, dup2 */
#include "viz_sdl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <SDL.h>

#include "viz_sdl_draw.h"

/* Speeds are powers of two between these (steps per second): one step every
 * four seconds for explaining a line, up to 65536 (an N = 4096 FA2 run of
 * 260,000 steps in four seconds). */
#define SPEED_MIN (1.0 / 4.0)
#define SPEED_MAX 65536.0
/* While paused the loop still wakes this often (ms): harmless, and it keeps
 * the window responsive to a compositor that drops an expose event. */
#define IDLE_WAIT_MS 1000
/* The smallest wait between frames while playing (ms): about 60 frames per
 * second; faster speeds move several steps per frame. */
#define FRAME_MS 16

void viz_sdl_opts_default(viz_sdl_opts *o)
{
    memset(o, 0, sizeof *o);
    o->steps_per_second = 4.0;
}

typedef struct {
    const viz_sdl_opts *o;
    viz_model *user;        /* the caller's model (never freed here) */
    viz_model *own;         /* a rebuilt run ('a', 'c'), or NULL */
    viz_model *cur;         /* user or own */
    viz_sdl_heat *heat;
    viz_sdl_font *font;
    viz_sdl_theme theme;
    viz_sdl_layout lay;
    SDL_Window *win;
    SDL_Renderer *rend;
    int playing, help, typing, quit, dirty;
    double speed;
    uint64_t t0_ms, step0;  /* playing: the time and step playing (re)started */
    char digits[24];
    char status[1024];
    char prompt[64];
    char inputs[96];
    char title[256];
} run_state;

static uint64_t nsteps(const run_state *s)
{
    return viz_model_info(s->cur)->nsteps;
}

static uint64_t cur_step(const run_state *s)
{
    return nsteps(s) ? viz_model_state(s->cur)->step : 0;
}

/* Go to step k (clamped); clears a tile description from the status line. */
static void go(run_state *s, uint64_t k)
{
    uint64_t n = nsteps(s);
    if (n == 0)
        return;
    if (k >= n)
        k = n - 1;
    if (k != cur_step(s)) {
        viz_model_seek(s->cur, k);
        s->status[0] = 0;
    }
    s->dirty = 1;
}

static void restart_clock(run_state *s)
{
    s->t0_ms = SDL_GetTicks64();
    s->step0 = cur_step(s);
}

static void set_playing(run_state *s, int on)
{
    if (on && nsteps(s) && cur_step(s) + 1 >= nsteps(s))
        go(s, 0);                        /* play from the end: start over */
    s->playing = on && nsteps(s) > 1;
    restart_clock(s);
    s->dirty = 1;
}

static void draw(run_state *s)
{
    int w = 0, h = 0;
    if (SDL_GetRendererOutputSize(s->rend, &w, &h) != 0 || w <= 0 || h <= 0)
        return;
    const viz_info *in = viz_model_info(s->cur);
    if (s->typing)
        snprintf(s->prompt, sizeof s->prompt, "go to step (1..%llu): %s_  (Enter, Esc)",
                 (unsigned long long)in->nsteps, s->digits);
    viz_sdl_ui ui = {
        .interactive = 1, .playing = s->playing, .speed = s->speed, .help = s->help,
        .status = s->status[0] ? s->status : NULL, .prompt = s->typing ? s->prompt : NULL,
        .inputs = s->inputs, .theme = s->theme, .font = s->font,
    };
    viz_sdl_draw(s->rend, w, h, s->cur, s->heat, &ui, &s->lay);
    SDL_RenderPresent(s->rend);
    if (s->typing)
        snprintf(s->title, sizeof s->title, "fasim view - %s - go to step: %s_",
                 sim_algo_name(in->algo), s->digits);
    else
        snprintf(s->title, sizeof s->title, "fasim view - %s N=%lld d=%lld - step %llu/%llu",
                 sim_algo_name(in->algo), (long long)in->sh.N, (long long)in->sh.d,
                 (unsigned long long)(in->nsteps ? cur_step(s) + 1 : 0),
                 (unsigned long long)in->nsteps);
    SDL_SetWindowTitle(s->win, s->title);
    s->dirty = 0;
}

/* Rebuild the run with another algorithm or mask on the same inputs, at the
 * same fraction of the run. The caller's own model is used again when the
 * choice comes back to it. */
static void rebuild(run_state *s, sim_algo algo, int causal)
{
    const viz_config *uc = viz_model_config(s->user);
    const double frac = nsteps(s) > 1 ? (double)cur_step(s) / (double)(nsteps(s) - 1) : 0.0;
    viz_model *next = NULL;
    int rc = VIZ_OK;
    char err[1024] = "";
    if (algo == uc->algo && causal == uc->sh.causal) {
        next = s->user;
    } else {
        viz_config cfg = *viz_model_config(s->cur);
        cfg.algo = algo;
        cfg.sh.causal = causal;
        cfg.Q = s->o->Q;
        cfg.K = s->o->K;
        cfg.V = s->o->V;
        snprintf(s->status, sizeof s->status, "recording %s%s ...", sim_algo_name(algo),
                 causal ? ", causal" : "");
        draw(s);
        rc = viz_model_build(&cfg, &next, err, sizeof err);
        if (rc != VIZ_OK && rc != VIZ_EREFUSED) {
            char *nl = strchr(err, '\n');
            if (nl)
                *nl = 0;
            /* the status line shows the first 160 characters of the message */
            snprintf(s->status, sizeof s->status, "cannot show %s%s: %.160s",
                     sim_algo_name(algo), causal ? " (causal)" : "", err);
            s->dirty = 1;
            return;
        }
    }
    if (s->own && s->own != next)
        viz_model_free(s->own);
    s->own = next == s->user ? NULL : next;
    s->cur = next;
    viz_sdl_heat_probe(s->heat, s->cur);
    const uint64_t n = nsteps(s);
    if (n)
        viz_model_seek(s->cur, (uint64_t)llround(frac * (double)(n - 1)));
    if (rc == VIZ_EREFUSED)
        snprintf(s->status, sizeof s->status, "%s: the plan does not fit in M (the heat map "
                 "panel shows why)", sim_algo_name(algo));
    else
        snprintf(s->status, sizeof s->status, "%s%s: step %llu of %llu, the same point of "
                 "the run", sim_algo_name(algo), causal ? ", causal" : "",
                 (unsigned long long)(n ? cur_step(s) + 1 : 0), (unsigned long long)n);
    set_playing(s, s->playing);
    s->dirty = 1;
}

static void speed_by(run_state *s, double f)
{
    double v = s->speed * f;
    s->speed = v < SPEED_MIN ? SPEED_MIN : v > SPEED_MAX ? SPEED_MAX : v;
    restart_clock(s);
    snprintf(s->status, sizeof s->status, "speed: %g steps per second", s->speed);
    s->dirty = 1;
}

static void finish_typing(run_state *s, int accept)
{
    s->typing = 0;
    if (accept && s->digits[0]) {
        unsigned long long k = strtoull(s->digits, NULL, 10);
        if (k >= 1 && k <= nsteps(s)) {
            go(s, k - 1);
            restart_clock(s);
        } else {
            snprintf(s->status, sizeof s->status, "no step %s: the run has steps 1..%llu",
                     s->digits, (unsigned long long)nsteps(s));
        }
    }
    s->digits[0] = 0;
    s->dirty = 1;
}

/* A printable key (from SDL_TEXTINPUT, so that '?' and '+' work on any
 * keyboard layout). */
static void on_char(run_state *s, char ch)
{
    if (s->typing) {
        size_t n = strlen(s->digits);
        if (ch >= '0' && ch <= '9' && n + 1 < sizeof s->digits) {
            s->digits[n] = ch;
            s->digits[n + 1] = 0;
        }
        s->dirty = 1;
        return;
    }
    const viz_info *in = viz_model_info(s->cur);
    switch (ch) {
    case ' ':
        set_playing(s, !s->playing);
        break;
    case 'n':
        s->playing = 0;
        go(s, cur_step(s) + 1);
        break;
    case 'b':
        s->playing = 0;
        if (cur_step(s) > 0)
            go(s, cur_step(s) - 1);
        break;
    case '+': case '=':
        speed_by(s, 2.0);
        break;
    case '-': case '_':
        speed_by(s, 0.5);
        break;
    case 'g':
        s->typing = 1;
        s->digits[0] = 0;
        s->dirty = 1;
        break;
    case 'a':
        rebuild(s, sim_algo_next(in->algo), in->sh.causal);
        break;
    case 'c':
        rebuild(s, in->algo, !in->sh.causal);
        break;
    case 'r':
        go(s, 0);
        restart_clock(s);
        s->status[0] = 0;
        break;
    case 't':
        s->theme = s->theme == VIZ_SDL_THEME_DARK ? VIZ_SDL_THEME_LIGHT : VIZ_SDL_THEME_DARK;
        s->dirty = 1;
        break;
    case '?': case 'h':
        s->help = !s->help;
        s->dirty = 1;
        break;
    case 'q':
        s->quit = 1;
        break;
    default:
        break;
    }
}

static void on_key(run_state *s, const SDL_KeyboardEvent *k)
{
    SDL_Keycode key = k->keysym.sym;
    if (s->typing) {
        if (key == SDLK_RETURN || key == SDLK_KP_ENTER)
            finish_typing(s, 1);
        else if (key == SDLK_ESCAPE)
            finish_typing(s, 0);
        else if (key == SDLK_BACKSPACE && s->digits[0]) {
            s->digits[strlen(s->digits) - 1] = 0;
            s->dirty = 1;
        }
        return;
    }
    switch (key) {
    case SDLK_ESCAPE:
        if (s->help) {
            s->help = 0;
            s->dirty = 1;
        } else {
            s->quit = 1;
        }
        break;
    case SDLK_RIGHT:
        on_char(s, 'n');
        break;
    case SDLK_LEFT:
        on_char(s, 'b');
        break;
    case SDLK_HOME:
        s->playing = 0;
        go(s, 0);
        break;
    case SDLK_END:
        s->playing = 0;
        if (nsteps(s))
            go(s, nsteps(s) - 1);
        break;
    case SDLK_KP_PLUS:
        speed_by(s, 2.0);
        break;
    case SDLK_KP_MINUS:
        speed_by(s, 0.5);
        break;
    default:
        break;
    }
}

static void on_click(run_state *s, int wx, int wy)
{
    /* Window coordinates to renderer pixels (they differ on high-DPI screens). */
    int ww = 1, wh = 1, ow = 1, oh = 1;
    SDL_GetWindowSize(s->win, &ww, &wh);
    SDL_GetRendererOutputSize(s->rend, &ow, &oh);
    int x = ww > 0 ? (int)((int64_t)wx * ow / ww) : wx;
    int y = wh > 0 ? (int)((int64_t)wy * oh / wh) : wy;
    sim_tensor t;
    int64_t tr, tc;
    if (viz_sdl_hit(&s->lay, s->cur, x, y, &t, &tr, &tc)) {
        if (viz_tile_describe(s->cur, t, tr, tc, s->status, sizeof s->status) != 0)
            snprintf(s->status, sizeof s->status, "no tile there");
    } else {
        s->status[0] = 0;
    }
    s->dirty = 1;
}

/* While playing: move to the step due now; stop at the last. */
static void advance(run_state *s)
{
    if (!s->playing)
        return;
    const uint64_t n = nsteps(s);
    const double due = (double)(SDL_GetTicks64() - s->t0_ms) * s->speed / 1000.0;
    uint64_t k = s->step0 + (uint64_t)due;
    if (k >= n - 1) {
        k = n - 1;
        s->playing = 0;
        snprintf(s->status, sizeof s->status, "end of the run (space plays it again)");
    }
    if (k != cur_step(s)) {
        viz_model_seek(s->cur, k);
        if (s->playing)
            s->status[0] = 0;
        s->dirty = 1;
    } else if (!s->playing) {
        s->dirty = 1;
    }
}

/* How long to sleep: until the next step is due while playing. */
static int wait_ms(const run_state *s)
{
    if (!s->playing)
        return IDLE_WAIT_MS;
    double per = 1000.0 / s->speed;
    double since = (double)(SDL_GetTicks64() - s->t0_ms);
    double next = per * (floor(since / per) + 1.0) - since;
    int ms = (int)ceil(next);
    return ms < FRAME_MS ? FRAME_MS : ms;
}

/* SDL_Init(SDL_INIT_VIDEO) with stderr quiet: while SDL looks for a display
 * its drivers' libraries print lines of their own (libwayland's
 * "XDG_RUNTIME_DIR is invalid or not set"), and fasim's message after a
 * failure says all there is to say, in one line. */
static int quiet_init(void)
{
    fflush(stderr);
    const int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);
    if (saved >= 0 && null >= 0)
        dup2(null, STDERR_FILENO);
    const int rc = SDL_Init(SDL_INIT_VIDEO);
    if (saved >= 0 && null >= 0)
        dup2(saved, STDERR_FILENO);
    if (saved >= 0)
        close(saved);
    if (null >= 0)
        close(null);
    return rc;
}

/* One event of the window: closing, resizing, keys, clicks. */
static void on_event(run_state *s, const SDL_Event *ev)
{
    switch (ev->type) {
    case SDL_QUIT:
        s->quit = 1;
        break;
    case SDL_WINDOWEVENT:
        if (ev->window.event == SDL_WINDOWEVENT_CLOSE)
            s->quit = 1;
        else if (ev->window.event == SDL_WINDOWEVENT_SIZE_CHANGED ||
                 ev->window.event == SDL_WINDOWEVENT_EXPOSED ||
                 ev->window.event == SDL_WINDOWEVENT_RESTORED)
            s->dirty = 1;
        break;
    case SDL_TEXTINPUT:
        for (const char *p = ev->text.text; *p && !s->quit; p++)
            if ((unsigned char)*p < 128)
                on_char(s, *p);
        break;
    case SDL_KEYDOWN:
        on_key(s, &ev->key);
        break;
    case SDL_MOUSEBUTTONDOWN:
        if (ev->button.button == SDL_BUTTON_LEFT)
            on_click(s, ev->button.x, ev->button.y);
        break;
    default:
        break;
    }
}

int viz_sdl_run(viz_model *m, const viz_sdl_opts *o, char *err, size_t errlen)
{
    viz_sdl_opts defaults;
    if (!o) {
        viz_sdl_opts_default(&defaults);
        o = &defaults;
    }
    if (!m) {
        snprintf(err, errlen, "SDL view: no model");
        return VIZ_EFAIL;
    }
    run_state s;
    memset(&s, 0, sizeof s);
    s.o = o;
    s.user = s.cur = m;
    s.speed = o->steps_per_second > 0 ? o->steps_per_second : 4.0;
    s.speed = s.speed < SPEED_MIN ? SPEED_MIN : s.speed > SPEED_MAX ? SPEED_MAX : s.speed;
    if (o->Q)
        snprintf(s.inputs, sizeof s.inputs, "the caller's (.npy)");
    else
        snprintf(s.inputs, sizeof s.inputs, "seeded (seed %llu)",
                 (unsigned long long)viz_model_config(m)->seed);

    int rc = VIZ_EFAIL;
    if (quiet_init() != 0) {
        snprintf(err, errlen, "cannot open an SDL window (%s). Without a display, use "
                 "`fasim view --screenshot FILE` (PNG or BMP) or the terminal view "
                 "(`fasim view` without --sdl)", SDL_GetError());
        SDL_Quit();
        return VIZ_EFAIL;
    }
    /* Without a display SDL falls back to a driver that shows nothing
     * (offscreen, dummy): a window nobody can see or close would wait
     * forever. Those drivers are used only when asked for by name. */
    const char *drv = SDL_GetCurrentVideoDriver();
    const char *asked = SDL_GetHint(SDL_HINT_VIDEODRIVER);   /* the env var or a hint */
    if (drv && (!strcmp(drv, "offscreen") || !strcmp(drv, "dummy")) && !(asked && *asked)) {
        snprintf(err, errlen, "cannot open an SDL window: no display (SDL chose its '%s' "
                 "driver). Without a display, use `fasim view --screenshot FILE` (PNG or "
                 "BMP) or the terminal view (`fasim view` without --sdl)", drv);
        SDL_Quit();
        return VIZ_EFAIL;
    }
    const int w = o->width > 0 ? o->width : VIZ_SDL_DEFAULT_W;
    const int h = o->height > 0 ? o->height : VIZ_SDL_DEFAULT_H;
    s.win = SDL_CreateWindow("fasim view", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, w, h,
                             SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
    if (!s.win) {
        snprintf(err, errlen, "cannot open an SDL window (%s). Without a display, use "
                 "`fasim view --screenshot FILE` (PNG or BMP) or the terminal view "
                 "(`fasim view` without --sdl)", SDL_GetError());
        goto out;
    }
    SDL_SetWindowMinimumSize(s.win, 640, 400);
    s.rend = SDL_CreateRenderer(s.win, -1, SDL_RENDERER_ACCELERATED);
    if (!s.rend)
        s.rend = SDL_CreateRenderer(s.win, -1, SDL_RENDERER_SOFTWARE);
    s.heat = viz_sdl_heat_new(o->Q, o->K);
    s.font = viz_sdl_font_open();
    s.theme = o->theme;
    if (!s.rend || !s.heat || !s.font) {
        snprintf(err, errlen, "SDL view: cannot make a renderer: %s",
                 s.rend ? "out of memory" : SDL_GetError());
        goto out;
    }
    viz_sdl_heat_probe(s.heat, m);
    if (nsteps(&s))
        go(&s, o->start_step);
    set_playing(&s, o->play);
    SDL_StartTextInput();
    s.dirty = 1;

    while (!s.quit) {
        advance(&s);
        if (s.dirty)
            draw(&s);
        SDL_Event ev;
        if (!SDL_WaitEventTimeout(&ev, wait_ms(&s)))
            continue;
        do
            on_event(&s, &ev);
        while (!s.quit && SDL_PollEvent(&ev));
    }
    rc = 0;
out:
    SDL_StopTextInput();
    viz_sdl_heat_free(s.heat);
    viz_sdl_font_close(s.font);
    if (s.own)
        viz_model_free(s.own);
    if (s.rend)
        SDL_DestroyRenderer(s.rend);
    if (s.win)
        SDL_DestroyWindow(s.win);
    SDL_Quit();
    return rc;
}
