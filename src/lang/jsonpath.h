/*
 * jsonpath.h -- the JSONPath subset of `save` (docs/loopspec.md, "JSONPath
 * in `save`"): `$`, dotted keys, at most one `[n]` index per segment.
 */
#ifndef LIL_LANG_JSONPATH_H
#define LIL_LANG_JSONPATH_H

#include <stdbool.h>
#include <stddef.h>

#include "json/json.h"

/* The value at path in src as a new reference, or NULL for "undefined"
 * (a miss, a JSON null at the target, an unsupported form).  Strings index
 * to one-character strings; `length` of a string or array is a number.
 * Never fails otherwise: an allocation failure is also NULL, which a caller
 * tells apart by running it in a json scope (lil__json_end says LIL_E_NOMEM). */
json_t *lil__jsonpath_get(json_t *src, const char *path);

/* Can path ever match?  False, with a reason in why (e.g. "'[*]' is not
 * supported: only one [n] index per segment"), for forms the subset always
 * reads as undefined.  Used for warnings. */
bool lil__jsonpath_supported(const char *path, char *why, size_t why_len);

#endif
