/*
 * fuzz_claims.c — the claims-file parser (sim_claims_parse) on arbitrary text,
 * and the check of what it accepts.
 *
 * Properties: a file is either accepted whole (every claim then has a line
 * number within the file and a non-empty shape, and there are at most
 * SIM_MAX_CLAIMS) or refused with a message; the file's work, the tile
 * steps fasim claims bounds before anything runs, is the sum of its claims'
 * (checked on the first few), none under the closed forms, no more under
 * auto than under sim, and for a file fasim claims accepts, within the
 * bound; the first few accepted claims are checked with the closed forms
 * (exact, and cheap), which must give a verdict or an error with a message,
 * never a crash or a hang.
 */
#include "fuzz_util.h"

#include "sim_claims.h"
#include "sim_limits.h"

#define FUZZ_CLAIMS_CHECKED 4
#define FUZZ_CLAIMS_CHEAP_STEPS (1u << 16)   /* simulated in about a millisecond */

/* The work of an accepted file as fasim claims estimates it (the estimate
 * is what the bound is checked on, so it must add up and order). */
static void check_work(const sim_claim_list *list)
{
    uint64_t w_auto = sim_claims_sim_steps(list, SIM_ENGINE_AUTO);
    uint64_t w_sim = sim_claims_sim_steps(list, SIM_ENGINE_SIM);
    FUZZ_CHECK(sim_claims_sim_steps(list, SIM_ENGINE_CLOSED) == 0,
               "the closed forms simulate something");
    FUZZ_CHECK(w_auto <= w_sim, "auto simulates %llu steps, sim %llu",
               (unsigned long long)w_auto, (unsigned long long)w_sim);
    /* Each claim runs at most two loop orders, each simulated under auto
     * only up to SIM_ENGINE_AUTO_STEPS. */
    FUZZ_CHECK(w_auto / 2 / SIM_ENGINE_AUTO_STEPS <= (uint64_t)list->n,
               "auto simulates %llu steps for %d claims", (unsigned long long)w_auto,
               list->n);
    sim_claim_list head = { list->n < FUZZ_CLAIMS_CHECKED ? list->n : FUZZ_CLAIMS_CHECKED,
                            list->items };
    uint64_t sum = 0;
    for (int k = 0; k < head.n; k++) {
        sim_claim_list one = { 1, &list->items[k] };
        uint64_t s = sim_claims_sim_steps(&one, SIM_ENGINE_AUTO);
        sum = s > UINT64_MAX - sum ? UINT64_MAX : sum + s;
        /* The estimate is the work the check does: a claim estimated at
         * no steps is answered by closed forms, one estimated at some is
         * simulated (checked where that is cheap). */
        if (s > FUZZ_CLAIMS_CHEAP_STEPS)
            continue;
        sim_claim_outcome out;
        char why[1024];
        if (sim_user_claim_check(&list->items[k], SIM_ENGINE_AUTO, &out, why, sizeof why) == 0)
            FUZZ_CHECK(out.simulated == (s > 0), "claim %d: estimated %llu steps, %s", k,
                       (unsigned long long)s, out.simulated ? "simulated" : "not simulated");
    }
    FUZZ_CHECK(sum == sim_claims_sim_steps(&head, SIM_ENGINE_AUTO),
               "the first claims' work does not add up");
}

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
    FUZZ_CHECK(list.n <= SIM_MAX_CLAIMS, "%d claims accepted", list.n);
    check_work(&list);
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
