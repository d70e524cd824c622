/*
 * call.h -- the context a step function receives (lil_call).  Lives on
 * the stack of lil__run_step / lil__marker for the duration of fn, or, for
 * a step or marker begun in two calls (lil_step_begin, lil_marker_begin),
 * on the heap until lil_call_end or lil_call_cancel frees it.
 */
#ifndef LIL_ENGINE_CALL_H
#define LIL_ENGINE_CALL_H

#include <stdarg.h>
#include <stdbool.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/handles.h"

struct lil_call {
    uint32_t magic;
    const struct lil_env *env;
    const char *scope; /* run id, or "marker" */
    const char *identity;
    char idem_key[4 + 32 + 1]; /* "lil-" + 32 hex; made on first use */
    unsigned attempt;
    struct lil_buf result;
    struct lil_buf reason;
    bool failed;
    lil_status abandoned; /* lil__call_abandon: journal no outcome */
    int kind;             /* enum lil_call_kind */
};

/* Where a call lives: inside fn (the callback), or begun in two calls. */
enum lil_call_kind {
    LIL_CALL_IN_FN = 0, /* lil_step, lil_effect, lil_marker: during fn */
    LIL_CALL_STEP = 1,  /* lil_step_begin / lil_effect_begin (step.c) */
    LIL_CALL_MARKER = 2 /* lil_marker_begin (marker.c) */
};

/* Prepare call for identity of scope (run id or "marker"). */
void lil__call_init(struct lil_call *call, const struct lil_env *env, const char *scope,
                    const char *identity, unsigned attempt, size_t max_result);
void lil__call_free(struct lil_call *call);

/* The step function gives up without an outcome (the loop runner, when
 * its effect's process group was killed, or when it could not even hold
 * its result): no outcome is journaled.  A plain step is then as if never
 * called (its call returns why); an effect keeps its intent and the run is
 * uncertain (LIL_E_UNCERTAIN), as after a crash. */
void lil__call_abandon(struct lil_call *call, lil_status why);

/* "lil-" + 32 hex of SHA-256(scope NUL identity), computed once; NULL on OOM. */
const char *lil__call_idempotency_key(struct lil_call *call);

/* What a step function sets on its call (call.c): the result bytes (a
 * copy), a canonical JSON result from a text or a jansson pack format, or
 * the failure's reason (printf format, cut at 999 bytes).  Errors in err:
 * LIL_E_TOOBIG over the run's max_record, LIL_E_NOMEM, a JSON error. */
lil_status lil__call_set_result(struct lil_call *call, struct lil_err *err,
                                const void *data, size_t len);
lil_status lil__call_set_json(struct lil_call *call, struct lil_err *err,
                              const char *json);
lil_status lil__call_set_jsonv(struct lil_call *call, struct lil_err *err,
                               const char *fmt, va_list ap);
lil_status lil__call_failv(struct lil_call *call, struct lil_err *err, const char *fmt,
                           va_list ap);
lil_status lil__call_fail(struct lil_call *call, struct lil_err *err, const char *fmt,
                          ...) LIL_PRINTF(3, 4);

#endif
