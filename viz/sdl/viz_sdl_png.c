/*
 * viz_sdl_png.c — PNG encoding: scanline filters, a zlib stream (stored or
 * fixed-Huffman deflate), CRC-32 and Adler-32, all written here (see
 * viz_sdl_png.h for the contract).
 *
 * References: PNG (ISO/IEC 15948, W3C 2003) sections 5 (chunks), 9
 * (filters), 11.2.2 (IHDR); zlib RFC 1950; deflate RFC 1951.
 */
#include "viz_sdl_png.h"
#include "sim_outfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- checksums ----------------------------------------------------------- */

/* CRC-32, reflected polynomial 0xEDB88320, four bits at a time: entry k is
 * the register after the 4-bit value k is shifted out through the polynomial
 * (the classic 16-entry table; the tests check "123456789" -> 0xCBF43926 and
 * a bit-by-bit implementation). A constant table needs no initialisation, so
 * the function is safe from any thread. */
static const uint32_t CRC_NIBBLE[16] = {
    0x00000000u, 0x1db71064u, 0x3b6e20c8u, 0x26d930acu,
    0x76dc4190u, 0x6b6b51f4u, 0x4db26158u, 0x5005713cu,
    0xedb88320u, 0xf00f9344u, 0xd6d6a3e8u, 0xcb61b38cu,
    0x9b64c2b0u, 0x86d3d2d4u, 0xa00ae278u, 0xbdbdf21cu,
};

uint32_t viz_sdl_crc32(uint32_t crc, const void *data, size_t n)
{
    const uint8_t *p = data;
    crc = ~crc;
    for (size_t k = 0; k < n; k++) {
        crc ^= p[k];
        crc = (crc >> 4) ^ CRC_NIBBLE[crc & 15u];
        crc = (crc >> 4) ^ CRC_NIBBLE[crc & 15u];
    }
    return ~crc;
}

uint32_t viz_sdl_adler32(uint32_t adler, const void *data, size_t n)
{
    /* 5552 is the largest run for which b cannot overflow 32 bits before the
     * reduction (RFC 1950's and zlib's NMAX). */
    const uint8_t *p = data;
    uint32_t a = adler & 0xffffu, b = adler >> 16;
    while (n > 0) {
        size_t run = n < 5552 ? n : 5552;
        n -= run;
        while (run--) {
            a += *p++;
            b += a;
        }
        a %= 65521u;
        b %= 65521u;
    }
    return (b << 16) | a;
}

/* ---- a growable byte buffer with an LSB-first bit writer ----------------- */

typedef struct {
    uint8_t *p;
    size_t n, cap;
    uint32_t acc;      /* pending bits, LSB first */
    int nbits;
    int failed;
} obuf;

static void ob_reserve(obuf *o, size_t more)
{
    if (o->failed || o->n + more <= o->cap)
        return;
    size_t cap = o->cap ? o->cap : 4096;
    while (cap < o->n + more)
        cap *= 2;
    uint8_t *p = realloc(o->p, cap);
    if (!p) {
        o->failed = 1;
        return;
    }
    o->p = p;
    o->cap = cap;
}

static void ob_bytes(obuf *o, const void *data, size_t n)
{
    if (n == 0)
        return;                 /* data may be NULL (IEND) */
    ob_reserve(o, n);
    if (o->failed)
        return;
    memcpy(o->p + o->n, data, n);
    o->n += n;
}

static void ob_byte(obuf *o, uint8_t b)
{
    ob_bytes(o, &b, 1);
}

static void ob_be32(obuf *o, uint32_t v)
{
    uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
    ob_bytes(o, b, 4);
}

/* Append `count` (<= 16) bits of v, least significant first (RFC 1951, 3.1.1:
 * data elements other than Huffman codes are packed LSB first). */
static void ob_bits(obuf *o, uint32_t v, int count)
{
    o->acc |= (v & ((1u << count) - 1u)) << o->nbits;
    o->nbits += count;
    while (o->nbits >= 8) {
        ob_byte(o, (uint8_t)o->acc);
        o->acc >>= 8;
        o->nbits -= 8;
    }
}

/* A Huffman code of `len` bits is packed starting with its most significant
 * bit (RFC 1951, 3.1.1), so it is reversed into the LSB-first stream. */
static void ob_huff(obuf *o, uint32_t code, int len)
{
    uint32_t rev = 0;
    for (int k = 0; k < len; k++)
        rev |= ((code >> k) & 1u) << (len - 1 - k);
    ob_bits(o, rev, len);
}

static void ob_flush_bits(obuf *o)
{
    if (o->nbits > 0)
        ob_bits(o, 0, 8 - o->nbits);
}

/* ---- deflate ---------------------------------------------------------------- */

/* Stored blocks (RFC 1951, 3.2.4): header bits BFINAL, BTYPE = 00, padding
 * to the byte, LEN and its complement NLEN (little-endian), LEN raw bytes. */
static void deflate_stored(obuf *o, const uint8_t *data, size_t n)
{
    size_t at = 0;
    do {
        size_t len = n - at < 65535 ? n - at : 65535;
        int final = at + len == n;
        ob_byte(o, (uint8_t)final);
        uint8_t hdr[4] = { (uint8_t)len, (uint8_t)(len >> 8), (uint8_t)~len,
                           (uint8_t)(~len >> 8) };
        ob_bytes(o, hdr, 4);
        ob_bytes(o, data + at, len);
        at += len;
    } while (at < n);
}

/* The fixed literal/length code (RFC 1951, 3.2.6). */
static void put_litlen(obuf *o, int sym)
{
    if (sym < 144)
        ob_huff(o, 0x30u + (uint32_t)sym, 8);
    else if (sym < 256)
        ob_huff(o, 0x190u + (uint32_t)(sym - 144), 9);
    else if (sym < 280)
        ob_huff(o, (uint32_t)(sym - 256), 7);
    else
        ob_huff(o, 0xc0u + (uint32_t)(sym - 280), 8);
}

static const uint16_t LEN_BASE[29] = {
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
    35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
};
static const uint8_t LEN_EXTRA[29] = {
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
    3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
};
static const uint16_t DIST_BASE[30] = {
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
    257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
};
static const uint8_t DIST_EXTRA[30] = {
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
    7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
};

/* A match of len (3..258) bytes at distance dist (1..32768). The length code
 * is the last whose base is <= len, so 258 takes code 285 (RFC 1951: code
 * 284 covers 227..257 only). */
static void put_match(obuf *o, int len, int dist)
{
    int k = 28;
    while (LEN_BASE[k] > len)
        k--;
    put_litlen(o, 257 + k);
    ob_bits(o, (uint32_t)(len - LEN_BASE[k]), LEN_EXTRA[k]);
    int c = 29;
    while (DIST_BASE[c] > dist)
        c--;
    ob_huff(o, (uint32_t)c, 5);   /* fixed distance codes: 5 bits, 0..29 */
    ob_bits(o, (uint32_t)(dist - DIST_BASE[c]), DIST_EXTRA[c]);
}

#define WSIZE     32768      /* deflate's window */
#define HBITS     15
#define HSIZE     (1 << HBITS)
#define MAX_MATCH 258
/* Candidates tried per position. 16 finds the previous row in a flat or
 * repeated region at once (its match is 258 long and ends the search);
 * measured, a 1280 x 800 frame encodes in about 50 ms, 1920 x 1200 in 150. */
#define CHAIN     16

static uint32_t hash3(const uint8_t *p)
{
    uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    return (v * 2654435761u) >> (32 - HBITS);
}

/* One final block with the fixed codes (BTYPE = 01) over a greedy LZ77 parse.
 * Returns -1 when out of memory. */
static int deflate_fixed(obuf *o, const uint8_t *data, size_t n)
{
    int32_t *head = malloc(sizeof(int32_t) * HSIZE);
    int32_t *prev = malloc(sizeof(int32_t) * WSIZE);
    if (!head || !prev) {
        free(head);
        free(prev);
        return -1;
    }
    for (int k = 0; k < HSIZE; k++)
        head[k] = -1;
    ob_bits(o, 1, 1);   /* BFINAL */
    ob_bits(o, 1, 2);   /* BTYPE = 01, fixed Huffman codes */
    size_t i = 0;
    while (i < n) {
        int best = 0;
        size_t best_at = 0;
        if (i + 3 <= n) {
            uint32_t h = hash3(data + i);
            int32_t cand = head[h];
            size_t limit = n - i < MAX_MATCH ? n - i : MAX_MATCH;
            for (int tries = 0; cand >= 0 && tries < CHAIN; tries++) {
                size_t c = (size_t)cand;
                if (i - c > WSIZE)
                    break;
                size_t len = 0;
                while (len < limit && data[c + len] == data[i + len])
                    len++;
                if ((int)len > best) {
                    best = (int)len;
                    best_at = c;
                    if (len == limit)
                        break;
                }
                int32_t nx = prev[c & (WSIZE - 1)];
                if (nx >= cand)
                    break;      /* the slot was reused by a newer position */
                cand = nx;
            }
        }
        size_t adv = 1;
        if (best >= 3) {
            put_match(o, best, (int)(i - best_at));
            adv = (size_t)best;
        } else {
            put_litlen(o, data[i]);
        }
        for (size_t k = 0; k < adv; k++, i++) {
            if (i + 3 <= n) {
                uint32_t h = hash3(data + i);
                prev[i & (WSIZE - 1)] = head[h];
                head[h] = (int32_t)i;
            }
        }
    }
    put_litlen(o, 256);   /* end of block */
    ob_flush_bits(o);
    free(head);
    free(prev);
    return 0;
}

/* ---- PNG ------------------------------------------------------------------ */

static void chunk(obuf *o, const char type[4], const uint8_t *data, size_t n)
{
    ob_be32(o, (uint32_t)n);
    size_t at = o->n;
    ob_bytes(o, type, 4);
    ob_bytes(o, data, n);
    if (!o->failed)
        ob_be32(o, viz_sdl_crc32(0, o->p + at, n + 4));
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c;
    int pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    if (pa <= pb && pa <= pc)
        return a;
    return pb <= pc ? b : c;
}

/* Filter one row (PNG section 9.2; 3 bytes per pixel) with filter type f
 * into out; prior is the unfiltered row above, or NULL for the first row.
 * Returns the sum of |signed bytes|, the selection heuristic of 12.8. */
static long filter_row(int f, const uint8_t *row, const uint8_t *prior, size_t len,
                       uint8_t *out)
{
    long cost = 0;
    for (size_t x = 0; x < len; x++) {
        int a = x >= 3 ? row[x - 3] : 0;
        int b = prior ? prior[x] : 0;
        int c = prior && x >= 3 ? prior[x - 3] : 0;
        int pred = 0;
        switch (f) {
        case 1: pred = a; break;
        case 2: pred = b; break;
        case 3: pred = (a + b) / 2; break;
        case 4: pred = paeth(a, b, c); break;
        default: break;
        }
        uint8_t v = (uint8_t)(row[x] - pred);
        out[x] = v;
        cost += v < 128 ? v : 256 - v;
    }
    return cost;
}

int viz_sdl_png_encode(const uint8_t *rgb, int w, int h, size_t stride,
                       viz_sdl_png_mode mode, uint8_t **out, size_t *outlen,
                       char *err, size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    if (w < 1 || h < 1 || w > (1 << 24) || h > (1 << 24)) {
        snprintf(err, errlen, "PNG: image size %d x %d out of range", w, h);
        return -1;
    }
    const size_t len = (size_t)w * 3;
    const size_t raw_n = (size_t)h * (len + 1);
    uint8_t *raw = malloc(raw_n);
    uint8_t *trial = malloc(len);
    obuf o = { 0 };
    if (!raw || !trial)
        goto oom;

    /* Scanlines: a filter-type byte, then the row filtered. */
    for (int y = 0; y < h; y++) {
        const uint8_t *row = rgb + (size_t)y * stride;
        const uint8_t *prior = y > 0 ? rgb + (size_t)(y - 1) * stride : NULL;
        uint8_t *dst = raw + (size_t)y * (len + 1);
        int best_f = 0;
        if (mode == VIZ_SDL_PNG_COMPRESSED) {
            long best = -1;
            for (int f = 0; f <= 4; f++) {
                long c = filter_row(f, row, prior, len, trial);
                if (best < 0 || c < best) {
                    best = c;
                    best_f = f;
                }
            }
        }
        dst[0] = (uint8_t)best_f;
        filter_row(best_f, row, prior, len, dst + 1);
    }

    static const uint8_t SIGNATURE[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    ob_bytes(&o, SIGNATURE, 8);
    uint8_t ihdr[13] = {
        (uint8_t)(w >> 24), (uint8_t)(w >> 16), (uint8_t)(w >> 8), (uint8_t)w,
        (uint8_t)(h >> 24), (uint8_t)(h >> 16), (uint8_t)(h >> 8), (uint8_t)h,
        8,      /* bit depth */
        2,      /* colour type: truecolour RGB */
        0, 0, 0 /* deflate, adaptive filtering, no interlace */
    };
    chunk(&o, "IHDR", ihdr, sizeof ihdr);

    /* The zlib stream (RFC 1950): CMF 0x78 = deflate with a 32 KiB window,
     * FLG 0x01 = "fastest" level with the check bits making 0x7801 a
     * multiple of 31; the data; Adler-32 of the raw bytes, big-endian. */
    obuf z = { 0 };
    ob_byte(&z, 0x78);
    ob_byte(&z, 0x01);
    if (mode == VIZ_SDL_PNG_STORED)
        deflate_stored(&z, raw, raw_n);
    else if (deflate_fixed(&z, raw, raw_n) != 0)
        z.failed = 1;
    ob_be32(&z, viz_sdl_adler32(1, raw, raw_n));
    if (z.failed) {
        free(z.p);
        goto oom;
    }
    chunk(&o, "IDAT", z.p, z.n);
    free(z.p);
    chunk(&o, "IEND", NULL, 0);
    if (o.failed)
        goto oom;
    free(raw);
    free(trial);
    *out = o.p;
    *outlen = o.n;
    return 0;

oom:
    free(raw);
    free(trial);
    free(o.p);
    snprintf(err, errlen, "PNG: out of memory for a %d x %d image", w, h);
    return -1;
}

int viz_sdl_png_write(const char *path, const uint8_t *rgb, int w, int h,
                      size_t stride, viz_sdl_png_mode mode, char *err, size_t errlen)
{
    uint8_t *png;
    size_t n;
    if (viz_sdl_png_encode(rgb, w, h, stride, mode, &png, &n, err, errlen) != 0)
        return -1;
    /* Whole or not at all: an old picture stays as it was on failure. */
    sim_outfile out;
    int e = sim_outfile_open(&out, path);
    if (e) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(e));
        free(png);
        return -1;
    }
    size_t put = fwrite(png, 1, n, out.f);
    free(png);
    if (put != n) {
        e = errno ? errno : EIO;
        sim_outfile_abort(&out);
    } else {
        e = sim_outfile_commit(&out);
    }
    if (e) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(e));
        return -1;
    }
    return 0;
}
