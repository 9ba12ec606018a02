/*
 * cli_table.h — every command and every option of fasim, once.
 *
 * An option is one row of CLI_OPTIONS: its name, its argument, the commands
 * that take it and its help. A command is one row of CLI_COMMANDS: its name,
 * how `fasim --help` lists it and its help page, whose option lines come
 * from the option rows (or, where a command words an option its own way,
 * from the page). Every `--help` is printed from these tables, every parser
 * accepts what they say, and the tests check docs/fasim.1 and
 * completion/fasim against them (the fasim_options tool lists them).
 */
#ifndef FASIM_CLI_TABLE_H
#define FASIM_CLI_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    CLI_CMD_REPORT,      /* fasim [options], fasim report */
    CLI_CMD_VIEW,
    CLI_CMD_LESSON,
    CLI_CMD_SWEEP,
    CLI_CMD_CLAIMS,
    CLI_CMD_EXPLORE,
    CLI_CMD_GPU,
    CLI_CMD_COMPARE,
    CLI_CMD_VALIDATE,
    CLI_CMD_RING_MEMORY, /* fasim ring-memory: the Ring Attention paper's Table 3 */
    CLI_CMD_HELP,        /* fasim help [COMMAND]: that command's --help */
    CLI_CMD_COUNT
} cli_cmd;

#define CLI_IN(cmd) (1u << (cmd))

/* The options' ids, the rows of CLI_OPTIONS. */
enum {
    CLI_O_N,
    CLI_O_D,
    CLI_O_M,
    CLI_O_DTYPE,
    CLI_O_ALGO,
    CLI_O_BR,
    CLI_O_BC,
    CLI_O_PLAN,
    CLI_O_CAUSAL,
    CLI_O_SEED,
    CLI_O_Q,
    CLI_O_K,
    CLI_O_V,
    CLI_O_OUT,
    CLI_O_JSON,
    CLI_O_COMPUTE,
    CLI_O_COUNT_ONLY,
    CLI_O_MAX_MEM,
    CLI_O_MAX_STEPS,
    CLI_O_GPU,
    CLI_O_L2,
    CLI_O_TRACE,
    CLI_O_TIMELINE,
    CLI_O_HELP,
    CLI_O_VERSION,
    CLI_O_NQ,
    CLI_O_NK,
    CLI_O_WINDOW,
    CLI_O_BLOCK_MASK,
    CLI_O_BATCH,
    CLI_O_HEADS,
    CLI_O_KV_HEADS,
    CLI_O_PASS,
    CLI_O_DO,
    CLI_O_SPLITS,
    CLI_O_RING,
    CLI_O_RING_ORDER,
    CLI_O_LINK,
    CLI_O_PAGE_SIZE,
    CLI_O_INTERMEDIATES,
    CLI_O_PRESET,
    CLI_O_STEP,
    CLI_O_FRAMES,
    CLI_O_ROW,
    CLI_O_SDL,
    CLI_O_SCREENSHOT,
    CLI_O_SIZE,
    CLI_O_THEME,
    CLI_O_RECORD,
    CLI_O_FORMAT,
    CLI_O_FPS,
    CLI_O_SCRIPT,
    CLI_O_WORKSHEET,
    CLI_O_ANSWERS,
    CLI_O_VARY,
    CLI_O_ENGINE,
    CLI_O_PLOT,
    CLI_O_CSV,
    CLI_O_NO_PROGRESS,
    CLI_O_KEYS,
    CLI_O_BACKEND,
    CLI_O_REPEAT,
    CLI_O_THREADS,
    CLI_O_LOCK,
    CLI_O_DQ_MODE,
    CLI_O_BLOCK_ORDER_SEED,
    CLI_O_EXPLAIN,
    CLI_O_SOFTMAX,
    CLI_O_DROPOUT,
    CLI_O_UNFUSED_OPS,
    CLI_O_JOBS,
    CLI_O_FP8_SCALE,
    CLI_O_INCOHERENT,
    CLI_O_INPUTS,
    CLI_O_PIPELINE,
    CLI_O_WARP_SPEC,
    CLI_O_COUNT
};
_Static_assert(CLI_O_COUNT <= 128, "the options given are kept in 128 bits");

/* The set of options given, one bit per CLI_O_* (cli_given_has, cli_given_set). */
typedef struct {
    uint64_t w[2];
} cli_given;

static inline int cli_given_has(const cli_given *g, int id)
{
    return (int)((g->w[id >> 6] >> (id & 63)) & 1u);
}

static inline void cli_given_set(cli_given *g, int id)
{
    g->w[id >> 6] |= UINT64_C(1) << (id & 63);
}

typedef struct {
    const char *name;    /* without the dashes: "N", "count-only" */
    const char *arg;     /* its argument as help shows it ("BYTES"); NULL: a switch */
    unsigned cmds;       /* CLI_IN() of every command that takes it */
    const char *help;    /* its help line(s), '\n' between lines, no final '\n';
                            NULL where every page words it its own way */
} cli_option;

extern const cli_option CLI_OPTIONS[CLI_O_COUNT];

/* One entry of a help page: a paragraph (label NULL, text printed as it is),
 * an option's own row (opt >= 0), or an option line worded for this page
 * (label "--Nq N, --Nk N" and its text, lines as in cli_option.help; text
 * NULL for a label alone, text starting with '\n' for a label that fills
 * its line). */
typedef struct {
    int opt;             /* CLI_O_*, or -1 */
    const char *label;
    const char *text;
} cli_help_item;

typedef struct {
    const char *name;      /* as typed after fasim: "view"; the report's is "report" */
    const char *prog;      /* names the command in messages: "fasim view" */
    const char *synopsis;  /* the line of `fasim --help` that lists it */
    const char *summary;   /*   and what it says of it */
    const cli_help_item *help;   /* its --help page (the report's after the list) */
    int nhelp;
    /* Options of other commands that its parser names as such ("--json is not
     * an option of 'fasim view' but an option of the report"), and whose. */
    const char *const *foreign;
    int nforeign;
    const char *owner;
} cli_command;

extern const cli_command CLI_COMMANDS[CLI_CMD_COUNT];

/* The command named name ("view"), or -1. */
int cli_command_find(const char *name);

/* The option of command cmd named name (without dashes, len bytes), or -1. */
int cli_option_find(cli_cmd cmd, const char *name, size_t len);

/* Print command cmd's --help page. Each "%d" of its text takes the next of
 * nums (the defaults a command keeps beside its code); "%A" becomes the
 * registry's loop orders ("naive, fa1, fa2") and "%O" the same as a choice
 * ("naive, fa1 or fa2"); "%%" is not special. */
void cli_usage(FILE *out, cli_cmd cmd, const int *nums, int nnums);

#define CLI_OPT_HELP (-2)   /* cli_opt_scan saw "-h" */

/* The value of the option argv[*k] as a separate argument: argv[*k + 1],
 * with *k moved past it; NULL when there is none or it is itself an option
 * ("--N --d 16": --N has no value). Every command's scanner takes values so. */
const char *cli_take_value(int argc, char **argv, int *k);

/* Every command refuses an option given twice (--help excepted, and a
 * sweep's --vary, which it takes once per varied parameter): 0 the first
 * time option id is seen (recorded in *given), or -1 with a message. */
int cli_given_twice(cli_given *given, int id, const char *optname, char *err, size_t errlen);

/* Scan argv[*k], a GNU-style long option "--name value" or "--name=value"
 * of command cmd. Returns the option's CLI_O_* id with *val set (NULL for a
 * switch), *k moved past a separate value (cli_take_value) and optname = "--name";
 * CLI_OPT_HELP for "-h"; or -1 with a message in err for a stray argument,
 * an unknown option (naming the option of a different case that was meant,
 * or, when it is one of the command's foreign ones, the command it belongs
 * to), a missing value or a value given to a switch. */
int cli_opt_scan(int argc, char **argv, int *k, cli_cmd cmd, const char **val, char *optname,
                 size_t optlen, char *err, size_t errlen);

/* A command's handler of one option: id (CLI_O_*), optname ("--N") and val
 * as cli_opt_scan gives them. Returns 0, or -1 with a message in err. */
typedef int (*cli_opt_fn)(void *ctx, int id, const char *optname, const char *val, char *err,
                          size_t errlen);

/* Scan argv[first..] as options of command cmd and hand each to fn with
 * ctx; "-h" sets *help. An option given twice is refused (cli_given_twice).
 * Returns 0, or -1 with the message of the scan or of fn in err. */
int cli_parse_each(int argc, char **argv, int first, cli_cmd cmd, int *help, cli_opt_fn fn,
                   void *ctx, char *err, size_t errlen);

#endif /* FASIM_CLI_TABLE_H */
