/*
 * _lil_supervise.c -- lil._lil.supervise: lil_supervise in fork mode from a
 * running interpreter.
 *
 * The calling process becomes the supervisor and never comes back to
 * Python, except through on_event; each child returns from the call (its
 * attempt number, from LIL_ATTEMPT) and goes on running the program.  The
 * forks happen inside lil_supervise, on the calling thread, which holds the
 * GIL throughout (it is never released here): so every child starts as
 * after os.fork -- PyOS_BeforeFork was called once before the first fork,
 * and each child calls PyOS_AfterFork_Child (the interpreter's own after-
 * fork work and os.register_at_fork hooks) before it returns.  When
 * lil_supervise fails before forking, PyOS_AfterFork_Parent undoes the
 * before-fork work and the error is raised.
 *
 * on_event runs in the supervisor on the same thread, with the GIL (still)
 * held; it gets a dict of the event, and an exception it raises is reported
 * as unraisable (sys.unraisablehook) and otherwise ignored.
 */
#include <stdlib.h>
#include <string.h>

#include "_lil.h"

static PyObject *event_dict(const lil_supervise_event *ev)
{
    return Py_BuildValue(
        "{s:s,s:I,s:i,s:i,s:i,s:d,s:d,s:z,s:z,s:s,s:L,s:O,s:I}", "kind", ev->kind,
        "attempt", ev->attempt, "pid", ev->pid, "exit_code", ev->exit_code, "signal",
        ev->signal, "uptime_s", ev->uptime_s, "delay_s", ev->delay_s, "run_id",
        ev->run_id, "step", ev->step, "message", ev->message ? ev->message : "",
        "time_ms", (long long)ev->time_ms, "step_started",
        ev->step_started ? Py_True : Py_False, "restarts", ev->restarts);
}

static void on_event(void *ud, const lil_supervise_event *ev)
{
    PyObject *cb = ud, *d = event_dict(ev), *r = NULL;

    if (d)
        r = PyObject_CallOneArg(cb, d);
    if (!r)
        PyErr_WriteUnraisable(cb);
    Py_XDECREF(r);
    Py_XDECREF(d);
}

/* The options from keywords (every field optional, 0 meaning lil's
 * default as in lil.h). */
static int parse_options(PyObject *args, PyObject *kwargs, lil_supervise_options *o,
                         PyObject **cb)
{
    int restart = 0;
    unsigned max_restarts = 0, crash_loop_k = 0, same_step = 0;

    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
    *cb = Py_None;
    if (!PyArg_ParseTupleAndKeywords(
            args, kwargs, "|iIdddIdIzdO:supervise",
            LILPY_KW("restart", "max_restarts", "backoff_s", "max_backoff_s", "jitter",
                     "crash_loop_k", "crash_loop_t_s", "same_step", "dir", "healthy_s",
                     "on_event"),
            &restart, &max_restarts, &o->backoff_s, &o->max_backoff_s, &o->jitter,
            &crash_loop_k, &o->crash_loop_t_s, &same_step, &o->dir, &o->healthy_s, cb))
        return -1;
    if (*cb != Py_None && !PyCallable_Check(*cb)) {
        PyErr_SetString(PyExc_TypeError, "on_event must be callable or None");
        return -1;
    }
    o->restart = (lil_restart_policy)restart;
    o->max_restarts = max_restarts;
    o->crash_loop_k = crash_loop_k;
    o->same_step = same_step;
    if (*cb != Py_None) {
        o->on_event = on_event;
        o->ud = *cb;
    }
    return 0;
}

PyObject *lilpy_supervise(PyObject *self, PyObject *args, PyObject *kwargs)
{
    lil_supervise_options o;
    PyObject *cb;
    const char *attempt;
    lil_status rc;

    (void)self;
    if (parse_options(args, kwargs, &o, &cb) < 0)
        return NULL;
    Py_INCREF(cb); /* kept: the supervisor never returns */
    PyOS_BeforeFork();
    rc = lil_supervise(&o);
    if (rc == LIL_OK) { /* a child */
        PyOS_AfterFork_Child();
        Py_DECREF(cb);
        attempt = getenv("LIL_ATTEMPT");
        return PyLong_FromLong(attempt ? strtol(attempt, NULL, 10) : 1);
    }
    PyOS_AfterFork_Parent();
    Py_DECREF(cb);
    return lilpy_raise(rc, NULL);
}
