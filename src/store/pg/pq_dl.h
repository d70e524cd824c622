/*
 * pq_dl.h -- the libpq functions the PostgreSQL store calls (store_pg.h),
 * reached through libpq.so.5 loaded with dlopen on the first open of a
 * PostgreSQL store.
 *
 * Why: every process pays for each shared library it starts with, and
 * libpq.so.5 brings more (GSSAPI, LDAP, OpenSSL's libssl), each loaded,
 * relocated and initialized at start-up.  Most processes that use lil use
 * the file store only, so liblil.so has no libpq in its DT_NEEDED (the CTest
 * liblil_needs_no_libpq checks it) and the first PostgreSQL store of a
 * process loads it here, once (base/dl/dl.h), RTLD_NOW | RTLD_LOCAL, and
 * never unloads it.  A host that links libpq itself gets that same copy
 * back from dlopen.
 *
 * libpq-fe.h is used for types and constants only (nothing here links
 * against libpq).  The pointers are typed from libpq's own declarations
 * (__typeof__), so a changed prototype is a compile error, not a bad call.
 * libpq must be thread-safe (PQisthreadsafe): the load checks it.  libpq
 * 14 or later is needed (PQsetTraceFlags marks it; the store uses nothing
 * newer than 10 otherwise, but 14 is what Debian 12 ships and tests).
 *
 * libpq allocates with its own allocator (malloc), not the env's: results
 * are freed with PQclear as soon as they are read, connections with PQfinish
 * (store_pg_conn.c).
 *
 * Threads: lil__pq_dl_load may be called from any thread at any time; the
 * table it returns is immutable and lives as long as the process.  One
 * connection is used by one thread at a time (the store's rule).
 */
#ifndef LIL_STORE_PQ_DL_H
#define LIL_STORE_PQ_DL_H

#include <libpq-fe.h>

#include "base/err.h"

/* The sonames tried in turn; a build may name others (-DLIL_LIBPQ_SONAMES=...). */
#ifndef LIL_LIBPQ_SONAMES
#define LIL_LIBPQ_SONAMES "libpq.so.5"
#endif

/* The oldest libpq accepted (PQlibVersion). */
#define LIL_LIBPQ_MIN_VERSION 140000

struct lil_pq {
    __typeof__(PQconnectdbParams) *connectdb_params;
    __typeof__(PQconninfoParse) *conninfo_parse;
    __typeof__(PQconninfoFree) *conninfo_free;
    __typeof__(PQstatus) *status;
    __typeof__(PQerrorMessage) *error_message;
    __typeof__(PQfinish) *finish;
    __typeof__(PQsetNoticeProcessor) *set_notice_processor;
    __typeof__(PQprepare) *prepare;
    __typeof__(PQexecPrepared) *exec_prepared;
    __typeof__(PQexecParams) *exec_params;
    __typeof__(PQexec) *exec;
    __typeof__(PQresultStatus) *result_status;
    __typeof__(PQresultErrorField) *result_error_field;
    __typeof__(PQresultErrorMessage) *result_error_message;
    __typeof__(PQclear) *clear;
    __typeof__(PQntuples) *ntuples;
    __typeof__(PQgetvalue) *getvalue;
    __typeof__(PQgetlength) *getlength;
    __typeof__(PQgetisnull) *getisnull;
    __typeof__(PQcmdTuples) *cmd_tuples;
    __typeof__(PQbackendPID) *backend_pid;
    __typeof__(PQtransactionStatus) *transaction_status;
    __typeof__(PQfreemem) *freemem;
};

/* The table, libpq being loaded by the first call in the process.  If it
 * cannot be loaded, lacks a function, is older than LIL_LIBPQ_MIN_VERSION
 * or was built without thread safety, every call fails the same way:
 * LIL_E_PG, with a message naming libpq.so.5 and the reason. */
lil_status lil__pq_dl_load(struct lil_err *err, const struct lil_pq **out);

#endif
