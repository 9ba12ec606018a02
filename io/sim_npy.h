/*
 * sim_npy.h — NumPy .npy files in and out (format versions 1.0, 2.0, 3.0).
 *
 * Shapes: N rows (sequence positions), d columns (head dimension), and for
 * batched inputs B (batch) and H (heads). All arrays are row-major (C order).
 *
 * fasim reads arrays of rank 2, shape (N, d), or rank 4, shape (B, H, N, d),
 * of little-endian float32 ('<f4') or float64 ('<f8') in C order, and writes
 * float32 of either rank. Everything else is refused with a message that
 * names the file and the problem: not an .npy file, truncated, a big-endian or
 * unsupported dtype, Fortran order, a rank other than 2 or 4, a zero-sized
 * dimension, a shape that does not match the data, and NaN or Inf values
 * (with their position).
 *
 * Memory: the header's claimed size (the product of all its dimensions) is
 * checked for overflow and against the file's real size before anything is
 * allocated, so a lying header cannot cause a huge allocation; max_elems
 * bounds the array itself (all dimensions multiplied).
 */
#ifndef FASIM_SIM_NPY_H
#define FASIM_SIM_NPY_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t rows, cols;   /* N and d of each head */
    int64_t batch, heads; /* B and H; both 1 for a 2-D file */
    int rank;             /* 2 or 4: what the file held */
    /* batch * heads * rows * cols floats in C order, so head (b, h) is the
     * (rows, cols) row-major matrix starting at data + ((b*heads + h)*rows)*cols.
     * Owned by the caller (free()). */
    float *data;
    int src_dtype_bytes;  /* 4 or 8: what the file held */
} sim_npy_matrix;

/* Read a float32/float64 array of shape (N, d) or (B, H, N, d) from `path`
 * into out (values converted to float; a float64 value outside float range is
 * an error, as NaN and Inf are). max_elems bounds B*H*N*d (N*d for a 2-D
 * file). Returns 0, or -1 with a one-line message in err (no trailing
 * newline); on -1, out->data is NULL and there is nothing to free. */
int sim_npy_read(const char *path, int64_t max_elems, sim_npy_matrix *out,
                 char *err, size_t errlen);

/* Parse an .npy image already in memory (the same checks; used by the reader
 * and by the fuzz target). `name` appears in messages. */
int sim_npy_parse(const unsigned char *buf, size_t len, const char *name,
                  int64_t max_elems, sim_npy_matrix *out, char *err, size_t errlen);

/* Write a (rows, cols) float32 array as .npy version 1.0. Every dimension
 * must be >= 1 (the reader refuses empty arrays). Returns 0, or -1 with a
 * one-line message in err; a failed write may leave a partial file. */
int sim_npy_write_f32(const char *path, const float *data, int64_t rows,
                      int64_t cols, char *err, size_t errlen);

/* The same for a (B, H, rows, cols) float32 array, data in C order as in
 * sim_npy_matrix. The file has rank 4 even when B = H = 1. */
int sim_npy_write_f32_4d(const char *path, const float *data, int64_t B, int64_t H,
                         int64_t rows, int64_t cols, char *err, size_t errlen);

#endif /* FASIM_SIM_NPY_H */
