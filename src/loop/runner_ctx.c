/*
 * runner_ctx.c -- what every part of the runner stands on: an iteration's
 * context (its state, what expressions read, how it failed or stopped)
 * and the loop's clock (now, sleeping, a host's clock).  It calls nothing
 * else of the runner, so the files above it (records, slots, budgets,
 * effects, the body) do not call each other in circles.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "loop/runner.h"
#include "os/os.h"

lil_status lil__iter_init(struct iter *it, struct lil_loop *lp, int64_t iteration)
{
    memset(it, 0, sizeof(*it));
    it->lp = lp;
    it->iteration = iteration;
    it->state.env = lp->env;
    it->state.ir = lp->ir;
    it->state.vars = json_deep_copy(lp->committed);
    return it->state.vars ? LIL_OK
                          : lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
}

void lil__iter_free(struct iter *it)
{
    lil__state_free(&it->state);
    lil__free(it->lp->env, it->aliases);
    it->aliases = NULL;
}

void lil__loop_ctx(struct iter *it, struct lil_state_ctx *cx)
{
    struct lil_loop *lp = it->lp;

    memset(cx, 0, sizeof(*cx));
    cx->inputs = lp->fx.inputs;
    cx->environ = lp->fx.environ;
    cx->meta = lp->fx.meta;
    cx->iteration = (double)(it->iteration < 0 ? lp->meters.iteration : it->iteration);
    cx->aliases = it->aliases;
    cx->naliases = it->naliases;
}

void lil__loop_eval(struct iter *it, struct lil_eval *ev)
{
    struct lil_state_ctx cx;

    lil__loop_ctx(it, &cx);
    lil__state_eval_init(&it->state, &cx, ev);
}

lil_status lil__iter_fail(struct iter *it, lil_status code, const char *fmt, ...)
{
    va_list ap;
    char msg[LIL_ERRMSG_MAX];

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    it->why = WHY_FAIL;
    return lil__seterr(&it->lp->err, code, 0, "%s", msg);
}

lil_status lil__iter_stop(struct iter *it, enum iter_why why)
{
    it->why = why;
    return LIL_E_DONE;
}

void lil__loop_sleep(struct lil_loop *lp, int64_t ms)
{
    int64_t end = lil__loop_now(lp) + ms;
    lil_loop_event ev = {0};

    if (ms <= 0)
        return;
    if (lp->opt.progress) {
        ev.kind = LIL_LOOP_EV_SLEEP;
        ev.value = ms;
        lp->opt.progress(lp->opt.progress_ud, &ev);
    }
    if (lp->clock.now) { /* a clock of the host's: it waits */
        if (lp->clock.sleep)
            lp->clock.sleep(lp->clock.ud, ms);
        return;
    }
    for (int64_t left = ms; left > 0 && !lil__loop_interrupted(lp);
         left = end - lil__loop_now(lp))
        lp->env->os->poll(NULL, 0, left > 1000 ? 1000 : (int)left);
}

int64_t lil__loop_now_ms(void)
{
    return lil__wall_ns() / 1000000;
}

int64_t lil__loop_now(const struct lil_loop *lp)
{
    return lp->clock.now ? lp->clock.now(lp->clock.ud) : lil__loop_now_ms();
}

void lil__loop_set_clock(struct lil_loop *lp, int64_t (*now)(void *ud),
                         void (*sleep)(void *ud, int64_t ms), void *ud)
{
    lp->clock.now = now;
    lp->clock.sleep = now ? sleep : NULL;
    lp->clock.ud = ud;
}
