/*
 * pq_dl.c -- load libpq on first use, check its version and thread safety,
 * and resolve the functions the PostgreSQL store calls (why: pq_dl.h).
 *
 * The loader runs once per process under pthread_once and keeps its result
 * (the table, or the reason it failed) in file-level state that is written
 * only there and read-only afterwards.
 */
#include "store/pg/pq_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* dlsym gives a void *; a POSIX system stores function pointers in the same
 * bits, which is what copying them into the table relies on. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "function pointers and void * differ in size");

#define AT(field) offsetof(struct lil_pq, field)

static const struct {
    const char *name;
    size_t offset;
} syms[] = {
    {"PQconnectdbParams", AT(connectdb_params)},
    {"PQconninfoParse", AT(conninfo_parse)},
    {"PQconninfoFree", AT(conninfo_free)},
    {"PQstatus", AT(status)},
    {"PQerrorMessage", AT(error_message)},
    {"PQfinish", AT(finish)},
    {"PQsetNoticeProcessor", AT(set_notice_processor)},
    {"PQprepare", AT(prepare)},
    {"PQexecPrepared", AT(exec_prepared)},
    {"PQexecParams", AT(exec_params)},
    {"PQexec", AT(exec)},
    {"PQresultStatus", AT(result_status)},
    {"PQresultErrorField", AT(result_error_field)},
    {"PQresultErrorMessage", AT(result_error_message)},
    {"PQclear", AT(clear)},
    {"PQntuples", AT(ntuples)},
    {"PQgetvalue", AT(getvalue)},
    {"PQgetlength", AT(getlength)},
    {"PQgetisnull", AT(getisnull)},
    {"PQcmdTuples", AT(cmd_tuples)},
    {"PQbackendPID", AT(backend_pid)},
    {"PQtransactionStatus", AT(transaction_status)},
    {"PQfreemem", AT(freemem)},
};

static const char *const sonames[] = {LIL_LIBPQ_SONAMES};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static struct lil_pq table;
static bool loaded;
static char load_error[200]; /* why, when !loaded */

static void note_dlerror(void)
{
    const char *why = dlerror(); /* NOLINT(concurrency-mt-unsafe): in pthread_once */

    snprintf(load_error, sizeof(load_error), "%s", why ? why : "unknown error");
}

/* dlopen the first soname that loads; NULL with load_error set if none. */
static void *open_library(void)
{
    for (size_t i = 0; i < sizeof(sonames) / sizeof(sonames[0]); i++) {
        void *lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);

        if (lib)
            return lib;
        if (i == 0)
            note_dlerror(); /* the first soname's reason is the one reported */
    }
    return NULL;
}

static bool resolve(void *lib, struct lil_pq *t)
{
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        void *fn = dlsym(lib, syms[i].name);

        if (!fn) {
            note_dlerror();
            return false;
        }
        memcpy((char *)t + syms[i].offset, &fn, sizeof(fn));
    }
    return true;
}

/* The version and thread-safety checks, through two more symbols. */
static bool acceptable(void *lib)
{
    __typeof__(PQlibVersion) *lib_version = NULL;
    __typeof__(PQisthreadsafe) *threadsafe = NULL;
    void *fn = dlsym(lib, "PQlibVersion");
    int v;

    if (fn)
        memcpy(&lib_version, &fn, sizeof(fn));
    fn = dlsym(lib, "PQisthreadsafe");
    if (fn)
        memcpy(&threadsafe, &fn, sizeof(fn));
    if (!lib_version || !threadsafe) {
        note_dlerror();
        return false;
    }
    v = lib_version();
    if (v < LIL_LIBPQ_MIN_VERSION) {
        snprintf(load_error, sizeof(load_error), "version %d is older than 14", v);
        return false;
    }
    if (!threadsafe()) {
        snprintf(load_error, sizeof(load_error), "it was built without thread safety");
        return false;
    }
    return true;
}

static void load(void)
{
    void *lib = open_library();
    struct lil_pq t = {0};

    if (!lib)
        return;
    if (!resolve(lib, &t) || !acceptable(lib)) {
        dlclose(lib);
        return;
    }
    table = t;
    loaded = true; /* lib stays loaded for the life of the process */
}

lil_status lil__pq_dl_load(struct lil_err *err, const struct lil_pq **out)
{
    *out = NULL;
    if (pthread_once(&load_once, load) != 0 || !loaded)
        return lil__seterr(err, LIL_E_PG, 0,
                           "cannot load %s (the PostgreSQL client library), needed "
                           "for postgresql:// stores: %s (install libpq5)",
                           sonames[0],
                           load_error[0] ? load_error : "pthread_once failed");
    *out = &table;
    return LIL_OK;
}
