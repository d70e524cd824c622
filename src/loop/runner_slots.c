/*
 * runner_slots.c -- the slots of the current iteration: the records
 * journaled since the last snapshot, by name ("I.S", "exit.S"), with
 * their outcome, the intent's note and an agent call's reservations
 * (struct loop_slot, runner.h).  The fold (runner_load.c), the body,
 * effects and budgets read and fill them; a snapshot clears them.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "loop/runner.h"

void lil__loop_slot_name(char out[LIL_LOOP_NAME_MAX], int64_t iteration, int64_t seq)
{
    size_t len = 4;

    if (iteration < 0)
        memcpy(out, "exit", 4);
    else
        len = lil__i64_text(iteration, out);
    out[len++] = '.';
    len += lil__i64_text(seq, out + len);
    out[len] = '\0';
}

struct loop_slot *lil__loop_slot(struct lil_loop *lp, const char *name)
{
    for (size_t i = 0; i < lp->nslots; i++)
        if (strcmp(lp->slots[i].name, name) == 0)
            return &lp->slots[i];
    return NULL;
}

struct loop_slot *lil__loop_slot_get(struct lil_loop *lp, const char *name)
{
    struct loop_slot *s = lil__loop_slot(lp, name);

    if (s)
        return s;
    s = lil__grow(lp->env, lp->slots, &lp->capslots, lp->nslots, sizeof(*s), 8);
    if (!s) {
        lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
        return NULL;
    }
    lp->slots = s;
    s = &lp->slots[lp->nslots++];
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "%s", name);
    return s;
}

lil_status lil__loop_slot_put(struct lil_loop *lp, const char *name, json_t *outcome)
{
    struct loop_slot *s = lil__loop_slot_get(lp, name);

    if (!s) {
        json_decref(outcome);
        return lp->err.code;
    }
    json_decref(s->outcome);
    s->outcome = outcome;
    return LIL_OK;
}

void lil__loop_slots_clear(struct lil_loop *lp)
{
    for (size_t i = 0; i < lp->nslots; i++) {
        json_decref(lp->slots[i].outcome);
        lil__free(lp->env, lp->slots[i].note);
    }
    lp->nslots = 0;
}
