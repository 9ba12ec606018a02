/*
 * viz_sdl_png.h — a small PNG writer (no libpng, no zlib): 8-bit RGB, the
 * zlib stream written here, CRC-32 and Adler-32 computed here.
 *
 * Two encodings, both valid PNG that any decoder reads:
 *   VIZ_SDL_PNG_STORED     filter 0 on every row and deflate "stored" blocks
 *                          (RFC 1951, 3.2.4): the simplest possible file, for
 *                          tests and for checking by hand;
 *   VIZ_SDL_PNG_COMPRESSED per row the PNG filter (0-4) with the smallest sum
 *                          of absolute bytes (the PNG specification's
 *                          suggested heuristic), then one deflate block with
 *                          the fixed Huffman codes (RFC 1951, 3.2.6) over a
 *                          greedy LZ77 parse (hash chains of 3-byte prefixes,
 *                          32 KiB window). A view frame is mostly flat
 *                          colour and repeated rows, so this makes it 40 to
 *                          100 times smaller than stored blocks (a 1280 x 800
 *                          frame: 3.1 MB stored, about 55 KB compressed).
 * Both are deterministic: the same pixels give the same bytes.
 */
#ifndef FASIM_VIZ_SDL_PNG_H
#define FASIM_VIZ_SDL_PNG_H

#include <stddef.h>
#include <stdint.h>

typedef enum { VIZ_SDL_PNG_STORED, VIZ_SDL_PNG_COMPRESSED } viz_sdl_png_mode;

/* CRC-32 (ISO 3309, as PNG chunks use): pass crc = 0 first, then the value
 * returned to continue over more bytes. */
uint32_t viz_sdl_crc32(uint32_t crc, const void *data, size_t n);

/* Adler-32 (RFC 1950) of the uncompressed data: pass 1 first, then the value
 * returned to continue. */
uint32_t viz_sdl_adler32(uint32_t adler, const void *data, size_t n);

/* Encode an image of w x h pixels, row r at rgb + r * stride, 3 bytes per
 * pixel (R, G, B), as a PNG file in memory. On success returns 0 and sets
 * *out (malloc'ed, the caller frees it) and *outlen; on failure (w or h not
 * in 1..2^24, out of memory) returns -1 with a message in err. */
int viz_sdl_png_encode(const uint8_t *rgb, int w, int h, size_t stride,
                       viz_sdl_png_mode mode, uint8_t **out, size_t *outlen,
                       char *err, size_t errlen);

/* viz_sdl_png_encode, then write the file. Returns 0, or -1 with a message in
 * err ("cannot write 'x.png': No such file or directory"); a file that could
 * not be written completely is removed. */
int viz_sdl_png_write(const char *path, const uint8_t *rgb, int w, int h,
                      size_t stride, viz_sdl_png_mode mode, char *err, size_t errlen);

#endif /* FASIM_VIZ_SDL_PNG_H */
