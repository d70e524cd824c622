/*
 * value.h -- the values expressions compute with, and JavaScript's
 * conversions between them.
 *
 * LoopSpec expressions follow JavaScript semantics (docs/loopspec.md,
 * "Expressions and templates"), so a value may be undefined, NaN or an
 * infinity, which JSON cannot hold.  A struct lil_val is a small tagged
 * union passed by value;
 * strings and JSON containers it points to are borrowed: from the
 * evaluation context (state, inputs, ...), from the expression's own
 * literals, or from the evaluation's scratch buffer (valid until the next
 * lil__eval_reset).  Arrays and objects are only ever borrowed (expressions
 * cannot build them).
 */
#ifndef LIL_LANG_VALUE_H
#define LIL_LANG_VALUE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "json/json.h"

enum lil_vtype {
    LIL_V_UNDEF, /* undefined: a missing var, key or member */
    LIL_V_NULL,
    LIL_V_BOOL,
    LIL_V_NUM, /* IEEE double, NaN and infinities included */
    LIL_V_STR, /* UTF-8 bytes, s[len] need not be NUL */
    LIL_V_JSON /* a JSON array or object (borrowed) */
};

struct lil_val {
    enum lil_vtype t;
    bool b;
    double n;
    const char *s;
    size_t len;
    json_t *j;
};

/* The value of a JSON node (borrowed: strings point into it).  NULL is
 * undefined. */
struct lil_val lil__val_from_json(json_t *j);

/* A new JSON value (new reference) for v, as JSON.stringify would store it:
 * undefined -> NULL return with *undef set (the caller drops the key),
 * NaN and infinities -> null, -0 -> 0, integral doubles within 2^53 ->
 * integers, arrays/objects -> a new reference to the same container.
 * Returns NULL with *undef false only on allocation failure. */
json_t *lil__val_to_json(const struct lil_val *v, bool *undef);

/* JavaScript truthiness: false, 0, -0, NaN, "", null, undefined are falsy. */
bool lil__val_truthy(const struct lil_val *v);

/* JavaScript Number(v): strings are trimmed and parsed as decimal
 * (""->0, "x"->NaN), null->0, true->1, undefined->NaN, arrays via their
 * string form ([]->0, [5]->5), objects->NaN. */
double lil__val_number(const struct lil_val *v);

/* Append JavaScript String(v) to out: numbers in shortest round-trip form
 * (1e21, 1e-7, NaN, Infinity, -0 -> "0"), arrays joined by "," with
 * null/undefined elements empty, objects "[object Object]". */
lil_status lil__val_string(const struct lil_val *v, struct lil_buf *out);

/* Format a double as JavaScript's Number::toString does into out[32];
 * returns the length. */
size_t lil__num_format(double x, char out[32]);

/* Bytes of the JavaScript whitespace character (String.prototype.trim's
 * set: ASCII space and \t-\r, NBSP, U+1680, U+2000-U+200A, U+2028, U+2029,
 * U+202F, U+205F, U+3000, U+FEFF) at s, or 0. */
size_t lil__js_space_len(const char *s, size_t len);

/* Narrow [*start, *end) of s to drop JavaScript whitespace at both ends. */
void lil__js_trim(const char *s, size_t *start, size_t *end);

/* Strict equality (===): no coercion, NaN != NaN, containers by identity. */
bool lil__val_strict_eq(const struct lil_val *a, const struct lil_val *b);

#endif
