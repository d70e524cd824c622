/*
 * pq_dl.c -- load libpq on first use, check its version and thread safety,
 * and resolve the functions the PostgreSQL store calls (why: pq_dl.h).
 *
 * The table, its functions and the checks only; base/dl/dl.h loads the
 * library, once.
 */
#include "store/pg/pq_dl.h"

#include <stddef.h>
#include <stdio.h>

#include "base/dl/dl.h"

#define AT(field) offsetof(struct lil_pq, field)

static const struct lil_dl_fn fns[] = {
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

/* The version and thread-safety checks, through two more symbols. */
static bool acceptable(void *lib, char *why, size_t cap)
{
    __typeof__(PQlibVersion) *lib_version = NULL;
    __typeof__(PQisthreadsafe) *threadsafe = NULL;
    int v;

    if (!lil__dl_fn(lib, "PQlibVersion", &lib_version, why, cap) ||
        !lil__dl_fn(lib, "PQisthreadsafe", &threadsafe, why, cap))
        return false;
    v = lib_version();
    if (v < LIL_LIBPQ_MIN_VERSION) {
        snprintf(why, cap, "version %d is older than 14", v);
        return false;
    }
    if (!threadsafe()) {
        snprintf(why, cap, "it was built without thread safety");
        return false;
    }
    return true;
}

static struct lil_pq table;
static struct lil_dl dl = LIL_DL_INIT(sonames, fns, table, acceptable);

lil_status lil__pq_dl_load(struct lil_err *err, const struct lil_pq **out)
{
    *out = NULL;
    if (!lil__dl_load(&dl))
        return lil__seterr(err, LIL_E_PG, 0,
                           "cannot load %s (the PostgreSQL client library), needed "
                           "for postgresql:// stores: %s (install libpq5)",
                           sonames[0], dl.why);
    *out = &table;
    return LIL_OK;
}
