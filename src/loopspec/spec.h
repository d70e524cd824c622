/*
 * spec.h -- the lil_spec handle and the front end's calls behind the
 * public lil_spec_* (src/api/specs.c checks their arguments and publishes
 * their errors): loading, the diagnostics, the normalized JSON and the
 * explain document; and what the rest of the library reads of a handle:
 * the IR (loopspec/ir/ir.h) of a loaded spec, the name it was loaded under and
 * its text.  They live as long as the handle.
 */
#ifndef LIL_SPEC_SPEC_H
#define LIL_SPEC_SPEC_H

#include <lil/lil.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/env.h"
#include "base/err.h"
#include "loopspec/diag.h"

struct lil_ir_spec;

struct lil_spec {
    uint32_t magic;     /* LIL_SPEC_MAGIC (base/handles.h) */
    struct lil_env env; /* a copy: allocator and os table */
    char *name;
    char *text; /* the text it was loaded from (a queued run keeps it) */
    size_t text_len;
    struct lil_ir_spec *ir;
    struct lil_diags diags;
};

/* Load a spec from text (len bytes) or from the file at path, named name
 * (path): *out is set even when the spec has errors (diagnostics); an
 * error in err only when nothing could be examined (LIL_E_NOMEM, LIL_E_IO,
 * ...).  env NULL: the defaults.  Arguments are the caller's to check. */
lil_status lil__spec_parse(lil_env *env, struct lil_err *err, const char *name,
                           const char *text, size_t len, const lil_spec_limits *lim,
                           lil_spec **out);
lil_status lil__spec_load(lil_env *env, struct lil_err *err, const char *path,
                          const lil_spec_limits *lim, lil_spec **out);

/* Valid handle, no error diagnostics, an IR (lil_spec_ok). */
bool lil__spec_ok(const lil_spec *spec);

/* Diagnostics (0 / NULL for an invalid handle or i past the last), the
 * spec's id (NULL when it has none). */
size_t lil__spec_diag_count(const lil_spec *spec);
const lil_diag *lil__spec_diag(const lil_spec *spec, size_t i);
const char *lil__spec_id(const lil_spec *spec);

/* The normalized spec's JSON, the explain document counted from now_ms
 * (blocks for lil_free; LIL_E_SPEC for a spec with errors). */
lil_status lil__spec_json(const lil_spec *spec, struct lil_err *err, lil_bytes *out);
lil_status lil__spec_explain_at(const lil_spec *spec, struct lil_err *err,
                                int64_t now_ms, lil_bytes *out);

/* Release spec (NULL or an invalid handle: nothing). */
void lil__spec_free(lil_spec *spec);

/* The IR, or NULL for an invalid handle or a spec whose text could not be
 * examined. */
const struct lil_ir_spec *lil__spec_ir(const lil_spec *spec);

/* The name given to the loader (a path for lil_spec_load); "" if none. */
const char *lil__spec_name(const lil_spec *spec);

/* The text the spec was loaded from (*len bytes, NUL after them), kept by a
 * spec whose IR was built (what lil_loop_submit queues); NULL otherwise. */
const char *lil__spec_text(const lil_spec *spec, size_t *len);

#endif
