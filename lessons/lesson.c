/*
 * lesson.c — the lesson engine: see lesson.h for the contract.
 *
 * How a run goes (lesson_run):
 *   1. The lesson's options are split into --NAME VALUE / --NAME=VALUE /
 *      --NAME entries. Nothing is interpreted yet.
 *   2. Pass 0, the counting pass: the lesson runs once with all output
 *      suppressed, no input read and every question "answered right". Its
 *      lesson_opt_* calls parse and check the values (a bad one ends the run
 *      with status 2 right there); at its end the engine knows how many steps
 *      the lesson has (so every header can say "Step k of n", the same in
 *      every mode, which keeps golden files stable) and which options it
 *      asked for: anything else on the command line is an unknown option.
 *      So every refusal happens before the first line is printed.
 *   3. The real pass prints. Interactively, lesson_step waits for a key before
 *      it starts the next step. "b" sets show_from to the previous step and
 *      longjmps back to lesson_run, which runs the lesson again from the
 *      start, silent until step show_from begins. Questions already answered
 *      are not asked again while silent: their recorded results are replayed.
 *      lesson_alloc returns the same (re-zeroed) block for the same call of
 *      every pass, so going back costs no memory and every pass sees the same
 *      state.
 *
 * Input modes: --script (no input at all); a terminal on `in` (single keys in
 * raw mode, entered only for the key read and restored right after it, and by
 * the handler of every signal that ends or stops the process: g_sigs); or a
 * pipe (one line per answer, echoed into the output so that a transcript
 * reads like a session). End of input on a pipe means "go on": the remaining
 * steps print without prompts and the remaining questions show their answers.
 *
 * Output: lesson_say wraps at LESSON_COLS columns (counting UTF-8 code
 * points); lesson_print, lesson_show_* print as they are. Diagnostics go to
 * stderr as "fasim lesson NAME: ...".
 */
#define _POSIX_C_SOURCE 200809L
#include "lesson.h"
#include "viz_curses.h"
#include "viz_model.h"
#include "sim_parse.h"
#include "sim_text.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define LESSON_COLS 78
#define LESSON_MAX_OPTS 64         /* far more than any lesson has */
#define LESSON_MAX_ASKS 512        /* questions whose answers are replayed */
#define LESSON_MAX_ALLOC (UINT64_C(1) << 30)   /* 1 GiB: lessons are small */

enum { J_NONE, J_DONE, J_BACK, J_QUIT, J_FAIL, J_ERROR };
enum { IN_SCRIPT, IN_TTY, IN_PIPE };
enum { K_NEXT, K_BACK, K_QUIT, K_EOF, K_VIEW };

typedef struct {
    const char *name;      /* points into argv, not NUL-terminated at '=' */
    size_t len;
    const char *value;     /* inline (--name=value) or the next argument, or NULL */
    int inline_value;
    int used;              /* asked for by the lesson in pass 0 */
    int as_flag;
} opt_entry;

typedef struct block {
    struct block *next;
    size_t bytes;
    max_align_t data[];
} block;

typedef struct cached_vec {
    const char *name;
    const char *text;
    double *x;
    int n;
} cached_vec;

struct lesson {
    const lesson_def *def;
    FILE *in, *out;
    int input;             /* IN_SCRIPT, IN_TTY, IN_PIPE */
    int eof;               /* input ended (pipe): go on without prompts */
    opt_entry opt[LESSON_MAX_OPTS];
    int nopt;
    int pass;              /* 0: the silent counting pass */
    int silent;
    int step, nsteps, show_from;
    int nask;
    signed char ask_result[LESSON_MAX_ASKS];   /* -1: not answered yet */
    signed char first_try[LESSON_MAX_ASKS];    /* the first answer's result: going
                                                  back and answering again keeps it */
    jmp_buf jb;
    int status;
    block *blocks, *next_block;                /* lesson_alloc, reused per pass */
    uint64_t alloc_total;
    cached_vec vec[16];
    int nvec;
    int view_pending;          /* lesson_view on this step: v opens view_cfg */
    viz_config view_cfg;
    lesson_handout handout;    /* a Markdown handout instead of the lesson */
    int in_code;               /* handout: inside a ``` block of printed values */
    int after_question;        /* worksheet: this step asked; the rest would tell */
    int nask_total;            /* questions in the lesson (counted in pass 0) */
    int after_last;            /* worksheet: the last question is asked; what
                                  follows (the summary) tells the answers */
};

/* ---- small helpers ------------------------------------------------------- */

static void jump(lesson *L, int why) __attribute__((noreturn));
static void jump(lesson *L, int why)
{
    longjmp(L->jb, why);
}

static void diag(const lesson *L, const char *fmt, va_list ap)
{
    fprintf(stderr, "fasim lesson %s: ", L->def->name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

static void fail_status(lesson *L, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
static void fail_status(lesson *L, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag(L, fmt, ap);
    va_end(ap);
    L->status = status;
    jump(L, status == 2 ? J_FAIL : J_ERROR);
}

void lesson_fail(lesson *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag(L, fmt, ap);
    va_end(ap);
    L->status = 2;
    jump(L, J_FAIL);
}

/* Columns a UTF-8 string takes: its code points (no wide characters here). */
static size_t cols_of(const char *s, size_t bytes)
{
    size_t c = 0;
    for (size_t k = 0; k < bytes; k++)
        c += ((unsigned char)s[k] & 0xc0) != 0x80;
    return c;
}

/* vsnprintf into a buffer that grows; the result is freed by the caller. */
static char *vformat(lesson *L, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        fail_status(L, 1, "could not format a message");
    char *s = malloc((size_t)n + 1);
    if (!s)
        fail_status(L, 1, "out of memory");
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

/* Wrap text to LESSON_COLS. Each '\n'-separated line is a paragraph of its
 * own; its continuation lines are indented like it, plus 2 after a "- "
 * bullet, plus `hang` (for "Question: ..."). Runs of spaces collapse. */
static void wrap(lesson *L, const char *text, int hang)
{
    if (L->silent)
        return;
    const char *line = text;
    for (;;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        size_t lead = 0;
        while (lead < len && line[lead] == ' ')
            lead++;
        size_t indent = lead + (size_t)hang;
        if (len >= lead + 2 && line[lead] == '-' && line[lead + 1] == ' ')
            indent += 2;
        if (indent > 40)
            indent = 40;
        const sim_wrap_style st = { LESSON_COLS, indent, 1 };
        fprintf(L->out, "%.*s", (int)lead, line);
        sim_text_wrap(L->out, lead, line + lead, len - lead, &st);
        if (!end)
            break;
        line = end + 1;
    }
}

/* A number for people: whole numbers as integers, others to 6 digits. */
static void fmt_num(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "nan");
    else if (isinf(v))
        snprintf(buf, len, v > 0 ? "inf" : "-inf");
    else if (v == rint(v) && fabs(v) < 1e15)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.6g", v);
}

/* ---- handouts (Markdown) ------------------------------------------------- */

/* Whether the output of this point is left out: a worksheet says nothing
 * after a step's question, which the rest of the step answers. */
static int handout_hides(const lesson *L)
{
    return L->handout == LESSON_HANDOUT_WORKSHEET && (L->after_question || L->after_last);
}

/* Printed values (vectors, tiles, tables) go in a ``` block; prose ends it. */
static void handout_code(lesson *L, int open)
{
    if (L->handout == LESSON_HANDOUT_NONE || L->in_code == open)
        return;
    fputs(open ? "```\n" : "```\n\n", L->out);
    L->in_code = open;
}

static char *trim(char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* ---- the terminal -------------------------------------------------------- */

static struct termios g_saved;
static volatile sig_atomic_t g_raw_fd = -1;   /* >= 0 while raw mode is on */
static struct termios g_raw;
/* Every signal whose default action ends (or stops) the process and that a
 * user or the system may send while a key is awaited; the crash signals
 * are left to the default (or a sanitizer's) handler. */
static const int g_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGPIPE, SIGUSR1,
                              SIGUSR2, SIGALRM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF };
#define NSIGS ((int)(sizeof g_sigs / sizeof g_sigs[0]))
static struct sigaction g_old_act[NSIGS];
static void on_signal(int sig);

static void install_handlers(int on)
{
    for (int k = 0; k < NSIGS; k++) {
        if (on) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_signal;
            sa.sa_flags = SA_RESTART;          /* a key read survives Ctrl-Z */
            sigemptyset(&sa.sa_mask);
            sigaction(g_sigs[k], &sa, &g_old_act[k]);
        } else {
            sigaction(g_sigs[k], &g_old_act[k], NULL);
        }
    }
}

/* Restore the terminal, then take the signal's usual action with the
 * previous handler. SIGTSTP stops the process; on SIGCONT the key read
 * goes on in raw mode. Only async-signal-safe calls. */
static void on_signal(int sig)
{
    int fd = g_raw_fd;
    if (fd >= 0)
        tcsetattr(fd, TCSANOW, &g_saved);
    int k = 0;
    while (k < NSIGS && g_sigs[k] != sig)
        k++;
    struct sigaction mine;
    sigaction(sig, &g_old_act[k], &mine);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    /* Back here only if the signal did not end the process (SIGTSTP, or a
     * handler the caller had installed). */
    sigaction(sig, &mine, NULL);
    if (fd >= 0)
        tcsetattr(fd, TCSANOW, &g_raw);
}

static void term_raw(int fd)
{
    if (tcgetattr(fd, &g_saved) != 0)
        return;
    g_raw = g_saved;
    g_raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    g_raw.c_cc[VMIN] = 1;
    g_raw.c_cc[VTIME] = 0;
    g_raw_fd = fd;
    tcsetattr(fd, TCSANOW, &g_raw);
}

static void term_restore(void)
{
    int fd = g_raw_fd;
    if (fd >= 0) {
        tcsetattr(fd, TCSANOW, &g_saved);
        g_raw_fd = -1;
    }
}

/* One key in raw mode: Enter, space, n or right arrow go on; b, p or left
 * arrow go back; q or Ctrl-D quit. Other keys are ignored. */
static int read_key(lesson *L)
{
    term_raw(fileno(L->in));
    int key = K_EOF;
    for (;;) {
        int c = getc(L->in);
        if (c == EOF)
            break;
        if (c == '\n' || c == '\r' || c == ' ' || c == 'n') {
            key = K_NEXT;
            break;
        }
        if (c == 'b' || c == 'B' || c == 'p') {
            key = K_BACK;
            break;
        }
        if (c == 'q' || c == 'Q' || c == 4) {
            key = K_QUIT;
            break;
        }
        if ((c == 'v' || c == 'V') && L->view_pending) {
            key = K_VIEW;
            break;
        }
        if (c == 27) {                         /* ESC [ C (right), ESC [ D (left) */
            int c2 = getc(L->in);
            if (c2 != '[') {
                if (c2 != EOF)
                    ungetc(c2, L->in);
                continue;
            }
            int c3 = getc(L->in);
            if (c3 == 'C' || c3 == 'B') {
                key = K_NEXT;
                break;
            }
            if (c3 == 'D' || c3 == 'A') {
                key = K_BACK;
                break;
            }
        }
    }
    term_restore();
    return key;
}

/* One line of input (without its newline) into buf; -1 at end of input.
 * The rest of an over-long line is dropped. In pipe mode the line is echoed
 * so that the transcript shows what was answered. */
static int read_line(lesson *L, char *buf, size_t len)
{
    fflush(L->out);
    if (!fgets(buf, (int)len, L->in)) {
        L->eof = 1;
        if (L->input == IN_PIPE)
            fputc('\n', L->out);
        return -1;
    }
    size_t n = strlen(buf);
    if (n && buf[n - 1] == '\n') {
        buf[--n] = '\0';
    } else {
        int c;
        while ((c = getc(L->in)) != EOF && c != '\n')
            ;
    }
    if (n && buf[n - 1] == '\r')
        buf[--n] = '\0';
    if (L->input == IN_PIPE)
        fprintf(L->out, "%s\n", buf);
    return 0;
}

/* v at a prompt: build the run of lesson_view and show it on this terminal,
 * then come back. Problems are said in one line and the lesson goes on. */
static void open_view(lesson *L)
{
    char err[1024];
    viz_model *m = NULL;
    int rc = viz_model_build(&L->view_cfg, &m, err, sizeof err);
    if (rc == VIZ_OK || rc == VIZ_EREFUSED) {
        fflush(L->out);
        rc = viz_curses_run(&L->view_cfg, &m, 0, err, sizeof err);
    }
    viz_model_free(m);
    if (rc != 0 && rc != 2) {
        char *nl = strchr(err, '\n');
        if (nl)
            *nl = '\0';
        fprintf(L->out, "(cannot open the view: %s)\n", err);
    }
}

/* Wait between steps (or at the end). Returns K_NEXT, or jumps. */
static void wait_for_learner(lesson *L, const char *what)
{
    if (L->silent || L->input == IN_SCRIPT || L->eof)
        return;
    for (;;) {
        fprintf(L->out, "[Enter: %s%s   b: back   q: quit] ", what,
                L->view_pending && L->input == IN_TTY ? "   v: view" : "");
        fflush(L->out);
        int key;
        if (L->input == IN_TTY) {
            key = read_key(L);
            if (isatty(fileno(L->out)))
                fputs("\r\033[K", L->out);
            else
                fputc('\n', L->out);
        } else {
            char buf[256];
            if (read_line(L, buf, sizeof buf) != 0)
                return;
            char *t = trim(buf);
            if (!*t || !strcmp(t, "n") || !strcmp(t, "next"))
                key = K_NEXT;
            else if (!strcmp(t, "b") || !strcmp(t, "back"))
                key = K_BACK;
            else if (!strcmp(t, "q") || !strcmp(t, "quit"))
                key = K_QUIT;
            else if (!strcmp(t, "v") && L->view_pending) {
                fputs("(the view needs a terminal: run the command above)\n", L->out);
                continue;
            } else {
                fputs("(an empty line goes on, b goes back, q quits)\n", L->out);
                continue;
            }
        }
        if (key == K_NEXT)
            return;
        if (key == K_VIEW) {
            open_view(L);
            continue;
        }
        if (key == K_EOF || key == K_QUIT) {
            fputs("(quit)\n", L->out);
            jump(L, J_QUIT);
        }
        /* back: the step before the one on screen (the first stays first) */
        L->show_from = L->step > 1 ? L->step - 1 : 1;
        fputs("\n", L->out);
        jump(L, J_BACK);
    }
}

/* ---- options ------------------------------------------------------------- */

static opt_entry *find_opt(lesson *L, const char *name)
{
    size_t len = strlen(name);
    for (int k = 0; k < L->nopt; k++)
        if (L->opt[k].len == len && !memcmp(L->opt[k].name, name, len)) {
            if (L->pass == 0)
                L->opt[k].used = 1;
            return &L->opt[k];
        }
    return NULL;
}

/* The value of --name, or NULL when it was not given. */
static const char *opt_value(lesson *L, const char *name)
{
    opt_entry *o = find_opt(L, name);
    if (!o)
        return NULL;
    if (!o->value)
        fail_status(L, 2, "--%s needs a value; see 'fasim lesson %s --help'", name,
                    L->def->name);
    return o->value;
}

/* Split argv into entries. Returns 0, or 2 with a message. */
static int split_options(lesson *L, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0' || a[2] == '=') {
            fprintf(stderr, "fasim lesson %s: unexpected argument '%s'; lesson options "
                    "are written --name value (see 'fasim lesson %s --help')\n",
                    L->def->name, sim_shown(a).s, L->def->name);
            return 2;
        }
        if (L->nopt == LESSON_MAX_OPTS) {
            fprintf(stderr, "fasim lesson %s: too many options\n", L->def->name);
            return 2;
        }
        opt_entry *o = &L->opt[L->nopt];
        memset(o, 0, sizeof *o);
        o->name = a + 2;
        const char *eq = strchr(o->name, '=');
        if (eq) {
            o->len = (size_t)(eq - o->name);
            o->value = eq + 1;
            o->inline_value = 1;
        } else {
            o->len = strlen(o->name);
            if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
                o->value = argv[++i];
        }
        for (int k = 0; k < L->nopt; k++)
            if (L->opt[k].len == o->len && !memcmp(L->opt[k].name, o->name, o->len)) {
                fprintf(stderr, "fasim lesson %s: --%s is given twice\n", L->def->name,
                        sim_shown_n(o->name, o->len).s);
                return 2;
            }
        L->nopt++;
    }
    return 0;
}

/* After pass 0: every entry must have been asked for, flags without values. */
static void check_options(lesson *L)
{
    for (int k = 0; k < L->nopt; k++) {
        const opt_entry *o = &L->opt[k];
        if (!o->used)
            fail_status(L, 2, "unknown option --%s; see 'fasim lesson %s --help' for "
                        "this lesson's options", sim_shown_n(o->name, o->len).s, L->def->name);
        if (o->as_flag && o->value && o->inline_value)
            fail_status(L, 2, "--%s takes no value (it is a switch)", sim_shown_n(o->name, o->len).s);
        if (o->as_flag && o->value)
            fail_status(L, 2, "unexpected argument '%s' after the switch --%s",
                        sim_shown(o->value).s, sim_shown_n(o->name, o->len).s);
    }
}

const double *lesson_opt_vector(lesson *L, const char *name, const char *def, int *n)
{
    const char *text = opt_value(L, name);
    if (!text)
        text = def;
    for (int k = 0; k < L->nvec; k++)
        if (!strcmp(L->vec[k].name, name) && L->vec[k].text == text) {
            *n = L->vec[k].n;
            return L->vec[k].x;
        }
    /* Entries beyond LESSON_MAX_VECTOR are refused by the parser, so the
     * buffer never needs more than that many; size it to the list. */
    int entries = 1;
    for (const char *p = text; *p && entries <= LESSON_MAX_VECTOR; p++)
        entries += *p == ',';
    if (entries > LESSON_MAX_VECTOR)
        entries = LESSON_MAX_VECTOR;
    double *x = lesson_alloc(L, (size_t)entries * sizeof *x);
    char opt[72], why[256];
    int count;
    snprintf(opt, sizeof opt, "--%s", name);
    if (sim_parse_numbers(opt, text, x, LESSON_MAX_VECTOR, &count, why, sizeof why) != 0)
        fail_status(L, 2, "%s", why);
    if (L->nvec < (int)(sizeof L->vec / sizeof L->vec[0]))
        L->vec[L->nvec++] = (cached_vec){ name, text, x, count };
    *n = count;
    return x;
}

/* A whole number by sim_parse.h's rule for numbers. Returns 0 with *out
 * set; 1 for a whole number outside int64 (negative ones are read, to be
 * refused by the caller's range); -1 for anything else. */
static int parse_int(const char *s, int64_t *out)
{
    while (isspace((unsigned char)*s))
        s++;
    const int neg = *s == '-';
    uint64_t v;
    if (sim_parse_scaled("", s + neg, 0, &v, NULL, 0) == 0) {
        if (v > (uint64_t)INT64_MAX)
            return 1;
        *out = neg ? -(int64_t)v : (int64_t)v;
        return 0;
    }
    /* Too many digits for 64 bits is still a whole number, out of range. */
    const char *d = s + neg;
    size_t n = strspn(d, "0123456789");
    while (n > 0 && isspace((unsigned char)d[n]))
        n++;
    return n > 0 && d[n] == '\0' ? 1 : -1;
}

int64_t lesson_opt_int(lesson *L, const char *name, int64_t def, int64_t lo, int64_t hi)
{
    const char *s = opt_value(L, name);
    if (!s)
        return def;
    int64_t v = 0;
    const int rc = parse_int(s, &v);
    const char *t = s;                   /* hexadecimal: refused as the command line does */
    while (isspace((unsigned char)*t))
        t++;
    t += *t == '+' || *t == '-';
    if (rc < 0 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X'))
        fail_status(L, 2, "--%s %s: write numbers in decimal (hexadecimal is not accepted)",
                    name, sim_shown(s).s);
    if (rc < 0)
        fail_status(L, 2, "--%s %s: not a whole number", name, sim_shown(s).s);
    if (rc > 0 || v < lo || v > hi)
        fail_status(L, 2, "--%s %s: must be between %lld and %lld", name, sim_shown(s).s,
                    (long long)lo, (long long)hi);
    return v;
}

double lesson_opt_double(lesson *L, const char *name, double def, double lo, double hi)
{
    const char *s = opt_value(L, name);
    if (!s)
        return def;
    double v;
    if (sim_parse_real(s, &v) != 0)
        fail_status(L, 2, "--%s %s: not a number", name, sim_shown(s).s);
    if (!isfinite(v))
        fail_status(L, 2, "--%s %s: must be a finite number", name, sim_shown(s).s);
    if (v < lo || v > hi)
        fail_status(L, 2, "--%s %s: must be between %g and %g", name, sim_shown(s).s, lo, hi);
    return v;
}

uint64_t lesson_opt_size(lesson *L, const char *name, const char *def)
{
    const char *s = opt_value(L, name);
    const char *text = s ? s : def;
    uint64_t v;
    char opt[64], why[256];
    snprintf(opt, sizeof opt, "--%s", name);
    if (sim_parse_size(opt, text, &v, why, sizeof why) != 0)
        fail_status(L, 2, "%s", why);
    return v;
}

const char *lesson_opt_string(lesson *L, const char *name, const char *def)
{
    const char *s = opt_value(L, name);
    return s ? s : def;
}

int lesson_opt_flag(lesson *L, const char *name)
{
    opt_entry *o = find_opt(L, name);
    if (!o)
        return 0;
    if (L->pass == 0)
        o->as_flag = 1;
    if (o->inline_value)
        fail_status(L, 2, "--%s takes no value (it is a switch)", name);
    return 1;
}

/* ---- memory -------------------------------------------------------------- */

void *lesson_alloc(lesson *L, size_t bytes)
{
    block *b = L->next_block;
    if (b && b->bytes == bytes) {          /* the same call of an earlier pass */
        L->next_block = b->next;
        memset(b->data, 0, bytes);
        return b->data;
    }
    if (bytes > LESSON_MAX_ALLOC || L->alloc_total + bytes > LESSON_MAX_ALLOC)
        fail_status(L, 1, "a lesson asked for more than 1 GiB of memory");
    b = calloc(1, sizeof *b + bytes);
    if (!b)
        fail_status(L, 1, "out of memory");
    b->bytes = bytes;
    L->alloc_total += bytes;
    /* Append after the blocks this pass has used (a pass that goes another
     * way from here on drops the reuse of the rest). */
    block **tail = &L->blocks;
    while (*tail && *tail != L->next_block)
        tail = &(*tail)->next;
    b->next = *tail;
    *tail = b;
    L->next_block = b->next;
    return b->data;
}

static void free_blocks(lesson *L)
{
    while (L->blocks) {
        block *n = L->blocks->next;
        free(L->blocks);
        L->blocks = n;
    }
}

/* ---- output -------------------------------------------------------------- */

void lesson_say(lesson *L, const char *fmt, ...)
{
    if (L->silent || handout_hides(L))
        return;
    handout_code(L, 0);
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(L, fmt, ap);
    va_end(ap);
    wrap(L, s, 0);
    free(s);
    fputc('\n', L->out);
}

void lesson_print(lesson *L, const char *fmt, ...)
{
    if (L->silent || handout_hides(L))
        return;
    handout_code(L, 1);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(L->out, fmt, ap);
    va_end(ap);
}

/* "  label = [a, b, c]", wrapped under the bracket; vectors over 40 entries
 * show their first 16 and last 4. */
static void show_values(lesson *L, const char *label, const double *xd, const float *xf,
                        int n, int digits)
{
    if (L->silent || handout_hides(L))
        return;
    handout_code(L, 1);
    if (digits <= 0)
        digits = 6;
    char head[128];
    int hl = snprintf(head, sizeof head, "  %s = [", label);
    if (hl < 0 || hl >= (int)sizeof head)
        hl = (int)strlen(head);
    fputs(head, L->out);
    size_t indent = cols_of(head, (size_t)hl);
    if (indent > 30)
        indent = 8;
    size_t col = cols_of(head, (size_t)hl);
    for (int k = 0; k < n; k++) {
        char item[48];
        if (n > 40 && k == 16) {
            snprintf(item, sizeof item, "...");
            k = n - 5;
        } else {
            double v = xd ? xd[k] : (double)xf[k];
            snprintf(item, sizeof item, "%.*g", digits, v);
        }
        size_t w = strlen(item) + 1;           /* and its ',' or ']' */
        if (k > 0 && col + 1 + w > LESSON_COLS) {
            fprintf(L->out, "\n%*s", (int)indent, "");
            col = indent;
        } else if (k > 0) {
            fputc(' ', L->out);
            col++;
        }
        fprintf(L->out, "%s%s", item, k + 1 < n ? "," : "]");
        col += w;
    }
    if (n == 0)
        fputc(']', L->out);
    if (n > 40)
        fprintf(L->out, " (%d entries)", n);
    fputc('\n', L->out);
}

void lesson_show_vector(lesson *L, const char *label, const double *x, int n, int digits)
{
    show_values(L, label, x, NULL, n, digits);
}

void lesson_show_vector_f(lesson *L, const char *label, const float *x, int n, int digits)
{
    show_values(L, label, NULL, x, n, digits);
}

/* "  label (rows x cols):" and the rows, right-aligned in columns; at most
 * the columns that fit in 78 and the first 16 rows are shown. */
void lesson_show_tile(lesson *L, const char *label, const float *x, int rows, int cols,
                      int digits)
{
    if (L->silent || handout_hides(L))
        return;
    handout_code(L, 1);
    if (digits <= 0)
        digits = 6;
    int width = 1;
    char item[48];
    for (int k = 0; k < rows * cols; k++) {
        int w = snprintf(item, sizeof item, "%.*g", digits, (double)x[k]);
        width = w > width ? w : width;
    }
    int fit = (LESSON_COLS - 4 - 4) / (width + 2);
    int show_c = cols <= fit ? cols : (fit > 1 ? fit : 1);
    int show_r = rows <= 16 ? rows : 16;
    fprintf(L->out, "  %s (%d x %d):\n", label, rows, cols);
    for (int r = 0; r < show_r; r++) {
        fputs("   ", L->out);
        for (int c = 0; c < show_c; c++)
            fprintf(L->out, " %*.*g", width + 1, digits, (double)x[(size_t)r * cols + c]);
        if (show_c < cols)
            fprintf(L->out, "  ... (%d more)", cols - show_c);
        fputc('\n', L->out);
    }
    if (show_r < rows)
        fprintf(L->out, "    ... (%d more rows)\n", rows - show_r);
}

/* ---- the learner's answer ------------------------------------------------- */

/* An answer is a number or a small expression: + - * / ^, parentheses, and
 * exp, log (natural), sqrt of a parenthesised argument; "exp(-2)", "1/8",
 * "2^10". Recursive descent over the text with a depth limit, no names other
 * than those three: nothing the learner types is run. */
typedef struct {
    const char *p;
    int depth, bad;
} expr_in;

static double expr_sum(expr_in *x);
static double expr_power(expr_in *x);

static void expr_space(expr_in *x)
{
    while (*x->p == ' ' || *x->p == '\t')
        x->p++;
}

static double expr_atom(expr_in *x)
{
    static const struct { const char *name; double (*fn)(double); } FN[] = {
        { "exp", exp }, { "log", log }, { "ln", log }, { "sqrt", sqrt } };
    expr_space(x);
    if (++x->depth > 64) {
        x->bad = 1;
        return 0.0;
    }
    double v = 0.0;
    if (*x->p == '-' || *x->p == '+') {
        const int neg = *x->p++ == '-';
        v = expr_power(x);              /* -2^2 = -(2^2), as on paper */
        v = neg ? -v : v;
    } else if (*x->p == '(') {
        x->p++;
        v = expr_sum(x);
        expr_space(x);
        if (*x->p++ != ')')
            x->bad = 1;
    } else if (isdigit((unsigned char)*x->p) || *x->p == '.') {
        char *stop;
        v = strtod(x->p, &stop);
        if (stop == x->p)
            x->bad = 1;
        x->p = stop;
    } else {
        size_t k = 0;
        while (k < sizeof FN / sizeof FN[0] && strncmp(x->p, FN[k].name, strlen(FN[k].name)))
            k++;
        if (k == sizeof FN / sizeof FN[0]) {
            x->bad = 1;
            return 0.0;
        }
        x->p += strlen(FN[k].name);
        expr_space(x);
        if (*x->p != '(') {
            x->bad = 1;
            return 0.0;
        }
        v = FN[k].fn(expr_atom(x));
    }
    x->depth--;
    return v;
}

static double expr_power(expr_in *x)
{
    double v = expr_atom(x);
    expr_space(x);
    if (*x->p == '^') {                 /* right-associative: 2^3^2 = 2^9 */
        x->p++;
        v = pow(v, expr_power(x));
    }
    return v;
}

/* A left-associative chain at one level: a sum of products (sum set), or
 * a product of powers. */
static double expr_chain(expr_in *x, int sum)
{
    double v = sum ? expr_chain(x, 0) : expr_power(x);
    for (;;) {
        expr_space(x);
        const char op = *x->p;
        if (!op || !strchr(sum ? "+-" : "*/", op))
            return v;
        x->p++;
        const double w = sum ? expr_chain(x, 0) : expr_power(x);
        v = op == '+' ? v + w : op == '-' ? v - w : op == '*' ? v * w : v / w;
    }
}

static double expr_sum(expr_in *x)
{
    return expr_chain(x, 1);
}

/* The value of the learner's text t; 0 when it is neither a number nor an
 * expression of the form above (or its value is not finite). */
static int parse_answer(const char *t, double *v)
{
    char *stop;
    *v = strtod(t, &stop);
    if (stop != t && !*stop)
        return 1;                       /* a plain number, inf and nan included */
    expr_in x = { t, 0, 0 };
    *v = expr_sum(&x);
    expr_space(&x);
    return !x.bad && !*x.p && isfinite(*v);
}

/* The decimals of a plain decimal number with at least two significant
 * digits ("0.14": 2, "1.6": 1, "136": 0), or -1 for anything else (one
 * digit, an exponent, an expression): what "rounded as typed" may read. */
static int typed_decimals(const char *t)
{
    int sig = 0, dec = -1, digits = 0;
    if (*t == '-' || *t == '+')
        t++;
    for (; *t; t++) {
        if (*t == '.' && dec < 0) {
            dec = 0;
        } else if (isdigit((unsigned char)*t)) {
            sig += sig > 0 || *t != '0';
            dec += dec >= 0;
            digits++;
        } else {
            return -1;
        }
    }
    return digits && sig >= 2 ? (dec < 0 ? 0 : dec) : -1;
}

/* ---- steps and questions ------------------------------------------------- */

void lesson_step(lesson *L, const char *title)
{
    if (!L->silent && L->step >= 1)
        wait_for_learner(L, "next step");
    L->view_pending = 0;
    L->step++;
    if (L->silent && L->pass > 0 && L->step == L->show_from)
        L->silent = 0;
    if (L->silent)
        return;
    char head[256];
    if (L->nsteps >= L->step)
        snprintf(head, sizeof head, "Step %d of %d: %s", L->step, L->nsteps, title);
    else
        snprintf(head, sizeof head, "Step %d: %s", L->step, title);
    if (L->handout != LESSON_HANDOUT_NONE) {
        handout_code(L, 0);
        L->after_question = 0;
        if (!handout_hides(L))
            fprintf(L->out, "## %s\n\n", head);
        return;
    }
    size_t c = cols_of(head, strlen(head));
    fprintf(L->out, "%s\n", head);
    for (size_t k = 0; k < c && k < LESSON_COLS; k++)
        fputc('-', L->out);
    fputs("\n\n", L->out);
}

/* The known answer of q that guess is, or NULL. */
static const lesson_known *known_answer(const lesson_question *q, double guess)
{
    for (int k = 0; k < LESSON_MAX_KNOWN && q->known[k].why; k++) {
        const double v = q->known[k].value;
        if (q->discrete || !isfinite(v) ? guess == v
                                        : fabs(guess - v) <= fmax(0.005 * fabs(v), 1e-9))
            return &q->known[k];
    }
    return NULL;
}

/* Whether guess, typed as t, is the answer rounded to the decimals typed
 * (0.14 for 0.1353): a learner who rounds is right. */
static int rounded_as_typed(const char *t, double guess, double answer)
{
    const int dec = typed_decimals(t);
    if (dec < 0 || dec > 15 || !isfinite(answer))
        return 0;
    const double scale = pow(10.0, dec), r = round(answer * scale) / scale;
    return fabs(guess - r) <= 1e-9 * fmax(1.0, fabs(r));
}

/* The verdict on guess (typed as t). */
static void judge(lesson *L, const char *t, double guess, const lesson_question *q, int *right)
{
    const double answer = q->answer, tol = q->discrete ? 0.0 : q->tol;
    char a[64], g[160], d[64];
    fmt_num(a, sizeof a, answer);
    fmt_num(g, sizeof g, guess);
    char *stop;
    (void)strtod(t, &stop);
    if (*stop) {                       /* an expression: "exp(-2) = 0.135335" */
        char v[64];
        fmt_num(v, sizeof v, guess);
        snprintf(g, sizeof g, "%.80s = %s", t, v);
    }
    double diff = guess - answer;
    double lim = q->discrete ? 0.0 : tol > 0 ? tol : fmax(0.005 * fabs(answer), 1e-9);
    if (isnan(answer) || isinf(answer))
        *right = isnan(answer) ? isnan(guess) : guess == answer;
    else
        *right = fabs(diff) <= lim;
    if (*right && fabs(diff) <= 1e-6 * fabs(answer)) {   /* exact, up to float32 */
        fprintf(L->out, "Right: %s.\n\n", a);
        return;
    }
    if (!*right && !q->discrete && rounded_as_typed(t, guess, answer)) {
        char verdict[256];
        const int dec = typed_decimals(t);
        snprintf(verdict, sizeof verdict, "Right: the answer is %s; you said %s, which is "
                 "it rounded to %d decimal%s.", a, t, dec, dec == 1 ? "" : "s");
        *right = 1;
        wrap(L, verdict, 0);
        fputs("\n", L->out);
        return;
    }
    const lesson_known *kn = *right ? NULL : known_answer(q, guess);
    if (kn) {
        /* The verdict, then the reason in the lesson's wrapped prose. */
        char *t = malloc(strlen(kn->why) + 256);
        if (!t)
            fail_status(L, 1, "out of memory");
        if (kn->right)
            sprintf(t, "Right in idea: you said %s, and the exact answer is %s. %s", g, a,
                    kn->why);
        else
            sprintf(t, "Not quite: the answer is %s; you said %s. %s", a, g, kn->why);
        *right = kn->right;
        wrap(L, t, 0);
        fputs("\n", L->out);
        free(t);
        return;
    }
    char verdict[512];
    if (!isfinite(diff) || q->discrete) {
        snprintf(verdict, sizeof verdict, "%s: the answer is %s; you said %s.",
                 *right ? "Right" : "Not quite", a, g);
        wrap(L, verdict, 0);
        fputs("\n", L->out);
        return;
    }
    snprintf(d, sizeof d, "%.3g", fabs(diff));
    char rel[64] = "";
    double pct = answer != 0 ? 100.0 * fabs(diff) / fabs(answer) : 0.0;
    if (pct >= 1000)
        snprintf(rel, sizeof rel, ", %.3g times the answer", fabs(guess / answer));
    else if (pct >= 10)
        snprintf(rel, sizeof rel, " (%.0f%% of the answer)", pct);
    else if (answer != 0)
        snprintf(rel, sizeof rel, " (%.2g%% of the answer)", pct);
    if (*right)
        snprintf(verdict, sizeof verdict, "Right: the answer is %s; you said %s: off by %s%s, "
                 "within %s.", a, g, d, rel, tol > 0 ? "the tolerance" : "0.5%");
    else
        snprintf(verdict, sizeof verdict, "Not quite: the answer is %s; you said %s, %s too "
                 "%s%s.", a, g, d, diff > 0 ? "high" : "low", rel);
    wrap(L, verdict, 0);           /* at most LESSON_COLS, as the lesson's prose */
    fputs("\n", L->out);
}

/* A handout's question: with room to answer (worksheet), or with the
 * answer and the known answers, each with why (the key). */
static void handout_ask(lesson *L, int number, const char *question,
                        const lesson_question *qn, const char *answer)
{
    handout_code(L, 0);        /* a step's second question too: only the text
                                  between them, which may answer the first, is left out */
    fprintf(L->out, "**Question %d.** %s\n\n", number, question);
    if (L->handout == LESSON_HANDOUT_WORKSHEET) {
        fputs("Answer: ______________________\n\n", L->out);
        L->after_question = 1;
        L->after_last = number >= L->nask_total;
        return;
    }
    fprintf(L->out, "**Answer: %s**%s\n\n", answer,
            qn->discrete ? " (exactly)" : "");
    for (int k = 0; k < LESSON_MAX_KNOWN && qn->known[k].why; k++) {
        char v[64];
        fmt_num(v, sizeof v, qn->known[k].value);
        fprintf(L->out, "- %s %s: %s\n", qn->known[k].right ? "Also right:" : "A common mistake:",
                v, qn->known[k].why);
    }
    if (qn->known[0].why)
        fputc('\n', L->out);
}

static int ask(lesson *L, const char *question, const lesson_question *qn)
{
    const double answer = qn->answer;
    int idx = L->nask++;
    int known = idx < LESSON_MAX_ASKS && L->ask_result[idx] >= 0;
    if (L->silent)
        return known ? L->ask_result[idx] : 1;
    char a[64];
    fmt_num(a, sizeof a, answer);
    if (L->handout != LESSON_HANDOUT_NONE) {
        handout_ask(L, idx + 1, question, qn, a);
        return 1;
    }
    size_t ql = strlen(question) + 16;
    char *q = malloc(ql);
    if (!q)
        fail_status(L, 1, "out of memory");
    snprintf(q, ql, "Question: %s", question);
    wrap(L, q, 2);
    free(q);
    int right = 1;
    if (L->input == IN_SCRIPT || L->eof) {
        fprintf(L->out, "Answer: %s\n\n", a);
        right = L->input == IN_SCRIPT;
    } else {
        for (;;) {
            fputs("Your answer (a number; Enter shows it): ", L->out);
            char buf[256];
            if (read_line(L, buf, sizeof buf) != 0) {
                if (L->input == IN_TTY) {           /* Ctrl-D at a terminal: quit */
                    fputs("\n(quit)\n", L->out);
                    jump(L, J_QUIT);
                }
                fprintf(L->out, "Answer: %s\n\n", a);
                right = 0;
                break;
            }
            char *t = trim(buf);
            if (!*t) {
                fprintf(L->out, "Answer: %s\n\n", a);
                right = 0;
                break;
            }
            if (!strcmp(t, "q") || !strcmp(t, "quit")) {
                fputs("(quit)\n", L->out);
                jump(L, J_QUIT);
            }
            if (!strcmp(t, "b") || !strcmp(t, "back")) {
                L->show_from = L->step > 1 ? L->step - 1 : 1;
                fputs("\n", L->out);
                jump(L, J_BACK);
            }
            double g;
            if (parse_answer(t, &g)) {
                judge(L, t, g, qn, &right);
                break;
            }
            wrap(L, "That is not a number: type one, such as 0.1353 or 1e-3, or an "
                 "expression, such as exp(-2), 1/8 or 2^10; or press Enter to see the "
                 "answer.", 0);
        }
    }
    if (idx < LESSON_MAX_ASKS) {
        L->ask_result[idx] = (signed char)right;
        if (L->first_try[idx] < 0)
            L->first_try[idx] = (signed char)right;
    }
    return right;
}

const sim_gpu *lesson_gpu(lesson *L, const char *name)
{
    const sim_gpu *g = sim_gpu_find(name);
    if (!g)
        lesson_fail(L, "--gpu %s: use a100, a100-40, h100 or h200 (fasim --gpu list)",
                    sim_shown(name).s);
    return g;
}

void lesson_gpu_model(lesson *L, const sim_gpu *g, sim_algo algo, sim_pass pass,
                      const sim_shape *sh, const sim_gm_opts *o, sim_plan *p,
                      sim_gm_result *r)
{
    /* The model replays every head's tile steps: keep a lesson's run to a
     * few seconds (GPT-2 medium, 1,024 heads at N = 1024, is 2^18 pairs). */
    const double n64 = (double)((sh->N + 63) / 64);
    const double pairs = (double)sim_shape_B(sh) * (double)sim_shape_H(sh) * n64 * n64;
    if (pairs > (double)LESSON_GPU_MAX_PAIRS)
        lesson_fail(L, "B H (N/64)^2 = %s block pairs: more than %s, which the lesson models "
                    "in a few seconds; use fewer heads (--heads), a smaller batch (--batch) or "
                    "a shorter N", lesson_num((uint64_t)fmin(pairs, 1e19)),
                    lesson_num(LESSON_GPU_MAX_PAIRS));
    char err[1024];
    if (sim_claims_gpu_pass(g, algo, pass, sh, o, p, r, err, sizeof err) != 0)
        lesson_fail(L, "%s %s on %s: %s", sim_algo_name(algo), sim_pass_name(pass), g->name,
                    err);
}

int lesson_interactive(const lesson *L)
{
    return !L->silent && L->input == IN_TTY && isatty(fileno(L->out));
}

/* ---- the catalogue ------------------------------------------------------- */

const lesson_def *lesson_find(const char *name_or_number)
{
    int count;
    const lesson_def *const *all = lesson_all(&count);
    if (!name_or_number || !*name_or_number)
        return NULL;
    const char *p = name_or_number;
    while (*p >= '0' && *p <= '9')
        p++;
    if (!*p && p - name_or_number <= 3) {
        int num = atoi(name_or_number);
        for (int k = 0; k < count; k++)
            if (all[k]->number == num)
                return all[k];
        return NULL;
    }
    for (int k = 0; k < count; k++)
        if (!strcmp(all[k]->name, name_or_number))
            return all[k];
    return NULL;
}

void lesson_print_list(FILE *out)
{
    int count;
    const lesson_def *const *all = lesson_all(&count);
    int w = 4;
    for (int k = 0; k < count; k++)
        w = (int)strlen(all[k]->name) > w ? (int)strlen(all[k]->name) : w;
    fprintf(out, "%3s  %-*s  %-12s  %3s  %s\n", "#", w, "name", "level", "min",
            "what it is about");
    for (int k = 0; k < count; k++)
        fprintf(out, "%3d  %-*s  %-12s  %3d  %s\n", all[k]->number, w, all[k]->name,
                all[k]->level, all[k]->minutes, all[k]->summary);
}

/* ---- running ------------------------------------------------------------- */

/* One pass of the lesson. Returns why it ended (J_DONE, J_BACK, ...). */
static int run_pass(lesson *L)
{
    int why = setjmp(L->jb);
    if (why)
        return why;
    L->step = 0;
    L->nask = 0;
    L->nvec = 0;
    L->next_block = L->blocks;
    L->silent = L->pass == 0 || L->show_from > 1;
    L->def->run(L);
    if (!L->silent)
        wait_for_learner(L, "finish");
    return J_DONE;
}

int lesson_run(const lesson_def *def, const lesson_run_opts *opts)
{
    if (!def || !def->run || !opts)
        return 1;
    lesson *L = calloc(1, sizeof *L);
    if (!L) {
        fprintf(stderr, "fasim lesson: out of memory\n");
        return 1;
    }
    L->def = def;
    L->in = opts->in ? opts->in : stdin;
    L->out = opts->out ? opts->out : stdout;
    L->handout = opts->handout;
    L->input = opts->script || opts->handout ? IN_SCRIPT
               : isatty(fileno(L->in))      ? IN_TTY
                                            : IN_PIPE;
    memset(L->ask_result, -1, sizeof L->ask_result);
    memset(L->first_try, -1, sizeof L->first_try);
    int status = split_options(L, opts->argc, opts->argv);
    if (status != 0) {
        free(L);
        return status;
    }
    /* Pass 0: count the steps and check every option, printing nothing. */
    int why = run_pass(L);
    if (why == J_DONE) {
        L->nsteps = L->step;
        L->nask_total = L->nask;
        int w2 = setjmp(L->jb);
        if (w2 == 0)
            check_options(L);
        else
            why = w2;
    }
    if (why != J_DONE) {
        status = L->status ? L->status : 1;
        free_blocks(L);
        free(L);
        return status;
    }
    int count;
    (void)lesson_all(&count);
    if (L->handout != LESSON_HANDOUT_NONE)
        fprintf(L->out, "# Lesson %d of %d: %s%s\n\n*`fasim lesson %s`; %s; about %d "
                "minutes; every number computed by fasim.*\n",
                def->number, count, def->title,
                L->handout == LESSON_HANDOUT_ANSWERS ? ": answer key" : "", def->name,
                def->level, def->minutes);
    else
        fprintf(L->out, "Lesson %d of %d: %s\n(%s; %s; about %d minutes)\n", def->number,
                count, def->title, def->name, def->level, def->minutes);
    if (L->input != IN_SCRIPT)
        fputs("Keys: Enter or space for the next step, b to go back a step, q to quit.\n",
              L->out);
    fputc('\n', L->out);
    if (L->input == IN_TTY)
        install_handlers(1);
    L->pass = 1;
    L->show_from = 1;
    do {
        why = run_pass(L);
        L->pass++;
    } while (why == J_BACK);
    if (L->input == IN_TTY) {
        term_restore();
        install_handlers(0);
    }
    status = why == J_DONE || why == J_QUIT ? 0 : (L->status ? L->status : 1);
    handout_code(L, 0);
    if (why == J_DONE && L->handout != LESSON_HANDOUT_NONE) {
        int next = def->number;
        const lesson_def *const *all = lesson_all(&count);
        fputs("---\n\n", L->out);
        if (next < count)
            fprintf(L->out, "Next: `fasim lesson %s`\n", all[next]->name);
    } else if (why == J_DONE) {
        int next = def->number;
        if (L->input != IN_SCRIPT && L->nask_total > 0) {
            int got = 0;
            for (int k = 0; k < L->nask_total && k < LESSON_MAX_ASKS; k++)
                got += L->first_try[k] == 1;
            fprintf(L->out, "You answered %d of %d question%s right on the first try.\n", got,
                    L->nask_total, L->nask_total == 1 ? "" : "s");
        }
        const lesson_def *const *all = lesson_all(&count);
        if (next < count)
            fprintf(L->out, "End of lesson %d. Next: fasim lesson %s\n", def->number,
                    all[next]->name);
        else
            fprintf(L->out, "End of lesson %d, the last one.\n", def->number);
    }
    if (fflush(L->out) != 0 || ferror(L->out)) {
        fprintf(stderr, "fasim lesson %s: could not write the lesson out\n", def->name);
        status = 1;
    }
    free_blocks(L);
    free(L);
    return status;
}

int lesson_ask(lesson *L, const char *question, double answer, double tol)
{
    const lesson_question q = { .answer = answer, .tol = tol };
    return ask(L, question, &q);
}

int lesson_askf(lesson *L, double answer, const char *fmt, ...)
{
    char q[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q, sizeof q, fmt, ap);
    va_end(ap);
    return lesson_ask(L, q, answer, 0);
}

int lesson_ask_q(lesson *L, const lesson_question *q, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return ask(L, text, q);
}

const char *lesson_num(uint64_t n)
{
    static char ring[16][32];
    static int k;
    k = (k + 1) % 16;
    sim_format_count(ring[k], sizeof ring[k], n);
    return ring[k];
}

void lesson_view(lesson *L, sim_algo algo, const sim_shape *sh, int64_t Br, int64_t Bc)
{
    if (L->silent)
        return;
    char cmd[256], b1[32], b2[32];
    int n = snprintf(cmd, sizeof cmd, "fasim view --algo %s --N %lld --d %lld --M %llu",
                     sim_algo_name(algo), (long long)sh->N, (long long)sh->d,
                     (unsigned long long)sh->M);
    if (sh->dtype != SIM_FP16 && n > 0 && (size_t)n < sizeof cmd)
        n += snprintf(cmd + n, sizeof cmd - (size_t)n, " --dtype %s", sim_dtype_name(sh->dtype));
    if (sh->causal && n > 0 && (size_t)n < sizeof cmd)
        n += snprintf(cmd + n, sizeof cmd - (size_t)n, " --causal");
    if (Br && Bc && n > 0 && (size_t)n < sizeof cmd) {
        snprintf(b1, sizeof b1, "%lld", (long long)Br);
        snprintf(b2, sizeof b2, "%lld", (long long)Bc);
        snprintf(cmd + n, sizeof cmd - (size_t)n, " --Br %s --Bc %s", b1, b2);
    }
    if (L->handout != LESSON_HANDOUT_NONE) {
        if (!handout_hides(L)) {
            handout_code(L, 0);
            fprintf(L->out, "Step through this run: `%s`\n\n", cmd);
        }
        return;
    }
    fprintf(L->out, "  Step through this run:\n    %s\n", cmd);
    if (L->input == IN_TTY && isatty(fileno(L->out))) {
        fputs("  (press v at the prompt to open it now)\n", L->out);
        viz_config_default(&L->view_cfg);
        L->view_cfg.algo = algo;
        L->view_cfg.sh = *sh;
        L->view_cfg.Br = Br;
        L->view_cfg.Bc = Bc;
        L->view_cfg.plan_kind = (Br || Bc) ? SIM_PLAN_USER : SIM_PLAN_AUTO;
        L->view_pending = 1;
    }
    fputc('\n', L->out);
}
