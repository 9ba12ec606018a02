/*
 * tmux_util.h — driving a program in a private tmux server, for the tests of
 * the interactive screens (test_viz_tmux.c, test_explore_tmux.c).
 *
 * Header-only (static functions): each test executable includes it once. The
 * including file defines _POSIX_C_SOURCE and includes cmocka first; it sets
 * g_sock (the -L socket name) before the first call.
 */
#ifndef FASIM_TMUX_UTIL_H
#define FASIM_TMUX_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char g_sock[64];

/* Generous: under AddressSanitizer fasim starts slower. Polls return as
 * soon as the screen shows what is awaited, so the usual wait is short. */
#define WAIT_S 15.0

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int tmux(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int tmux(const char *fmt, ...)
{
    char args[2048], cmd[2304];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "tmux -L %s -f /dev/null %s", g_sock, args);
    return system(cmd);
}

/* The output of a tmux command (malloc'd). */
static char *tmux_out(const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "tmux -L %s -f /dev/null %s 2>/dev/null", g_sock, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 8192, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (size_t r; (r = fread(buf + n, 1, cap - 1 - n, p)) > 0;) {
        n += r;
        if (n + 1 >= cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    buf[n] = '\0';
    pclose(p);
    return buf;
}

static char *capture(const char *session)
{
    char args[128];
    snprintf(args, sizeof args, "capture-pane -p -t %s", session);
    return tmux_out(args);
}

/* Poll until the pane shows every needle; returns the capture (malloc'd),
 * or fails with the last screen. */
static char *wait_for2(const char *session, const char *a, const char *b)
{
    const double end = now_s() + WAIT_S;
    for (;;) {
        char *s = capture(session);
        if (strstr(s, a) && (!b || strstr(s, b)))
            return s;
        if (now_s() > end) {
            fprintf(stderr, "timed out waiting for '%s'%s%s; the pane shows:\n%s\n", a,
                    b ? " and " : "", b ? b : "", s);
            free(s);
            fail();
        }
        free(s);
        sleep_ms(40);
    }
}

static char *wait_for(const char *session, const char *needle)
{
    return wait_for2(session, needle, NULL);
}

static void wait_gone(const char *session, const char *needle)
{
    const double end = now_s() + WAIT_S;
    for (;;) {
        char *s = capture(session);
        const int there = strstr(s, needle) != NULL;
        free(s);
        if (!there)
            return;
        if (now_s() > end) {
            fprintf(stderr, "'%s' did not go away\n", needle);
            fail();
        }
        sleep_ms(40);
    }
}

static void keys(const char *session, const char *k)
{
    assert_int_equal(tmux("send-keys -t %s %s", session, k), 0);
}

/* The pane's program gave the terminal back: it left the alternate screen,
 * the cursor shows, keypad transmit mode (application cursor keys) and
 * mouse reporting are off. */
static void assert_restored(const char *session)
{
    char args[256];
    snprintf(args, sizeof args, "display-message -p -t %s '#{alternate_on}#{cursor_flag}"
             "#{keypad_flag}#{keypad_cursor_flag}#{mouse_any_flag}'", session);
    char *s = tmux_out(args);
    if (strncmp(s, "01000", 5) != 0)
        fprintf(stderr, "alternate, cursor, keypad, cursor keys, mouse = %s", s);
    assert_int_equal(strncmp(s, "01000", 5), 0);
    free(s);
}

/* The pid of the pane's shell's child: the program the test started. */
static long pane_child(const char *session)
{
    char args[128];
    snprintf(args, sizeof args, "display-message -p -t %s '#{pane_pid}'", session);
    char *pp = tmux_out(args);
    const long sh_pid = strtol(pp, NULL, 10);
    free(pp);
    assert_true(sh_pid > 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "ps -o pid= --ppid %ld", sh_pid);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    long pid = 0;
    assert_int_equal(fscanf(p, "%ld", &pid), 1);
    pclose(p);
    assert_true(pid > 0);
    return pid;
}

#endif /* FASIM_TMUX_UTIL_H */
