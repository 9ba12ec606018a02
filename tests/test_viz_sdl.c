/*
 * test_viz_sdl.c — the SDL view without a display: the PNG writer (known
 * bytes, round trips through an inflate written here), screenshots (valid
 * PNG and BMP, deterministic, different steps differ where the loop moved),
 * the heat map's values against the run's own statistics, bad input, the
 * bitmap font, text readable at 1920 x 1080 (measured in the picture) and
 * every string inside its panel at 1920 x 1080 and 1280 x 800, the
 * themes' contrast (WCAG 2) and tile marks, and the interactive loop driven by synthetic events on SDL's
 * "dummy" video driver (a software framebuffer, no display).
 *
 * Everything the test checks against is computed here independently: a
 * bit-by-bit CRC-32, Adler-32 from its definition, a stored + fixed-Huffman
 * inflate, the PNG filters undone, dot products in double.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <SDL.h>

#include "ref_tile.h"
#include "test_util.h"
#include "viz_model.h"
#include "viz_sdl.h"
#include "viz_sdl_draw.h"
#include "viz_sdl_font.h"
#include "viz_sdl_heat.h"
#include "viz_sdl_png.h"

/* ---- independent checksums and inflate --------------------------------------- */

static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t k = 0; k < n; k++) {
        c ^= p[k];
        for (int b = 0; b < 8; b++)
            c = (c & 1u) ? (c >> 1) ^ 0xedb88320u : c >> 1;
    }
    return ~c;
}

static uint32_t adler_plain(const uint8_t *p, size_t n)
{
    uint64_t a = 1, b = 0;
    for (size_t k = 0; k < n; k++) {
        a = (a + p[k]) % 65521u;
        b = (b + a) % 65521u;
    }
    return (uint32_t)(b << 16 | a);
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

typedef struct {
    const uint8_t *p;
    size_t n, pos;
    int bit;
} bitin;

static int getbit(bitin *b)
{
    if (b->pos >= b->n)
        return -1;
    int v = (b->p[b->pos] >> b->bit) & 1;
    if (++b->bit == 8) {
        b->bit = 0;
        b->pos++;
    }
    return v;
}

static long getbits(bitin *b, int n)
{
    long v = 0;
    for (int k = 0; k < n; k++) {
        int x = getbit(b);
        if (x < 0)
            return -1;
        v |= (long)x << k;
    }
    return v;
}

/* The fixed literal/length code of RFC 1951 3.2.6, read MSB first. */
static int fixed_sym(bitin *b)
{
    int code = 0;
    for (int len = 1; len <= 9; len++) {
        int x = getbit(b);
        if (x < 0)
            return -1;
        code = code << 1 | x;
        if (len == 7 && code <= 23)
            return 256 + code;
        if (len == 8 && code >= 0x30 && code <= 0xbf)
            return code - 0x30;
        if (len == 8 && code >= 0xc0 && code <= 0xc7)
            return 280 + code - 0xc0;
        if (len == 9 && code >= 0x190)
            return 144 + code - 0x190;
    }
    return -1;
}

/* Inflate a zlib stream of stored and fixed-Huffman blocks (all the writer
 * makes; a dynamic block is an error here). Checks the header and the
 * Adler-32. Returns the output length, or -1 with a reason printed. */
static long inflate_zlib(const uint8_t *z, size_t n, uint8_t *out, size_t cap)
{
    static const int lbase[29] = { 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
                                   35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
    static const int lext[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                                  3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
    static const int dbase[30] = { 1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
                                   257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
                                   8193, 12289, 16385, 24577 };
    static const int dext[30] = { 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
                                  7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };
    if (n < 6 || (z[0] & 15) != 8 || ((z[0] << 8) | z[1]) % 31 != 0 || (z[1] & 0x20)) {
        fprintf(stderr, "inflate: bad zlib header\n");
        return -1;
    }
    bitin b = { z + 2, n - 6, 0, 0 };
    size_t o = 0;
    int final = 0;
    while (!final) {
        final = getbit(&b);
        long type = getbits(&b, 2);
        if (final < 0 || type < 0)
            return -1;
        if (type == 0) {
            if (b.bit) {
                b.bit = 0;
                b.pos++;
            }
            if (b.pos + 4 > b.n)
                return -1;
            unsigned len = b.p[b.pos] | b.p[b.pos + 1] << 8;
            unsigned nlen = b.p[b.pos + 2] | b.p[b.pos + 3] << 8;
            b.pos += 4;
            if ((len ^ 0xffffu) != nlen || b.pos + len > b.n || o + len > cap) {
                fprintf(stderr, "inflate: bad stored block\n");
                return -1;
            }
            memcpy(out + o, b.p + b.pos, len);
            o += len;
            b.pos += len;
        } else if (type == 1) {
            for (;;) {
                int sym = fixed_sym(&b);
                if (sym < 0 || sym > 285)
                    return -1;
                if (sym < 256) {
                    if (o >= cap)
                        return -1;
                    out[o++] = (uint8_t)sym;
                    continue;
                }
                if (sym == 256)
                    break;
                int k = sym - 257;
                long len = lbase[k] + getbits(&b, lext[k]);
                long dc = getbits(&b, 1);      /* 5-bit distance code, MSB first */
                for (int q = 1; q < 5 && dc >= 0; q++) {
                    long x = getbit(&b);
                    dc = x < 0 ? -1 : dc << 1 | x;
                }
                if (dc < 0 || dc > 29)
                    return -1;
                long dist = dbase[dc] + getbits(&b, dext[dc]);
                if ((size_t)dist > o || o + (size_t)len > cap) {
                    fprintf(stderr, "inflate: bad match\n");
                    return -1;
                }
                for (long q = 0; q < len; q++, o++)
                    out[o] = out[o - (size_t)dist];
            }
        } else {
            fprintf(stderr, "inflate: block type %ld not expected\n", type);
            return -1;
        }
    }
    if (b.bit) {
        b.bit = 0;
        b.pos++;
    }
    if (b.pos != b.n) {
        fprintf(stderr, "inflate: %zu bytes after the last block\n", b.n - b.pos);
        return -1;
    }
    if (be32(z + n - 4) != adler_plain(out, o)) {
        fprintf(stderr, "inflate: Adler-32 mismatch\n");
        return -1;
    }
    return (long)o;
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

typedef struct {
    int w, h;
    uint8_t *rgb;      /* w * h * 3, decoded */
    int nidat;
} png_image;

/* Parse a PNG file: signature, every chunk's CRC (bit by bit), IHDR first
 * (8-bit RGB, no interlace), IDAT, IEND last and empty; inflate and unfilter.
 * Returns 0 and fills img (img->rgb malloc'ed), or -1. */
static int png_decode(const uint8_t *f, size_t n, png_image *img)
{
    static const uint8_t sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    memset(img, 0, sizeof *img);
    if (n < 8 || memcmp(f, sig, 8) != 0)
        return -1;
    size_t at = 8, zn = 0;
    uint8_t *zbuf = malloc(n);
    int seen_ihdr = 0, seen_iend = 0;
    while (at + 12 <= n && !seen_iend) {
        uint32_t len = be32(f + at);
        if (at + 12 + len > n)
            goto bad;
        const uint8_t *type = f + at + 4, *data = f + at + 8;
        if (be32(data + len) != crc_bitwise(type, len + 4)) {
            fprintf(stderr, "png: CRC of chunk %.4s wrong\n", (const char *)type);
            goto bad;
        }
        if (!memcmp(type, "IHDR", 4)) {
            if (seen_ihdr || at != 8 || len != 13 || data[8] != 8 || data[9] != 2 ||
                data[10] || data[11] || data[12])
                goto bad;
            img->w = (int)be32(data);
            img->h = (int)be32(data + 4);
            seen_ihdr = 1;
        } else if (!memcmp(type, "IDAT", 4)) {
            memcpy(zbuf + zn, data, len);
            zn += len;
            img->nidat++;
        } else if (!memcmp(type, "IEND", 4)) {
            if (len != 0)
                goto bad;
            seen_iend = 1;
        }
        at += 12 + len;
    }
    if (!seen_ihdr || !seen_iend || at != n || img->nidat == 0 || img->w <= 0 || img->h <= 0)
        goto bad;
    size_t stride = (size_t)img->w * 3, raw_n = (size_t)img->h * (stride + 1);
    uint8_t *raw = malloc(raw_n);
    long got = inflate_zlib(zbuf, zn, raw, raw_n);
    free(zbuf);
    zbuf = NULL;
    if (got != (long)raw_n) {
        free(raw);
        return -1;
    }
    img->rgb = malloc(stride * (size_t)img->h);
    for (int y = 0; y < img->h; y++) {
        const uint8_t *src = raw + (size_t)y * (stride + 1);
        uint8_t *row = img->rgb + (size_t)y * stride;
        const uint8_t *up = y ? row - stride : NULL;
        for (size_t x = 0; x < stride; x++) {
            int a = x >= 3 ? row[x - 3] : 0, b = up ? up[x] : 0;
            int c = up && x >= 3 ? up[x - 3] : 0, pred;
            switch (src[0]) {
            case 0: pred = 0; break;
            case 1: pred = a; break;
            case 2: pred = b; break;
            case 3: pred = (a + b) / 2; break;
            case 4: pred = paeth(a, b, c); break;
            default:
                free(raw);
                return -1;
            }
            row[x] = (uint8_t)(src[1 + x] + pred);
        }
    }
    free(raw);
    return 0;
bad:
    free(zbuf);
    return -1;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
    *len = fread(p, 1, (size_t)n, f);
    fclose(f);
    return p;
}

/* ---- models ----------------------------------------------------------------- */

/* A model of the run (compute mode), on the plan of kind `kind`. */
static viz_model *build_kind(sim_algo algo, int64_t N, int64_t d, uint64_t M, int causal,
                             sim_dtype dt, sim_plan_kind kind)
{
    viz_config cfg;
    viz_config_default(&cfg);
    cfg.sh.dtype = dt;
    cfg.algo = algo;
    cfg.sh.N = N;
    cfg.sh.d = d;
    cfg.sh.M = M;
    cfg.sh.causal = causal;
    cfg.plan_kind = kind;
    cfg.mode = VIZ_MODE_COMPUTE;
    viz_model *m = NULL;
    char err[2048];
    int rc = viz_model_build(&cfg, &m, err, sizeof err);
    if (rc != VIZ_OK)
        fprintf(stderr, "build: %s\n", err);
    assert_int_equal(rc, VIZ_OK);
    return m;
}

/* The view's default plan (the report's square tiles). */
static viz_model *build_dt(sim_algo algo, int64_t N, int64_t d, uint64_t M, int causal,
                           sim_dtype dt)
{
    viz_config cfg;
    viz_config_default(&cfg);
    return build_kind(algo, N, d, M, causal, dt, cfg.plan_kind);
}

static viz_model *build(sim_algo algo, int64_t N, int64_t d, uint64_t M, int causal)
{
    return build_dt(algo, N, d, M, causal, SIM_FP16);
}

/* Each loop order's own best plan (--plan best), for tests that need its
 * uneven B_r x B_c grids. */
static viz_model *build_best(sim_algo algo, int64_t N, int64_t d, uint64_t M, int causal)
{
    return build_kind(algo, N, d, M, causal, SIM_FP16, SIM_PLAN_AUTO);
}

static uint64_t find(const viz_model *m, int line, int64_t i, int64_t j)
{
    uint64_t k;
    assert_int_equal(viz_model_find_step(m, 0, line, i, j, &k), 0);
    return k;
}

/* A frame rendered into a surface the test owns (the screenshot's path,
 * minus the file). */
static SDL_Surface *render(viz_model *m, uint64_t step, int w, int h, viz_sdl_layout *lay)
{
    assert_int_equal(viz_model_seek(m, step), 0);
    SDL_Surface *s = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_RGB888);
    assert_non_null(s);
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(s);
    assert_non_null(r);
    viz_sdl_heat *heat = viz_sdl_heat_new(NULL, NULL);
    viz_sdl_ui ui = { .inputs = "seeded" };
    viz_sdl_draw(r, w, h, m, heat, &ui, lay);
    SDL_RenderFlush(r);
    viz_sdl_heat_free(heat);
    SDL_DestroyRenderer(r);
    return s;
}

static uint32_t pixel(const SDL_Surface *s, int x, int y)
{
    return ((const uint32_t *)((const uint8_t *)s->pixels + (size_t)y * (size_t)s->pitch))[x] &
           0xffffffu;
}

/* A pixel of tile tr of tensor t's grid (one column grids) showing its
 * state: at its left edge, half way down (clear of the corner marks and of
 * the move counts, which are right-aligned). */
static uint32_t tile_pixel(const SDL_Surface *s, const viz_sdl_layout *lay, sim_tensor t,
                           int64_t tr)
{
    const viz_sdl_grid_area *g = &lay->grid[t];
    assert_true(g->present);
    int y0 = g->area.y + (int)((int64_t)g->area.h * tr / g->cells_r);
    int y1 = g->area.y + (int)((int64_t)g->area.h * (tr + 1) / g->cells_r);
    return pixel(s, g->area.x + 1, (y0 + y1) / 2);
}

/* ---- the PNG writer --------------------------------------------------------- */

static void test_checksums(void **state)
{
    (void)state;
    const char *digits = "123456789";
    assert_int_equal(viz_sdl_crc32(0, digits, 9), 0xcbf43926u);    /* the CRC-32 check value */
    assert_int_equal(viz_sdl_adler32(1, "Wikipedia", 9), 0x11e60398u);
    assert_int_equal(viz_sdl_crc32(0, "", 0), 0);
    assert_int_equal(viz_sdl_adler32(1, "", 0), 1);
    /* Pieces chain; long inputs agree with the definitions (the Adler-32 run
     * crosses its 5552-byte reduction many times, with bytes of 255). */
    size_t n = 100000;
    uint8_t *p = malloc(n);
    uint64_t seed = 7;
    for (size_t k = 0; k < n; k++)
        p[k] = k % 3 ? (uint8_t)tu_rand(&seed) : 255;
    uint32_t c = viz_sdl_crc32(viz_sdl_crc32(0, p, 777), p + 777, n - 777);
    assert_int_equal(c, crc_bitwise(p, n));
    uint32_t a = viz_sdl_adler32(viz_sdl_adler32(1, p, 6000), p + 6000, n - 6000);
    assert_int_equal(a, adler_plain(p, n));
    free(p);
}

/* A 2 x 2 image (red, green / blue, white) in stored mode, byte for byte. */
static void test_png_known_2x2(void **state)
{
    (void)state;
    const uint8_t px[12] = { 255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255 };
    uint8_t *png;
    size_t n = 0;
    char err[256];
    assert_int_equal(viz_sdl_png_encode(px, 2, 2, 6, VIZ_SDL_PNG_STORED, &png, &n, err,
                                        sizeof err), 0);
    /* Expected: signature; IHDR; IDAT = zlib(78 01) + one final stored
     * block of 14 bytes (two rows: filter 0 + 6 bytes) + Adler-32; IEND. */
    uint8_t want[128];
    size_t w = 0;
    const uint8_t sig[8] = { 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a };
    memcpy(want + w, sig, 8);
    w += 8;
    const uint8_t ihdr[17] = { 'I', 'H', 'D', 'R', 0, 0, 0, 2, 0, 0, 0, 2, 8, 2, 0, 0, 0 };
    const uint8_t l13[4] = { 0, 0, 0, 13 };
    memcpy(want + w, l13, 4);
    memcpy(want + w + 4, ihdr, 17);
    uint32_t c = crc_bitwise(ihdr, 17);
    want[w + 21] = (uint8_t)(c >> 24);
    want[w + 22] = (uint8_t)(c >> 16);
    want[w + 23] = (uint8_t)(c >> 8);
    want[w + 24] = (uint8_t)c;
    w += 25;
    const uint8_t raw[14] = { 0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255, 255, 255, 255 };
    uint8_t idat[4 + 2 + 5 + 14 + 4];
    size_t q = 0;
    memcpy(idat, "IDAT", 4);
    q = 4;
    idat[q++] = 0x78;
    idat[q++] = 0x01;
    idat[q++] = 0x01;                    /* BFINAL = 1, BTYPE = 00 */
    idat[q++] = 14;
    idat[q++] = 0;
    idat[q++] = 0xf1;                    /* NLEN = ~14 */
    idat[q++] = 0xff;
    memcpy(idat + q, raw, 14);
    q += 14;
    uint32_t ad = adler_plain(raw, 14);
    idat[q++] = (uint8_t)(ad >> 24);
    idat[q++] = (uint8_t)(ad >> 16);
    idat[q++] = (uint8_t)(ad >> 8);
    idat[q++] = (uint8_t)ad;
    const uint8_t lidat[4] = { 0, 0, 0, (uint8_t)(q - 4) };
    memcpy(want + w, lidat, 4);
    memcpy(want + w + 4, idat, q);
    c = crc_bitwise(idat, q);
    w += 4 + q;
    want[w++] = (uint8_t)(c >> 24);
    want[w++] = (uint8_t)(c >> 16);
    want[w++] = (uint8_t)(c >> 8);
    want[w++] = (uint8_t)c;
    /* IEND's CRC is the constant every PNG ends with: AE 42 60 82. */
    const uint8_t iend[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82 };
    memcpy(want + w, iend, 12);
    w += 12;
    assert_int_equal(n, w);
    assert_memory_equal(png, want, w);
    free(png);
}

/* Both modes decode to the pixels, on an image with flat areas, gradients,
 * noise and repeated rows (what exercises the filters and the matches). */
static void test_png_round_trip(void **state)
{
    (void)state;
    const int W = 301, H = 97;
    size_t stride = (size_t)W * 3 + 5;         /* a pitch wider than the row */
    uint8_t *px = calloc(stride * (size_t)H, 1);
    uint64_t seed = 42;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint8_t *p = px + (size_t)y * stride + (size_t)x * 3;
            if (x < 100) {                      /* flat */
                p[0] = 20; p[1] = 22; p[2] = 27;
            } else if (x < 200) {               /* gradient */
                p[0] = (uint8_t)x; p[1] = (uint8_t)(2 * y); p[2] = (uint8_t)(x + y);
            } else if (y % 8 < 4) {             /* noise, repeated in row pairs */
                uint64_t r = tu_rand(&seed);
                p[0] = (uint8_t)r; p[1] = (uint8_t)(r >> 8); p[2] = (uint8_t)(r >> 16);
            } else {
                memcpy(p, p - 4 * stride, 3);
            }
        }
    for (int mode = 0; mode < 2; mode++) {
        uint8_t *png;
        size_t n;
        char err[256];
        assert_int_equal(viz_sdl_png_encode(px, W, H, stride, (viz_sdl_png_mode)mode, &png, &n,
                                            err, sizeof err), 0);
        png_image img;
        assert_int_equal(png_decode(png, n, &img), 0);
        assert_int_equal(img.w, W);
        assert_int_equal(img.h, H);
        for (int y = 0; y < H; y++)
            assert_memory_equal(img.rgb + (size_t)y * W * 3, px + (size_t)y * stride,
                                (size_t)W * 3);
        if (mode == VIZ_SDL_PNG_COMPRESSED)
            assert_true(n < (size_t)W * H * 3 * 2 / 3);   /* it does compress */
        free(img.rgb);
        /* The checker proves itself: one flipped bit in the pixel data is
         * caught (by the chunk CRC; with the CRC fixed up, by Adler-32 or
         * the deflate structure), as is a wrong chunk CRC. */
        size_t idat = 8 + 25;                       /* after signature and IHDR */
        size_t at = idat + 8 + 40;                  /* inside IDAT's data */
        png[at] ^= 0x10;
        assert_int_equal(png_decode(png, n, &img), -1);
        uint32_t len = be32(png + idat);
        uint32_t c = crc_bitwise(png + idat + 4, len + 4);
        png[idat + 8 + len] = (uint8_t)(c >> 24);
        png[idat + 9 + len] = (uint8_t)(c >> 16);
        png[idat + 10 + len] = (uint8_t)(c >> 8);
        png[idat + 11 + len] = (uint8_t)c;
        assert_int_equal(png_decode(png, n, &img), -1);
        free(png);
    }
    /* Sizes out of range are refused. */
    uint8_t *png = NULL;
    size_t n = 0;
    char err[256];
    assert_int_equal(viz_sdl_png_encode(px, 0, 5, 3, VIZ_SDL_PNG_STORED, &png, &n, err,
                                        sizeof err), -1);
    assert_null(png);
    assert_non_null(strstr(err, "out of range"));
    free(px);
}

/* ---- screenshots ------------------------------------------------------------ */

static void test_screenshot_png_valid(void **state)
{
    (void)state;
    viz_model *m = build(SIM_FA2, 64, 16, 8192, 0);
    char path[512], bmp[512], err[1024];
    tu_path(path, sizeof path, "fa2.png");
    tu_path(bmp, sizeof bmp, "fa2.bmp");
    uint64_t k = find(m, 9, 1, 1);
    assert_int_equal(viz_sdl_screenshot(m, NULL, k, path, 0, 0, err, sizeof err), 0);
    assert_int_equal(viz_model_state(m)->step, k);
    size_t n = 0;
    uint8_t *f = slurp(path, &n);
    assert_non_null(f);
    png_image img;
    assert_int_equal(png_decode(f, n, &img), 0);
    assert_int_equal(img.w, VIZ_SDL_DEFAULT_W);
    assert_int_equal(img.h, VIZ_SDL_DEFAULT_H);
    /* The same step as BMP: the same pixels, through SDL's own reader. */
    assert_int_equal(viz_sdl_screenshot(m, NULL, k, bmp, 0, 0, err, sizeof err), 0);
    SDL_Surface *b = SDL_LoadBMP(bmp);
    assert_non_null(b);
    assert_int_equal(b->w, VIZ_SDL_DEFAULT_W);
    assert_int_equal(b->h, VIZ_SDL_DEFAULT_H);
    SDL_Surface *c = SDL_ConvertSurfaceFormat(b, SDL_PIXELFORMAT_RGB888, 0);
    assert_non_null(c);
    long diff = 0, colours = 0;
    uint32_t first = pixel(c, 0, 0);
    for (int y = 0; y < c->h; y++)
        for (int x = 0; x < c->w; x++) {
            const uint8_t *p = img.rgb + ((size_t)y * (size_t)img.w + (size_t)x) * 3;
            uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
            diff += v != pixel(c, x, y);
            colours += v != first;
        }
    assert_int_equal(diff, 0);
    assert_true(colours > 10000);       /* something was drawn */
    SDL_FreeSurface(c);
    SDL_FreeSurface(b);
    free(img.rgb);
    free(f);
    /* A slide-sized frame (larger text) is as valid. */
    assert_int_equal(viz_sdl_screenshot(m, NULL, k, path, 1920, 1200, err, sizeof err), 0);
    f = slurp(path, &n);
    assert_int_equal(png_decode(f, n, &img), 0);
    assert_int_equal(img.w, 1920);
    assert_int_equal(img.h, 1200);
    free(img.rgb);
    free(f);
    viz_model_free(m);
}

static void test_screenshot_deterministic(void **state)
{
    (void)state;
    viz_model *m = build(SIM_FA2, 64, 16, 8192, 0);
    const char *names[2][2] = { { "d1.png", "d2.png" }, { "d1.bmp", "d2.bmp" } };
    char err[1024];
    /* Both formats at 640 x 400; PNG also projected (1920 x 1080, the
     * TrueType text) in both themes. */
    for (int kind = 0; kind < 4; kind++) {
        char a[512], b[512];
        tu_path(a, sizeof a, names[kind & 1][0]);
        tu_path(b, sizeof b, names[kind & 1][1]);
        viz_sdl_opts o;
        viz_sdl_opts_default(&o);
        o.theme = kind == 3 ? VIZ_SDL_THEME_DARK : VIZ_SDL_THEME_LIGHT;
        const int w = kind < 2 ? 640 : 1920, h = kind < 2 ? 400 : 1080;
        if (kind == 3) {
            tu_path(a, sizeof a, "d3.png");
            tu_path(b, sizeof b, "d4.png");
        }
        assert_int_equal(viz_sdl_screenshot(m, &o, 20, a, w, h, err, sizeof err), 0);
        assert_int_equal(viz_model_seek(m, 3), 0);      /* elsewhere in between */
        assert_int_equal(viz_sdl_screenshot(m, &o, 20, b, w, h, err, sizeof err), 0);
        size_t na, nb;
        uint8_t *fa = slurp(a, &na), *fb = slurp(b, &nb);
        assert_int_equal(na, nb);
        assert_memory_equal(fa, fb, na);
        free(fa);
        free(fb);
    }
    viz_model_free(m);
}

/* Two steps of line 7 (K_j, V_j loading) for j = 1 and j = 2: the frames
 * differ, and the loading colour moved from K's tile 1 to its tile 2. */
static void test_steps_differ(void **state)
{
    (void)state;
    viz_model *m = build(SIM_FA2, 64, 16, 8192, 0);
    uint64_t k1 = find(m, 7, 0, 0), k2 = find(m, 7, 0, 1);
    viz_sdl_layout la, lb;
    SDL_Surface *a = render(m, k1, 800, 500, &la);
    SDL_Surface *b = render(m, k2, 800, 500, &lb);
    long diff = 0;
    for (int y = 0; y < a->h; y++)
        for (int x = 0; x < a->w; x++)
            diff += pixel(a, x, y) != pixel(b, x, y);
    assert_true(diff > 0);
    const uint32_t loading = tile_pixel(a, &la, SIM_K, 0);
    assert_int_equal(tile_pixel(b, &lb, SIM_K, 1), loading);
    assert_int_not_equal(tile_pixel(b, &lb, SIM_K, 0), loading);   /* now just "read" */
    assert_int_not_equal(tile_pixel(a, &la, SIM_K, 1), loading);   /* untouched then */
    assert_int_equal(tile_pixel(a, &la, SIM_V, 0), loading);       /* V_j moves with K_j */
    /* The hit test finds the tiles where they were drawn. */
    const viz_sdl_grid_area *g = &lb.grid[SIM_K];
    int y1 = g->area.y + (int)((int64_t)g->area.h * 3 / (2 * g->cells_r));  /* tile 1's middle */
    sim_tensor t;
    int64_t tr, tc;
    assert_int_equal(viz_sdl_hit(&lb, m, g->area.x + 1, y1, &t, &tr, &tc), 1);
    assert_int_equal(t, SIM_K);
    assert_int_equal(tr, 1);
    assert_int_equal(tc, 0);
    assert_int_equal(viz_sdl_hit(&lb, m, 0, 0, &t, &tr, &tc), 0);
    SDL_FreeSurface(a);
    SDL_FreeSurface(b);
    viz_model_free(m);
}

/* The tile states differ in more than hue: on the frame of test_steps_differ,
 * K's tile 1 being loaded has the state colour in its middle and the mark in
 * its top-left corner; a tile being stored (O_i, at the end of a row block)
 * has the mark in its bottom-right corner. */
static void test_state_marks(void **state)
{
    (void)state;
    const viz_sdl_palette *pal = viz_sdl_palette_of(VIZ_SDL_THEME_LIGHT);
    viz_model *m = build(SIM_FA2, 64, 16, 8192, 0);
    viz_sdl_layout la;
    SDL_Surface *a = render(m, find(m, 7, 0, 1), 800, 500, &la);
    const viz_sdl_grid_area *g = &la.grid[SIM_K];
    const int y1 = g->area.y + (int)((int64_t)g->area.h / g->cells_r);  /* tile 1's top */
    assert_int_equal(tile_pixel(a, &la, SIM_K, 1), pal->t_load);
    assert_int_equal(pixel(a, g->area.x, y1), pal->mark);
    assert_int_equal(pixel(a, g->area.x + g->area.w - 2, y1 + 1), pal->t_load);
    SDL_FreeSurface(a);

    /* The first step that stores to O. */
    const uint64_t n = viz_model_info(m)->nsteps;
    uint64_t k = n;
    int64_t tr = -1;
    for (uint64_t s = 0; s < n && k == n; s++) {
        assert_int_equal(viz_model_seek(m, s), 0);
        const viz_state *st = viz_model_state(m);
        for (int x = 0; x < st->nxfer; x++)
            if (st->xfer[x].kind == SIM_EV_STORE && st->xfer[x].tensor == SIM_O) {
                k = s;
                tr = st->xfer[x].r0 / viz_model_info(m)->tensor[SIM_O].tile_rows;
            }
    }
    assert_true(k < n);
    a = render(m, k, 800, 500, &la);
    g = &la.grid[SIM_O];
    int yb = g->area.y + (int)((int64_t)g->area.h * (tr + 1) / g->cells_r);  /* the next tile's top */
    assert_int_equal(tile_pixel(a, &la, SIM_O, tr), pal->t_store);
    /* The bottom-right corner, inside the one-pixel gap between tiles. */
    assert_int_equal(pixel(a, g->area.x + g->area.w - 2, yb - 2), pal->mark);
    assert_int_equal(pixel(a, g->area.x + 1, yb - 2), pal->t_store);
    SDL_FreeSurface(a);
    viz_model_free(m);
}

/* WCAG 2 relative luminance of an sRGB colour, and the contrast ratio. */
static double srgb_linear(unsigned c8)
{
    const double c = c8 / 255.0;
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

static double luminance(uint32_t rgb)
{
    return 0.2126 * srgb_linear((rgb >> 16) & 255u) + 0.7152 * srgb_linear((rgb >> 8) & 255u) +
           0.0722 * srgb_linear(rgb & 255u);
}

static double contrast(uint32_t a, uint32_t b)
{
    double la = luminance(a), lb = luminance(b);
    return la > lb ? (la + 0.05) / (lb + 0.05) : (lb + 0.05) / (la + 0.05);
}

/* Every text colour on every background it is drawn on: at least 4.5:1 in
 * both themes (WCAG 2 level AA). The tile states and plot colours are
 * Okabe-Ito's (the colour-blind-safe set: orange, sky blue, bluish green,
 * yellow, blue, vermillion, reddish purple, black). */
static void test_palette(void **state)
{
    (void)state;
    /* The closed forms: black on white is 21:1, a colour on itself 1:1. */
    assert_true(fabs(contrast(0x000000, 0xffffff) - 21.0) < 1e-9);
    assert_true(fabs(contrast(0x777777, 0x777777) - 1.0) < 1e-12);
    static const uint32_t okabe_ito[] = { 0xe69f00, 0x56b4e9, 0x009e73, 0xf0e442,
                                          0x0072b2, 0xd55e00, 0xcc79a7, 0x000000 };
    for (int t = 0; t < 2; t++) {
        const viz_sdl_palette *p = viz_sdl_palette_of(t ? VIZ_SDL_THEME_DARK
                                                        : VIZ_SDL_THEME_LIGHT);
        const uint32_t fg[] = { p->text, p->dim, p->faint, p->title, p->good, p->bad, p->warn };
        const uint32_t bg[] = { p->bg, p->panel };
        for (size_t i = 0; i < sizeof fg / sizeof fg[0]; i++)
            for (size_t j = 0; j < 2; j++) {
                const double c = contrast(fg[i], bg[j]);
                if (c < 4.5)
                    fprintf(stderr, "theme %d: %06x on %06x is %.2f:1\n", t,
                            (unsigned)fg[i], (unsigned)bg[j], c);
                assert_true(c >= 4.5);
            }
        assert_true(contrast(p->code_text, p->hilite) >= 4.5);
        assert_true(contrast(p->code_num, p->hilite) >= 4.5);
        const uint32_t states[] = { p->t_read, p->t_written, p->t_both, p->t_load,
                                    p->t_store, p->t_loadstore, p->after, p->changed };
        for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
            int found = 0;
            for (size_t j = 0; j < sizeof okabe_ito / sizeof okabe_ito[0]; j++)
                found |= states[i] == okabe_ito[j];
            assert_true(found);
            for (size_t j = 0; i < 6 && j < i; j++)      /* the six states are apart */
                assert_int_not_equal(states[i], states[j]);
        }
        /* The marks show on the states they mark. */
        assert_true(contrast(p->mark, p->t_load) >= 3.0);
        assert_true(contrast(p->mark, p->t_store) >= 3.0);
        assert_true(contrast(p->mark, p->t_loadstore) >= 3.0);
    }
}

/* The first line of text in a 1920 x 1080 frame's top bar, from its first
 * lit row to the first blank one, in the picture as saved: at least 18
 * pixels (capitals about 18, ascenders a little more), readable from the
 * back of a room when projected. Needs SDL2_ttf and a font: skipped without. */
static void test_text_readable(void **state)
{
    (void)state;
    viz_sdl_font *f = viz_sdl_font_open();
    assert_non_null(f);
    const int ttf = viz_sdl_font_file(f) != NULL;
    if (ttf) {
        viz_sdl_font_metrics fm = viz_sdl_font_fit(f, 1920, 1080);
        assert_true(fm.cap_h >= 18);
        assert_true(fm.cell_w * VIZ_SDL_TEXT_COLS <= 1920);
        assert_true(fm.line_h * VIZ_SDL_TEXT_ROWS <= 1080);
    }
    viz_sdl_font_close(f);
    if (!ttf)
        skip();
    viz_model *m = build(SIM_FA2, 256, 32, 16384, 1);
    char path[512], err[1024];
    tu_path(path, sizeof path, "projected.png");
    for (int t = 0; t < 2; t++) {
        viz_sdl_opts o;
        viz_sdl_opts_default(&o);
        o.theme = t ? VIZ_SDL_THEME_DARK : VIZ_SDL_THEME_LIGHT;
        assert_int_equal(viz_sdl_screenshot(m, &o, 131, path, 1920, 1080, err, sizeof err), 0);
        size_t n = 0;
        uint8_t *file = slurp(path, &n);
        png_image img;
        assert_int_equal(png_decode(file, n, &img), 0);
        const uint8_t *bg = img.rgb;                    /* pixel (0, 0): the bar */
        int first = -1, end = -1;
        for (int y = 0; y < img.h / 8 && end < 0; y++) {
            int lit = 0;
            for (int x = 0; x < 160 && !lit; x++)
                lit = memcmp(img.rgb + ((size_t)y * (size_t)img.w + (size_t)x) * 3, bg, 3) != 0;
            if (lit && first < 0)
                first = y;
            else if (!lit && first >= 0)
                end = y;
        }
        assert_true(first >= 0 && end > first);
        if (end - first < 18)
            fprintf(stderr, "text %d pixels tall\n", end - first);
        assert_true(end - first >= 18);
        free(img.rgb);
        free(file);
    }
    viz_model_free(m);
}

static void test_bad_input(void **state)
{
    (void)state;
    viz_model *m = build(SIM_FA2, 64, 16, 8192, 0);
    char path[512], err[1024];
    /* Unknown extension: a usage error, nothing written. */
    tu_path(path, sizeof path, "frame.jpg");
    err[0] = 0;
    assert_int_equal(viz_sdl_screenshot(m, NULL, 0, path, 0, 0, err, sizeof err), VIZ_EUSAGE);
    assert_non_null(strstr(err, ".png or .bmp"));
    assert_int_not_equal(access(path, F_OK), 0);
    tu_path(path, sizeof path, "frame");
    assert_int_equal(viz_sdl_screenshot(m, NULL, 0, path, 0, 0, err, sizeof err), VIZ_EUSAGE);
    /* Upper case works. */
    tu_path(path, sizeof path, "FRAME.PNG");
    assert_int_equal(viz_sdl_screenshot(m, NULL, 0, path, 320, 200, err, sizeof err), 0);
    /* Unwritable paths: a failure with the reason, for both formats. */
    const char *bad[2] = { "/nonexistent-fasim-dir/x.png", "/nonexistent-fasim-dir/x.bmp" };
    for (int k = 0; k < 2; k++) {
        err[0] = 0;
        assert_int_equal(viz_sdl_screenshot(m, NULL, 0, bad[k], 0, 0, err, sizeof err),
                         VIZ_EFAIL);
        assert_non_null(strstr(err, "cannot write"));
        assert_non_null(strstr(err, "No such file or directory"));
    }
    /* A directory is not a file. */
    tu_path(path, sizeof path, "dir.png");
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(viz_sdl_screenshot(m, NULL, 0, path, 0, 0, err, sizeof err), VIZ_EFAIL);
    assert_non_null(strstr(err, "Is a directory"));
    /* Steps and sizes out of range. */
    const uint64_t n = viz_model_info(m)->nsteps;
    tu_path(path, sizeof path, "x.png");
    assert_int_equal(viz_sdl_screenshot(m, NULL, n, path, 0, 0, err, sizeof err), VIZ_EUSAGE);
    assert_non_null(strstr(err, "out of range"));
    assert_int_equal(viz_sdl_screenshot(m, NULL, 0, path, 10, 10, err, sizeof err), VIZ_EUSAGE);
    assert_int_equal(viz_sdl_screenshot(m, NULL, 0, path, 100000, 800, err, sizeof err),
                     VIZ_EUSAGE);
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(viz_sdl_screenshot(NULL, NULL, 0, path, 0, 0, err, sizeof err), VIZ_EUSAGE);
    viz_model_free(m);
}

/* A plan that does not fit: a model with no steps; its one frame (the
 * refusal) can be drawn, no other step. */
static void test_refused(void **state)
{
    (void)state;
    viz_config cfg;
    viz_config_default(&cfg);
    cfg.sh.N = 64;
    cfg.sh.d = 64;
    cfg.sh.M = 1024;
    cfg.plan_kind = SIM_PLAN_USER;
    cfg.Br = 64;
    cfg.Bc = 64;
    viz_model *m = NULL;
    char err[2048], path[512];
    assert_int_equal(viz_model_build(&cfg, &m, err, sizeof err), VIZ_EREFUSED);
    assert_non_null(m);
    tu_path(path, sizeof path, "refused.png");
    assert_int_equal(viz_sdl_screenshot(m, NULL, 0, path, 0, 0, err, sizeof err), 0);
    assert_int_equal(viz_sdl_screenshot(m, NULL, 1, path, 0, 0, err, sizeof err), VIZ_EUSAGE);
    assert_non_null(strstr(err, "refused"));
    viz_model_free(m);
}

/* ---- the heat map against the run ------------------------------------------ */

/* fa2: S_ij at line 8 against a double-precision dot product; P~_ij at line
 * 9 through the run's own l_i: l_new = alpha l_old + rowsum(P~) in order
 * (ref_online_step), bit for bit. */
static void check_fa2(int causal, sim_dtype dt)
{
    viz_model *m = build_dt(SIM_FA2, 80, 16, 8192, causal, dt);   /* 80: partial blocks */
    const viz_info *in = viz_model_info(m);
    float *Q = malloc(80 * 16 * sizeof *Q), *K = malloc(80 * 16 * sizeof *K);
    float *V = malloc(80 * 16 * sizeof *V);
    sim_random_inputs(1, 80, 16, dt, Q, K, V);
    viz_sdl_heat *h = viz_sdl_heat_new(NULL, NULL);
    int n8 = 0, n9 = 0, nrows = 0;
    int64_t nmasked = 0;
    for (uint64_t k = 0; k < in->nsteps; k++) {
        assert_int_equal(viz_model_seek(m, k), 0);
        const viz_state *st = viz_model_state(m);
        const viz_sdl_heat_view *v = viz_sdl_heat_get(h, m);
        if (st->line == 8) {
            n8++;
            assert_int_equal(v->kind, VIZ_SDL_HEAT_S);
            assert_int_equal(v->row0, st->i * in->plan.Br);
            assert_int_equal(v->col0, st->j * in->plan.Bc);
            for (int r = 0; r < v->rows; r++)
                for (int c = 0; c < v->cols; c++) {
                    int64_t gr = v->row0 + r, gc = v->col0 + c;
                    double dot = 0;
                    for (int t = 0; t < 16; t++)
                        dot += (double)Q[gr * 16 + t] * K[gc * 16 + t];
                    dot /= 4.0;                              /* sqrt(16) */
                    float got = v->v[r * v->cols + c];
                    if (causal && gc > gr)
                        assert_true(got == -INFINITY);
                    else
                        assert_true(fabs(got - dot) <= 1e-5 * (1 + fabs(dot)));
                }
        } else if (st->line == 9) {
            n9++;
            assert_int_equal(v->kind, VIZ_SDL_HEAT_P);
            assert_true(v->checked);
            int64_t masked = 0;
            for (int r = 0; r < v->rows; r++)
                for (int c = 0; c < v->cols; c++)
                    if (causal && v->col0 + c > v->row0 + r) {
                        assert_true(v->v[r * v->cols + c] == 0.0f);   /* exp(-inf) */
                        masked++;
                    }
            assert_int_equal(v->nmasked, masked);
            nmasked += masked;
            const viz_stats *s = &st->stats;
            assert_true(s->alpha_shown);
            for (int r = 0; r < s->nrows; r++) {
                float sum = 0.0f;
                for (int c = 0; c < v->cols; c++)
                    sum = sum + v->v[r * v->cols + c];
                float l = fmaf(s->alpha[r], s->l_old[r], sum);
                assert_true(l == s->l_new[r]);
                nrows++;
            }
        } else if (st->line == 4 || st->line == 5 || st->line == 7 || st->line >= 12) {
            assert_int_equal(v->kind, VIZ_SDL_HEAT_NONE);
            assert_true(strlen(v->note) > 10);
        }
    }
    assert_true(n8 > 0 && n8 == n9 && nrows >= n9 * 16);
    assert_true(causal ? nmasked > 0 : nmasked == 0);
    viz_sdl_heat_free(h);
    free(Q);
    free(K);
    free(V);
    viz_model_free(m);
}

static void test_heat_fa2(void **state)
{
    (void)state;
    check_fa2(0, SIM_FP16);
    check_fa2(1, SIM_FP16);
    check_fa2(0, SIM_BF16);     /* the inputs are rounded to each dtype */
    check_fa2(1, SIM_FP32);
}

/* fa1: P~_ij = exp(S_ij - m~_ij) at lines 10-13, and at line 13, which
 * stores l_i = l_new and m_i = m_new, line 11's l_new =
 * e^(m_old - m_new) l_old + e^(m~ - m_new) rowsum(P~), as ref_fa1_step_row
 * computes it, with m~ from the S_ij of line 9. */
static void test_heat_fa1(void **state)
{
    (void)state;
    viz_model *m = build(SIM_FA1, 64, 16, 8192, 1);
    const viz_info *in = viz_model_info(m);
    viz_sdl_heat *h = viz_sdl_heat_new(NULL, NULL);
    viz_sdl_heat_probe(h, m);
    float *S = malloc((size_t)(in->plan.Br * in->plan.Bc) * sizeof *S);
    int n13 = 0;
    for (uint64_t k = 0; k < in->nsteps; k++) {
        assert_int_equal(viz_model_seek(m, k), 0);
        const viz_state *st = viz_model_state(m);
        const viz_sdl_heat_view *v = viz_sdl_heat_get(h, m);
        if (st->line == 9) {
            assert_int_equal(v->kind, VIZ_SDL_HEAT_S);
            memcpy(S, v->v, (size_t)(v->rows * v->cols) * sizeof *S);
        } else if (st->line >= 10 && st->line <= 12) {
            assert_int_equal(v->kind, VIZ_SDL_HEAT_P);
        } else if (st->line == 13) {
            assert_int_equal(v->kind, VIZ_SDL_HEAT_P);
            const viz_stats *s = &st->stats;
            assert_true(s->before_valid && s->after_valid);
            assert_true(v->checked);
            for (int r = 0; r < s->nrows; r++) {
                float mt = ref_row_max(S + r * v->cols, v->cols);
                float lt = 0.0f;
                for (int c = 0; c < v->cols; c++)
                    lt = lt + v->v[r * v->cols + c];
                float sh = ref_shift(s->m_new[r]);
                float a = ref_exp(s->m_old[r] - sh), b = ref_exp(mt - sh);
                assert_true(fmaf(b, lt, a * s->l_old[r]) == s->l_new[r]);
                for (int c = 0; c < v->cols; c++)     /* P~ <= 1, = 1 at the max */
                    assert_true(v->v[r * v->cols + c] <= 1.0f);
            }
            n13++;
        }
    }
    assert_true(n13 > 0);
    free(S);
    viz_sdl_heat_free(h);
    viz_model_free(m);
}

/* naive: the softmax rows of line 2 sum to 1 and their maxima are the run's
 * m; line 3's P_ij tiles are those rows rounded to fp16 as stored. One-pass
 * (a row of S fits), two-pass (it does not) and three-pass (asked) plans. */
static void check_naive(int64_t N, uint64_t M, sim_softmax form, int passes)
{
    viz_config cfg;
    viz_config_default(&cfg);
    cfg.sh.dtype = SIM_FP16;
    cfg.algo = SIM_NAIVE;
    cfg.sh.N = N;
    cfg.sh.d = 16;
    cfg.sh.M = M;
    cfg.run.softmax = form;
    cfg.mode = VIZ_MODE_COMPUTE;
    viz_model *m = NULL;
    char err[2048];
    assert_int_equal(viz_model_build(&cfg, &m, err, sizeof err), VIZ_OK);
    const viz_info *in = viz_model_info(m);
    assert_int_equal(in->plan.softmax_passes, passes);
    viz_sdl_heat *h = viz_sdl_heat_new(NULL, NULL);
    viz_sdl_heat_probe(h, m);          /* the right inputs: no false alarm */
    float *P = calloc((size_t)(N * N), sizeof *P);
    int nrows = 0, ntiles = 0, nchecked = 0;
    for (uint64_t k = 0; k < in->nsteps; k++) {
        assert_int_equal(viz_model_seek(m, k), 0);
        const viz_state *st = viz_model_state(m);
        const viz_sdl_heat_view *v = viz_sdl_heat_get(h, m);
        if (st->line == 1 && st->j >= 0)
            assert_int_equal(v->kind, VIZ_SDL_HEAT_S);
        if (st->line == 2 && (passes == 1 || st->pass == passes)) {
            assert_int_equal(v->kind, VIZ_SDL_HEAT_P);
            nchecked += v->checked;
            for (int r = 0; r < v->rows; r++) {
                memcpy(P + (v->row0 + r) * N + v->col0, v->v + r * v->cols,
                       (size_t)v->cols * sizeof *P);
                if (passes == 1) {
                    double sum = 0;
                    for (int c = 0; c < v->cols; c++)
                        sum += v->v[r * v->cols + c];
                    assert_true(fabs(sum - 1.0) < 1e-5);
                    nrows++;
                }
            }
        } else if (st->line == 2) {
            assert_int_equal(v->kind, VIZ_SDL_HEAT_S);      /* earlier passes read S */
        }
        if (st->line == 3 && st->j >= 0) {
            assert_int_equal(v->kind, VIZ_SDL_HEAT_P);
            for (int r = 0; r < v->rows; r++)
                for (int c = 0; c < v->cols; c++) {
                    float want = P[(v->row0 + r) * N + v->col0 + c];
                    sim_round_to_dtype(&want, 1, SIM_FP16);
                    assert_true(v->v[r * v->cols + c] == want);
                }
            ntiles++;
        }
    }
    assert_true(ntiles > 0 && nchecked > 0);
    if (passes == 1)
        assert_int_equal(nrows, N);
    free(P);
    viz_sdl_heat_free(h);
    viz_model_free(m);
}

static void test_heat_naive(void **state)
{
    (void)state;
    check_naive(64, 8192, SIM_SOFTMAX_AUTO, 1);      /* a row of S (256 B) fits */
    check_naive(256, 1024, SIM_SOFTMAX_AUTO, 2);     /* a row (1 KiB) does not */
    check_naive(256, 1024, SIM_SOFTMAX_3PASS, 3);
}

/* A run of algo from the caller's inputs (N = 64, d = 16, fp32, seed 99,
 * not the view's seed): the model, and the inputs in *Q, *K, *V for the
 * caller to free. */
static viz_model *caller_model(sim_algo algo, float **Q, float **K, float **V)
{
    const int64_t N = 64, d = 16;
    *Q = malloc((size_t)(N * d) * sizeof **Q);
    *K = malloc((size_t)(N * d) * sizeof **K);
    *V = malloc((size_t)(N * d) * sizeof **V);
    assert_true(*Q && *K && *V);
    sim_random_inputs(99, N, d, SIM_FP32, *Q, *K, *V);
    viz_config cfg;
    viz_config_default(&cfg);
    cfg.algo = algo;
    cfg.sh.N = N;
    cfg.sh.d = d;
    cfg.sh.M = 8 * 1024;
    cfg.Q = *Q;
    cfg.K = *K;
    cfg.V = *V;
    viz_model *m = NULL;
    char err[2048];
    assert_int_equal(viz_model_build(&cfg, &m, err, sizeof err), VIZ_OK);
    return m;
}

/* The probe on a run from the caller's inputs, at step s_step (an S_ij
 * tile that cannot be compared itself): without the inputs the heat map is
 * off there, with a note; with them it shows S_ij, and at p_step a P~_ij
 * tile checked against the run's m_i. The model is left at p_step. */
static void check_probe(viz_model *m, const float *Q, const float *K, uint64_t s_step,
                        uint64_t p_step)
{
    viz_sdl_heat *blind = viz_sdl_heat_new(NULL, NULL);
    viz_sdl_heat *told = viz_sdl_heat_new(Q, K);
    assert_int_equal(viz_model_seek(m, s_step), 0);
    viz_sdl_heat_probe(blind, m);
    assert_int_equal(viz_model_state(m)->step, s_step);    /* left where it was */
    const viz_sdl_heat_view *v = viz_sdl_heat_get(blind, m);
    assert_int_equal(v->kind, VIZ_SDL_HEAT_NONE);
    assert_non_null(strstr(v->note, "needs seeded inputs"));
    viz_sdl_heat_probe(told, m);
    assert_int_equal(viz_sdl_heat_get(told, m)->kind, VIZ_SDL_HEAT_S);
    assert_int_equal(viz_model_seek(m, p_step), 0);
    v = viz_sdl_heat_get(told, m);
    assert_int_equal(v->kind, VIZ_SDL_HEAT_P);
    assert_true(v->checked);
    viz_sdl_heat_free(blind);
    viz_sdl_heat_free(told);
}

/* A run from the caller's inputs: without them the heat map says so (its
 * recomputed maxima disagree with the run's m_i); with them it is exact. */
static void test_heat_caller_inputs(void **state)
{
    (void)state;
    float *Q, *K, *V;
    viz_model *m = caller_model(SIM_FA2, &Q, &K, &V);
    uint64_t k9 = find(m, 9, 0, 0), k8 = find(m, 8, 0, 0), k8b = find(m, 8, 1, 0);
    assert_true(k8 < k9);
    /* Without the probe, the first S_ij (before any step that can be
     * compared) would be drawn from the seeded inputs; with it, it is not. */
    check_probe(m, Q, K, k8, k9);
    /* Once off, off for the run. */
    viz_sdl_heat *blind = viz_sdl_heat_new(NULL, NULL);
    assert_int_equal(viz_model_seek(m, k8), 0);
    viz_sdl_heat_probe(blind, m);
    assert_int_equal(viz_model_seek(m, k9), 0);
    assert_int_equal(viz_sdl_heat_get(blind, m)->kind, VIZ_SDL_HEAT_NONE);
    assert_int_equal(viz_model_seek(m, k8b), 0);           /* sticky */
    assert_int_equal(viz_sdl_heat_get(blind, m)->kind, VIZ_SDL_HEAT_NONE);
    viz_sdl_heat_free(blind);
    /* The screenshot path takes the inputs through the options. */
    viz_sdl_opts o;
    viz_sdl_opts_default(&o);
    o.Q = Q;
    o.K = K;
    o.V = V;
    char path[512], err[2048];
    tu_path(path, sizeof path, "npy.bmp");
    assert_int_equal(viz_sdl_screenshot(m, &o, k9, path, 640, 400, err, sizeof err), 0);
    viz_model_free(m);
    free(Q);
    free(K);
    free(V);
}

/* FA1 from the caller's inputs: the probe compares at line 13, where m_i
 * takes the new maxima, so that the first S_ij (line 9) is not drawn from
 * the seeded inputs either; with the inputs line 13's tile is checked. */
static void test_heat_caller_inputs_fa1(void **state)
{
    (void)state;
    float *Q, *K, *V;
    viz_model *m = caller_model(SIM_FA1, &Q, &K, &V);
    check_probe(m, Q, K, find(m, 9, 0, 0), find(m, 13, 0, 0));
    viz_model_free(m);
    free(Q);
    free(K);
    free(V);
}

/* ---- the font ---------------------------------------------------------------- */

static void test_font(void **state)
{
    (void)state;
    for (int ch = 32; ch <= 126; ch++) {
        const char *const *g = viz_sdl_glyph(ch);
        int lit = 0;
        for (int r = 0; r < VIZ_SDL_GLYPH_H; r++) {
            assert_int_equal(strlen(g[r]), VIZ_SDL_GLYPH_W);
            for (int c = 0; c < VIZ_SDL_GLYPH_W; c++) {
                assert_true(g[r][c] == '#' || g[r][c] == '.');
                lit += g[r][c] == '#';
            }
        }
        assert_true(ch == ' ' ? lit == 0 : lit > 0);
        /* No two glyphs alike (a copy-paste slip would make two letters one). */
        for (int other = 32; other < ch; other++) {
            const char *const *o = viz_sdl_glyph(other);
            int same = 1;
            for (int r = 0; r < VIZ_SDL_GLYPH_H && same; r++)
                same = strcmp(g[r], o[r]) == 0;
            if (same)
                fprintf(stderr, "glyphs '%c' and '%c' are the same\n", ch, other);
            assert_false(same);
        }
    }
    assert_ptr_equal(viz_sdl_glyph(200), viz_sdl_glyph('?'));
    assert_ptr_equal(viz_sdl_glyph(7), viz_sdl_glyph('?'));
    assert_int_equal(viz_sdl_text_width("abc", 2), 3 * VIZ_SDL_CELL_W * 2);
    /* Drawn text lights exactly the glyph's pixels. */
    SDL_Surface *s = SDL_CreateRGBSurfaceWithFormat(0, 40, 20, 32, SDL_PIXELFORMAT_RGB888);
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(s);
    SDL_SetRenderDrawColor(r, 0, 0, 0, 255);
    SDL_RenderClear(r);
    assert_int_equal(viz_sdl_text(r, 1, 2, 1, 0xffffff, "A"), VIZ_SDL_CELL_W);
    SDL_RenderFlush(r);
    const char *const *g = viz_sdl_glyph('A');
    for (int y = 0; y < 20; y++)
        for (int x = 0; x < 40; x++) {
            int in = x >= 1 && x < 1 + VIZ_SDL_GLYPH_W && y >= 2 && y < 2 + VIZ_SDL_GLYPH_H &&
                     g[y - 2][x - 1] == '#';
            assert_int_equal(pixel(s, x, y), in ? 0xffffffu : 0u);
        }
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(s);
}

/* ---- the window, on the dummy video driver ------------------------------------ */

typedef struct {
    const char *script;     /* characters; '\n' is Return, '<' is Left, '!' a click */
    SDL_atomic_t done;
} driver;

static SDL_Event scripted(char ch)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    if (ch == '\n' || ch == '<' || ch == 27) {
        e.type = SDL_KEYDOWN;
        e.key.keysym.sym = ch == '\n' ? SDLK_RETURN : ch == '<' ? SDLK_LEFT : SDLK_ESCAPE;
    } else if (ch == '!') {
        e.type = SDL_MOUSEBUTTONDOWN;
        e.button.button = SDL_BUTTON_LEFT;
        e.button.x = 40;
        e.button.y = 100;
    } else {
        e.type = SDL_TEXTINPUT;
        e.text.text[0] = ch;
    }
    return e;
}

/* Types the script and then 'q'. SDL_PushEvent fails (< 0) until the
 * window's SDL_Init has started the event queue, so each event is retried
 * until it is queued; nothing is pushed after 'q', so nothing can race the
 * window's SDL_Quit. */
static int drive(void *p)
{
    driver *d = p;
    size_t n = strlen(d->script);
    for (size_t k = 0; k <= n && !SDL_AtomicGet(&d->done); k++) {
        SDL_Event e = scripted(k < n ? d->script[k] : 'q');
        while (!SDL_AtomicGet(&d->done) && SDL_PushEvent(&e) != 1)
            SDL_Delay(5);
        SDL_Delay(20);
    }
    return 0;
}

static int run_script(viz_model *m, const char *script, char *err, size_t errlen)
{
    SDL_SetHint(SDL_HINT_VIDEODRIVER, "dummy");
    driver d = { script, { 0 } };
    SDL_Thread *t = SDL_CreateThread(drive, "driver", &d);
    assert_non_null(t);
    viz_sdl_opts o;
    viz_sdl_opts_default(&o);
    o.width = 800;
    o.height = 500;
    int rc = viz_sdl_run(m, &o, err, errlen);
    SDL_AtomicSet(&d.done, 1);
    SDL_WaitThread(t, NULL);
    return rc;
}

static void test_window(void **state)
{
    (void)state;
    viz_model *m = build(SIM_FA2, 64, 16, 8192, 0);
    char err[1024] = "";
    /* n n: step 3; g 12 Enter: step 12; b and Left: step 10 (1-based). */
    int rc = run_script(m, "nng12\nb<", err, sizeof err);
    if (rc != 0 && strstr(err, "dummy")) {
        viz_model_free(m);
        skip();                      /* an SDL built without the dummy driver */
    }
    assert_int_equal(rc, 0);
    assert_int_equal(viz_model_state(m)->step, 9);
    /* Speed, help, play, a click, goto cancelled, the theme switched twice,
     * then the algorithm switched three times (back to fa2, the caller's
     * model) and the mask twice. */
    assert_int_equal(run_script(m, "++-? ?  !g5\x1b" "tt" "aaacc r", err, sizeof err), 0);
    assert_int_equal(viz_model_state(m)->step, 0);
    viz_model_free(m);
}

/* Without any usable video driver the window refuses with a hint. */
static void test_window_no_display(void **state)
{
    (void)state;
    viz_model *m = build(SIM_FA2, 64, 16, 8192, 0);
    SDL_SetHint(SDL_HINT_VIDEODRIVER, "fasim-no-such-driver");
    char err[1024] = "";
    assert_int_equal(viz_sdl_run(m, NULL, err, sizeof err), VIZ_EFAIL);
    assert_non_null(strstr(err, "--screenshot FILE"));
    assert_non_null(strstr(err, "terminal view"));
    viz_model_free(m);
}

/* Every string a frame draws, one a line (ui->text_seen). */
typedef struct {
    char all[1 << 16];
    size_t n;
} seen_text;

static void seen_add(void *arg, const char *s, int x, int y, int max_w, SDL_Rect p)
{
    (void)x, (void)y, (void)max_w, (void)p;
    seen_text *t = arg;
    t->n += (size_t)snprintf(t->all + t->n, t->n < sizeof t->all ? sizeof t->all - t->n : 0,
                             "%s\n", s);
    if (t->n >= sizeof t->all)
        t->n = sizeof t->all - 1;
}

static void frame_text(viz_model *m, uint64_t step, int w, int h, seen_text *t)
{
    assert_int_equal(viz_model_seek(m, step), 0);
    SDL_Surface *sf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_RGB888);
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(sf);
    viz_sdl_font *font = viz_sdl_font_open();
    t->n = 0;
    t->all[0] = 0;
    viz_sdl_ui ui = { .inputs = "seeded", .font = font, .text_seen = seen_add, .text_arg = t };
    viz_sdl_draw(r, w, h, m, NULL, &ui, NULL);
    viz_sdl_font_close(font);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(sf);
}

/* Whether the SDL frame at step of algo's run (N, d, causal, the default
 * M), drawn at w x h, shows the text want. */
static int frame_says(sim_algo algo, int64_t N, int64_t d, int causal, uint64_t step, int w,
                      int h, const char *want)
{
    static seen_text t;
    viz_model *m = build(algo, N, d, VIZ_DEFAULT_M, causal);
    frame_text(m, step, w, h, &t);
    const int found = strstr(t.all, want) != NULL;
    viz_model_free(m);
    return found;
}

/* The byte counters say what they count in the terminal view's words, in
 * units that name themselves: at the last step of FA2 (N = 256, d = 32,
 * fp16) Q has been read once, 256 x 32 x 2 B = 16 KiB, of 16 KiB. */
static void test_counters_wording(void **state)
{
    (void)state;
    viz_model *m = build(SIM_FA2, 256, 32, VIZ_DEFAULT_M, 0);
    static seen_text t;
    frame_text(m, viz_model_info(m)->nsteps - 1, 1920, 1080, &t);
    assert_non_null(strstr(t.all, "bytes so far / total\n"));
    assert_null(strstr(t.all, "closed-form total"));
    assert_non_null(strstr(t.all, "\n16 KiB/16 KiB\n"));
    for (const char *p = t.all; *p; p++)      /* no "16.0K": a K is a KiB */
        if ((p[0] == 'K' || p[0] == 'M') && p > t.all && p[-1] >= '0' && p[-1] <= '9')
            fail_msg("a bare unit: ...%.24s", p - 1);
    viz_model_free(m);
}

/* FA3's pipeline in the bottom bar: at step 5 of N = 64, d = 16 (B_r = B_c
 * = 32, block (1, 1) at line 11) stage 1 holds K_1, V_1 for GEMM0 while
 * the producer fills stage 0 with K_2, V_2, and the bar says the view has
 * no clock. The other loop orders' frames have no such line. */
static void test_pipeline_bar(void **state)
{
    (void)state;
    const int a = sim_fa3_register();
    assert_true(a >= 0);
    viz_model *m = build((sim_algo)a, 64, 16, VIZ_DEFAULT_M, 0);
    static seen_text t;
    frame_text(m, 4, 1280, 800, &t);
    assert_non_null(strstr(t.all, "pipeline: who does what at this step"));
    assert_non_null(strstr(t.all, "SMEM stages"));
    assert_non_null(strstr(t.all, "0: K_2 V_2: producer filling  1: K_1 V_1: GEMM0 on K"));
    viz_model_free(m);
    assert_false(frame_says(SIM_FA2, 64, 16, 0, 4, 1280, 800, "pipeline:"));
}

/* A pixel of block (i, j) in the block grid, near its bottom-left corner:
 * inside the current block's outline (2 units), off a skipped block's
 * diagonal and clear of the visit number in its middle. */
static uint32_t block_pixel(const SDL_Surface *s, const viz_sdl_layout *lay, int64_t i, int64_t j)
{
    const viz_sdl_grid_area *g = &lay->blocks;
    assert_true(g->present);
    const int side = g->area.w / (int)g->cells_c, in = 2 * lay->scale + 1;
    assert_int_equal(g->area.h / (int)g->cells_r, side);
    assert_true(side >= 2 * in);
    return pixel(s, g->area.x + (int)j * side + in, g->area.y + (int)(i + 1) * side - 1 - in);
}

/* The T_r x T_c block grid: FA2 (causal, N = 256, B_r = 48, B_c = 16:
 * T_r = 6, T_c = 16) at block (i, j) = (4, 11), 1-based: blocks of rows
 * before it and of its row before it are done, (4, 11) is now, later ones
 * to come, and a block whose first column is past its last row is
 * skipped. FA1 (not causal) goes column by column: at (i, j) = (3, 2),
 * all of column 1 and (1, 2), (2, 2) are done, (4, 2) is to come. The
 * panel says the order in words. */
static void test_block_grid(void **state)
{
    (void)state;
    const viz_sdl_palette *pal = viz_sdl_palette_of(VIZ_SDL_THEME_LIGHT);
    viz_model *m = build_best(SIM_FA2, 256, 32, 16384, 1);
    const sim_plan *p = &viz_model_info(m)->plan;
    assert_int_equal(p->Br, 48);
    assert_int_equal(p->Bc, 16);
    viz_sdl_layout lay;
    SDL_Surface *s = render(m, find(m, 9, 3, 10), 1920, 1080, &lay);
    assert_int_equal(lay.blocks.cells_r, 6);
    assert_int_equal(lay.blocks.cells_c, 16);
    for (int64_t i = 0; i < 6; i++)
        for (int64_t j = 0; j < 16; j++) {
            const int skipped = j * 16 > (i + 1) * 48 - 1;      /* col > row everywhere */
            const int now = i == 3 && j == 10;
            const int done = !skipped && (i < 3 || (i == 3 && j < 10));
            const uint32_t px = block_pixel(s, &lay, i, j);
            if (skipped)
                assert_int_equal(px, pal->masked);
            else if (now)
                assert_int_equal(px, pal->t_load);
            else if (done)
                assert_int_equal(px, pal->t_read);
            else
                assert_int_equal(px, pal->panel);
        }
    SDL_FreeSurface(s);
    static seen_text t;
    frame_text(m, 0, 1920, 1080, &t);
    assert_non_null(strstr(t.all, "row by row"));
    viz_model_free(m);

    m = build(SIM_FA1, 256, 32, VIZ_DEFAULT_M, 0);
    p = &viz_model_info(m)->plan;
    const int64_t Tr = p->Tr, Tc = p->Tc;
    assert_true(Tr >= 4 && Tc >= 2);
    s = render(m, find(m, 8, 2, 1), 1920, 1080, &lay);
    for (int64_t i = 0; i < Tr; i++)
        for (int64_t j = 0; j < Tc; j++) {
            const uint32_t px = block_pixel(s, &lay, i, j);
            if (i == 2 && j == 1)
                assert_int_equal(px, pal->t_load);
            else if (j == 0 || (j == 1 && i < 2))
                assert_int_equal(px, pal->t_read);
            else
                assert_int_equal(px, pal->panel);
        }
    SDL_FreeSurface(s);
    frame_text(m, 0, 1920, 1080, &t);
    assert_non_null(strstr(t.all, "column by column"));
    viz_model_free(m);
    /* Causal on the view's square tiles: FA2's first row holds one block,
     * its next block is (2, 1), and the order is still row by row; FA1's
     * still column by column. */
    assert_true(frame_says(SIM_FA2, 256, 32, 1, 0, 1920, 1080, "row by row"));
    assert_true(frame_says(SIM_FA1, 256, 32, 1, 0, 1920, 1080, "column by column"));

    m = build(SIM_NAIVE, 256, 32, VIZ_DEFAULT_M, 0);     /* no block grid */
    s = render(m, 0, 1920, 1080, &lay);
    assert_false(lay.blocks.present);
    SDL_FreeSurface(s);
    viz_model_free(m);
}

/* Strings drawn inside a rectangle. */
typedef struct {
    SDL_Rect in;
    const char *want;
    int n;
} count_find;

static void count_seen(void *arg, const char *s, int x, int y, int max_w, SDL_Rect p)
{
    (void)max_w, (void)p;
    count_find *f = arg;
    if (!strcmp(s, f->want) && x >= f->in.x && x < f->in.x + f->in.w && y >= f->in.y &&
        y < f->in.y + f->in.h)
        f->n++;
}

/* How many times `want` is drawn in the top 1/part of tensor t's grid, in
 * the TrueType face (drawn twice: the first frame gives the grid's place). */
static int count_in(viz_model *m, int w, int h, sim_tensor t, int part, const char *want)
{
    SDL_Surface *sf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_RGB888);
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(sf);
    viz_sdl_font *font = viz_sdl_font_open();
    viz_sdl_layout lay;
    viz_sdl_ui ui = { .inputs = "seeded", .font = font };
    viz_sdl_draw(r, w, h, m, NULL, &ui, &lay);
    SDL_Rect in = lay.grid[t].area;
    assert_true(lay.grid[t].present);
    in.h /= part;
    count_find f = { in, want, 0 };
    ui.text_seen = count_seen;
    ui.text_arg = &f;
    viz_sdl_draw(r, w, h, m, NULL, &ui, NULL);
    viz_sdl_font_close(font);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(sf);
    return f.n;
}

/* Each tile says how often it moved: FA2 (N = 256, B_r = 64, B_c = 16:
 * T_r = 4, T_c = 16) when K_1 is loaded for i = 3 has read K_1 three times
 * (once per i), Q_1 .. Q_3 once each and Q_4 never, and written O_1 and
 * O_2 once each; at both window sizes. */
static void test_tile_counts(void **state)
{
    (void)state;
    viz_sdl_font *font = viz_sdl_font_open();
    const int ttf = viz_sdl_font_file(font) != NULL;
    viz_sdl_font_close(font);
    if (!ttf)
        skip();
    viz_model *m = build_best(SIM_FA2, 256, 32, VIZ_DEFAULT_M, 0);
    assert_int_equal(viz_model_info(m)->plan.Br, 64);
    assert_int_equal(viz_model_info(m)->plan.Bc, 16);
    static const int size[2][2] = { { 1920, 1080 }, { 1280, 800 } };
    for (int z = 0; z < 2; z++) {
        const int w = size[z][0], h = size[z][1];
        assert_int_equal(viz_model_seek(m, find(m, 7, 2, 0)), 0);
        assert_int_equal(count_in(m, w, h, SIM_K, 8, "3r"), 1);    /* tiles 1, 2 of 16 */
        assert_int_equal(count_in(m, w, h, SIM_K, 1, "4r"), 0);
        assert_int_equal(count_in(m, w, h, SIM_Q, 1, "1r"), 3);
        assert_int_equal(count_in(m, w, h, SIM_O, 1, "1w"), 2);
    }
    viz_model_free(m);
}

/* ---- every string fits its panel ----------------------------------------- */

/* What a frame drew that a reader loses: a string wider than the room it
 * was given or than its panel, or below its panel's bottom. Widths are
 * measured here from the face's metrics (monospace: characters x cell_w). */
typedef struct {
    viz_sdl_font_metrics fm;
    int lost;
    char first[512];
} fit_log;

static void fit_seen(void *arg, const char *s, int x, int y, int max_w, SDL_Rect p)
{
    fit_log *f = arg;
    const int w = (int)strlen(s) * f->fm.cell_w;
    const int right = p.x + p.w < x + max_w || max_w <= 0 ? p.x + p.w : x + max_w;
    if (x >= p.x && x + w <= right && y >= p.y && y + f->fm.cap_h <= p.y + p.h)
        return;
    if (!f->lost++)
        snprintf(f->first, sizeof f->first, "\"%s\" at (%d, %d) %d px wide, room %d, "
                 "panel (%d, %d) %d x %d", s, x, y, w, right - x, p.x, p.y, p.w, p.h);
}

/* The runs and steps of the trial at both sizes: the README's screenshot,
 * FA1 at step 112, naive at step 20, every loop order at its first steps
 * and a few later ones, and each backward pass. */
static void test_text_fits(void **state)
{
    (void)state;
    viz_sdl_font *font = viz_sdl_font_open();
    assert_non_null(font);
    if (!viz_sdl_font_file(font)) {
        viz_sdl_font_close(font);
        skip();
    }
    static const struct {
        sim_algo algo;
        uint64_t M;
        int causal;
        sim_pass pass;
        uint64_t steps[4];
    } runs[] = {
        { SIM_FA2, 16384, 1, SIM_FWD, { 0, 134, 80, 200 } },   /* the README's */
        { SIM_FA2, VIZ_DEFAULT_M, 0, SIM_FWD, { 0, 1, 12, 100 } },
        { SIM_FA1, VIZ_DEFAULT_M, 0, SIM_FWD, { 0, 111, 5, 300 } },
        { SIM_FA1, VIZ_DEFAULT_M, 1, SIM_FWD, { 0, 40, 90, 150 } },
        { SIM_NAIVE, VIZ_DEFAULT_M, 0, SIM_FWD, { 0, 19, 3, 60 } },
        { SIM_FA2, VIZ_DEFAULT_M, 0, SIM_BWD, { 0, 30, 100, 200 } },
        { SIM_FA1, VIZ_DEFAULT_M, 0, SIM_BWD, { 0, 30, 100, 200 } },
        { SIM_NAIVE, VIZ_DEFAULT_M, 0, SIM_BWD, { 0, 10, 30, 50 } },
    };
    static const int size[2][2] = { { 1920, 1080 }, { 1280, 800 } };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        viz_config cfg;
        viz_config_default(&cfg);
        cfg.algo = runs[k].algo;
        cfg.sh.M = runs[k].M;
        cfg.sh.causal = runs[k].causal;
        cfg.run.pass = runs[k].pass;
        viz_model *m = NULL;
        char err[2048];
        assert_int_equal(viz_model_build(&cfg, &m, err, sizeof err), VIZ_OK);
        const uint64_t n = viz_model_info(m)->nsteps;
        for (int z = 0; z < 2; z++)
            for (int q = 0; q < 4; q++) {
                const uint64_t step = runs[k].steps[q] < n ? runs[k].steps[q] : n - 1;
                const int w = size[z][0], h = size[z][1];
                assert_int_equal(viz_model_seek(m, step), 0);
                SDL_Surface *sf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32,
                                                                 SDL_PIXELFORMAT_RGB888);
                SDL_Renderer *r = SDL_CreateSoftwareRenderer(sf);
                viz_sdl_heat *heat = viz_sdl_heat_new(NULL, NULL);
                fit_log log = { .fm = viz_sdl_font_fit(font, w, h) };
                viz_sdl_ui ui = { .inputs = "seeded", .font = font, .text_seen = fit_seen,
                                  .text_arg = &log };
                viz_sdl_draw(r, w, h, m, heat, &ui, NULL);
                ui.interactive = ui.playing = 1;       /* the window's bars */
                ui.speed = 10;
                viz_sdl_draw(r, w, h, m, heat, &ui, NULL);
                viz_sdl_heat_free(heat);
                SDL_DestroyRenderer(r);
                SDL_FreeSurface(sf);
                if (log.lost)
                    fprintf(stderr, "%s %s%s, %d x %d, step %llu: %d strings cut, first %s\n",
                            sim_algo_name(cfg.algo), runs[k].pass ? "backward" : "forward",
                            cfg.sh.causal ? " causal" : "", w, h,
                            (unsigned long long)step + 1, log.lost, log.first);
                assert_int_equal(log.lost, 0);
            }
        viz_model_free(m);
    }
    viz_sdl_font_close(font);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checksums),
        cmocka_unit_test(test_png_known_2x2),
        cmocka_unit_test(test_png_round_trip),
        cmocka_unit_test(test_font),
        cmocka_unit_test(test_screenshot_png_valid),
        cmocka_unit_test(test_screenshot_deterministic),
        cmocka_unit_test(test_steps_differ),
        cmocka_unit_test(test_state_marks),
        cmocka_unit_test(test_palette),
        cmocka_unit_test(test_text_readable),
        cmocka_unit_test(test_text_fits),
        cmocka_unit_test(test_counters_wording),
        cmocka_unit_test(test_pipeline_bar),
        cmocka_unit_test(test_block_grid),
        cmocka_unit_test(test_tile_counts),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_heat_fa2),
        cmocka_unit_test(test_heat_fa1),
        cmocka_unit_test(test_heat_naive),
        cmocka_unit_test(test_heat_caller_inputs),
        cmocka_unit_test(test_heat_caller_inputs_fa1),
        cmocka_unit_test(test_window_no_display),
        cmocka_unit_test(test_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
