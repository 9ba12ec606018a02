/*
 * cli_cmds.h — the subcommands other than the report. Each parses its own
 * options from argv[first..] and returns the process exit status
 * (0 success, 2 bad usage, 1 other failures).
 */
#ifndef FASIM_CLI_CMDS_H
#define FASIM_CLI_CMDS_H

#include <stddef.h>

int cli_view_main(int argc, char **argv, int first);     /* fasim view ...   */
int cli_lesson_main(int argc, char **argv, int first);   /* fasim lesson ... */
int cli_sweep_main(int argc, char **argv, int first);    /* fasim sweep ...  */
/* Parse `fasim sweep`'s options without running anything: 0, or -1 with the
 * message the command would print. For the fuzz target. */
int cli_sweep_parse_check(int argc, char **argv, int first, char *err, size_t errlen);
int cli_claims_main(int argc, char **argv, int first);   /* fasim claims ... */
int cli_explore_main(int argc, char **argv, int first);  /* fasim explore ... */
int cli_gpu_main(int argc, char **argv, int first);      /* fasim gpu ...     */
int cli_compare_main(int argc, char **argv, int first);  /* fasim compare ... */
int cli_validate_main(int argc, char **argv, int first); /* fasim validate ... */
int cli_ring_memory_main(int argc, char **argv, int first);   /* fasim ring-memory */

#endif
