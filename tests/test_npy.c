/*
 * test_npy.c — sim_npy: round trips, hand-built valid files of each accepted
 * kind, and one test per kind of bad input.
 *
 * Shapes: (N, d) files are rank 2; (B, H, N, d) files are rank 4 (B batch
 * entries of H heads); C order throughout. The rank-4 tests repeat the 2-D
 * ones whose checks depend on the shape: the element count, max_elems, the
 * size check against the data, zero and overflowing dimensions, and the
 * position named for a bad value.
 *
 * Every bad input is checked twice: through sim_npy_read (from a temporary
 * file) and through sim_npy_parse (from memory, with the same name). Both must
 * return -1 with the same one-line message, which starts with the file name,
 * has no newline, and contains the words a user needs to see. Files are built
 * by hand here, byte by byte, so the tests do not depend on the writer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_npy.h"
#include "test_util.h"

#define BIG_LIMIT INT64_MAX

/* ---- building .npy images by hand ---------------------------------------- */

/* A growable byte buffer. */
typedef struct {
    unsigned char *p;
    size_t len, cap;
} bytes;

static void put(bytes *b, const void *src, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        assert_non_null(q);
        b->p = q;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void put_u8(bytes *b, unsigned v)
{
    unsigned char c = (unsigned char)v;
    put(b, &c, 1);
}

static void put_le(bytes *b, uint64_t v, int nbytes)
{
    for (int i = 0; i < nbytes; i++)
        put_u8(b, (unsigned)((v >> (8 * i)) & 0xffu));
}

static void put_f32(bytes *b, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    put_le(b, u, 4);
}

static void put_f64(bytes *b, double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    put_le(b, u, 8);
}

/* Magic, version major.0 and the header length field (2 bytes for 1.0, 4
 * otherwise), then `header` exactly as given (no padding, no newline added). */
static void put_raw_header(bytes *b, int major, const char *header, size_t hlen_field)
{
    put(b, "\x93NUMPY", 6);
    put_u8(b, (unsigned)major);
    put_u8(b, 0);
    put_le(b, hlen_field, major == 1 ? 2 : 4);
    put(b, header, strlen(header));
}

/* A well-formed preamble + header for `dict`, padded with spaces and a final
 * '\n' to a multiple of 64 bytes, as numpy writes it. */
static void put_header(bytes *b, int major, const char *dict)
{
    size_t pre = major == 1 ? 10 : 12;
    size_t total = (pre + strlen(dict) + 1 + 63) / 64 * 64;
    size_t hlen = total - pre;
    char *h = malloc(hlen + 1);
    assert_non_null(h);
    memcpy(h, dict, strlen(dict));
    memset(h + strlen(dict), ' ', hlen - strlen(dict) - 1);
    h[hlen - 1] = '\n';
    h[hlen] = '\0';
    put_raw_header(b, major, h, hlen);
    free(h);
}

/* The numpy-style dict for a dtype and a shape written as text. */
static void put_std(bytes *b, const char *descr, const char *shape)
{
    char dict[256];
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
             descr, shape);
    put_header(b, 1, dict);
}

/* n float32 values 0.5, 1.5, 2.5, ... */
static void put_ramp_f32(bytes *b, int n)
{
    for (int i = 0; i < n; i++)
        put_f32(b, (float)i + 0.5f);
}

/* ---- checking results ---------------------------------------------------- */

/* One-line message for `path` containing every word in words[] (NULL-ended). */
static void check_msg(const char *err, const char *path, const char *const *words)
{
    size_t pl = strlen(path);
    if (strncmp(err, path, pl) != 0 || err[pl] != ':') {
        fprintf(stderr, "  message does not start with \"%s:\": %s\n", path, err);
        fail();
    }
    assert_null(strchr(err, '\n'));
    for (const char *const *w = words; *w; w++) {
        if (!strstr(err, *w)) {
            fprintf(stderr, "  message lacks \"%s\": %s\n", *w, err);
            fail();
        }
    }
}

/* Write img to a temp file `fname`; both sim_npy_read and sim_npy_parse must
 * fail with the same message containing the words (NULL-ended list). */
static void expect_fail_v(const char *fname, const bytes *img, int64_t max_elems,
                          const char *const *words)
{
    char path[512], e1[512], e2[512];
    tu_path(path, sizeof path, fname);
    assert_int_equal(tu_write_file(path, img->p, img->len), 0);

    /* Garbage that must be reset. */
    sim_npy_matrix m = { .rows = 1, .cols = 1, .batch = 1, .heads = 1, .rank = 2,
                         .data = (float *)&m, .src_dtype_bytes = 1 };
    assert_int_equal(sim_npy_read(path, max_elems, &m, e1, sizeof e1), -1);
    assert_null(m.data);
    check_msg(e1, path, words);

    sim_npy_matrix m2 = { .rows = 1, .cols = 1, .batch = 1, .heads = 1, .rank = 2,
                          .data = (float *)&m2, .src_dtype_bytes = 1 };
    assert_int_equal(sim_npy_parse(img->p, img->len, path, max_elems, &m2, e2, sizeof e2), -1);
    assert_null(m2.data);
    assert_string_equal(e1, e2);
    if (getenv("FASIM_TEST_VERBOSE"))        /* to review the wording */
        fprintf(stderr, "  [ok] %s\n", e1 + strlen(path) + 2);
}

#define expect_fail(fname, img, max, ...)                                        \
    do {                                                                         \
        const char *const words_[] = { __VA_ARGS__, NULL };                      \
        expect_fail_v((fname), (img), (max), words_);                            \
    } while (0)

/* Check every shape field of m against rank and dims[0..rank). */
static void check_shape(const sim_npy_matrix *m, int rank, const int64_t *dims)
{
    assert_int_equal(m->rank, rank);
    assert_int_equal(m->batch, rank == 4 ? dims[0] : 1);
    assert_int_equal(m->heads, rank == 4 ? dims[1] : 1);
    assert_int_equal(m->rows, dims[rank - 2]);
    assert_int_equal(m->cols, dims[rank - 1]);
}

/* Write img, read it back through both entry points, which must agree; the
 * result has rank `rank` and shape dims[0..rank). */
static sim_npy_matrix expect_ok_dims(const char *fname, const bytes *img, int rank,
                                     const int64_t *dims, int src_bytes)
{
    char path[512], err[512];
    tu_path(path, sizeof path, fname);
    assert_int_equal(tu_write_file(path, img->p, img->len), 0);
    sim_npy_matrix m;
    int rc = sim_npy_read(path, BIG_LIMIT, &m, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "  unexpected failure: %s\n", err);
    assert_int_equal(rc, 0);
    check_shape(&m, rank, dims);
    assert_int_equal(m.src_dtype_bytes, src_bytes);
    assert_non_null(m.data);

    sim_npy_matrix m2;
    assert_int_equal(sim_npy_parse(img->p, img->len, fname, BIG_LIMIT, &m2, err, sizeof err), 0);
    check_shape(&m2, rank, dims);
    assert_int_equal(tu_compare_bits(fname, m.data, m2.data,
                                     m.batch * m.heads * m.rows * m.cols), 0);
    free(m2.data);
    return m;
}

/* The same for a 2-D file of shape (rows, cols). */
static sim_npy_matrix expect_ok(const char *fname, const bytes *img, int64_t rows,
                                int64_t cols, int src_bytes)
{
    const int64_t dims[2] = { rows, cols };
    return expect_ok_dims(fname, img, 2, dims, src_bytes);
}

/* ---- valid files --------------------------------------------------------- */

static void test_roundtrip_f32(void **state)
{
    (void)state;
    enum { R = 7, C = 5 };
    float a[R * C];
    uint64_t s = 12345;
    for (int i = 0; i < R * C; i++) {
        /* Random values in [-8, 8) with a full 24-bit mantissa spread. */
        a[i] = (float)((double)(tu_rand(&s) >> 40) / 16777216.0 * 16.0 - 8.0);
        if (a[i] == 0.0f)
            a[i] = 1.0f;
    }
    a[0] = -0.0f;               /* the sign of zero must survive */
    a[1] = FLT_MIN / 8.0f;      /* a subnormal */
    a[2] = FLT_MAX;
    a[3] = -FLT_MAX;

    char path[512], err[512];
    tu_path(path, sizeof path, "rt.npy");
    assert_int_equal(sim_npy_write_f32(path, a, R, C, err, sizeof err), 0);

    /* The file is exactly what numpy would write: a 128-byte header. */
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char raw[1024];
    size_t n = fread(raw, 1, sizeof raw, f);
    fclose(f);
    assert_int_equal(n, 128 + 4 * R * C);
    assert_memory_equal(raw, "\x93NUMPY\x01\x00", 8);
    size_t hlen = (size_t)raw[8] | (size_t)raw[9] << 8;
    assert_int_equal((10 + hlen) % 64, 0);
    assert_int_equal(10 + hlen, 128);
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (7, 5), }";
    assert_memory_equal(raw + 10, dict, strlen(dict));
    for (size_t i = 10 + strlen(dict); i < 127; i++)
        assert_int_equal(raw[i], ' ');
    assert_int_equal(raw[127], '\n');
    /* Data little-endian, whatever the host. */
    for (int i = 0; i < R * C; i++) {
        uint32_t u, v;
        memcpy(&u, &a[i], 4);
        v = (uint32_t)raw[128 + 4 * i] | (uint32_t)raw[129 + 4 * i] << 8 |
            (uint32_t)raw[130 + 4 * i] << 16 | (uint32_t)raw[131 + 4 * i] << 24;
        assert_int_equal(u, v);
    }

    sim_npy_matrix m;
    assert_int_equal(sim_npy_read(path, R * C, &m, err, sizeof err), 0);
    assert_int_equal(m.rows, R);
    assert_int_equal(m.cols, C);
    assert_int_equal(m.src_dtype_bytes, 4);
    assert_int_equal(tu_compare_bits("roundtrip", m.data, a, R * C), 0);
    free(m.data);
}

static void test_roundtrip_shapes(void **state)
{
    (void)state;
    /* A few shapes, including one whose header is wider than 64 bytes of
     * padding allows for small numbers. */
    const int64_t shapes[][2] = { { 1, 1 }, { 1, 17 }, { 33, 1 }, { 64, 128 } };
    uint64_t s = 99;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        int64_t r = shapes[k][0], c = shapes[k][1];
        float *a = malloc((size_t)(r * c) * sizeof *a);
        assert_non_null(a);
        for (int64_t i = 0; i < r * c; i++)
            a[i] = (float)tu_rand_range(&s, -1000, 1000) / 7.0f;
        char path[512], err[512];
        tu_path(path, sizeof path, "shapes.npy");
        assert_int_equal(sim_npy_write_f32(path, a, r, c, err, sizeof err), 0);
        sim_npy_matrix m;
        assert_int_equal(sim_npy_read(path, r * c, &m, err, sizeof err), 0);
        assert_int_equal(m.rows, r);
        assert_int_equal(m.cols, c);
        assert_int_equal(tu_compare_bits("shapes", m.data, a, r * c), 0);
        free(m.data);
        free(a);
    }
}

static void test_valid_v1_f8(void **state)
{
    (void)state;
    const double v[6] = { 0.1, -1e30, 1e-40 /* float subnormal */, 3.0e38,
                          123456789.123, -(double)FLT_MAX };
    bytes b = { 0 };
    put_std(&b, "<f8", "(2, 3)");
    for (int i = 0; i < 6; i++)
        put_f64(&b, v[i]);
    sim_npy_matrix m = expect_ok("v1f8.npy", &b, 2, 3, 8);
    float want[6];
    for (int i = 0; i < 6; i++)
        want[i] = (float)v[i];
    assert_int_equal(tu_compare_bits("f8", m.data, want, 6), 0);
    /* And each value is its float64 source rounded to nearest: within half
     * an ulp of float32 relative to it (or within half the smallest
     * subnormal, for the subnormal). */
    for (int i = 0; i < 6; i++)
        assert_true(fabs((double)m.data[i] - v[i]) <= fabs(v[i]) * 0x1p-24 + 0x1p-150);
    free(m.data);
    free(b.p);
}

static void test_valid_v2_f4(void **state)
{
    (void)state;
    bytes b = { 0 };
    put_header(&b, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }");
    assert_int_equal(b.len % 64, 0);
    const float v[6] = { 1.0f, -2.5f, 3.25f, 1e-3f, -7e20f, 42.0f };
    for (int i = 0; i < 6; i++)
        put_f32(&b, v[i]);
    sim_npy_matrix m = expect_ok("v2f4.npy", &b, 3, 2, 4);
    assert_int_equal(tu_compare_bits("v2", m.data, v, 6), 0);
    free(m.data);
    free(b.p);
}

static void test_valid_header_variants(void **state)
{
    (void)state;
    /* Headers numpy would read: keys in any order, double quotes, no spaces,
     * tabs, a trailing comma in the tuple, Python 2 longs, version 3.0, and a
     * header that is not padded to 64 bytes. */
    static const struct {
        int major;
        const char *dict;
    } ok[] = {
        { 1, "{\"shape\":(2,3),\"fortran_order\":False,\"descr\":\"<f4\"}" },
        { 1, "{ 'fortran_order' : False , 'shape' : ( 2 , 3 , ) , 'descr' : '<f4' , }" },
        { 1, "{'descr':\t'<f4',\t'fortran_order':\tFalse,\t'shape':\t(2L, 3L)}" },
        { 3, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" },
        { 2, "{'shape': (2, 3), 'descr': '<f4', 'fortran_order': False}" },
    };
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        bytes b = { 0 };
        put_header(&b, ok[k].major, ok[k].dict);
        put_ramp_f32(&b, 6);
        sim_npy_matrix m = expect_ok("variant.npy", &b, 2, 3, 4);
        for (int i = 0; i < 6; i++)
            assert_true(m.data[i] == (float)i + 0.5f);
        free(m.data);
        free(b.p);
    }
    /* Unpadded: just the dict and '\n'. */
    bytes b = { 0 };
    const char *h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}\n";
    put_raw_header(&b, 1, h, strlen(h));
    put_ramp_f32(&b, 6);
    sim_npy_matrix m = expect_ok("unpadded.npy", &b, 2, 3, 4);
    free(m.data);
    free(b.p);
}

static void test_f8_limits_accepted(void **state)
{
    (void)state;
    /* Exactly +-FLT_MAX as float64 is in range. */
    bytes b = { 0 };
    put_std(&b, "<f8", "(1, 2)");
    put_f64(&b, (double)FLT_MAX);
    put_f64(&b, -(double)FLT_MAX);
    sim_npy_matrix m = expect_ok("f8max.npy", &b, 1, 2, 8);
    assert_true(m.data[0] == FLT_MAX && m.data[1] == -FLT_MAX);
    free(m.data);
    free(b.p);
}

static void test_max_elems_boundary(void **state)
{
    (void)state;
    bytes b = { 0 };
    put_std(&b, "<f4", "(3, 4)");
    put_ramp_f32(&b, 12);
    char path[512], err[512];
    tu_path(path, sizeof path, "limit.npy");
    assert_int_equal(tu_write_file(path, b.p, b.len), 0);
    sim_npy_matrix m;
    assert_int_equal(sim_npy_read(path, 12, &m, err, sizeof err), 0);   /* exactly at the limit */
    free(m.data);
    free(b.p);
}

static void test_roundtrip_4d(void **state)
{
    (void)state;
    enum { B = 2, H = 3, N = 5, D = 4, E = B * H * N * D };
    float a[E];
    uint64_t s = 4242;
    for (int i = 0; i < E; i++)
        a[i] = (float)((double)(tu_rand(&s) >> 40) / 16777216.0 * 16.0 - 8.0);
    a[0] = -0.0f;
    a[E - 1] = FLT_MIN / 8.0f;  /* a subnormal, in the last head */

    char path[512], err[512];
    tu_path(path, sizeof path, "rt4.npy");
    assert_int_equal(sim_npy_write_f32_4d(path, a, B, H, N, D, err, sizeof err), 0);

    /* The header numpy would write for np.save(path, a.reshape(2, 3, 5, 4)). */
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char raw[1024];
    size_t n = fread(raw, 1, sizeof raw, f);
    fclose(f);
    assert_int_equal(n, 128 + 4 * E);
    size_t hlen = (size_t)raw[8] | (size_t)raw[9] << 8;
    assert_int_equal(10 + hlen, 128);
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 5, 4), }";
    assert_memory_equal(raw + 10, dict, strlen(dict));
    assert_int_equal(raw[127], '\n');

    /* Read back with max_elems at exactly B*H*N*d: every field, every bit. */
    sim_npy_matrix m;
    assert_int_equal(sim_npy_read(path, E, &m, err, sizeof err), 0);
    assert_int_equal(m.rank, 4);
    assert_int_equal(m.batch, B);
    assert_int_equal(m.heads, H);
    assert_int_equal(m.rows, N);
    assert_int_equal(m.cols, D);
    assert_int_equal(m.src_dtype_bytes, 4);
    assert_non_null(m.data);
    assert_int_equal(tu_compare_bits("roundtrip 4d", m.data, a, E), 0);
    /* Head (b, h) starts at ((b*H + h)*N)*d: spot-check head (1, 2), row 3. */
    assert_true(m.data[((1 * H + 2) * N + 3) * D + 1] == a[((1 * H + 2) * N + 3) * D + 1]);
    free(m.data);

    /* A (1, 1, N, d) file stays rank 4. */
    assert_int_equal(sim_npy_write_f32_4d(path, a, 1, 1, N, D, err, sizeof err), 0);
    assert_int_equal(sim_npy_read(path, BIG_LIMIT, &m, err, sizeof err), 0);
    const int64_t one[4] = { 1, 1, N, D };
    check_shape(&m, 4, one);
    assert_int_equal(tu_compare_bits("roundtrip 1x1", m.data, a, N * D), 0);
    free(m.data);
}

static void test_valid_f8_4d(void **state)
{
    (void)state;
    /* (2, 1, 2, 3) float64, hand-built: 12 values in C order. */
    double v[12];
    for (int i = 0; i < 12; i++)
        v[i] = (i % 2 ? -1.0 : 1.0) * (0.1 + i) * 1e3;
    v[7] = 1e-40;               /* a float subnormal */
    v[11] = -(double)FLT_MAX;
    bytes b = { 0 };
    put_std(&b, "<f8", "(2, 1, 2, 3)");
    for (int i = 0; i < 12; i++)
        put_f64(&b, v[i]);
    const int64_t dims[4] = { 2, 1, 2, 3 };
    sim_npy_matrix m = expect_ok_dims("v1f8_4d.npy", &b, 4, dims, 8);
    float want[12];
    for (int i = 0; i < 12; i++)
        want[i] = (float)v[i];
    assert_int_equal(tu_compare_bits("f8 4d", m.data, want, 12), 0);
    free(m.data);
    free(b.p);

    /* The same shape in version 2.0 with a trailing comma in the tuple. */
    bytes c = { 0 };
    put_header(&c, 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1, 2, 3,), }");
    for (int i = 0; i < 12; i++)
        put_f64(&c, v[i]);
    m = expect_ok_dims("v2f8_4d.npy", &c, 4, dims, 8);
    assert_int_equal(tu_compare_bits("f8 4d v2", m.data, want, 12), 0);
    free(m.data);
    free(c.p);
}

/* ---- bad inputs ---------------------------------------------------------- */

static void test_missing_file(void **state)
{
    (void)state;
    char path[512], err[512];
    tu_path(path, sizeof path, "does-not-exist.npy");
    sim_npy_matrix m;
    assert_int_equal(sim_npy_read(path, BIG_LIMIT, &m, err, sizeof err), -1);
    assert_null(m.data);
    const char *const words[] = { "cannot open", "No such file", NULL };
    check_msg(err, path, words);
}

static void test_directory_and_device(void **state)
{
    (void)state;
    char err[512];
    sim_npy_matrix m;
    assert_int_equal(sim_npy_read(tu_tmpdir(), BIG_LIMIT, &m, err, sizeof err), -1);
    const char *const w1[] = { "directory", NULL };
    check_msg(err, tu_tmpdir(), w1);
    FILE *f = fopen("/dev/null", "rb");
    if (f) {
        fclose(f);
        assert_int_equal(sim_npy_read("/dev/null", BIG_LIMIT, &m, err, sizeof err), -1);
        const char *const w2[] = { "regular file", NULL };
        check_msg(err, "/dev/null", w2);
    }
}

static void test_not_npy(void **state)
{
    (void)state;
    bytes b = { 0 };
    put(&b, "hello, world: this is not an array\n", 35);
    expect_fail("text.npy", &b, BIG_LIMIT, "not an .npy file", "magic");
    free(b.p);

    bytes e = { 0 };
    expect_fail("empty.npy", &e, BIG_LIMIT, "not an .npy file", "empty");

    bytes c = { 0 };    /* almost the magic */
    put(&c, "\x93NUMPX\x01\x00\x10\x00", 10);
    put(&c, "0123456789abcde\n", 16);
    expect_fail("almost.npy", &c, BIG_LIMIT, "magic");
    free(c.p);

    bytes d = { 0 };    /* the start of something else, shorter than the magic */
    put(&d, "PK", 2);
    expect_fail("zip.npy", &d, BIG_LIMIT, "magic");
    free(d.p);
}

static void test_truncated_header(void **state)
{
    (void)state;
    bytes full = { 0 };
    put_std(&full, "<f4", "(2, 3)");
    put_ramp_f32(&full, 6);
    /* Cut inside the magic, inside the version, inside the length field. */
    const size_t cuts[] = { 3, 7, 9 };
    for (size_t k = 0; k < 3; k++) {
        bytes b = { full.p, cuts[k], cuts[k] };
        expect_fail("cut.npy", &b, BIG_LIMIT, "truncated header");
    }
    /* A version 2.0 preamble needs 12 bytes. */
    bytes v2 = { 0 };
    put(&v2, "\x93NUMPY\x02\x00\x40\x00\x00", 11);
    expect_fail("cutv2.npy", &v2, BIG_LIMIT, "truncated header", "2.0");
    /* Cut inside the header text. */
    bytes mid = { full.p, 40, 40 };
    expect_fail("cutmid.npy", &mid, BIG_LIMIT, "truncated header", "past the end");
    free(v2.p);
    free(full.p);
}

static void test_header_len_past_eof(void **state)
{
    (void)state;
    /* The length field claims 1000 bytes of header; the file has 70. */
    bytes b = { 0 };
    put_raw_header(&b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }\n", 1000);
    put_f32(&b, 1.0f);
    expect_fail("hlen.npy", &b, BIG_LIMIT, "header length 1000", "past the end");
    free(b.p);
    /* Version 2.0 with an absurd 4-byte length is refused without reading it. */
    bytes c = { 0 };
    put_raw_header(&c, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }\n",
                   0xfffffff0u);
    put_f32(&c, 1.0f);
    expect_fail("hlen2.npy", &c, BIG_LIMIT, "header length 4294967280", "limit");
    free(c.p);
}

static void test_truncated_data(void **state)
{
    (void)state;
    bytes b = { 0 };
    put_std(&b, "<f4", "(3, 4)");
    put_ramp_f32(&b, 10);
    expect_fail("short.npy", &b, BIG_LIMIT, "truncated", "3 x 4 float32 = 48 bytes",
                "file has 40");
    free(b.p);
    bytes c = { 0 };
    put_std(&c, "<f8", "(2, 2)");
    for (int i = 0; i < 3; i++)
        put_f64(&c, 1.0);
    put(&c, "\x00\x00\x00", 3);
    expect_fail("short8.npy", &c, BIG_LIMIT, "truncated", "2 x 2 float64 = 32 bytes",
                "file has 27");
    free(c.p);
}

static void test_trailing_data(void **state)
{
    (void)state;
    bytes b = { 0 };
    put_std(&b, "<f4", "(3, 4)");
    put_ramp_f32(&b, 12);
    put_u8(&b, 0);
    expect_fail("long.npy", &b, BIG_LIMIT, "trailing data", "48 bytes", "file has 49", "(1 extra)");
    free(b.p);
}

static void test_big_endian(void **state)
{
    (void)state;
    const char *descr[] = { ">f4", ">f8" };
    for (int k = 0; k < 2; k++) {
        bytes b = { 0 };
        put_std(&b, descr[k], "(2, 2)");
        put_ramp_f32(&b, k ? 8 : 4);
        expect_fail("be.npy", &b, BIG_LIMIT, "big-endian", descr[k], "astype('<f4')");
        free(b.p);
    }
}

static void test_fortran_order(void **state)
{
    (void)state;
    bytes b = { 0 };
    put_header(&b, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }");
    put_ramp_f32(&b, 6);
    expect_fail("fortran.npy", &b, BIG_LIMIT, "Fortran", "np.ascontiguousarray");
    free(b.p);
}

static void test_unsupported_dtype(void **state)
{
    (void)state;
    /* (descr, bytes per element) so the data size would be right. */
    static const struct {
        const char *descr;
        int size;
    } bad[] = { { "<i4", 4 }, { "<f2", 2 }, { "|u1", 1 }, { "=f4", 4 }, { "<c8", 8 },
                { "f4", 4 }, { "<f16", 16 }, { "|b1", 1 }, { ">i8", 8 }, { "", 4 } };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        bytes b = { 0 };
        put_std(&b, bad[k].descr, "(2, 2)");
        for (int i = 0; i < 4 * bad[k].size; i++)
            put_u8(&b, 0);
        char quoted[32];
        snprintf(quoted, sizeof quoted, "'%s'", bad[k].descr);
        expect_fail("dtype.npy", &b, BIG_LIMIT, "unsupported dtype", quoted, "'<f4'", "'<f8'");
        free(b.p);
    }
    /* A structured dtype: the descr is a list. */
    bytes s = { 0 };
    put_header(&s, 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 2), }");
    put_ramp_f32(&s, 4);
    expect_fail("struct.npy", &s, BIG_LIMIT, "structured dtype", "'<f4'");
    free(s.p);
}

static void test_rank0(void **state)
{
    (void)state;
    bytes b = { 0 };
    put_std(&b, "<f4", "()");
    put_f32(&b, 1.0f);
    expect_fail("r0.npy", &b, BIG_LIMIT, "shape () has rank 0", "(N, d)");
    free(b.p);
}

static void test_rank1(void **state)
{
    (void)state;
    bytes b = { 0 };
    put_std(&b, "<f4", "(5,)");
    put_ramp_f32(&b, 5);
    expect_fail("r1.npy", &b, BIG_LIMIT, "shape (5,) has rank 1", "(N, d)", "(B, H, N, d)");
    free(b.p);
}

static void test_rank3(void **state)
{
    (void)state;
    bytes b = { 0 };
    put_std(&b, "<f4", "(2, 3, 4)");
    put_ramp_f32(&b, 24);
    expect_fail("r3.npy", &b, BIG_LIMIT, "shape (2, 3, 4) has rank 3", "(N, d)", "(B, H, N, d)");
    free(b.p);
    /* Newlines inside the header must not leak into the one-line message. */
    bytes c = { 0 };
    put_std(&c, "<f4", "(2,\n 3,\r\n 4)");
    put_ramp_f32(&c, 24);
    expect_fail("r3nl.npy", &c, BIG_LIMIT, "shape (2,  3,   4) has rank 3");
    free(c.p);
    /* A long shape is quoted in part. */
    bytes d = { 0 };
    put_std(&d, "<f4", "(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2)");
    put_ramp_f32(&d, 2);
    expect_fail("r20.npy", &d, BIG_LIMIT, "1, 1, 1,...", "rank 20");
    free(d.p);
}

static void test_rank5(void **state)
{
    (void)state;
    /* One more than (B, H, N, d), with the data size right for it. */
    bytes b = { 0 };
    put_std(&b, "<f4", "(1, 2, 3, 4, 5)");
    put_ramp_f32(&b, 120);
    expect_fail("r5.npy", &b, BIG_LIMIT, "shape (1, 2, 3, 4, 5) has rank 5",
                "fasim needs (N, d) or (B, H, N, d)");
    free(b.p);
}

static void test_zero_dimension(void **state)
{
    (void)state;
    const char *shapes[] = { "(0, 4)", "(4, 0)", "(0, 0)" };
    for (int k = 0; k < 3; k++) {
        bytes b = { 0 };
        put_std(&b, "<f4", shapes[k]);
        expect_fail("zero.npy", &b, BIG_LIMIT, "zero-sized dimension", shapes[k]);
        free(b.p);
    }
}

static void test_nan(void **state)
{
    (void)state;
    bytes b = { 0 };
    put_std(&b, "<f4", "(3, 4)");
    for (int i = 0; i < 12; i++)
        put_f32(&b, i == 6 ? NAN : 1.0f);      /* row 1, column 2 */
    expect_fail("nan.npy", &b, BIG_LIMIT, "holds NaN at row 1, column 2");
    free(b.p);
    bytes c = { 0 };
    put_std(&c, "<f8", "(2, 2)");
    for (int i = 0; i < 4; i++)
        put_f64(&c, i == 3 ? -NAN : 2.0);
    expect_fail("nan8.npy", &c, BIG_LIMIT, "holds NaN at row 1, column 1");
    free(c.p);
}

static void test_inf(void **state)
{
    (void)state;
    bytes b = { 0 };
    put_std(&b, "<f4", "(2, 3)");
    for (int i = 0; i < 6; i++)
        put_f32(&b, i == 0 ? -INFINITY : 1.0f);
    expect_fail("inf.npy", &b, BIG_LIMIT, "holds -Inf at row 0, column 0");
    free(b.p);
    bytes c = { 0 };
    put_std(&c, "<f8", "(2, 3)");
    for (int i = 0; i < 6; i++)
        put_f64(&c, i == 5 ? INFINITY : 1.0);
    expect_fail("inf8.npy", &c, BIG_LIMIT, "holds Inf at row 1, column 2");
    free(c.p);
}

static void test_f8_out_of_range(void **state)
{
    (void)state;
    const double big[] = { 1e39, -1e300, nextafter((double)FLT_MAX, INFINITY) };
    for (int k = 0; k < 3; k++) {
        bytes b = { 0 };
        put_std(&b, "<f8", "(3, 2)");
        for (int i = 0; i < 6; i++)
            put_f64(&b, i == 5 ? big[k] : 0.5);
        expect_fail("range.npy", &b, BIG_LIMIT, "float64 value", "row 2, column 1",
                    "outside float32 range");
        free(b.p);
    }
}

static void test_exceeds_max_elems(void **state)
{
    (void)state;
    bytes b = { 0 };
    put_std(&b, "<f4", "(3, 4)");
    put_ramp_f32(&b, 12);
    expect_fail("max.npy", &b, 11, "3 x 4 = 12 elements", "limit of 11", "max_elems");
    free(b.p);
}

static void test_huge_shape_tiny_data(void **state)
{
    (void)state;
    /* 10^18 elements claimed, 8 bytes present. With no element limit, the
     * size check against the real data must refuse it before any allocation
     * (under ASan, a 4 EB malloc would abort the test). */
    bytes b = { 0 };
    put_std(&b, "<f4", "(1000000000, 1000000000)");
    put_f32(&b, 1.0f);
    put_f32(&b, 2.0f);
    expect_fail("huge.npy", &b, BIG_LIMIT, "truncated",
                "1000000000 x 1000000000 float32 = 4000000000000000000 bytes", "file has 8");
    /* With a realistic limit it is the limit that refuses it. */
    expect_fail("huge.npy", &b, (int64_t)1 << 24, "max_elems");
    free(b.p);
}

static void test_count_overflow(void **state)
{
    (void)state;
    const char *shapes[] = { "(4294967296, 4294967296)", "(9223372036854775807, 2)",
                             "(3037000500, 3037000500)" };
    for (int k = 0; k < 3; k++) {
        bytes b = { 0 };
        put_std(&b, "<f8", shapes[k]);
        put_f64(&b, 1.0);
        expect_fail("overflow.npy", &b, BIG_LIMIT, "overflows the element count");
        free(b.p);
    }
    /* A dimension that does not fit in 64 bits at all. */
    bytes c = { 0 };
    put_std(&c, "<f4", "(99999999999999999999, 1)");
    put_f32(&c, 1.0f);
    expect_fail("dim64.npy", &c, BIG_LIMIT, "malformed .npy header", "too large");
    free(c.p);
}

static void test_zero_dimension_4d(void **state)
{
    (void)state;
    /* Each dimension zero in turn; the message names which one. */
    static const char *const bad[][2] = {
        { "(0, 2, 3, 4)", "B = 0" }, { "(2, 0, 3, 4)", "H = 0" },
        { "(2, 3, 0, 4)", "N = 0" }, { "(2, 3, 4, 0)", "d = 0" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        bytes b = { 0 };
        put_std(&b, "<f4", bad[k][0]);
        expect_fail("zero4.npy", &b, BIG_LIMIT, "zero-sized dimension", bad[k][0], bad[k][1],
                    "B, H, N and d all >= 1");
        free(b.p);
    }
}

static void test_exceeds_max_elems_4d(void **state)
{
    (void)state;
    /* The limit bounds B*H*N*d, not N*d: 120 elements, limit 119. */
    bytes b = { 0 };
    put_std(&b, "<f4", "(2, 3, 5, 4)");
    put_ramp_f32(&b, 120);
    expect_fail("max4.npy", &b, 119, "2 x 3 x 5 x 4 = 120 elements", "limit of 119",
                "max_elems");
    /* A limit that one head (5 x 4 = 20) would meet is far too small. */
    expect_fail("max4.npy", &b, 20, "= 120 elements", "limit of 20");
    free(b.p);
}

static void test_data_size_4d(void **state)
{
    (void)state;
    bytes b = { 0 };
    put_std(&b, "<f4", "(2, 1, 2, 2)");
    put_ramp_f32(&b, 7);
    expect_fail("short4.npy", &b, BIG_LIMIT, "truncated", "2 x 1 x 2 x 2 float32 = 32 bytes",
                "file has 28");
    put_ramp_f32(&b, 2);
    expect_fail("long4.npy", &b, BIG_LIMIT, "trailing data", "32 bytes", "file has 36",
                "(4 extra)");
    free(b.p);
}

static void test_huge_shape_tiny_data_4d(void **state)
{
    (void)state;
    /* 10^18 elements over four dimensions, 8 bytes present, no element
     * limit: refused by the size check before any allocation (under ASan, a
     * 4 EB malloc would abort the test), exactly as in the 2-D case. */
    bytes b = { 0 };
    put_std(&b, "<f4", "(1000000, 1000000, 1000, 1000)");
    put_f32(&b, 1.0f);
    put_f32(&b, 2.0f);
    expect_fail("huge4.npy", &b, BIG_LIMIT, "truncated",
                "1000000 x 1000000 x 1000 x 1000 float32 = 4000000000000000000 bytes",
                "file has 8");
    expect_fail("huge4.npy", &b, (int64_t)1 << 24, "max_elems");
    free(b.p);
}

static void test_count_overflow_4d(void **state)
{
    (void)state;
    /* Products that overflow only once the third or fourth dimension is in:
     * 2^64; 2^63 (one past INT64_MAX); 2^62, which fits in int64_t but not
     * in SIZE_MAX / 8 bytes of float64; and N*d alone overflowing. */
    const char *shapes[] = { "(65536, 65536, 65536, 65536)", "(2097152, 2097152, 2097152, 2)",
                             "(1048576, 1048576, 1048576, 4)", "(1, 1, 3037000500, 3037000500)",
                             "(9223372036854775807, 1, 1, 2)" };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        bytes b = { 0 };
        put_std(&b, "<f8", shapes[k]);
        put_f64(&b, 1.0);
        expect_fail("overflow4.npy", &b, BIG_LIMIT, "overflows the element count", shapes[k]);
        free(b.p);
    }
}

static void test_bad_values_4d(void **state)
{
    (void)state;
    /* (2, 3, 2, 2): element 45 is batch 1, head 2, row 0, column 1. */
    enum { AT = ((1 * 3 + 2) * 2 + 0) * 2 + 1 };
    bytes b = { 0 };
    put_std(&b, "<f4", "(2, 3, 2, 2)");
    for (int i = 0; i < 24; i++)
        put_f32(&b, i == AT ? NAN : 1.0f);
    expect_fail("nan4.npy", &b, BIG_LIMIT, "holds NaN at batch 1, head 2, row 0, column 1");
    free(b.p);
    bytes c = { 0 };
    put_std(&c, "<f8", "(2, 3, 2, 2)");
    for (int i = 0; i < 24; i++)
        put_f64(&c, i == 23 ? 1e39 : 0.5);
    expect_fail("range4.npy", &c, BIG_LIMIT, "float64 value",
                "batch 1, head 2, row 1, column 1", "outside float32 range");
    free(c.p);
}

static void test_malformed_header(void **state)
{
    (void)state;
    /* Each dict is otherwise fine for a (2, 3) float32 array with 24 data
     * bytes; the second string is a word the message must contain. */
    static const char *const bad[][2] = {
        { "{'descr': '<f4', 'shape': (2, 3), }", "'fortran_order' key is missing" },
        { "{'fortran_order': False, 'shape': (2, 3), }", "'descr' key is missing" },
        { "{'descr': '<f4', 'fortran_order': False, }", "'shape' key is missing" },
        { "{}", "missing" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}", "unexpected key" },
        { "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", "duplicate key" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ", "expected a quoted string" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)", "expected ',' or '}'" },
        { "{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3)}", "True or False" },
        { "{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2, 3)}", "True or False" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (6)}", "trailing comma" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, -3)}", "negative" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}", "tuple" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", "expected ',' or ')'" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3x)}", "expected a dimension" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2,, 3)}", "expected a dimension" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} x", "after the closing" },
        { "{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3)}", "expected ',' or '}'" },
        { "{'descr' '<f4', 'fortran_order': False, 'shape': (2, 3)}", "expected ':'" },
        { "{'descr': \"<f4, 'fortran_order': False, 'shape': (2, 3)}", "unterminated string" },
        { "{'descr': '<f\\x34', 'fortran_order': False, 'shape': (2, 3)}", "unsupported character" },
        { "{descr: '<f4', 'fortran_order': False, 'shape': (2, 3)}", "expected a quoted string" },
        { "'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)", "expected '{'" },
        { "", "expected '{'" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        bytes b = { 0 };
        put_header(&b, 1, bad[k][0]);
        put_ramp_f32(&b, 6);
        expect_fail("malformed.npy", &b, BIG_LIMIT, "malformed .npy header", bad[k][1]);
        free(b.p);
    }
    /* A header that does not end with '\n'. */
    bytes n = { 0 };
    const char *h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}    ";
    put_raw_header(&n, 1, h, strlen(h));
    put_ramp_f32(&n, 6);
    expect_fail("nonl.npy", &n, BIG_LIMIT, "malformed .npy header", "does not end");
    free(n.p);
    /* A zero-length header. */
    bytes z = { 0 };
    put_raw_header(&z, 1, "", 0);
    expect_fail("nohdr.npy", &z, BIG_LIMIT, "malformed .npy header", "does not end");
    free(z.p);
    /* A control byte inside the header (it would break a one-line message). */
    bytes c = { 0 };
    put_header(&c, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), '\x01': 1}");
    put_ramp_f32(&c, 6);
    expect_fail("ctrl.npy", &c, BIG_LIMIT, "byte 0x01", "not printable");
    free(c.p);
}

static void test_bad_version(void **state)
{
    (void)state;
    const unsigned char versions[][2] = { { 0, 0 }, { 4, 0 }, { 1, 1 }, { 255, 0 } };
    for (int k = 0; k < 4; k++) {
        bytes b = { 0 };
        put_std(&b, "<f4", "(1, 1)");
        put_f32(&b, 1.0f);
        b.p[6] = versions[k][0];
        b.p[7] = versions[k][1];
        char v[32];
        snprintf(v, sizeof v, "version %d.%d", versions[k][0], versions[k][1]);
        expect_fail("version.npy", &b, BIG_LIMIT, "unsupported .npy format", v);
        free(b.p);
    }
}

static void test_err_buffer_handling(void **state)
{
    (void)state;
    bytes b = { 0 };
    put_std(&b, ">f4", "(2, 2)");
    put_ramp_f32(&b, 4);
    char path[512];
    tu_path(path, sizeof path, "errbuf.npy");
    assert_int_equal(tu_write_file(path, b.p, b.len), 0);
    sim_npy_matrix m;
    /* err may be NULL. */
    assert_int_equal(sim_npy_read(path, BIG_LIMIT, &m, NULL, 0), -1);
    assert_int_equal(sim_npy_parse(b.p, b.len, "x", BIG_LIMIT, &m, NULL, 0), -1);
    assert_null(m.data);
    /* A short buffer gets a truncated, terminated message. */
    char small[8];
    memset(small, 'z', sizeof small);
    assert_int_equal(sim_npy_parse(b.p, b.len, "abcdefghij", BIG_LIMIT, &m, small, sizeof small), -1);
    assert_string_equal(small, "abcdefg");
    /* A NULL buffer of length 0 is an empty input, not a crash. */
    char err[256];
    assert_int_equal(sim_npy_parse(NULL, 0, "null", BIG_LIMIT, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "magic"));
    free(b.p);
}

static void test_write_errors(void **state)
{
    (void)state;
    float a[4] = { 1, 2, 3, 4 };
    char path[512], err[512];
    tu_path(path, sizeof path, "no-such-dir/out.npy");
    assert_int_equal(sim_npy_write_f32(path, a, 2, 2, err, sizeof err), -1);
    const char *const w1[] = { "cannot open for writing", NULL };
    check_msg(err, path, w1);

    tu_path(path, sizeof path, "zero.npy");
    assert_int_equal(sim_npy_write_f32(path, a, 0, 2, err, sizeof err), -1);
    const char *const w2[] = { "(0, 2)", ">= 1", NULL };
    check_msg(err, path, w2);
    assert_int_equal(sim_npy_write_f32(path, a, INT64_MAX, 2, err, sizeof err), -1);
    const char *const w3[] = { "overflows", NULL };
    check_msg(err, path, w3);

    /* The 4-D writer: every dimension checked, the product over all four. */
    assert_int_equal(sim_npy_write_f32_4d(path, a, 1, 0, 2, 2, err, sizeof err), -1);
    const char *const w5[] = { "(1, 0, 2, 2)", "every dimension must be >= 1", NULL };
    check_msg(err, path, w5);
    assert_int_equal(sim_npy_write_f32_4d(path, a, 65536, 65536, 65536, 65536, err,
                                          sizeof err), -1);
    const char *const w6[] = { "(65536, 65536, 65536, 65536)", "overflows", NULL };
    check_msg(err, path, w6);
    assert_int_equal(sim_npy_write_f32_4d(path, NULL, 1, 1, 2, 2, err, sizeof err), -1);
    const char *const w7[] = { "no data", NULL };
    check_msg(err, path, w7);

    /* /dev/full accepts the open and fails the write (ENOSPC). */
    FILE *f = fopen("/dev/full", "wb");
    if (f) {
        fclose(f);
        assert_int_equal(sim_npy_write_f32("/dev/full", a, 2, 2, err, sizeof err), -1);
        const char *const w4[] = { "write failed", NULL };
        check_msg(err, "/dev/full", w4);
        assert_int_equal(sim_npy_write_f32_4d("/dev/full", a, 1, 1, 2, 2, err, sizeof err), -1);
        check_msg(err, "/dev/full", w4);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_f32),
        cmocka_unit_test(test_roundtrip_shapes),
        cmocka_unit_test(test_valid_v1_f8),
        cmocka_unit_test(test_valid_v2_f4),
        cmocka_unit_test(test_valid_header_variants),
        cmocka_unit_test(test_f8_limits_accepted),
        cmocka_unit_test(test_max_elems_boundary),
        cmocka_unit_test(test_roundtrip_4d),
        cmocka_unit_test(test_valid_f8_4d),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_directory_and_device),
        cmocka_unit_test(test_not_npy),
        cmocka_unit_test(test_truncated_header),
        cmocka_unit_test(test_header_len_past_eof),
        cmocka_unit_test(test_truncated_data),
        cmocka_unit_test(test_trailing_data),
        cmocka_unit_test(test_big_endian),
        cmocka_unit_test(test_fortran_order),
        cmocka_unit_test(test_unsupported_dtype),
        cmocka_unit_test(test_rank0),
        cmocka_unit_test(test_rank1),
        cmocka_unit_test(test_rank3),
        cmocka_unit_test(test_rank5),
        cmocka_unit_test(test_zero_dimension),
        cmocka_unit_test(test_nan),
        cmocka_unit_test(test_inf),
        cmocka_unit_test(test_f8_out_of_range),
        cmocka_unit_test(test_exceeds_max_elems),
        cmocka_unit_test(test_huge_shape_tiny_data),
        cmocka_unit_test(test_count_overflow),
        cmocka_unit_test(test_zero_dimension_4d),
        cmocka_unit_test(test_exceeds_max_elems_4d),
        cmocka_unit_test(test_data_size_4d),
        cmocka_unit_test(test_huge_shape_tiny_data_4d),
        cmocka_unit_test(test_count_overflow_4d),
        cmocka_unit_test(test_bad_values_4d),
        cmocka_unit_test(test_malformed_header),
        cmocka_unit_test(test_bad_version),
        cmocka_unit_test(test_err_buffer_handling),
        cmocka_unit_test(test_write_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
