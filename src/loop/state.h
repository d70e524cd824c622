/*
 * state.h -- the state of a running loop and the inputs it was given
 * (docs/loopspec.md, "State" and "Inputs"): the initial
 * state, the inputs resolved against their declarations, what a step's
 * `save` and `on_done` do, the snapshot a journal keeps and its restore,
 * and the fingerprint of the no-progress cap.  Pure logic: no I/O, no
 * clock, no journal (the runner writes what these functions give it).
 *
 * One value model (docs/loops.md, "What lil does differently from the
 * reference runtime").  The state is a JSON object, state var name ->
 * value.  JavaScript has values JSON has not; lil stores, at every
 * write, what JSON.stringify would write, so the live state is always
 * exactly what its snapshot holds and a resumed run sees what a continuous
 * run saw (in the reference a continuous run keeps NaN where a resumed one
 * reads null: NaN + 1 is NaN, null + 1 is 1):
 *   - undefined (a `save` path that misses or meets null, a var never
 *     initialized) is no key at all: `state.x` reads undefined, and the
 *     snapshot has no "x";
 *   - NaN and the infinities are stored as null (so `incr` of an undefined
 *     var stores null, and a second `incr` gives 1);
 *   - -0 is stored as 0 and an integral number within 2^53 as a JSON
 *     integer (5, never 5.0);
 *   - values are never shared: every write copies (a set of
 *     "${state.list}" copies the list, so a later append to one does not
 *     change the other, as after a snapshot and restore).
 *
 * A step's result (lil__state_apply), in the reference's order:
 *   1. `save`, entry by entry: var <- the JSONPath subset of `save`
 *      (lang/jsonpath.h) over the result; a miss overwrites the var with
 *      undefined (the key goes), as the reference does (null would be
 *      more useful: lil keeps the reference here, so `state.x == null` is
 *      false after a miss, as in the reference);
 *   2. `on_done.incr`: state[v] + 1 with JavaScript's `+`: a string, array
 *      or object concatenates ("3" -> "31", [1,2] -> "1,21"), anything else
 *      adds numbers (undefined -> NaN, stored null; null -> 1; true -> 2);
 *   3. `on_done.set`, entry by entry as written: a string value is a
 *      template; one that is exactly "${expr}" stores the expression's
 *      typed value (lil's deliberate difference from the reference:
 *      "${1 > 2}" stores false, not "false"; undefined stores null), any
 *      other template its rendered string; a non-string value (5, true,
 *      [..], {..}) is stored as written, strings inside it not rendered;
 *   4. `on_done.append`, entry by entry: the value as for set, pushed onto
 *      the var's array; a var that is not an array (undefined included) is
 *      LIL_E_SPEC naming the step and the var.
 * Each expression sees the state as changed so far (a set reads what incr
 * stored).  The roots are the reference's: state, inputs, env, meta,
 * iteration, and the aliases of the enclosing reduce steps (the caller's
 * struct lil_state_ctx); there is no `result` root: a result reaches the
 * state only through `save`.  A reference to another root reads undefined
 * (the validator refuses it).  lil__state_apply is all or nothing: on any
 * error the state is as it was.
 *
 * Inputs (lil__inputs_resolve; the reference applies neither `required`
 * nor `default`).  The spec's declarations, their defaults, an inputs
 * object (`--inputs FILE.json`, parsed by the caller) and NAME=VALUE
 * strings (`--input`, which win over the object) make one JSON object,
 * input name -> value, an input without value having no key.  A NAME=VALUE
 * value is converted to the declared type:
 *   string     the text as it is;
 *   int        a JSON number with an integral value ("5" -> 5, "5.0" -> 5,
 *              "1e3" -> 1000; "5.5", "five" are errors);
 *   number     a JSON number ("2.5", "-1", "1e-3");
 *   boolean    exactly `true` or `false` ("yes", "1", "True" are errors);
 *   list       JSON text of an array ("[1,2]");
 *   json       any JSON text ("{\"a\":1}", "\"text\"", "null");
 *   enum[..]   the text, when it is one of the members.
 * JSON text may have blanks around it.  A value in the inputs object is
 * taken as it is and must match the type as a default must (null
 * matches every type).  Unknown names, values that do not convert or
 * match, a name given twice as NAME=VALUE, and a required input that has
 * neither a value nor a default are LIL_E_INVAL, the message naming the
 * input, its declared type and the value.  The runner journals the
 * object's canonical bytes (lil__json_canon) when a run starts and, on
 * resume, compares them with what it resolves then (lil__inputs_compare):
 * replay depends on them.
 *
 * Snapshot (lil__state_snapshot) and restore: the canonical JSON (json.h)
 * of the state object; restore takes any JSON text of an object.
 *
 * Fingerprint (lil__state_fingerprint; caps.no_progress): the
 * fingerprint guard evaluated on the state after the body, as the
 * canonical JSON of its value, so an object's or array's content counts
 * (the reference's String() makes every object "[object Object]");
 * NaN, Infinity and -Infinity keep those names (JSON has none, and they
 * must not equal null or each other), and so does undefined (a save that
 * missed): `undefined`, a value of its own, so that identical misses are
 * no progress (the reference's String(undefined)).
 *
 * Errors: LIL_E_NOMEM (every allocation through the env, jansson's inside
 * a scope bound to it); LIL_E_TOOBIG when a rendered value or a buffer
 * passes its cap; LIL_E_SPEC for a spec the runner should not have been
 * given (an unparsed expression, an undeclared var) and for append to a
 * non-array; LIL_E_INVAL for bad inputs or a bad snapshot.  Messages name
 * the step, the var or input and what was wrong.
 *
 * Ownership and threads: a struct lil_loop_state owns its object; the IR
 * it was made from is borrowed and must outlive it.  lil__state_apply and
 * lil__state_restore replace st->vars with a new object: a struct lil_eval
 * filled from the old one (lil__state_eval_init) must be filled again.
 * Values given in (results, inputs, snapshots) are copied.  One thread at
 * a time per state; the IR may be shared.
 */
#ifndef LIL_LOOP_STATE_H
#define LIL_LOOP_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/env.h"
#include "json/json.h"
#include "lang/expr.h"
#include "loopspec/ir/ir.h"

/* ---- the state -------------------------------------------------------------- */

struct lil_loop_state {
    const struct lil_env *env;
    const struct lil_ir_spec *ir; /* borrowed: the declared vars */
    json_t *vars;                 /* owned object: var name -> value */
};

/* What expressions read besides the state, all borrowed. */
struct lil_state_ctx {
    json_t *inputs;                  /* lil__inputs_resolve's object, or NULL */
    json_t *environ;                 /* env.*: an object of strings, or NULL */
    json_t *meta;                    /* lil__state_meta's object, or NULL */
    double iteration;                /* 0-based index of the running iteration */
    const struct lil_alias *aliases; /* reduce aliases in scope, innermost last */
    size_t naliases;
};

/* The initial state: every declared var with an `init`, a deep copy of it
 * (a var without `init` is undefined: no key).  st is filled on LIL_OK and
 * zeroed on failure.  LIL_E_NOMEM. */
lil_status lil__state_init(struct lil_loop_state *st, const struct lil_env *env,
                           const struct lil_ir_spec *ir, struct lil_err *err);

/* Release the object and zero st.  Harmless on a zeroed st and twice. */
void lil__state_free(struct lil_loop_state *st);

/* The value of a var (borrowed, until st changes), or NULL when undefined. */
json_t *lil__state_get(const struct lil_loop_state *st, const char *var);

/* Apply a step's result: save, then on_done (see the top).  result may be
 * NULL (undefined: every save path misses); cx may be NULL (no inputs,
 * env, meta or aliases; iteration 0).  All or nothing.  LIL_E_SPEC
 * (unparsed template, undeclared var, append to a non-array), LIL_E_NOMEM,
 * LIL_E_TOOBIG (a rendered value over 16 MiB). */
lil_status lil__state_apply(struct lil_loop_state *st, struct lil_err *err,
                            const struct lil_state_ctx *cx,
                            const struct lil_ir_step *step, json_t *result);

/* Append the snapshot, the canonical JSON of the state object, to out.
 * LIL_E_NOMEM, LIL_E_TOOBIG past out's cap (out keeps its length). */
lil_status lil__state_snapshot(const struct lil_loop_state *st, struct lil_err *err,
                               struct lil_buf *out);

/* Replace the state (made by lil__state_init) with the snapshot text (len
 * bytes: JSON text of an object, as lil__state_snapshot writes it; numbers
 * normalized as every write is).  LIL_E_INVAL for text that is
 * not JSON of an object (the state is then unchanged), LIL_E_NOMEM. */
lil_status lil__state_restore(struct lil_loop_state *st, struct lil_err *err,
                              const char *text, size_t len);

/* The no-progress fingerprint of the state (see the top), appended to out
 * with *has set; *has false and out untouched when the spec has no
 * caps.no_progress.  LIL_E_SPEC when the guard
 * did not parse, LIL_E_NOMEM, LIL_E_TOOBIG (past out's cap or the
 * evaluation's). */
lil_status lil__state_fingerprint(const struct lil_loop_state *st, struct lil_err *err,
                                  const struct lil_state_ctx *cx, struct lil_buf *out,
                                  bool *has);

/* The `meta` root of expressions: {name, version, description} of the
 * normalized spec (no description key when the spec has none).  New
 * reference in *out.  LIL_E_NOMEM. */
lil_status lil__state_meta(const struct lil_env *env, struct lil_err *err,
                           const struct lil_ir_spec *ir, json_t **out);

/* A copy of v as the state stores a value (the value model above: numbers
 * normalized, nothing shared).  Call inside a json scope.  LIL_E_NOMEM;
 * LIL_E_TOOBIG for a value nested deeper than LIL_STATE_MAX_DEPTH. */
#define LIL_STATE_MAX_DEPTH 4096
lil_status lil__state_copy_value(json_t *v, json_t **out);

/* Set up ev (lil__eval_init) to read st and cx: for the runner's guards
 * (when, until, over).  Release with lil__eval_free; fill again after st
 * changes. */
void lil__state_eval_init(const struct lil_loop_state *st,
                          const struct lil_state_ctx *cx, struct lil_eval *ev);

/* ---- inputs (state_inputs.c) ------------------------------------------------ */

/* Resolve the inputs of a run (see the top).  given: the inputs object, or
 * NULL; pairs: npairs "NAME=VALUE" strings (the first '=' splits).  New
 * object in *out.  LIL_E_INVAL (message naming the input, its type and
 * the value), LIL_E_SPEC (an input whose declared type did not parse),
 * LIL_E_NOMEM. */
lil_status lil__inputs_resolve(const struct lil_env *env, struct lil_err *err,
                               const struct lil_ir_spec *ir, json_t *given,
                               const char *const *pairs, size_t npairs, json_t **out);

/* Is the input named name a secret's (effects/redact.h: its name holds
 * KEY, TOKEN, SECRET, PASSWORD, PASSWD or CREDENTIAL)?  Its value is never
 * journaled nor shown (runner_secrets.c). */
bool lil__input_is_secret(const char *name);

/* text converted to input name's type as NAME=VALUE is (new value in
 * *out).  LIL_E_INVAL (no such input, or the value does not fit),
 * LIL_E_NOMEM. */
lil_status lil__inputs_convert(const struct lil_env *env, struct lil_err *err,
                               const struct lil_ir_spec *ir, const char *name,
                               const char *text, json_t **out);

/* Compare the inputs a run started with (was: the journaled object) with
 * those resolved now.  LIL_OK when every input has the same value (JSON
 * equality; resolution stores 5.0 as 5, so the canonical bytes of one
 * resolution read back equal another) and the same ones are absent.  Otherwise
 * LIL_E_INVAL, *name set to the first input that differs (in byte order of
 * names; borrowed from was or now) and err saying "input 'n' changed since
 * the run started: it was 5, now 6" ("not given" for an absent one).
 * LIL_E_NOMEM.  name may be NULL. */
lil_status lil__inputs_compare(const struct lil_env *env, struct lil_err *err,
                               json_t *was, json_t *now, const char **name);

#endif
