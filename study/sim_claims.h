/*
 * sim_claims.h — checking numeric claims: the two source articles' (built in)
 * and a user's own (a small line format).
 *
 * Every verdict is computed when the check runs, from the simulator, the
 * closed forms, the sweeps' fits or the hardware presets; nothing is stored
 * as an answer. A built-in claim is data (what the document says, and the
 * inputs of its check) plus a check function, so changing an input changes
 * the verdict (the tests do exactly that).
 *
 * The claims-file format (docs/sweeps.md has the full description):
 *
 *   # comment
 *   QUANTITY CMP VALUE [within P%] [at KEY=VALUE ...]
 *
 *   QUANTITY  ALGO METRIC        fa2 hbm_bytes
 *             ALGO/ALGO METRIC   fa2/naive hbm_bytes  (a ratio)
 *             TENSOR size|elems  S size               (a tensor's size in HBM)
 *   ALGO      naive (or standard), fa1, fa2
 *   METRIC    hbm_bytes hbm_elems read_bytes write_bytes steps sram_bytes,
 *             or T.read_elems T.write_elems T.read_bytes T.write_bytes for a
 *             tensor T of Q K V O S P m l L
 *   CMP       < <= > >= = (exact; also ==) ~ (within P%, 5% unless given)
 *   VALUE     a number (1024, 0.1, 1e9) with an optional unit: K M G T or
 *             KiB MiB GiB TiB (powers of 1024), KB MB GB TB (powers of 1000),
 *             B, or % (hundredths)
 *   KEY       N d M dtype causal Br Bc plan gpu; N, Br, Bc, M take K/M/G
 *             suffixes (1024s), M also KiB/MiB and B; dtype fp16|bf16|fp32;
 *             causal alone or causal=yes|no; plan best|paper; gpu a100|h100|h200
 *             (sets M unless M is given). Unset keys take the report's
 *             defaults: N = 1024, d = 64, M = 96K, fp16, not causal, best plan.
 */
#ifndef FASIM_SIM_CLAIMS_H
#define FASIM_SIM_CLAIMS_H

#include <stdint.h>
#include <stdio.h>

#include "sim.h"
#include "sim_gpu_model.h"
#include "sim_json.h"
#include "sim_presets.h"
#include "sim_sweep.h"

typedef enum {
    SIM_VERDICT_HOLDS,
    SIM_VERDICT_WRONG,
    SIM_VERDICT_HOLDS_IF,        /* holds only under a condition, stated first in why */
    SIM_VERDICT_UNCHECKABLE      /* a simulator cannot check it */
} sim_verdict;

/* "holds", "wrong", "holds only if", "not checkable here". */
const char *sim_verdict_name(sim_verdict v);

typedef struct {
    sim_verdict verdict;
    char config[320];            /* the configuration, in words */
    char measured[480];          /* what fasim measures or computes */
    char why[480];               /* one line; for HOLDS_IF it starts with the condition */
    int simulated;               /* 1 when a count came from running the simulator */
    int modelled;                /* 1 when `measured` is the GPU model's prediction, no
                                    measurement: printed as "modelled:" */
} sim_claim_outcome;

/* ---- built-in claims -------------------------------------------------------- */

/* The inputs a check reads; each built-in says which it uses. */
typedef struct {
    sim_shape sh;                /* the configuration (the base of any sweep) */
    sim_algo algo;               /* the loop order the claim is about */
    double claimed;              /* the document's number (unit in the claim's text) */
    double claimed2;             /* a second number, where the claim gives two */
    double tol;                  /* relative tolerance of "equal" / "about" */
    double expo[SIM_PARAM_BR];           /* claimed growth exponents in N, d, M
                                            (NAN: none) */
    int64_t range[SIM_PARAM_BR][2];      /* sweep ranges (x2) for those exponents */
    int64_t B;                   /* a block size, where the claim names one */
    int count;                   /* a small count (warps), where the claim names one */
    const char *gpu;             /* a preset name, for hardware claims */
} sim_claim_inputs;

/* The two articles fasim grew from (docs/sources.md), named by what they
 * are: neither gives an author, and both are in Chinese. The lessons cite
 * them by these names too. */
#define SIM_ARTICLE_A "a first-principles derivation of FlashAttention"
#define SIM_ARTICLE_B "a popular introduction to FlashAttention"

typedef struct sim_builtin_claim sim_builtin_claim;
struct sim_builtin_claim {
    const char *id;              /* stable short name, e.g. "s-size-000" */
    const char *source;          /* the article and its section, in words */
    int quote;                   /* the quote of docs/sources.md that says it */
    int seed_row;                /* row of docs/sources.md's errors, 0 if none */
    const char *claim;           /* what the document says, in English */
    sim_claim_inputs in;
    /* Computes the verdict from c->in. Returns SIM_OK, or an error status
     * with err set (the check itself could not run). */
    int (*check)(const sim_builtin_claim *c, sim_engine engine, sim_claim_outcome *out,
                 char *err, size_t errlen);
};

/* The built-in claims, in the order they are printed; *n their count. */
const sim_builtin_claim *sim_builtin_claims(int *n);

/* Check one (a copy with changed inputs works the same). */
int sim_builtin_check(const sim_builtin_claim *c, sim_engine engine, sim_claim_outcome *out,
                      char *err, size_t errlen);

/* ---- user claims -------------------------------------------------------------- */

typedef enum {
    SIM_MET_HBM_BYTES, SIM_MET_HBM_ELEMS, SIM_MET_READ_BYTES, SIM_MET_WRITE_BYTES,
    SIM_MET_STEPS, SIM_MET_SRAM_BYTES,
    SIM_MET_T_READ_ELEMS, SIM_MET_T_WRITE_ELEMS, SIM_MET_T_READ_BYTES, SIM_MET_T_WRITE_BYTES,
    SIM_MET_SIZE_BYTES, SIM_MET_SIZE_ELEMS
} sim_metric;

typedef enum { SIM_CMP_LT, SIM_CMP_LE, SIM_CMP_GT, SIM_CMP_GE, SIM_CMP_EQ, SIM_CMP_APPROX }
    sim_cmp;

typedef enum { SIM_QTY_ALGO, SIM_QTY_RATIO, SIM_QTY_TENSOR } sim_qty_kind;

typedef struct {
    int line;                    /* 1-based line of the file */
    char text[256];              /* the claim as written (trimmed, maybe cut) */
    sim_qty_kind kind;
    sim_algo algo, den;          /* ALGO, or ALGO/den for a ratio */
    sim_tensor tensor;           /* TENSOR size, or T.read_elems, ... */
    sim_metric metric;
    sim_cmp cmp;
    double value;
    double tol;                  /* relative, for ~ */
    sim_shape sh;
    sim_plan_kind plan_kind;     /* AUTO, PAPER or USER */
    int64_t Br, Bc;
    const sim_gpu *gpu;          /* from gpu=, or NULL */
} sim_user_claim;

typedef struct {
    int n;
    sim_user_claim *items;       /* owned */
} sim_claim_list;

/* Parse a whole claims file held in text (NUL-terminated). name labels the
 * messages. Returns the number of malformed lines (0: all parsed, *out
 * filled, release with sim_claim_list_free); for each of the first ten err
 * receives "name:LINE:COL: message", the line, and a caret under the column,
 * and *out is left empty. A file of more than SIM_MAX_CLAIMS claims returns
 * 1 with "name:LINE: more than ... claims" (LINE the first claim past it).
 * -1 (with err) when out of memory. */
int sim_claims_parse(const char *name, const char *text, sim_claim_list *out, char *err,
                     size_t errlen);
void sim_claim_list_free(sim_claim_list *l);

/* Parse one line (no newline). Returns 1 with *out set, 0 for a blank or
 * comment line, -1 with *col (1-based) and a message in err. */
int sim_claim_parse_line(const char *line, sim_user_claim *out, int *col, char *err,
                         size_t errlen);

/* Measure the claim's quantity and compare. Returns SIM_OK with *out set, or
 * SIM_EUSAGE / SIM_EFAIL with err (e.g. no plan fits that configuration). */
int sim_user_claim_check(const sim_user_claim *c, sim_engine engine, sim_claim_outcome *out,
                         char *err, size_t errlen);

/* The same with a tile-step limit on each simulated run (0 =
 * SIM_DEFAULT_MAX_STEPS), as sim_measure takes it. */
int sim_user_claim_check_within(const sim_user_claim *c, sim_engine engine, uint64_t max_steps,
                                sim_claim_outcome *out, char *err, size_t errlen);

/* The tile steps that checking every claim of l under engine would
 * simulate, from the plans and closed forms (exact: the simulator's steps
 * equal them), before anything runs: each loop order a claim measures,
 * when engine is SIM, or AUTO and that run is at most SIM_ENGINE_AUTO_STEPS;
 * closed forms cost none, and a claim that cannot be planned adds nothing
 * (its check says why). Saturates at UINT64_MAX. This is the work a claims
 * file is bounded by (the caller compares it with --max-steps). */
uint64_t sim_claims_sim_steps(const sim_claim_list *l, sim_engine engine);

/* ---- the GPU model of one pass ------------------------------------------------ */

/* One pass of algo on preset g through the GPU model (sim_gpu_model.h), as
 * the speed claims and lessons 10 and 11 ask for it: the problem sh with M
 * set to g's shared memory per block, planned as the released kernel
 * launches it (sim_plan_kernel), or, for standard attention, which has no
 * released kernel, its best plan (one kernel per operation); then
 * sim_gpu_model_run with o (NULL: the preset's L2, no trace). The plan goes
 * to *plan when plan is not NULL. Returns 0, or -1 with the reason in err
 * (no kernel for this d, a plan that does not fit, the model's refusal). */
int sim_claims_gpu_pass(const sim_gpu *g, sim_algo algo, sim_pass pass, const sim_shape *sh,
                        const sim_gm_opts *o, sim_plan *plan, sim_gm_result *out, char *err,
                        size_t errlen);

/* ---- output --------------------------------------------------------------------- */

/* One claim as text (wrapped to 80 columns), numbered k. */
void sim_claim_print(FILE *out, int k, const char *claim, const char *source,
                     const sim_claim_outcome *o);

/* One claim as a JSON object, the next element of w's open array; quote and
 * seed_row are docs/sources.md's numbers (0 for none). */
void sim_claim_json(sim_json *w, const char *id, const char *claim, const char *source,
                    int quote, int seed_row, const sim_claim_outcome *o);

#endif /* FASIM_SIM_CLAIMS_H */
