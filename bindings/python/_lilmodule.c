/*
 * _lilmodule.c -- the module lil._lil: its functions, its constants (lil's
 * status codes, sync modes, run states, marker policies, resolutions, loop
 * statuses) and the mapping of a lil_status to the exception class the
 * package registered for it.
 *
 * store_location and setting answer with the library's rules for its
 * settings (lil_store_location, lil_setting).
 *
 * The classes live in lil/_errors.py; the package hands them over once at
 * import with set_errors({status: class}, default).  Until then (and for a
 * status without a class) a failing call raises RuntimeError.
 */
#include "_lil.h"

/* The registered classes: a dict {int status: class} and the default. */
static PyObject *error_classes;
static PyObject *error_default;

PyObject *lilpy_raise(lil_status rc, const char *msg)
{
    PyObject *key, *cls = NULL, *exc;
    const char *text = msg ? msg : lil_errmsg();

    if (!text || !*text)
        text = lil_strerror(rc);
    key = PyLong_FromLong((long)rc);
    if (key && error_classes)
        cls = PyDict_GetItemWithError(error_classes, key); /* borrowed */
    Py_XDECREF(key);
    if (PyErr_Occurred())
        return NULL;
    if (!cls)
        cls = error_default ? error_default : PyExc_RuntimeError;
    exc = PyObject_CallFunction(cls, "ss", text, lil_status_name(rc));
    if (!exc)
        return NULL;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

static PyObject *set_errors(PyObject *self, PyObject *args)
{
    PyObject *classes, *dflt;

    (void)self;
    if (!PyArg_ParseTuple(args, "O!O:set_errors", &PyDict_Type, &classes, &dflt))
        return NULL;
    Py_INCREF(classes);
    Py_XSETREF(error_classes, classes);
    Py_INCREF(dflt);
    Py_XSETREF(error_default, dflt);
    Py_RETURN_NONE;
}

static PyObject *version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyUnicode_FromString(lil_version());
}

/* run_id_check(id) -> 0 (LIL_OK) or the status that refuses it. */
static PyObject *run_id_check(PyObject *self, PyObject *arg)
{
    const char *id;

    (void)self;
    id = PyUnicode_AsUTF8(arg);
    if (!id)
        return NULL;
    return PyLong_FromLong((long)lil_run_id_check(id));
}

static PyObject *status_name(PyObject *self, PyObject *arg)
{
    long rc = PyLong_AsLong(arg);

    (void)self;
    if (rc == -1 && PyErr_Occurred())
        return NULL;
    return PyUnicode_FromString(lil_status_name((lil_status)rc));
}

/* store_location(dir=None) -> (location, is_pg): lil_store_location. */
static PyObject *store_location(PyObject *self, PyObject *args)
{
    const char *dir = NULL;
    char *loc = NULL;
    int pg = 0;
    PyObject *res;
    lil_status rc;

    (void)self;
    if (!PyArg_ParseTuple(args, "|z:store_location", &dir))
        return NULL;
    rc = lil_store_location(dir, &loc, &pg);
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    res = Py_BuildValue("(sO)", loc, pg ? Py_True : Py_False);
    lil_free(loc);
    return res;
}

/* setting(name) -> str or None: lil_setting. */
static PyObject *setting(PyObject *self, PyObject *arg)
{
    const char *name;
    char *value = NULL;
    PyObject *res;
    lil_status rc;

    (void)self;
    name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    rc = lil_setting(name, &value);
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    if (!value)
        Py_RETURN_NONE;
    res = PyUnicode_DecodeFSDefault(value);
    lil_free(value);
    return res;
}

/* sync_name(mode) -> 'full', 'normal', 'off' or 'default' (lil_sync_name). */
static PyObject *sync_name(PyObject *self, PyObject *arg)
{
    long mode = PyLong_AsLong(arg);
    const char *name;

    (void)self;
    if (mode == -1 && PyErr_Occurred())
        return NULL;
    name = lil_sync_name((lil_sync)mode);
    if (!name) {
        PyErr_Format(PyExc_ValueError, "unknown sync mode %ld", mode);
        return NULL;
    }
    return PyUnicode_FromString(name);
}

static PyMethodDef module_methods[] = {
    {"store_location", store_location, METH_VARARGS,
     "store_location(dir=None) -> (location, is_pg): the store lil would open."},
    {"setting", setting, METH_O,
     "setting(name) -> the value in force of a setting of the library, or None."},
    {"set_errors", set_errors, METH_VARARGS,
     "set_errors(classes, default): the exception class of each lil status."},
    {"version", version, METH_NOARGS, "The version of the lil library linked in."},
    {"run_id_check", run_id_check, METH_O,
     "run_id_check(id) -> 0, or the status that refuses id as a run id."},
    {"status_name", status_name, METH_O, "status_name(code) -> 'LIL_E_...'."},
    {"sync_name", sync_name, METH_O,
     "sync_name(mode) -> 'full', 'normal', 'off', 'default'."},
    {"loop_call", (PyCFunction)(void (*)(void))lilpy_loop_call,
     METH_VARARGS | METH_KEYWORDS, "Open a loop run, run one operation, close it."},
    {"supervise", (PyCFunction)(void (*)(void))lilpy_supervise,
     METH_VARARGS | METH_KEYWORDS,
     "Become a supervisor; returns the attempt number in each child."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "lil._lil",
    .m_doc = "The C layer of the lil package: stores, runs, begun calls, loops.",
    .m_size = -1,
    .m_methods = module_methods,
};

struct int_constant {
    const char *name;
    long value;
};

static const struct int_constant constants[] = {
    {"OK", LIL_OK},
    {"E_INVAL", LIL_E_INVAL},
    {"E_NOMEM", LIL_E_NOMEM},
    {"E_IO", LIL_E_IO},
    {"E_CORRUPT", LIL_E_CORRUPT},
    {"E_LOCKED", LIL_E_LOCKED},
    {"E_POISONED", LIL_E_POISONED},
    {"E_TOOBIG", LIL_E_TOOBIG},
    {"E_SPEC", LIL_E_SPEC},
    {"E_VERSION", LIL_E_VERSION},
    {"E_FAILED", LIL_E_FAILED},
    {"E_UNCERTAIN", LIL_E_UNCERTAIN},
    {"E_NONDET", LIL_E_NONDET},
    {"E_KEY", LIL_E_KEY},
    {"E_NOTFOUND", LIL_E_NOTFOUND},
    {"E_DONE", LIL_E_DONE},
    {"E_ROLLBACK", LIL_E_ROLLBACK},
    {"SYNC_DEFAULT", LIL_SYNC_DEFAULT},
    {"SYNC_FULL", LIL_SYNC_FULL},
    {"SYNC_NORMAL", LIL_SYNC_NORMAL},
    {"SYNC_OFF", LIL_SYNC_OFF},
    {"OPEN_READONLY", LIL_OPEN_READONLY},
    {"OPEN_EXISTING", LIL_OPEN_EXISTING},
    {"RUN_RUNNING", LIL_RUN_RUNNING},
    {"RUN_COMPLETED", LIL_RUN_COMPLETED},
    {"RUN_FAILED", LIL_RUN_FAILED},
    {"RUN_UNCERTAIN", LIL_RUN_UNCERTAIN},
    {"RUN_STOPPED", LIL_RUN_STOPPED},
    {"MARKER_RETRY", LIL_MARKER_RETRY},
    {"MARKER_ASSUME_DONE", LIL_MARKER_ASSUME_DONE},
    {"MARKER_RAISE", LIL_MARKER_RAISE},
    {"RESOLVE_RETRY", LIL_RESOLVE_RETRY},
    {"RESOLVE_ASSUME_DONE", LIL_RESOLVE_ASSUME_DONE},
    {"RESOLVE_ABORT", LIL_RESOLVE_ABORT},
    {"LOOP_APPROVE_CAPS", LIL_LOOP_APPROVE_CAPS},
    {"LOOP_YES", LIL_LOOP_YES},
    {"LOOP_WAIT", LIL_LOOP_WAIT},
    {"LOOP_ACCEPT_SPEC_CHANGE", LIL_LOOP_ACCEPT_SPEC_CHANGE},
    {"LOOP_RETRY_FAILED", LIL_LOOP_RETRY_FAILED},
    {"RESTART_ON_FAILURE", LIL_RESTART_ON_FAILURE},
    {"RESTART_ON_CRASH", LIL_RESTART_ON_CRASH},
    {"RESTART_ALWAYS", LIL_RESTART_ALWAYS},
    {"SUPERVISE_EXIT_RESTARTS", LIL_SUPERVISE_EXIT_RESTARTS},
    {"SUPERVISE_EXIT_CRASH_LOOP", LIL_SUPERVISE_EXIT_CRASH_LOOP},
    {"SUPERVISE_EXIT_SAME_STEP", LIL_SUPERVISE_EXIT_SAME_STEP},
    {"SUPERVISE_EXIT_OSERR", LIL_SUPERVISE_EXIT_OSERR},
    {"SUPERVISE_UNLIMITED", (long)LIL_SUPERVISE_UNLIMITED},
};

static int add_constants(PyObject *m)
{
    for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++) {
        if (PyModule_AddIntConstant(m, constants[i].name, constants[i].value) < 0)
            return -1;
    }
    return 0;
}

static int add_type(PyObject *m, const char *name, PyTypeObject *type)
{
    if (PyType_Ready(type) < 0)
        return -1;
    Py_INCREF(type);
    if (PyModule_AddObject(m, name, (PyObject *)type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__lil(void);

PyMODINIT_FUNC PyInit__lil(void)
{
    PyObject *m = PyModule_Create(&module_def);

    if (!m)
        return NULL;
    if (add_constants(m) < 0 || add_type(m, "Store", &lilpy_store_type) < 0 ||
        add_type(m, "Run", &lilpy_run_type) < 0 ||
        add_type(m, "Call", &lilpy_call_type) < 0 ||
        add_type(m, "Spec", &lilpy_spec_type) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
