/*
 * spec.h -- what the rest of the library reads of a lil_spec handle: the
 * IR (spec/ir.h) of a loaded spec, the name it was loaded under and its
 * text.  They live as long as the handle.
 */
#ifndef LIL_SPEC_SPEC_H
#define LIL_SPEC_SPEC_H

#include <lil/lil.h>

struct lil_ir_spec;

/* The IR, or NULL for an invalid handle or a spec whose text could not be
 * examined. */
const struct lil_ir_spec *lil__spec_ir(const lil_spec *spec);

/* The name given to the loader (a path for lil_spec_load); "" if none. */
const char *lil__spec_name(const lil_spec *spec);

/* The text the spec was loaded from (*len bytes, NUL after them), kept by a
 * spec whose IR was built (what lil_loop_submit queues); NULL otherwise. */
const char *lil__spec_text(const lil_spec *spec, size_t *len);

#endif
