/*
 * ident.h -- identifier rules, declared types and "did you mean" for loop
 * specs (docs/loopspec.md, "Ids, names and types").
 */
#ifndef LIL_SPEC_IDENT_H
#define LIL_SPEC_IDENT_H

#include <stdbool.h>
#include <stddef.h>

#include "json/json.h"

/* Loop and step ids: ^[A-Za-z0-9_.:-]+$ */
bool lil__ident_is_id(const char *s);

/* State var, input and alias names: ^[A-Za-z_][A-Za-z0-9_]*$ */
bool lil__ident_is_name(const char *s);

/* A JavaScript reserved word (the reference's list). */
bool lil__ident_is_reserved(const char *s);

/* A name the reference's code generator binds (ctx state inputs env meta
 * iteration spec runtime __res __out __in __fp __waited). */
bool lil__ident_is_binding(const char *s);

/* An expression root: state inputs env meta iteration. */
bool lil__ident_is_root(const char *s);

/* Declared types: string int number boolean json list enum[...]. */
enum lil_type_kind {
    LIL_TYPE_STRING,
    LIL_TYPE_INT,
    LIL_TYPE_NUMBER,
    LIL_TYPE_BOOLEAN,
    LIL_TYPE_JSON,
    LIL_TYPE_LIST,
    LIL_TYPE_ENUM
};

struct lil_type {
    enum lil_type_kind kind;
    const char *text; /* ENUM: the text between the brackets (borrowed) */
    size_t text_len;
    size_t nmembers; /* ENUM: members split on , or | (empty ones count) */
};

/* Parse a declared type; false if it does not match
 * ^(string|int|number|boolean|json|list|enum\[[^\]]+\])$.  An enum's
 * members stay in s: keep s alive while the type is used. */
bool lil__type_parse(const char *s, struct lil_type *out);

/* Member i of an enum, trimmed (JavaScript trim), as a slice of the type's
 * text; false past the end or for another kind. */
bool lil__type_member(const struct lil_type *t, size_t i, const char **s, size_t *len);

/* Does a (non-null) value match the type?  (int = integral
 * number, enum compares String(value) with the members, list = array,
 * json = anything). */
bool lil__type_accepts(const struct lil_type *t, json_t *value);

/* The candidate closest to word by edit distance (at most 2, or a third of
 * its length for longer words); failing that, the longest candidate whose
 * letters appear in order in word and make up half of it ("comand" ->
 * "cmd"); else NULL.  For "did you mean 'cmd'?". */
const char *lil__suggest(const char *word, const char *const *candidates, size_t n);

/* The known key that key is a near miss of (a case or '-'/'_' difference,
 * a small edit, a truncation or an abbreviation spelled out: the rules are
 * at the top of ident.c), or NULL when it is near none.  Stricter than
 * lil__suggest: a far key of a lenient level is ignored, a near one is an
 * error (ir_build.c). */
const char *lil__key_near(const char *key, const char *const *known, size_t n);

#endif
