/*
 * _lil.h -- what the files of the extension module lil._lil share.
 *
 * lil._lil is a thin layer over <lil/lil.h> (and nothing else of lil): a
 * Store, a Run, a Call (a step or marker begun in two calls), a Spec and the
 * loop calls.  Everything with policy in it -- the codec, workflows,
 * markers as context managers, what an exception becomes in the journal --
 * is Python, in the package's modules; this one only moves bytes and
 * statuses.
 *
 * Rules:
 *  - Every lil call that may touch the disk or wait (open, begin, end,
 *    close, markers, loops) runs with the GIL released.  Nothing in lil
 *    calls back into Python while it holds a lock, so a thread blocked in
 *    lil never holds the GIL, and a thread holding the GIL never waits for
 *    lil's locks in a way that needs it back.
 *  - A failing lil call becomes an exception of the class the package
 *    registered for its status (lil._lil.set_errors), with lil_errmsg() as
 *    its message: the message of the calling thread's last failing call.
 *  - Ownership: a Run holds a reference to its Store, a Call to its Run (or
 *    Store), so no handle is closed under a call.  A Run counts what is in
 *    progress on it (begun calls, calls with the GIL released) and refuses
 *    to close while anything is; deallocation closes what is still open.
 *    A Call that is dropped without end or cancel is cancelled.
 */
#ifndef LIL_PY_LIL_H
#define LIL_PY_LIL_H

/* clang-format off */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
/* clang-format on */

#include <lil/lil.h>
#include <stdint.h>

/* The keyword list of PyArg_ParseTupleAndKeywords, which takes a char **
 * before Python 3.13: LILPY_KW("path", "key") (NULL-terminated here). */
#define LILPY_KW(...) ((char **)(uintptr_t)(const char *const[]){__VA_ARGS__, NULL})

/* ---- errors (_lilmodule.c) ---- */

/* Raise the exception registered for rc, with lil_errmsg() as message (or
 * msg when not NULL).  Returns NULL, for `return lilpy_raise(...)`. */
PyObject *lilpy_raise(lil_status rc, const char *msg);

/* ---- the store (_lil_store.c) ---- */

typedef struct {
    PyObject_HEAD lil_store *st;
    PyObject *path; /* str */
} lilpy_store;

extern PyTypeObject lilpy_store_type;

/* lil_store of a Store object, or NULL with an exception set. */
lil_store *lilpy_store_handle(PyObject *obj);

/* ---- runs and calls (_lil_run.c) ---- */

typedef struct {
    PyObject_HEAD lil_run *run;
    PyObject *store; /* the Store it was opened from */
    PyObject *id;    /* str */
    Py_ssize_t busy; /* begun calls + calls in progress without the GIL */
} lilpy_run;

typedef struct {
    PyObject_HEAD lil_call *call; /* NULL once ended or cancelled */
    PyObject *owner;              /* the Run or the Store */
    int marker;                   /* begun with lil_marker_begin */
} lilpy_call;

extern PyTypeObject lilpy_run_type;
extern PyTypeObject lilpy_call_type;

/* A Run for a freshly opened run (takes it); NULL with an exception set. */
PyObject *lilpy_run_new(PyObject *store, lil_run *run);

/* A Call for a begun call (takes it). */
PyObject *lilpy_call_new(PyObject *owner, lil_call *call, int marker);

/* Bytes handed out by lil as a Python str (UTF-8), or as bytes when they
 * are not UTF-8; lil_free()s them. */
PyObject *lilpy_take_text(lil_bytes *b);

/* ---- loop specs and loop runs (_lil_loop.c) ---- */

extern PyTypeObject lilpy_spec_type;

/* lil._lil.loop_call(store, spec, op, ...): see _lil_loop.c. */
PyObject *lilpy_loop_call(PyObject *self, PyObject *args, PyObject *kwargs);

/* ---- supervision (_lil_supervise.c) ---- */

/* lil._lil.supervise(**options): lil_supervise in fork mode. */
PyObject *lilpy_supervise(PyObject *self, PyObject *args, PyObject *kwargs);

#endif
