/*
 * srcmap.h -- where each byte of a scalar's value came from in the file.
 *
 * A YAML scalar's value is not its text: plain and quoted scalars fold
 * their line breaks and drop indentation, block scalars (| and >) drop
 * indentation, fold (>) and chomp, double-quoted scalars decode escapes
 * (\n, \t, \", \\, \xXX, \uXXXX, \UXXXXXXXX, escaped line breaks) and
 * single-quoted ones turn '' into '.  libyaml gives the value and the
 * scalar's start and end, not the way between them, so lil__srcmap_build
 * scans the scalar's source bytes again by the same rules (those of
 * libyaml's scanner) and records, for each run of value bytes, where it
 * came from.
 *
 * A map is an array of spans in value order.  A verbatim span's bytes are
 * the file's bytes from its position on, on one line (value byte val + k
 * is at pos.offset + k).  Any other span (an escape, a folded line break,
 * '' in a single-quoted scalar) maps all its bytes to the first byte of
 * what produced them (the backslash, the line break, the first quote).  The
 * last span is a sentinel at val = the value's length: the place just
 * after the last character that produced a byte (a value that ends with a
 * chomped or folded line break ends at that line's end).
 *
 * The scan must reproduce the value byte for byte; when it does not (a
 * construct it does not follow: line separators U+2028/9 and NEL as line
 * breaks, a tag or anchor between the key and a block indicator's line),
 * there is no map and positions fall back to the scalar's start.
 *
 * Positions: lines are counted at LF, columns in characters (a valid
 * UTF-8 sequence, or one byte that does not start one), both 1-based;
 * offsets are bytes from the start of the file.
 *
 * Ownership: lil__srcmap_build returns an array allocated under env, freed
 * with lil__free.  Lookups read the map and the value; nothing is kept.
 */
#ifndef LIL_SPEC_SRCMAP_H
#define LIL_SPEC_SRCMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "loopspec/diag.h"

struct lil_env;

enum lil_scalar_style {
    LIL_SCALAR_PLAIN,
    LIL_SCALAR_SINGLE,  /* 'single-quoted' */
    LIL_SCALAR_DOUBLE,  /* "double-quoted" (and JSON strings) */
    LIL_SCALAR_LITERAL, /* | */
    LIL_SCALAR_FOLDED   /* > */
};

struct lil_srcspan {
    size_t val;         /* first value byte of the span */
    struct lil_pos pos; /* where it came from */
    bool verbatim;      /* the span's bytes are the file's bytes from pos on */
};

/* What the scan needs: the file, the scalar and the value it must give. */
struct lil_srcmap_in {
    const char *text; /* the whole file */
    size_t len;
    size_t start;      /* the scalar's first byte (a quote, | or >, a tag) */
    size_t end;        /* just past its last byte (plain scalars end there) */
    struct lil_pos at; /* the position of start */
    enum lil_scalar_style style;
    int parent_indent; /* block scalars: column (0-based) of the enclosing
                          block collection, -1 at the document's root */
    const char *value; /* the value the scan must reproduce */
    size_t value_len;
};

/* Scan the scalar and build its map into *out (n spans, the sentinel
 * included).  LIL_OK with *out NULL when the scan does not give the value;
 * LIL_E_NOMEM when an allocation failed. */
lil_status lil__srcmap_build(const struct lil_env *env, const struct lil_srcmap_in *in,
                             struct lil_srcspan **out, size_t *n);

/* The position of value byte off (0 <= off <= the value's length) through
 * the map (n >= 1 spans) of value. */
struct lil_pos lil__srcmap_pos(const struct lil_srcspan *map, size_t n,
                               const char *value, size_t off);

/* Characters (see above) in s[0..n). */
size_t lil__srcmap_chars(const char *s, size_t n);

#endif
