/*
 * cli_lesson.c — `fasim lesson`: list the lessons, or run one.
 *
 *   fasim lesson                          the list
 *   fasim lesson --help                   how to run one, and the list
 *   fasim lesson NAME|NUMBER --help       one lesson: what it teaches, its options
 *   fasim lesson NAME|NUMBER [--script] [the lesson's options]
 *
 * --script and --help may stand anywhere after `lesson`; everything else after
 * the name goes to the lesson, whose engine (lessons/lesson.c) checks it.
 * Exit status: 0, 2 for bad usage (unknown lesson, bad option), 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_cmds.h"
#include "cli_table.h"
#include "lesson.h"
#include "sim_parse.h"

static void usage(FILE *out)
{
    cli_usage(out, CLI_CMD_LESSON, NULL, 0);
}

/* Edit distance of two short strings (for "did you mean"). */
static int distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    int row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static int unknown_lesson(const char *name)
{
    int count, best = -1, best_d = 4;
    const lesson_def *const *all = lesson_all(&count);
    for (int k = 0; k < count; k++) {
        int d = distance(name, all[k]->name);
        if (strstr(all[k]->name, name) && strlen(name) >= 3)
            d = 1;
        if (d < best_d) {
            best_d = d;
            best = k;
        }
    }
    fprintf(stderr, "fasim lesson: unknown lesson '%s'", sim_shown(name).s);
    if (best >= 0)
        fprintf(stderr, " (did you mean '%s'?)", all[best]->name);
    fprintf(stderr, "; run 'fasim lesson' to list them\n");
    return 2;
}

static void lesson_usage(const lesson_def *def, FILE *out)
{
    fprintf(out, "fasim lesson %s (lesson %d): %s\n", def->name, def->number, def->title);
    fprintf(out, "%s, about %d minutes. %s\n\n", def->level, def->minutes, def->summary);
    fprintf(out, "usage: fasim lesson %s [--script|--worksheet|--answers] [options]\n",
            def->name);
    fprintf(out, "       fasim lesson %d [--script|--worksheet|--answers] [options]\n\n",
            def->number);
    fputs("  --script     print every step at once, questions with their answers\n"
          "  --worksheet  a Markdown handout: the steps up to each question, no answers\n"
          "  --answers    its answer key in Markdown: every step and answer, the common\n"
          "               mistakes\n\n", out);
    if (def->options && *def->options) {
        const char *p = def->options;
        while (*p) {
            const char *e = strchr(p, '\n');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            fprintf(out, "  %.*s\n", (int)n, p);
            p += n + (e != NULL);
        }
    }
    if (def->options && strstr(def->options, "LIST"))
        fprintf(out, "\nlimits: a list option holds at most %d entries; every number option\n"
                "states its range above (fixed: lessons are about small examples)\n",
                LESSON_MAX_VECTOR);
}

int cli_lesson_main(int argc, char **argv, int first)
{
    int script = 0, help = 0;
    lesson_handout handout = LESSON_HANDOUT_NONE;
    const char *name = NULL;
    char **rest = calloc((size_t)(argc > 0 ? argc : 1), sizeof *rest);
    if (!rest) {
        fprintf(stderr, "fasim lesson: out of memory\n");
        return 1;
    }
    int nrest = 0;
    cli_given given = { { 0, 0 } };
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        const int mode = !strcmp(a, "--script")      ? CLI_O_SCRIPT
                         : !strcmp(a, "--worksheet") ? CLI_O_WORKSHEET
                         : !strcmp(a, "--answers")   ? CLI_O_ANSWERS
                                                     : -1;
        if (mode >= 0) {
            char err[128];
            if (cli_given_twice(&given, mode, a, err, sizeof err) != 0) {
                fprintf(stderr, "fasim lesson: %s\n", err);
                free(rest);
                return 2;
            }
            if (script || handout) {
                fprintf(stderr, "fasim lesson: %s: one of --script, --worksheet and "
                        "--answers at a time\n", a);
                free(rest);
                return 2;
            }
            script = mode == CLI_O_SCRIPT;
            handout = mode == CLI_O_WORKSHEET  ? LESSON_HANDOUT_WORKSHEET
                      : mode == CLI_O_ANSWERS ? LESSON_HANDOUT_ANSWERS
                                              : LESSON_HANDOUT_NONE;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help = 1;
        } else if (!name) {
            if (a[0] == '-') {
                fprintf(stderr, "fasim lesson: '%s' comes before the lesson's name; write "
                        "fasim lesson NAME [options] (run 'fasim lesson' to list them)\n",
                        sim_shown(a).s);
                free(rest);
                return 2;
            }
            name = a;
        } else {
            rest[nrest++] = argv[i];
        }
    }
    int rc = 0;
    if (!name) {
        if (script || handout) {
            const char *o = script ? "--script" : handout == LESSON_HANDOUT_WORKSHEET
                                                      ? "--worksheet" : "--answers";
            fprintf(stderr, "fasim lesson: %s needs a lesson: fasim lesson NAME "
                    "%s (run 'fasim lesson' to list them)\n", o, o);
            rc = 2;
        } else {
            if (help)
                usage(stdout);
            else
                fputs("Run one with: fasim lesson NAME (or its number); --script prints "
                      "it all.\n\n", stdout);
            lesson_print_list(stdout);
        }
    } else {
        const lesson_def *def = lesson_find(name);
        if (!def) {
            rc = unknown_lesson(name);
        } else if (help) {
            lesson_usage(def, stdout);
        } else {
            lesson_run_opts o = { script, stdin, stdout, nrest, rest, handout };
            rc = lesson_run(def, &o);
        }
    }
    free(rest);
    if (fflush(stdout) != 0 && rc == 0) {
        fprintf(stderr, "fasim lesson: cannot write to stdout\n");
        rc = 1;
    }
    return rc;
}
