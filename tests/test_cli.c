/*
 * test_cli.c — the fasim executable, end to end.
 *
 * argv[1] is the path of the fasim binary. Every case runs it with
 * fork/execv (no shell), stdin from /dev/null, stdout and stderr captured
 * into files in the test's temporary directory, and an alarm of
 * RUN_TIMEOUT_S seconds set before the exec (an alarm survives execv), so a
 * hang ends as a SIGALRM and fails the case instead of blocking the suite.
 * A run that ends by any signal fails.
 *
 * The cases: the classroom text report; --json (checked with a strict JSON
 * syntax checker written here, and a small path lookup for the documented
 * keys); --out against the library called directly, bit for bit, from the
 * seeded inputs and from .npy inputs; determinism; one case per kind of bad
 * input (exit status, a one-line message naming the problem, empty stdout);
 * --help/--version; --causal and --plan paper.
 *
 * The regression cases at the end pin bugs found and fixed: a misleading
 * message for counts that overflow, a wrapped-around byte count, an
 * over-wide BOUNDS heading and a misaligned table row.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ref_oracle.h"
#include "sim.h"
#include "sim_npy.h"
#include "sim_report.h"
#include "test_util.h"

#define RUN_TIMEOUT_S TU_RUN_TIMEOUT_S
#define MAX_ARGS 40

static const char *g_fasim;   /* argv[1] */

/* ---- running the binary ---------------------------------------------------- */

typedef struct {
    char cmd[2048];           /* the command line, for messages */
    int exited, code;         /* WIFEXITED, WEXITSTATUS */
    int signaled, sig;        /* WIFSIGNALED, WTERMSIG */
    char *out, *err;          /* captured text, NUL-terminated, owned */
    size_t out_len, err_len;
    double seconds;           /* wall time of the run */
} run_res;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Read a whole file into a NUL-terminated malloc'd buffer. */
static char *slurp(const char *path, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return NULL;
    }
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - 1 - n, f);
        if (r == 0)
            break;
        n += r;
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Captured buffers not yet released: a failed check longjmps out of its
 * test before run_free, and the group teardown frees what is left, so a
 * failure is not followed by a LeakSanitizer report. */
#define MAX_LIVE 64
static char *g_live[MAX_LIVE];

static void live_add(char *p)
{
    for (int k = 0; k < MAX_LIVE; k++)
        if (!g_live[k]) {
            g_live[k] = p;
            return;
        }
    fail_msg("more than %d captured outputs alive", MAX_LIVE);
}

static void live_free(char *p)
{
    for (int k = 0; p && k < MAX_LIVE; k++)
        if (g_live[k] == p)
            g_live[k] = NULL;
    free(p);
}

static void live_free_all(void)
{
    for (int k = 0; k < MAX_LIVE; k++) {
        free(g_live[k]);
        g_live[k] = NULL;
    }
}

static void run_free(run_res *r)
{
    live_free(r->out);
    live_free(r->err);
    r->out = r->err = NULL;
}

/* An argument "@name" stands for the file `name` in the temporary directory. */
static void expand_arg(char *dst, size_t len, const char *arg)
{
    if (arg[0] == '@')
        tu_path(dst, len, arg + 1);
    else
        snprintf(dst, len, "%s", arg);
}

/* Run fasim with args (NULL-terminated, without argv[0]). */
static void run_fasim(run_res *r, const char *const *args)
{
    static char expanded[MAX_ARGS][512];
    char *argv[MAX_ARGS + 2];
    memset(r, 0, sizeof *r);
    int n = 0;
    argv[n++] = (char *)g_fasim;
    size_t off = (size_t)snprintf(r->cmd, sizeof r->cmd, "fasim");
    for (int k = 0; args[k]; k++) {
        assert_true(k < MAX_ARGS);
        expand_arg(expanded[k], sizeof expanded[k], args[k]);
        argv[n++] = expanded[k];
        if (off < sizeof r->cmd)
            off += (size_t)snprintf(r->cmd + off, sizeof r->cmd - off, " %s", expanded[k]);
    }
    argv[n] = NULL;

    char outp[512], errp[512];
    tu_path(outp, sizeof outp, "run.stdout");
    tu_path(errp, sizeof errp, "run.stderr");
    fflush(stdout);
    fflush(stderr);
    double t0 = now_s();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || o < 0 || e < 0)
            _exit(126);
        if (dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        close(in);
        close(o);
        close(e);
        alarm(RUN_TIMEOUT_S);
        execv(g_fasim, argv);
        _exit(127);
    }
    int st = 0;
    pid_t w;
    do
        w = waitpid(pid, &st, 0);
    while (w < 0 && errno == EINTR);
    assert_int_equal(w, pid);
    r->seconds = now_s() - t0;
    r->exited = WIFEXITED(st);
    r->code = r->exited ? WEXITSTATUS(st) : -1;
    r->signaled = WIFSIGNALED(st);
    r->sig = r->signaled ? WTERMSIG(st) : 0;
    r->out = slurp(outp, &r->out_len);
    r->err = slurp(errp, &r->err_len);
    assert_non_null(r->out);
    assert_non_null(r->err);
    live_add(r->out);
    live_add(r->err);
}

#define RUN(r, ...) run_fasim((r), (const char *const[]){ __VA_ARGS__, NULL })

static void dump(const run_res *r)
{
    print_error("command: %s\n", r->cmd);
    if (r->signaled)
        print_error("killed by signal %d%s\n", r->sig,
                    r->sig == SIGALRM ? " (timed out)" : "");
    else
        print_error("exit status %d\n", r->code);
    print_error("--- stdout (%zu bytes) ---\n%.3000s\n--- stderr (%zu bytes) ---\n%.3000s\n"
                "---\n", r->out_len, r->out, r->err_len, r->err);
}

/* Fail with the run's command, status and output when cond is false. */
#define CHECK(r, cond, ...) do { \
        if (!(cond)) { \
            print_error("%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            print_error(__VA_ARGS__); \
            print_error("\n"); \
            dump(r); \
            fail(); \
        } \
    } while (0)

/* The run ended normally (no signal, no timeout) with exit status code. */
static void expect_exit(const run_res *r, int code)
{
    CHECK(r, !r->signaled, "fasim ended by a signal (crash or timeout)");
    CHECK(r, r->exited, "fasim did not exit normally");
    CHECK(r, r->code != 126 && r->code != 127, "the test could not start fasim");
    if (r->code != code) {
        print_error("expected exit status %d, got %d\n", code, r->code);
        dump(r);
        fail();
    }
}

static int count_char(const char *s, size_t n, char c)
{
    int k = 0;
    for (size_t i = 0; i < n; i++)
        k += s[i] == c;
    return k;
}

/* stderr is exactly one line starting "fasim: " (or, with continuation,
 * one line followed by lines that start with two spaces). */
static void expect_one_line_error(const run_res *r, int continuation_ok)
{
    CHECK(r, r->err_len > 0, "stderr is empty; a refusal needs a message");
    CHECK(r, r->err[r->err_len - 1] == '\n', "the message does not end with a newline");
    CHECK(r, strncmp(r->err, "fasim: ", 7) == 0, "the message does not start 'fasim: '");
    CHECK(r, strlen(r->err) == r->err_len, "stderr holds a NUL byte");
    if (!continuation_ok) {
        CHECK(r, count_char(r->err, r->err_len, '\n') == 1,
              "stderr has %d lines, expected one", count_char(r->err, r->err_len, '\n'));
        return;
    }
    const char *nl = strchr(r->err, '\n');
    while (nl && nl[1]) {
        CHECK(r, nl[1] == ' ' && nl[2] == ' ',
              "a continuation line does not start with two spaces");
        nl = strchr(nl + 1, '\n');
    }
}

/* ---- a strict JSON syntax checker (RFC 8259) ----------------------------- */

typedef struct {
    const char *s;
    size_t n, i;
    int depth;
} jparse;

#define J_MAX_DEPTH 64
#define J_MAX_KEYS 64

static int j_peek(const jparse *p)
{
    return p->i < p->n ? (unsigned char)p->s[p->i] : -1;
}

static void j_ws(jparse *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
                           p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
}

static int j_isdigit(int c)
{
    return c >= '0' && c <= '9';
}

static int j_ishex(int c)
{
    return j_isdigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* One UTF-8 sequence starting with lead byte c (>= 0x80) at p->i - 1. */
static int j_utf8(jparse *p, unsigned char c)
{
    int more;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
        more = 1;
        cp = c & 0x1fu;
    } else if (c >= 0xe0 && c <= 0xef) {
        more = 2;
        cp = c & 0x0fu;
    } else if (c >= 0xf0 && c <= 0xf4) {
        more = 3;
        cp = c & 0x07u;
    } else {
        return -1;
    }
    for (int k = 0; k < more; k++) {
        int b = j_peek(p);
        if (b < 0x80 || b > 0xbf)
            return -1;
        cp = cp << 6 | ((uint32_t)b & 0x3fu);
        p->i++;
    }
    if ((more == 2 && cp < 0x800) || (more == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return -1;
    return 0;
}

static int j_string(jparse *p)
{
    if (j_peek(p) != '"')
        return -1;
    p->i++;
    while (p->i < p->n) {
        unsigned char c = (unsigned char)p->s[p->i++];
        if (c == '"')
            return 0;
        if (c < 0x20)
            return -1;
        if (c == '\\') {
            int e = j_peek(p);
            if (e < 0)
                return -1;
            p->i++;
            if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
                e == 'r' || e == 't')
                continue;
            if (e != 'u')
                return -1;
            for (int k = 0; k < 4; k++) {
                if (!j_ishex(j_peek(p)))
                    return -1;
                p->i++;
            }
            continue;
        }
        if (c >= 0x80 && j_utf8(p, c) != 0)
            return -1;
    }
    return -1;                               /* unterminated */
}

static int j_number(jparse *p)
{
    if (j_peek(p) == '-')
        p->i++;
    if (j_peek(p) == '0') {
        p->i++;
    } else if (j_isdigit(j_peek(p))) {
        while (j_isdigit(j_peek(p)))
            p->i++;
    } else {
        return -1;
    }
    if (j_peek(p) == '.') {
        p->i++;
        if (!j_isdigit(j_peek(p)))
            return -1;
        while (j_isdigit(j_peek(p)))
            p->i++;
    }
    if (j_peek(p) == 'e' || j_peek(p) == 'E') {
        p->i++;
        if (j_peek(p) == '+' || j_peek(p) == '-')
            p->i++;
        if (!j_isdigit(j_peek(p)))
            return -1;
        while (j_isdigit(j_peek(p)))
            p->i++;
    }
    return 0;
}

static int j_literal(jparse *p, const char *word)
{
    size_t w = strlen(word);
    if (p->n - p->i < w || memcmp(p->s + p->i, word, w) != 0)
        return -1;
    p->i += w;
    return 0;
}

static int j_value(jparse *p);

static int j_object(jparse *p)
{
    size_t key_at[J_MAX_KEYS], key_len[J_MAX_KEYS];
    int nkeys = 0;
    p->i++;                                  /* '{' */
    j_ws(p);
    if (j_peek(p) == '}') {
        p->i++;
        return 0;
    }
    for (;;) {
        j_ws(p);
        size_t k0 = p->i;
        if (j_string(p) != 0)
            return -1;
        size_t kl = p->i - k0;
        for (int m = 0; m < nkeys; m++)      /* duplicate keys are refused */
            if (key_len[m] == kl && memcmp(p->s + key_at[m], p->s + k0, kl) == 0)
                return -1;
        if (nkeys < J_MAX_KEYS) {
            key_at[nkeys] = k0;
            key_len[nkeys] = kl;
            nkeys++;
        }
        j_ws(p);
        if (j_peek(p) != ':')
            return -1;
        p->i++;
        if (j_value(p) != 0)
            return -1;
        j_ws(p);
        if (j_peek(p) == ',') {
            p->i++;
            continue;
        }
        if (j_peek(p) == '}') {
            p->i++;
            return 0;
        }
        return -1;
    }
}

static int j_array(jparse *p)
{
    p->i++;                                  /* '[' */
    j_ws(p);
    if (j_peek(p) == ']') {
        p->i++;
        return 0;
    }
    for (;;) {
        if (j_value(p) != 0)
            return -1;
        j_ws(p);
        if (j_peek(p) == ',') {
            p->i++;
            continue;
        }
        if (j_peek(p) == ']') {
            p->i++;
            return 0;
        }
        return -1;
    }
}

static int j_value(jparse *p)
{
    j_ws(p);
    int c = j_peek(p);
    int rc;
    switch (c) {
    case '{':
    case '[':
        if (p->depth >= J_MAX_DEPTH)
            return -1;
        p->depth++;
        rc = c == '{' ? j_object(p) : j_array(p);
        p->depth--;
        return rc;
    case '"':
        return j_string(p);
    case 't':
        return j_literal(p, "true");
    case 'f':
        return j_literal(p, "false");
    case 'n':
        return j_literal(p, "null");
    default:
        if (c == '-' || j_isdigit(c))
            return j_number(p);
        return -1;
    }
}

/* 1 when s[0..n) is exactly one JSON value (surrounding whitespace allowed). */
static int json_valid(const char *s, size_t n)
{
    jparse p = { s, n, 0, 0 };
    if (j_value(&p) != 0)
        return 0;
    j_ws(&p);
    return p.i == n;
}

/* 1 when s[0..n) is exactly one JSON object. */
static int json_is_one_object(const char *s, size_t n)
{
    jparse p = { s, n, 0, 0 };
    j_ws(&p);
    return j_peek(&p) == '{' && json_valid(s, n);
}

/* The value at `path` ("runs.0.plan.Br": object keys, and decimal indices
 * into arrays) of a document already checked by json_valid. Returns its first
 * character and sets *len, or NULL when the path does not exist. */
static const char *json_get(const char *s, size_t n, const char *path, size_t *len)
{
    jparse p = { s, n, 0, 0 };
    j_ws(&p);
    const char *comp = path;
    while (*comp) {
        const char *dot = strchr(comp, '.');
        size_t cl = dot ? (size_t)(dot - comp) : strlen(comp);
        int c = j_peek(&p);
        if (c == '{') {
            p.i++;
            j_ws(&p);
            if (j_peek(&p) == '}')
                return NULL;
            for (;;) {
                j_ws(&p);
                size_t k0 = p.i;
                if (j_string(&p) != 0)
                    return NULL;
                size_t kl = p.i - k0 - 2;
                j_ws(&p);
                p.i++;                       /* ':' */
                j_ws(&p);
                if (kl == cl && memcmp(s + k0 + 1, comp, cl) == 0)
                    break;
                if (j_value(&p) != 0)
                    return NULL;
                j_ws(&p);
                if (j_peek(&p) != ',')
                    return NULL;             /* '}': not found */
                p.i++;
            }
        } else if (c == '[') {
            long idx = 0;
            if (cl == 0)
                return NULL;
            for (size_t k = 0; k < cl; k++) {
                if (!j_isdigit((unsigned char)comp[k]))
                    return NULL;
                idx = idx * 10 + (comp[k] - '0');
            }
            p.i++;
            j_ws(&p);
            if (j_peek(&p) == ']')
                return NULL;
            for (long k = 0; k < idx; k++) {
                if (j_value(&p) != 0)
                    return NULL;
                j_ws(&p);
                if (j_peek(&p) != ',')
                    return NULL;
                p.i++;
            }
            j_ws(&p);
        } else {
            return NULL;
        }
        comp = dot ? dot + 1 : comp + cl;
    }
    size_t start = p.i;
    if (j_value(&p) != 0)
        return NULL;
    *len = p.i - start;
    return s + start;
}

/* Elements of the array at path, or -1. */
static int json_array_len(const char *s, size_t n, const char *path)
{
    size_t len;
    const char *v = json_get(s, n, path, &len);
    if (!v || v[0] != '[')
        return -1;
    jparse p = { v, len, 1, 1 };
    j_ws(&p);
    if (j_peek(&p) == ']')
        return 0;
    int count = 0;
    for (;;) {
        if (j_value(&p) != 0)
            return -1;
        count++;
        j_ws(&p);
        if (j_peek(&p) != ',')
            return count;
        p.i++;
    }
}

/* Lookups on a run's stdout. Each fails the test with context if the path
 * is missing or has the wrong type. */
static uint64_t jget_u64(const run_res *r, const char *path)
{
    size_t len;
    const char *v = json_get(r->out, r->out_len, path, &len);
    CHECK(r, v != NULL, "JSON key %s is missing", path);
    for (size_t k = 0; k < len; k++)
        CHECK(r, j_isdigit((unsigned char)v[k]), "JSON %s is not a whole number", path);
    char buf[32];
    CHECK(r, len < sizeof buf, "JSON %s: number too long", path);
    memcpy(buf, v, len);
    buf[len] = '\0';
    return strtoull(buf, NULL, 10);
}

static double jget_num(const run_res *r, const char *path)
{
    size_t len;
    const char *v = json_get(r->out, r->out_len, path, &len);
    CHECK(r, v != NULL, "JSON key %s is missing", path);
    CHECK(r, v[0] == '-' || j_isdigit((unsigned char)v[0]), "JSON %s is not a number", path);
    char buf[64];
    CHECK(r, len < sizeof buf, "JSON %s: number too long", path);
    memcpy(buf, v, len);
    buf[len] = '\0';
    return strtod(buf, NULL);
}

/* 1 when the value at path is the JSON string "want". */
static int jis_str(const run_res *r, const char *path, const char *want)
{
    size_t len;
    const char *v = json_get(r->out, r->out_len, path, &len);
    size_t w = strlen(want);
    return v && len == w + 2 && v[0] == '"' && memcmp(v + 1, want, w) == 0;
}

/* 1 when the value at path is exactly the literal word (true, false, null). */
static int jis_lit(const run_res *r, const char *path, const char *word)
{
    size_t len;
    const char *v = json_get(r->out, r->out_len, path, &len);
    return v && len == strlen(word) && memcmp(v, word, len) == 0;
}

static int jhas(const run_res *r, const char *path)
{
    size_t len;
    return json_get(r->out, r->out_len, path, &len) != NULL;
}

/* ---- files ------------------------------------------------------------------ */

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        p[k] = (unsigned char)(v >> (8 * k));
}

static void put_le64(unsigned char *p, uint64_t v)
{
    for (int k = 0; k < 8; k++)
        p[k] = (unsigned char)(v >> (8 * k));
}

/* An .npy version 1.0 file built by hand: the dict from descr, fortran and
 * shape (as Python writes it), padded to 64 bytes, then `data` as given. */
static void write_npy_raw(const char *name, const char *descr, int fortran,
                          const char *shape, const void *data, size_t dlen)
{
    char path[512], dict[256];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }",
                      descr, fortran ? "True" : "False", shape);
    assert_true(dl > 0 && (size_t)dl < sizeof dict);
    size_t total = (10 + (size_t)dl + 1 + 63) / 64 * 64;
    size_t hlen = total - 10;
    unsigned char *buf = malloc(total + dlen + 1);
    assert_non_null(buf);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = 1;
    buf[7] = 0;
    buf[8] = (unsigned char)(hlen & 0xffu);
    buf[9] = (unsigned char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)dl);
    memset(buf + 10 + dl, ' ', hlen - (size_t)dl - 1);
    buf[total - 1] = '\n';
    if (dlen)
        memcpy(buf + total, data, dlen);
    assert_int_equal(tu_write_file(tu_path(path, sizeof path, name), buf, total + dlen), 0);
    free(buf);
}

/* float32 little-endian bytes of x[0..n). Caller frees. */
static unsigned char *f32_bytes(const float *x, size_t n)
{
    unsigned char *b = malloc(4 * n + 1);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], 4);
        put_le32(b + 4 * i, u);
    }
    return b;
}

static void write_f32(const char *name, const float *x, int64_t rows, int64_t cols)
{
    char path[512], err[512];
    int rc = sim_npy_write_f32(tu_path(path, sizeof path, name), x, rows, cols, err,
                               sizeof err);
    if (rc != 0)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
}

static void write_f64(const char *name, const double *x, int64_t rows, int64_t cols)
{
    size_t n = (size_t)(rows * cols);
    unsigned char *b = malloc(8 * n + 1);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &x[i], 8);
        put_le64(b + 8 * i, u);
    }
    char shape[64];
    snprintf(shape, sizeof shape, "(%lld, %lld)", (long long)rows, (long long)cols);
    write_npy_raw(name, "<f8", 0, shape, b, 8 * n);
    free(b);
}

static void read_npy(const char *name, sim_npy_matrix *m)
{
    char path[512], err[512];
    int rc = sim_npy_read(tu_path(path, sizeof path, name), INT64_MAX, m, err, sizeof err);
    if (rc != 0)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
}

static float rand_unit(uint64_t *st)
{
    return (float)((double)(tu_rand(st) >> 11) / 9007199254740992.0 * 4.0 - 2.0);
}

/* Files for the bad-input cases, made once in the group setup. */
static int make_bad_files(void **state)
{
    (void)state;
    float ok[8 * 4];
    uint64_t st = 99;
    for (int k = 0; k < 32; k++)
        ok[k] = rand_unit(&st);
    write_f32("ok_8x4.npy", ok, 8, 4);

    float wide[8 * 8];
    for (int k = 0; k < 64; k++)
        wide[k] = rand_unit(&st);
    write_f32("ok_8x8.npy", wide, 8, 8);

    char path[512];
    const char *text = "hello, this is not an npy file\n";
    assert_int_equal(tu_write_file(tu_path(path, sizeof path, "not_npy.npy"), text,
                                   strlen(text)), 0);

    unsigned char *b = f32_bytes(ok, 32);
    write_npy_raw("truncated.npy", "<f4", 0, "(8, 4)", b, 10);
    write_npy_raw("big_endian.npy", ">f4", 0, "(8, 4)", b, 128);
    write_npy_raw("fortran.npy", "<f4", 1, "(8, 4)", b, 128);
    write_npy_raw("int32.npy", "<i4", 0, "(8, 4)", b, 128);
    write_npy_raw("rank1.npy", "<f4", 0, "(32,)", b, 128);
    free(b);

    float withnan[32];
    memcpy(withnan, ok, sizeof withnan);
    withnan[3 * 4 + 2] = NAN;
    write_f32("nan.npy", withnan, 8, 4);
    return 0;
}

/* Remove everything in the temporary directory, then the directory. */
static int remove_tmpdir(void **state)
{
    (void)state;
    live_free_all();
    const char *dir = tu_tmpdir();
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (unlink(path) != 0)
                rmdir(path);              /* a_dir */
        }
        closedir(d);
    }
    rmdir(dir);
    return 0;
}

/* ---- 1. the classroom command --------------------------------------------- */

/* The HBM TRAFFIC section (up to its blank line): the row comparing the
 * measured counts with the closed form says "yes" once per run, and no cell
 * says "NO". */
static void check_closed_form_row(const run_res *r, int nruns)
{
    const char *sec = strstr(r->out, "HBM TRAFFIC");
    CHECK(r, sec != NULL, "HBM TRAFFIC section missing");
    const char *end = strstr(sec, "\n\n");
    if (!end)
        end = r->out + r->out_len;
    CHECK(r, strstr(sec, "closed-form") && strstr(sec, "closed-form") < end,
          "no closed-form row in HBM TRAFFIC");
    int yes = 0;
    for (const char *p = sec; (p = strstr(p, "yes")) != NULL && p < end; p++)
        yes++;
    CHECK(r, yes == nruns, "HBM TRAFFIC has %d 'yes', expected %d (measured = closed form)",
          yes, nruns);
    const char *no = strstr(sec, "NO");
    CHECK(r, no == NULL || no > end, "HBM TRAFFIC says NO: measured differs from closed form");
}

/* Every row of the table that starts at `title` (up to its blank line, or
 * the note under it) is as long as the title row, so the right-aligned cells
 * line up. */
static void check_table_aligned(const run_res *r, const char *title)
{
    const char *sec = strstr(r->out, title);
    CHECK(r, sec != NULL, "section %s missing", title);
    const char *eol = strchr(sec, '\n');
    CHECK(r, eol != NULL, "section %s unterminated", title);
    size_t width = (size_t)(eol - sec);
    for (const char *line = eol + 1; *line && *line != '\n' && strncmp(line, "  note: ", 8);) {
        const char *e = strchr(line, '\n');
        size_t len = e ? (size_t)(e - line) : strlen(line);
        if (len != width) {
            print_error("row \"%.*s\" is %zu columns, its table's title row %zu\n",
                        (int)len, line, len, width);
            CHECK(r, len == width, "a row of %s is misaligned", title);
        }
        line = e ? e + 1 : line + len;
    }
}

/* stdout ends with a newline; no line is over 80 columns or holds a tab. */
static void check_80_columns(const run_res *r)
{
    CHECK(r, r->out_len > 0 && r->out[r->out_len - 1] == '\n',
          "stdout does not end in a newline");
    int lineno = 1;
    size_t col = 0;
    for (size_t i = 0; i < r->out_len; i++) {
        if (r->out[i] == '\n') {
            lineno++;
            col = 0;
            continue;
        }
        CHECK(r, r->out[i] != '\t', "tab on line %d", lineno);
        col++;
        CHECK(r, col <= 80, "line %d of stdout is longer than 80 columns", lineno);
    }
}

static void test_classroom_text(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--N", "1024", "--M", "96K");
    expect_exit(&r, 0);
    CHECK(&r, r.err_len == 0, "stderr is not empty");
    static const char *const sections[] = {
        "TILE PLAN", "HBM TRAFFIC", "BOUNDS", "ERROR vs float64", "SRAM BUFFERS",
    };
    for (size_t k = 0; k < sizeof sections / sizeof sections[0]; k++)
        CHECK(&r, strstr(r.out, sections[k]) != NULL, "section %s missing", sections[k]);
    CHECK(&r, strstr(r.out, "N = 1024, d = 64, fp16") != NULL, "header line missing");
    CHECK(&r, strstr(r.out, "compute mode") != NULL, "not in compute mode");

    /* The TILE PLAN header names the three loop orders in order. */
    const char *tp = strstr(r.out, "TILE PLAN");
    const char *eol = strchr(tp, '\n');
    const char *na = strstr(tp, "naive"), *f1 = strstr(tp, "fa1"), *f2 = strstr(tp, "fa2");
    CHECK(&r, na && f1 && f2 && na < f1 && f1 < f2 && f2 < eol,
          "TILE PLAN header lacks naive, fa1, fa2");
    for (int k = 0; k < 3; k++) {
        static const char *const titles[] = { "  naive", "  fa1:", "  fa2:" };
        CHECK(&r, strstr(r.out, titles[k]) != NULL, "SRAM buffers of %s missing", titles[k]);
    }

    check_closed_form_row(&r, 3);
    check_80_columns(&r);
    run_free(&r);
}

/* ---- 2. JSON --------------------------------------------------------------- */

static void test_json_checker_self(void **state)
{
    (void)state;
    static const char *const good[] = {
        "{}", "[]", " {} \n", "0", "-0.5e+3", "\"\"", "true", "null",
        "{\"a\":[1,-2.5E-3,true,false,null,\"x\\u00e9\\n\\\"\\\\\\/\"],\"b\":{}}",
        "{\"caf\xc3\xa9\":1}", "[[[]],{\"k\":[{}]}]",
    };
    static const char *const bad[] = {
        "", " ", "{", "}", "{\"a\":1,}", "[1,2,]", "[1 2]", "{\"a\" 1}", "{\"a\":01}",
        "{\"a\":1.}", "{\"a\":.5}", "{\"a\":-}", "{\"a\":1e}", "{\"a\":+1}",
        "{\"a\":NaN}", "{\"a\":Infinity}", "{\"a\":tru}", "{\"a\":nul}",
        "{'a':1}", "{a:1}", "{\"a\":\"x\\q\"}", "{\"a\":\"\\u12G4\"}",
        "{\"a\":\"tab\there\"}", "{\"a\":\"unterminated}", "{\"a\":1} x",
        "{\"a\":1}{\"b\":2}", "{\"a\":1,\"a\":2}", "[1,2", "\"\xff\"", "\"\xc3\"",
        "{\"a\":0x10}", "[,]", "{,}", "{\"a\":1,,\"b\":2}",
    };
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
        if (!json_valid(good[k], strlen(good[k])))
            fail_msg("checker rejects valid JSON: %s", good[k]);
    }
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        if (json_valid(bad[k], strlen(bad[k])))
            fail_msg("checker accepts invalid JSON: %s", bad[k]);
    }
    /* Nesting deeper than the limit is refused, not a stack overflow. */
    char deep[2 * J_MAX_DEPTH + 8];
    memset(deep, '[', J_MAX_DEPTH + 1);
    memset(deep + J_MAX_DEPTH + 1, ']', J_MAX_DEPTH + 1);
    assert_false(json_valid(deep, 2 * (J_MAX_DEPTH + 1)));
    assert_true(json_is_one_object("{\"x\":[1]}\n", 10));
    assert_false(json_is_one_object("[{\"x\":1}]", 9));

    /* The path lookup. */
    const char *doc = "{\"a\":{\"b\":[10,{\"c\":\"s\"},30]},\"ab\":2}";
    size_t n = strlen(doc), len;
    const char *v = json_get(doc, n, "a.b.2", &len);
    assert_non_null(v);
    assert_int_equal(len, 2);
    assert_memory_equal(v, "30", 2);
    v = json_get(doc, n, "a.b.1.c", &len);
    assert_non_null(v);
    assert_memory_equal(v, "\"s\"", 3);
    v = json_get(doc, n, "ab", &len);
    assert_non_null(v);
    assert_memory_equal(v, "2", 1);
    assert_null(json_get(doc, n, "a.c", &len));
    assert_null(json_get(doc, n, "a.b.3", &len));
    assert_null(json_get(doc, n, "a.b.x", &len));
    assert_null(json_get(doc, n, "ab.c", &len));
    assert_int_equal(json_array_len(doc, n, "a.b"), 3);
}

static void check_json_runs(const run_res *r, int compute, int64_t N, uint64_t M)
{
    static const char *const algos[3] = { "naive", "fa1", "fa2" };
    CHECK(r, json_is_one_object(r->out, r->out_len), "stdout is not one JSON object");
    CHECK(r, json_array_len(r->out, r->out_len, "runs") == 3, "runs is not an array of 3");
    CHECK(r, jget_u64(r, "config.N") == (uint64_t)N, "config.N");
    CHECK(r, jget_u64(r, "config.M_bytes") == M, "config.M_bytes");
    CHECK(r, jis_str(r, "config.mode", compute ? "compute" : "count-only"), "config.mode");
    /* The oracle's time apart from the runs' (compute mode only). */
    CHECK(r, jhas(r, "oracle.seconds") == compute, "oracle.seconds in %s mode",
          compute ? "compute" : "count-only");
    char p[128];
    for (int k = 0; k < 3; k++) {
#define P(suffix) (snprintf(p, sizeof p, "runs.%d.%s", k, suffix), p)
        CHECK(r, jis_str(r, P("algo"), algos[k]), "runs.%d.algo is not %s", k, algos[k]);
        uint64_t Br = jget_u64(r, P("plan.Br")), Bc = jget_u64(r, P("plan.Bc"));
        uint64_t Tr = jget_u64(r, P("plan.Tr")), Tc = jget_u64(r, P("plan.Tc"));
        uint64_t peak = jget_u64(r, P("plan.sram_peak_bytes"));
        CHECK(r, Br >= 1 && Bc >= 1, "block sizes of run %d", k);
        CHECK(r, Tr == ((uint64_t)N + Br - 1) / Br && Tc == ((uint64_t)N + Bc - 1) / Bc,
              "T_r, T_c of run %d are not ceil(N / B)", k);
        CHECK(r, peak >= 1 && peak <= M, "best plan of run %d does not fit M", k);
        uint64_t rb = jget_u64(r, P("hbm.read_bytes")), wb = jget_u64(r, P("hbm.write_bytes"));
        uint64_t re = jget_u64(r, P("hbm.read_elems")), we = jget_u64(r, P("hbm.write_elems"));
        CHECK(r, rb > 0 && wb > 0, "no HBM traffic in run %d", k);
        uint64_t qre = jget_u64(r, P("hbm.tensors.Q.read_elems"));
        uint64_t qwe = jget_u64(r, P("hbm.tensors.Q.write_elems"));
        uint64_t qrb = jget_u64(r, P("hbm.tensors.Q.read_bytes"));
        uint64_t qwb = jget_u64(r, P("hbm.tensors.Q.write_bytes"));
        CHECK(r, qre >= (uint64_t)N * 64 && qrb == 2 * qre, "Q reads of run %d (fp16)", k);
        CHECK(r, qwe == 0 && qwb == 0, "Q is written in run %d", k);
        CHECK(r, jget_u64(r, P("theory.exact_elems")) == re + we,
              "theory.exact_elems of run %d differs from the measured elements", k);
        CHECK(r, jis_lit(r, P("theory.matches"), "true"), "theory.matches of run %d", k);
        CHECK(r, jhas(r, P("seconds")), "runs.%d.seconds missing", k);
        if (compute) {
            double ea = jget_num(r, P("error.max_abs")), er = jget_num(r, P("error.max_rel"));
            CHECK(r, ea >= 0 && ea < 1e-2 && er >= 0 && er < 1e-1,
                  "error of run %d out of range: %g %g", k, ea, er);
        } else {
            CHECK(r, !jhas(r, P("error")), "runs.%d.error present in count-only mode", k);
        }
#undef P
    }
    if (!compute)
        CHECK(r, strstr(r->out, "\"error\"") == NULL, "an \"error\" key in count-only mode");
}

static void test_json_compute(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--json", "--N", "256");
    expect_exit(&r, 0);
    CHECK(&r, r.err_len == 0, "stderr is not empty");
    check_json_runs(&r, 1, 256, 96 * 1024);
    run_free(&r);
}

static void test_json_count_only(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--json", "--count-only");
    expect_exit(&r, 0);
    CHECK(&r, r.err_len == 0, "stderr is not empty");
    check_json_runs(&r, 0, 1024, 96 * 1024);
    run_free(&r);
}

/* Auto mode chooses count-only for a large N: the note goes to stderr,
 * the JSON (with a "note" key) to stdout. */
static void test_json_auto_count_note(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--json", "--N", "64K", "--algo", "fa2");
    expect_exit(&r, 0);
    CHECK(&r, json_is_one_object(r.out, r.out_len), "stdout is not one JSON object");
    CHECK(&r, jis_str(&r, "config.mode", "count-only"), "config.mode");
    CHECK(&r, jhas(&r, "note"), "no note key");
    CHECK(&r, json_array_len(r.out, r.out_len, "runs") == 1, "runs is not an array of 1");
    CHECK(&r, !jhas(&r, "runs.0.error"), "error key in count-only mode");
    CHECK(&r, strstr(r.err, "note") && strstr(r.err, "--compute"), "no note on stderr");
    run_free(&r);
}

/* Standard attention's softmax at the classroom M = 96K: a row of S in fp32
 * with its m and l is 4 N + 8 B, which fits up to N = 24,574. The default
 * reads S once there and twice past it (the online normaliser), three times
 * only when asked; the note under the traffic says which and why, and the
 * JSON the form and its passes. S read = passes x N^2; P written once. */
static void test_softmax_forms(void **state)
{
    (void)state;
    static const struct {
        const char *N, *form;
        uint64_t n;
        int passes;
        const char *note;
    } C[] = {
        { "24560", NULL, 24560, 1, "one pass over whole rows of S, since a row" },
        { "24600", NULL, 24600, 2, "two passes over tiles of S (m and l" },
        { "24600", "3pass", 24600, 3, "three passes over tiles of S (max, sum," },
        { "24560", "2pass", 24560, 2, "as --softmax 2pass" },
    };
    for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
        run_res r;
        if (C[k].form)
            RUN(&r, "--algo", "naive", "--count-only", "--N", C[k].N, "--softmax", C[k].form);
        else
            RUN(&r, "--algo", "naive", "--count-only", "--N", C[k].N);
        expect_exit(&r, 0);
        CHECK(&r, strstr(r.out, C[k].note) != NULL, "no note '%s'", C[k].note);
        run_free(&r);
        if (C[k].form)
            RUN(&r, "--json", "--algo", "naive", "--count-only", "--N", C[k].N, "--softmax",
                C[k].form);
        else
            RUN(&r, "--json", "--algo", "naive", "--count-only", "--N", C[k].N);
        expect_exit(&r, 0);
        const uint64_t NN = C[k].n * C[k].n;
        CHECK(&r, jget_u64(&r, "runs.0.plan.softmax_passes") == (uint64_t)C[k].passes,
              "softmax_passes");
        CHECK(&r, jis_str(&r, "runs.0.plan.softmax", C[k].form ? C[k].form : "auto"),
              "plan.softmax");
        CHECK(&r, jget_u64(&r, "runs.0.hbm.tensors.S.read_elems") == (uint64_t)C[k].passes * NN,
              "S read");
        CHECK(&r, jget_u64(&r, "runs.0.hbm.tensors.P.write_elems") == NN, "P written");
        run_free(&r);
    }
    /* With every loop order the form is naive's; FA1 and FA2 run their own. */
    run_res r;
    RUN(&r, "--json", "--count-only", "--N", "24600", "--softmax", "3pass");
    expect_exit(&r, 0);
    CHECK(&r, json_array_len(r.out, r.out_len, "runs") == 3, "three runs");
    CHECK(&r, jget_u64(&r, "runs.0.plan.softmax_passes") == 3, "naive in three passes");
    CHECK(&r, !jhas(&r, "runs.2.plan.softmax"), "fa2 has a softmax form");
    run_free(&r);
}

/* ---- 3. --out ------------------------------------------------------------- */

/* Run the library as fasim would and compare its O with the file's, bit for
 * bit. Q, K, V are the raw inputs (sim_run rounds them to the dtype). */
static void compare_out_with_library(const char *out_name, sim_algo algo, const sim_shape *sh,
                                     const float *Q, const float *K, const float *V,
                                     int64_t *Br, int64_t *Bc)
{
    char err[1024];
    sim_plan p;
    int rc = sim_plan_choose(algo, sh, NULL, SIM_PLAN_AUTO, 0, 0, &p, err, sizeof err);
    if (rc != 0)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
    sim_result res;
    rc = sim_run(algo, sh, &p, Q, K, V, NULL, &res, err, sizeof err);
    if (rc != 0)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
    assert_non_null(res.O);

    sim_npy_matrix m;
    read_npy(out_name, &m);
    assert_int_equal(m.rows, sh->N);
    assert_int_equal(m.cols, sh->d);
    assert_int_equal(m.src_dtype_bytes, 4);
    assert_int_equal(tu_compare_bits("O (fasim --out vs sim_run)", m.data, res.O,
                                     sh->N * sh->d), 0);
    if (Br)
        *Br = p.Br;
    if (Bc)
        *Bc = p.Bc;
    free(m.data);
    sim_result_free(&res);
}

static void test_out_seeded(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--algo", "fa2", "--N", "100", "--d", "16", "--M", "16K", "--seed", "7",
        "--plan", "best", "--out", "@o_seed.npy", "--json");
    expect_exit(&r, 0);
    CHECK(&r, r.err_len == 0, "stderr is not empty");
    CHECK(&r, json_is_one_object(r.out, r.out_len), "stdout is not one JSON object");
    CHECK(&r, jis_str(&r, "config.mode", "compute"), "--out did not imply compute mode");

    const int64_t N = 100, d = 16;
    sim_shape sh = { .N = N, .d = d, .M = 16 * 1024, .dtype = SIM_FP16, .causal = 0 };
    float *Q = malloc((size_t)(N * d) * sizeof *Q);
    float *K = malloc((size_t)(N * d) * sizeof *K);
    float *V = malloc((size_t)(N * d) * sizeof *V);
    assert_true(Q && K && V);
    sim_random_inputs(7, N, d, SIM_FP16, Q, K, V);
    int64_t Br, Bc;
    compare_out_with_library("o_seed.npy", SIM_FA2, &sh, Q, K, V, &Br, &Bc);
    CHECK(&r, jget_u64(&r, "runs.0.plan.Br") == (uint64_t)Br &&
              jget_u64(&r, "runs.0.plan.Bc") == (uint64_t)Bc,
          "fasim's plan differs from sim_plan_choose's (%lld x %lld)", (long long)Br,
          (long long)Bc);
    free(Q);
    free(K);
    free(V);
    run_free(&r);
}

/* Two files of the temporary directory hold the same bytes, more than
 * min_len of them. */
static void assert_same_file(const char *name1, const char *name2, size_t min_len)
{
    char p1[512], p2[512];
    size_t l1, l2;
    char *f1 = slurp(tu_path(p1, sizeof p1, name1), &l1);
    char *f2 = slurp(tu_path(p2, sizeof p2, name2), &l2);
    assert_non_null(f1);
    assert_non_null(f2);
    assert_true(l1 > min_len);
    assert_int_equal(l1, l2);
    assert_memory_equal(f1, f2, l1);
    free(f1);
    free(f2);
}

/* --intermediates from the command line: the JSON's config says which, and
 * FA1's running output moves as fp32 O_acc (kernel, the default) or as O in
 * the dtype (paper), with the counts worked out here: N = 256, B_c = 16,
 * T_c = 16; O_acc read T_c N d and written T_c N d (line 2 and all steps
 * but the last), 4 bytes each; O written N d, or (T_c + 1) N d. */
static void test_intermediates_report(void **state)
{
    (void)state;
    const uint64_t Nd = 256 * 16, Tc = 16;
    run_res r;
    RUN(&r, "--N", "256", "--d", "16", "--M", "64K", "--Br", "16", "--Bc", "16", "--algo",
        "fa1", "--json");
    expect_exit(&r, 0);
    CHECK(&r, strstr(r.out, "\"intermediates\":\"kernel\"") != NULL, "config.intermediates");
    CHECK(&r, jget_u64(&r, "runs.0.hbm.tensors.O_acc.read_elems") == Tc * Nd, "O_acc read");
    CHECK(&r, jget_u64(&r, "runs.0.hbm.tensors.O_acc.write_bytes") == 4 * Tc * Nd,
          "O_acc written, 4 bytes an element");
    CHECK(&r, jget_u64(&r, "runs.0.hbm.tensors.O.write_elems") == Nd, "O written once");
    run_free(&r);
    RUN(&r, "--N", "256", "--d", "16", "--M", "64K", "--Br", "16", "--Bc", "16", "--algo",
        "fa1", "--json", "--intermediates", "paper");
    expect_exit(&r, 0);
    CHECK(&r, strstr(r.out, "\"intermediates\":\"paper\"") != NULL, "config.intermediates");
    CHECK(&r, strstr(r.out, "\"O_acc\"") == NULL, "O_acc moved with the paper's intermediates");
    CHECK(&r, jget_u64(&r, "runs.0.hbm.tensors.O.write_elems") == (Tc + 1) * Nd,
          "O written T_c + 1 times");
    run_free(&r);
}

/* Paged KV from the command line: the section and the JSON keys, a count
 * worked out here (FA1 loads each key block once, one transfer per page it
 * touches), and the output of paged KV byte for byte that of contiguous. */
static void test_paged_report(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--N", "200", "--d", "16", "--M", "16K", "--page-size", "7", "--json");
    expect_exit(&r, 0);
    CHECK(&r, json_is_one_object(r.out, r.out_len), "stdout is not one JSON object");
    CHECK(&r, jget_u64(&r, "config.page_size") == 7, "config.page_size");
    CHECK(&r, jget_u64(&r, "paged.pages_per_head") == 29, "paged.pages_per_head: ceil(200/7)");
    CHECK(&r, jget_u64(&r, "paged.table_bytes") == 29 * 4, "paged.table_bytes");
    for (int k = 0; k < 3; k++) {
        char p1[96], p2[96];
        snprintf(p1, sizeof p1, "runs.%d.theory.matches", k);
        CHECK(&r, jis_lit(&r, p1, "true"), "%s", p1);
        snprintf(p1, sizeof p1, "runs.%d.paged.table_entries_read", k);
        snprintf(p2, sizeof p2, "runs.%d.hbm.tensors.PT.read_elems", k);
        CHECK(&r, jget_u64(&r, p1) == jget_u64(&r, p2), "%s != %s", p1, p2);
    }
    /* fa1: each key block j once, pages(j) = pages its rows fall in */
    const uint64_t Bc = jget_u64(&r, "runs.1.plan.Bc");
    uint64_t transfers = 0, tiles = 0;
    for (uint64_t c0 = 0; c0 < 200; c0 += Bc, tiles++)
        for (uint64_t row = c0; row < c0 + Bc && row < 200; row++)
            transfers += row == c0 || row % 7 == 0;
    CHECK(&r, jget_u64(&r, "runs.1.paged.kv_transfers") == 2 * transfers,
          "fa1 K+V transfers: %llu, worked out %llu",
          (unsigned long long)jget_u64(&r, "runs.1.paged.kv_transfers"),
          (unsigned long long)(2 * transfers));
    CHECK(&r, jget_u64(&r, "runs.1.paged.kv_transfers_contiguous") == 2 * tiles,
          "fa1 contiguous K+V transfers");
    run_free(&r);

    RUN(&r, "--N", "100", "--d", "16", "--M", "16K", "--page-size", "9");
    expect_exit(&r, 0);
    CHECK(&r, strstr(r.out, "PAGED KV: K and V in pages of P = 9 rows") != NULL,
          "no PAGED KV section");
    CHECK(&r, strstr(r.out, "PT read (4 B)") != NULL, "no PT row in the traffic table");
    check_80_columns(&r);
    run_free(&r);

    /* The widest case: huge counts in four columns, paged, split, GQA. */
    RUN(&r, "--Nq", "1", "--Nk", "1024G", "--causal", "--window", "1K", "--page-size", "16",
        "--count-only", "--splits", "8", "--heads", "64", "--kv-heads", "8", "--batch", "64",
        "--algo", "fa2");
    expect_exit(&r, 0);
    check_80_columns(&r);
    run_free(&r);
    RUN(&r, "--N", "64", "--page-size", "65");
    expect_exit(&r, 2);
    CHECK(&r, strstr(r.err, "must not exceed N_k") != NULL, "page larger than N_k");
    run_free(&r);

    const char *algos[3] = { "naive", "fa1", "fa2" };
    for (int k = 0; k < 3; k++) {
        RUN(&r, "--algo", algos[k], "--N", "90", "--d", "8", "--M", "8K", "--causal",
            "--out", "@o_flat.npy");
        expect_exit(&r, 0);
        run_free(&r);
        RUN(&r, "--algo", algos[k], "--N", "90", "--d", "8", "--M", "8K", "--causal",
            "--page-size", "5", "--out", "@o_paged.npy");
        expect_exit(&r, 0);
        run_free(&r);
        assert_same_file("o_flat.npy", "o_paged.npy", 128);
    }
}

/* Model presets: the shape a preset sets, options beside it overriding it,
 * the per-layer bytes equal to the runs' sum, the model's equal to the layers
 * times it, and FA2's forward reading Q and writing O once for the whole
 * batch (B H N d each, worked out here). */
static void test_presets(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--preset", "gpt2-medium", "--json");
    expect_exit(&r, 0);
    CHECK(&r, json_is_one_object(r.out, r.out_len), "stdout is not one JSON object");
    CHECK(&r, jget_u64(&r, "config.N") == 1024 && jget_u64(&r, "config.d") == 64 &&
              jget_u64(&r, "config.heads") == 16 && jget_u64(&r, "config.batch") == 64,
          "gpt2-medium's shape");
    CHECK(&r, jis_lit(&r, "config.causal", "true"), "gpt2-medium is causal");
    CHECK(&r, jis_str(&r, "config.dtype", "fp16") && jis_str(&r, "config.pass", "both"),
          "gpt2-medium: fp16, forward and backward");
    CHECK(&r, json_array_len(r.out, r.out_len, "runs") == 8,
          "three loop orders and the unfused baseline (Figure 2 has it), two passes");
    CHECK(&r, jget_u64(&r, "preset.layers") == 24, "preset.layers");
    const uint64_t BHNd = 64ull * 16 * 1024 * 64;
    for (int a = 0; a < 4; a++) {
        char p1[96], p2[96];
        snprintf(p1, sizeof p1, "preset.algos.%d.layer_bytes", a);
        const uint64_t layer = jget_u64(&r, p1);
        uint64_t sum = 0;
        for (int k = 0; k < 8; k++) {
            snprintf(p2, sizeof p2, "runs.%d.algo", k);
            snprintf(p1, sizeof p1, "preset.algos.%d.algo", a);
            size_t l1, l2;
            const char *v1 = json_get(r.out, r.out_len, p1, &l1);
            const char *v2 = json_get(r.out, r.out_len, p2, &l2);
            if (v1 && v2 && l1 == l2 && !memcmp(v1, v2, l1)) {
                snprintf(p2, sizeof p2, "runs.%d.hbm.total_bytes", k);
                sum += jget_u64(&r, p2);
            }
        }
        CHECK(&r, layer == sum && layer > 0, "preset layer bytes of algo %d: %llu, runs %llu",
              a, (unsigned long long)layer, (unsigned long long)sum);
        snprintf(p1, sizeof p1, "preset.algos.%d.model_bytes", a);
        CHECK(&r, jget_num(&r, p1) == 24.0 * (double)layer, "model bytes of algo %d", a);
    }
    CHECK(&r, jis_str(&r, "runs.2.algo", "fa2") && jis_str(&r, "runs.2.pass", "fwd"),
          "runs.2 is fa2's forward");
    CHECK(&r, jget_u64(&r, "runs.2.hbm.tensors.Q.read_elems") == BHNd &&
              jget_u64(&r, "runs.2.hbm.tensors.O.write_elems") == BHNd,
          "fa2 forward over the batch: Q read and O written once");
    run_free(&r);

    /* The FlashAttention paper's Figure 2 (left): GPT-2 medium, the unfused
     * baseline, forward and backward, per head of the B H = 1024, worked out
     * from README.md's table of kernels (e = 2 bytes, masks 1 byte):
     *   forward  QK^T 2eNd + eNN; /sqrt(d) 2eNN; where 2eNN + NN; softmax
     *            2eNN; [dropout 2eNN + NN]; PV eNN + 2eNd
     *   backward dP 2eNd + eNN; dV eNN + 2eNd; [dropout 2eNN + NN];
     *            softmax 3eNN; where 2eNN + NN; /sqrt(d) 2eNN; dQ, dK
     *            eNN + 2eNd each
     * 12 e N d + 19 e NN + 2 NN without dropout, 4 e NN + 2 NN more with it:
     * 41.5 MiB and 51.5 MiB a head. */
    const uint64_t e = 2, NN = 1024ull * 1024, Nd = 1024ull * 64, heads = 64ull * 16;
    const uint64_t plain = heads * (12 * e * Nd + 19 * e * NN + 2 * NN);
    const uint64_t dropped = plain + heads * (4 * e * NN + 2 * NN);
    assert_int_equal(plain, 44560285696ull);        /* 41.5 GiB, 44.6 GB */
    const char *const opts[2][6] = { { "--preset", "gpt2-medium", "--json" },
                                     { "--preset", "gpt2-medium", "--dropout", "0.1",
                                       "--json" } };
    for (int k = 0; k < 2; k++) {
        run_fasim(&r, opts[k]);
        expect_exit(&r, 0);
        CHECK(&r, jis_str(&r, "preset.algos.3.algo", "unfused"), "unfused in gpt2-medium");
        CHECK(&r, jget_u64(&r, "preset.algos.3.layer_bytes") == (k ? dropped : plain),
              "unfused's layer bytes%s", k ? " with dropout" : "");
        CHECK(&r, jis_str(&r, "config.mode", "count-only"), "dropout is counted only");
        CHECK(&r, jget_num(&r, "config.dropout") == (k ? 0.1 : 0.0), "config.dropout");
        run_free(&r);
    }
    /* Dropout is counted, not computed: a run small enough to compute
     * counts only with it, and says why. */
    for (int k = 0; k < 2; k++) {
        const char *const small[2][8] = { { "--N", "64", "--algo", "unfused", "--json" },
                                          { "--N", "64", "--algo", "unfused", "--dropout", "0.5",
                                            "--json" } };
        run_fasim(&r, small[k]);
        expect_exit(&r, 0);
        CHECK(&r, jis_str(&r, "config.mode", k ? "count-only" : "compute"),
              "mode %s dropout", k ? "with" : "without");
        CHECK(&r, !k || strstr(r.err, "--dropout is counted, not computed") != NULL,
              "the note says why");
        size_t zl;
        const char *z = json_get(r.out, r.out_len, "runs.0.hbm.tensors.Z.write_elems", &zl);
        CHECK(&r, k ? z && jget_u64(&r, "runs.0.hbm.tensors.Z.write_elems") == 64u * 64 : !z,
              "the dropout mask is written once (N^2 elements), with dropout only");
        run_free(&r);
    }

    RUN(&r, "--preset", "gpt2-medium", "--batch", "2", "--N", "128", "--pass", "fwd",
        "--json");
    expect_exit(&r, 0);
    CHECK(&r, jget_u64(&r, "config.batch") == 2 && jget_u64(&r, "config.N") == 128 &&
              jget_u64(&r, "config.heads") == 16 && jis_str(&r, "config.pass", "fwd"),
          "options beside --preset override it");
    run_free(&r);

    RUN(&r, "--preset", "mistral-7b", "--N", "512", "--batch", "1");
    expect_exit(&r, 0);
    check_80_columns(&r);
    CHECK(&r, strstr(r.out, "causal, window W = 4096") != NULL, "mistral-7b's window");
    CHECK(&r, strstr(r.out, "MODEL: Mistral 7B") != NULL, "no MODEL section");
    CHECK(&r, strstr(r.out, "all 32 layers") != NULL, "no all-layers row");
    run_free(&r);

    /* --Nq or --Nk change one side of the preset's length; --heads alone
     * leaves one K, V head per query head. */
    RUN(&r, "--preset", "llama2-7b", "--Nq", "1", "--pass", "fwd", "--count-only", "--json");
    expect_exit(&r, 0);
    CHECK(&r, jget_u64(&r, "config.N") == 1 && jget_u64(&r, "config.Nk") == 4096,
          "--Nq 1 beside llama2-7b: N_k stays 4096");
    run_free(&r);
    RUN(&r, "--preset", "llama2-70b", "--heads", "16", "--count-only", "--json", "--N", "256");
    expect_exit(&r, 0);
    CHECK(&r, jget_u64(&r, "config.heads") == 16 && jget_u64(&r, "config.kv_heads") == 16,
          "--heads alone beside a GQA preset");
    run_free(&r);
    /* A GQA model trains too: the backward sums dK, dV over each group. */
    RUN(&r, "--preset", "llama2-70b", "--pass", "both", "--count-only", "--N", "256");
    expect_exit(&r, 0);
    CHECK(&r, strstr(r.out, "dK_exp read") != NULL, "the expanded gradients counted");
    CHECK(&r, strstr(r.out, "DOES NOT") == NULL && strstr(r.out, " no\n") == NULL,
          "closed forms match");
    run_free(&r);
    /* Once refused ("one key/value head per query head"): now every loop
     * order's backward runs with G < H, checked against the oracle. */
    RUN(&r, "--pass", "bwd", "--heads", "4", "--kv-heads", "2", "--N", "48", "--d", "8",
        "--compute", "--algo", "all", "--json");
    expect_exit(&r, 0);
    CHECK(&r, jget_u64(&r, "config.kv_heads") == 2, "G = 2");
    CHECK(&r, strstr(r.out, "\"dK_exp\"") != NULL, "dK_exp in the JSON");
    run_free(&r);

    RUN(&r, "--preset", "gpt2-medium");
    expect_exit(&r, 0);
    check_80_columns(&r);
    /* One unit in one report: the MODEL section's forward row is the
     * forward traffic table's "total bytes", the same bytes in the same
     * unit and digits (it was 9.25 GiB above and 9.932 GB below). */
    {
        const char *tot = strstr(r.out, "  total bytes");
        const char *fwd = strstr(r.out, "  forward, one layer");
        CHECK(&r, tot && fwd, "no total bytes row or no MODEL forward row");
        char unit[3][8];
        double t[3], f[3];
        CHECK(&r, sscanf(tot, " total bytes %lf %7s %lf %7s %lf %7s", &t[0], unit[0], &t[1],
                         unit[1], &t[2], unit[2]) == 6, "total bytes row unreadable");
        CHECK(&r, sscanf(fwd, " forward, one layer %lf %lf %lf", &f[0], &f[1], &f[2]) == 3,
              "MODEL forward row unreadable");
        for (int a = 0; a < 3; a++) {
            CHECK(&r, strcmp(unit[a], "GiB") == 0, "total bytes of %d not in GiB", a);
            CHECK(&r, f[a] == t[a], "loop order %d: MODEL says %g, the table %g GiB", a, f[a],
                  t[a]);
        }
        CHECK(&r, strstr(r.out, "GiB (2^30 bytes)") != NULL, "the unit is not stated");
        CHECK(&r, strstr(r.out, "10^9") == NULL, "a second, decimal unit in the report");
    }
    run_free(&r);

    RUN(&r, "--preset", "list");
    expect_exit(&r, 0);
    check_80_columns(&r);
    static const char *const names[] = { "gpt2-small", "gpt2-medium", "bert-large",
                                         "llama2-7b", "llama2-70b", "llama3-8b",
                                         "mistral-7b" };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        CHECK(&r, strstr(r.out, names[k]) != NULL, "--preset list lacks %s", names[k]);
    run_free(&r);
}

static void test_out_from_npy(void **state)
{
    (void)state;
    const int64_t N = 48, d = 24;          /* partial last blocks likely */
    const size_t n = (size_t)(N * d);
    float *Q = malloc(n * sizeof *Q), *K = malloc(n * sizeof *K), *V = malloc(n * sizeof *V);
    double *K64 = malloc(n * sizeof *K64);
    assert_true(Q && K && V && K64);
    uint64_t st = 12345;
    for (size_t i = 0; i < n; i++) {
        Q[i] = rand_unit(&st);
        /* float64 values with bits beyond float precision */
        K64[i] = (double)rand_unit(&st) + ldexp((double)(tu_rand(&st) >> 40), -50);
        K[i] = (float)K64[i];                /* what the reader makes of them */
        V[i] = rand_unit(&st);
    }
    write_f32("in_q.npy", Q, N, d);
    write_f64("in_k64.npy", K64, N, d);
    write_f32("in_v.npy", V, N, d);

    run_res r;
    RUN(&r, "--algo", "fa1", "--q", "@in_q.npy", "--k", "@in_k64.npy", "--v", "@in_v.npy",
        "--out", "@o_npy.npy");
    expect_exit(&r, 0);
    CHECK(&r, r.err_len == 0, "stderr is not empty");
    CHECK(&r, strstr(r.out, "inputs from .npy files") != NULL, "report does not say .npy");
    CHECK(&r, strstr(r.out, "N = 48, d = 24") != NULL, "N, d not taken from the files");
    sim_shape sh = { .N = N, .d = d, .M = 96 * 1024, .dtype = SIM_FP16, .causal = 0 };
    compare_out_with_library("o_npy.npy", SIM_FA1, &sh, Q, K, V, NULL, NULL);
    run_free(&r);

    /* The same files, another loop order, dtype, mask and M. */
    RUN(&r, "--algo", "fa2", "--dtype", "bf16", "--causal", "--M", "32K", "--q", "@in_q.npy",
        "--k", "@in_k64.npy", "--v", "@in_v.npy", "--out", "@o_npy2.npy");
    expect_exit(&r, 0);
    CHECK(&r, r.err_len == 0, "stderr is not empty");
    sim_shape sh2 = { .N = N, .d = d, .M = 32 * 1024, .dtype = SIM_BF16, .causal = 1 };
    compare_out_with_library("o_npy2.npy", SIM_FA2, &sh2, Q, K, V, NULL, NULL);
    run_free(&r);

    free(Q);
    free(K);
    free(V);
    free(K64);
}

/* runs[].error.rmse: the root mean square of O - O_ref, recomputed here
 * from --out's O and the float64 oracle on the seeded inputs. fp8: the
 * oracle's inputs are the ones before quantisation (unrounded), and the fp8
 * error is far above fp16's; --inputs outliers draws another stream. */
static void test_json_rmse_fp8(void **state)
{
    (void)state;
    const int64_t N = 64, d = 16;
    const char *const dts[] = { "fp16", "e4m3", "e5m2" };
    double rmse[3];
    float *Q = malloc((size_t)(N * d) * sizeof *Q), *K = malloc((size_t)(N * d) * sizeof *K),
          *V = malloc((size_t)(N * d) * sizeof *V);
    double *O_ref = malloc((size_t)(N * d) * sizeof *O_ref);
    assert_true(Q && K && V && O_ref);
    for (int k = 0; k < 3; k++) {
        run_res r;
        RUN(&r, "--N", "64", "--d", "16", "--algo", "fa2", "--dtype", dts[k], "--json", "--out",
            "@o_rmse.npy", "--seed", "3");
        expect_exit(&r, 0);
        const double got = jget_num(&r, "runs.0.error.rmse");
        CHECK(&r, jis_str(&r, "config.inputs", "seed"), "config.inputs is not seed");
        run_free(&r);
        /* fp16: the oracle sees fp16-rounded inputs; fp8: the float32 ones. */
        sim_random_qkv(3, N, N, d, k == 0 ? SIM_FP16 : SIM_FP32, Q, K, V);
        assert_int_equal(ref_oracle_attention_f(Q, K, V, N, d, 0, O_ref, NULL), 0);
        sim_npy_matrix m;
        read_npy("o_rmse.npy", &m);
        double sq = 0;
        for (int64_t i = 0; i < N * d; i++)
            sq += ((double)m.data[i] - O_ref[i]) * ((double)m.data[i] - O_ref[i]);
        free(m.data);
        rmse[k] = sqrt(sq / (double)(N * d));
        if (fabs(got - rmse[k]) > 1e-9 * rmse[k])
            fail_msg("%s: JSON rmse %.9e, recomputed %.9e", dts[k], got, rmse[k]);
    }
    /* e4m3 keeps 3 mantissa bits, e5m2 2, fp16 10. */
    assert_true(rmse[0] < rmse[1] / 20 && rmse[1] < rmse[2]);
    run_res r;
    RUN(&r, "--N", "64", "--d", "16", "--algo", "fa2", "--dtype", "e4m3", "--fp8-scale",
        "block", "--incoherent", "on", "--inputs", "outliers", "--json");
    expect_exit(&r, 0);
    CHECK(&r, jis_str(&r, "config.inputs", "outliers"), "config.inputs is not outliers");
    CHECK(&r, jis_str(&r, "config.fp8_scale", "block"), "config.fp8_scale is not block");
    CHECK(&r, jget_num(&r, "runs.0.error.rmse") > 0, "no rmse");
    run_free(&r);
    /* The text report names the outlier inputs and FP8's 1-byte elements,
     * and with FP8 it does not blame standard attention's S and P rounding
     * for the largest error (the quantisation dominates every loop order). */
    RUN(&r, "--N", "64", "--d", "16", "--dtype", "e4m3", "--inputs", "outliers");
    expect_exit(&r, 0);
    check_80_columns(&r);
    CHECK(&r, strstr(r.out, "seeded outlier inputs") != NULL, "outlier inputs not named");
    CHECK(&r, strstr(r.out, "(1 B)") != NULL && strstr(r.out, "Q, K, V in FP8") != NULL,
          "the traffic note omits FP8's 1-byte elements");
    CHECK(&r, strstr(r.out, "its error the largest here") == NULL,
          "FP8's error blamed on standard attention's S and P rounding");
    run_free(&r);
    free(Q);
    free(K);
    free(V);
    free(O_ref);
}

/* Inputs of shape (B, H, N, d): Q (2, 2, 12, 8), K and V (2, 1, 20, 8) set
 * B, H, G, N_q and N_k; --out writes O as (2, 2, 12, 8), bit for bit the
 * library's. Then the backward from a --dO file (G = H: K, V of Q's heads). */
static void test_npy_4d(void **state)
{
    (void)state;
    const int64_t B = 2, H = 2, G = 1, N = 12, Nk = 20, d = 8;
    const size_t nq = (size_t)(B * H * N * d), nk = (size_t)(B * G * Nk * d);
    float *Q = malloc(nq * sizeof *Q), *K = malloc(nk * sizeof *K), *V = malloc(nk * sizeof *V);
    assert_true(Q && K && V);
    uint64_t st = 4242;
    for (size_t i = 0; i < nq; i++)
        Q[i] = rand_unit(&st);
    for (size_t i = 0; i < nk; i++) {
        K[i] = rand_unit(&st);
        V[i] = rand_unit(&st);
    }
    char path[512], err[512];
    assert_int_equal(sim_npy_write_f32_4d(tu_path(path, sizeof path, "q4.npy"), Q, B, H, N, d,
                                          err, sizeof err), 0);
    assert_int_equal(sim_npy_write_f32_4d(tu_path(path, sizeof path, "k4.npy"), K, B, G, Nk, d,
                                          err, sizeof err), 0);
    assert_int_equal(sim_npy_write_f32_4d(tu_path(path, sizeof path, "v4.npy"), V, B, G, Nk, d,
                                          err, sizeof err), 0);
    run_res r;
    RUN(&r, "--algo", "fa2", "--causal", "--q", "@q4.npy", "--k", "@k4.npy", "--v", "@v4.npy",
        "--out", "@o4.npy");
    expect_exit(&r, 0);
    CHECK(&r, strstr(r.out, "batch B = 2, H = 2 query heads on G = 1 key/value heads") != NULL,
          "B, H, G not taken from the files");
    CHECK(&r, strstr(r.out, "N_q = 12, N_k = 20, d = 8") != NULL, "N_q, N_k not from the files");
    sim_shape sh = { .N = N, .Nk = Nk, .d = d, .M = 96 * 1024, .dtype = SIM_FP16, .causal = 1,
                     .batch = B, .heads = H, .kv_heads = G };
    sim_plan p;
    sim_result res;
    assert_int_equal(sim_plan_choose(SIM_FA2, &sh, NULL, SIM_PLAN_AUTO, 0, 0, &p, err,
                                     sizeof err), 0);
    assert_int_equal(sim_run(SIM_FA2, &sh, &p, Q, K, V, NULL, &res, err, sizeof err), 0);
    sim_npy_matrix m;
    read_npy("o4.npy", &m);
    assert_int_equal(m.rank, 4);
    assert_true(m.batch == B && m.heads == H && m.rows == N && m.cols == d);
    assert_int_equal(tu_compare_bits("O (B, H, N, d)", m.data, res.O, (int64_t)nq), 0);
    free(m.data);
    sim_result_free(&res);
    run_free(&r);

    /* backward: K, V with H heads, dO of Q's shape */
    assert_int_equal(sim_npy_write_f32_4d(tu_path(path, sizeof path, "do4.npy"), Q, B, H, N, d,
                                          err, sizeof err), 0);
    RUN(&r, "--pass", "both", "--q", "@q4.npy", "--k", "@q4.npy", "--v", "@q4.npy", "--dO",
        "@do4.npy", "--json");
    expect_exit(&r, 0);
    CHECK(&r, jis_str(&r, "config.pass", "both"), "config.pass is not both");
    CHECK(&r, jget_u64(&r, "config.heads") == 2 && jget_u64(&r, "config.batch") == 2,
          "B, H not in config");
    CHECK(&r, jis_str(&r, "runs.3.pass", "bwd"), "the fourth run is not a backward one");
    run_free(&r);
    /* the view and the kernels run one head: 4-D files are refused */
    RUN(&r, "view", "--q", "@q4.npy", "--k", "@q4.npy", "--v", "@q4.npy", "--frames", "1");
    expect_exit(&r, 2);
    CHECK(&r, strstr(r.err, "shows one head") != NULL, "view did not refuse a 4-D file");
    run_free(&r);
    free(Q);
    free(K);
    free(V);
}

/* --out into a directory that does not exist: exit 1 and a message naming
 * --out and the file (the report itself has already been printed). */
static void test_out_unwritable(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--algo", "fa2", "--N", "64", "--d", "16", "--out", "@no_such_dir/o.npy");
    expect_exit(&r, 1);
    expect_one_line_error(&r, 0);
    CHECK(&r, strstr(r.err, "--out") && strstr(r.err, "no_such_dir/o.npy") &&
              strstr(r.err, "cannot open"), "the message does not name --out and the file");
    run_free(&r);
}

/* The GPU model's options: --l2 0 gives the two-level counts as DRAM bytes,
 * --l2 inf the compulsory traffic (Q, K, V read once, O and L written once),
 * --trace and --timeline write their files (a trace with traceEvents, an
 * SVG), an unwritable --trace fails before the run, and the options without
 * --gpu are refused. */
static void test_gpu_model_options(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--gpu", "a100", "--N", "2048", "--d", "64", "--heads", "4", "--algo", "fa2",
        "--count-only", "--json", "--l2", "0");
    expect_exit(&r, 0);
    CHECK(&r, jget_u64(&r, "runs.0.gpu_model.dram_read_bytes") ==
                  jget_u64(&r, "runs.0.hbm.read_bytes") &&
              jget_u64(&r, "runs.0.gpu_model.dram_write_bytes") ==
                  jget_u64(&r, "runs.0.hbm.write_bytes"),
          "--l2 0: DRAM bytes differ from the two-level counts");
    run_free(&r);
    RUN(&r, "--gpu", "a100", "--N", "2048", "--d", "64", "--heads", "4", "--algo", "fa2",
        "--count-only", "--json", "--l2", "inf");
    expect_exit(&r, 0);
    /* fp16: Q, K, V of 4 heads read once; O written once, L (fp32) once */
    CHECK(&r, jget_u64(&r, "runs.0.gpu_model.dram_read_bytes") == 3u * 4u * 2048u * 64u * 2u &&
              jget_u64(&r, "runs.0.gpu_model.dram_write_bytes") ==
                  4u * 2048u * 64u * 2u + 4u * 2048u * 4u,
          "--l2 inf: DRAM bytes are not each tensor once");
    CHECK(&r, jis_lit(&r, "runs.0.gpu_model.l2_bytes", "null"), "--l2 inf: l2_bytes not null");
    run_free(&r);

    RUN(&r, "--gpu", "h100", "--N", "1024", "--d", "64", "--algo", "fa2", "--count-only",
        "--trace", "@trace.json", "--timeline", "@tl.svg");
    expect_exit(&r, 0);
    char path[512], *text;
    size_t len;
    tu_path(path, sizeof path, "trace.json");
    text = slurp(path, &len);
    CHECK(&r, text && json_is_one_object(text, len) && strstr(text, "\"traceEvents\":["),
          "--trace did not write one JSON object with traceEvents");
    free(text);
    tu_path(path, sizeof path, "tl.svg");
    text = slurp(path, &len);
    CHECK(&r, text && !strncmp(text, "<?xml", 5) && strstr(text, "</svg>"),
          "--timeline did not write an SVG");
    /* The axis: bare numbers in one unit, named once, from 0 in equal round
     * steps (1, 2 or 5 x 10^k). */
    {
        int ticks = 0;
        double prev = 0, step = 0;
        const char *at = text;
        while (at && (at = strstr(at, "text-anchor=\"middle\">")) != NULL) {
            at += strlen("text-anchor=\"middle\">");
            char *end;
            const double v = strtod(at, &end);
            CHECK(&r, end != at && !strncmp(end, "</text>", 7), "a tick label is not a bare number");
            if (ticks == 0)
                CHECK(&r, v == 0, "the axis does not start at 0");
            else if (ticks == 1)
                step = v;
            else
                CHECK(&r, fabs((v - prev) - step) <= 1e-9 * v, "uneven ticks");
            prev = v;
            ticks++;
        }
        const double mant = step / pow(10, floor(log10(step)));
        CHECK(&r, ticks >= 4 && ticks <= 11, "fewer than 4 or more than 11 ticks");
        CHECK(&r, fabs(mant - 1) < 1e-9 || fabs(mant - 2) < 1e-9 || fabs(mant - 5) < 1e-9,
              "the tick step is not 1, 2 or 5 x 10^k");
        CHECK(&r, text && (strstr(text, ">time, us</text>") || strstr(text, ">time, ms</text>")),
              "the axis does not name its unit");
    }
    free(text);
    run_free(&r);

    RUN(&r, "--gpu", "a100", "--N", "1024", "--count-only", "--trace", "@no_such_dir/t.json");
    expect_exit(&r, 1);
    CHECK(&r, strstr(r.err, "--trace") && !strstr(r.out, "GPU MODEL"),
          "an unwritable --trace did not fail before the run");
    run_free(&r);
    RUN(&r, "--gpu", "a100", "--N", "1024", "--count-only", "--timeline", "@tl.png");
    expect_exit(&r, 2);
    CHECK(&r, strstr(r.err, ".svg"), "--timeline to a .png does not say the picture is SVG");
    run_free(&r);
    RUN(&r, "--gpu", "a100", "--N", "1024", "--l2", "lots");
    expect_exit(&r, 2);
    CHECK(&r, strstr(r.err, "inf") && strstr(r.err, "0 (no L2)"),
          "a bad --l2 does not name its words 0 and inf");
    run_free(&r);
    RUN(&r, "--N", "1024", "--l2", "1M");
    expect_exit(&r, 2);
    CHECK(&r, strstr(r.err, "--gpu"), "--l2 without --gpu does not ask for --gpu");
    run_free(&r);
}

/* ---- 4. determinism ------------------------------------------------------- */

/* Remove every "seconds":<number> (timings) from a JSON text, in place. */
static void strip_seconds(char *s)
{
    const char *key = "\"seconds\":";
    size_t kl = strlen(key);
    char *p;
    while ((p = strstr(s, key)) != NULL) {
        char *q = p + kl;
        while (*q && *q != ',' && *q != '}' && *q != ']')
            q++;
        memmove(p, q, strlen(q) + 1);
    }
}

static void test_deterministic(void **state)
{
    (void)state;
    run_res a, b;
    RUN(&a, "--json", "--N", "200", "--d", "32", "--seed", "5", "--causal");
    RUN(&b, "--json", "--N", "200", "--d", "32", "--seed", "5", "--causal");
    expect_exit(&a, 0);
    expect_exit(&b, 0);
    CHECK(&a, json_is_one_object(a.out, a.out_len), "stdout is not one JSON object");
    CHECK(&a, strstr(a.out, "\"seconds\":") != NULL, "no seconds field to strip");
    strip_seconds(a.out);
    strip_seconds(b.out);
    CHECK(&a, strstr(a.out, "seconds") == NULL, "seconds not stripped");
    if (strcmp(a.out, b.out) != 0) {
        dump(&b);
        fail_msg("two identical --json runs differ (beyond timings)");
    }
    run_free(&a);
    run_free(&b);

    /* Text output has no timings: identical byte for byte. */
    RUN(&a, "--N", "200", "--d", "32", "--seed", "5");
    RUN(&b, "--N", "200", "--d", "32", "--seed", "5");
    expect_exit(&a, 0);
    expect_exit(&b, 0);
    CHECK(&a, a.out_len == b.out_len && memcmp(a.out, b.out, a.out_len) == 0,
          "two identical text runs differ");
    run_free(&a);
    run_free(&b);

    /* --out files byte for byte. */
    RUN(&a, "--algo", "naive", "--N", "100", "--d", "16", "--seed", "7", "--out", "@det1.npy");
    RUN(&b, "--algo", "naive", "--N", "100", "--d", "16", "--seed", "7", "--out", "@det2.npy");
    expect_exit(&a, 0);
    expect_exit(&b, 0);
    assert_same_file("det1.npy", "det2.npy", 128);
    run_free(&a);
    run_free(&b);
}

/* ---- 5. bad input ----------------------------------------------------------- */

typedef struct {
    const char *name;
    const char *args[16];        /* NULL-terminated; "@f" = file f in the tmpdir */
    int code;                    /* expected exit status */
    const char *keys[4];         /* each must appear in stderr */
    int continuation;            /* indented continuation lines allowed */
} bad_case;

#define Q3(q, k, v) "--q", q, "--k", k, "--v", v

static bad_case BAD[] = {
    { "bad: --N 0", { "--N", "0" }, 2, { "--N", "at least 1" }, 0 },
    { "bad: --N -5", { "--N", "-5" }, 2, { "--N", "negative" }, 0 },
    { "bad: --N abc", { "--N", "abc" }, 2, { "--N", "not a number" }, 0 },
    { "bad: --N 12Q", { "--N", "12Q" }, 2, { "--N", "suffix", "'Q'" }, 0 },
    { "bad: --N without value", { "--N" }, 2, { "--N", "needs a value" }, 0 },
    { "bad: --N empty", { "--N", "" }, 2, { "--N", "needs a value" }, 0 },
    { "bad: --N 0.5", { "--N", "0.5" }, 2, { "--N", "whole" }, 0 },
    { "bad: --d 0", { "--d", "0" }, 2, { "--d", "at least 1" }, 0 },
    { "bad: --d over limit", { "--d", "100000" }, 2, { "--d", "65536" }, 0 },
    { "bad: --M 0", { "--M", "0" }, 2, { "--M", "at least 1 byte" }, 0 },
    { "bad: --M 96KB", { "--M", "96KB" }, 2, { "--M", "ambiguous", "KiB" }, 0 },
    { "bad: --M 1.3K", { "--M", "1.3K" }, 2, { "--M", "whole number of bytes" }, 0 },
    { "bad: --M 2G", { "--M", "2G" }, 2, { "--M", "at most 1G" }, 0 },
    { "bad: --Br 0", { "--Br", "0" }, 2, { "--Br", "at least 1" }, 0 },
    { "bad: --Bc x", { "--Bc", "x" }, 2, { "--Bc", "not a number" }, 0 },
    { "bad: --dtype fp8", { "--dtype", "fp8" }, 2, { "--dtype", "fp8", "fp16" }, 0 },
    { "bad: --fp8-scale without fp8", { "--fp8-scale", "block" }, 2,
      { "--fp8-scale", "fp8 dtype", "--dtype e4m3 or e5m2" }, 0 },
    { "bad: --fp8-scale tensor with bf16", { "--fp8-scale", "tensor", "--dtype", "bf16" }, 2,
      { "--fp8-scale applies", "--dtype e4m3" }, 0 },
    { "bad: --incoherent without fp8", { "--incoherent", "on" }, 2,
      { "--incoherent", "fp8 dtype" }, 0 },
    { "bad: --fp8-scale unknown", { "--dtype", "e4m3", "--fp8-scale", "row" }, 2,
      { "--fp8-scale row", "tensor or block" }, 0 },
    { "bad: --incoherent maybe", { "--dtype", "e4m3", "--incoherent", "maybe" }, 2,
      { "--incoherent maybe", "on or off" }, 0 },
    { "bad: fp8 backward", { "--dtype", "e4m3", "--pass", "bwd" }, 2,
      { "fp8", "backward", "--pass fwd" }, 0 },
    { "bad: fp8 paged", { "--dtype", "e5m2", "--page-size", "16" }, 2,
      { "paged KV in fp8" }, 0 },
    { "bad: --incoherent on d 96", { "--dtype", "e4m3", "--incoherent", "on", "--d", "96" }, 2,
      { "--incoherent on needs d a power of two", "--incoherent off" }, 0 },
    { "bad: --inputs unknown", { "--inputs", "cauchy" }, 2,
      { "--inputs cauchy", "bell or outliers" }, 0 },
    { "bad: --inputs with .npy", { Q3("@ok_8x4.npy", "@ok_8x4.npy", "@ok_8x4.npy"), "--inputs",
      "outliers" }, 2, { "--inputs", "--q, --k, --v" }, 0 },
    { "bad: gpu in fp8", { "gpu", "--dtype", "e4m3", "--backend", "cpu" }, 2,
      { "--dtype e4m3", "the kernels run fp16, bf16 and fp32" }, 0 },
    { "bad: --algo fa9", { "--algo", "fa9" }, 2, { "--algo", "fa9", "fa2" }, 0 },
    { "bad: --algo fa1,", { "--algo", "fa1," }, 2, { "--algo", "unknown" }, 0 },
    { "bad: --plan foo", { "--plan", "foo" }, 2, { "--plan", "foo", "paper" }, 0 },
    { "bad: --max-steps 0", { "--max-steps", "0" }, 2, { "--max-steps", "at least 1" }, 0 },
    { "bad: unknown option --foo", { "--foo" }, 2, { "unknown option", "--foo" }, 0 },
    { "bad: --m (did you mean --M)", { "--m", "96K" }, 2, { "--m", "did you mean", "--M" }, 0 },
    { "bad: --json=1", { "--json=1" }, 2, { "--json", "no value" }, 0 },
    { "bad: single dash -N", { "-N", "5" }, 2, { "-N", "unexpected" }, 0 },
    { "bad: stray positional", { "--N", "64", "stray" }, 2, { "unexpected argument", "stray" }, 0 },
    { "bad: unknown subcommand", { "frobnicate" }, 2, { "unknown subcommand", "frobnicate" }, 0 },
    { "bad: report + stray", { "report", "stray" }, 2, { "unexpected argument", "stray" }, 0 },
    { "bad: --window 0", { "--window", "0" }, 2, { "--window", "at least 1" }, 0 },
    { "bad: causal N_q > N_k", { "--Nq", "64", "--Nk", "32", "--causal" }, 2,
      { "--Nq must not exceed --Nk", "last N_q positions" }, 0 },
    { "bad: --Nk 0", { "--Nk", "0" }, 2, { "--Nk", "at least 1" }, 0 },
    { "bad: H not divisible by G", { "--heads", "6", "--kv-heads", "4" }, 2,
      { "--heads H must be divisible by --kv-heads G" }, 0 },
    { "bad: G > H", { "--heads", "2", "--kv-heads", "4" }, 2,
      { "--kv-heads G must not exceed --heads H" }, 0 },
    { "bad: --batch 0", { "--batch", "0" }, 2, { "--batch", "at least 1" }, 0 },
    { "bad: --pass sideways", { "--pass", "sideways" }, 2, { "--pass", "fwd, bwd or both" }, 0 },
    { "bad: --splits past T_c", { "--splits", "500", "--Nq", "1", "--Nk", "4096", "--Bc", "1024",
      "--algo", "fa2", "--M", "1M" }, 2, { "--splits 500 is more than the T_c = 4", "--Bc 8" }, 0 },
    { "bad: --splits past N_k", { "--splits", "5000", "--Nq", "1", "--Nk", "4096" }, 2,
      { "must not exceed N_k" }, 0 },
    { "bad: --preset unknown", { "--preset", "gpt5" }, 2,
      { "--preset gpt5: no such model", "gpt2-medium" }, 0 },
    { "bad: --page-size 0", { "--page-size", "0" }, 2, { "--page-size", "at least 1" }, 0 },
    { "bad: --page-size not a number", { "--page-size", "big" }, 2, { "--page-size" }, 0 },
    { "bad: --dropout 1", { "--dropout", "1", "--algo", "unfused" }, 2,
      { "--dropout 1: a probability in [0, 1)" }, 0 },
    { "bad: --dropout -0.1", { "--dropout", "-0.1", "--algo", "unfused" }, 2,
      { "--dropout -0.1: a probability in [0, 1)" }, 0 },
    { "bad: --dropout nan", { "--dropout", "nan", "--algo", "unfused" }, 2,
      { "--dropout nan: a probability" }, 0 },
    { "bad: --dropout without unfused", { "--dropout", "0.1" }, 2,
      { "--dropout changes the counts of unfused alone", "--algo unfused" }, 0 },
    { "bad: --dropout with --compute", { "--dropout", "0.1", "--algo", "unfused", "--compute" },
      2, { "--dropout is counted, not computed" }, 0 },
    { "bad: --page-size with unfused", { "--page-size", "16", "--algo", "unfused" }, 2,
      { "paged KV is a layout of the fused loop orders" }, 0 },
    { "bad: --splits without fa2", { "--splits", "4", "--algo", "fa1" }, 2,
      { "--splits is a plan of FA2's forward pass" }, 0 },
    { "bad: --dO without --q", { "--dO", "@ok_8x4.npy", "--pass", "bwd" }, 2,
      { "--dO goes with --q, --k and --v" }, 0 },
    { "bad: --dO with --pass fwd", { Q3("@ok_8x4.npy", "@ok_8x4.npy", "@ok_8x4.npy"), "--dO",
      "@ok_8x4.npy" }, 2, { "--dO is the backward pass's input" }, 0 },
    { "npy: --dO of another shape", { Q3("@ok_8x4.npy", "@ok_8x4.npy", "@ok_8x4.npy"), "--dO",
      "@ok_8x8.npy", "--pass", "bwd" }, 1, { "must have Q's shape", "(8, 4)" }, 0 },
    { "bad: --out with --pass bwd", { "--pass", "bwd", "--algo", "fa2", "--out", "x.npy" }, 2,
      { "--out writes the forward pass's O" }, 0 },
    { "bad: --compute with --count-only", { "--compute", "--count-only" }, 2,
      { "--compute", "--count-only" }, 0 },
    { "bad: --M 64 fits no plan", { "--M", "64" }, 2, { "M = 64 B", "too small", "needs" }, 0 },
    { "bad: --Br/--Bc do not fit", { "--Br", "1024", "--Bc", "1024", "--M", "96K" }, 2,
      { "needs", "SRAM", "S_ij", "hint:" }, 1 },
    { "bad: counts overflow 64 bits",
      { "--N", "4294967296", "--Br", "16", "--Bc", "16", "--count-only" }, 2,
      { "overflow", "64 bits" }, 0 },
    { "bad: --N over 2^40", { "--N", "1099511627777", "--count-only" }, 2,
      { "--N", "at most" }, 0 },
    { "bad: too many tile steps", { "--N", "16M", "--count-only" }, 2,
      { "tile steps", "--max-steps" }, 0 },
    { "bad: --max-steps lowered", { "--N", "1024", "--max-steps", "100", "--count-only" }, 2,
      { "tile steps", "100", "--max-steps" }, 0 },
    { "bad: compute needs too much memory", { "--compute", "--N", "1000000" }, 2,
      { "TiB", "--count-only", "--max-mem" }, 0 },
    { "bad: --out with --algo all", { "--out", "@never.npy" }, 2, { "--out", "--algo" }, 0 },
    { "bad: --out with --count-only",
      { "--out", "@never.npy", "--algo", "fa2", "--count-only" }, 2,
      { "--out", "--count-only" }, 0 },
    { "bad: only --q", { "--q", "@ok_8x4.npy" }, 2, { "--q", "--k", "--v" }, 0 },
    { "bad: --q/--k/--v with --count-only",
      { Q3("@ok_8x4.npy", "@ok_8x4.npy", "@ok_8x4.npy"), "--count-only" }, 2,
      { "--count-only", "--q" }, 0 },
    { "bad: --plan paper with --Br", { "--plan", "paper", "--Br", "16" }, 2,
      { "--plan paper", "--Br" }, 0 },
    { "bad: --softmax form unknown", { "--softmax", "4pass" }, 2,
      { "--softmax", "4pass", "2pass" }, 0 },
    { "bad: --softmax with FA only", { "--softmax", "3pass", "--algo", "fa2" }, 2,
      { "--softmax 3pass", "naive", "online softmax" }, 0 },
    { "bad: --softmax with naive backward only",
      { "--softmax", "2pass", "--algo", "naive", "--pass", "bwd" }, 2,
      { "--softmax 2pass", "forward" }, 0 },
    { "bad: --softmax 1pass over M", { "--softmax", "1pass", "--N", "24600", "--count-only" },
      2, { "--softmax 1pass", "98,408 B", "M = 98,304 B", "2pass" }, 0 },
    /* .npy inputs */
    { "npy: missing file", { Q3("@ok_8x4.npy", "@missing.npy", "@ok_8x4.npy") }, 1,
      { "--k", "missing.npy", "cannot open" }, 0 },
    { "npy: not an .npy", { Q3("@not_npy.npy", "@ok_8x4.npy", "@ok_8x4.npy") }, 1,
      { "--q", "not_npy.npy", "not an .npy" }, 0 },
    { "npy: truncated", { Q3("@ok_8x4.npy", "@ok_8x4.npy", "@truncated.npy") }, 1,
      { "--v", "truncated.npy", "truncated" }, 0 },
    { "npy: big-endian", { Q3("@big_endian.npy", "@ok_8x4.npy", "@ok_8x4.npy") }, 1,
      { "big_endian.npy", "big-endian" }, 0 },
    { "npy: Fortran order", { Q3("@ok_8x4.npy", "@fortran.npy", "@ok_8x4.npy") }, 1,
      { "fortran.npy", "Fortran" }, 0 },
    { "npy: dtype <i4", { Q3("@int32.npy", "@ok_8x4.npy", "@ok_8x4.npy") }, 1,
      { "int32.npy", "unsupported dtype", "<i4" }, 0 },
    { "npy: rank 1", { Q3("@ok_8x4.npy", "@ok_8x4.npy", "@rank1.npy") }, 1,
      { "rank1.npy", "rank 1" }, 0 },
    { "npy: shapes differ", { Q3("@ok_8x4.npy", "@ok_8x8.npy", "@ok_8x4.npy") }, 1,
      { "shapes differ", "(8, 4)", "(8, 8)" }, 0 },
    { "npy: NaN inside", { Q3("@ok_8x4.npy", "@ok_8x4.npy", "@nan.npy") }, 1,
      { "nan.npy", "NaN", "row 3, column 2" }, 0 },
    { "npy: --N disagrees with the files",
      { "--N", "16", Q3("@ok_8x4.npy", "@ok_8x4.npy", "@ok_8x4.npy") }, 2,
      { "--N", "disagree", "(8, 4)" }, 0 },
    { "npy: a directory", { Q3("@ok_8x4.npy", "@ok_8x4.npy", "@a_dir") }, 1,
      { "a_dir", "directory" }, 0 },
};
#define NBAD (sizeof BAD / sizeof BAD[0])

static void test_bad(void **state)
{
    const bad_case *c = *state;
    run_res r;
    run_fasim(&r, c->args);
    expect_exit(&r, c->code);
    CHECK(&r, r.out_len == 0, "stdout is not empty on a refusal");
    expect_one_line_error(&r, c->continuation);
    for (int k = 0; k < 4 && c->keys[k]; k++)
        CHECK(&r, strstr(r.err, c->keys[k]) != NULL, "the message lacks '%s'", c->keys[k]);
    CHECK(&r, r.seconds < 20.0, "the refusal took %.1f s", r.seconds);
    run_free(&r);
}

/* The number after the first `key` in s, skipping spaces and '=' ("B_r = 256",
 * "B_r=256", "--Br 256"); digits may be grouped with commas. Returns -1 if
 * there is none. */
static long long num_after(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    if (!p)
        return -1;
    p += strlen(key);
    while (*p == ' ' || *p == '=')
        p++;
    if (!j_isdigit((unsigned char)*p))
        return -1;
    long long v = 0;
    for (; j_isdigit((unsigned char)*p) || (*p == ',' && j_isdigit((unsigned char)p[1])); p++)
        if (*p != ',')
            v = v * 10 + (*p - '0');
    return v;
}

/* Block sizes from the first "hint:" line of a refusal that names both, as
 * "--Br X --Bc Y" or "B_r = X, B_c = Y". Returns 0, or -1. */
static int parse_hint(const char *err, long long *Br, long long *Bc)
{
    for (const char *h = strstr(err, "hint:"); h; h = strstr(h + 1, "hint:")) {
        const char *eol = strchr(h, '\n');
        size_t n = eol ? (size_t)(eol - h) : strlen(h);
        char line[512];
        if (n >= sizeof line)
            n = sizeof line - 1;
        memcpy(line, h, n);
        line[n] = '\0';
        long long r = num_after(line, "--Br"), c = num_after(line, "--Bc");
        if (r <= 0 || c <= 0) {
            r = num_after(line, "B_r");
            c = num_after(line, "B_c");
        }
        if (r > 0 && c > 0) {
            *Br = r;
            *Bc = c;
            return 0;
        }
    }
    return -1;
}

/* The refusal of block sizes that do not fit lists every buffer of the
 * overflowing phases and a hint; the hinted sizes, for the loop order the
 * message names, then run. */
static void test_misfit_hint_runs(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--Br", "1024", "--Bc", "1024", "--M", "96K");
    expect_exit(&r, 2);
    expect_one_line_error(&r, 1);
    static const char *const bufs[] = { "Q_i", "K_j", "S_ij", "P_ij", "V_j", "O_i" };
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        CHECK(&r, strstr(r.err, bufs[k]) != NULL, "buffer %s not listed", bufs[k]);
    char algo[16];
    CHECK(&r, sscanf(r.err, "fasim: %15s plan", algo) == 1, "no loop order named");
    long long Br = 0, Bc = 0;
    CHECK(&r, parse_hint(r.err, &Br, &Bc) == 0, "no hint with block sizes");
    CHECK(&r, strstr(r.err, "--Br") != NULL, "the hint does not mention --Br/--Bc");
    run_free(&r);

    char sbr[32], sbc[32];
    snprintf(sbr, sizeof sbr, "%lld", Br);
    snprintf(sbc, sizeof sbc, "%lld", Bc);
    RUN(&r, "--algo", algo, "--Br", sbr, "--Bc", sbc, "--M", "96K", "--json");
    expect_exit(&r, 0);
    CHECK(&r, r.err_len == 0, "stderr is not empty");
    CHECK(&r, json_is_one_object(r.out, r.out_len), "stdout is not one JSON object");
    CHECK(&r, jget_u64(&r, "runs.0.plan.Br") == (uint64_t)Br &&
              jget_u64(&r, "runs.0.plan.Bc") == (uint64_t)Bc, "hinted sizes not used");
    CHECK(&r, jis_str(&r, "runs.0.plan.kind", "user"), "plan kind is not user");
    run_free(&r);
}

/* Compute mode for N = 10^6 is refused before anything is allocated. */
static void test_compute_memory_fast(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--compute", "--N", "1000000");
    expect_exit(&r, 2);
    expect_one_line_error(&r, 0);
    CHECK(&r, r.seconds < 5.0, "the refusal took %.2f s: did it allocate or run?", r.seconds);
    run_free(&r);
    /* With the limit raised explicitly, still refused below it. */
    RUN(&r, "--compute", "--N", "64", "--max-mem", "1K");
    expect_exit(&r, 2);
    expect_one_line_error(&r, 0);
    CHECK(&r, strstr(r.err, "1 KiB") && strstr(r.err, "--max-mem"), "limit not named");
    run_free(&r);
}

/* ---- 6. help and version --------------------------------------------------- */

static void test_help_version(void **state)
{
    (void)state;
    static const char *const helps[][4] = {
        { "--help", NULL, NULL }, { "-h", NULL, NULL }, { "report", "--help", NULL },
        { "help", NULL, NULL }, { "--N", "64", "--help" },
    };
    run_res r, first;
    RUN(&first, "--help");
    expect_exit(&first, 0);
    for (size_t k = 0; k < sizeof helps / sizeof helps[0]; k++) {
        run_fasim(&r, helps[k]);
        expect_exit(&r, 0);
        CHECK(&r, r.err_len == 0, "stderr is not empty");
        CHECK(&r, strncmp(r.out, "usage: fasim", 12) == 0, "no usage line");
        CHECK(&r, strstr(r.out, "--max-steps") && strstr(r.out, "exit status"),
              "help text incomplete");
        CHECK(&r, r.out_len == first.out_len && !memcmp(r.out, first.out, r.out_len),
              "help text differs from --help's");
        int lineno = 1;
        size_t col = 0;
        for (size_t i = 0; i < r.out_len; i++) {
            if (r.out[i] == '\n') {
                lineno++;
                col = 0;
            } else {
                CHECK(&r, ++col <= 80, "help line %d is longer than 80 columns", lineno);
            }
        }
        run_free(&r);
    }
    run_free(&first);

    static const char *const versions[][3] = {
        { "--version", NULL, NULL }, { "report", "--version", NULL },
    };
    for (size_t k = 0; k < sizeof versions / sizeof versions[0]; k++) {
        run_fasim(&r, versions[k]);
        expect_exit(&r, 0);
        CHECK(&r, r.err_len == 0, "stderr is not empty");
        int a, b, c;
        char nl;
        CHECK(&r, sscanf(r.out, "fasim %d.%d.%d%c", &a, &b, &c, &nl) == 4 && nl == '\n',
              "version line is not 'fasim X.Y.Z'");
        CHECK(&r, count_char(r.out, r.out_len, '\n') == 1, "version is not one line");
        run_free(&r);
    }
}

/* ---- 7. --causal and --plan paper ------------------------------------------ */

static void test_causal(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--causal", "--N", "512");
    expect_exit(&r, 0);
    CHECK(&r, r.err_len == 0, "stderr is not empty");
    CHECK(&r, strstr(r.out, ", causal\n") != NULL, "header does not say causal");
    CHECK(&r, strstr(r.out, "ERROR vs float64") != NULL, "not computed");
    check_closed_form_row(&r, 3);
    run_free(&r);

    RUN(&r, "--causal", "--json", "--N", "300", "--d", "32");
    expect_exit(&r, 0);
    CHECK(&r, json_is_one_object(r.out, r.out_len), "stdout is not one JSON object");
    CHECK(&r, jis_lit(&r, "config.causal", "true"), "config.causal is not true");
    run_free(&r);
}

/* Every section of the report has a note a student can read; --explain
 * expands them; the error note says "largest" only where it is. */
static void test_report_notes(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--N", "1024", "--M", "96K");
    expect_exit(&r, 0);
    CHECK(&r, strstr(r.out, "  note: B_r x B_c: the rows of Q") != NULL, "no note under TILE PLAN");
    CHECK(&r, strstr(r.out, "  note: Elements moved between HBM") != NULL, "no traffic note");
    CHECK(&r, strstr(r.out, "  note: Theta(x) is 'about a constant times x'") != NULL,
          "no note on Theta");
    CHECK(&r, strstr(r.out, "  note: Against attention computed in float64") != NULL,
          "no note under ERROR");
    CHECK(&r, strstr(r.out, "SRAM peak, bytes") != NULL, "SRAM peak's unit is still 'B'");
    CHECK(&r, strstr(r.out, "Theorem 2 of the FlashAttention paper") == NULL,
          "the full notes without --explain");
    /* FA1 keeps its running output in fp32, as the released kernel does:
     * standard attention's error is the largest, and the note says so and
     * why FA1's is not. */
    CHECK(&r, strstr(r.out, "its error the largest") != NULL,
          "the note does not call standard attention's error the largest");
    CHECK(&r, strstr(r.out, "in fp32 (O_acc)") != NULL, "the note misses FA1's fp32 O_acc");
    run_free(&r);
    /* With the paper's intermediates FA1 rounds its running output at every
     * step: its error passes standard attention's, and the note does not
     * call standard attention's the largest. */
    RUN(&r, "--N", "1024", "--M", "96K", "--intermediates", "paper");
    expect_exit(&r, 0);
    CHECK(&r, strstr(r.out, "its error the largest") == NULL,
          "the note calls an error the largest that is not");
    CHECK(&r, strstr(r.out, "at every key block") != NULL, "the note misses FA1's rounding");
    run_free(&r);
    /* A choice that is neither: one line, exit 2. */
    RUN(&r, "--intermediates", "fp32");
    expect_exit(&r, 2);
    CHECK(&r, strstr(r.err, "--intermediates fp32: unknown choice (kernel or paper)") != NULL,
          "no one-line refusal of a bad --intermediates");
    run_free(&r);
    RUN(&r, "--N", "1024", "--M", "96K", "--explain", "--count-only");
    expect_exit(&r, 0);
    check_80_columns(&r);
    CHECK(&r, strstr(r.out, "Theorem 2 of the FlashAttention paper") != NULL,
          "--explain does not expand the notes");
    /* A formula is never broken across lines. */
    CHECK(&r, strstr(r.out, "Theta(N d + N^2) HBM") != NULL &&
              strstr(r.out, "o(N^2 d^2 / M) for") != NULL,
          "--explain breaks a formula across lines");
    run_free(&r);
    RUN(&r, "--N", "1024", "--M", "96K", "--algo", "naive,fa2");
    CHECK(&r, strstr(r.out, "its error the largest here") != NULL,
          "standard attention's largest error not explained");
    run_free(&r);
}

/* The classroom report compares the loop orders on one square tile, the
 * largest of 128, 64, 32, 16 that fits M for all three (found here with the
 * planner directly), and says so; --plan best gives each its own. */
static void test_same_tiles_default(void **state)
{
    (void)state;
    static const struct { const char *N, *d, *M; } cfg[] = {
        { "1024", "64", "96K" }, { "4096", "128", "228K" }, { "512", "32", "16K" } };
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        sim_shape sh = { .N = atoll(cfg[c].N), .d = atoll(cfg[c].d), .dtype = SIM_FP16 };
        sh.M = (uint64_t)atoll(cfg[c].M) * 1024;
        int64_t want = -1;
        static const int64_t tiles[] = { 128, 64, 32, 16 };
        for (int t = 0; t < 4 && want < 0; t++) {
            int all = 1;
            for (int a = 0; a < 3; a++) {
                sim_plan p;
                all &= sim_plan_make((sim_algo)a, &sh, NULL, tiles[t], tiles[t], SIM_PLAN_USER,
                                     &p) == 0 && p.fits;
            }
            if (all)
                want = tiles[t];
        }
        run_res r;
        RUN(&r, "--N", cfg[c].N, "--d", cfg[c].d, "--M", cfg[c].M, "--count-only", "--json");
        expect_exit(&r, 0);
        char path[64];
        for (int k = 0; k < 3; k++) {
            snprintf(path, sizeof path, "runs.%d.plan.Br", k);
            const uint64_t Br = jget_u64(&r, path);
            snprintf(path, sizeof path, "runs.%d.plan.Bc", k);
            const uint64_t Bc = jget_u64(&r, path);
            CHECK(&r, want > 0 && Br == (uint64_t)want && Bc == (uint64_t)want,
                  "N=%s: run %d on %llu x %llu, not the common %lld", cfg[c].N, k,
                  (unsigned long long)Br, (unsigned long long)Bc, (long long)want);
            snprintf(path, sizeof path, "runs.%d.plan.kind", k);
            CHECK(&r, jis_str(&r, path, "same"), "run %d's plan kind is not same", k);
        }
        run_free(&r);
    }
    run_res r;
    RUN(&r, "--N", "1024", "--M", "96K", "--count-only");
    CHECK(&r, strstr(r.out, "tiles: B_r = B_c = 64 for every loop order") != NULL,
          "the header does not say the tiles are shared");
    run_free(&r);
    /* --plan best: each loop order its own (FA2 then differs from FA1). */
    RUN(&r, "--N", "1024", "--M", "96K", "--count-only", "--plan", "best", "--json");
    expect_exit(&r, 0);
    CHECK(&r, jis_str(&r, "runs.1.plan.kind", "best"), "--plan best not taken");
    CHECK(&r, jget_u64(&r, "runs.1.plan.Bc") != jget_u64(&r, "runs.2.plan.Bc"),
          "--plan best gave FA1 and FA2 the same B_c");
    run_free(&r);
    /* The view runs on the report's tiles by default, and says so; --plan
     * same says it too, and the kernel plans are the report's alone. */
    const char *const view_same[][2] = { { "--frames", "1" }, { "--plan", "same" } };
    for (int k = 0; k < 2; k++) {
        RUN(&r, "view", "--N", "1024", "--d", "64", "--M", "96K", "--count-only", "--algo",
            "fa1", view_same[k][0], view_same[k][1]);
        expect_exit(&r, 0);
        CHECK(&r, strstr(r.out, "B_r=B_c=64 as the report's") != NULL,
              "the view does not run on the report's 64 x 64 tiles");
        run_free(&r);
    }
    RUN(&r, "view", "--N", "1024", "--d", "64", "--M", "96K", "--plan", "best",
        "--frames", "1");
    expect_exit(&r, 0);
    CHECK(&r, strstr(r.out, "as the report's") == NULL, "--plan best not taken by the view");
    run_free(&r);
    RUN(&r, "view", "--plan", "kernel");
    expect_exit(&r, 2);
    CHECK(&r, strstr(r.err, "same, best or paper") != NULL, "the view's plans not named");
    run_free(&r);
}

/* Lesson handouts: the worksheet asks every question the key answers, and
 * shows no answer; the key shows each; the Markdown's code blocks close. */
static void test_lesson_handouts(void **state)
{
    (void)state;
    static const char *const names[] = { "online-softmax", "a-common-bug", "io-complexity",
                                         "causal" };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        run_res w, a;
        RUN(&w, "lesson", names[k], "--worksheet");
        RUN(&a, "lesson", names[k], "--answers");
        expect_exit(&w, 0);
        expect_exit(&a, 0);
        int qw = 0, qa = 0, fences = 0;
        for (const char *p = w.out; (p = strstr(p, "**Question ")) != NULL; p++)
            qw++;
        for (const char *p = a.out; (p = strstr(p, "**Question ")) != NULL; p++)
            qa++;
        CHECK(&w, qw > 0 && qw == qa, "%s: %d questions in the worksheet, %d in the key",
              names[k], qw, qa);
        CHECK(&w, strstr(w.out, "**Answer") == NULL && strstr(w.out, "\nAnswer: ") != NULL,
              "%s: the worksheet shows an answer or has no room for one", names[k]);
        for (const char *p = w.out; (p = strstr(p, "```")) != NULL; p += 3)
            fences++;
        CHECK(&w, fences % 2 == 0, "%s: an unclosed code block", names[k]);
        /* After each question, nothing until the next step (or another
         * question): the rest of a step tells the answer. */
        for (const char *p = w.out; (p = strstr(p, "\nAnswer: ")) != NULL; p++) {
            const char *e = strchr(p + 1, '\n');
            CHECK(&w, e != NULL, "%s: the worksheet ends in an answer line", names[k]);
            e += strspn(e, "\n");
            CHECK(&w, !*e || !strncmp(e, "## Step", 7) || !strncmp(e, "**Question", 10) ||
                      !strncmp(e, "---", 3),
                  "%s: the worksheet goes on after a question: %.60s", names[k], e);
        }
        /* The answers of the lessons that measure (their numbers are their
         * own) are nowhere in the worksheet. */
        for (const char *p = a.out; k >= 2 && (p = strstr(p, "**Answer: ")) != NULL; p++) {
            char v[64];
            if (sscanf(p + 10, "%63[^*]", v) == 1 && strlen(v) >= 3)
                CHECK(&w, strstr(w.out, v) == NULL, "%s: the worksheet gives away %s",
                      names[k], v);
        }
        run_free(&w);
        run_free(&a);
    }
    run_res r;
    RUN(&r, "lesson", "causal", "--worksheet", "--answers");
    expect_exit(&r, 2);
    CHECK(&r, strstr(r.err, "one of --script, --worksheet and --answers") != NULL,
          "two handouts at once not refused");
    run_free(&r);
    RUN(&r, "lesson", "--worksheet");
    expect_exit(&r, 2);
    CHECK(&r, strstr(r.err, "--worksheet needs a lesson") != NULL, "no lesson not refused");
    run_free(&r);
}

/* The index of compare's JSON row named name, or -1. */
static int compare_row(const run_res *r, const char *name)
{
    char path[64];
    for (int k = 0; k < 64; k++) {
        snprintf(path, sizeof path, "rows.%d.name", k);
        if (!jhas(r, path))
            return -1;
        if (jis_str(r, path, name))
            return k;
    }
    return -1;
}

/* fasim compare: B is A with the options after "vs" in place of A's; the
 * rows are the two runs' own numbers, the marks fall on what differs. */
static void test_compare(void **state)
{
    (void)state;
    run_res r, a;
    char path[64];
    RUN(&r, "compare", "--N", "512", "--Br", "64", "--Bc", "64", "--algo", "fa1", "--count-only",
        "--json", "vs", "--algo", "fa2");
    expect_exit(&r, 0);
    CHECK(&r, json_is_one_object(r.out, r.out_len), "stdout is not one JSON object");
    CHECK(&r, jis_str(&r, "b", "--N 512 --Br 64 --Bc 64 --count-only --algo fa2"),
          "side B is not A's options with --algo replaced");
    const int tot = compare_row(&r, "total bytes");
    CHECK(&r, tot >= 0, "no total bytes row");
    /* FA2's forward, unmasked, closed form: Q and O once, K and V T_r =
     * 512 / 64 = 8 times, 2 B each; L once at 4 B. */
    const uint64_t Nd2 = 512ull * 64 * 2, fa2 = Nd2 + 2 * 8 * Nd2 + Nd2 + 512ull * 4;
    snprintf(path, sizeof path, "rows.%d.b", tot);
    CHECK(&r, jget_u64(&r, path) == fa2, "fa2's total bytes %llu, closed form %llu",
          (unsigned long long)jget_u64(&r, path), (unsigned long long)fa2);
    /* FA1's is the report's for the same options. */
    RUN(&a, "--N", "512", "--Br", "64", "--Bc", "64", "--algo", "fa1", "--count-only", "--json");
    expect_exit(&a, 0);
    snprintf(path, sizeof path, "rows.%d.a", tot);
    CHECK(&r, jget_u64(&r, path) == jget_u64(&a, "runs.0.hbm.total_bytes"),
          "side A's total is not the report's");
    run_free(&a);
    /* Of the configuration, only the loop order differs. */
    int config_differs = 0;
    for (int k = 0; k < 64; k++) {
        snprintf(path, sizeof path, "rows.%d.section", k);
        if (!jhas(&r, path))
            break;
        if (!jis_str(&r, path, "configuration"))
            continue;
        snprintf(path, sizeof path, "rows.%d.differs", k);
        config_differs += jis_lit(&r, path, "true");
    }
    CHECK(&r, config_differs == 1, "%d configuration rows differ, not 1", config_differs);
    const uint64_t ndiffer = jget_u64(&r, "differ");
    run_free(&r);

    /* The text marks the same rows. */
    RUN(&r, "compare", "--N", "512", "--Br", "64", "--Bc", "64", "--algo", "fa1", "--count-only",
        "vs", "--algo", "fa2");
    expect_exit(&r, 0);
    uint64_t marks = 0;
    for (const char *p = r.out; (p = strstr(p, " *\n")) != NULL; p++)
        marks++;
    CHECK(&r, marks == ndiffer, "%llu rows marked, the JSON says %llu differ",
          (unsigned long long)marks, (unsigned long long)ndiffer);
    check_80_columns(&r);
    run_free(&r);

    /* By default both sides run on one square tile, the largest that fits
     * both (64 x 64 at the default M = 96K). */
    RUN(&r, "compare", "--count-only", "--json", "--algo", "fa1", "vs", "--algo", "fa2");
    expect_exit(&r, 0);
    const int bb = compare_row(&r, "B_r x B_c");
    CHECK(&r, bb >= 0, "no B_r x B_c row");
    snprintf(path, sizeof path, "rows.%d.a", bb);
    CHECK(&r, jis_str(&r, path, "64 x 64"), "side A not on 64 x 64");
    snprintf(path, sizeof path, "rows.%d.b", bb);
    CHECK(&r, jis_str(&r, path, "64 x 64"), "side B not on 64 x 64");
    run_free(&r);

    /* The same options on both sides: nothing differs, and stderr says so,
     * however the same run is written; sides that differ get no warning. */
    RUN(&r, "compare", "--N", "256", "--json", "vs");
    expect_exit(&r, 0);
    CHECK(&r, jget_u64(&r, "differ") == 0, "identical sides differ");
    CHECK(&r, strstr(r.err, "warning: side B is side A") != NULL, "no warning on stderr");
    run_free(&r);
    RUN(&r, "compare", "--N", "256", "--count-only", "--causal", "vs", "--N", "256");
    expect_exit(&r, 0);
    CHECK(&r, strstr(r.err, "warning: side B is side A") != NULL, "no warning on stderr");
    CHECK(&r, strstr(r.out, "B_r x B_c") != NULL, "the comparison did not run");
    run_free(&r);
    RUN(&r, "compare", "--N", "256", "--count-only", "--algo", "fa1", "vs", "--algo", "fa2");
    expect_exit(&r, 0);
    CHECK(&r, r.err_len == 0, "a warning for sides that differ");
    run_free(&r);

    static const struct { const char *args[8]; const char *key; } bad[] = {
        { { "compare", "--N", "256" }, "with 'vs'" },
        { { "compare", "vs", "--N", "256", "vs" }, "'vs' once" },
        { { "compare", "--algo", "all", "vs" }, "one loop order a side: give --algo naive, "
                                                 "fa1, fa2, unfused or fa3" },
        { { "compare", "vs", "--pass", "both" }, "side B: compare takes one pass" },
        { { "compare", "--preset", "gpt2-small", "vs" }, "not --preset" },
        { { "compare", "--algo", "fa2", "vs", "--out", "x.npy" }, "--out is the report's" },
        { { "compare", "vs", "--N", "0" }, "side B: --N" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        run_fasim(&r, bad[k].args);
        expect_exit(&r, 2);
        CHECK(&r, strstr(r.err, bad[k].key) != NULL, "case %zu: stderr lacks '%s'", k,
              bad[k].key);
        run_free(&r);
    }
}

/* --plan kernel: the released kernels' tiles and warps, the accumulators in
 * registers, at the head dims they serve on the A100 and the H100 (figures
 * from their launch code, as test_kernel_plan reads it); the refusals are
 * one line each, exit 2. */
static void test_plan_kernel(void **state)
{
    (void)state;
    run_res r;
    static const struct { const char *gpu; const char *d; int64_t Br, Bc, warps; } fa2[] = {
        { "a100", "32", 128, 128, 4 },  { "a100", "64", 128, 128, 4 },
        { "a100", "96", 128, 64, 4 },   { "a100", "128", 128, 64, 4 },
        { "a100", "192", 128, 64, 8 },  { "a100", "256", 128, 64, 8 },
        { "h100", "32", 128, 128, 4 },  { "h100", "64", 128, 128, 4 },
        { "h100", "96", 128, 64, 4 },   { "h100", "128", 128, 64, 4 },
        { "h100", "192", 128, 64, 8 },  { "h100", "256", 64, 64, 4 },
    };
    for (size_t k = 0; k < sizeof fa2 / sizeof fa2[0]; k++) {
        RUN(&r, "--plan", "kernel", "--gpu", fa2[k].gpu, "--d", fa2[k].d, "--N", "2048",
            "--algo", "fa2", "--count-only", "--json");
        expect_exit(&r, 0);
        CHECK(&r, jis_str(&r, "runs.0.plan.kind", "kernel"), "kind is not kernel");
        CHECK(&r, jget_u64(&r, "runs.0.plan.Br") == (uint64_t)fa2[k].Br, "B_r");
        CHECK(&r, jget_u64(&r, "runs.0.plan.Bc") == (uint64_t)fa2[k].Bc, "B_c");
        CHECK(&r, jget_u64(&r, "runs.0.plan.warps") == (uint64_t)fa2[k].warps, "warps");
        /* min(255 x 32 x warps, 65,536) registers of 4 B */
        const uint64_t regs = 255u * 32u * (uint64_t)fa2[k].warps;
        CHECK(&r, jget_u64(&r, "runs.0.plan.reg_limit_bytes") == (regs < 65536 ? regs : 65536) * 4,
              "register budget");
        CHECK(&r, jget_u64(&r, "runs.0.plan.reg_peak_bytes") <=
                  jget_u64(&r, "runs.0.plan.reg_limit_bytes"), "registers over the budget");
        CHECK(&r, jget_u64(&r, "runs.0.plan.sram_peak_bytes") <= jget_u64(&r, "config.M_bytes"),
              "shared memory over M");
        CHECK(&r, jis_str(&r, "runs.0.plan.buffers.0.level", "sram"), "Q_i not in SRAM");
        CHECK(&r, jis_str(&r, "runs.0.plan.buffers.3.level", "registers"), "S_ij not in registers");
        run_free(&r);
    }
    /* The text: the launch choice and its source, the registers, [reg]. */
    RUN(&r, "--plan", "kernel", "--gpu", "a100", "--d", "128", "--count-only", "--pass", "both");
    expect_exit(&r, 0);
    CHECK(&r, strstr(r.out, "fa2: 128 x 64, 4 warps: flash_fwd_launch_template.h") != NULL,
          "no forward launch choice");
    CHECK(&r, strstr(r.out, "fa2 backward: 64 x 128, 8 warps: flash_bwd_launch_template.h") != NULL,
          "no backward launch choice");
    CHECK(&r, strstr(r.out, "fa1: 16 x 128, 4 warps: fmha_fwd_hdim128.cu") != NULL,
          "no FA1 launch choice");
    CHECK(&r, strstr(r.out, "S_ij 128x64 = 32,768 [reg]") != NULL, "S_ij not marked");
    CHECK(&r, strstr(r.out, "registers / budget") != NULL, "no register row");
    check_80_columns(&r);
    run_free(&r);

    static const struct { const char *args[14]; const char *key; } bad[] = {
        { { "--plan", "nope" }, "same, best, paper or kernel" },
        { { "--plan", "kernel", "--d", "80" }, "serve d = 32, 64, 96, 128, 192 and 256, not d = 80" },
        { { "--plan", "kernel", "--algo", "naive" }, "no released kernel of naive" },
        { { "--plan", "kernel", "--gpu", "a100", "--d", "128", "--algo", "fa2", "--Br", "256",
            "--Bc", "128" }, "register buffer S_ij (256x128 fp32, 131,072 B) leaves the "
                             "registers 133,632 B over" },
        { { "--plan", "kernel", "--d", "256", "--algo", "fa2" }, "32,768 B over M = 98,304 B" },
        { { "gpu", "--plan", "kernel" }, "--plan kernel is the report's" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        run_fasim(&r, bad[k].args);
        expect_exit(&r, 2);
        CHECK(&r, strstr(r.err, bad[k].key) != NULL, "case %zu: stderr lacks '%s'", k,
              bad[k].key);
        CHECK(&r, strchr(r.err, '\n') == r.err + r.err_len - 1, "case %zu: not one line", k);
        run_free(&r);
    }
}

/* The classroom's backward commands show the gradient check at the
 * defaults (N = 1024, d = 64): auto mode computes them. */
static void test_bwd_default_computes(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--pass", "both");
    expect_exit(&r, 0);
    CHECK(&r, strstr(r.out, "compute mode") != NULL, "--pass both at the defaults counts only");
    CHECK(&r, strstr(r.out, "max |dQ - dQ_ref|") != NULL, "no gradient check shown");
    CHECK(&r, strstr(r.out, "max |dV - dV_ref|") != NULL, "no dV check shown");
    run_free(&r);
    /* A preset's layer stays count-only: the budget is seconds, not minutes. */
    RUN(&r, "--preset", "gpt2-small", "--pass", "fwd");
    expect_exit(&r, 0);
    CHECK(&r, strstr(r.out, "count-only mode") != NULL, "a model layer computed by default");
    run_free(&r);
}

/* The theorems are about N_q = N_k: a decoding shape gets their formulas for
 * reference, no claim that they speak and no measured / Theta. */
static void test_bounds_decoding(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--Nq", "1", "--Nk", "4096", "--d", "64", "--count-only");
    expect_exit(&r, 0);
    CHECK(&r, strstr(r.out, "they do not speak about N_q = 1") != NULL,
          "the decoding shape is not said to be outside the theorems");
    CHECK(&r, strstr(r.out, "the theorems speak about") == NULL,
          "a decoding shape is said to be one the theorems speak about");
    CHECK(&r, strstr(r.out, "measured / Theta ") == NULL, "measured / Theta shown for decoding");
    run_free(&r);

    RUN(&r, "--Nq", "1", "--Nk", "4096", "--d", "64", "--count-only", "--json");
    expect_exit(&r, 0);
    CHECK(&r, jis_lit(&r, "bounds.theorems_apply", "false"), "theorems_apply is not false");
    run_free(&r);

    /* N_q = N_k in the regime: they speak, and the ratio is there. */
    RUN(&r, "--N", "4096", "--d", "64", "--M", "96K", "--count-only", "--json");
    expect_exit(&r, 0);
    CHECK(&r, jis_lit(&r, "bounds.theorems_apply", "true"), "theorems_apply is not true");
    CHECK(&r, jis_lit(&r, "bounds.in_regime", "true"), "in_regime is not true");
    run_free(&r);
    RUN(&r, "--N", "4096", "--d", "64", "--M", "96K", "--count-only");
    CHECK(&r, strstr(r.out, "the theorems speak about this configuration") != NULL,
          "the square shape is not said to be in the theorems' regime");
    CHECK(&r, strstr(r.out, "measured / Theta ") != NULL, "no measured / Theta");
    run_free(&r);
}

static void test_plan_paper(void **state)
{
    (void)state;
    run_res r;
    /* Default N, d, M: the paper plans of FA1 and FA2 exceed M. */
    RUN(&r, "--plan", "paper");
    expect_exit(&r, 0);
    CHECK(&r, strstr(r.out, "paper") != NULL, "plan kind not shown");
    CHECK(&r, strstr(r.out, "OVER") != NULL, "SRAM peak / M does not say OVER");
    CHECK(&r, strstr(r.out, "note: fa1's paper plan exceeds M") != NULL, "no note for fa1");
    CHECK(&r, strstr(r.out, "note: fa2's paper plan exceeds M") != NULL, "no note for fa2");
    CHECK(&r, strstr(r.err, "fasim: warning: the paper plan of fa1") != NULL,
          "no warning on stderr for fa1");
    CHECK(&r, strstr(r.err, "fasim: warning: the paper plan of fa2") != NULL,
          "no warning on stderr for fa2");
    CHECK(&r, strstr(r.err, "more than M") != NULL, "warning does not say 'more than M'");
    run_free(&r);

    /* JSON: fits false, the same warnings. */
    RUN(&r, "--plan", "paper", "--json", "--count-only", "--algo", "fa2");
    expect_exit(&r, 0);
    CHECK(&r, json_is_one_object(r.out, r.out_len), "stdout is not one JSON object");
    CHECK(&r, jis_str(&r, "runs.0.plan.kind", "paper"), "plan kind is not paper");
    CHECK(&r, jis_lit(&r, "runs.0.plan.fits", "false"), "plan.fits is not false");
    CHECK(&r, jget_u64(&r, "runs.0.plan.sram_peak_bytes") > 96 * 1024, "peak not over M");
    CHECK(&r, strstr(r.err, "warning") && count_char(r.err, r.err_len, '\n') == 1,
          "expected one warning line");
    run_free(&r);

    /* A large M: the paper plan fits and nothing is warned. */
    RUN(&r, "--plan", "paper", "--M", "1M", "--count-only");
    expect_exit(&r, 0);
    CHECK(&r, r.err_len == 0, "stderr is not empty although the plan fits");
    CHECK(&r, strstr(r.out, "OVER") == NULL && strstr(r.out, "exceeds M") == NULL,
          "a fitting plan reported as over M");
    run_free(&r);
}

/* ---- regressions ------------------------------------------------------------ */

/* fasim --N 4294967296 --count-only: the counts overflow 64 bits, but the
 * message says M is too small and that the smallest plan needs 386 B. */
static void test_bug_overflow_message(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--N", "4294967296", "--count-only");
    expect_exit(&r, 2);
    expect_one_line_error(&r, 0);
    CHECK(&r, strstr(r.err, "overflow") || strstr(r.err, "too large"),
          "the message does not say the counts overflow");
    run_free(&r);
}

/* fasim --N 1G --Br 16 --count-only: "needs 4256 B of SRAM but M is 98304 B
 * (18446744073709457568 B over)". */
static void test_bug_misfit_wraparound(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--N", "1G", "--Br", "16", "--count-only");
    expect_exit(&r, 2);
    expect_one_line_error(&r, 1);
    CHECK(&r, strstr(r.err, "18446744") == NULL && strstr(r.err, "18,446,744") == NULL,
          "a negative number wrapped around");
    CHECK(&r, strstr(r.err, "overflow") || strstr(r.err, "too large") ||
              strstr(r.err, "tile steps"), "the message does not name the real problem");
    run_free(&r);
}

/* fasim --N 100 --d 16 --M 16K: outside the regime d <= M <= N d the BOUNDS
 * heading ("... d <= M <= Nd: NO, outside the regime)") is 91 columns. */
static void test_bug_bounds_line_width(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--N", "100", "--d", "16", "--M", "16K", "--count-only");
    expect_exit(&r, 0);
    check_80_columns(&r);
    run_free(&r);
}

/* fasim --N 1024 --M 96K: a row label longer than the label column shifts
 * that row's cells ("closed form, elements" in HBM TRAFFIC). */
static void test_bug_table_alignment(void **state)
{
    (void)state;
    run_res r;
    RUN(&r, "--N", "1024", "--M", "96K", "--count-only");
    expect_exit(&r, 0);
    check_table_aligned(&r, "TILE PLAN");
    check_table_aligned(&r, "HBM TRAFFIC");
    run_free(&r);
}

/* ---- main ------------------------------------------------------------------ */

static int group_setup(void **state)
{
    make_bad_files(state);
    char path[512];
    mkdir(tu_path(path, sizeof path, "a_dir"), 0700);
    return 0;
}

static const struct CMUnitTest FIXED[] = {
    cmocka_unit_test(test_classroom_text),
    cmocka_unit_test(test_json_checker_self),
    cmocka_unit_test(test_json_compute),
    cmocka_unit_test(test_json_count_only),
    cmocka_unit_test(test_json_auto_count_note),
    cmocka_unit_test(test_out_seeded),
    cmocka_unit_test(test_paged_report),
    cmocka_unit_test(test_intermediates_report),
    cmocka_unit_test(test_presets),
    cmocka_unit_test(test_out_from_npy),
    cmocka_unit_test(test_npy_4d),
    cmocka_unit_test(test_json_rmse_fp8),
    cmocka_unit_test(test_out_unwritable),
    cmocka_unit_test(test_gpu_model_options),
    cmocka_unit_test(test_deterministic),
    cmocka_unit_test(test_misfit_hint_runs),
    cmocka_unit_test(test_compute_memory_fast),
    cmocka_unit_test(test_help_version),
    cmocka_unit_test(test_causal),
    cmocka_unit_test(test_bounds_decoding),
    cmocka_unit_test(test_bwd_default_computes),
    cmocka_unit_test(test_compare),
    cmocka_unit_test(test_lesson_handouts),
    cmocka_unit_test(test_same_tiles_default),
    cmocka_unit_test(test_report_notes),
    cmocka_unit_test(test_plan_paper),
    cmocka_unit_test(test_plan_kernel),
    cmocka_unit_test(test_softmax_forms),
    cmocka_unit_test(test_bug_overflow_message),
    cmocka_unit_test(test_bug_misfit_wraparound),
    cmocka_unit_test(test_bug_bounds_line_width),
    cmocka_unit_test(test_bug_table_alignment),
};
#define NFIXED (sizeof FIXED / sizeof FIXED[0])

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH-TO-FASIM\n", argv[0]);
        return 77;
    }
    g_fasim = argv[1];
    if (access(g_fasim, X_OK) != 0) {
        fprintf(stderr, "test_cli: %s is not executable: %s\n", g_fasim, strerror(errno));
        return 1;
    }
    struct CMUnitTest tests[NFIXED + NBAD];
    for (size_t k = 0; k < NFIXED; k++)
        tests[k] = FIXED[k];
    for (size_t k = 0; k < NBAD; k++) {
        struct CMUnitTest t = { BAD[k].name, test_bad, NULL, NULL, &BAD[k] };
        tests[NFIXED + k] = t;
    }
    return cmocka_run_group_tests(tests, group_setup, remove_tmpdir);
}
