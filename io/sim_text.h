/*
 * sim_text.h — word wrapping for the terminal texts (claims, sweep notes,
 * lessons).
 */
#ifndef FASIM_SIM_TEXT_H
#define FASIM_SIM_TEXT_H

#include <stddef.h>
#include <stdio.h>

typedef struct {
    size_t width;                /* no line passes this column ... */
    size_t indent;               /* ... continuation lines start with this many spaces */
    int utf8;                    /* count columns in UTF-8 characters, not bytes */
} sim_wrap_style;

/* A space that does not break: sim_text_wrap keeps the text it joins on one
 * line and prints it as a space ("14.3" SIM_TEXT_NBSP_S "us"). */
#define SIM_TEXT_NBSP '\x01'
#define SIM_TEXT_NBSP_S "\x01"

/* The columns text[0, bytes) fills: one per byte, or per UTF-8 character. */
size_t sim_text_cols(const char *text, size_t bytes, int utf8);

/* Print the words of text[0, len) (split at spaces, not at SIM_TEXT_NBSP,
 * which prints as one; runs of spaces collapse)
 * one space apart, the cursor being at column col already. A formula's
 * parenthesised group, opened right after a character ("Theta(N d + N^2)",
 * "exp(x - m)"), is one word with its spaces when it fits a continuation
 * line: a line then never breaks inside it. A word that would
 * end past st->width starts a new line indented by st->indent spaces, unless
 * it is the first word (a word longer than the line is never split). Ends
 * with '\n'; no line ends in a space. */
void sim_text_wrap(FILE *out, size_t col, const char *text, size_t len,
                   const sim_wrap_style *st);

/* Print lead, then the whole of text wrapped as above with columns counted
 * in bytes: "    verdict:  HOLDS: ..." with the rest under the text. */
void sim_text_wrap_lead(FILE *out, const char *lead, size_t indent, size_t width,
                        const char *text);

/* A path as a word a POSIX shell reads back as that path, for commands
 * fasim suggests ("Render with: cd DIR && gnuplot NAME.gp"): the path
 * itself when it holds only letters, digits and _ . / + - , = : @ % and
 * does not start with '-'; otherwise in single quotes, each quote written
 * '\'' , and "./" first when it starts with '-' (so that no command reads
 * it as an option). Returns out, or "" when out is too short. */
const char *sim_shell_word(char *out, size_t len, const char *path);

#endif /* FASIM_SIM_TEXT_H */
