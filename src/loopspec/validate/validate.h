/*
 * validate.h -- shared by the validator's files (validate.c: declarations,
 * steps, expressions; validate_top.c: terminate, caps, schedule, gates,
 * artifacts, notify, observe; cmd_quoting.c: unquoted shell commands;
 * call_budget.c: agent calls a token budget can never admit).  Not used
 * outside them.
 *
 * A struct vctx is one validation: the IR, the diagnostics, the step ids
 * seen so far (a jansson object used as a hash set) and the reduce aliases
 * in scope (innermost last).
 */
#ifndef LIL_SPEC_VALIDATE_H
#define LIL_SPEC_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include "json/json.h"
#include "loopspec/diag.h"
#include "loopspec/ir/ir.h"

#define VALIDATE_MAX_ALIASES 64
#define VALIDATE_PATH_MAX    600

struct vctx {
    const struct lil_ir_spec *ir;
    struct lil_diags *d;
    json_t *ids; /* step id -> true */
    const char *aliases[VALIDATE_MAX_ALIASES];
    size_t naliases;
    bool nomem;
};

/* bad-expr / bad-ref checks of one guard or template at path (absent ones
 * are skipped). */
void lil__validate_guard(struct vctx *v, const struct lil_ir_guard *g,
                         const char *path);
void lil__validate_tmpl(struct vctx *v, const struct lil_ir_tmpl *t, const char *path);

/* `unquoted-cmd` warnings for a cmd that /bin/sh runs (cmd_quoting.c). */
void lil__validate_cmd_quoting(struct vctx *v, const struct lil_ir_tmpl *t,
                               const char *path);

/* Every template of a request (url, headers, string body) under path. */
void lil__validate_http(struct vctx *v, const struct lil_ir_http *h, const char *path);

/* `unknown-harness` for an agent harness name. */
void lil__validate_harness(struct vctx *v, const struct lil_ir_str *h,
                           const char *path);

/* call_budget.c: `call-over-budget`. */
void lil__validate_call_budget(struct vctx *v);

/* validate_top.c: docs/loopspec.md, "Validation", steps 3 and 4. */
void lil__validate_top(struct vctx *v);

#endif
