/*
 * sim_json.h — the one JSON writer every --json output goes through.
 *
 * A sim_json writes straight to a FILE and remembers, per nesting level,
 * whether the level holds an element yet, so callers never place a comma.
 * Every value function takes the member's key: a key for an object member,
 * NULL for an array element (or the top-level value).
 *
 *     sim_json w;
 *     sim_json_init(&w, out, SIM_JSON_COMPACT);
 *     sim_json_obj(&w, NULL);           {
 *     sim_json_int(&w, "N", 1024);        "N":1024
 *     sim_json_arr(&w, "runs");           ,"runs":[
 *     sim_json_str(&w, NULL, "fa2");        "fa2"
 *     sim_json_end(&w);                   ]
 *     sim_json_end(&w);                 }
 *
 * Strings are escaped as RFC 8259 asks: '"' and '\\' by a backslash, every
 * byte below 0x20 as \u00XX; all other bytes (UTF-8 included) pass through.
 * The writer keeps no buffer and never allocates; write errors are the
 * FILE's (ferror) to report.
 */
#ifndef FASIM_SIM_JSON_H
#define FASIM_SIM_JSON_H

#include <stdint.h>
#include <stdio.h>

/* Deepest nesting a writer tracks; fasim's outputs use at most 6 levels. */
#define SIM_JSON_MAX_DEPTH 16

typedef enum {
    SIM_JSON_COMPACT,            /* {"a":1,"b":[1,2]}         (report, sweep, claims) */
    SIM_JSON_SPACED              /* {"a": 1, "b": [1, 2]}     (gpu) */
} sim_json_style;

typedef struct {
    FILE *out;
    const char *comma;           /* "," or ", " */
    const char *colon;           /* ":" or ": " */
    int depth;                   /* open objects and arrays */
    unsigned char used[SIM_JSON_MAX_DEPTH];   /* level holds an element */
    unsigned char kind[SIM_JSON_MAX_DEPTH];   /* SIM_JSON_KIND_* bits of a level */
    int misuse;                  /* nesting passed the limit, or closed too often:
                                  * a caller's bug; the output is then not JSON */
} sim_json;

void sim_json_init(sim_json *w, FILE *out, sim_json_style style);

/* Open an object or an array as the member `key` (NULL in an array).
 * sim_json_arr_lines opens an array whose every element starts a new line
 * indented by two spaces and whose ']' stands on a line of its own. */
void sim_json_obj(sim_json *w, const char *key);
void sim_json_arr(sim_json *w, const char *key);
void sim_json_arr_lines(sim_json *w, const char *key);
/* Close the innermost open object or array. */
void sim_json_end(sim_json *w);

/* A string; NULL writes "" (an absent text is an empty one). */
void sim_json_str(sim_json *w, const char *key, const char *s);
void sim_json_int(sim_json *w, const char *key, long long v);
void sim_json_uint(sim_json *w, const char *key, unsigned long long v);
void sim_json_bool(sim_json *w, const char *key, int v);
void sim_json_null(sim_json *w, const char *key);

/* Numbers. JSON has no NaN or infinity: each writes null for them.
 *   sim_json_num    %.17g, enough digits to read back the same double (the
 *                   report, sweeps, claims);
 *   sim_json_num_g  %.*g with `digits` significant digits (gpu prints
 *                   timings and differences with 9, speedups with 6);
 *   sim_json_whole  %.0f, a double that holds a whole count (M_elems). */
void sim_json_num(sim_json *w, const char *key, double v);
void sim_json_num_g(sim_json *w, const char *key, double v, int digits);
void sim_json_whole(sim_json *w, const char *key, double v);

/* The escaped, quoted form of s alone, for output built outside a writer. */
void sim_json_write_string(FILE *out, const char *s);

#endif /* FASIM_SIM_JSON_H */
