/*
 * fasim_web.h — the page's C API (web/fasim_web.c): the classroom report and
 * the step-by-step view as JSON strings.
 *
 * args is a command line of the report's options, one word a line
 * ("--N\n1024\n--M\n96K"). Each function returns a NUL-terminated JSON
 * document owned by fasim_web.c and valid until the next call: the result,
 * or {"error": MESSAGE, "status": EXIT}, MESSAGE the line the command line
 * prints on stderr for the same options and EXIT its exit status.
 */
#ifndef FASIM_WEB_H
#define FASIM_WEB_H

/* fasim's version ("0.1.0"), a plain string. */
const char *fw_version(void);

/* `fasim ARGS --json`'s output, byte for byte but for the wall times. */
const char *fw_report(const char *args);

/* The report fw_report built last, as `fasim ARGS` prints it (80 columns,
 * plain text, not JSON), or "" when none was built. */
const char *fw_report_text(void);

/* Record the view of ARGS (--algo naming one loop order) in slot 0 or 1
 * and return what does not change from step to step: the run, its plan,
 * its tensors' tile grids, its pseudocode, its final counts. */
const char *fw_view_open(int slot, const char *args);

/* Step `step` (0-based) of slot's view: the line, the block (i, j), what
 * moved, the running counts, SRAM's buffers, m and l before and after, the
 * tiles' reads and writes so far, the block grid. */
const char *fw_view_step(int slot, double step);

/* The products' vector path (ref_simd.h; wasm128 in the page) held to the
 * scalar specification on `trials` random tiles (1..10000), bit for bit:
 * {"path": NAME, "trials": T, "values": V, "differ": D}, D values whose bits
 * differ (0 when the path is right). Leaves the active path as it was. */
const char *fw_simd_check(int trials);

#endif /* FASIM_WEB_H */
