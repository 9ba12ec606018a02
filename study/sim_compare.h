/*
 * sim_compare.h — two reports side by side: `fasim compare A vs B`.
 *
 * Each side is one run (one loop order, one pass) of a report built as the
 * classroom report builds it. The comparison is a list of rows, each a
 * quantity of both runs (the configuration, the plan, the HBM traffic per
 * tensor, the error against the float64 oracle), marked where the two
 * differ, with B / A for the numbers. The text table and the JSON are both
 * printed from the rows, so they say the same thing.
 */
#ifndef FASIM_SIM_COMPARE_H
#define FASIM_SIM_COMPARE_H

#include <stdio.h>

#include "sim_report.h"

typedef enum {
    SIM_CMP_CONFIG,      /* what was asked: loop order, shape, dtype, mask */
    SIM_CMP_PLAN,        /* blocks, tiles, steps, SRAM */
    SIM_CMP_TRAFFIC,     /* HBM bytes, per tensor and in total */
    SIM_CMP_ERROR,       /* against the float64 oracle, when both computed */
    SIM_CMP_SECTIONS
} sim_cmp_section;

/* One quantity of both runs. Numbers keep their value (is_num) for B / A
 * and the JSON; every row keeps its text as the table shows it. */
typedef struct {
    sim_cmp_section section;
    char name[40];           /* "B_r x B_c", "K bytes" */
    char a[32], b[32];       /* as shown: "64 x 64", "1,048,576", "fp16" */
    int is_num;
    double va, vb;           /* the values when is_num */
    int differs;
} sim_cmp_row;

#define SIM_CMP_MAX_ROWS 64

typedef struct {
    int nrows;
    sim_cmp_row rows[SIM_CMP_MAX_ROWS];
    int ndiffer;             /* rows that differ */
} sim_comparison;

/* The section's heading: "configuration", "plan", ... */
const char *sim_cmp_section_name(sim_cmp_section s);

/* Compare the one run of each report (each must hold exactly one run:
 * sim_compare_check says so first). Fills *c. */
void sim_compare(const sim_report *a, const sim_report *b, sim_comparison *c);

/* --plan same (the default) on both sides: one square for both, the largest
 * that fits each side's run, so that the two compare on the same tiles.
 * Either side asking for another plan leaves both as they are. */
void sim_compare_same_tiles(sim_request *a, sim_request *b);

/* Whether req asks for exactly one run (one loop order, one pass, no
 * split-KV or grouped extra). Returns 0, or -1 with a message naming the
 * option to change. */
int sim_compare_check(const sim_request *req, char *err, size_t errlen);

/* The table: labels, A, B, B / A and a mark on each row that differs;
 * a_args, b_args are the two sides' options as the user gave them. */
void sim_compare_text(FILE *out, const sim_comparison *c, const char *a_args,
                      const char *b_args);
void sim_compare_json(FILE *out, const sim_comparison *c, const char *a_args,
                      const char *b_args);

#endif /* FASIM_SIM_COMPARE_H */
