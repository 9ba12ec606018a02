/*
 * cli_ring_memory.c — `fasim ring-memory [--gpu NAME]`: the Ring Attention
 * paper's Table 3 (its A100 rows) beside the longest context a memory model
 * of one device holds (study/sim_ring.h, sim_ring_memory_text). Exit
 * status: 0, or 2 for bad usage.
 */
#include <stdio.h>

#include "cli_args.h"
#include "cli_cmds.h"
#include "cli_table.h"
#include "sim_ring.h"
#include "sim_status.h"

typedef struct {
    const sim_gpu *gpu;
    int list;
    int help;                  /* --help (-h comes back from the parser itself) */
} ring_memory_opts;

static int ring_memory_option(void *ctx, int id, const char *optname, const char *val,
                              char *err, size_t errlen)
{
    ring_memory_opts *o = ctx;
    (void)optname;
    if (id == CLI_O_HELP)
        o->help = 1;
    if (id == CLI_O_GPU)
        return cli_parse_gpu(val, &o->gpu, &o->list, err, errlen);
    return 0;
}

int cli_ring_memory_main(int argc, char **argv, int first)
{
    ring_memory_opts o = { sim_gpu_find("a100"), 0, 0 };
    int help = 0;
    char err[512];
    if (cli_parse_each(argc, argv, first, CLI_CMD_RING_MEMORY, &help, ring_memory_option, &o,
                       err, sizeof err) != 0) {
        fprintf(stderr, "fasim: %s\n", err);
        return SIM_EUSAGE;
    }
    if (help || o.help) {
        cli_usage(stdout, CLI_CMD_RING_MEMORY, NULL, 0);
        return SIM_OK;
    }
    if (o.list) {
        sim_gpu_print_table(stdout);
        return SIM_OK;
    }
    sim_ring_memory_text(stdout, o.gpu);
    return SIM_OK;
}
