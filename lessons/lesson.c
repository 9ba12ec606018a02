/* lesson.c — placeholder engine (replaced by the real one). */
#include "lesson.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct lesson {
    int unused;
};

const lesson_def *lesson_find(const char *name) { (void)name; return NULL; }
void lesson_print_list(FILE *out) { (void)out; }
int lesson_run(const lesson_def *def, const lesson_run_opts *opts) { (void)def; (void)opts; return 1; }
const double *lesson_opt_vector(lesson *L, const char *n, const char *d, int *k) { (void)L; (void)n; (void)d; *k = 0; return NULL; }
int64_t lesson_opt_int(lesson *L, const char *n, int64_t d, int64_t lo, int64_t hi) { (void)L; (void)n; (void)lo; (void)hi; return d; }
double lesson_opt_double(lesson *L, const char *n, double d, double lo, double hi) { (void)L; (void)n; (void)lo; (void)hi; return d; }
uint64_t lesson_opt_size(lesson *L, const char *n, const char *d) { (void)L; (void)n; (void)d; return 0; }
const char *lesson_opt_string(lesson *L, const char *n, const char *d) { (void)L; (void)n; return d; }
int lesson_opt_flag(lesson *L, const char *n) { (void)L; (void)n; return 0; }
void lesson_step(lesson *L, const char *t) { (void)L; (void)t; }
void lesson_say(lesson *L, const char *fmt, ...) { (void)L; (void)fmt; }
void lesson_print(lesson *L, const char *fmt, ...) { (void)L; (void)fmt; }
void lesson_show_vector(lesson *L, const char *l, const double *x, int n, int g) { (void)L; (void)l; (void)x; (void)n; (void)g; }
void lesson_show_vector_f(lesson *L, const char *l, const float *x, int n, int g) { (void)L; (void)l; (void)x; (void)n; (void)g; }
void lesson_show_tile(lesson *L, const char *l, const float *x, int r, int c, int g) { (void)L; (void)l; (void)x; (void)r; (void)c; (void)g; }
int lesson_ask(lesson *L, const char *q, double a, double t) { (void)L; (void)q; (void)a; (void)t; return 1; }
void *lesson_alloc(lesson *L, size_t b) { (void)L; (void)b; return NULL; }
void lesson_fail(lesson *L, const char *fmt, ...) { (void)L; (void)fmt; exit(2); }
int lesson_interactive(const lesson *L) { (void)L; return 0; }
