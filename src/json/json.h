/*
 * json.h -- the library's one wrapper of jansson: its set-up, where its
 * memory comes from, parsing, printing and packing with lil's status codes,
 * and canonical JSON (the stable bytes of JSON step results and of RESOLVE
 * records).
 *
 * Rules for the rest of the library:
 *   - include "json/json.h", never <jansson.h>;
 *   - jansson's data model (json_t, json_object_get, json_array_append_new,
 *     json_decref, ...) may be used directly, but text is parsed, printed
 *     and packed only through the functions below, and bytes that identify
 *     or hash a value only come from the lil__json_canon* functions;
 *   - every jansson call that may allocate runs inside a scope
 *     (lil__json_begin .. lil__json_end) bound to the env that owns the
 *     data; the functions below open their own.
 *
 * Memory.  jansson has one pair of allocation hooks for the whole process
 * (json_set_alloc_funcs, no user data), and they belong to the host:
 * loading or using liblil never changes them.  So jansson's values and
 * texts come from jansson's allocator of the moment (malloc and free, or
 * the host's hooks), not from an env's; a program that uses jansson itself
 * may set its hooks before or after loading liblil (as jansson allows:
 * before it makes any value).
 *
 * Out of memory.  A jansson call that fails for want of memory returns
 * NULL or -1 (its parser says json_error_out_of_memory); the functions
 * below turn that into LIL_E_NOMEM.  To test every failure path, a test
 * program may install lil's own hooks (lil__json_hooks_install, which the
 * library never calls); then:
 *   - a scope binds an env to the calling thread (a thread-local pointer;
 *     scopes nest, the inner one wins until it ends).  The hooks allocate
 *     from the env bound to the calling thread, or, with none bound, from
 *     the hooks jansson had before (malloc and free unless set);
 *   - every block starts with a header naming the free function (and its
 *     ud) of the allocator that made it, so a block goes back to that
 *     allocator whichever thread frees it, in another env's scope or in
 *     none.  An env may be freed before its blocks; its allocator must stay
 *     valid until the last one is released;
 *   - an allocation that fails is counted on the calling thread, so a scope
 *     knows whether one failed inside it, whatever jansson made of it (its
 *     parser reports some as syntax errors, its builders return NULL or -1
 *     and callers may drop those): lil__json_end then says LIL_E_NOMEM.
 *     Without the hooks a scope only marks where jansson is used.
 * Thread rules: the hooks read only the calling thread's binding, the
 * block's own header and the former hooks (written once, inside the
 * pthread_once), so scopes on many threads with many envs run in parallel.
 * lil's strings from jansson (json_dumps) are released with lil__json_free,
 * which uses the hooks in force.
 */
#ifndef LIL_JSON_JSON_H
#define LIL_JSON_JSON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"

struct lil_env;

/* ---- set-up and scopes ---------------------------------------------------- */

/* For test programs only (the library never calls it): install lil's
 * allocation hooks in jansson, once per process (pthread_once), so that
 * allocation failures of an env's allocator reach jansson's calls too and
 * scopes count them.  Call it before any jansson value exists. */
void lil__json_hooks_install(void);

/* A binding of an env to the calling thread, on the caller's stack. */
struct lil_json_scope {
    const struct lil_env *prev; /* the binding it replaced */
    unsigned long failures;     /* the thread's failed allocations at begin */
};

/* Bind env (NULL: jansson's former hooks) to the calling thread until
 * lil__json_end(sc).  Scopes nest and end in reverse order. */
void lil__json_begin(struct lil_json_scope *sc, const struct lil_env *env);

/* Restore the binding sc replaced.  LIL_E_NOMEM if an allocation failed on
 * this thread since lil__json_begin(sc) (in nested scopes too), else LIL_OK. */
lil_status lil__json_end(struct lil_json_scope *sc);

/* Has an allocation failed on this thread since lil__json_begin(sc)? */
bool lil__json_failed(const struct lil_json_scope *sc);

/* A block from the allocator bound to the calling thread, with jansson's
 * header (for scratch memory next to jansson calls); release it with
 * lil__json_free, from any thread.  NULL on failure (counted). */
void *lil__json_malloc(size_t n);
void lil__json_free(void *p);

/* ---- text ------------------------------------------------------------------ */

/* Parse len bytes of text with jansson's flags (JSON_DECODE_ANY, ...) under
 * env.  LIL_OK with a new reference in *out; LIL_E_NOMEM when an allocation
 * failed; otherwise `bad` (LIL_E_INVAL, LIL_E_CORRUPT, LIL_E_SPEC: what the
 * caller's text is), with "invalid JSON at line L, column C: <reason>" in
 * err.  jerr, if not NULL, receives jansson's report (position, text). */
lil_status lil__json_parse(const struct lil_env *env, struct lil_err *err,
                           lil_status bad, const char *text, size_t len, size_t flags,
                           json_error_t *jerr, json_t **out);

/* Append the text of v, printed with jansson's flags (JSON_COMPACT, ...), to
 * out (its allocator and cap).  LIL_E_NOMEM; LIL_E_TOOBIG past out's cap;
 * LIL_E_INVAL if jansson cannot print v (a scalar without JSON_ENCODE_ANY).
 * On failure out keeps its earlier length. */
lil_status lil__json_dump(const struct lil_env *env, struct lil_err *err,
                          const json_t *v, size_t flags, struct lil_buf *out);

/* write.c: whether it prints with these flags (compact, maybe sorted keys
 * and any value at the top), and the printing itself: appends v's text to
 * out, the bytes jansson would print.  LIL_E_INVAL (v cannot be printed),
 * LIL_E_NOMEM, LIL_E_TOOBIG (out's cap); *too_deep when v nests deeper than
 * it goes (jansson must print it).  On failure out keeps its length. */
bool lil__json_write_can(size_t flags);
lil_status lil__json_write(const struct lil_env *env, const json_t *v, size_t flags,
                           struct lil_buf *out, bool *too_deep);

/* Build a value from a jansson pack format (json_vpack_ex) under env.
 * LIL_OK with a new reference in *out; LIL_E_NOMEM; LIL_E_INVAL for a bad
 * format or argument (invalid UTF-8, NULL string), "JSON pack format 'F':
 * <reason>" in err. */
lil_status lil__json_vpack(const struct lil_env *env, struct lil_err *err,
                           const char *fmt, va_list ap, json_t **out);

/* ---- canonical JSON (canon.c; the rules are at its top) ----------------------- */

/* Flags of the canonical form: parsing and printing. */
#define LIL_JSON_CANON_PARSE (JSON_DECODE_ANY | JSON_REJECT_DUPLICATES)
#define LIL_JSON_CANON_DUMP  (JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)

/* Append the canonical bytes of v to out (errors of lil__json_dump). */
lil_status lil__json_canon(const struct lil_env *env, struct lil_err *err,
                           const json_t *v, struct lil_buf *out);

/* Append the canonical bytes of the JSON text (len bytes) to out.  Bad
 * text is LIL_E_INVAL with its line and column in err. */
lil_status lil__json_canon_text(const struct lil_env *env, struct lil_err *err,
                                const char *text, size_t len, struct lil_buf *out);

/* Append the canonical bytes of a packed value to out (lil__json_vpack). */
lil_status lil__json_canon_vpack(const struct lil_env *env, struct lil_err *err,
                                 struct lil_buf *out, const char *fmt, va_list ap);
lil_status lil__json_canon_pack(const struct lil_env *env, struct lil_err *err,
                                struct lil_buf *out, const char *fmt, ...);

/* Reading numbers a journal holds.  Member key of o as an integer in
 * [lo, hi] (lil__json_int_in) or a finite number in [lo, hi]
 * (lil__json_num_in): true with *out set, 0 when the member is absent or
 * null; false when it is there and is not such a number, so that a crafted
 * journal never brings a value that later arithmetic overflows. */
bool lil__json_int_in(const json_t *o, const char *key, int64_t lo, int64_t hi,
                      int64_t *out);
bool lil__json_num_in(const json_t *o, const char *key, double lo, double hi,
                      double *out);

#endif
