/*
 * sim_json.c — the JSON writer (see sim_json.h).
 */
#include "sim_json.h"

#include <math.h>

enum {
    KIND_OBJECT = 1,             /* closed by '}', members carry keys */
    KIND_LINES = 2               /* an array with one element a line */
};

void sim_json_init(sim_json *w, FILE *out, sim_json_style style)
{
    w->out = out;
    w->comma = style == SIM_JSON_SPACED ? ", " : ",";
    w->colon = style == SIM_JSON_SPACED ? ": " : ":";
    w->depth = 0;
    w->misuse = 0;
    for (int k = 0; k < SIM_JSON_MAX_DEPTH; k++)
        w->used[k] = w->kind[k] = 0;
}

void sim_json_write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

/* Everything a value needs before it: the comma after an earlier element
 * of its level, the line break of a lines array, and "key": in an object. */
static void lead_in(sim_json *w, const char *key)
{
    int lv = w->depth - 1;
    if (lv >= 0 && lv < SIM_JSON_MAX_DEPTH) {
        int lines = w->kind[lv] & KIND_LINES;
        if (w->used[lv])
            fputs(lines ? "," : w->comma, w->out);
        if (lines)
            fputs("\n  ", w->out);
        w->used[lv] = 1;
    }
    if (key) {
        sim_json_write_string(w->out, key);
        fputs(w->colon, w->out);
    }
}

static void open_level(sim_json *w, const char *key, int kind)
{
    lead_in(w, key);
    fputc(kind & KIND_OBJECT ? '{' : '[', w->out);
    if (w->depth < SIM_JSON_MAX_DEPTH) {
        w->used[w->depth] = 0;
        w->kind[w->depth] = (unsigned char)kind;
    } else {
        w->misuse = 1;
    }
    w->depth++;
}

void sim_json_obj(sim_json *w, const char *key) { open_level(w, key, KIND_OBJECT); }
void sim_json_arr(sim_json *w, const char *key) { open_level(w, key, 0); }
void sim_json_arr_lines(sim_json *w, const char *key) { open_level(w, key, KIND_LINES); }

void sim_json_end(sim_json *w)
{
    if (w->depth <= 0) {
        w->misuse = 1;
        return;
    }
    int lv = --w->depth;
    int kind = lv < SIM_JSON_MAX_DEPTH ? w->kind[lv] : 0;
    if (kind & KIND_LINES)
        fputc('\n', w->out);
    fputc(kind & KIND_OBJECT ? '}' : ']', w->out);
}

void sim_json_str(sim_json *w, const char *key, const char *s)
{
    lead_in(w, key);
    sim_json_write_string(w->out, s);
}

void sim_json_int(sim_json *w, const char *key, long long v)
{
    lead_in(w, key);
    fprintf(w->out, "%lld", v);
}

void sim_json_uint(sim_json *w, const char *key, unsigned long long v)
{
    lead_in(w, key);
    fprintf(w->out, "%llu", v);
}

void sim_json_bool(sim_json *w, const char *key, int v)
{
    lead_in(w, key);
    fputs(v ? "true" : "false", w->out);
}

void sim_json_null(sim_json *w, const char *key)
{
    lead_in(w, key);
    fputs("null", w->out);
}

void sim_json_num_g(sim_json *w, const char *key, double v, int digits)
{
    lead_in(w, key);
    if (isfinite(v))
        fprintf(w->out, "%.*g", digits, v);
    else
        fputs("null", w->out);
}

void sim_json_num(sim_json *w, const char *key, double v)
{
    sim_json_num_g(w, key, v, 17);
}

void sim_json_whole(sim_json *w, const char *key, double v)
{
    lead_in(w, key);
    if (isfinite(v))
        fprintf(w->out, "%.0f", v);
    else
        fputs("null", w->out);
}
