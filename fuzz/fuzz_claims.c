/*
 * fuzz_claims.c — the claims-file parser (sim_claims_parse) on arbitrary text,
 * and the check of what it accepts.
 *
 * Properties: a file is either accepted whole (every claim then has a line
 * number within the file and a non-empty shape) or
 * refused with a message; the first few accepted claims are checked with the
 * closed forms (exact, and cheap), which must give a verdict or an error with
 * a message, never a crash or a hang.
 */
#include "fuzz_util.h"

#include "sim_claims.h"

#define FUZZ_CLAIMS_CHECKED 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_string(data, size);
    int lines = 1;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    sim_claim_list list = { 0, NULL };
    char err[4096];
    err[0] = '\0';
    int bad = sim_claims_parse("fuzz.claims", text, &list, err, sizeof err);
    if (bad != 0) {
        fuzz_check_message(err, 0, text);
        FUZZ_CHECK(list.n == 0 && list.items == NULL, "a refused file left claims");
        free(text);
        return 0;
    }
    for (int k = 0; k < list.n; k++) {
        const sim_user_claim *c = &list.items[k];
        FUZZ_CHECK(c->line >= 1 && c->line <= lines, "line %d of %d", c->line, lines);
        FUZZ_CHECK(c->sh.N >= 1 && c->sh.d >= 1 && c->sh.M >= 1, "an empty shape");
        if (k >= FUZZ_CLAIMS_CHECKED)
            continue;
        sim_claim_outcome out;
        char why[1024];
        why[0] = '\0';
        if (sim_user_claim_check(c, SIM_ENGINE_CLOSED, &out, why, sizeof why) != 0)
            fuzz_check_message(why, 0, text);
    }
    sim_claim_list_free(&list);
    free(text);
    return 0;
}
