/*
 * sim_names.c — names, element sizes and parsing of the simulator's vocabulary.
 */
#include "sim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const ALGO_NAMES[SIM_ALGO_COUNT] = { "naive", "fa1", "fa2" };
static const char *const ALGO_TITLES[SIM_ALGO_COUNT] = {
    "standard attention (FlashAttention paper, Algorithm 0)",
    "FlashAttention-1 (Dao et al. 2022, Algorithm 1)",
    "FlashAttention-2 (Dao 2023, Algorithm 1)",
};
static const char *const DTYPE_NAMES[SIM_DTYPE_COUNT] = { "fp16", "bf16", "fp32" };
static const char *const TENSOR_NAMES[SIM_TENSOR_COUNT] = {
    "Q", "K", "V", "O", "S", "P", "m", "l", "L", "dO", "dQ", "dK", "dV", "dP", "dS", "D", "O~", "PT"
};

const char *sim_pass_name(sim_pass p)
{
    return p == SIM_FWD ? "fwd" : p == SIM_BWD ? "bwd" : "?";
}

const char *sim_algo_name(sim_algo a)
{
    return (unsigned)a < SIM_ALGO_COUNT ? ALGO_NAMES[a] : "?";
}

const char *sim_algo_title(sim_algo a)
{
    return (unsigned)a < SIM_ALGO_COUNT ? ALGO_TITLES[a] : "?";
}

const char *sim_dtype_name(sim_dtype t)
{
    return (unsigned)t < SIM_DTYPE_COUNT ? DTYPE_NAMES[t] : "?";
}

const char *sim_tensor_name(sim_tensor t)
{
    return (unsigned)t < SIM_TENSOR_COUNT ? TENSOR_NAMES[t] : "?";
}

int sim_dtype_bytes(sim_dtype t)
{
    return t == SIM_FP32 ? 4 : 2;
}

int sim_tensor_bytes(sim_tensor t, sim_dtype dt)
{
    /* The softmax statistics and the logsumexp are fp32 in every FlashAttention
     * implementation; the matrices take the run's dtype. */
    if (t == SIM_m || t == SIM_l || t == SIM_L || t == SIM_D || t == SIM_Ot || t == SIM_PT)
        return 4;
    return sim_dtype_bytes(dt);
}

int sim_shape_check(const sim_shape *sh, char *err, size_t errlen)
{
    const char *why = NULL;
    if (sh->window < 0)
        why = "--window must be at least 1";
    else if (sh->window > 0 && !sh->causal)
        why = "a sliding window attends to the keys before each query: it needs --causal";
    else if (sh->Nk < 0)
        why = "--Nk must be at least 1";
    else if (sh->causal && sim_shape_Nk(sh) < sh->N)
        why = "with --causal the queries are the last N_q positions of the keys: "
              "--Nq must not exceed --Nk";
    else if (sh->batch < 0 || sh->heads < 0 || sh->kv_heads < 0)
        why = "--batch, --heads and --kv-heads must be at least 1";
    else if (sim_shape_G(sh) > sim_shape_H(sh))
        why = "--kv-heads G must not exceed --heads H (each key/value head serves H/G "
              "query heads)";
    else if (sim_shape_H(sh) % sim_shape_G(sh) != 0)
        why = "--heads H must be divisible by --kv-heads G: each key/value head serves "
              "the same number H/G of query heads";
    else if (sh->pass == SIM_BWD && sim_shape_G(sh) < sim_shape_H(sh))
        why = "the backward pass is simulated with one key/value head per query head: "
              "with G < H each head's dK, dV would need a sum over its group that the "
              "papers' algorithms leave out; drop --kv-heads or use --pass fwd";
    else if (sh->pass == SIM_BWD && sh->group)
        why = "grouped query heads are a plan of FA2's forward pass only";
    else if (sh->splits < 0)
        why = "--splits must be at least 1";
    else if (sh->splits > 1 && (sh->pass == SIM_BWD || sh->group))
        why = "split-KV is a plan of FA2's forward pass (decoding): use it with --pass fwd "
              "and one query head per block";
    else if (sh->page < 0)
        why = "--page-size must be at least 1";
    else if (sh->page > sim_shape_Nk(sh))
        why = "--page-size P must not exceed N_k: one page of N_k rows already holds every "
              "key";
    else if (sh->splits > sim_shape_Nk(sh))
        why = "--splits S must not exceed N_k: each split needs at least one key";
    if (!why)
        return 0;
    if (err && errlen)
        snprintf(err, errlen, "%s", why);
    return -1;
}

int sim_algo_parse(const char *s, sim_algo *out)
{
    for (int a = 0; a < SIM_ALGO_COUNT; a++) {
        if (strcmp(s, ALGO_NAMES[a]) == 0) {
            *out = (sim_algo)a;
            return 0;
        }
    }
    if (strcmp(s, "standard") == 0) {
        *out = SIM_NAIVE;
        return 0;
    }
    return -1;
}

int sim_dtype_parse(const char *s, sim_dtype *out)
{
    for (int t = 0; t < SIM_DTYPE_COUNT; t++) {
        if (strcmp(s, DTYPE_NAMES[t]) == 0) {
            *out = (sim_dtype)t;
            return 0;
        }
    }
    return -1;
}

void sim_format_count(char *buf, size_t len, uint64_t n)
{
    char digits[32];
    int nd = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);
    size_t o = 0;
    for (int k = 0; k < nd && o + 1 < len; k++) {
        if (k > 0 && (nd - k) % 3 == 0 && o + 2 < len)
            buf[o++] = ',';
        buf[o++] = digits[k];
    }
    if (len)
        buf[o < len ? o : len - 1] = '\0';
}

void sim_format_bytes(char *buf, size_t len, uint64_t bytes)
{
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    else if (fabs(v - round(v)) < 1e-9)
        snprintf(buf, len, "%.0f %s", v, unit[u]);
    else
        snprintf(buf, len, "%.2f %s", v, unit[u]);
}
