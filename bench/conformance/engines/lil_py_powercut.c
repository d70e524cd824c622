/*
 * lil_py_powercut.c -- the power cuts of lil's Python package, for the
 * conformance benchmark.  python_powercut.cmake builds a copy of the
 * package's module (lil._lil) with this file and the linker's
 * --wrap=lil_store_open: the one place the module opens a store
 * (bindings/python/_lil_store.c) then opens it here, and when
 * CONF_POWERCUT_LOG names a file every system call of that store runs
 * through the test harness's fault table with change tracking into that
 * log (tests/harness/faults.h), as `lil_c --powercut LOG` does for C.
 * After a killed life `lil_c cut LOG SEED` undoes what no sync covered.
 *
 * The package's sources are the checkout's, unchanged: only the module
 * the adapter imports (LIL_PYTHON_EXT_DIR) differs.
 */
#include <lil/lil.h>
#include <stdbool.h>
#include <stdlib.h>

#include "faults.h"

/* The linker's names for the wrapped function and the wrapper (ld --wrap). */
/* NOLINTBEGIN(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp,readability-identifier-naming) */
lil_status __real_lil_store_open(lil_env *env, const char *uri, lil_store **out);
lil_status __wrap_lil_store_open(lil_env *env, const char *uri, lil_store **out);

/* NOLINTEND(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp,readability-identifier-naming) */

/* The faulty environment of this process: one, made at the first open and
 * kept to the process's end (every store of the module may use it). */
static lil_env *powercut_env(void)
{
    static lil_env *env;
    const char *log = getenv("CONF_POWERCUT_LOG");

    if (env || !log || !*log)
        return env;
    t_pc_track(log);
    env = t_env_faulty();
    return env;
}

/* NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp,readability-identifier-naming) */
lil_status __wrap_lil_store_open(lil_env *env, const char *uri, lil_store **out)
{
    return __real_lil_store_open(env ? env : powercut_env(), uri, out);
}
