/*
 * sim_registry.c — the loop orders fasim knows: one line per descriptor
 * (each defined in its own sim/algo_*.c), and the lookup.
 *
 * Adding a loop order is a new algo_*.c exporting its sim_loop, and one line
 * here (the build takes every algo_*.c). The loop orders are numbered 0 ..
 * sim_algo_count() - 1, the built-in ones first, then those registered at
 * run time (sim_loop_register) in turn.
 */
#include "sim_loop.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

extern const sim_loop sim_loop_naive, sim_loop_naive_bwd;
extern const sim_loop sim_loop_fa1, sim_loop_fa1_bwd;
extern const sim_loop sim_loop_fa2, sim_loop_fa2_bwd, sim_loop_fa2_split;
extern const sim_loop sim_loop_unfused, sim_loop_unfused_bwd;

static const sim_loop *const BUILTIN[] = {
    &sim_loop_naive,
    &sim_loop_fa1,
    &sim_loop_fa2,
    &sim_loop_naive_bwd,
    &sim_loop_fa1_bwd,
    &sim_loop_fa2_bwd,
    &sim_loop_fa2_split,
    &sim_loop_unfused,
    &sim_loop_unfused_bwd,
};

#define NBUILTIN ((int)(sizeof BUILTIN / sizeof BUILTIN[0]))

/* Loop orders registered at run time (tests): a handful at most. */
#define SIM_LOOP_EXTRA_MAX 8
static const sim_loop *extra[SIM_LOOP_EXTRA_MAX];
static int nextra;

static const sim_loop *entry(int k)
{
    return k < NBUILTIN ? BUILTIN[k] : extra[k - NBUILTIN];
}

static const sim_loop *lookup(sim_algo algo, sim_pass pass, int split, int group)
{
    for (int k = 0; k < NBUILTIN + nextra; k++) {
        const sim_loop *l = entry(k);
        if (l->algo == algo && l->pass == pass && l->split == split && (!group || l->grouped))
            return l;
    }
    return NULL;
}

const sim_loop *sim_loop_find(sim_algo algo, const sim_run_opts *run)
{
    return lookup(algo, run->pass, sim_run_S(run) > 1, run->group != 0);
}

int sim_loop_softmax_forms(sim_algo algo, const sim_run_opts *run)
{
    const sim_loop *l = sim_loop_find(algo, run);
    return l && l->softmax_forms;
}

const sim_loop *sim_loop_of(sim_algo algo, sim_pass pass)
{
    return lookup(algo, pass, 0, 0);
}

/* Loop orders are numbered 0 .. count - 1 without a gap (sim_loop_register
 * keeps it so), so the count is one past the largest number. */
int sim_algo_count(void)
{
    int n = 0;
    for (int k = 0; k < NBUILTIN + nextra; k++)
        if ((int)entry(k)->algo >= n)
            n = (int)entry(k)->algo + 1;
    return n;
}

int sim_algo_in_default(sim_algo algo)
{
    const sim_loop *l = sim_algo_loop(algo);
    return l && !(l->flags & SIM_LOOP_OPT_IN);
}

sim_algo sim_algo_next(sim_algo algo)
{
    const int n = sim_algo_count();
    int a = (int)algo;
    for (int k = 0; k < n; k++) {
        a = (a + 1) % n;
        if (sim_algo_in_default((sim_algo)a))
            break;
    }
    return (sim_algo)a;
}

const sim_loop *sim_algo_loop(sim_algo algo)
{
    const sim_loop *fwd = sim_loop_of(algo, SIM_FWD);
    if (fwd)
        return fwd;
    for (int k = 0; k < NBUILTIN + nextra; k++)
        if (entry(k)->algo == algo)
            return entry(k);
    return NULL;
}

int sim_loop_register(const sim_loop *l)
{
    if (!l || !l->name || nextra == SIM_LOOP_EXTRA_MAX || lookup(l->algo, l->pass, l->split, 0))
        return -1;
    const int n = sim_algo_count();
    sim_algo taken;
    if ((int)l->algo == n) {                      /* a new loop order */
        if (n == SIM_ALGO_MAX || !strcmp(l->name, "all") || sim_algo_parse(l->name, &taken) == 0)
            return -1;
    } else {                                      /* another pass of a registered one */
        const sim_loop *family = sim_algo_loop(l->algo);
        int builtin = 0;
        for (int k = 0; k < NBUILTIN; k++)
            builtin |= BUILTIN[k]->algo == l->algo;
        if (!family || builtin || strcmp(family->name, l->name) != 0)
            return -1;
    }
    extra[nextra++] = l;
    return 0;
}

/* ---- which run options go together: the one place ------------------------ */

int sim_run_opts_valid(const sim_shape *sh, const sim_run_opts *run, char *err, size_t errlen)
{
    const char *why = NULL;
    if (run->pass == SIM_BWD && run->group)
        why = "grouped query heads are a plan of FA2's forward pass only";
    else if (run->splits < 0)
        why = "--splits must be at least 1";
    else if (run->splits > 1 && (run->pass == SIM_BWD || run->group))
        why = "split-KV is a plan of FA2's forward pass (decoding): use it with --pass fwd "
              "and one query head per block";
    else if (run->page < 0)
        why = "--page-size must be at least 1";
    else if (run->page > sim_shape_Nk(sh))
        why = "--page-size P must not exceed N_k: one page of N_k rows already holds every "
              "key";
    else if (run->splits > sim_shape_Nk(sh))
        why = "--splits S must not exceed N_k: each split needs at least one key";
    else if ((unsigned)run->intermediates >= SIM_INTER_COUNT)
        why = "--intermediates must be kernel or paper";
    else if ((unsigned)run->softmax >= SIM_SOFTMAX_COUNT)
        why = "--softmax must be auto, 1pass, 2pass or 3pass";
    else if (run->softmax == SIM_SOFTMAX_1PASS && sim_plan_rows(sh, 4, 8) == 0) {
        if (err && errlen) {
            char nk[32], row[32], m[32];
            sim_format_count(nk, sizeof nk, (uint64_t)sim_shape_Nk(sh));
            sim_format_count(row, sizeof row, (uint64_t)sim_shape_Nk(sh) * 4 + 8);
            sim_format_count(m, sizeof m, sh->M);
            snprintf(err, errlen, "--softmax 1pass reads whole rows of S: one row of N_k = "
                     "%s fp32 scores with its m and l takes %s B, more than M = %s B; "
                     "use 2pass or 3pass", nk, row, m);
        }
        return -1;
    }
    else if (!(run->dropout >= 0.0 && run->dropout < 1.0))     /* NaN too */
        why = "--dropout P must be a probability in [0, 1)";
    else if ((unsigned)run->unfused_ops >= SIM_UF_OPS_COUNT)
        why = "--unfused-ops must be gpt2 or fa2bench";
    else if (run->unfused_ops == SIM_UF_FA2BENCH && (sh->causal || sh->blocks))
        why = "--unfused-ops fa2bench has no mask here: FlashAttention-2's benchmark builds "
              "its causal mask anew in every call (torch.full, triu, a cast, an add), which "
              "fasim does not model; use gpt2 (torch.where with a bool mask)";
    else if (run->unfused_ops == SIM_UF_FA2BENCH && sim_shape_G(sh) != sim_shape_H(sh))
        why = "--unfused-ops fa2bench packs Q, K and V in one tensor, one key/value head "
              "per query head: drop --kv-heads";
    else if (run->unfused_ops == SIM_UF_FA2BENCH && sim_shape_Nk(sh) != sh->N)
        why = "--unfused-ops fa2bench packs Q, K and V in one tensor of N rows: drop "
              "--Nq, --Nk";
    else if ((unsigned)run->fp8_scale >= SIM_FP8_SCALE_COUNT)
        why = "--fp8-scale must be tensor or block";
    else if (run->fp8_scale != SIM_FP8_TENSOR && !sim_dtype_is_fp8(sh->dtype))
        why = "--fp8-scale block quantises an fp8 dtype: add --dtype e4m3 or e5m2";
    else if (run->incoherent && !sim_dtype_is_fp8(sh->dtype))
        why = "--incoherent on transforms Q and K before an fp8 dtype quantises them: add "
              "--dtype e4m3 or e5m2";
    else if (sim_dtype_is_fp8(sh->dtype) && run->pass == SIM_BWD)
        why = "fp8 models FlashAttention-3's FP8 forward pass; its backward is not "
              "modelled: use --pass fwd";
    else if (sim_dtype_is_fp8(sh->dtype) && run->page > 0)
        why = "paged KV in fp8 is not modelled (the scales are placed with contiguous K, "
              "V): drop --page-size or use fp16, bf16 or fp32";
    else if (sim_dtype_is_fp8(sh->dtype) && run->incoherent && (sh->d & (sh->d - 1)))
        why = "--incoherent on needs d a power of two: the Hadamard transform is defined "
              "on 2^k entries, and fasim does not pad; use --incoherent off or a power of "
              "two (64, 128, 256 ...)";
    if (!why)
        return 0;
    if (err && errlen)
        snprintf(err, errlen, "%s", why);
    return -1;
}

int sim_run_opts_check(sim_algo algo, const sim_run_opts *run, char *err, size_t errlen)
{
    const sim_loop *l = sim_loop_find(algo, run);
    if (l && run->page > 0 && (l->flags & SIM_LOOP_UNPAGED)) {
        if (err && errlen)
            snprintf(err, errlen, "paged KV is a layout of the fused loop orders; %s "
                     "reads K and V as whole tensors", sim_algo_name(algo));
        return -1;
    }
    if (l)
        return 0;
    const sim_loop *fwd = sim_loop_of(algo, SIM_FWD);
    if (err && errlen && fwd && fwd->serves && run->pass == SIM_BWD && !sim_loop_of(algo, SIM_BWD))
        snprintf(err, errlen, "%s has no backward pass: %s", sim_algo_name(algo), fwd->serves);
    else if (err && errlen && (run->group || run->splits > 1))
        snprintf(err, errlen, "split-KV and grouped query heads are plans of FA2's "
                 "forward pass, not of %s", sim_algo_name(algo));
    else if (err && errlen)
        snprintf(err, errlen, "no loop order %s for this pass", sim_algo_name(algo));
    return -1;
}

int sim_loop_dtype_check(sim_algo algo, sim_dtype dt, char *err, size_t errlen)
{
    const sim_loop *l = sim_algo_loop(algo);
    if (!l || !l->dtypes || (unsigned)dt >= 32u || (l->dtypes >> dt & 1u))
        return 0;
    if (err && errlen)
        snprintf(err, errlen, "%s does not run in %s: %s", l->name, sim_dtype_name(dt),
                 l->serves ? l->serves : "another dtype");
    return -1;
}
