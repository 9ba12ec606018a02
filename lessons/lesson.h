/*
 * lesson.h — the small API a lesson is written in.
 *
 * A lesson is one C file with one function that reads like the lesson:
 *
 *     static void run(lesson *L)
 *     {
 *         const double *x = lesson_opt_vector(L, "x", "1,3,2,5,0,4", &n);
 *         int block = (int)lesson_opt_int(L, "block", 2, 1, 1 << 20);
 *         lesson_step(L, "The running maximum");
 *         lesson_say(L, "Block %d holds ...", ...);
 *         lesson_ask(L, "What is m after this block?", m_new, 0.0);
 *         ...
 *     }
 *
 * Every number a lesson prints is computed while it runs, by reference/ or
 * sim/, from the learner's inputs.
 *
 * The engine (lesson.c) owns everything else:
 *   - options: --NAME VALUE pairs after the lesson name; a lesson reads them
 *     with lesson_opt_*; unknown options, bad values and NaN are refused
 *     with a clear message (exit 2) before the first step is shown;
 *   - steps: in interactive mode each lesson_step() waits for a key: Enter
 *     or space goes on, b goes back one step, q quits. Going back re-runs
 *     the lesson from the start with output suppressed up to the previous
 *     step (lessons are deterministic functions of their inputs), so lesson
 *     code needs no undo logic. The jump back uses longjmp out of
 *     lesson_step / lesson_ask, so a lesson must not hold resources (malloc)
 *     across a step: use lesson_alloc, which the engine frees;
 *   - questions: lesson_ask() prints the question, reads the learner's
 *     number or small expression (a line: "0.14", "exp(-2)", "1/8"), then
 *     reveals the answer and says how close the guess was. An empty line
 *     skips to the answer. With --script no input is read: question and
 *     answer are printed together. At the end the learner reads how many
 *     questions were right on the first try;
 *   - terminals: with a terminal on stdin, single key presses are read
 *     (raw mode, restored on every exit path and on SIGINT/SIGTERM); with a
 *     pipe, lines are read ("" or " " next, "b" back, "q" quit, a number
 *     answers a question), so tests can drive a lesson through stdin.
 *   - output: text is wrapped to 78 columns; everything goes to stdout,
 *     problems to stderr.
 */
#ifndef FASIM_LESSON_H
#define FASIM_LESSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"
#include "sim_claims.h"

typedef struct lesson lesson;   /* the engine's state; opaque to lessons */

typedef struct {
    const char *name;            /* "online-softmax": the command-line name */
    int number;                  /* position in the list, 1-based */
    const char *title;           /* "Online softmax, one block at a time" */
    const char *level;           /* "beginner", "intermediate" or "advanced" */
    int minutes;                 /* about how long it takes */
    const char *summary;         /* one line for the list */
    const char *options;         /* help text of its options, e.g.
                                    "--x LIST  the vector (default 1,3,2,5,0,4)\n..." */
    void (*run)(lesson *L);
} lesson_def;

/* ---- the catalogue ------------------------------------------------------- */

/* One definition per lesson file (lessons/lesson_<topic>.c), listed in order
 * by lesson_catalog.c. */
extern const lesson_def lesson_softmax_overflow;   /* 1 */
extern const lesson_def lesson_online_softmax;     /* 2 */
extern const lesson_def lesson_merge;              /* 3 */
extern const lesson_def lesson_online_attention;   /* 4 */
extern const lesson_def lesson_a_common_bug;       /* 5 */
extern const lesson_def lesson_tiling_budget;      /* 6 */
extern const lesson_def lesson_io_complexity;      /* 7 */
extern const lesson_def lesson_loop_order;         /* 8 */
extern const lesson_def lesson_causal;             /* 9 */
extern const lesson_def lesson_fp8_outliers;       /* 10 */
extern const lesson_def lesson_gpu_time;           /* 11 */
extern const lesson_def lesson_l2_bytes;           /* 12 */
extern const lesson_def lesson_block_sparse;       /* 13 */
extern const lesson_def lesson_ring;               /* 14 */
extern const lesson_def lesson_atomic_dq;          /* 15 */

/* All lessons, in order; *count receives how many. */
#define LESSON_MAX_VECTOR 4096     /* entries of a list option: lessons show vectors, not data sets */

const lesson_def *const *lesson_all(int *count);

/* Find by name or by number ("2"); NULL if none. */
const lesson_def *lesson_find(const char *name_or_number);

/* Print the list (number, name, level, minutes, summary), one per line. */
void lesson_print_list(FILE *out);

/* ---- running -------------------------------------------------------------- */

/* A handout: the lesson at once, as Markdown, for paper or a shared page. */
typedef enum {
    LESSON_HANDOUT_NONE,
    LESSON_HANDOUT_WORKSHEET,    /* --worksheet: the steps up to each question and the
                                    question with room to answer; what a step says
                                    after its question (which gives the answer) is
                                    left out, and so are the answers */
    LESSON_HANDOUT_ANSWERS       /* --answers: the key: every step whole, each
                                    question with its answer, the answers also taken
                                    as right and the common mistakes, each with why */
} lesson_handout;

typedef struct {
    int script;                  /* --script: all steps, no prompts, answers shown */
    FILE *in, *out;              /* defaults: stdin, stdout */
    int argc;                    /* the lesson's own options (after its name) */
    char **argv;
    lesson_handout handout;      /* a handout instead (implies no prompts) */
} lesson_run_opts;

/* Run a lesson. Returns 0 when it finished or the learner quit, 2 for bad
 * options (message on stderr), 1 for other failures. */
int lesson_run(const lesson_def *def, const lesson_run_opts *opts);

/* ---- what a lesson calls -------------------------------------------------- */

/* Options. Each returns the value given with --NAME, or the default. A bad
 * value ends the lesson with exit status 2 and a message naming the option.
 * lesson_opt_vector parses a comma list of finite numbers ("1,3,2.5,-1e3");
 * the array belongs to the engine. */
const double *lesson_opt_vector(lesson *L, const char *name, const char *def, int *n);
int64_t lesson_opt_int(lesson *L, const char *name, int64_t def, int64_t lo, int64_t hi);
double lesson_opt_double(lesson *L, const char *name, double def, double lo, double hi);
uint64_t lesson_opt_size(lesson *L, const char *name, const char *def);   /* "96K" */
const char *lesson_opt_string(lesson *L, const char *name, const char *def);
int lesson_opt_flag(lesson *L, const char *name);                          /* --NAME */

/* A step boundary: prints "Step k of n: title" (n is known after the first
 * complete run; "Step k" before) and, interactively, waits for a key. */
void lesson_step(lesson *L, const char *title);

/* Text, printf-style, wrapped to 78 columns; a blank line follows. */
void lesson_say(lesson *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Text printed as is (tables, aligned numbers), no wrapping. */
void lesson_print(lesson *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A labelled vector or tile, with %.*g precision `digits` (0 = 6). */
void lesson_show_vector(lesson *L, const char *label, const double *x, int n, int digits);
void lesson_show_vector_f(lesson *L, const char *label, const float *x, int n, int digits);
void lesson_show_tile(lesson *L, const char *label, const float *x, int rows, int cols,
                      int digits);

/* Ask for a number, then reveal `answer`. The learner is "right" when
 * |guess - answer| <= tol (tol 0: within 0.5% or 1e-9), or when the guess,
 * typed with two significant digits or more, is the answer rounded to the
 * decimals typed (0.14 for 0.1353). Returns 1 right, 0 wrong or skipped
 * (script mode returns 1). */
int lesson_ask(lesson *L, const char *question, double answer, double tol);

/* lesson_ask with the question built printf-style (tolerance 0: the default). */
int lesson_askf(lesson *L, double answer, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* An answer a learner is likely to give that is not the exact one, and what
 * it means. right = 1: the idealised answer of the concept asked about
 * (4 when N doubles and the N^2 terms rule): it counts as right, and the
 * learner then reads the exact value and why the two differ. right = 0: a
 * common mistake (exp(m_new - m_old) for alpha): wrong, with its diagnosis.
 * A guess is "this answer" when it is within 0.5% of value (equal to it
 * for a discrete question). */
typedef struct {
    double value;
    int right;
    const char *why;             /* one or two sentences, shown after the verdict */
} lesson_known;

#define LESSON_MAX_KNOWN 4

/* A question's answer and how a guess is judged. The exact value is what
 * script mode shows and what a skipped question reveals. */
typedef struct {
    double answer;               /* the exact value */
    double tol;                  /* as lesson_ask's; unused when discrete */
    int discrete;                /* a count, a size in bytes, an index: right only
                                    when equal, and a miss is not a percentage */
    lesson_known known[LESSON_MAX_KNOWN];   /* the first with why == NULL ends it */
} lesson_question;

/* The diagnoses of the mistakes every lesson meets, for lesson_known.why. */
#define LESSON_WHY_FLIPPED_SIGN "You flipped the sign: that is exp(new maximum - old " \
    "maximum). The factor is exp(old - new), and the new maximum is never below the old " \
    "one, so the exponent is never positive and the factor never above 1."
#define LESSON_WHY_ELEMENTS "That counts elements; the question asks for bytes, so " \
    "each element counts as many bytes as its type takes."
#define LESSON_WHY_BYTES "That counts bytes; the question asks for elements, so " \
    "divide by the bytes an element takes."

/* lesson_ask judged as q says, the question built printf-style. */
int lesson_ask_q(lesson *L, const lesson_question *q, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* n with thousands separators ("1,234,567"), in one of 16 rotating buffers
 * owned by the engine: valid until 16 more calls, enough for one printf. */
const char *lesson_num(uint64_t n);

/* Scratch memory that lives until the lesson ends (survives going back). */
void *lesson_alloc(lesson *L, size_t bytes);

/* End the lesson with a message on stderr and exit status 2 (bad input that
 * only the lesson can judge, e.g. a block size larger than the vector). */
void lesson_fail(lesson *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A picture of a run: prints the `fasim view` command that steps through
 * algo on this shape and these block sizes (0: the best plan), and, on a
 * terminal, lets the next key prompt take v, which opens that view here
 * and comes back to the lesson when it quits. */
void lesson_view(lesson *L, sim_algo algo, const sim_shape *sh, int64_t Br, int64_t Bc);

/* The GPU preset called name (--gpu), or the lesson ends naming the option
 * and the presets there are. */
const sim_gpu *lesson_gpu(lesson *L, const char *name);

/* One pass of algo on GPU g through the GPU model (sim_claims_gpu_pass: the
 * released kernel's plan, M = g's shared memory per block; o NULL: the
 * preset's L2); the plan to *p when p is not NULL. A run the model refuses
 * ends the lesson with its message, and so does a problem of more than
 * LESSON_GPU_MAX_PAIRS blocks of 64 x 64 scores over all heads (B H (N/64)^2),
 * which would take the model more than a few seconds. */
#define LESSON_GPU_MAX_PAIRS (1 << 21)
void lesson_gpu_model(lesson *L, const sim_gpu *g, sim_algo algo, sim_pass pass,
                      const sim_shape *sh, const sim_gm_opts *o, sim_plan *p,
                      sim_gm_result *r);

/* Whether output is going to a terminal (a lesson may then open a view). */
int lesson_interactive(const lesson *L);

#endif /* FASIM_LESSON_H */
