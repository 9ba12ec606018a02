/*
 * viz_text.h — the plain-text renderer: the view's frames as text, for pipes
 * (`fasim view ... | cat`), tests (golden frames) and docs/.
 *
 * Output is deterministic (no timings, no terminal codes): ASCII only, lines
 * without trailing spaces, at most `w` columns.
 */
#ifndef FASIM_VIZ_TEXT_H
#define FASIM_VIZ_TEXT_H

#include <stdint.h>
#include <stdio.h>

#include "viz_model.h"

/* The size of a text frame: the 80 x 24 terminal view without its status
 * line. */
#define VIZ_TEXT_W 80
#define VIZ_TEXT_H 23

/* Print the model's current step as one frame of w x h. Returns 0, or -1
 * when the frame cannot be allocated or written. */
int viz_text_frame(FILE *out, const viz_model *m, int w, int h);

/* Print `count` frames from step `first` (0-based) on, each preceded by a
 * separator line "---- step K of N ----...". Stops at the last step. Seeks
 * the model. A refused plan prints its one frame. Returns 0 or -1 (write
 * error). */
int viz_text_frames(FILE *out, viz_model *m, uint64_t first, uint64_t count, int w, int h);

#endif /* FASIM_VIZ_TEXT_H */
