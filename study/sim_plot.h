/*
 * sim_plot.h — the data and the gnuplot script of a sweep's plot.
 *
 * For an image path IMG.svg (or IMG.png) this writes IMG.dat (the data, one
 * row per point, columns named in a comment line) and IMG.gp (a readable
 * gnuplot script that draws IMG.svg from IMG.dat: HBM bytes against the
 * varied parameter on log-log axes, one line per loop order, the slopes
 * Theorem 2 predicts as dashed guides over the in-regime range, and the lower
 * bound of Proposition 3 in bytes). Running gnuplot is the caller's business
 * (the CLI does it when gnuplot is installed): the simulator never starts
 * processes.
 */
#ifndef FASIM_SIM_PLOT_H
#define FASIM_SIM_PLOT_H

#include <stddef.h>

#include "sim_sweep.h"

/* Whether path ends in ".svg" or ".png" (case-insensitive). */
int sim_plot_format_ok(const char *image);

/* Write the data and the script for a sweep with ONE varied parameter.
 * dat and gp receive the paths written (image's name with .dat and .gp in
 * place of its extension). The script refers to the data by its file name
 * alone and is meant to be run from the image's directory (gnuplot's
 * working directory), so the three files travel together.
 * Returns 0, or -1 with err set (not one axis, bad extension, I/O). */
int sim_plot_write(const sim_sweep_result *res, const char *image, char *dat, size_t datlen,
                   char *gp, size_t gplen, char *err, size_t errlen);

#endif /* FASIM_SIM_PLOT_H */
