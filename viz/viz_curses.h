/*
 * viz_curses.h — the interactive terminal view (ncurses). The only part of
 * fasim that includes curses is viz_curses.c; this header does not.
 *
 * Terminal hygiene (docs/ARCHITECTURE.md, Layers): the terminal is restored (endwin)
 * on every way out — q, errors, SIGINT, SIGTERM, SIGHUP — before anything is
 * printed; resizes (SIGWINCH, seen as KEY_RESIZE) redraw at the new size.
 * Colour is used only when the terminal has it and NO_COLOR is unset; every
 * mark is also a distinct character and reverse/bold video, so TERM=vt100
 * works.
 */
#ifndef FASIM_VIZ_CURSES_H
#define FASIM_VIZ_CURSES_H

#include <stddef.h>
#include <stdint.h>

#include "viz_explore.h"
#include "viz_model.h"

/* 1 when fasim was built with curses. */
int viz_curses_available(void);

/* Run the view on the terminal until the user quits.
 *   cfg   the configuration *pm was built from, inputs included: 'a' (switch
 *         loop order) and 'c' (toggle causal) rebuild from it;
 *   pm    the model to show; the view may replace it (rebuilds) and leaves
 *         in *pm the model shown last, which the caller frees;
 *   start the step to show first (0-based; clamped).
 * Returns 0 when the user quit, 128 + signal number after SIGINT, SIGTERM or
 * SIGHUP, 2 when the model shown last is a refused plan (its message in err),
 * 1 with a message in err when the terminal cannot be used. The terminal is
 * restored in every case before returning. */
int viz_curses_run(const viz_config *cfg, viz_model **pm, uint64_t start, char *err,
                   size_t errlen);

/* Run `fasim explore` on the terminal until the user quits: the screen of
 * viz_explore_draw with VIZ_EXPLORE_STATUS, one key at a time through
 * viz_explore_key (*e changes), redrawn at once and on every resize. 'v'
 * builds the view of viz_explore_view_config(e), leaves curses, runs
 * viz_curses_run in this process and comes back when the view quits.
 * Returns 0 when the user quit, 128 + signal number after SIGINT, SIGTERM or
 * SIGHUP (in explore or in the view), 1 with a message in err when the
 * terminal cannot be used. The terminal is restored in every case before
 * returning. */
int viz_curses_explore(viz_explore *e, char *err, size_t errlen);

#endif /* FASIM_VIZ_CURSES_H */
