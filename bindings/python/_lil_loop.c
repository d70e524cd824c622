/*
 * _lil_loop.c -- lil._lil.Spec (a loaded loop spec with its diagnostics)
 * and lil._lil.loop_call: open a loop run of a spec in a store, do one
 * operation (run, step, resume, approve, recover, current), close it, and
 * return (status, result JSON).  The package (lil/_loop.py) turns the JSON
 * into a RunResult.
 *
 * The loop runs with the GIL released.  Its progress callback takes the GIL
 * at each event (an iteration or an effect starts, a sleep) to let Python
 * run its signal handlers: a Ctrl-C (KeyboardInterrupt) asks the loop to
 * stop after the current effect (lil_loop_interrupt), and is raised once the
 * call has returned and the loop is closed; the run is then stopped and
 * resumable.
 */
#include <string.h>

#include "_lil.h"

/* ---- Spec ------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD lil_spec *spec;
} lilpy_spec;

static int spec_init(lilpy_spec *self, PyObject *args, PyObject *kwargs)
{
    const char *path;
    lil_spec *spec = NULL;
    PyThreadState *ts;
    lil_status rc;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s:Spec", LILPY_KW("path"), &path))
        return -1;
    ts = PyEval_SaveThread();
    rc = lil_spec_load(NULL, path, NULL, &spec);
    PyEval_RestoreThread(ts);
    if (rc != LIL_OK) {
        lilpy_raise(rc, NULL);
        return -1;
    }
    lil_spec_free(self->spec);
    self->spec = spec;
    return 0;
}

static void spec_dealloc(lilpy_spec *self)
{
    lil_spec_free(self->spec);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *diag_dict(const lil_diag *d)
{
    static const char *const sev[] = {"error", "warning", "info"};

    return Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:s}", "severity",
                         (unsigned)d->severity < 3 ? sev[d->severity] : "error", "code",
                         d->code, "message", d->message, "path", d->path, "file",
                         d->file, "line", d->line, "column", d->column, "source_line",
                         d->source_line);
}

/* diagnostics() -> [dict] */
static PyObject *spec_diagnostics(lilpy_spec *self, PyObject *unused)
{
    size_t n = lil_spec_diag_count(self->spec);
    PyObject *list = PyList_New(0);

    (void)unused;
    for (size_t i = 0; list && i < n; i++) {
        PyObject *d = diag_dict(lil_spec_diag(self->spec, i));
        if (!d || PyList_Append(list, d) < 0) {
            Py_XDECREF(d);
            Py_CLEAR(list);
        }
        Py_XDECREF(d);
    }
    return list;
}

static PyObject *spec_json(lilpy_spec *self, PyObject *unused)
{
    lil_bytes out = {0};
    lil_status rc = lil_spec_json(self->spec, &out);

    (void)unused;
    if (rc != LIL_OK)
        return lilpy_raise(rc, "the spec has errors");
    return lilpy_take_text(&out);
}

static PyObject *spec_get_ok(lilpy_spec *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(lil_spec_ok(self->spec));
}

static PyObject *spec_get_id(lilpy_spec *self, void *closure)
{
    const char *id = lil_spec_id(self->spec);

    (void)closure;
    if (!id)
        Py_RETURN_NONE;
    return PyUnicode_FromString(id);
}

static PyMethodDef spec_methods[] = {
    {"diagnostics", (PyCFunction)spec_diagnostics, METH_NOARGS, "[dict]"},
    {"json", (PyCFunction)spec_json, METH_NOARGS, "The normalized spec as JSON."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef spec_getset[] = {
    {"ok", (getter)spec_get_ok, NULL, "No diagnostic of severity error.", NULL},
    {"id", (getter)spec_get_id, NULL, "The spec's id, or None.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject lilpy_spec_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lil._lil.Spec",
    .tp_basicsize = sizeof(lilpy_spec),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Spec(path): a loop spec, loaded and validated.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)spec_init,
    .tp_dealloc = (destructor)spec_dealloc,
    .tp_methods = spec_methods,
    .tp_getset = spec_getset,
};

/* ---- loop_call ------------------------------------------------------------- */

/* The arguments of one loop_call, parsed. */
struct loop_args {
    PyObject *store, *spec, *pairs;
    const char *op, *result_json, *approve_actor;
    int how;
    lil_loop_opts opts;
    const char **pair_ptrs;
};

/* The progress callback's state: the loop, and a Ctrl-C caught during it. */
struct loop_watch {
    lil_loop *lp;
    PyObject *type, *value, *tb;
};

static void loop_progress(void *ud, const lil_loop_event *ev)
{
    struct loop_watch *w = ud;
    PyGILState_STATE g;

    (void)ev;
    g = PyGILState_Ensure();
    if (!w->type && PyErr_CheckSignals() < 0) {
        PyErr_Fetch(&w->type, &w->value, &w->tb);
        if (w->lp)
            lil_loop_interrupt(w->lp, LIL_LOOP_INTERRUPT_STOP);
    }
    PyGILState_Release(g);
}

static lil_status loop_op(lil_loop *lp, const struct loop_args *a, lil_loop_result *res)
{
    const char *op = a->op;

    if (strcmp(op, "run") == 0)
        return lil_loop_run(lp, res);
    if (strcmp(op, "step") == 0)
        return lil_loop_step(lp, res);
    if (strcmp(op, "resume") == 0)
        return lil_loop_resume(lp, res);
    if (strcmp(op, "approve") == 0)
        return lil_loop_approve(lp, a->approve_actor, a->opts.reason, res);
    if (strcmp(op, "recover") == 0)
        return lil_loop_recover(lp, (lil_resolution)a->how, a->result_json,
                                a->approve_actor, a->opts.reason, res);
    if (strcmp(op, "retry_failed") == 0)
        return lil_loop_retry_failed(lp, a->approve_actor, a->opts.reason, res);
    return lil_loop_current(lp, res);
}

/* Open, do a->op, close; *res filled when LIL_OK (the message of a failure
 * in msg). */
static lil_status loop_do(lil_store *st, const lil_spec *spec, struct loop_args *a,
                          struct loop_watch *w, lil_loop_result *res, char *msg,
                          size_t cap)
{
    lil_loop *lp = NULL;
    lil_status rc = lil_loop_open(st, spec, &a->opts, &lp);

    if (rc != LIL_OK) {
        snprintf(msg, cap, "%s", lil_store_errmsg(st));
        return rc;
    }
    w->lp = lp;
    rc = loop_op(lp, a, res);
    if (rc != LIL_OK)
        snprintf(msg, cap, "%s", lil_loop_errmsg(lp));
    w->lp = NULL;
    if (lil_loop_close(lp) != LIL_OK && rc == LIL_OK) {
        lil_loop_result_free(res);
        snprintf(msg, cap, "%s", lil_errmsg());
        rc = LIL_E_IO;
    }
    return rc;
}

/* NAME=VALUE strings of a list into a->pair_ptrs (PyMem_Free it). */
static int parse_pairs(struct loop_args *a)
{
    Py_ssize_t n;

    if (!a->pairs || a->pairs == Py_None)
        return 0;
    if (!PyList_Check(a->pairs)) {
        PyErr_SetString(PyExc_TypeError, "input_pairs must be a list of str");
        return -1;
    }
    n = PyList_GET_SIZE(a->pairs);
    a->pair_ptrs = PyMem_Calloc((size_t)n + 1, sizeof(char *));
    if (!a->pair_ptrs) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        a->pair_ptrs[i] = PyUnicode_AsUTF8(PyList_GET_ITEM(a->pairs, i));
        if (!a->pair_ptrs[i])
            return -1;
    }
    a->opts.input_pairs = a->pair_ptrs;
    a->opts.n_input_pairs = (size_t)n;
    return 0;
}

static int parse_loop_args(PyObject *args, PyObject *kwargs, struct loop_args *a)
{
    int sync = 0;
    unsigned flags = 0;
    long long max_block = 0, timeout = 0;

    memset(a, 0, sizeof(*a));
    a->opts.struct_size = sizeof(a->opts);
    if (!PyArg_ParseTupleAndKeywords(
            args, kwargs, "O!O!s|ziIzOzzzzLLizzz:loop_call",
            LILPY_KW("store", "spec", "op", "run_id", "sync", "flags", "inputs",
                     "input_pairs", "env_allow", "cwd", "actor", "reason",
                     "max_block_ms", "effect_timeout_ms", "how", "result_json",
                     "record_path", "replay_path"),
            &lilpy_store_type, &a->store, &lilpy_spec_type, &a->spec, &a->op,
            &a->opts.run_id, &sync, &flags, &a->opts.inputs_json, &a->pairs,
            &a->opts.env_allow, &a->opts.cwd, &a->opts.actor, &a->opts.reason,
            &max_block, &timeout, &a->how, &a->result_json, &a->opts.record_path,
            &a->opts.replay_path))
        return -1;
    a->opts.sync = (lil_sync)sync;
    a->opts.flags = flags;
    a->opts.max_block_ms = (int64_t)max_block;
    a->opts.effect_timeout_ms = (int64_t)timeout;
    a->approve_actor = a->opts.actor ? a->opts.actor : "python";
    return parse_pairs(a);
}

PyObject *lilpy_loop_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    struct loop_args a;
    struct loop_watch w = {0};
    lil_loop_result res = {0};
    char msg[512] = "";
    PyObject *out = NULL;
    lil_store *st;
    PyThreadState *ts;
    lil_status rc;

    (void)self;
    if (parse_loop_args(args, kwargs, &a) < 0 || !(st = lilpy_store_handle(a.store))) {
        PyMem_Free(a.pair_ptrs);
        return NULL;
    }
    a.opts.progress = loop_progress;
    a.opts.progress_ud = &w;
    ts = PyEval_SaveThread();
    rc = loop_do(st, ((lilpy_spec *)a.spec)->spec, &a, &w, &res, msg, sizeof(msg));
    PyEval_RestoreThread(ts);
    PyMem_Free(a.pair_ptrs);
    if (w.type) {
        if (rc == LIL_OK)
            lil_loop_result_free(&res);
        PyErr_Restore(w.type, w.value, w.tb);
        return NULL;
    }
    if (rc != LIL_OK)
        return lilpy_raise(rc, msg);
    out = Py_BuildValue("(is)", (int)res.status, res.json ? res.json : "{}");
    lil_loop_result_free(&res);
    return out;
}
