/*
 * cli_options_tool.c — fasim_options: print every command's options from
 * the table (cli_table.h), one command a line: "view --N --d ...", the
 * report as "report". A lesson's options (lessons/) follow the lesson
 * command's own. The tests compare docs/fasim.1 and completion/fasim with
 * this list; it is a build tool, not installed.
 */
#include <stdio.h>
#include <string.h>

#include "cli_table.h"
#include "lesson.h"

/* Print each "--name" that starts a line of a lesson's options text and is
 * not yet in seen (a NUL-separated list of at most 2 KiB). */
static void lesson_options(char *seen, size_t len)
{
    int n;
    const lesson_def *const *all = lesson_all(&n);
    for (int k = 0; k < n; k++)
        for (const char *p = all[k]->options; p && *p;) {
            const char *e = strchr(p, '\n');
            size_t w = strcspn(p, " \n");
            char name[64];
            if (!strncmp(p, "--", 2) && w < sizeof name) {
                memcpy(name, p, w);
                name[w] = '\0';
                char key[68];
                snprintf(key, sizeof key, "|%s|", name);
                if (!strstr(seen, key) && strlen(seen) + strlen(key) < len) {
                    strcat(seen, key);
                    printf(" %s", name);
                }
            }
            p = e ? e + 1 : p + strlen(p);
        }
}

int main(void)
{
    for (int c = 0; c < CLI_CMD_COUNT; c++) {
        char seen[2048] = "";
        printf("%s", CLI_COMMANDS[c].name);
        for (int o = 0; o < CLI_O_COUNT; o++)
            if (CLI_OPTIONS[o].cmds & CLI_IN(c)) {
                printf(" --%s", CLI_OPTIONS[o].name);
                snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "|--%s|",
                         CLI_OPTIONS[o].name);
            }
        if (c == CLI_CMD_LESSON)
            lesson_options(seen, sizeof seen);
        printf("\n");
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
