/*
 * cli_claims.c — `fasim claims [FILE]`: check the two source articles'
 * numeric claims (built in), or a user's claims file, and print each claim, its
 * configuration, what fasim measures and the verdict.
 *
 * The checks and the file format live in study/sim_claims.c; this file reads
 * the file, dispatches and formats. Exit status: 0 when every claim was
 * checked (whatever the verdicts), 2 for bad usage (a malformed claims line,
 * a configuration no plan fits), 1 for other failures (I/O).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_cmds.h"
#include "cli_inputs.h"
#include "cli_table.h"
#include "sim_claims.h"
#include "sim_parse.h"

#ifndef FASIM_VERSION
#define FASIM_VERSION "0.0.0"
#endif

/* A claims file is a few lines of text; 1 MiB is far more than any. */
#define MAX_FILE (1u << 20)

static void usage(FILE *out)
{
    cli_usage(out, CLI_CMD_CLAIMS, NULL, 0);
}

typedef struct {
    int n[4];                    /* per verdict */
} tally;

static void summary_text(const tally *t, int total)
{
    printf("\n%d claim%s: %d hold%s, %d wrong, %d hold%s only under a condition, %d not "
           "checkable here\n", total, total == 1 ? "" : "s", t->n[SIM_VERDICT_HOLDS],
           t->n[SIM_VERDICT_HOLDS] == 1 ? "s" : "", t->n[SIM_VERDICT_WRONG],
           t->n[SIM_VERDICT_HOLDS_IF], t->n[SIM_VERDICT_HOLDS_IF] == 1 ? "s" : "",
           t->n[SIM_VERDICT_UNCHECKABLE]);
}

/* Open the object and its "claims" array; summary_json closes both. */
static void json_head(sim_json *w, const char *source)
{
    sim_report_json_begin(w, stdout);
    sim_json_str(w, "source", source);
    sim_json_arr(w, "claims");
}

static void summary_json(sim_json *w, const tally *t)
{
    sim_json_end(w);
    sim_json_obj(w, "summary");
    sim_json_int(w, "holds", t->n[SIM_VERDICT_HOLDS]);
    sim_json_int(w, "wrong", t->n[SIM_VERDICT_WRONG]);
    sim_json_int(w, "holds_if", t->n[SIM_VERDICT_HOLDS_IF]);
    sim_json_int(w, "not_checkable", t->n[SIM_VERDICT_UNCHECKABLE]);
    sim_json_end(w);
    sim_json_end(w);
    putchar('\n');
}

static int run_builtins(int json, sim_engine engine)
{
    int n;
    const sim_builtin_claim *b = sim_builtin_claims(&n);
    tally t = { { 0 } };
    sim_json w;
    if (json)
        json_head(&w, "builtin");
    else
        printf("fasim %s claims: the numeric claims of the two source articles\n"
               "(docs/sources.md), each computed now. Counts come from the simulator\n"
               "(count-only) or, for runs over 2^29 tile steps, the exact closed forms.\n\n",
               FASIM_VERSION);
    for (int k = 0; k < n; k++) {
        sim_claim_outcome o;
        char err[1024], src[160];
        int rc = sim_builtin_check(&b[k], engine, &o, err, sizeof err);
        if (rc != SIM_OK) {
            fprintf(stderr, "fasim: claim %s could not be checked: %s\n", b[k].id, err);
            return rc;
        }
        t.n[o.verdict]++;
        /* The quote says where; the row, which error of the article it is. */
        if (b[k].seed_row)
            snprintf(src, sizeof src, "%s (docs/sources.md, quote %d; row %d); id %s",
                     b[k].source, b[k].quote, b[k].seed_row, b[k].id);
        else
            snprintf(src, sizeof src, "%s (docs/sources.md, quote %d); id %s", b[k].source,
                     b[k].quote, b[k].id);
        if (json) {
            sim_claim_json(&w, b[k].id, b[k].claim, b[k].source, b[k].quote, b[k].seed_row,
                           &o);
        } else {
            if (k)
                putchar('\n');
            sim_claim_print(stdout, k + 1, b[k].claim, src, &o);
        }
    }
    if (json)
        summary_json(&w, &t);
    else
        summary_text(&t, n);
    return SIM_OK;
}

/* The parser's messages, one a line, each line shown as sim_shown shows a
 * value: they quote the claims file, whose lines may hold any byte. */
static void put_lines_shown(FILE *out, const char *text)
{
    char line[SIM_SHOWN_MAX];
    while (*text) {
        const size_t n = strcspn(text, "\n");
        snprintf(line, sizeof line, "%.*s", (int)n, text);
        fprintf(out, "%s\n", sim_shown(line).s);
        text += n + (text[n] == '\n');
    }
}

/* The file's total work, before any of it runs: the tile steps its claims
 * would simulate, within max_steps (0 = SIM_DEFAULT_MAX_STEPS). Returns
 * SIM_OK, or SIM_EUSAGE with the message printed. */
static int check_work(const char *name, const sim_claim_list *list, sim_engine engine,
                      uint64_t max_steps)
{
    const uint64_t limit = max_steps ? max_steps : SIM_DEFAULT_MAX_STEPS;
    uint64_t steps = sim_claims_sim_steps(list, engine);
    if (steps <= limit)
        return SIM_OK;
    fprintf(stderr, "fasim: claims %s: checking these claims would simulate %.2g tile steps "
            "in all, over the limit of %llu (2^33 take 30 s for naive or FA2 and 90 s for FA1 "
            "on a 2-core 2026 x86-64 machine, measured by bench/bench_sim); use --engine closed-form (exact counts "
            "without simulating) or raise --max-steps\n", name, (double)steps,
            (unsigned long long)limit);
    return SIM_EUSAGE;
}

static int run_file(const char *path, int json, sim_engine engine, uint64_t max_steps)
{
    char *text = cli_read_text(path, "claims", MAX_FILE, "a claims file is a few lines");
    if (!text)
        return SIM_EFAIL;
    sim_claim_list list;
    size_t elen = 16384;
    char *err = malloc(elen);
    if (!err) {
        free(text);
        fprintf(stderr, "fasim: out of memory\n");
        return SIM_EFAIL;
    }
    const char *name = strcmp(path, "-") ? path : "<stdin>";
    int nbad = sim_claims_parse(name, text, &list, err, elen);
    free(text);
    if (nbad != 0) {
        put_lines_shown(stderr, err);
        free(err);
        return nbad < 0 ? SIM_EFAIL : SIM_EUSAGE;
    }
    if (list.n == 0) {
        fprintf(stderr, "fasim: claims %s: no claims in the file (one per line, e.g. "
                "'fa2/naive hbm_bytes < 0.25 at N=4096'; see 'fasim claims --help')\n", name);
        free(err);
        return SIM_EUSAGE;
    }
    if (check_work(name, &list, engine, max_steps) != SIM_OK) {
        sim_claim_list_free(&list);
        free(err);
        return SIM_EUSAGE;
    }
    tally t = { { 0 } };
    int failed = 0;
    sim_json w;
    if (json) {
        json_head(&w, name);
    } else {
        printf("fasim %s claims: %d claim%s from %s\n\n", FASIM_VERSION, list.n,
               list.n == 1 ? "" : "s", name);
    }
    int printed = 0;
    for (int k = 0; k < list.n; k++) {
        const sim_user_claim *c = &list.items[k];
        sim_claim_outcome o;
        char src[96], id[32];
        int rc = sim_user_claim_check_within(c, engine, max_steps, &o, err, elen);
        if (rc != SIM_OK) {
            fprintf(stderr, "fasim: %s:%d: %s\n", sim_shown(name).s, c->line,
                    sim_shown(err).s);
            failed = 1;
            continue;
        }
        t.n[o.verdict]++;
        snprintf(src, sizeof src, "%s:%d", name, c->line);
        snprintf(id, sizeof id, "line-%d", c->line);
        if (json) {
            sim_claim_json(&w, id, c->text, src, 0, 0, &o);
        } else {
            if (printed)
                putchar('\n');
            sim_claim_print(stdout, k + 1, c->text, src, &o);
        }
        printed++;
    }
    if (json)
        summary_json(&w, &t);
    else
        summary_text(&t, printed);
    sim_claim_list_free(&list);
    free(err);
    return failed ? SIM_EUSAGE : SIM_OK;
}

int cli_claims_main(int argc, char **argv, int first)
{
    const char *path = NULL;
    int json = 0;
    sim_engine engine = SIM_ENGINE_AUTO;
    cli_given given = { { 0, 0 } };
    char err[256];
    uint64_t max_steps = 0;                 /* 0: SIM_DEFAULT_MAX_STEPS */
    for (int k = first; k < argc; k++) {
        const char *a = argv[k];
        const int id = !strcmp(a, "--json") ? CLI_O_JSON
                       : !strcmp(a, "--engine") || !strncmp(a, "--engine=", 9) ? CLI_O_ENGINE
                       : !strcmp(a, "--max-steps") || !strncmp(a, "--max-steps=", 12)
                           ? CLI_O_MAX_STEPS
                           : -1;
        const char *name = id == CLI_O_JSON     ? "--json"
                           : id == CLI_O_ENGINE ? "--engine"
                                                : "--max-steps";
        if (id >= 0 && cli_given_twice(&given, id, name, err, sizeof err) != 0) {
            fprintf(stderr, "fasim: %s\n", err);
            return SIM_EUSAGE;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return SIM_OK;
        } else if (id == CLI_O_JSON) {
            json = 1;
        } else if (id == CLI_O_ENGINE) {
            const char *v = a[8] == '=' ? a + 9 : cli_take_value(argc, argv, &k);
            if (!v) {
                fprintf(stderr, "fasim: --engine needs a value (auto, sim or closed-form)\n");
                return SIM_EUSAGE;
            }
            if (!strcmp(v, "auto"))
                engine = SIM_ENGINE_AUTO;
            else if (!strcmp(v, "sim"))
                engine = SIM_ENGINE_SIM;
            else if (!strcmp(v, "closed-form") || !strcmp(v, "closed"))
                engine = SIM_ENGINE_CLOSED;
            else {
                fprintf(stderr, "fasim: --engine %s: unknown engine (auto, sim or "
                        "closed-form)\n", sim_shown(v).s);
                return SIM_EUSAGE;
            }
        } else if (id == CLI_O_MAX_STEPS) {
            const char *v = a[11] == '=' ? a + 12 : cli_take_value(argc, argv, &k);
            int64_t n;
            if (!v) {
                fprintf(stderr, "fasim: --max-steps needs a value; see 'fasim claims --help'\n");
                return SIM_EUSAGE;
            }
            if (cli_parse_count("--max-steps", v, 1, INT64_MAX, &n, err, sizeof err) != 0) {
                fprintf(stderr, "fasim: %s\n", err);
                return SIM_EUSAGE;
            }
            max_steps = (uint64_t)n;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "fasim: claims: unknown option '%s'; see 'fasim claims --help'\n",
                    sim_shown(a).s);
            return SIM_EUSAGE;
        } else if (path) {
            fprintf(stderr, "fasim: claims takes one FILE; got '%s' and '%s'\n",
                    sim_shown(path).s, sim_shown(a).s);
            return SIM_EUSAGE;
        } else {
            path = a;
        }
    }
    if (!path && max_steps) {
        fprintf(stderr, "fasim: claims: --max-steps bounds the claims of a FILE; the built-in "
                "claims are fixed and checked in seconds\n");
        return SIM_EUSAGE;
    }
    int rc = path ? run_file(path, json, engine, max_steps) : run_builtins(json, engine);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "fasim: cannot write to stdout\n");
        rc = SIM_EFAIL;
    }
    return rc;
}
