/* cli_lesson.c — `fasim lesson` (placeholder until the lessons land). */
#include <stdio.h>

#include "cli_cmds.h"

int cli_lesson_main(int argc, char **argv, int first)
{
    (void)argc;
    (void)argv;
    (void)first;
    fprintf(stderr, "fasim: lesson is not built yet\n");
    return 1;
}
