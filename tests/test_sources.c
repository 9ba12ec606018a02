/*
 * test_sources.c — the two source articles as a user meets them: every
 * claim `fasim claims` checks names its article in words and a quote of
 * docs/sources.md that exists, from the same article and section; and no
 * text of the claims or the lessons speaks in the project's private terms
 * (the folder the articles came in, "the seed document", source files or
 * the reference library's function names), which a user cannot follow.
 *
 * argv[1] is the fasim binary, argv[2] docs/sources.md.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <regex.h>
#include <strings.h>

#include "sweep_util.h"

static const char *g_fasim;
static char *g_sources;

/* The articles' names as docs/sources.md gives them, A and B. */
static const char *const ARTICLE[2] = {
    "a first-principles derivation of FlashAttention",
    "a popular introduction to FlashAttention",
};

/* docs/sources.md's heading of quote n, "### Quote n — X, WHERE": *art the
 * article (0 for A, 1 for B), where[] the rest of the line. 0 when there is
 * no such quote. */
static int quote_heading(int n, int *art, char *where, size_t len)
{
    char head[64];
    snprintf(head, sizeof head, "\n### Quote %d \xe2\x80\x94 ", n);
    const char *h = strstr(g_sources, head);
    if (!h)
        return 0;
    h += strlen(head);
    if ((h[0] != 'A' && h[0] != 'B') || h[1] != ',' || h[2] != ' ')
        return 0;
    *art = h[0] - 'A';
    h += 3;
    size_t k = strcspn(h, "\n");
    snprintf(where, len, "%.*s", (int)k, h);
    return 1;
}

/* The text after "    source:   " in out, from p on, its wrapped lines
 * (indented 14 columns) joined again with one space. Returns the end of
 * what it read. */
static const char *unwrap_source(const char *p, char *buf, size_t len)
{
    size_t n = 0;
    for (;;) {
        size_t k = strcspn(p, "\n");
        n += (size_t)snprintf(buf + n, len - n, "%s%.*s", n ? " " : "", (int)k, p);
        assert_true(n < len);
        p += k + (p[k] == '\n');
        if (strncmp(p, "              ", 14) != 0 || p[14] == ' ')
            return p;
        p += 14;
    }
}

static void test_claims_cite_quotes(void **state)
{
    (void)state;
    su_run r = su_fasim(g_fasim, "claims");
    assert_int_equal(r.code, 0);
    int claims = 0, sources = 0;
    for (const char *p = r.out; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n')) {
        /* A claim's first line: its number right-aligned in two columns. */
        if ((p[0] == ' ' || isdigit((unsigned char)p[0])) && isdigit((unsigned char)p[1]) &&
            p[2] == '.' && p[3] == ' ')
            claims++;
        if (strncmp(p, "    source:   ", 14) != 0)
            continue;
        char src[512], where[256];
        unwrap_source(p + 14, src, sizeof src);
        sources++;
        int art = -1;
        for (int a = 0; a < 2; a++)
            if (!strncmp(src, ARTICLE[a], strlen(ARTICLE[a])) && src[strlen(ARTICLE[a])] == ',')
                art = a;
        if (art < 0)
            fail_msg("claim %d's source names no article in words: %s", claims, src);
        const char *at = src + strlen(ARTICLE[art]) + 2;
        const char *cite = strstr(at, " (docs/sources.md, quote ");
        int q = 0;
        if (!cite || sscanf(cite, " (docs/sources.md, quote %d", &q) != 1)
            fail_msg("claim %d's source cites no quote of docs/sources.md: %s", claims, src);
        int qart;
        if (!quote_heading(q, &qart, where, sizeof where))
            fail_msg("claim %d cites quote %d, which docs/sources.md does not have", claims, q);
        if (qart != art)
            fail_msg("claim %d names %s, but quote %d is from article %c", claims,
                     ARTICLE[art], q, 'A' + qart);
        if (strlen(where) != (size_t)(cite - at) || strncmp(where, at, strlen(where)) != 0)
            fail_msg("claim %d's source says '%.*s', quote %d's heading '%s'", claims,
                     (int)(cite - at), at, q, where);
    }
    assert_true(claims >= 16);
    assert_int_equal(sources, claims);
    su_free(&r);
}

/* What a user must not read: the terms below are the project's own. */
static void assert_plain(const char *what, const char *text)
{
    static const char *const WORDS[] = { "seed document", "seeds/", "seed's", "seed notes",
                                         "the seed had" };
    static const char *const PATTERNS[] = {
        "(^|[^a-z0-9_])ref_[a-z0-9_]+",                 /* the reference library */
        "(^|[^a-z0-9_])[a-z_][a-z0-9_]*\\.[ch]([^a-z0-9_]|$)",   /* a source file */
        "(^|[^a-z0-9_])(sim|ref|study|lessons|cli|viz)/",       /* a source folder */
    };
    for (size_t k = 0; k < sizeof WORDS / sizeof WORDS[0]; k++)
        for (const char *p = text; *p; p++)
            if (!strncasecmp(p, WORDS[k], strlen(WORDS[k])))
                fail_msg("%s says \"%s\": %.60s", what, WORDS[k], p);
    for (size_t k = 0; k < sizeof PATTERNS / sizeof PATTERNS[0]; k++) {
        regex_t re;
        regmatch_t m;
        assert_int_equal(regcomp(&re, PATTERNS[k], REG_EXTENDED | REG_ICASE | REG_NEWLINE), 0);
        int hit = regexec(&re, text, 1, &m, 0) == 0;
        regfree(&re);
        if (hit)
            fail_msg("%s names a piece of fasim's source: %.*s", what,
                     (int)(m.rm_eo - m.rm_so), text + m.rm_so);
    }
}

/* fasim ARGS succeeds and says nothing a user cannot follow. */
static void run_plain(const char *args)
{
    char what[96];
    snprintf(what, sizeof what, "fasim %s", args);
    su_run r = su_fasim(g_fasim, args);
    if (r.code != 0)
        fail_msg("%s: exit %d", what, r.code);
    assert_plain(what, r.out);
    su_free(&r);
}

static void test_words_a_user_can_follow(void **state)
{
    (void)state;
    run_plain("claims");
    run_plain("claims --json");
    run_plain("lesson");
    su_run r = su_fasim(g_fasim, "lesson");
    int lessons = 0;
    for (const char *p = r.out; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n')) {
        int k, used = 0;
        if (sscanf(p, " %d %*[a-z-] %n", &k, &used) == 1 && used)
            lessons++;
    }
    su_free(&r);
    assert_true(lessons >= 9);
    for (int k = 1; k <= lessons; k++) {
        char args[64];
        snprintf(args, sizeof args, "lesson %d --script", k);
        run_plain(args);
        snprintf(args, sizeof args, "lesson %d --help", k);
        run_plain(args);
    }
}

/* docs/sources.md quotes the articles and names them, and never by the
 * folder they came in. */
static void test_sources_document(void **state)
{
    (void)state;
    for (int a = 0; a < 2; a++) {
        char name[96];
        snprintf(name, sizeof name, "**%c, %s**", 'A' + a, ARTICLE[a]);
        if (!strstr(g_sources, name))
            fail_msg("docs/sources.md does not name article %c as %s", 'A' + a, name);
    }
    assert_null(strstr(g_sources, "seeds/"));
    assert_null(strstr(g_sources, "seed document"));
    /* The quotes are numbered 1, 2, ... without a gap, each with its words. */
    int n = 0, art;
    char where[256];
    while (quote_heading(n + 1, &art, where, sizeof where))
        n++;
    assert_true(n >= 16);
    char head[64];
    snprintf(head, sizeof head, "\n### Quote %d ", n + 1);
    assert_null(strstr(g_sources, head));
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_sources FASIM SOURCES_MD\n");
        return 2;
    }
    g_fasim = argv[1];
    g_sources = su_slurp(argv[2]);
    if (!g_sources) {
        fprintf(stderr, "test_sources: cannot read %s\n", argv[2]);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claims_cite_quotes),
        cmocka_unit_test(test_words_a_user_can_follow),
        cmocka_unit_test(test_sources_document),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(g_sources);
    return rc;
}
