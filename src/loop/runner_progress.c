/*
 * runner_progress.c -- what the runner tells the host while it runs (the
 * progress callback of lil_loop_opts: an iteration starts, an effect
 * starts and ends, a streamed agent call's running tokens, a pause, a cap,
 * a sleep) and what a call's result notes
 * of its steps: a shell step whose command was not found (exit 127) or is
 * not executable (126), by step, with the first and last iteration it
 * happened in and how many times ("step_notes"), so a loop that spins on
 * it until max_iterations says so from its first iteration on.
 */
#include <stdio.h>
#include <string.h>

#include "loop/runner.h"
#include "loop/shell_note.h"

void lil__loop_progress(struct lil_loop *lp, lil_loop_event_kind kind,
                        int64_t iteration, const char *step, const char *effect,
                        int64_t value, const char *text)
{
    lil_loop_event ev;

    if (!lp->opt.progress)
        return;
    memset(&ev, 0, sizeof(ev));
    ev.kind = kind;
    ev.iteration = iteration;
    ev.step = step;
    ev.effect = effect;
    ev.value = value;
    ev.text = text;
    ev.tokens = lp->meters.tokens;
    ev.usd = lp->meters.usd;
    ev.elapsed_ms = lil__loop_now(lp) - lp->meters.wallclock_base_ms;
    lp->opt.progress(lp->opt.progress_ud, &ev);
}

void lil__loop_call_tokens(struct lil_loop *lp, int64_t iteration, const char *step,
                           int64_t tokens, int64_t *told)
{
    if (*told >= 0 && tokens < *told + LIL_LOOP_TOKENS_STEP)
        return;
    *told = tokens;
    lil__loop_progress(lp, LIL_LOOP_EV_TOKENS, iteration, step, "agent", tokens, NULL);
}

/* Note text for step at iteration (one entry per step; the first
 * LOOP_NOTES_MAX steps). */
static void note_add(struct lil_loop *lp, const char *step, int64_t iteration,
                     const char *text)
{
    struct loop_note *n = NULL;

    for (size_t i = 0; i < lp->nnotes && !n; i++)
        if (strcmp(lp->notes[i].step, step) == 0)
            n = &lp->notes[i];
    if (!n && lp->nnotes == LOOP_NOTES_MAX)
        return;
    if (!n) {
        n = &lp->notes[lp->nnotes++];
        snprintf(n->step, sizeof(n->step), "%s", step);
        n->first = iteration;
        n->count = 0;
    }
    snprintf(n->text, sizeof(n->text), "%.*s", (int)sizeof(n->text) - 1, text);
    n->last = iteration;
    n->count++;
}

void lil__loop_effect_end(struct lil_loop *lp, int64_t iteration, const char *step,
                          const char *kind, int64_t ms, const json_t *outcome,
                          const char *why)
{
    const json_t *result = json_object_get(outcome, "result");
    const json_t *code = json_object_get(result, "code");
    char text[LIL_ERRMSG_MAX + 16];
    const char *say = NULL;
    bool shell = kind && strcmp(kind, "shell") == 0;

    if (shell && lil__shell_note(result, NULL, text, sizeof(text))) {
        note_add(lp, step ? step : "on_exit", iteration, text);
        say = text;
    } else if (shell && json_is_integer(code) && json_integer_value(code) != 0) {
        snprintf(text, sizeof(text), "exit %lld", (long long)json_integer_value(code));
        say = text;
    } else if (!outcome) {
        snprintf(text, sizeof(text), "%s%s", why ? "failed: " : "uncertain",
                 why ? why : "");
        say = text;
    }
    lil__loop_progress(lp, LIL_LOOP_EV_EFFECT_END, iteration, step, kind, ms, say);
}

json_t *lil__loop_notes_json(const struct lil_loop *lp)
{
    json_t *a;

    if (lp->nnotes == 0)
        return NULL;
    a = json_array();
    for (size_t i = 0; a && i < lp->nnotes; i++) {
        const struct loop_note *n = &lp->notes[i];

        json_array_append_new(
            a, json_pack("{s:s, s:s, s:I, s:I, s:I}", "step", n->step, "note", n->text,
                         "first_iteration", (json_int_t)n->first, "last_iteration",
                         (json_int_t)n->last, "count", (json_int_t)n->count));
    }
    return a;
}
