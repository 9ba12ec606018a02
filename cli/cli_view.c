/* cli_view.c — `fasim view` (placeholder until the views land). */
#include <stdio.h>

#include "cli_cmds.h"

int cli_view_main(int argc, char **argv, int first)
{
    (void)argc;
    (void)argv;
    (void)first;
    fprintf(stderr, "fasim: view is not built yet\n");
    return 1;
}
