/*
 * sim_npy.c — NumPy .npy reader and writer. See sim_npy.h for the contract.
 *
 * The format (numpy/lib/format.py): the magic "\x93NUMPY", one byte each of
 * major and minor version, the header length (2 bytes little-endian for 1.0,
 * 4 bytes for 2.0 and 3.0), then that many bytes of header: a Python dict
 * literal such as
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * padded with spaces and ending in '\n'. The raw array data follows directly.
 *
 * Shapes: fasim accepts rank 2, (N, d), and rank 4, (B, H, N, d): B batch
 * entries of H heads, each an (N, d) matrix; C order throughout, so the data
 * is B*H matrices of N rows of d values, one after another.
 *
 * Everything here is strict on purpose: fasim feeds these arrays into a
 * simulator whose results are compared bit for bit, so a silently
 * misinterpreted file (wrong byte order, transposed, padded with garbage)
 * would be far worse than a refusal. Each refusal is one line that starts with
 * the file name and says what to do about it where that is obvious.
 *
 * Memory safety: the header is parsed and checked against the real length of
 * the input (in memory, or the file's size from fstat) before the data array
 * is allocated, so the allocation is bounded by both max_elems and the bytes
 * actually present. All multi-byte values are assembled from bytes, so
 * neither the host's byte order nor the buffer's alignment matters.
 */
#define _POSIX_C_SOURCE 200809L
#include "sim_npy.h"
#include "sim_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes before the header text: magic (6), version (2), length (2 or 4). */
#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_PREAMBLE_V1 10
#define NPY_PREAMBLE_V2 12
/* The longest header accepted. A rank-2 or rank-4 float array's header is
 * under 192 bytes even with 19-digit dimensions (128 for realistic ones);
 * numpy itself refuses headers over 10000 bytes by default. The bound also
 * limits how much sim_npy_read reads before the header has been checked. */
#define NPY_HEADER_MAX 65536
/* The writer pads the whole header (preamble + dict + '\n') to this. */
#define NPY_ALIGN 64
/* At most this many characters of file-supplied text go into a message. */
#define NPY_QUOTE_MAX 40
#define NPY_QUOTE_BUF (NPY_QUOTE_MAX + 4)   /* room for "..." and the NUL */
/* The highest rank fasim reads, (B, H, N, d); parse_shape keeps this many
 * dimensions and only counts the rest, for the message. */
#define NPY_RANK_MAX 4
/* Room for NPY_RANK_MAX dimensions of up to 19 digits joined by " x " (or
 * ", " in parentheses) and the NUL: 4 * 19 + 3 * 3 + 2 + 1 = 88. */
#define NPY_DIMS_BUF 96

#if defined(__GNUC__)
#define NPY_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define NPY_PRINTF(f, a)
#endif

/* Write "name: <message>" into err (if err is non-NULL and errlen > 0).
 * Messages are one line with no trailing newline; callers only pass text
 * that has been checked to be printable ASCII. Always returns -1 so error
 * paths can read `return npy_fail(...)`. */
NPY_PRINTF(4, 5)
static int npy_fail(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return -1;
    int k = snprintf(err, errlen, "%s: ", name ? name : "(npy)");
    if (k < 0) {
        err[0] = '\0';
        return -1;
    }
    if ((size_t)k < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- little-endian byte access (no alignment or host-order assumption) -- */

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v & 0xffu);
    p[1] = (unsigned char)((v >> 8) & 0xffu);
    p[2] = (unsigned char)((v >> 16) & 0xffu);
    p[3] = (unsigned char)((v >> 24) & 0xffu);
}

/* ---- the header dict ----------------------------------------------------- */

/* What the header says, once parsed and checked. */
typedef struct {
    size_t data_off;      /* offset of the first data byte in the image */
    int rank;             /* 2 or 4 */
    int64_t batch, heads; /* 1 and 1 for rank 2 */
    int64_t rows, cols;
    size_t n;             /* batch * heads * rows * cols, checked */
    int esize;            /* 4 ('<f4') or 8 ('<f8') */
} npy_header;

/* dims[0..rank) as text into dst[NPY_DIMS_BUF], joined by sep (" x " for a
 * product, ", " for a shape); rank <= NPY_RANK_MAX. Returns dst. */
static const char *join_dims(char *dst, const int64_t *dims, int rank, const char *sep)
{
    size_t k = 0;
    dst[0] = '\0';
    for (int i = 0; i < rank && k < NPY_DIMS_BUF; i++) {
        int w = snprintf(dst + k, NPY_DIMS_BUF - k, "%s%" PRId64, i ? sep : "", dims[i]);
        if (w < 0)
            break;
        k += (size_t)w;
    }
    return dst;
}

/* A cursor over the header text s[0..n) (the final '\n' excluded). The text
 * has been checked to hold only printable ASCII and whitespace, so any part
 * of it may be quoted in a message through quote(). */
typedef struct {
    const char *s;
    size_t n, i;
    const char *name;
    char *err;
    size_t errlen;
} npy_cursor;

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_ws(npy_cursor *c)
{
    while (c->i < c->n && is_ws(c->s[c->i]))
        c->i++;
}

/* Copy header text s[0..n) into dst[NPY_QUOTE_BUF] for a message: at most
 * NPY_QUOTE_MAX characters (then "..."), whitespace turned into ' ' so the
 * message stays one line, trailing whitespace (the padding) dropped. The text
 * holds only printable ASCII and whitespace (parse_header checks that first),
 * so nothing else needs escaping. Returns dst. */
static const char *quote(char *dst, const char *s, size_t n)
{
    size_t q = n < NPY_QUOTE_MAX ? n : NPY_QUOTE_MAX;
    for (size_t k = 0; k < q; k++)
        dst[k] = is_ws(s[k]) ? ' ' : s[k];
    while (q > 0 && dst[q - 1] == ' ')
        q--;
    if (n > NPY_QUOTE_MAX) {
        memcpy(dst + q, "...", 3);
        q += 3;
    }
    dst[q] = '\0';
    return dst;
}

/* Current character, or '\0' at the end (the text holds no NUL bytes). */
static char peek(const npy_cursor *c)
{
    return c->i < c->n ? c->s[c->i] : '\0';
}

/* Report a syntax problem at the cursor, quoting the text that follows. */
static int syntax(npy_cursor *c, const char *what)
{
    char near[NPY_QUOTE_BUF];
    quote(near, c->s + c->i, c->n - c->i);
    if (near[0] == '\0')
        return npy_fail(c->err, c->errlen, c->name,
                        "malformed .npy header: %s at header offset %zu (end of header)", what, c->i);
    return npy_fail(c->err, c->errlen, c->name,
                    "malformed .npy header: %s at header offset %zu, near \"%s\"",
                    what, c->i, near);
}

/* A quoted Python string without escapes: 'abc' or "abc". Sets *p, *len to
 * the text between the quotes. Backslashes are refused rather than decoded:
 * no key or dtype fasim accepts needs one. */
static int parse_str(npy_cursor *c, const char **p, size_t *len)
{
    char q = peek(c);
    if (q != '\'' && q != '"')
        return syntax(c, "expected a quoted string");
    size_t start = ++c->i;
    while (c->i < c->n && c->s[c->i] != q) {
        if (c->s[c->i] == '\\' || c->s[c->i] == '\n' || c->s[c->i] == '\r' ||
            c->s[c->i] == '\t')
            return syntax(c, "unsupported character in a string");
        c->i++;
    }
    if (c->i >= c->n) {
        c->i = start - 1;
        return syntax(c, "unterminated string");
    }
    *p = c->s + start;
    *len = c->i - start;
    c->i++;                                  /* the closing quote */
    return 0;
}

static int is_ident(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch >= '0' && ch <= '9') || ch == '_';
}

/* Python's True or False, as a whole word. */
static int parse_bool(npy_cursor *c, int *v)
{
    static const char *const words[2] = { "False", "True" };
    for (int b = 0; b < 2; b++) {
        size_t w = strlen(words[b]);
        if (c->n - c->i >= w && memcmp(c->s + c->i, words[b], w) == 0 &&
            !is_ident(c->i + w < c->n ? c->s[c->i + w] : '\0')) {
            c->i += w;
            *v = b;
            return 0;
        }
    }
    return syntax(c, "expected True or False for 'fortran_order'");
}

/* A shape tuple of non-negative integers: (), (5,), (3, 4), (3, 4,) ...
 * Counts the dimensions into *rank, keeps the first NPY_RANK_MAX in dims[], and sets
 * *text, *tlen to the tuple as written (for messages). A one-element tuple
 * needs its trailing comma, as in Python, where (5) is the integer 5. */
static int parse_shape(npy_cursor *c, int64_t dims[NPY_RANK_MAX], int *rank,
                       const char **text, size_t *tlen)
{
    size_t start = c->i;
    if (peek(c) != '(')
        return syntax(c, "expected a tuple for 'shape'");
    c->i++;
    *rank = 0;
    int trailing_comma = 0;
    skip_ws(c);
    while (peek(c) != ')') {
        if (peek(c) == '-')
            return syntax(c, "negative dimension in 'shape'");
        if (!(peek(c) >= '0' && peek(c) <= '9'))
            return syntax(c, "expected a dimension (a non-negative integer) in 'shape'");
        int64_t v = 0;
        while (peek(c) >= '0' && peek(c) <= '9') {
            int digit = peek(c) - '0';
            if (v > (INT64_MAX - digit) / 10)
                return syntax(c, "dimension too large for a 64-bit integer in 'shape'");
            v = v * 10 + digit;
            c->i++;
        }
        /* Python 2 numpy wrote long integers as 3L; such files exist. */
        if (peek(c) == 'L')
            c->i++;
        if (is_ident(peek(c)))
            return syntax(c, "expected a dimension (a non-negative integer) in 'shape'");
        if (*rank >= 64)
            return syntax(c, "more than 64 dimensions in 'shape'");
        if (*rank < NPY_RANK_MAX)
            dims[*rank] = v;
        (*rank)++;
        skip_ws(c);
        trailing_comma = 0;
        if (peek(c) == ',') {
            c->i++;
            trailing_comma = 1;
            skip_ws(c);
        } else if (peek(c) != ')') {
            return syntax(c, "expected ',' or ')' in 'shape'");
        }
    }
    if (*rank == 1 && !trailing_comma)
        return syntax(c, "a one-element 'shape' needs a trailing comma, as in (5,)");
    c->i++;                                  /* ')' */
    *text = c->s + start;
    *tlen = c->i - start;
    return 0;
}

/* The fields of the dict, before they are judged. */
typedef struct {
    const char *descr;
    size_t descr_len;
    int fortran;
    int64_t dims[NPY_RANK_MAX];   /* the first min(rank, NPY_RANK_MAX) are set */
    int rank;
    const char *shape_text;
    size_t shape_len;
} npy_dict;

/* Parse the dict literal: exactly the keys 'descr', 'fortran_order' and
 * 'shape', each once, in any order, optional whitespace, an optional comma
 * after the last entry, and nothing but whitespace after the '}'. */
static int parse_dict(npy_cursor *c, npy_dict *d)
{
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    skip_ws(c);
    if (peek(c) != '{')
        return syntax(c, "expected '{' (the header is a Python dict)");
    c->i++;
    for (;;) {
        skip_ws(c);
        if (peek(c) == '}')
            break;
        size_t key_at = c->i;
        const char *key;
        size_t klen;
        if (parse_str(c, &key, &klen) != 0)
            return -1;
        skip_ws(c);
        if (peek(c) != ':')
            return syntax(c, "expected ':' after a key");
        c->i++;
        skip_ws(c);
        int *seen;
        if (klen == 5 && memcmp(key, "descr", 5) == 0) {
            seen = &have_descr;
        } else if (klen == 13 && memcmp(key, "fortran_order", 13) == 0) {
            seen = &have_fortran;
        } else if (klen == 5 && memcmp(key, "shape", 5) == 0) {
            seen = &have_shape;
        } else {
            c->i = key_at;
            return syntax(c, "unexpected key (the keys are 'descr', 'fortran_order', 'shape')");
        }
        if (*seen) {
            c->i = key_at;
            return syntax(c, "duplicate key");
        }
        *seen = 1;
        int rc;
        if (seen == &have_descr) {
            if (peek(c) == '[')
                return npy_fail(c->err, c->errlen, c->name,
                                "structured dtype (a list 'descr') is not supported; "
                                "fasim reads '<f4' (float32) or '<f8' (float64)");
            rc = parse_str(c, &d->descr, &d->descr_len);
        } else if (seen == &have_fortran) {
            rc = parse_bool(c, &d->fortran);
        } else {
            rc = parse_shape(c, d->dims, &d->rank, &d->shape_text, &d->shape_len);
        }
        if (rc != 0)
            return -1;
        skip_ws(c);
        if (peek(c) == ',') {
            c->i++;
            continue;
        }
        if (peek(c) != '}')
            return syntax(c, "expected ',' or '}' after a value");
    }
    c->i++;                                  /* '}' */
    skip_ws(c);
    if (c->i != c->n)
        return syntax(c, "unexpected text after the closing '}'");
    const char *missing = !have_descr ? "descr" : !have_fortran ? "fortran_order"
                        : !have_shape ? "shape" : NULL;
    if (missing)
        return npy_fail(c->err, c->errlen, c->name,
                        "malformed .npy header: the '%s' key is missing", missing);
    return 0;
}

/* Judge the dtype: '<f4' and '<f8' only. Sets *esize. */
static int check_descr(const npy_dict *d, const char *name, int *esize,
                       char *err, size_t errlen)
{
    const char *s = d->descr;
    size_t n = d->descr_len;
    char q[NPY_QUOTE_BUF];
    if (n == 3 && s[0] == '<' && s[1] == 'f' && (s[2] == '4' || s[2] == '8')) {
        *esize = s[2] - '0';
        return 0;
    }
    if (n == 3 && s[0] == '>' && s[1] == 'f' && (s[2] == '4' || s[2] == '8'))
        return npy_fail(err, errlen, name,
                        "big-endian dtype '%s' is not supported; "
                        "convert with arr.astype('<f4')", quote(q, s, n));
    return npy_fail(err, errlen, name,
                    "unsupported dtype '%s'; fasim reads '<f4' (float32) or "
                    "'<f8' (float64), little-endian; convert with arr.astype('<f4')",
                    quote(q, s, n));
}

static const char *dtype_word(int esize)
{
    return esize == 4 ? "float32" : "float64";
}

/* Parse and check everything up to (not including) the data values.
 *
 * buf holds the first `avail` bytes of an image whose full length is `total`
 * (avail <= total). The preamble and header must lie within buf; when they do
 * not and avail < total, the caller did not pass enough bytes (sim_npy_read
 * always passes at least NPY_PREAMBLE_V2 + NPY_HEADER_MAX bytes or the whole
 * file, so for it "past avail" means "past the end of the file").
 *
 * On success, h says where the data starts and what shape and element size it
 * has, and the data size has been checked: n, the product of all dimensions
 * (rows*cols, or batch*heads*rows*cols), does not overflow, is at most
 * max_elems, and data_off + n*esize == total exactly. */
static int parse_header(const unsigned char *buf, size_t avail, size_t total,
                        const char *name, int64_t max_elems, npy_header *h,
                        char *err, size_t errlen)
{
    /* Magic and version. */
    size_t m = avail < NPY_MAGIC_LEN ? avail : NPY_MAGIC_LEN;
    if (total == 0)
        return npy_fail(err, errlen, name, "not an .npy file (the file is empty; bad magic)");
    if (memcmp(buf, NPY_MAGIC, m) != 0)
        return npy_fail(err, errlen, name, "not an .npy file (bad magic)");
    if (avail < NPY_PREAMBLE_V1)
        return npy_fail(err, errlen, name,
                        "truncated header: %zu bytes, an .npy preamble needs at least %d",
                        avail, NPY_PREAMBLE_V1);
    int major = buf[6], minor = buf[7];
    if (!(major >= 1 && major <= 3) || minor != 0)
        return npy_fail(err, errlen, name,
                        "unsupported .npy format version %d.%d (fasim reads 1.0, 2.0 and 3.0)",
                        major, minor);
    size_t pre = major == 1 ? NPY_PREAMBLE_V1 : NPY_PREAMBLE_V2;
    if (avail < pre)
        return npy_fail(err, errlen, name,
                        "truncated header: %zu bytes, a version %d.0 preamble needs %zu",
                        avail, major, pre);
    uint32_t hlen = major == 1 ? (uint32_t)buf[8] | (uint32_t)buf[9] << 8 : le32(buf + 8);

    /* The header text: bounded, within the input, printable, '\n'-terminated. */
    if (hlen > NPY_HEADER_MAX)
        return npy_fail(err, errlen, name,
                        "header length %" PRIu32 " exceeds the %d-byte limit "
                        "(a 2-D float array's header needs about 128)", hlen, NPY_HEADER_MAX);
    if (hlen > avail - pre)
        return npy_fail(err, errlen, name,
                        "truncated header: header length %" PRIu32 " points past the end "
                        "of the file (%zu bytes after the preamble)", hlen, total - pre);
    if (hlen == 0 || buf[pre + hlen - 1] != '\n')
        return npy_fail(err, errlen, name, "malformed .npy header: it does not end with '\\n'");
    const char *text = (const char *)(buf + pre);
    for (uint32_t i = 0; i + 1 < hlen; i++) {
        unsigned char ch = buf[pre + i];
        if (!((ch >= 0x20 && ch < 0x7f) || is_ws((char)ch)))
            return npy_fail(err, errlen, name,
                            "malformed .npy header: byte 0x%02x at offset %" PRIu32
                            " of the header is not printable ASCII", ch, i);
    }

    npy_dict d;
    memset(&d, 0, sizeof d);
    npy_cursor c = { text, hlen - 1, 0, name, err, errlen };
    if (parse_dict(&c, &d) != 0)
        return -1;

    /* Judge the fields, in the order a user would fix them. */
    int esize = 0;
    if (check_descr(&d, name, &esize, err, errlen) != 0)
        return -1;
    if (d.fortran)
        return npy_fail(err, errlen, name,
                        "Fortran-ordered array (fortran_order: True) is not supported; "
                        "save np.ascontiguousarray(arr) instead");
    char st[NPY_QUOTE_BUF];
    quote(st, d.shape_text, d.shape_len);
    if (d.rank != 2 && d.rank != 4)
        return npy_fail(err, errlen, name,
                        "shape %s has rank %d; fasim needs (N, d) or (B, H, N, d)",
                        st, d.rank);
    /* The 2-D message is the one fasim has always given; a 4-D one also says
     * which dimension is zero, since there are four to look at. */
    static const char *const letters[NPY_RANK_MAX] = { "B", "H", "N", "d" };
    for (int i = 0; i < d.rank; i++) {
        if (d.dims[i] != 0)
            continue;
        if (d.rank == 2)
            return npy_fail(err, errlen, name,
                            "shape %s has a zero-sized dimension; fasim needs N >= 1 and d >= 1",
                            st);
        return npy_fail(err, errlen, name,
                        "shape %s has a zero-sized dimension (%s = 0); "
                        "fasim needs B, H, N and d all >= 1", st, letters[i]);
    }
    /* The element count over every dimension, checked at each step so that
     * no partial product overflows; SIZE_MAX / 8 keeps n * esize (esize <= 8)
     * representable as a size_t. All dimensions are >= 1 here. */
    int64_t n = 1;
    for (int i = 0; i < d.rank; i++) {
        if (n > INT64_MAX / d.dims[i] || (uint64_t)(n * d.dims[i]) > (uint64_t)(SIZE_MAX / 8))
            return npy_fail(err, errlen, name,
                            "shape %s overflows the element count", st);
        n *= d.dims[i];
    }
    char prod[NPY_DIMS_BUF];
    join_dims(prod, d.dims, d.rank, " x ");
    if (n > max_elems)
        return npy_fail(err, errlen, name,
                        "%s = %" PRId64 " elements exceeds the limit "
                        "of %" PRId64 " (max_elems)", prod, n, max_elems);

    /* The data must fill the rest of the input exactly. */
    size_t need = (size_t)n * (size_t)esize;
    size_t have = total - pre - hlen;
    if (have < need)
        return npy_fail(err, errlen, name,
                        "truncated: header says %s %s = %zu bytes, "
                        "file has %zu after the header",
                        prod, dtype_word(esize), need, have);
    if (have > need)
        return npy_fail(err, errlen, name,
                        "trailing data: header says %s %s = %zu "
                        "bytes, file has %zu after the header (%zu extra)",
                        prod, dtype_word(esize), need, have, have - need);
    h->data_off = pre + hlen;
    h->rank = d.rank;
    h->batch = d.rank == 4 ? d.dims[0] : 1;
    h->heads = d.rank == 4 ? d.dims[1] : 1;
    h->rows = d.dims[d.rank - 2];
    h->cols = d.dims[d.rank - 1];
    h->n = (size_t)n;
    h->esize = esize;
    return 0;
}

/* Where element i (in C order) of the array h describes is, for a message:
 * "row r, column c" for rank 2, "batch b, head hd, row r, column c" for
 * rank 4, all 0-based. */
static void npy_position(char *dst, size_t len, const npy_header *h, size_t i)
{
    size_t cols = (size_t)h->cols, rows = (size_t)h->rows;
    size_t r = i / cols % rows, c = i % cols, head = i / cols / rows;
    if (h->rank == 2)
        snprintf(dst, len, "row %zu, column %zu", r, c);
    else
        snprintf(dst, len, "batch %zu, head %zu, row %zu, column %zu",
                 head / (size_t)h->heads, head % (size_t)h->heads, r, c);
}

/* ---- the public functions ------------------------------------------------- */

int sim_npy_parse(const unsigned char *buf, size_t len, const char *name,
                  int64_t max_elems, sim_npy_matrix *out, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!out)
        return npy_fail(err, errlen, name, "internal error: no output matrix");
    memset(out, 0, sizeof *out);
    if (!buf && len > 0)
        return npy_fail(err, errlen, name, "internal error: no input buffer");

    npy_header h;
    if (parse_header(buf, len, len, name, max_elems, &h, err, errlen) != 0)
        return -1;

    /* n <= max_elems and n * esize bytes are present in buf, so this
     * allocation is no larger than the input itself. */
    size_t n = h.n;
    float *data = malloc(n * sizeof *data);
    if (!data) {
        char prod[NPY_DIMS_BUF];
        const int64_t dims[NPY_RANK_MAX] = { h.batch, h.heads, h.rows, h.cols };
        return npy_fail(err, errlen, name, "out of memory for %s floats",
                        join_dims(prod, dims + (NPY_RANK_MAX - h.rank), h.rank, " x "));
    }
    const unsigned char *p = buf + h.data_off;
    for (size_t i = 0; i < n; i++) {
        double x;
        float f;
        if (h.esize == 4) {
            uint32_t u = le32(p + 4 * i);
            memcpy(&f, &u, sizeof f);
            x = (double)f;
        } else {
            uint64_t u = le64(p + 8 * i);
            memcpy(&x, &u, sizeof x);
            f = 0.0f;                        /* set below, after the range check */
        }
        int finite = isfinite(x);
        int in_range = h.esize == 4 || fabs(x) <= (double)FLT_MAX;
        if (!finite || !in_range) {
            free(data);
            char where[128];
            npy_position(where, sizeof where, &h, i);
            if (!finite) {
                const char *what = isnan(x) ? "NaN" : x > 0 ? "Inf" : "-Inf";
                return npy_fail(err, errlen, name,
                                "holds %s at %s (0-based); fasim needs finite values",
                                what, where);
            }
            return npy_fail(err, errlen, name,
                            "float64 value %.17g at %s (0-based) is "
                            "outside float32 range (|x| > %.9g)", x, where, (double)FLT_MAX);
        }
        if (h.esize == 8)
            f = (float)x;
        data[i] = f;
    }
    out->rank = h.rank;
    out->batch = h.batch;
    out->heads = h.heads;
    out->rows = h.rows;
    out->cols = h.cols;
    out->data = data;
    out->src_dtype_bytes = h.esize;
    return 0;
}

/* Read exactly len bytes from fd into buf, retrying on EINTR and short reads.
 * Returns 0, or -1 with errno set (0 for an early end of file). */
static int read_full(int fd, unsigned char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0) {
            errno = 0;
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

int sim_npy_read(const char *path, int64_t max_elems, sim_npy_matrix *out,
                 char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!out)
        return npy_fail(err, errlen, path, "internal error: no output matrix");
    memset(out, 0, sizeof *out);
    if (!path)
        return npy_fail(err, errlen, "(null)", "cannot open: no path given");

    /* O_NONBLOCK so that opening a FIFO does not wait for a writer; fstat
     * then refuses it. It has no effect on regular files. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return npy_fail(err, errlen, path, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return npy_fail(err, errlen, path, "cannot stat: %s", strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return npy_fail(err, errlen, path, "is a directory, not an .npy file");
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return npy_fail(err, errlen, path, "not a regular file");
    }
    if (st.st_size < 0 || (uintmax_t)st.st_size > (uintmax_t)(SIZE_MAX / 2)) {
        close(fd);
        return npy_fail(err, errlen, path, "file too large (%jd bytes)", (intmax_t)st.st_size);
    }
    size_t fsize = (size_t)st.st_size;

    /* First only the preamble and the longest header allowed: enough for
     * parse_header to check the header against the real file size and
     * max_elems before the whole file is read. */
    size_t pre = fsize < NPY_PREAMBLE_V2 + NPY_HEADER_MAX ? fsize
               : NPY_PREAMBLE_V2 + NPY_HEADER_MAX;
    unsigned char *buf = malloc(pre ? pre : 1);
    if (!buf) {
        close(fd);
        return npy_fail(err, errlen, path, "out of memory reading the header");
    }
    if (read_full(fd, buf, pre) != 0) {
        int e = errno;
        free(buf);
        close(fd);
        return npy_fail(err, errlen, path, "read failed: %s",
                        e ? strerror(e) : "unexpected end of file (did it change?)");
    }
    npy_header h;
    if (parse_header(buf, pre, fsize, path, max_elems, &h, err, errlen) != 0) {
        free(buf);
        close(fd);
        return -1;
    }

    /* The header agrees with the file size, which is therefore bounded by
     * the header plus max_elems * 8 bytes: now read the rest. */
    if (fsize > pre) {
        unsigned char *all = realloc(buf, fsize);
        if (!all) {
            free(buf);
            close(fd);
            return npy_fail(err, errlen, path, "out of memory reading %zu bytes", fsize);
        }
        buf = all;
        if (read_full(fd, buf + pre, fsize - pre) != 0) {
            int e = errno;
            free(buf);
            close(fd);
            return npy_fail(err, errlen, path, "read failed: %s",
                            e ? strerror(e) : "unexpected end of file (did it change?)");
        }
    }
    close(fd);
    int rc = sim_npy_parse(buf, fsize, path, max_elems, out, err, errlen);
    free(buf);
    return rc;
}

/* The writer behind sim_npy_write_f32 and sim_npy_write_f32_4d: a float32
 * array of shape dims[0..rank), rank 2 or 4, data in C order, as .npy 1.0.
 * Returns 0, or -1 with a one-line message in err. */
static int npy_write(const char *path, const float *data, const int64_t *dims, int rank,
                     char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!path)
        return npy_fail(err, errlen, "(null)", "cannot open for writing: no path given");
    char shape[NPY_DIMS_BUF];
    join_dims(shape, dims, rank, ", ");
    /* The reader refuses zero-sized arrays, so the writer does not make them. */
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1)
            return npy_fail(err, errlen, path, "cannot write shape (%s): %s must be >= 1",
                            shape, rank == 2 ? "both dimensions" : "every dimension");
    }
    /* SIZE_MAX / 4 keeps the byte count n * 4 representable. */
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (n > INT64_MAX / dims[i] || (uint64_t)(n * dims[i]) > (uint64_t)(SIZE_MAX / 4))
            return npy_fail(err, errlen, path,
                            "cannot write shape (%s): the element count overflows", shape);
        n *= dims[i];
    }
    if (!data)
        return npy_fail(err, errlen, path, "internal error: no data to write");

    /* Preamble + dict + spaces + '\n', a multiple of NPY_ALIGN bytes, as
     * numpy writes it. The dict is 55 bytes plus the shape text (at most
     * NPY_DIMS_BUF - 1), under 160; the whole header then rounds up to at
     * most 256. */
    unsigned char head[256];
    char dict[160];
    int dl = snprintf(dict, sizeof dict,
                      "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", shape);
    if (dl < 0 || (size_t)dl >= sizeof dict)
        return npy_fail(err, errlen, path, "internal error: header does not fit");
    size_t total = NPY_PREAMBLE_V1 + (size_t)dl + 1;
    total = (total + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    size_t hlen = total - NPY_PREAMBLE_V1;
    memcpy(head, NPY_MAGIC, NPY_MAGIC_LEN);
    head[6] = 1;
    head[7] = 0;
    head[8] = (unsigned char)(hlen & 0xffu);
    head[9] = (unsigned char)(hlen >> 8);
    memcpy(head + NPY_PREAMBLE_V1, dict, (size_t)dl);
    memset(head + NPY_PREAMBLE_V1 + dl, ' ', hlen - (size_t)dl - 1);
    head[total - 1] = '\n';

    /* Whole or not at all: a failed write leaves the old file as it was. */
    sim_outfile out;
    int e = sim_outfile_open(&out, path);
    if (e)
        return npy_fail(err, errlen, path, "cannot open for writing: %s", strerror(e));
    FILE *f = out.f;
    int ok = fwrite(head, 1, total, f) == total;
    /* The data, little-endian, through a small buffer so the host's byte
     * order does not matter. */
    unsigned char chunk[4096];
    size_t i = 0;
    while (ok && i < (size_t)n) {
        size_t k = 0;
        for (; i < (size_t)n && k + 4 <= sizeof chunk; i++, k += 4) {
            uint32_t u;
            memcpy(&u, &data[i], sizeof u);
            put_le32(chunk + k, u);
        }
        ok = fwrite(chunk, 1, k, f) == k;
    }
    if (!ok) {
        e = errno;
        sim_outfile_abort(&out);
    } else {
        e = sim_outfile_commit(&out);
    }
    if (!ok || e)
        return npy_fail(err, errlen, path, "write failed: %s", e ? strerror(e) : "short write");
    return 0;
}

int sim_npy_write_f32(const char *path, const float *data, int64_t rows,
                      int64_t cols, char *err, size_t errlen)
{
    const int64_t dims[2] = { rows, cols };
    return npy_write(path, data, dims, 2, err, errlen);
}

int sim_npy_write_f32_4d(const char *path, const float *data, int64_t B, int64_t H,
                         int64_t rows, int64_t cols, char *err, size_t errlen)
{
    const int64_t dims[4] = { B, H, rows, cols };
    return npy_write(path, data, dims, 4, err, errlen);
}
