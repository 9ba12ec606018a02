/*
 * test_viz_tmux.c — the interactive `fasim view` in a real terminal: tmux
 * runs it in a detached 80 x 24 pane, keys are sent with send-keys and the
 * screen read back with capture-pane.
 *
 * Checks: stepping changes the frame (n, Right, b, Left, g), help, switching
 * loop order (a) and causal (c), play/pause, a mouse click on a tile, a
 * resize redraws at the new size, and every way out — q, Ctrl-C, SIGTERM,
 * and the signals that end the process (SIGQUIT, SIGPIPE, SIGUSR1) in the
 * view and in a lesson's key prompt — ends with the terminal restored (the
 * alternate screen left, the cursor shown, keypad and mouse modes off, the
 * tty canonical with echo) and the documented exit status (0, 130, 143,
 * 128 + the signal); TERM=vt100 with NO_COLOR works too.
 *
 * A private tmux server (-L) with no configuration (-f /dev/null) is used
 * and killed at the end. Skipped (77) when tmux is not installed.
 * Usage: test_viz_tmux <path to fasim>
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static const char *g_fasim;
#include "tmux_util.h"

/* Start `fasim view ARGS` in a new 80 x 24 session; the shell prints the
 * exit status when it ends and stays a while so that it can be read. Ctrl-C
 * reaches the whole foreground group: the shell traps it (a trap, unlike an
 * ignored signal, is not inherited), so that it survives to print. */
static void start(const char *session, const char *env, const char *args)
{
    assert_int_equal(tmux("new-session -d -x 80 -y 24 -s %s \"sh -c 'trap : INT; %s %s view "
                          "%s; echo EXIT=\\$?; sleep 60'\"", session, env, g_fasim, args), 0);
}

/* The same for any subcommand line (e.g. "lesson causal --N 256"), 100 x 40. */
static void start_cmd(const char *session, const char *cmdline)
{
    assert_int_equal(tmux("new-session -d -x 100 -y 40 -s %s \"sh -c 'trap : INT; %s %s; "
                          "echo EXIT=\\$?; sleep 60'\"", session, g_fasim, cmdline), 0);
}

static void stop(const char *session)
{
    tmux("kill-session -t %s", session);
}

/* ---- tests ------------------------------------------------------------------ */

static void test_step_and_quit(void **state)
{
    (void)state;
    const char *S = "steps";
    start(S, "", "--N 64 --d 64 --M 8K --algo fa2");
    /* The key bar is the last line drawn: waiting for it too means the
     * capture holds a whole frame, not one caught mid-refresh on a busy
     * machine (CI once saw the header without the bar). */
    char *a = wait_for2(S, "step 1 of 281", "spc:play");
    assert_non_null(strstr(a, "fasim view  fa2"));
    keys(S, "n");
    char *b = wait_for2(S, "step 2 of 281", "spc:play");
    assert_true(strcmp(a, b) != 0);
    free(a);
    free(b);
    keys(S, "Right");
    free(wait_for(S, "step 3 of 281"));
    keys(S, "b");
    free(wait_for(S, "step 2 of 281"));
    keys(S, "Left");
    free(wait_for(S, "step 1 of 281"));
    keys(S, "g 4 0 Enter");
    free(wait_for(S, "step 40 of 281"));
    keys(S, "End");
    free(wait_for(S, "step 281 of 281"));
    keys(S, "r");
    free(wait_for(S, "step 1 of 281"));
    keys(S, "?");
    free(wait_for(S, "any key closes this help"));
    keys(S, "x");
    wait_gone(S, "any key closes this help");
    /* Play, then pause. */
    keys(S, "+ Space");
    free(wait_for(S, "playing 20/s"));
    keys(S, "Space");
    free(wait_for(S, "paused (20/s)"));
    /* Another loop order on the same inputs, then causal. */
    keys(S, "a");
    free(wait_for(S, "fasim view  naive"));
    keys(S, "a");
    free(wait_for(S, "fasim view  fa1"));
    keys(S, "c");
    free(wait_for(S, "causal"));
    keys(S, "q");
    free(wait_for(S, "EXIT=0"));
    assert_restored(S);
    stop(S);
}

/* A click on K's third tile (rows 32-47): the details show in the bottom line. */
static void test_mouse_and_resize(void **state)
{
    (void)state;
    const char *S = "mouse";
    start(S, "", "--N 64 --d 64 --M 16K --algo fa2 --Br 16 --Bc 16");
    char *s = wait_for(S, "step 1 of");
    /* Find the K grid: the column of "K" in the names row. */
    char *line = strstr(s, "\nQ ");
    assert_non_null(line);
    int y = 0;
    for (char *p = s; p < line + 1; p++)
        y += *p == '\n';
    const int x = (int)(strchr(line + 1, 'K') - (line + 1));
    /* The grid rows below the names: each begins with a tile's mark (' ',
     * '*', '>', '<', '=') or an untouched tile's '.'. T_c = 4 tiles on gh
     * rows: tile 3 begins at row 2 gh / 4. */
    int gh = 0;
    for (const char *r = strchr(line + 1, '\n'); r && strchr(" *><=.", r[1]);
         r = strchr(r + 1, '\n'))
        gh++;
    assert_true(gh >= 4);
    free(s);
    const int gy = y + 1 + 2 * gh / 4;
    /* xterm X10 mouse reports, press then release: ESC [ M, then the button
     * + 32 (0 pressed, 3 released), x + 33, y + 33; sent as hex bytes. */
    char seq[96];
    snprintf(seq, sizeof seq, "-H 1b 5b 4d 20 %02x %02x 1b 5b 4d 23 %02x %02x", 33 + x, 33 + gy,
             33 + x, 33 + gy);
    keys(S, seq);
    s = wait_for(S, "K tile 3 of 4, rows [32:48)");
    free(s);
    /* Resize: the view follows. */
    assert_int_equal(tmux("resize-window -t %s -x 120 -y 40", S), 0);
    const double end = now_s() + WAIT_S;
    /* Wider than 80 columns (the pseudocode moves right), and the status
     * line on the 40th row. */
    int wide = 0, status_row = 0;
    while (!(wide && status_row == 40) && now_s() < end) {
        s = capture(S);
        int row = 0;
        wide = status_row = 0;
        for (char *p = s, *q; (q = strchr(p, '\n')) != NULL; p = q + 1) {
            row++;
            if (q - p > 80)
                wide = 1;
            if (!strncmp(p, "spc:play", 8))
                status_row = row;
        }
        free(s);
        sleep_ms(50);
    }
    assert_true(wide);
    assert_int_equal(status_row, 40);
    keys(S, "q");
    free(wait_for(S, "EXIT=0"));
    assert_restored(S);
    stop(S);
}

static void test_ctrl_c(void **state)
{
    (void)state;
    const char *S = "ctrlc";
    start(S, "", "--N 64 --d 64 --M 8K");
    free(wait_for(S, "step 1 of"));
    keys(S, "Space");
    free(wait_for(S, "playing"));
    keys(S, "C-c");
    free(wait_for(S, "EXIT=130"));
    assert_restored(S);
    stop(S);
}

static void test_sigterm(void **state)
{
    (void)state;
    const char *S = "term";
    start(S, "", "--N 64 --d 64 --M 8K");
    free(wait_for(S, "step 1 of"));
    /* The pane runs sh; fasim is its child. */
    const long pid = pane_child(S);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "kill -TERM %ld", pid);
    assert_int_equal(system(cmd), 0);
    free(wait_for(S, "EXIT=143"));
    assert_restored(S);
    stop(S);
}

/* The shell prints the tty's modes after fasim ends: canonical input and
 * echo must be back on. */
static void assert_tty_sane(const char *session, const char *screen)
{
    (void)session;
    assert_non_null(strstr(screen, "icanon"));
    assert_null(strstr(screen, "-icanon"));
    assert_null(strstr(screen, "-echo "));
    assert_null(strstr(screen, "-echo\n"));
}

/* Start `fasim CMDLINE` in session S (the shell prints the exit status and
 * the tty's modes after it), wait for `ready`, send each signal that ends
 * the process (Ctrl-\, a closed pipe, SIGUSR1): fasim must end as that
 * signal does, with the tty given back, and with curses' modes off too
 * when `curses` is set. */
static void fatal_signal_cases(const char *prefix, const char *cmdline, const char *ready,
                               int curses)
{
    static const struct { const char *name; int status; } sigs[] = {
        { "QUIT", 131 }, { "PIPE", 141 }, { "USR1", 138 },
    };
    for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++) {
        char S[32];
        snprintf(S, sizeof S, "%s%zu", prefix, k);
        assert_int_equal(tmux("new-session -d -x 100 -y 40 -s %s \"sh -c 'trap : INT; %s %s; "
                              "echo EXIT=\\$?; stty -a; sleep 60'\"", S, g_fasim, cmdline), 0);
        free(wait_for(S, ready));
        char cmd[128], want[32];
        snprintf(cmd, sizeof cmd, "kill -%s %ld", sigs[k].name, pane_child(S));
        assert_int_equal(system(cmd), 0);
        snprintf(want, sizeof want, "EXIT=%d", sigs[k].status);
        char *screen = wait_for2(S, want, "icanon");
        assert_tty_sane(S, screen);
        free(screen);
        if (curses)
            assert_restored(S);
        stop(S);
    }
}

static void test_fatal_signals(void **state)
{
    (void)state;
    fatal_signal_cases("fatal", "view --N 64 --d 64 --M 8K", "step 1 of", 1);
}

/* A lesson waiting for a key (raw mode) gives the tty back on the same signals. */
static void test_lesson_fatal_signals(void **state)
{
    (void)state;
    fatal_signal_cases("lfatal", "lesson online-softmax", "Enter", 0);
}

static void test_vt100_no_color(void **state)
{
    (void)state;
    const char *S = "vt100";
    start(S, "TERM=vt100 NO_COLOR=1", "--N 64 --d 64 --M 8K --algo naive");
    free(wait_for(S, "step 1 of"));
    keys(S, "n");
    free(wait_for(S, "step 2 of"));
    keys(S, "q");
    free(wait_for(S, "EXIT=0"));
    assert_restored(S);
    stop(S);
}

/* A refused plan is shown, and q leaves with exit status 2 and the message. */
static void test_refused(void **state)
{
    (void)state;
    const char *S = "refused";
    start(S, "", "--N 64 --d 64 --M 8K --Br 64 --Bc 64");
    free(wait_for(S, "PLAN REFUSED"));
    keys(S, "q");
    char *s = wait_for(S, "EXIT=2");
    assert_non_null(strstr(s, "does not fit"));
    free(s);
    assert_restored(S);
    stop(S);
}

/* A lesson opens the view at a step (lesson_view): v at the prompt shows
 * the run, q comes back to the same prompt, q again ends the lesson. */
static void test_lesson_opens_view(void **state)
{
    (void)state;
    const char *S = "lesson";
    start_cmd(S, "lesson causal --N 256 --block 64");
    free(wait_for(S, "Your answer"));
    keys(S, "10 Enter");
    free(wait_for(S, "v: view"));
    keys(S, "v");
    char *v = wait_for(S, "fasim view  fa2");
    assert_non_null(strstr(v, "causal"));
    free(v);
    keys(S, "q");
    wait_gone(S, "fasim view  fa2");
    free(wait_for(S, "v: view"));
    keys(S, "q");
    free(wait_for(S, "EXIT=0"));
    assert_restored(S);
    stop(S);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <fasim>\n", argv[0]);
        return 2;
    }
    if (system("command -v tmux >/dev/null 2>&1") != 0) {
        fprintf(stderr, "tmux is not installed: skipped\n");
        return 77;
    }
    g_fasim = argv[1];
    snprintf(g_sock, sizeof g_sock, "fasim-test-%ld", (long)getpid());
    /* A session that outlives the tests keeps the server up: when a test kills
     * the last session the server exits, and a new-session racing with that
     * exit fails with "server exited unexpectedly". */
    tmux("new-session -d -s keeper 'sleep 600'");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_and_quit),
        cmocka_unit_test(test_mouse_and_resize),
        cmocka_unit_test(test_ctrl_c),
        cmocka_unit_test(test_sigterm),
        cmocka_unit_test(test_fatal_signals),
        cmocka_unit_test(test_lesson_fatal_signals),
        cmocka_unit_test(test_vt100_no_color),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_lesson_opens_view),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tmux("kill-server 2>/dev/null");
    return rc;
}
