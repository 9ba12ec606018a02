/*
 * sim_text.c — word wrapping (see sim_text.h).
 */
#include "sim_text.h"

#include <string.h>

size_t sim_text_cols(const char *text, size_t bytes, int utf8)
{
    if (!utf8)
        return bytes;
    size_t c = 0;
    for (size_t k = 0; k < bytes; k++)
        c += ((unsigned char)text[k] & 0xc0) != 0x80;
    return c;
}

/* The end of the word that starts at text[k]: the next space, except that a
 * parenthesised group opened right after a character of the word is a
 * formula ("Theta(N d + N^2)", "exp(x - m)") and is kept whole when the
 * word takes at most max bytes (a continuation line's room). A group
 * opened after a space is prose, and breaks as prose does. */
static size_t word_end(const char *text, size_t k, size_t len, size_t max)
{
    const size_t w0 = k;
    while (k < len && text[k] != ' ') {
        if (text[k] == '(' && k > w0) {
            int depth = 0;
            size_t j = k;
            for (; j < len; j++)
                if (text[j] == '(')
                    depth++;
                else if (text[j] == ')' && --depth == 0)
                    break;
            if (j < len && j + 1 - w0 <= max) {
                k = j + 1;
                continue;
            }
        }
        k++;
    }
    return k;
}

void sim_text_wrap(FILE *out, size_t col, const char *text, size_t len,
                   const sim_wrap_style *st)
{
    int first = 1;
    for (size_t k = 0; k < len;) {
        while (k < len && text[k] == ' ')
            k++;
        size_t w0 = k;
        k = word_end(text, k, len, st->width > st->indent ? st->width - st->indent : 1);
        if (k == w0)
            break;
        size_t wc = sim_text_cols(text + w0, k - w0, st->utf8);
        if (!first && col + 1 + wc > st->width) {
            fprintf(out, "\n%*s", (int)st->indent, "");
            col = st->indent;
        } else if (!first) {
            fputc(' ', out);
            col++;
        }
        for (size_t c = w0; c < k; c++)
            fputc(text[c] == SIM_TEXT_NBSP ? ' ' : text[c], out);
        col += wc;
        first = 0;
    }
    fputc('\n', out);
}

void sim_text_wrap_lead(FILE *out, const char *lead, size_t indent, size_t width,
                        const char *text)
{
    const sim_wrap_style st = { width, indent, 0 };
    fputs(lead, out);
    sim_text_wrap(out, strlen(lead), text, strlen(text), &st);
}

const char *sim_shell_word(char *out, size_t len, const char *path)
{
    static const char plain[] = "_./+-,=:@%";
    int safe = path[0] != '\0' && path[0] != '-';
    for (const char *c = path; *c && safe; c++)
        safe = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
               (*c >= '0' && *c <= '9') || strchr(plain, *c) != NULL;
    size_t o = 0;
#define PUT(ch) do { if (o + 1 >= len) { if (len) out[0] = '\0'; return out; } \
                     out[o++] = (ch); } while (0)
    if (safe) {
        for (const char *c = path; *c; c++)
            PUT(*c);
    } else {
        PUT('\'');
        if (path[0] == '-') {
            PUT('.');
            PUT('/');
        }
        for (const char *c = path; *c; c++) {
            if (*c == '\'') {           /* close, an escaped quote, reopen */
                PUT('\'');
                PUT('\\');
                PUT('\'');
            }
            PUT(*c);
        }
        PUT('\'');
    }
#undef PUT
    out[o] = '\0';
    return out;
}
