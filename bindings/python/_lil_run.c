/*
 * _lil_run.c -- lil._lil.Run and lil._lil.Call: a run of a store and the
 * steps begun on it in two calls (lil_step_begin / lil_call_end).
 *
 * Run.begin(name) is the whole replay path: it returns the journaled
 * result as a str (bytes when it is not UTF-8), or (identity, reason) for a
 * step whose failure is journaled, or a Call when the step must run.  The
 * package then runs the step's function, encodes its value and ends the
 * call; the codec and the meaning of a failure reason are the package's.
 *
 * A replayed failure's identity and whole reason come from the library
 * (lil_run_step_failure), never from the text of its error message.
 *
 * Thread rules: a Run may be used from many threads at once (lil's runs
 * are); its busy count, changed only with the GIL held, keeps close() from
 * freeing the run under a call in progress.  A Call is ended or cancelled
 * once: its handle is taken (set to NULL) before the GIL is released.
 */
#include <string.h>

#include "_lil.h"

PyObject *lilpy_take_text(lil_bytes *b)
{
    const char *data = b->data ? (const char *)b->data : "";
    PyObject *s = PyUnicode_DecodeUTF8(data, (Py_ssize_t)b->len, NULL);

    if (!s && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
        PyErr_Clear();
        s = PyBytes_FromStringAndSize(data, (Py_ssize_t)b->len);
    }
    lil_free(b->data);
    b->data = NULL;
    b->len = 0;
    return s;
}

/* ---- Run ------------------------------------------------------------------- */

PyObject *lilpy_run_new(PyObject *store, lil_run *run)
{
    lilpy_run *self = PyObject_New(lilpy_run, &lilpy_run_type);

    if (!self) {
        lil_run_close(run);
        return NULL;
    }
    self->run = run;
    self->busy = 0;
    Py_INCREF(store);
    self->store = store;
    self->id = PyUnicode_FromString(lil_run_id(run));
    if (!self->id) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void run_dealloc(lilpy_run *self)
{
    lil_run_close(self->run); /* NULL is harmless */
    self->run = NULL;
    Py_XDECREF(self->id);
    Py_XDECREF(self->store);
    PyObject_Free(self);
}

/* The run, or NULL with ValueError when it is closed. */
static lil_run *open_run(lilpy_run *self)
{
    if (!self->run)
        PyErr_Format(PyExc_ValueError, "run %S is closed", self->id);
    return self->run;
}

/* Bytes of a str (UTF-8) or of a bytes-like object, for the time of a
 * call; release with PyBuffer_Release. */
static int get_bytes(PyObject *obj, Py_buffer *view)
{
    if (PyUnicode_Check(obj)) {
        Py_ssize_t len;
        const char *s = PyUnicode_AsUTF8AndSize(obj, &len);
        if (!s)
            return -1;
        return PyBuffer_FillInfo(view, obj, (void *)(uintptr_t)s, len, 1, PyBUF_SIMPLE);
    }
    return PyObject_GetBuffer(obj, view, PyBUF_SIMPLE);
}

/* (identity, reason) of the replayed failure of step name: the library's
 * record of it (lil_run_step_failure), the whole reason as journaled. */
static PyObject *replayed_failure(lilpy_run *self, const char *name)
{
    lil_bytes reason = {NULL, 0};
    char *identity = NULL;
    lil_status rc = lil_run_step_failure(self->run, name, &identity, &reason);
    PyObject *out;

    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    out = Py_BuildValue("(sy#)", identity, (const char *)reason.data,
                        (Py_ssize_t)reason.len);
    lil_free(identity);
    lil_free(reason.data);
    return out;
}

/* What a begin of step name returned: the replayed result, a replayed
 * failure, a Call. */
static PyObject *begun(lilpy_run *self, const char *name, lil_status rc, lil_call *call,
                       lil_bytes *out)
{
    if (rc == LIL_E_FAILED)
        return replayed_failure(self, name);
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    if (!call)
        return lilpy_take_text(out);
    return lilpy_call_new((PyObject *)self, call, 0);
}

/* begin(name) -> str | bytes | (identity, reason) | Call */
static PyObject *run_begin(lilpy_run *self, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8(arg);
    lil_run *run = open_run(self);
    lil_call *call = NULL;
    lil_bytes out = {0};
    PyThreadState *ts;
    lil_status rc;

    if (!name || !run)
        return NULL;
    self->busy++;
    ts = PyEval_SaveThread();
    rc = lil_step_begin(run, name, &call, &out);
    PyEval_RestoreThread(ts);
    self->busy--;
    return begun(self, name, rc, call, &out);
}

/* begin_effect(name, request) -> as begin */
static PyObject *run_begin_effect(lilpy_run *self, PyObject *args)
{
    const char *name;
    Py_buffer req;
    lil_run *run = open_run(self);
    lil_call *call = NULL;
    lil_bytes out = {0};
    PyThreadState *ts;
    lil_status rc;

    if (!run || !PyArg_ParseTuple(args, "sy*:begin_effect", &name, &req))
        return NULL;
    self->busy++;
    ts = PyEval_SaveThread();
    rc = lil_effect_begin(run, name, req.buf, (size_t)req.len, &call, &out);
    PyEval_RestoreThread(ts);
    self->busy--;
    PyBuffer_Release(&req);
    return begun(self, name, rc, call, &out);
}

static PyObject *run_status(lilpy_run *self, PyObject *unused)
{
    lil_run *run = open_run(self);

    (void)unused;
    return run ? PyLong_FromLong((long)lil_run_status(run)) : NULL;
}

/* complete(result: str | bytes) */
static PyObject *run_complete(lilpy_run *self, PyObject *arg)
{
    lil_run *run = open_run(self);
    PyThreadState *ts;
    Py_buffer data;
    lil_status rc;

    if (!run || get_bytes(arg, &data) < 0)
        return NULL;
    self->busy++;
    ts = PyEval_SaveThread();
    rc = lil_run_complete(run, data.buf, (size_t)data.len);
    PyEval_RestoreThread(ts);
    self->busy--;
    PyBuffer_Release(&data);
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    Py_RETURN_NONE;
}

/* fail(reason: str) */
static PyObject *run_fail(lilpy_run *self, PyObject *arg)
{
    lil_run *run = open_run(self);
    const char *reason = PyUnicode_AsUTF8(arg);
    PyThreadState *ts;
    lil_status rc;

    if (!run || !reason)
        return NULL;
    self->busy++;
    ts = PyEval_SaveThread();
    rc = lil_run_fail(run, reason);
    PyEval_RestoreThread(ts);
    self->busy--;
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    Py_RETURN_NONE;
}

/* result() -> str | bytes: the result of a completed run (raises for a
 * failed run, or LIL_E_NOTFOUND while there is no outcome). */
static PyObject *run_result(lilpy_run *self, PyObject *unused)
{
    lil_run *run = open_run(self);
    lil_bytes out = {0};
    lil_status rc;

    (void)unused;
    if (!run)
        return NULL;
    rc = lil_run_result(run, &out);
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    return lilpy_take_text(&out);
}

/* uncertain() -> [identity]: the effects whose outcome is unknown. */
static PyObject *run_uncertain(lilpy_run *self, PyObject *unused)
{
    lil_run *run = open_run(self);
    PyObject *list;
    size_t n;

    (void)unused;
    if (!run || !(list = PyList_New(0)))
        return NULL;
    n = lil_run_uncertain_count(run);
    for (size_t i = 0; i < n; i++) {
        PyObject *s = PyUnicode_FromString(lil_run_uncertain_at(run, i));
        if (!s || PyList_Append(list, s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(s);
    }
    return list;
}

/* resolve(identity, how, result: bytes | None, actor, reason) */
static PyObject *run_resolve(lilpy_run *self, PyObject *args)
{
    const char *identity, *actor, *reason;
    int how;
    Py_buffer result = {0};
    lil_run *run = open_run(self);
    PyThreadState *ts;
    lil_status rc;

    if (!run || !PyArg_ParseTuple(args, "siz*ss:resolve", &identity, &how, &result,
                                  &actor, &reason))
        return NULL;
    self->busy++;
    ts = PyEval_SaveThread();
    rc = lil_run_resolve(run, identity, (lil_resolution)how, result.buf,
                         (size_t)result.len, actor, reason);
    PyEval_RestoreThread(ts);
    self->busy--;
    PyBuffer_Release(&result);
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    Py_RETURN_NONE;
}

/* info() -> dict of lil_run_info */
static PyObject *run_info(lilpy_run *self, PyObject *unused)
{
    lil_run_info i = {.struct_size = sizeof(i)};
    lil_run *run = open_run(self);
    lil_status rc;

    (void)unused;
    if (!run)
        return NULL;
    rc = lil_run_get_info(run, &i);
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    return Py_BuildValue(
        "{s:i,s:K,s:K,s:K,s:K,s:L,s:L,s:i,s:i,s:O}", "state", (int)i.state, "records",
        (unsigned long long)i.records, "steps_done", (unsigned long long)i.steps_done,
        "steps_failed", (unsigned long long)i.steps_failed, "journal_bytes",
        (unsigned long long)i.journal_bytes, "created_ns", (long long)i.created_ns,
        "last_ns", (long long)i.last_ns, "holder_pid", i.holder_pid, "sync",
        (int)i.sync, "keyed", i.keyed ? Py_True : Py_False);
}

static int add_record(void *ud, const lil_record *rec)
{
    PyObject *d = Py_BuildValue(
        "{s:K,s:s,s:I,s:s#,s:y#,s:I}", "seq", (unsigned long long)rec->seq, "type",
        lil_record_type_name(rec->type), "flags", rec->flags, "key", rec->key,
        (Py_ssize_t)rec->key_len, "payload", (const char *)rec->payload,
        (Py_ssize_t)rec->payload_len, "dur_us", rec->dur_us);
    int rc = d ? PyList_Append((PyObject *)ud, d) : -1;

    Py_XDECREF(d);
    return rc < 0 ? 1 : 0;
}

/* records() -> [dict]: every record of the run, in journal order. */
static PyObject *run_records(lilpy_run *self, PyObject *unused)
{
    lil_run *run = open_run(self);
    PyObject *list;
    lil_status rc;

    (void)unused;
    if (!run || !(list = PyList_New(0)))
        return NULL;
    rc = lil_run_foreach(run, add_record, list);
    if (PyErr_Occurred() || rc != LIL_OK) {
        Py_DECREF(list);
        return PyErr_Occurred() ? NULL : lilpy_raise(rc, NULL);
    }
    return list;
}

static PyObject *run_sync(lilpy_run *self, PyObject *unused)
{
    lil_run *run = open_run(self);
    PyThreadState *ts;
    lil_status rc;

    (void)unused;
    if (!run)
        return NULL;
    self->busy++;
    ts = PyEval_SaveThread();
    rc = lil_run_sync(run);
    PyEval_RestoreThread(ts);
    self->busy--;
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    Py_RETURN_NONE;
}

/* close(): sync, release the lock, free.  Refused while calls are begun or
 * in progress; closing a closed run does nothing. */
static PyObject *run_close(lilpy_run *self, PyObject *unused)
{
    lil_run *run = self->run;
    PyThreadState *ts;
    lil_status rc;

    (void)unused;
    if (!run)
        Py_RETURN_NONE;
    if (self->busy > 0)
        return PyErr_Format(PyExc_RuntimeError,
                            "run %S cannot close: %zd step(s) still in progress",
                            self->id, self->busy);
    self->run = NULL;
    ts = PyEval_SaveThread();
    rc = lil_run_close(run);
    PyEval_RestoreThread(ts);
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    Py_RETURN_NONE;
}

static PyObject *run_get_id(lilpy_run *self, void *closure)
{
    (void)closure;
    Py_INCREF(self->id);
    return self->id;
}

static PyObject *run_get_closed(lilpy_run *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->run == NULL);
}

static PyMethodDef run_methods[] = {
    {"begin", (PyCFunction)run_begin, METH_O,
     "begin(name) -> result str | (identity, reason) | Call."},
    {"begin_effect", (PyCFunction)run_begin_effect, METH_VARARGS,
     "begin_effect(name, request) -> as begin, for an effect."},
    {"status", (PyCFunction)run_status, METH_NOARGS, "status() -> RUN_* state."},
    {"complete", (PyCFunction)run_complete, METH_O, "complete(result): run done."},
    {"fail", (PyCFunction)run_fail, METH_O, "fail(reason): run failed."},
    {"result", (PyCFunction)run_result, METH_NOARGS, "result() -> str | bytes."},
    {"uncertain", (PyCFunction)run_uncertain, METH_NOARGS, "uncertain() -> [str]."},
    {"resolve", (PyCFunction)run_resolve, METH_VARARGS,
     "resolve(identity, how, result, actor, reason)."},
    {"info", (PyCFunction)run_info, METH_NOARGS, "info() -> dict."},
    {"records", (PyCFunction)run_records, METH_NOARGS, "records() -> [dict]."},
    {"sync", (PyCFunction)run_sync, METH_NOARGS, "sync(): make it durable now."},
    {"close", (PyCFunction)run_close, METH_NOARGS, "close(): sync and unlock."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef run_getset[] = {
    {"id", (getter)run_get_id, NULL, "The run id.", NULL},
    {"closed", (getter)run_get_closed, NULL, "Whether close() was called.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject lilpy_run_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lil._lil.Run",
    .tp_basicsize = sizeof(lilpy_run),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A run of a store (Store.open_run).",
    .tp_dealloc = (destructor)run_dealloc,
    .tp_methods = run_methods,
    .tp_getset = run_getset,
};

/* ---- Call ------------------------------------------------------------------ */

PyObject *lilpy_call_new(PyObject *owner, lil_call *call, int marker)
{
    lilpy_call *self = PyObject_New(lilpy_call, &lilpy_call_type);

    if (!self) {
        lil_call_cancel(call);
        return NULL;
    }
    self->call = call;
    self->marker = marker;
    Py_INCREF(owner);
    self->owner = owner;
    if (!marker)
        ((lilpy_run *)owner)->busy++;
    return (PyObject *)self;
}

/* Take the call for ending it (NULL with ValueError when it was ended). */
static lil_call *take_call(lilpy_call *self)
{
    lil_call *call = self->call;

    if (!call)
        PyErr_SetString(PyExc_ValueError, "the call was already ended or cancelled");
    self->call = NULL;
    return call;
}

static void call_done(lilpy_call *self)
{
    if (!self->marker)
        ((lilpy_run *)self->owner)->busy--;
}

static void call_dealloc(lilpy_call *self)
{
    if (self->call) {
        lil_call_cancel(self->call);
        self->call = NULL;
        call_done(self);
    }
    Py_XDECREF(self->owner);
    PyObject_Free(self);
}

/* end(result: str | bytes): journal (publish) the result. */
static PyObject *call_end(lilpy_call *self, PyObject *arg)
{
    Py_buffer data;
    lil_call *call;
    PyThreadState *ts;
    lil_status rc;

    if (get_bytes(arg, &data) < 0)
        return NULL;
    if (!(call = take_call(self))) {
        PyBuffer_Release(&data);
        return NULL;
    }
    ts = PyEval_SaveThread();
    rc = lil_call_set_result(call, data.buf, (size_t)data.len);
    if (rc == LIL_OK)
        rc = lil_call_end(call, NULL);
    else
        lil_call_cancel(call);
    PyEval_RestoreThread(ts);
    PyBuffer_Release(&data);
    call_done(self);
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    Py_RETURN_NONE;
}

/* fail(reason: str): journal the failure (for a marker: publish nothing). */
static PyObject *call_fail(lilpy_call *self, PyObject *arg)
{
    const char *reason = PyUnicode_AsUTF8(arg);
    lil_call *call;
    PyThreadState *ts;
    lil_status rc;

    if (!reason || !(call = take_call(self)))
        return NULL;
    ts = PyEval_SaveThread();
    rc = lil_call_fail(call, "%s", reason);
    if (rc == LIL_OK)
        rc = lil_call_end(call, NULL);
    else
        lil_call_cancel(call);
    PyEval_RestoreThread(ts);
    call_done(self);
    if (rc != LIL_OK && rc != LIL_E_FAILED)
        return lilpy_raise(rc, NULL);
    Py_RETURN_NONE;
}

/* cancel(): no outcome (a plain step as if never run; an effect uncertain). */
static PyObject *call_cancel(lilpy_call *self, PyObject *unused)
{
    lil_call *call;
    PyThreadState *ts;
    lil_status rc;

    (void)unused;
    if (!self->call)
        Py_RETURN_NONE;
    call = take_call(self);
    ts = PyEval_SaveThread();
    rc = lil_call_cancel(call);
    PyEval_RestoreThread(ts);
    call_done(self);
    if (rc != LIL_OK)
        return lilpy_raise(rc, NULL);
    Py_RETURN_NONE;
}

static PyObject *call_get_identity(lilpy_call *self, void *closure)
{
    (void)closure;
    if (!self->call)
        Py_RETURN_NONE;
    return PyUnicode_FromString(lil_call_identity(self->call));
}

static PyObject *call_get_key(lilpy_call *self, void *closure)
{
    const char *key;

    (void)closure;
    if (!self->call || !(key = lil_call_idempotency_key(self->call)))
        Py_RETURN_NONE;
    return PyUnicode_FromString(key);
}

static PyObject *call_get_attempt(lilpy_call *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLong(self->call ? lil_call_attempt(self->call) : 0);
}

static PyObject *call_get_done(lilpy_call *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->call == NULL);
}

static PyMethodDef call_methods[] = {
    {"end", (PyCFunction)call_end, METH_O, "end(result): journal the result."},
    {"fail", (PyCFunction)call_fail, METH_O, "fail(reason): journal a failure."},
    {"cancel", (PyCFunction)call_cancel, METH_NOARGS, "cancel(): no outcome."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef call_getset[] = {
    {"identity", (getter)call_get_identity, NULL, "'name' or 'name#k'.", NULL},
    {"idempotency_key", (getter)call_get_key, NULL, "'lil-' + 32 hex digits.", NULL},
    {"attempt", (getter)call_get_attempt, NULL, "1, or 2, 3, ... after a retry.", NULL},
    {"done", (getter)call_get_done, NULL, "Whether it was ended or cancelled.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject lilpy_call_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lil._lil.Call",
    .tp_basicsize = sizeof(lilpy_call),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A step or marker begun in two calls: end, fail or cancel it once.",
    .tp_dealloc = (destructor)call_dealloc,
    .tp_methods = call_methods,
    .tp_getset = call_getset,
};
