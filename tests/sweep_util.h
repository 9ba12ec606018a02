/*
 * sweep_util.h — helpers for the sweep/claims tests: run the fasim binary
 * and capture its output, read files, and check JSON syntax.
 *
 * Header-only (static inline, so that a test may use any subset) because
 * fasim_test() builds each test from its own .c and test_util.c. A run is
 * fork + execv (no shell) with stdin from /dev/null, stdout and stderr into
 * files in the test's temporary directory, an environment variable
 * optionally set in the child, and an alarm so that a hang fails the case
 * instead of blocking the suite.
 */
#ifndef FASIM_SWEEP_UTIL_H
#define FASIM_SWEEP_UTIL_H

/* Needs POSIX 2008 (setenv, strdup): define _POSIX_C_SOURCE 200809L before
 * the first #include of the test file. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#define SU_TIMEOUT_S 60
#define SU_MAX_ARGS 48

typedef struct {
    int code;                /* exit status, or -1 when ended by a signal */
    char *out, *err;         /* captured, NUL-terminated, owned */
} su_run;

/* Whole file as a NUL-terminated malloc'd string (NULL if unreadable). */
static inline char *su_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *b = malloc(cap);
    while (b && (got = fread(b + n, 1, cap - 1 - n, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *nb = realloc(b, cap * 2);
            if (!nb)
                free(b);
            b = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (b)
        b[n] = '\0';
    return b;
}

/* Run argv (argv[0] the binary, NULL-terminated), with env_name=env_value
 * set in the child when env_name is not NULL. */
static inline su_run su_exec_env(char *const argv[], const char *env_name, const char *env_value)
{
    su_run r = { -1, NULL, NULL };
    char po[512], pe[512];
    tu_path(po, sizeof po, "su_out.txt");
    tu_path(pe, sizeof pe, "su_err.txt");
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int o = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || o < 0 || e < 0)
            _exit(125);
        dup2(in, 0);
        dup2(o, 1);
        dup2(e, 2);
        if (env_name)
            setenv(env_name, env_value, 1);
        alarm(SU_TIMEOUT_S);
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    if (pid > 0)
        waitpid(pid, &st, 0);
    r.code = pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = su_slurp(po);
    r.err = su_slurp(pe);
    if (!r.out)
        r.out = strdup("");
    if (!r.err)
        r.err = strdup("");
    return r;
}

/* Run fasim with up to SU_MAX_ARGS arguments given as one string split at
 * spaces (no quoting: tests pass no argument containing a space). */
static inline su_run su_fasim_env(const char *fasim, const char *args, const char *env_name,
                           const char *env_value)
{
    static char buf[4096];
    char *argv[SU_MAX_ARGS + 2];
    int n = 0;
    argv[n++] = (char *)fasim;
    snprintf(buf, sizeof buf, "%s", args);
    for (char *t = strtok(buf, " "); t && n < SU_MAX_ARGS + 1; t = strtok(NULL, " "))
        argv[n++] = t;
    argv[n] = NULL;
    return su_exec_env(argv, env_name, env_value);
}

static inline su_run su_fasim(const char *fasim, const char *args)
{
    return su_fasim_env(fasim, args, NULL, NULL);
}

static inline void su_free(su_run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

static inline int su_count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* ---- a strict JSON syntax checker (RFC 8259 grammar) ----------------------- */

typedef struct {
    const char *p;
    int depth;
} su_json;

static inline void su_ws(su_json *j)
{
    while (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r')
        j->p++;
}

static inline int su_value(su_json *j);

static inline int su_string(su_json *j)
{
    if (*j->p != '"')
        return 0;
    for (j->p++; *j->p != '"'; j->p++) {
        unsigned char c = (unsigned char)*j->p;
        if (c < 0x20)
            return 0;
        if (c == '\\') {
            j->p++;
            if (*j->p == 'u') {
                for (int k = 1; k <= 4; k++)
                    if (!strchr("0123456789abcdefABCDEF", j->p[k]) || !j->p[k])
                        return 0;
                j->p += 4;
            } else if (!*j->p || !strchr("\"\\/bfnrt", *j->p)) {
                return 0;
            }
        }
    }
    j->p++;
    return 1;
}

static inline int su_number(su_json *j)
{
    const char *p = j->p;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return 0;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9'))
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    j->p = p;
    return 1;
}

static inline int su_value(su_json *j)
{
    su_ws(j);
    if (++j->depth > 64)
        return 0;
    int ok = 0;
    if (*j->p == '{') {
        j->p++;
        su_ws(j);
        if (*j->p == '}') {
            j->p++;
            ok = 1;
        } else {
            for (;;) {
                su_ws(j);
                if (!su_string(j))
                    break;
                su_ws(j);
                if (*j->p++ != ':' || !su_value(j))
                    break;
                su_ws(j);
                if (*j->p == ',') {
                    j->p++;
                    continue;
                }
                ok = *j->p++ == '}';
                break;
            }
        }
    } else if (*j->p == '[') {
        j->p++;
        su_ws(j);
        if (*j->p == ']') {
            j->p++;
            ok = 1;
        } else {
            for (;;) {
                if (!su_value(j))
                    break;
                su_ws(j);
                if (*j->p == ',') {
                    j->p++;
                    continue;
                }
                ok = *j->p++ == ']';
                break;
            }
        }
    } else if (*j->p == '"') {
        ok = su_string(j);
    } else if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4)) {
        j->p += 4;
        ok = 1;
    } else if (!strncmp(j->p, "false", 5)) {
        j->p += 5;
        ok = 1;
    } else {
        ok = su_number(j);
    }
    j->depth--;
    return ok;
}

/* 1 when s is exactly one JSON value (surrounding whitespace allowed). */
static inline int su_json_valid(const char *s)
{
    su_json j = { s, 0 };
    if (!su_value(&j))
        return 0;
    su_ws(&j);
    return *j.p == '\0';
}

#endif /* FASIM_SWEEP_UTIL_H */
