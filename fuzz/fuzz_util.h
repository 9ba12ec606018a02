/*
 * fuzz_util.h — what the fuzz targets share: a failed property aborts with a
 * message (libFuzzer then saves the input that caused it), and an input is
 * turned into a NUL-terminated string or an argv.
 *
 * Every target runs under AddressSanitizer and UndefinedBehaviorSanitizer, so
 * a crash, a leak, an overflow or undefined arithmetic is a finding too;
 * FUZZ_CHECK adds the parsers' own contracts (an error always has a message,
 * a success always satisfies the limits it promises).
 */
#ifndef FASIM_FUZZ_UTIL_H
#define FASIM_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond, ...)                                                        \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "fuzz: %s:%d: %s: ", __FILE__, __LINE__, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
            abort();                                                                 \
        }                                                                            \
    } while (0)

/* The input as a NUL-terminated string (owned by the caller: free()). An
 * embedded NUL ends the string early, as it would on a command line. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#define FUZZ_MAX_ARGS 48

/* Split s in place at each '\n' into argv[1..], after argv[0] = prog.
 * Returns argc (at most FUZZ_MAX_ARGS; the rest of s is dropped). */
static inline int fuzz_argv(char *s, const char *prog, char **argv)
{
    int argc = 0;
    argv[argc++] = (char *)prog;
    if (!*s)
        return argc;
    for (char *p = s; argc < FUZZ_MAX_ARGS;) {
        argv[argc++] = p;
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = '\0';
        p = nl + 1;
    }
    return argc;
}

/* An error message: set, and one line where the API promises one (one_line)
 * unless the input itself held a newline, which a message may quote. */
static inline void fuzz_check_message(const char *err, int one_line, const char *input)
{
    FUZZ_CHECK(err[0] != '\0', "an error without a message");
    if (one_line && !strchr(input, '\n'))
        FUZZ_CHECK(strchr(err, '\n') == NULL, "a one-line message has a newline: %s", err);
}

#endif /* FASIM_FUZZ_UTIL_H */
