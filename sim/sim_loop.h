/*
 * sim_loop.h — a loop order as one descriptor, and the registry of them.
 *
 * Everything fasim knows about one loop order and pass lives in one file,
 * sim/algo_*.c, which exports one sim_loop: its name and titles, the shapes
 * it serves, its SRAM buffers, its loop nest, the tensors it holds in HBM,
 * its closed-form counts, tile steps and FLOPs, and its pseudocode with
 * what each line means to a view. sim_registry.c lists them; sim_plan_make,
 * sim_theory_counts, sim_run and the views ask it (sim_loop_find) and never
 * switch on which loop order they hold. Adding a loop order is one new file
 * and one line in sim_registry.c: the layers above go over sim_algo_count()
 * loop orders, so it appears in --algo, reports, sweeps, plots and views.
 *
 * SRAM buffers are named by id (sim_buf_id), checked at compile time; their
 * printed names ("Q_i", "O~_i") are in one table, sim_buf_name.
 */
#ifndef FASIM_SIM_LOOP_H
#define FASIM_SIM_LOOP_H

#include <stdint.h>

#include "sim.h"

/* ---- SRAM buffers by id --------------------------------------------------- */

/* Every SRAM buffer any loop order allocates. The printed name of each is in
 * sim_buf_name (sim_names.c); a loop order takes and moves buffers by id. */
typedef enum {
    SIM_BUF_Q_i, SIM_BUF_K_j, SIM_BUF_V_j, SIM_BUF_S_ij, SIM_BUF_P_ij, SIM_BUF_O_i,
    SIM_BUF_m_i, SIM_BUF_l_i, SIM_BUF_L_i, SIM_BUF_D_i,
    SIM_BUF_m, SIM_BUF_l, SIM_BUF_D,                 /* naive: whole rows' statistics */
    SIM_BUF_S_rows, SIM_BUF_P_rows, SIM_BUF_dP_rows, /* naive: whole rows */
    SIM_BUF_mt_ij, SIM_BUF_lt_ij,                    /* FA1: "m~_ij", "l~_ij" */
    SIM_BUF_m_new, SIM_BUF_l_new,
    SIM_BUF_Ot_i, SIM_BUF_Ot_s, SIM_BUF_m_s, SIM_BUF_l_s,   /* split-KV: "O~_i", "O~_s" */
    SIM_BUF_dO_i, SIM_BUF_dQ_i, SIM_BUF_dK_j, SIM_BUF_dV_j, SIM_BUF_dP_ij, SIM_BUF_dS_ij,
    SIM_BUF_PT_j,                                    /* paged KV: a tile's table entries */
    SIM_BUF_C_ij, SIM_BUF_Z_ij,                      /* unfused: tiles of the masks */
    SIM_BUF_COUNT
} sim_buf_id;

/* "Q_i", "O~_i", ...; "?" out of range. */
const char *sim_buf_name(sim_buf_id b);

/* Append buffer `id` of `phase` (rows x cols elements of elem_bytes) to a
 * plan; `why` is a few words for the report. Sizes saturate at UINT64_MAX so
 * that an overflowing plan never "fits". At most SIM_MAX_BUFFERS per plan. */
void sim_plan_add(sim_plan *p, sim_buf_id id, int phase, int64_t rows, int64_t cols,
                  int elem_bytes, const char *why);

/* Standard attention's passes over whole rows: how many rows of N_k keys,
 * key_bytes each, plus row_bytes per row, fit in M (at most N). Returns that
 * B_s, or 0 when not one row fits (the pass then goes over tiles). */
int64_t sim_plan_rows(const sim_shape *sh, uint64_t key_bytes, uint64_t row_bytes);

/* ---- pseudocode and what its lines mean to a view ------------------------- */

/* What the statistics table and the output row of a view show at a line
 * (the loop nest's facts, read by viz_model): */
enum {
    SIM_VIEW_STATS = 1u << 0,       /* m_i, l_i of the row block concern this line */
    SIM_VIEW_OUT = 1u << 1,         /* the chosen row of O_i concerns it */
    SIM_VIEW_BEFORE = 1u << 2,      /* the buffers hold this block's values on arrival */
    SIM_VIEW_AFTER = 1u << 3,       /* ... and when the line is done */
    SIM_VIEW_L_BEFORE = 1u << 4,    /* m_i holds L_i = m_i + log l_i on arrival */
    SIM_VIEW_L_AFTER = 1u << 5,
    SIM_VIEW_NORM_BEFORE = 1u << 6, /* O_i is divided by l_i on arrival */
    SIM_VIEW_NORM_AFTER = 1u << 7,
    SIM_VIEW_ALPHA = 1u << 8,       /* alpha = exp(m_old - m_new) means something here */
    SIM_VIEW_BEFORE_TILED = 1u << 9,  /* BEFORE only when the softmax runs over tiles
                                         (naive's passes; initialised before the first) */
    SIM_VIEW_BEFORE_IN_J = 1u << 10,  /* BEFORE only inside the loop over j (accumulating) */
    SIM_VIEW_SOFTMAX = 1u << 11     /* the standard softmax line: whole rows of B_s
                                       in one pass, or passes over tiles */
};

/* What a score heat map shows at a line: the tile of S or P the line works
 * on (at a block pair i, j >= 0; elsewhere heat_note, if set, says what
 * happens instead), or why there is none. */
typedef enum {
    SIM_HEAT_NONE,       /* no score tile here */
    SIM_HEAT_S,          /* S_ij = Q_i K_j^T / sqrt(d), just computed, fp32 */
    SIM_HEAT_P_RUNNING,  /* exp(S_ij - m_i), m_i the running maximum after block j */
    SIM_HEAT_P_BLOCK,    /* exp(S_ij - rowmax S_ij), the block's own maximum */
    SIM_HEAT_SOFTMAX,    /* the standard softmax: B_s whole rows in one pass, or S_ij
                            read back per pass and P_ij in the last */
    SIM_HEAT_P_STORED,   /* P_ij as read back from HBM */
    SIM_HEAT_WRITE,      /* no tile: block i's results go to HBM */
    SIM_HEAT_RETURN      /* no tile: the run is finished */
} sim_heat;

/* One line of a loop order's pseudocode, condensed to ASCII. */
typedef struct {
    int line;                  /* the paper's line number; 0 for a continuation */
    int indent;                /* nesting depth, for display */
    const char *text;          /* ASCII; 2 * indent + strlen(text) <= 31 */
    unsigned view;             /* SIM_VIEW_* of this line (0 on continuations) */
    sim_heat heat;             /* what a score heat map shows here */
    const char *heat_note;     /* SIM_HEAT_NONE, or outside the loop over j: what
                                  happens instead ("line 7: K_j and V_j arrive") */
    uint32_t tiles;            /* the tensors whose tile in hand a view outlines, bit t
                                  for sim_tensor t, where a line works on some of
                                  them only (standard attention); 0: all */
} sim_code_line;

/* A line that means nothing particular to a view (no statistics, no score
 * tile, every tile in hand outlined): its number, indent and text. */
#define SIM_CODE(line, indent, text) { (line), (indent), (text), 0, SIM_HEAT_NONE, NULL, 0 }

/* Flags of a whole loop order, for views. */
enum {
    SIM_LOOP_LINE_BLOCKS = 1u << 0,  /* statistics belong to one line's pass over the
                                        blocks (naive), not to a block across lines */
    SIM_LOOP_TILE_S = 1u << 1,       /* S, P are N x N_k tensors in HBM: the view
                                        draws them (naive) */
    SIM_LOOP_OPT_IN = 1u << 2,       /* not in the default set: runs when named with
                                        --algo (or "all"), or when a preset asks for
                                        every loop order (sim_algo_in_default) */
    SIM_LOOP_DROPOUT = 1u << 3,      /* stores a dropout mask in HBM: its counts
                                        follow sim_run_opts.dropout */
    SIM_LOOP_UNPAGED = 1u << 4,      /* serves no paged KV (sim_run_opts_check) */
    SIM_LOOP_NAMED_ONLY = 1u << 5,   /* runs only when named with --algo, not in
                                        "all" either (FA3: Hopper, forward, 16- and
                                        8-bit types), so that what "all" prints
                                        stays as it was */
    SIM_LOOP_FRAMEWORK = 1u << 6     /* a framework's attention, a kernel per operation
                                        (the unfused baseline): its operations follow
                                        sim_run_opts.unfused_ops; the GPU model charges
                                        its kernels framework_dram_eff and serves a
                                        thread block's re-read of a tile it read in the
                                        same kernel from the L2 (PyTorch's softmax over
                                        long rows runs a block per row, whose passes
                                        find the row there) */
};

/* How often a loop order loads key block j of K (and of V), for the paged
 * KV closed form (sim_theory.c): */
typedef enum {
    SIM_KV_ONCE,         /* once per key block some query sees (FA1, the backwards) */
    SIM_KV_EVERY_I,      /* T_r times, every block, masked or not (naive) */
    SIM_KV_PER_VISIT     /* once per query block that visits it (FA2's forward) */
} sim_kv_loads;

/* Which of Theorem 2's bounds on HBM accesses a loop order meets: */
typedef enum {
    SIM_BOUND_STANDARD,  /* standard attention: Theta(N d + N^2) */
    SIM_BOUND_FLASH      /* FlashAttention: Theta(N^2 d^2 / M) */
} sim_bound;

/* One of a plan's two block sizes: */
typedef enum {
    SIM_BLOCK_R,         /* B_r, rows of Q per block */
    SIM_BLOCK_C          /* B_c, rows of K and V per block */
} sim_block;

/* Which of the views' tile styles a loop order's chart mark borrows, so
 * that marks differ in colour as well as in character (the explorer's
 * chart maps it to its own styles): */
typedef enum {
    SIM_MARK_HEAD,       /* the headers' style (FA2's, and any loop order's by default) */
    SIM_MARK_WRITTEN,    /* that of tiles written (naive's) */
    SIM_MARK_READ        /* that of tiles read (FA1's) */
} sim_mark_style;

/* How the released kernel a loop order stands for is launched: which of an
 * event's indices (sim_event) names the thread block that issued it. The
 * GPU model (study/sim_gpu_model.c) builds the launch from this alone.
 * Events outside the grid's loop (no i, or no j where the grid needs it) are
 * the work of a kernel of their own, one per pseudocode line, one thread
 * block per block row: FA2's backward's preprocessing (D) and conversion of
 * dQ, split-KV's combine. */
typedef enum {
    SIM_GRID_HEAD,       /* one thread block per (batch, head), the whole loop nest
                            inside it (the paper's model) */
    SIM_GRID_HEAD_SPLIT_Q, /* (batch, head, split): a head's query blocks dealt to S
                            blocks (i mod S), each loading every K_j, V_j; S chosen
                            to fill the SMs: FA1's forward (flash-attn v1,
                            run_fmha_fwd_loop, num_splits_heuristic_fwd) */
    SIM_GRID_HEAD_OR_COLS, /* one per (batch, head), or, when that leaves SMs idle,
                            one per (key block j, batch, head): FA1's backward (v1,
                            run_fmha_bwd_loop, num_splits_heuristic_bwd) */
    SIM_GRID_ROWS,       /* one per (query block i, batch, head): FA2's forward
                            (grid (T_r, B, H)) */
    SIM_GRID_COLS,       /* one per (key block j, batch, head): FA2's backward
                            (grid (T_c, B, H)) */
    SIM_GRID_SPLITS,     /* one per (query block i, split s, batch, head), then the
                            combine kernel from merge_line: split-KV (grid
                            (T_r, S, B H)) */
    SIM_GRID_PER_LINE    /* one kernel per line of the pseudocode (one operation,
                            as PyTorch launches them), one thread block per block
                            row it works on: standard attention */
} sim_grid;

/* How the warps of its released kernel share a tile step, which decides
 * what they read from shared memory (the GPU model's shared-memory pipe):
 * FlashAttention-2, section 3.3. */
typedef enum {
    SIM_WARPS_NONE,      /* no kernel of fasim's to say (standard attention's
                            operations: library kernels) */
    SIM_WARPS_SPLIT_Q,   /* each warp takes B_r / w query rows and reads all of
                            K_j and V_j from shared memory (FA2) */
    SIM_WARPS_SPLIT_K    /* "sliced-K": each warp takes B_c / w keys, reads all of
                            Q_i, and the w partial products are summed through
                            shared memory, fp32 (FA1) */
} sim_warps;

struct sim_hier;
typedef struct sim_chk sim_chk;

/* One row of a view's PIPELINE panel (sim_loop.pipeline): who, and what it
 * does at the step. */
#define SIM_PIPE_ROWS 3
typedef struct {
    char who[24];              /* "SMEM stages", "WG1 [0:64)" */
    char what[256];
} sim_pipe_row;

/* One loop order and pass. Static data: a descriptor is never freed. */
typedef struct sim_loop {
    sim_algo algo;
    sim_pass pass;
    int split;                 /* 1: serves split-KV shapes (splits > 1) only */
    int grouped;               /* 1: also serves grouped query heads (run.group) */
    const char *name;          /* "fa2": the --algo name (forward and backward alike) */
    const char *title;         /* the report's: "FlashAttention-2 (Dao 2023, Algorithm 1)" */
    const char *code_title;    /* the view's: "FlashAttention-2, Algorithm 1" */
    const sim_code_line *code; /* the pseudocode, ncode lines */
    int ncode;
    unsigned flags;            /* SIM_LOOP_* */
    int merge_line;            /* split-KV: lines >= this are the merge; 0: none */
    const char *no_stats;      /* why a view shows no running statistics at all
                                  (the backward passes), else NULL */
    const char *no_stats_detail;   /* a second line for it, or NULL */
    uint32_t hbm;              /* tensors held in HBM: bit t for sim_tensor t */
    sim_kv_loads kv_loads;
    sim_grid grid;             /* how its released kernel is launched */
    sim_warps warps;           /* how its kernel's warps share a step */
    int prefetch;              /* 1: the kernel loads the next tiles while it
                                  computes (FA2's cp.async pipeline), so a tile
                                  step costs the larger of its transfers and its
                                  arithmetic; 0: their sum */
    int wgmma;                 /* 1: its kernel issues Hopper's asynchronous
                                  WGMMA and TMA (FA3): the tensor cores' full
                                  rate, a Hopper GPU only, and its own clock in
                                  the GPU model (study/sim_gpu_fa3.c) */
    uint32_t dtypes;           /* the dtypes it serves, bit t for sim_dtype t;
                                  0: every one */
    const char *serves;        /* with dtypes, or a forward without a backward:
                                  what it serves, for the refusal's reason */
    sim_bound bound;           /* the bound of Theorem 2 its traffic follows */
    sim_block reread;          /* the block size the loop re-reads across: the
                                  other operand comes back once per block of it,
                                  so traffic falls as it grows (FA2's forward:
                                  B_r; FA1's, and the backwards': B_c) */
    char mark;                 /* one character that stands for it on charts */
    sim_mark_style mark_style; /* the style of that character on a view's chart */
    const char *color;         /* its lines in plots: "#rrggbb", or NULL for grey */
    /* The SRAM buffers for p->Br, p->Bc (already clamped), e bytes per
     * element of the dtype, run as p->run: sim_plan_add calls, p->nphases,
     * and the naive softmax's p->softmax_passes, p->Bs_r. */
    void (*plan)(sim_plan *p, const sim_shape *sh, int e);
    /* The loop nest over one block of heads. Returns 0, or -1 with
     * h->failed set. */
    int (*run)(struct sim_hier *h, const sim_plan *p);
    /* The closed-form counts of one head, unpaged (sim_theory.h's helpers
     * flag an overflow in k). */
    void (*counts)(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_counts *out);
    /* Tile steps of one block of heads. */
    uint64_t (*steps)(sim_chk *k, const sim_plan *p, const sim_shape *sh);
    /* The FLOPs of one head (sim_flops), closed forms derived from its
     * pseudocode; NULL: none counted. The convention, the same for every
     * loop order: a multiply-add of a matrix product is 2 FLOPs (matmul);
     * outside the products (other) one exp, log, max, add, subtract,
     * multiply or division is 1 FLOP, a reduction over n values (rowmax,
     * rowsum) is n and a dot product of n terms 2n; the scale 1/sqrt(d) and
     * the mask are left out, as the papers' listings leave them. Every
     * element of a tile the loop nest computes counts, masked or not. */
    void (*flops)(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_flops *out);
    /* 1: its plan offers the softmax forms of sim_softmax and reads
     * run.softmax (standard attention's forward); 0: it has its own softmax,
     * and its plans keep run.softmax AUTO whatever was asked. */
    int softmax_forms;
    /* 1: its query blocks i are independent: each reads only the inputs
     * and writes only its own rows of the outputs, so in compute mode
     * threads may run them at once (sim_set_threads), the loop nest taking
     * i = h->part, h->part + sim_part_step(h), ... (FA2's forward). */
    int rows_parallel;
    /* A warp-specialised kernel (FA3): what its thread block's producer and
     * consumer warpgroups do, and what the ring of shared-memory stages
     * holds, at a step of the two-level model (pseudocode line `line`,
     * block pair i, j, 0-based, -1 outside the loops), in the order its
     * schedule runs them (no clock: that is the GPU model's). Writes at most
     * SIM_PIPE_ROWS rows and returns how many; NULL: no such panel. */
    int (*pipeline)(const sim_plan *p, const sim_shape *sh, int line, int64_t i, int64_t j,
                    sim_pipe_row *rows);
} sim_loop;

/* ---- the registry --------------------------------------------------------- */

/* The loop order of `algo` for the run's pass, split-KV or not, grouped or
 * not; NULL when none serves those options (naive split-KV, an unknown
 * algo). Which loop order runs is a matter of how, not of the problem: no
 * shape here. */
const sim_loop *sim_loop_find(sim_algo algo, const sim_run_opts *run);

/* Which run options (sim_run_opts) go together, said in one place.
 * sim_run_opts_valid: the combinations no loop order serves, some of them
 * with problem sh (the backward with G < H or grouped heads, split-KV
 * beside the backward or grouped heads, page sizes and splits out of range
 * for N_k); sim_check calls it after sim_shape_check.
 * sim_run_opts_check: whether loop order algo serves the options (a
 * registered loop order for their pass, split and grouping). Each returns
 * 0, or -1 with a one-line message naming the options (err may be NULL). */
int sim_run_opts_valid(const sim_shape *sh, const sim_run_opts *run, char *err, size_t errlen);
int sim_run_opts_check(sim_algo algo, const sim_run_opts *run, char *err, size_t errlen);

/* Whether loop order algo serves dtype dt (sim_loop.dtypes): 0, or -1 with
 * a one-line message saying what it serves (err may be NULL). */
int sim_loop_dtype_check(sim_algo algo, sim_dtype dt, char *err, size_t errlen);

/* Whether loop order algo, run as run says (its pass, split, grouping),
 * offers the softmax forms of sim_softmax (standard attention's forward):
 * 1, or 0 when it has its own softmax (its plans keep run.softmax AUTO) or
 * no loop order serves the options. A form named with none that offers it
 * is the caller's to refuse. */
int sim_loop_softmax_forms(sim_algo algo, const sim_run_opts *run);

/* The loop order of algo and pass for unsplit shapes (names, titles). */
const sim_loop *sim_loop_of(sim_algo algo, sim_pass pass);

/* The descriptor that speaks for loop order algo, whatever the pass: its
 * name, titles, bound, chart mark and plot colour (the backward and split
 * descriptors repeat or leave them). The forward pass's, or for a
 * registered loop order with none, its first registered; NULL for an algo
 * outside 0 .. sim_algo_count() - 1. */
const sim_loop *sim_algo_loop(sim_algo algo);

/* Loop orders defined outside sim/ (tests, extensions): l is added after
 * the built-in ones and stays registered (l must outlive every run); every
 * command that goes over the loop orders ("--algo all", reports, sweeps,
 * plots, the explorer) then offers it. A new loop order takes the next
 * number, l->algo == sim_algo_count(), and a name no other loop order has
 * (nor "all" or "standard"); a further pass or split of a registered loop
 * order takes its number and name. Not thread-safe: register before any
 * run. Returns 0, or -1 when the algo is not one of those, the name is
 * missing or taken, the algo, pass and split are taken, or the table or
 * SIM_ALGO_MAX is full. */
int sim_loop_register(const sim_loop *l);

/* FlashAttention-3's forward (sim/algo_fa3.c), registered: the command line
 * does it before anything else, so that it is loop order 4 there. It is not
 * built in because it serves less than the suites that go over every loop
 * order assume (both passes, every dtype): the forward in fp16, bf16 and
 * fp8. Idempotent; returns its number, or -1 when it cannot be registered
 * (its number taken by another). */
int sim_fa3_register(void);

/* FA3's ring of shared-memory stages, each one key block K_j and one value
 * block V_j: kStages = 2 for every Hopper forward kernel
 * (hopper/flash_fwd_launch_template.h, run_flash_fwd: "kStages = Arch >= 90
 * ? 2 : ..."). Its plan (algo_fa3.c), its clock (study/sim_gpu_fa3.c) and
 * the pictures of both count them from here. */
#define SIM_FA3_STAGES 2

#endif /* FASIM_SIM_LOOP_H */
