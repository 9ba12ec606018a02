/*
 * test_explore_tmux.c — the interactive `fasim explore` in a real terminal:
 * tmux runs it in a detached 80 x 24 pane, keys go in with send-keys and the
 * screen comes back with capture-pane.
 *
 * Checks: N doubles the problem on screen at once (and the rest of the frame
 * follows); the status line is the bottom row; causal and the help box; a
 * resize redraws at the new size; v opens the view of the current
 * configuration and q comes back to explore; every way out — q, Ctrl-C —
 * ends with the terminal restored (the pane has left the alternate screen)
 * and the documented exit status (0, 130); TERM=vt100 with NO_COLOR works.
 *
 * A private tmux server (-L) with no configuration (-f /dev/null) is used
 * and killed at the end. Skipped (77) when tmux is not installed.
 * Usage: test_explore_tmux <path to fasim>
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

/* The 1-based row of the pane whose line starts with `prefix`, or 0. */
static int row_of(const char *screen, const char *prefix)
{
    int row = 0;
    for (const char *p = screen, *q; (q = strchr(p, '\n')) != NULL; p = q + 1) {
        row++;
        if (!strncmp(p, prefix, strlen(prefix)))
            return row;
    }
    return 0;
}

/* `fasim explore ARGS` in a new 80 x 24 session; the shell prints the exit
 * status when it ends. Ctrl-C reaches the whole foreground group: the shell
 * traps it (a trap is not inherited) so that it survives to print. */
static void start(const char *session, const char *env, const char *args)
{
    assert_int_equal(tmux("new-session -d -x 80 -y 24 -s %s \"sh -c 'trap : INT; %s %s "
                          "explore %s; echo EXIT=\\$?; sleep 60'\"", session, env, g_fasim,
                          args), 0);
}

static void stop(const char *session)
{
    tmux("kill-session -t %s", session);
}

#define STATUS_PREFIX "N/n D/d M/m"

static void test_double_n_and_quit(void **state)
{
    (void)state;
    const char *S = "double";
    start(S, "", "");
    char *a = wait_for(S, "fasim explore  N = 1,024");
    assert_non_null(strstr(a, "exact; equal to the simulator's counts"));
    assert_non_null(strstr(a, "9,699,328"));                /* naive's exact bytes */
    assert_int_equal(row_of(a, STATUS_PREFIX), 24);
    keys(S, "N");
    char *b = wait_for2(S, "N = 2,048", "N doubled: 1,024 -> 2,048");
    assert_true(strcmp(a, b) != 0);
    /* The table followed: naive's bytes at N = 2048 (the report's). */
    assert_non_null(strstr(b, "37,748,736"));
    assert_null(strstr(b, "9,699,328"));
    assert_int_equal(row_of(b, STATUS_PREFIX), 24);
    free(a);
    free(b);
    keys(S, "x");
    free(wait_for(S, "causal on"));
    keys(S, "?");
    free(wait_for(S, "any key closes this help"));
    keys(S, "t");                       /* closes the help only */
    wait_gone(S, "any key closes this help");
    char *c = capture(S);
    assert_non_null(strstr(c, "fp16"));
    free(c);
    keys(S, "q");
    free(wait_for(S, "EXIT=0"));
    assert_restored(S);
    stop(S);
}

/* v: the view of the current configuration in the same terminal; q comes
 * back to explore, which is redrawn; a resize is followed. */
static void test_view_and_resize(void **state)
{
    (void)state;
    const char *S = "view";
    start(S, "", "--N 64 --M 8K");
    free(wait_for(S, "N = 64"));
    keys(S, "v");
    /* The view's first step of FA2 on this configuration (test_viz_tmux's). */
    free(wait_for2(S, "fasim view  fa2  N=64", "step 1 of 281"));
    keys(S, "n");
    free(wait_for(S, "step 2 of 281"));
    keys(S, "q");
    char *s = wait_for(S, "back from the view of fa2");
    assert_non_null(strstr(s, "fasim explore  N = 64"));
    assert_int_equal(row_of(s, STATUS_PREFIX), 24);
    free(s);
    assert_int_equal(tmux("resize-window -t %s -x 110 -y 36", S), 0);
    const double end = now_s() + WAIT_S;
    int status_row = 0, wide = 0;
    while (!(wide && status_row == 36) && now_s() < end) {
        s = capture(S);
        status_row = row_of(s, STATUS_PREFIX);
        wide = 0;
        for (char *p = s, *q; (q = strchr(p, '\n')) != NULL; p = q + 1)
            if (q - p > 80)
                wide = 1;
        free(s);
        sleep_ms(40);
    }
    assert_true(wide);
    assert_int_equal(status_row, 36);
    keys(S, "q");
    free(wait_for(S, "EXIT=0"));
    assert_restored(S);
    stop(S);
}

static void test_ctrl_c(void **state)
{
    (void)state;
    const char *S = "ctrlc";
    start(S, "", "--causal");
    free(wait_for(S, "fasim explore"));
    keys(S, "C-c");
    free(wait_for(S, "EXIT=130"));
    assert_restored(S);
    stop(S);
}

/* Ctrl-\ (SIGQUIT) ends explore as SIGQUIT does, the terminal given back. */
static void test_sigquit(void **state)
{
    (void)state;
    const char *S = "quit";
    start(S, "", "--causal");
    free(wait_for(S, "fasim explore"));
    char cmd[64];
    snprintf(cmd, sizeof cmd, "kill -QUIT %ld", pane_child(S));
    assert_int_equal(system(cmd), 0);
    free(wait_for(S, "EXIT=131"));
    assert_restored(S);
    stop(S);
}

static void test_vt100_no_color(void **state)
{
    (void)state;
    const char *S = "vt100";
    start(S, "TERM=vt100 NO_COLOR=1", "--gpu a100");
    free(wait_for(S, "163 KiB, a100"));
    keys(S, "g");
    free(wait_for(S, "gpu h100"));
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
    snprintf(g_sock, sizeof g_sock, "fasim-explore-%ld", (long)getpid());
    /* A session that outlives the tests keeps the server up: when a test kills
     * the last session the server exits, and a new-session racing with that
     * exit fails with "server exited unexpectedly". */
    tmux("new-session -d -s keeper 'sleep 600'");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_double_n_and_quit),
        cmocka_unit_test(test_view_and_resize),
        cmocka_unit_test(test_ctrl_c),
        cmocka_unit_test(test_sigquit),
        cmocka_unit_test(test_vt100_no_color),
    };
    const int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tmux("kill-server 2>/dev/null");
    return rc;
}
