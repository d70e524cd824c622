/*
 * entry.h -- the one set of entry checks every public lil_* function goes
 * through (every file of src/api/): a handle's type and state (its magic; a run also
 * belongs to the process that opened it), out-parameters cleared on entry,
 * the rules of the texts people write (actors, reasons), errors published
 * to the handle (under its mutex where it has one) and to the calling
 * thread (lil_errmsg), and the json scope of a call bound to an env.
 *
 * The checks only read: a handle that fails one is never touched.  The
 * messages are part of the behaviour (tests and the CLI read them).
 */
#ifndef LIL_API_ENTRY_H
#define LIL_API_ENTRY_H

#include <lil/lil.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "json/json.h"

/* ---- handles: true when h is a live handle of that type ---------------- */

bool lil__api_env_ok(const lil_env *env);
bool lil__api_store_ok(const lil_store *st);
bool lil__api_call_ok(const lil_call *call);
bool lil__api_loop_ok(const lil_loop *lp);
bool lil__api_spec_ok(const lil_spec *spec);
bool lil__api_worker_ok(const lil_worker *w);

/* A run handle is usable only in the process that opened it (lil.h,
 * lil_run_open): in a child forked since, it is refused like a bad one. */
bool lil__api_run_ok(const lil_run *run);

/* ---- errors ------------------------------------------------------------ */

/* Publish code with the message fmt to the calling thread; returns code. */
lil_status lil__api_fail(lil_status code, const char *fmt, ...) LIL_PRINTF(2, 3);

/* LIL_E_INVAL, "invalid or closed <what> handle". */
lil_status lil__api_bad_handle(const char *what);

/* The error of a run handle that fails lil__api_run_ok: a bad handle, or
 * one that another process opened. */
lil_status lil__api_bad_run(const lil_run *run);

/* When rc is not LIL_OK: e copied to dst (under mu unless NULL) and to the
 * calling thread.  Returns rc. */
lil_status lil__api_publish(struct lil_err *dst, pthread_mutex_t *mu,
                            const struct lil_err *e, lil_status rc);

/* When rc is not LIL_OK: e copied to the calling thread only (calls whose
 * handle keeps no error, or that have none).  Returns rc. */
lil_status lil__api_to_thread(const struct lil_err *e, lil_status rc);

/* lil__api_publish on a store's or a run's error (under its mutex). */
lil_status lil__api_to_store(lil_store *st, const struct lil_err *e, lil_status rc);
lil_status lil__api_to_run(lil_run *run, const struct lil_err *e, lil_status rc);

/* ---- out-parameters and texts -------------------------------------------- */

/* *out emptied (NULL data, no length) when out is not NULL. */
void lil__api_clear_bytes(lil_bytes *out);

/* A required text: set, not empty, at most max bytes; else LIL_E_INVAL in e
 * ("<what> is required", "<what> is longer than <max> bytes"). */
lil_status lil__api_check_text(struct lil_err *e, const char *what, const char *s,
                               size_t max);

/* A text a person wrote (actor, reason of the loop calls): 1 to max bytes,
 * not only blanks. */
bool lil__api_text_ok(const char *s, size_t max);

/* ---- json scope ---------------------------------------------------------- */

/* doc (released; NULL: out of memory) dumped with jansson's flags into
 *out, which the caller frees with lil_free. */
lil_status lil__api_dump_doc(const struct lil_env *env, struct lil_err *e, json_t *doc,
                             size_t flags, lil_bytes *out);

/* Bind env to the calling thread for the call (json.h, scopes). */
void lil__api_scope_begin(struct lil_json_scope *sc, const struct lil_env *env);

/* End the scope.  When an allocation failed inside it and rc is LIL_OK,
 * LIL_E_NOMEM ("out of memory" in e); otherwise rc. */
lil_status lil__api_scope_end(struct lil_json_scope *sc, struct lil_err *e,
                              lil_status rc);

#endif
