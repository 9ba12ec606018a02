/*
 * sim_ring.h — ring attention across P devices (Liu, Zaharia, Abbeel 2023,
 * "Ring Attention with Blockwise Transformers for Near-Infinite Context"),
 * and all-gather context parallelism beside it.
 *
 * Each of P devices holds c = N / P rows of Q, K and V of every (batch,
 * head). Round r = 0 .. P-1: device p computes its queries against the K, V
 * block of device (p - r) mod P, and passes that block on to device p + 1
 * while it computes (the first round's block is its own, so round 0 sends
 * while it computes). Each round is ONE run of FA2's forward on a
 * sub-shape, so its HBM traffic is the simulator's own count; the rounds'
 * partial outputs (O_r, L_r) are merged in round order by the merge lemma
 * (ref_merge: a normalised partial is the state m = L_r, l = 1, acc = O_r).
 *
 * The sub-shapes, h = c / 2 in the zig-zag order (device p holds chunks p
 * and 2P-1-p of 2P chunks of h rows):
 *   not causal       every round: c x c, full (the order changes nothing);
 *   causal, contiguous
 *     round 0        c x c causal (its own block: the diagonal);
 *     from q < p     c x c full (an earlier device's keys, all visible);
 *     from q > p     skipped (a later device's keys, all masked): device p
 *                    computes in p + 1 rounds, device P-1 in every one;
 *   causal, zig-zag
 *     round 0        c x c causal over [chunk p; chunk 2P-1-p]: local causal
 *                    is exactly the global mask (the second chunk's rows
 *                    come after every row of the first);
 *     from q < p     all c local rows against the first K chunk (q): c x h,
 *                    full (chunk p and chunk 2P-1-p both follow chunk q, and
 *                    both precede chunk 2P-1-q);
 *     from q > p     the second local chunk (2P-1-p) against both K chunks:
 *                    h x c, full (chunk p precedes both);
 *                    so every device computes the same tile steps when
 *                    B_r = B_c.
 * A full c x h round has N_q > N_k without a mask, which sim_shape_check
 * allows (only causal needs N_q <= N_k).
 */
#ifndef FASIM_SIM_RING_H
#define FASIM_SIM_RING_H

#include <stdint.h>
#include <stdio.h>

#include "ref_oracle.h"
#include "sim.h"
#include "sim_json.h"
#include "sim_presets.h"

/* The most devices a ring takes: P^2 rounds are listed, and the largest
 * NVLink domains are 72 GPUs (GB200 NVL72); 1024 is far past any ring a
 * class draws. P is also at most N / 16: a device holds at least 16 rows. */
#define SIM_RING_MAX_P 1024
#define SIM_RING_MIN_ROWS 16

typedef enum { SIM_RING_CONTIGUOUS, SIM_RING_ZIGZAG, SIM_RING_ORDER_COUNT } sim_ring_order;

const char *sim_ring_order_name(sim_ring_order o);       /* "contiguous", "zigzag" */
int sim_ring_order_parse(const char *s, sim_ring_order *out);   /* 0, or -1 */

/* A link between neighbouring devices: bandwidth per direction. */
typedef struct {
    const char *name;          /* what --link takes: "nvlink4" */
    const char *title;         /* "NVLink 4 (H100 SXM), 18 links" */
    double bytes_per_s;        /* per direction; 0: the preset lacks it */
    const char *source;        /* where the number comes from */
} sim_link;

const sim_link *sim_links(int *n);
const sim_link *sim_link_find(const char *name);      /* case-insensitive; NULL */
/* "nvlink3, nvlink4, ..., ib-ndr" into buf; returns buf. */
char *sim_link_names(char *buf, size_t len);

/* What a ring is asked for. */
typedef struct {
    int P;                     /* devices; 0: no ring */
    sim_ring_order order;
    const sim_link *link;      /* NULL: none (no link times) */
    int64_t watch;             /* compute mode: the local row (of head 0) of each
                                  device whose running (m, l) each round keeps,
                                  for the view (sim_ring_rounds_text) */
} sim_ring_req;

/* What a device does in one round. */
typedef enum {
    SIM_RING_SKIP,             /* nothing visible: no run */
    SIM_RING_DIAG,             /* its own block, causal c x c */
    SIM_RING_FULL,             /* c x c, every score visible */
    SIM_RING_ZZ_LOW,           /* zig-zag, from q < p: c x h, full */
    SIM_RING_ZZ_HIGH,          /* zig-zag, from q > p: h x c, full */
    SIM_RING_KIND_COUNT
} sim_ring_kind;

/* One kind of round: its sub-shape, the rows of the device's Q it takes
 * (q0 .. q0 + Nq - 1) and of the K, V block (k0 .. k0 + Nk - 1), and what
 * one run of it costs (the same for every device and round of the kind). */
typedef struct {
    int used;                  /* some round is of this kind */
    sim_shape sh;              /* N = N_q, Nk, causal; B, H, G, d, M, dtype */
    int64_t q0, k0;
    sim_plan plan;
    sim_counts counts;         /* the simulator's, all B H heads */
    uint64_t hbm_bytes;        /* read + write */
    uint64_t steps;            /* tile steps */
    sim_flops flops;
    double compute_s;          /* GPU model's time; 0 without a GPU */
} sim_ring_kind_info;

/* A device's totals. */
typedef struct {
    uint64_t hbm_bytes, steps, rounds_computed;
    uint64_t sent_bytes, recv_bytes;
    double compute_s, link_s, time_s;   /* time_s: sum over rounds of
                                           max(compute, link) */
    double time_serial_s;               /* no overlap: compute + link */
    /* all-gather context parallelism */
    uint64_t ag_hbm_bytes, ag_steps, ag_recv_bytes;
    double ag_compute_s, ag_link_s;
} sim_ring_device;

typedef struct {
    sim_ring_req req;
    sim_shape sh;              /* the whole problem */
    int64_t c;                 /* rows per device, N / P */
    int64_t Br, Bc;
    sim_ring_kind_info kind[SIM_RING_KIND_COUNT];
    uint64_t block_bytes;      /* one K, V block: 2 c d B G elements in dtype bytes */
    uint64_t peak_bytes;       /* per device: Q, O, K, V twice, the merge's state */
    uint64_t ag_peak_bytes;    /* all-gather: Q, O, all of K and V, L */
    sim_ring_device *dev;      /* P of them, owned */
    const sim_gpu *gpu;        /* NULL: no times */
    double link_s;             /* one block over the link */
    double threshold_c;        /* the paper's c >= F / B condition, in rows, for
                                  the dtype; 0 without a GPU or link */
    int slowest, ag_slowest;   /* the devices that set the time */
    int computed;              /* compute mode: O, err below */
    float *O;                  /* (B, H, N, d), merged, in dtype; owned */
    float *L;                  /* (B, H, N) */
    float *watch_m, *watch_l;  /* compute mode: [p P + r], device p's watched row's
                                  running (m, l) after round r; owned */
} sim_ring;

/* Check a ring request against a problem: P >= 1, P divides N (2P in the
 * zig-zag order), N / P >= SIM_RING_MIN_ROWS, P <= SIM_RING_MAX_P, N_q = N_k,
 * no window, a link preset with its number. Returns 0, or -1 with a
 * one-line message naming the divisor or the option. */
int sim_ring_check(const sim_shape *sh, const sim_ring_req *rq, char *err, size_t errlen);

/* The kind of device p's round r (0 <= p, r < P), and the device whose
 * block it holds then: (p - r) mod P. */
sim_ring_kind sim_ring_round_kind(const sim_ring_req *rq, int causal, int p, int r);
int sim_ring_source(int P, int p, int r);

/* Build the ring for problem sh with FA2 plans of block sizes Br x Bc
 * (clamped to each sub-shape) run as run says (NULL: the plain forward):
 * one count-only run per kind of round, the GPU model on it when gpu is not
 * NULL, the per-device totals, all-gather beside it. With Q, K, V (Q (B, H,
 * N, d), K, V (B, G, N, d)), also compute: every device's rounds in compute
 * mode on its slices, merged into ring->O, ring->L. Returns 0, or -1 with a
 * message. The caller frees it with sim_ring_free. */
int sim_ring_build(const sim_shape *sh, const sim_run_opts *run, const sim_ring_req *rq,
                   int64_t Br, int64_t Bc, const sim_gpu *gpu, const float *Q,
                   const float *K, const float *V, sim_ring *ring, char *err, size_t errlen);

void sim_ring_free(sim_ring *ring);

/* The rounds one by one, as `fasim view --ring` prints them: in each, per
 * device, whose K, V block it holds, what it computes, where it sends the
 * block, and (compute mode) its watched row's running (m, l) of the merge,
 * m the largest L_r so far and l = sum exp(L_r - m). */
void sim_ring_rounds_text(FILE *out, const sim_ring *ring);

/* The RING ATTENTION section (80 columns), and the "ring" object of the
 * report's JSON. err: the merged output against the oracle, or NULL. */
void sim_ring_text(FILE *out, const sim_ring *ring, const ref_error *err);
void sim_ring_json(sim_json *w, const sim_ring *ring, const ref_error *err);

/* ---- the longest context a device holds (fasim ring-memory) ------------
 * The Ring Attention paper's Table 3 (section 5.1): the longest context
 * trained end to end with FSDP on n devices. Ring attention's context is n
 * times what one device holds, c tokens, so the table is a question of
 * memory per device: with Adam in mixed precision, 16 bytes a parameter
 * (bf16 weights and gradients, fp32 master weights and two moments)
 * sharded over the n devices; full gradient checkpointing, each layer's
 * input kept in bf16 (2 h bytes a token a layer); and one layer's
 * activations while its backward runs, 34 h bytes a token (Korthikanti et
 * al. 2022, "Reducing Activation Recomputation in Large Transformer
 * Models", section 4.1, with memory-efficient attention removing its
 * 5 a s / h term). Then c = (HBM - 16 params / n) / (h (2 L + 34)). */
typedef struct {
    const char *name;          /* "3B" as the table names it */
    const char *title;         /* "OpenLLaMA 3B" */
    int64_t layers, hidden;    /* L, h */
    double params;
    const char *source;
} sim_ring_model;

typedef struct {
    const sim_ring_model *model;
    int devices;
    int64_t paper_tokens;      /* Table 3's Ring Attention column, tokens */
    int64_t tokens_per_device; /* c */
    int64_t tokens;            /* n c */
    double state_bytes, per_token_bytes;   /* per device */
} sim_ring_memory_row;

/* The rows of Table 3 on A100s (8 with NVLink, 32 with InfiniBand) for a
 * GPU of hbm bytes; returns how many (at most max). */
int sim_ring_memory_rows(uint64_t hbm, sim_ring_memory_row *rows, int max);

/* The table `fasim ring-memory` prints, every assumption with it. */
void sim_ring_memory_text(FILE *out, const sim_gpu *g);

#endif /* FASIM_SIM_RING_H */
