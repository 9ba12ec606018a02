/*
 * test_man.c — the manual page covers every command and option: each
 * "--option" printed by `fasim --help`, `fasim CMD --help` and every lesson's
 * --help must appear in docs/fasim.1, and each subcommand must have its own
 * section. The check reads the page as roff source with its "\-" escapes
 * undone. One known-wrong case (an option that does not exist) must be
 * reported missing, so that the check can fail.
 *
 * Each command's section names exactly the options the table gives it
 * (cli/cli_table.c, as fasim_options lists it): none missing, none that the
 * command does not take. --help and --version, which work everywhere, are
 * named once, in the report's section.
 *
 * Arguments: the fasim binary, docs/fasim.1, the fasim_options tool.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "sweep_util.h"

static const char *g_fasim;
static const char *g_options;  /* fasim_options: "CMD --opt --opt ..." lines */
static char *g_man;            /* the page with "\-" turned into "-" */

/* Is "--opt" (the token, delimited) in text? */
static int text_has(const char *text, const char *opt)
{
    size_t n = strlen(opt);
    for (const char *p = strstr(text, opt); p; p = strstr(p + 1, opt)) {
        char after = p[n];
        if (!isalnum((unsigned char)after) && after != '-')
            return 1;
    }
    return 0;
}

static int man_has(const char *opt)
{
    return text_has(g_man, opt);
}

/* The next "--word" of text at or after *p, in opt; *p moves past it.
 * Returns 0 when there is none. */
static int next_word(const char *text, const char **p, char *opt, size_t len)
{
    for (const char *q; (q = strstr(*p, "--")) != NULL;) {
        const char *s = q + 2;
        size_t n = 0;
        while (isalnum((unsigned char)s[n]) || (s[n] == '-' && isalnum((unsigned char)s[n + 1])))
            n++;
        *p = s + n;
        if (n > 0 && (q == text || !isalnum((unsigned char)q[-1]))) {
            snprintf(opt, len, "--%.*s", (int)(n < 60 ? n : 60), s);
            return 1;
        }
    }
    return 0;
}

/* The section of the page that documents a command: from its ".SH" line to
 * the next one (malloc'd). The report's is REPORT OPTIONS. */
static char *section(const char *cmd)
{
    char head[64];
    snprintf(head, sizeof head, ".SH %s%s\n", *cmd ? "fasim " : "REPORT OPTIONS",
             cmd);
    const char *a = strstr(g_man, head);
    assert_non_null(a);
    const char *b = strstr(a + 1, "\n.SH ");
    size_t n = b ? (size_t)(b - a) : strlen(a);
    char *s = malloc(n + 1);
    assert_non_null(s);
    memcpy(s, a, n);
    s[n] = '\0';
    return s;
}

/* Every "--word" of `fasim ARGS`'s output found in the section of the page
 * for command cmd ("" for the report); returns the number missing. */
static int check_help(const char *args, const char *cmd)
{
    char *sec = section(cmd);
    su_run r = su_fasim(g_fasim, args);
    assert_int_equal(r.code, 0);
    int missing = 0, seen = 0;
    const char *from = r.out;
    if (!*cmd)                                 /* the report's own options */
        from = strstr(r.out, "\nproblem\n");
    assert_non_null(from);
    char opt[64];
    for (const char *p = from; next_word(r.out, &p, opt, sizeof opt);) {
        seen++;
        /* --help and --version work everywhere; the page says so once. */
        if (strcmp(opt, "--help") != 0 && strcmp(opt, "--version") != 0 &&
            !text_has(sec, opt)) {
            fprintf(stderr, "fasim %s: %s is not in fasim.1's section for it\n", args, opt);
            missing++;
        }
    }
    assert_true(seen > 0);
    su_free(&r);
    free(sec);
    return missing;
}

static void test_every_option(void **state)
{
    (void)state;
    static const char *const CMDS[] = { "view", "sweep", "claims", "validate", "explore",
                                        "gpu", "lesson" };
    int missing = 0;
    /* The report's page lists the subcommands first (their own options in
     * passing): its options start at "problem". */
    su_run r = su_fasim(g_fasim, "--help");
    assert_non_null(strstr(r.out, "\nproblem\n"));
    su_free(&r);
    missing += check_help("--help", "");
    for (size_t k = 0; k < sizeof CMDS / sizeof CMDS[0]; k++) {
        char a[32];
        snprintf(a, sizeof a, "%s --help", CMDS[k]);
        missing += check_help(a, CMDS[k]);
    }
    for (int l = 1; l <= 9; l++) {
        char a[32];
        snprintf(a, sizeof a, "lesson %d --help", l);
        missing += check_help(a, "lesson");
    }
    assert_int_equal(missing, 0);
}

static void test_every_command(void **state)
{
    (void)state;
    static const char *const CMDS[] = { "view", "lesson", "sweep", "claims", "validate",
                                        "ring-memory", "explore", "gpu" };
    for (size_t k = 0; k < sizeof CMDS / sizeof CMDS[0]; k++) {
        char sh[64];
        snprintf(sh, sizeof sh, ".SH fasim %s\n", CMDS[k]);
        if (!strstr(g_man, sh))
            fprintf(stderr, "no section '%s' in fasim.1\n", sh);
        assert_non_null(strstr(g_man, sh));
    }
    /* fasim help COMMAND is that command's --help. */
    for (size_t k = 0; k < sizeof CMDS / sizeof CMDS[0]; k++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "help %s", CMDS[k]);
        snprintf(b, sizeof b, "%s --help", CMDS[k]);
        su_run ra = su_fasim(g_fasim, a), rb = su_fasim(g_fasim, b);
        assert_int_equal(ra.code, 0);
        assert_string_equal(ra.out, rb.out);
        su_free(&ra);
        su_free(&rb);
    }
    su_run bad = su_fasim(g_fasim, "help nosuch");
    assert_int_equal(bad.code, 2);
    su_free(&bad);
    /* Each lesson by name. */
    su_run r = su_fasim(g_fasim, "lesson");
    const char *names[] = { "softmax-overflow", "online-softmax", "merge", "online-attention",
                            "a-common-bug", "tiling-budget", "io-complexity", "loop-order",
                            "causal", "fp8-outliers" };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        assert_non_null(strstr(r.out, names[k]));
        assert_non_null(strstr(g_man, names[k]));
    }
    su_free(&r);
}

/* The "--words" of text as a list " --a --b " (each once), in buf. */
static void words_of(const char *text, char *buf, size_t len)
{
    snprintf(buf, len, " ");
    char w[64], key[68];
    for (const char *p = text; next_word(text, &p, w, sizeof w);) {
        snprintf(key, sizeof key, " %s ", w);
        if (!strstr(buf, key) && strlen(buf) + strlen(w) + 1 < len)
            snprintf(buf + strlen(buf), len - strlen(buf), "%s ", w);
    }
}

/* Compare the options of section sec with the table's list want (" --a --b "):
 * returns the number named in one and not the other, each printed. */
static int compare_options(const char *cmd, const char *sec, const char *want)
{
    char have[4096];
    words_of(sec, have, sizeof have);
    int bad = 0;
    char w[72];
    for (const char *p = want; sscanf(p, " %71s", w) == 1; p = strstr(p, w) + strlen(w)) {
        int everywhere = !strcmp(w, "--help") || !strcmp(w, "--version");
        if (!text_has(sec, w) && !(everywhere && *cmd)) {
            fprintf(stderr, "fasim.1: %s takes %s, but its section does not say so\n",
                    *cmd ? cmd : "the report", w);
            bad++;
        }
    }
    for (const char *p = have; sscanf(p, " %71s", w) == 1; p = strstr(p, w) + strlen(w))
        if (!text_has(want, w)) {
            fprintf(stderr, "fasim.1: the section of %s names %s, which it does not take\n",
                    *cmd ? cmd : "the report", w);
            bad++;
        }
    return bad;
}

/* Every command's section against the table, both ways. */
static void test_options_match_table(void **state)
{
    (void)state;
    su_run r = su_fasim(g_options, "");
    assert_int_equal(r.code, 0);
    int bad = 0, commands = 0;
    for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
        char cmd[32] = "";
        sscanf(line, "%31s", cmd);
        if (!strcmp(cmd, "help"))
            continue;                          /* no options: it shows the others' pages */
        char want[4096];
        snprintf(want, sizeof want, " %s ", line + strlen(cmd));
        char *sec = section(strcmp(cmd, "report") ? cmd : "");
        bad += compare_options(strcmp(cmd, "report") ? cmd : "", sec, want);
        free(sec);
        commands++;
    }
    su_free(&r);
    assert_int_equal(commands, 10);
    assert_int_equal(bad, 0);
}

/* The checker proves itself: an option that is not in the page is found
 * missing, and one that is only a prefix of a real option is too. */
static void test_checker_fails(void **state)
{
    (void)state;
    assert_false(man_has("--no-such-option"));
    assert_false(man_has("--max"));          /* only --max-mem and --max-steps exist */
    assert_true(man_has("--max-mem"));
    /* a section that names an option the command does not take, or lacks
     * one it does */
    assert_int_equal(compare_options("claims", "--json --engine --vary", " --json --engine "), 1);
    assert_int_equal(compare_options("claims", "--json", " --json --engine --help "), 1);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_man FASIM FASIM.1 FASIM_OPTIONS\n");
        return 2;
    }
    g_fasim = argv[1];
    g_options = argv[3];
    char *raw = su_slurp(argv[2]);
    if (!raw) {
        fprintf(stderr, "test_man: cannot read %s\n", argv[2]);
        return 1;
    }
    g_man = raw;
    char *w = raw;
    for (const char *p = raw; *p; p++) {
        if (p[0] == '\\' && p[1] == '-')
            continue;                          /* "\-" is a hyphen */
        *w++ = *p;
    }
    *w = '\0';
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_option),
        cmocka_unit_test(test_every_command),
        cmocka_unit_test(test_options_match_table),
        cmocka_unit_test(test_checker_fails),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(raw);
    return rc;
}
