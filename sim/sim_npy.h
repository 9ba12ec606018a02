/*
 * sim_npy.h — NumPy .npy files in and out (format versions 1.0, 2.0, 3.0).
 *
 * fasim reads 2-D arrays of little-endian float32 ('<f4') or float64 ('<f8')
 * in C order, and writes float32. Everything else is refused with a message
 * that names the file and the problem: not an .npy file, truncated, a
 * big-endian or unsupported dtype, Fortran order, a rank other than 2, a shape
 * that does not match the data, and NaN or Inf values (with their position).
 *
 * Memory: the header's claimed size is checked against the file's real size
 * before anything is allocated, so a lying header cannot cause a huge
 * allocation; max_elems bounds the array itself.
 */
#ifndef FASIM_SIM_NPY_H
#define FASIM_SIM_NPY_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t rows, cols;
    float *data;          /* rows * cols floats, row-major; owned (free()) */
    int src_dtype_bytes;  /* 4 or 8: what the file held */
} sim_npy_matrix;

/* Read a 2-D float32/float64 array from `path` into out (values converted to
 * float; a float64 value outside float range is an error, as NaN and Inf are).
 * Returns 0, or -1 with a one-line message in err (no trailing newline). */
int sim_npy_read(const char *path, int64_t max_elems, sim_npy_matrix *out,
                 char *err, size_t errlen);

/* Parse an .npy image already in memory (the same checks; used by the reader
 * and by the fuzz target). `name` appears in messages. */
int sim_npy_parse(const unsigned char *buf, size_t len, const char *name,
                  int64_t max_elems, sim_npy_matrix *out, char *err, size_t errlen);

/* Write a (rows, cols) float32 array as .npy version 1.0. Returns 0 or -1. */
int sim_npy_write_f32(const char *path, const float *data, int64_t rows,
                      int64_t cols, char *err, size_t errlen);

#endif /* FASIM_SIM_NPY_H */
