/*
 * viz_curses.c — the interactive terminal view (see viz_curses.h). The only
 * file of fasim that includes curses.
 *
 * The frame itself is drawn by viz_layout_draw on a canvas; this file maps
 * the canvas's styles to curses attributes, reads keys and the mouse, and
 * owns the terminal: it is restored (endwin) on every way out, signals
 * included. The handlers of SIGINT, SIGTERM and SIGHUP only set a flag; the
 * main loop polls keys with a timeout of at most 100 ms, sees the flag, and
 * leaves through the same cleanup as 'q'. Every other signal that ends the
 * process restores the terminal in its handler, then ends it (on_fatal).
 */
#define _POSIX_C_SOURCE 200809L
#include "viz_curses.h"

#include <stdio.h>
#include <string.h>

#ifndef FASIM_HAVE_CURSES

int viz_curses_available(void)
{
    return 0;
}

int viz_curses_run(const viz_config *cfg, viz_model **pm, uint64_t start, char *err,
                   size_t errlen)
{
    (void)cfg;
    (void)pm;
    (void)start;
    snprintf(err, errlen, "this fasim was built without curses: the interactive view is "
             "unavailable; pipe the output ('fasim view ... | cat') for text frames, or "
             "install libncurses-dev and rebuild");
    return 1;
}

int viz_curses_explore(viz_explore *e, char *err, size_t errlen)
{
    (void)e;
    snprintf(err, errlen, "this fasim was built without curses: the interactive explore "
             "screen is unavailable; pipe the output ('fasim explore --keys NNx | cat') for "
             "text frames, or install libncurses-dev and rebuild");
    return 1;
}

#else

#include <curses.h>
#include <signal.h>
#include <stdlib.h>
#include <term.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "viz_canvas.h"

int viz_curses_available(void)
{
    return 1;
}

/* ---- the terminal, owned while the view runs -------------------------------- */

static volatile sig_atomic_t g_signal;
static SCREEN *g_screen;
static int g_atexit_set;
static struct sigaction g_old[3];
static const int g_sigs[3] = { SIGINT, SIGTERM, SIGHUP };

static void on_signal(int sig)
{
    g_signal = sig;
}

/* The other signals whose default action ends the process (SIGQUIT from
 * Ctrl-\, a closed pipe, SIGUSR1, the resource limits, a crash, ...). The
 * process must end as they say, core dump included where asked, so no flag
 * and no loop: the handler writes the terminal's own reset sequences and
 * the saved tty modes back (write and tcsetattr are async-signal-safe;
 * endwin is not), then raises the signal again with its default action.
 * Installed only where the disposition is the default: an ignored signal
 * does not end the process, and a sanitizer's crash handler is left alone. */
static const int g_fatal[] = { SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU,
                               SIGXFSZ, SIGVTALRM, SIGPROF, SIGPOLL, SIGSYS, SIGTRAP,
                               SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL };
#define NFATAL ((int)(sizeof g_fatal / sizeof g_fatal[0]))
static struct sigaction g_fatal_old[NFATAL];
static int g_fatal_set[NFATAL];
static char g_reset[512];          /* the bytes that undo curses mode on this terminal */
static size_t g_reset_len;
static struct termios g_tty;       /* the tty's modes before curses */
static int g_tty_fd = -1;

static void on_fatal(int sig)
{
    if (g_reset_len) {
        ssize_t w = write(STDOUT_FILENO, g_reset, g_reset_len);
        (void)w;
    }
    if (g_tty_fd >= 0)
        tcsetattr(g_tty_fd, TCSANOW, &g_tty);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

/* Append terminfo capability cap (a string capability) to g_reset. */
static void reset_add(const char *cap)
{
    char *s = tigetstr((char *)cap);
    if (!s || s == (char *)-1)
        return;
    size_t n = strlen(s);
    if (g_reset_len + n < sizeof g_reset) {
        memcpy(g_reset + g_reset_len, s, n);
        g_reset_len += n;
    }
}

/* After newterm: what to write to give the terminal back, and the handlers. */
static void fatal_guard_on(void)
{
    g_reset_len = 0;
    reset_add("sgr0");                /* attributes off */
    reset_add("cnorm");               /* the cursor visible */
    reset_add("rmkx");                /* keypad transmit off */
    /* Mouse reporting off (the xterm modes curses turns on; other terminals
     * ignore a private mode they do not know). */
    static const char mouse_off[] = "\033[?1000l\033[?1002l\033[?1003l\033[?1006l";
    if (g_reset_len + sizeof mouse_off - 1 < sizeof g_reset) {
        memcpy(g_reset + g_reset_len, mouse_off, sizeof mouse_off - 1);
        g_reset_len += sizeof mouse_off - 1;
    }
    reset_add("rmcup");               /* leave the alternate screen */
    for (int k = 0; k < NFATAL; k++) {
        struct sigaction old;
        g_fatal_set[k] = 0;
        if (sigaction(g_fatal[k], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal;
        sigemptyset(&sa.sa_mask);
        g_fatal_set[k] = sigaction(g_fatal[k], &sa, &g_fatal_old[k]) == 0;
    }
}

static void fatal_guard_off(void)
{
    for (int k = 0; k < NFATAL; k++)
        if (g_fatal_set[k]) {
            sigaction(g_fatal[k], &g_fatal_old[k], NULL);
            g_fatal_set[k] = 0;
        }
    g_tty_fd = -1;
}

/* Give the terminal back: leave curses mode (the alternate screen, the
 * cursor, echo) and put the old signal dispositions back. Idempotent, so
 * that every path — including atexit — may call it. */
static void term_restore(void)
{
    if (!g_screen)
        return;
    endwin();
    delscreen(g_screen);
    g_screen = NULL;
    for (int k = 0; k < 3; k++)
        sigaction(g_sigs[k], &g_old[k], NULL);
    fatal_guard_off();
}

static attr_t g_attr[VIZ_ST_COUNT];

static void setup_styles(void)
{
    int colour = has_colors() && !(getenv("NO_COLOR") && getenv("NO_COLOR")[0]);
    for (int k = 0; k < VIZ_ST_COUNT; k++)
        g_attr[k] = A_NORMAL;
    g_attr[VIZ_ST_DIM] = A_DIM;
    g_attr[VIZ_ST_TITLE] = A_BOLD;
    g_attr[VIZ_ST_HEAD] = A_BOLD;
    g_attr[VIZ_ST_WRITTEN] = A_BOLD;
    g_attr[VIZ_ST_BOTH] = A_BOLD;
    g_attr[VIZ_ST_LOAD] = A_REVERSE | A_BOLD;
    g_attr[VIZ_ST_STORE] = A_REVERSE | A_BOLD;
    g_attr[VIZ_ST_CURRENT] = A_REVERSE;
    g_attr[VIZ_ST_CURLINE] = A_REVERSE;
    g_attr[VIZ_ST_CHANGED] = A_BOLD | A_UNDERLINE;
    g_attr[VIZ_ST_OVER] = A_REVERSE | A_BOLD;
    g_attr[VIZ_ST_STATUS] = A_REVERSE;
    if (!colour || start_color() == ERR)
        return;
    use_default_colors();
    init_pair(1, COLOR_GREEN, -1);     /* read */
    init_pair(2, COLOR_YELLOW, -1);    /* written */
    init_pair(3, COLOR_MAGENTA, -1);   /* both */
    init_pair(4, COLOR_BLACK, COLOR_CYAN);     /* loading */
    init_pair(5, COLOR_BLACK, COLOR_YELLOW);   /* storing */
    init_pair(6, COLOR_CYAN, -1);      /* headers */
    init_pair(7, COLOR_WHITE, COLOR_RED);      /* over M */
    init_pair(8, COLOR_BLACK, COLOR_WHITE);    /* in hand now */
    g_attr[VIZ_ST_READ] = COLOR_PAIR(1);
    g_attr[VIZ_ST_WRITTEN] = COLOR_PAIR(2) | A_BOLD;
    g_attr[VIZ_ST_BOTH] = COLOR_PAIR(3) | A_BOLD;
    g_attr[VIZ_ST_LOAD] = COLOR_PAIR(4) | A_BOLD;
    g_attr[VIZ_ST_STORE] = COLOR_PAIR(5) | A_BOLD;
    g_attr[VIZ_ST_CURRENT] = COLOR_PAIR(8) | A_BOLD;
    g_attr[VIZ_ST_HEAD] = COLOR_PAIR(6) | A_BOLD;
    g_attr[VIZ_ST_CHANGED] = COLOR_PAIR(2) | A_BOLD;
    g_attr[VIZ_ST_BAR] = COLOR_PAIR(1);
    g_attr[VIZ_ST_OVER] = COLOR_PAIR(7) | A_BOLD;
}

static int term_open(char *err, size_t errlen)
{
    g_signal = 0;
    /* The tty's modes as they are now, for a signal that ends the process. */
    g_tty_fd = isatty(STDOUT_FILENO) ? STDOUT_FILENO : isatty(STDIN_FILENO) ? STDIN_FILENO : -1;
    if (g_tty_fd >= 0 && tcgetattr(g_tty_fd, &g_tty) != 0)
        g_tty_fd = -1;
    g_screen = newterm(NULL, stdout, stdin);
    if (!g_screen) {
        const char *t = getenv("TERM");
        snprintf(err, errlen, "cannot open the terminal (TERM=%s); pipe the output for "
                 "text frames ('fasim view ... | cat')", t ? t : "unset");
        return -1;
    }
    if (!g_atexit_set) {
        atexit(term_restore);
        g_atexit_set = 1;
    }
    set_term(g_screen);
    /* After newterm, so that these replace any handler curses installed. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < 3; k++)
        sigaction(g_sigs[k], &sa, &g_old[k]);
    fatal_guard_on();
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    scrollok(stdscr, FALSE);
    mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED, NULL);
    setup_styles();
    return 0;
}

/* ---- drawing ------------------------------------------------------------- */

static const char *const HELP[] = {
    "fasim view: one run of the simulator, step by step",
    "",
    "space        play / pause",
    "n, Right     one step forward        b, Left   one step back",
    "+ / -        faster / slower         g         go to a step",
    "Home / End   first / last step       PgUp/PgDn 100 steps",
    /* draw_help puts the registry's loop orders in this line */
    "a            next loop order on the same inputs (naive, fa1, fa2)",
    "c            causal mask on / off    r         restart (step 1)",
    "mouse click  details of a tile       ?         this help",
    "q            quit",
    "",
    "tiles: 2r read twice  1w written once  9+ past nine  . untouched",
    "       one digit in a narrow cell: reads + writes, + past nine",
    "       > loading  < storing  * in hand at this step (reverse video)",
    "blocks (i, j): # done  * now  . to come  - skipped (fully masked)",
    "       : a character of several blocks, some done, some to come",
    "SRAM: buffers allocated; > loaded, < stored this step; ! over M",
    "statistics: * max changed",
    "",
    "any key closes this help",
};

/* The help box, its line for 'a' naming the registry's loop orders. */
static void draw_help(viz_canvas *c)
{
    enum { NHELP = (int)(sizeof HELP / sizeof HELP[0]) };
    const char *text[NHELP];   /* not "lines": term.h takes that name */
    char a_line[200], names[160];
    snprintf(a_line, sizeof a_line, "a            next loop order on the same inputs (%s)",
             sim_algo_names(names, sizeof names, ", "));
    for (int k = 0; k < NHELP; k++)
        text[k] = strncmp(HELP[k], "a ", 2) == 0 ? a_line : HELP[k];
    viz_canvas_box(c, text, NHELP);
}


static void blit(const viz_canvas *c)
{
    for (int y = 0; y < c->h && y < LINES; y++) {
        move(y, 0);
        for (int x = 0; x < c->w && x < COLS; x++) {
            const size_t k = (size_t)y * (size_t)c->w + (size_t)x;
            addch((chtype)(unsigned char)c->ch[k] | g_attr[c->style[k]]);
        }
    }
    refresh();
}

/* ---- the loop ------------------------------------------------------------- */

static const int SPEEDS[] = { 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000 };
#define NSPEEDS (int)(sizeof SPEEDS / sizeof SPEEDS[0])

typedef struct {
    viz_config cfg;            /* current algorithm and causal flag */
    viz_model *m;
    int playing;
    int speed;                 /* index in SPEEDS */
    int help;
    int go_mode;               /* reading a step number for 'g' */
    char go_buf[24];
    char msg[512];             /* one-shot message for the bottom line */
    viz_canvas canvas;
    viz_layout layout;
} view;

/* The first line of s, cut to the message buffer. */
static void set_msg(view *v, const char *s)
{
    size_t n = 0;
    while (s[n] && s[n] != '\n' && n + 1 < sizeof v->msg) {
        v->msg[n] = s[n];
        n++;
    }
    v->msg[n] = '\0';
}

static uint64_t nsteps(const view *v)
{
    return viz_model_info(v->m)->nsteps;
}

static uint64_t cur(const view *v)
{
    return viz_model_state(v->m)->step;
}

static void go(view *v, int64_t k)
{
    const uint64_t n = nsteps(v);
    if (n == 0)
        return;
    if (k < 0)
        k = 0;
    if ((uint64_t)k >= n)
        k = (int64_t)(n - 1);
    viz_model_seek(v->m, (uint64_t)k);
}

static void draw(view *v)
{
    if (v->canvas.w != COLS || v->canvas.h != LINES) {
        viz_canvas_free(&v->canvas);
        if (viz_canvas_init(&v->canvas, COLS > 0 ? COLS : 1, LINES > 0 ? LINES : 1) != 0)
            return;
    }
    char state[64], prompt[96];
    if (viz_model_info(v->m)->refused)
        snprintf(state, sizeof state, "a: other loop order");
    else if (v->playing)
        snprintf(state, sizeof state, "playing %d/s", SPEEDS[v->speed]);
    else
        snprintf(state, sizeof state, "paused (%d/s)", SPEEDS[v->speed]);
    viz_frame_opts o = { VIZ_CONTROLS, NULL, state };
    if (v->go_mode) {
        snprintf(prompt, sizeof prompt, "go to step (1-%llu), Enter to go, Esc to cancel: %s_",
                 (unsigned long long)nsteps(v), v->go_buf);
        o.message = prompt;
    } else if (v->msg[0]) {
        o.message = v->msg;
    }
    viz_layout_draw(v->m, &v->canvas, &o, &v->layout);
    if (v->help)
        draw_help(&v->canvas);
    blit(&v->canvas);
}

/* Rebuild for another loop order or causal flag, keeping the position as a
 * fraction of the run. On failure the old model stays and the reason is
 * shown. */
static void rebuild(view *v, const viz_config *next)
{
    char err[1024];
    snprintf(v->msg, sizeof v->msg, "building %s%s ...", sim_algo_name(next->algo),
             next->sh.causal ? " (causal)" : "");
    draw(v);
    viz_model *nm = NULL;
    int rc = viz_model_build(next, &nm, err, sizeof err);
    if (rc != VIZ_OK && rc != VIZ_EREFUSED) {
        set_msg(v, err);
        return;
    }
    const uint64_t n_old = nsteps(v), at = cur(v);
    viz_model_free(v->m);
    v->m = nm;
    v->cfg = *next;
    v->playing = 0;
    if (rc == VIZ_EREFUSED) {
        set_msg(v, err);
        return;
    }
    const uint64_t n_new = nsteps(v);
    go(v, n_old ? (int64_t)((double)at / (double)n_old * (double)n_new) : 0);
    char s[64];
    sim_format_count(s, sizeof s, n_new);
    snprintf(v->msg, sizeof v->msg, "%s%s: %s steps", sim_algo_name(next->algo),
             next->sh.causal ? " (causal)" : "", s);
}

static void on_click(view *v)
{
    MEVENT e;
    if (getmouse(&e) != OK || !(e.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)))
        return;
    sim_tensor t;
    int64_t tr, tc;
    if (viz_layout_hit(&v->layout, v->m, e.x, e.y, &t, &tr, &tc))
        viz_tile_describe(v->m, t, tr, tc, v->msg, sizeof v->msg);
    else
        v->msg[0] = '\0';
}

/* Handle one key; returns 1 to quit. */
static int on_key(view *v, int ch)
{
    if (v->help) {
        v->help = 0;
        return 0;
    }
    if (v->go_mode) {
        size_t n = strlen(v->go_buf);
        if (ch >= '0' && ch <= '9' && n + 1 < sizeof v->go_buf) {
            v->go_buf[n] = (char)ch;
            v->go_buf[n + 1] = '\0';
        } else if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && n) {
            v->go_buf[n - 1] = '\0';
        } else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
            v->go_mode = 0;
            if (n)
                go(v, strtoll(v->go_buf, NULL, 10) - 1);
        } else if (ch == 27 || ch == 'q') {
            v->go_mode = 0;
        }
        return 0;
    }
    v->msg[0] = '\0';
    viz_config next = v->cfg;
    switch (ch) {
    case 'q': case 'Q':
        return 1;
    case ' ':
        v->playing = !v->playing && cur(v) + 1 < nsteps(v);
        break;
    case 'n': case KEY_RIGHT:
        v->playing = 0;
        go(v, (int64_t)cur(v) + 1);
        break;
    case 'b': case KEY_LEFT:
        v->playing = 0;
        go(v, (int64_t)cur(v) - 1);
        break;
    case KEY_NPAGE:
        go(v, (int64_t)cur(v) + 100);
        break;
    case KEY_PPAGE:
        go(v, (int64_t)cur(v) - 100);
        break;
    case KEY_HOME:
        go(v, 0);
        break;
    case KEY_END:
        go(v, (int64_t)nsteps(v) - 1);
        break;
    case '+': case '=':
        if (v->speed + 1 < NSPEEDS)
            v->speed++;
        break;
    case '-': case '_':
        if (v->speed > 0)
            v->speed--;
        break;
    case 'g': case 'G':
        if (nsteps(v)) {
            v->go_mode = 1;
            v->go_buf[0] = '\0';
            v->playing = 0;
        }
        break;
    case 'a': case 'A':
        next.algo = sim_algo_next(next.algo);
        rebuild(v, &next);
        break;
    case 'c': case 'C':
        next.sh.causal = !next.sh.causal;
        rebuild(v, &next);
        break;
    case 'r': case 'R':
        v->playing = 0;
        go(v, 0);
        break;
    case '?': case 'h':
        v->help = 1;
        break;
    case KEY_MOUSE:
        on_click(v);
        break;
    case KEY_RESIZE:
    default:
        break;
    }
    return 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

int viz_curses_run(const viz_config *cfg, viz_model **pm, uint64_t start, char *err,
                   size_t errlen)
{
    view v;
    memset(&v, 0, sizeof v);
    v.cfg = *cfg;
    v.m = *pm;
    v.speed = 3;     /* 10 steps per second: readable, and a small run in seconds */
    if (term_open(err, errlen) != 0)
        return 1;
    go(&v, (int64_t)(start < INT64_MAX ? start : INT64_MAX));
    if (viz_model_info(v.m)->refused)
        set_msg(&v, viz_model_info(v.m)->refusal);
    int quit = 0;
    double next_tick = now_ms();
    while (!quit && !g_signal) {
        draw(&v);
        /* Playing: advance on a clock; several steps per tick above 50/s. */
        const int sp = SPEEDS[v.speed];
        const int period = sp >= 50 ? 20 : 1000 / sp;
        int wait = 100;
        if (v.playing) {
            double left = next_tick - now_ms();
            wait = left < 0 ? 0 : left > 100 ? 100 : (int)left;
        }
        timeout(wait);
        int ch = getch();
        if (g_signal)
            break;
        if (ch != ERR) {
            quit = on_key(&v, ch);
            next_tick = now_ms() + period;
            continue;
        }
        if (v.playing && now_ms() >= next_tick) {
            const int per = sp >= 50 ? sp / 50 : 1;
            if (cur(&v) + 1 >= nsteps(&v)) {
                v.playing = 0;
                snprintf(v.msg, sizeof v.msg, "end of the run: r restarts, b steps back");
            } else {
                go(&v, (int64_t)cur(&v) + per);
            }
            next_tick += period;
            if (next_tick < now_ms() - 1000)
                next_tick = now_ms();
        }
    }
    term_restore();
    viz_canvas_free(&v.canvas);
    *pm = v.m;
    if (g_signal)
        return 128 + (int)g_signal;
    if (viz_model_info(v.m)->refused) {
        snprintf(err, errlen, "%s", viz_model_info(v.m)->refusal);
        return 2;
    }
    return 0;
}

/* ---- fasim explore ------------------------------------------------------------ */

/* The explore screen at the terminal's size. */
static void explore_draw(const viz_explore *e, viz_canvas *c)
{
    if (c->w != COLS || c->h != LINES) {
        viz_canvas_free(c);
        if (viz_canvas_init(c, COLS > 0 ? COLS : 1, LINES > 0 ? LINES : 1) != 0)
            return;
    }
    viz_explore_draw(e, c, VIZ_EXPLORE_STATUS, NULL);
    blit(c);
}

/* The first line of s into the explore message, after a prefix. */
static void explore_msg(viz_explore *e, const char *prefix, const char *s)
{
    snprintf(e->msg, sizeof e->msg, "%s%.*s", prefix, (int)strcspn(s, "\n"), s);
}

/* Key 'v': build the view of the current configuration; leave curses (the
 * view opens the terminal itself, and restores it on every way out), run it
 * in this process, and come back. A view that cannot be built leaves the
 * terminal alone and says why on the message line. Returns 0 to go on,
 * 128 + n when a signal ended the view, 1 (err set) when the terminal cannot
 * be opened again. */
static int explore_view(viz_explore *e, viz_canvas *c, char *err, size_t errlen)
{
    viz_config vc;
    viz_explore_view_config(e, &vc);
    snprintf(e->msg, sizeof e->msg, "opening the view of %s ...", sim_algo_name(vc.algo));
    explore_draw(e, c);
    viz_model *m = NULL;
    char berr[2048];
    const int brc = viz_model_build(&vc, &m, berr, sizeof berr);
    if (g_signal) {
        /* Interrupted while building: leave as from the explore screen. */
        viz_model_free(m);
        return 128 + (int)g_signal;
    }
    if (brc != VIZ_OK && brc != VIZ_EREFUSED) {
        explore_msg(e, "no view: ", berr);
        return 0;
    }
    term_restore();
    char verr[2048] = "";
    const int vrc = viz_curses_run(&vc, &m, 0, verr, sizeof verr);
    viz_model_free(m);
    if (vrc >= 128)
        return vrc;
    if (term_open(err, errlen) != 0)
        return 1;
    mousemask(0, NULL);
    if (vrc == 0)
        snprintf(e->msg, sizeof e->msg, "back from the view of %s", sim_algo_name(vc.algo));
    else if (vrc == 2)
        explore_msg(e, "back from the view; its plan was refused: ", verr);
    else
        explore_msg(e, "the view failed: ", verr);
    return 0;
}

int viz_curses_explore(viz_explore *e, char *err, size_t errlen)
{
    if (term_open(err, errlen) != 0)
        return 1;
    mousemask(0, NULL);      /* no mouse here: the terminal keeps its selection */
    viz_canvas c;
    memset(&c, 0, sizeof c);
    int rc = 0, quit = 0;
    while (!quit && !rc && !g_signal) {
        explore_draw(e, &c);
        /* Poll, so that a signal's flag is seen within 100 ms. */
        timeout(100);
        const int ch = getch();
        if (g_signal)
            break;
        if (ch == ERR || ch == KEY_RESIZE || ch == KEY_MOUSE)
            continue;            /* a resize redraws at the new size above */
        if (ch < 0 || ch > 255) {
            /* Arrows, function keys: not explore's; they close the help. */
            if (e->help)
                viz_explore_key(e, ' ');
            else
                snprintf(e->msg, sizeof e->msg, "unknown key %s: ? shows the keys",
                         keyname(ch) ? keyname(ch) : "?");
            continue;
        }
        switch (viz_explore_key(e, ch)) {
        case VIZ_EX_KEY_QUIT:
            quit = 1;
            break;
        case VIZ_EX_KEY_VIEW:
            rc = explore_view(e, &c, err, errlen);
            break;
        default:
            break;
        }
    }
    term_restore();
    viz_canvas_free(&c);
    if (rc)
        return rc;
    if (g_signal)
        return 128 + (int)g_signal;
    return 0;
}

#endif /* FASIM_HAVE_CURSES */
