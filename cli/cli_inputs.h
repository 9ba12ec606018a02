/*
 * cli_inputs.h — the .npy inputs of a run (--q, --k, --v and the backward's
 * --dO), read and checked in one place for every command that takes them:
 * the report, `fasim view` and `fasim gpu`.
 *
 * One set of checks, messages and exit statuses: a file that cannot be read
 * or holds bad data is a failure (SIM_EFAIL); a file of a rank the command
 * does not take, or a shape that disagrees with the options given, is bad
 * usage (SIM_EUSAGE). The limits are sim_limits.h's.
 */
#ifndef FASIM_CLI_INPUTS_H
#define FASIM_CLI_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"
#include "sim_npy.h"

typedef struct {
    /* --q, --k, --v (all three), and --dO or NULL */
    const char *q_path, *k_path, *v_path, *do_path;
    int64_t max_elems;         /* per file: sim_npy_read's bound, set by the caller */
    uint64_t max_mem;          /* the --max-mem it comes from, named when a file
                                  is over it; 0: a fixed bound */
    /* NULL: Q may be (N_q, d) or (B, H, N_q, d). Else only (N, d) files are
     * taken, and this says why: "the view shows one head". */
    const char *one_head;
    int same_length;           /* N_k must be N_q (the kernels) */
    /* Which of the shape's fields the command line gave, to be checked
     * against the files; B, H, G count as given when they are not 0. */
    int N_set, Nk_set, d_set;
} cli_inputs_spec;

/* Read the files of spec into m[0..3] (Q, K, V, dO; m[3] stays empty without
 * --dO) and set sh's N, N_k, d, B, H and G from them: Q is (N_q, d) or
 * (B, H, N_q, d); K and V (N_k, d) or (B, G, N_k, d), of Q's rank and batch;
 * dO Q's shape. The new shape is checked as run with run (sim_check). Returns SIM_OK, or SIM_EFAIL / SIM_EUSAGE with a one-line
 * message in err (without the "fasim: " of the caller). The caller owns
 * m[k].data whatever the result (cli_inputs_free). */
int cli_inputs_load(const cli_inputs_spec *spec, sim_shape *sh, const sim_run_opts *run,
                    sim_npy_matrix m[4], char *err, size_t errlen);

struct cli_report_opts;

/* The report's --q, --k, --v (and --dO) of o, read as cli_inputs_load reads
 * them, bounded by o's --max-mem; o->req's shape and inputs are set from
 * them. one_head and same_length as in cli_inputs_spec (the kernels: "the
 * kernels run one head", 1; the report: NULL, 0). Returns SIM_OK, or an
 * exit status with the message in err. The caller frees m. */
int cli_inputs_load_report(struct cli_report_opts *o, const char *one_head, int same_length,
                           sim_npy_matrix m[4], char *err, size_t errlen);

/* --out FILE: fail before the work, not after it. Returns SIM_OK when path
 * could be written (sim_outfile_check: nothing is created, an existing file
 * is left as it was), or SIM_EFAIL with the message printed. */
int cli_out_writable(const char *path);

/* --out FILE: the forward output O of sh, written (B, H, N, d) for a batch
 * or several heads, or when the queries came from a 4-D file (q_rank 4),
 * else (N, d). Returns SIM_OK, or SIM_EFAIL with the message printed. */
int cli_out_write(const char *path, const float *O, const sim_shape *sh, int q_rank);

/* --block-mask of o (o->block_mask: a pattern or a file) made for o->req's
 * problem, once its shape is settled (after the .npy inputs), and set as
 * o->req.sh.blocks. A pattern is built on the run's common plan tile: --Br
 * x --Bc where given, else the square of --plan same (sim_report_same_tiles).
 * A file is a text file of rows of 0 and 1 separated by spaces, or a 2-D
 * .npy of 0.0 and 1.0, of R x C blocks (sim_bmask_grid says what a grid
 * needs). The mask and its bits live until the process ends (one per
 * command). Returns SIM_OK, or SIM_EUSAGE (a bad pattern, shape, value, an
 * empty file, a query row left no key) or SIM_EFAIL (a file that cannot be
 * read) with a one-line message in err. */
int cli_block_mask_load(struct cli_report_opts *o, char *err, size_t errlen);

/* The same for any command: spec made for sh (sh->blocks set), a pattern on
 * Br x Bc (either alone: square), or the square tile when neither is given
 * (tile < 1: none fits, refused); seed draws random:P. */
int cli_block_mask_make(const char *spec, sim_shape *sh, int64_t Br, int64_t Bc, int64_t tile,
                        uint64_t seed, char *err, size_t errlen);

/* Free what cli_inputs_load read; m may be all empty. */
void cli_inputs_free(sim_npy_matrix m[4]);

/* A text file a command reads whole (a claims file, a figures file): all of
 * path ("-": standard input) as a NUL-terminated malloc'd string. NULL with
 * the message printed ("fasim: CMD PATH: ...") when it cannot be opened or
 * read, is over max bytes (typical says what size such a file has: "a
 * claims file is a few lines"), or holds a NUL byte. */
char *cli_read_text(const char *path, const char *cmd, size_t max, const char *typical);

#endif /* FASIM_CLI_INPUTS_H */
