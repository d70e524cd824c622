/*
 * _lil_store.c -- lil._lil.Store: a lil store (a directory of runs and
 * markers) and what is asked of the store itself: opening runs, whether a
 * run exists, markers begun in two calls, listing, checking and removing
 * runs, stop requests for loop runs.
 *
 * A Store lives as long as the Python object: the package keeps one per
 * directory per process.  Runs keep their Store alive, so the lil_store is
 * closed (at deallocation) only after every run opened from it.
 */
#include <string.h>

#include "_lil.h"

static int store_init(lilpy_store *self, PyObject *args, PyObject *kwargs)
{
    PyObject *path = Py_None;
    Py_buffer key = {0};
    const char *dir = NULL;
    lil_store *st = NULL;
    PyThreadState *ts;
    lil_status rc;

    if (self->st) {
        PyErr_SetString(PyExc_RuntimeError, "Store is already open");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Oz*:Store",
                                     LILPY_KW("path", "key"), &path, &key))
        return -1;
    if (path != Py_None && !(dir = PyUnicode_AsUTF8(path))) {
        PyBuffer_Release(&key);
        return -1;
    }
    ts = PyEval_SaveThread();
    rc = lil_store_open(NULL, dir, &st);
    if (rc == LIL_OK && key.buf)
        rc = lil_store_set_key(st, key.buf, (size_t)key.len);
    PyEval_RestoreThread(ts);
    PyBuffer_Release(&key);
    if (rc != LIL_OK) {
        lil_store_close(st);
        lilpy_raise(rc, NULL);
        return -1;
    }
    self->st = st;
    Py_XSETREF(self->path, PyUnicode_FromString(lil_store_path(st)));
    return self->path ? 0 : -1;
}

static void store_dealloc(lilpy_store *self)
{
    lil_store_close(self->st);
    self->st = NULL;
    Py_XDECREF(self->path);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

lil_store *lilpy_store_handle(PyObject *obj)
{
    if (!PyObject_TypeCheck(obj, &lilpy_store_type) || !((lilpy_store *)obj)->st) {
        PyErr_SetString(PyExc_TypeError, "expected an open lil._lil.Store");
        return NULL;
    }
    return ((lilpy_store *)obj)->st;
}

/* open_run(run_id, sync=0, flags=0) -> Run */
static PyObject *store_open_run(lilpy_store *self, PyObject *args, PyObject *kwargs)
{
    const char *id;
    int sync = 0;
    unsigned flags = 0;
    lil_run_opts opts = {.struct_size = sizeof(opts)};
    lil_run *run = NULL;
    PyThreadState *ts;
    lil_status rc;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|iI:open_run",
                                     LILPY_KW("run_id", "sync", "flags"), &id, &sync,
                                     &flags))
        return NULL;
    opts.sync = (lil_sync)sync;
    opts.flags = flags;
    ts = PyEval_SaveThread();
    rc = lil_run_open(self->st, id, &opts, &run);
    PyEval_RestoreThread(ts);
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    return lilpy_run_new((PyObject *)self, run);
}

/* exists(run_id) -> bool: the run has a journal with a complete record. */
/* True (LIL_OK), False (LIL_E_NOTFOUND), or the error raised. */
static PyObject *found(lil_status rc)
{
    if (rc == LIL_E_NOTFOUND)
        Py_RETURN_FALSE;
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    Py_RETURN_TRUE;
}

static PyObject *store_exists(lilpy_store *self, PyObject *arg)
{
    lil_run_opts opts = {.struct_size = sizeof(opts),
                         .flags = LIL_OPEN_READONLY | LIL_OPEN_EXISTING};
    const char *id = PyUnicode_AsUTF8(arg);
    lil_run *run = NULL;
    PyThreadState *ts;
    lil_status rc;

    if (!id)
        return NULL;
    ts = PyEval_SaveThread();
    rc = lil_run_open(self->st, id, &opts, &run);
    lil_run_close(run);
    PyEval_RestoreThread(ts);
    return found(rc);
}

/* marker_begin(name, policy) -> published result (str or bytes) | Call */
static PyObject *store_marker_begin(lilpy_store *self, PyObject *args)
{
    const char *name;
    int policy;
    lil_call *call = NULL;
    lil_bytes out = {0};
    PyThreadState *ts;
    lil_status rc;

    if (!PyArg_ParseTuple(args, "si:marker_begin", &name, &policy))
        return NULL;
    ts = PyEval_SaveThread();
    rc = lil_marker_begin(self->st, name, policy, &call, &out);
    PyEval_RestoreThread(ts);
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    if (call)
        return lilpy_call_new((PyObject *)self, call, 1);
    return lilpy_take_text(&out);
}

/* marker_reset(name) -> True, or False when there was nothing to forget. */
static PyObject *store_marker_reset(lilpy_store *self, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8(arg);
    PyThreadState *ts;
    lil_status rc;

    if (!name)
        return NULL;
    ts = PyEval_SaveThread();
    rc = lil_marker_reset(self->st, name);
    PyEval_RestoreThread(ts);
    return found(rc);
}

static int add_run_id(void *ud, const char *run_id)
{
    PyObject *s = PyUnicode_FromString(run_id);
    int rc = s ? PyList_Append((PyObject *)ud, s) : -1;

    Py_XDECREF(s);
    return rc < 0 ? 1 : 0;
}

/* run_ids() -> [str]: the runs of the store in byte order. */
static PyObject *store_run_ids(lilpy_store *self, PyObject *unused)
{
    PyObject *list = PyList_New(0);
    lil_status rc;

    (void)unused;
    if (!list)
        return NULL;
    rc = lil_store_foreach_run(self->st, add_run_id, list);
    if (PyErr_Occurred() || rc != LIL_OK) {
        Py_DECREF(list);
        return PyErr_Occurred() ? NULL : lilpy_raise(rc, NULL);
    }
    return list;
}

/* check(run_id, repair=False) -> dict of the lil_check_report. */
static PyObject *store_check(lilpy_store *self, PyObject *args)
{
    const char *id;
    int repair = 0;
    lil_check_report r = {.struct_size = sizeof(r)};
    PyThreadState *ts;
    lil_status rc;

    if (!PyArg_ParseTuple(args, "s|p:check", &id, &repair))
        return NULL;
    ts = PyEval_SaveThread();
    rc = lil_run_check(self->st, id, repair ? LIL_CHECK_REPAIR : 0u, &r);
    PyEval_RestoreThread(ts);
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    return Py_BuildValue(
        "{s:O,s:O,s:O,s:K,s:K,s:K,s:K,s:s,s:K,s:K}", "intact",
        r.intact ? Py_True : Py_False, "torn_tail", r.torn_tail ? Py_True : Py_False,
        "repaired", r.repaired ? Py_True : Py_False, "records",
        (unsigned long long)r.records, "valid_bytes", (unsigned long long)r.valid_bytes,
        "damage_offset", (unsigned long long)r.damage_offset, "file_bytes",
        (unsigned long long)r.file_bytes, "message", r.message, "records_after_damage",
        (unsigned long long)r.records_after_damage, "steps_after_damage",
        (unsigned long long)r.steps_after_damage);
}

/* remove_run(run_id, force=False) -> True, or False when there was no such
 * run: lil_run_remove (force: LIL_REMOVE_FORCE, a run that has not ended
 * too).  A run a live process holds is refused (RunLockedError). */
static PyObject *store_remove_run(lilpy_store *self, PyObject *args, PyObject *kwargs)
{
    const char *id;
    int force = 0;
    PyThreadState *ts;
    lil_status rc;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|p:remove_run",
                                     LILPY_KW("run_id", "force"), &id, &force))
        return NULL;
    ts = PyEval_SaveThread();
    rc = lil_run_remove(self->st, id, force ? LIL_REMOVE_FORCE : 0u);
    PyEval_RestoreThread(ts);
    return found(rc);
}

/* request_stop(run_id, actor, reason): ask a loop run to stop. */
static PyObject *store_request_stop(lilpy_store *self, PyObject *args)
{
    const char *id, *actor, *reason;
    PyThreadState *ts;
    lil_status rc;

    if (!PyArg_ParseTuple(args, "szs:request_stop", &id, &actor, &reason))
        return NULL;
    ts = PyEval_SaveThread();
    rc = lil_loop_request_stop(self->st, id, actor, reason);
    PyEval_RestoreThread(ts);
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    Py_RETURN_NONE;
}

static PyObject *store_get_path(lilpy_store *self, void *closure)
{
    (void)closure;
    if (!self->path)
        Py_RETURN_NONE;
    Py_INCREF(self->path);
    return self->path;
}

static PyMethodDef store_methods[] = {
    {"open_run", (PyCFunction)(void (*)(void))store_open_run,
     METH_VARARGS | METH_KEYWORDS,
     "open_run(run_id, sync=0, flags=0) -> Run: open or create a run."},
    {"exists", (PyCFunction)store_exists, METH_O,
     "exists(run_id) -> bool: whether the run has a journal."},
    {"marker_begin", (PyCFunction)store_marker_begin, METH_VARARGS,
     "marker_begin(name, policy) -> published result | Call."},
    {"marker_reset", (PyCFunction)store_marker_reset, METH_O,
     "marker_reset(name) -> bool: forget a marker."},
    {"run_ids", (PyCFunction)store_run_ids, METH_NOARGS, "run_ids() -> [str]."},
    {"check", (PyCFunction)store_check, METH_VARARGS,
     "check(run_id, repair=False) -> dict: verify a journal."},
    {"remove_run", (PyCFunction)(void (*)(void))store_remove_run,
     METH_VARARGS | METH_KEYWORDS,
     "remove_run(run_id, force=False) -> bool: remove a run and its journal."},
    {"request_stop", (PyCFunction)store_request_stop, METH_VARARGS,
     "request_stop(run_id, actor, reason): ask a loop run to stop."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef store_getset[] = {
    {"path", (getter)store_get_path, NULL, "The store's directory.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject lilpy_store_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lil._lil.Store",
    .tp_basicsize = sizeof(lilpy_store),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Store(path=None, key=None): a lil store (a directory of runs).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)store_init,
    .tp_dealloc = (destructor)store_dealloc,
    .tp_methods = store_methods,
    .tp_getset = store_getset,
};
